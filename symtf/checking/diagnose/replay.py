"""Replay with the article's own numbers: a step recomputed from the printed (rounded)
values of the steps before it, exactly and with each input widened to its rounding
interval, to tell a propagated rounding or an inherited error from a mistake of its own.
"""

from __future__ import annotations

from collections.abc import Iterable
from fractions import Fraction
from typing import Any, cast

import sympy
from flint import arb, fmpq

from symtf.checking.diagnose.findings import GOOD, Entry, Finding
from symtf.checking.evaluation import Evaluator, Quantity, classify, step_prints
from symtf.checking.report import FAILING, Check
from symtf.checking.wording import Names
from symtf.errors import SymtfError
from symtf.numbers import Printed
from symtf.spec import Derivation
from symtf.tensor import Tensor
from symtf.trace import Trace

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


class Override:
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


def replay_with_printed(ev: Evaluator, d: Derivation, override: Override, step: str) -> Evaluator:
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


def downstream(trace: Trace, roots: Iterable[str]) -> set[str]:
    """The steps computed (directly or not) from any of ``roots``."""
    hit = set(roots)
    for name in trace:
        if any(i in hit for i in trace[name].inputs):
            hit.add(name)
    return hit


def replay_one(
    c: Check,
    replays: tuple[Evaluator, Evaluator],
    trace: Trace,
    printed: dict[str, dict[tuple[int, ...], Printed]],
    status: dict[Entry, tuple[str, str]],
    d: Derivation,
    own: dict[tuple[str, tuple[int, ...] | None], Printed],
    relevant: dict[tuple[Any, ...], list[tuple[Entry, Printed]]],
    also: frozenset[str] = frozenset(),
) -> Finding | None:
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
        if wide is None or not overlaps(wide.value(c.step)[c.index], p):
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
        return Finding(
            "inherited",
            f"inherited from {roots[0]}: {gives}",
            root={"claim": status[first][1], "step": first[0], "index": list(first[1:])},
        )
    return Finding("propagated-rounding", f"consistent with the article's own numbers: {gives}")


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


def overlaps(x: arb, p: Printed) -> bool:
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
                nudged = Override(printed, c.step, nudge=(s, *ab), also=also)
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
