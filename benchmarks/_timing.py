"""Timing shared by the benchmarks (imported by name: a script's own folder is on sys.path)."""

from __future__ import annotations

import time
from collections.abc import Callable


def best_of(fn: Callable[[], object], repeat: int) -> float:
    """The fastest of ``repeat`` timings, in seconds (the least disturbed run).

    Args:
        fn: What to time, called ``repeat`` times.
        repeat: How many runs.

    Returns:
        The shortest wall-clock time of one call.
    """
    times = []
    for _ in range(repeat):
        t = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t)
    return min(times)
