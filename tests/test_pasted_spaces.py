"""Code pasted from a web page keeps its no-break spaces (U+00A0) and other Unicode spaces.

Python refuses them, so such a fence used to be read as prose: its literal rows were claims
no step explains and nothing it printed was checked. A reader of the post sees spaces; so
does symtf's reader of the code, character for character, so that every number keeps its
column. Expected values are worked by hand below.
"""

from __future__ import annotations

import json
from pathlib import Path

from symtf.draft.read.blocks import as_code
from symtf.draft.read.source import Frame, LineIndex, Text
from tests.article_checks import json_checks, position, verdicts_at

NBSP, THIN = "\u00a0", "\u2009"

# inputs @ inputs.T, by hand:
#   0.43² + 0.15² + 0.89²            = 0.1849 + 0.0225 + 0.7921 = 0.9995
#   0.43·0.55 + 0.15·0.87 + 0.89·0.66 = 0.2365 + 0.1305 + 0.5874 = 0.9544
#   0.55² + 0.87² + 0.66²            = 0.3025 + 0.7569 + 0.4356 = 1.4950, printed 1.4905
CODE = (
    "inputs = torch.tensor(\n"
    f"{NBSP * 4}[\n"
    f"{NBSP * 8}[0.43, 0.15, 0.89],{NBSP} # first\n"
    f"{NBSP * 8}[0.55, 0.87, 0.66],{THIN} # second\n"
    f"{NBSP * 4}]\n"
    ")\n"
    f"attn_scores{NBSP}={NBSP}inputs @ inputs.T\n"
    "print(attn_scores)\n"
)
OUTPUT = "tensor([[0.9995, 0.9544],\n        [0.9544, 1.4905]])\n"
POST = f"# Scores\n\n```python\n{CODE}```\n\n```\n{OUTPUT}```\n"


def test_a_fence_with_pasted_spaces_is_code_and_its_print_is_checked(tmp_path: Path) -> None:
    checks = json_checks(tmp_path, POST)
    assert verdicts_at(checks, POST, "0.9995") == {"exact"}
    assert verdicts_at(checks, POST, "0.9544", 0) == {"exact"}
    assert verdicts_at(checks, POST, "0.9544", 1) == {"exact"}
    # 1.4905 is not 1.4950 to four decimals: the stated step is kept and the entry is off
    assert verdicts_at(checks, POST, "1.4905") <= {"slip", "wrong"}
    assert verdicts_at(checks, POST, "1.4905")
    # the literal's rows are the code's inputs, not claims
    assert not any(c["printed"] in ("0.43", "0.55") for c in checks)


def test_a_notebook_cell_with_pasted_spaces_is_code(tmp_path: Path) -> None:
    nb = {
        "nbformat": 4,
        "nbformat_minor": 5,
        "metadata": {},
        "cells": [
            {
                "cell_type": "code",
                "id": "a",
                "metadata": {},
                "execution_count": 1,
                "source": CODE.splitlines(keepends=True),
                "outputs": [{"output_type": "stream", "name": "stdout", "text": [OUTPUT]}],
            }
        ],
    }
    text = json.dumps(nb, indent=1)
    checks = json_checks(tmp_path, text, name="scores.ipynb")
    by_printed = {c["printed"]: c["verdict"] for c in checks}
    assert by_printed["0.9995"] == "exact"
    assert by_printed["1.4905"] in ("slip", "wrong")


def test_spaces_become_ascii_one_for_one() -> None:
    raw = f"a{NBSP}=\u3000[1,{THIN}2]"
    text = Text.of(raw, Frame(LineIndex(raw)))
    got = as_code(text)
    assert got.text == "a = [1, 2]"
    assert len(got) == len(text)
    assert got.place(7, 8) == text.place(7, 8)  # "2" keeps its place
    plain = Text.of("a = 1", Frame(LineIndex("a = 1")))
    assert as_code(plain) is plain


def test_the_off_entry_is_placed_at_its_own_column(tmp_path: Path) -> None:
    checks = json_checks(tmp_path, POST)
    line, column = position(POST, "1.4905")
    (off,) = [c for c in checks if c["printed"] == "1.4905"]
    assert (off["source_line"], off["source_column"]) == (line, column)
