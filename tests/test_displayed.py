"""Displayed arithmetic, both readings, on hand-computed cases.

The "Birds build nests" article scales the Birds scores [3, 3, 4] by sqrt(3), so its
scaled row is [sqrt3, sqrt3, 4/sqrt3], printed 1.732, 1.732, 2.309. Values below are
recomputed here with mpmath, independently of symtf.
"""

from __future__ import annotations

from pathlib import Path

import mpmath
import pytest

import symtf

BIRDS = Path(__file__).resolve().parent.parent / "derivations" / "birds_build_nests.toml"


@pytest.fixture(scope="module")
def checks() -> dict[str, list]:
    [report] = symtf.check(symtf.load(BIRDS)).derivations
    out: dict[str, list] = {}
    for c in report.checks:
        out.setdefault(c.claim, []).append(c)
    return out


def r3(x: mpmath.mpf) -> str:
    return mpmath.nstr(x, 15)


def test_hidden_precision_is_not_an_error(checks) -> None:
    # e^2.309 = 10.06436 rounds to 10.064, but e^(4/sqrt3) = 10.06839 rounds to 10.068:
    # the article exponentiated the unrounded score.
    with mpmath.workdps(30):
        shown = mpmath.e ** mpmath.mpf("2.309")
        exact = mpmath.e ** (4 / mpmath.sqrt(3))
    assert round(float(shown), 3) == 10.064 and round(float(exact), 3) == 10.068
    [c] = checks["exp Birds->nests"]
    assert c.step is None and c.extra["expression"] == "e^2.309"
    assert c.extra["as_displayed"]["verdict"] == "wrong"
    assert c.extra["exact_reading"]["verdict"] == "rounded"
    assert c.verdict == "rounded"
    assert "hidden precision" in c.explanation
    assert c.extra["as_displayed"]["exact"].startswith(r3(shown)[:8])
    assert c.extra["exact_reading"]["exact"].startswith(r3(exact)[:8])


def test_sum_of_rounded_terms_is_a_slip(checks) -> None:
    # 5.652 + 5.652 + 10.068 = 21.372 exactly, but 2 e^sqrt3 + e^(4/sqrt3) = 21.37286
    # rounds to 21.373: the printed sum is one unit off, because its terms were rounded.
    with mpmath.workdps(30):
        exact = 2 * mpmath.e ** mpmath.sqrt(3) + mpmath.e ** (4 / mpmath.sqrt(3))
    assert round(float(exact), 3) == 21.373
    [c] = checks["softmax denominator, Birds row"]
    assert c.extra["as_displayed"]["verdict"] == "exact"
    assert c.extra["exact_reading"]["verdict"] == "slip"
    assert c.verdict == "slip" and c.expected == "21.373"
    assert c.extra["cause"] == "propagated-rounding"


def test_vector_line_is_checked_entry_by_entry(checks) -> None:
    # 0.264*[2,2,1] + 0.264*[1,1,2] + 0.471*[1,3,1] = [1.263, 2.205, 1.263] as displayed;
    # with the exact weights w1 = 1/(2+e^(1/sqrt3)), w2 = e^(1/sqrt3)/(2+e^(1/sqrt3)) the
    # row is [3w1+w2, 3w1+3w2, 3w1+w2] = [1.2645, 2.2066, 1.2645], as printed.
    with mpmath.workdps(30):
        e = mpmath.e ** (1 / mpmath.sqrt(3))
        w1, w2 = 1 / (2 + e), e / (2 + e)
        exact = [3 * w1 + w2, 3 * w1 + 3 * w2, 3 * w1 + w2]
    line = checks["output Birds (displayed sum)"]
    assert [c.index for c in line] == [(0, 0), (0, 1), (0, 2)]
    assert [c.printed for c in line] == ["1.264", "2.207", "1.264"]
    # As displayed, 1.264 is exactly one unit above 1.263 (|printed − exact| = u): wrong.
    assert [c.extra["as_displayed"]["verdict"] for c in line] == ["wrong", "wrong", "wrong"]
    assert all(c.verdict == "rounded" for c in line)
    for c, x in zip(line, exact, strict=True):
        assert c.exact.startswith(r3(x)[:7])


def test_declared_and_found_stand_ins(checks) -> None:
    [declared] = checks["exp Birds->Birds"]
    assert declared.extra["exact_reading"]["stands_for"] == {"1.732": "l0.h0.scaled[0, 0]"}
    # 5.652 and 21.372 repeat the printed results of earlier lines: their exact readings are used
    [weight] = checks["weight Birds->Birds"]
    assert set(weight.extra["exact_reading"]["stands_for"]) == {"5.652", "21.372"}


def test_json_carries_both_readings(capsys) -> None:
    import json

    from symtf.cli import main

    main(["check", "--format", "json", str(BIRDS)])
    data = json.loads(capsys.readouterr().out)
    expr = [c for c in data["derivations"][0]["checks"] if c["step"] is None]
    assert len(expr) >= 20
    for c in expr:
        for reading in ("as_displayed", "exact_reading"):
            assert {"exact", "expected", "verdict", "explanation"} <= set(c[reading])


def test_literals_are_read_as_inputs_of_the_printed_result() -> None:
    # The article's AI row of H_1 mixes the values: 0.474*[0,0] + 0.241*[1.1,0.1] + 0.285*[1.2,1.2].
    # 1.1 and 1.2 occur in X too, but the result 0.607 is H_1[2, 0] = A_1 V_1, so they are V_1's.
    [report] = symtf.check(symtf.load(BIRDS.parent / "i_love_ai.toml")).derivations
    [line] = [c for c in report.checks if c.claim == "H_1 AI row, first entry, as written"]
    assert line.extra["exact_reading"]["stands_for"]["1.1"] == "l0.h0.v[1, 0]"
    assert line.extra["exact_reading"]["stands_for"]["1.2"] == "l0.h0.v[2, 0]"
    assert line.extra["exact_reading"]["stands_for"]["0.241"] == "l0.h0.pattern[2, 1]"
