"""What the search works on: a printing's numbers, the tensors known, what a printing became.

A printing's numbers are read as a claim reads them, on their grid (:class:`Target`,
:func:`parse_target`). The tensors the draft knows (:class:`Known`) are the article's
given inputs and the steps found so far; a printing found in one of them has a
:class:`Placement` there, and the search's verdict on each printing is an
:class:`Outcome`. A candidate step carries where it fits the printing and how many of its
entries it reproduces (:class:`_Candidate`); :func:`_certified` decides, from a certified
ball, whether an entry prints as shown, within one unit of it, or neither.
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass, field
from typing import Any

import numpy as np
from flint import arb

from symtf.backends.certify import compare_ball
from symtf.draft.article import Printing, ident
from symtf.draft.templates import Expr
from symtf.errors import SymtfError
from symtf.numbers import Printed, claim_grid, on_grid, parse_printed, rounding_interval
from symtf.tensor import Tensor

__all__ = [
    "DIFFERENCE",
    "INPUT_LABEL",
    "Known",
    "Outcome",
    "Placement",
    "Target",
    "parse_target",
    "stat_row",
]
#: Labels of what an article gives rather than computes.
INPUT_LABEL = re.compile(
    r"^(?:W|E|emb|embed|embedding|pos|PE|P|X_?emb|tokens?|vocab|weights?|b|bias|gamma|beta|"
    r"input|inputs|M|mask)(?:_|$|\^|\b)",
    re.I,
)


@dataclass(frozen=True)
class Target:
    """A printing's numbers on its grid: values, units, and where they are infinite."""

    printed: tuple[tuple[Printed, ...], ...]
    values: np.ndarray
    units: np.ndarray
    neg_inf: np.ndarray

    @property
    def shape(self) -> tuple[int, int]:
        """Rows × columns."""
        return self.values.shape

    @property
    def informative(self) -> int:
        """Entries that are not 0, ±1 or an infinity (what a coincidence rarely matches)."""
        v = self.values
        return int(np.sum(np.isfinite(v) & (np.abs(v) != 0) & (np.abs(v) != 1)))


def parse_target(rows: tuple[tuple[str, ...], ...], decimals: int | None = None) -> Target | None:
    """The printed strings read as a claim reads them (an integer among decimals takes their
    grid; ``decimals`` states the grid of a print that drops trailing zeros)."""
    try:
        cells = [[parse_printed(c, where="printed") for c in r] for r in rows]
    except (SymtfError, ValueError):
        return None
    stated = decimals is not None
    if decimals is None:
        decimals = claim_grid(cells)
    cells = [[on_grid(p, decimals, stated=stated) for p in r] for r in cells]
    vals = np.array(
        [[float(p.value) if p.value is not None else p.inf * math.inf for p in r] for r in cells]
    )
    units = np.array([[float(p.ulp) if not p.is_fraction else 0.0 for p in r] for r in cells])
    neg = np.array([[p.is_neg_inf for p in r] for r in cells])
    return Target(tuple(tuple(r) for r in cells), vals, units, neg)


def _fit(v: np.ndarray, t: Target) -> tuple[np.ndarray, np.ndarray]:
    """Per entry: a correct rounding (float pre-filter), and within one unit."""
    with np.errstate(invalid="ignore"):
        d = np.abs(v - t.values)
        slack = 1e-9 * np.maximum(1.0, np.abs(t.values))
        finite = np.isfinite(t.values)
        full = np.where(finite, d <= t.units / 2 + slack, (v == t.values))
        near = np.where(finite, d < t.units + slack, False)
    return full, near & ~full


@dataclass
class Known:
    """A tensor the draft knows: given by the article, or a step found by the search.

    Attributes:
        key: Its identity (names are chosen when the draft is written).
        value: Float64 midpoints of its certified values (2-D).
        ball: Its certified values (a Tensor of balls).
        expr: The step, or ``None`` for a given tensor.
        labels: Article labels naming it, first the one that introduced it.
        aliases: Names the article's equations may use for it.
        lineage: Aliases of everything it is computed from.
        line: The article line that introduced it.
        rows: For a given tensor, its entries as printed.
        rounded: For a given tensor, whether its entries are rounded prints.
        matched: What the search matched (for the draft's comment).
    """

    key: int
    value: np.ndarray
    ball: Tensor
    expr: Expr | None = None
    labels: list[str] = field(default_factory=list)
    aliases: set[str] = field(default_factory=set)
    lineage: set[str] = field(default_factory=set)
    line: int = 0
    rows: tuple[tuple[str, ...], ...] = ()
    rounded: bool = False
    matched: str = ""
    #: For a given tensor, whether its entries are numpy's prints of float32 values (each
    #: pins its float32 value, or nearly): its ball holds those values.
    float32_print: bool = False
    #: A name the draft must keep (a notebook's variable).
    fixed: str | None = None
    #: For an array literal: its entries as written and its own (N-D) shape.
    flat: tuple[str, ...] = ()
    nd_shape: tuple[int, ...] = ()

    @property
    def shape(self) -> tuple[int, int]:
        """Rows × columns."""
        return self.value.shape

    @property
    def matrix(self) -> bool:
        """Whether its value is 2-D (the search builds candidates on 2-D tensors only)."""
        return len(self.ball.shape) == 2


@dataclass(frozen=True)
class Placement:
    """Where a printing's numbers sit in a known tensor (as a claim writes it)."""

    known: int
    row: int | None = None
    col: int | None = None
    index: tuple[int, int] | None = None


@dataclass
class Outcome:
    """What the search made of one printing.

    ``status``: ``mapped`` (a claim at ``placement``), ``given`` (it defines a given
    tensor), ``unmapped`` (no single step explains it: ``candidates`` are the best
    tried) or ``covered`` (a run holding it was mapped or given).
    """

    printing: Printing
    status: str
    placement: Placement | None = None
    note: str = ""
    candidates: tuple[Expr, ...] = ()
    also: tuple[Placement, ...] = ()  # one printed number stated of several entries
    feeds: bool = False  # the printed version later steps read (a value written by hand)


@dataclass(frozen=True)
class _Candidate:
    expr: Expr
    tier: int
    rank: tuple[Any, ...]
    place: str  # whole | row | tcol | col
    where: int  # the row/column of the known candidate, for row/col places
    value: np.ndarray
    full: int
    slip: int
    #: Found on the article's printed values of these earlier steps (a replay), if any.
    replayed: str = ""
    #: Printed entries it does not reproduce within one unit, and the evidence, in bits, of
    #: the ones it does (see :func:`_entry_bits`).
    off: int = 0
    bits: float = 0.0


def _names(label: str) -> set[str]:
    """The names a label may be written as in an equation (``W_Q^((1))`` → ``W_Q_1``)."""
    out = set()
    n = ident(label)
    if n:
        out.add(n)
        out.add(n.replace("_", ""))
    return out


def _product_alias(weight_labels: list[str]) -> set[str]:
    """``x·W_V^{(2)}`` is what an article calls ``V_2``: the names of a projection."""
    out = set()
    for label in weight_labels:
        m = re.match(r"^W_?\{?([A-Za-z]+)\}?(?:\^?\(*\{?\(?(\d+)\)?\}?\)*|_(\d+))?$", label.strip())
        if m:
            letter, k = m.group(1), m.group(2) or m.group(3)
            out.add(letter)
            if k:
                out.add(f"{letter}_{k}")
                out.add(f"{letter}{k}")
    return out


def _shape2(shape: tuple[int, ...]) -> tuple[int, int]:
    """The 2-D shape a tensor is matched as: a vector is one row, a scalar one entry."""
    if len(shape) == 2:
        return (shape[0], shape[1])
    if len(shape) == 1:
        return (1, shape[0])
    if not shape:
        return (1, 1)
    return (1, math.prod(shape))


def _mids(t: Tensor) -> np.ndarray:
    vals = []
    for x in t.data:
        if isinstance(x, arb):
            vals.append(float(x.mid()) if x.is_finite() else (-math.inf if x < 0 else math.inf))
        else:
            vals.append(float(x))
    return np.array(vals, dtype=float).reshape(_shape2(tuple(t.shape)))


def _certified(x: Any, p: Printed) -> str | None:
    """``full`` if the ball is certified to print as ``p``, ``slip`` if within one unit, else None."""
    if p.value is None:
        if isinstance(x, arb) and not x.is_finite() and ((x < 0) == p.is_neg_inf):
            return "full"
        return None
    if not isinstance(x, arb) or not x.is_finite():
        return None
    try:
        iv = rounding_interval(p)
    except (ValueError, ArithmeticError):
        return None
    lo, hi = compare_ball(x, iv.lo), compare_ball(x, iv.hi)
    if lo is not None and hi is not None and lo >= 0 and hi <= 0:
        return "full"
    u = p.ulp
    below, above = compare_ball(x, p.value - u), compare_ball(x, p.value + u)
    if below is not None and above is not None and below > 0 and above < 0:
        return "slip"
    return None


#: A heading that names a difference of other columns.
DIFFERENCE = re.compile(r"\b(?:diff|difference|differences|delta)\b|Δ", re.IGNORECASE)

#: A row of a table of named statistics: ``"Hello": mean=0.25, std=0.364``.
_STAT_ROW = re.compile(
    r"\s*(?:\"[^\"]*\"|'[^']*'|[\w ]{1,30}?)\s*:\s*"
    r"(?P<pairs>[A-Za-zμσ²_]+\s*=\s*[-−]?\d+(?:\.\d+)?"
    r"(?:\s*,\s*[A-Za-zμσ²_]+\s*=\s*[-−]?\d+(?:\.\d+)?)*)\s*"
)
_STAT_PAIR = re.compile(r"([A-Za-zμσ²_]+)\s*=\s*([-−]?\d+(?:\.\d+)?)")


def stat_row(context: str) -> list[tuple[str, str]] | None:
    """The ``(name, value)`` pairs of a row of named statistics, or None."""
    m = _STAT_ROW.fullmatch(context)
    if m is None:
        return None
    return [(a, b.replace("−", "-")) for a, b in _STAT_PAIR.findall(m.group("pairs"))]
