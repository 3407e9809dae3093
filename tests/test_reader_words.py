"""Explanations speak the article's words: its labels and entries, never internal node names.

What a reader sees — the text report's explanations, the HTML page, ``symtf explain`` —
names a number by the label of the claim that prints it, or that label (or the step's
title) with the entry's place ("A_1, row 3, column 1"). Node names (``l0.h0.pattern``,
``last[0, 2]``) appear only with ``--node-names``. Expected numbers come from mpmath.
"""

from __future__ import annotations

import contextlib
import html
import io
import json
import re
from pathlib import Path

import pytest
from mpmath import mp, mpf
from reference_model import forward, i_love_ai_weights

from symtf.cli import main
from symtf.limits import MAX_TIMEOUT

ROOT = Path(__file__).resolve().parent.parent
DERIVATIONS = sorted((ROOT / "derivations").glob("*.toml"))

#: The tool's own jargon, which the explanations no longer use.
JARGON = (
    "units from the exact value",
    "units in the last place",
    "an earlier displayed line",
    "no replay",
    "alternative convention gives",
    "the literals stand for",
)


def _run(args: list[str]) -> tuple[int, str]:
    buf = io.StringIO()
    with contextlib.chdir(ROOT), contextlib.redirect_stdout(buf):
        code = main(args)
    return code, buf.getvalue()


@pytest.fixture(scope="module")
def reports() -> dict[str, dict]:
    paths = [str(p.relative_to(ROOT)) for p in DERIVATIONS]
    code, out = _run(["check", "--format", "json", "--timeout", f"{MAX_TIMEOUT:g}", *paths])
    assert code in (0, 1)
    return {Path(d["path"]).stem: d for d in json.loads(out)["derivations"]}


def _node_patterns(report: dict) -> re.Pattern[str]:
    """Node names of a derivation's steps: dotted names, and any step written with an index."""
    steps = {c["step"] for c in report["checks"] if c.get("step")}
    dotted = r"\b(?:l\d+|enc|dec|gen|ln_f)\.[A-Za-z0-9_.]+"
    indexed = "|".join(re.escape(s) for s in sorted(steps, key=len, reverse=True))
    return re.compile(rf"{dotted}|\b(?:{indexed})\[\d+(?:, ?\d+)?\]")


@pytest.mark.parametrize("stem", [p.stem for p in DERIVATIONS])
def test_explanations_name_no_node_and_speak_no_jargon(stem: str, reports: dict) -> None:
    report = reports[stem]
    nodes = _node_patterns(report)
    for c in report["checks"]:
        text = c.get("explanation") or ""
        assert not nodes.search(text), (c["claim"], text)
        assert not any(j in text for j in JARGON), (c["claim"], text)


def test_a_slip_says_how_far_off_in_the_last_digit(reports: dict) -> None:
    # logit math is -0.487 + (-1.562) = -2.049 printed; exact -2.04837…: 0.63 of 0.001 away
    ref = forward(i_love_ai_weights())["logits"][0][5]
    with mp.workdps(30):
        off = abs(mpf("-2.049") - ref) / mpf("0.001")
    (c,) = [c for c in reports["i_love_ai"]["checks"] if c["claim"] == "logit math" and c["index"]]
    assert c["verdict"] == "slip"
    assert f"about {float(off):.2g} of the last digit" in c["explanation"]
    # the inputs of the replay are named by the article's claims, not last[0, 2]
    assert "logit AI: selected feature = -0.487" in c["explanation"]


def _truncated(x: mpf, decimals: int = 6) -> str:
    with mp.workdps(40):
        t = mp.floor(x * 10**decimals) / 10**decimals
        return f"{mp.nstr(t, 30, strip_zeros=False)[: len(str(int(t))) + 1 + decimals]}…"


def _birds_exponentials() -> list[mpf]:
    """e^(s/√3) for the Birds row of Q Kᵀ, from the file's embeddings and weights."""
    with mp.workdps(40):
        E = mp.matrix([[1, 1, 0, 1], [1, 0, 1, 0], [0, 1, 1, 1]])
        WQ = mp.matrix([[0, 0, 1], [0, 1, 1], [1, 0, 0], [1, 1, 0]])
        WK = mp.matrix([[1, 0, 0], [0, 0, 1], [0, 1, 0], [0, 0, 0]])
        S = (E * WQ) * (E * WK).T
        return [mp.exp(S[0, j] / mp.sqrt(3)) for j in range(3)]


def test_explain_shows_the_unrounded_addends_of_the_softmax_denominator() -> None:
    e = _birds_exponentials()
    code, out = _run(["explain", "birds_build_nests", "softmax denominator, Birds row"])
    assert code == 0
    addends = " + ".join(_truncated(x) for x in e)  # 5.652233… + 5.652233… + 10.068392…
    assert addends in out, out
    assert "5.652 is exp Birds->Birds" in out and "10.068 is exp Birds->nests" in out
    assert "l0." not in out


def test_explain_keeps_node_names_behind_the_flag() -> None:
    code, plain = _run(["explain", "i_love_ai", "A_1"])
    assert code == 0 and "l0.h0" not in plain
    assert "row 2, column 1: printed 0.496" in plain
    code, named = _run(["explain", "i_love_ai", "A_1", "--node-names"])
    assert code == 0 and "[l0.h0.pattern]" in named


def _page_text(page: str) -> str:
    page = re.sub(r"<style.*?</style>", "", page, flags=re.S)
    page = re.sub(r"<annotation[^>]*>.*?</annotation>", "", page, flags=re.S)
    attrs = " ".join(re.findall(r'(?:title|aria-label)="([^"]*)"', page))
    return html.unescape(re.sub(r"<[^>]+>", " ", page) + " " + attrs)


@pytest.mark.parametrize("stem", ["i_love_ai", "birds_build_nests"])
def test_the_page_names_no_node_unless_asked(stem: str, reports: dict, tmp_path: Path) -> None:
    page = tmp_path / "page.html"
    code, _ = _run(["html", stem, "-o", str(page), "-q"])
    assert code in (0, 1)
    text = _page_text(page.read_text(encoding="utf-8"))
    assert not _node_patterns(reports[stem]).search(text)
    code, _ = _run(["html", stem, "-o", str(page), "-q", "--node-names"])
    assert "l0.h0.pattern" in _page_text(page.read_text(encoding="utf-8"))
