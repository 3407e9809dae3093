"""One entry of a step, worked by hand: formula, numbers substituted, result.

``worked(trace, derivation, "l0.h0.scores", 1, 1)`` gives, in the handcalcs
shape, ``QKᵀ[1,1] = q[1,0]·k[1,0] + q[1,1]·k[1,1]``, then
``= 0.1·0.1 + 1.1·1.1``. Each line comes as LaTeX and as plain Unicode text.

The substituted numbers are the exact values of the inputs when they are
short decimals or fractions, else certified truncations marked ``…`` (and the
line then reads ``≈``). Which operation a step applies is the op the trace
recorded (:mod:`symtf.ops`), with its parameters (the file's weights, ε, the
rotary pairing); a step of an op this module has no working for gets its
general formula and no substituted line.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from fractions import Fraction
from typing import Any, TypeAlias, cast

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
    shown = decimal_string(x, 6) if x is not None else None
    if shown is None:
        return Line(r"\ldots", "…"), False
    return Line(shown.replace("…", r"\ldots"), shown.replace("-", "−")), "…" not in shown


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
    def __init__(self, trace: Trace, d: Derivation, names: dict[str, str] | None = None) -> None:
        self.trace = trace
        self.d = d
        self.approx = False
        self.names = names

    def ref(self, step: str, i: int, j: int) -> Line:
        """An entry reference: ``q[1,0]``; with names, counted from 1 and under the
        article's label where it has one (``S_1`` row 2, column 1 as ``S_1[2,1]``)."""
        if self.names is None:
            return ref(step, i, j)
        label = self.names.get(step)
        if label is None:
            n = short_name(step)
            return Line(rf"\mathrm{{{_tex_name(n)}}}_{{{i + 1},{j + 1}}}", f"{n}[{i + 1},{j + 1}]")
        from symtf.renderers.latex import math_text

        return Line(
            "{" + math_text(label) + "}_{" + f"{i + 1},{j + 1}" + "}", f"{label}[{i + 1},{j + 1}]"
        )

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
    return build(ctx.ref), build(ctx.val)


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


def _normalized(
    ctx: _Ctx, gamma: Any, beta: Any, x: str, s: str, i: int, j: int
) -> tuple[Line, Line]:
    """``x[i,j] / s[i,0]``, then ``·γ[j] + β[j]`` when the norm scales or shifts that column."""
    fs, ss = _infix(ctx, (x, i, j), "/", "/", (s, i, 0))
    if gamma is not None and beta is not None:
        g, b = gamma[0, j], beta[0, j]
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


def _shape(trace: Trace, step: str) -> tuple[int, ...]:
    """The shape of a step worked entry by entry here (each is a matrix step)."""
    return cast(tuple[int, ...], trace.shape(step))


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
                ctx.ref(src, i, k),
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


Entry = tuple[Line, Line]


def _linear_entry(ctx: _Ctx, st: Any, i: int, j: int) -> Entry | None:
    p, lab = st.params, st.labels
    w, transposed = p["w"], bool(p.get("transposed"))
    if lab.get("tied"):  # x·Eᵀ: written with the entries of the embedding table E
        w, transposed = w.T, True
    wname = lab.get("w_text", lab.get("w", "W"))
    bname = lab.get("b", "b")
    return _linear(ctx, st.inputs[0], w, wname, p.get("bias"), bname, i, j, transposed)


def _matmul_entry(ctx: _Ctx, st: Any, i: int, j: int) -> Entry | None:
    t = ctx.trace
    a, b = st.inputs
    tb = bool(st.params.get("transpose_b"))
    n = _shape(t, a)[1]
    skip = "skip_zero_terms" in st.labels  # an attention pattern's masked weights: left out
    pairs = [
        (
            ctx.ref(a, i, c),
            ctx.val(a, i, c),
            ctx.ref(b, j, c) if tb else ctx.ref(b, c, j),
            ctx.val(b, j, c) if tb else ctx.val(b, c, j),
        )
        for c in range(n)
        if not (skip and t.value(a)[i, c] == 0)
    ]
    return _sum_of_products(ctx, pairs)


def _mask_entry(ctx: _Ctx, st: Any, i: int, j: int) -> Entry | None:
    n, m = _shape(ctx.trace, st.name)
    if j > i + (m - n):
        fill = st.params.get("value")  # the file's mask_value, as the trace recorded it
        if fill is None:
            shown = Line(r"-\infty", "−∞")
        elif fill.free_symbols:
            shown = Line(sympy.latex(fill), sympy.sstr(fill).replace("-", "−"))
        else:
            shown = number(ctx.trace, fill)[0]
        return Line(
            rf"{shown.tex}\ (\text{{masked: a later token}})",
            f"{shown.text} (masked: a later token)",
        ), shown
    src = st.inputs[0]
    return ctx.ref(src, i, j), ctx.val(src, i, j)


def _softmax_entry(ctx: _Ctx, st: Any, i: int, j: int) -> Entry | None:
    if st.params.get("axis", -1) != -1 or ("x" in st.labels and "out" not in st.labels):
        return None  # down the columns, or the weights before a mask: no row-wise working
    src = st.inputs[0]
    return _softmax(ctx, src, i, j, _shape(ctx.trace, src)[1])


def _concat_entry(ctx: _Ctx, st: Any, i: int, j: int) -> Entry | None:
    col = j
    for h in st.inputs:
        w = _shape(ctx.trace, h)[1]
        if col < w:
            return ctx.ref(h, i, col), ctx.val(h, i, col)
        col -= w
    return None


def _infix_entry(tex: str, text: str) -> Callable[[_Ctx, Any, int, int], Entry | None]:
    def entry(ctx: _Ctx, st: Any, i: int, j: int) -> Entry | None:
        a, b = st.inputs
        bi, bj = (i, 0) if _shape(ctx.trace, b)[1] == 1 else (i, j)  # a column broadcast
        return _infix(ctx, (a, i, j), tex, text, (b, bi, bj))

    return entry


def _scale_entry(ctx: _Ctx, st: Any, i: int, j: int) -> Entry | None:
    s, r = st.inputs
    return _infix(ctx, (s, i, j), "/", "/", (r, 0, 0))


def _mean_entry(ctx: _Ctx, st: Any, i: int, j: int) -> Entry | None:
    x = st.inputs[0]
    n = _shape(ctx.trace, x)[1]
    return _both(ctx, lambda cell: _over(n, _sum([cell(x, i, c) for c in range(n)])))


def _mean_square_entry(ctx: _Ctx, st: Any, i: int, j: int) -> Entry | None:
    x = st.inputs[0]
    n = _shape(ctx.trace, x)[1]
    return _mean_of_squares(ctx, x, i, n, n - 1 if st.params.get("unbiased") else n)


def _root_entry(ctx: _Ctx, st: Any, i: int, j: int) -> Entry | None:
    v = st.inputs[0]
    eps = st.params.get("eps", 0)
    if eps == 0:
        return _both(
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


def _normalize_entry(ctx: _Ctx, st: Any, i: int, j: int) -> Entry | None:
    x, s = st.inputs
    return _normalized(ctx, st.params.get("gamma"), st.params.get("beta"), x, s, i, j)


def _relu_entry(ctx: _Ctx, st: Any, i: int, j: int) -> Entry | None:
    x = st.inputs[0]
    return _both(
        ctx,
        lambda cell: Line(rf"\max(0,\ {cell(x, i, j).tex})", f"max(0, {cell(x, i, j).text})"),
    )


#: Element-wise activations by op → (LaTeX, text) with ``#`` for the argument.
_ACT_TEXT = {
    "gelu": (
        r"\tfrac{#}{2}\bigl(1+\operatorname{erf}(#/\sqrt{2})\bigr)",
        "#/2·(1 + erf(#/√2))",
    ),
    "gelu_tanh": (
        r"\tfrac{#}{2}\bigl(1+\tanh\bigl(\sqrt{2/\pi}\,(# + 0.044715\cdot #^3)\bigr)\bigr)",
        "#/2·(1 + tanh(√(2/π)·(# + 0.044715·#³)))",
    ),
    "silu": (r"\frac{#}{1+e^{-#}}", "# / (1 + e^(−#))"),
}


def _activation_entry(op: str) -> Callable[[_Ctx, Any, int, int], Entry | None]:
    tex_t, text_t = _ACT_TEXT[op]

    def entry(ctx: _Ctx, st: Any, i: int, j: int) -> Entry | None:
        x = st.inputs[0]
        return _both(
            ctx,
            lambda cell: Line(
                tex_t.replace("#", cell(x, i, j).tex), text_t.replace("#", cell(x, i, j).text)
            ),
        )

    return entry


def _embed_entry(ctx: _Ctx, st: Any, i: int, j: int) -> Entry | None:
    ids, table = st.params["ids"], st.params["table"]
    if i >= len(ids):
        return None
    tok = ids[i]
    return (
        Line(
            rf"E_{{{tok},{j}}}\ (\text{{row of token {tok}}})",
            f"E[{tok},{j}] (row of token {tok})",
        ),
        ctx.const(table[tok, j]),
    )


def _product_entry(ctx: _Ctx, st: Any, i: int, j: int) -> Entry | None:
    g, u = st.inputs  # one product, written as _sum_of_products writes each term
    return _sum_of_products(
        ctx, [(ctx.ref(g, i, j), ctx.val(g, i, j), ctx.ref(u, i, j), ctx.val(u, i, j))]
    )


def _rope_entry(ctx: _Ctx, st: Any, i: int, j: int) -> Entry | None:
    return _rope(ctx, st.inputs[0], i, j, st.params.get("pairs", "adjacent"), st.params["base"])


def _last_row_entry(ctx: _Ctx, st: Any, i: int, j: int) -> Entry | None:
    y = st.inputs[0]
    n = _shape(ctx.trace, y)[0]
    return ctx.ref(y, n - 1, j), ctx.val(y, n - 1, j)


def _identity_entry(ctx: _Ctx, st: Any, i: int, j: int) -> Entry | None:
    x = st.inputs[0]
    if ctx.trace.shape(x) != ctx.trace.shape(st.name):
        return None
    return ctx.ref(x, i, j), ctx.val(x, i, j)


#: The working of one entry, by the op the trace recorded (each takes ``(ctx, step, i, j)``).
_ENTRIES: dict[str, Callable[[_Ctx, Any, int, int], Entry | None]] = {
    "linear": _linear_entry,
    "matmul": _matmul_entry,
    "scale": _scale_entry,
    "mask_future": _mask_entry,
    "softmax": _softmax_entry,
    "concat": _concat_entry,
    "add": _infix_entry("+", "+"),
    "sub": _infix_entry("-", "−"),
    "mean": _mean_entry,
    "mean_square": _mean_square_entry,
    "norm_root": _root_entry,
    "normalize": _normalize_entry,
    "relu": _relu_entry,
    "gelu": _activation_entry("gelu"),
    "gelu_tanh": _activation_entry("gelu_tanh"),
    "silu": _activation_entry("silu"),
    "embed": _embed_entry,
    "mul": _product_entry,
    "rope": _rope_entry,
    "last_row": _last_row_entry,
    "identity": _identity_entry,
}

#: How many inputs each working reads (a step recorded with other inputs gets none).
_ARITY = {"matmul": 2, "scale": 2, "add": 2, "sub": 2, "mul": 2, "normalize": 2}


def _entry(ctx: _Ctx, step: str, i: int, j: int) -> Entry | None:
    st = ctx.trace[step]
    fn = _ENTRIES.get(st.op)
    if fn is None or (len(st.inputs) != _ARITY.get(st.op, 1) and st.op != "concat"):
        return None
    if st.op == "concat" and not st.inputs:
        return None
    return fn(ctx, st, i, j)


def _rope(ctx: _Ctx, src: str, p: int, j: int, pairing: str, base: Any) -> tuple[Line, Line] | None:
    """A rotated feature: ``(a, b) → (a cos θ − b sin θ, a sin θ + b cos θ)``, ``θ = p·base^(−2i/d)``."""
    shape = ctx.trace.shape(src)
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


def worked(
    trace: Trace,
    derivation: Derivation,
    step: str,
    i: int,
    j: int,
    names: dict[str, str] | None = None,
) -> Worked:
    """The working for ``step[i, j]`` (never raises: an unknown step gets no lines).

    Args:
        names: Labels to name entries by (``l0.h0.scaled`` → ``S_1``); with it, every
            entry is counted from 1 (steps without a label keep their short names).
    """
    ctx = _Ctx(trace, derivation, names)
    try:
        pair = _entry(ctx, step, i, j)
    except (KeyError, IndexError, TypeError, AttributeError):
        pair = None
    if pair is None:
        return Worked(None, None)
    f, s = pair
    return Worked(f, s, ctx.approx)


__all__ = ["Line", "Worked", "number", "ref", "short_name", "worked"]
