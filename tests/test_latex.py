"""LaTeX lecture notes: escaping, layout pieces, snapshots, and real PDF compiles.

Snapshots of the generated ``.tex`` live in ``tests/snapshots/``. After a
deliberate change to the renderer, update them with::

    SYMTF_UPDATE_SNAPSHOTS=1 python -m pytest tests/test_latex.py

The compile tests run whenever ``pdflatex`` is installed; set
``SYMTF_REQUIRE_TEX=1`` (as CI does) to make a missing TeX a failure, not a skip.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
from pathlib import Path

import pytest
from tiny_derivations import tiny_model

from symtf import cli, spec
from symtf.checking import compare
from symtf.checking.report import DerivationReport, Report
from symtf.commands.latex import DEBIAN_PACKAGES, compile_pdf
from symtf.renderers import display
from symtf.renderers import latex as L
from symtf.renderers.latex.expressions import expression_latex
from symtf.renderers.latex.matrices import bmatrix
from symtf.renderers.latex.names import label_tex
from symtf.renderers.latex.numbers import Numbers
from symtf.renderers.latex.options import LatexOptions
from symtf.renderers.latex.sections import stage_of
from symtf.renderers.tex import escape, math_text

ROOT = Path(__file__).resolve().parent.parent
SNAPSHOTS = Path(__file__).resolve().parent / "snapshots"
ARTICLES = ("i_love_ai", "birds_build_nests")
UPDATE = os.environ.get("SYMTF_UPDATE_SNAPSHOTS") == "1"
HAVE_TEX = shutil.which("pdflatex") is not None and shutil.which("pdftotext") is not None

needs_tex = pytest.mark.skipif(
    not HAVE_TEX and os.environ.get("SYMTF_REQUIRE_TEX") != "1",
    reason="pdflatex/pdftotext not installed (set SYMTF_REQUIRE_TEX=1 to fail instead)",
)

HOSTILE = r"""A_b 100% & #1 \ {x} $y$ ^~ <t> | "q" — é ∞"""


def _checked(name: str) -> tuple[spec.Derivation, DerivationReport]:
    d = spec.load(_path(name))
    return d, compare.check(d)


def _path(name: str) -> Path:
    return ROOT / "derivations" / f"{name}.toml"


def _document(name: str) -> str:
    # Loaded by a path relative to the repository, so the document never names the machine.
    old = Path.cwd()
    os.chdir(ROOT)
    try:
        d = spec.load(f"derivations/{name}.toml")
        return L.document(compare.check(d), d)
    finally:
        os.chdir(old)


def _pdf_text(pdf: Path) -> str:
    out = subprocess.run(["pdftotext", str(pdf), "-"], capture_output=True, text=True, check=True)
    return out.stdout.replace("\u2212", "-")


# ----------------------------------------------------------------------------- pieces


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("plain", "plain"),
        ("50% & #1", r"50\% \& \#1"),
        ("$x$", r"{\ttfamily\char36}x{\ttfamily\char36}"),
        ("a_b", r"a{\ttfamily\char95}b"),
        ("\\", r"{\ttfamily\char92}"),
        ("{}", r"{\ttfamily\char123}{\ttfamily\char125}"),
        ("x^2~y", r"x{\ttfamily\char94}2{\ttfamily\char126}y"),
        ("a−b", "a$-$b"),
        ("é", r"\'e"),  # pylatexenc
        ("η", r"$\eta$"),  # pylatexenc, with a macro the default fonts have
        ("1…", r"1\ldots{}"),
        ("\u2603", "\u2603"),  # no pdfLaTeX form: kept, and the document is made for LuaLaTeX
        ("Жук", "Жук"),
        ("line\nbreak", "line break"),
    ],
)
def test_escape(text: str, expected: str) -> None:
    assert escape(text) == expected


def test_escape_leaves_no_unbalanced_braces_or_bare_specials() -> None:
    out = escape(HOSTILE.encode("ascii", "ignore").decode())
    assert out.count("{") == out.count("}")
    stripped = out.replace(r"\%", "").replace(r"\&", "").replace(r"\#", "")
    assert not any(ch in stripped for ch in "%&#$")


def test_math_text_keeps_specials_outside_text() -> None:
    assert math_text("a_b") == r"\text{a}\_\text{b}"
    assert math_text("x{y}") == r"\text{x}\{\text{y}\}"


def test_bmatrix_elides_large_matrices() -> None:
    cells = [[f"{i}{j}" for j in range(12)] for i in range(10)]
    out = bmatrix(cells, max_rows=5, max_cols=6)
    assert out.count(r"\\") == 4  # 5 rows shown: 3 + dots + last
    assert r"\cdots" in out and r"\vdots" in out and r"\ddots" in out
    assert "911" in out and "00" in out and "55" not in out


@pytest.mark.parametrize(
    ("expr", "expected"),
    [
        ("e^2.309", "{e}^{2.309}"),
        ("5.652 / 21.372", "5.652 / 21.372"),
        ("-0.487+(-1.562)", r"-0.487 + \left(-1.562\right)"),
        ("(6 + 9 + 12) / 3", r"\left(6 + 9 + 12\right) / 3"),
        ("0.264×[2,2,1]", r"0.264 \times [2, 2, 1]"),
        ("sqrt(6)", r"\sqrt{6}"),
        ("sum(l0.h0.pattern[0])", r"\operatorname{sum}\left(\mathtt{l0.h0.pattern}[0]\right)"),
        ("1 +", r"\mathtt{1 +}"),
        # a sign leading a product inside a sum keeps the brackets the article wrote
        ("0.5 + (-0.25) × 2", r"0.5 + \left(-0.25\right) \times 2"),
        ("2 × (-3 + 1)", r"2 \times \left(-3 + 1\right)"),
        # a displayed chain: each link as maths, joined by its own relation
        ("1/4 + 1/4 = 0.25 + 0.35", "1 / 4 + 1 / 4 = 0.25 + 0.35"),
        ("exp(1) ≈ 2.718 = 2.718", r"\exp\left(1\right) \approx 2.718 = 2.718"),
        # a link that is not an expression is shown as written, escaped
        ("1 + 1 = a$#%", r"1 + 1 = \mathtt{a\$\#\%}"),
    ],
)
def test_expression_latex(expr: str, expected: str) -> None:
    assert expression_latex(expr) == expected


@pytest.mark.parametrize(
    ("name", "key"),
    [
        ("x", "input"),
        ("l0.h2.pattern", "l0.h2"),
        ("l0.resid_mid", "l0.mix"),
        ("l0.ln1.var", "l0.ln1"),
        ("l0.ffn_act", "l0.ffn"),
        ("logits", "output"),
        ("ln_example.mean", "other.ln_example"),
        ("dec.l0.cross.h0.pattern", "dec.l0.cross.h0"),
        ("enc.tokens", "enc.input"),
        ("gen.0.dec.l0.self.h0.q", "gen.0.dec.l0.self.h0"),
        ("gen.0.b1.dec.logits", "gen.0.b1.dec.output"),
    ],
)
def test_stage_of(name: str, key: str) -> None:
    assert stage_of(name)[0] == key


def test_a_value_on_a_short_decimal_is_shown_exactly() -> None:
    import sympy
    from sympy.core.parameters import distribute

    from symtf.backends import ExactBackend
    from symtf.trace import Trace

    r = sympy.sqrt(45010)
    with distribute(False):
        e = -15 * r / 4501 - (-30 * r / 4501 - sympy.Rational(1, 10)) / 2
    assert not e.is_Rational  # no ball separates it from 0.05: exact algebra must
    entry = Numbers(Trace([], ExactBackend()).shown, LatexOptions()).entry(e)
    assert (entry.approx, entry.is_exact) == ("0.05", True)


def test_options_are_validated() -> None:
    with pytest.raises(ValueError, match="exact_forms"):
        LatexOptions(exact_forms="sometimes")


# ----------------------------------------------------------------------------- documents


@pytest.fixture(scope="module")
def documents() -> dict[str, str]:
    return {name: _document(name) for name in ARTICLES}


@pytest.mark.parametrize("name", ARTICLES)
def test_snapshot(name: str, documents: dict[str, str]) -> None:
    snap = SNAPSHOTS / f"{name}.tex"
    tex = documents[name]
    if UPDATE or not snap.exists():
        if not UPDATE:
            pytest.fail(
                f"no snapshot {snap.relative_to(ROOT)}; create it deliberately with "
                "SYMTF_UPDATE_SNAPSHOTS=1 python -m pytest tests/test_latex.py"
            )
        snap.write_text(tex, encoding="utf-8")
        return
    expected = snap.read_text(encoding="utf-8")
    if tex != expected:
        import difflib

        diff = "".join(
            list(
                difflib.unified_diff(
                    expected.splitlines(True), tex.splitlines(True), "snapshot", "generated", n=1
                )
            )[:60]
        )
        pytest.fail(
            f"{snap.relative_to(ROOT)} differs from the generated LaTeX. If the change is "
            "deliberate, update it with: SYMTF_UPDATE_SNAPSHOTS=1 python -m pytest "
            f"tests/test_latex.py\n{diff}"
        )


@pytest.mark.parametrize("name", ARTICLES)
def test_every_step_and_every_claim_is_in_the_document(
    name: str, documents: dict[str, str]
) -> None:
    _, report = _checked(name)
    tex = documents[name]
    assert report.trace is not None
    for step in report.trace:
        title = report.trace[step].title or step
        assert "\\subsection*{" + escape(title[0].upper() + title[1:]) in tex, step
        if re.match(r"(l\d+|enc|dec|gen)\.", step):  # a template's internal node name
            assert "\\texttt{" + escape(step) + "}" not in tex, f"node name {step} on the page"
            assert "\\mathtt{" + step + "}" not in tex, f"node name {step} in a formula"
    for r in report.results:  # a label's maths symbols typeset as maths (X_emb: $X_{emb}$)
        assert label_tex(r.claim.label) in tex, r.claim.label
    assert tex.count(r"\symtfwrong{") >= sum(
        1 for c in report.checks if c.verdict in ("slip", "wrong")
    )


def test_exact_forms_never_and_always() -> None:
    d, report = _checked("birds_build_nests")
    never = L.document(report, d, LatexOptions(exact_forms="never"))
    always = L.document(report, d, LatexOptions(exact_forms="always"))
    assert r"\sqrt{3}" in always
    assert r"\frac{4 \sqrt{3}}{3}" not in never
    assert r"\frac{4 \sqrt{3}}{3}" in always


def test_softmax_entries_get_their_short_closed_form() -> None:
    d, report = _checked("i_love_ai")
    tex = L.document(report, d, LatexOptions(exact_forms="always"))
    assert (
        r"\frac{1}{1 + e^{- \frac{\sqrt{2}}{100}}}" in tex
        or r"\frac{1}{1 + e^{\frac{\sqrt{2}}{100}}}" in tex
    )


def test_jupyter_reprs_are_display_math() -> None:
    _, report = _checked("birds_build_nests")
    assert report.trace is not None
    for out in (
        display.render(report.trace, "text/latex"),
        display.render(report, "text/latex"),
        display.render(Report((report,)), "text/latex"),
    ):
        assert out.startswith("$$") and out.endswith("$$")
        assert out.count("{") == out.count("}")
    assert "softmax" in display.render(report.trace, "text/latex")
    assert r"\mathbf{21.373}" in display.render(report, "text/latex")


# ----------------------------------------------------------------------------- hostile text


def _hostile_toml() -> str:
    label1 = json.dumps("label " + HOSTILE, ensure_ascii=False)
    label2 = json.dumps("line {_%&#\\} " + HOSTILE, ensure_ascii=False)
    words = ["a_b", "c%d"]
    model = tiny_model(
        HOSTILE,
        source="src_" + HOSTILE,
        architecture="attention",
        n_heads=1,
        mask="none",
        vocab=words,
        tokens=words,
    )
    return (
        model
        + f"""[[claims]]
label = {label1}
step = "l0.h0.pattern"
row = 0
printed = "0.669 0.331"
[[claims]]
label = {label2}
expression = "0.5 + 0.25"
printed = "0.76"
"""
    )


def test_hostile_title_and_labels_are_escaped(tmp_path: Path) -> None:
    f = tmp_path / "hostile.toml"
    f.write_text(_hostile_toml(), encoding="utf-8")
    d = spec.load(f)
    report = compare.check(d)
    tex = L.document(report, d)
    body = tex[tex.index(r"\title{") :]
    for bad in (r"(?<!\\)\$y", r"(?<!\\)#1", r"(?<!\\)%", " {x} ", "<t>"):
        assert not re.search(bad, body), bad
    assert tex.count(r"\begin{") == tex.count(r"\end{")


@needs_tex
def test_hostile_document_compiles(tmp_path: Path) -> None:
    f = tmp_path / "hostile.toml"
    f.write_text(_hostile_toml(), encoding="utf-8")
    d = spec.load(f)
    pdf = compile_pdf(L.document(compare.check(d), d), tmp_path / "hostile.pdf")
    text = " ".join(_pdf_text(pdf).split())
    assert "A_b 100% & #1" in text
    assert "{x} $y$ ^~ <t> |" in text


# ----------------------------------------------------------------------------- real compiles


@needs_tex
@pytest.mark.parametrize("name", ARTICLES)
def test_bundled_article_compiles_and_shows_corrections(
    name: str, documents: dict[str, str], tmp_path: Path
) -> None:
    pdf = compile_pdf(documents[name], tmp_path / f"{name}.pdf")
    text = _pdf_text(pdf)
    _, report = _checked(name)
    bad = [c for c in report.checks if c.verdict in ("slip", "wrong")]
    assert bad, "the bundled articles each have at least one slip"
    for c in bad:
        assert c.expected is not None
        assert c.expected in text, f"{c.claim}: corrected value {c.expected} missing from the PDF"
    assert "printed numbers" in text
    fonts = subprocess.run(["pdffonts", str(pdf)], capture_output=True, text=True).stdout
    assert "Type 3" not in fonts, "bitmap fonts: some character fell back to a font TeX had to draw"


@needs_tex
def test_cli_writes_tex_and_pdf(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    out = tmp_path / "notes" / "birds.tex"
    code = cli.main(["latex", str(_path("birds_build_nests")), "-o", str(out), "--pdf"])
    assert code == cli.EXIT_FAIL  # the article has a slip, as for `symtf check`
    assert out.read_text(encoding="utf-8").startswith(r"\documentclass")
    assert out.with_suffix(".pdf").read_bytes().startswith(b"%PDF")


@needs_tex
def test_an_output_named_pdf_gets_the_pdf_and_its_source_beside_it(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out = tmp_path / "rope.pdf"  # with or without --pdf: the LaTeX never lands in a .pdf
    for extra in ([], ["--pdf"]):
        assert cli.main(["latex", str(_path("rope_toy")), "-o", str(out), *extra]) == cli.EXIT_OK
        assert out.read_bytes().startswith(b"%PDF")
        assert (tmp_path / "rope.tex").read_text(encoding="utf-8").startswith(r"\documentclass")
        assert f"wrote {tmp_path / 'rope.tex'} and {out}" in capsys.readouterr().err
        out.unlink()


@needs_tex
def test_derive_outputs_compile(tmp_path: Path) -> None:
    derive = pytest.importorskip("symtf.derive")
    render = pytest.importorskip("symtf.derive.render")
    names = derive.names()
    for name in ("softmax-jacobian", "sinusoidal-relative"):  # the two quickest to derive
        if name not in names:
            pytest.skip(f"symtf.derive has no {name!r}")
        pdf = compile_pdf(render.document(derive.run(name)), tmp_path / f"{name}.pdf")
        assert pdf.read_bytes().startswith(b"%PDF")


def test_cli_stdout_and_options(capsys: pytest.CaptureFixture[str]) -> None:
    code = cli.main(
        ["latex", str(_path("birds_build_nests")), "--decimals", "2", "--exact-forms", "never"]
    )
    out = capsys.readouterr().out
    assert code == cli.EXIT_FAIL
    assert out.startswith(r"\documentclass") and out.rstrip().endswith(r"\end{document}")
    assert "1.73{" in out  # two decimals, then the truncation mark


def test_cli_without_tex_names_the_debian_packages(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setenv("PATH", str(tmp_path))
    code = cli.main(
        ["latex", str(_path("birds_build_nests")), "-o", str(tmp_path / "b.tex"), "--pdf"]
    )
    err = capsys.readouterr().err
    assert code == cli.EXIT_BAD_INPUT
    for pkg in DEBIAN_PACKAGES:
        assert pkg in err
    # The .tex is written all the same: it compiles wherever TeX is installed.
    assert (tmp_path / "b.tex").read_text(encoding="utf-8").startswith(r"\documentclass")
    assert "wrote" in err and "b.tex" in err


def test_cli_bad_file_exits_2(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert cli.main(["latex", str(tmp_path / "missing.toml")]) == cli.EXIT_BAD_INPUT


# ----------------------------------------------------------------------------- displayed chains

CHAIN = """title = "chain"
[[claims]]
label = "dot"
expression = "0.0025 × 0.498 + (-0.00749) × 0.502 = 0.001245 - 0.00376"
printed = "-0.002515"
"""


def _chain_document(tmp_path: Path) -> str:
    f = tmp_path / "chain.toml"
    f.write_text(CHAIN, encoding="utf-8")
    d = spec.load(f)
    return L.document(compare.check(d), d)


def test_a_chain_claim_is_typeset_as_maths(tmp_path: Path) -> None:
    tex = _chain_document(tmp_path)
    assert r"\mathtt" not in tex[tex.index(r"\begin{document}") :]
    line = (
        r"0.0025 \times 0.498 + \left(-0.00749\right) \times 0.502 = 0.001245 - 0.00376"
        r" \approx -0.002515"
    )
    assert line in tex
    # the second link, read with its unrounded operand (0.00376 stands for
    # 0.00749 × 0.502 = 0.00375998, cut to 0.003759…), is that link typeset, not the chain
    assert r"$0.001245 - 0.003759\ldots = -0.002514\ldots$" in tex


@needs_tex
def test_a_chain_claim_compiles_as_maths(tmp_path: Path) -> None:
    pdf = compile_pdf(_chain_document(tmp_path), tmp_path / "chain.pdf")
    text = " ".join(_pdf_text(pdf).split())
    # as maths, × is spaced as a binary operator (typewriter type shows 0.0025×0.498)
    line = (
        r"0\.0025 × 0\.498 \+ \([-−]0\.00749\) × 0\.502 = 0\.001245 [-−] 0\.00376 ≈ [-−]0\.002515"
    )
    assert re.search(line, text), text
