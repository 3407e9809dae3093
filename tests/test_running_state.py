"""A running value restated by name (``m = 9`` after ``m_new = max(-∞, 5, 9) = 9``).

Each fixture is written here; the expected verdicts are worked out by hand: the largest
of 4 and 7 is 7, of 7, 2 and 6 still 7.
"""

from __future__ import annotations

from pathlib import Path

from symtf.commands.draft import check_article
from symtf.renderers._claims import place_of

POST = """\
# A running maximum

Take x = [4, 7, 2, 6] two at a time.

**Chunk 1: [4, 7]**

```
m_old = -∞
m_new = max(-∞, 4, 7) = 7
```

**State after chunk 1:**

```
m = {m}
```

**Chunk 2: [2, 6]**

```
m_old = {m}
m_new = max({m}, 2, 6) = 7
```
"""


def _checks(tmp_path: Path, text: str) -> list[tuple[int | None, str, str]]:
    path = tmp_path / "post.md"
    path.write_text(text, encoding="utf-8")
    out = []
    for r in check_article(path).results:
        for k, c in enumerate(r.checks):
            place = place_of(r, c, k)
            out.append((place.line if place else r.claim.source_line, c.printed, c.verdict))
    return out


def test_a_state_restating_the_running_value_is_checked_as_it(tmp_path: Path) -> None:
    # m = 7 (line 15) and m_old = 7 (line 21) restate m_new = 7 of line 9.
    got = _checks(tmp_path, POST.format(m="7"))
    assert (15, "7", "exact") in got
    assert (21, "7", "exact") in got


def test_a_state_with_another_value_stays_a_constant(tmp_path: Path) -> None:
    # m = 8 restates nothing computed: it is a constant the article sets, never flagged
    # from a guessed step.
    got = _checks(tmp_path, POST.format(m="8"))
    assert not any(line in (15, 21) and v in ("wrong", "slip") for line, _, v in got)
    assert not any(line == 15 for line, _, _ in got)
