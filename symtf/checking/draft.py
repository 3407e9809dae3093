"""Check what can be checked in a draft derivation, and say what is left to map.

A draft (``draft = true``, written by ``symtf extract``) holds claims whose
step is ``"?"``. :func:`check_draft` checks every other claim as
:func:`symtf.checking.compare.check` does — displayed arithmetic first of all — and
lists the unmapped claims, most valuable first (the ones with the most printed
numbers), each with the places of the trace its numbers fit
(:func:`symtf.suggest.suggest`).
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass

from symtf.backends import BallBackend
from symtf.checking.compare import check
from symtf.checking.locate import Suggestion, suggest
from symtf.checking.report import FAILING, DerivationReport
from symtf.errors import ModelError, ShapeError, Undecided
from symtf.graph.pipeline import run
from symtf.spec import Claim, Derivation

__all__ = ["DraftReport", "Unmapped", "check_draft"]

#: Precision, in bits, of the trace that suggestions are read from.
SUGGEST_PREC = 128


@dataclass(frozen=True)
class Unmapped:
    """A claim still to map, with where its numbers fit."""

    claim: Claim
    suggestions: tuple[Suggestion, ...]

    @property
    def size(self) -> int:
        """How many printed numbers mapping it would check."""
        return sum(len(r) for r in self.claim.printed)


@dataclass(frozen=True)
class DraftReport:
    """The verdicts on what is mapped, and the list of what is not."""

    report: DerivationReport
    unmapped: tuple[Unmapped, ...]

    @property
    def failed(self) -> bool:
        """Whether a checked printed number is off."""
        return any(c.verdict in FAILING for c in self.report.checks)


def check_draft(derivation: Derivation) -> DraftReport:
    """Check a draft's mapped claims and suggest steps for the others.

    Args:
        derivation: Any derivation; one with no ``step = "?"`` claims is checked in full.
    """
    mapped = tuple(c for c in derivation.claims if not c.unmapped)
    todo = [c for c in derivation.claims if c.unmapped]
    report = check(dataclasses.replace(derivation, claims=mapped, drafted=derivation.claims))
    trace = None
    if todo:
        try:
            with BallBackend(SUGGEST_PREC) as xp:
                trace = run(derivation, xp)
        except (Undecided, ModelError, ShapeError):
            trace = None
    unmapped = tuple(
        Unmapped(c, tuple(suggest(c, trace)) if trace is not None else ()) for c in todo
    )
    order = sorted(unmapped, key=lambda u: (-u.size, u.claim.source_line or 0))
    return DraftReport(report, tuple(order))
