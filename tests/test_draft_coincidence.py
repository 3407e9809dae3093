"""Printings a step reproduces only by coincidence are left unmapped, not explained.

Each article here is written for its test, with numbers of its own. That the guessed
step does reproduce the printed digits (so refusing it is the rule's doing, not a
miss) is shown with mpmath at 50 digits; the draft's output is never the reference.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import mpmath
import pytest
from mp_reference import rounds_to

from symtf.commands.draft import checked_article


@pytest.fixture(autouse=True)
def _mp_precision() -> Iterator[None]:
    """50 digits for this module's mpmath references, and the global precision restored
    after each test (other modules' tests run in the same process)."""
    with mpmath.workdps(50):
        yield


def _steps(tmp_path: Path, text: str) -> tuple[list[str], list[tuple[int | None, str, str]]]:
    """The steps the draft wrote (``name = "expression"`` lines) and the check's verdicts."""
    path = tmp_path / "post.md"
    path.write_text(text, encoding="utf-8")
    got = checked_article(path)
    section = got.toml.partition("[steps]")[2].partition("[[")[0]
    steps = [ln for ln in section.splitlines() if ln.strip() and not ln.startswith("#")]
    report = got.report
    checks = [(r.claim.source_line, c.printed, c.verdict) for r in report.results for c in r.checks]
    return steps, checks


def _unbiased_layernorm(row: list[mpmath.mpf]) -> list[mpmath.mpf]:
    mean = sum(row) / len(row)
    var = sum((x - mean) ** 2 for x in row) / (len(row) - 1)
    return [(x - mean) / mpmath.sqrt(var) for x in row]


SIGNS = """# Centring two features

The two tokens:

```
T = [0.3, 0.0]
    [0.0, 0.3]
```

The gate values, after the steps above:

```
gate = [0.707, -0.707]
       [-0.707, 0.707]
```
"""


def test_a_print_of_one_magnitude_and_its_signs_is_not_a_step(tmp_path: Path) -> None:
    """LayerNorm with the unbiased variance maps any two distinct numbers to ±1/√2, so
    ``[0.707, -0.707]`` says nothing of which tensor was normalised: four entries, one
    number. An unnamed printing of it is not taken as ``layernorm(T)``."""
    for row, printed in (((0.3, 0.0), ("0.707", "-0.707")), ((0.0, 0.3), ("-0.707", "0.707"))):
        got = _unbiased_layernorm([mpmath.mpf(x) for x in row])
        assert all(rounds_to(g, p) for g, p in zip(got, printed, strict=True))
    # any other pair of the same order does it too
    assert rounds_to(_unbiased_layernorm([mpmath.mpf(5), mpmath.mpf(-2)])[0], "0.707")
    steps, checks = _steps(tmp_path, SIGNS)
    assert not any("layernorm" in s for s in steps)
    assert [c for c in checks if c[0] == 14 and c[2] not in ("exact", "rounded")] == []


SCALED = """# A small mixing layer

The token matrix and the mixing weights:

```
T = [0.3, 0.0]
    [0.0, 0.3]

M = [0.4, 0.2]
    [0.2, 0.4]
```

After the gate and the mixing weights (worked elsewhere):

```
mixed = [0.08485, 0.04243]
        [0.04243, 0.08485]
```
"""


def test_a_known_matrix_times_one_number_is_not_a_depth_two_step(tmp_path: Path) -> None:
    """``M·T/√2`` with ``T = 0.3·I`` is ``0.3/√2 · M``: it reproduces the four entries of
    ``mixed``, but they show one number (0.3/√2) times a matrix already known, far too
    little for a two-op guess no name points to."""
    scale = mpmath.mpf("0.3") / mpmath.sqrt(2)
    m = [[mpmath.mpf("0.4"), mpmath.mpf("0.2")], [mpmath.mpf("0.2"), mpmath.mpf("0.4")]]
    printed = [["0.08485", "0.04243"], ["0.04243", "0.08485"]]
    for i in range(2):
        for j in range(2):
            assert rounds_to(scale * m[i][j], printed[i][j])
    steps, checks = _steps(tmp_path, SCALED)
    assert not any("sqrt" in s for s in steps)
    assert [c for c in checks if c[2] not in ("exact", "rounded")] == []


PATTERN = """# Two tokens attending

The queries and keys:

```
Q = [[0.8, -0.3], [0.2, 0.9]]
K = [[0.5, 0.7], [-0.6, 0.4]]
```

What each token takes from the other:

```
share = [[0.6361, 0.3639], [0.5858, 0.4142]]
```
"""


def test_a_step_with_evidence_far_above_chance_is_still_taken(tmp_path: Path) -> None:
    """Entries of four digits reproduced by ``softmax(Q·Kᵀ/√2)``: a depth-2 step the
    article does not name, but with evidence far above chance, so it is taken."""
    q = [[mpmath.mpf("0.8"), mpmath.mpf("-0.3")], [mpmath.mpf("0.2"), mpmath.mpf("0.9")]]
    k = [[mpmath.mpf("0.5"), mpmath.mpf("0.7")], [mpmath.mpf("-0.6"), mpmath.mpf("0.4")]]
    printed = [["0.6361", "0.3639"], ["0.5858", "0.4142"]]
    for i in range(2):
        scores = [sum(q[i][a] * k[j][a] for a in range(2)) / mpmath.sqrt(2) for j in range(2)]
        z = sum(mpmath.exp(x) for x in scores)
        for j in range(2):
            assert rounds_to(mpmath.exp(scores[j]) / z, printed[i][j])
    steps, checks = _steps(tmp_path, PATTERN)
    assert any("softmax" in s and "sqrt(2)" in s for s in steps)
    share = [c for c in checks if c[0] == 13]
    assert share and all(c[2] in ("exact", "rounded") for c in share)


ONE_HOT = """# A two-feature classifier

$$
X = \\begin{bmatrix} 1.0 & 2.0 \\end{bmatrix}, \\quad
W = \\begin{bmatrix} 0.2 & -0.3 & 0.5 \\\\ -0.4 & 0.7 & -0.2 \\end{bmatrix}
$$

True label (one-hot): `y = [0, 1, 0]`, so class 1 is correct.
"""


def test_a_one_hot_row_is_no_rounding_of_a_weight_row(tmp_path: Path) -> None:
    # W's second row rounds to the label's whole numbers, entry for entry
    row = [mpmath.mpf("-0.4"), mpmath.mpf("0.7"), mpmath.mpf("-0.2")]
    assert [mpmath.nint(x) for x in row] == [0, 1, 0]
    steps, checks = _steps(tmp_path, ONE_HOT)
    # the label is an input the article gives, not W's row printed to whole numbers
    assert all(printed != "0 1 0" for _, printed, _ in checks), checks
    assert all("W" not in s.partition("=")[2] for s in steps), steps
