"""Code translated onto ops, form by form: each case is a notebook or fenced post written here.

Every expected value comes from how the case is built (the numbers are chosen so the
arithmetic is done by hand in the comments) or from mpmath at 50 digits; none is read
from symtf's output. Nothing in a fixture is ever run: the notebooks are read with
``ast``, and their outputs are written here by hand.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import mpmath
import pytest
from mp_reference import rounds_to

from symtf.cli import main
from symtf.commands.draft import check_article
from symtf.draft import draft_file
from symtf.draft.translate import Block, Given, Translator

GOOD = ("exact", "rounded")
MPMATH_DIGITS = 50


def _notebook(tmp_path: Path, cells: list[tuple[str, str | None]], name: str = "nb") -> Path:
    """A notebook of code cells, each with the stream output written for it (or none)."""
    nb: dict[str, Any] = {
        "cells": [
            {
                "cell_type": "code",
                "execution_count": k,
                "metadata": {},
                "source": src,
                "outputs": (
                    [{"output_type": "stream", "name": "stdout", "text": out}]
                    if out is not None
                    else []
                ),
            }
            for k, (src, out) in enumerate(cells)
        ],
        "metadata": {},
        "nbformat": 4,
        "nbformat_minor": 5,
    }
    path = tmp_path / f"{name}.ipynb"
    path.write_text(json.dumps(nb, indent=1), encoding="utf-8")
    return path


def _post(tmp_path: Path, code: str, output: str | None = None, name: str = "post") -> Path:
    """A Markdown post: one fenced Python block, and the plain block it printed."""
    text = f"```python\n{code}```\n"
    if output is not None:
        text += f"\n```\n{output}```\n"
    path = tmp_path / f"{name}.md"
    path.write_text(text, encoding="utf-8")
    return path


def _verdicts(path: Path) -> list[tuple[str, str]]:
    """Every checked number's (printed, verdict), in the report's order."""
    return [(c.printed, c.verdict) for c in check_article(path).checks]


def _unchecked(path: Path) -> list[str]:
    """The reason each unchecked printing gives."""
    return [getattr(u, "note", "") for u in check_article(path).unchecked]


# ----------------------------------------------------------------------------- reading code


def test_a_function_of_an_earlier_cell_reads_its_literal_from_that_cell(tmp_path: Path) -> None:
    # project(x) = x @ w with w = [[0.5, -1], [2, 0.25]]: [1, 2] @ w = [0.5 + 4, -1 + 0.5]
    #                                                                = [4.5, -0.5]
    # The literal sits on line 6 of the first cell; the calling cell has one line.
    path = _notebook(
        tmp_path,
        [
            (
                "import numpy as np\n\n\n\ndef project(x):\n"
                "    w = np.array([[0.5, -1.0], [2.0, 0.25]])\n    return x @ w\n",
                None,
            ),
            ("print(project(np.array([[1.0, 2.0]])))\n", "[[ 4.5 -0.5]]\n"),
        ],
    )
    assert _verdicts(path) == [("4.5", "exact"), ("-0.5", "exact")]


def test_a_function_of_an_earlier_cell_never_reads_the_calling_cells_text(tmp_path: Path) -> None:
    # The calling cell is as long as the defining one, with other numbers at the literal's
    # place (line 6): reading the literal from it would give w = [[9.5, 8.0], ...].
    # [1, 2] @ [[0.5, -1], [2, 0.25]] = [4.5, -0.5] as above.
    path = _notebook(
        tmp_path,
        [
            (
                "import numpy as np\n\n\n\ndef project(x):\n"
                "    w = np.array([[0.5, -1.0], [2.0, 0.25]])\n    return x @ w\n",
                None,
            ),
            (
                "a = 1\nb = 2\nc = 3\nd = 4\ne = 5\nzzzzzzzzzzzzzzz = [[9.5, 8.0], [7.5, 6.25]]\n"
                "print(project(np.array([[1.0, 2.0]])))\n",
                "[[ 4.5 -0.5]]\n",
            ),
        ],
    )
    assert _verdicts(path) == [("4.5", "exact"), ("-0.5", "exact")]


def test_a_literal_too_large_to_check_is_refused_at_once_naming_cell_and_line(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    row = ", ".join(["0.5"] * 400)
    literal = "[" + ", ".join(f"[{row}]" for _ in range(400)) + "]"  # 400 × 400 = 160000
    path = _notebook(
        tmp_path,
        [
            ("import numpy as np\n", None),
            (f"x = 1\nW = np.array({literal})\nprint(W.sum())\n", "80000.0\n"),
        ],
        name="big",
    )
    assert main(["check", str(path)]) == 2
    err = capsys.readouterr().err
    assert "cell 1, line 2" in err and "160000 entries" in err and "20000" in err, err


def test_a_literal_of_the_largest_size_read_is_translated() -> None:
    # 100 × 200 = 20000 entries: the most one literal may hold, read as written (only the
    # translation runs here: a check of 20000 entries is not what this test is about).
    row = ", ".join(["0.5"] * 200)
    literal = "[" + ", ".join(f"[{row}]" for _ in range(100)) + "]"
    block = Block(0, f"import numpy as np\nW = np.array({literal})\n", 1, path="nb.ipynb")
    (given,) = [e for e in Translator(lambda name: None).events([block]) if isinstance(e, Given)]
    assert given.shape == (100, 200) and set(given.values) == {"0.5"}
