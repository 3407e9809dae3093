"""Draws from numpy's legacy seeded stream: facts of the program, not guesses.

``np.random.seed(s)`` (the global ``RandomState``) followed by ``np.random.randn(…)``,
``rand``, ``random_sample``, ``standard_normal``, ``normal`` or ``uniform`` gives values
numpy documents as stable across its versions (the legacy stream is frozen, unlike
``default_rng``'s, whose Generator streams numpy does not promise to keep). What such a
notebook computes from them is therefore read from the values numpy's own
``RandomState`` draws in the same order; nothing of the notebook is run. Each float64
drawn becomes the exact rational it is (``float.as_integer_ratio``), written ``p/q``, so
no decimal rounding stands between the draw and the derivation.

:class:`NumpyStream` is the state: the seed and every draw made since, in order. It is
immutable; a draw returns the next state, so the translation keeps the state only while
every statement since the seed is translated (code not translated may have drawn).
"""

from __future__ import annotations

from dataclasses import dataclass
from fractions import Fraction
from typing import Any

__all__ = ["DRAWS", "NumpyStream"]

#: The legacy ``numpy.random`` functions read, by name: the parameters they take before
#: ``size`` (with their defaults), and whether the dimensions are written one by one
#: (``randn(2, 3)``) rather than as ``size``.
DRAWS: dict[str, tuple[tuple[tuple[str, float], ...], bool]] = {
    "randn": ((), True),
    "rand": ((), True),
    "random_sample": ((), False),
    "random": ((), False),
    "standard_normal": ((), False),
    "normal": ((("loc", 0.0), ("scale", 1.0)), False),
    "uniform": ((("low", 0.0), ("high", 1.0)), False),
}

#: The most values one notebook may draw in all (each later draw replays those before).
MAX_DRAWN = 100_000


@dataclass(frozen=True)
class NumpyStream:
    """The global legacy stream after ``np.random.seed(seed)`` and the draws since."""

    seed: int
    #: Each draw made since the seed: the function, its parameters and its shape.
    calls: tuple[tuple[str, tuple[float, ...], tuple[int, ...]], ...] = ()

    @property
    def drawn(self) -> int:
        """How many values were drawn since the seed."""
        total = 0
        for _, _, shape in self.calls:
            n = 1
            for d in shape:
                n *= d
            total += n
        return total

    def describe(self) -> str:
        """Where drawn values come from, in the derivation's words."""
        return (
            f"drawn by numpy's RandomState({self.seed}) (np.random.seed({self.seed}), "
            "the legacy stream numpy keeps stable across versions)"
        )

    def draw(
        self, fname: str, params: tuple[float, ...], shape: tuple[int, ...]
    ) -> tuple[NumpyStream, list[Fraction]] | None:
        """The values ``np.random.<fname>(…)`` draws next, exactly, and the state after.

        Returns ``None`` when the seed is not one numpy takes, the shape is empty or
        negative, or the draws would be too many to replay.
        """
        import numpy as np

        if fname not in DRAWS or not shape or any(d <= 0 for d in shape):
            return None
        if not 0 <= self.seed < 2**32:
            return None
        n = 1
        for d in shape:
            n *= d
        if self.drawn + n > MAX_DRAWN:
            return None
        state = np.random.RandomState(self.seed)
        for f, p, s in self.calls:
            _call(state, f, p, s)
        values = _call(state, fname, params, shape)
        out = [Fraction(*float(v).as_integer_ratio()) for v in values]
        return NumpyStream(self.seed, (*self.calls, (fname, params, shape))), out


def _call(state: Any, fname: str, params: tuple[float, ...], shape: tuple[int, ...]) -> Any:
    """One draw of ``state``, flattened in C order."""
    if DRAWS[fname][1]:
        return getattr(state, fname)(*shape).ravel()
    return getattr(state, fname)(*params, size=shape).ravel()
