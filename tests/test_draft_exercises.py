"""Exercises checked as they stand: bodiless functions and classes, and values typed by hand.

An exercise often declares what to write (``def softmax(z): ...``, a ``class LayerNorm``
whose methods are ``...``) and then shows examples whose results were typed by hand
(``# expected: approximately [[…]]``, ``# out ≈ […]``). The articles here are constructed
for these tests; every expected value is recomputed with mpmath at 50 digits from the
inputs the article writes, and each deliberate error is placed by hand.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import mpmath
from mp_reference import rounds_to

from symtf.commands.draft import check_article

MPMATH_DIGITS = 50


def _line(text: str, needle: str, nth: int = 0) -> int:
    """The 1-based line of the ``nth`` line of ``text`` that contains ``needle``."""
    hits = [i + 1 for i, line in enumerate(text.splitlines()) if needle in line]
    return hits[nth]


def _checked(tmp_path: Path, name: str, text: str) -> Any:
    """The report of ``symtf check`` on ``text`` written to ``tmp_path / name``."""
    post = tmp_path / name
    post.write_text(text)
    return check_article(post)


def _softmax(row: list[str]) -> list[mpmath.mpf]:
    e = [mpmath.exp(mpmath.mpf(x)) for x in row]
    return [x / sum(e) for x in e]


SOFTMAX_EXERCISE = """\
# Exercise: a softmax that does not overflow

Write both functions below.

```python
import numpy as np

def softmax(z: np.ndarray) -> np.ndarray: ...

def cross_entropy(z: np.ndarray, y: np.ndarray) -> float:
    \"\"\"Mean loss over the rows; y holds class indices.\"\"\"
    raise NotImplementedError
```

Small scores:

```python
import numpy as np

z = np.array([[0.5, 1.5, -1.0]])
p = softmax(z)
# expected: approximately [[0.25372, 0.68967, 0.05661]]
```

The same scores shifted by 500 give the same probabilities:

```python
import numpy as np

z = np.array([[500.5, 501.5, 499.0]])
p = softmax(z)
# expected: approximately [[0.25372, 0.68967, 0.05661]]
```

A loss over two rows:

```python
import numpy as np

z = np.array([[1.0, 0.0, -0.5], [0.2, 1.2, 0.4]])
y = np.array([0, 2])
loss = cross_entropy(z, y)
# expected: approximately 0.8308
```
"""


def test_a_bodiless_softmax_is_read_by_its_name_and_each_typed_example_is_checked(
    tmp_path: Path,
) -> None:
    # Each typed value is known to its own digits (5 decimals, not numpy's 8), and the
    # shifted example is checked against its own scores, not the first example's.
    report = _checked(tmp_path, "softmax.md", SOFTMAX_EXERCISE)
    first, second = (_line(SOFTMAX_EXERCISE, "expected: approximately [[", k) for k in (0, 1))
    by_line = {r.claim.source_line: r for r in report.results}
    assert sorted(by_line) == [first, second]
    assert by_line[first].claim.step != by_line[second].claim.step
    for line, z in ((first, ["0.5", "1.5", "-1.0"]), (second, ["500.5", "501.5", "499.0"])):
        checks = by_line[line].checks
        assert [c.printed for c in checks] == ["0.25372", "0.68967", "0.05661"]
        assert all(rounds_to(x, c.printed) for x, c in zip(_softmax(z), checks, strict=True))
        assert {c.verdict for c in checks} == {"rounded"}


def test_a_typed_loss_that_is_off_is_left_unchecked_with_the_value_the_reading_gives(
    tmp_path: Path,
) -> None:
    # The loss is printed 0.8308; mpmath gives 0.930835 (log-sum-exp minus the target's
    # score, averaged over the rows). The bodiless function is read by its name only, so
    # the number is not flagged: the note says what that reading gives, as printed.
    report = _checked(tmp_path, "softmax.md", SOFTMAX_EXERCISE)
    rows, targets = [["1.0", "0.0", "-0.5"], ["0.2", "1.2", "0.4"]], [0, 2]
    loss = sum(
        mpmath.log(sum(mpmath.exp(mpmath.mpf(x)) for x in r)) - mpmath.mpf(r[t])
        for r, t in zip(rows, targets, strict=True)
    ) / len(rows)
    assert not rounds_to(loss, "0.8308") and rounds_to(loss, "0.9308")
    assert all(c.verdict in ("exact", "rounded") for r in report.results for c in r.checks)
    (u,) = [u for u in report.unchecked if u.line == _line(SOFTMAX_EXERCISE, "0.8308")]
    assert "gives 0.9308, not the printed values" in u.note


LAYERNORM_EXERCISE = """\
# Exercise: LayerNorm by hand

```python
import torch
import torch.nn as nn

class LayerNorm(nn.Module):
    def __init__(self, features: int, eps: float = 1e-5) -> None:
        \"\"\"Keep a scale and a shift per feature.\"\"\"
        ...

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        ...
```

Without a scale or shift:

```python
import torch

norm = LayerNorm(4)
x = torch.tensor([[2.0, 4.0, 6.0, 8.0]])
out = norm(x)
# every row comes out with mean 0 and variance 1
# out ≈ [[-1.3416, -0.4472, 0.4472, 1.3416]]
```

With a scale and a shift set by hand:

```python
import torch

norm = LayerNorm(3)
norm.weight.data = torch.tensor([1.5, 0.5, 2.0])
norm.bias.data = torch.tensor([0.0, 1.0, -0.5])
x = torch.tensor([[1.0, 3.0, 2.0]])
out = norm(x)
# scaled, then shifted
# out ≈ [[-1.8371, 1.6124, 0.5]]
```
"""


def _layernorm(xs: list[str], scale: list[str] | None = None, shift: list[str] | None = None):
    x = [mpmath.mpf(v) for v in xs]
    mean = sum(x) / len(x)
    var = sum((v - mean) ** 2 for v in x) / len(x)
    out = [(v - mean) / mpmath.sqrt(var + mpmath.mpf("1e-5")) for v in x]
    if scale is not None and shift is not None:
        out = [mpmath.mpf(g) * v + mpmath.mpf(b) for v, g, b in zip(out, scale, shift, strict=True)]
    return out


def test_a_bodiless_layernorm_class_is_read_as_nn_layernorm_with_its_set_scale_and_shift(
    tmp_path: Path,
) -> None:
    # Example 1: (x − 5)/√(5 + 1e-5) for x = 2, 4, 6, 8. Example 2: x̂ = (−√1.5, √1.5, 0)
    # up to ε, so 1.5·x̂ + 0, 0.5·x̂ + 1, 2·x̂ − 0.5 = (−1.8371, 1.6124, −0.5): the last
    # entry is printed without its sign.
    report = _checked(tmp_path, "layernorm.md", LAYERNORM_EXERCISE)
    first = _line(LAYERNORM_EXERCISE, "out ≈", 0)
    second = _line(LAYERNORM_EXERCISE, "out ≈", 1)
    (r,) = [r for r in report.results if r.claim.source_line == first]
    assert [c.verdict for c in r.checks] == ["rounded"] * 4
    expected = _layernorm(["2.0", "4.0", "6.0", "8.0"])
    assert all(rounds_to(x, c.printed) for x, c in zip(expected, r.checks, strict=True))
    out = _layernorm(["1.0", "3.0", "2.0"], ["1.5", "0.5", "2.0"], ["0.0", "1.0", "-0.5"])
    assert [rounds_to(x, p) for x, p in zip(out, ["-1.8371", "1.6124", "0.5"], strict=True)] == [
        True,
        True,
        False,
    ]
    assert all(rounds_to(x, p) for x, p in zip(out, ["-1.8371", "1.6124", "-0.5"], strict=True))
    (u,) = report.unchecked
    assert u.line == second
    assert "gives -1.8371 1.6124 -0.5, not the printed values" in u.note
