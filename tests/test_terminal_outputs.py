"""What a Python fence printed, pasted in a terminal's fence (```` ```shell ````, ```` ```sh ````).

Posts often paste a program's output under its code in a fence marked as a terminal's. Right
after a Python fence, such a fence is what the code printed (as a plain fence is), unless its
first line is a command (``$ python demo.py``, ``pip install …``): a terminal session, not
an output. The values are worked by hand: ``[0.1, 0.25, 0.7] * 2`` is ``[0.2, 0.5, 1.4]``.

A beam search's printed pairs are checked as the code scores them wherever they are printed:
in the article's text or in what the block printed (a notebook cell's own output). The
scores, from mpmath at 40 digits (``tests/test_scored_sequences.py``):
-ln 0.5 · -ln 0.2 · -ln 0.5 = 0.245427710525015446…, printed by Python as
0.24542771052501547; -ln 0.3 · -ln 0.6 · -ln 0.5 = 0.426299489036935105…, printed
0.42629948903693515.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from article_checks import json_checks, verdicts_at
from test_scored_sequences import ARTICLE, PRODUCT

from symtf.commands.draft import check_article
from symtf.draft.read.blocks import printed_fence
from symtf.draft.read.markdown import Fence
from symtf.draft.read.source import Frame, LineIndex, Text
from symtf.renderers import json as render_json

DOUBLED = """\
# Doubling

```python
import numpy as np
x = np.array([0.1, 0.25, 0.7])
y = x * 2
print(y)
```

```{fence}
[0.2 0.5 {last}]
```
"""


@pytest.mark.parametrize("fence", ["shell", "sh", "bash", "console", "text"])
def test_a_terminal_fence_under_the_code_is_what_it_printed(tmp_path: Path, fence: str) -> None:
    text = DOUBLED.format(fence=fence, last="1.4")
    checks = json_checks(tmp_path, text)
    for needle in ("0.2 0.5", "0.5 ", "1.4"):
        assert verdicts_at(checks, text, needle) == {"exact"}, needle


def test_a_slip_in_a_pasted_terminal_output_is_flagged(tmp_path: Path) -> None:
    text = DOUBLED.format(fence="shell", last="1.5")
    checks = json_checks(tmp_path, text)
    assert verdicts_at(checks, text, "1.5") == {"wrong"}
    assert verdicts_at(checks, text, "0.5") == {"exact"}


def _fence(info: str, body: str) -> Fence:
    return Fence(info, Text.of(body, Frame(LineIndex(body))), 1, body.count("\n") + 3)


@pytest.mark.parametrize(
    ("info", "body", "printed"),
    [
        ("shell", "[0.2 0.5 1.4]", True),
        ("sh", "tensor([0.2000, 0.5000])", True),
        ("bash", "$ python demo.py\n[0.2 0.5 1.4]", False),
        ("shell", "pip install torch==2.1.0", False),
        ("sh", "user@host:~$ python demo.py", False),
        ("text", "$ python demo.py", True),  # a plain fence is an output whatever it holds
        ("yaml", "lr: 0.1", False),
    ],
)
def test_a_terminal_fence_holding_a_command_is_not_an_output(
    info: str, body: str, printed: bool
) -> None:
    assert printed_fence(_fence(info, body)) is printed


#: The beam search of tests/test_scored_sequences.py (scores as products of -log), its code
#: only: here a notebook cell prints the pairs in its own output.
BEAM = ARTICLE.format(**PRODUCT, first="", second="").split("```python\n")[1].split("```")[0]


def _notebook(tmp_path: Path, printed: str) -> Path:
    cells = [
        {"cell_type": "markdown", "metadata": {}, "source": "# Beam search by hand"},
        {
            "cell_type": "code",
            "metadata": {},
            "execution_count": 1,
            "source": BEAM,
            "outputs": [{"output_type": "stream", "name": "stdout", "text": printed}],
        },
    ]
    nb = {"cells": cells, "metadata": {}, "nbformat": 4, "nbformat_minor": 5}
    path = tmp_path / "beam.ipynb"
    path.write_text(json.dumps(nb, indent=1), encoding="utf-8")
    return path


def _scores(path: Path) -> list[tuple[str, str, bool]]:
    checks = render_json.derivation_dict(check_article(path))["checks"]
    return [
        (c["printed"], c["verdict"], bool(c.get("cell_output")))
        for c in checks
        if "." in c["printed"]
    ]


def test_a_beam_search_s_scores_in_a_cell_s_own_output_are_checked(tmp_path: Path) -> None:
    path = _notebook(
        tmp_path, "[[2, 0, 2], 0.24542771052501547]\n[[1, 0, 2], 0.42629948903693515]\n"
    )
    assert _scores(path) == [
        ("0.24542771052501547", "rounded", True),
        ("0.42629948903693515", "rounded", True),
    ]


def test_a_score_a_cell_prints_beside_the_wrong_sequence_is_off(tmp_path: Path) -> None:
    # the two scores swapped: each is the other sequence's
    path = _notebook(
        tmp_path, "[[2, 0, 2], 0.42629948903693515]\n[[1, 0, 2], 0.24542771052501547]\n"
    )
    assert [v for _, v, _ in _scores(path)] == ["wrong", "wrong"]
