"""Positions: the sinusoidal table of Vaswani et al., rotary positions (RoPE), and ALiBi.

Every angle is exact (``p / base^{2i/d}``) and every ``sin``/``cos`` the
backend's own enclosure of it.
"""

from __future__ import annotations

from collections.abc import Mapping
from fractions import Fraction
from typing import Any

import sympy

from symtf.ops.array import exact
from symtf.ops.core import Param, check, define, fmt, zero_vjp
from symtf.ops.working import Context, Entry, Line, Recorded, reads
from symtf.tensor import Tensor, all_indices

#: How the features of a row are paired for a rotation.
ROPE_PAIRS = ("adjacent", "halves")


def _base_ok(base: Any) -> None:
    check(
        not isinstance(base, bool)
        and isinstance(base, (int, Fraction, sympy.Rational))
        and base > 0,
        f"sinusoidal: expected a positive base, found {base}",
    )


def _sin_shape(*, n: int, d: int, base: Any = 10000) -> tuple[int, ...]:
    _base_ok(base)
    check(n * d <= 20_000, f"expected at most 20000 entries, found shape {(n, d)}")
    return (n, d)


@define(
    "sinusoidal",
    "positional",
    (Param("n", "int", lo=1), Param("d", "int", lo=1), Param("base", "number", 10000)),
    shape=_sin_shape,
    tex=r"P_{p,2i} = \sin\frac{p}{b^{2i/d}},\ P_{p,2i+1} = \cos\frac{p}{b^{2i/d}}",
    text="PE[p,2i] = sin(p/base^{2i/d}), PE[p,2i+1] = cos(same), exact",
    shapes="(n, d)",
    vjp=zero_vjp,
    rule=r"\sin\text{ and }\cos\text{ of each position}",
)
def sinusoidal(xp: Any, *, n: int, d: int, base: Any = 10000) -> Tensor:
    """Sinusoidal positions: ``P[p, 2i] = sin(p / base^{2i/d})``, ``P[p, 2i+1] = cos(…)``."""
    b = exact(base)
    out = []
    for p in range(n):
        for j in range(d):
            angle = xp.const(sympy.Integer(p) * b ** sympy.Rational(-(j - j % 2), d))
            out.append(xp.sin(angle) if j % 2 == 0 else xp.cos(angle))
    return Tensor((n, d), out)


def _alibi_shape(*, n: int, slope: Any) -> tuple[int, ...]:
    check(
        not isinstance(slope, bool) and isinstance(slope, (int, Fraction, sympy.Rational)),
        f"alibi: expected an exact number for the slope, found {slope}",
    )
    check(n * n <= 20_000, f"expected at most 20000 entries, found shape {(n, n)}")
    return (n, n)


@define(
    "alibi",
    "positional",
    (Param("n", "int", lo=1), Param("slope", "number")),
    shape=_alibi_shape,
    tex=r"B_{ij} = -m\,\lvert i - j\rvert",
    text="B[i,j] = −slope·|i − j|: the linear distance penalty added to scores (ALiBi)",
    shapes="(n, n)",
    vjp=zero_vjp,
    rule=r"-m\,\lvert i - j\rvert\text{ for each pair of positions}",
)
def alibi(xp: Any, *, n: int, slope: Any) -> Tensor:
    """The ALiBi bias of Press et al.: ``B[i, j] = −slope·|i − j|`` for ``n`` positions.

    A head's slope ``m`` is positive in the paper, so far tokens are penalised; an article
    that writes the penalty as "slope × distance" with a negative slope is ``alibi`` of the
    slope's negation.
    """
    m = exact(slope)
    return Tensor(
        (n, n), [xp.const(-m * sympy.Integer(abs(i - j))) for i in range(n) for j in range(n)]
    )


def _pairs(d: int, pairs: str) -> list[tuple[int, int]]:
    half = d // 2
    if pairs == "adjacent":
        return [(2 * i, 2 * i + 1) for i in range(half)]
    return [(i, i + half) for i in range(half)]


def _rope_shape(
    x: Any,
    angles: Any = None,
    cos: Any = None,
    sin: Any = None,
    *,
    base: Any = 10000,
    pairs: str = "adjacent",
    offset: int = 0,
) -> tuple[int, ...]:
    check(
        len(x) >= 2 if angles is not None else len(x) == 2,
        f"rope needs (..., n, d), found {fmt(x)}",
    )
    n, d = x[-2:]
    check(d % 2 == 0, f"rope needs an even width, found {d}")
    check(pairs in ROPE_PAIRS, f"rope pairs must be one of {ROPE_PAIRS}, found {pairs!r}")
    if angles is not None:
        check(
            tuple(angles) == (n, d // 2),
            f"angles of shape {fmt(angles)} do not fit x of shape {fmt(x)}: expected {fmt((n, d // 2))}",
        )
    for table, what in ((cos, "cos"), (sin, "sin")):
        if table is None:
            continue
        check(angles is not None, f"a {what} table goes with angles: rope(x, angles, {what}=…)")
        size = 1
        for k in table:
            size *= k
        check(
            size == n * (d // 2),
            f"a {what} table of shape {fmt(table)} does not fit angles of shape {fmt((n, d // 2))}",
        )
    return tuple(x)


def _rope_display(params: Mapping[str, Any], labels: Mapping[str, str]) -> str:
    letter = labels.get("x", "X")
    return rf"R_p\,{letter}_p"


def _rope_vjp(
    xp: Any,
    g: Tensor,
    x: Tensor,
    angles: Tensor | None = None,
    cos: Tensor | None = None,
    sin: Tensor | None = None,
    *,
    output: Tensor,
    base: Any = 10000,
    pairs: str = "adjacent",
    offset: int = 0,
) -> tuple[Any, ...]:
    """The rotation transposed for ``x``; for the tables, the derivative of each turned pair.

    Pair ``(a, b)`` turned by ``(c, s)`` is ``(a·c − b·s, a·s + b·c)``: by ``x`` the pair of
    cotangents ``(g_a, g_b)`` turns back, ``(g_a·c + g_b·s, −g_a·s + g_b·c)``; by ``c``,
    ``g_a·a + g_b·b``; by ``s``, ``−g_a·b + g_b·a``; by an angle, through whichever of
    ``cos``/``sin`` it was computed with (``−sin θ``, ``cos θ``).
    """
    n, d = x.shape[-2:]
    half = d // 2
    index = _pairs(d, pairs)
    if angles is None:
        b = exact(base)
        thetas = [
            xp.const(sympy.Integer(p + offset) * b ** sympy.Rational(-2 * i, d))
            for p in range(n)
            for i in range(half)
        ]
    else:
        thetas = list(angles.data)
    cs = [
        (
            xp.cos(a) if cos is None else cos.data[k],
            xp.sin(a) if sin is None else sin.data[k],
        )
        for k, a in enumerate(thetas)
    ]
    zero = xp.const(0)
    gc, gs = [zero] * (n * half), [zero] * (n * half)
    data, gd = x.data, g.data
    gx = list(gd)
    for idx in all_indices(x.shape[:-1]):
        t = idx[-1]
        start = x.offset((*idx, 0))
        for i, (a, b_) in enumerate(index):
            k = t * half + i
            c, s = cs[k]
            xa, xb = data[start + a], data[start + b_]
            ga, gb = gd[start + a], gd[start + b_]
            gx[start + a] = ga * c + gb * s
            gx[start + b_] = gb * c - ga * s
            gc[k] = gc[k] + ga * xa + gb * xb
            gs[k] = gs[k] + gb * xa - ga * xb
    g_angles = None
    if angles is not None:
        g_angles = Tensor(
            angles.shape,
            [
                (zero if cos is not None else -gc[k] * xp.sin(a))
                + (zero if sin is not None else gs[k] * xp.cos(a))
                for k, a in enumerate(thetas)
            ],
        )
    g_cos = None if cos is None else Tensor(cos.shape, gc)
    g_sin = None if sin is None else Tensor(sin.shape, gs)
    return Tensor(x.shape, gx), g_angles, g_cos, g_sin


def _rotated(ctx: Context, src: str, p: int, j: int, pairing: str, base: Any) -> Entry | None:
    """A rotated feature: ``(a, b) → (a cos θ − b sin θ, a sin θ + b cos θ)``, ``θ = p·base^(−2i/d)``."""
    shape = ctx.shape(src)
    if shape is None:
        return None
    d = shape[1]
    half = d // 2
    pairs = (
        [(2 * k, 2 * k + 1) for k in range(half)]
        if pairing == "adjacent"
        else [(k, k + half) for k in range(half)]
    )
    k, (a, b) = next((k, ab) for k, ab in enumerate(pairs) if j in ab)
    angle = sympy.Integer(p) * sympy.sympify(base) ** sympy.Rational(-2 * k, d)
    th = ctx.const(angle)
    ra, rb = ctx.ref(src, p, a), ctx.ref(src, p, b)
    va, vb = ctx.val(src, p, a), ctx.val(src, p, b)
    if j == a:
        return (
            Line(
                rf"{ra.tex}\cos\theta - {rb.tex}\sin\theta,\ \theta = {p}\cdot b^{{-{2 * k}/{d}}}",
                f"{ra.text}·cos θ − {rb.text}·sin θ, θ = {p}·base^(−{2 * k}/{d})",
            ),
            Line(
                rf"{va.tex}\cos {th.tex} - {vb.tex}\sin {th.tex}",
                f"{va.text}·cos {th.text} − {vb.text}·sin {th.text}",
            ),
        )
    return (
        Line(
            rf"{ra.tex}\sin\theta + {rb.tex}\cos\theta,\ \theta = {p}\cdot b^{{-{2 * k}/{d}}}",
            f"{ra.text}·sin θ + {rb.text}·cos θ, θ = {p}·base^(−{2 * k}/{d})",
        ),
        Line(
            rf"{va.tex}\sin {th.tex} + {vb.tex}\cos {th.tex}",
            f"{va.text}·sin {th.text} + {vb.text}·cos {th.text}",
        ),
    )


@reads(1)
def _rope_work(ctx: Context, step: Recorded, i: int, j: int) -> Entry | None:
    """Feature ``j`` of position ``i``, rotated with its pair by the position's angle."""
    params = step.params
    return _rotated(ctx, step.inputs[0], i, j, params.get("pairs", "adjacent"), params["base"])


@define(
    "rope",
    "positional",
    (
        Param("x"),
        Param("angles", "tensor", None, doc="(n, d/2); default p·base^(−2i/d)"),
        Param("cos", "tensor", None, doc="a printed table of cos(angles) to rotate with"),
        Param("sin", "tensor", None, doc="a printed table of sin(angles) to rotate with"),
        Param("base", "value", 10000),
        Param("pairs", "value", "adjacent", doc="adjacent (2i, 2i+1) or halves (i, i + d/2)"),
        Param("offset", "value", 0),
    ),
    shape=_rope_shape,
    tex=r"R_p\,x_p",
    text="pair (2i, 2i+1) of row t turned by angles[t, i]",
    shapes="(…, n, d), (n, d/2) → (…, n, d)",
    display=_rope_display,
    vjp=_rope_vjp,
    rule=r"\text{each pair of features rotated}",
    work=_rope_work,
)
def rope(
    xp: Any,
    x: Tensor,
    angles: Tensor | None = None,
    cos: Tensor | None = None,
    sin: Tensor | None = None,
    *,
    base: Any = 10000,
    pairs: str = "adjacent",
    offset: int = 0,
) -> Tensor:
    """Rotary positions: rotate each pair of features of row ``p`` by its angle.

    Pairs are ``(2i, 2i+1)`` (``adjacent``, RoFormer) or ``(i, i + d/2)`` (``halves``,
    GPT-NeoX/LLaMA code); pair ``(a, b)`` becomes ``(a·cos − b·sin, a·sin + b·cos)``.
    The angle of pair ``i`` in row ``p`` is ``angles[p, i]``, by default
    ``(p + offset)·base^{−2i/d}``. ``cos`` and ``sin``, when given, are tables of
    ``cos(angles)`` and ``sin(angles)`` to rotate with (an article's printed tables), in
    place of computing them.
    """
    n, d = x.shape[-2:]
    index = _pairs(d, pairs)
    if angles is None:
        b = exact(base)
        cs = [
            (xp.cos(a), xp.sin(a))
            for a in (
                xp.const(sympy.Integer(p + offset) * b ** sympy.Rational(-2 * i, d))
                for p in range(n)
                for i in range(d // 2)
            )
        ]
    else:
        cs = [
            (
                xp.cos(a) if cos is None else cos.data[k],
                xp.sin(a) if sin is None else sin.data[k],
            )
            for k, a in enumerate(angles.data)
        ]
    data = x.data
    out = list(data)
    for idx in all_indices(x.shape[:-1]):
        t = idx[-1]
        start = x.offset((*idx, 0))
        for i, (a, b_) in enumerate(index):
            c, s = cs[t * (d // 2) + i]
            xa, xb = data[start + a], data[start + b_]
            out[start + a] = xa * c - xb * s
            out[start + b_] = xa * s + xb * c
    return Tensor(x.shape, out)


__all__ = ["ROPE_PAIRS", "alibi", "rope", "sinusoidal"]
