"""A function applied by name to a row the article prints: ``softmax([2, 4, 4]) = […]``.

Each fixture is written here. The expected values come from mpmath at 30 digits:

- softmax([2, 4, 4]) = 0.063378938333, 0.468310530833, 0.468310530833
- softmax([1, 0, 3]) = 0.114195199385, 0.0420100661341, 0.843794734481

So ``[0.0, 0.5, 0.5]`` is a slip in its first entry (0.0634 rounds to 0.1, and 0.0 is
within one unit of it) and right in the others; ``[0.11, 0.04, 0.86]`` is wrong in its
last entry (0.8438 rounds to 0.84, 0.86 is two units off).
"""

from __future__ import annotations

from pathlib import Path

import mpmath
from article_checks import placed_verdicts

ARTICLE = """\
# Attention weights by hand

The scores of the two queries against the three keys are

$$
S = \\begin{{bmatrix}} 2 & 4 & 4 \\\\ 1 & 0 & 3 \\end{{bmatrix}}
$$

Take the {name} of each row:

```
{name}([2, 4, 4]) = [0.0, 0.5, 0.5]
{name}([1, 0, 3]) = [0.11, 0.04, 0.86]
```
"""


def test_a_named_softmax_of_a_printed_row_is_checked_entry_by_entry(tmp_path: Path) -> None:
    got = placed_verdicts(tmp_path, ARTICLE.format(name="softmax"))
    line12 = sorted((p, v) for line, p, v in got if line == 12 and "." in p)
    line13 = sorted((p, v) for line, p, v in got if line == 13 and "." in p)
    assert line12 == [("0.0", "slip"), ("0.5", "rounded"), ("0.5", "rounded")]
    assert line13 == [("0.04", "rounded"), ("0.11", "rounded"), ("0.86", "wrong")]


def test_a_function_the_line_writes_is_its_step_even_when_no_entry_agrees(
    tmp_path: Path,
) -> None:
    # The line writes the function and its argument, so nothing about the step is guessed:
    # sigmoid of 2, 4, 4 is 0.8808, 0.9820, 0.9820 and of 1, 0, 3 is 0.7311, 0.5, 0.9526
    # (mpmath), so every printed entry is off by far more than a unit of its last digit
    sig = [1 / (1 + mpmath.e ** -mpmath.mpf(x)) for x in (2, 4, 4, 1, 0, 3)]
    printed = [mpmath.mpf(x) for x in ("0.0", "0.5", "0.5", "0.11", "0.04", "0.86")]
    assert all(abs(a - b) > mpmath.mpf("0.05") for a, b in zip(sig, printed, strict=True))
    got = placed_verdicts(tmp_path, ARTICLE.format(name="sigmoid"))
    verdicts = [v for line, p, v in got if line in (12, 13) and "." in p]
    assert verdicts == ["wrong"] * 6
