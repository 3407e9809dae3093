r"""Rows worked one per line as a weight times a row of a known tensor.

An article that weights value vectors by attention writes them out a line each::

    1: 0.0 * [1, 2, 3] = [0.0, 0.0, 0.0]
    2: 0.5 * [2, 8, 0] = [1.0, 4.0, 0.0]
    3: 0.5 * [2, 6, 3] = [1.0, 3.0, 1.5]

Each bracketed vector is a row of one tensor it worked out before, in order (the search
placed the operands: rows 0, 1, 2 of ``V``), and the weights, read down the lines, are
one row it printed before, entry for entry in order (``softmax([2, 4, 4]) = [0.0, 0.5,
0.5]``, a row of a step ``S``). Read so, the lines are the step ``S[r]ᵀ * V``: row ``k``
is row ``k`` of ``V`` times entry ``k`` of row ``r`` of ``S``. A weight alone is too
short to tell one printed entry from another (``0.5``); the whole row, in order, beside
the rows of ``V`` in order, is what the lines say they do.

The results are mapped to that step, and each line's weight stands for its entry of
``S`` (:attr:`~symtf.draft.infer.state.SearchState.sources`): the check then reads each
line as the quantity the article computes, so a weight printed rounded carries its
rounding into the line's result (computed from the printed values, as the replay shows),
and a later line that writes those rows again restates the step.
"""

from __future__ import annotations

import re
from fractions import Fraction

from symtf.draft.article import Display, Printing
from symtf.draft.infer.state import SearchState
from symtf.draft.infer.target import Outcome, Placement, Target
from symtf.draft.templates import Ref, call
from symtf.errors import SpecError
from symtf.numbers import parse_printed, rounding_interval

__all__ = ["restated_row", "weighted_rows"]

#: ``0.5 * [2, 8, 0]``, ``0.5 × [2, 8, 0]``, ``0.5 \cdot [2, 8, 0]``: one weight, one row.
_WEIGHT_TIMES_ROW = re.compile(
    r"^\s*(?P<w>-?\d+(?:\.\d+)?)\s*(?:\*|×|·|\\times|\\cdot)\s*\\?\[(?P<row>[^\[\]]*)\\?\]\s*$"
)


def _entries(text: str) -> tuple[str, ...]:
    return tuple(x.strip().replace("−", "-") for x in text.replace("\\", "").split(","))


def _display_of(state: SearchState, member: Printing) -> Display | None:
    """The displayed line whose printed result is this row."""
    found = [
        d
        for d in state.article.displays
        if d.cell == member.cell and d.line == member.line and d.rows == member.rows
    ]
    return found[0] if len(found) == 1 else None


def _operand_row(state: SearchState, d: Display, row: tuple[str, ...]) -> tuple[int, int] | None:
    """The known tensor and row the line's bracketed operand was placed at."""
    for o in state.outcomes.values():
        q = o.printing
        if q.role != "operand" or q.parts or q.cell != d.cell or q.lines[:1] != (d.line,):
            continue
        if q.rows != (row,):
            continue
        pl = o.placement
        if o.status not in ("mapped", "covered") or pl is None or pl.row is None:
            return None
        return pl.known, pl.row
    return None


def _weights_row(
    state: SearchState, run: Printing, weights: tuple[str, ...]
) -> tuple[int, int, Printing] | None:
    """The step row the weights spell: the last printing before the lines with a row whose
    entries, as printed, are the weights in order, when the search placed it at a step
    (that row of it, or the whole step, the weights being one of its rows)."""
    before = [
        o
        for o in state.outcomes.values()
        if o.printing.lines and o.printing.line < run.line and not o.printing.parts
    ]
    before.sort(key=lambda o: (o.printing.line, o.printing.key))
    for o in reversed(before):
        q = o.printing
        if weights not in q.rows:
            continue
        pl = o.placement
        if o.status != "mapped" or pl is None or q.rows.count(weights) != 1:
            return None  # the last such row is an input, or not placed at one step row
        if pl.col is not None or pl.index is not None:
            return None
        k = state.known[pl.known]
        if k.expr is None or len(k.shape) != 2 or k.shape[1] != len(weights):
            return None
        if pl.row is not None:
            return (pl.known, pl.row, q) if len(q.rows) == 1 else None
        if tuple(k.shape) != q.shape:
            return None
        return pl.known, q.rows.index(weights), q
    return None


def _written(weight: str, row: tuple[str, ...], printed: tuple[str, ...]) -> bool:
    """Whether each printed entry is the weight times the row's entry, as written."""
    try:
        w = Fraction(weight)
        values = [Fraction(x) for x in row]
        shown = [parse_printed(x) for x in printed]
    except (SpecError, ValueError, ZeroDivisionError):
        return False
    for v, p in zip(values, shown, strict=True):
        if p.value is None:
            return False
        span = rounding_interval(p)
        if not span.lo <= w * v <= span.hi:
            return False
    return True


def weighted_rows(state: SearchState, run: Printing, t: Target) -> Outcome | None:
    """The step a run of displayed results computes, one weighted row a line (see the
    module docstring); None when the lines are not of that form."""
    if run.role != "result" or len(run.parts) < 2:
        return None
    members = [state.article.printing(k) for k in run.parts]
    weights: list[str] = []
    rows: list[tuple[int, int]] = []
    displays: list[Display] = []
    for member in members:
        d = _display_of(state, member)
        m = _WEIGHT_TIMES_ROW.match(d.latex) if d is not None else None
        if d is None or m is None or len(member.rows) != 1:
            return None
        row = _entries(m.group("row"))
        if len(row) != len(member.rows[0]) or not _written(m.group("w"), row, member.rows[0]):
            return None
        placed = _operand_row(state, d, row)
        if placed is None:
            return None
        weights.append(m.group("w"))
        rows.append(placed)
        displays.append(d)
    values = {key for key, _ in rows}
    if len(values) != 1 or [r for _, r in rows] != list(range(len(rows))):
        return None  # the rows of one tensor, each once, in order
    v = values.pop()
    if state.known[v].shape[0] != len(rows):
        return None
    found = _weights_row(state, run, tuple(weights))
    if found is None:
        return None
    s, r, shown = found
    expr = call("mul", call("T", call("index", Ref(s), rows=(r, r + 1))), Ref(v))
    ball = state._ball(expr)
    if ball is None or tuple(ball.shape) != t.shape:
        return None
    state.worked_lines.update(d.key for d in displays)
    note = (
        f"each row of {state.display_name(v)} times its weight, row {r} of "
        f"{state.display_name(s)} as printed at line {shown.line}, one line each: computed "
        f"from the printed values of {state.display_name(s)}: the lines' arithmetic "
        f"reproduces the {run.size} printed entries"
    )
    known = state._add(expr, ball, run, note)
    state.worked_rows[known.key] = run
    return Outcome(run, "mapped", Placement(known.key), note)


def restated_row(state: SearchState, p: Printing) -> Outcome | None:
    """A row written again after the lines that worked it out one weighted row each, with
    the other rows, in their order (the addends of their sum, ``  [0.0, 0.0, 0.0]`` /
    ``+ [1.0, 4.0, 0.0]`` / ``+ [1.0, 3.0, 1.5]``): that row of their step, which it
    restates (the lines' rounding with it). A row alone, or the rows in another order,
    restates nothing: ``[0.0, 0.0, 0.0]`` may be any row of zeros."""
    if p.parts or len(p.rows) != 1 or len(p.rows[0]) < 2:
        return None
    hits = set()
    for key, run in state.worked_rows.items():
        if run.line >= p.line:
            continue
        n = len(run.rows)
        for block in state.article.printings:
            if p.key not in block.parts:
                continue
            at = block.parts.index(p.key)
            for a in range(max(0, at - n + 1), min(at, len(block.rows) - n) + 1):
                if block.rows[a : a + n] == run.rows:
                    hits.add((key, at - a, run.lines[at - a]))
    if len(hits) != 1:
        return None
    key, i, line = hits.pop()
    note = f"restates row {i} of the weighted rows worked out at line {line}"
    return Outcome(p, "mapped", Placement(key, row=i), note)
