"""Where a printed number stands in its article: file line and columns, and notebook cell.

A :class:`Place` is made by the reader (:mod:`symtf.draft.read`) for every number
it finds, written into a draft derivation as a claim's ``places``, read back by
:mod:`symtf.spec` and reported per number by the renderers. It is plain data:
it imports nothing of symtf.

Conventions (the JSON report's place fields follow them):

- ``line`` is 1-based, in the file as it lies on disk (for a notebook, the raw
  ``.ipynb`` JSON text);
- ``column`` and ``end_column`` are 1-based and counted in Unicode code points
  on ``line``: the number's first character, and one past its last;
- for a notebook, ``cell`` is the 0-based cell index, ``cell_line`` and
  ``cell_column`` are 1-based within the cell's source (or, for a number a code
  cell printed, within that output's text), and ``output`` says which.

A place whose column is not known (``column is None``) is line-level; every
consumer degrades to the line.
"""

from __future__ import annotations

from dataclasses import dataclass

__all__ = ["Place", "place_toml"]


@dataclass(frozen=True)
class Place:
    """Where one printed number stands.

    Attributes:
        line: 1-based file line (the raw ``.ipynb`` file's line for a notebook).
        column: 1-based column of the number's first character, in code points.
        end_column: 1-based column one past its last character, on ``line``.
        cell: A notebook's 0-based cell index.
        cell_line: 1-based line within the cell's source or output text.
        cell_column: 1-based column (code points) within that line of the cell.
        output: Whether the number was printed by a code cell (its output), not written.
    """

    line: int
    column: int | None = None
    end_column: int | None = None
    cell: int | None = None
    cell_line: int | None = None
    cell_column: int | None = None
    output: bool = False

    def fields(self) -> dict[str, int | bool]:
        """The report's place fields (``source_line``, ``source_column``, …); absent ones left out.

        >>> Place(3, 5, 9).fields()
        {'source_line': 3, 'source_column': 5, 'source_end_column': 9}
        """
        out: dict[str, int | bool] = {"source_line": self.line}
        if self.column is not None:
            out["source_column"] = self.column
        if self.end_column is not None:
            out["source_end_column"] = self.end_column
        if self.cell is not None:
            out["cell_index"] = self.cell
            if self.cell_line is not None:
                out["cell_line"] = self.cell_line
            if self.cell_column is not None:
                out["cell_column"] = self.cell_column
            out["cell_output"] = self.output
        return out

    def where(self) -> str:
        """``line 12, column 5`` or, in a notebook, ``cell 3, line 2`` (never both mixed)."""
        if self.cell is not None and self.cell_line is not None:
            part = "output of cell" if self.output else "cell"
            return f"{part} {self.cell}, line {self.cell_line}"
        if self.column is not None:
            return f"line {self.line}, column {self.column}"
        return f"line {self.line}"


#: The keys of a place in a derivation file, in the order they are written.
TOML_KEYS = ("line", "column", "end_column", "cell", "cell_line", "cell_column", "output")


def place_toml(p: Place) -> str:
    """A place as a TOML inline table (what a draft derivation's ``places`` holds).

    >>> place_toml(Place(12, 5, 9))
    '{ line = 12, column = 5, end_column = 9 }'
    """
    parts = [f"line = {p.line}"]
    for key in TOML_KEYS[1:6]:
        v = getattr(p, key)
        if v is not None:
            parts.append(f"{key} = {v}")
    if p.output:
        parts.append("output = true")
    return "{ " + ", ".join(parts) + " }"
