"""A list of whole numbers written under the lines that worked out decimals (an integer
array stores them so: ``[1, 2, -1, 5]`` after ``1.8``, ``2.6``, ``-1.4``, ``5.2``) is those
results printed to no decimals: each entry is checked as its line, so a truncation
instead of a rounding is flagged.

The articles are written for these tests; the expected values are by hand
(3×0.8 − 1×0.6 = 1.8, 3×0.6 + 1×0.8 = 2.6, 2×0.8 − 5×0.6 = −1.4, 2×0.6 + 5×0.8 = 5.2).
"""

from __future__ import annotations

from fractions import Fraction as F
from pathlib import Path

from article_checks import line_of, verdicts_by_line

from symtf.draft.translate import Block, Given, Translator

ARTICLE = """# Storing a turned pair as integers

The vector is `x = [3, 1, 2, 5]`; the array keeps integers.

First pair, in floats:

```
x' ≈ 3*0.8 - 1*0.6 = 1.8
y' ≈ 3*0.6 + 1*0.8 = 2.6
```

Second pair, in floats:

```
x' ≈ 2*0.8 - 5*0.6 = -1.4
y' ≈ 2*0.6 + 5*0.8 = 5.2
```

The array then holds:

```python
{stored}
```
"""

#: The four results, by hand.
RESULTS = (F("1.8"), F("2.6"), F("-1.4"), F("5.2"))


def test_truncated_results_are_flagged_where_the_list_stores_them(tmp_path: Path) -> None:
    """1.8 and 2.6 round to 2 and 3, so the stored 1 and 2 are truncations (slips); −1.4
    and 5.2 round to −1 and 5, as stored."""
    assert [round(x) for x in RESULTS] == [2, 3, -1, 5]
    text = ARTICLE.format(stored="[1, 2, -1, 5]")
    verdicts = verdicts_by_line(tmp_path, text, "stored.md")
    assert verdicts[line_of(text, "[1, 2, -1, 5]")] == [
        ("1", "slip"),
        ("2", "slip"),
        ("-1", "rounded"),
        ("5", "rounded"),
    ]


def test_a_list_off_by_more_than_a_unit_stays_an_input(tmp_path: Path) -> None:
    """−3 is not −1.4 printed to no decimals: the list restates nothing, and a stated
    input is never flagged."""
    text = ARTICLE.format(stored="[1, 2, -3, 5]")
    verdicts = verdicts_by_line(tmp_path, text, "stored.md")
    assert line_of(text, "[1, 2, -3, 5]") not in verdicts


def test_a_list_neither_rounding_nor_truncating_stays_an_input(tmp_path: Path) -> None:
    """−2 is within one unit of −1.4, but −1.4 rounds and truncates to −1: the list is no
    print of these results (a coincidence of nearness is not a step)."""
    text = ARTICLE.format(stored="[1, 2, -2, 5]")
    verdicts = verdicts_by_line(tmp_path, text, "stored.md")
    assert line_of(text, "[1, 2, -2, 5]") not in verdicts


def test_a_literal_standing_alone_knows_its_line() -> None:
    """A block whose second line is a literal standing alone: its one row is on line 2."""
    block = Block(0, "import numpy as np\n[1, 2, -1, 5]\n", 1, path="nb.ipynb")
    (given,) = [e for e in Translator(lambda name: None).events([block]) if isinstance(e, Given)]
    assert given.values == ("1", "2", "-1", "5")
    assert given.lines == (2,) and given.cell == 0
