"""CPU time, for the tests whose behaviour is a budget (hostile input is refused quickly).

On a loaded machine wall-clock time measures the other processes as much as the
code under test. These helpers count the CPU seconds of the thread that runs the
block and of the child processes it has waited for, so that a budget holds however
busy the machine is. Not counted, because they are the test process's, not the
code's: BLAS worker threads that spin after a product (longer on a loaded machine),
and the garbage collector's passes over the heap every earlier test left (the
collector is off inside the block). Budgets are at least :data:`MARGIN` times what the
work costs on a quiet machine. Speed itself is measured in ``benchmarks/``.

Imported by name (``from cpu_time import CpuClock``): ``tests`` is on pytest's
``pythonpath``.
"""

from __future__ import annotations

import gc
import time
from types import TracebackType

try:
    import resource
except ImportError:  # not on Windows: child processes are then not counted
    resource = None  # type: ignore[assignment]

#: How many times the quiet-machine cost a budget allows.
MARGIN = 10


def children_cpu() -> float:
    """CPU seconds (user + system) of the child processes waited for so far."""
    if resource is None:
        return 0.0
    r = resource.getrusage(resource.RUSAGE_CHILDREN)
    return r.ru_utime + r.ru_stime


class CpuClock:
    """CPU seconds spent inside a ``with`` block, by this process and its waited-for children.

    Example::

        with CpuClock() as clock:
            subprocess.run([...])
        assert clock.seconds < 10
    """

    def __init__(self) -> None:
        self.seconds = 0.0
        self._own = 0.0
        self._children = 0.0
        self._gc = True

    def __enter__(self) -> CpuClock:
        self._gc = gc.isenabled()
        gc.disable()
        self._own, self._children = time.thread_time(), children_cpu()
        return self

    def __exit__(
        self,
        kind: type[BaseException] | None,
        error: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.seconds = (time.thread_time() - self._own) + (children_cpu() - self._children)
        if self._gc:
            gc.enable()
