"""The softmax Jacobian and the gradient of softmax cross-entropy.

Both differentiate :func:`symtf.ops.softmax` itself, run on a row of symbols.
"""

from __future__ import annotations

import sympy
from sympy.core.parameters import distribute

from symtf import ops
from symtf.backends import ExactBackend
from symtf.derive.core import Derivation, Identity, derivative_matrix, symbol_row


def softmax_row(x: sympy.MatrixBase) -> sympy.ImmutableMatrix:
    """``softmax`` of a ``1 × n`` row, by :func:`symtf.ops.softmax`."""
    with distribute(False):
        return ops.on_matrices(ops.softmax, ExactBackend(), sympy.ImmutableMatrix(x))


def jacobian_entry(s: sympy.MatrixBase, i: int, j: int) -> sympy.Expr:
    """Textbook ``∂s_i/∂x_j = s_i(δ_ij − s_j)``."""
    return s[i] * (sympy.KroneckerDelta(i, j) - s[j])


def jacobian(s: sympy.MatrixBase) -> sympy.ImmutableMatrix:
    """Textbook ``J = diag(s) − s sᵀ`` for a row or column ``s``."""
    col = sympy.Matrix(list(s))
    return sympy.ImmutableMatrix(sympy.diag(*col) - col * col.T)


def cross_entropy_gradient(s: sympy.MatrixBase, y: int) -> sympy.ImmutableMatrix:
    """Textbook ``∂/∂z (−log softmax(z)_y) = softmax(z) − onehot(y)`` as a row."""
    n = len(s)
    return sympy.ImmutableMatrix(1, n, [s[j] - (1 if j == y else 0) for j in range(n)])


def _jacobian_steps(n: int | None) -> list[Identity]:
    assert n is not None
    x = symbol_row("x", n)
    s = softmax_row(x)
    d = derivative_matrix(s, list(x))
    j = jacobian(s)
    ones = sympy.ImmutableMatrix(n, 1, [1] * n)
    # On the simplex (s_n = 1 − s_1 − … − s_{n−1}) the formula alone is singular.
    free = [sympy.Symbol(f"s_{i + 1}", real=True) for i in range(n - 1)]
    simplex = sympy.ImmutableMatrix(1, n, [*free, 1 - sum(free)])
    return [
        Identity(
            "entries",
            r"\frac{\partial s_i}{\partial x_j} = s_i\,(\delta_{ij} - s_j)",
            "∂sᵢ/∂xⱼ = sᵢ(δᵢⱼ − sⱼ)",
            "quotient rule on s_i = exp(x_i) / sum_k exp(x_k), differentiating ops.softmax",
            d,
            sympy.ImmutableMatrix(n, n, lambda a, b: jacobian_entry(s, a, b)),
        ),
        Identity(
            "matrix-form",
            r"J = \operatorname{diag}(s) - s\,s^{\top}",
            "J = diag(s) − s sᵀ",
            "the delta term is the diagonal, the product term the outer product",
            d,
            j,
        ),
        Identity(
            "rows-sum-to-zero",
            r"J\,\mathbf{1} = 0",
            "J·1 = 0",
            "the outputs sum to 1 for every x, so the derivative of their sum is 0",
            d * ones,
            sympy.zeros(n, 1),
        ),
        Identity(
            "symmetric",
            r"J = J^{\top}",
            "J = Jᵀ",
            "s_i s_j is symmetric in i and j, and so is the diagonal",
            d,
            d.T,
        ),
        Identity(
            "singular",
            r"\det J = 0 \quad (\mathbf{1} \in \ker J)",
            "det J = 0  (1 is in the null space)",
            "a nonzero vector, 1, is mapped to 0; checked on the simplex sum_i s_i = 1",
            sympy.ImmutableMatrix([[jacobian(simplex).det(method="berkowitz")]]),
            sympy.ImmutableMatrix([[0]]),
        ),
    ]


def _cross_entropy_steps(n: int | None) -> list[Identity]:
    assert n is not None
    z = symbol_row("z", n)
    s = softmax_row(z)
    losses = [-sympy.log(s[y]) for y in range(n)]
    grad = sympy.ImmutableMatrix(n, n, lambda y, j: sympy.Derivative(losses[y], z[j]))
    textbook = sympy.ImmutableMatrix.vstack(*[cross_entropy_gradient(s, y) for y in range(n)])
    lse = sympy.log(sum(sympy.exp(z[j]) for j in range(n)))
    hessian = sympy.ImmutableMatrix(n, n, lambda a, b: sympy.Derivative(losses[0], z[a], z[b]))
    return [
        Identity(
            "log-sum-exp",
            r"-\log \operatorname{softmax}(z)_y = -z_y + \log \sum_j e^{z_j}",
            "−log softmax(z)_y = −z_y + log Σⱼ e^{z_j}",
            "log of a quotient, and log(exp(z_y)) = z_y",
            sympy.ImmutableMatrix([losses]),
            sympy.ImmutableMatrix([[-z[y] + lse for y in range(n)]]),
        ),
        Identity(
            "gradient",
            r"\frac{\partial}{\partial z}\bigl(-\log \operatorname{softmax}(z)_y\bigr)"
            r" = \operatorname{softmax}(z) - \operatorname{onehot}(y)",
            "∂/∂z (−log softmax(z)_y) = softmax(z) − onehot(y)",
            "differentiate the log-sum-exp form: d/dz_j log sum_k exp(z_k) = s_j (row y: target y)",
            grad,
            textbook,
        ),
        Identity(
            "gradient-sums-to-zero",
            r"\sum_j \frac{\partial L}{\partial z_j} = 0",
            "Σⱼ ∂L/∂zⱼ = 0",
            "softmax is unchanged by adding a constant to every z_j",
            sympy.ImmutableMatrix([[sum(grad[0, j] for j in range(n))]]),
            sympy.ImmutableMatrix([[0]]),
        ),
        Identity(
            "hessian",
            r"\frac{\partial^2 L}{\partial z\,\partial z^{\top}} = \operatorname{diag}(s) - s\,s^{\top}",
            "∂²L/∂z∂zᵀ = diag(s) − s sᵀ",
            "the onehot term is constant, so the Hessian is the softmax Jacobian (for any y)",
            hessian,
            jacobian(s),
        ),
    ]


SOFTMAX_JACOBIAN = Derivation(
    name="softmax-jacobian",
    title="The softmax Jacobian",
    build=_jacobian_steps,
    sizes=(2, 3, 4),
    size_help="length of the softmax row",
    min_size=2,
)

SOFTMAX_CROSS_ENTROPY = Derivation(
    name="softmax-cross-entropy",
    title="The gradient of softmax cross-entropy",
    build=_cross_entropy_steps,
    sizes=(2, 3, 4),
    size_help="number of classes",
    min_size=2,
)
