"""Rotations as articles write them: an angle in degrees, its radians, cos/sin values
printed to a few decimals and then used as the article's own inputs.

The fixtures are written for these tests. Every expected verdict comes from mpmath at
40 digits (or from how the fixture was made: a digit changed on purpose), every place
from the fixture text itself.
"""

from __future__ import annotations

from collections.abc import Iterator
from fractions import Fraction
from pathlib import Path

import mpmath
import pytest
import sympy
from article_checks import json_checks, position, verdicts_at

from symtf.draft.read import complexes
from symtf.draft.read.links import term_links
from symtf.language import latexmath


@pytest.fixture(autouse=True)
def _forty_digits() -> Iterator[None]:
    """mpmath at 40 digits in this file's tests, and the global precision restored after."""
    with mpmath.workdps(40):
        yield


def _rounds(value: mpmath.mpf, printed: str) -> bool:
    """Whether ``printed`` is ``value`` rounded to its digits (mpmath)."""
    decimals = len(printed.split(".")[1]) if "." in printed else 0
    return abs(value - mpmath.mpf(printed)) <= mpmath.mpf(10) ** (-decimals) / 2


# ----------------------------------------------------------------------------- degrees


@pytest.mark.parametrize(
    ("written", "degrees"),
    [
        ("30°", 30),
        ("30^\\circ", 30),
        ("30^{\\circ}", 30),
        ("45\\degree", 45),
        ("2 \\times 60^\\circ", 120),
    ],
)
def test_an_angle_in_degrees_is_read_in_radians(written: str, degrees: int) -> None:
    # d° is d·π/180 radians exactly (the definition of the degree)
    assert latexmath.parse(written, where="test").evaluate() == sympy.pi * sympy.Rational(
        degrees, 180
    )


def test_cos_of_an_angle_in_degrees_is_exact() -> None:
    # cos 60° = 1/2 and sin 30° = 1/2 exactly (hand values), not roundings of them
    assert latexmath.parse("cos(60°)", where="test").evaluate() * 2 == 1
    assert latexmath.parse("\\sin(30^{\\circ})", where="test").evaluate() * 2 == 1


def test_degrees_in_plain_text_keep_the_rest_as_written() -> None:
    # sin 30° = 1/2, squared: 1/4 (a plain "^(" is read as the plain language reads it)
    assert latexmath.parse("sin(30°)^(2)", where="test").evaluate() == sympy.Rational(1, 4)


def test_a_label_keeps_the_degree_sign() -> None:
    assert latexmath.label_text("θ = 30°") == "θ=30°"


# ----------------------------------------------------------------------------- factors


def test_a_factor_worked_out_in_the_next_link_is_its_value() -> None:
    links = ["3*cos(0.524) - 4*sin(0.524)", "3*0.866 - 4*0.5", "0.598"]
    found = [(k, written, number) for k, written, number, _ in term_links(links)]
    assert found == [(1, ("cos(0.524)",), "0.866"), (1, ("sin(0.524)",), "0.5")]


def test_factors_not_written_alike_are_not_paired() -> None:
    # the other factor changed too (3 → 2): which factor 0.866 is the value of is unknown
    assert term_links(["3*cos(0.524) - 4*sin(0.524)", "2*0.866 - 4*0.5"]) == [
        (1, ("sin(0.524)",), "0.5", ["2", "0.866", "4"])
    ]


# ----------------------------------------------------------------------------- rotation

ROTATION = """\
# Rotating a pair

Rotate the vector [3, 4] by 30°:

```
θ = 30° = 0.524 radians
x' = 3*cos(0.524) - 4*sin(0.524) = 3*0.866 - 4*0.5 = 0.598
y' = 3*sin(0.524) + 4*cos(0.524) = 3*0.5 + 4*0.866 = 4.964
```
"""


def test_a_rotation_by_degrees_reads_its_radians_as_a_rounding(tmp_path: Path) -> None:
    checks = json_checks(tmp_path, ROTATION)
    theta = mpmath.pi / 6
    x = 3 * mpmath.cos(theta) - 4 * mpmath.sin(theta)  # 0.598076…
    y = 3 * mpmath.sin(theta) + 4 * mpmath.cos(theta)  # 4.964101…
    assert _rounds(theta, "0.524") and _rounds(x, "0.598") and _rounds(y, "4.964")
    # from the printed radians x' would be 0.596084…: 0.598 is right only for 30° itself
    assert not _rounds(3 * mpmath.cos(0.524) - 4 * mpmath.sin(0.524), "0.598")
    assert verdicts_at(checks, ROTATION, "0.524 radians") == {"rounded"}
    assert verdicts_at(checks, ROTATION, "0.598") == {"rounded"}
    assert verdicts_at(checks, ROTATION, "4.964") == {"rounded"}
    # the cos and sin values the article then computes with get verdicts of their own
    assert _rounds(mpmath.cos(theta), "0.866")
    assert verdicts_at(checks, ROTATION, "0.866") == {"rounded"}
    assert verdicts_at(checks, ROTATION, "0.5 ") == {"exact"}  # sin 30° = 1/2
    assert verdicts_at(checks, ROTATION, "0.866", 1) == {"rounded"}


def test_a_miscopied_cos_value_is_flagged_and_what_it_feeds(tmp_path: Path) -> None:
    text = ROTATION.replace("4*0.866 = 4.964", "4*0.886 = 5.044")
    checks = json_checks(tmp_path, text)
    theta = mpmath.pi / 6
    assert not _rounds(mpmath.cos(theta), "0.886")  # the digit changed on purpose
    assert not _rounds(3 * mpmath.sin(theta) + 4 * mpmath.cos(theta), "5.044")
    assert verdicts_at(checks, text, "0.886") == {"wrong"}
    assert verdicts_at(checks, text, "5.044") == {"wrong"}
    assert verdicts_at(checks, text, "0.598") == {"rounded"}


def test_angles_in_latex_degrees(tmp_path: Path) -> None:
    text = """\
# Angles

Rotate the pair [2, 1] by $\\theta = 60^\\circ \\approx 1.047$ radians.

$$\\cos(60^{\\circ}) = 0.5, \\quad \\sin(60^\\circ) \\approx 0.866$$
"""
    checks = json_checks(tmp_path, text)
    assert _rounds(mpmath.pi / 3, "1.047")
    assert verdicts_at(checks, text, "1.047") == {"rounded"}
    assert verdicts_at(checks, text, "0.5") == {"exact"}
    assert verdicts_at(checks, text, "0.866") == {"rounded"}


def test_a_wrapped_angle_is_no_equation(tmp_path: Path) -> None:
    # 500° is 140° only modulo a full turn: no verdict, and above all no false alarm
    text = """\
# Wrapping

```
Position 1:   1.0°
Position 500: 500° = 140° (after wrapping)
```
"""
    checks = json_checks(tmp_path, text)
    assert not any(c["verdict"] in ("slip", "wrong") for c in checks)
    assert verdicts_at(checks, text, "140") == set()


# ----------------------------------------------------------------------------- R(θ)

DEFINED = """\
# Rotating pairs

The rotation by an angle θ is

$$
R(\\theta) = \\begin{pmatrix} \\cos\\theta & -\\sin\\theta \\\\ \\sin\\theta & \\cos\\theta \\end{pmatrix}
$$

For the first pair, θ = 0.5:

$$
R(0.5) = \\begin{pmatrix} 0.8776 & -0.4794 \\\\ 0.4794 & 0.8776 \\end{pmatrix}
$$

$$
R(0.5) \\begin{pmatrix} 1.0 \\\\ 2.0 \\end{pmatrix} = \\begin{pmatrix} -0.0813 \\\\ 2.2346 \\end{pmatrix}
$$

For the second pair, θ = 1.5:

$$
R(1.5) \\begin{pmatrix} 2.0 \\\\ 1.0 \\end{pmatrix} = \\begin{pmatrix} -0.8560 \\\\ 2.0657 \\end{pmatrix}
$$

The products:

- \\(-0.0813 \\times 2.0657 = -0.1697\\)
- \\(2.2346 \\times 2.0657 = 4.6161\\)
- \\(4.6161 - 0.1697 = 4.4464\\)
"""


def _rotated(theta: float, x: float, y: float) -> tuple[mpmath.mpf, mpmath.mpf]:
    t = mpmath.mpf(theta)
    return x * mpmath.cos(t) - y * mpmath.sin(t), x * mpmath.sin(t) + y * mpmath.cos(t)


def test_a_function_defined_once_is_applied_to_each_number(tmp_path: Path) -> None:
    checks = json_checks(tmp_path, DEFINED)
    c, s = mpmath.cos(mpmath.mpf("0.5")), mpmath.sin(mpmath.mpf("0.5"))
    assert _rounds(c, "0.8776") and _rounds(s, "0.4794")
    assert verdicts_at(checks, DEFINED, "0.8776") == {"rounded"}
    assert verdicts_at(checks, DEFINED, "-0.4794") == {"rounded"}
    assert verdicts_at(checks, DEFINED, "0.8776", 1) == {"rounded"}
    # R(0.5) times a written pair: the definition written out, then the product
    x, y = _rotated(0.5, 1, 2)
    assert _rounds(x, "-0.0813") and _rounds(y, "2.2346")
    assert verdicts_at(checks, DEFINED, "-0.0813") == {"rounded"}
    assert verdicts_at(checks, DEFINED, "2.2346") == {"rounded"}
    x, y = _rotated(1.5, 2, 1)
    assert _rounds(x, "-0.8560") and _rounds(y, "2.0657")
    assert verdicts_at(checks, DEFINED, "2.0657") == {"rounded"}


def test_an_entry_off_in_an_applied_definition_is_flagged(tmp_path: Path) -> None:
    text = DEFINED.replace("0.4794 & 0.8776", "0.4794 & 0.8767")  # two digits swapped
    checks = json_checks(tmp_path, text)
    assert not _rounds(mpmath.cos(mpmath.mpf("0.5")), "0.8767")
    assert verdicts_at(checks, text, "0.8767") == {"wrong"}
    assert verdicts_at(checks, text, "0.8776") == {"rounded"}


def test_a_subtracted_number_stands_for_an_earlier_negative_result(tmp_path: Path) -> None:
    # -0.1697 is off (two digits swapped); 4.6161 - 0.1697 is right as displayed but not
    # for the quantity: the earlier product is -0.16788 (mpmath), the sum 4.44818
    checks = json_checks(tmp_path, DEFINED)
    a, b = _rotated(0.5, 1, 2), _rotated(1.5, 2, 1)
    p = a[0] * b[1]
    assert not _rounds(p, "-0.1697") and _rounds(p, "-0.1679")
    assert verdicts_at(checks, DEFINED, "-0.1697") == {"wrong"}
    assert _rounds(a[1] * b[1], "4.6161")
    total = a[1] * b[1] + p
    assert not _rounds(total, "4.4464") and _rounds(total, "4.4482")
    assert Fraction("4.6161") - Fraction("0.1697") == Fraction("4.4464")
    assert verdicts_at(checks, DEFINED, "4.4464") == {"wrong"}
    line = next(c for c in checks if c["printed"] == "4.4464")
    assert line["cause"] == "inherited"


def test_no_definition_no_reading(tmp_path: Path) -> None:
    # the same applications, with the definition left out or written after them: no
    # body to put the number in, so the matrices are no arithmetic
    text = DEFINED.replace("R(\\theta) = ", "S(\\theta) = ")
    checks = json_checks(tmp_path, text)
    assert verdicts_at(checks, text, "0.8776") == set()
    start = DEFINED.index("$$\nR(\\theta)")
    end = DEFINED.index("$$", start + 2) + 3
    moved = DEFINED[:start] + DEFINED[end:] + "\n" + DEFINED[start:end]
    checks = json_checks(tmp_path, moved)
    assert verdicts_at(checks, moved, "0.8776") == set()


def test_a_body_with_another_free_name_defines_nothing(tmp_path: Path) -> None:
    text = """\
# A line

$$
f(x) = a x + 0.5
$$

$$
f(2) = 1.5
$$
"""
    checks = json_checks(tmp_path, text)
    assert not any(c["verdict"] in ("slip", "wrong") for c in checks)


# ----------------------------------------------------------------------------- exponents

FREQUENCY = """\
# A frequency

```
θ₅ = 10000^(-2×5/96) = 10000^(-0.1042) ≈ 0.383
```
"""


def test_an_exponent_worked_out_in_the_next_link_is_its_value(tmp_path: Path) -> None:
    exponent = mpmath.mpf(-10) / 96
    assert _rounds(exponent, "-0.1042")
    assert _rounds(mpmath.power(10000, exponent), "0.383")
    checks = json_checks(tmp_path, FREQUENCY)
    assert verdicts_at(checks, FREQUENCY, "-0.1042") == {"rounded"}
    assert verdicts_at(checks, FREQUENCY, "0.383") == {"rounded"}
    off = FREQUENCY.replace("-0.1042", "-0.1024")  # two digits swapped
    assert not _rounds(exponent, "-0.1024")
    assert verdicts_at(json_checks(tmp_path, off), off, "-0.1024") == {"wrong"}


def test_powers_of_different_bases_are_not_paired() -> None:
    assert term_links(["10000^(-2×5/96)", "1000^(-0.1042)"]) == []
    assert term_links(["10000^(-2×5/96)", "10000^(-0.1042)"]) == [
        (1, ("-2×5/96",), "-0.1042", ["10000"])
    ]


# ----------------------------------------------------------------------------- lists

NESTED = """\
# One block of an online softmax

```
S = [[0.5, -1.5], [-1, 0]]
P = exp([[0.5, -1.5], [-1, 0]]) = [[1.65, 0.22], [0.37, 1]]
```
"""


def test_a_matrix_written_as_nested_lists_is_a_printed_result(tmp_path: Path) -> None:
    checks = json_checks(tmp_path, NESTED)
    assert _rounds(mpmath.exp(0.5), "1.65") and _rounds(mpmath.exp(-1.5), "0.22")
    assert _rounds(mpmath.exp(-1), "0.37")
    assert verdicts_at(checks, NESTED, "1.65") == {"rounded"}
    assert verdicts_at(checks, NESTED, "0.22") == {"rounded"}
    assert verdicts_at(checks, NESTED, "0.37") == {"rounded"}
    assert verdicts_at(checks, NESTED, "1]]") == {"exact"}  # e^0
    off = NESTED.replace("0.22]", "0.24]")
    assert abs(mpmath.exp(-1.5) - mpmath.mpf("0.24")) >= mpmath.mpf("0.01")  # one unit off or more
    assert verdicts_at(json_checks(tmp_path, off), off, "0.24") == {"wrong"}


# ----------------------------------------------------------------------------- complex

COMPLEX = """\
# Rotating with complex numbers

```
Position 0, Pair 0: (2.0+1.0j) × (1.0+0j) = 2.0+1.0j
Position 1, Pair 0: (1.0+2.0j) × (0.600+0.800j)
                  = (1.0×0.600 - 2.0×0.800) + i(1.0×0.800 + 2.0×0.600)
                  = -1.000 + 2.000j
z_rotated = (3 + 4i) × e^(i×0.5) = 0.715 + 4.949i
```
"""


def test_complex_products_are_checked_part_by_part(tmp_path: Path) -> None:
    checks = json_checks(tmp_path, COMPLEX)
    # (a+bj)(c+dj) = (ac − bd) + (ad + bc)j, by hand: 2.0 + 1.0j, then -1.0 + 2.0j
    assert verdicts_at(checks, COMPLEX, "2.0+1.0j", 1) == {"exact"}
    assert verdicts_at(checks, COMPLEX, "1.0j\n") == {"exact"}
    assert verdicts_at(checks, COMPLEX, "-1.000") == {"exact"}
    assert verdicts_at(checks, COMPLEX, "2.000j") == {"exact"}
    # e^(iθ) = cos θ + i sin θ (Euler): (3 + 4i) e^(0.5i), against mpmath
    z = mpmath.mpc(3, 4) * mpmath.exp(mpmath.mpc(0, mpmath.mpf("0.5")))
    assert _rounds(z.real, "0.715") and _rounds(z.imag, "4.949")
    assert verdicts_at(checks, COMPLEX, "0.715") == {"rounded"}
    assert verdicts_at(checks, COMPLEX, "4.949") == {"rounded"}


def test_a_complex_part_off_is_flagged(tmp_path: Path) -> None:
    text = COMPLEX.replace("2.000j", "2.200j").replace("4.949i", "4.994i")
    checks = json_checks(tmp_path, text)
    assert verdicts_at(checks, text, "2.200j") == {"wrong"}  # 0.8 + 1.2 = 2.0
    assert verdicts_at(checks, text, "-1.000") == {"exact"}
    z = mpmath.mpc(3, 4) * mpmath.exp(mpmath.mpc(0, mpmath.mpf("0.5")))
    assert abs(z.imag - mpmath.mpf("4.994")) >= mpmath.mpf("0.001")
    assert verdicts_at(checks, text, "4.994") == {"wrong"}
    assert verdicts_at(checks, text, "0.715") == {"rounded"}


@pytest.mark.parametrize(
    ("written", "real", "imaginary"),
    [
        ("(1.0+2.0j) × (0.5+0.25j)", "1.0*0.5 - 2.0*0.25", "1.0*0.25 + 2.0*0.5"),
        ("e^(i×0.3)", "cos(0.3)", "sin(0.3)"),
        ("cos(1.0)+i·sin(1.0)", "cos(1.0)", "sin(1.0)"),
        ("(2.0+1.0j) × (1.0+0j)", "2.0*1.0", "1.0*1.0"),
    ],
)
def test_complex_arithmetic_is_read_as_two_real_expressions(
    written: str, real: str, imaginary: str
) -> None:
    assert complexes.parts(written) == (real, imaginary)


@pytest.mark.parametrize("written", ["3.0 + 4.0", "z × e^(i×0.5)", "sin(2)", "e^(1 + i)"])
def test_no_complex_reading_without_the_unit_or_with_a_name(written: str) -> None:
    assert complexes.parts(written) is None


LISTS = """\
# Rotating two positions at once

```
freqs = [1.0, 0.5]

angles = [
    [0×1.0, 0×0.5],     # Position 0
    [1×1.0, 1×0.5]      # Position 1
] = [
    [0, 0],
    [1.0, 0.5]
]

rotation = [
    [e^(i×0), e^(i×0)],           # Position 0
    [e^(i×1.0), e^(i×0.5)]        # Position 1
] ≈ [
    [1.0+0j, 1.0+0j],
    [0.540+0.841j, 0.878+0.479j]
]

Position 1, Pair 1: (2.0+1.0j) × (0.878+0.479j)
                  = 1.277 + 1.836j
```
"""


def test_a_list_written_over_several_lines_is_one_chain(tmp_path: Path) -> None:
    checks = json_checks(tmp_path, LISTS)
    assert verdicts_at(checks, LISTS, "1.0, 0.5]\n]") == {"exact"}  # 1×1.0 (hand value)
    assert verdicts_at(checks, LISTS, "0.5]\n]") == {"exact"}  # 1×0.5
    # e^(iθ) = cos θ + i sin θ, entry by entry (mpmath)
    c1, s1 = mpmath.cos(1), mpmath.sin(1)
    c5, s5 = mpmath.cos(mpmath.mpf("0.5")), mpmath.sin(mpmath.mpf("0.5"))
    assert _rounds(c1, "0.540") and _rounds(s1, "0.841")
    assert _rounds(c5, "0.878") and _rounds(s5, "0.479")
    for printed in ("0.540", "0.841", "0.878", "0.479"):
        assert verdicts_at(checks, LISTS, printed) == {"rounded"}, printed
    assert verdicts_at(checks, LISTS, "1.0+0j") == {"exact"}  # cos 0 = 1
    # the product reads 0.878 and 0.479 as cos 0.5 and sin 0.5: its real part, right
    # from the rounded values, is one unit or more off the rotation's
    re, im = 2 * c5 - s5, 2 * s5 + c5
    assert Fraction("2.0") * Fraction("0.878") - Fraction("0.479") == Fraction("1.277")
    assert abs(re - mpmath.mpf("1.277")) >= mpmath.mpf("0.001")
    assert _rounds(im, "1.836")
    assert verdicts_at(checks, LISTS, "1.277") == {"wrong"}
    assert verdicts_at(checks, LISTS, "1.836") == {"rounded"}


def test_an_entry_off_in_a_list_is_flagged(tmp_path: Path) -> None:
    text = LISTS.replace("0.878+0.479j]", "0.878+0.497j]")  # two digits swapped
    checks = json_checks(tmp_path, text)
    assert not _rounds(mpmath.sin(mpmath.mpf("0.5")), "0.497")
    assert verdicts_at(checks, text, "0.497") == {"wrong"}
    assert verdicts_at(checks, text, "0.878") == {"rounded"}


WORKED_LIST = """\
# A list of worked lines

```
normalized = [
    (0.1 - 0.25) / 0.364 = -0.15 / 0.364 = -0.412,
    (0.3 - 0.25) / 0.364 = 0.05 / 0.364 = 0.137
]
```
"""


def test_a_list_of_worked_lines_is_read_line_by_line(tmp_path: Path) -> None:
    # relations inside the brackets: each row is a chain of its own, not one list
    checks = json_checks(tmp_path, WORKED_LIST)
    assert _rounds(mpmath.mpf("-0.15") / mpmath.mpf("0.364"), "-0.412")
    assert verdicts_at(checks, WORKED_LIST, "-0.412") == {"rounded"}
    assert _rounds(mpmath.mpf("0.05") / mpmath.mpf("0.364"), "0.137")
    assert verdicts_at(checks, WORKED_LIST, "0.137") == {"rounded"}


def test_a_greek_name_labels_its_chain(tmp_path: Path) -> None:
    checks = json_checks(tmp_path, ROTATION)
    line, _ = position(ROTATION, "θ = 30°")
    assert {c["claim"] for c in checks if (c["printed"], c["source_line"]) == ("0.524", line)} == {
        "θ"
    }
    # the 0.524 each line below computes from (cos(0.524), sin(0.524)) repeats θ and is
    # checked as it, where it is written: π/6 = 0.5235987… prints as 0.524
    assert _rounds(mpmath.pi / 6, "0.524")
    below = [c for c in checks if c["printed"] == "0.524" and c["source_line"] > line]
    assert len(below) == 4
    assert {c["verdict"] for c in below} == {"rounded"}
