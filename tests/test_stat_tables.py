"""A table of named statistics, one row per row of a matrix (``"a": mean=2.0, std=1.0``).

Each fixture is written here; the expected verdicts are worked out by hand in the
comments, never read from symtf's output.
"""

from __future__ import annotations

from pathlib import Path

from symtf.commands.draft import check_article

TABLE = """\
# Row statistics

```python
rows = [
    [1.0, 3.0],   # "a"
    [2.0, 6.0],   # "b"
    [1.0, 4.0],   # "c"
]

# each row's statistics
"a": mean=2.0, std=1.0
"b": mean={b_mean}, std=2.5
"c": mean=2.5, std=1.5
```
"""


def _checks(tmp_path: Path, text: str) -> list[tuple[int | None, str, str]]:
    path = tmp_path / "post.md"
    path.write_text(text, encoding="utf-8")
    return [
        (r.claim.source_line, c.printed, c.verdict)
        for r in check_article(path).results
        for c in r.checks
    ]


def test_each_column_is_the_statistic_it_names_of_its_own_row(tmp_path: Path) -> None:
    # Row means: (1 + 3)/2 = 2, (2 + 6)/2 = 4, (1 + 4)/2 = 2.5: the mean column agrees on
    # every row, so the table's rows are the rows of `rows`. Deviations from the mean are
    # ±1, ±2, ±1.5: divided by n = 2 the variances are 1, 4, 2.25 and the deviations 1,
    # 2, 1.5 (two of the three printed agree; divided by n − 1 = 1 none would: √2, √8,
    # √4.5). The 2.5 of "b" is wrong: its deviation is 2.
    got = _checks(tmp_path, TABLE.format(b_mean="4.0"))
    assert sorted(got) == [
        (11, "1.0", "exact"),
        (11, "2.0", "exact"),
        (12, "2.5", "wrong"),
        (12, "4.0", "exact"),
        (13, "1.5", "exact"),
        (13, "2.5", "exact"),
    ]


def test_a_table_no_column_of_which_fits_every_row_is_not_judged(tmp_path: Path) -> None:
    # With "b": mean=4.5 neither column agrees on every row (the means 2, 4, 2.5 against
    # 2.0, 4.5, 2.5): nothing says the table is about these rows, so no number of it is
    # judged against them, and none is called wrong.
    got = _checks(tmp_path, TABLE.format(b_mean="4.5"))
    assert all(v in ("exact", "rounded") for _, _, v in got)
    assert not any(line in (11, 12, 13) for line, _, _ in got)
