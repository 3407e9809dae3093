"""Arithmetic an article writes on vector literals is a step it states.

``softmax([2, 0, 1]) = [0.665, 0.090, 0.245]``, ``[0.25, −0.50] + [0.10, 0.20] = [0.35,
−0.30]`` in bold inside a sentence, ``0.5 × [0.2, 0.4] + 0.25 × [0.8, 0.0] = [0.30,
0.20]`` in a display: every entry of the printed result is checked against the line's
own arithmetic, and the vectors (and weights) it computes from are the inputs it states,
never claims left unexplained and never flagged.

The articles are made up; every expected value is worked out by hand or with mpmath
(50 digits) in the comment beside it.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import sympy

from symtf.commands.draft import check_article
from symtf.language import expr
from symtf.renderers import json as render_json
from tests.article_checks import placed_verdicts, position

OK = {"exact", "rounded"}


def _report(tmp_path: Path, text: str) -> dict[str, Any]:
    path = tmp_path / "post.md"
    path.write_text(text, encoding="utf-8")
    report: dict[str, Any] = render_json.derivation_dict(check_article(path))
    return report


def _verdicts(report: dict[str, Any], text: str, needle: str, nth: int = 0) -> set[str]:
    line, column = position(text, needle, nth)
    return {
        c["verdict"]
        for c in report["checks"]
        if (c["source_line"], c.get("source_column")) == (line, column)
    }


def _unchecked_lines(report: dict[str, Any]) -> set[int]:
    return {u["source_line"] for u in report["unchecked"]}


def _input_places(report: dict[str, Any]) -> set[tuple[int, int]]:
    return {(q["source_line"], q["source_column"]) for i in report["inputs"] for q in i["places"]}


# softmax([2, 0, 1]) = [e², 1, e] / (e² + e + 1) = [0.665241, 0.090031, 0.244728] (mpmath):
# every printed entry is a correct rounding. softmax([1, 0, 2]) is the same row reversed,
# [0.244728, 0.090031, 0.665241]: every entry printed for it is off, by 55, 10 and 65
# units of the last digit (the line states the step: it is checked however many agree).
SOFTMAX = r"""# Attention weights

The first row: $\operatorname{softmax}([2, 0, 1]) = [0.665, 0.090, 0.245]$.



The second row: $\text{softmax}([1, 0, 2]) = [0.300, 0.100, 0.600]$.
"""


def test_a_function_of_a_literal_vector_is_checked_entry_by_entry(tmp_path: Path) -> None:
    got = placed_verdicts(tmp_path, SOFTMAX)
    assert (3, "0.665", "rounded") in got and (3, "0.245", "rounded") in got
    assert {(7, "0.300", "wrong"), (7, "0.100", "wrong"), (7, "0.600", "wrong")} <= set(got)
    assert not [g for g in got if g[2] not in OK and g[0] != 7]


def test_the_literal_a_function_is_applied_to_is_a_stated_input(tmp_path: Path) -> None:
    report = _report(tmp_path, SOFTMAX)
    assert not _unchecked_lines(report)  # nothing left as a claim no step explains
    inputs = _input_places(report)
    for nth in (0, 1):  # the "[2, 0, 1]" and "[1, 0, 2]" the rows are computed from
        operand = "[2, 0, 1]" if nth == 0 else "[1, 0, 2]"
        line, column = position(SOFTMAX, operand)
        assert (line, column + 1) in inputs
        assert _verdicts(report, SOFTMAX, operand[1:]) <= OK


# [0.25, −0.50, 1.00] + [0.10, 0.20, 0.30] = [0.35, −0.30, 1.30] exactly (by hand); the
# second line prints 1.40 for the same 1.30: ten units of the last digit off.
BOLD = """# The input

The input is **[0.25, −0.50, 1.00] + [0.10, 0.20, 0.30] = [0.35, −0.30, 1.30]** here.



Again, with a typo: **[0.25, −0.50, 1.00]+[0.10, 0.20, 0.30] = [0.35, −0.30, 1.40]**.
"""


def test_a_bold_sum_of_vectors_inside_a_sentence_is_checked(tmp_path: Path) -> None:
    got = placed_verdicts(tmp_path, BOLD)
    assert {(3, "0.35", "exact"), (3, "-0.30", "exact"), (3, "1.30", "exact")} <= set(got)
    assert (7, "1.40", "wrong") in got
    assert (7, "0.35", "exact") in got
    report = _report(tmp_path, BOLD)
    assert not _unchecked_lines(report)
    for nth in (0, 1):  # the operands are never flagged, and are the line's inputs
        assert _verdicts(report, BOLD, "0.25", nth) <= OK
        assert _verdicts(report, BOLD, "0.10", nth) <= OK
        assert position(BOLD, "0.25", nth) in _input_places(report)


# 0.5·[0.2, 0.4] + 0.25·[0.8, 0.0] = [0.1 + 0.2, 0.2 + 0] = [0.30, 0.20] exactly;
# ReLU([-1.5, 2.0]) = [0, 2.0]; [1, 2] ⊙ [3, 0.5] = [3, 1]; σ([0, 2]) = [1/2, 1/(1 + e⁻²)]
# = [0.5, 0.880797] (mpmath).
DISPLAY = r"""# A context vector

$$
c = 0.5 \times [0.2, 0.4] + 0.25 \times [0.8, 0.0] = [0.30, 0.20]
$$



The activation is $\mathrm{ReLU}([-1.5, 2.0]) = [0, 2.0]$.



The gated product is $[1, 2] \odot [3, 0.5] = [3, 1]$.



The gate is $\sigma([0, 2]) = [0.5, 0.881]$.
"""


def test_weighted_sums_and_named_functions_of_vectors_check_out(tmp_path: Path) -> None:
    got = placed_verdicts(tmp_path, DISPLAY)
    for want in [
        (4, "0.30", "exact"),
        (4, "0.20", "exact"),
        (9, "0", "exact"),
        (9, "2.0", "exact"),
        (13, "3", "exact"),
        (13, "1", "exact"),
        (17, "0.5", "exact"),
        (17, "0.881", "rounded"),
    ]:
        assert want in got, want
    assert all(v in OK for _, _, v in got)
    report = _report(tmp_path, DISPLAY)
    assert not _unchecked_lines(report)
    inputs = _input_places(report)
    assert position(DISPLAY, "0.8, 0.0") in inputs  # an operand of the sum
    assert position(DISPLAY, "0.25") in inputs  # a weight of it


# 0.5·[0, 2] + 0.25·[2, 2] = [0, 1.0] + [0.5, 0.5] = [0.5, 1.5]: the middle link's lists
# are the values of the first link's terms (results), not inputs the line states; each is
# checked whole, its copies (0.5·0 = 0) too. 0.5·[1, 2] + 0.25·[2, 0] written entry by
# entry is [0.5·1 + 0.25·2, 0.5·2 + 0.25·0] = [0.5 + 0.5, 1.0 + 0] = [1.0, 1.0]; the last
# line writes 0.4 for the 0.25·2 = 0.5 of the second term (one unit of 0.1 off: wrong).
CHAIN = r"""# Two links

$$
0.5 \times [0, 2] + 0.25 \times [2, 2] = [0, 1.0] + [0.5, 0.5] = [0.5, 1.5]
$$



$$
0.5 \times [1, 2] + 0.25 \times [2, 0] = [0.5 + 0.5,\; 1.0 + 0] = [1.0, 1.0]
$$



$$
0.5 \times [1, 2] + 0.25 \times [2, 0] = [0.5, 1.0] + [0.4, 0]
$$
"""


def test_the_lists_of_a_later_link_are_not_inputs(tmp_path: Path) -> None:
    report = _report(tmp_path, CHAIN)
    inputs = _input_places(report)
    assert position(CHAIN, "1.0") not in inputs
    assert position(CHAIN, "0.5, 0.5") not in inputs
    assert position(CHAIN, "0.5 \\times") in inputs  # the first link's weight is one
    got = placed_verdicts(tmp_path, CHAIN)
    assert (4, "1.0", "exact") in got and (4, "1.5", "exact") in got
    assert [v for line, _, v in got if line in (4, 10)] and all(
        v in OK for line, _, v in got if line in (4, 10)
    )


def test_the_lists_and_entries_of_a_later_link_are_the_terms_values(tmp_path: Path) -> None:
    report = _report(tmp_path, CHAIN)
    assert _verdicts(report, CHAIN, "0, 1.0]") == {"exact"}  # 0.5·0: a copy, checked too
    assert _verdicts(report, CHAIN, "0.5]") == {"exact"}  # 0.25·2
    assert _verdicts(report, CHAIN, "0.5 + 0.5") == {"exact"}  # 0.5·1, entry by entry
    line, column = position(CHAIN, "1.0 + 0]")
    zero = {
        c["verdict"]
        for c in report["checks"]
        if (c["source_line"], c["source_column"]) == (line, column + 6)
    }
    assert zero == {"exact"}  # 0.25·0
    assert _verdicts(report, CHAIN, "0.4") == {"wrong"}  # 0.25·2 = 0.5
    assert not {u["source_line"] for u in report["unchecked"]} & {4, 10}


def test_the_language_computes_softmax_and_the_logistic_function_exactly() -> None:
    e = sympy.E
    got = expr.parse("softmax([2, 0, 1])", where="test").evaluate()
    want = [e**2 / (e**2 + e + 1), 1 / (e**2 + e + 1), e / (e**2 + e + 1)]
    assert all(sympy.simplify(g - w) == 0 for g, w in zip(got, want, strict=True))
    rows = expr.parse("softmax([[0, 0], [1, 1]])", where="test").evaluate()
    assert list(rows) == [sympy.Rational(1, 2)] * 4  # each row on its own
    got = expr.parse("sigmoid([0, 2])", where="test").evaluate()
    assert got[0] == sympy.Rational(1, 2)
    assert sympy.simplify(got[1] - 1 / (1 + sympy.exp(-2))) == 0


# Two 2×2 sums drawn row under row (by hand): [[0.30, -0.20], [0.05, 0.60]] −
# [[0.10, 0.40], [-0.15, 0.20]] = [[0.20, -0.60], [0.20, 0.40]], and the same matrices
# added give [[0.40, 0.20], [-0.10, 0.80]], printed with 0.90 (ten units off).
DRAWN = """# A residual, drawn

```
g = [0.30, -0.20] − [0.10, 0.40] = [0.20, -0.60]
    [0.05, 0.60]    [-0.15, 0.20]   [0.20, 0.40]
```

Then the sum:

```
h = [0.30, -0.20] + [0.10, 0.40]
    [0.05, 0.60]    [-0.15, 0.20]

  = [0.40, 0.20]
    [-0.10, 0.90]
```
"""


def test_matrices_drawn_side_by_side_are_checked_entry_by_entry(tmp_path: Path) -> None:
    got = placed_verdicts(tmp_path, DRAWN)
    for want in [
        (4, "0.20", "exact"),
        (4, "-0.60", "exact"),
        (5, "0.20", "exact"),
        (5, "0.40", "exact"),
        (14, "0.40", "exact"),
        (14, "0.20", "exact"),
        (15, "-0.10", "exact"),
        (15, "0.90", "wrong"),
    ]:
        assert want in got, want
    assert [g for g in got if g[2] not in OK] == [(15, "0.90", "wrong")]
    report = _report(tmp_path, DRAWN)
    assert not _unchecked_lines(report)
    inputs = _input_places(report)
    for nth in (0, 1):  # both matrices of each line are its inputs, never flagged
        assert position(DRAWN, "0.30", nth) in inputs
        assert position(DRAWN, "-0.15", nth) in inputs
        assert _verdicts(report, DRAWN, "-0.15", nth) <= OK


# By hand: 0.5·(0.2, −0.4) = (0.1, −0.2), printed (0.1, −0.3): one unit of 0.1 off; the
# escaped brackets of Markdown, \[0.1, 0.2] + \[0.3, −0.4] = \[0.4, −0.2], hold.
WRITTEN = r"""# Other ways to write a vector

Scaled: 0.5 × (0.2, −0.4) = (0.1, −0.3).



The sum \[0.1, 0.2] + \[0.3, −0.4] = \[0.4, −0.2] is the input.



The call f(0.1, 0.2) = (0.3, 0.4) is not arithmetic on tuples.
"""


def test_tuples_and_escaped_brackets_written_as_vectors(tmp_path: Path) -> None:
    got = placed_verdicts(tmp_path, WRITTEN)
    assert (3, "0.1", "exact") in got and (3, "-0.3", "wrong") in got
    assert (7, "0.4", "exact") in got and (7, "-0.2", "exact") in got
    report = _report(tmp_path, WRITTEN)
    assert position(WRITTEN, "0.2, −0.4") in _input_places(report)
    # a name before the parentheses makes them a call: no arithmetic is read there
    assert not [g for g in got if g[0] == 11 and g[2] not in OK]


# By hand: [1, 2] ⊙ [3, 0.5] = [3, 1] and [0.5, 2] ∘ [4, 0.25] = [2, 0.5] (printed 0.6,
# one unit of 0.1 off), element by element.
HADAMARD = """# Gates

The gate: [1, 2] ⊙ [3, 0.5] = [3, 1.0] here.



Also `[0.5, 2] ∘ [4, 0.25] = [2, 0.6]`.
"""


def test_an_element_wise_product_written_in_prose_is_checked(tmp_path: Path) -> None:
    got = placed_verdicts(tmp_path, HADAMARD)
    assert (3, "3", "exact") in got and (3, "1.0", "exact") in got
    assert (7, "2", "exact") in got and (7, "0.6", "wrong") in got
    assert not _unchecked_lines(_report(tmp_path, HADAMARD))
