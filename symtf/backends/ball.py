"""Certified ball arithmetic with python-flint: every entry encloses the exact value.

:class:`BallBackend` implements the :class:`~symtf.backends.protocol.Backend`
protocol with ``arb_mat`` matrices at a fixed working precision; when a ball
cannot decide a sign it raises :class:`~symtf.errors.Undecided` and the caller
retries at a higher precision or exactly.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from fractions import Fraction
from typing import Any, Protocol, cast

import sympy
from flint import arb, arb_mat, ctx, fmpq, fmpq_mat

from symtf.backends.base import BaseBackend
from symtf.backends.certify import ball_sign
from symtf.errors import ModelError, Undecided


class _FloatMatrix(Protocol):
    """A weights-file matrix (``symtf.spec.weights.FileMatrix``), by its shape: the
    backends read no stage above them, so they know it only by these attributes."""

    float64: Any
    _arb: arb_mat | None


#: Weights converted to balls, keyed by (id, precision); the matrix is kept to pin its id.
_ARB_CACHE: dict[tuple[int, int], tuple[sympy.MatrixBase, arb_mat]] = {}


def _to_arb_mat(m: sympy.MatrixBase, prec: int) -> arb_mat:
    """Exact rationals go through flint's fmpq_mat in C; anything else through certify.ball."""
    if all(e.is_Rational for e in m):
        flat = m.to_DM().to_field().to_list_flat()
        q = fmpq_mat(m.rows, m.cols, [fmpq(int(x.numerator), int(x.denominator)) for x in flat])
        return arb_mat(q)
    from symtf.backends.certify import ball

    return arb_mat([[ball(e, prec) for e in m.row(i)] for i in range(m.rows)])


class BallBackend(BaseBackend):
    """Certified ball arithmetic with python-flint at a fixed working precision.

    Args:
        prec: Working precision in bits.
    """

    name = "ball"
    certified = True

    def __init__(self, prec: int = 128) -> None:
        self.prec = prec

    def __enter__(self) -> BallBackend:
        self._saved = ctx.prec
        ctx.prec = self.prec
        return self

    def __exit__(self, *exc: object) -> None:
        ctx.prec = self._saved

    def const(self, x: Fraction | int | sympy.Expr) -> arb:
        if isinstance(x, Fraction):
            return arb(fmpq(x.numerator, x.denominator))
        if isinstance(x, int):
            return arb(x)
        from symtf.backends.certify import ball

        return ball(x, self.prec)

    def matrix(self, m: sympy.MatrixBase) -> arb_mat:
        floats = getattr(m, "float64", None)  # symtf.spec.weights.FileMatrix: exact floats
        if floats is not None:
            fm = cast(_FloatMatrix, m)  # only a FileMatrix holds its entries as .float64
            if fm._arb is None:  # exact at every precision
                fm._arb = arb_mat(floats.tolist()) if floats.size else arb_mat(*floats.shape)
            return fm._arb
        key = (id(m), self.prec)
        hit = _ARB_CACHE.get(key)
        if hit is not None and hit[0] is m:
            return hit[1]
        out = _to_arb_mat(m, self.prec)
        if isinstance(m, sympy.ImmutableMatrix):  # immutable: safe to reuse
            if len(_ARB_CACHE) > 512:
                _ARB_CACHE.clear()
            _ARB_CACHE[key] = (m, out)
        return out

    def shape(self, a: arb_mat) -> tuple[int, int]:
        return (a.nrows(), a.ncols())

    def entry(self, a: arb_mat, i: int, j: int) -> arb:
        return a[i, j]

    def from_rows(self, rows: Sequence[Sequence[arb]]) -> arb_mat:
        rows = [list(r) for r in rows]
        return arb_mat(rows) if rows and rows[0] else arb_mat(len(rows), 0)

    def matmul(self, a: arb_mat, b: arb_mat) -> arb_mat:
        return a * b

    def add(self, a: arb_mat, b: arb_mat) -> arb_mat:
        return a + b

    def sub(self, a: arb_mat, b: arb_mat) -> arb_mat:
        return a - b

    def scale(self, a: arb_mat, s: arb) -> arb_mat:
        return a * s

    def mul(self, a: arb_mat, b: arb_mat) -> arb_mat:
        return self.from_rows(
            [
                [x * y for x, y in zip(ra, rb, strict=True)]
                for ra, rb in zip(a.tolist(), b.tolist(), strict=True)
            ]
        )

    def div(self, a: arb_mat, b: arb_mat) -> arb_mat:
        return self.from_rows(
            [
                [x / y for x, y in zip(ra, rb, strict=True)]
                for ra, rb in zip(a.tolist(), b.tolist(), strict=True)
            ]
        )

    def transpose(self, a: arb_mat) -> arb_mat:
        return a.transpose()

    def take_rows(self, a: arb_mat, rows: Sequence[int]) -> arb_mat:
        n = a.ncols()
        return self.from_rows([[a[i, j] for j in range(n)] for i in rows])

    def take_cols(self, a: arb_mat, start: int, stop: int) -> arb_mat:
        return self.from_rows([[a[i, j] for j in range(start, stop)] for i in range(a.nrows())])

    def hstack(self, mats: Sequence[arb_mat]) -> arb_mat:
        n = mats[0].nrows()
        return self.from_rows([[m[i, j] for m in mats for j in range(m.ncols())] for i in range(n)])

    def map(self, a: arb_mat, fn: Callable[[arb], arb]) -> arb_mat:
        return self.from_rows([[fn(x) for x in row] for row in a.tolist()])

    def exp(self, x: arb) -> arb:
        return x.exp()

    def sqrt(self, x: arb) -> arb:
        return x.sqrt()

    def erf(self, x: arb) -> arb:
        return x.erf()

    def log(self, x: arb) -> arb:
        return x.log()

    def abs(self, x: arb) -> arb:
        return abs(x)

    def tanh(self, x: arb) -> arb:
        return x.tanh()

    def sin(self, x: arb) -> arb:
        return x.sin()

    def cos(self, x: arb) -> arb:
        return x.cos()

    def pi(self) -> arb:
        return arb.pi()

    def neg_inf(self) -> arb:
        return arb("-inf")

    def relu(self, x: arb) -> arb:
        if x > 0:
            return x
        if x < 0:
            return arb(0)
        return x.max(arb(0))  # still an enclosure: the branch is left open

    def is_zero(self, x: arb) -> bool:
        return bool(x.is_exact() and x.is_zero())

    def sign(self, x: arb) -> int:
        return ball_sign(x, f"at {self.prec} bits")

    def require_nonzero(self, x: arb, what: str) -> None:
        if x.is_exact() and x.is_zero():
            raise ModelError(f"{what} is exactly 0")
        if not (x > 0 or x < 0):
            raise Undecided(f"{what} may be 0 ({x} at {self.prec} bits)")


__all__ = ["BallBackend"]
