"""Whether printed values are reached from inputs known only to their printed precision.

An enclosure over the inputs' rounding intervals that meets a print does not show that the
print is reached (enclosures are wider than ranges), and a search that finds no point does
not show that none exists. Two answers are certified here:

- a *witness* (:func:`reach`): one point of the intervals whose certified values all lie
  inside the prints' rounding intervals;
- a *refutation* (:func:`decide`): the intervals cut into boxes, each of which has a value
  whose certified enclosure lies wholly outside its print's interval.

Anything else is undecided, and :func:`decide` says so: a print is never called a slip
because the search gave up. The search is told how to evaluate a point (``at``) and a box
(``enclose``), so the draft's search and the check share it.
"""

from __future__ import annotations

from collections import deque
from collections.abc import Callable, Hashable, Mapping, Sequence
from dataclasses import dataclass, field
from fractions import Fraction
from typing import Any

import numpy as np
from flint import arb

from symtf.backends.certify import compare_ball

#: The most rounded entries a witness search moves one at a time, to learn which way each
#: pushes the values (one evaluation of the model each; callers pass only the entries the
#: values are computed from).
WITNESS_ENTRIES = 256
#: Bisection steps along the chosen direction.
WITNESS_STEPS = 48
#: Steps of the linearised witness searches (one evaluation each).
LINEAR_STEPS = 6
#: The most evaluations (of a point or a box) :func:`decide` spends cutting the intervals
#: into boxes once no witness is found; past it the answer is "could not decide".
BOX_BUDGET = 160

Point = Mapping[Any, Fraction]
#: The certified values at a point (input key → its exact shift); ``None`` when they cannot
#: be computed.
At = Callable[[Point], "list[arb] | None"]
#: The certified values over a box: each entry's centre shift, and its half-width.
Enclose = Callable[[Point, Point], "list[arb] | None"]


@dataclass(frozen=True)
class Decision:
    """What the search established about a set of prints.

    Attributes:
        reached: True (a witness point was found), False (no point gives them, certified
            box by box), or None (neither could be shown).
        point: The witness: each moved entry's exact shift (empty: the printed inputs).
        boxes: How many boxes the refutation ruled out.
        reason: Why the answer is None, in words.
    """

    reached: bool | None
    point: Mapping[Any, Fraction] = field(default_factory=dict)
    boxes: int = 0
    reason: str = ""


def reach(
    entries: Sequence[tuple[Hashable, Fraction]],
    at: At,
    intervals: Sequence[Any],
) -> bool:
    """Whether one point of some inputs' rounding intervals gives values in ``intervals``.

    A witness that printed values are reached, not only met by an enclosure (enclosures
    are wider than the range). Each input entry (``entries``: its key and half-width) is
    moved to the end of its interval alone, to see which way it pushes the values; then
    all are moved together the way they push the off values, with the furthest one
    bisected (for one value this finds the point whenever the far corner passes the
    print), and points solving the first-order model are tried: aimed at the middle of
    every interval, then at a margin inside each one (down to a
    thousandth of its half-width, for a point of a thin sliver of the box).

    Args:
        entries: The input entries that may move, each with its half-width.
        at: The certified values at a point (input key → its exact shift); ``None``
            when they cannot be computed.
        intervals: The rounding interval of each printed value (``lo``, ``hi``), in
            the order ``at`` gives the values.

    Returns:
        True when a point is found whose certified values all lie inside their intervals;
        False when none is (or there are more than :data:`WITNESS_ENTRIES` entries).
    """
    return _Search(entries, at, intervals).run() is not None


def decide(
    entries: Sequence[tuple[Hashable, Fraction]],
    at: At,
    enclose: Enclose,
    intervals: Sequence[Any],
    budget: int = BOX_BUDGET,
) -> Decision:
    """A witness, a certified refutation, or "could not decide", for values in ``intervals``.

    The witness search of :func:`reach` runs first. Without a witness, the box of the
    inputs' rounding intervals is cut in two along the entry that moves the values most
    (its push times its width), breadth first: a box is ruled out when one of its values'
    certified enclosure lies wholly outside its interval, and each box's centre is tried
    as a witness. All boxes ruled out is a refutation; running out of ``budget``
    evaluations, or a box that cannot be enclosed and is too small to cut, is undecided.

    Args:
        entries: The input entries that may move, each with its half-width.
        at: The certified values at a point.
        enclose: The certified values over a box (each entry's centre shift and
            half-width; entries not given are at their printed value); ``None`` when they
            cannot be enclosed (a divisor whose range holds 0).
        intervals: The rounding interval of each printed value.
        budget: The most evaluations the refutation may spend.
    """
    search = _Search(entries, at, intervals)
    found = search.run()
    if found is not None:
        return Decision(True, found)
    half = dict(entries)
    weight = search.weights()
    root: tuple[dict[Any, Fraction], dict[Any, Fraction]] = ({}, dict(half))
    queue = deque([root])
    spent, ruled_out = 0, 0
    while queue:
        if spent >= budget:
            return Decision(None, boxes=ruled_out, reason=f"{budget} evaluations were not enough")
        centre, radius = queue.popleft()
        values = enclose(centre, radius)
        spent += 1
        if values is not None and any(_outside(x, intervals[k]) for k, x in enumerate(values)):
            ruled_out += 1
            continue
        if centre:  # the root's centre is the printed inputs, tried by the search
            point = at(centre)
            spent += 1
            if point is not None and all(search.side(x, k) == 0 for k, x in enumerate(point)):
                return Decision(True, centre)
        if not radius:  # a point (no entry moves) whose values are not certified apart
            return Decision(None, boxes=ruled_out, reason="the values could not be certified")
        cut = max(
            radius,
            key=lambda e: (weight.get(e, 0.0) * float(radius[e] / half[e]), radius[e] / half[e]),
        )
        if radius[cut] < half[cut] / 2**40:
            return Decision(None, boxes=ruled_out, reason="a box too small to cut is not ruled out")
        r = radius[cut] / 2
        for s in (-1, 1):
            c = dict(centre)
            c[cut] = centre.get(cut, Fraction(0)) + s * r
            queue.append((c, {**radius, cut: r}))
    return Decision(False, boxes=ruled_out)


def _outside(x: arb, iv: Any) -> bool:
    """Whether the ball lies wholly below or wholly above the interval (certified)."""
    return compare_ball(x, iv.lo) == -1 or compare_ball(x, iv.hi) == 1


class _Search:
    """One witness search: the values at the printed inputs, and each entry's push."""

    def __init__(
        self, entries: Sequence[tuple[Hashable, Fraction]], at: At, intervals: Sequence[Any]
    ) -> None:
        self.entries = list(entries)
        self.at = at
        self.intervals = intervals
        self.base: list[arb] | None = None
        self.pushes: list[list[arb]] = []  # per entry: each value's change over its half-width

    def side(self, x: arb, k: int) -> int | None:
        """-1 below the interval of target k, 1 above, 0 inside, None undecided."""
        iv = self.intervals[k]
        if compare_ball(x, iv.lo) == -1:
            return -1
        if compare_ball(x, iv.hi) == 1:
            return 1
        if compare_ball(x, iv.lo) == 1 and compare_ball(x, iv.hi) == -1:
            return 0
        return None

    def _lean(self, x: arb, k: int) -> int:
        """The end of interval k an undecided value lies at: -1 the lower, 1 the upper."""
        iv = self.intervals[k]
        return -1 if float(x.mid()) <= float((iv.lo + iv.hi) / 2) else 1

    def inside(self, values: list[arb] | None) -> bool:
        return values is not None and all(self.side(x, k) == 0 for k, x in enumerate(values))

    def weights(self) -> dict[Hashable, float]:
        """How far each entry moves the values, in widths of their intervals (0 if unknown)."""
        if not self.pushes:
            return {}
        width = [float(iv.hi - iv.lo) or 1.0 for iv in self.intervals]
        return {
            e: sum(abs(float(p.mid())) / w for p, w in zip(col, width, strict=True))
            for (e, _), col in zip(self.entries, self.pushes, strict=True)
        }

    def run(self) -> dict[Any, Fraction] | None:
        """A witness point (each moved entry's shift), or ``None``."""
        base = self.at({})
        if base is None:
            return None
        self.base = base
        sides = [self.side(x, k) for k, x in enumerate(base)]
        if all(s == 0 for s in sides):
            return {}
        # a value whose ball meets an end of its interval (a print on a rounding
        # boundary) is off toward that end until shown inside: the search moves it
        # toward the interval's middle, and a point counts only when every value is
        # certified inside
        sides = [
            self._lean(x, k) if s is None else s
            for k, (x, s) in enumerate(zip(base, sides, strict=True))
        ]
        if not self.entries or len(self.entries) > WITNESS_ENTRIES:
            return None
        for e, h in self.entries:
            moved = self.at({e: h})
            if moved is None:
                self.pushes = []
                return None
            self.pushes.append([m - b for m, b in zip(moved, base, strict=True)])
        toward = [-(s or 0) for s in sides]  # +1: the value must grow
        found = self._along_one_way(toward)
        if found is None:
            found = self._linearised(margin=None)
        if found is None:
            for margin in (0.5, 0.25, 0.05, 0.01, 0.001):
                found = self._linearised(margin=margin)
                if found is not None:
                    break
        return found

    def _along_one_way(self, toward: list[int]) -> dict[Any, Fraction] | None:
        """Every entry moved the way it pushes the off values, ``t`` bisected on the furthest."""
        base = self.base
        assert base is not None
        direction: dict[Hashable, int] = {}
        for (e, _), col in zip(self.entries, self.pushes, strict=True):
            push = sum((toward[t] * col[t] for t in range(len(base))), arb(0))
            direction[e] = 1 if push > 0 else (-1 if push < 0 else 0)
        if not any(direction.values()):
            return None
        halves = dict(self.entries)

        def point(t: Fraction) -> dict[Any, Fraction]:
            return {e: t * s * halves[e] for e, s in direction.items() if s}

        def off(k: int) -> float:
            iv = self.intervals[k]
            return abs(float(base[k].mid()) - float((iv.lo + iv.hi) / 2))

        worst = max(range(len(base)), key=off)

        def sides_at(t: Fraction) -> list[int | None] | None:
            vals = self.at(point(t))
            return None if vals is None else [self.side(x, k) for k, x in enumerate(vals)]

        short = -toward[worst]  # the side of its print the furthest value starts on
        at_end = sides_at(Fraction(1))
        if at_end is None or at_end[worst] is None or at_end[worst] == short:
            return None  # even the far end does not reach the print
        if all(x == 0 for x in at_end):
            return point(Fraction(1))
        lo, hi = Fraction(0), Fraction(1)
        for _ in range(WITNESS_STEPS):
            t = (lo + hi) / 2
            now = sides_at(t)
            if now is None or now[worst] is None:
                return None
            if all(x == 0 for x in now):
                return point(t)
            if now[worst] == 0:
                return None  # the furthest value prints right here, the others do not
            if now[worst] == short:
                lo = t
            else:
                hi = t
        return None

    def _linearised(self, margin: float | None) -> dict[Any, Fraction] | None:
        """A point from the values' first-order response to each entry.

        With ``margin`` None the shifts solve the least-squares problem with each value's
        miss from the middle of its interval measured in half-widths of the interval; with
        a margin (a fraction of each interval's half-width) they are a point of the box at
        which every value of the first-order model lies that far inside its interval
        (alternating projections, which find such a point whenever the model has one).
        Either is refined a few times with the same slopes from the values reached; a point
        counts only when its certified values all lie inside their intervals.
        """
        assert self.base is not None
        slope = np.array([[float(x.mid()) for x in col] for col in self.pushes]).T
        mid = np.array([float((iv.lo + iv.hi) / 2) for iv in self.intervals])
        half = np.array([float((iv.hi - iv.lo) / 2) for iv in self.intervals])
        if not (np.all(np.isfinite(slope)) and np.all(half > 0)):
            return None
        scaled = slope / half[:, None]  # values (in half-widths) × entries (in half-widths)
        u = np.zeros(len(self.entries))
        now = np.array([float(x.mid()) for x in self.base])
        for _ in range(LINEAR_STEPS):
            if not np.all(np.isfinite(now)):
                return None
            miss = (mid - now) / half + scaled @ u  # what the model must give, from u = 0
            if margin is None:
                u = _box_least_squares(scaled, miss, u.copy())
            else:
                u = _box_feasible(scaled, miss - (1 - margin), miss + (1 - margin), u.copy())
            point = {e: Fraction(float(x)) * h for (e, h), x in zip(self.entries, u, strict=True)}
            values = self.at(point)
            if values is None:
                return None
            if self.inside(values):
                return point
            now = np.array([float(x.mid()) for x in values])
        return None


def _box_least_squares(a: Any, r: Any, u: Any, sweeps: int = 200) -> Any:
    """``u`` in [-1, 1]ⁿ minimising ‖a·u − r‖ (coordinate descent from the ``u`` given)."""
    norms = (a**2).sum(axis=0)
    res = r - a @ u
    for _ in range(sweeps):
        moved = 0.0
        for j in range(a.shape[1]):
            if norms[j] == 0:
                continue
            new = min(1.0, max(-1.0, u[j] + float(a[:, j] @ res) / norms[j]))
            res -= a[:, j] * (new - u[j])
            moved = max(moved, abs(new - u[j]))
            u[j] = new
        if moved < 1e-9:
            break
    return u


def _box_feasible(a: Any, lo: Any, hi: Any, u: Any, sweeps: int = 400) -> Any:
    """``u`` in [-1, 1]ⁿ with ``lo ≤ a·u ≤ hi``, by cyclic projections from the ``u`` given.

    Each sweep projects onto each violated slab ``lo_k ≤ a_k·u ≤ hi_k`` and clips to the
    box; it stops when every row holds (or after ``sweeps``, returning the last point).
    """
    norms = (a**2).sum(axis=1)
    for _ in range(sweeps):
        worst = 0.0
        for k in range(a.shape[0]):
            if norms[k] == 0:
                continue
            y = float(a[k] @ u)
            gap = lo[k] - y if y < lo[k] else (hi[k] - y if y > hi[k] else 0.0)
            if gap:
                worst = max(worst, abs(gap))
                u = np.clip(u + a[k] * (gap / norms[k]), -1.0, 1.0)
        if worst < 1e-12:
            break
    return u


__all__ = [
    "BOX_BUDGET",
    "LINEAR_STEPS",
    "WITNESS_ENTRIES",
    "WITNESS_STEPS",
    "Decision",
    "decide",
    "reach",
]
