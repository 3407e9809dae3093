"""The certified sign of an exact value: balls whose precision escalates, the sign of each
part of a sum, then an exact zero test (:mod:`symtf.backends.zero`); when nothing
settles it, :class:`~symtf.errors.Undecided`, never a guess.
"""

from __future__ import annotations

from fractions import Fraction
from typing import Any

import sympy
from flint import arb

from symtf.backends.certify import MAX_EXACT_OPS, PRECISIONS, ball, compare_ball
from symtf.backends.zero import exact_zero
from symtf.errors import Undecided


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
