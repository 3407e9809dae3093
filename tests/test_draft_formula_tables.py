"""A table of a formula the code states (``theta = 0.25 * step``, then ``| Step | θ (rad) |``)
is checked row by row: each entry is the formula at its row's first cell.

The articles are written for these tests; the expected values are by hand
(0.25 × 0 = 0, 0.25 × 1 = 0.25, 0.25 × 2 = 0.5).
"""

from __future__ import annotations

from fractions import Fraction as F
from pathlib import Path

from symtf.commands.draft import check_article

ARTICLE = """# Angles by step

```python
theta = 0.25 * step
```

So:

| {first} | {second} |
| ---- | ------- |
| 0    | 0.0     |
| 1    | 0.25    |
| 2    | {two}    |
"""


def _verdicts(tmp_path: Path, text: str) -> dict[int, list[tuple[str, str]]]:
    path = tmp_path / "angles.md"
    path.write_text(text, encoding="utf-8")
    out: dict[int, list[tuple[str, str]]] = {}
    for r in check_article(path).results:
        for c in r.checks:
            out.setdefault(r.claim.source_line or 0, []).append((c.printed, c.verdict))
    return out


def _line_of(text: str, needle: str) -> int:
    return next(i for i, line in enumerate(text.splitlines(), 1) if needle in line)


def test_each_row_is_the_formula_at_its_first_cell(tmp_path: Path) -> None:
    """0.25 × 2 = 0.5 (by hand): the table's 0.55 is wrong, its other rows exact."""
    assert F("0.25") * 2 == F("0.5")
    text = ARTICLE.format(first="Step", second="θ (rad)", two="0.55")
    verdicts = _verdicts(tmp_path, text)
    assert verdicts[_line_of(text, "| 0 ")] == [("0.0", "exact")]
    assert verdicts[_line_of(text, "| 1 ")] == [("0.25", "exact")]
    assert verdicts[_line_of(text, "| 2 ")] == [("0.55", "wrong")]


def test_the_name_in_words_heads_the_column_too(tmp_path: Path) -> None:
    text = ARTICLE.format(first="step", second="theta", two="0.5")
    verdicts = _verdicts(tmp_path, text)
    assert verdicts[_line_of(text, "| 2 ")] == [("0.5", "exact")]


def test_a_table_headed_by_other_names_stays_an_input(tmp_path: Path) -> None:
    """The columns name no formula of the code: nothing is judged (a stated input is never
    flagged)."""
    text = ARTICLE.format(first="Token", second="Score", two="0.55")
    verdicts = _verdicts(tmp_path, text)
    assert not any(line in verdicts for line in range(10, 14))
