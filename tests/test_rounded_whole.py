"""A whole number a sentence says rounding gives: ``Through rounding, we get the value of
9`` after ``0.62*15 = 9.3``; ``= 38.1, rounded to 38``.

Each fixture is written here; the expected values are worked by hand: 0.62 × 15 = 9.3,
which rounds to 9 (``10`` is within one unit of it: a slip); 0.3 × 127 = 38.1, which
rounds to 38. ``rounded to 4 decimals`` says how many digits, not a value.
"""

from __future__ import annotations

from pathlib import Path

from article_checks import placed_verdicts

ARTICLE = """\
# Rounding to a small integer range

The value 0.62 would be scaled to `0.62*15 = 9.3`. Through rounding, we get the value of KEPT. Then reverse it.

Here x = 0.3*127 = 38.1, rounded to 38 for storage.

All other values are rounded to 4 decimals here.
"""


def _verdicts(tmp_path: Path, kept: str) -> dict[tuple[int, str], str]:
    text = ARTICLE.replace("KEPT", kept)
    return {(line, p): v for line, p, v in placed_verdicts(tmp_path, text) if line is not None}


def test_the_whole_number_rounding_gives_is_the_line_before_it_rounded(tmp_path: Path) -> None:
    got = _verdicts(tmp_path, "9")
    assert got[(3, "9")] == "rounded"
    assert got[(5, "38")] == "rounded"


def test_a_whole_number_off_by_less_than_one_unit_is_a_slip(tmp_path: Path) -> None:
    assert _verdicts(tmp_path, "10")[(3, "10")] == "slip"


def test_a_count_of_decimals_is_no_value(tmp_path: Path) -> None:
    assert (7, "4") not in _verdicts(tmp_path, "9")
