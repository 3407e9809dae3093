"""Arithmetic a sentence says in words, with the numbers it works from written in it::

    …a vector that contains `[1.2, -0.5, -4.3, 5.4]`. You extract the absolute maximum
    of it, which is `5.4` in this case. … so we divide 127 by `5.4` and obtain `23.5`
    for the scaling factor. Therefore multiplying the original vector by it gives the
    quantized vector `[28, -12, -101, 127]`.

These sayings are read, each only as the words put it, in the number's own sentence:

- ``Through rounding, we get (the value of) N`` (``rounded to N``): N is the result of the
  line displayed last before it on its line, printed to its digits;

- ``the absolute maximum of it (of the vector), which is N``: N is the largest absolute
  entry of the vector the paragraph wrote last before it;
- ``divide A by B and obtain (get, giving) N``: N is ``A/B``;
- ``multiplying the (original) vector by it (by F) gives … [list]``: each entry is the
  entry of the vector at the same rank times the factor, ``it`` being the quotient the
  sentence before says it obtains; the vector is the first the paragraph wrote with as
  many entries as the list.

A list of whole numbers is the products printed to no decimals. Nothing here computes:
each entry's expression is the numbers as written.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from symtf.draft.read.rounded import ROUNDED_BY
from symtf.draft.read.source import text_lines

__all__ = ["Worded", "worded"]

_N = r"-?\d+(?:\.\d+)?"
_ABSMAX = re.compile(
    r"\babsolute max(?:imum)?\s+(?:value\s+)?of\s+(?:it|(?:the|this)\s+(?:vector|tensor|row|list))"
    r"\b[^.;]*?\b(?:is|=|of)\s*$",
    re.IGNORECASE,
)
_DIVIDE = re.compile(
    rf"\bdivid(?:e|ing)\s+({_N})\s+by\s+({_N})\s*(?:,\s*)?(?:and\s+|to\s+)?"
    r"(?:obtain|get|gives?|giving|yields?|yielding)\s*$",
    re.IGNORECASE,
)
_MULTIPLY = re.compile(
    rf"\bmultiply(?:ing)?\s+the\s+(?:original\s+)?(?:vector|tensor|row|list)\s+by\s+(it|{_N})\b"
    r"[^.;]*?\b(?:gives?|yields?|obtain|get)\b[^.;]*$",
    re.IGNORECASE,
)
_ROUNDED = re.compile(ROUNDED_BY + r"$", re.IGNORECASE)
_SENTENCE_END = re.compile(r"(?<=[.!?])\s+(?=[A-Z`])")
_LIST = re.compile(rf"\[\s*({_N}(?:\s*,\s*{_N})+)\s*\]")


@dataclass(frozen=True)
class Worded:
    """Each entry's expression, and what the sentence says."""

    expressions: tuple[str, ...]
    saying: str


def worded(
    item: Any, text: str, places: Sequence[Any], displays: Sequence[Any] = ()
) -> Worded | None:
    """What a number (or list) written in a sentence is, by the sentence's words, or None."""
    flat = [x for r in item.rows for x in r]
    if not places or len(flat) != len(places) or getattr(item, "cell", None) is not None:
        return None
    first = places[0]
    lines = text_lines(text)  # as the file numbers them (not at U+2028 or a form feed)
    if not 0 < first.line <= len(lines) or first.column is None:
        return None
    line = lines[first.line - 1]
    cut = first.column - 1
    if cut > len(line):
        return None
    if cut > 0 and line[cut - 1] == "[":
        cut -= 1  # a list: its bracket starts it
    sentences = _sentences(line[:cut])
    said = sentences[-1].replace("`", "")
    before = [s.replace("`", "") for s in sentences[:-1]]
    if len(flat) == 1:
        m = _DIVIDE.search(said)
        if m:
            return Worded((f"{m.group(1)}/{m.group(2)}",), f"divide {m.group(1)} by {m.group(2)}")
        if _ROUNDED.search(said):
            worked = _last_worked(displays, first, cut)
            if worked is not None:
                return Worded((" ".join(worked.latex.split()),), "the rounding of that result")
        if _ABSMAX.search(said):
            vector = _last_list(" ".join(before) + " " + said)
            if vector is not None and len(vector) > 1:
                terms = ", ".join(f"abs({v})" for v in vector)
                return Worded((f"max({terms})",), "the absolute maximum of the vector")
        return None
    m = _MULTIPLY.search(said)
    if m is None:
        return None
    factor = m.group(1)
    if factor.lower() == "it":
        if not before:
            return None
        quotient = _DIVIDE.search(_upto_obtained(before[-1]))
        if quotient is None:
            return None
        factor = f"({quotient.group(1)}/{quotient.group(2)})"
    vector = _first_list(" ".join(before), len(flat))
    if vector is None:
        return None
    return Worded(
        tuple(f"{v}*{factor}" for v in vector), f"the vector multiplied by {factor.strip('()')}"
    )


def _last_worked(displays: Sequence[Any], at: Any, before: int) -> Any:
    """The last line displayed with one result on the number's line before it
    (``0.3*127 = 38.1``, then ``Through rounding, we get 38``)."""
    best = None
    for d in displays:
        if d.cell is not None or len(d.rows) != 1 or len(d.rows[0]) != 1 or not d.places:
            continue
        q = d.places[0]
        if q.line != at.line or q.column is None or q.column - 1 >= before:
            continue
        if best is None or q.column > best.places[0].column:
            best = d
    return best


def _sentences(text: str) -> list[str]:
    return _SENTENCE_END.split(text) or [""]


def _upto_obtained(sentence: str) -> str:
    """A sentence cut after its ``obtain``/``get`` (``divide 127 by 5.4 and obtain``)."""
    m = re.search(r"\b(?:obtain|get|gives?|giving|yields?|yielding)\b", sentence, re.IGNORECASE)
    return sentence[: m.end()] if m else sentence


def _last_list(text: str) -> list[str] | None:
    found = _LIST.findall(text)
    return [v.strip() for v in found[-1].split(",")] if found else None


def _first_list(text: str, n: int) -> list[str] | None:
    for entries in _LIST.findall(text):
        values = [v.strip() for v in entries.split(",")]
        if len(values) == n:
            return values
    return None
