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
#: Below this share of an article's printed numbers checked (percent), ``symtf check`` warns
#: on stderr when no ``--require-checked`` is set.
WARN_BELOW_PERCENT = 50.0


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
    #: For an article: how many of its printed numbers are inputs it gives (the draft's
    #: given tensors): read as printed, neither checked nor left unchecked.
    given: int = 0
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

    @property
    def checked_count(self) -> int:
        """How many printed numbers got a verdict (one check each)."""
        return len(self.checks)

    @property
    def unchecked_count(self) -> int:
        """How many printed numbers an article's draft read but could not check.

        Each entry of ``unchecked`` says how many numbers it holds (``size``); one that
        does not holds one.
        """
        return sum(int(getattr(u, "size", 1)) for u in self.unchecked)

    @property
    def printed_count(self) -> int:
        """How many printed numbers were read: checked or not."""
        return self.checked_count + self.unchecked_count

    @property
    def checked_percent(self) -> float:
        """The share of the printed numbers that got a verdict, in percent (0 when none was read)."""
        n = self.printed_count
        return 100.0 * self.checked_count / n if n else 0.0

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
        skipped: Files a search found, or a hook named, that are not checked: TOML files
            without claims, articles the project's ``[tool.symtf]`` does not include.
        require_checked: ``--require-checked``: the least share of an article's printed
            numbers that must get a verdict, in percent (``None``: no such rule).
    """

    derivations: tuple[DerivationReport, ...]
    errors: tuple[FileError, ...] = ()
    skipped: tuple[str, ...] = ()
    require_checked: float | None = None

    @property
    def too_few_checked(self) -> tuple[DerivationReport, ...]:
        """The articles with a smaller share of their printed numbers checked than required."""
        if self.require_checked is None:
            return ()
        return tuple(
            d
            for d in self.derivations
            if d.article is not None and d.checked_percent < self.require_checked
        )

    @property
    def few_checked(self) -> tuple[DerivationReport, ...]:
        """Without ``require_checked``: the articles with fewer than
        :data:`WARN_BELOW_PERCENT` of their printed numbers checked (a warning, not a failure)."""
        if self.require_checked is not None:
            return ()
        return tuple(
            d
            for d in self.derivations
            if d.article is not None and d.checked_percent < WARN_BELOW_PERCENT
        )

    @property
    def unchecked(self) -> int:
        """How many printed numbers of the articles were read but not checked."""
        return sum(d.unchecked_count for d in self.derivations)

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
