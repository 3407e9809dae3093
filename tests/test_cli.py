"""The command line: exit codes, bad input, formats."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest
from tiny_derivations import IDENTITY_2, tiny_model

from symtf.cli import main

GOOD = (
    "\n"
    + tiny_model(n_heads=1, unembed=IDENTITY_2, W_Q=IDENTITY_2, W_K=IDENTITY_2, W_V=IDENTITY_2)
    + """[[claims]]
label = "X"
step = "x"
printed = "1 0\\n0 1"
"""
)


def write(tmp_path: Path, text: str, name: str = "d.toml") -> Path:
    p = tmp_path / name
    p.write_text(text, encoding="utf-8")
    return p


def run_cli(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-c", "import sys; from symtf.cli import main; sys.exit(main())", *args],
        capture_output=True,
        text=True,
        timeout=600,
    )


def test_good_file_exits_0(tmp_path, capsys) -> None:
    assert main(["check", str(write(tmp_path, GOOD))]) == 0
    assert "4 exact" in capsys.readouterr().out


def test_wrong_number_exits_1(tmp_path, capsys) -> None:
    p = write(
        tmp_path, GOOD.replace('printed = "1 0\\n0 1"', 'printed = "1 0\\n0 5"')
    )  # 4 units off
    assert main(["check", str(p)]) == 1
    out = capsys.readouterr().out
    assert "WRONG" in out and "[1, 1]" in out


def test_folder_is_expanded(tmp_path, capsys) -> None:
    write(tmp_path, GOOD, "a.toml")
    write(tmp_path, GOOD, "b.toml")
    assert main(["check", str(tmp_path)]) == 0
    assert "2 derivation(s)" in capsys.readouterr().out


BAD = [
    # (replacement applied to GOOD, key the message must name, what it must say)
    (("d_model = 2\n", ""), "model.d_model", "missing"),
    (("n_heads = 1\n", "n_heads = 1\nsurprise = 3\n"), "model.surprise", "unknown key"),
    (('W_Q = "1 0\\n0 1"', 'W_Q = "1 0\\n0"'), "model.layers[0].heads[0].W_Q", "ragged"),
    (
        ('W_K = "1 0\\n0 1"', 'W_K = "1 0 0\\n0 1 0"'),
        "model.layers[0].heads[0].W_K",
        "expected a 2x2",
    ),
    (
        ('W_V = "1 0\\n0 1"', 'W_V = "1 x!\\n0 1"'),
        "model.layers[0].heads[0].W_V[0][1]",
        "expected a number",
    ),
    (('W_V = "1 0\\n0 1"', "W_V = \"1 __import__('os')\\n0 1\""), "W_V[0][1]", "expected a number"),
    (('embed = "1 0\\n0 1"', "embed = [[1, nan], [0, 1]]"), "model.embed[0][1]", "finite"),
    (('embed = "1 0\\n0 1"', "embed = [[1, inf], [0, 1]]"), "model.embed[0][1]", "finite"),
    (('embed = "1 0\\n0 1"', 'embed = "1 1e999999999\\n0 1"'), "model.embed[0][1]", "exponent"),
    (('step = "x"', 'step = "l0.h9.pattern"'), "claims[0].step", "no step"),
    (('printed = "1 0\\n0 1"', 'printed = "1 0 0\\n0 1 0"'), "claims[0].printed", "expected 2x2"),
    (
        ('printed = "1 0\\n0 1"', 'printed = "1 0\\n0 1%%"'),
        "claims[0].printed[1][1]",
        "expected a percentage",
    ),
    (('tokens = ["a", "b"]', 'tokens = ["a", "zebra"]'), "input.tokens[1]", "model.vocab"),
]


@pytest.mark.parametrize(("edit", "key", "says"), BAD)
def test_bad_input_exits_2_naming_file_and_key(tmp_path, edit, key, says) -> None:
    old, new = edit
    assert old in GOOD
    p = write(tmp_path, GOOD.replace(old, new, 1))
    r = run_cli("check", str(p))
    assert r.returncode == 2, r.stderr
    assert str(p) in r.stderr and key in r.stderr and says in r.stderr, r.stderr
    assert "Traceback" not in r.stderr + r.stdout


def test_missing_file_and_bad_usage_exit_2(tmp_path) -> None:
    assert run_cli("check", str(tmp_path / "nope.toml")).returncode == 2
    assert run_cli("check", "--format", "yaml").returncode == 2
    assert run_cli().returncode == 2


def test_help_explains_verdicts() -> None:
    r = run_cli("check", "--help")
    assert r.returncode == 0
    for word in ("exact", "rounded", "slip", "wrong", "undecided", "--timeout"):
        assert word in r.stdout


def test_bundled_derivations_by_default(capsys) -> None:
    code = main(["check"])
    out = capsys.readouterr().out
    assert "i_love_ai.toml" in out and "birds_build_nests.toml" in out
    assert code == 1  # the articles contain slips (see test_i_love_ai / test_birds)
