"""Printed numbers: exact parsing, precision, and rounding intervals.

An article prints ``0.496``; symtf reads it as the exact rational ``496/1000``
with 3 decimals, never as a binary float. Everything here is pure rational
arithmetic on :class:`fractions.Fraction`, so it is exact by construction.

Example:
    >>> p = parse_printed("0.050")
    >>> p.value, p.decimals
    (Fraction(1, 20), 3)
    >>> rounding_interval(p, "half-up")
    Interval(lo=Fraction(99, 2000), hi=Fraction(101, 2000), lo_closed=True, hi_closed=False)
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass
from fractions import Fraction

from symtf.errors import SpecError

#: Longest number text accepted anywhere (a printed value or a weight).
MAX_NUMBER_CHARS = 80
#: Largest decimal exponent accepted (``1e-30`` is fine, ``1e-1000000000`` is not).
MAX_EXPONENT = 60

ROUNDING_MODES = ("half-up", "half-even", "truncate", "any")

_DECIMAL = re.compile(r"^([+-]?)(\d+\.?\d*|\.\d+)(?:[eE]([+-]?\d+))?$")
_FRACTION = re.compile(r"^([+-]?)(\d+)/(\d+)$")
_NEG_INF = {"-inf", "-∞", "-\\infty", "-\\mathrm{\\infty}", "-\\mathrm{\\infty }", "-infinity"}

# Characters that look like a minus sign in pasted article text.
_MINUS_SIGNS = str.maketrans({"−": "-", "–": "-", "‐": "-"})


@dataclass(frozen=True)
class Printed:
    """A number as an article printed it.

    Attributes:
        text: The text exactly as printed (after normalising the minus sign).
        value: Its exact value, or ``None`` for a printed ``-inf``.
        decimals: Digits after the decimal point (``0.050`` has 3).
    """

    text: str
    value: Fraction | None
    decimals: int
    is_fraction: bool = False

    @property
    def is_neg_inf(self) -> bool:
        """Whether this is a masked entry printed as minus infinity."""
        return self.value is None

    @property
    def ulp(self) -> Fraction:
        """One unit in the last printed place."""
        return Fraction(1, 10**self.decimals)

    def with_decimals(self, decimals: int) -> Printed:
        """The same number read at another precision (``1`` among ``0.496`` is ``1.000``)."""
        return Printed(self.text, self.value, decimals, self.is_fraction)


@dataclass(frozen=True)
class Interval:
    """A real interval with rational ends, each end open or closed."""

    lo: Fraction
    hi: Fraction
    lo_closed: bool
    hi_closed: bool


def _normalise(text: str) -> str:
    return text.strip().translate(_MINUS_SIGNS)


def _check_length(text: str, where: str) -> None:
    if len(text) > MAX_NUMBER_CHARS:
        raise SpecError(
            f"{where}: expected a number of at most {MAX_NUMBER_CHARS} characters, "
            f"found one of {len(text)} characters ({text[:20]}...)"
        )


def parse_exact(text: str, *, where: str = "value") -> Fraction:
    """Read a decimal or ``p/q`` string as an exact rational.

    Args:
        text: ``"0.1"``, ``"-1.213"``, ``"1e-3"``, ``"5/6"`` or ``"−0.487"`` (U+2212).
        where: Names the file and key for error messages.

    Returns:
        The exact value; ``"0.1"`` is ``Fraction(1, 10)``.

    Raises:
        SpecError: When the text is not a plain number, is too long or has a huge exponent.
    """
    if not isinstance(text, str):
        raise SpecError(f"{where}: expected a number as a string, found {type(text).__name__}")
    s = _normalise(text)
    _check_length(s, where)
    m = _FRACTION.match(s)
    if m:
        sign, num, den = m.groups()
        if int(den) == 0:
            raise SpecError(f"{where}: expected a nonzero denominator, found {text!r}")
        value = Fraction(int(num), int(den))
        return -value if sign == "-" else value
    m = _DECIMAL.match(s)
    if not m:
        raise SpecError(f"{where}: expected a number like 0.5, -1.25, 1e-3 or 5/6, found {text!r}")
    sign, digits, exponent = m.groups()
    exp = int(exponent) if exponent else 0
    if abs(exp) > MAX_EXPONENT:
        raise SpecError(
            f"{where}: expected an exponent between -{MAX_EXPONENT} and {MAX_EXPONENT}, "
            f"found {text!r}"
        )
    whole, _, frac = digits.partition(".")
    value = Fraction(int(whole or "0") * 10 ** len(frac) + int(frac or "0"), 10 ** len(frac))
    value *= Fraction(10) ** exp
    return -value if sign == "-" else value


class TomlFloat(float):
    """A TOML float that remembers the text it was written as.

    ``tomllib`` turns ``1e-1000000000`` into ``0.0`` and
    ``0.12345678901234567890`` into the nearest double; reading the written text
    instead keeps such numbers exact (or refuses them with a message).

    Attributes:
        text: The float as written in the file (underscores removed).
    """

    text: str

    def __new__(cls, text: str) -> TomlFloat:
        """Parse ``text`` as a float but keep the text."""
        self = super().__new__(cls, text)
        self.text = text.replace("_", "")
        return self

    def __repr__(self) -> str:
        return self.text


def toml_float(text: str) -> TomlFloat:
    """``parse_float`` hook for :func:`tomllib.loads` that keeps each float's text."""
    return TomlFloat(text)


def from_float(x: float, *, where: str = "value") -> Fraction:
    """An exact rational from a TOML float.

    A :class:`TomlFloat` is read from the text it was written as; a plain float
    through its shortest repr (0.1 -> 1/10).

    Raises:
        SpecError: For NaN and infinities, and for written text that is not a
            number :func:`parse_exact` accepts (too long, huge exponent).
    """
    text = x.text if isinstance(x, TomlFloat) else repr(x)
    if text.lstrip("+-") in ("inf", "nan") or (
        not isinstance(x, TomlFloat) and not math.isfinite(x)
    ):
        raise SpecError(f"{where}: expected a finite number, found {text}")
    return parse_exact(text, where=where)


def parse_printed(text: str, *, where: str = "printed") -> Printed:
    """Read a printed value, keeping its precision.

    Raises:
        SpecError: When the text is not a plain decimal number (``%``, ``≈``,
            thousands separators and fractions are refused: a printed value is
            what the article shows, as digits).
    """
    if not isinstance(text, str):
        raise SpecError(f"{where}: expected the printed value as a string, found {text!r}")
    s = _normalise(text)
    _check_length(s, where)
    if s.replace(" ", "") in _NEG_INF:
        return Printed(s, None, 0)
    if _FRACTION.match(s):  # an exact fraction such as 5/6: right only if exactly equal
        return Printed(s, parse_exact(s, where=where), 0, is_fraction=True)
    m = _DECIMAL.match(s)
    if not m:
        raise SpecError(
            f"{where}: expected a printed decimal number like 0.496 (or an exact fraction like 5/6), found {text!r}"
        )
    if m.group(3):
        raise SpecError(f"{where}: expected a printed decimal without exponent, found {text!r}")
    _, digits, _ = m.groups()
    decimals = len(digits.partition(".")[2])
    return Printed(s, parse_exact(s, where=where), decimals)


def rounding_interval(p: Printed, mode: str = "half-up") -> Interval:
    """The exact values that print as ``p`` under a rounding mode.

    Half-up rounds halves away from zero (school rounding); half-even to the
    even last digit; truncate chops toward zero; ``any`` accepts all three.
    """
    if p.value is None:
        raise ValueError("a printed -inf has no rounding interval")
    v, u = p.value, p.ulp
    half = u / 2
    if mode == "half-up":
        if v > 0:
            return Interval(v - half, v + half, True, False)
        if v < 0:
            return Interval(v - half, v + half, False, True)
        return Interval(-half, half, False, False)
    if mode == "half-even":
        even = (v / u).numerator % 2 == 0
        return Interval(v - half, v + half, even, even)
    if mode == "truncate":
        if v > 0:
            return Interval(v, v + u, True, False)
        if v < 0:
            return Interval(v - u, v, False, True)
        return Interval(-u, u, False, False)
    if mode == "any":
        if v > 0:
            return Interval(v - half, v + u, True, False)
        if v < 0:
            return Interval(v - u, v + half, False, True)
        return Interval(-u, u, False, False)
    raise ValueError(f"unknown rounding mode {mode!r}; expected one of {', '.join(ROUNDING_MODES)}")


def round_exact(x: Fraction, decimals: int, mode: str = "half-up") -> Fraction:
    """Round an exact rational to ``decimals`` places (``any`` rounds half-up)."""
    scale = 10**decimals
    y = x * scale
    if mode == "truncate":
        k = math.trunc(y)
    elif mode == "half-even":
        k = round(y)  # Fraction.__round__ rounds half to even, exactly
    else:
        k = math.floor(abs(y) + Fraction(1, 2)) * (1 if y >= 0 else -1)
    return Fraction(k, scale)


def format_fixed(x: Fraction, decimals: int) -> str:
    """Write a rational that has at most ``decimals`` places with exactly that many."""
    scale = 10**decimals
    k = x * scale
    if k.denominator != 1:
        raise ValueError(f"{x} has more than {decimals} decimals")
    n = int(k)
    sign = "-" if n < 0 else ""
    digits = _int_text(abs(n)).rjust(decimals + 1, "0")
    if decimals == 0:
        return sign + digits
    return f"{sign}{digits[:-decimals]}.{digits[-decimals:]}"


_CHUNK = 10**4000


def _int_text(n: int) -> str:
    """Decimal digits of ``n >= 0``, also beyond Python's 4300-digit ``str(int)`` limit."""
    if n < _CHUNK:
        return str(n)
    high, low = divmod(n, _CHUNK)
    return _int_text(high) + str(low).rjust(4000, "0")
