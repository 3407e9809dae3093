"""A printed array pasted into a code cell's comments, with a note after each row.

The fixture notebook is written here. By hand: q = [[1, 0], [0, 2], [1, 1]] and
k = [[2, 0], [1, 2], [0, 3]], so q @ k.T = [[2, 1, 0], [0, 4, 6], [2, 3, 3]]. The cell
prints it, and its comments paste the print again, one row a line, each row followed by
``# scores of query N``: the pasted rows are that matrix again.
"""

from __future__ import annotations

from pathlib import Path

import nbformat

from symtf.commands.draft import check_article
from symtf.renderers._claims import place_of

SETUP = "import torch\nq = torch.tensor([[1., 0.], [0., 2.], [1., 1.]])\nk = torch.tensor([[2., 0.], [1., 2.], [0., 3.]])"
PRINTED = "tensor([[2., 1., 0.],\n        [0., 4., 6.],\n        [2., 3., 3.]])\n"


def _notebook(tmp_path: Path, middle: str) -> tuple[Path, list[int]]:
    source = (
        "scores = q @ k.T\nprint(scores)\n\n"
        "# tensor([[2., 1., 0.],  # scores of query 1\n"
        f"#         [{middle}],  # scores of query 2\n"
        "#         [2., 3., 3.]]) # scores of query 3"
    )
    cell = nbformat.v4.new_code_cell(source)
    cell.outputs = [nbformat.v4.new_output("stream", name="stdout", text=PRINTED)]
    nb = nbformat.v4.new_notebook()
    nb.cells = [nbformat.v4.new_markdown_cell("# Scores"), nbformat.v4.new_code_cell(SETUP), cell]
    path = tmp_path / "scores.ipynb"
    nbformat.write(nb, str(path))
    raw = path.read_text(encoding="utf-8").splitlines()
    lines = [i + 1 for i, x in enumerate(raw) if "scores of query" in x]
    return path, lines


def _verdicts(path: Path) -> list[tuple[int | None, str, str]]:
    out = []
    for r in check_article(path).results:
        for k, c in enumerate(r.checks):
            place = place_of(r, c, k)
            out.append((place.line if place else None, c.printed, c.verdict))
    return out


def test_rows_pasted_with_notes_after_them_are_the_printed_matrix(tmp_path: Path) -> None:
    path, lines = _notebook(tmp_path, "0., 4., 6.")
    got = _verdicts(path)
    for line, row in zip(lines, (("2", "1", "0"), ("0", "4", "6"), ("2", "3", "3")), strict=True):
        mine = [(p.rstrip("."), v) for at, p, v in got if at == line]
        assert mine == [(x, "exact") for x in row]
