"""A chain worked one code span a line, its left side written again on each line.

    `z1 = [0, 0.39, 0.39] + [0.39, 0, 0.39] + [0.22, 0.22, 0]`
    `z1 = [0 + 0.39 + 0.22, 0.39 + 0 + 0.22, 0.39 + 0.39 + 0]`
    `z1 = [0.61, 0.61, 0.78]`

is the one chain ``z1 = … = … = …``: the last line is its result, checked against the
first. Two values written under the same name (an update) are not a chain. Expected
values are worked by hand below.
"""

from __future__ import annotations

from pathlib import Path

from tests.article_checks import json_checks, position, verdicts_at

# 0 + 0.39 + 0.22 = 0.61; 0.39 + 0 + 0.22 = 0.61; 0.39 + 0.39 + 0 = 0.78 (printed 0.87)
POST = """# Blending

- `0.39 * v1 = 0.39 * [0, 1, 1] = [0, 0.39, 0.39]`
- `0.39 * v2 = 0.39 * [1, 0, 1] = [0.39, 0, 0.39]`
- `0.22 * v3 = 0.22 * [1, 1, 0] = [0.22, 0.22, 0]`

`z1 = [0, 0.39, 0.39] + [0.39, 0, 0.39] + [0.22, 0.22, 0]`
`z1 = [0 + 0.39 + 0.22, 0.39 + 0 + 0.22, 0.39 + 0.39 + 0]`
`z1 = [0.61, 0.61, 0.87]`
"""


def test_the_last_line_is_the_chains_result(tmp_path: Path) -> None:
    checks = json_checks(tmp_path, POST)
    assert verdicts_at(checks, POST, "0.61, 0.61") == {"exact"}
    off = verdicts_at(checks, POST, "0.87")
    assert off and off <= {"slip", "wrong"}
    (c,) = [c for c in checks if c["printed"] == "0.87"]
    assert (c["source_line"], c["source_column"]) == position(POST, "0.87")


def test_the_first_line_restates_the_rows_above(tmp_path: Path) -> None:
    checks = json_checks(tmp_path, POST)
    line, _ = position(POST, "`z1 = [0, 0.39")
    assert {c["verdict"] for c in checks if c["source_line"] == line} == {"exact"}


def test_two_values_under_one_name_are_not_a_chain(tmp_path: Path) -> None:
    post = "# Update\n\n`w = 0.5`\n`w = 0.45`\n"
    checks = json_checks(tmp_path, post)
    assert not any(c["verdict"] in ("slip", "wrong") for c in checks)


def test_an_update_after_a_worked_value_starts_a_new_chain(tmp_path: Path) -> None:
    # w = 1 − 0.1·2 = 0.8, then w = 0.8 − 0.1·3 = 0.5: each result right for its own line
    post = "# Two steps\n\n`w = 1 - 0.1 * 2`\n`w = 0.8`\n`w = 0.8 - 0.1 * 3`\n`w = 0.5`\n"
    checks = json_checks(tmp_path, post)
    assert not any(c["verdict"] in ("slip", "wrong") for c in checks)
    assert verdicts_at(checks, post, "0.5`") == {"exact"}
