"""An N-D array of backend scalars (row-major): the value every op takes and gives.

The backends (:mod:`symtf.backends`) hold 2-D matrices in their native types
(SymPy, ``arb_mat``, midpoint–radius, numpy). A :class:`Tensor` of up to two
axes may *wrap* such a matrix (0-D as 1×1, 1-D as one row, 2-D as itself) so
that an op's 2-D case runs as one native product or map, never entry by entry;
its entries are read out only when an op needs them one at a time. A 3-D or
4-D tensor holds its entries. The trace records a 0-, 1- or 2-D value as the
backend's native matrix (a 1-D value as one row), so checking, diagnosis and
LaTeX read every step the same way.
"""

from __future__ import annotations

import math
from collections.abc import Iterator, Sequence
from typing import Any

from symtf.errors import ShapeError


def matrix_shape(shape: Sequence[int]) -> tuple[int, int] | None:
    """The 2-D shape a tensor of ``shape`` has as a native matrix (``None`` for 3-D and up)."""
    if len(shape) == 0:
        return (1, 1)
    if len(shape) == 1:
        return (1, shape[0])
    if len(shape) == 2:
        return (shape[0], shape[1])
    return None


class Tensor:
    """A shaped, immutable, row-major array of backend scalars.

    Args:
        shape: The dimensions (``()`` for a scalar).
        data: ``prod(shape)`` scalars, last axis fastest; or ``None`` with ``native``.
        native: A backend matrix holding the entries (``matrix_shape(shape)``).
        xp: The backend of ``native`` (needed to read its entries).
    """

    __slots__ = ("_data", "_native", "_xp", "shape")

    def __init__(
        self,
        shape: Sequence[int],
        data: Sequence[Any] | None = None,
        *,
        native: Any = None,
        xp: Any = None,
    ) -> None:
        self.shape = tuple(map(int, shape))
        self._native = native
        self._xp = xp
        if data is None:
            if native is None:
                raise ShapeError("a tensor needs its entries or a native matrix")
            self._data: tuple[Any, ...] | None = None
        else:
            self._data = tuple(data)
            if len(self._data) != math.prod(self.shape):
                raise ShapeError(f"{len(self._data)} entries do not fill shape {self.shape}")

    @classmethod
    def wrap(cls, xp: Any, native: Any, shape: Sequence[int] | None = None) -> Tensor:
        """A tensor over a backend matrix (its own 2-D shape unless ``shape`` says 0-D or 1-D)."""
        return cls(xp.shape(native) if shape is None else shape, native=native, xp=xp)

    @classmethod
    def over(cls, xp: Any, native: Any, shape: tuple[int, ...]) -> Tensor:
        """A tensor over a backend matrix whose ``shape`` an op has worked out (a tuple of
        ints of the matrix's 2-D shape): what :meth:`wrap` makes, without its checks (every
        op's native result is made here, and every stack of the draft's pre-filter)."""
        t = cls.__new__(cls)
        t.shape = shape
        t._native = native
        t._xp = xp
        t._data = None
        return t

    # ---- entries
    @property
    def data(self) -> tuple[Any, ...]:
        """The entries, row-major (read out of the native matrix once, when first asked for)."""
        if self._data is None:
            xp, m = self._xp, self._native
            n, k = xp.shape(m)
            self._data = tuple(xp.entry(m, i, j) for i in range(n) for j in range(k))
        return self._data

    def has_native(self) -> bool:
        """Whether the entries are held in a backend matrix (no unpacking needed)."""
        return self._native is not None

    def native(self, xp: Any) -> Any:
        """The backend matrix of a 0-, 1- or 2-D tensor (built from the entries if need be)."""
        if self._native is not None and self._xp is xp:
            return self._native
        ms = matrix_shape(self.shape)
        if ms is None:
            raise ShapeError(f"a {self.ndim}-D tensor has no 2-D matrix form")
        n, m = ms
        d = self.data
        out = xp.from_rows([list(d[i * m : (i + 1) * m]) for i in range(n)])
        self._native, self._xp = out, xp
        return out

    @property
    def ndim(self) -> int:
        """Number of axes."""
        return len(self.shape)

    @property
    def size(self) -> int:
        """Number of entries."""
        return math.prod(self.shape)

    def offset(self, idx: Sequence[int]) -> int:
        """The flat position of a full index (no negative indices)."""
        off = 0
        for k, n in zip(idx, self.shape, strict=True):
            if not 0 <= k < n:
                raise IndexError(f"index {tuple(idx)} is outside shape {self.shape}")
            off = off * n + k
        return off

    def __getitem__(self, idx: int | Sequence[int]) -> Any:
        """One entry, by a full index ``t[b, h, i, j]``."""
        if isinstance(idx, int):
            idx = (idx,)
        return self.data[self.offset(tuple(idx))]

    def item(self) -> Any:
        """The only entry of a one-entry tensor."""
        if self.size != 1:
            raise ShapeError(f"expected a single value, found shape {self.shape}")
        if self._data is None:
            return self._xp.entry(self._native, 0, 0)
        return self._data[0]

    def indices(self) -> Iterator[tuple[int, ...]]:
        """Every full index, row-major."""
        return iter(all_indices(self.shape))

    def tolist(self) -> Any:
        """Nested lists (a scalar for 0-D)."""
        if not self.shape:
            return self.data[0]

        def nest(data: Sequence[Any], shape: tuple[int, ...]) -> list[Any]:
            if len(shape) == 1:
                return list(data)
            step = math.prod(shape[1:])
            return [nest(data[k * step : (k + 1) * step], shape[1:]) for k in range(shape[0])]

        return nest(self.data, self.shape)

    def map(self, fn: Any) -> Tensor:
        """Apply ``fn`` to every entry."""
        return Tensor(self.shape, [fn(x) for x in self.data])

    def reshape(self, shape: Sequence[int]) -> Tensor:
        """The same entries in another shape of the same size (a 2-D view keeps its matrix)."""
        shape = tuple(int(n) for n in shape)
        if math.prod(shape) != self.size:
            raise ShapeError(f"cannot view shape {self.shape} as {shape}")
        if self._native is not None and self._data is None:
            ms = matrix_shape(shape)
            if ms is not None and ms == matrix_shape(self.shape):
                return Tensor(shape, native=self._native, xp=self._xp)
        return Tensor(shape, self.data)

    def __repr__(self) -> str:
        return f"Tensor(shape={self.shape}, {self.tolist()!r})"

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Tensor) and self.shape == other.shape and self.data == other.data

    def __hash__(self) -> int:
        return hash((self.shape, self.data))


def all_indices(shape: Sequence[int]) -> list[tuple[int, ...]]:
    """Every index of ``shape`` in row-major order."""
    out: list[tuple[int, ...]] = [()]
    for n in shape:
        out = [(*i, k) for i in out for k in range(n)]
    return out


def to_native(xp: Any, t: Tensor) -> Any:
    """A 0-, 1- or 2-D tensor as the backend's matrix (1-D as one row); N-D stays a tensor."""
    if t.ndim <= 2:
        return t.native(xp)
    return t


def from_native(xp: Any, value: Any, shape: tuple[int, ...] | None = None) -> Tensor:
    """A tensor from a recorded value (a native matrix or a tensor).

    Args:
        shape: The step's true shape (a 1-D step is recorded as one row); default 2-D.
    """
    if isinstance(value, Tensor):
        return value if shape is None or shape == value.shape else value.reshape(shape)
    if isinstance(value, tuple):
        raise ShapeError("this step holds token ids, not numbers")
    return Tensor.wrap(xp, value, shape)
