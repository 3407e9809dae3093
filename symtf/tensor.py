"""An N-D array of backend scalars (row-major), the value of a user step.

The backends of :mod:`symtf.backends` hold 2-D matrices in their native types
(SymPy, ``arb_mat``, numpy). Steps may be 0-D to 4-D, so the graph keeps a
:class:`Tensor` of the backend's *scalars* (SymPy expressions, ``arb`` balls or
floats) and converts to the native matrix at the edges: a 0-, 1- or 2-D step is
recorded in the trace as a native matrix (a 1-D step as one row), so checking,
diagnosis and LaTeX read it as they read any template step.
"""

from __future__ import annotations

import math
from collections.abc import Iterator, Sequence
from typing import Any

from symtf.errors import ShapeError


class Tensor:
    """A shaped, immutable, row-major tuple of backend scalars.

    Args:
        shape: The dimensions (``()`` for a scalar).
        data: ``prod(shape)`` scalars, last axis fastest.
    """

    __slots__ = ("data", "shape")

    def __init__(self, shape: Sequence[int], data: Sequence[Any]) -> None:
        self.shape = tuple(int(n) for n in shape)
        self.data = tuple(data)
        if len(self.data) != math.prod(self.shape):
            raise ShapeError(f"{len(self.data)} entries do not fill shape {self.shape}")

    @property
    def ndim(self) -> int:
        """Number of axes."""
        return len(self.shape)

    @property
    def size(self) -> int:
        """Number of entries."""
        return len(self.data)

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
        return self.data[0]

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
        """The same entries in another shape of the same size."""
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
    if t.ndim == 0:
        return xp.from_rows([[t.data[0]]])
    if t.ndim == 1:
        return xp.from_rows([list(t.data)])
    if t.ndim == 2:
        n, m = t.shape
        return xp.from_rows([list(t.data[i * m : (i + 1) * m]) for i in range(n)])
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
    n, m = xp.shape(value)
    data = [xp.entry(value, i, j) for i in range(n) for j in range(m)]
    return Tensor(shape if shape is not None else (n, m), data)
