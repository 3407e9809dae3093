"""Step-by-step explanation of one claim, for students redoing the arithmetic.

``symtf explain derivations/i_love_ai.toml A_1`` walks back from the claim's
step through the steps it was computed from, showing each formula, and then
each printed number beside its exact value, closed form and verdict.
"""

from __future__ import annotations

import argparse
from typing import Any

import sympy

from symtf import files, spec
from symtf.checking import compare
from symtf.checking.report import DerivationReport
from symtf.errors import SpecError
from symtf.trace import Trace

#: How far back through the inputs the walk goes.
MAX_DEPTH = 4


def _chain(trace: Trace, step: str) -> list[str]:
    """The steps that lead to ``step``, nearest last, at most :data:`MAX_DEPTH` deep."""
    order = list(trace)
    seen: set[str] = set()
    frontier = [step]
    for _ in range(MAX_DEPTH):
        nxt = []
        for s in frontier:
            if s in seen or s not in trace:
                continue
            seen.add(s)
            nxt.extend(trace[s].inputs)
        frontier = nxt
    return sorted(seen, key=order.index)


def _closed(trace: Trace, e: sympy.Expr) -> str:
    from symtf.renderers.plain import to_text

    closed = trace.backend.closed_form(e, 80) if hasattr(trace.backend, "closed_form") else e
    if closed is None:
        return "(long closed form; see the decimal)"
    return to_text(sympy.latex(closed))


def _load(path: str, label: str) -> tuple[spec.Derivation, DerivationReport, Any]:
    from symtf import bundled

    d = spec.load(bundled.resolve(path))  # a path, or a bundled example's name
    labels = [c.label for c in d.claims]
    if label not in labels:
        import difflib

        close = difflib.get_close_matches(label, labels, n=3)
        hint = f"; did you mean {', '.join(repr(c) for c in close)}?" if close else ""
        raise SpecError(f"{path}: no claim labelled {label!r}{hint}")
    report = compare.check(d)
    result = next(r for r in report.results if r.claim.label == label)
    return d, report, result


def explain(path: str, label: str, *, latex: bool = False) -> str:
    """Explain the claim ``label`` of the derivation at ``path``.

    Args:
        path: The derivation file.
        label: The claim's label.
        latex: A compilable LaTeX document (the steps as lecture notes) instead of
            plain text for a terminal.

    Raises:
        SpecError: When the file is malformed or has no claim with that label.
    """
    d, report, result = _load(path, label)
    trace = report.trace
    assert trace is not None
    if latex:
        return _latex(d, report, result, trace)
    from symtf.renderers.latex import LatexOptions, Numbers
    from symtf.renderers.plain import to_text, value_text
    from symtf.renderers.steps import article_names

    names = article_names(report)
    nums = Numbers(trace.backend, LatexOptions())
    claim = result.claim
    out = [f"{claim.label}  ({d.title})", ""]
    if claim.step is not None:
        out.append(
            f"How {names.get(claim.step, trace[claim.step].title or claim.step)} is computed:"
        )
        for name in _chain(trace, claim.step):
            st = trace[name]
            what = st.title or name
            if name in names:
                what += f" ({names[name]})"
            out.append(f"  {what}   [{name}]")
            if st.formula:
                out.append(f"      {to_text(st.formula)}")
            if st.inputs:
                came = "; ".join(
                    names.get(i, trace[i].title or i) if i in trace else i for i in st.inputs
                )
                out.append(f"      from {came}")
            if st.value is not None and not isinstance(st.value, tuple):
                rows = value_text(st.value, nums)
                out.append(f"      = {rows[0]}")
                out.extend(f"        {r}" for r in rows[1:])
        out.append("")
    else:
        out.append(f"Displayed arithmetic: {claim.expression}")
        out.append("")
    out.append("Each printed number:")
    for c in result.checks:
        where = "" if c.index is None else f"[{', '.join(map(str, c.index))}] "
        out.append(f"  {where}printed {c.printed}")
        if c.value is not None and isinstance(c.value, sympy.Basic):
            out.append(f"      exact value   {_closed(trace, c.value)}")
        if c.verdict == "symbolic":  # no decimal and no rounding: what it depends on, and where
            from symtf.renderers._wording import depends_words, symbolic_detail

            out.append(f"      {depends_words(c)}")
            out.append(f"      verdict       symbolic: {symbolic_detail(c)}")
        else:
            out.append(
                f"      certified     {c.exact if c.exact is not None else '(no certified decimal found)'}"
            )
            out.append(f"      rounds to     {c.expected}")
            out.append(f"      verdict       {c.verdict}: {c.explanation}")
        for reading in ("as_displayed", "exact_reading"):
            r = c.extra.get(reading)
            if r:
                out.append(f"      {reading.replace('_', ' '):<13} {r['exact']} -> {r['verdict']}")
    return "\n".join(out) + "\n"


def _latex(d: spec.Derivation, report: DerivationReport, result: Any, trace: Trace) -> str:
    """The claim's steps as a LaTeX document: the same layout as ``symtf latex --steps``."""
    from dataclasses import replace

    from symtf.renderers.latex import (
        LatexOptions,
        _displayed_block,
        derivation_body,
        standalone,
    )

    claim = result.claim
    title = f"{claim.label} — {d.title}"
    if claim.step is None:
        # Displayed arithmetic has no step of its own: the line, its readings and verdict.
        return standalone(title, _displayed_block([result], LatexOptions()))
    chain = _chain(trace, claim.step)
    opts = LatexOptions(steps=",".join(_glob_literal(n) for n in chain))
    return standalone(title, derivation_body(replace(report, results=(result,)), d, opts))


def _glob_literal(name: str) -> str:
    """A step name as a glob that matches only itself."""
    return "".join(f"[{ch}]" if ch in "*?[]" else ch for ch in name)


def cmd_explain(args: argparse.Namespace) -> int:
    """``symtf explain``: walk through one claim step by step."""
    from symtf.cli import EXIT_OK, time_budget
    from symtf.limits import guard
    from symtf.renderers.safe import block as safe_block

    with time_budget(args.timeout, args.path), guard(args.path):
        text = explain(args.path, args.label, latex=getattr(args, "latex", False))
    files.write_stdout(safe_block(text))
    return EXIT_OK


def configure(subparsers: argparse._SubParsersAction) -> None:
    """Add the ``explain`` sub-command."""
    from symtf.cli import DEFAULT_TIMEOUT, FILE_HELP
    from symtf.commands import add_allow_path
    from symtf.limits import timeout_seconds

    p = subparsers.add_parser(
        "explain",
        help="explain one claim of a derivation step by step",
        description="Show how one printed claim is computed: formula, inputs, exact value, verdict.",
    )
    p.add_argument("path", metavar="FILE", help=FILE_HELP)
    p.add_argument("label", metavar="LABEL", help="the claim's label (as in the file)")
    p.add_argument(
        "--latex",
        action="store_true",
        help="print a LaTeX document of the steps instead of plain text",
    )
    p.add_argument("--timeout", type=timeout_seconds, default=DEFAULT_TIMEOUT, metavar="SECONDS")
    add_allow_path(p)
    p.set_defaults(func=cmd_explain)
