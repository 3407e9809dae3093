"""Values written over several lines of prose: a column vector one entry a line, an
equation continued under its ``=``, a list left open at a line's end, the value after a
relation that ends a line, and ASCII-art matrices drawn with box characters.
"""

from __future__ import annotations

import re

from symtf.draft.read.items import Found, Rows, Segment, numeric_cell, places_in
from symtf.place import Place

_ONE_ENTRY = re.compile(
    r"^\s*(?:([A-Za-z_]\w*)\s*=\s*)?\[\s*([-−]?(?:\d+\.?\d*|\.\d+)(?:[eE][-+]?\d+)?)\s*\]\s*,?\s*$"
)
_OPENS = re.compile(r"^\s*(?:([A-Za-z_][\w^()]*)\s*[=:]\s*)?(?=\[)")
_BLOCK_BODY = re.compile(r"^[\[\]\d\s.,eE+\-−]*$")
#: Most lines a bracketed value written over several lines may take.
MAX_BLOCK_LINES = 64


def column_vector(
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


def continues(lines: list[str], first: int, at: int) -> bool:
    """Whether ``lines[at]`` continues the equation begun at ``lines[first]``.

    Hand-worked arithmetic in a code block is often aligned under its ``=``::

        mean = (0.1 + 0.3 + (-0.2) + 0.8) / 4
             = 1.0 / 4
             = 0.25

    A continuation starts with ``=`` or ``≈`` and the equation it continues has one,
    begins with a labelled expression (``Pair 0: (1.0+2.0j) × (0.540+0.841j)``, then
    ``= -1.142 + 1.921j`` below it), or is a line of arithmetic on numbers alone.
    """
    return bool(_CONTINUATION.match(lines[at])) and (
        any(("=" in ln or "≈" in ln) for ln in lines[first:at])
        or bool(_LABELLED_EXPRESSION.match(lines[first]))
        or bool(_TERMS.match(lines[first]))
    )


_OPERAND = r"\(?[-−]?\d[\d,]*(?:\.\d+)?\)?(?:\s*\([^()\d]*[A-Za-z][^()\d]*\))?"
#: A line that is arithmetic on numbers and nothing else, each term perhaps named in
#: words in parentheses: ``3,147,776 + 786,432 + 2,048 (for normalization)``, with its
#: ``= 4,198,400`` on the line below.
_TERMS = re.compile(rf"^\s*{_OPERAND}(?:\s*[-+−×*/·]\s*{_OPERAND})+\s*$")


#: ``Position 1, Pair 0: (1.0+2.0j) × (0.540+0.841j)``: a label, a colon, an expression
#: ending in a number or a bracket.
_LABELLED_EXPRESSION = re.compile(r"^[^:=≈]{1,60}:\s*\S[^=≈]*[\d)\]]\s*$")


#: A comment after a list's row in a code block: ``[1.0+0j, 1.0+0j],   # Position 0``.
_ROW_COMMENT = re.compile(r"(?<=[\[\],(])\s+#\s.*$")


def uncommented(line: str) -> str:
    """A line without the comment written after a list's row."""
    return _ROW_COMMENT.sub("", line)


def open_list(lines: list[str], first: int) -> int | None:
    """The line after a list begun on ``lines[first]`` and closed on a later line, with
    its relations between (``angles = [`` … ``] = [`` … ``]``), or None.

    Only a line that leaves a bracket open starts one; the list ends on the first line
    that closes every bracket, within :data:`MAX_LIST_LINES` lines. Relations stand only
    between lists: a list of worked lines (``[`` then ``(0.1 - 0.25) / 0.364 = -0.412,``)
    or two matrices side by side (``[[5, 10],    / √2 = [[3.5, 7.1],``) is no such list.
    """
    depth = 0
    for at in range(first, min(first + MAX_LIST_LINES, len(lines))):
        for ch in uncommented(lines[at]):
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


def after_relation(lines: list[str], last: int) -> int | None:
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


def ascii_blocks(line: str) -> list[re.Match[str]]:
    """The ``| 1 0 1 |`` blocks of a line of an ASCII-art matrix (two or more numbers each)."""
    blocks = list(_ASCII_BLOCK.finditer(line))
    return [b for b in blocks if len(b.group(1).split()) >= 2] if blocks else []


def ascii_matrices(
    seg: Segment, spans: list[tuple[int, int]], header: str, offset: int
) -> list[Found]:
    """Matrices drawn side by side with ``|`` rules, labelled by ``X =`` before or above them."""
    block = [seg.text.text[a:b] for a, b in spans]
    per_line = [ascii_blocks(ln) for ln in block]
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
