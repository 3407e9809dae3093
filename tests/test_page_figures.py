"""The notes and the page show maths as maths, each slip once, and attention as pictures.

Expected numbers come from mpmath, computed here from the derivation files' weights.
"""

from __future__ import annotations

import contextlib
import io
import math
import re
from pathlib import Path

import pytest
from mpmath import mp
from reference_model import forward, i_love_ai_weights

from symtf.cli import main
from symtf.shown import sharpness, softmax_at

ROOT = Path(__file__).resolve().parent.parent


def _run(args: list[str]) -> int:
    with contextlib.chdir(ROOT), contextlib.redirect_stdout(io.StringIO()):
        return main(args)


def _birds() -> tuple[list[list], list]:
    """Q Kᵀ of birds_build_nests and the softmax of its rows over √3, in mpmath."""
    with mp.workdps(40):
        E = mp.matrix([[1, 1, 0, 1], [1, 0, 1, 0], [0, 1, 1, 1]])
        WQ = mp.matrix([[0, 0, 1], [0, 1, 1], [1, 0, 0], [1, 1, 0]])
        WK = mp.matrix([[1, 0, 0], [0, 0, 1], [0, 1, 0], [0, 0, 0]])
        S = (E * WQ) * (E * WK).T
        scores = [[S[i, j] for j in range(3)] for i in range(3)]
        weights = []
        for row in scores:
            e = [mp.exp(s / mp.sqrt(3)) for s in row]
            weights.append([v / sum(e) for v in e])
        return scores, weights


def _trunc6(x: object) -> str:
    """``x`` truncated to 6 decimals, as the explanations cut a value (``5.652233``)."""
    with mp.workdps(40):
        v = mp.floor(mp.mpf(x) * 10**6)
        s = str(int(v))
        return f"{s[:-6]}.{s[-6:]}"


def _rendered(factory: pytest.TempPathFactory, command: str, stem: str, suffix: str) -> str:
    """``symtf COMMAND STEM -o FILE`` and the text it wrote."""
    out = factory.mktemp(command) / f"{stem}{suffix}"
    assert _run([command, stem, "-o", str(out), "-q"]) in (0, 1)
    return out.read_text(encoding="utf-8")


@pytest.fixture(scope="module")
def birds_notes(tmp_path_factory: pytest.TempPathFactory) -> str:
    return _rendered(tmp_path_factory, "latex", "birds_build_nests", ".tex")


def test_the_notes_typeset_the_unrounded_line_as_maths(birds_notes: str) -> None:
    scores, _ = _birds()
    with mp.workdps(40):
        e = [mp.exp(s / mp.sqrt(3)) for s in scores[0]]
        total = sum(e)
    line = " + ".join(_trunc6(v) + r"\ldots" for v in e) + f" = {_trunc6(total)}" + r"\ldots"
    assert f"${line}$" in birds_notes
    assert r"$5.652 + 5.652 + 10.068 = 21.372$" in birds_notes


@pytest.mark.parametrize("stem", ["birds_build_nests", "i_love_ai"])
def test_the_notes_prose_has_no_ascii_maths(stem: str, tmp_path: Path) -> None:
    out = tmp_path / "notes.tex"
    _run(["latex", stem, "-o", str(out), "-q"])
    tex = out.read_text(encoding="utf-8")
    prose = [ln for ln in tex.splitlines() if ln.startswith(("As displayed", "Entry "))]
    assert prose
    for ln in prose:
        # a caret or a star in prose would be e^2.309 or 0.474*0 written out as ASCII
        outside = re.sub(r"\$[^$]*\$", "", ln)
        assert r"\char94" not in outside and "*" not in outside, ln


def test_the_page_lists_one_slip_once(tmp_path: Path) -> None:
    # logit math, the logits row z and the displayed line all print -2.049 for −2.04837…
    page = tmp_path / "page.html"
    _run(["html", "i_love_ai", "-o", str(page), "-q"])
    text = page.read_text(encoding="utf-8")
    block = text[
        text.index('id="corrections"') : text.index("</ul>", text.index('id="corrections"'))
    ]
    items = re.findall(r"<li>.*?</li>", block, flags=re.S)
    assert len([i for i in items if "-2.049" in i or "−2.049" in i]) == 1
    (item,) = [i for i in items if "2.049" in i]
    assert "also appears as logit math and z" in item


@pytest.fixture(scope="module")
def birds_page(tmp_path_factory: pytest.TempPathFactory) -> str:
    return _rendered(tmp_path_factory, "html", "birds_build_nests", ".html")


def test_one_heatmap_per_attention_pattern_with_tokens_and_values(birds_page: str) -> None:
    _, weights = _birds()
    maps = re.findall(r'<svg [^>]*class="heatmap".*?</svg>', birds_page, flags=re.S)
    assert len(maps) == 1  # one head, one pattern step
    (svg,) = maps
    for word in ("Birds", "build", "nests"):
        assert f">{word}</text>" in svg
    cells = re.findall(r'text-anchor="middle" fill="#[0-9a-f]{3}">([0-9.]+)</text>', svg)
    assert [float(c) for c in cells] == [round(float(w), 3) for row in weights for w in row]
    assert len(cells) == 9
    assert "<script" not in birds_page and "<image" not in birds_page


def test_the_sharpness_curve_matches_mpmath_at_the_articles_divisor(birds_page: str) -> None:
    scores, weights = _birds()
    peak, ent = sharpness([[float(s) for s in r] for r in scores], [math.sqrt(3)])
    with mp.workdps(40):
        mean_max = sum(max(r) for r in weights) / 3
        mean_ent = sum(-sum(w * mp.log(w) for w in r) for r in weights) / 3
    assert peak[0] == pytest.approx(float(mean_max), abs=1e-12)
    assert ent[0] == pytest.approx(float(mean_ent), abs=1e-12)
    assert 'class="sharpness"' in birds_page and "√d_k = 1.73" in birds_page
    # a larger divisor flattens the softmax: the largest weight falls, the entropy rises
    p2, e2 = sharpness([[float(s) for s in r] for r in scores], [1.0, 4.0])
    assert p2[0] > p2[1] and e2[0] < e2[1]


def test_the_charts_softmax_keeps_large_and_masked_scores() -> None:
    # scores far past e^709 (float64's largest exponential) and a masked entry, at three
    # divisors: each row's weights as mpmath gives them at 40 digits
    row = [1000.0, 998.5, -math.inf, 990.0]
    divisors = [0.5, 1.0, 8.0]
    got = softmax_at(row, divisors)
    with mp.workdps(40):
        for t, weights in zip(divisors, got, strict=True):
            live = [mp.mpf(s) / t for s in row if s != -math.inf]
            total = sum(mp.exp(z) for z in live)
            want = [0.0 if s == -math.inf else float(mp.exp(mp.mpf(s) / t) / total) for s in row]
            assert weights == pytest.approx(want, rel=1e-12, abs=1e-300)


def test_a_students_sheet_has_no_pictures_of_its_answers(tmp_path: Path) -> None:
    out = tmp_path / "sheet"
    args = ["exercise", "birds_build_nests", "-o", str(out), "--no-pdf"]
    assert _run(args) == 0
    sheet = (out / "sheet.html").read_text(encoding="utf-8")
    assert "softmax" in sheet and "<svg" not in sheet


@pytest.fixture(scope="module")
def ila_notes(tmp_path_factory: pytest.TempPathFactory) -> str:
    return _rendered(tmp_path_factory, "latex", "i_love_ai", ".tex")


def test_labels_that_are_symbols_are_typeset_as_maths(ila_notes: str) -> None:
    assert r"$Q_{1}\,K_{1}^{\top}$" in ila_notes
    assert r"Q{\ttfamily\char95}1" not in ila_notes
    assert r"$H_{1}$ AI row: weights" in ila_notes  # the words stay text


def test_a_rational_entry_is_shown_as_its_fraction(ila_notes: str) -> None:
    # the first centred entry of LayerNorm 1 is exactly 1/6 (mpmath, from the weights)
    ref = forward(i_love_ai_weights())["l0.ln1.centered"][0][0]
    assert abs(ref - mp.mpf(1) / 6) < mp.mpf(10) ** -12
    assert r"\frac{1}{6}" in ila_notes and "0.1666{" not in ila_notes


def test_row_division_and_softmax_are_written_in_usual_notation(
    ila_notes: str, birds_notes: str
) -> None:
    assert r"\oslash" not in ila_notes + birds_notes
    assert r"\operatorname{diag}" in ila_notes  # each row over its own deviation
    assert r"\frac{e^{s_{ij}}}{\sum_k e^{s_{ik}}}" in birds_notes
    # an italic label then its colon, with no italic correction to read as a space
    assert r"{\itshape softmax denominator, Birds row}:" in birds_notes


def test_a_label_reaches_latex_only_through_its_grammar() -> None:
    from symtf.renderers.latex.names import label_tex

    assert label_tex("K^T") == r"$K^{\top}$"
    hostile = label_tex(r"x_1 \input{/etc/passwd} $y$")
    assert r"\input" not in hostile and "$y$" not in hostile
    assert hostile.startswith("$x_{1}$ ")
