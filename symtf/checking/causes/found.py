"""A cause found for an entry that is off, and the certified values and printed numbers
of a claim that every cause is tried against.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping
from typing import Any

from flint import arb

from symtf.checking import slips
from symtf.checking.evaluation import Evaluator
from symtf.checking.report import ClaimResult
from symtf.errors import SymtfError
from symtf.numbers import Printed

GOOD = ("exact", "rounded")

Index = tuple[int, ...]


@dataclasses.dataclass(frozen=True)
class Cause:
    """A cause for some off entries of one claim.

    Attributes:
        cause: The JSON ``cause`` (``sign-flip``, ``transposed-operand``, ``rounded-inputs`` …).
        entries: The claim's entries it explains (``None`` for a displayed line's value).
        text: The explanation, with only numbers that were computed.
        convention: The JSON ``convention`` (names of what was rewritten, if anything).
        extra: Further JSON fields.
    """

    cause: str
    entries: tuple[Index | None, ...]
    text: str
    convention: tuple[str, ...] = ()
    extra: Mapping[str, Any] = dataclasses.field(default_factory=dict)


def exact_balls(ev: Evaluator, step: str) -> slips.Exact:
    """The exact value of any entry of ``step`` as a 128-bit certified ball (cached), for
    :mod:`symtf.checking.slips`; ``None`` where it cannot be enclosed."""
    cache: dict[Index, arb | None] = {}

    def exact(idx: Index) -> arb | None:
        if idx not in cache:
            try:
                cache[idx] = ev.entry(step, *idx).ball(128)
            except (SymtfError, IndexError, TypeError):
                cache[idx] = None
        return cache[idx]

    return exact


def claim_printed(result: ClaimResult) -> dict[Index, Printed]:
    """The claim's own printed entries by index (the ones its checks were made for)."""
    out: dict[Index, Printed] = {}
    texts = [p for row in result.claim.printed for p in row]
    for c, p in zip(result.checks, texts, strict=False):
        if c.index is not None and p.text == c.printed:
            out[tuple(c.index)] = p
    return out
