"""A displayed line of arithmetic as LaTeX, from the expression tree the parser made:
operators with their precedence, relations, matrices and names as the page writes them.
"""

from __future__ import annotations

import re
from typing import Any, cast

from symtf.renderers.latex.matrices import bmatrix
from symtf.renderers.latex.names import label_math, tt
from symtf.renderers.tex import math_text

_OPS = {
    "+": "+",
    "-": "-",
    "*": r"\cdot",
    "/": "/",
    "@": r"\,",
    "∘": r"\circ",
}
_OP_TEXT = {"×": r"\times", "·": r"\cdot", "⋅": r"\cdot", "÷": r"\div", ".*": r"\odot", "−": "-"}
_PREC = {"+": 1, "-": 1, "*": 2, "/": 2, "@": 2, "∘": 2}
#: The relations of a displayed chain (as :func:`symtf.language.latexmath.split_chain`
#: gives them) in LaTeX; anything else is shown as ``=``.
_RELATION_TEX = {
    "=": "=",
    "≈": r"\approx",
    r"\approx": r"\approx",
    r"\simeq": r"\simeq",
    r"\eq": "=",
    r"\equiv": r"\equiv",
    r"\doteq": r"\doteq",
}


def expression_latex(
    text: str, names: dict[str, str] | None = None, literals: dict[int, str] | None = None
) -> str:
    r"""A displayed-arithmetic expression as the article wrote it, in math-mode LaTeX.

    Literals keep their printed digits (``e^2.309`` → ``e^{2.309}``), or, with
    ``literals`` (position in ``text`` → digits), show those digits instead: the line
    with its unrounded operands. A chain ``a = b ≈ c`` is each link typeset so, joined
    by its relations. When the text cannot be parsed it is shown verbatim in typewriter
    type.

    Example:
        >>> expression_latex("5.652 / 21.372")
        '5.652 / 21.372'
        >>> expression_latex("1/4 + 1/4 = 0.25 + 0.25")
        '1 / 4 + 1 / 4 = 0.25 + 0.25'
    """
    from symtf.errors import ExpressionError
    from symtf.language import expr as sx
    from symtf.language.latexmath import split_chain

    links, relations = split_chain(text)
    if len(links) > 1 and all(link for _, link in links):
        out = ""
        for k, (at, link) in enumerate(links):
            own = {p - at: v for p, v in (literals or {}).items() if at <= p < at + len(link)}
            if k:
                out += f" {_RELATION_TEX.get(relations[k - 1], '=')} "
            out += expression_latex(link, names, own or None)
        return out
    try:
        parsed = sx.parse(text, where="expression")
    except (ExpressionError, RecursionError):
        return tt(text)
    try:
        return _node(parsed.root, 0, names or {}, literals)
    except (RecursionError, AttributeError, TypeError):
        return tt(text)


def _node(
    n: Any,
    parent_prec: float = 0,
    names: dict[str, str] | None = None,
    literals: dict[int, str] | None = None,
) -> str:
    from symtf.language import expr as sx

    if isinstance(n, sx.Literal):
        if literals and n.pos in literals:  # its unrounded value's digits (… marks a cut)
            digits = literals[n.pos]
            cut = digits.endswith("…")
            digits = digits.rstrip("…")
            if not re.fullmatch(r"[-+]?[0-9.eE+-]+", digits):
                return n.text
            shown = digits + (r"\ldots" if cut else "")
            return shown if not digits.startswith("-") else rf"\left({shown}\right)"
        return n.text
    if isinstance(n, sx.Superscript):
        return str(n.value)
    if isinstance(n, sx.Constant):
        name = n.name.lower()
        return {"e": "e", "pi": r"\pi", "π": r"\pi", "inf": r"\infty", "∞": r"\infty"}.get(
            name, math_text(n.name)
        )
    if isinstance(n, sx.Reference):
        idx = "" if not n.index else "[" + ", ".join(str(i) for i in n.index) + "]"
        given = (names or {}).get(n.name)
        return (label_math(given) if given is not None else tt(n.name)) + idx
    if isinstance(n, sx.Unary):
        inner = _node(n.operand, 3, names, literals)
        s = f"{n.op}{inner}"
        return s if parent_prec == 0 else rf"\left({s}\right)"
    if isinstance(n, sx.Chain):
        prec = _PREC.get(n.rest[0].op, 1) if n.rest else 1
        # a leading sign needs no brackets where the chain stands alone or is bracketed
        # (−x + y, 2·(−x + y)), but does inside another (a + (−x)·y)
        alone = parent_prec == 0 or parent_prec >= prec
        first = 0 if isinstance(n.first, sx.Unary) and alone else prec
        s = _node(n.first, first, names, literals)
        for link in n.rest:
            op = _OP_TEXT.get(link.text, _OPS.get(link.op, link.op))
            s += f" {op} " + _node(link.node, prec + 0.5, names, literals)
        return rf"\left({s}\right)" if parent_prec >= prec else s
    if isinstance(n, sx.Power):
        base = _node(n.base, 4, names, literals)
        return f"{{{base}}}^{{{_node(n.exponent, 0, names, literals)}}}"
    if isinstance(n, sx.Transpose):
        return f"{{{_node(n.operand, 4, names, literals)}}}^\\top"
    if isinstance(n, sx.Call):
        args = [_node(a, 0, names, literals) for a in n.args]
        if n.name == "sqrt" and len(args) == 1:
            return rf"\sqrt{{{args[0]}}}"
        if n.name in ("exp", "ln", "log", "max", "min"):
            return rf"\{n.name}\left(" + ", ".join(args) + r"\right)"
        return rf"\operatorname{{{n.name}}}\left(" + ", ".join(args) + r"\right)"
    if isinstance(n, sx.Brackets):
        if n.items and all(isinstance(i, sx.Brackets) for i in n.items):
            rows = [
                [_node(x, 0, names, literals) for x in cast(sx.Brackets, row).items]
                for row in n.items
            ]
            width = max(len(r) for r in rows)
            rows = [r + [""] * (width - len(r)) for r in rows]
            return bmatrix(rows)
        return "[" + ", ".join(_node(x, 0, names, literals) for x in n.items) + "]"
    raise TypeError(f"unknown expression node {type(n).__name__}")
