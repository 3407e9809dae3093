"""Certified enclosures: balls contain the mpmath value, signs are decided or refused."""

from fractions import Fraction as F

import mpmath
import pytest
import sympy as sp

from symtf.backends.certify import ball, compare_ball
from symtf.backends.decimals import decimal_string
from symtf.backends.signs import exact_sign
from symtf.backends.zero import exact_zero
from symtf.errors import Undecided

CASES = [
    (sp.exp(4 / sp.sqrt(3)), lambda: mpmath.exp(4 / mpmath.sqrt(3))),
    (sp.Rational(17, 36), lambda: mpmath.mpf(17) / 36),
    (1 / (1 + sp.exp(sp.sqrt(2) / 100)), lambda: 1 / (1 + mpmath.exp(mpmath.sqrt(2) / 100))),
    (sp.erf(sp.Rational(1, 3)) * sp.pi, lambda: mpmath.erf(mpmath.mpf(1) / 3) * mpmath.pi),
    (
        sp.log(sp.Rational(5, 2)) - sp.tanh(2),
        lambda: mpmath.log(mpmath.mpf(5) / 2) - mpmath.tanh(2),
    ),
    (sp.cos(sp.Rational(1, 7)) ** 3, lambda: mpmath.cos(mpmath.mpf(1) / 7) ** 3),
]


@pytest.mark.parametrize(("expr", "reference"), CASES)
@pytest.mark.parametrize("prec", [64, 128, 512])
def test_ball_contains_mpmath_value(expr, reference, prec) -> None:
    with mpmath.workdps(80):
        ref = reference()
        b = ball(expr, prec)
        # the mpmath value (80 digits) lies inside the ball, widened by mpmath's own error
        lo, hi = b.lower(), b.upper()
        assert mpmath.mpf(lo.str(60, radius=False)) - mpmath.mpf("1e-70") <= ref
        assert ref <= mpmath.mpf(hi.str(60, radius=False)) + mpmath.mpf("1e-70")
        assert float(b.rad()) < 2.0 ** (-prec + 20)


def test_decimal_string_digits_are_right() -> None:
    s = decimal_string(ball(sp.exp(4 / sp.sqrt(3)), 256), 20)
    with mpmath.workdps(50):
        ref = mpmath.nstr(mpmath.exp(4 / mpmath.sqrt(3)), 30, strip_zeros=False)
    assert s is not None and s.endswith("…")
    assert ref.startswith(s[:-1])


def test_decimal_string_refuses_wide_ball() -> None:
    assert decimal_string(ball(sp.exp(4 / sp.sqrt(3)), 20), 20) is None


def test_compare_ball_is_three_way() -> None:
    third = ball(sp.Rational(1, 3), 128)
    assert compare_ball(third, F(1, 4)) == 1
    assert compare_ball(third, F(1, 2)) == -1
    # 1/3 is not a dyadic number: the ball cannot be exact and straddles 1/3
    assert compare_ball(third, F(1, 3)) is None
    assert compare_ball(ball(sp.Integer(2)), F(2)) == 0


def test_disguised_zero_is_decided_exactly() -> None:
    zero = (1 + sp.sqrt(2)) ** 2 - 2 * sp.sqrt(2) - 3
    assert exact_zero(zero)
    assert exact_sign(zero) == 0
    assert exact_sign(zero + sp.Rational(1, 2000)) == 1
    assert exact_sign(zero - sp.Rational(1, 10**200)) == -1  # balls escalate to 1024 bits


def test_sign_of_symbolic_value_is_undecided() -> None:
    with pytest.raises(Undecided):
        exact_sign(sp.Symbol("a") + 1)


def test_float_never_enters_exact_arithmetic() -> None:
    with pytest.raises(TypeError):
        ball(sp.Float(0.1) + 1)
