"""The step expression language: ``scores = "Q @ K.T / sqrt(2)"``.

A sibling of :mod:`symtf.expr` (displayed arithmetic): the same tokenizer,
limits and error messages (a caret under the column), read by a hand-written
recursive-descent parser into a small immutable syntax tree. Nothing is handed
to ``eval``, ``exec``, ``sympify`` or ``parse_expr``.

Grammar, loosest first::

    expr    := term (('+' | '-') term)*
    term    := unary (('*' | '/' | '@' | '∘' | '×' | '·' | '÷') unary)*
    unary   := ('+' | '-') unary | power
    power   := postfix ('^' unary | '^T')?         # right-associative
    postfix := primary ('[' items ']' | 'ᵀ' | superscript)*
    primary := number | name | name '(' args ')' | '(' expr ')' | '[' expr, ... ']' | '√' primary
    items   := item (',' item)*      item := expr | expr? ':' expr? (':' expr?)? | '...'
    args    := arg (',' arg)*        arg := expr | name '=' expr

``x.T`` is the transpose (a dotted name ending in ``.T``); ``*`` is element-wise
(numpy), ``×``/``·`` are the matrix product between two tensors and scale with a
scalar, ``@`` is the matrix product, ``∘``/``.*`` element-wise. Names are given
tensors, earlier steps, template nodes (``l0.h0.pattern``) and the constants
``e``, ``pi``, ``inf``, ``true``, ``false``.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, TypeAlias

import sympy

from symtf.errors import ExpressionError
from symtf.expr import MAX_DEPTH, MAX_LENGTH, _error, _literal_value, _Token, _tokenize

#: Extra operator spellings of the step language (tried before the displayed ones).
_EXTRA = {"...": "...", ":": ":", "=": "=", ".T": ".T"}
#: Names that are constants unless a tensor or step has that name.
CONSTANTS = ("e", "pi", "π", "inf", "∞", "true", "false")


@dataclass(frozen=True, slots=True)
class Num:
    """A number literal (exact)."""

    pos: int
    text: str
    value: sympy.Rational


@dataclass(frozen=True, slots=True)
class Name:
    """A reference to a tensor, a step, a template node or a constant."""

    pos: int
    name: str


@dataclass(frozen=True, slots=True)
class Unary:
    """``-x`` or ``+x``."""

    pos: int
    op: str
    operand: Node


@dataclass(frozen=True, slots=True)
class Link:
    """One ``op operand`` of a :class:`Chain` (``text`` is the operator as written)."""

    op: str
    text: str
    pos: int
    node: Node


@dataclass(frozen=True, slots=True)
class Chain:
    """A left-associative run of operators of one precedence, kept flat."""

    pos: int
    first: Node
    rest: tuple[Link, ...]


@dataclass(frozen=True, slots=True)
class Power:
    """``base ^ exponent``."""

    pos: int
    base: Node
    exponent: Node


@dataclass(frozen=True, slots=True)
class Transpose:
    """``x.T``, ``xᵀ`` or ``x^T``: the last two axes swapped."""

    pos: int
    operand: Node


@dataclass(frozen=True, slots=True)
class Slice:
    """``start:stop:step`` inside an index (each part optional)."""

    pos: int
    start: Node | None
    stop: Node | None
    step: Node | None


@dataclass(frozen=True, slots=True)
class Ellipsis_:
    """``...`` inside an index."""

    pos: int


@dataclass(frozen=True, slots=True)
class Index:
    """``x[i, :, 1:3, ...]``."""

    pos: int
    operand: Node
    items: tuple[Node, ...]


@dataclass(frozen=True, slots=True)
class Call:
    """``name(args, key=value)``; ``name`` is lower case."""

    pos: int
    name: str
    args: tuple[Node, ...]
    kwargs: tuple[tuple[str, Node], ...]


@dataclass(frozen=True, slots=True)
class ListLit:
    """``[2, 3]``: a shape, a list of axes, or a 1-D tensor."""

    pos: int
    items: tuple[Node, ...]


Node: TypeAlias = (
    Num | Name | Unary | Chain | Power | Transpose | Slice | Ellipsis_ | Index | Call | ListLit
)


def error(text: str, where: str, pos: int, message: str) -> ExpressionError:
    """An error naming ``where`` with the column and a caret."""
    return _error(text, where, pos, message)


class _Parser:
    def __init__(self, text: str, where: str, functions: dict[str, Any]) -> None:
        self.text = text
        self.where = where
        self.functions = functions
        self.tokens = _tokenize(text, where, _EXTRA)
        self.i = 0
        self.depth = 0

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

    def fail(self, expected: str, tok: _Token | None = None) -> ExpressionError:
        tok = tok or self.tok
        found = "the end of the expression" if tok.kind == "end" else f"'{tok.text}'"
        return error(self.text, self.where, tok.pos, f"expected {expected} but found {found}")

    def _expect(self, op: str, context: str) -> _Token:
        if not self._is_op(op):
            raise self.fail(f"'{op}' {context}")
        return self._advance()

    def _enter(self, pos: int) -> None:
        self.depth += 1
        if self.depth > MAX_DEPTH:
            raise error(
                self.text,
                self.where,
                pos,
                f"expected at most {MAX_DEPTH} levels of nesting but found more",
            )

    def parse(self) -> Node:
        if self.tok.kind == "end":
            raise self.fail("an expression")
        node = self.expr()
        if self.tok.kind != "end":
            raise self.fail("an operator or the end of the expression")
        return node

    def expr(self) -> Node:
        first = self.term()
        rest = []
        while self._is_op("+", "-"):
            op = self._advance()
            rest.append(Link(op.value, op.text, op.pos, self.term()))
        return Chain(first.pos, first, tuple(rest)) if rest else first

    def term(self) -> Node:
        first = self.unary()
        rest = []
        while self._is_op("*", "/", "@", "∘"):
            op = self._advance()
            rest.append(Link(op.value, op.text, op.pos, self.unary()))
        return Chain(first.pos, first, tuple(rest)) if rest else first

    def unary(self) -> Node:
        if self._is_op("+", "-"):
            op = self._advance()
            self._enter(op.pos)
            operand = self.unary()
            self.depth -= 1
            return Unary(op.pos, op.value, operand)
        return self.power()

    def power(self) -> Node:
        base = self.postfix()
        if self._is_op("^"):
            op = self._advance()
            if self.tok.kind == "name" and self.tok.text == "T":
                self._advance()
                return Transpose(op.pos, base)
            self._enter(op.pos)
            exponent = self.unary()
            self.depth -= 1
            return Power(op.pos, base, exponent)
        return base

    def postfix(self) -> Node:
        node = self.primary()
        while True:
            if self._is_op("["):
                node = self.index(node)
            elif self._is_op("ᵀ", ".T"):
                node = Transpose(self._advance().pos, node)
            elif self.tok.kind == "sup":
                tok = self._advance()
                node = Power(tok.pos, node, Num(tok.pos, tok.text, sympy.Integer(int(tok.value))))
            elif self.tok.kind == "name" and self.tok.text.startswith("."):
                raise self.fail("an operator")
            else:
                return node

    def index(self, operand: Node) -> Index:
        opening = self._advance()
        self._enter(opening.pos)
        items = [self.item()]
        while self._is_op(","):
            self._advance()
            items.append(self.item())
        self.depth -= 1
        self._expect("]", f"to close the index opened at column {opening.pos + 1}")
        return Index(opening.pos, operand, tuple(items))

    def item(self) -> Node:
        tok = self.tok
        if self._is_op("..."):
            self._advance()
            return Ellipsis_(tok.pos)
        start = None if self._is_op(":") else self.expr()
        if not self._is_op(":"):
            assert start is not None
            return start
        self._advance()
        stop = None if self._is_op(":", ",", "]") else self.expr()
        step = None
        if self._is_op(":"):
            self._advance()
            step = None if self._is_op(",", "]") else self.expr()
        return Slice(tok.pos, start, stop, step)

    def primary(self) -> Node:
        tok = self.tok
        if tok.kind == "num":
            self._advance()
            return Num(tok.pos, tok.text, _literal_value(tok, self.text, self.where))
        if tok.kind == "name":
            return self.name()
        if self._is_op("√"):
            self._advance()
            self._enter(tok.pos)
            operand = self.postfix()
            self.depth -= 1
            return Call(tok.pos, "sqrt", (operand,), ())
        if self._is_op("("):
            self._advance()
            self._enter(tok.pos)
            node = self.expr()
            self.depth -= 1
            self._expect(")", f"to close the '(' at column {tok.pos + 1}")
            return node
        if self._is_op("["):
            self._advance()
            self._enter(tok.pos)
            items = [self.expr()]
            while self._is_op(","):
                self._advance()
                items.append(self.expr())
            self.depth -= 1
            self._expect("]", f"to close the '[' at column {tok.pos + 1}")
            return ListLit(tok.pos, tuple(items))
        raise self.fail("a number, a name, '(' or '['")

    def name(self) -> Node:
        tok = self._advance()
        text = tok.text
        if self._is_op("("):
            return self.call(tok)
        if text.endswith(".T") and len(text) > 2:
            return Transpose(tok.pos + len(text) - 2, Name(tok.pos, text[:-2]))
        return Name(tok.pos, text)

    def call(self, tok: _Token) -> Call:
        key = tok.text.lower()
        if key not in self.functions:
            raise error(
                self.text,
                self.where,
                tok.pos,
                f"expected an op ({', '.join(sorted(self.functions))}) but found unknown op '{tok.text}'",
            )
        opening = self._advance()
        self._enter(opening.pos)
        args: list[Node] = []
        kwargs: list[tuple[str, Node]] = []
        if not self._is_op(")"):
            while True:
                nxt = self.tokens[self.i + 1] if self.tok.kind != "end" else self.tok
                if self.tok.kind == "name" and nxt.kind == "op" and nxt.value == "=":
                    kw = self._advance()
                    self._advance()
                    if any(k == kw.text for k, _ in kwargs):
                        raise error(
                            self.text, self.where, kw.pos, f"keyword {kw.text!r} given twice"
                        )
                    kwargs.append((kw.text, self.expr()))
                else:
                    if kwargs:
                        raise self.fail("a keyword argument (positional arguments come first)")
                    args.append(self.expr())
                if not self._is_op(","):
                    break
                self._advance()
        self.depth -= 1
        self._expect(")", f"to close the call of {tok.text} at column {tok.pos + 1}")
        sig = self.functions[key]
        low, high, keys = sig
        if len(args) < low or (high is not None and len(args) > high):
            wanted = (
                f"{low}"
                if low == high
                else (f"{low} to {high}" if high is not None else f"at least {low}")
            )
            raise error(
                self.text,
                self.where,
                tok.pos,
                f"expected {wanted} positional argument(s) for {key} but found {len(args)}",
            )
        for k, node in kwargs:
            if k not in keys:
                known = ", ".join(keys) or "none"
                raise error(
                    self.text,
                    self.where,
                    node.pos,
                    f"{key} takes no keyword {k!r} (keywords: {known})",
                )
        return Call(tok.pos, key, tuple(args), tuple(kwargs))


def parse(text: str, functions: dict[str, Any], *, where: str = "step") -> Node:
    """Parse a step expression.

    Args:
        text: The expression.
        functions: Op name -> ``(min positional, max positional or None, keyword names)``.
        where: ``file: steps.name`` for messages.

    Raises:
        ExpressionError: With the column and a caret.
    """
    if not isinstance(text, str):
        raise ExpressionError(
            f"{where}: expected the expression as a string but found {type(text).__name__}"
        )
    if len(text) > MAX_LENGTH:
        raise ExpressionError(
            f"{where}: expected an expression of at most {MAX_LENGTH} characters but found {len(text)}"
        )
    return _Parser(text, where, functions).parse()


# ----------------------------------------------------------------------------- tree walks


def children(node: Node) -> list[Node]:
    """The direct sub-expressions of a node."""
    match node:
        case Unary():
            return [node.operand]
        case Chain():
            return [node.first, *(link.node for link in node.rest)]
        case Power():
            return [node.base, node.exponent]
        case Transpose():
            return [node.operand]
        case Slice():
            return [n for n in (node.start, node.stop, node.step) if n is not None]
        case Index():
            return [node.operand, *node.items]
        case Call():
            return [*node.args, *(v for _, v in node.kwargs)]
        case ListLit():
            return list(node.items)
    return []


def names(node: Node) -> list[Name]:
    """Every name referenced, in order (without recursion limits beyond the parse depth)."""
    out: list[Name] = []
    stack = [node]
    while stack:
        n = stack.pop()
        if isinstance(n, Name):
            out.append(n)
        stack.extend(reversed(children(n)))
    return out


# ----------------------------------------------------------------------------- LaTeX

_PREC = {"+": 1, "-": 1, "*": 2, "/": 2, "@": 2, "∘": 2}
_TEX_OPS = {"+": "+", "-": "-", "*": r"\odot", "∘": r"\odot", "@": r"\,", "/": "/"}


def _esc(text: str) -> str:
    return text.replace("_", r"\_")


def _tex_name(name: str) -> str:
    base, _, rest = name.partition("[")
    core = r"\mathrm{" + base.replace("_", r"\_") + "}" if "." in base or len(base) > 1 else base
    return core + (f"_{{{rest[:-1]}}}" if rest else "")


def latex(node: Node, prec: int = 0) -> str:
    """The formula of a step in LaTeX (for people; never parsed back)."""
    match node:
        case Num():
            return node.text
        case Name():
            return {"inf": r"\infty", "pi": r"\pi", "π": r"\pi", "∞": r"\infty"}.get(
                node.name, _tex_name(node.name)
            )
        case Unary():
            return ("-" if node.op == "-" else "+") + latex(node.operand, 3)
        case Chain():
            p = _PREC[node.rest[0].op]
            s = latex(node.first, p)
            for link in node.rest:
                if link.op == "/" and len(node.rest) == 1:
                    s = rf"\frac{{{latex(node.first)}}}{{{latex(link.node)}}}"
                    break
                op = r"\times" if link.text in ("×", "·") else _TEX_OPS[link.op]
                if link.op == "*" and (isinstance(link.node, Num) or isinstance(node.first, Num)):
                    op = r"\cdot"  # a number scales
                s += f" {op} " + latex(link.node, p + 1)
            return f"\\left({s}\\right)" if p < prec else s
        case Power():
            return f"{latex(node.base, 4)}^{{{latex(node.exponent)}}}"
        case Transpose():
            return f"{latex(node.operand, 4)}^\\top"
        case Slice():
            parts = [latex(n) if n is not None else "" for n in (node.start, node.stop, node.step)]
            return ":".join(parts[:2] if node.step is None else parts)
        case Ellipsis_():
            return r"\ldots"
        case Index():
            return f"{latex(node.operand, 4)}[{', '.join(latex(i) for i in node.items)}]"
        case Call():
            args = [latex(a) for a in node.args] + [
                f"\\mathrm{{{_esc(k)}}}={latex(v)}" for k, v in node.kwargs
            ]
            if node.name == "sqrt" and len(args) == 1:
                return rf"\sqrt{{{args[0]}}}"
            if node.name == "exp" and len(args) == 1:
                return rf"e^{{{args[0]}}}"
            op = node.name.replace("_", r"\_")
            return rf"\operatorname{{{op}}}\left({', '.join(args)}\right)"
        case ListLit():
            return "[" + ", ".join(latex(i) for i in node.items) + "]"
    raise TypeError(type(node).__name__)  # pragma: no cover


def unparse(node: Node) -> str:
    """The expression as text again (for messages and rewritten steps)."""
    match node:
        case Num():
            return node.text
        case Name():
            return node.name
        case Unary():
            return node.op + unparse(node.operand)
        case Chain():
            s = unparse(node.first)
            for link in node.rest:
                s += f" {link.text} {unparse(link.node)}"
            return f"({s})"
        case Power():
            return f"{unparse(node.base)}^{unparse(node.exponent)}"
        case Transpose():
            return f"{unparse(node.operand)}.T"
        case Slice():
            parts = [
                unparse(n) if n is not None else "" for n in (node.start, node.stop, node.step)
            ]
            return ":".join(parts[:2] if node.step is None else parts)
        case Ellipsis_():
            return "..."
        case Index():
            return f"{unparse(node.operand)}[{', '.join(unparse(i) for i in node.items)}]"
        case Call():
            args = [unparse(a) for a in node.args] + [f"{k}={unparse(v)}" for k, v in node.kwargs]
            return f"{node.name}({', '.join(args)})"
        case ListLit():
            return "[" + ", ".join(unparse(i) for i in node.items) + "]"
    raise TypeError(type(node).__name__)  # pragma: no cover
