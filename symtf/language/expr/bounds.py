"""The limits that keep hostile input cheap, and the interval arithmetic (mpmath ``iv``)
that bounds a value's size before any large number is built.
"""

from __future__ import annotations

from typing import Any

import sympy
from mpmath.ctx_iv import MPIntervalContext

from symtf.limits import MAX_EXP_ARGUMENT

#: Largest ``|y|`` in ``x^y`` (for a base other than ``e``).
MAX_POWER = 1000
#: Largest q in an exponent p/q (``\\sqrt[q]{x}``); roots need a non-negative base.
MAX_ROOT = 16
#: Largest angle accepted by ``sin``/``cos`` (radians), in absolute value.
MAX_TRIG_ARGUMENT = 1_000_000
#: No value may exceed ``10**MAX_MAGNITUDE_DIGITS`` in absolute value.
MAX_MAGNITUDE_DIGITS = 5000
#: Largest exact rational, counted as bits of numerator plus denominator.
MAX_RATIONAL_BITS = 50_000
#: Most scalar operations one evaluation may perform.
MAX_OPERATIONS = 200_000


IV = MPIntervalContext()
IV.prec = 113
EXP_LIMIT = IV.mpf(MAX_EXP_ARGUMENT)
SIZE_LIMIT = IV.mpf(10) ** MAX_MAGNITUDE_DIGITS
# Enclosures of resolved values are not computed through exp of arguments this large.
_ENCLOSE_EXP_LIMIT = IV.mpf(10) ** 6
TRIG_LIMIT = IV.mpf(MAX_TRIG_ARGUMENT)
_NEG_INFINITY = -sympy.oo
HALF = sympy.Rational(1, 2)
INFINITIES = (sympy.oo, _NEG_INFINITY)


def rational_bits(x: sympy.Rational) -> int:
    return int(x.p).bit_length() + int(x.q).bit_length()


def point_box(x: sympy.Rational) -> Any:
    if x.q == 1:
        return IV.mpf(int(x.p))
    return IV.mpf(int(x.p)) / IV.mpf(int(x.q))


def within(box: Any, limit: Any) -> bool:
    """Whether ``|box| <= limit`` is certain."""
    return (abs(box).b <= limit) is True


def _enclose_node(node: sympy.Basic, args: list[Any]) -> Any:
    """An interval around one SymPy node, given intervals around its arguments."""
    if node.is_Rational:
        return point_box(node)
    if node.is_Float:
        return point_box(sympy.Rational(node))
    if node is sympy.E:
        return IV.e
    if node is sympy.pi:
        return IV.pi
    if node is sympy.oo:
        return IV.mpf("inf")
    if node is _NEG_INFINITY:
        return IV.mpf("-inf")
    if not node.args or any(a is None for a in args):
        return None
    if node.is_Add:
        total = args[0]
        for a in args[1:]:
            total = total + a
        return total
    if node.is_Mul:
        product = args[0]
        for a in args[1:]:
            product = product * a
        return product
    if node.is_Pow:
        base, exponent = args
        y = node.exp
        if y.is_Integer and abs(int(y)) <= 10**6:
            return base ** int(y)
        if y.is_Rational and y.q == 2 and (base.a >= 0) is True:
            return IV.sqrt(base) ** int(y.p)
        if (base.a > 0) is True and within(exponent, _ENCLOSE_EXP_LIMIT):
            product = IV.log(base) * exponent
            if within(product, _ENCLOSE_EXP_LIMIT):
                return IV.exp(product)
        return None
    if isinstance(node, sympy.exp):
        return IV.exp(args[0]) if within(args[0], _ENCLOSE_EXP_LIMIT) else None
    if isinstance(node, sympy.log) and len(args) == 1:
        return IV.log(args[0]) if (args[0].a > 0) is True else None
    if isinstance(node, sympy.Abs):
        return abs(args[0])
    if isinstance(node, (sympy.sin, sympy.cos)) and within(args[0], TRIG_LIMIT):
        return (IV.sin if isinstance(node, sympy.sin) else IV.cos)(args[0])
    if isinstance(node, sympy.tanh) and within(args[0], _ENCLOSE_EXP_LIMIT):
        return tanh_box(args[0])
    return None


def tanh_box(x: Any) -> Any:
    """An interval around tanh(x), from exp(-2|x|) (no overflow for large |x|)."""
    if (x.a >= 0) is True or (x.b <= 0) is True:
        sign = 1 if (x.a >= 0) is True else -1
        t = IV.exp(-2 * abs(x))
        ends = (1 - t) / (1 + t)  # tanh|x|, decreasing in t
        return ends if sign > 0 else -ends
    return IV.mpf([-1, 1])  # a ball around 0: tanh is within (-1, 1)


def enclose(expr: Any, cache: dict[Any, Any]) -> Any:
    """An interval around a numeric SymPy expression, or None if none is cheap.

    Walks the expression without recursion, so deep trees cannot overflow the stack.
    """
    if expr in cache:
        return cache[expr]
    stack: list[tuple[Any, bool]] = [(expr, False)]
    visited = 0
    while stack:
        node, ready = stack.pop()
        if node in cache:
            continue
        visited += 1
        if visited > 100_000:
            return None
        if not ready and node.args:
            stack.append((node, True))
            stack.extend((a, False) for a in node.args if a not in cache)
            continue
        try:
            cache[node] = _enclose_node(node, [cache.get(a) for a in node.args])
        except (ArithmeticError, ValueError):
            cache[node] = None
    return cache[expr]
