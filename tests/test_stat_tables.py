"""A table of named statistics, one row per row of a matrix (``"a": mean=2.0, std=1.0``).

Each fixture is written here; the expected verdicts are worked out by hand in the
comments, never read from symtf's output.
"""

from __future__ import annotations

from pathlib import Path

from article_checks import placed

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


NORMALIZED = """\
# Rows normalised

```python
x = [
    [1.0, 3.0],   # "a"
    [2.0, 6.0],   # "b"
    [1.0, 4.0],   # "c"
]

"a": mean=2.0, std=1.0
"b": mean=4.0, std=2.5
"c": mean=2.5, std=1.5
```

After normalising each row:

```python
normalized_x = [
    [-1.0, 1.0],
    [{b0}, {b1}],
    [-1.0, 1.0],
]
```
"""


def test_a_literal_named_the_normalisation_of_a_tensor_is_checked_as_it(
    tmp_path: Path,
) -> None:
    # normalized_x is x with each row less its mean, over its deviation (divided by n):
    # (1 - 2)/1 = -1, (3 - 2)/1 = 1; (2 - 4)/2 = -1, (6 - 4)/2 = 1; (1 - 2.5)/1.5 = -1,
    # (4 - 2.5)/1.5 = 1. Row "b" is printed as -0.8 and 0.8: computed with the table's
    # wrong deviation 2.5 (-2/2.5 = -0.8), so it is wrong, carried from that 2.5.
    got = placed(tmp_path, NORMALIZED.format(b0="-0.8", b1="0.8"))
    rows = [(line, p, v, cause) for line, p, v, cause in got if line in (19, 20, 21)]
    assert [(line, p, v) for line, p, v, _ in rows] == [
        (19, "-1.0", "exact"),
        (19, "1.0", "exact"),
        (20, "-0.8", "wrong"),
        (20, "0.8", "wrong"),
        (21, "-1.0", "exact"),
        (21, "1.0", "exact"),
    ]
    assert {cause for line, _, v, cause in rows if v == "wrong"} == {"inherited"}


def test_a_literal_no_row_of_which_is_the_normalisation_stays_an_input(
    tmp_path: Path,
) -> None:
    # Every row off ([-0.9, 0.9], [-0.8, 0.8], [-0.7, 0.7] against [-1, 1] each): the name
    # alone does not make the literal a result, so it is read as data the post gives,
    # and none of it is judged.
    text = (
        NORMALIZED.format(b0="-0.8", b1="0.8")
        .replace("normalized_x = [\n    [-1.0, 1.0],", "normalized_x = [\n    [-0.9, 0.9],")
        .replace("    [-1.0, 1.0],\n]", "    [-0.7, 0.7],\n]")
    )
    got = placed(tmp_path, text)
    assert not any(line in (19, 20, 21) for line, _, _, _ in got)


SCORES = """\
# Two models

| task | metric | model A | model B | {heading} |
| ---- | ------ | ------- | ------- | ---------- |
| qa   | acc    | 0.812   | 0.807   | 0.005      |
| qa   | f1     | 0.744   | 0.751   | 0.007      |
| nli  | acc    | 0.690   | 0.690   | 0          |
| sum  | rouge  | 0.415   | 0.402   | 0.021      |
"""


def test_a_column_headed_as_a_difference_is_checked_as_one(tmp_path: Path) -> None:
    # Two cells name each row, then the numbers. |A − B|: 0.812 − 0.807 = 0.005,
    # 0.751 − 0.744 = 0.007, 0.690 − 0.690 = 0, all as printed; 0.415 − 0.402 = 0.013, so
    # 0.021 is wrong (even with A and B anywhere within their roundings, the difference
    # lies in [0.012, 0.014]). Three of the four agree with one pair of columns only.
    got = placed(tmp_path, SCORES.format(heading="difference"))
    assert [(line, p, v) for line, p, v, _ in got] == [
        (5, "0.005", "exact"),
        (6, "0.007", "exact"),
        (7, "0", "exact"),
        (8, "0.021", "wrong"),
    ]


def test_a_column_with_another_heading_is_not_read_as_a_difference(tmp_path: Path) -> None:
    # Headed "std err" the last column is one more column the table gives: nothing is
    # checked, and its 0.021 is not called wrong.
    got = placed(tmp_path, SCORES.format(heading="std err"))
    assert all(v in ("exact", "rounded") for _, _, v, _ in got)
    assert not any(p == "0.021" for _, p, _, _ in got)
