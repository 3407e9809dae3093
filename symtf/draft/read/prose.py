"""The printed values of plain text: prose lines, tables, ASCII matrices, and code outputs.

A prose segment is read line by line (an equation continued under its ``=`` on
the lines below is one line): labelled numbers (``loss: 0.4581``), arithmetic
chains (``0.1 + 0.2 = 0.3``), bracketed vectors, tuples, and decimals in
sentences. Runs of ``|``-lines are Markdown tables or ASCII-art matrices. A code
cell's output is read for the arrays it printed (``array([[…]])``,
``tensor([…])``). Every entry keeps its place.
"""

from __future__ import annotations

import re
from typing import cast

import symtf.draft.read.complexes as complexes
from symtf.draft.read.columns import stated_columns
from symtf.draft.read.items import (
    LITERAL,
    Found,
    Rows,
    Segment,
    expression_text,
    is_arithmetic,
    matrix_rows,
    numeric_cell,
    places_in,
)
from symtf.draft.read.listed import chain_links
from symtf.draft.read.maths import weights
from symtf.draft.read.rounded import rounded_wholes
from symtf.draft.read.source import Text
from symtf.draft.read.source import spans as source_spans
from symtf.draft.read.tables import labelled_rows, printed_table_items
from symtf.errors import ExpressionError
from symtf.language import latexmath
from symtf.place import Place

__all__ = ["output_items", "text_items"]


def _line_spans(text: str) -> list[tuple[int, int]]:
    """The spans of a text's lines (without their line breaks)."""
    out = []
    at = 0
    for ln in text.splitlines(keepends=True):
        body = ln.rstrip("\r\n")
        out.append((at, at + len(body)))
        at += len(ln)
    return out


def text_items(seg: Segment) -> list[Found]:
    """Every printed value of a prose segment (or of a code output)."""
    if seg.extra.get("output"):
        return output_items(seg)
    if seg.table is not None:
        return table_items(seg, seg.table)
    out: list[Found] = []
    spans = _line_spans(seg.text.text)
    lines = [seg.text.text[a:b] for a, b in spans]
    k = 0
    while k < len(lines):
        if _ascii_blocks(lines[k]):
            start = k
            while k < len(lines) and _ascii_blocks(lines[k]):
                k += 1
            header = lines[start - 1] if start > 0 else ""
            out.extend(_ascii_matrices(seg, spans[start:k], header, start))
            continue
        if lines[k].strip().startswith("|"):
            start = k
            while k < len(lines) and lines[k].strip().startswith("|"):
                k += 1
            table = _markdown_table(lines[start:k])
            if table is not None:
                label, rows = table
                line = seg.line + start
                out.append(
                    Found(
                        "matrix",
                        label or f"line {line}",
                        line,
                        rows,
                        cell=seg.cell,
                        context=lines[start].strip()[:200],
                        places=places_in(seg.text, spans[start][0], spans[k - 1][1], rows),
                    )
                )
            continue
        labelled = labelled_rows(seg, spans, lines, k)
        if labelled is not None:
            found, k = labelled
            out.append(found)
            continue
        column = _column_vector(seg, spans, lines, k)
        if column is not None:
            found, k = column
            out.append(found)
            continue
        listed = _open_list(lines, k)
        if listed is not None:  # a list written over several lines: read as one line
            parts = [
                seg.text[a : a + len(_uncommented(ln).rstrip())].strip()
                for (a, _b), ln in zip(spans[k:listed], lines[k:listed], strict=True)
                if _uncommented(ln).strip()
            ]
            joined = Text.join(" ", parts, seg.text.frame)
            out.extend(_line_items(joined, seg.line + listed - 1, seg))
            k = listed
            continue
        j = k + 1
        while j < len(lines):
            if _continues(lines, k, j):
                j += 1
            elif (after := _after_relation(lines, j - 1)) is not None:
                j = after + 1
            else:
                break
        if j > k + 1:  # an equation continued on the lines below it: read as one line
            parts = [
                seg.text[a:b].strip()
                for (a, b), ln in zip(spans[k:j], lines[k:j], strict=True)
                if ln.strip()
            ]
            joined = Text.join(" ", parts, seg.text.frame)
            out.extend(_line_items(joined, seg.line + j - 1, seg))
        else:
            a, b = spans[k]
            out.extend(_line_items(seg.text[a:b], seg.line + k, seg))
        k = j
    return out


_ONE_ENTRY = re.compile(
    r"^\s*(?:([A-Za-z_]\w*)\s*=\s*)?\[\s*([-−]?(?:\d+\.?\d*|\.\d+)(?:[eE][-+]?\d+)?)\s*\]\s*,?\s*$"
)
_OPENS = re.compile(r"^\s*(?:([A-Za-z_][\w^()]*)\s*[=:]\s*)?(?=\[)")
_BLOCK_BODY = re.compile(r"^[\[\]\d\s.,eE+\-−]*$")
#: Most lines a bracketed value written over several lines may take.
MAX_BLOCK_LINES = 64


def _column_vector(
    seg: Segment, spans: list[tuple[int, int]], lines: list[str], k: int
) -> tuple[Found, int] | None:
    """A value written one row per line, from line ``k``: the found value and the line after it.

    Either one bracket left open over the lines (``y = [0.12`` / ``0.34`` / ``0.56]``, or
    ``[[0.5],`` / ``[0.25]]``), or one bracketed number per line (``[0.12]`` / ``v = [0.34]``
    / ``[0.56]``, a column vector drawn with its name on one of its rows).
    """
    label = None
    rows: Rows
    if _ONE_ENTRY.match(lines[k]):
        j = k
        entries: list[tuple[str, ...]] = []
        while j < len(lines) and j - k < MAX_BLOCK_LINES:
            one = _ONE_ENTRY.match(lines[j])
            if one is None:
                break
            label = label or one.group(1)
            entries.append((numeric_cell(one.group(2)) or "",))
            j += 1
        if j - k < 2:
            return None
        rows = tuple(entries)
        named = re.search(r"([A-Za-z_]\w*)\s*=\s*$", lines[k - 1]) if k else None
        label = label or (named.group(1) if named else None)
    else:
        m = _OPENS.match(lines[k])
        if m is None or lines[k].count("[") <= lines[k].count("]"):
            return None
        depth = 0
        j = k
        while j < len(lines) and j - k < MAX_BLOCK_LINES:
            depth += lines[j].count("[") - lines[j].count("]")
            j += 1
            if depth <= 0:
                break
        if depth != 0 or j - k < 2:
            return None
        body = seg.text.text[spans[k][0] + m.end() : spans[j - 1][1]].rstrip().rstrip(",;.")
        if not _BLOCK_BODY.match(body):
            return None
        parsed = _block_rows(body)
        if parsed is None:
            return None
        rows, label = parsed, m.group(1)
    a, b = spans[k][0], spans[j - 1][1]
    found = Found(
        "matrix" if len(rows) > 1 else "vector",
        label or f"line {seg.line + k}",
        seg.line + k,
        rows,
        cell=seg.cell,
        context=lines[k].strip()[:200],
        places=places_in(seg.text, a, b, rows),
    )
    return found, j


def _block_rows(body: str) -> Rows | None:
    """The rows of a bracketed value over several lines: nested brackets, else one per line."""
    inner = body.strip()[1:-1].strip()
    if not inner:
        return None
    raw = re.findall(r"\[([^\[\]]*)\]", inner) if inner.startswith("[") else inner.splitlines()
    rows = []
    for r in raw:
        cells = [c for c in re.split(r"[,\s]+", r.strip()) if c]
        values = [numeric_cell(c) for c in cells]
        if not values or any(v is None for v in values):
            return None
        rows.append(tuple(v.rstrip(".") if v.endswith(".") and v[:-1] else v for v in values if v))
    return tuple(rows) if rows and len({len(r) for r in rows}) == 1 else None


#: A line that carries on the equation above it: ``     = 1.0 / 4`` (not a rule ``====``).
_CONTINUATION = re.compile(r"^\s*(?:=(?!=)|≈)\s*\S")


def _continues(lines: list[str], first: int, at: int) -> bool:
    """Whether ``lines[at]`` continues the equation begun at ``lines[first]``.

    Hand-worked arithmetic in a code block is often aligned under its ``=``::

        mean = (0.1 + 0.3 + (-0.2) + 0.8) / 4
             = 1.0 / 4
             = 0.25

    A continuation starts with ``=`` or ``≈`` and the equation it continues has one, or
    begins with a labelled expression (``Pair 0: (1.0+2.0j) × (0.540+0.841j)``, then
    ``= -1.142 + 1.921j`` below it).
    """
    return bool(_CONTINUATION.match(lines[at])) and (
        any(("=" in ln or "≈" in ln) for ln in lines[first:at])
        or bool(_LABELLED_EXPRESSION.match(lines[first]))
    )


#: ``Position 1, Pair 0: (1.0+2.0j) × (0.540+0.841j)``: a label, a colon, an expression
#: ending in a number or a bracket.
_LABELLED_EXPRESSION = re.compile(r"^[^:=≈]{1,60}:\s*\S[^=≈]*[\d)\]]\s*$")


#: A comment after a list's row in a code block: ``[1.0+0j, 1.0+0j],   # Position 0``.
_ROW_COMMENT = re.compile(r"(?<=[\[\],(])\s+#\s.*$")


def _uncommented(line: str) -> str:
    """A line without the comment written after a list's row."""
    return _ROW_COMMENT.sub("", line)


def _open_list(lines: list[str], first: int) -> int | None:
    """The line after a list begun on ``lines[first]`` and closed on a later line, with
    its relations between (``angles = [`` … ``] = [`` … ``]``), or None.

    Only a line that leaves a bracket open starts one; the list ends on the first line
    that closes every bracket, within :data:`MAX_LIST_LINES` lines. Relations stand only
    between lists: a list of worked lines (``[`` then ``(0.1 - 0.25) / 0.364 = -0.412,``)
    or two matrices side by side (``[[5, 10],    / √2 = [[3.5, 7.1],``) is no such list.
    """
    depth = 0
    for at in range(first, min(first + MAX_LIST_LINES, len(lines))):
        for ch in _uncommented(lines[at]):
            if ch == "[":
                depth += 1
            elif ch == "]":
                depth -= 1
                if depth < 0:
                    return None
            elif ch in "=≈" and depth > 0:
                return None
        if depth == 0:
            return at + 1 if at > first else None
    return None


#: Most lines one list written over several lines may take.
MAX_LIST_LINES = 24


#: A line that ends on a relation (``[0.3 / 0.6481, 0.6 / 0.6481] =>``), and a line that
#: starts with a value or an expression.
_OPEN_RELATION = re.compile(r"[\d\])]\s*(?:=>|⇒|=|≈)\s*$")
_VALUE_START = re.compile(r"^\s*(?:[-−]?\d|[\[(√])")


def _after_relation(lines: list[str], last: int) -> int | None:
    """The line that ends an equation left open on ``lines[last]``.

    A hand calculation in a comment or a plain block often breaks after its ``=>`` or
    ``=`` and writes the result a line or two below, a blank line between them::

        [ 0.3 / 0.6481, 0.6 / 0.6481 ] =>

        [ 0.4629, 0.9258 ]

    Returns the next non-blank line (within two) when it starts with a value or an
    expression, else None.
    """
    if not _OPEN_RELATION.search(lines[last]):
        return None
    for at in range(last + 1, min(last + 3, len(lines))):
        if lines[at].strip():
            return at if _VALUE_START.match(lines[at]) else None
    return None


_ASCII_BLOCK = re.compile(r"\|\s*((?:[-−]?\d+(?:\.\d+)?\s+)*[-−]?\d+(?:\.\d+)?)\s*\|")


def _ascii_blocks(line: str) -> list[re.Match[str]]:
    """The ``| 1 0 1 |`` blocks of a line of an ASCII-art matrix (two or more numbers each)."""
    blocks = list(_ASCII_BLOCK.finditer(line))
    return [b for b in blocks if len(b.group(1).split()) >= 2] if blocks else []


def _ascii_matrices(
    seg: Segment, spans: list[tuple[int, int]], header: str, offset: int
) -> list[Found]:
    """Matrices drawn side by side with ``|`` rules, labelled by ``X =`` before or above them."""
    block = [seg.text.text[a:b] for a, b in spans]
    per_line = [_ascii_blocks(ln) for ln in block]
    width = max(len(b) for b in per_line)
    names = re.findall(r"([A-Za-z_][\w^()]*)\s*=", header) if header.strip().endswith("=") else []
    out = []
    for j in range(width):
        rows: list[tuple[str, ...]] = []
        places: list[Place] = []
        for (a, _b), bl in zip(spans, per_line, strict=True):
            if len(bl) > j:
                row = tuple(c.replace("−", "-") for c in bl[j].group(1).split())
                rows.append(row)
                places.extend(places_in(seg.text, a + bl[j].start(1), a + bl[j].end(1), (row,)))
        if not rows or len({len(r) for r in rows}) != 1:
            continue
        lead = block[0][: per_line[0][0].start()].strip() if j == 0 and per_line[0] else ""
        m = re.fullmatch(r"([A-Za-z_][\w^()]*)\s*=", lead)
        label = m.group(1) if m else (names[j] if j < len(names) else f"line {seg.line + offset}")
        line = seg.line + offset
        out.append(
            Found(
                "matrix",
                label,
                line,
                tuple(rows),
                cell=seg.cell,
                context=block[0].strip()[:200],
                places=tuple(places),
            )
        )
    return out


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
            out.extend(_line_items(c, _line_of(c, seg), seg))
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


def _markdown_table(block: list[str]) -> tuple[str | None, Rows] | None:
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


_VECTOR_IN_TEXT = re.compile(r"\[[^\[\]]*\d[^\[\]]*\]")

#: A tuple of numbers in parentheses, ``(0.1433, 0.2799, -0.7988)``, not a call ``f(1, 2)``.
_TUPLE_IN_TEXT = re.compile(r"(?<![\w)\]])\(([^()\[\]]*)\)")
_BULLET = re.compile(r"^(?:[•*\s]|-(?![\d.]))+")
#: A decimal in prose ("sums to 1.0"; "-0.7988" keeps its sign), a percentage ("88.08%", a
#: restatement of 0.8808 that drafting links to it) or a whole number with thousands
#: separators ("about 2,600 parameters").
_PROSE_DECIMAL = re.compile(
    r"(?<![\w.,])((?:[-−](?=\d))?(?:\d{1,3}(?:,\d{3})+(?:\.\d+)?|\d+\.\d+%?))"
    r"(?![\w%]|[.,]\d|\s+%)"
)
#: A percentage in parentheses right after a number restates it: ``0.250 (25.0%)``.
_BESIDE = re.compile(r"\d\s*\(\s*$")


def _tuple_rows(piece: str) -> Rows | None:
    """A parenthesised tuple as one row, when it has three or more entries or a decimal.

    ``(0, 0.6698, 0.3302)`` and ``(0.6698, 0.3302)`` are vectors a worksheet writes; a
    pair of whole numbers, ``(2, 3)``, is more often a shape or a position and stays prose.
    """
    cells = [numeric_cell(c) for c in piece.strip()[1:-1].split(",")]
    if len(cells) < 2 or any(c is None for c in cells):
        return None
    row = tuple(c for c in cells if c is not None)
    if len(row) < 3 and not any("." in c for c in row):
        return None
    return (row,)


class _Line:
    """One prose line being read: its text with places, and what it makes."""

    def __init__(self, text: Text, number: int, seg: Segment, context: str) -> None:
        self.text = text
        self.number = number
        self.seg = seg
        self.context = context
        self.out: list[Found] = []

    def found(
        self,
        kind: str,
        label: str,
        rows: Rows,
        span: tuple[int, int],
        *,
        from_end: bool = False,
        expression: str | None = None,
        latex: str | None = None,
        chain: str = "",
    ) -> None:
        self.out.append(
            Found(
                kind,
                label,
                self.number,
                rows,
                expression,
                latex,
                self.seg.cell,
                self.context,
                chain,
                places_in(self.text, span[0], span[1], rows, from_end=from_end),
            )
        )


def _line_items(line: Text, number: int, seg: Segment) -> list[Found]:
    """Arithmetic, labelled numbers and bracketed vectors written in a plain-text line."""
    # a bullet ("- ", "• ", "* ") or bold marks go; a minus sign before a number stays
    stripped = line.strip()
    bullet = _BULLET.match(stripped.text)
    text = stripped[bullet.end() if bullet else 0 :].strip()
    if not text.text:
        return []
    s = _Line(text, number, seg, text.text[:200])
    raw = _ESCAPE.sub(" ", text.text)
    for place, (fragment, at) in enumerate(_fragments(raw)):
        _fragment_items(s, fragment, at, place)
    if all(f.label.endswith(LITERAL) for f in s.out):  # no chain read: its numbers, loose
        s.out = []
        _loose_numbers(s)
    taken = {(q.line, q.column) for f in s.out for q in f.places}
    for value, span in rounded_wholes(raw):  # "through rounding, we get the value of 38"
        s.found("number", f"line {number}", ((value,),), span)
        if any((q.line, q.column) in taken for q in s.out[-1].places):
            s.out.pop()  # already read (``≈ 38`` ending a chain)
    return s.out


#: A Markdown escape before an operator or a list of numbers (``0.73 \* \[0, 1]``, which
#: renders as ``0.73 * [0, 1]``): the backslash is not part of the arithmetic; it is read
#: as a space, so every offset stays.
_ESCAPE = re.compile(r"\\(?=\*|\[\s*[-−+]?\.?\d)")


#: ``(2×1.6=3.2)`` inside a link: arithmetic worked out in passing, in parentheses.
_ASIDE = re.compile(r"\((?P<expr>[^()=≈]+?)\s*=\s*(?P<value>[-−]?\d+(?:\.\d+)?)\s*\)")


def _asides(s: _Line, fragment: str, at: int, place: int) -> str:
    """``v₂ = 0.9×4 + (2×1.6=3.2) = 3.6 + 3.2``: the parenthesised ``2×1.6=3.2`` works a
    term out in passing. It is checked on its own (3.2 is 2×1.6), and the chain reads the
    term as written, ``(2×1.6)``, so that ``3.6 + 3.2`` checks term by term. Returns the
    fragment with each aside's ``=3.2`` blanked (same length: every offset stays)."""
    out = fragment
    for k, m in enumerate(_ASIDE.finditer(fragment)):
        if fragment[: m.start()].count("(") != fragment[: m.start()].count(")"):
            continue  # inside other parentheses: a call's argument, not an aside
        expression = plain_arithmetic(m.group("expr"))
        value = numeric_cell(m.group("value"))
        if expression is None or value is None:
            continue
        s.found(
            "arithmetic",
            f"line {s.number} (term)",
            ((value,),),
            (at + m.start("value"), at + m.end("value")),
            expression=expression,
            latex=expression_text(m.group("expr")),
            chain=f"{s.seg.cell}:{s.number}:{place}:aside{k}",
        )
        a, b = m.end("expr"), m.end()
        out = out[:a] + ")" + " " * (b - a - 1) + out[b:]
    return out


def _fragment_items(s: _Line, fragment: str, at: int, place: int) -> None:
    number, seg = s.number, s.seg
    fragment = _asides(s, fragment, at, place)
    label, chain = _plain_chain(fragment)
    chain = _trimmed(chain)
    pieces = [p for p, _ in chain]
    spans = [(at + a, at + a + len(p)) for p, a in chain]
    if len(chain) == 1 and label and numeric_cell(pieces[0].rstrip(".:;,")) is not None:
        value = numeric_cell(pieces[0].rstrip(".:;,")) or ""
        s.found("number", label, ((value,),), spans[0])
        return
    if len(chain) < 2:
        return
    last = pieces[-1]
    rows = matrix_rows(last) if last.startswith("[") else None
    if rows is None and re.match(r"\[\s*\[", last) and re.search(r"\]\s*\]$", last):
        rows = _nested_rows(last)  # "= [[1, 0.37], [0.37, 1]]": a matrix, row by row
    end = numeric_cell(last.rstrip(".:;,"))
    if rows is not None:
        printed = rows
    elif end is not None:
        printed = ((end,),)
    else:
        if not _complex_items(s, pieces, spans, label or f"line {number}", place):
            _stated_constant(s, pieces, spans, label or f"line {number}", place)
        return
    # each number printed on the way (``= 2.3 × 4 = 9.2 ≈ 9``) is a result of the links
    # before it; the links before one printed result are one chain, one printed number
    ends: list[tuple[int, Rows]] = [
        (k, ((cast(str, numeric_cell(p)),),))
        for k, p in enumerate(pieces[1:-1], 1)
        if numeric_cell(p) is not None
    ]
    name = label or f"line {number}"
    for k, written, value, before in chain_links(pieces):  # "= 3 + 1.6": 3 is 2 × 1.5
        found = source_spans(s.text, spans[k][0], spans[k][1], [*before, value])
        if found[-1] is None:
            continue
        for earlier in written:  # the term as first written, then as each link rewrote it
            s.found(
                "arithmetic",
                f"{name} (term)",
                ((value,),),
                found[-1],
                expression=earlier,
                latex=earlier,
                chain=f"{seg.cell}:{number}:{place}:term{k}:{len(before)}",
            )
    # the first link that writes numbers puts the line's inputs in (``dQ = dS × K``, then
    # ``= 0.001765 × 0.1 + …`` below it): a name before it computes nothing
    first = next((k for k, p in enumerate(pieces[:-1]) if plain_arithmetic(p) is not None), None)
    if first is not None:
        _first_literals(s, pieces[first], spans[first][0], name)
    for k, p in [*ends, (len(chain) - 1, printed)]:  # the last is the line's own result
        for j, piece in enumerate(pieces[:k]):
            if any(_worded(q) for q in pieces[j + 1 : k]):
                # "= 41.9 million float32 values = 167 MB": a link in words between them
                # changes what is counted (values to megabytes); no equality to check
                continue
            expression = plain_arithmetic(piece)
            if expression is not None and _whole_list(piece) and len(p) * len(p[0]) == 1:
                expression = None  # "[a², b²] => x + y => 1.26": a list is not its sum
            if expression is not None:
                s.found(
                    "arithmetic",
                    name,
                    p,
                    spans[k],
                    expression=expression,
                    latex=expression_text(piece),
                    chain=f"{seg.cell}:{number}:{place}:{k}",
                )
            _operand_vectors(s, piece, spans[j][0], name)
    if rows is not None:
        s.found("vector", name, rows, spans[-1])
    elif label and not any(plain_arithmetic(p) for p in pieces[:-1]):
        s.found("number", label, printed, spans[-1])


#: A number written in arithmetic, with the minus before it (not part of a name).
_LITERAL = re.compile(r"[-−]?(?<![\w.])\d+(?:\.\d+)?(?![\w.])")


def _first_literals(s: _Line, piece: str, at: int, name: str) -> None:
    """The numbers of three significant digits or more that a line's first link computes
    from (``(0.8 - 0.25) / 0.364``): one may repeat a result printed before it (0.364, the
    deviation worked out above) and is then checked as that result; one that repeats none
    is an input of the line (:data:`symtf.draft.read.items.LITERAL`)."""
    for m in _LITERAL.finditer(piece):
        text, start = m.group(), m.start()
        before = piece[:start].rstrip()
        if text[0] in "-−" and before and before[-1] not in "([,=+*/×·":
            text, start = text[1:], start + 1  # a subtraction, not a negative number
        if len(text.lstrip("-−").replace(".", "").lstrip("0")) >= 3:
            s.found(
                "number", name + LITERAL, ((text.replace("−", "-"),),), (at + start, at + m.end())
            )


def _whole_list(piece: str) -> bool:
    """Whether a piece is one bracketed list as a whole (``[a^2, b^2]``, not ``[1,2] · [3,1]``)."""
    text = piece.strip()
    if not text.startswith("["):
        return False
    depth = 0
    for i, ch in enumerate(text):
        depth += {"[": 1, "]": -1}.get(ch, 0)
        if depth == 0:
            return i == len(text) - 1
    return False


#: A word that is no function of arithmetic: ``million``, ``values``, ``MB``.
_WORD = re.compile(r"(?<![\\A-Za-z])[A-Za-z]{2,}")
_FUNCTION_WORDS = frozenset(
    [
        "sqrt",
        "exp",
        "ln",
        "log",
        "max",
        "min",
        "sum",
        "relu",
        "sin",
        "cos",
        "tan",
        "tanh",
        "softmax",
        "sigmoid",
        "mean",
        "var",
        "std",
    ]
)


def _worded(piece: str) -> bool:
    """Whether a link of a chain is written in words (``41.9 million float32 values``),
    not as a number or as arithmetic on numbers."""
    if numeric_cell(piece) is not None or plain_arithmetic(piece) is not None:
        return False
    return any(w.lower() not in _FUNCTION_WORDS for w in _WORD.findall(piece))


def _complex_items(
    s: _Line, pieces: list[str], spans: list[tuple[int, int]], name: str, place: int
) -> bool:
    """``(1.0+2.0j) × (0.540+0.841j) = -1.142 + 1.921j`` and lists of such numbers: each
    link's parts against the printed result's (:func:`symtf.draft.read.complexes.worked`).

    Returns whether the chain ends in a printed complex number (or a list of them).
    """
    found = complexes.worked(pieces, spans)
    if found is None:
        return False
    for w in found:
        s.found(
            "arithmetic",
            f"{name}{w.where} ({w.part})",
            ((w.printed,),),
            w.span,
            expression=w.expression,
            latex=w.expression,
            chain=f"{s.seg.cell}:{s.number}:{place}:{w.chain}",
        )
    for start, end in complexes.unread_numbers(pieces, spans):
        # "z × e^(i×0.524)": a link not read here; its numbers are still the article's
        value = s.text.text[start:end].replace("−", "-")
        s.found("number", f"line {s.number}", ((value,),), (start, end))
    return True


def _stated_constant(
    s: _Line, pieces: list[str], spans: list[tuple[int, int]], name: str, place: int
) -> None:
    """``γ = 0.729 = 0.9³``: a constant stated, then the expression it is."""
    first = next((k for k, p in enumerate(pieces) if numeric_cell(p) is not None), None)
    if first is None or first == len(pieces) - 1:
        return
    printed = ((numeric_cell(pieces[first]) or "",),)
    for k in range(first + 1, len(pieces)):
        expression = plain_arithmetic(pieces[k])
        if expression is not None:
            s.found(
                "arithmetic",
                name,
                printed,
                spans[first],
                expression=expression,
                latex=expression_text(pieces[k]),
                chain=f"{s.seg.cell}:{s.number}:{place}:{first}",
            )


def _operand_vectors(s: _Line, piece: str, at: int, name: str) -> None:
    """Vectors and weights written inside a line's arithmetic are printed too."""
    w = weights(piece)
    if w is not None:
        s.found("vector", f"{name} (weights)", (w,), (at, at + len(piece)))
    for m in re.finditer(r"\[[^\[\]]*\]", piece):
        rows = matrix_rows(m.group(0))
        if rows is not None and len(rows[0]) >= 2:
            s.found("vector", f"{name} (operand)", rows, (at + m.start(), at + m.end()))


def _loose_numbers(s: _Line) -> None:
    """A line with no labelled value or chain: its vectors, tuples and decimals."""
    text = s.text.text
    number = s.number
    spans = [
        m.span()
        for m in _VECTOR_IN_TEXT.finditer(text)
        if (r := matrix_rows(m.group(0))) is not None and len(r[0]) >= 2
    ]
    tuples = [m for m in _TUPLE_IN_TEXT.finditer(text) if _tuple_rows(m.group(0)) is not None]
    spans += [m.span() for m in tuples]
    for m in _PROSE_DECIMAL.finditer(text):
        if any(a <= m.start() < b for a, b in spans):
            continue  # an entry of a vector on the line (``-0.4`` is not the number 0.4)
        if m.group(1).endswith("%") and _BESIDE.search(text[: m.start()]):
            continue  # "0.250 (25.0%)": the same number on another scale
        s.found("number", f"line {number}", ((m.group(1).replace("−", "-"),),), m.span(1))
    for m in tuples:  # a tuple written with parentheses: ``h = (0.6698, 0.3302)``
        rows = _tuple_rows(m.group(0))
        before = text[: m.start()].rstrip()
        lm = re.search(r"([A-Za-z_]\w*)\s*=$", before)
        s.found("vector", lm.group(1) if lm else f"line {number}", rows or (), m.span())
    for m in _VECTOR_IN_TEXT.finditer(text):
        rows = matrix_rows(m.group(0))
        if rows is not None and len(rows[0]) >= 2:
            before = text[: m.start()].rstrip()
            lm = re.search(r"([A-Za-z_][\w]*)\s*[=:]?$", before.rstrip("=: ").strip())
            label = lm.group(1) if lm and before.endswith(("=", ":")) else None
            s.found("vector", label or f"line {number}", rows, m.span())


def _fragments(text: str) -> list[tuple[str, int]]:
    """Split prose at top-level commas and semicolons followed by a space, and at `` | ``."""
    parts, depth, start = [], 0, 0
    for i, ch in enumerate(text):
        if ch in "([":
            depth += 1
        elif ch in ")]":
            depth -= 1
        elif depth == 0 and ch in ",;" and text[i + 1 : i + 2] == " ":
            parts.append((start, i))
            start = i + 1
        elif depth == 0 and ch == "|" and text[i - 1 : i] == " " and text[i + 1 : i + 2] == " ":
            parts.append((start, i))  # "σ(1) = 0.731 | e¹ = 2.718": two statements
            start = i + 1
    parts.append((start, len(text)))
    out = []
    for a, b in parts:
        p = text[a:b]
        if p.strip():
            out.append((p.strip(), a + len(p) - len(p.lstrip())))
    return out


_LEADING_NUMBER = re.compile(r"^([-−]?\d[\d,]*(?:\.\d+)?%?)\s+[A-Za-z(]")
_ARITHMETIC_TAIL = re.compile(
    r"(?<=\s)(?:[\d(√|]|(?:sqrt|exp)\()[\d\s.,+\-−×·*/^()√|]*$"  # √4, or sqrt(4) spelled out
)
_PROSE_WORD = re.compile(r"(?:^|\s)[A-Za-z]{2,}:?\s+$")


def _trimmed(chain: list[tuple[str, int]]) -> list[tuple[str, int]]:
    """A chain written inside a sentence, its words left out: ``The layer has 80 × 80``
    begins with words, ``6,400 weights.`` ends with them; the arithmetic and the number
    are what is read."""
    if len(chain) < 2:
        return chain
    out = list(chain)
    first, a = out[0]
    if plain_arithmetic(first) is None and numeric_cell(first) is None:
        tail = _ARITHMETIC_TAIL.search(first)
        # only after a word of prose ("has 80 × 80"), never after an operator or a name
        # it would cut off ("q·k / √64" is not √64)
        words = _PROSE_WORD.search(first[: tail.start()]) if tail else None
        if tail and words and plain_arithmetic(tail.group().strip()) is not None:
            text = tail.group().strip()
            out[0] = (text, a + first.index(text, tail.start()))
    last, b = out[-1]
    if numeric_cell(last.rstrip(".:;,")) is None and not last.startswith("["):
        m = _LEADING_NUMBER.match(last)
        if m and numeric_cell(m.group(1)) is not None:
            out[-1] = (m.group(1), b)
    return out


_LABELLED = re.compile(r"^([^:=≈\[\]()]{1,60}):\s+(.*)$")
_RELATION = re.compile(r"\s*(?:=>|⇒|≈|=)\s*")  # "1.26 / 3 => 0.42": gives
_CHECK_MARK = re.compile(r"\s*[✅✓✔☑]+\s*$")
_TRAILING_NOTE = re.compile(r"\s*\(.*?\)\s*$")


def _plain_chain(fragment: str) -> tuple[str | None, list[tuple[str, int]]]:
    """``label: a = b ≈ c`` as the label and the pieces of the chain, each with its offset."""
    label = None
    base = 0
    m = _LABELLED.match(fragment)
    if m:
        label, base = m.group(1).strip(), m.start(2)
        fragment = m.group(2)
    pieces: list[tuple[str, int]] = []
    at = 0
    for sep in _RELATION.finditer(fragment):
        pieces.append((fragment[at : sep.start()], base + at))
        at = sep.end()
    pieces.append((fragment[at:], base + at))
    pieces = [(p.strip(), a + len(p) - len(p.lstrip())) for p, a in pieces]
    if pieces:  # a check mark after the result affirms it: ``≈ 0.000 ✅``
        p, a = pieces[-1]
        pieces[-1] = (_CHECK_MARK.sub("", p), a)
    if pieces:
        p, a = pieces[-1]
        if not p.startswith(("(", "[")):
            pieces[-1] = (_TRAILING_NOTE.sub("", p), a)
    if (
        pieces
        and label is None
        and re.fullmatch(r"[A-Za-zα-ωΑ-Ω][\w ]{0,40}", pieces[0][0])
        and len(pieces) > 1
    ):
        words = pieces[0][0].split()
        label = pieces[0][0]
        if words and not plain_arithmetic(pieces[0][0]):
            pieces = pieces[1:]
        if len(words) > 1:  # "With d_k = 3": prose before a name; keep the name
            label = words[-1]
    return label, [(p, a) for p, a in pieces if p]


_PLAIN_OPERATORS = re.compile(
    r"[-+*/×·÷^√²³°]|\b(?:sqrt|exp|ln|log|max|min|sum|relu|sin|cos|tanh)\(", re.I
)


def plain_arithmetic(piece: str) -> str | None:
    """The piece as an expression when it is arithmetic on literals, else None."""
    written = expression_text(piece)
    if numeric_cell(piece) is not None or not re.search(r"\d", written):
        return None
    if not _PLAIN_OPERATORS.search(written):
        return None
    if matrix_rows(piece) is not None:
        return None
    try:
        expr = latexmath.parse(written, where="arithmetic")
    except ExpressionError:
        return None
    return None if expr.references else expr.text


# ----------------------------------------------------------------------------- code outputs

_REPR = re.compile(
    r"(?:(?P<name>[A-Za-z_]\w*)\s*[:=]\s*)?(?P<kind>array|tensor|tf\.Tensor)?\(?\s*(?P<body>\[[\[\]\d\s.,eE+\-−]*\])",
    re.S,
)


#: A number printed by code outside an array: ``tensor(0.4581)``, ``loss 2.30``, ``1.23e-02``.
_PRINTED_NUMBER = re.compile(r"(?<![\w.])(-?(?:\d+\.\d+(?:[eE][-+]?\d+)?|\d+[eE][-+]\d+))(?![\w.])")


def printed_numbers(seg: Segment) -> list[Found]:
    """Everything a code cell printed that reads as a number: its arrays (as
    :func:`output_items` reads them) and, outside them, each decimal or scientific number
    (a ``%.2e`` table printed by a loop, ``tensor(0.4581)``). Whole numbers outside arrays
    (shapes, counts, indices) are not printed values."""
    out = output_items(seg)
    text = seg.text.text
    inside = [
        (m.start("body"), m.end("body"))
        for m in _REPR.finditer(text)
        if _nested_rows(m.group("body"))
    ]
    for found, span in printed_table_items(seg):
        out.append(found)
        inside.append(span)
    for m in _PRINTED_NUMBER.finditer(text):
        if any(a <= m.start() < b for a, b in inside):
            continue
        line = seg.line_at(m.start())
        out.append(
            Found(
                "number",
                seg.code_name or f"line {line}",
                line,
                ((m.group(1),),),
                cell=seg.cell,
                context=text[text.rfind("\n", 0, m.start()) + 1 :].split("\n", 1)[0].strip()[:200],
                places=(seg.text.place(*m.span(1)),),
            )
        )
    return out


def comment_numbers(seg: Segment) -> list[Found]:
    """The values written in code comments (``# = [0.35, -1.2]``, ``# loss ≈ 0.46``, a
    tensor pasted over several comment lines), read as prose.

    A printed array pasted over several comment lines (``# tensor([[ 2.,  4.,  4.],  #
    query 1`` / ``#         [ 4., 16., 12.]])``) is the one matrix it prints, as in the
    output it copies, whatever is written after its rows; its rows are not read again
    one by one."""
    found = text_items(seg)
    pasted = _pasted_arrays(seg)
    if not pasted:
        return found
    lines = {q.line for f in pasted for q in f.places}
    kept = [f for f in found if not f.places or not {q.line for q in f.places} <= lines]
    return [*kept, *pasted]


#: What a comment writes after a row of an array pasted into it: ``],  # query 1``.
_AFTER_ROW = re.compile(r"(?<=[\],)])[ \t]+#[^\n]*")


def _pasted_arrays(seg: Segment) -> list[Found]:
    """The arrays of two rows or more a comment pastes as printed (``tensor([[…], […]])``),
    read with what follows each row blanked out (offsets, and so places, stay)."""
    text = seg.text.text
    blank = _AFTER_ROW.sub(lambda m: " " * len(m.group()), text)
    if "\n" not in text.strip():
        return []
    shown = Segment(Text(blank, seg.text.frame, seg.text.runs), seg.line, seg.math, seg.cell)
    return [
        f
        for f in output_items(shown)
        if len(f.rows) > 1
        and len(f.places) == sum(len(r) for r in f.rows)
        and re.search(r"(?:array|tensor|Tensor)\(\s*\[\s*\[", f.context)
    ]


def output_items(seg: Segment) -> list[Found]:
    """Arrays a code cell printed: ``array([[…]])``, ``tensor([[…]])``, ``tf.Tensor(…)``, or a list."""
    out: list[Found] = []
    text = seg.text.text
    for m in _REPR.finditer(text):
        rows = _nested_rows(m.group("body"))
        if rows is None:
            continue
        line = seg.line_at(m.start())
        label = m.group("name") or seg.code_name or f"line {line}"
        kind = "vector" if len(rows) == 1 else "matrix"
        first = text[m.start() :].splitlines()[0].strip()[:200]
        out.append(
            Found(
                kind,
                label,
                line,
                rows,
                cell=seg.cell,
                context=first,
                places=places_in(seg.text, m.start("body"), m.end("body"), rows),
            )
        )
    return out


def _nested_rows(body: str) -> Rows | None:
    if "..." in body or "…" in body:
        return None
    inner = body.strip()[1:-1].strip()
    rows = re.findall(r"\[([^\[\]]*)\]", inner) if inner.startswith("[") else [inner]
    out = []
    for r in rows:
        cells = [c.strip() for c in r.replace("\n", " ").split(",") if c.strip()]
        cells = [numeric_cell(c) or "" for c in cells]
        if not cells or not all(cells):
            return None
        out.append(tuple(c.rstrip(".") if c.endswith(".") else c for c in cells))
    return tuple(out) if out and len({len(r) for r in out}) == 1 else None
