"""The one interface every number system implements, so every op runs in every backend.

An op of the registry (:mod:`symtf.ops`) is written once against :class:`Backend`:
scalars combined with ``+ − × ÷`` and the scalar functions below, and 2-D
matrices in the backend's own type (a SymPy ``ImmutableMatrix``, a python-flint
``arb_mat``, a midpoint–radius pair of float64 arrays, a numpy array), so that a
matrix product stays one native product (BLAS, ``arb_mat``) whatever op asked for it.

Branches are taken on :meth:`Backend.sign`, a certified three-way sign that raises
:class:`~symtf.errors.Undecided` when it cannot decide; a backend never guesses.
A backend that cannot run an op at all raises :class:`~symtf.errors.Unsupported`
(an ``Undecided`` with the reason), and evaluation escalates to the next certified
backend; no op ever meets an ``AttributeError``.

Most methods have shared defaults in :class:`symtf.backends.base.BaseBackend`;
a backend overrides what it does natively (the midpoint–radius backend its
vectorised masks, the float formats their softmax evaluation order, through
:attr:`Backend.kernels`).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from fractions import Fraction
from typing import Any, Protocol, runtime_checkable

#: A backend scalar: a SymPy expression, an ``arb`` ball, a float, a format ball.
Scalar = Any
#: A backend matrix (2-D): ``ImmutableMatrix``, ``arb_mat``, ``MR``, ``ndarray``, ``FMat``.
Mat = Any


@runtime_checkable
class Backend(Protocol):
    """A number system: its scalars, its 2-D matrices, and how it decides signs.

    Attributes:
        name: Short name (``exact``, ``ball``, ``midrad``, ``float``, ``format-ball``, …).
        certified: Whether every value encloses the exact value (exact counts).
        kernels: Op name -> a computation this backend does its own way
            (``kernel(xp, *tensors, **params)``, returning ``NotImplemented`` for the
            cases it leaves to the op's own computation).
    """

    name: str
    certified: bool
    kernels: Mapping[str, Callable[..., Any]]

    # ---- scalars
    def const(self, x: Fraction | int | Any) -> Scalar:
        """A scalar from an exact number (an int, a Fraction, an exact SymPy number)."""
        ...

    def neg_inf(self) -> Scalar:
        """−∞ exactly (the causal mask)."""
        ...

    def pi(self) -> Scalar:
        """π."""
        ...

    def sign(self, x: Scalar) -> int:
        """The certified sign of ``x``: −1, 0 or 1 (raises ``Undecided``)."""
        ...

    def require_nonzero(self, x: Scalar, what: str) -> None:
        """Raise ``ModelError`` naming ``what`` when ``x`` is exactly 0."""
        ...

    def require_nonzero_entries(self, a: Mat, what: Callable[[int], str]) -> None:
        """:meth:`require_nonzero` on every entry of the matrix ``a``; ``what(i)`` names the
        entry at row-major position ``i``."""
        ...

    def require_nonnegative(self, x: Scalar, what: str) -> None:
        """Raise ``ModelError`` naming ``what`` when ``x`` is certainly negative (√x and
        ln x would not be real numbers); a value whose sign is not certain passes."""
        ...

    def first_above(self, a: Mat, bound: int) -> int | None:
        """The row-major position of the first entry of the matrix ``a`` certainly greater
        than ``bound``, or ``None`` (an entry whose comparison is not certain passes)."""
        ...

    def is_zero(self, x: Scalar) -> bool:
        """Whether ``x`` is 0 as it stands (an exact zero, not one that needs proving)."""
        ...

    # ---- scalar functions; each also maps a whole matrix when given one (see ``map``)
    def exp(self, x: Any) -> Any:
        """``e^x``."""
        ...

    def log(self, x: Any) -> Any:
        """Natural logarithm."""
        ...

    def sqrt(self, x: Any) -> Any:
        """Square root."""
        ...

    def erf(self, x: Any) -> Any:
        """The error function."""
        ...

    def tanh(self, x: Any) -> Any:
        """Hyperbolic tangent."""
        ...

    def sin(self, x: Any) -> Any:
        """Sine."""
        ...

    def cos(self, x: Any) -> Any:
        """Cosine."""
        ...

    def abs(self, x: Any) -> Any:
        """``|x|``, on a certified sign."""
        ...

    def relu(self, x: Any) -> Any:
        """``max(0, x)``, on a certified sign."""
        ...

    def power(self, x: Scalar, n: int) -> Scalar:
        """``x`` to the integer power ``n`` (exact, or a node balls enclose when too long)."""
        ...

    # ---- matrices
    def matrix(self, m: Any) -> Mat:
        """A backend matrix from an exact SymPy matrix (or weights read from a file)."""
        ...

    def from_rows(self, rows: Sequence[Sequence[Scalar]]) -> Mat:
        """A matrix from rows of backend scalars."""
        ...

    def shape(self, a: Mat) -> tuple[int, int]:
        """``(rows, columns)``."""
        ...

    def entry(self, a: Mat, i: int, j: int) -> Scalar:
        """One entry as a backend scalar."""
        ...

    def matmul(self, a: Mat, b: Mat) -> Mat:
        """The matrix product."""
        ...

    def add(self, a: Mat, b: Mat) -> Mat:
        """Entry-wise sum of two matrices of one shape."""
        ...

    def sub(self, a: Mat, b: Mat) -> Mat:
        """Entry-wise difference."""
        ...

    def mul(self, a: Mat, b: Mat) -> Mat:
        """Entry-wise product."""
        ...

    def div(self, a: Mat, b: Mat) -> Mat:
        """Entry-wise quotient."""
        ...

    def scale(self, a: Mat, s: Scalar) -> Mat:
        """Every entry times the scalar ``s``."""
        ...

    def transpose(self, a: Mat) -> Mat:
        """The transpose."""
        ...

    def take_rows(self, a: Mat, rows: Sequence[int]) -> Mat:
        """The rows ``rows`` (in that order, repeats allowed)."""
        ...

    def take_cols(self, a: Mat, start: int, stop: int) -> Mat:
        """Columns ``start`` to ``stop − 1``."""
        ...

    def hstack(self, mats: Sequence[Mat]) -> Mat:
        """Matrices side by side."""
        ...

    def vstack(self, mats: Sequence[Mat]) -> Mat:
        """Matrices one under another."""
        ...

    def map(self, a: Mat, fn: Callable[[Any], Any]) -> Mat:
        """``fn`` on every entry (backends whose functions take whole arrays pass the array)."""
        ...

    def ones(self, rows: int, cols: int) -> Mat:
        """A matrix of exact ones."""
        ...

    def fill_above(self, a: Mat, value: Scalar) -> Mat:
        """``a`` with every entry above the diagonal set to ``value`` (−∞ or 0)."""
        ...


__all__ = ["Backend", "Mat", "Scalar"]
