"""A top-level ``\\begin{align}`` block in Markdown is read whole, to its last row.

markdown-it's amsmath plugin gives such a block a line map that ends one line early, so the
block was cut before its last row, and the numbers written there (the result, as a rule)
vanished from the report: neither checked nor listed. By hand and mpmath:
e^0.707/(e^0.707 + e^0) = 0.669740…, printed 0.670; the other share is 0.330259…, printed
0.330.
"""

from __future__ import annotations

from pathlib import Path

import mpmath
from article_checks import json_checks, verdicts_at

ARTICLE = """\
# Two scores

\\begin{align}
s &= \\frac{e^{0.707}}{e^{0.707}+e^{0}} \\\\
&= {first}
\\end{align}

\\begin{align}
t &= \\frac{e^{0}}{e^{0.707}+e^{0}} \\\\
&= {second}
\\end{align}
"""


def _shares() -> tuple[str, str]:
    mpmath.mp.dps = 30
    e = mpmath.e ** mpmath.mpf("0.707")
    return mpmath.nstr(e / (e + 1), 3), mpmath.nstr(1 / (e + 1), 3)


def test_the_last_row_of_an_align_block_is_checked(tmp_path: Path) -> None:
    first, second = _shares()
    assert (first, second) == ("0.67", "0.33")  # nstr drops the trailing zero
    text = ARTICLE.replace("{first}", "0.670").replace("{second}", "0.330")
    checks = json_checks(tmp_path, text)
    assert verdicts_at(checks, text, "0.670") == {"rounded"}
    assert verdicts_at(checks, text, "0.330") == {"rounded"}


def test_a_slip_on_the_last_row_of_an_align_block_is_flagged(tmp_path: Path) -> None:
    text = ARTICLE.replace("{first}", "0.680").replace("{second}", "0.330")
    checks = json_checks(tmp_path, text)
    assert verdicts_at(checks, text, "0.680") == {"wrong"}
