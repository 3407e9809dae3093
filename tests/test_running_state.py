"""A running value restated by name (``m = 9`` after ``m_new = max(-∞, 5, 9) = 9``).

Each fixture is written here; the expected verdicts are worked out by hand: the largest
of 4 and 7 is 7, of 7, 2 and 6 still 7.
"""

from __future__ import annotations

from pathlib import Path

from article_checks import placed_verdicts

from symtf.draft.infer.literals import defined_reduction

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


def test_a_state_restating_the_running_value_is_checked_as_it(tmp_path: Path) -> None:
    # m = 7 (line 15) and m_old = 7 (line 21) restate m_new = 7 of line 9.
    got = placed_verdicts(tmp_path, POST.format(m="7"))
    assert (15, "7", "exact") in got
    assert (21, "7", "exact") in got


def test_a_state_with_another_value_stays_a_constant(tmp_path: Path) -> None:
    # m = 8 restates nothing computed: it is a constant the article sets, never flagged
    # from a guessed step.
    got = placed_verdicts(tmp_path, POST.format(m="8"))
    assert not any(line in (15, 21) and v in ("wrong", "slip") for line, _, v in got)
    assert not any(line == 15 for line, _, _ in got)


DEFINED = """\
# Online softmax

```python
m = -inf  # {comment}
for block in blocks:
    m_new = max(m, max(block))
```

## Tracing one block

```
Block 1: scores = [2, 1, 3]
         m = {m}
```
"""


def test_a_name_the_article_defines_as_a_running_max_is_that_max(tmp_path: Path) -> None:
    # The code's comment calls m the running max: m = 3 is the largest of 2, 1, 3.
    got = placed_verdicts(tmp_path, DEFINED.format(comment="running max", m="3"))
    assert (13, "3", "exact") in got


def test_a_name_the_article_does_not_define_is_not_taken_for_a_max(tmp_path: Path) -> None:
    # With a comment that names no reduction, m = 3 matching the largest entry is a
    # coincidence the search does not act on.
    got = placed_verdicts(tmp_path, DEFINED.format(comment="a value", m="3"))
    assert not any(line == 13 for line, _, _ in got)


def test_a_defined_max_that_does_not_match_is_not_flagged(tmp_path: Path) -> None:
    # m = 4 is not the largest of 2, 1, 3; nothing reproduces it, so it is not judged.
    got = placed_verdicts(tmp_path, DEFINED.format(comment="running max", m="4"))
    assert not any(line == 13 and v in ("wrong", "slip") for line, _, v in got)


def test_what_a_text_defines_a_name_as() -> None:
    assert defined_reduction("m_new = max(m, m_block)\n", "m_new") == "max"
    assert defined_reduction("    l = 0  # Running sum of exp(x - m)\n", "l") == "sum"
    assert defined_reduction("1. **m**: Running maximum\n", "m") == "max"
    assert defined_reduction("m = 0  # the margin\n", "m") is None
    assert defined_reduction("m = max(a)\nm = sum(b)\n", "m") is None  # two: none
