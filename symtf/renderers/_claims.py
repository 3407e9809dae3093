"""What every machine-readable renderer says about a check: its kind and where it was printed."""

from __future__ import annotations

import re
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

from symtf.checking.report import Check, ClaimResult, DerivationReport, Report

#: The kinds of claim, as the JSON contract names them.
KINDS = ("number", "word", "tokens", "expression")


def kind(result: ClaimResult) -> str:
    """``number``, ``word`` (a ranked or next word), ``tokens`` (generated tokens or
    teacher forcing) or ``expression`` (displayed arithmetic)."""
    claim = result.claim
    if claim.assertion is not None:
        return "tokens"
    if claim.expression is not None:
        return "expression"
    if claim.word is not None:
        return "word"
    return "number"


@dataclass(frozen=True)
class Located:
    """One check with the derivation and claim it belongs to."""

    derivation: DerivationReport
    result: ClaimResult
    check: Check

    @property
    def file(self) -> str:
        """The derivation file, as it was named; for an article checked as it stands, the article."""
        return self.derivation.article or self.derivation.path

    position: int = 0  # which of the claim's checks, in order (the printed values' order)

    @property
    def line(self) -> int | None:
        """The line of the claim's ``[[claims]]`` header, if the file has one (for an article
        checked as it stands, the article line the number was printed on)."""
        if self.derivation.article is not None:
            return self.result.claim.source_line
        return self.result.claim.line

    @property
    def source_line(self) -> int | None:
        """The article line the number was printed on, when the claim records it."""
        return self.result.claim.source_line

    @property
    def printed_line(self) -> int | None:
        """The line this number was printed on, as closely as the file tells it.

        The line of its row when the rows of ``printed`` are on lines of their own,
        else the line of ``printed =``, else the claim's header line.
        """
        claim = self.result.claim
        if self.derivation.article is not None:
            return claim.source_line
        rows = claim.printed_lines
        if claim.printed and len(rows) == len(claim.printed):
            return rows[min(self.position // len(claim.printed[0]), len(rows) - 1)]
        return rows[0] if rows else claim.line


def located(report: Report) -> Iterator[Located]:
    """Every check of a report, in file order, with its derivation and claim."""
    for d in report.derivations:
        for r in d.results:
            for k, c in enumerate(r.checks):
                yield Located(d, r, c, k)


def where(c: Check) -> str:
    """``[i, j]`` for an entry of a step, empty otherwise."""
    return "" if c.index is None else f"[{c.index[0]}, {c.index[1]}]"


def one_line(c: Check) -> str:
    """The verdict on one printed number in a line: what was printed, what is right, why."""
    shown = f"printed {c.printed}"
    if c.exact is not None:
        shown += f", exact {c.exact}"
    if c.expected is not None and c.expected != c.printed:
        shown += f", correctly rounded {c.expected}"
    return f"{c.claim}{where(c)}: {c.verdict}: {shown}: {c.explanation}"


_LINE_SUFFIX = re.compile(r"\(line (\d+)\)$")


def error_line(message: str) -> int | None:
    """The line a bad-input message's first line ends with (``... (line 57)``), if any."""
    m = _LINE_SUFFIX.search(message.partition("\n")[0])
    return int(m.group(1)) if m else None


def unchecked_line(u: Any) -> str:
    """A printed claim an article's draft could not check, in a line: where, what, why.

    ``u`` is one entry of ``DerivationReport.unchecked``: a claim no step explains
    (label, size, note) or one the draft cannot read (label, text, reason).
    """
    if hasattr(u, "reason"):
        return f"{u.label}: {u.text[:80]}: {u.reason.splitlines()[0] if u.reason else ''}"
    return f"{u.label} ({u.size} number(s)): {u.note}"
