"""A bracketed group of a chain's link written again as one number in the next link.

``(1.0 - 2.5)^2 = (-1.5)^2 = 2.25``, ``\\frac{4.0 - 2.5}{1.2} = \\frac{1.5}{1.2}`` and
``-[-0.25 + (-0.5)] = -[-0.75]``: the two links are alike but for a group the later one
writes as one number, so the number is the value of the group's arithmetic (−1.5 is
1.0 − 2.5) and gets its own verdict, with its sign. A number that is not the group's value
(−1.5 for 1.0 − 2.4) is flagged. A fraction of fractions reduced,
``\\frac{\\frac{2}{8}}{\\frac{4}{8}} = \\frac{2}{4}``, writes no group's value: 2 is not 2/8.

The article is made up for the test; each expected value is worked out by hand below
(decimal subtraction and sums, exact in these few digits).
"""

from __future__ import annotations

from pathlib import Path

from article_checks import json_checks, verdicts_at

from symtf.draft.read.items import link_plain
from symtf.draft.read.listed import grouped_links

ARTICLE = r"""# Spread of three scores

The scores are $x = [1.0, 2.5, 4.0]$ and their mean is $2.5$.

- $(1.0 - 2.5)^2 = (-1.5)^2 = 2.25$
- $(4.0 - 2.5)^2 = (1.5)^2 = 2.25$
- $(1.0 - 2.4)^2 = (-1.5)^2 = 2.25$

The second score, standardised:

$$z = \frac{4.0 - 2.5}{1.2} = \frac{1.5}{1.2} = 1.25$$

An entropy with its sum worked out inside the brackets:

$$H = -[-0.25 + (-0.5)] = -[-0.75] = 0.75$$

A ratio of two fractions, reduced:

$$r = \frac{\frac{2}{8}}{\frac{4}{8}} = \frac{2}{4} = 0.5$$
"""


def test_each_group_written_as_a_number_is_checked_as_its_value(tmp_path: Path) -> None:
    checks = json_checks(tmp_path, ARTICLE)
    # 1.0 - 2.5 = -1.5 and 4.0 - 2.5 = 1.5 (by hand)
    assert verdicts_at(checks, ARTICLE, "-1.5", 0) == {"exact"}
    assert verdicts_at(checks, ARTICLE, "(1.5)^2", 0) == set()  # the bracket is not the number
    assert verdicts_at(checks, ARTICLE, "1.5)^2", 1) == {"exact"}
    # \frac{4.0 - 2.5}{1.2}: the numerator 1.5, as the next link writes it
    assert verdicts_at(checks, ARTICLE, "1.5}{1.2}", 0) == {"exact"}
    # -0.25 + (-0.5) = -0.75
    assert verdicts_at(checks, ARTICLE, "-0.75", 0) == {"exact"}


def test_a_group_written_as_another_number_is_flagged(tmp_path: Path) -> None:
    checks = json_checks(tmp_path, ARTICLE)
    # 1.0 - 2.4 = -1.4 (by hand), printed -1.5
    flagged = verdicts_at(checks, ARTICLE, "-1.5", 1)
    assert flagged and flagged <= {"slip", "wrong"}


def test_a_reduced_fraction_writes_no_value_of_its_parts(tmp_path: Path) -> None:
    checks = json_checks(tmp_path, ARTICLE)
    assert verdicts_at(checks, ARTICLE, r"2}{4}", 0) == set()
    assert verdicts_at(checks, ARTICLE, r"4} = 0.5", 0) == set()
    assert not any(c["verdict"] in ("slip", "wrong") for c in checks if c["source_line"] == 19)


def test_links_that_differ_outside_a_group_give_nothing() -> None:
    def links(a: str, b: str) -> list[tuple[str, ...]]:
        plain_a, plain_b = link_plain(a), link_plain(b)
        assert plain_a is not None and plain_b is not None
        return [(*terms, number) for _, terms, number, _ in grouped_links(1, plain_a, plain_b)]

    assert links("(1 - 3.5)^2", "(-2.5)^2") == [("1-3.5", "-2.5")]
    assert links("x + (0.2 - 0.5)", "x - 0.3") == []  # the sign moved: not one group
    assert links("(0.5)^2", "0.25") == []  # the whole link worked out, not a group
    assert links("max(0, 1 - 2)", "max(0, -1)") == []  # an argument list: left to the lists
