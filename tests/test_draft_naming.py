"""A drafted derivation names its steps after the article's labels and headings, never
after a line number (``input_7``, ``weights_13``), and its notes name no architecture it
does not have.

The article below is written for this test: a row of scores under the heading "Raw
scores", its softmax (computed by hand: e^1, e^2, e^3 over their sum, to 4 decimals)
under "Step 2: Apply the softmax".
"""

from __future__ import annotations

import json
import math
import re
import tomllib
from pathlib import Path

import pytest

from symtf import cli

ARTICLE = """# A softmax by hand

## Raw scores

The scores of one query against three keys:

[1.0, 2.0, 3.0]

```python
# a comment that looks like a heading, inside code
```

## Step 2: Apply the softmax

Each score exponentiated and divided by the sum:

[{weights}]
"""


def _softmax_row() -> str:
    e = [math.exp(x) for x in (1.0, 2.0, 3.0)]
    return ", ".join(f"{x / sum(e):.4f}" for x in e)


@pytest.fixture(scope="module")
def drafted(tmp_path_factory: pytest.TempPathFactory) -> dict:
    folder = tmp_path_factory.mktemp("naming")
    src = folder / "softmax.md"
    src.write_text(ARTICLE.format(weights=_softmax_row()))
    out = folder / "softmax.toml"
    assert cli.main(["draft", str(src), "-o", str(out), "-q"]) == 0
    return {"text": out.read_text(), "data": tomllib.loads(out.read_text()), "path": out}


def test_steps_are_named_after_the_headings_they_sit_under(drafted: dict) -> None:
    data = drafted["data"]
    assert set(data["tensors"]) == {"raw_scores"}
    assert data["steps"] == {"apply_softmax": "softmax(raw_scores, axis=-1)"}
    claim = next(c for c in data["claims"] if c["step"] == "apply_softmax")
    assert claim["printed"] == _softmax_row().replace(",", "")


def test_no_name_is_a_line_number(drafted: dict) -> None:
    data = drafted["data"]
    names = [*data.get("tensors", {}), *data.get("steps", {})]
    assert names and not any(re.search(r"_\d+$", n) for n in names), names


def test_the_notes_of_a_derivation_with_no_model_name_no_architecture(
    drafted: dict, tmp_path: Path
) -> None:
    notes = tmp_path / "notes.tex"
    page = tmp_path / "page.html"
    assert cli.main(["latex", str(drafted["path"]), "-o", str(notes)]) == 0
    assert cli.main(["html", str(drafted["path"]), "-o", str(page)]) == 0
    for text in (notes.read_text(), page.read_text()):
        assert "Architecture" not in text and "The model" not in text
    # the step's section is its heading, read as words
    assert r"\section{Apply softmax}" in notes.read_text()


@pytest.mark.parametrize(
    ("heading", "name"),
    [
        ("Step 5: Apply Causal Mask", "apply_causal_mask"),
        ("Head Separation Visualization", "head_separation_visualization"),
        ("3.2 Scaled scores", "scaled_scores"),
        ("**Attention** weights", "attention_weights"),
        ("Step 1: Linear Transformations (Q, K, V)", "linear_transformations_q_k"),
        ("---", None),
    ],
)
def test_a_heading_s_name(heading: str, name: str | None) -> None:
    from symtf.draft.names import heading_name

    assert heading_name(heading) == name


def test_a_notebook_s_headings_are_its_markdown_cells_in_file_lines() -> None:
    from symtf.draft.article import read_article

    nb = {
        "cells": [
            {"cell_type": "markdown", "source": ["# Title\n", "\n", "## Scores\n"]},
            {"cell_type": "code", "source": ["# not a heading\n", "x = 1\n"], "outputs": []},
            {"cell_type": "markdown", "source": "### Weights"},
        ],
        "metadata": {},
        "nbformat": 4,
        "nbformat_minor": 5,
    }
    text = json.dumps(nb, indent=1)
    article = read_article(text, "ipynb", path="nb.ipynb")
    lines = text.splitlines()
    got = [(lines[at - 1].strip(), words) for at, words in article.headings]
    assert [w for _, w in got] == ["Title", "Scores", "Weights"]
    assert all(words in line for line, words in got)  # each at its own line of the file
