"""``symtf check DIR`` searches subfolders and checks only derivation files.

The rule is the pytest plugin's (:mod:`symtf.spec.discover`): a ``*.toml`` file
is a derivation when it holds claims. Other TOML files are skipped, and the
summary says how many.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from symtf.cli import main
from symtf.spec.discover import derivation_files, is_derivation_file

ROOT = Path(__file__).resolve().parent.parent
PYPROJECT = '[project]\nname = "blog"\n[tool.blog]\nclaims = "a string key of another table"\n'


@pytest.fixture
def project(tmp_path: Path) -> Path:
    """A blog's repository: derivations two folders down, TOML files that are not."""
    (tmp_path / "posts" / "2024").mkdir(parents=True)
    shutil.copy(ROOT / "derivations" / "steps_ffn_bce.toml", tmp_path / "posts" / "bce.toml")
    shutil.copy(ROOT / "derivations" / "rope_toy.toml", tmp_path / "posts" / "2024" / "rope.toml")
    (tmp_path / "pyproject.toml").write_text(PYPROJECT, encoding="utf-8")
    (tmp_path / "posts" / "2024" / "notes.toml").write_text(
        'text = """\n[[claims]]\n"""\n', encoding="utf-8"
    )  # [[claims]] inside a string is no table
    (tmp_path / ".venv").mkdir()
    shutil.copy(ROOT / "derivations" / "rope_toy.toml", tmp_path / ".venv" / "hidden.toml")
    return tmp_path


def test_the_rule_sorts_derivations_from_other_toml(project: Path) -> None:
    found, skipped = derivation_files(project)
    assert [p.relative_to(project).as_posix() for p in found] == [
        "posts/2024/rope.toml",
        "posts/bce.toml",
    ]
    assert sorted(p.relative_to(project).as_posix() for p in skipped) == [
        "posts/2024/notes.toml",
        "pyproject.toml",
    ]
    assert not is_derivation_file(project / "pyproject.toml")
    assert is_derivation_file(ROOT / "derivations" / "i_love_ai.toml")


def test_check_dot_in_a_project(
    project: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.chdir(project)
    code = main(["check", "."])
    out, err = capsys.readouterr()
    assert code in (0, 1), err
    assert "pyproject.toml" not in err
    assert "2 derivation(s):" in out
    assert (
        "2 other TOML file(s) skipped (no [[claims]]): posts/2024/notes.toml, pyproject.toml" in out
    )
    assert "hidden.toml" not in out


def test_json_lists_the_skipped_files(
    project: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.chdir(project)
    main(["check", "--format", "json", "posts"])
    data = json.loads(capsys.readouterr().out)
    assert [Path(d["path"]).name for d in data["derivations"]] == ["rope.toml", "bce.toml"]
    assert data["skipped"] == ["posts/2024/notes.toml"]


def test_a_folder_without_derivations_is_bad_input(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    (tmp_path / "pyproject.toml").write_text(PYPROJECT, encoding="utf-8")
    assert main(["check", str(tmp_path)]) == 2
    err = capsys.readouterr().err
    assert "no derivation files in this folder or below" in err
    assert "1 other TOML file(s) hold no [[claims]]" in err


# ----------------------------------------------------------------------------- nothing skipped in silence

#: A derivation with a wrong claim: the identity's x[1, 1] is 1, printed 3.
WRONG = """title = "wrong"
[tensors]
x = "1 0\\n0 1"
[[claims]]
label = "x"
step = "x"
printed = "1 0\\n0 3"
"""


def _unreadable(kind: str) -> bytes:
    """A derivation holding a wrong claim that ``symtf check`` cannot read, in one of three ways."""
    if kind == "over the size cap":  # 2,000,000 bytes is the cap of a derivation file
        return (WRONG + "# padding\n" * 200_001).encode("utf-8")
    if kind == "not UTF-8":  # as an editor on Windows may save it
        return WRONG.encode("utf-16")
    # Not valid TOML: a string that never ends hides the [[claims]] after it from a sniff.
    return WRONG.replace('title = "wrong"', 'title = """wrong').encode("utf-8")


#: What each unreadable file's error says (the one capped reader's words, and the parser's).
UNREADABLE = {
    "over the size cap": "2,000,000 bytes",
    "not UTF-8": "expected UTF-8 text",
    "not valid TOML": "not valid TOML",
}


@pytest.fixture(params=list(UNREADABLE))
def unreadable(request: pytest.FixtureRequest, project: Path) -> tuple[Path, str]:
    """The blog's repository with one derivation that cannot be read, and what its error says."""
    path = project / "posts" / "2024" / "big.toml"
    path.write_bytes(_unreadable(request.param))
    return path, UNREADABLE[request.param]


def test_an_unreadable_file_in_a_folder_is_an_error(
    unreadable: tuple[Path, str],
    project: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    _, says = unreadable
    monkeypatch.chdir(project)
    assert main(["check", "posts"]) == 2
    out, err = capsys.readouterr()
    assert "posts/2024/big.toml" in err and says in err, err
    assert "big.toml" not in out.split("skipped", 1)[-1]  # never among the skipped
    assert "bce.toml" in out  # the others are still checked
    main(["check", "--format", "json", "posts"])
    data = json.loads(capsys.readouterr().out)
    assert [e["path"] for e in data["errors"]] == ["posts/2024/big.toml"]
    assert "posts/2024/big.toml" not in data["skipped"]


def test_only_derivations_refuses_an_unreadable_file(
    unreadable: tuple[Path, str],
    project: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    # The pre-commit hook's command, given what the hook gives it: every changed *.toml.
    _, says = unreadable
    monkeypatch.chdir(project)
    code = main(["check", "--only-derivations", "pyproject.toml", "posts/2024/big.toml"])
    err = capsys.readouterr().err
    assert code == 2 and "posts/2024/big.toml" in err and says in err, err


def test_only_derivations_skips_a_readable_toml_file_without_claims(
    project: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.chdir(project)
    code = main(["check", "--only-derivations", "pyproject.toml", "posts/2024/rope.toml"])
    out = capsys.readouterr().out
    assert code in (0, 1) and "1 other TOML file(s) skipped (no [[claims]]): pyproject.toml" in out
