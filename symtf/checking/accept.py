"""Printed numbers the article's own setting explains, accepted with the reason stated.

Two settings of a derivation file widen what a printed number may correctly be:

- ``computed_in = "float32"`` (file or claim; also ``float16``, ``bfloat16``,
  ``float64``): the framework computed in that format. The value it can give is
  enclosed with a certified a-priori error bound (:mod:`symtf.checking.framework`).
- ``rounded_inputs``: some inputs are known only to their printed precision; the
  value becomes a certified range over their rounding intervals (:mod:`symtf.backends.rounded`).

A printed entry that is a ``slip`` or ``wrong`` against the exact value becomes
``rounded`` when it is a correct rounding of some value in that enclosure; the
explanation says so and states the range, and JSON adds ``accepted_by``
(``computed_in``, ``rounded_inputs`` or both, joined by ``+``) and ``enclosure``
(``[low, high]``, outward-rounded decimals).

For a format the enclosure is the step computed from its inputs (their exact
values, or their ranges over rounded inputs, stored once in the format). A print
outside it that only the worst-case bound over the whole float computation reaches
(JSON ``enclosure_whole``) is ``undecided``: that bound compounds worst cases
through every layer, so it cannot tell a float effect from a slip. Any other print
keeps its verdict, and the explanation adds the ranges and the value a numpy run in
that format gives (``simulated`` in JSON).

Entries of step claims are covered; displayed arithmetic and reduced claims
(``reduce = "sum"``) keep their exact verdicts.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Hashable
from fractions import Fraction
from typing import Any, cast

from flint import arb, ctx, fmpq

from symtf.numbers import Printed, format_fixed, round_exact, rounding_interval
from symtf.spec import Claim

FAILING = ("slip", "wrong")


def _outward(x: arb, decimals: int) -> tuple[str, str]:
    """``x``'s ends as decimals rounded outward at ``decimals`` places."""
    from symtf.backends.certify import _comparison_bits, exact_fraction

    if not x.is_finite():  # a masked −∞ (a point), an overflow (an unbounded ball)
        mid = float(x.mid())
        if x.rad() == 0 and mid in (float("inf"), float("-inf")):
            end = "inf" if mid > 0 else "-inf"
            return end, end
        return "-inf", "inf"
    with ctx.workprec(_comparison_bits(x)):  # the ends as finely as the ball is known
        lo, hi = exact_fraction(x.lower()), exact_fraction(x.upper())
    step = Fraction(1, 10**decimals)
    lo_r = (lo / step).__floor__() * step
    hi_r = -((-hi / step).__floor__()) * step
    return format_fixed(lo_r, decimals), format_fixed(hi_r, decimals)


def _meets(x: arb, p: Printed, mode: str) -> bool | None:
    """Whether the ball ``x`` meets the rounding interval of ``p`` (``None``: no ball)."""
    from symtf.backends.certify import compare_ball

    if x is None or not x.is_finite():
        return None
    if p.is_infinite:  # a finite ball never prints as ±∞
        return False
    iv = rounding_interval(p, "half-up" if mode == "any" else mode)
    # certified: the ball lies wholly below the interval's low end or wholly above its high
    # end; a ball that only touches an open end counts as meeting it (the enclosure is an
    # over-approximation either way)
    return not (compare_ball(x, iv.lo) == -1 or compare_ball(x, iv.hi) == 1)


class _Enclosures:
    """Traces of one derivation under its settings, computed once each."""

    def __init__(self, d: Any, ev: Any = None) -> None:
        self.d = d
        self.ev = ev  # the check's evaluator: its ball trace is the base, computed once
        self._enc: dict[str | None, Any] = {}
        self._sim: dict[str, Any] = {}
        self._step: dict[tuple[str, str], Any] = {}
        self._points: dict[Hashable, Any] = {}  # traces at points of the rounded inputs
        self._read: dict[str, list[str]] = {}  # the rounded inputs each step reads

    def enclosure(self, fmt: str | None) -> Any:
        if fmt not in self._enc:
            if fmt is None:
                from symtf.checking.framework import enclose_rounded

                self._enc[fmt] = enclose_rounded(self.d)
            else:
                from symtf.checking.framework import enclose as fenclose

                self._enc[fmt] = fenclose(self.d, fmt, self.d.rounded_inputs or None)
        return self._enc[fmt]

    def step_enclosure(self, fmt: str, step: str) -> Any:
        """The format's result for ``step`` computed from its inputs (stored once in ``fmt``)."""
        key = (fmt, step)
        if key not in self._step:
            from symtf.checking.framework import enclose_step

            base = self.base()
            self._step[key] = None if base is None else enclose_step(self.d, fmt, step, base)
        return self._step[key]

    def base(self) -> Any:
        """Certified balls of the exact values, or of the ranges over rounded inputs."""
        if "base" not in self._enc:
            if self.d.rounded_inputs:
                self._enc["base"] = self.enclosure(None)
            else:
                self._enc["base"] = self._exact_balls()
        return self._enc["base"]

    def decision(self, step: str, idx: tuple[int, ...], p: Printed, mode: str) -> Any:
        """Whether some point of the rounded inputs' intervals gives an exact value printing
        as ``p``: a :class:`~symtf.witness.Decision` (witness, refutation or undecided)."""
        from symtf.checking.framework import rounded_decision

        return rounded_decision(self.d, [(step, idx, p)], mode, self._points)

    def read(self, step: str) -> list[str]:
        """The rounded inputs (with some entry known only to its print) ``step`` is computed from."""
        if step not in self._read:
            from symtf.checking.framework import rounded_upstream

            ranged = [
                n
                for n, r in (self.d.rounded_inputs or {}).items()
                if any(h for row in r.half for h in row)
            ]
            up = set(rounded_upstream(self.d, [step])) if ranged else set()
            self._read[step] = [n for n in ranged if n in up]
        return self._read[step]

    def point_step_enclosure(self, fmt: str, step: str) -> Any:
        """The format's result for ``step`` computed from its inputs at the printed values of
        the rounded inputs (one point of their rounding intervals), stored once in ``fmt``."""
        key = (f"{fmt}:point", step)
        if key not in self._step:
            from symtf.checking.framework import enclose_step

            if "point" not in self._enc:
                self._enc["point"] = self._exact_balls()
            point = self._enc["point"]
            self._step[key] = None if point is None else enclose_step(self.d, fmt, step, point)
        return self._step[key]

    def _exact_balls(self) -> Any:
        """Certified balls of the values computed from the printed numbers as written."""
        if self.ev is not None:
            return self.ev.ball_trace(128)
        from symtf.backends import BallBackend
        from symtf.errors import SymtfError
        from symtf.graph.pipeline import run

        try:
            with BallBackend(128) as xp:
                return run(self.d, xp)
        except (SymtfError, TypeError):
            return None

    def run_step_enclosure(self, fmt: str, softmax: str, step: str) -> Any:
        """The format's result for ``step`` computed from a numpy run's own inputs."""
        key = (f"{fmt}:{softmax}", step)
        if key not in self._step:
            from symtf.checking.framework import enclose_step

            sim = self.simulated(fmt, softmax)
            self._step[key] = None if sim is None else enclose_step(self.d, fmt, step, sim)
        return self._step[key]

    def simulated(self, fmt: str, softmax: str = "shifted") -> Any:
        """A numpy run in ``fmt`` (softmax max-shifted, or textbook), computed once."""
        key = f"{fmt}:{softmax}"
        if key not in self._sim:
            from symtf.checking.framework import simulate

            self._sim[key] = simulate(self.d, fmt, softmax)
        return self._sim[key]


def _sim_value(sim: Any, step: str, idx: tuple[int, ...]) -> tuple[str, Fraction] | None:
    """The simulated entry as its shortest repr in the format, and its exact binary value."""
    from symtf.backends.format_print import _float_value
    from symtf.backends.formats import FORMATS

    if sim is None or step not in sim:
        return None
    try:
        v = sim.value(step)[idx]
    except (IndexError, TypeError, ValueError):
        return None
    x = _float_value(v)
    if x is None:
        return None
    fmt = getattr(sim.backend, "fmt", FORMATS["float64"])
    return _repr_text(x, fmt), x


def _repr_text(x: Fraction, fmt: Any) -> str:
    """``x`` written with its shortest round-trip digits, as Python and numpy print a scalar."""
    from symtf.backends.format_print import shortest_repr
    from symtf.numbers import decade

    if fmt.name == "float64":
        return repr(float(x))
    value, digits = shortest_repr(x, fmt)
    if value == 0:
        return "0.0"
    k = decade(abs(value))
    if -5 <= k < 16:
        text = format_fixed(value, max(digits - 1 - k, 0))
        return text if "." in text else text + ".0"
    body = format_fixed(value / Fraction(10) ** k, digits - 1)
    return f"{body}e{'-' if k < 0 else '+'}{abs(k):02d}"


def accept(d: Any, results: list[Any], ev: Any = None) -> list[Any]:
    """Apply the file's ``computed_in`` and ``rounded_inputs`` to slips and wrong numbers.

    Args:
        d: The derivation.
        results: Its :class:`~symtf.checking.report.ClaimResult` list, in file order.
        ev: The check's :class:`~symtf.checking.evaluation.Evaluator`, whose traces are
            reused.

    Returns:
        The results with each explained entry re-classified (others unchanged).
    """
    if (
        d.computed_in is None
        and not d.rounded_inputs
        and not any(getattr(r.claim, "computed_in", None) for r in results)
    ):
        return results
    encs = _Enclosures(d, ev)
    out = []
    for r in results:
        c = r.claim
        fmt = getattr(c, "computed_in", None) or d.computed_in
        if c.expression is not None and fmt is not None and ev is not None:
            out.append(_line(r, d, fmt, ev))
            continue
        if (fmt is None and not d.rounded_inputs) or c.step is None or c.reduce is not None:
            out.append(r)
            continue
        checks = []
        for ch in r.checks:
            if ch.verdict not in FAILING or ch.index is None or ch.step is None:
                checks.append(ch)
                continue
            checks.append(_one(ch, c, d, fmt, encs))
        out.append(dataclasses.replace(r, checks=tuple(checks)))
    return out


def _printed_of(claim: Claim, text: str) -> Printed | None:
    for row in claim.printed:
        for p in row:
            if p.text == text:
                return p
    return None


def _setting(
    fmt: str | None, read: list[str], float32: frozenset[str] = frozenset()
) -> tuple[str, str]:
    """The setting in words, and the ``accepted_by`` value.

    Args:
        fmt: The format the article's framework computed in, if any.
        read: The rounded inputs the step is computed from.
        float32: Those of them written as numpy's prints of float32 values
            (``float32_print = true``).
    """
    parts, by = [], []
    if fmt is not None:
        parts.append(f"computed in {fmt}")
        by.append("computed_in")
    if read:
        pinned = [n for n in read if n in float32]
        rest = [n for n in read if n not in float32]
        if pinned:
            parts.append(
                f"with {_names(pinned)} numpy's prints of float32 values (each entry the "
                "float32 it pins, or within 5e-9 of its print)"
            )
        if rest:
            parts.append(f"with {_names(rest)} known only to their printed precision")
        by.append("rounded_inputs")
    return " and ".join(parts), "+".join(by)


def _names(read: list[str]) -> str:
    return ", ".join(read[:4]) + (f" and {len(read) - 4} more" if len(read) > 4 else "")


def _float32_printed(d: Any) -> frozenset[str]:
    """The given tensors written as numpy's prints of float32 values."""
    return frozenset(
        g.name for g in getattr(d, "tensors", ()) if getattr(g, "widths", None) is not None
    )


def _entry(t: Any, step: str, index: tuple[int, ...]) -> arb | None:
    """One entry of a step in an enclosure trace, by its full index (2-D, 3-D or 4-D)."""
    if t is None or step not in t:
        return None
    try:
        x = t.value(step)[tuple(index)]
    except (IndexError, TypeError, KeyError, ValueError):
        return None
    x = getattr(x, "b", x)  # an entry of an N-D step of a format trace is an FB ball
    return x if isinstance(x, arb) else None


def _one(ch: Any, claim: Any, d: Any, fmt: str | None, encs: _Enclosures) -> Any:
    """Re-classify one slip or wrong entry under the file's settings.

    With ``computed_in``: accepted when the print is a correct rounding of part of what
    the format gives for this step from its inputs, or when a numpy run of the whole
    computation in that format prints it (its shortest round-trip repr, or its digits at
    the printed precision) and that run's value lies in the certified range of every
    result of the format; ``undecided`` when only that worst-case range reaches it;
    otherwise flagged, with both ranges and the numpy run.

    With rounded inputs: accepted when one point of the inputs' rounding intervals gives
    a value that prints as printed (a witness, :func:`symtf.witness.decide`); flagged
    only when no point does, certified (the range over the intervals, or the intervals
    cut into boxes, misses the print); ``undecided`` when neither can be shown. A print
    is never flagged because a search gave up.
    """
    p = _printed_of(claim, ch.printed)
    if p is None or p.is_neg_inf or p.is_fraction:
        return ch
    step, idx = ch.step, tuple(ch.index)
    read = encs.read(step) if d.rounded_inputs else []
    if fmt == "float64" and read:
        # float64's rounding shows only in prints to about sixteen digits: it is named
        # only where the rounded inputs alone do not already give the print
        alone = _one(ch, claim, d, None, encs)
        if alone.verdict not in FAILING and alone.verdict != "undecided":
            return alone
    float32 = _float32_printed(d)
    setting, by = _setting(fmt, read, float32)
    if not setting:  # the step reads no rounded input and the file sets no format
        return ch
    chain = _entry(encs.enclosure(fmt), step, idx)
    local = _entry(encs.step_enclosure(fmt, step), step, idx) if fmt is not None else chain
    digits = p.decimals + 3
    extra = dict(ch.extra)
    sim_note = ""
    if fmt is not None:
        sim = _sim_value(encs.simulated(fmt), step, idx)
        if sim is not None:
            extra["simulated"] = sim[0]
            prints = p.format(round_exact(sim[1], p.decimals, "half-up"))
            sim_note = f"; a numpy {fmt} run gives {sim[0]}, which prints as {prints}"
    exact_note = f"; the exact value {ch.exact} rounds to {ch.expected}" if ch.expected else ""
    from_inputs = " from its inputs" if fmt is not None else ""
    ranged = local is not None and local.is_finite()  # an overflowed format has no finite range
    met = local is not None and _meets(local, p, claim.rounding)
    # meeting the print is not enough with rounded inputs (an enclosure over their
    # intervals is wider than the values they give): a point of the intervals must give it,
    # and an enclosure that cannot be had does not rule one out
    decision = encs.decision(step, idx, p, claim.rounding) if read and (met or not ranged) else None
    reached = decision is not None and decision.reached is True if read else bool(met)
    if reached:
        extra["accepted_by"] = by
        witness = (
            f"one point of the inputs' rounding intervals gives a value that prints as {p.text}"
        )
        if ranged:
            lo, hi = _outward(cast(arb, local), digits)
            extra["enclosure"] = [lo, hi]
            why = (
                f"{setting}{from_inputs}, this entry lies in [{lo}, {hi}] (certified), and "
                f"{p.text} is a correct rounding of part of that range"
                f"{f' ({witness})' if read else ''}{sim_note}{exact_note}"
            )
        else:
            why = (
                f"{setting}, {witness} (a witness: the range over those intervals could not "
                f"be enclosed){sim_note}{exact_note}"
            )
        return dataclasses.replace(ch, verdict="rounded", explanation=why, extra=extra)
    if fmt is not None and read:
        # the print may be the format's rounding of this step at a point of the inputs'
        # intervals: their printed values are one, and the step computed in the format from
        # them holds the print (a zero kept as float32 noise: mean of a normalized row)
        at = _entry(encs.point_step_enclosure(fmt, step), step, idx)
        if at is not None and at.is_finite() and _meets(at, p, claim.rounding):
            plo, phi = _outward(at, digits)
            extra.update(accepted_by=by, enclosure=[plo, phi])
            point = (
                f"at the float32 values the prints of {_names(read)} stand for (where a "
                "print leaves several, the printed value)"
                if all(n in float32 for n in read)
                else f"at the printed values of {_names(read)} (a point of their rounding "
                "intervals)"
            )
            why = (
                f"{setting}: {point}, computed in {fmt} from its inputs, this entry lies in "
                f"[{plo}, {phi}] (certified), and {p.text} is a correct rounding of part of "
                f"that range{sim_note}{exact_note}"
            )
            return dataclasses.replace(ch, verdict="rounded", explanation=why, extra=extra)
    run = _printing_run(encs, fmt, step, idx, p, chain) if fmt is not None else None
    if run is not None:
        text, how, own = run
        extra.update(accepted_by=by, simulated=text)
        if own is not None and not own.is_finite():
            where = f"computed in {fmt} from that run's own inputs, this step overflows"
        elif own is None:  # chain held the run's value
            clo, chi = _outward(cast(arb, chain), digits)
            extra["enclosure_whole"] = [clo, chi]
            where = f"that value lies in [{clo}, {chi}], the certified range of every {fmt} result of the computation"
        else:
            olo, ohi = _outward(own, digits)
            extra["enclosure"] = [olo, ohi]
            where = (
                f"computed in {fmt} from that run's own inputs, this step lies in [{olo}, {ohi}] "
                "(certified), which holds it"
            )
        why = (
            f"{setting}: a numpy {fmt} run of the whole computation gives {text}, and {p.text} is "
            f"{how}; {where}{exact_note}"
        )
        return dataclasses.replace(ch, verdict="rounded", explanation=why, extra=extra)
    parts = []
    if ranged:
        lo, hi = _outward(cast(arb, local), digits)
        extra["enclosure"] = [lo, hi]
        where = f"{setting}{from_inputs}, it lies in [{lo}, {hi}] (certified)"
        parts.append(where if met else f"{where}, which does not print as {p.text}")
    else:
        what = f"its {fmt} range" if fmt is not None else "its range"
        parts.append(f"{setting}, {what} could not be certified")
    if fmt is not None and chain is not None and _meets(chain, p, claim.rounding):
        clo, chi = _outward(chain, digits)
        extra["enclosure_whole"] = [clo, chi]
        why = (
            f"{ch.explanation}; {'; '.join(parts)}; a worst-case bound on {fmt} rounding over the "
            f"whole computation, [{clo}, {chi}], includes values that print as {p.text}, so whether "
            f"{fmt} arithmetic explains it cannot be decided{sim_note}"
        )
        return dataclasses.replace(ch, verdict="undecided", explanation=why, extra=extra)
    if decision is not None and decision.reached is False:
        # certified in exact arithmetic, box by box; a format's own rounding is not covered
        pieces = (
            f"all {decision.boxes} parts of those intervals ruled out"
            if decision.boxes > 1
            else "the range over them misses it"
        )
        exactly = "in exact arithmetic, " if fmt is not None else ""
        parts.append(
            f"{exactly}no point of the inputs' rounding intervals gives a value printing as "
            f"{p.text} (certified: {pieces})"
        )
        if fmt is not None:
            why = (
                f"{ch.explanation}; {'; '.join(parts)}, but whether {fmt} rounding of this step "
                f"reaches it cannot be decided{sim_note}"
            )
            return dataclasses.replace(ch, verdict="undecided", explanation=why, extra=extra)
    elif read and (met or not ranged):
        # no certificate either way: the search found no point and could not rule one out
        reason = f" ({decision.reason})" if decision is not None and decision.reason else ""
        parts.append(
            f"no point of the inputs' rounding intervals was found that gives a value "
            f"printing as {p.text}, and none could be ruled out{reason}"
        )
        why = (
            f"{ch.explanation}; {'; '.join(parts)}: whether {p.text} is right {setting} cannot "
            f"be decided{sim_note}"
        )
        return dataclasses.replace(ch, verdict="undecided", explanation=why, extra=extra)
    if fmt is not None and chain is not None:
        clo, chi = _outward(chain, digits)
        extra["enclosure_whole"] = [clo, chi]
        parts.append(
            f"even over the whole computation it lies in [{clo}, {chi}], which does not print as {p.text} either"
        )
    why = f"{ch.explanation}; {'; '.join(parts)}{sim_note}"
    return dataclasses.replace(ch, explanation=why, extra=extra)


def _line(result: Any, d: Any, fmt: str, ev: Any) -> Any:
    """A displayed line computed in ``fmt`` as written: each slip or wrong value of it that
    the format's certified range, or a numpy run of the line in that format, prints."""
    from symtf.backends.format_print import float_line, line_entries, simulated_print
    from symtf.backends.format_sim import FormatSimBackend
    from symtf.backends.formats import FORMATS, FormatBallBackend
    from symtf.checking.displayed import _resolver, decided_by_link
    from symtf.errors import ExpressionError, SymtfError, Undecided
    from symtf.language.latexmath import parse as parse_expression

    claim = result.claim
    if not any(ch.verdict in FAILING for ch in result.checks):
        return result
    printed = [p for row in claim.printed for p in row]
    if len(printed) != len(result.checks):
        return result
    lines: dict[str | None, tuple[list[Any], list[Any]] | None] = {}

    def computed(link: Any) -> tuple[list[Any], list[Any]] | None:
        """The line's entries computed in ``fmt``: certified balls, and a numpy run."""
        if link.expression not in lines:
            try:
                parsed = parse_expression(link.expression, where=claim.where)
                resolve = _resolver(ev.exact_trace(), d, ev, link)
                with FormatBallBackend(fmt) as xp:
                    balls = [
                        getattr(b, "b", b) for b in line_entries(float_line(parsed, resolve, xp))
                    ]
                sims = line_entries(float_line(parsed, resolve, FormatSimBackend(fmt)))
                ok = len(balls) == len(sims) == len(printed)
                lines[link.expression] = (balls, sims) if ok else None
            except (
                SymtfError,
                ExpressionError,
                Undecided,
                TypeError,
                ValueError,
                ZeroDivisionError,
            ):
                lines[link.expression] = None
        return lines[link.expression]

    checks = []
    for k, (ch, p) in enumerate(zip(result.checks, printed, strict=True)):
        # a chain: the link that gave the verdict, and only when its other links are right
        others = [x for i, x in enumerate(ch.extra.get("links", ())) if i != ch.extra.get("link")]
        got = computed(decided_by_link(claim, ch))
        if (
            ch.verdict not in FAILING
            or p.is_infinite
            or p.is_fraction
            or got is None
            or any(x["verdict"] in FAILING for x in others)
        ):
            checks.append(ch)
            continue
        b, v = got[0][k], got[1][k]
        extra = dict(ch.extra)
        digits = p.decimals + 3
        lo, hi = _outward(b, digits) if b.is_finite() else ("-inf", "inf")
        x = arb(fmpq(*_ratio(float(v)))) if _finite(v) else None
        text = _repr_text(Fraction(float(v)), FORMATS[fmt]) if x is not None else str(v)
        how = simulated_print(float(v), p, FORMATS[fmt]) if x is not None else None
        exact_note = f"; the exact value {ch.exact} rounds to {ch.expected}" if ch.expected else ""
        extra.update(enclosure=[lo, hi], simulated=text)
        why = None
        if how is not None and b.contains(x):
            why = (
                f"computed in {fmt} as written, the line gives {text} (a numpy {fmt} run), and "
                f"{p.text} is {how}; every {fmt} evaluation of it lies in [{lo}, {hi}] "
                f"(certified){exact_note}"
            )
        elif _meets(b, p, claim.rounding):
            why = (
                f"computed in {fmt} as written, the line lies in [{lo}, {hi}] (certified), and "
                f"{p.text} is a correct rounding of part of that range; a numpy {fmt} run gives "
                f"{text}{exact_note}"
            )
        if why is not None:
            extra["accepted_by"] = "computed_in"
            checks.append(dataclasses.replace(ch, verdict="rounded", explanation=why, extra=extra))
        else:
            why = (
                f"{ch.explanation}; computed in {fmt} as written, the line lies in [{lo}, {hi}] "
                f"(certified), which does not print as {p.text}; a numpy {fmt} run gives {text}"
            )
            checks.append(dataclasses.replace(ch, explanation=why, extra=extra))
    return dataclasses.replace(result, checks=tuple(checks))


def _finite(v: Any) -> bool:
    import math

    try:
        return math.isfinite(float(v))
    except (TypeError, ValueError):
        return False


def _ratio(f: float) -> tuple[int, int]:
    q = Fraction(f)
    return q.numerator, q.denominator


def _printing_run(
    encs: _Enclosures,
    fmt: str,
    step: str,
    idx: tuple[int, ...],
    p: Printed,
    chain: arb | None,
) -> tuple[str, str, arb | None] | None:
    """A numpy run in ``fmt`` that prints ``p``, inside a certified range of the format.

    The range is ``chain`` (every result of the whole computation) or, when that does
    not hold the run's value, the step computed in ``fmt`` from the run's own inputs.
    Returns the run's value (its shortest repr), how it gives ``p`` and the step's range
    (``None`` when ``chain`` held it), or ``None``. The softmax is tried max-shifted (as
    frameworks compute it) and textbook.
    """
    from symtf.backends.format_print import simulated_print
    from symtf.backends.formats import FORMATS

    for softmax in ("shifted", "textbook"):
        sim = _sim_value(encs.simulated(fmt, softmax), step, idx)
        if sim is None:
            continue
        text, x = sim
        how = simulated_print(x, p, FORMATS[fmt])
        if how is None:
            continue
        point = arb(fmpq(x.numerator, x.denominator))
        if chain is not None and chain.is_finite() and chain.contains(point):
            return text, how, None
        # no certified range over the whole computation holds it (the worst case of a
        # short format compounds past it): certify the last step from the run's own inputs
        own = _entry(encs.run_step_enclosure(fmt, softmax, step), step, idx)
        if own is not None and own.is_finite() and own.contains(point):
            return text, how, own
    return None


__all__ = ["accept"]
