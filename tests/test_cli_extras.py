"""The command line's small things: --quiet, shell completion and one version everywhere."""

from __future__ import annotations

import argparse
import re
import shutil
import subprocess
import sys
import tomllib
from pathlib import Path

import pytest

import symtf
from symtf import cli
from symtf.cli import main

ROOT = Path(__file__).resolve().parent.parent


def test_quiet_check_shows_only_what_is_off(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["check", "rope_toy", "steps_ffn_bce"]) == 1
    loud = capsys.readouterr().out
    assert main(["check", "-q", "rope_toy", "steps_ffn_bce"]) == 1
    quiet = capsys.readouterr().out
    assert "rope_toy" in loud and "rope_toy" not in quiet  # all right: left out
    assert "WRONG BCE loss" in quiet and "  ok  " not in quiet
    assert quiet.splitlines()[-1] == loud.splitlines()[-1]  # the same summary
    assert main(["-q", "check", "rope_toy"]) == 0  # before the command too
    assert capsys.readouterr().out.startswith("1 derivation(s):")


def test_quiet_drops_the_notes_not_the_errors(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    page = tmp_path / "p.html"
    assert main(["html", "rope_toy", "-o", str(page)]) == 0
    assert capsys.readouterr().err == f"wrote {page}\n"
    assert main(["html", "rope_toy", "-o", str(page), "--quiet"]) == 0
    assert capsys.readouterr().err == ""
    assert main(["html", "-q", str(tmp_path / "missing.toml")]) == 2
    assert "missing.toml" in capsys.readouterr().err


@pytest.mark.skipif(shutil.which("bash") is None, reason="no bash")
def test_bash_completion_completes_commands_options_and_choices(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["completion", "bash"]) == 0
    script = tmp_path / "symtf.bash"
    script.write_text(capsys.readouterr().out, encoding="utf-8")

    def complete(*words: str) -> list[str]:
        line = " ".join(("symtf", *words))
        probe = (
            f"source {script}; COMP_WORDS=(symtf {' '.join(repr(w) for w in words)}); "
            f"COMP_CWORD={len(words)}; COMP_LINE={line!r}; COMP_POINT={len(line)}; "
            f"_shtab_symtf symtf {words[-1]!r} {('symtf', *words)[-2]!r}; "
            'printf "%s\\n" "${COMPREPLY[@]}"'
        )
        r = subprocess.run(["bash", "-c", probe], capture_output=True, text=True, timeout=600)
        return r.stdout.split()

    assert complete("ch") == ["check"]
    assert "--format" in complete("check", "--fo")
    assert complete("check", "--format", "") == ["text", "json", "junit", "github", "sarif"]
    assert "html" in complete("") and "completion" in complete("")


@pytest.mark.parametrize("shell", ["zsh", "fish", "tcsh"])
def test_completion_scripts_for_other_shells(
    shell: str, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["completion", shell]) == 0
    out = capsys.readouterr().out
    assert "check" in out and "format" in out and "sarif" in out  # fish writes -l format


def test_completion_needs_a_known_shell(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as e:
        main(["completion", "cmd.exe"])
    assert e.value.code == 2
    assert "invalid choice" in capsys.readouterr().err


def test_one_version_everywhere() -> None:
    project = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["project"]
    assert symtf.__version__ == project["version"]
    out = subprocess.run(
        [sys.executable, "-m", "symtf", "--version"], capture_output=True, text=True, timeout=600
    ).stdout
    assert out.strip() == f"symtf {project['version']}"
    written = [
        p.relative_to(ROOT)
        for p in (ROOT / "symtf").rglob("*.py")
        if re.search(r"__version__\s*=\s*[\"']\d+\.\d+", p.read_text(encoding="utf-8"))
    ]
    assert written == [], f"a version written by hand in {written}"


def test_the_changelog_has_this_version_or_unreleased() -> None:
    text = (ROOT / "CHANGELOG.md").read_text(encoding="utf-8")
    assert "keepachangelog.com" in text
    heads = re.findall(r"^## \[([^\]]+)\]", text, re.MULTILINE)
    assert heads and heads[0] in ("Unreleased", symtf.__version__), heads
    for section in re.findall(r"^### (\w+)", text, re.MULTILINE):
        assert section in {"Added", "Changed", "Deprecated", "Removed", "Fixed", "Security"}


def test_the_metadata_has_classifiers_and_urls() -> None:
    from importlib import metadata

    meta = metadata.metadata("symtf")
    classifiers = meta.get_all("Classifier") or []
    assert "Framework :: Pytest" in classifiers
    assert any(c.startswith("Programming Language :: Python :: 3.") for c in classifiers)
    urls = dict(u.split(", ", 1) for u in meta.get_all("Project-URL") or [])
    assert {"Homepage", "Documentation", "Changelog", "Source"} <= set(urls)
    requires = " ".join(meta.get_all("Requires-Dist") or [])
    for module in ("sympy", "numpy", "python-flint", "mpmath", "shtab"):
        assert module in requires, module


def test_the_command_flushes_its_output_and_runs_exit_handlers() -> None:
    """``symtf`` leaves without the interpreter's teardown, and loses nothing by it: the whole
    report is written, the exit code is the check's, and atexit handlers (temporary
    folders, coverage) still run, after the report."""
    code = (
        "import atexit, sys; atexit.register(print, 'handler ran'); "
        "sys.argv = ['symtf', 'check', 'i_love_ai']; from symtf.cli import run; run()"
    )
    done = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, cwd=ROOT, timeout=600
    )
    assert done.returncode == 1  # the article has 3 slips (derivations/i_love_ai.toml)
    lines = done.stdout.splitlines()
    assert lines[-1] == "handler ran"
    assert lines[-2].startswith("1 derivation(s): ") and "3 slip" in lines[-2]
    module = subprocess.run(
        [sys.executable, "-m", "symtf", "check", "rope_toy"],
        capture_output=True,
        text=True,
        cwd=ROOT,
        timeout=600,
    )
    assert module.returncode == 0 and module.stdout.splitlines()[-1].startswith("1 derivation(s)")


def _subparsers(parser: argparse.ArgumentParser) -> dict[str, argparse.ArgumentParser]:
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            return dict(action.choices)
    return {}


_WORDS = sorted(
    {c for c in cli.COMMANDS if c not in cli.MODULE_OF.values()}
    | set(cli.MODULE_OF)
    | {"completion"}
)


@pytest.mark.parametrize("command", _WORDS)
def test_a_named_command_gets_the_parser_the_full_one_has(command: str) -> None:
    # main builds only the parsers of the module of the command it is given; that parser
    # must be the one the full parser holds: the same help, the same defaults
    alone = _subparsers(cli.build_parser(command))
    full = _subparsers(cli.build_parser())
    module = cli.MODULE_OF.get(command, command)
    assert sorted(alone) == sorted(w for w in _WORDS if cli.MODULE_OF.get(w, w) == module)
    assert alone[command].format_help() == full[command].format_help()


def test_every_command_is_a_word_the_command_line_names() -> None:
    # the table of modules that add other commands is what their configure adds
    assert sorted(_subparsers(cli.build_parser())) == _WORDS


@pytest.mark.parametrize(
    ("words", "named"),
    [
        (["check", "a.toml"], "check"),
        (["-q", "draft", "x.md"], "draft"),
        (["whatif", "a.toml"], "whatif"),
        (["teach", "a.toml"], None),  # a module, not a command
        (["--quiet", "completion", "bash"], "completion"),
        (["-h", "check"], None),  # the top-level help lists every command
        (["--help"], None),
        (["chek", "a.toml"], None),  # a typo: the full parser suggests "check"
        (["--version"], None),
        (["--", "check"], None),
        ([], None),
    ],
)
def test_which_command_line_names_one_command(words: list[str], named: str | None) -> None:
    assert cli._named_command(words) == named


def test_the_top_level_help_still_lists_every_command(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit):
        cli.main(["-h", "check"])
    out = capsys.readouterr().out
    for command in _WORDS:
        assert command in out
