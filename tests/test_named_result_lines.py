"""A result line that states a value worked out above it again, by its name.

``**Result:** $E[X] = 0.6$`` under ``E[X] = 1 × 0.6 + 0 × 0.4 = 0.6 + 0 = 0.6``, and
``\\text{Var}(X) \\approx 0.81`` under ``\\text{Var}(X) = … = 0.806``: under the same
heading, the name links the two, so the result line is the worked line's result again
(to the same digits, or rounded to two significant digits or more) and is checked as
that line. One significant digit (``p ≈ 0.2`` under ``p = 1/6 ≈ 0.167``) may round a
result by chance, and a value of that name under another heading may be another
example's: neither is linked.

The article is made up for the test; the expected values are worked out by hand:
1·0.6 + 0·0.4 = 0.6; 0.347 + 0.347 + 0.112 = 0.806, which rounds to 0.81.
"""

from __future__ import annotations

from pathlib import Path

from article_checks import json_checks, verdicts_at

ARTICLE = r"""# Two small expectations

## A biased coin

$$E[X] = 1 \times 0.6 + 0 \times 0.4 = 0.6 + 0 = 0.6$$

**Result:** $E[X] = 0.6$

$$\text{Var}(X) = 0.347 + 0.347 + 0.112 = 0.806$$

**Result:** $\text{Var}(X) \approx 0.81$

## A fair die

$$p = \frac{1}{6} \approx 0.167$$

Rounded once more: $p \approx 0.2$

## Four classes

- $E[X] = 0.6$
"""


def test_a_result_line_naming_the_value_is_checked_as_it(tmp_path: Path) -> None:
    checks = json_checks(tmp_path, ARTICLE)
    assert verdicts_at(checks, ARTICLE, "E[X] = 0.6$", 0) == set()  # the name, not the number
    assert verdicts_at(checks, ARTICLE, "0.6$\n\n$$", 0) == {"exact"}
    assert verdicts_at(checks, ARTICLE, "0.81", 0) == {"rounded"}


def test_one_digit_or_another_heading_is_not_linked(tmp_path: Path) -> None:
    checks = json_checks(tmp_path, ARTICLE)
    assert verdicts_at(checks, ARTICLE, "0.2$", 0) == set()
    assert verdicts_at(checks, ARTICLE, "0.6$\n", 1) == set()
    assert not any(c["verdict"] in ("slip", "wrong") for c in checks)
