"""A code literal that writes out results the article displays just above it is a printing
of those results, not an input: each entry is judged as the line it repeats.

The articles are written for these tests; every expected value is a hand derivation from
the numbers the lines display (exact decimal arithmetic with fractions).
"""

from __future__ import annotations

from fractions import Fraction as F
from pathlib import Path

from symtf.commands.draft import check_article

WORKED = """# Mixing two value rows

Worked out, query by query:

```python
Row 0, col 0: 0.25 × 1.4 + 0.75 × 0.6 = 0.80
Row 0, col 1: 0.25 × 0.9 - 0.75 × 0.3 = 0.00
Row 1, col 0: 0.62 × 1.4 + 0.38 × 0.6 = 1.096
Row 1, col 1: 0.62 × 0.9 - 0.38 × 0.3 = {last}
```

Putting it together:

```python
out = [
    [{a}, {b}],    # query 0
    [{c}, {d}]   # query 1
]
```
"""

#: By hand: 0.35 + 0.45, 0.225 − 0.225, 0.868 + 0.228, 0.558 − 0.114.
EXACT = (F("0.80"), F(0), F("1.096"), F("0.444"))


def _verdicts(tmp_path: Path, text: str) -> dict[int, list[tuple[str, str]]]:
    path = tmp_path / "post.md"
    path.write_text(text, encoding="utf-8")
    report = check_article(path)
    out: dict[int, list[tuple[str, str]]] = {}
    for r in report.results:
        for c in r.checks:
            out.setdefault(r.claim.source_line or 0, []).append((c.printed, c.verdict))
    return out


def _line_of(text: str, needle: str) -> int:
    return next(i for i, line in enumerate(text.splitlines(), 1) if line.strip().startswith(needle))


def test_a_literal_restating_displayed_results_is_judged_as_them(tmp_path: Path) -> None:
    """0.443 is printed where the line gives 0.444 (by hand): wrong on the line, and wrong
    again where the literal writes it out; the other entries are the lines' exact values."""
    assert EXACT[3] == F("0.62") * F("0.9") - F("0.38") * F("0.3")
    text = WORKED.format(last="0.443", a="0.80", b="0.00", c="1.096", d="0.443")
    verdicts = _verdicts(tmp_path, text)
    first, second = _line_of(text, "[0.80"), _line_of(text, "[1.096")
    assert sorted(verdicts[first]) == [("0.00", "exact"), ("0.80", "exact")]
    assert sorted(verdicts[second]) == [("0.443", "wrong"), ("1.096", "exact")]


def test_a_literal_that_does_not_repeat_every_result_stays_given(tmp_path: Path) -> None:
    """One entry (1.097) repeats no displayed result: the literal is an input as written,
    and none of its entries is judged (a stated input is never flagged)."""
    text = WORKED.format(last="0.444", a="0.80", b="0.00", c="1.097", d="0.444")
    verdicts = _verdicts(tmp_path, text)
    assert _line_of(text, "[0.80") not in verdicts
    assert _line_of(text, "[1.097") not in verdicts
    assert all(v == "exact" for vs in verdicts.values() for _, v in vs)


AHEAD = """# Frequencies of a small rotary table

The pairs turn at these rates:

```
Pair 0:  w₀ = 1.0
Pair 1:  w₁ = {w1}
Pair 3:  w₃ = {w3}
```

Worked out, with base 100 and d = 8:

```
w₀ = 100^(-2×0/8) = 1.0
w₁ = 100^(-2×1/8) = 0.316
```
"""


def test_a_number_set_by_name_ahead_of_its_working_is_judged_as_that_line(
    tmp_path: Path,
) -> None:
    """w₁ = 100^(−1/4) = 1/√10 = 0.31623 (by hand) prints as 0.316: the list's w₁ = 0.316 is
    that line again; written 0.361 it names another value and is not linked. w₃ is worked out
    nowhere below: it is the worked lines' expression at index 3, 100^(−6/8) = 10^(−3/2) =
    0.0316 (by hand), so 0.178 is wrong (tests/test_draft_worked_index.py)."""
    assert round(1 / 10**0.5, 3) == 0.316  # 100^(-1/4) = 10^(-1/2)
    text = AHEAD.format(w1="0.316", w3="0.178")
    verdicts = _verdicts(tmp_path, text)
    assert verdicts[_line_of(text, "Pair 1:")] == [("0.316", "rounded")]
    assert verdicts[_line_of(text, "Pair 0:")] == [("1.0", "exact")]
    assert verdicts[_line_of(text, "Pair 3:")] == [("0.178", "wrong")]
    text = AHEAD.format(w1="0.361", w3="0.178")
    verdicts = _verdicts(tmp_path, text)
    assert _line_of(text, "Pair 1:") not in verdicts  # another value: not the line's
