"""A claim's ``places``: where each printed number stands in the article.

A draft derivation written by ``symtf draft`` or ``symtf extract`` gives each
claim the place of each printed entry, in the order of ``printed`` (row by row)::

    places = [{ line = 12, column = 5, end_column = 10 }, { line = 12, column = 13, end_column = 18 }]

and, for a notebook, ``cell`` (0-based), ``cell_line``, ``cell_column`` and
``output = true`` for a number a code cell printed (:class:`symtf.place.Place`).
Only ``line`` is required. Hand-written derivations need none of it.
"""

from __future__ import annotations

from typing import Any

from symtf.errors import SpecError
from symtf.numbers import toml_kind as _kind
from symtf.place import TOML_KEYS, Place

__all__ = ["read_places"]

#: Largest line or column a place may name.
MAX_POSITION = 100_000_000


def _whole(v: Any, where: str, lo: int) -> int:
    if isinstance(v, bool) or not isinstance(v, int):
        raise SpecError(f"{where}: expected a whole number, found {_kind(v)}")
    if not lo <= v <= MAX_POSITION:
        raise SpecError(f"{where}: expected a whole number from {lo} to {MAX_POSITION}, found {v}")
    return v


def _place(v: Any, where: str) -> Place:
    if not isinstance(v, dict):
        raise SpecError(
            f"{where}: expected a table like {{ line = 12, column = 5, end_column = 10 }}, "
            f"found {_kind(v)}"
        )
    unknown = sorted(set(v) - set(TOML_KEYS))
    if unknown:
        raise SpecError(f"{where}: unknown key {unknown[0]!r} (a place has {', '.join(TOML_KEYS)})")
    if "line" not in v:
        raise SpecError(f"{where}.line: required key is missing (the 1-based file line)")
    line = _whole(v["line"], f"{where}.line", 1)
    got: dict[str, int | None] = {}
    for key in ("column", "end_column", "cell_line", "cell_column"):
        got[key] = _whole(v[key], f"{where}.{key}", 1) if key in v else None
    cell = _whole(v["cell"], f"{where}.cell", 0) if "cell" in v else None
    output = v.get("output", False)
    if not isinstance(output, bool):
        raise SpecError(f"{where}.output: expected true or false, found {_kind(output)}")
    column, end = got["column"], got["end_column"]
    if end is not None and (column is None or end <= column):
        found = "no column" if column is None else f"column = {column}"
        raise SpecError(
            f"{where}.end_column: expected a column after column (one past the number's "
            f"last character), found end_column = {end} with {found}"
        )
    if cell is None and (got["cell_line"] is not None or got["cell_column"] is not None or output):
        raise SpecError(f"{where}: expected cell (cell_line, cell_column and output are a cell's)")
    return Place(line, column, end, cell, got["cell_line"], got["cell_column"], output)


def read_places(v: Any, where: str, count: int) -> tuple[Place, ...]:
    """A claim's ``places``: one place per printed entry (``count`` of them).

    Raises:
        SpecError: Naming the claim, the place and the key that is not what it should be.
    """
    if v is None:
        return ()
    if not isinstance(v, list):
        raise SpecError(
            f"{where}: expected an array of places (one per printed number), found {_kind(v)}"
        )
    if len(v) != count:
        raise SpecError(
            f"{where}: expected {count} place(s), one per printed number, found {len(v)}"
        )
    return tuple(_place(p, f"{where}[{k}]") for k, p in enumerate(v))
