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

from symtf.commands.draft import check_article
from symtf.draft.read.items import term_links
from symtf.language import latexmath
from symtf.renderers import json as render_json


@pytest.fixture(autouse=True)
def _forty_digits() -> Iterator[None]:
    """mpmath at 40 digits in this file's tests, and the global precision restored after."""
    with mpmath.workdps(40):
        yield


def _rounds(value: mpmath.mpf, printed: str) -> bool:
    """Whether ``printed`` is ``value`` rounded to its digits (mpmath)."""
    decimals = len(printed.split(".")[1]) if "." in printed else 0
    return abs(value - mpmath.mpf(printed)) <= mpmath.mpf(10) ** (-decimals) / 2


def _checks(tmp_path: Path, text: str) -> list[dict]:
    post = tmp_path / "post.md"
    post.write_text(text, encoding="utf-8")
    return render_json.derivation_dict(check_article(post))["checks"]


def _verdicts(checks: list[dict], text: str, needle: str, nth: int = 0) -> set[str]:
    """The verdicts on the number written at the ``nth`` occurrence of ``needle``."""
    at = -1
    for _ in range(nth + 1):
        at = text.index(needle, at + 1)
    line = text.count("\n", 0, at) + 1
    column = at - (text.rfind("\n", 0, at) + 1) + 1
    return {
        c["verdict"] for c in checks if (c["source_line"], c.get("source_column")) == (line, column)
    }


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
    checks = _checks(tmp_path, ROTATION)
    theta = mpmath.pi / 6
    x = 3 * mpmath.cos(theta) - 4 * mpmath.sin(theta)  # 0.598076…
    y = 3 * mpmath.sin(theta) + 4 * mpmath.cos(theta)  # 4.964101…
    assert _rounds(theta, "0.524") and _rounds(x, "0.598") and _rounds(y, "4.964")
    # from the printed radians x' would be 0.596084…: 0.598 is right only for 30° itself
    assert not _rounds(3 * mpmath.cos(0.524) - 4 * mpmath.sin(0.524), "0.598")
    assert _verdicts(checks, ROTATION, "0.524 radians") == {"rounded"}
    assert _verdicts(checks, ROTATION, "0.598") == {"rounded"}
    assert _verdicts(checks, ROTATION, "4.964") == {"rounded"}
    # the cos and sin values the article then computes with get verdicts of their own
    assert _rounds(mpmath.cos(theta), "0.866")
    assert _verdicts(checks, ROTATION, "0.866") == {"rounded"}
    assert _verdicts(checks, ROTATION, "0.5 ") == {"exact"}  # sin 30° = 1/2
    assert _verdicts(checks, ROTATION, "0.866", 1) == {"rounded"}


def test_a_miscopied_cos_value_is_flagged_and_what_it_feeds(tmp_path: Path) -> None:
    text = ROTATION.replace("4*0.866 = 4.964", "4*0.886 = 5.044")
    checks = _checks(tmp_path, text)
    theta = mpmath.pi / 6
    assert not _rounds(mpmath.cos(theta), "0.886")  # the digit changed on purpose
    assert not _rounds(3 * mpmath.sin(theta) + 4 * mpmath.cos(theta), "5.044")
    assert _verdicts(checks, text, "0.886") == {"wrong"}
    assert _verdicts(checks, text, "5.044") == {"wrong"}
    assert _verdicts(checks, text, "0.598") == {"rounded"}


def test_angles_in_latex_degrees(tmp_path: Path) -> None:
    text = """\
# Angles

Rotate the pair [2, 1] by $\\theta = 60^\\circ \\approx 1.047$ radians.

$$\\cos(60^{\\circ}) = 0.5, \\quad \\sin(60^\\circ) \\approx 0.866$$
"""
    checks = _checks(tmp_path, text)
    assert _rounds(mpmath.pi / 3, "1.047")
    assert _verdicts(checks, text, "1.047") == {"rounded"}
    assert _verdicts(checks, text, "0.5") == {"exact"}
    assert _verdicts(checks, text, "0.866") == {"rounded"}


def test_a_wrapped_angle_is_no_equation(tmp_path: Path) -> None:
    # 500° is 140° only modulo a full turn: no verdict, and above all no false alarm
    text = """\
# Wrapping

```
Position 1:   1.0°
Position 500: 500° = 140° (after wrapping)
```
"""
    checks = _checks(tmp_path, text)
    assert not any(c["verdict"] in ("slip", "wrong") for c in checks)
    assert _verdicts(checks, text, "140") == set()


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
    checks = _checks(tmp_path, DEFINED)
    c, s = mpmath.cos(mpmath.mpf("0.5")), mpmath.sin(mpmath.mpf("0.5"))
    assert _rounds(c, "0.8776") and _rounds(s, "0.4794")
    assert _verdicts(checks, DEFINED, "0.8776") == {"rounded"}
    assert _verdicts(checks, DEFINED, "-0.4794") == {"rounded"}
    assert _verdicts(checks, DEFINED, "0.8776", 1) == {"rounded"}
    # R(0.5) times a written pair: the definition written out, then the product
    x, y = _rotated(0.5, 1, 2)
    assert _rounds(x, "-0.0813") and _rounds(y, "2.2346")
    assert _verdicts(checks, DEFINED, "-0.0813") == {"rounded"}
    assert _verdicts(checks, DEFINED, "2.2346") == {"rounded"}
    x, y = _rotated(1.5, 2, 1)
    assert _rounds(x, "-0.8560") and _rounds(y, "2.0657")
    assert _verdicts(checks, DEFINED, "2.0657") == {"rounded"}


def test_an_entry_off_in_an_applied_definition_is_flagged(tmp_path: Path) -> None:
    text = DEFINED.replace("0.4794 & 0.8776", "0.4794 & 0.8767")  # two digits swapped
    checks = _checks(tmp_path, text)
    assert not _rounds(mpmath.cos(mpmath.mpf("0.5")), "0.8767")
    assert _verdicts(checks, text, "0.8767") == {"wrong"}
    assert _verdicts(checks, text, "0.8776") == {"rounded"}


def test_a_subtracted_number_stands_for_an_earlier_negative_result(tmp_path: Path) -> None:
    # -0.1697 is off (two digits swapped); 4.6161 - 0.1697 is right as displayed but not
    # for the quantity: the earlier product is -0.16788 (mpmath), the sum 4.44818
    checks = _checks(tmp_path, DEFINED)
    a, b = _rotated(0.5, 1, 2), _rotated(1.5, 2, 1)
    p = a[0] * b[1]
    assert not _rounds(p, "-0.1697") and _rounds(p, "-0.1679")
    assert _verdicts(checks, DEFINED, "-0.1697") == {"wrong"}
    assert _rounds(a[1] * b[1], "4.6161")
    total = a[1] * b[1] + p
    assert not _rounds(total, "4.4464") and _rounds(total, "4.4482")
    assert Fraction("4.6161") - Fraction("0.1697") == Fraction("4.4464")
    assert _verdicts(checks, DEFINED, "4.4464") == {"wrong"}
    line = next(c for c in checks if c["printed"] == "4.4464")
    assert line["cause"] == "inherited"


def test_no_definition_no_reading(tmp_path: Path) -> None:
    # the same applications, with the definition left out or written after them: no
    # body to put the number in, so the matrices are no arithmetic
    text = DEFINED.replace("R(\\theta) = ", "S(\\theta) = ")
    checks = _checks(tmp_path, text)
    assert _verdicts(checks, text, "0.8776") == set()
    start = DEFINED.index("$$\nR(\\theta)")
    end = DEFINED.index("$$", start + 2) + 3
    moved = DEFINED[:start] + DEFINED[end:] + "\n" + DEFINED[start:end]
    checks = _checks(tmp_path, moved)
    assert _verdicts(checks, moved, "0.8776") == set()


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
    checks = _checks(tmp_path, text)
    assert not any(c["verdict"] in ("slip", "wrong") for c in checks)
