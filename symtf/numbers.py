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

import functools
import math
import re
import unicodedata
from dataclasses import dataclass, replace
from fractions import Fraction
from typing import Any

from symtf.errors import SpecError

#: Longest number text accepted anywhere (a printed value or a weight).
MAX_NUMBER_CHARS = 100
#: Largest decimal exponent accepted (``1e-30`` is fine, ``1e-1000000000`` is not).
MAX_EXPONENT = 60

ROUNDING_MODES = ("nearest", "half-up", "half-even", "truncate", "any")
#: The rule when neither the claim nor the file states one: an exact tie accepts either neighbour.
DEFAULT_ROUNDING = "nearest"

# [0-9], never \d: Python's \d also matches ٥, ５ and ৪ (a Bengali four that looks like an 8).
_DECIMAL = re.compile(r"^([+-]?)([0-9]+\.?[0-9]*|\.[0-9]+)(?:[eE]([+-]?[0-9]+))?$")
_FRACTION = re.compile(r"^([+-]?)([0-9]+)/([0-9]+)$")
_INF_BODIES = {"inf", "∞", "\\infty", "\\mathrm{\\infty}", "\\mathrm{\\infty }", "infinity"}
_NEG_INF = {"-" + b for b in _INF_BODIES}
_POS_INF = _INF_BODIES | {"+" + b for b in _INF_BODIES}

# Characters that look like a minus sign in pasted article text.
_MINUS_SIGNS = str.maketrans({"−": "-", "–": "-", "‐": "-"})
#: The only non-ASCII character a number may contain after the minus signs above: ∞.
_NON_ASCII_OK = frozenset("∞")


@dataclass(frozen=True)
class Printed:
    """A number as an article printed it.

    Attributes:
        text: The text exactly as printed (after normalising the minus sign).
        value: Its exact value, or ``None`` for a printed infinity.
        decimals: Decimal places of the printed grid: ``0.050`` has 3, ``42.0%``
            (0.420) has 3, ``6.3379e-02`` has 6 and ``1.5e+03`` has -2.
        is_fraction: A printed ``p/q``: right only when exactly equal.
        style: ``"fixed"``, ``"sci"`` (``6.3379e-02``) or ``"percent"`` (``42.0%``).
        inf: For a printed infinity, its sign (-1 or +1); 0 for a finite number.
        shortened: Whether the print may have dropped trailing zeros (numpy's
            ``1.`` and ``0.54``, or any entry of a pasted array repr), so that a
            claim's ``decimals`` is its grid.
    """

    text: str
    value: Fraction | None
    decimals: int
    is_fraction: bool = False
    style: str = "fixed"
    inf: int = 0
    shortened: bool = False

    @property
    def is_infinite(self) -> bool:
        """Whether this is a printed ±∞."""
        return self.value is None

    @property
    def is_neg_inf(self) -> bool:
        """Whether this is a masked entry printed as minus infinity."""
        return self.value is None and self.inf <= 0

    @property
    def is_pos_inf(self) -> bool:
        """Whether this is a printed plus infinity."""
        return self.value is None and self.inf > 0

    @property
    def ulp(self) -> Fraction:
        """One unit in the last printed place (``u`` of DESIGN.md's verdicts)."""
        return Fraction(10) ** -self.decimals

    @property
    def significant(self) -> int:
        """How many significant digits the print shows (at least 1)."""
        if self.style == "sci":
            mantissa = re.split(r"[eE]", self.text)[0].lstrip("+-").replace(".", "")
            return max(len(mantissa.lstrip("0")) or len(mantissa), 1)
        if self.value is None or self.value == 0:
            return max(self.decimals, 1)
        return max(self.decimals + decade(abs(self.value)) + 1, 1)

    def with_decimals(self, decimals: int) -> Printed:
        """The same number read at another precision (``1`` among ``0.496`` is ``1.000``)."""
        return replace(self, decimals=decimals)

    def format(self, x: Fraction | None) -> str:
        """Write a value of this print's grid the way this print is written.

        ``0.497`` for a fixed print with 3 decimals, ``49.7%`` for a percentage,
        ``4.97e-01`` for a print like ``4.96e-01`` (with another exponent when
        ``x`` lies in another decade, keeping the number of significant digits).
        """
        if x is None:
            return self.text
        if self.is_fraction:
            return f"{x.numerator}/{x.denominator}" if x.denominator != 1 else str(x.numerator)
        if self.style == "percent":
            return format_fixed(x * 100, self.decimals - 2) + "%"
        if self.style == "sci":
            return _format_sci(x, self.significant, self.text)
        return format_fixed(x, self.decimals)


def decade(a: Fraction) -> int:
    """``k`` with ``10^k <= a < 10^(k+1)`` for a rational ``a > 0`` (exact)."""
    k = math.floor((a.numerator.bit_length() - a.denominator.bit_length()) * math.log10(2))
    while Fraction(10) ** k > a:
        k -= 1
    while Fraction(10) ** (k + 1) <= a:
        k += 1
    return k


def _format_sci(x: Fraction, significant: int, like: str) -> str:
    """``x`` in scientific notation with ``significant`` digits, exponent styled as ``like``."""
    m = re.search(r"([eE])([+-]?)([0-9]+)$", like)
    letter, sign, width = (m.group(1), m.group(2), len(m.group(3))) if m else ("e", "-", 2)
    k = 0 if x == 0 else decade(abs(x))
    mant = x / Fraction(10) ** k
    decimals = significant - 1
    while (mant * 10**decimals).denominator != 1:  # not on the grid: show every digit it has
        decimals += 1
        if decimals > significant + 60:
            mant = Fraction(round(mant * 10**decimals), 10**decimals)
            break
    text = format_fixed(mant, decimals)
    if decimals == 0 and like.split(letter)[0].endswith("."):
        text += "."
    exp_sign = "-" if k < 0 else ("+" if sign == "+" or sign == "-" else "")
    return f"{text}{letter}{exp_sign}{str(abs(k)).rjust(width, '0')}"


@dataclass(frozen=True)
class Interval:
    """A real interval with rational ends, each end open or closed."""

    lo: Fraction
    hi: Fraction
    lo_closed: bool
    hi_closed: bool


def _normalise(text: str) -> str:
    return text.strip().translate(_MINUS_SIGNS)


def check_ascii(text: str, where: str) -> None:
    """Refuse a number written with non-ASCII digits, separators or signs.

    ``٠.٥``, ``０.５`` and ``0.৪`` (a Bengali four, which looks like an 8) are
    digits to Python's ``float`` and ``\\d``, but an article's numbers are ASCII;
    reading them silently would check a number nobody printed. The minus signs
    U+2212, U+2013 and U+2010 (which articles really print) and ∞ stay accepted.

    Raises:
        SpecError: Naming the first offending character and its Unicode name.
    """
    for ch in text:
        if ord(ch) < 128 or ch in _NON_ASCII_OK or ch in "−–‐":
            continue
        name = unicodedata.name(ch, "unnamed character")
        raise SpecError(
            f"{where}: expected a number written in ASCII digits 0-9, found the character "
            f"{ch!r} (U+{ord(ch):04X} {name}) in {text[:40]!r}"
        )


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
    if len(text) <= _KEPT_LENGTH:
        value = _exact_value(text)
        if value is not None:
            return value
    return _parse_exact(text, where)


#: Number strings at most this long have their values kept (:func:`_exact_value`).
_KEPT_LENGTH = 40


@functools.lru_cache(maxsize=8192)
def _exact_value(text: str) -> Fraction | None:
    """The value of a short number string (``None``: not a number :func:`parse_exact` reads).

    A derivation repeats its numbers (a printed matrix read by every claim that shows it, the
    same draft read again after an edit): each is read once. A ``Fraction`` never changes.
    """
    try:
        return _parse_exact(text, "value")
    except SpecError:
        return None


def _parse_exact(text: str, where: str) -> Fraction:
    """:func:`parse_exact` of a string."""
    s = _normalise(text)
    _check_length(s, where)
    check_ascii(s, where)
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

    Accepted: plain decimals (``0.496``, numpy's ``1.``), scientific notation
    (``6.3379e-02``: the grid is the mantissa's last digit, here 10^-6),
    percentages (``42.0%`` is 0.420 on a grid of 0.001), exact fractions
    (``5/6``) and infinities (``-inf``, ``−∞``, ``inf``).

    Raises:
        SpecError: When the text is not such a number (``≈``, thousands
            separators and non-ASCII digits are refused: a printed value is what
            the article shows, as ASCII digits).
    """
    if not isinstance(text, str):
        raise SpecError(f"{where}: expected the printed value as a string, found {text!r}")
    s = _normalise(text)
    grouped = s.replace(GROUPING, ",")
    if GROUPING in s and _THOUSANDS.match(grouped):  # 163,009,536 (digits grouped by three)
        return replace(parse_printed(s.replace(GROUPING, ""), where=where), text=grouped)
    if _THOUSANDS.match(s):
        return replace(parse_printed(s.replace(",", ""), where=where), text=s)
    _check_length(s, where)
    check_ascii(s, where)
    bare = s.replace(" ", "").lower()
    if bare in _NEG_INF:
        return Printed(s, None, 0, inf=-1)
    if bare in _POS_INF:
        return Printed(s, None, 0, inf=1)
    if _FRACTION.match(s):  # an exact fraction such as 5/6: right only if exactly equal
        return Printed(s, parse_exact(s, where=where), 0, is_fraction=True)
    if s.endswith("%"):
        body = s[:-1].rstrip()
        m = _DECIMAL.match(body)
        if not m or m.group(3):
            raise SpecError(
                f"{where}: expected a percentage like 42.0% (digits, then %), found {text!r}"
            )
        decimals = len(m.group(2).partition(".")[2])
        return Printed(s, parse_exact(body, where=where) / 100, decimals + 2, style="percent")
    m = _DECIMAL.match(s)
    if not m:
        raise SpecError(
            f"{where}: expected a printed number like 0.496, 6.3379e-02, 42.0% "
            f"(or an exact fraction like 5/6), found {text!r}"
        )
    _, digits, exponent = m.groups()
    mantissa_decimals = len(digits.partition(".")[2])
    value = parse_exact(s, where=where)
    if exponent is not None:
        return Printed(s, value, mantissa_decimals - int(exponent), style="sci")
    return Printed(s, value, mantissa_decimals, shortened=digits.endswith("."))


def on_grid(p: Printed, decimals: int, *, stated: bool) -> Printed:
    """A fixed-point print read on a claim's grid of ``decimals`` places.

    An integer among 3-decimal numbers (``1`` among ``0.496``) and numpy's
    shortened prints (``1.``, ``0.54`` under ``precision=3``) dropped their
    trailing zeros: on a 3-decimal grid ``0.`` is 0.000 and cannot pass for
    0.0021. When the claim states ``decimals`` (``stated``), every shorter
    fixed-point print is read on that grid.
    """
    if p.value is None or p.is_fraction or p.style != "fixed" or p.decimals >= decimals:
        return p
    if stated or p.shortened or "." not in p.text:
        return p.with_decimals(decimals)
    return p


def _is_decade(v: Fraction) -> bool:
    """Whether ``|v|`` is a power of ten (a scientific print with mantissa ``1.00…``)."""
    a = abs(v)
    if a == 0:
        return False
    return a == Fraction(10) ** decade(a)


def rounding_interval(p: Printed, mode: str = "nearest") -> Interval:
    """The exact values that print as ``p`` under a rounding mode.

    ``nearest`` (the default when neither the claim nor the file states a rule)
    accepts either neighbour of an exact tie; half-up rounds halves away from
    zero (school rounding); half-even to the even last digit; truncate chops
    toward zero; ``any`` accepts half-up, half-even and truncation.

    A scientific print whose mantissa is ``1.00…`` sits on a decade boundary:
    below it the grid is ten times finer, so its interval reaches only a
    twentieth of a unit toward zero (``1.0000e-01`` is what 0.09999996 rounds
    to at 5 significant digits, but not 0.099996).
    """
    if p.value is None:
        raise ValueError("a printed infinity has no rounding interval")
    v, u = p.value, p.ulp
    half = u / 2
    inner = half / 10 if p.style == "sci" and _is_decade(v) else half  # toward zero
    below, above = (inner, half) if v > 0 else (half, inner) if v < 0 else (half, half)
    if mode == "nearest":
        return Interval(v - below, v + above, True, True)
    if mode == "half-up":
        if v > 0:
            return Interval(v - below, v + above, True, False)
        if v < 0:
            return Interval(v - below, v + above, False, True)
        return Interval(-half, half, False, False)
    if mode == "half-even":
        even = (v / u).numerator % 2 == 0
        lo_even = even if not (p.style == "sci" and _is_decade(v) and v > 0) else True
        hi_even = even if not (p.style == "sci" and _is_decade(v) and v < 0) else True
        return Interval(v - below, v + above, lo_even, hi_even)
    if mode == "truncate":
        if v > 0:
            return Interval(v, v + u, True, False)
        if v < 0:
            return Interval(v - u, v, False, True)
        return Interval(-u, u, False, False)
    if mode == "any":
        if v > 0:
            return Interval(v - below, v + u, True, False)
        if v < 0:
            return Interval(v - u, v + above, False, True)
        return Interval(-u, u, False, False)
    raise ValueError(f"unknown rounding mode {mode!r}; expected one of {', '.join(ROUNDING_MODES)}")


def round_exact(x: Fraction, decimals: int, mode: str = "half-up") -> Fraction:
    """Round an exact rational to ``decimals`` places (``any`` and ``nearest`` round half-up)."""
    scale = Fraction(10) ** decimals
    y = x * scale
    if mode == "truncate":
        k = math.trunc(y)
    elif mode == "half-even":
        k = round(y)  # Fraction.__round__ rounds half to even, exactly
    else:
        k = math.floor(abs(y) + Fraction(1, 2)) * (1 if y >= 0 else -1)
    return k / scale


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


# ----------------------------------------------------------------------------- pasted reprs

_REPR_HEAD = re.compile(
    r"^(?:<tf\.Tensor:[^\[]*?numpy=)?\s*"
    r"(?:(?:torch\.)?tensor|(?:np\.|numpy\.)?array|tf\.Tensor)?\s*\(?\s*$"
)
_REPR_TAIL = re.compile(
    r"[\s,)>]*(?:(?:shape|dtype|device|requires_grad|grad_fn|numpy)\s*=\s*"
    r"(?:\([^()]*\)|<[^<>]*>|[\w.:']+)[\s,)>]*)*"
)
#: Deepest nesting of a pasted array (leading dimensions of size 1 are dropped).
MAX_REPR_DEPTH = 8
_REPR_SCALAR = re.compile(
    r"^(?:<tf\.Tensor:[^()]*?numpy=)?\s*"
    r"(?:(?:torch\.)?tensor|(?:np\.|numpy\.)?(?:array|float(?:16|32|64)|bfloat16)|tf\.Tensor)"
    r"\(\s*([^\s,()\[\]]+)\s*"
    r"(?:,\s*(?:shape|dtype|device|requires_grad|grad_fn)\s*=\s*(?:\([^()]*\)|<[^<>]*>|[\w.:']+)\s*)*"
    r"\)\s*>?$"
)


def rational_decimal(q: Fraction, digits: int = 20) -> str:
    """A rational as a decimal: exact when it terminates within ``digits``, else truncated + ``…``."""
    if q == 0:
        return "0"
    for n in range(0, 40):
        if (q * 10**n).denominator == 1:
            return format_fixed(q, n)
    sign = "-" if q < 0 else ""
    a = abs(q)
    k = 0
    while Fraction(10) ** (k + 1) <= a:
        k += 1
    while Fraction(10) ** k > a:
        k -= 1
    decimals = max(digits - 1 - k, 0)
    t = Fraction(int(a * 10**decimals), 10**decimals)
    return sign + format_fixed(t, decimals) + "…"


def split_printed(text: str, where: str) -> tuple[list[list[str]], bool] | None:
    """Cells of a pasted numpy/torch/TF print, or ``None`` for a plain matrix text.

    Reads ``tensor([[0.1385, 0.2379], [0.5, 0.25]])``, ``array([1.  , 0.54 ],
    dtype=float32)``, ``tf.Tensor([[0.1 0.2] [0.3 0.4]], shape=(2, 2),
    dtype=float32)``, numpy's ``print`` form ``[[0.1 0.2]\n [0.3 0.4]]`` and
    one-line nested lists such as ``[[6.3379e-02, 1.0e+00]]``. Leading
    dimensions of size 1 (a batch of one) are dropped.

    Returns:
        ``(rows, is_repr)``: the cells, and whether they came from an array
        print (whose entries are numpy-shortened: the claim's grid applies).

    Raises:
        SpecError: For an elided print (``...``), unbalanced brackets, ragged or
            3-D arrays, and text around the array that is not part of a repr.
    """
    body = text.strip()
    scalar = _REPR_SCALAR.match(body)
    if scalar is not None:  # a 0-d print: tensor(0.0430), np.float64(0.25), tf.Tensor(1.5, …)
        return [[scalar.group(1)]], True
    if "[" not in body or not (body.startswith("[") or _REPR_HEAD.match(body[: body.index("[")])):
        if "..." in body or "…" in body:
            raise SpecError(_ELIDED.format(where=where))
        return None
    compact = re.sub(r"\s+", "", body)
    if body.startswith("[") and "[[" not in compact and body.count("[") > 1:
        return None  # rows text with a bracket per line: the plain matrix reader handles it
    if "..." in body or "…" in body:
        raise SpecError(_ELIDED.format(where=where))
    head = body[: body.index("[")]
    # numpy's print form separates entries by spaces only: its entries are shortened too
    is_repr = bool(head.strip()) or "dtype" in body or "," not in body
    stack: list[list[Any]] = [[]]  # the open rows; an entry is a cell's text or a row
    token = ""
    end = None
    for k, ch in enumerate(body[len(head) :], start=len(head)):
        if ch == "[":
            if token:
                raise SpecError(f"{where}: expected ',' or ']' before '[', found {token!r}")
            if len(stack) > MAX_REPR_DEPTH:
                raise SpecError(
                    f"{where}: expected an array of at most {MAX_REPR_DEPTH} dimensions, "
                    "found deeper nesting"
                )
            new: list[Any] = []
            stack[-1].append(new)
            stack.append(new)
        elif ch == "]":
            if token:
                stack[-1].append(token)
                token = ""
            if len(stack) == 1:
                raise SpecError(f"{where}: unbalanced ']' in the pasted array")
            stack.pop()
            if len(stack) == 1:
                end = k + 1
                break
        elif ch in ", \t\r\n":
            if token:
                stack[-1].append(token)
                token = ""
        else:
            token += ch
    if end is None:
        raise SpecError(f"{where}: expected a closing ']' in the pasted array")
    tail = body[end:]
    if not _REPR_TAIL.fullmatch(tail):
        raise SpecError(
            f"{where}: expected only shape=, dtype=, device= or grad_fn= after the array, "
            f"found {tail.strip()[:40]!r}"
        )
    tree = stack[0][0]
    while isinstance(tree, list) and len(tree) == 1 and isinstance(tree[0], list):
        tree = tree[0]  # a batch of one
    rows = _last_axis_rows(tree, where)
    if not rows or not rows[0]:
        raise SpecError(f"{where}: expected printed values, found an empty array")
    return rows, is_repr


def _last_axis_rows(tree: Any, where: str) -> list[list[str]]:
    """The rows of a nested print along its last axis, in row-major order (3-D, 4-D: the
    2-D slices one after the other, as :func:`symtf.checking.claims.selection_nd` reads
    them)."""

    def shape(t: Any) -> tuple[int, ...]:
        if isinstance(t, str):
            return ()
        inner = {shape(x) for x in t}
        if len(inner) != 1:
            raise SpecError(f"{where}: expected a regular array, found ragged nesting")
        return (len(t), *inner.pop())

    def rows(t: list[Any]) -> list[list[str]]:
        return [t] if all(isinstance(x, str) for x in t) else [r for x in t for r in rows(x)]

    shape(tree)
    return rows(tree)


_ELIDED = (
    "{where}: the print is elided ('...'): symtf checks every printed number, so paste the "
    "whole array (numpy: np.set_printoptions(threshold=sys.maxsize); torch: "
    "torch.set_printoptions(profile='full'))"
)


_CHUNK = 10**4000


def _int_text(n: int) -> str:
    """Decimal digits of ``n >= 0``, also beyond Python's 4300-digit ``str(int)`` limit."""
    if n < _CHUNK:
        return str(n)
    high, low = divmod(n, _CHUNK)
    return _int_text(high) + str(low).rjust(4000, "0")


# ----------------------------------------------------------------------------- pasted matrices

_THOUSANDS = re.compile(r"^([+\-−]?)([0-9]{1,3}(?:,[0-9]{3})+)(\.[0-9]+)?$")


#: Stands for a digit-grouping comma inside one cell while a table is split at commas.
GROUPING = "_"


def protect_thousands_separators(text: str) -> str:
    """``163,009,536`` kept as one cell: commas that group digits by three are not separators.

    Only a whole token (between spaces) of one to three digits followed by groups of three
    reads so; ``0.5,0.25`` and Python's ``[1, 234]`` keep their commas. The grouping
    commas become :data:`GROUPING`, which :func:`parse_printed` reads back.
    """
    out = []
    for token in re.split(r"(\s+)", text):
        m = _THOUSANDS.match(token)
        out.append(token.replace(",", GROUPING) if m else token)
    return "".join(out)


def ungrouped(text: str) -> str:
    """``163,009,536`` as ``163009536``: one printed number without its grouping commas
    (any other text unchanged), for rows whose entries are separated by commas."""
    return text.replace(",", "") if _THOUSANDS.match(text.strip()) else text


def is_label(cell: str) -> bool:
    """Whether a table cell is a label (``I``, ``(query→)``, ``Birds``), not a number.

    A label holds a letter or a sign no number has (an arrow, a colon, brackets); a cell
    of digits, signs, points and exponents is a number, or a typo that must be reported
    (``0.4.9``), never dropped. ``inf``, ``∞`` and ``nan`` are not labels.
    """
    bare = cell.strip().lower().lstrip("+-−")
    if bare in ("inf", "infinity", "∞", "nan", "\\infty") or not bare:
        return False
    if re.fullmatch(r"[0-9.eE+\-−%/_,]+", bare):  # _ and ,: digits grouped by three
        return False
    if any(unicodedata.category(ch) == "Nd" for ch in cell if ord(ch) > 127):
        return False  # a non-ASCII digit: check_ascii names it
    return any(ch.isalpha() or not (ch.isdigit() or ch in ".+-−%/_,") for ch in bare)


def strip_labels(rows: list[list[str]], where: str) -> list[list[str]]:
    """A pasted table without its header row(s) and leading row labels.

    ``(query→)  I  love`` over ``I 1.0 0.0`` and ``love 0.496 0.504`` reads as the
    numbers alone. Rows of labels only are headers; a row's leading labels are its
    label. A label anywhere else is an error that says so.

    Raises:
        SpecError: For a label among the numbers, or a table with no numbers.
    """
    rows = [[c for c in r if c not in ("|", "||")] for r in rows]
    body = [r for r in rows if r and not all(is_label(c) or set(c) <= set("-:=") for c in r)]
    out = []
    for r in body:
        k = 0
        while k < len(r) and is_label(r[k]):
            k += 1
        rest = r[k:]
        for c in rest:
            if is_label(c):
                raise SpecError(
                    f"{where}: expected a printed number, found the label {c!r} among the numbers "
                    "(a table's header row and row labels are read only before the numbers)"
                )
        out.append(rest)
    if not out or not any(out):
        first = next((c for r in rows for c in r if is_label(c)), None)
        found = f"only labels such as {first!r}" if first else "none"
        raise SpecError(f"{where}: expected printed values, found {found}")
    return out


_LATEX_ENV = re.compile(r"\\(begin|end)\{(b|p|v|V)?(matrix|array)\}(\{[^}]*\})?")


def toml_kind(v: Any) -> str:
    """What a TOML value is, for error messages (``a table``, ``the string 'x'``, ...)."""
    if isinstance(v, dict):
        return "a table"
    if isinstance(v, list):
        return f"an array of {len(v)}"
    if isinstance(v, str):
        return f"the string {v[:40]!r}" + ("..." if len(v) > 40 else "")
    return f"{type(v).__name__} {v!r}"[:60]


def split_rows(text: str) -> list[list[str]]:
    """Split a pasted matrix (plain rows, or a LaTeX array/bmatrix body) into cells."""
    body = _LATEX_ENV.sub(" ", text)
    body = body.replace("\\left[", "").replace("\\right]", "").replace("\\\\", "\n")
    rows = []
    for line in body.splitlines():
        line = line.strip().strip("|[]").strip()
        if not line:
            continue
        cells = [c for c in re.split(r"[\s,&;]+", line) if c]
        rows.append(cells)
    return rows


def join_infinities(text: str) -> str:
    """Write ``− ∞`` and ``-\\mathrm{\\infty }`` as one cell, ``-inf``."""
    return re.sub(r"[-−]\s*\\mathrm\{\\infty\s*\}|[-−]\s*\\infty|[-−]\s*∞", "-inf", text)


def claim_grid(printed: Any) -> int:
    """The grid of a claim's printed numbers: the most decimals of its fixed-point entries.

    An integer printed among ``0.496`` is read on that grid (``1`` is ``1.000``);
    infinities, fractions, percentages and scientific prints do not set it.

    Args:
        printed: Rows of :class:`Printed`.
    """
    decs: set[int] = {
        p.decimals
        for row in printed
        for p in row
        if not (p.is_infinite or p.is_fraction) and p.style == "fixed"
    }
    return max(decs) if decs else 0
