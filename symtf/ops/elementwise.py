"""Arithmetic and element-wise functions: ``+ − × ÷ ^``, ``exp``, ``log``, ``sqrt``, ``abs``, …

Each is written once on the backend's scalars (:func:`~symtf.ops.array.apply`,
:func:`~symtf.ops.array.binary`); on a 2-D operand the backend maps or combines
the whole matrix at once.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import sympy

from symtf.errors import ShapeError, Undecided
from symtf.ops.array import (
    apply,
    binary,
    generic,
    nat,
    require_exp_arguments,
    require_nonzero_each,
    unbroadcast,
    wrap,
)
from symtf.ops.core import BREAK, Param, Substitution, define, elementwise_shape, same_shape
from symtf.ops.working import Context, Entry, Recorded, Work, dims, infix, reads, sum_of_products
from symtf.tensor import Tensor

X = Param("x")
A, B = Param("a"), Param("b")

#: Largest ``|y|`` in ``x ^ y`` for an exact integer ``y``.
MAX_POWER = 1_000_000
#: Largest ``|y|`` in ``x ^ y`` for an exact rational ``y`` that is not an integer.
MAX_ROOT_POWER = 1000


def _two(a: Any, b: Any) -> tuple[int, ...]:
    return elementwise_shape(a, b)


def _infix(sym: str) -> Any:
    def sub(s: Substitution) -> str:
        return f"{s.args[0]}{BREAK}{sym} {s.args[1]}"

    return sub


def _labelled(default: str) -> Any:
    """A node's formula: ``out = a <op> b`` with the node's labels, or the op's own formula."""

    def display(params: Mapping[str, Any], labels: Mapping[str, str]) -> str:
        return labels.get("formula", default)

    return display


# ----------------------------------------------------------------------------- arithmetic


def _add_vjp(xp: Any, g: Tensor, a: Tensor, b: Tensor, *, output: Tensor) -> tuple[Any, ...]:
    return unbroadcast(xp, g, a.shape), unbroadcast(xp, g, b.shape)


def _infix_work(tex: str, text: str) -> Work:
    """The working of ``a op b`` at an entry (a one-column ``b`` broadcast along its row)."""

    @reads(2)
    def work(ctx: Context, step: Recorded, i: int, j: int) -> Entry | None:
        a, b = step.inputs
        bi, bj = (i, 0) if dims(ctx, b)[1] == 1 else (i, j)  # a column broadcast
        return infix(ctx, (a, i, j), tex, text, (b, bi, bj))

    return work


@define(
    "add",
    "elementwise",
    (A, B),
    shape=_two,
    elementwise=True,
    tex="a + b",
    text="a + b",
    shapes="broadcast",
    public=False,
    spelling="a + b",
    display=_labelled("a + b"),
    substitute=_infix("+"),
    vjp=_add_vjp,
    rule=r"\text{entrywise sum}",
    work=_infix_work("+", "+"),
)
def add(xp: Any, a: Tensor, b: Tensor) -> Tensor:
    """``a + b``, element-wise with broadcasting (residual connections, positions)."""
    return binary(xp, a, b, xp.add, lambda x, y: x + y)


def _sub_vjp(xp: Any, g: Tensor, a: Tensor, b: Tensor, *, output: Tensor) -> tuple[Any, ...]:
    return unbroadcast(xp, g, a.shape), unbroadcast(xp, neg(xp, g), b.shape)


@define(
    "sub",
    "elementwise",
    (A, B),
    shape=_two,
    elementwise=True,
    tex="a - b",
    text="a − b",
    shapes="broadcast",
    public=False,
    spelling="a - b",
    display=_labelled("a - b"),
    substitute=_infix("-"),
    vjp=_sub_vjp,
    rule=r"\text{entrywise difference}",
    work=_infix_work("-", "−"),
)
def sub(xp: Any, a: Tensor, b: Tensor) -> Tensor:
    """``a − b``, element-wise with broadcasting (a row minus its mean)."""
    return binary(xp, a, b, xp.sub, lambda x, y: x - y)


def _mul_vjp(xp: Any, g: Tensor, a: Tensor, b: Tensor, *, output: Tensor) -> tuple[Any, ...]:
    return unbroadcast(xp, mul(xp, g, b), a.shape), unbroadcast(xp, mul(xp, g, a), b.shape)


def times(xp: Any, x: Tensor, c: Any) -> Tensor:
    """Every entry of ``x`` times the backend scalar ``c`` (natively the backend's ``scale``)."""
    if x.ndim <= 2 and x.has_native():
        return wrap(xp, xp.scale(nat(xp, x), c), x.shape)
    return Tensor(x.shape, [v * c for v in x.data])


@reads(2)
def _mul_work(ctx: Context, step: Recorded, i: int, j: int) -> Entry | None:
    """``a[i,j]·b[i,j]``, one product written as a sum of products writes each term."""
    g, u = step.inputs
    return sum_of_products(
        [(ctx.ref(g, i, j), ctx.val(g, i, j), ctx.ref(u, i, j), ctx.val(u, i, j))]
    )


@define(
    "mul",
    "elementwise",
    (A, B),
    shape=_two,
    elementwise=True,
    tex=r"a \odot b",
    text="a ∘ b",
    shapes="broadcast",
    public=False,
    spelling="a * b; a ∘ b; a .* b",
    display=_labelled(r"a \odot b"),
    substitute=_infix(r"\odot"),
    vjp=_mul_vjp,
    rule=r"\text{entrywise product}",
    work=_mul_work,
)
def mul(xp: Any, a: Tensor, b: Tensor) -> Tensor:
    """``a ∘ b``, element-wise with broadcasting; a single number scales the other operand
    (natively the backend's ``scale``)."""
    shape = _two(a.shape, b.shape)
    if a.size == 1 and b.size != 1 and b.ndim <= 2 and b.has_native():
        return times(xp, b, a.item()).reshape(shape)
    if b.size == 1 and a.size != 1 and a.ndim <= 2 and a.has_native():
        return times(xp, a, b.item()).reshape(shape)
    return binary(xp, a, b, xp.mul, lambda x, y: x * y)


def _div_vjp(xp: Any, g: Tensor, a: Tensor, b: Tensor, *, output: Tensor) -> tuple[Any, ...]:
    ga = div(xp, g, b)
    gb = neg(xp, mul(xp, ga, output))
    return unbroadcast(xp, ga, a.shape), unbroadcast(xp, gb, b.shape)


@define(
    "div",
    "elementwise",
    (A, B),
    shape=_two,
    elementwise=True,
    tex=r"\frac{a}{b}",
    text="a / b",
    shapes="broadcast",
    public=False,
    spelling="a / b; a ÷ b",
    display=_labelled(r"\frac{a}{b}"),
    substitute=_infix(r"\oslash"),
    vjp=_div_vjp,
    rule=r"\text{entrywise quotient}",
)
def div(xp: Any, a: Tensor, b: Tensor) -> Tensor:
    """``a ÷ b``, element-wise with broadcasting.

    Raises:
        ModelError: When a divisor is exactly 0.
    """

    require_nonzero_each(xp, b, lambda i: "a divisor")
    return quotient(xp, a, b)


def quotient(xp: Any, a: Tensor, b: Tensor) -> Tensor:
    """``a ÷ b`` for a divisor already known to be nonzero (ops that checked it themselves)."""
    return binary(xp, a, b, xp.div, lambda x, y: x / y)


def _power_shape(a: Any, b: Any) -> tuple[int, ...]:
    return elementwise_shape(a, b)


def _pow_vjp(xp: Any, g: Tensor, a: Tensor, b: Tensor, *, output: Tensor) -> tuple[Any, ...]:
    # d(a^b)/da = b·a^(b−1); d(a^b)/db = a^b·ln a (a > 0)
    ga = mul(xp, g, generic(xp, lambda x, y: y * x ** (y - 1), a, b))
    gb = mul(xp, g, generic(xp, lambda y, x: y * xp.log(x), output, a))
    return unbroadcast(xp, ga, a.shape), unbroadcast(xp, gb, b.shape)


@define(
    "pow",
    "elementwise",
    (A, B),
    shape=_power_shape,
    elementwise=True,
    tex="a^{b}",
    text="a ^ b",
    shapes="broadcast",
    public=False,
    spelling="a ^ b; a ** b",
    vjp=_pow_vjp,
)
def power(xp: Any, a: Tensor, b: Tensor) -> Tensor:
    """``a ^ b``, element-wise with broadcasting (exact integer exponents up to 10⁶, other
    rational exponents up to 1000)."""

    def one(x: Any, y: Any) -> Any:
        if not isinstance(y, sympy.Rational):
            _require_power_within(xp, x, y)
            return x**y
        limit = MAX_POWER if y.is_Integer else MAX_ROOT_POWER
        if abs(y) > limit:
            what = "an integer exponent" if y.is_Integer else "a fractional exponent"
            raise ShapeError(f"expected {what} of at most {limit}, found {y}")
        if y < 0:
            xp.require_nonzero(x, "the base of a negative power")
        if not y.is_Integer:
            xp.require_nonnegative(x, f"the base of the fractional power {y}")
        return xp.power(x, int(y)) if y.is_Integer else x**y

    return generic(xp, one, a, b)


def _require_power_within(xp: Any, x: Any, y: Any) -> None:
    """``x ^ y`` for an exponent that is not an exact integer is ``e^(y·ln x)``: refused by
    the rule on exponents of e (:func:`~symtf.ops.array.require_exp_arguments`) when
    ``y·ln x`` is certainly above it. An exact integer exponent has its own bound."""
    exact_integer = getattr(y, "is_exact", None)
    if callable(exact_integer) and exact_integer() and y.is_integer():
        return  # a ball (or midpoint–radius entry) holding an integer exactly
    if isinstance(y, float) and y.is_integer():
        return
    try:
        positive = xp.sign(x) > 0
    except (Undecided, TypeError, ValueError):
        return
    if positive:
        require_exp_arguments(xp, Tensor((), [y * xp.log(x)]), "a ^ b = e^(b·ln a)")


def _neg_vjp(xp: Any, g: Tensor, x: Tensor, *, output: Tensor) -> tuple[Any, ...]:
    return (neg(xp, g),)


@define(
    "neg",
    "elementwise",
    (X,),
    shape=same_shape,
    elementwise=True,
    tex="-x",
    text="−x",
    shapes="unchanged",
    public=False,
    spelling="-x",
    vjp=_neg_vjp,
)
def neg(xp: Any, x: Tensor) -> Tensor:
    """``−x``."""
    return apply(xp, x, lambda v: -v)


# ----------------------------------------------------------------------------- functions


def _unary(
    name: str,
    tex: str,
    text: str,
    fn_of: Any,
    vjp: Any = None,
    aliases: tuple[str, ...] = (),
    doc: str = "",
) -> Any:
    """Define the element-wise function ``name`` whose scalar form is ``fn_of(xp)``."""

    def compute(xp: Any, x: Tensor) -> Tensor:
        return apply(xp, x, fn_of(xp))

    compute.__doc__ = doc
    return define(
        name,
        "elementwise",
        (X,),
        shape=same_shape,
        elementwise=True,
        tex=tex,
        text=text,
        shapes="unchanged",
        aliases=aliases,
        vjp=vjp,
        doc=doc,
    )(compute)


def _exp_vjp(xp: Any, g: Tensor, x: Tensor, *, output: Tensor) -> tuple[Any, ...]:
    return (mul(xp, g, output),)


def _log_vjp(xp: Any, g: Tensor, x: Tensor, *, output: Tensor) -> tuple[Any, ...]:
    return (div(xp, g, x),)


def _sqrt_vjp(xp: Any, g: Tensor, x: Tensor, *, output: Tensor) -> tuple[Any, ...]:
    return (div(xp, g, times(xp, output, xp.const(2))),)


def _sin_vjp(xp: Any, g: Tensor, x: Tensor, *, output: Tensor) -> tuple[Any, ...]:
    return (mul(xp, g, cos(xp, x)),)


def _cos_vjp(xp: Any, g: Tensor, x: Tensor, *, output: Tensor) -> tuple[Any, ...]:
    return (neg(xp, mul(xp, g, sin(xp, x))),)


def _tanh_vjp(xp: Any, g: Tensor, x: Tensor, *, output: Tensor) -> tuple[Any, ...]:
    return (mul(xp, g, apply(xp, output, lambda t: 1 - t * t)),)


def _sigmoid_vjp(xp: Any, g: Tensor, x: Tensor, *, output: Tensor) -> tuple[Any, ...]:
    return (mul(xp, g, apply(xp, output, lambda s: s * (1 - s))),)


def _log_of(xp: Any) -> Any:
    def one(v: Any) -> Any:
        xp.require_nonzero(v, "the argument of ln")
        xp.require_nonnegative(v, "the argument of ln")
        return xp.log(v)

    return one


def _log_compute(xp: Any, x: Tensor) -> Tensor:
    return Tensor(x.shape, [_log_of(xp)(v) for v in x.data])


@define(
    "exp",
    "elementwise",
    (X,),
    shape=same_shape,
    elementwise=True,
    tex=r"e^{x}",
    text="eˣ",
    shapes="unchanged",
    vjp=_exp_vjp,
)
def exp(xp: Any, x: Tensor) -> Tensor:
    """``e^x`` element-wise (``e^{−∞} = 0`` exactly; an exponent above 10,000 is refused)."""
    require_exp_arguments(xp, x)
    return apply(xp, x, xp.exp)


log = define(
    "log",
    "elementwise",
    (X,),
    shape=same_shape,
    elementwise=True,
    tex=r"\ln x",
    text="ln x",
    shapes="unchanged",
    aliases=("ln",),
    vjp=_log_vjp,
    doc="Natural logarithm element-wise (ln 0 is an error).",
)(_log_compute)


sqrt = _unary(
    "sqrt",
    r"\sqrt{x}",
    "√x",
    lambda xp: xp.sqrt,
    _sqrt_vjp,
    doc="``√x`` element-wise (√ of a negative number is an error).",
)


def _abs_vjp(xp: Any, g: Tensor, x: Tensor, *, output: Tensor) -> tuple[Any, ...]:
    # d|x|/dx = sign x, and 0 at x = 0 (the subgradient numpy and torch take)
    def one(gi: Any, xi: Any) -> Any:
        s = xp.sign(xi)
        return gi if s > 0 else -gi if s < 0 else xp.const(0)

    return (generic(xp, one, g, x),)


absolute = _unary(
    "abs",
    r"\lvert x\rvert",
    "|x|",
    lambda xp: xp.abs,
    _abs_vjp,
    doc="``|x|`` element-wise, on a certified sign.",
)
sin = _unary("sin", r"\sin x", "sin x", lambda xp: xp.sin, _sin_vjp, doc="``sin x`` element-wise.")
cos = _unary("cos", r"\cos x", "cos x", lambda xp: xp.cos, _cos_vjp, doc="``cos x`` element-wise.")
tanh = _unary(
    "tanh", r"\tanh x", "tanh x", lambda xp: xp.tanh, _tanh_vjp, doc="``tanh x`` element-wise."
)
sigmoid = _unary(
    "sigmoid",
    r"\frac{1}{1+e^{-x}}",
    "1/(1+e⁻ˣ)",
    lambda xp: lambda t: 1 / (1 + xp.exp(-t)),
    _sigmoid_vjp,
    doc="``σ(x) = 1/(1 + e^{−x})`` element-wise.",
)
softplus = _unary(
    "softplus",
    r"\ln(1+e^{x})",
    "ln(1+eˣ)",
    lambda xp: lambda t: xp.log(1 + xp.exp(t)),
    lambda xp, g, x, *, output: (mul(xp, g, sigmoid(xp, x)),),
    doc="``ln(1 + e^x)`` element-wise.",
)


def _dropout_shape(x: Any, keep_mask: Any, p: Any) -> tuple[int, ...]:
    from symtf.ops.core import check, fmt

    check(_size(p) == 1, f"p must be a single number, found shape {fmt(p)}")
    return elementwise_shape(x, keep_mask)


def _size(s: Any) -> int:
    n = 1
    for k in s:
        n *= k
    return n


def _dropout_vjp(
    xp: Any, g: Tensor, x: Tensor, keep_mask: Tensor, p: Tensor, *, output: Tensor
) -> tuple[Any, ...]:
    # x·m/(1 − p): by x, m/(1 − p); by p, x·m/(1 − p)²; the mask is a given choice (no derivative)
    keep = 1 - p.item()
    xp.require_nonzero(keep, "1 - p (dropout keeps nothing)")
    gx = generic(xp, lambda gi, m: gi * m / keep, g, keep_mask)
    gp = generic(xp, lambda gi, a, m: gi * a * m / (keep * keep), g, x, keep_mask)
    return unbroadcast(xp, gx, x.shape), None, unbroadcast(xp, gp, p.shape)


@define(
    "dropout",
    "elementwise",
    (X, Param("keep_mask"), Param("p")),
    shape=_dropout_shape,
    elementwise=True,
    tex=r"rac{x \odot m}{1-p}",
    text="x · keep_mask / (1 − p)",
    shapes="broadcast",
    vjp=_dropout_vjp,
)
def dropout(xp: Any, x: Tensor, keep_mask: Tensor, p: Tensor) -> Tensor:
    """Inverted dropout with a given mask: ``x · keep_mask / (1 − p)`` (broadcast).

    Raises:
        ModelError: When ``p`` is exactly 1 (dropout keeps nothing).
    """
    keep = 1 - p.item()
    xp.require_nonzero(keep, "1 - p (dropout keeps nothing)")
    return generic(xp, lambda a, m: a * m / keep, x, keep_mask)


__all__ = [
    "MAX_POWER",
    "MAX_ROOT_POWER",
    "absolute",
    "add",
    "cos",
    "div",
    "dropout",
    "exp",
    "log",
    "mul",
    "neg",
    "power",
    "quotient",
    "sigmoid",
    "sin",
    "softplus",
    "sqrt",
    "sub",
    "tanh",
    "times",
]
