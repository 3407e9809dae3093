"""What if one weight were different? Make it a symbol and follow the outputs.

``whatif("i_love_ai.toml", "l0.h0.W_Q[0,0]=a", -2, 2)`` replaces that weight by
the real symbol ``a`` and runs the exact pipeline, which works on symbols as on
numbers. For each chosen printed output it gives:

- the closed form in ``a`` when it is short (exact; ``together``/``cancel`` only,
  never ``simplify``; a size cap);
- its value and derivative at the file's own value of the weight, exact when
  the closed form is short and always as a certified decimal;
- the values of ``a`` in the range for which the printed number is a correct
  rounding, with certified endpoints;
- a plot over the range (matplotlib, PNG and SVG).

Certification. Values and derivatives are enclosed by forward-mode
differentiation in ball arithmetic (python-flint ``arb``) over the exact
expression DAG, with ``a`` a point or a whole interval. The roots of
``value(a) − boundary`` are isolated by subdivision: a cell whose value
enclosure excludes the boundary holds no root; a cell whose derivative
enclosure excludes 0 is monotone, so a sign change at its exact rational ends
proves exactly one root there, narrowed by bisection on exact-point
evaluations. A cell that cannot be settled within the budget is reported as
unresolved, never guessed.
"""

from __future__ import annotations

import dataclasses
import json
import logging
import math
import re
from collections.abc import Callable
from dataclasses import dataclass, field
from fractions import Fraction
from pathlib import Path
from typing import Any

import sympy

from symtf import files, roots
from symtf.backends.certify import decimal_string
from symtf.checking.evaluation import _fit, selection
from symtf.errors import SpecError, SymtfError, Undecided
from symtf.numbers import Printed, format_fixed, parse_exact, rounding_interval
from symtf.renderers.safe import line
from symtf.roots import Dual, isolate
from symtf.spec import Derivation, Model, load
from symtf.spec.weights import HEAD_MATRICES, LAYER_MATRICES, MODEL_MATRICES
from symtf.trace import Trace

#: Longest closed form shown (characters of SymPy's text).
MAX_FORMULA_CHARS = 300
#: Largest closed form expanded from the step DAG (expression nodes).
MAX_FORMULA_OPS = 400
#: Entries followed when no ``--claims`` are given.
DEFAULT_ENTRIES = 12
#: Most printed entries ``--claims`` may ask to follow (each costs a certified root search).
MAX_ENTRIES = 200
#: Most claims drawn (one panel each) in the plot.
MAX_PANELS = 8

#: A setting made a symbol: the model's score divisor, one head's, or the norms' ε.
_SETTING = re.compile(
    r"^\s*(?P<where>(?:l\d+\.h\d+\.)?scale|eps)\s*=\s*(?P<name>[A-Za-z][A-Za-z0-9_]{0,30})\s*$"
)

_SYMBOL = re.compile(
    r"^\s*(?P<where>[A-Za-z0-9_.]+)\s*\[\s*(?P<i>\d+)\s*,\s*(?P<j>\d+)\s*\]\s*=\s*(?P<name>[A-Za-z][A-Za-z0-9_]{0,30})\s*$"
)


class WhatIfError(SymtfError, ValueError):
    """The weight or range asked for does not exist or does not fit."""


# ----------------------------------------------------------------------------- the weight


def parse_range(text: str) -> tuple[Fraction, Fraction]:
    """``"-2:2"`` → ``(-2, 2)``, exact.

    Raises:
        WhatIfError: When it is not ``LO:HI`` with ``LO < HI``.
    """
    lo_s, sep, hi_s = text.partition(":")
    if not sep:
        raise WhatIfError(f"--range: expected LO:HI like -2:2, found {text!r}")
    try:
        lo, hi = parse_exact(lo_s, where="--range"), parse_exact(hi_s, where="--range")
    except SpecError as e:
        raise WhatIfError(str(e)) from None
    if not lo < hi:
        raise WhatIfError(f"--range: expected LO < HI, found {text!r}")
    return lo, hi


def _locate(
    d: Derivation, where: str
) -> tuple[sympy.MatrixBase, Callable[[sympy.ImmutableMatrix], Derivation]]:
    m = d.model
    if not isinstance(m, Model) or m.architecture not in ("decoder", "attention"):
        raise WhatIfError(
            f"{d.path}: whatif supports decoder and attention-only models, found {m.architecture!r}"
        )
    mh = re.fullmatch(r"l(\d+)\.h(\d+)\.(\w+)", where)
    ml = re.fullmatch(r"l(\d+)\.(\w+)", where)
    if mh and mh.group(3) in HEAD_MATRICES:
        li, hi, k = int(mh.group(1)), int(mh.group(2)), mh.group(3)
        if li >= len(m.layers) or hi >= len(m.layers[li].heads):
            raise WhatIfError(f"--symbol: no head {where.rsplit('.', 1)[0]} in {d.path}")
        mat = getattr(m.layers[li].heads[hi], k)

        def set_head(new: sympy.ImmutableMatrix) -> Derivation:
            heads = list(m.layers[li].heads)
            heads[hi] = dataclasses.replace(heads[hi], **{k: new})
            layers = list(m.layers)
            layers[li] = dataclasses.replace(layers[li], heads=tuple(heads))
            return dataclasses.replace(d, model=dataclasses.replace(m, layers=tuple(layers)))

        setter = set_head
    elif ml and ml.group(2) in LAYER_MATRICES:
        li, k = int(ml.group(1)), ml.group(2)
        if li >= len(m.layers):
            raise WhatIfError(f"--symbol: no layer l{li} in {d.path}")
        mat = getattr(m.layers[li], k)

        def set_layer(new: sympy.ImmutableMatrix) -> Derivation:
            layers = list(m.layers)
            layers[li] = dataclasses.replace(layers[li], **{k: new})
            return dataclasses.replace(d, model=dataclasses.replace(m, layers=tuple(layers)))

        setter = set_layer
    elif where in MODEL_MATRICES:
        if where == "unembed" and m.tied:
            raise WhatIfError(
                "--symbol: unembed is the tied embedding here; make embed[i,j] the symbol"
            )
        mat = getattr(m, where)

        def set_model(new: sympy.ImmutableMatrix) -> Derivation:
            return dataclasses.replace(d, model=dataclasses.replace(m, **{where: new}))

        setter = set_model
    else:
        raise WhatIfError(
            f"--symbol: expected a weight like l0.h0.W_Q, l0.W1, embed or unembed, found {where!r}"
        )
    if mat is None:
        raise WhatIfError(f"--symbol: {where} is not part of this model")
    return mat, setter


@dataclass(frozen=True)
class Weight:
    """The weight (or setting) made a symbol.

    Attributes:
        where: The weight (``l0.h0.W_Q``) or setting (``scale``, ``l0.h1.scale``, ``eps``).
        index: The weight's entry, or ``None`` for a setting.
        symbol: The real symbol that replaces it.
        value: The file's own value, exact (``√2`` for an unstated scale of a 2-wide head).
    """

    where: str
    index: tuple[int, int] | None
    symbol: sympy.Symbol
    value: sympy.Expr

    @property
    def name(self) -> str:
        """How the command line names it: ``l0.h0.W_Q[0,0]``, ``scale``."""
        return (
            self.where if self.index is None else f"{self.where}[{self.index[0]},{self.index[1]}]"
        )

    def bracket(self, bits: int = 200) -> tuple[Fraction, Fraction]:
        """Rationals ``lo ≤ value ≤ hi``, equal when the value is rational, else within 2⁻ᵇⁱᵗˢ."""
        if self.value.is_Rational:
            q = Fraction(int(self.value.p), int(self.value.q))
            return q, q
        from flint import ctx

        from symtf.backends.certify import ball, exact_fraction

        with ctx.workprec(bits + 20):  # the ends rounded outward at this precision, not 53 bits
            b = ball(self.value, bits + 20)
            lo, hi = b.lower(), b.upper()
        return exact_fraction(lo), exact_fraction(hi)


def substitute(d: Derivation, text: str) -> tuple[Derivation, Weight]:
    """The derivation with one weight replaced by a real symbol.

    Raises:
        WhatIfError: For a malformed ``WEIGHT[i,j]=NAME``, an index out of range, or a
            weight that is not a number.
    """
    setting = _SETTING.match(text)
    if setting:
        return _substitute_setting(d, setting.group("where"), setting.group("name"))
    m = _SYMBOL.match(text)
    if not m:
        raise WhatIfError(
            f'--symbol: expected WEIGHT[i,j]=NAME like "l0.h0.W_Q[0,0]=a", or a setting '
            f"(scale=t, l0.h1.scale=t, eps=e), found {text!r}"
        )
    where, i, j, name = m.group("where"), int(m.group("i")), int(m.group("j")), m.group("name")
    mat, setter = _locate(d, where)
    if not (i < mat.rows and j < mat.cols):
        raise WhatIfError(f"--symbol: {where} is {mat.rows}x{mat.cols}; no entry [{i},{j}]")
    v = mat[i, j]
    if not v.is_Rational:
        raise WhatIfError(f"--symbol: {where}[{i},{j}] is {v}, not a number")
    sym = sympy.Symbol(name, real=True)
    taken = {str(s) for x in _all_weights(d) for s in x.free_symbols}
    if name in taken:
        raise WhatIfError(f"--symbol: the name {name!r} is already a symbol of this model")
    new = mat.as_mutable()
    new[i, j] = sym
    return setter(sympy.ImmutableMatrix(new)), Weight(where, (i, j), sym, v)


def _substitute_setting(d: Derivation, where: str, name: str) -> tuple[Derivation, Weight]:
    """The derivation with the score divisor (model's or one head's) or ε as a symbol."""
    from symtf.graph.conventions import score_divisor

    m = d.model
    if not isinstance(m, Model) or m.architecture not in ("decoder", "attention"):
        raise WhatIfError(
            f"{d.path}: whatif supports decoder and attention-only models, found "
            f"{getattr(m, 'architecture', type(m).__name__)!r}"
        )
    taken = {str(s) for x in _all_weights(d) for s in x.free_symbols}
    for v in (m.scale, m.eps):
        if isinstance(v, sympy.Basic):
            taken |= {str(s) for s in v.free_symbols}
    if name in taken:
        raise WhatIfError(f"--symbol: the name {name!r} is already a symbol of this model")
    sym = sympy.Symbol(name, real=True)
    if where == "eps":
        value = m.eps
        new = dataclasses.replace(d, model=dataclasses.replace(m, eps=sym))
        overridden = [
            f"l{i}"
            for i, layer in enumerate(m.layers)
            if layer.ln1_eps is not None or layer.ln2_eps is not None
        ]
        if overridden:
            raise WhatIfError(
                f"--symbol: eps: layers {', '.join(overridden)} set their own ε; the model's is not the one they use"
            )
    elif where == "scale":
        own = [
            f"l{i}.h{j}"
            for i, layer in enumerate(m.layers)
            for j, h in enumerate(layer.heads)
            if h.scale is not None
        ]
        if own:
            raise WhatIfError(
                f"--symbol: scale: heads {', '.join(own)} set their own scale; name one, like {own[0]}.scale=t"
            )
        heads = [h for layer in m.layers for h in layer.heads]
        if not heads:
            raise WhatIfError(f"--symbol: scale: {d.path} has no attention heads")
        value = score_divisor(m, heads[0])  # every head's, since none sets its own
        new = dataclasses.replace(d, model=dataclasses.replace(m, scale=sym))
    else:
        li, hi = (int(x) for x in re.findall(r"\d+", where)[:2])
        if li >= len(m.layers) or hi >= len(m.layers[li].heads):
            raise WhatIfError(f"--symbol: no head l{li}.h{hi} in {d.path}")
        head = m.layers[li].heads[hi]
        value = score_divisor(m, head)
        heads = list(m.layers[li].heads)
        heads[hi] = dataclasses.replace(head, scale=sym)
        layers = list(m.layers)
        layers[li] = dataclasses.replace(layers[li], heads=tuple(heads))
        new = dataclasses.replace(d, model=dataclasses.replace(m, layers=tuple(layers)))
    if isinstance(value, int):
        value = sympy.Integer(value)
    if value.free_symbols or not value.is_real:
        raise WhatIfError(f"--symbol: {where} is {value}, not a number")
    return new, Weight(where, None, sym, value)


def _all_weights(d: Derivation) -> list[sympy.MatrixBase]:
    m = d.model
    out = [x for x in (m.embed, m.pos, m.unembed) if x is not None]
    for layer in m.layers:
        out += [getattr(layer, k) for k in LAYER_MATRICES if getattr(layer, k, None) is not None]
        for h in layer.heads:
            out += [getattr(h, k) for k in HEAD_MATRICES if getattr(h, k) is not None]
    return out


# ----------------------------------------------------------------------------- roots


def rounding_set(
    dual: Dual, e: sympy.Expr, printed: Any, mode: str, lo: Fraction, hi: Fraction
) -> tuple[list[tuple[Fraction, Fraction, Fraction, Fraction]], list[tuple[Fraction, Fraction]]]:
    """The ``a`` in ``[lo, hi]`` for which ``printed`` is a correct rounding of ``e(a)``.

    Returns:
        Intervals as ``(outer_lo, inner_lo, inner_hi, outer_hi)``: the true interval
        contains ``[inner_lo, inner_hi]``, and an end at a root lies within
        ``[outer_lo, inner_lo]`` (``[inner_hi, outer_hi]``); no interval is claimed
        across a cell left unresolved, which is listed too.
    """
    found = roots.rounding_set(dual, e, rounding_interval(printed, mode), lo, hi)
    spans = [(p.left.lo, p.left.hi, p.right.lo, p.right.hi) for p in found.pieces]
    return spans, found.unresolved


# ----------------------------------------------------------------------------- results


@dataclass
class Output:
    """One followed entry."""

    label: str
    step: str
    index: tuple[int, ...]
    printed: str | None
    depends: bool
    closed: sympy.Expr | None = None
    value: str | None = None
    derivative: str | None = None
    derivative_exact: sympy.Expr | None = None
    intervals: list[tuple[Fraction, Fraction, Fraction, Fraction]] = field(default_factory=list)
    unresolved: list[tuple[Fraction, Fraction]] = field(default_factory=list)
    contains_value: bool | None = None
    samples: list[tuple[float, float]] = field(default_factory=list)


@dataclass
class WhatIf:
    """The result of :func:`whatif`."""

    path: str
    title: str
    weight: Weight
    lo: Fraction
    hi: Fraction
    outputs: list[Output]
    plots: list[str]
    method: str = (
        "certified subdivision with forward-mode interval derivatives (python-flint arb): a cell "
        "whose value enclosure excludes the boundary holds no root; a monotone cell whose exact "
        "ends differ in sign holds exactly one, narrowed by bisection on exact-point evaluations"
    )


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
    d: Derivation, trace: Trace, labels: list[str] | None, sym: sympy.Symbol
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
            if labels is None and (p.is_neg_inf or sym not in backend.user_symbols(e)):
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
    symbol: str,
    lo: Fraction,
    hi: Fraction,
    *,
    claims: list[str] | None = None,
    out: Path | None = None,
    points: int = 121,
) -> WhatIf:
    """Follow printed outputs as one weight becomes a symbol (see the module docstring).

    Raises:
        WhatIfError: For a weight, label or range that does not fit.
    """
    from symtf.graph.pipeline import run

    if not 2 <= points <= 2001:
        raise WhatIfError(f"--points: expected 2 to 2001, found {points}")
    d0 = load(path)
    d, w = substitute(d0, symbol)
    trace = run(d)
    labels = _labels(claims, d)
    entries = _choose(d, trace, labels, w.symbol)
    dual = Dual(trace.backend.defs, w.symbol)
    a_lo, a_hi = w.bracket()  # the file's value, or a 2⁻²⁰⁰-wide rational bracket of it
    outputs = []
    for label, step, ij, p in entries:
        e = trace.value(step)[ij]
        dep = w.symbol in trace.backend.user_symbols(e)
        o = Output(label, step, ij, None if p is None or p.is_neg_inf else p.text, dep)
        if not dep or e == sympy.S.NegativeInfinity:
            outputs.append(o)
            continue
        o.closed = _closed(trace, e)
        v, dv = _certified(dual, e, a_lo, a_hi)
        o.value, o.derivative = v, dv
        if o.closed is not None and sympy.count_ops(o.closed) <= 200:
            der = sympy.diff(o.closed, w.symbol).xreplace({w.symbol: w.value})
            if not der.has(sympy.Heaviside, sympy.DiracDelta, sympy.Derivative, sympy.Subs):
                if sympy.count_ops(der) <= 120:
                    der = min((der, sympy.together(der)), key=lambda x: len(sympy.sstr(x)))
                if len(sympy.sstr(der)) <= MAX_FORMULA_CHARS:
                    o.derivative_exact = der
        if o.printed is not None:
            claim = next(c for c in d.claims if c.label == label)
            o.intervals, o.unresolved = rounding_set(dual, e, p, claim.rounding, lo, hi)
            o.contains_value = (
                any(_within(w.value, ol, oh) for ol, il, ih, oh in o.intervals)
                if o.intervals
                else False
            )
        o.samples = _samples(dual, e, lo, hi, points)
        outputs.append(o)
    result = WhatIf(str(path), d0.title, w, lo, hi, outputs, [])
    if out is not None:  # the plots and the JSON appear together, or not at all
        with files.OutputFolder(out) as folder:
            result.plots = _plot(result, folder)
            folder.write_text("whatif.json", render_json(result))
    return result


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


def _plot(r: WhatIf, out: files.OutputFolder) -> list[str]:
    try:
        import matplotlib

        # matplotlib's own warnings (a font cache it cannot save on a full disk) are not
        # the user's business: symtf reports the failure to write the plot itself.
        logging.getLogger("matplotlib").setLevel(logging.ERROR)
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        raise WhatIfError(
            "plots need matplotlib: pip install 'symtf[teach]' (or leave out -o for text only)"
        ) from None
    groups: dict[str, list[Output]] = {}
    for o in r.outputs:
        if o.samples:
            groups.setdefault(o.label, []).append(o)
    if not groups:
        return []
    groups = dict(list(groups.items())[:MAX_PANELS])
    n = len(groups)
    fig, axes = plt.subplots(n, 1, figsize=(7, 2.6 * n), squeeze=False)
    a0 = float(r.weight.value)
    name = str(r.weight.symbol)
    for ax, (label, outs) in zip(axes[:, 0], groups.items(), strict=True):
        for o in outs:
            xs, ys = zip(*o.samples, strict=True)
            ax.plot(xs, ys, label=f"[{o.index[0]}, {o.index[1]}]")
            for ol, _, _, oh in o.intervals:
                ax.axvspan(float(ol), float(oh), alpha=0.08, color="green")
        ax.axvline(a0, color="gray", linestyle="--", linewidth=1)
        # Labels are text from the file: no mathtext ($…$), no control characters in the SVG.
        ax.set_title(f"{line(label)} ({outs[0].step})", fontsize=10, parse_math=False)
        ax.set_xlabel(
            f"{line(name)}   ({r.weight.name}; dashed: the file's value {a0:g})",
            fontsize=8,
            parse_math=False,
        )
        ax.legend(fontsize=7, loc="best")
    fig.tight_layout()
    written = []
    try:
        for ext in ("png", "svg"):
            name = f"whatif.{ext}"
            try:
                fig.savefig(
                    out.path(name),
                    dpi=120 if ext == "png" else None,
                    metadata={"Date": None} if ext == "svg" else None,
                )
            except OSError as e:
                raise files.OutputError(
                    f"{out.final(name)}: cannot write the file ({e.strerror or e})"
                ) from None
            written.append(str(out.final(name)))
    finally:
        plt.close(fig)
    return written


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


def _shown(v: sympy.Expr) -> str:
    """The file's value as text: ``1/2``, ``sqrt(2)``."""
    return str(sympy.sstr(v))


def render_text(r: WhatIf) -> str:
    """The result as text."""
    w = r.weight
    out = [
        f"{r.title}",
        f"{w.name} = {w.symbol} (the file has {_shown(w.value)}); range [{r.lo}, {r.hi}]",
        "",
    ]
    for o in r.outputs:
        head = f"{o.label} [{o.index[0]}, {o.index[1]}]  ({o.step})"
        out.append(head)
        if not o.depends:
            out.append(f"  does not depend on {w.symbol}")
            continue
        out.append(
            f"  = {sympy.sstr(o.closed)}"
            if o.closed is not None
            else "  closed form: too long to show (see the plot)"
        )
        out.append(f"  at {w.symbol} = {_shown(w.value)}: {o.value or 'not certified'}")
        if o.derivative_exact is not None:  # exact; its certified decimal when one is pinned
            shown = sympy.sstr(o.derivative_exact) + (f" ≈ {o.derivative}" if o.derivative else "")
        else:
            shown = o.derivative or "not certified"
        out.append(f"  d/d{w.symbol} at {_shown(w.value)}: {shown}")
        if o.printed is not None:
            if o.intervals:
                spans = "; ".join(_interval_text(iv) for iv in o.intervals)
                out.append(f"  printed {o.printed} is a correct rounding for {w.symbol} in {spans}")
            else:
                out.append(
                    f"  printed {o.printed} is a correct rounding for no {w.symbol} in the range"
                )
            if o.unresolved:
                out.append(
                    f"  (undecided in {len(o.unresolved)} stretch(es), no interval claimed across one; e.g. [{_dec(o.unresolved[0][0])}, {_dec(o.unresolved[0][1])}])"
                )
    out += ["", f"roots: {r.method}"]
    if r.plots:
        out.append("plots: " + ", ".join(r.plots))
    return "\n".join(out) + "\n"


def render_json(r: WhatIf) -> str:
    """The result as JSON (exact interval ends as fractions ``p/q``)."""

    def q(x: Fraction) -> str:
        return f"{x.numerator}/{x.denominator}" if x.denominator != 1 else str(x.numerator)

    data = {
        "file": r.path,
        "weight": r.weight.name,
        "symbol": str(r.weight.symbol),
        "value": str(r.weight.value),
        "range": [q(r.lo), q(r.hi)],
        "method": r.method,
        "outputs": [
            {
                "label": o.label,
                "step": o.step,
                "index": list(o.index),
                "printed": o.printed,
                "depends": o.depends,
                "closed_form": None if o.closed is None else sympy.sstr(o.closed),
                "value": o.value,
                "derivative": o.derivative,
                "derivative_exact": None
                if o.derivative_exact is None
                else sympy.sstr(o.derivative_exact),
                "intervals": [
                    {"outer": [q(a), q(d_)], "inner": [q(b), q(c)]} for a, b, c, d_ in o.intervals
                ],
                "unresolved": [[q(a), q(b)] for a, b in o.unresolved],
            }
            for o in r.outputs
        ],
        "plots": r.plots,
    }
    return json.dumps(data, indent=2, ensure_ascii=False) + "\n"


__all__ = [
    "Dual",
    "WhatIf",
    "WhatIfError",
    "isolate",
    "parse_range",
    "render_text",
    "substitute",
    "whatif",
]
