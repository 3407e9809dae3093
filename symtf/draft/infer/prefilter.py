"""The draft's float64 pre-filter: candidate steps computed by the op registry, many per call.

The search (:mod:`symtf.draft.infer.evidence`) screens tens of thousands of candidate
steps per article, only to drop the ones nowhere near the printed numbers. Each
candidate's op is the registry op of the same name (:mod:`symtf.ops`), run on
:class:`~symtf.backends.FloatBackend`: no op is computed here. What this module
does is arrange the calls. Candidates of one op, with the same parameters and
input shapes, are stacked into one float64 matrix and computed by one registry
call, then cut back into one value each:

* **on rows** (each candidate's rows below the last one's) when the op works
  along rows: an element-wise op, a softmax, norm or reduction over the last
  axis, a product whose right factor all of them share;
* **side by side** (each candidate's columns after the last one's) when it works
  down columns: a softmax or reduction over the first axis, a product whose left
  factor all of them share, an element-wise op broadcasting a row.

A stacked argument that every candidate shares and that broadcasts (a row of
biases on rows, a column side by side) is passed once. An op that cannot be
arranged so (a block of rows, a concatenation, a reduction of a whole matrix) is
called once per candidate, and so is a stack the registry refuses (a divisor of 0
in one candidate), so that only the candidates it is undefined for have no value.

No verdict and no acceptance rests on the pre-filter: a kept candidate is
evaluated again in certified balls through the step language itself. Values are
kept as the search reads them, 2-D float64 arrays (a 1-D result as one row, a
scalar as 1 × 1).
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Iterable, Mapping, Sequence
from fractions import Fraction
from typing import Any

import numpy as np

from symtf import ops
from symtf.backends import FloatBackend
from symtf.draft.templates import OPS, Call, Expr, Num, Ref
from symtf.errors import SymtfError
from symtf.tensor import Tensor

__all__ = ["MISSING", "Missing", "fill"]

#: The backend every pre-filter call runs in (one instance: a tensor keeps its float64
#: matrix for the backend that made it).
_XP = FloatBackend()

#: What a candidate's value may be: a 2-D float64 array, or None where it has none.
Value = np.ndarray | None

#: Errors that mean "this candidate has no float value": shapes that do not fit, a value
#: an op is undefined for (a divisor of 0), an op the pre-filter never runs.
_NO_VALUE = (SymtfError, ValueError, ArithmeticError, TypeError, IndexError, KeyError)


class Missing:
    """The :func:`fill` hook's answer for a candidate it has no value for."""


MISSING = Missing()


#: The ops the search builds, and so pre-filters (ops only the code translation writes
#: are evaluated through the step language, never pre-filtered).
_SEARCHED = frozenset(name for name, spec in OPS.items() if spec.searched)


# ----------------------------------------------------------------------------- one call


@functools.lru_cache(maxsize=256)
def _number(text: str) -> Tensor:
    """A number as a step writes it (``2``, ``1e-05``): read exactly, then in float64, once."""
    return ops.scalar(_XP.const(Fraction(text)))


def _tensor(a: np.ndarray) -> Tensor:
    return Tensor.over(_XP, a, a.shape)


def _norm(op: ops.Op[Tensor]) -> Callable[..., Tensor]:
    def run(x: Tensor, eps: str | int = 0, **params: Any) -> Tensor:
        # ``layernorm(x, eps=1e-05)``: the ε a step writes is a number, an input of the op
        return op(_XP, x, _number(str(eps)), **params)

    return run


def _part(x: Tensor, rows: Any = None, cols: Any = None) -> Tensor:
    # ``x[0:2, 1:3]``: a block of rows and columns is the registry's indexing by slices
    items = [slice(*rows) if rows else slice(None)] + ([slice(*cols)] if cols else [])
    return ops.index(_XP, x, items=items)


def _centered(x: Tensor) -> Tensor:
    # ``x - mean(x, axis=-1, keepdims=true)``, as the op's text writes it
    return ops.sub(_XP, x, ops.mean(_XP, x, axis=-1, keepdims=True))


def _causal(n: int) -> Tensor:
    return ops.causal_mask(_XP, n=n)


def _alibi(n: int, slope: str) -> Tensor:
    # ``alibi(3, slope=-0.2)``: the slope a step writes is read exactly
    return ops.alibi(_XP, n=n, slope=Fraction(slope))


#: The searched ops a step writes in other terms than the registry op of the same name
#: with the same parameters: how the pre-filter hands them to the registry.
_LOWERED: dict[str, Callable[..., Tensor]] = {
    "layernorm": _norm(ops.layernorm),
    "rmsnorm": _norm(ops.rmsnorm),
    "index": _part,
    "centered": _centered,
    "concat": lambda *xs, axis=-1: ops.concat(_XP, list(xs), axis=axis),
    "causal_mask": _causal,
    "alibi": _alibi,
}


def _run(op: str, params: Mapping[str, Any], args: Sequence[Tensor]) -> np.ndarray:
    """One registry call in float64, its result as a 2-D array."""
    lowered = _LOWERED.get(op)
    out = lowered(*args, **params) if lowered is not None else ops.get(op)(_XP, *args, **params)
    if out.ndim > 2:
        raise ValueError("the search reads matrices only")
    native: np.ndarray = out.native(_XP)
    return native


# ----------------------------------------------------------------------------- stacking

#: Ops computed entry by entry, as the registry marks them: stacked on rows, or side by
#: side to broadcast a row.
_ELEMENTWISE = frozenset(
    name for name in _SEARCHED if name not in _LOWERED and ops.get(name).elementwise
)
#: Ops along the last axis, whatever their parameters.
_ALONG_ROWS = frozenset({"layernorm", "rmsnorm", "centered"})
#: Ops along the axis their parameter names (all axes when it is None).
_ALONG_AXIS = {"softmax": -1, "mean": None, "var": None, "std": None, "sum": None, "max": None}


def _plan(
    op: str,
    params: Mapping[str, Any],
    shapes: Sequence[tuple[int, ...] | None],
    out: tuple[int, int],
) -> tuple[str, tuple[bool, ...]] | None:
    """How a group is stacked: ``rows`` or ``side`` (side by side), and for each argument
    whether it is passed once (shared, broadcasting); None: one call per candidate.

    ``shapes`` holds each argument's shape: None for a number, ``(-1, n, m)`` for an
    argument every candidate shares (:func:`_marked`).
    """

    def shared(s: tuple[int, ...] | None) -> bool:
        return s is not None and len(s) == 3

    if op in _ELEMENTWISE:
        for how, axis in (("rows", 0), ("side", 1)):
            once = []
            for s in shapes:
                if s is None:
                    once.append(True)  # a number broadcasts
                elif s[-2 + axis] == out[axis]:
                    once.append(False)
                elif shared(s) and s[-2 + axis] == 1:
                    once.append(True)
                else:
                    break
            else:
                return how, tuple(once)
        return None
    if op in _ALONG_ROWS:
        return "rows", tuple(s is None for s in shapes)
    if op in _ALONG_AXIS:
        axis = params.get("axis", _ALONG_AXIS[op])
        if axis in (-1, 1):
            return "rows", (False,)
        if axis in (0, -2):
            return "side", (False,)
        return None
    if op == "T":
        return "rows", (False,)
    if op == "matmul":
        if shared(shapes[1]):
            return "rows", (False, True)
        if shared(shapes[0]):
            return "side", (True, False)
    return None


def _cut(op: str, params: Mapping[str, Any], how: str) -> str:
    """How a stacked result is cut back: along ``rows`` or ``side``."""
    if op == "T" or (op in _ALONG_AXIS and op != "softmax" and not params.get("keepdims")):
        # a transpose turns rows into columns; a reduction without keepdims gives one row
        # (each candidate's 1-D result, end to end)
        return "side"
    return how


def _stacked(
    op: str, params: Mapping[str, Any], argvals: list[list[Any]], how: str, once: tuple[bool, ...]
) -> list[np.ndarray] | None:
    """The group's values from one registry call, or None when the call is refused."""
    n = len(argvals)
    args: list[Tensor] = []
    for k, single in enumerate(once):
        first = argvals[0][k]
        if single:
            args.append(first if isinstance(first, Tensor) else _tensor(first))
        else:
            block = np.concatenate([a[k] for a in argvals], axis=0 if how == "rows" else 1)
            args.append(_tensor(block))
    try:
        out = _run(op, params, args)
    except _NO_VALUE:
        return None
    axis = 0 if _cut(op, params, how) == "rows" else 1
    size, rest = divmod(out.shape[axis], n)
    if rest:
        return None
    if axis == 0:
        return [out[i * size : (i + 1) * size] for i in range(n)]
    return [out[:, i * size : (i + 1) * size] for i in range(n)]


def _one(op: str, params: Mapping[str, Any], argvals: list[Any]) -> Value:
    try:
        return _run(op, params, [a if isinstance(a, Tensor) else _tensor(a) for a in argvals])
    except _NO_VALUE:
        return None


# ----------------------------------------------------------------------------- the search's entry


def fill(
    roots: Iterable[Expr],
    known: Callable[[int], np.ndarray],
    memo: dict[Expr, Value],
    borrow: Callable[[Call], Value | Missing] | None = None,
) -> None:
    """Give every candidate in ``roots``, and every candidate inside them, its value in ``memo``.

    Candidates are computed level by level (a candidate after the ones it reads), each
    level in groups of one op, parameters and input shapes, each group stacked into as
    few registry calls as it allows (see the module docstring).

    Args:
        roots: The candidates (known tensors and numbers among them are skipped).
        known: A known tensor's float64 matrix, by its key.
        memo: Values computed so far, by candidate; filled in place (None: no value).
        borrow: A value computed elsewhere for a candidate, or :data:`MISSING` (a replay
            reuses the main search's values of the candidates it does not change).
    """
    levels: list[list[Call]] = []
    level: dict[Call, int] = {}

    def visit(e: Call) -> int:
        # e is a candidate with no value yet, not visited: its level, 0 once borrowed
        if borrow is not None:
            got = borrow(e)
            if got is not MISSING:
                memo[e] = got  # type: ignore[assignment]
                return 0
        lv = 1
        for a in e.args:
            if type(a) is Call and a not in memo:
                la = level.get(a)
                if la is None:
                    la = visit(a)
                if la >= lv:
                    lv = la + 1
        level[e] = lv
        while len(levels) < lv:
            levels.append([])
        levels[lv - 1].append(e)
        return lv

    for e in roots:
        if type(e) is Call and e not in memo and e not in level:
            visit(e)
    with np.errstate(all="ignore"):
        for todo in levels:
            _level(todo, known, memo)


def _level(todo: list[Call], known: Callable[[int], np.ndarray], memo: dict[Expr, Value]) -> None:
    """One level's candidates (each reads only values already in ``memo``), by group."""
    groups: dict[Any, list[tuple[Call, list[Any]]]] = {}
    searched = _SEARCHED
    for e in todo:
        if e.op not in searched:
            memo[e] = None
            continue
        vals: list[Any] = []
        shapes: list[Any] = []
        for a in e.args:
            kind = type(a)
            if kind is Ref:
                v: Any = known(a.key)  # type: ignore[union-attr]
                if v.ndim != 2:
                    break  # the search builds candidates on matrices only
                shapes.append(v.shape)
            elif kind is Num:
                v = _number(a.text)  # type: ignore[union-attr]
                shapes.append(a.text)  # type: ignore[union-attr]
            else:
                v = memo[a]
                if v is None:
                    break
                shapes.append(v.shape)
            vals.append(v)
        else:
            key = (e.op, e.params, tuple(shapes))
            group = groups.get(key)
            if group is None:
                groups[key] = [(e, vals)]
            else:
                group.append((e, vals))
            continue
        memo[e] = None  # an input without a value
    for (op, raw, in_shapes), items in groups.items():
        params = {k: v for k, v in raw if k != "where"}
        _group(op, params, in_shapes, items, memo)


def _group(
    op: str,
    params: dict[str, Any],
    shapes: tuple[Any, ...],
    items: list[tuple[Call, list[Any]]],
    memo: dict[Expr, Value],
) -> None:
    """One op's candidates of the same parameters and input shapes (a number's text for a
    number): stacked as the op allows, else one call each."""
    if len(items) > 1 and shapes:
        argvals = [vals for _, vals in items]
        plan = _plan(op, params, _marked(shapes, argvals), _out_shape(op, shapes))
        if plan is not None:
            _group_plan(op, params, items, plan, memo)
            return
        parts = _partition(shapes, items)
        if parts is not None:
            # (no argument shared by all: the candidates sharing one, a group each)
            for part in parts:
                _group(op, params, shapes, part, memo)
            return
    for e, vals in items:
        memo[e] = _one(op, params, vals)


def _partition(
    shapes: tuple[Any, ...], items: list[tuple[Call, list[Any]]]
) -> list[list[tuple[Call, list[Any]]]] | None:
    """The candidates split by the argument that the fewest distinct arrays fill (products
    with one right factor; scores divided by one scale), or None when no argument splits
    them into groups of two or more."""
    best: list[list[tuple[Call, list[Any]]]] | None = None
    for k, s in enumerate(shapes):
        if isinstance(s, str):
            continue
        by: dict[int, list[tuple[Call, list[Any]]]] = {}
        for item in items:
            by.setdefault(id(item[1][k]), []).append(item)
        if 1 < len(by) < len(items) and (best is None or len(by) < len(best)):
            best = list(by.values())
    return best


def _marked(shapes: tuple[Any, ...], argvals: list[list[Any]]) -> list[tuple[int, ...] | None]:
    """Each argument's shape for :func:`_plan`: None for a number, ``(-1, n, m)`` for an
    argument every candidate shares (the same array)."""
    out: list[tuple[int, ...] | None] = []
    for k, s in enumerate(shapes):
        if isinstance(s, str):
            out.append(None)
            continue
        first = argvals[0][k]
        out.append((-1, *s) if all(v[k] is first for v in argvals) else s)
    return out


def _group_plan(
    op: str,
    params: dict[str, Any],
    items: list[tuple[Call, list[Any]]],
    plan: tuple[str, tuple[bool, ...]],
    memo: dict[Expr, Value],
) -> None:
    how, once = plan
    values = _stacked(op, params, [vals for _, vals in items], how, once)
    if values is None:
        # refused as a stack (a divisor of 0 in one candidate): halves, so that only the
        # candidates the op is undefined for are left without a value
        if len(items) == 1:
            memo[items[0][0]] = None
            return
        half = len(items) // 2
        _group_plan(op, params, items[:half], plan, memo)
        _group_plan(op, params, items[half:], plan, memo)
        return
    for (e, _), v in zip(items, values, strict=True):
        memo[e] = v


def _out_shape(op: str, shapes: Sequence[Any]) -> tuple[int, int]:
    """An element-wise op's result shape: numpy's broadcasting of its matrices' shapes
    (numbers broadcast; shapes that do not broadcast give ``(0, 0)``, which nothing fits)."""
    out = [1, 1]
    if op not in _ELEMENTWISE:
        return (0, 0)
    for s in shapes:
        if isinstance(s, str):
            continue
        for axis in (0, 1):
            if out[axis] == 1:
                out[axis] = s[axis]
            elif s[axis] not in (1, out[axis]):
                return (0, 0)
    return out[0], out[1]
