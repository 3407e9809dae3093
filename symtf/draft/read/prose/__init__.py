"""The printed values of plain text: prose lines, tables, ASCII matrices, and code outputs.

A prose segment is read line by line (an equation continued under its ``=`` on
the lines below is one line): labelled numbers (``loss: 0.4581``), arithmetic
chains (``0.1 + 0.2 = 0.3``), bracketed vectors, tuples, and decimals in
sentences. Runs of ``|``-lines are Markdown tables or ASCII-art matrices. A code
cell's output is read for the arrays it printed (``array([[…]])``,
``tensor([…])``). Every entry keeps its place.

This module walks a segment's lines and hands each run to the module that reads its
form: :mod:`.multiline` (a value written over several lines), :mod:`.stacked` (matrices
drawn row under row, side by side, with the arithmetic between them), :mod:`.tables` (Markdown
tables), :mod:`.lines` (one line of prose) and :mod:`.outputs` (what code printed).
"""

from __future__ import annotations

from symtf.draft.read.items import Found, Segment, places_in
from symtf.draft.read.prose.lines import line_items
from symtf.draft.read.prose.multiline import (
    after_relation,
    ascii_blocks,
    ascii_matrices,
    column_vector,
    continues,
    open_list,
    uncommented,
)
from symtf.draft.read.prose.outputs import output_items, pasted_arrays
from symtf.draft.read.prose.stacked import side_by_side
from symtf.draft.read.prose.tables import markdown_table, table_items
from symtf.draft.read.source import Text
from symtf.draft.read.tables import labelled_rows

__all__ = ["comment_numbers", "text_items"]


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
        if ascii_blocks(lines[k]):
            start = k
            while k < len(lines) and ascii_blocks(lines[k]):
                k += 1
            header = lines[start - 1] if start > 0 else ""
            out.extend(ascii_matrices(seg, spans[start:k], header, start))
            continue
        if lines[k].strip().startswith("|"):
            start = k
            while k < len(lines) and lines[k].strip().startswith("|"):
                k += 1
            table = markdown_table(lines[start:k])
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
        drawn = side_by_side(seg, spans, lines, k)
        if drawn is not None:  # matrices drawn row under row, side by side
            found_drawn, k = drawn
            out.extend(found_drawn)
            continue
        labelled = labelled_rows(seg, spans, lines, k)
        if labelled is not None:
            found, k = labelled
            out.append(found)
            continue
        column = column_vector(seg, spans, lines, k)
        if column is not None:
            found, k = column
            out.append(found)
            continue
        listed = open_list(lines, k)
        if listed is not None:  # a list written over several lines: read as one line
            parts = [
                seg.text[a : a + len(uncommented(ln).rstrip())].strip()
                for (a, _b), ln in zip(spans[k:listed], lines[k:listed], strict=True)
                if uncommented(ln).strip()
            ]
            joined = Text.join(" ", parts, seg.text.frame)
            out.extend(line_items(joined, seg.line + listed - 1, seg))
            k = listed
            continue
        j = k + 1
        while j < len(lines):
            if continues(lines, k, j):
                j += 1
            elif (after := after_relation(lines, j - 1)) is not None:
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
            out.extend(line_items(joined, seg.line + j - 1, seg))
        else:
            a, b = spans[k]
            out.extend(line_items(seg.text[a:b], seg.line + k, seg))
        k = j
    return out


def comment_numbers(seg: Segment) -> list[Found]:
    """The values written in code comments (``# = [0.35, -1.2]``, ``# loss ≈ 0.46``, a
    tensor pasted over several comment lines), read as prose.

    A printed array pasted over several comment lines (``# tensor([[ 2.,  4.,  4.],  #
    query 1`` / ``#         [ 4., 16., 12.]])``) is the one matrix it prints, as in the
    output it copies, whatever is written after its rows; its rows are not read again
    one by one."""
    found = text_items(seg)
    pasted = pasted_arrays(seg)
    if not pasted:
        return found
    lines = {q.line for f in pasted for q in f.places}
    kept = [f for f in found if not f.places or not {q.line for q in f.places} <= lines]
    return [*kept, *pasted]
