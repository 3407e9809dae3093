"""What a displayed line's verdict says: the reading that holds (as displayed, exact, or
mixed), the literals left unread, and the results a line computes from unrounded.
"""

from __future__ import annotations

import re
from typing import Any

import sympy

from symtf.checking import lineage, repeated
from symtf.checking.wording import Names
from symtf.language import expr as sx
from symtf.numbers import Printed
from symtf.spec import Claim, Derivation


def explain_reading(
    claim: Claim,
    p: Printed,
    va: str,
    da: str | None,
    vb: str,
    db: str | None,
    words: dict[str, str],
    substituted: bool,
    operands: tuple[str, str, list[dict[str, Any]]],
    through: dict[str, str] | None = None,
    copies: list[lineage.Copy] | tuple[()] = (),
) -> str:
    """The claim's explanation in the article's words.

    ``words`` maps each literal that stands for an unrounded value to the article's name
    for it; ``operands`` is the line as written with references in words, and the line
    with every such literal replaced by its unrounded value. ``through``: when some
    literal carries an earlier value it does not print as (the line is read through the
    chain), ``words`` with what each such value is; ``copies``: the literals that are
    copy slips.
    """
    written, unrounded, _ = operands
    shown = f"as displayed, {written} = {short(da)}"
    if not substituted:
        return f"{shown}: {word(va)}"
    if through is not None and not (va in GOOD and vb in GOOD):
        # (both readings right: the chain changes nothing a reader must tell apart)
        return lineage.explain_through(p, va, da, vb, db, through, operands, copies)
    which = "; ".join(f"{k} is {v}" for k, v in words.items())
    exact = f"with the unrounded values ({which}) it is {unrounded} = {short(db)}"
    good = ("exact", "rounded")
    if va in good and vb in good:
        return f"{shown} and {exact}: both readings give {p.text}"
    if vb in good:
        return f"{shown}, which does not give {p.text}; {exact}, so the article carried unrounded values (hidden precision)"
    if va in good:
        return f"{shown}, consistent with computing from the rounded inputs; {exact}, so {p.text} is {'a slip' if vb == 'slip' else vb}"
    return f"{shown}; {exact}: neither reading gives {p.text}"


GOOD = ("exact", "rounded")


def unread_literals(
    parsed: sx.Expression, replace: dict[int, Any], derivation: Derivation
) -> list[str]:
    """The decimal literals of a line left as written by its exact reading that may stand
    for a rounded value.

    A literal that is exactly an entry of a tensor the article gives (``K[0][0] = 0.1``),
    or a whole number written with decimals (``× 0.0``), is read as itself: it leaves no
    rounded value in the reading.
    """
    given = repeated.exact_givens(derivation)
    return [
        lit.text
        for lit in parsed.literals
        if lit.pos not in replace
        and "." in lit.text
        and not repeated.read_as_itself(lit.text, given)
    ]


def explain_mixed(
    p: Printed,
    va: str,
    da: str | None,
    db: str | None,
    words: dict[str, str],
    operands: tuple[str, str, list[dict[str, Any]]],
    unread: list[str],
) -> str:
    """A line right as displayed whose partly unrounded reading computes nothing known."""
    written, unrounded, _ = operands
    which = "; ".join(f"{k} is {v}" for k, v in words.items())
    kept = ", ".join(unread)
    return (
        f"as displayed, {written} = {short(da)}: {word(va)}; with only some values unrounded"
        f" ({which}) it is {unrounded} = {short(db)}, but {kept} stays as printed and that"
        f" reading computes no step of the article, so it does not decide {p.text}"
    )


def explain_symbolic(
    claim: Claim,
    p: Printed,
    va: str,
    da: str | None,
    sources: dict[str, str],
    substituted: bool,
    depends: str,
) -> str:
    """A displayed line whose value depends on a symbol: what it depends on, and where it prints."""
    if not substituted or da is None:
        return f"as displayed, {claim.expression} {depends}"
    shown = f"as displayed, {claim.expression} = {short(da)}"
    if va in ("exact", "rounded"):
        shown += ", consistent with computing from the rounded inputs"
    stands = ", ".join(f"{k} = {v}" for k, v in sources.items())
    return f"{shown}; with the values the literals stand for ({stands}) it {depends}"


_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_.]*(?:\s*\[[^\]]*\])?")


def unrounded_note(
    parsed: sx.Expression, replace: dict[int, Any], quantity: Any, names: Names, labels: set[str]
) -> tuple[str, str, list[dict[str, Any]]]:
    """The line with references in the article's words, and with its unrounded operands.

    Returns the two texts and, for each literal read as an unrounded value, its position
    in the parsed text, its text and the value's certified digits.

    A reference to a step (``sum(l0.h0.pattern[0])``) is written as the article names it
    (``sum(pattern Birds row)``); the second text also writes each literal that stands
    for an unrounded value as that value's certified digits (``5.652233…``).
    """
    text = parsed.text
    spans: list[tuple[int, int, str, str]] = []  # start, end, as written, unrounded
    used: list[dict[str, Any]] = []
    for ref in parsed.references:
        m = _NAME.match(text, ref.pos)
        if m is None or ref.name in labels:
            continue
        said = names.reference(str(ref)) if ref.index else names.step(ref.name)
        bare = text[ref.pos - 1 : ref.pos] == "(" and text[m.end() : m.end() + 1] == ")"
        spans.append((ref.pos, m.end(), said if bare or not ref.index else f"({said})", ""))
    for lit in parsed.literals:
        if lit.pos in replace:
            value = replace[lit.pos]
            digits = short(quantity(sympy.sympify(value)).decimal())
            used.append({"position": lit.pos, "literal": lit.text, "unrounded": digits})
            if digits.startswith("-"):
                digits = f"({digits})"
            spans.append((lit.pos, lit.pos + len(lit.text), lit.text, digits))
    written, unrounded, last = [], [], 0
    for start, end, said, digits in sorted(spans):
        if start < last:
            continue
        written += [text[last:start], said]
        unrounded += [text[last:start], digits or said]
        last = end
    written.append(text[last:])
    unrounded.append(text[last:])
    return "".join(written), "".join(unrounded), used


def word(v: str) -> str:
    return {"exact": "exactly as printed", "rounded": "correctly rounded"}.get(v, v)


def short(s: str | None) -> str:
    if s is None:
        return "(undecided)"
    head, dot, tail = s.partition(".")
    return s if len(tail) <= 6 else f"{head}{dot}{tail[:6]}…"
