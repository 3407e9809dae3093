"""Matrices written as rows of text without brackets: the tables a program prints with ``|``
between their cells, and labelled rows in plain text (``T2 2.0 1.5 2.5``).

A notebook often prints a matrix through a formatting helper of its own, one labelled
row a line::

    (query→) \\ (doc↓) | the   | cat
    ------------------+-------+------
    cat               | 0.161 | 0.240
    on                | 0.161 | 0.146

Both the reader (every number an output shows) and the code's translation (what one
print printed) read such a table as one matrix, its rows in order.
"""

from __future__ import annotations

import re

from symtf.draft.read.items import Found, Segment, numeric_cell, places_in

#: Most rows a matrix written one labelled row a line may take.
MAX_ROWS = 64

__all__ = ["PRINTED_ROW", "labelled_rows", "printed_table_items", "printed_tables"]

#: A row of a table a program printed: a label (a word or a whole number), then cells of
#: decimals, all separated by ``|`` (``cat | 0.161 | 0.240``, ``   2  |  0.170 |  0.168``).
PRINTED_ROW = re.compile(r"^\s*([^|\d\s][^|]*?|\d+)\s*((?:\|\s*[-−]?\d*\.\d+\s*)+)\|?\s*$")


#: The rule under a table's header: ``------+------`` or ``=====``.
_RULE = re.compile(r"^\s*[-=]{3,}[-=+|:\s]*$")


def printed_tables(
    text: str,
) -> list[tuple[int, int, tuple[tuple[str, ...], ...], list[int]]]:
    """Tables printed with ``|`` between their cells: ``(start, end, rows, row starts)``.

    Two lines or more in a row (or one under a rule, ``----+----``), each a row label
    and the same number of decimal cells;
    ``start`` is the first cell's offset, ``end`` the last row's end.
    """
    out: list[tuple[int, int, tuple[tuple[str, ...], ...], list[int]]] = []
    spans = []
    at = 0
    for line in text.split("\n"):
        spans.append((at, at + len(line)))
        at += len(line) + 1
    k = 0
    while k < len(spans):
        rows: list[tuple[str, ...]] = []
        starts: list[int] = []
        first = -1
        j = k
        while j < len(spans):
            m = PRINTED_ROW.match(text[spans[j][0] : spans[j][1]])
            if m is None:
                break
            cells = tuple(c.strip().replace("−", "-") for c in m.group(2).split("|") if c.strip())
            if rows and len(cells) != len(rows[0]):
                break
            if first < 0:
                first = spans[j][0] + m.start(2)
            rows.append(cells)
            starts.append(spans[j][0])
            j += 1
        ruled = k > 0 and _RULE.match(text[spans[k - 1][0] : spans[k - 1][1]]) is not None
        if len(rows) >= 2 or (rows and ruled):  # one row under a rule is a table too
            out.append((first, spans[j - 1][1], tuple(rows), starts))
            k = j
        else:
            k = max(j, k + 1)
    return out


def printed_table_items(seg: Segment) -> list[tuple[Found, tuple[int, int]]]:
    """Tables a program printed with ``|`` between their cells (``cat | 0.161 | 0.240``,
    see :func:`symtf.draft.read.tables.printed_tables`), each a matrix with its span."""
    out: list[tuple[Found, tuple[int, int]]] = []
    text = seg.text.text
    for start, end, rows, _starts in printed_tables(text):
        line = seg.line_at(start)
        found = Found(
            "matrix",
            seg.code_name or f"line {line}",
            line,
            rows,
            cell=seg.cell,
            context=text[text.rfind("\n", 0, start) + 1 : end].split("\n", 1)[0].strip()[:200],
            places=places_in(seg.text, start, end, rows),
        )
        out.append((found, (start, end)))
    return out


#: A row of a matrix printed with its label and no brackets: ``T2 2.0 1.5 2.5``.
_LABELLED_ROW = re.compile(r"^\s*([A-Za-z][\w'’]{0,15}):?((?:[ \t]+[-−]?(?:\d+\.\d+|\d+))+)[ \t]*$")


def labelled_rows(
    seg: Segment, spans: list[tuple[int, int]], lines: list[str], k: int
) -> tuple[Found, int] | None:
    """A matrix printed one labelled row per line, from line ``k``: the found value and the
    line after it.

    ::

        T1 1.0 2.0 3.0
        T2 2.0 1.5 2.5

    Two lines or more, each a short label (a word, ``T1``, ``cat``) and the same number
    (two or more) of numbers separated by spaces, at least one of them with decimals.
    """
    rows: list[tuple[str, ...]] = []
    j = k
    while j < len(lines) and j - k < MAX_ROWS:
        m = _LABELLED_ROW.match(lines[j])
        if m is None:
            break
        cells = tuple(numeric_cell(c) or "" for c in m.group(2).split())
        if not all(cells) or (rows and len(cells) != len(rows[0])) or len(cells) < 2:
            break
        rows.append(cells)
        j += 1
    if len(rows) < 2 or not any("." in c for r in rows for c in r):
        return None
    a, b = spans[k][0], spans[j - 1][1]
    first = _LABELLED_ROW.match(lines[k])
    start = a + (first.start(2) if first else 0)
    found = Found(
        "matrix",
        f"line {seg.line + k}",
        seg.line + k,
        tuple(rows),
        cell=seg.cell,
        context=lines[k].strip()[:200],
        places=places_in(seg.text, start, b, tuple(rows)),
    )
    return found, j
