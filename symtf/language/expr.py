"""A small, safe expression language for the arithmetic an article displays.

An article writes ``e^2.309 ≈ 10.068`` or ``5.652 / 21.372 ≈ 0.264``; a
derivation file copies the left-hand side as an *expression* and this module
turns it into an exact SymPy value. The text is read by the hand-written
tokenizer and recursive-descent parser of :mod:`symtf.language.syntax` (shared with the
step language) into a small immutable syntax tree; nothing is ever handed to ``eval``, ``exec``, ``compile``, ``sympify``,
``parse_expr`` or Python's ``ast``.

Language:

* numbers: ``3``, ``1.732``, ``.5``, ``1e-3`` (read exactly: ``1.732`` is
  ``Rational(1732, 1000)``), constants ``e`` (Euler's number), ``pi``/``π``
  and ``inf``/``∞``;
* operators, loosest first: ``+ -``; ``* × · ⋅ / ÷ @ ∘ .*``; unary ``+ -``;
  ``^``/``**`` (right-associative), superscripts (``3²``, ``x⁻¹``) and the
  transpose ``ᵀ``/``^T``; ``−`` (U+2212) is a minus sign; ``√x`` is ``sqrt(x)``;
* functions (case-insensitive): ``sqrt exp ln log abs relu sin cos tanh max
  min sum``; ``log(x)`` is the natural logarithm, ``log(x, b)`` the base-``b``
  one; ``sin``/``cos`` take radians (``sin(0.03)``, a positional encoding);
  ``sqrt exp ln abs relu sin cos tanh`` act element-wise on matrices; ``max min sum`` take
  several scalars or one matrix;
* brackets: ``[1, 2, 3]`` is a 1×3 row, ``[[1, 2], [3, 4]]`` a 2×2 matrix
  (the items of a bracket may also be rows obtained from references);
* references: a dotted name with an optional index, ``l0.h0.scaled[0, 2]``,
  ``l0.h0.pattern[1]`` or ``A_1``, resolved by a caller-supplied callback.

Products: ``×``/``*``/``·`` multiply scalars, scale a matrix by a scalar, and
are the matrix product between two matrices of compatible shapes; ``@`` is
the matrix product only; ``∘``/``.*`` are element-wise. Two same-shape rows are
never multiplied implicitly element-wise. ``+``/``-`` between a matrix and a number
add the number to (or take it from) every entry: ``[-0.8, 1.1, 0.1] - 1.1``.

Limits keep hostile input cheap: at most 2000 characters, numbers of at most
60 characters with ``|exponent| <= 100``, nesting depth at most 50, powers
only with integer or half-integer exponents of magnitude at most 1000 (any
real exponent is allowed on ``e``), ``exp`` only of arguments provably within
``[-10^4, 10^4]``, and no value larger than ``10^5000``. Sizes are bounded
with cheap interval arithmetic before any large number is built.

Example:
    >>> expr = parse("5.652 / 21.372", where="example")
    >>> expr.evaluate()
    471/1781
    >>> [lit.text for lit in expr.literals]
    ['5.652', '21.372']
    >>> parse("e^1.732", where="example").evaluate()
    exp(433/250)
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from fractions import Fraction
from typing import Any, TypeAlias, cast

import sympy
from mpmath.ctx_iv import MPIntervalContext

from symtf.errors import ExpressionError, Undecided
from symtf.language.syntax import (
    MAX_DEPTH,
    MAX_LENGTH,
    MAX_LITERAL_CHARS,
    MAX_LITERAL_EXPONENT,
    Brackets,
    Call,
    Chain,
    Link,
    Literal,
    Parser,
    Power,
    Token,
    Transpose,
    Tree,
    Unary,
    check_text,
    error,
)
from symtf.limits import EXP_ARGUMENT_REFUSED, MAX_EXP_ARGUMENT

__all__ = [
    "FUNCTIONS",
    "MAX_DEPTH",
    "MAX_EXP_ARGUMENT",
    "MAX_LENGTH",
    "MAX_LITERAL_CHARS",
    "MAX_LITERAL_EXPONENT",
    "MAX_MAGNITUDE_DIGITS",
    "MAX_POWER",
    "MAX_TRIG_ARGUMENT",
    "Brackets",
    "Call",
    "Chain",
    "Constant",
    "Expression",
    "Literal",
    "Node",
    "Operand",
    "Power",
    "Reference",
    "Resolver",
    "Superscript",
    "Transpose",
    "Unary",
    "evaluate",
    "parse",
]

#: Largest ``|y|`` in ``x^y`` (for a base other than ``e``).
MAX_POWER = 1000
#: Largest q in an exponent p/q (``\\sqrt[q]{x}``); roots need a non-negative base.
MAX_ROOT = 16
#: Largest angle accepted by ``sin``/``cos`` (radians), in absolute value.
MAX_TRIG_ARGUMENT = 1_000_000
#: No value may exceed ``10**MAX_MAGNITUDE_DIGITS`` in absolute value.
MAX_MAGNITUDE_DIGITS = 5000
#: Largest exact rational, counted as bits of numerator plus denominator.
MAX_RATIONAL_BITS = 50_000
#: Most scalar operations one evaluation may perform.
MAX_OPERATIONS = 200_000

#: Function names and how many arguments each takes (``None``: one or more).
FUNCTIONS: dict[str, tuple[int, int | None]] = {
    "sqrt": (1, 1),
    "exp": (1, 1),
    "ln": (1, 1),
    "log": (1, 2),
    "abs": (1, 1),
    "relu": (1, 1),
    "sin": (1, 1),
    "cos": (1, 1),
    "tanh": (1, 1),
    "max": (1, None),
    "min": (1, None),
    "sum": (1, None),
}

_CONSTANTS: dict[str, sympy.Expr] = {
    "e": sympy.E,
    "pi": sympy.pi,
    "π": sympy.pi,
    "inf": sympy.oo,
    "∞": sympy.oo,
}

# ---------------------------------------------------------------------------
# Syntax tree: the shared nodes of :mod:`symtf.language.syntax` (``Literal``, ``Unary``,
# ``Chain``, ``Power``, ``Transpose``, ``Call``, ``Brackets``) and these three.

#: One ``op operand`` link of a :class:`Chain` (the step language calls it ``Link``).
Operand = Link


@dataclass(frozen=True, slots=True)
class Superscript:
    """A superscript integer exponent such as the ``²`` of ``3²``.

    Attributes:
        pos: Offset of its first character.
        text: The superscript as written.
        value: Its integer value.
    """

    pos: int
    text: str
    value: int


@dataclass(frozen=True, slots=True)
class Constant:
    """A named constant: ``e``, ``pi``/``π`` or ``inf``/``∞``.

    Attributes:
        pos: Offset of its first character.
        name: The name as written.
    """

    pos: int
    name: str


@dataclass(frozen=True, slots=True)
class Reference:
    """A reference to a trace entry or another claim, e.g. ``l0.h0.scaled[0, 2]``.

    Attributes:
        pos: Offset of its first character.
        name: The dotted name (``"l0.h0.scaled"``).
        index: The integer index written after it (``(0, 2)``), or ``()``.
    """

    pos: int
    name: str
    index: tuple[int, ...]

    def __str__(self) -> str:
        if not self.index:
            return self.name
        return f"{self.name}[{', '.join(str(i) for i in self.index)}]"


Node: TypeAlias = (
    Literal
    | Superscript
    | Constant
    | Reference
    | Unary
    | Chain
    | Power
    | Transpose
    | Call
    | Brackets
)

#: ``resolve(name, index)`` returns the exact value a reference stands for.
Resolver: TypeAlias = Callable[[str, tuple[int, ...]], Any]


# ---------------------------------------------------------------------------
# Parser


class _Parser(Parser):
    """Displayed arithmetic on the shared core.

    ``√`` binds tighter than a superscript (``√x²`` is ``(√x)²``); a name is a
    function, a constant or a reference with an optional integer index; ``^T``
    is the transpose unless ``[`` or ``(`` follows the ``T``. Every literal and
    reference is also collected, in order.
    """

    def __init__(self, text: str, where: str) -> None:
        super().__init__(text, where)
        self.literals: list[Literal] = []
        self.references: list[Reference] = []

    def caret_transpose(self) -> bool:
        nxt = self.tokens[self.i + 1] if self.tok.kind != "end" else self.tok
        return super().caret_transpose() and not (nxt.kind == "op" and nxt.value in ("[", "("))

    def operand(self) -> Tree:
        return self.radical(self.operand) if self.is_op("√") else self.primary()

    def superscript(self, tok: Token) -> Superscript:
        return Superscript(tok.pos, tok.text, int(tok.value))

    def number(self, tok: Token) -> Literal:
        literal = super().number(tok)
        self.literals.append(literal)
        return literal

    def name(self) -> Node:
        tok = self.advance()
        name = tok.text
        if self.is_op("("):
            key = name.lower()
            if key not in FUNCTIONS:
                known = ", ".join(sorted(FUNCTIONS))
                raise error(
                    self.text,
                    self.where,
                    tok.pos,
                    f"expected a function name ({known}) but found '{name}'",
                )
            return self.call(tok, key)
        if name.lower() in FUNCTIONS and "." not in name:
            raise self.fail(f"'(' after the function name '{name}'")
        if name in _CONSTANTS:
            return Constant(tok.pos, name)
        index: tuple[int, ...] = ()
        if self.is_op("["):
            index = self.index()
        reference = Reference(tok.pos, name, index)
        self.references.append(reference)
        return reference

    def call(self, tok: Token, key: str) -> Call:
        opening = self.advance()
        self.enter(opening.pos)
        args = self.listed(self.additive)
        self.leave()
        self.expect(")", f"to close the call of {tok.text} at column {tok.pos + 1}")
        low, high = FUNCTIONS[key]
        self.check_arity(tok, len(args), low, high, "or", f"argument(s) for {tok.text}")
        return Call(tok.pos, key, tuple(args))

    def index(self) -> tuple[int, ...]:
        opening = self.advance()
        values: list[int] = []
        while True:
            tok = self.tok
            if tok.kind != "num" or not tok.text.isascii() or not tok.text.isdigit():
                raise self.fail("a non-negative integer index")
            self.advance()
            values.append(int(tok.text))
            if self.is_op(","):
                self.advance()
                continue
            self.expect("]", f"to close the index opened at column {opening.pos + 1}")
            return tuple(values)


def _pos(node: Tree) -> int:
    return node.pos


# ---------------------------------------------------------------------------
# Public parse result


@dataclass(frozen=True, slots=True)
class Expression:
    """A parsed expression: its text, syntax tree, literals and references.

    Attributes:
        text: The expression exactly as given.
        where: Where it came from, used in error messages
            (``"birds.toml: claims[12].expression"``).
        root: The syntax tree.
        literals: Every number literal, in order of appearance (exponent
            superscripts and reference indices are not literals).
        references: Every reference, in order of appearance.
    """

    text: str
    where: str
    root: Node
    literals: tuple[Literal, ...]
    references: tuple[Reference, ...]

    def literals_with_text(self, text: str) -> tuple[Literal, ...]:
        """Return the literals written exactly as ``text`` (``"1.732"``)."""
        return tuple(lit for lit in self.literals if lit.text == text)

    def evaluate(
        self,
        resolve: Resolver | None = None,
        replace: Mapping[int, Any] | None = None,
        *,
        backend: Any = None,
        node: Any = None,
    ) -> sympy.Expr | sympy.ImmutableMatrix:
        """Evaluate exactly; see :func:`evaluate`."""
        return evaluate(self, resolve, replace, backend=backend, node=node)

    def __str__(self) -> str:
        return self.text


def parse(text: str, *, where: str = "expression") -> Expression:
    """Parse an expression of the small language described in this module.

    Args:
        text: The expression, e.g. ``"0.264×[2,2,1] + 0.264×[1,1,2]"``.
        where: Where the text came from, for error messages.

    Returns:
        The parsed :class:`Expression`.

    Raises:
        ExpressionError: The text is not a string, is too long, or is not a
            well-formed expression; the message shows the place with a caret.
    """
    parser = _Parser(check_text(text, where), where)
    root = cast(Node, parser.parse())  # this parser builds only displayed-arithmetic nodes
    return Expression(text, where, root, tuple(parser.literals), tuple(parser.references))


# ---------------------------------------------------------------------------
# Evaluation

_IV = MPIntervalContext()
_IV.prec = 113
_EXP_LIMIT = _IV.mpf(MAX_EXP_ARGUMENT)
_SIZE_LIMIT = _IV.mpf(10) ** MAX_MAGNITUDE_DIGITS
# Enclosures of resolved values are not computed through exp of arguments this large.
_ENCLOSE_EXP_LIMIT = _IV.mpf(10) ** 6
_TRIG_LIMIT = _IV.mpf(MAX_TRIG_ARGUMENT)
_NEG_INFINITY = -sympy.oo
_HALF = sympy.Rational(1, 2)
_INFINITIES = (sympy.oo, _NEG_INFINITY)


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


def _rational_bits(x: sympy.Rational) -> int:
    return int(x.p).bit_length() + int(x.q).bit_length()


def _point_box(x: sympy.Rational) -> Any:
    if x.q == 1:
        return _IV.mpf(int(x.p))
    return _IV.mpf(int(x.p)) / _IV.mpf(int(x.q))


def _within(box: Any, limit: Any) -> bool:
    """Whether ``|box| <= limit`` is certain."""
    return (abs(box).b <= limit) is True


def _enclose_node(node: sympy.Basic, args: list[Any]) -> Any:
    """An interval around one SymPy node, given intervals around its arguments."""
    if node.is_Rational:
        return _point_box(node)
    if node.is_Float:
        return _point_box(sympy.Rational(node))
    if node is sympy.E:
        return _IV.e
    if node is sympy.pi:
        return _IV.pi
    if node is sympy.oo:
        return _IV.mpf("inf")
    if node is _NEG_INFINITY:
        return _IV.mpf("-inf")
    if not node.args or any(a is None for a in args):
        return None
    if node.is_Add:
        total = args[0]
        for a in args[1:]:
            total = total + a
        return total
    if node.is_Mul:
        product = args[0]
        for a in args[1:]:
            product = product * a
        return product
    if node.is_Pow:
        base, exponent = args
        y = node.exp
        if y.is_Integer and abs(int(y)) <= 10**6:
            return base ** int(y)
        if y.is_Rational and y.q == 2 and (base.a >= 0) is True:
            return _IV.sqrt(base) ** int(y.p)
        if (base.a > 0) is True and _within(exponent, _ENCLOSE_EXP_LIMIT):
            product = _IV.log(base) * exponent
            if _within(product, _ENCLOSE_EXP_LIMIT):
                return _IV.exp(product)
        return None
    if isinstance(node, sympy.exp):
        return _IV.exp(args[0]) if _within(args[0], _ENCLOSE_EXP_LIMIT) else None
    if isinstance(node, sympy.log) and len(args) == 1:
        return _IV.log(args[0]) if (args[0].a > 0) is True else None
    if isinstance(node, sympy.Abs):
        return abs(args[0])
    if isinstance(node, (sympy.sin, sympy.cos)) and _within(args[0], _TRIG_LIMIT):
        return (_IV.sin if isinstance(node, sympy.sin) else _IV.cos)(args[0])
    if isinstance(node, sympy.tanh) and _within(args[0], _ENCLOSE_EXP_LIMIT):
        return _tanh_box(args[0])
    return None


def _tanh_box(x: Any) -> Any:
    """An interval around tanh(x), from exp(-2|x|) (no overflow for large |x|)."""
    if (x.a >= 0) is True or (x.b <= 0) is True:
        sign = 1 if (x.a >= 0) is True else -1
        t = _IV.exp(-2 * abs(x))
        ends = (1 - t) / (1 + t)  # tanh|x|, decreasing in t
        return ends if sign > 0 else -ends
    return _IV.mpf([-1, 1])  # a ball around 0: tanh is within (-1, 1)


def _enclose(expr: Any, cache: dict[Any, Any]) -> Any:
    """An interval around a numeric SymPy expression, or None if none is cheap.

    Walks the expression without recursion, so deep trees cannot overflow the stack.
    """
    if expr in cache:
        return cache[expr]
    stack: list[tuple[Any, bool]] = [(expr, False)]
    visited = 0
    while stack:
        node, ready = stack.pop()
        if node in cache:
            continue
        visited += 1
        if visited > 100_000:
            return None
        if not ready and node.args:
            stack.append((node, True))
            stack.extend((a, False) for a in node.args if a not in cache)
            continue
        try:
            cache[node] = _enclose_node(node, [cache.get(a) for a in node.args])
        except (ArithmeticError, ValueError):
            cache[node] = None
    return cache[expr]


class _Evaluator:
    def __init__(
        self,
        expression: Expression,
        resolve: Resolver | None,
        replace: Mapping[int, Any] | None,
    ) -> None:
        self.expression = expression
        self.resolve = resolve
        self.backend: Any = None  # ExactBackend of the resolved values (node definitions)
        self.cache: dict[Any, Any] = {}
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
            if _rational_bits(exact) > MAX_RATIONAL_BITS:
                raise self.fail(
                    pos,
                    f"expected a number of at most {MAX_RATIONAL_BITS} bits but found a longer one",
                )
            box = _point_box(exact)
        if box is not None and exact not in _INFINITIES and not _within(box, _SIZE_LIMIT):
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
        box = None if value.free_symbols else _enclose(value, self.cache)
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
                exact = _CONSTANTS[node.name]
                return _Scalar(exact, _enclose(exact, self.cache))
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
        from symtf.backends.certify import exact_sign

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
            arg.exact not in _INFINITIES
            and arg.box is not None
            and (arg.box.b <= _EXP_LIMIT) is not True
        ):
            raise self.fail(pos, EXP_ARGUMENT_REFUSED)
        box = _IV.exp(arg.box) if arg.box is not None else None
        return self.checked(sympy.exp(arg.exact), box, pos)

    def pow_scalar(self, base: _Scalar, exponent: _Scalar, pos: int) -> _Scalar:
        self.tick(pos)
        b = base.exact
        if b is sympy.E:
            return self.exp(exponent, pos)
        if isinstance(b, sympy.exp):
            inner = self.checked(b.args[0], _enclose(b.args[0], self.cache), pos)
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
        bits = max((_rational_bits(r) for r in b.atoms(sympy.Rational)), default=0)
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
        if base.box is not None and b not in _INFINITIES:
            if y.q == 1:
                box = base.box ** int(y)
            elif y.q == 2:
                box = _IV.sqrt(abs(base.box)) ** int(y.p)
            else:
                box = abs(base.box) ** (_IV.mpf(int(y.p)) / int(y.q))
            if not _within(box, _SIZE_LIMIT):
                raise self.fail(
                    pos,
                    f"expected a value of at most 10^{MAX_MAGNITUDE_DIGITS} in absolute value"
                    " but this power is larger",
                )
        return self.checked(sympy.Pow(b, y), box, pos)

    def sqrt(self, a: _Scalar, pos: int) -> _Scalar:
        return self.pow_scalar(a, _Scalar(_HALF, _point_box(_HALF)), pos)

    def sin(self, a: _Scalar, pos: int) -> _Scalar:
        return self.trig(sympy.sin, a, pos)

    def cos(self, a: _Scalar, pos: int) -> _Scalar:
        return self.trig(sympy.cos, a, pos)

    def trig(self, func: Any, a: _Scalar, pos: int) -> _Scalar:
        """``sin``/``cos`` of a bounded argument (radians), kept exact."""
        self.tick(pos)
        if a.exact in _INFINITIES or (a.box is not None and not _within(a.box, _TRIG_LIMIT)):
            raise self.fail(
                pos,
                f"expected an angle of at most {MAX_TRIG_ARGUMENT} in absolute value"
                " but found a larger one",
            )
        box = (_IV.sin if func is sympy.sin else _IV.cos)(a.box) if a.box is not None else None
        return self.checked(func(a.exact), box, pos)

    def tanh(self, a: _Scalar, pos: int) -> _Scalar:
        self.tick(pos)
        if a.exact in _INFINITIES:
            return self.checked(sympy.Integer(1 if a.exact is sympy.oo else -1), None, pos)
        if a.box is not None and not _within(a.box, _EXP_LIMIT):
            raise self.fail(
                pos,
                f"expected a tanh argument of at most {MAX_EXP_ARGUMENT} in absolute value"
                " but found a larger one",
            )
        box = _tanh_box(a.box) if a.box is not None else None
        return self.checked(sympy.tanh(a.exact), box, pos)

    def ln(self, a: _Scalar, pos: int) -> _Scalar:
        self.tick(pos)
        if self.sign(a, pos, "a logarithm argument") <= 0:
            raise self.fail(pos, f"expected a positive logarithm argument but found {a.exact}")
        box = _IV.log(a.box) if a.box is not None else None
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
        }
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
            lo = pick((i.box.a for i in items), key=_IV.mpf)
            hi = pick((i.box.b for i in items), key=_IV.mpf)
            box = _IV.mpf([lo, hi])
        return _Scalar(exact, box)

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
                        _pos(source),
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
    expression: Expression,
    resolve: Resolver | None = None,
    replace: Mapping[int, Any] | None = None,
    *,
    backend: Any = None,
    node: Any = None,
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

    Returns:
        A SymPy scalar, or an ``ImmutableMatrix`` (a bracketed row is 1×n).

    Raises:
        ExpressionError: A reference is unknown, shapes do not fit, a value is
            undefined or not real, or a limit described in the module
            docstring would be exceeded.
    """
    evaluator = _Evaluator(expression, resolve, replace)
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
