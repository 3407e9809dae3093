"""A literal matched to the exact value it stands for in the line's lineage: an entry of
the step the line computes or of its inputs, read along a row or found in an index of the
trace's entries by their printed roundings.
"""

from __future__ import annotations

import bisect
import math
from dataclasses import dataclass
from fractions import Fraction
from typing import Any

import sympy

from symtf.backends.certify import PRECISIONS, to_fmpq
from symtf.backends.exact import infinite_sign
from symtf.checking.displayed.rows import Row, negated_literal, value_entries
from symtf.errors import ExpressionError, Undecided
from symtf.language import expr as sx
from symtf.numbers import Printed, rounding_interval
from symtf.spec import Claim


def read_along(
    parsed: sx.Expression,
    rows: list[Row],
    trace: Any,
    lineage: dict[str, int],
    replace: dict[int, Any],
    sources: dict[str, str],
) -> tuple[dict[int, Any], dict[str, str]] | None:
    """The literals read as entries (rows first, then single numbers) of ``lineage``'s steps.

    ``None`` when no further literal is read.
    """
    more, more_sources = dict(replace), dict(sources)
    for row in rows:
        if any(lit.pos in more for lit in row.literals):
            continue
        if not any("." in lit.text for lit in row.literals):
            continue  # [2, 2, 1], like the integer 2, stands for itself
        hit = _row_match(row, trace, lineage)
        if hit is not None:
            name, i, values = hit
            for lit, sign, e in zip(row.literals, row.signs, values, strict=True):
                more[lit.pos] = sign * e
            more_sources[row.key.replace(",", ", ")] = _row_ref(trace, name, i)
    for lit in parsed.literals:
        if lit.pos in more or "." not in lit.text:
            continue
        found = _trace_match(lit, parsed.text, trace, lineage)
        if found is not None:
            name, (i, j), value = found
            more[lit.pos] = value
            more_sources[lit.text] = _entry_ref(trace, name, i, j)
    return (more, more_sources) if len(more) > len(replace) else None


def _entry_ref(trace: Any, name: str, i: int, j: int) -> str:
    true = trace.true_shape(name)
    if true is not None and len(true) <= 1:
        return name if not true else f"{name}[{j}]"
    return f"{name}[{i}, {j}]"


def _row_ref(trace: Any, name: str, i: int) -> str:
    true = trace.true_shape(name)
    return name if true is not None and len(true) == 1 else f"{name}[{i}]"


def _row_match(row: Row, trace: Any, lineage: dict[str, int]) -> tuple[str, int, list[Any]] | None:
    """A row of a lineage step whose every entry prints as the row's signed literals (the
    nearest step first): its name, row and entries."""
    for name in sorted(lineage, key=lambda n: lineage[n]):
        v = trace.value(name)
        if not isinstance(v, sympy.MatrixBase) or v.cols != len(row.literals):
            continue
        for i in range(v.rows):
            if all(
                _prints_as(v[i, j], lit, sign, trace)
                for j, (lit, sign) in enumerate(zip(row.literals, row.signs, strict=True))
            ):
                return name, i, [v[i, j] for j in range(v.cols)]
    return None


def _prints_as(e: Any, lit: sx.Literal, sign: int, trace: Any) -> bool:
    if infinite_sign(e) or "e" in lit.text.lower():
        return False
    from symtf.checking.slips import prints_as

    decimals = len(lit.text.partition(".")[2])
    try:
        b = trace.backend.ball(e, PRECISIONS[0])
    except (Undecided, TypeError):
        return False
    return prints_as(b, Printed(lit.text, Fraction(lit.text) * sign, decimals))


def anchored_values(
    parsed: sx.Expression,
    rows: list[Row],
    trace: Any,
    replace: dict[int, Any],
    sources: dict[str, str],
    resolve: Any,
) -> tuple[dict[int, Any], dict[str, str]] | None:
    """The reading along the lineage of the step one of whose entries the line equals.

    Tried for the steps whose inputs hold an entry or a row that one of the line's
    literals prints, in trace order: the first step whose entry the line then equals
    exactly (a guide on balls, as :func:`computes`) is the step the line computes.
    """
    if resolve is None:
        return None
    touched: set[str] = set()
    for lit in parsed.literals:
        if lit.pos not in replace and "." in lit.text:
            touched.update(name for name, *_ in matches(lit, parsed.text, trace))
    if not touched:
        return None
    xp = trace.backend
    for step in trace:
        lineage = lineage_of(step, trace)
        if not touched & set(lineage):
            continue
        found = read_along(parsed, rows, trace, lineage, replace, sources)
        v = trace.value(step)
        if found is None or not isinstance(v, sympy.MatrixBase):
            continue
        try:
            first = value_entries(parsed.evaluate(resolve, found[0]))[0]
            line = xp.ball(first, PRECISIONS[0])
        except (ExpressionError, Undecided, TypeError):
            continue
        balls = _index(trace).balls
        for i in range(v.rows):
            for j in range(v.cols):
                b = balls.get((step, (i, j)))
                if (
                    b is not None
                    and b.overlaps(line)
                    and computes(parsed, resolve, found[0], v[i, j], trace)
                ):
                    return found
    return None


def computes(
    parsed: sx.Expression, resolve: Any, replace: dict[int, Any], entry: Any, trace: Any
) -> bool:
    """Whether the line, with these literals replaced, equals the step entry (first value).

    Decided on balls of the difference at 128 and 256 bits: a guide to which reading
    the line is, never a verdict (the verdict is then certified on that reading).
    """
    if resolve is None:
        return False
    try:
        value = parsed.evaluate(resolve, replace)
    except ExpressionError:
        return False
    first = value_entries(value)[0]
    xp = trace.backend
    for prec in PRECISIONS[:2]:
        try:
            b = xp.ball(first - entry, prec)
        except (Undecided, TypeError):
            return False
        if not b.contains(0):
            return False
    return True


def result_entries(claim: Claim, trace: Any) -> list[tuple[str, tuple[int, int], Any, Any]]:
    """Trace entries the line's first printed value is a rounding of (candidates for its step)."""
    if not claim.printed or claim.printed[0][0].is_infinite or claim.printed[0][0].is_fraction:
        return []
    return _entries_in(rounding_interval(claim.printed[0][0]), trace)


def lineage_of(step: str, trace: Any) -> dict[str, int]:
    """The steps a literal of a line computing ``step`` may stand for, by distance.

    The step's inputs are at distance 1, the inputs of its worked pieces
    (``l0.ln1.centered`` for ``l0.ln1``) at distance 2. A literal in
    ``0.241*1.1 + 0.285*1.2 = 0.607`` is then read as an input of the step printed
    as 0.607 (``l0.h0.v``), never as an equal number elsewhere in the model.
    """
    dist: dict[str, int] = {}
    for i in trace[step].inputs:
        if i in trace:
            dist[i] = 1
    for i in list(dist):
        if i.startswith(step + "."):
            for k in trace[i].inputs:
                if k in trace and k != step:
                    dist.setdefault(k, 2)
    return dist


def _trace_match(
    lit: sx.Literal, text: str, trace: Any, lineage: dict[str, int]
) -> tuple[str, tuple[int, int], Any] | None:
    """The entry of the line's lineage whose printed rounding is this literal (sign from the text).

    Among several, the nearest step wins, then the first in trace order.
    """
    hits = [h for h in matches(lit, text, trace) if h[0] in lineage]
    if not hits:
        return None
    name, ij, e, _ = min(hits, key=lambda h: lineage[h[0]])
    return name, ij, e


_Entry = tuple[str, tuple[int, int], Any, Any]


@dataclass(frozen=True)
class _Index:
    """Every finite numeric entry of a trace with its 128-bit ball, found three ways.

    Attributes:
        entries: ``(step, (i, j), exact value, ball)`` in trace order.
        mids: The balls' float midpoints, ascending (a guide to the entries near a number).
        order: The place in :attr:`entries` of each of :attr:`mids`.
        balls: Each entry's ball by ``(step, (i, j))``.
    """

    entries: list[_Entry]
    mids: list[float]
    order: list[int]
    balls: dict[tuple[str, tuple[int, int]], Any]


def _index(trace: Any) -> _Index:
    """The trace's :class:`_Index` (made once per trace)."""
    cached: _Index | None = getattr(trace, "_symtf_index", None)
    if cached is None:
        xp = trace.backend
        out: list[_Entry] = []
        for name in trace:
            v = trace.value(name)
            if not isinstance(v, sympy.MatrixBase):
                continue
            for i in range(v.rows):
                for j in range(v.cols):
                    e = v[i, j]
                    if infinite_sign(e):  # a masked score
                        continue
                    try:
                        out.append((name, (i, j), e, xp.ball(e, PRECISIONS[0])))
                    except (Undecided, TypeError):
                        continue
        order = sorted(range(len(out)), key=lambda k: _mid(out[k][3]))
        balls = {(name, ij): b for name, ij, _, b in out}
        cached = _Index(out, [_mid(out[k][3]) for k in order], order, balls)
        trace._symtf_index = cached  # the trace is read-only: a safe cache
    return cached


def _entries_of(trace: Any) -> list[_Entry]:
    """Every finite numeric entry of a trace with its 128-bit ball (computed once per trace)."""
    return _index(trace).entries


def _mid(b: Any) -> float:
    """A ball's midpoint as a float (±inf for one beyond floats: never inside a printed
    number's rounding interval)."""
    try:
        return float(b.mid())
    except (OverflowError, ValueError):
        return math.inf


def matches(lit: sx.Literal, text: str, trace: Any) -> list[tuple[str, tuple[int, int], Any, Any]]:
    """Every trace entry whose printed rounding is this literal, in trace order (a literal
    under a unary minus prints a negative entry)."""
    negative = negated_literal(lit, text)
    decimals = len(lit.text.partition(".")[2])
    if "e" in lit.text.lower():
        return []
    try:
        value = Fraction(lit.text)
    except ValueError:  # not a plain decimal literal: it stands for nothing in the trace
        return []
    iv = rounding_interval(Printed(lit.text, -value if negative else value, decimals))
    return [(name, ij, -e if negative else e, b) for name, ij, e, b in _entries_in(iv, trace)]


def _entries_in(iv: Any, trace: Any) -> list[tuple[str, tuple[int, int], Any, Any]]:
    """Every trace entry certainly inside the interval ``iv`` (its ends excluded), in order.

    The float midpoints only narrow the search to the entries near ``iv`` (with a margin
    far wider than any float rounding); each entry is then decided on its ball.
    """
    index = _index(trace)
    mids, order = index.mids, index.order
    lo, hi = to_fmpq(iv.lo), to_fmpq(iv.hi)  # once per interval, not once per entry
    flo, fhi = float(iv.lo), float(iv.hi)
    margin = 1e-9 * max(abs(flo), abs(fhi)) + 1e-300
    start = bisect.bisect_left(mids, flo - margin)
    stop = bisect.bisect_right(mids, fhi + margin)
    out = []
    for k in sorted(order[start:stop]):  # back in trace order
        name, ij, e, b = index.entries[k]
        if b > lo and b < hi:  # certified: the whole ball inside the open interval
            out.append((name, ij, e, b))
    return out
