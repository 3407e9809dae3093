"""Element-wise functions on midpoint–radius matrices: ``exp`` by a reduction
``x = k·ln2 + s`` and a Taylor polynomial with a proven error bound, wide balls by
``e^m·(cosh ρ ± sinh ρ)``, ``sqrt``, ``tanh`` as ``1 − 2/(e^{2x} + 1)``, and every other
entry by python-flint, one entry at a time. No libm is trusted.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from fractions import Fraction

import numpy as np
from flint import arb, ctx

from symtf.backends.midrad.arithmetic import (
    ETA,
    FLINT_PREC,
    INF,
    MR,
    add,
    clean,
    div,
    down,
    float_up,
    from_arb,
    mul,
    neg,
    rounding_error,
    to_arb,
    up,
    zero_d,
)

# ln 2 = C1 + C2 + δ with C1 of 32 significant bits (k·C1 is exact for |k| < 2^21).
_LN2_PREC = 256
ctx_saved = ctx.prec
ctx.prec = _LN2_PREC
_ln2 = arb(2).log()
_C1 = round(float(_ln2) * 2**32) / 2**32
_C2 = float(_ln2 - _C1)
_DELTA = float(abs(_ln2 - _C1 - _C2).upper()) * 2 + 2.0**-200  # >= |ln2 − C1 − C2|
ctx.prec = ctx_saved
del ctx_saved
_INV_LN2 = 1 / math.log(2)  # only chooses k: any integer k is correct

#: Taylor degree of exp on |s| <= 0.36 (``k = round(m/ln2)`` leaves ``|s| <= ln2/2 + tiny``).
_EXP_N = 13
_EXP_S = 0.36
_EXP_C = np.array([1 / math.factorial(i) for i in range(_EXP_N + 1)])


def _exp_eps() -> float:
    """A float bounding ``|p̃(s) − e^s|`` for ``|s| <= 0.36``.

    ``p̃`` is Horner's rule in binary64 on the coefficients ``c_i = fl(1/i!)``.
    Horner's rounding error is at most ``γ_{2N}·Σ|c_i||s|^i <= γ_{2N}(1+u)e^{|s|}``
    (Higham, eq. 5.3, with or without FMA); the coefficients' own error is at most
    ``u·e^{|s|}``; the Taylor remainder at most ``|s|^{N+1}/(N+1)!·e^{|s|}``.
    ``e^{0.36} < 144/100``.
    """
    u = Fraction(1, 2**53)
    g = 2 * _EXP_N * u / (1 - 2 * _EXP_N * u)
    tail = Fraction(36, 100) ** (_EXP_N + 1) / math.factorial(_EXP_N + 1)
    return float_up(Fraction(144, 100) * (g * (1 + u) + u + tail))


_EXP_EPS = _exp_eps()


def mr_exp(a: MR) -> MR:
    """Certified ``exp`` of every entry.

    Fast path, for ``-740 <= m − ρ``, ``m + ρ <= 709`` and ``ρ <= 1/4`` (and then
    ``|s| <= 0.36``, ``σ <= 1/2``):
    ``k = round(m/ln2)``, ``s = fl(fl(m − k·C1) − fl(k·C2))`` with
    ``|s − (m − k·ln2)| <= E = sp(t) + sp(k·C2) + sp(s) + |k|·δ`` (three
    roundings and the error of ``C1 + C2``). Every ``x`` of the ball is
    ``k·ln2 + y`` with ``|y − s| <= σ = ρ + E``, and for ``σ <= 1``
    ``|e^y − p̃(s)| <= e^s·(e^σ − 1) + ε <= (p̃(s) + ε)·σ·(1 + σ) + ε``
    (``e^σ − 1 <= σ + σ²`` on ``[0, 1]``). The result is scaled by ``2^k`` with
    ``ldexp`` (exact unless subnormal; ``4·eta`` covers that rounding).
    Entries below ``-740`` enclose ``[0, 2^-1060]``; exact −∞ gives exactly 0;
    everything else goes through python-flint.
    """
    m, rho = np.broadcast_arrays(a.mid, a.rad)
    fast = (m - rho >= -740.0) & (m + rho <= 709.0) & (rho <= 0.25)
    tiny = (m + rho < -740.0) & np.isfinite(rho)
    masked = np.isneginf(m) & (rho == 0)
    mm = np.where(fast, m, 0.0)
    k = np.rint(mm * _INV_LN2)
    t = mm - k * _C1
    kc2 = k * _C2
    s = t - kc2
    e = up(
        up(up(rounding_error(t) + rounding_error(kc2)) + rounding_error(s)) + up(np.abs(k) * _DELTA)
    )
    sigma = up(np.where(fast, rho, 0.0) + e)
    fast &= (np.abs(s) <= _EXP_S) & (sigma <= 0.5)
    p = np.full_like(s, _EXP_C[_EXP_N])
    for c in _EXP_C[_EXP_N - 1 :: -1]:
        p = p * s + c
    big = up(up(p + _EXP_EPS) * up(sigma * up(1.0 + sigma)))
    r = up(big + _EXP_EPS)
    ki = k.astype(np.int64)
    mid = np.ldexp(p, ki)
    rad = up(np.ldexp(r, ki) + 4 * ETA)
    mid = np.where(fast, mid, np.where(tiny | masked, 0.0, 0.0))
    rad = np.where(fast, rad, np.where(masked, 0.0, np.where(tiny, 2.0**-1060, INF)))
    rest = ~(fast | tiny | masked)
    wide = rest & (m >= -740.0) & (m <= 709.0) & (rho <= 709.0)  # finite, and a wide ball
    if np.any(wide):
        mid, rad = mid.copy(), rad.copy()
        mid[wide], rad[wide] = _exp_wide(m[wide], rho[wide])
        rest &= ~wide
    if np.any(rest):
        mid, rad = mid.copy(), rad.copy()
        _flint_fill(m, rho, mid, rad, rest, arb.exp)
    return clean(mid, rad)


def _exp_wide(m: np.ndarray, rho: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """``exp`` of wide balls ``m ± ρ`` from three exact points.

    ``e^{m±ρ} = e^m·(cosh ρ ± sinh ρ)``, so every value lies in
    ``e^m·cosh ρ ± e^m·sinh ρ``. ``e^m``, ``e^ρ`` and ``e^{−ρ}`` are enclosed at
    the exact floats ``m``, ``ρ``, ``−ρ`` (radius 0, the fast path), ``cosh`` and
    ``sinh`` follow by certified ``+``, ``−`` and ``×½``, and the radius adds an
    upper bound of ``|e^m|·|sinh ρ|``.
    """
    zero = np.zeros_like(m)
    e_m = mr_exp(MR(m, zero))
    e_p = mr_exp(MR(rho, zero))
    e_n = mr_exp(MR(-rho, zero))
    half = MR(zero_d(0.5), zero_d(0.0))
    cosh = mul(add(e_p, e_n), half)
    sinh = mul(add(e_p, neg(e_n)), half)
    centre = mul(e_m, cosh)
    s_up = up(np.abs(sinh.mid) + sinh.rad)
    m_up = up(np.abs(e_m.mid) + e_m.rad)
    return centre.mid, up(centre.rad + up(m_up * s_up))


def mr_sqrt(a: MR) -> MR:
    """Certified ``sqrt``: ``|√x − √m| <= ρ/√m`` for ``|x − m| <= ρ < m``.

    IEEE's ``sqrt`` is correctly rounded; ``down(fl(√m)) <= √m``. A ball that
    reaches 0 or below goes through python-flint (which gives NaN balls, hence
    unknown entries, for negative arguments).
    """
    m, rho = np.broadcast_arrays(a.mid, a.rad)
    fast = (m > rho) & np.isfinite(m) & np.isfinite(rho)
    zero = (m == 0) & (rho == 0)
    s = np.sqrt(np.where(fast, m, 1.0))
    r = up(up(rho / down(s)) + rounding_error(s))
    mid = np.where(fast, s, 0.0)
    rad = np.where(fast, r, 0.0)
    rest = ~(fast | zero)
    if np.any(rest):
        mid, rad = mid.copy(), rad.copy()
        _flint_fill(m, rho, mid, rad, rest, arb.sqrt)
    return clean(mid, rad)


def mr_tanh(a: MR) -> MR:
    """Certified ``tanh`` as ``1 − 2/(e^{2x} + 1)``: ``x`` occurs once, so each step's
    enclosure (:func:`mr_exp`, :func:`add`, :func:`div`) bounds the whole range."""
    two = MR(zero_d(2.0), zero_d(0.0))
    one = MR(zero_d(1.0), zero_d(0.0))
    e = mr_exp(mul(two, a))
    return add(one, neg(div(two, add(e, one))))


def _flint_fill(
    m: np.ndarray,
    rho: np.ndarray,
    mid: np.ndarray,
    rad: np.ndarray,
    where: np.ndarray,
    fn: Callable[[arb], arb],
) -> None:
    """Fill the ``where`` entries of ``mid``/``rad`` with python-flint's enclosure of ``fn``.

    Unknown entries (infinite radius, NaN midpoint) stay unknown without a call.
    """
    unknown = where & (np.isnan(m) | ~np.isfinite(rho))
    if np.any(unknown):
        mid[unknown], rad[unknown] = 0.0, INF
        where = where & ~unknown
    saved = ctx.prec
    ctx.prec = FLINT_PREC
    try:
        for idx in zip(*np.nonzero(where), strict=True):
            x = to_arb(float(m[idx]), float(rho[idx]))
            mid[idx], rad[idx] = from_arb(fn(x))
    finally:
        ctx.prec = saved


def flint_map(a: MR, fn: Callable[[arb], arb]) -> MR:
    m, rho = np.broadcast_arrays(a.mid, a.rad)
    mid = np.empty(m.shape)
    rad = np.empty(m.shape)
    _flint_fill(m, rho, mid, rad, np.ones(m.shape, dtype=bool), fn)
    return clean(mid, rad)
