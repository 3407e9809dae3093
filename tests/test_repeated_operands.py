"""A number a displayed line computes from, that repeats a result worked out above it.

``share = [1.25/8.125, …]`` under ``total = 1.25 + 2.75 + 4.125 = 8.125``: each 8.125 is
the total again, and is checked as that line (restated), on its own line and column. The
line's other numbers (1.25, 2.75, 4.125) repeat no result printed before: they are the
line's inputs, neither checked nor listed as numbers left unchecked. A number of fewer than
three significant digits is too short to tell a repeat from a coincidence and is left as
written.

The article is made up for the test; the expected values are worked out with mpmath at 50
digits below, never by symtf.
"""

from __future__ import annotations

from fractions import Fraction
from pathlib import Path
from typing import Any

import mpmath
import pytest
from article_checks import json_checks, verdicts_at
from mp_reference import rounds_to
from test_lineage import _json, _report

ARTICLE = """# Shares of a budget

```
total = 1.25 + 2.75 + 4.125 = 8.125
share = [1.25/8.125, 2.75/8.125, 4.125/8.125]
      = [0.154, 0.338, 0.508]
half = 8.125 / 2 = 4.0625
quarter = 0.5 × 0.5 = 0.25
rest = 1 - 0.25 = 0.75
```
"""


def _line(text: str) -> int:
    return next(i for i, ln in enumerate(ARTICLE.splitlines(), 1) if ln.startswith(text))


@pytest.fixture(scope="module")
def report(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    return _json(_report(tmp_path_factory, "shares.md", ARTICLE))


def _at(report: dict[str, Any], line: int) -> list[tuple[str, str, int]]:
    return sorted(
        (c["printed"], c["verdict"], c.get("source_column") or 0)
        for c in report["checks"]
        if c["source_line"] == line
    )


def test_a_repeated_result_is_checked_where_the_line_writes_it(report: dict[str, Any]) -> None:
    with mpmath.workdps(50):
        parts = [mpmath.mpf(x) for x in ("1.25", "2.75", "4.125")]
        total = sum(parts)
        assert total == mpmath.mpf("8.125")
        for part, printed in zip(parts, ("0.154", "0.338", "0.508"), strict=True):
            assert rounds_to(part / total, printed)
    share = _line("share")
    text = ARTICLE.splitlines()[share - 1]
    columns = [i + 1 for i in range(len(text)) if text.startswith("8.125", i)]
    assert len(columns) == 3
    # each 8.125 is the total again, and nothing else on the line is judged: the total's
    # 4.125, one digit away from the 8.125 printed beside it, is no miscopy of it (it was
    # written on the total's line, before its result)
    assert _at(report, share) == [("8.125", "exact", c) for c in columns]
    half = [(p, v) for p, v, _ in _at(report, _line("half"))]
    assert half == [("4.0625", "exact"), ("8.125", "exact")]


def test_the_line_inputs_are_neither_checked_nor_left_unchecked(report: dict[str, Any]) -> None:
    share = _line("share")
    printed = {p for p, _, _ in _at(report, share)}
    assert not printed & {"1.25", "2.75", "4.125"}
    unchecked = [u for u in report.get("unchecked", []) if u.get("source_line") == share]
    assert not unchecked, unchecked


def test_a_short_number_is_not_taken_for_a_repeat(report: dict[str, Any]) -> None:
    # 0.25 is the quarter worked out just above, but two digits repeat by chance too often
    assert 1 - mpmath.mpf("0.25") == mpmath.mpf("0.75")
    assert [p for p, _, _ in _at(report, _line("rest"))] == ["0.75"]


ARROWS = """# Two shares

```
x = 2.5 × 2.2 = 5.500
y = 1.5 × 3.0 = 4.500
t = 5.500 + 4.500 = 10.000

P → x: 5.500 / 10.000 ≈ 0.550
P → y: 4.500 / 10.000 ≈ 0.450
```
"""


def test_repeated_numbers_do_not_break_a_row_of_arrow_lines() -> None:
    # the numbers each line computes from (5.500, 10.000) are read too; the two lines
    # "P → x: … ≈ 0.550", "P → y: … ≈ 0.450" still print the row of P
    from symtf.draft.read import extract_text

    rows = [f.rows for f in extract_text(ARROWS, "md") if f.kind == "vector" and "→" in f.label]
    assert rows == [(("0.550", "0.450"),)]
    assert Fraction(5500, 10000) == Fraction("0.550")


SUBSTITUTED = """# Gradient of a two-weight layer

Weights: w = [0.5, 0.25]

```
a = 1.5 × 0.123 = 0.1845
b = 2.0 × 0.4567 = 0.9150

grad = a × w[0] + b × w[1]
     = 0.1845 × 0.5 + 0.9150 × 0.25
     = 0.3210
```
"""


def test_a_result_repeated_where_names_give_way_to_numbers(tmp_path: Path) -> None:
    # ``grad = a × w[0] + b × w[1]`` computes nothing; the link below it writes the
    # numbers in (a = 0.1845, b = 0.9150): each repeats its line's result and is checked
    # as it, there. b is 2.0 × 0.4567 = 0.9134 (by hand), so its 0.9150 is wrong, and so
    # is the copy of it; a = 1.5 × 0.123 = 0.1845 exactly.
    assert Fraction("1.5") * Fraction("0.123") == Fraction("0.1845")
    b = Fraction("2.0") * Fraction("0.4567")
    assert b == Fraction("0.9134")
    with mpmath.workdps(50):
        assert not rounds_to(mpmath.mpf(b.numerator) / b.denominator, "0.9150")
    checks = json_checks(tmp_path, SUBSTITUTED)
    assert verdicts_at(checks, SUBSTITUTED, "0.1845", 1) == {"exact"}
    assert verdicts_at(checks, SUBSTITUTED, "0.9150", 1) == {"wrong"}
    # the line's own inputs (the weights 0.5 and 0.25) are no results: not checked there
    assert not verdicts_at(checks, SUBSTITUTED, "0.25", 1)


RESTATED_STATE = """# A running output

First pass:
```
O₁[0] = 0.026×5 + 0.974×7
      = 6.96

O₁[1] = 0.5×5 + 0.5×7
      = 6.0
```

State after the first pass:
```
O₁ = [[6.96],
      [6.0]]
```

Second pass:
```
O₂[0] = 1.0 × 6.96 + 0.5 × 6.0
      = 9.96
```
"""


def test_a_repeated_result_is_the_line_that_worked_it_out(tmp_path: Path) -> None:
    # 6.96 is O₁[0] = 0.026×5 + 0.974×7 = 6.948 (by hand), printed wrong, and written again
    # in a state table the draft may read as given; the second pass computes from it. The
    # 6.96 it writes is the line that worked it out, again (wrong, inherited), not the
    # table's entry read as exact, and so the second pass is wrong for the quantity:
    # 1.0 × 6.948 + 0.5 × 6.0 = 9.948, which prints as 9.95
    first = Fraction("0.026") * 5 + Fraction("0.974") * 7
    assert first == Fraction("6.948") and Fraction("0.5") * 5 + Fraction("0.5") * 7 == 6
    with mpmath.workdps(50):
        assert not rounds_to(mpmath.mpf("6.948"), "6.96")
        second = 1 * mpmath.mpf("6.948") + mpmath.mpf("0.5") * 6
        assert not rounds_to(second, "9.96")
    checks = json_checks(tmp_path, RESTATED_STATE)
    assert verdicts_at(checks, RESTATED_STATE, "6.96", 2) == {"wrong"}
    assert verdicts_at(checks, RESTATED_STATE, "9.96") == {"wrong"}
