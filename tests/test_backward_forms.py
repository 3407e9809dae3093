"""Forms of writing of hand-worked backward passes and running updates, each in a fixture
written for it: gradients worked entry by entry and then gathered in one vector, running
sums carried from one chain to the next, and displayed matrices in a file with CRLF line
ends.

Every expected verdict comes from an independent recomputation with mpmath (or from how
the fixture was made); every expected place from the fixture text itself.
"""

from __future__ import annotations

from collections.abc import Iterator
from fractions import Fraction
from pathlib import Path

import mpmath
import pytest
from article_checks import json_checks, verdicts_at


@pytest.fixture(autouse=True)
def _forty_digits() -> Iterator[None]:
    """mpmath at 40 digits in this file's tests, and the global precision restored after."""
    with mpmath.workdps(40):
        yield


def _class(value: mpmath.mpf | Fraction, printed: str) -> str:
    """The class of ``printed`` against ``value`` (exact, rounded, slip, wrong): exact
    rationals by :class:`Fraction`, transcendental values by mpmath."""
    text = printed.replace("−", "-")
    decimals = len(text.split(".")[1]) if "." in text else 0
    if isinstance(value, Fraction):
        unit: Fraction | mpmath.mpf = Fraction(1, 10**decimals)
        off: Fraction | mpmath.mpf = abs(value - Fraction(text))
    else:
        unit = mpmath.mpf(10) ** (-decimals)
        off = abs(value - mpmath.mpf(text))
    if off == 0:
        return "exact"
    if off <= unit / 2:
        return "rounded"
    return "slip" if off < unit else "wrong"


# ------------------------------------------------- a gradient gathered after its entries

GATHERED = """\
# Gradient through the output layer

```
dL/dh[0] = 0.3 × 0.7 + 0.2 × 0.1
         = 0.23

dL/dh[1] = 0.3 × 0.4 + 0.2 × 0.9
         = 0.31
```

**dL/dh = [0.23, 0.31]**

Something else: [0.23, 0.47]
"""


def test_a_vector_gathering_results_worked_entry_by_entry_is_checked_as_those_lines(
    tmp_path: Path,
) -> None:
    # 0.3·0.7 + 0.2·0.1 = 0.23 exactly; 0.3·0.4 + 0.2·0.9 = 0.30, so 0.31 is wrong
    first = Fraction("0.3") * Fraction("0.7") + Fraction("0.2") * Fraction("0.1")
    second = Fraction("0.3") * Fraction("0.4") + Fraction("0.2") * Fraction("0.9")
    assert _class(first, "0.23") == "exact" and _class(second, "0.31") == "wrong"
    checks = json_checks(tmp_path, GATHERED)
    assert verdicts_at(checks, GATHERED, "0.23") == {"exact"}
    assert verdicts_at(checks, GATHERED, "0.31") == {"wrong"}
    # the gathered vector: each entry is the line it repeats, again
    assert verdicts_at(checks, GATHERED, "0.23", 1) == {"exact"}
    assert verdicts_at(checks, GATHERED, "0.31", 1) == {"wrong"}
    # a row one of whose numbers repeats no result is no restatement: not checked
    assert verdicts_at(checks, GATHERED, "0.23", 2) == set()
    assert verdicts_at(checks, GATHERED, "0.47") == set()


# ------------------------------------------------ running sums restated as a final state

RUNNING = """\
# Online softmax by hand

```
l_new = 1.0 × 2.0 + exp(-0.5) + exp(-1.0)
      = 2.0 + 0.607 + 0.368
      = 2.975

l_new = 1.0 × 3.0 + exp(-2.0) + exp(-0.25)
      = 3.0 + 0.135 + 0.779
      = 3.914
```

**Final state:**
```
l = [2.975, 3.914]
```
"""


def test_a_restated_running_sum_is_judged_through_its_whole_chain(tmp_path: Path) -> None:
    # as displayed 2.0 + 0.607 + 0.368 = 2.975 exactly, but the chain's exponentials give
    # 2.97441…: a slip of the quantity; the second sum is 3.91412…, 3.914 correctly rounded
    first = 2 + mpmath.exp(mpmath.mpf("-0.5")) + mpmath.exp(-1)
    second = 3 + mpmath.exp(-2) + mpmath.exp(mpmath.mpf("-0.25"))
    assert _class(first, "2.975") == "slip" and _class(second, "3.914") == "rounded"
    checks = json_checks(tmp_path, RUNNING)
    assert verdicts_at(checks, RUNNING, "2.975") == {"slip"}
    # the final state repeats both results: read as their chains, not their last links
    # (2.0 + 0.607 + 0.368 alone is exactly 2.975)
    assert verdicts_at(checks, RUNNING, "2.975", 1) == {"slip"}
    assert verdicts_at(checks, RUNNING, "3.914", 1) == {"rounded"}


# ------------------------------------------------------- displayed maths, CRLF line ends

OUTER = """\
# Weight gradient

$$
\\text{dW} =
\\begin{bmatrix} 1.0 \\\\ 2.0 \\end{bmatrix}
\\cdot
\\begin{bmatrix} 0.15 & -0.25 \\end{bmatrix}
=
\\begin{bmatrix}
1.0 * 0.15 & 1.0 * -0.25 \\\\
2.0 * 0.15 & 2.0 * -0.25
\\end{bmatrix}
=
\\begin{bmatrix}
0.15 & -0.25 \\\\
0.31 & -0.50
\\end{bmatrix}
$$
"""


@pytest.mark.parametrize("newline", ["\n", "\r\n"], ids=["lf", "crlf"])
def test_a_displayed_matrix_is_read_alike_with_crlf_line_ends(tmp_path: Path, newline: str) -> None:
    # 2.0 × 0.15 = 0.30, so 0.31 is wrong; 2.0 × −0.25 = −0.50 exactly
    assert _class(Fraction("2.0") * Fraction("0.15"), "0.31") == "wrong"
    checks = json_checks(tmp_path, OUTER, newline=newline)
    assert verdicts_at(checks, OUTER, "0.31") == {"wrong"}
    assert verdicts_at(checks, OUTER, "-0.50") == {"exact"}
    assert verdicts_at(checks, OUTER, "0.15 &", 3) == {"exact"}


# ------------------------------------------- a function's argument worked out in a chain

ARGUMENT = """\
# Running denominator

```
d_new = exp(1.2-2.5) + exp(2.5-2.5)
      = exp(-1.2) + exp(0)
      = 0.301 + 1.0
      = 1.301
```

Then the next chunk:

$$d = 0 \\times 0 + \\exp(0.5-1.5) + \\exp(1.5-1.5) = \\exp(-1.0) + \\exp(0) = 0.368 + 1.0 = 1.368$$
"""


def test_a_number_written_for_a_functions_argument_is_the_arguments_value(
    tmp_path: Path,
) -> None:
    # 1.2 - 2.5 = -1.3, so the -1.2 written for it is wrong; 0.301 is exp(-1.2) rounded but
    # the term it is the value of, exp(1.2-2.5), is 0.2725…: wrong for the quantity
    assert _class(Fraction("1.2") - Fraction("2.5"), "-1.2") == "wrong"
    assert _class(mpmath.exp(mpmath.mpf(-12) / 10), "0.301") == "rounded"
    assert _class(mpmath.exp(mpmath.mpf(-13) / 10), "0.301") == "wrong"
    # a zero term (0 × 0) written in one link and left out of the next: the terms still
    # line up, 0.5 - 1.5 = -1.0 and 1.5 - 1.5 = 0 exactly, exp(-1) = 0.36787…
    assert Fraction("0.5") - Fraction("1.5") == -1
    assert _class(mpmath.exp(-1), "0.368") == "rounded"
    checks = json_checks(tmp_path, ARGUMENT)
    assert verdicts_at(checks, ARGUMENT, "-1.2") == {"wrong"}
    assert verdicts_at(checks, ARGUMENT, "0.301") == {"wrong"}
    assert verdicts_at(checks, ARGUMENT, "-1.0") == {"exact"}
    assert verdicts_at(checks, ARGUMENT, "0.368") == {"rounded"}


# ------------------------------------------------ a negative term's sign moved to its operator

SIGN = """\
# Softmax backward by hand

```
dot = 0.5 × 0.4 + (-0.3) × 0.6
    = 0.2 - 0.19
    = 0.01
```
"""


def test_a_negative_term_written_after_a_minus_is_that_terms_magnitude(tmp_path: Path) -> None:
    # 0.5 × 0.4 = 0.2 exactly; (-0.3) × 0.6 = -0.18, written "- 0.19": 0.19 is wrong
    assert Fraction("0.5") * Fraction("0.4") == Fraction("0.2")
    assert _class(-(Fraction("-0.3") * Fraction("0.6")), "0.19") == "wrong"
    checks = json_checks(tmp_path, SIGN)
    assert verdicts_at(checks, SIGN, "0.2 ") == {"exact"}
    assert verdicts_at(checks, SIGN, "0.19") == {"wrong"}
    # and the line's result is off through its first link: 0.2 - 0.18 = 0.02
    assert verdicts_at(checks, SIGN, "0.01") == {"wrong"}


# -------------------------------------- a weight gradient's row repeating an earlier result

OWN_RESULT = """\
# Weight update

$$
\\sigma = \\left[ \\frac{1}{3}, \\frac{2}{3} \\right] \\approx [0.333, 0.667]
$$

$$
\\text{W update} =
\\begin{bmatrix} 1.0 \\\\ 3.0 \\end{bmatrix}
\\cdot
\\begin{bmatrix} 0.333 & 0.667 \\end{bmatrix}
=
\\begin{bmatrix}
1.0 * 0.333 & 1.0 * 0.667 \\\\
3.0 * 0.333 & 3.0 * 0.667
\\end{bmatrix}
=
\\begin{bmatrix}
0.333 & 0.667 \\\\
0.999 & 2.001
\\end{bmatrix}
$$
"""


def test_a_lines_literals_never_stand_for_the_result_it_prints(tmp_path: Path) -> None:
    # as displayed every product is exact; the row [0.333, 0.667] is σ = [1/3, 2/3] printed
    # to three decimals, so through the chain the products are 1/3, 2/3, 1 and 2
    third = Fraction(1, 3)
    assert _class(third, "0.333") == "rounded" and _class(2 * third, "0.667") == "rounded"
    assert _class(3 * third, "0.999") == "wrong" and _class(6 * third, "2.001") == "wrong"
    checks = json_checks(tmp_path, OWN_RESULT)
    # the result's first row prints the same strings as the row multiplied, but it is no
    # value the line's own literals repeat: they repeat σ
    assert verdicts_at(checks, OWN_RESULT, "0.999") == {"wrong"}
    assert verdicts_at(checks, OWN_RESULT, "2.001") == {"wrong"}


# ------------------------------------------------- a row times a column written out term by term

ROW_COLUMN = """\
# Output update

```
o = 1.0 × 2.0 + [0.25, 0.75] @ [[4], [8]]
  = 2.0 + 1.0 + 6.5
  = 9.5
```
"""


def test_a_row_times_a_column_is_the_sum_of_its_entries_products(tmp_path: Path) -> None:
    # 0.25 × 4 = 1.0 and 0.75 × 8 = 6.0, so the 6.5 written for the second product is
    # wrong, and so is 2.0 + 1.0 + 6.0 = 9.0 printed 9.5
    assert Fraction("0.25") * 4 == 1 and Fraction("0.75") * 8 == 6
    assert _class(Fraction(6), "6.5") == "wrong"
    checks = json_checks(tmp_path, ROW_COLUMN)
    assert verdicts_at(checks, ROW_COLUMN, "1.0 +") == {"exact"}
    assert verdicts_at(checks, ROW_COLUMN, "6.5") == {"wrong"}
    assert verdicts_at(checks, ROW_COLUMN, "9.5") == {"wrong"}


# ------------------------------------------------ an update: a written rate times a named matrix

SCALED = """\
# One update step

The gradient row and the input column give the weight gradient:

$$
\\text{W grad} = \\begin{bmatrix} 1.0 \\\\ 3.0 \\end{bmatrix} \\cdot \\begin{bmatrix} 0.12 & -0.34 \\end{bmatrix}
=
\\begin{bmatrix}
1.0 * 0.12 & 1.0 * -0.34 \\\\
3.0 * 0.12 & 3.0 * -0.34
\\end{bmatrix}
=
\\begin{bmatrix}
0.12 & -0.34 \\\\
0.36 & -1.02
\\end{bmatrix}
$$

If learning rate = 0.5:

$$
\\Delta W = -0.5 \\cdot \\text{W grad} =
\\begin{bmatrix}
-0.06 & 0.17 \\\\
-0.18 & 0.15
\\end{bmatrix}
$$
"""


def test_a_written_rate_times_a_named_matrix_is_the_step_it_states(tmp_path: Path) -> None:
    # by hand: W grad = [1, 3]ᵀ·[0.12, −0.34]; ΔW = −0.5 · W grad
    grad = [[Fraction(a) * Fraction(b) for b in ("0.12", "-0.34")] for a in ("1.0", "3.0")]
    delta = [[Fraction("-0.5") * g for g in row] for row in grad]
    printed = [["-0.06", "0.17"], ["-0.18", "0.15"]]
    expected = [
        [_class(d, s) for d, s in zip(dr, sr, strict=True)]
        for dr, sr in zip(delta, printed, strict=True)
    ]
    assert expected == [["exact", "exact"], ["exact", "wrong"]]  # 0.15 for 0.51: digits swapped
    checks = json_checks(tmp_path, SCALED)
    for row, classes in zip(printed, expected, strict=True):
        for s, cls in zip(row, classes, strict=True):
            assert verdicts_at(checks, SCALED, s, SCALED.count(s) - 1) == {cls}
    # one decimal besides the coefficient makes a piece arithmetic written out, not a formula
    from symtf.draft.article import _scaled_name
    from symtf.draft.infer.formula import parse

    assert _scaled_name(parse(r"-0.1 \cdot \text{W update}"))
    assert not _scaled_name(parse(r"0.2 - 1.0"))
    assert not _scaled_name(parse(r"0.5 \cdot W + 0.1"))
    assert not _scaled_name(parse(r"0.5 \cdot 0.2"))


# --------------------------------------------- the gradient probs − one_hot(target) of the prose

TARGET = """\
# Output layer

**Training example:** the correct token is index 1.

**Logits:** [1.200, 0.400, -0.300]

**Probabilities:** [0.598, 0.269, 0.133]

### Gradient

dL/dlogits = [0.598, -0.713, 0.133]
"""


def test_a_gradient_is_the_probabilities_less_one_at_the_target_the_prose_states(
    tmp_path: Path,
) -> None:
    z = [mpmath.mpf(x) for x in ("1.200", "0.400", "-0.300")]
    total = sum(mpmath.exp(x) for x in z)
    p = [mpmath.exp(x) / total for x in z]
    assert [_class(v, s) for v, s in zip(p, ["0.598", "0.269", "0.133"], strict=True)] == [
        "rounded"
    ] * 3
    # the gradient of −log p_1 is p − one_hot(1), by hand, p the softmax of the logits
    # printed above the probabilities (the labels name it)
    grad = [p[0], p[1] - 1, p[2]]
    classes = [_class(g, s) for g, s in zip(grad, ["0.598", "-0.713", "0.133"], strict=True)]
    assert classes == ["rounded", "wrong", "rounded"]  # −0.713 for −0.731: two digits swapped
    checks = json_checks(tmp_path, TARGET)
    line = TARGET.splitlines().index("dL/dlogits = [0.598, -0.713, 0.133]") + 1
    at = [c["verdict"] for c in checks if c["source_line"] == line]
    assert sorted(at) == ["rounded", "rounded", "wrong"]
    assert verdicts_at(checks, TARGET, "-0.713") == {"wrong"}
    # without the logits, the probabilities are read as printed (no step places them):
    # [0.598, 0.269 − 1, 0.133]
    bare = TARGET.replace("**Logits:** [1.200, 0.400, -0.300]\n\n", "")
    grad_printed = [Fraction("0.598"), Fraction("0.269") - 1, Fraction("0.133")]
    classes = [
        _class(g, s) for g, s in zip(grad_printed, ["0.598", "-0.713", "0.133"], strict=True)
    ]
    assert classes == ["exact", "wrong", "exact"]
    checks = json_checks(tmp_path, bare)
    line = bare.splitlines().index("dL/dlogits = [0.598, -0.713, 0.133]") + 1
    at = [c["verdict"] for c in checks if c["source_line"] == line]
    assert sorted(at) == ["exact", "exact", "wrong"]
    # the index is never guessed: without the sentence stating it, no step
    untold = TARGET.replace("the correct token is index 1", 'the next token is "sat"')
    checks = json_checks(tmp_path, untold)
    assert not [c for c in checks if c["source_line"] == line]


# ------------------------------------- probabilities printed under the logits they are the softmax of

LABELLED = """\
# Output layer

**Target:** the correct token is index 2.

**Context vector:** [0.0731, 0.0269]

**Logits:** [0.00731, 0.0, 0.00269, 0.0]

**Probabilities:** [0.252, 0.249, 0.250, 0.249]

### Gradient

dL/dlogits = [0.252, 0.249, -0.750, 0.249]
"""


def _softmax(z: list[mpmath.mpf]) -> list[mpmath.mpf]:
    e = [mpmath.exp(x) for x in z]
    total = mpmath.fsum(e)
    return [x / total for x in e]


def test_probabilities_printed_under_their_logits_are_the_softmax_of_them(
    tmp_path: Path,
) -> None:
    # the logits as printed, their zeros exact: softmax by hand at 40 digits
    p = _softmax([mpmath.mpf("0.00731"), mpmath.mpf(0), mpmath.mpf("0.00269"), mpmath.mpf(0)])
    printed = ["0.252", "0.249", "0.250", "0.249"]
    assert [_class(v, s) for v, s in zip(p, printed, strict=True)] == [
        "slip",  # 0.25120…: 0.252 is 0.8 of a unit off
        "rounded",
        "rounded",
        "rounded",
    ]
    grad = [p[0], p[1], p[2] - 1, p[3]]
    gp = ["0.252", "0.249", "-0.750", "0.249"]
    assert [_class(v, s) for v, s in zip(grad, gp, strict=True)] == ["slip"] + ["rounded"] * 3
    checks = json_checks(tmp_path, LABELLED)
    for needle, nth, cls in [
        ("0.252", 0, "slip"),
        ("0.249", 0, "rounded"),
        ("0.250", 0, "rounded"),
        ("0.252", 1, "slip"),
        ("-0.750", 0, "rounded"),
    ]:
        assert verdicts_at(checks, LABELLED, needle, nth) == {cls}, (needle, nth)
    # the logits are an input the article states: no verdict of their own
    assert not verdicts_at(checks, LABELLED, "0.00731")


def test_probabilities_get_no_step_from_a_row_not_labelled_as_logits(tmp_path: Path) -> None:
    # the same numbers, the row above named a "context": no label names the softmax's input
    text = LABELLED.replace("**Logits:**", "**Hidden:**")
    checks = json_checks(tmp_path, text)
    line = text.splitlines().index("**Probabilities:** [0.252, 0.249, 0.250, 0.249]") + 1
    assert not [c for c in checks if c["source_line"] == line and c["verdict"] != "exact"]


LOSS = """\
# Output layer

**Logits:** [-0.9764, -1.7219, 0.2270]

**Probabilities:** [0.2081, 0.0987, 0.6932]

The correct token is the second: Loss = -ln(0.0987) = 2.3154
"""


def test_a_literal_of_a_softmax_of_printed_logits_is_known_to_the_logits_digits(
    tmp_path: Path,
) -> None:
    z = [mpmath.mpf(x) for x in ("-0.9764", "-1.7219", "0.2270")]
    p = _softmax(z)
    assert [_class(v, s) for v, s in zip(p, ["0.2081", "0.0987", "0.6932"], strict=True)] == [
        "rounded"
    ] * 3
    # from the printed logits exactly, -ln p₁ = 2.3153488…, and as written -ln(0.0987) =
    # 2.31565…: neither prints as 2.3154; with the second logit 0.000049 lower (within its
    # half unit) p₁ still prints as 0.0987 and -ln p₁ = 2.31540…, which does
    assert _class(-mpmath.log(p[1]), "2.3154") == "slip"
    assert _class(-mpmath.log(mpmath.mpf("0.0987")), "2.3154") == "wrong"
    moved = _softmax([z[0], z[1] - mpmath.mpf("0.000049"), z[2]])
    assert _class(moved[1], "0.0987") == "rounded"
    assert _class(-mpmath.log(moved[1]), "2.3154") == "rounded"
    checks = json_checks(tmp_path, LOSS)
    assert verdicts_at(checks, LOSS, "0.0987") == {"rounded"}  # the probabilities' step
    (loss,) = [c for c in checks if c["printed"] == "2.3154"]
    assert loss["verdict"] == "rounded"
    assert loss["accepted_by"] == "rounded_inputs"
    # a logit printed one unit lower makes 2.3154 unreachable: the line is off
    low = LOSS.replace("-1.7219", "-1.7218")
    z2 = [z[0], mpmath.mpf("-1.7218"), z[2]]
    q = _softmax(z2)
    assert _class(q[1], "0.0987") == "rounded" and _class(-mpmath.log(q[1]), "2.3154") == "wrong"
    checks = json_checks(tmp_path, low)
    (loss,) = [c for c in checks if c["printed"] == "2.3154"]
    assert loss["verdict"] in ("slip", "wrong")


TRANSPOSED = """\
# Gradient through the scores

```
dS[1][0] = 0.4172 × 0.25
         = 0.1043

dS[1][1] = -0.4172 × 0.75
         = -0.3192
```

**Its transpose, for dK:**

```
dS^T = [0.0,  0.1043]
       [0.0, -0.3192]
```
"""


def test_a_gathered_matrix_with_zero_entries_restates_the_lines_worked_above(
    tmp_path: Path,
) -> None:
    # by hand: 0.4172 × 0.25 = 0.1043 exactly; -0.4172 × 0.75 = -0.3129 (-0.3192: swapped)
    assert _class(Fraction("0.4172") * Fraction("0.25"), "0.1043") == "exact"
    assert _class(Fraction("-0.4172") * Fraction("0.75"), "-0.3192") == "wrong"
    checks = json_checks(tmp_path, TRANSPOSED)
    # the matrix's non-zero entries are the two lines' results again, with their verdicts
    assert verdicts_at(checks, TRANSPOSED, "0.1043", 1) == {"exact"}
    assert verdicts_at(checks, TRANSPOSED, "-0.3192", 1) == {"wrong"}
    # its zeros are entries the article writes: no line's result, no verdict
    assert not verdicts_at(checks, TRANSPOSED, "0.0")
    # a zero that a line worked above prints is that line's result again
    worked = TRANSPOSED.replace(
        "```\ndS[1][0]", "```\ndS[0][1] = 0.4172 × 0.0\n         = 0.0\n\ndS[1][0]"
    )
    assert verdicts_at(json_checks(tmp_path, worked), worked, "0.0", 2) == {"exact"}
    # a matrix of zeros only restates nothing
    zeros = TRANSPOSED.replace("[0.0,  0.1043]", "[0.0,  0.0]").replace(
        "[0.0, -0.3192]", "[0.0, 0.0]"
    )
    assert not [c for c in json_checks(tmp_path, zeros) if "restated" in c["claim"]]


def test_a_zero_written_short_is_known_to_its_tensors_finest_grid() -> None:
    from symtf.backends.rounded import tensor_half_widths

    half = Fraction(1, 200000)
    assert tensor_half_widths(["0.00731", "0.0", "0.00269", "-0.0"]) == (half,) * 4
    # a zero alone, or among entries no finer than itself, keeps its own digits
    assert tensor_half_widths(["0.0", "0.5"]) == (Fraction(1, 20), Fraction(1, 20))
    assert tensor_half_widths(["0.0"]) == (Fraction(1, 20),)
    # an exact zero stays exact; a non-zero entry keeps its own digits
    assert tensor_half_widths(["0", "0.25", "1.5"]) == (0, Fraction(1, 200), Fraction(1, 20))


@pytest.mark.parametrize(
    ("sentence", "index"),
    [
        ("- Target: C (index 2)", 2),
        ("the correct token is index 2", 2),
        ("target = 1", 1),
        ("y_true = [[0, 1, 0]] → class 1 is correct", 1),
        ("Target index: 3", 3),
        ("target = 0.5", None),  # a regression target, no index
        ("the target sequence position 3", None),
        ("Learning rate: η = 0.1", None),
    ],
)
def test_a_target_index_is_read_only_where_the_prose_states_one(
    sentence: str, index: int | None
) -> None:
    from symtf.draft.infer.gradient import stated_targets

    assert stated_targets("# Example\n\n" + sentence + "\n") == (
        [(3, index)] if index is not None else []
    )


# ------------------------------------------------------- one number taken from every entry

SHIFTED = """\
# Softmax, shifted for stability

First, subtract the largest logit:

$$
\\text{logits} - \\max = [2.0, 0.5, -1.0] - 2.0 = [0, -1.5, -3.1]
$$
"""


def test_a_number_taken_from_every_entry_of_a_row_is_checked_entry_by_entry(
    tmp_path: Path,
) -> None:
    # by hand: [2.0 − 2.0, 0.5 − 2.0, −1.0 − 2.0] = [0, −1.5, −3.0]; −3.1 is one unit off
    shifted = [Fraction(x) - 2 for x in ("2.0", "0.5", "-1.0")]
    classes = [_class(v, s) for v, s in zip(shifted, ["0", "-1.5", "-3.1"], strict=True)]
    assert classes == ["exact", "exact", "wrong"]
    checks = json_checks(tmp_path, SHIFTED)
    assert verdicts_at(checks, SHIFTED, "-1.5") == {"exact"}
    assert verdicts_at(checks, SHIFTED, "-3.1") == {"wrong"}
