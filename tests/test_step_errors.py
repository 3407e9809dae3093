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
    (
        "calls an op a step above shadows",
        'exp = "X"\ny = "2 * exp(X)"',
        "steps.y",
        "column 5",
        "exp(…) calls the op exp, but the step exp defined above has its name",
    ),
    (
        "named inf",
        'inf = "X"',
        "steps.inf",
        "line 9, column 1",
        "cannot be 'inf', which is a constant",
    ),
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


# ----------------------------------------------------------------------------- names


def test_a_step_may_take_the_name_of_an_op_as_a_python_variable_does(tmp_path: Path) -> None:
    """A backward pass names its gradient ``grad`` (valid before ``grad`` was an op): the
    name shadows the op, and the step so named may still call it (its own expression is
    read before the name is bound, as ``grad = grad(loss, W)`` in Python)."""
    # loss = Σ x·W, so ∂loss/∂W = x = [1, 2]; exp = 2·grad = [2, 4]; ln = [ln 2, ln 4]
    path = tmp_path / "shadow.toml"
    path.write_text(
        'title = "names"\n[tensors]\nx = ["1", "2"]\nW = ["1", "-1"]\n[steps]\n'
        'loss = "sum(x * W)"\ngrad = "grad(loss, W)"\nexp = "2 * grad"\nln = "log(exp)"\n'
        '[[claims]]\nlabel = "g"\nstep = "grad"\nprinted = "1 2"\n'
        '[[claims]]\nlabel = "e"\nstep = "exp"\nprinted = "2 4"\n'
        '[[claims]]\nlabel = "l"\nstep = "ln"\nprinted = "0.693 1.386"\n'
    )
    report = symtf.check(path)
    verdicts = [c.verdict for c in report.derivations[0].checks]
    assert verdicts == ["exact", "exact", "exact", "exact", "rounded", "rounded"], verdicts
    assert main(["check", str(path)]) == 0


def test_a_step_cannot_call_an_op_a_given_tensor_shadows(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = tmp_path / "shadow.toml"
    path.write_text(
        'title = "t"\n[tensors]\nsoftmax = ["1", "2"]\n[steps]\ny = "softmax(softmax)"\n'
    )
    assert main(["check", str(path)]) == 2
    err = capsys.readouterr().err
    assert "steps.y" in err and "column 1" in err, err
    assert "the given tensor softmax defined above has its name" in err, err


# ----------------------------------------------------------------------------- exponents of e


@pytest.mark.parametrize(
    ("expr", "column"),
    [
        ("exp(exp(exp(1000)))", 5),  # exp(exp(1000)) has the exponent e^1000
        ("e ^ exp(1000)", 3),
        ("exp(X * 3000)", 1),  # X[1, 3] · 3000 = 24000
        ("expm1(20000)", 1),
        ("exp(1000) ^ exp(1000)", 11),  # e^(1000·e^1000)
    ],
)
def test_an_exponent_of_e_above_the_limit_is_refused_as_displayed_arithmetic_refuses_it(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], expr: str, column: int
) -> None:
    """It was undecided ("cannot be separated from 0.5"); displayed arithmetic refuses it
    with one rule, and now steps do too."""
    from symtf.errors import ExpressionError
    from symtf.language.expr import evaluate, parse

    path = tmp_path / "big.toml"
    path.write_text(HEAD + f'y = "{expr}"\n[[claims]]\nlabel = "y"\nstep = "y"\nprinted = "0.5"\n')
    assert main(["check", str(path)]) == 2
    err = capsys.readouterr().err
    rule = "expected an exponent of e of at most 10,000 but found a larger one"
    assert "steps.y" in err and f"column {column}" in err and rule in err, err
    with pytest.raises(ExpressionError, match=rule):
        evaluate(parse("exp(exp(exp(1000)))", where="w"), {})


def test_a_very_negative_exponent_of_e_is_a_tiny_number(tmp_path: Path) -> None:
    """A manual softmax of scores masked with −10⁹ (as notebooks write it): e^(−10⁹ − 3) is
    below 10^-434294481, so its weight prints as 0.000; the others are e^0/(1 + e^-1) and
    e^-1/(1 + e^-1) up to that amount."""
    import math

    path = tmp_path / "masked.toml"
    path.write_text(
        'title = "masked"\n[tensors]\ns = ["3", "2", "-1e9"]\n[steps]\n'
        'w = "exp(s - max(s)) / sum(exp(s - max(s)))"\n'
        '[[claims]]\nlabel = "w"\nstep = "w"\n'
        f'printed = "{1 / (1 + math.exp(-1)):.3f} {math.exp(-1) / (1 + math.exp(-1)):.3f} 0.000"\n'
    )
    assert main(["check", str(path)]) == 0
