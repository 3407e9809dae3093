"""The few array operations every op is written with: a native 2-D path and an N-D one.

An op's computation combines tensors with these functions, never with a
backend's matrices directly. When every operand has at most two axes, each runs
as the backend's own matrix operation (a float64 BLAS product for
midpoint–radius, an ``arb_mat`` product for balls, a SymPy matrix for exact
values): a row sum is the product with a column of ones, a column broadcast the
product with a row of ones, exactly as a hand-written 2-D template would do
it. Otherwise they work entry by entry on the backend's scalars. Either way the
result is a :class:`~symtf.tensor.Tensor` of numpy's shape.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from fractions import Fraction
from typing import Any

import sympy

from symtf.ops.core import (
    axes_of,
    axis_of,
    broadcast_shape,
    check,
    elementwise_shape,
    fmt,
    shape_cached,
)
from symtf.tensor import Tensor, all_indices, matrix_shape

Scalar = Any


# ----------------------------------------------------------------------------- making tensors


def num(xp: Any, x: Any) -> Scalar:
    """A backend scalar from an int, a Fraction or an exact SymPy number (±∞ included)."""
    if isinstance(x, sympy.Basic) and x.is_infinite:
        return xp.neg_inf() if x.is_extended_negative else -xp.neg_inf()
    if isinstance(x, sympy.Rational):
        return xp.const(Fraction(int(x.p), int(x.q)))
    return xp.const(x)


def scalar(x: Scalar) -> Tensor:
    """A 0-D tensor."""
    return Tensor((), [x])


def tensor(xp: Any, values: Any) -> Tensor:
    """A tensor from nested lists of ints, Fractions or SymPy numbers (tests and constants)."""

    def shape_of(v: Any) -> tuple[int, ...]:
        return (len(v), *shape_of(v[0])) if isinstance(v, list) else ()

    def flat(v: Any) -> list[Any]:
        return [y for x in v for y in flat(x)] if isinstance(v, list) else [v]

    return Tensor(shape_of(values), [num(xp, x) for x in flat(values)])


def full(xp: Any, shape: Sequence[int], value: Any) -> Tensor:
    """A tensor of one value."""
    v = num(xp, value)
    return Tensor(shape, [v] * math.prod(shape))


def wrap(xp: Any, m: Any, shape: Sequence[int]) -> Tensor:
    """A tensor over the backend matrix ``m``."""
    if type(shape) is tuple:  # an op's own shape: a tuple of ints
        return Tensor.over(xp, m, shape)
    return Tensor(shape, native=m, xp=xp)


def nat(xp: Any, t: Tensor) -> Any:
    """The backend matrix of a tensor of at most two axes."""
    return t.native(xp)


def is_2d(*ts: Tensor) -> bool:
    """Whether every tensor has at most two axes (the native path)."""
    return all(t.ndim <= 2 for t in ts)


def expand(xp: Any, m: Any, rows: int, cols: int) -> Any:
    """A ``rows × cols`` backend matrix from ``m`` broadcast along its size-1 axes.

    A column is repeated across by the product with a row of ones, a row down by the
    product of a column of ones with it (each entry ``1·x``, exact), a single entry by
    scaling a matrix of ones.
    """
    n, k = xp.shape(m)
    if (n, k) == (rows, cols):
        return m
    if (n, k) == (1, 1):
        return xp.scale(xp.ones(rows, cols), xp.entry(m, 0, 0))
    if k == 1 and n == rows:
        return xp.matmul(m, xp.ones(1, cols))
    if n == 1 and k == cols:
        return xp.matmul(xp.ones(rows, 1), m)
    raise ValueError(f"cannot broadcast {n}x{k} to {rows}x{cols}")  # shape rules prevent it


def _scalar_like(t: Tensor) -> bool:
    return t.size == 1 and t.ndim > 0


# ----------------------------------------------------------------------------- element-wise


def apply(xp: Any, x: Tensor, fn: Callable[[Scalar], Scalar]) -> Tensor:
    """``fn`` on every entry; ``fn`` is written with the backend's scalar functions.

    On the native path the backend maps the whole matrix (the midpoint–radius and
    numpy backends hand ``fn`` the whole array, whose functions are vectorised).
    """
    if x.ndim <= 2 and x.has_native():
        return wrap(xp, xp.map(nat(xp, x), fn), x.shape)
    return Tensor(x.shape, [fn(v) for v in x.data])


def binary(
    xp: Any,
    a: Tensor,
    b: Tensor,
    mat: Callable[[Any, Any], Any] | None,
    fn: Callable[[Scalar, Scalar], Scalar],
) -> Tensor:
    """``fn`` entry by entry with numpy broadcasting (a one-entry operand mixes like a scalar).

    ``mat(A, B)`` is the backend's matrix operation on two matrices of the output's
    2-D shape, used when both operands have at most two axes and one of them is a
    native matrix; a single number is spread over the shape as a scaled matrix of ones.
    """
    if mat is not None and a.shape == b.shape and a.has_native() and b.has_native():
        # two matrices of one shape (the common case): one native operation
        return wrap(xp, mat(a.native(xp), b.native(xp)), a.shape)
    shape = elementwise_shape(a.shape, b.shape)
    if mat is not None and len(shape) <= 2 and (a.has_native() or b.has_native()):
        ms = matrix_shape(shape)
        assert ms is not None
        if (a.ndim <= 2 or a.size == 1) and (b.ndim <= 2 or b.size == 1):
            n, m = ms
            return wrap(xp, mat(_spread(xp, a, n, m), _spread(xp, b, n, m)), shape)
    return generic(xp, fn, a, b)


def _spread(xp: Any, t: Tensor, rows: int, cols: int) -> Any:
    if t.has_native():  # a native matrix has at most two axes
        return expand(xp, t.native(xp), rows, cols)
    if t.size == 1:
        return xp.scale(xp.ones(rows, cols), t.item())
    return expand(xp, nat(xp, t.reshape(()) if t.ndim > 2 else t), rows, cols)


def generic(xp: Any, fn: Callable[..., Scalar], *args: Tensor) -> Tensor:
    """``fn`` entry by entry on the backend's scalars, with numpy broadcasting (a one-entry
    operand mixes with a larger one like a scalar)."""
    if any(t.size > 1 for t in args):
        args = tuple(Tensor((), t.data) if _scalar_like(t) else t for t in args)
    shape = broadcast_shape(*(t.shape for t in args))
    bs = [broadcast_to(t, shape) for t in args]
    return Tensor(shape, [fn(*xs) for xs in zip(*(t.data for t in bs), strict=True)])


def broadcast_to(t: Tensor, shape: tuple[int, ...]) -> Tensor:
    """``t`` repeated along its size-1 (or missing) leading axes: ``-> shape``."""
    if t.shape == shape:
        return t
    lead = len(shape) - t.ndim
    check(lead >= 0, f"cannot broadcast shape {fmt(t.shape)} to {fmt(shape)}")
    src = t.shape
    data = t.data
    out = []
    for idx in all_indices(shape):
        sub = tuple(0 if src[k] == 1 else idx[lead + k] for k in range(len(src)))
        out.append(data[t.offset(sub)] if src else data[0])
    return Tensor(shape, out)


def unbroadcast(xp: Any, g: Tensor, shape: tuple[int, ...]) -> Tensor:
    """Sum the cotangent ``g`` back to an operand's ``shape`` (the VJP of a broadcast)."""
    if g.shape == shape:
        return g
    if math.prod(shape) == 1:
        return total(xp, g).reshape(shape)
    lead = g.ndim - len(shape)
    axes = list(range(lead)) + [
        lead + k for k, n in enumerate(shape) if n == 1 and g.shape[lead + k] != 1
    ]
    return total(xp, g, axes, keepdims=True).reshape(shape) if axes else g.reshape(shape)


# ----------------------------------------------------------------------------- reductions


def add_all(xp: Any, values: Sequence[Scalar]) -> Scalar:
    """The sum of backend scalars (one SymPy ``Add`` in exact arithmetic)."""
    if xp.name == "exact":
        return sympy.Add(*values)
    out = values[0]
    for v in values[1:]:
        out = out + v
    return out


def reduce(
    xp: Any,
    x: Tensor,
    fn: Callable[[list[Scalar]], Scalar],
    axis: int | Sequence[int] | None = None,
    keepdims: bool = False,
) -> Tensor:
    """Reduce the entries along ``axis`` (default: all) with ``fn(list) -> scalar``."""
    axes = axes_of(axis, x.ndim)
    kept = [k for k in range(x.ndim) if k not in axes]
    out_shape = tuple(x.shape[k] for k in kept)
    groups: dict[tuple[int, ...], list[Scalar]] = {i: [] for i in all_indices(out_shape)}
    for idx, v in zip(all_indices(x.shape), x.data, strict=True):
        groups[tuple(idx[k] for k in kept)].append(v)
    data = [fn(groups[i]) for i in all_indices(out_shape)]
    if keepdims:
        out_shape = tuple(1 if k in axes else n for k, n in enumerate(x.shape))
    return Tensor(out_shape, data)


@shape_cached(1024)
def reduced_shape(
    shape: Sequence[int], axis: int | Sequence[int] | None, keepdims: bool
) -> tuple[int, ...]:
    """The shape after reducing ``axis`` (kept as 1 with ``keepdims``)."""
    axes = axes_of(axis, len(shape))
    if keepdims:
        return tuple(1 if k in axes else n for k, n in enumerate(shape))
    return tuple(n for k, n in enumerate(shape) if k not in axes)


@shape_cached(1024)
def _sum_plan(
    shape: tuple[int, ...], axis: int | Sequence[int] | None, keepdims: bool
) -> tuple[tuple[int, ...], bool, bool, bool]:
    """How a native sum runs: the result's shape, whether the matrix's columns are summed
    (the last axis), whether its rows are (the first of two), and whether the result is
    transposed (a column summed across is a 1-D tensor: one row natively)."""
    out = reduced_shape(shape, axis, keepdims)
    nd = len(shape)
    axes = axes_of(axis, nd) if nd else []
    along = {nd - 1 - a for a in axes}  # 0: the matrix's columns (last axis), 1: rows
    if nd == 1:
        along = {0} if axes else set()
    ms = matrix_shape(shape)
    assert ms is not None  # a native matrix has at most two axes
    rows_after = 1 if 1 in along else ms[0]
    return out, 0 in along, 1 in along, len(out) == 1 and rows_after != 1


def total(
    xp: Any, x: Tensor, axis: int | Sequence[int] | None = None, keepdims: bool = False
) -> Tensor:
    """The sum along ``axis`` (default: all).

    Natively: a 2-D sum along the last axis is the product with a column of ones,
    along the first the product of a row of ones with it.
    """
    if x.ndim <= 2 and x.has_native():
        shape, cols, rows, flip = _sum_plan(x.shape, axis, keepdims)
        m = nat(xp, x)
        n, k = xp.shape(m)
        if cols:
            m = xp.matmul(m, xp.ones(k, 1))
        if rows:
            m = xp.matmul(xp.ones(1, n), m)
        if flip:
            m = xp.transpose(m)
        return wrap(xp, m, shape)
    return reduce(xp, x, lambda vs: add_all(xp, vs), axis, keepdims)


def along(xp: Any, x: Tensor, axis: int, fn: Callable[[list[Scalar]], list[Scalar]]) -> Tensor:
    """Apply ``fn(vector) -> vector`` (same length) to every vector along ``axis``."""
    check(x.ndim >= 1, "expected a tensor with at least one axis, found a scalar")
    ax = axis_of(axis, x.ndim)
    others = [k for k in range(x.ndim) if k != ax]
    data = x.data
    out = list(data)
    for rest in all_indices(tuple(x.shape[k] for k in others)):
        offs = []
        for i in range(x.shape[ax]):
            idx = list(rest)
            idx.insert(ax, i)
            offs.append(x.offset(idx))
        for o, v in zip(offs, fn([data[o] for o in offs]), strict=True):
            out[o] = v
    return Tensor(x.shape, out)


def require_nonzero_each(xp: Any, x: Tensor, what: Callable[[int], str]) -> None:
    """``xp.require_nonzero`` on every entry of ``x``, ``what(i)`` naming entry ``i`` (row-major).

    On the native path the backend checks the whole matrix
    (:meth:`~symtf.backends.base.BaseBackend.require_nonzero_entries`: a float64 array in
    one comparison), with the same error for the first zero entry.

    Raises:
        ModelError: For an entry that is exactly 0.
    """
    if x.ndim <= 2 and x.has_native():
        xp.require_nonzero_entries(nat(xp, x), what)
        return
    for i, v in enumerate(x.data):
        xp.require_nonzero(v, what(i))


def require_exp_arguments(xp: Any, x: Tensor, what: str = "e^x") -> None:
    """Refuse ``e^x`` for an entry of ``x`` certainly above :data:`~symtf.limits.MAX_EXP_ARGUMENT`.

    The rule displayed arithmetic keeps: such a value cannot be pinned by any enclosure
    (``exp(exp(exp(1000)))``). An entry whose comparison is not certain passes (a wider
    pass escalates), and so does a very negative one (e^x is then tiny).

    Args:
        xp: The backend.
        x: The exponents of e.
        what: What is computed, for the message.

    Raises:
        ModelError: Naming the entry, with the limit.
    """
    from symtf.errors import ModelError
    from symtf.limits import EXP_ARGUMENT_REFUSED, MAX_EXP_ARGUMENT

    if x.ndim <= 2 and x.has_native():
        first = xp.first_above(nat(xp, x), MAX_EXP_ARGUMENT)
    elif x.size:
        first = xp.first_above(xp.from_rows([list(x.data)]), MAX_EXP_ARGUMENT)
    else:
        first = None
    if first is not None:
        where = ""
        if x.size > 1:
            at = next(i for k, i in enumerate(x.indices()) if k == first)
            where = f" (entry [{', '.join(map(str, at))}])"
        raise ModelError(f"{what}: {EXP_ARGUMENT_REFUSED}{where}")


# ----------------------------------------------------------------------------- integers


def as_int(v: Any) -> int | None:
    """The integer a backend scalar certainly holds, or ``None``."""
    if isinstance(v, bool):
        return int(v)
    if isinstance(v, int):
        return v
    if isinstance(v, sympy.Basic):
        return int(v) if v.is_Integer else None
    if isinstance(v, float):
        return int(v) if v.is_integer() else None
    unique = getattr(v, "unique_fmpz", None)
    if unique is not None:
        z = unique()
        return None if z is None else int(z)
    inner = getattr(v, "b", None)  # a float format's ball
    if inner is not None and hasattr(inner, "unique_fmpz"):
        return as_int(inner)
    try:
        f = float(v)
    except (TypeError, ValueError):
        return None
    return int(f) if f.is_integer() else None


def exact(x: Any) -> sympy.Expr:
    """An exact SymPy number from an exact one, an int or a Fraction (never from text)."""
    if isinstance(x, sympy.Basic):
        return x
    if isinstance(x, bool):
        raise TypeError("expected an exact number, found a bool")
    if isinstance(x, int):
        return sympy.Integer(x)
    if isinstance(x, Fraction):
        return sympy.Rational(x.numerator, x.denominator)
    raise TypeError(f"expected an exact number, found {type(x).__name__}")


__all__ = [
    "add_all",
    "along",
    "apply",
    "as_int",
    "binary",
    "broadcast_to",
    "exact",
    "expand",
    "full",
    "generic",
    "is_2d",
    "nat",
    "num",
    "reduce",
    "reduced_shape",
    "require_nonzero_each",
    "scalar",
    "tensor",
    "total",
    "unbroadcast",
    "wrap",
]
