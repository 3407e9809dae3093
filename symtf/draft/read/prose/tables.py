"""Tables in prose: a Markdown table the parser found (its numeric rows as one matrix,
its other cells read as prose lines) and a run of ``|``-lines read as one matrix.
"""

from __future__ import annotations

import re

from symtf.draft.read.columns import stated_columns
from symtf.draft.read.items import (
    Found,
    Rows,
    Segment,
    expression_text,
    is_arithmetic,
    numeric_cell,
    places_in,
)
from symtf.draft.read.prose.lines import line_items, plain_arithmetic
from symtf.draft.read.source import Text
from symtf.errors import ExpressionError
from symtf.language import latexmath
from symtf.place import Place

_RULE_CELL = re.compile(r":?-{2,}:?")


def table_items(seg: Segment, cells: list[list[Text]]) -> list[Found]:
    """A Markdown table the parser found: its numeric rows as one matrix, its other cells
    read as prose.

    A row whose first cell is a name and whose other cells are numbers gives those
    numbers (``| I | 0.30 | 0.70 |``); so does a row whose first cell counts the rows
    (``| 0 | 0.00 | 1.00 |`` under a header ``| pos | … |``: a positional-encoding
    table). The first row that is not numeric names the matrix. A cell that is not one
    number (``σ(1) = 0.731``) is read as a line of prose. Each entry is placed in its cell.
    """
    texts = [[_cell_text(c.text) for c in row] for row in cells]
    values = [[numeric_cell(t) for t in row] for row in texts]
    numeric_rows = [k for k, row in enumerate(values) if row and all(v is not None for v in row)]
    index = (
        bool(numeric_rows)
        and len(values[0]) > 1
        and values[0][0] is None
        and all(re.fullmatch(r"\d+", texts[k][0]) for k in numeric_rows)
        and [int(texts[k][0]) for k in numeric_rows]
        == list(
            range(
                int(texts[numeric_rows[0]][0]), int(texts[numeric_rows[0]][0]) + len(numeric_rows)
            )
        )
    )
    out: list[Found] = []
    used: set[tuple[int, int]] = set()
    for k, row in enumerate(cells[1:], 1):  # | σ(1) | 0.731 |: a worked value and its result
        if (
            len(row) < 2
            or values[k][0] is not None
            or not all(v is not None for v in values[k][1:])
        ):
            continue
        expression = _arithmetic(texts[k][0])
        if expression is None:
            continue
        for j in range(1, len(row)):
            printed = ((values[k][j] or "",),)
            name = texts[0][j] if texts[0][j:] and values[0][j] is None else texts[k][0]
            out.append(
                Found(
                    "arithmetic",
                    name or f"line {seg.line}",
                    _line_of(row[j], seg),
                    printed,
                    plain_arithmetic(texts[k][0]) or expression,
                    expression,
                    seg.cell,
                    " | ".join(t for t in texts[k])[:200],
                    places=places_in(row[j], 0, len(row[j].text), printed),
                )
            )
            used.add((k, j))
        values[k] = [None] * len(values[k])  # not a row of the table's matrix
    numeric: list[tuple[str, ...]] = []
    places: list[Place] = []
    label = None
    table_used: set[tuple[int, int]] = set()
    picked_columns: list[int] = []
    for k, (row, vals) in enumerate(zip(cells, values, strict=True)):
        first = 1 if index else 0
        if all(v is None for v in vals) and any((k, j) in used for j in range(len(vals))):
            continue
        lead = _named_lead(vals)
        if vals[1:] and all(v is not None for v in vals[1:]) and (vals[0] is None or index):
            picked = list(range(1, len(vals)))
        elif vals and all(v is not None for v in vals):
            picked = list(range(first, len(vals)))
        elif lead:  # | hellaswag | acc | 0.5921 | 0.5931 |: two names, then the numbers
            picked = list(range(lead, len(vals)))
        else:
            if label is None:
                label = texts[k][0] or None
            continue
        numeric.append(tuple(vals[j] or "" for j in picked))
        picked_columns = picked
        for j in picked:
            table_used.add((k, j))
            places.extend(places_in(row[j], 0, len(row[j].text), ((vals[j] or "",),)))
    if numeric and len({len(r) for r in numeric}) == 1:
        split = _difference_column(texts, values, picked_columns, numeric, places)
        after: list[Found] = []
        if split is None:  # | Logit | Softmax @ T=2 |: read after the columns it is made from
            numeric, places, stated = stated_columns(texts, values, picked_columns, numeric, places)
            context = " | ".join(c.text.strip() for c in cells[0])[:200] if cells else ""
            for heading, entries, own in stated:
                after.append(
                    Found(
                        "matrix",
                        heading,
                        seg.line,
                        entries,
                        cell=seg.cell,
                        context=context,
                        places=own,
                    )
                )
        if split is not None:  # the difference read after the columns it is computed from
            (numeric, places), column = split
            after.append(
                Found(
                    "matrix",
                    column[0],
                    seg.line,
                    column[1],
                    cell=seg.cell,
                    context=column[0],
                    places=column[2],
                )
            )
        out.append(
            Found(
                "matrix",
                label or f"line {seg.line}",
                seg.line,
                tuple(numeric),
                cell=seg.cell,
                context=" | ".join(c.text.strip() for c in cells[0])[:200] if cells else "",
                places=tuple(places),
            )
        )
        out.extend(after)
        used |= table_used
    for k, row in enumerate(cells[1:], 1):  # the header names columns: its cells are not read
        for j, c in enumerate(row):
            if (k, j) in used or not re.search(r"\d\.\d|\d,\d{3}", c.text):
                continue
            out.extend(line_items(c, _line_of(c, seg), seg))
    return out


def _named_lead(vals: list[str | None]) -> int:
    """How many cells name a table row before its numbers (``| piqa | acc | 0.79 | 0.80 |``:
    two), when at most two do, at least two numbers follow and nothing else does; else 0."""
    lead = next((j for j, v in enumerate(vals) if v is not None), len(vals))
    if not 1 <= lead <= 2 or len(vals) - lead < 2:
        return 0
    return lead if all(v is not None for v in vals[lead:]) else 0


#: A column heading that names a difference of other columns.
_DIFFERENCE = re.compile(r"\b(?:diff|difference|differences|delta)\b|Δ", re.IGNORECASE)

_Column = tuple[str, tuple[tuple[str, ...], ...], tuple[Place, ...]]


def _difference_column(
    texts: list[list[str]],
    values: list[list[str | None]],
    columns: list[int],
    numeric: list[tuple[str, ...]],
    places: list[Place],
) -> tuple[tuple[list[tuple[str, ...]], list[Place]], _Column] | None:
    """A table's last numeric column when its heading says it is a difference (``difference
    - value``): its numbers are results of the other columns, not inputs beside them. Returns
    the table without it, and the column (heading, one number per row, places), or None."""
    if len(columns) < 3 or not numeric:
        return None
    j = columns[-1]
    heading = " ".join(
        t[j].strip() for t, v in zip(texts, values, strict=True) if len(t) > j and v[j] is None
    )
    if not _DIFFERENCE.search(heading):
        return None
    width = len(columns)
    if len(places) != width * len(numeric):
        return None
    rest = [r[:-1] for r in numeric]
    kept = [q for i, q in enumerate(places) if i % width != width - 1]
    column = tuple((r[-1],) for r in numeric)
    own = tuple(q for i, q in enumerate(places) if i % width == width - 1)
    name = " ".join(heading.replace("-", " ").split()) or "difference"
    return (rest, kept), (name, column, own)


def _arithmetic(text: str) -> str | None:
    """A table cell's worked value as written (maths or plain), if it is arithmetic on literals."""
    if is_arithmetic(text):
        written = expression_text(text)
        try:
            latexmath.parse(written, where="arithmetic")
        except ExpressionError:
            return None
        return written
    return expression_text(text) if plain_arithmetic(text) is not None else None


def _cell_text(text: str) -> str:
    """A table cell's text without emphasis or a maths span around it (``**0.5**``, ``$0.5$``)."""
    t = text.strip().strip("*").strip()
    for mark in ("$$", "$"):
        if len(t) > 2 * len(mark) and t.startswith(mark) and t.endswith(mark):
            return t[len(mark) : -len(mark)].strip()
    return t


def _line_of(text: Text, seg: Segment) -> int:
    """The line a piece of a segment starts on (in its cell, for a notebook)."""
    p = text.place(0, 1)
    if p.cell is not None and p.cell_line is not None:
        return p.cell_line
    return p.line if text.runs else seg.line


def markdown_table(block: list[str]) -> tuple[str | None, Rows] | None:
    rows = [[c.strip().strip("*") for c in ln.strip().strip("|").split("|")] for ln in block]
    rows = [r for r in rows if not all(_RULE_CELL.fullmatch(c) for c in r)]
    numeric = []
    label = None
    for r in rows:
        cells = [numeric_cell(c) for c in r]
        if all(c is not None for c in cells[1:]) and cells[1:] and cells[0] is None:
            numeric.append(tuple(c for c in cells[1:] if c is not None))
        elif all(c is not None for c in cells) and cells:
            numeric.append(tuple(c for c in cells if c is not None))
        elif label is None:
            label = r[0] or None
    if not numeric or len({len(r) for r in numeric}) != 1:
        return None
    return label, tuple(numeric)
