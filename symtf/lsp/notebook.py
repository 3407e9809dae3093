"""A notebook document (LSP 3.17) written as the ``.ipynb`` text symtf reads, and back.

An editor sends a notebook as its cells, each an ordinary text document (its
source), without outputs. :func:`write` lays the cells out the way Jupyter saves
them: nbformat 4, one JSON string per source line, each on a line of its own.
Because it writes every character itself, it knows for each line of that text
which cell and which line of the cell it holds, and where each character of the
cell's line went: :meth:`Layout.cell_place` turns a place of the report (a line
and columns of the ``.ipynb`` text) into a place in a cell. Reading the text back
needs no search.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass, field

__all__ = ["Cell", "Layout", "write"]

#: Cell kinds of the protocol (NotebookCellKind): 1 Markup, 2 Code.
MARKUP, CODE = 1, 2


@dataclass(frozen=True)
class Cell:
    """One cell as the client sent it.

    Attributes:
        uri: The cell's text document.
        kind: :data:`MARKUP` or :data:`CODE`.
        text: Its source.
    """

    uri: str
    kind: int
    text: str


@dataclass
class Layout:
    """Where each cell's lines went in the written ``.ipynb`` text.

    Attributes:
        text: The ``.ipynb`` text.
        lines: 1-based line of the text → ``(cell index, 1-based cell line, start)``,
            where the JSON string of that cell line starts its content (0-based).
        columns: For a line whose string holds escapes, the text column (0-based,
            from ``start``) of each character of the cell's line, and one past the last.
    """

    text: str
    lines: dict[int, tuple[int, int, int]] = field(default_factory=dict)
    columns: dict[int, list[int]] = field(default_factory=dict)

    def cell_place(
        self, line: int, column: int | None, end_column: int | None
    ) -> tuple[int, int, int | None, int | None] | None:
        """``(cell, cell line, column, end column)``, 1-based, of a place in the text.

        The columns are ``None`` when the place has none or they do not fall inside
        the cell line's string; ``None`` for a line that holds no cell line.
        """
        found = self.lines.get(line)
        if found is None:
            return None
        cell, cell_line, start = found
        if column is None or end_column is None:
            return cell, cell_line, None, None
        a, b = column - 1 - start, end_column - 1 - start
        cols = self.columns.get(line)
        if cols is not None:
            try:
                a, b = cols.index(a), cols.index(b)
            except ValueError:
                return cell, cell_line, None, None
        if a < 0 or b <= a:
            return cell, cell_line, None, None
        return cell, cell_line, a + 1, b + 1


def write(cells: Sequence[Cell], language: str = "python") -> Layout:
    """The cells as an nbformat 4 ``.ipynb`` text, and where each line went."""
    out = ["{", ' "cells": [']
    layout = Layout("")
    for i, cell in enumerate(cells):
        kind = "code" if cell.kind == CODE else "markdown"
        out += ["  {", f'   "cell_type": "{kind}",']
        if kind == "code":
            out.append('   "execution_count": null,')
        out.append('   "metadata": {},')
        if kind == "code":
            out.append('   "outputs": [],')
        parts = cell.text.split("\n")
        parts = [p + "\n" for p in parts[:-1]] + ([parts[-1]] if parts[-1] else [])
        if not parts:
            out.append('   "source": []')
        else:
            out.append('   "source": [')
            for k, part in enumerate(parts):
                body = part.removesuffix("\n")
                escaped = json.dumps(body, ensure_ascii=False)[1:-1]
                tail = "\\n" if part.endswith("\n") else ""
                comma = "," if k + 1 < len(parts) else ""
                out.append(f'    "{escaped}{tail}"{comma}')
                line = len(out)
                layout.lines[line] = (i, k + 1, 5)
                if len(escaped) != len(body):
                    cols, at = [], 0
                    for ch in body:
                        cols.append(at)
                        at += len(json.dumps(ch, ensure_ascii=False)) - 2
                    cols.append(at)
                    layout.columns[line] = cols
            out.append("   ]")
        out.append("  }" + ("," if i + 1 < len(cells) else ""))
    out += [
        " ],",
        ' "metadata": {',
        f'  "language_info": {{"name": {json.dumps(language)}}}',
        " },",
        ' "nbformat": 4,',
        ' "nbformat_minor": 5',
        "}",
        "",
    ]
    layout.text = "\n".join(out)
    return layout
