"""The step expression language: ``scores = "Q @ K.T / sqrt(2)"``.

A sibling of :mod:`symtf.language.expr` (displayed arithmetic): both are read by the
tokenizer, limits, error messages (a caret under the column), node classes and
recursive-descent core of :mod:`symtf.language.syntax`; this module adds what only steps
have (indexing and slices, keyword arguments, ``.T``). Nothing is handed to
``eval``, ``exec``, ``sympify`` or ``parse_expr``.

Grammar, loosest first::

    expr    := sum (('<' | '<=' | '>' | '>=' | '==' | '!=') sum)?    # one comparison: 0/1
    sum     := term (('+' | '-') term)*
    term    := unary (('*' | '/' | '//' | '%' | '@' | '∘' | '×' | '·' | '÷') unary)*
    unary   := ('+' | '-') unary | power
    power   := postfix ('^' unary | '^T')?         # right-associative
    postfix := primary ('[' items ']' | 'ᵀ' | superscript)*
    primary := number | name | name '(' args ')' | '(' expr ')' | '[' expr, ... ']' | '√' primary
    items   := item (',' item)*      item := expr | expr? ':' expr? (':' expr?)? | '...' | 'None'
    args    := arg (',' arg)*        arg := expr | name '=' expr

``x.T`` is the transpose (a dotted name ending in ``.T``); ``//`` and ``%`` are
Python's floor division and remainder (the sign of the divisor); a comparison gives
1 where it holds and 0 elsewhere (``where(x < 0, 0, x)``) and does not chain
(``a < b < c`` is an error: write ``(a < b) * (b < c)``); ``*`` is element-wise
(numpy), ``×``/``·`` are the matrix product between two tensors and scale with a
scalar, ``@`` is the matrix product, ``∘``/``.*`` element-wise. Names are given
tensors, earlier steps, template nodes (``l0.h0.pattern``) and the constants
``e``, ``pi``, ``inf``, ``true``, ``false``.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from fractions import Fraction
from typing import Any, TypeAlias, cast

import sympy

from symtf.language import syntax
from symtf.language.syntax import Brackets, Literal, Tree

# Re-exported: the nodes shared with displayed arithmetic are this language's nodes too
# (lang.Call, lang.Chain, ...), lang.Link is what rewrites build chains from, and
# lang.error raises a positioned syntax error.
from symtf.language.syntax import Call as Call
from symtf.language.syntax import Chain as Chain
from symtf.language.syntax import Link as Link
from symtf.language.syntax import Power as Power
from symtf.language.syntax import Transpose as Transpose
from symtf.language.syntax import Unary as Unary
from symtf.language.syntax import error as error

#: Extra operator spellings of the step language (tried before the displayed ones).
_EXTRA = {
    "...": "...",
    ":": ":",
    "=": "=",
    ".T": ".T",
    "//": "//",
    "%": "%",
    "<=": "<=",
    ">=": ">=",
    "==": "==",
    "!=": "!=",
    "<": "<",
    ">": ">",
}
#: The comparison operators (each gives 0/1; they do not chain).
COMPARISONS = ("<", "<=", ">", ">=", "==", "!=")
#: Names that are constants unless a tensor or step has that name.
CONSTANTS = ("e", "pi", "π", "inf", "∞", "true", "false")

# Nodes shared with displayed arithmetic (:mod:`symtf.language.syntax`): ``Unary``, ``Chain`` of
# ``Link``s, ``Power``, ``Transpose``, ``Call`` (with ``kwargs``), and these two by the names
# this language has always given them.

#: A number literal (exact).
Num = Literal
#: ``[2, 3]``: a shape, a list of axes, or a 1-D tensor.
ListLit = Brackets


@dataclass(frozen=True, slots=True)
class Name:
    """A reference to a tensor, a step, a template node or a constant."""

    pos: int
    name: str


@dataclass(frozen=True, slots=True)
class Word:
    """A quoted word, the value of a setting with named choices (``mode='half_up'``)."""

    pos: int
    text: str


@dataclass(frozen=True, slots=True)
class Slice:
    """``start:stop:step`` inside an index (each part optional)."""

    pos: int
    start: Tree | None
    stop: Tree | None
    step: Tree | None


@dataclass(frozen=True, slots=True)
class NewAxis:
    """``None`` inside an index (``x[:, None]``): a new axis of length 1, as numpy's."""

    pos: int


@dataclass(frozen=True, slots=True)
class Ellipsis_:
    """``...`` inside an index."""

    pos: int


@dataclass(frozen=True, slots=True)
class Index:
    """``x[i, :, 1:3, ...]``."""

    pos: int
    operand: Tree
    items: tuple[Tree, ...]


Node: TypeAlias = (
    Num
    | Name
    | Word
    | Unary
    | Chain
    | Power
    | Transpose
    | Slice
    | Ellipsis_
    | NewAxis
    | Index
    | Call
    | ListLit
)


class _Parser(syntax.Parser):
    """Steps on the shared core.

    ``√`` takes a whole postfix (``√x²`` is ``√(x²)``); any operand may be
    indexed (``x[i, 1:3, ...]``); a name is a call of one of ``functions`` (with
    keyword arguments after the positional ones), ``x.T`` or a plain name.
    """

    EXTRA = _EXTRA
    WORDS = True

    def __init__(self, text: str, where: str, functions: dict[str, Any]) -> None:
        super().__init__(text, where)
        self.functions = functions

    def additive(self) -> Tree:
        """A sum, or one comparison of two sums (``a + b < c``)."""
        left = super().additive()
        if not self.is_op(*COMPARISONS):
            return left
        op = self.advance()
        right = super().additive()
        if self.is_op(*COMPARISONS):
            raise error(
                self.text,
                self.where,
                self.tok.pos,
                "expected one comparison but found a chain of them; write (a < b) * (b < c)",
            )
        return Chain(left.pos, left, (Link(op.value, op.text, op.pos, right),))

    def multiplicative(self) -> Tree:
        """``a * b / c // d % e @ f ∘ g``."""
        return self._chain(self.unary, ("*", "/", "//", "%", "@", "∘"))

    def superscript(self, tok: syntax.Token) -> Num:
        return Num(tok.pos, tok.text, sympy.Integer(int(tok.value)))

    def subscript(self, node: Tree) -> Index | None:
        return self.index(node) if self.is_op("[") else None

    def primary(self) -> Tree:
        tok = self.tok
        if tok.kind == "word":
            self.advance()
            return Word(tok.pos, tok.value)
        return self.radical(self.postfix) if self.is_op("√") else super().primary()

    def index(self, operand: Tree) -> Index:
        opening = self.advance()
        self.enter(opening.pos)
        items = self.listed(self.item)
        self.leave()
        self.expect("]", f"to close the index opened at column {opening.pos + 1}")
        return Index(opening.pos, operand, tuple(items))

    def item(self) -> Tree:
        tok = self.tok
        if self.is_op("..."):
            self.advance()
            return Ellipsis_(tok.pos)
        after = self.tokens[self.i + 1] if tok.kind != "end" else tok
        if tok.kind == "name" and tok.text in ("None", "none") and after.value in (",", "]"):
            self.advance()
            return NewAxis(tok.pos)
        start = None if self.is_op(":") else self.additive()
        if not self.is_op(":"):
            assert start is not None
            return start
        self.advance()
        stop = None if self.is_op(":", ",", "]") else self.additive()
        step = None
        if self.is_op(":"):
            self.advance()
            step = None if self.is_op(",", "]") else self.additive()
        return Slice(tok.pos, start, stop, step)

    def name(self) -> Tree:
        tok = self.advance()
        text = tok.text
        if self.is_op("("):
            return self.call(tok)
        if text.endswith(".T") and len(text) > 2:
            return Transpose(tok.pos + len(text) - 2, Name(tok.pos, text[:-2]))
        return Name(tok.pos, text)

    def call(self, tok: syntax.Token) -> Call:
        key = tok.text.lower()
        if key not in self.functions:
            raise error(
                self.text,
                self.where,
                tok.pos,
                f"expected an op ({', '.join(sorted(self.functions))}) but found unknown op '{tok.text}'",
            )
        opening = self.advance()
        self.enter(opening.pos)
        args: list[Tree] = []
        kwargs: list[tuple[str, Tree]] = []
        if not self.is_op(")"):
            while True:
                nxt = self.tokens[self.i + 1] if self.tok.kind != "end" else self.tok
                if self.tok.kind == "name" and nxt.kind == "op" and nxt.value == "=":
                    kw = self.advance()
                    self.advance()
                    if any(k == kw.text for k, _ in kwargs):
                        raise error(
                            self.text, self.where, kw.pos, f"keyword {kw.text!r} given twice"
                        )
                    kwargs.append((kw.text, self.additive()))
                else:
                    if kwargs:
                        raise self.fail("a keyword argument (positional arguments come first)")
                    args.append(self.additive())
                if not self.is_op(","):
                    break
                self.advance()
        self.leave()
        self.expect(")", f"to close the call of {tok.text} at column {tok.pos + 1}")
        low, high, keys = self.functions[key]
        self.check_arity(tok, len(args), low, high, "to", f"positional argument(s) for {key}")
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
    tree = _Parser(syntax.check_text(text, where), where, functions).parse()
    return cast(Node, tree)  # this parser builds only step-language nodes


# ----------------------------------------------------------------------------- plain values


class NotStatic(ValueError):
    """A part of a step that is not a number written in it (where a setting needs one).

    Attributes:
        pos: Offset of the part in the expression.
    """

    def __init__(self, pos: int, message: str) -> None:
        super().__init__(message)
        self.pos = pos


def static_value(node: Tree, what: str) -> Any:
    """A setting written in a step as plain numbers: an int, a Fraction, ``true``/``false``,
    ``none``, a quoted word (``'half_up'``: its text), a list of them, or arithmetic of
    them (``2*3``, ``-1``, ``1/2``).

    Args:
        what: What the value is for (``softmax(axis=…)``), for messages.

    Raises:
        NotStatic: When the part is not written with plain numbers (the column is kept).
    """
    match node:
        case Num():
            v = node.value
            return int(v) if v.is_Integer else Fraction(int(v.p), int(v.q))
        case Name() if node.name in ("true", "false"):
            return node.name == "true"
        case Name() if node.name in ("None", "none"):
            return None
        case Word():
            return node.text
        case Unary():
            v = _plain_number(static_value(node.operand, what), node.operand, what)
            return -v if node.op == "-" else v
        case ListLit():
            return [static_value(i, what) for i in node.items]
        case Chain():
            acc = _plain_number(static_value(node.first, what), node.first, what)
            for link in node.rest:
                k = _plain_number(static_value(link.node, what), link.node, what)
                if link.op == "+":
                    acc = acc + k
                elif link.op == "-":
                    acc = acc - k
                elif link.op in ("*", "∘"):
                    acc = acc * k
                elif link.op == "/":
                    if k == 0:
                        raise NotStatic(link.pos, f"division by zero in {what}")
                    acc = Fraction(acc) / k
                    if acc.denominator == 1:
                        acc = int(acc)
                else:
                    raise NotStatic(link.pos, f"expected a plain number for {what}")
            return acc
        case Power():
            b = _plain_number(static_value(node.base, what), node.base, what)
            e = _plain_number(static_value(node.exponent, what), node.exponent, what)
            if not isinstance(e, int) or abs(e) > 64:
                raise NotStatic(node.pos, f"expected a small integer power in {what}")
            return Fraction(b) ** e if e < 0 else b**e
    raise NotStatic(
        node.pos, f"expected a number written in the step for {what} (like 2, -1 or [2, 3])"
    )


def _plain_number(v: Any, node: Tree, what: str) -> Any:
    """``v`` when it is a number arithmetic may take (not a list, a word, true or none)."""
    if isinstance(v, bool) or not isinstance(v, (int, Fraction)):
        shown = (
            "a list" if isinstance(v, list) else repr(v) if isinstance(v, str) else str(v).lower()
        )
        raise NotStatic(node.pos, f"expected a number in the arithmetic of {what}, found {shown}")
    return v


# ----------------------------------------------------------------------------- tree walks


def children(node: Tree) -> list[Tree]:
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


def walk(node: Tree) -> list[Tree]:
    """Every node of the tree, parents before children, left to right."""
    out: list[Tree] = []
    stack = [node]
    while stack:
        n = stack.pop()
        out.append(n)
        stack.extend(reversed(children(n)))
    return out


def names(node: Tree) -> list[Name]:
    """Every name referenced, in order (without recursion limits beyond the parse depth)."""
    out: list[Name] = []
    stack = [node]
    while stack:
        n = stack.pop()
        if isinstance(n, Name):
            out.append(n)
        stack.extend(reversed(children(n)))
    return out


def mapped(node: Tree, fn: Callable[[Tree], Tree | None]) -> Tree:
    """Rebuild ``node`` bottom-up; ``fn`` returns a replacement or ``None`` to keep it."""
    match node:
        case Unary():
            node = Unary(node.pos, node.op, mapped(node.operand, fn))
        case Chain():
            node = Chain(
                node.pos,
                mapped(node.first, fn),
                tuple(Link(k.op, k.text, k.pos, mapped(k.node, fn)) for k in node.rest),
            )
        case Power():
            node = Power(node.pos, mapped(node.base, fn), mapped(node.exponent, fn))
        case Transpose():
            node = Transpose(node.pos, mapped(node.operand, fn))
        case Index():
            node = Index(
                node.pos, mapped(node.operand, fn), tuple(mapped(i, fn) for i in node.items)
            )
        case Call():
            node = Call(
                node.pos,
                node.name,
                tuple(mapped(a, fn) for a in node.args),
                tuple((k, mapped(v, fn)) for k, v in node.kwargs),
            )
        case ListLit():
            node = ListLit(node.pos, tuple(mapped(i, fn) for i in node.items))
        case Slice():
            node = Slice(
                node.pos,
                *(None if b is None else mapped(b, fn) for b in (node.start, node.stop, node.step)),
            )
    out = fn(node)
    return node if out is None else out


# ----------------------------------------------------------------------------- LaTeX

_PREC = {"+": 1, "-": 1, "*": 2, "/": 2, "@": 2, "∘": 2, "//": 2, "%": 2}
_PREC.update(dict.fromkeys(COMPARISONS, 0))
_TEX_OPS = {
    "+": "+",
    "-": "-",
    "*": r"\odot",
    "∘": r"\odot",
    "@": r"\,",
    "/": "/",
    "//": r"\mathbin{//}",
    "%": r"\bmod",
    "<": "<",
    "<=": r"\le",
    ">": ">",
    ">=": r"\ge",
    "==": "=",
    "!=": r"\ne",
}


def _esc(text: str) -> str:
    return text.replace("_", r"\_")


def _tex_name(name: str) -> str:
    base, _, rest = name.partition("[")
    core = r"\mathrm{" + base.replace("_", r"\_") + "}" if "." in base or len(base) > 1 else base
    return core + (f"_{{{rest[:-1]}}}" if rest else "")


def latex(node: Tree, prec: int = 0) -> str:
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
        case Word():
            return r"\text{" + _esc(node.text) + "}"
        case Ellipsis_():
            return r"\ldots"
        case NewAxis():
            return r"\mathrm{None}"
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


def unparse(node: Tree) -> str:
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
        case Word():
            return repr(node.text)
        case Ellipsis_():
            return "..."
        case NewAxis():
            return "None"
        case Index():
            return f"{unparse(node.operand)}[{', '.join(unparse(i) for i in node.items)}]"
        case Call():
            args = [unparse(a) for a in node.args] + [f"{k}={unparse(v)}" for k, v in node.kwargs]
            return f"{node.name}({', '.join(args)})"
        case ListLit():
            return "[" + ", ".join(unparse(i) for i in node.items) + "]"
    raise TypeError(type(node).__name__)  # pragma: no cover
