"""Array literals written into one index of a tensor the code does not compute.

A walkthrough of batched attention computes ``scores`` with code it does not show whole,
masks it, and writes out batch 0, head 0 as ``scores[0][0] = [[…]]``; it then takes
``weights = torch.softmax(scores / scale, dim=-1)`` and writes ``weights[0][0] = [[…]]``.
The first literal is what that slice holds; the second is a printing of the softmax of
that slice, row by row, and its entries are judged. The snippet reads ``torch`` without
importing it, writes the masked entries as ``-inf`` (as PyTorch prints them), and gives
``scale`` only in a comment that works it out (``# sqrt(4) = 2.0``). Every expected
value is computed here with mpmath at 50 digits.
"""

from __future__ import annotations

from pathlib import Path

import mpmath
from mp_reference import rounds_to

from symtf.commands.draft import check_article

MPMATH_DIGITS = 50  # each test at 50 digits (tests/conftest.py)


BATCHED = """# Masked attention, one head at a time

The scores come out of the model for every batch and head; we look at batch 0, head 0.

```python
scores = model.attention_scores(x)
scores.masked_fill_(mask, -torch.inf)

# After masking, batch 0, head 0:
scores[0][0] = [[1.5, -inf, -inf],
                [0.8,  0.3, -inf],
                [0.2,  0.5,  0.9]]

scale = keys.shape[-1] ** 0.5  # sqrt(4) = 2.0
weights = {weights}

# After the softmax each row sums to 1:
weights[0][0] = [[1.000, 0.000, 0.000],
                 [0.562, 0.438, 0.000],
                 [0.279, {middle}, 0.396]]
```
"""

SOFTMAX = "torch.softmax(scores / scale, dim=-1)"


def _softmax_rows(scale: mpmath.mpf) -> list[list[mpmath.mpf]]:
    rows = [["1.5"], ["0.8", "0.3"], ["0.2", "0.5", "0.9"]]  # the -inf entries give 0
    out = []
    for row in rows:
        e = [mpmath.exp(mpmath.mpf(v) / scale) for v in row]
        total = mpmath.fsum(e)
        out.append([v / total for v in e] + [mpmath.mpf(0)] * (3 - len(row)))
    return out


def _checks(tmp_path: Path, text: str) -> dict[tuple[int, int], tuple[str, str]]:
    path = tmp_path / "post.md"
    path.write_text(text, encoding="utf-8")
    report = check_article(path)
    return {
        c.index: (c.printed, c.verdict)
        for r in report.results
        for c in r.checks
        if c.step is not None and c.index is not None
    }


def test_the_slice_of_a_softmax_is_judged_entry_by_entry(tmp_path: Path) -> None:
    exact = _softmax_rows(mpmath.mpf(2))
    printed = [["1.000", "0.000", "0.000"], ["0.562", "0.438", "0.000"], ["0.279", "", "0.396"]]
    for i, row in enumerate(printed):
        for j, text in enumerate(row):
            assert not text or rounds_to(exact[i][j], text)
    # 0.324453… prints 0.324; with the scale anywhere in [1.95, 2.05] (2.0 as printed)
    # it stays within [0.3237, 0.3253], which never prints as 0.322
    assert rounds_to(exact[2][1], "0.324")
    for s in ("1.95", "2.05"):
        assert mpmath.mpf("0.3235") < _softmax_rows(mpmath.mpf(s))[2][1] < mpmath.mpf("0.3255")
    checks = _checks(tmp_path, BATCHED.format(weights=SOFTMAX, middle="0.322"))
    assert len(checks) == 9
    assert checks[(2, 1)] == ("0.322", "wrong")
    assert all(v in ("exact", "rounded") for k, (_, v) in checks.items() if k != (2, 1))


def test_a_slice_written_as_computed_checks_out(tmp_path: Path) -> None:
    checks = _checks(tmp_path, BATCHED.format(weights=SOFTMAX, middle="0.324"))
    assert len(checks) == 9
    assert all(v in ("exact", "rounded") for _, v in checks.values())


def test_a_tensor_read_whole_gives_its_slice_no_step(tmp_path: Path) -> None:
    # a product mixes the slices of other batches and heads: the literal is not judged
    whole = "torch.softmax(scores @ other / scale, dim=-1)"
    assert _checks(tmp_path, BATCHED.format(weights=whole, middle="0.322")) == {}


def test_a_softmax_across_heads_gives_its_slice_no_step(tmp_path: Path) -> None:
    across = "torch.softmax(scores / scale, dim=1)"
    assert _checks(tmp_path, BATCHED.format(weights=across, middle="0.322")) == {}


UNIMPORTED = """# A softmax

```python
s = [0.0, 1.0]
w = torch.softmax(s, dim=-1)  # = [0.2689, {second}]
```
"""


def test_torch_read_without_an_import_is_pytorch(tmp_path: Path) -> None:
    e = mpmath.exp(1)
    assert rounds_to(1 / (1 + e), "0.2689") and rounds_to(e / (1 + e), "0.7311")
    path = tmp_path / "post.md"
    path.write_text(UNIMPORTED.format(second="0.7321"), encoding="utf-8")
    report = check_article(path)
    verdicts = [(c.printed, c.verdict) for r in report.results for c in r.checks]
    assert ("0.2689", "exact") in verdicts or ("0.2689", "rounded") in verdicts
    assert ("0.7321", "wrong") in verdicts


def test_a_name_the_code_defines_is_not_taken_for_pytorch(tmp_path: Path) -> None:
    text = UNIMPORTED.replace("s = [0.0", "torch = load_backend()\ns = [0.0")
    path = tmp_path / "post.md"
    path.write_text(text.format(second="0.7321"), encoding="utf-8")
    report = check_article(path)
    assert not [c for r in report.results for c in r.checks if c.verdict == "wrong"]
