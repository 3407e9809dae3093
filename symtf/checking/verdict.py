"""The verdict rule: one printed number against one exact value.

DESIGN.md "Verdicts", for a printed number whose last digit has weight ``u``:

- ``exact``: the printed value equals the exact value;
- ``rounded``: it is a correct rounding of the exact value (an exact tie
  accepts either neighbour unless the claim or file states ``rounding``);
- ``slip``: not a correct rounding, but ``|printed − exact| < u``;
- ``wrong``: ``|printed − exact| >= u`` (a printed ±∞ at a finite entry, or a
  finite number at a masked one, is wrong);
- ``symbolic``: the value depends on a symbol of the file, so it is reported as
  an expression (with the symbol's values that print as the printed number,
  where that is cheap);
- ``undecided``: the exact value could not be separated from a boundary within
  :data:`~symtf.backends.certify.MAX_BITS` bits, and exact algebra could not prove it
  equal to it (the explanation says which boundary).

Every comparison is certified: rationals exactly (also through node
definitions), everything else with balls whose precision escalates 128 → 1024
bits, then exact algebra (the trigonometry-aware zero test), then further up
to the cap. The quantity only needs ``ball(prec)`` and ``exact()`` (see
:class:`symtf.checking.evaluation.Quantity`).
"""

from __future__ import annotations

import contextlib
import time
from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from fractions import Fraction
from typing import TYPE_CHECKING, Any, Protocol, cast

import sympy
from flint import arb, ctx, fmpz
from sympy.polys.polyerrors import CoercionFailed

from symtf.backends.certify import (
    MAX_BITS,
    PRECISIONS,
    compare_ball,
    decimal_string,
    exact_zero,
    ladder,
    sign_by_parts,
    time_left,
    to_fmpq,
)
from symtf.backends.exact import infinite_sign
from symtf.dag import postorder
from symtf.errors import Undecided
from symtf.numbers import (
    DEFAULT_ROUNDING,
    Interval,
    Printed,
    decade,
    format_fixed,
    rounding_interval,
)

if TYPE_CHECKING:
    from symtf.spec.symbols import SymbolSpec

#: Every verdict class, best first within "decided".
VERDICTS = ("exact", "rounded", "slip", "wrong", "symbolic", "undecided")
#: Verdicts that decide nothing about the printed number.
UNDECIDED = ("symbolic", "undecided")


class QuantityLike(Protocol):
    """What the rule needs of an exact value."""

    def ball(self, prec: int) -> arb | None: ...

    def exact(self) -> tuple[sympy.Expr, Any]: ...


@dataclass(frozen=True)
class Verdict:
    """The verdict on one printed number.

    Attributes:
        verdict: One of :data:`VERDICTS`.
        expected: The correct rounding, written like the print (``None`` if unknown).
        explanation: Why, in a sentence built from the numbers it states.
        units_off: Certified ``(printed − exact)/u`` as a decimal string
            (``"0"`` when exact, ``"inf"``/``"-inf"`` against an infinity).
        extra: Further JSON fields (``symbolic_value``, ``solutions``).
        decimal: A certified decimal of the value the verdict found when the quantity
            cannot give one itself (a symbol that cancels), else ``None``.
        cancels: The symbol that cancels from the value, if one does.
    """

    verdict: str
    expected: str | None
    explanation: str
    units_off: str | None = None
    extra: dict[str, Any] = field(default_factory=dict)
    decimal: str | None = None
    cancels: str | None = None


# ----------------------------------------------------------------------------- exact rationals


def exact_rational(e: sympy.Expr, xp: Any = None, limit: int = 200_000) -> Fraction | None:
    """The value as a rational when it is built from rationals by ``+ × ÷`` and integer powers.

    Looks through the node definitions of ``xp`` (an
    :class:`~symtf.backends.ExactBackend`) without expanding them into one
    closed form: each node is evaluated once. ``None`` for anything else
    (a square root, an exponential, a symbol) or beyond ``limit`` nodes.
    """
    defs = getattr(xp, "defs", {})
    memo: dict[sympy.Basic, Fraction | None] | None = getattr(xp, "_rational_memo", None)
    if memo is None:
        memo = {}
        if xp is not None:
            with contextlib.suppress(AttributeError):  # a backend without attributes
                xp._rational_memo = memo

    def parts(t: sympy.Basic) -> tuple[sympy.Basic, ...]:
        if t.is_Symbol and t in defs:
            return (defs[t],)
        if t.is_Add or t.is_Mul:
            return tuple(t.args)
        if t.is_Pow and t.exp.is_Integer and abs(int(t.exp)) <= 64:
            return (t.base,)
        return ()

    def one(t: sympy.Basic) -> Fraction | None:
        if t.is_Rational:
            return Fraction(int(t.p), int(t.q))
        if t.is_Symbol and t in defs:
            return memo[defs[t]]
        if t.is_Add or t.is_Mul:
            values = [memo[a] for a in t.args]
            if any(v is None for v in values):
                return None
            r = Fraction(0) if t.is_Add else Fraction(1)
            for v in values:
                r = r + v if t.is_Add else r * v  # type: ignore[operator]
            return r
        if t.is_Pow and t.exp.is_Integer and abs(int(t.exp)) <= 64:
            b, n = memo[t.base], int(t.exp)
            return None if b is None or (b == 0 and n < 0) else b**n
        return None

    # each node once, its parts first (a stack, not recursion: chains nest deep)
    order = postorder(e, parts, memo, limit)
    if order is None:
        return None
    for t in order:
        memo[t] = one(t)
    return memo[e]


# ----------------------------------------------------------------------------- certified location


class Located:
    """An exact value with cached balls, compared with rationals certifiably.

    Args:
        q: The quantity.
    """

    def __init__(self, q: QuantityLike) -> None:
        self.q = q
        self._balls: dict[int, arb | None] = {}
        self._expr: sympy.Expr | None = None
        self.xp: Any = None
        #: Why the last :meth:`sign` call returned ``None``.
        self.reason = ""
        self.symbols: frozenset[sympy.Symbol] = frozenset()
        self.infinite = 0
        self.rational: Fraction | None = None
        # A value from a weights file (symtf.spec.weights) is decided by floats and balls; its
        # exact form, an expensive exact trace, is built only if they cannot decide.
        self._lazy = bool(getattr(q, "_lazy", False)) and getattr(q, "_exact_value", None) is None
        if self._lazy:
            x = self._fast()
            if x is not None and not x.is_finite() and x.rad() == 0:
                self.infinite = 1 if float(x.mid()) > 0 else -1
            return
        self._settle()

    def _settle(self) -> None:
        """Read the exact value: its symbols, infinity and rational value."""
        self._expr, self.xp = self.q.exact()
        self.symbols = self._symbols()
        self.infinite = infinite_sign(self._expr)
        self.rational = (
            None if self.symbols or self.infinite else exact_rational(self._expr, self.xp)
        )
        self._lazy = False

    @property
    def expr(self) -> sympy.Expr:
        """The exact value (computed on first use for a lazy quantity)."""
        if self._expr is None:
            self._settle()
        assert self._expr is not None
        return self._expr

    def _fast(self) -> arb | None:
        fast = getattr(self.q, "fast_ball", None)
        return fast() if fast is not None else None

    def _path(self, how: str) -> None:
        """Record which path decided a comparison (symtf.checking.evaluation.Quantity.decided_by)."""
        decided = getattr(self.q, "_decided", None)
        if decided is not None:
            decided(how)

    def _symbols(self) -> frozenset[sympy.Symbol]:
        if self.xp is not None and hasattr(self.xp, "user_symbols"):
            # A pending branch node (a sign no test could decide) is not a symbol of the
            # file: a value depending on it is undecided, not symbolic.
            pending = getattr(self.xp, "undecided", {})
            return frozenset(s for s in self.xp.user_symbols(self.expr) if s not in pending)
        return frozenset(self.expr.free_symbols)

    def ball(self, prec: int) -> arb | None:
        """The quantity's ball at ``prec`` bits (cached)."""
        if prec not in self._balls:
            self._balls[prec] = self.q.ball(prec)
        return self._balls[prec]

    def sign(self, b: Fraction) -> int | None:
        """Certified sign of ``value − b``, or ``None`` (with :attr:`reason`)."""
        if self.rational is not None:
            d = self.rational - b
            self._path("exact")
            return (d > 0) - (d < 0)
        if self.infinite:
            return self.infinite
        if self.symbols:
            self.reason = "the value depends on a symbol"
            return None
        x = self._fast()
        if x is not None:
            c = compare_ball(x, b)
            if c is not None:
                self._path("midrad")
                return c
        for prec in PRECISIONS:
            c = self._compare(prec, b)
            if c is not None:
                self._path(f"arb{prec}")
                return c
        if self._lazy:  # the balls could not decide: now the exact value is worth building
            try:
                self._settle()
            except Undecided as e:  # out of reach (a model too large for exact values)
                self.reason = str(e)
                return None
            return self.sign(b)
        self._path("exact")
        diff = self.expr - sympy.Rational(b.numerator, b.denominator)
        try:
            if exact_zero(diff, self.xp):
                return 0
            c = sign_by_parts(diff, self.xp)
            if c is not None:
                return c
        except (TypeError, Undecided, RecursionError):
            pass
        last: arb | None = None
        reached = PRECISIONS[-1]
        for prec in ladder(PRECISIONS[-1] * 2, MAX_BITS):
            start = time.perf_counter()
            c = self._compare(prec, b)
            if c is not None:
                return c
            reached = prec
            x = self.ball(prec)
            if x is None:
                break
            rad = x.rad()
            if last is not None and not rad < last:  # more bits no longer help
                break
            last = rad
            left = time_left()
            if left is not None and (time.perf_counter() - start) * 4 > left:
                self.reason = (
                    f"the exact value cannot be separated from {_short(b)} by balls of "
                    f"{reached} bits, and the next precision would not fit in what is left "
                    "of the --timeout budget (exact algebra could not prove equality)"
                )
                return None
        self.reason = (
            f"the exact value cannot be separated from {_short(b)}: balls of up to "
            f"{reached} bits contain it, and exact algebra could not prove equality "
            f"(beyond the precision cap of {MAX_BITS} bits)"
        )
        return None

    def _compare(self, prec: int, b: Fraction) -> int | None:
        x = self.ball(prec)
        if x is None:
            return None
        return compare_ball(x, b)

    def inside(self, iv: Interval) -> tuple[bool | None, int | None, int | None]:
        """Whether the value lies in ``iv``, with the signs against both ends."""
        lo = self.sign(iv.lo)
        if lo is None:
            return None, None, None
        if lo < 0 or (lo == 0 and not iv.lo_closed):
            return False, lo, None
        hi = self.sign(iv.hi)
        if hi is None:
            return None, lo, None
        return hi < 0 or (hi == 0 and iv.hi_closed), lo, hi

    def decimal_hint(self) -> str | None:
        """A certified decimal of the finite value, if one is at hand."""
        if self.rational is not None:
            return rational_text(self.rational)
        for prec in PRECISIONS:
            b = self.ball(prec)
            if b is not None:
                s = decimal_string(b, 15)
                if s is not None:
                    return s
        return None

    def units(self, v: Fraction, u: Fraction) -> str | None:
        """Certified ``(v − value)/u`` as a decimal string."""
        if self.rational is not None:
            return rational_text((v - self.rational) / u)
        saved = ctx.prec
        try:
            for prec in PRECISIONS:
                x = self.ball(prec)
                if x is None or not x.is_finite():
                    continue
                ctx.prec = prec
                d = (arb(to_fmpq(v)) - x) / arb(to_fmpq(u))
                s = decimal_string(d, 6)
                if s is not None:
                    return s
        finally:
            ctx.prec = saved
        return None


def rational_text(q: Fraction, digits: int = 20) -> str:
    """A rational as a decimal: exact when it terminates within ``digits`` places, else ``…``."""
    if q == 0:
        return "0"
    for n in range(digits + 1):
        if (q * 10**n).denominator == 1:
            return format_fixed(q, n)
    a = abs(q)
    k = _digits(a.numerator) - _digits(a.denominator)
    decimals = max(digits - 1 - k, 0)
    t = Fraction(int(a * 10**decimals), 10**decimals)
    return ("-" if q < 0 else "") + format_fixed(t, decimals) + "…"


def _digits(n: int) -> int:
    """How many decimal digits ``n > 0`` has (``str`` refuses ints of more than 4300)."""
    k = max(1, int((n.bit_length() - 1) * 0.30102999566398120) + 1)
    while k > 1 and 10 ** (k - 1) > n:
        k -= 1
    while 10**k <= n:
        k += 1
    return k


def _short(b: Fraction) -> str:
    return rational_text(b, 30)


# ----------------------------------------------------------------------------- the rule


def decide(
    q: QuantityLike,
    p: Printed,
    mode: str = DEFAULT_ROUNDING,
    symbols: Mapping[str, SymbolSpec] | None = None,
) -> Verdict:
    """Classify one printed number against an exact quantity (total: never raises on a value).

    Args:
        q: The exact value.
        p: The printed number.
        mode: The rounding rule (``nearest`` when the file states none).
        symbols: The file's ``[symbols]`` table: a declared symbol's range bounds its
            solution set, and its value is marked inside or outside that set.
    """
    x = Located(q)
    if x.symbols:
        return _symbolic(x, p, mode, symbols or {})
    if p.is_infinite:
        if x.infinite and x.infinite == p.inf:
            what = "masked: exactly −∞" if p.inf < 0 else "exactly +∞"
            return Verdict("exact", p.text, what, "0")
        side = "inf" if p.inf > 0 else "-inf"
        if x.infinite:
            return Verdict("wrong", None, "printed ∞ of the wrong sign", side)
        shown = x.decimal_hint()
        return Verdict(
            "wrong",
            None,
            f"printed {'−' if p.inf < 0 else '+'}∞, but this entry is finite"
            + ("" if p.inf > 0 else " (not masked)")
            + (f": its exact value is {shown}" if shown else ""),
            side,
        )
    assert p.value is not None
    if x.infinite:
        return Verdict(
            "wrong",
            None,
            f"the exact value is {'−' if x.infinite < 0 else '+'}∞"
            + (" (a masked entry)" if x.infinite < 0 else ""),
            "inf" if x.infinite < 0 else "-inf",
        )
    c = x.sign(p.value)
    if c == 0:
        return Verdict("exact", p.format(p.value), "equals the exact value", "0")
    if p.is_fraction:
        if c is None:
            return Verdict("undecided", None, x.reason)
        return Verdict("wrong", None, "the printed fraction is not the exact value")
    u = p.ulp
    inside, lo, hi = x.inside(rounding_interval(p, mode))
    if inside is None:
        return Verdict("undecided", None, x.reason)
    units = x.units(p.value, u)
    if inside:
        tie = lo == 0 or hi == 0
        if tie and mode == "nearest":
            other = p.value + u if hi == 0 else p.value - u
            why = (
                f"the exact value is a tie between {p.format(min(p.value, other))} and "
                f"{p.format(max(p.value, other))}: either is a correct rounding"
            )
        elif tie:
            why = f"correctly rounded ({mode}; the exact value is a tie)"
        else:
            why = f"correctly rounded ({mode})" if mode != "nearest" else "correctly rounded"
        return Verdict("rounded", p.format(p.value), why, units)
    if c is None:
        return Verdict("undecided", None, x.reason)
    # Not a correct rounding: a slip when strictly within one unit, else wrong.
    edge = x.sign(p.value - u) if c < 0 else x.sign(p.value + u)
    if edge is None:
        return Verdict("undecided", None, x.reason)
    slip = edge > 0 if c < 0 else edge < 0
    r = correct_rounding(x, p, mode)
    expected = None if r is None else r.format(r.value)
    shown = f"; the exact value rounds to {expected}" if expected else ""
    if slip:
        amount = _amount(units, "less than one")
        return Verdict(
            "slip",
            expected,
            f"not a correct rounding, though within one in the last digit: "
            f"{amount} of the last digit from the exact value{shown}",
            units,
        )
    amount = _amount(units, "at least one")
    return Verdict(
        "wrong",
        expected,
        f"off by {amount} in the last digit{'' if not expected else f': should be {expected}'}",
        units,
    )


def _amount(units: str | None, unknown: str) -> str:
    """How far off, in the printed number's last digit, in words: ``about 0.6``, ``about 279``.

    ``units`` is the certified ``(printed − exact)/u``; it is rounded to two significant
    digits (an integer from 10 up), and the JSON field keeps every certified digit.
    """
    if not units:
        return unknown
    try:
        a = abs(Fraction(units.rstrip("…")))
    except (ValueError, ZeroDivisionError):
        return unknown
    if a >= 10:
        return f"about {round(a)}"
    shown = f"{float(a):.2g}"
    if "e" in shown:
        return "a tiny fraction"
    return shown if Fraction(shown) == a else f"about {shown}"


def correct_rounding(x: Located, p: Printed, mode: str) -> Printed | None:
    """The certified correct rounding of the value on ``p``'s grid, written like ``p``."""
    rmode = "half-up" if mode in ("any", "nearest") else mode
    saved = ctx.prec
    try:
        for prec in PRECISIONS:
            if x.rational is not None:
                guess_ball = None
            else:
                guess_ball = x.ball(prec)
                if guess_ball is None or not guess_ball.is_finite():
                    continue
            decimals = p.decimals
            if p.style == "sci":
                k = _decade(x, guess_ball)
                if k is None:
                    continue
                decimals = p.significant - 1 - k
            if abs(decimals) > MAX_EXPECTED_DIGITS:  # e^-10^6 in scientific notation
                return None
            u = Fraction(10) ** -decimals
            guess = _nearest_multiple(x.rational, guess_ball, u, prec)
            if guess is None:
                return None
            for cand in (guess, guess - u, guess + u):
                cp = replace(p, text="", value=cand, decimals=decimals, shortened=False)
                cp = replace(cp, text=cp.format(cand))
                ok, _, _ = x.inside(rounding_interval(cp, rmode))
                if ok is None:
                    return None
                if ok:
                    return cp
            if x.rational is not None:
                return None
    finally:
        ctx.prec = saved
    return None


def _decade(x: Located, b: arb | None) -> int | None:
    """``floor(log10 |value|)`` if certain at this ball (a guide for the grid of a scientific print)."""
    if x.rational is not None:
        a = abs(x.rational)
        return 0 if a == 0 else decade(a)
    assert b is not None
    if b.contains(0):
        return None
    lg = (abs(b).log() / arb(10).log()).floor()
    return int(cast(fmpz, lg.unique_fmpz())) if lg.is_exact() else None


#: Largest correct rounding written out, in decimal digits (a value of 10^4000 gets none).
MAX_EXPECTED_DIGITS = 200


def _nearest_multiple(r: Fraction | None, b: arb | None, u: Fraction, prec: int) -> Fraction | None:
    """A multiple of ``u`` near the value (a guess, checked by the caller)."""
    if r is not None:
        return round(r / u) * u
    assert b is not None
    ctx.prec = prec
    y = b / arb(to_fmpq(u))
    if not abs(y) < 10**MAX_EXPECTED_DIGITS:
        return None
    _, exp = y.mid().man_exp()
    if int(exp) < -(prec + 64):  # |y| far below 1
        return Fraction(0)
    man, e = (y + arb(0.5)).floor().mid().man_exp()
    return round(Fraction(int(man)) * Fraction(2) ** int(e)) * u


# ----------------------------------------------------------------------------- symbols


#: Largest closed form written out for a symbolic value (expression operations); a longer
#: value is written as its named node and that node's one-level definition.
SHORT_FORM_OPS = 150
#: Where a symbol's values are searched when its value is not a rational function of it.
SEARCH_RANGE = (Fraction(-10), Fraction(10))
#: The finest cell of that search, as a fraction of the range (20 · 2^-18 ≈ 7.6e-5 wide).
SEARCH_CELL = Fraction(1, 2**18)


def _symbolic(x: Located, p: Printed, mode: str, symbols: Mapping[str, SymbolSpec]) -> Verdict:
    """A value that depends on symbols: its expression and, for one symbol, its solution set.

    The solution set is the certified set of the symbol's values for which the
    print is a correct rounding: exact over all reals (or the symbol's declared
    ``range``) for a rational function with rational coefficients
    (:func:`_solutions`), else certified by subdivision over the declared range or
    :data:`SEARCH_RANGE` (:mod:`symtf.roots`), never through a closed form of the
    whole DAG. A declared ``value`` is marked inside or outside the set
    (``declared_value``), decided at that value itself.
    """
    names = ", ".join(sorted(map(str, x.symbols)))
    extra: dict[str, Any] = {"depends_on": sorted(map(str, x.symbols))}
    why = f"depends on {names}"
    closed = _short_form(x)
    text = _brief(closed) if closed is not None else _named_form(x)
    extra["symbolic_value"] = text
    if closed is not None:
        tex = _latex(closed)
        if tex is not None:
            extra["symbolic_latex"] = tex
    # A long value is not written out in the explanation: its named form speaks in the
    # trace's internal node names (``symbolic_value`` keeps it for programs).
    long = long_value_words(names)
    why += f": the exact value is {text if closed is not None else long}"
    if len(x.symbols) == 2 and not p.is_infinite:
        why += _held_sets(x, p, mode, symbols, closed, extra)
    if p.is_infinite or len(x.symbols) != 1:
        return Verdict("symbolic", None, why, None, extra)
    (sym,) = x.symbols
    constant = _cancelled(closed, sym, p, mode) if closed is not None else None
    if constant is not None:
        return constant
    spec = symbols.get(str(sym))
    window = spec.range if spec is not None else None
    rational = closed is not None and _rational_in(closed, sym)
    sol = _solutions(closed, p, mode, window) if closed is not None and rational else None
    inside: bool | None = None
    if sol is not None:
        extra["solutions"] = sol
        within = ""
        if window is not None:
            extra["solutions_range"] = [rational_text(window[0]), rational_text(window[1])]
            within = (
                f" in the declared range [{rational_text(window[0])}, {rational_text(window[1])}]"
            )
        if sol:
            why += f"; it prints as {p.text} for {sym} in " + " ∪ ".join(
                _interval_text(s) for s in sol
            )
        else:
            why += f"; no value of {sym}{within} prints as {p.text}"
        if spec is not None and spec.value is not None and closed is not None:
            inside = _prints_at(closed, sym, spec.value, p, mode)
    else:
        found = _searched(x, sym, p, mode, window)
        if found is not None:
            rset = found.pop("_set")
            found.pop("_dual")
            extra.update(found)
            why += _searched_text(found, sym, p, declared=window is not None)
            if spec is not None and spec.value is not None:
                inside = _searched_at(x, sym, rset, spec.value, p, mode)
    if spec is not None and spec.value is not None and (sol is not None or "solutions" in extra):
        extra["declared_value"] = {
            "symbol": str(sym),
            "value": spec.value_text,
            "inside": inside,
        }
        where = {True: "inside", False: "outside", None: "not certainly inside or outside"}
        why += f"; the article's value {sym} = {spec.value_text} is {where[inside]} that set"
    return Verdict("symbolic", None, why, None, extra)


def _held_sets(
    x: Located,
    p: Printed,
    mode: str,
    symbols: Mapping[str, SymbolSpec],
    closed: sympy.Expr | None,
    extra: dict[str, Any],
) -> str:
    """For a value of two symbols: each one's solution set with the other held at its
    declared ``value`` (``held_solutions``), and the words for the explanation.

    A symbol whose partner has no declared value gets no set (there is no article's
    value to hold it at); the words say how to get one.
    """
    words = ""
    held: list[dict[str, Any]] = []
    pair = sorted(x.symbols, key=str)
    for sym, other in (pair, pair[::-1]):
        partner = symbols.get(str(other))
        if partner is None or partner.value is None:
            continue
        at = sympy.Rational(partner.value.numerator, partner.value.denominator)
        spec = symbols.get(str(sym))
        window = spec.range if spec is not None else None
        entry: dict[str, Any] = {"symbol": str(sym), "held": {str(other): partner.value_text}}
        one = closed.xreplace({other: at}) if closed is not None else None
        inside: bool | None = None
        if one is not None and _rational_in(one, sym):
            sol = _solutions(one, p, mode, window)
            if sol is None:
                continue
            entry["solutions"] = sol
            if window is not None:
                entry["solutions_range"] = [rational_text(window[0]), rational_text(window[1])]
            clause = (
                f"it prints as {p.text} for {sym} in " + " ∪ ".join(_interval_text(s) for s in sol)
                if sol
                else f"no value of {sym} prints as {p.text}"
            )
            if spec is not None and spec.value is not None:
                inside = _prints_at(one, sym, spec.value, p, mode)
        else:
            found = _searched(x, sym, p, mode, window, {other: at})
            if found is None:
                continue
            rset, dual = found.pop("_set"), found.pop("_dual")
            entry.update(found)
            clause = _searched_text(entry, sym, p, declared=window is not None).removeprefix("; ")
            if spec is not None and spec.value is not None:
                inside = _searched_at(x, sym, rset, spec.value, p, mode, dual)
        if spec is not None and spec.value is not None:
            entry["declared_value"] = {
                "symbol": str(sym),
                "value": spec.value_text,
                "inside": inside,
            }
        held.append(entry)
        words += f"; with {other} held at the article's value {partner.value_text}, {clause}"
        if "declared_value" in entry:
            place = {True: "inside", False: "outside", None: "not certainly inside or outside"}
            words += f" (the article's {sym} = {spec.value_text} is {place[inside]} it)"  # type: ignore[union-attr]
    if held:
        extra["held_solutions"] = held
    elif not any((s := symbols.get(str(v))) is not None and s.value is not None for v in pair):
        words += (
            f"; give {pair[0]} or {pair[1]} its article's value in [symbols] for the other's "
            "set with it held there"
        )
    return words


def _prints_at(
    e: sympy.Expr, sym: sympy.Symbol, value: Fraction, p: Printed, mode: str
) -> bool | None:
    """Whether ``p`` is a correct rounding of the rational function ``e`` at ``sym = value``, exactly."""
    try:
        at = e.xreplace({sym: sympy.Rational(value.numerator, value.denominator)})
    except (TypeError, ValueError, ZeroDivisionError):
        return None
    if at.has(sympy.zoo, sympy.nan) or at.is_infinite:
        return False  # a pole at the value: no number there to print (the set excludes it)
    if not at.is_Rational:
        return None
    iv = rounding_interval(p, mode) if not p.is_fraction else _point(p)
    return _in(iv, _fraction(at))


def _in(iv: Interval, v: Fraction) -> bool:
    return (iv.lo < v or (v == iv.lo and iv.lo_closed)) and (
        v < iv.hi or (v == iv.hi and iv.hi_closed)
    )


def _searched_at(
    x: Located,
    sym: sympy.Symbol,
    found: Any,
    value: Fraction,
    p: Printed,
    mode: str,
    dual: Any = None,
) -> bool | None:
    """Whether the searched set holds ``value``: read from the set, else decided at the point
    (with ``dual``, the search's own: other symbols held where it held them)."""
    from symtf import roots

    inside: bool | None = found.contains(value)
    if inside is not None or (x.xp is None and dual is None):
        return inside
    iv = rounding_interval(p, mode) if not p.is_fraction else _point(p)
    try:
        return roots.member_at(dual or roots.dual_for(x.xp, sym), x.expr, value, iv)
    except (TypeError, Undecided, RecursionError):
        return None


class _Closed:
    """A closed-form value with no symbols, as a quantity for :func:`decide`."""

    def __init__(self, e: sympy.Expr) -> None:
        self.e = e

    def ball(self, prec: int) -> arb | None:
        from symtf.backends.certify import ball

        try:
            return ball(self.e, prec)
        except (TypeError, ValueError, ZeroDivisionError, Undecided):
            return None

    def exact(self) -> tuple[sympy.Expr, Any]:
        return self.e, None


def _cancelled(e: sympy.Expr, sym: sympy.Symbol, p: Printed, mode: str) -> Verdict | None:
    """The verdict on a value in which the symbol cancels (its derivative is exactly 0), or ``None``.

    ``e^(a+2)/(2e^(a+2) + e^(a+3))`` is ``1/(2 + e)`` for every ``a``: the print is
    then decided like any number, and the explanation says that the symbol cancels.
    """
    try:
        if not exact_zero(sympy.diff(e, sym)):
            return None
        value = e.xreplace({sym: sympy.Integer(0)})
    except (TypeError, ValueError, Undecided, RecursionError):
        return None
    if value.free_symbols or not value.is_finite:
        return None
    v = decide(_Closed(value), p, mode)
    if v.verdict in UNDECIDED:
        return None
    why = f"{v.explanation} ({sym} cancels: the value is the same for every {sym})"
    decimal = Located(_Closed(value)).decimal_hint()
    return replace(v, explanation=why, decimal=decimal, cancels=str(sym))


def long_value_words(names: str) -> str:
    """What a symbolic explanation says of a value too long to write out (``names``: its
    symbols, comma-separated); the notes find the sentence's value by it."""
    return f"a long expression in {names} (not written out)"


def _short_form(x: Located) -> sympy.Expr | None:
    """The value with its nodes expanded, if that stays short (else ``None``)."""
    if x.xp is None or not hasattr(x.xp, "closed_form"):
        return x.expr if sympy.count_ops(x.expr) <= SHORT_FORM_OPS else None
    if _expanded_size(x.expr, x.xp.defs, {}, SHORT_FORM_OPS * 4) > SHORT_FORM_OPS * 4:
        return None  # expanding it would build (and simplify) a large tree first
    closed = x.xp.closed_form(x.expr, SHORT_FORM_OPS)
    if closed is None:
        return None
    return closed if len(sympy.sstr(closed)) <= 300 else None


def _expanded_size(
    e: sympy.Basic, defs: dict[sympy.Symbol, sympy.Expr], memo: dict[sympy.Basic, int], cap: int
) -> int:
    """Tree size of ``e`` with its nodes expanded, counted without building it (capped at
    ``cap + 1``).

    Walked with a stack, not recursion: a chain of 2,000 steps nests its nodes 2,000 deep.
    Every distinct node reached appears at least once in the expanded tree, so the walk
    stops past ``cap`` of them.
    """

    def parts(n: sympy.Basic) -> tuple[sympy.Basic, ...]:
        return (defs[n],) if n.is_Symbol and n in defs else tuple(n.args)

    order = postorder(e, parts, memo, cap)
    if order is None:
        return cap + 1
    for n in order:
        own = 0 if n.is_Symbol and n in defs else 1  # a node stands for its definition
        memo[n] = min(own + sum(memo[k] for k in parts(n)), cap + 1)
    return memo[e]


def _named_form(x: Located) -> str:
    """A long value as the DAG writes it: its node and that node's one-level definition."""
    defs = getattr(x.xp, "defs", {})
    e = x.expr
    if e.is_Symbol and e in defs:
        return _brief(sympy.Eq(e, defs[e], evaluate=False))
    return _brief(e)


def _rational_in(e: sympy.Expr, s: sympy.Symbol) -> bool:
    """Whether ``e`` is built from rationals and ``s`` by ``+ × ÷`` and integer powers."""
    for t in sympy.preorder_traversal(e):
        if t.is_Rational or t == s or t.is_Add or t.is_Mul:
            continue
        if t.is_Pow and t.exp.is_Integer:
            continue
        return False
    return True


def _point(p: Printed) -> Interval:
    """A printed fraction's one-point interval (a printed ``p/q`` is always finite)."""
    v = cast(Fraction, p.value)
    return Interval(v, v, True, True)


def _searched(
    x: Located,
    sym: sympy.Symbol,
    p: Printed,
    mode: str,
    window: tuple[Fraction, Fraction] | None = None,
    held: dict[sympy.Symbol, sympy.Expr] | None = None,
) -> dict[str, Any] | None:
    """The certified set of ``sym`` in ``window`` (the declared range, else :data:`SEARCH_RANGE`)
    where ``p`` is a correct rounding, other symbols at their ``held`` values; the
    :class:`~symtf.roots.RoundingSet` itself under ``_set``, its Dual under ``_dual``."""
    from symtf import roots

    if held:
        dual = roots.Dual(getattr(x.xp, "defs", {}), sym, held)
    else:
        dual = roots.dual_for(x.xp, sym) if x.xp is not None else roots.Dual({}, sym)
    iv = rounding_interval(p, mode) if not p.is_fraction else _point(p)
    lo, hi = window or SEARCH_RANGE
    if window is None and (sym.is_positive or sym.is_nonnegative):
        lo = Fraction(0)  # a temperature: its negative half means nothing
    try:
        found = roots.rounding_set(dual, x.expr, iv, lo, hi, roots.Budget(min_cell=SEARCH_CELL))
    except (TypeError, Undecided, RecursionError):
        return None
    out: dict[str, Any] = {
        "solutions": [_piece_fields(piece) for piece in found.pieces],
        "solutions_range": [rational_text(lo), rational_text(hi)],
        "solutions_unresolved": [[_exact_text(a), _exact_text(b)] for a, b in found.unresolved],
    }
    if found.stopped:
        out["solutions_stopped"] = found.stopped
    out["_set"] = found
    out["_dual"] = dual
    return out


def _exact_text(q: Fraction) -> str:
    """A search edge as an exact decimal (edges are dyadic: the range's ends halved)."""
    return rational_text(q, 400)


def _piece_fields(piece: Any) -> dict[str, Any]:
    """One interval of a searched set as JSON fields (ends, and how each is known)."""
    kinds = {"root": "root", "unresolved": "unresolved", "range": "search-range"}
    out: dict[str, Any] = {}
    for side, edge in (("lo", piece.left), ("hi", piece.right)):
        at = edge.hi if side == "lo" else edge.lo
        if edge.kind == "root" and edge.lo != edge.hi:
            out[side] = _root_text((edge.lo, edge.hi, ""))
        else:
            out[side] = rational_text(at, 30)
        out[f"{side}_closed"] = edge.kind != "root" or edge.closed
        out[f"{side}_end"] = kinds[edge.kind]
        out[f"{side}_within"] = [_exact_text(edge.lo), _exact_text(edge.hi)]
    return out


def _searched_text(
    found: dict[str, Any], sym: sympy.Symbol, p: Printed, *, declared: bool = False
) -> str:
    lo, hi = found["solutions_range"]
    sols = found["solutions"]
    if sols:
        text = f"; it prints as {p.text} for {sym} in " + " ∪ ".join(
            _interval_text(s) for s in sols
        )
    else:
        text = f"; no {sym} is certified to print as {p.text}"
    text += f" (searched {sym} in {'its declared range ' if declared else ''}[{lo}, {hi}]"
    cells = found["solutions_unresolved"]
    if cells:
        text += f"; {len(cells)} stretch(es) undecided"
        if found.get("solutions_stopped"):
            text += f": {found['solutions_stopped']}"
    return text + ")"


def _brief(e: sympy.Expr, limit: int = 300) -> str:
    try:
        text: str = sympy.sstr(e)
    except ValueError:
        return "an expression with very large numbers"
    return text if len(text) <= limit else text[:limit] + "…"


def _latex(e: sympy.Expr, limit: int = 600) -> str | None:
    """The closed form as LaTeX for the notes (``None`` when it is longer than ``limit``)."""
    try:
        text: str = sympy.latex(e)
    except ValueError:
        return None
    return text if len(text) <= limit else None


def _interval_text(s: dict[str, Any]) -> str:
    lo = "(-∞" if s["lo"] is None else ("[" if s["lo_closed"] else "(") + s["lo"]
    hi = "∞)" if s["hi"] is None else s["hi"] + ("]" if s["hi_closed"] else ")")
    ends = [
        f"{'lower' if side == 'lo' else 'upper'} end {_END_WORDS[s[side + '_end']]}"
        for side in ("lo", "hi")
        if s.get(side + "_end", "root") != "root"
    ]
    return f"{lo}, {hi}" + (f" ({'; '.join(ends)})" if ends else "")


_END_WORDS = {"unresolved": "not certain", "search-range": "at the search range's end"}


def _fraction(r: sympy.Rational) -> Fraction:
    return Fraction(int(r.p), int(r.q))


#: Largest degree of a polynomial whose real roots bound a symbolic value's solution set.
MAX_SOLUTION_DEGREE = 12


def _solutions(
    e: sympy.Expr, p: Printed, mode: str, window: tuple[Fraction, Fraction] | None = None
) -> list[dict[str, Any]] | None:
    """Where a rational function ``P(s)/Q(s)`` of one symbol prints as ``p``, or ``None``.

    With a ``window`` (the symbol's declared range, closed) the set is cut to it: the
    window's ends join the critical points, and an end of the set that is the
    window's is marked ``search-range``.

    The critical points are the real roots of ``P − lo·Q``, ``P − hi·Q`` and
    ``Q`` (``lo``, ``hi`` the ends of the printed number's rounding interval),
    isolated by SymPy's certified real-root isolation into disjoint rational
    intervals; between them membership is decided exactly at a rational test
    point, at them by the interval's closed ends. ``None`` when the value is not
    such a function with rational coefficients, the degree exceeds
    :data:`MAX_SOLUTION_DEGREE`, or the roots do not separate.
    """
    if len(e.free_symbols) != 1:
        return None
    (s,) = e.free_symbols
    try:
        num, den = sympy.fraction(sympy.cancel(sympy.together(e)))
        pn, pd = sympy.Poly(num, s, domain="QQ"), sympy.Poly(den, s, domain="QQ")
    except (sympy.PolynomialError, sympy.GeneratorsNeeded, ValueError, TypeError, CoercionFailed):
        return None
    if max(pn.degree(), pd.degree()) > MAX_SOLUTION_DEGREE:
        return None
    iv = rounding_interval(p, mode) if not p.is_fraction else _point(p)
    lo_q = sympy.Rational(iv.lo.numerator, iv.lo.denominator)
    hi_q = sympy.Rational(iv.hi.numerator, iv.hi.denominator)
    polys = [(pn - pd * lo_q, "lo"), (pn - pd * hi_q, "hi"), (pd, "pole")]
    eps = Fraction(1, 10**12)
    ends = (
        [] if window is None else [(window[0], window[0], "range"), (window[1], window[1], "range")]
    )
    for _ in range(4):
        points = list(ends)
        for poly, kind in polys:
            if poly.is_zero or poly.degree() <= 0:
                continue
            for (a, b), _mult in poly.intervals(eps=sympy.Rational(eps.numerator, eps.denominator)):
                points.append((_fraction(a), _fraction(b), kind))
        points.sort()
        if all(points[k][1] < points[k + 1][0] for k in range(len(points) - 1)):
            break
        eps /= 10**6
    else:
        return None

    def member(t: Fraction) -> bool:
        if window is not None and not window[0] <= t <= window[1]:
            return False
        qv = _fraction(pd.eval(sympy.Rational(t.numerator, t.denominator)))
        if qv == 0:  # a pole (only a window's end is tested at a point)
            return False
        x = _fraction(pn.eval(sympy.Rational(t.numerator, t.denominator))) / qv
        return (iv.lo < x or (x == iv.lo and iv.lo_closed)) and (
            x < iv.hi or (x == iv.hi and iv.hi_closed)
        )

    # Regions: (−∞, r1), {r1}, (r1, r2), ..., {rm}, (rm, ∞), each inside or not.
    regions: list[tuple[Any, Any, bool]] = []
    tests = ([points[0][0] - 1] if points else [Fraction(0)]) + [
        (points[k][1] + points[k + 1][0]) / 2 for k in range(len(points) - 1)
    ]
    if points:
        tests.append(points[-1][1] + 1)
    for k, t in enumerate(tests):
        left = points[k - 1] if k > 0 else None
        right = points[k] if k < len(points) else None
        regions.append((left, right, member(t)))
        if right is not None:
            at = (right[2] == "lo" and iv.lo_closed) or (right[2] == "hi" and iv.hi_closed)
            if right[2] == "range":
                at = member(right[0])
            elif window is not None and not window[0] <= right[0] <= window[1]:
                at = False  # a root outside the window (its bracket lies wholly outside)
            regions.append((right, right, at))
    out: list[dict[str, Any]] = []
    for left, right, inside in regions:
        if not inside:
            continue
        lo_closed = left is not None and left is right
        if out and out[-1]["_right"] is left:
            out[-1]["_right"] = right
            out[-1]["hi_closed"] = right is not None and left is right
            continue
        out.append({"_left": left, "_right": right, "lo_closed": lo_closed,
                    "hi_closed": right is not None and left is right})  # fmt: skip
    pieces = []
    for r in out:
        piece = {
            "lo": None if r["_left"] is None else _root_text(r["_left"]),
            "hi": None if r["_right"] is None else _root_text(r["_right"]),
            "lo_closed": r["lo_closed"],
            "hi_closed": r["hi_closed"],
        }
        for side, end in (("lo", r["_left"]), ("hi", r["_right"])):
            if end is not None and end[2] == "range":
                piece[f"{side}_end"] = "search-range"
        pieces.append(piece)
    return pieces


def _root_text(root: tuple[Fraction, Fraction, str]) -> str:
    """A root isolated in ``[a, b]``: exact if ``a == b``, else its certain leading digits and ``…``."""
    a, b, _ = root
    if a == b:
        return rational_text(a)
    ta, tb = rational_text(a, 12).rstrip("…"), rational_text(b, 12).rstrip("…")
    common = ""
    for x, y in zip(ta, tb, strict=False):
        if x != y:
            break
        common += x
    return (common or ta[:4]) + "…"
