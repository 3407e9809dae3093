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
"""

from __future__ import annotations

import dataclasses
import functools
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from fractions import Fraction
from typing import Any, cast

import sympy
from flint import arb, fmpq

from symtf.checking.evaluation import Evaluator, Quantity, classify, step_prints
from symtf.checking.report import FAILING, Check, ClaimResult, DerivationReport
from symtf.checking.reuse import Reuse, seeds_of
from symtf.checking.wording import Names
from symtf.errors import SymtfError
from symtf.numbers import Printed
from symtf.spec import Claim, Derivation
from symtf.tensor import Tensor
from symtf.trace import Trace

CAUSES = (
    "propagated-rounding",
    "inherited",
    "convention",
    "rounded-inputs",
    "truncation",
    "decimal-shift",
    "digit-transposition",
    "sign-flip",
    "copied-neighbour",
    "swapped-rows",
    "swapped-columns",
    "transposed",
    "transposed-operand",
    "copy-slip",
    "unexplained",
)
#: Causes that are not a mistake of the article: no root is named for them.
NOT_MISTAKES = ("propagated-rounding", "rounded-inputs")
GOOD = ("exact", "rounded")

Entry = tuple[str, *tuple[int, ...]]  # (step, *index): (step, i, j) for a matrix


# ----------------------------------------------------------------------------- the article's numbers


def printed_values(d: Derivation, trace: Trace) -> dict[str, dict[tuple[int, ...], Printed]]:
    """Every printed entry of every step claim, by step and (i, j).

    When an entry is printed twice, a claim marked ``feeds = true`` wins, else the first.
    """
    out: dict[str, dict[tuple[int, ...], Printed]] = {}
    # a claim marked feeds = true is the print later steps used: it wins whatever the order
    feeding_first = sorted(d.claims, key=lambda c: not getattr(c, "feeds", False))
    for c, pairs in step_prints(feeding_first, trace):
        for ij, p in pairs:
            if p.value is not None:  # not a printed ±∞
                # step_prints yields only claims of a step
                out.setdefault(cast(str, c.step), {}).setdefault(ij, p)
    return out


def _finite(p: Printed) -> Fraction:
    """The value of a print :func:`printed_values` kept (it keeps no printed ±∞)."""
    return cast(Fraction, p.value)


class _Override:
    """Replace printed entries of steps (other than ``skip``) by the article's numbers."""

    def __init__(
        self,
        printed: dict[str, dict[tuple[int, ...], Printed]],
        skip: str,
        *,
        widen: bool = False,
        nudge: Entry | None = None,
        exact: frozenset[tuple[Any, ...]] = frozenset(),
        also: frozenset[str] = frozenset(),
    ) -> None:
        self.printed = printed
        self.skip = skip
        self.also = also  # further steps left as computed (a norm's own worked pieces)
        self.widen = widen
        self.exact = exact  # entries printed exactly: no rounding interval to widen to
        self.nudge = nudge  # add 1 to this entry, to find which inputs an output depends on

    def touches(self) -> frozenset[str]:
        """The steps whose values this override changes (the evaluation computes them again)."""
        return frozenset(n for n in self.printed if n != self.skip and n not in self.also)

    def __call__(self, name: str, value: Any) -> Any:
        entries = self.printed.get(name)
        if not entries or name == self.skip or name in self.also or isinstance(value, tuple):
            return value
        if isinstance(value, Tensor):  # an N-D user step
            data = list(value.data)
            for idx, p in entries.items():
                bump = 1 if self.nudge == (name, *idx) else 0
                if isinstance(data[0], sympy.Basic):
                    new: Any = sympy.Rational(_finite(p).numerator, _finite(p).denominator) + bump
                else:
                    new = arb(fmpq(_finite(p).numerator, _finite(p).denominator)) + bump
                    if self.widen and not p.is_fraction and (name, *idx) not in self.exact:
                        half = p.ulp / 2
                        new = arb(new, arb(fmpq(half.numerator, half.denominator)).upper())
                data[value.offset(idx)] = new
            return Tensor(value.shape, data)
        if isinstance(value, sympy.MatrixBase):
            m = value.as_mutable()
            for (i, j), p in entries.items():
                bump = 1 if self.nudge == (name, i, j) else 0
                m[i, j] = sympy.Rational(_finite(p).numerator, _finite(p).denominator) + bump
            return sympy.ImmutableMatrix(m)
        rows = value.tolist()
        for (i, j), p in entries.items():
            bump = 1 if self.nudge == (name, i, j) else 0
            mid = arb(fmpq(_finite(p).numerator, _finite(p).denominator)) + bump
            if self.widen and not p.is_fraction and (name, i, j) not in self.exact:
                half = p.ulp / 2
                mid = arb(mid, arb(fmpq(half.numerator, half.denominator)).upper())
            rows[i][j] = mid
        from flint import arb_mat

        return arb_mat(rows)


def _replay(ev: Evaluator, d: Derivation, override: _Override, step: str) -> Evaluator:
    """An evaluator of ``step`` with the article's printed numbers put in for other steps.

    It starts from ``ev``'s traces: only the steps downstream of a printed value, on the
    way to ``step``, are computed again.
    """
    return Evaluator(d, base=ev, override=override, fresh=override.touches(), needed={step})


# ----------------------------------------------------------------------------- graph helpers


def _upstream_printed(trace: Trace, step: str, printed: dict[str, Any]) -> list[str]:
    """Printed steps reached walking back from ``step`` (stopping at each printed one)."""
    from symtf.checking.causes import upstream_printed

    return upstream_printed(trace, step, printed)


def _downstream(trace: Trace, roots: Iterable[str]) -> set[str]:
    """The steps computed (directly or not) from any of ``roots``."""
    hit = set(roots)
    for name in trace:
        if any(i in hit for i in trace[name].inputs):
            hit.add(name)
    return hit


# ----------------------------------------------------------------------------- diagnosis


@dataclasses.dataclass
class _Finding:
    cause: str
    explanation: str
    convention: list[str] = dataclasses.field(default_factory=list)
    root: dict[str, Any] | None = None
    #: Printed input entries a convention for this step alone was not computed from.
    not_from: list[str] | None = None


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
    findings: dict[tuple[str, tuple[int, ...] | None, str], _Finding] = {}
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
                _replay(ev, d, _Override(printed, c.step), c.step),
                _replay(ev, d, _Override(printed, c.step, widen=True, exact=exact_entries), c.step),
            )
        f = _replay_one(c, replays[c.step], trace, printed, status, d, own, relevant)
        pieces = _norm_pieces(c.step, printed)
        if f is None and pieces:
            # the article may have recomputed the norm's earlier pieces instead of
            # copying its printed ones: replay from the norm's input alone
            own_key = f"{c.step}#from-input"
            if own_key not in replays:
                replays[own_key] = (
                    _replay(ev, d, _Override(printed, c.step, also=pieces), c.step),
                    _replay(
                        ev,
                        d,
                        _Override(printed, c.step, widen=True, exact=exact_entries, also=pieces),
                        c.step,
                    ),
                )
            f = _replay_one(
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
        f = _search(claims[label], checks, d_all, ev, trace_all, variants, printed)
        if f is not None:
            for c in checks:
                findings[(c.claim, c.index, c.printed)] = f
            continue
        # a reader's slip, an operand transposed, rounded inputs (symtf.checking.causes)
        found = _further_causes(claims[label], checks, d_all, ev, trace_all, printed, rounded_cache)
        for c in checks:
            findings[(c.claim, c.index, c.printed)] = found.get(c.index) or _Finding(
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
    at: dict[Entry, _Finding] = {}
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
    searched: dict[str, _Finding | None] = {}
    lines: dict[str, _Finding] = {}  # label -> the finding of a displayed line that is off
    same_line: dict[int | None, list[Check]] = {}  # an article line -> its numbers' checks
    for r in report.results:
        same_line.setdefault(r.claim.source_line, []).extend(r.checks)
    for c in expr_bad:
        copied = c.extra.get("copy_of")
        if copied is not None:  # a copy slip's literal (symtf.checking.lineage): its own root
            at_line = f" (line {copied['source_line']})" if copied.get("source_line") else ""
            f = _Finding(
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
            f = _inherited_line(c, claims, ev, d_all, trace_all, status, at, lines) or f
        if f.cause == "unexplained":
            if c.claim not in searched:
                searched[c.claim] = _search_expression(claims[c.claim], d_all, variants, ev)
            f = (
                searched[c.claim]
                or _log_base(c, claims[c.claim].claim, ev, d_all)
                or _line_slip(c, claims[c.claim].claim, ev, d_all, same_line)
                or f
            )
        if f.root is None and f.cause not in NOT_MISTAKES and f.cause != "unexplained":
            f.root = _root(c.claim, None, None)
        findings[(c.claim, c.index, c.printed)] = f
        lines.setdefault(c.claim, f)

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
    at: dict[Entry, _Finding],
    lines: dict[str, _Finding],
) -> _Finding | None:
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
        ):
            # a term of the line's own chain, right with the numbers it displays and off
            # only through the chain (0.001245 in "= 0.001245 - 0.00376"): the line's own
            # rounding, not an earlier mistake it carries; a term worked wrong in passing
            # ("(2×1.4=2.9)") or a miscopied literal still is the line's source
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
            return _Finding(
                "inherited",
                f"inherited from {first}{via}: the line is right with the numbers it displays, "
                f"and its {key} is a miscopy of {copied['claim']}'s {copied['printed']}",
                root=root,
            )
        return _Finding(
            "inherited",
            f"inherited from {first}{via}: the line is right with the numbers it displays, "
            f"and its {key} repeats {source}, which is itself {what}",
            root=root,
        )
    return None


def _restated(
    off: list[Check], claims: dict[str, ClaimResult], findings: dict[Any, _Finding]
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
        findings[(c.claim, c.index, c.printed)] = _Finding(
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
) -> dict[tuple[int, ...] | None, _Finding]:
    """Causes for off entries no replay or convention reproduces (symtf.checking.causes)."""
    from symtf.checking import causes

    out: dict[tuple[int, ...] | None, _Finding] = {}

    def take(found: causes.Cause | None) -> None:
        if found is None:
            return
        f = _Finding(found.cause, found.text, convention=list(found.convention))
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
) -> dict[tuple[int, ...] | None, _Finding] | None:
    """Slips of the whole printed table that reproduce every off entry of the claim, by entry."""
    from symtf.checking.causes import table_causes

    out: dict[tuple[int, ...] | None, _Finding] = {}
    for found in table_causes(result, checks, ev, trace):
        f = _Finding(found.cause, found.text)
        for idx in found.entries:
            out[idx] = f
    if not out or any(c.index not in out for c in checks):
        return None
    return out


def _log_base(c: Check, claim: Claim, ev: Evaluator, d: Derivation) -> _Finding | None:
    from symtf.checking import bases

    found = bases.cause(c, claim, ev, d)
    return None if found is None else _Finding(found.cause, found.text, list(found.convention))


def _line_slip(
    c: Check,
    claim: Claim,
    ev: Evaluator,
    d: Derivation,
    same_line: Mapping[int | None, Sequence[Check]],
) -> _Finding | None:
    from symtf.checking.causes import line_slip

    line = claim.source_line
    others = [o for o in same_line.get(line, ()) if o is not c] if line is not None else []
    found = line_slip(c, claim, ev, d, others)
    return None if found is None else _Finding(found.cause, found.text)


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


def _replay_one(
    c: Check,
    replays: tuple[Evaluator, Evaluator],
    trace: Trace,
    printed: dict[str, dict[tuple[int, ...], Printed]],
    status: dict[Entry, tuple[str, str]],
    d: Derivation,
    own: dict[tuple[str, tuple[int, ...] | None], Printed],
    relevant: dict[tuple[Any, ...], list[tuple[Entry, Printed]]],
    also: frozenset[str] = frozenset(),
) -> _Finding | None:
    assert c.step is not None and c.index is not None
    exact_rp, wide_rp = replays
    p = own.get((c.claim, c.index))
    if p is None or p.value is None:  # a printed ±∞ has nothing to replay
        return None
    q = exact_rp.entry(c.step, *c.index)
    try:
        verdict = classify(q, p)[0]
    except (SymtfError, TypeError):
        return None
    span = None
    if verdict not in GOOD:
        wide = wide_rp.ball_trace(128)
        if wide is None or not _overlaps(wide.value(c.step)[c.index], p):
            return None
        span = wide.value(c.step)[c.index]
    key = (c.step, c.index, also)
    if key not in relevant:
        relevant[key] = _find_relevant(c, trace, printed, d, exact_rp, also)
    inputs = relevant[key]
    said = Names(d.claims, trace)
    names = ", ".join(f"{said.entry(e[0], e[1:])} = {pp.text}" for e, pp in inputs)
    exact = q.decimal()
    gives = _replay_text(names, exact, q, p, span)
    roots = [said.entry(e[0], e[1:]) for e, _ in inputs if e in status and status[e][0] in FAILING]
    if roots:
        first = next(e for e, _ in inputs if e in status and status[e][0] in FAILING)
        return _Finding(
            "inherited",
            f"inherited from {roots[0]}: {gives}",
            root={"claim": status[first][1], "step": first[0], "index": list(first[1:])},
        )
    return _Finding("propagated-rounding", f"consistent with the article's own numbers: {gives}")


def _replay_text(names: str, exact: str | None, q: Quantity, p: Printed, span: arb | None) -> str:
    """What a replay computed, stated only with numbers it computed and how they print.

    Exact replay: "recomputing from the printed inputs (…) gives X, which prints as P".
    Widened replay: the exact replay's value and how *it* prints, then the certified
    range over the inputs' rounding intervals, which reaches values printing as P.
    """
    from symtf.checking.accept import _outward
    from symtf.checking.evaluation import correct_rounding
    from symtf.numbers import format_fixed

    src = (
        f"the printed inputs ({names})"
        if names
        else "the article's printed values of the earlier steps"
    )
    shown = exact if exact is not None else "(a value that cannot be certified)"
    if span is None:
        return f"recomputing from {src} gives {shown}, which prints as {p.text}"
    r = correct_rounding(q, p.decimals) if not p.is_fraction else None
    prints = f" (which prints as {format_fixed(r, p.decimals)})" if r is not None else ""
    lo, hi = _outward(span, p.decimals + 3)
    return (
        f"recomputing from {src} gives {shown}{prints}; with each input anywhere within its "
        f"rounding interval the result lies in [{lo}, {hi}], which includes values that print as {p.text}"
    )


def _overlaps(x: arb, p: Printed) -> bool:
    from symtf.backends.certify import compare_ball
    from symtf.numbers import rounding_interval

    iv = rounding_interval(p)
    return not (compare_ball(x, iv.lo) == -1 or compare_ball(x, iv.hi) == 1)


def _find_relevant(
    c: Check,
    trace: Trace,
    printed: dict[str, dict[tuple[int, ...], Printed]],
    d: Derivation,
    replay: Evaluator,
    also: frozenset[str] = frozenset(),
) -> list[tuple[Entry, Printed]]:
    """Printed upstream entries this entry depends on (found by nudging each by 1).

    The nearest printed steps are tried first; when the entry does not depend on
    them (a step computed with its worked pieces, like LayerNorm's), the walk goes
    one level further up.
    """
    assert c.step is not None and c.index is not None
    base = replay.ball_trace(128)  # the replay from the printed numbers, nothing nudged
    if base is None:
        return []
    ref = base.value(c.step)[c.index]
    level = _upstream_printed(trace, c.step, printed)
    seen: set[str] = set()
    for _ in range(8):
        out: list[tuple[Entry, Printed]] = []
        for s in level:
            seen.add(s)
            for ab, pp in sorted(printed[s].items()):
                if trace.value(s)[ab] == sympy.Rational(
                    _finite(pp).numerator, _finite(pp).denominator
                ):
                    continue  # printed exactly: no rounding to blame
                nudged = _Override(printed, c.step, nudge=(s, *ab), also=also)
                t = Evaluator(
                    d, base=replay, override=nudged, fresh={s}, needed={c.step}
                ).ball_trace(128)
                if t is None:
                    continue
                v = t.value(c.step)[c.index]
                if not v.overlaps(ref) or abs(float((v - ref).mid())) > 1e-12:
                    out.append(((s, *ab), pp))
                if len(out) >= 8:
                    return out
        if out:
            return out
        level = sorted(
            {u for s in level for u in _upstream_printed(trace, s, printed)} - seen,
            key=list(trace).index,
        )
        if not level:
            return []
    return []


def _expression_finding(c: Check) -> _Finding:
    shown = c.extra.get("as_displayed", {})
    if shown.get("verdict") in GOOD:
        return _Finding(
            "propagated-rounding",
            "the line is right with the numbers it displays; their rounding moved the result",
        )
    return _Finding(
        "unexplained", "neither the displayed numbers nor the exact values give the printed result"
    )


# ----------------------------------------------------------------------------- convention search


def _search_expression(
    result: ClaimResult,
    d: Derivation,
    variants: dict[tuple[str, str], Evaluator | None],
    base: Evaluator | None = None,
) -> _Finding | None:
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
                return _Finding(
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
    return _downstream(trace, start)


def _search(
    result: ClaimResult,
    checks: list[Check],
    d: Derivation,
    ev: Evaluator,
    trace: Trace,
    variants: dict[tuple[str, str], Evaluator | None],
    printed: dict[str, dict[tuple[int, ...], Printed]] | None = None,
) -> _Finding | None:
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
) -> _Finding:
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
            return _Finding(
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
    f = _Finding(
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


__all__ = ["CAUSES", "diagnose", "printed_values"]
