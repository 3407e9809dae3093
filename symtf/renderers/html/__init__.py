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

This module lays out pages; their parts are modules of their own:
:mod:`~symtf.renderers.html.style` (options, stylesheet, verdict words),
:mod:`~symtf.renderers.html.maths` (MathML), :mod:`~symtf.renderers.html.claims` (what the
article printed, with its verdicts) and :mod:`~symtf.renderers.html.steps` (one step).
"""

from __future__ import annotations

import re
from collections.abc import Collection, Sequence
from typing import TYPE_CHECKING, Any, cast

from symtf.checking.report import DerivationReport, Report
from symtf.renderers.html.claims import Blanks, claims_block, corrections_block
from symtf.renderers.html.maths import label_html, mathml
from symtf.renderers.html.steps import equations, revealed, step_block, step_lines
from symtf.renderers.html.style import CSS, BlankKey, HtmlOptions, anchor, esc

if TYPE_CHECKING:
    from symtf.checking.report import DerivationReport, Report
    from symtf.renderers.latex.steps import Context
    from symtf.spec import Derivation
    from symtf.trace import Trace

#: The documented entry points and pieces (see the module docstring).
__all__ = [
    "CSS",
    "HtmlOptions",
    "claims_block",
    "corrections_block",
    "mathml",
    "render_html",
    "report_fragment",
    "step_block",
    "trace_fragment",
]


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
    blanks = Blanks(opts.blanks)
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
        toc.append(f'<li><a href="#{anchor(name)}">{entry}</a></li>')
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
                figures = revealed("Show the picture", figures)
            body.append(figures)
    if current is not None:
        toc.append("</ol></li>")
    if leftover and opts.steps is None:
        body.append('<h2 id="other">Other printed claims</h2>')
        table = claims_block(leftover, opts, blanks, ctx.ref_names())
        body.append(revealed("Show the numbers", table) if opts.reveal else table)
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
        corrections = revealed("Show them (after working the steps)", corrections)
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
            f'<section class="step" id="{anchor(name)}"><h3>{title} <code>{esc(name)}</code></h3>'
            + equations(step_lines(ctx, step))
            + "</section>"
        )
    return _scoped("".join(parts))


def value_html(value: Any, ctx: Context) -> str:
    """A single value (matrix or scalar) as inline MathML, exact when short."""
    from symtf.renderers.latex.matrices import render_value

    r = render_value(value, ctx.nums, ctx.opts)
    return mathml(r.exact if r.exact is not None else r.approx)
