"""The base of ``log`` as the cause of an off displayed line (symtf.checking.bases).

An article that writes ``log`` for the base-10 (or base-2) logarithm prints numbers that
the natural logarithm does not give. The line stays off, and its cause says the
article's log is that logarithm, only when the line is right in that base and no other
line of the article that calls ``log`` is right with the natural logarithm and off in
that base; a number too short to tell gets no such cause.

The articles are made up for the test. Every expected value is computed with mpmath at
50 digits below, never by symtf.
"""

from __future__ import annotations

from typing import Any

import mpmath
import pytest
from mp_reference import rounds_to
from test_lineage import _json, _report

from symtf.checking.bases import with_base

MPMATH_DIGITS = 50

BASE_10 = """# Information in two messages, by hand

The first message has probability $p_1 = 0.25$, the second $p_2 = 0.04$.

$$I_1 = -\\log(0.25) = 0.6021$$

$$I_2 = -\\log(0.04) = 1.3979$$
"""

BASE_2 = """# Surprise in bits, by hand

Two outcomes have probabilities $q_1 = 0.125$ and $q_2 = 0.3$.

$$s_1 = -\\log(0.125) = 3.000$$

$$s_2 = -\\log(0.3) = 1.737$$
"""

#: The natural logarithm on one line rules out base 10 on the other.
MIXED = """# Two logarithms, by hand

The growth factor is $g = 2.5$ and the probability $p = 0.25$.

$$r = \\log(2.5) = 0.9163$$

$$I = -\\log(0.25) = 0.6021$$
"""

SHORT = """# A rough information content

$$I = -\\log(0.25) = 0.6$$
"""


def _line(d: dict[str, Any], line: int) -> dict[str, Any]:
    (c,) = [c for c in d["checks"] if c["kind"] == "expression" and c["source_line"] == line]
    return c


def _log(x: str, base: int) -> Any:
    return mpmath.log(mpmath.mpf(x), base)


def test_a_base_10_log_is_the_cause_of_both_lines(
    tmp_path_factory: pytest.TempPathFactory,
) -> None:
    assert rounds_to(-_log("0.25", 10), "0.6021") and rounds_to(-_log("0.04", 10), "1.3979")
    assert not rounds_to(-mpmath.log(mpmath.mpf("0.25")), "0.6021")
    d = _json(_report(tmp_path_factory, "base10.md", BASE_10))
    for line in (5, 7):
        c = _line(d, line)
        assert c["verdict"] == "wrong"  # off for what the article says: the cause is why
        assert c["cause"] == "convention", c["explanation"]
        assert c["convention"] == ["log-base-10"]
        assert "the article's log is log₁₀ on this line" in c["explanation"]


def test_a_base_2_log_is_named_as_base_2(tmp_path_factory: pytest.TempPathFactory) -> None:
    assert rounds_to(-_log("0.125", 2), "3.000") and rounds_to(-_log("0.3", 2), "1.737")
    assert not rounds_to(-_log("0.3", 10), "1.737")
    d = _json(_report(tmp_path_factory, "base2.md", BASE_2))
    for line in (5, 7):
        c = _line(d, line)
        assert c["verdict"] == "wrong"
        assert c["convention"] == ["log-base-2"], c["explanation"]


def test_no_base_is_named_when_another_line_uses_the_natural_log(
    tmp_path_factory: pytest.TempPathFactory,
) -> None:
    assert rounds_to(mpmath.log(mpmath.mpf("2.5")), "0.9163")
    assert not rounds_to(_log("2.5", 10), "0.9163")
    d = _json(_report(tmp_path_factory, "mixed.md", MIXED))
    assert _line(d, 5)["verdict"] in ("exact", "rounded")
    c = _line(d, 7)
    assert c["verdict"] == "wrong"
    assert "log-base-10" not in c["convention"], c["explanation"]
    assert "log₁₀" not in c["explanation"]


def test_no_base_is_named_for_a_number_too_short_to_tell(
    tmp_path_factory: pytest.TempPathFactory,
) -> None:
    assert rounds_to(-_log("0.25", 10), "0.6")
    d = _json(_report(tmp_path_factory, "short.md", SHORT))
    c = _line(d, 3)
    assert c["verdict"] == "wrong"
    assert "log-base-10" not in c["convention"], c["explanation"]


def test_with_base_gives_every_one_argument_log_the_base() -> None:
    assert with_base("-log(0.25)", 10) == "-log(0.25, 10)"
    assert with_base("log(log(3)) + ln(2)", 2) == "log(log(3, 2), 2) + ln(2)"
    assert with_base("log(8, 2)", 10) is None
    assert with_base("ln(2)", 10) is None
