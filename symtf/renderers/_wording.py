"""Wording and layout the article renderers share (private to symtf.renderers).

The HTML page and the LaTeX article say the same things about a claim: where in its
step the printed numbers are, a certified decimal cut short, an explanation as a
sentence, the checks laid out as the article printed them. Each renderer escapes and
marks up the result in its own way. Nothing here decides or changes a verdict.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from symtf.checking.report import Check, ClaimResult


def where_in_step(result: ClaimResult) -> str:
    """Which part of its step a claim printed: ``row 1, column 2``, ``max of row 2``, ``rank 3``.

    Rows, columns and entries count from 1, as a reader counts them.

    Args:
        result: The checked claim.

    Returns:
        The words, or ``""`` when the claim printed the whole step.
    """
    cl = result.claim
    if cl.index is not None:
        idx = tuple(cl.index)
        if len(idx) == 2:
            return f"row {idx[0] + 1}, column {idx[1] + 1}"
        return f"entry ({', '.join(str(k + 1) for k in idx)})"
    if cl.reduce is not None:
        return f"{cl.reduce} of " + (f"row {cl.row + 1}" if cl.row is not None else "the entries")
    if cl.rank is not None:
        return f"rank {cl.rank}"
    if cl.row is not None:
        return f"row {cl.row + 1}"
    if cl.col is not None:
        return f"column {cl.col + 1}"
    return ""


def short_decimal(s: str, digits: int) -> str:
    """A certified decimal string cut to ``digits`` digits (still a truncation, marked ``…``).

    Args:
        s: The decimal, possibly already ending in ``…``.
        digits: How many digits to keep (signs, points and exponents do not count).

    Returns:
        ``s`` itself when it has no more digits than that, else its cut, ending in ``…``.
    """
    body = s.rstrip("…")
    count = 0
    for k, ch in enumerate(body):
        if ch.isdigit():
            count += 1
            if count == digits:
                return s if k == len(body) - 1 else body[: k + 1] + "…"
    return s


def sentence(s: str) -> str:
    """An explanation as a sentence: capital first letter, a full stop at the end."""
    s = s.strip()
    if not s:
        return s
    s = s[0].upper() + s[1:]
    return s if s.endswith((".", "!", "?")) else s + "."


def printed_grid(result: ClaimResult) -> list[list[Check]]:
    """The checks of a claim in the rows the article printed them in.

    Args:
        result: The checked claim.

    Returns:
        One row of checks a printed row when the printed rows hold exactly one number a
        check; otherwise a single row of all the checks.
    """
    checks = list(result.checks)
    rows = result.claim.printed
    if rows and sum(len(row) for row in rows) == len(checks):
        it = iter(checks)
        return [[next(it) for _ in row] for row in rows]
    return [checks]


def depends_words(check: Check) -> str:
    """``depends on a`` for a value that depends on the file's symbols (never an error's words).

    Args:
        check: A check whose verdict is ``symbolic``.
    """
    names = check.extra.get("depends_on") or []
    return f"depends on {', '.join(names)}" if names else "depends on a symbol"


def symbolic_detail(check: Check) -> str:
    """What a symbolic check's explanation adds to :func:`depends_words`: its value and set."""
    head = depends_words(check)
    text = check.explanation
    if text.startswith(head):
        text = text[len(head) :].lstrip(": ")
    return text
def once_each(
    pairs: list[tuple[ClaimResult, Check]],
) -> list[tuple[ClaimResult, Check, list[str]]]:
    """Numbers that are off, each listed once, with every other place it appears.

    Two checks are the same printed number when they print the same text for the same
    certified exact value (``logit math`` and the logits row ``z`` both printing
    ``-2.049`` for −2.04837…, and the displayed line that computes it): the first is
    kept, the labels of the others are returned beside it.
    """
    out: list[tuple[ClaimResult, Check, list[str]]] = []
    seen: dict[tuple[str, str], int] = {}
    for r, c in pairs:
        key = (c.printed, short_decimal(c.exact, 15)) if c.exact else None
        if key is not None and key in seen:
            also = out[seen[key]][2]
            if r.claim.label not in also and r.claim.label != out[seen[key]][0].claim.label:
                also.append(r.claim.label)
            continue
        if key is not None:
            seen[key] = len(out)
        out.append((r, c, []))
    return out


def also_text(labels: list[str]) -> str:
    """``The same number is printed as z and logit math, as written.``"""
    shown = labels[0] if len(labels) == 1 else ", ".join(labels[:-1]) + " and " + labels[-1]
    return f"The same number also appears as {shown}."
