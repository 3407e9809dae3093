"""The documented Python API keeps working however often it is called."""

from __future__ import annotations

import importlib
from pathlib import Path

import pytest

import symtf
from symtf import bundled
from symtf.cli import main
from symtf.renderers import display

ROOT = Path(__file__).resolve().parent.parent
ROPE = ROOT / "derivations" / "rope_toy.toml"


def test_render_is_a_function_after_subpackage_imports_and_rich_display() -> None:
    report = symtf.check(symtf.load(ROPE))
    first = symtf.render(report)
    # A rich display imports the renderer subpackages; that must not rebind symtf.render.
    display.render(report, "text/latex")
    importlib.import_module("symtf.renderers.json")
    importlib.import_module("symtf.renderers.text")

    assert callable(symtf.render)
    assert symtf.render(report) == first
    assert symtf.render(report) == first
    assert symtf.render(report, "json").startswith("{")
    assert symtf.render(report, "junit").startswith("<?xml")
    assert symtf.render(report, "sarif") == symtf.render(report, "sarif")
    assert symtf.render(report, "github") == ""  # nothing off in rope_toy
    with pytest.raises(ValueError, match="expected one of text, json"):
        symtf.render(report, "latex")


def test_check_takes_a_derivation_a_path_or_a_bundled_name(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)  # nowhere near the checkout's derivations/
    by_object = symtf.check(symtf.load(ROPE))
    for ref in (ROPE, str(ROPE), "rope_toy", "rope_toy.toml"):
        report = symtf.check(ref)
        assert [c.verdict for c in report.derivations[0].checks] == [
            c.verdict for c in by_object.derivations[0].checks
        ]
    with pytest.raises(symtf.SymtfError, match=r"nor a bundled derivation .*rope_toy"):
        symtf.check("no_such_example")
    with pytest.raises(symtf.SymtfError, match="no such file"):
        symtf.check("sub/rope_toy.toml")  # a path is never looked up by name


def test_cli_finds_bundled_derivations_from_any_directory(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.chdir(tmp_path)
    assert main(["check", "rope_toy"]) == 0
    assert "rope_toy.toml" in capsys.readouterr().out
    assert main(["check"]) == 1  # the bundled articles keep their slips
    out = capsys.readouterr().out
    assert f"{len(list((ROOT / 'derivations').glob('*.toml')))} derivation(s):" in out
    assert main(["check", "missing.toml", "rope_toy"]) == 2
    captured = capsys.readouterr()
    assert "missing.toml: no such file" in captured.err and "rope_toy.toml" in captured.out


def test_bundled_folder_prefers_the_installed_copy(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # The layout of an installed wheel: site-packages/symtf/derivations/*.toml.
    installed = tmp_path / "site-packages" / "symtf"
    (installed / "derivations").mkdir(parents=True)
    (installed / "derivations" / "only_here.toml").write_text("title = 'x'\n")
    monkeypatch.setattr(bundled, "_HERE", installed)
    assert bundled.folder() == installed / "derivations"
    assert bundled.names() == ["only_here"]
    monkeypatch.setattr(bundled, "_HERE", tmp_path / "empty" / "symtf")
    assert bundled.folder() is None and bundled.named("i_love_ai") is None


def test_derive_scaling_reads_the_bundled_article(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from symtf.derive import scaling

    monkeypatch.chdir(tmp_path)
    scaling.article_trace.cache_clear()
    trace = scaling.article_trace()
    assert "l0.h0.scores" in trace


def test_explain_and_latex_take_a_bundled_name(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.chdir(tmp_path)
    assert main(["explain", "rope_toy", "scores"]) == 0
    assert "How scores is computed" in capsys.readouterr().out
    assert main(["explain", "rope_toy", "scores", "--node-names"]) == 0
    assert "[l0.h0.scores]" in capsys.readouterr().out
    assert main(["latex", "rope_toy"]) == 0
    assert capsys.readouterr().out.startswith("\\documentclass")
    assert main(["explain", "no_such_example", "scores"]) == 2
    assert "nor a bundled derivation" in capsys.readouterr().err
