"""One entry of a step, worked by hand: formula, numbers substituted, result.

``worked(trace, derivation, "l0.h0.scores", 1, 1)`` gives, in the handcalcs
shape, ``QKᵀ[1,1] = q[1,0]·k[1,0] + q[1,1]·k[1,1]``, then
``= 0.1·0.1 + 1.1·1.1``. Each line comes as LaTeX and as plain Unicode text.

The substituted numbers are the exact values of the inputs when they are
short decimals or fractions, else certified truncations marked ``…`` (and the
line then reads ``≈``). Which operation a step applies is the op the trace
recorded (:mod:`symtf.ops`), with its parameters (the file's weights, ε, the
rotary pairing): each op writes the working of an entry in its own definition
(:attr:`symtf.ops.Op.work`, :mod:`symtf.ops.working`), through :class:`_Ctx`,
which names the entries and writes the numbers. A step of an op without a
working gets no lines.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from fractions import Fraction
from typing import Any

import sympy

from symtf import ops
from symtf.backends.decimals import decimal_string
from symtf.ops.working import Entry, Line, Work
from symtf.spec import Derivation
from symtf.trace import Trace


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


#: Canonical step names (inside a layer and head) the maths writes as a symbol.
_SYMBOLS = {"sqrt_dk": (r"\sqrt{d_k}", "√d_k")}


def _tex_name(n: str) -> str:
    return n.replace("_", r"\_")


# ----------------------------------------------------------------------------- working


class _Ctx:
    """How the ops' workings (:class:`symtf.ops.working.Context`) write entries and numbers
    here: entries by short name or by the article's labels, numbers as :func:`number` writes
    them, noting whether one is a truncation (:attr:`approx`)."""

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
        at = f"{i + 1},{j + 1}"
        if label is None:
            n = short_name(step)
            if n in _SYMBOLS:  # a canonical step the maths has a symbol for: √d_k
                tex, text = _SYMBOLS[n]
                return Line(f"({tex})_{{{at}}}", f"({text})[{at}]")
            return Line(rf"\mathrm{{{_tex_name(n)}}}_{{{at}}}", f"{n}[{at}]")
        from symtf.renderers.labels import entry_math, label_plain

        return Line(entry_math(label, at), f"{label_plain(label)}[{at}]")

    def plain_ref(self, step: str, i: int, j: int) -> Line:
        """An entry reference by short name, counted from 0 (:func:`ref`), whatever the names."""
        return ref(step, i, j)

    def val(self, step: str, i: int, j: int) -> Line:
        """An entry's value as it is written into a formula (in parentheses when negative
        or a fraction)."""
        line, exact = number(self.trace, self.trace.value(step)[i, j])
        self.approx |= not exact
        return _paren(line)

    def const(self, e: Any) -> Line:
        """An exact value written as :meth:`val` writes an entry's."""
        line, exact = number(self.trace, e)
        self.approx |= not exact
        return _paren(line)

    def number(self, e: Any) -> Line:
        """An exact value as :func:`number` writes it (no parentheses; not noted as a truncation)."""
        return number(self.trace, e)[0]

    def value(self, step: str) -> Any:
        """The value of a step."""
        return self.trace.value(step)

    def shape(self, step: str) -> tuple[int, ...] | None:
        """The shape of a matrix step, or ``None``."""
        return self.trace.shape(step)


def _work_of(op: str) -> Work | None:
    """The registry op's working of one entry (``None`` for an op without one, or a
    step that is not a registry op's: a user step, a decision)."""
    try:
        return ops.get(op).work
    except KeyError:
        return None


def _entry(ctx: _Ctx, step: str, i: int, j: int) -> Entry | None:
    st = ctx.trace[step]
    work = _work_of(st.op)
    if work is None:
        return None
    return work(ctx, st, i, j)


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


__all__ = ["Worked", "number", "ref", "short_name", "worked"]
