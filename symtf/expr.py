"""A small, safe expression language for the arithmetic an article displays.

An article writes ``e^2.309 ≈ 10.068`` or ``5.652 / 21.372 ≈ 0.264``; a
derivation file copies the left-hand side as an *expression* and this module
turns it into an exact SymPy value. The text is read by a hand-written
tokenizer and recursive-descent parser into a small immutable syntax tree;
nothing is ever handed to ``eval``, ``exec``, ``compile``, ``sympify``,
``parse_expr`` or Python's ``ast``.

Language:

* numbers: ``3``, ``1.732``, ``.5``, ``1e-3`` (read exactly: ``1.732`` is
  ``Rational(1732, 1000)``), constants ``e`` (Euler's number), ``pi``/``π``
  and ``inf``/``∞``;
* operators, loosest first: ``+ -``; ``* × · ⋅ / ÷ @ ∘ .*``; unary ``+ -``;
  ``^``/``**`` (right-associative), superscripts (``3²``, ``x⁻¹``) and the
  transpose ``ᵀ``/``^T``; ``−`` (U+2212) is a minus sign; ``√x`` is ``sqrt(x)``;
* functions (case-insensitive): ``sqrt exp ln log abs relu max min sum``;
  ``log(x)`` is the natural logarithm, ``log(x, b)`` the base-``b`` one;
  ``sqrt exp ln abs relu`` act element-wise on matrices; ``max min sum`` take
  several scalars or one matrix;
* brackets: ``[1, 2, 3]`` is a 1×3 row, ``[[1, 2], [3, 4]]`` a 2×2 matrix
  (the items of a bracket may also be rows obtained from references);
* references: a dotted name with an optional index, ``l0.h0.scaled[0, 2]``,
  ``l0.h0.pattern[1]`` or ``A_1``, resolved by a caller-supplied callback.

Products: ``×``/``*``/``·`` multiply scalars, scale a matrix by a scalar, and
are the matrix product between two matrices of compatible shapes; ``@`` is
the matrix product only; ``∘``/``.*`` are element-wise. Two same-shape rows are
never multiplied implicitly element-wise.

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

import unicodedata
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from fractions import Fraction
from typing import Any, TypeAlias

import sympy
from mpmath.ctx_iv import MPIntervalContext

from symtf.errors import ExpressionError, Undecided

__all__ = [
    "FUNCTIONS",
    "MAX_DEPTH",
    "MAX_EXP_ARGUMENT",
    "MAX_LENGTH",
    "MAX_LITERAL_CHARS",
    "MAX_LITERAL_EXPONENT",
    "MAX_MAGNITUDE_DIGITS",
    "MAX_POWER",
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

#: Longest expression accepted, in characters.
MAX_LENGTH = 2000
#: Longest number literal accepted, in characters.
MAX_LITERAL_CHARS = 60
#: Largest ``|exponent|`` in a literal such as ``1e-3``.
MAX_LITERAL_EXPONENT = 100
#: Deepest nesting of parentheses, brackets, calls, signs and powers.
MAX_DEPTH = 50
#: Largest ``|y|`` in ``x^y`` (for a base other than ``e``).
MAX_POWER = 1000
#: Largest q in an exponent p/q (``\\sqrt[q]{x}``); roots need a non-negative base.
MAX_ROOT = 16
#: Largest ``|x|`` in ``exp(x)``.
MAX_EXP_ARGUMENT = 10_000
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

# Single characters that are operators, mapped to their canonical spelling.
_OPERATORS: dict[str, str] = {
    "+": "+",
    "-": "-",
    "−": "-",
    "*": "*",
    "×": "*",
    "·": "*",
    "⋅": "*",
    "/": "/",
    "÷": "/",
    "^": "^",
    "@": "@",
    "∘": "∘",
    "(": "(",
    ")": ")",
    "[": "[",
    "]": "]",
    ",": ",",
    "√": "√",
    "ᵀ": "ᵀ",
}
_TWO_CHAR_OPERATORS = {"**": "^", ".*": "∘"}
_SUPERSCRIPT_DIGITS = {ch: str(i) for i, ch in enumerate("⁰¹²³⁴⁵⁶⁷⁸⁹")}
_SUPERSCRIPT_SIGNS = {"⁻": "-", "⁺": "+"}


# ---------------------------------------------------------------------------
# Syntax tree


@dataclass(frozen=True, slots=True)
class Literal:
    """A number written in the expression.

    Attributes:
        pos: Offset of its first character in the expression text (0-based).
        text: The literal exactly as written (``"1.732"``, ``"1e-3"``).
        value: Its exact value (``Rational(433, 250)``).
    """

    pos: int
    text: str
    value: sympy.Rational


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


@dataclass(frozen=True, slots=True)
class Unary:
    """A sign applied to an operand (``op`` is ``"+"`` or ``"-"``)."""

    pos: int
    op: str
    operand: Node


@dataclass(frozen=True, slots=True)
class Operand:
    """One ``op operand`` link of a :class:`Chain`.

    Attributes:
        op: Canonical operator: ``+ - * / @ ∘``.
        text: The operator as written (``"×"``, ``"÷"``, ``".*"``).
        pos: Offset of the operator.
        node: The right-hand operand.
    """

    op: str
    text: str
    pos: int
    node: Node


@dataclass(frozen=True, slots=True)
class Chain:
    """A left-associative run of operators of one precedence, ``a + b - c``.

    Kept flat (not as nested binary nodes) so long sums stay shallow.
    """

    pos: int
    first: Node
    rest: tuple[Operand, ...]


@dataclass(frozen=True, slots=True)
class Power:
    """``base ^ exponent`` (also ``**`` and superscripts)."""

    pos: int
    base: Node
    exponent: Node


@dataclass(frozen=True, slots=True)
class Transpose:
    """The transpose of a matrix (``Aᵀ`` or ``A^T``); a scalar is unchanged."""

    pos: int
    operand: Node


@dataclass(frozen=True, slots=True)
class Call:
    """A function call; ``name`` is the canonical lower-case function name."""

    pos: int
    name: str
    args: tuple[Node, ...]


@dataclass(frozen=True, slots=True)
class Brackets:
    """A bracketed list ``[a, b, c]``: a row, or a matrix when its items are rows."""

    pos: int
    items: tuple[Node, ...]


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
# Error messages


def _show(ch: str) -> str:
    if ch == "":
        return "the end of the expression"
    if ch.isprintable() and not ch.isspace():
        return f"'{ch}'"
    return f"U+{ord(ch):04X}"


def _error(text: str, where: str, pos: int, message: str) -> ExpressionError:
    """Build an error naming ``where``, with the text and a caret under ``pos``."""
    pos = max(0, min(pos, len(text)))
    start = max(0, pos - 30)
    end = min(len(text), pos + 30)
    shown = "".join(ch if ch.isprintable() else "?" for ch in text[start:end])
    prefix = "…" if start > 0 else ""
    suffix = "…" if end < len(text) else ""
    caret = " " * (len(prefix) + pos - start) + "^"
    return ExpressionError(
        f"{where}: {message} (at column {pos + 1})\n    {prefix}{shown}{suffix}\n    {caret}"
    )


# ---------------------------------------------------------------------------
# Tokenizer


@dataclass(frozen=True, slots=True)
class _Token:
    kind: str  # "num", "name", "op", "sup", "end"
    text: str
    pos: int
    value: str = ""  # canonical operator, or superscript digits


def _is_digit(ch: str) -> bool:
    return "0" <= ch <= "9"


def _is_name_start(ch: str) -> bool:
    return ch == "_" or ("a" <= ch <= "z") or ("A" <= ch <= "Z")


def _is_name_char(ch: str) -> bool:
    return _is_name_start(ch) or _is_digit(ch)


def _tokenize(text: str, where: str, extra: Mapping[str, str] | None = None) -> list[_Token]:
    """Split ``text`` into tokens.

    Args:
        text: The expression.
        where: Where it came from, for error messages.
        extra: Further operator spellings -> canonical names, tried first (the step
            language adds ``...``, ``:`` and ``=``); displayed arithmetic passes none.
    """
    tokens: list[_Token] = []
    n = len(text)
    for k, c in enumerate(text):  # ٠.٥, ０.５ and 0.৪ are digits to Python, not to an article
        if not c.isascii() and unicodedata.category(c) == "Nd":
            raise _error(
                text,
                where,
                k,
                "expected a number written in ASCII digits 0-9 but found the character "
                f"{c!r} (U+{ord(c):04X} {unicodedata.name(c, 'unnamed character')})",
            )
    i = 0
    extras = sorted((extra or {}).items(), key=lambda kv: -len(kv[0]))
    while i < n:
        ch = text[i]
        if ch.isspace():
            i += 1
            continue
        nxt = text[i + 1] if i + 1 < n else ""
        spelled = next((kv for kv in extras if text.startswith(kv[0], i)), None)
        if spelled is not None:
            tokens.append(_Token("op", spelled[0], i, spelled[1]))
            i += len(spelled[0])
        elif _is_digit(ch) or (ch == "." and _is_digit(nxt)):
            j = _scan_number(text, i)
            if j - i > MAX_LITERAL_CHARS:
                raise _error(
                    text,
                    where,
                    i,
                    f"expected a number of at most {MAX_LITERAL_CHARS} characters"
                    f" but found one of {j - i}",
                )
            tokens.append(_Token("num", text[i:j], i))
            i = j
        elif _is_name_start(ch):
            j = i + 1
            while j < n and _is_name_char(text[j]):
                j += 1
            while j + 1 < n and text[j] == "." and _is_name_char(text[j + 1]):
                j += 2
                while j < n and _is_name_char(text[j]):
                    j += 1
            tokens.append(_Token("name", text[i:j], i))
            i = j
        elif ch + nxt in _TWO_CHAR_OPERATORS:
            tokens.append(_Token("op", ch + nxt, i, _TWO_CHAR_OPERATORS[ch + nxt]))
            i += 2
        elif ch in _OPERATORS:
            tokens.append(_Token("op", ch, i, _OPERATORS[ch]))
            i += 1
        elif ch in ("π", "∞"):
            tokens.append(_Token("name", ch, i))
            i += 1
        elif ch in _SUPERSCRIPT_DIGITS or ch in _SUPERSCRIPT_SIGNS:
            j = i
            sign = ""
            if ch in _SUPERSCRIPT_SIGNS:
                sign = _SUPERSCRIPT_SIGNS[ch]
                j += 1
            digits = ""
            while j < n and text[j] in _SUPERSCRIPT_DIGITS and len(digits) <= 6:
                digits += _SUPERSCRIPT_DIGITS[text[j]]
                j += 1
            if not digits:
                raise _error(
                    text,
                    where,
                    j,
                    "expected a superscript digit after the sign "
                    f"but found {_show(text[j] if j < n else '')}",
                )
            tokens.append(_Token("sup", text[i:j], i, sign + digits))
            i = j
        else:
            raise _error(
                text,
                where,
                i,
                f"expected a number, a name, an operator or a bracket but found {_show(ch)}",
            )
    tokens.append(_Token("end", "", n))
    return tokens


def _scan_number(text: str, i: int) -> int:
    """Return the end of the number starting at ``i`` (digits, point, exponent)."""
    n = len(text)
    j = i
    while j < n and _is_digit(text[j]):
        j += 1
    if j + 1 < n and text[j] == "." and _is_digit(text[j + 1]):
        j += 1
        while j < n and _is_digit(text[j]):
            j += 1
    if j < n and text[j] in "eE":
        k = j + 1
        if k < n and text[k] in "+-":
            k += 1
        if k < n and _is_digit(text[k]):
            while k < n and _is_digit(text[k]):
                k += 1
            j = k
    return j


def _literal_value(token: _Token, text: str, where: str) -> sympy.Rational:
    body = token.text
    exponent = 0
    for mark in "eE":
        if mark in body:
            body, exp_text = body.split(mark, 1)
            exponent = int(exp_text)
            if abs(exponent) > MAX_LITERAL_EXPONENT:
                raise _error(
                    text,
                    where,
                    token.pos,
                    f"expected an exponent of at most {MAX_LITERAL_EXPONENT} in absolute value"
                    f" but found {exp_text} in {token.text}",
                )
            break
    whole, _, frac = body.partition(".")
    numerator = int((whole or "0") + frac)
    denominator = 10 ** len(frac)
    if exponent >= 0:
        numerator *= 10**exponent
    else:
        denominator *= 10 ** (-exponent)
    return sympy.Rational(numerator, denominator)


# ---------------------------------------------------------------------------
# Parser


class _Parser:
    def __init__(self, text: str, where: str) -> None:
        self.text = text
        self.where = where
        self.tokens = _tokenize(text, where)
        self.i = 0
        self.depth = 0
        self.literals: list[Literal] = []
        self.references: list[Reference] = []

    # -- helpers --
    @property
    def tok(self) -> _Token:
        return self.tokens[self.i]

    def _is_op(self, *ops: str) -> bool:
        return self.tok.kind == "op" and self.tok.value in ops

    def _advance(self) -> _Token:
        tok = self.tokens[self.i]
        if tok.kind != "end":
            self.i += 1
        return tok

    def _found(self, tok: _Token | None = None) -> str:
        tok = tok or self.tok
        if tok.kind == "end":
            return "the end of the expression"
        return f"'{tok.text}'"

    def _fail(self, expected: str, tok: _Token | None = None) -> ExpressionError:
        tok = tok or self.tok
        return _error(
            self.text, self.where, tok.pos, f"expected {expected} but found {self._found(tok)}"
        )

    def _expect(self, op: str, context: str) -> _Token:
        if not self._is_op(op):
            raise self._fail(f"'{op}' {context}")
        return self._advance()

    def _enter(self, pos: int) -> None:
        self.depth += 1
        if self.depth > MAX_DEPTH:
            raise _error(
                self.text,
                self.where,
                pos,
                f"expected at most {MAX_DEPTH} levels of nesting but found more",
            )

    def _leave(self) -> None:
        self.depth -= 1

    # -- grammar --
    def parse(self) -> Node:
        if self.tok.kind == "end":
            raise self._fail("an expression")
        node = self._additive()
        if self.tok.kind != "end":
            raise self._fail("an operator or the end of the expression")
        return node

    def _additive(self) -> Node:
        first = self._multiplicative()
        rest: list[Operand] = []
        while self._is_op("+", "-"):
            op = self._advance()
            rest.append(Operand(op.value, op.text, op.pos, self._multiplicative()))
        return Chain(_pos(first), first, tuple(rest)) if rest else first

    def _multiplicative(self) -> Node:
        first = self._unary()
        rest: list[Operand] = []
        while self._is_op("*", "/", "@", "∘"):
            op = self._advance()
            rest.append(Operand(op.value, op.text, op.pos, self._unary()))
        return Chain(_pos(first), first, tuple(rest)) if rest else first

    def _unary(self) -> Node:
        if self._is_op("+", "-"):
            op = self._advance()
            self._enter(op.pos)
            operand = self._unary()
            self._leave()
            return Unary(op.pos, op.value, operand)
        return self._power()

    def _power(self) -> Node:
        base = self._postfix()
        if self._is_op("^"):
            op = self._advance()
            nxt = self.tokens[self.i + 1] if self.tok.kind != "end" else self.tok
            if (
                self.tok.kind == "name"
                and self.tok.text == "T"
                and not (nxt.kind == "op" and nxt.value in ("[", "("))
            ):
                self._advance()
                return Transpose(op.pos, base)
            self._enter(op.pos)
            exponent = self._unary()
            self._leave()
            return Power(op.pos, base, exponent)
        return base

    def _postfix(self) -> Node:
        node = self._radical()
        while True:
            if self.tok.kind == "sup":
                tok = self._advance()
                node = Power(tok.pos, node, Superscript(tok.pos, tok.text, int(tok.value)))
            elif self._is_op("ᵀ"):
                node = Transpose(self._advance().pos, node)
            else:
                return node

    def _radical(self) -> Node:
        if self._is_op("√"):
            op = self._advance()
            self._enter(op.pos)
            operand = self._radical()
            self._leave()
            return Call(op.pos, "sqrt", (operand,))
        return self._primary()

    def _primary(self) -> Node:
        tok = self.tok
        if tok.kind == "num":
            self._advance()
            literal = Literal(tok.pos, tok.text, _literal_value(tok, self.text, self.where))
            self.literals.append(literal)
            return literal
        if tok.kind == "name":
            return self._name()
        if self._is_op("("):
            self._advance()
            self._enter(tok.pos)
            node = self._additive()
            self._leave()
            self._expect(")", f"to close the '(' at column {tok.pos + 1}")
            return node
        if self._is_op("["):
            self._advance()
            self._enter(tok.pos)
            items = [self._additive()]
            while self._is_op(","):
                self._advance()
                items.append(self._additive())
            self._leave()
            self._expect("]", f"to close the '[' at column {tok.pos + 1}")
            return Brackets(tok.pos, tuple(items))
        raise self._fail("a number, a name, '(' or '['")

    def _name(self) -> Node:
        tok = self._advance()
        name = tok.text
        if self._is_op("("):
            key = name.lower()
            if key not in FUNCTIONS:
                known = ", ".join(sorted(FUNCTIONS))
                raise _error(
                    self.text,
                    self.where,
                    tok.pos,
                    f"expected a function name ({known}) but found '{name}'",
                )
            return self._call(tok, key)
        if name.lower() in FUNCTIONS and "." not in name:
            raise self._fail(f"'(' after the function name '{name}'")
        if name in _CONSTANTS:
            return Constant(tok.pos, name)
        index: tuple[int, ...] = ()
        if self._is_op("["):
            index = self._index()
        reference = Reference(tok.pos, name, index)
        self.references.append(reference)
        return reference

    def _call(self, tok: _Token, key: str) -> Call:
        opening = self._advance()
        self._enter(opening.pos)
        args = [self._additive()]
        while self._is_op(","):
            self._advance()
            args.append(self._additive())
        self._leave()
        self._expect(")", f"to close the call of {tok.text} at column {tok.pos + 1}")
        low, high = FUNCTIONS[key]
        if len(args) < low or (high is not None and len(args) > high):
            wanted = (
                f"{low}"
                if low == high
                else (f"{low} or {high}" if high is not None else f"at least {low}")
            )
            raise _error(
                self.text,
                self.where,
                tok.pos,
                f"expected {wanted} argument(s) for {tok.text} but found {len(args)}",
            )
        return Call(tok.pos, key, tuple(args))

    def _index(self) -> tuple[int, ...]:
        opening = self._advance()
        values: list[int] = []
        while True:
            tok = self.tok
            if tok.kind != "num" or not tok.text.isascii() or not tok.text.isdigit():
                raise self._fail("a non-negative integer index")
            self._advance()
            values.append(int(tok.text))
            if self._is_op(","):
                self._advance()
                continue
            self._expect("]", f"to close the index opened at column {opening.pos + 1}")
            return tuple(values)


def _pos(node: Node) -> int:
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
    ) -> sympy.Expr | sympy.ImmutableMatrix:
        """Evaluate exactly; see :func:`evaluate`."""
        return evaluate(self, resolve, replace, backend=backend)

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
    if not isinstance(text, str):
        raise ExpressionError(
            f"{where}: expected the expression as a string but found {type(text).__name__}"
        )
    if len(text) > MAX_LENGTH:
        raise ExpressionError(
            f"{where}: expected an expression of at most {MAX_LENGTH} characters"
            f" but found {len(text)}"
        )
    parser = _Parser(text, where)
    root = parser.parse()
    return Expression(text, where, root, tuple(parser.literals), tuple(parser.references))


# ---------------------------------------------------------------------------
# Evaluation

_IV = MPIntervalContext()
_IV.prec = 113
_EXP_LIMIT = _IV.mpf(MAX_EXP_ARGUMENT)
_SIZE_LIMIT = _IV.mpf(10) ** MAX_MAGNITUDE_DIGITS
# Enclosures of resolved values are not computed through exp of arguments this large.
_ENCLOSE_EXP_LIMIT = _IV.mpf(10) ** 6
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
    return None


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
        return _error(self.expression.text, self.expression.where, pos, message)

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
    def value(self, node: Node) -> _Value:
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
        from symtf.certify import exact_sign

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
        if (
            arg.exact not in _INFINITIES
            and arg.box is not None
            and not _within(arg.box, _EXP_LIMIT)
        ):
            raise self.fail(
                pos,
                f"expected an exponent of e of at most {MAX_EXP_ARGUMENT} in absolute value"
                " but found a larger one",
            )
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
        if not (y.is_Rational and y.q <= MAX_ROOT):
            raise self.fail(
                pos, f"expected an exponent that is a fraction p/q with q at most {MAX_ROOT} but found {y}"
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
        from symtf.certify import OpenMax, OpenMin

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


def _shape(value: _Value) -> str:
    return "a scalar" if isinstance(value, _Scalar) else f"a {value.shape} matrix"


def evaluate(
    expression: Expression,
    resolve: Resolver | None = None,
    replace: Mapping[int, Any] | None = None,
    *,
    backend: Any = None,
) -> sympy.Expr | sympy.ImmutableMatrix:
    """Evaluate a parsed expression exactly.

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
        result = evaluator.value(expression.root)
    except ExpressionError:
        raise
    except (ArithmeticError, ValueError, RecursionError) as exc:
        raise ExpressionError(
            f"{expression.where}: could not evaluate {expression.text!r}: {exc}"
        ) from exc
    if isinstance(result, _Scalar):
        return result.exact
    return sympy.ImmutableMatrix(result.rows, result.cols, [x.exact for x in result.entries])
