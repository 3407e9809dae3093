"""What a check may take from an earlier check of an edited derivation: the hooks.

:func:`symtf.checking.compare.check` and :func:`symtf.checking.diagnose.diagnose` call
these at a few points when they are given a :class:`Reuse`; they never decide what is
reusable themselves. :mod:`symtf.checking.incremental` implements it (this module only
names the hooks, so that checking and diagnosis import no module that imports them).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any, Protocol

from symtf.checking.evaluation import Evaluator
from symtf.checking.report import ClaimResult, DerivationReport
from symtf.numbers import Printed
from symtf.spec import Claim, Derivation

__all__ = ["Reuse", "Variants"]


class Variants(dict[tuple[str, str], Any]):
    """The diagnosis's cache of convention variants (``(switch, scope)`` -> evaluator, or
    ``None`` where the switch does not apply), with earlier evaluators of each variant
    that a new one may take unchanged nodes from (:class:`Evaluator`'s ``seeds``).

    Args:
        seeds: ``(switch, scope)`` -> evaluators of that variant of earlier derivations.
    """

    def __init__(self, seeds: Mapping[tuple[str, str], Iterable[Evaluator]] | None = None):
        super().__init__()
        self.seeds = {k: tuple(v) for k, v in (seeds or {}).items()}

    def seeds_of(self, key: tuple[str, str]) -> tuple[Evaluator, ...]:
        """The earlier evaluators of variant ``key``."""
        return self.seeds.get(key, ())


def seeds_of(cache: Mapping[tuple[str, str], Any], key: tuple[str, str]) -> tuple[Evaluator, ...]:
    """The seeds of variant ``key`` a cache holds (none but a :class:`Variants`' own)."""
    return cache.seeds_of(key) if isinstance(cache, Variants) else ()


class Reuse(Protocol):
    """The hooks of a check that reuses an earlier one (see :mod:`symtf.checking.incremental`).

    A check calls them in this order: :meth:`evaluator` once; for each claim, in order,
    :meth:`kept`, and :meth:`checked` when it checked the claim itself; :meth:`settled` with
    the verdicts before diagnosis; then, in the diagnosis, :meth:`variants`, :meth:`findings`
    and :meth:`found`.
    """

    def evaluator(self, derivation: Derivation) -> Evaluator:
        """The evaluator to check ``derivation`` with (it may hold traces computed before)."""
        ...

    def kept(self, claim: Claim, ev: Evaluator) -> tuple[ClaimResult, ...] | None:
        """The claim's earlier results, when the edit cannot have changed them, else ``None``.

        A claim gives one result, but a displayed line gives one more before it for each
        copy slip's literal (:mod:`symtf.checking.lineage`). Kept results are final up to
        diagnosis (the file's ``computed_in`` and ``rounded_inputs`` applied). When the
        claim is a displayed line, ``ev``'s memory of the lines checked so far is then set
        to what it was after that line.
        """
        ...

    def checked(self, claim: Claim, ev: Evaluator, results: int) -> None:
        """The check has just checked ``claim`` itself, giving the last ``results`` results
        (``ev`` holds what it remembered)."""
        ...

    def settled(self, report: DerivationReport) -> None:
        """Every claim's verdicts, before diagnosis."""
        ...

    def variants(self, derivation: Derivation, ev: Evaluator) -> dict[tuple[str, str], Any]:
        """The diagnosis's cache of convention variants (``(switch, scope)`` -> evaluator)."""
        ...

    def findings(
        self,
        replayed: Derivation,
        report: DerivationReport,
        printed: Mapping[str, Mapping[tuple[int, ...], Printed]],
        status: Mapping[tuple[Any, ...], tuple[str, str]],
    ) -> dict[str, dict[Any, Any]]:
        """Causes found before that still hold: claim label -> the diagnosis's own findings
        of its off step entries (before roots are followed), each a fresh copy."""
        ...

    def found(self, findings: Mapping[str, Mapping[Any, Any]]) -> None:
        """The causes the diagnosis found afresh, by claim label (before roots are followed)."""
        ...
