"""Small readers for a number named as a reduction of a row (:meth:`Search._reduction`).

A range is the row's largest entry less its smallest (``max - min``); a number the line
labels with the reduction's word (``Range: ~2.88``) names it on itself.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from typing import Any

from symtf.draft.article import Printing
from symtf.draft.infer.target import Known, Outcome
from symtf.draft.templates import Call, Ref, call

__all__ = ["named_on", "query_key", "reduced", "row_of_run", "scores_named"]

#: A query or key label and what tells it apart from the others (``Q_3`` and ``K_3``).
_QK = re.compile(r"^([QK])(?:_?\{?([^}\s]*)\}?)?$")


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


def scores_named(line: str, column: int | None) -> bool:
    """Whether the sentence a number sits in, up to the number, names attention scores
    (``its raw scores are tiny (the largest is only 0.28)``)."""
    before = line[: column - 1] if column else line
    sentence = re.split(r"[.:;!?](?:\s|$)", before)[-1]
    return re.search(r"(?i)\bscores\b", sentence) is not None


def query_key(knowns: Iterable[Known], line: int, window: int) -> tuple[int, int] | None:
    """The query and key printed last before ``line`` (within ``window`` lines), labelled as
    one pair (``Q_3`` and ``K_3``; ``Q`` and ``K``) with rows of one width: their keys."""
    best: tuple[int, int, int] | None = None
    queries: dict[str, Known] = {}
    keys: dict[str, Known] = {}
    for k in knowns:
        if not k.labels or k.line > line or line - k.line > window or k.value.ndim != 2:
            continue
        m = _QK.match(k.labels[0].strip())
        if m:
            (queries if m.group(1) == "Q" else keys)[m.group(2) or ""] = k
    for tag, q in queries.items():
        key = keys.get(tag)
        if key is None or q.value.shape[1] != key.value.shape[1]:
            continue
        at = min(q.line, key.line)
        if best is None or at > best[0]:
            best = (at, q.key, key.key)
    return None if best is None else (best[1], best[2])
