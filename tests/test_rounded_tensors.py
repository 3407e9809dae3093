"""Given tensors marked ``rounded = true``: inputs known only to their printed precision.

Constructed case: the article's framework held X_true (4 decimals) but printed X at
2 decimals; S = X Xᵀ is printed from X_true at 3 decimals. Computed by hand in
fractions: S_true = [[0.63792802, 0.26303849], [0.26303849, 0.28082501]], while the
printed X gives S = [[0.6418, 0.2592], [0.2592, 0.2848]], so every correct print of
S_true (0.638, 0.263, 0.263, 0.281) is 3–4 units from what the printed X gives.
"""

from __future__ import annotations

import symtf

TEXT = """
title = "rounded given tensor"
[tensors]
X = {{ values = \"\"\"
0.33 0.73
0.52 0.12
\"\"\", rounded = {rounded} }}
[steps]
S = "X @ X.T"
[[claims]]
label = "S"
step = "S"
printed = \"\"\"
0.638 0.263
0.263 {last}
\"\"\"
"""


def _verdicts(rounded: str, last: str = "0.281") -> dict[tuple[int, ...], dict]:
    report = symtf.check(symtf.loads(TEXT.format(rounded=rounded, last=last)))
    return {tuple(c.index): c for c in report.derivations[0].checks}


def test_unmarked_inputs_stay_exact_and_the_prints_are_flagged() -> None:
    got = _verdicts("false")
    assert {k: c.verdict for k, c in got.items()} == {
        (0, 0): "wrong",
        (0, 1): "wrong",
        (1, 0): "wrong",
        (1, 1): "wrong",
    }


def test_marked_inputs_accept_the_prints_with_the_reason() -> None:
    got = _verdicts("true")
    for c in got.values():
        assert c.verdict in ("rounded", "exact"), (c.index, c.verdict, c.explanation)
        assert "rounded_inputs" in c.extra.get("accepted_by", ""), c.extra
        assert "X" in c.explanation


def test_a_print_outside_every_rounding_of_the_inputs_is_still_flagged() -> None:
    # S[1,1] ranges over (0.515..0.525)^2 + (0.115..0.125)^2 = [0.2784, 0.2913]: 0.400 is far out.
    got = _verdicts("true", last="0.400")
    assert got[(1, 1)].verdict == "wrong"
    assert got[(0, 0)].verdict in ("rounded", "exact")
