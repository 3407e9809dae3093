"""Transformer steps, one small pure function each.

Every function takes the number system ``xp`` first (see :mod:`symtf.backends`)
and works the same in exact SymPy arithmetic, certified balls or float64.
Shapes follow the articles: rows are tokens.

Example:
    >>> import sympy
    >>> from symtf.backends import ExactBackend
    >>> xp = ExactBackend()
    >>> softmax(xp, xp.matrix(sympy.Matrix([[0, 0]])))
    Matrix([[1/2, 1/2]])
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from symtf.errors import ShapeError

Mat = Any


def _check(cond: bool, message: str) -> None:
    if not cond:
        raise ShapeError(message)


def ones(xp: Any, rows: int, cols: int) -> Mat:
    """A ``rows x cols`` matrix of exact ones."""
    one = xp.const(1)
    return xp.from_rows([[one] * cols for _ in range(rows)])


def row_sum(xp: Any, a: Mat) -> Mat:
    """Sum of each row: ``[n, m] -> [n, 1]``."""
    return xp.matmul(a, ones(xp, xp.shape(a)[1], 1))


def spread(xp: Any, col: Mat, cols: int) -> Mat:
    """Repeat a column across ``cols`` columns: ``[n, 1] -> [n, cols]``."""
    return xp.matmul(col, ones(xp, 1, cols))


def stack_row(xp: Any, row: Mat, rows: int) -> Mat:
    """Repeat a row down ``rows`` rows: ``[1, m] -> [rows, m]``."""
    return xp.matmul(ones(xp, rows, 1), row)


def embed(xp: Any, table: Mat, ids: Sequence[int]) -> Mat:
    """Look up embedding rows: ``[vocab, d] -> [seq, d]``."""
    n = xp.shape(table)[0]
    for t in ids:
        _check(0 <= t < n, f"token id {t} is outside the embedding table of {n} rows")
    return xp.take_rows(table, ids)


def add(xp: Any, a: Mat, b: Mat) -> Mat:
    """Element-wise sum (residual connections, positions): ``[n, m] + [n, m]``."""
    _check(xp.shape(a) == xp.shape(b), f"cannot add shapes {xp.shape(a)} and {xp.shape(b)}")
    return xp.add(a, b)


def linear(xp: Any, x: Mat, w: Mat, b: Mat | None = None) -> Mat:
    """``x·W + b``: ``[n, d_in] -> [n, d_out]``; ``b`` is ``[1, d_out]``."""
    (n, d_in), (d_w, d_out) = xp.shape(x), xp.shape(w)
    _check(d_in == d_w, f"cannot multiply {n}x{d_in} by {d_w}x{d_out}")
    y = xp.matmul(x, w)
    if b is None:
        return y
    _check(xp.shape(b) == (1, d_out), f"bias of shape {xp.shape(b)} does not fit (1, {d_out})")
    return xp.add(y, stack_row(xp, b, n))


def scores(xp: Any, q: Mat, k: Mat) -> Mat:
    """Raw attention scores ``Q·Kᵀ``: ``[n, d_k], [m, d_k] -> [n, m]``."""
    _check(
        xp.shape(q)[1] == xp.shape(k)[1],
        f"Q of shape {xp.shape(q)} and K of shape {xp.shape(k)} differ in d_k",
    )
    return xp.matmul(q, xp.transpose(k))


def scale(xp: Any, s: Mat, divisor: Any) -> Mat:
    """Divide every score by the scale (``√d_k`` by default): shape unchanged."""
    xp.require_nonzero(divisor, "the attention scale divisor")
    return xp.scale(s, 1 / divisor)


def causal_mask(xp: Any, s: Mat) -> Mat:
    """Set every entry above the diagonal to −∞ (token i sees tokens ≤ i)."""
    n, m = xp.shape(s)
    neg_inf = xp.neg_inf()
    return xp.from_rows(
        [[xp.entry(s, i, j) if j <= i else neg_inf for j in range(m)] for i in range(n)]
    )


def softmax(xp: Any, s: Mat) -> Mat:
    """Row-wise softmax; −∞ entries get exactly 0: ``[n, m] -> [n, m]``."""
    e = xp.map(s, xp.exp)
    total = row_sum(xp, e)
    return xp.div(e, spread(xp, total, xp.shape(s)[1]))


def attend(xp: Any, pattern: Mat, v: Mat) -> Mat:
    """Mix the values with the attention weights ``A·V``: ``[n, m], [m, d_v] -> [n, d_v]``."""
    return linear(xp, pattern, v)


def concat(xp: Any, heads: Sequence[Mat]) -> Mat:
    """Heads side by side: ``h × [n, d_head] -> [n, h·d_head]``."""
    rows = {xp.shape(h)[0] for h in heads}
    _check(len(rows) == 1, f"heads have different numbers of rows: {sorted(rows)}")
    return xp.hstack(list(heads))


@dataclass(frozen=True)
class NormParts:
    """LayerNorm and the worked pieces articles print.

    Attributes:
        mean: ``[n, 1]`` row means.
        centered: ``[n, d]`` x minus its row mean.
        var: ``[n, 1]`` biased variance (divided by d, not d − 1).
        std: ``[n, 1]`` ``√(var + ε)``.
        out: ``[n, d]`` ``γ ∘ centered / std + β``.
    """

    mean: Mat
    centered: Mat
    var: Mat
    std: Mat
    out: Mat


def layer_norm(xp: Any, x: Mat, gamma: Mat, beta: Mat, eps: Any) -> NormParts:
    """LayerNorm of each row: ``(x − μ)/√(σ² + ε)·γ + β``; ``γ``, ``β`` are ``[1, d]``.

    Raises:
        ModelError: When a row's ``σ² + ε`` is exactly 0 (the row is named).
    """
    n, d = xp.shape(x)
    _check(xp.shape(gamma) == (1, d), f"gamma of shape {xp.shape(gamma)} does not fit (1, {d})")
    _check(xp.shape(beta) == (1, d), f"beta of shape {xp.shape(beta)} does not fit (1, {d})")
    inv_d = 1 / xp.const(d)
    mean = xp.scale(row_sum(xp, x), inv_d)
    centered = xp.sub(x, spread(xp, mean, d))
    var = xp.scale(row_sum(xp, xp.mul(centered, centered)), inv_d)
    var_eps = xp.add(var, xp.scale(ones(xp, n, 1), eps))
    for i in range(n):
        xp.require_nonzero(xp.entry(var_eps, i, 0), f"the variance + eps of row {i}")
    std = xp.map(var_eps, xp.sqrt)
    normed = xp.div(centered, spread(xp, std, d))
    out = xp.add(xp.mul(normed, stack_row(xp, gamma, n)), stack_row(xp, beta, n))
    return NormParts(mean, centered, var, std, out)


def relu(xp: Any, x: Mat) -> Mat:
    """``max(0, x)`` element-wise, on a certified sign."""
    return xp.map(x, xp.relu)


def gelu(xp: Any, x: Mat) -> Mat:
    """Exact GELU ``x·Φ(x) = x/2·(1 + erf(x/√2))`` element-wise."""
    root2 = xp.sqrt(xp.const(2))
    return xp.map(x, lambda t: t / 2 * (1 + xp.erf(t / root2)))


ACTIVATIONS = {"relu": relu, "gelu": gelu}


def argmax(xp: Any, row: Mat) -> tuple[int, ...]:
    """Indices of the largest entries of a ``[1, m]`` row; more than one means a tie.

    Raises:
        Undecided: When balls cannot yet separate two entries.
    """
    m = xp.shape(row)[1]
    best = [0]
    for j in range(1, m):
        c = xp.sign(xp.entry(row, 0, j) - xp.entry(row, 0, best[0]))
        if c > 0:
            best = [j]
        elif c == 0:
            best.append(j)
    return tuple(best)
