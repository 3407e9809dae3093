"""The exact backend's product, squares and infinities are what SymPy's own operators give.

``ExactBackend.matmul`` writes each entry as the Add of its nonzero products, and a
square of a sum as the power written out, to skip SymPy's slow questions (is each
factor of ``0·x`` finite? is each term of a sum infinite?). The reference here is
SymPy's own ``a * b`` and ``e**2``: the two must give the very same expressions,
structurally, including where an infinity makes ``0·∞`` NaN.
"""

from __future__ import annotations

from typing import Any

import sympy
from hypothesis import given, settings
from hypothesis import strategies as st

from symtf.backends import ExactBackend
from symtf.backends.exact import _square, infinite_sign

x, y = sympy.symbols("x y", real=True)

_ATOMS = st.sampled_from(
    [
        sympy.S.Zero,
        sympy.S.One,
        sympy.Rational(-3, 7),
        sympy.Rational(5, 2),
        x,
        y,
        sympy.S.NegativeInfinity,
        sympy.S.Infinity,
    ]
)


@st.composite
def _entry(draw: Any) -> sympy.Expr:
    """A rational, a symbol, an infinity, or an expression of a softmax's kind."""
    a, b = draw(_ATOMS), draw(_ATOMS)
    kind = draw(st.integers(0, 4))
    if kind == 0:
        return a
    if kind == 1:
        return sympy.exp(a) / (sympy.exp(a) + sympy.exp(b) + 1)
    if kind == 2:
        return a - sympy.sqrt(2) * b
    if kind == 3:
        return sympy.exp(x) * a + b
    return sympy.S.Zero


@st.composite
def _matrices(draw: Any) -> tuple[sympy.ImmutableMatrix, sympy.ImmutableMatrix]:
    n, k, m = draw(st.integers(1, 3)), draw(st.integers(1, 3)), draw(st.integers(1, 3))
    a = sympy.ImmutableMatrix(n, k, [draw(_entry()) for _ in range(n * k)])
    b = sympy.ImmutableMatrix(k, m, [draw(_entry()) for _ in range(k * m)])
    return a, b


@settings(max_examples=150, deadline=None)
@given(_matrices())
def test_matmul_builds_sympys_product(
    ab: tuple[sympy.ImmutableMatrix, sympy.ImmutableMatrix],
) -> None:
    a, b = ab
    want = list(sympy.ImmutableMatrix(a * b))
    got = list(ExactBackend().matmul(a, b))
    assert [str(g) for g in got] == [str(w) for w in want]
    assert got == want


def test_matmul_of_rationals_and_zero_times_infinity() -> None:
    q = sympy.Rational
    a = sympy.ImmutableMatrix([[q(1, 3), 0], [2, q(-1, 2)]])
    b = sympy.ImmutableMatrix([[3, q(1, 5)], [4, 0]])
    assert ExactBackend().matmul(a, b) == sympy.ImmutableMatrix([[1, q(1, 15)], [4, q(2, 5)]])
    masked = sympy.ImmutableMatrix([[0, sympy.exp(x)]])
    col = sympy.ImmutableMatrix([[sympy.S.NegativeInfinity], [1]])
    assert ExactBackend().matmul(masked, col)[0, 0] is sympy.S.NaN  # 0·(−∞) is undefined


@settings(max_examples=150, deadline=None)
@given(_entry(), _entry())
def test_square_is_sympys_square(a: sympy.Expr, b: sympy.Expr) -> None:
    for e in (a + b, a - b, a * b, a):
        got, want = _square(e), e**2
        assert got == want and str(got) == str(want)


@settings(max_examples=200, deadline=None)
@given(_entry(), _entry())
def test_infinite_sign_is_what_sympys_assumptions_say(a: sympy.Expr, b: sympy.Expr) -> None:
    for e in (a, a + b, a * b, sympy.exp(a) - b):
        want = (1 if e.is_extended_positive else -1) if e.is_infinite else 0
        assert infinite_sign(e) == want, e
