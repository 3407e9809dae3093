"""Relations a step's outputs satisfy whatever its inputs (a softmax row sums to 1, a
centred row to 0, the columns of a wide linear map are dependent): the equations that tie
a group of entries together, and the test that an expression of the inputs is constant.
"""

from __future__ import annotations

from dataclasses import dataclass

import sympy

from symtf.teach.dependence import Entry

#: Precision of the point near the inputs' values at which :func:`differs` evaluates.
POINT_BITS = 128


@dataclass(frozen=True)
class Constraint:
    """Equations that tie a group of one step's entries together, whatever the inputs.

    Attributes:
        group: The entries.
        k: How many of them follow from the others.
        grads: For linear equations, each entry's gradient in the step's inputs: an entry
            follows from known ones when its gradient is in the span of theirs.
    """

    group: frozenset[Entry]
    k: int
    grads: dict[Entry, sympy.Matrix] | None = None

    def determined(self, e: Entry, known: set[Entry]) -> bool:
        """Whether the ``known`` entries of the group give ``e``."""
        if self.grads is None:
            return len(self.group - known) <= self.k
        basis = [self.grads[x] for x in sorted((self.group - {e}) & known)]
        if not basis:
            return False
        b = sympy.Matrix.vstack(*basis)
        return bool(b.rank() == b.col_join(self.grads[e]).rank())


def linear_gradients(
    cells: list[tuple[Entry, sympy.Expr]],
) -> dict[Entry, sympy.Matrix] | None:
    """Each cell's coefficients in the symbols, when every cell is linear in them."""
    syms = sorted(set().union(*(c.free_symbols for _, c in cells)), key=str)
    if not syms:
        return None
    out = {}
    for x, c in cells:
        try:
            poly = sympy.Poly(c, *syms)
        except sympy.PolynomialError:
            return None
        if poly.total_degree() > 1 or not all(v.is_Rational for v in poly.coeffs()):
            return None
        out[x] = sympy.Matrix([[poly.coeff_monomial(s) for s in syms]])
    return out


def constant_in_inputs(
    total: sympy.Expr, point: dict[sympy.Symbol, sympy.Expr] | None = None
) -> bool:
    """Whether an expression of the inputs' symbols is the same number for all of them.

    With ``point`` (the inputs' values), two nearby points are tried first: an
    expression whose values there differ by far more than their working precision is
    not constant, and the symbolic test (``cancel`` of a row's squares through a square
    root can take seconds) is left for the few that agree.
    """
    if not total.free_symbols:
        return True
    if point is not None and differs(total, point):
        return False
    num, den = sympy.fraction(sympy.together(total))
    num = sympy.expand(num)
    if not num.free_symbols:
        return num == 0 or not sympy.expand(den).free_symbols
    return not sympy.cancel(num / sympy.expand(den)).free_symbols


def differs(total: sympy.Expr, point: dict[sympy.Symbol, sympy.Expr]) -> bool:
    """Whether ``total`` takes clearly different values at two points near ``point``.

    Each input is moved by a fixed fraction (its own, so no two move alike) to stay in
    the expression's domain (a variance stays positive); the values are computed at 40
    digits, and only a difference above 1e-20 of their size counts, so an expression
    that is constant is never taken for one that is not.
    """
    syms = sorted(total.free_symbols, key=str)
    if any(s not in point or not point[s].is_finite for s in syms):
        return False
    values = []
    for shift in (sympy.Rational(1, 7), sympy.Rational(-2, 9)):
        at = {
            s: point[s] * (1 + shift * sympy.Rational(k + 1, len(syms) + 1))
            + shift * sympy.Rational(1, 10 + k)
            for k, s in enumerate(syms)
        }
        v = total.xreplace(at).evalf(40)
        if not v.is_number or v.has(sympy.nan, sympy.zoo, sympy.oo, -sympy.oo):
            return False
        values.append(complex(v))
    a, b = values
    return abs(a - b) > 1e-20 * max(1.0, abs(a), abs(b))
