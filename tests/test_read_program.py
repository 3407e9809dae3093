"""Programs read as articles: a marimo notebook's Markdown cells, a script's strings, and the
comments of a C-family file.

Every file here is written for its test, with numbers of its own. Expected values are
computed with mpmath at 50 digits from the numbers the file prints, never taken from the
draft; places are counted by hand in the file text.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import mpmath
import pytest
from mp_reference import rounds_to

from symtf.commands.draft import check_article, is_article
from symtf.draft import article_kind
from symtf.draft.read import read
from symtf.draft.read.program import c_comments, read_program
from symtf.draft.read.segments import file_text
from symtf.renderers.json import derivation_dict


@pytest.fixture(autouse=True)
def _mp_precision() -> Iterator[None]:
    """50 digits for this module's mpmath references, and the global precision restored
    after each test (other modules' tests run in the same process)."""
    with mpmath.workdps(50):
        yield


MARIMO = '''import marimo

app = marimo.App()


@app.cell(hide_code=True)
def _(mo):
    mo.md(
        r"""
        ## Scaling the scores

        With $d_k = 3$, the scale is $\\sqrt{3} \\approx 1.732$, and
        $e^{1} \\approx 2.719$.
        """
    )
    return


@app.cell
def _(np):
    Q = np.array([[1.0, 2.0]])  # one query
    return (Q,)


if __name__ == "__main__":
    app.run()
'''


def _checks(path: Path) -> list[tuple[int | None, int | None, str, str]]:
    """``(line, column, printed, verdict)`` of every check, as the JSON report places them."""
    d = derivation_dict(check_article(path))
    return [
        (c["source_line"], c.get("source_column"), c["printed"], c["verdict"]) for c in d["checks"]
    ]


def test_a_marimo_notebooks_markdown_cells_are_read_where_they_stand(tmp_path: Path) -> None:
    """``mo.md(r\"\"\"…\"\"\")``, indented with the code, is Markdown: its maths is checked,
    each number on its own line and column of the .py file."""
    assert rounds_to(mpmath.sqrt(3), "1.732")
    e = mpmath.e
    assert not rounds_to(e, "2.719") and abs(e - mpmath.mpf("2.719")) < mpmath.mpf("0.001")
    path = tmp_path / "worked.py"
    path.write_text(MARIMO, encoding="utf-8")
    lines = MARIMO.split("\n")
    assert "1.732" in lines[11] and "2.719" in lines[12]
    got = {(line, printed): (col, verdict) for line, col, printed, verdict in _checks(path)}
    assert got[(12, "1.732")] == (lines[11].index("1.732") + 1, "rounded")
    assert got[(13, "2.719")] == (lines[12].index("2.719") + 1, "slip")


def test_a_marimo_notebooks_code_cells_go_to_the_translation() -> None:
    """A code cell's body, indentation taken off and its ``return`` left out, is a block of
    code on the file's lines; the Markdown cell is not code."""
    reading = read(MARIMO, "py", path="worked.py", code=True)
    assert [b.text for b in reading.blocks] == ["Q = np.array([[1.0, 2.0]])  # one query\n"]
    assert reading.blocks[0].first_line == 21
    assert all(not seg.text.text.lstrip().startswith("Q =") for seg in reading.segments)


def test_a_scripts_docstring_is_prose_and_its_code_is_code() -> None:
    text = '"""Half of 0.5 is 0.25."""\nx = 0.5 / 2\n'
    reading = read(text, "py", path="s.py", code=True)
    assert [seg.text.text for seg in reading.segments] == ["Half of 0.5 is 0.25."]
    assert [b.text for b in reading.blocks] == [text]


def test_a_string_with_escapes_is_not_read_at_places_it_does_not_stand() -> None:
    """``"a\\tb"`` is not its characters as written: left unread rather than misplaced."""
    program = read_program(file_text('"""x\\t= 0.5"""\n'), "py", code=False)
    assert program.segments == []


C_SOURCE = """#include <math.h>
/* a "string" in a comment stays in the comment */
const char *s = "// not a comment: 9.99";
/*
 * The mean of the squares:
 *   (0.5^2 + 1.5^2) / 2 = 1.25
 */
float rms(float *x) { return 0.0f; }  // 2.5 / 2 = 1.75
// 1 / 8 = 0.125
// sqrt(2) = 1.414
// [1,2] · [3,1] = 5
"""


def test_c_comments_are_read_and_strings_are_not() -> None:
    whole = file_text(C_SOURCE)
    texts = [t.text for t in c_comments(whole)]
    assert texts[0].strip() == 'a "string" in a comment stays in the comment'
    assert not any("9.99" in t for t in texts)
    block = next(t for t in c_comments(whole) if "mean" in t.text)
    assert block.text.split("\n")[2].strip() == "(0.5^2 + 1.5^2) / 2 = 1.25"
    at = block.text.index("1.25")
    place = block.place(at, at + 4)
    assert (place.line, place.column) == (6, C_SOURCE.split("\n")[5].index("1.25") + 1)


def test_a_c_files_hand_arithmetic_is_checked(tmp_path: Path) -> None:
    """(0.5² + 1.5²)/2 = 1.25 exactly; 2.5/2 = 1.25, which 1.75 is off by more than a unit
    of its last digit; 1/8 = 0.125 exactly; √2 = 1.41421… rounds to 1.414."""
    assert (mpmath.mpf("0.5") ** 2 + mpmath.mpf("1.5") ** 2) / 2 == mpmath.mpf("1.25")
    assert rounds_to(mpmath.sqrt(2), "1.414")
    path = tmp_path / "rms.h"
    path.write_text(C_SOURCE, encoding="utf-8")
    got = {(line, printed): verdict for line, _, printed, verdict in _checks(path)}
    assert got[(6, "1.25")] == "exact"
    assert got[(8, "1.75")] == "wrong"
    assert got[(9, "0.125")] == "exact"
    assert got[(10, "1.414")] == "rounded"
    assert got[(11, "5")] == "exact"  # a dot product of two lists is not a list
    assert (3, "9.99") not in got


def test_programs_are_articles_by_their_suffix_only_when_named() -> None:
    assert article_kind("a/worked.py") == "py"
    assert article_kind("kernel.cu") == "c" and article_kind("x.H") == "c"
    assert article_kind("post.md") == "md" and article_kind("notes") == "txt"
    assert is_article("worked.py") and is_article("rms.h") and not is_article("d.toml")


HAND_RMS = """// scale by the root mean square
/*
    The squares of [ 0.2, 0.4, 0.8 ]:

    [ 0.2^2, 0.4^2, 0.8^2 ] => 0.04 + 0.16 + 0.64 => 0.84

    0.84 / 3 => 0.28

    sqrt(0.28 + 1e-5f) = 0.5292

    [ 0.2 / 0.5292, 0.4 / 0.5292, 0.8 / 0.5292 ] =>

    [ 0.378, 0.756, 1.521 ]
*/
"""


def test_a_hand_calculation_in_a_comment_is_read_in_its_own_forms(tmp_path: Path) -> None:
    """``=>`` for "gives"; a list of squares, then their values added (each term is its
    entry's value); C's ``1e-5f``; a result written below the ``=>`` that opens it, a
    blank line between. 0.8 / 0.5292 = 1.51171… prints as 1.512 (and so does 0.8 over the
    unrounded root, 1.51183…): 1.521 (two digits swapped) is wrong."""
    mp = mpmath.mpf
    assert [mp(v) ** 2 for v in ("0.2", "0.4", "0.8")] == [mp("0.04"), mp("0.16"), mp("0.64")]
    assert mp("0.84") / 3 == mp("0.28")
    assert rounds_to(mpmath.sqrt(mp("0.28") + mp("1e-5")), "0.5292")
    root = mpmath.sqrt(mp("0.28") + mp("1e-5"))
    for d in (mp("0.5292"), root):  # as displayed, and with the unrounded root
        ratios = [mp(v) / d for v in ("0.2", "0.4", "0.8")]
        assert rounds_to(ratios[0], "0.378") and rounds_to(ratios[1], "0.756")
        assert rounds_to(ratios[2], "1.512") and abs(ratios[2] - mp("1.521")) > mp("0.001")
    path = tmp_path / "rms.c"
    path.write_text(HAND_RMS, encoding="utf-8")
    got = {(line, printed): verdict for line, _, printed, verdict in _checks(path)}
    assert {got.get((5, v)) for v in ("0.04", "0.16", "0.64", "0.84")} == {"exact"}
    assert got[(7, "0.28")] == "exact"
    assert got[(9, "0.5292")] == "rounded"
    assert got[(13, "0.378")] == got[(13, "0.756")] == "rounded"
    assert got[(13, "1.521")] == "wrong"


JAX_CELL = """

@app.cell
def _(jnp):
    A = jnp.array([[0.5, 0.25]])
    return (A,)
"""


def test_code_that_prints_nothing_does_not_make_the_hand_arithmetic_float32(
    tmp_path: Path,
) -> None:
    """JAX computes in float32, which explains what its code prints; a marimo notebook
    keeps no output, so its Markdown's arithmetic is worked by hand and checked exactly."""
    from symtf.draft import draft_file

    path = tmp_path / "worked.py"
    path.write_text(MARIMO.replace("\n\nif __name__", JAX_CELL + "\n\nif __name__"), "utf-8")
    assert "computed_in" not in draft_file(path).toml
