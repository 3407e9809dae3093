"""Steps an article states in its formulas, and steps taken on the evidence of its numbers.

Every article here is written for its test, with numbers of its own. The expected
values are computed exactly with fractions (products, sums) or with mpmath at 50
digits (softmax, LayerNorm) from the numbers the article states, never taken from the
draft; which entries are off is how each article was built.
"""

from __future__ import annotations

from fractions import Fraction
from pathlib import Path

import mpmath
import pytest
from mp_reference import rounds_to

from symtf.commands.draft import check_article
from symtf.draft.infer.formula import Node, parse, split_equation
from symtf.draft.infer.stated import Resolver, meanings
from symtf.draft.templates import Ref, render

MPMATH_DIGITS = 50


def _verdicts(tmp_path: Path, text: str) -> tuple[dict[tuple[int, str], list[str]], list]:
    """(source line, printed) → verdicts, and what was left unchecked."""
    path = tmp_path / "post.md"
    path.write_text(text, encoding="utf-8")
    report = check_article(path)
    out: dict[tuple[int, str], list[str]] = {}
    for r in report.results:
        for c in r.checks:
            out.setdefault((r.claim.source_line or 0, c.printed), []).append(c.verdict)
    return out, list(report.unchecked)


# ----------------------------------------------------------------------------- reading formulas


def _shape(node: Node | None) -> str:
    """A tree written back compactly, to compare with what a person reads in the formula."""
    if node is None:
        return "None"
    if node.kind == "name":
        return (
            node.text + (f"_{node.sub}" if node.sub else "") + (f"^{node.sup}" if node.sup else "")
        )
    if node.kind == "num":
        return node.text
    if node.kind == "call":
        return f"{node.text}(" + ", ".join(_shape(a) for a in node.args) + ")"
    if node.kind == "sum":
        return f"sum_{node.sub}(" + _shape(node.args[0]) + ")"
    return f"{node.kind}(" + ", ".join(_shape(a) for a in node.args) + ")"


@pytest.mark.parametrize(
    ("latex", "tree"),
    [
        (r"X \cdot W_Q", "mul(X, W_Q)"),
        (r"X W_Q", "mul(X, W_Q)"),
        (r"Q K^T", "mul(Q, T(K))"),
        (r"Q K^\top", "mul(Q, T(K))"),
        (r"QK^T", "T(QK)"),  # one word: split into letters only when it names nothing
        (r"\frac{Q_i \cdot K_j^T}{\sqrt{3}}", "div(mul(Q_i, T(K_j)), sqrt(3))"),
        (r"\text{softmax}(\text{Scores})", "softmax(Scores)"),
        (r"\frac{e^{z_i}}{\sum_{j} e^{z_j}}", "div(exp(z_i), sum_j(exp(z_j)))"),
        (r"\mathrm{ReLU}(O W_1 + b_1)", "relu(add(mul(O, W_1), b_1))"),
        (r"\sigma(z)", "sigma(z)"),
        (r"\max(0, x W_1 + b_1) W_2 + b_2", "add(mul(max(0, add(mul(x, W_1), b_1)), W_2), b_2)"),
        (r"\sum_j \alpha_{ij} V_j", "sum_j(mul(α_ij, V_j))"),
        (r"W_Q^{(1)}", "W_Q^(1)"),
        (r"\gamma \odot \hat{x} + \beta", "add(hadamard(γ, hat_x), β)"),
        ("X·W_Q", "mul(X, W_Q)"),
        ("softmax(QKᵀ/√2)", "softmax(div(T(QK), sqrt(2)))"),
        ("X @ W_Q", "matmul(X, W_Q)"),  # code written as prose
        ("Q @ K.T / 2", "div(matmul(Q, T(K)), 2)"),
        ("x**2", "pow(x, 2)"),
        (r"\begin{bmatrix} 1 \end{bmatrix}", "None"),
        (r"[a, b, c]", "None"),
    ],
)
def test_a_formula_is_read_as_written(latex: str, tree: str) -> None:
    assert _shape(parse(latex)) == tree


def test_an_equation_chain_splits_at_its_top_level_relations() -> None:
    assert split_equation(r"\alpha = \text{softmax}(S) \approx 0.5") == [
        r"\alpha",
        r"\text{softmax}(S)",
        "0.5",
    ]
    assert split_equation(r"f(x = 1) = y") == ["f(x = 1)", "y"]  # inside brackets: no split


def _resolver(tensors: dict[str, int], numbers: dict[str, str] | None = None) -> Resolver:
    nums = numbers or {}
    return Resolver(
        lambda name: [Ref(tensors[name])] if name in tensors else [],
        lambda name: nums.get(name),
    )


def _texts(latex: str, tensors: dict[str, int], numbers: dict[str, str] | None = None) -> set[str]:
    node = parse(latex)
    assert node is not None
    names = {k: n for n, k in tensors.items()}
    return {render(e, names) for e in meanings(node, _resolver(tensors, numbers))}


def test_a_product_may_be_a_matrix_or_an_elementwise_product() -> None:
    assert _texts(r"X \cdot W", {"X": 1, "W": 2}) == {"X @ W", "X * W"}
    assert _texts("X @ W", {"X": 1, "W": 2}) == {"X @ W"}  # written as code: the matrix one


def test_index_notation_reads_a_row_dot_product_as_a_product_with_a_transpose() -> None:
    assert _texts(r"\frac{Q_i \cdot K_j^T}{\sqrt{3}}", {"Q": 1, "K": 2}) == {"Q @ K.T / sqrt(3)"}
    assert _texts(r"\sum_j \alpha_{ij} V_j", {"alpha": 1, "V": 2}) == {"alpha @ V"}


def test_a_softmax_written_out_is_a_row_softmax() -> None:
    assert _texts(r"\frac{e^{z_i}}{\sum_{j} e^{z_j}}", {"z": 1}) == {"softmax(z, axis=-1)"}
    assert _texts(r"\frac{e^{z_i / T}}{\sum_{j} e^{z_j / T}}", {"z": 1}, {"T": "2"}) == {
        "softmax(z / 2, axis=-1)"
    }


def test_letters_written_together_are_a_product_when_the_word_names_nothing() -> None:
    assert _texts(r"\text{softmax}(QK^T)", {"Q": 1, "K": 2}) == {
        "softmax(Q @ K.T, axis=-1)",
        "softmax(Q * K.T, axis=-1)",
    }
    assert _texts(r"\text{softmax}(QK^T)", {"QK": 3, "Q": 1, "K": 2}) == {"softmax(QK.T, axis=-1)"}


def test_a_formula_over_unknown_names_means_nothing() -> None:
    assert _texts(r"X \cdot W_Q", {"X": 1}) == set()


# ----------------------------------------------------------------------------- stated steps

STATED = r"""# Projections

$$
X = \begin{bmatrix} 0.1 & 0.2 \\ 0.3 & 0.4 \end{bmatrix}
$$

$$
W_Q = \begin{bmatrix} 0.5 & 0.6 \\ 0.7 & 0.8 \end{bmatrix}
$$

We apply

$$
Q = X \cdot W_Q
$$

#### Query $Q$

$$
\begin{bmatrix} 0.19 & 0.25 \\ 0.43 & 0.50 \end{bmatrix}
$$
"""


def test_a_stated_step_is_checked_whatever_its_entries_say(tmp_path: Path) -> None:
    """``Q = X·W_Q`` is stated; three of the four printed entries are right and the last is
    off by six units. Before, no step reproduced every entry and Q went unchecked."""
    x = [[Fraction("0.1"), Fraction("0.2")], [Fraction("0.3"), Fraction("0.4")]]
    w = [[Fraction("0.5"), Fraction("0.6")], [Fraction("0.7"), Fraction("0.8")]]
    q = [[sum(x[i][k] * w[k][j] for k in range(2)) for j in range(2)] for i in range(2)]
    assert q == [[Fraction("0.19"), Fraction("0.22")], [Fraction("0.43"), Fraction("0.50")]]
    got, _ = _verdicts(tmp_path, STATED)
    line = STATED.splitlines().index(r"\begin{bmatrix} 0.19 & 0.25 \\ 0.43 & 0.50 \end{bmatrix}")
    by_printed = {p: v for (ln, p), v in got.items() if ln >= line - 1}
    assert by_printed["0.19"] == ["exact"]
    assert by_printed["0.43"] == ["exact"]
    assert by_printed["0.50"] == ["exact"]
    assert by_printed["0.25"] == ["wrong"]  # 0.22 exactly: three units off


SOFTMAX = r"""# Temperature

The logits:

$$
z = [2.0, 1.0, 0.5]
$$

The probabilities are

$$
P(y_i) = \frac{e^{z_i}}{\sum_{j} e^{z_j}}
$$

After calculations:

$$
P = [0.66, 0.23, 0.11]
$$
"""


def test_a_softmax_written_out_checks_a_printed_row_that_is_all_off(tmp_path: Path) -> None:
    z = [mpmath.mpf(v) for v in ("2.0", "1.0", "0.5")]
    total = sum(mpmath.exp(v) for v in z)
    p = [mpmath.exp(v) / total for v in z]
    printed = ("0.66", "0.23", "0.11")
    assert [rounds_to(v, s) for v, s in zip(p, printed, strict=True)] == [False, True, False]
    got, _ = _verdicts(tmp_path, SOFTMAX)
    flat = {p: v for (_, p), v in got.items()}
    verdicts = {s: flat.get(s) for s in printed}
    assert verdicts == {"0.66": ["wrong"], "0.23": ["rounded"], "0.11": ["wrong"]}


NOT_NAMED = r"""# Inputs

$$
A = \begin{bmatrix} 0.3 & 0.5 \\ 0.2 & 0.1 \end{bmatrix}
$$

Some other matrix the post gives:

$$
B = \begin{bmatrix} 0.3 & 0.5 \\ 0.9 & 0.4 \end{bmatrix}
$$
"""


def test_an_input_that_repeats_a_row_of_another_is_not_flagged(tmp_path: Path) -> None:
    """B's first row repeats A's: no formula names B, and a coincidence of one-digit entries
    is no step, so B is an input, not a wrong copy of A."""
    got, _ = _verdicts(tmp_path, NOT_NAMED)
    assert not any(v in ("slip", "wrong") for vs in got.values() for v in vs)


def _layernorm(row: list[str]) -> list[mpmath.mpf]:
    xs = [mpmath.mpf(v) for v in row]
    mean = sum(xs) / len(xs)
    var = sum((v - mean) ** 2 for v in xs) / len(xs)
    return [(v - mean) / mpmath.sqrt(var) for v in xs]


EVIDENT = r"""# Three tokens

The embeddings:

$$
E = \begin{bmatrix}
0.12 & 0.55 & -0.31 & 0.84 \\
0.47 & -0.22 & 0.18 & 0.09 \\
-0.35 & 0.61 & 0.27 & -0.14
\end{bmatrix}
$$

Each row, normalised:

```
[-0.4133, 0.5741, -1.4007, 1.2400]
[1.3817, -1.4224, 0.2032, -0.1626]
[-1.2078, 1.3833, 0.4565, -0.6410]
```
"""


def test_a_step_far_above_chance_is_taken_and_its_one_wrong_entry_flagged(tmp_path: Path) -> None:
    """Eleven of the twelve 4-decimal entries are LayerNorm (ε = 0) of the rows above (about
    140 bits); the twelfth, 0.4565 (for 0.4656), is off. No formula names the step."""
    rows = [
        ["0.12", "0.55", "-0.31", "0.84"],
        ["0.47", "-0.22", "0.18", "0.09"],
        ["-0.35", "0.61", "0.27", "-0.14"],
    ]
    printed = [
        ["-0.4133", "0.5741", "-1.4007", "1.2400"],
        ["1.3817", "-1.4224", "0.2032", "-0.1626"],
        ["-1.2078", "1.3833", "0.4565", "-0.6410"],
    ]
    off = {
        (i, j)
        for i, row in enumerate(rows)
        for j, v in enumerate(_layernorm(row))
        if not rounds_to(v, printed[i][j])
    }
    assert off == {(2, 2)}
    wrong_by = abs(_layernorm(rows[2])[2] - mpmath.mpf("0.4565")) / mpmath.mpf("0.0001")
    assert wrong_by > 1
    got, _ = _verdicts(tmp_path, EVIDENT)
    flat = {p: v for (_, p), v in got.items()}
    assert flat["0.4565"] == ["wrong"]
    for i, row in enumerate(printed):
        for j, p in enumerate(row):
            if (i, j) != (2, 2):
                assert flat[p] in (["rounded"], ["exact"]), (p, flat[p])


COINCIDENCE = """# Scores

```
scores = [0.3, -0.1, 0.5, 0.2]
```

Then:

```
out = [0.3, -0.1, 0.9, 0.7]
```
"""


def test_a_few_one_digit_matches_carry_no_step(tmp_path: Path) -> None:
    """Two one-digit entries of ``out`` repeat ``scores``: far too little evidence to call
    ``out`` a copy of it with two wrong entries."""
    got, _ = _verdicts(tmp_path, COINCIDENCE)
    assert not any(v in ("slip", "wrong") for vs in got.values() for v in vs)


# ----------------------------------------------------------------------------- temperature sections

_TEMPERATURE = r"""# Temperature

The softmax with a temperature:
$$
P(y_i) = \frac{{e^{{z_i / T}}}}{{\sum_{{j}} e^{{z_j / T}}}}
$$

## Example

The logits:
$$
z = [1.0, 3.0, 2.0]
$$

### Plain softmax ($ T = 1 $)
$$
P(y_i) = \frac{{e^{{z_i}}}}{{\sum_{{j}} e^{{z_j}}}}
$$
After calculations:
$$
P = [{plain}]
$$

### Sharp ($ T = 0.5 $)
Dividing by $ T $:
$$
z / T = [{divided}]
$$
Apply softmax:
$$
P = [{sharp}]
$$
"""


def _softmax(z: list[str], temperature: str) -> list[mpmath.mpf]:
    with mpmath.workdps(MPMATH_DIGITS):
        e = [mpmath.exp(mpmath.mpf(v) / mpmath.mpf(temperature)) for v in z]
        return [x / sum(e) for x in e]


def test_a_section_that_sets_a_constant_reads_the_formula_written_in_it(tmp_path: Path) -> None:
    # z = [1, 3, 2]. Plain: softmax(z) = [0.0900, 0.6652, 0.2447] -> [0.09, 0.67, 0.24].
    # Sharp (T = 0.5): softmax(z / 0.5) = softmax([2, 6, 4]) = [0.01588, 0.86681, 0.11731]
    # -> [0.02, 0.87, 0.12]; the article prints 0.01 (within one unit: a slip) and 0.88
    # (off by more than one unit). Read with the nearer formula without T, softmax(z), the
    # sharp row would be judged against [0.09, 0.67, 0.24] and the right 0.12 flagged.
    z = ["1.0", "3.0", "2.0"]
    plain, sharp = _softmax(z, "1"), _softmax(z, "0.5")
    assert [rounds_to(v, t) for v, t in zip(plain, ["0.09", "0.67", "0.24"], strict=True)] == [
        True
    ] * 3
    assert [rounds_to(v, t) for v, t in zip(sharp, ["0.02", "0.87", "0.12"], strict=True)] == [
        True
    ] * 3
    assert abs(sharp[0] - mpmath.mpf("0.01")) < mpmath.mpf("0.01")
    assert abs(sharp[1] - mpmath.mpf("0.88")) > mpmath.mpf("0.01")
    text = _TEMPERATURE.format(
        plain="0.09, 0.67, 0.24", divided="2.0, 6.0, 4.0", sharp="0.01, 0.88, 0.12"
    )
    got, _ = _verdicts(tmp_path, text)
    assert got[(30, "0.01")] == ["slip"]
    assert got[(30, "0.88")] == ["wrong"]
    assert got[(30, "0.12")] == ["rounded"]


def test_a_label_written_as_a_formula_states_its_step(tmp_path: Path) -> None:
    # z / T with T = 0.5 (the section's constant): [1, 3, 2] / 0.5 = [2, 6, 4]. The article
    # prints 4.5 for the last: off by 0.5, five units of its last digit. Two of the three
    # entries agree, so the label states the step and the third is judged.
    text = _TEMPERATURE.format(
        plain="0.09, 0.67, 0.24", divided="2.0, 6.0, 4.5", sharp="0.02, 0.87, 0.12"
    )
    got, _ = _verdicts(tmp_path, text)
    assert got[(26, "2.0")] == ["exact"]
    assert got[(26, "6.0")] == ["exact"]
    assert got[(26, "4.5")] == ["wrong"]
