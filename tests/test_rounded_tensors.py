"""Given tensors marked ``rounded = true``: inputs known only to their printed precision.

Constructed case: the article's framework held X_true (4 decimals) but printed X at
2 decimals; S = X Xᵀ is printed from X_true at 3 decimals. Computed by hand in
fractions: S_true = [[0.63792802, 0.26303849], [0.26303849, 0.28082501]], while the
printed X gives S = [[0.6418, 0.2592], [0.2592, 0.2848]], so every correct print of
S_true (0.638, 0.263, 0.263, 0.281) is 3–4 units from what the printed X gives.
"""

from __future__ import annotations

from fractions import Fraction

import mpmath
import pytest
from mp_reference import rounds_to

import symtf

TEXT = """
title = "rounded given tensor"
[tensors]
X = {{ values = \"\"\"
0.33 0.73
0.52 0.12
\"\"\", rounded = {rounded} }}
[steps]
S = "X @ X.T"
[[claims]]
label = "S"
step = "S"
printed = \"\"\"
0.638 0.263
0.263 {last}
\"\"\"
"""


def _verdicts(rounded: str, last: str = "0.281") -> dict[tuple[int, ...], dict]:
    report = symtf.check(symtf.loads(TEXT.format(rounded=rounded, last=last)))
    return {tuple(c.index): c for c in report.derivations[0].checks}


def test_unmarked_inputs_stay_exact_and_the_prints_are_flagged() -> None:
    got = _verdicts("false")
    assert {k: c.verdict for k, c in got.items()} == {
        (0, 0): "wrong",
        (0, 1): "wrong",
        (1, 0): "wrong",
        (1, 1): "wrong",
    }


def test_marked_inputs_accept_the_prints_with_the_reason() -> None:
    got = _verdicts("true")
    for c in got.values():
        assert c.verdict in ("rounded", "exact"), (c.index, c.verdict, c.explanation)
        assert "rounded_inputs" in c.extra.get("accepted_by", ""), c.extra
        assert "X" in c.explanation


def test_a_print_outside_every_rounding_of_the_inputs_is_still_flagged() -> None:
    # S[1,1] ranges over (0.515..0.525)^2 + (0.115..0.125)^2 = [0.2784, 0.2913]: 0.400 is far out.
    got = _verdicts("true", last="0.400")
    assert got[(1, 1)].verdict == "wrong"
    assert got[(0, 0)].verdict in ("rounded", "exact")


# ------------------------------------------------------------------ a witness, not an enclosure
# One input x, printed as 0.5 and marked rounded: it stands for any value in [0.45, 0.55].
# An interval enclosure of a step over that interval is wider than the values the step
# takes (x appears twice, and interval arithmetic treats the two as independent), so it
# can meet a print no x reaches; such a print must stay flagged.

ONE = """
title = "dependency"
[tensors]
X = {{ values = "0.5", rounded = true }}
[steps]
S = "{step}"
[[claims]]
label = "S"
step = "S"
printed = "{printed}"
"""


def _one(step: str, printed: str) -> object:
    report = symtf.check(symtf.loads(ONE.format(step=step, printed=printed)))
    [c] = report.derivations[0].checks
    return c


def _image(f: object, n: int = 2000) -> tuple[mpmath.mpf, mpmath.mpf]:
    """The least and greatest of f over [0.45, 0.55], sampled with mpmath (ends included)."""
    lo, hi = mpmath.mpf("0.45"), mpmath.mpf("0.55")
    ys = [f(lo + (hi - lo) * k / n) for k in range(n + 1)]  # type: ignore[operator]
    return min(ys), max(ys)


MPMATH_DIGITS = 50


@pytest.mark.parametrize(
    ("step", "f", "printed"),
    [
        # x − x is 0 for every x; the enclosure is [−0.1, 0.1], which meets [0.045, 0.055)
        ("X - X", lambda x: x - x, "0.05"),
        # x(1 − x) on [0.45, 0.55] is [0.2475, 0.25] (max at 0.5, min at the ends); the
        # enclosure [0.45, 0.55]·[0.45, 0.55] ⊇ [0.2025, 0.3025] meets [0.235, 0.245)
        ("X * (1 - X)", lambda x: x * (1 - x), "0.24"),
    ],
)
def test_an_enclosure_meeting_a_print_no_input_reaches_is_flagged(
    step: str, f: object, printed: str
) -> None:
    lo, hi = _image(f)
    assert not any(rounds_to(y, printed) for y in (lo, hi))  # the construction: no x gives it
    c = _one(step, printed)
    assert c.verdict in ("slip", "wrong"), (c.verdict, c.explanation)
    assert "accepted_by" not in c.extra
    # the premise: the certified enclosure over the interval does meet the print
    elo, ehi = (Fraction(v) for v in c.extra["enclosure"])
    assert elo < Fraction(printed) + Fraction(5, 1000) and ehi >= Fraction(printed) - Fraction(
        5, 1000
    )
    assert "no point of the inputs' rounding intervals" in c.explanation


def test_a_print_some_input_reaches_stays_accepted() -> None:
    # x·x at x = 0.53 (inside [0.45, 0.55]) is 0.2809, which prints as 0.28; at x = 0.5
    # (as printed) it is 0.25, so only the rounded input explains 0.28
    x = mpmath.mpf("0.53")
    assert rounds_to(x * x, "0.28") and not rounds_to(mpmath.mpf("0.25"), "0.28")
    c = _one("X * X", "0.28")
    assert c.verdict == "rounded", c.explanation
    assert c.extra["accepted_by"] == "rounded_inputs"
    assert "one point of the inputs' rounding intervals gives a value that prints as 0.28" in (
        c.explanation
    )


UNRELATED = """
title = "a rounded input beside an exact one"
[tensors]
A = "0.5 0.25"
H = { values = "0.33 0.73", rounded = true }
[steps]
B = "A * 2"
G = "H * 2"
[[claims]]
label = "B"
step = "B"
printed = "1.0 0.6"
"""


def test_a_rounded_input_a_step_does_not_read_is_not_named_in_its_explanation() -> None:
    """B = 2A is [1, 0.5] exactly, so 0.6 is wrong; H is rounded but B does not read it, so
    neither H nor a range over its rounding may be offered for B."""
    assert [Fraction("0.5") * 2, Fraction("0.25") * 2] == [1, Fraction("0.5")]
    report = symtf.check(symtf.loads(UNRELATED))
    got = {tuple(c.index): c for c in report.derivations[0].checks}
    wrong = [c for c in got.values() if c.printed == "0.6"]
    assert len(wrong) == 1 and wrong[0].verdict == "wrong"
    assert "H" not in wrong[0].explanation
    assert "printed precision" not in wrong[0].explanation
    assert "rounded_inputs" not in wrong[0].extra.get("accepted_by", "")
