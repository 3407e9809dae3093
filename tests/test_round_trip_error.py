"""The error of a round trip worked in prose: a value scaled by a factor, rounded, and
divided by the factor again, then "an error of E".

Each fixture is written here; the expected values are worked by hand:

- 0.7 scaled by 15 is 10.5, rounded 10, and 10/15 = 2/3 = 0.6667: the error is
  0.7 - 2/3 = 1/30 = 0.0333… (so ``0.0333`` is right and ``0.333``, the decimal point one
  place off, is wrong);
- 0.65 scaled by 15 is 9.75, rounded 10, and 10/15 = 0.6667 comes back larger: the error
  is 2/3 - 0.65 = 1/60 = 0.01666… (``0.0167`` is right).
"""

from __future__ import annotations

from pathlib import Path

from article_checks import placed_verdicts

ARTICLE = """\
# Rounding to a small integer range

To store a value in the range 0…15, scale it by 15 and round. For example, the value
{value} would be scaled to `{value}*15 = {scaled}`. Through rounding we keep {kept}. If we reverse
this, we get `{kept}/15={back}` – we have a rounding {word} of {error} in this example.
"""


def _error_verdicts(tmp_path: Path, **fields: str) -> list[str]:
    text = ARTICLE.format(**fields)
    return [v for line, p, v in placed_verdicts(tmp_path, text) if p == fields["error"]]


def test_the_error_of_a_round_trip_is_the_value_less_what_comes_back(tmp_path: Path) -> None:
    fields = {"value": "0.7", "scaled": "10.5", "kept": "10", "back": "0.6667", "word": "error"}
    assert _error_verdicts(tmp_path, error="0.0333", **fields) == ["rounded"]
    assert _error_verdicts(tmp_path, error="0.333", **fields) == ["wrong"]


def test_a_value_that_comes_back_larger_has_the_difference_the_other_way(
    tmp_path: Path,
) -> None:
    fields = {"value": "0.65", "scaled": "9.75", "kept": "10", "back": "0.6667", "word": "error"}
    assert _error_verdicts(tmp_path, error="0.0167", **fields) == ["rounded"]


def test_a_number_not_called_an_error_is_left_unjudged(tmp_path: Path) -> None:
    # "a rounding step of 0.333": nothing says it is the round trip's error
    fields = {"value": "0.7", "scaled": "10.5", "kept": "10", "back": "0.6667", "word": "step"}
    assert _error_verdicts(tmp_path, error="0.333", **fields) == []
