"""The suite's own set-up: the README's ``pytest`` works with and without pytest-xdist,
and the CPU clock the budget tests use counts work, not waiting.
"""

from __future__ import annotations

import os
import subprocess
import sys
import time
from pathlib import Path

import pytest
from cpu_time import CpuClock

ROOT = Path(__file__).resolve().parent.parent
_BURN = "import time\nend = time.process_time() + 0.4\nwhile time.process_time() < end: pass\n"


def _pytest(*args: str) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("PYTEST_")}
    return subprocess.run(
        [sys.executable, "-m", "pytest", *args],
        capture_output=True,
        text=True,
        cwd=ROOT,
        env=env,
        timeout=600,
    )


def test_plain_pytest_runs_without_xdist() -> None:
    r = _pytest("-p", "no:xdist", "-q", "tests/test_suite_setup.py", "-k", "clock")
    assert r.returncode == 0, r.stdout + r.stderr
    assert "unrecognized arguments" not in r.stderr
    assert "passed" in r.stdout


def test_plain_pytest_uses_a_worker_per_core_with_xdist() -> None:
    pytest.importorskip("xdist")
    r = _pytest("-q", "tests/test_suite_setup.py", "-k", "clock")
    assert r.returncode == 0, r.stdout + r.stderr
    assert "bringing up nodes" in r.stdout  # xdist starts its workers
    one = _pytest("-q", "-n", "0", "tests/test_suite_setup.py", "-k", "clock")
    assert one.returncode == 0 and "bringing up nodes" not in one.stdout


def test_the_cpu_clock_counts_a_child_s_work() -> None:
    with CpuClock() as clock:
        subprocess.run([sys.executable, "-c", _BURN], check=True, timeout=600)
    assert clock.seconds >= 0.35


def test_the_cpu_clock_does_not_count_waiting() -> None:
    with CpuClock() as clock:
        time.sleep(0.5)
        subprocess.run([sys.executable, "-c", "import time; time.sleep(0.5)"], timeout=600)
    assert clock.seconds < 0.4
