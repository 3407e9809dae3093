"""A complex chain whose middle link prints entries as numbers again
(``[e^(i×0), …] = [1.0+0j, …] ≈ [1.0+0j, …]``): each printed part of the middle link is
checked against the part an earlier link works out for that entry.

The article is written for these tests; e^(i·0) = 1 + 0i by hand, the other entries
from mpmath at 30 digits.
"""

from __future__ import annotations

from pathlib import Path

import mpmath
from article_checks import line_of, verdicts_by_line

ARTICLE = """# Turning factors

```python
turn = exp(1j × angles) = [
    [e^(i×0), e^(i×0)],
    [e^(i×0.5), e^(i×2.0)]
] = [
    [{first}, 1.0+0j],
    [cos(0.5)+i·sin(0.5), cos(2.0)+i·sin(2.0)]
] ≈ [
    [1.0+0j, 1.0+0j],
    [0.878+0.479j, -0.416+0.909j]
]
```
"""


def test_the_last_link_is_what_the_first_works_out() -> None:
    with mpmath.workdps(30):
        for angle, printed in (("0.5", ("0.878", "0.479")), ("2.0", ("-0.416", "0.909"))):
            a = mpmath.mpf(angle)
            assert mpmath.nstr(mpmath.cos(a), 3) == printed[0]
            assert mpmath.nstr(mpmath.sin(a), 3) == printed[1]


def test_a_number_printed_in_the_middle_link_is_checked(tmp_path: Path) -> None:
    """e^(i×0) = 1 + 0i: the middle link's 1.0+0j entries are exact where they stand."""
    text = ARTICLE.format(first="1.0+0j")
    line = line_of(text, "] = [") + 1
    assert sorted(verdicts_by_line(tmp_path, text, "turn.md")[line]) == [
        ("0", "exact"),
        ("0", "exact"),
        ("1.0", "exact"),
        ("1.0", "exact"),
    ]


def test_a_wrong_number_in_the_middle_link_is_flagged(tmp_path: Path) -> None:
    """1.0+0.5j for e^(i×0) = 1 + 0i: its imaginary part is wrong, where it is printed."""
    text = ARTICLE.format(first="1.0+0.5j")
    line = line_of(text, "] = [") + 1
    assert ("0.5", "wrong") in verdicts_by_line(tmp_path, text, "turn.md")[line]
