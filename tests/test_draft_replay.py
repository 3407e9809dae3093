"""Steps an article computes from its own printed (rounded) numbers, found by the draft.

Two faces of one gap: a prose step computed from an earlier printed result (the draft
replays the candidates on the printed values), and a notebook step that reads the print
of an untranslated variable (a rounded given: a point of its rounding intervals must give
every printed entry). The articles and numbers here are made up for these tests; every
expected value is computed with mpmath at 50 digits, or by hand, from the inputs as
printed.
"""

from __future__ import annotations

import json
from fractions import Fraction
from pathlib import Path

import mpmath
from mp_reference import rounds_to

from symtf.commands.draft import check_article

MPMATH_DIGITS = 50


def _checks(path: Path) -> list[tuple[int | None, str, str, dict]]:
    report = check_article(path)
    return [
        (r.claim.source_line, c.printed, c.verdict, dict(c.extra))
        for r in report.results
        for c in r.checks
    ]


ARTICLE = r"""# Two tokens, worked by hand

The scores are

$$S = \begin{bmatrix} 0 & 1 \\ 2 & 0 \end{bmatrix}$$

The values are

$$V = \begin{bmatrix} 10 & 20 \\ 30 & 40 \end{bmatrix}$$

Softmax of each row gives the weights

$$A = \text{softmax}(S) = \begin{bmatrix} 0.27 & 0.73 \\ 0.88 & 0.12 \end{bmatrix}$$

The output is

$$O = A V = \begin{bmatrix} 24.60 & 34.60 \\ 12.40 & 22.40 \end{bmatrix}$$
"""


def test_a_product_of_the_printed_weights_is_found_and_still_flagged(tmp_path: Path) -> None:
    """``O = A V`` from the weights as printed (2 decimals): every entry is 1.6 to 2.1
    units off the exact product, so no candidate matched and O went unchecked. The replay
    on the printed A reproduces it: O is now checked, and each entry keeps its exact
    verdict (wrong) with the cause the check's own replay gives, propagated-rounding;
    being computed from printed values does not excuse it."""
    path = tmp_path / "two_tokens.md"
    path.write_text(ARTICLE)
    s = [[0, 1], [2, 0]]
    a = []
    for row in s:
        e = [mpmath.e**x for x in row]
        a.append([x / mpmath.fsum(e) for x in e])
    printed_a = [["0.27", "0.73"], ["0.88", "0.12"]]
    assert all(rounds_to(a[i][j], printed_a[i][j]) for i in range(2) for j in range(2))
    v = [[10, 20], [30, 40]]
    exact = [[mpmath.fsum(a[i][k] * v[k][j] for k in range(2)) for j in range(2)] for i in range(2)]
    replay = [
        [sum(Fraction(printed_a[i][k]) * v[k][j] for k in range(2)) for j in range(2)]
        for i in range(2)
    ]
    printed_o = ["24.60", "34.60", "12.40", "22.40"]
    assert [x for row in replay for x in row] == [Fraction(p) for p in printed_o]
    for x, p in zip((x for row in exact for x in row), printed_o, strict=True):
        assert abs(x - mpmath.mpf(p)) >= mpmath.mpf("0.01")  # wrong against the exact value
    checks = _checks(path)
    o = [(p, verdict, extra.get("cause")) for line, p, verdict, extra in checks if line == 17]
    assert o == [(p, "wrong", "propagated-rounding") for p in printed_o]
    assert {(p, verdict) for line, p, verdict, _ in checks if line == 13} == {
        (p, "rounded") for row in printed_a for p in row
    }


#: The "true" layer output behind the printed x (each rounds to its print), chosen here.
TRUE_X = ["0.41264", "0.40537", "0.43046", "0.39954"]
PRINTED_X = ["0.4126", "0.4054", "0.4305", "0.3995"]


def _notebook(path: Path, y: str, z: str) -> Path:
    def cell(n: int, source: list[str], out: str) -> dict:
        return {
            "cell_type": "code",
            "execution_count": n,
            "metadata": {},
            "outputs": [{"name": "stdout", "output_type": "stream", "text": [out + "\n"]}],
            "source": source,
        }

    cells = [
        cell(
            1,
            ["import torch\n", "torch.manual_seed(7)\n", "x = torch.rand(1, 4)\n", "print(x)"],
            f"tensor([[{', '.join(PRINTED_X)}]])",
        ),
        cell(
            2,
            [
                "y = (x - x.mean(dim=-1, keepdim=True)) / x.std(dim=-1, keepdim=True)\n",
                "print(y)",
            ],
            f"tensor([[{y}]])",
        ),
        cell(3, ["z = y * 3\n", "print(z)"], f"tensor([[{z}]])"),
    ]
    nb = {"cells": cells, "metadata": {}, "nbformat": 4, "nbformat_minor": 5}
    path.write_text(json.dumps(nb))
    return path


def _normalised(x: list[mpmath.mpf]) -> list[mpmath.mpf]:
    mean = mpmath.fsum(x) / len(x)
    std = mpmath.sqrt(mpmath.fsum((v - mean) ** 2 for v in x) / (len(x) - 1))  # unbiased
    return [(v - mean) / std for v in x]


Y = ["0.0475", "-0.4942", "1.3752", "-0.9286"]
Z = ["0.1425", "-1.4825", "4.1257", "-2.7857"]


def test_steps_of_a_rounded_print_are_accepted_where_its_rounding_reaches_them(
    tmp_path: Path,
) -> None:
    """``x`` is drawn at random and printed to 4 decimals; ``y`` normalises it and ``z``
    triples ``y``. From x as printed, y and z are several units off their prints (the
    draft left both unchecked); a point of x's rounding intervals (TRUE_X) gives every
    printed entry of both, so both are checked: accepted with that reason, and the later
    step, accepted only because its inputs are rounded, is not flagged either."""
    true = [mpmath.mpf(v) for v in TRUE_X]
    assert all(rounds_to(t, p) for t, p in zip(true, PRINTED_X, strict=True))
    y_true = _normalised(true)
    assert all(rounds_to(x, p) for x, p in zip(y_true, Y, strict=True))
    assert all(rounds_to(3 * x, p) for x, p in zip(y_true, Z, strict=True))
    y_printed = _normalised([mpmath.mpf(v) for v in PRINTED_X])
    off_y = [p for x, p in zip(y_printed, Y, strict=True) if not rounds_to(x, p)]
    off_z = [p for x, p in zip(y_printed, Z, strict=True) if not rounds_to(3 * x, p)]
    assert abs(y_printed[0] - mpmath.mpf(Y[0])) > mpmath.mpf("0.002")  # 29 units off
    assert len(off_y) == 4 and len(off_z) == 4
    path = _notebook(tmp_path / "norm.ipynb", ", ".join(Y), ", ".join(Z))
    checks = _checks(path)
    got = [(p, verdict, extra.get("accepted_by")) for _, p, verdict, extra in checks]
    assert got == [(p, "rounded", "rounded_inputs") for p in Y + Z]


def test_a_print_its_rounding_cannot_reach_is_not_accepted(tmp_path: Path) -> None:
    """The same notebook with y's first entry printed 0.0495: a normalised row sums to 0,
    and these four prints sum to 0.0019, more than the 4 × 0.00005 their rounding allows,
    so no x gives them. That y is not accepted (it stays unchecked); z, reached, is."""
    wrong = ["0.0495", *Y[1:]]
    assert abs(sum(Fraction(p) for p in wrong)) > 4 * Fraction(5, 100000)
    path = _notebook(tmp_path / "norm_wrong.ipynb", ", ".join(wrong), ", ".join(Z))
    report = check_article(path)
    verdicts = {c.printed: c.verdict for r in report.results for c in r.checks}
    assert "0.0495" not in verdicts
    assert all(verdicts[p] == "rounded" for p in Z)
    assert [(u.label, u.size) for u in report.unchecked] == [("y", 4)]
