"""Arithmetic written in Markdown prose with escaped operators (``0.6 \\* \\[1, 2]``).

Markdown renders ``\\*`` and ``\\[`` as ``*`` and ``[``; an article escapes them so the
star is not read as emphasis. The fixture is written here; by hand,
0.6·[1, 2] + 0.4·[3, 1] = [0.6 + 1.2, 1.2 + 0.4] = [1.8, 1.6], so a printed 1.5 is off by
one unit of its last digit or more (wrong) and 1.8 is exact.
"""

from __future__ import annotations

from pathlib import Path

from symtf.commands.draft import check_article
from symtf.renderers._claims import place_of

ARTICLE = """\
# Mixing two rows

* Output:
  0.6 \\* \\[1, 2] + 0.4 \\* \\[3, 1] = \\[1.8, 1.5]
"""


def test_escaped_operators_in_a_list_item_are_checked_as_arithmetic(tmp_path: Path) -> None:
    path = tmp_path / "post.md"
    path.write_text(ARTICLE, encoding="utf-8")
    assert "0.6 \\* \\[1, 2]" in path.read_text(encoding="utf-8")
    got = []
    for r in check_article(path).results:
        for k, c in enumerate(r.checks):
            place = place_of(r, c, k)
            if r.claim.expression and place is not None and place.line == 4:
                got.append((place.column, c.printed, c.verdict))
    assert sorted(got) == [(39, "1.8", "exact"), (44, "1.5", "wrong")]
