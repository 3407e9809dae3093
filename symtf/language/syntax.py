"""The syntax shared by symtf's two expression languages.

People write two small languages into derivation files: displayed arithmetic
(:mod:`symtf.language.expr`, ``e^2.309`` or ``5.652 / 21.372``) and steps
(:mod:`symtf.language.lang`, ``softmax(Q @ K.T / sqrt(2))``). Both are split into
tokens by :func:`tokenize`, held to the same limits, reported with the same
message (where, what was expected, what was found, the column and a caret) and
read by the same hand-written precedence-climbing :class:`Parser` into the same
immutable nodes. Each language subclasses :class:`Parser` for what only it has:
references, constants and the radical for displayed arithmetic; indexing,
slices, keyword arguments and ``.T`` for steps. Nothing is ever handed to
``eval``, ``exec``, ``compile``, ``sympify``, ``parse_expr`` or Python's
``ast``.

Grammar of the core, loosest first::

    additive       := multiplicative (('+' | '-') multiplicative)*
    multiplicative := unary (('*' | '/' | '@' | '∘') unary)*
    unary          := ('+' | '-') unary | power
    power          := postfix ('^' unary | '^T')?      # right-associative
    postfix        := operand (superscript | 'ᵀ' | '.T' | subscript)*
    primary        := number | name | '(' additive ')' | '[' additive (',' additive)* ']'

Spellings: ``−`` (U+2212) is ``-``; ``×``, ``·`` and ``⋅`` are ``*``; ``÷`` is
``/``; ``**`` is ``^``; ``.*`` is ``∘``; ``3²`` and ``x⁻¹`` are powers.
"""

from __future__ import annotations

import unicodedata
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import ClassVar, Protocol

import sympy

from symtf.errors import ExpressionError

__all__ = [
    "MAX_DEPTH",
    "MAX_LENGTH",
    "MAX_LITERAL_CHARS",
    "MAX_LITERAL_EXPONENT",
    "MAX_WORD",
    "Brackets",
    "Call",
    "Chain",
    "Link",
    "Literal",
    "Parser",
    "Power",
    "Token",
    "Transpose",
    "Tree",
    "Unary",
    "check_text",
    "error",
    "literal_value",
    "tokenize",
]

#: Longest expression accepted, in characters.
MAX_LENGTH = 2000
#: Longest number literal accepted, in characters.
MAX_LITERAL_CHARS = 60
#: Largest ``|exponent|`` in a literal such as ``1e-3``.
MAX_LITERAL_EXPONENT = 100
#: Deepest nesting of parentheses, brackets, calls, signs and powers.
MAX_DEPTH = 50
#: Longest quoted word (a setting's value in a step: ``mode='half_up'``).
MAX_WORD = 40

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
# Syntax tree: the nodes both languages build


class Tree(Protocol):
    """Any node of either language: each knows where it starts."""

    @property
    def pos(self) -> int:
        """Offset of the node's first character in the expression text (0-based)."""
        ...


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
class Unary:
    """A sign applied to an operand (``op`` is ``"+"`` or ``"-"``)."""

    pos: int
    op: str
    operand: Tree


@dataclass(frozen=True, slots=True)
class Link:
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
    node: Tree


@dataclass(frozen=True, slots=True)
class Chain:
    """A left-associative run of operators of one precedence, ``a + b - c``.

    Kept flat (not as nested binary nodes) so long sums stay shallow.
    """

    pos: int
    first: Tree
    rest: tuple[Link, ...]


@dataclass(frozen=True, slots=True)
class Power:
    """``base ^ exponent`` (also ``**`` and superscripts)."""

    pos: int
    base: Tree
    exponent: Tree


@dataclass(frozen=True, slots=True)
class Transpose:
    """The transpose (``Aᵀ``, ``A^T``, ``A.T``): the last two axes swapped."""

    pos: int
    operand: Tree


@dataclass(frozen=True, slots=True)
class Call:
    """A function call; ``name`` is the canonical lower-case function name.

    Attributes:
        pos: Offset of the function name (or of ``√``).
        name: The lower-case name (``"sqrt"``).
        args: The positional arguments.
        kwargs: ``name=value`` arguments of a step (displayed arithmetic has none).
    """

    pos: int
    name: str
    args: tuple[Tree, ...]
    kwargs: tuple[tuple[str, Tree], ...] = ()


@dataclass(frozen=True, slots=True)
class Brackets:
    """A bracketed list ``[a, b, c]``: a row, a matrix of rows, a shape or a list of axes."""

    pos: int
    items: tuple[Tree, ...]


# ---------------------------------------------------------------------------
# Error messages


def _show(ch: str) -> str:
    if ch == "":
        return "the end of the expression"
    if ch.isprintable() and not ch.isspace():
        return f"'{ch}'"
    return f"U+{ord(ch):04X}"


def error(text: str, where: str, pos: int, message: str) -> ExpressionError:
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


def check_text(text: object, where: str) -> str:
    """Return ``text`` if it is a string of at most :data:`MAX_LENGTH` characters.

    Raises:
        ExpressionError: It is not a string, or it is longer.
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
    return text


# ---------------------------------------------------------------------------
# Tokenizer


@dataclass(frozen=True, slots=True)
class Token:
    """One token: its kind (``num name op sup end``), its text and offset, and for an
    operator its canonical spelling or for a superscript its signed digits."""

    kind: str
    text: str
    pos: int
    value: str = ""


def _is_digit(ch: str) -> bool:
    return "0" <= ch <= "9"


def _is_name_start(ch: str) -> bool:
    return ch == "_" or ("a" <= ch <= "z") or ("A" <= ch <= "Z")


def _is_name_char(ch: str) -> bool:
    return _is_name_start(ch) or _is_digit(ch)


def tokenize(
    text: str, where: str, extra: Mapping[str, str] | None = None, *, words: bool = False
) -> list[Token]:
    """Split ``text`` into tokens, ending with an ``end`` token.

    Args:
        text: The expression.
        where: Where it came from, for error messages.
        extra: Further operator spellings -> canonical names, tried first (the step
            language adds ``...``, ``:``, ``=`` and ``.T``); displayed arithmetic passes none.
        words: Whether a quoted word (``'half_up'`` or ``"half_up"``: letters, digits,
            ``_`` and ``-``) is a token of kind ``word`` (a setting's value in a step).

    Raises:
        ExpressionError: A character that starts no token, a non-ASCII digit, a
            number longer than :data:`MAX_LITERAL_CHARS`, or a lone superscript sign.
    """
    tokens: list[Token] = []
    n = len(text)
    for k, c in enumerate(text):  # ٠.٥, ０.５ and 0.৪ are digits to Python, not to an article
        if not c.isascii() and unicodedata.category(c) == "Nd":
            raise error(
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
            tokens.append(Token("op", spelled[0], i, spelled[1]))
            i += len(spelled[0])
        elif words and ch in "'\"":
            j = i + 1
            while j < n and j - i <= MAX_WORD and (_is_name_char(text[j]) or text[j] == "-"):
                j += 1
            if j >= n or text[j] != ch or j == i + 1:
                raise error(
                    text,
                    where,
                    i,
                    f"expected a quoted word of at most {MAX_WORD} letters, digits, _ or - "
                    f"closed by {ch} but found {_show(text[j] if j < n else '')}",
                )
            tokens.append(Token("word", text[i : j + 1], i, text[i + 1 : j]))
            i = j + 1
        elif _is_digit(ch) or (ch == "." and _is_digit(nxt)):
            j = _scan_number(text, i)
            if j - i > MAX_LITERAL_CHARS:
                raise error(
                    text,
                    where,
                    i,
                    f"expected a number of at most {MAX_LITERAL_CHARS} characters"
                    f" but found one of {j - i}",
                )
            tokens.append(Token("num", text[i:j], i))
            i = j
        elif _is_name_start(ch):
            j = i + 1
            while j < n and _is_name_char(text[j]):
                j += 1
            while j + 1 < n and text[j] == "." and _is_name_char(text[j + 1]):
                j += 2
                while j < n and _is_name_char(text[j]):
                    j += 1
            tokens.append(Token("name", text[i:j], i))
            i = j
        elif ch + nxt in _TWO_CHAR_OPERATORS:
            tokens.append(Token("op", ch + nxt, i, _TWO_CHAR_OPERATORS[ch + nxt]))
            i += 2
        elif ch in _OPERATORS:
            tokens.append(Token("op", ch, i, _OPERATORS[ch]))
            i += 1
        elif ch in ("π", "∞"):
            tokens.append(Token("name", ch, i))
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
                raise error(
                    text,
                    where,
                    j,
                    "expected a superscript digit after the sign "
                    f"but found {_show(text[j] if j < n else '')}",
                )
            tokens.append(Token("sup", text[i:j], i, sign + digits))
            i = j
        else:
            raise error(
                text,
                where,
                i,
                f"expected a number, a name, an operator or a bracket but found {_show(ch)}",
            )
    tokens.append(Token("end", "", n))
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


def literal_value(token: Token, text: str, where: str) -> sympy.Rational:
    """The exact value of a number token (``1.732`` is ``Rational(1732, 1000)``).

    Raises:
        ExpressionError: Its exponent exceeds :data:`MAX_LITERAL_EXPONENT`.
    """
    body = token.text
    exponent = 0
    for mark in "eE":
        if mark in body:
            body, exp_text = body.split(mark, 1)
            exponent = int(exp_text)
            if abs(exponent) > MAX_LITERAL_EXPONENT:
                raise error(
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
# Parser core


class Parser:
    """Recursive descent over :func:`tokenize`'s tokens, by the grammar in the module docstring.

    A language subclasses it and supplies :meth:`name` (what a name means),
    :meth:`superscript` (the exponent node of ``x²``) and, where it differs from
    the defaults, :meth:`operand`, :meth:`subscript`, :meth:`primary` and
    :meth:`caret_transpose`. Every nesting (a sign, an exponent, a bracket, a
    call, a root) counts towards :data:`MAX_DEPTH`.

    Attributes:
        text: The expression.
        where: Where it came from, for error messages.
        tokens: Its tokens.
        i: Index of the current token.
        depth: Current nesting depth.
    """

    #: Further operator spellings for :func:`tokenize`.
    EXTRA: ClassVar[Mapping[str, str]] = {}
    #: Whether quoted words are tokens (see :func:`tokenize`).
    WORDS: ClassVar[bool] = False

    def __init__(self, text: str, where: str) -> None:
        self.text = text
        self.where = where
        self.tokens = tokenize(text, where, self.EXTRA, words=self.WORDS)
        self.i = 0
        self.depth = 0

    # -- helpers --
    @property
    def tok(self) -> Token:
        """The current token."""
        return self.tokens[self.i]

    def is_op(self, *ops: str) -> bool:
        """Whether the current token is one of the operators ``ops`` (canonical spellings)."""
        return self.tok.kind == "op" and self.tok.value in ops

    def advance(self) -> Token:
        """Return the current token and move past it (never past the end)."""
        tok = self.tokens[self.i]
        if tok.kind != "end":
            self.i += 1
        return tok

    def fail(self, expected: str, tok: Token | None = None) -> ExpressionError:
        """An error at ``tok`` (default: the current token): expected this, found that."""
        tok = tok or self.tok
        found = "the end of the expression" if tok.kind == "end" else f"'{tok.text}'"
        return error(self.text, self.where, tok.pos, f"expected {expected} but found {found}")

    def expect(self, op: str, context: str) -> Token:
        """Move past the operator ``op``, or fail saying what it would have done (``context``)."""
        if not self.is_op(op):
            raise self.fail(f"'{op}' {context}")
        return self.advance()

    def enter(self, pos: int) -> None:
        """Go one level deeper, failing past :data:`MAX_DEPTH`."""
        self.depth += 1
        if self.depth > MAX_DEPTH:
            raise error(
                self.text,
                self.where,
                pos,
                f"expected at most {MAX_DEPTH} levels of nesting but found more",
            )

    def leave(self) -> None:
        """Come back up one level."""
        self.depth -= 1

    def check_arity(
        self, tok: Token, found: int, low: int, high: int | None, between: str, what: str
    ) -> None:
        """Fail at ``tok`` unless ``low <= found <= high`` (``high`` ``None``: no upper bound).

        The message reads ``expected 1 or 2 argument(s) for log but found 3``:
        ``between`` joins the bounds, ``what`` names what was counted.
        """
        if found >= low and (high is None or found <= high):
            return
        wanted = (
            f"{low}"
            if low == high
            else (f"{low} {between} {high}" if high is not None else f"at least {low}")
        )
        raise error(self.text, self.where, tok.pos, f"expected {wanted} {what} but found {found}")

    def nested(self, pos: int, parse: Callable[[], Tree]) -> Tree:
        """``parse()`` one level deeper (counting from the token at ``pos``)."""
        self.enter(pos)
        node = parse()
        self.leave()
        return node

    def listed(self, item: Callable[[], Tree]) -> list[Tree]:
        """``item (',' item)*``."""
        items = [item()]
        while self.is_op(","):
            self.advance()
            items.append(item())
        return items

    # -- grammar --
    def parse(self) -> Tree:
        """The whole text as one expression."""
        if self.tok.kind == "end":
            raise self.fail("an expression")
        node = self.additive()
        if self.tok.kind != "end":
            raise self.fail("an operator or the end of the expression")
        return node

    def _chain(self, operand: Callable[[], Tree], ops: tuple[str, ...]) -> Tree:
        first = operand()
        rest: list[Link] = []
        while self.is_op(*ops):
            op = self.advance()
            rest.append(Link(op.value, op.text, op.pos, operand()))
        return Chain(first.pos, first, tuple(rest)) if rest else first

    def additive(self) -> Tree:
        """``a + b - c``."""
        return self._chain(self.multiplicative, ("+", "-"))

    def multiplicative(self) -> Tree:
        """``a * b / c @ d ∘ e``."""
        return self._chain(self.unary, ("*", "/", "@", "∘"))

    def unary(self) -> Tree:
        """``-a``, ``+a``, or a power."""
        if self.is_op("+", "-"):
            op = self.advance()
            return Unary(op.pos, op.value, self.nested(op.pos, self.unary))
        return self.power()

    def caret_transpose(self) -> bool:
        """Whether the ``T`` after a ``^`` (the current token) means the transpose."""
        return self.tok.kind == "name" and self.tok.text == "T"

    def power(self) -> Tree:
        """``a ^ b`` (right-associative; the exponent may carry a sign) or ``a^T``."""
        base = self.postfix()
        if not self.is_op("^"):
            return base
        op = self.advance()
        if self.caret_transpose():
            self.advance()
            return Transpose(op.pos, base)
        return Power(op.pos, base, self.nested(op.pos, self.unary))

    def postfix(self) -> Tree:
        """An operand followed by superscripts, transposes and subscripts."""
        node = self.operand()
        while True:
            tok = self.tok
            if tok.kind == "sup":
                self.advance()
                node = Power(tok.pos, node, self.superscript(tok))
            elif self.is_op("ᵀ", ".T"):
                node = Transpose(self.advance().pos, node)
            else:
                more = self.subscript(node)
                if more is None:
                    return node
                node = more

    def operand(self) -> Tree:
        """What a postfix starts with (by default a primary)."""
        return self.primary()

    def subscript(self, node: Tree) -> Tree | None:
        """``node`` with what follows it that the language reads as postfix, or ``None``."""
        return None

    def radical(self, radicand: Callable[[], Tree]) -> Call:
        """``√x`` (the current token is ``√``), read as ``sqrt(x)``; ``radicand`` reads ``x``."""
        op = self.advance()
        return Call(op.pos, "sqrt", (self.nested(op.pos, radicand),))

    def primary(self) -> Tree:
        """A number, a name, a parenthesized expression or a bracketed list."""
        tok = self.tok
        if tok.kind == "num":
            self.advance()
            return self.number(tok)
        if tok.kind == "name":
            return self.name()
        if self.is_op("("):
            self.advance()
            node = self.nested(tok.pos, self.additive)
            self.expect(")", f"to close the '(' at column {tok.pos + 1}")
            return node
        if self.is_op("["):
            self.advance()
            self.enter(tok.pos)
            items = self.listed(self.additive)
            self.leave()
            self.expect("]", f"to close the '[' at column {tok.pos + 1}")
            return Brackets(tok.pos, tuple(items))
        raise self.fail("a number, a name, '(' or '['")

    def number(self, tok: Token) -> Literal:
        """The node for the number token ``tok`` (already passed)."""
        return Literal(tok.pos, tok.text, literal_value(tok, self.text, self.where))

    def superscript(self, tok: Token) -> Tree:
        """The exponent node of a superscript token (already passed)."""
        raise NotImplementedError

    def name(self) -> Tree:
        """What the name token at the current position means (a language decides)."""
        raise NotImplementedError
