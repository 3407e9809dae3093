"""Midpoint–radius arithmetic on float64 arrays: certified enclosures at BLAS speed.

A matrix is a pair ``(mid, rad)`` of float64 arrays, ``rad >= 0``, meaning that
every exact entry lies in ``[mid - rad, mid + rad]`` (an entry with ``mid = -inf``
and ``rad = 0`` is exactly −∞, the causal mask; ``rad = inf`` means "unknown").
:class:`MidradBackend` implements the backend protocol
(:mod:`symtf.backends.protocol`), so every op of the registry runs on it unchanged; scalars (``const``, ``entry``) are
python-flint balls, as in :class:`~symtf.backends.BallBackend`.

Rounding model. numpy's ``+ - * /``, ``sqrt`` and ``ldexp`` on float64 are IEEE
754 binary64 operations in round-to-nearest. For a real ``z`` and a float
``f = fl(z)`` that is a neighbour of ``z`` (round-to-nearest or any faithful
rounding):

- ``nextafter(f, +inf) >= z`` and ``nextafter(f, -inf) <= z``; :func:`up` and
  :func:`down` give floats at least that far out (a safe inflation factor,
  ``f·(1 ± 2^-51) ± eta``, much cheaper than numpy's ``nextafter``);
- ``|f − z| <= u·|f| + eta/2`` (``u = 2^-53``, ``eta = 2^-1074`` the smallest
  subnormal; the ``eta`` term covers underflow), bounded by :func:`_sp`.

Every radius is computed from non-negative terms, with ``up`` applied after
each operation, so by monotonicity the computed radius is an upper bound of
the real one: this is the "upward rounding simulated" that the a-priori bounds
need, without changing the FPU's rounding mode.

Matrix products (Rump, "Fast interval matrix multiplication", Numer. Algorithms
61, 2012; Ogita, Rump & Oishi). For ``A ∈ ⟨Am, Ar⟩`` (``n`` columns) and
``B ∈ ⟨Bm, Br⟩``, with ``C = fl(Am·Bm)`` computed by BLAS in any order of
summation, blocked or not, with or without FMA:

1. ``|A·B − Am·Bm| <= |Am|·Br + Ar·|Bm| + Ar·Br`` entrywise, for every ``A``, ``B``
   in the balls (the classical midpoint–radius product).
2. ``|fl(Am·Bm) − Am·Bm| <= γ_n·|Am|·|Bm| + n·eta`` with ``γ_n = n·u/(1 − n·u)``,
   ``u = 2^-53``: each of the ``n`` products (or FMAs) is
   ``ab(1+δ) + ε`` with ``|δ| <= u``, ``|ε| <= eta/2``; each addition is
   ``(x+y)(1+δ)`` (additions are exact in the subnormal range); a term passes
   through at most ``n`` roundings, so the relative parts sum to ``γ_n·Σ|a_i b_i|``
   (Higham, *Accuracy and Stability*, Lemma 3.1/Thm 3.5) and the ``n`` underflow
   parts to at most ``n·(eta/2)·(1+u)^n <= n·eta`` (as ``n·u < 1/2``).
3. Adding 1 and 2 and enlarging, the error is at most
   ``Ar'·Br' + |Am|·Br + n·eta`` with ``Ar' = γ_n·|Am| + Ar`` and
   ``Br' = |Bm| + Br`` (expanding ``Ar'·Br'`` gives every term of 1 and 2 and
   one more, ``γ_n·|Am|·Br``, which is non-negative).
4. The products ``Ar'·Br'`` and ``|Am|·Br`` of non-negative matrices are
   themselves computed by BLAS: by 2, a real product ``P·Q >= 0`` satisfies
   ``P·Q <= (fl(P·Q) + n·eta) / (1 − γ_n)``.

5. For large products the two radius products run in binary32 (single-precision BLAS,
   about twice as fast): their operands are rounded up to binary32 (:func:`up32`),
   and 2 holds there with ``u32 = 2^-24`` and ``eta32 = 2^-149``, so a real product
   ``P·Q >= 0`` is at most ``(fl32(P·Q) + n·eta32) / (1 − γ32_n)``; the radius is then
   ``(fl32(R1) + fl32(R2) + 3n·eta32)·k32 + eta`` (``3n·eta32`` covers the ``n·eta`` of 2
   as well). Their relative overestimate, about ``n·2^-24``, is far below what any
   radius is compared with; the midpoint product stays binary64.

So ``rad = (fl(R1) + fl(R2) + 3n·eta)·k + eta`` with ``R1``, ``R2`` the BLAS
products of 4 and ``k >= 1/((1 − γ_n)(1 − u)^3)`` covering the three roundings of
that line (see :func:`matmul`)
(``R2`` is skipped when ``Br = 0``, as for weights read from files: one BLAS
call for the midpoint and one for the radius). The assumption is that of Rump's
method: the BLAS computes each entry as a sum of products by binary64 additions,
multiplications or FMAs in round-to-nearest (true of OpenBLAS, MKL, Accelerate;
not of Strassen-type algorithms or reduced-precision modes).

Element-wise functions: ``+ − ×  ÷`` and ``sqrt`` are vectorised with the error
terms above; ``exp`` (the softmax's, the most frequent) by a reduction
``x = k·ln2 + s`` and a degree-13 Taylor polynomial with a proven error bound
(see :func:`_exp`), wide balls by ``e^m·(cosh ρ ± sinh ρ)`` from three exact
points (:func:`_exp_wide`); ``tanh`` as ``1 − 2/(e^{2x} + 1)``; ``erf``, ``sin``,
``cos``, ``log`` and every entry outside these ranges by python-flint on each
entry (``arb(mid, rad)``). No libm is trusted.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from fractions import Fraction
from functools import lru_cache
from typing import Any

import numpy as np
import sympy
from flint import arb, ctx, fmpq
from numpy.typing import NDArray

from symtf.backends.base import BaseBackend
from symtf.backends.certify import ball_sign
from symtf.errors import ModelError

#: Unit roundoff of binary64, round-to-nearest.
U = 2.0**-53
#: Smallest positive subnormal binary64 number.
ETA = 2.0**-1074
#: Precision (bits) of the python-flint balls used for scalars and element-wise functions.
FLINT_PREC = 80

_INF = np.inf


_UP = 1 + 2.0**-51
_DOWN = 1 - 2.0**-51


def up(x: Any) -> Any:
    """A float ``>= nextafter(x, +inf)`` for ``x >= 0``: an upper bound of any real rounding to ``x``.

    ``fl(fl(x·(1 + 2^-51)) + eta)``: for a normal ``x`` in ``[2^e, 2^(e+1))`` the
    product is ``x + x·2^-51 >= x + 2·ulp(x)``, so even rounded it is at least the
    next float; for a subnormal ``x`` (or 0) the product rounds to at least ``x``
    and adding ``eta`` is exact. Two multiplications' worth of work, where numpy's
    ``nextafter`` costs ~20 times more.
    """
    return x * _UP + ETA


#: Unit roundoff and smallest positive subnormal of binary32 (radius products, :func:`matmul`).
U32 = 2.0**-24
ETA32 = 2.0**-149
_UP32 = 1 + 2.0**-22


def up32(x: Any) -> Any:
    """A float32 array ``>=`` the float64 array ``x >= 0``, entry by entry.

    ``t = fl(fl(x·(1 + 2^-22)) + 2^-149)``, then rounded to nearest binary32. A normal
    result ``f`` has ``f >= t·(1 − 2^-24) >= x·(1 + 2^-22)(1 − 2^-53)^2(1 − 2^-24) >= x``; a
    subnormal one is at most ``2^-150`` below ``t``, and ``t >= x + 2^-149 − 2^-150`` (the
    float64 sum loses at most ``u·t``, far below ``2^-150`` there). Beyond the binary32
    range the result is ``inf`` (an unknown radius, still an upper bound).
    """
    return np.asarray(x * _UP32 + ETA32).astype(np.float32)


def down(x: Any) -> Any:
    """A float ``<= nextafter(x, -inf)`` for ``x > 0`` (and ``<= 0`` for ``x <= 0``)."""
    return x * _DOWN - ETA


def _float_up(q: Fraction) -> float:
    """A float ``>= q``."""
    f = float(q)  # correctly rounded
    while Fraction(f) < q:
        f = math.nextafter(f, math.inf)
    return f


@lru_cache(maxsize=256)
def gamma(n: int) -> float:
    """A float ``>= γ_n = n·u / (1 − n·u)``."""
    nu = Fraction(n) * Fraction(1, 2**53)
    if nu >= Fraction(1, 2):
        raise ValueError(f"inner dimension {n} too large for the a-priori bound")
    return _float_up(nu / (1 - nu))


@lru_cache(maxsize=256)
def inv_one_minus_gamma(n: int) -> float:
    """A float ``>= 1 / (1 − γ_n)``."""
    nu = Fraction(n) * Fraction(1, 2**53)
    g = nu / (1 - nu)
    return _float_up(1 / (1 - g))


def _sp(x: NDArray[np.float64]) -> NDArray[np.float64]:
    """A bound on the error of one round-to-nearest operation whose result is ``x``.

    The error is at most ``u·|x| + eta/2`` (``fl(z) = z/(1+δ)``, ``|δ| <= u``, plus
    half a subnormal step when the result underflows); ``fl(|x|·2^-52) + 2·eta``
    bounds it (the product is exact unless it underflows, losing at most ``eta/2``).
    """
    return np.abs(x) * 2.0**-52 + 2 * ETA


class MR:
    """A midpoint–radius matrix (2-D) or scalar (0-D).

    Args:
        mid: Midpoints, float64.
        rad: Radii, float64, ``>= 0`` (same shape as ``mid``, or broadcastable).
    """

    __slots__ = ("_abs", "_abs32", "mid", "rad")
    __array_priority__ = 1000  # ndarray ⊕ MR defers to MR's reflected operators

    def __init__(self, mid: np.ndarray, rad: np.ndarray) -> None:
        self.mid = mid
        self.rad = rad
        self._abs: np.ndarray | None = None
        self._abs32: np.ndarray | None = None

    @property
    def shape(self) -> tuple[int, ...]:
        return self.mid.shape

    def absmid(self) -> np.ndarray:
        """``|mid|``, computed once (weights are multiplied many times)."""
        if self._abs is None:
            self._abs = np.abs(self.mid)
        return self._abs

    def absmid32(self) -> np.ndarray:
        """A float32 upper bound of ``|mid|`` (:func:`up32`), computed once."""
        if self._abs32 is None:
            self._abs32 = up32(self.absmid())
        return self._abs32

    def exact(self) -> bool:
        """Whether every entry is exact (zero radius)."""
        return not np.any(self.rad)

    def __getitem__(self, ij: tuple[int, int]) -> arb:
        i, j = ij
        return to_arb(float(self.mid[i, j]), float(self.rad[i, j]))

    def tolist(self) -> list[list[arb]]:
        return [[self[i, j] for j in range(self.mid.shape[1])] for i in range(self.mid.shape[0])]

    def __repr__(self) -> str:
        return f"MR(mid={self.mid!r}, rad={self.rad!r})"

    # arithmetic (element-wise, broadcasting); scalars may be ints, Fractions or arbs
    def __add__(self, other: Any) -> MR:
        return add(self, as_mr(other))

    __radd__ = __add__

    def __sub__(self, other: Any) -> MR:
        return add(self, neg(as_mr(other)))

    def __rsub__(self, other: Any) -> MR:
        return add(as_mr(other), neg(self))

    def __mul__(self, other: Any) -> MR:
        return mul(self, as_mr(other))

    __rmul__ = __mul__

    def __truediv__(self, other: Any) -> MR:
        return div(self, as_mr(other))

    def __rtruediv__(self, other: Any) -> MR:
        return div(as_mr(other), self)

    def __neg__(self) -> MR:
        return neg(self)


# ----------------------------------------------------------------------------- conversions


def to_arb(mid: float, rad: float) -> arb:
    """The ball ``[mid ± rad]`` (``mid = -inf, rad = 0`` is −∞; an infinite radius is unknown)."""
    if rad == 0 and math.isinf(mid):
        return arb(mid)
    if not (math.isfinite(mid) and math.isfinite(rad)):
        return arb(0, math.inf)
    return arb(mid, rad)


def from_arb(x: arb) -> tuple[float, float]:
    """A float midpoint and an upper-bound float radius of a python-flint ball."""
    m = float(x.mid())
    r = float(x.rad())
    if not x.is_finite():
        if r == 0 and math.isinf(m):
            return m, 0.0
        return 0.0, math.inf
    if not math.isfinite(m):  # beyond the float range: unknown
        return 0.0, math.inf
    if x.is_exact() and arb(m) == x:
        return m, 0.0
    # |x.mid() − m| <= spacing(m) (the conversion rounds to a neighbour), and the
    # radius read in nearest rounding is pushed up one float.
    sp = float(np.spacing(abs(m)))
    return m, math.nextafter(math.nextafter(r, math.inf) + sp, math.inf)


def from_rational(p: int, q: int) -> tuple[float, float]:
    """A float enclosure of ``p/q`` (exact when ``p/q`` is a float)."""
    try:
        f = p / q  # Python's int/int true division is correctly rounded
    except OverflowError:
        return 0.0, math.inf
    if math.isinf(f):
        return 0.0, math.inf
    if Fraction(f) == Fraction(p, q):
        return f, 0.0
    return f, float(np.spacing(abs(f)))


def _zero_d(x: float) -> np.ndarray:
    """``x`` as a 0-D float64 array: the midpoint or radius of a scalar :class:`MR`."""
    return np.array(x, dtype=np.float64)


def as_mr(x: Any) -> MR:
    """A midpoint–radius value from an MR, an int, a Fraction, a float array or an arb."""
    if isinstance(x, MR):
        return x
    if isinstance(x, arb):
        m, r = from_arb(x)
    elif isinstance(x, bool):
        raise TypeError("a bool is not a number")
    elif isinstance(x, int):
        m, r = from_rational(x, 1)
    elif isinstance(x, Fraction):
        m, r = from_rational(x.numerator, x.denominator)
    elif isinstance(x, sympy.Rational):
        m, r = from_rational(int(x.p), int(x.q))
    else:
        raise TypeError(f"cannot use {type(x).__name__} in midpoint–radius arithmetic")
    return MR(_zero_d(m), _zero_d(r))


def _clean(mid: np.ndarray, rad: np.ndarray) -> MR:
    """Entries whose midpoint or radius went non-finite become unknown (0 ± inf).

    An exact infinity (``mid = ±inf``, ``rad = 0``) is kept: it is the causal mask.
    """
    if np.isfinite(mid + rad).all():  # the common case, in one pass
        return MR(mid, rad)
    bad = np.isnan(mid) | ~np.isfinite(rad) | (np.isinf(mid) & (rad != 0))
    if np.any(bad):
        mid = np.where(bad, 0.0, mid)
        rad = np.where(bad, _INF, rad)
    return MR(mid, rad)


# ----------------------------------------------------------------------------- arithmetic


def neg(a: MR) -> MR:
    return MR(-a.mid, a.rad)


def add(a: MR, b: MR) -> MR:
    """``a + b``: radius ``ar + br + err(c)``, rounded up."""
    c = a.mid + b.mid
    r = up(up(a.rad + b.rad) + _sp(c))
    return _clean(c, r)


def mul(a: MR, b: MR) -> MR:
    """``a ∘ b``: radius ``|am|·br + ar·(|bm| + br) + err(c)``, rounded up."""
    c = a.mid * b.mid
    t1 = up(np.abs(a.mid) * b.rad)
    t2 = up(a.rad * up(np.abs(b.mid) + b.rad))
    r = up(up(t1 + t2) + _sp(c))
    return _clean(c, r)


def div(a: MR, b: MR) -> MR:
    """``a / b`` for ``|bm| > br``: radius ``(ar + |am/bm|·br) / (|bm| − br) + err(c)``.

    ``|x/y − am/bm| = |(x−am)·bm − am·(y−bm)| / |y·bm| <= (ar + |am/bm|·br) / (|bm| − br)``;
    ``|am/bm| <= up(|c|)``; the denominator is rounded down. A divisor ball that
    contains 0 gives an unknown entry.
    """
    c = a.mid / b.mid
    q = up(np.abs(c))
    num = up(a.rad + up(q * b.rad))
    den = down(np.abs(b.mid) - b.rad)
    r = up(up(num / den) + _sp(c))
    r = np.where(den > 0, r, _INF)
    return _clean(c, r)


def matmul(a: MR, b: MR) -> MR:
    """The certified product of midpoint–radius matrices (see the module docstring)."""
    n = a.mid.shape[1]
    if n == 0:
        z = np.zeros((a.mid.shape[0], b.mid.shape[1]))
        return MR(z, z.copy())
    g = gamma(n)
    c = a.mid @ b.mid
    am = a.absmid()
    ar_ = up(g * am)
    if np.any(a.rad):
        ar_ = up(ar_ + a.rad)
    b_exact = not np.any(b.rad)
    big = a.mid.shape[0] * n * b.mid.shape[1] >= _SINGLE_MIN_WORK
    if big and n <= _SINGLE_MAX_N:  # the radius products in binary32 (see the docstring)
        br32 = b.absmid32() if b_exact else up32(up(b.absmid() + b.rad))
        p = (up32(ar_) @ br32).astype(np.float64)
        if not b_exact:
            p = p + (up32(am) @ up32(b.rad)).astype(np.float64)
        return _clean(c, (p + 3 * n * ETA32) * _product_factor32(n) + ETA)
    k = _product_factor(n)
    neta3 = 3 * n * ETA  # exact: a small integer times a power of two
    br_ = b.absmid() if b_exact else up(b.absmid() + b.rad)
    p = ar_ @ br_
    if not b_exact:
        p = p + am @ b.rad
    # The error is at most P1 + P2 + n·eta with P_i <= (fl(P_i) + n·eta)/(1 − γ_n), so at
    # most (fl(P1) + fl(P2) + 3n·eta)/(1 − γ_n). Two more roundings (the sums) and the
    # product by k lose at most a factor (1 − u)^3, which k covers, and a product that
    # underflows loses at most eta/2, which the final + eta covers (exactly, when the
    # result is subnormal).
    r = (p + neta3) * k + ETA
    return _clean(c, r)


#: Longest inner dimension whose radius products run in binary32 (``γ_n <= 1/16`` there).
_SINGLE_MAX_N = 1 << 20
#: Fewest multiply–adds for which they do: below it the conversions cost more than they save.
_SINGLE_MIN_WORK = 1 << 21


@lru_cache(maxsize=256)
def _product_factor32(n: int) -> float:
    """A float ``>= 1 / ((1 − γ32_n)(1 − u)^3)``, ``γ32_n = n·2^-24/(1 − n·2^-24)``."""
    u = Fraction(1, 2**53)
    nu = Fraction(n, 2**24)
    g = nu / (1 - nu)
    return _float_up(1 / ((1 - g) * (1 - u) ** 3))


@lru_cache(maxsize=256)
def _product_factor(n: int) -> float:
    """A float ``>= 1 / ((1 − γ_n)(1 − u)^3)`` (see :func:`matmul`)."""
    u = Fraction(1, 2**53)
    nu = Fraction(n) * u
    g = nu / (1 - nu)
    return _float_up(1 / ((1 - g) * (1 - u) ** 3))


def relu(a: MR) -> MR:
    """``max(0, x)``: positive balls kept, negative ones 0, straddling ones ``[0, hi]``."""
    pos = a.mid > a.rad  # exact float comparisons: mid − rad > 0
    neg_ = a.mid < -a.rad
    hi = up(a.mid + a.rad)
    half = up(hi * 0.5)  # [0, hi] ⊂ [half ± half]
    mid = np.where(pos, a.mid, np.where(neg_, 0.0, half))
    rad = np.where(pos, a.rad, np.where(neg_, 0.0, up(half + ETA)))
    return _clean(mid, rad)


def absolute(a: MR) -> MR:
    """``|x|``: balls away from 0 keep their radius (sign flipped), straddling ones ``[0, hi]``."""
    pos = a.mid >= a.rad
    neg_ = a.mid <= -a.rad
    hi = up(np.abs(a.mid) + a.rad)
    half = up(hi * 0.5)  # [0, hi] ⊂ [half ± half]
    mid = np.where(pos, a.mid, np.where(neg_, -a.mid, half))
    rad = np.where(pos | neg_, a.rad, up(half + ETA))
    return _clean(mid, rad)


# ----------------------------------------------------------------------------- elementary functions

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
    return _float_up(Fraction(144, 100) * (g * (1 + u) + u + tail))


_EXP_EPS = _exp_eps()


def _exp(a: MR) -> MR:
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
    e = up(up(up(_sp(t) + _sp(kc2)) + _sp(s)) + up(np.abs(k) * _DELTA))
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
    rad = np.where(fast, rad, np.where(masked, 0.0, np.where(tiny, 2.0**-1060, _INF)))
    rest = ~(fast | tiny | masked)
    wide = rest & (m >= -740.0) & (m <= 709.0) & (rho <= 709.0)  # finite, and a wide ball
    if np.any(wide):
        mid, rad = mid.copy(), rad.copy()
        mid[wide], rad[wide] = _exp_wide(m[wide], rho[wide])
        rest &= ~wide
    if np.any(rest):
        mid, rad = mid.copy(), rad.copy()
        _flint_fill(m, rho, mid, rad, rest, arb.exp)
    return _clean(mid, rad)


def _exp_wide(m: np.ndarray, rho: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """``exp`` of wide balls ``m ± ρ`` from three exact points.

    ``e^{m±ρ} = e^m·(cosh ρ ± sinh ρ)``, so every value lies in
    ``e^m·cosh ρ ± e^m·sinh ρ``. ``e^m``, ``e^ρ`` and ``e^{−ρ}`` are enclosed at
    the exact floats ``m``, ``ρ``, ``−ρ`` (radius 0, the fast path), ``cosh`` and
    ``sinh`` follow by certified ``+``, ``−`` and ``×½``, and the radius adds an
    upper bound of ``|e^m|·|sinh ρ|``.
    """
    zero = np.zeros_like(m)
    e_m = _exp(MR(m, zero))
    e_p = _exp(MR(rho, zero))
    e_n = _exp(MR(-rho, zero))
    half = MR(_zero_d(0.5), _zero_d(0.0))
    cosh = mul(add(e_p, e_n), half)
    sinh = mul(add(e_p, neg(e_n)), half)
    centre = mul(e_m, cosh)
    s_up = up(np.abs(sinh.mid) + sinh.rad)
    m_up = up(np.abs(e_m.mid) + e_m.rad)
    return centre.mid, up(centre.rad + up(m_up * s_up))


def _sqrt(a: MR) -> MR:
    """Certified ``sqrt``: ``|√x − √m| <= ρ/√m`` for ``|x − m| <= ρ < m``.

    IEEE's ``sqrt`` is correctly rounded; ``down(fl(√m)) <= √m``. A ball that
    reaches 0 or below goes through python-flint (which gives NaN balls, hence
    unknown entries, for negative arguments).
    """
    m, rho = np.broadcast_arrays(a.mid, a.rad)
    fast = (m > rho) & np.isfinite(m) & np.isfinite(rho)
    zero = (m == 0) & (rho == 0)
    s = np.sqrt(np.where(fast, m, 1.0))
    r = up(up(rho / down(s)) + _sp(s))
    mid = np.where(fast, s, 0.0)
    rad = np.where(fast, r, 0.0)
    rest = ~(fast | zero)
    if np.any(rest):
        mid, rad = mid.copy(), rad.copy()
        _flint_fill(m, rho, mid, rad, rest, arb.sqrt)
    return _clean(mid, rad)


def _tanh(a: MR) -> MR:
    """Certified ``tanh`` as ``1 − 2/(e^{2x} + 1)``: ``x`` occurs once, so each step's
    enclosure (:func:`_exp`, :func:`add`, :func:`div`) bounds the whole range."""
    two = MR(_zero_d(2.0), _zero_d(0.0))
    one = MR(_zero_d(1.0), _zero_d(0.0))
    e = _exp(mul(two, a))
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
        mid[unknown], rad[unknown] = 0.0, _INF
        where = where & ~unknown
    saved = ctx.prec
    ctx.prec = FLINT_PREC
    try:
        for idx in zip(*np.nonzero(where), strict=True):
            x = to_arb(float(m[idx]), float(rho[idx]))
            mid[idx], rad[idx] = from_arb(fn(x))
    finally:
        ctx.prec = saved


def _flint_map(a: MR, fn: Callable[[arb], arb]) -> MR:
    m, rho = np.broadcast_arrays(a.mid, a.rad)
    mid = np.empty(m.shape)
    rad = np.empty(m.shape)
    _flint_fill(m, rho, mid, rad, np.ones(m.shape, dtype=bool), fn)
    return _clean(mid, rad)


# ----------------------------------------------------------------------------- the backend


class MidradBackend(BaseBackend):
    """Midpoint–radius float64 arithmetic, certified (see the module docstring).

    Signs that a ball cannot decide raise :class:`~symtf.errors.Undecided`, so a
    caller can fall back to :class:`~symtf.backends.BallBackend`.
    """

    name = "midrad"
    certified = True

    def __init__(self) -> None:
        self._ones: dict[tuple[int, int], MR] = {}

    def __enter__(self) -> MidradBackend:
        self._saved = ctx.prec
        ctx.prec = FLINT_PREC
        # overflow and inf − inf are expected and handled (unknown entries): no warnings
        self._saved_np = np.seterr(all="ignore")
        return self

    def __exit__(self, *exc: object) -> None:
        ctx.prec = self._saved
        np.seterr(**self._saved_np)

    # scalars are python-flint balls
    def const(self, x: Fraction | int | sympy.Expr) -> arb:
        if isinstance(x, Fraction):
            return arb(fmpq(x.numerator, x.denominator))
        if isinstance(x, int):
            return arb(x)
        from symtf.backends.certify import ball

        return ball(x, FLINT_PREC)

    def matrix(self, m: Any) -> MR:
        """A weight matrix: exact floats from files, or a SymPy matrix's entries enclosed."""
        arr = getattr(m, "float64", None)
        if arr is not None:  # symtf.spec.weights.FileMatrix: exact dyadic floats
            cached = getattr(m, "_midrad", None)
            if cached is None:
                cached = m._midrad = MR(arr, np.zeros_like(arr))
            return cached
        hit = _MATRIX_CACHE.get(id(m))
        if hit is not None and hit[0] is m:
            return hit[1]
        out = _sympy_to_mr(m)
        if isinstance(m, sympy.ImmutableMatrix):
            if len(_MATRIX_CACHE) > 512:
                _MATRIX_CACHE.clear()
            _MATRIX_CACHE[id(m)] = (m, out)
        return out

    def shape(self, a: MR) -> tuple[int, int]:
        return a.mid.shape

    def entry(self, a: MR, i: int, j: int) -> arb:
        return a[i, j]

    def from_rows(self, rows: Sequence[Sequence[Any]]) -> MR:
        rows = [list(r) for r in rows]
        n, m = len(rows), len(rows[0]) if rows else 0
        mid = np.empty((n, m))
        rad = np.empty((n, m))
        for i, row in enumerate(rows):
            for j, x in enumerate(row):
                v = as_mr(x)
                mid[i, j], rad[i, j] = float(v.mid), float(v.rad)
        return MR(mid, rad)

    def ones(self, rows: int, cols: int) -> MR:
        """A matrix of exact ones, kept for the products that spread rows and columns."""
        hit = self._ones.get((rows, cols))
        if hit is None:
            hit = self._ones[(rows, cols)] = MR(np.ones((rows, cols)), np.zeros((rows, cols)))
        return hit

    def fill_above(self, a: MR, value: Any) -> MR:
        """Exactly ``value`` (−∞ or 0) above the diagonal, vectorised."""
        v = as_mr(value)
        n, m = a.mid.shape
        upper = np.triu(np.ones((n, m), dtype=bool), 1)
        return MR(np.where(upper, v.mid, a.mid), np.where(upper, v.rad, a.rad))

    def matmul(self, a: MR, b: MR) -> MR:
        # Rows and columns are spread (symtf.ops.array.expand) as products with a matrix of
        # ones over an inner dimension of 1: each entry is 1·x, exact, so the product is a copy.
        if a.mid.shape[1] == 1 and a is self._ones.get(a.mid.shape):
            n = a.mid.shape[0]
            return MR(np.repeat(b.mid, n, axis=0), np.repeat(b.rad, n, axis=0))
        if b.mid.shape[0] == 1 and b is self._ones.get(b.mid.shape):
            m = b.mid.shape[1]
            return MR(np.repeat(a.mid, m, axis=1), np.repeat(a.rad, m, axis=1))
        return matmul(a, b)

    def add(self, a: MR, b: MR) -> MR:
        return add(a, b)

    def sub(self, a: MR, b: MR) -> MR:
        return add(a, neg(b))

    def scale(self, a: MR, s: Any) -> MR:
        return mul(a, as_mr(s))

    def mul(self, a: MR, b: MR) -> MR:
        return mul(a, b)

    def div(self, a: MR, b: MR) -> MR:
        return div(a, b)

    def transpose(self, a: MR) -> MR:
        return MR(a.mid.T, a.rad.T)

    def take_rows(self, a: MR, rows: Sequence[int]) -> MR:
        idx = list(rows)
        return MR(a.mid[idx, :], a.rad[idx, :])

    def take_cols(self, a: MR, start: int, stop: int) -> MR:
        return MR(a.mid[:, start:stop], a.rad[:, start:stop])

    def hstack(self, mats: Sequence[MR]) -> MR:
        return MR(np.hstack([x.mid for x in mats]), np.hstack([x.rad for x in mats]))

    def map(self, a: MR, fn: Callable[[Any], Any]) -> MR:
        out = fn(a)  # the functions below work on whole arrays
        if not isinstance(out, MR):
            raise TypeError("an element-wise function did not return a midpoint–radius matrix")
        return out

    def exp(self, x: Any) -> Any:
        return x.exp() if isinstance(x, arb) else _exp(as_mr(x))

    def sqrt(self, x: Any) -> Any:
        return x.sqrt() if isinstance(x, arb) else _sqrt(as_mr(x))

    def log(self, x: Any) -> Any:
        return x.log() if isinstance(x, arb) else _flint_map(as_mr(x), arb.log)

    def erf(self, x: Any) -> Any:
        return x.erf() if isinstance(x, arb) else _flint_map(as_mr(x), arb.erf)

    def tanh(self, x: Any) -> Any:
        return x.tanh() if isinstance(x, arb) else _tanh(as_mr(x))

    def sin(self, x: Any) -> Any:
        return x.sin() if isinstance(x, arb) else _flint_map(as_mr(x), arb.sin)

    def cos(self, x: Any) -> Any:
        return x.cos() if isinstance(x, arb) else _flint_map(as_mr(x), arb.cos)

    def pi(self) -> arb:
        return arb.pi()

    def neg_inf(self) -> arb:
        return arb("-inf")

    def abs(self, x: Any) -> Any:
        return abs(x) if isinstance(x, arb) else absolute(as_mr(x))

    def relu(self, x: Any) -> Any:
        if isinstance(x, arb):
            if x > 0:
                return x
            if x < 0:
                return arb(0)
            return x.max(arb(0))
        return relu(as_mr(x))

    def is_zero(self, x: arb) -> bool:
        return bool(x.is_exact() and x.is_zero())

    def first_above(self, a: Any, bound: int) -> int | None:
        if isinstance(a, arb):
            return 0 if a > bound else None
        m = as_mr(a)
        low = (m.mid - m.rad).ravel()
        # one past the bound: the rounding of mid − rad is far below 1 near it; an
        # overflowed (infinite) or unknown (NaN) entry is not certain
        hit = np.flatnonzero(np.isfinite(low) & (low > bound + 1))
        return int(hit[0]) if hit.size else None

    def sign(self, x: arb) -> int:
        return ball_sign(x, "(midpoint–radius)")

    def require_nonzero(self, x: arb, what: str) -> None:
        """An exact 0 is an error; a ball that merely contains 0 is not.

        Unlike the ball backend this does not stop the trace: dividing by (or taking
        the square root of) such a ball gives unknown entries (radius ∞), whose
        verdicts escalate, while the rest of the trace stays usable.
        """
        if x.is_exact() and x.is_zero():
            raise ModelError(f"{what} is exactly 0")


#: SymPy weights converted to midpoint–radius form, keyed by id (the matrix is kept to pin it).
_MATRIX_CACHE: dict[int, tuple[Any, MR]] = {}


def _sympy_to_mr(m: sympy.MatrixBase) -> MR:
    """Enclose a SymPy matrix's entries: rationals directly, other closed forms by a ball."""
    rows, cols = m.shape
    mid = np.empty((rows, cols))
    rad = np.empty((rows, cols))
    for i in range(rows):
        for j in range(cols):
            e = m[i, j]
            if isinstance(e, sympy.Rational):
                mid[i, j], rad[i, j] = from_rational(int(e.p), int(e.q))
            else:
                from symtf.backends.certify import ball

                mid[i, j], rad[i, j] = from_arb(ball(e, FLINT_PREC))
    return _clean(mid, rad)
