"""The notes of a derivation with symbols: searched intervals as maths, wide matrices broken.

The symbolic case is ``i_love_ai`` with head 1's ``W_Q[0, 0] = a`` (the README's pages)
and with every entry of head 1's ``W_Q`` a symbol.
"""

from __future__ import annotations

import os
import re
import shutil
from fractions import Fraction
from pathlib import Path

import pytest

from symtf import spec
from symtf.checking import compare
from symtf.commands.latex import compile_pdf
from symtf.renderers import latex as L
from symtf.renderers.latex.claims import SEARCHED_DECIMALS, searched_ends
from symtf.renderers.latex.matrices import MatrixBlock, matrix_blocks, visible_width

ROOT = Path(__file__).resolve().parent.parent
REQUIRE = os.environ.get("SYMTF_REQUIRE_TEX") == "1"
needs_tex = pytest.mark.skipif(
    shutil.which("pdflatex") is None and not REQUIRE,
    reason="pdflatex not installed (set SYMTF_REQUIRE_TEX=1 to fail instead)",
)
SEED = ROOT / "derivations" / "i_love_ai.toml"
HEAD1_WQ = 'W_Q = """\n1 0\n0 1\n0 0\n0 0\n0 0\n0 0\n"""'


def _symbolic(tmp_path: Path, wq: str) -> spec.Derivation:
    text = SEED.read_text(encoding="utf-8")
    assert text.count(HEAD1_WQ) >= 1
    f = tmp_path / "sym.toml"
    f.write_text(text.replace(HEAD1_WQ, 'W_Q = """\n' + wq + '\n"""', 1), encoding="utf-8")
    return spec.load(f)


ONE = "a 0\n0 1\n0 0\n0 0\n0 0\n0 0"
ALL = "a b\nc d\ne f\ng h\ni j\nk l"


@pytest.fixture(scope="module")
def one_symbol(tmp_path_factory: pytest.TempPathFactory) -> tuple[spec.Derivation, object]:
    d = _symbolic(tmp_path_factory.mktemp("one"), ONE)
    return d, compare.check(d)


# ----------------------------------------------------------------------------- intervals

# From the verdict of S_1[0, 0] = √2·a/2 printed 0.707 (its lo_within / hi_within fields).
S11 = {
    "lo": "0.9991418818…",
    "lo_closed": True,
    "lo_end": "root",
    "lo_within": [
        "0.9991418818026431836187839508056640625",
        "0.99914188182083307765424251556396484375",
    ],
    "hi": "1.0005560953…",
    "hi_closed": True,
    "hi_end": "root",
    "hi_within": [
        "1.00055609536866541020572185516357421875",
        "1.000556095386855304241180419921875",
    ],
}


def test_searched_ends_are_rounded_outward_by_hand() -> None:
    # by hand: the certain width is 1.000556… − 0.999141… = 0.0014142…; a tenth of it is
    # 0.000141…, so each end may move by up to 0.0000707…: 5 decimals (10⁻⁵ fits, 10⁻⁴ not).
    lo, hi, n = searched_ends(S11)  # type: ignore[misc]
    assert (lo, hi, n) == (Fraction("0.99914"), Fraction("1.00056"), 5)
    assert lo <= Fraction(S11["lo_within"][0]) and hi >= Fraction(S11["hi_within"][1])


@pytest.mark.parametrize(
    ("lo_within", "hi_within"),
    [
        (["-1.234567891", "-1.234567890"], ["-1.2000001", "-1.2"]),
        (["-0.00001", "0"], ["0.5", "0.5000000001"]),
        (["2.5", "2.5"], ["2.5000000000001", "2.5000000000002"]),  # a tiny set
        (["0.1249", "0.125"], ["7.98", "7.99"]),
    ],
)
def test_printed_interval_holds_the_certified_one(
    lo_within: list[str], hi_within: list[str]
) -> None:
    got = searched_ends({"lo_within": lo_within, "hi_within": hi_within})
    assert got is not None
    lo, hi, n = got
    assert lo <= Fraction(lo_within[0]) and hi >= Fraction(hi_within[1])  # exact comparisons
    assert lo < hi and 1 <= n <= SEARCHED_DECIMALS
    assert (lo * 10**n).denominator == 1 and (hi * 10**n).denominator == 1


def test_searched_set_is_maths_in_the_notes(one_symbol: tuple[spec.Derivation, object]) -> None:
    d, report = one_symbol
    tex = L.document(report, d)  # type: ignore[arg-type]
    assert r"for $a \in [0.99914,\ 1.00056]$ (searched $a \in [-10,\ 10]$)." in tex
    assert "0.9991418818" not in tex and "searched a in" not in tex
    # every searched interval in the notes holds the verdict's certified one
    shown = 0
    for c in report.checks:  # type: ignore[attr-defined]
        for s in c.extra.get("solutions") or ():
            if "lo_within" not in s:
                continue
            lo, hi, n = searched_ends(s)  # type: ignore[misc]
            assert lo <= Fraction(s["lo_within"][0]) and hi >= Fraction(s["hi_within"][1])
            text = rf"[{_fixed(lo, n)},\ {_fixed(hi, n)}]"
            assert text in tex, text
            shown += 1
    assert shown >= 9  # the nine scaled scores at least


def _fixed(q: Fraction, n: int) -> str:
    sign = "-" if q < 0 else ""
    k = abs(q) * 10**n
    assert k.denominator == 1
    digits = str(k.numerator).rjust(n + 1, "0")
    return f"{sign}{digits[:-n]}.{digits[-n:]}"


# ----------------------------------------------------------------------------- wide matrices


def _covered(blocks: list[MatrixBlock]) -> list[int]:
    return [j for b in blocks for j in range(b.first, b.last + 1)]


def test_blocks_by_hand() -> None:
    # eight columns of width 5 take 7 each with their separation: two fit in 20, three not
    cells = [["x" * 5] * 8, ["y" * 5] * 8]
    blocks = matrix_blocks(cells, 8, 8, 20)
    assert [(b.first, b.last) for b in blocks] == [(1, 2), (3, 4), (5, 6), (7, 8)]
    assert blocks[0].tex == r"\begin{bmatrix}xxxxx & xxxxx \\ yyyyy & yyyyy\end{bmatrix}"
    # a column wider than the limit alone is a block of its own
    wide = [["x" * 3, "x" * 50, "x" * 3]]
    assert [(b.first, b.last) for b in matrix_blocks(wide, 8, 8, 20)] == [(1, 1), (2, 2), (3, 3)]


@pytest.mark.parametrize(
    ("rows", "cols", "limit"), [(3, 10, 30), (4, 7, 18), (2, 20, 40), (1, 3, 80)]
)
def test_blocks_cover_every_column_once_and_fit(rows: int, cols: int, limit: int) -> None:
    cells = [
        [rf"\frac{{a_{{{i}}}}}{{{j + 1}}}" + "1" * (j % 4) for j in range(cols)]
        for i in range(rows)
    ]
    blocks = matrix_blocks(cells, 8, 12, limit)
    assert _covered(blocks) == list(range(1, cols + 1))  # each column exactly once, in order
    for b in blocks:
        assert visible_width(b.tex) <= limit or b.first == b.last, b
        if r"\cdots" not in b.tex:  # the block holds its columns (dots stand for several)
            assert b.tex.count("&") == rows * (b.last - b.first)


def test_blocks_of_an_elided_matrix_cover_the_elided_columns() -> None:
    cells = [[f"{i}{j}" for j in range(12)] for i in range(3)]
    blocks = matrix_blocks(cells, 8, 8, 14)  # shows columns 1-6, dots, 12
    assert _covered(blocks) == list(range(1, 13))
    assert r"\cdots" in "".join(b.tex for b in blocks)


@pytest.fixture(scope="module")
def every_symbol(tmp_path_factory: pytest.TempPathFactory) -> str:
    d = _symbolic(tmp_path_factory.mktemp("all"), ALL)
    return L.document(compare.check(d), d)


def test_wide_symbolic_results_are_in_column_blocks(every_symbol: str) -> None:
    assert r"\underset{\text{columns 1 to " in every_symbol
    assert r"\symtfpick" in every_symbol  # TeX picks the first layout that fits


@needs_tex
@pytest.mark.parametrize("which", ["one", "all"])
def test_symbolic_notes_compile_unscaled_and_within_the_margins(
    which: str, tmp_path: Path, one_symbol: tuple[spec.Derivation, object], every_symbol: str
) -> None:
    if which == "one":
        d, report = one_symbol
        tex = L.document(report, d)  # type: ignore[arg-type]
    else:
        tex = every_symbol
    # TeX reports each box it shrinks: its natural width and the width it is shrunk to
    macro = r"\resizebox{#1}{!}{\usebox{\symtfbox}}"
    assert macro in tex
    tex = tex.replace(
        macro, r"\typeout{SYMTFSCALED \the\wd\symtfbox\space\the\dimexpr#1\relax}" + macro
    )
    compile_pdf(tex, tmp_path / "n.pdf", log=tmp_path / "n.log", timeout=300)
    log = (tmp_path / "n.log").read_text(encoding="utf-8", errors="replace")
    assert re.findall(r"Overfull \\[hv]box", log) == []
    shrunk = [
        (float(a), float(b)) for a, b in re.findall(r"SYMTFSCALED ([\d.]+)pt ([\d.]+)pt", log)
    ]
    # no display is shrunk: only a printed matrix in a claims table, to at most 1.3 times its cell
    assert all(natural <= 1.3 * target for natural, target in shrunk), max(shrunk)
    assert all(target < 0.5 * 483 for _, target in shrunk), shrunk  # the table's 0.4 linewidth


def test_a_copied_long_entry_is_named_by_the_step_it_comes_from(
    one_symbol: tuple[spec.Derivation, object],
) -> None:
    # The heads side by side copy every entry of H_1, H_2, H_3 (by construction of a
    # concatenation): a long symbolic entry there is H_1's, never the concatenation's own.
    d, report = one_symbol
    tex = L.document(report, d)  # type: ignore[arg-type]
    side = tex[tex.index("Heads side by side") :]
    side = side[: side.index(r"\end{center}")]
    assert r"(H_{1})_{2,1}" in side, side
    assert "concatenated}" + r"\right)_{" not in side and "side by side}" + r"\right)_{" not in side
