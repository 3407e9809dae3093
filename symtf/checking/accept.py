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
from fractions import Fraction
from typing import Any

from flint import arb, fmpq

from symtf.numbers import Printed, format_fixed, round_exact, rounding_interval

FAILING = ("slip", "wrong")


def _fraction(x: arb) -> Fraction:
    man, exp = x.man_exp()
    return Fraction(int(man)) * Fraction(2) ** int(exp)


def _outward(x: arb, decimals: int) -> tuple[str, str]:
    """``x``'s ends as decimals rounded outward at ``decimals`` places."""
    lo, hi = _fraction(x.lower()), _fraction(x.upper())
    step = Fraction(1, 10**decimals)
    lo_r = (lo / step).__floor__() * step
    hi_r = -((-hi / step).__floor__()) * step
    return format_fixed(lo_r, decimals), format_fixed(hi_r, decimals)


def _meets(x: arb, p: Printed, mode: str) -> bool | None:
    """Whether the ball ``x`` meets the rounding interval of ``p`` (``None``: no ball)."""
    if x is None or not x.is_finite():
        return None
    iv = rounding_interval(p, "half-up" if mode == "any" else mode)
    lo = arb(fmpq(iv.lo.numerator, iv.lo.denominator))
    hi = arb(fmpq(iv.hi.numerator, iv.hi.denominator))
    below_hi = x.lower() < hi or (iv.hi_closed and not (x.lower() > hi))
    above_lo = x.upper() > lo or (iv.lo_closed and not (x.upper() < lo))
    return bool(below_hi and above_lo)


class _Enclosures:
    """Traces of one derivation under its settings, computed once each."""

    def __init__(self, d: Any, ev: Any = None) -> None:
        self.d = d
        self.ev = ev  # the check's evaluator: its ball trace is the base, computed once
        self._enc: dict[str | None, Any] = {}
        self._sim: dict[str, Any] = {}
        self._step: dict[tuple[str, str], Any] = {}

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
            elif self.ev is not None:
                self._enc["base"] = self.ev.ball_trace(128)
            else:
                from symtf.backends import BallBackend
                from symtf.errors import SymtfError
                from symtf.graph.pipeline import run

                try:
                    with BallBackend(128) as xp:
                        self._enc["base"] = run(self.d, xp)
                except (SymtfError, TypeError):
                    self._enc["base"] = None
        return self._enc["base"]

    def simulated(self, fmt: str) -> Any:
        if fmt not in self._sim:
            from symtf.checking.framework import simulate

            self._sim[fmt] = simulate(self.d, fmt)
        return self._sim[fmt]


def _sim_value(sim: Any, step: str, i: int, j: int) -> tuple[str, Fraction] | None:
    """The simulated entry as printed by numpy, and its exact binary value."""
    import math

    if sim is None or step not in sim:
        return None
    try:
        v = sim.value(step)[i, j]
        f = float(v)
    except (IndexError, TypeError, ValueError):
        return None
    if not math.isfinite(f):
        return None
    return str(v), Fraction(f)


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


def _printed_of(claim: Any, text: str) -> Printed | None:
    for row in claim.printed:
        for p in row:
            if p.text == text:
                return p
    return None


def _setting(d: Any, fmt: str | None) -> tuple[str, str]:
    """The setting in words, and the ``accepted_by`` value."""
    parts, by = [], []
    if fmt is not None:
        parts.append(f"computed in {fmt}")
        by.append("computed_in")
    if d.rounded_inputs:
        ranged = [n for n, r in d.rounded_inputs.items() if any(h for row in r.half for h in row)]
        names = ranged or list(d.rounded_inputs)
        shown = ", ".join(names[:4]) + (f" and {len(names) - 4} more" if len(names) > 4 else "")
        parts.append(f"with {shown} known only to their printed precision")
        by.append("rounded_inputs")
    return " and ".join(parts), "+".join(by)


def _entry(t: Any, step: str, i: int, j: int) -> arb | None:
    if t is None or step not in t:
        return None
    return t.value(step)[i, j]


def _one(ch: Any, claim: Any, d: Any, fmt: str | None, encs: _Enclosures) -> Any:
    """Re-classify one slip or wrong entry under the file's settings.

    With ``computed_in``: accepted when the print is a correct rounding of part of what
    the format gives for this step from its inputs; ``undecided`` when only the
    worst-case bound over the whole float computation reaches it; otherwise flagged,
    with both ranges and a numpy run in that format. With rounded inputs alone: the
    range over the inputs' rounding intervals decides.
    """
    p = _printed_of(claim, ch.printed)
    if p is None or p.is_neg_inf or p.is_fraction:
        return ch
    step, (i, j) = ch.step, ch.index
    setting, by = _setting(d, fmt)
    chain = _entry(encs.enclosure(fmt), step, i, j)
    local = _entry(encs.step_enclosure(fmt, step), step, i, j) if fmt is not None else chain
    if chain is None and local is None:
        return dataclasses.replace(
            ch,
            explanation=f"{ch.explanation}; {setting}, the range of values could not be certified",
        )
    digits = p.decimals + 3
    extra = dict(ch.extra)
    sim_note = ""
    if fmt is not None:
        sim = _sim_value(encs.simulated(fmt), step, i, j)
        if sim is not None:
            extra["simulated"] = sim[0]
            prints = format_fixed(round_exact(sim[1], p.decimals, "half-up"), p.decimals)
            sim_note = f"; a numpy {fmt} run gives {sim[0]}, which prints as {prints}"
    exact_note = f"; the exact value {ch.exact} rounds to {ch.expected}" if ch.expected else ""
    from_inputs = " from its inputs" if fmt is not None else ""
    if local is not None and _meets(local, p, claim.rounding):
        lo, hi = _outward(local, digits)
        extra.update(enclosure=[lo, hi], accepted_by=by)
        why = (
            f"{setting}{from_inputs}, this entry lies in [{lo}, {hi}] (certified), and {p.text} is "
            f"a correct rounding of part of that range{sim_note}{exact_note}"
        )
        return dataclasses.replace(ch, verdict="rounded", explanation=why, extra=extra)
    parts = []
    if local is not None:
        lo, hi = _outward(local, digits)
        extra["enclosure"] = [lo, hi]
        parts.append(
            f"{setting}{from_inputs}, it lies in [{lo}, {hi}] (certified), which does not print as {p.text}"
        )
    if fmt is not None and chain is not None and _meets(chain, p, claim.rounding):
        clo, chi = _outward(chain, digits)
        extra["enclosure_whole"] = [clo, chi]
        why = (
            f"{ch.explanation}; {'; '.join(parts)}; a worst-case bound on {fmt} rounding over the "
            f"whole computation, [{clo}, {chi}], includes values that print as {p.text}, so whether "
            f"{fmt} arithmetic explains it cannot be decided{sim_note}"
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


__all__ = ["accept"]
