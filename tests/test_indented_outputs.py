"""A notebook exported to Markdown prints under its code in an indented block.

``jupyter nbconvert --to markdown`` writes each cell's code as a ```` ```python ```` fence
and what it printed as an indented code block (four spaces) right after it. That block is
the code's output, as a plain fence after the code is, so each printed value is checked
against what the code computes; it used to be read as prose, where no step explains it.
Expected values are worked by hand below.
"""

from __future__ import annotations

from pathlib import Path

from tests.article_checks import json_checks, position, verdicts_at

# x·w = 1·0.5 + 2·(−0.25) + 3·0.125 = 0.5 − 0.5 + 0.375 = 0.375
# x·0.25 = [0.25, 0.5, 0.75]; the post prints 0.57 for the last entry
POST = """# A dot product

```python
import numpy as np
x = np.array([1.0, 2.0, 3.0])
w = np.array([0.5, -0.25, 0.125])
print("dot:", x @ w)
print("quarter:", x * 0.25)
```

    dot: 0.375
    quarter: [0.25 0.5  0.57]


The end.
"""


def test_an_indented_block_after_code_is_what_it_printed(tmp_path: Path) -> None:
    checks = json_checks(tmp_path, POST)
    assert verdicts_at(checks, POST, "0.375") == {"exact"}
    assert verdicts_at(checks, POST, "0.25 ") == {"exact"}
    assert verdicts_at(checks, POST, "0.5 ") == {"exact"}
    off = verdicts_at(checks, POST, "0.57")
    assert off and off <= {"slip", "wrong"}


def test_the_printed_values_keep_their_own_places(tmp_path: Path) -> None:
    checks = json_checks(tmp_path, POST)
    (off,) = [c for c in checks if c["printed"] == "0.57"]
    assert (off["source_line"], off["source_column"]) == position(POST, "0.57")


def test_an_indented_block_apart_from_code_is_prose(tmp_path: Path) -> None:
    # paragraphs between the code and the block: the block is the article's, not printed
    words = "The code above prints two things.\n\nHere is what we expect it to print instead."
    post = POST.replace("```\n\n    dot", f"```\n\n{words}\n\n    dot")
    checks = json_checks(tmp_path, post)
    line, _ = position(post, "0.57")
    assert not any(c["source_line"] == line and c["verdict"] in ("slip", "wrong") for c in checks)
