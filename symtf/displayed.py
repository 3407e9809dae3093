"""Displayed arithmetic: check a line like ``e^2.309 ≈ 10.068`` two ways.

*As displayed*: the expression evaluated exactly with its literals as written,
which is what a reader redoing the line gets. *Exact*: the same expression with
each literal replaced by the exact value it stands for — declared in the claim
(``stands_for``), the exact reading of an earlier displayed line whose printed
result it repeats, or the trace entry it is the printed rounding of. The claim's
verdict is the exact reading's when any literal stood for something (that is
the quantity the article computes), else the displayed one's; the explanation
says which reading holds, so hidden precision is told apart from an error.
"""

from __future__ import annotations

import re
from fractions import Fraction
from typing import Any

import sympy

from symtf import expr as sx
from symtf.certify import PRECISIONS, compare_ball
from symtf.errors import ExpressionError, SpecError, Undecided
from symtf.numbers import Printed, rounding_interval
from symtf.spec import Claim, Derivation

_REF = re.compile(r"^\s*([A-Za-z_][A-Za-z0-9_.]*)\s*\[\s*(\d+)\s*(?:,\s*(\d+)\s*)?\]\s*$")


def check_expression(claim: Claim, ev: Any, derivation: Derivation) -> tuple[Any, ...]:
    """Check one expression claim; returns its :class:`~symtf.compare.Check` entries.

    Raises:
        SpecError: For an expression that cannot be parsed or evaluated, naming the claim.
    """
    from symtf.compare import Check, Quantity, classify

    where = f"{claim.where}.expression"
    assert claim.expression is not None
    try:
        parsed = sx.parse(claim.expression, where=where)
    except ExpressionError as e:
        raise SpecError(str(e)) from None
    trace = ev.exact_trace()
    xp = trace.backend
    resolve = _resolver(trace, derivation, ev, claim)
    try:
        shown = parsed.evaluate(resolve)
        replace, sources = _substitutions(parsed, claim, trace, derivation, ev)
        exact = parsed.evaluate(resolve, replace) if replace else shown
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
        va, ea, wa = classify(qa, p, claim.rounding)
        vb, eb, wb = classify(qb, p, claim.rounding)
        da, db = qa.decimal(), qb.decimal()
        substituted = bool(replace)
        verdict, expected, exact_str, value = (vb, eb, db, b) if substituted else (va, ea, da, a)
        why = _explain(claim, p, va, da, vb, db, sources, substituted)
        index = (0, k) if len(printed) > 1 else None
        extra = {
            "expression": claim.expression,
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
    parsed: sx.Expression, claim: Claim, trace: Any, derivation: Derivation, ev: Any
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
            raise SpecError(f"{claim.where}.stands_for.{key}: no step {name!r} in this model")
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
    results = ev.printed_results
    near = _near_result(claim, trace)
    for lit in parsed.literals:
        if lit.pos in replace or "." not in lit.text:
            continue
        if lit.text in results:
            replace[lit.pos] = results[lit.text]
            sources[lit.text] = "an earlier displayed line's exact value"
            continue
        found = _trace_match(lit, parsed.text, trace, near)
        if found is not None:
            name, (i, j), value = found
            replace[lit.pos] = value
            sources[lit.text] = f"{name}[{i}, {j}]"
    return replace, sources


def _near_result(claim: Claim, trace: Any) -> dict[str, int]:
    """Steps upstream of the step the line's printed result belongs to, by distance.

    A literal in ``0.241*1.1 + 0.285*1.2 = 0.607`` more likely stands for an input of
    the step printed as 0.607 (``l0.h0.v``) than for an equal number elsewhere. Used
    only when every trace entry the result could be is the same value.
    """
    if not claim.printed or claim.printed[0][0].is_neg_inf or claim.printed[0][0].is_fraction:
        return {}
    first = claim.printed[0][0]
    lit = sx.Literal(0, first.text.lstrip("-"), sympy.Rational(abs(first.value)))
    hits = _matches(lit, first.text, trace)
    balls = [b for *_, b in hits]
    if not hits or any(not a.overlaps(b) for a in balls for b in balls):
        return {}
    dist = {hits[0][0]: 0}
    frontier = [hits[0][0]]
    for d in range(1, 12):
        frontier = [i for s in frontier for i in trace[s].inputs if i in trace and i not in dist]
        for s in frontier:
            dist[s] = d
    return dist


def _trace_match(
    lit: sx.Literal, text: str, trace: Any, near: dict[str, int] | None = None
) -> tuple[str, tuple[int, int], Any] | None:
    """The trace entry whose printed rounding is this literal (sign from the text).

    Among several, the one nearest upstream of the line's result (``near``) wins, else
    the first in trace order.
    """
    hits = _matches(lit, text, trace)
    if not hits:
        return None
    if near:
        upstream = [h for h in hits if h[0] in near and near[h[0]] > 0]
        if upstream:
            name, ij, e, _ = min(upstream, key=lambda h: near[h[0]])
            return name, ij, e
    name, ij, e, _ = hits[0]
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
    out = []
    for name, ij, e, b in _entries_of(trace):
        lo, hi = compare_ball(b, iv.lo), compare_ball(b, iv.hi)
        if lo is not None and hi is not None and lo > 0 and hi < 0:
            out.append((name, ij, -e if negative else e, b))
    return out
