"""A softmax worked out in named stages, one row per stage.

Articles often write a softmax as a numbered list of its stages, each a row of as many
entries as the scores above it::

    Logits = [0.00498, 0.0, 0.00502, 0.0]
    1. Max: 0.00502
    2. Subtract: [-0.00004, -0.00502, 0.0, -0.00502]
    3. Exponentiate: [0.99996, 0.995, 1.0, 0.995]
    4. Sum: ≈ 3.99
    5. Normalize: [0.250, 0.249, 0.251, 0.249]

The label names the stage, and each stage works on the row printed right before it:
``Subtract`` (``Subtract max``, ``Shift``) is that row less its largest entry,
``Exponentiate`` (``Exp``) its exponential, ``Normalize`` (``Divide by sum``) that row
divided by its sum. The row before is the nearest row of as many entries printed within
a few lines above: a step the draft knows, else a row no step places, read as printed
(rounded), as a softmax's logits are (:mod:`symtf.draft.infer.gradient`). The single
numbers between them (``Max``, ``Sum``) are the reductions the search already reads.

The label names the step, so it is taken when it reproduces most entries, two or more;
an entry that is off gets its verdict, it is never why the step is refused.
"""

from __future__ import annotations

import re

from symtf.draft.article import Printing
from symtf.draft.infer.gradient import ProbabilityRows
from symtf.draft.infer.target import Known, Outcome, Placement, Target, parse_target
from symtf.draft.templates import Expr, Ref, call

__all__ = ["softmax_stage"]

#: A stage's label (the words before the row), by the step it names.
_STAGES = (
    (
        "shift",
        re.compile(
            r"(?i)^\W*(?:\d+\.\s*)?(?:subtract(?:\s+(?:the\s+)?max(?:imum)?)?|shift(?:ed)?)\W*$"
        ),
    ),
    ("exp", re.compile(r"(?i)^\W*(?:\d+\.\s*)?(?:exponentiat(?:e|ed|ion)|exp(?:onentials?)?)\W*$")),
    (
        "normalize",
        re.compile(
            r"(?i)^\W*(?:\d+\.\s*)?(?:normali[sz](?:e|ed|ation)|divide\s+by\s+(?:the\s+)?sum)\W*$"
        ),
    ),
)
#: Article lines above a stage within which the row it works on is printed.
_WINDOW = 4


def _stage(p: Printing) -> str | None:
    """The stage a row's label names (``Subtract``, ``3. Exponentiate``), or None."""
    said = re.split(r"[\[=≈]", p.context or "", maxsplit=1)[0].strip()
    for name, pattern in _STAGES:
        if pattern.match(p.label or "") or pattern.match(said.rstrip(":")):
            return name
    return None


def softmax_stage(state: ProbabilityRows, p: Printing, t: Target) -> Outcome | None:
    """The stage of a softmax a row's label names, on the row printed right before it
    (see the module docstring), or None."""
    n = t.shape[1] if len(t.shape) == 2 else 0
    if p.role or p.parts or t.shape != (1, n) or n < 2:
        return None
    if any(c.value is None for r in t.printed for c in r):
        return None
    stage = _stage(p)
    if stage is None:
        return None
    before = _row_before(state, p, n)
    if before is None:
        return None
    x, read_here = before
    expr: Expr
    if stage == "shift":
        expr = call("sub", x, call("max", x, axis=-1, keepdims=True))
    elif stage == "exp":
        expr = call("exp", x)
    else:
        expr = call("div", x, call("sum", x, axis=-1, keepdims=True))
    ball, verdicts = state._judged(expr, t)
    full = verdicts.count("full")
    if ball is None or 2 * full <= n or full < 2:
        if read_here is not None:
            _unread(state, read_here)
        return None
    slips = verdicts.count("slip")
    what = {
        "shift": "less its largest entry",
        "exp": "exponentiated",
        "normalize": "divided by its sum",
    }[stage]
    note = (
        f"the row printed just above it {what}, as the label names the stage: certified "
        f"values reproduce {full} of the {n} printed entries"
        + (f", {slips} more within one unit" if slips else "")
    )
    new = state._add(expr, ball, p, note)
    return Outcome(p, "mapped", Placement(new.key), note)


def _row_before(
    state: ProbabilityRows, p: Printing, n: int
) -> tuple[Expr, tuple[Outcome, Known] | None] | None:
    """The row a stage works on, as a step expression, and (when it was read as printed
    here) what the search had concluded on it with the tensor read; None if the nearest
    row of ``n`` entries above is not one to read."""
    for q in sorted(state.article.printings, key=lambda x: (-x.line, -x.key)):
        if q.line >= p.line or q.key >= p.key or q.parts or q.cell != p.cell:
            continue
        if p.line - q.line > _WINDOW:
            return None
        if q.shape != (1, n):
            if q.size > 1:
                return None  # another row in between: not the stage's input
            continue
        seen = state.outcomes.get(q.key)
        if seen is None:
            return None
        pl = seen.placement
        if pl is not None and seen.status in ("mapped", "covered", "given"):
            k = state.known.get(pl.known)
            if k is None or pl.col is not None or pl.index is not None:
                return None
            if pl.row is None:
                return (Ref(k.key), None) if k.value.shape == (1, n) else None
            if len(k.value.shape) == 2 and k.value.shape[1] == n:
                return call("index", Ref(k.key), rows=(pl.row, pl.row + 1)), None
            return None
        if seen.status != "unmapped" or pl is not None or q.role:
            return None
        tq = parse_target(q.rows, q.decimals)
        if tq is None or any(c.value is None for r in tq.printed for c in r):
            return None
        given = state._given(q, tq, rounded=True)
        if given.placement is None:
            return None
        state.outcomes[q.key] = Outcome(
            q, "given", given.placement, "read as printed: the row a named stage works on"
        )
        known = state.known[given.placement.known]
        return Ref(known.key), (seen, known)
    return None


def _unread(state: ProbabilityRows, read: tuple[Outcome, Known]) -> None:
    """Undo a row read as printed for a stage that was refused."""
    seen, known = read
    del state.known[known.key]
    state.outcomes[seen.printing.key] = seen
