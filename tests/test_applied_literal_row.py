"""A named function applied to a row the line writes itself: ``softmax([2, 1, 0]) = […]``.

No step of the article gives the row in brackets: it is the line's own input, as
written, and the printed result is the function of it. Expected values by mpmath at 30
digits: softmax([2, 1, 0]) = [0.665241, 0.244728, 0.090031]; softmax of four equal
entries is 0.25 each; softmax([1, 0, 1, 1]) = [0.296923, 0.109232, 0.296923, 0.296923].
A line that prints a row no entry of which agrees still states the step: it is checked,
and every entry that is off is flagged.
"""

from __future__ import annotations

from pathlib import Path

import mpmath

from symtf.commands.draft import check_article
from tests.article_checks import placed_verdicts

POST = """\
# Softmax of a row

$$
\\text{softmax}([2, 1, 0]) = [0.665, 0.245, 0.095]
$$

All four scores are equal, so

$$
\\text{softmax}([0.5,\\;0.5,\\;0.5,\\;0.5]) = [0.25,\\;0.25,\\;0.25,\\;0.25].
$$
"""


def _softmax(row: list[str]) -> list[str]:
    mpmath.mp.dps = 30
    e = [mpmath.exp(mpmath.mpf(x)) for x in row]
    return [mpmath.nstr(x / sum(e), 6) for x in e]


def test_the_function_of_a_row_the_line_writes_is_checked(tmp_path: Path) -> None:
    assert _softmax(["2", "1", "0"]) == ["0.665241", "0.244728", "0.0900306"]
    got = placed_verdicts(tmp_path, POST)
    assert (4, "0.665", "rounded") in got
    assert (4, "0.245", "rounded") in got
    # 0.095 where softmax gives 0.0900: off, and the step stands on the two that agree
    assert any(line == 4 and p == "0.095" and v in ("slip", "wrong") for line, p, v in got)
    # "\\;" spaces the entries: four equal scores give 0.25 each
    assert [v for line, p, v in got if line == 10] == ["exact"] * 4


def test_a_row_whose_function_no_entry_agrees_with_is_flagged(tmp_path: Path) -> None:
    # softmax([1, 0, 1, 1]) is [0.297, 0.109, 0.297, 0.297]: no printed entry agrees. The
    # line states the step all the same (a function of the row it writes), so every entry
    # is off by 12, 5, 12 and 29 units of the last digit: wrong; the row is its input
    assert _softmax(["1", "0", "1", "1"]) == ["0.296923", "0.109232", "0.296923", "0.296923"]
    post = "# S\n\n$$\n\\text{softmax}([1, 0, 1, 1]) = [0.309, 0.114, 0.309, 0.268]\n$$\n"
    got = [(p, v) for line, p, v in placed_verdicts(tmp_path, post) if line == 4]
    assert got == [("0.309", "wrong"), ("0.114", "wrong"), ("0.309", "wrong"), ("0.268", "wrong")]
    path = tmp_path / "other.md"
    path.write_text(post, encoding="utf-8")
    assert sum(s.size for s in check_article(path).inputs) == 4
