"""What the lines checked so far leave for the lines below them: each printed result and
row remembered by its text, the rows and pieces of a line's tree, and the keys they are
found by.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any

import sympy

from symtf.checking import lineage
from symtf.errors import ExpressionError, SpecError
from symtf.language import expr as sx
from symtf.language.syntax import Link
from symtf.spec import Claim


def value_entries(v: Any) -> list[sympy.Expr]:
    if isinstance(v, sympy.MatrixBase):
        return list(v)
    return [sympy.sympify(v) if not isinstance(v, sympy.Basic) else v]


def _nearer(lines: dict[str, int | None], text: str, line: int | None) -> bool:
    """Whether a result printed as ``text`` at ``line`` is the one later literals repeat:
    the first so printed, or one printed again further down the article than the
    literals' reach (:data:`lineage.LONG_ENTRY_LINES`) from it (a literal ``0.5`` in
    ``3*0.5`` repeats the ``sin(0.524) = 0.5`` beside it, not a ``θ₆₃ = 0.5`` two hundred
    lines up). Within that reach the first stays: a line's chain prints its terms again."""
    if text not in lines:
        return True
    before = lines[text]
    return line is not None and before is not None and line - before > lineage.LONG_ENTRY_LINES


def _another_quantity(ev: Any, claim: Claim, text: str, value: Any) -> bool:
    """Whether a result printed as ``text`` is another quantity than the one printed so
    before it, within the reach of later literals (``e^{-0.5} ≈ 0.61``, then
    ``p = 24.53 / 40.04 = 0.61``). A line that restates an earlier number (its chain
    printing a term again), or one that writes the same arithmetic again, is the same
    quantity."""
    if claim.restates is not None or text not in ev.printed_results:
        return False
    before = ev.printed_result_lines.get(text)
    if claim.source_line is None or before is None:
        return False
    if not 0 < claim.source_line - before <= lineage.LONG_ENTRY_LINES:
        return False
    label = ev.printed_labels.get(text)
    earlier = next((c for c in ev.derivation.claims if c.label == label), None)
    if earlier is None or _written(earlier.expression) & _written(claim.expression):
        return False  # the same arithmetic written again: the article's one quantity
    return not lineage.same_quantity(ev.exact_trace().backend, ev.printed_results[text], value)


def _written(expression: str | None) -> set[str]:
    """The links of a displayed line's arithmetic, without white space."""
    return {"".join(link.split()) for link in (expression or "").split("=")} - {""}


def _blank_zero(text: str, value: Any) -> bool:
    """Whether a result printed as a zero (``0.0``, ``-0.00``) is not zero: a tiny value
    rounded away. Its print has no digit to tell it apart from the zeros articles write as
    inputs (a weight ``0.0``, a bias), so no later literal is taken to repeat it."""
    digits = text.strip().lstrip("+-−")
    return bool(re.fullmatch(r"0*\.?0*", digits)) and "0" in digits and value != 0


def remember(ev: Any, claim: Claim, value: Any) -> None:
    m = value if isinstance(value, sympy.MatrixBase) else sympy.ImmutableMatrix([[value]])
    ev.expression_values[claim.label] = m
    if claim.printed and len(claim.printed) == 1 and len(claim.printed[0]) == 1:
        text = claim.printed[0][0].text
        if _blank_zero(text, m[0, 0]):
            pass  # a later literal 0.0 is a zero the article writes, not this rounded result
        elif _another_quantity(ev, claim, text, m[0, 0]):
            # two quantities printed alike: a later literal repeats neither (no link is invented)
            del ev.printed_results[text]
            ev.printed_labels.pop(text, None)
        elif _nearer(ev.printed_result_lines, text, claim.source_line):
            ev.printed_results[text] = m[0, 0]
            ev.printed_labels[text] = claim.label
            ev.printed_result_lines[text] = claim.source_line
    elif claim.printed and len(claim.printed) == 1 and len(claim.printed[0]) == len(m):
        # a vector result: a later line may repeat it as a bracketed literal
        key = row_key(p.text for p in claim.printed[0])
        ev.printed_results.setdefault(key, sympy.ImmutableMatrix([list(m)]))
        ev.printed_labels.setdefault(key, claim.label)
        lineage.remember_entries(ev, claim, m)  # or one of its numbers, on its own
    else:  # a matrix or a column: a later line may repeat one of its numbers
        lineage.remember_entries(ev, claim, m)


def row_key(texts: Any) -> str:
    """A bracketed row of literals as one key: ``[1.0,4.0,0.0]`` (signs kept, spaces dropped)."""
    return "[" + ",".join(t.replace("−", "-").strip() for t in texts) + "]"


@dataclass(frozen=True)
class Row:
    """A bracketed row of number literals in a displayed line, ``[1.0, -4.0, 0.0]``.

    Attributes:
        literals: Its literals, in order.
        signs: The sign written before each (``-1`` for ``-4.0``).
        key: Its text as :func:`row_key` writes it.
    """

    literals: tuple[sx.Literal, ...]
    signs: tuple[int, ...]
    key: str


def rows_of(parsed: sx.Expression) -> list[Row]:
    """Every bracketed row whose items are all number literals (perhaps signed)."""
    out: list[Row] = []

    def walk(node: Any) -> None:
        if isinstance(node, sx.Brackets):
            lits, signs = [], []
            for item in node.items:
                sign = 1
                while isinstance(item, sx.Unary):
                    sign = -sign if item.op == "-" else sign
                    item = item.operand
                if not isinstance(item, sx.Literal):
                    break
                lits.append(item)
                signs.append(sign)
            else:
                if len(lits) > 1:
                    texts = [
                        ("-" if g < 0 else "") + lit.text
                        for lit, g in zip(lits, signs, strict=True)
                    ]
                    out.append(Row(tuple(lits), tuple(signs), row_key(texts)))
                    return
        for child in _children(node):
            walk(child)

    walk(parsed.root)
    return out


def _children(node: Any) -> list[Any]:
    out: list[Any] = []
    for name in getattr(node, "__slots__", ()):
        v = getattr(node, name, None)
        if isinstance(v, tuple):
            out.extend(x for x in v if hasattr(x, "__slots__") and not isinstance(x, str))
        elif hasattr(v, "__slots__") and not isinstance(v, (str, int)):
            out.append(v)
    return out


def chain_key(claim: Claim) -> tuple[int | str, str] | None:
    """The links of one chain ``a = b = c`` share their article line and printed result
    (the claim's label, in a file that does not name the article's lines)."""
    if not claim.printed:
        return None
    if claim.source_line is None:
        return "claim", claim.label
    return claim.source_line, row_key(p.text for row in claim.printed for p in row)


def _pieces(node: Any, root: bool = True) -> list[Any]:
    """The compound nodes under ``node`` (brackets, calls, powers, and the first k > 1
    operands of a chain), the whole expression excluded."""
    out: list[Any] = []
    if isinstance(node, sx.Chain):
        for k in range(1, len(node.rest) + (0 if root else 1)):
            out.append(sx.Chain(node.pos, node.first, node.rest[:k]))
    elif not root and isinstance(node, (sx.Call, sx.Power)):
        out.append(node)
    for child in _children(node):
        out.extend(_pieces(child.node if isinstance(child, Link) else child, False))
    return out


def _piece_text(text: str, node: Any) -> str:
    """A piece as the line writes it, from its first character to its last literal (and the
    brackets that close inside it)."""
    start = node.pos
    ends = [lit.pos + len(lit.text) for lit in _literals_under(node)]
    end = max(ends, default=len(text))
    while text[start:end].count("(") > text[start:end].count(")"):
        close = text.find(")", end)
        if close < 0:
            break
        end = close + 1
    while text[start:end].count(")") > text[start:end].count("("):
        opening = text.rfind("(", 0, start)
        if opening < 0:
            break
        start = opening
    piece = text[start:end].strip()
    whole = text[:start].rstrip().endswith("(") and text[end:].lstrip().startswith(")")
    return f"({piece})" if whole else piece


def _literals_under(node: Any) -> list[Any]:
    if isinstance(node, sx.Literal):
        return [node]
    out = []
    for child in _children(node):
        out.extend(_literals_under(child.node if isinstance(child, Link) else child))
    return out


def remember_pieces(
    ev: Any, claim: Claim, parsed: sx.Expression, resolve: Any, replace: dict[int, Any], xp: Any
) -> None:
    """Keep each compound piece of a link of a chain, for the links after it.

    In ``0.498 × (0.0025 - (-0.002515)) = 0.498 × 0.005015 = 0.002497`` the second link's
    0.005015 is the first link's bracket worked out: it stands for that bracket's exact
    reading, not for itself (which, beside the unrounded 0.498, mixes the two readings).
    """
    key = chain_key(claim)
    if key is None:
        return
    pieces = ev.chain_pieces.setdefault(key, [])
    for node in _pieces(parsed.root):
        try:
            shown = parsed.evaluate(resolve, backend=xp, node=node)
            exact = parsed.evaluate(resolve, replace, backend=xp, node=node) if replace else shown
        except (ExpressionError, SpecError, LookupError, TypeError):
            continue
        if isinstance(shown, sympy.MatrixBase) or isinstance(exact, sympy.MatrixBase):
            continue
        pieces.append((shown, exact, claim.label, _piece_text(parsed.text, node)))


def split_key(key: str) -> list[str]:
    return [c for c in re.split(r"[\s,]+", key.strip().strip("[]")) if c]


def negated_literal(lit: sx.Literal, text: str) -> bool:
    """Whether a unary minus applies to the literal (``-0.487``, ``(−0.5)``, ``x + -1``).

    A minus after an operand (``0.3090 − 0.8968``) is a subtraction: the literal is the
    positive number subtracted.
    """
    before = text[: lit.pos].rstrip(" (")
    if not before.endswith(("-", "−")):
        return False
    rest = before[:-1].rstrip()
    return not rest or not (rest[-1].isalnum() or rest[-1] in ".)]²³⁴⁵⁶⁷⁸⁹⁰¹ᵀ_")
