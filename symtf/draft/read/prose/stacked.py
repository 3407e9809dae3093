"""Matrices written one row per line, side by side, with the arithmetic between them.

Plain text has no matrix notation, so a worked example draws a sum of two 2×2 matrices
row under row, each matrix's rows in one column::

    x = [0.01, 0.02] + [0.70, -0.70]
        [0.03, 0.04]   [-0.70, 0.70]

      = [0.71, -0.68]
        [-0.67, 0.74]

The first line writes the operators between the matrices (and the name); each line
under it writes the next row of every matrix, each list starting where the one above
it starts. The result stands after ``=``, on the first line or on a line of its own
with its rows under it. The line is read as the displayed arithmetic it is, each entry
at its own place: the sum of the matrices (``+``, ``-``, or the element-wise product
``⊙``), against the printed result. The matrices it adds are printed too (their role
is ``operand``). A matrix product is never guessed from the layout: ``×`` or ``·``
between two drawn matrices is not read here.
"""

from __future__ import annotations

import itertools
import re

from symtf.draft.read.items import Found, Rows, Segment, matrix_rows, places_in
from symtf.place import Place

__all__ = ["side_by_side"]

#: A list of numbers in brackets, as drawn in one row.
_LIST = re.compile(r"\[[^\[\]]*\]")
#: What may stand between two drawn matrices on the first line.
_BETWEEN = re.compile(r"^\s*(\+|-|−|⊙|∘|=)\s*$")
#: What may stand before the first matrix: a name and its ``=``, or the ``=`` alone.
_LEAD = re.compile(r"^\s*(?:(?P<name>[A-Za-z_][\w.\[\]]*)\s*=\s*|=\s*)?$")
_OPERATORS = {"+": "+", "-": "-", "−": "-", "⊙": "∘", "∘": "∘"}
#: How far (in characters) a row's list may start from where the list above it starts.
_ALIGN = 2
#: Blank lines allowed between the last operand row and a result written below.
_GAP = 1


def _lists(line: str) -> list[tuple[int, int, Rows]] | None:
    """The bracketed lists of numbers of a line, with their spans (None if one is not
    a list of numbers)."""
    out: list[tuple[int, int, Rows]] = []
    for m in _LIST.finditer(line):
        rows = matrix_rows(m.group())
        if rows is None or len(rows) != 1 or len(rows[0]) < 2:
            return None
        out.append((m.start(), m.end(), rows))
    return out


def _rows_only(line: str, starts: list[int]) -> list[tuple[int, int, Rows]] | None:
    """A line that only draws the next row of each matrix, each list starting under the
    one above it."""
    lists = _lists(line)
    if lists is None or len(lists) != len(starts):
        return None
    rest = _LIST.sub("", line)
    if rest.strip():
        return None
    if any(abs(a - s) > _ALIGN for (a, _, _), s in zip(lists, starts, strict=True)):
        return None
    return lists


def side_by_side(
    seg: Segment, spans: list[tuple[int, int]], lines: list[str], k: int
) -> tuple[list[Found], int] | None:
    """The displayed arithmetic of matrices drawn side by side from line ``k`` (see the
    module docstring), and the line after it; None if line ``k`` does not start one."""
    first = _lists(lines[k])
    if not first or len(first) < 2:
        return None
    lead = _LEAD.match(lines[k][: first[0][0]])
    if lead is None:
        return None
    ops = []
    for (_, end, _), (start, _, _) in itertools.pairwise(first):
        m = _BETWEEN.match(lines[k][end:start])
        if m is None:
            return None
        ops.append(m.group(1))
    if lines[k][first[-1][1] :].strip().rstrip(".,;"):
        return None
    if ops.count("=") > 1 or (ops.count("=") == 1 and ops[-1] != "="):
        return None  # one result, written last
    starts = [a for a, _, _ in first]
    drawn: list[list[tuple[int, int, int, Rows]]] = [
        [(k, a, b, r)] for a, b, r in first
    ]  # each matrix's rows: (line, start, end, row)
    j = k + 1
    while j < len(lines) and (row := _rows_only(lines[j], starts)) is not None:
        for matrix, (a, b, r) in zip(drawn, row, strict=True):
            matrix.append((j, a, b, r))
        j += 1
    if j == k + 1:
        return None  # one row: a line of vectors, read as such
    height = j - k
    result: list[tuple[int, int, int, Rows]] | None = None
    if "=" in ops:
        result = drawn.pop()
        ops.pop()
    else:
        result, j = _result_below(lines, j, height)
    if result is None or not ops or any(op == "=" for op in ops):
        return None
    width = {len(r[0]) for matrix in [*drawn, result] for _, _, _, r in matrix}
    if len(width) != 1:
        return None
    label = lead.group("name") or f"line {seg.line + k}"
    out = [
        Found(
            "matrix",
            f"{label} (operand)",
            seg.line + k,
            _rows(matrix),
            cell=seg.cell,
            context=lines[k].strip()[:200],
            places=_places(seg, spans, matrix),
        )
        for matrix in drawn
    ]
    terms = [_written(matrix) for matrix in drawn]
    expression = terms[0] + "".join(
        f" {_OPERATORS[op]} {t}" for op, t in zip(ops, terms[1:], strict=True)
    )
    out.append(
        Found(
            "arithmetic",
            label,
            seg.line + k,
            _rows(result),
            expression=expression,
            latex=expression,
            cell=seg.cell,
            context=lines[k].strip()[:200],
            chain=f"{seg.cell}:{seg.line + k}:drawn",
            places=_places(seg, spans, result),
        )
    )
    return out, j


def _result_below(
    lines: list[str], j: int, height: int
) -> tuple[list[tuple[int, int, int, Rows]] | None, int]:
    """``= [..]`` on a line of its own (after at most one blank line) and the rest of its
    rows under it: the drawn result, and the line after it."""
    at = j
    while at < len(lines) and not lines[at].strip() and at - j < _GAP:
        at += 1
    if at >= len(lines):
        return None, j
    first = _lists(lines[at])
    if not first or len(first) != 1 or not re.fullmatch(r"\s*=\s*", lines[at][: first[0][0]]):
        return None, j
    if lines[at][first[0][1] :].strip().rstrip(".,;"):
        return None, j
    result = [(at, *first[0])]
    for n in range(at + 1, at + height):
        row = _rows_only(lines[n], [first[0][0]]) if n < len(lines) else None
        if row is None:
            return None, j
        result.append((n, *row[0]))
    return result, at + height


def _rows(matrix: list[tuple[int, int, int, Rows]]) -> Rows:
    return tuple(r[0] for _, _, _, r in matrix)


def _written(matrix: list[tuple[int, int, int, Rows]]) -> str:
    rows = ", ".join("[" + ", ".join(c.replace("−", "-") for c in r[0]) + "]" for *_, r in matrix)
    return f"[{rows}]"


def _places(
    seg: Segment, spans: list[tuple[int, int]], matrix: list[tuple[int, int, int, Rows]]
) -> tuple[Place, ...]:
    out: list[Place] = []
    for line, a, b, r in matrix:
        at = spans[line][0]
        out.extend(places_in(seg.text, at + a, at + b, r))
    return tuple(out)
