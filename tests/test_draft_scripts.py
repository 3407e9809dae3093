"""Posts written as a script and what it printed: a function run by a call, rule lines,
output headed as such, prints the post's output leaves out.

Each fixture is written here; every expected value is worked out by hand in the
comments from how the case is built, never read from symtf's output. Nothing is run:
the code is read with ``ast``.
"""

from __future__ import annotations

from pathlib import Path

from symtf.commands.draft import check_article

SCRIPT = """\
# Row statistics

```python
import numpy as np

x = np.array([[10.0, 20.0]])

def demo():
    x = np.array([[1.0, 2.0, 3.0], [2.0, 4.0, 9.0]])
    print("=" * 20)
    print("Row means:", x.mean(axis=1))
    print("Now the sums:")
    print(x.sum(axis=1))
    print("Row maxima:", x.max(axis=1))

demo()
print(x.sum())
```

{heading}

```
====================
Row means: [2. 5.]
Row maxima: [3. 8.]
30.0
```
"""


def _post(tmp_path: Path, text: str) -> Path:
    path = tmp_path / "post.md"
    path.write_text(text, encoding="utf-8")
    return path


def _verdicts(path: Path) -> list[tuple[int | None, str, str]]:
    """(line, printed, verdict) of every checked number, in the report's order."""
    return [
        (r.claim.source_line, c.printed, c.verdict)
        for r in check_article(path).results
        for c in r.checks
    ]


def test_a_function_run_by_its_call_prints_under_an_expected_output_heading(
    tmp_path: Path,
) -> None:
    # demo() takes nothing and returns nothing: its body is what the call runs. Its rows
    # [1, 2, 3] and [2, 4, 9] have means 6/3 = 2 and 15/3 = 5, maxima 3 and 9: the post's
    # 8 is wrong. "Now the sums:" is nowhere in the output shown, so that print and the
    # value printed under it were left out of it. demo's x is its own: the x printed
    # after the call is still [[10, 20]], whose sum is 30 (demo's would give 21).
    got = _verdicts(_post(tmp_path, SCRIPT.format(heading="### Expected Output")))
    assert got == [
        (24, "2.", "exact"),
        (24, "5.", "exact"),
        (25, "3.", "exact"),
        (25, "8.", "wrong"),
        (26, "30.0", "exact"),
    ]


def test_a_heading_of_another_part_still_ends_the_code_and_its_output(
    tmp_path: Path,
) -> None:
    # Under "### A second look" the plain block is another part of the post, not what the
    # code printed: its 8 is not judged as the maxima the code computes.
    got = _verdicts(_post(tmp_path, SCRIPT.format(heading="### A second look")))
    assert (25, "8.", "wrong") not in got


def test_a_rule_line_printed_by_repeating_a_character_is_words(tmp_path: Path) -> None:
    # print("-" * 12) prints words, not a value; the next print writes two groups of lines
    # (its label, then the array on a line of its own), so the prints pair with the
    # output by their words: v * 2 = [3, 5].
    code = (
        "```python\nimport numpy as np\nv = np.array([1.5, 2.5])\n"
        'print("-" * 12)\nprint("doubled" + ":")\nprint(v * 2)\nprint(f"sum:\\n{v.sum()}")\n'
        "```\n\n```\n------------\ndoubled:\n[3. 5.]\nsum:\n4.0\n```\n"
    )
    assert _verdicts(_post(tmp_path, code)) == [
        (13, "3.", "exact"),
        (13, "5.", "exact"),
        (15, "4.0", "exact"),
    ]


def test_a_procedure_that_returns_something_is_not_walked_as_one(tmp_path: Path) -> None:
    # make() takes no argument but returns a value: a call statement that drops its
    # result prints nothing, and nothing of its body is read as printed there.
    code = (
        "```python\nimport numpy as np\n"
        "def make():\n    print(np.array([1.0, 2.0]).sum())\n    return 1\n"
        "make()\n```\n\n```\n3.0\n```\n"
    )
    assert all(v != "wrong" for _, _, v in _verdicts(_post(tmp_path, code)))


DATA_THEN_TABLE = """\
# Data, then a table

```python
x = [
    [1.0, 2.0],
    [3.0, 5.0],
]

# what each row sums to
"a": total=3.0
"b": total=8.0
```

```python
import numpy as np
print(np.array(x).sum(axis=1))
```

```
[3. 9.]
```
"""


def test_a_python_fence_of_data_then_a_table_reads_the_data_as_code(tmp_path: Path) -> None:
    # The first fence is not Python as a whole (its table is not), but its first paragraph
    # is, and defines x: the code below reads it. Row sums: 1 + 2 = 3, 3 + 5 = 8, so the
    # printed 9 is wrong. The table after the blank line is still read as prose.
    path = _post(tmp_path, DATA_THEN_TABLE)
    assert _verdicts(path) == [(20, "3.", "exact"), (20, "9.", "wrong")]
    unchecked = [u.line for u in check_article(path).unchecked]
    assert 10 in unchecked and 11 in unchecked


def test_hand_arithmetic_fenced_as_python_stays_prose(tmp_path: Path) -> None:
    # "mean = (1 + 3) / 2" continued by "     = 2" is no Python, and "variance = 0.25"
    # defines no data: the block is prose, and its chain is checked (4 / 2 = 2).
    text = "# Mean\n\n```python\nvariance = 0.25\n\nmean = (1 + 3) / 2\n     = 2\n```\n"
    got = _verdicts(_post(tmp_path, text))
    assert (7, "2", "exact") in got
