"""A greedy decoding loop in a notebook: argmax, a token fed back, a stop on ``<EOS>``.

The loop picks ``next_id = int(np.argmax(probs))``, masks tokens by index, lowers the
last token's logit, appends the id, breaks on ``<EOS>`` and feeds the token's embedding
back; then prints the words generated and one row of probabilities per step, each row
built with ``" | ".join(f"{v:>6.3f}" …)``. The draft unrolls the loop as it runs: each
argmax is decided from certified values (never guessed), and the loop ends where the
code's ``break`` ends it. The notebook is made up for these tests; its output is what
Python printed for it, and the expected values are computed below with mpmath at 50
digits by the same greedy rule, from the inputs as written.
"""

from __future__ import annotations

import json
from pathlib import Path

import mpmath
from mp_reference import rounds_to

from symtf.commands.draft import check_article

MPMATH_DIGITS = 50

SOURCE = """import numpy as np

vocab = ["<BOS>", "<EOS>", "up", "down"]
tok2id = {w: i for i, w in enumerate(vocab)}
id2tok = {i: w for w, i in tok2id.items()}
E = np.array([[1.0, 0.0], [0.0, 1.0], [0.5, 0.5], [1.0, -1.0]])
W = np.array([[0.3, 0.2, 0.9, 0.1], [0.4, 1.5, -0.3, 0.8]])

def softmax(x):
    e = np.exp(x - np.max(x))
    return e / np.sum(e)

generated = []
history = []
state = E[tok2id["<BOS>"]]
for t in range(6):
    logits = state @ W
    logits[tok2id["<BOS>"]] = -1e9
    if t < 2:
        logits[tok2id["<EOS>"]] = -1e9
    if generated:
        logits[generated[-1]] -= 1.0
    probs = softmax(logits)
    history.append(probs)
    next_id = int(np.argmax(probs))
    generated.append(next_id)
    if next_id == tok2id["<EOS>"]:
        break
    state = 0.5 * E[next_id] + 0.5 * state

tokens = [id2tok[i] for i in generated]
print("Generated:", " ".join(tokens))
header = "step | " + " | ".join([f"{w:>6}" for w in vocab])
print(header)
print("-" * len(header))
for t, p in enumerate(history, start=1):
    print(f"{t:>4} | " + " | ".join([f"{v:>6.3f}" for v in p]))
"""
HEADER = ["step |  <BOS> |  <EOS> |     up |   down", "-" * 40]
ROWS = [
    ["0.000", "0.000", "0.690", "0.310"],
    ["0.000", "0.000", "0.337", "0.663"],
    ["0.000", "0.198", "0.716", "0.087"],
    ["0.000", "0.412", "0.219", "0.368"],
]
GENERATED = "up down up <EOS>"

E = [["1.0", "0.0"], ["0.0", "1.0"], ["0.5", "0.5"], ["1.0", "-1.0"]]
W = [["0.3", "0.2", "0.9", "0.1"], ["0.4", "1.5", "-0.3", "0.8"]]


def _notebook(path: Path, source: str, generated: str, rows: list[list[str]]) -> Path:
    lines = [f"Generated: {generated}", *HEADER]
    lines += [f"{t:>4} | " + " | ".join(f"{v:>6}" for v in row) for t, row in enumerate(rows, 1)]
    cell = {
        "cell_type": "code",
        "execution_count": 1,
        "metadata": {},
        "outputs": [
            {
                "name": "stdout",
                "output_type": "stream",
                "text": [line + "\n" for line in lines],
            }
        ],
        "source": source.splitlines(keepends=True),
    }
    nb = {"cells": [cell], "metadata": {}, "nbformat": 4, "nbformat_minor": 5}
    path.write_text(json.dumps(nb, indent=1))
    return path


def _reference() -> tuple[list[str], list[list[mpmath.mpf]]]:
    """The greedy decoding at 50 digits: the tokens picked and each step's probabilities."""
    mp = mpmath.mp.clone()
    mp.dps = MPMATH_DIGITS
    emb = [[mp.mpf(v) for v in row] for row in E]
    w = [[mp.mpf(v) for v in row] for row in W]
    vocab = ["<BOS>", "<EOS>", "up", "down"]
    state = emb[0]
    picked: list[int] = []
    history = []
    for t in range(6):
        logits = [state[0] * w[0][j] + state[1] * w[1][j] for j in range(4)]
        logits[0] = mp.mpf(-(10**9))
        if t < 2:
            logits[1] = mp.mpf(-(10**9))
        if picked:
            logits[picked[-1]] -= 1
        top = max(logits)
        e = [mp.exp(v - top) for v in logits]
        probs = [v / mp.fsum(e) for v in e]
        history.append(probs)
        ranked = sorted(probs, reverse=True)
        assert ranked[0] - ranked[1] > mp.mpf("0.01")  # no near tie: the pick is clear
        k = probs.index(ranked[0])
        picked.append(k)
        if k == 1:
            break
        state = [(emb[k][i] + state[i]) / 2 for i in range(2)]
    return [vocab[k] for k in picked], history


def _verdicts(path: Path) -> list[tuple[int | None, str, str]]:
    report = check_article(path)
    return [(r.claim.source_line, c.printed, c.verdict) for r in report.results for c in r.checks]


def test_the_reference_decodes_what_the_notebook_printed() -> None:
    """The fixture is consistent: four steps (the fourth picks <EOS>), each row the correct
    rounding of its 50-digit probabilities."""
    words, history = _reference()
    assert " ".join(words) == GENERATED
    assert len(history) == len(ROWS)
    for probs, row in zip(history, ROWS, strict=True):
        assert all(rounds_to(p, s) for p, s in zip(probs, row, strict=True))


def test_every_step_of_the_loop_is_checked(tmp_path: Path) -> None:
    """Each printed probability of each of the four steps gets its verdict, on its row's
    line: the loop ran as the code runs it (a break after the fourth), no step more."""
    path = _notebook(tmp_path / "greedy.ipynb", SOURCE, GENERATED, ROWS)
    got = _verdicts(path)
    assert [(p, v) for _, p, v in got] == [(p, "rounded") for row in ROWS for p in row]
    lines = sorted({line for line, _, _ in got if line is not None})
    assert len(lines) == len(ROWS)


def test_a_slip_in_a_later_step_is_flagged(tmp_path: Path) -> None:
    """Step 2's last probability printed 0.673 (the decoding gives 0.6630…): off, and the
    other entries still check out."""
    _, history = _reference()
    assert abs(history[1][3] - mpmath.mpf("0.673")) > mpmath.mpf("0.009")
    rows = [list(r) for r in ROWS]
    rows[1][3] = "0.673"
    got = _verdicts(_notebook(tmp_path / "slip.ipynb", SOURCE, GENERATED, rows))
    off = [(p, v) for _, p, v in got if v not in ("rounded", "exact")]
    assert off == [("0.673", "wrong")] or off == [("0.673", "slip")]
    assert len(got) == 16


TIE_ROWS = [
    ["0.000", "0.000", "0.500", "0.500"],
    ["0.000", "0.000", "0.218", "0.782"],
    ["0.000", "0.182", "0.658", "0.160"],
    ["0.000", "0.325", "0.173", "0.503"],
    ["0.000", "0.163", "0.686", "0.151"],
    ["0.000", "0.317", "0.181", "0.502"],
]


def test_a_tie_is_never_decided(tmp_path: Path) -> None:
    """With up and down tied at the first step, which one numpy's argmax takes is not
    decided from the values (the first of equals, by a rule the draft does not rely on):
    the loop is not unrolled, nothing after the tie is checked, and nothing is flagged."""
    tied = SOURCE.replace("[[0.3, 0.2, 0.9, 0.1]", "[[0.3, 0.2, 0.9, 0.9]")
    assert tied != SOURCE
    path = _notebook(tmp_path / "tie.ipynb", tied, "up down up down up down", TIE_ROWS)
    got = _verdicts(path)
    assert all(v in ("rounded", "exact") for _, _, v in got)
    assert not any(p in ("0.218", "0.782", "0.658") for _, p, _ in got)


def test_empty_lists_a_function_returns_are_no_numbers(tmp_path: Path) -> None:
    """``a, b = [], []`` returned from a function and unpacked: lists still empty, which
    an ``if`` reads as false, are not numbers to be shown (the draft once read them so
    and stopped with an internal error)."""
    source = (
        "import numpy as np\n\n"
        "def start(n):\n"
        "    seen, kept = [], []\n"
        "    return seen, kept\n\n"
        "seen, kept = start(2)\n"
        "x = np.array([0.5, 1.5])\n"
        "print(x * 2)\n"
    )
    cell = {
        "cell_type": "code",
        "execution_count": 1,
        "metadata": {},
        "outputs": [{"name": "stdout", "output_type": "stream", "text": ["[1. 3.]\n"]}],
        "source": source.splitlines(keepends=True),
    }
    path = tmp_path / "empty.ipynb"
    path.write_text(
        json.dumps({"cells": [cell], "metadata": {}, "nbformat": 4, "nbformat_minor": 5})
    )
    got = _verdicts(path)
    assert [(p, v) for _, p, v in got] == [("1.", "exact"), ("3.", "exact")]


def test_ids_appended_then_made_an_array(tmp_path: Path) -> None:
    """Whole numbers appended to a list in a loop, then ``np.array(ids)``: a tensor of
    those ids, which picks rows and adds as any other (by hand: the rows 0, 2 and 4 of
    E doubled, and ids + 1 = [1, 3, 5])."""
    source = (
        "import numpy as np\n"
        "ids = []\n"
        "for k in range(3):\n"
        "    ids.append(k * 2)\n"
        "x = np.array(ids)\n"
        "E = np.array([[1.0, 2.0], [3.0, 4.0], [5.0, 6.0], [7.0, 8.0], [9.0, 1.5]])\n"
        "print(E[x] * 2)\n"
        "print(x + 1)\n"
    )
    out = "[[ 2.  4.]\n [10. 12.]\n [18.  3.]]\n[1 3 5]\n"
    cell = {
        "cell_type": "code",
        "execution_count": 1,
        "metadata": {},
        "outputs": [{"name": "stdout", "output_type": "stream", "text": [out]}],
        "source": source.splitlines(keepends=True),
    }
    path = tmp_path / "ids.ipynb"
    path.write_text(
        json.dumps({"cells": [cell], "metadata": {}, "nbformat": 4, "nbformat_minor": 5})
    )
    got = [(p, v) for _, p, v in _verdicts(path)]
    printed = ["2.", "4.", "10.", "12.", "18.", "3.", "1", "3", "5"]
    assert got == [(p, "exact") for p in printed]
