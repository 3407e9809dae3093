"""One print of several labelled arrays and their shapes, written as f-strings.

``print(f'a:\\n{a}\\n', f'b:\\n{b}\\n', f'With shapes: {a.shape}, {b.shape}')`` prints each
array under its label and the shapes on a last line. The literal ``", "`` between the two
shapes is also the comma inside the first shape ``(2, 2)``: blanking the print's own words
there used to run the shapes together, so the print's values could not be told apart and
none was checked. Expected values are worked by hand below.
"""

from __future__ import annotations

import json
from pathlib import Path

from tests.article_checks import json_checks

# b = a @ a with a = [[1.5, 2], [0.5, -1]]:
#   [1.5·1.5 + 2·0.5, 1.5·2 + 2·(−1)]      = [3.25, 1]
#   [0.5·1.5 + (−1)·0.5, 0.5·2 + (−1)(−1)] = [0.25, 2]; the output prints 3.52 for 3.25
SOURCE = (
    "import numpy as np\n"
    "a = np.array([[1.5, 2.0], [0.5, -1.0]])\n"
    "b = a @ a\n"
    "print(f'a:\\n{a}\\n', f'b:\\n{b}\\n', f'With shapes: {a.shape}, {b.shape}')\n"
)
OUTPUT = (
    "a:\n[[ 1.5  2. ]\n [ 0.5 -1. ]]\n b:\n[[3.52 1.  ]\n [0.25 2.  ]]\n"
    " With shapes: (2, 2), (2, 2)\n"
)


def _notebook() -> str:
    cell = {
        "cell_type": "code",
        "id": "c",
        "metadata": {},
        "execution_count": 1,
        "source": SOURCE.splitlines(keepends=True),
        "outputs": [{"output_type": "stream", "name": "stdout", "text": [OUTPUT]}],
    }
    return json.dumps({"nbformat": 4, "nbformat_minor": 5, "metadata": {}, "cells": [cell]})


def test_each_labelled_array_of_one_print_is_checked(tmp_path: Path) -> None:
    checks = json_checks(tmp_path, _notebook(), name="shapes.ipynb")
    got = {c["printed"]: c["verdict"] for c in checks}
    assert got["0.25"] == "exact"
    assert got["2."] == "exact"
    assert got["3.52"] in ("slip", "wrong")


def test_the_stated_array_prints_as_written(tmp_path: Path) -> None:
    checks = json_checks(tmp_path, _notebook(), name="shapes.ipynb")
    got = {c["printed"]: c["verdict"] for c in checks}
    assert got["1.5"] == got["-1."] == "exact"
