"""A note after a worked line, behind an arrow: ``= -0.749  ← Negative! (should increase)``.

The arrow begins a remark about the line, not a link of its chain, so the chain before it
is read as it would be without the note (and the note's own numbers as prose). The values
are worked out by hand: 0.251 − 1 = −0.749; 0.0502 × 0.104 = 0.0052208, which rounds to
0.00522 and not to the 0.00532 of the last line.
"""

from __future__ import annotations

from pathlib import Path

from article_checks import json_checks, verdicts_at

ARTICLE = """# Two logits after the update

```
d = 0.251 - 1 = -0.749  ← Negative! (should increase)
```

- logit(C) = 0.0502 × 0.104 ≈ 0.00522  ← Increased!
- logit(D) = 0.0502 × 0.104 ≈ 0.00532  ← Increased too
"""


def test_the_chain_before_a_note_is_checked(tmp_path: Path) -> None:
    checks = json_checks(tmp_path, ARTICLE)
    assert verdicts_at(checks, ARTICLE, "-0.749") == {"exact"}
    assert verdicts_at(checks, ARTICLE, "0.00522") == {"rounded"}
    assert verdicts_at(checks, ARTICLE, "0.00532") & {"slip", "wrong"}
