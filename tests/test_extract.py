"""symtf extract: an article's printed numbers, found where they are printed.

Expectations come from the hand transcriptions in derivations/ (made without
this module) and from the article text itself: every value extract reports
must stand, digit for digit, on the line it names.
"""

from __future__ import annotations

import dataclasses
import json
import re
import subprocess
import sys
import tomllib
from pathlib import Path

import mpmath
import pytest

import symtf
from symtf.checking.draft import check_draft
from symtf.extract import Found, draft_toml, extract, extract_text

ROOT = Path(__file__).resolve().parent.parent
ARTICLES = ROOT.parent / "shared" / "articles"
SEED = ARTICLES / "000_b60c289f27ab6d88.txt"
BIRDS = ARTICLES / "003_6b8589bde336badf.txt"
TRANSCRIPTIONS = {
    SEED: ROOT / "derivations" / "i_love_ai.toml",
    BIRDS: ROOT / "derivations" / "birds_build_nests.toml",
}

needs_articles = pytest.mark.skipif(
    not SEED.exists(), reason="the source articles are not beside the project"
)


def _norm(s: str) -> str:
    return s.replace("−", "-").strip()


def _contains(block: list[list[str]], rows: list[list[str]]) -> bool:
    """``rows`` stand in ``block`` as a contiguous sub-block."""
    if not block or not rows or len(rows) > len(block) or len(rows[0]) > len(block[0]):
        return False
    return any(
        all(block[i + a][j : j + len(rows[a])] == rows[a] for a in range(len(rows)))
        for i in range(len(block) - len(rows) + 1)
        for j in range(len(block[0]) - len(rows[0]) + 1)
    )


def _coverage(article: Path) -> tuple[int, int, list[str]]:
    """Printed numbers of the hand transcription that extract found, of all it holds."""
    found = extract(article)
    blocks = [[[_norm(c) for c in r] for r in f.rows] for f in found]
    data = tomllib.loads(TRANSCRIPTIONS[article].read_text(encoding="utf-8"))
    hit = total = 0
    misses = []
    for c in data["claims"]:
        p = c.get("printed")
        if not isinstance(p, str) or c.get("step") == "next_token" or "rank" in c or "assert" in c:
            continue  # vocabulary words, not printed numbers
        rows = [[_norm(x) for x in ln.split()] for ln in p.strip().splitlines()]
        n = sum(len(r) for r in rows)
        total += n
        if any(_contains(b, rows) for b in blocks):
            hit += n
        else:
            misses.append(c["label"])
    return hit, total, misses


@needs_articles
@pytest.mark.parametrize(("article", "floor"), [(SEED, 0.99), (BIRDS, 0.95)])
def test_extract_finds_the_numbers_the_hand_transcription_holds(
    article: Path, floor: float
) -> None:
    hit, total, misses = _coverage(article)
    assert hit / total >= floor, (hit, total, misses)


@needs_articles
def test_both_articles_together_reach_95_percent() -> None:
    hits = [_coverage(a) for a in (SEED, BIRDS)]
    assert sum(h for h, _, _ in hits) / sum(t for _, t, _ in hits) >= 0.95


@needs_articles
@pytest.mark.parametrize("article", [SEED, BIRDS])
def test_extract_invents_no_number(article: Path) -> None:
    """Every reported number stands on the article line (or lines) extract names."""
    lines = article.read_text(encoding="utf-8").splitlines()
    for f in extract(article):
        span = max(len(f.rows), len(f.rows[0]) if "→" in f.label else 1)
        window = " ".join(lines[f.line - 1 : f.line - 1 + span]).replace("−", "-")
        numbers = set(re.findall(r"\d{1,3}(?:,\d{3})+(?:\.\d+)?|\d+(?:\.\d+)?", window))
        for row in f.rows:
            for cell in row:
                if cell in ("-inf",) or "/" in cell:
                    assert cell.replace("-inf", "infty") and ("infty" in window or "/" in window), (
                        f,
                        cell,
                    )
                    continue
                assert cell.lstrip("-") in numbers, (
                    f"{article.name}:{f.line}: {cell} is not printed there ({f.label})"
                )


@needs_articles
@pytest.mark.parametrize("article", [SEED, BIRDS])
def test_every_displayed_line_becomes_an_expression_claim_that_checks(
    article: Path, tmp_path: Path
) -> None:
    found = extract(article)
    arithmetic = [f for f in found if f.kind == "arithmetic"]
    assert len(arithmetic) >= 10
    draft = tmp_path / "draft.toml"
    draft.write_text(draft_toml(found, source=article.name), encoding="utf-8")
    d = symtf.load(draft)
    assert d.draft
    result = check_draft(d)
    checked = {r.claim.label for r in result.report.results}
    expression_claims = [c for c in d.claims if c.expression is not None]
    assert len(expression_claims) == len(arithmetic)
    assert {c.label for c in expression_claims} <= checked
    for r in result.report.results:
        for c in r.checks:
            assert c.verdict in ("exact", "rounded", "slip", "wrong"), (r.claim.label, c.verdict)


@needs_articles
def test_the_seed_arithmetic_is_read_as_written() -> None:
    """A few lines whose exact values are known by hand."""
    by_text = {f.expression: f for f in extract(SEED) if f.kind == "arithmetic"}
    assert "sum([0.1,1.1]∘[0.1,1.1])" in by_text  # [0.1,1.1]·[0.1,1.1] = 0.01 + 1.21 = 1.22
    assert by_text["sum([0.1,1.1]∘[0.1,1.1])"].rows == (("1.22",),)
    assert "-0.487+(-1.562)" in by_text  # the seed's −2.049 line
    assert by_text["-0.487+(-1.562)"].rows == (("-2.049",),)


NOTEBOOK = {
    "nbformat": 4,
    "nbformat_minor": 5,
    "metadata": {},
    "cells": [
        {
            "cell_type": "markdown",
            "metadata": {},
            "source": [
                "## Weights\n",
                "$$W = \\begin{bmatrix}0.5 & -1\\\\ 2 & 0.25\\end{bmatrix}$$\n",
            ],
        },
        {
            "cell_type": "code",
            "metadata": {},
            "execution_count": 1,
            "source": [
                "import numpy as np\n",
                "A = np.array([[0.1385, 0.2379], [1.5, -2.0]])\n",
                "A",
            ],
            "outputs": [
                {
                    "output_type": "execute_result",
                    "execution_count": 1,
                    "metadata": {},
                    "data": {
                        "text/plain": [
                            "array([[ 0.1385,  0.2379],\n",
                            "       [ 1.5   , -2.    ]])",
                        ]
                    },
                }
            ],
        },
        {
            "cell_type": "code",
            "metadata": {},
            "execution_count": 2,
            "source": ["print(probs)"],
            "outputs": [
                {
                    "output_type": "stream",
                    "name": "stdout",
                    "text": [
                        "tensor([[6.3379e-02, 9.3662e-01],\n",
                        "        [5.0000e-01, 5.0000e-01]])\n",
                    ],
                }
            ],
        },
        {"cell_type": "markdown", "metadata": {}, "source": ["The sum is $0.25 + 0.5 = 0.75$."]},
    ],
}


def test_a_notebook_yields_every_printed_array(tmp_path: Path) -> None:
    path = tmp_path / "nb.ipynb"
    path.write_text(json.dumps(NOTEBOOK), encoding="utf-8")
    found = extract(path)
    by_label = {f.label: f for f in found if f.kind in ("matrix", "vector")}
    assert by_label["W"].rows == (("0.5", "-1"), ("2", "0.25"))
    assert by_label["A"].rows == (
        ("0.1385", "0.2379"),
        ("1.5", "-2"),
    )  # numpy's "-2." printed as -2
    assert by_label["probs"].rows == (("6.3379e-02", "9.3662e-01"), ("5.0000e-01", "5.0000e-01"))
    assert by_label["A"].cell == 1 and by_label["probs"].cell == 2
    arithmetic = [f for f in found if f.kind == "arithmetic"]
    assert [(a.expression, a.rows) for a in arithmetic] == [("0.25+0.5", (("0.75",),))]


def test_markdown_tables_latex_and_plain_text() -> None:
    md = "| token | f0 | f1 |\n|---|---|---|\n| I | 0.1 | 0.2 |\n| love | 0.3 | -0.4 |\n"
    (table,) = [f for f in extract_text(md, "md") if f.kind == "matrix"]
    assert table.rows == (("0.1", "0.2"), ("0.3", "-0.4")) and table.line == 1
    tex = "Text\n\\[ A_1 = \\begin{pmatrix} 1 & 0 \\\\ 0.5 & 0.5 \\end{pmatrix} \\]\n"
    (m,) = [f for f in extract_text(tex, "tex") if f.kind == "matrix"]
    assert (m.label, m.line, m.rows) == ("A_1", 2, (("1", "0"), ("0.5", "0.5")))
    txt = "Scaling: with d_k = 3, √3 ≈ 1.732:\n"
    (a,) = [f for f in extract_text(txt, "txt") if f.kind == "arithmetic"]
    assert (a.expression, a.rows) == ("√3", (("1.732",),))


def test_an_elided_matrix_is_not_reported_as_printed() -> None:
    found = extract_text("$$X = \\begin{bmatrix} 1 & \\cdots & 2 \\end{bmatrix}$$", "md")
    assert not [f for f in found if f.kind == "matrix"]


def test_suggestions_put_the_right_step_first_for_the_seed_matrices() -> None:
    d = symtf.load(TRANSCRIPTIONS[SEED])
    originals = {}
    claims = []
    for c in d.claims:
        if (
            c.step is not None
            and c.printed
            and c.step != "next_token"
            and c.reduce is None
            and c.rank is None
        ):
            originals[c.label] = (c.step, c.row)
            claims.append(dataclasses.replace(c, step="?"))
        else:
            claims.append(c)
    result = check_draft(dataclasses.replace(d, claims=tuple(claims), draft=True))
    matrix_claims = [u for u in result.unmapped if u.size > 1]
    assert len(matrix_claims) >= 50
    right = sum(
        1
        for u in matrix_claims
        if u.suggestions
        and (u.suggestions[0].step, u.suggestions[0].row) == originals[u.claim.label]
    )
    assert right / len(matrix_claims) >= 0.9, (right, len(matrix_claims))


def test_cli_extract_and_draft_check(tmp_path: Path) -> None:
    article = tmp_path / "a.md"
    article.write_text(
        "# Toy\n\n$$S = \\begin{bmatrix} 0.5 & 1 \\end{bmatrix}$$\n\n$$e^{2.309}\\approx 10.068$$\n",
        encoding="utf-8",
    )
    draft = tmp_path / "draft.toml"
    r = subprocess.run(
        [sys.executable, "-m", "symtf", "extract", str(article), "-o", str(draft)],
        capture_output=True,
        text=True,
        cwd=ROOT,
    )
    assert r.returncode == 0, r.stderr
    data = tomllib.loads(draft.read_text(encoding="utf-8"))
    assert data["draft"] is True
    steps = [c.get("step") for c in data["claims"]]
    assert "?" in steps
    # Without --draft, an unmapped claim is bad input naming the step.
    r = subprocess.run(
        [sys.executable, "-m", "symtf", "check", str(draft)],
        capture_output=True,
        text=True,
        cwd=ROOT,
    )
    assert r.returncode == 2 and '"?"' in r.stderr and "--draft" in r.stderr
    # With --draft: e^2.309 = 10.0644 (mpmath), so the printed 10.068 is off: exit 1, and S is left to map.
    r = subprocess.run(
        [sys.executable, "-m", "symtf", "check", "--draft", "--format", "json", str(draft)],
        capture_output=True,
        text=True,
        cwd=ROOT,
    )
    assert r.returncode == 1, r.stderr
    out = json.loads(r.stdout)
    (entry,) = out["derivations"]
    assert [u["claim"] for u in entry["unmapped"]] == ["S"]
    assert entry["checks"][0]["printed"] == "10.068"


def test_extract_refuses_what_is_not_an_article(tmp_path: Path) -> None:
    r = subprocess.run(
        [sys.executable, "-m", "symtf", "extract", str(tmp_path)],
        capture_output=True,
        text=True,
        cwd=ROOT,
    )
    assert r.returncode == 2 and "folder" in r.stderr
    bad = tmp_path / "x.ipynb"
    bad.write_text("{not json", encoding="utf-8")
    r = subprocess.run(
        [sys.executable, "-m", "symtf", "extract", str(bad)],
        capture_output=True,
        text=True,
        cwd=ROOT,
    )
    assert r.returncode == 2 and "notebook" in r.stderr


def test_found_shape() -> None:
    assert Found("matrix", "A", 1, (("1", "2"), ("3", "4"))).shape == (2, 2)


def test_a_tuple_in_parentheses_is_a_vector_and_a_prose_decimal_keeps_its_sign() -> None:
    found = extract_text(
        "```\nh = (0.6698, 0.3302)\n  (0.1433, -0.7988, 0)\nshape (2, 3)\nf(1, 2)\n"
        "falls to -0.25 here\n```\n",
        "md",
    )
    vectors = [(f.label, f.rows) for f in found if f.kind == "vector"]
    assert vectors == [("h", (("0.6698", "0.3302"),)), ("line 3", (("0.1433", "-0.7988", "0"),))]
    numbers = [f.rows[0][0] for f in found if f.kind == "number"]
    assert numbers == ["-0.25"]


def test_a_percentage_beside_a_probability_is_not_read_as_another_number() -> None:
    # "0.250 (25.0%)" says one thing twice; 25.0 is not a value of the worked example
    found = extract_text("- P(A) ≈ 0.250 (25.0%)\n- P(B) ≈ 0.249 ( 24.9 % )\n", "md")
    assert [f.rows[0][0] for f in found if f.kind == "number"] == ["0.250", "0.249"]


def test_a_latex_decimal_comma_is_a_decimal_point() -> None:
    # "0{,}5" is how a German or French article writes 0.5 in TeX; e^0.5 = 1.648721…
    found = extract_text(
        "$$e^{0{,}5} \\approx 1{,}6487$$\n\n$$z = \\begin{bmatrix} 0{,}5 & 1{,}0 \\end{bmatrix}$$\n",
        "md",
    )
    (a,) = [f for f in found if f.kind == "arithmetic"]
    assert a.rows == (("1.6487",),) and "0.5" in (a.expression or "")
    assert abs(mpmath.e ** mpmath.mpf("0.5") - mpmath.mpf("1.6487")) < mpmath.mpf("0.00005")
    (m,) = [f for f in found if f.kind in ("matrix", "vector")]
    assert m.rows == (("0.5", "1.0"),)


@pytest.mark.parametrize(
    ("written", "label"),
    [
        # the article's own words, as written: no product invented between P and (
        (r"P(\text{Hello})", "P(Hello)"),
        (r"P(\text{New York})", "P(New York)"),
        (r"h_{\text{AI}}", "h_AI"),
        (r"\mathrm{Loss}_1", "Loss_1"),
    ],
)
def test_a_label_written_as_maths_reads_as_written(written: str, label: str) -> None:
    # 1/4 + 1/4 = 0.5 by hand
    found = extract_text(f"$${written} = \\frac{{1}}{{4}} + \\frac{{1}}{{4}} = 0.5$$\n", "md")
    (a,) = [f for f in found if f.kind == "arithmetic"]
    assert a.label == label


def test_the_text_report_shows_a_label_as_written(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    from symtf.cli import main

    article = tmp_path / "a.md"
    article.write_text("Text.\n\n$$P(\\text{Hello}) = \\frac{1}{4} + \\frac{1}{4} = 0.6$$\n")
    assert main(["check", str(article)]) == 1  # 1/4 + 1/4 = 0.5, printed 0.6: wrong
    out = capsys.readouterr().out
    assert "P(Hello)" in out and "P*(Hello)" not in out
