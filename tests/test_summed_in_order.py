"""A sum whose terms write the results of the lines just above it, one per line, in order.

``S = 1.0 + 0.25 + 0.0 = 1.25`` under three lines that each work one squared deviation out
(``… = 1.0``, ``… = 0.25``, ``… = 0.0``): each term restates its line's result and is
checked as that line, however few digits it has. Terms in another order than the lines
(``0.25 + 6.25 + 0.25`` under lines giving 0.25, 0.25, 6.25) link nothing by order: a
short number then stays unchecked, as it would alone.

The article is made up for the test; the values are worked out by hand: (2.0 − 3.0)² = 1,
(3.5 − 3.0)² = 0.25, (3.0 − 3.0)² = 0, and 1 + 0.25 + 0 = 1.25.
"""

from __future__ import annotations

from pathlib import Path

from article_checks import json_checks, verdicts_at

ARTICLE = r"""# Two spreads

## Three scores

1. Squared deviations:
   - $(2.0 - 3.0)^2 = (-1.0)^2 = 1.0$
   - $(3.5 - 3.0)^2 = (0.5)^2 = 0.25$
   - $(3.0 - 3.0)^2 = (0.0)^2 = 0.0$

2. Their sum:
   $$S = 1.0 + 0.25 + 0.0 = 1.25$$

## Three more scores

   - $(1.0 - 1.5)^2 = 0.25$
   - $(2.0 - 1.5)^2 = 0.25$
   - $(4.0 - 1.5)^2 = 6.25$

   $$T = 0.25 + 6.25 + 0.25 = 6.75$$
"""


def test_each_term_restates_its_line_in_order(tmp_path: Path) -> None:
    checks = json_checks(tmp_path, ARTICLE)
    for needle in ("1.0 + 0.25", "0.25 + 0.0", "0.0 = 1.25"):
        assert verdicts_at(checks, ARTICLE, needle) == {"exact"}, needle
    assert verdicts_at(checks, ARTICLE, "1.25") == {"exact"}


def test_terms_in_another_order_link_nothing_by_order(tmp_path: Path) -> None:
    checks = json_checks(tmp_path, ARTICLE)
    assert verdicts_at(checks, ARTICLE, "0.25 + 6.25") == set()
    assert verdicts_at(checks, ARTICLE, "6.75") == {"exact"}
    assert not any(c["verdict"] in ("slip", "wrong") for c in checks)
