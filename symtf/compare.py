"""Compare what an article printed with the exact values, and classify each number.

For each printed entry the exact value is located against a few rational
boundaries (the printed value itself, the ends of its rounding interval) with a
three-way, certified comparison: balls first, escalating precision, then exact
arithmetic on that one value. The verdict classes (``symtf check --help`` defines them):
``exact``, ``rounded``, ``slip``, ``wrong`` and ``undecided``.
"""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from fractions import Fraction
from typing import Any

import sympy
from flint import arb

from symtf.backends import BallBackend, ExactBackend
from symtf.certify import (
    PRECISIONS,
    OpenMax,
    OpenMin,
    compare_ball,
    decimal_string,
    exact_sign,
)
from symtf.errors import ModelError, SpecError, Undecided
from symtf.numbers import Printed, format_fixed, round_exact, rounding_interval
from symtf.pipeline import run
from symtf.spec import Claim, Derivation
from symtf.trace import Trace

VERDICTS = ("exact", "rounded", "slip", "wrong", "symbolic", "undecided")
#: Verdicts that make ``symtf check`` exit 1.
FAILING = ("slip", "wrong")
#: Verdicts that decide nothing: ``symtf check`` exits 1 on them unless ``--allow-undecided``.
NOT_DECIDED = ("symbolic", "undecided")


@dataclass(frozen=True)
class Check:
    """The verdict on one printed number.

    Attributes:
        claim: The claim's label.
        step: Canonical step, or ``None`` for displayed arithmetic.
        index: Entry of the step, or ``None`` for a scalar or reduced claim.
        printed: As printed.
        expected: Correct rounding at the printed precision (``None`` if undecided).
        exact: Certified decimal of the exact value (at least 15 significant digits).
        verdict: One of :data:`VERDICTS`.
        explanation: Why, in a sentence.
        value: The exact value as SymPy (for LaTeX); not part of the JSON contract.
        extra: Further JSON fields (e.g. the readings of an expression claim).
    """

    claim: str
    step: str | None
    index: tuple[int, int] | None
    printed: str
    expected: str | None
    exact: str | None
    verdict: str
    explanation: str
    value: Any = None
    extra: dict[str, Any] = field(default_factory=dict)

    def __repr__(self) -> str:
        from symtf.renderers.summary import check_summary

        return check_summary(self)


@dataclass(frozen=True)
class ClaimResult:
    """All checks of one claim."""

    claim: Claim
    checks: tuple[Check, ...]

    @property
    def verdict(self) -> str:
        """The worst verdict among the claim's entries."""
        order = {"wrong": 0, "undecided": 1, "slip": 2, "symbolic": 3, "rounded": 4, "exact": 5}
        return min((c.verdict for c in self.checks), key=order.__getitem__, default="exact")

    def __repr__(self) -> str:
        from symtf.renderers.summary import claim_summary

        return claim_summary(self)


@dataclass(frozen=True)
class DerivationReport:
    """The checks of one derivation file."""

    path: str
    title: str
    results: tuple[ClaimResult, ...]
    trace: Trace | None = None
    seconds: float | None = None  # wall-clock time of the check, when a caller measured it

    @property
    def checks(self) -> list[Check]:
        """Every check, in file order."""
        return [c for r in self.results for c in r.checks]

    @property
    def counts(self) -> dict[str, int]:
        """How many checks have each verdict."""
        counts = dict.fromkeys(VERDICTS, 0)
        for c in self.checks:
            counts[c.verdict] += 1
        return counts

    def _repr_latex_(self) -> str:
        from symtf.renderers.latex import derivation_report_latex

        return derivation_report_latex(self)

    def __repr__(self) -> str:
        from symtf.renderers.summary import derivation_summary

        return derivation_summary(self)

    def _repr_markdown_(self) -> str:
        from symtf.renderers.markdown import report_markdown

        return report_markdown(self)

    def _repr_html_(self) -> str:
        from symtf.renderers.html import report_fragment

        return report_fragment(self)


@dataclass(frozen=True)
class FileError:
    """A derivation file that could not be checked (bad input: exit code 2).

    Attributes:
        path: The file as named on the command line.
        error: The message: file, key (and line), what was expected and what was found.
    """

    path: str
    error: str


@dataclass(frozen=True)
class Report:
    """The checks of several derivation files, and the files that could not be checked."""

    derivations: tuple[DerivationReport, ...]
    errors: tuple[FileError, ...] = ()

    @property
    def failed(self) -> bool:
        """Whether any printed number is a slip or wrong."""
        return any(c.verdict in FAILING for d in self.derivations for c in d.checks)

    @property
    def undecided(self) -> int:
        """How many printed numbers are ``symbolic`` or ``undecided`` (checked by nobody)."""
        return sum(1 for d in self.derivations for c in d.checks if c.verdict in NOT_DECIDED)

    def _repr_latex_(self) -> str:
        from symtf.renderers.latex import report_latex

        return report_latex(self)

    def __repr__(self) -> str:
        from symtf.renderers.summary import report_summary

        return report_summary(self)

    def _repr_markdown_(self) -> str:
        from symtf.renderers.markdown import report_markdown

        return report_markdown(self)

    def _repr_html_(self) -> str:
        from symtf.renderers.html import report_fragment

        return report_fragment(self)


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
    ) -> None:
        self._ball = ball
        self._exact = exact
        self._fast = fast
        self._lazy = lazy
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
        return self.exact()[0] == sympy.S.NegativeInfinity

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
        x = self.ball(PRECISIONS[0])
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

    def _rational_sign(self, b: Fraction) -> int | None:
        e, _ = self.exact()
        if e.is_Rational:
            self._decided("exact")
            d = Fraction(int(e.p), int(e.q)) - b
            return (d > 0) - (d < 0)
        if e.is_infinite:
            self._decided("exact")
            return 1 if e.is_extended_positive else -1
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
            for prec in PRECISIONS:
                x = self.ball(prec)
                s = decimal_string(x, 20) if x is not None else None
                if s is not None:
                    return s
            if self._exact_value is None:
                return None  # a value on a short decimal: only the exact trace would tell
        e, _ = self.exact()
        if e.is_Rational:
            return _rational_decimal(Fraction(int(e.p), int(e.q)))
        if e.is_infinite:
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


def _rational_decimal(q: Fraction, digits: int = 20) -> str:
    """A rational as a decimal: exact when it terminates within ``digits``, else truncated + ``…``."""
    if q == 0:
        return "0"
    for n in range(0, 40):
        if (q * 10**n).denominator == 1:
            return format_fixed(q, n)
    sign = "-" if q < 0 else ""
    a = abs(q)
    k = 0
    while Fraction(10) ** (k + 1) <= a:
        k += 1
    while Fraction(10) ** k > a:
        k -= 1
    decimals = max(digits - 1 - k, 0)
    t = Fraction(int(a * 10**decimals), 10**decimals)
    return sign + format_fixed(t, decimals) + "…"


class Evaluator:
    """Lazily computed traces of one derivation: balls at each precision, and exact.

    Args:
        derivation: The derivation to evaluate.
    """

    #: Whether comparisons try the midpoint–radius trace first (:mod:`symtf.midrad`).
    midrad: bool = True

    def __init__(self, derivation: Derivation) -> None:
        self.derivation = derivation
        self._balls: dict[int, Trace | None] = {}
        self._exact: Trace | None = None
        self._midrad: Trace | None = None
        self._midrad_done = False
        from symtf.weights import exact_is_expensive

        #: Whether the exact trace is computed only when no ball decides (weights from files).
        self.lazy_exact = exact_is_expensive(derivation)
        #: Exact readings of displayed lines checked so far, by claim label.
        self.expression_values: dict[str, sympy.ImmutableMatrix] = {}
        #: Printed result text of those lines -> its exact reading (for later lines that repeat it).
        self.printed_results: dict[str, sympy.Expr] = {}

    def ball_trace(self, prec: int) -> Trace | None:
        """The forward pass in balls of ``prec`` bits (``None`` if a sign was undecidable)."""
        if prec not in self._balls:
            try:
                with BallBackend(prec) as xp:
                    self._balls[prec] = run(self.derivation, xp)
            except (Undecided, ModelError, TypeError):
                self._balls[prec] = None  # decided exactly instead
        return self._balls[prec]

    def exact_trace(self) -> Trace:
        """The exact forward pass (computed once)."""
        if self._exact is None:
            self._exact = run(self.derivation)
        return self._exact

    def midrad_trace(self) -> Trace | None:
        """The forward pass in midpoint–radius float64 (``None`` if off or undecidable)."""
        cls = type(self)
        if not self.midrad or (
            cls.ball_trace is not Evaluator.ball_trace
            or cls.exact_trace is not Evaluator.exact_trace
        ):
            return None  # a subclass computes its own traces (a replay): the fast one would differ
        if not self._midrad_done:
            self._midrad_done = True
            from symtf.midrad import MidradBackend

            try:
                with MidradBackend() as xp:
                    self._midrad = run(self.derivation, xp)
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
            t = self.ball_trace(prec)
            if t is None:
                e, xp = exact()
                return xp.ball(e, prec) if xp is not None else None
            return t.value(step)[idx]

        def exact() -> tuple[sympy.Expr, ExactBackend | None]:
            t = self.exact_trace()
            return t.value(step)[idx], t.backend

        return Quantity(ball, exact, fast, lazy=self.lazy_exact)


# ----------------------------------------------------------------------------- verdicts


def classify(q: Quantity, p: Printed, mode: str = "nearest") -> tuple[str, str | None, str]:
    """Classify one printed number against an exact quantity (see :func:`symtf.verdict.decide`).

    Returns:
        ``(verdict, expected, explanation)``.
    """
    from symtf.verdict import decide

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


# ----------------------------------------------------------------------------- claims


def check(derivation: Derivation, *, explain: bool = True) -> DerivationReport:
    """Check every claim of a derivation.

    Args:
        derivation: The derivation.
        explain: Diagnose every slip or wrong number (see :mod:`symtf.diagnose`).

    Raises:
        SpecError: When a claim names a step that does not exist or does not fit.
        ModelError: When the model cannot be evaluated on its input.
    """
    ev = Evaluator(derivation)
    t = ev.midrad_trace() or ev.ball_trace(PRECISIONS[0]) or ev.exact_trace()
    results = []
    for claim in derivation.claims:
        try:
            if getattr(claim, "assertion", None) is not None:
                from symtf.assertions import check_claim

                results.append(ClaimResult(claim, (check_claim(claim, ev, derivation, Check),)))
            elif claim.expression is not None:
                from symtf.displayed import check_expression

                results.append(ClaimResult(claim, check_expression(claim, ev, derivation)))
            else:
                results.append(
                    ClaimResult(claim, tuple(_check_step_claim(claim, ev, t, derivation)))
                )
        except Undecided as e:  # this claim only: the others are still checked
            results.append(ClaimResult(claim, undecided_claim(claim, str(e), derivation.path)))
    from symtf.accept import accept  # computed_in, rounded_inputs: the article's own setting

    results = accept(derivation, results)
    if ev.lazy_exact:  # weights from files: no exact trace unless a verdict needed it
        return _undiagnosed(
            DerivationReport(derivation.path, derivation.title, tuple(results), ev._exact)
        )
    report = DerivationReport(derivation.path, derivation.title, tuple(results), ev.exact_trace())
    from symtf.diagnose import diagnose

    return diagnose(derivation, report, ev) if explain else report


def _undiagnosed(report: DerivationReport) -> DerivationReport:
    """Mark off numbers of a model with large file weights as not diagnosed.

    The diagnosis (replay from the printed numbers, convention search) re-runs the
    model many times; it runs on models within the TOML size limit only.
    """
    results = []
    for r in report.results:
        checks = []
        for c in r.checks:
            if c.verdict in FAILING and "cause" not in c.extra:
                extra = dict(c.extra)
                extra.update(cause="unexplained", convention=[], root=None)
                c = dataclasses.replace(
                    c,
                    explanation=c.explanation
                    + "; not diagnosed (weights beyond the TOML size limit: no replay or convention search)",
                    extra=extra,
                )
            checks.append(c)
        results.append(ClaimResult(r.claim, tuple(checks)))
    return dataclasses.replace(report, results=tuple(results))


def _step_or_error(claim: Claim, t: Trace) -> str:
    step = claim.step
    assert step is not None
    if claim.unmapped:
        raise SpecError(
            f"{claim.where}.step: expected a step name, found \"?\" (a draft's claim still to map;"
            " `symtf check --draft` checks the rest and suggests steps)"
        )
    if step not in t:
        from symtf.suggest import hint

        raise SpecError(
            f"{claim.where}.step: no step {step!r} in this model{hint(step, list(t), steps=True)}"
        )
    return step


def selection(claim: Claim, shape: tuple[int, ...]) -> list[list[tuple[int, ...]]]:
    """The entries of a step a claim refers to, as rows of (i, j) (full indices for N-D)."""
    if (
        len(shape) != 2
        or getattr(claim, "at", None) is not None
        or (claim.index is not None and len(claim.index) != 2)
    ):
        from symtf.graph.claims import selection_nd

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


def _fit(claim: Claim, sel: list[list[tuple[int, int]]]) -> list[tuple[tuple[int, int], Printed]]:
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


def _where_in_step(claim: Claim) -> str:
    if claim.index is not None:
        return f"[{', '.join(map(str, claim.index))}]"
    if claim.row is not None:
        return f" row {claim.row}"
    if claim.col is not None:
        return f" column {claim.col}"
    return ""


def _check_step_claim(claim: Claim, ev: Evaluator, t: Trace, d: Derivation) -> list[Check]:
    step = _step_or_error(claim, t)
    if step == "next_token" or claim.rank is not None:
        return [_check_word(claim, ev, step, d)]
    shape = t.shape(step)
    if shape is None:
        raise SpecError(f"{claim.where}.step: {step} holds token ids, not numbers")
    sel = selection(claim, shape)
    if claim.reduce is not None:
        if len(claim.printed) != 1 or len(claim.printed[0]) != 1:
            raise SpecError(
                f"{claim.where}.printed: expected one value for reduce = {claim.reduce!r}"
            )
        entries = [(i, j) for r in sel for (i, j) in r]
        qs = [ev.entry(step, i, j) for (i, j) in entries]
        try:
            q = _reduced(claim.reduce, qs)
        except _Unordered as e:  # a tie or near-tie: enclose the extreme without choosing
            a, b = entries[e.first], entries[e.second]
            c = _one(
                claim,
                step,
                None,
                _extreme_of_all(qs, largest=claim.reduce == "max"),
                claim.printed[0][0],
            )
            if c.verdict != "undecided":
                return [c]
            why = (
                f"reduce = {claim.reduce!r} cannot choose between {step}[{a[0]}, {a[1]}] and "
                f"{step}[{b[0]}, {b[1]}]: their order cannot be decided"
            )
            blocked = _blocked(
                qs[e.first].exact()[0] - qs[e.second].exact()[0],
                ev.exact_trace().backend,
                d.path,
            )
            return [dataclasses.replace(c, explanation=blocked or why)]
        return [_one(claim, step, None, q, claim.printed[0][0])]
    return [_one(claim, step, ij, ev.entry(step, *ij), p) for ij, p in _fit(claim, sel)]


def _one(
    claim: Claim, step: str | None, ij: tuple[int, int] | None, q: Quantity, p: Printed
) -> Check:
    from symtf.verdict import decide

    extra: dict[str, Any] = {}
    try:
        v = decide(q, p, claim.rounding)
        verdict, expected, why = v.verdict, v.expected, v.explanation
        extra = {"units_off": v.units_off, **v.extra}
        exact = None if v.verdict == "symbolic" else q.decimal()
    except Undecided as e:  # this entry only: the claim's other entries are still checked
        verdict, expected, why, exact = "undecided", None, f"cannot be decided: {e}", None
    value = q.exact_if_cheap()
    if verdict == "undecided":
        full, xp = q.exact()
        why = _blocked(full, xp, _file_of(claim)) or why
    if q.decided_by is not None:
        extra["decided_by"] = q.decided_by
    return Check(claim.label, step, ij, p.text, expected, exact, verdict, why, value, extra)


def _reduced(how: str, qs: Sequence[Quantity]) -> Quantity:
    if how == "sum":

        def ball(prec: int) -> arb | None:
            bs = [q.ball(prec) for q in qs]
            return None if any(b is None for b in bs) else sum(bs, arb(0))

        def exact() -> tuple[sympy.Expr, ExactBackend | None]:
            es = [q.exact() for q in qs]
            return sympy.Add(*(e for e, _ in es)), es[0][1]

        def fast() -> arb | None:
            bs = [q.fast_ball() for q in qs]
            return None if any(b is None for b in bs) else sum(bs, arb(0))

        return Quantity(ball, exact, fast, lazy=any(q._lazy for q in qs))
    pick = _extreme(qs, largest=how == "max")
    return pick


def _extreme_of_all(qs: Sequence[Quantity], *, largest: bool) -> Quantity:
    """``max``/``min`` of quantities that cannot all be ordered: enclosed without choosing."""
    pick = OpenMax if largest else OpenMin

    def ball(prec: int) -> arb | None:
        bs = [q.ball(prec) for q in qs]
        if any(b is None for b in bs):
            return None
        out = bs[0]
        for b in bs[1:]:
            out = out.max(b) if largest else out.min(b)
        return out

    def exact() -> tuple[sympy.Expr, ExactBackend | None]:
        es = [q.exact() for q in qs]
        return pick(*(e for e, _ in es)), es[0][1]

    return Quantity(ball, exact)


class _Unordered(Undecided):
    """Two entries of a ``reduce`` whose order cannot be decided (positions in the list)."""

    def __init__(self, first: int, second: int) -> None:
        super().__init__(f"cannot order entries {first} and {second} to take their extreme")
        self.first, self.second = first, second


def _extreme(qs: Sequence[Quantity], *, largest: bool) -> Quantity:
    best, at = qs[0], 0
    for k, q in enumerate(qs[1:], start=1):
        c = _cmp(q, best)
        if c is None:
            raise _Unordered(at, k)
        if (c > 0) == largest and c != 0:
            best, at = q, k
    return best


def _cmp(a: Quantity, b: Quantity) -> int | None:
    x, y = a.fast_ball(), b.fast_ball()
    if x is not None and y is not None:
        c = compare_ball(x - y, Fraction(0))
        if c is not None:
            a._decided("midrad")
            b._decided("midrad")
            return c
    if a._lazy:
        for prec in PRECISIONS:
            x, y = a.ball(prec), b.ball(prec)
            if x is not None and y is not None:
                c = compare_ball(x - y, Fraction(0))
                if c is not None:
                    a._decided(f"arb{prec}")
                    b._decided(f"arb{prec}")
                    return c
    ea, xa = a.exact()
    eb, _ = b.exact()
    diff = ea - eb
    if diff.is_Rational:
        return (diff.p > 0) - (diff.p < 0)
    for prec in PRECISIONS:
        x, y = a.ball(prec), b.ball(prec)
        if x is not None and y is not None:
            c = compare_ball(x - y, Fraction(0))
            if c is not None:
                return c
    try:
        return exact_sign(diff, xa)
    except (Undecided, TypeError):
        return None


def _check_word(claim: Claim, ev: Evaluator, step: str, d: Derivation) -> Check:
    vocab = d.model.vocab
    word = claim.word or ""
    if word not in vocab:
        raise SpecError(f"{claim.where}.printed: expected a word of model.vocab, found {word!r}")
    if step == "next_token":
        source = "logits"
        rank = 1
    else:
        source, rank = step, claim.rank or 1
    t = ev.structure()
    n = t.shape(source)[1] if t.shape(source) else 0
    if rank > n:
        raise SpecError(f"{claim.where}.rank: expected 1 to {n}, found {rank}")
    qs = [ev.entry(source, 0, j) for j in range(n)]
    unordered: list[tuple[int, int]] = []
    order = _ranking(qs, unordered)
    paths = [q.decided_by for q in qs if q.decided_by is not None]
    extra = {"decided_by": max(paths, key=DECIDED_BY.index)} if paths else {}

    def made(*args: Any) -> Check:  # every check below carries the path that decided it
        return Check(*args, extra=extra)

    unordered: list[tuple[int, int]] = []
    order = _ranking(qs, unordered)
    if order is None:
        xp = t.backend
        j, k = unordered[0]
        why = (
            f"the ranking cannot be certified: the order of {source}[0, {j}] ({vocab[j]!r}) "
            f"and {source}[0, {k}] ({vocab[k]!r}) cannot be decided"
        )
        blocked = [b for q in qs for b in _blocked_lines(q.exact()[0], xp)]
        if blocked:
            why += f": it depends on the model's branch at {d.path}: " + "; ".join(
                dict.fromkeys(blocked)
            )
        return Check(claim.label, step, None, word, None, None, "undecided", why)
    groups = order  # list of lists of tied indices, best first
    seen = 0
    for g in groups:
        if seen < rank <= seen + len(g):
            words = [vocab[k] for k in g]
            got = words[0]
            if len(g) > 1:
                if word in words:
                    why = f"exact tie between {', '.join(words)}: either is a correct pick"
                    return made(claim.label, step, None, word, word, None, "exact", why)
                why = f"the {_ordinal(rank)} place is an exact tie between {', '.join(words)}"
                return made(claim.label, step, None, word, "/".join(words), None, "wrong", why)
            if got == word:
                why = f"{word!r} has the {_ordinal(rank)} largest {source} entry"
                return made(claim.label, step, None, word, got, None, "exact", why)
            why = f"the {_ordinal(rank)} largest {source} entry is {got!r}, not {word!r}"
            return made(claim.label, step, None, word, got, None, "wrong", why)
        seen += len(g)
    raise AssertionError("rank outside the ranking")


def _ordinal(k: int) -> str:
    return {1: "1st", 2: "2nd", 3: "3rd"}.get(k, f"{k}th")


def _ranking(
    qs: Sequence[Quantity], unordered: list[tuple[int, int]] | None = None
) -> list[list[int]] | None:
    """Indices grouped by exact ties, largest first; ``None`` if an order is undecidable.

    Args:
        qs: The values.
        unordered: When given, receives the pair whose order could not be decided.
    """
    from symtf.ops import tie_groups

    def cmp(j: int, k: int) -> int | None:
        c = _cmp(qs[j], qs[k])
        if c is None and unordered is not None:
            unordered.append((k, j))
        return c

    return tie_groups(len(qs), cmp)


# ----------------------------------------------------------------------------- isolation


def _blocked_lines(value: Any, xp: Any) -> list[str]:
    """The undecided branches of the model a value depends on (see ExactBackend.undecided_in)."""
    undecided_in = getattr(xp, "undecided_in", None)
    return undecided_in(value) if undecided_in is not None else []


def _blocked(value: Any, xp: Any, path: str) -> str | None:
    """Why a value is undecided when it depends on a branch the model could not take."""
    lines = _blocked_lines(value, xp)
    if not lines:
        return None
    return f"depends on the model's branch at {path}: " + "; ".join(lines)


def _file_of(claim: Claim) -> str:
    """The derivation file named in a claim's ``where`` (``FILE: claims[3]``)."""
    return claim.where.rsplit(": claims[", 1)[0]


def undecided_claim(claim: Claim, reason: str, path: str) -> tuple[Check, ...]:
    """An ``undecided`` verdict for every printed entry of a claim that could not be checked.

    Args:
        claim: The claim.
        reason: Why it could not be decided (an :class:`~symtf.errors.Undecided` message).
        path: The derivation file, named in the explanation.
    """
    where = claim.where if claim.where.startswith(path) else f"{path}: {claim.where}"
    why = (
        f"cannot be decided: {reason}"
        if reason.startswith(path)
        else f"{where}: cannot be decided: {reason}"
    )
    if claim.word is not None or not claim.printed:
        return (
            Check(claim.label, claim.step, None, claim.word or "", None, None, "undecided", why),
        )
    return tuple(
        Check(claim.label, claim.step, None, p.text, None, None, "undecided", why)
        for row in claim.printed
        for p in row
    )
