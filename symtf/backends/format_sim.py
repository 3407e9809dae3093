"""A simulation of a binary floating-point format with numpy (float64, float32, float16;
bfloat16 by rounding float32 results to 8 significand bits after each operation): the
value the format actually gives, as a guide, never a verdict (tests check it lies inside
the enclosure of :class:`~symtf.backends.formats.FormatBallBackend`).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from types import MappingProxyType
from typing import TYPE_CHECKING, Any

import sympy

from symtf.backends.base import BaseBackend
from symtf.backends.formats import FORMATS, softmax_kernel
from symtf.errors import ModelError

if TYPE_CHECKING:
    import numpy as np


def _bf16(np: Any, x: Any) -> Any:
    """Round float32 values to bfloat16 (nearest, ties to even), kept as float32."""
    a = np.asarray(x, dtype=np.float32)
    bits = a.view(np.uint32).astype(np.uint64)
    finite = np.isfinite(a)
    # numpy scalars, not Python ints: numpy 1.x casts uint64 with an int to float64
    one, half, sixteen = np.uint64(1), np.uint64(0x7FFF), np.uint64(16)
    rounded = ((bits + half + ((bits >> sixteen) & one)) >> sixteen) << sixteen
    out = np.where(finite, rounded.astype(np.uint32).view(np.float32), a)
    return out.astype(np.float32)


class _BF16:
    """A bfloat16 scalar (kept as a float32) whose every operation rounds to bfloat16.

    float32 has more than 2·8 + 2 significand bits, so an operation done in float32 and
    then rounded to bfloat16 is the correctly rounded bfloat16 result.
    """

    __slots__ = ("v",)

    def __init__(self, v: Any) -> None:
        import numpy

        self.v = _bf16(numpy, v)[()]

    @staticmethod
    def _of(o: Any) -> Any:
        return o.v if isinstance(o, _BF16) else o

    def __add__(self, o: Any) -> _BF16:
        return _BF16(self.v + _BF16(self._of(o)).v)

    __radd__ = __add__

    def __sub__(self, o: Any) -> _BF16:
        return _BF16(self.v - _BF16(self._of(o)).v)

    def __rsub__(self, o: Any) -> _BF16:
        return _BF16(_BF16(self._of(o)).v - self.v)

    def __mul__(self, o: Any) -> _BF16:
        return _BF16(self.v * _BF16(self._of(o)).v)

    __rmul__ = __mul__

    def __truediv__(self, o: Any) -> _BF16:
        return _BF16(self.v / _BF16(self._of(o)).v)

    def __rtruediv__(self, o: Any) -> _BF16:
        return _BF16(_BF16(self._of(o)).v / self.v)

    def __neg__(self) -> _BF16:
        return _BF16(-self.v)

    def __pow__(self, o: Any) -> _BF16:
        return _BF16(self.v ** _BF16(self._of(o)).v)

    def __gt__(self, o: Any) -> bool:
        return bool(self.v > self._of(o))

    def __lt__(self, o: Any) -> bool:
        return bool(self.v < self._of(o))

    def __float__(self) -> float:
        return float(self.v)

    def __repr__(self) -> str:
        return f"bfloat16({float(self.v)!r})"


class FormatSimBackend(BaseBackend):
    """numpy in one format: what the article's framework would print (a guide, not certified).

    Args:
        fmt: ``float32``, ``float16``, ``bfloat16`` or ``float64``.
        softmax: ``shifted`` (``e^{x−max}``, as frameworks compute it) or ``textbook``
            (``e^x / Σ e^x``, as a hand-written numpy line does).
    """

    name = "format-sim"
    #: A framework's max-shifted softmax (see softmax_rows).
    kernels: Mapping[str, Callable[..., Any]] = MappingProxyType({"softmax": softmax_kernel})

    def __init__(self, fmt: str, softmax: str = "shifted") -> None:
        import numpy

        self.fmt = FORMATS[fmt]
        self._np = numpy
        self.softmax = softmax
        self.dtype = {
            "float64": numpy.float64,
            "float32": numpy.float32,
            "float16": numpy.float16,
            "bfloat16": numpy.float32,
        }[fmt]

    def _r(self, a: Any) -> Any:
        a = self._np.asarray(a).astype(self.dtype)
        return _bf16(self._np, a) if self.fmt.name == "bfloat16" else a

    def _scalar(self, v: Any) -> Any:
        """One entry of a user step: a numpy scalar, or a rounding bfloat16 scalar."""
        return _BF16(v) if self.fmt.name == "bfloat16" else self._r(v)[()]

    def _fn(self, fn: Callable[[Any], Any], x: Any) -> Any:
        if isinstance(x, _BF16):
            return _BF16(fn(x.v))
        return self._r(fn(x))

    def const(self, x: Any) -> Any:
        return self._scalar(float(x))

    def matrix(self, m: sympy.MatrixBase) -> Any:
        return self._r(self._np.array([[float(e) for e in m.row(i)] for i in range(m.rows)]))

    def shape(self, a: np.ndarray) -> tuple[int, int]:
        return a.shape

    def entry(self, a: Any, i: int, j: int) -> Any:
        return _BF16(a[i, j]) if self.fmt.name == "bfloat16" else a[i, j]

    def from_rows(self, rows: Sequence[Sequence[Any]]) -> Any:
        return self._r(self._np.array([[float(x) for x in r] for r in rows]))

    def matmul(self, a: Any, b: Any) -> Any:
        return self._r(a @ b)

    def add(self, a: Any, b: Any) -> Any:
        return self._r(a + b)

    def sub(self, a: Any, b: Any) -> Any:
        return self._r(a - b)

    def scale(self, a: Any, s: Any) -> Any:
        return self._r(a * _BF16._of(s))

    def mul(self, a: Any, b: Any) -> Any:
        return self._r(a * b)

    def div(self, a: Any, b: Any) -> Any:
        return self._r(a / b)

    def transpose(self, a: Any) -> Any:
        return a.T

    def take_rows(self, a: Any, rows: Sequence[int]) -> Any:
        return a[list(rows), :]

    def take_cols(self, a: Any, start: int, stop: int) -> Any:
        return a[:, start:stop]

    def hstack(self, mats: Sequence[Any]) -> Any:
        return self._np.hstack(mats)

    def map(self, a: Any, fn: Callable[[Any], Any]) -> Any:
        return self._r(fn(a))

    def exp(self, x: Any) -> Any:
        return self._fn(self._np.exp, x)

    def sqrt(self, x: Any) -> Any:
        return self._fn(self._np.sqrt, x)

    def erf(self, x: Any) -> Any:
        from math import erf

        return self._fn(self._np.vectorize(erf), x)

    def tanh(self, x: Any) -> Any:
        return self._fn(self._np.tanh, x)

    def log(self, x: Any) -> Any:
        return self._fn(self._np.log, x)

    def abs(self, x: Any) -> Any:
        return self._fn(self._np.abs, x)

    def sin(self, x: Any) -> Any:
        return self._fn(self._np.sin, x)

    def cos(self, x: Any) -> Any:
        return self._fn(self._np.cos, x)

    def pi(self) -> Any:
        return self._scalar(self._np.pi)

    def neg_inf(self) -> Any:
        return self._scalar(-self._np.inf)

    def relu(self, x: Any) -> Any:
        if isinstance(x, _BF16):
            return _BF16(max(x.v, 0))
        return self._np.maximum(x, 0).astype(x.dtype)

    def first_above(self, a: Any, bound: int) -> int | None:
        return None  # a simulation computes what the format gives (e^20000 = inf)

    def sign(self, x: Any) -> int:
        return int(self._np.sign(_BF16._of(x)))

    def require_nonzero(self, x: Any, what: str) -> None:
        if self._np.any(self._np.asarray(_BF16._of(x)) == 0):
            raise ModelError(f"{what} is 0")

    def softmax_rows(self, s: Any) -> Any:
        """The max-shifted softmax frameworks use, or the textbook one (see ``softmax``)."""
        np = self._np
        shift = np.max(s, axis=1, keepdims=True) if self.softmax == "shifted" else 0
        e = self._r(np.exp(self._r(s - shift)))
        return self._r(e / self._r(e.sum(axis=1, keepdims=True)))
