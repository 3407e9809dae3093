"""numpy float64: fast, familiar and not certified (benchmarks, cross-checks, the draft's pre-filter).

The draft's search screens tens of thousands of candidate steps per article
through the registry on this backend, so what it does natively it does on whole
arrays: a matrix of ones is made once per shape, a check that no entry is 0 is
one comparison.
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Sequence
from fractions import Fraction
from typing import TYPE_CHECKING, Any, TypeAlias, cast

import sympy

if TYPE_CHECKING:
    import numpy as np
    from numpy.typing import NDArray

    #: This backend's matrices: float64 arrays.
    F64: TypeAlias = NDArray[np.float64]

from symtf.backends.base import BaseBackend
from symtf.errors import ModelError


class FloatBackend(BaseBackend):
    """numpy float64: fast, familiar, and not certified (benchmarks only)."""

    name = "float"

    def __init__(self) -> None:
        import numpy  # imported here: checking never needs it, and it costs ~0.1 s

        self._np = numpy

    def const(self, x: Fraction | int | sympy.Expr) -> float:
        return float(x)

    def matrix(self, m: sympy.MatrixBase) -> F64:
        # symtf.spec.weights.FileMatrix keeps its entries as a float64 array.
        floats: F64 | None = getattr(m, "float64", None)
        if floats is not None:
            return floats
        return self._np.array(m.tolist(), dtype=self._np.float64)

    def shape(self, a: F64) -> tuple[int, int]:
        return a.shape

    def entry(self, a: F64, i: int, j: int) -> float:
        return float(a[i, j])

    def from_rows(self, rows: Sequence[Sequence[float]]) -> F64:
        return self._np.array(rows, dtype=self._np.float64)

    def matmul(self, a: F64, b: F64) -> F64:
        return a @ b

    def add(self, a: F64, b: F64) -> F64:
        return a + b

    def sub(self, a: F64, b: F64) -> F64:
        return a - b

    def scale(self, a: F64, s: float) -> F64:
        return a * s

    def mul(self, a: F64, b: F64) -> F64:
        return a * b

    def div(self, a: F64, b: F64) -> F64:
        return a / b

    def transpose(self, a: F64) -> F64:
        return a.T

    def take_rows(self, a: F64, rows: Sequence[int]) -> F64:
        return a[list(rows), :]

    def take_cols(self, a: F64, start: int, stop: int) -> F64:
        return a[:, start:stop]

    def hstack(self, mats: Sequence[F64]) -> F64:
        return self._np.hstack(mats)

    def vstack(self, mats: Sequence[F64]) -> F64:
        return self._np.vstack(mats)

    def ones(self, rows: int, cols: int) -> F64:
        return _ones(rows, cols)

    def map(self, a: F64, fn: Callable[[Any], Any]) -> F64:
        # The scalar functions below are numpy ufuncs: applied to the whole array, they give
        # an array of the same dtype (the protocol types ``fn`` for every backend's scalars).
        return cast("F64", fn(a))

    def exp(self, x: Any) -> Any:
        return self._np.exp(x)

    def sqrt(self, x: Any) -> Any:
        return self._np.sqrt(x)

    def erf(self, x: Any) -> Any:
        return _erf()(x)

    def log(self, x: Any) -> Any:
        return self._np.log(x)

    def abs(self, x: Any) -> Any:
        return self._np.abs(x)

    def tanh(self, x: Any) -> Any:
        return self._np.tanh(x)

    def sin(self, x: Any) -> Any:
        return self._np.sin(x)

    def cos(self, x: Any) -> Any:
        return self._np.cos(x)

    def pi(self) -> float:
        return float(self._np.pi)

    def neg_inf(self) -> float:
        return float("-inf")

    def relu(self, x: Any) -> Any:
        return self._np.maximum(x, 0.0)

    def first_above(self, a: Any, bound: int) -> int | None:
        return None  # a simulation computes what the format gives (e^20000 = inf)

    def sign(self, x: float) -> int:
        return int(self._np.sign(x))

    def require_nonzero(self, x: Any, what: str) -> None:
        if isinstance(x, float):  # an entry, numpy's float64 included (no array to make)
            if x == 0:
                raise ModelError(f"{what} is 0")
            return
        if self._np.any(self._np.asarray(x) == 0):
            raise ModelError(f"{what} is 0")

    def require_nonzero_entries(self, a: F64, what: Callable[[int], str]) -> None:
        if a.all():  # NaN is not 0, as in ``require_nonzero``
            return
        first = int(self._np.flatnonzero(a == 0)[0])
        raise ModelError(f"{what(first)} is 0")


@functools.cache
def _erf() -> Callable[[Any], Any]:
    """``math.erf`` on every entry of an array (numpy has no erf), made once."""
    import math

    import numpy

    return cast("Callable[[Any], Any]", numpy.vectorize(math.erf))


@functools.lru_cache(maxsize=256)
def _ones(rows: int, cols: int) -> F64:
    """A read-only float64 matrix of ones (the products that sum and broadcast reuse them)."""
    import numpy

    out = numpy.ones((rows, cols))
    out.flags.writeable = False
    return out


__all__ = ["FloatBackend"]
