"""What code printed: the arrays of a cell's output (``array([[…]])``, ``tensor([…])``,
``tf.Tensor(…)``, a list), the numbers it printed outside them, and the arrays a comment
pastes as printed. Every entry keeps its place.
"""

from __future__ import annotations

import re

from symtf.draft.read.items import Found, Rows, Segment, numeric_cell, places_in
from symtf.draft.read.source import Text
from symtf.draft.read.tables import printed_table_items

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
        if nested_rows(m.group("body"))
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


#: What a comment writes after a row of an array pasted into it: ``],  # query 1``.
_AFTER_ROW = re.compile(r"(?<=[\],)])[ \t]+#[^\n]*")


def pasted_arrays(seg: Segment) -> list[Found]:
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
        rows = nested_rows(m.group("body"))
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


def nested_rows(body: str) -> Rows | None:
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
