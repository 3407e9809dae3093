"""The base of a logarithm as the cause of an off displayed line.

An article writes ``log`` and symtf reads the natural logarithm, as the article's
``\\ln`` and its prose usually mean. When a displayed line whose ``log`` is read so is
off, and the same line as displayed, with every one-argument ``log`` taken in base 10
(or base 2), gives every number it prints, the article's ``log`` is that logarithm on
the line: the cause is the convention (JSON ``cause = "convention"``,
``convention = ["log-base-10"]``), said in the article's words.

It is offered only when the convention fits the article's other numbers too: no other
displayed line (or link of a chain) that calls ``log`` and is right with the natural
logarithm may be off in that base. And the line's printed numbers must carry at least
:data:`MIN_DIGITS` significant digits, so that a short number matched by chance is not
taken for a convention.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from symtf.checking import slips
from symtf.checking.causes import Cause
from symtf.checking.evaluation import Evaluator
from symtf.errors import SymtfError
from symtf.numbers import Printed
from symtf.spec import Claim, Derivation

#: The bases tried, with the convention's name and how the text writes the logarithm.
BASES: tuple[tuple[int, str, str], ...] = ((10, "log-base-10", "log₁₀"), (2, "log-base-2", "log₂"))

#: The fewest significant digits, over the line's printed numbers, for a base to be named.
MIN_DIGITS = 3


def with_base(text: str, base: int) -> str | None:
    """The expression ``text`` (symtf's expression syntax) with every one-argument
    ``log(…)`` given the base ``base`` (``log(x)`` → ``log(x, 10)``); ``None`` when it
    calls no such ``log``.

    Example:
        >>> with_base("0.5*log(0.25) + ln(2)", 10)
        '0.5*log(0.25, 10) + ln(2)'
        >>> with_base("log(8, 2)", 10) is None
        True
    """
    out: list[str] = []
    i = 0
    changed = False
    while True:
        j = text.find("log(", i)
        if j < 0:
            break
        if j > 0 and (text[j - 1].isalnum() or text[j - 1] == "_"):
            out.append(text[i : j + 4])
            i = j + 4
            continue
        depth, k, comma = 1, j + 4, False
        while k < len(text) and depth:
            ch = text[k]
            if ch in "([":
                depth += 1
            elif ch in ")]":
                depth -= 1
            elif ch == "," and depth == 1:
                comma = True
            k += 1
        if depth:
            return None  # unbalanced: not rewritten
        inner = text[j + 4 : k - 1]
        if comma:
            out.append(text[i:k])
        else:
            rewritten = with_base(inner, base)
            out.append(text[i : j + 4] + (rewritten or inner) + f", {base})")
            changed = True
        i = k
    out.append(text[i:])
    return "".join(out) if changed else None


def cause(check: Any, claim: Claim, ev: Evaluator, d: Derivation) -> Cause | None:
    """The base of ``log`` under which an off displayed line is right, if the article's
    other numbers allow it (the rules are the module's)."""
    from symtf.checking.displayed import decided_by_link

    link = decided_by_link(claim, check)
    printed = [p for row in link.printed for p in row]
    if not printed or sum(_significant(p) for p in printed) < MIN_DIGITS:
        return None
    for base, name, written in BASES:
        got = _reading(link.expression or "", base, link, ev, d)
        if got is None:
            continue
        shown, values = got
        if not _fits(values, printed) or _contradicted(base, claim, link, ev, d):
            continue
        text = ", ".join(shown)
        return Cause(
            "convention",
            (None,),
            f"the article's log is {written} on this line: as displayed with {written}, "
            f"it gives {text}, as printed, and no other line of the article computes its "
            f"log otherwise",
            convention=(name,),
        )
    return None


def _reading(
    expression: str, base: int | None, claim: Claim, ev: Evaluator, d: Derivation
) -> tuple[list[str], list[Any]] | None:
    """The line as displayed with ``log`` in ``base`` (``None``: as symtf reads it, the
    natural logarithm): its values' leading digits and their certified balls; ``None``
    when it calls no one-argument ``log`` or cannot be evaluated."""
    from symtf.checking.displayed import _resolver
    from symtf.checking.displayed.rows import value_entries
    from symtf.errors import ExpressionError
    from symtf.language import expr as sx
    from symtf.language.latexmath import parse as parse_expression

    try:
        parsed = parse_expression(expression, where=claim.where)
        text = with_base(parsed.text, 10 if base is None else base)
        if text is None:
            return None
        if base is None:
            text = parsed.text
        trace = ev.exact_trace()
        xp = trace.backend
        rewritten = sx.parse(text)
        values = value_entries(rewritten.evaluate(_resolver(trace, d, ev, claim), backend=xp))
        balls = [xp.ball(v, 128) for v in values]
    except (ExpressionError, SymtfError, TypeError, ValueError, ArithmeticError):
        return None
    return [b.str(6, radius=False) for b in balls], balls


def _fits(balls: Sequence[Any], printed: Sequence[Printed]) -> bool:
    return len(balls) == len(printed) and all(
        slips.prints_as(b, p) for b, p in zip(balls, printed, strict=True)
    )


def _contradicted(base: int, claim: Claim, link: Claim, ev: Evaluator, d: Derivation) -> bool:
    """Whether a displayed line (or link) of the article, other than ``link``, that calls
    ``log`` is right with the natural logarithm and off in ``base``."""
    from symtf.checking.displayed import _link_claims
    from symtf.language.latexmath import split_links

    for other in d.claims:
        if other.expression is None or "log" not in other.expression:
            continue
        try:
            links = split_links(other.expression)
            parts = _link_claims(other, links) if len(links) > 1 else [other]
        except SymtfError:
            continue
        printed = [p for row in other.printed for p in row]
        for part in parts:
            if part.label == link.label and part.expression == link.expression:
                continue
            natural = _reading(part.expression or "", None, part, ev, d)
            in_base = _reading(part.expression or "", base, part, ev, d)
            if natural is None or in_base is None:
                continue
            if _fits(natural[1], printed) and not _fits(in_base[1], printed):
                return True
    return False


def _significant(p: Printed) -> int:
    return len(p.text.lstrip("+-−").replace(".", "").lstrip("0"))


__all__ = ["BASES", "MIN_DIGITS", "cause", "with_base"]
