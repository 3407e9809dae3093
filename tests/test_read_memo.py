"""Reading an edited article with what the last reading found in each segment gives the
article a reading from scratch gives: the same printings, displayed lines, equations and
found values, at the same lines and columns."""

from __future__ import annotations

from symtf.draft.article import Article, read_article
from symtf.draft.read.memo import SegmentMemo

DEFINED = """\
# Rotating pairs

The rotation by an angle θ is

$$
R(\\theta) = \\begin{pmatrix} \\cos\\theta & -\\sin\\theta \\\\ \\sin\\theta & \\cos\\theta \\end{pmatrix}
$$

For the first pair, θ = 0.5:

$$
R(0.5) = \\begin{pmatrix} 0.8776 & -0.4794 \\\\ 0.4794 & 0.8776 \\end{pmatrix}
$$

The scores:

$$
S = \\begin{bmatrix} 1.5 & 0.25 \\\\ 2.0 & 0.75 \\end{bmatrix}
$$

- \\(2.2346 \\times 2.0657 = 4.6161\\)
- \\(4.6161 - 0.1697 = 4.4464\\)
"""


def _same(a: Article, b: Article) -> None:
    assert a.printings == b.printings
    assert a.displays == b.displays
    assert a.equations == b.equations
    assert a.seen == b.seen
    assert a.dims == b.dims and a.title == b.title and a.headings == b.headings


def test_an_edit_that_moves_later_lines_keeps_their_places() -> None:
    memo = SegmentMemo()
    first = read_article(DEFINED, "md", memo=memo)
    _same(first, read_article(DEFINED, "md"))
    # a longer number on an earlier line: every later segment starts elsewhere in the file
    edited = DEFINED.replace("θ = 0.5:", "θ = 0.50000:")
    again = read_article(edited, "md", memo=memo)
    _same(again, read_article(edited, "md"))
    assert memo.hits > 0  # the segments after the edit were not read again
    # the products' numbers stand where they did: the same lines and columns
    places = [f.places for f in first.seen if f.kind == "arithmetic"]
    assert places and places == [f.places for f in again.seen if f.kind == "arithmetic"]
    # a new line before them moves them down a line, and the reading says so
    moved = DEFINED.replace("The scores:", "The scores\nof the pairs:")
    lower = read_article(moved, "md", memo=memo)
    _same(lower, read_article(moved, "md"))
    at = DEFINED[: DEFINED.index("The scores:")].count("\n") + 1
    assert [p.line for f in lower.seen for p in f.places if p.line > at] == [
        p.line + 1 for f in first.seen for p in f.places if p.line > at
    ]


def test_a_segment_is_read_again_when_a_definition_before_it_changed() -> None:
    memo = SegmentMemo()
    defined = read_article(DEFINED, "md", memo=memo)
    # R(0.5) = … reads the definition R(θ) = … above it: a displayed line of its entries
    assert any(d.expression and "cos" in d.expression for d in defined.displays)
    renamed = DEFINED.replace("R(\\theta) = ", "Q(\\theta) = ")
    read = read_article(renamed, "md", memo=memo)
    _same(read, read_article(renamed, "md"))
    assert not any(d.expression and "cos" in d.expression for d in read.displays)
    _same(read_article(DEFINED, "md", memo=memo), defined)  # and back


def test_a_segment_later_on_an_edited_line_keeps_its_columns() -> None:
    text = "# Sums\n\nWith a step of 0.5, we get $1.5 + 2.25 = 3.75$ as the total.\n"
    memo = SegmentMemo()
    read_article(text, "md", memo=memo)
    edited = text.replace("0.5,", "0.125,")  # the maths starts two columns further right
    again = read_article(edited, "md", memo=memo)
    _same(again, read_article(edited, "md"))
    (total,) = [p for f in again.seen for p in f.places if f.rows == (("3.75",),)]
    line = edited.splitlines()[total.line - 1]
    assert total.column is not None
    assert line[total.column - 1 : (total.end_column or 0) - 1] == "3.75"
