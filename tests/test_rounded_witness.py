"""Values computed from inputs printed to 4 decimals: ``rounded`` when some point of the
inputs' rounding intervals gives the print, flagged only when none does (certified), and
``undecided`` when neither can be shown, never a slip because a search gave up.

Constructed cases. An article's framework held inputs to 8 decimals (``TRUE_*`` below),
printed them to 4, and printed what it computed from the 8-decimal values to 4. The true
inputs lie inside the rounding box of the printed ones, so every print is reached; but
recomputed from the printed inputs (the box's midpoint), some entries round the other
way. The expected prints, and which entries the midpoint misses, are computed here with
mpmath at 50 digits, never with symtf.

- A masked renormalisation, as a causal-attention notebook writes it: weights ``W``
  times a lower-triangular mask printed as PyTorch prints a whole float (``1.``, ``0.``),
  divided by the row sums.
- A softmax and a product: ``softmax(S) @ V`` with a 6×6 ``S`` and ``V``, 72 rounded
  entries the values are computed from.
"""

from __future__ import annotations

import os
from fractions import Fraction
from pathlib import Path
from typing import Any

import mpmath
import pytest
from mp_reference import rounds_to

import symtf
from symtf.numbers import Interval
from symtf.witness import decide, reach

MPMATH_DIGITS = 50

TRUE_W = """
0.17959834 0.06470444 0.19774078 0.23549289 0.16218562
0.20675122 0.08763998 0.15923972 0.06344738 0.21817926
0.08906394 0.13603048 0.13974761 0.10106995 0.18910839
0.05161766 0.09996820 0.19465582 0.12373047 0.18958932
0.12042221 0.07325040 0.13403118 0.15300519 0.11845746
"""

TRUE_S = """
-0.78789368 -0.67365307 -0.94912727 0.45459509 0.39328145 1.28273743
-0.85556124 -0.79574638 -0.44987051 0.19486663 1.90795148 0.49404938
-0.61080706 -0.53591912 -0.13640436 1.95616487 0.26032642 1.00351418
1.59850643 1.56922529 0.90105602 0.13082533 0.81599460 0.84522814
1.65432067 -0.28401553 -0.60085445 -0.35689028 1.40147491 0.14441902
1.38552487 1.27826719 0.38551483 1.09447097 -0.19101547 0.98078521
"""

TRUE_V = """
-0.58804135 0.75464901 0.60163688 -0.12653623 -0.21915972 0.47267307
-0.50643480 0.14797108 0.75504822 -0.00877387 0.55850833 -0.73957214
0.24021541 -0.12985683 -0.78925772 0.45930371 -0.77714106 0.15961012
0.51455660 0.52462735 0.30152771 0.83966045 0.24423144 -0.19772515
-0.97505527 -0.79577619 -0.16745871 -0.42753358 0.77730652 0.62059580
-0.78066427 0.86590830 -0.18447903 0.32811462 0.94614943 0.86289063
"""

Matrix = list[list[Any]]


def _read(text: str) -> Matrix:
    return [[mpmath.mpf(x) for x in line.split()] for line in text.strip().splitlines()]


def _print4(x: Any) -> str:
    """``x`` rounded to 4 decimals, as the framework prints it (never a tie here)."""
    n = int(mpmath.nint(x * 10**4))
    return f"{'-' if n < 0 else ''}{abs(n) // 10**4}.{abs(n) % 10**4:04d}"


def _text(m: Matrix) -> str:
    return "\n".join(" ".join(_print4(x) for x in row) for row in m)


def _renormalised(w: Matrix) -> Matrix:
    n = len(w)
    return [
        [w[i][j] / sum(w[i][: i + 1]) if j <= i else mpmath.mpf(0) for j in range(n)]
        for i in range(n)
    ]


def _attention(s: Matrix, v: Matrix) -> Matrix:
    out = []
    for row in s:
        e = [mpmath.exp(x) for x in row]
        p = [x / sum(e) for x in e]
        out.append([sum(p[k] * v[k][j] for k in range(len(v))) for j in range(len(v[0]))])
    return out


def _printed(m: Matrix) -> Matrix:
    return [[mpmath.mpf(_print4(x)) for x in row] for row in m]


MASKED = """
title = "masked renormalisation"
[tensors]
W = {{ values = \"\"\"
{w}
\"\"\", rounded = true }}
mask = {{ values = \"\"\"
{mask}
\"\"\", rounded = true }}
[steps]
masked = "W * mask"
sums = "sum(masked, axis=-1, keepdims=true)"
renorm = "masked / sums"
[[claims]]
label = "renorm"
step = "renorm"
printed = \"\"\"
{printed}
\"\"\"
"""

ATTENTION = """
title = "softmax and product"
[tensors]
S = {{ values = \"\"\"
{s}
\"\"\", rounded = true }}
V = {{ values = \"\"\"
{v}
\"\"\", rounded = true }}
[steps]
Z = "softmax(S, axis=-1) @ V"
[[claims]]
label = "Z"
step = "Z"
printed = \"\"\"
{printed}
\"\"\"
"""


def _masked_case() -> tuple[str, Matrix, Matrix]:
    w = _read(TRUE_W)
    n = len(w)
    mask = "\n".join(" ".join("1." if j <= i else "0." for j in range(n)) for i in range(n))
    true = _renormalised(w)
    text = MASKED.format(w=_text(w), mask=mask, printed=_text(true))
    return text, true, _renormalised(_printed(w))


def _attention_case(change: dict[tuple[int, int], str] | None = None) -> tuple[str, Matrix, Matrix]:
    s, v = _read(TRUE_S), _read(TRUE_V)
    true = _attention(s, v)
    rows = [[_print4(x) for x in row] for row in true]
    for (i, j), t in (change or {}).items():
        rows[i][j] = t
    printed = "\n".join(" ".join(r) for r in rows)
    text = ATTENTION.format(s=_text(s), v=_text(v), printed=printed)
    return text, true, _attention(_printed(s), _printed(v))


def _misses(true: Matrix, midpoint: Matrix) -> list[tuple[int, int]]:
    """The entries whose print the printed inputs' own values do not give."""
    return [
        (i, j)
        for i, row in enumerate(true)
        for j, x in enumerate(row)
        if not rounds_to(midpoint[i][j], _print4(x))
    ]


def _checks(text: str) -> dict[tuple[int, ...], Any]:
    report = symtf.check(symtf.loads(text))
    return {tuple(c.index): c for c in report.derivations[0].checks}


@pytest.mark.parametrize("case", [_masked_case, _attention_case], ids=["masked", "attention"])
def test_prints_the_true_inputs_give_are_rounded_though_the_printed_inputs_miss(case: Any) -> None:
    text, true, midpoint = case()
    missed = _misses(true, midpoint)
    assert len(missed) >= 5, missed  # the construction: the printed inputs alone miss these
    got = _checks(text)
    for ij in missed:
        c = got[ij]
        assert c.verdict == "rounded", (ij, c.verdict, c.explanation)
        assert "rounded_inputs" in c.extra["accepted_by"], c.extra
        assert "one point of the inputs' rounding intervals gives a value that prints as" in (
            c.explanation
        )
        assert "could not" not in c.explanation, c.explanation
    assert {c.verdict for c in got.values()} <= {"exact", "rounded"}


def test_the_explanation_names_only_the_rounded_inputs_the_step_reads() -> None:
    text, true, midpoint = _masked_case()
    c = _checks(text)[_misses(true, midpoint)[0]]
    # the mask is printed as whole floats (1., 0.): known exactly, not to the nearest unit
    assert "with W known only to their printed precision" in c.explanation, c.explanation
    assert "mask" not in c.explanation.split("known only")[0], c.explanation


def test_a_print_no_point_of_the_box_reaches_is_still_flagged() -> None:
    # Over the box every Z[i][j] lies within `bound` of its value at the printed inputs:
    # each score moves by at most d = 5e-5, so each softmax weight by a factor within
    # [e^(-2d), e^(2d)], and each entry of V by at most d.
    _, _, midpoint = _attention_case()
    d = mpmath.mpf("0.00005")
    vmax = max(abs(x) for row in _printed(_read(TRUE_V)) for x in row)
    bound = (mpmath.exp(2 * d) - 1) * (vmax + d) + d
    far = midpoint[2][3] + 100 * bound
    shown = _print4(far)
    assert abs(mpmath.mpf(shown) - midpoint[2][3]) > bound + mpmath.mpf("0.00005")
    got = _checks(_attention_case({(2, 3): shown})[0])
    c = got[(2, 3)]
    assert c.verdict in ("slip", "wrong"), (c.verdict, c.explanation)
    assert "accepted_by" not in c.extra
    assert "(certified)" in c.explanation


# --------------------------------------------------------- a range that cannot be enclosed
# y = 1/(x − 0.46) with x printed as 0.5: x stands for any value in [0.45, 0.55], over which
# x − 0.46 holds 0, so no enclosure of y over the whole interval exists.

POLE = """
title = "a divisor whose range holds 0"
[tensors]
X = { values = "0.5", rounded = true }
[steps]
Y = "1 / (X - 0.46)"
[[claims]]
label = "Y"
step = "Y"
printed = "PRINTED"
"""


def _pole(printed: str) -> Any:
    [c] = _checks(POLE.replace("PRINTED", printed)).values()
    return c


def test_a_print_reached_where_no_enclosure_exists_is_rounded() -> None:
    x = mpmath.mpf("0.54")  # inside [0.45, 0.55]
    assert rounds_to(1 / (x - mpmath.mpf("0.46")), "12.5")
    assert not rounds_to(1 / (mpmath.mpf("0.5") - mpmath.mpf("0.46")), "12.5")
    c = _pole("12.5")
    assert c.verdict == "rounded", (c.verdict, c.explanation)
    assert "one point of the inputs' rounding intervals gives a value that prints as 12.5" in (
        c.explanation
    )


def test_a_print_neither_reached_nor_ruled_out_is_undecided_not_a_slip() -> None:
    # Over [0.45, 0.46) y ≤ −100, over (0.46, 0.55] y ≥ 1/0.09 > 11: −50 is never reached,
    # but every part of the interval holding 0.46 has no enclosure, so no certificate
    # rules it out: the honest verdict is undecided.
    for x in (mpmath.mpf("0.45"), mpmath.mpf("0.4599999")):
        assert 1 / (x - mpmath.mpf("0.46")) <= -100
    c = _pole("-50")
    assert c.verdict == "undecided", (c.verdict, c.explanation)
    assert "cannot be decided" in c.explanation


# ---------------------------------------------------------------- the search, on its own


def _iv(lo: str, hi: str) -> Interval:
    return Interval(Fraction(lo), Fraction(hi), True, False)


def test_decide_never_refutes_without_a_certificate() -> None:
    # one entry x ∈ [−1, 1] (shifts of 0), the value x itself; no box can be enclosed
    def at(moves: Any) -> list[Any]:
        from flint import arb

        dx = moves.get("x", Fraction(0))
        return [arb(dx.numerator) / dx.denominator]

    def no_enclosure(centre: Any, radius: Any) -> None:
        return None

    entries = [("x", Fraction(1))]
    # 2 is out of reach, but nothing certifies it
    d = decide(entries, at, no_enclosure, [_iv("1.95", "2.05")], budget=20)
    assert d.reached is None and d.reason
    # 0.7 is reached (x = 0.7 is in [−1, 1])
    assert reach(entries, at, [_iv("0.65", "0.75")])


def test_decide_refutes_when_every_box_is_ruled_out() -> None:
    from flint import arb

    def val(c: Fraction, r: Fraction) -> Any:
        return arb(c.numerator) / c.denominator + arb(0, float(r))

    def at(moves: Any) -> list[Any]:
        return [val(moves.get("x", Fraction(0)), Fraction(0))]

    def enclose(centre: Any, radius: Any) -> list[Any]:
        return [val(centre.get("x", Fraction(0)), radius["x"])]

    d = decide([("x", Fraction(1))], at, enclose, [_iv("1.95", "2.05")])
    assert d.reached is False


# ------------------------------------------------------- the notebook this case comes from


def _corpus() -> Path | None:
    env = os.environ.get("SYMTF_CORPUS")
    candidates = [Path(env)] if env else []
    root = Path(__file__).resolve().parents[1]
    candidates += [root.parent / "shared" / "corpus", root.parent.parent / "shared" / "corpus"]
    return next((c for c in candidates if (c / "mapped").is_dir()), None)


def test_the_mapped_self_attention_notebook_has_no_false_slip() -> None:
    corpus = _corpus()
    name = "raschka-ch03-simplified-self-attention.toml"
    if corpus is None or not (corpus / "mapped" / name).is_file():
        pytest.skip(
            f"the benchmark corpus is not here (mapped/{name} under ../shared/corpus, or set "
            "SYMTF_CORPUS)"
        )
    report = symtf.check(symtf.load(corpus / "mapped" / name))
    checks = [c for d in report.derivations for c in d.checks]
    norm = [c for c in checks if c.step == "masked_simple_norm"]
    assert len(norm) == 36
    off = [
        (c.step, c.index, c.verdict, c.explanation)
        for c in checks
        if c.verdict not in ("exact", "rounded")
    ]
    assert not off, off
    # the 9 entries the printed weights alone round the other way
    nine = [
        c
        for c in norm
        if c.verdict == "rounded" and "rounded_inputs" in c.extra.get("accepted_by", "")
    ]
    assert sorted(tuple(c.index) for c in nine) == [
        (1, 0),
        (1, 1),
        (2, 0),
        (2, 2),
        (3, 0),
        (3, 1),
        (4, 2),
        (4, 3),
        (4, 4),
    ]
