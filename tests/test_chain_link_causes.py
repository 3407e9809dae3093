"""A chain's number off for the quantity, though a link of the chain is right with the
numbers it displays, says why: the error came with those numbers (``inherited``).

Two made-up articles, each with expectations from mpmath (50 digits) or by hand:

- a softmax worked in ``align`` rows, whose denominator is written
  ``e^{4.3} + e^{3.6} + e^{1.7} ≈ 73 + 36 + 5 ≈ 114``. 73 + 36 + 5 = 114 exactly, but
  e^{4.3} = 73.699…, written 73 on the numerator's row (truncated), so the sum, 115.77…,
  is off for the quantity because of it: inherited from that row, never "unexplained";
  the next row's \\frac{36}{114} writes the same sum's 114 again, and is inherited too;
- a row of attention weights printed wrong (softmax([1, 0, 1, 0]) is e/(2e+2) = 0.3655…,
  written 0.35) then multiplied with V term by term: every term repeats the wrong row,
  one of them under the name of the chain's own result, and is inherited from the row.
"""

from __future__ import annotations

from pathlib import Path

import mpmath
from article_checks import json_checks, line_of

#: mpmath's digits for each test here (tests/conftest.py sets and restores them): set at
#: import, they would hold for every test the worker runs after.
MPMATH_DIGITS = 50

TRUNCATED = r"""# Three scores, exponentiated by hand

The scores are 4.3, 3.6 and 1.7. We exponentiate and normalize:

$$
\begin{align}
P_1 &= \frac{e^{4.3}}{e^{4.3} + e^{3.6} + e^{1.7}} \\
    &\approx \frac{73}{73 + 36 + 5} \\
    &\approx \frac{73}{114} \\
    &\approx \mathbf{64\%} \\[1em]
P_2 &= \frac{e^{3.6}}{e^{4.3} + e^{3.6} + e^{1.7}} \\
    &\approx \frac{36}{114}
\end{align}
$$
"""

WEIGHTS = r"""# One row of attention output

#### Softmax of the row

$$
\text{softmax}([1, 0, 1, 0]) = [0.35, 0.15, 0.35, 0.15]
$$

#### Multiply with V

$$
\text{Output}_0 = [0.35, 0.15, 0.35, 0.15] \cdot V =
$$

$$
= 0.35 \cdot [1, 0, 0] + 0.15 \cdot [0, 1, 0] + 0.35 \cdot [0, 0, 1] + 0.15 \cdot [1, 1, 0]
$$

$$
= [0.35, 0, 0] + [0, 0.15, 0] + [0, 0, 0.35] + [0.15, 0.15, 0]
$$

$$
= [0.50, 0.30, 0.35]
$$
"""


def test_the_hand_figures() -> None:
    e = [mpmath.exp(mpmath.mpf(s)) for s in ("4.3", "3.6", "1.7")]
    assert mpmath.floor(e[0]) == 73 and mpmath.nint(e[0]) == 74  # truncated, not rounded
    assert 73 + 36 + 5 == 114 and mpmath.nint(mpmath.fsum(e)) == 116  # 114 is off
    w = mpmath.e / (2 * mpmath.e + 2)
    assert mpmath.nint(w * 100) == 37 and mpmath.nint((1 - 2 * w) / 2 * 100) == 13


def test_a_sum_right_as_displayed_inherits_from_its_truncated_term(tmp_path: Path) -> None:
    checks = json_checks(tmp_path, TRUNCATED)
    term = line_of(TRUNCATED, r"\frac{e^{4.3}}")  # e^{4.3} is written 73 on the next row
    total = [c for c in checks if c["printed"] == "114"]
    assert [c["verdict"] for c in total] == ["wrong", "wrong"]
    assert total[0]["cause"] == "inherited"
    assert "link 2 of 2" in total[0]["explanation"]
    assert "is right with the numbers it displays" in total[0]["explanation"]
    assert "its 73 repeats" in total[0]["explanation"]
    seventy_three = [c for c in checks if c["printed"] == "73"]
    assert [c["verdict"] for c in seventy_three] == ["slip"]  # 73.699… truncated
    assert seventy_three[0]["cause"] == "truncation"
    assert total[0]["root"]["claim"] == seventy_three[0]["claim"]
    assert term <= seventy_three[0]["source_line"] < total[0]["source_line"] + 1
    # the second row writes the same sum again: the 114 worked out above, off, carried
    again = total[1]
    assert again["source_line"] == line_of(TRUNCATED, r"\frac{36}{114}")
    assert again["cause"] == "inherited"
    assert "writes again the 114" in again["explanation"]
    assert again["root"]["claim"] == seventy_three[0]["claim"]


def test_terms_repeating_a_wrong_row_under_the_chains_own_name_are_inherited(
    tmp_path: Path,
) -> None:
    checks = json_checks(tmp_path, WEIGHTS)
    row = line_of(WEIGHTS, r"\text{softmax}([1, 0, 1, 0])")
    terms = line_of(WEIGHTS, "= [0.35, 0, 0]")
    weights = [c for c in checks if c["source_line"] == row]
    assert [c["verdict"] for c in weights] == ["wrong"] * 4  # 0.3655… and 0.1345…
    off = [c for c in checks if c["source_line"] == terms and c["verdict"] != "exact"]
    assert [c["printed"] for c in off] == ["0.35", "0.15", "0.35", "0.15", "0.15"]
    assert {c["verdict"] for c in off} == {"wrong"}
    assert [c["cause"] for c in off] == ["inherited"] * 5
    assert {c["root"]["claim"] for c in off} == {weights[0]["claim"]}


ROUNDED_TERMS = r"""# A sum of four exponentials

A warm-up first: $2 + 2 = 5$ is a slip we left in on purpose.

$$
\begin{align}
s &= e^{1.7} + e^{1.2} + e^{0.4} + e^{0.3} \\
  &\approx 5 + 3 + 1 + 1 \\
  &\approx 10
\end{align}
$$
"""


def test_a_one_digit_term_is_not_traced_to_an_unrelated_number_it_prints_as(
    tmp_path: Path,
) -> None:
    # each term is its exponential correctly rounded; their sum 10 is off (11.63… → 12)
    e = [mpmath.exp(mpmath.mpf(s)) for s in ("1.7", "1.2", "0.4", "0.3")]
    assert [int(mpmath.nint(v)) for v in e] == [5, 3, 1, 1]
    assert mpmath.nint(mpmath.fsum(e)) == 12
    checks = json_checks(tmp_path, ROUNDED_TERMS)
    (total,) = [c for c in checks if c["printed"] == "10"]
    assert total["verdict"] == "wrong"
    # its 5 is e^{1.7} rounded, not the warm-up's wrong 2 + 2 = 5
    assert total["cause"] == "propagated-rounding"
    assert "link 2 of 2" in total["explanation"]
    assert "repeats" not in total["explanation"]
