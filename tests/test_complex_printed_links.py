"""A complex chain whose middle link prints entries as numbers again
(``[e^(i×0), …] = [1.0+0j, …] ≈ [1.0+0j, …]``): each printed part of the middle link is
checked against the part an earlier link works out for that entry.

The article is written for these tests; e^(i·0) = 1 + 0i by hand, the other entries
from mpmath at 30 digits.
"""

from __future__ import annotations

from pathlib import Path

import mpmath

from symtf.commands.draft import check_article

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


def _verdicts(tmp_path: Path, text: str) -> dict[int, list[tuple[str, str]]]:
    path = tmp_path / "turn.md"
    path.write_text(text, encoding="utf-8")
    out: dict[int, list[tuple[str, str]]] = {}
    for r in check_article(path).results:
        places = r.claim.places
        for k, c in enumerate(r.checks):
            line = places[k].line if len(places) == len(r.checks) else r.claim.source_line
            out.setdefault(line or 0, []).append((c.printed, c.verdict))
    return out


def _line_of(text: str, needle: str) -> int:
    return next(i for i, line in enumerate(text.splitlines(), 1) if needle in line)


def test_the_last_link_is_what_the_first_works_out() -> None:
    with mpmath.workdps(30):
        for angle, printed in (("0.5", ("0.878", "0.479")), ("2.0", ("-0.416", "0.909"))):
            a = mpmath.mpf(angle)
            assert mpmath.nstr(mpmath.cos(a), 3) == printed[0]
            assert mpmath.nstr(mpmath.sin(a), 3) == printed[1]


def test_a_number_printed_in_the_middle_link_is_checked(tmp_path: Path) -> None:
    """e^(i×0) = 1 + 0i: the middle link's 1.0+0j entries are exact where they stand."""
    text = ARTICLE.format(first="1.0+0j")
    line = _line_of(text, "] = [") + 1
    assert sorted(_verdicts(tmp_path, text)[line]) == [
        ("0", "exact"),
        ("0", "exact"),
        ("1.0", "exact"),
        ("1.0", "exact"),
    ]


def test_a_wrong_number_in_the_middle_link_is_flagged(tmp_path: Path) -> None:
    """1.0+0.5j for e^(i×0) = 1 + 0i: its imaginary part is wrong, where it is printed."""
    text = ARTICLE.format(first="1.0+0.5j")
    line = _line_of(text, "] = [") + 1
    assert ("0.5", "wrong") in _verdicts(tmp_path, text)[line]
