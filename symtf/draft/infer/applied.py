r"""A function the article applies, by name, to a row it prints on the same line.

``softmax([2, 4, 4]) = [0.0, 0.5, 0.5]`` states its step: the row in brackets is a row of
a tensor the article worked out before (the search placed it as the line's operand), and
the printed result is the named function of that row. The step is built over the tensor
(the softmax of each of its rows, or the element-wise function) and the result mapped to
the operand's row: the article names the step, so it is taken when most of the printed
entries agree with it, and each entry is judged against it (``0.0`` for 0.0634 is a slip
of the article, not a reason to refuse the step).
"""

from __future__ import annotations

import re

from symtf.draft.article import Printing
from symtf.draft.infer.state import SearchState
from symtf.draft.infer.target import Outcome, Placement, Target, _certified, parse_target
from symtf.draft.templates import Call, Ref, call
from symtf.tensor import Tensor

__all__ = ["applied_step"]

#: What the result of each function is, in the draft's notes.
_WORDS = {
    "softmax": "the softmax of",
    "exp": "the exponential of",
    "sigmoid": "the sigmoid of",
    "tanh": "the tanh of",
    "relu": "the ReLU of",
}

#: ``softmax([2, 4, 4]) =``, ``\text{softmax}( [1, 0] ) \approx``, at the start of the line:
#: the function's name, the bracketed row it applies to, and the relation before the result.
_APPLIED = re.compile(
    r"^\s*(?:\\(?:text|mathrm|operatorname)\s*\{\s*)?(?P<f>softmax|sigmoid|tanh|relu|exp)"
    r"\s*\}?\s*(?:\\left)?\(\s*(?:\\left)?\\?\[(?P<arg>[^\[\]()=]*)\\?\]\s*(?:\\right)?\)"
    r"\s*(?:=|≈|\\approx)"
)


def _entries(text: str) -> tuple[str, ...]:
    plain = _SPACING.sub(" ", text).replace("\\", "")  # "[0.5,\\;0.5]": spacing, no entry
    return tuple(x.strip().replace("−", "-") for x in plain.split(","))


_SPACING = re.compile(r"\\[;,:! ]|~")


def _operand(
    state: SearchState, p: Printing, arg: tuple[str, ...]
) -> tuple[int, int, Outcome | None] | None:
    """The known tensor and row that the line's bracketed operand was placed at, and
    for an operand no step reproduces, its outcome before it was made the line's input."""
    for o in state.outcomes.values():
        q = o.printing
        if q.key == p.key or q.role != "operand" or q.cell != p.cell or q.lines[:1] != p.lines[:1]:
            continue
        if q.context != p.context or len(q.rows) != 1 or q.rows[0] != arg:
            continue
        pl = o.placement
        if o.status == "unmapped" and pl is None:
            return _stated_operand(state, o)
        if o.status not in ("mapped", "covered", "given") or pl is None:
            return None
        if pl.col is not None or pl.index is not None:
            return None
        k = state.known[pl.known]
        if len(k.shape) != 2 or k.shape[1] != len(arg):
            return None
        if pl.row is not None:
            return pl.known, pl.row, None
        return (pl.known, 0, None) if k.shape[0] == 1 else None
    return None


def _stated_operand(state: SearchState, o: Outcome) -> tuple[int, int, Outcome | None] | None:
    """``softmax([1, 0, 1, 1]) = …`` where no step of the known tensors gives [1, 0, 1, 1]:
    the row is the line's own input, as written (an entry of two decimals or more is
    known only to its printed digits)."""
    q = o.printing
    t = parse_target(q.rows, q.decimals)
    if t is None:
        return None
    rounded = any(c.decimals >= 2 for r in t.printed for c in r)
    given = state._given(q, t, rounded=rounded)
    if given.placement is None:
        return None
    state.outcomes[q.key] = Outcome(
        q, "given", given.placement, "the row the line applies its function to, as written"
    )
    return given.placement.known, 0, o


def applied_step(state: SearchState, p: Printing, t: Target) -> Outcome | None:
    """The row of a printed result its line states as a named function of a printed row."""
    if p.role not in ("", "result") or p.shape[0] != 1 or p.parts:
        return None
    m = _APPLIED.match(p.context)
    if m is None:
        return None
    arg = _entries(m.group("arg"))
    if len(arg) != p.shape[1]:
        return None
    found = _operand(state, p, arg)
    if found is None:
        return None
    key, row, before = found
    f = m.group("f")
    expr: Call = call("softmax", Ref(key), axis=-1) if f == "softmax" else call(f, Ref(key))
    ball = state._ball(expr)
    if ball is None or len(ball.shape) != 2 or ball.shape[1] != p.shape[1]:
        return _refused(state, key, before)
    width = ball.shape[1]
    mine = Tensor((1, width), list(ball.data[row * width : (row + 1) * width]))
    flat = [c for r in t.printed for c in r]
    verdicts = [_certified(x, c) for x, c in zip(mine.data, flat, strict=True)]
    full = verdicts.count("full")
    if 2 * full <= len(flat):
        # most entries disagree: the line says something the row does not give
        return _refused(state, key, before)
    note = (
        f"{_WORDS[f]} row {row} of the operand, as the line states ({f}(…)): certified values "
        f"reproduce {full} of the {len(flat)} printed entries"
    )
    known = state._add(expr, ball, p, note)
    # the line's displayed arithmetic computes the same row: the step's claim checks it
    state.worked_lines.update(
        d.key
        for d in state.article.displays
        if (d.cell, d.line, d.rows) == (p.cell, p.line, p.rows)
    )
    return Outcome(p, "mapped", Placement(known.key, row=row), note)


def _refused(state: SearchState, key: int, before: Outcome | None) -> Outcome | None:
    """No step: an operand made the line's input for it is again what it was."""
    if before is not None:
        del state.known[key]
        state.outcomes[before.printing.key] = before
    return None
