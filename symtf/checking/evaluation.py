"""Exact values of a derivation's steps, and where a printed number lies against them.

:class:`Evaluator` computes a derivation's traces lazily (midpoint–radius, balls at each
precision, exact); :class:`Quantity` is one entry of them, located against rational
boundaries with certified comparisons. :func:`selection` and :func:`_fit` pair a claim's
printed numbers with the entries they show.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterable, Iterator
from fractions import Fraction
from typing import Any

import sympy
from flint import arb

from symtf import limits
from symtf.backends import BallBackend, ExactBackend
from symtf.backends.certify import PRECISIONS, compare_ball
from symtf.backends.decimals import decimal_string
from symtf.backends.exact import infinite_sign
from symtf.backends.signs import exact_sign
from symtf.errors import LimitError, ModelError, ShapeError, SpecError, Undecided
from symtf.graph.core import Reuse
from symtf.graph.pipeline import run
from symtf.numbers import Printed, format_fixed, round_exact, rounding_interval
from symtf.numbers import rational_decimal as _rational_decimal
from symtf.spec import Claim, Derivation
from symtf.trace import Trace

# ----------------------------------------------------------------------------- values


#: The paths a comparison can be decided by, cheapest first (``Check.extra["decided_by"]``).
DECIDED_BY = ("midrad", *(f"arb{p}" for p in PRECISIONS), "exact")


class Quantity:
    """An exact real number we can enclose in balls and, if need be, handle exactly.

    Args:
        ball: Ball at a given precision, or ``None`` if not available there.
        exact: The exact SymPy value and the backend that defines its nodes.
        fast: Optional midpoint–radius enclosure (as a ball), tried before any other.
        lazy: Whether the exact value is expensive (weights from files): it is then
            consulted only after every ball precision has failed.
        start: The first ball precision worth trying (:meth:`Evaluator.start_precision`);
            lower ones are skipped. It chooses where the ladder starts, never a verdict.

    Attributes:
        decided_by: The most expensive path any comparison so far needed
            (one of :data:`DECIDED_BY`), or ``None``.
    """

    def __init__(
        self,
        ball: Callable[[int], arb | None],
        exact: Callable[[], tuple[sympy.Expr, ExactBackend | None]],
        fast: Callable[[], arb | None] | None = None,
        *,
        lazy: bool = False,
        start: Callable[[], int] | None = None,
    ) -> None:
        self._ball = ball
        self._exact = exact
        self._fast = fast
        self._lazy = lazy
        self._start = start
        self._exact_value: tuple[sympy.Expr, ExactBackend | None] | None = None
        self.decided_by: str | None = None

    def _decided(self, how: str) -> None:
        if self.decided_by is None or DECIDED_BY.index(how) > DECIDED_BY.index(self.decided_by):
            self.decided_by = how

    def fast_ball(self) -> arb | None:
        """The midpoint–radius enclosure as a ball, or ``None`` when there is none."""
        if self._fast is None:
            return None
        try:
            return self._fast()
        except (Undecided, TypeError):
            return None

    def exact_if_cheap(self) -> sympy.Expr | None:
        """The exact value unless computing it would mean an expensive exact trace."""
        if self._lazy and self._exact_value is None:
            return None
        return self.exact()[0]

    def is_neg_inf(self) -> bool:
        """Whether the value is exactly −∞ (a masked score)."""
        x = self.fast_ball()
        if x is not None and not x.is_finite() and x.rad() == 0:
            return float(x.mid()) == float("-inf")
        return bool(self.exact()[0] == sympy.S.NegativeInfinity)

    def ball(self, prec: int) -> arb | None:
        """A certified ball at ``prec`` bits (``None`` if it could not be computed)."""
        try:
            return self._ball(prec)
        except (Undecided, TypeError):  # free symbols (a symbolic eps), or no enclosure
            return None

    def exact(self) -> tuple[sympy.Expr, ExactBackend | None]:
        """The exact value and the backend whose node symbols it may use."""
        if self._exact_value is None:
            self._exact_value = self._exact()
        return self._exact_value

    def locate(self, b: Fraction) -> int | None:
        """Certified sign of ``value − b``: -1, 0, 1, or ``None`` if undecided.

        Paths in order: the midpoint–radius enclosure, balls of 128 bits, the exact
        value if it is rational (after every ball precision when ``lazy``), balls of
        256 → 1024 bits, exact arithmetic. :attr:`decided_by` records the path used.
        """
        x = self.fast_ball()
        if x is not None:
            c = compare_ball(x, b)
            if c is not None:
                self._decided("midrad")
                return c
        first = self.first_precision()
        x = self.ball(PRECISIONS[0]) if first <= PRECISIONS[0] else None
        if x is not None:
            c = compare_ball(x, b)
            if c is not None:
                self._decided(f"arb{PRECISIONS[0]}")
                return c
        if not self._lazy:
            c = self._rational_sign(b)
            if c is not None:
                return c
        for prec in PRECISIONS[1:]:
            if prec < first:
                continue
            x = self.ball(prec)
            if x is not None:
                c = compare_ball(x, b)
                if c is not None:
                    self._decided(f"arb{prec}")
                    return c
        if self._lazy:
            c = self._rational_sign(b)
            if c is not None:
                return c
        e, xp = self.exact()
        self._decided("exact")
        try:
            return exact_sign(e - sympy.Rational(b.numerator, b.denominator), xp)
        except (Undecided, TypeError):
            return None

    def first_precision(self) -> int:
        """The lowest ball precision tried (the start hint, at most the top rung)."""
        if self._start is None:
            return PRECISIONS[0]
        return min(self._start(), PRECISIONS[-1])

    def _rational_sign(self, b: Fraction) -> int | None:
        e, _ = self.exact()
        if e.is_Rational:
            self._decided("exact")
            d = Fraction(int(e.p), int(e.q)) - b
            return (d > 0) - (d < 0)
        inf = infinite_sign(e)
        if inf:
            self._decided("exact")
            return inf
        return None

    def decimal(self) -> str | None:
        """A certified decimal string of the value, at least 15 significant digits.

        The whole value when it is a short decimal; otherwise its first digits and ``…``:
        the truncated expansion, or, for a value too close to a short decimal for its
        expansion to be decided, a 20-digit decimal the value is certified to lie
        within one unit of the last digit of. ``None`` when neither can be certified.
        """
        x = self.fast_ball()
        if x is not None and x.is_exact():
            s = decimal_string(x, 20)
            if s is not None and "…" not in s:  # a float value, written out in full
                return s
        if self._lazy:
            first = self.first_precision()
            for prec in PRECISIONS:
                if prec < first:
                    continue
                x = self.ball(prec)
                s = decimal_string(x, 20) if x is not None else None
                if s is not None:
                    return s
            if self._exact_value is None:
                return None  # a value on a short decimal: only the exact trace would tell
        e, _ = self.exact()
        if e.is_Rational:
            return _rational_decimal(Fraction(int(e.p), int(e.q)))
        if infinite_sign(e):
            return "-inf" if e.is_extended_negative else "inf"
        for prec in PRECISIONS:
            x = self.ball(prec)
            s = decimal_string(x, 20) if x is not None else None
            if s is not None:
                return s
        # A value that sits on a short decimal (a softmax row summing to 1) never
        # separates from it in balls; exact algebra may show the equality.
        mid = self.midpoint()
        if mid is not None:
            r = round_exact(mid, 15)
            if self.locate(r) == 0:
                return _rational_decimal(r)
            return _near_decimal(self, mid)
        return None

    def midpoint(self) -> Fraction | None:
        """A rational inside a ball of the value (a guide, never a verdict)."""
        if self._lazy:  # any enclosure will do; the exact trace is the last resort
            for prec in (None, *PRECISIONS):  # computed one at a time
                x = self.fast_ball() if prec is None else self.ball(prec)
                if x is not None and x.is_finite():
                    man, exp = x.mid().man_exp()
                    return Fraction(int(man)) * Fraction(2) ** int(exp)
        x = self.ball(PRECISIONS[0])
        if x is None or not x.is_finite() or x.rad() > 1e-20:
            e, _ = self.exact()
            if e.is_Rational:
                return Fraction(int(e.p), int(e.q))
            x = self.ball(PRECISIONS[-1])
        if x is None or not x.is_finite():
            return None
        man, exp = x.mid().man_exp()
        if abs(int(exp)) > 1 << 16:  # e^-10^50: no Fraction of that size (a guide only)
            return None
        return Fraction(int(man)) * Fraction(2) ** int(exp)


def _near_decimal(q: Quantity, mid: Fraction, digits: int = 20) -> str | None:
    """``mid`` to ``digits`` significant digits + ``…``, if the value is certainly within one
    unit of the last digit (a value too close to a short decimal for its digits to be pinned)."""
    if mid == 0:
        return None
    k = math.floor(math.log10(abs(mid.numerator)) - math.log10(mid.denominator))
    decimals = max(digits - 1 - k, 0)
    r, unit = round_exact(mid, decimals), Fraction(1, 10**decimals)
    if q.locate(r - unit) == 1 and q.locate(r + unit) == -1:
        return format_fixed(r, decimals) + "…"
    return None


class Evaluator:
    """Lazily computed traces of one derivation: midpoint–radius, balls at each precision, exact.

    Each trace is one evaluation of the derivation's graph in one backend. An evaluator
    made ``from`` another (a replay of the article's printed numbers, a convention's
    variant) computes only what differs from the other's traces in the same backend,
    and takes every unchanged node from them.

    Args:
        derivation: The derivation to evaluate.
        base: The evaluator whose traces this one's start from (``None``: from scratch).
        override: ``override(step, value)`` puts the article's printed numbers in.
        fresh: The steps ``override`` changes (computed again, whatever ``base`` has).
        needed: Evaluate only what these steps are computed from.
        seeds: Evaluators of earlier versions of the derivation (an edited article): a
            node the same in their traces and in this one's graph, over arguments that are
            themselves the same, is taken from them, not computed (only what they have
            computed already is read; exact values only for an evaluator made from a
            base, from exact traces in its base's backend, and not with symbols).
    """

    #: Whether comparisons try the midpoint–radius trace first (:mod:`symtf.backends.midrad`);
    #: never for a replay, whose printed numbers are put into exact and ball values.
    midrad: bool = True

    def __init__(
        self,
        derivation: Derivation,
        *,
        base: Evaluator | None = None,
        override: Callable[[str, Any], Any] | None = None,
        fresh: Iterable[str] = (),
        needed: Iterable[str] | None = None,
        seeds: Iterable[Evaluator] = (),
    ) -> None:
        self.derivation = derivation
        self.base = base
        self.seeds = tuple(seeds) if override is None else ()
        self.override = override
        self.fresh = frozenset(fresh)
        self.needed = None if needed is None else frozenset(needed)
        self._balls: dict[int, Trace | None] = {}
        #: Ball traces of only what escalated entries are computed from, by precision.
        self._partial: dict[int, Trace] = {}
        self._partial_steps: dict[int, set[str]] = {}
        self._exact: Trace | None = None
        self._midrad: Trace | None = None
        self._midrad_done = False
        self._bits: dict[str, float] | None = None
        #: Why balls of a step (``None``: of the whole model) were refused, at the lowest
        #: precision tried: their own estimate, over the memory limit.
        self.ball_refusals: dict[str | None, str] = {}
        self._refused_at: dict[str, int] = {}
        from symtf.limits import exact_out_of_reach
        from symtf.spec.weights import exact_is_expensive

        #: Whether the exact trace is computed only when no ball decides: weights from
        #: files, or a model whose exact values would exceed the memory limit.
        self.exact_refused = exact_out_of_reach(derivation)
        self.lazy_exact = self.exact_refused or exact_is_expensive(derivation)
        #: Exact readings of displayed lines checked so far, by claim label.
        self.expression_values: dict[str, sympy.ImmutableMatrix] = {}
        #: Printed result text of those lines -> its exact reading (for later lines that repeat it).
        self.printed_results: dict[str, sympy.Expr] = {}
        #: Printed result text of those lines -> the label of the line that printed it.
        self.printed_labels: dict[str, str] = {}
        #: Printed result text of those lines -> the article line that printed it.
        self.printed_result_lines: dict[str, int | None] = {}
        #: Each claim restating a given tensor: its article line and its printed numbers
        #: (read once, by symtf.checking.lineage.shadowed_results).
        self.stated_prints: list[tuple[int, frozenset[str]]] | None = None
        #: (article line, printed result) of a chain ``a = b = c`` -> each compound piece
        #: of its links checked so far: (as displayed, exact reading, label, text).
        self.chain_pieces: dict[tuple[int | str, str], list[tuple[Any, Any, str, str]]] = {}
        #: Label of a displayed line -> the decimal literals it and its lineage read as
        #: themselves (symtf.checking.lineage).
        self.written_literals: dict[str, frozenset[str]] = {}
        #: A number of a displayed line's result of several numbers -> each (its exact
        #: reading, the line's label, its article line), for later lines that repeat it.
        self.printed_entries: dict[str, list[tuple[Any, str, int | None]]] = {}
        #: A copy slip's literal as written -> the slip, for later lines that repeat it.
        self.copied: dict[str, Any] = {}
        #: (label, expression) of a displayed line (or link) read so far -> how its literals
        #: were read (replacements, their sources, anchored), for a line restating it.
        self.readings: dict[
            tuple[str, str | None], tuple[dict[int, Any], dict[str, str], bool]
        ] = {}
        #: Label of a displayed line of one printed result -> the line as checked, for a
        #: later line whose literal stands for its result (symtf.checking.displayed.linked).
        self.displayed_lines: dict[str, Any] = {}

    def _run(self, xp: Any, base: Trace | None, seeds: Iterable[Trace | None] = ()) -> Trace:
        also = tuple(t for t in seeds if t is not None and t is not base)
        if base is None and also:
            base, also = also[0], also[1:]
        reuse = Reuse(base, self.fresh, also=also) if base is not None else None
        return run(self.derivation, xp, self.override, reuse=reuse, needed=self.needed)

    def _seed_balls(self, prec: int) -> list[Trace | None]:
        """The seeds' ball traces at ``prec`` bits (whole, then partial), as computed."""
        return [t for e in self.seeds for t in (e._balls.get(prec), e._partial.get(prec))]

    def _seed_exact(self, backend: Any) -> list[Trace]:
        """The seeds' exact traces computed in ``backend``, as computed.

        Only an evaluator made from a base (a convention's variant) takes exact values
        from seeds: its values are named apart in its base's backend, which defines the
        seeds' names too. An exact trace of its own is always computed afresh, its entries
        named as a cold check names them.
        """
        if self.derivation.symbols:
            return []  # a symbolic value is reported as an expression in its nodes
        return [
            t
            for e in self.seeds
            if (t := e._exact) is not None
            and t.backend is backend
            and not getattr(t.backend, "undecided", None)
        ]

    def ball_trace(self, prec: int) -> Trace | None:
        """The forward pass in balls of ``prec`` bits (``None`` if a sign was undecidable)."""
        if prec not in self._balls:
            base = self.base.ball_trace(prec) if self.base is not None else None
            try:
                with BallBackend(prec) as xp:
                    self._balls[prec] = self._run(xp, base, self._seed_balls(prec))
            except LimitError as e:  # the balls do not fit: said where a number stays open
                self._balls[prec] = None
                self.ball_refusals.setdefault(None, _unfiled(e, self.derivation, "balls"))
            except (Undecided, ModelError, ShapeError, TypeError):
                self._balls[prec] = None  # decided exactly instead
        return self._balls[prec]

    def ball_trace_of(self, prec: int, step: str) -> Trace | None:
        """A trace in balls of ``prec`` bits holding ``step``: only what escalated steps need.

        A number the midpoint–radius pass leaves open is taken to ``prec`` bits with the
        nodes it is computed from, not the whole model: a claim on layer 0 of a 12-layer
        model evaluates layer 0. Each later step adds its own nodes, taking the ones
        already computed (:class:`~symtf.graph.core.Reuse`). A full trace at ``prec``,
        once computed, serves every step; so does :meth:`ball_trace` for an evaluator
        started from another (a replay, a convention), which shares its base's traces.
        """
        cls = type(self)
        if (
            prec in self._balls
            or self.base is not None
            or self.needed is not None
            or cls.ball_trace is not _BALL_TRACE  # balls computed (or withheld) another way
        ):
            return self.ball_trace(prec)
        part = self._partial.get(prec)
        if part is not None and step in part:
            return part
        refused = self._refused_at.get(step)
        if refused is not None and prec >= refused:
            return None  # refused for memory at fewer bits: more bits cost more
        steps = self._partial_steps.setdefault(prec, set())
        steps.add(step)
        seeds = tuple(t for t in self._seed_balls(prec) if t is not None)
        if part is not None:
            reuse: Reuse | None = Reuse(part, also=seeds)
        else:
            reuse = Reuse(seeds[0], also=seeds[1:]) if seeds else None
        try:
            with BallBackend(prec) as xp:
                part = run(self.derivation, xp, self.override, reuse=reuse, needed=frozenset(steps))
        except LimitError as e:  # what this step needs would not fit; the others still may
            steps.discard(step)
            self.ball_refusals.setdefault(step, _unfiled(e, self.derivation, "balls"))
            self._refused_at[step] = min(prec, self._refused_at.get(step, prec))
            return None
        except (Undecided, ModelError, ShapeError, TypeError):
            # a node this step needs fails at this precision: so would the whole trace
            self._balls[prec] = None
            return None
        if step not in part:  # not a node of the graph (a name only the full trace records)
            return self.ball_trace(prec)
        self._partial[prec] = part
        return part

    def exact_trace(self) -> Trace:
        """The exact forward pass (computed once).

        From a base, it runs in the base's exact backend (whose node definitions the
        base's values use), its own new nodes named apart.
        """
        if self._exact is None:
            if self.exact_refused:  # each number the enclosures left open stays undecided
                try:
                    limits.enforce(self.derivation)
                except LimitError as e:
                    raise ExactRefused(
                        f"the certified enclosures cannot decide it, and {_unfiled(e, self.derivation)}"
                    ) from None
            base = self.base.exact_trace() if self.base is not None else None
            if base is None:
                self._exact = run(self.derivation, ExactBackend(), self.override)
            else:
                with base.backend.apart():
                    self._exact = self._run(base.backend, base, self._seed_exact(base.backend))
        return self._exact

    def midrad_trace(self) -> Trace | None:
        """The forward pass in midpoint–radius float64 (``None`` if off or undecidable)."""
        cls = type(self)
        if (
            not self.midrad
            or self.override is not None
            or cls.ball_trace is not Evaluator.ball_trace
            or cls.exact_trace is not Evaluator.exact_trace
        ):
            return (
                None  # a replay, or a subclass computing its own traces: the fast one would differ
            )
        if not self._midrad_done:
            self._midrad_done = True
            from symtf.backends.midrad import MidradBackend

            base = self.base.midrad_trace() if self.base is not None else None
            try:
                with MidradBackend() as xp:
                    self._midrad = self._run(xp, base, [e._midrad for e in self.seeds])
            except (Undecided, ModelError, TypeError, ValueError, ArithmeticError):
                self._midrad = None  # decided by balls instead
        return self._midrad

    def structure(self) -> Trace:
        """A trace for step names and shapes: the cheapest one that could be computed."""
        if self.lazy_exact:
            t = self.midrad_trace() or self.ball_trace(PRECISIONS[0])
            if t is not None:
                return t
        return self.exact_trace()

    def entry(self, step: str, *idx: int) -> Quantity:
        """The quantity at ``step[i, j]`` (or ``step[b, h, i, j]`` for an N-D step)."""

        def fast() -> arb | None:
            t = self.midrad_trace()
            return None if t is None else t.value(step)[idx]

        def ball(prec: int) -> arb | None:
            t = self.ball_trace_of(prec, step)
            if t is None and self.lazy_exact:
                return None  # a higher precision may decide it; the exact value is the last resort
            if t is None:
                e, xp = exact()
                return xp.ball(e, prec) if xp is not None else None
            b: arb | None = t.value(step)[idx]
            return b

        def exact() -> tuple[sympy.Expr, ExactBackend | None]:
            try:
                t = self.exact_trace()
            except ExactRefused as e:
                balls = self.ball_refusals.get(step) or self.ball_refusals.get(None)
                if balls is None:
                    raise
                raise ExactRefused(f"{e}; and {balls}") from None
            return t.value(step)[idx], t.backend

        start = (lambda: self.start_precision(step)) if self.lazy_exact else None
        return Quantity(ball, exact, fast, lazy=self.lazy_exact, start=start)

    def start_precision(self, step: str) -> int:
        """The first ball precision likely to decide 4–6 decimals of ``step`` (a guess).

        From the midpoint–radius pass: a radius ``R`` (relative to the step's size) at
        binary64's 53 bits becomes about ``R·2^(53−p)`` at ``p`` bits, so a step with a
        finite radius needs about ``53 + log2 R + 40`` bits. Where the radius is already
        unknown, each product on the longest path to the step is taken to widen it by
        the geometric mean of what the products with finite radii did (about
        ``√(inner dimension)``, see ``benchmarks/bench_radius.py``). Only lazy models
        (weights from files, or beyond exact values) use it, where each skipped
        precision is a pass over the model that would not decide; the verdict is
        still whatever the balls and, last, exact values give.
        """
        if self._bits is None:
            self._bits = _needed_bits(self.midrad_trace())
        bits = self._bits.get(step, 0.0)
        return next((p for p in PRECISIONS if p >= bits), PRECISIONS[-1])


#: Ops whose outputs widen the enclosure by about √(inner dimension) (the wrapping of boxes).
_PRODUCTS = frozenset({"matmul", "linear"})
#: Bits a ball needs beyond its relative radius to decide a few printed decimals.
_MARGIN_BITS = 40


def _relative_radius(v: Any) -> float | None:
    """``median(rad) / rms(mid)`` of a midpoint–radius matrix (``inf`` if a radius is)."""
    mid, rad = getattr(v, "mid", None), getattr(v, "rad", None)
    if mid is None or rad is None or getattr(mid, "ndim", 0) != 2 or not mid.size:
        return None
    import numpy as np

    if not np.all(np.isfinite(rad)):
        return math.inf
    fin = np.isfinite(mid)
    rms = float(np.sqrt(np.mean(mid[fin] ** 2))) if fin.any() else 0.0
    return float(np.median(rad[fin])) / rms if rms > 0 else None


def _needed_bits(trace: Trace | None) -> dict[str, float]:
    """Each step's guessed ball precision (see :meth:`Evaluator.start_precision`)."""
    if trace is None:
        return {}
    rel: dict[str, float | None] = {n: _relative_radius(trace.value(n)) for n in trace}
    logs = []
    for n in trace:
        s = trace[n]
        ins = [rel.get(i) for i in s.inputs]
        out = rel[n]
        if s.op in _PRODUCTS and out is not None and 0 < out < math.inf:
            known = [x for x in ins if x is not None and 0 < x < math.inf]
            if known and len(known) == len([x for x in ins if x is not None]):
                logs.append(max(math.log2(out / max(known)), 0.0))
    grow = sum(logs) / len(logs) if logs else 0.0
    depth: dict[str, int] = {}
    bits: dict[str, float] = {}
    for n in trace:
        s = trace[n]
        depth[n] = max((depth.get(i, 0) for i in s.inputs), default=0) + (s.op in _PRODUCTS)
        r = rel[n]
        if r is not None and 0 < r < math.inf:
            bits[n] = 53 + math.log2(r) + _MARGIN_BITS
        else:
            bits[n] = grow * depth[n] + _MARGIN_BITS
    return bits


class ExactRefused(Undecided):
    """An exact value out of reach: the model's exact pass would exceed the memory limit."""


def _unfiled(e: LimitError, derivation: Derivation, what: str = "exact value") -> str:
    """A refusal's words without the leading ``file: model:`` (the verdict names the file)."""
    text = str(e)
    for head in (f"{derivation.path}: ", "model: "):
        text = text.removeprefix(head)
    verb = "are" if what == "balls" else "is"
    return f"its {what} {verb} out of reach: the model is " + text


# ----------------------------------------------------------------------------- verdicts


def classify(q: Quantity, p: Printed, mode: str = "nearest") -> tuple[str, str | None, str]:
    """Classify one printed number against an exact quantity (see :func:`symtf.checking.verdict.decide`).

    Returns:
        ``(verdict, expected, explanation)``.
    """
    from symtf.checking.verdict import decide

    v = decide(q, p, mode)
    return v.verdict, v.expected, v.explanation


def _inside(q: Quantity, iv: Any) -> bool | None:
    lo = q.locate(iv.lo)
    if lo is None:
        return None
    if lo < 0 or (lo == 0 and not iv.lo_closed):
        return False
    hi = q.locate(iv.hi)
    if hi is None:
        return None
    return hi < 0 or (hi == 0 and iv.hi_closed)


def correct_rounding(q: Quantity, decimals: int, mode: str = "half-up") -> Fraction | None:
    """The certified correct rounding of ``q`` to ``decimals`` places, or ``None``."""
    mid = q.midpoint()
    if mid is None:
        return None
    rmode = "half-up" if mode == "any" else mode
    guess = round_exact(mid, decimals, rmode)
    ulp = Fraction(1, 10**decimals)
    for cand in (guess, guess - ulp, guess + ulp):
        p = Printed(format_fixed(cand, decimals), cand, decimals)
        ok = _inside(q, rounding_interval(p, rmode))
        if ok is None:
            return None
        if ok:
            return cand
    return None


# ----------------------------------------------------------------------------- claims' entries


def selection(claim: Claim, shape: tuple[int, ...]) -> list[list[tuple[int, ...]]]:
    """The entries of a step a claim refers to, as rows of (i, j) (full indices for N-D)."""
    if (
        len(shape) != 2
        or getattr(claim, "at", None) is not None
        or (claim.index is not None and len(claim.index) != 2)
    ):
        from symtf.checking.claims import selection_nd

        return selection_nd(claim, shape)
    n, m = shape

    def bound(k: int, size: int, what: str) -> None:
        if not 0 <= k < size:
            raise SpecError(
                f"{claim.where}.{what}: expected 0 to {size - 1} for step {claim.step} of shape {n}x{m}, found {k}"
            )

    if claim.index is not None:
        bound(claim.index[0], n, "index")
        bound(claim.index[1], m, "index")
        return [[claim.index]]
    rows = range(n) if claim.row is None else [claim.row]
    cols = range(m) if claim.col is None else [claim.col]
    if claim.row is not None:
        bound(claim.row, n, "row")
    if claim.col is not None:
        bound(claim.col, m, "col")
    return [[(i, j) for j in cols] for i in rows]


def _fit(claim: Claim, sel: list[list[tuple[int, ...]]]) -> list[tuple[tuple[int, ...], Printed]]:
    printed = claim.printed
    rows, cols = len(printed), len(printed[0])
    srows, scols = len(sel), len(sel[0])
    flat_sel = [ij for r in sel for ij in r]
    flat_p = [p for r in printed for p in r]
    if (rows, cols) == (srows, scols) or (
        min(rows, cols) == 1 and min(srows, scols) == 1 and len(flat_p) == len(flat_sel)
    ):
        return list(zip(flat_sel, flat_p, strict=True))
    raise SpecError(
        f"{claim.where}.printed: expected {srows}x{scols} values for {claim.step}"
        f"{_where_in_step(claim)}, found {rows}x{cols}"
    )


def step_prints(
    claims: Iterable[Claim], trace: Trace
) -> Iterator[tuple[Claim, list[tuple[tuple[int, ...], Printed]]]]:
    """Each claim that prints entries of a step of ``trace``, with its ``((i, j), printed)`` pairs.

    Claims of a reduction or a word, of a step the trace lacks or has no shape
    for, and tables that do not fit their step are passed over (checking
    reports the latter).
    """
    for c in claims:
        if c.step is None or c.reduce is not None or c.word is not None or c.step not in trace:
            continue
        shape = trace.shape(c.step)
        if shape is None:
            continue
        try:
            pairs = _fit(c, selection(c, shape))
        except SpecError:
            continue
        yield c, pairs


def _where_in_step(claim: Claim) -> str:
    if claim.index is not None:
        return f"[{', '.join(map(str, claim.index))}]"
    if claim.row is not None:
        return f" row {claim.row}"
    if claim.col is not None:
        return f" column {claim.col}"
    return ""


#: The evaluator's own ball traces, kept as defined: a subclass, or a test that patches
#: ``Evaluator.ball_trace`` itself, computes (or withholds) balls its own way, and the
#: partial traces of :meth:`Evaluator.ball_trace_of` would bypass it.
_BALL_TRACE = Evaluator.ball_trace
