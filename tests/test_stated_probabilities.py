"""Probabilities, counts and variances an article sets in its maths are inputs it states.

``$P(X = \\text{Heads}) = 0.7$``, ``$|E| = 3$`` and ``$\\sigma^2 = 1$`` written alone set a
value by its name, as ``$d_k=2$`` does: the summary counts them among the inputs the article
gives, and the line that works with them is checked as before. A number in a chain of its
own (``$F(0) = P(X \\leq 0) = 0$``) is no such setting. The article is made up for the test.
"""

from __future__ import annotations

from pathlib import Path

from symtf.commands.draft import check_article

ARTICLE = r"""# A biased coin

- $P(X = \text{Heads}) = 0.7$ and $P(X = \text{Tails}) = 0.3$
- There are $|E| = 3$ outcomes, and the noise has $\sigma^2 = 1$.
- $F(0) = P(X \leq 0) = 0$

$$E[X] = 1 \times 0.7 + 0 \times 0.3 = 0.7$$
"""


def test_a_probability_set_in_maths_is_an_input(tmp_path: Path) -> None:
    path = tmp_path / "coin.md"
    path.write_text(ARTICLE, encoding="utf-8")
    report = check_article(path)
    stated = {(s.line, s.label) for s in report.inputs}
    assert {(3, "P(X=Heads)"), (3, "P(X=Tails)"), (4, "|E|"), (4, "sigma^(2)")} <= stated, stated
    unchecked = {(u.line, u.label) for u in report.unchecked}
    assert not any(line in (3, 4) for line, _ in unchecked), unchecked
    assert (5, "F(0)") not in stated
    # 1 × 0.7 + 0 × 0.3 = 0.7 exactly (by hand)
    assert ("0.7", "exact") in [(c.printed, c.verdict) for c in report.checks]
