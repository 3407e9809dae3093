"""What a check found: the verdict on each printed number, per claim, per file, per run.

The result types of :func:`symtf.checking.compare.check` and the verdict classes. They hold
values; they compute none (``symtf check --help`` defines the verdict classes).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from symtf.spec import Claim
from symtf.trace import Trace

VERDICTS = ("exact", "rounded", "slip", "wrong", "symbolic", "undecided")
#: Verdicts that make ``symtf check`` exit 1.
FAILING = ("slip", "wrong")
#: Verdicts that decide nothing: ``symtf check`` exits 1 on them unless ``--allow-undecided``.
NOT_DECIDED = ("symbolic", "undecided")


@dataclass(frozen=True)
class Check:
    """The verdict on one printed number.

    Attributes:
        claim: The claim's label.
        step: Canonical step, or ``None`` for displayed arithmetic.
        index: Entry of the step, or ``None`` for a scalar or reduced claim.
        printed: As printed.
        expected: Correct rounding at the printed precision (``None`` if undecided).
        exact: Certified decimal of the exact value (at least 15 significant digits).
        verdict: One of :data:`VERDICTS`.
        explanation: Why, in a sentence.
        value: The exact value as SymPy (for LaTeX); not part of the JSON contract.
        extra: Further JSON fields (e.g. the readings of an expression claim).
    """

    claim: str
    step: str | None
    index: tuple[int, ...] | None
    printed: str
    expected: str | None
    exact: str | None
    verdict: str
    explanation: str
    value: Any = None
    extra: dict[str, Any] = field(default_factory=dict)

    def __repr__(self) -> str:
        from symtf.summary import check_summary

        return check_summary(self)


@dataclass(frozen=True)
class ClaimResult:
    """All checks of one claim."""

    claim: Claim
    checks: tuple[Check, ...]

    @property
    def verdict(self) -> str:
        """The worst verdict among the claim's entries."""
        order = {"wrong": 0, "undecided": 1, "slip": 2, "symbolic": 3, "rounded": 4, "exact": 5}
        return min((c.verdict for c in self.checks), key=order.__getitem__, default="exact")

    def __repr__(self) -> str:
        from symtf.summary import claim_summary

        return claim_summary(self)


@dataclass(frozen=True)
class DerivationReport:
    """The checks of one derivation file."""

    path: str
    title: str
    results: tuple[ClaimResult, ...]
    trace: Trace | None = None
    seconds: float | None = None  # wall-clock time of the check, when a caller measured it
    #: The article checked as it stands (its claims' lines are then the article's lines).
    article: str | None = None
    #: For an article: what the draft could not check (symtf.draft.Unmapped and Unread).
    unchecked: tuple[Any, ...] = ()
    #: Labels of the claims the ``--timeout`` budget left unchecked (a partial report).
    not_reached: tuple[str, ...] = ()

    @property
    def checks(self) -> list[Check]:
        """Every check, in file order."""
        return [c for r in self.results for c in r.checks]

    @property
    def counts(self) -> dict[str, int]:
        """How many checks have each verdict."""
        counts = dict.fromkeys(VERDICTS, 0)
        for c in self.checks:
            counts[c.verdict] += 1
        return counts

    def __repr__(self) -> str:
        from symtf.summary import derivation_summary

        return derivation_summary(self)


@dataclass(frozen=True)
class FileError:
    """A derivation file that could not be checked (bad input: exit code 2).

    Attributes:
        path: The file as named on the command line.
        error: The message: file, key (and line), what was expected and what was found.
    """

    path: str
    error: str


@dataclass(frozen=True)
class Report:
    """The checks of several derivation files, and the files that could not be checked.

    Attributes:
        derivations: One report per derivation file checked.
        errors: The files that could not be checked.
        skipped: TOML files a folder search found that are not derivations (no claims).
    """

    derivations: tuple[DerivationReport, ...]
    errors: tuple[FileError, ...] = ()
    skipped: tuple[str, ...] = ()

    @property
    def failed(self) -> bool:
        """Whether any printed number is a slip or wrong."""
        return any(c.verdict in FAILING for d in self.derivations for c in d.checks)

    @property
    def undecided(self) -> int:
        """How many printed numbers are ``symbolic`` or ``undecided`` (checked by nobody)."""
        return sum(1 for d in self.derivations for c in d.checks if c.verdict in NOT_DECIDED)

    def __repr__(self) -> str:
        from symtf.summary import report_summary

        return report_summary(self)
