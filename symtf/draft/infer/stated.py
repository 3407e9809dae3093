r"""The steps an article states in its formulas, as candidate steps over known tensors.

An article that writes ``Q = X \cdot W_Q`` above a printed ``Q`` has said what ``Q``
is: the printed numbers are then checked against that step, whatever they are, as
statcheck recomputes the statistic a paper names. :func:`meanings` turns a formula
(read by :mod:`symtf.draft.infer.formula`) into the candidate steps it can mean —
a product may be a matrix product or an element-wise one, index notation
``Q_i \cdot K_j^T`` is a product with a transpose, ``\frac{e^{z_i}}{\sum_j e^{z_j}}``
is a row softmax, ``\text{LayerNorm}`` leaves ε and the variance's divisor open — over
the tensors a :class:`Resolver` knows by name. Which meaning the article used is left
to the shapes and to the printed numbers (the search weighs them).
"""

from __future__ import annotations

import itertools
import re
from collections.abc import Callable, Iterator
from dataclasses import dataclass

from symtf.draft.article import Equation, Printing
from symtf.draft.infer.formula import FUNCTIONS, INDEX, Node, name_text, parse
from symtf.draft.templates import Call, Expr, Num, call

__all__ = ["Resolver", "formula_names", "label_equation", "meanings"]

#: At most this many meanings of one formula are kept (products multiply them).
MAX_MEANINGS = 48
#: LayerNorm/RMSNorm ε a formula that writes none may mean.
EPSILONS = ("0", "1e-05", "1e-06", "1e-12")


@dataclass(frozen=True)
class Resolver:
    """How the search names what it knows.

    Attributes:
        tensors: A name as written (``W_Q``, ``Score``) → the known tensors it may name,
            nearest first.
        number: A name as written (``T``, ``d_k``) → the number the article gives it, if any.
    """

    tensors: Callable[[str], list[Expr]]
    number: Callable[[str], str | None]


@dataclass(frozen=True)
class _M:
    """One meaning of a sub-formula: the step, and the index letters its rows/columns carry."""

    expr: Expr
    index: str = ""  # "" (no index notation), "i" (a row index), ...
    scalar: bool = False


def meanings(node: Node, resolve: Resolver) -> list[Expr]:
    """The candidate steps a formula may mean (possibly none), simplest first."""
    out = []
    seen: set[Expr] = set()
    for m in _meanings(node, resolve):
        if m.scalar or m.expr in seen:
            continue
        seen.add(m.expr)
        out.append(m.expr)
        if len(out) >= MAX_MEANINGS:
            break
    return out


def _cap(it: Iterator[_M]) -> list[_M]:
    return list(itertools.islice(it, MAX_MEANINGS))


def _meanings(node: Node, r: Resolver) -> list[_M]:
    kind = node.kind
    if kind == "num":
        return [_M(Num(node.text), scalar=True)]
    if kind == "name":
        return _name(node, r)
    if kind == "neg":
        return [_M(call("neg", m.expr), m.index, m.scalar) for m in _meanings(node.args[0], r)]
    if kind == "T":
        arg = node.args[0]
        if arg.kind == "name" and not _name(arg, r, whole=True):
            split = _split(arg, r, lambda x: Node("T", args=(x,)))
            return _meanings(split, r) if split is not None else []
        return [_M(call("T", m.expr), m.index) for m in _meanings(arg, r) if not m.scalar]
    if kind == "sqrt":
        return [_M(call("sqrt", m.expr), m.index, m.scalar) for m in _meanings(node.args[0], r)]
    if kind in ("add", "sub"):
        op = kind
        return _cap(
            _M(call(op, a.expr, b.expr), a.index or b.index, a.scalar and b.scalar)
            for a, b in _pairs(node, r)
        )
    if kind == "hadamard":
        return _cap(
            _M(call("mul", a.expr, b.expr), a.index or b.index, a.scalar and b.scalar)
            for a, b in _pairs(node, r)
        )
    if kind == "mul":
        return _cap(_products(node, r))
    if kind == "matmul":
        return _cap(
            _M(call("matmul", a.expr, b.expr), a.index or b.index)
            for a, b in _pairs(node, r)
            if not (a.scalar or b.scalar)
        )
    if kind == "div":
        soft = _softmax_pattern(node, r)
        if soft:
            return soft
        return _cap(
            _M(call("div", a.expr, b.expr), a.index or b.index, a.scalar and b.scalar)
            for a, b in _pairs(node, r)
        )
    if kind == "pow":
        base, exp = node.args
        if exp.kind == "num":
            return [
                _M(call("pow", m.expr, Num(exp.text)), m.index, m.scalar)
                for m in _meanings(base, r)
            ]
        return []
    if kind == "call":
        return _cap(_call(node, r))
    if kind == "sum":
        return _cap(_sum(node, r))
    return []


def _pairs(node: Node, r: Resolver) -> Iterator[tuple[_M, _M]]:
    left = _meanings(node.args[0], r)
    right = _meanings(node.args[1], r) if left else []
    return itertools.product(left, right)


def _name(node: Node, r: Resolver, *, whole: bool = False) -> list[_M]:
    text = name_text(node)
    number = r.number(text)
    if number is not None:
        return [_M(Num(number), scalar=True)]
    found = [_M(e) for e in r.tensors(text)]
    if found:
        return found
    if node.sub and INDEX.match(node.sub):
        base = name_text(Node("name", node.text, sup=node.sup))
        number = r.number(base)
        if number is not None:
            return [_M(Num(number), scalar=True)]
        return [_M(e, node.sub.replace(",", "").replace(" ", "")) for e in r.tensors(base)]
    if whole:
        return []
    split = _split(node, r)
    return _meanings(split, r) if split is not None else []


def _split(node: Node, r: Resolver, last: Callable[[Node], Node] | None = None) -> Node | None:
    """``QK`` (or ``xW_1``) written without a space: the product of single-letter names, the
    subscript and superscript belonging to the last letter; ``last`` wraps that letter (a
    transpose: ``QK^T``)."""
    if len(node.text) < 2 or not node.text.isalpha():
        return None
    letters = [Node("name", c) for c in node.text[:-1]]
    letters.append(Node("name", node.text[-1], sub=node.sub, sup=node.sup))
    if not all(r.tensors(name_text(c)) or r.number(name_text(c)) for c in letters):
        return None
    if last is not None:
        letters[-1] = last(letters[-1])
    chain = letters[0]
    for nxt in letters[1:]:
        chain = Node("mul", args=(chain, nxt))
    return chain


def _products(node: Node, r: Resolver) -> Iterator[_M]:
    weights = _weights(node.args[1])
    for a, b in _pairs(node, r):
        if a.scalar or b.scalar:
            yield _M(call("mul", a.expr, b.expr), a.index or b.index, a.scalar and b.scalar)
            continue
        ia, ib = a.index, b.index
        if ia and ib and ia != ib:
            # index notation: the dot product of row i of A with row j of B is (A·Bᵀ)_ij
            if isinstance(b.expr, Call) and b.expr.op == "T":
                yield _M(call("matmul", a.expr, b.expr), ia + ib)
            else:
                yield _M(call("matmul", a.expr, call("T", b.expr)), ia + ib)
            continue
        yield _M(call("matmul", a.expr, b.expr), ia or ib)
        if not weights:
            yield _M(call("mul", a.expr, b.expr), ia or ib)


def _weights(node: Node) -> bool:
    """``O \\cdot W_1``: a product whose right factor is a weight matrix ``W`` (``W_1``,
    ``W_Q``) applies a layer, a matrix product, never an element-wise one."""
    return node.kind == "name" and node.text == "W" and bool(node.sub)


def _softmax_pattern(node: Node, r: Resolver) -> list[_M]:
    r"""``\frac{e^{x_i}}{\sum_j e^{x_j}}``: the row softmax of ``x``."""
    num, den = node.args
    if not (num.kind == "call" and num.text == "exp" and den.kind == "sum"):
        return []
    body = den.args[0]
    if not (body.kind == "call" and body.text == "exp"):
        return []
    if _strip_index(num.args[0]) != _strip_index(body.args[0]):
        return []
    return [
        _M(call("softmax", m.expr, axis=-1), m.index)
        for m in _meanings(num.args[0], r)
        if not m.scalar
    ]


def _strip_index(node: Node) -> Node:
    if node.kind == "name" and node.sub and INDEX.match(node.sub):
        return Node("name", node.text, sup=node.sup)
    return Node(node.kind, node.text, tuple(_strip_index(a) for a in node.args), node.sub, node.sup)


def _sum(node: Node, r: Resolver) -> Iterator[_M]:
    r"""``\sum_j \alpha_{ij} V_j``: the product of the weights with the rows they weigh."""
    body = node.args[0]
    if body.kind != "mul" or not node.sub:
        return
    for a, b in _pairs(body, r):
        if not a.scalar and not b.scalar and node.sub in a.index and node.sub in b.index:
            yield _M(call("matmul", a.expr, b.expr), a.index.replace(node.sub, ""))


def _call(node: Node, r: Resolver) -> Iterator[_M]:
    word = node.text.lower()
    family = FUNCTIONS.get(word, word)
    args = node.args
    if family in ("max", "min") and len(args) == 2:
        zero = [a for a in args if a.kind == "num" and float(a.text) == 0]
        other = [a for a in args if not (a.kind == "num" and float(a.text) == 0)]
        if family == "max" and len(zero) == 1 and len(other) == 1:
            for m in _meanings(other[0], r):
                yield _M(call("relu", m.expr), m.index)
        return
    if len(args) != 1:
        return
    inner = _meanings(args[0], r)
    for m in inner:
        if m.scalar and family not in ("exp", "log", "sqrt"):
            continue
        x = m.expr
        if family == "softmax":
            yield _M(call("softmax", x, axis=-1), m.index)
        elif family in ("relu", "sigmoid", "tanh", "silu", "exp"):
            yield _M(call(family, x), m.index, m.scalar)
        elif family == "log":
            yield _M(call("log", x), m.index, m.scalar)
        elif family == "sqrt":
            yield _M(call("sqrt", x), m.index, m.scalar)
        elif family == "gelu":
            yield _M(call("gelu", x), m.index)
            yield _M(call("gelu_tanh", x), m.index)
        elif family == "layernorm":
            for eps in EPSILONS:
                for unbiased in (False, True):
                    yield _M(call("layernorm", x, eps=eps, unbiased=unbiased), m.index)
        elif family == "rmsnorm":
            for eps in EPSILONS[:3]:
                yield _M(call("rmsnorm", x, eps=eps), m.index)
        elif family in ("mean", "sum", "max"):
            yield _M(call(family, x, axis=-1, keepdims=True), m.index)
        elif family in ("var", "std"):
            for unbiased in (False, True):
                yield _M(call(family, x, axis=-1, keepdims=True, unbiased=unbiased), m.index)


def label_words(label: str) -> set[str]:
    """The words of a label, lower-cased and singular (``Raw Attention Scores:`` → score …)."""
    words = set()
    for w in re.findall(r"[A-Za-zα-ω]+(?:_\{?\w+\}?)?", label):
        w = w.replace("{", "").replace("}", "").lower()
        words.add(w)
        if len(w) > 3 and w.endswith("s") and not w.endswith("ss"):
            words.add(w[:-1])
    return words


def label_equation(p: Printing, resolve: Resolver | None = None) -> Equation | None:
    """``z / T = [2/2, 1/2, 0.1/2] = [1.0, 0.5, 0.05]``: a label written as a formula of
    names (not a bare name) is an equation the line states for its printed value.

    ``QKᵀ`` and ``XW_Q`` are formulas too: a transpose, and names written together that
    are no known tensor's name but each letter one's (``X`` then ``W_Q``: their product),
    given ``resolve`` (the names known at the printing). A plain name (``A``, ``scores``)
    is never one."""
    node = parse(p.label) if re.search(r"[-+*/·×@^ᵀ⊤]", p.label) else None
    if node is None and resolve is not None and re.fullmatch(r"[A-Za-z]{2,}(?:_\w+)?", p.label):
        node = parse(p.label)
    if node is None or not node.names():
        return None
    if node.kind == "name" and not (
        resolve is not None and not _name(node, resolve, whole=True) and _split(node, resolve)
    ):
        return None
    return Equation(p.line, p.label, (), p.label, p.label, p.label, p.cell)


def formula_names(latex: str) -> set[str]:
    """The names a formula reads (``e^{z_i / T}`` → ``z``, ``T``), none if it does not parse."""
    node = parse(latex) if latex else None
    return {n.text for n in node.names()} if node is not None else set()
