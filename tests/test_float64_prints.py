"""Code that computes in float64 (numpy's and Python's floats) prints float64's rounding.

``0.1 + 0.2`` printed to all its digits is ``0.30000000000000004``: the exact sum of the
written decimals is 3/10, and the print is the float64 sum of the two doubles nearest
0.1 and 0.2. The draft states ``computed_in = "float64"`` for such code, so the print is
a correct rounding of what the code computed, while a print no float64 run gives stays
off. Expected values come from the construction: IEEE double arithmetic (CPython's own
floats, independent of symtf) and exact fractions.
"""

from __future__ import annotations

from fractions import Fraction
from pathlib import Path

from symtf.commands.draft import check_article

ARTICLE = """# Floats

```python
x = 0.1 + 0.2
print(x)
y = 0.5 * 0.25
print(y)
```

```
0.30000000000000004
0.135
```
"""


def test_a_float64_print_is_the_rounding_the_code_did(tmp_path: Path) -> None:
    assert repr(0.1 + 0.2) == "0.30000000000000004"  # IEEE double addition
    assert Fraction("0.1") + Fraction("0.2") == Fraction(3, 10)  # the exact sum
    assert Fraction("0.5") * Fraction("0.25") == Fraction("0.125")  # not 0.135
    path = tmp_path / "floats.md"
    path.write_text(ARTICLE, encoding="utf-8")
    report = check_article(path)
    got = {
        c.printed: (c.verdict, c.extra.get("accepted_by")) for r in report.results for c in r.checks
    }
    assert got["0.30000000000000004"] == ("rounded", "computed_in"), got
    assert got["0.135"][0] == "wrong", got
