"""Plain-text report for people (its layout may change; use JSON for tools)."""

from __future__ import annotations

from symtf.checking.report import Check, ClaimResult, DerivationReport, Report
from symtf.renderers.safe import line as _safe

_MARK = {
    "exact": "ok",
    "rounded": "ok",
    "slip": "SLIP",
    "wrong": "WRONG",
    "symbolic": "SYM",
    "undecided": "??",
}


def _where(c: Check) -> str:
    return "" if c.index is None else f"[{', '.join(map(str, c.index))}]"


def _summary(counts: dict[str, int]) -> str:
    parts = [f"{n} {k}" for k, n in counts.items() if n]
    return ", ".join(parts) if parts else "nothing checked"


def claim_lines(r: ClaimResult, width: int = 28) -> list[str]:
    """One line for the claim, then one per entry that is not right."""
    what = _safe(r.claim.step if r.claim.step is not None else r.claim.expression or "")
    counts: dict[str, int] = {}
    for c in r.checks:
        counts[c.verdict] = counts.get(c.verdict, 0) + 1
    n = len(r.checks)
    label = _safe(r.claim.label)
    label = label if len(label) <= width else label[: width - 1] + "…"
    head = f"  {_MARK[r.verdict]:<5} {label:<{width}} {what:<22} "
    if n == 1:
        c = r.checks[0]
        head += f"{_safe(c.printed)}: {c.verdict}"
        if r.verdict in ("exact", "rounded") and c.extra.get("as_displayed"):
            head += f" — {_safe(c.explanation)}"
    else:
        head += f"{n} numbers: {_summary(counts)}"
    lines = [head]
    for c in r.checks:
        if c.verdict in ("exact", "rounded"):
            shown = c.extra.get("as_displayed")
            if n > 1 and shown and shown["verdict"] not in ("exact", "rounded"):
                lines.append(
                    f"        {_where(c):<8} note: as displayed it gives {_safe(shown['exact'])} "
                    f"({shown['verdict']}); the printed {_safe(c.printed)} needs the unrounded values"
                )
            continue
        lines.append(
            f"        {_where(c):<8} printed {_safe(c.printed)}, exact {_safe(c.exact or '?')}, "
            f"correctly rounded {_safe(c.expected or '?')}: {_safe(c.explanation)}"
        )
    return lines


def derivation_lines(d: DerivationReport) -> list[str]:
    """The report of one derivation file."""
    lines = [f"{_safe(d.path)} — {_safe(d.title)}"]
    for r in d.results:
        lines.extend(claim_lines(r))
    lines.append(f"  {sum(d.counts.values())} printed numbers: {_summary(d.counts)}")
    accepted: dict[str, int] = {}  # accepted only under computed_in / rounded_inputs
    for c in d.checks:
        by = c.extra.get("accepted_by")
        if by:
            accepted[by] = accepted.get(by, 0) + 1
    for by, n in accepted.items():
        lines.append(
            f"  {n} of them right only under the file's {by.replace('+', ' and ')} "
            "(the explanations give the certified ranges)"
        )
    return lines


def render(report: Report) -> str:
    """The whole report as text."""
    lines: list[str] = []
    for d in report.derivations:
        lines.extend(derivation_lines(d))
        lines.append("")
    total: dict[str, int] = {}
    for d in report.derivations:
        for k, v in d.counts.items():
            total[k] = total.get(k, 0) + v
    bad = total.get("slip", 0) + total.get("wrong", 0)
    open_ = total.get("symbolic", 0) + total.get("undecided", 0)
    decided = total.get("exact", 0) + total.get("rounded", 0)
    if bad:
        verdict = f"{bad} printed number(s) are off"
    elif open_ and not decided:
        verdict = "no printed number could be decided"
    elif open_:
        verdict = f"the decided numbers check out; {open_} not decided (symbolic or undecided)"
    else:
        verdict = "all printed numbers check out"
    lines.append(f"{len(report.derivations)} derivation(s): {_summary(total)} — {verdict}")
    if report.errors:
        names = ", ".join(e.path for e in report.errors)
        lines.append(f"{len(report.errors)} file(s) could not be checked: {names}")
    return "\n".join(lines) + "\n"
