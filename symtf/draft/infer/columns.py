"""A table column whose heading states its step (``Softmax @ T=0.5`` beside ``Logit``).

The reader (:mod:`symtf.draft.read.columns`) splits such a column off its table and reads
it right after the table's other columns. Here the heading's step is built on the column
it names (or, when it names none, the table's one other numeric column) and the printed
column is mapped to it: the article states the step, so it is taken whatever its entries
say, and every entry is judged against it, even when none agrees. A softmax column whose
printed entries sum clearly below one shows a few rows of a larger distribution (the top
tokens of a vocabulary): its softmax is not that of the rows shown, and no step is built.
"""

from __future__ import annotations

import numpy as np

from symtf.draft.article import Printing
from symtf.draft.infer.state import SearchState
from symtf.draft.infer.target import Outcome, Placement, Target
from symtf.draft.read.columns import column_step
from symtf.draft.templates import Call, Num, Ref, call

__all__ = ["stated_column"]

_WORDS = {
    "softmax": "the softmax over the column of",
    "exp": "the exponential of",
    "sigmoid": "the sigmoid of",
    "mul": "the product by {c} of",
    "div": "the quotient by {c} of",
}


def _table_base(state: SearchState, p: Printing) -> tuple[int, int] | None:
    """The table's other columns: the known tensor they were read as and its column count."""
    for key in range(p.key - 1, max(p.key - 64, -1), -1):
        q = state.outcomes.get(key)
        if q is None:
            continue
        if q.printing.lines[:1] != p.lines[:1] or q.printing.context != p.context:
            return None
        if column_step(q.printing.label) is not None:
            continue  # another stated column of the same table
        pl = q.placement
        if q.status not in ("given", "mapped") or pl is None:
            return None
        if pl.row is not None or pl.col is not None or pl.index is not None:
            return None
        base = state.known[pl.known]
        if len(base.shape) != 2 or base.shape[0] != p.shape[0]:
            return None
        return pl.known, base.shape[1]
    return None


def _operand(headings: list[str], width: int, name: str | None) -> int | None:
    """Which of the table's other columns the heading applies to: the one it names, else the
    only one."""
    names = [h for h in headings if column_step(h) is None][-width:] if width else []
    if name is not None and len(names) == width:
        hits = [i for i, h in enumerate(names) if h.strip().lower() == name.strip().lower()]
        if len(hits) == 1:
            return hits[0]
    return 0 if width == 1 else None


def _part_of_larger(t: Target) -> bool:
    """Whether a column printed as probabilities sums clearly below one (by more than its
    rounding could lose): the rows shown are the top few of a larger distribution."""
    values = t.values[:, 0]
    units = t.units[:, 0]
    if not np.isfinite(values).all():
        return False
    return bool(values.sum() + units.sum() / 2 < 1 - 1e-12)


def stated_column(state: SearchState, p: Printing, t: Target) -> Outcome | None:
    """A column of a table whose heading states its step, mapped to that step."""
    if p.shape[1] != 1 or p.shape[0] < 2:
        return None
    step = column_step(p.label)
    if step is None:
        return None
    if step.op == "softmax" and _part_of_larger(t):
        return None  # the rows shown are a few of a larger vocabulary: not their softmax
    found = _table_base(state, p)
    if found is None:
        return None
    key, width = found
    headings = [h.strip().strip("*").strip() for h in p.context.split(" | ")]
    a = _operand(headings, width, step.operand)
    if a is None:
        return None
    x = call("index", Ref(key), cols=(a, a + 1))
    expr: Call
    if step.op == "softmax":
        inner = x if step.constant in (None, "1") else call("div", x, Num(step.constant or "1"))
        expr = call("softmax", inner, axis=0)
    elif step.op in ("exp", "sigmoid"):
        expr = call(step.op, x)
    else:
        expr = call(step.op, x, Num(step.constant or "1"))
    ball = state._ball(expr)
    if ball is None or tuple(ball.shape) != p.shape:
        return None
    words = _WORDS[step.op].format(c=step.constant)
    if step.op == "softmax" and step.constant not in (None, "1"):
        words += f" the column divided by T = {step.constant}, i.e."
    note = f"{words} numeric column {a + 1} of the table, as its heading {p.label!r} states"
    known = state._add(expr, ball, p, note)
    return Outcome(p, "mapped", Placement(known.key), note)
