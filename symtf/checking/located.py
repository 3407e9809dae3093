"""An exact value located against printed numbers, certified: rationals exactly (also
through node definitions), everything else with balls whose precision escalates, then
exact algebra; and exact rationals written as text.
"""

from __future__ import annotations

import contextlib
import time
from fractions import Fraction
from typing import Any, Protocol

import sympy
from flint import arb, ctx

from symtf.backends.certify import MAX_BITS, PRECISIONS, compare_ball, ladder, time_left, to_fmpq
from symtf.backends.decimals import decimal_string
from symtf.backends.exact import infinite_sign
from symtf.backends.signs import sign_by_parts
from symtf.backends.zero import exact_zero
from symtf.dag import postorder
from symtf.errors import Undecided
from symtf.numbers import Interval, format_fixed


class QuantityLike(Protocol):
    """What the rule needs of an exact value."""

    def ball(self, prec: int) -> arb | None: ...

    def exact(self) -> tuple[sympy.Expr, Any]: ...


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
