"""A column written on one line with a transpose mark (``x' = [-1.1426, 1.9221, …]^T``)
is read as that column; when it puts together results worked out above, a later literal
that repeats one of its entries stands for the entry where it was worked out.

The article is written for these tests; the expected values come from mpmath at 30
digits (the rotations by hand: ``x_0' = cos 1 · 1.0 − sin 1 · 2.0``, …).
"""

from __future__ import annotations

from pathlib import Path

import mpmath
from article_checks import line_of, verdicts_by_line

from symtf.draft.read.items import matrix_rows

ARTICLE = r"""# Turning one embedding, pair by pair

The embedding is $x = [1.0, 2.0, 3.0, 4.0]^T$, split into the pairs $(1.0, 2.0)$ and $(3.0, 4.0)$.

The first pair turns by one radian:

$$
\begin{pmatrix} x_0' \\ x_1' \end{pmatrix} = \begin{pmatrix} \cos(1) & -\sin(1) \\ \sin(1) & \cos(1) \end{pmatrix} \begin{pmatrix} 1.0 \\ 2.0 \end{pmatrix} = \begin{pmatrix} -1.1426 \\ 1.9221 \end{pmatrix}
$$

The second pair turns by a hundredth of a radian:

$$
\begin{pmatrix} x_2' \\ x_3' \end{pmatrix} = \begin{pmatrix} \cos(0.01) & -\sin(0.01) \\ \sin(0.01) & \cos(0.01) \end{pmatrix} \begin{pmatrix} 3.0 \\ 4.0 \end{pmatrix} = \begin{pmatrix} 2.9599 \\ 4.0298 \end{pmatrix}
$$

The turned embedding:

$$
x' = [-1.1426, 1.9221, 2.9599, 4.0298]^T
$$

Doubling its first entry gives $-1.1426 \times 2 = -2.2852$.
"""


def _turned() -> list[mpmath.mpf]:
    with mpmath.workdps(30):
        c1, s1 = mpmath.cos(1), mpmath.sin(1)
        c2, s2 = mpmath.cos(mpmath.mpf("0.01")), mpmath.sin(mpmath.mpf("0.01"))
        return [c1 * 1 - s1 * 2, s1 * 1 + c1 * 2, c2 * 3 - s2 * 4, s2 * 3 + c2 * 4]


def test_a_transpose_mark_reads_a_column() -> None:
    assert matrix_rows("[1.0, 2.0, 3.0]^T") == (("1.0",), ("2.0",), ("3.0",))
    assert matrix_rows(r"[1.0, 2.0]^{\top}") == (("1.0",), ("2.0",))
    assert matrix_rows("[1.0, 2.0]") == (("1.0", "2.0"),)
    assert matrix_rows("[1.0, x]^T") is None


def test_the_column_put_together_again_is_checked(tmp_path: Path) -> None:
    """The four entries are the pairs' results to four decimals (mpmath): each is checked
    where the column writes it again."""
    turned = _turned()
    printed = ["-1.1426", "1.9221", "2.9599", "4.0298"]
    for value, text in zip(turned, printed, strict=True):
        assert abs(value - mpmath.mpf(text)) < mpmath.mpf("0.00005")
    verdicts = verdicts_by_line(tmp_path, ARTICLE, "turn.md")
    column = verdicts[line_of(ARTICLE, "x' = [")]
    assert sorted(p for p, _ in column) == sorted(printed)
    assert all(v in ("exact", "rounded") for _, v in column)


def test_a_literal_repeating_the_column_reads_the_worked_value(tmp_path: Path) -> None:
    """-1.1426 × 2 = -2.2852 as displayed, but x_0' is -1.14263…, so twice it is
    -2.28527…, which rounds to -2.2853: a slip of the rounded input, not an exact line."""
    doubled = 2 * _turned()[0]
    assert mpmath.nstr(doubled, 5) == "-2.2853"
    verdicts = verdicts_by_line(tmp_path, ARTICLE, "turn.md")
    assert verdicts[line_of(ARTICLE, "Doubling")] == [("-2.2852", "slip")]
