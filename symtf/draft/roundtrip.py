"""The error of a round trip an article works in prose: a value scaled by a factor,
rounded, and divided by the same factor again::

    the value 0.3 would be scaled to `0.3*127 = 38.1`. Through rounding, we get 38.
    If we reverse this, we get `38/127=0.2992` – we have a quantization error of 0.0008

The error is the value less what comes back (``0.3 - 38/127``), or what comes back less
the value when it came back larger: the difference of two numbers the article wrote, on
the lines that work them out.

Taken so only when the number is written as an ``error of`` (``error is``, ``error =``)
that number, after two displayed lines of its cell within :data:`WINDOW` lines before it
(the number's own line included, left of it): the last one a quotient ``b/k`` and an
earlier one a product ``a*k`` by the same written positive factor ``k``. Nothing here
computes (which of ``a`` and ``b/k`` is the larger is read from ``a·k`` against ``b``):
the claim's expression is checked as any other.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from decimal import Decimal, InvalidOperation
from typing import Any

__all__ = ["RoundTrip", "round_trip_error"]

#: Lines before the number within which the two displayed lines stand.
WINDOW = 3

_NUMBER = r"-?\d+(?:\.\d+)?"
_FACTOR = r"\d+(?:\.\d+)?"
_PRODUCT = re.compile(rf"^\s*({_NUMBER})\s*(?:\*|×|·|\\times|\\cdot)\s*({_FACTOR})\s*$")
_QUOTIENT = re.compile(rf"^\s*({_NUMBER})\s*/\s*({_FACTOR})\s*$")


@dataclass(frozen=True)
class RoundTrip:
    """The expression of a round trip's error, and the lines that worked it out."""

    expression: str
    forward: int
    back: int


def round_trip_error(item: Any, displays: Any, value: str, at: Any) -> RoundTrip | None:
    """The round trip whose error ``value`` (at place ``at``) is, or None (see the module)."""
    context = (getattr(item, "context", "") or "").replace("−", "-")
    said = r"\berrors?\s*(?:of|is|=|:)\s*(?:about\s+|approximately\s+|~\s*|≈\s*)?"
    if not re.search(said + re.escape(value) + r"(?![\d.])", context):
        return None
    before = sorted(
        (
            d
            for d in displays
            if d.cell == item.cell
            and d.places
            and len(d.rows) == 1
            and len(d.rows[0]) == 1
            and 0 <= at.line - d.places[0].line <= WINDOW
            and (d.places[0].line, d.places[0].column or 0) < (at.line, at.column or 0)
        ),
        key=lambda d: (d.places[0].line, d.places[0].column or 0),
    )
    if not before:
        return None
    back = _QUOTIENT.match(before[-1].latex)
    if back is None:
        return None
    returned, factor = back.group(1), back.group(2)
    for d in reversed(before[:-1]):
        forward = _PRODUCT.match(d.latex)
        if forward is None or forward.group(2) != factor:
            continue
        start = forward.group(1)
        try:
            larger = Decimal(start) * Decimal(factor) >= Decimal(returned)
        except InvalidOperation:
            return None
        expression = (
            f"{start} - {returned}/{factor}" if larger else f"{returned}/{factor} - {start}"
        )
        return RoundTrip(expression, d.places[0].line, before[-1].places[0].line)
    return None
