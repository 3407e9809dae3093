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
