"""A computed tensor overwritten by a literal written for it: the literal is judged as a
printing of the value it replaces, and what is computed from it through the chain.

Notebooks often compute a value, print it, and then write it again by hand "for
readability", rounded: ``probs = softmax(scores)`` then ``probs = [[0.1, 0.2, 0.7], …]``.
The literal is not a new input: each entry is a printing of the computed value (a slip
where it is not its correct rounding), and the numbers computed from it are judged as the
quantity the code names, which the hand rounding moved: off, with the rounding as cause.
A literal that is not within a unit of the value it replaces is a new input, as before.

The notebooks are written here; their outputs are written by hand as PyTorch prints them.
Every expected value comes from mpmath at 50 digits, never from symtf.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import mpmath
from mp_reference import rounds_to
from test_draft_translate import _notebook

from symtf.commands.draft import check_article

MPMATH_DIGITS = 50

SCORES = [[1, 2, 3], [2, 0, 1]]
V = [[1, 0], [0, 1], [1, 1]]

COMPUTE = (
    "import torch\n"
    "scores = torch.tensor([[1.0, 2.0, 3.0], [2.0, 0.0, 1.0]])\n"
    "probs = torch.softmax(scores, dim=-1)\n"
    "print(probs)\n",
    "tensor([[0.0900, 0.2447, 0.6652],\n        [0.6652, 0.0900, 0.2447]])\n",
)

#: Row 0 rounded right; row 1 writes 0.6 for 0.6652 and 0.3 for 0.2447 (slips).
ROUGH = [["0.1", "0.2", "0.7"], ["0.6", "0.1", "0.3"]]

APPROXIMATE = (
    "# rounded by hand to keep the sums simple\n"
    "probs = [\n"
    "    [0.1, 0.2, 0.7],\n"
    "    [0.6, 0.1, 0.3],\n"
    "]\n"
    "probs = torch.tensor(probs)\n"
    "v = torch.tensor([[1.0, 0.0], [0.0, 1.0], [1.0, 1.0]])\n"
    "out = probs @ v\n"
    "print(out)\n",
    "tensor([[0.8000, 0.9000],\n        [0.9000, 0.4000]])\n",
)

#: A literal nowhere near the softmax: a new input, and ``out`` is right for it.
UNRELATED = (
    "probs = [\n"
    "    [0.5, 0.5, 0.0],\n"
    "    [0.0, 0.5, 0.5],\n"
    "]\n"
    "probs = torch.tensor(probs)\n"
    "v = torch.tensor([[1.0, 0.0], [0.0, 1.0], [1.0, 1.0]])\n"
    "out = probs @ v\n"
    "print(out)\n",
    "tensor([[0.5000, 0.5000],\n        [0.5000, 1.0000]])\n",
)


def _softmax() -> list[list[Any]]:
    with mpmath.workdps(MPMATH_DIGITS):
        out = []
        for row in SCORES:
            e = [mpmath.e ** mpmath.mpf(s) for s in row]
            out.append([x / mpmath.fsum(e) for x in e])
        return out


def _times_v(p: list[list[Any]]) -> list[list[Any]]:
    with mpmath.workdps(MPMATH_DIGITS):
        return [
            [mpmath.fsum(p[i][k] * V[k][j] for k in range(3)) for j in range(2)] for i in range(2)
        ]


def _checks(path: Path) -> dict[tuple[int | None, str], list[Any]]:
    report = check_article(path)
    out: dict[tuple[int | None, str], list[Any]] = {}
    for r in report.results:
        for c in r.checks:
            line = c.extra.get("source_line", r.claim.source_line)
            out.setdefault((line, c.printed), []).append(c)
    return out


def _at(checks: dict[tuple[int | None, str], list[Any]], line: int, printed: str) -> list[str]:
    return [c.verdict for c in checks.get((line, printed), [])]


def test_a_literal_written_for_a_computed_value_is_judged_as_its_printing(
    tmp_path: Path,
) -> None:
    soft = _softmax()
    for i, row in enumerate(ROUGH):
        for j, text in enumerate(row):
            assert abs(mpmath.mpf(text) - soft[i][j]) < mpmath.mpf("0.1")  # within a unit
    assert rounds_to(soft[1][0], "0.7") and not rounds_to(soft[1][0], "0.6")
    assert rounds_to(soft[1][2], "0.2") and not rounds_to(soft[1][2], "0.3")
    path = _notebook(tmp_path, [COMPUTE, APPROXIMATE])
    report = check_article(path)
    literal = [
        (c.printed, c.verdict)
        for r in report.results
        for c in r.checks
        if c.printed in {t for row in ROUGH for t in row} and "0000" not in c.printed
    ]
    # every entry of the literal is judged; the two that are not correct roundings are slips
    row0 = [("0.1", "rounded"), ("0.2", "rounded"), ("0.7", "rounded")]
    row1 = [("0.6", "slip"), ("0.1", "rounded"), ("0.3", "slip")]
    assert sorted(literal) == sorted([*row0, *row1]), literal


def test_what_is_computed_from_the_literal_is_judged_through_the_chain(tmp_path: Path) -> None:
    soft = _softmax()
    true_out = _times_v(soft)
    with mpmath.workdps(MPMATH_DIGITS):
        rough_out = _times_v([[mpmath.mpf(t) for t in row] for row in ROUGH])
    printed = [["0.8000", "0.9000"], ["0.9000", "0.4000"]]
    for i in range(2):
        for j in range(2):
            assert rounds_to(rough_out[i][j], printed[i][j])  # right for the hand weights
            assert not rounds_to(true_out[i][j], printed[i][j])  # off for the softmax
    path = _notebook(tmp_path, [COMPUTE, APPROXIMATE])
    report = check_article(path)
    out = [c for r in report.results for c in r.checks if c.printed.endswith("000")]
    assert len(out) == 4, [(c.printed, c.verdict) for c in out]
    assert all(c.verdict in ("slip", "wrong") for c in out), [(c.printed, c.verdict) for c in out]
    assert all(c.extra.get("cause") not in (None, "unexplained") for c in out), [
        c.explanation for c in out
    ]


def test_a_literal_far_from_the_value_it_replaces_is_a_new_input(tmp_path: Path) -> None:
    soft = _softmax()
    assert abs(mpmath.mpf("0.5") - soft[0][0]) > mpmath.mpf("0.1")
    path = _notebook(tmp_path, [COMPUTE, UNRELATED])
    report = check_article(path)
    verdicts = [(c.printed, c.verdict) for r in report.results for c in r.checks]
    assert all(v in ("exact", "rounded") for _, v in verdicts), verdicts
    assert ("1.0000", "exact") in verdicts or ("1.0000", "rounded") in verdicts
