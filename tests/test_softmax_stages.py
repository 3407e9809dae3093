"""A softmax written as a numbered list of its stages, one row per stage.

``2. Subtract: […]``, ``3. Exponentiate: […]``, ``5. Normalize: […]``: each label names
the stage, worked on the row printed right before it (the logits read as printed), so
each row is checked as that stage and the numbers between them (``Max``, ``Sum``) as the
reductions they name. An entry written wrong is flagged; a row whose label names no
stage is not read as one.

The article is made up for the test; every expected value is computed with mpmath at 50
digits below, never by symtf.
"""

from __future__ import annotations

from pathlib import Path

import mpmath
from article_checks import json_checks, verdicts_at
from mp_reference import rounds_to

MPMATH_DIGITS = 50

LOGITS = ["0.0312", "0.0", "0.0420", "0.0105"]

ARTICLE = """# A softmax in stages

**Logits = [0.0312, 0.0, 0.0420, 0.0105]**

1. Max: 0.0420
2. Subtract: [-0.0108, -0.0420, 0.0, -0.0315]
3. Exponentiate: [0.9893, 0.9598, 1.0, 0.9690]
4. Sum: ≈ 3.917
5. Normalize: [0.253, 0.245, 0.255, 0.248]
"""


def _stages() -> tuple[list[mpmath.mpf], list[mpmath.mpf], mpmath.mpf, list[mpmath.mpf]]:
    with mpmath.workdps(MPMATH_DIGITS):
        x = [mpmath.mpf(v) for v in LOGITS]
        shifted = [v - max(x) for v in x]
        exps = [mpmath.exp(v) for v in shifted]
        total = mpmath.fsum(exps)
        return shifted, exps, total, [v / total for v in exps]


def test_the_reference_has_the_two_errors_the_article_is_written_with() -> None:
    _, exps, total, probs = _stages()
    assert rounds_to(exps[0], "0.9893") and rounds_to(exps[2], "1.0")
    assert not rounds_to(exps[1], "0.9598") and rounds_to(exps[1], "0.9589")
    assert rounds_to(total, "3.917")
    assert all(rounds_to(p, s) for p, s in zip(probs[:3], ["0.253", "0.245", "0.255"], strict=True))
    assert not rounds_to(probs[3], "0.248") and rounds_to(probs[3], "0.247")


def test_each_stage_is_checked_as_the_stage_its_label_names(tmp_path: Path) -> None:
    checks = json_checks(tmp_path, ARTICLE)
    for needle in ("-0.0108", "-0.0315", "0.9893", "0.9690", "3.917", "0.253", "0.255"):
        assert verdicts_at(checks, ARTICLE, needle) <= {"exact", "rounded"}, needle
        assert verdicts_at(checks, ARTICLE, needle), needle
    assert verdicts_at(checks, ARTICLE, "0.9598") & {"slip", "wrong"}
    assert verdicts_at(checks, ARTICLE, "0.248") & {"slip", "wrong"}


def test_a_row_whose_label_names_no_stage_is_not_a_stage(tmp_path: Path) -> None:
    text = ARTICLE.replace("2. Subtract:", "2. Values:")
    checks = json_checks(tmp_path, text)
    assert verdicts_at(checks, text, "-0.0108") == set()
