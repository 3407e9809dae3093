"""Every command and the Python API take a bundled example's name where they take a file.

Each test runs from an empty folder, as a user of an installed symtf would: no
``derivations/`` folder is at hand, only the name.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

import symtf
from symtf.cli import main
from symtf.errors import SymtfError

ROOT = Path(__file__).resolve().parent.parent


@pytest.fixture
def elsewhere(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.chdir(tmp_path)
    return tmp_path


@pytest.mark.parametrize(
    "argv",
    [
        ["steps", "i_love_ai", "--format", "json"],
        ["html", "rope_toy", "-o", "page.html"],
        ["exercise", "rope_toy", "-o", "sheets", "--no-pdf"],
        ["latex", "rope_toy", "-o", "notes.tex"],
        ["explain", "rope_toy", "rotated Q"],
        ["check", "rope_toy"],
    ],
    ids=lambda a: a[0],
)
def test_a_command_takes_a_bundled_name(
    argv: list[str], elsewhere: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    code = main(argv)
    out, err = capsys.readouterr()
    assert code in (0, 1), err
    assert "cannot read" not in err and "no such file" not in err
    if argv[0] == "steps":
        assert json.loads(out)["title"].startswith("I love AI")
    if argv[0] == "exercise":
        sheet = (elsewhere / "sheets" / "derivation.toml").read_text(encoding="utf-8")
        assert sheet == (ROOT / "derivations" / "rope_toy.toml").read_text(encoding="utf-8")


def test_a_file_of_that_name_comes_first(
    elsewhere: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # A file called rope_toy in the folder is what the user means, not the bundled example.
    shutil.copy(ROOT / "derivations" / "steps_ffn_bce.toml", elsewhere / "rope_toy")
    assert main(["steps", "rope_toy", "--format", "json"]) == 0
    title = json.loads(capsys.readouterr().out)["title"]
    assert title == symtf.load(ROOT / "derivations" / "steps_ffn_bce.toml").title


def test_load_takes_a_bundled_name(elsewhere: Path) -> None:
    d = symtf.load("i_love_ai")
    assert d.title == symtf.load(ROOT / "derivations" / "i_love_ai.toml").title
    assert symtf.check("i_love_ai").derivations[0].title == d.title


def test_an_unknown_name_is_still_a_missing_file(
    elsewhere: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    with pytest.raises(SymtfError, match="no_such_example"):
        symtf.load("no_such_example")
    assert main(["html", "no_such_example"]) == 2
    assert "no_such_example" in capsys.readouterr().err
