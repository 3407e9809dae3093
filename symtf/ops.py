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

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from fractions import Fraction
from typing import Any

import sympy

from symtf.errors import ShapeError

Mat = Any


def _check(cond: bool, message: str) -> None:
    if not cond:
        raise ShapeError(message)


def ones(xp: Any, rows: int, cols: int) -> Mat:
    """A ``rows x cols`` matrix of exact ones."""
    fast = getattr(xp, "ones", None)  # a backend may build it vectorised
    if fast is not None:
        return fast(rows, cols)
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


def linear(xp: Any, x: Mat, w: Mat, b: Mat | None = None, *, transposed: bool = False) -> Mat:
    """``x·W + b``: ``[n, d_in] -> [n, d_out]``; ``b`` is ``[1, d_out]``.

    With ``transposed``, ``x·Wᵀ + b`` (the ``W·x`` habit of column-vector
    articles, read with rows as tokens).
    """
    if transposed:
        w = xp.transpose(w)
    (n, d_in), (d_w, d_out) = xp.shape(x), xp.shape(w)
    _check(d_in == d_w, f"cannot multiply {n}x{d_in} by {d_w}x{d_out}")
    y = xp.matmul(x, w)
    if b is None:
        return y
    _check(xp.shape(b) == (1, d_out), f"bias of shape {xp.shape(b)} does not fit (1, {d_out})")
    return xp.add(y, stack_row(xp, b, n))


def scores(xp: Any, q: Mat, k: Mat, *, transpose_k: bool = True) -> Mat:
    """Raw attention scores ``Q·Kᵀ``: ``[n, d_k], [m, d_k] -> [n, m]``.

    With ``transpose_k=False``, ``Q·K`` as some articles (wrongly) write it:
    ``[n, d_k], [m, d_k] -> [n, d_k]``, defined only when ``d_k == m``.
    """
    if not transpose_k:
        _check(
            xp.shape(q)[1] == xp.shape(k)[0],
            f"Q·K without transposing K needs d_k == rows of K; found Q {xp.shape(q)}, K {xp.shape(k)}",
        )
        return xp.matmul(q, k)
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
    fast = getattr(xp, "causal_mask", None)  # a backend may do it vectorised
    if fast is not None:
        return fast(s)
    n, m = xp.shape(s)
    neg_inf = xp.neg_inf()
    return xp.from_rows(
        [[xp.entry(s, i, j) if j <= i else neg_inf for j in range(m)] for i in range(n)]
    )


def softmax(xp: Any, s: Mat) -> Mat:
    """Row-wise softmax; −∞ entries get exactly 0: ``[n, m] -> [n, m]``."""
    special = getattr(xp, "softmax_rows", None)
    if special is not None:  # a floating-point format: its own evaluation order (symtf.checking.framework)
        return special(s)
    e = xp.map(s, xp.exp)
    total = row_sum(xp, e)
    return xp.div(e, spread(xp, total, xp.shape(s)[1]))


def softmax_columns(xp: Any, s: Mat) -> Mat:
    """Column-wise softmax (each column sums to 1): ``[n, m] -> [n, m]``."""
    return xp.transpose(softmax(xp, xp.transpose(s)))


def zero_future(xp: Any, a: Mat) -> Mat:
    """Set every entry above the diagonal to exactly 0: shape unchanged."""
    fast = getattr(xp, "zero_future", None)  # a backend may do it vectorised
    if fast is not None:
        return fast(a)
    n, m = xp.shape(a)
    zero = xp.const(0)
    return xp.from_rows(
        [[xp.entry(a, i, j) if j <= i else zero for j in range(m)] for i in range(n)]
    )


def normalize_rows(xp: Any, a: Mat) -> Mat:
    """Divide each row by its sum: ``[n, m] -> [n, m]``."""
    total = row_sum(xp, a)
    for i in range(xp.shape(a)[0]):
        xp.require_nonzero(xp.entry(total, i, 0), f"the sum of row {i}")
    return xp.div(a, spread(xp, total, xp.shape(a)[1]))


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


def row_mean(xp: Any, x: Mat) -> Mat:
    """``[n, d] -> [n, 1]``: the mean of each row."""
    return xp.scale(row_sum(xp, x), 1 / xp.const(xp.shape(x)[1]))


def mean_square(xp: Any, x: Mat) -> Mat:
    """``[n, d] -> [n, 1]``: the mean of the squares of each row."""
    return xp.scale(row_sum(xp, xp.mul(x, x)), 1 / xp.const(xp.shape(x)[1]))


def centre(xp: Any, x: Mat, mean: Mat) -> Mat:
    """Each row of ``x`` minus its entry of the ``[n, 1]`` ``mean``."""
    return xp.sub(x, spread(xp, mean, xp.shape(x)[1]))


def row_variance(xp: Any, centered: Mat, *, unbiased: bool = False) -> Mat:
    """``[n, d] -> [n, 1]``: squared deviations of each centred row over ``d`` (or ``d − 1``)."""
    d = xp.shape(centered)[1]
    _check(not unbiased or d > 1, "the unbiased variance of a single feature is undefined")
    sq = row_sum(xp, xp.mul(centered, centered))
    return xp.scale(sq, 1 / xp.const(d - 1 if unbiased else d))


def row_root(xp: Any, v: Mat, eps: Any, what: str) -> Mat:
    """``√(v + ε)`` of each row of the ``[n, 1]`` ``v``.

    Raises:
        ModelError: When a row's ``v + ε`` is exactly 0 (``what`` and the row named).
    """
    n = xp.shape(v)[0]
    v_eps = xp.add(v, xp.scale(ones(xp, n, 1), eps))
    for i in range(n):
        xp.require_nonzero(xp.entry(v_eps, i, 0), f"{what} of row {i}")
    return xp.map(v_eps, xp.sqrt)


def normalise(xp: Any, centered: Mat, std: Mat, gamma: Mat, beta: Mat) -> Mat:
    """``centered / std · γ + β`` row by row; ``γ``, ``β`` are ``[1, d]``.

    Raises:
        ModelError: When a row's ``std`` is exactly 0 (a replayed printed 0).
    """
    n, d = xp.shape(centered)
    _check(xp.shape(gamma) == (1, d), f"gamma of shape {xp.shape(gamma)} does not fit (1, {d})")
    _check(xp.shape(beta) == (1, d), f"beta of shape {xp.shape(beta)} does not fit (1, {d})")
    for i in range(n):
        xp.require_nonzero(xp.entry(std, i, 0), f"the deviation of row {i}")
    normed = xp.div(centered, spread(xp, std, d))
    return xp.add(xp.mul(normed, stack_row(xp, gamma, n)), stack_row(xp, beta, n))


def layer_norm(
    xp: Any, x: Mat, gamma: Mat, beta: Mat, eps: Any, *, unbiased: bool = False
) -> NormParts:
    """LayerNorm of each row: ``(x − μ)/√(σ² + ε)·γ + β``; ``γ``, ``β`` are ``[1, d]``.

    ``[n, d] -> [n, d]``. The variance divides by ``d`` (biased, as every
    framework does), or by ``d − 1`` with ``unbiased``. The decoder templates
    add the same pieces as separate graph nodes (:mod:`symtf.graph.blocks`).

    Raises:
        ModelError: When a row's ``σ² + ε`` is exactly 0 (the row is named).
    """
    d = xp.shape(x)[1]
    _check(xp.shape(gamma) == (1, d), f"gamma of shape {xp.shape(gamma)} does not fit (1, {d})")
    _check(xp.shape(beta) == (1, d), f"beta of shape {xp.shape(beta)} does not fit (1, {d})")
    mean = row_mean(xp, x)
    centered = centre(xp, x, mean)
    var = row_variance(xp, centered, unbiased=unbiased)
    std = row_root(xp, var, eps, "the variance + eps")
    return NormParts(mean, centered, var, std, normalise(xp, centered, std, gamma, beta))


@dataclass(frozen=True)
class RMSParts:
    """RMSNorm and its worked pieces.

    Attributes:
        ms: ``[n, 1]`` mean of the squares of each row.
        rms: ``[n, 1]`` ``√(ms + ε)``.
        out: ``[n, d]`` ``γ ∘ x / rms + β``.
    """

    ms: Mat
    rms: Mat
    out: Mat


def rms_norm(xp: Any, x: Mat, gamma: Mat, beta: Mat, eps: Any) -> RMSParts:
    """RMSNorm of each row: ``x/√(mean(x²) + ε)·γ + β``: ``[n, d] -> [n, d]``.

    ``β`` is 0 in LLaMA-style models; it is kept for symmetry with LayerNorm.

    Raises:
        ModelError: When a row's ``mean(x²) + ε`` is exactly 0.
    """
    d = xp.shape(x)[1]
    _check(xp.shape(gamma) == (1, d), f"gamma of shape {xp.shape(gamma)} does not fit (1, {d})")
    _check(xp.shape(beta) == (1, d), f"beta of shape {xp.shape(beta)} does not fit (1, {d})")
    ms = mean_square(xp, x)
    rms = row_root(xp, ms, eps, "the mean square + eps")
    return RMSParts(ms, rms, normalise(xp, x, rms, gamma, beta))


def relu(xp: Any, x: Mat) -> Mat:
    """``max(0, x)`` element-wise, on a certified sign: shape unchanged."""
    return xp.map(x, xp.relu)


def gelu(xp: Any, x: Mat) -> Mat:
    """Exact GELU ``x·Φ(x) = x/2·(1 + erf(x/√2))`` element-wise: shape unchanged."""
    root2 = xp.sqrt(xp.const(2))
    return xp.map(x, lambda t: t / 2 * (1 + xp.erf(t / root2)))


#: The cubic coefficient of the tanh approximation of GELU (Hendrycks & Gimpel).
GELU_TANH_C = Fraction(44715, 1_000_000)


def gelu_tanh(xp: Any, x: Mat) -> Mat:
    """GELU's tanh form ``x/2·(1 + tanh(√(2/π)·(x + 0.044715·x³)))`` (GPT-2): shape unchanged."""
    k = xp.sqrt(xp.const(2) / xp.pi())
    c = xp.const(GELU_TANH_C)
    return xp.map(x, lambda t: t / 2 * (1 + xp.tanh(k * (t + c * t * t * t))))


def silu(xp: Any, x: Mat) -> Mat:
    """SiLU (swish) ``x·σ(x) = x/(1 + e^{−x})`` element-wise: shape unchanged."""
    return xp.map(x, lambda t: t / (1 + xp.exp(-t)))


def hadamard(xp: Any, a: Mat, b: Mat) -> Mat:
    """Element-wise product (a gate times what it gates): ``[n, f], [n, f] -> [n, f]``."""
    _check(xp.shape(a) == xp.shape(b), f"cannot multiply {xp.shape(a)} by {xp.shape(b)} entrywise")
    return xp.mul(a, b)


def swiglu(xp: Any, gate_pre: Mat, up: Mat) -> Mat:
    """SwiGLU's product ``SiLU(x·W1) ∘ (x·W3)``, given both: ``[n, f], [n, f] -> [n, f]``."""
    return hadamard(xp, silu(xp, gate_pre), up)


#: Element-wise activations by name (``swiglu`` is a gated product, see :func:`swiglu`).
ACTIVATIONS = {"relu": relu, "gelu": gelu, "gelu_tanh": gelu_tanh, "silu": silu}


def sinusoidal(xp: Any, n: int, d: int, base: Any = 10000) -> Mat:
    """Sinusoidal positions (Vaswani et al.): ``-> [n, d]``.

    ``P[p, 2i] = sin(p / base^{2i/d})`` and ``P[p, 2i+1] = cos(p / base^{2i/d})``,
    each an exact ``sin``/``cos`` of an exact angle.
    """
    rows = []
    for p in range(n):
        row = []
        for j in range(d):
            i2 = j - j % 2
            angle = xp.const(sympy.Integer(p) * _exact(base) ** sympy.Rational(-i2, d))
            row.append(xp.sin(angle) if j % 2 == 0 else xp.cos(angle))
        rows.append(row)
    return xp.from_rows(rows)


ROPE_PAIRS = ("adjacent", "halves")


def _exact(x: Any) -> sympy.Expr:
    """An exact SymPy number from an exact one or an int (never from text)."""
    if isinstance(x, sympy.Basic):
        return x
    if isinstance(x, int):
        return sympy.Integer(x)
    if isinstance(x, Fraction):
        return sympy.Rational(x.numerator, x.denominator)
    raise TypeError(f"expected an exact number, found {type(x).__name__}")


def rope(xp: Any, x: Mat, base: Any = 10000, pairs: str = "adjacent", offset: int = 0) -> Mat:
    """Rotary positions: rotate each pair of features of row ``p`` by ``p·θ_i``: ``[n, d] -> [n, d]``.

    ``θ_i = base^{−2i/d}`` for pair ``i``. Pairs are features ``(2i, 2i+1)``
    (``adjacent``, RoFormer) or ``(i, i + d/2)`` (``halves``, GPT-NeoX/LLaMA code).
    Each pair ``(a, b)`` becomes ``(a·cos − b·sin, a·sin + b·cos)``. Row ``p`` is at
    position ``p + offset``.
    """
    n, d = xp.shape(x)
    _check(d % 2 == 0, f"rotary positions need an even width, found {d}")
    _check(pairs in ROPE_PAIRS, f"rope pairs must be one of {ROPE_PAIRS}, found {pairs!r}")
    half = d // 2
    index = (
        [(2 * i, 2 * i + 1) for i in range(half)]
        if pairs == "adjacent"
        else [(i, i + half) for i in range(half)]
    )
    rows = []
    for p in range(n):
        row = [xp.const(0)] * d
        for i, (a, b) in enumerate(index):
            angle = xp.const(sympy.Integer(p + offset) * _exact(base) ** sympy.Rational(-2 * i, d))
            c, s = xp.cos(angle), xp.sin(angle)
            xa, xb = xp.entry(x, p, a), xp.entry(x, p, b)
            row[a] = xa * c - xb * s
            row[b] = xa * s + xb * c
        rows.append(row)
    return xp.from_rows(rows)


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


def tie_groups(n: int, cmp: Callable[[int, int], int | None]) -> list[list[int]] | None:
    """Indices ``0..n-1`` grouped by exact ties, largest first.

    Args:
        n: How many values.
        cmp: ``cmp(j, k)`` is the certified sign of ``value[j] − value[k]``, or ``None``
            when it cannot be decided.

    Returns:
        The groups, or ``None`` when some order cannot be decided.
    """
    remaining = list(range(n))
    groups: list[list[int]] = []
    while remaining:
        best = [remaining[0]]
        for j in remaining[1:]:
            c = cmp(j, best[0])
            if c is None:
                return None
            if c > 0:
                best = [j]
            elif c == 0:
                best.append(j)
        groups.append(best)
        remaining = [j for j in remaining if j not in best]
    return groups
