"""Witnesses that printed values are reached: one point of some inputs' rounding intervals
whose certified values all print as printed.

An enclosure over the intervals that meets a print does not show that the print is reached
(enclosures are wider than ranges); a witness does. The search is told how to evaluate a
point (``at``), so the draft's search and the check's causes share it.
"""

from __future__ import annotations

from collections.abc import Callable, Hashable, Mapping, Sequence
from fractions import Fraction
from typing import Any

import numpy as np
from flint import arb

from symtf.backends.certify import compare_ball

#: The most rounded entries a witness search moves one at a time, to learn which way each
#: pushes the off entries (one evaluation of the model each).
WITNESS_ENTRIES = 64
#: Bisection steps along the chosen direction.
WITNESS_STEPS = 48


def reach(
    entries: Sequence[tuple[Hashable, Fraction]],
    at: Callable[[Mapping[Any, Fraction]], list[arb] | None],
    intervals: Sequence[Any],
) -> bool:
    """Whether one point of some inputs' rounding intervals gives values in ``intervals``.

    A witness that printed values are reached, not only met by an enclosure (enclosures
    are wider than the range). Each input entry (``entries``: its key and half-width) is
    moved to the end of its interval alone, to see which way it pushes the off values
    towards their intervals; all are then moved together that way by a fraction ``t`` of
    their half-widths, and ``t`` is bisected on the value furthest off.

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
    if not entries or len(entries) > WITNESS_ENTRIES:
        return False

    def side(x: arb, k: int) -> int | None:
        """-1 below the interval of target k, 1 above, 0 inside, None undecided."""
        iv = intervals[k]
        if compare_ball(x, iv.lo) == -1:
            return -1
        if compare_ball(x, iv.hi) == 1:
            return 1
        if compare_ball(x, iv.lo) == 1 and compare_ball(x, iv.hi) == -1:
            return 0
        return None

    base = at({})
    if base is None:
        return False
    sides = [side(x, k) for k, x in enumerate(base)]
    if any(s is None for s in sides):
        return False
    if all(s == 0 for s in sides):
        return True
    toward = [-(s or 0) for s in sides]  # +1: the entry must grow
    direction: dict[Hashable, int] = {}
    pushes: list[list[arb]] = []
    for e, h in entries:
        moved = at({e: h})
        if moved is None:
            return False
        pushes.append([m - b for m, b in zip(moved, base, strict=True)])
        push = sum((toward[t] * pushes[-1][t] for t in range(len(base))), arb(0))
        direction[e] = 1 if push > 0 else (-1 if push < 0 else 0)
    if not any(direction.values()):
        return False
    if _along_one_way(entries, at, base, direction, intervals, side, toward):
        return True
    return _linearised(entries, at, base, pushes, intervals, side)


def _along_one_way(
    entries: Sequence[tuple[Hashable, Fraction]],
    at: Callable[[Mapping[Any, Fraction]], list[arb] | None],
    base: list[arb],
    direction: Mapping[Hashable, int],
    intervals: Sequence[Any],
    side: Callable[[arb, int], int | None],
    toward: list[int],
) -> bool:
    """Every entry moved the way it pushes the off values, ``t`` bisected on the furthest."""
    halves = dict(entries)

    def along(t: Fraction) -> list[arb] | None:
        return at({e: t * s * halves[e] for e, s in direction.items() if s})

    def off(t: int) -> float:
        return abs(float(base[t].mid()) - float((intervals[t].lo + intervals[t].hi) / 2))

    worst = max(range(len(base)), key=off)

    def sides_at(t: Fraction) -> list[int | None] | None:
        vals = along(t)
        return None if vals is None else [side(x, k) for k, x in enumerate(vals)]

    short = -toward[worst]  # the side of its print the furthest entry starts on
    at_end = sides_at(Fraction(1))
    if at_end is None or at_end[worst] is None or at_end[worst] == short:
        return False  # even the far end does not reach the print
    if all(x == 0 for x in at_end):
        return True
    lo, hi = Fraction(0), Fraction(1)
    for _ in range(WITNESS_STEPS):
        t = (lo + hi) / 2
        now = sides_at(t)
        if now is None or now[worst] is None:
            return False
        if all(x == 0 for x in now):
            return True
        if now[worst] == 0:
            return False  # the furthest entry prints right here, the others do not
        if now[worst] == short:
            lo = t
        else:
            hi = t
    return False


#: Steps of the linearised witness search (one evaluation each).
LINEAR_STEPS = 4


def _linearised(
    entries: Sequence[tuple[Hashable, Fraction]],
    at: Callable[[Mapping[Any, Fraction]], list[arb] | None],
    base: list[arb],
    pushes: list[list[arb]],
    intervals: Sequence[Any],
    side: Callable[[arb, int], int | None],
) -> bool:
    """A point aimed at the middle of every interval at once, from the values' first-order
    response to each entry (``pushes``: the change when it moves by its whole half-width).

    The shifts solve the least-squares problem with each value's miss measured in
    half-widths of its interval, within the rounding intervals (coordinate descent on the
    box), refined a few times with the same slopes from the values reached; a point counts
    only when its certified values all lie inside their intervals.
    """
    slope = np.array([[float(x.mid()) for x in col] for col in pushes]).T  # values × entries
    mid = np.array([float((iv.lo + iv.hi) / 2) for iv in intervals])
    half = np.array([float((iv.hi - iv.lo) / 2) for iv in intervals])
    if not (np.all(np.isfinite(slope)) and np.all(half > 0)):
        return False
    scaled = slope / half[:, None]
    u = np.zeros(len(entries))
    now = np.array([float(x.mid()) for x in base])
    for _ in range(LINEAR_STEPS):
        if not np.all(np.isfinite(now)):
            return False
        u = _box_least_squares(scaled, (mid - now) / half + scaled @ u, u.copy())
        moves = {e: Fraction(float(x)) * h for (e, h), x in zip(entries, u, strict=True)}
        values = at(moves)
        if values is None:
            return False
        if all(side(x, k) == 0 for k, x in enumerate(values)):
            return True
        now = np.array([float(x.mid()) for x in values])
    return False


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


__all__ = ["LINEAR_STEPS", "WITNESS_ENTRIES", "WITNESS_STEPS", "reach"]
