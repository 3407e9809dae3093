"""What a framework prints of a number it holds in a binary format: the format's
neighbours of a value, the shortest text that reads back to it (Python's and numpy's
``repr``), a simulated print at a precision, and a displayed line of arithmetic
computed in the format as written.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from fractions import Fraction
from typing import Any

import sympy

from symtf.backends.formats import Format

_EXPONENT = re.compile(r"[eE]([+-]?\d+)\s*$")


def _float_value(v: Any) -> Fraction | None:
    """A simulated entry's exact binary value (``None`` for ±∞ or NaN)."""
    import math

    try:
        f = float(v)
    except (TypeError, ValueError):
        return None
    return Fraction(f) if math.isfinite(f) else None


def neighbours(x: Fraction, fmt: Format) -> tuple[Fraction, Fraction]:
    """The numbers of ``fmt`` just below and just above ``x`` (a number of ``fmt``)."""
    a = abs(x)
    if a == 0:
        q = Fraction(2) ** (fmt.emin - fmt.precision + 1)
        return -q, q
    e = a.numerator.bit_length() - a.denominator.bit_length()
    if Fraction(2) ** e > a:
        e -= 1
    e = max(e, fmt.emin)
    q = Fraction(2) ** (e - fmt.precision + 1)
    below = q / 2 if a == Fraction(2) ** e and e > fmt.emin else q
    lo, hi = a - below, a + q
    return (lo, hi) if x > 0 else (-hi, -lo)


def shortest_repr(x: Fraction, fmt: Format) -> tuple[Fraction, int]:
    """The shortest decimal that reads back as ``x`` in ``fmt``, and its significant digits.

    What Python's ``repr`` and numpy's ``str`` print for a float64/float32/float16
    scalar (Steele & White's "shortest uniquely identifying" digits): among the decimals
    with the fewest significant digits that round to ``x`` (ties to even), the one
    nearest ``x``, and of two equally near the one with an even last digit.
    """
    from symtf.numbers import decade

    if x == 0:
        return Fraction(0), 1
    lo, hi = neighbours(x, fmt)
    m_lo, m_hi = (lo + x) / 2, (x + hi) / 2
    odd = _significand_odd(x, fmt)
    k = decade(abs(x))
    for digits in range(1, 40):
        unit = Fraction(10) ** (k - digits + 1)
        down = (x / unit).__floor__() * unit
        found = []
        for c in (down, down + unit):
            inside = m_lo < c < m_hi or (not odd and c in (m_lo, m_hi))
            if inside:
                found.append(c)
        if found:
            # the nearest; of two equally near, the one whose last digit is even (as Python's
            # repr and numpy's Dragon4 choose)
            return min(found, key=lambda c: (abs(c - x), int(c / unit) % 2)), digits
    return x, 40  # pragma: no cover - every binary number has a finite decimal


#: numpy's print precision (``np.set_printoptions`` default): decimals in positional
#: notation, mantissa decimals in scientific notation
NUMPY_PRECISION = 8


def numpy_printed(
    text: str, fmt: Format, precision: int = NUMPY_PRECISION
) -> tuple[Fraction, Fraction] | None:
    """The values of ``fmt`` that numpy prints as ``text``: ``(centre, half-width)``, a
    half-width of 0 when the print identifies one value exactly (``None``: not a number).

    numpy prints an array of ``fmt`` (``floatmode='maxprec'``) with each entry's shortest
    round-trip digits (:func:`shortest_repr`) when they need at most ``precision``
    decimals (mantissa decimals in scientific notation), else with the value rounded to
    ``precision`` decimals and its trailing zeros dropped: a float32 0.002066299 prints as
    ``0.0020663``. In scientific notation every entry shows as many mantissa decimals as
    the entry that needs most (at most ``precision``), its value rounded to them. So a printed ``d`` stands for the value of ``fmt`` nearest ``d`` when
    ``d`` is its shortest repr, or for a value within half a unit of the ``precision``-th
    decimal of ``d``, whatever the digits ``d`` shows; not for the half unit of ``d``'s own
    last digit. Where only one value of ``fmt`` is in that set, the print is that value
    exactly: for float32, every entry of magnitude at least 1/8 (its neighbours lie more
    than 10⁻⁸ apart), and an entry in scientific notation showing 8 mantissa decimals
    (9 significant digits tell every float32 apart).
    """
    from symtf.backends.formats import round_to_format
    from symtf.errors import SpecError, Undecided
    from symtf.numbers import parse_exact

    try:
        d = parse_exact(text)
    except SpecError:
        return None
    m = _EXPONENT.search(text)
    if m:  # an array in scientific notation: its entries rounded to the digits shown
        mantissa = text[: m.start()]
        shown = len(mantissa.partition(".")[2])
        h = Fraction(1, 2) * Fraction(10) ** (int(m.group(1)) - min(shown, precision))
    else:
        h = Fraction(1, 2) * Fraction(10) ** -precision
    try:
        x = round_to_format(d, fmt)
    except Undecided:
        return None
    found = [x] if shortest_repr(x, fmt)[0] == d else []
    # the values rounded to ``precision`` decimals: those of fmt within h of d (a superset)
    lo, hi = neighbours(x, fmt)
    near = [v for v in (lo, x, hi) if abs(v - d) <= h]
    if not found and not near:
        return None  # not a print of fmt at this precision
    values = set(found) | set(near)
    if len(values) == 1 and not (abs(lo - d) <= h or abs(hi - d) <= h):
        return values.pop(), Fraction(0)
    return d, max([h, *(abs(v - d) for v in values)])


def _significand_odd(x: Fraction, fmt: Format) -> bool:
    _, hi = neighbours(x, fmt)
    q = hi - x  # the quantum above x
    return (abs(x) / q).numerator % 2 == 1


def simulated_print(v: Any, p: Any, fmt: Format) -> str | None:
    """How a simulated ``fmt`` value ``v`` accounts for the printed number ``p``, or ``None``.

    ``"its shortest round-trip repr"`` when ``p`` is the value Python/numpy print for
    the scalar; ``"its digits at the printed precision"`` when ``v`` itself rounds to
    ``p`` on ``p``'s grid (numpy's array print: the binary value rounded to 8 decimals).
    """
    from symtf.numbers import rounding_interval

    x = _float_value(v)
    if x is None or p.value is None or p.is_fraction:
        return None
    if shortest_repr(x, fmt)[0] == p.value:
        return "its shortest round-trip repr"
    iv = rounding_interval(p, "nearest")
    if iv.lo <= x <= iv.hi:
        return "its digits at the printed precision"
    return None


# ----------------------------------------------------------------------------- displayed lines


def float_line(parsed: Any, resolve: Any, xp: Any) -> Any:
    """A displayed line (:mod:`symtf.language.expr`) computed in a format, as written.

    Each literal is stored in the format, each operation rounds (``xp`` is a
    :class:`FormatBallBackend`, whose scalars enclose every result, or a
    :class:`FormatSimBackend`, which computes one). References are resolved exactly by
    ``resolve`` and stored once. Returns a scalar, or rows (lists) of scalars.

    Raises:
        Undecided: A sign that cannot be decided in balls (``max``, ``relu``).
        TypeError: A construct a float line does not cover.
    """
    from symtf.language import syntax as sx

    def value(node: Any) -> Any:
        if isinstance(node, sx.Literal):
            return xp.const(Fraction(node.text))
        if isinstance(node, sx.Unary):
            v = value(node.operand)
            return v if node.op == "+" else each(v, lambda a: -a)
        if isinstance(node, sx.Chain):
            out = value(node.first)
            for link in node.rest:
                out = binary(link.op, out, value(link.node))
            return out
        if isinstance(node, sx.Power):
            base, exponent = node.base, value(node.exponent)
            if _is_e(base):
                return each(exponent, xp.exp)
            return each(value(base), lambda a: a**exponent)
        if isinstance(node, sx.Transpose):
            v = value(node.operand)
            return [list(r) for r in zip(*v, strict=True)] if isinstance(v, list) else v
        if isinstance(node, sx.Call):
            return call(node.name, [value(a) for a in node.args])
        if isinstance(node, sx.Brackets):
            items = [value(i) for i in node.items]
            if all(not isinstance(i, list) for i in items):
                return [items]
            return [r for i in items for r in i]
        name = type(node).__name__
        if name == "Superscript":
            return xp.const(Fraction(node.value))
        if name == "Constant":
            return xp.const(sympy.E if node.name == "e" else sympy.pi)
        if name == "Reference":
            return stored(resolve(node.name, node.index))
        raise TypeError(f"a float line has no {name}")

    def stored(v: Any) -> Any:
        if isinstance(v, sympy.MatrixBase):
            return [[xp.const(e) for e in v.row(i)] for i in range(v.rows)]
        return xp.const(v)

    def each(v: Any, f: Callable[[Any], Any]) -> Any:
        return [[f(a) for a in r] for r in v] if isinstance(v, list) else f(v)

    def both(a: Any, b: Any, f: Callable[[Any, Any], Any]) -> Any:
        if isinstance(a, list) and isinstance(b, list):
            return [
                [f(x, y) for x, y in zip(ra, rb, strict=True)] for ra, rb in zip(a, b, strict=True)
            ]
        if isinstance(a, list):
            return each(a, lambda x: f(x, b))
        if isinstance(b, list):
            return each(b, lambda y: f(a, y))
        return f(a, b)

    def matmul(a: list[list[Any]], b: list[list[Any]]) -> list[list[Any]]:
        out = []
        for ra in a:
            row = []
            for j in range(len(b[0])):
                total = ra[0] * b[0][j]
                for k in range(1, len(ra)):
                    total = total + ra[k] * b[k][j]
                row.append(total)
            out.append(row)
        return out

    def binary(op: str, a: Any, b: Any) -> Any:
        if op == "+":
            return both(a, b, lambda x, y: x + y)
        if op == "-":
            return both(a, b, lambda x, y: x - y)
        if op == "/":
            return both(a, b, lambda x, y: x / y)
        if op == "∘":
            return both(a, b, lambda x, y: x * y)
        if isinstance(a, list) and isinstance(b, list):
            return matmul(a, b)
        return both(a, b, lambda x, y: x * y)

    def call(name: str, args: list[Any]) -> Any:
        fns = {"sqrt": xp.sqrt, "exp": xp.exp, "ln": xp.log, "abs": xp.abs, "relu": xp.relu}
        if name in fns:
            return each(args[0], fns[name])
        if name == "log":
            v = each(args[0], xp.log)
            return v if len(args) == 1 else both(v, xp.log(args[1]), lambda x, y: x / y)
        items = [x for a in args for x in line_entries(a)]
        if name == "sum":
            total = items[0]
            for x in items[1:]:
                total = total + x
            return total
        best = items[0]
        for x in items[1:]:
            d = xp.sign(x - best)
            if (name == "max" and d > 0) or (name == "min" and d < 0):
                best = x
        return best

    def _is_e(node: Any) -> bool:
        return type(node).__name__ == "Constant" and node.name == "e"

    return value(parsed.root)


def line_entries(v: Any) -> list[Any]:
    """The values of :func:`float_line`'s result, row-major."""
    return [x for r in v for x in r] if isinstance(v, list) else [v]
