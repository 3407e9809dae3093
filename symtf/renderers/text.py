"""Plain-text report for people (its layout may change; use JSON for tools)."""

from __future__ import annotations

from typing import Any

from symtf.checking.report import Check, ClaimResult, DerivationReport, Report
from symtf.renderers._claims import located
from symtf.renderers._wording import depends_words, symbolic_detail
from symtf.visible import line as _safe

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


def claim_lines(r: ClaimResult, width: int = 28, *, article: bool = False) -> list[str]:
    """One line for the claim, then one per entry that is not right.

    For an article checked as it stands, each claim starts with the article line
    it was printed on.
    """
    what = _safe(r.claim.step if r.claim.step is not None else r.claim.expression or "")
    if article:
        what = f"line {r.claim.source_line}" if r.claim.source_line else what
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
        lines.append(f"        {_where(c):<8} {_entry_text(c)}")
    return lines


def _entry_text(c: Check) -> str:
    """A number that is not right: its exact value and correct rounding, or what it depends on."""
    if c.verdict == "symbolic" and c.extra.get("as_displayed"):
        return f"printed {_safe(c.printed)}: {_safe(c.explanation)}"
    if c.verdict == "symbolic":
        return f"printed {_safe(c.printed)}, {depends_words(c)}: {_safe(symbolic_detail(c))}"
    return (
        f"printed {_safe(c.printed)}, exact {_safe(c.exact or '?')}, "
        f"correctly rounded {_safe(c.expected or '?')}: {_safe(c.explanation)}"
    )


def derivation_lines(d: DerivationReport, *, quiet: bool = False) -> list[str]:
    """The report of one derivation file, or of an article checked as it stands.

    ``quiet``: only the claims that are not right (an article keeps its line list).
    """
    if d.article is not None:
        lines = [f"{_safe(d.article)} — {_safe(d.title)} (derivation inferred from the article)"]
        lines.extend(article_lines(d))
    else:
        lines = [f"{_safe(d.path)} — {_safe(d.title)}"]
        for r in d.results:
            if not quiet or r.verdict not in ("exact", "rounded"):
                lines.extend(claim_lines(r))
    lines.append(f"  {coverage_text(d)}: {_summary(d.counts)}")
    lines.extend(cascade_lines(d))
    if d.article is not None:
        lines.extend(unchecked_lines(d))
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


def coverage_text(d: DerivationReport) -> str:
    """``"486 of 496 printed numbers checked, 10 not checked"`` for an article, always;
    ``"486 printed numbers"`` for a derivation file (its every claim gets a verdict)."""
    if d.article is None:
        return f"{d.checked_count} printed numbers"
    given = f" ({d.given} more are inputs the article gives)" if d.given else ""
    return (
        f"{d.checked_count} of {d.printed_count} printed numbers checked, "
        f"{d.unchecked_count} not checked{given}"
    )


def coverage_problem(d: DerivationReport, report: Report) -> str:
    """What is wrong with an article's share of checked numbers: fewer than
    ``--require-checked`` asks for (it fails), or fewer than half (a warning)."""
    share = (
        f"{d.checked_count} of {d.printed_count} printed numbers checked "
        f"({d.checked_percent:.0f}%), {d.unchecked_count} not checked"
    )
    name = d.article or d.path
    if not d.printed_count:
        rule = "fails --require-checked" if report.require_checked is not None else "a warning"
        return f"{name}: no printed number was read ({rule}: a post whose numbers symtf cannot read is not checked)"
    if report.require_checked is not None:
        return (
            f"{name}: {share}: fewer than the {report.require_checked:g}% --require-checked "
            "asks for (the report lists each number not checked and why)"
        )
    return (
        f"{name}: {share}: fewer than half; the report lists each number not checked and "
        "why (--require-checked PERCENT makes this fail)"
    )


def article_lines(d: DerivationReport, width: int = 24) -> list[str]:
    """An article checked as it stands: one line per article line, then the numbers that are off.

    Each number sits on its own line: a matrix or a displayed chain spread over several
    lines is reported on each of them.
    """
    order = {"wrong": 0, "undecided": 1, "slip": 2, "symbolic": 3, "rounded": 4, "exact": 5}
    by_line: dict[int, list[tuple[ClaimResult, Check]]] = {}
    for x in located(Report((d,))):
        by_line.setdefault(x.source_line or 0, []).append((x.result, x.check))
    out = []
    for line in sorted(by_line):
        entries = by_line[line]
        checks = [c for _, c in entries]
        worst = min((c.verdict for c in checks), key=order.__getitem__, default="exact")
        counts: dict[str, int] = {}
        for c in checks:
            counts[c.verdict] = counts.get(c.verdict, 0) + 1
        label = _safe(entries[0][0].claim.label)
        label = label if len(label) <= width else label[: width - 1] + "…"
        where = f"line {line}" if line else "—"
        head = f"  {_MARK[worst]:<5} {where:<10} {label:<{width}} "
        head += (
            f"{_safe(checks[0].printed)}: {checks[0].verdict}"
            if len(checks) == 1
            else f"{len(checks)} numbers: {_summary(counts)}"
        )
        out.append(head)
        for r, c in entries:
            if c.verdict in ("exact", "rounded"):
                continue
            what = (
                _safe(r.claim.expression)
                if r.claim.expression
                else f"{_safe(r.claim.label)}{_where(c)}"
            )
            out.append(f"        {what}: {_entry_text(c)}")
    return out


def cascade_lines(d: DerivationReport) -> list[str]:
    """The off numbers that inherit an earlier one, grouped under the number they start at.

    One line per root: where the chain first went off, its printed value, and the later
    numbers that carry it forward (an article's by their lines), so one mistake does not
    read as many.
    """
    followers: dict[tuple[str, tuple[int, ...] | None], list[Check]] = {}
    for c in d.checks:
        root = c.extra.get("root")
        if c.extra.get("cause") == "inherited" and root:
            key = (root["claim"], tuple(root["index"]) if root.get("index") else None)
            followers.setdefault(key, []).append(c)
    if not followers:
        return []
    at = {(c.claim, tuple(c.index) if c.index else None): c for c in d.checks}
    lines_of = {r.claim.label: r.claim.source_line for r in d.results}

    def name(claim: str, index: tuple[int, ...] | None) -> str:
        line = lines_of.get(claim) if d.article is not None else None
        if line:
            return f"line {line}"
        return _safe(claim) + ("" if index is None else f"[{', '.join(map(str, index))}]")

    n = sum(len(v) for v in followers.values())
    off = sum(1 for c in d.checks if c.verdict in ("slip", "wrong"))
    out = [
        f"  {n} of the {off} numbers that are off carry forward an earlier number that is off "
        "(inherited):"
    ]
    for (claim, index), later in followers.items():
        first = at.get((claim, index))
        printed = f" ({_safe(first.printed)}, {first.verdict})" if first is not None else ""
        names = list(
            dict.fromkeys(name(c.claim, tuple(c.index) if c.index else None) for c in later)
        )
        out.append(f"    {name(claim, index)}{printed} → {', '.join(names)}")
    return out


def _first_line(u: Any) -> int:
    """The line of a claim's first number where the reader placed it (a row of a matrix
    printed over several lines is on its own line), else the claim's line: the same line
    as the JSON report's ``source_line``."""
    places = getattr(u, "places", ()) or ()
    return int(places[0].line) if places else int(u.line)


def unchecked_lines(d: DerivationReport) -> list[str]:
    """What an article's draft could not check: claims no step explains, lines it cannot read."""
    inputs = list(d.inputs)
    unmapped = [u for u in d.unchecked if not hasattr(u, "reason")]
    unread = [u for u in d.unchecked if hasattr(u, "reason")]
    out = []
    if unmapped:
        n = sum(u.size for u in unmapped)
        out.append(
            f"  not checked: {n} printed number(s) in {len(unmapped)} claim(s) no step explains"
            ' (`symtf draft` writes them with step = "?" to map by hand):'
        )
        for u in unmapped:
            out.append(
                f"    line {_first_line(u)}: {_safe(u.label)} ({u.size} number(s)): {_safe(u.note)}"
            )
    if unread:
        out.append(f"  not read: {len(unread)} claim(s):")
        for u in unread:
            reason = _safe(u.reason.splitlines()[0])
            out.append(f"    line {u.line}: {_safe(u.text[:80])}: {reason}")
    if inputs:
        n = sum(u.size for u in inputs)
        out.append(
            f"  inputs: {n} printed number(s) in {len(inputs)} table(s) and constant(s) the "
            "article states (the derivation starts from them)"
        )
    return out


def render(report: Report, *, quiet: bool = False) -> str:
    """The whole report as text.

    Args:
        report: The report.
        quiet: Only the derivations and claims with a number that is not right,
            then the summary (``symtf check --quiet``).
    """
    lines: list[str] = []
    for d in report.derivations:
        if quiet and all(c.verdict in ("exact", "rounded") for c in d.checks) and not d.unchecked:
            continue
        lines.extend(derivation_lines(d, quiet=quiet))
        lines.append("")
    total: dict[str, int] = {}
    for d in report.derivations:
        for k, v in d.counts.items():
            total[k] = total.get(k, 0) + v
    bad = total.get("slip", 0) + total.get("wrong", 0)
    open_ = total.get("symbolic", 0) + total.get("undecided", 0)
    decided = total.get("exact", 0) + total.get("rounded", 0)
    unchecked = report.unchecked
    if not report.derivations:
        verdict = "no derivation file to check"
    elif bad:
        verdict = f"{bad} printed number(s) are off"
    elif not decided:
        verdict = "no printed number could be decided" if open_ else "no printed number checked"
    elif open_:
        verdict = f"the decided numbers check out; {open_} not decided (symbolic or undecided)"
    elif unchecked:
        verdict = "the checked numbers check out"
    else:
        verdict = "all printed numbers check out"
    if unchecked:  # never "all check out" when some were not checked
        verdict += f"; {unchecked} printed number(s) not checked"
    lines.append(f"{len(report.derivations)} derivation(s): {_summary(total)} — {verdict}")
    for d in report.too_few_checked:
        lines.append(_safe(coverage_problem(d, report)))
    if report.errors:
        names = ", ".join(e.path for e in report.errors)
        lines.append(f"{len(report.errors)} file(s) could not be checked: {names}")
    tomls = [p for p in report.skipped if p.lower().endswith(".toml")]
    others = [p for p in report.skipped if not p.lower().endswith(".toml")]
    for group, why in (
        (tomls, "other TOML file(s) skipped (no [[claims]])"),
        (others, "file(s) skipped (not included by [tool.symtf])"),
    ):
        if group:
            names = ", ".join(_safe(p) for p in group[:5]) + (", …" if len(group) > 5 else "")
            lines.append(f"{len(group)} {why}: {names}")
    return "\n".join(lines) + "\n"
