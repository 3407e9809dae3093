r"""A function applied with no name for its result, whose result is printed below it:

    Apply:  \text{ReLU}(O \cdot W_1 + b_1)
    Output: H = [[3, 0.5], [3.25, 0]]

``O`` is named nowhere: it is the attention output the article printed just above (its
label's word ``output``), and ``W_1`` a layer's weights (so ``·`` is a matrix product).
Each fixture is written here; the expected values are worked by hand:

- attention output A·V with A = [[0.5, 0.5], [0.25, 0.75]], V = [[1, 2], [3, 0]]:
  [[0.5 + 1.5, 1 + 0], [0.25 + 2.25, 0.5 + 0]] = [[2, 1], [2.5, 0.5]];
- O·W_1 with W_1 = [[1, -1], [0.5, 1]]: [[2 + 0.5, -2 + 1], [2.5 + 0.25, -2.5 + 0.5]]
  = [[2.5, -1], [2.75, -2]]; plus b_1 = [0.5, 0.5]: [[3, -0.5], [3.25, -1.5]];
- ReLU: [[3, 0], [3.25, 0]].

So the printed ``0.5`` in the first row of H is wrong (the ReLU gives 0), the rest exact.
"""

from __future__ import annotations

from pathlib import Path

from article_checks import line_of, placed_verdicts

ARTICLE = r"""# A feed-forward layer after attention

The attention weights and the values:

$$
A = \begin{bmatrix} 0.5 & 0.5 \\ 0.25 & 0.75 \end{bmatrix}
$$

$$
V = \begin{bmatrix} 1 & 2 \\ 3 & 0 \end{bmatrix}
$$

### Attention output:

$$
\begin{bmatrix} 2 & 1 \\ 2.5 & 0.5 \end{bmatrix}
$$

## Feed-forward layer

$$
W_1 = \begin{bmatrix} 1 & -1 \\ 0.5 & 1 \end{bmatrix}
$$

$$
b_1 = [0.5, 0.5]
$$

Apply:

$$
\text{ReLU}(LETTER \cdot W_1 + b_1)
$$

Output:

$$
H = \begin{bmatrix}
3 & 0.5 \\
3.25 & 0 \\
\end{bmatrix}
$$
"""


def _h_rows(tmp_path: Path, text: str) -> list[list[tuple[str, str]]]:
    got = placed_verdicts(tmp_path, text)
    first = line_of(text, "3 & 0.5")
    return [sorted((p, v) for line, p, v in got if line == first + k) for k in (0, 1)]


def test_the_applied_function_is_the_step_of_the_result_printed_below_it(
    tmp_path: Path,
) -> None:
    rows = _h_rows(tmp_path, ARTICLE.replace("LETTER", "O"))
    assert rows == [[("0.5", "wrong"), ("3", "exact")], [("0", "exact"), ("3.25", "exact")]]


def test_a_letter_no_printed_result_is_named_by_leaves_the_result_unjudged(
    tmp_path: Path,
) -> None:
    # ``Y`` is the initial of nothing the article computed: the formula reads no tensor,
    # and H stays what the article gives
    rows = _h_rows(tmp_path, ARTICLE.replace("LETTER", "Y"))
    assert not [v for row in rows for _, v in row if v in ("slip", "wrong")]


def test_a_printing_between_the_formula_and_the_result_unbinds_them(tmp_path: Path) -> None:
    # a number printed between the two is what the formula's result may be: H is not it
    text = ARTICLE.replace("LETTER", "O").replace(
        "Output:\n", "With a scale of $s = 2$, the output:\n"
    )
    rows = _h_rows(tmp_path, text)
    assert not [v for row in rows for _, v in row if v in ("slip", "wrong")]


def test_a_printing_no_words_call_the_result_is_not_bound_to_the_formula(
    tmp_path: Path,
) -> None:
    # "Next:" says nothing of what H is: the formula may be an aside
    rows = _h_rows(tmp_path, ARTICLE.replace("LETTER", "O").replace("Output:\n", "Next:\n"))
    assert not [v for row in rows for _, v in row if v in ("slip", "wrong")]


def test_the_applied_function_written_in_plain_text_is_read_the_same(tmp_path: Path) -> None:
    plain = ARTICLE.replace("LETTER", "O").replace(
        "$$\n\\text{ReLU}(O \\cdot W_1 + b_1)\n$$", "```\nReLU(O · W_1 + b_1)\n```"
    )
    assert "ReLU(O · W_1" in plain
    rows = _h_rows(tmp_path, plain)
    assert rows == [[("0.5", "wrong"), ("3", "exact")], [("0", "exact"), ("3.25", "exact")]]
