"""A table that sums up results worked out above it is checked as those results.

An article works each probability out on a displayed line, then lists them again in a
table. The table is not an input: each of its numbers restates the line that gave it,
and is judged as that line (a slip there is a slip here too). The article is made up
for the test; every expected value comes from mpmath at 50 digits.
"""

from __future__ import annotations

from pathlib import Path

import mpmath
from mp_reference import rounds_to

from symtf.commands.draft import check_article

MPMATH_DIGITS = 50

ARTICLE = """# Two probabilities by hand

$$e^{1} = 2.7183$$

$$e^{2} = 7.3891$$

$$S = 2.7183 + 7.3891 = 10.1074$$

$$p_a = \\frac{2.7183}{10.1074} = 0.2698$$

$$p_b = \\frac{7.3891}{10.1074} = 0.7311$$

| Token | Probability |
| ----- | ----------- |
| a     | 0.2698      |
| b     | 0.7311      |
"""


def test_a_table_of_results_restates_the_lines_that_worked_them_out(tmp_path: Path) -> None:
    with mpmath.workdps(MPMATH_DIGITS):
        s = mpmath.mpf("2.7183") + mpmath.mpf("7.3891")
        pa, pb = mpmath.mpf("2.7183") / s, mpmath.mpf("7.3891") / s
    assert rounds_to(pa, "0.2689") and not rounds_to(pa, "0.2698")  # two digits swapped
    assert rounds_to(pb, "0.7311")
    path = tmp_path / "table.md"
    path.write_text(ARTICLE, encoding="utf-8")
    report = check_article(path)
    table = {
        (r.claim.source_line, c.printed): c.verdict
        for r in report.results
        for c in r.checks
        if (r.claim.source_line or 0) >= 15
    }
    assert table == {(15, "0.2698"): "wrong", (16, "0.7311"): "rounded"}, table
    assert not report.inputs, [s.label for s in report.inputs]  # nothing left as an input
