"""One entry of a step, worked by hand: formula, numbers substituted, result.

``worked(trace, derivation, "l0.h0.scores", 1, 1)`` gives, in the handcalcs
shape, ``QKᵀ[1,1] = q[1,0]·k[1,0] + q[1,1]·k[1,1]``, then
``= 0.1·0.1 + 1.1·1.1``. Each line comes as LaTeX and as plain Unicode text.

The substituted numbers are the exact values of the inputs when they are
short decimals or fractions, else certified truncations marked ``…`` (and the
line then reads ``≈``). Which operation a step applies is read from the
formula :mod:`symtf.graph.pipeline` records; a step this module does not know gets
its general formula and no substituted line.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from fractions import Fraction
from typing import Any, TypeAlias

import sympy

from symtf.backends.certify import decimal_string
from symtf.spec import Derivation
from symtf.trace import Trace

#: Terms shown in a sum before it is elided.
MAX_TERMS = 8


@dataclass(frozen=True)
class Line:
    """One line of working, in LaTeX (math mode) and in plain text."""

    tex: str
    text: str


@dataclass(frozen=True)
class Worked:
    """How one entry is computed.

    Attributes:
        formula: The entry's formula in terms of other entries (``None`` if unknown).
        substituted: The same with the numbers written in (``None`` if not available).
        approximate: Whether a substituted number is a truncation (the line reads ``≈``).
    """

    formula: Line | None
    substituted: Line | None
    approximate: bool = False


# ----------------------------------------------------------------------------- numbers


def number(trace: Trace, e: Any) -> tuple[Line, bool]:
    """An exact value as it is written into a formula; and whether that is exact."""
    if isinstance(e, sympy.Basic) and e == sympy.S.NegativeInfinity:
        return Line(r"-\infty", "−∞"), True
    if isinstance(e, sympy.Basic) and e.is_Rational:
        q = Fraction(int(e.p), int(e.q))
        for n in range(0, 7):
            if (q * 10**n).denominator == 1:
                from symtf.numbers import format_fixed

                s = format_fixed(q, n)
                return Line(s, s.replace("-", "−")), True
        sign = "-" if q < 0 else ""
        a = abs(q)
        return Line(
            rf"{sign}\tfrac{{{a.numerator}}}{{{a.denominator}}}",
            f"{sign.replace('-', '−')}{a.numerator}/{a.denominator}",
        ), True
    backend = trace.backend
    try:
        x = backend.ball(e, 128) if hasattr(backend, "ball") else None
    except Exception:  # a symbol or an unsupported function: no number to show
        x = None
    s = decimal_string(x, 6) if x is not None else None
    if s is None:
        return Line(r"\ldots", "…"), False
    return Line(s.replace("…", r"\ldots"), s.replace("-", "−")), "…" not in s


def _paren(line: Line) -> Line:
    if line.text.startswith("−") or "/" in line.text:
        return Line(f"({line.tex})", f"({line.text})")
    return line


# ----------------------------------------------------------------------------- names


def short_name(step: str) -> str:
    """The name of a step inside its layer and head (``l0.h0.q`` → ``q``,
    ``gen.3.dec.l0.self.h0.scaled`` → ``scaled``, ``l0.ln1.mean`` → ``ln1.mean``)."""
    parts = step.split(".")
    cut = 0
    for k, p in enumerate(parts[:-1]):
        if re.fullmatch(r"[lh]\d+|\d+|self|cross|dec|enc|gen", p):
            cut = k + 1
    return ".".join(parts[cut:]) or step


def ref(step: str, i: int, j: int) -> Line:
    """An entry reference: ``q[1,0]``."""
    n = short_name(step)
    return Line(rf"\mathrm{{{_tex_name(n)}}}_{{{i},{j}}}", f"{n}[{i},{j}]")


def _tex_weight(name: str) -> str:
    """``W_Q`` → ``W^{(Q)}`` (its own subscript is the entry's index)."""
    base, _, sub = name.partition("_")
    return base + (rf"^{{(\mathrm{{{sub}}})}}" if sub else "")


def _tex_name(n: str) -> str:
    return n.replace("_", r"\_")


# ----------------------------------------------------------------------------- working


class _Ctx:
    def __init__(self, trace: Trace, d: Derivation) -> None:
        self.trace = trace
        self.d = d
        self.approx = False

    def val(self, step: str, i: int, j: int) -> Line:
        line, exact = number(self.trace, self.trace.value(step)[i, j])
        self.approx |= not exact
        return _paren(line)

    def const(self, e: Any) -> Line:
        line, exact = number(self.trace, e)
        self.approx |= not exact
        return _paren(line)


def _join(lines: Sequence[Line], tex_sep: str, text_sep: str) -> Line:
    return Line(tex_sep.join(x.tex for x in lines), text_sep.join(x.text for x in lines))


#: ``cell(step, i, j)``: how an entry is written, by name (:func:`ref`) or by value.
Cell: TypeAlias = Callable[[str, int, int], Line]


def _both(ctx: _Ctx, build: Callable[[Cell], Line]) -> tuple[Line, Line]:
    """The formula and the substituted line, when one template writes both.

    ``build(cell)`` writes the line from ``cell``: :func:`ref` gives the formula
    (``q[1,0]``), :meth:`_Ctx.val` the same line with the numbers in.
    """
    return build(ref), build(ctx.val)


def _infix(
    ctx: _Ctx, a: tuple[str, int, int], tex_op: str, text_op: str, b: tuple[str, int, int]
) -> tuple[Line, Line]:
    """``a op b`` of two entries (each ``(step, i, j)``)."""
    return _both(
        ctx,
        lambda cell: Line(
            f"{cell(*a).tex} {tex_op} {cell(*b).tex}", f"{cell(*a).text} {text_op} {cell(*b).text}"
        ),
    )


def _over(n: int, line: Line) -> Line:
    """``(line) / n`` as a mean is written."""
    return Line(rf"\tfrac{{1}}{{{n}}}\bigl({line.tex}\bigr)", f"({line.text}) / {n}")


def _sum(cells: Sequence[Line]) -> Line:
    """``a + b + …``."""
    return _join(cells, " + ", " + ")


def _mean_of_squares(ctx: _Ctx, x: str, i: int, n: int, div: int) -> tuple[Line, Line]:
    """``(x[i,0]² + … + x[i,n-1]²) / div`` (a variance of centred values, or a mean square)."""
    return _both(
        ctx,
        lambda cell: _over(
            div, _sum([Line(f"{cell(x, i, k).tex}^2", f"{cell(x, i, k).text}²") for k in range(n)])
        ),
    )


def _normalized(ctx: _Ctx, step: str, x: str, s: str, i: int, j: int) -> tuple[Line, Line]:
    """``x[i,j] / s[i,0]``, then ``·γ[j] + β[j]`` when the norm scales or shifts that column."""
    params = _norm_params(ctx.d, step)
    fs, ss = _infix(ctx, (x, i, j), "/", "/", (s, i, 0))
    if params is not None and params[0] is not None:
        g, b = params[0][0, j], params[1][0, j]
        if g != 1 or b != 0:
            gv, bv = ctx.const(g), ctx.const(b)
            fs = Line(
                rf"({fs.tex})\,\gamma_{{{j}}} + \beta_{{{j}}}", f"({fs.text})·γ[{j}] + β[{j}]"
            )
            ss = Line(rf"({ss.tex})\cdot {gv.tex} + {bv.tex}", f"({ss.text})·{gv.text} + {bv.text}")
    return fs, ss


def _sum_of_products(
    ctx: _Ctx, pairs: list[tuple[Line, Line, Line, Line]], bias: tuple[Line, Line] | None = None
) -> tuple[Line, Line]:
    """``a·b + …`` as (formula, substituted); pairs are (ref a, value a, ref b, value b)."""
    if not pairs:
        f, s = [Line("0", "0")], [Line("0", "0")]
    else:
        shown = pairs if len(pairs) <= MAX_TERMS else pairs[: MAX_TERMS - 1]
        f = [Line(rf"{a.tex}\,{b.tex}", f"{a.text}·{b.text}") for a, _, b, _ in shown]
        s = [Line(rf"{va.tex}\cdot {vb.tex}", f"{va.text}·{vb.text}") for _, va, _, vb in shown]
        if len(shown) < len(pairs):
            f.append(Line(r"\cdots", "…"))
            s.append(Line(r"\cdots", "…"))
    if bias is not None:
        f.append(bias[0])
        s.append(bias[1])
    return _sum(f), _sum(s)


def _linear(
    ctx: _Ctx,
    src: str,
    w: sympy.MatrixBase | None,
    wname: str,
    b: sympy.MatrixBase | None,
    bname: str,
    i: int,
    j: int,
    transposed: bool = False,
) -> tuple[Line, Line] | None:
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
                ref(src, i, k),
                ctx.val(src, i, k),
                Line(rf"{_tex_weight(wname)}_{{{wi[0]},{wi[1]}}}", f"{wname}[{wi[0]},{wi[1]}]"),
                ctx.const(wk),
            )
        )
    bias = None
    if b is not None and b[0, j] != 0:
        bias = (Line(f"{_tex_weight(bname)}_{{{j}}}", f"{bname}[{j}]"), ctx.const(b[0, j]))
    return _sum_of_products(ctx, pairs, bias)


def _softmax(ctx: _Ctx, src: str, i: int, j: int, m: int) -> tuple[Line, Line]:
    v = ctx.trace.value(src)
    ks = [k for k in range(m) if v[i, k] != sympy.S.NegativeInfinity]

    def exp(cell: Cell, k: int) -> Line:
        return Line(f"e^{{{cell(src, i, k).tex}}}", f"e^{cell(src, i, k).text}")

    def share(cell: Cell) -> Line:
        num, den = exp(cell, j), _sum([exp(cell, k) for k in ks])
        return Line(rf"{num.tex} \big/ \bigl({den.tex}\bigr)", f"{num.text} / ({den.text})")

    if v[i, j] == sympy.S.NegativeInfinity:
        return share(ref), Line(r"e^{-\infty} \big/ \bigl(\cdots\bigr) = 0", "e^−∞ / (…) = 0")
    return _both(ctx, share)


def _layer_head(step: str) -> tuple[int | None, int | None]:
    m = re.match(r"^l(\d+)\.(?:h(\d+)\.)?", step)
    if not m:
        return None, None
    return int(m.group(1)), (int(m.group(2)) if m.group(2) is not None else None)


def _norm_params(d: Derivation, base: str) -> tuple[Any, Any, Any] | None:
    m = re.fullmatch(r"l(\d+)\.ln([12])", base)
    model = d.model
    if m and model.architecture == "decoder":
        layer = model.layers[int(m.group(1))]
        k = m.group(2)
        eps = getattr(layer, f"ln{k}_eps")
        return (
            getattr(layer, f"ln{k}_gamma"),
            getattr(layer, f"ln{k}_beta"),
            model.eps if eps is None else eps,
        )
    if base == "ln_f" and model.final_norm:
        return (
            model.lnf_gamma,
            model.lnf_beta,
            model.eps if model.lnf_eps is None else model.lnf_eps,
        )
    for s in model.standalone:
        if s.name == base:
            return None, None, model.eps if s.eps is None else s.eps
    return None


def _entry(ctx: _Ctx, step: str, i: int, j: int) -> tuple[Line, Line] | None:
    t, d = ctx.trace, ctx.d
    st = t[step]
    f, ins = st.formula, st.inputs
    li, hi = _layer_head(step)
    model = d.model
    layer = model.layers[li] if li is not None and li < len(model.layers) else None
    head = (
        layer.heads[hi] if layer is not None and hi is not None and hi < len(layer.heads) else None
    )
    m_qkv = re.fullmatch(r"([QKV]) = X W_\1(\^\\top)?( \+ b_\1)?", f)
    if m_qkv and len(ins) == 1 and head is not None:
        L = m_qkv.group(1)
        return _linear(
            ctx,
            ins[0],
            getattr(head, f"W_{L}"),
            f"W_{L}",
            getattr(head, f"b_{L}"),
            f"b_{L}",
            i,
            j,
            bool(m_qkv.group(2)),
        )
    if f in ("Q K^\\top", "Q K") and len(ins) == 2:
        q, k = ins
        n = t.shape(q)[1]
        pairs = [
            (
                ref(q, i, c),
                ctx.val(q, i, c),
                ref(k, j, c) if f.endswith("top") else ref(k, c, j),
                ctx.val(k, j, c) if f.endswith("top") else ctx.val(k, c, j),
            )
            for c in range(n)
        ]
        return _sum_of_products(ctx, pairs)
    if f == r"S = \frac{Q K^\top}{\sqrt{d_k}}" and len(ins) == 2:
        s, r = ins
        return _infix(ctx, (s, i, j), "/", "/", (r, 0, 0))
    if f == "S + M" and len(ins) == 1:
        n, m = t.shape(step)
        if j > i + (m - n):
            return Line(
                r"-\infty\ (\text{masked: a later token})", "−∞ (masked: a later token)"
            ), Line(r"-\infty", "−∞")
        return ref(ins[0], i, j), ctx.val(ins[0], i, j)
    if (
        f.startswith("A = \\operatorname{softmax}(")
        or f
        in (
            r"P_i = \frac{e^{z_i}}{\sum_j e^{z_j}}",
            r"\operatorname{softmax}(x)",
        )
    ) and len(ins) == 1:
        return _softmax(ctx, ins[0], i, j, t.shape(ins[0])[1])
    if f == "H = A V" and len(ins) == 2:
        a, v = ins
        m = t.shape(a)[1]
        pairs = [
            (ref(a, i, c), ctx.val(a, i, c), ref(v, c, j), ctx.val(v, c, j))
            for c in range(m)
            if t.value(a)[i, c] != 0
        ]
        return _sum_of_products(ctx, pairs)
    if f == r"H = [H_1 \cdots H_h]" and ins:
        col = j
        for h in ins:
            w = t.shape(h)[1]
            if col < w:
                return ref(h, i, col), ctx.val(h, i, col)
            col -= w
        return None
    m_o = re.fullmatch(r"O = H W_O(\^\\top)?( \+ b_O)?", f)
    if m_o and len(ins) == 1 and layer is not None:
        return _linear(ctx, ins[0], layer.W_O, "W_O", layer.b_O, "b_O", i, j, bool(m_o.group(1)))
    if f in ("R_1 = X + O", "R_2 = Y + F", "X = E + P") and len(ins) == 2:
        a, b = ins
        return _infix(ctx, (a, i, j), "+", "+", (b, i, j))
    m_ffn = re.fullmatch(r"(?:F = a|Y) W_([123]) \+ b_\1", f)
    if m_ffn and len(ins) == 1 and layer is not None:
        k = m_ffn.group(1)
        return _linear(
            ctx,
            ins[0],
            getattr(layer, f"W{k}"),
            f"W_{k}",
            getattr(layer, f"b{k}"),
            f"b_{k}",
            i,
            j,
            f"W{k}" in layer.transposed,
        )
    if f == r"\mu = \frac{1}{d}\sum_j x_j" and len(ins) == 1:
        x = ins[0]
        n = t.shape(x)[1]
        return _both(ctx, lambda cell: _over(n, _sum([cell(x, i, c) for c in range(n)])))
    if f == r"x - \mu" and len(ins) == 2:
        x, mu = ins
        return _infix(ctx, (x, i, j), "-", "−", (mu, i, 0))
    if f.startswith(r"\sigma^2 = \frac{1}{d") and len(ins) == 1:
        n = t.shape(ins[0])[1]
        return _mean_of_squares(ctx, ins[0], i, n, n - 1 if "d-1" in f else n)
    if (
        f in (r"\sqrt{\sigma^2 + \varepsilon}", r"\sqrt{\overline{x^2} + \varepsilon}")
        and len(ins) == 1
    ):
        v = ins[0]
        params = _norm_params(d, step.rsplit(".", 1)[0])
        eps = sympy.S.Zero if params is None else params[2]
        if eps == 0:
            return _both(
                ctx, lambda cell: Line(rf"\sqrt{{{cell(v, i, 0).tex}}}", f"√{cell(v, i, 0).text}")
            )
        e = ctx.const(eps)
        return (
            Line(rf"\sqrt{{{ref(v, i, 0).tex} + \varepsilon}}", f"√({ref(v, i, 0).text} + ε)"),
            Line(
                rf"\sqrt{{{ctx.val(v, i, 0).tex} + {e.tex}}}",
                f"√({ctx.val(v, i, 0).text} + {e.text})",
            ),
        )
    if f == r"\frac{x-\mu}{\sqrt{\sigma^2+\varepsilon}}\,\gamma+\beta" and len(ins) == 2:
        return _normalized(ctx, step, ins[0], ins[1], i, j)
    if f in (r"\max(0, x)", r"\operatorname{relu}(\cdot)") and len(ins) == 1:
        x = ins[0]
        return _both(
            ctx,
            lambda cell: Line(rf"\max(0,\ {cell(x, i, j).tex})", f"max(0, {cell(x, i, j).text})"),
        )
    if f in (r"z = h\,W_{\text{vocab}}", r"z = h\,E^\top") and ins:
        tied = f.endswith("top")
        w = model.embed if tied else model.unembed
        return _linear(ctx, ins[0], w, "E" if tied else "W_vocab", None, "", i, j, tied)
    if f == r"E[\text{ids}]" and len(ins) == 1 and model.embed is not None:
        tok = d.tokens[i] if i < len(d.tokens) else None
        if tok is None:
            return None
        return (
            Line(
                rf"E_{{{tok},{j}}}\ (\text{{row of token {tok}}})",
                f"E[{tok},{j}] (row of token {tok})",
            ),
            ctx.const(model.embed[tok, j]),
        )
    if f in _ACT_TEXT and len(ins) == 1:
        x = ins[0]
        tex_t, text_t = _ACT_TEXT[f]
        return _both(
            ctx,
            lambda cell: Line(
                tex_t.replace("#", cell(x, i, j).tex), text_t.replace("#", cell(x, i, j).text)
            ),
        )
    if f == r"\operatorname{SiLU}(Y W_1) \odot (Y W_3)" and len(ins) == 2:
        g, u = ins  # one product, written as _sum_of_products writes each term
        return _sum_of_products(
            ctx, [(ref(g, i, j), ctx.val(g, i, j), ref(u, i, j), ctx.val(u, i, j))]
        )
    if f == r"\overline{x^2} = \frac{1}{d}\sum_j x_j^2" and len(ins) == 1:
        n = t.shape(ins[0])[1]
        return _mean_of_squares(ctx, ins[0], i, n, n)
    if f == r"\frac{x}{\sqrt{\overline{x^2}+\varepsilon}}\,\gamma+\beta" and len(ins) == 2:
        return _normalized(ctx, step, ins[0], ins[1], i, j)
    m_rot = re.fullmatch(r"R_p\\,([QK])_p", f)
    if m_rot and len(ins) == 1:
        return _rope(ctx, ins[0], i, j)
    if f == "h = Y[-1]" and len(ins) == 1:
        n = t.shape(ins[0])[0]
        return ref(ins[0], n - 1, j), ctx.val(ins[0], n - 1, j)
    if f == "" and len(ins) == 1 and t.shape(ins[0]) == t.shape(step):
        return ref(ins[0], i, j), ctx.val(ins[0], i, j)
    return None


#: Element-wise activations as recorded → (LaTeX, text) with ``#`` for the argument.
_ACT_TEXT = {
    r"\tfrac{x}{2}\bigl(1+\operatorname{erf}(x/\sqrt{2})\bigr)": (
        r"\tfrac{#}{2}\bigl(1+\operatorname{erf}(#/\sqrt{2})\bigr)",
        "#/2·(1 + erf(#/√2))",
    ),
    r"\tfrac{x}{2}\bigl(1+\tanh\bigl(\sqrt{2/\pi}\,(x+0.044715x^3)\bigr)\bigr)": (
        r"\tfrac{#}{2}\bigl(1+\tanh\bigl(\sqrt{2/\pi}\,(# + 0.044715\cdot #^3)\bigr)\bigr)",
        "#/2·(1 + tanh(√(2/π)·(# + 0.044715·#³)))",
    ),
    r"\frac{x}{1+e^{-x}}": (r"\frac{#}{1+e^{-#}}", "# / (1 + e^(−#))"),
}


def _rope(ctx: _Ctx, src: str, p: int, j: int) -> tuple[Line, Line] | None:
    """A rotated feature: ``(a, b) → (a cos θ − b sin θ, a sin θ + b cos θ)``, ``θ = p·base^(−2i/d)``."""
    model = ctx.d.model
    shape = ctx.trace.shape(src)
    if shape is None:
        return None
    d = shape[1]
    half = d // 2
    pairs = (
        [(2 * k, 2 * k + 1) for k in range(half)]
        if getattr(model, "rope_pairs", "adjacent") == "adjacent"
        else [(k, k + half) for k in range(half)]
    )
    k, (a, b) = next((k, ab) for k, ab in enumerate(pairs) if j in ab)
    angle = sympy.Integer(p) * model.pos_base ** sympy.Rational(-2 * k, d)
    th = ctx.const(angle)
    ra, rb = ref(src, p, a), ref(src, p, b)
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


def worked(trace: Trace, derivation: Derivation, step: str, i: int, j: int) -> Worked:
    """The working for ``step[i, j]`` (never raises: an unknown step gets no lines)."""
    ctx = _Ctx(trace, derivation)
    try:
        pair = _entry(ctx, step, i, j)
    except (KeyError, IndexError, TypeError, AttributeError):
        pair = None
    if pair is None:
        return Worked(None, None)
    f, s = pair
    return Worked(f, s, ctx.approx)


__all__ = ["Line", "Worked", "number", "ref", "short_name", "worked"]
