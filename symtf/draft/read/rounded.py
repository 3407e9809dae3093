"""Whole numbers a sentence says a rounding gives: ``Through rounding, we get the value of
38``, ``… = 0.7954, rounded to 1``.

Prose reads decimals, not whole numbers (a whole number in a sentence is more often a
count, a size or a position); one the sentence says is what rounding gives is a value
the article works out, read with its place. Nothing here decides what it rounds.
"""

from __future__ import annotations

import re

__all__ = ["ROUNDED_BY", "rounded_wholes"]

#: What a sentence writes between a rounding and the whole number it gives.
ROUNDED_BY = (
    r"\bround(?:ed|ing|s)?\b[^.;:\d`]{0,40}?\b(?:to|get|gets|gives?|obtain|is|becomes?)\s+"
    r"(?:the\s+value\s+(?:of\s+)?|about\s+)?"
)
_WHOLE = re.compile(
    ROUNDED_BY + r"`?([-−]?\d+)(?![\d%]|[.,]\d|\w|\s*%)"
    r"(?!\s*(?:decimal|digit|place|significant|bit|byte|dp\b|d\.p\.|sig))",
    re.IGNORECASE,
)


def rounded_wholes(text: str) -> list[tuple[str, tuple[int, int]]]:
    """Each whole number ``text`` says a rounding gives, with its span in ``text``."""
    return [(m.group(1).replace("−", "-"), m.span(1)) for m in _WHOLE.finditer(text)]
