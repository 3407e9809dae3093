"""A number the line names as a reduction of the row written before it on that line.

``"b" : [1.5, 0.5, -0.25, 0.75]   # Range: 1.75``: the comment names the number the range
(largest entry less smallest) of the row on its line, so it is that step, and checked;
named so on the number itself, a range the row does not give (1.2 for a row whose range is
0.9) is judged wrong, not left aside. A range named on a line with no row, or a number the
line does not label as the range, stays unjudged unless the row gives it.

The article is made up for the test; every expected value is worked out by hand below
(the rows are exact decimals), never by symtf.
"""

from __future__ import annotations

from fractions import Fraction
from typing import Any

import pytest
from test_lineage import _json, _report

ARTICLE = """# How far apart the features are

Each token's features, and how far apart they lie:

```
"a" : [0.2, -0.5, 0.9, 0.1]     # Range: 1.4, mostly positive
"b" : [1.3, 0.6, -0.4, 0.8]      # Range: 1.7, wider
"c" : [0.3, 0.3, -0.6, 0.0]     # Range: 1.2, narrow
"d" : [0.1, 0.2, 0.3, 0.4]      # 0.9 apart, a narrow range
```

A wider budget is allowed later. Range: 2.5 at most.
"""

ROWS = {
    "a": [Fraction("0.2"), Fraction("-0.5"), Fraction("0.9"), Fraction("0.1")],
    "b": [Fraction("1.3"), Fraction("0.6"), Fraction("-0.4"), Fraction("0.8")],
    "c": [Fraction("0.3"), Fraction("0.3"), Fraction("-0.6"), Fraction("0.0")],
    "d": [Fraction("0.1"), Fraction("0.2"), Fraction("0.3"), Fraction("0.4")],
}


def _line(text: str) -> int:
    return next(i for i, ln in enumerate(ARTICLE.splitlines(), 1) if text in ln)


@pytest.fixture(scope="module")
def report(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    return _json(_report(tmp_path_factory, "range.md", ARTICLE))


def _verdict(report: dict[str, Any], line: int, printed: str) -> str | None:
    got = [
        c["verdict"]
        for c in report["checks"]
        if c["source_line"] == line and c["printed"] == printed
    ]
    assert len(got) <= 1, got
    return got[0] if got else None


def test_a_range_named_on_its_row_is_checked(report: dict[str, Any]) -> None:
    spread = {k: max(r) - min(r) for k, r in ROWS.items()}
    assert spread["a"] == Fraction("1.4") and spread["b"] == Fraction("1.7")
    assert _verdict(report, _line('"a" :'), "1.4") == "exact"
    assert _verdict(report, _line('"b" :'), "1.7") == "exact"


def test_a_named_range_the_row_does_not_give_is_wrong(report: dict[str, Any]) -> None:
    spread = max(ROWS["c"]) - min(ROWS["c"])
    assert spread == Fraction("0.9")  # printed 1.2: three units of the first decimal off
    assert _verdict(report, _line('"c" :'), "1.2") == "wrong"


def test_a_range_with_no_row_on_its_line_is_not_judged(report: dict[str, Any]) -> None:
    assert _verdict(report, _line("at most"), "2.5") is None


def test_a_number_the_line_does_not_name_a_range_is_not_judged(report: dict[str, Any]) -> None:
    # "0.9 apart, a narrow range": the word is on the line, but 0.9 is not labelled the
    # range, and the row's range (0.3) does not give it: no step is taken
    assert max(ROWS["d"]) - min(ROWS["d"]) == Fraction("0.3")
    assert _verdict(report, _line('"d" :'), "0.9") is None
