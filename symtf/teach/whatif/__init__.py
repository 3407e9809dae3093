"""What if a weight were different? Make it a symbol and follow the outputs.

``whatif("i_love_ai.toml", "l0.h0.W_Q[0,0]=a", -2, 2)`` replaces that weight by
the real symbol ``a`` and runs the exact pipeline, which works on symbols as on
numbers. Several ``--symbol``s may be given (``["l0.h0.W_Q[0,0]=a", "eps=e"]``),
a whole matrix (``l0.h0.W_Q=w``: one symbol ``w_{i,j}`` per entry) or a setting
(``scale=t``, ``l0.h1.scale=t``, ``eps=e``, ``temperature=T``). A bare name
(``a``) follows a symbol the file itself declares with a value in ``[symbols]``,
over its declared range unless ``--range a=…`` gives another. For each chosen
printed output it gives:

- the closed form when it is short (exact; ``together``/``cancel`` only,
  never ``simplify``; a size cap);
- its value and partial derivative in each symbol at the file's values, exact
  when the closed form is short and always as a certified decimal;
- for one or two symbols, the values of each symbol in its range (the other at
  the file's value) for which the printed number is a correct rounding, with
  certified endpoints;
- plots over the ranges (matplotlib, PNG and SVG): one column per symbol, each
  printed value's rounding band shaded; and ``sharpness.png``, each head's
  softmax rows against the score divisor.

A run cut short by the ``--timeout`` budget keeps what finished and names the
rest (:attr:`WhatIf.not_reached`, :attr:`WhatIf.cut_short`).

Certification. Values and derivatives are enclosed by forward-mode
differentiation in ball arithmetic (python-flint ``arb``) over the exact
expression DAG, with ``a`` a point or a whole interval. The roots of
``value(a) − boundary`` are isolated by subdivision: a cell whose value
enclosure excludes the boundary holds no root; a cell whose derivative
enclosure excludes 0 is monotone, so a sign change at its exact rational ends
proves exactly one root there, narrowed by bisection on exact-point
evaluations. A cell that cannot be settled within the budget is reported as
unresolved, never guessed.

This module follows the outputs; the symbols (:mod:`~symtf.teach.whatif.symbols`), the
records of what it finds (:mod:`~symtf.teach.whatif.results`), the plots
(:mod:`~symtf.teach.whatif.plots`) and the text and JSON reports
(:mod:`~symtf.teach.whatif.render`) are modules of their own.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from fractions import Fraction
from pathlib import Path

import sympy

from symtf import files, roots
from symtf.backends.certify import time_left
from symtf.backends.decimals import decimal_string
from symtf.checking.evaluation import _fit, selection
from symtf.errors import BudgetExpired, Undecided
from symtf.numbers import Printed, rounding_interval
from symtf.roots import Dual, isolate
from symtf.spec import Derivation, Model, load
from symtf.teach.whatif.plots import plot_sharpness, plot_values
from symtf.teach.whatif.render import render_json, render_text
from symtf.teach.whatif.results import MAX_SYMBOL_PANELS, Output, Partial, Sharpness, WhatIf
from symtf.teach.whatif.symbols import (
    WhatIfError,
    parse_range,
    parse_ranges,
    substitute,
    substitute_all,
)
from symtf.trace import Trace

#: Longest closed form shown (characters of SymPy's text).
MAX_FORMULA_CHARS = 300
#: Largest closed form expanded from the step DAG (expression nodes).
MAX_FORMULA_OPS = 400
#: Entries followed when no ``--claims`` are given.
DEFAULT_ENTRIES = 12
#: Most printed entries ``--claims`` may ask to follow (each costs a certified root search).
MAX_ENTRIES = 200
#: Seconds of the ``--timeout`` budget below which no further entry is started (the rest
#: is reported as not reached; what is left draws and writes what finished).
ENTRY_RESERVE_SECONDS = 0.5


def _closed(trace: Trace, e: sympy.Expr) -> sympy.Expr | None:
    closed = trace.backend.closed_form(e, MAX_FORMULA_OPS)
    if closed is None:
        return None
    if sympy.count_ops(closed) <= 120:
        shorter = sympy.together(closed)
        if len(sympy.sstr(shorter)) < len(sympy.sstr(closed)):
            closed = shorter
    return closed if len(sympy.sstr(closed)) <= MAX_FORMULA_CHARS else None


def _choose(
    d: Derivation, trace: Trace, labels: list[str] | None, syms: set[sympy.Symbol]
) -> list[tuple[str, str, tuple[int, ...], Printed]]:
    """(label, step, index, printed) of each followed entry."""
    claims = {c.label: c for c in d.claims}
    if labels is not None:
        chosen = []
        for lab in dict.fromkeys(labels):  # a label named twice is followed once
            if lab not in claims:
                import difflib

                close = difflib.get_close_matches(lab, list(claims), n=3)
                hint = f"; did you mean {', '.join(repr(c) for c in close)}?" if close else ""
                raise WhatIfError(f"--claims: no claim labelled {lab!r} in {d.path}{hint}")
            chosen.append(claims[lab])
    else:
        chosen = list(d.claims)
    out = []
    backend = trace.backend
    for c in chosen:
        if c.step is None or c.reduce is not None or c.word is not None or c.step not in trace:
            if labels is not None:
                raise WhatIfError(f"--claims: {c.label!r} is not printed numbers of a step")
            continue
        shape = trace.shape(c.step)
        if shape is None:
            continue
        for ij, p in _fit(c, selection(c, shape)):
            e = trace.value(c.step)[ij]
            if labels is None and (p.is_neg_inf or not syms & backend.user_symbols(e)):
                continue
            out.append((c.label, c.step, ij, p))
            if len(out) > MAX_ENTRIES:
                raise WhatIfError(
                    f"--claims: the claims named print more than {MAX_ENTRIES} entries; "
                    f"whatif follows at most {MAX_ENTRIES} (name fewer claims)"
                )
        if labels is None and len(out) >= DEFAULT_ENTRIES:
            break
    return out[:DEFAULT_ENTRIES] if labels is None else out


def whatif(
    path: Path,
    symbol: str | Sequence[str],
    lo: Fraction,
    hi: Fraction,
    *,
    claims: list[str] | None = None,
    out: Path | None = None,
    points: int = 121,
    ranges: dict[str, tuple[Fraction, Fraction]] | None = None,
    draw: bool = False,
    derivation: Derivation | None = None,
) -> WhatIf:
    """Follow printed outputs as weights or settings become symbols (see the module docstring).

    Args:
        path: The derivation file.
        symbol: One ``--symbol`` text, or several.
        lo: Lower end of the default range.
        hi: Upper end of the default range.
        claims: Labels to follow (default: the first entries that depend on a symbol).
        out: Folder for the plots and ``whatif.json`` (none written when ``None``).
        points: Plot points per symbol.
        ranges: Ranges of single symbols by name, over the default.
        draw: Whether the caller writes the plots itself (:func:`write`): the sharpness
            plot's scores are then read too, as they are with ``out``.
        derivation: The derivation, already read (an article drafted in memory);
            ``path`` is then only its name.

    Raises:
        WhatIfError: For a weight, label or range that does not fit.
    """
    from symtf.graph.pipeline import run

    if not 2 <= points <= 2001:
        raise WhatIfError(f"--points: expected 2 to 2001, found {points}")
    texts = [symbol] if isinstance(symbol, str) else list(symbol)
    d0 = derivation if derivation is not None else load(path)
    d, ws = substitute_all(d0, texts)
    names = {str(w.symbol) for w in ws}
    for key in ranges or {}:
        if key not in names:
            raise WhatIfError(f"--range {key}=…: no --symbol is named {key!r}")
    # A symbol the file declares with a range is followed over it unless --range names it.
    own = {n: s.range for n, s in d0.symbols.items() if n in names and s.range is not None}
    ranges = {**own, **(ranges or {})}
    trace = run(d)
    labels = _labels(claims, d)
    syms = {w.symbol for w in ws}
    entries = _choose(d, trace, labels, syms)
    defs = trace.backend.defs
    # The file's own symbols that are not followed are held at their declared values.
    held: dict[sympy.Symbol, sympy.Expr] = {
        s.symbol: sympy.Rational(s.value.numerator, s.value.denominator)
        for n, s in d0.symbols.items()
        if s.value is not None and n not in names
    }
    duals = {
        w.symbol: Dual(defs, w.symbol, {**held, **{v.symbol: v.value for v in ws if v is not w}})
        for w in ws
    }
    brackets = {w.symbol: w.bracket() for w in ws}  # a 2⁻²⁰⁰ rational bracket of √2
    result = WhatIf(str(path), d0.title, ws, lo, hi, [], [], dict(ranges or {}))
    values = {**held, **{w.symbol: w.value for w in ws}}
    try:
        for label, step, ij, p in entries:
            left = time_left()
            if left is not None and left < ENTRY_RESERVE_SECONDS:
                raise BudgetExpired(str(path))
            result.outputs.append(
                _follow(result, trace, d, duals, brackets, values, label, step, ij, p, points)
            )
    except BudgetExpired:  # keep what finished; the command reports the rest as not reached
        result.stopped = "the --timeout budget ran out"
        done = len(result.outputs)
        result.not_reached = [(lab, ij) for lab, _, ij, _ in entries[done:]]
    result.cut_short = [
        (o.label, o.index, str(p.weight.symbol))
        for o in result.outputs
        for p in o.partials
        if "--timeout" in p.stopped
    ]
    if result.cut_short and not result.stopped:
        result.stopped = "the --timeout budget was nearly used up"
    if (out is not None or draw) and not result.not_reached:
        try:
            result.sharpness = _sharpness(d0, trace, duals[ws[0].symbol], brackets[ws[0].symbol])
        except BudgetExpired:  # the picture only: the report stands without it
            result.sharpness = []
    if out is not None:
        write(result, out)
    return result


def write(result: WhatIf, out: Path) -> None:
    """Write the plots and ``whatif.json`` into ``out``: together, or not at all."""
    with files.OutputFolder(out) as folder:
        result.plots = plot_values(result, folder) + plot_sharpness(result, folder)
        folder.write_text("whatif.json", render_json(result))


def _follow(
    r: WhatIf,
    trace: Trace,
    d: Derivation,
    duals: dict[sympy.Symbol, Dual],
    brackets: dict[sympy.Symbol, tuple[Fraction, Fraction]],
    values: dict[sympy.Symbol, sympy.Expr],
    label: str,
    step: str,
    ij: tuple[int, ...],
    p: Printed,
    points: int,
) -> Output:
    """One entry: closed form, value, partial derivatives, intervals and samples."""
    e = trace.value(step)[ij]
    used = trace.backend.user_symbols(e)
    dep = [w for w in r.weights if w.symbol in used]
    o = Output(label, step, ij, None if p is None or p.is_neg_inf else p.text, bool(dep))
    if not dep or e == sympy.S.NegativeInfinity:
        return o
    o.closed = _closed(trace, e)
    first = dep[0].symbol
    o.value, _ = _certified(duals[first], e, *brackets[first])
    claim = next(c for c in d.claims if c.label == label)
    if o.printed is not None:
        iv = rounding_interval(p, claim.rounding)
        o.band = (iv.lo, iv.hi)
    short = o.closed is not None and sympy.count_ops(o.closed) <= 200
    for w in dep:
        part = Partial(w)
        _, part.derivative = _certified(duals[w.symbol], e, *brackets[w.symbol])
        if short:
            der = sympy.diff(o.closed, w.symbol).xreplace(values)
            if not der.has(sympy.Heaviside, sympy.DiracDelta, sympy.Derivative, sympy.Subs):
                if sympy.count_ops(der) <= 120:
                    der = min((der, sympy.together(der)), key=lambda x: len(sympy.sstr(x)))
                if len(sympy.sstr(der)) <= MAX_FORMULA_CHARS:
                    part.derivative_exact = der
        lo, hi = r.range_of(w)
        if o.printed is not None and r.searched:
            found = roots.rounding_set(
                duals[w.symbol], e, rounding_interval(p, claim.rounding), lo, hi
            )
            part.intervals = [(x.left.lo, x.left.hi, x.right.lo, x.right.hi) for x in found.pieces]
            part.unresolved, part.stopped, part.searched = found.unresolved, found.stopped, True
            part.contains_value = any(_within(w.value, a, b) for a, _, _, b in part.intervals)
        if any(w is x for x in r.weights[:MAX_SYMBOL_PANELS]):  # the plot's columns
            part.samples = _samples(duals[w.symbol], e, lo, hi, points)
        o.partials.append(part)
    return o


def _sharpness(
    d: Derivation, trace: Trace, dual: Dual, bracket: tuple[Fraction, Fraction]
) -> list[Sharpness]:
    """Each head's scores ``QKᵀ`` at the file's values (floats, for the picture only)."""
    from symtf.graph.conventions import score_divisor

    m = d.model
    if not isinstance(m, Model):
        return []
    out = []
    for li, layer in enumerate(m.layers):
        for hi_, head in enumerate(layer.heads):
            name = f"l{li}.h{hi_}"
            if f"{name}.scores" not in trace:
                continue
            scores = trace.value(f"{name}.scores")
            # without a mask there is no masked step: every score takes part
            masked = trace.value(f"{name}.masked") if f"{name}.masked" in trace else scores
            rows: list[list[float]] = []
            for i in range(scores.rows):
                row: list[float] = []
                for j in range(scores.cols):
                    if masked[i, j] == sympy.S.NegativeInfinity:
                        row.append(-math.inf)
                        continue
                    try:
                        v, _ = dual.at(scores[i, j], *bracket, 64)
                    except (ZeroDivisionError, ValueError, TypeError, Undecided):
                        return []
                    row.append(float(v.mid()))
                rows.append(row)
            out.append(Sharpness(name, score_divisor(m, head), rows))
    return out


def _labels(claims: list[str] | None, d: Derivation) -> list[str] | None:
    if not claims:
        return None
    known = {c.label for c in d.claims}
    out: list[str] = []
    for raw in claims:
        if raw in known:
            out.append(raw)
        else:
            out.extend(p.strip() for p in raw.split(",") if p.strip())
    return out


def _within(a: sympy.Expr, lo: Fraction, hi: Fraction) -> bool:
    """``lo ≤ a ≤ hi`` exactly (``a`` rational or algebraic, like √2)."""
    if a.is_Rational:
        q = Fraction(int(a.p), int(a.q))
        return lo <= q <= hi
    return bool(sympy.Rational(lo.numerator, lo.denominator) <= a) and bool(
        a <= sympy.Rational(hi.numerator, hi.denominator)
    )


def _certified(
    dual: Dual, e: sympy.Expr, a_lo: Fraction, a_hi: Fraction
) -> tuple[str | None, str | None]:
    """Certified decimals of the value and derivative at the file's value (a point, or a
    tight rational bracket of an irrational one: the enclosure over it holds the value)."""
    v_s = d_s = None
    for prec in (128, 256, 512, 1024):
        try:
            v, dv = dual.at(e, a_lo, a_hi, prec)
        except (ZeroDivisionError, ValueError, TypeError, Undecided):
            return None, None
        v_s = v_s or decimal_string(v, 16)
        d_s = d_s or decimal_string(dv, 16)
        if v_s and d_s:
            break
    return v_s, d_s


def _samples(
    dual: Dual, e: sympy.Expr, lo: Fraction, hi: Fraction, n: int
) -> list[tuple[float, float]]:
    out = []
    for k in range(n):
        a = lo + (hi - lo) * k / (n - 1)
        try:
            v, _ = dual.at(e, a, a, 64)
        except (ZeroDivisionError, ValueError, TypeError, Undecided):
            continue
        if v.is_finite():
            out.append((float(a), float(v.mid())))
    return out


__all__ = [
    "Dual",
    "Output",
    "Partial",
    "WhatIf",
    "WhatIfError",
    "isolate",
    "parse_range",
    "parse_ranges",
    "render_text",
    "substitute",
    "substitute_all",
    "whatif",
    "write",
]
