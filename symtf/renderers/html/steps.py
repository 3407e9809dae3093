"""One step as HTML: its formula, the numbers substituted and the exact result as MathML
equations, with what the article printed under it.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

from symtf.renderers.html.claims import Blanks, blank_key, claims_block
from symtf.renderers.html.maths import label_html, mathml
from symtf.renderers.html.style import GOOD, HtmlOptions, anchor, esc

if TYPE_CHECKING:
    from symtf.checking.report import ClaimResult
    from symtf.renderers.latex.steps import Context
    from symtf.trace import Step


# ----------------------------------------------------------------------------- steps


def revealed(summary: str, inner: str) -> str:
    """``inner`` folded away behind ``summary`` (a fixed phrase of this module)."""
    return f'<details class="reveal"><summary>{esc(summary)}</summary>{inner}</details>'


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
    blanks: Blanks,
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
    hide = any(blank_key(c) in blanks.keys for r in every for c in r.checks)
    off = any(c.verdict not in (*GOOD, "symbolic") for r in every for c in r.checks) and not hide
    lines = step_lines(ctx, step, hide_result=hide)
    table = claims_block([*results, *shown], opts, blanks, ctx.ref_names()) if every else ""
    # a reader working along first sees the formula, the off marker waits with the answer
    mark = " has-off" if off and not opts.reveal else ""
    out = [f'<section class="step{mark}" id="{anchor(step.name)}"><h3>{head}</h3>']
    from symtf.renderers.latex.steps import _split_formula

    general = bool(_split_formula(step.formula)[0])  # the first line is the formula, no numbers
    if opts.reveal and general and len(lines) > 1:
        out += [
            equations(lines[:1]),
            revealed("Work it out, then show the numbers", equations(lines[1:]) + table),
        ]
    elif opts.reveal:  # no general formula of its own: every line holds the answer
        out.append(revealed("Work it out, then show the value", equations(lines) + table))
    else:
        out += [equations(lines), table]
    out.append("</section>")
    return "".join(out)
