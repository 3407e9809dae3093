"""Certified enclosures and exact decisions.

The rule: a verdict rests on a ball that provably contains the exact value
(python-flint's Arb), or on exact rational arithmetic. Precision escalates
128 → 1024 bits; when a ball still straddles a boundary, the exact SymPy value
is consulted; when that cannot settle it cheaply, the answer is
:class:`~symtf.errors.Undecided`, never a guess.

Note that python-flint's ``<``, ``>`` and ``==`` all return ``False`` for a ball
that straddles the other operand; :func:`compare_ball` makes that three-way.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from fractions import Fraction
from typing import Any

import sympy
from flint import arb, ctx, fmpq

from symtf.errors import Undecided

#: Working precisions tried in turn, in bits.
PRECISIONS = (128, 256, 512, 1024)
#: Expressions larger than this (in operations) are not handed to exact simplification.
MAX_EXACT_OPS = 400


def to_fmpq(x: Fraction | sympy.Rational) -> fmpq:
    """An exact flint rational."""
    if isinstance(x, Fraction):
        return fmpq(x.numerator, x.denominator)
    return fmpq(int(x.p), int(x.q))


def ball(
    expr: sympy.Expr,
    prec: int = 128,
    *,
    defs: Mapping[sympy.Symbol, sympy.Expr] | None = None,
    memo: dict[sympy.Basic, arb] | None = None,
) -> arb:
    """A certified ball enclosing a closed-form SymPy expression.

    Args:
        expr: Built from rationals, ``+ × ^``, ``exp``, ``log``, ``sqrt``, ``erf``,
            ``sin``, ``cos``, ``tanh``, ``Abs``, ``Max``/``Min``, π, e and ±∞.
        prec: Working precision in bits.
        defs: Definitions of node symbols (see :class:`~symtf.backends.ExactBackend`).
        memo: A cache of balls at this precision, shared between calls.

    Raises:
        Undecided: When the expression has free symbols.
        TypeError: When it contains a binary float or an unsupported function.
    """
    saved = ctx.prec
    ctx.prec = prec
    try:
        e = expr if isinstance(expr, sympy.Basic) else sympy.Integer(expr)
        return _ball(e, {} if memo is None else memo, defs or {})
    finally:
        ctx.prec = saved


_FUNCS = {
    sympy.exp: arb.exp,
    sympy.log: arb.log,
    sympy.erf: arb.erf,
    sympy.sin: arb.sin,
    sympy.cos: arb.cos,
    sympy.tan: arb.tan,
    sympy.tanh: arb.tanh,
    sympy.Abs: lambda x: abs(x),
}


def _ball(
    e: sympy.Basic, memo: dict[sympy.Basic, arb], defs: Mapping[sympy.Symbol, sympy.Expr]
) -> arb:
    hit = memo.get(e)
    if hit is not None:
        return hit
    if e.is_Rational:
        r = arb(fmpq(int(e.p), int(e.q)))
    elif e is sympy.S.Pi:
        r = arb.pi()
    elif e is sympy.S.Exp1:
        r = arb(1).exp()
    elif e is sympy.S.NegativeInfinity:
        r = arb("-inf")
    elif e is sympy.S.Infinity:
        r = arb("inf")
    elif e.is_Add:
        r = arb(0)
        for a in e.args:
            r += _ball(a, memo, defs)
    elif e.is_Mul:
        r = arb(1)
        for a in e.args:
            r *= _ball(a, memo, defs)
    elif e.is_Pow:
        base, ex = e.args
        b = _ball(base, memo, defs)
        if ex.is_Integer:
            n = int(ex)
            r = b ** abs(n) if (b > 0 or b < 0) else _power_near_zero(b, abs(n))
            if n < 0:
                r = 1 / r
        elif ex == sympy.S.Half:
            r = b.sqrt()
        elif ex == -sympy.S.Half:
            r = b.rsqrt()
        else:
            r = (_ball(ex, memo, defs) * b.log()).exp()
    elif e.func in _FUNCS:
        r = _FUNCS[e.func](_ball(e.args[0], memo, defs))
    elif isinstance(e, (sympy.Max, sympy.Min)):  # OpenMax/OpenMin too
        items = [_ball(a, memo, defs) for a in e.args]
        r = items[0]
        for x in items[1:]:
            r = r.max(x) if isinstance(e, sympy.Max) else r.min(x)
    elif e.is_Symbol and e in defs:
        r = _ball(defs[e], memo, defs)
    elif e.is_Symbol:
        raise Undecided(f"the value depends on the symbol {e}")
    elif e.is_Float:
        raise TypeError(f"a binary float {e} reached exact arithmetic")
    else:
        raise TypeError(f"cannot enclose {type(e).__name__} ({e})")
    memo[e] = r
    return r


def _power_near_zero(b: arb, n: int) -> arb:
    """``b**n`` for a ball that contains 0 (python-flint's ``**`` gives nan there)."""
    if n == 0:
        return arb(1)
    base = abs(b) if n % 2 == 0 else b  # an even power of [−r, r] lies in [0, r^n]
    result = arb(1)
    while n:
        if n & 1:
            result *= base
        n >>= 1
        if n:
            base = base * base
    return result


class _Open:
    """Printing of :class:`OpenMax`/:class:`OpenMin` as SymPy's own ``Max``/``Min``."""

    _closed: Any

    def _sympystr(self, printer: Any) -> str:
        return printer._print(self._closed(*self.args, evaluate=False))  # type: ignore[attr-defined]

    def _latex(self, printer: Any) -> str:
        return printer._print(self._closed(*self.args, evaluate=False))  # type: ignore[attr-defined]


class OpenMax(_Open, sympy.Max):
    """``max`` of values whose order cannot be decided, kept open: never re-evaluated.

    SymPy's ``Max`` compares its arguments whenever it is rebuilt (``xreplace``,
    ``expand``), with ``evalf`` at ever higher precision — minutes for values
    that differ by ``e^-5000``. Balls enclose it like ``Max``.
    """

    _closed = sympy.Max

    def __new__(cls, *args: Any, **options: Any) -> Any:
        options["evaluate"] = False
        return super().__new__(cls, *args, **options)


class OpenMin(_Open, sympy.Min):
    """``min`` of values whose order cannot be decided (see :class:`OpenMax`)."""

    _closed = sympy.Min

    def __new__(cls, *args: Any, **options: Any) -> Any:
        options["evaluate"] = False
        return super().__new__(cls, *args, **options)


def compare_ball(x: arb, b: Fraction) -> int | None:
    """Three-way comparison of a ball with a rational: -1, 0, 1, or ``None`` if undecided."""
    q = to_fmpq(b)
    if x > q:
        return 1
    if x < q:
        return -1
    if x.is_exact() and x == q:
        return 0
    return None


def exact_zero(expr: sympy.Expr, exact: Any = None) -> bool:
    """Whether an expression is provably 0 by cheap exact algebra (never ``simplify``).

    Args:
        expr: The expression.
        exact: The :class:`~symtf.backends.ExactBackend` whose node symbols it uses.
    """
    if exact is not None:
        closed = exact.closed_form(expr, MAX_EXACT_OPS)
        if closed is None:
            return False
        expr = closed
    if expr.is_Rational:
        return expr == 0
    if sympy.count_ops(expr) > MAX_EXACT_OPS:
        return False
    for transform in (sympy.expand, lambda t: sympy.cancel(sympy.together(t))):
        if transform(expr) == 0:
            return True
    if not _radicals_only(expr):
        # radsimp may call nsimplify, which evaluates exp(10^6) to thousands of digits
        # with mpmath (minutes); it only helps with square roots anyway.
        return False
    return sympy.radsimp(expr) == 0 or sympy.expand(sympy.radsimp(sympy.expand(expr))) == 0


def _radicals_only(expr: sympy.Basic) -> bool:
    """Whether ``expr`` is built from rationals, ``+ ×`` and rational powers alone."""
    return all(
        a.is_Rational or a.is_Add or a.is_Mul or (a.is_Pow and a.exp.is_Rational)
        for a in sympy.preorder_traversal(expr)
    )


def exact_sign(expr: sympy.Expr, exact: Any = None) -> int:
    """The sign of an exact expression, certified.

    Balls of :data:`PRECISIONS` bits come first. A ball that stays wide because
    the value is huge (``e^9999 − 10^4342``) gets one more try with enough bits
    for its magnitude (at most :data:`MAX_ADAPTIVE_BITS`), then exact algebra.

    Args:
        expr: The expression.
        exact: The :class:`~symtf.backends.ExactBackend` whose node symbols it uses.

    Raises:
        Undecided: When no ball excludes 0 and exact algebra cannot show the
            expression is 0.
    """
    if expr.is_Rational:
        return (expr.p > 0) - (expr.p < 0)

    def enclose(prec: int) -> arb:
        return exact.ball(expr, prec) if exact is not None else ball(expr, prec)

    b = arb(0)
    for prec in PRECISIONS:
        b = enclose(prec)
        c = compare_ball(b, Fraction(0))
        if c is not None:
            return c
    wide = _radius_bits(b)
    if wide is not None and wide > -PRECISIONS[-1] // 2:
        prec = PRECISIONS[-1] + min(wide + PRECISIONS[-1], MAX_ADAPTIVE_BITS)
        c = compare_ball(enclose(prec), Fraction(0))
        if c is not None:
            return c
    if exact_zero(expr, exact):
        return 0
    raise Undecided(
        f"cannot decide the sign of {_brief(expr)} (balls of {PRECISIONS[-1]} bits contain 0)"
    )


#: Most extra bits :func:`exact_sign` spends on a value of huge magnitude.
MAX_ADAPTIVE_BITS = 1 << 16


def _radius_bits(x: arb) -> int | None:
    """About ``log2`` of a finite ball's radius (``None`` for an infinite ball)."""
    if not x.is_finite():
        return None
    r = x.rad()
    if r == 0:
        return None
    man, exp = arb(r).mid().man_exp()
    return int(man).bit_length() + int(exp)


def _brief(expr: sympy.Basic, limit: int = 200) -> str:
    """A short text for an expression in a message (never a 5,000-digit number)."""
    for n, _ in enumerate(sympy.preorder_traversal(expr)):
        if n > 40:
            return f"a {type(expr).__name__} of more than 40 nodes"
    try:
        text = str(expr)
    except ValueError:  # an integer beyond str()'s 4300-digit limit
        return f"a {type(expr).__name__} with very large numbers"
    return text if len(text) <= limit else text[:limit] + "…"


def decimal_string(x: arb, digits: int = 20) -> str | None:
    """The value of a ball to ``digits`` significant digits, if the ball pins them.

    Returns the digits of the truncated decimal expansion followed by ``…`` when
    the value is not exhausted, or ``None`` when the ball is too wide.
    """
    if not x.is_finite():
        return None
    if x.is_exact() and x.is_zero():
        return "0"
    saved = ctx.prec
    ctx.prec = 4096  # read the endpoints without rounding them
    try:
        lo, hi = x.lower(), x.upper()
    finally:
        ctx.prec = saved
    a, b = _truncated(lo, digits), _truncated(hi, digits)
    if a is None or a != b:
        return None
    return a


#: Decimal exponents beyond which a certified decimal is written in scientific notation.
POSITIONAL_EXPONENTS = 60


def _leading_digits(man: int, exp: int, digits: int) -> tuple[int, int, bool]:
    """The first ``digits`` digits of ``man·2^exp > 0``: ``(n, k, exact)``.

    ``n`` has exactly ``digits`` digits, ``10^k <= man·2^exp < 10^(k+1)`` and
    ``exact`` tells whether ``n·10^(k−digits+1)`` is the whole value. Integer
    arithmetic only (shifts and one division): ``e^-1000000`` has a binary
    exponent of −1.4 million, and Fractions of that size take minutes.
    """
    k = math.floor(math.log10(man) + exp * math.log10(2))
    for _ in range(4):
        s = digits - 1 - k  # n = floor(man · 2^exp · 10^s)
        num = man * 10 ** max(s, 0)
        den = 10 ** max(-s, 0)
        if exp >= 0:
            num <<= exp
        else:
            den <<= -exp
        n, rest = divmod(num, den)
        if n >= 10**digits:
            k += 1
        elif n < 10 ** (digits - 1):
            k -= 1
        else:
            return n, k, rest == 0
    raise ArithmeticError("decimal exponent did not settle")  # pragma: no cover


def _truncated(x: arb, digits: int) -> str | None:
    # x is an exact ball (an endpoint); read it as man·2^exp through its mid.
    man, exp = x.mid().man_exp()
    man, exp = int(man), int(exp)
    if man == 0:
        return None
    sign = "-" if man < 0 else ""
    n, k, exact = _leading_digits(abs(man), exp, digits)
    more = "" if exact else "…"
    s = str(n)  # exactly `digits` digits
    if abs(k) > POSITIONAL_EXPONENTS:  # e^-1000000 is not written with 434,294 zeros
        mantissa = (s[0] + "." + s[1:]).rstrip("0").rstrip(".")
        return f"{sign}{mantissa}{more}e{k:+d}"
    point = k + 1
    if point <= 0:
        text = "0." + "0" * (-point) + s
    elif point >= len(s):
        text = s + "0" * (point - len(s))
    else:
        text = s[:point] + "." + s[point:]
    if "." in text:
        text = text.rstrip("0").rstrip(".")
    return sign + text + more
