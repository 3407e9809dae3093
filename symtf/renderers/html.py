"""HTML rendering: a worked example as one self-contained page for readers.

The page needs no JavaScript and fetches nothing: the CSS is inline and the
mathematics is native MathML (converted from the same LaTeX the lecture notes
use, with :mod:`latex2mathml`). Every step shows its formula, the numbers
substituted and the exact result; under it, what the article printed, each
number coloured and named by its verdict, with the exact value and the
explanation on hover (``title``) and in a ``<details>`` element.

Like every renderer it only reads: verdicts, exact decimals and explanations
come from the :class:`~symtf.checking.report.DerivationReport`, values from its
:class:`~symtf.trace.Trace`.

Public entry points:

- :func:`render_html` — a whole page (``symtf html``).
- :func:`report_fragment` and :func:`trace_fragment` — an embeddable
  ``<div class="symtf">`` with its scoped style (Jupyter's ``_repr_html_``).
- Pieces to compose other pages (an exercise sheet, an answer key):
  :func:`mathml`, :func:`step_block`, :func:`claims_block`,
  :func:`corrections_block`, :data:`CSS` and :class:`HtmlOptions`.
  ``blanks`` hides chosen printed numbers and the results of the steps they
  sit on, leaving numbered blanks for a student.
"""

from __future__ import annotations

import html
import re
from collections.abc import Collection, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, cast

from symtf import visible
from symtf.checking.report import DerivationReport, Report
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

if TYPE_CHECKING:
    from symtf.checking.report import Check, ClaimResult, DerivationReport, Report
    from symtf.renderers.latex.steps import Context
    from symtf.spec import Derivation
    from symtf.trace import Step, Trace

#: A printed number to blank out: ``(claim label, index)``; index ``None`` for a scalar claim.
BlankKey = tuple[str, "tuple[int, ...] | None"]

_GOOD = ("exact", "rounded")
#: Verdict → (symbol, words shown beside it).
VERDICT_WORDS = {
    "exact": ("✓", "exact"),
    "rounded": ("✓", "correctly rounded"),
    "slip": ("±", "slip: less than one in the last digit off, but not a correct rounding"),
    "wrong": ("✗", "wrong"),
    "symbolic": ("ƒ", "depends on a symbol"),
    "undecided": ("?", "undecided"),
}
#: Verdicts that are neither right nor off: no correction is shown, no step is marked as off.
_OPEN = ("symbolic", "undecided")

CSS = """
.symtf{--ok:#1a7f37;--ok-bg:#e6f4ea;--slip:#9a5b00;--slip-bg:#fff4d6;--bad:#b42318;
--bad-bg:#fde8e7;--und:#555;--und-bg:#eee;--sym:#1f4e9e;--sym-bg:#e7eefb;--line:#d0d7de;--muted:#57606a;
font:16px/1.5 system-ui,-apple-system,"Segoe UI",Roboto,"DejaVu Sans",sans-serif;color:#1f2328;
max-width:60rem;margin:0 auto;padding:0 1rem 3rem;overflow-wrap:anywhere}
.symtf h1{font-size:1.6rem;line-height:1.25;margin:1.2rem 0 .3rem}
.symtf h2{font-size:1.3rem;border-bottom:1px solid var(--line);padding-bottom:.2rem;margin-top:2rem}
.symtf h3{font-size:1.05rem;margin:1.4rem 0 .3rem}
.symtf .muted,.symtf .source{color:var(--muted);font-size:.9rem}
.symtf code{font-family:"DejaVu Sans Mono",ui-monospace,monospace;font-size:.85em;
background:#f6f8fa;padding:0 .25em;border-radius:3px;color:var(--muted)}
.symtf .label{font-weight:600}
.symtf nav.toc{background:#f6f8fa;border:1px solid var(--line);border-radius:6px;padding:.5rem 1rem}
.symtf nav.toc ol{margin:.2rem 0;padding-left:1.3rem}
.symtf nav.toc a{text-decoration:none}
.symtf .eq{display:grid;grid-template-columns:max-content minmax(0,1fr);column-gap:.4em;
align-items:center;margin:.4rem 0}
.symtf .eq .lhs{text-align:right}
.symtf .scroll,.symtf .eq .rhs{overflow-x:auto;overflow-y:hidden;max-width:100%;padding:.15rem 0}
.symtf math{font-size:1.05em}
.symtf math[display=block]{display:block math;margin:0}
.symtf .v{display:inline-block;padding:0 .3em;border-radius:4px;font-variant-numeric:tabular-nums;
white-space:nowrap}
.symtf .v-exact,.symtf .v-rounded{background:var(--ok-bg);color:var(--ok)}
.symtf .v-slip{background:var(--slip-bg);color:var(--slip);font-weight:600}
.symtf .v-wrong{background:var(--bad-bg);color:var(--bad);font-weight:600;text-decoration:underline}
.symtf .v-undecided{background:var(--und-bg);color:var(--und)}
.symtf .v-symbolic{background:var(--sym-bg);color:var(--sym);font-style:italic}
.symtf .v .fix{color:#1f2328;font-weight:700;margin-left:.25em}
.symtf .blank{display:inline-block;min-width:4.5em;border-bottom:1.5px solid #1f2328;
color:var(--muted);font-size:.8em;text-align:center}
.symtf table{border-collapse:collapse;margin:.3rem 0}
.symtf table.claims{width:100%;table-layout:fixed}
.symtf table.claims th:first-child{width:28%}.symtf table.claims th:nth-child(3){width:30%}
.symtf table.model th{text-align:left;padding-right:1em;vertical-align:top}
.symtf table.claims th,.symtf table.claims td{border-top:1px solid var(--line);padding:.35rem .4rem;
vertical-align:top;text-align:left}
.symtf table.grid td{padding:.1rem .15rem;text-align:right}
.symtf .verdict-ok{color:var(--ok)}
.symtf .verdict-slip{color:var(--slip);font-weight:600}
.symtf .verdict-wrong{color:var(--bad);font-weight:600}
.symtf .verdict-undecided{color:var(--und)}
.symtf .verdict-symbolic{color:var(--sym)}
.symtf details{margin:.1rem 0 .3rem}
.symtf table.claims tr.more td{border-top:none;padding-top:0}
.symtf details summary{cursor:pointer;color:var(--muted);font-size:.9rem}
.symtf details.reveal>summary{color:var(--accent,#1a5fb4);font-weight:600}
.symtf table.entries{font-size:.85rem}
.symtf table.entries td,.symtf table.entries th{border-top:1px solid var(--line);padding:.2rem .4rem;
text-align:left;vertical-align:top}
.symtf .corrections li{margin:.3rem 0}
.symtf .legend span{margin-right:.8em}
.symtf .step{border-left:3px solid var(--line);padding-left:.8rem;margin:1rem 0}
.symtf .step.has-off{border-left-color:var(--bad)}
@media (max-width:40rem){.symtf{font-size:15px;padding:0 .6rem 2rem}
.symtf .eq{grid-template-columns:minmax(0,1fr)}.symtf .eq .lhs{text-align:left}
.symtf table.claims,.symtf table.claims>tbody,.symtf table.claims>tbody>tr,
.symtf table.claims>tbody>tr>td{display:block;width:auto}
.symtf table.claims>tbody>tr.head{display:none}
.symtf table.claims>tbody>tr>td{border-top:none;padding:.1rem .3rem}
.symtf table.claims>tbody>tr{border-top:1px solid var(--line);padding:.3rem 0}
.symtf table.claims>tbody>tr.more{border-top:none;padding-top:0}}
@media print{.symtf details{display:block}.symtf nav.toc{display:none}}
"""


@dataclass(frozen=True)
class HtmlOptions:
    """What the page shows.

    Attributes:
        steps: A ``--steps`` pattern (see :func:`symtf.renderers.steps.select`), or ``None``.
        node_names: Show internal node names (``l0.h0.pattern``) beside the article's labels.
        blanks: Printed numbers to replace by numbered blanks (``(label, index)``);
            the results of the steps they sit on are hidden too.
        decimals: Decimal places of values that are not short exact numbers.
        max_rows: Matrices with more rows are elided.
        max_cols: Matrices with more columns are elided.
        reveal: Step by step for a reader working along: each step shows its formula,
            and its numbers, result and verdicts open one step at a time (a
            ``<details>`` per step, no script); the list of numbers that are off is
            folded away too, so the page gives nothing away before it is asked.
    """

    steps: str | None = None
    node_names: bool = False
    blanks: frozenset[BlankKey] = field(default_factory=frozenset)
    decimals: int = 4
    max_rows: int = 8
    max_cols: int = 8
    reveal: bool = False


# ----------------------------------------------------------------------------- MathML


def label_html(label: str) -> str:
    """An article's label as HTML: its text escaped, its maths as MathML (the pieces
    :func:`symtf.renderers.labels.parts` reads)."""
    from symtf.renderers.labels import parts

    return "".join(mathml(p.text) if p.math else html.escape(p.text) for p in parts(label))


def mathml(tex: str, *, display: bool = False) -> str:
    r"""Math-mode LaTeX as native MathML (no ``xmlns``: HTML5 knows ``<math>``).

    The converter builds an element tree; this module writes that tree out
    itself (:func:`_serialize`), escaping every text and attribute value as it
    goes, so text from a derivation file (a vocabulary word ``</mtext><script>``)
    can only ever be text. LaTeX the converter cannot read is shown as text.

    Example:
        >>> mathml(r"\frac{1}{2}").startswith('<math display="inline">')
        True
        >>> mathml(r"\text{</mtext><b>}")
        '<math display="inline"><mrow><mtext>&lt;/mtext&gt;&lt;b&gt;</mtext></mrow></math>'
    """
    from latex2mathml.converter import convert_to_element

    mode = "block" if display else "inline"
    try:
        root = convert_to_element(_portable(tex), display=mode)
    except Exception:  # the converter's own errors are plain Exceptions: show the source
        return f'<math display="{mode}"><mtext>{_text(tex)}</mtext></math>'
    root.attrib.pop("xmlns", None)
    return _serialize(root)


#: Character references the converter writes into its tree's text (``&#x0003C;``).
_CHAR_REF = re.compile(r"&#(?:x([0-9A-Fa-f]{1,6})|([0-9]{1,7}));")
#: Element and attribute names as the converter writes them; anything else is dropped.
_NAME = re.compile(r"[A-Za-z][A-Za-z0-9_-]{0,40}\Z")


def _text(s: str) -> str:
    """Tree text as HTML: the converter's character references decoded, then all escaped."""

    def char(m: re.Match[str]) -> str:
        n = int(m[1], 16) if m[1] is not None else int(m[2])
        return chr(n) if 0 < n <= 0x10FFFF and not 0xD800 <= n <= 0xDFFF else ""

    decoded = _CHAR_REF.sub(char, s)
    # no control character in a page, and none that reorders or hides it (the one rule)
    return html.escape(visible.page(decoded), quote=True)


def _serialize(root: Any) -> str:
    """An element tree as markup, every text and attribute value escaped (no recursion)."""
    out: list[str] = []
    todo: list[tuple[Any, bool]] = [(root, False)]
    while todo:
        el, closing = todo.pop()
        tag = el.tag if isinstance(el.tag, str) and _NAME.match(el.tag) else "mrow"
        if closing:
            out.append(f"</{tag}>{_text(el.tail or '')}")
            continue
        attrs = "".join(
            f' {k}="{_text(str(v))}"' for k, v in el.attrib.items() if _NAME.match(str(k))
        )
        out.append(f"<{tag}{attrs}>{_text(el.text or '')}")
        todo.append((el, True))
        todo.extend((child, False) for child in reversed(list(el)))
    return "".join(out)


def _portable(tex: str) -> str:
    """Replace the notes' own macros with standard ones the converter knows."""
    tex = tex.replace(r"{\scriptstyle\ldots}", r"\ldots").replace(r"\phantom{=}\quad", r"\quad")
    # Each matrix in its own fenced group, so its brackets fit it and not its neighbour.
    for env, left, right in (("bmatrix", "[", "]"), ("pmatrix", "(", ")"), ("vmatrix", "|", "|")):
        tex = tex.replace(f"\\begin{{{env}}}", f"\\left{left}\\begin{{matrix}}")
        tex = tex.replace(f"\\end{{{env}}}", f"\\end{{matrix}}\\right{right}")
    tex = tex.replace(r"-\infty", r"{-\infty}")  # a sign, not a subtraction
    return re.sub(r"\\symtfwrong\{([^{}]*)\}", r"\1", tex)


def esc(text: str) -> str:
    """Text made safe for HTML content and attributes."""
    return html.escape(text, quote=True)


# ----------------------------------------------------------------------------- verdicts


def check_title(c: Check) -> str:
    """The hover text of one printed number: verdict, exact value, correct rounding, why."""
    parts = [f"printed {c.printed}", c.verdict]
    if c.exact is not None:
        parts.append(f"exact {c.exact}")
    if c.expected is not None and c.verdict not in _GOOD:
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
    if c.verdict not in _GOOD and c.expected is not None and c.verdict not in _OPEN:
        fix = f'<span class="fix">→ {esc(c.expected)}</span>'
    return f'<span class="{cls}" title="{esc(check_title(c))}">{esc(c.printed)}{fix}</span>'


def _key(c: Check) -> BlankKey:
    return (c.claim, c.index)


@dataclass
class _Blanks:
    """Numbers blanks in page order, so a sheet and its key agree."""

    keys: frozenset[BlankKey]
    numbers: dict[BlankKey, int] = field(default_factory=dict)

    def number(self, c: Check) -> int | None:
        k = _key(c)
        if k not in self.keys:
            return None
        if k not in self.numbers:
            self.numbers[k] = len(self.numbers) + 1
        return self.numbers[k]


def _printed_grid(r: ClaimResult, blanks: _Blanks) -> str:
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
    cls = "verdict-ok" if r.verdict in _GOOD else f"verdict-{r.verdict}"
    sym, _ = VERDICT_WORDS[r.verdict]
    if len(checks) == 1:
        c = checks[0]
        words = esc(_words(c))
        if c.verdict not in _GOOD and c.expected is not None and c.verdict not in _OPEN:
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


def entries_details(r: ClaimResult, blanks: _Blanks | None = None) -> str:
    """A ``<details>`` table of every printed number of a claim: exact value, rounding, why."""
    rows = []
    for c in r.checks:
        if blanks is not None and _key(c) in blanks.keys:
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
    blanks: _Blanks,
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
        hidden = any(_key(c) in blanks.keys for c in r.checks)
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
        if c.verdict not in _GOOD
        and c.verdict != "symbolic"
        and (c.claim, c.index) not in opts.blanks
    ]
    for r, c, also in once_each(off):
        target = f' href="#{_anchor(r.claim.step)}"' if r.claim.step else ""
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


# ----------------------------------------------------------------------------- steps


def _revealed(summary: str, inner: str) -> str:
    """``inner`` folded away behind ``summary`` (a fixed phrase of this module)."""
    return f'<details class="reveal"><summary>{esc(summary)}</summary>{inner}</details>'


def _anchor(name: str | None) -> str:
    return "step-" + re.sub(r"[^A-Za-z0-9_-]", "-", name or "")


def step_lines(ctx: Context, step: Step, *, hide_result: bool = False) -> list[tuple[str, str]]:
    """The LaTeX lines of a step: formula, numbers substituted, exact result.

    With ``hide_result`` the result is replaced by a question mark (a student's sheet).
    """
    from symtf.renderers.latex.matrices import visible_width
    from symtf.renderers.latex.numbers import BRK, MAX_LINE
    from symtf.renderers.latex.steps import _split_formula, _substitution, step_rows

    if not hide_result:
        rows = step_rows(ctx, step)
        if any(visible_width(right) > MAX_LINE for _, right, _ in rows):
            # as the notes do on a narrow page: a wide matrix in blocks of columns that
            # each fit the page, a wide input of the substituted line by its name
            rows = step_rows(ctx, step, broken=True)
        return [(left, right) for left, right, _ in rows]
    lhs, rhs = _split_formula(step.formula)
    lines: list[tuple[str, str]] = []
    first_left = lhs or rhs or ctx.step_name(step)
    if lhs:
        lines.append((lhs, "= " + rhs))
    sub = _substitution(ctx, step) if not isinstance(step.value, tuple) else None
    if sub is not None:
        lines.append(("" if lines else first_left, "= " + sub[0].replace(BRK, " ")))
    lines.append(("" if lines else first_left, r"= \text{?}"))
    return lines


def equations(lines: Sequence[tuple[str, str]]) -> str:
    """Aligned display lines (``left = right``) as MathML in a CSS grid that scrolls when wide."""
    out = []
    for left, right in lines:
        lhs = mathml(left, display=False) if left.strip() else ""
        rhs = mathml(right, display=False) if right.strip() else ""
        out.append(
            f'<div class="eq"><div class="lhs">{lhs}</div><div class="rhs">{rhs}</div></div>'
        )
    return "".join(out)


def step_block(
    ctx: Context,
    step: Step,
    results: Sequence[ClaimResult],
    shown: Sequence[ClaimResult],
    opts: HtmlOptions,
    blanks: _Blanks,
    labels: Sequence[str] = (),
) -> str:
    """One step: heading (title and the article's labels), equations, printed values."""
    from symtf.renderers.latex.names import heading_title

    title = heading_title(step.title or step.name)
    head = esc(title)
    if labels:
        head += " — " + ", ".join(f'<span class="label">{label_html(x)}</span>' for x in labels)
    if opts.node_names:
        head += f" <code>{esc(step.name)}</code>"
    every = [*results, *shown]
    hide = any(_key(c) in blanks.keys for r in every for c in r.checks)
    off = any(c.verdict not in (*_GOOD, "symbolic") for r in every for c in r.checks) and not hide
    lines = step_lines(ctx, step, hide_result=hide)
    table = claims_block([*results, *shown], opts, blanks, ctx.ref_names()) if every else ""
    # a reader working along first sees the formula, the off marker waits with the answer
    mark = " has-off" if off and not opts.reveal else ""
    out = [f'<section class="step{mark}" id="{_anchor(step.name)}"><h3>{head}</h3>']
    from symtf.renderers.latex.steps import _split_formula

    general = bool(_split_formula(step.formula)[0])  # the first line is the formula, no numbers
    if opts.reveal and general and len(lines) > 1:
        out += [
            equations(lines[:1]),
            _revealed("Work it out, then show the numbers", equations(lines[1:]) + table),
        ]
    elif opts.reveal:  # no general formula of its own: every line holds the answer
        out.append(_revealed("Work it out, then show the value", equations(lines) + table))
    else:
        out += [equations(lines), table]
    out.append("</section>")
    return "".join(out)


# ----------------------------------------------------------------------------- pages


def _summary_line(report: DerivationReport) -> str:
    from symtf.summary import counts_text

    checks = report.checks
    bad = sum(1 for c in checks if c.verdict in ("slip", "wrong"))
    und = sum(1 for c in checks if c.verdict == "undecided")
    sym = sum(1 for c in checks if c.verdict == "symbolic")
    verdict = (
        "every printed number checks out"
        if not bad and not und and not sym
        else "every decided number checks out"
        if not bad and not und
        else f"{bad} printed number(s) are off" + (f", {und} undecided" if und else "")
    )
    if sym:
        verdict += f"; {sym} depend on the file's symbols"
    if report.article is None:
        return f"{len(checks)} printed numbers: {esc(counts_text(checks))} — {esc(verdict)}."
    # An article: how many of its printed numbers were checked, always; never "every
    # printed number checks out" when some were not checked.
    unchecked = report.unchecked_count
    if unchecked:
        verdict = verdict.replace("every printed number", "every checked number")
        verdict += f"; {unchecked} printed number(s) not checked"
    shown = (
        f"{report.checked_count} of {report.printed_count} printed numbers checked, "
        f"{unchecked} not checked"
    )
    return f"{esc(shown)}: {esc(counts_text(checks))} — {esc(verdict)}."


def _legend(symbolic: bool = False) -> str:
    depends = (
        '<span><span class="v v-symbolic">0.3</span> depends on a symbol (its value is an expression)</span>'
        if symbolic
        else ""
    )
    return (
        '<p class="legend muted">'
        '<span><span class="v v-exact">0.5</span> right (exact or correctly rounded)</span>'
        '<span><span class="v v-slip">0.49</span> slip (less than one in the last digit off)</span>'
        '<span><span class="v v-wrong">0.4</span> wrong</span>'
        f"{depends}"
        '<span><span class="v v-undecided">0.1</span> undecided</span>'
        " Hover over a number for its exact value; decimals ending in … are certified"
        " truncations of the exact value.</p>"
    )


def _model_block(d: Derivation) -> str:
    """The model's settings as a table (``""`` for a derivation with no model: its steps
    are the article's own, and there is nothing to say about an architecture)."""
    m = d.model
    rows: list[tuple[str, str]] = []
    if m.architecture != "none":
        rows += [
            ("Architecture", esc(m.architecture)),
            ("d_model", str(m.d_model)),
            ("Heads", str(m.n_heads)),
            ("d_head", str(m.d_head)),
            ("Mask", esc(m.mask)),
        ]
        if m.architecture == "decoder":
            rows += [
                ("Norm", esc(f"{m.norm}-norm, ε = {m.eps}")),
                ("Activation", esc(m.activation)),
                ("Blocks", str(len(m.layers))),
            ]
        if m.vocab:
            rows.append(("Vocabulary", esc(", ".join(f"{i} {w}" for i, w in enumerate(m.vocab)))))
        if d.tokens and m.vocab:
            words = " ".join(m.vocab[i] for i in d.tokens if i < len(m.vocab))
            rows.append(("Input", esc(words)))
    if not rows:
        return ""
    body = "".join(f"<tr><th>{a}</th><td>{b}</td></tr>" for a, b in rows)
    return f'<table class="model">{body}</table>'


def _context(report: DerivationReport, derivation: Derivation | None, opts: HtmlOptions) -> Context:
    from symtf.renderers.latex.numbers import Numbers
    from symtf.renderers.latex.options import LatexOptions
    from symtf.renderers.latex.steps import Context
    from symtf.renderers.steps import article_names

    trace = report.trace
    if trace is None:
        raise ValueError("the report carries no trace; check() the derivation first")
    lopts = LatexOptions(decimals=opts.decimals, max_rows=opts.max_rows, max_cols=opts.max_cols)
    return Context(
        trace,
        Numbers(trace.shown, lopts),
        lopts,
        derivation,
        names={} if opts.node_names else article_names(report),
        node_names=opts.node_names,
    )


def derivation_sections(
    report: DerivationReport,
    derivation: Derivation | None = None,
    options: HtmlOptions | None = None,
) -> tuple[str, str]:
    """The table of contents and the step sections of one derivation, as HTML.

    Returns:
        ``(toc, body)``.
    """
    from symtf.renderers.latex import _claims_by_step
    from symtf.renderers.latex.sections import stage_of
    from symtf.renderers.steps import labels_by_step, select

    opts = options or HtmlOptions()
    ctx = _context(report, derivation, opts)
    trace = ctx.trace
    labels = labels_by_step(report)
    chosen = select(trace, opts.steps, labels)
    by_step, shown, leftover = _claims_by_step(report, trace)
    blanks = _Blanks(opts.blanks)
    toc: list[str] = []
    body: list[str] = []
    current: str | None = None
    for name in chosen:
        key, title = stage_of(name)
        if key != current:
            if current is not None:
                toc.append("</ol></li>")
            current = key
            sid = "stage-" + re.sub(r"[^A-Za-z0-9_-]", "-", key)
            body.append(f'<h2 id="{sid}">{esc(title)}</h2>')
            toc.append(f'<li><a href="#{sid}">{esc(title)}</a><ol>')
        step = trace[name]
        entry = esc(step.title or name)
        if labels.get(name):
            entry += (
                " — "
                + ", ".join(label_html(x) for x in labels[name][:3])
                + ("…" if len(labels[name]) > 3 else "")
            )
        toc.append(f'<li><a href="#{_anchor(name)}">{entry}</a></li>')
        body.append(
            step_block(
                ctx,
                step,
                by_step.get(name, []),
                shown.get(name, []),
                opts,
                blanks,
                labels.get(name, []),
            )
        )
        if not opts.blanks:  # a student's sheet keeps its answers: no pictures of them
            figures = attention_figures(trace, name, derivation, labels.get(name, []))
            if figures and opts.reveal:  # a picture of the weights is their answer too
                figures = _revealed("Show the picture", figures)
            body.append(figures)
    if current is not None:
        toc.append("</ol></li>")
    if leftover and opts.steps is None:
        body.append('<h2 id="other">Other printed claims</h2>')
        table = claims_block(leftover, opts, blanks, ctx.ref_names())
        body.append(_revealed("Show the numbers", table) if opts.reveal else table)
        toc.append('<li><a href="#other">Other printed claims</a></li>')
    return '<nav class="toc"><b>Contents</b><ol>' + "".join(toc) + "</ol></nav>", "".join(body)


def attention_figures(
    trace: Trace, name: str, derivation: Derivation | None, labels: Sequence[str] = ()
) -> str:
    """After an attention pattern step: its heatmap and the softmax sharpness of its scores.

    The heatmap labels rows (queries) and columns (keys) with the input's tokens; the
    sharpness plot shows the softmax of the step's raw scores (masked entries kept out)
    for divisors around the article's √d_k, as the trace gives it
    (:meth:`symtf.shown.Shown.attention`). Empty for any other step.
    """
    from symtf.renderers.charts import heatmap_svg, sharpness_svg

    pictured = trace.shown.attention(name)
    if pictured is None:
        return ""
    weights = [list(row) for row in pictured.weights]
    words = _token_words(derivation, len(weights))
    keys = _token_words(derivation, len(weights[0]))
    title = trace[name].title or (labels[0] if labels else name)
    cells = [[f"{w:.3f}" for w in row] for row in weights]
    figs = [heatmap_svg(weights, cells, words, keys, title[:1].upper() + title[1:])]
    if pictured.sharpness is not None:
        figs.append(
            sharpness_svg(pictured.sharpness, "Softmax sharpness of these scores against √d_k")
        )
    return '<figure class="charts">' + "".join(figs) + "</figure>"


def _token_words(derivation: Derivation | None, n: int) -> list[str]:
    """The input's tokens as words (vocabulary), or positions 1…n when there are none."""
    if derivation is not None:
        vocab = getattr(derivation.model, "vocab", None) or ()
        ids = getattr(derivation, "tokens", None) or ()
        if len(ids) == n and all(isinstance(t, int) and 0 <= t < len(vocab) for t in ids):
            return [str(vocab[t]) for t in ids]
    return [str(k + 1) for k in range(n)]


def derivation_html(
    report: DerivationReport,
    derivation: Derivation | None = None,
    options: HtmlOptions | None = None,
) -> str:
    """One derivation as an HTML fragment: title, summary, corrections, contents, steps."""
    opts = options or HtmlOptions()
    source = derivation.source if derivation is not None else ""
    toc, body = derivation_sections(report, derivation, opts)
    parts = [f"<h1>{esc(report.title)}</h1>"]
    parts.append(
        f'<p class="source">{esc("Source: " + source if source else "File: " + report.path)}</p>'
    )
    parts.append(f"<p><b>{_summary_line(report)}</b></p>")
    parts.append(_legend(any(c.verdict == "symbolic" for c in report.checks)))
    corrections = corrections_block(report, opts)
    if opts.reveal:  # the answers wait until the reader has worked the steps
        corrections = _revealed("Show them (after working the steps)", corrections)
    parts.append('<h2 id="corrections">Numbers that are off</h2>' + corrections)
    model = _model_block(derivation) if derivation is not None else ""
    if model:
        parts.append("<details><summary>The model</summary>" + model + "</details>")
    parts.append(toc)
    parts.append(body)
    return "".join(parts)


#: The page's Content-Security-Policy: a second wall behind the escaping. The browser
#: runs no script and fetches nothing, whatever the markup says; only the inline style
#: and ``data:`` images are allowed.
CSP = "default-src 'none'; style-src 'unsafe-inline'; img-src data:"


def head(title: str, css: str) -> str:
    """The ``<head>`` of every page symtf writes: charset, the CSP first, viewport, title, style."""
    return (
        '<head><meta charset="utf-8">'
        f'<meta http-equiv="Content-Security-Policy" content="{CSP}">'
        '<meta name="viewport" content="width=device-width, initial-scale=1">'
        f"<title>{esc(title)}</title><style>{css}</style></head>"
    )


def page(title: str, body: str) -> str:
    """A whole HTML document around a body (inline CSS, no scripts, nothing fetched)."""
    return (
        f'<!DOCTYPE html>\n<html lang="en">{head(title, CSS)}\n'
        f'<body><main class="symtf">{body}</main></body></html>\n'
    )


def render_html(
    report: DerivationReport | Report,
    derivation: Derivation | None = None,
    *,
    steps: str | None = None,
    node_names: bool = False,
    blanks: Collection[BlankKey] | None = None,
    options: HtmlOptions | None = None,
) -> str:
    """A whole self-contained page for one checked derivation (or several).

    Args:
        report: ``symtf.checking.compare.check(derivation)``, or a :class:`~symtf.checking.report.Report`.
        derivation: The loaded derivation (model table, weights substituted, source).
        steps: Only the steps matching this pattern (``"A_1,logits"``, ``"l0.h0.*"``).
        node_names: Show internal node names too.
        blanks: Printed numbers to replace by numbered blanks, as ``(label, index)``.
        options: Further layout options (its ``steps``/``node_names``/``blanks`` are
            overridden by the keyword arguments when those are given).

    Returns:
        An HTML5 document with inline CSS and MathML; no scripts, no external resources.
    """
    opts = options or HtmlOptions()
    opts = HtmlOptions(
        steps=steps if steps is not None else opts.steps,
        node_names=node_names or opts.node_names,
        blanks=frozenset(blanks) if blanks is not None else opts.blanks,
        decimals=opts.decimals,
        max_rows=opts.max_rows,
        max_cols=opts.max_cols,
        reveal=opts.reveal,
    )
    reports = getattr(report, "derivations", None)
    if reports is None:  # one derivation's report
        one = cast(DerivationReport, report)
        return page(one.title, derivation_html(one, derivation, opts))
    bodies = [derivation_html(d, None, opts) for d in reports]
    title = reports[0].title if len(reports) == 1 else f"{len(reports)} worked examples"
    return page(title, "<hr>".join(bodies))


# ----------------------------------------------------------------------------- Jupyter


def _scoped(body: str) -> str:
    return f'<div class="symtf"><style>{CSS}</style>{body}</div>'


def report_fragment(report: DerivationReport | Report, *, max_steps: int | None = None) -> str:
    """A report for a notebook: summary, corrections and every step, in one ``<div>``."""
    reports: Sequence[DerivationReport] | None = getattr(report, "derivations", None)
    if reports is None:  # one derivation's report
        reports = (cast(DerivationReport, report),)
    parts = []
    for d in reports:
        if d.trace is None:
            parts.append(f"<h3>{esc(d.title)}</h3><p><b>{_summary_line(d)}</b></p>")
            parts.append(corrections_block(d))
            continue
        parts.append(derivation_html(d, None, HtmlOptions()))
    return _scoped("".join(parts))


def trace_fragment(trace: Trace, *, node_names: bool = True) -> str:
    """A trace for a notebook: each step's name, formula, substituted numbers and value."""
    from symtf.renderers.latex.numbers import Numbers
    from symtf.renderers.latex.options import LatexOptions
    from symtf.renderers.latex.steps import Context

    lopts = LatexOptions()
    ctx = Context(trace, Numbers(trace.shown, lopts), lopts, None, node_names=node_names)
    parts = [f"<p><b>{len(trace)} steps</b></p>"]
    for name in trace:
        step = trace[name]
        title = esc(step.title or name)
        parts.append(
            f'<section class="step" id="{_anchor(name)}"><h3>{title} <code>{esc(name)}</code></h3>'
            + equations(step_lines(ctx, step))
            + "</section>"
        )
    return _scoped("".join(parts))


def value_html(value: Any, ctx: Context) -> str:
    """A single value (matrix or scalar) as inline MathML, exact when short."""
    from symtf.renderers.latex.matrices import render_value

    r = render_value(value, ctx.nums, ctx.opts)
    return mathml(r.exact if r.exact is not None else r.approx)
