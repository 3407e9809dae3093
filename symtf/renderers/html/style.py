"""What every part of a page shares: its options, its stylesheet, the symbol and words of
each verdict, and escaping.
"""

from __future__ import annotations

import html
import re
from dataclasses import dataclass, field

#: A printed number to blank out: ``(claim label, index)``; index ``None`` for a scalar claim.
BlankKey = tuple[str, "tuple[int, ...] | None"]

GOOD = ("exact", "rounded")
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
OPEN = ("symbolic", "undecided")

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


def esc(text: str) -> str:
    """Text made safe for HTML content and attributes."""
    return html.escape(text, quote=True)


def anchor(name: str | None) -> str:
    return "step-" + re.sub(r"[^A-Za-z0-9_-]", "-", name or "")
