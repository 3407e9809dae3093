"""Matrices written one labelled row a line (`T2 2.0 1.5 2.5`), read as they stand.

Each article here is written for its test, with numbers of its own; expected values are
computed exactly with fractions from the numbers the article prints, never taken from
the draft, and places are counted by hand in the article text.
"""

from __future__ import annotations

from fractions import Fraction
from pathlib import Path

from symtf.commands.draft import check_article
from symtf.draft.read import read
from symtf.renderers.json import derivation_dict

SCORES = [["0.4", "1.1", "2.3"], ["1.2", "0.7", "1.6"], ["2.1", "1.5", "0.9"]]
PENALTY = [["0.0", "-0.3", "-0.6"], ["-0.3", "0.0", "-0.3"], ["-0.6", "-0.3", "0.0"]]


def _rows(label: list[str], rows: list[list[str]]) -> str:
    return "\n".join(f"{n} {' '.join(r)}" for n, r in zip(label, rows, strict=True))


def _post(added: list[list[str]]) -> str:
    names = ["a", "b", "c"]
    return (
        "# Biasing the scores\n\nThe scores before the bias:\n\n"
        f"{_rows(names, SCORES)}\n\nThe distance penalties:\n\n{_rows(names, PENALTY)}\n\n"
        f"The scores with the penalties added:\n\n{_rows(names, added)}\n"
    )


def _sum() -> list[list[str]]:
    return [
        [str(Fraction(s) + Fraction(p)) for s, p in zip(rs, rp, strict=True)]
        for rs, rp in zip(SCORES, PENALTY, strict=True)
    ]


def test_rows_written_with_their_labels_are_a_matrix() -> None:
    """``b 1.2 0.7 1.6``, one labelled row a line, is a row of a 3×3 matrix, each entry at
    its own column (the label's digits are not entries)."""
    text = _post(SCORES)
    found = [f for f in read(text, "md").found() if f.kind == "matrix"]
    assert [f.rows for f in found][:2] == [tuple(map(tuple, SCORES)), tuple(map(tuple, PENALTY))]
    lines = text.split("\n")
    row = lines.index("b 1.2 0.7 1.6") + 1
    places = found[0].places
    assert (places[3].line, places[3].column) == (row, 3)
    assert (places[5].line, places[5].column) == (row, 11)


def test_a_sum_of_two_labelled_matrices_is_checked(tmp_path: Path) -> None:
    """The third matrix is the sum of the first two, entry by entry (exact fractions)."""
    exact = _sum()
    printed = [[f"{float(Fraction(v)):.1f}" for v in row] for row in exact]
    assert all(
        Fraction(p) == Fraction(v)
        for r, e in zip(printed, exact, strict=True)
        for p, v in zip(r, e, strict=True)
    )
    path = tmp_path / "post.md"
    path.write_text(_post(printed), encoding="utf-8")
    d = derivation_dict(check_article(path))
    verdicts = {(c["source_line"], c["printed"]): c["verdict"] for c in d["checks"]}
    assert len(verdicts) == 9 and set(verdicts.values()) == {"exact"}
    assert {line for line, _ in verdicts} == {17, 18, 19}


def test_lines_of_words_and_whole_numbers_are_not_a_matrix() -> None:
    """``Step 1 2`` / ``Step 3 4`` (no decimals) and a single labelled line stay prose."""
    found = read("Step 1 2\nStep 3 4\n\nx 0.5 0.25\n", "md").found()
    assert [f for f in found if f.kind == "matrix"] == []
