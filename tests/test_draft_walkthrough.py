"""Multi-head attention walkthroughs written as code fragments, read as they stand.

A walkthrough states its sizes in a setup block (``d_head = d_model // n_heads = 2``),
shows a method's lines outside their class (``q.view(b, t, self.n_heads, self.d_head)``,
with ``b`` and ``self`` never defined) and writes out what a step holds as a literal
named after it (``q_heads = [[[…]]]`` after ``q = q.view(…)``). Every expected verdict
here comes from how the case is built: a view or a transpose only moves the entries, so
the values written out are the projected entries themselves, in the order worked out
by hand in the comments. Nothing is run; the posts are read with ``ast``.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from symtf.cli import main
from symtf.draft.read.blocks import parses, without_stated_sizes

#: Batch 1, 2 tokens, d_model 4, 2 heads of width 2.
SETUP = """\
```python
batch = 1
seq_len = 2
d_model = 4
n_heads = 2
d_head = d_model // n_heads = 2   # width of one head
```
"""

#: The projected queries (rows: token 0, token 1), and the method's view into heads.
PROJECTED = """\
```python
q = self.W_q(x)
q = [[[0.5, 1.5, -2.0, 0.25],
      [3.0, -1.0, 0.75, 2.5]]]
q = q.view(b, seq_len, self.n_heads, self.d_head)
"""


def _post(tmp_path: Path, text: str) -> Path:
    path = tmp_path / "walkthrough.md"
    path.write_text(text, encoding="utf-8")
    return path


def _checks(path: Path, capsys: pytest.CaptureFixture[str]) -> list[tuple[int, str, str]]:
    """Each printed number checked: its own line, as printed, and its verdict."""
    assert main(["check", str(path), "--format", "json"]) in (0, 1)
    data = json.loads(capsys.readouterr().out)
    return [
        (c["source_line"], c["printed"], c["verdict"])
        for d in data["derivations"]
        for c in d["checks"]
    ]


def test_a_size_stated_with_its_value_is_read_as_its_formula() -> None:
    line = "head_dim = d_out // num_heads = 4  # per head"
    assert without_stated_sizes(line) == "head_dim = d_out // num_heads      # per head"
    assert parses("d_out = 8\nnum_heads = 2\n" + line + "\n")
    # hand-worked decimals fenced as Python stay prose, and a chained assignment is Python
    for kept in ("mean = (0.1 + 0.3) / 2 = 0.2", "a = b = 4", "ok = n == 4"):
        assert without_stated_sizes(kept) == kept
    assert not parses("mean = (0.1 + 0.3) / 2 = 0.2\n")


def test_a_literal_named_after_a_viewed_tensor_restates_it_row_by_row(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # q.view(1, 2, 2, 2) splits each token's 4 entries into two heads of 2, in order:
    # token 0 → [0.5, 1.5] | [-2.0, 0.25], token 1 → [3.0, -1.0] | [0.75, 2.5].
    # b is the one size left: 8 entries / (2 · 2 · 2) = 1. The literal's rows stand on
    # lines 15 and 16 of the post (the setup block takes lines 1–7).
    text = (
        SETUP
        + PROJECTED
        + """
# q after view():
q_heads = [[[[0.5, 1.5], [-2.0, 0.25]],
            [[3.0, -1.0], [0.75, 2.5]]]]
```
"""
    )
    checks = _checks(_post(tmp_path, text), capsys)
    assert checks == [
        (15, "0.5", "exact"),
        (15, "1.5", "exact"),
        (15, "-2.0", "exact"),
        (15, "0.25", "exact"),
        (16, "3.0", "exact"),
        (16, "-1.0", "exact"),
        (16, "0.75", "exact"),
        (16, "2.5", "exact"),
    ]


def test_a_restating_literal_is_reported_by_its_own_name(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # the article's label (q_heads), not the name the translation gave the view's step
    text = (
        SETUP
        + PROJECTED
        + """q_heads = [[[[0.5, 1.5], [-2.0, 0.25]],
            [[3.0, -1.0], [0.75, 2.5]]]]
```
"""
    )
    assert main(["check", str(_post(tmp_path, text)), "--format", "json"]) == 0
    data = json.loads(capsys.readouterr().out)
    claims = {c["claim"] for d in data["derivations"] for c in d["checks"]}
    assert claims == {"q_heads"}


def test_a_literal_restating_the_heads_after_a_transpose_is_checked(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # q.transpose(1, 2) of the (1, 2, 2, 2) view: head 0 holds [0.5, 1.5] (token 0) and
    # [3.0, -1.0] (token 1); head 1 holds [-2.0, 0.25] and [0.75, 2.5].
    text = (
        SETUP
        + PROJECTED
        + """q = q.transpose(1, 2)
q_by_head = [[[[0.5, 1.5],
               [3.0, -1.0]],
              [[-2.0, 0.25],
               [0.75, 2.5]]]]
```
"""
    )
    checks = _checks(_post(tmp_path, text), capsys)
    assert [c[0] for c in checks] == [14, 14, 15, 15, 16, 16, 17, 17]
    assert [c[1] for c in checks] == ["0.5", "1.5", "3.0", "-1.0", "-2.0", "0.25", "0.75", "2.5"]
    assert all(c[2] == "exact" for c in checks)


def test_an_entry_miscopied_in_a_restating_literal_is_flagged(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # as above, with head 1's last entry written 2.6 where the transpose moves q's 2.5:
    # seven of eight entries are q's, so the literal writes out q; 2.6 is off by 0.1,
    # one unit of its last digit: wrong (|2.6 − 2.5| is not below the unit)
    text = (
        SETUP
        + PROJECTED
        + """q = q.transpose(1, 2)
q_by_head = [[[[0.5, 1.5],
               [3.0, -1.0]],
              [[-2.0, 0.25],
               [0.75, 2.6]]]]
```
"""
    )
    checks = _checks(_post(tmp_path, text), capsys)
    assert [(c[1], c[2]) for c in checks if c[2] != "exact"] == [("2.6", "wrong")]
    assert len(checks) == 8 and checks[-1][0] == 17


def test_a_literal_named_after_a_tensor_but_holding_other_values_is_no_alarm(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # q_norm is not q: 0.1 · [1, 2, 3, 4] has nothing to do with q's entries, so it is
    # never judged against q (it is a given of its own), and nothing is flagged.
    text = (
        SETUP
        + PROJECTED
        + """q = q.transpose(1, 2)
q_norm = [[[[0.1, 0.2],
            [0.3, 0.4]],
           [[0.5, 0.6],
            [0.7, 0.8]]]]
```
"""
    )
    checks = _checks(_post(tmp_path, text), capsys)
    assert not [c for c in checks if c[2] in ("slip", "wrong")]


def test_a_literal_of_another_shape_is_a_given(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # q_row has the shape of one token's row, not of q: not a restatement of q
    text = (
        SETUP
        + PROJECTED
        + """q_row = [0.5, 1.5]
```
"""
    )
    assert _checks(_post(tmp_path, text), capsys) == []


def test_a_view_with_two_sizes_never_defined_is_not_translated(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # b and h both unknown: 8 entries could be (1, 2, 2, 2) or (2, 2, 1, 2); nothing is read
    text = (
        SETUP
        + """```python
q = [[[0.5, 1.5, -2.0, 0.25],
      [3.0, -1.0, 0.75, 2.5]]]
q = q.view(b, seq_len, h, self.d_head)
q_heads = [[[[0.5, 1.5], [-2.0, 0.25]],
            [[3.0, -1.0], [0.75, 2.5]]]]
```
"""
    )
    assert _checks(_post(tmp_path, text), capsys) == []


def test_a_literal_named_after_a_product_is_not_read_as_restating_it(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # scores = q @ k.T is a product, not a rearrangement: scores_soft, of the same 2 × 2
    # shape, is another quantity (here a rounded softmax written by hand), so it is never
    # judged against scores. out = scores_soft @ v reads the literal as written:
    # [[0.5, 0.5], [0.25, 0.75]] @ [[2, 4], [6, 8]] = [[4, 6], [5, 7]].
    text = """\
```python
import numpy as np
q = np.array([[1.0, 0.0], [0.0, 1.0]])
k = np.array([[3.0, 1.0], [2.0, 4.0]])
v = np.array([[2.0, 4.0], [6.0, 8.0]])
scores = q @ k.T
scores_soft = np.array([[0.5, 0.5], [0.25, 0.75]])
out = scores_soft @ v
print(out)
```

```
[[4. 6.]
 [5. 7.]]
```
"""
    checks = _checks(_post(tmp_path, text), capsys)
    assert [(c[1], c[2]) for c in checks] == [
        ("4.", "exact"),
        ("6.", "exact"),
        ("5.", "exact"),
        ("7.", "exact"),
    ]


# ----------------------------------------------------------------------------- dropout

#: w, given; the mask torch.manual_seed(7) draws for a 2 × 2 dropout at p = 0.5, as
#: the notebook shows it by dropping out a tensor of ones (kept entries scaled by 2).
_W = "import torch\nw = torch.tensor([[0.5, 0.25], [0.125, 1.5]])\n"
_MASK = (
    "torch.manual_seed(7)\ndropout = torch.nn.Dropout(0.5)\nones = torch.ones(2, 2)\n"
    "print(dropout(ones))\n",
    "tensor([[2., 0.],\n        [2., 2.]])\n",
)


def _notebook(tmp_path: Path, cells: list[tuple[str, str | None]]) -> Path:
    nb = {
        "cells": [
            {
                "cell_type": "code",
                "execution_count": k,
                "metadata": {},
                "source": src,
                "outputs": (
                    [{"output_type": "stream", "name": "stdout", "text": out}] if out else []
                ),
            }
            for k, (src, out) in enumerate(cells)
        ],
        "metadata": {},
        "nbformat": 4,
        "nbformat_minor": 5,
    }
    path = tmp_path / "dropout.ipynb"
    path.write_text(json.dumps(nb, indent=1), encoding="utf-8")
    return path


def _last_cell(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], code: str, printed: str
) -> list[tuple[str, str]]:
    """The verdicts on what the last cell printed (the mask's own print is a given)."""
    path = _notebook(tmp_path, [(_W, None), _MASK, (code, printed)])
    return [(c[1], c[2]) for c in _checks(path, capsys)]


def test_dropout_after_the_same_seed_draws_the_mask_its_print_of_ones_showed(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # w ⊙ [[2, 0], [2, 2]] = [[1.0, 0.0], [0.25, 3.0]]; 3.1 is put in by hand
    printed = "tensor([[1.0000, 0.0000],\n        [0.2500, 3.1000]])\n"
    verdicts = _last_cell(tmp_path, capsys, "torch.manual_seed(7)\nprint(dropout(w))\n", printed)
    assert verdicts == [
        ("1.0000", "exact"),
        ("0.0000", "exact"),
        ("0.2500", "exact"),
        ("3.1000", "wrong"),
    ]


def test_dropout_after_another_seed_or_another_draw_is_not_checked(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # another seed draws another mask; so does the same seed after a draw in between
    printed = "tensor([[0.0000, 0.5000],\n        [0.2500, 0.0000]])\n"
    for code in (
        "torch.manual_seed(8)\nprint(dropout(w))\n",
        "torch.manual_seed(7)\nnoise = torch.rand(2, 2)\nprint(dropout(w))\n",
        "torch.manual_seed(7)\nfirst = dropout(w.T)\nprint(dropout(w))\n",
    ):
        assert _last_cell(tmp_path, capsys, code, printed) == [], code


def test_dropout_in_eval_mode_changes_nothing(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # dropout.eval(): the identity, whatever the seed
    printed = "tensor([[0.5000, 0.2500],\n        [0.1250, 1.5000]])\n"
    verdicts = _last_cell(tmp_path, capsys, "dropout.eval()\nprint(dropout(w))\n", printed)
    assert verdicts == [(v, "exact") for v in ("0.5000", "0.2500", "0.1250", "1.5000")]


def test_a_row_of_a_tensor_of_three_axes_printed_again_is_a_repeat(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # q has shape (1, 2, 4); the diagram below writes out token 1's row, q[0, 1, :]
    text = (
        SETUP
        + PROJECTED
        + """```

### One token's vector

```
Token 1:
[3.0, -1.0, 0.75, 2.5]
```
"""
    )
    checks = _checks(_post(tmp_path, text), capsys)
    assert checks == [(19, v, "exact") for v in ("3.0", "-1.0", "0.75", "2.5")]


# ----------------------------------------------------------------------------- comments


def test_hand_arithmetic_in_a_code_comment_is_a_displayed_line(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # sqrt(4) = 2 exactly; 0.4 × 0.5 = 0.2, so the comment's 0.3 is off by a whole unit
    text = """\
```python
scale = d_head ** 0.5  # sqrt(4) = 2.0
w = 0.4 * 0.5  # 0.4 * 0.5 = 0.3
```
"""
    checks = _checks(_post(tmp_path, text), capsys)
    assert checks == [(2, "2.0", "exact"), (3, "0.3", "wrong")]


def test_a_square_root_spelled_out_in_a_sentence_is_read(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # as √4 = 2.0 is: the sentence's words are left out, the arithmetic is checked
    text = "# Scaling\n\nWe divide by sqrt(4) = 2.0 before the softmax.\n"
    assert _checks(_post(tmp_path, text), capsys) == [(3, "2.0", "exact")]
