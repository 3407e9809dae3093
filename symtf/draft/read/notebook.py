"""Jupyter notebooks: cells read with :mod:`nbformat`, places read from the raw JSON text.

Nothing is run. :func:`cells` checks the notebook's structure itself first (a
malformed notebook is bad input naming the file, the cell and the field, never
a silent "nothing to check"), then reads it with ``nbformat.reads(…,
as_version=4)``. Each cell's source and each printed output becomes a
:class:`~symtf.draft.read.source.Text` whose characters map to the raw
``.ipynb`` file's lines and columns (:mod:`symtf.draft.read.jsonpos`).
"""

from __future__ import annotations

import json
import re
import warnings
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, cast

import symtf.draft.read.jsonpos as jsonpos
from symtf.draft.read.source import Frame, LineIndex, Run, Text
from symtf.errors import SpecError

__all__ = ["Cell", "CellOutput", "cells", "check_notebook", "notebook_cells"]

#: Cell types of the Jupyter notebook format (nbformat 4); raw cells hold nothing to read.
CELL_TYPES = ("markdown", "code", "raw")
#: Output types of a code cell; only the first three print values.
OUTPUT_TYPES = ("execute_result", "display_data", "stream", "error")


def _kind_of(v: object) -> str:
    names = {
        dict: "a table (object)",
        list: "a list",
        str: "a string",
        bool: "a boolean",
        int: "an integer",
        float: "a number",
    }
    return names.get(type(v), "null" if v is None else f"a {type(v).__name__}")


def _text_field(v: object, where: str) -> str:
    """A notebook string field: a string, or a list of strings (lines)."""
    if isinstance(v, str):
        return v
    if isinstance(v, list) and all(isinstance(x, str) for x in v):
        return "".join(v)
    if isinstance(v, list):
        bad = next(x for x in v if not isinstance(x, str))
        raise SpecError(
            f"{where}: expected a string or a list of strings, found a list holding {_kind_of(bad)}"
        )
    raise SpecError(f"{where}: expected a string or a list of strings, found {_kind_of(v)}")


def notebook_cells(raw: str, path: str) -> list[Any]:
    """A Jupyter notebook's cells as JSON values (read as JSON only, never run).

    Raises:
        SpecError: The text is not JSON with a list of cells.
    """
    try:
        nb = json.loads(raw)
    except (ValueError, RecursionError):
        raise SpecError(
            f"{path}: expected a Jupyter notebook (JSON), found text that is not JSON"
        ) from None
    cells_ = nb.get("cells") if isinstance(nb, dict) else None
    if not isinstance(cells_, list):
        if isinstance(nb, dict) and isinstance(nb.get("worksheets"), list):
            return _v3_cells(nb, path)
        found = (
            f"'cells' as {_kind_of(cells_)}"
            if isinstance(nb, dict) and "cells" in nb
            else ("no 'cells' list" if isinstance(nb, dict) else _kind_of(nb))
        )
        raise SpecError(
            f"{path}: expected a Jupyter notebook (JSON with a list of cells), found {found}"
        )
    return cells_


def _reads(raw: str) -> Any:
    """``nbformat.reads(raw, as_version=4)``, its validation warnings silenced (the reader
    checks the structure it reads itself, and names the cell)."""
    import nbformat

    reads = cast(Callable[..., Any], nbformat.reads)  # nbformat ships no type information
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return reads(raw, as_version=4)


def _v3_cells(nb: dict[str, Any], path: str) -> list[Any]:
    """The cells of an nbformat 3 notebook (``worksheets``), upgraded by nbformat."""
    try:
        v4 = _reads(json.dumps(nb))
    except Exception as e:  # nbformat raises many kinds on a malformed old notebook
        raise SpecError(
            f"{path}: expected a Jupyter notebook nbformat 3 could upgrade, found: {str(e)[:200]}"
        ) from None
    return [dict(c) for c in v4.get("cells", [])]


@dataclass(frozen=True)
class CellOutput:
    """What a code cell printed: one output's text with its places."""

    text: Text
    kind: str  # "stream" or "result"
    index: int  # its place among the cell's outputs


@dataclass(frozen=True)
class Cell:
    """One cell: its kind, its source with places, and (code) its printed outputs."""

    index: int
    kind: str
    source: Text
    outputs: tuple[CellOutput, ...] = ()


def check_notebook(raw: str, path: str) -> None:
    """Refuse a notebook whose cells, sources or outputs have the wrong types (read as JSON
    only, never run), naming the cell and the field: every reader of a notebook (``check``,
    ``draft``, ``extract``, the annotated page) goes by this one rule, so none of them
    reads past a malformed cell in silence.

    Raises:
        SpecError: The text is not a notebook, or a cell's field has the wrong type.
    """
    for k, c in enumerate(notebook_cells(raw, path)):
        _check_cell(c, k, path)


def _check_cell(c: Any, k: int, path: str) -> tuple[str, str, list[tuple[str, str, int]]]:
    """A cell's kind, source and printed outputs ``(text, kind, index)``, checked.

    Raises:
        SpecError: Naming the cell and the field that is not what nbformat 4 says.
    """
    where = f"{path}: cells[{k}]"
    if not isinstance(c, dict):
        raise SpecError(f"{where}: expected a cell (a JSON object), found {_kind_of(c)}")
    kind = c.get("cell_type")
    if kind not in CELL_TYPES:
        raise SpecError(
            f"{where}.cell_type: expected one of {', '.join(CELL_TYPES)}, found {kind!r:.60}"
        )
    src = _text_field(c.get("source", ""), f"{where}.source")
    printed: list[tuple[str, str, int]] = []
    if kind != "code":
        return kind, src, printed
    outputs = c.get("outputs", [])
    if outputs is None:
        return kind, src, printed
    if not isinstance(outputs, list):
        raise SpecError(f"{where}.outputs: expected a list of outputs, found {_kind_of(outputs)}")
    for n, o in enumerate(outputs):
        at = f"{where}.outputs[{n}]"
        if not isinstance(o, dict):
            raise SpecError(f"{at}: expected an output (a JSON object), found {_kind_of(o)}")
        what = o.get("output_type")
        if what not in OUTPUT_TYPES:
            raise SpecError(
                f"{at}.output_type: expected one of {', '.join(OUTPUT_TYPES)}, found {what!r:.60}"
            )
        if what == "stream":
            printed.append((_text_field(o.get("text", ""), f"{at}.text"), "stream", n))
        elif what in ("execute_result", "display_data"):
            data = o.get("data", {})
            if not isinstance(data, dict):
                raise SpecError(f"{at}.data: expected a table of formats, found {_kind_of(data)}")
            if data.get("text/plain") is not None:
                text = _text_field(data["text/plain"], f"{at}.data.text/plain")
                printed.append((text, "result", n))
    return kind, src, printed


def _joined(parts: list[jsonpos.RawString]) -> tuple[str, tuple[Run, ...]]:
    """Strings of a list (a cell's source lines) as one text, with their runs."""
    text = ""
    runs: list[Run] = []
    for p in parts:
        runs.extend((s + len(text), n, o) for s, n, o in p.runs)
        text += p.text
    return text, tuple(runs)


def _raw_fields(raw: str) -> dict[tuple[str | int, ...], tuple[str, tuple[Run, ...]]]:
    """Each cell's source and output texts as the raw file holds them, with their runs.

    Keys: ``(k, "source")``, ``(k, n, "text")``, ``(k, n, "text/plain")``.
    """
    pieces: dict[tuple[str | int, ...], list[jsonpos.RawString]] = {}
    for path, s in jsonpos.strings(raw):
        if len(path) < 3 or not isinstance(path[1], int):
            continue
        k = path[1]
        if path[2] == "source":
            pieces.setdefault((k, "source"), []).append(s)
        elif path[2] == "outputs" and len(path) >= 5 and isinstance(path[3], int):
            n = path[3]
            if path[4] == "text":
                pieces.setdefault((k, n, "text"), []).append(s)
            elif path[4] == "data" and len(path) >= 6 and path[5] == "text/plain":
                pieces.setdefault((k, n, "text/plain"), []).append(s)
    return {key: _joined(parts) for key, parts in pieces.items()}


def _read_nbformat(raw: str) -> Any:
    """The notebook as :mod:`nbformat` reads it (v4), or None when it cannot."""
    try:
        return _reads(raw)
    except Exception:  # nbformat's own errors vary by version; the checks above name the cell
        return None


def cells(raw: str, path: str, *, outputs: bool = True) -> list[Cell]:
    """A notebook's cells with places (checked, then read with nbformat, never run).

    Raises:
        SpecError: For anything that is not a notebook, naming the cell and the field.
    """
    values = notebook_cells(raw, path)
    checked = [_check_cell(c, k, path) for k, c in enumerate(values)]
    nb = _read_nbformat(raw)
    nb_cells = list(nb.get("cells", [])) if nb is not None else []
    fields = _raw_fields(raw)
    file = LineIndex(raw)
    out: list[Cell] = []
    for k, (kind, src, printed) in enumerate(checked):
        nb_cell = nb_cells[k] if k < len(nb_cells) else None
        src = _nb_text(nb_cell, "source", src)
        source = _text(file, k, src, fields.get((k, "source")), output=False)
        outs = []
        if outputs:
            nb_outputs = list(nb_cell.get("outputs", []) or []) if nb_cell is not None else []
            for text, what, n in printed:
                o = nb_outputs[n] if n < len(nb_outputs) else None
                if what == "stream":
                    text = _nb_text(o, "text", text)
                else:
                    data = o.get("data") if o is not None else None
                    text = _nb_text(data, "text/plain", text)
                key = (k, n, "text" if what == "stream" else "text/plain")
                outs.append(CellOutput(_text(file, k, text, fields.get(key), output=True), what, n))
        out.append(Cell(k, kind, source, tuple(outs)))
    return out


def _nb_text(node: Any, key: str, checked: str) -> str:
    """A text field as nbformat read it (lines joined), else as checked from the JSON."""
    value = node.get(key) if isinstance(node, dict) else None
    return value if isinstance(value, str) else checked


def _text(
    file: LineIndex,
    k: int,
    text: str,
    raw: tuple[str, tuple[Run, ...]] | None,
    *,
    output: bool,
) -> Text:
    """A cell's text with a frame that maps it to the raw file (when the raw text agrees)."""
    runs = raw[1] if raw is not None and raw[0] == text else ()
    frame = Frame.of_cell(file, k, text, runs, output=output)
    return Text.of(text, frame)


_SHOWN = re.compile(r"(?:print|display)\(\s*([A-Za-z_][\w.]*)\s*\)|([A-Za-z_][\w.]*)")
_ASSIGNED = re.compile(r"([A-Za-z_]\w*)\s*=.*")


def printed_variable(src: str) -> str | None:
    """The name a code cell shows: its last line ``A``, ``print(A)`` or ``display(A)``."""
    lines = [
        ln.strip()
        for ln in src.strip().splitlines()
        if ln.strip() and not ln.strip().startswith("#")
    ]
    if not lines:
        return None
    last = lines[-1]
    m = _SHOWN.fullmatch(last)
    if m:
        return m.group(1) or m.group(2)
    m = _ASSIGNED.fullmatch(last)
    return m.group(1) if m else None
