"""Running sums and products, and ordering: ``cumsum cumprod sort argsort topk``.

Orders are decided on certified comparisons (:func:`symtf.ops.rounding.compare`) with
a stable sort, so equal entries keep their order by index, as ``torch.sort(stable=True)``
and ``torch.topk`` give them; enclosures that cannot be ordered raise
:class:`~symtf.errors.Undecided` and evaluation escalates to exact arithmetic.
"""

from __future__ import annotations

import functools
from typing import Any

from symtf.ops.array import along, full
from symtf.ops.core import Param, axis_of, check, define, fmt
from symtf.ops.rounding import compare
from symtf.tensor import Tensor, all_indices

X = Param("x")
AXIS = Param("axis", "int", -1, doc="default: the last")
DESCENDING = Param("descending", "bool", False)


def _axis_shape(x: Any, *, axis: int = -1, **_: Any) -> tuple[int, ...]:
    check(len(x) >= 1, "expected a tensor with at least one axis, found a scalar")
    axis_of(axis, len(x))
    return tuple(x)


# ----------------------------------------------------------------------------- running sums


def _running(xp: Any, vs: list[Any], mul: bool) -> list[Any]:
    out, acc = [], None
    for v in vs:
        acc = v if acc is None else (acc * v if mul else acc + v)
        out.append(acc)
    return out


def _cumsum_vjp(xp: Any, g: Tensor, x: Tensor, *, output: Tensor, axis: int = -1) -> tuple[Any]:
    # y_j = Σ_{i ≤ j} x_i: the cotangent of x_i is Σ_{j ≥ i} g_j
    return (along(xp, g, axis, lambda gs: _running(xp, gs[::-1], False)[::-1]),)


@define(
    "cumsum",
    "ordering",
    (X, AXIS),
    shape=_axis_shape,
    tex=r"\sum_{k \le i} x_k",
    text="running sum along axis",
    shapes="unchanged",
    vjp=_cumsum_vjp,
)
def cumsum(xp: Any, x: Tensor, *, axis: int = -1) -> Tensor:
    """Running sum along ``axis`` (default: the last)."""
    return along(xp, x, axis, lambda vs: _running(xp, vs, False))


def _cumprod_grad(xp: Any, gs: list[Any], xs: list[Any]) -> list[Any]:
    # y_j = Π_{k ≤ j} x_k: ∂y_j/∂x_i = Π_{k ≤ j, k ≠ i} x_k for j ≥ i (no division, zeros allowed)
    n = len(xs)
    out = []
    for i in range(n):
        acc, term = xp.const(0), xp.const(1)
        for k in range(i):
            term = term * xs[k]
        for j in range(i, n):
            if j > i:
                term = term * xs[j]
            acc = acc + gs[j] * term
        out.append(acc)
    return out


def _vectors(shape: tuple[int, ...], ax: int) -> list[list[int]]:
    """The flat positions of every vector along ``ax`` of a row-major ``shape``."""
    stride = 1
    for n in shape[ax + 1 :]:
        stride *= n
    out = []
    for rest in all_indices(tuple(n for k, n in enumerate(shape) if k != ax)):
        idx = list(rest)
        idx.insert(ax, 0)
        base = 0
        for k, n in zip(idx, shape, strict=True):
            base = base * n + k
        out.append([base + i * stride for i in range(shape[ax])])
    return out


def _cumprod_vjp(xp: Any, g: Tensor, x: Tensor, *, output: Tensor, axis: int = -1) -> tuple[Any]:
    out = [xp.const(0)] * x.size
    gd, xd = g.data, x.data
    for offs in _vectors(x.shape, axis_of(axis, x.ndim)):
        for o, v in zip(
            offs, _cumprod_grad(xp, [gd[o] for o in offs], [xd[o] for o in offs]), strict=True
        ):
            out[o] = v
    return (Tensor(x.shape, out),)


def _first(xp: Any, t: Tensor, ax: int, k: int) -> Tensor:
    """The first ``k`` entries along ``ax``."""
    from symtf.ops.shape import index

    items: list[Any] = [slice(None)] * t.ndim
    items[ax] = slice(0, k)
    return index.compute(xp, t, items=items)


@define(
    "cumprod",
    "ordering",
    (X, AXIS),
    shape=_axis_shape,
    tex=r"\prod_{k \le i} x_k",
    text="running product along axis",
    shapes="unchanged",
    vjp=_cumprod_vjp,
)
def cumprod(xp: Any, x: Tensor, *, axis: int = -1) -> Tensor:
    """Running product along ``axis`` (default: the last)."""
    return along(xp, x, axis, lambda vs: _running(xp, vs, True))


# ----------------------------------------------------------------------------- ordering


def order(xp: Any, vs: list[Any], descending: bool = False) -> list[int]:
    """The positions of ``vs`` in sorted order, equal entries by position (a stable sort)."""

    def cmp(i: int, j: int) -> int:
        c = compare(xp, vs[i], vs[j])
        return -c if descending else c

    return sorted(range(len(vs)), key=functools.cmp_to_key(cmp))


def _scatter_back(xp: Any, g: Tensor, x: Tensor, axis: int, pick: Any) -> Tensor:
    """The cotangent of ``x`` from ``g`` of the picked entries (``pick(vector) -> positions``)."""
    ax = axis_of(axis, x.ndim)
    gd, xd = g.data, x.data
    out = [xp.const(0)] * x.size
    for offs, g_offs in zip(_vectors(x.shape, ax), _vectors(g.shape, ax), strict=True):
        for pos, src in enumerate(pick([xd[o] for o in offs])):
            out[offs[src]] = out[offs[src]] + gd[g_offs[pos]]
    return Tensor(x.shape, out)


def _sort_vjp(
    xp: Any, g: Tensor, x: Tensor, *, output: Tensor, axis: int = -1, descending: bool = False
) -> tuple[Any]:
    return (_scatter_back(xp, g, x, axis, lambda vs: order(xp, vs, descending)),)


@define(
    "sort",
    "ordering",
    (X, AXIS, DESCENDING),
    shape=_axis_shape,
    tex=r"\operatorname{sort}(x)",
    text="the entries in order along axis (stable: equal entries by index)",
    shapes="unchanged",
    vjp=_sort_vjp,
)
def sort(xp: Any, x: Tensor, *, axis: int = -1, descending: bool = False) -> Tensor:
    """The entries sorted along ``axis``, ascending unless ``descending`` (ties by index)."""
    return along(xp, x, axis, lambda vs: [vs[i] for i in order(xp, vs, descending)])


@define(
    "argsort",
    "ordering",
    (X, AXIS, DESCENDING),
    shape=_axis_shape,
    tex=r"\operatorname{argsort}(x)",
    text="the indices that sort along axis (stable: equal entries by index)",
    shapes="unchanged",
    vjp=lambda xp, g, x, *, output, **_: (full(xp, x.shape, 0),),
)
def argsort(xp: Any, x: Tensor, *, axis: int = -1, descending: bool = False) -> Tensor:
    """The indices that sort ``x`` along ``axis`` (ties by index, as a stable sort)."""
    return along(xp, x, axis, lambda vs: [xp.const(i) for i in order(xp, vs, descending)])


def _topk_shape(x: Any, *, k: int, axis: int = -1, largest: bool = True) -> tuple[int, ...]:
    _axis_shape(x, axis=axis)
    ax = axis_of(axis, len(x))
    check(
        1 <= k <= x[ax],
        f"topk: expected k between 1 and {x[ax]} (axis {axis} of shape {fmt(x)}), found {k}",
    )
    return tuple(k if i == ax else n for i, n in enumerate(x))


def _topk_picks(xp: Any, vs: list[Any], k: int, largest: bool) -> list[int]:
    return order(xp, vs, descending=largest)[:k]


def _topk_vjp(
    xp: Any, g: Tensor, x: Tensor, *, output: Tensor, k: int, axis: int = -1, largest: bool = True
) -> tuple[Any]:
    return (_scatter_back(xp, g, x, axis, lambda vs: _topk_picks(xp, vs, k, largest)),)


@define(
    "topk",
    "ordering",
    (X, Param("k", "int", lo=1), AXIS, Param("largest", "bool", True)),
    shape=_topk_shape,
    tex=r"\operatorname{topk}_k(x)",
    text="the k largest (or smallest) entries along axis, in order; ties by index",
    shapes="axis → k",
    vjp=_topk_vjp,
)
def topk(xp: Any, x: Tensor, *, k: int, axis: int = -1, largest: bool = True) -> Tensor:
    """The ``k`` largest entries along ``axis`` (smallest with ``largest=false``), in order,
    equal entries by index (``torch.topk``'s values; their indices are
    ``argsort(x, descending=true)[..., :k]``)."""
    ax = axis_of(axis, x.ndim)
    sorted_ = along(xp, x, ax, lambda vs: [vs[i] for i in order(xp, vs, largest)])
    return _first(xp, sorted_, ax, k)


__all__ = ["argsort", "cumprod", "cumsum", "order", "sort", "topk"]
