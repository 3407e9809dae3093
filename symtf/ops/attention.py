"""Attention's pieces: softmax, masks above the diagonal, row normalisation, masked fills.

The softmax is written once: ``e^x`` over its sum along the axis. On a 2-D
tensor along the rows that is a native map of ``exp``, the product with a column
of ones and a division; a backend whose format computes it another way (a
framework's max-shifted float32 softmax) says so through its kernel.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

import sympy

from symtf.ops.array import (
    apply,
    as_int,
    generic,
    nat,
    require_nonzero_each,
    total,
    unbroadcast,
    wrap,
)
from symtf.ops.core import (
    Param,
    Substitution,
    along,
    axis_of,
    check,
    define,
    elementwise_shape,
    fmt,
    zero_vjp,
)
from symtf.ops.elementwise import mul, quotient, sub
from symtf.ops.shape import swap_last
from symtf.ops.working import Cell, Context, Entry, Line, Recorded, both, dims, reads, terms
from symtf.tensor import Tensor

if TYPE_CHECKING:
    from symtf.backends.protocol import Backend

X = Param("x")
_SOFTMAX = r"\operatorname{softmax}"


def _axis_shape(x: Any, *, axis: int = -1) -> tuple[int, ...]:
    check(len(x) >= 1, "softmax needs at least one axis")
    axis_of(axis, len(x))
    return tuple(x)


def softmax_tex(axis: int) -> str:
    """The LaTeX name of a softmax along the last axis (the definition) or down columns."""
    return _SOFTMAX + ("_{\\text{col}}" if axis in (-2, 0) else "")


def _softmax_display(params: Mapping[str, Any], labels: Mapping[str, str]) -> str:
    if "formula" in labels:
        return labels["formula"]
    name = softmax_tex(params.get("axis", -1))
    out, arg = labels.get("out"), labels.get("x")
    if arg is None:
        return name + "(x)"
    return (f"{out} = " if out else "") + f"{name}({arg})"


def _softmax_sub(s: Substitution) -> str | None:
    if "out" in s.labels:  # ``A = softmax(S + M)``: the node's own softmax, rows or columns
        name = softmax_tex(s.params.get("axis", -1))
    elif "x" in s.labels:  # unmasked weights, before the mask: shown without numbers
        return None
    else:
        name = _SOFTMAX
    return name + rf"\left({s.args[0]}\right)"


def _softmax_vjp(
    xp: Any, g: Tensor, x: Tensor, *, output: Tensor, axis: int = -1
) -> tuple[Any, ...]:
    gy = mul(xp, g, output)
    return (sub(xp, gy, mul(xp, output, total(xp, gy, axis, keepdims=True))),)


def _softmax_rule(params: Mapping[str, Any], labels: Mapping[str, str]) -> str:
    return r"\text{softmax " + along(params.get("axis", -1)) + "}"


def _softmax_row(ctx: Context, src: str, i: int, j: int, m: int) -> Entry:
    """``e^x[i,j] / (e^x[i,0] + …)`` over the row's entries that are not −∞."""
    v = ctx.value(src)
    ks = [k for k in range(m) if v[i, k] != sympy.S.NegativeInfinity]

    def exp(cell: Cell, k: int) -> Line:
        return Line(f"e^{{{cell(src, i, k).tex}}}", f"e^{cell(src, i, k).text}")

    def share(cell: Cell) -> Line:
        num, den = exp(cell, j), terms([exp(cell, k) for k in ks])
        return Line(rf"{num.tex} \big/ \bigl({den.tex}\bigr)", f"{num.text} / ({den.text})")

    if v[i, j] == sympy.S.NegativeInfinity:
        return share(ctx.plain_ref), Line(
            r"e^{-\infty} \big/ \bigl(\cdots\bigr) = 0", "e^−∞ / (…) = 0"
        )
    return both(ctx, share)


@reads(1)
def _softmax_work(ctx: Context, step: Recorded, i: int, j: int) -> Entry | None:
    """The entry's share of its row (none down the columns, or for weights before a mask)."""
    if step.params.get("axis", -1) != -1 or ("x" in step.labels and "out" not in step.labels):
        return None
    src = step.inputs[0]
    return _softmax_row(ctx, src, i, j, dims(ctx, src)[1])


@define(
    "softmax",
    "attention",
    (X, Param("axis", "int", -1)),
    shape=_axis_shape,
    tex=r"\frac{e^{x_i}}{\sum_j e^{x_j}}",
    text="e^{xᵢ}/Σⱼe^{xⱼ}; −∞ gives exactly 0",
    shapes="unchanged",
    display=_softmax_display,
    substitute=_softmax_sub,
    vjp=_softmax_vjp,
    rule=_softmax_rule,
    work=_softmax_work,
)
def softmax(xp: Any, x: Tensor, *, axis: int = -1) -> Tensor:
    """``e^{x_i}/Σ_j e^{x_j}`` along ``axis``; −∞ entries get exactly 0.

    Down the columns of a 2-D tensor it is the softmax of the transpose, transposed.

    Raises:
        ModelError: When every entry along the axis is −∞ (the denominator is 0).
    """
    ax = axis_of(axis, x.ndim)
    if x.ndim == 2 and ax == 0 and x.has_native():
        return swap_last(xp, softmax(xp, swap_last(xp, x), axis=-1))
    e = apply(xp, x, xp.exp)
    s = total(xp, e, ax, keepdims=True)
    require_nonzero_each(xp, s, lambda i: "the softmax denominator (every entry is −∞)")
    return quotient(xp, e, s)


def _log_softmax_vjp(
    xp: Any, g: Tensor, x: Tensor, *, output: Tensor, axis: int = -1
) -> tuple[Any, ...]:
    # y = x − ln Σ e^x: g − softmax(x)·Σ g, with softmax(x) = e^y
    return (sub(xp, g, mul(xp, apply(xp, output, xp.exp), total(xp, g, axis, keepdims=True))),)


@define(
    "log_softmax",
    "attention",
    (X, Param("axis", "int", -1)),
    shape=_axis_shape,
    tex=r"x_i - \ln \sum_j e^{x_j}",
    text="xᵢ − ln Σⱼ e^{xⱼ}",
    shapes="unchanged",
    vjp=_log_softmax_vjp,
)
def log_softmax(xp: Any, x: Tensor, *, axis: int = -1) -> Tensor:
    """``x_i − ln Σ_j e^{x_j}`` along ``axis``."""
    s = total(xp, apply(xp, x, xp.exp), axis, keepdims=True)
    require_nonzero_each(xp, s, lambda i: "the softmax denominator (every entry is −∞)")
    return sub(xp, x, apply(xp, s, xp.log))


# ----------------------------------------------------------------------------- above the diagonal


def _square_ish(s: Any, **_params: Any) -> tuple[int, ...]:
    check(len(s) == 2, f"expected a matrix of scores, found shape {fmt(s)}")
    return tuple(s)


def _mask_sub(s: Substitution) -> str | None:
    shape = s.shape
    if shape is None:
        return None
    n, m = shape
    value = s.params.get("value")
    fill = r"-\infty" if value is None else s.latex(value)
    mask = [["0" if j <= i + (m - n) else fill for j in range(m)] for i in range(n)]
    from symtf.ops.core import BREAK

    return f"{s.args[0]}{BREAK}+ {s.matrix(mask)}"


def _above_zero_vjp(
    xp: Any, g: Tensor, s: Tensor, *, output: Tensor, **_fill: Any
) -> tuple[Any, ...]:
    """A fill above the diagonal (−∞, 0 or a mask_value, constant in ``s``): the entries kept
    pass their cotangent, the filled ones none."""
    return (wrap(xp, xp.fill_above(nat(xp, g), xp.const(0)), g.shape),)


def _mask_rule(params: Mapping[str, Any], labels: Mapping[str, str]) -> str:
    value = params.get("value")
    # the fill is a number or a symbol the spec validated: SymPy's LaTeX of it
    fill = r"-\infty" if value is None else sympy.latex(value)
    return r"\text{entries above the diagonal set to } " + fill


@reads(1)
def _mask_work(ctx: Context, step: Recorded, i: int, j: int) -> Entry | None:
    """The fill above the diagonal (a later token), else the score as it is."""
    n, m = dims(ctx, step.name)
    if j > i + (m - n):
        fill = step.params.get("value")  # the file's mask_value, as the trace recorded it
        if fill is None:
            shown = Line(r"-\infty", "−∞")
        elif fill.free_symbols:
            shown = Line(sympy.latex(fill), sympy.sstr(fill).replace("-", "−"))
        else:
            shown = ctx.number(fill)
        return Line(
            rf"{shown.tex}\ (\text{{masked: a later token}})",
            f"{shown.text} (masked: a later token)",
        ), shown
    src = step.inputs[0]
    return ctx.ref(src, i, j), ctx.val(src, i, j)


@define(
    "mask_future",
    "attention",
    (Param("s"), Param("value", "value", None, doc="the fill: −∞ unless the file's mask_value")),
    shape=_square_ish,
    tex="S + M",
    text="−∞ (or the file's mask_value) above the diagonal (token i sees tokens ≤ i)",
    shapes="unchanged",
    public=False,
    substitute=_mask_sub,
    vjp=_above_zero_vjp,
    rule=_mask_rule,
    work=_mask_work,
)
def mask_future(xp: Any, s: Tensor, *, value: Any = None) -> Tensor:
    """Scores with every entry above the diagonal set to −∞ (the causal mask), or to ``value``.

    A finite ``value`` (``-10**9``, GPT-2's ``-10000``, a symbol ``m``) is what many
    implementations fill with: the masked weights are then ``e^{value − max}/Σ``, tiny
    but not zero.
    """
    fill = xp.neg_inf() if value is None else xp.const(value)
    return wrap(xp, xp.fill_above(nat(xp, s), fill), s.shape)


@define(
    "zero_future",
    "attention",
    (Param("a"),),
    shape=_square_ish,
    tex=r"W_{ij} = 0\ (j > i)",
    text="0 above the diagonal",
    shapes="unchanged",
    public=False,
    vjp=_above_zero_vjp,
)
def zero_future(xp: Any, a: Tensor) -> Tensor:
    """Weights with every entry above the diagonal set to exactly 0."""
    return wrap(xp, xp.fill_above(nat(xp, a), xp.const(0)), a.shape)


def _normalize_rows_vjp(xp: Any, g: Tensor, a: Tensor, *, output: Tensor) -> tuple[Any, ...]:
    # y = a/s, s = Σ a along the row: (g − Σ g·y)/s
    s = total(xp, a, -1, keepdims=True)
    inner = total(xp, mul(xp, g, output), -1, keepdims=True)
    return (quotient(xp, sub(xp, g, inner), s),)


@define(
    "normalize_rows",
    "attention",
    (Param("a"),),
    shape=_square_ish,
    tex=r"A_{ij} = W_{ij} / \sum_k W_{ik}",
    text="each row over its sum",
    shapes="unchanged",
    public=False,
    vjp=_normalize_rows_vjp,
)
def normalize_rows(xp: Any, a: Tensor) -> Tensor:
    """Divide each row by its sum.

    Raises:
        ModelError: When a row sums to exactly 0 (the row is named).
    """
    s = total(xp, a, -1, keepdims=True)
    require_nonzero_each(xp, s, lambda i: f"the sum of row {i}")
    return quotient(xp, a, s)


# ----------------------------------------------------------------------------- masks


def _nonzero(xp: Backend, v: Any) -> bool:
    return xp.sign(v) != 0


def _where_shape(cond: Any, a: Any, b: Any) -> tuple[int, ...]:
    return elementwise_shape(cond, a, b)


def _chosen(xp: Any, cond: Tensor, g: Tensor, where_true: bool) -> Tensor:
    """``g`` where ``cond ≠ 0`` (or where it is 0), else 0: the cotangent of one branch."""
    zero = xp.const(0)
    return generic(xp, lambda c, gi: gi if _nonzero(xp, c) == where_true else zero, cond, g)


def _where_vjp(
    xp: Any, g: Tensor, cond: Tensor, a: Tensor, b: Tensor, *, output: Tensor
) -> tuple[Any, ...]:
    ga = unbroadcast(xp, _chosen(xp, cond, g, True), a.shape)
    gb = unbroadcast(xp, _chosen(xp, cond, g, False), b.shape)
    return None, ga, gb  # the condition only chooses: no derivative


@define(
    "where",
    "attention",
    (Param("cond"), Param("a"), Param("b")),
    shape=_where_shape,
    elementwise=True,
    tex=r"\begin{cases} a & c \ne 0 \\ b & c = 0 \end{cases}",
    text="a where cond ≠ 0, else b",
    shapes="broadcast",
    vjp=_where_vjp,
)
def where(xp: Any, cond: Tensor, a: Tensor, b: Tensor) -> Tensor:
    """``a`` where ``cond ≠ 0`` (a certified test), else ``b`` (broadcast)."""
    return generic(xp, lambda c, x, y: x if _nonzero(xp, c) else y, cond, a, b)


def _masked_fill_shape(x: Any, mask: Any, value: Any) -> tuple[int, ...]:
    out = elementwise_shape(mask, value, x)
    check(
        out == tuple(x),
        f"mask of shape {fmt(mask)} does not fit x of shape {fmt(x)}",
    )
    return out


def _masked_fill_vjp(
    xp: Any, g: Tensor, x: Tensor, mask: Tensor, value: Tensor, *, output: Tensor
) -> tuple[Any, ...]:
    gx = unbroadcast(xp, _chosen(xp, mask, g, False), x.shape)
    gv = unbroadcast(xp, _chosen(xp, mask, g, True), value.shape)
    return gx, None, gv


@define(
    "masked_fill",
    "attention",
    (X, Param("mask"), Param("value")),
    shape=_masked_fill_shape,
    elementwise=True,
    tex=r"\begin{cases} v & m \ne 0 \\ x & m = 0 \end{cases}",
    text="value where mask ≠ 0 (a certified test), else x",
    shapes="shape of x",
    vjp=_masked_fill_vjp,
)
def masked_fill(xp: Any, x: Tensor, mask: Tensor, value: Tensor) -> Tensor:
    """``value`` where ``mask ≠ 0``, else ``x`` (broadcast to ``x``'s shape)."""
    return where.compute(xp, mask, value, x)


#: ``diagonal=k``: the k-th diagonal (0 the main one, k > 0 above it, k < 0 below), as torch.
DIAGONAL = Param("diagonal", "int", 0, doc="k > 0 above the main diagonal, k < 0 below")


def _tri_shape(x: Any, *, diagonal: int = 0) -> tuple[int, ...]:
    check(len(x) >= 2, f"expected at least 2 axes, found shape {fmt(x)}")
    return tuple(x)


def _triangle(xp: Any, x: Tensor, keep: Any) -> Tensor:
    zero = xp.const(0)
    return Tensor(
        x.shape,
        [v if keep(i[-2], i[-1]) else zero for i, v in zip(x.indices(), x.data, strict=True)],
    )


def _tril_vjp(
    xp: Any, g: Tensor, x: Tensor, *, output: Tensor, diagonal: int = 0
) -> tuple[Any, ...]:
    return (tril(xp, g, diagonal=diagonal),)


def _triu_vjp(
    xp: Any, g: Tensor, x: Tensor, *, output: Tensor, diagonal: int = 0
) -> tuple[Any, ...]:
    return (triu(xp, g, diagonal=diagonal),)


@define(
    "tril",
    "attention",
    (X, DIAGONAL),
    shape=_tri_shape,
    tex=r"x_{ij}\,[j \le i + k]",
    text="zero above the diagonal (k = diagonal) of the last two axes",
    shapes="unchanged",
    vjp=_tril_vjp,
)
def tril(xp: Any, x: Tensor, *, diagonal: int = 0) -> Tensor:
    """Zero above the ``diagonal``-th diagonal of the last two axes (``j > i + diagonal``)."""
    return _triangle(xp, x, lambda i, j: j <= i + diagonal)


@define(
    "triu",
    "attention",
    (X, DIAGONAL),
    shape=_tri_shape,
    tex=r"x_{ij}\,[j \ge i + k]",
    text="zero below the diagonal (k = diagonal) of the last two axes",
    shapes="unchanged",
    vjp=_triu_vjp,
)
def triu(xp: Any, x: Tensor, *, diagonal: int = 0) -> Tensor:
    """Zero below the ``diagonal``-th diagonal of the last two axes (``j < i + diagonal``)."""
    return _triangle(xp, x, lambda i, j: j >= i + diagonal)


def _causal_shape(*, n: int) -> tuple[int, ...]:
    check(n * n <= 20_000, f"expected at most 20000 entries, found shape {(n, n)}")
    return (n, n)


@define(
    "causal_mask",
    "attention",
    (Param("n", "int", lo=1),),
    shape=_causal_shape,
    tex=r"M_{ij} = \begin{cases} 0 & j \le i \\ -\infty & j > i \end{cases}",
    text="0 on and below the diagonal, −∞ above (added to scores)",
    shapes="(n, n)",
    vjp=zero_vjp,
)
def causal_mask(xp: Any, *, n: int) -> Tensor:
    """The additive causal mask: ``(n, n)``, 0 on and below the diagonal, −∞ above."""
    zero, ninf = xp.const(0), xp.neg_inf()
    return Tensor((n, n), [zero if j <= i else ninf for i in range(n) for j in range(n)])


_ = as_int

__all__ = [
    "causal_mask",
    "log_softmax",
    "mask_future",
    "masked_fill",
    "normalize_rows",
    "softmax",
    "softmax_tex",
    "tril",
    "triu",
    "where",
    "zero_future",
]
