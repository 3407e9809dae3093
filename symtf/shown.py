"""What a trace's values show as: certified decimals, closed forms, floats for pictures.

A renderer shows an exact value as a decimal (a certified truncation of its ball, or the
value itself when a short decimal is proved equal), as a closed form, or as a colour in a
picture. It computes none of them: it asks the trace (:attr:`symtf.trace.Trace.shown`),
which answers here from its own backend, once per value, and keeps the answer. A renderer
only formats what it is given (how many decimals, which form is shorter to write).

Everything here reads the trace's values and its backend; nothing decides a verdict.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from fractions import Fraction
from typing import Any

import sympy

#: Significant digits of a certified decimal expansion.
DIGITS = 20
#: Precision of the floats a picture is drawn from, in bits.
PICTURE_BITS = 64
#: Divisors a sharpness curve is drawn at, from √d_k / 4 to 4·√d_k.
SHARPNESS_POINTS = 80


@dataclass(frozen=True)
class Expansion:
    """A value's decimal, as far as its enclosure certifies it.

    Attributes:
        text: The certified expansion to :data:`DIGITS` significant digits, ``…`` when it
            goes on; or, when ``exact``, the value itself; ``None`` when no ball pins it.
        exact: Whether ``text`` is the value exactly (a short decimal proved equal).
        near_zero: With no ``text``: the ball holds 0 and the value is smaller than one
            unit of the asked decimals (its sign is not known).
    """

    text: str | None
    exact: bool = False
    near_zero: bool = False


@dataclass(frozen=True)
class Sharpness:
    """The softmax of score rows divided by a range of divisors, for a picture.

    Attributes:
        divisors: The divisors, log-spaced from √d_k / 4 to 4·√d_k.
        peak: At each divisor, the largest weight, averaged over the rows.
        entropy: At each divisor, the entropy in nats, averaged over the rows.
        width: The most unmasked entries of a row (the entropy is at most log of it).
        rows: How many rows the averages are over.
        sqrt_dk: The article's own divisor.
    """

    divisors: tuple[float, ...]
    peak: tuple[float, ...]
    entropy: tuple[float, ...]
    width: int
    rows: int
    sqrt_dk: float


@dataclass(frozen=True)
class Attention:
    """An attention pattern step as floats, for its pictures.

    Attributes:
        weights: The pattern's entries.
        sharpness: The softmax of its raw scores against the divisor, if the trace holds
            the scores and a positive √d_k.
    """

    weights: tuple[tuple[float, ...], ...]
    sharpness: Sharpness | None


class Shown:
    """Answers for a trace: how each of its values is shown (see the module docstring).

    Args:
        trace: The :class:`symtf.trace.Trace` whose values (and backend) are asked about
            (not imported here: the trace imports this module).
    """

    def __init__(self, trace: Any) -> None:
        self.trace = trace
        self.backend = trace.backend
        self._expansions: dict[tuple[Any, int], Expansion] = {}
        self._closed: dict[tuple[Any, int], tuple[sympy.Expr, ...]] = {}

    # ------------------------------------------------------------------ numbers

    def expansion(self, e: sympy.Expr, decimals: int) -> Expansion:
        """The certified decimal of a value that is not a rational number.

        Balls at rising precision until one pins :data:`DIGITS` digits; failing that, a short
        decimal proved equal by exact algebra; failing that, whether the value is below one
        unit of ``decimals`` (a ball around 0 that nothing could settle).
        """
        key = (e, decimals)
        hit = self._expansions.get(key)
        if hit is None:
            hit = self._expansion(e, decimals)
            self._expansions[key] = hit
        return hit

    def _expansion(self, e: sympy.Expr, decimals: int) -> Expansion:
        from symtf.backends.certify import PRECISIONS
        from symtf.backends.decimals import decimal_string
        from symtf.errors import Undecided

        ball = getattr(self.backend, "ball", None)
        x: Any = None
        for prec in PRECISIONS:
            try:
                if ball is not None:
                    x = ball(e, prec)
                else:
                    from symtf.backends.certify import ball as certify_ball

                    x = certify_ball(e, prec)
            except (Undecided, TypeError, ValueError, ZeroDivisionError):
                return Expansion(None)
            s = decimal_string(x, DIGITS)
            if s is not None:
                return Expansion(s)
        short = self._short_exact(e, x)
        if short is not None:
            return Expansion(short, exact=True)
        return Expansion(None, near_zero=self._near_zero(x, decimals))

    def _short_exact(self, e: sympy.Expr, x: Any) -> str | None:
        """A value no ball can pin to a decimal may *be* a short decimal: decide it exactly."""
        from symtf.backends.zero import exact_zero
        from symtf.numbers import rational_decimal, round_exact

        if not x.is_finite():
            return None
        man, exp = x.mid().man_exp()
        candidate = round_exact(Fraction(int(man)) * Fraction(2) ** int(exp), 15)
        diff = e - sympy.Rational(candidate.numerator, candidate.denominator)
        exact = self.backend if hasattr(self.backend, "closed_form") else None
        try:
            if exact_zero(diff, exact):
                return rational_decimal(candidate, DIGITS)
        except (TypeError, ValueError, RecursionError):
            return None
        return None

    @staticmethod
    def _near_zero(x: Any, decimals: int) -> bool:
        """Whether a ball that holds 0 has a magnitude below one unit of ``decimals``."""
        from flint import arb

        return bool(x.is_finite() and bool(abs(x) < arb(10) ** (-decimals)))

    def is_ball(self, e: Any) -> bool:
        """Whether a value is a ball (a trace of certified balls holds them)."""
        from flint import arb

        return isinstance(e, arb)

    def ball_decimal(self, e: Any) -> str | None:
        """A ball's certified decimal to :data:`DIGITS` digits, or ``None`` when it is too wide."""
        from symtf.backends.decimals import decimal_string

        return decimal_string(e, DIGITS)

    # ------------------------------------------------------------------ closed forms

    def closed_forms(self, e: sympy.Expr, max_ops: int) -> tuple[sympy.Expr, ...]:
        """Equal closed forms of a value, the backend's first; none when it would be larger
        than ``max_ops`` operations or still holds the trace's named entries."""
        key = (e, max_ops)
        hit = self._closed.get(key)
        if hit is None:
            closed_form = getattr(self.backend, "closed_form", None)
            cf = closed_form(e, max_ops) if closed_form is not None else e
            hit = () if cf is None or self.has_nodes(cf) else (cf, *_shorter_forms(cf))
            self._closed[key] = hit
        return hit

    def is_node(self, s: sympy.Basic) -> bool:
        """Whether a symbol is one of the trace's named entries (not a symbol of the file)."""
        defs = getattr(self.backend, "defs", None)
        return defs is not None and s in defs

    def has_nodes(self, e: sympy.Basic) -> bool:
        """Whether an expression still holds the trace's named entries."""
        return any(self.is_node(s) for s in e.free_symbols)

    # ------------------------------------------------------------------ pictures

    def floats(self, name: str) -> list[list[float]] | None:
        """A step's entries as floats (for a picture only; ``-inf`` for a masked entry).

        ``None`` for a step that is not a matrix, or with an entry no ball can give (a
        symbol, an undecidable entry).
        """
        from symtf.errors import SymtfError

        value = self.trace.value(name)
        if not isinstance(value, sympy.MatrixBase):
            return None
        xp = self.backend
        out = []
        for i in range(value.rows):
            row = []
            for j in range(value.cols):
                e = value[i, j]
                if e is sympy.S.NegativeInfinity:
                    row.append(-math.inf)
                    continue
                try:
                    row.append(float(xp.ball(e, PICTURE_BITS).mid()))
                except (SymtfError, AttributeError, TypeError, ValueError, ArithmeticError):
                    return None
                if not math.isfinite(row[-1]):
                    return None
            out.append(row)
        return out

    def attention(self, name: str) -> Attention | None:
        """An attention pattern step (``l0.h0.pattern``) as floats, with its sharpness curve.

        The curve recomputes the softmax of the step's raw scores (masked entries kept out)
        for divisors around the article's √d_k. ``None`` for any other step.
        """
        if not name.endswith(".pattern") or name not in self.trace:
            return None
        weights = self.floats(name)
        if not weights:
            return None
        base = name.removesuffix(".pattern")
        scores, masked = self.floats(base + ".scores"), None
        if base + ".masked" in self.trace:
            masked = self.floats(base + ".masked")
        root = self.floats(base + ".sqrt_dk") if base + ".sqrt_dk" in self.trace else None
        curve = None
        if scores and root and root[0] and root[0][0] > 0:
            if masked is not None and len(masked) == len(scores):
                scores = [
                    [s if m != -math.inf else -math.inf for s, m in zip(sr, mr, strict=True)]
                    for sr, mr in zip(scores, masked, strict=True)
                ]
            curve = sharpness_curve(scores, root[0][0])
        return Attention(tuple(tuple(r) for r in weights), curve)


def _shorter_forms(e: sympy.Expr) -> list[sympy.Expr]:
    """Equal, often shorter forms of a softmax entry: e^a / Σ e^b → 1 / Σ e^(b−a)."""
    num, den = sympy.fraction(e)
    if not isinstance(num, sympy.exp) or not den.is_Add:
        return []
    a = num.args[0]
    terms = []
    for t in den.args:
        if isinstance(t, sympy.exp):
            terms.append(sympy.exp(t.args[0] - a))
        elif t.is_Rational:
            terms.append(t * sympy.exp(-a))
        else:
            return []
    return [1 / sympy.Add(*terms)]


# ----------------------------------------------------------------------------- sharpness


def softmax_at(row: Sequence[float], divisors: Sequence[float]) -> list[list[float]]:
    """The registry's softmax of ``row / t`` for each divisor ``t``, in float64: one call.

    Masked ``-inf`` entries get weight 0. Each scaled row is first shifted by its largest
    entry (the registry's ``max`` and ``sub``), which changes no weight and keeps every
    ``e^x`` finite in float64.
    """
    import numpy as np

    from symtf import ops
    from symtf.backends import FloatBackend

    xp = FloatBackend()
    scaled = np.array(row, dtype=float)[None, :] / np.array(divisors, dtype=float)[:, None]
    z = ops.on_matrices(
        ops.sub, xp, scaled, ops.on_matrices(ops.max_, xp, scaled, axis=-1, keepdims=True)
    )
    out: list[list[float]] = ops.on_matrices(ops.softmax, xp, z, axis=-1).tolist()
    return out


def entropy(p: Sequence[float]) -> float:
    """Shannon entropy in nats (0 log 0 = 0)."""
    return -sum(v * math.log(v) for v in p if v > 0)


def sharpness(
    rows: Sequence[Sequence[float]], divisors: Sequence[float]
) -> tuple[list[float], list[float]]:
    """Mean over rows of the largest weight and of the entropy, at each divisor."""
    per_row = [softmax_at(r, divisors) for r in rows]  # row -> divisor -> weights
    peak = [sum(max(ps[k]) for ps in per_row) / len(rows) for k in range(len(divisors))]
    ent = [sum(entropy(ps[k]) for ps in per_row) / len(rows) for k in range(len(divisors))]
    return peak, ent


def sharpness_curve(rows: Sequence[Sequence[float]], sqrt_dk: float) -> Sharpness:
    """The largest weight and the entropy of score rows against the divisor √d_k.

    The divisor runs from √d_k / 4 to 4·√d_k on a log scale. A row with one unmasked
    entry has weight 1 at any divisor: it is left out when others are left.

    Args:
        rows: The raw score rows (Q Kᵀ), masked entries as ``-inf``.
        sqrt_dk: The article's divisor.
    """
    lo, hi = sqrt_dk / 4, sqrt_dk * 4
    k = SHARPNESS_POINTS
    ts = [lo * (hi / lo) ** (i / (k - 1)) for i in range(k)]
    width = max(sum(1 for s in r if s != -math.inf) for r in rows)
    live = [r for r in rows if sum(1 for s in r if s != -math.inf) > 1]
    rows = live or rows
    peak, ent = sharpness(rows, ts)
    return Sharpness(tuple(ts), tuple(peak), tuple(ent), width, len(rows), sqrt_dk)
