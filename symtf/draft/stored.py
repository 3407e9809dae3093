"""Results written again as whole numbers: ``[0, 2, 3, 1]`` under the lines that worked
out ``x' = 0.795``, ``y' = 2.0898``, ``x' = 3.88``, ``y' = 1.39`` (an integer array stores
them so).

A list of integers restates such lines only when its entries are, in order, the single
results of the displayed lines right before it (the last ones of its cell, none skipped,
all within :data:`WINDOW` lines), each entry its line's result rounded or truncated toward
zero (a one-hot ``[1, 0, 0]`` after probabilities 0.2, 0.7, 0.1 is no such list), and at
least one result is not a whole number itself (else the list repeats the results as
written, which the digit-for-digit rules read). Then each entry is checked as its line's
result printed to no decimals: a truncation instead of a rounding shows as such.

Nothing here computes: the results are compared as the decimals the article prints.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from decimal import ROUND_DOWN, ROUND_HALF_EVEN, Decimal, InvalidOperation
from typing import Any

__all__ = ["WINDOW", "whole_prints"]

#: Lines before the list within which the lines it restates stand.
WINDOW = 40
#: The fewest entries (fewer whole numbers equal such results by chance).
MIN_ENTRIES = 4

_WHOLE = re.compile(r"^-?\d+$")


def _decimal(text: str) -> Decimal | None:
    try:
        return Decimal(text.replace("−", "-").strip())
    except InvalidOperation:
        return None


def _kept(r: Decimal) -> set[Decimal]:
    """The whole numbers a result is stored as: rounded, or truncated toward zero."""
    return {r.to_integral_value(rounding=ROUND_HALF_EVEN), r.to_integral_value(rounding=ROUND_DOWN)}


def whole_prints(
    values: Sequence[str], displays: Sequence[Any], cell: Any, first_line: int
) -> list[Any] | None:
    """The displayed lines whose results ``values`` restate as whole numbers, one per entry
    in order; None if the list is no such restatement (see the module's rule)."""
    if len(values) < MIN_ENTRIES or not all(_WHOLE.match(v.strip()) for v in values):
        return None
    before = sorted(
        (
            d
            for d in displays
            if d.cell == cell
            and len(d.rows) == 1
            and len(d.rows[0]) == 1
            and d.places
            and 0 < first_line - d.places[0].line <= WINDOW
        ),
        key=lambda d: (d.places[0].line, d.places[0].column or 0, d.key),
    )
    # one line per printed result: a chain ``a = b = c`` has one display per link
    last: list[Any] = []
    for d in before:
        if last and last[-1].places[0] == d.places[0]:
            continue
        last.append(d)
    if len(last) < len(values):
        return None
    chosen = last[-len(values) :]
    results = [_decimal(d.rows[0][0]) for d in chosen]
    if any(r is None for r in results):
        return None
    whole = [Decimal(v.strip()) for v in values]
    if not all(r is not None and w in _kept(r) for w, r in zip(whole, results, strict=True)):
        return None
    if all(r is not None and r == r.to_integral_value() for r in results):
        return None
    return chosen
