"""A reader's slips: the ways a printed number goes off in the writing down.

An article (or a student) computes a value right and writes another: the sign
dropped, the decimal point one place off (0.008 for 0.000787), two digits swapped
(0.214 for 0.241), the neighbour's value copied, the digits truncated instead of
rounded, two rows or two columns of a table exchanged, the whole table transposed.

Everything here is a pure function of printed numbers (:class:`~symtf.numbers.Printed`),
certified balls of the exact values they stand for, and the other printed entries
of the same step. A detector returns a :class:`Slip` only when the slip reproduces the
printed value (certified: the slipped value's rounding interval holds the ball, or
the slipped digits are the correct rounding's) and contradicts none of the other
printed numbers it can be checked against; otherwise ``None``, never a guess.
:mod:`symtf.checking.diagnose` (an article) and :mod:`symtf.teach.grade` (a student's
answers) both call :func:`entry_slip` and :func:`table_slip`.

Indices are tuples whose last two parts are the row and the column (``(i, j)``, or
``(b, h, i, j)`` for an N-D step).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field, replace
from fractions import Fraction
from typing import Any, cast

from flint import arb, ctx, fmpq

from symtf.backends.certify import _comparison_bits, compare_ball
from symtf.backends.decimals import decimal_string
from symtf.checking.wording import place
from symtf.numbers import Printed, rounding_interval

Index = tuple[int, ...]
#: The exact value of an entry of the step as a certified ball, or ``None``.
Exact = Callable[[Index], arb | None]

#: Every slip this module names, in the order :func:`entry_slip` tries them.
ENTRY_SLIPS = (
    "sign-flip",
    "decimal-shift",
    "digit-transposition",
    "copied-neighbour",
    "truncation",
)
#: Slips of a whole table.
TABLE_SLIPS = ("swapped-rows", "swapped-columns", "transposed")
#: Decimal shifts tried: ×10ⁿ for these n.
SHIFTS = (1, -1, 2, -2, 3, -3)


@dataclass(frozen=True)
class Slip:
    """A slip that reproduces printed numbers.

    Attributes:
        cause: One of :data:`ENTRY_SLIPS` or :data:`TABLE_SLIPS`.
        entries: The printed entries it explains.
        what: What happened, in a few words (``two digits are swapped``); rows, columns and
            entries are counted from 1.
        said: The numbers that show it, only those the detector computed (``the exact
            value 0.2413… prints as 0.241``).
        detail: Machine-readable particulars, indices from 0 (``{"shift": 1}``,
            ``{"rows": [1, 2]}``).
    """

    cause: str
    entries: tuple[Index, ...]
    what: str
    said: str
    detail: dict[str, Any] = field(default_factory=dict)

    @property
    def text(self) -> str:
        """What happened and the numbers that show it."""
        return f"{self.what}: {self.said}"


# ----------------------------------------------------------------------------- certified rounding


def prints_as(x: arb | None, p: Printed, mode: str = "nearest") -> bool:
    """Whether the value in ball ``x`` certainly prints as ``p`` (rounding ``mode``).

    ``False`` when it certainly does not, and when the ball cannot tell.
    """
    if x is None or p.value is None or p.is_fraction or not x.is_finite():
        return False
    iv = rounding_interval(p, mode)
    lo, hi = compare_ball(x, iv.lo), compare_ball(x, iv.hi)
    if lo is None or hi is None:
        return False
    above = lo > 0 or (lo == 0 and iv.lo_closed)
    below = hi < 0 or (hi == 0 and iv.hi_closed)
    return above and below


def correct_roundings(x: arb | None, p: Printed) -> list[Printed]:
    """The correct roundings of ``x`` on ``p``'s grid, written like ``p`` (two at an exact tie)."""
    if x is None or p.value is None or p.is_fraction or not x.is_finite():
        return []
    u = p.ulp
    with ctx.workprec(_comparison_bits(x)):
        man, exp = x.mid().man_exp()
    mid = Fraction(int(man)) * Fraction(2) ** int(exp)
    guess = round(mid / u) * u
    out = []
    for k in (-1, 0, 1):
        v = guess + k * u
        cand = Printed(p.format(v), v, p.decimals, style=p.style)
        if prints_as(x, cand):
            out.append(cand)
    return out


def shown(x: arb | None, text: str | None = None) -> str:
    """The exact value for an explanation: ``text`` (a certified decimal the verdict wrote) when
    given, else the ball's certified digits, else its certified range."""
    if text is not None:
        return _short(text)
    if x is None or not x.is_finite():
        return "(not certified)"
    s = decimal_string(x, 15)
    if s is not None:
        return _short(s)
    lo, hi = (decimal_string(e, 10) for e in (x.lower(), x.upper()))
    if lo is None or hi is None:
        return "(not certified)"
    return f"in [{lo.rstrip('…')}, {hi.rstrip('…')}]"


def _short(s: str) -> str:
    head, dot, tail = s.partition(".")
    if "e" in tail.lower() or len(tail) <= 8:
        return s
    return f"{head}{dot}{tail[:8]}…"


def shift_text(text: str | None, n: int) -> str | None:
    """A decimal string times ``10ⁿ``, by moving its point (``…`` and the sign kept)."""
    if text is None or "e" in text.lower():
        return None
    more = text.endswith("…")
    body = text.rstrip("…")
    sign = "-" if body.startswith("-") else ""
    body = body.lstrip("-")
    whole, _, frac = body.partition(".")
    digits, point = whole + frac, len(whole) + n
    if point <= 0:
        digits, point = "0" * (1 - point) + digits, 1
    elif point > len(digits):
        if more:
            return None  # the digits beyond the point are not known
        digits += "0" * (point - len(digits))
    whole, frac = digits[:point].lstrip("0") or "0", digits[point:]
    out = f"{sign}{whole}" + (f".{frac}" if frac else "")
    return out + ("…" if more else "")


def _scaled(x: arb, n: int) -> arb:
    with ctx.workprec(_comparison_bits(x)):
        return x * arb(fmpq(10) ** n) if n >= 0 else x / arb(fmpq(10) ** -n)


# ----------------------------------------------------------------------------- one entry


def sign_flip(p: Printed, x: arb | None, text: str | None = None) -> Slip | None:
    """``p`` is the exact value's correct rounding with the sign flipped."""
    if p.value is None or p.value == 0 or x is None or prints_as(x, p):
        return None
    if prints_as(-x, p):
        return Slip(
            "sign-flip",
            (),
            "the sign is flipped",
            f"the exact value {shown(x, text)} prints as {p.format(-p.value)}",
        )
    return None


def decimal_shift(p: Printed, x: arb | None, text: str | None = None) -> Slip | None:
    """``p`` is the correct rounding of ``x·10ⁿ`` (the point moved ``n`` places)."""
    if p.value is None or p.value == 0 or x is None or prints_as(x, p) or p.style == "sci":
        return None
    for n in SHIFTS:
        if prints_as(_scaled(x, n), p):
            places = "place" if abs(n) == 1 else "places"
            way = "right" if n > 0 else "left"
            return Slip(
                "decimal-shift",
                (),
                f"the decimal point is {abs(n)} {places} off (×10^{n})",
                f"the exact value is {shown(x, text)}, and "
                f"{shown(_scaled(x, n), shift_text(text, n))} prints as {p.text}",
                {"shift": n, "direction": way},
            )
    return None


def digit_transposition(p: Printed, x: arb | None, text: str | None = None) -> Slip | None:
    """``p`` is the correct rounding with two neighbouring digits swapped (0.214 for 0.241)."""
    if p.value is None or x is None or prints_as(x, p):
        return None
    for r in correct_roundings(x, p):
        a, b = _digits(p.text), _digits(r.text)
        if a is None or b is None or len(a) != len(b) or a[0] != b[0] or a[2] != b[2]:
            continue
        da, db = a[1], b[1]
        diff = [k for k in range(len(da)) if da[k] != db[k]]
        if (
            len(diff) == 2
            and diff[1] == diff[0] + 1
            and da[diff[0]] == db[diff[1]]
            and da[diff[1]] == db[diff[0]]
        ):
            return Slip(
                "digit-transposition",
                (),
                "two digits are swapped",
                f"the exact value {shown(x, text)} prints as {r.text}",
                {"correct": r.text},
            )
    return None


def breaks_sum(
    p: Printed, x: arb | None, others: Iterable[Printed], total: Fraction = Fraction(1)
) -> bool:
    """Whether reading ``p`` as a slip of ``x``'s correct rounding contradicts a printed sum.

    ``p`` and ``others`` are a row the article's setting makes sum to ``total`` (the
    entries of one softmax row). When the row sums to it as printed (within half a unit
    of each entry's last digit), ``p`` was written as the row needs: had it been a slip
    of the correct rounding (0.76 written for 0.67 beside 0.19 and 0.05), the row with
    that rounding would be off by more than its entries' rounding allows.
    """
    row = [p, *others]
    if x is None or len(row) < 2 or any(q.value is None or q.is_fraction for q in row):
        return False
    values = [cast(Fraction, q.value) for q in row]
    tol = sum((q.ulp / 2 for q in row), Fraction(0))
    if abs(sum(values, Fraction(0)) - total) > tol:
        return False  # the printed row is no such row: nothing to contradict
    rest = sum(values[1:], Fraction(0))
    right = correct_roundings(x, p)
    return bool(right) and all(
        r.value is not None and abs(rest + r.value - total) > tol for r in right
    )


def _digits(text: str) -> tuple[str, str, int] | None:
    """``(sign, digits, position of the point)`` of a fixed-point print, else ``None``."""
    t = text.strip().replace("−", "-")
    if not t or any(c in t for c in "eE%/"):
        return None
    sign = "-" if t.startswith("-") else ""
    body = t.lstrip("+-")
    whole, _, frac = body.partition(".")
    if not (whole + frac).isdigit():
        return None
    return sign, whole + frac, len(whole)


def truncation(p: Printed, x: arb | None, text: str | None = None) -> Slip | None:
    """``p`` is ``x`` truncated toward zero, and not its correct rounding (0.149 for e^−1.9)."""
    if p.value is None or x is None or prints_as(x, p) or not prints_as(x, p, "truncate"):
        return None
    rounded = correct_roundings(x, p)
    also = f" (it rounds to {rounded[0].text})" if rounded else ""
    return Slip(
        "truncation",
        (),
        "truncated, not rounded",
        f"the exact value {shown(x, text)} truncates to {p.text}{also}",
    )


def copied_neighbour(
    idx: Index,
    p: Printed,
    exact: Exact,
    shape: tuple[int, ...],
    printed: Mapping[Index, Printed],
    texts: Mapping[Index, str] | None = None,
) -> Slip | None:
    """``p`` is the value of the entry beside it (same row or column), not its own.

    When the neighbour is printed too, it must be printed as ``p`` (the copy is of
    what was written there).
    """
    x = exact(idx)
    if p.value is None or x is None or prints_as(x, p):
        return None
    *lead, i, j = idx
    n, m = shape[-2], shape[-1]
    for di, dj in ((0, -1), (0, 1), (-1, 0), (1, 0)):
        a, b = i + di, j + dj
        if not (0 <= a < n and 0 <= b < m):
            continue
        nb = (*lead, a, b)
        y = exact(nb)
        if not prints_as(y, p):
            continue
        other = printed.get(nb)
        if other is not None and other.value != p.value:
            continue
        return Slip(
            "copied-neighbour",
            (),
            f"it is the value of the entry beside it ({place(nb, None)})",
            f"that entry's exact value {shown(y, (texts or {}).get(nb))} prints as {p.text}; "
            f"its own exact value is {shown(x, (texts or {}).get(idx))}",
            {"neighbour": list(nb)},
        )
    return None


def entry_slip(
    idx: Index,
    p: Printed,
    exact: Exact,
    shape: tuple[int, ...],
    printed: Mapping[Index, Printed],
    texts: Mapping[Index, str] | None = None,
    row_total: Fraction | None = None,
) -> Slip | None:
    """The first slip of :data:`ENTRY_SLIPS` that reproduces the printed entry ``idx``.

    Truncation is offered only when every other printed entry of the step is
    consistent with truncation too (none was rounded up). With ``row_total`` (each row
    of the step sums to it: a softmax), no slip is offered for an entry whose row,
    printed whole, sums to it as printed while the correct rounding would not
    (:func:`breaks_sum`): the entry was written as the row needs.

    Args:
        idx: The entry.
        p: What was printed there.
        exact: The exact value of any entry of the step, as a certified ball.
        shape: The step's shape.
        printed: Every printed entry of the step (``idx`` among them).
        texts: Certified decimals of exact values already written (the verdicts'), by entry.
        row_total: What each row (last axis) of the step sums to, when the step says so.
    """
    x = exact(idx)
    text = (texts or {}).get(idx)
    if row_total is not None and shape:
        row = [q for k, q in printed.items() if k[:-1] == idx[:-1] and k != idx]
        if len(row) == shape[-1] - 1 and breaks_sum(p, x, row, row_total):
            return None
    for detect in (sign_flip, decimal_shift, digit_transposition):
        s = detect(p, x, text)
        if s is not None:
            return replace(s, entries=(idx,))
    s = copied_neighbour(idx, p, exact, shape, printed, texts)
    if s is not None:
        return replace(s, entries=(idx,))
    s = truncation(p, x, text)
    if s is not None and truncated_throughout(printed, exact, skip=idx):
        return replace(s, entries=(idx,))
    return None


def truncated_throughout(
    printed: Mapping[Index, Printed], exact: Exact, skip: Index | None = None
) -> bool:
    """Whether every printed entry (but ``skip``) is consistent with truncation: none was rounded up."""
    for k, q in printed.items():
        if k == skip or q.value is None or q.is_fraction:
            continue
        x = exact(k)
        if x is None:
            continue
        if prints_as(x, q) and not prints_as(x, q, "truncate"):
            return False
    return True


# ----------------------------------------------------------------------------- a table


def table_slip(
    printed: Mapping[Index, Printed], exact: Exact, shape: tuple[int, ...], off: Iterable[Index]
) -> Slip | None:
    """Swapped rows, swapped columns or a transposed table that reproduces the off entries.

    Every printed entry of the two rows (columns) must be a correct rounding of the entry
    it was swapped with, and the off entries must lie in both of them and nowhere else.
    """
    off = set(off)
    if len(shape) < 2 or not off:
        return None
    n, m = shape[-2], shape[-1]

    def holds(mapping: Callable[[Index], Index], keys: list[Index]) -> bool:
        return bool(keys) and all(prints_as(exact(mapping(k)), printed[k]) for k in keys)

    for a in range(n):
        for b in range(a + 1, n):

            def swap(k: Index, a: int = a, b: int = b) -> Index:
                return (*k[:-2], {a: b, b: a}.get(k[-2], k[-2]), k[-1])

            keys = [k for k in printed if k[-2] in (a, b)]
            both = {k[-2] for k in off} == {a, b}  # each row off: a swap moves both
            if both and holds(swap, keys):
                return Slip(
                    "swapped-rows",
                    tuple(sorted(k for k in off)),
                    f"rows {a + 1} and {b + 1} are swapped",
                    "each printed row is the other's correct rounding",
                    {"rows": [a, b]},
                )
    for a in range(m):
        for b in range(a + 1, m):

            def swapc(k: Index, a: int = a, b: int = b) -> Index:
                return (*k[:-1], {a: b, b: a}.get(k[-1], k[-1]))

            keys = [k for k in printed if k[-1] in (a, b)]
            both = {k[-1] for k in off} == {a, b}
            if both and holds(swapc, keys):
                return Slip(
                    "swapped-columns",
                    tuple(sorted(off)),
                    f"columns {a + 1} and {b + 1} are swapped",
                    "each printed column is the other's correct rounding",
                    {"columns": [a, b]},
                )
    if n == m and n > 1:

        def flip(k: Index) -> Index:
            return (*k[:-2], k[-1], k[-2])

        keys = list(printed)
        if holds(flip, keys):
            return Slip(
                "transposed",
                tuple(sorted(off)),
                "the printed table is the transpose",
                "row i, column j holds the correct rounding of row j, column i",
            )
    return None


__all__ = [
    "ENTRY_SLIPS",
    "SHIFTS",
    "TABLE_SLIPS",
    "Slip",
    "copied_neighbour",
    "correct_roundings",
    "decimal_shift",
    "digit_transposition",
    "entry_slip",
    "prints_as",
    "shift_text",
    "shown",
    "sign_flip",
    "table_slip",
    "truncated_throughout",
    "truncation",
]
