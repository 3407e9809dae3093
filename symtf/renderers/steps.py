"""Which steps a page shows, and what the article calls them.

Both the LaTeX notes and the HTML page lay out a trace step by step. A reader
wants the article's own names (``A_1``, ``logit math``) rather than internal
node names (``l0.h0.pattern``), and a teacher often wants a few steps, not a
55-page document. This module answers both questions from the report alone.
"""

from __future__ import annotations

import difflib
import fnmatch
from collections.abc import Sequence
from typing import TYPE_CHECKING

from symtf.errors import SpecError

if TYPE_CHECKING:
    from symtf.checking.report import DerivationReport
    from symtf.trace import Trace


def labels_by_step(report: DerivationReport) -> dict[str, list[str]]:
    """Step name → the labels of the article's claims on it, in file order."""
    out: dict[str, list[str]] = {}
    for r in report.results:
        if r.claim.step is not None:
            out.setdefault(r.claim.step, [])
            if r.claim.label not in out[r.claim.step]:
                out[r.claim.step].append(r.claim.label)
    return out


def article_names(report: DerivationReport) -> dict[str, str]:
    """Step name → one name the article uses for the whole step.

    A claim covers the whole step when it selects no row, column, entry or
    reduction (``A_1`` printed in full); such a claim's label names the step.
    """
    out: dict[str, str] = {}
    for r in report.results:
        c = r.claim
        if c.step is None or c.step in out or c.expression is not None:
            continue
        whole = c.index is None and c.row is None and c.col is None and c.reduce is None
        if whole and getattr(c, "rank", None) is None:
            out[c.step] = c.label
    return out


def parse_patterns(pattern: str | None) -> list[str]:
    """``"A_1, l0.h0.*"`` → ``["A_1", "l0.h0.*"]`` (empty when no pattern)."""
    if pattern is None:
        return []
    parts = [p.strip() for p in pattern.split(",")]
    if not all(parts):
        raise SpecError(f"--steps: expected comma-separated patterns, found {pattern!r}")
    return parts


def select(
    trace: Trace,
    pattern: str | None,
    labels: dict[str, list[str]] | None = None,
) -> list[str]:
    """The steps matching ``pattern``, in trace order.

    A pattern is a comma-separated list of shell-style globs (``*``, ``?``,
    ``[...]``), each matched against a step's node name, its title and the
    labels of the article's claims on it. ``None`` selects every step.

    Args:
        trace: The trace to select from.
        pattern: For example ``"A_1,logits"`` or ``"l0.h0.*"``.
        labels: Step name → article labels (see :func:`labels_by_step`).

    Raises:
        SpecError: When a pattern matches no step (with the closest names).
    """
    names = list(trace)
    parts = parse_patterns(pattern)
    if not parts:
        return names
    labels = labels or {}
    chosen: set[str] = set()
    for part in parts:
        hits = [n for n in names if _matches(part, n, trace[n].title, labels.get(n, ()))]
        if not hits:
            known = names + [lab for ls in labels.values() for lab in ls]
            close = difflib.get_close_matches(part, known, n=3)
            hint = f"; did you mean {', '.join(close)}?" if close else ""
            raise SpecError(f"--steps: {part!r} matches no step name, title or claim label{hint}")
        chosen.update(hits)
    return [n for n in names if n in chosen]


def _matches(part: str, name: str, title: str, labels: Sequence[str]) -> bool:
    return any(fnmatch.fnmatchcase(x, part) for x in (name, title, *labels))
