"""One value as LaTeX: its exact form when short, else a certified truncation of its
enclosure (``…`` marks an expansion that goes on), never a rounding of the renderer's own.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any

import sympy

from symtf.ops import BREAK
from symtf.renderers.latex.names import tt
from symtf.renderers.latex.options import LatexOptions
from symtf.renderers.tex import escape, math_text


@dataclass(frozen=True)
class Entry:
    """One value as LaTeX.

    Attributes:
        approx: Decimal form (exact when ``is_exact``, else a certified truncation with ``…``).
        is_exact: Whether ``approx`` is the exact value.
        closed: Exact closed form, when allowed and short enough (``None`` otherwise).
        fraction: Whether ``closed`` is a short fraction (``\frac{1}{6}``), shown even
            among decimals: a rational value is written exactly where it is short.
    """

    approx: str
    is_exact: bool
    closed: str | None = None
    fraction: bool = False

    def shown(self) -> str:
        """What a row of decimals shows: a short fraction exactly, else the decimal."""
        return self.closed if self.fraction and self.closed is not None else self.approx

    def best(self) -> tuple[str, bool]:
        """The exact form if there is one, else the decimal; and whether it is exact."""
        if self.is_exact:
            return self.approx, True
        if self.closed is not None:
            return self.closed, True
        return self.approx, False


_AUTO_MAX_CHARS = 48
# Internal tag: a decimal proved equal to the value (never printed).
_EXACT_MARK = "\x01"
#: Widest display line, in rough printed characters, before it is broken.
MAX_LINE = 78
#: Where a long substituted formula may be broken (before an operator).
BRK = BREAK
_ALWAYS_MAX_CHARS = 600


class Numbers:
    """Writes exact trace values as LaTeX (with a cache per expression).

    It formats only: each value's certified decimal and closed forms come from the trace
    (:class:`symtf.shown.Shown`); here they are cut to the chosen decimals and written.

    Args:
        shown: The trace's answers for its values (``trace.shown``).
        options: Layout options.
    """

    def __init__(
        self,
        shown: Any,
        options: LatexOptions,
        names: dict[str, str] | None = None,
        titles: dict[str, str] | None = None,
    ) -> None:
        self.shown = shown
        self.options = options
        #: Step name -> the article's symbol for it (``l0.h0.z`` -> ``H_1``), else the
        #: step's title (``centred rows``): an entry of a symbolic trace that is a named
        #: node is written as that step's entry, not in the node's internal name.
        self.names = names or {}
        self.titles = titles or {}
        #: Each long symbolic entry written by place, at the first step that holds it
        #: (``H[2,1]`` of the heads side by side is ``H_1[2,1]``), see ``named_long``.
        self.origins: dict[Any, str] = {}
        self._cache: dict[Any, Entry] = {}

    def entry(self, e: Any) -> Entry:
        """A value as an :class:`Entry`."""
        key = e if isinstance(e, sympy.Basic) else (type(e).__name__, str(e))
        hit = self._cache.get(key)
        if hit is None:
            hit = self._entry(e)
            self._cache[key] = hit
        return hit

    def _entry(self, e: Any) -> Entry:
        from symtf.numbers import rational_decimal

        if not isinstance(e, sympy.Basic):
            return self._other(e)
        if e.is_Rational:
            q = _fraction(e)
            text = rational_decimal(q, 20)
            if not text.endswith("…") and _decimals_of(text) <= max(self.options.decimals, 6):
                return Entry(num(text), True)
            closed = None if self.options.exact_forms == "never" else sympy.latex(e)
            short = closed is not None and q.denominator <= 99 and abs(q.numerator) < 10**4
            return Entry(num(self._cut(text)), False, closed, short)
        if e is sympy.S.NegativeInfinity:
            return Entry(r"-\infty", True)
        if e is sympy.S.Infinity:
            return Entry(r"\infty", True)
        closed = self._closed(e)
        approx = self._decimal(e)
        if approx is not None and approx.endswith(_EXACT_MARK):
            return Entry(approx.removesuffix(_EXACT_MARK), True)
        if approx is None:
            # Depends on free symbols: the symbolic form is the only honest one.
            return Entry(closed if closed is not None else self._symbolic(e), True)
        return Entry(approx, False, closed)

    def _other(self, e: Any) -> Entry:
        if self.shown.is_ball(e):
            s = self.shown.ball_decimal(e)
            return Entry(num(self._cut(s)) if s else r"\ast", False)
        if isinstance(e, (int, float)):
            return Entry(num(f"{e:.{self.options.decimals}f}"), isinstance(e, int))
        return Entry(math_text(str(e)), False)

    def _closed(self, e: sympy.Expr) -> str | None:
        mode = self.options.exact_forms
        if mode == "never":
            return None
        limit_ops = 40 if mode == "auto" else 400
        candidates = self.shown.closed_forms(e, limit_ops)
        if not candidates:
            return None
        texts = [sympy.latex(c) for c in candidates]
        text = min(texts, key=len)
        limit = _AUTO_MAX_CHARS if mode == "auto" else _ALWAYS_MAX_CHARS
        return text if len(text) <= limit else None

    def _decimal(self, e: sympy.Expr) -> str | None:
        """The certified decimal the trace gives, cut to the chosen decimals.

        A value whose ball holds 0 and that exact algebra could not settle is shown by its
        size bound, ``±0.0000…`` (the magnitude truncates to zero at the shown decimals;
        the sign is not known), rather than as a formula in the trace's internal names.
        """
        n = self.options.decimals
        x = self.shown.expansion(e, n)
        if x.text is not None:
            return num(x.text) + _EXACT_MARK if x.exact else num(self._cut(x.text))
        if x.near_zero:
            return r"{\pm}0." + "0" * n + r"{\scriptstyle\ldots}"
        return None

    def _cut(self, s: str) -> str:
        """Truncate a certified decimal expansion to the chosen decimal places.

        A value written in scientific notation (``4.7175…e-434294483``) keeps its exponent:
        the mantissa is cut, the power of ten stays.
        """
        m = re.match(r"^(.*?)([eE][+-]?\d+)$", s)
        if m:
            return self._cut(m.group(1)) + m.group(2)
        n = self.options.decimals
        more = s.endswith("…")
        digits = s.rstrip("…")
        head, dot, tail = digits.partition(".")
        if len(tail) <= n:
            return digits + ("…" if more else "")
        kept = tail[:n]
        if not any(c in "123456789" for c in head + kept):
            # A tiny value: keep n significant digits rather than show 0.000…
            lead = len(tail) - len(tail.lstrip("0"))
            kept = tail[: lead + max(n, 1)]
        return head + dot + kept + ("…" if kept != tail or more else "")

    def _symbolic(self, e: sympy.Expr) -> str:
        names = {
            s: node_latex(s.name, self.names, self.titles)
            for s in e.free_symbols
            if self.shown.is_node(s)
        }
        text: str = sympy.latex(e, symbol_names=names)
        return text


def _fraction(e: sympy.Rational) -> Any:
    from fractions import Fraction

    return Fraction(int(e.p), int(e.q))


def _decimals_of(text: str) -> int:
    return len(text.partition(".")[2])


def num(text: str) -> str:
    """A decimal string as math-mode LaTeX (``…`` → ``\\ldots``, ``e-7`` → ``\\times 10^{-7}``)."""
    m = re.match(r"^(.*?)[eE]([+-]?\d+)$", text)
    if m:
        return num(m.group(1)) + r"\times 10^{" + str(int(m.group(2))) + "}"
    if text.endswith("…"):
        return text[:-1] + r"{\scriptstyle\ldots}"
    return text


def node_latex(
    name: str, labels: dict[str, str] | None = None, titles: dict[str, str] | None = None
) -> str:
    """A named node of a symbolic trace, rows and columns counted from 1: the article's
    symbol's entry (``(H_{1})_{3,1}``), else its step's title (``(\\text{centred
    rows})_{3,6}``); the node's own name only where the caller gives neither (node names
    asked for)."""
    m = re.match(r"^(.*)\[(\d+),(\d+)\]$", name)
    if not m:
        return tt(name)
    at = f"{int(m.group(2)) + 1},{int(m.group(3)) + 1}"
    label = (labels or {}).get(m.group(1), "")
    from symtf.renderers.labels import entry_math, is_math

    if label and is_math(label):
        return entry_math(label, at)
    title = (titles or {}).get(m.group(1))
    if title:
        return rf"\left(\text{{{escape(title)}}}\right)_{{{at}}}"
    return tt(m.group(1)) + "_{" + f"{m.group(2)},{m.group(3)}" + "}"
