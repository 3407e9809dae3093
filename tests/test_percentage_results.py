"""A line of prose arithmetic whose result is a percentage: ``1/4 = 25%``.

By hand: 1/4 = 0.25 = 25% exactly; 2/3 = 0.666… is 67% to whole percents and 1/3 = 0.333…
is 33.3% to one decimal; 3/8 = 0.375 = 37.5%, so ``35%`` is off by 2.5 points, far more
than the rounding of a whole percent (half a point): it is flagged.
"""

from __future__ import annotations

from pathlib import Path

from tests.article_checks import placed_verdicts

ARTICLE = """# Shares

One in four tokens is masked: 1/4 = 25% of the sequence.

Two of three heads agree, 2/3 = 67%.

A third of them, 1/3 = 33.3%.

A wrong one: 3/8 = 35%.
"""


def test_a_percentage_ending_a_line_of_arithmetic_is_its_result(tmp_path: Path) -> None:
    got = placed_verdicts(tmp_path, ARTICLE)
    assert (3, "25%", "exact") in got
    assert (5, "67%", "rounded") in got
    assert (7, "33.3%", "rounded") in got


def test_a_wrong_percentage_is_flagged(tmp_path: Path) -> None:
    got = placed_verdicts(tmp_path, ARTICLE)
    assert [v for line, _, v in got if line == 9] in (["wrong"], ["slip"])
