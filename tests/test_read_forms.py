"""Forms of writing the reader reads, each in a fixture written for it.

Every expected verdict comes from an independent recomputation with mpmath (or from
how the fixture was made); every expected place from the fixture text itself.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import mpmath
import pytest
from article_checks import json_checks, position, verdicts_at

from symtf.commands.draft import check_article
from symtf.draft.read import Found, extract_text
from symtf.renderers import json as render_json


@pytest.fixture(autouse=True)
def _forty_digits() -> Iterator[None]:
    """mpmath at 40 digits in this file's tests, and the global precision restored after."""
    with mpmath.workdps(40):
        yield


def _rounds(value: mpmath.mpf, printed: str) -> bool:
    """Whether ``printed`` is ``value`` rounded to its digits (mpmath, 40 digits)."""
    text = printed.replace("−", "-")
    decimals = len(text.split(".")[1]) if "." in text else 0
    return abs(value - mpmath.mpf(text)) <= mpmath.mpf(10) ** (-decimals) / 2


# ----------------------------------------------------------------------------- chains

CHAIN = """\
# Intermediate links

$$y = 2 \\times 1.5 + 1.6 = 3 + 1.6 = 4.6$$

$$s = 0.1/\\sqrt{256} = 0.1/15 = 0.00625$$
"""


def test_each_link_of_a_chain_is_judged_on_its_own_number(tmp_path: Path) -> None:
    # 2 × 1.5 = 3 and 3 + 1.6 = 4.6; √256 = 16, so the 15 of the middle link is wrong
    # while 0.1/16 = 0.00625 is the printed result
    assert mpmath.mpf(2) * mpmath.mpf("1.5") == 3 and mpmath.sqrt(256) == 16
    assert mpmath.mpf("0.1") / 16 == mpmath.mpf("0.00625")
    checks = json_checks(tmp_path, CHAIN)
    assert verdicts_at(checks, CHAIN, "3 + 1.6") == {"exact"}
    assert verdicts_at(checks, CHAIN, "4.6") == {"exact"}
    assert verdicts_at(checks, CHAIN, "15 =") == {"wrong"}


UNITS = """\
# Memory of the scores

```
Memory = 2 × 1000 × 500
       = 1.0 million float32 values
       = 4 MB
```

The layer has 80 × 80 = 6,500 weights.
"""


def test_a_link_in_words_changes_what_is_counted(tmp_path: Path) -> None:
    # 2 × 1000 × 500 = 1,000,000 values; at 4 bytes each that is 4 MB, and the words of the
    # middle link say so: 4 is no value of 2 × 1000 × 500, and is not judged as one.
    # A unit after the result alone changes nothing: 80 × 80 = 6,400, so 6,500 is wrong.
    assert 2 * 1000 * 500 * 4 == 4_000_000 and 80 * 80 == 6400
    checks = json_checks(tmp_path, UNITS)
    assert verdicts_at(checks, UNITS, "4 MB") == set()
    assert verdicts_at(checks, UNITS, "6,500") == {"wrong"}


# ----------------------------------------------------------------------------- inline forms

INLINE = """\
# Forms written inline

Euler's constant gives `e^0.577 = 1.78`, and the gap is $|0.01 - 0.7514| = 0.7414$.

The box holds $$\\boxed{0.3 \\times 0.5 = 0.15}$$ and $\\sqrt{2} \\approx 1.414$.

In a table row: σ(1) = 0.731 | e¹ = 2.718

The layer has 80 × 80 = 6,400 weights.
"""


def test_inline_code_boxes_bars_approximations_and_thousands(tmp_path: Path) -> None:
    from fractions import Fraction as F

    exact = {  # rational: equal to the print, digit for digit
        "0.7414": abs(F("0.01") - F("0.7514")) == F("0.7414"),
        "0.15": F("0.3") * F("0.5") == F("0.15"),
        "6,400": 80 * 80 == 6400,
    }
    irrational = {  # correct roundings of irrational values (mpmath, 40 digits)
        "1.78": mpmath.exp(mpmath.mpf("0.577")),
        "1.414": mpmath.sqrt(2),
        "0.731": 1 / (1 + mpmath.exp(-1)),
        "2.718": mpmath.e,
    }
    assert all(exact.values()) and all(_rounds(v, p) for p, v in irrational.items())
    checks = json_checks(tmp_path, INLINE)
    for printed in exact:
        assert verdicts_at(checks, INLINE, printed) == {"exact"}, printed
    for printed in irrational:
        assert verdicts_at(checks, INLINE, printed) == {"rounded"}, printed


# ----------------------------------------------------------------------------- ε and powers of ten

EPSILON = """\
# LayerNorm's epsilon

$$\\sqrt{4 + 1e^{-5}} = \\sqrt{4.00001} = 2.0000025$$

$$0.5 \\times 2 \\times 10^{-5} = 1 \\times 10^{-5}$$
"""


def test_an_epsilon_written_with_a_caret_is_read_as_the_line_shows_it(tmp_path: Path) -> None:
    # √4.00001 = 2.00000249999…: the printed 2.0000025 is its rounding. Read as 1·e⁻⁵, the
    # first link would give √(4 + e⁻⁵) = 2.00168…: a false alarm on a right line.
    assert _rounds(mpmath.sqrt(mpmath.mpf("4.00001")), "2.0000025")
    assert not _rounds(mpmath.sqrt(4 + mpmath.exp(-5)), "2.0000025")
    checks = json_checks(tmp_path, EPSILON)
    assert verdicts_at(checks, EPSILON, "2.0000025") == {"rounded"}
    line, column = position(EPSILON, "1 \\times 10^{-5}")
    (power,) = [c for c in checks if c["source_line"] == line and c["printed"] == "1e-5"]
    assert power["verdict"] == "exact" and power["source_column"] == column


# ----------------------------------------------------------------------------- tables and matrices

TABLES = """\
# Tables and matrices

| f | value |
|---|---|
| $\\sigma(2)$ | $0.8808$ |
| $e^{0.5}$ | 1.6487 |

| pos | i=0 | i=1 |
|---|---|---|
| 0 | 0.000 | 1.000 |
| 1 | 0.841 | 0.540 |

$$X = \\begin{bmatrix} & d_0 & d_1 \\\\ \\text{I} & 0.1 & 0.2 \\\\ \\text{love} & 0.3 & 0.4 \\end{bmatrix}$$

$$M = \\begin{bmatrix} 0 & -\\infty \\\\ 0 & 0 \\end{bmatrix}, \\quad
H = \\begin{bmatrix} 1 & 0 & 0 \\\\ 0 & 0 & 1 \\end{bmatrix}$$

y = [0.12
     0.34
     0.56]

The model is 88.08% sure of its answer.
"""


def _found(text: str) -> Iterator[Found]:
    yield from extract_text(text, "md")


def test_tables_labelled_matrices_masks_and_column_vectors_are_read_with_places() -> None:
    found = {f.rows: f for f in _found(TABLES)}
    # a positional-encoding table: the row index column is not an entry
    pe = found[(("0.000", "1.000"), ("0.841", "0.540"))]
    assert [(p.line, p.column) for p in pe.places[2:]] == [
        position(TABLES, "0.841"),
        position(TABLES, "0.540"),
    ]
    # a bmatrix with row and column names: only the numbers
    x = found[(("0.1", "0.2"), ("0.3", "0.4"))]
    assert [(p.line, p.column) for p in x.places] == [
        position(TABLES, s) for s in ("0.1", "0.2", "0.3", "0.4")
    ]
    # a mask and a one-hot matrix
    assert (("0", "-inf"), ("0", "0")) in found
    assert (("1", "0", "0"), ("0", "0", "1")) in found
    # a column vector written one row per line
    y = found[(("0.12",), ("0.34",), ("0.56",))]
    assert [(p.line, p.column) for p in y.places] == [
        position(TABLES, s) for s in ("0.12", "0.34", "0.56")
    ]
    # a percentage in prose
    (pct,) = [f for f in found.values() if f.rows == (("88.08%",),)]
    assert (pct.places[0].line, pct.places[0].column) == position(TABLES, "88.08%")


def test_a_table_of_worked_values_is_checked_row_by_row(tmp_path: Path) -> None:
    sigma2 = 1 / (1 + mpmath.exp(-2))  # 0.880797…
    assert _rounds(sigma2, "0.8808") and _rounds(mpmath.exp(mpmath.mpf("0.5")), "1.6487")
    checks = json_checks(tmp_path, TABLES)
    assert verdicts_at(checks, TABLES, "0.8808") == {"rounded"}
    assert verdicts_at(checks, TABLES, "1.6487") == {"rounded"}
    # 88.08% restates σ(2) = 0.8808 on another scale: linked to it, and right
    assert verdicts_at(checks, TABLES, "88.08%") == {"rounded"}


# ----------------------------------------------------------------------------- code


def _loop_notebook() -> str:
    """A notebook whose loop prints a %.2e table, and whose comment restates a print."""
    cells = [
        {
            "cell_type": "code",
            "metadata": {},
            "execution_count": 1,
            "source": (
                "import numpy as np\n"
                "x = np.array([[0.25, 0.75], [0.5, 0.5]])\n"
                "print(x)\n"
                "# [[0.25 0.75]\n"
                "#  [0.5  0.5 ]]\n"
                "for k in range(2):\n"
                "    print('%d %.2e' % (k, 10.0 ** -k))\n"
            ),
            "outputs": [
                {
                    "output_type": "stream",
                    "name": "stdout",
                    "text": ["[[0.25 0.75]\n", " [0.5  0.5 ]]\n", "0 1.00e+00\n", "1 1.00e-01\n"],
                }
            ],
        }
    ]
    return json.dumps(
        {"cells": cells, "metadata": {}, "nbformat": 4, "nbformat_minor": 5}, indent=1
    )


def test_what_code_prints_or_comments_is_read_with_its_cell_place(tmp_path: Path) -> None:
    from symtf.draft.read import read

    raw = _loop_notebook()
    reading = read(raw, "ipynb", path="loop.ipynb", code=True)
    values = {(origin, f.rows[0]): f for origin, f in reading.in_code()}
    # the %.2e table a loop printed: each value on its own line of the output
    loop = [f for (origin, row), f in values.items() if origin == "output" and "e" in row[0]]
    assert sorted(f.rows[0][0] for f in loop) == ["1.00e+00", "1.00e-01"]
    assert {(f.places[0].cell_line, f.places[0].cell_column) for f in loop} == {(3, 3), (4, 3)}
    assert all(f.places[0].output and f.places[0].cell == 0 for f in loop)
    # the comment's numbers, in the cell's source
    comment = [f for (origin, _), f in values.items() if origin == "comment"]
    assert comment and all(
        not p.output and p.cell_line in (4, 5) for f in comment for p in f.places
    )
    # and none of them disappears from the report
    post = tmp_path / "loop.ipynb"
    post.write_text(raw, encoding="utf-8")
    data = render_json.derivation_dict(check_article(post))
    placed = {(c["source_line"], c.get("source_column")) for c in data["checks"]}
    for u in [*data["unchecked"], *data["inputs"]]:
        placed |= {(p["source_line"], p.get("source_column")) for p in u.get("places", [])}
    for f in [f for _, f in reading.in_code()]:
        assert {(p.line, p.column) for p in f.places} <= placed, f


@pytest.mark.parametrize(
    ("written", "read"),
    [
        ("6,400", "6,400"),
        ("2.5 \\times 10^{-3}", "2.5e-3"),
        ("\\boxed{0.5}", "0.5"),
        ("1e^{-5}", "1e-5"),
    ],
)
def test_printed_numbers_in_their_written_forms(written: str, read: str) -> None:
    from symtf.draft.read.items import numeric_cell

    assert numeric_cell(written) == read


CONSTANT = """\
# A decay written as what it is

$$\\gamma = 0.729 = 0.9^3$$

decay = 0.81 = 0.9²

rate = 0.72 = 0.9³
"""


def test_a_constant_stated_before_its_expression_is_checked_by_it(tmp_path: Path) -> None:
    from fractions import Fraction as F

    assert F("0.9") ** 3 == F("0.729") and F("0.9") ** 2 == F("0.81")
    checks = json_checks(tmp_path, CONSTANT)
    assert verdicts_at(checks, CONSTANT, "0.729") == {"exact"}
    assert verdicts_at(checks, CONSTANT, "0.81") == {"exact"}
    # 0.9³ = 0.729 by hand: 0.72 is off in its third decimal
    assert verdicts_at(checks, CONSTANT, "0.72 ")
    assert not verdicts_at(checks, CONSTANT, "0.72 ") & {"exact", "rounded"}
