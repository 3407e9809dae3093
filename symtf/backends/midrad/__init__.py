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

- ``nextafter(f, +inf) >= z`` and ``nextafter(f, -inf) <= z``; :func:`~symtf.backends.midrad.arithmetic.up` and
  :func:`~symtf.backends.midrad.arithmetic.down` give floats at least that far out (a safe inflation factor,
  ``f·(1 ± 2^-51) ± eta``, much cheaper than numpy's ``nextafter``);
- ``|f − z| <= u·|f| + eta/2`` (``u = 2^-53``, ``eta = 2^-1074`` the smallest
  subnormal; the ``eta`` term covers underflow), bounded by :func:`~symtf.backends.midrad.arithmetic.rounding_error`.

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
   about twice as fast): their operands are rounded up to binary32 (:func:`~symtf.backends.midrad.arithmetic.up32`),
   and 2 holds there with ``u32 = 2^-24`` and ``eta32 = 2^-149``, so a real product
   ``P·Q >= 0`` is at most ``(fl32(P·Q) + n·eta32) / (1 − γ32_n)``; the radius is then
   ``(fl32(R1) + fl32(R2) + 3n·eta32)·k32 + eta`` (``3n·eta32`` covers the ``n·eta`` of 2
   as well). Their relative overestimate, about ``n·2^-24``, is far below what any
   radius is compared with; the midpoint product stays binary64.

So ``rad = (fl(R1) + fl(R2) + 3n·eta)·k + eta`` with ``R1``, ``R2`` the BLAS
products of 4 and ``k >= 1/((1 − γ_n)(1 − u)^3)`` covering the three roundings of
that line (see :func:`~symtf.backends.midrad.arithmetic.matmul`)
(``R2`` is skipped when ``Br = 0``, as for weights read from files: one BLAS
call for the midpoint and one for the radius). The assumption is that of Rump's
method: the BLAS computes each entry as a sum of products by binary64 additions,
multiplications or FMAs in round-to-nearest (true of OpenBLAS, MKL, Accelerate;
not of Strassen-type algorithms or reduced-precision modes).

Element-wise functions: ``+ − ×  ÷`` and ``sqrt`` are vectorised with the error
terms above; ``exp`` (the softmax's, the most frequent) by a reduction
``x = k·ln2 + s`` and a degree-13 Taylor polynomial with a proven error bound
(see :func:`~symtf.backends.midrad.elementary.mr_exp`), wide balls by ``e^m·(cosh ρ ± sinh ρ)`` from three exact
points (:func:`~symtf.backends.midrad.elementary._exp_wide`); ``tanh`` as ``1 − 2/(e^{2x} + 1)``; ``erf``, ``sin``,
``cos``, ``log`` and every entry outside these ranges by python-flint on each
entry (``arb(mid, rad)``). No libm is trusted.

This module is the backend; the arithmetic is :mod:`symtf.backends.midrad.arithmetic` and
the element-wise functions are :mod:`symtf.backends.midrad.elementary`.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from fractions import Fraction
from typing import Any

import numpy as np
import sympy
from flint import arb, ctx, fmpq

from symtf.backends.base import BaseBackend
from symtf.backends.certify import ball_sign
from symtf.backends.midrad.arithmetic import (
    FLINT_PREC,
    MR,
    absolute,
    add,
    as_mr,
    clean,
    div,
    from_arb,
    from_rational,
    matmul,
    mul,
    neg,
    relu,
)
from symtf.backends.midrad.elementary import flint_map, mr_exp, mr_sqrt, mr_tanh
from symtf.errors import ModelError


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
        return x.exp() if isinstance(x, arb) else mr_exp(as_mr(x))

    def sqrt(self, x: Any) -> Any:
        return x.sqrt() if isinstance(x, arb) else mr_sqrt(as_mr(x))

    def log(self, x: Any) -> Any:
        return x.log() if isinstance(x, arb) else flint_map(as_mr(x), arb.log)

    def erf(self, x: Any) -> Any:
        return x.erf() if isinstance(x, arb) else flint_map(as_mr(x), arb.erf)

    def tanh(self, x: Any) -> Any:
        return x.tanh() if isinstance(x, arb) else mr_tanh(as_mr(x))

    def sin(self, x: Any) -> Any:
        return x.sin() if isinstance(x, arb) else flint_map(as_mr(x), arb.sin)

    def cos(self, x: Any) -> Any:
        return x.cos() if isinstance(x, arb) else flint_map(as_mr(x), arb.cos)

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
    return clean(mid, rad)
