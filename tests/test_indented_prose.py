"""A worked softmax written as a Markdown list indented under a display, in LaTeX spans.

Forms read here (each number's expected verdict is worked out in the comments, with
mpmath at 30 digits: e^1.3 = 3.66930, e^0.55 = 1.73325, e^-0.5 = 0.606531, their sum
6.00908, the probabilities 0.610625, 0.288439, 0.100936, and -ln 0.610625 = 0.493272):

- a list indented four spaces after a display is Markdown, not an indented code block,
  when it writes LaTeX spans ``\\(…\\)`` (no program writes them);
- ``\\(e^{1.3}\\) (for "sun") \\(\\approx 3.67\\)``: words in parentheses between an
  expression and the span that gives its value;
- ``\\(p(\\text{sun})\\): 3.67 / 6.01 = \\(0.61\\ (61\\%)\\)``: arithmetic in prose ending on
  its ``=``, the result in the maths span after it, restated as a percentage;
- two quantities printed alike (``e^{-0.5} ≈ 0.61`` and ``p(sun) = 0.61``): a later
  ``-\\log(0.61)`` repeats neither.
"""

from __future__ import annotations

from pathlib import Path

import mpmath

from symtf.commands.draft import check_article
from tests.article_checks import placed_verdicts

POST = """\
# Next word

1.  **Scores:** the model gives the logits 1.3, 0.55 and -0.5 to sun, moon and star.
    We turn them into probabilities.

\\[
p_i = \\frac{e^{z_i}}{\\sum_j e^{z_j}}
\\]

    * **Exponentials:**
        * \\(e^{1.3}\\) (for "sun") \\(\\approx 3.67\\)
        * \\(e^{0.55}\\) (for "moon") \\(\\approx 1.73\\)
        * \\(e^{-0.5}\\) (for "star") \\(\\approx 0.61\\)
        * **Total:** \\(3.67 + 1.73 + 0.61 = 6.01\\)
    * **Probabilities:**
        * \\(p(\\text{sun})\\): 3.67 / 6.01 = \\(\\mathbf{0.61\\ (61\\%)}\\)
        * \\(p(\\text{moon})\\): 1.73 / 6.01 = \\(0.29\\ (29\\%)\\)
        * \\(p(\\text{star})\\): 0.61 / 6.01 = \\(0.12\\ (12\\%)\\)

The loss is \\(-\\log(0.61) \\approx \\mathbf{0.49}\\).
"""


def test_the_indented_list_is_read_as_markdown_maths(tmp_path: Path) -> None:
    got = placed_verdicts(tmp_path, POST)
    # e^1.3 = 3.6693 → 3.67, e^0.55 = 1.7333 → 1.73, e^-0.5 = 0.60653 → 0.61
    # (lines 11–13); 3.67 + 1.73 + 0.61 = 6.01 (line 14)
    assert (11, "3.67", "rounded") in got
    assert (12, "1.73", "rounded") in got
    assert (13, "0.61", "rounded") in got
    assert (14, "6.01", "rounded") in got
    # 3.67 / 6.01 = 0.6107 → 0.61 (exact 0.6106); 1.73 / 6.01 = 0.2879 → 0.29 (0.2884)
    assert (16, "0.61", "rounded") in got
    assert (17, "0.29", "rounded") in got


def test_an_off_probability_in_the_list_is_flagged(tmp_path: Path) -> None:
    mpmath.mp.dps = 30
    z = [mpmath.mpf("1.3"), mpmath.mpf("0.55"), mpmath.mpf("-0.5")]
    star = mpmath.exp(z[2]) / sum(mpmath.exp(x) for x in z)
    assert mpmath.nstr(star, 2) == "0.1"  # the probability is 0.10, not the 0.12 printed
    assert mpmath.nstr(mpmath.mpf("0.61") / mpmath.mpf("6.01"), 2) == "0.1"
    got = placed_verdicts(tmp_path, POST)
    assert [v for line, p, v in got if line == 18 and p == "0.12"] in (["wrong"], ["slip"])


def test_a_number_two_quantities_print_alike_repeats_neither(tmp_path: Path) -> None:
    # 0.61 is printed for e^-0.5 (0.60653) and for p(sun) (0.61062): -log(0.61) = 0.4943
    # as written gives 0.49, and so does -log(p(sun)) = 0.4933; read as e^-0.5 it would
    # be 0.5 (a false alarm)
    mpmath.mp.dps = 30
    assert mpmath.nstr(-mpmath.log(mpmath.mpf("0.61")), 2) == "0.49"
    assert mpmath.nstr(-mpmath.log(mpmath.exp(mpmath.mpf("-0.5"))), 2) == "0.5"
    got = placed_verdicts(tmp_path, POST)
    assert (20, "0.49", "rounded") in got


def test_the_same_forms_outside_an_indented_block(tmp_path: Path) -> None:
    post = "\n".join(line.strip() for line in POST.splitlines()) + "\n"
    got = placed_verdicts(tmp_path, post)
    assert (11, "3.67", "rounded") in got
    assert (16, "0.61", "rounded") in got
    assert (17, "0.29", "rounded") in got
    assert (20, "0.49", "rounded") in got


SECTIONS = """\
# Parameters

## 2.1 Parameter Breakdown

The layer has 512 × 512 = 262,144 weights.

### 3. Results with $d = 512$

## 0.5 Is Not a Section Number Alone

## Step 2: 0.75
"""


def test_a_heading_section_number_is_no_printed_value(tmp_path: Path) -> None:
    path = tmp_path / "post.md"
    path.write_text(SECTIONS, encoding="utf-8")
    unchecked = {(u.line, u.text) for u in check_article(path).unchecked}
    # "2.1" and "3." number their sections: no printed value, so not "not checked"
    assert not any(line in (3, 7) for line, _ in unchecked)
    # a number opening with 0 is a value ("0.5 Is …"), and so is the 0.75 of "Step 2: 0.75"
    assert (9, "0.5") in unchecked
    assert (11, "0.75") in unchecked


COUNTS = """\
# Parameter count

- L = 4 (number of layers)
- d = 256 (model width)

One layer holds 4 × 256 × 256 = 262,144 attention weights and 2 × 256 × 1024 = 524,288
feed-forward weights.

```
262,144 (attention) + 524,288 (feed-forward) + 1,024 (norms)
= 787,456 parameters
```

For 4 layers: 4 × 787,456 = 3,149,842 parameters
"""


def test_terms_named_in_parentheses_and_their_sum_below(tmp_path: Path) -> None:
    got = placed_verdicts(tmp_path, COUNTS)
    # 262,144 + 524,288 + 1,024 = 787,456 (by hand: 786,432 + 1,024), on the line of its
    # result below the terms, each term named in words in parentheses
    assert (11, "787,456", "exact") in got
    # 4 × 787,456 = 3,149,824, not the 3,149,842 printed (two digits swapped)
    assert (14, "3,149,842", "wrong") in got or (14, "3,149,842", "slip") in got
    # the first link's 787,456 repeats the sum printed above it
    assert (14, "787,456", "exact") in got


def test_a_setting_with_its_meaning_in_words_is_an_input(tmp_path: Path) -> None:
    path = tmp_path / "post.md"
    path.write_text(COUNTS, encoding="utf-8")
    unchecked = {(u.line, u.text) for u in check_article(path).unchecked}
    # "L = 4 (number of layers)": a constant the article sets, not a value to place
    assert not any(line in (3, 4) for line, _ in unchecked)


def test_a_bold_line_of_vector_arithmetic_is_checked(tmp_path: Path) -> None:
    # by hand: 0.45 + 0.00 = 0.45 and -0.32 + 1.00 = 0.68, 0.12 + 0.00 = 0.12 and
    # 0.99 + 1.00 = 1.99; 0.40 + 0.10 = 0.50, not the 0.55 printed
    post = (
        "# Adding the positions\n\n"
        "**[0.45,-0.32]+[0.00,1.00] = [0.45,0.68]**\n\n"
        "**[0.12, 0.99] + [0.00, 1.00] = [0.12, 1.99]**\n\n"
        "* **[0.40, 0.20] + [0.10, 0.30] = [0.55, 0.50]**\n"
    )
    got = placed_verdicts(tmp_path, post)
    assert [(p, v) for line, p, v in got if line == 3] == [("0.45", "exact"), ("0.68", "exact")]
    assert [(p, v) for line, p, v in got if line == 5] == [("0.12", "exact"), ("1.99", "exact")]
    assert ("0.50", "exact") in [(p, v) for line, p, v in got if line == 7]
    assert any(line == 7 and p == "0.55" and v in ("slip", "wrong") for line, p, v in got)


VALUES_IN_PROSE = """\
# The value after the maths

- \\(e^{1.5}\\) ≈ 4.48
- $e^{0.5}$ = 1.65
- $e^{-1.0}$ (for "sky") ≈ 0.37
- $4.48 / 6.50$ = **0.69**
- $\\frac{3.2}{\\sqrt{4}}$ = 1.7, so the next score is 2.0
"""


def test_a_value_in_prose_after_the_maths_it_gives(tmp_path: Path) -> None:
    # by mpmath: e^1.5 = 4.48169, e^0.5 = 1.64872, e^-1 = 0.367879; 4.48 / 6.50 =
    # 0.689231 → 0.69; 3.2 / sqrt(4) = 1.6, not the 1.7 printed
    mpmath.mp.dps = 30
    assert mpmath.nstr(mpmath.exp(mpmath.mpf("1.5")), 3) == "4.48"
    assert mpmath.nstr(mpmath.exp(mpmath.mpf("-1")), 2) == "0.37"
    got = placed_verdicts(tmp_path, VALUES_IN_PROSE)
    assert (3, "4.48", "rounded") in got
    assert (4, "1.65", "rounded") in got
    assert (5, "0.37", "rounded") in got
    assert (6, "0.69", "rounded") in got
    assert any(line == 7 and p == "1.7" and v in ("slip", "wrong") for line, p, v in got)
    assert not any(p == "2.0" for _, p, _ in got)  # a value the prose states, not the maths'


MINUS_FUNCTIONS = """\
# Losses

- -log(0.25) ≈ 1.386
- The loss is −ln(0.5) = 0.693.
- p = 3.0 / 4.0 = **0.75**
- -ln(0.8) ≈ 0.25
"""


def test_a_minus_before_a_function_and_a_bold_result(tmp_path: Path) -> None:
    # by mpmath: -ln(0.25) = 1.386294 → 1.386 (read without its minus it is -1.386, a
    # false alarm); -ln(0.5) = 0.693147 → 0.693; 3/4 = 0.75; -ln(0.8) = 0.223144, not 0.25
    mpmath.mp.dps = 30
    assert mpmath.nstr(-mpmath.log(mpmath.mpf("0.25")), 4) == "1.386"
    assert mpmath.nstr(-mpmath.log(mpmath.mpf("0.8")), 3) == "0.223"
    got = placed_verdicts(tmp_path, MINUS_FUNCTIONS)
    assert (3, "1.386", "rounded") in got
    assert (4, "0.693", "rounded") in got
    assert (5, "0.75", "exact") in got
    assert any(line == 6 and p == "0.25" and v in ("slip", "wrong") for line, p, v in got)
