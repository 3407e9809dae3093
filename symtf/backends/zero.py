"""Exact zero tests: whether an exact SymPy value is 0, decided by exact algebra within
bounds (a test that knows sin² + cos² = 1, the angle-addition formulas and
log(ab) = log a + log b, and node definitions), never by ``simplify`` on a hot path.
"""

from __future__ import annotations

import contextlib
import signal
import time
from collections.abc import Iterator
from typing import Any

import sympy

from symtf.backends.certify import MAX_EXACT_OPS, PRECISIONS
from symtf.errors import Undecided

#: Largest multiple n for which sin(n·a) is rewritten in sin(a), cos(a) by the zero test.
MAX_ANGLE_MULTIPLE = 16
#: Most terms the trigonometric zero test expands to before giving up.
MAX_TRIG_TERMS = 20_000


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


def _radicals_only(expr: sympy.Basic) -> bool:
    """Whether ``expr`` is built from rationals, ``+ ×`` and rational powers alone."""
    return all(
        a.is_Rational or a.is_Add or a.is_Mul or (a.is_Pow and a.exp.is_Rational)
        for a in sympy.preorder_traversal(expr)
    )
