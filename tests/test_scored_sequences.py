"""Sequences a beam search prints with their scores, checked as the code's scoring says.

Each fixture is written here: a three-step table over three words and the usual beam
search, its score updated by each pick (``score * -log(row[j])`` from 1.0, or
``score + log(row[j])`` from 0.0). The printed scores are what Python printed for these
sequences (float64, to the shortest repr); the exact values, from mpmath at 40 digits:

- [2, 0, 2]: -ln 0.5 · -ln 0.2 · -ln 0.5 = 0.24542771052501544617…, Python 0.24542771052501547;
  ln 0.5 + ln 0.2 + ln 0.5 = -1.8971199848858813020…, Python -1.8971199848858813;
- [1, 0, 2]: -ln 0.3 · -ln 0.6 · -ln 0.5 = 0.42629948903693510522…, Python 0.42629948903693515;
  ln 0.3 + ln 0.6 + ln 0.5 = -2.4079456086518719852…, Python -2.4079456086518722.

So the products' prints are right only as float64 computes them (17 digits past what the
exact value rounds to), and each is wrong as the other sequence's score. The output is shown
as the article's text (a shell block under the code), as such posts often paste it.
"""

from __future__ import annotations

from pathlib import Path

from article_checks import json_checks, line_of

ARTICLE = """\
# Beam search by hand

```python
from math import log

def beam_search_decoder(data, k):
    sequences = [[list(), {start}]]
    for row in data:
        all_candidates = list()
        for i in range(len(sequences)):
            seq, score = sequences[i]
            for j in range(len(row)):
                candidate = [seq + [j], {update}]
                all_candidates.append(candidate)
        ordered = sorted(all_candidates, key=lambda tup: {key})
        sequences = ordered[:k]
    return sequences

data = [[0.2, 0.3, 0.5],
        [0.6, 0.3, 0.1],
        [0.25, 0.25, 0.5]]
result = beam_search_decoder(data, 2)
for seq in result:
    print(seq)
```

Output:

```sh
[[2, 0, 2], {first}]
[[1, 0, 2], {second}]
```
"""

PRODUCT = {"start": "1.0", "update": "score * -log(row[j])", "key": "tup[1]"}
LOGS = {"start": "0.0", "update": "score + log(row[j])", "key": "-tup[1]"}


def _scores(tmp_path: Path, text: str) -> list[tuple[str, str, str]]:
    """(printed, verdict, explanation) of the printed scores, in the article's order."""
    first = line_of(text, "[[2, 0, 2]")
    checks = json_checks(tmp_path, text)
    at = sorted(
        (c for c in checks if c["source_line"] in (first, first + 1) and "." in c["printed"]),
        key=lambda c: c["source_line"],
    )
    return [(c["printed"], c["verdict"], c["explanation"]) for c in at]


def test_scores_of_products_of_minus_logs_are_float64s(tmp_path: Path) -> None:
    text = ARTICLE.format(**PRODUCT, first="0.24542771052501547", second="0.42629948903693515")
    got = _scores(tmp_path, text)
    assert [(p, v) for p, v, _ in got] == [
        ("0.24542771052501547", "rounded"),
        ("0.42629948903693515", "rounded"),
    ]
    assert all("float64" in why for _, _, why in got)


def test_scores_of_sums_of_logs(tmp_path: Path) -> None:
    text = ARTICLE.format(**LOGS, first="-1.8971199848858813", second="-2.4079456086518722")
    got = _scores(tmp_path, text)
    assert [(p, v in ("exact", "rounded")) for p, v, _ in got] == [
        ("-1.8971199848858813", True),
        ("-2.4079456086518722", True),
    ]


def test_a_score_printed_beside_the_wrong_sequence_is_off(tmp_path: Path) -> None:
    text = ARTICLE.format(**PRODUCT, first="0.42629948903693515", second="0.24542771052501547")
    got = _scores(tmp_path, text)
    assert [(p, v) for p, v, _ in got] == [
        ("0.42629948903693515", "wrong"),
        ("0.24542771052501547", "wrong"),
    ]


def test_a_sequence_shorter_than_the_table_is_not_scored(tmp_path: Path) -> None:
    # two picks for three rows: not a sequence this search keeps, so its number stays
    # unchecked rather than read as a score
    text = ARTICLE.format(
        **PRODUCT, first="0.24542771052501547", second="0.42629948903693515"
    ).replace("[[1, 0, 2], 0.42629948903693515]", "[[1, 0], 0.42629948903693515]")
    got = _scores(tmp_path, text)
    assert [(p, v) for p, v, _ in got] == [("0.24542771052501547", "rounded")]
