"""A remark in words closing a displayed result (``= [0.41, 0.49] \\ (\\text{approx})``).

The article writes a weighted sum of two vectors in one display and its result in the
next, followed by a remark that the result is approximate: the remark is words, not
maths, so the result is read (and judged) as the value of the sum above it. The
articles here are made up for these tests; the expected values are worked by hand:
0.42·[0.12, 0.84, 0.51] + 0.58·[0.62, 0.24, 0.33] = [0.41, 0.492, 0.4056].
"""

from __future__ import annotations

from fractions import Fraction
from pathlib import Path

from symtf.commands.draft import check_article

ARTICLE = r"""# Mixing two values

The output is the weighted sum of the values:

\[
= 0.42 \cdot [0.12, 0.84, 0.51] + 0.58 \cdot [0.62, 0.24, 0.33]
\]

\[
= [{a}, {b}, {c}] \ {remark}
\]
"""


def _verdicts(tmp_path: Path, printed: tuple[str, str, str], remark: str) -> list[tuple[str, str]]:
    a, b, c = printed
    path = tmp_path / "mix.md"
    path.write_text(ARTICLE.format(a=a, b=b, c=c, remark=remark))
    report = check_article(path)
    return [(c.printed, c.verdict) for r in report.results for c in r.checks]


def test_the_hand_sum() -> None:
    w = [Fraction("0.42"), Fraction("0.58")]
    u = [Fraction(v) for v in ("0.12", "0.84", "0.51")]
    v = [Fraction(x) for x in ("0.62", "0.24", "0.33")]
    assert [w[0] * p + w[1] * q for p, q in zip(u, v, strict=True)] == [
        Fraction("0.41"),
        Fraction("0.492"),
        Fraction("0.4056"),
    ]


def test_a_result_with_a_remark_is_judged(tmp_path: Path) -> None:
    """``\\ (\\text{approx})`` and ``\\text{(rounded)}`` after the result: the three
    numbers are checked against the sum (0.41 exactly, the others rounded)."""
    for remark in (r"(\text{approx})", r"\text{(rounded)}"):
        got = _verdicts(tmp_path, ("0.41", "0.49", "0.41"), remark)
        assert [g for g in got if g[0] in ("0.41", "0.49")] == [
            ("0.41", "exact"),
            ("0.49", "rounded"),
            ("0.41", "rounded"),
        ], got


def test_a_slip_before_the_remark_is_flagged(tmp_path: Path) -> None:
    """0.52 for 0.492 is off, remark or not."""
    got = _verdicts(tmp_path, ("0.41", "0.52", "0.41"), r"(\text{approx})")
    assert ("0.52", "wrong") in got or ("0.52", "slip") in got, got


def test_a_remark_with_a_number_is_not_dropped(tmp_path: Path) -> None:
    """``(\\text{to 2 d.p.})`` holds a number: it is not read as words only, and the
    result stays unread rather than judged with part of the line dropped."""
    got = _verdicts(tmp_path, ("0.41", "0.49", "0.41"), r"(\text{to 2 d.p.})")
    assert not any(p == "0.49" for p, _ in got), got
