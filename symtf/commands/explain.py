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
        nxt: list[str] = []
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
    from symtf.commands import source

    read = source.read(path)  # a path, a bundled example's name, or an article
    d = read.derivation
    labels = [c.label for c in d.claims]
    if label not in labels:
        left = next((c for c in d.drafted if c.label == label and c not in d.claims), None)
        if left is not None:  # an article's printing the draft could not map or read
            where = f" (line {left.source_line})" if left.source_line else ""
            why = (
                'no step explains it (step = "?")' if left.unmapped else "the check cannot read it"
            )
            raise SpecError(
                f"{path}: the claim {label!r}{where} is left out: {why}; "
                "symtf draft writes it for mapping by hand"
            )
        import difflib

        close = difflib.get_close_matches(label, labels, n=3)
        hint = f"; did you mean {', '.join(repr(c) for c in close)}?" if close else ""
        raise SpecError(f"{path}: no claim labelled {label!r}{hint}")
    source.warn_left_out(read)
    report = source.traced(read)
    result = next(r for r in report.results if r.claim.label == label)
    return d, report, result


def explain(path: str, label: str, *, latex: bool = False, node_names: bool = False) -> str:
    """Explain the claim ``label`` of the derivation at ``path``.

    Args:
        path: The derivation file.
        label: The claim's label.
        latex: A compilable LaTeX document (the steps as lecture notes) instead of
            plain text for a terminal.
        node_names: Also show internal node names (``l0.h0.pattern``) beside the
            article's labels; by default the text speaks only the article's names.

    Raises:
        SpecError: When the file is malformed or has no claim with that label.
    """
    d, report, result = _load(path, label)
    trace = report.trace
    assert trace is not None
    if latex:
        return _latex(d, report, result, trace, node_names)
    from symtf.checking.wording import Names, place
    from symtf.renderers.latex.numbers import Numbers
    from symtf.renderers.latex.options import LatexOptions
    from symtf.renderers.plain import to_text, value_text
    from symtf.renderers.steps import article_names

    names = article_names(report)
    said = Names(d.claims, trace)
    nums = Numbers(trace.shown, LatexOptions())
    claim = result.claim
    out = [f"{claim.label}  ({d.title})", ""]
    own = {t.name for t in d.tensors} | {st.name for st in d.steps}
    if claim.step is not None:
        out.append(f"How {said.step(claim.step)} is computed:")
        for name in _chain(trace, claim.step):
            st = trace[name]
            what = st.title or said.step(name)
            if name in names and names[name] != what:
                what += f" ({names[name]})"
            # a name the file's author chose (a given tensor, a user step) is theirs to
            # read; a template's node names (l0.h0.pattern) only on request
            shown = node_names or name in own
            out.append(f"  {what}   [{name}]" if shown else f"  {what}")
            if st.formula:
                out.append(f"      {to_text(st.formula)}")
            if st.inputs:
                came = "; ".join(
                    i if i in own or i not in trace else said.step(i) for i in st.inputs
                )
                out.append(f"      from {came}")
            if st.value is not None and not isinstance(st.value, tuple):
                rows = value_text(st.value, nums)
                out.append(f"      = {rows[0]}")
                out.extend(f"        {r}" for r in rows[1:])
        out.append("")
    else:
        out.append(f"Displayed arithmetic: {claim.expression}")
        out.extend(_operands(result, said, node_names))
        out.append("")
    out.append("Each printed number:")
    shape = trace.true_shape(claim.step) if claim.step in trace else None
    for c in result.checks:
        if c.index is None:
            where = ""
        else:
            where = place(c.index, shape) + (
                f" [{', '.join(map(str, c.index))}]" if node_names else ""
            )
            where += ": "
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
                title = "as displayed" if reading == "as_displayed" else "unrounded"
                out.append(f"      {title:<13} {r['exact']} -> {r['verdict']}")
    return "\n".join(out) + "\n"


def _operands(result: Any, said: Any, node_names: bool) -> list[str]:
    """Where a displayed line's numbers come from, and the line with them unrounded."""
    reading = next(
        (c.extra["exact_reading"] for c in result.checks if "exact_reading" in c.extra), None
    )
    if not reading or not reading.get("stands_for"):
        return []
    out = ["", "Its numbers, unrounded:"]
    for text, ref in reading["stands_for"].items():
        words = said.reference(ref) if ref not in said.labels else ref
        out.append(f"  {text} is {words}" + (f"   [{ref}]" if node_names and ref != words else ""))
    if reading.get("unrounded"):
        out.append(f"  {reading['unrounded']} = {reading['exact']}")
    return out


def _latex(
    d: spec.Derivation,
    report: DerivationReport,
    result: Any,
    trace: Trace,
    node_names: bool = False,
) -> str:
    """The claim's steps as a LaTeX document: the same layout as ``symtf latex --steps``."""
    from dataclasses import replace

    from symtf.renderers.latex import derivation_body, standalone
    from symtf.renderers.latex.claims import displayed_block
    from symtf.renderers.latex.options import LatexOptions

    claim = result.claim
    title = f"{claim.label} — {d.title}"
    if claim.step is None:
        # Displayed arithmetic has no step of its own: the line, its readings and verdict.
        return standalone(title, displayed_block([result], LatexOptions()))
    chain = _chain(trace, claim.step)
    opts = LatexOptions(steps=",".join(_glob_literal(n) for n in chain), node_names=node_names)
    return standalone(title, derivation_body(replace(report, results=(result,)), d, opts))


def _glob_literal(name: str) -> str:
    """A step name as a glob that matches only itself."""
    return "".join(f"[{ch}]" if ch in "*?[]" else ch for ch in name)


def cmd_explain(args: argparse.Namespace) -> int:
    """``symtf explain``: walk through one claim step by step."""
    from symtf.cli import EXIT_OK, time_budget
    from symtf.limits import guard
    from symtf.visible import block as safe_block

    with time_budget(args.timeout, args.path), guard(args.path):
        text = explain(
            args.path,
            args.label,
            latex=getattr(args, "latex", False),
            node_names=getattr(args, "node_names", False),
        )
    files.write_stdout(safe_block(text))
    return EXIT_OK


def configure(subparsers: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """Add the ``explain`` sub-command."""
    from symtf.cli import DEFAULT_TIMEOUT
    from symtf.commands import SOURCE_HELP, add_allow_path
    from symtf.limits import timeout_seconds

    p = subparsers.add_parser(
        "explain",
        help="explain one claim of a derivation step by step",
        description="Show how one printed claim is computed: formula, inputs, exact value, verdict.",
    )
    p.add_argument("path", metavar="FILE", help=SOURCE_HELP)
    p.add_argument("label", metavar="LABEL", help="the claim's label (as in the file)")
    p.add_argument(
        "--latex",
        action="store_true",
        help="print a LaTeX document of the steps instead of plain text",
    )
    p.add_argument(
        "--node-names",
        action="store_true",
        help="also show internal node names (l0.h0.pattern) beside the article's labels",
    )
    p.add_argument("--timeout", type=timeout_seconds, default=DEFAULT_TIMEOUT, metavar="SECONDS")
    add_allow_path(p)
    p.set_defaults(func=cmd_explain)
