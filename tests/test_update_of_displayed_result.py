"""A step stated over a quantity a displayed line works out, not over an input.

``W update = [1.5; 2.0] · [0.123, 0.4566] = [[0.1845, 0.6849], [0.246, 0.9150]]``, then
``ΔW = −0.1 · W update = […]``: the draft reads the printed W update as a tensor (its
label names a weight), but the article computed it on the line above, and one of its
entries is wrong. ΔW is checked as a displayed line with those printed entries written in
for W update: right with the numbers it displays, and read through the chain, each entry
the quantity it prints, so the wrong 0.9150 carries into ΔW.

The article is made up for the test; the expected values are worked out by hand (exact
decimal products) and with mpmath below, never by symtf.
"""

from __future__ import annotations

from fractions import Fraction
from pathlib import Path

import mpmath
from article_checks import json_checks, verdicts_at
from mp_reference import rounds_to

ARTICLE = r"""# A weight step

Input: `x = [[1.5, 2.0]]`, gradient of the scores: `g = [[0.123, 0.4566]]`.

The weight gradient, worked out:

$$
\text{W update} = \begin{bmatrix} 1.5 \\ 2.0 \end{bmatrix} \cdot \begin{bmatrix} 0.123 & 0.4566 \end{bmatrix} = \begin{bmatrix} 0.1845 & 0.6849 \\ 0.246 & 0.9150 \end{bmatrix}
$$

With a learning rate of 0.1:

$$
\Delta W = -0.1 \cdot \text{W update} = \begin{bmatrix} -0.01845 & -0.06849 \\ -0.0246 & -0.0915 \end{bmatrix}
$$
"""


def test_the_update_carries_the_wrong_entry_it_computes_from(tmp_path: Path) -> None:
    x = (Fraction("1.5"), Fraction("2.0"))
    g = (Fraction("0.123"), Fraction("0.4566"))
    update = [[a * b for b in g] for a in x]
    assert update == [
        [Fraction("0.1845"), Fraction("0.6849")],
        [Fraction("0.246"), Fraction("0.9132")],
    ]
    delta = [[-Fraction(1, 10) * v for v in row] for row in update]
    printed = {"-0.01845": delta[0][0], "-0.06849": delta[0][1], "-0.0246": delta[1][0]}
    with mpmath.workdps(50):
        assert not rounds_to(
            mpmath.mpf(update[1][1].numerator) / update[1][1].denominator, "0.9150"
        )
        assert not rounds_to(mpmath.mpf(delta[1][1].numerator) / delta[1][1].denominator, "-0.0915")
    # the same products from the printed W update: ΔW is right with the numbers it displays
    assert -Fraction(1, 10) * Fraction("0.9150") == Fraction("-0.0915")
    checks = json_checks(tmp_path, ARTICLE)
    assert verdicts_at(checks, ARTICLE, "0.9150") == {"wrong"}
    assert verdicts_at(checks, ARTICLE, "-0.0915") == {"wrong"}
    (off,) = [c for c in checks if c["printed"] == "-0.0915"]
    assert off.get("reading") == "through_chain"
    for text, value in printed.items():
        assert Fraction(text) == value
        assert verdicts_at(checks, ARTICLE, text) == {"exact"}, text
