"""Framework functions that are a formula of a few ops: norms, ``F.normalize``, cosine
similarity, outer products and ``F.scaled_dot_product_attention``.

They were left untranslated ("no translation for torch.nn.functional.normalize yet"), so
what a notebook printed from them went unchecked. The fixture's values are worked by hand
(x = [[1, 2], [3, 4]]): ‖x‖ = √30 = 5.47722…; its rows normalised are [1, 2]/√5 =
[0.44721…, 0.89442…] and [3, 4]/5 = [0.6, 0.8]; the rows' cosine similarity is
11/(√5 · 5) = 0.98386…; the outer product of [0, 1, 2] and [1, 0.1] is
[[0, 0], [1, 0.1], [2, 0.2]]. Attention of q = [1, 0] over the rows of x, from mpmath:
softmax([1, 3]/√2) · x.
"""

from __future__ import annotations

from pathlib import Path

import mpmath
import pytest
from article_checks import json_checks, verdicts_at


def _attention() -> list[str]:
    mpmath.mp.dps = 40
    s = [mpmath.mpf(1) / mpmath.sqrt(2), mpmath.mpf(3) / mpmath.sqrt(2)]
    w = [mpmath.e**v / (mpmath.e ** s[0] + mpmath.e ** s[1]) for v in s]
    return [mpmath.nstr(w[0] * a + w[1] * b, 5) for a, b in ((1, 3), (2, 4))]


TORCH = """\
# Norms by hand

```python
import torch
import torch.nn.functional as F
x = torch.tensor([[1.0, 2.0], [3.0, 4.0]])
print(x.norm())
print(F.normalize(x, dim=-1))
print(F.cosine_similarity(x[0], x[1], dim=0))
print(torch.outer(torch.arange(3.0), torch.tensor([1.0, 0.1])))
q = torch.tensor([[1.0, 0.0]])
print(F.scaled_dot_product_attention(q, x, x))
```

```text
tensor({norm})
tensor([[0.4472, 0.8944],
        [0.6000, 0.8000]])
tensor(0.9839)
tensor([[0.0000, 0.0000],
        [1.0000, 0.1000],
        [2.0000, 0.2000]])
tensor([[{a0}, {a1}]])
```
"""


def test_norms_normalising_cosines_outer_products_and_attention_are_checked(
    tmp_path: Path,
) -> None:
    a0, a1 = _attention()
    assert (a0, a1) == ("2.6089", "3.6089")
    text = TORCH.format(norm="5.4772", a0=a0, a1=a1)
    checks = json_checks(tmp_path, text)
    for needle in ("5.4772", "0.4472", "0.8944", "0.6000", "0.9839", "0.1000", "2.0000, 0.2"):
        assert verdicts_at(checks, text, needle) <= {"exact", "rounded"}, needle
        assert verdicts_at(checks, text, needle), needle
    assert verdicts_at(checks, text, a0) == {"rounded"}
    assert verdicts_at(checks, text, a1) == {"rounded"}


def test_an_attention_output_off_is_flagged(tmp_path: Path) -> None:
    text = TORCH.format(norm="5.4772", a0="2.6807", a1="3.6089")
    checks = json_checks(tmp_path, text)
    assert verdicts_at(checks, text, "2.6807") == {"wrong"}
    assert verdicts_at(checks, text, "3.6089") == {"rounded"}


@pytest.mark.parametrize(
    ("call", "printed", "verdicts"),
    [
        ("np.linalg.norm(v)", "5.0", {"exact"}),  # √(9 + 16)
        ("np.linalg.norm(v, ord=2)", "5.0", {"exact"}),  # a vector's 2-norm
        ("np.linalg.norm(v)", "5.1", {"wrong"}),
        ("np.linalg.norm(v, ord=1)", "7.0", set()),  # another order: not translated
        ("np.linalg.norm(m, ord=2)", "5.4650", set()),  # a matrix's spectral norm: not either
        ("np.outer(v, v)[1, 1]", "16.0", {"exact"}),
    ],
)
def test_numpy_norms_and_outer_products(
    tmp_path: Path, call: str, printed: str, verdicts: set[str]
) -> None:
    text = (
        "# Norms\n\n```python\nimport numpy as np\nv = np.array([3.0, 4.0])\n"
        f"m = np.array([[1.0, 2.0], [3.0, 4.0]])\nprint({call})\n```\n\n```text\n{printed}\n```\n"
    )
    checks = json_checks(tmp_path, text)
    assert verdicts_at(checks, text, printed, nth=text.count(printed) - 1) == verdicts
