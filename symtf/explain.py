"""Step-by-step explanation of one claim, for students redoing the arithmetic.

``symtf explain derivations/i_love_ai.toml A_1`` walks back from the claim's
step through the steps it was computed from, showing each formula, and then
each printed number beside its exact value, closed form and verdict.
"""

from __future__ import annotations

import sympy

from symtf import compare, spec
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
    closed = trace.backend.closed_form(e, 80) if hasattr(trace.backend, "closed_form") else e
    return sympy.sstr(closed) if closed is not None else "(long closed form; see the decimal)"


def explain(path: str, label: str) -> str:
    """Explain the claim ``label`` of the derivation at ``path``.

    Raises:
        SpecError: When the file is malformed or has no claim with that label.
    """
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
    trace = report.trace
    assert trace is not None
    claim = result.claim
    out = [f"{claim.label}  ({d.title})", ""]
    if claim.step is not None:
        out.append(f"How {claim.step} is computed:")
        for name in _chain(trace, claim.step):
            st = trace[name]
            formula = f"  {st.formula}" if st.formula else ""
            came = f"  from {', '.join(st.inputs)}" if st.inputs else ""
            out.append(f"  {name:<18} {st.title}{formula}{came}")
        out.append("")
    else:
        out.append(f"Displayed arithmetic: {claim.expression}")
        out.append("")
    out.append("Each printed number:")
    for c in result.checks:
        where = "" if c.index is None else f"[{c.index[0]}, {c.index[1]}] "
        out.append(f"  {where}printed {c.printed}")
        if c.value is not None and isinstance(c.value, sympy.Basic):
            out.append(f"      exact value   {_closed(trace, c.value)}")
        out.append(f"      certified     {c.exact}")
        out.append(f"      rounds to     {c.expected}")
        out.append(f"      verdict       {c.verdict}: {c.explanation}")
        for reading in ("as_displayed", "exact_reading"):
            r = c.extra.get(reading)
            if r:
                out.append(f"      {reading.replace('_', ' '):<13} {r['exact']} -> {r['verdict']}")
    return "\n".join(out) + "\n"
