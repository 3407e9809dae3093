"""What an article's framework can print when it computes in a binary floating-point format.

PyTorch and TensorFlow compute in float32 (or float16/bfloat16); a softmax table
printed at 8 significant digits is what float32 gives, not the exact value. Two
number systems run the very same :mod:`symtf.ops`:

- :class:`FormatBallBackend`: a **certified enclosure** of every value the format
  can produce. Inputs are rounded to the format exactly (round to nearest even,
  as a framework stores ``0.1``), and every operation's result is widened by the
  standard model of floating-point arithmetic, ``fl(a∘b) = (a∘b)(1+δ) + η`` with
  ``|δ| ≤ u`` and ``|η|`` at most half the smallest subnormal, propagated in ball
  arithmetic through the same ops. Dot products and row sums of length ``n`` are
  widened by ``γ_n·Σ|a_k b_k|`` (``γ_n = n·u/(1 − n·u)``, Higham, Thm 3.5), which
  holds for every summation order, blocked or fused. Library functions (``exp``,
  ``erf``, ``tanh``, ``sin``, ``cos``, ``pow``) are taken to be accurate to
  :data:`LIBM_ULPS` units in the last place; ``sqrt`` is correctly rounded
  (IEEE 754). A softmax row covers both the textbook ``e^x / Σ e^x`` and the
  max-shifted ``e^{x−m} / Σ e^{x−m}`` every framework uses, with the division
  done either as a quotient or as a product by the reciprocal.
- :class:`~symtf.backends.format_sim.FormatSimBackend`: a **simulation** in that format with numpy
  (float64/float32/float16; bfloat16 by rounding float32 results to 8 significand
  bits after each operation), to show the value the format actually gives. It is
  a guide, never a verdict; tests check it lies inside the enclosure.

Scope: the enclosure covers the op order symtf records (two-pass mean and
variance, ``x − μ`` divided by the standard deviation). A fused kernel that
computes LayerNorm as ``x·s + b`` can round differently near the mean.

What a framework prints of a number held in a format (the shortest ``repr``, a simulated
print, a displayed line computed in the format) is :mod:`symtf.backends.format_print`.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from fractions import Fraction
from types import MappingProxyType
from typing import Any

import sympy
from flint import arb, ctx, fmpq

from symtf.backends.base import BaseBackend
from symtf.errors import ModelError, Undecided

#: Library functions (exp, erf, tanh, sin, cos) are assumed within this many ulps.
LIBM_ULPS = 2


@dataclass(frozen=True)
class Format:
    """A binary floating-point format.

    Attributes:
        name: ``float32`` and so on.
        precision: Significand bits, the implicit bit included (24 for float32).
        emin: Exponent of the smallest normal number.
        emax: Exponent of the largest finite number.
    """

    name: str
    precision: int
    emin: int
    emax: int

    @property
    def u(self) -> Fraction:
        """The unit roundoff ``2^−p`` (half an ulp of 1)."""
        return Fraction(1, 2**self.precision)

    @property
    def eta(self) -> Fraction:
        """Half the smallest subnormal: the absolute error of an underflowing result."""
        return Fraction(1, 2 ** (self.precision - self.emin)) / 2

    @property
    def max_finite(self) -> Fraction:
        """The largest finite number."""
        return (2 - Fraction(1, 2 ** (self.precision - 1))) * Fraction(2) ** self.emax


FORMATS: dict[str, Format] = {
    "float64": Format("float64", 53, -1022, 1023),
    "float32": Format("float32", 24, -126, 127),
    "float16": Format("float16", 11, -14, 15),
    "bfloat16": Format("bfloat16", 8, -126, 127),
}


def round_to_format(q: Fraction, fmt: Format) -> Fraction:
    """The exact value of ``q`` rounded to nearest (ties to even) in ``fmt``.

    Raises:
        Undecided: When ``q`` overflows the format.
    """
    if q == 0:
        return Fraction(0)
    sign = -1 if q < 0 else 1
    a = abs(q)
    e = a.numerator.bit_length() - a.denominator.bit_length()
    if Fraction(2) ** e > a:
        e -= 1
    e = max(e, fmt.emin)  # subnormals share the smallest normal's quantum
    quantum = Fraction(2) ** (e - fmt.precision + 1)
    n, rest = divmod(a, quantum)
    n = int(n)
    if rest * 2 > quantum or (rest * 2 == quantum and n % 2 == 1):
        n += 1
    out = n * quantum
    if out > fmt.max_finite:
        raise Undecided(f"{q} overflows {fmt.name}")
    return sign * out


def _arb(q: Fraction) -> arb:
    return arb(fmpq(q.numerator, q.denominator))


class FB:
    """A ball around every value one format can give for a scalar; arithmetic rounds.

    Args:
        b: The ball.
        fmt: The format whose rounding every operation adds.
    """

    __slots__ = ("b", "fmt")

    def __init__(self, b: arb, fmt: Format) -> None:
        self.b = b
        self.fmt = fmt

    # every operation: exact ball result, widened by one rounding
    def _r(self, r: arb, units: int = 1) -> FB:
        return FB(widen(r, self.fmt, units), self.fmt)

    def _inf(self, a: arb, b: arb, op: str) -> FB | None:
        """IEEE 754's exact result when an operand is ±∞ (a masked score), else ``None``.

        flint turns ``−∞ + 1`` into the indeterminate ``[+/- inf]``; a format computes
        ``−∞`` exactly, and ``x/∞`` is 0.

        Raises:
            Undecided: For ∞ − ∞, 0 × ∞ and ∞/∞, or a sign that is not certain.
        """
        ia, ib = _infinity(a), _infinity(b)
        if not ia and not ib:
            return None
        if op in ("+", "-"):
            ib = -ib if op == "-" else ib
            if ia and ib and ia != ib:
                raise Undecided(f"∞ − ∞ in {self.fmt.name}")
            return FB(arb("inf") if (ia or ib) > 0 else arb("-inf"), self.fmt)
        if op == "/" and ib:
            if ia:
                raise Undecided(f"∞/∞ in {self.fmt.name}")
            return FB(arb(0), self.fmt)
        other = b if ia else a
        sign = 1 if other > 0 else -1 if other < 0 else 0
        if not sign:
            raise Undecided(f"∞ times a value whose sign is not certain in {self.fmt.name}")
        s = (ia or ib) * sign
        return FB(arb("inf") if s > 0 else arb("-inf"), self.fmt)

    def _op(self, a: arb, b: arb, op: str) -> FB:
        special = self._inf(a, b, op)
        if special is not None:
            return special
        if op == "+":
            return self._r(a + b)
        if op == "-":
            return self._r(a - b)
        if op == "*":
            return self._r(a * b)
        return self._r(a / b)

    def unique_fmpz(self) -> Any:
        """The integer the ball certainly holds, or ``None`` (an index computed in a step)."""
        return self.b.unique_fmpz()

    def _other(self, o: Any) -> arb:
        if isinstance(o, FB):
            return o.b
        if isinstance(o, int):
            return _arb(round_to_format(Fraction(o), self.fmt))
        if isinstance(o, Fraction):
            return _arb(round_to_format(o, self.fmt))
        raise TypeError(f"cannot combine a {self.fmt.name} ball with {type(o).__name__}")

    def __add__(self, o: Any) -> FB:
        return self._op(self.b, self._other(o), "+")

    __radd__ = __add__

    def __sub__(self, o: Any) -> FB:
        return self._op(self.b, self._other(o), "-")

    def __rsub__(self, o: Any) -> FB:
        return self._op(self._other(o), self.b, "-")

    def __mul__(self, o: Any) -> FB:
        return self._op(self.b, self._other(o), "*")

    __rmul__ = __mul__

    def __truediv__(self, o: Any) -> FB:
        return self._op(self.b, self._other(o), "/")

    def __rtruediv__(self, o: Any) -> FB:
        return self._op(self._other(o), self.b, "/")

    def __neg__(self) -> FB:
        return FB(-self.b, self.fmt)  # exact

    def __pow__(self, o: Any) -> FB:
        """``x ** y`` as numpy computes it: ``x·x`` for 2, ``sqrt`` for 1/2, ``1/x`` for −1
        (one rounding each), otherwise the library ``pow`` (within :data:`LIBM_ULPS`)."""
        y = self._other(o)
        n = y.unique_fmpz() if y.is_exact() else None
        if n is not None and int(n) in (0, 1):
            return FB(arb(1), self.fmt) if int(n) == 0 else self
        if n is not None and int(n) in (2, -1):
            return self._r(self.b * self.b if int(n) == 2 else 1 / self.b)
        if y.is_exact() and y == arb(0.5):
            return self._r(self.b.sqrt())
        if n is not None:
            return self._r(self.b ** int(n), 2 * LIBM_ULPS)
        if not self.b > 0:
            raise Undecided(f"a {self.fmt.name} power of a base that may not be positive")
        return self._r((self.b.log() * y).exp(), 2 * LIBM_ULPS)

    def __rpow__(self, o: Any) -> FB:
        return self._r(self._other(o) ** self.b, 2 * LIBM_ULPS)

    def __gt__(self, o: Any) -> bool:
        return bool(self.b > self._other(o))

    def __lt__(self, o: Any) -> bool:
        return bool(self.b < self._other(o))

    def __repr__(self) -> str:
        return f"FB({self.b}, {self.fmt.name})"


def _infinity(x: arb) -> int:
    """+1 or −1 for an exact ±∞, 0 for anything else."""
    if x.is_finite() or not x.is_exact() or x.is_nan():
        return 0
    return 1 if float(x.mid()) > 0 else -1


def widen(r: arb, fmt: Format, units: int = 1) -> arb:
    """``r`` widened by ``units`` roundings of ``fmt`` (relative ``u`` plus the underflow term).

    Raises:
        Undecided: When the result may overflow the format.
    """
    if not r.is_finite():
        if r.is_exact() and not r.is_nan():
            return r  # −∞ (a masked score) stays exactly −∞
        raise Undecided(f"a {fmt.name} value is not finite")
    if r.abs_upper() > _arb(fmt.max_finite):
        raise Undecided(f"a value may overflow {fmt.name}")
    rad = r.abs_upper() * _arb(units * fmt.u) + _arb(units * fmt.eta)
    return r + arb(0, rad.abs_upper())


class FMat:
    """A matrix of :class:`FB` balls (rows of scalars); ``m[i, j]`` is the ball."""

    __slots__ = ("rows",)

    def __init__(self, rows: list[list[FB]]) -> None:
        self.rows = rows

    @property
    def shape(self) -> tuple[int, int]:
        """``(rows, columns)``."""
        return (len(self.rows), len(self.rows[0]) if self.rows else 0)

    def __getitem__(self, ij: tuple[int, int]) -> arb:
        i, j = ij
        return self.rows[i][j].b


def softmax_kernel(xp: Any, x: Any, *, axis: int = -1) -> Any:
    """The registry's ``softmax`` as the format computes it, along the rows of a matrix.

    Other cases (a tensor of more axes, another axis) return ``NotImplemented`` and run
    the op's own computation; a softmax down the columns is the rows' of the transpose.
    """
    from symtf.tensor import Tensor

    if x.ndim != 2 or axis not in (-1, 1) or not x.has_native():
        return NotImplemented
    return Tensor.wrap(xp, xp.softmax_rows(x.native(xp)), x.shape)


class FormatBallBackend(BaseBackend):
    """Certified enclosures of what a floating-point format computes (see the module doc).

    Args:
        fmt: ``float32``, ``float16``, ``bfloat16`` or ``float64``.
        prec: Working precision of the balls, in bits.
        radii: Optional ``id(matrix) -> half-widths`` of inputs known only to their
            printed precision (see :mod:`symtf.backends.rounded`), added before rounding.
        ties: Whether an undecidable sign counts as a tie (argmax) instead of raising.
    """

    name = "format-ball"
    certified = True  # of what the format computes, not of the exact value
    #: The format's own evaluation order of a softmax (max-shifted, or not; see softmax_rows).
    kernels: Mapping[str, Callable[..., Any]] = MappingProxyType({"softmax": softmax_kernel})

    def __init__(
        self,
        fmt: str,
        prec: int = 128,
        radii: Any = None,
        *,
        ties: bool = False,
    ) -> None:
        self.fmt = FORMATS[fmt]
        self.prec = prec
        self.radii = radii
        self.ties = ties

    def __enter__(self) -> FormatBallBackend:
        self._saved = ctx.prec
        ctx.prec = self.prec
        return self

    def __exit__(self, *exc: object) -> None:
        ctx.prec = self._saved

    # ---- scalars
    def _stored(self, x: Any) -> FB:
        """A number as the framework stores it: rounded to the format once."""
        if isinstance(x, Fraction):
            return FB(_arb(round_to_format(x, self.fmt)), self.fmt)
        if isinstance(x, int):
            return FB(_arb(round_to_format(Fraction(x), self.fmt)), self.fmt)
        e = sympy.sympify(x)
        if e.is_Rational:
            return FB(_arb(round_to_format(Fraction(int(e.p), int(e.q)), self.fmt)), self.fmt)
        from symtf.backends.certify import ball

        b = ball(e, self.prec)  # TypeError on free symbols: no enclosure
        return FB(widen(b, self.fmt, 2), self.fmt)  # computed in float64, then cast

    def const(self, x: Fraction | int | sympy.Expr) -> FB:
        return self._stored(x)

    def matrix(self, m: sympy.MatrixBase) -> FMat:
        extra = None if self.radii is None else self.radii.lookup(m)
        rows = []
        for i in range(m.rows):
            row = []
            for j in range(m.cols):
                if extra is None:
                    row.append(self._stored(m[i, j]))
                    continue
                # an input known to its printed precision: every value in its rounding
                # interval, each then stored in the format
                e, half = m[i, j], extra[i][j]
                if not half:
                    row.append(self._stored(e))
                    continue
                lo = Fraction(int(e.p), int(e.q)) - half
                hi = Fraction(int(e.p), int(e.q)) + half
                a = _arb(round_to_format(lo, self.fmt)).union(_arb(round_to_format(hi, self.fmt)))
                row.append(FB(a, self.fmt))
            rows.append(row)
        return FMat(rows)

    def shape(self, a: FMat) -> tuple[int, int]:
        return a.shape

    def entry(self, a: FMat, i: int, j: int) -> FB:
        return a.rows[i][j]

    def from_rows(self, rows: Sequence[Sequence[FB]]) -> FMat:
        return FMat([list(r) for r in rows])

    # ---- matrices
    def matmul(self, a: FMat, b: FMat) -> FMat:
        (n, k), (_, m) = a.shape, b.shape
        g = self._gamma(k)
        out = []
        for i in range(n):
            ra = a.rows[i]
            row = []
            for j in range(m):
                s = arb(0)
                t = arb(0)
                for p in range(k):
                    x, y = ra[p].b, b.rows[p][j].b
                    s += x * y
                    t += x.abs_upper() * y.abs_upper()
                row.append(self._dot(s, t, g, k))
            out.append(row)
        return FMat(out)

    def _gamma(self, n: int) -> arb:
        nu = n * self.fmt.u
        if nu >= 1:
            raise Undecided(f"a sum of {n} terms has no {self.fmt.name} error bound")
        return _arb(nu / (1 - nu))

    def _dot(self, s: arb, t: arb, g: arb, n: int) -> FB:
        """A sum ``s`` of ``n`` products whose magnitudes sum to at most ``t``."""
        if not s.is_finite():
            return FB(widen(s, self.fmt), self.fmt)
        if s.abs_upper() > _arb(self.fmt.max_finite):
            raise Undecided(f"a value may overflow {self.fmt.name}")
        rad = g * t + _arb(2 * n * self.fmt.eta)
        return FB(s + arb(0, rad.abs_upper()), self.fmt)

    def _each(self, a: FMat, b: FMat, fn: Callable[[FB, FB], FB]) -> FMat:
        return FMat(
            [
                [fn(x, y) for x, y in zip(ra, rb, strict=True)]
                for ra, rb in zip(a.rows, b.rows, strict=True)
            ]
        )

    def add(self, a: FMat, b: FMat) -> FMat:
        return self._each(a, b, lambda x, y: x + y)

    def sub(self, a: FMat, b: FMat) -> FMat:
        return self._each(a, b, lambda x, y: x - y)

    def mul(self, a: FMat, b: FMat) -> FMat:
        return self._each(a, b, lambda x, y: x * y)

    def div(self, a: FMat, b: FMat) -> FMat:
        return self._each(a, b, lambda x, y: x / y)

    def scale(self, a: FMat, s: FB) -> FMat:
        return FMat([[x * s for x in r] for r in a.rows])

    def transpose(self, a: FMat) -> FMat:
        n, m = a.shape
        return FMat([[a.rows[i][j] for i in range(n)] for j in range(m)])

    def take_rows(self, a: FMat, rows: Sequence[int]) -> FMat:
        return FMat([list(a.rows[i]) for i in rows])

    def take_cols(self, a: FMat, start: int, stop: int) -> FMat:
        return FMat([r[start:stop] for r in a.rows])

    def hstack(self, mats: Sequence[FMat]) -> FMat:
        n = mats[0].shape[0]
        return FMat([[x for m in mats for x in m.rows[i]] for i in range(n)])

    def map(self, a: FMat, fn: Callable[[FB], FB]) -> FMat:
        return FMat([[fn(x) for x in r] for r in a.rows])

    # ---- functions
    def _lib(self, x: FB, f: Callable[[arb], arb], ulps: int = LIBM_ULPS) -> FB:
        return FB(widen(f(x.b), self.fmt, 2 * ulps), self.fmt)

    def exp(self, x: FB) -> FB:
        return self._lib(x, arb.exp)

    def sqrt(self, x: FB) -> FB:
        return FB(widen(x.b.sqrt(), self.fmt), self.fmt)

    def erf(self, x: FB) -> FB:
        return self._lib(x, arb.erf)

    def log(self, x: FB) -> FB:
        return self._lib(x, arb.log)

    def abs(self, x: FB) -> FB:
        return FB(abs(x.b), self.fmt)  # exact

    def tanh(self, x: FB) -> FB:
        return self._lib(x, arb.tanh)

    def sin(self, x: FB) -> FB:
        return self._lib(x, arb.sin)

    def cos(self, x: FB) -> FB:
        return self._lib(x, arb.cos)

    def pi(self) -> FB:
        return FB(widen(arb.pi(), self.fmt, 2), self.fmt)

    def neg_inf(self) -> FB:
        return FB(arb("-inf"), self.fmt)

    def relu(self, x: FB) -> FB:
        if x.b > 0:
            return x
        if x.b < 0:
            return FB(arb(0), self.fmt)
        return FB(x.b.max(arb(0)).union(arb(0)), self.fmt)

    def is_zero(self, x: FB) -> bool:
        return bool(x.b.is_exact() and x.b.is_zero())

    def first_above(self, a: Any, bound: int) -> int | None:
        return None  # a simulation computes what the format gives (e^20000 = inf)

    def sign(self, x: FB) -> int:
        if x.b > 0:
            return 1
        if x.b < 0:
            return -1
        if (x.b.is_exact() and x.b.is_zero()) or self.ties:
            return 0
        raise Undecided(f"the {self.fmt.name} sign of {x.b} is not certain")

    def require_nonzero(self, x: FB, what: str) -> None:
        if x.b.is_exact() and x.b.is_zero():
            raise ModelError(f"{what} is exactly 0")
        if not (x.b > 0 or x.b < 0):
            raise Undecided(f"{what} may be 0 in {self.fmt.name}")

    def softmax_rows(self, s: FMat) -> FMat:
        """Softmax of each row, enclosing the textbook and the max-shifted evaluation."""
        return FMat([self.softmax_row(row) for row in s.rows])

    def softmax_row(self, row: Sequence[FB]) -> list[FB]:
        """Softmax of one row (a user step's softmax along an axis), both evaluations."""
        finite = [x.b for x in row if x.b.is_finite()]
        if not finite:
            raise ModelError("the softmax denominator is 0 (every entry is −∞)")
        m = finite[0]
        for b in finite[1:]:
            m = m.max(b)
        forms = []
        for shift in (None, m):
            es = []
            for x in row:
                if not x.b.is_finite():
                    es.append(arb(0))  # e^{−∞} is exactly 0 in every format
                    continue
                arg = x.b if shift is None else widen(x.b - shift, self.fmt)
                es.append(widen(arg.exp(), self.fmt, 2 * LIBM_ULPS))
            total = sum(es, arb(0))
            t = sum((e.abs_upper() for e in es), arb(0))
            tot = self._dot(total, t, self._gamma(len(es)), len(es)).b
            if not (tot > 0):
                raise Undecided(f"a softmax denominator may be 0 in {self.fmt.name}")
            # e / total, or e · fl(1/total): two roundings cover both
            forms.append([widen(e / tot, self.fmt, 2) for e in es])
        return [FB(a.union(b), self.fmt) for a, b in zip(*forms, strict=True)]


def as_format(value: Any, fmt: Format) -> Any:
    """A base-trace value (arb_mat, FMat, a numpy run's array, or an N-D tensor of balls
    or floats) as FB balls each rounded once to ``fmt``."""
    from symtf.tensor import Tensor

    def stored(b: Any) -> FB:
        if isinstance(b, FB):
            return FB(widen(b.b, fmt), fmt)
        if not isinstance(b, arb):  # a numpy run's value: its exact binary number
            b = arb(float(b))
        return FB(widen(b, fmt), fmt)

    if isinstance(value, Tensor):
        return Tensor(value.shape, [stored(b) for b in value.data])
    rows = [[x.b for x in r] for r in value.rows] if isinstance(value, FMat) else value.tolist()
    return FMat([[stored(b) for b in r] for r in rows])


__all__ = [
    "FORMATS",
    "FormatBallBackend",
    "as_format",
    "round_to_format",
]
