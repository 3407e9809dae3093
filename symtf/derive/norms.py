"""The Jacobians of LayerNorm and RMSNorm.

LayerNorm is symtf's own, the registry's worked pieces (``mean``, ``x − μ``,
``mean_square``, ``norm_root``, ``normalize``) with γ = 1, β = 0, run on a row of
symbols, with ε symbolic and with ε = 0; RMSNorm the same pieces without the
centring.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import sympy
from sympy.core.parameters import distribute

from symtf import ops
from symtf.backends import ExactBackend
from symtf.derive.core import Derivation, Identity, derivative_matrix, symbol_row

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
                "y = c/sigma with dc/dx = I - 11^T/n and dsigma/dx_j = c_j/(n sigma), "
                "differentiating ops.layer_norm",
                d,
                j,
            )
        )
        out.append(
            Identity(
                f"{tag}kills-ones",
                r"J\,\mathbf{1} = 0" + where,
                "J·1 = 0" + plain_where,
                "adding a constant to every x_i changes neither x - mu nor sigma",
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
                    "scaling x - mu leaves y unchanged when eps = 0",
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
                    "|xhat|^2 = n var/(var + eps), so only eps/sigma^2 of xhat survives",
                    d * xhat.T,
                    eps / sigma**3 * xhat.T,
                )
            )
        out.append(
            Identity(
                f"{tag}symmetric",
                r"J = J^{\top}" + where,
                "J = Jᵀ" + plain_where,
                "every term of the textbook form is symmetric",
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
                "quotient rule on y = x/r with dr/dx_j = x_j/(n r)",
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
                "scaling x scales r by the same factor when eps = 0; eps breaks that",
                d * x.T,
                leak,
            )
        )
        out.append(
            Identity(
                f"{tag}symmetric",
                r"J = J^{\top}" + where,
                "J = Jᵀ" + plain_where,
                "identity minus an outer product of xhat with itself",
                d,
                d.T,
            )
        )
    return out


LAYERNORM_JACOBIAN = Derivation(
    name="layernorm-jacobian",
    title="The LayerNorm Jacobian",
    build=_layer_norm_steps,
    sizes=(2, 3, 4),
    size_help="width of the normalised row",
    min_size=2,
)

RMSNORM_JACOBIAN = Derivation(
    name="rmsnorm-jacobian",
    title="The RMSNorm Jacobian",
    build=_rms_norm_steps,
    sizes=(2, 3, 4),
    size_help="width of the normalised row",
    min_size=1,
)
