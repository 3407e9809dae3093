"""Constants an article sets in its maths are inputs it states, not numbers left unchecked.

``$d_k=2$`` or ``$\\gamma = 1$`` written alone in a sentence sets a constant: the summary
counts it among the inputs the article gives. A number inside a sentence's maths that
is not such a setting (``the largest is only $0.28$``) is not one, and stays listed as
not checked with its reason. The article is made up for the test.
"""

from __future__ import annotations

from pathlib import Path

from symtf.commands.draft import check_article

ARTICLE = """# Two scores, scaled

The key dimension is $d_k=2$ and LayerNorm keeps $\\gamma = 1$.

$$s = \\frac{3}{\\sqrt{2}} = 2.121$$

The largest score is only $0.28$ in the other head.
"""


def test_a_constant_set_in_maths_is_an_input_not_an_unchecked_number(tmp_path: Path) -> None:
    path = tmp_path / "constants.md"
    path.write_text(ARTICLE, encoding="utf-8")
    report = check_article(path)
    stated = {(s.line, s.label) for s in report.inputs}
    assert (3, "d_k") in stated and (3, "gamma") in stated, stated
    unchecked = {(u.line, u.label) for u in report.unchecked}
    assert not {lab for _, lab in unchecked} & {"d_k", "gamma"}, unchecked
    assert any(line == 7 for line, _ in unchecked), unchecked  # 0.28 is not a setting
    # 3/√2 = 2.12132…: the displayed line is checked as before
    assert [(c.printed, c.verdict) for c in report.checks] == [("2.121", "rounded")]
