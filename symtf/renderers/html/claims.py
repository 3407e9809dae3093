"""What the article printed, as HTML: each number coloured and named by its verdict, with
the exact value and the explanation on hover and in a ``<details>`` element; the
corrections; and the blanks of a student's sheet.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from symtf.checking.report import DerivationReport
from symtf.checking.wording import place
from symtf.renderers._wording import also_text as _also
from symtf.renderers._wording import (
    depends_words,
    once_each,
    printed_grid,
    sentence,
    short_decimal,
    symbolic_detail,
    where_in_step,
)
from symtf.renderers.html.maths import label_html, mathml
from symtf.renderers.html.style import GOOD, OPEN, VERDICT_WORDS, BlankKey, HtmlOptions, anchor, esc

if TYPE_CHECKING:
    from symtf.checking.report import Check, ClaimResult, DerivationReport


# ----------------------------------------------------------------------------- verdicts


def check_title(c: Check) -> str:
    """The hover text of one printed number: verdict, exact value, correct rounding, why."""
    parts = [f"printed {c.printed}", c.verdict]
    if c.exact is not None:
        parts.append(f"exact {c.exact}")
    if c.expected is not None and c.verdict not in GOOD:
        parts.append(f"correctly rounded {c.expected}")
    if c.explanation:
        parts.append(c.explanation)
    return " · ".join(parts)


def printed_cell(c: Check, *, blank: int | None = None) -> str:
    """One printed number, coloured by verdict, with the correction after a wrong one."""
    if blank is not None:
        return f'<span class="blank" title="blank {blank}">({blank})</span>'
    cls = f"v v-{c.verdict}"
    fix = ""
    if c.verdict not in GOOD and c.expected is not None and c.verdict not in OPEN:
        fix = f'<span class="fix">→ {esc(c.expected)}</span>'
    return f'<span class="{cls}" title="{esc(check_title(c))}">{esc(c.printed)}{fix}</span>'


def blank_key(c: Check) -> BlankKey:
    return (c.claim, c.index)


@dataclass
class Blanks:
    """Numbers blanks in page order, so a sheet and its key agree."""

    keys: frozenset[BlankKey]
    numbers: dict[BlankKey, int] = field(default_factory=dict)

    def number(self, c: Check) -> int | None:
        k = blank_key(c)
        if k not in self.keys:
            return None
        if k not in self.numbers:
            self.numbers[k] = len(self.numbers) + 1
        return self.numbers[k]


def _printed_grid(r: ClaimResult, blanks: Blanks) -> str:
    if len(r.checks) == 1:
        return printed_cell(r.checks[0], blank=blanks.number(r.checks[0]))
    grid = printed_grid(r)
    body = "".join(
        "<tr>"
        + "".join(f"<td>{printed_cell(c, blank=blanks.number(c))}</td>" for c in row)
        + "</tr>"
        for row in grid
    )
    return f'<div class="scroll"><table class="grid">{body}</table></div>'


def verdict_text(r: ClaimResult, *, hidden: bool = False) -> str:
    """The verdict of a claim in words (and colour): ``slip: correct value -2.048``."""
    if hidden:
        return '<span class="muted">to work out</span>'
    checks = r.checks
    cls = "verdict-ok" if r.verdict in GOOD else f"verdict-{r.verdict}"
    sym, _ = VERDICT_WORDS[r.verdict]
    if len(checks) == 1:
        c = checks[0]
        words = esc(_words(c))
        if c.verdict not in GOOD and c.expected is not None and c.verdict not in OPEN:
            words += f"; correct value <b>{esc(c.expected)}</b>"
        elif c.verdict == "rounded" and c.exact:
            words += f' <span class="muted">(exact {esc(short_decimal(c.exact, 12))})</span>'
        return f'<span class="{cls}">{sym} {words}</span>'
    from symtf.summary import counts_text

    text = f"{len(checks)} numbers: {esc(counts_text(checks))}"
    depends = sorted({s for c in checks for s in c.extra.get("depends_on") or ()})
    if depends:
        text += f" ({esc('depend on ' + ', '.join(depends))})"
    return f'<span class="{cls}">{sym} {text}</span>'


def _words(c: Check) -> str:
    """The verdict in words: ``depends on a`` for a value that depends on the file's symbols."""
    return depends_words(c) if c.verdict == "symbolic" else VERDICT_WORDS[c.verdict][1]


def _where(c: Check) -> str:
    """An entry's place, counted from 1 as a reader counts (``row 1, column 6``)."""
    return "" if c.index is None else place(c.index, None)


def entries_details(r: ClaimResult, blanks: Blanks | None = None) -> str:
    """A ``<details>`` table of every printed number of a claim: exact value, rounding, why."""
    rows = []
    for c in r.checks:
        if blanks is not None and blank_key(c) in blanks.keys:
            continue
        if c.verdict == "symbolic":  # no decimal, no rounding: what it depends on, and where
            detail = c.explanation if c.extra.get("as_displayed") else symbolic_detail(c)
            known = (
                f'<td colspan="2" class="verdict-symbolic">{esc(depends_words(c))}</td>'
                f"<td>{esc(detail)}</td>"
            )
        else:
            known = (
                f"<td>{esc(c.exact or '?')}</td><td>{esc(c.expected or '?')}</td>"
                f"<td>{esc(c.verdict)}: {esc(c.explanation)}</td>"
            )
        rows.append(f"<tr><td>{esc(_where(c))}</td><td>{printed_cell(c)}</td>{known}</tr>")
    if not rows:
        return ""
    return (
        "<details><summary>Exact values and explanations</summary>"
        '<div class="scroll"><table class="entries"><tr><th>entry</th><th>printed</th>'
        "<th>exact (certified)</th><th>correct rounding</th><th>verdict</th></tr>"
        + "".join(rows)
        + "</table></div></details>"
    )


def claims_block(
    results: Sequence[ClaimResult],
    opts: HtmlOptions,
    blanks: Blanks,
    names: dict[str, str] | None = None,
) -> str:
    """The article's printed values for one step: label, numbers, verdict, details."""
    from symtf.renderers.latex.expressions import expression_latex

    rows = []
    for r in results:
        cl = r.claim
        what = label_html(cl.label)
        if opts.node_names and cl.step is not None:
            what += f" <code>{esc(cl.step)}</code>"
        where = where_in_step(r)
        if where:
            what += f' <span class="muted">({esc(where)})</span>'
        printed = _printed_grid(r, blanks)
        if cl.expression is not None:
            printed = (
                f'<div class="scroll">{mathml(expression_latex(cl.expression, names))} ≈ </div>'
                + printed
            )
        hidden = any(blank_key(c) in blanks.keys for c in r.checks)
        rows.append(
            f'<tr><td class="label">{what}</td><td>{printed}</td>'
            f"<td>{verdict_text(r, hidden=hidden)}</td></tr>"
        )
        d = entries_details(r, blanks)
        if d:
            rows.append(f'<tr class="more"><td colspan="3">{d}</td></tr>')
    return (
        '<table class="claims"><tr class="head"><th>In the article</th><th>Printed</th><th>Verdict</th></tr>'
        + "".join(rows)
        + "</table>"
    )


def corrections_block(report: DerivationReport, opts: HtmlOptions | None = None) -> str:
    """Every printed number that is not right, with its correction, linked to its step."""
    opts = opts or HtmlOptions()
    items = []
    off = [
        (r, c)
        for r in report.results
        for c in r.checks
        # a value that depends on a symbol is not a correction
        if c.verdict not in GOOD
        and c.verdict != "symbolic"
        and (c.claim, c.index) not in opts.blanks
    ]
    for r, c, also in once_each(off):
        target = f' href="#{anchor(r.claim.step)}"' if r.claim.step else ""
        fix = (
            f", correct value <b>{esc(c.expected)}</b>"
            if c.expected is not None and c.verdict != "undecided"
            else ""
        )
        items.append(
            f'<li><a{target}><span class="label">{label_html(r.claim.label)}</span></a>'
            f"{esc(', ' + _where(c) if c.index is not None else '')}: printed {printed_cell(c)} — "
            f'<span class="verdict-{c.verdict}">{esc(VERDICT_WORDS[c.verdict][1])}</span>'
            f"{fix}, exact {esc(short_decimal(c.exact or '?', 16))}. {esc(sentence(c.explanation))}"
            + (f" {esc(_also(also))}" if also else "")
            + "</li>"
        )
    symbolic = sum(1 for c in report.checks if c.verdict == "symbolic")
    if not items and symbolic:
        return (
            '<p class="verdict-ok">✓ Every decided number checks out; '
            f'<span class="verdict-symbolic">{symbolic} depend on the file\'s symbols</span> '
            "(see their steps).</p>"
        )
    if not items:
        return '<p class="verdict-ok">✓ Every printed number checks out.</p>'
    return '<ul class="corrections">' + "".join(items) + "</ul>"
