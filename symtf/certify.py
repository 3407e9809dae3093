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
            r = b ** abs(n)
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
    elif e.func in (sympy.Max, sympy.Min):
        items = [_ball(a, memo, defs) for a in e.args]
        r = items[0]
        for x in items[1:]:
            r = r.max(x) if e.func is sympy.Max else r.min(x)
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
    for transform in (sympy.expand, sympy.radsimp, lambda t: sympy.cancel(sympy.together(t))):
        if transform(expr) == 0:
            return True
    return sympy.expand(sympy.radsimp(sympy.expand(expr))) == 0


def exact_sign(expr: sympy.Expr, exact: Any = None) -> int:
    """The sign of an exact expression, certified.

    Args:
        expr: The expression.
        exact: The :class:`~symtf.backends.ExactBackend` whose node symbols it uses.

    Raises:
        Undecided: When balls up to 1024 bits contain 0 and exact algebra cannot
            show the expression is 0.
    """
    if expr.is_Rational:
        return (expr.p > 0) - (expr.p < 0)
    for prec in PRECISIONS:
        b = exact.ball(expr, prec) if exact is not None else ball(expr, prec)
        c = compare_ball(b, Fraction(0))
        if c is not None:
            return c
    if exact_zero(expr, exact):
        return 0
    raise Undecided(f"cannot decide the sign of {expr} (balls of {PRECISIONS[-1]} bits contain 0)")


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


def _truncated(x: arb, digits: int) -> str | None:
    # x is an exact ball (an endpoint); read it as a rational through its mid.
    man, exp = x.mid().man_exp()
    q = Fraction(int(man)) * (Fraction(2) ** int(exp))
    if q == 0:
        return None
    sign = "-" if q < 0 else ""
    q = abs(q)
    # find the decimal exponent: 10^k <= q < 10^(k+1)
    k = len(str(int(q))) - 1 if q >= 1 else -len(str(int(1 / q)))
    while Fraction(10) ** k > q:
        k -= 1
    while Fraction(10) ** (k + 1) <= q:
        k += 1
    scaled = q / Fraction(10) ** (k - digits + 1)
    n = int(scaled)
    exact = scaled == n
    s = str(n)
    point = k + 1
    if point <= 0:
        text = "0." + "0" * (-point) + s
    elif point >= len(s):
        text = s + "0" * (point - len(s))
    else:
        text = s[:point] + "." + s[point:]
    if "." in text:
        text = text.rstrip("0").rstrip(".")
    return sign + text + ("" if exact else "…")
