"""Certified enclosures and exact decisions.

The rule: a verdict rests on a ball that provably contains the exact value
(python-flint's Arb), or on exact rational arithmetic. Precision escalates
128 → 1024 bits; when a ball still straddles a boundary, the exact SymPy value
is consulted (a bounded zero test that knows sin² + cos² = 1, the
angle-addition formulas and log(ab) = log a + log b); verdicts then escalate further, up to
:data:`MAX_BITS`; when nothing settles it, the answer is
:class:`~symtf.errors.Undecided`, never a guess.

Note that python-flint's ``<``, ``>`` and ``==`` all return ``False`` for a ball
that straddles the other operand; :func:`compare_ball` makes that three-way.

The exact zero test is :mod:`symtf.backends.zero`, the certified sign of an exact value
:mod:`symtf.backends.signs`, and certified decimal strings :mod:`symtf.backends.decimals`.
"""

from __future__ import annotations

import signal
from collections.abc import Callable, Iterator, Mapping
from fractions import Fraction
from typing import Any

import sympy
from flint import arb, ctx, fmpq

from symtf.dag import postorder
from symtf.errors import Undecided

#: Working precisions tried in turn, in bits.
PRECISIONS = (128, 256, 512, 1024)
#: Expressions larger than this (in operations) are not handed to exact simplification.
MAX_EXACT_OPS = 400
#: Highest precision a verdict escalates to, in bits (about 19,700 decimal digits). A
#: printed number has at most 100 characters, so only a value that agrees with a
#: rounding boundary to thousands of digits (and cannot be proved equal to it) gets here.
MAX_BITS = 1 << 16


def time_left() -> float | None:
    """Seconds left of the running ``--timeout`` budget (its ``SIGALRM`` timer), if one runs.

    Precision escalation beyond 1024 bits stops early when the next step would
    not fit, so one hard number becomes ``undecided`` (with that reason)
    instead of costing the whole file its budget.
    """
    if not hasattr(signal, "getitimer"):
        return None
    left, _ = signal.getitimer(signal.ITIMER_REAL)
    return left if left > 0 else None


def ladder(start: int = PRECISIONS[0], cap: int = MAX_BITS) -> Iterator[int]:
    """Precisions from ``start`` bits, doubling, up to ``cap``."""
    prec = start
    while prec <= cap:
        yield prec
        prec *= 2


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


_FUNCS: dict[Any, Callable[[arb], arb]] = {
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
    """The ball of ``e``, its parts first (a stack, not recursion: a chain of 2,000 steps
    nests its node definitions 2,000 deep)."""
    hit = memo.get(e)
    if hit is not None:
        return hit
    order = postorder(e, lambda n: ball_parts(n, defs), memo)
    assert order is not None  # no limit
    for node in order:
        memo[node] = _ball_of(node, memo, defs)
    return memo[e]


def ball_parts(e: sympy.Basic, defs: Mapping[sympy.Symbol, sympy.Expr]) -> tuple[Any, ...]:
    """The parts a ball (or a derivative's ball) of ``e`` is computed from: its arguments,
    a node symbol's definition."""
    if e.is_Add or e.is_Mul or isinstance(e, (sympy.Max, sympy.Min)):
        return tuple(e.args)
    if e.is_Pow:
        base, ex = e.args
        return (base,) if ex.is_Integer or ex in (sympy.S.Half, -sympy.S.Half) else (base, ex)
    if e.func in _FUNCS:
        return (e.args[0],)
    if e.is_Symbol and e in defs:
        return (defs[e],)
    return ()


def _ball_of(
    e: sympy.Basic, memo: dict[sympy.Basic, arb], defs: Mapping[sympy.Symbol, sympy.Expr]
) -> arb:
    """The ball of one node, from the balls of its parts (in ``memo``)."""
    if e.is_Rational:
        return arb(fmpq(int(e.p), int(e.q)))
    if e is sympy.S.Pi:
        return arb.pi()
    if e is sympy.S.Exp1:
        return arb(1).exp()
    if e is sympy.S.NegativeInfinity:
        return arb("-inf")
    if e is sympy.S.Infinity:
        return arb("inf")
    if e.is_Add:
        r = arb(0)
        for a in e.args:
            r += memo[a]
        return r
    if e.is_Mul:
        r = arb(1)
        for a in e.args:
            r *= memo[a]
        return r
    if e.is_Pow:
        base, ex = e.args
        b = memo[base]
        if ex.is_Integer:
            n = int(ex)
            r = b ** abs(n) if (b > 0 or b < 0) else _power_near_zero(b, abs(n))
            return 1 / r if n < 0 else r
        if ex == sympy.S.Half:
            return b.sqrt()
        if ex == -sympy.S.Half:
            return b.rsqrt()
        return (memo[ex] * b.log()).exp()
    if e.func in _FUNCS:
        return _FUNCS[e.func](memo[e.args[0]])
    if isinstance(e, (sympy.Max, sympy.Min)):  # OpenMax/OpenMin too
        items = [memo[a] for a in e.args]
        r = items[0]
        for x in items[1:]:
            r = r.max(x) if isinstance(e, sympy.Max) else r.min(x)
        return r
    if e.is_Symbol and e in defs:
        return memo[defs[e]]
    if e.is_Symbol:
        raise Undecided(f"the value depends on the symbol {e}")
    if e.is_Float:
        raise TypeError(f"a binary float {e} reached exact arithmetic")
    raise TypeError(f"cannot enclose {type(e).__name__} ({e})")


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
    args: tuple[Any, ...]  # SymPy's Basic.args, from the class this mixes into

    def _sympystr(self, printer: Any) -> str:
        return str(printer._print(self._closed(*self.args, evaluate=False)))

    def _latex(self, printer: Any) -> str:
        return str(printer._print(self._closed(*self.args, evaluate=False)))


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
    """Three-way comparison of a ball with a rational: -1, 0, 1, or ``None`` if undecided.

    flint compares with a rational by rounding it to the working precision: at the default
    53 bits a 17-digit boundary such as ``0.4929313592373927`` becomes a ball wider than the
    gap to a value known to 128 bits. The comparison runs at the ball's own accuracy (plus a
    margin), so a finer ball is never left undecided by the rounding of the boundary.
    """
    q = to_fmpq(b)
    with ctx.workprec(_comparison_bits(x)):
        if x > q:
            return 1
        if x < q:
            return -1
        if x.is_exact() and x == q:
            return 0
    return None


def _comparison_bits(x: arb) -> int:
    """Working precision that represents a rational at least as finely as ``x`` is known."""
    if not x.is_finite():
        return ctx.prec
    man, _ = x.mid().man_exp()
    accuracy = x.rel_accuracy_bits() if x.rad() != 0 else 0
    return max(ctx.prec, min(max(int(man).bit_length(), accuracy), 2 * MAX_BITS) + 64)


def exact_fraction(x: arb) -> Fraction:
    """The rational value of an exact, finite ball (a ball's end, a dyadic midpoint).

    Raises:
        ValueError: ``x`` is not exact and finite.
    """
    man, exp = x.man_exp()
    return Fraction(int(man)) * Fraction(2) ** int(exp)


def ball_sign(x: arb, where: str) -> int:
    """The certified sign of a ball: 1, −1, or 0 for an exact 0.

    Raises:
        Undecided: When the ball contains 0 without being exactly 0 (``where`` says
            which arithmetic, e.g. ``at 128 bits``).
    """
    if x > 0:
        return 1
    if x < 0:
        return -1
    if x.is_exact() and x.is_zero():
        return 0
    raise Undecided(f"the ball {x} contains 0 {where}")
