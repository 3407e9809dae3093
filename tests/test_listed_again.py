"""A list written again entry by entry, and a running value set again by name.

- ``p = [exp(1-5), exp(5-5), exp(3-5)] / 1.154 = [0.018, 1.000, 0.135] / 1.154``: the
  later list writes the value of each entry of the earlier one, so each of its numbers is
  checked as that entry (0.018 as exp(1-5)); an entry written again as arithmetic of its
  own (``exp(1-5)/1.154`` then ``0.018/1.154``) lines up term by term. A number written
  wrong there (0.153 for exp(3-5)) is flagged.
- ``s = 1.154`` under "State after the pass", after ``s = … = 1.154``: the number repeats,
  to the same digits, the result of the line worked above it; it is that result again
  (checked as its chain), not a constant the article sets.

The article is made up for the test. Every expected value is computed with mpmath at 50
digits below, never by symtf.
"""

from __future__ import annotations

from typing import Any

import mpmath
import pytest
from mp_reference import rounds_to
from test_lineage import _json, _report

MPMATH_DIGITS = 50

ARTICLE = """# A running sum of exponentials

The scores are x = [1, 5, 3].

```
m = max(1, 5, 3) = 5

s = exp(1 - 5) + exp(5 - 5) + exp(3 - 5)
  = exp(-4) + exp(0) + exp(-2)
  = 0.018 + 1 + 0.135
  = 1.154
```

State after the pass:

```
m = 5
s = 1.154
```

The probabilities, from the running sum:

```
p = [exp(1-5), exp(5-5), exp(3-5)] / 1.154
  = [0.018, 1.000, 0.135] / 1.154
  = [0.016, 0.867, 0.117]
```

Two of them again, each divided on its own:

```
q = [exp(1-5)/1.154, exp(3-5)/1.154]
  = [0.018/1.154, 0.153/1.154]
  = [0.016, 0.117]
```
"""


def _line(text: str) -> int:
    """The 1-based article line that starts with ``text`` (stripped)."""
    lines = [ln.strip() for ln in ARTICLE.splitlines()]
    return next(i for i, ln in enumerate(lines, 1) if ln.startswith(text))


STATE = _line("s = 1.154")
LISTED = _line("= [0.018, 1.000, 0.135]")
WORKED = _line("= [0.018/1.154, 0.153/1.154]")


@pytest.fixture(scope="module")
def report(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    return _json(_report(tmp_path_factory, "listed.md", ARTICLE))


def _at(report: dict[str, Any], line: int) -> dict[str, str]:
    """The verdict of each number checked on ``line``, by its printed string."""
    return {c["printed"]: c["verdict"] for c in report["checks"] if c["source_line"] == line}


def test_each_entry_of_a_list_written_again_is_checked(report: dict[str, Any]) -> None:
    with mpmath.workdps(MPMATH_DIGITS):
        e = [mpmath.exp(mpmath.mpf(a - 5)) for a in (1, 5, 3)]
        assert rounds_to(e[0], "0.018") and e[1] == 1 and rounds_to(e[2], "0.135")
        total = sum(e)
        assert rounds_to(total, "1.154")
        for v, printed in zip(e, ("0.016", "0.867", "0.117"), strict=True):
            assert rounds_to(v / total, printed)
    assert _at(report, LISTED) == {"0.018": "rounded", "1.000": "exact", "0.135": "rounded"}
    # none of them is also listed as a number no claim checks
    assert not [u for u in report.get("unchecked", []) if u.get("source_line") == LISTED]


def test_an_entry_written_again_as_arithmetic_is_checked_term_by_term(
    report: dict[str, Any],
) -> None:
    with mpmath.workdps(MPMATH_DIGITS):
        first, third = mpmath.exp(-4), mpmath.exp(-2)
    assert rounds_to(first, "0.018")
    assert not rounds_to(third, "0.153")  # exp(-2) = 0.1353…, written 0.153
    at = _at(report, WORKED)
    assert at["0.018"] == "rounded"
    assert at["0.153"] in ("slip", "wrong")


def test_a_result_set_again_by_name_is_that_result(report: dict[str, Any]) -> None:
    with mpmath.workdps(MPMATH_DIGITS):
        total = sum(mpmath.exp(mpmath.mpf(a - 5)) for a in (1, 5, 3))
    assert rounds_to(total, "1.154")
    assert _at(report, STATE) == {"1.154": "rounded"}
    (check,) = [
        c for c in report["checks"] if c["source_line"] == STATE and c["printed"] == "1.154"
    ]
    assert "restated" in check["claim"]
