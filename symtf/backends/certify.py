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
"""

from __future__ import annotations

import contextlib
import math
import signal
import time
from collections.abc import Callable, Iterator, Mapping
from fractions import Fraction
from typing import Any

import sympy
from flint import arb, ctx, fmpq, fmpz

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
#: Largest multiple n for which sin(n·a) is rewritten in sin(a), cos(a) by the zero test.
MAX_ANGLE_MULTIPLE = 16
#: Most terms the trigonometric zero test expands to before giving up.
MAX_TRIG_TERMS = 20_000


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


def exact_zero(expr: sympy.Expr, exact: Any = None) -> bool:
    """Whether an expression is provably 0 by cheap exact algebra (never ``simplify``).

    Args:
        expr: The expression.
        exact: The :class:`~symtf.backends.ExactBackend` whose node symbols it uses.
    """
    if exact is not None:
        closed = exact.closed_form(expr, MAX_EXACT_OPS)
        if closed is None:
            # too large written out: the zero may be an identity of the node's own small
            # expression, whatever its inputs' values (cos 2x − cos²x + sin²x)
            return node_identity_zero(expr, exact)
        expr = closed
    if expr.is_Rational:
        return bool(expr == 0)
    if sympy.count_ops(expr) > MAX_EXACT_OPS:
        return False
    try:
        return _zero(expr) or _zero_by_identities(expr)
    except (OverflowError, ValueError):
        # Coefficients beyond what the polynomial code can hold (exp(10^60 x) gives
        # FLINT's "exponent too large"): no cheap proof, which is not a disproof.
        return False


def _zero(expr: sympy.Expr) -> bool:
    """The cheap zero tests: expansion, cancellation, trigonometry, logarithms, radicals."""
    for transform in (sympy.expand, lambda t: sympy.cancel(sympy.together(t))):
        if transform(expr) == 0:
            return True
    if _has_trig(expr):
        return trig_zero(expr)
    if any(isinstance(a, sympy.log) for a in sympy.preorder_traversal(expr)):
        return log_zero(expr)
    if not _radicals_only(expr):
        # radsimp may call nsimplify, which evaluates exp(10^6) to thousands of digits
        # with mpmath (minutes); it only helps with square roots anyway.
        return False
    return bool(sympy.radsimp(expr) == 0 or sympy.expand(sympy.radsimp(sympy.expand(expr))) == 0)


#: Wall-clock seconds SymPy's identity rewrites (``expand_log``, ``trigsimp``) may take
#: on one value before the zero test gives up (never a verdict: only a proof or nothing).
IDENTITY_SECONDS = 1.0
#: Levels of node definitions written out around a value for :func:`node_identity_zero`.
MAX_IDENTITY_LEVELS = 4


class _Capped(Exception):
    """Raised inside :func:`_time_cap` when its seconds are up."""


@contextlib.contextmanager
def _time_cap(seconds: float) -> Iterator[None]:
    """Interrupt the block after ``seconds`` (with :class:`_Capped`), keeping any outer timer.

    Uses ``SIGALRM``; where it is not available (another thread, Windows) the block runs
    uncapped, bounded only by the size limits of its callers. An outer ``--timeout`` timer
    that would fire first is left to fire.
    """
    import threading

    if (
        not hasattr(signal, "setitimer")
        or threading.current_thread() is not threading.main_thread()
    ):
        yield
        return
    left, _ = signal.getitimer(signal.ITIMER_REAL)
    if left and left <= seconds:
        yield
        return

    def expired(signum: int, frame: Any) -> None:
        raise _Capped

    start = time.monotonic()
    previous = signal.signal(signal.SIGALRM, expired)
    signal.setitimer(signal.ITIMER_REAL, seconds)
    try:
        yield
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, previous)
        if left:  # the outer budget, less the time spent here
            signal.setitimer(signal.ITIMER_REAL, max(left - (time.monotonic() - start), 1e-3))


def _zero_by_identities(expr: sympy.Expr) -> bool:
    """``ln a + ln b − ln ab`` and trigonometric identities, by SymPy's own rewrites.

    ``expand_log`` (which splits ``ln(ab)`` only for positive ``a``, ``b``) and
    ``trigsimp``, each under :data:`IDENTITY_SECONDS`; ``True`` only when one gives 0.
    """
    has_log = any(isinstance(a, sympy.log) for a in sympy.preorder_traversal(expr))
    if not has_log and not _has_trig(expr):
        return False
    try:
        with _time_cap(IDENTITY_SECONDS):
            if has_log:
                logs = sympy.expand(sympy.expand_log(expr, force=False))
                if logs == 0 or _zero(logs):
                    return True
            if _has_trig(expr) and sympy.expand(sympy.trigsimp(expr)) == 0:
                return True
    except (_Capped, RecursionError, ValueError, TypeError, NotImplementedError):
        return False
    return False


def node_identity_zero(expr: sympy.Expr, exact: Any) -> bool:
    """Whether a value is 0 by an identity of its nodes' small expressions.

    The node definitions around ``expr`` are written out one level at a time (at most
    :data:`MAX_IDENTITY_LEVELS`); the nodes still unexpanded become free real symbols,
    positive or negative where their certified ball says so. A zero proved for every
    value of those symbols (``cos 2x − cos²x + sin²x`` for any real ``x``; ``ln(ab) −
    ln a − ln b`` for positive ``a``, ``b``) is a zero of the value. ``False`` means not
    proved, never a verdict.
    """
    defs = getattr(exact, "defs", None)
    if not defs:
        return False
    e = expr
    for level in range(MAX_IDENTITY_LEVELS + 1):
        nodes = [s for s in e.free_symbols if s in defs]
        if not nodes:
            return False  # written out whole it was too large: nothing smaller to try
        if level:
            e = e.xreplace({s: defs[s] for s in nodes})
            nodes = [s for s in e.free_symbols if s in defs]
        if sympy.count_ops(e) > MAX_EXACT_OPS:
            return False
        generic = e.xreplace({s: _opaque(s, exact) for s in nodes})
        try:
            if _zero(generic) or _zero_by_identities(generic):
                return True
        except (TypeError, ValueError, RecursionError, Undecided):
            continue
    return False


def _opaque(s: sympy.Symbol, exact: Any) -> sympy.Dummy:
    """A free real symbol for a node, with the sign its certified ball proves."""
    try:
        b = exact.ball(s, PRECISIONS[0])
    except (Undecided, TypeError, ValueError):
        return sympy.Dummy(real=True)
    if b > 0:
        return sympy.Dummy(positive=True)
    if b < 0:
        return sympy.Dummy(negative=True)
    return sympy.Dummy(real=True)


_TRIG = (sympy.sin, sympy.cos, sympy.tan)


def _has_trig(expr: sympy.Basic) -> bool:
    return any(isinstance(a, _TRIG) for a in sympy.preorder_traversal(expr))


def trig_zero(expr: sympy.Expr) -> bool:
    """Whether an expression in sines and cosines is 0 by the Pythagorean and addition laws.

    Each distinct angle ``a`` is written as ``n·b`` for a base angle ``b`` of its
    class (angles whose ratio is rational, with ``|n| <=``
    :data:`MAX_ANGLE_MULTIPLE`); ``sin(n·b)`` and ``cos(n·b)`` become
    polynomials in ``s = sin b`` and ``c = cos b`` (the multiple-angle and
    angle-addition formulas), ``tan`` becomes ``sin/cos``, and the numerator is
    reduced modulo ``s² + c² − 1`` (a Gröbner basis by itself: every ``s²``
    becomes ``1 − c²``). A remainder that expands to 0 proves the expression is
    0; anything else answers ``False`` (not proved), never a guess. Bounded: at
    most :data:`MAX_TRIG_TERMS` terms, and never ``simplify``.

    Example:
        >>> trig_zero(sympy.sin(1) ** 2 + sympy.cos(1) ** 2 - 1)
        True
        >>> trig_zero(sympy.sin(2) - 2 * sympy.sin(1) * sympy.cos(1))
        True
    """
    angles = sorted(
        {a.args[0] for a in sympy.preorder_traversal(expr) if isinstance(a, _TRIG)},
        key=sympy.default_sort_key,
    )
    bases: list[tuple[sympy.Expr, sympy.Symbol, sympy.Symbol]] = []
    rewrite: dict[sympy.Basic, sympy.Expr] = {}
    x, y = sympy.Dummy("x"), sympy.Dummy("y")
    for a in _base_order(angles):
        combo = _small_combination(a, [b for b, _, _ in bases])
        if combo is None:
            s, c = sympy.Dummy("s"), sympy.Dummy("c")
            bases.append((a, s, c))
            combo = ((len(bases) - 1, 1),)
        angle = sum((n * (x, y)[k] for k, (_, n) in enumerate(combo)), sympy.S.Zero)
        sub: dict[sympy.Basic, sympy.Expr] = {}
        for k, (i, _) in enumerate(combo):
            t = (x, y)[k]
            sub[sympy.sin(t)] = bases[i][1]
            sub[sympy.cos(t)] = bases[i][2]
        sin_a = sympy.expand_trig(sympy.sin(angle)).xreplace(sub)
        cos_a = sympy.expand_trig(sympy.cos(angle)).xreplace(sub)
        rewrite[sympy.sin(a)] = sin_a
        rewrite[sympy.cos(a)] = cos_a
        rewrite[sympy.tan(a)] = sin_a / cos_a
    body = expr.xreplace(rewrite)
    if _has_trig(body):
        return False
    num, _ = sympy.fraction(sympy.together(body))
    num = sympy.expand(num)
    if num == 0:
        return True
    gens = [g for _, s, c in bases for g in (s, c)]
    try:
        poly = sympy.Poly(num, *gens, domain="EX")
    except sympy.PolynomialError:
        return False
    if len(poly.terms()) > MAX_TRIG_TERMS:
        return False
    squares = {s: 1 - c**2 for _, s, c in bases}
    total = []
    for monom, coeff in poly.terms():
        term = coeff.as_expr()
        for g, k in zip(gens, monom, strict=True):
            if g in squares:
                term *= g ** (k % 2) * squares[g] ** (k // 2)
            else:
                term *= g**k
        total.append(term)
    rest = sympy.expand(sympy.Add(*total))
    return bool(rest == 0 or sympy.cancel(sympy.together(rest)) == 0)


def _base_order(angles: list[sympy.Expr]) -> list[sympy.Expr]:
    """Angles with, first in each class of rational ratio, the class's common divisor.

    Angles 1 and 2 are multiples of 1; 2/100 and 3/100 of 1/100 (put first when
    the multiples stay small, so that all of them are polynomials in one sine
    and cosine).
    """
    classes: list[list[sympy.Expr]] = []
    for a in angles:
        for cl in classes:
            if (a / cl[0]).is_Rational:
                cl.append(a)
                break
        else:
            classes.append([a])
    out: list[sympy.Expr] = []
    for cl in classes:
        ratios = [sympy.Rational(a / cl[0]) for a in cl]
        g = ratios[0]
        for r in ratios[1:]:
            g = sympy.gcd(g, r)
        base = cl[0] * g
        if all(abs(r / g) <= MAX_ANGLE_MULTIPLE for r in ratios) and base not in cl:
            out.append(base)
        out.extend(sorted(cl, key=lambda t: abs(sympy.Rational(t / cl[0]))))
    return out


def _small_combination(
    a: sympy.Expr, bases: list[sympy.Expr]
) -> tuple[tuple[int, int], ...] | None:
    """``a`` as ``n·b`` or ``n·b + m·b'`` over ``bases`` with small integers, if it is one."""
    m = MAX_ANGLE_MULTIPLE
    for i, b in enumerate(bases):
        n = a / b
        if n.is_Integer and 0 < abs(int(n)) <= m:
            return ((i, int(n)),)
    for i, b in enumerate(bases):
        if not (a / b).is_Rational:
            continue
        for j in range(i + 1, len(bases)):
            c = bases[j]
            if not (c / b).is_Rational:
                continue
            for n in range(-m, m + 1):
                if n == 0:
                    continue
                k = (a - n * b) / c
                if k.is_Integer and 0 < abs(int(k)) <= m:
                    return ((i, n), (j, int(k)))
    return None


#: Largest integer whose prime factors :func:`log_zero` looks up.
MAX_LOG_FACTOR = 10**12


def log_zero(expr: sympy.Expr) -> bool:
    """Whether an expression with logarithms of rationals is 0 by ``log(ab) = log a + log b``.

    Each ``log(p/q)`` with ``p, q <= MAX_LOG_FACTOR`` becomes ``Σ e·log(prime)``
    (the logarithms of distinct primes are linearly independent over ℚ, so the
    rewriting is a normal form for such sums); the result is expanded. ``True``
    only when that gives 0.

    Example:
        >>> log_zero(sympy.log(2) + sympy.log(3) - sympy.log(6))
        True
    """
    rewrite: dict[sympy.Basic, sympy.Expr] = {}
    for a in sympy.preorder_traversal(expr):
        if isinstance(a, sympy.log) and a.args[0].is_Rational and a.args[0] > 0:
            r = a.args[0]
            if max(abs(int(r.p)), int(r.q)) > MAX_LOG_FACTOR:
                return False
            total = sympy.S.Zero
            for n, sign in ((int(r.p), 1), (int(r.q), -1)):
                for prime, e in sympy.factorint(n).items():
                    total += sign * e * sympy.log(sympy.Integer(prime), evaluate=False)
            rewrite[a] = total
    if not rewrite:
        return False
    body = sympy.expand(expr.xreplace(rewrite))
    return bool(body == 0 or sympy.cancel(sympy.together(body)) == 0)


def sign_by_parts(expr: sympy.Expr, exact: Any = None) -> int | None:
    """The sign of ``expr`` from its numerator and denominator over a common denominator.

    ``1/(1 + e^-10⁶) − 1`` is ``−e^-10⁶/(1 + e^-10⁶)``: the difference cancels
    in balls (it needs 1.4 million bits), but the numerator alone is plainly
    negative. Bounded like :func:`exact_zero`; ``None`` when it does not help.
    """
    if exact is not None:
        closed = exact.closed_form(expr, MAX_EXACT_OPS)
        if closed is None:
            return None
        expr = closed
    if sympy.count_ops(expr) > MAX_EXACT_OPS:
        return None
    num, den = sympy.fraction(sympy.together(expr))
    signs = []
    for part in (sympy.expand(num), den):
        c = None
        for prec in PRECISIONS:
            try:
                c = compare_ball(ball(part, prec), Fraction(0))
            except (TypeError, Undecided):
                return None
            if c is not None:
                break
        if not c:  # undecided, or a zero part (left to exact_zero)
            return None
        signs.append(c)
    return signs[0] * signs[1]


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
        p = int(expr.p)
        return (p > 0) - (p < 0)

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
    c = sign_by_parts(expr, exact)
    if c is not None:
        return c
    raise Undecided(
        f"cannot decide the sign of {_brief(expr)} (balls of {PRECISIONS[-1]} bits contain 0)"
    )


#: Most extra bits :func:`exact_sign` spends on a value of huge magnitude.
MAX_ADAPTIVE_BITS = 1 << 16


def exact_fraction(x: arb) -> Fraction:
    """The rational value of an exact, finite ball (a ball's end, a dyadic midpoint).

    Raises:
        ValueError: ``x`` is not exact and finite.
    """
    man, exp = x.man_exp()
    return Fraction(int(man)) * Fraction(2) ** int(exp)


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


#: Binary exponents beyond which leading digits come from ball arithmetic, not integers.
INTEGER_DIGITS_EXPONENT = 1 << 16


def _leading_digits_ball(x: arb, digits: int) -> tuple[int, int, bool]:
    """:func:`_leading_digits` for an exact ``x > 0`` of huge binary exponent.

    The decimal exponent ``k`` is ``floor(log10 x)`` and the digits are
    ``floor(x·10^(digits−1−k))``, both read from balls whose precision grows
    with the size of the exponent: the time is independent of how tiny or huge
    ``x`` is (``e^-10^50`` included). Such an ``x = m·2^e`` is never a short
    decimal (that needs ``5^|e|`` to divide ``m``), so ``exact`` is False.
    """
    saved = ctx.prec
    man, exp = x.mid().man_exp()
    base = abs(int(exp)).bit_length()
    try:
        ctx.prec = abs(int(man)).bit_length() + 64
        x = abs(x)  # exact at this precision (python-flint rounds even abs to ctx.prec)
        for extra in (64, 256, 1024, 4096):
            ctx.prec = 2 * base + extra + int(digits * 3.33)
            lg = (x.log() / arb(10).log()).floor()
            lz = lg.unique_fmpz()
            if not lg.is_exact() or lz is None:
                continue
            k = int(lz)
            y = (x * arb(10) ** fmpz(digits - 1 - k)).floor()
            yz = y.unique_fmpz()
            if not y.is_exact() or yz is None:
                continue
            # 10^k <= x < 10^(k+1) is certified, so n has exactly `digits` digits.
            return int(yz), k, False
    finally:
        ctx.prec = saved
    raise ArithmeticError("decimal digits did not settle")  # pragma: no cover


def _truncated(x: arb, digits: int) -> str | None:
    # x is an exact ball (an endpoint); read it as man·2^exp through its mid.
    man, exp = x.mid().man_exp()
    if man == 0:
        return None
    sign = "-" if man < 0 else ""
    if abs(int(exp)) > INTEGER_DIGITS_EXPONENT:
        n, k, exact = _leading_digits_ball(x, digits)
    else:
        n, k, exact = _leading_digits(abs(int(man)), int(exp), digits)
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
