"""Logarithms to base 2 and 10 in code (``np.log2``, ``math.log10``, ``torch.log2``).

Entropy in bits is a common worked example; the code was left untranslated ("no
translation for numpy.log2 yet"), so what it printed went unchecked. By hand:
log10(1000) = 3 and the entropy of [0.5, 0.25, 0.25] in bits is
0.5·1 + 0.25·2 + 0.25·2 = 1.5, both exactly. ``math.log(x, base)`` stays untranslated,
with its reason (its second argument is a base, which the one-argument ``log`` is not).
"""

from __future__ import annotations

from pathlib import Path

import pytest
from article_checks import json_checks, verdicts_at

ARTICLE = """\
# Entropy in bits

```python
import math
import numpy as np
a = math.log(8, 2)
print(a)
b = math.log10(1000.0)
print(b)
p = np.array([0.5, 0.25, 0.25])
h = -(p * np.{log}(p)).sum()
print(h)
```

```text
3.0
3.0
{h}
```
"""


def test_log2_and_log10_are_translated(tmp_path: Path) -> None:
    text = ARTICLE.format(log="log2", h="1.5")
    checks = json_checks(tmp_path, text)
    assert verdicts_at(checks, text, "3.0", nth=1) == {"exact"}
    assert verdicts_at(checks, text, "1.5") == {"exact"}
    # log(8, 2): not read as ln 8 (2.079…), so not judged at all
    assert verdicts_at(checks, text, "3.0", nth=0) == set()


@pytest.mark.parametrize(("log", "printed"), [("log2", "1.6"), ("log", "1.5")])
def test_an_entropy_off_in_bits_is_flagged(tmp_path: Path, log: str, printed: str) -> None:
    # 1.6 is not 1.5; and with the natural log the entropy is 1.0397…, not 1.5
    text = ARTICLE.format(log=log, h=printed)
    checks = json_checks(tmp_path, text)
    assert verdicts_at(checks, text, printed) == {"wrong"}
