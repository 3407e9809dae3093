"""Small readers for a number named as a reduction of a row (:meth:`Search._reduction`).

A range is the row's largest entry less its smallest (``max - min``); a number the line
labels with the reduction's word (``Range: ~2.88``) names it on itself.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from typing import Any

from symtf.draft.article import Printing
from symtf.draft.infer.target import Outcome
from symtf.draft.templates import Call, Ref, call

__all__ = ["named_on", "reduced", "row_of_run"]


def reduced(kind: str, x: Ref, params: dict[str, Any]) -> Call:
    """The step of a reduction of each row of ``x`` (a range is max − min)."""
    if kind == "range":
        return call("sub", call("max", x, **params), call("min", x, **params))
    return call(kind, x, **params)


def named_on(p: Printing, words: Sequence[str]) -> bool:
    """Whether a single number is labelled by one of ``words`` itself (``Range: ~2.88``)."""
    value = re.escape(p.rows[0][0].lstrip("-−"))
    either = "|".join(re.escape(w) for w in words)
    named = rf"(?i)\b(?:{either})\s*[:=]\s*~?\s*[-−]?{value}(?![\d.])"
    return re.search(named, p.context) is not None


def row_of_run(outcomes: Iterable[Outcome], key: int) -> tuple[int, int] | None:
    """The given table a printed row (by its key) is a row of, and which row it is."""
    for o in outcomes:
        pl = o.placement
        if key not in o.printing.parts or pl is None:
            continue
        if pl.row is None and pl.col is None and pl.index is None:
            return pl.known, o.printing.parts.index(key)
    return None
