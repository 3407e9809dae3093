"""LayerNorm and RMSNorm, and the worked pieces articles print: mean, centred row, variance, deviation.

LayerNorm is ``mean`` → ``x − μ`` → ``mean_square`` (the variance of the centred
row) → :func:`norm_root` (``√(σ² + ε)``) → :func:`normalize` (``·γ + β``); the
templates add each piece as its own node, and the ``layernorm`` op of steps
composes the very same pieces. RMSNorm is ``mean_square`` of the row itself,
then the same root and normalisation.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any, TypeVar

from symtf.errors import ModelError
from symtf.ops.array import add_all, apply, num, require_nonzero_each, scalar, total, wrap
from symtf.ops.core import BREAK, Param, Substitution, check, define, fmt
from symtf.ops.elementwise import add, mul, quotient, sub
from symtf.ops.reductions import mean, mean_square
from symtf.ops.working import Context, Entry, Line, Recorded, both, infix, reads
from symtf.tensor import Tensor

R = TypeVar("R")


def root_plus(xp: Any, v: Tensor, eps: Any, what: str) -> Tensor:
    """``√(v + ε)`` of every entry of ``v`` (a column of variances), ``ε`` a backend scalar.

    Raises:
        ModelError: When some ``v + ε`` is exactly 0 (``what`` and the row named).
    """
    v_eps = add(xp, v, scalar(eps))
    require_nonzero_each(xp, v_eps, lambda i: f"{what} of row {i}")
    return apply(xp, v_eps, xp.sqrt)


def _named(where: str | None, fn: Callable[..., R], *args: Any) -> R:
    """``fn(*args)``, a ModelError's message prefixed with the norm's name."""
    try:
        return fn(*args)
    except ModelError as e:
        if not where:
            raise
        raise ModelError(f"{where}: {e}") from None


def _root_display(params: Mapping[str, Any], labels: Mapping[str, str]) -> str:
    v = labels.get("x", r"\sigma^2")
    return rf"\sqrt{{{v} + \varepsilon}}"


def _root_sub(s: Substitution) -> str:
    eps = s.params.get("eps")
    e = "" if eps == 0 else " + " + s.latex(eps)
    return rf"\sqrt{{{s.args[0]}{e}}}"


def _norm_root_vjp(xp: Any, g: Tensor, v: Tensor, *, output: Tensor, **_: Any) -> tuple[Any, ...]:
    # √(v + ε): g/(2·√(v + ε))
    return (quotient(xp, g, apply(xp, output, lambda r: 2 * r)),)


@reads(1)
def _norm_root_work(ctx: Context, step: Recorded, i: int, j: int) -> Entry | None:
    """``√(v[i,0] + ε)`` (``√v[i,0]`` when ε is 0)."""
    v = step.inputs[0]
    eps = step.params.get("eps", 0)
    if eps == 0:
        return both(
            ctx, lambda cell: Line(rf"\sqrt{{{cell(v, i, 0).tex}}}", f"√{cell(v, i, 0).text}")
        )
    e = ctx.const(eps)
    return (
        Line(rf"\sqrt{{{ctx.ref(v, i, 0).tex} + \varepsilon}}", f"√({ctx.ref(v, i, 0).text} + ε)"),
        Line(
            rf"\sqrt{{{ctx.val(v, i, 0).tex} + {e.tex}}}",
            f"√({ctx.val(v, i, 0).text} + {e.text})",
        ),
    )


@define(
    "norm_root",
    "norms",
    (
        Param("v"),
        Param("eps", "value", 0, doc="ε, an exact number"),
        Param("what", "value", "the variance + eps"),
        Param("where", "value", None),
    ),
    shape=lambda v, **_: tuple(v),
    tex=r"\sqrt{\sigma^2 + \varepsilon}",
    text="√(σ² + ε)",
    shapes="(n, 1) → (n, 1)",
    public=False,
    display=_root_display,
    substitute=_root_sub,
    vjp=_norm_root_vjp,
    rule=r"\text{square root of each entry}",
    work=_norm_root_work,
)
def norm_root(
    xp: Any, v: Tensor, *, eps: Any = 0, what: str = "the variance + eps", where: str | None = None
) -> Tensor:
    """``√(v + ε)`` of each row's variance (or mean square).

    Raises:
        ModelError: When a row's ``v + ε`` is exactly 0 (the norm and the row named).
    """
    return _named(where, root_plus, xp, v, xp.const(eps), what)


def normalized(
    xp: Any, centered: Tensor, std: Tensor, gamma: Tensor | None, beta: Tensor | None
) -> Tensor:
    """``centered / std · γ + β`` row by row (``γ``, ``β`` broadcast along the rows).

    Raises:
        ModelError: When a row's ``std`` is exactly 0 (a replayed printed 0).
    """
    require_nonzero_each(xp, std, lambda i: f"the deviation of row {i}")
    out = quotient(xp, centered, std)
    if gamma is not None:
        out = mul(xp, out, gamma)
    if beta is not None:
        out = add(xp, out, beta)
    return out


def _normalize_vjp(
    xp: Any,
    g: Tensor,
    centered: Tensor,
    std: Tensor,
    *,
    output: Tensor,
    gamma: Any,
    beta: Any,
    where: Any = None,
) -> tuple[Any, ...]:
    # c/s·γ + β: by c, g·γ/s; by s, −Σ_row g·γ·c/s²
    from symtf.ops.array import unbroadcast

    d = centered.shape[-1]
    gg = mul(xp, g, wrap(xp, xp.matrix(gamma), (1, d)))
    gc = quotient(xp, gg, std)
    gs = unbroadcast(xp, neg_(xp, quotient(xp, mul(xp, gc, centered), std)), std.shape)
    return gc, gs


def neg_(xp: Any, t: Tensor) -> Tensor:
    """``−t``."""
    return apply(xp, t, lambda v: -v)


def _normalize_shape(
    centered: Any, std: Any, *, gamma: Any, beta: Any, where: Any = None
) -> tuple[int, ...]:
    d = centered[-1]
    for name, p in (("gamma", gamma), ("beta", beta)):
        if p is not None:
            check(
                tuple(p.shape) == (1, d),
                f"{name} of shape {tuple(p.shape)} does not fit (1, {d})",
            )
    return tuple(centered)


def _plain(m: Any, one: int) -> bool:
    return m is None or all(x == one for x in m)


def _normalize_sub(s: Substitution) -> str | None:
    gamma, beta = s.params.get("gamma"), s.params.get("beta")
    a, b = s.args
    # each row divided by its own deviation: diag(σ)⁻¹ (x − μ), or a plain fraction
    std = s.shapes[1] if len(s.shapes) > 1 else None
    by_row = std is not None and len(std) >= 1 and std[0] > 1
    divided = (
        rf"\operatorname{{diag}}\left({b}\right)^{{-1}} {a}" if by_row else rf"\frac{{{a}}}{{{b}}}"
    )
    if _plain(gamma, 1) and _plain(beta, 0):
        return divided
    g, bb = s.value("gamma", False), s.value("beta", False)
    return rf"\left({divided}\right){BREAK}\odot {g}{BREAK}+ {bb}"


_LN = r"\frac{x-\mu}{\sqrt{\sigma^2+\varepsilon}}\,\gamma+\beta"
_RMS = r"\frac{x}{\sqrt{\overline{x^2}+\varepsilon}}\,\gamma+\beta"


def _normalize_rule(params: Mapping[str, Any], labels: Mapping[str, str]) -> str:
    by = "RMS" if labels.get("kind") == "rmsnorm" else "deviation"
    return r"\text{each row over its " + by + r", then } \gamma, \beta"


def _scaled_entry(ctx: Context, gamma: Any, beta: Any, x: str, s: str, i: int, j: int) -> Entry:
    """``x[i,j] / s[i,0]``, then ``·γ[j] + β[j]`` when the norm scales or shifts that column."""
    fs, ss = infix(ctx, (x, i, j), "/", "/", (s, i, 0))
    if gamma is not None and beta is not None:
        g, b = gamma[0, j], beta[0, j]
        if g != 1 or b != 0:
            gv, bv = ctx.const(g), ctx.const(b)
            fs = Line(
                rf"({fs.tex})\,\gamma_{{{j}}} + \beta_{{{j}}}", f"({fs.text})·γ[{j}] + β[{j}]"
            )
            ss = Line(rf"({ss.tex})\cdot {gv.tex} + {bv.tex}", f"({ss.text})·{gv.text} + {bv.text}")
    return fs, ss


@reads(2)
def _normalize_work(ctx: Context, step: Recorded, i: int, j: int) -> Entry | None:
    """The centred entry over its row's root, scaled by γ and shifted by β."""
    x, s = step.inputs
    return _scaled_entry(ctx, step.params.get("gamma"), step.params.get("beta"), x, s, i, j)


@define(
    "normalize",
    "norms",
    (
        Param("centered"),
        Param("std"),
        Param("gamma", "value", doc="the file's 1 × d row"),
        Param("beta", "value", doc="the file's 1 × d row"),
        Param("where", "value", None),
    ),
    shape=_normalize_shape,
    tex=_LN,
    text="(x − μ)/σ·γ + β",
    shapes="(n, d), (n, 1) → (n, d)",
    public=False,
    display=lambda params, labels: _RMS if labels.get("kind") == "rmsnorm" else _LN,
    substitute=_normalize_sub,
    vjp=_normalize_vjp,
    rule=_normalize_rule,
    work=_normalize_work,
)
def normalize(
    xp: Any, centered: Tensor, std: Tensor, *, gamma: Any, beta: Any, where: str | None = None
) -> Tensor:
    """``centered / std · γ + β`` row by row; ``γ``, ``β`` are the file's ``1 × d`` rows.

    Raises:
        ModelError: A deviation that is exactly 0 (a replayed printed 0), the norm named.
    """
    d = centered.shape[-1]
    g = wrap(xp, xp.matrix(gamma), (1, d))
    b = wrap(xp, xp.matrix(beta), (1, d))
    return _named(where, normalized, xp, centered, std, g, b)


# ----------------------------------------------------------------------------- the step ops


def _param_shape(p: Any, d: int, what: str) -> None:
    if p is None:
        return
    size = 1
    for n in p:
        size *= n
    check(
        size == 1 or (tuple(p[-1:]) == (d,) and size == d),
        f"{what} of shape {fmt(p)} does not fit width {d}",
    )


def _ln_shape(
    x: Any, eps: Any = None, gamma: Any = None, beta: Any = None, *, unbiased: bool = False
) -> tuple[int, ...]:
    check(len(x) >= 1, "layernorm needs at least one axis")
    d = x[-1]
    check(not unbiased or d > 1, "the unbiased variance of a single feature is undefined")
    if eps is not None:
        check(_size(eps) == 1, f"eps must be a single number, found shape {fmt(eps)}")
    _param_shape(gamma, d, "gamma")
    _param_shape(beta, d, "beta")
    return tuple(x)


def _size(s: Any) -> int:
    n = 1
    for k in s:
        n *= k
    return n


def _eps_of(xp: Any, eps: Tensor | None) -> Any:
    return xp.const(0) if eps is None else eps.item()


def _flat(p: Tensor | None) -> Tensor | None:
    """A ``(d,)`` or one-entry parameter as it broadcasts along the last axis."""
    if p is None or p.size == 1:
        return None if p is None else p.reshape(())
    return p.reshape((p.size,))


def _norm_vjp(
    xp: Any,
    g: Tensor,
    x: Tensor,
    eps: Tensor | None,
    gamma: Tensor | None,
    beta: Tensor | None,
    *,
    centred: bool,
    unbiased: bool = False,
) -> tuple[Any, ...]:
    """The VJP of LayerNorm (``centred``) or RMSNorm over the last axis.

    With ``c = x − μ`` (or ``x``), ``v = Σc²/n'``, ``r = √(v + ε)``, ``h = c/r`` and
    ``u = g·γ``: by ``x``, ``u/r − mean(u)/r − c·Σ(u·c)/(n'·r³)`` (the ``mean(u)`` term only
    when centred); by ``ε``, ``−Σ u·c/(2r³)``; by ``γ``, ``Σ g·h``; by ``β``, ``Σ g``.
    """
    from symtf.ops.array import unbroadcast

    d = x.shape[-1]
    n = d - (1 if unbiased else 0)
    c = sub(xp, x, mean(xp, x, axis=-1, keepdims=True)) if centred else x
    v = mean_square.compute(xp, c, axis=-1, keepdims=True, unbiased=unbiased)
    r = root_plus(
        xp, v, _eps_of(xp, eps), "the variance + eps" if centred else "the mean square + eps"
    )
    h = quotient(xp, c, r)
    gm = _flat(gamma)
    u = g if gm is None else mul(xp, g, gm)
    uc = total(xp, mul(xp, u, c), -1, keepdims=True)
    r3 = mul(xp, mul(xp, r, r), r)
    gx = quotient(xp, u, r)
    if centred:
        gx = sub(xp, gx, quotient(xp, mean(xp, u, axis=-1, keepdims=True), r))
    gx = sub(xp, gx, quotient(xp, mul(xp, c, uc), apply(xp, r3, lambda t: t * n)))
    g_eps = None
    if eps is not None:
        total_uc = add_all(xp, list(quotient(xp, uc, r3).data))
        g_eps = Tensor(eps.shape, [-total_uc / 2])
    g_gamma = None if gamma is None else unbroadcast(xp, mul(xp, g, h), gamma.shape)
    g_beta = None if beta is None else unbroadcast(xp, g, beta.shape)
    return gx, g_eps, g_gamma, g_beta


def _layernorm_vjp(
    xp: Any,
    g: Tensor,
    x: Tensor,
    eps: Tensor | None = None,
    gamma: Tensor | None = None,
    beta: Tensor | None = None,
    *,
    output: Tensor,
    unbiased: bool = False,
) -> tuple[Any, ...]:
    return _norm_vjp(xp, g, x, eps, gamma, beta, centred=True, unbiased=unbiased)


def _rmsnorm_vjp(
    xp: Any,
    g: Tensor,
    x: Tensor,
    eps: Tensor | None = None,
    gamma: Tensor | None = None,
    *,
    output: Tensor,
) -> tuple[Any, ...]:
    return _norm_vjp(xp, g, x, eps, gamma, None, centred=False)[:3]


@define(
    "layernorm",
    "norms",
    (
        Param("x"),
        Param("eps", "tensor", None, doc="default 0"),
        Param("gamma", "tensor", None, doc="default 1; a number or (d,)"),
        Param("beta", "tensor", None, doc="default 0; a number or (d,)"),
        Param("unbiased", "bool", False),
    ),
    shape=_ln_shape,
    tex=_LN,
    text="(x−μ)/√(σ²+ε)·γ+β over the last axis",
    shapes="unchanged; γ, β scalar or (d,)",
    vjp=_layernorm_vjp,
)
def layernorm(
    xp: Any,
    x: Tensor,
    eps: Tensor | None = None,
    gamma: Tensor | None = None,
    beta: Tensor | None = None,
    *,
    unbiased: bool = False,
) -> Tensor:
    """LayerNorm over the last axis: ``(x − μ)/√(σ² + ε)·γ + β``; shape unchanged.

    ``σ²`` divides by ``d`` (biased, as frameworks do) or ``d − 1`` with ``unbiased``.

    Raises:
        ModelError: When some ``σ² + ε`` is exactly 0.
    """
    mu = mean(xp, x, axis=-1, keepdims=True)
    centered = sub(xp, x, mu)
    v = mean_square.compute(xp, centered, axis=-1, keepdims=True, unbiased=unbiased)
    sd = root_plus(xp, v, _eps_of(xp, eps), "the variance + eps")
    return normalized(xp, centered, sd, _flat(gamma), _flat(beta))


def _rms_shape(x: Any, eps: Any = None, gamma: Any = None) -> tuple[int, ...]:
    check(len(x) >= 1, "rmsnorm needs at least one axis")
    if eps is not None:
        check(_size(eps) == 1, f"eps must be a single number, found shape {fmt(eps)}")
    _param_shape(gamma, x[-1], "gamma")
    return tuple(x)


@define(
    "rmsnorm",
    "norms",
    (
        Param("x"),
        Param("eps", "tensor", None, doc="default 0"),
        Param("gamma", "tensor", None, doc="default 1; a number or (d,)"),
    ),
    shape=_rms_shape,
    tex=r"\frac{x}{\sqrt{\overline{x^2}+\varepsilon}}\,\gamma",
    text="x/√(mean(x²)+ε)·γ over the last axis",
    shapes="unchanged",
    vjp=_rmsnorm_vjp,
)
def rmsnorm(xp: Any, x: Tensor, eps: Tensor | None = None, gamma: Tensor | None = None) -> Tensor:
    """RMSNorm over the last axis: ``x/√(mean(x²) + ε)·γ``; shape unchanged.

    Raises:
        ModelError: When some ``mean(x²) + ε`` is exactly 0.
    """
    ms = mean_square.compute(xp, x, axis=-1, keepdims=True)
    r = root_plus(xp, ms, _eps_of(xp, eps), "the mean square + eps")
    return normalized(xp, x, r, _flat(gamma), None)


_ = num

__all__ = ["layernorm", "norm_root", "normalize", "normalized", "rmsnorm", "root_plus"]
