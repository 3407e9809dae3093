"""A what-if run for people (a terminal report) and for programs (JSON): closed forms,
certified values and derivatives, and interval ends written outward.
"""

from __future__ import annotations

import math
from fractions import Fraction
from typing import Any

import sympy

from symtf.checking.wording import place
from symtf.numbers import format_fixed
from symtf.renderers.plain import to_text
from symtf.teach.whatif.results import MAX_SET_SYMBOLS, MAX_SYMBOL_PANELS, Partial, WhatIf
from symtf.teach.whatif.symbols import Weight
from symtf.visible import json_text


def _dec(q: Fraction, digits: int = 10, *, up: bool = False) -> str:
    """``q`` to ``digits`` significant digits, rounded down (or up), trailing zeros dropped.

    Outer bounds of an interval are written outward (the lower end down, the upper
    end up), so the printed interval still contains the true one.
    """
    if q == 0:
        return "0"
    k = max(digits - 1 - math.floor(math.log10(abs(q))), 0)
    scale = Fraction(10) ** k
    n = math.ceil(q * scale) if up else math.floor(q * scale)
    text = format_fixed(Fraction(n) / scale, k)
    return text.rstrip("0").rstrip(".") if "." in text else text


def _interval_text(iv: tuple[Fraction, Fraction, Fraction, Fraction]) -> str:
    ol, il, ih, oh = iv
    slack = max(il - ol, oh - ih)
    within = "exact ends" if slack == 0 else f"each end certified within {_dec(slack, 2, up=True)}"
    return f"[{_dec(ol)}, {_dec(oh, up=True)}] ({within})"


def typeset(v: Any) -> str:
    """An expression or symbol typeset for a terminal: ``1/2``, ``√2``, ``e^(a/2)``, ``w₁,₂``."""
    return to_text(sympy.latex(v))


def _entry(label: str, index: tuple[int, ...]) -> str:
    """A followed entry for people: ``A_1, row 2, column 1`` (counted from 1)."""
    return f"{label}, {place(index, None)}"


def _header(r: WhatIf) -> list[str]:
    """One line per ``--symbol`` (a whole matrix on one line)."""
    out = []
    by_source: dict[str, list[Weight]] = {}
    for w in r.weights:
        by_source.setdefault(w.source or w.name, []).append(w)
    for ws in by_source.values():
        w = ws[0]
        lo, hi = r.range_of(w)
        if len(ws) == 1:
            out.append(
                f"{w.name} = {typeset(w.symbol)} (the file has {typeset(w.value)}); "
                f"range [{lo}, {hi}]"
            )
        else:
            stem = str(w.symbol).split("_{")[0]
            rows = 1 + max(x.index[0] for x in ws if x.index)
            cols = 1 + max(x.index[1] for x in ws if x.index)
            out.append(
                f"{w.where} = {stem}: {typeset(sympy.Symbol(stem + '_{i,j}'))} for row i, column j "
                f"({rows}x{cols} symbols, one per entry, counted from 1); range [{lo}, {hi}]"
            )
    return out


def _at(r: WhatIf) -> str:
    if len(r.weights) == 1:
        return f"{typeset(r.weight.symbol)} = {typeset(r.weight.value)}"
    if len(r.weights) <= 3:
        return ", ".join(f"{typeset(w.symbol)} = {typeset(w.value)}" for w in r.weights)
    return "the file's values"


def render_text(r: WhatIf) -> str:
    """The result as text."""
    single = len(r.weights) == 1
    out = [f"{r.title}", *_header(r), ""]
    if not r.searched:
        out += [
            f"({len(r.weights)} symbols: closed forms and partial derivatives only; correct-"
            f"rounding intervals are searched for at most {MAX_SET_SYMBOLS} symbols)",
            "",
        ]
    for o in r.outputs:
        out.append(_entry(o.label, o.index))
        if not o.depends:
            names = ", ".join(typeset(w.symbol) for w in r.weights[:3])
            more = ", …" if len(r.weights) > 3 else ""
            out.append(f"  does not depend on {names}{more}")
            continue
        out.append(
            f"  = {typeset(o.closed)}"
            if o.closed is not None
            else "  closed form: too long to show (see the plot)"
        )
        out.append(f"  at {_at(r)}: {o.value or 'not certified'}")
        for part in o.partials:
            w = part.weight
            if part.derivative_exact is not None:  # exact; its certified decimal when pinned
                exact = typeset(part.derivative_exact)
                pinned = part.derivative and part.derivative != exact  # not "1 ≈ 1"
                shown = exact + (f" ≈ {part.derivative}" if pinned else "")
            else:
                shown = part.derivative or "not certified"
            if single:
                out.append(f"  d/d{typeset(w.symbol)} at {typeset(w.value)}: {shown}")
            else:
                out.append(f"  ∂/∂{typeset(w.symbol)} at the file's values: {shown}")
        for part in o.partials:
            if o.printed is None or not part.searched:
                continue
            w = part.weight
            held = ""
            if not single:
                others = [x for x in r.weights if x is not w]
                held = (
                    " (with "
                    + ", ".join(f"{typeset(x.symbol)} = {typeset(x.value)}" for x in others)
                    + (", the file's values)" if len(others) > 1 else ", the file's value)")
                )
            if part.intervals:
                spans = "; ".join(_interval_text(iv) for iv in part.intervals)
                out.append(
                    f"  printed {o.printed} is a correct rounding for {typeset(w.symbol)} in "
                    f"{spans}{held}"
                )
            else:
                out.append(
                    f"  printed {o.printed} is a correct rounding for no {typeset(w.symbol)} in "
                    f"the range{held}"
                )
            if part.unresolved:
                out.append(
                    f"  (undecided in {len(part.unresolved)} stretch(es), no interval claimed across one; e.g. [{_dec(part.unresolved[0][0])}, {_dec(part.unresolved[0][1])}])"
                )
            if part.stopped:
                out.append(f"  (the search stopped early: {part.stopped})")
    if not r.complete:
        total = len(r.outputs) + len(r.not_reached)
        line_ = f"PARTIAL: {r.stopped}: {len(r.outputs)} of {total} entries finished"
        if r.not_reached:
            shown = "; ".join(_entry(lab, ij) for lab, ij in r.not_reached[:8])
            more = f" and {len(r.not_reached) - 8} more" if len(r.not_reached) > 8 else ""
            line_ += f"; not reached: {shown}{more}"
        if r.cut_short:
            cut = "; ".join(f"{_entry(lab, ij)} in {s}" for lab, ij, s in r.cut_short[:8])
            line_ += f"; interval search cut short (unresolved stretches listed above): {cut}"
        out += ["", line_]
    out += ["", f"roots: {r.method}"]
    if r.plots:
        out.append("plots: " + ", ".join(r.plots))
        if len(r.weights) > MAX_SYMBOL_PANELS:
            drawn = ", ".join(typeset(w.symbol) for w in r.weights[:MAX_SYMBOL_PANELS])
            out.append(
                f"  (whatif.png draws the first {MAX_SYMBOL_PANELS} of {len(r.weights)} "
                f"symbols: {drawn}; each with the others at the file's values)"
            )
    return "\n".join(out) + "\n"


def render_json(r: WhatIf) -> str:
    """The result as JSON (exact interval ends as fractions ``p/q``).

    The top-level ``weight``, ``symbol``, ``value`` and ``range`` and each output's
    ``derivative`` and ``intervals`` are the first symbol's (the only one's, with one
    ``--symbol`` entry); ``symbols`` and each output's ``partials`` give every symbol.
    """

    def q(x: Fraction) -> str:
        return f"{x.numerator}/{x.denominator}" if x.denominator != 1 else str(x.numerator)

    def spans(p: Partial) -> list[dict[str, list[str]]]:
        return [{"outer": [q(a), q(d_)], "inner": [q(b), q(c)]} for a, b, c, d_ in p.intervals]

    def exact(x: sympy.Expr | None) -> str | None:
        return None if x is None else sympy.sstr(x)

    first = r.weight
    data = {
        "file": r.path,
        "weight": first.name,
        "symbol": str(first.symbol),
        "value": str(first.value),
        "range": [q(x) for x in r.range_of(first)],
        "symbols": [
            {
                "weight": w.name,
                "symbol": str(w.symbol),
                "value": str(w.value),
                "range": [q(x) for x in r.range_of(w)],
                "from": w.source,
            }
            for w in r.weights
        ],
        "method": r.method,
        "complete": r.complete,
        "cut_short": [
            {"label": lab, "index": list(ij), "symbol": sym} for lab, ij, sym in r.cut_short
        ],
        "stopped": r.stopped or None,
        "not_reached": [{"label": lab, "index": list(ij)} for lab, ij in r.not_reached],
        "outputs": [
            {
                "label": o.label,
                "step": o.step,
                "index": list(o.index),
                "printed": o.printed,
                "depends": o.depends,
                "closed_form": exact(o.closed),
                "value": o.value,
                "derivative": o.derivative,
                "derivative_exact": exact(o.derivative_exact),
                "intervals": spans(o._first()),
                "unresolved": [[q(a), q(b)] for a, b in o.unresolved],
                "partials": [
                    {
                        "symbol": str(p.weight.symbol),
                        "derivative": p.derivative,
                        "derivative_exact": exact(p.derivative_exact),
                        "searched": p.searched,
                        "intervals": spans(p),
                        "unresolved": [[q(a), q(b)] for a, b in p.unresolved],
                        "others_at_file_values": len(r.weights) > 1,
                    }
                    for p in o.partials
                ],
            }
            for o in r.outputs
        ],
        "plots": r.plots,
    }
    return json_text(data, indent=2) + "\n"
