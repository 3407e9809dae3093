"""One number of two significant digits restating the value printed just before it.

A notebook prints ``tensor(0.0900)`` and the next cell writes "a 9.0% chance": the
percentage is that value again, to fewer digits. A number with so few digits is linked
only to the one printing right before it (the next cell, or three lines of a post) and
only when it is that value rounded; otherwise it could match by chance and is left
unchecked. Expected values: softmax([1, 2, 3])[0] = 1 / (1 + e + e²) by mpmath at 50
digits.
"""

from __future__ import annotations

import json
from pathlib import Path

import mpmath
from mp_reference import rounds_to

from symtf.commands.draft import check_article

MPMATH_DIGITS = 50


def _notebook(tmp_path: Path, words: str, name: str) -> Path:
    cells = [
        {
            "cell_type": "code",
            "execution_count": 1,
            "metadata": {},
            "source": "import torch\np = torch.softmax(torch.tensor([1.0, 2.0, 3.0]), dim=0)\np[0]",
            "outputs": [
                {
                    "output_type": "execute_result",
                    "execution_count": 1,
                    "metadata": {},
                    "data": {"text/plain": "tensor(0.0900)"},
                }
            ],
        },
        {"cell_type": "markdown", "metadata": {}, "source": words},
    ]
    nb = {"cells": cells, "metadata": {}, "nbformat": 4, "nbformat_minor": 5}
    path = tmp_path / f"{name}.ipynb"
    path.write_text(json.dumps(nb, indent=1), encoding="utf-8")
    return path


def _verdicts(path: Path) -> list[tuple[str, str]]:
    return [(c.printed, c.verdict) for r in check_article(path).results for c in r.checks]


def test_a_percentage_in_the_next_cell_restates_the_printed_value(tmp_path: Path) -> None:
    with mpmath.workdps(MPMATH_DIGITS):
        p0 = 1 / (1 + mpmath.e + mpmath.e**2)  # 0.0900305…
    assert rounds_to(p0, "0.0900") and rounds_to(p0 * 100, "9.0")
    path = _notebook(tmp_path, "The first word has a 9.0% chance.\n", "right")
    assert sorted(_verdicts(path)) == [("0.0900", "rounded"), ("9.0%", "rounded")]


def test_a_two_digit_number_that_is_not_the_value_rounded_is_left_unchecked(
    tmp_path: Path,
) -> None:
    # 9.5% is not 0.0900 rounded: with two digits it may be any other quantity
    path = _notebook(tmp_path, "The first word has a 9.5% chance.\n", "other")
    assert _verdicts(path) == [("0.0900", "rounded")]
