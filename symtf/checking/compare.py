"""Compare what an article printed with the exact values, and classify each number.

For each printed entry the exact value is located against a few rational
boundaries (the printed value itself, the ends of its rounding interval) with a
three-way, certified comparison: balls first, escalating precision, then exact
arithmetic on that one value. The verdict classes (``symtf check --help`` defines them):
``exact``, ``rounded``, ``slip``, ``wrong`` and ``undecided``.
"""

from __future__ import annotations

import dataclasses
import functools
from collections.abc import Mapping, Sequence
from fractions import Fraction
from typing import Any, cast

import sympy
from flint import arb

from symtf.backends import ExactBackend
from symtf.backends.certify import PRECISIONS, OpenMax, OpenMin, compare_ball
from symtf.backends.signs import exact_sign
from symtf.checking.evaluation import DECIDED_BY, Evaluator, Quantity, _fit, selection
from symtf.checking.report import FAILING, Check, ClaimResult, DerivationReport
from symtf.checking.reuse import Reuse
from symtf.errors import LimitError, SpecError, Undecided
from symtf.numbers import Printed
from symtf.spec import Claim, Derivation
from symtf.trace import Trace

# ----------------------------------------------------------------------------- claims


def check(
    derivation: Derivation, *, explain: bool = True, reuse: Reuse | None = None
) -> DerivationReport:
    """Check every claim of a derivation.

    Args:
        derivation: The derivation.
        explain: Diagnose every slip or wrong number (see :mod:`symtf.checking.diagnose`).
        reuse: What an earlier check of an edited version of the derivation lets this one
            take as it is (:mod:`symtf.checking.incremental`); the report is the same.

    Raises:
        SpecError: When a claim names a step that does not exist or does not fit.
        ModelError: When the model cannot be evaluated on its input.
    """
    ev = Evaluator(derivation) if reuse is None else reuse.evaluator(derivation)
    t = ev.midrad_trace() or ev.ball_trace(PRECISIONS[0]) or ev.exact_trace()
    results = []
    fresh: list[int] = []  # the results checked here (the others were kept, settings applied)
    not_reached: list[str] = []
    reserve = _reserve()
    for claim in derivation.claims:
        if not_reached or _budget_nearly_spent(reserve):
            # A partial report: what was decided stands; the rest is named, not guessed.
            not_reached.append(claim.label)
            results.append(ClaimResult(claim, undecided_claim(claim, NOT_REACHED, derivation.path)))
            continue
        kept = reuse.kept(claim, ev) if reuse is not None else None
        if kept is not None:
            results.extend(kept)
            continue
        before = len(results)
        try:
            if getattr(claim, "assertion", None) is not None:
                from symtf.checking.assertions import check_claim

                results.append(ClaimResult(claim, (check_claim(claim, ev, derivation, Check),)))
            elif claim.expression is not None:
                from symtf.checking import lineage
                from symtf.checking.displayed import check_expression

                line, copies = lineage.split(check_expression(claim, ev, derivation))
                for c in copies:  # a copy slip's literal: a printed number of its own
                    results.append(ClaimResult(lineage.copy_claim(claim, c), (c,)))
                results.append(ClaimResult(claim, line))
            else:
                results.append(
                    ClaimResult(claim, tuple(_check_step_claim(claim, ev, t, derivation)))
                )
        except Undecided as e:  # this claim only: the others are still checked
            results.append(ClaimResult(claim, undecided_claim(claim, str(e), derivation.path)))
        fresh.extend(range(before, len(results)))
        if reuse is not None:
            reuse.checked(claim, ev, len(results) - before)
    from symtf.checking.accept import (
        accept,  # computed_in, rounded_inputs: the article's own setting
    )

    if reuse is None:
        results = accept(derivation, results, ev)
    else:  # each result on its own: a kept one has had the settings applied already
        for k, r in zip(fresh, accept(derivation, [results[k] for k in fresh], ev), strict=True):
            results[k] = r
    if not_reached or _budget_nearly_spent(reserve):
        report = DerivationReport(
            derivation.path,
            derivation.title,
            tuple(results),
            ev._exact,
            not_reached=tuple(not_reached),
        )
        return _undiagnosed(report, "the --timeout budget ran out")
    if ev.lazy_exact:  # weights from files: no exact trace unless a verdict needed it
        why = (
            "a model too large for exact values"
            if ev.exact_refused
            else "weights beyond the TOML size limit"
        )
        return _undiagnosed(
            DerivationReport(derivation.path, derivation.title, tuple(results), ev._exact), why
        )
    report = DerivationReport(derivation.path, derivation.title, tuple(results), ev.exact_trace())
    if reuse is not None:
        reuse.settled(report)
    from symtf.checking.diagnose import diagnose

    return diagnose(derivation, report, ev, reuse) if explain else report


#: Why a claim the budget left unchecked is undecided.
NOT_REACHED = (
    "not checked: the --timeout budget ran out before this claim (raise it with --timeout)"
)


def _reserve() -> float:
    """The seconds of the running ``--timeout`` budget kept for writing the report: the root
    searches' :data:`symtf.roots.RESERVE_SECONDS`, or a quarter of what is left when the
    check starts, whichever is less (a 2 s budget is not all reserve)."""
    from symtf.backends.certify import time_left
    from symtf.roots import RESERVE_SECONDS

    left = time_left()
    return RESERVE_SECONDS if left is None else min(RESERVE_SECONDS, left / 4)


def _budget_nearly_spent(reserve: float) -> bool:
    """Whether the running ``--timeout`` budget is down to ``reserve`` seconds: the claims
    not started yet are then named as not reached, and the report is written, rather than
    the whole file lost to the timer."""
    from symtf.backends.certify import time_left

    left = time_left()
    return left is not None and left < reserve


def check_traced(derivation: Derivation) -> DerivationReport:
    """:func:`check`, with the exact trace every step's exact value is shown from (notes, pages).

    A model whose exact values would not fit is refused first, before it is checked.

    Raises:
        LimitError: When the model's exact values would exceed the memory limit, or the
            ``--timeout`` budget left claims unchecked (:attr:`DerivationReport.not_reached`).
    """
    from symtf.limits import enforce

    enforce(derivation)
    report = check(derivation)
    if report.not_reached:  # a document of every step is not written from half a check
        raise LimitError(
            f"{derivation.path}: exceeded the time budget: {len(report.not_reached)} of "
            f"{len(report.results)} claims were not checked (raise it with --timeout)"
        )
    return traced(report, derivation)


def traced(report: DerivationReport, derivation: Derivation) -> DerivationReport:
    """The report with its exact trace, for what shows every step's exact value (notes, pages).

    A model checked by its certified passes alone (weights from files, or exact values
    beyond the memory limit) has none yet: it is computed here, or refused.

    Raises:
        LimitError: When the model's exact values would exceed the memory limit.
    """
    if report.trace is not None:
        return report
    from symtf.graph.pipeline import run

    return dataclasses.replace(report, trace=run(derivation, ExactBackend()))


def _undiagnosed(report: DerivationReport, why: str) -> DerivationReport:
    """Mark off numbers of a model with large file weights as not diagnosed.

    The diagnosis (replay from the printed numbers, convention search) re-runs the
    model many times, exactly; it runs on models within the TOML size limit whose exact
    values fit in memory. ``why``: which of the two the model is beyond, in words.
    """
    results = []
    for r in report.results:
        checks = []
        for c in r.checks:
            if c.verdict in FAILING and "cause" not in c.extra:
                extra = dict(c.extra)
                extra.update(cause="unexplained", convention=[], root=None)
                c = dataclasses.replace(
                    c,
                    explanation=c.explanation
                    + f"; not diagnosed ({why}: no replay or convention search)",
                    extra=extra,
                )
            checks.append(c)
        results.append(ClaimResult(r.claim, tuple(checks)))
    return dataclasses.replace(report, results=tuple(results))


def _step_or_error(claim: Claim, t: Trace) -> str:
    step = claim.step
    assert step is not None
    if claim.unmapped:
        raise SpecError(
            f'{claim.where}.step: expected a step name, found "?" (a draft\'s claim still to map;'
            " `symtf check --draft` checks the rest and suggests steps)"
        )
    if step not in t:
        from symtf.suggest import hint

        raise SpecError(
            f"{claim.where}.step: no step {step!r} in this model{hint(step, list(t), steps=True)}"
        )
    return step


def _check_step_claim(claim: Claim, ev: Evaluator, t: Trace, d: Derivation) -> list[Check]:
    step = _step_or_error(claim, t)
    if step == "next_token" or claim.rank is not None or claim.word is not None:
        return [_check_word(claim, ev, step, d)]
    shape = t.shape(step)
    if shape is None:
        raise SpecError(f"{claim.where}.step: {step} holds token ids, not numbers")
    sel = selection(claim, shape)
    if claim.reduce is not None:
        if len(claim.printed) != 1 or len(claim.printed[0]) != 1:
            raise SpecError(
                f"{claim.where}.printed: expected one value for reduce = {claim.reduce!r}"
            )
        entries = [(i, j) for r in sel for (i, j) in r]
        qs = [ev.entry(step, i, j) for (i, j) in entries]
        try:
            q = _reduced(claim.reduce, qs)
        except _Unordered as e:  # a tie or near-tie: enclose the extreme without choosing
            a, b = entries[e.first], entries[e.second]
            c = _one(
                claim,
                step,
                None,
                _extreme_of_all(qs, largest=claim.reduce == "max"),
                claim.printed[0][0],
                d.symbols,
            )
            if c.verdict != "undecided":
                return [c]
            why = (
                f"reduce = {claim.reduce!r} cannot choose between {step}[{a[0]}, {a[1]}] and "
                f"{step}[{b[0]}, {b[1]}]: their order cannot be decided"
            )
            blocked = _blocked(
                qs[e.first].exact()[0] - qs[e.second].exact()[0],
                ev.exact_trace().backend,
                d.path,
            )
            return [dataclasses.replace(c, explanation=blocked or why)]
        return [_one(claim, step, None, q, claim.printed[0][0], d.symbols)]
    true = t.true_shape(step)
    checks = [
        _one(claim, step, ij, ev.entry(step, *ij), p, d.symbols) for ij, p in _fit(claim, sel)
    ]
    return [_with_entry(c, true) for c in checks]


def _with_entry(c: Check, true: tuple[int, ...] | None) -> Check:
    """The JSON ``entry``: the check's entry in its step's own shape, beside ``index``.

    ``index`` keeps the contract's shapes: a 1-D step is held as one row, so its entry
    ``k`` is ``[0, k]`` and a scalar step's is ``[0, 0]``. ``entry`` gives the step's own
    indices: ``[k]`` for a 1-D step, ``[]`` for a scalar, ``index`` itself for 2-D and N-D.
    """
    if c.index is None:
        return c
    if true is not None and len(true) < 2:
        entry = [c.index[-1]] if len(true) == 1 else []
    else:
        entry = list(c.index)
    return dataclasses.replace(c, extra={**c.extra, "entry": entry})


def _one(
    claim: Claim,
    step: str | None,
    ij: tuple[int, ...] | None,
    q: Quantity,
    p: Printed,
    symbols: Mapping[str, Any] | None = None,
) -> Check:
    from symtf.checking.verdict import decide

    extra: dict[str, Any] = {}
    try:
        v = decide(q, p, claim.rounding, symbols)
        verdict, expected, why = v.verdict, v.expected, v.explanation
        extra = {"units_off": v.units_off, **v.extra}
        exact = None if v.verdict == "symbolic" else v.decimal or q.decimal()
    except Undecided as e:  # this entry only: the claim's other entries are still checked
        verdict, expected, why, exact = "undecided", None, f"cannot be decided: {e}", None
    value = q.exact_if_cheap()
    if verdict == "undecided":
        try:
            full, xp = q.exact()
        except Undecided:  # no exact value to say more from (out of reach)
            pass
        else:
            why = _blocked(full, xp, _file_of(claim)) or why
    if q.decided_by is not None:
        extra["decided_by"] = q.decided_by
    return Check(claim.label, step, ij, p.text, expected, exact, verdict, why, value, extra)


def _reduced(how: str, qs: Sequence[Quantity]) -> Quantity:
    if how == "sum":

        def ball(prec: int) -> arb | None:
            bs = [q.ball(prec) for q in qs]
            return None if any(b is None for b in bs) else sum(cast(list[arb], bs), arb(0))

        def exact() -> tuple[sympy.Expr, ExactBackend | None]:
            es = [q.exact() for q in qs]
            return sympy.Add(*(e for e, _ in es)), es[0][1]

        def fast() -> arb | None:
            bs = [q.fast_ball() for q in qs]
            return None if any(b is None for b in bs) else sum(cast(list[arb], bs), arb(0))

        return Quantity(ball, exact, fast, lazy=any(q._lazy for q in qs))
    pick = _extreme(qs, largest=how == "max")
    return pick


def _extreme_of_all(qs: Sequence[Quantity], *, largest: bool) -> Quantity:
    """``max``/``min`` of quantities that cannot all be ordered: enclosed without choosing."""
    pick = OpenMax if largest else OpenMin

    def ball(prec: int) -> arb | None:
        bs = [q.ball(prec) for q in qs]
        if any(b is None for b in bs):
            return None
        balls = cast(list[arb], bs)
        out = balls[0]
        for b in balls[1:]:
            out = out.max(b) if largest else out.min(b)
        return out

    def exact() -> tuple[sympy.Expr, ExactBackend | None]:
        es = [q.exact() for q in qs]
        return pick(*(e for e, _ in es)), es[0][1]

    return Quantity(ball, exact)


class _Unordered(Undecided):
    """Two entries of a ``reduce`` whose order cannot be decided (positions in the list)."""

    def __init__(self, first: int, second: int) -> None:
        super().__init__(f"cannot order entries {first} and {second} to take their extreme")
        self.first, self.second = first, second


def _extreme(qs: Sequence[Quantity], *, largest: bool) -> Quantity:
    best, at = qs[0], 0
    for k, q in enumerate(qs[1:], start=1):
        c = _cmp(q, best)
        if c is None:
            raise _Unordered(at, k)
        if (c > 0) == largest and c != 0:
            best, at = q, k
    return best


def _cmp(a: Quantity, b: Quantity) -> int | None:
    x, y = a.fast_ball(), b.fast_ball()
    if x is not None and y is not None:
        c = compare_ball(x - y, Fraction(0))
        if c is not None:
            a._decided("midrad")
            b._decided("midrad")
            return c
    if a._lazy:
        for prec in PRECISIONS:
            x, y = a.ball(prec), b.ball(prec)
            if x is not None and y is not None:
                c = compare_ball(x - y, Fraction(0))
                if c is not None:
                    a._decided(f"arb{prec}")
                    b._decided(f"arb{prec}")
                    return c
    ea, xa = a.exact()
    eb, _ = b.exact()
    diff = ea - eb
    if diff.is_Rational:
        return int((diff.p > 0) - (diff.p < 0))
    for prec in PRECISIONS:
        x, y = a.ball(prec), b.ball(prec)
        if x is not None and y is not None:
            c = compare_ball(x - y, Fraction(0))
            if c is not None:
                return c
    try:
        return exact_sign(diff, xa)
    except (Undecided, TypeError):
        return None


def _check_word(claim: Claim, ev: Evaluator, step: str, d: Derivation) -> Check:
    vocab = d.model.vocab
    word = claim.word or ""
    if word not in vocab:
        where = "model.vocab" if d.model.architecture != "none" else "vocab"
        raise SpecError(f"{claim.where}.printed: expected a word of {where}, found {word!r}")
    if step == "next_token":
        source = "logits"
        rank = 1
    else:
        source, rank = step, claim.rank or 1
    t = ev.structure()
    if claim.rank is None and step != "next_token" and t.shape(source) == (1, 1):
        return _check_id_word(claim, ev, step, vocab)
    shape = t.shape(source)
    n = shape[1] if shape else 0
    if rank > n:
        raise SpecError(f"{claim.where}.rank: expected 1 to {n}, found {rank}")
    qs = [ev.entry(source, 0, j) for j in range(n)]
    unordered: list[tuple[int, int]] = []
    order = _ranking(qs, unordered)  # decides the quantities: each records its path
    paths = [q.decided_by for q in qs if q.decided_by is not None]
    extra = {"decided_by": max(paths, key=DECIDED_BY.index)} if paths else {}

    # every check below carries the path that decided it
    made = functools.partial(Check, extra=extra)

    unordered = []
    order = _ranking(qs, unordered)
    if order is None:
        xp = t.backend
        j, k = unordered[0]
        why = (
            f"the ranking cannot be certified: the order of {source}[0, {j}] ({vocab[j]!r}) "
            f"and {source}[0, {k}] ({vocab[k]!r}) cannot be decided"
        )
        blocked = [b for q in qs for b in _blocked_lines(q.exact()[0], xp)]
        if blocked:
            why += f": it depends on the model's branch at {d.path}: " + "; ".join(
                dict.fromkeys(blocked)
            )
        return Check(claim.label, step, None, word, None, None, "undecided", why)
    groups = order  # list of lists of tied indices, best first
    seen = 0
    for g in groups:
        if seen < rank <= seen + len(g):
            words = [vocab[k] for k in g]
            got = words[0]
            if len(g) > 1:
                if word in words:
                    why = f"exact tie between {', '.join(words)}: either is a correct pick"
                    return made(claim.label, step, None, word, word, None, "exact", why)
                why = f"the {_ordinal(rank)} place is an exact tie between {', '.join(words)}"
                return made(claim.label, step, None, word, "/".join(words), None, "wrong", why)
            if got == word:
                why = f"{word!r} has the {_ordinal(rank)} largest {source} entry"
                return made(claim.label, step, None, word, got, None, "exact", why)
            why = f"the {_ordinal(rank)} largest {source} entry is {got!r}, not {word!r}"
            return made(claim.label, step, None, word, got, None, "wrong", why)
        seen += len(g)
    raise AssertionError("rank outside the ranking")


def _check_id_word(claim: Claim, ev: Evaluator, step: str, vocab: tuple[str, ...]) -> Check:
    """A word printed for a step that holds one token id (an ``argmax`` of a user step)."""
    value = ev.exact_trace().value(step)[0, 0]
    word = claim.word or ""
    if not (value.is_Integer and 0 <= int(value) < len(vocab)):
        raise SpecError(
            f"{claim.where}.printed: {step} holds {value}, not a token id of the vocabulary "
            f"(0 to {len(vocab) - 1}): print a number, or claim the scores with rank = 1"
        )
    got = vocab[int(value)]
    if got == word:
        why = f"{step} is token id {int(value)}, {word!r}"
        return Check(claim.label, step, None, word, got, None, "exact", why)
    why = f"{step} is token id {int(value)}, {got!r}, not {word!r}"
    return Check(claim.label, step, None, word, got, None, "wrong", why)


def _ordinal(k: int) -> str:
    return {1: "1st", 2: "2nd", 3: "3rd"}.get(k, f"{k}th")


def _ranking(
    qs: Sequence[Quantity], unordered: list[tuple[int, int]] | None = None
) -> list[list[int]] | None:
    """Indices grouped by exact ties, largest first; ``None`` if an order is undecidable.

    Args:
        qs: The values.
        unordered: When given, receives the pair whose order could not be decided.
    """
    from symtf.ops import tie_groups

    def cmp(j: int, k: int) -> int | None:
        c = _cmp(qs[j], qs[k])
        if c is None and unordered is not None:
            unordered.append((k, j))
        return c

    return tie_groups(len(qs), cmp)


# ----------------------------------------------------------------------------- isolation


def _blocked_lines(value: Any, xp: Any) -> list[str]:
    """The undecided branches of the model a value depends on (see ExactBackend.undecided_in)."""
    undecided_in = getattr(xp, "undecided_in", None)
    lines: list[str] = undecided_in(value) if undecided_in is not None else []
    return lines


def _blocked(value: Any, xp: Any, path: str) -> str | None:
    """Why a value is undecided when it depends on a branch the model could not take."""
    lines = _blocked_lines(value, xp)
    if not lines:
        return None
    return f"depends on the model's branch at {path}: " + "; ".join(lines)


def _file_of(claim: Claim) -> str:
    """The derivation file named in a claim's ``where`` (``FILE: claims[3]``)."""
    return claim.where.rsplit(": claims[", 1)[0]


def undecided_claim(claim: Claim, reason: str, path: str) -> tuple[Check, ...]:
    """An ``undecided`` verdict for every printed entry of a claim that could not be checked.

    Args:
        claim: The claim.
        reason: Why it could not be decided (an :class:`~symtf.errors.Undecided` message).
        path: The derivation file, named in the explanation.
    """
    where = claim.where if claim.where.startswith(path) else f"{path}: {claim.where}"
    why = (
        f"cannot be decided: {reason}"
        if reason.startswith(path)
        else f"{where}: cannot be decided: {reason}"
    )
    if claim.word is not None or not claim.printed:
        return (
            Check(claim.label, claim.step, None, claim.word or "", None, None, "undecided", why),
        )
    return tuple(
        Check(claim.label, claim.step, None, p.text, None, None, "undecided", why)
        for row in claim.printed
        for p in row
    )
