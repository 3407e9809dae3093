"""A bold line of prose that works a number out: ``**Scale by 1/√2 ≈ 0.707:**``.

The bold's closing marks (after the colon) are markup, not part of the chain, so the line
reads as ``Scale by 1/√2 ≈ 0.707`` does. 1/√2 = 0.70710678…, which rounds to 0.707 and not
to the 0.708 of the second line (mpmath, below).
"""

from __future__ import annotations

from pathlib import Path

import mpmath
from article_checks import json_checks, verdicts_at
from mp_reference import rounds_to

ARTICLE = """# Scaling the scores

**Scale by 1/√2 ≈ 0.707:**

**Then by 1/√2 ≈ 0.708**
"""


def test_a_bold_line_is_read_without_its_marks(tmp_path: Path) -> None:
    x = 1 / mpmath.sqrt(2)
    assert rounds_to(x, "0.707") and not rounds_to(x, "0.708")
    checks = json_checks(tmp_path, ARTICLE)
    assert verdicts_at(checks, ARTICLE, "0.707") == {"rounded"}
    assert verdicts_at(checks, ARTICLE, "0.708") & {"slip", "wrong"}
