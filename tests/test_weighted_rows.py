"""Value vectors weighted one line each by a softmax row the article printed rounded.

Each fixture is written here. The expected values come from mpmath at 30 digits:

- softmax([1, 0, 3]) = 0.114195199385, 0.0420100661341, 0.843794734481, printed (each a
  correct rounding) as ``[0.1, 0.0, 0.8]``;
- the weighted rows, each value row times its exact weight:
  ``[0.228390398769, 0.456780797538, 0.114195199385]``,
  ``[0.126030198402, 0, 0.21005033067]``,
  ``[0.843794734481, 1.68758946896, 1.68758946896]``.

The article multiplies the rounded weights instead, and writes ``[0.2, 0.4, 0.1]``,
``[0.0, 0.0, 0.0]`` and ``[0.8, 1.6, 1.6]``: at one decimal 0.4568 is 0.5 (0.4 a slip,
within one unit), 0.1260 and 0.2101 are 0.1 and 0.2 (0.0 wrong, more than a unit off),
1.6876 is 1.7 (1.6 a slip); the other entries are correct roundings (0 exact).
"""

from __future__ import annotations

from pathlib import Path

from article_checks import json_checks, line_of, placed, verdicts_at

ARTICLE = """\
# Weighting the values by hand

The scores of the first query against the three keys are

$$
S = \\begin{{bmatrix}} 1 & 0 & 3 \\end{{bmatrix}}
$$

and the value vectors, one row per key, are

$$
V = \\begin{{bmatrix}} 2 & 4 & 1 \\\\ 3 & 0 & 5 \\\\ 1 & 2 & 2 \\end{{bmatrix}}
$$
{softmax}
Multiply each value vector by its weight:

```
1: {w0} * [2, 4, 1] = [0.2, 0.4, 0.1]
2: {w1} * [3, 0, 5] = [0.0, 0.0, 0.0]
3: {w2} * [1, 2, 2] = [0.8, 1.6, 1.6]
```

Add the weighted values up:

```
  [0.2, 0.4, 0.1]
+ [0.0, 0.0, 0.0]
+ [0.8, 1.6, 1.6]
```
"""

SOFTMAX = """
Take the softmax of the scores:

```
softmax([1, 0, 3]) = [0.1, 0.0, 0.8]
```
"""

#: (printed, verdict) of each weighted row, from the mpmath values above.
EXPECTED = [
    [("0.2", "rounded"), ("0.4", "slip"), ("0.1", "rounded")],
    [("0.0", "wrong"), ("0.0", "exact"), ("0.0", "wrong")],
    [("0.8", "rounded"), ("1.6", "slip"), ("1.6", "slip")],
]


def _article(weights: tuple[str, str, str] = ("0.1", "0.0", "0.8"), softmax: str = SOFTMAX) -> str:
    w0, w1, w2 = weights
    return ARTICLE.format(softmax=softmax, w0=w0, w1=w1, w2=w2)


def _row_verdicts(tmp_path: Path, text: str, line: int) -> list[tuple[str, str]]:
    """(printed, verdict) of the three results written on ``line``, left to right."""
    checks = json_checks(tmp_path, text)
    right = text.splitlines()[line - 1].rsplit("[", 1)[0]
    at = [c for c in checks if c["source_line"] == line and c.get("source_column", 0) > len(right)]
    at.sort(key=lambda c: c["source_column"])
    return [(c["printed"], c["verdict"]) for c in at]


def test_weights_that_spell_a_printed_softmax_row_carry_its_rounding(tmp_path: Path) -> None:
    text = _article()
    for k, needle in enumerate(("1: 0.1", "2: 0.0", "3: 0.8")):
        assert _row_verdicts(tmp_path, text, line_of(text, needle)) == EXPECTED[k]


def test_the_rows_written_again_below_restate_the_weighted_rows(tmp_path: Path) -> None:
    text = _article()
    first = line_of(text, "  [0.2, 0.4, 0.1]")
    for k in range(3):
        assert _row_verdicts(tmp_path, text, first + k) == EXPECTED[k]


def test_an_off_weighted_entry_says_it_follows_from_the_rounded_weight(tmp_path: Path) -> None:
    text = _article()
    line = line_of(text, "1: 0.1")
    causes = {
        (printed, cause) for at, printed, verdict, cause in placed(tmp_path, text) if at == line
    }
    assert ("0.4", "propagated-rounding") in causes


def test_weights_no_printed_row_gives_are_the_lines_own_numbers(tmp_path: Path) -> None:
    # with no softmax printed above, 0.1, 0.0 and 0.8 are weights the article chooses:
    # each line is right as written
    text = _article(softmax="")
    checks = json_checks(tmp_path, text)
    assert not [c for c in checks if c["verdict"] in ("slip", "wrong")]
    assert verdicts_at(checks, text, "0.4") == {"exact"}


def test_weights_out_of_the_rows_order_are_not_read_as_that_row(tmp_path: Path) -> None:
    # 0.0, 0.1, 0.8 down the lines is not the printed row 0.1, 0.0, 0.8 in order: each
    # line is its own arithmetic, right as written
    text = (
        _article(weights=("0.0", "0.1", "0.8"))
        .replace("0.0 * [2, 4, 1] = [0.2, 0.4, 0.1]", "0.0 * [2, 4, 1] = [0.0, 0.0, 0.0]")
        .replace("0.1 * [3, 0, 5] = [0.0, 0.0, 0.0]", "0.1 * [3, 0, 5] = [0.3, 0.0, 0.5]")
    )
    for needle in ("1: 0.0", "2: 0.1", "3: 0.8"):
        got = _row_verdicts(tmp_path, text, line_of(text, needle))
        assert got and all(v == "exact" for _, v in got)


def test_a_row_written_alone_later_restates_nothing(tmp_path: Path) -> None:
    # a row of zeros printed on its own further down may be any row of zeros: only the
    # weighted rows written again together, in their order, restate them
    text = _article() + "\nThe gradient of the bias is\n\n```\n[0.0, 0.0, 0.0]\n```\n"
    checks = json_checks(tmp_path, text)
    line = line_of(text, "The gradient") + 3
    assert not [c for c in checks if c["source_line"] == line and c["verdict"] in ("slip", "wrong")]
