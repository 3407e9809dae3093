"""Moving entries around: transpose, reshape, heads, concatenation, indexing, embedding rows.

Nothing is computed here: entries are copied. A 2-D transpose, a selection of
rows and heads side by side stay native matrix operations.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, cast

from symtf.ops.array import nat, wrap
from symtf.ops.core import Param, Substitution, axis_of, check, define, fmt, zero_vjp
from symtf.ops.working import Context, Entry, Line, Recorded, dims, reads
from symtf.tensor import Tensor, all_indices

X = Param("x")


def _perm(axes: Sequence[int] | None, nd: int) -> list[int]:
    perm = list(reversed(range(nd))) if axes is None else [axis_of(a, nd) for a in axes]
    check(
        sorted(perm) == list(range(nd)),
        f"axes {list(axes or [])} are not a permutation of {nd} axes",
    )
    return perm


def _transpose_shape(x: Any, *, axes: Sequence[int] | None = None) -> tuple[int, ...]:
    return tuple(x[p] for p in _perm(axes, len(x)))


def _permute(xp: Any, x: Tensor, perm: list[int]) -> Tensor:
    nd = x.ndim
    if nd == 2 and perm == [1, 0] and x.has_native():
        return wrap(xp, xp.transpose(nat(xp, x)), (x.shape[1], x.shape[0]))
    if perm == list(range(nd)):
        return x
    shape = tuple(x.shape[p] for p in perm)
    data = x.data
    out = []
    for idx in all_indices(shape):
        src = [0] * nd
        for k, p in enumerate(perm):
            src[p] = idx[k]
        out.append(data[x.offset(src)])
    return Tensor(shape, out)


def _transpose_vjp(
    xp: Any, g: Tensor, x: Tensor, *, output: Tensor, axes: Sequence[int] | None = None
) -> tuple[Any, ...]:
    perm = _perm(axes, x.ndim)
    inverse = [perm.index(k) for k in range(x.ndim)]
    return (_permute(xp, g, inverse),)


@define(
    "transpose",
    "shape",
    (X, Param("axes", "ints", None)),
    shape=_transpose_shape,
    tex=r"x^\top",
    text="permute axes (default: reverse)",
    shapes="any",
    vjp=_transpose_vjp,
)
def transpose(xp: Any, x: Tensor, *, axes: Sequence[int] | None = None) -> Tensor:
    """Permute axes as numpy; no ``axes`` reverses them."""
    return _permute(xp, x, _perm(axes, x.ndim))


def swap_last(xp: Any, x: Tensor) -> Tensor:
    """``x.T``: the last two axes swapped (a 0- or 1-D tensor unchanged)."""
    if x.ndim < 2:
        return x
    perm = list(range(x.ndim))
    perm[-2], perm[-1] = perm[-1], perm[-2]
    return _permute(xp, x, perm)


def _t_shape(x: Any) -> tuple[int, ...]:
    x = tuple(x)
    return x if len(x) < 2 else (*x[:-2], x[-1], x[-2])


@define(
    "T",
    "shape",
    (X,),
    shape=_t_shape,
    tex=r"x^\top",
    text="x.T: the last two axes swapped",
    shapes="(…, n, m) → (…, m, n)",
    public=False,
    spelling="x.T; xᵀ; x^T",
    vjp=lambda xp, g, x, *, output: (swap_last(xp, g),),
)
def T(xp: Any, x: Tensor) -> Tensor:
    """``x.T``: swap the last two axes (a 0- or 1-D tensor is unchanged)."""
    return swap_last(xp, x)


def _reshape_target(size: int, shape: Sequence[int], src: Sequence[int]) -> list[int]:
    shape = list(shape)
    check(shape.count(-1) <= 1, f"at most one -1 in a shape, found {shape}")
    check(all(n >= 1 or n == -1 for n in shape), f"expected positive sizes, found {shape}")
    if -1 in shape:
        rest = math.prod(n for n in shape if n != -1)
        check(rest > 0 and size % rest == 0, f"cannot view shape {fmt(src)} as {shape}")
        shape[shape.index(-1)] = size // rest
    check(
        math.prod(shape) == size,
        f"cannot view shape {fmt(src)} ({size} entries) as {fmt(shape)}",
    )
    return shape


def _reshape_shape(x: Any, *, shape: Sequence[int]) -> tuple[int, ...]:
    return tuple(_reshape_target(math.prod(x), shape, x))


@define(
    "reshape",
    "shape",
    (X, Param("shape", "ints")),
    shape=_reshape_shape,
    tex=r"\operatorname{reshape}(x)",
    text="same entries, row-major; -1 once",
    shapes="any → shape",
    aliases=("view",),
    vjp=lambda xp, g, x, *, output, shape: (g.reshape(x.shape),),
)
def reshape(xp: Any, x: Tensor, *, shape: Sequence[int]) -> Tensor:
    """``reshape``/``view``: the same entries in another shape; ``-1`` once stands for the rest."""
    return x.reshape(_reshape_target(x.size, shape, x.shape))


def _split_shape(x: Any, *, h: int) -> tuple[int, ...]:
    check(len(x) >= 2, f"split_heads needs (..., s, d), found {fmt(x)}")
    *lead, s, d = x
    check(h >= 1 and d % h == 0, f"cannot split width {d} into {h} heads")
    return (*lead, h, s, d // h)


def _split_heads_vjp(xp: Any, g: Tensor, x: Tensor, *, output: Tensor, h: int) -> tuple[Any, ...]:
    return (merge_heads(xp, g),)


@define(
    "split_heads",
    "shape",
    (X, Param("h", "int", lo=1)),
    shape=_split_shape,
    tex=r"\operatorname{split}_h(x)",
    text="view (…, s, h, d/h), swap the middle axes",
    shapes="(…, s, d) → (…, h, s, d/h)",
    vjp=_split_heads_vjp,
)
def split_heads(xp: Any, x: Tensor, *, h: int) -> Tensor:
    """Split the last axis into heads: ``(..., s, d) -> (..., h, s, d/h)``."""
    *lead, s, d = x.shape
    y = x.reshape([*lead, s, h, d // h])
    nd = y.ndim
    return _permute(xp, y, [*range(nd - 3), nd - 2, nd - 3, nd - 1])


def _merge_shape(x: Any) -> tuple[int, ...]:
    check(len(x) >= 3, f"merge_heads needs (..., h, s, dh), found {fmt(x)}")
    *lead, h, s, dh = x
    return (*lead, s, h * dh)


@define(
    "merge_heads",
    "shape",
    (X,),
    shape=_merge_shape,
    tex=r"\operatorname{merge}(x)",
    text="inverse of split_heads",
    shapes="(…, h, s, dh) → (…, s, h·dh)",
    vjp=lambda xp, g, x, *, output: (split_heads(xp, g, h=x.shape[-3]),),
)
def merge_heads(xp: Any, x: Tensor) -> Tensor:
    """Heads side by side: ``(..., h, s, dh) -> (..., s, h·dh)``."""
    nd = x.ndim
    *lead, h, s, dh = x.shape
    y = _permute(xp, x, [*range(nd - 3), nd - 2, nd - 3, nd - 1])
    return y.reshape([*lead, s, h * dh])


# ----------------------------------------------------------------------------- joining


def _concat_shape(parts: Sequence[Any], *, axis: int = -1) -> tuple[int, ...]:
    check(len(parts) >= 1, "concat needs at least one tensor")
    first = tuple(parts[0])
    nd = len(first)
    check(nd >= 1, "cannot concatenate scalars; use stack")
    ax = axis_of(axis, nd)
    for p in parts[1:]:
        check(
            len(p) == nd and all(p[k] == first[k] for k in range(nd) if k != ax),
            f"cannot concatenate shapes {fmt(first)} and {fmt(p)} along axis {axis}",
        )
    shape = list(first)
    shape[ax] = sum(p[ax] for p in parts)
    return tuple(shape)


def _concat_display(params: Mapping[str, Any], labels: Mapping[str, str]) -> str:
    return labels.get("formula", r"[x_1 \cdots x_k]")


def _concat_sub(s: Substitution) -> str:
    return r"\left[\;" + r"\;\; ".join(s.args) + r"\;\right]"


def _concat_vjp(
    xp: Any, g: Tensor, parts: Sequence[Tensor], *, output: Tensor, axis: int = -1
) -> tuple[Any, ...]:
    """Each part's cotangent is its slice of ``g`` along the axis."""
    ax = axis_of(axis, g.ndim)
    out, start = [], 0
    for p in parts:
        n = p.shape[ax]
        items: list[Any] = [slice(None)] * ax + [slice(start, start + n)]
        out.append(index(xp, g, items=items))
        start += n
    return (out,)


def _concat_rule(params: Mapping[str, Any], labels: Mapping[str, str]) -> str:
    axis = params.get("axis", -1)
    if axis == -1:
        return r"\text{side by side}"
    if axis == 0:
        return r"\text{one below the other}"
    return rf"\text{{joined along axis {axis}}}"


def _concat_work(ctx: Context, step: Recorded, i: int, j: int) -> Entry | None:
    """The entry of the part that column ``j`` falls in (none for a step of no parts)."""
    col = j
    for h in step.inputs:
        w = dims(ctx, h)[1]
        if col < w:
            return ctx.ref(h, i, col), ctx.val(h, i, col)
        col -= w
    return None


@define(
    "concat",
    "shape",
    (Param("parts"), Param("axis", "int", -1)),
    shape=_concat_shape,
    tex=r"[x_1 \cdots x_k]",
    text="join along an existing axis",
    shapes="equal except along axis",
    variadic="parts",
    display=_concat_display,
    substitute=_concat_sub,
    vjp=_concat_vjp,
    rule=_concat_rule,
    work=_concat_work,
)
def concat(xp: Any, parts: Sequence[Tensor], *, axis: int = -1) -> Tensor:
    """Join along an existing axis: all shapes equal except along ``axis`` (heads side by side)."""
    shape = _concat_shape([p.shape for p in parts], axis=axis)
    nd = len(shape)
    ax = axis_of(axis, nd)
    if nd == 2 and ax == 1 and all(p.ndim == 2 for p in parts):
        return wrap(xp, xp.hstack([nat(xp, p) for p in parts]), shape)
    out = []
    for idx in all_indices(shape):
        k = idx[ax]
        for p in parts:
            if k < p.shape[ax]:
                out.append(p[(*idx[:ax], k, *idx[ax + 1 :])])
                break
            k -= p.shape[ax]
    return Tensor(shape, out)


def _stack_shape(parts: Sequence[Any], *, axis: int = 0) -> tuple[int, ...]:
    check(len(parts) >= 1, "stack needs at least one tensor")
    first = tuple(parts[0])
    for p in parts[1:]:
        check(tuple(p) == first, f"cannot stack shapes {fmt(first)} and {fmt(p)}")
    ax = axis_of(axis, len(first) + 1)
    return (*first[:ax], len(parts), *first[ax:])


def _stack_vjp(
    xp: Any, g: Tensor, parts: Sequence[Tensor], *, output: Tensor, axis: int = 0
) -> tuple[Any, ...]:
    """Each part's cotangent is ``g`` at its position along the new axis."""
    ax = axis_of(axis, g.ndim)
    return ([index(xp, g, items=[*[slice(None)] * ax, k]) for k in range(len(parts))],)


@define(
    "stack",
    "shape",
    (Param("parts"), Param("axis", "int", 0)),
    shape=_stack_shape,
    tex=r"\operatorname{stack}(x_1, \ldots, x_k)",
    text="join along a new axis",
    shapes="k × shape → shape with k inserted at axis",
    variadic="parts",
    vjp=_stack_vjp,
)
def stack(xp: Any, parts: Sequence[Tensor], *, axis: int = 0) -> Tensor:
    """Join along a new axis: ``k × shape -> shape with k inserted at axis``."""
    nd = parts[0].ndim + 1
    ax = axis_of(axis, nd)
    expanded = [p.reshape((*p.shape[:ax], 1, *p.shape[ax:])) for p in parts]
    return concat.compute(xp, expanded, axis=ax)


# ----------------------------------------------------------------------------- indexing


@dataclass(frozen=True)
class Ints:
    """A tensor of integer indices of any shape inside an index (``E[ids]`` with 2-D ids).

    A 1-D one may also be given as a plain list of ints.
    """

    shape: tuple[int, ...]
    values: tuple[int, ...]


def _index_items(shape: Sequence[int], items: Sequence[Any]) -> list[Any]:
    """``items`` with ``...`` expanded and slices added for the axes not named."""
    items = list(items)
    n_ell = sum(1 for it in items if it is Ellipsis)
    check(n_ell <= 1, "at most one ... in an index")
    used = sum(1 for it in items if it is not Ellipsis and it is not None)
    check(used <= len(shape), f"too many indices ({used}) for a tensor of shape {fmt(shape)}")
    if n_ell:
        k = items.index(Ellipsis)
        items[k : k + 1] = [slice(None)] * (len(shape) - used)
        return items
    return items + [slice(None)] * (len(shape) - used)


def _in_range(k0: int, ax: int, n: int, shape: Sequence[int]) -> int:
    k = k0 + n if k0 < 0 else k0
    check(0 <= k < n, f"index {k0} is out of range for axis {ax} of size {n} (shape {fmt(shape)})")
    return k


def _index_plan(shape: Sequence[int], items: Sequence[Any]) -> tuple[list[Any], list[int]]:
    """numpy's indexing as a plan: one entry per output axis, and the result's shape.

    ``items`` holds ints, ``slice`` objects, ``...``, ``None`` (a new axis of 1) and
    tensors of integer indices (:class:`Ints`, or a list of ints for a 1-D one). As in
    numpy, several index tensors (and the ints beside them) broadcast together, and
    their axes stand where the first of them is when they are adjacent, else in front.
    Each plan entry is ``("axis", source axis, positions)``, ``("new",)`` or
    ``("gather", (source axes, index tensors broadcast), the gather's shape)``.
    """
    items = _index_items(shape, items)
    arrays = [isinstance(it, (list, tuple, Ints)) for it in items]
    advanced = [
        k for k, it in enumerate(items) if arrays[k] or (any(arrays) and isinstance(it, int))
    ]
    plan: list[Any] = []
    out_shape: list[int] = []
    ax = 0
    gather: list[tuple[int, Ints]] = []
    for k, it in enumerate(items):
        if it is None:
            plan.append(("new",))
            out_shape.append(1)
            continue
        n = shape[ax]
        if k in advanced:
            if isinstance(it, int):
                idx = Ints((), (_in_range(it, ax, n, shape),))
            else:
                raw = it if isinstance(it, Ints) else Ints((len(it),), tuple(it))
                idx = Ints(raw.shape, tuple(_in_range(v, ax, n, shape) for v in raw.values))
            gather.append((ax, idx))
            if k == advanced[0]:
                plan.append(("gather",))  # filled in below, once every index tensor is known
        elif isinstance(it, int):
            plan.append(("fixed", ax, _in_range(it, ax, n, shape)))
        else:
            ks = list(range(*it.indices(n)))
            plan.append(("axis", ax, ks))
            out_shape.append(len(ks))
        ax += 1
    if gather:
        from symtf.ops.core import broadcast_shape

        b = broadcast_shape(*(g.shape for _, g in gather))
        adjacent = advanced == list(range(advanced[0], advanced[-1] + 1))
        at = plan.index(("gather",))
        entry = ("gather", gather, b)
        if adjacent:
            plan[at] = entry
        else:
            del plan[at]
            plan.insert(0, entry)
        sizes = [
            len(p[2]) if p[0] == "axis" else 1 if p[0] == "new" else None
            for p in plan
            if p[0] != "fixed"
        ]
        out_shape = []
        for size in sizes:
            out_shape.extend(b if size is None else [size])
    return plan, out_shape


def _gathered(idx: Ints, b: tuple[int, ...], at: tuple[int, ...]) -> int:
    """The entry of the index tensor ``idx`` broadcast to ``b``, at ``at``."""
    lead = len(b) - len(idx.shape)
    off = 0
    for k, n in enumerate(idx.shape):
        off = off * n + (0 if n == 1 else at[lead + k])
    return idx.values[off]


def _index_shape(x: Any, *, items: Sequence[Any]) -> tuple[int, ...]:
    return tuple(_index_plan(x, items)[1])


def _index_vjp(
    xp: Any, g: Tensor, x: Tensor, *, output: Tensor, items: Sequence[Any]
) -> tuple[Any, ...]:
    """``g`` added into a zero tensor of ``x``'s shape at the picked places (a place picked
    twice, by a list of indices or a gather, gets both)."""
    plan, out_shape = _index_plan(x.shape, items)
    out: list[Any] = [None] * x.size
    for k, v in zip(_sources(x, plan, out_shape), g.data, strict=True):
        out[k] = v if out[k] is None else out[k] + v
    zero = xp.const(0)
    return (Tensor(x.shape, [zero if v is None else v for v in out]),)


@define(
    "index",
    "shape",
    (X, Param("items", "value")),
    shape=_index_shape,
    tex="x[i]",
    text="x[i, 1:3, ..., None, -1]: ints, slices, ..., None (a new axis), tensors of ints "
    "(gather: a[idx, targ])",
    shapes="numpy's indexing",
    public=False,
    spelling="x[i, 1:3, ..., -1]; x[:, None]; E[ids]; a[idx, targ]",
    vjp=_index_vjp,
)
def index(xp: Any, x: Tensor, *, items: Sequence[Any]) -> Tensor:
    """numpy indexing: ints (negative from the end), ``slice``, ``...``, ``None`` and tensors of
    integer indices, several of them broadcast together (``a[idx, targ]`` gathers one entry
    per pair).

    Rows of a 2-D tensor picked whole stay one native selection of rows.

    Raises:
        ShapeError: For an index out of range (the index, the axis and the shape).
    """
    plan, out_shape = _index_plan(x.shape, items)
    rows = _whole_rows(plan, x)
    if rows is not None:
        return wrap(xp, xp.take_rows(nat(xp, x), rows), out_shape)
    data = x.data
    return Tensor(out_shape, [data[k] for k in _sources(x, plan, out_shape)])


def _sources(x: Tensor, plan: list[Any], out_shape: Sequence[int]) -> list[int]:
    """For each entry of the indexed result, in order, the offset of the entry of ``x`` it is."""
    out = []
    for at in all_indices(tuple(out_shape)):
        src = [0] * x.ndim
        k = 0
        for p in plan:
            if p[0] == "fixed":
                src[p[1]] = p[2]
            elif p[0] == "axis":
                src[p[1]] = p[2][at[k]]
                k += 1
            elif p[0] == "new":
                k += 1
            else:
                b = p[2]
                here = tuple(at[k : k + len(b)])
                for ax, idx in p[1]:
                    src[ax] = _gathered(idx, b, here)
                k += len(b)
        out.append(x.offset(src))
    return out


def _whole_rows(plan: list[Any], x: Tensor) -> list[int] | None:
    """The rows picked when a 2-D tensor's rows are picked whole (a native selection)."""
    if x.ndim != 2 or not x.has_native() or len(plan) != 2:
        return None
    first, second = plan
    if second[0] != "axis" or second[2] != list(range(x.shape[1])):
        return None
    if first[0] == "axis":
        # An ``("axis", source axis, positions)`` entry: its positions are a list of ints.
        return cast("list[int]", first[2])
    if first[0] == "gather" and len(first[2]) == 1 and len(first[1]) == 1:
        return list(first[1][0][1].values)
    return None


# ----------------------------------------------------------------------------- rows of a table


def _embed_shape(*, table: Any, ids: Sequence[int]) -> tuple[int, ...]:
    n = table.rows
    for t in ids:
        check(0 <= t < n, f"token id {t} is outside the embedding table of {n} rows")
    return (len(ids), table.cols)


@reads(1)
def _embed_work(ctx: Context, step: Recorded, i: int, j: int) -> Entry | None:
    """Entry ``j`` of the table's row of token ``i``."""
    ids, table = step.params["ids"], step.params["table"]
    if i >= len(ids):
        return None
    tok = ids[i]
    return (
        Line(
            rf"E_{{{tok},{j}}}\ (\text{{row of token {tok}}})",
            f"E[{tok},{j}] (row of token {tok})",
        ),
        ctx.const(table[tok, j]),
    )


@define(
    "embed",
    "shape",
    (Param("table", "value"), Param("ids", "value")),
    shape=_embed_shape,
    tex=r"E[\text{ids}]",
    text="E[ids]: the rows of the embedding table",
    shapes="[vocab, d] → [seq, d]",
    public=False,
    vjp=zero_vjp,
    rule=r"\text{rows of the embedding table}",
    work=_embed_work,
)
def embed(xp: Any, *, table: Any, ids: Sequence[int]) -> Tensor:
    """Look up embedding rows: ``[vocab, d] -> [seq, d]``."""
    m = xp.take_rows(xp.matrix(table), list(ids))
    return wrap(xp, m, (len(ids), table.cols))


def _last_row_shape(y: Any) -> tuple[int, ...]:
    check(len(y) == 2, f"expected rows, found shape {fmt(y)}")
    return (1, y[1])


def _last_row_vjp(xp: Any, g: Tensor, y: Tensor, *, output: Tensor) -> tuple[Any, ...]:
    zero = xp.const(0)
    n, d = y.shape
    return (Tensor(y.shape, [zero] * ((n - 1) * d) + list(g.data)),)


@reads(1)
def _last_row_work(ctx: Context, step: Recorded, i: int, j: int) -> Entry | None:
    """Entry ``j`` of the input's last row."""
    y = step.inputs[0]
    n = dims(ctx, y)[0]
    return ctx.ref(y, n - 1, j), ctx.val(y, n - 1, j)


@define(
    "last_row",
    "shape",
    (Param("y"),),
    shape=_last_row_shape,
    tex="h = Y[-1]",
    text="the last row",
    shapes="(n, d) → (1, d)",
    public=False,
    vjp=_last_row_vjp,
    rule=r"\text{the last row}",
    work=_last_row_work,
)
def last_row(xp: Any, y: Tensor) -> Tensor:
    """The last row, kept 2-D: ``[n, d] -> [1, d]``."""
    m = nat(xp, y)
    return wrap(xp, xp.take_rows(m, [xp.shape(m)[0] - 1]), (1, y.shape[1]))


def _append_shape(past: Any, x: Any, *, w: Any) -> tuple[int, ...]:
    check(len(x) == 2 and x[1] == w.rows, f"cannot multiply {fmt(x)} by {w.rows}x{w.cols}")
    return (past[0] + x[0], w.cols)


def _kv_append_vjp(
    xp: Any, g: Tensor, past: Tensor, x: Tensor, *, output: Tensor, w: Any
) -> tuple[Any, ...]:
    """The cached rows get their rows of ``g``; ``x`` gets ``g·Wᵀ`` of the new rows."""
    n1 = past.shape[0]
    d = g.shape[1]
    data = g.data
    g_past = Tensor(past.shape, data[: n1 * d])
    g_new = Tensor((g.shape[0] - n1, d), data[n1 * d :])
    gx = xp.matmul(nat(xp, g_new), xp.transpose(xp.matrix(w)))
    return g_past, wrap(xp, gx, x.shape)


@define(
    "kv_append",
    "shape",
    (Param("past"), Param("x"), Param("w", "value")),
    shape=_append_shape,
    tex="K = X W_K",
    text="the cached rows, then x·W under them",
    shapes="(n1, d), (n2, d_in) → (n1 + n2, d)",
    public=False,
    display=lambda params, labels: labels.get("formula", "K = X W_K"),
    vjp=_kv_append_vjp,
    rule=r"\text{the cache and the new row}",
)
def kv_append(xp: Any, past: Tensor, x: Tensor, *, w: Any) -> Tensor:
    """The KV cache grown by one step: the cached rows, then ``x·W`` under them."""
    new = xp.matmul(nat(xp, x), xp.matrix(w))
    out = xp.vstack([nat(xp, past), new])
    return wrap(xp, out, (past.shape[0] + x.shape[0], xp.shape(new)[1]))


@reads(1)
def _identity_work(ctx: Context, step: Recorded, i: int, j: int) -> Entry | None:
    """The input's entry, when the step has the input's shape."""
    x = step.inputs[0]
    if ctx.shape(x) != ctx.shape(step.name):
        return None
    return ctx.ref(x, i, j), ctx.val(x, i, j)


@define(
    "identity",
    "shape",
    (X,),
    shape=lambda x: tuple(x),
    elementwise=True,
    tex="",
    text="the input unchanged",
    shapes="unchanged",
    public=False,
    display=lambda params, labels: labels.get("formula", ""),
    vjp=lambda xp, g, x, *, output: (g,),
    rule=r"\text{the input, unchanged}",
    work=_identity_work,
)
def identity(xp: Any, x: Tensor) -> Tensor:
    """The input unchanged (a node that renames: ``final`` for the last block's output)."""
    return x


__all__ = [
    "Ints",
    "T",
    "concat",
    "embed",
    "identity",
    "index",
    "kv_append",
    "last_row",
    "merge_heads",
    "reshape",
    "split_heads",
    "stack",
    "swap_last",
    "transpose",
]
