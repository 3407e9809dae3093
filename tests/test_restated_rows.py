"""A row that writes again the row a displayed line worked out above it.

``share = [0.165/1.772, 1.0/1.772, 0.607/1.772] ≈ [0.094, 0.564, 0.342]``, then
``y_hat = [0.094, 0.564, 0.342]`` under it and once more in a summary table far below:
each restatement is checked as the line it repeats, entry by entry, where it is written,
and read as that line was read (its literals standing for what they stood for there, not
for the numbers printed nearest to the summary).

The article is made up for the test; the expected values are worked out with mpmath at 50
digits below, never by symtf.
"""

from __future__ import annotations

from typing import Any

import mpmath
import pytest
from article_checks import json_checks
from mp_reference import rounds_to

FILLER = "\n".join(f"Note {k}: the shares sum to one, so the largest wins." for k in range(1, 36))

ARTICLE = rf"""# Normalising three scores

Exponentiate the shifted scores:

$$
\exp = [e^{{-1.8}}, e^0, e^{{-0.5}}] ≈ [0.165, 1.0, 0.607]
$$

Sum:

$$
\text{{sum}} = 0.165 + 1.0 + 0.607 = 1.772
$$

Divide:

$$
\text{{share}} = \left[ \frac{{0.165}}{{1.772}}, \frac{{1.0}}{{1.772}}, \frac{{0.607}}{{1.772}} \right] ≈ [0.094, 0.564, 0.342]
$$

These are the predicted shares:

$$
y_{{\text{{hat}}}} = [0.094, 0.564, 0.342]
$$

{FILLER}

| Step | Result |
| ---- | ------ |
| 1 | `y_hat = [0.094, 0.564, 0.342]` |
"""

PRINTED = ("0.094", "0.564", "0.342")


def _shares() -> list[Any]:
    """The quantity the article computes: the softmax of (-1.8, 0, -0.5)."""
    with mpmath.workdps(50):
        e = [mpmath.exp(mpmath.mpf(x)) for x in ("-1.8", "0", "-0.5")]
        total = mpmath.fsum(e)
        assert rounds_to(total, "1.772")  # the sum the article prints is right
        return [x / total for x in e]


def _lines(text: str) -> list[int]:
    return [i for i, ln in enumerate(ARTICLE.splitlines(), 1) if text in ln]


@pytest.fixture(scope="module")
def checks(tmp_path_factory: pytest.TempPathFactory) -> list[dict[str, Any]]:
    return json_checks(tmp_path_factory.mktemp("rows"), ARTICLE)


def test_the_row_is_off_where_the_quantity_is(checks: list[dict[str, Any]]) -> None:
    shares = _shares()
    expected = [rounds_to(x, p) for x, p in zip(shares, PRINTED, strict=True)]
    assert expected == [False, True, True]  # 0.094 for 0.0933: a slip
    with mpmath.workdps(50):  # 0.342 is right only with the unrounded numbers
        assert not rounds_to(mpmath.mpf("0.607") / mpmath.mpf("1.772"), "0.342")
    rows = _lines("0.094, 0.564, 0.342")
    assert len(rows) == 3  # the line that works it out, and the two that write it again
    for line in rows:
        got = {
            c["printed"]: c["verdict"]
            for c in checks
            if c["source_line"] == line and c["printed"] in PRINTED
        }
        assert got == {"0.094": "slip", "0.564": "rounded", "0.342": "rounded"}, line


def test_a_restated_row_carries_the_slip_it_repeats(checks: list[dict[str, Any]]) -> None:
    for line in _lines("0.094, 0.564, 0.342")[1:]:
        (slip,) = [c for c in checks if c["source_line"] == line and c["verdict"] == "slip"]
        assert slip["printed"] == "0.094"
        assert slip.get("cause") == "inherited"
