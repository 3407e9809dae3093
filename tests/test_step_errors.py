"""Bad steps exit 2 with a message naming the file, the step and the column."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

import symtf
from symtf.cli import main

ROOT = Path(__file__).resolve().parent.parent
#: Where the symtf under test was imported from (a checkout, or an installed wheel):
#: child processes import the same one.
SYMTF_HOME = str(Path(symtf.__file__).resolve().parent.parent)
HEAD = '''title = "bad steps"
[tensors]
X = """
1 2 3 4
5 6 7 8
"""
v = ["1", "2", "3"]
[steps]
'''


def _y(what: str, expr: str, column: int, message: str) -> tuple[str, str, str, str, str]:
    """A case whose one step ``y = "expr"`` is refused at ``steps.y``, at ``column``."""
    return (what, f'y = "{expr}"', "steps.y", f"column {column}", message)


CASES = [
    _y("unknown op", "foo(X)", 1, "unknown op 'foo'"),
    _y("wrong arity", "softmax(X, -1, 2)", 1, "positional argument(s) for softmax but found 3"),
    _y("wrong arity, too few", "masked_fill(X, X)", 1, "masked_fill: missing argument value"),
    _y("unknown keyword", "softmax(X, dim=0)", 16, "softmax takes no keyword 'dim'"),
    _y("shape mismatch", "X @ v", 3, "cannot multiply shapes (2, 4) and (3,)"),
    _y("broadcast mismatch", "X + v", 3, "shapes (2, 4) and (3,) do not broadcast"),
    (
        "forward reference",
        'a = "1 + b"\nb = "X"',
        "steps.a",
        "column 5",
        "forward reference: b is defined later",
    ),
    ("cycle", 'a = "2 * b"\nb = "a + X"', "steps.a", "column 5", "cycle: b refers back to a"),
    ("self reference", 'a = "a + X"', "steps.a", "column 1", "a step cannot use itself"),
    (
        "duplicate",
        '"ctx[1]" = "X"\n"ctx[t]" = { expr = "X", t = [1, 2] }',
        "steps.ctx[t] (t = 1)",
        "line 10, column 1",
        "duplicate step ctx[1]",
    ),
    ("named ln", 'ln = "X"', "steps.ln", "line 9, column 1", "cannot be 'ln', which is an op"),
    ("named exp", 'exp = "X"', "steps.exp", "line 9, column 1", "cannot be 'exp', which is an op"),
    _y("index out of range", "X[5]", 2, "index 5 is out of range for axis 0 of size 2"),
    (
        "family index out of range",
        '"s[t]" = { expr = "s[t-1]", t = [1, 3] }',
        "steps.s[t] (t = 1)",
        "column 1",
        "no step s[0]",
    ),
    (
        "range over 10,000",
        '"s[t]" = { expr = "X", t = [1, 10001] }',
        "steps.s[t].t",
        "line 9, column 1",
        "at most 10,000 steps, found 10,001",
    ),
    _y("unknown name", "X + Xs", 5, "unknown name 'Xs'"),
    _y("syntax", "X +* 2", 4, "expected"),
    _y(
        "call left open",
        "exp(",
        5,
        "expected a number, a name, '(' or '[' but found the end of the expression",
    ),
]


@pytest.mark.parametrize(
    ("what", "steps", "step", "column", "message"), CASES, ids=[c[0] for c in CASES]
)
def test_bad_step_exits_2_naming_file_step_and_column(
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    what: str,
    steps: str,
    step: str,
    column: str,
    message: str,
) -> None:
    path = tmp_path / "bad.toml"
    path.write_text(HEAD + steps + "\n")
    assert main(["check", str(path)]) == 2
    err = capsys.readouterr().err
    assert str(path) in err
    assert f"{step}:" in err
    assert column in err
    assert message in err
    assert "Traceback" not in err


def test_an_undefined_step_exits_2_at_the_op(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = tmp_path / "zero.toml"
    path.write_text(HEAD + 'y = "X / (X - X)"\nz = "layernorm(X - X)"\n')
    assert main(["check", str(path)]) == 2
    err = capsys.readouterr().err
    assert "steps.y" in err and "column 3" in err and "exactly 0" in err


def test_the_cli_process_exits_2_without_a_traceback(tmp_path: Path) -> None:
    path = tmp_path / "bad.toml"
    path.write_text(HEAD + 'y = "X @ v"\n')
    r = subprocess.run(
        [sys.executable, "-m", "symtf", "check", str(path)],
        capture_output=True,
        text=True,
        cwd=ROOT,
        timeout=600,  # generous: no hang
        env={"PYTHONPATH": SYMTF_HOME, "PATH": "/usr/bin:/bin"},
    )
    assert r.returncode == 2
    assert "steps.y" in r.stderr and "column 3" in r.stderr and "Traceback" not in r.stderr


def test_a_branch_on_a_symbol_exits_2_naming_the_step(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = tmp_path / "sym.toml"
    path.write_text('title = "s"\n[tensors]\nv = ["a", "1"]\n[steps]\ni = "argmax(v)"\n')
    assert main(["check", str(path)]) == 2
    err = capsys.readouterr().err
    assert "steps.i" in err and "symbols ['a']" in err
