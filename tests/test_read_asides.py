"""Arithmetic worked out in passing, in parentheses, inside a chain of a prose line.

``v₂ = 0.9×4 + (2×1.6=3.2) = 3.6 + 3.2 = 6.8``: the parenthesised ``2×1.6=3.2`` is
checked on its own, and the chain reads its term as ``(2×1.6)``, so the next link is
checked term by term. Every expected value is worked out by hand in the comments.
"""

from __future__ import annotations

from pathlib import Path

from symtf.commands.draft import check_article

POST = """\
# Two updates

v₁ = 0.5×4 + (3×1.2=3.6) = 2 + 3.6 = 5.6

v₂ = 0.5×6 + (2×1.4=2.9) = 3 + 2.9 = 5.9
"""


def _checks(tmp_path: Path, text: str) -> list[tuple[int | None, str, str, str | None]]:
    path = tmp_path / "post.md"
    path.write_text(text, encoding="utf-8")
    return [
        (r.claim.source_line, c.printed, c.verdict, c.extra.get("cause"))
        for r in check_article(path).results
        for c in r.checks
    ]


def test_an_aside_is_checked_and_its_chain_is_read_term_by_term(tmp_path: Path) -> None:
    got = _checks(tmp_path, POST)
    # line 3: 3×1.2 = 3.6 (the aside), 0.5×4 = 2 and (3×1.2) = 3.6 (the next link's
    # terms), 2 + 3.6 = 5.6: all exact
    assert sorted((p, v) for line, p, v, _ in got if line == 3) == [
        ("2", "exact"),
        ("3.6", "exact"),
        ("3.6", "exact"),
        ("5.6", "exact"),
    ]
    # line 5: 2×1.4 = 2.8, so the aside's 2.9 is wrong, and so is the term 2.9 repeating
    # it; 0.5×6 + 2.8 = 5.8, so 5.9 is wrong too, carried from the 2.9 (inherited)
    five = [(p, v, cause) for line, p, v, cause in got if line == 5]
    assert sorted((p, v) for p, v, _ in five) == [
        ("2.9", "wrong"),
        ("2.9", "wrong"),
        ("3", "exact"),
        ("5.9", "wrong"),
    ]
    assert ("5.9", "wrong", "inherited") in five


def test_an_aside_inside_other_parentheses_is_left_to_the_chain(tmp_path: Path) -> None:
    # "(1 + (3×1.2=3.6))": the inner pair is not worked out in passing at the top of the
    # link; the line is left as written, and nothing is read from the inner 3.6.
    got = _checks(tmp_path, "# A\n\ny = 2 × (1 + (3×1.2=3.6)) = 9.2\n")
    assert all(p != "3.6" for _, p, _, _ in got)
