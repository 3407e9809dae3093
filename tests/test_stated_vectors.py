"""Steps an article states on the line that prints them, in the orientation it writes.

``z = H·W ⇒ z = [1.2, 2.7]`` writes a column (H·W is n×1) as a list: the list is the
column, entry by entry, and is judged so even when none of its entries is right. ``ŷ = σ(z) = [0.769, 0.937]`` states its own step on its own
line, whatever label the reader gives the printed list (here the heading's). The article
is made up for the test; every expected value comes from mpmath at 50 digits.
"""

from __future__ import annotations

from pathlib import Path

import mpmath
from mp_reference import rounds_to

from symtf.commands.draft import check_article

MPMATH_DIGITS = 50

ARTICLE = """# A tiny output layer

## Layer 2 (2 → 1):

$$H = \\begin{bmatrix} 1 & 2 \\\\ 3 & 4 \\end{bmatrix}, \\quad W = \\begin{bmatrix} 0.5 \\\\ 0.25 \\end{bmatrix}$$

$$z = H \\cdot W \\quad \\Rightarrow \\quad z = [1.2,\\ 2.7]$$

$$\\hat{y} = \\sigma(z) = [0.769,\\ 0.937]$$
"""


def test_a_column_written_as_a_list_and_a_step_stated_on_its_own_line(tmp_path: Path) -> None:
    with mpmath.workdps(MPMATH_DIGITS):
        z = [
            1 * mpmath.mpf("0.5") + 2 * mpmath.mpf("0.25"),
            3 * mpmath.mpf("0.5") + 4 * mpmath.mpf("0.25"),
        ]
        y = [1 / (1 + mpmath.e**-v) for v in z]
        y_from_printed = [1 / (1 + mpmath.e ** -mpmath.mpf(v)) for v in ("1.2", "2.7")]
    assert z == [1, mpmath.mpf("2.5")]  # neither 1.2 nor 2.7
    assert not rounds_to(y[0], "0.769") and not rounds_to(y[1], "0.937")
    assert rounds_to(y_from_printed[0], "0.769") and rounds_to(y_from_printed[1], "0.937")
    path = tmp_path / "layer.md"
    path.write_text(ARTICLE, encoding="utf-8")
    report = check_article(path)
    got = {
        (r.claim.source_line, c.printed): (c.verdict, c.extra.get("cause"))
        for r in report.results
        for c in r.checks
        if (r.claim.source_line or 0) >= 7
    }
    assert got[(7, "1.2")][0] == "wrong" and got[(7, "2.7")][0] == "wrong", got
    assert got[(9, "0.769")] == ("wrong", "inherited"), got
    assert got[(9, "0.937")] == ("wrong", "inherited"), got


def test_an_accented_name_is_the_label_of_its_line(tmp_path: Path) -> None:
    # \hat{y} is the label of the line that states it, not the heading above it; its step
    # name is hat_y, the name the formula reader gives \hat{y}
    path = tmp_path / "layer.md"
    path.write_text(ARTICLE, encoding="utf-8")
    report = check_article(path)
    labels = {r.claim.source_line: r.claim.label for r in report.results}
    assert labels[9] == "ŷ", labels


def test_accented_names_read_as_the_formula_reader_names_them() -> None:
    from symtf.draft.names import ident
    from symtf.draft.read.items import label_of
    from symtf.language.latexmath import to_plain

    assert [label_of(s) for s in (r"\hat{y}", r"\bar{x}_1", r"\tilde{q}")] == [
        "\u0177",  # y with circumflex, composed
        "x\u0304_1",  # x with a combining macron (no composed form)
        "q\u0303",
    ]
    assert [ident(s) for s in ("\u0177", "x\u0304_1", "q\u0303")] == ["hat_y", "bar_x_1", "tilde_q"]
    assert to_plain(r"\hat{y}_t + 1") == "hat_y_t+1"
