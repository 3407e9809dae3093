"""Logarithms and exponentials beyond ``exp`` and ``ln``: ``log2 log10 log1p expm1 logsumexp``.

Each is written with the backend's ``log`` and ``exp``, entry by entry, so it runs in
every backend: exact values stay exact (``log2(8)`` is 3, ``log10(1/1000)`` is −3),
balls and midpoint–radius enclose. A logarithm of exactly 0 is an error, as for ``ln``.
"""

from __future__ import annotations

from typing import Any

import sympy

from symtf.ops.array import add_all, generic, reduce, reduced_shape, require_exp_arguments
from symtf.ops.core import Param, define, same_shape
from symtf.ops.elementwise import div, mul
from symtf.ops.reductions import AXIS, KEEP, _reduce_shape
from symtf.tensor import Tensor

X = Param("x")


def _each(x: Tensor, fn: Any) -> Tensor:
    return Tensor(x.shape, [fn(v) for v in x.data])


def _log_base(xp: Any, v: Any, base: int, what: str) -> Any:
    xp.require_nonzero(v, f"the argument of {what}")
    xp.require_nonnegative(v, f"the argument of {what}")
    if isinstance(v, sympy.Basic):
        return sympy.log(v, base)  # log(8, 2) is 3: exact powers of the base are integers
    return xp.log(v) / xp.log(xp.const(base))


def _log_vjp(base: int) -> Any:
    def vjp(xp: Any, g: Tensor, x: Tensor, *, output: Tensor) -> tuple[Any, ...]:
        ln = xp.log(xp.const(base))
        return (div(xp, g, _each(x, lambda v: v * ln)),)

    return vjp


def _log_op(name: str, base: int, tex: str) -> Any:
    def compute(xp: Any, x: Tensor) -> Tensor:
        return _each(x, lambda v: _log_base(xp, v, base, name))

    compute.__doc__ = f"Logarithm to base {base} element-wise ({name} 0 is an error)."
    return define(
        name,
        "logarithms",
        (X,),
        shape=same_shape,
        elementwise=True,
        tex=tex,
        text=f"log_{base} x = ln x / ln {base} (exact powers of {base} are integers)",
        shapes="unchanged",
        vjp=_log_vjp(base),
    )(compute)


log2 = _log_op("log2", 2, r"\log_2 x")
log10 = _log_op("log10", 10, r"\log_{10} x")


def _log1p_of(xp: Any, v: Any) -> Any:
    one_plus = 1 + v
    xp.require_nonzero(one_plus, "1 + x in log1p")
    xp.require_nonnegative(one_plus, "1 + x in log1p")
    return xp.log(one_plus)


@define(
    "log1p",
    "logarithms",
    (X,),
    shape=same_shape,
    elementwise=True,
    tex=r"\ln(1 + x)",
    text="ln(1 + x)",
    shapes="unchanged",
    vjp=lambda xp, g, x, *, output: (div(xp, g, _each(x, lambda v: 1 + v)),),
)
def log1p(xp: Any, x: Tensor) -> Tensor:
    """``ln(1 + x)`` element-wise (``x = −1`` is an error)."""
    return _each(x, lambda v: _log1p_of(xp, v))


@define(
    "expm1",
    "logarithms",
    (X,),
    shape=same_shape,
    elementwise=True,
    tex=r"e^{x} - 1",
    text="eˣ − 1",
    shapes="unchanged",
    vjp=lambda xp, g, x, *, output: (mul(xp, g, _each(output, lambda v: v + 1)),),
)
def expm1(xp: Any, x: Tensor) -> Tensor:
    """``eˣ − 1`` element-wise (an exponent above 10,000 is refused, as for ``exp``)."""
    require_exp_arguments(xp, x)
    return _each(x, lambda v: xp.exp(v) - 1)


# ----------------------------------------------------------------------------- logsumexp


def _float_of(v: Any) -> float:
    """A float backend's scalar as a float (a format ball's value ``v``, else itself)."""
    return float(getattr(v, "v", v))


def _logsumexp_of(xp: Any, vs: list[Any]) -> Any:
    """``ln Σ e^v`` of one group; exactly −∞ when every term is −∞ (as torch gives)."""
    if not xp.certified:  # a float's e^v overflows: shift by the largest, as frameworks do
        m = max(vs, key=_float_of)
        if _float_of(m) == float("-inf"):
            return m
        return m + xp.log(add_all(xp, [xp.exp(v - m) for v in vs]))
    s = add_all(xp, [xp.exp(v) for v in vs])
    if xp.is_zero(s):
        return xp.neg_inf()
    return xp.log(s)


def _logsumexp_vjp(
    xp: Any, g: Tensor, x: Tensor, *, output: Tensor, axis: Any = None, keepdims: bool = False
) -> tuple[Any, ...]:
    # d/dx_i ln Σ e^x = e^{x_i − y}: the softmax along the axis, times g spread back
    kept = reduced_shape(x.shape, axis, True)
    return (
        generic(
            xp,
            lambda gv, v, y: gv * xp.exp(v - y),
            g.reshape(kept),
            x,
            output.reshape(kept),
        ),
    )


@define(
    "logsumexp",
    "logarithms",
    (X, AXIS, KEEP),
    shape=_reduce_shape,
    tex=r"\ln \sum_i e^{x_i}",
    text="ln Σ eˣ along axis (−∞ when every term is −∞)",
    shapes="axis removed",
    vjp=_logsumexp_vjp,
)
def logsumexp(xp: Any, x: Tensor, *, axis: Any = None, keepdims: bool = False) -> Tensor:
    """``ln Σ e^{x}`` along ``axis`` (default: every axis)."""
    return reduce(xp, x, lambda vs: _logsumexp_of(xp, vs), axis, keepdims)


__all__ = ["expm1", "log1p", "log2", "log10", "logsumexp"]
