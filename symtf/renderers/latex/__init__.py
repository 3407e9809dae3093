"""LaTeX rendering: a worked example as lecture notes.

The renderer reads a :class:`~symtf.checking.report.DerivationReport` (verdicts) and its
:class:`~symtf.trace.Trace` (named exact steps) and lays them out the way a
handcalcs sheet does: the general formula, the same formula with the numbers
substituted, the exact result, and beside it what the article printed with its
verdict. It does no rounding of its own: decimals are certified truncations of
ball enclosures (``…`` marks an expansion that goes on), and closed forms come
from :func:`sympy.latex`.

Public entry points:

- :func:`standalone` wraps any LaTeX body in a compilable document with the
  project preamble (only packages of a basic TeX Live).
- :func:`document` renders one checked derivation as a whole document.
- :func:`trace_latex`, :func:`report_latex` and :func:`derivation_report_latex`
  give math-mode LaTeX for Jupyter's ``_repr_latex_`` (MathJax-safe).

This module lays out the whole document; its parts are modules of their own:
:mod:`~symtf.renderers.latex.preamble` (the document around a body),
:mod:`~symtf.renderers.latex.options` (the layout settings, the verdicts' marks),
:mod:`~symtf.renderers.latex.names` (labels, names and headings),
:mod:`~symtf.renderers.latex.numbers` (one value),
:mod:`~symtf.renderers.latex.matrices` (matrices and tensors),
:mod:`~symtf.renderers.latex.sections` (the stages the steps fall into),
:mod:`~symtf.renderers.latex.steps` (one step's worked lines),
:mod:`~symtf.renderers.latex.claims` (what the article printed, with its verdicts) and
:mod:`~symtf.renderers.latex.expressions` (a displayed line of arithmetic).
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import TYPE_CHECKING

import sympy

from symtf.checking.report import DerivationReport
from symtf.renderers.latex.claims import claims_table, counts_text, displayed_block, printed_cell
from symtf.renderers.latex.matrices import render_value
from symtf.renderers.latex.names import heading_title, label_math, label_tex, tt
from symtf.renderers.latex.numbers import Numbers
from symtf.renderers.latex.options import GOOD, LatexOptions
from symtf.renderers.latex.preamble import standalone
from symtf.renderers.latex.sections import stages
from symtf.renderers.latex.steps import Context, align, step_math, step_rows
from symtf.renderers.tex import escape, math_text

if TYPE_CHECKING:
    from symtf.checking.report import ClaimResult, DerivationReport, Report
    from symtf.spec import Derivation
    from symtf.trace import Step, Trace

#: The documented entry points (``standalone`` lives in :mod:`~symtf.renderers.latex.preamble`).
__all__ = [
    "derivation_body",
    "derivation_report_latex",
    "document",
    "report_latex",
    "standalone",
    "trace_latex",
]

# ----------------------------------------------------------------------------- documents


def _claims_by_step(
    report: DerivationReport, trace: Trace
) -> tuple[dict[str, list[ClaimResult]], dict[str, list[ClaimResult]], list[ClaimResult]]:
    """Step claims by step; displayed-arithmetic claims by the step they belong to; leftovers."""
    by_step: dict[str, list[ClaimResult]] = {}
    shown: dict[str, list[ClaimResult]] = {}
    leftover: list[ClaimResult] = []
    results = list(report.results)
    steps_of = [r.claim.step if r.claim.expression is None else None for r in results]
    for k, r in enumerate(results):
        cl = r.claim
        if cl.expression is None:
            step = cl.step if cl.step in trace else None
            if step is None:
                leftover.append(r)
            else:
                by_step.setdefault(step, []).append(r)
            continue
        after = [s for s in steps_of[k + 1 :] if s is not None and s in trace]
        before = [s for s in steps_of[:k] if s is not None and s in trace]
        home = after[0] if after else _expression_home(r, trace)
        if home is None and before:
            home = before[-1]
        if home is None:
            leftover.append(r)
        else:
            shown.setdefault(home, []).append(r)
    return by_step, shown, leftover


def _expression_home(r: ClaimResult, trace: Trace) -> str | None:
    for ref in r.claim.stands_for.values():
        name = ref.split("[")[0].strip()
        if name in trace:
            return name
    text = r.claim.expression or ""
    for name in sorted(trace, key=len, reverse=True):
        if "." in name and re.search(r"(?<![\w.])" + re.escape(name) + r"(?![\w])", text):
            return name
    return None


def _step_heading(step: Step, labels: Sequence[str] = (), node_names: bool = False) -> str:
    title = heading_title(step.title or step.name)
    right = ", ".join(label_tex(x) for x in labels[:3]) + (escape(", …") if len(labels) > 3 else "")
    if node_names:
        right += (" " if right else "") + "\\texttt{" + escape(step.name) + "}"
    tail = "\\symtfstep{" + right + "}" if right else ""
    return "\\subsection*{" + escape(title) + tail + "}\n"


def _model_table(d: Derivation, opts: LatexOptions, nums: Numbers) -> str:
    m = d.model
    rows: list[tuple[str, str]] = []
    if m.architecture != "none":  # no model: the article's own steps, no architecture to name
        rows += [
            ("Architecture", escape(m.architecture)),
            ("$d_{\\text{model}}$", f"${m.d_model}$"),
            ("Heads $h$", f"${m.n_heads}$"),
            ("$d_{\\text{head}} = d_k$", f"${m.d_head}$"),
            (
                "Attention divisor",
                f"${sympy.latex(m.scale)}$"
                if m.scale is not None
                else f"$\\sqrt{{d_k}} = {sympy.latex(sympy.sqrt(m.d_head))}$",
            ),
            ("Mask", escape(m.mask)),
        ]
        if m.architecture == "decoder":
            rows += [
                ("LayerNorm placement", escape(m.norm) + "-norm"),
                ("LayerNorm $\\varepsilon$", f"${sympy.latex(m.eps)}$"),
                ("Activation", escape(m.activation)),
                ("Blocks", f"${len(m.layers)}$"),
            ]
        if m.vocab:
            rows.append(
                ("Vocabulary", ", ".join(f"{i}\\,{escape(w)}" for i, w in enumerate(m.vocab)))
            )
        if d.tokens and m.vocab:
            rows.append(
                (
                    "Input",
                    " ".join(escape(m.vocab[i]) for i in d.tokens if i < len(m.vocab))
                    + f" (ids {', '.join(map(str, d.tokens))})",
                )
            )

        def mat(x: sympy.MatrixBase | None) -> str | None:
            if x is None:
                return None
            if x.rows == x.cols and x == sympy.eye(x.rows):
                return f"$I_{{{x.rows}}}$"
            r = render_value(x, nums, opts)
            return "$" + (r.exact if r.exact is not None else r.approx) + "$"

        weights: list[tuple[str, sympy.MatrixBase | None]] = [
            ("Embeddings $E$", m.embed),
            ("Positions $P$", m.pos),
            ("Unembedding $W_{\\text{vocab}}$", m.unembed),
        ]
        for li, layer in enumerate(m.layers):
            b = f"block {li + 1}" if len(m.layers) > 1 else ""
            for hi, h in enumerate(layer.heads):
                for nm, w in (("W_Q", h.W_Q), ("W_K", h.W_K), ("W_V", h.W_V)):
                    weights.append((f"${nm}$, head {hi + 1}" + (f", {b}" if b else ""), w))
            if m.architecture == "decoder":
                weights += [
                    (f"$W_O$ {b}", layer.W_O),
                    (f"$W_1$ {b}", layer.W1),
                    (f"$b_1$ {b}", layer.b1),
                    (f"$W_2$ {b}", layer.W2),
                    (f"$b_2$ {b}", layer.b2),
                ]
        for label, w in weights:
            t = mat(w)
            if t is not None:
                rows.append((label, t))
    if m.standalone and m.architecture != "decoder":
        rows.append(("LayerNorm $\\varepsilon$", f"${sympy.latex(m.eps)}$"))
    for s in m.standalone:
        r = render_value(s.input, nums, opts)
        rows.append(
            (
                f"Worked {escape(s.op)} \\texttt{{{escape(s.name)}}}",
                "$" + (r.exact or r.approx) + "$",
            )
        )
    if not rows:
        return ""
    body = "\n".join(f"{a} & {b} \\\\" for a, b in rows)
    return (
        "\\section*{The model}\n"
        "\\begin{longtable}{>{\\raggedright\\arraybackslash}p{0.3\\linewidth} >{\\raggedright\\arraybackslash}p{0.62\\linewidth}}\n"
        "\\toprule\nSetting & Value \\\\\n\\midrule\n\\endhead\n"
        + body
        + "\n\\bottomrule\n\\end{longtable}\n"
    )


def _summary(report: DerivationReport) -> str:
    counts = report.counts
    total = sum(counts.values())
    parts = [f"{n} {k}" for k, n in counts.items() if n]
    bad = counts.get("slip", 0) + counts.get("wrong", 0)
    symbolic = counts.get("symbolic", 0)
    verdict = (
        "every printed number checks out."
        if not bad and not counts.get("undecided") and not symbolic
        else "every decided number checks out."
        if not bad and not counts.get("undecided")
        else f"{bad} printed number(s) are off; corrections are in bold."
    )
    if symbolic:
        verdict += f" {symbolic} depend on the file's symbols."
    return (
        "\\paragraph{Summary.} "
        + escape(f"{total} printed numbers: {', '.join(parts) if parts else 'none'} — {verdict}")
        + "\n\nMarks: \\symtfok{} right (exact or correctly rounded), \\symtfslip{} off by one unit in "
        "the last place, \\symtfbad{} wrong, "
        + ("\\symtfsymbolic{} depends on a symbol, " if symbolic else "")
        + "\\symtfundecided{} undecided. Decimals ending in "
        "$\\ldots$ are certified truncations of the exact value; $=$ is exact, $\\approx$ shows digits.\n\n"
    )


def derivation_body(
    report: DerivationReport,
    derivation: Derivation | None = None,
    options: LatexOptions | None = None,
) -> str:
    """The body (no preamble) of one derivation's lecture notes.

    Args:
        report: The checked derivation (with its exact trace).
        derivation: The loaded derivation, for the model table and weights; optional.
        options: Layout options.
    """
    from symtf.renderers.steps import article_names, labels_by_step, select

    opts = options or LatexOptions()
    trace = report.trace
    if trace is None:
        raise ValueError("the report carries no trace; check() the derivation first")
    names = {} if opts.node_names else article_names(report)
    titles = {} if opts.node_names else {n: trace[n].title for n in trace if trace[n].title}
    nums = Numbers(trace.shown, opts, names, titles)
    ctx = Context(
        trace, nums, opts, derivation, names=names, node_names=opts.node_names, name_long=True
    )
    labels = labels_by_step(report)
    refs = ctx.ref_names()
    chosen = set(select(trace, opts.steps, labels))
    out = [_summary(report)]
    if derivation is not None and opts.steps is None:
        out.append(_model_table(derivation, opts, nums))
    by_step, shown, leftover = _claims_by_step(report, trace)
    for title, names_in_stage in stages(trace):
        picked = [n for n in names_in_stage if n in chosen]
        if not picked:
            continue
        out.append("\\section{" + escape(title) + "}\n")
        for name in picked:
            step = trace[name]
            out.append(_step_heading(step, labels.get(name, []), opts.node_names))
            out.append(align(step_rows(ctx, step), step_rows(ctx, step, broken=True)))
            if name in by_step:
                out.append(claims_table(by_step[name], opts))
            if name in shown:
                out.append(displayed_block(shown[name], opts, refs))
    if opts.steps is not None:
        leftover = []
    if leftover:
        out.append("\\section{Other printed claims}\n")
        steps = [r for r in leftover if r.claim.expression is None]
        exprs = [r for r in leftover if r.claim.expression is not None]
        if steps:
            out.append(claims_table(steps, opts))
        if exprs:
            out.append(displayed_block(exprs, opts, refs))
    return "".join(out)


def document(
    report: DerivationReport,
    derivation: Derivation | None = None,
    options: LatexOptions | None = None,
) -> str:
    """One checked derivation as a standalone LaTeX document (lecture notes).

    Args:
        report: The checked derivation (``symtf.checking.compare.check(derivation)``).
        derivation: The loaded derivation, for the model table, weights and source.
        options: Layout options.
    """
    source = derivation.source if derivation is not None else ""
    subtitle = f"Source: {source}" if source else f"File: {report.path}"
    return standalone(report.title, derivation_body(report, derivation, options), subtitle=subtitle)


# ----------------------------------------------------------------------------- Jupyter


def trace_latex(trace: Trace, options: LatexOptions | None = None) -> str:
    """A trace as display math (for Jupyter): one aligned line group per step."""
    opts = options or LatexOptions()
    ctx = Context(trace, Numbers(trace.shown, opts), opts, None)
    blocks = []
    for name in trace:
        step = trace[name]
        lines = step_math(ctx, step)
        head = [(tt(name), r"\quad " + math_text(step.title))]
        blocks.extend(head + lines)
    body = " \\\\\n".join(f"{a} &{b}" for a, b in blocks)
    return "$$\\begin{aligned}\n" + body + "\n\\end{aligned}$$"


def _report_rows(d: DerivationReport) -> list[str]:
    rows = []
    for r in d.results:
        c0 = r.checks[0] if r.checks else None
        where = r.claim.step or r.claim.expression or ""
        if len(r.checks) == 1 and c0 is not None:
            got = printed_cell(c0.printed)
            fix = (
                ""
                if c0.verdict in GOOD or c0.expected is None
                else r"\to \mathbf{" + printed_cell(c0.expected) + "}"
            )
            summary = math_text(c0.verdict) + (r"\ " + fix if fix else "")
        else:
            got = math_text(f"{len(r.checks)} numbers")
            summary = math_text(counts_text(r.checks))
        mark = (
            r"\color{green}{\checkmark}"
            if r.verdict in GOOD
            else r"\color{blue}{f}"
            if r.verdict == "symbolic"
            else r"\color{red}{\times}"
        )
        rows.append(
            f"{mark} & {label_math(r.claim.label)} & {math_text(where)} & {got} & {summary}"
        )
    return rows


def derivation_report_latex(d: DerivationReport) -> str:
    """One derivation's verdicts as display math (for Jupyter)."""
    head = math_text(d.title)
    rows = _report_rows(d)
    return (
        "$$\\begin{array}{clllll}\n"
        + f"\\rlap{{{head}}} \\\\\n\\hline\n"
        + " \\\\\n".join(rows)
        + "\n\\end{array}$$"
    )


def report_latex(report: Report) -> str:
    """A report's verdicts as display math (for Jupyter)."""
    return "\n".join(derivation_report_latex(d) for d in report.derivations)
