"""Calling a registry op: what the fast paths keep (``symtf/ops/core.py``, the float64 backend).

An op remembers the shapes and plain parameters its shape rule accepted, and the
float64 backend checks a whole matrix for zeros at once. Neither may change what a
call gives or raises: a refused combination raises every time, naming both shapes;
an accepted one does not excuse another; a zero is reported with the message, and
the row, that the entry-by-entry check gives.
"""

from __future__ import annotations

from fractions import Fraction

import numpy as np
import pytest

from symtf import ops
from symtf.backends import ExactBackend, FloatBackend
from symtf.errors import ModelError, ShapeError
from symtf.tensor import Tensor


def _float(rows: list[list[float]]) -> Tensor:
    xp = FloatBackend()
    return Tensor.wrap(xp, np.array(rows, dtype=float))


def test_a_refused_shape_is_refused_every_time() -> None:
    xp = FloatBackend()
    a, b = (Tensor.wrap(xp, np.ones(s)) for s in ((2, 3), (2, 3)))
    assert ops.matmul(xp, a, ops.T(xp, b)).shape == (2, 2)  # accepted, and remembered
    for _ in range(3):
        with pytest.raises(ShapeError, match=r"\(2, 3\) and \(2, 3\)"):
            ops.matmul(xp, a, b)


def test_an_accepted_parameter_does_not_excuse_another() -> None:
    xp = FloatBackend()
    x = Tensor.wrap(xp, np.zeros((2, 3)))
    assert ops.softmax(xp, x, axis=1).shape == (2, 3)
    with pytest.raises(ShapeError, match="axis 2 is out of range for 2 axes"):
        ops.softmax(xp, x, axis=2)
    assert ops.mean(xp, x, axis=[0, 1]).shape == ()  # a list of axes: never remembered
    with pytest.raises(ShapeError, match="repeated axis"):
        ops.mean(xp, x, axis=[1, 1])


def test_a_variadic_op_checks_each_combination() -> None:
    xp = FloatBackend()
    a, b = Tensor.wrap(xp, np.ones((2, 2))), Tensor.wrap(xp, np.ones((3, 2)))
    assert ops.concat(xp, [a, b], axis=0).shape == (5, 2)
    with pytest.raises(ShapeError, match=r"\(2, 2\) and \(3, 2\) along axis -1"):
        ops.concat(xp, [a, b], axis=-1)


@pytest.mark.parametrize(
    ("rows", "message"),
    [
        ([[1.0, 2.0], [3.0, 3.0]], "the variance + eps of row 1 is"),
        ([[5.0, 5.0], [1.0, 2.0]], "the variance + eps of row 0 is"),
    ],
)
def test_a_zero_variance_names_its_row_in_float64_as_in_exact_arithmetic(
    rows: list[list[float]], message: str
) -> None:
    with pytest.raises(ModelError, match=message.replace("+", r"\+")):
        ops.layernorm(FloatBackend(), _float(rows))
    exact = ExactBackend()
    with pytest.raises(ModelError, match=message.replace("+", r"\+")):
        ops.layernorm(exact, ops.tensor(exact, [[Fraction(x) for x in r] for r in rows]))


def test_a_zero_divisor_is_found_wherever_it_is() -> None:
    xp = FloatBackend()
    for at in range(6):
        d = np.ones((2, 3))
        d.flat[at] = 0.0
        with pytest.raises(ModelError, match="a divisor is 0"):
            ops.div(xp, _float([[1.0] * 3] * 2), Tensor.wrap(xp, d))
    got = ops.div(xp, _float([[1.0, 2.0, 3.0]]), _float([[2.0, 4.0, -8.0]]))
    assert got.native(xp).tolist() == [[0.5, 0.5, -0.375]]


def test_an_all_minus_infinity_row_has_no_softmax() -> None:
    xp = FloatBackend()
    x = _float([[0.0, 1.0], [-np.inf, -np.inf]])
    with pytest.raises(ModelError, match="softmax denominator"):
        ops.softmax(xp, x)


def test_a_list_of_axes_sums_as_the_axes_it_lists() -> None:
    xp = FloatBackend()
    x = _float([[1.0, 2.0], [3.0, 5.0]])
    assert ops.sum_(xp, x, axis=[1], keepdims=True).native(xp).tolist() == [[3.0], [8.0]]
    assert ops.sum_(xp, x, axis=[0, 1]).native(xp).tolist() == [[11.0]]
    assert ops.sum_(xp, x, axis=(0,)).native(xp).tolist() == [[4.0, 7.0]]
