"""Printed numbers that stand for expressions, and stated inputs read as themselves.

DESIGN.md, "Literals that repeat earlier printed values carry their lineage". Here:

- a literal written for a simple expression of numbers the article states (``0.571``
  where the article means 0.4/0.7) is read as that expression, so the result computed
  from it is right, and the literal gets a check of its own (JSON ``expresses``);
- a number of a matrix printed far above (``0.5403`` for cos 1, 45 lines before) stands
  for that entry when it has four significant digits or more;
- an input the article states (``w = 0.2``) is read as itself and never blocks the
  unrounded reading of a later line;
- and none of these hides an error: a wrong result stays wrong, a number too short to
  tell or printed too far away is not read as anything else.

The articles are made up for the test. Every expected value is computed with mpmath at
50 digits below (or by hand where a comment says so), never by symtf.
"""

from __future__ import annotations

from typing import Any

import mpmath
import pytest
from mp_reference import rounds_to
from test_lineage import _json, _report

MPMATH_DIGITS = 50

KL = """# Relative entropy of two loaded dice, by hand

Take one face of two dice:

* **Data $P$:** the face comes up with $P(A)=0.4$.
* **Model $Q$:** it comes up with $Q(A)=0.7$.

Its term of the divergence is

$$
d = 0.4 \\ln \\frac{{0.4}}{{0.7}}
$$

Step by step:

* The term: $0.4 \\cdot \\ln({ratio}) = 0.4 \\cdot (-0.5596) = {result}$
"""

#: The article line of KL's worked term.
TERM = 16


def _kl(ratio: str = "0.571", result: str = "-0.2238") -> str:
    return KL.format(ratio=ratio, result=result)


def _rotation(gap: int) -> str:
    """R(1) printed to four decimals, then used ``gap`` prose paragraphs (two lines each)
    below, on x = [7.0, 2.0]."""
    lines = [
        "# Turning one pair of features by hand",
        "",
        "The angle for position 1 is $\\theta = 1$, and the rotation it gives is",
        "",
        "$$",
        "R(1) = \\begin{pmatrix}",
        "\\cos 1 & -\\sin 1 \\\\",
        "\\sin 1 & \\cos 1",
        "\\end{pmatrix} \\approx \\begin{pmatrix}",
        "0.5403 & -0.8415 \\\\",
        "0.8415 & 0.5403",
        "\\end{pmatrix}",
        "$$",
        "",
    ]
    for i in range(gap):
        lines += [f"A paragraph about why rotations keep lengths, number {i}.", ""]
    lines += [
        "The pair of features is $x = [7.0, 2.0]$. Turned by $R(1)$:",
        "",
        "$$",
        "R(1) x = \\begin{pmatrix}",
        "0.5403 \\times 7.0 + (-0.8415) \\times 2.0 \\\\",
        "0.8415 \\times 7.0 + 0.5403 \\times 2.0",
        "\\end{pmatrix} = \\begin{pmatrix}",
        "2.0992 \\\\",
        "6.9709",
        "\\end{pmatrix}",
        "$$",
        "",
    ]
    return "\n".join(lines)


STATED = """# One gate by hand

The gate's weight is $w = 0.2$ and its input is $z = 1.5$.

$$e^{1.5} = 4.482$$

The gated value is

$$0.2 \\times 4.482 = 0.8964$$
"""


def _checks(d: dict[str, Any], line: int) -> list[dict[str, Any]]:
    return [c for c in d["checks"] if c["source_line"] == line]


def _line_check(d: dict[str, Any], line: int) -> dict[str, Any]:
    (c,) = [c for c in _checks(d, line) if c["kind"] == "expression"]
    return c


def _close(text: str, x: Any) -> bool:
    return bool(abs(mpmath.mpf(text) - x) < mpmath.mpf(10) ** -12)


# ----------------------------------------------------------------------------- expressions


@pytest.fixture(scope="module")
def kl(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    return _json(_report(tmp_path_factory, "kl.md", _kl()))


def test_a_ratio_written_as_its_value_is_read_as_the_ratio(kl: dict[str, Any]) -> None:
    ratio = mpmath.mpf("0.4") / mpmath.mpf("0.7")
    term = mpmath.mpf("0.4") * mpmath.log(ratio)
    # as written the line is off: 0.4·ln(0.571) = −0.22415; the article computed ln(0.4/0.7)
    assert not rounds_to(mpmath.mpf("0.4") * mpmath.log(mpmath.mpf("0.571")), "-0.2238")
    assert rounds_to(ratio, "0.571") and rounds_to(term, "-0.2238")
    assert rounds_to(mpmath.log(ratio), "-0.5596")
    line = _line_check(kl, TERM)
    assert line["verdict"] in ("exact", "rounded"), line["explanation"]
    first = line["links"][0]  # 0.4·ln(0.571): wrong as displayed, right with 0.571 = 0.4/0.7
    assert first["as_displayed"]["verdict"] == "wrong"
    assert first["exact_reading"]["verdict"] == "rounded"
    assert first["exact_reading"]["stands_for"] == {"0.571": "0.4/0.7"}
    assert _close(first["exact"], term)
    (own,) = [c for c in _checks(kl, TERM) if "expresses" in c]
    assert own["printed"] == "0.571" and own["verdict"] == "rounded"
    assert own["literal_of"] == line["claim"]
    assert _close(own["exact"], ratio)
    assert own["expresses"] == {
        "formula": "0.4/0.7",
        "numbers": [
            {"printed": "0.4", "where": "this line"},
            {"printed": "0.7", "where": "Q(A), line 6"},
        ],
    }
    assert "0.571 is 0.4/0.7 (0.7 from Q(A), line 6)" in own["explanation"]


def test_a_wrong_result_stays_wrong_whatever_the_literal_is_read_as(
    tmp_path_factory: pytest.TempPathFactory,
) -> None:
    d = _json(_report(tmp_path_factory, "kl_wrong.md", _kl(result="-0.2338")))
    # by hand: neither 0.4·ln(0.571) = −0.2241 nor 0.4·ln(0.4/0.7) = −0.2238 is −0.2338
    ratio = mpmath.mpf("0.4") / mpmath.mpf("0.7")
    assert not rounds_to(mpmath.mpf("0.4") * mpmath.log(ratio), "-0.2338")
    assert _line_check(d, TERM)["verdict"] == "wrong"
    assert not [c for c in d["checks"] if "expresses" in c]


def test_a_literal_too_short_to_tell_is_not_read_as_a_ratio(
    tmp_path_factory: pytest.TempPathFactory,
) -> None:
    # 0.57 (two significant digits) also rounds 0.4/0.7, but a chosen number as often
    d = _json(_report(tmp_path_factory, "kl_short.md", _kl(ratio="0.57")))
    assert rounds_to(mpmath.mpf("0.4") / mpmath.mpf("0.7"), "0.57")
    assert not [c for c in d["checks"] if "expresses" in c]
    line = _line_check(d, TERM)
    assert "0.57" not in line["links"][0]["exact_reading"]["stands_for"]
    # as written, 0.4·ln(0.57) = −0.2248…: the printed −0.2238 is off
    assert not rounds_to(mpmath.mpf("0.4") * mpmath.log(mpmath.mpf("0.57")), "-0.2238")
    assert line["verdict"] == "wrong"


# ----------------------------------------------------------------------------- a matrix's entries


def test_an_entry_of_a_matrix_printed_far_above_stands_for_its_value(
    tmp_path_factory: pytest.TempPathFactory,
) -> None:
    d = _json(_report(tmp_path_factory, "rotation.md", _rotation(20)))
    c1, s1 = mpmath.cos(1), mpmath.sin(1)
    first, second = 7 * c1 - 2 * s1, 7 * s1 + 2 * c1
    # as displayed the rows give 2.0991 and 6.9711; the article computed with cos 1, sin 1
    assert rounds_to(mpmath.mpf("0.5403") * 7 - mpmath.mpf("0.8415") * 2, "2.0991")
    assert rounds_to(mpmath.mpf("0.8415") * 7 + mpmath.mpf("0.5403") * 2, "6.9711")
    assert rounds_to(first, "2.0992") and rounds_to(second, "6.9709")
    checks = [c for c in d["checks"] if c["kind"] == "expression" and c["source_line"] > 40]
    assert [c["printed"] for c in checks] == ["2.0992", "6.9709"]
    for c, value in zip(checks, (first, second), strict=True):
        assert c["verdict"] == "rounded", c["explanation"]
        assert _close(c["exact"], value)
        stands = c["exact_reading"]["stands_for"]
        assert stands["-0.8415"] == "R(1), row 1, column 2"
        assert stands["0.8415"] == "R(1), row 2, column 1"
        assert stands["0.5403"].startswith("R(1), row ")


def test_an_entry_printed_too_far_above_is_not_read_as_it(
    tmp_path_factory: pytest.TempPathFactory,
) -> None:
    # 50 paragraphs put the use about 110 lines below the matrix: no link is invented
    d = _json(_report(tmp_path_factory, "rotation_far.md", _rotation(50)))
    checks = [c for c in d["checks"] if c["kind"] == "expression" and c["source_line"] > 100]
    assert checks
    for c in checks:
        assert not any(v.startswith("R(1)") for v in c["exact_reading"]["stands_for"].values())


# ----------------------------------------------------------------------------- stated inputs


def test_a_stated_input_does_not_block_the_unrounded_reading(
    tmp_path_factory: pytest.TempPathFactory,
) -> None:
    d = _json(_report(tmp_path_factory, "stated.md", STATED))
    gated = mpmath.mpf("0.2") * mpmath.exp(mpmath.mpf("1.5"))
    # by hand: 0.2 × 4.482 = 0.8964 exactly; with e^1.5 unrounded it is 0.89634 → 0.8963
    assert rounds_to(gated, "0.8963") and not rounds_to(gated, "0.8964")
    c = _line_check(d, 9)
    assert c["as_displayed"]["verdict"] == "exact"
    assert c["reading"] == "exact_reading"
    assert c["verdict"] == "slip", c["explanation"]
    assert _close(c["exact"], gated)
    assert "0.2 stays as printed" not in c["explanation"]
