"""Displayed arithmetic: check a line like ``e^2.309 ≈ 10.068`` two ways.

*As displayed*: the expression evaluated exactly with its literals as written,
which is what a reader redoing the line gets. *Exact*: the same expression with
each literal replaced by the exact value it stands for — declared in the claim
(``stands_for``), the exact reading of an earlier displayed line whose printed
result it repeats, or an entry of the line's own lineage it is the printed
rounding of: an input of the step the line computes (the step one of whose
entries the printed result is a rounding of), or an input of that step's worked
pieces (``l0.ln1.centered`` for ``l0.ln1``). A literal that matches nothing there
stays as written (``0.1*1`` is 0.1, whatever else in the model prints as 0.1);
``stands_for = "none"`` keeps every literal as written. The claim's
verdict is the exact reading's when any literal stood for something (that is
the quantity the article computes), else the displayed one's; the explanation
says which reading holds, so hidden precision is told apart from an error.
"""

from __future__ import annotations

import re
from fractions import Fraction
from typing import Any

import sympy

from symtf.backends.certify import PRECISIONS, to_fmpq
from symtf.errors import ExpressionError, SpecError, Undecided
from symtf.language import expr as sx
from symtf.language.latexmath import parse as parse_expression
from symtf.numbers import Printed, rounding_interval
from symtf.spec import Claim, Derivation

_REF = re.compile(r"^\s*([A-Za-z_][A-Za-z0-9_.]*)\s*\[\s*(\d+)\s*(?:,\s*(\d+)\s*)?\]\s*$")


def check_expression(claim: Claim, ev: Any, derivation: Derivation) -> tuple[Any, ...]:
    """Check one expression claim; returns its :class:`~symtf.checking.report.Check` entries.

    Raises:
        SpecError: For an expression that cannot be parsed or evaluated, naming the claim.
    """
    from symtf.checking.evaluation import Quantity
    from symtf.checking.report import Check
    from symtf.checking.verdict import decide

    where = f"{claim.where}.expression"
    assert claim.expression is not None
    try:
        parsed = parse_expression(claim.expression, where=where)
    except ExpressionError as e:
        raise SpecError(str(e)) from None
    trace = ev.exact_trace()
    xp = trace.backend
    resolve = _resolver(trace, derivation, ev, claim)
    try:
        shown = parsed.evaluate(resolve, backend=xp)
        replace, sources = _substitutions(parsed, claim, trace, derivation, ev, resolve)
        exact = parsed.evaluate(resolve, replace, backend=xp) if replace else shown
    except ExpressionError as e:
        raise SpecError(str(e)) from None
    _remember(ev, claim, exact)

    shown_vals = _entries(shown)
    exact_vals = _entries(exact)
    printed = [p for row in claim.printed for p in row]
    if len(printed) != len(shown_vals):
        raise SpecError(
            f"{claim.where}.printed: expected {len(shown_vals)} value(s) for {claim.expression!r}, "
            f"found {len(printed)}"
        )

    def quantity(e: sympy.Expr) -> Any:
        return Quantity(lambda prec: xp.ball(e, prec), lambda: (e, xp))

    checks = []
    for k, (p, a, b) in enumerate(zip(printed, shown_vals, exact_vals, strict=True)):
        qa, qb = quantity(a), quantity(b)
        ra, rb = decide(qa, p, claim.rounding), decide(qb, p, claim.rounding)
        (va, ea, wa), (vb, eb, wb) = ((r.verdict, r.expected, r.explanation) for r in (ra, rb))
        da, db = qa.decimal(), qb.decimal()
        substituted = bool(replace)
        verdict, expected, exact_str, value = (vb, eb, db, b) if substituted else (va, ea, da, a)
        why = _explain(claim, p, va, da, vb, db, sources, substituted)
        pending = xp.undecided_in(value) if verdict == "undecided" else []
        if pending:  # a branch of the model itself could not be taken: say which
            file = claim.where.rsplit(": claims[", 1)[0]
            why += f"; it depends on the model's branch at {file}: " + "; ".join(pending)
        index = (0, k) if len(printed) > 1 else None
        extra = {
            "expression": claim.expression,
            "units_off": (rb if substituted else ra).units_off,
            "as_displayed": {"exact": da, "expected": ea, "verdict": va, "explanation": wa},
            "exact_reading": {
                "exact": db,
                "expected": eb,
                "verdict": vb,
                "explanation": wb,
                "stands_for": sources,
            },
        }
        how = (qb if substituted else qa).decided_by
        if how is not None:
            extra["decided_by"] = how  # balls or exact: displayed lines have no fast trace
        checks.append(
            Check(claim.label, None, index, p.text, expected, exact_str, verdict, why, value, extra)
        )
    return tuple(checks)


def _explain(
    claim: Claim,
    p: Printed,
    va: str,
    da: str | None,
    vb: str,
    db: str | None,
    sources: dict[str, str],
    substituted: bool,
) -> str:
    shown = f"as displayed, {claim.expression} = {_short(da)}"
    if not substituted:
        return f"{shown}: {_word(va)}"
    exact = f"with the values the literals stand for ({', '.join(f'{k} = {v}' for k, v in sources.items())}) it is {_short(db)}"
    good = ("exact", "rounded")
    if va in good and vb in good:
        return f"{shown} and {exact}: both readings give {p.text}"
    if vb in good:
        return f"{shown}, which does not give {p.text}; {exact}, so the article carried unrounded values (hidden precision)"
    if va in good:
        return f"{shown}, consistent with computing from the rounded inputs; {exact}, so {p.text} is a {vb}"
    return f"{shown}; {exact}: neither reading gives {p.text}"


def _word(v: str) -> str:
    return {"exact": "exactly as printed", "rounded": "correctly rounded"}.get(v, v)


def _short(s: str | None) -> str:
    if s is None:
        return "(undecided)"
    head, dot, tail = s.partition(".")
    return s if len(tail) <= 6 else f"{head}{dot}{tail[:6]}…"


def _entries(v: Any) -> list[sympy.Expr]:
    if isinstance(v, sympy.MatrixBase):
        return list(v)
    return [sympy.sympify(v) if not isinstance(v, sympy.Basic) else v]


def _resolver(trace: Any, derivation: Derivation, ev: Any, claim: Claim) -> Any:
    labels = {c.label: c for c in derivation.claims}
    done = ev.expression_values

    def resolve(name: str, index: tuple[int, ...]) -> Any:
        if name in trace:
            value = trace.value(name)
        elif name in labels:
            other = labels[name]
            if other is claim:
                raise SpecError(f"{claim.where}.expression: the claim refers to itself")
            if other.step is not None:
                value = _claim_value(trace, other)
            elif name in done:
                value = done[name]
            else:
                raise SpecError(
                    f"{claim.where}.expression: {name} is a displayed line checked later or in a cycle; "
                    "refer only to earlier displayed lines"
                )
        else:
            from symtf.suggest import close_steps

            close = close_steps(name, [*trace, *labels])
            if close:  # otherwise the expression language says it does not know the name
                raise LookupError(
                    f"no step or claim called {name!r}; did you mean {' or '.join(close)}?"
                )
            return None
        if not isinstance(value, sympy.MatrixBase):
            raise SpecError(f"{claim.where}.expression: {name} is not a matrix of numbers")
        try:
            if len(index) == 2:
                return value[index[0], index[1]]
            if len(index) == 1:
                return sympy.ImmutableMatrix(value.row(index[0]))
        except IndexError:
            raise SpecError(
                f"{claim.where}.expression: {name}{list(index)} is outside its shape {value.shape}"
            ) from None
        return value if value.shape != (1, 1) else value[0, 0]

    return resolve


def _claim_value(trace: Any, c: Claim) -> sympy.ImmutableMatrix:
    v = trace.value(c.step)
    if c.index is not None:
        return sympy.ImmutableMatrix([[v[c.index]]])
    if c.row is not None:
        return sympy.ImmutableMatrix(v.row(c.row))
    if c.col is not None:
        return sympy.ImmutableMatrix(v.col(c.col))
    return v


def _remember(ev: Any, claim: Claim, value: Any) -> None:
    m = value if isinstance(value, sympy.MatrixBase) else sympy.ImmutableMatrix([[value]])
    ev.expression_values[claim.label] = m
    if claim.printed and len(claim.printed) == 1 and len(claim.printed[0]) == 1:
        ev.printed_results.setdefault(claim.printed[0][0].text, m[0, 0])


def _substitutions(
    parsed: sx.Expression,
    claim: Claim,
    trace: Any,
    derivation: Derivation,
    ev: Any,
    resolve: Any = None,
) -> tuple[dict[int, Any], dict[str, str]]:
    """Which literals stand for which exact values: declared, repeated results, then trace entries."""
    replace: dict[int, Any] = {}
    sources: dict[str, str] = {}
    for key, ref in claim.stands_for.items():
        sign = -1 if key.strip()[:1] in ("-", "−") else 1
        text = key.strip().lstrip("-−").strip()
        lits = parsed.literals_with_text(text)
        if not lits:
            raise SpecError(f"{claim.where}.stands_for: no literal {key!r} in {claim.expression!r}")
        m = _REF.match(ref)
        if not m:
            raise SpecError(
                f"{claim.where}.stands_for.{key}: expected a reference like l0.h0.scaled[0, 2], found {ref!r}"
            )
        name, i, j = m.group(1), int(m.group(2)), m.group(3)
        if name not in trace:
            from symtf.suggest import hint

            raise SpecError(
                f"{claim.where}.stands_for.{key}: no step {name!r} in this model"
                f"{hint(name, list(trace), steps=True)}"
            )
        v = trace.value(name)
        if not isinstance(v, sympy.MatrixBase):
            raise SpecError(f"{claim.where}.stands_for.{key}: {name} is not a matrix of numbers")
        jj = int(j) if j is not None else 0
        if not (0 <= i < v.rows and 0 <= jj < v.cols):
            raise SpecError(
                f"{claim.where}.stands_for.{key}: {ref} is outside {name}'s shape {v.shape}"
            )
        for lit in lits:
            replace[lit.pos] = sign * v[i, jj]
        sources[key] = ref
    if not getattr(claim, "match_literals", True):
        return replace, sources
    results = ev.printed_results
    for lit in parsed.literals:
        if lit.pos in replace or "." not in lit.text:
            continue
        if lit.text in results:
            replace[lit.pos] = results[lit.text]
            sources[lit.text] = "an earlier displayed line's exact value"
    # the step the line computes: an entry its printed result rounds to, which the line
    # then computes exactly once its literals are read as that step's inputs
    for step, _ij, entry, _ball in _result_entries(claim, trace):
        lineage = _lineage(step, trace)
        more, more_sources = dict(replace), dict(sources)
        for lit in parsed.literals:
            if lit.pos in more or "." not in lit.text:
                continue
            found = _trace_match(lit, parsed.text, trace, lineage)
            if found is not None:
                name, (i, j), value = found
                more[lit.pos] = value
                more_sources[lit.text] = f"{name}[{i}, {j}]"
        if len(more) > len(replace) and _computes(parsed, resolve, more, entry, trace):
            return more, more_sources
    return replace, sources


def _computes(
    parsed: sx.Expression, resolve: Any, replace: dict[int, Any], entry: Any, trace: Any
) -> bool:
    """Whether the line, with these literals replaced, equals the step entry (first value).

    Decided on balls of the difference at 128 and 256 bits: a guide to which reading
    the line is, never a verdict (the verdict is then certified on that reading).
    """
    if resolve is None:
        return False
    try:
        value = parsed.evaluate(resolve, replace)
    except ExpressionError:
        return False
    first = _entries(value)[0]
    xp = trace.backend
    for prec in PRECISIONS[:2]:
        try:
            b = xp.ball(first - entry, prec)
        except (Undecided, TypeError):
            return False
        if not b.contains(0):
            return False
    return True


def _result_entries(claim: Claim, trace: Any) -> list[tuple[str, tuple[int, int], Any, Any]]:
    """Trace entries the line's first printed value is a rounding of (candidates for its step)."""
    if not claim.printed or claim.printed[0][0].is_neg_inf or claim.printed[0][0].is_fraction:
        return []
    first = claim.printed[0][0]
    lit = sx.Literal(0, first.text.lstrip("-"), sympy.Rational(abs(first.value)))
    return _matches(lit, first.text, trace)


def _lineage(step: str, trace: Any) -> dict[str, int]:
    """The steps a literal of a line computing ``step`` may stand for, by distance.

    The step's inputs are at distance 1, the inputs of its worked pieces
    (``l0.ln1.centered`` for ``l0.ln1``) at distance 2. A literal in
    ``0.241*1.1 + 0.285*1.2 = 0.607`` is then read as an input of the step printed
    as 0.607 (``l0.h0.v``), never as an equal number elsewhere in the model.
    """
    dist: dict[str, int] = {}
    for i in trace[step].inputs:
        if i in trace:
            dist[i] = 1
    for i in list(dist):
        if i.startswith(step + "."):
            for k in trace[i].inputs:
                if k in trace and k != step:
                    dist.setdefault(k, 2)
    return dist


def _trace_match(
    lit: sx.Literal, text: str, trace: Any, lineage: dict[str, int]
) -> tuple[str, tuple[int, int], Any] | None:
    """The entry of the line's lineage whose printed rounding is this literal (sign from the text).

    Among several, the nearest step wins, then the first in trace order.
    """
    hits = [h for h in _matches(lit, text, trace) if h[0] in lineage]
    if not hits:
        return None
    name, ij, e, _ = min(hits, key=lambda h: lineage[h[0]])
    return name, ij, e


def _entries_of(trace: Any) -> list[tuple[str, tuple[int, int], Any, Any]]:
    """Every finite numeric entry of a trace with its 128-bit ball (computed once per trace)."""
    cached = getattr(trace, "_symtf_entries", None)
    if cached is None:
        xp = trace.backend
        out = []
        for name in trace:
            v = trace.value(name)
            if not isinstance(v, sympy.MatrixBase):
                continue
            for i in range(v.rows):
                for j in range(v.cols):
                    e = v[i, j]
                    if e.is_infinite:
                        continue
                    try:
                        out.append((name, (i, j), e, xp.ball(e, PRECISIONS[0])))
                    except (Undecided, TypeError):
                        continue
        trace._symtf_entries = cached = out  # the trace is read-only: a safe cache
    return cached


def _matches(lit: sx.Literal, text: str, trace: Any) -> list[tuple[str, tuple[int, int], Any, Any]]:
    """Every trace entry whose printed rounding is this literal, in trace order."""
    before = text[: lit.pos].rstrip(" (")
    negative = before.endswith(("-", "−"))
    decimals = len(lit.text.partition(".")[2])
    if "e" in lit.text.lower():
        return []
    value = Fraction(lit.text)
    iv = rounding_interval(Printed(lit.text, -value if negative else value, decimals))
    lo, hi = to_fmpq(iv.lo), to_fmpq(iv.hi)  # once per literal, not once per entry
    out = []
    for name, ij, e, b in _entries_of(trace):
        if b > lo and b < hi:  # certified: the whole ball inside the open interval
            out.append((name, ij, -e if negative else e, b))
    return out
