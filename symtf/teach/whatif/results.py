"""What a what-if run finds, as records: each followed output with its closed form, value,
partial derivatives and correct-rounding intervals, and each head's sharpness.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from fractions import Fraction

import sympy

from symtf.teach.whatif.symbols import Weight

#: Most symbols drawn (one column of panels each) in the plot.
MAX_SYMBOL_PANELS = 4
#: Most symbols for which correct-rounding intervals are searched (each the others held).
MAX_SET_SYMBOLS = 2


# ----------------------------------------------------------------------------- results


@dataclass
class Partial:
    """One followed entry against one symbol, the other symbols at the file's values.

    Attributes:
        weight: The symbol.
        derivative: Certified decimal of the partial derivative at the file's values.
        derivative_exact: The same, exact, when the closed form is short.
        intervals: Where the print is a correct rounding (see :func:`rounding_set`);
            searched for one or two symbols only.
        unresolved: Stretches the search could not settle.
        searched: Whether the interval search ran for this symbol.
        stopped: Why the search stopped early ("" when it ran to the end).
        contains_value: Whether the file's value lies inside one of the intervals.
        samples: ``(symbol value, output value)`` pairs for the plot.
    """

    weight: Weight
    derivative: str | None = None
    derivative_exact: sympy.Expr | None = None
    intervals: list[tuple[Fraction, Fraction, Fraction, Fraction]] = field(default_factory=list)
    unresolved: list[tuple[Fraction, Fraction]] = field(default_factory=list)
    searched: bool = False
    stopped: str = ""
    contains_value: bool | None = None
    samples: list[tuple[float, float]] = field(default_factory=list)


@dataclass
class Output:
    """One followed entry.

    The single-symbol fields (``derivative``, ``intervals``, …) read the first
    symbol's :class:`Partial`; ``partials`` holds one per symbol the entry depends on.
    """

    label: str
    step: str
    index: tuple[int, ...]
    printed: str | None
    depends: bool
    closed: sympy.Expr | None = None
    value: str | None = None
    partials: list[Partial] = field(default_factory=list)
    #: The printed value's rounding interval (the plot's band), as exact ends.
    band: tuple[Fraction, Fraction] | None = None

    def _first(self) -> Partial:
        return self.partials[0] if self.partials else Partial(Weight("", None, sympy.Dummy(), 0))

    @property
    def derivative(self) -> str | None:
        """The first symbol's certified derivative."""
        return self._first().derivative

    @property
    def derivative_exact(self) -> sympy.Expr | None:
        """The first symbol's exact derivative (when short)."""
        return self._first().derivative_exact

    @property
    def intervals(self) -> list[tuple[Fraction, Fraction, Fraction, Fraction]]:
        """The first symbol's correct-rounding intervals."""
        return self._first().intervals

    @property
    def unresolved(self) -> list[tuple[Fraction, Fraction]]:
        """The first symbol's unsettled stretches."""
        return self._first().unresolved

    @property
    def contains_value(self) -> bool | None:
        """Whether the first symbol's intervals hold the file's value."""
        return self._first().contains_value

    @property
    def samples(self) -> list[tuple[float, float]]:
        """The first symbol's plot samples."""
        return self._first().samples


@dataclass
class Sharpness:
    """One head's attention scores at the file's values, for the sharpness plot.

    Attributes:
        head: ``l0.h1``.
        divisor: The file's score divisor (√d_k unless set), exact.
        scores: Rows of ``QKᵀ`` (before the divisor) as floats, ``-inf`` where masked.
    """

    head: str
    divisor: sympy.Expr
    scores: list[list[float]]


@dataclass
class WhatIf:
    """The result of :func:`whatif`."""

    path: str
    title: str
    weights: list[Weight]
    lo: Fraction
    hi: Fraction
    outputs: list[Output]
    plots: list[str]
    #: Search range per symbol name (the ``--range`` of each).
    ranges: dict[str, tuple[Fraction, Fraction]] = field(default_factory=dict)
    #: Entries chosen but not reached before the ``--timeout`` budget ran out.
    not_reached: list[tuple[str, tuple[int, ...]]] = field(default_factory=list)
    #: (label, index, symbol) of interval searches the ``--timeout`` budget cut short.
    cut_short: list[tuple[str, tuple[int, ...], str]] = field(default_factory=list)
    #: Why the run stopped early ("" when everything finished).
    stopped: str = ""
    sharpness: list[Sharpness] = field(default_factory=list)
    method: str = (
        "certified subdivision with forward-mode interval derivatives (python-flint arb): a cell "
        "whose value enclosure excludes the boundary holds no root; a monotone cell whose exact "
        "ends differ in sign holds exactly one, narrowed by bisection on exact-point evaluations"
    )

    @property
    def weight(self) -> Weight:
        """The first symbol (the only one, for a single ``--symbol`` entry)."""
        return self.weights[0]

    def range_of(self, w: Weight) -> tuple[Fraction, Fraction]:
        """The search and plot range of one symbol."""
        return self.ranges.get(str(w.symbol), (self.lo, self.hi))

    @property
    def complete(self) -> bool:
        """Whether the ``--timeout`` budget left every entry and search finished."""
        return not self.not_reached and not self.cut_short

    @property
    def searched(self) -> bool:
        """Whether correct-rounding intervals were searched (one or two symbols)."""
        return len(self.weights) <= MAX_SET_SYMBOLS
