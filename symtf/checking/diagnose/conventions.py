"""Convention search: a wrong step recomputed under named alternative conventions
(:mod:`symtf.graph.conventions`: no ÷√d_k, unbiased variance, …) and printing conventions
(truncation, percentages, a transposed matrix, swapped rows, another head); the smallest
set that makes the printed values right is reported with how many entries it explains.
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Iterator
from typing import Any

import sympy
from flint import arb

from symtf.checking.diagnose.findings import GOOD, Finding
from symtf.checking.diagnose.replay import downstream
from symtf.checking.evaluation import Evaluator, Quantity, classify
from symtf.checking.report import Check, ClaimResult
from symtf.checking.reuse import seeds_of
from symtf.checking.wording import Names
from symtf.errors import SymtfError
from symtf.numbers import Printed
from symtf.spec import Claim, Derivation
from symtf.trace import Trace

# ----------------------------------------------------------------------------- convention search


def search_expression(
    result: ClaimResult,
    d: Derivation,
    variants: dict[tuple[str, str], Evaluator | None],
    base: Evaluator | None = None,
) -> Finding | None:
    """A named convention under which every value of a displayed line is right.

    Only lines that read the model (a step reference, or a literal standing for an
    entry) can change under a convention; others are left unexplained.
    """
    from symtf.checking import lineage
    from symtf.checking.displayed import check_expression
    from symtf.errors import ExpressionError
    from symtf.language import expr as sx
    from symtf.language.latexmath import split_links

    claim = result.claim
    reads_model = any(c.extra.get("exact_reading", {}).get("stands_for") for c in result.checks)
    if not reads_model:
        try:
            reads_model = any(
                sx.parse(link).references for link in split_links(claim.expression or "")
            )
        except ExpressionError:
            return None
    if not reads_model:
        return None
    try:
        from symtf.graph.conventions import SWITCHES
    except ImportError:  # pragma: no cover - conventions ship with symtf
        return None
    for sw in SWITCHES:
        try:
            scopes = sw.scopes(d)
        except SymtfError:
            continue
        for scope in scopes:
            if (sw.name, scope) not in variants:
                try:
                    variants[(sw.name, scope)] = Evaluator(
                        sw.apply(d, scope), base=base, seeds=seeds_of(variants, (sw.name, scope))
                    )
                except SymtfError:
                    variants[(sw.name, scope)] = None
            variant = variants[(sw.name, scope)]
            if variant is None:
                continue
            try:
                checks, _ = lineage.split(check_expression(claim, variant, variant.derivation))
            except (SymtfError, TypeError):
                continue
            if checks and all(ch.verdict in GOOD for ch in checks):
                where = f" in {Names(d.claims).scope(scope)}" if scope else ""
                return Finding(
                    "convention",
                    f"reproduced under a different convention: {sw.doc}{where}",
                    convention=[sw.name + (f"@{scope}" if scope else "")],
                )
    return None


def convention_variants(
    d: Derivation,
    trace: Trace,
    step: str,
    cache: dict[tuple[str, str], Evaluator | None],
    base: Evaluator | None = None,
) -> Iterator[tuple[Any, str, Evaluator]]:
    """Every named convention switch whose scope reaches ``step``, with its evaluator.

    Yields ``(switch, scope, evaluator)``; evaluators are built once per
    ``(switch, scope)`` and kept in ``cache`` (``None`` where the switch does not
    apply to this model), so a caller looping over many steps shares them.
    """
    from symtf.graph.conventions import SWITCHES

    for sw in SWITCHES:
        try:
            scopes = sw.scopes(d)
        except SymtfError:
            continue
        for scope in scopes:
            if step not in _scope_steps(trace, scope):
                continue
            if (sw.name, scope) not in cache:
                try:
                    cache[(sw.name, scope)] = Evaluator(
                        sw.apply(d, scope), base=base, seeds=seeds_of(cache, (sw.name, scope))
                    )
                except SymtfError:
                    cache[(sw.name, scope)] = None
            variant = cache[(sw.name, scope)]
            if variant is not None:
                yield sw, scope, variant


def _scope_steps(trace: Trace, scope: str) -> set[str]:
    if not scope:
        return set(trace)
    start = {n for n in trace if n == scope or n.startswith(scope + ".")}
    return downstream(trace, start)


def search_conventions(
    result: ClaimResult,
    checks: list[Check],
    d: Derivation,
    ev: Evaluator,
    trace: Trace,
    variants: dict[tuple[str, str], Evaluator | None],
    printed: dict[str, dict[tuple[int, ...], Printed]] | None = None,
) -> Finding | None:
    claim = result.claim
    step = claim.step
    assert step is not None
    failing = {(c.index, c.printed) for c in checks}

    def explains(
        qfor: Callable[[tuple[int, ...]], Quantity | None],
        mode: str = "half-up",
        rows: set[tuple[int, ...]] | None = None,
    ) -> int | None:
        """How many failing entries become right; None if any entry of the claim is then off.

        With ``rows``, only the entries of those rows (index without its last part) count.
        """
        n = 0
        for c in result.checks:
            if c.index is None:
                return None
            if rows is not None and tuple(c.index[:-1]) not in rows:
                continue
            q = qfor(c.index)
            if q is None:
                return None
            p = _printed_of(claim, c)
            try:
                v = classify(q, p, mode)[0]
            except (SymtfError, TypeError):
                return None
            if v not in GOOD:
                return None
            if (c.index, c.printed) in failing:
                n += 1
        return n

    # (explained, convention names, doc, variant evaluator or None, rows or None)
    candidates: list[tuple[int, list[str], str, Evaluator | None, set[tuple[int, ...]] | None]] = []
    row_candidates: list[
        tuple[int, list[str], str, Evaluator | None, set[tuple[int, ...]] | None]
    ] = []
    user_step = step in {s.name for s in getattr(d, "steps", ())}
    said = Names(d.claims, trace)
    bad_rows = {tuple(c.index[:-1]) for c in checks if c.index is not None}

    # printing conventions on the claim itself (the reader's slips in the writing down,
    # truncation, swapped rows, a transposed table, come after: symtf.checking.causes)
    n = explains(lambda ij: _scaled(ev.entry(step, *ij), 100))
    if n:
        candidates.append(
            (n, ["percentage"], "the printed values are percentages (×100)", None, None)
        )
    other = _other_heads(step, trace)
    for alt in other:
        n = explains(functools.partial(_entry_of, ev, alt))
        if n:
            candidates.append(
                (n, [f"head-{alt}"], f"these are the values of {said.step(alt)}", None, None)
            )

    # pipeline conventions
    for sw, scope, variant in convention_variants(d, trace, step, variants, ev):
        n = _explains_variant(explains, variant, step)
        if n:
            where = f" in {said.scope(scope)}" if scope else ""
            candidates.append(
                (
                    n,
                    [f"{sw.name}" + (f"@{scope}" if scope else "")],
                    f"{sw.doc}{where}",
                    variant,
                    None,
                )
            )
        elif user_step:
            # A worked example computes row by row: one row may follow another convention.
            n = _explains_variant(lambda qfor: explains(qfor, rows=bad_rows), variant, step)
            if n:
                shown = ", ".join(", ".join(str(k + 1) for k in r) for r in sorted(bad_rows))
                row_candidates.append(
                    (
                        n,
                        [f"{sw.name}@{scope}"],
                        f"{sw.doc} in {said.scope(scope)}, for row {shown} of {said.step(step)} only",
                        variant,
                        bad_rows,
                    )
                )
    if not candidates:
        candidates = row_candidates
    if not candidates:
        return None
    return _consistent_convention(candidates, checks, ev, trace, step, printed, said)


def _consistent_convention(
    candidates: list[tuple[int, list[str], str, Evaluator | None, set[tuple[int, ...]] | None]],
    checks: list[Check],
    ev: Evaluator,
    trace: Trace,
    step: str,
    printed: dict[str, dict[tuple[int, ...], Printed]] | None,
    said: Names,
) -> Finding:
    """The best convention that contradicts none of the step's printed inputs.

    A convention that would make a printed input wrong (the biased variance, where the
    article's printed variance divides by d − 1) is offered only if no other explains as
    much, and then for this step alone, naming the inputs it was not computed from.
    """
    from symtf.checking.causes import contradicted_inputs, entries_text

    ranked = sorted(candidates, key=lambda t: (-t[0], len(t[1])))
    first = None
    for n, names, doc, variant, rows in ranked:
        against = (
            []
            if variant is None or printed is None
            else contradicted_inputs(ev, variant, trace, step, printed, rows)
        )
        if not against:
            return Finding(
                "convention",
                f"reproduced under a different convention: {doc} (explains {n} of {len(checks)} off entries)",
                convention=names,
            )
        if first is None:
            first = (n, names, doc, against)
    assert first is not None
    n, names, doc, against = first
    inputs = sorted({s for s, _, _ in against}, key=list(trace).index)
    verb = "does" if len(against) == 1 else "do"
    f = Finding(
        "convention",
        f"reproduced if {said.step(step)} was computed as if {doc} (explains {n} of "
        f"{len(checks)} off entries); but the printed {entries_text(against, said)} {verb} not "
        f"follow that convention, so {said.step(step)} was not computed from the article's "
        f"{', '.join(said.step(s) for s in inputs)}",
        convention=names,
    )
    f.not_from = [f"{s}[{', '.join(map(str, idx))}]" for s, idx, _ in against]
    return f


def _explains_variant(
    explains: Callable[..., int | None], variant: Evaluator, step: str
) -> int | None:
    try:
        t = variant.ball_trace(128) or variant.exact_trace()
    except SymtfError:
        return None
    if step not in t:
        return None
    return explains(lambda ij: variant.entry(step, *ij))


def _printed_of(claim: Claim, c: Check) -> Printed:
    for row in claim.printed:
        for p in row:
            if p.text == c.printed:
                return p
    raise AssertionError("printed value not in claim")


def _scaled(q: Quantity, k: int) -> Quantity:
    def ball(prec: int) -> arb | None:
        b = q.ball(prec)
        return None if b is None else b * k

    def exact() -> tuple[sympy.Expr, Any]:
        e, xp = q.exact()
        return e * k, xp

    return Quantity(ball, exact)


def _entry_of(ev: Evaluator, step: str, ij: tuple[int, ...]) -> Quantity:
    """``ev``'s quantity at ``step[i, j]``."""
    return ev.entry(step, *ij)


def _other_heads(step: str, trace: Trace) -> list[str]:
    parts = step.split(".")
    if len(parts) < 3 or not parts[1].startswith("h") or not parts[1][1:].isdigit():
        return []
    out = []
    for name in trace:
        q = name.split(".")
        same_place = len(q) == len(parts) and q[0] == parts[0] and q[2:] == parts[2:]
        if (
            same_place
            and q[1] != parts[1]
            and q[1].startswith("h")
            and trace.shape(name) == trace.shape(step)
        ):
            out.append(name)
    return out
