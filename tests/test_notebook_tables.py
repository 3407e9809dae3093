"""A notebook that prints a matrix through a formatting helper of its own, read as it stands.

The notebook is written for this test (its outputs typed by hand, one of them off).
Expected verdicts are computed with mpmath at 50 digits from the code's own inputs;
places are counted in the notebook's raw JSON text.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import mpmath
import pytest
from mp_reference import rounds_to

from symtf.commands.draft import check_article
from symtf.renderers.json import derivation_dict


@pytest.fixture(autouse=True)
def _mp_precision() -> Iterator[None]:
    """50 digits for this module's mpmath references, and the global precision restored
    after each test (other modules' tests run in the same process)."""
    with mpmath.workdps(50):
        yield


CODE = """import numpy as np

def attend(q, k, v):
    s = q @ k.T / np.sqrt(q.shape[-1])
    e = np.exp(s - s.max(axis=-1, keepdims=True))
    w = e / e.sum(axis=-1, keepdims=True)
    return w @ v, w

def table(m, names, precision=3):
    lines = ["row | " + " | ".join(names)]
    lines.append("----+" + "+".join("-----" for _ in names))
    for i, n in enumerate(names):
        cells = [f"{m[i, j]:.{precision}f}" for j in range(m.shape[1])]
        lines.append(n + " | " + " | ".join(cells))
    return "\\n".join(lines)

q = np.array([[1.0, 0.0], [0.0, 1.0]])
k = np.array([[1.0, 0.0], [0.0, 1.0]])
v = np.random.rand(2, 2)
out, w = attend(q, k, v)
print("Weights:")
print(table(w, ["a", "b"]))
for i in range(2):
    print(f"Checked row {i}")
    if i > 5:
        break
print(w.sum(axis=-1))
"""

OUTPUT = (
    "Weights:\n"
    "row | a | b\n"
    "----+-----+-----\n"
    "a | 0.670 | 0.330\n"
    "b | 0.330 | 0.669\n"
    "Checked row 0\n"
    "Checked row 1\n"
    "[1. 1.]\n"
)


def _notebook() -> str:
    cell = {
        "cell_type": "code",
        "execution_count": 1,
        "metadata": {},
        "source": CODE.splitlines(keepends=True),
        "outputs": [
            {"name": "stdout", "output_type": "stream", "text": OUTPUT.splitlines(keepends=True)}
        ],
    }
    nb = {"cells": [cell], "metadata": {}, "nbformat": 4, "nbformat_minor": 5}
    return json.dumps(nb, indent=1)


def test_a_matrix_printed_by_a_formatting_helper_is_checked(tmp_path: Path) -> None:
    """``print(table(w, names))`` prints w's entries (the helper formats ``m[i, j]`` and
    nothing else computed from it), as one matrix under its header and rule. w is the
    softmax of I/√2 by rows: σ(1/√2) = 0.66976… prints as 0.670, so 0.669 is a slip. The
    value v, drawn at random, does not stop w from being translated; the loop with a
    ``break`` is not translated, but its lines keep the prints after it paired."""
    big = 1 / (1 + mpmath.exp(-1 / mpmath.sqrt(2)))
    assert rounds_to(big, "0.670") and rounds_to(1 - big, "0.330")
    assert not rounds_to(big, "0.669") and abs(big - mpmath.mpf("0.669")) < mpmath.mpf("0.001")
    text = _notebook()
    path = tmp_path / "tables.ipynb"
    path.write_text(text, encoding="utf-8")
    d = derivation_dict(check_article(path))
    got = {
        (c["source_line"], c.get("source_column"), c["printed"]): c["verdict"] for c in d["checks"]
    }
    raw = text.split("\n")
    row_b = next(n for n, line in enumerate(raw, 1) if '"b | 0.330 | 0.669\\n"' in line)
    row_a = row_b - 1
    col = raw[row_b - 1].index("0.669") + 1
    assert got[(row_a, raw[row_a - 1].index("0.670") + 1, "0.670")] == "rounded"
    assert got[(row_b, col, "0.669")] == "slip"
    assert sorted(v for (line, _, _), v in got.items() if line in (row_a, row_b)) == [
        "rounded",
        "rounded",
        "rounded",
        "slip",
    ]
    sums = next(n for n, line in enumerate(raw, 1) if '"[1. 1.]\\n"' in line)
    assert {v for (line, _, _), v in got.items() if line == sums} == {"exact"}
