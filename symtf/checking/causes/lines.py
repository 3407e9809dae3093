"""A reader's slips on a displayed line's values (a rounding up, a softmax row worked from
terms written in), and the inputs a displayed line computes from.
"""

from __future__ import annotations

from collections.abc import Iterable
from fractions import Fraction
from typing import Any, cast

import sympy

from symtf.checking import repeated, slips
from symtf.checking.causes.found import GOOD, Cause
from symtf.checking.evaluation import Evaluator
from symtf.checking.report import Check
from symtf.errors import SymtfError
from symtf.numbers import Printed, parse_printed
from symtf.spec import Derivation


def line_slip(
    c: Check, claim: Any, ev: Evaluator, d: Derivation, others: Iterable[Check] = ()
) -> Cause | None:
    """A slip that reproduces one value of a displayed line: as displayed, or as the exact reading.

    ``e^−1.9 = 0.149`` is the line's value truncated; a neighbour's value is not looked for.
    Truncation is a habit of writing, so it must fit the line's other numbers: it is not
    offered when one of ``others`` (the checks of the same line) that is right was rounded
    up, which truncation would have printed otherwise.
    """
    from symtf.checking.displayed import _resolver, decided_by_link
    from symtf.checking.displayed.rows import value_entries
    from symtf.errors import ExpressionError
    from symtf.language.latexmath import parse as parse_expression

    claim = decided_by_link(claim, c)  # a chain: the link that gave the verdict
    p = next((q for row in claim.printed for q in row if q.text == c.printed), None)
    if p is None or p.value is None:
        return None
    trace = ev.exact_trace()
    xp = trace.backend
    k = c.index[-1] if c.index is not None else 0
    values = []
    try:
        parsed = parse_expression(claim.expression, where=claim.where)
        shown = value_entries(parsed.evaluate(_resolver(trace, d, ev, claim), backend=xp))
        values.append(("as displayed", shown[k]))
    except (ExpressionError, SymtfError, IndexError, TypeError):
        pass
    if c.value is not None and c.extra.get("exact_reading", {}).get("stands_for"):
        values.append(("with the values the literals stand for", c.value))
    row = softmax_row(claim, d)
    refuted: tuple[str, str] | None = None
    rounded_up: Check | None = None
    for how, v in values:
        try:
            x = xp.ball(v, 128)
        except (SymtfError, TypeError):
            continue
        reading = "as_displayed" if how == "as displayed" else "exact_reading"
        text = c.extra.get(reading, {}).get("exact")
        for detect in (
            slips.sign_flip,
            slips.decimal_shift,
            slips.digit_transposition,
            slips.truncation,
        ):
            s = detect(p, x, text)
            if s is not None and s.cause == "truncation":
                up = _rounded_up(others, xp)
                if up is not None:
                    rounded_up = rounded_up or up
                    continue
            if s is not None and row and slips.breaks_sum(p, x, row):
                # the row sums to 1 as printed: the number was written as the row needs
                right = slips.correct_roundings(x, p)
                refuted = refuted or (s.cause, right[0].text if right else "")
                continue
            if s is not None:
                return Cause(
                    s.cause,
                    (None,),
                    f"{how}, {s.text}",
                    extra={"slip": s.detail} if s.detail else {},
                )
    if refuted is not None:
        terms = " + ".join(q.text for q in (p, *row))
        return Cause(
            "unexplained",
            (None,),
            f"not {_SLIP_WORDS.get(refuted[0], refuted[0])} either: the row printed with it, "
            f"{terms}, sums to 1, and with {refuted[1]} it would not",
        )
    if rounded_up is not None:
        return Cause(
            "unexplained",
            (None,),
            f"not digits truncated either: the same line prints {rounded_up.printed} for "
            f"{rounded_up.exact}, rounded up, so it rounds rather than truncates",
        )
    return None


def _rounded_up(checks: Iterable[Check], xp: Any) -> Check | None:
    """The first of ``checks`` that is right and prints its exact value rounded up (away
    from zero), so that truncating would have printed it otherwise; else ``None``."""
    for o in checks:
        if o.verdict not in GOOD or o.value is None:
            continue
        try:
            q = parse_printed(o.printed)
            x = xp.ball(o.value, 128)
        except (SymtfError, TypeError, ValueError):
            continue
        if slips.prints_as(x, q) and not slips.prints_as(x, q, "truncate"):
            return o
    return None


#: A reader's slip in words, for saying it is contradicted.
_SLIP_WORDS = {
    "digit-transposition": "two digits swapped",
    "decimal-shift": "a shifted decimal point",
    "sign-flip": "a flipped sign",
    "truncation": "digits truncated",
}

#: How many article lines from a displayed softmax entry its row's other printed entries may be.
ROW_LINES = 5


def softmax_row(claim: Any, d: Derivation) -> list[Printed]:
    """The other printed entries of the softmax row a displayed line computes one entry of.

    A line ``\\frac{e^{5.0}}{e^{5.0} + e^{4.0} + e^{3.0}}`` (or ``exp(a) / (exp(a) + …)``)
    is one entry of a row of as many entries as its denominator has terms. The others are
    the printed numbers written next to it (the claims right after it, else right before,
    within :data:`ROW_LINES` lines) when, with the line's own printed value, they sum to 1
    as printed; else none is known (an empty list).
    """
    n = _softmax_terms(claim.expression or "")
    own = [q for r in claim.printed for q in r]
    if n is None or len(own) != 1 or own[0].value is None:
        return []
    found_at = repeated.article_order(claim, d)
    if found_at is None:
        return []
    claims, here = found_at
    line = claim.source_line

    def near(c: Any) -> bool:
        return line is None or (
            c.source_line is not None and abs(c.source_line - line) <= ROW_LINES
        )

    for side in (claims[here + 1 :], list(reversed(claims[:here]))):
        found: list[Printed] = []
        for c in side:
            if not near(c) or c.expression is not None:
                break
            if c.source_line == line and all(
                _written_in(q.text, claim.expression or "") for r in c.printed for q in r
            ):
                continue  # a number the line itself writes (its exponents), not a sibling
            found.extend(q for r in c.printed for q in r)
            if len(found) >= n - 1:
                break
        others = found[: n - 1]
        if len(others) == n - 1 and all(q.value is not None for q in others):
            tol = sum((q.ulp / 2 for q in (own[0], *others)), Fraction(0))
            total = sum((cast(Fraction, q.value) for q in (own[0], *others)), Fraction(0))
            if abs(total - 1) <= tol:
                return others
    return []


def _written_in(text: str, expression: str) -> bool:
    """Whether a printed number is one the expression writes (not part of a longer one)."""
    import re

    return (
        re.search(r"(?<![\d.])" + re.escape(text.lstrip("-−")) + r"(?![\d])", expression)
        is not None
    )


def _softmax_terms(expression: str) -> int | None:
    """The number of terms of the denominator when the line is one softmax entry, else None."""
    import re

    t = expression.strip()
    m = re.fullmatch(r"\\frac\{(.+?)\}\{(.+)\}", t) or re.fullmatch(r"(.+?)\s*/\s*\((.+)\)", t)
    if m is None:
        return None
    num, den = (g.replace(" ", "") for g in m.groups())
    if not ("e^" in num or "exp" in num):
        return None
    terms: list[str] = []
    depth, cur = 0, ""
    for ch in den:
        depth += 1 if ch in "({[" else -1 if ch in ")}]" else 0
        if ch == "+" and depth == 0:
            terms.append(cur)
            cur = ""
        else:
            cur += ch
    terms.append(cur)
    return len(terms) if len(terms) >= 2 and num in terms else None


def line_inputs(c: Check, claim: Any, ev: Evaluator, d: Derivation) -> list[tuple[str, str]]:
    """The earlier printed numbers a displayed line's value, as displayed, is computed from.

    Each literal the exact reading read as an earlier number (``stands_for``: an earlier
    line's result, an entry or a row of a step) is moved by 1; the pairs ``(literal, what
    it stands for)`` whose move changes the line's value, in the order of ``stands_for``
    (``0.001765 × 0.0`` does not depend on its 0.001765).
    """
    from symtf.checking.displayed import _resolver, decided_by_link
    from symtf.checking.displayed.rows import (
        negated_literal,
        row_key,
        rows_of,
        split_key,
        value_entries,
    )
    from symtf.errors import ExpressionError
    from symtf.language.latexmath import parse as parse_expression

    claim = decided_by_link(claim, c)  # a chain: the link that gave the verdict
    sources = c.extra.get("exact_reading", {}).get("stands_for") or {}
    if not sources or claim.expression is None:
        return []
    trace = ev.exact_trace()
    xp = trace.backend
    k = c.index[-1] if c.index is not None else 0
    try:
        parsed = parse_expression(claim.expression, where=claim.where)
        resolve = _resolver(trace, d, ev, claim)
        shown = value_entries(parsed.evaluate(resolve, backend=xp))[k]
    except (ExpressionError, SymtfError, IndexError, TypeError, LookupError):
        return []
    rows = rows_of(parsed)
    out = []
    for key, ref in sources.items():
        if key.strip().startswith("["):
            row = next((r for r in rows if r.key == row_key(split_key(key))), None)
            lits = row.literals if row is not None else ()
        else:  # "-0.5" is read for negated literals only, "0.5" for the others then
            text = key.strip().lstrip("-−").strip()
            minus = key.strip()[:1] in ("-", "−")
            lits = tuple(
                lit
                for lit in parsed.literals_with_text(text)
                if minus == negated_literal(lit, parsed.text)
                or (not minus and "-" + text not in sources)
            )
        if not lits:
            continue
        try:
            moved = {lit.pos: sympy.Rational(lit.text.replace("−", "-")) + 1 for lit in lits}
            after = value_entries(parsed.evaluate(resolve, moved, backend=xp))[k]
            change = sympy.sympify(after - shown)
            if change == 0 or xp.ball(change, 128).contains(0):
                continue  # a literal the value does not depend on (multiplied by 0.0)
        except (ExpressionError, SymtfError, ArithmeticError, IndexError, TypeError, ValueError):
            pass  # not decided: counted as an input, as the line reads it
        out.append((key, str(ref)))
    return out
