"""What every backend shares: the defaults of the :class:`~symtf.backends.protocol.Backend` protocol.

A backend subclasses :class:`BaseBackend` and implements its scalars and its
native matrix operations (the abstract methods: a backend missing one cannot be
made, and mypy says so); the defaults here cover the rest entry by entry
(``ones``, the masks above the diagonal, stacking, ``abs`` and ``relu`` on a
certified sign), so a method a backend does not specialise is a slower path,
never an ``AttributeError``.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Callable, Mapping, Sequence
from fractions import Fraction
from types import MappingProxyType
from typing import Any

from symtf.errors import ModelError, Undecided, Unsupported

Scalar = Any
Mat = Any

_NO_KERNELS: Mapping[str, Callable[..., Any]] = MappingProxyType({})


class BaseBackend(ABC):
    """Shared defaults; subclasses implement scalars and native matrices.

    Attributes:
        name: Short name of the number system.
        certified: Whether values enclose the exact value.
        kernels: Op name -> this backend's own computation of that op (none here).
    """

    name = "base"
    certified = False
    kernels: Mapping[str, Callable[..., Any]] = _NO_KERNELS

    def __enter__(self) -> Any:
        return self

    def __exit__(self, *exc: object) -> None:
        return None

    def unsupported(self, op: str, reason: str) -> Unsupported:
        """The error to raise for an op this backend cannot run (evaluation escalates)."""
        return Unsupported(op, self.name, reason)

    # ---- what each backend implements natively
    @abstractmethod
    def const(self, x: Fraction | int | Any) -> Scalar: ...

    @abstractmethod
    def neg_inf(self) -> Scalar: ...

    @abstractmethod
    def pi(self) -> Scalar: ...

    @abstractmethod
    def sign(self, x: Scalar) -> int: ...

    @abstractmethod
    def exp(self, x: Any) -> Any: ...

    @abstractmethod
    def log(self, x: Any) -> Any: ...

    @abstractmethod
    def sqrt(self, x: Any) -> Any: ...

    @abstractmethod
    def erf(self, x: Any) -> Any: ...

    @abstractmethod
    def tanh(self, x: Any) -> Any: ...

    @abstractmethod
    def sin(self, x: Any) -> Any: ...

    @abstractmethod
    def cos(self, x: Any) -> Any: ...

    @abstractmethod
    def matrix(self, m: Any) -> Mat: ...

    @abstractmethod
    def from_rows(self, rows: Sequence[Sequence[Scalar]]) -> Mat: ...

    @abstractmethod
    def shape(self, a: Mat) -> tuple[int, int]: ...

    @abstractmethod
    def entry(self, a: Mat, i: int, j: int) -> Scalar: ...

    @abstractmethod
    def matmul(self, a: Mat, b: Mat) -> Mat: ...

    @abstractmethod
    def add(self, a: Mat, b: Mat) -> Mat: ...

    @abstractmethod
    def mul(self, a: Mat, b: Mat) -> Mat: ...

    @abstractmethod
    def div(self, a: Mat, b: Mat) -> Mat: ...

    @abstractmethod
    def scale(self, a: Mat, s: Scalar) -> Mat: ...

    @abstractmethod
    def transpose(self, a: Mat) -> Mat: ...

    # ---- defaults on the certified sign
    def require_nonzero(self, x: Scalar, what: str) -> None:
        if self.sign(x) == 0:
            raise ModelError(f"{what} is exactly 0")

    def require_nonzero_entries(self, a: Mat, what: Callable[[int], str]) -> None:
        """:meth:`require_nonzero` on every entry of the matrix ``a``, ``what(i)`` naming the
        entry at row-major position ``i`` (a backend with whole-array comparisons does it at
        once, with the same error)."""
        n, m = self.shape(a)
        for i in range(n):
            for j in range(m):
                self.require_nonzero(self.entry(a, i, j), what(i * m + j))

    def first_above(self, a: Mat, bound: int) -> int | None:
        """The row-major position of the first entry of the matrix ``a`` certainly greater
        than ``bound``; ``None`` when none is (an entry whose comparison is not certain passes)."""
        n, m = self.shape(a)
        c = self.const(bound)
        for i in range(n):
            for j in range(m):
                try:
                    if self.sign(self.entry(a, i, j) - c) > 0:
                        return i * m + j
                except (Undecided, TypeError, ValueError):
                    continue
        return None

    def require_nonnegative(self, x: Scalar, what: str) -> None:
        try:
            negative = self.sign(x) < 0
        except (Undecided, TypeError, ValueError):  # not certain (a ball around 0, an array)
            return
        if negative:
            raise ModelError(f"{what} is negative, so the value is not a real number")

    def is_zero(self, x: Any) -> bool:
        try:
            return bool(x == 0)
        except (TypeError, ValueError):
            return False

    def abs(self, x: Any) -> Any:
        return x if self.sign(x) >= 0 else -x

    def power(self, x: Scalar, n: int) -> Scalar:
        """``x`` to the integer power ``n`` (``n ≠ 0`` when ``x`` may be 0)."""
        return x**n

    def relu(self, x: Any) -> Any:
        return x if self.sign(x) > 0 else self.const(0)

    # ---- defaults built from entries
    def _rows(self, a: Mat) -> list[list[Scalar]]:
        n, m = self.shape(a)
        return [[self.entry(a, i, j) for j in range(m)] for i in range(n)]

    def ones(self, rows: int, cols: int) -> Mat:
        one = self.const(1)
        return self.from_rows([[one] * cols for _ in range(rows)])

    def fill_above(self, a: Mat, value: Scalar) -> Mat:
        n, m = self.shape(a)
        return self.from_rows(
            [[self.entry(a, i, j) if j <= i else value for j in range(m)] for i in range(n)]
        )

    def take_rows(self, a: Mat, rows: Sequence[int]) -> Mat:
        m = self.shape(a)[1]
        return self.from_rows([[self.entry(a, i, j) for j in range(m)] for i in rows])

    def take_cols(self, a: Mat, start: int, stop: int) -> Mat:
        n = self.shape(a)[0]
        return self.from_rows([[self.entry(a, i, j) for j in range(start, stop)] for i in range(n)])

    def hstack(self, mats: Sequence[Mat]) -> Mat:
        n = self.shape(mats[0])[0]
        return self.from_rows(
            [[self.entry(m, i, j) for m in mats for j in range(self.shape(m)[1])] for i in range(n)]
        )

    def vstack(self, mats: Sequence[Mat]) -> Mat:
        return self.from_rows([row for m in mats for row in self._rows(m)])

    def sub(self, a: Mat, b: Mat) -> Mat:
        return self.add(a, self.scale(b, self.const(-1)))

    def map(self, a: Mat, fn: Callable[[Any], Any]) -> Mat:
        return self.from_rows([[fn(x) for x in row] for row in self._rows(a)])


__all__ = ["BaseBackend"]
