"""The forward pass as an article's framework computes it, in a binary floating-point format.

The number systems live in :mod:`symtf.backends.formats`: a certified enclosure of
every value a format can give (:class:`~symtf.backends.formats.FormatBallBackend`)
and a numpy simulation (:class:`~symtf.backends.format_sim.FormatSimBackend`). These
functions run a derivation's graph in them.
"""

from __future__ import annotations

from collections.abc import Collection, Hashable, Mapping, MutableMapping, Sequence
from fractions import Fraction
from typing import Any

from symtf.backends.format_sim import FormatSimBackend
from symtf.backends.formats import FORMATS, FormatBallBackend, as_format


def simulate(derivation: Any, fmt: str, softmax: str = "shifted") -> Any:
    """The derivation's forward pass in ``fmt`` with numpy (``None`` if it cannot run).

    Args:
        softmax: How the softmax is computed (see :class:`FormatSimBackend`).
    """
    import warnings

    from symtf.errors import SymtfError
    from symtf.graph.pipeline import run

    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            return run(derivation, FormatSimBackend(fmt, softmax))
    except (SymtfError, TypeError, ValueError, ZeroDivisionError, OverflowError):
        return None


def enclose(derivation: Any, fmt: str, radii: Any = None, prec: int = 128) -> Any:
    """The forward pass as certified enclosures of ``fmt`` results (``None`` if undecidable)."""
    from symtf.errors import SymtfError
    from symtf.graph.pipeline import run

    ties = derivation.model.generate is None and derivation.model.architecture != "encoder-decoder"
    try:
        with FormatBallBackend(fmt, prec, radii, ties=ties) as xp:
            return run(derivation, xp)
    except (SymtfError, TypeError, ZeroDivisionError):
        return None


def enclose_rounded(derivation: Any, prec: int = 128) -> Any:
    """The exact forward pass with the ``rounded_inputs`` as balls (``None`` if none or undecidable).

    See :mod:`symtf.backends.rounded`; every value downstream becomes a certified range.
    """
    from symtf.backends.rounded import RoundedBallBackend
    from symtf.errors import SymtfError
    from symtf.graph.pipeline import run

    inputs = getattr(derivation, "rounded_inputs", None)
    if not inputs:
        return None
    ties = derivation.model.generate is None
    try:
        with RoundedBallBackend(inputs, prec, ties=ties) as xp:
            return run(derivation, xp)
    except (SymtfError, TypeError, ZeroDivisionError):
        return None


def enclose_step(derivation: Any, fmt: str, step: str, base: Any, prec: int = 128) -> Any:
    """What ``fmt`` gives for one step computed from its inputs (``None`` if undecidable).

    Every other step takes its value from ``base`` (a certified ball trace of the exact
    values, or of ranges over rounded inputs), stored once in the format; only ``step``
    is computed with the format's rounding (and only what it reads is looked at). This
    is the step's own rounding error, not the accumulation through the whole model (see
    :func:`enclose` for that bound).
    """
    from symtf.errors import SymtfError
    from symtf.graph.core import Reuse
    from symtf.graph.pipeline import run

    f = FORMATS[fmt]

    def given(name: str) -> Any:
        if name == step or name not in base:
            return None
        value = base.value(name)
        if isinstance(value, tuple) or value is None:
            return None
        return as_format(value, f)

    ties = derivation.model.generate is None and derivation.model.architecture != "encoder-decoder"
    try:
        with FormatBallBackend(fmt, prec, ties=ties) as xp:
            return run(derivation, xp, reuse=Reuse(base, given=given, take=False), needed={step})
    except (SymtfError, TypeError, ZeroDivisionError):
        return None


def rounded_witness(
    derivation: Any,
    targets: Sequence[tuple[str, tuple[int, ...], Any]],
    mode: str,
    cache: MutableMapping[Hashable, Any] | None = None,
) -> bool:
    """Whether one point of the ``rounded_inputs``' rounding intervals prints as ``targets``.

    An enclosure over the intervals that meets a print does not show that the print is
    reached (enclosures are wider than the range); a witness does. The model is evaluated
    at each point tried in certified balls
    (:class:`~symtf.backends.rounded.ShiftedBallBackend`) and :func:`symtf.witness.reach`
    chooses the points.

    Args:
        derivation: The derivation, its rounded inputs marked.
        targets: Each printed value: its step, its full index in the step, and the
            :class:`~symtf.numbers.Printed` it must round to.
        mode: The claim's rounding mode.
        cache: Traces at the points tried, kept across calls on one derivation (only the
            points that move at most one entry, which every search tries first).

    Returns:
        True when a point is found whose certified values all print as ``targets``.
    """
    from symtf.witness import reach

    problem = _RoundedProblem(derivation, targets, mode, cache)
    return reach(problem.entries, problem.at, problem.intervals)


def rounded_decision(
    derivation: Any,
    targets: Sequence[tuple[str, tuple[int, ...], Any]],
    mode: str,
    cache: MutableMapping[Hashable, Any] | None = None,
) -> Any:
    """Whether some point of the ``rounded_inputs``' rounding intervals prints as ``targets``:
    a witness, a certified refutation, or "could not decide"
    (a :class:`~symtf.witness.Decision`, from :func:`symtf.witness.decide`).

    Points and boxes of the intervals are evaluated in certified balls
    (:class:`~symtf.backends.rounded.ShiftedBallBackend`), only the steps the targets are
    computed from, and only the entries of the rounded inputs those steps read move.
    Arguments as for :func:`rounded_witness`.
    """
    from symtf.witness import decide

    problem = _RoundedProblem(derivation, targets, mode, cache)
    return decide(problem.entries, problem.at, problem.enclose, problem.intervals)


def rounded_upstream(derivation: Any, steps: Collection[str]) -> list[str]:
    """The rounded inputs ``steps`` are computed from, by name (all of them when the graph
    cannot tell: a model's weights, a decoding step)."""
    from symtf.errors import SymtfError
    from symtf.graph.core import _upstream
    from symtf.graph.pipeline import graph_of

    inputs = derivation.rounded_inputs or {}
    try:
        graph = graph_of(derivation)
    except SymtfError:  # a graph that does not build: every input may be read
        return list(inputs)
    names = {n.name for n in graph.nodes}
    up = _upstream(graph.nodes, steps) if all(s in names for s in steps) else None
    if up is None:
        return list(inputs)
    return [n for n in inputs if n not in names or n in up]


class _RoundedProblem:
    """The entries that may move, and how a point or a box of their intervals evaluates."""

    def __init__(
        self,
        derivation: Any,
        targets: Sequence[tuple[str, tuple[int, ...], Any]],
        mode: str,
        cache: MutableMapping[Hashable, Any] | None,
    ) -> None:
        from symtf.numbers import rounding_interval

        self.d = derivation
        self.targets = targets
        self.cache = cache
        self.steps = frozenset(step for step, _, _ in targets)
        read = set(rounded_upstream(derivation, self.steps))
        inputs = (
            [r for n, r in derivation.rounded_inputs.items() if n in read]
            if derivation.rounded_inputs
            else []
        )
        self.entries: list[tuple[Hashable, Fraction]] = [
            ((id(r.values), i, j), h)
            for r in inputs
            for i, row in enumerate(r.half)
            for j, h in enumerate(row)
            if h
        ]
        self.shapes = {id(r.values): (len(r.half), len(r.half[0]) if r.half else 0) for r in inputs}
        rmode = "half-up" if mode == "any" else mode
        self.intervals = [rounding_interval(p, rmode) for _, _, p in targets]

    def _grid(self, moves: Mapping[Any, Fraction]) -> dict[int, list[list[Fraction]]]:
        grid = {k: [[Fraction(0)] * m for _ in range(n)] for k, (n, m) in self.shapes.items()}
        for (k, i, j), dv in moves.items():
            grid[k][i][j] = dv
        return grid

    def _run(self, shifts: Mapping[Any, Fraction], radii: Mapping[Any, Fraction] | None) -> Any:
        from symtf.backends.rounded import ShiftedBallBackend
        from symtf.errors import SymtfError, Undecided
        from symtf.graph.pipeline import run

        try:
            with ShiftedBallBackend(
                self._grid(shifts), radii=None if radii is None else self._grid(radii)
            ) as xp:
                return run(self.d, xp, needed=self.steps)
        except (SymtfError, Undecided, ArithmeticError, TypeError, IndexError, KeyError):
            return None

    def _values(self, t: Any) -> list[Any] | None:
        from flint import arb

        if t is None:
            return None
        out = []
        for step, idx, _ in self.targets:
            try:
                x = t.value(step)[idx]
            except (IndexError, TypeError, KeyError, ValueError):
                return None
            x = getattr(x, "b", x)
            if not isinstance(x, arb):
                return None
            out.append(x)
        return out

    def at(self, moves: Mapping[Any, Fraction]) -> list[Any] | None:
        """The certified values at one point (each moved entry's exact shift)."""
        key = (self.steps, tuple(sorted(moves.items()))) if len(moves) <= 1 else None
        cache = self.cache
        if cache is not None and key is not None and key in cache:
            t = cache[key]
        else:
            t = self._run(moves, None)
            if cache is not None and key is not None:
                cache[key] = t
        return self._values(t)

    def enclose(
        self, centre: Mapping[Any, Fraction], radius: Mapping[Any, Fraction]
    ) -> list[Any] | None:
        """The certified values over a box (each entry's centre shift and half-width)."""
        return self._values(self._run(centre, radius))


__all__ = [
    "enclose",
    "enclose_rounded",
    "enclose_step",
    "rounded_decision",
    "rounded_upstream",
    "rounded_witness",
    "simulate",
]
