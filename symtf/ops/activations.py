"""Activations: ReLU on a certified sign, exact GELU (erf), GELU's tanh form, SiLU.

Each is one scalar formula in the backend's functions, mapped over the whole
matrix at once where the backend can (:func:`~symtf.ops.array.apply`).
"""

from __future__ import annotations

from fractions import Fraction
from typing import Any

from symtf.ops.array import apply
from symtf.ops.core import Param, Substitution, define, same_shape
from symtf.ops.elementwise import mul
from symtf.ops.working import Context, Entry, Line, Recorded, Work, both, reads
from symtf.tensor import Tensor

X = Param("x")

#: The cubic coefficient of the tanh approximation of GELU (Hendrycks & Gimpel).
GELU_TANH_C = Fraction(44715, 1_000_000)


def _named(op: str) -> Any:
    def sub(s: Substitution) -> str:
        return rf"{op}\left({s.args[0]}\right)"

    return sub


def _relu_vjp(xp: Any, g: Tensor, x: Tensor, *, output: Tensor) -> tuple[Any, ...]:
    from symtf.ops.array import generic

    return (generic(xp, lambda gi, xi: gi if xp.sign(xi) > 0 else xp.const(0), g, x),)


def _entrywise_work(tex: str, text: str) -> Work:
    """The working of an element-wise activation from its formula, ``#`` for the argument."""

    @reads(1)
    def work(ctx: Context, step: Recorded, i: int, j: int) -> Entry | None:
        x = step.inputs[0]
        return both(
            ctx,
            lambda cell: Line(
                tex.replace("#", cell(x, i, j).tex), text.replace("#", cell(x, i, j).text)
            ),
        )

    return work


@define(
    "relu",
    "activations",
    (X,),
    shape=same_shape,
    elementwise=True,
    tex=r"\max(0, x)",
    text="max(0, x) on a certified sign",
    shapes="unchanged",
    substitute=_named(r"\operatorname{ReLU}"),
    vjp=_relu_vjp,
    rule=r"\max(0, x)\text{ of each entry}",
    work=_entrywise_work(r"\max(0,\ #)", "max(0, #)"),
)
def relu(xp: Any, x: Tensor) -> Tensor:
    """``max(0, x)`` element-wise, on a certified sign."""
    return apply(xp, x, xp.relu)


def _gelu(xp: Any) -> Any:
    root2 = xp.sqrt(xp.const(2))
    return lambda t: t / 2 * (1 + xp.erf(t / root2))


def _gelu_vjp(xp: Any, g: Tensor, x: Tensor, *, output: Tensor) -> tuple[Any, ...]:
    # d/dx x·Φ(x) = Φ(x) + x·φ(x) = (1 + erf(x/√2))/2 + x·e^{−x²/2}/√(2π)
    root2 = xp.sqrt(xp.const(2))
    root2pi = xp.sqrt(2 * xp.pi())
    d = apply(xp, x, lambda t: (1 + xp.erf(t / root2)) / 2 + t * xp.exp(-t * t / 2) / root2pi)
    return (mul(xp, g, d),)


@define(
    "gelu",
    "activations",
    (X,),
    shape=same_shape,
    elementwise=True,
    tex=r"\tfrac{x}{2}\bigl(1+\operatorname{erf}(x/\sqrt{2})\bigr)",
    text="x/2·(1+erf(x/√2))",
    shapes="unchanged",
    substitute=_named(r"\operatorname{GELU}"),
    vjp=_gelu_vjp,
    rule=r"\operatorname{GELU}\text{ of each entry}",
    work=_entrywise_work(
        r"\tfrac{#}{2}\bigl(1+\operatorname{erf}(#/\sqrt{2})\bigr)", "#/2·(1 + erf(#/√2))"
    ),
)
def gelu(xp: Any, x: Tensor) -> Tensor:
    """Exact GELU ``x·Φ(x) = x/2·(1 + erf(x/√2))`` element-wise."""
    return apply(xp, x, _gelu(xp))


def _gelu_tanh(xp: Any) -> Any:
    k = xp.sqrt(xp.const(2) / xp.pi())
    c = xp.const(GELU_TANH_C)
    return lambda t: t / 2 * (1 + xp.tanh(k * (t + c * t * t * t)))


def _gelu_tanh_vjp(xp: Any, g: Tensor, x: Tensor, *, output: Tensor) -> tuple[Any, ...]:
    # u = k(x + c·x³): d/dx x/2·(1 + tanh u) = (1 + tanh u)/2 + x/2·(1 − tanh² u)·k(1 + 3c·x²)
    k = xp.sqrt(xp.const(2) / xp.pi())
    c = xp.const(GELU_TANH_C)

    def d(t: Any) -> Any:
        th = xp.tanh(k * (t + c * t * t * t))
        return (1 + th) / 2 + t / 2 * (1 - th * th) * k * (1 + 3 * c * t * t)

    return (mul(xp, g, apply(xp, x, d)),)


@define(
    "gelu_tanh",
    "activations",
    (X,),
    shape=same_shape,
    elementwise=True,
    tex=r"\tfrac{x}{2}\bigl(1+\tanh\bigl(\sqrt{2/\pi}\,(x+0.044715x^3)\bigr)\bigr)",
    text="x/2·(1+tanh(√(2/π)(x+0.044715x³)))",
    shapes="unchanged",
    substitute=_named(r"\operatorname{GELU}_{\tanh}"),
    vjp=_gelu_tanh_vjp,
    rule=r"\operatorname{GELU}\text{ (tanh form) of each entry}",
    work=_entrywise_work(
        r"\tfrac{#}{2}\bigl(1+\tanh\bigl(\sqrt{2/\pi}\,(# + 0.044715\cdot #^3)\bigr)\bigr)",
        "#/2·(1 + tanh(√(2/π)·(# + 0.044715·#³)))",
    ),
)
def gelu_tanh(xp: Any, x: Tensor) -> Tensor:
    """GELU's tanh form ``x/2·(1 + tanh(√(2/π)·(x + 0.044715·x³)))`` (GPT-2)."""
    return apply(xp, x, _gelu_tanh(xp))


def _silu_vjp(xp: Any, g: Tensor, x: Tensor, *, output: Tensor) -> tuple[Any, ...]:
    # s = σ(x): d/dx x·s = s·(1 + x·(1 − s))
    def d(t: Any) -> Any:
        s = 1 / (1 + xp.exp(-t))
        return s * (1 + t * (1 - s))

    return (mul(xp, g, apply(xp, x, d)),)


@define(
    "silu",
    "activations",
    (X,),
    shape=same_shape,
    elementwise=True,
    tex=r"\frac{x}{1+e^{-x}}",
    text="x/(1+e⁻ˣ)",
    shapes="unchanged",
    substitute=_named(r"\operatorname{SiLU}"),
    vjp=_silu_vjp,
    rule=r"\operatorname{SiLU}\text{ of each entry}",
    work=_entrywise_work(r"\frac{#}{1+e^{-#}}", "# / (1 + e^(−#))"),
)
def silu(xp: Any, x: Tensor) -> Tensor:
    """SiLU (swish) ``x·σ(x) = x/(1 + e^{−x})`` element-wise."""
    return apply(xp, x, lambda t: t / (1 + xp.exp(-t)))


#: The element-wise activations a template's FFN may use, by name.
ACTIVATIONS = ("relu", "gelu", "gelu_tanh", "silu")

_ = mul

__all__ = ["ACTIVATIONS", "GELU_TANH_C", "gelu", "gelu_tanh", "relu", "silu"]
