"""Writing habits as the cause of an off displayed line (symtf.checking.causes.line_slip).

A displayed value that is its exact value truncated, not rounded, is explained as digits
truncated only when the habit fits the line's other numbers: a number on the same line
that the article rounded up says it rounds, and then truncation is not offered. A value
whose sign was dropped is a flipped sign.

The articles are made up for the test. Every expected value is computed with mpmath at
50 digits below, never by symtf.
"""

from __future__ import annotations

from typing import Any

import mpmath
import pytest
from mp_reference import rounds_to
from test_lineage import _json, _report

MPMATH_DIGITS = 50

#: e^-2 prints as 0.135 both rounded and truncated: it does not tell the habit apart.
FITS = """# Decay factors by hand

$$e^{-2} = 0.135, \\quad e^{-1.9} = 0.149$$
"""

#: e^-0.5 = 0.60653… printed 0.607 is rounded up: the line rounds.
ROUNDS = """# Decay factors by hand

$$e^{-0.5} = 0.607, \\quad e^{-1.9} = 0.149$$
"""

DROPPED_MINUS = """# A log-probability by hand

$$\\ln(0.5) = 0.693$$
"""


def _truncates(x: Any, text: str) -> bool:
    """Whether ``x`` truncated toward zero to the decimals of ``text`` is ``text``."""
    decimals = len(text.split(".")[1])
    q = mpmath.mpf(10) ** decimals
    return bool(mpmath.floor(abs(x) * q) / q == abs(mpmath.mpf(text)))


def _check(d: dict[str, Any], printed: str) -> dict[str, Any]:
    (c,) = [c for c in d["checks"] if c["printed"] == printed and c["source_line"] == 3]
    return c


def test_a_truncated_value_is_named_when_the_line_fits_truncation(
    tmp_path_factory: pytest.TempPathFactory,
) -> None:
    with mpmath.workdps(MPMATH_DIGITS):
        e2, e19 = mpmath.exp(-2), mpmath.exp(mpmath.mpf("-1.9"))
    assert rounds_to(e2, "0.135") and _truncates(e2, "0.135")
    assert _truncates(e19, "0.149") and not rounds_to(e19, "0.149")
    d = _json(_report(tmp_path_factory, "fits.md", FITS))
    assert _check(d, "0.135")["verdict"] == "rounded"
    c = _check(d, "0.149")
    assert c["verdict"] == "slip"
    assert c["cause"] == "truncation", c["explanation"]
    assert "truncates to 0.149" in c["explanation"]


def test_truncation_is_not_named_when_the_same_line_rounds_up(
    tmp_path_factory: pytest.TempPathFactory,
) -> None:
    with mpmath.workdps(MPMATH_DIGITS):
        e05 = mpmath.exp(mpmath.mpf("-0.5"))
    assert rounds_to(e05, "0.607") and not _truncates(e05, "0.607")
    d = _json(_report(tmp_path_factory, "rounds.md", ROUNDS))
    assert _check(d, "0.607")["verdict"] == "rounded"
    c = _check(d, "0.149")
    assert c["verdict"] == "slip"  # still off: only its cause changes
    assert c["cause"] != "truncation", c["explanation"]
    assert "the same line prints 0.607" in c["explanation"]
    assert "rounds rather than truncates" in c["explanation"]


def test_a_dropped_minus_is_a_flipped_sign(tmp_path_factory: pytest.TempPathFactory) -> None:
    with mpmath.workdps(MPMATH_DIGITS):
        x = mpmath.log(mpmath.mpf("0.5"))
    assert x < 0 and rounds_to(-x, "0.693")
    d = _json(_report(tmp_path_factory, "minus.md", DROPPED_MINUS))
    c = _check(d, "0.693")
    assert c["verdict"] == "wrong"
    assert c["cause"] == "sign-flip", c["explanation"]
    assert "the sign is flipped" in c["explanation"]
