"""Every number system implements the one Backend protocol; a missing method is found before a user finds it."""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from symtf.backends import Backend, BallBackend, BaseBackend, ExactBackend, FloatBackend
from symtf.backends.format_sim import FormatSimBackend
from symtf.backends.formats import FormatBallBackend
from symtf.backends.midrad import MidradBackend
from symtf.backends.rounded import RoundedBallBackend, RoundedInputs

ROOT = Path(__file__).resolve().parent.parent


def _all_backends() -> list[object]:
    return [
        ExactBackend(),
        BallBackend(128),
        MidradBackend(),
        FloatBackend(),
        FormatBallBackend("float32"),
        FormatSimBackend("bfloat16"),
        RoundedBallBackend(RoundedInputs(), 128),
    ]


@pytest.mark.parametrize("xp", _all_backends(), ids=lambda xp: type(xp).__name__)
def test_every_backend_satisfies_the_protocol(xp: object) -> None:
    assert isinstance(xp, Backend)
    assert isinstance(xp, BaseBackend)
    assert isinstance(xp.kernels, dict) or hasattr(xp.kernels, "get")


def test_a_backend_missing_a_method_cannot_be_made() -> None:
    class Partial(BaseBackend):  # no matmul, no scalars
        name = "partial"

    with pytest.raises(TypeError, match="abstract"):
        Partial()  # type: ignore[abstract]


MYPY_PROGRAM = """
from symtf.backends import Backend, BallBackend, ExactBackend, FloatBackend
from symtf.backends.format_sim import FormatSimBackend
from symtf.backends.formats import FormatBallBackend
from symtf.backends.midrad import MidradBackend

backends: list[Backend] = [
    ExactBackend(), BallBackend(128), MidradBackend(), FloatBackend(),
    FormatBallBackend("float32"), FormatSimBackend("float32"),
]
"""

MYPY_MISSING = """
from typing import Any

from symtf.backends import Backend, BaseBackend


class Floats(BaseBackend):  # every native method but the matrix product
    name = "floats"

    def const(self, x: Any) -> Any: return float(x)
    def neg_inf(self) -> Any: return float("-inf")
    def pi(self) -> Any: return 3.141592653589793
    def sign(self, x: Any) -> int: return (x > 0) - (x < 0)
    def exp(self, x: Any) -> Any: return x
    def log(self, x: Any) -> Any: return x
    def sqrt(self, x: Any) -> Any: return x
    def erf(self, x: Any) -> Any: return x
    def tanh(self, x: Any) -> Any: return x
    def sin(self, x: Any) -> Any: return x
    def cos(self, x: Any) -> Any: return x
    def matrix(self, m: Any) -> Any: return m
    def from_rows(self, rows: Any) -> Any: return rows
    def shape(self, a: Any) -> tuple[int, int]: return (len(a), len(a[0]))
    def entry(self, a: Any, i: int, j: int) -> Any: return a[i][j]
    def add(self, a: Any, b: Any) -> Any: return a
    def mul(self, a: Any, b: Any) -> Any: return a
    def div(self, a: Any, b: Any) -> Any: return a
    def scale(self, a: Any, s: Any) -> Any: return a
    def transpose(self, a: Any) -> Any: return a


xp: Backend = Floats()
"""


def _mypy(program: str, tmp_path: Path) -> tuple[int, str]:
    api = pytest.importorskip("mypy.api")
    f = tmp_path / "program.py"
    f.write_text(textwrap.dedent(program))
    out, err, code = api.run(
        [
            "--follow-imports=silent",
            "--ignore-missing-imports",
            "--no-incremental",
            "--cache-dir=/dev/null",
            str(f),
        ]
    )
    return code, out + err


def test_mypy_sees_every_backend_as_a_backend(tmp_path: Path, monkeypatch) -> None:
    monkeypatch.chdir(ROOT)
    code, out = _mypy(MYPY_PROGRAM, tmp_path)
    assert code == 0, out


def test_mypy_sees_a_missing_method(tmp_path: Path, monkeypatch) -> None:
    monkeypatch.chdir(ROOT)
    code, out = _mypy(MYPY_MISSING, tmp_path)
    assert code == 1
    assert 'Cannot instantiate abstract class "Floats"' in out and '"matmul"' in out, out


ABS_STEP = """\
title = "absolute deviations"

[tensors]
x = ["0.1234567", "-1.25", "2"]

[steps]
d = "abs(x - sqrt(0.5))"

[[claims]]
label = "deviations"
step = "d"
printed = "0.5837 1.9571 1.2929"
"""


def test_abs_in_a_step_is_checked_by_the_default_path(tmp_path: Path) -> None:
    # √0.5 = 0.70710678…: |0.1234567 − √0.5| = 0.58365008…, |−1.25 − √0.5| = 1.95710678…,
    # |2 − √0.5| = 1.29289321… (by hand), each printed to four decimals.
    f = tmp_path / "abs.toml"
    f.write_text(ABS_STEP)
    r = subprocess.run(
        [sys.executable, "-m", "symtf", "check", "--format", "json", str(f)],
        capture_output=True,
        text=True,
        cwd=ROOT,
    )
    assert r.returncode == 0, r.stderr
    checks = json.loads(r.stdout)["derivations"][0]["checks"]
    assert [c["verdict"] for c in checks] == ["rounded", "rounded", "rounded"]
    assert {c["decided_by"] for c in checks} == {"midrad"}  # the midpoint–radius pass ran abs


def test_midrad_abs_encloses_both_sides_of_zero() -> None:
    import numpy as np
    from flint import arb

    from symtf.backends.midrad.arithmetic import MR

    xp = MidradBackend()
    with xp:
        a = MR(np.array([[-2.0, 0.5, 0.1]]), np.array([[0.5, 0.25, 0.3]]))
        out = xp.map(a, xp.abs)
        for j, (lo, hi) in enumerate([(1.5, 2.5), (0.25, 0.75), (0.0, 0.4)]):
            ball = out[0, j]
            assert ball.contains(arb(lo)) and ball.contains(arb(hi)), (j, ball)
        assert xp.abs(arb(-3)) == 3
