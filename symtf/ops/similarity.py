"""Norms, cosine similarity and the KL divergence: ``norm cosine_similarity kl_div``.

Written with the registry's own reductions and element-wise ops, so each runs in every
backend and stays exact on rationals where its formula allows (a 2-norm is a square
root, kept exact in SymPy).
"""

from __future__ import annotations

from fractions import Fraction
from typing import Any

from symtf.errors import ModelError
from symtf.ops.array import broadcast_to, generic, reduced_shape, total, unbroadcast
from symtf.ops.core import Param, axis_of, check, define, elementwise_shape
from symtf.ops.elementwise import div, mul
from symtf.ops.reductions import AXIS, KEEP, _reduce_shape
from symtf.ops.rounding import compare
from symtf.tensor import Tensor

X = Param("x")


def _each(x: Tensor, fn: Any) -> Tensor:
    return Tensor(x.shape, [fn(v) for v in x.data])


# ----------------------------------------------------------------------------- norm


def _norm_shape(
    x: Any, *, ord: int = 2, axis: Any = None, keepdims: bool = False
) -> tuple[int, ...]:
    return _reduce_shape(x, axis=axis, keepdims=keepdims)


def _power_sum(xp: Any, x: Tensor, p: int, axis: Any, keepdims: bool) -> Tensor:
    return total(xp, _each(x, lambda v: xp.abs(v) ** p if p != 2 else v * v), axis, keepdims)


def _root(xp: Any, s: Any, p: int) -> Any:
    if p == 1:
        return s
    if p == 2:
        return xp.sqrt(s)
    if xp.is_zero(s):
        return s
    return xp.exp(xp.log(s) / p)


def _norm_vjp(
    xp: Any,
    g: Tensor,
    x: Tensor,
    *,
    output: Tensor,
    ord: int = 2,
    axis: Any = None,
    keepdims: bool = False,
) -> tuple[Any]:
    # ∂‖x‖_p/∂x_i = sgn(x_i)·|x_i|^{p−1} / ‖x‖^{p−1}; 0 where ‖x‖ = 0 (torch's subgradient)
    kept = reduced_shape(x.shape, axis, True)

    def one(gv: Any, v: Any, n: Any) -> Any:
        if xp.is_zero(n) or compare(xp, n, xp.const(0)) == 0:
            return xp.const(0)
        s = compare(xp, v, xp.const(0))
        mag = xp.abs(v) ** (ord - 1) if ord > 1 else xp.const(1)
        return gv * xp.const(s) * mag / n ** (ord - 1)

    return (generic(xp, one, g.reshape(kept), x, output.reshape(kept)),)


@define(
    "norm",
    "similarity",
    (X, Param("ord", "int", 2, lo=1, hi=64, doc="p of the p-norm"), AXIS, KEEP),
    shape=_norm_shape,
    tex=r"\lVert x \rVert_p",
    text="(Σ |x|^p)^(1/p) along axis (default: every entry; p = ord, 2 by default)",
    shapes="axis removed",
    vjp=_norm_vjp,
)
def norm(xp: Any, x: Tensor, *, ord: int = 2, axis: Any = None, keepdims: bool = False) -> Tensor:
    """The ``p``-norm (``p = ord``, a positive integer; 2 by default) along ``axis``."""
    s = _power_sum(xp, x, ord, axis, keepdims)
    return _each(s, lambda v: _root(xp, v, ord))


# ----------------------------------------------------------------------------- cosine similarity

#: torch's default ε of ``cosine_similarity``.
COSINE_EPS = Fraction(1, 10**8)


def _cos_shape(a: Any, b: Any, *, axis: int = -1, eps: Any = COSINE_EPS) -> tuple[int, ...]:
    s = elementwise_shape(a, b)
    check(len(s) >= 1, "cosine_similarity: expected tensors with at least one axis")
    axis_of(axis, len(s))
    return reduced_shape(s, axis, False)


def _spread(a: Tensor, b: Tensor) -> tuple[Tensor, Tensor]:
    """``a`` and ``b`` broadcast to their common shape (a one-entry one like a scalar)."""
    s = elementwise_shape(a.shape, b.shape)

    def one(t: Tensor) -> Tensor:
        return broadcast_to(Tensor((), t.data) if t.size == 1 else t, s)

    return one(a), one(b)


def _cos_parts(xp: Any, a: Tensor, b: Tensor, axis: int, eps: Any) -> tuple[Any, ...]:
    a, b = _spread(a, b)
    dot = total(xp, mul(xp, a, b), axis, True)
    na = _each(total(xp, mul(xp, a, a), axis, True), xp.sqrt)
    nb = _each(total(xp, mul(xp, b, b), axis, True), xp.sqrt)
    den = generic(xp, lambda u, v: _at_least(xp, u * v, eps), na, nb)
    return dot, na, nb, den


def _at_least(xp: Any, v: Any, eps: Any) -> Any:
    e = xp.const(eps)
    if compare(xp, v, e) >= 0:
        return v
    if xp.is_zero(e):
        raise ModelError("cosine_similarity of a zero vector with eps = 0")
    return e


def _cos_vjp(
    xp: Any,
    g: Tensor,
    a: Tensor,
    b: Tensor,
    *,
    output: Tensor,
    axis: int = -1,
    eps: Any = COSINE_EPS,
) -> tuple[Any, ...]:
    # c = a·b / d with d = ‖a‖‖b‖ (above ε): ∂c/∂a = b/d − c·a·‖b‖/(‖a‖ d)
    _, na, nb, den = _cos_parts(xp, a, b, axis, eps)
    shape = elementwise_shape(a.shape, b.shape)
    kept = reduced_shape(shape, axis, True)
    gk, ck = g.reshape(kept), output.reshape(kept)
    a0, b0 = a, b
    a, b = _spread(a, b)

    def part(x: Tensor, other: Tensor, nx: Tensor, no: Tensor) -> Tensor:
        def one(gv: Any, xv: Any, ov: Any, c: Any, n1: Any, n2: Any, d: Any) -> Any:
            clipped = compare(xp, n1 * n2, xp.const(eps)) < 0
            if clipped or xp.is_zero(n1):
                return gv * ov / d
            return gv * (ov / d - c * xv * n2 / (n1 * d))

        return generic(xp, one, gk, x, other, ck, nx, no, den)

    ga = part(a, b, na, nb)
    gb = part(b, a, nb, na)
    return _back(xp, ga, a0.shape), _back(xp, gb, b0.shape)


def _back(xp: Any, g: Tensor, shape: tuple[int, ...]) -> Tensor:
    """The cotangent of an operand of ``shape`` (a one-entry one summed like a scalar)."""
    if len(shape) and all(n == 1 for n in shape):
        return total(xp, g).reshape(shape)
    return unbroadcast(xp, g, shape)


@define(
    "cosine_similarity",
    "similarity",
    (
        Param("a"),
        Param("b"),
        Param("axis", "int", -1),
        Param("eps", "number", COSINE_EPS, doc="torch's ε"),
    ),
    shape=_cos_shape,
    tex=r"\frac{a \cdot b}{\max(\lVert a \rVert \lVert b \rVert, \varepsilon)}",
    text="a·b / max(‖a‖‖b‖, eps) along axis (torch's formula, eps = 1e-8)",
    shapes="broadcast, axis removed",
    vjp=_cos_vjp,
)
def cosine_similarity(
    xp: Any, a: Tensor, b: Tensor, *, axis: int = -1, eps: Any = COSINE_EPS
) -> Tensor:
    """``a·b / max(‖a‖·‖b‖, ε)`` along ``axis``, as ``torch.nn.functional.cosine_similarity``."""
    dot, _, _, den = _cos_parts(xp, a, b, axis, eps)
    shape = elementwise_shape(a.shape, b.shape)
    return div(xp, dot, den).reshape(reduced_shape(shape, axis, False))


# ----------------------------------------------------------------------------- KL divergence

REDUCTIONS = ("mean", "batchmean", "sum", "none")


def _kl_shape(
    logq: Any, p: Any, *, reduction: str = "mean", log_target: bool = False
) -> tuple[int, ...]:
    s = elementwise_shape(logq, p)
    return s if reduction == "none" else ()


def _kl_terms(xp: Any, logq: Tensor, p: Tensor, log_target: bool) -> Tensor:
    def one(lq: Any, t: Any) -> Any:
        if log_target:
            return xp.exp(t) * (t - lq)
        if compare(xp, t, xp.const(0)) == 0:
            return xp.const(0)  # 0 · ln 0 = 0, as torch's xlogy
        xp.require_nonzero(t, "a target probability")
        return t * (xp.log(t) - lq)

    return generic(xp, one, logq, p)


def _divisor(shape: tuple[int, ...], reduction: str) -> int:
    if reduction == "mean":
        n = 1
        for k in shape:
            n *= k
        return n
    if reduction == "batchmean":
        return shape[0] if shape else 1
    return 1


def _kl_vjp(
    xp: Any,
    g: Tensor,
    logq: Tensor,
    p: Tensor,
    *,
    output: Tensor,
    reduction: str = "mean",
    log_target: bool = False,
) -> tuple[Any, ...]:
    shape = elementwise_shape(logq.shape, p.shape)
    n = xp.const(_divisor(shape, reduction))

    def d_logq(gv: Any, lq: Any, t: Any) -> Any:
        prob = xp.exp(t) if log_target else t
        return -gv * prob / n

    def d_p(gv: Any, lq: Any, t: Any) -> Any:
        if log_target:
            return gv * xp.exp(t) * (t - lq + 1) / n
        if compare(xp, t, xp.const(0)) == 0:
            raise ModelError("kl_div: the gradient at a target probability of exactly 0 is -inf")
        return gv * (xp.log(t) + 1 - lq) / n

    gg = g if reduction == "none" else g.reshape(())
    gl = generic(xp, d_logq, gg, logq, p)
    gp = generic(xp, d_p, gg, logq, p)
    return unbroadcast(xp, gl, logq.shape), unbroadcast(xp, gp, p.shape)


@define(
    "kl_div",
    "similarity",
    (
        Param("logq"),
        Param("p"),
        Param("reduction", "choice", "mean", choices=REDUCTIONS),
        Param("log_target", "bool", False),
    ),
    shape=_kl_shape,
    tex=r"\sum p\,(\ln p - \log q)",
    text="p·(ln p − logq) (0 where p = 0), then mean (torch's default), batchmean, sum or none",
    shapes="broadcast → () (reduction='none': broadcast)",
    vjp=_kl_vjp,
)
def kl_div(
    xp: Any, logq: Tensor, p: Tensor, *, reduction: str = "mean", log_target: bool = False
) -> Tensor:
    """``torch.nn.functional.kl_div(logq, p)``: the input is log-probabilities, the target
    probabilities (log-probabilities with ``log_target``)."""
    terms = _kl_terms(xp, logq, p, log_target)
    if reduction == "none":
        return terms
    s = total(xp, terms)
    n = _divisor(terms.shape, reduction)
    return s if n == 1 else div(xp, s, Tensor((), [xp.const(n)]))


__all__ = ["COSINE_EPS", "cosine_similarity", "kl_div", "norm"]
