"""The suite's own set-up: the README's ``pytest`` works with and without pytest-xdist,
leaves out the slow sweeps (``pytest -m ""`` runs them), and the CPU clock the budget
tests use counts work, not waiting.
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


def test_the_slow_marker_is_registered(pytestconfig: pytest.Config) -> None:
    assert any(m.startswith("slow:") for m in pytestconfig.getini("markers"))


def test_a_plain_pytest_leaves_the_slow_sweeps_out_and_m_empty_runs_them() -> None:
    from conftest import SLOW_SWEEPS

    files = sorted({key.split("::")[0] for key in SLOW_SWEEPS})
    plain = _pytest("--collect-only", "-q", "-p", "no:xdist", *files)
    everything = _pytest("--collect-only", "-q", "-p", "no:xdist", "-m", "", *files)
    only = _pytest("--collect-only", "-q", "-p", "no:xdist", "-m", "slow", *files)
    assert plain.returncode == everything.returncode == only.returncode == 0, plain.stderr
    default, every, slow = (
        {ln for ln in r.stdout.splitlines() if "::" in ln} for r in (plain, everything, only)
    )
    assert default and slow and every == default | slow and not default & slow
    assert "deselected" in plain.stdout and "deselected" not in everything.stdout
    for key, keep in SLOW_SWEEPS.items():
        cases = {n for n in every if n.split("[", 1)[0] == key}
        assert cases, f"{key} is marked slow in tests/conftest.py but no such test is collected"
        assert cases & slow, key
        assert bool(cases & default) == bool(keep), (key, keep)
    # e.g. the sheet sweep: seed 0 of every bundled derivation but one stays, the rest is slow
    sheets = {n for n in every if "test_no_sheet_gives_a_blank_away" in n}
    seed_0 = {n for n in sheets if n.endswith("-0]")}
    assert sheets & default == seed_0 - {n for n in seed_0 if "[steps_int8_absmax-" in n}
