"""Every printed number keeps its place, from the first byte read to the report.

Expected places are found in the fixture text itself (``str.index`` on the line
the number is written on), never from symtf's own output.
"""

from __future__ import annotations

import json
import tomllib
from pathlib import Path

import pytest

from symtf import spec
from symtf.draft.read import Found, draft_toml, extract_text
from symtf.errors import SpecError
from symtf.place import Place, place_toml

ARTICLE = """\
# Attention by hand

The scale is $\\sqrt{4} = 2.0$ and the scores are

$$
S = \\begin{bmatrix} 0.50 & -1.25 \\\\
{-0.75} & 2.00 \\end{bmatrix}
$$

| token | weight |
|---|---|
| I | 0.30 |
| AI | 0.70 |

mean = (0.1 + 0.3) / 2
     = 0.2
"""


def _column(text: str, line: int, needle: str, nth: int = 0) -> int:
    """The 1-based column of the ``nth`` occurrence of ``needle`` on a 1-based line."""
    row = text.splitlines()[line - 1]
    at = -1
    for _ in range(nth + 1):
        at = row.index(needle, at + 1)
    return at + 1


def _by_rows(found: list[Found]) -> dict[tuple[tuple[str, ...], ...], Found]:
    return {f.rows: f for f in found}


def test_every_entry_of_a_matrix_has_its_own_line_and_columns() -> None:
    found = _by_rows(extract_text(ARTICLE, "md"))
    m = found[(("0.50", "-1.25"), ("-0.75", "2.00"))]
    expected = [
        (6, "0.50", 0),
        (6, "-1.25", 0),
        (7, "-0.75", 0),
        (7, "2.00", 0),
    ]
    assert [(p.line, p.column, p.end_column) for p in m.places] == [
        (line, _column(ARTICLE, line, s, n), _column(ARTICLE, line, s, n) + len(s))
        for line, s, n in expected
    ]
    assert all(p.cell is None and not p.output for p in m.places)


def test_a_table_and_a_continued_equation_are_placed_where_their_numbers_stand() -> None:
    found = _by_rows(extract_text(ARTICLE, "md"))
    table = found[(("0.30",), ("0.70",))]
    assert [(p.line, p.column) for p in table.places] == [
        (12, _column(ARTICLE, 12, "0.30")),
        (13, _column(ARTICLE, 13, "0.70")),
    ]
    (mean,) = [
        f
        for f in extract_text(ARTICLE, "md")
        if f.kind == "arithmetic" and "0.1" in (f.latex or "")
    ]
    assert mean.rows == (("0.2",),)
    assert [(p.line, p.column) for p in mean.places] == [(16, _column(ARTICLE, 16, "0.2"))]
    scale = [f for f in extract_text(ARTICLE, "md") if f.rows == (("2.0",),)]
    assert scale and all(
        (f.places[0].line, f.places[0].column) == (3, _column(ARTICLE, 3, "2.0")) for f in scale
    )


def _notebook() -> tuple[str, str]:
    """A notebook written with ASCII escapes (é as \\u00e9, quotes escaped) and its
    markdown cell's source."""
    source = 'Caf\u00e9 "scores": $x = 0.25 + 0.5 = 0.75$\nthen [0.1, 0.2]\n'
    nb = {
        "cells": [
            {"cell_type": "markdown", "metadata": {}, "source": source.splitlines(True)},
            {
                "cell_type": "code",
                "metadata": {},
                "execution_count": 1,
                "source": ["import numpy as np\n", "np.array([[1.5, 2.5]])"],
                "outputs": [
                    {
                        "output_type": "execute_result",
                        "execution_count": 1,
                        "metadata": {},
                        "data": {"text/plain": ["array([[1.5, 2.5]])"]},
                    }
                ],
            },
        ],
        "metadata": {},
        "nbformat": 4,
        "nbformat_minor": 5,
    }
    return json.dumps(nb, indent=1, ensure_ascii=True), source


def test_a_notebook_number_has_its_raw_file_place_and_its_cell_place() -> None:
    raw, source = _notebook()
    found = extract_text(raw, "ipynb")
    (result,) = [f for f in found if f.kind == "arithmetic"]
    (p,) = result.places
    file_line = next(k for k, ln in enumerate(raw.splitlines(), 1) if "0.75" in ln)
    assert (p.line, p.column) == (file_line, _column(raw, file_line, "0.75"))
    assert raw.splitlines()[p.line - 1][p.column - 1 : p.end_column - 1] == "0.75"
    assert (p.cell, p.cell_line, p.cell_column, p.output) == (
        0,
        1,
        source.splitlines()[0].index("0.75") + 1,
        False,
    )
    (vector,) = [f for f in found if f.rows == (("0.1", "0.2"),)]
    assert [(q.cell_line, q.cell_column) for q in vector.places] == [(2, 7), (2, 12)]
    (printed,) = [f for f in found if f.rows == (("1.5", "2.5"),)]
    out_line = next(k for k, ln in enumerate(raw.splitlines(), 1) if '"array([[1.5' in ln)
    assert [(q.line, q.cell, q.cell_line, q.output) for q in printed.places] == [
        (out_line, 1, 1, True),
        (out_line, 1, 1, True),
    ]
    text = "array([[1.5, 2.5]])"
    assert [q.cell_column for q in printed.places] == [text.index("1.5") + 1, text.index("2.5") + 1]


def test_the_draft_writes_places_and_the_parser_reads_them_back(tmp_path: Path) -> None:
    toml = draft_toml(extract_text(ARTICLE, "md"), source="post.md")
    data = tomllib.loads(toml)
    claims = [c for c in data["claims"] if "places" in c]
    assert claims and all(
        len(c["places"]) == sum(len(r.split()) for r in c["printed"].strip().splitlines())
        for c in claims
    )
    path = tmp_path / "d.toml"
    path.write_text(toml, encoding="utf-8")
    d = spec.load(path)
    matrix = next(c for c in d.claims if len(c.places) == 4)
    assert matrix.places[2] == Place(
        7, _column(ARTICLE, 7, "-0.75"), _column(ARTICLE, 7, "-0.75") + 5
    )


@pytest.mark.parametrize(
    ("places", "message"),
    [
        ("[{ line = 3 }]", "expected 2 place(s), one per printed number, found 1"),
        ('"3:1"', "expected an array of places"),
        ("[{ line = 3 }, { column = 2 }]", "places[1].line: required key is missing"),
        ("[{ line = 3 }, { line = 0 }]", "places[1].line: expected a whole number from 1"),
        ("[{ line = 3 }, { line = 3, col = 2 }]", "places[1]: unknown key 'col'"),
        (
            "[{ line = 3 }, { line = 3, column = 5, end_column = 5 }]",
            "places[1].end_column: expected a column after column",
        ),
        ("[{ line = 3 }, { line = 3, output = true }]", "expected cell"),
        ('[{ line = 3 }, { line = 3, cell = "2" }]', "places[1].cell: expected a whole number"),
        ("[{ line = 3 }, 4]", "places[1]: expected a table like"),
    ],
)
def test_bad_places_are_named_with_what_was_expected(places: str, message: str) -> None:
    text = (
        'title = "t"\n[model]\narchitecture = "none"\n\n[[claims]]\nlabel = "x"\n'
        f'expression = "1 + 1"\nprinted = "2 2.0"\nplaces = {places}\n'
    )
    with pytest.raises(SpecError) as e:
        spec.loads(text, "d.toml")
    assert message in str(e.value) and "d.toml: claims[0].places" in str(e.value)


def test_a_place_prints_as_toml_and_as_report_fields() -> None:
    p = Place(120, 9, 14, cell=3, cell_line=2, cell_column=5, output=True)
    assert tomllib.loads(f"p = {place_toml(p)}")["p"] == {
        "line": 120,
        "column": 9,
        "end_column": 14,
        "cell": 3,
        "cell_line": 2,
        "cell_column": 5,
        "output": True,
    }
    assert p.fields() == {
        "source_line": 120,
        "source_column": 9,
        "source_end_column": 14,
        "cell_index": 3,
        "cell_line": 2,
        "cell_column": 5,
        "cell_output": True,
    }
    assert p.where() == "output of cell 3, line 2"
    assert Place(4).fields() == {"source_line": 4}


CHAIN = """\
# A mean

$$
\\begin{aligned}
\\mu &= \\frac{0.2 + 0.4}{2} \\\\
    &= 0.31
\\end{aligned}
$$
"""


def test_a_displayed_chain_over_lines_is_judged_on_its_result_line(tmp_path: Path) -> None:
    """(0.2 + 0.4) / 2 = 0.3, so the printed 0.31 is wrong; it is written on line 6."""
    from symtf.commands.draft import check_article
    from symtf.renderers import json as render_json

    post = tmp_path / "mean.md"
    post.write_text(CHAIN, encoding="utf-8")
    report = check_article(post)
    data = render_json.derivation_dict(report)
    (check,) = [c for c in data["checks"] if c["printed"] == "0.31"]
    assert check["verdict"] == "wrong"
    assert (check["source_line"], check["source_column"]) == (6, _column(CHAIN, 6, "0.31"))
    assert check["line"] == check["printed_line"] == 6


def test_hand_derivations_have_no_place_fields() -> None:
    from symtf.renderers import json as render_json

    root = Path(__file__).resolve().parent.parent / "derivations"
    report = spec.load(root / "i_love_ai.toml")
    assert all(not c.places for c in report.claims)
    from symtf.checking.compare import check

    data = render_json.derivation_dict(check(report))
    assert not any("source_column" in c or "cell_index" in c for c in data["checks"])


NO_NUMBER_LOST = """\
# Every number ends somewhere

The embeddings are $E = \\begin{bmatrix} 0.1 & 0.2 \\\\ 0.3 & 0.4 \\end{bmatrix}$ and the
scale is $\\sqrt{2} \\approx 1.414$, so the first score is $0.1 \\times 0.3 + 0.2 \\times 0.4 = 0.11$.

A loose remark: the loss fell to 0.4581 after 3 steps, and to 0.1203 later.

| x | y |
|---|---|
| 1.5 | 2.5 |

```python
import numpy as np
w = np.array([0.5, -0.5])  # w = [0.5, -0.5]
print(w * 2)
# about 0.999 here
```
```
[ 1. -1.]
loss 0.2718
```
"""


def _notebook_with_outputs() -> str:
    cells = [
        {"cell_type": "markdown", "metadata": {}, "source": "So $a = 0.25 + 0.5 = 0.75$."},
        {
            "cell_type": "code",
            "metadata": {},
            "execution_count": 1,
            "source": "x = 0.3\nprint(x)  # 0.3\nprint('noise', 0.777)",
            "outputs": [
                {"output_type": "stream", "name": "stdout", "text": ["0.3\n", "noise 0.777\n"]}
            ],
        },
    ]
    return json.dumps({"cells": cells, "metadata": {}, "nbformat": 4, "nbformat_minor": 5})


@pytest.mark.parametrize(("name", "text"), [("post.md", NO_NUMBER_LOST), ("nb.ipynb", "")])
def test_every_number_read_is_checked_or_listed_with_a_reason(
    tmp_path: Path, name: str, text: str
) -> None:
    """No number disappears: each one the reader finds is a check or an unchecked entry."""
    from symtf.commands.draft import check_article
    from symtf.draft import article_kind
    from symtf.draft.read import read
    from symtf.renderers import json as render_json

    text = text or _notebook_with_outputs()
    post = tmp_path / name
    post.write_text(text, encoding="utf-8")
    reading = read(text, article_kind(post), path=name, code=True)
    seen = {
        (p.line, p.column)
        for f in [*reading.found(), *(f for _, f in reading.in_code())]
        for p in f.places
    }
    data = render_json.derivation_dict(check_article(post))
    reported = {(c["source_line"], c.get("source_column")) for c in data["checks"]}
    for u in data["unchecked"]:
        assert u["claim"].strip() and u["reason"].strip()  # never an empty name or reason
        reported |= {(p["source_line"], p.get("source_column")) for p in u.get("places", [])}
    for u in data["inputs"]:  # the article's inputs: stated, not results
        assert u["claim"].strip()
        reported |= {(p["source_line"], p.get("source_column")) for p in u.get("places", [])}
    assert seen and seen <= reported, sorted(seen - reported)
    if name == "post.md":  # the numbers in prose, an output and a comment are among them
        lines = text.splitlines()
        for number in ("0.4581", "0.1203", "0.2718", "0.999"):
            row = next(k for k, ln in enumerate(lines, 1) if number in ln)
            assert (row, lines[row - 1].index(number) + 1) in seen, number
