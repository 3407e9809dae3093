"""Short summaries for ``repr()``: one line of counts, then only the numbers that are off.

A terminal, a debugger or a notebook without rich display shows ``repr()`` of
whatever a cell returns. A report can hold thousands of checks and a trace a
hundred exact matrices, so these summaries never list what is right and never
print a value in full: at most :data:`MAX_OFF` off numbers are named, each on
one line, and the rest are counted.

The objects these summaries describe call them from their own ``__repr__`` (a value
says what it is, as a dataclass's repr does): this module reads them by field alone and
imports nothing, so a report or a trace needs no renderer to describe itself.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Sequence
from typing import Any, Protocol

# Read by field only (duck-typed, the fields below), so that the objects these summaries
# describe can call them from their own ``__repr__`` without an import running the other way.


class Check(Protocol):
    """A checked number (:class:`symtf.checking.report.Check`)."""

    @property
    def claim(self) -> str: ...
    @property
    def index(self) -> tuple[int, ...] | None: ...
    @property
    def printed(self) -> str: ...
    @property
    def verdict(self) -> str: ...
    @property
    def exact(self) -> str | None: ...
    @property
    def expected(self) -> str | None: ...


class _Claim(Protocol):
    @property
    def label(self) -> str: ...
    @property
    def step(self) -> str | None: ...
    @property
    def expression(self) -> str | None: ...


class ClaimResult(Protocol):
    """A claim's checks (:class:`symtf.checking.report.ClaimResult`)."""

    @property
    def claim(self) -> _Claim: ...
    @property
    def checks(self) -> Sequence[Check]: ...
    @property
    def verdict(self) -> str: ...


class DerivationReport(Protocol):
    """One file's report (:class:`symtf.checking.report.DerivationReport`)."""

    @property
    def path(self) -> str: ...
    @property
    def title(self) -> str: ...
    @property
    def checks(self) -> Sequence[Check]: ...


class Report(Protocol):
    """Several files' reports (:class:`symtf.checking.report.Report`)."""

    @property
    def derivations(self) -> Sequence[DerivationReport]: ...


class Trace(Protocol):
    """A computation's steps (:class:`symtf.trace.Trace`)."""

    @property
    def backend(self) -> Any: ...
    def __iter__(self) -> Iterator[str]: ...
    def shape(self, name: str) -> tuple[int, ...] | None: ...


#: Off numbers named in a summary before the rest are only counted.
MAX_OFF = 8
#: Characters of a certified decimal shown in a one-line summary.
EXACT_CHARS = 18
#: Step names shown in a trace summary (first and last ones).
MAX_STEPS = 6

_GOOD = ("exact", "rounded")


def counts_text(checks: Iterable[Check]) -> str:
    """``"4 exact, 5 rounded"`` (verdicts in the order they first occur; empty → ``"nothing checked"``)."""
    counts: dict[str, int] = {}
    for c in checks:
        counts[c.verdict] = counts.get(c.verdict, 0) + 1
    return ", ".join(f"{n} {k}" for k, n in counts.items()) or "nothing checked"


def _short(s: str | None) -> str:
    if s is None:
        return "?"
    body = s.rstrip("…")
    if len(body) <= EXACT_CHARS:
        return s
    return body[:EXACT_CHARS] + "…"


def where(c: Check) -> str:
    """``"[0, 5]"`` or ``""`` for a scalar or reduced claim."""
    return "" if c.index is None else f"[{c.index[0]}, {c.index[1]}]"


def check_line(c: Check) -> str:
    """One check on one line: ``logit math[0, 5]: printed -2.049, slip; correct -2.048, exact -2.04837…``."""
    head = f"{c.claim}{where(c)}: printed {c.printed}, {c.verdict}"
    if c.verdict in _GOOD:
        return head + f" (exact {_short(c.exact)})"
    fix = f"; correct {c.expected}" if c.expected is not None else ""
    return head + fix + f", exact {_short(c.exact)}"


def _off_lines(checks: Sequence[Check], indent: str = "  ") -> list[str]:
    off = [c for c in checks if c.verdict not in _GOOD]
    lines = [indent + check_line(c) for c in off[:MAX_OFF]]
    if len(off) > MAX_OFF:
        lines.append(f"{indent}… and {len(off) - MAX_OFF} more off")
    return lines


def claim_summary(r: ClaimResult) -> str:
    """A claim result: its label, where it points, its counts, and its off entries."""
    what = r.claim.step if r.claim.step is not None else r.claim.expression or ""
    n = len(r.checks)
    head = f"<ClaimResult {r.claim.label!r} ({what}): {r.verdict}"
    head += f", {n} numbers: {counts_text(r.checks)}" if n != 1 else ""
    return "\n".join([head, *_off_lines(r.checks)]) + ">"


def derivation_summary(d: DerivationReport) -> str:
    """One derivation file: path, title, counts, and the off numbers."""
    checks = d.checks
    off = sum(1 for c in checks if c.verdict not in _GOOD)
    unchecked = int(getattr(d, "unchecked_count", 0))  # an article's numbers not checked
    head = (
        f"<DerivationReport {d.path} — {d.title}: {len(checks)} printed numbers, "
        f"{counts_text(checks)}"
        + (f"; {off} not right" if off else "; all checked right" if unchecked else "; all right")
        + (f"; {unchecked} not checked" if unchecked else "")
    )
    lines = _off_lines(checks)
    return "\n".join([head, *lines]) + ">"


def report_summary(report: Report) -> str:
    """Several derivation files: one line each with its counts and its off numbers."""
    all_checks = [c for d in report.derivations for c in d.checks]
    off = sum(1 for c in all_checks if c.verdict not in _GOOD)
    lines = [
        f"<Report of {len(report.derivations)} derivation(s): {len(all_checks)} printed numbers, "
        f"{counts_text(all_checks)}" + (f"; {off} not right" if off else "; all right")
    ]
    shown = 0
    for d in report.derivations:
        lines.append(f"  {d.path}: {counts_text(d.checks)}")
        for c in d.checks:
            if c.verdict in _GOOD:
                continue
            if shown < MAX_OFF:
                lines.append("    " + check_line(c))
            shown += 1
    if shown > MAX_OFF:
        lines.append(f"  … and {shown - MAX_OFF} more off")
    return "\n".join(lines) + ">"


def check_summary(c: Check) -> str:
    """One check."""
    return f"<Check {check_line(c)}>"


def trace_summary(trace: Trace) -> str:
    """A trace: how many steps, in which number system, the first and last step names."""
    names = list(trace)
    backend = type(trace.backend).__name__.removesuffix("Backend").lower() or "?"
    if len(names) <= MAX_STEPS:
        shown = ", ".join(names)
    else:
        k = MAX_STEPS // 2
        shown = ", ".join(names[:k]) + ", …, " + ", ".join(names[-k:])
    last = names[-1] if names else None
    shape = trace.shape(last) if last is not None else None
    tail = f"; {last} is {shape[0]}×{shape[1]}" if shape else ""
    return f"<Trace of {len(names)} steps ({backend}): {shown}{tail}>"


def derive_summary(result: Any) -> str:
    """A formula derivation's result (:class:`symtf.derive.core.Result`)."""
    sizes = [str(n) for n in result.sizes if n is not None]
    size = f" at n = {', '.join(sizes)}" if sizes else ""
    n = len(result.steps)
    if result.ok:
        proved = sum(1 for s in result.steps if s.proved)
        state = (
            f"all {n} steps verified symbolically and numerically{size}; "
            f"{proved} of {n} proved for every n"
        )
    else:
        bad = ", ".join(s.key for s in result.failures)
        state = f"{len(result.failures)} of {n} steps NOT verified{size}: {bad}"
        if result.at is not None and not result.at.ok:
            state += "; a property failed at the worked example"
    at = f"; evaluated at {result.at.ref}" if result.at is not None else ""
    return f"<derive {result.name} — {result.title}: {state}{at}>"


def derive_step_summary(step: Any) -> str:
    """One verified step of a formula derivation."""
    state = "verified" if step.ok else "NOT verified"
    return f"<derive step {step.key}: {step.plain} — {state}>"
