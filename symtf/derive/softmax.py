"""The softmax Jacobian and the gradient of softmax cross-entropy.

Both differentiate :func:`symtf.ops.softmax` itself, run on a row of symbols.
"""

from __future__ import annotations

from collections.abc import Sequence

import sympy
from sympy.core.parameters import distribute

from symtf import ops
from symtf.backends import ExactBackend
from symtf.derive.core import Derivation, Identity, derivative_matrix, symbol_row
from symtf.derive.index import Context, instantiate
from symtf.derive.proof import Proof, Step
from symtf.derive.words import m, words


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


def _det(m: sympy.MatrixBase) -> sympy.Expr:
    """Determinant of a matrix of polynomials, fraction-free over ``QQ[entries' symbols]``.

    ``DomainMatrix`` keeps the entries as sparse polynomials, so the size-7
    Jacobian takes well under a second where SymPy's generic ``det`` takes minutes.
    """
    from sympy.polys.matrices import DomainMatrix

    gens = sorted(set().union(*(e.free_symbols for e in m)), key=str)
    if not gens:
        return m.det()
    dm = DomainMatrix.from_Matrix(sympy.Matrix(m)).convert_to(sympy.QQ[tuple(gens)])
    return dm.domain.to_sympy(dm.det())


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
            words(
                "the quotient rule on ",
                m(r"s_i = e^{x_i} / \sum_k e^{x_k}", "sᵢ = e^{xᵢ}/Σₖ e^{xₖ}"),
                ", differentiating symtf's own softmax",
            ),
            d,
            sympy.ImmutableMatrix(n, n, lambda a, b: jacobian_entry(s, a, b)),
        ),
        Identity(
            "matrix-form",
            r"J = \operatorname{diag}(s) - s\,s^{\top}",
            "J = diag(s) − s sᵀ",
            words(
                "the ",
                m(r"\delta_{ij}", "δᵢⱼ"),
                " term is the diagonal, the product term the outer product",
            ),
            d,
            j,
        ),
        Identity(
            "rows-sum-to-zero",
            r"J\,\mathbf{1} = 0",
            "J·1 = 0",
            words(
                "the outputs sum to 1 for every ",
                m("x", "x"),
                ", so the derivative of their sum is 0",
            ),
            d * ones,
            sympy.zeros(n, 1),
        ),
        Identity(
            "symmetric",
            r"J = J^{\top}",
            "J = Jᵀ",
            words(
                m("s_i s_j", "sᵢsⱼ"),
                " is symmetric in ",
                m("i", "i"),
                " and ",
                m("j", "j"),
                ", and so is the diagonal",
            ),
            d,
            d.T,
        ),
        Identity(
            "singular",
            r"\det J = 0 \quad (\mathbf{1} \in \ker J)",
            "det J = 0  (1 is in the null space)",
            words(
                "a nonzero vector, ",
                m(r"\mathbf{1}", "1"),
                ", is mapped to 0; checked on the simplex ",
                m(r"\sum_i s_i = 1", "Σᵢ sᵢ = 1"),
            ),
            sympy.ImmutableMatrix([[_det(jacobian(simplex))]]),
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
            words(
                "the logarithm of a quotient, and ", m(r"\log e^{z_y} = z_y", "log e^{z_y} = z_y")
            ),
            sympy.ImmutableMatrix([losses]),
            sympy.ImmutableMatrix([[-z[y] + lse for y in range(n)]]),
        ),
        Identity(
            "gradient",
            r"\frac{\partial}{\partial z}\bigl(-\log \operatorname{softmax}(z)_y\bigr)"
            r" = \operatorname{softmax}(z) - \operatorname{onehot}(y)",
            "∂/∂z (−log softmax(z)_y) = softmax(z) − onehot(y)",
            words(
                "differentiate the log-sum-exp form: ",
                m(
                    r"\partial_{z_j} \log \sum_k e^{z_k} = s_j",
                    "∂/∂zⱼ log Σₖ e^{zₖ} = sⱼ",
                ),
                " (row ",
                m("y", "y"),
                ": target ",
                m("y", "y"),
                ")",
            ),
            grad,
            textbook,
        ),
        Identity(
            "gradient-sums-to-zero",
            r"\sum_j \frac{\partial L}{\partial z_j} = 0",
            "Σⱼ ∂L/∂zⱼ = 0",
            words("softmax is unchanged by adding a constant to every ", m("z_j", "zⱼ")),
            sympy.ImmutableMatrix([[sum(grad[0, j] for j in range(n))]]),
            sympy.ImmutableMatrix([[0]]),
        ),
        Identity(
            "hessian",
            r"\frac{\partial^2 L}{\partial z\,\partial z^{\top}} = \operatorname{diag}(s) - s\,s^{\top}",
            "∂²L/∂z∂zᵀ = diag(s) − s sᵀ",
            words(
                "the one-hot term is constant, so the Hessian is the softmax Jacobian (for any ",
                m("y", "y"),
                ")",
            ),
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
    proofs=lambda: _jacobian_proofs(),
)

SOFTMAX_CROSS_ENTROPY = Derivation(
    name="softmax-cross-entropy",
    title="The gradient of softmax cross-entropy",
    build=_cross_entropy_steps,
    sizes=(2, 3, 4),
    size_help="number of classes",
    min_size=2,
    proofs=lambda: _cross_entropy_proofs(),
)


# --------------------------------------------------------------------------- every n

N = sympy.Symbol("n", integer=True, positive=True)
I_, J_, K_ = sympy.symbols("i j k", integer=True)
X = sympy.IndexedBase("x", real=True)
S = sympy.IndexedBase("s", positive=True)
Z = sympy.Symbol("Z", positive=True)


def general_context() -> Context:
    """``s_i = e^{x_i}/Z`` and ``Z = Σ_k e^{x_k}``, for ``i, j`` in ``1 … n``."""
    return Context(
        ranges={I_: (1, N), J_: (1, N)},
        definitions={
            S: sympy.Lambda(I_, sympy.exp(X[I_]) / Z),
            Z: sympy.Sum(sympy.exp(X[K_]), (K_, 1, N)),
        },
    )


SOFTMAX_WHERE = words(
    "where ",
    m(r"s_i = e^{x_i}/Z", "sᵢ = e^{xᵢ}/Z"),
    " and ",
    m(r"Z = \sum_{k=1}^{n} e^{x_k}", "Z = Σ_{k=1}^{n} e^{xₖ}"),
    ", for ",
    m(r"i, j \in \{1, \dots, n\}", "i, j ∈ {1, …, n}"),
)


def jacobian_general(i: sympy.Expr, j: sympy.Expr) -> sympy.Expr:
    """``∂s_i/∂x_j = s_i(δ_ij − s_j)`` in index notation."""
    return S[i] * (sympy.KroneckerDelta(i, j) - S[j])


def quotient_steps(
    s: sympy.IndexedBase,
    x: sympy.IndexedBase,
    z: sympy.Symbol,
    i: sympy.Symbol,
    j: sympy.Symbol,
    k: sympy.Symbol,
    n: sympy.Expr,
) -> list[Step]:
    """The chain from ``∂/∂x_j (e^{x_i}/Z)`` to ``s_i(δ_ij − s_j)``, ``Z = Σ_k e^{x_k}``."""
    d = sympy.KroneckerDelta
    e_i, e_j = sympy.exp(x[i]), sympy.exp(x[j])
    dz = sympy.Derivative(z, x[j])
    return [
        Step("quotient-rule", (sympy.Derivative(e_i, x[j]) * z - e_i * dz) / z**2),
        Step("chain-rule", (e_i * d(i, j) * z - e_i * dz) / z**2),
        Step(
            "sum-rule",
            (e_i * d(i, j) * z - e_i * sympy.Sum(sympy.exp(x[k]) * d(k, j), (k, 1, n))) / z**2,
        ),
        Step("delta-sifting", (e_i * d(i, j) * z - e_i * e_j) / z**2),
        Step("algebra", e_i / z * d(i, j) - (e_i / z) * (e_j / z)),
        Step("definition", s[i] * d(i, j) - s[i] * s[j]),
        Step("algebra", s[i] * (d(i, j) - s[j])),
    ]


def _jacobian_proofs() -> list[Proof]:
    ctx = general_context()
    d = sympy.KroneckerDelta
    e_i = sympy.exp(X[I_])
    entries = Proof(
        "entries",
        sympy.Derivative(S[I_], X[J_]),
        jacobian_general(I_, J_),
        ctx,
        (
            Step("definition", sympy.Derivative(e_i / Z, X[J_])),
            *quotient_steps(S, X, Z, I_, J_, K_, N),
        ),
        SOFTMAX_WHERE,
    )
    matrix = Proof(
        "matrix-form",
        sympy.Derivative(S[I_], X[J_]),
        S[I_] * d(I_, J_) - S[I_] * S[J_],
        ctx,
        (
            Step("lemma", jacobian_general(I_, J_), lemma="entries"),
            Step(
                "algebra",
                S[I_] * d(I_, J_) - S[I_] * S[J_],
                words(
                    m(r"\operatorname{diag}(s)_{ij} = s_i\delta_{ij}", "diag(s)_ij = sᵢδᵢⱼ"),
                    ", ",
                    m(r"(s s^{\top})_{ij} = s_i s_j", "(s sᵀ)_ij = sᵢsⱼ"),
                ),
            ),
        ),
        SOFTMAX_WHERE,
    )
    row = sympy.Sum(sympy.Derivative(S[I_], X[J_]), (J_, 1, N))
    rows = Proof(
        "rows-sum-to-zero",
        row,
        sympy.S.Zero,
        ctx,
        (
            Step("lemma", sympy.Sum(jacobian_general(I_, J_), (J_, 1, N)), lemma="entries"),
            Step(
                "linearity",
                S[I_] * sympy.Sum(d(I_, J_), (J_, 1, N)) - S[I_] * sympy.Sum(S[J_], (J_, 1, N)),
            ),
            Step("delta-sifting", S[I_] - S[I_] * sympy.Sum(S[J_], (J_, 1, N))),
            Step("sums-to-one", sympy.S.Zero),
        ),
        SOFTMAX_WHERE,
    )
    symmetric = Proof(
        "symmetric",
        sympy.Derivative(S[I_], X[J_]),
        sympy.Derivative(S[J_], X[I_]),
        ctx,
        (
            Step("lemma", jacobian_general(I_, J_), lemma="entries"),
            Step(
                "algebra",
                S[J_] * d(J_, I_) - S[J_] * S[I_],
                words(m(r"\delta_{ij} s_i = \delta_{ij} s_j", "δᵢⱼsᵢ = δᵢⱼsⱼ")),
            ),
            Step("lemma", sympy.Derivative(S[J_], X[I_]), lemma="entries"),
        ),
        SOFTMAX_WHERE,
    )
    return [entries, matrix, rows, symmetric]


ZZ = sympy.IndexedBase("z", real=True)
Y_ = sympy.Symbol("y", integer=True)


def cross_entropy_context() -> Context:
    """``s_j = e^{z_j}/Z``, ``Z = Σ_k e^{z_k}``, target ``y`` and ``i, j`` in ``1 … n``."""
    return Context(
        ranges={I_: (1, N), J_: (1, N), Y_: (1, N)},
        definitions={
            S: sympy.Lambda(I_, sympy.exp(ZZ[I_]) / Z),
            Z: sympy.Sum(sympy.exp(ZZ[K_]), (K_, 1, N)),
        },
    )


CROSS_ENTROPY_WHERE = words(
    "where ",
    m(r"s_j = e^{z_j}/Z", "sⱼ = e^{zⱼ}/Z"),
    " and ",
    m(r"Z = \sum_{k=1}^{n} e^{z_k}", "Z = Σ_{k=1}^{n} e^{zₖ}"),
    ", for a target ",
    m(r"y", "y"),
    " and ",
    m(r"i, j \in \{1, \dots, n\}", "i, j ∈ {1, …, n}"),
)


def cross_entropy_gradient_general(j: sympy.Expr, y: sympy.Expr) -> sympy.Expr:
    """``∂(−log s_y)/∂z_j = s_j − δ_{jy}`` in index notation."""
    return S[j] - sympy.KroneckerDelta(j, y)


def _cross_entropy_proofs() -> list[Proof]:
    ctx = cross_entropy_context()
    d = sympy.KroneckerDelta
    loss = -sympy.log(S[Y_])
    lse = -ZZ[Y_] + sympy.log(Z)
    log_sum_exp = Proof(
        "log-sum-exp",
        loss,
        lse,
        ctx,
        (
            Step("definition", -sympy.log(sympy.exp(ZZ[Y_]) / Z)),
            Step("log-rules", lse),
        ),
        CROSS_ENTROPY_WHERE,
    )
    dz = sympy.Derivative(Z, ZZ[J_])
    gradient = Proof(
        "gradient",
        sympy.Derivative(loss, ZZ[J_]),
        cross_entropy_gradient_general(J_, Y_),
        ctx,
        (
            Step("lemma", sympy.Derivative(lse, ZZ[J_]), lemma="log-sum-exp"),
            Step("chain-rule", -d(Y_, J_) + dz / Z),
            Step("sum-rule", -d(Y_, J_) + sympy.Sum(sympy.exp(ZZ[K_]) * d(K_, J_), (K_, 1, N)) / Z),
            Step("delta-sifting", -d(Y_, J_) + sympy.exp(ZZ[J_]) / Z),
            Step("definition", cross_entropy_gradient_general(J_, Y_)),
        ),
        CROSS_ENTROPY_WHERE,
    )
    total = Proof(
        "gradient-sums-to-zero",
        sympy.Sum(sympy.Derivative(loss, ZZ[J_]), (J_, 1, N)),
        sympy.S.Zero,
        ctx,
        (
            Step(
                "lemma",
                sympy.Sum(cross_entropy_gradient_general(J_, Y_), (J_, 1, N)),
                lemma="gradient",
            ),
            Step("linearity", sympy.Sum(S[J_], (J_, 1, N)) - sympy.Sum(d(J_, Y_), (J_, 1, N))),
            Step("delta-sifting", sympy.Sum(S[J_], (J_, 1, N)) - 1),
            Step("sums-to-one", sympy.S.Zero),
        ),
        CROSS_ENTROPY_WHERE,
    )
    hessian = Proof(
        "hessian",
        sympy.Derivative(loss, ZZ[I_], ZZ[J_]),
        jacobian_general(I_, J_),
        ctx,
        (
            Step(
                "differentiation",
                sympy.Derivative(cross_entropy_gradient_general(I_, Y_), ZZ[J_]),
                words("the gradient above, differentiated again"),
            ),
            Step(
                "sum-rule",
                sympy.Derivative(S[I_], ZZ[J_]),
                words("the ", m(r"\delta_{iy}", "δᵢ_y"), " term is constant"),
            ),
            Step("definition", sympy.Derivative(sympy.exp(ZZ[I_]) / Z, ZZ[J_])),
            *quotient_steps(S, ZZ, Z, I_, J_, K_, N),
        ),
        CROSS_ENTROPY_WHERE,
    )
    return [log_sum_exp, gradient, total, hessian]


def jacobian_at(x: Sequence[sympy.Rational]) -> sympy.ImmutableMatrix:
    """The proved ``∂s_i/∂x_j = s_i(δ_ij − s_j)`` evaluated exactly at a row ``x``.

    The general formula (the one the proof establishes for every ``n``) at
    ``n = len(x)``: a value to compare with any other gradient of softmax.
    """
    n = len(x)
    ctx = general_context()
    return sympy.ImmutableMatrix(
        n,
        n,
        lambda a, b: instantiate(
            jacobian_general(I_, J_), ctx, {N: n}, {X: list(x)}, {I_: a + 1, J_: b + 1}
        ),
    )


def cross_entropy_gradient_at(z: Sequence[sympy.Rational], y: int) -> sympy.ImmutableMatrix:
    """The proved ``∂(−log softmax(z)_y)/∂z_j = s_j − δ_jy`` at a row ``z`` (``y`` from 0), as a row."""
    n = len(z)
    ctx = cross_entropy_context()
    return sympy.ImmutableMatrix(
        1,
        n,
        [
            instantiate(
                cross_entropy_gradient_general(J_, Y_),
                ctx,
                {N: n},
                {ZZ: list(z)},
                {J_: j + 1, Y_: y + 1},
            )
            for j in range(n)
        ],
    )
