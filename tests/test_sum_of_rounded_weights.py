"""A sum worked from softmax weights the article rounded by hand is judged as the model's.

The fixture notebook is written here: scores [[2, 4, 4], [4, 16, 12]] go through a
softmax, which the code prints and then overwrites "for readability" with weights rounded
by hand ([0.0, 0.5, 0.5] for 0.0634, 0.4683, 0.4683). The Markdown scales the values
[1, 2, 3], [2, 8, 0], [2, 6, 3] by those weights, one line each, and sums them to
[2.0, 7.0, 1.5]. The attention output it stands for is softmax([2, 4, 4]) @ values,
computed here with mpmath: 1.9366…, 6.6831…, 1.5951…, so the printed sum is off (2.0 and
1.5 within one unit, 7.0 more) because of the weights rounded by hand.
"""

from __future__ import annotations

from pathlib import Path

import mpmath
import nbformat

from symtf.commands.draft import check_article
from symtf.renderers._claims import place_of

CODE = """import torch
from torch.nn.functional import softmax
scores = torch.tensor([[2., 4., 4.], [4., 16., 12.]])
values = torch.tensor([[1., 2., 3.], [2., 8., 0.], [2., 6., 3.]])
weights = softmax(scores, dim=-1)
print(weights)
# For readability, approximate the above as follows
weights = [
  [0.0, 0.5, 0.5],
  [0.0, 1.0, 0.0]
]
weights = torch.tensor(weights)"""
PRINTED = (
    "tensor([[6.3379e-02, 4.6831e-01, 4.6831e-01],\n"
    "        [6.0337e-06, 9.8201e-01, 1.7986e-02]])\n"
)
WORKED = """Each value is scaled by its weight:
```
1: 0.0 * [1, 2, 3] = [0.0, 0.0, 0.0]
2: 0.5 * [2, 8, 0] = [1.0, 4.0, 0.0]
3: 0.5 * [2, 6, 3] = [1.0, 3.0, 1.5]
```
and the weighted values are summed:
```
  [0.0, 0.0, 0.0]
+ [1.0, 4.0, 0.0]
+ [1.0, 3.0, 1.5]
-----------------
= [2.0, 7.0, 1.5]
```"""


def _expected() -> list[mpmath.mpf]:
    with mpmath.workdps(30):
        e = [mpmath.exp(s) for s in (2, 4, 4)]
        w = [x / sum(e) for x in e]
        values = [[1, 2, 3], [2, 8, 0], [2, 6, 3]]
        return [sum(w[i] * values[i][j] for i in range(3)) for j in range(3)]


def _verdict(exact: mpmath.mpf, printed: str) -> str:
    unit = mpmath.mpf(10) ** -len(printed.split(".")[1])
    if abs(mpmath.mpf(printed) - exact) <= unit / 2:
        return "rounded"
    return "slip" if abs(mpmath.mpf(printed) - exact) < unit else "wrong"


def test_a_sum_of_weights_rounded_by_hand_is_judged_as_the_attention_output(
    tmp_path: Path,
) -> None:
    cell = nbformat.v4.new_code_cell(CODE)
    cell.outputs = [nbformat.v4.new_output("stream", name="stdout", text=PRINTED)]
    nb = nbformat.v4.new_notebook()
    nb.cells = [nbformat.v4.new_markdown_cell("# Weighted values"), cell]
    nb.cells.append(nbformat.v4.new_markdown_cell(WORKED))
    path = tmp_path / "weights.ipynb"
    nbformat.write(nb, str(path))
    line = next(
        i + 1 for i, x in enumerate(path.read_text(encoding="utf-8").splitlines()) if "= [2.0" in x
    )
    got = []
    for r in check_article(path).results:
        for k, c in enumerate(r.checks):
            place = place_of(r, c, k)
            if place is not None and place.line == line:
                got.append((c.printed, c.verdict, c.extra.get("cause")))
    want = [_verdict(x, p) for x, p in zip(_expected(), ("2.0", "7.0", "1.5"), strict=True)]
    assert want == ["slip", "wrong", "slip"]
    assert [(p, v) for p, v, _ in got] == list(zip(("2.0", "7.0", "1.5"), want, strict=True))
    assert {cause for _, _, cause in got} == {"inherited"}  # from the weights written by hand
