r"""A printed matrix whose label is a formula over tensors the article gave states its step.

``QK^T = [...]``, ``XW_Q = [...]``: the label writes the step (juxtaposition a product,
``^T`` a transpose), so the entries are checked against it whatever they are (whole
numbers and 0/1 entries included), and a later printing under the same label is checked
the same way, never read as a new input; a label of known tensors multiplied or
transposed names every operand, so it is checked even where half its entries disagree.
A plain name (``S = [...]``) stays an input.

Expected values by hand:

- Q = [[1.0, 0.5], [0.2, 1.0]], K = [[1.0, 1.0], [0.0, 1.0]], Kᵀ = [[1, 0], [1, 1]]:
  QKᵀ = [[1.0 + 0.5, 0 + 0.5], [0.2 + 1.0, 0 + 1.0]] = [[1.5, 0.5], [1.2, 1.0]].
- Q = I, K = [[1, 1], [0, 1]]: QKᵀ = Kᵀ = [[1, 0], [1, 1]].
- X = [[1, 0], [1, 1]], W_Q = [[1, 2], [0, 1]]: XW_Q = [[1, 2], [1 + 0, 2 + 1]] = [[1, 2], [1, 3]];
  W_K = [[0, 1], [1, 0]]: XW_K = [[0, 1], [0 + 1, 1 + 0]] = [[0, 1], [1, 1]].
"""

from __future__ import annotations

from pathlib import Path

from tests.article_checks import placed_verdicts

_DECIMAL = r"""# Attention by hand

$$
Q = \begin{bmatrix} 1.0 & 0.5 \\ 0.2 & 1.0 \end{bmatrix}, \quad
K = \begin{bmatrix} 1.0 & 1.0 \\ 0.0 & 1.0 \end{bmatrix}
$$

$$
QK^T = \begin{bmatrix} 1.5 & 0.5 \\ 1.2 & 1.0 \end{bmatrix}
$$
"""

_COPY = r"""
Written out again:

$$
QK^T = \begin{bmatrix} 1.5 & 0.6 \\ 1.2 & 1.0 \end{bmatrix}
$$
"""

_ZERO_ONE = r"""# Attention by hand

$$
Q = \begin{bmatrix} 1 & 0 \\ 0 & 1 \end{bmatrix}, \quad
K = \begin{bmatrix} 1 & 1 \\ 0 & 1 \end{bmatrix}
$$

$$
QK^T = \begin{bmatrix} 1 & 0 \\ 1 & 1 \end{bmatrix}
$$
"""

_PROJECTIONS = r"""# Projections by hand

$$
X = \begin{bmatrix} 1 & 0 \\ 1 & 1 \end{bmatrix}, \quad
W_Q = \begin{bmatrix} 1 & 2 \\ 0 & 1 \end{bmatrix}, \quad
W_K = \begin{bmatrix} 0 & 1 \\ 1 & 0 \end{bmatrix}
$$

$$
XW_Q = \begin{bmatrix} 1 & 2 \\ 1 & %s \end{bmatrix}
$$

$$
XW_K = \begin{bmatrix} 0 & 1 \\ 1 & 1 \end{bmatrix}
$$

$$
S = \begin{bmatrix} 1 & 1 \\ 0 & 1 \end{bmatrix}
$$
"""


def _off(found: list[tuple[int | None, str, str]]) -> list[tuple[int | None, str, str]]:
    return [x for x in found if x[2] not in ("exact", "rounded")]


def test_a_correct_product_label_checks_out(tmp_path: Path) -> None:
    found = placed_verdicts(tmp_path, _DECIMAL)
    assert sorted(p for line, p, _ in found if line == 9) == ["0.5", "1.0", "1.2", "1.5"]
    assert _off(found) == []


def test_a_mistyped_copy_under_the_same_label_is_checked(tmp_path: Path) -> None:
    found = placed_verdicts(tmp_path, _DECIMAL + _COPY)
    assert len([x for x in found if x[0] == 15]) == 4  # the copy's entries, all checked
    off = _off(found)
    assert [(line, printed) for line, printed, _ in off] == [(15, "0.6")]
    assert off[0][2] in ("slip", "wrong")


def test_zero_one_entries_under_a_formula_label_are_checked(tmp_path: Path) -> None:
    found = placed_verdicts(tmp_path, _ZERO_ONE)
    assert sorted(p for line, p, _ in found if line == 9) == ["0", "1", "1", "1"]
    assert _off(found) == []


def test_a_juxtaposed_projection_is_its_product(tmp_path: Path) -> None:
    found = placed_verdicts(tmp_path, _PROJECTIONS % "3")
    assert len([x for x in found if x[0] == 10]) == 4  # XW_Q
    assert len([x for x in found if x[0] == 14]) == 4  # XW_K, whole numbers too
    assert not [x for x in found if x[0] == 18]  # S: a plain name, an input
    assert _off(found) == []


def test_a_wrong_entry_of_a_projection_is_flagged(tmp_path: Path) -> None:
    found = placed_verdicts(tmp_path, _PROJECTIONS % "4")
    assert [(line, printed) for line, printed, _ in _off(found)] == [(10, "4")]


def test_a_product_label_is_checked_where_half_its_entries_disagree(tmp_path: Path) -> None:
    text = _DECIMAL.replace("1.5 & 0.5 \\\\ 1.2 & 1.0", "2.5 & 0.5 \\\\ 1.2 & 3.0")
    assert "2.5 & 0.5" in text
    off = _off(placed_verdicts(tmp_path, text))
    assert sorted((line, printed) for line, printed, _ in off) == [(9, "2.5"), (9, "3.0")]
