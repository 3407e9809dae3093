"""Layout for readers: pages within their margins, chosen steps, article names, plain-text explain.

The compile tests read LaTeX's own log for ``Overfull \\hbox``: any line of
any bundled derivation's notes that runs into the margin fails. They need TeX
(``SYMTF_REQUIRE_TEX=1`` makes a missing TeX a failure, as in CI); the
non-Latin test needs LuaLaTeX (Debian's ``texlive-luatex``).
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
from pathlib import Path

import pytest

from symtf import cli, spec
from symtf.checking import compare
from symtf.commands.latex import compile_pdf, engine_of, missing_tex
from symtf.renderers import latex as L
from symtf.renderers.latex.preamble import LUALATEX_MAGIC

ROOT = Path(__file__).resolve().parent.parent
BUNDLED = sorted((ROOT / "derivations").glob("*.toml"))
SEED = ROOT / "derivations" / "i_love_ai.toml"
REQUIRE = os.environ.get("SYMTF_REQUIRE_TEX") == "1"

needs_tex = pytest.mark.skipif(
    shutil.which("pdflatex") is None and not REQUIRE,
    reason="pdflatex not installed (set SYMTF_REQUIRE_TEX=1 to fail instead)",
)
needs_lualatex = pytest.mark.skipif(
    (missing_tex("lualatex") is not None or shutil.which("pdftotext") is None) and not REQUIRE,
    reason=f"{missing_tex('lualatex') or 'pdftotext'} not installed "
    "(texlive-luatex, poppler-utils; SYMTF_REQUIRE_TEX=1 to fail instead)",
)


def overfull(log: str) -> list[str]:
    """LaTeX's overfull-box warnings, one string each."""
    return re.findall(r"Overfull \\[hv]box \([\d.]+pt too \w+\)[^\n]*", log)


def test_overfull_reader_finds_a_real_overflow(tmp_path: Path) -> None:
    if shutil.which("pdflatex") is None and not REQUIRE:
        pytest.skip("pdflatex not installed")
    tex = L.standalone("wide", r"\noindent\rule{30cm}{1pt}")
    compile_pdf(tex, tmp_path / "w.pdf", log=tmp_path / "w.log")
    assert overfull((tmp_path / "w.log").read_text(errors="replace"))


@needs_tex
@pytest.mark.parametrize("path", BUNDLED, ids=[p.stem for p in BUNDLED])
def test_no_overfull_box_in_any_bundled_pdf(path: Path, tmp_path: Path) -> None:
    d = spec.load(path)
    tex = L.document(compare.check(d), d)
    if missing_tex(engine_of(tex)) is not None and not REQUIRE:
        pytest.skip(f"{missing_tex(engine_of(tex))} not installed")
    compile_pdf(tex, tmp_path / "notes.pdf", log=tmp_path / "notes.log", timeout=300)
    boxes = overfull((tmp_path / "notes.log").read_text(encoding="utf-8", errors="replace"))
    assert boxes == [], boxes[:5]


def test_latex_steps_selects_and_names_by_article(capsys: pytest.CaptureFixture[str]) -> None:
    code = cli.main(["latex", str(SEED), "--steps", "A_1,logit math"])
    tex = capsys.readouterr().out
    assert code == cli.EXIT_FAIL
    heads = re.findall(r"\\subsection\*\{([^\n]*)\}\n", tex)
    assert len(heads) == 2, heads
    # the label A_1 is a symbol: typeset as maths, not as typewriter text
    assert heads[0].startswith("Attention weights, head 1") and "$A_{1}$" in heads[0]
    assert "l0.h0.pattern" not in tex and "The model" not in tex
    assert r"\textbf{\boldmath $-2.048$}" in tex  # the seed's correction is on the page


def test_latex_node_names_on_request(capsys: pytest.CaptureFixture[str]) -> None:
    assert cli.main(["latex", str(SEED), "--steps", "A_1", "--node-names"]) == cli.EXIT_FAIL
    tex = capsys.readouterr().out
    assert r"\texttt{l0.h0.pattern}" in tex


def test_latex_steps_miss_is_a_clear_error(capsys: pytest.CaptureFixture[str]) -> None:
    assert cli.main(["latex", str(SEED), "--steps", "A_l"]) == cli.EXIT_BAD_INPUT
    err = capsys.readouterr().err
    assert "--steps: 'A_l' matches no step" in err and "A_1" in err


UNICODE_TOML = """
title = "Внимание: η and ő"
source = "a constructed example with non-Latin labels"

[model]
architecture = "none"

[[model.standalone]]
name = "sm"
op = "softmax"
input = "0 1"

[[claims]]
label = "Весы α"
step = "sm"
printed = "0.269 0.731"

[[claims]]
label = "שלום sum"
expression = "0.269 + 0.731"
printed = "1.000"
"""


def _unicode_derivation(tmp_path: Path) -> spec.Derivation:
    f = tmp_path / "unicode.toml"
    f.write_text(UNICODE_TOML, encoding="utf-8")
    return spec.load(f)


def test_greek_goes_through_pylatexenc_and_the_rest_asks_for_lualatex(tmp_path: Path) -> None:
    d = _unicode_derivation(tmp_path)
    tex = L.document(compare.check(d), d)
    assert "[U+" not in tex
    assert r"$\eta$" in tex and r"\H{o}" in tex  # the default fonts have these
    assert "Внимание" in tex and "Весы" in tex  # they do not have these
    assert engine_of(tex) == "lualatex" and tex.startswith(LUALATEX_MAGIC)
    ascii_doc = L.standalone("plain", "x")
    assert engine_of(ascii_doc) == "pdflatex"


@needs_lualatex
def test_non_latin_labels_compile_and_read_back(tmp_path: Path) -> None:
    d = _unicode_derivation(tmp_path)
    pdf = compile_pdf(L.document(compare.check(d), d), tmp_path / "u.pdf", log=tmp_path / "u.log")
    text = subprocess.run(
        ["pdftotext", str(pdf), "-"], capture_output=True, text=True, check=True
    ).stdout
    for word in ("Внимание", "Весы", "η", "ő"):
        assert word in text, word
    log = (tmp_path / "u.log").read_text(encoding="utf-8", errors="replace")
    assert "Missing character" not in log


def test_latin_accents_stay_with_pdflatex() -> None:
    # "pájaros" is Latin text: pdfLaTeX sets it with T1 fonts; LuaLaTeX is for other scripts.
    d = spec.load(ROOT / "derivations" / "translation_toy.toml")
    tex = L.document(compare.check(d), d)
    assert "pájaros" in tex
    assert engine_of(tex) == "pdflatex" and not tex.startswith(LUALATEX_MAGIC)
    assert r"\usepackage[T1]{fontenc}" in tex and "fontspec" not in tex
    assert engine_of(L.standalone("Łódź, Ærø, naïve — «ça»", "x")) == "pdflatex"
    assert engine_of(L.standalone("Łódź and Весы", "x")) == "lualatex"


@needs_tex
def test_latin_accents_compile_with_pdflatex_and_read_back(tmp_path: Path) -> None:
    if shutil.which("pdftotext") is None and not REQUIRE:
        pytest.skip("pdftotext not installed")
    d = spec.load(ROOT / "derivations" / "translation_toy.toml")
    pdf = compile_pdf(L.document(compare.check(d), d), tmp_path / "t.pdf", log=tmp_path / "t.log")
    text = subprocess.run(["pdftotext", str(pdf), "-"], capture_output=True, text=True).stdout
    assert "Los pájaros construyen nidos" in text
    assert "Missing character" not in (tmp_path / "t.log").read_text(errors="replace")


def test_lualatex_without_its_packages_is_a_clear_error(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    # texlive-latex-base ships lualatex but not luaotfload.sty: exit 2 with what to install.
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    for name, body in (("lualatex", "exit 0"), ("kpsewhich", "exit 1")):
        (bin_dir / name).write_text(f"#!/bin/sh\n{body}\n", encoding="utf-8")
        (bin_dir / name).chmod(0o755)
    monkeypatch.setenv("PATH", str(bin_dir))
    f = tmp_path / "unicode.toml"
    f.write_text(UNICODE_TOML, encoding="utf-8")
    out = tmp_path / "u.tex"
    assert missing_tex("lualatex") == "fontspec.sty and luaotfload.sty for lualatex"
    assert cli.main(["latex", str(f), "-o", str(out), "--pdf"]) == cli.EXIT_BAD_INPUT
    err = capsys.readouterr().err
    assert out.exists() and "luaotfload.sty" in err and "texlive-luatex" in err
    assert "internal error" not in err


def test_pdf_without_the_engine_still_writes_the_tex(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    f = tmp_path / "unicode.toml"
    f.write_text(UNICODE_TOML, encoding="utf-8")
    monkeypatch.setenv("PATH", str(tmp_path))
    out = tmp_path / "u.tex"
    assert cli.main(["latex", str(f), "-o", str(out), "--pdf"]) == cli.EXIT_BAD_INPUT
    err = capsys.readouterr().err
    assert out.exists() and "lualatex" in err and "texlive-luatex" in err


# ----------------------------------------------------------------------------- explain


def test_explain_prints_plain_text_with_values(capsys: pytest.CaptureFixture[str]) -> None:
    assert cli.main(["explain", str(SEED), "A_1"]) == cli.EXIT_OK
    out = capsys.readouterr().out
    assert "\\" not in out, "LaTeX source in the terminal"
    assert "S = (Q Kᵀ)/√(d_k)" in out and "A = softmax(S + M)" in out
    # Intermediate values: S_1[0, 0] = 1/√2 = √2/2 (Q_1 K_1ᵀ[0, 0] = 1, d_k = 2), and
    # A_1 row 1 = softmax(0.6√2, 0.61√2) = 0.4964..., 0.5035... (by hand: 1/(1+e^{0.01√2})).
    assert "√2/2" in out
    assert re.search(r"0\.4964…\s+0\.5035…", out)


def test_explain_latex_on_request(capsys: pytest.CaptureFixture[str]) -> None:
    assert cli.main(["explain", str(SEED), "logit math", "--latex"]) == cli.EXIT_OK
    out = capsys.readouterr().out
    assert out.startswith(r"\documentclass") and out.rstrip().endswith(r"\end{document}")
    assert r"\textbf{\boldmath $-2.048$}" in out
