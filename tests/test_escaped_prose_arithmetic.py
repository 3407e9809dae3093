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


def test_a_typographic_minus_in_a_sentence_s_arithmetic_is_read(tmp_path: Path) -> None:
    """``1 − 0.7 = 0.3`` with U+2212, the minus sign typesetting writes: by hand 0.3 exactly;
    1 − 0.85 is 0.15, so a printed 0.4 is off (wrong). Neither was read as arithmetic."""
    from article_checks import json_checks, verdicts_at

    text = "# Complements\n\nAnd 1 − 0.7 = 0.3, while 1 − 0.85 = 0.4.\n"
    checks = json_checks(tmp_path, text)
    assert verdicts_at(checks, text, "0.3") == {"exact"}
    assert verdicts_at(checks, text, "0.4") == {"wrong"}
