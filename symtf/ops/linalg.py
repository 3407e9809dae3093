"""Matrix products: ``a @ b`` (batched, numpy's rules), a linear layer, a scale by a divisor.

A 2-D product is one native product of the backend (BLAS for midpoint–radius,
``arb_mat`` for balls); batched and 1-D operands follow numpy.
"""

from __future__ import annotations

import functools
import math
from collections.abc import Mapping
from typing import Any

from symtf.ops.array import add_all, broadcast_to, nat, wrap
from symtf.ops.core import BREAK, Param, Substitution, broadcast_shape, check, define, fmt
from symtf.ops.elementwise import add, mul, times
from symtf.ops.working import Context, Entry, Line, Recorded, dims, infix, reads, sum_of_products
from symtf.tensor import Tensor


def _matmul_shape(a: Any, b: Any, *, transpose_b: bool = False) -> tuple[int, ...]:
    if not a or not b:
        return broadcast_shape(a, b)  # a one-entry operand scales the other
    if transpose_b:
        check(len(b) >= 2, f"cannot transpose the 1-D operand {fmt(b)}")
        b = (*b[:-2], b[-1], b[-2])
    a2 = (1, *a) if len(a) == 1 else tuple(a)
    b2 = (*b, 1) if len(b) == 1 else tuple(b)
    (n, k), (k2, m) = a2[-2:], b2[-2:]
    check(
        k == k2,
        f"cannot multiply shapes {fmt(a)} and {fmt(b)}: {k} ≠ {k2} (inner dimensions)",
    )
    batch = broadcast_shape(a2[:-2], b2[:-2])
    shape: tuple[int, ...] = (*batch, n, m)
    if len(b) == 1:
        shape = shape[:-1]
    if len(a) == 1:
        shape = (*shape[:-2], shape[-1]) if len(b) > 1 else shape[:-1]
    return shape


@functools.lru_cache(maxsize=1024)
def _product_shape(a: tuple[int, ...], b: tuple[int, ...], transpose_b: bool) -> tuple[int, ...]:
    # the product's shape, worked out once per pair of shapes (the rule writes its message
    # eagerly, and a search multiplies the same few shapes thousands of times)
    return _matmul_shape(a, b, transpose_b=transpose_b)


def _matmul_display(params: Mapping[str, Any], labels: Mapping[str, str]) -> str:
    out = labels.get("out")
    body = f"{labels.get('a', 'A')} {labels.get('b', 'B')}" + (
        r"^\top" if params.get("transpose_b") else ""
    )
    return f"{out} = {body}" if out else body


def _matmul_sub(s: Substitution) -> str:
    t = r"^\top" if s.params.get("transpose_b") else ""
    return f"{s.args[0]}{s.args[1]}{t}"


def _matmul_vjp(
    xp: Any, g: Tensor, a: Tensor, b: Tensor, *, output: Tensor, transpose_b: bool = False
) -> tuple[Any, ...]:
    from symtf.ops.array import unbroadcast
    from symtf.ops.shape import swap_last

    if a.ndim == 0 or b.ndim == 0:
        return unbroadcast(xp, mul(xp, g, b), a.shape), unbroadcast(xp, mul(xp, g, a), b.shape)
    bb = swap_last(xp, b) if transpose_b else b
    a2 = a.reshape((1, *a.shape)) if a.ndim == 1 else a
    b2 = bb.reshape((*bb.shape, 1)) if bb.ndim == 1 else bb
    g2 = g.reshape((*a2.shape[:-1], b2.shape[-1])) if g.ndim < max(a2.ndim, b2.ndim) else g
    ga = matmul(xp, g2, swap_last(xp, b2))
    gb = matmul(xp, swap_last(xp, a2), g2)
    ga = unbroadcast(xp, ga, a2.shape).reshape(a.shape)
    gb = unbroadcast(xp, gb, b2.shape).reshape(bb.shape)
    return ga, swap_last(xp, gb) if transpose_b else gb


@reads(2)
def _matmul_work(ctx: Context, step: Recorded, i: int, j: int) -> Entry | None:
    """``a[i,0]·b[0,j] + …`` (``b[j,0]`` for ``a·bᵀ``); an attention pattern's masked
    weights (labelled ``skip_zero_terms``) left out."""
    a, b = step.inputs
    tb = bool(step.params.get("transpose_b"))
    n = dims(ctx, a)[1]
    skip = "skip_zero_terms" in step.labels
    pairs = [
        (
            ctx.ref(a, i, c),
            ctx.val(a, i, c),
            ctx.ref(b, j, c) if tb else ctx.ref(b, c, j),
            ctx.val(b, j, c) if tb else ctx.val(b, c, j),
        )
        for c in range(n)
        if not (skip and ctx.value(a)[i, c] == 0)
    ]
    return sum_of_products(pairs)


@define(
    "matmul",
    "linalg",
    (Param("a"), Param("b"), Param("transpose_b", "bool", False)),
    shape=_matmul_shape,
    tex=r"(AB)_{ij} = \sum_k A_{ik} B_{kj}",
    text="Σₖ aᵢₖ bₖⱼ",
    shapes="(…, n, k) @ (…, k, m) → (…, n, m); 1-D operands are vectors",
    public=False,
    spelling="a @ b; a × b",
    display=_matmul_display,
    substitute=_matmul_sub,
    vjp=_matmul_vjp,
    rule=r"\text{matrix product}",
    work=_matmul_work,
)
def matmul(xp: Any, a: Tensor, b: Tensor, *, transpose_b: bool = False) -> Tensor:
    """``a @ b`` as numpy (``a @ bᵀ`` with ``transpose_b``); a one-entry operand scales the other."""
    if a.ndim == 0 or b.ndim == 0:
        return mul(xp, a, b)
    if a.ndim <= 2 and b.ndim == 2:
        bm = nat(xp, b)
        if transpose_b:
            bm = xp.transpose(bm)
        am = nat(xp, a)  # a 1-D ``a`` is one row
        om = xp.matmul(am, bm)
        return wrap(xp, om, _product_shape(a.shape, b.shape, transpose_b))
    if transpose_b:
        from symtf.ops.shape import swap_last

        b = swap_last(xp, b)
    a2 = a.reshape((1, *a.shape)) if a.ndim == 1 else a
    b2 = b.reshape((*b.shape, 1)) if b.ndim == 1 else b
    (n, k), (_, m) = a2.shape[-2:], b2.shape[-2:]
    batch = broadcast_shape(a2.shape[:-2], b2.shape[:-2])
    a3 = broadcast_to(a2, (*batch, n, k))
    b3 = broadcast_to(b2, (*batch, k, m))
    out: list[Any] = []
    da, db = a3.data, b3.data
    for bi in range(math.prod(batch)):
        ra = da[bi * n * k : (bi + 1) * n * k]
        rb = db[bi * k * m : (bi + 1) * k * m]
        prod = xp.matmul(
            xp.from_rows([list(ra[i * k : (i + 1) * k]) for i in range(n)]),
            xp.from_rows([list(rb[i * m : (i + 1) * m]) for i in range(k)]),
        )
        out.extend(xp.entry(prod, i, j) for i in range(n) for j in range(m))
    return Tensor(_matmul_shape(a.shape, b.shape), out)


# ----------------------------------------------------------------------------- a layer


def _linear_shape(x: Any, *, w: Any, bias: Any = None, transposed: bool = False) -> tuple[int, ...]:
    rows, cols = (w.cols, w.rows) if transposed else (w.rows, w.cols)
    check(len(x) == 2, f"a linear layer needs rows of features, found shape {fmt(x)}")
    n, d_in = x
    check(d_in == rows, f"cannot multiply {n}x{d_in} by {rows}x{cols}")
    if bias is not None:
        check(
            tuple(bias.shape) == (1, cols),
            f"bias of shape {tuple(bias.shape)} does not fit (1, {cols})",
        )
    return (n, cols)


def _linear_display(params: Mapping[str, Any], labels: Mapping[str, str]) -> str:
    out, x, w = labels.get("out"), labels.get("x", "X"), labels.get("w", "W")
    t = r"^\top" if params.get("transposed") or labels.get("tied") else ""
    b = f" + {labels.get('b', 'b')}" if params.get("bias") is not None else ""
    body = f"{x} {w}{t}{b}" if not labels.get("tight") else f"{x}\\,{w}{t}{b}"
    return f"{out} = {body}" if out else body


def _linear_sub(s: Substitution) -> str:
    if s.labels.get("tied"):  # the embedding table, transposed (its transpose is ``w``)
        return f"{s.args[0]}{s.value('w', True)}^\\top"
    t = r"^\top" if s.params.get("transposed") else ""
    body = f"{s.args[0]}{s.value('w', False)}{t}"
    if s.params.get("bias") is None:
        return body
    return f"{body}{BREAK}+ {s.value('bias', False)}"


def _linear_vjp(
    xp: Any,
    g: Tensor,
    x: Tensor,
    *,
    output: Tensor,
    w: Any,
    bias: Any = None,
    transposed: bool = False,
) -> tuple[Any, ...]:
    """``g·Wᵀ`` (``g·W`` for ``x·Wᵀ``); the file's weights are settings, not inputs."""
    wm = xp.matrix(w)
    gx = xp.matmul(nat(xp, g), wm if transposed else xp.transpose(wm))
    return (wrap(xp, gx, x.shape),)


def _linear_rule(params: Mapping[str, Any], labels: Mapping[str, str]) -> str:
    if params.get("bias") is None:
        return r"\text{matrix product}"
    return r"\text{matrix product, plus the bias}"


def _tex_weight(name: str) -> str:
    """``W_Q`` → ``W^{(Q)}`` (its own subscript is the entry's index)."""
    base, _, sub = name.partition("_")
    return base + (rf"^{{(\mathrm{{{sub}}})}}" if sub else "")


def _weighted_sum(
    ctx: Context,
    src: str,
    w: Any,
    wname: str,
    b: Any,
    bname: str,
    i: int,
    j: int,
    transposed: bool = False,
) -> Entry | None:
    """``src[i,k]·W[k,j]`` summed over the nonzero weights, then ``+ b[j]`` if it is not 0."""
    if w is None:
        return None
    rows = w.cols if transposed else w.rows
    pairs = []
    for k in range(rows):
        wk = w[j, k] if transposed else w[k, j]
        if wk == 0:
            continue  # a zero weight adds nothing: leave the term out, as by hand
        wi = (j, k) if transposed else (k, j)
        pairs.append(
            (
                ctx.ref(src, i, k),
                ctx.val(src, i, k),
                Line(rf"{_tex_weight(wname)}_{{{wi[0]},{wi[1]}}}", f"{wname}[{wi[0]},{wi[1]}]"),
                ctx.const(wk),
            )
        )
    bias = None
    if b is not None and b[0, j] != 0:
        bias = (Line(f"{_tex_weight(bname)}_{{{j}}}", f"{bname}[{j}]"), ctx.const(b[0, j]))
    return sum_of_products(pairs, bias)


@reads(1)
def _linear_work(ctx: Context, step: Recorded, i: int, j: int) -> Entry | None:
    """``x[i,0]·W[0,j] + … + b[j]`` with the file's weights, named by the step's labels."""
    p, lab = step.params, step.labels
    w, transposed = p["w"], bool(p.get("transposed"))
    if lab.get("tied"):  # x·Eᵀ: written with the entries of the embedding table E
        w, transposed = w.T, True
    wname = lab.get("w_text", lab.get("w", "W"))
    bname = lab.get("b", "b")
    return _weighted_sum(ctx, step.inputs[0], w, wname, p.get("bias"), bname, i, j, transposed)


@define(
    "linear",
    "linalg",
    (
        Param("x"),
        Param("w", "value", doc="the file's weight matrix"),
        Param("bias", "value", None, doc="the file's 1 × d_out bias row", label="b"),
        Param("transposed", "bool", False, doc="x·Wᵀ (the W·x habit)"),
    ),
    shape=_linear_shape,
    tex=r"x W + b",
    text="x·W + b",
    shapes="(n, d_in) → (n, d_out)",
    public=False,
    display=_linear_display,
    substitute=_linear_sub,
    vjp=_linear_vjp,
    rule=_linear_rule,
    work=_linear_work,
)
def linear(xp: Any, x: Tensor, *, w: Any, bias: Any = None, transposed: bool = False) -> Tensor:
    """``x·W + b`` (or ``x·Wᵀ + b``) with the file's weights: ``[n, d_in] -> [n, d_out]``."""
    wm = xp.matrix(w)
    if transposed:
        wm = xp.transpose(wm)
    y = xp.matmul(nat(xp, x), wm)
    shape = (x.shape[0], xp.shape(y)[1])
    if bias is None:
        return wrap(xp, y, shape)
    return add(xp, wrap(xp, y, shape), wrap(xp, xp.matrix(bias), (1, shape[1])))


# ----------------------------------------------------------------------------- a divisor


def sum_all(xp: Any, t: Tensor) -> Any:
    """Every entry of ``t`` added up, as a backend scalar."""
    return add_all(xp, list(t.data))


def _scale_shape(s: Any, d: Any) -> tuple[int, ...]:
    if d is not None:
        check(math.prod(d) == 1, f"the divisor must be a single number, found shape {fmt(d)}")
    return tuple(s)


def _scale_sub(s: Substitution) -> str:
    return f"\\frac{{1}}{{{s.args[1]}}}{s.args[0]}"


def _scale_vjp(xp: Any, g: Tensor, s: Tensor, d: Tensor, *, output: Tensor) -> tuple[Any, ...]:
    # S/d: by S, g/d; by d, −Σ g·S/d²
    divisor = d.item()
    xp.require_nonzero(divisor, "the attention scale divisor")
    gs = times(xp, g, 1 / divisor)
    gd = -sum_all(xp, mul(xp, g, s)) / (divisor * divisor)
    return gs, Tensor(d.shape, [gd])


def _scale_rule(params: Mapping[str, Any], labels: Mapping[str, str]) -> str:
    return r"\text{each entry divided by } " + labels.get("d", r"\text{the divisor}")


@reads(2)
def _scale_work(ctx: Context, step: Recorded, i: int, j: int) -> Entry | None:
    """``s[i,j] / d[0,0]``."""
    s, r = step.inputs
    return infix(ctx, (s, i, j), "/", "/", (r, 0, 0))


@define(
    "scale",
    "linalg",
    (Param("s"), Param("d")),
    shape=_scale_shape,
    tex=r"\frac{S}{d}",
    text="S / d",
    shapes="(n, m), () → (n, m)",
    public=False,
    display=lambda params, labels: labels.get("formula", r"\frac{S}{d}"),
    substitute=_scale_sub,
    vjp=_scale_vjp,
    rule=_scale_rule,
    work=_scale_work,
)
def scale(xp: Any, s: Tensor, d: Tensor) -> Tensor:
    """Every entry of ``s`` times ``1/d`` for the single number ``d`` (the attention scale).

    Raises:
        ModelError: When ``d`` is exactly 0.
    """
    divisor = d.item()
    xp.require_nonzero(divisor, "the attention scale divisor")
    return times(xp, s, 1 / divisor)


__all__ = ["linear", "matmul", "scale"]
