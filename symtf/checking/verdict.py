"""The verdict rule: one printed number against one exact value.

DESIGN.md "Verdicts", for a printed number whose last digit has weight ``u``:

- ``exact``: the printed value equals the exact value;
- ``rounded``: it is a correct rounding of the exact value (an exact tie
  accepts either neighbour unless the claim or file states ``rounding``);
- ``slip``: not a correct rounding, but ``|printed − exact| < u``;
- ``wrong``: ``|printed − exact| >= u`` (a printed ±∞ at a finite entry, or a
  finite number at a masked one, is wrong);
- ``symbolic``: the value depends on a symbol of the file, so it is reported as
  an expression (with the symbol's values that print as the printed number,
  where that is cheap);
- ``undecided``: the exact value could not be separated from a boundary within
  :data:`~symtf.backends.certify.MAX_BITS` bits, and exact algebra could not prove it
  equal to it (the explanation says which boundary).

Every comparison is certified: rationals exactly (also through node
definitions), everything else with balls whose precision escalates 128 → 1024
bits, then exact algebra (the trigonometry-aware zero test), then further up
to the cap. The quantity only needs ``ball(prec)`` and ``exact()`` (see
:class:`symtf.checking.evaluation.Quantity`). Locating a value against the printed
number is :mod:`symtf.checking.located`; where a value that depends on a symbol prints as
the printed number is :mod:`symtf.checking.solutions`.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from fractions import Fraction
from typing import TYPE_CHECKING, Any, cast

import sympy
from flint import arb, ctx, fmpz

from symtf.backends.certify import PRECISIONS, to_fmpq
from symtf.backends.zero import exact_zero
from symtf.checking.located import Located, QuantityLike, rational_text
from symtf.checking.solutions import (
    brief,
    held_sets,
    interval_text,
    latex_form,
    named_form,
    prints_at,
    rational_in,
    searched,
    searched_at,
    searched_text,
    short_form,
    solutions,
)
from symtf.errors import Undecided
from symtf.numbers import DEFAULT_ROUNDING, Printed, decade, rounding_interval

if TYPE_CHECKING:
    from symtf.spec.symbols import SymbolSpec


#: Every verdict class, best first within "decided".
VERDICTS = ("exact", "rounded", "slip", "wrong", "symbolic", "undecided")
#: Verdicts that decide nothing about the printed number.
UNDECIDED = ("symbolic", "undecided")


@dataclass(frozen=True)
class Verdict:
    """The verdict on one printed number.

    Attributes:
        verdict: One of :data:`VERDICTS`.
        expected: The correct rounding, written like the print (``None`` if unknown).
        explanation: Why, in a sentence built from the numbers it states.
        units_off: Certified ``(printed − exact)/u`` as a decimal string
            (``"0"`` when exact, ``"inf"``/``"-inf"`` against an infinity).
        extra: Further JSON fields (``symbolic_value``, ``solutions``).
        decimal: A certified decimal of the value the verdict found when the quantity
            cannot give one itself (a symbol that cancels), else ``None``.
        cancels: The symbol that cancels from the value, if one does.
    """

    verdict: str
    expected: str | None
    explanation: str
    units_off: str | None = None
    extra: dict[str, Any] = field(default_factory=dict)
    decimal: str | None = None
    cancels: str | None = None


# ----------------------------------------------------------------------------- the rule


def decide(
    q: QuantityLike,
    p: Printed,
    mode: str = DEFAULT_ROUNDING,
    symbols: Mapping[str, SymbolSpec] | None = None,
) -> Verdict:
    """Classify one printed number against an exact quantity (total: never raises on a value).

    Args:
        q: The exact value.
        p: The printed number.
        mode: The rounding rule (``nearest`` when the file states none).
        symbols: The file's ``[symbols]`` table: a declared symbol's range bounds its
            solution set, and its value is marked inside or outside that set.
    """
    x = Located(q)
    if x.symbols:
        return _symbolic(x, p, mode, symbols or {})
    if p.is_infinite:
        if x.infinite and x.infinite == p.inf:
            what = "masked: exactly −∞" if p.inf < 0 else "exactly +∞"
            return Verdict("exact", p.text, what, "0")
        side = "inf" if p.inf > 0 else "-inf"
        if x.infinite:
            return Verdict("wrong", None, "printed ∞ of the wrong sign", side)
        shown = x.decimal_hint()
        return Verdict(
            "wrong",
            None,
            f"printed {'−' if p.inf < 0 else '+'}∞, but this entry is finite"
            + ("" if p.inf > 0 else " (not masked)")
            + (f": its exact value is {shown}" if shown else ""),
            side,
        )
    assert p.value is not None
    if x.infinite:
        return Verdict(
            "wrong",
            None,
            f"the exact value is {'−' if x.infinite < 0 else '+'}∞"
            + (" (a masked entry)" if x.infinite < 0 else ""),
            "inf" if x.infinite < 0 else "-inf",
        )
    c = x.sign(p.value)
    if c == 0:
        return Verdict("exact", p.format(p.value), "equals the exact value", "0")
    if p.is_fraction:
        if c is None:
            return Verdict("undecided", None, x.reason)
        return Verdict("wrong", None, "the printed fraction is not the exact value")
    u = p.ulp
    inside, lo, hi = x.inside(rounding_interval(p, mode))
    if inside is None:
        return Verdict("undecided", None, x.reason)
    units = x.units(p.value, u)
    if inside:
        tie = lo == 0 or hi == 0
        if tie and mode == "nearest":
            other = p.value + u if hi == 0 else p.value - u
            why = (
                f"the exact value is a tie between {p.format(min(p.value, other))} and "
                f"{p.format(max(p.value, other))}: either is a correct rounding"
            )
        elif tie:
            why = f"correctly rounded ({mode}; the exact value is a tie)"
        else:
            why = f"correctly rounded ({mode})" if mode != "nearest" else "correctly rounded"
        return Verdict("rounded", p.format(p.value), why, units)
    if c is None:
        return Verdict("undecided", None, x.reason)
    # Not a correct rounding: a slip when strictly within one unit, else wrong.
    edge = x.sign(p.value - u) if c < 0 else x.sign(p.value + u)
    if edge is None:
        return Verdict("undecided", None, x.reason)
    slip = edge > 0 if c < 0 else edge < 0
    r = correct_rounding(x, p, mode)
    expected = None if r is None else r.format(r.value)
    shown = f"; the exact value rounds to {expected}" if expected else ""
    if slip:
        amount = _amount(units, "less than one")
        return Verdict(
            "slip",
            expected,
            f"not a correct rounding, though within one in the last digit: "
            f"{amount} of the last digit from the exact value{shown}",
            units,
        )
    amount = _amount(units, "at least one")
    return Verdict(
        "wrong",
        expected,
        f"off by {amount} in the last digit{'' if not expected else f': should be {expected}'}",
        units,
    )


def _amount(units: str | None, unknown: str) -> str:
    """How far off, in the printed number's last digit, in words: ``about 0.6``, ``about 279``.

    ``units`` is the certified ``(printed − exact)/u``; it is rounded to two significant
    digits (an integer from 10 up), and the JSON field keeps every certified digit.
    """
    if not units:
        return unknown
    try:
        a = abs(Fraction(units.rstrip("…")))
    except (ValueError, ZeroDivisionError):
        return unknown
    if a >= 10:
        return f"about {round(a)}"
    shown = f"{float(a):.2g}"
    if "e" in shown:
        return "a tiny fraction"
    return shown if Fraction(shown) == a else f"about {shown}"


def correct_rounding(x: Located, p: Printed, mode: str) -> Printed | None:
    """The certified correct rounding of the value on ``p``'s grid, written like ``p``."""
    rmode = "half-up" if mode in ("any", "nearest") else mode
    saved = ctx.prec
    try:
        for prec in PRECISIONS:
            if x.rational is not None:
                guess_ball = None
            else:
                guess_ball = x.ball(prec)
                if guess_ball is None or not guess_ball.is_finite():
                    continue
            decimals = p.decimals
            if p.style == "sci":
                k = _decade(x, guess_ball)
                if k is None:
                    continue
                decimals = p.significant - 1 - k
            if abs(decimals) > MAX_EXPECTED_DIGITS:  # e^-10^6 in scientific notation
                return None
            u = Fraction(10) ** -decimals
            guess = _nearest_multiple(x.rational, guess_ball, u, prec)
            if guess is None:
                return None
            for cand in (guess, guess - u, guess + u):
                cp = replace(p, text="", value=cand, decimals=decimals, shortened=False)
                cp = replace(cp, text=cp.format(cand))
                ok, _, _ = x.inside(rounding_interval(cp, rmode))
                if ok is None:
                    return None
                if ok:
                    return cp
            if x.rational is not None:
                return None
    finally:
        ctx.prec = saved
    return None


def _decade(x: Located, b: arb | None) -> int | None:
    """``floor(log10 |value|)`` if certain at this ball (a guide for the grid of a scientific print)."""
    if x.rational is not None:
        a = abs(x.rational)
        return 0 if a == 0 else decade(a)
    assert b is not None
    if b.contains(0):
        return None
    lg = (abs(b).log() / arb(10).log()).floor()
    return int(cast(fmpz, lg.unique_fmpz())) if lg.is_exact() else None


#: Largest correct rounding written out, in decimal digits (a value of 10^4000 gets none).
MAX_EXPECTED_DIGITS = 200


def _nearest_multiple(r: Fraction | None, b: arb | None, u: Fraction, prec: int) -> Fraction | None:
    """A multiple of ``u`` near the value (a guess, checked by the caller)."""
    if r is not None:
        return round(r / u) * u
    assert b is not None
    ctx.prec = prec
    y = b / arb(to_fmpq(u))
    if not abs(y) < 10**MAX_EXPECTED_DIGITS:
        return None
    _, exp = y.mid().man_exp()
    if int(exp) < -(prec + 64):  # |y| far below 1
        return Fraction(0)
    man, e = (y + arb(0.5)).floor().mid().man_exp()
    return round(Fraction(int(man)) * Fraction(2) ** int(e)) * u


def _symbolic(x: Located, p: Printed, mode: str, symbols: Mapping[str, SymbolSpec]) -> Verdict:
    """A value that depends on symbols: its expression and, for one symbol, its solution set.

    The solution set is the certified set of the symbol's values for which the
    print is a correct rounding: exact over all reals (or the symbol's declared
    ``range``) for a rational function with rational coefficients
    (:func:`solutions`), else certified by subdivision over the declared range or
    :data:`SEARCH_RANGE` (:mod:`symtf.roots`), never through a closed form of the
    whole DAG. A declared ``value`` is marked inside or outside the set
    (``declared_value``), decided at that value itself.
    """
    names = ", ".join(sorted(map(str, x.symbols)))
    extra: dict[str, Any] = {"depends_on": sorted(map(str, x.symbols))}
    why = f"depends on {names}"
    closed = short_form(x)
    text = brief(closed) if closed is not None else named_form(x)
    extra["symbolic_value"] = text
    if closed is not None:
        tex = latex_form(closed)
        if tex is not None:
            extra["symbolic_latex"] = tex
    # A long value is not written out in the explanation: its named form speaks in the
    # trace's internal node names (``symbolic_value`` keeps it for programs).
    long = long_value_words(names)
    why += f": the exact value is {text if closed is not None else long}"
    if len(x.symbols) == 2 and not p.is_infinite:
        why += held_sets(x, p, mode, symbols, closed, extra)
    if p.is_infinite or len(x.symbols) != 1:
        return Verdict("symbolic", None, why, None, extra)
    (sym,) = x.symbols
    constant = _cancelled(closed, sym, p, mode) if closed is not None else None
    if constant is not None:
        return constant
    spec = symbols.get(str(sym))
    window = spec.range if spec is not None else None
    rational = closed is not None and rational_in(closed, sym)
    sol = solutions(closed, p, mode, window) if closed is not None and rational else None
    inside: bool | None = None
    if sol is not None:
        extra["solutions"] = sol
        within = ""
        if window is not None:
            extra["solutions_range"] = [rational_text(window[0]), rational_text(window[1])]
            within = (
                f" in the declared range [{rational_text(window[0])}, {rational_text(window[1])}]"
            )
        if sol:
            why += f"; it prints as {p.text} for {sym} in " + " ∪ ".join(
                interval_text(s) for s in sol
            )
        else:
            why += f"; no value of {sym}{within} prints as {p.text}"
        if spec is not None and spec.value is not None and closed is not None:
            inside = prints_at(closed, sym, spec.value, p, mode)
    else:
        found = searched(x, sym, p, mode, window)
        if found is not None:
            rset = found.pop("_set")
            found.pop("_dual")
            extra.update(found)
            why += searched_text(found, sym, p, declared=window is not None)
            if spec is not None and spec.value is not None:
                inside = searched_at(x, sym, rset, spec.value, p, mode)
    if spec is not None and spec.value is not None and (sol is not None or "solutions" in extra):
        extra["declared_value"] = {
            "symbol": str(sym),
            "value": spec.value_text,
            "inside": inside,
        }
        where = {True: "inside", False: "outside", None: "not certainly inside or outside"}
        why += f"; the article's value {sym} = {spec.value_text} is {where[inside]} that set"
    return Verdict("symbolic", None, why, None, extra)


class _Closed:
    """A closed-form value with no symbols, as a quantity for :func:`decide`."""

    def __init__(self, e: sympy.Expr) -> None:
        self.e = e

    def ball(self, prec: int) -> arb | None:
        from symtf.backends.certify import ball

        try:
            return ball(self.e, prec)
        except (TypeError, ValueError, ZeroDivisionError, Undecided):
            return None

    def exact(self) -> tuple[sympy.Expr, Any]:
        return self.e, None


def _cancelled(e: sympy.Expr, sym: sympy.Symbol, p: Printed, mode: str) -> Verdict | None:
    """The verdict on a value in which the symbol cancels (its derivative is exactly 0), or ``None``.

    ``e^(a+2)/(2e^(a+2) + e^(a+3))`` is ``1/(2 + e)`` for every ``a``: the print is
    then decided like any number, and the explanation says that the symbol cancels.
    """
    try:
        if not exact_zero(sympy.diff(e, sym)):
            return None
        value = e.xreplace({sym: sympy.Integer(0)})
    except (TypeError, ValueError, Undecided, RecursionError):
        return None
    if value.free_symbols or not value.is_finite:
        return None
    v = decide(_Closed(value), p, mode)
    if v.verdict in UNDECIDED:
        return None
    why = f"{v.explanation} ({sym} cancels: the value is the same for every {sym})"
    decimal = Located(_Closed(value)).decimal_hint()
    return replace(v, explanation=why, decimal=decimal, cancels=str(sym))


def long_value_words(names: str) -> str:
    """What a symbolic explanation says of a value too long to write out (``names``: its
    symbols, comma-separated); the notes find the sentence's value by it."""
    return f"a long expression in {names} (not written out)"
