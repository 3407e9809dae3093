"""A quantity the article works out at several indices (``θ₀``, ``θ₁``, ``θ₃``), set by
name at another index (``θ₂ = 0.05``), is checked as the worked expression at that index.

The articles are written for these tests; expected values are by hand:
``10000^(-2×i/8)`` is ``10^(-i)``, so θ₀ = 1, θ₁ = 0.1, θ₂ = 0.01, θ₃ = 0.001.
"""

from __future__ import annotations

from fractions import Fraction as F
from pathlib import Path

from symtf.commands.draft import check_article

ARTICLE = """# Rotation rates

With `d = 8` dimensions the four pairs turn at these rates:

```
Pair 0: θ₀ = 1.0
Pair 1: θ₁ = 0.1
Pair 2: θ₂ = {two}
Pair 3: θ₃ = 0.001
```

Worked out from θᵢ = 10000^(-2i/d):

```
θ₀ = 10000^(-2×0/8) = 1.0
θ₁ = 10000^(-2×1/8) = 0.1
{worked}
```
"""

ALL_WORKED = "θ₃ = 10000^(-2×3/8) = 0.001"
#: 10000^(-2×2/8) = 10000^(-1/2) = 1/100, by hand.
THETA_2 = F(1, 100)


def _verdicts(tmp_path: Path, text: str) -> dict[int, list[tuple[str, str]]]:
    path = tmp_path / "rates.md"
    path.write_text(text, encoding="utf-8")
    out: dict[int, list[tuple[str, str]]] = {}
    for r in check_article(path).results:
        for c in r.checks:
            out.setdefault(r.claim.source_line or 0, []).append((c.printed, c.verdict))
    return out


def _line_of(text: str, needle: str) -> int:
    return next(i for i, line in enumerate(text.splitlines(), 1) if needle in line)


def test_a_rate_at_an_index_not_worked_out_is_the_worked_expression(tmp_path: Path) -> None:
    """θ₂ = 0.05 where 10000^(-2×2/8) = 0.01 (by hand): wrong."""
    assert F("0.05") != THETA_2
    text = ARTICLE.format(two="0.05", worked=ALL_WORKED)
    verdicts = _verdicts(tmp_path, text)
    assert verdicts[_line_of(text, "Pair 2")] == [("0.05", "wrong")]


def test_a_right_rate_at_an_index_not_worked_out_is_exact(tmp_path: Path) -> None:
    assert F("0.01") == THETA_2
    text = ARTICLE.format(two="0.01", worked=ALL_WORKED)
    verdicts = _verdicts(tmp_path, text)
    assert verdicts[_line_of(text, "Pair 2")] == [("0.01", "exact")]


def test_one_worked_index_shows_no_expression_of_the_index(tmp_path: Path) -> None:
    """With θ₀ and θ₁ worked but θ₁'s line written without its index, only one line
    shows where the index stands: θ₂ is left unchecked, not guessed."""
    text = ARTICLE.format(two="0.05", worked="").replace(
        "θ₁ = 10000^(-2×1/8) = 0.1", "θ₁ = 10000^(-0.25) = 0.1"
    )
    verdicts = _verdicts(tmp_path, text)
    assert _line_of(text, "Pair 2") not in verdicts


#: Ninety-five lines of prose between the rates and the rotation below.
GAP = "\n".join(f"Line {k} of a long aside." for k in range(95))

FAR = """# A rate, then a rotation far below

Worked rates:

```
θ₀ = 10000^(-2×0/8) = 1.0
θ₁ = 10000^(-2×1/8) = 0.1
θ₂ = 0.5
```

{gap}

Rotate [3, 4] by 30°:

```
θ = 30° = 0.524 radians
new_x = 3*cos(0.524) - 4*sin(0.524) = 3*0.866 - 4*0.5 = 0.598
```
"""


def test_a_short_number_far_below_repeats_the_line_beside_it(tmp_path: Path) -> None:
    """θ₂ = 0.5 is wrong (0.01 by hand); the 0.5 of ``4*0.5`` a hundred lines below is
    sin(0.524) = sin 30° = 1/2 written on its own line, so that line is right
    (3×0.866 − 4×0.5 = 0.598 as displayed; 3 cos 30° − 4 sin 30° = 3√3/2 − 2 = 0.5981
    rounds to 0.598), not inherited from θ₂."""
    text = FAR.format(gap=GAP)
    verdicts = _verdicts(tmp_path, text)
    assert verdicts[_line_of(text, "θ₂ = 0.5")] == [("0.5", "wrong")]
    line = verdicts[_line_of(text, "new_x")]
    assert ("0.598", "rounded") in line
    assert all(v in ("exact", "rounded") for _, v in line)


HEADS = """# Slopes for four heads

The slopes form a geometric sequence. For `n` heads:

```python
r = 2^(-8/n)

Head 1: m = -(r^1)
Head 2: m = -(r^2)
Head 3: m = -(r^3)
```

With four heads:

```python
r = 2^(-8/4) = 0.25

Head 1: -0.25
Head 2: -0.0625
Head 3: -0.0156
Head 4: {four}
```
"""


def test_labelled_lines_at_an_index_are_the_written_expression(tmp_path: Path) -> None:
    """r = 2^(−2) = 1/4, so head k has −(1/4)^k: −0.25, −0.0625, −0.015625 (prints as
    −0.0156) and −1/256 = −0.00390625, which prints as −0.004 to three decimals: −0.005 is
    wrong (by hand)."""
    assert -(F(1, 4) ** 4) == F(-1, 256)
    text = HEADS.format(four="-0.005")
    verdicts = _verdicts(tmp_path, text)
    assert verdicts[_line_of(text, "Head 1: -0.25")] == [("-0.25", "exact")]
    assert verdicts[_line_of(text, "Head 2: -0.0625")] == [("-0.0625", "exact")]
    assert verdicts[_line_of(text, "Head 3: -0.0156")] == [("-0.0156", "rounded")]
    assert verdicts[_line_of(text, "Head 4:")] == [("-0.005", "wrong")]


def test_labelled_lines_need_their_names_worked_out(tmp_path: Path) -> None:
    """With no line working r out, the heads' values are left unchecked."""
    text = HEADS.format(four="-0.0039").replace("r = 2^(-8/4) = 0.25", "r is a quarter")
    verdicts = _verdicts(tmp_path, text)
    assert _line_of(text, "Head 4:") not in verdicts
    assert _line_of(text, "Head 1: -0.25") not in verdicts


LISTED = """# Rates as a list

Worked out:

```
θ₀ = 10000^(-2×0/8) = 1.0
θ₁ = 10000^(-2×1/8) = 0.1
θ₃ = 10000^(-2×3/8) = 0.001
```

Even spacing would give `θ = [1.0, 0.7, 0.4, ..., 0.001]`, which is not what is used.

What is used: `θ = [1.0, 0.1, {two}, ..., 0.001]`.
"""


def test_a_list_of_the_quantity_is_it_index_by_index(tmp_path: Path) -> None:
    """The used list repeats θ₀ and θ₁ as worked, so its third entry is θ₂ = 0.01 (by
    hand): 0.05 is wrong. The even spacing list does not repeat θ₁ (0.7): another
    quantity, left alone; entries after the ellipsis have no index and are left alone."""
    text = LISTED.format(two="0.05")
    verdicts = _verdicts(tmp_path, text)
    used = _line_of(text, "What is used")
    assert sorted(verdicts[used]) == [("0.05", "wrong"), ("0.1", "exact"), ("1.0", "exact")]
    assert _line_of(text, "Even spacing") not in verdicts
