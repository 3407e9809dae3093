"""``symtf grade`` names ten constructed student mistakes, one student each.

The exercise blanks S_1, A_1, H_1 and the first LayerNorm of the bundled i_love_ai
derivation. Every student answers from the reference (tests/reference_model.py, mpmath,
independent of symtf) and makes one mistake, built here by hand: the expected cause
follows from how the answers were made.
"""

from __future__ import annotations

import json
import tomllib
from pathlib import Path

import pytest
from mpmath import mp, mpf
from reference_model import forward, i_love_ai_weights, round_half_up

from symtf import cli

ROOT = Path(__file__).resolve().parent.parent
SEED = ROOT / "derivations" / "i_love_ai.toml"
REF = forward(i_love_ai_weights())


@pytest.fixture(scope="module")
def exercise(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("mistakes")
    args = ["exercise", str(SEED), "-o", str(out), "--blank-steps", "S_1,A_1,H_1,Y", "--no-pdf"]
    assert cli.main(args) == 0
    return out


def _blanks(folder: Path) -> dict[tuple[str, int, int], str]:
    key = tomllib.loads((folder / "key.toml").read_text())["blanks"]
    return {(b["step"], *b["index"]): b["id"] for b in key}


def _right(folder: Path) -> dict[str, str]:
    return {bid: round_half_up(REF[s][i][j], 3) for (s, i, j), bid in _blanks(folder).items()}


def _n_minus_1_row(i: int) -> list[str]:
    """LayerNorm row ``i`` with the variance divided by d − 1 (eps 0)."""
    with mp.workdps(60):
        x = REF["l0.resid_mid"][i]
        mean = sum(x) / len(x)
        var = sum((v - mean) ** 2 for v in x) / (len(x) - 1)
        return [round_half_up((v - mean) / mp.sqrt(var), 3) for v in x]


def _unscaled_row(i: int) -> list[str]:
    """A_1 row ``i`` as the softmax of the unscaled scores (the causal mask kept)."""
    with mp.workdps(60):
        s = REF["l0.h0.scores"][i][: i + 1]
        e = [mp.exp(v) for v in s]
        row = [v / sum(e) for v in e] + [mpf(0)] * (3 - i - 1)
        return [round_half_up(v, 3) for v in row]


def _truncated(x: object) -> str:
    """``x`` truncated toward zero at 3 decimals."""
    with mp.workdps(60):
        v = mpf(x)
        t = mp.floor(abs(v) * 1000) / 1000
        return ("-" if v < 0 else "") + f"{float(t):.3f}"


def _mistakes() -> dict[str, tuple[dict[tuple[str, int, int], str], str]]:
    """name -> (answers that differ from the right ones, by entry; the cause expected)."""
    A, S, Z = (REF[k] for k in ("l0.h0.pattern", "l0.h0.scaled", "l0.h0.z"))
    r = lambda x: round_half_up(x, 3)  # noqa: E731
    return {
        # A_1 rows 1 and 2 written in each other's place
        "swapped rows": (
            {("l0.h0.pattern", i, j): r(A[3 - i][j]) for i in (1, 2) for j in range(3)},
            "swapped-rows",
        ),
        # S_1 columns 0 and 1 written in each other's place
        "swapped columns": (
            {("l0.h0.scaled", i, j): r(S[i][1 - j]) for i in range(3) for j in (0, 1)},
            "swapped-columns",
        ),
        # A_1[2, 1] = 0.241 written 0.214
        "transposed digits": ({("l0.h0.pattern", 2, 1): "0.214"}, "digit-transposition"),
        # H_1[1, 1] = 0.0503535… written 0.504, its value ×10
        "decimal shift": ({("l0.h0.z", 1, 1): r(10 * Z[1][1])}, "decimal-shift"),
        # LN1[0, 1] = -1.213 written 1.213
        "sign flip": ({("l0.ln1", 0, 1): "1.213"}, "sign-flip"),
        # A_1 row 2 as the softmax of the scores before the division by √d_k
        "forgotten sqrt(d_k)": (
            {("l0.h0.pattern", 2, j): v for j, v in enumerate(_unscaled_row(2))},
            "convention",
        ),
        # LN1 row 1 with the variance divided by d − 1
        "n-1 variance": (
            {("l0.ln1", 1, j): v for j, v in enumerate(_n_minus_1_row(1))},
            "convention",
        ),
        # A_1[1, 1] written as its neighbour A_1[1, 0] = 0.496
        "copied neighbour": ({("l0.h0.pattern", 1, 1): r(A[1][0])}, "copied-neighbour"),
        # S_1 row 0 truncated instead of rounded: 0.0707… → 0.070, 0.8485… → 0.848
        "truncated row": (
            {("l0.h0.scaled", 0, j): _truncated(S[0][j]) for j in range(3)},
            "truncation",
        ),
        # S_1 written transposed
        "transposed table": (
            {("l0.h0.scaled", i, j): r(S[j][i]) for i in range(3) for j in range(3)},
            "transposed",
        ),
    }


MISTAKES = _mistakes()


@pytest.mark.parametrize("name", list(MISTAKES))
def test_grade_names_the_mistake(
    name: str, exercise: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    changed, cause = MISTAKES[name]
    ids = _blanks(exercise)
    answers = _right(exercise)
    for entry, value in changed.items():
        answers[ids[entry]] = value
    student = tmp_path / "student.toml"
    student.write_text(
        'student = "Ada"\n[answers]\n' + "".join(f'"{k}" = "{v}"\n' for k, v in answers.items())
    )
    assert cli.main(["grade", str(exercise / "key.toml"), str(student), "--format", "json"]) == 1
    graded = {a["id"]: a for a in json.loads(capsys.readouterr().out)["answers"]}
    off = {bid for bid, a in graded.items() if a["verdict"] in ("slip", "wrong")}
    mine = {ids[e] for e in changed if round_half_up(REF[e[0]][e[1]][e[2]], 3) != changed[e]}
    assert off == mine, (name, sorted(off), sorted(mine))
    for bid in mine:
        a = graded[bid]
        assert a["cause"] == cause, (name, a["explanation"])
        _says_it_once(a["explanation"])
    if name == "forgotten sqrt(d_k)":
        assert all(graded[b]["convention"].startswith("no-sqrt-dk") for b in mine)
    if name == "n-1 variance":
        assert all(graded[b]["convention"].startswith("unbiased-variance") for b in mine)


#: What each slip is called, once to the student and once in the article's words: an
#: explanation says one of each pair, never both.
_SAID_TWICE = [
    ("you swapped two digits", "two digits are swapped"),
    ("you flipped the sign", "the sign is flipped"),
    ("your decimal point is", "the decimal point is"),
    ("you truncated", "truncated, not rounded"),
    ("you wrote the value of the entry beside it", "it is the value of the entry beside it"),
    ("you swapped rows", "are swapped"),
    ("you swapped columns", "are swapped"),
    ("you wrote the table transposed", "the printed table is the transpose"),
]


def _says_it_once(explanation: str) -> None:
    for student, article in _SAID_TWICE:
        assert not (student in explanation and article in explanation), explanation
    # places for people count from 1: no [i, j] pairs in the prose
    import re

    assert not re.search(r"\[\d+, \d+\]", explanation), explanation
