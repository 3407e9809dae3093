"""Say why a printed number is off, and where the article's chain first went wrong.

Three explanations are tried, in this order, for every ``slip`` or ``wrong``:

1. **Replay with the article's own numbers.** The step is recomputed from the
   printed (rounded) values of the steps before it, exactly and with each input
   widened to its rounding interval. If that reproduces the printed value, the
   number is ``propagated-rounding`` (all inputs were correctly rounded) or
   ``inherited`` from an input that is itself off — whose root is reported, so
   one mistake does not read as twenty.
2. **Convention search** (for ``wrong``): the step is recomputed under named
   alternative conventions (:mod:`symtf.graph.conventions`: no ÷√d_k, unbiased
   variance, …) and under printing conventions (truncation, percentages, a
   transposed matrix, swapped rows, another head); the smallest set that makes
   the printed values right is reported with how many entries it explains.
3. Otherwise the cause is ``unexplained``.

This module diagnoses; the causes and findings (:mod:`~symtf.checking.diagnose.findings`),
the replay (:mod:`~symtf.checking.diagnose.replay`) and the convention search
(:mod:`~symtf.checking.diagnose.conventions`) are modules of their own; causes beyond
replay are :mod:`symtf.checking.causes`.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

import sympy

from symtf.checking.diagnose.conventions import search_conventions, search_expression
from symtf.checking.diagnose.findings import CAUSES, GOOD, NOT_MISTAKES, Entry, Finding
from symtf.checking.diagnose.replay import Override, printed_values, replay_one, replay_with_printed
from symtf.checking.evaluation import Evaluator, step_prints
from symtf.checking.report import FAILING, Check, ClaimResult, DerivationReport
from symtf.checking.reuse import Reuse
from symtf.checking.wording import Names
from symtf.numbers import Printed
from symtf.spec import Claim, Derivation
from symtf.trace import Trace

# ----------------------------------------------------------------------------- diagnosis


def diagnose(
    d: Derivation, report: DerivationReport, ev: Evaluator, reuse: Reuse | None = None
) -> DerivationReport:
    """Add ``cause``, ``convention`` and ``root`` to every check that is not right.

    ``reuse``: what an earlier diagnosis of an edited version of the derivation lets this
    one take as it is (:mod:`symtf.checking.incremental`): the causes of some claims, and
    the convention variants' traces.
    """
    bad = [
        c
        for r in report.results
        for c in r.checks
        if c.verdict in FAILING and c.step is not None and "assertion" not in c.extra
    ]
    expr_bad = [
        c
        for r in report.results
        for c in r.checks
        if c.verdict in FAILING and c.step is None and "assertion" not in c.extra
    ]
    if not bad and not expr_bad:
        return report
    trace = ev.exact_trace()
    printed = printed_values(d, trace)
    from symtf.checking.causes import replay_derivation, replay_trace

    d_all, d = d, replay_derivation(d, printed)  # rope() reads the article's cos/sin tables
    trace_all, trace = trace, replay_trace(trace, d)
    status = _entry_status(report)
    exact_entries = frozenset(e for e, (v, _) in status.items() if v == "exact")
    own = _own_printed(report, trace)
    findings: dict[tuple[str, tuple[int, ...] | None, str], Finding] = {}
    replays: dict[str, tuple[Evaluator, Evaluator]] = {}
    relevant: dict[tuple[Any, ...], list[tuple[Entry, Printed]]] = {}
    # claims whose causes an earlier diagnosis found, still right: not searched again
    kept = reuse.findings(d, report, printed, status) if reuse is not None else {}

    # 1. replay each failing step from the article's own numbers
    for c in bad:
        if c.index is None or c.step is None or c.claim in kept:
            continue
        if c.step not in replays:
            replays[c.step] = (
                replay_with_printed(ev, d, Override(printed, c.step), c.step),
                replay_with_printed(
                    ev, d, Override(printed, c.step, widen=True, exact=exact_entries), c.step
                ),
            )
        f = replay_one(c, replays[c.step], trace, printed, status, d, own, relevant)
        pieces = _norm_pieces(c.step, printed)
        if f is None and pieces:
            # the article may have recomputed the norm's earlier pieces instead of
            # copying its printed ones: replay from the norm's input alone
            own_key = f"{c.step}#from-input"
            if own_key not in replays:
                replays[own_key] = (
                    replay_with_printed(ev, d, Override(printed, c.step, also=pieces), c.step),
                    replay_with_printed(
                        ev,
                        d,
                        Override(printed, c.step, widen=True, exact=exact_entries, also=pieces),
                        c.step,
                    ),
                )
            f = replay_one(
                c, replays[own_key], trace, printed, status, d, own, relevant, also=pieces
            )
        if f is not None:
            findings[(c.claim, c.index, c.printed)] = f

    # 2. convention search for the rest
    by_claim: dict[str, list[Check]] = {}
    for c in bad:
        if (c.claim, c.index, c.printed) not in findings and c.claim not in kept:
            by_claim.setdefault(c.claim, []).append(c)
    claims = {r.claim.label: r for r in report.results}
    variants: dict[tuple[str, str], Evaluator | None] = (
        {} if reuse is None else reuse.variants(d_all, ev)
    )
    rounded_cache: dict[frozenset[str], Any] = {}
    for label, checks in by_claim.items():
        # a table printed with a slip (truncated, rows or columns swapped, transposed) is the
        # simpler reading when a convention would give the same numbers
        table = _table_cause(claims[label], checks, ev, trace_all)
        if table is not None:
            for c in checks:
                findings[(c.claim, c.index, c.printed)] = table[c.index]
            continue
        f = search_conventions(claims[label], checks, d_all, ev, trace_all, variants, printed)
        if f is not None:
            for c in checks:
                findings[(c.claim, c.index, c.printed)] = f
            continue
        # a reader's slip, an operand transposed, rounded inputs (symtf.checking.causes)
        found = _further_causes(claims[label], checks, d_all, ev, trace_all, printed, rounded_cache)
        for c in checks:
            findings[(c.claim, c.index, c.printed)] = found.get(c.index) or Finding(
                "unexplained",
                "not reproduced by recomputing from the article's own printed numbers, by "
                "any common alternative convention, or by a slip in writing it down",
            )

    if reuse is not None:
        fresh: dict[str, dict[Any, Any]] = {}
        for c in bad:
            key = (c.claim, c.index, c.printed)
            if c.claim not in kept and key in findings:
                fresh.setdefault(c.claim, {})[key] = findings[key]
        reuse.found(fresh)
    for taken in kept.values():
        findings.update(taken)

    # roots: an unexplained or convention finding is its own root; an inherited one
    # takes the root of the entry it inherits from, so a chain reads as one mistake
    at: dict[Entry, Finding] = {}
    for c in bad:
        f = findings[(c.claim, c.index, c.printed)]
        if f.root is None and f.cause not in NOT_MISTAKES:
            f.root = _root(c.claim, c.step, c.index)
        if c.index is not None and c.step is not None:
            at.setdefault((c.step, *c.index), f)
    for f in list(findings.values()):
        seen = 0
        while f.cause == "inherited" and f.root is not None and seen < 100:
            up = at.get((f.root["step"], *f.root["index"]))
            if up is None or up is f or up.root is None or up.root == f.root:
                break
            f.root = up.root
            seen += 1

    # expression claims: the displayed reading tells the cause, else a convention may.
    # A line right with the numbers it displays carries forward the earlier printed numbers
    # its literals repeat: when one of them is itself off, the line is inherited from it,
    # as a step replayed from an off input is, and takes that number's root.
    searched: dict[str, Finding | None] = {}
    lines: dict[str, Finding] = {}  # label -> the finding of a displayed line that is off
    same_line: dict[int | None, list[Check]] = {}  # an article line -> its numbers' checks
    later: list[Check] = []  # lines with a term of their own chain not yet diagnosed
    for r in report.results:
        same_line.setdefault(r.claim.source_line, []).extend(r.checks)
    for c in expr_bad:
        copied = c.extra.get("copy_of")
        if copied is not None:  # a copy slip's literal (symtf.checking.lineage): its own root
            at_line = f" (line {copied['source_line']})" if copied.get("source_line") else ""
            f = Finding(
                "copy-slip",
                f"a copy slip: the line works from {copied['claim']}{at_line} and writes it "
                "down wrong",
                root=_root(c.claim, None, None),
            )
            findings[(c.claim, c.index, c.printed)] = f
            lines.setdefault(c.claim, f)
            continue
        f = _expression_finding(c)
        if f.cause == "propagated-rounding":
            unknown: list[str] = []
            f = _inherited_line(c, claims, ev, d_all, trace_all, status, at, lines, unknown) or f
            if unknown and f.cause == "propagated-rounding":
                later.append(c)
        if f.cause == "unexplained":
            if c.claim not in searched:
                searched[c.claim] = search_expression(claims[c.claim], d_all, variants, ev)
            f = (
                searched[c.claim]
                or _log_base(c, claims[c.claim].claim, ev, d_all)
                or _line_slip(c, claims[c.claim].claim, ev, d_all, same_line)
                or f
            )
        if f.cause == "unexplained":
            # a chain one of whose links is right with the numbers it displays: the result
            # was worked right from them, so what is off came with them
            f = _right_link(c, claims, ev, d_all, trace_all, status, at, lines) or f
        if f.cause == "unexplained":
            f = _written_again(c, claims, findings) or f
        if f.root is None and f.cause not in NOT_MISTAKES and f.cause != "unexplained":
            f.root = _root(c.claim, None, None)
        findings[(c.claim, c.index, c.printed)] = f
        lines.setdefault(c.claim, f)

    # a line's term may repeat a number of its own chain that is found inherited only after
    # it (the chain's result is read before its terms): read those again until none changes
    for _ in range(len(later)):
        changed = False
        for c in later:
            key = (c.claim, c.index, c.printed)
            if findings[key].cause != "propagated-rounding":
                continue
            again = _inherited_line(c, claims, ev, d_all, trace_all, status, at, lines)
            if again is None:
                continue
            if lines.get(c.claim) is findings[key]:
                lines[c.claim] = again
            findings[key] = again
            changed = True
        if not changed:
            break

    _restated(expr_bad, claims, findings)

    for f in findings.values():  # an article's root names its line too
        if f.root is not None and "source_line" not in f.root and f.root["claim"] in claims:
            line = claims[f.root["claim"]].claim.source_line
            if line is not None:
                f.root["source_line"] = line

    results = []
    for r in report.results:
        checks = []
        for c in r.checks:
            f = findings.get((c.claim, c.index, c.printed))
            if f is None:
                checks.append(c)
                continue
            extra = dict(c.extra)
            extra.update(cause=f.cause, convention=f.convention, root=f.root)
            if f.not_from:
                extra["not_from"] = f.not_from
            checks.append(
                dataclasses.replace(c, explanation=f"{c.explanation}; {f.explanation}", extra=extra)
            )
        results.append(ClaimResult(r.claim, tuple(checks)))
    return dataclasses.replace(report, results=tuple(results))


def _root(claim: str, step: str | None, index: Iterable[int] | None) -> dict[str, Any]:
    """The JSON ``root`` naming one printed number (a displayed line's has no step)."""
    return {"claim": claim, "step": step, "index": list(index) if index else None}


def _inherited_line(
    c: Check,
    claims: dict[str, ClaimResult],
    ev: Evaluator,
    d: Derivation,
    trace: Trace,
    status: dict[Entry, tuple[str, str]],
    at: dict[Entry, Finding],
    lines: dict[str, Finding],
    unknown: list[str] | None = None,
    who: str = "the line is",
) -> Finding | None:
    """A displayed line, right as displayed, that carries forward an earlier number that is off.

    The earlier numbers are those its literals repeat (:func:`symtf.checking.causes.line_inputs`):
    an earlier line's printed result, or a printed entry of a step. The first that is
    itself a slip or wrong is the line's source; its root (or itself, when it is the
    first divergence) is the line's root, so a chain of lines reads as one mistake.
    """
    from symtf.checking.causes import line_inputs

    said = Names(d.claims, trace)
    own_line = claims[c.claim].claim.source_line
    for key, ref in line_inputs(c, claims[c.claim].claim, ev, d):
        up = _off_upstream(key, ref, claims, trace, status)
        if up is None:
            continue
        label, step, index, verdict = up
        if (
            step is None
            and own_line is not None
            and label in claims
            and claims[label].claim.source_line == own_line
            and _copied(claims[label]) is None
            and _right_as_displayed(claims[label])
            and not _carries(lines.get(label))
        ):
            # a term of the line's own chain, right with the numbers it displays and off
            # only through the chain (0.001245 in "= 0.001245 - 0.00376"): the line's own
            # rounding, not an earlier mistake it carries; a term worked wrong in passing
            # ("(2×1.4=2.9)"), a miscopied literal, or a term (or the chain's result) that
            # itself carries an earlier number that is off still is the line's source
            if label not in lines and unknown is not None:
                unknown.append(label)  # not diagnosed yet: read again once it is
            continue
        found = lines.get(label) if step is None else at.get((step, *(index or ())))
        if found is not None and found.root is not None:
            root = found.root
        else:
            root = _root(label, step, index)
        source = label if step is None else said.entry(step, index or ())
        first = (
            root["claim"] if root["step"] is None else said.entry(root["step"], root["index"] or ())
        )
        via = f" (through {source})" if first != source else ""
        what = "a slip" if verdict == "slip" else "wrong"
        copied = _copied(claims.get(label)) if step is None else None
        if copied is not None:  # the literal is a copy slip (symtf.checking.lineage)
            return Finding(
                "inherited",
                f"inherited from {first}{via}: {who} right with the numbers it displays, "
                f"and its {key} is a miscopy of {copied['claim']}'s {copied['printed']}",
                root=root,
            )
        return Finding(
            "inherited",
            f"inherited from {first}{via}: {who} right with the numbers it displays, "
            f"and its {key} repeats {source}, which is itself {what}",
            root=root,
        )
    return None


def _carries(found: Finding | None) -> bool:
    """Whether a displayed line's finding carries an earlier number that is off."""
    return found is not None and found.cause == "inherited" and found.root is not None


def _right_link(
    c: Check,
    claims: dict[str, ClaimResult],
    ev: Evaluator,
    d: Derivation,
    trace: Trace,
    status: dict[Entry, tuple[str, str]],
    at: dict[Entry, Finding],
    lines: dict[str, Finding],
) -> Finding | None:
    """A chain's number off for the quantity, one of whose links is right as displayed.

    ``e^{4.3} + e^{3.6} + e^{1.7} = 73 + 36 + 5 = 114``: the last link is exact with the
    numbers it writes, so the chain's result was worked right from them and what is off
    came with them. When one of them repeats an earlier number that is off (the 73 of a
    line above, e^{4.3} truncated), the number is ``inherited`` from it; otherwise the
    link's numbers are the article's roundings and the cause is ``propagated-rounding``.
    """
    links = c.extra.get("links")
    chosen = c.extra.get("link")
    if not isinstance(links, list) or not isinstance(chosen, int):
        return None
    right = [
        j
        for j, link in enumerate(links)
        if j != chosen and (link.get("as_displayed") or {}).get("verdict") in GOOD
    ]
    if not right:
        return None
    j = right[-1]
    link = links[j]
    who = f"link {j + 1} of {len(links)}, {link['expression']}, is"
    narrowed = dataclasses.replace(
        c, extra={**c.extra, "link": j, "exact_reading": link.get("exact_reading") or {}}
    )
    found = _inherited_line(narrowed, claims, ev, d, trace, status, at, lines, who=who)
    if found is None:
        found = _repeats_off(c, link["expression"], claims, d, trace, at, lines, who)
    if found is not None:
        return found
    return Finding(
        "propagated-rounding",
        f"{who} right with the numbers it displays; their rounding moved the result",
    )


def _written_again(
    c: Check, claims: dict[str, ClaimResult], findings: dict[Any, Finding]
) -> Finding | None:
    """The same expression printed as the same number, already off on an earlier line.

    ``\\frac{36}{114}`` under ``\\frac{e^{3.6}}{e^{4.3} + e^{3.6} + e^{1.7}}`` writes again
    the 114 an earlier line worked out for ``e^{4.3} + e^{3.6} + e^{1.7}``: when that one is
    off, this one carries it (``inherited``, with its root), the nearest such line above.
    """
    own = claims[c.claim].claim.source_line
    mine = _expressions(c)
    if own is None or not mine:
        return None
    best: tuple[int, Check] | None = None
    for label, result in claims.items():
        line = result.claim.source_line
        if label == c.claim or line is None or line >= own:
            continue
        for ch in result.checks:
            if (
                ch.step is None
                and ch.verdict in FAILING
                and ch.printed == c.printed
                and _expressions(ch) & mine
                and (best is None or line > best[0])
            ):
                best = (line, ch)
    if best is None:
        return None
    ch = best[1]
    up = findings.get((ch.claim, ch.index, ch.printed))
    root = up.root if up is not None and up.root is not None else _root(ch.claim, None, None)
    what = "a slip" if ch.verdict == "slip" else "wrong"
    return Finding(
        "inherited",
        f"inherited from {root['claim']}: it writes again the {ch.printed} that {ch.claim} "
        f"works out for the same expression, which is itself {what}",
        root=root,
    )


def _expressions(c: Check) -> set[str]:
    """The expressions a displayed check's number is the value of (each link of a chain)."""
    out = {c.extra.get("expression")}
    for link in c.extra.get("links") or ():
        out.add(link.get("expression"))
    return {e.replace(" ", "") for e in out if isinstance(e, str) and e}


def _repeats_off(
    c: Check,
    expression: str,
    claims: dict[str, ClaimResult],
    d: Derivation,
    trace: Trace,
    at: dict[Entry, Finding],
    lines: dict[str, Finding],
    who: str,
) -> Finding | None:
    """A literal of a chain's link that writes again a number printed off on an earlier line
    (or another claim of the same line), the nearest one above; ``None`` when none does.
    Only numbers of two significant digits or more are matched by what they print."""
    from symtf.errors import ExpressionError
    from symtf.language.latexmath import parse as parse_expression

    own = claims[c.claim].claim.source_line
    if own is None:
        return None
    try:
        literals = parse_expression(expression, where=c.claim).literals
    except ExpressionError:
        return None

    def bare(t: str) -> str:
        return t.replace("−", "-").strip()

    said = Names(d.claims, trace)
    for lit in literals:
        if len("".join(ch for ch in lit.text if ch.isdigit()).lstrip("0")) < 2:
            continue  # a one-digit number (a 1, a 0.5) is written too often to tell its source
        best: tuple[int, Check] | None = None
        for label, result in claims.items():
            line = result.claim.source_line
            if label == c.claim or line is None or line > own:
                continue
            if (
                line == own
                and result.claim.expression is not None
                and _copied(result) is None
                and _right_as_displayed(result)
                and not _carries(lines.get(label))
            ):
                continue  # a term of the line's own chain, off only by its own rounding
            for ch in result.checks:
                if ch.verdict in FAILING and bare(ch.printed) == bare(lit.text):
                    if best is None or line > best[0]:
                        best = (line, ch)
                    break
        if best is None:
            continue
        ch = best[1]
        if ch.step is not None and ch.index is not None:
            up = at.get((ch.step, *ch.index))
            source = said.entry(ch.step, ch.index)
        else:
            up = lines.get(ch.claim)
            source = ch.claim
        root = up.root if up is not None and up.root is not None else None
        if root is None:
            root = _root(ch.claim, ch.step, ch.index)
        first = (
            root["claim"] if root["step"] is None else said.entry(root["step"], root["index"] or ())
        )
        via = f" (through {source})" if first != source else ""
        what = "a slip" if ch.verdict == "slip" else "wrong"
        return Finding(
            "inherited",
            f"inherited from {first}{via}: {who} right with the numbers it displays, and its "
            f"{lit.text} repeats the {ch.printed} of {source}, which is itself {what}",
            root=root,
        )
    return None


def _restated(
    off: list[Check], claims: dict[str, ClaimResult], findings: dict[Any, Finding]
) -> None:
    """A number written again (a claim that ``restates`` an earlier one) carries the earlier
    number's mistake forward: when the number it repeats is off, its own finding is that
    it is inherited from it, with its root, so one mistake does not read as many."""
    for c in off:
        first = claims[c.claim].claim.restates
        if first is None or first not in claims:
            continue
        earlier = [
            e for e in claims[first].checks if e.printed == c.printed and e.verdict in FAILING
        ]
        if not earlier:
            continue  # the number it repeats is right: its own reading stands
        e = earlier[0]
        up = findings.get((e.claim, e.index, e.printed))
        root = up.root if up is not None and up.root is not None else _root(first, None, None)
        what = "a slip" if e.verdict == "slip" else "wrong"
        findings[(c.claim, c.index, c.printed)] = Finding(
            "inherited",
            f"inherited from {root['claim']}: it writes again the {c.printed} of {first}, "
            f"which is itself {what}",
            root=root,
        )


def _right_as_displayed(result: ClaimResult) -> bool:
    """Whether every check of a displayed claim is right with the numbers it displays."""
    shown = [c.extra.get("as_displayed") for c in result.checks]
    return bool(shown) and all(
        isinstance(x, dict) and x.get("verdict") in ("exact", "rounded") for x in shown
    )


def _copied(result: ClaimResult | None) -> dict[str, Any] | None:
    """What a copy slip's literal copies, when ``result`` is the claim of one."""
    if result is None or len(result.checks) != 1:
        return None
    copied = result.checks[0].extra.get("copy_of")
    return copied if isinstance(copied, dict) else None


def _off_upstream(
    key: str,
    ref: str,
    claims: dict[str, ClaimResult],
    trace: Trace,
    status: dict[Entry, tuple[str, str]],
) -> tuple[str, str | None, tuple[int, ...] | None, str] | None:
    """The printed number a literal repeats, when it is off: (claim, step, index, verdict).

    ``ref`` is what the exact reading says the literal stands for: an earlier line's label,
    or a step reference (``step[i, j]``, ``vec[k]``, a row ``step[i]``, a bare step).
    """
    import re

    # a number of an earlier line's matrix result names its place: "W update, row 2, column 2"
    line = ref.partition(", row ")[0]
    if line != ref and line in claims:
        ref = line
    if ref in claims:  # an earlier displayed line's result
        result = claims[ref]

        def bare(t: str) -> str:
            return t.replace("−", "-").lstrip("-").strip()

        wanted = {bare(t) for t in key.strip("[]").split(",")}
        off = [ch for ch in result.checks if ch.verdict in FAILING]
        if not key.strip().startswith("[") and any(
            bare(ch.printed) == bare(key) for ch in result.checks
        ):
            off = [ch for ch in off if bare(ch.printed) == bare(key)]  # that number only
        mine = [ch for ch in off if bare(ch.printed) in wanted] or off
        return (ref, None, None, mine[0].verdict) if mine else None
    if ref.strip() in trace:
        name, where = ref.strip(), None
    else:
        m = re.fullmatch(r"\s*(.+?)\s*\[\s*(\d+)\s*(?:,\s*(\d+)\s*)?\]\s*", ref)
        if m is None or m.group(1) not in trace:
            return None
        name = m.group(1)
        where = (int(m.group(2)), None if m.group(3) is None else int(m.group(3)))
    v = trace.value(name)
    if not isinstance(v, sympy.MatrixBase):
        return None
    true = trace.true_shape(name) or v.shape
    if where is None:
        places = [(i, j) for i in range(v.rows) for j in range(v.cols)]
    elif where[1] is not None:
        places = [(where[0], where[1])]
    elif len(true) == 1:
        places = [(0, where[0])]
    else:
        places = [(where[0], j) for j in range(v.cols)]
    for i, j in places:
        for idx in ((i, j), (j,)) if i == 0 and len(true) == 1 else ((i, j),):
            got = status.get((name, *idx))
            if got is not None and got[0] in FAILING:
                return got[1], name, idx, got[0]
    return None


def _further_causes(
    result: ClaimResult,
    checks: list[Check],
    d: Derivation,
    ev: Evaluator,
    trace: Trace,
    printed: dict[str, dict[tuple[int, ...], Printed]],
    rounded_cache: dict[frozenset[str], Any],
) -> dict[tuple[int, ...] | None, Finding]:
    """Causes for off entries no replay or convention reproduces (symtf.checking.causes)."""
    from symtf.checking import causes

    out: dict[tuple[int, ...] | None, Finding] = {}

    def take(found: causes.Cause | None) -> None:
        if found is None:
            return
        f = Finding(found.cause, found.text, convention=list(found.convention))
        for idx in found.entries:
            out.setdefault(idx, f)

    # an operand transposed (the whole claim), then single entries, then rounded inputs
    take(causes.transposed_operand(result, checks, d, trace))
    rest = [c for c in checks if c.index not in out]
    for found in causes.entry_causes(result, rest, ev, trace, printed) if rest else ():
        take(found)
    rest = [c for c in checks if c.index not in out]
    if rest:
        take(causes.rounded_inputs_cause(d, result, rest, rounded_cache))
    return out


def _table_cause(
    result: ClaimResult, checks: list[Check], ev: Evaluator, trace: Trace
) -> dict[tuple[int, ...] | None, Finding] | None:
    """Slips of the whole printed table that reproduce every off entry of the claim, by entry."""
    from symtf.checking.causes import table_causes

    out: dict[tuple[int, ...] | None, Finding] = {}
    for found in table_causes(result, checks, ev, trace):
        f = Finding(found.cause, found.text)
        for idx in found.entries:
            out[idx] = f
    if not out or any(c.index not in out for c in checks):
        return None
    return out


def _log_base(c: Check, claim: Claim, ev: Evaluator, d: Derivation) -> Finding | None:
    from symtf.checking import bases

    found = bases.cause(c, claim, ev, d)
    return None if found is None else Finding(found.cause, found.text, list(found.convention))


def _line_slip(
    c: Check,
    claim: Claim,
    ev: Evaluator,
    d: Derivation,
    same_line: Mapping[int | None, Sequence[Check]],
) -> Finding | None:
    from symtf.checking.causes import line_slip

    line = claim.source_line
    others = [o for o in same_line.get(line, ()) if o is not c] if line is not None else []
    found = line_slip(c, claim, ev, d, others)
    return None if found is None else Finding(found.cause, found.text)


_PIECES = (".mean", ".centered", ".var", ".std", ".ms", ".rms")


def _norm_pieces(step: str, printed: dict[str, Any]) -> frozenset[str]:
    """The printed worked pieces of the norm ``step`` belongs to (``step`` itself excluded)."""
    norm = step
    for piece in _PIECES:
        if step.endswith(piece):
            norm = step[: -len(piece)]
    names = {norm, *(norm + piece for piece in _PIECES)} - {step}
    return frozenset(n for n in names if n in printed and (n != norm or norm != step))


def _own_printed(
    report: DerivationReport, trace: Trace
) -> dict[tuple[str, tuple[int, ...] | None], Printed]:
    """(claim label, index) -> the Printed value that claim shows there."""
    out: dict[tuple[str, tuple[int, ...] | None], Printed] = {}
    for c, pairs in step_prints((r.claim for r in report.results), trace):
        for ij, p in pairs:
            out[(c.label, ij)] = p
    return out


def _entry_status(report: DerivationReport) -> dict[Entry, tuple[str, str]]:
    """(step, i, j) -> (verdict, claim label); a ``feeds = true`` claim wins, else the first."""
    out: dict[Entry, tuple[str, str]] = {}
    results = sorted(report.results, key=lambda r: not getattr(r.claim, "feeds", False))
    for r in results:
        for c in r.checks:
            if c.step is not None and c.index is not None:
                out.setdefault((c.step, *c.index), (c.verdict, c.claim))
    return out


def _expression_finding(c: Check) -> Finding:
    shown = c.extra.get("as_displayed", {})
    if shown.get("verdict") in GOOD:
        return Finding(
            "propagated-rounding",
            "the line is right with the numbers it displays; their rounding moved the result",
        )
    return Finding(
        "unexplained", "neither the displayed numbers nor the exact values give the printed result"
    )


__all__ = ["CAUSES", "diagnose", "printed_values"]
