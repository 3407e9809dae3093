"""A number that a row of its chain writes stands for that row's entry.

``y = 0.5 + [0.07, 0.02] @ [[10], [30]] = 0.5 + 0.7 + 0.6``: the 0.6 is checked as
``0.02×30``, and its 0.02 is the second entry of the row [0.07, 0.02], which repeats
``w = [2/30, 1/60] = [0.07, 0.02]`` as a whole. It stands for w's 1/60, not for the
``s = 1/50 = 0.02`` worked out earlier that prints alike, so 0.6 is off (30/60 = 0.5).

The article is made up for the test; the expected values are exact fractions worked out
below, never by symtf.
"""

from __future__ import annotations

from fractions import Fraction
from typing import Any

import pytest
from test_lineage import _json, _report

ARTICLE = """# Two weights and a scale

```
s = 1/50 = 0.02
w = [2/30, 1/60] = [0.07, 0.02]
y = 0.5 + [0.07, 0.02] @ [[10], [30]]
  = 0.5 + 0.7 + 0.6
  = 1.8
```
"""


@pytest.fixture(scope="module")
def report(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    return _json(_report(tmp_path_factory, "row.md", ARTICLE))


def _check(report: dict[str, Any], printed: str) -> dict[str, Any]:
    (check,) = [c for c in report["checks"] if c["source_line"] == 7 and c["printed"] == printed]
    return check


def test_a_term_reads_its_rows_entry_not_an_earlier_number_printed_alike(
    report: dict[str, Any],
) -> None:
    w = [Fraction(2, 30), Fraction(1, 60)]
    assert Fraction(1, 50) == Fraction("0.02")  # s prints as 0.02 exactly
    assert round(w[1], 2) == Fraction("0.02") and w[1] * 30 == Fraction("0.5")
    assert round(w[0] * 10, 1) == Fraction("0.7")
    term = _check(report, "0.6")
    assert term["verdict"] in ("slip", "wrong")
    assert term["exact_reading"]["stands_for"] == {"0.02": "w"}
    assert _check(report, "0.7")["verdict"] == "rounded"
