"""Two forms of writing that must not raise a false alarm.

- A fraction of fractions reduced in the next link, ``\\frac{\\frac{2}{6}}{\\frac{3}{6}} =
  \\frac{2}{3}``: the 2 and the 3 are the reduced fraction, not the values of 2/6 and 3/6
  (a quotient whose numerator and denominator share a written factor, rewritten without
  it, is the same quotient reduced).
- A weight the article restates in a table just above a line, ``W = [0.2, 0.1] …`` then
  ``2.0 × 0.2 + 3.0 × 0.1``, also printed as the rounded result of an earlier line
  (``0.38 / 3.5 = 0.1``): the literal repeats the nearest printing, the stated weight,
  not the earlier result.

The articles are made up for the test. Every expected value is computed with mpmath at
50 digits below, never by symtf.
"""

from __future__ import annotations

from typing import Any

import mpmath
import pytest
from mp_reference import rounds_to
from test_lineage import _json, _report

MPMATH_DIGITS = 50

REDUCED = """# Conditional probability on a die

Rolling one die, the two events share two faces.

$$P(A|B) = \\frac{P(A \\cap B)}{P(B)} = \\frac{\\frac{2}{6}}{\\frac{3}{6}} = \\frac{2}{3} \\approx 0.667$$
"""

RESTATED = """# A gate and a projection

The projection's weights:

```
W = [0.2, 0.1]
    [0.1, 0.2]
```

## The gate

The gate's share is the cost over the budget:

```
g = 0.38 / 3.5 = 0.1
```

## The projection

With the weights recalled,

```
W = [0.2, 0.1]
    [0.1, 0.2]
```

its outputs from the input [2.0, 3.0] are

```
y0 = 2.0 × 0.2 + 3.0 × 0.1 = 0.40 + 0.30 = 0.70
y1 = 2.0 × 0.1 + 3.0 × 0.2 = 0.20 + 0.60 = 0.80
```
"""

#: The article lines of RESTATED's gate and outputs.
GATE, Y0, Y1 = 15, 30, 31


def _off(d: dict[str, Any]) -> list[dict[str, Any]]:
    return [c for c in d["checks"] if c["verdict"] in ("slip", "wrong")]


@pytest.fixture(scope="module")
def reduced(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    return _json(_report(tmp_path_factory, "reduced.md", REDUCED))


@pytest.fixture(scope="module")
def restated(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    return _json(_report(tmp_path_factory, "restated.md", RESTATED))


def test_a_reduced_fraction_is_not_read_as_term_values(reduced: dict[str, Any]) -> None:
    exact = (mpmath.mpf(2) / 6) / (mpmath.mpf(3) / 6)
    assert rounds_to(exact, "0.667")
    assert not _off(reduced), _off(reduced)
    # neither 2 nor 3 is checked as the value of 2/6 or 3/6
    assert not [c for c in reduced["checks"] if c["printed"] in ("2", "3")]
    (result,) = [c for c in reduced["checks"] if c["printed"] == "0.667"]
    assert result["verdict"] == "rounded"


def test_a_restated_weight_is_read_as_itself(restated: dict[str, Any]) -> None:
    gate = mpmath.mpf("0.38") / mpmath.mpf("3.5")
    assert rounds_to(gate, "0.1") and gate != mpmath.mpf("0.1")  # the gate prints as 0.1
    y0 = 2 * mpmath.mpf("0.2") + 3 * mpmath.mpf("0.1")
    y1 = 2 * mpmath.mpf("0.1") + 3 * mpmath.mpf("0.2")
    assert rounds_to(y0, "0.70") and rounds_to(y1, "0.80")
    # read as the gate, 3.0 × 0.1 would be 3 × 0.1086 = 0.33, and 0.70 would look wrong
    assert not rounds_to(2 * mpmath.mpf("0.2") + 3 * gate, "0.70")
    assert not _off(restated), _off(restated)
    by_line = {c["source_line"] for c in restated["checks"]}
    assert {GATE, Y0, Y1} <= by_line
    for c in restated["checks"]:
        if c["source_line"] in (Y0, Y1):
            assert "g" not in (c.get("exact_reading") or {}).get("stands_for", {}).values()
