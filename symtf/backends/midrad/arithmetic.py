"""Midpoint–radius matrices (:class:`MR`) and their arithmetic: the rounding bounds
(:func:`up`, :func:`down`, :func:`gamma`), conversions from balls and rationals, the
four operations, matrix products by Rump's method, ``relu`` and ``abs``. The proofs are
in :mod:`symtf.backends.midrad`.
"""

from __future__ import annotations

import math
from fractions import Fraction
from functools import lru_cache
from typing import Any

import numpy as np
import sympy
from flint import arb
from numpy.typing import NDArray

#: Unit roundoff of binary64, round-to-nearest.
U = 2.0**-53
#: Smallest positive subnormal binary64 number.
ETA = 2.0**-1074
#: Precision (bits) of the python-flint balls used for scalars and element-wise functions.
FLINT_PREC = 80

INF = np.inf


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


def float_up(q: Fraction) -> float:
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
    return float_up(nu / (1 - nu))


@lru_cache(maxsize=256)
def inv_one_minus_gamma(n: int) -> float:
    """A float ``>= 1 / (1 − γ_n)``."""
    nu = Fraction(n) * Fraction(1, 2**53)
    g = nu / (1 - nu)
    return float_up(1 / (1 - g))


def rounding_error(x: NDArray[np.float64]) -> NDArray[np.float64]:
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


def zero_d(x: float) -> np.ndarray:
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
    return MR(zero_d(m), zero_d(r))


def clean(mid: np.ndarray, rad: np.ndarray) -> MR:
    """Entries whose midpoint or radius went non-finite become unknown (0 ± inf).

    An exact infinity (``mid = ±inf``, ``rad = 0``) is kept: it is the causal mask.
    """
    if np.isfinite(mid + rad).all():  # the common case, in one pass
        return MR(mid, rad)
    bad = np.isnan(mid) | ~np.isfinite(rad) | (np.isinf(mid) & (rad != 0))
    if np.any(bad):
        mid = np.where(bad, 0.0, mid)
        rad = np.where(bad, INF, rad)
    return MR(mid, rad)


# ----------------------------------------------------------------------------- arithmetic


def neg(a: MR) -> MR:
    return MR(-a.mid, a.rad)


def add(a: MR, b: MR) -> MR:
    """``a + b``: radius ``ar + br + err(c)``, rounded up."""
    c = a.mid + b.mid
    r = up(up(a.rad + b.rad) + rounding_error(c))
    return clean(c, r)


def mul(a: MR, b: MR) -> MR:
    """``a ∘ b``: radius ``|am|·br + ar·(|bm| + br) + err(c)``, rounded up."""
    c = a.mid * b.mid
    t1 = up(np.abs(a.mid) * b.rad)
    t2 = up(a.rad * up(np.abs(b.mid) + b.rad))
    r = up(up(t1 + t2) + rounding_error(c))
    return clean(c, r)


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
    r = up(up(num / den) + rounding_error(c))
    r = np.where(den > 0, r, INF)
    return clean(c, r)


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
        return clean(c, (p + 3 * n * ETA32) * _product_factor32(n) + ETA)
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
    return clean(c, r)


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
    return float_up(1 / ((1 - g) * (1 - u) ** 3))


@lru_cache(maxsize=256)
def _product_factor(n: int) -> float:
    """A float ``>= 1 / ((1 − γ_n)(1 − u)^3)`` (see :func:`matmul`)."""
    u = Fraction(1, 2**53)
    nu = Fraction(n) * u
    g = nu / (1 - nu)
    return float_up(1 / ((1 - g) * (1 - u) ** 3))


def relu(a: MR) -> MR:
    """``max(0, x)``: positive balls kept, negative ones 0, straddling ones ``[0, hi]``."""
    pos = a.mid > a.rad  # exact float comparisons: mid − rad > 0
    neg_ = a.mid < -a.rad
    hi = up(a.mid + a.rad)
    half = up(hi * 0.5)  # [0, hi] ⊂ [half ± half]
    mid = np.where(pos, a.mid, np.where(neg_, 0.0, half))
    rad = np.where(pos, a.rad, np.where(neg_, 0.0, up(half + ETA)))
    return clean(mid, rad)


def absolute(a: MR) -> MR:
    """``|x|``: balls away from 0 keep their radius (sign flipped), straddling ones ``[0, hi]``."""
    pos = a.mid >= a.rad
    neg_ = a.mid <= -a.rad
    hi = up(np.abs(a.mid) + a.rad)
    half = up(hi * 0.5)  # [0, hi] ⊂ [half ± half]
    mid = np.where(pos, a.mid, np.where(neg_, -a.mid, half))
    rad = np.where(pos | neg_, a.rad, up(half + ETA))
    return clean(mid, rad)
