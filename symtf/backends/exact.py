"""Exact SymPy arithmetic: the number system people read and exact decisions rest on.

Exact rationals, exact ``exp``/``sqrt``, or free symbols, as a DAG of named
one-level definitions (:class:`ExactBackend`). It implements the
:class:`~symtf.backends.protocol.Backend` protocol with SymPy ``ImmutableMatrix``
values.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from fractions import Fraction
from typing import Any, cast

import sympy

from symtf.backends.base import BaseBackend
from symtf.errors import ModelError, Undecided

Scalar = Any
Mat = Any


class ExactBackend(BaseBackend):
    """Exact SymPy arithmetic on ``ImmutableMatrix`` values.

    Closed forms of a whole forward pass grow fast (one logit of a 3-token,
    one-block model is ~50,000 operations), so entries larger than ``max_ops``
    are *named*: replaced by a node symbol such as ``l0.ln1[1,2]`` whose exact
    definition is kept in :attr:`defs`. Values stay exact; they are one-level
    definitions over earlier steps, a DAG rather than a tree.

    A branch the model must take on a sign that cannot be decided (a ReLU
    input, a LayerNorm variance that may be 0) does not stop the pass: the
    entry becomes a *pending* node (:attr:`undecided`) that no ball encloses,
    so every value computed from it is reported ``undecided`` with the reason
    (:meth:`undecided_in`), and every value that does not depend on it is
    checked as usual.

    Args:
        max_ops: Largest entry (in expression nodes) kept inline.
    """

    name = "exact"
    certified = True

    def __init__(self, max_ops: int = 60) -> None:
        self.max_ops = max_ops
        #: Node symbol -> its exact one-level definition.
        self.defs: dict[sympy.Symbol, sympy.Expr] = {}
        self._memo: dict[int, dict[sympy.Basic, Any]] = {}
        self._user: dict[sympy.Symbol, frozenset[sympy.Symbol]] = {}
        #: Pending node -> why its branch cannot be taken (see :meth:`undecided_in`).
        self.undecided: dict[sympy.Symbol, str] = {}
        #: Pending node -> the entry of the step that first held it (``l0.ffn_act[0, 1]``).
        self.undecided_at: dict[sympy.Symbol, str] = {}
        self._doubtful: dict[sympy.Expr, str] = {}
        self._tag = ""
        self._evaluations = 0
        self._ones: dict[tuple[int, int], sympy.ImmutableMatrix] = {}

    @contextmanager
    def apart(self) -> Iterator[ExactBackend]:
        """Evaluate again in this backend, the new steps' entries named apart.

        A replay or a convention's variant reuses this backend's values (whose node
        symbols it defines); the entries it computes anew are named ``step~k[i,j]``,
        so they never redefine the symbols the earlier values use.
        """
        saved = self._tag
        self._evaluations += 1
        self._tag = f"~{self._evaluations}"
        try:
            yield self
        finally:
            self._tag = saved

    def _pending(self, why: str) -> sympy.Symbol:
        """A node for a value whose branch cannot be decided; no ball encloses it."""
        node = sympy.Symbol(f"undecided[{len(self.undecided)}]", real=True)
        self.undecided[node] = why
        return node

    def undecided_in(self, e: Any) -> list[str]:
        """Why a value cannot be decided, one line per undecided branch it depends on.

        Empty when the value depends on no such branch.
        """
        if not self.undecided or not isinstance(e, sympy.Basic):
            return []
        nodes = sorted((s for s in self.user_symbols(e) if s in self.undecided), key=str)
        return [f"{self.undecided_at.get(s, str(s))}: {self.undecided[s]}" for s in nodes]

    def compact(self, name: str, value: Any) -> Any:
        """Name every entry of a step that is larger than ``max_ops``.

        Raises:
            ModelError: For an entry that is undefined (NaN: ``∞ − ∞``, ``0 · ∞``,
                ``∞ / ∞``), naming the step and the entry.
        """
        from symtf.tensor import Tensor

        if isinstance(value, Tensor):  # an N-D step: entries named step[b,h,i,j]
            out = []
            for idx, e in zip(value.indices(), value.data, strict=True):
                _defined(e, name, idx)
                if isinstance(e, sympy.Basic) and _larger_than(e, self.max_ops):
                    node = sympy.Symbol(f"{name}{self._tag}[{','.join(map(str, idx))}]", real=True)
                    self.defs[node] = e
                    e = node
                out.append(e)
            return Tensor(value.shape, out)
        if not isinstance(value, sympy.MatrixBase):
            return value
        rows = []
        for i in range(value.rows):
            row = []
            for j in range(value.cols):
                e = value[i, j]
                _defined(e, name, (i, j))
                if self.undecided and e in self.undecided and e not in self.undecided_at:
                    self.undecided_at[e] = f"{name}[{i}, {j}]"
                if _larger_than(e, self.max_ops):
                    node = sympy.Symbol(f"{name}{self._tag}[{i},{j}]", real=True)
                    self.defs[node] = e
                    e = node
                row.append(e)
            rows.append(row)
        return sympy.ImmutableMatrix(rows)

    def user_symbols(self, e: sympy.Expr) -> frozenset[sympy.Symbol]:
        """The free symbols a value depends on, looking through node definitions."""
        from symtf.dag import postorder

        def nodes_in(s: sympy.Symbol) -> list[sympy.Symbol]:
            return [t for t in self.defs[s].free_symbols if t in self.defs]

        out: set[sympy.Symbol] = set()
        for s in e.free_symbols:
            if s not in self.defs:
                out.add(s)
                continue
            # the nodes a node is defined from first (a stack: chains nest thousands deep)
            for n in postorder(s, nodes_in, self._user) or ():
                found: set[sympy.Symbol] = set()
                for t in self.defs[n].free_symbols:
                    found |= self._user[t] if t in self.defs else {t}
                self._user[n] = frozenset(found)
            out |= self._user[s]
        return frozenset(out)

    def ball(self, e: sympy.Expr, prec: int) -> Any:
        """A certified ball for a value (node definitions included)."""
        from symtf.backends.certify import ball

        return ball(e, prec, defs=self.defs, memo=self._memo.setdefault(prec, {}))

    def closed_form(self, e: sympy.Expr, max_ops: int = 400) -> sympy.Expr | None:
        """The value with node symbols expanded, or ``None`` if that exceeds ``max_ops``.

        Also ``None`` for a value holding a number too long to write out (``100000**1000``
        has 5,001 digits): such a value is shown as a certified decimal instead.
        """
        for _ in range(64):
            nodes = [s for s in e.free_symbols if s in self.defs]
            if not nodes:
                return None if _has_long_number(e) else e
            e = e.xreplace({s: self.defs[s] for s in nodes})
            if _larger_than(e, max_ops):
                return None
        return None

    def power(self, x: Scalar, n: int) -> Scalar:
        """``x ** n``, exactly: a rational whose power would exceed :data:`MAX_POWER_BITS`
        (``0.999 ** 1000000``) is kept as a node whose definition is the power unevaluated,
        so that balls enclose it (flint's power) without writing out its digits."""
        if isinstance(x, sympy.Rational) and x not in (0, 1, -1):
            bits = abs(n) * max(abs(int(x.p)).bit_length(), int(x.q).bit_length())
            if bits > MAX_POWER_BITS:
                node = sympy.Symbol(f"pow{self._tag}[{len(self.defs)}]", real=True)
                self.defs[node] = sympy.Pow(x, sympy.Integer(n), evaluate=False)
                return node
        return x ** sympy.Integer(n)

    def const(self, x: Fraction | int | sympy.Expr) -> sympy.Expr:
        """A scalar from an exact number."""
        if isinstance(x, Fraction):
            return sympy.Rational(x.numerator, x.denominator)
        return sympy.sympify(x) if isinstance(x, int) else x

    def matrix(self, m: sympy.MatrixBase) -> sympy.ImmutableMatrix:
        """A backend matrix from an exact SymPy matrix (or weights from a file)."""
        to_sympy = getattr(
            m, "to_sympy", None
        )  # symtf.spec.weights.FileMatrix: the exact path only
        return to_sympy() if to_sympy is not None else sympy.ImmutableMatrix(m)

    def shape(self, a: Mat) -> tuple[int, int]:
        # SymPy is untyped to mypy; a matrix's shape is its (rows, cols).
        return cast("tuple[int, int]", a.shape)

    def entry(self, a: Mat, i: int, j: int) -> sympy.Expr:
        return a[i, j]

    def from_rows(self, rows: Sequence[Sequence[Scalar]]) -> Mat:
        return sympy.ImmutableMatrix([list(r) for r in rows])

    def ones(self, rows: int, cols: int) -> Mat:
        """A matrix of exact ones (one per shape, shared)."""
        hit = self._ones.get((rows, cols))
        if hit is None:
            hit = self._ones[(rows, cols)] = sympy.ImmutableMatrix(rows, cols, [1] * (rows * cols))
        return hit

    def matmul(self, a: Mat, b: Mat) -> Mat:
        """``a @ b``. Rational matrices multiply in SymPy's rational domain (FLINT); any other
        entry is the Add of its nonzero products, written directly: SymPy's general product
        builds the very same sums, but first asks whether each factor of every ``0·x`` is
        finite (``0·∞`` is NaN), a slow question about a softmax's quotient of
        exponentials. A product with an infinity in it is still SymPy's to make."""
        rows, cols = a.tolist(), b.T.tolist()
        if _rational(rows) and _rational(cols):
            return sympy.ImmutableMatrix(a * b)
        zero = sympy.S.Zero
        out = []
        for r in rows:
            for c in cols:
                out.append(
                    sympy.Add(
                        *(
                            x * y
                            for x, y in zip(r, c, strict=True)
                            if not ((x is zero and _finite(y)) or (y is zero and _finite(x)))
                        )
                    )
                )
        return sympy.ImmutableMatrix(len(rows), len(cols), out)

    def add(self, a: Mat, b: Mat) -> Mat:
        return sympy.ImmutableMatrix(a + b)

    def sub(self, a: Mat, b: Mat) -> Mat:
        return sympy.ImmutableMatrix(a - b)

    def scale(self, a: Mat, s: Scalar) -> Mat:
        return sympy.ImmutableMatrix(a * s)

    def mul(self, a: Mat, b: Mat) -> Mat:
        if a is b:  # squares (a variance): x**2 is what x*x gives, built without Mul's search
            return sympy.ImmutableMatrix(a.rows, a.cols, [_square(e) for e in a])
        return sympy.ImmutableMatrix(a.multiply_elementwise(b))

    def div(self, a: Mat, b: Mat) -> Mat:
        if self._doubtful:
            return sympy.ImmutableMatrix(
                a.rows,
                a.cols,
                lambda i, j: (
                    self._pending(self._doubtful[b[i, j]])
                    if b[i, j] in self._doubtful
                    else a[i, j] / b[i, j]
                ),
            )
        return sympy.ImmutableMatrix(a.rows, a.cols, lambda i, j: a[i, j] / b[i, j])

    def transpose(self, a: Mat) -> Mat:
        return a.T

    def take_rows(self, a: Mat, rows: Sequence[int]) -> Mat:
        return sympy.ImmutableMatrix([list(a.row(i)) for i in rows])

    def take_cols(self, a: Mat, start: int, stop: int) -> Mat:
        return sympy.ImmutableMatrix(a[:, start:stop])

    def hstack(self, mats: Sequence[Mat]) -> Mat:
        return sympy.ImmutableMatrix(sympy.Matrix.hstack(*mats))

    def map(self, a: Mat, fn: Callable[[Scalar], Scalar]) -> Mat:
        return a.applyfunc(fn)

    def exp(self, x: Scalar) -> Scalar:
        return sympy.exp(self._named(x))

    def sqrt(self, x: Scalar) -> Scalar:
        if self._doubtful and x in self._doubtful:  # √ of a value that may be 0 feeds a division
            return self._pending(self._doubtful[x])
        if isinstance(x, sympy.Pow) and x.exp == 2 and not self.user_symbols(x):
            return self.abs(x.base)  # √(b²) = |b| on a certified sign (SymPy's Abs can recurse)
        if not self.user_symbols(x):
            self.require_nonnegative(x, "the argument of √")
        return self._built(sympy.sqrt, self._named(x))

    def _named(self, e: Scalar) -> Scalar:
        """A large argument gets a node name first: SymPy's ``sqrt``/``exp`` would otherwise
        query assumptions (evalf) over the whole expression, which takes seconds."""
        if not isinstance(e, sympy.Basic) or not _larger_than(e, self.max_ops):
            return e
        node = sympy.Symbol(f"arg[{len(self.defs)}]", real=True)  # brackets: never a user symbol
        self.defs[node] = e
        return node

    def erf(self, x: Scalar) -> Scalar:
        return sympy.erf(x)

    def log(self, x: Scalar) -> Scalar:
        if not self.user_symbols(x):
            self.require_nonnegative(x, "the argument of ln")
        return sympy.log(self._named(x))

    def abs(self, x: Scalar) -> Scalar:
        if self.user_symbols(x):
            return sympy.Abs(x)
        return x if self._sign(x) >= 0 else -x

    def tanh(self, x: Scalar) -> Scalar:
        return self._built(sympy.tanh, x)

    def sin(self, x: Scalar) -> Scalar:
        return self._built(sympy.sin, x)

    def cos(self, x: Scalar) -> Scalar:
        return self._built(sympy.cos, x)

    def _built(self, fn: Callable[[Scalar], Scalar], x: Scalar) -> Scalar:
        """``fn(x)``, or ``fn`` of a node name for ``x`` where SymPy's rewriting of the
        argument never ends (``tanh.eval`` on some sums of logarithms and radicals calls
        itself until the recursion limit; √ of some products expands without end)."""
        try:
            return fn(x)
        except RecursionError:
            if not isinstance(x, sympy.Basic) or self.user_symbols(x):
                raise
            node = sympy.Symbol(f"arg[{len(self.defs)}]", real=True)  # never a user symbol
            self.defs[node] = x
            return fn(node)

    def pi(self) -> Scalar:
        return sympy.pi

    def neg_inf(self) -> Scalar:
        return sympy.S.NegativeInfinity

    def relu(self, x: Scalar) -> Scalar:
        if self.user_symbols(x):
            return sympy.Max(0, x)
        # Decide the branch on a certified sign, never on Max's structural test.
        try:
            positive = self._sign(x) > 0
        except Undecided as e:
            return self._pending(f"a ReLU whose input's sign cannot be decided ({e})")
        return x if positive else sympy.S.Zero

    def sign(self, x: Scalar) -> int:
        free = self.user_symbols(x)
        pending = self.undecided_in(x) if free else []
        if pending:
            raise Undecided("; ".join(pending))
        if free:
            raise Undecided(f"the sign of {x} depends on the symbols {sorted(map(str, free))}")
        return self._sign(x)

    def require_nonzero(self, x: Scalar, what: str) -> None:
        if self.user_symbols(x):
            return
        try:
            zero = self._sign(x) == 0
        except Undecided as e:
            # Whatever divides by x becomes a pending node: checked claims that need it
            # are undecided with this reason, the others are unaffected.
            self._doubtful[x] = (
                f"cannot decide whether {what} is 0, so dividing by it may be undefined ({e})"
            )
            return
        if zero:
            raise ModelError(f"{what} is exactly 0")

    def _sign(self, x: sympy.Expr) -> int:
        from symtf.backends.signs import exact_sign

        return exact_sign(x, self)


def _defined(e: Any, name: str, index: tuple[int, ...]) -> None:
    if e is sympy.S.NaN:
        where = ", ".join(map(str, index))
        raise ModelError(
            f"{name}[{where}]: the value is undefined (NaN: ∞ − ∞, 0 · ∞ or ∞ / ∞ in exact "
            "arithmetic); an infinity among the inputs reaches an operation that has no value for it"
        )


def _square(e: sympy.Expr) -> sympy.Expr:
    """``e**2``. The square of a sum with no ``i`` and no infinity in it is the power as
    written: SymPy's ``Add._eval_power`` changes only a complex ``a + b·i`` or a sum of two
    terms one of which is infinite, and asks each term whether it is infinite to find out
    (slow for a softmax's quotients)."""
    if isinstance(e, sympy.Add) and not e.has(*_INFINITIES, sympy.I):
        return sympy.Pow(e, 2, evaluate=False)
    return e**2


def _rational(rows: list[list[Any]]) -> bool:
    return all(isinstance(e, sympy.Rational) for r in rows for e in r)


#: The infinities and NaN: a factor holding none of them is finite to SymPy, so its product
#: with 0 is 0.
_INFINITIES = (sympy.S.Infinity, sympy.S.NegativeInfinity, sympy.S.ComplexInfinity, sympy.S.NaN)


def _finite(e: sympy.Expr) -> bool:
    return isinstance(e, sympy.Rational) or not e.has(*_INFINITIES)


def infinite_sign(e: Any) -> int:
    """+1 or −1 for an exact value that is +∞ or −∞, 0 for a finite (or unknown) one.

    What SymPy's ``e.is_infinite`` and ``e.is_extended_positive`` say, asked only of a
    value with an infinity in it: of a value without one (a softmax's quotient of
    exponentials) the question runs SymPy's whole assumption system, and the answer
    is never yes.
    """
    if e is sympy.S.Infinity:
        return 1
    if e is sympy.S.NegativeInfinity:
        return -1
    if not isinstance(e, sympy.Basic) or isinstance(e, sympy.Rational) or not e.has(*_INFINITIES):
        return 0
    if e.is_infinite:
        return 1 if e.is_extended_positive else -1
    return 0


def _larger_than(e: sympy.Basic, limit: int) -> bool:
    """Whether ``e`` has ``limit`` nodes or more, or holds a number too long to show.

    One walk over the tree, which stops at the ``limit``-th node (most entries are a
    rational, looked at without a walk).
    """
    if isinstance(e, sympy.Rational):
        return _long(e)
    stack, n = [e], 0
    while stack:  # a walk over ``args`` (preorder_traversal's generator is several times slower)
        a = stack.pop()
        n += 1
        if n > limit:
            return True
        if isinstance(a, sympy.Rational):
            if _long(a):
                return True
        else:
            stack.extend(a.args)
    return False


def _long(a: sympy.Rational) -> bool:
    return bool(
        abs(int(a.p)).bit_length() > MAX_CLOSED_FORM_BITS
        or int(a.q).bit_length() > MAX_CLOSED_FORM_BITS
    )


#: Largest exact power of a rational written out, in bits of its numerator or denominator
#: (about 39,000 digits); a larger one is a node that balls enclose.
MAX_POWER_BITS = 1 << 17

#: Longest integer (numerator or denominator) a closed form may write out, in bits
#: (about 1,000 decimal digits; Python refuses to print an int of more than 4,300).
MAX_CLOSED_FORM_BITS = 3322


def _has_long_number(e: sympy.Basic) -> bool:
    """Whether ``e`` holds a rational whose numerator or denominator is too long to show."""
    return any(_long(a) for a in e.atoms(sympy.Rational))


__all__ = ["ExactBackend", "infinite_sign"]
