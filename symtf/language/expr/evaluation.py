"""Exact evaluation of a parsed expression: SymPy values, each scalar with an interval
enclosure that keeps every operation within the limits of
:mod:`~symtf.language.expr.bounds`; references resolved by the caller.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from fractions import Fraction
from typing import Any, Protocol, TypeAlias

import sympy

from symtf.errors import ExpressionError, Undecided
from symtf.language.expr.bounds import (
    EXP_LIMIT,
    HALF,
    INFINITIES,
    IV,
    MAX_MAGNITUDE_DIGITS,
    MAX_OPERATIONS,
    MAX_POWER,
    MAX_RATIONAL_BITS,
    MAX_ROOT,
    MAX_TRIG_ARGUMENT,
    SIZE_LIMIT,
    TRIG_LIMIT,
    enclose,
    point_box,
    rational_bits,
    tanh_box,
    within,
)
from symtf.language.expr.nodes import (
    CONSTANTS,
    Constant,
    Node,
    Operand,
    Reference,
    Resolver,
    Superscript,
    position_of,
)
from symtf.language.syntax import (
    Brackets,
    Call,
    Chain,
    Literal,
    Power,
    Transpose,
    Tree,
    Unary,
    error,
)
from symtf.limits import EXP_ARGUMENT_REFUSED, MAX_EXP_ARGUMENT


class Parsed(Protocol):
    """What evaluation reads of a parsed expression: a
    :class:`~symtf.language.expr.Expression` (which hands itself to :func:`evaluate`)."""

    @property
    def text(self) -> str: ...

    @property
    def where(self) -> str: ...

    @property
    def root(self) -> Node: ...

    @property
    def literals(self) -> tuple[Literal, ...]: ...


@dataclass(frozen=True, slots=True)
class _Scalar:
    exact: sympy.Expr
    box: Any  # an mpmath interval enclosing ``exact``, or None when unknown (symbolic)


@dataclass(frozen=True, slots=True)
class _Matrix:
    rows: int
    cols: int
    entries: tuple[_Scalar, ...]  # row-major

    def at(self, i: int, j: int) -> _Scalar:
        return self.entries[i * self.cols + j]

    @property
    def shape(self) -> str:
        return f"{self.rows}×{self.cols}"


_Value: TypeAlias = _Scalar | _Matrix


class _Evaluator:
    def __init__(
        self,
        expression: Parsed,
        resolve: Resolver | None,
        replace: Mapping[int, Any] | None,
        boxes: Mapping[Any, Any] | None = None,
    ) -> None:
        self.expression = expression
        self.resolve = resolve
        self.backend: Any = None  # ExactBackend of the resolved values (node definitions)
        #: intervals known so far, by expression; seeded with the symbols a replacement
        #: may hold (each standing for any value of its interval)
        self.cache: dict[Any, Any] = dict(boxes or {})
        self.operations = 0
        self.replace: dict[int, _Scalar] = {}
        positions = {lit.pos for lit in expression.literals}
        for pos, value in (replace or {}).items():
            if pos not in positions:
                written = ", ".join(str(p) for p in sorted(positions)) or "none"
                raise ExpressionError(
                    f"{expression.where}: expected a literal position ({written})"
                    f" to replace but found {pos!r}"
                )
            self.replace[pos] = self._external_scalar(value, pos, f"the replacement at {pos}")

    # -- errors and accounting --
    def fail(self, pos: int, message: str) -> ExpressionError:
        return error(self.expression.text, self.expression.where, pos, message)

    def tick(self, pos: int, count: int = 1) -> None:
        self.operations += count
        if self.operations > MAX_OPERATIONS:
            raise self.fail(pos, f"expected at most {MAX_OPERATIONS} operations but needed more")

    def checked(self, exact: sympy.Expr, box: Any, pos: int) -> _Scalar:
        """Wrap a result, refusing undefined, too large or too long values."""
        if exact is sympy.nan or exact is sympy.zoo:
            raise self.fail(
                pos,
                "expected a defined value but found an undefined one"
                " (∞ − ∞, 0·∞ or division by zero)",
            )
        if exact.is_Rational:
            if rational_bits(exact) > MAX_RATIONAL_BITS:
                raise self.fail(
                    pos,
                    f"expected a number of at most {MAX_RATIONAL_BITS} bits but found a longer one",
                )
            box = point_box(exact)
        if box is not None and exact not in INFINITIES and not within(box, SIZE_LIMIT):
            raise self.fail(
                pos,
                f"expected a value of at most 10^{MAX_MAGNITUDE_DIGITS} in absolute value"
                " but found a larger one (or one that cannot be bounded)",
            )
        if exact.has(sympy.I):
            raise self.fail(pos, "expected a real value but found a complex one")
        return _Scalar(exact, box)

    # -- conversions --
    def _external_scalar(self, value: Any, pos: int, what: str) -> _Scalar:
        if isinstance(value, bool) or value is None:
            raise self.fail(pos, f"expected an exact number for {what} but found {value!r}")
        if isinstance(value, int):
            value = sympy.Integer(value)
        elif isinstance(value, Fraction):
            value = sympy.Rational(value.numerator, value.denominator)
        if not isinstance(value, sympy.Expr) or isinstance(value, sympy.MatrixBase):
            raise self.fail(
                pos, f"expected an exact SymPy number for {what} but found {type(value).__name__}"
            )
        known = all(x in self.cache for x in value.free_symbols)
        box = enclose(value, self.cache) if known else None
        return self.checked(value, box, pos)

    def _external(self, value: Any, pos: int, what: str) -> _Value:
        if isinstance(value, sympy.MatrixBase):
            rows, cols = value.shape
            if rows * cols == 0:
                raise self.fail(
                    pos, f"expected a non-empty value for {what} but found {rows}×{cols}"
                )
            self.tick(pos, rows * cols)
            entries = tuple(
                self._external_scalar(value[i, j], pos, what)
                for i in range(rows)
                for j in range(cols)
            )
            return _Matrix(rows, cols, entries)
        return self._external_scalar(value, pos, what)

    # -- dispatch --
    def value(self, node: Tree) -> _Value:
        match node:
            case Literal():
                if node.pos in self.replace:
                    return self.replace[node.pos]
                return self.checked(node.value, None, node.pos)
            case Superscript():
                return self.checked(sympy.Integer(node.value), None, node.pos)
            case Constant():
                exact = CONSTANTS[node.name]
                return _Scalar(exact, enclose(exact, self.cache))
            case Reference():
                return self.reference(node)
            case Unary():
                operand = self.value(node.operand)
                return operand if node.op == "+" else self.negate(operand, node.pos)
            case Chain():
                result = self.value(node.first)
                for link in node.rest:
                    result = self.binary(link, result, self.value(link.node))
                return result
            case Power():
                return self.power(node)
            case Transpose():
                operand = self.value(node.operand)
                if isinstance(operand, _Scalar):
                    return operand
                entries = tuple(
                    operand.at(i, j) for j in range(operand.cols) for i in range(operand.rows)
                )
                return _Matrix(operand.cols, operand.rows, entries)
            case Call():
                return self.call(node)
            case Brackets():
                return self.brackets(node)
        raise TypeError(f"not a syntax node: {node!r}")  # pragma: no cover

    def reference(self, node: Reference) -> _Value:
        if self.resolve is None:
            raise self.fail(node.pos, f"expected only numbers here but found the reference {node}")
        try:
            value = self.resolve(node.name, node.index)
        except ExpressionError as exc:
            raise self.fail(node.pos, f"cannot resolve {node}: {exc}") from exc
        except (LookupError, ValueError, TypeError) as exc:
            raise self.fail(node.pos, f"expected a known name but found {node} ({exc})") from exc
        if value is None:
            raise self.fail(node.pos, f"expected a known name but found {node}")
        return self._external(value, node.pos, str(node))

    # -- arithmetic on scalars --
    def add(self, a: _Scalar, b: _Scalar, pos: int) -> _Scalar:
        self.tick(pos)
        box = a.box + b.box if a.box is not None and b.box is not None else None
        return self.checked(a.exact + b.exact, box, pos)

    def mul(self, a: _Scalar, b: _Scalar, pos: int) -> _Scalar:
        self.tick(pos)
        box = a.box * b.box if a.box is not None and b.box is not None else None
        return self.checked(a.exact * b.exact, box, pos)

    def div(self, a: _Scalar, b: _Scalar, pos: int) -> _Scalar:
        self.tick(pos)
        if b.exact.is_zero:
            raise self.fail(pos, "expected a non-zero divisor but found 0")
        box = a.box / b.box if a.box is not None and b.box is not None else None
        return self.checked(a.exact / b.exact, box, pos)

    def neg_scalar(self, a: _Scalar, pos: int) -> _Scalar:
        self.tick(pos)
        return self.checked(-a.exact, -a.box if a.box is not None else None, pos)

    def negate(self, a: _Value, pos: int) -> _Value:
        if isinstance(a, _Scalar):
            return self.neg_scalar(a, pos)
        return _Matrix(a.rows, a.cols, tuple(self.neg_scalar(x, pos) for x in a.entries))

    def sign(self, a: _Scalar, pos: int, what: str) -> int:
        """The sign (-1, 0, 1) of a scalar, decided by its interval or exactly."""
        exact = a.exact
        if exact.is_Rational:
            return int(bool(exact > 0)) - int(bool(exact < 0))
        if a.box is not None:
            if (a.box.a > 0) is True:
                return 1
            if (a.box.b < 0) is True:
                return -1
        from symtf.backends.signs import exact_sign

        free = self.backend.user_symbols(exact) if self.backend is not None else exact.free_symbols
        if free and not (self.backend is not None and self.backend.undecided_in(exact)):
            raise self.fail(pos, f"expected {what} whose sign can be decided but found {exact}")
        try:  # certified: balls, then exact algebra (never SymPy's evalf-based guesses)
            return exact_sign(exact, self.backend)
        except (Undecided, TypeError) as e:
            text = self.expression.text
            pending = self.backend.undecided_in(exact) if self.backend is not None else []
            why = "; ".join(pending) if pending else str(e)
            raise Undecided(
                f"{self.expression.where}: the sign of {what} at column {pos + 1} of {text!r} "
                f"cannot be decided ({why})"
            ) from None

    def exp(self, arg: _Scalar, pos: int) -> _Scalar:
        self.tick(pos)
        # the rule steps keep too (symtf.limits): a large negative exponent is a tiny number
        if (
            arg.exact not in INFINITIES
            and arg.box is not None
            and (arg.box.b <= EXP_LIMIT) is not True
        ):
            raise self.fail(pos, EXP_ARGUMENT_REFUSED)
        box = IV.exp(arg.box) if arg.box is not None else None
        return self.checked(sympy.exp(arg.exact), box, pos)

    def pow_scalar(self, base: _Scalar, exponent: _Scalar, pos: int) -> _Scalar:
        self.tick(pos)
        b = base.exact
        if b is sympy.E:
            return self.exp(exponent, pos)
        if isinstance(b, sympy.exp):
            inner = self.checked(b.args[0], enclose(b.args[0], self.cache), pos)
            return self.exp(self.mul(inner, exponent, pos), pos)
        y = exponent.exact
        if y.is_Rational and y.q > MAX_ROOT and self.sign(base, pos, "a base") > 0:
            # ``10000^(-0.0078)``: a positive base to a decimal power is e^(y·ln b)
            return self.exp(self.mul(self.ln(base, pos), exponent, pos), pos)
        if not (y.is_Rational and y.q <= MAX_ROOT):
            raise self.fail(
                pos,
                f"expected an exponent that is a fraction p/q with q at most {MAX_ROOT} but found {y}",
            )
        if abs(y) > MAX_POWER:
            raise self.fail(
                pos, f"expected an exponent of at most {MAX_POWER} in absolute value but found {y}"
            )
        bits = max((rational_bits(r) for r in b.atoms(sympy.Rational)), default=0)
        if bits * abs(y) > MAX_RATIONAL_BITS:
            raise self.fail(
                pos,
                f"expected a power of at most {MAX_RATIONAL_BITS} bits"
                " but this one would be longer",
            )
        sign = self.sign(base, pos, "a base") if y < 0 or y.q > 1 else 1
        if y < 0 and sign == 0:
            raise self.fail(pos, "expected a non-zero base for a negative exponent but found 0")
        if y.q > 1 and sign < 0:
            raise self.fail(pos, f"expected a non-negative base for the exponent {y} but found {b}")
        box = None
        if base.box is not None and b not in INFINITIES:
            if y.q == 1:
                box = base.box ** int(y)
            elif y.q == 2:
                box = IV.sqrt(abs(base.box)) ** int(y.p)
            else:
                box = abs(base.box) ** (IV.mpf(int(y.p)) / int(y.q))
            if not within(box, SIZE_LIMIT):
                raise self.fail(
                    pos,
                    f"expected a value of at most 10^{MAX_MAGNITUDE_DIGITS} in absolute value"
                    " but this power is larger",
                )
        return self.checked(sympy.Pow(b, y), box, pos)

    def sqrt(self, a: _Scalar, pos: int) -> _Scalar:
        return self.pow_scalar(a, _Scalar(HALF, point_box(HALF)), pos)

    def sin(self, a: _Scalar, pos: int) -> _Scalar:
        return self.trig(sympy.sin, a, pos)

    def cos(self, a: _Scalar, pos: int) -> _Scalar:
        return self.trig(sympy.cos, a, pos)

    def trig(self, func: Any, a: _Scalar, pos: int) -> _Scalar:
        """``sin``/``cos`` of a bounded argument (radians), kept exact."""
        self.tick(pos)
        if a.exact in INFINITIES or (a.box is not None and not within(a.box, TRIG_LIMIT)):
            raise self.fail(
                pos,
                f"expected an angle of at most {MAX_TRIG_ARGUMENT} in absolute value"
                " but found a larger one",
            )
        box = (IV.sin if func is sympy.sin else IV.cos)(a.box) if a.box is not None else None
        return self.checked(func(a.exact), box, pos)

    def tanh(self, a: _Scalar, pos: int) -> _Scalar:
        self.tick(pos)
        if a.exact in INFINITIES:
            return self.checked(sympy.Integer(1 if a.exact is sympy.oo else -1), None, pos)
        if a.box is not None and not within(a.box, EXP_LIMIT):
            raise self.fail(
                pos,
                f"expected a tanh argument of at most {MAX_EXP_ARGUMENT} in absolute value"
                " but found a larger one",
            )
        box = tanh_box(a.box) if a.box is not None else None
        return self.checked(sympy.tanh(a.exact), box, pos)

    def ln(self, a: _Scalar, pos: int) -> _Scalar:
        self.tick(pos)
        if self.sign(a, pos, "a logarithm argument") <= 0:
            raise self.fail(pos, f"expected a positive logarithm argument but found {a.exact}")
        box = IV.log(a.box) if a.box is not None else None
        return self.checked(sympy.log(a.exact), box, pos)

    def compare(self, a: _Scalar, b: _Scalar, pos: int) -> int:
        if a.box is not None and b.box is not None:
            if (a.box.b < b.box.a) is True:
                return -1
            if (a.box.a > b.box.b) is True:
                return 1
        self.tick(pos)
        difference = self.checked(a.exact - b.exact, None, pos)
        return self.sign(difference, pos, "two values")

    # -- operators --
    def binary(self, link: Operand, a: _Value, b: _Value) -> _Value:
        op, pos = link.op, link.pos
        if isinstance(a, _Scalar) != isinstance(b, _Scalar) and op in ("+", "-", "∘"):
            # ``0 + [0.5, 0.5] @ [[5], [7]]``: a 1×1 product is the number it holds
            a, b = _unwrap(a), _unwrap(b)
        if op in ("+", "-"):
            if isinstance(a, _Scalar) and isinstance(b, _Scalar):
                return self.add(a, b if op == "+" else self.neg_scalar(b, pos), pos)
            if (
                isinstance(a, _Matrix)
                and isinstance(b, _Matrix)
                and (a.rows, a.cols) == (b.rows, b.cols)
            ):
                if op == "-":
                    b = self.negate(b, pos)
                    assert isinstance(b, _Matrix)
                return self.elementwise(a, b, self.add, pos)
            if isinstance(a, _Matrix) != isinstance(b, _Matrix):
                # ``[-0.8, 1.1, 0.1] - 1.1``: one number added to (or taken from) every entry
                if op == "-":
                    b = self.negate(b, pos)
                m, x = (a, b) if isinstance(a, _Matrix) else (b, a)
                assert isinstance(m, _Matrix) and isinstance(x, _Scalar)
                terms = (
                    (self.add(e, x, pos) for e in m.entries)
                    if m is a
                    else (self.add(x, e, pos) for e in m.entries)
                )
                return _Matrix(m.rows, m.cols, tuple(terms))
            raise self.fail(
                pos,
                f"expected two operands of one shape for '{link.text}' but"
                f" found {_shape(a)} and {_shape(b)}",
            )
        if op == "/":
            if isinstance(b, _Matrix):
                raise self.fail(pos, f"expected a scalar divisor but found {_shape(b)}")
            if isinstance(a, _Scalar):
                return self.div(a, b, pos)
            return _Matrix(a.rows, a.cols, tuple(self.div(x, b, pos) for x in a.entries))
        if op == "∘":
            if isinstance(a, _Scalar) and isinstance(b, _Scalar):
                return self.mul(a, b, pos)
            if (
                isinstance(a, _Matrix)
                and isinstance(b, _Matrix)
                and (a.rows, a.cols) == (b.rows, b.cols)
            ):
                return self.elementwise(a, b, self.mul, pos)
            raise self.fail(
                pos,
                f"expected two operands of one shape for '{link.text}' but"
                f" found {_shape(a)} and {_shape(b)}",
            )
        if op == "@":
            if isinstance(a, _Matrix) and isinstance(b, _Matrix):
                return self.matmul(a, b, link)
            raise self.fail(
                pos, f"expected two matrices for '@' but found {_shape(a)} and {_shape(b)}"
            )
        # "*": scalar product, scaling, or the matrix product
        if isinstance(a, _Scalar) and isinstance(b, _Scalar):
            return self.mul(a, b, pos)
        if isinstance(a, _Scalar):
            assert isinstance(b, _Matrix)
            return _Matrix(b.rows, b.cols, tuple(self.mul(a, x, pos) for x in b.entries))
        if isinstance(b, _Scalar):
            return _Matrix(a.rows, a.cols, tuple(self.mul(x, b, pos) for x in a.entries))
        return self.matmul(a, b, link)

    def elementwise(
        self, a: _Matrix, b: _Matrix, op: Callable[[_Scalar, _Scalar, int], _Scalar], pos: int
    ) -> _Matrix:
        return _Matrix(
            a.rows, a.cols, tuple(op(x, y, pos) for x, y in zip(a.entries, b.entries, strict=True))
        )

    def matmul(self, a: _Matrix, b: _Matrix, link: Operand) -> _Matrix:
        pos = link.pos
        if a.cols != b.rows:
            hint = (
                "; use '∘' or '.*' to multiply element-wise"
                if (a.rows, a.cols) == (b.rows, b.cols)
                else ""
            )
            raise self.fail(
                pos,
                f"expected a matrix product with inner sizes equal for '{link.text}' but found"
                f" {a.shape} and {b.shape}{hint}",
            )
        self.tick(pos, a.rows * b.cols * a.cols)
        entries = []
        for i in range(a.rows):
            for j in range(b.cols):
                total = self.mul(a.at(i, 0), b.at(0, j), pos)
                for k in range(1, a.cols):
                    total = self.add(total, self.mul(a.at(i, k), b.at(k, j), pos), pos)
                entries.append(total)
        return _Matrix(a.rows, b.cols, tuple(entries))

    def power(self, node: Power) -> _Value:
        base = self.value(node.base)
        exponent = self.value(node.exponent)
        if isinstance(base, _Matrix) or isinstance(exponent, _Matrix):
            raise self.fail(
                node.pos,
                f"expected scalars on both sides of a power but found {_shape(base)}"
                f" and {_shape(exponent)}",
            )
        return self.pow_scalar(base, exponent, node.pos)

    def call(self, node: Call) -> _Value:
        args = [self.value(arg) for arg in node.args]
        pos = node.pos
        name = node.name
        unary: dict[str, Callable[[_Scalar, int], _Scalar]] = {
            "sqrt": self.sqrt,
            "exp": self.exp,
            "ln": self.ln,
            "abs": self.absolute,
            "relu": self.relu,
            "sin": self.sin,
            "cos": self.cos,
            "tanh": self.tanh,
            "sigmoid": self.sigmoid,
        }
        if name == "softmax":
            return self.softmax(args[0], node)
        if name in unary:
            (arg,) = args
            if isinstance(arg, _Scalar):
                return unary[name](arg, pos)
            return _Matrix(arg.rows, arg.cols, tuple(unary[name](x, pos) for x in arg.entries))
        if name == "log":
            scalars = self.scalars(args, node)
            value = self.ln(scalars[0], pos)
            if len(scalars) == 2:
                base = self.ln(scalars[1], pos)
                if base.exact.is_zero:
                    raise self.fail(pos, "expected a logarithm base other than 1 but found 1")
                self.tick(pos)
                exact = sympy.log(scalars[0].exact, scalars[1].exact)
                box = (
                    value.box / base.box if value.box is not None and base.box is not None else None
                )
                return self.checked(exact, box, pos)
            return value
        items = self.entries(args, node)
        if name == "sum":
            total = items[0]
            for item in items[1:]:
                total = self.add(total, item, pos)
            return total
        best = items[0]
        for item in items[1:]:
            try:
                order = self.compare(item, best, pos)
            except Undecided:  # enclose the extreme without choosing
                return self.unordered(name == "max", items, pos)
            if (name == "max" and order > 0) or (name == "min" and order < 0):
                best = item
        return best

    def unordered(self, largest: bool, items: list[_Scalar], pos: int) -> _Scalar:
        """``max``/``min`` of values whose order cannot be decided: an unevaluated
        ``Max``/``Min`` (exact) whose interval is the hull of the extremes."""
        from symtf.backends.certify import OpenMax, OpenMin

        func = OpenMax if largest else OpenMin
        exact = func(*(i.exact for i in items))
        box = None
        if all(i.box is not None for i in items):
            pick = max if largest else min
            lo = pick((i.box.a for i in items), key=IV.mpf)
            hi = pick((i.box.b for i in items), key=IV.mpf)
            box = IV.mpf([lo, hi])
        return _Scalar(exact, box)

    def sigmoid(self, a: _Scalar, pos: int) -> _Scalar:
        """The logistic function, ``1 / (1 + e^(-a))``."""
        one = self.checked(sympy.Integer(1), None, pos)
        return self.div(one, self.add(one, self.exp(self.neg_scalar(a, pos), pos), pos), pos)

    def softmax(self, arg: _Value, node: Call) -> _Matrix:
        """Each row's exponentials over their sum (the last axis, as the op registry's
        ``softmax`` does by default)."""
        if isinstance(arg, _Scalar):
            raise self.fail(node.pos, "expected a row of numbers for softmax but found a scalar")
        pos = node.pos
        entries: list[_Scalar] = []
        for i in range(arg.rows):
            row = [self.exp(arg.at(i, j), pos) for j in range(arg.cols)]
            total = row[0]
            for x in row[1:]:
                total = self.add(total, x, pos)
            entries.extend(self.div(x, total, pos) for x in row)
        return _Matrix(arg.rows, arg.cols, tuple(entries))

    def absolute(self, a: _Scalar, pos: int) -> _Scalar:
        try:
            negative = self.sign(a, pos, "a value") < 0
        except Undecided:  # |a| = max(a, −a), enclosed without deciding the sign
            return self.unordered(True, [a, self.neg_scalar(a, pos)], pos)
        return self.neg_scalar(a, pos) if negative else a

    def relu(self, a: _Scalar, pos: int) -> _Scalar:
        try:
            positive = self.sign(a, pos, "a value") > 0
        except Undecided:  # max(a, 0), enclosed without deciding the sign
            return self.unordered(True, [a, self.checked(sympy.Integer(0), None, pos)], pos)
        if positive:
            return a
        return self.checked(sympy.Integer(0), None, pos)

    def scalars(self, args: list[_Value], node: Call) -> list[_Scalar]:
        for arg in args:
            if isinstance(arg, _Matrix):
                raise self.fail(
                    node.pos, f"expected scalar arguments for {node.name} but found {arg.shape}"
                )
        return [arg for arg in args if isinstance(arg, _Scalar)]

    def entries(self, args: list[_Value], node: Call) -> list[_Scalar]:
        if len(args) == 1 and isinstance(args[0], _Matrix):
            return list(args[0].entries)
        return self.scalars(args, node)

    def brackets(self, node: Brackets) -> _Matrix:
        items = [self.value(item) for item in node.items]
        if all(isinstance(item, _Scalar) for item in items):
            return _Matrix(1, len(items), tuple(x for x in items if isinstance(x, _Scalar)))
        first = items[0]
        if isinstance(first, _Matrix) and first.rows == 1:
            entries: list[_Scalar] = []
            for item, source in zip(items, node.items, strict=True):
                if not (isinstance(item, _Matrix) and item.rows == 1 and item.cols == first.cols):
                    raise self.fail(
                        position_of(source),
                        f"expected a row of {first.cols} like the first one but found"
                        f" {_shape(item)}",
                    )
                entries.extend(item.entries)
            return _Matrix(len(items), first.cols, tuple(entries))
        raise self.fail(
            node.pos, f"expected numbers or rows inside brackets but found {_shape(first)}"
        )


def _unwrap(v: _Value) -> _Value:
    """A 1×1 matrix as the scalar it holds; anything else as it is."""
    if isinstance(v, _Matrix) and v.rows == 1 and v.cols == 1:
        return v.entries[0]
    return v


def _shape(value: _Value) -> str:
    return "a scalar" if isinstance(value, _Scalar) else f"a {value.shape} matrix"


def evaluate(
    expression: Parsed,
    resolve: Resolver | None = None,
    replace: Mapping[int, Any] | None = None,
    *,
    backend: Any = None,
    node: Any = None,
    boxes: Mapping[Any, Any] | None = None,
) -> sympy.Expr | sympy.ImmutableMatrix:
    """Evaluate a parsed expression (or one node of its tree) exactly.

    Args:
        expression: The result of :func:`parse`.
        resolve: Called as ``resolve(name, index)`` for every reference; returns
            a SymPy scalar or matrix (an ``int`` or ``Fraction`` is accepted).
            Unknown names should raise ``KeyError`` (or return ``None``).
        replace: Exact values to use instead of some literals, keyed by the
            literal's position (``Literal.pos``); this is how the "upstream"
            reading of displayed arithmetic is computed.
        backend: The :class:`~symtf.backends.ExactBackend` whose node symbols
            resolved values may hold; signs (``max``, ``relu``, ``abs``) are
            then decided through their definitions.
        node: A node of ``expression``'s tree to evaluate instead of the whole
            (a bracket of a displayed line, ``0.0025 - (-0.002515)``).
        boxes: Symbols a replacement may hold, each with the mpmath interval of the
            values it stands for: a sign is decided over that interval, and the result
            holds the symbols (to be enclosed over parts of the intervals).

    Returns:
        A SymPy scalar, or an ``ImmutableMatrix`` (a bracketed row is 1×n).

    Raises:
        ExpressionError: A reference is unknown, shapes do not fit, a value is
            undefined or not real, or a limit described in the module
            docstring would be exceeded.
    """
    evaluator = _Evaluator(expression, resolve, replace, boxes)
    evaluator.backend = backend
    try:
        result = evaluator.value(expression.root if node is None else node)
    except ExpressionError:
        raise
    except (ArithmeticError, ValueError, RecursionError) as exc:
        raise ExpressionError(
            f"{expression.where}: could not evaluate {expression.text!r}: {exc}"
        ) from exc
    if isinstance(result, _Scalar):
        return result.exact
    return sympy.ImmutableMatrix(result.rows, result.cols, [x.exact for x in result.entries])
