"""Run ``symtf`` in a subprocess under resource limits, and report what it used.

Tests of hostile input bound time and memory the way an operating system does,
not with wall-clock assertions: the child gets an ``RLIMIT_CPU`` of CPU seconds
(exceeding it kills the child with SIGXCPU, which the caller sees as a negative
return code) and an ``RLIMIT_AS`` of address space (exceeding it is a
``MemoryError`` inside the child, which symtf must turn into exit code 2).
The child reports its own peak resident memory, so a test can say "refused
before reading" as "peaked below N MB". A generous wall-clock timeout remains
only as a safety net for a child that blocks without using CPU (a FIFO read),
which is then a failure of the test, not a measurement.

Imported by name (``from limited import run_symtf``): ``tests`` is on pytest's
``pythonpath``.
"""

from __future__ import annotations

import os
import resource
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

_PEAK = "symtf-test-peak-rss-kb: "

#: The child: symtf's own main(), then its peak RSS on the last line of stderr.
_CHILD = f"""
import resource, sys
from symtf.cli import main
try:
    code = main(sys.argv[1:])
finally:
    try:
        sys.stdout.flush()
    except Exception:
        pass
    use = resource.getrusage(resource.RUSAGE_SELF)
    # VmHWM: the peak of this image alone. ru_maxrss keeps, across exec, the RSS of the
    # forked parent (a pytest worker of 500 MB), which is not this command's memory.
    peak = use.ru_maxrss
    try:
        with open("/proc/self/status") as status:
            peak = next(int(ln.split()[1]) for ln in status if ln.startswith("VmHWM:"))
    except (OSError, StopIteration, ValueError):
        pass
    sys.stderr.write(f"\\n{_PEAK}{{peak}} {{use.ru_utime + use.ru_stime}}\\n")
    sys.stderr.flush()
sys.exit(code)
"""


@dataclass(frozen=True)
class Ran:
    """What a limited run of symtf did.

    Attributes:
        returncode: The exit code (negative: killed by that signal, e.g. SIGXCPU).
        stdout: Its standard output.
        stderr: Its standard error, less the peak-memory line.
        peak_mb: Its peak resident memory in MB (``None`` if it died before saying).
        cpu_seconds: The CPU time it used, user and system (``None`` likewise).
    """

    returncode: int
    stdout: str
    stderr: str
    peak_mb: float | None
    cpu_seconds: float | None = None

    @property
    def output(self) -> str:
        return self.stdout + self.stderr


#: Capabilities that let root ignore file permissions (DAC_OVERRIDE, DAC_READ_SEARCH, FOWNER).
_OVERRIDES = (1, 2, 3)


def _limits(
    cpu_seconds: float, memory_mb: int, file_bytes: int | None, honour_permissions: bool
) -> None:
    cpu = max(1, int(cpu_seconds))
    resource.setrlimit(resource.RLIMIT_CPU, (cpu, cpu + 5))
    mem = memory_mb * 1024 * 1024
    resource.setrlimit(resource.RLIMIT_AS, (mem, mem))
    if file_bytes is not None:  # a write past this size fails with EFBIG: a full disk
        resource.setrlimit(resource.RLIMIT_FSIZE, (file_bytes, file_bytes))
    if honour_permissions and os.geteuid() == 0:
        drop_permission_overrides()


def drop_permission_overrides() -> None:
    """Make file permissions apply to this process (and what it runs) even as root.

    Drops the override capabilities from the bounding set, so the ``exec`` that follows
    leaves them out: a read-only folder is then read-only for root too.
    """
    import ctypes

    libc = ctypes.CDLL(None, use_errno=True)
    for cap in _OVERRIDES:
        if libc.prctl(24, cap, 0, 0, 0) != 0:  # PR_CAPBSET_DROP
            raise OSError(ctypes.get_errno(), "prctl(PR_CAPBSET_DROP)")


def run_symtf(
    *args: str,
    cpu_seconds: float = 120,
    memory_mb: int = 3000,
    cwd: Path | str | None = None,
    stdin: int | None = subprocess.DEVNULL,
    stdout: int | None = subprocess.PIPE,
    wall_safety: float = 600,
    env: dict[str, str] | None = None,
    file_bytes: int | None = None,
    honour_permissions: bool = False,
) -> Ran:
    """``symtf ARGS`` in a fresh interpreter under CPU-time and address-space limits.

    Args:
        args: The command line after ``symtf``.
        cpu_seconds: ``RLIMIT_CPU`` of the child.
        memory_mb: ``RLIMIT_AS`` of the child, in MB.
        cwd: Its working folder.
        stdin: Its standard input (default: ``/dev/null``).
        stdout: Its standard output (default: captured); a file descriptor to redirect.
        wall_safety: Seconds after which a child that blocks is killed (a hang, not a limit).
        env: Extra environment variables.
        file_bytes: ``RLIMIT_FSIZE``: writes past this size fail as on a full disk.
        honour_permissions: Run without root's permission overrides (read-only means read-only).
    """
    environment = child_environment(**(env or {}))
    if file_bytes is not None:  # CPython would rename a .pyc cut short by the limit into place
        environment["PYTHONDONTWRITEBYTECODE"] = "1"
    proc = subprocess.run(
        [sys.executable, "-c", _CHILD, *args],
        stdin=stdin,
        stdout=stdout,
        stderr=subprocess.PIPE,
        cwd=cwd,
        env=environment,
        preexec_fn=lambda: _limits(cpu_seconds, memory_mb, file_bytes, honour_permissions),
        timeout=wall_safety,
        check=False,
    )
    err = proc.stderr.decode("utf-8", "replace")
    peak = cpu = None
    head, sep, tail = err.rpartition("\n" + _PEAK)
    if sep:
        kb, seconds = tail.split()
        peak, cpu = int(kb) / 1024, float(seconds)
        err = head
    out = proc.stdout.decode("utf-8", "replace") if proc.stdout is not None else ""
    return Ran(proc.returncode, out, err, peak, cpu)


def child_environment(**extra: str) -> dict[str, str]:
    """The environment :func:`run_symtf` gives its child, for tests that start symtf themselves."""
    return {
        **os.environ,
        "SYMTF_DEBUG": "",
        "OPENBLAS_NUM_THREADS": "1",
        "OMP_NUM_THREADS": "1",
        **extra,
    }


__all__ = ["Ran", "child_environment", "drop_permission_overrides", "run_symtf"]
