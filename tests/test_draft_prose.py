"""Ways posts print hand-worked arithmetic in plain text, read as they stand.

Each article here is written for its test, with numbers of its own; every
expected value is computed with mpmath at 50 digits (or exactly with
fractions) from the numbers the article prints, never taken from the draft.
"""

from __future__ import annotations

from fractions import Fraction
from pathlib import Path

import mpmath
from mp_reference import rounds_to

from symtf.commands.draft import check_article

MPMATH_DIGITS = 50


def _check(tmp_path: Path, text: str) -> tuple[list[tuple[int | None, str, str]], list]:
    path = tmp_path / "post.md"
    path.write_text(text, encoding="utf-8")
    report = check_article(path)
    checks = [(r.claim.source_line, c.printed, c.verdict) for r in report.results for c in r.checks]
    return checks, list(report.unchecked)


def _gelu(x: mpmath.mpf) -> mpmath.mpf:
    return x * (1 + mpmath.erf(x / mpmath.sqrt(2))) / 2


ROWS = """# Two tokens

The first token, as the embedding layer gives it:

```
red: [0.9, -0.4, 0.3, 0.7]
```

The whole sentence:

```
features = [
    [0.9, -0.4, 0.3, 0.7],   # "red"
    [0.2, 0.5, -0.3, 0.1],   # "big"
    [0.7, -0.1, 0.2, 0.6]    # "fox"
]
```
"""


def test_rows_printed_to_one_digit_are_not_a_step_by_coincidence(tmp_path: Path) -> None:
    """GELU of "red" rounds to three of the four one-digit entries of "fox" and misses the
    fourth by less than a unit: too little to call "fox" a GELU with a slip in it."""
    red = [mpmath.mpf(v) for v in ("0.9", "-0.4", "0.3", "0.7")]
    fox = ("0.7", "-0.1", "0.2", "0.6")
    fits = [rounds_to(_gelu(v), p) for v, p in zip(red, fox, strict=True)]
    assert fits == [True, True, True, False]
    assert abs(_gelu(red[3]) - mpmath.mpf("0.6")) < mpmath.mpf("0.1")
    checks, _ = _check(tmp_path, ROWS)
    assert [c for c in checks if c[2] not in ("exact", "rounded")] == []
    assert 15 not in {line for line, _, _ in checks}


def test_a_vectors_negative_entries_are_not_read_again_as_numbers(tmp_path: Path) -> None:
    """``[0.9, -0.4, …]`` prints a vector, not also the numbers 0.4 and 0.1 of its minus signs."""
    _, unchecked = _check(tmp_path, ROWS)
    assert [u for u in unchecked if getattr(u, "size", 0) == 1] == []


CONTINUED = """# A mean, by hand

```
mean = (1.5 + 2.25 + 0.75) / 3
     = 4.5 / 3
     = 1.5

scaled = 1.5 × 0.5774
       ≈ 0.866 ✓
```

Setext headings are not equations
=================================
"""


def test_an_equation_continued_under_its_equals_sign_is_checked_at_its_result(
    tmp_path: Path,
) -> None:
    assert (mpmath.mpf("1.5") + mpmath.mpf("2.25") + mpmath.mpf("0.75")) / 3 == mpmath.mpf("1.5")
    assert rounds_to(mpmath.mpf("1.5") * mpmath.mpf("0.5774"), "0.866")
    checks, _ = _check(tmp_path, CONTINUED)
    got = {(line, printed, verdict) for line, printed, verdict in checks}
    assert got == {(6, "1.5", "exact"), (9, "0.866", "rounded")}


DOT = """# One score

```
score[1][0] = Q[1] · K[0] = [0.3, 0.4] · [0.5, 0.2] = 0.3×0.5 + 0.4×0.2 = 0.23
```
"""


def test_a_dot_between_two_written_vectors_in_plain_text_is_their_dot_product(
    tmp_path: Path,
) -> None:
    """``·`` between written vectors means their dot product in plain text too, as ``\\cdot``
    does in LaTeX; it was read as a 1×2 by 1×2 matrix product and the line was not read."""
    q, k = [mpmath.mpf("0.3"), mpmath.mpf("0.4")], [mpmath.mpf("0.5"), mpmath.mpf("0.2")]
    assert mpmath.fsum(a * b for a, b in zip(q, k, strict=True)) == mpmath.mpf("0.23")
    checks, unchecked = _check(tmp_path, DOT)
    # both links of the line, the dot product as written and the sum of products, check
    # the one printed 0.23: one verdict
    assert [c for c in checks if c[1] == "0.23"] == [(4, "0.23", "exact")]
    assert [c for c in checks if c[2] not in ("exact", "rounded")] == []
    assert not [u for u in unchecked if "matrix product" in str(getattr(u, "reason", u))]


PRODUCTS = """# Products, one per line

```
0.6×1.5   = 0.9
-1.2×0.5  = -0.6
-0.4×-2.5 = 1.0
- 0.3×2   = 0.6
```
"""


def test_a_minus_sign_at_the_start_of_a_line_is_not_a_bullet(tmp_path: Path) -> None:
    """``-1.2×0.5 = -0.6`` lost its minus as if it were a list bullet: 1.2×0.5 against
    -0.6 was called wrong (and ``-0.4×-2.5 = 1.0`` read as 0.4×-2.5); a bullet is a dash
    followed by a space."""
    assert Fraction("-1.2") * Fraction("0.5") == Fraction("-0.6")
    assert Fraction("-0.4") * Fraction("-2.5") == 1
    assert Fraction("0.3") * 2 == Fraction("0.6")
    checks, _ = _check(tmp_path, PRODUCTS)
    got = {(line, printed, verdict) for line, printed, verdict in checks}
    assert {(5, "-0.6", "exact"), (6, "1.0", "exact"), (7, "0.6", "exact")} <= got
    assert [c for c in checks if c[2] not in ("exact", "rounded")] == []


CHUNKS = """# Running maximum over chunks

The scores: [4, 8, 2, 6]

#### **Chunk 1: [4, 8]**

```
m_old = -∞
m_new = max(-∞, 4, 8) = 8
```
"""


def test_a_reduction_after_a_block_of_columns_is_read_without_an_internal_error(
    tmp_path: Path,
) -> None:
    """The chunk [4, 8] is the first two columns of the scores; the running maximum below it
    looked for the chunk's row and raised KeyError (exit 3). max(4, 8) = 8."""
    checks, _ = _check(tmp_path, CHUNKS)
    assert max(Fraction(4), Fraction(8)) == 8
    assert (9, "8", "exact") in checks
