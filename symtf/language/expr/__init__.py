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
* functions (case-insensitive): ``sqrt exp ln log abs relu sin cos tanh sigmoid
  softmax max min sum``; ``log(x)`` is the natural logarithm, ``log(x, b)`` the base-``b``
  one; ``sin``/``cos`` take radians (``sin(0.03)``, a positional encoding);
  ``sqrt exp ln abs relu sin cos tanh sigmoid`` act element-wise on matrices,
  ``softmax`` on each row of one; ``max min sum`` take
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

This module parses; the syntax tree (:mod:`~symtf.language.expr.nodes`), the limits and
interval bounds (:mod:`~symtf.language.expr.bounds`) and exact evaluation
(:mod:`~symtf.language.expr.evaluation`) are modules of their own.

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

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, cast

import sympy

from symtf.language.expr.bounds import MAX_MAGNITUDE_DIGITS, MAX_POWER, MAX_TRIG_ARGUMENT
from symtf.language.expr.evaluation import evaluate
from symtf.language.expr.nodes import (
    CONSTANTS,
    FUNCTIONS,
    Constant,
    Node,
    Operand,
    Reference,
    Resolver,
    Superscript,
)
from symtf.language.syntax import (
    MAX_DEPTH,
    MAX_LENGTH,
    MAX_LITERAL_CHARS,
    MAX_LITERAL_EXPONENT,
    Brackets,
    Call,
    Chain,
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
from symtf.limits import MAX_EXP_ARGUMENT

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
        if name in CONSTANTS:
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
        boxes: Mapping[Any, Any] | None = None,
    ) -> sympy.Expr | sympy.ImmutableMatrix:
        """Evaluate exactly; see :func:`evaluate`."""
        return evaluate(self, resolve, replace, backend=backend, node=node, boxes=boxes)

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
