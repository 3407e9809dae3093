"""The Jacobians of LayerNorm and RMSNorm.

LayerNorm is symtf's own, the registry's worked pieces (``mean``, ``x − μ``,
``mean_square``, ``norm_root``, ``normalize``) with γ = 1, β = 0, run on a row of
symbols, with ε symbolic and with ε = 0; RMSNorm the same pieces without the
centring.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import sympy
from sympy.core.parameters import distribute

from symtf import ops
from symtf.backends import ExactBackend
from symtf.derive.core import Derivation, Identity, derivative_matrix, symbol_row
from symtf.derive.index import Context, instantiate
from symtf.derive.proof import Proof, Step
from symtf.derive.words import Words, m, words

EPS = sympy.Symbol("varepsilon", positive=True)


@dataclass(frozen=True)
class NormParts:
    """LayerNorm of a row and the worked pieces: ``mean``, ``centered``, ``var``, ``std``, ``out``."""

    mean: Any
    centered: Any
    var: Any
    std: Any
    out: Any


def layer_norm_row(x: sympy.MatrixBase, eps: sympy.Expr) -> NormParts:
    """LayerNorm of a ``1 × n`` row with γ = 1, β = 0, by the registry's worked pieces."""
    xp = ExactBackend(max_ops=10**9)
    n = x.cols
    one, zero = sympy.ImmutableMatrix(1, n, [1] * n), sympy.ImmutableMatrix(1, n, [0] * n)
    with distribute(False):
        row = sympy.ImmutableMatrix(x)
        mean = ops.on_matrices(ops.mean, xp, row, axis=-1, keepdims=True)
        centered = ops.on_matrices(ops.sub, xp, row, mean)
        var = ops.on_matrices(ops.mean_square, xp, centered)
        std = ops.on_matrices(ops.norm_root, xp, var, eps=eps)
        out = ops.on_matrices(ops.normalize, xp, centered, std, gamma=one, beta=zero)
        return NormParts(mean, centered, var, std, out)


def rms_norm_row(x: sympy.MatrixBase, eps: sympy.Expr) -> tuple[Any, Any]:
    """RMSNorm of a ``1 × n`` row with gain 1: ``(x / rms, rms)``, ``rms = √(mean(x²) + ε)``."""
    xp = ExactBackend(max_ops=10**9)
    n = x.cols
    one, zero = sympy.ImmutableMatrix(1, n, [1] * n), sympy.ImmutableMatrix(1, n, [0] * n)
    with distribute(False):
        row = sympy.ImmutableMatrix(x)
        ms = ops.on_matrices(ops.mean_square, xp, row)
        rms = ops.on_matrices(ops.norm_root, xp, ms, eps=eps)
        out = ops.on_matrices(ops.normalize, xp, row, rms, gamma=one, beta=zero)
        return out, rms[0, 0]


def layer_norm_jacobian(xhat: sympy.MatrixBase, sigma: sympy.Expr) -> sympy.ImmutableMatrix:
    """Textbook ``J = (1/σ)(I − 11ᵀ/n − x̂x̂ᵀ/n)`` for a row ``x̂``."""
    n = len(xhat)
    col = sympy.Matrix(list(xhat))
    return sympy.ImmutableMatrix((sympy.eye(n) - sympy.ones(n, n) / n - col * col.T / n) / sigma)


def rms_norm_jacobian(xhat: sympy.MatrixBase, rms: sympy.Expr) -> sympy.ImmutableMatrix:
    """Textbook ``J = (1/r)(I − x̂x̂ᵀ/n)`` with ``x̂ = x/r`` for a row ``x̂``."""
    n = len(xhat)
    col = sympy.Matrix(list(xhat))
    return sympy.ImmutableMatrix((sympy.eye(n) - col * col.T / n) / rms)


def _layer_norm_steps(n: int | None) -> list[Identity]:
    assert n is not None
    x = symbol_row("x", n)
    ones = sympy.ImmutableMatrix(n, 1, [1] * n)
    out = []
    for eps, tag, eps_tex in ((EPS, "", r"\varepsilon"), (sympy.S.Zero, "eps0:", "0")):
        parts = layer_norm_row(x, eps)
        sigma = parts.std[0, 0]
        xhat = parts.centered / sigma
        d = derivative_matrix(parts.out, list(x))
        j = layer_norm_jacobian(xhat, sigma)
        where = rf"\quad(\varepsilon = {eps_tex})" if tag else r"\quad(\varepsilon > 0)"
        plain_where = "  (ε = 0)" if tag else "  (ε > 0)"
        out.append(
            Identity(
                f"{tag}jacobian",
                rf"\frac{{\partial y}}{{\partial x}} = \frac{{1}}{{\sigma}}"
                rf"\Bigl(I - \frac{{\mathbf{{1}}\mathbf{{1}}^{{\top}}}}{{n}}"
                rf" - \frac{{\hat x\hat x^{{\top}}}}{{n}}\Bigr){where}",
                "∂y/∂x = (1/σ)(I − 11ᵀ/n − x̂x̂ᵀ/n)" + plain_where,
                words(
                    m(r"y = c/\sigma", "y = c/σ"),
                    " with ",
                    m(
                        r"\partial c/\partial x = I - \mathbf{1}\mathbf{1}^{\top}/n",
                        "∂c/∂x = I − 11ᵀ/n",
                    ),
                    " and ",
                    m(r"\partial\sigma/\partial x_j = c_j/(n\sigma)", "∂σ/∂xⱼ = cⱼ/(nσ)"),
                    ", differentiating symtf's own LayerNorm",
                ),
                d,
                j,
            )
        )
        out.append(
            Identity(
                f"{tag}kills-ones",
                r"J\,\mathbf{1} = 0" + where,
                "J·1 = 0" + plain_where,
                words(
                    "adding a constant to every ",
                    m("x_i", "xᵢ"),
                    " changes neither ",
                    m(r"x - \mu", "x − μ"),
                    " nor ",
                    m(r"\sigma", "σ"),
                ),
                d * ones,
                sympy.zeros(n, 1),
            )
        )
        if tag:
            out.append(
                Identity(
                    f"{tag}kills-xhat",
                    r"J\,\hat x = 0" + where,
                    "J·x̂ = 0" + plain_where,
                    words(
                        "scaling ",
                        m(r"x - \mu", "x − μ"),
                        " leaves ",
                        m("y", "y"),
                        " unchanged when ",
                        m(r"\varepsilon = 0", "ε = 0"),
                    ),
                    d * xhat.T,
                    sympy.zeros(n, 1),
                )
            )
        else:
            out.append(
                Identity(
                    "xhat-leak",
                    r"J\,\hat x = \frac{\varepsilon}{\sigma^{3}}\,\hat x" + where,
                    "J·x̂ = (ε/σ³)·x̂" + plain_where,
                    words(
                        m(r"\lVert\hat x\rVert^2 = n v/(v + \varepsilon)", "‖x̂‖² = nv/(v + ε)"),
                        ", so only ",
                        m(r"\varepsilon/\sigma^2", "ε/σ²"),
                        " of ",
                        m(r"\hat x", "x̂"),
                        " survives",
                    ),
                    d * xhat.T,
                    eps / sigma**3 * xhat.T,
                )
            )
        out.append(
            Identity(
                f"{tag}symmetric",
                r"J = J^{\top}" + where,
                "J = Jᵀ" + plain_where,
                words("every term of the textbook form is symmetric"),
                d,
                d.T,
            )
        )
    return out


def _rms_norm_steps(n: int | None) -> list[Identity]:
    assert n is not None
    x = symbol_row("x", n)
    out = []
    for eps, tag, eps_tex in ((EPS, "", r"\varepsilon"), (sympy.S.Zero, "eps0:", "0")):
        y, rms = rms_norm_row(x, eps)
        xhat = y
        d = derivative_matrix(y, list(x))
        where = rf"\quad(\varepsilon = {eps_tex})" if tag else r"\quad(\varepsilon > 0)"
        plain_where = "  (ε = 0)" if tag else "  (ε > 0)"
        out.append(
            Identity(
                f"{tag}jacobian",
                r"\frac{\partial y}{\partial x} = \frac{1}{r}\Bigl(I - \frac{\hat x\hat x^{\top}}{n}\Bigr),"
                r"\ r = \sqrt{\tfrac{1}{n}\textstyle\sum_i x_i^2 + \varepsilon},\ \hat x = x/r"
                + where,
                "∂y/∂x = (1/r)(I − x̂x̂ᵀ/n), r = √(mean(x²) + ε), x̂ = x/r" + plain_where,
                words(
                    "the quotient rule on ",
                    m("y = x/r", "y = x/r"),
                    " with ",
                    m(r"\partial r/\partial x_j = x_j/(n r)", "∂r/∂xⱼ = xⱼ/(nr)"),
                ),
                d,
                rms_norm_jacobian(xhat, rms),
            )
        )
        leak = sympy.zeros(n, 1) if tag else eps / rms**2 * xhat.T
        out.append(
            Identity(
                f"{tag}radial",
                (r"J\,x = 0" if tag else r"J\,x = \frac{\varepsilon}{r^{2}}\,\hat x") + where,
                ("J·x = 0" if tag else "J·x = (ε/r²)·x̂") + plain_where,
                words(
                    "scaling ",
                    m("x", "x"),
                    " scales ",
                    m("r", "r"),
                    " by the same factor when ",
                    m(r"\varepsilon = 0", "ε = 0"),
                    "; ",
                    m(r"\varepsilon", "ε"),
                    " breaks that",
                ),
                d * x.T,
                leak,
            )
        )
        out.append(
            Identity(
                f"{tag}symmetric",
                r"J = J^{\top}" + where,
                "J = Jᵀ" + plain_where,
                words("the identity minus an outer product of ", m(r"\hat x", "x̂"), " with itself"),
                d,
                d.T,
            )
        )
    return out


# --------------------------------------------------------------------------- every n

N = sympy.Symbol("n", integer=True, positive=True)
I_, J_, K_, M_ = sympy.symbols("i j k m", integer=True)
X = sympy.IndexedBase("x", real=True)
Y = sympy.IndexedBase("y", real=True)
XHAT = sympy.IndexedBase("xhat", real=True)
MU = sympy.Symbol("mu", real=True)
V = sympy.Symbol("v", nonnegative=True)
SIGMA = sympy.Symbol("sigma", positive=True)
R = sympy.Symbol("r", positive=True)
Q = sympy.Symbol("q", nonnegative=True)


def _eps_where(eps: sympy.Expr) -> Words:
    return (
        words(m(r"\varepsilon > 0", "ε > 0")) if eps != 0 else words(m(r"\varepsilon = 0", "ε = 0"))
    )


def layer_norm_context(eps: sympy.Expr) -> Context:
    """``y_i = x̂_i = (x_i − μ)/σ``, ``μ = Σ_k x_k/n``, ``v = Σ_k (x_k − μ)²/n``, ``σ = √(v + ε)``."""
    return Context(
        ranges={I_: (1, N), J_: (1, N)},
        definitions={
            Y: sympy.Lambda(I_, (X[I_] - MU) / SIGMA),
            XHAT: sympy.Lambda(I_, (X[I_] - MU) / SIGMA),
            MU: sympy.Sum(X[K_], (K_, 1, N)) / N,
            V: sympy.Sum((X[K_] - MU) ** 2, (K_, 1, N)) / N,
            SIGMA: sympy.sqrt(V + eps),
        },
    )


def layer_norm_jacobian_general(i: sympy.Expr, j: sympy.Expr) -> sympy.Expr:
    """``∂y_i/∂x_j = (δ_ij − 1/n − x̂_i x̂_j/n)/σ`` in index notation."""
    return (sympy.KroneckerDelta(i, j) - 1 / N - XHAT[i] * XHAT[j] / N) / SIGMA


def _layer_norm_where(eps: sympy.Expr) -> Words:
    return words(
        "where ",
        m(r"y_i = \hat x_i = (x_i - \mu)/\sigma", "yᵢ = x̂ᵢ = (xᵢ − μ)/σ"),
        ", ",
        m(r"\mu = \tfrac{1}{n}\sum_{k} x_k", "μ = Σₖ xₖ/n"),
        ", ",
        m(r"v = \tfrac{1}{n}\sum_{k} (x_k - \mu)^2", "v = Σₖ (xₖ − μ)²/n"),
        ", ",
        m(r"\sigma = \sqrt{v + \varepsilon}", "σ = √(v + ε)"),
        ", ",
        *_eps_where(eps),
        ", for ",
        m(r"i, j \in \{1, \dots, n\}", "i, j ∈ {1, …, n}"),
    )


def _layer_norm_proofs(eps: sympy.Expr, tag: str) -> list[Proof]:
    ctx = layer_norm_context(eps)
    where = _layer_norm_where(eps)
    d = sympy.KroneckerDelta
    c_i, c_j = X[I_] - MU, X[J_] - MU
    dsig = sympy.Derivative(SIGMA, X[J_])
    dv = sympy.Derivative(V, X[J_])
    centred = sympy.Sum(X[K_] - MU, (K_, 1, N))
    jac = Proof(
        f"{tag}jacobian",
        sympy.Derivative(Y[I_], X[J_]),
        layer_norm_jacobian_general(I_, J_),
        ctx,
        (
            Step("definition", sympy.Derivative(c_i / SIGMA, X[J_])),
            Step("quotient-rule", sympy.Derivative(c_i, X[J_]) / SIGMA - c_i * dsig / SIGMA**2),
            Step(
                "sum-rule",
                (d(I_, J_) - sympy.Sum(d(K_, J_), (K_, 1, N)) / N) / SIGMA - c_i * dsig / SIGMA**2,
            ),
            Step("delta-sifting", (d(I_, J_) - 1 / N) / SIGMA - c_i * dsig / SIGMA**2),
            Step("chain-rule", (d(I_, J_) - 1 / N) / SIGMA - c_i * dv / (2 * SIGMA**3)),
            Step(
                "sum-rule",
                (d(I_, J_) - 1 / N) / SIGMA
                - c_i
                / (N * SIGMA**3)
                * sympy.Sum(
                    (X[K_] - MU) * (d(K_, J_) - sympy.Sum(d(M_, J_), (M_, 1, N)) / N), (K_, 1, N)
                ),
            ),
            Step(
                "delta-sifting",
                (d(I_, J_) - 1 / N) / SIGMA - c_i / (N * SIGMA**3) * (c_j - centred / N),
            ),
            Step(
                "definition",
                (d(I_, J_) - 1 / N) / SIGMA - c_i * c_j / (N * SIGMA**3),
                words(
                    "the centred values sum to 0: ",
                    m(r"\sum_k (x_k - \mu) = 0", "Σₖ (xₖ − μ) = 0"),
                ),
            ),
            Step("algebra", (d(I_, J_) - 1 / N - (c_i / SIGMA) * (c_j / SIGMA) / N) / SIGMA),
            Step("definition", layer_norm_jacobian_general(I_, J_)),
        ),
        where,
    )
    out = [jac]
    row = sympy.Sum(sympy.Derivative(Y[I_], X[J_]), (J_, 1, N))
    xh_sum = sympy.Sum(XHAT[J_], (J_, 1, N))
    out.append(
        Proof(
            f"{tag}kills-ones",
            row,
            sympy.S.Zero,
            ctx,
            (
                Step(
                    "lemma",
                    sympy.Sum(layer_norm_jacobian_general(I_, J_), (J_, 1, N)),
                    lemma=jac.key,
                ),
                Step(
                    "linearity",
                    (sympy.Sum(d(I_, J_), (J_, 1, N)) - 1 - XHAT[I_] * xh_sum / N) / SIGMA,
                ),
                Step("delta-sifting", -XHAT[I_] * xh_sum / (N * SIGMA)),
                Step(
                    "definition",
                    sympy.S.Zero,
                    words(
                        "the normalised values sum to 0: ", m(r"\sum_j \hat x_j = 0", "Σⱼ x̂ⱼ = 0")
                    ),
                ),
            ),
            where,
        )
    )
    k_sum = sympy.Sum(XHAT[K_], (K_, 1, N))
    sq_sum = sympy.Sum(XHAT[K_] ** 2, (K_, 1, N))
    leak = eps / SIGMA**3 * XHAT[I_]
    out.append(
        Proof(
            f"{tag}kills-xhat" if eps == 0 else "xhat-leak",
            sympy.Sum(sympy.Derivative(Y[I_], X[K_]) * XHAT[K_], (K_, 1, N)),
            leak,
            ctx,
            (
                Step(
                    "lemma",
                    sympy.Sum(layer_norm_jacobian_general(I_, K_) * XHAT[K_], (K_, 1, N)),
                    lemma=jac.key,
                ),
                Step(
                    "linearity",
                    (
                        sympy.Sum(d(I_, K_) * XHAT[K_], (K_, 1, N))
                        - k_sum / N
                        - XHAT[I_] * sq_sum / N
                    )
                    / SIGMA,
                ),
                Step("delta-sifting", (XHAT[I_] - k_sum / N - XHAT[I_] * sq_sum / N) / SIGMA),
                Step(
                    "definition",
                    XHAT[I_] * (1 - V / SIGMA**2) / SIGMA,
                    words(
                        m(r"\sum_k \hat x_k = 0", "Σₖ x̂ₖ = 0"),
                        ", ",
                        m(r"\tfrac{1}{n}\sum_k \hat x_k^2 = v/\sigma^2", "Σₖ x̂ₖ²/n = v/σ²"),
                    ),
                ),
                Step("definition", leak, words(m(r"\sigma^2 - v = \varepsilon", "σ² − v = ε"))),
            ),
            where,
        )
    )
    out.append(_symmetric(jac, layer_norm_jacobian_general(I_, J_), tag))
    return out


def _symmetric(jac: Proof, formula: sympy.Expr, tag: str) -> Proof:
    """``∂y_i/∂x_j = ∂y_j/∂x_i`` from the proved Jacobian ``formula``, symmetric in i, j."""
    return Proof(
        f"{tag}symmetric",
        sympy.Derivative(Y[I_], X[J_]),
        sympy.Derivative(Y[J_], X[I_]),
        jac.context,
        (
            Step("lemma", formula, lemma=jac.key),
            Step(
                "lemma",
                sympy.Derivative(Y[J_], X[I_]),
                words("the right side is symmetric in ", m("i", "i"), " and ", m("j", "j")),
                lemma=jac.key,
            ),
        ),
        jac.where,
    )


def rms_norm_context(eps: sympy.Expr) -> Context:
    """``y_i = x̂_i = x_i/r``, ``q = Σ_k x_k²/n``, ``r = √(q + ε)``."""
    return Context(
        ranges={I_: (1, N), J_: (1, N)},
        definitions={
            Y: sympy.Lambda(I_, X[I_] / R),
            XHAT: sympy.Lambda(I_, X[I_] / R),
            Q: sympy.Sum(X[K_] ** 2, (K_, 1, N)) / N,
            R: sympy.sqrt(Q + eps),
        },
    )


def rms_norm_jacobian_general(i: sympy.Expr, j: sympy.Expr) -> sympy.Expr:
    """``∂y_i/∂x_j = (δ_ij − x̂_i x̂_j/n)/r`` in index notation."""
    return (sympy.KroneckerDelta(i, j) - XHAT[i] * XHAT[j] / N) / R


def _rms_norm_proofs(eps: sympy.Expr, tag: str) -> list[Proof]:
    ctx = rms_norm_context(eps)
    where = words(
        "where ",
        m(r"y_i = \hat x_i = x_i/r", "yᵢ = x̂ᵢ = xᵢ/r"),
        ", ",
        m(r"r = \sqrt{q + \varepsilon}", "r = √(q + ε)"),
        ", ",
        m(r"q = \tfrac{1}{n}\sum_k x_k^2", "q = Σₖ xₖ²/n"),
        ", ",
        *_eps_where(eps),
        ", for ",
        m(r"i, j \in \{1, \dots, n\}", "i, j ∈ {1, …, n}"),
    )
    d = sympy.KroneckerDelta
    dr = sympy.Derivative(R, X[J_])
    jac = Proof(
        f"{tag}jacobian",
        sympy.Derivative(Y[I_], X[J_]),
        rms_norm_jacobian_general(I_, J_),
        ctx,
        (
            Step("definition", sympy.Derivative(X[I_] / R, X[J_])),
            Step("quotient-rule", sympy.Derivative(X[I_], X[J_]) / R - X[I_] * dr / R**2),
            Step("chain-rule", d(I_, J_) / R - X[I_] * sympy.Derivative(Q, X[J_]) / (2 * R**3)),
            Step(
                "sum-rule",
                d(I_, J_) / R - X[I_] * sympy.Sum(X[K_] * d(K_, J_), (K_, 1, N)) / (N * R**3),
            ),
            Step("delta-sifting", d(I_, J_) / R - X[I_] * X[J_] / (N * R**3)),
            Step("algebra", (d(I_, J_) - (X[I_] / R) * (X[J_] / R) / N) / R),
            Step("definition", rms_norm_jacobian_general(I_, J_)),
        ),
        where,
    )
    dot = sympy.Sum(XHAT[K_] * X[K_], (K_, 1, N))
    leak = eps / R**2 * XHAT[I_]
    radial = Proof(
        f"{tag}radial",
        sympy.Sum(sympy.Derivative(Y[I_], X[K_]) * X[K_], (K_, 1, N)),
        leak,
        ctx,
        (
            Step(
                "lemma",
                sympy.Sum(rms_norm_jacobian_general(I_, K_) * X[K_], (K_, 1, N)),
                lemma=jac.key,
            ),
            Step(
                "linearity",
                (sympy.Sum(d(I_, K_) * X[K_], (K_, 1, N)) - XHAT[I_] * dot / N) / R,
            ),
            Step("delta-sifting", (X[I_] - XHAT[I_] * dot / N) / R),
            Step(
                "definition",
                leak,
                words(
                    m(r"\tfrac{1}{n}\sum_k \hat x_k x_k = q/r", "Σₖ x̂ₖxₖ/n = q/r"),
                    ", ",
                    m(r"r^2 - q = \varepsilon", "r² − q = ε"),
                ),
            ),
        ),
        where,
    )
    symmetric = _symmetric(jac, rms_norm_jacobian_general(I_, J_), tag)
    return [jac, radial, symmetric]


def _both(build: Any) -> Any:
    return lambda: [*build(EPS, ""), *build(sympy.S.Zero, "eps0:")]


LAYERNORM_JACOBIAN = Derivation(
    name="layernorm-jacobian",
    title="The LayerNorm Jacobian",
    build=_layer_norm_steps,
    sizes=(2, 3, 4),
    size_help="width of the normalised row",
    min_size=2,
    proofs=_both(_layer_norm_proofs),
)

RMSNORM_JACOBIAN = Derivation(
    name="rmsnorm-jacobian",
    title="The RMSNorm Jacobian",
    build=_rms_norm_steps,
    sizes=(2, 3, 4),
    size_help="width of the normalised row",
    min_size=1,
    proofs=_both(_rms_norm_proofs),
)


def _jacobian_at(
    general: Any, context: Context, x: Sequence[sympy.Rational]
) -> sympy.ImmutableMatrix:
    n = len(x)
    return sympy.ImmutableMatrix(
        n,
        n,
        lambda a, b: instantiate(
            general(I_, J_), context, {N: n}, {X: list(x)}, {I_: a + 1, J_: b + 1}
        ),
    )


def layer_norm_jacobian_at(
    x: Sequence[sympy.Rational], eps: sympy.Expr = EPS
) -> sympy.ImmutableMatrix:
    """The proved LayerNorm Jacobian ``(δ_ij − 1/n − x̂_i x̂_j/n)/σ`` exactly at a row ``x``."""
    return _jacobian_at(layer_norm_jacobian_general, layer_norm_context(eps), x)


def rms_norm_jacobian_at(
    x: Sequence[sympy.Rational], eps: sympy.Expr = EPS
) -> sympy.ImmutableMatrix:
    """The proved RMSNorm Jacobian ``(δ_ij − x̂_i x̂_j/n)/r`` exactly at a row ``x``."""
    return _jacobian_at(rms_norm_jacobian_general, rms_norm_context(eps), x)
