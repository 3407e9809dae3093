"""Markdown for notebooks and previews that show Markdown but not HTML.

A table per derivation (claim, step, printed, verdict) and a list of the
numbers that are off with their corrections. Maths is left to ``$…$`` only
where a formula is shown (traces); verdicts are words, so the text reads the
same where Markdown is not rendered.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from symtf.renderers._claims import unchecked_line
from symtf.summary import check_line, counts_text

if TYPE_CHECKING:
    from symtf.checking.report import DerivationReport, Report
    from symtf.trace import Trace

_GOOD = ("exact", "rounded")
_MARK = {
    "exact": "✓",
    "rounded": "✓",
    "slip": "± **slip**",
    "wrong": "✗ **wrong**",
    "undecided": "?",
}


def cell(text: str) -> str:
    """Text made safe for a Markdown table cell (pipes, newlines, emphasis markers)."""
    out = text.replace("\\", "\\\\").replace("|", "\\|").replace("\n", " ")
    for ch in "*_`[]<>$":
        out = out.replace(ch, "\\" + ch)
    return out


def derivation_markdown(d: DerivationReport) -> str:
    """One derivation: title, counts, the off numbers, and a table of claims."""
    checks = d.checks
    lines = [f"**{cell(d.title)}** — `{cell(d.path)}`", ""]
    if d.article is None:
        lines.append(f"{len(checks)} printed numbers: {counts_text(checks)}")
    else:  # an article: how many of its printed numbers were checked, always
        lines.append(
            f"{d.checked_count} of {d.printed_count} printed numbers checked, "
            f"{d.unchecked_count} not checked: {counts_text(checks)}"
        )
    off = [c for c in checks if c.verdict not in _GOOD]
    if off:
        lines.append("")
        lines.append("Numbers that are off:")
        lines.extend(f"- {cell(check_line(c))}" for c in off)
    if d.unchecked:
        lines.append("")
        lines.append("Numbers not checked:")
        lines.extend(f"- line {u.line}: {cell(unchecked_line(u))}" for u in d.unchecked)
    lines += ["", "| claim | step | printed | verdict |", "|---|---|---|---|"]
    for r in d.results:
        what = r.claim.step if r.claim.step is not None else r.claim.expression or ""
        if len(r.checks) == 1:
            c = r.checks[0]
            printed = c.printed
            verdict = _MARK[c.verdict] + ("" if c.verdict in _GOOD else f" → {c.expected or '?'}")
            verdict += f" {c.verdict}" if c.verdict in _GOOD else ""
        else:
            printed = f"{len(r.checks)} numbers"
            verdict = _MARK[r.verdict] + " " + counts_text(r.checks)
        lines.append(f"| {cell(r.claim.label)} | {cell(what)} | {cell(printed)} | {verdict} |")
    return "\n".join(lines) + "\n"


def report_markdown(report: DerivationReport | Report) -> str:
    """A report (one or several derivations) as Markdown."""
    reports = getattr(report, "derivations", None)
    if reports is None:
        return derivation_markdown(report)  # type: ignore[arg-type]
    return "\n".join(derivation_markdown(d) for d in reports)


def trace_markdown(trace: Trace) -> str:
    """A trace as a table of steps: name, title, shape and formula (values are in the HTML view)."""
    lines = [f"{len(trace)} steps", "", "| step | what | shape | formula |", "|---|---|---|---|"]
    for name in trace:
        st = trace[name]
        shape = trace.shape(name)
        dims = f"{shape[0]}×{shape[1]}" if shape else ""
        # No raw < or > in the maths: a Markdown renderer would read them as HTML first.
        tex = st.formula.replace("|", r"\vert ").replace("<", r"\lt ").replace(">", r"\gt ")
        formula = f"${tex}$" if st.formula else ""
        code = name.replace("`", "'").replace("|", "\\|")
        lines.append(f"| `{code}` | {cell(st.title)} | {dims} | {formula} |")
    return "\n".join(lines) + "\n"
