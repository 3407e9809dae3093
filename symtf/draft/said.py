"""Claims of numbers an article says what they are in words or by its layout, not by a
line of arithmetic: a section that works an earlier one again at new values
(:mod:`symtf.draft.replayed`), a sentence that says the arithmetic
(:mod:`symtf.draft.worded`), the error of a round trip (:mod:`symtf.draft.roundtrip`).

Each function gives the claims (TOML blocks) of one found value or printing, or none.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from symtf.draft.read.toml import places_key
from symtf.draft.replayed import replayed
from symtf.draft.roundtrip import round_trip_error
from symtf.draft.worded import worded
from symtf.place import Place
from symtf.visible import toml_string

if TYPE_CHECKING:
    from symtf.draft.article import Article

__all__ = ["replayed_claims", "round_trip_claims", "worded_claims"]


def replayed_claims(
    item: Any,
    name: str,
    article: Article,
    places: tuple[Place, ...],
    label: Callable[[str, int], str],
) -> list[str]:
    """``[0, 2, 3, 1]`` under ``Position 2 (θ = 0.2)``, a section that works ``Position 1
    (θ = 0.1)`` again at its own cos and sin: each entry the earlier line of its rank at
    the new values (:mod:`symtf.draft.replayed`)."""

    flat = [x for r in item.rows for x in r]
    if len(flat) != len(places):
        return []
    found = replayed(flat, article, item.cell, min(q.line for q in places))
    if found is None:
        return []
    return [
        "\n".join(
            [
                "[[claims]]",
                f"label = {toml_string(label(f'{name} (worked again)', at.line))}",
                f"expression = {toml_string(expression)}",
                f"printed = {toml_string(value)}",
                f"source_line = {at.line}",
                places_key((at,)),
                f"# line {at.line}: the line worked at line {line} (under {found.section!r}),"
                f" at {found.values}",
            ]
        )
        for expression, line, value, at in zip(
            found.expressions, found.worked, flat, places, strict=True
        )
    ]


def worded_claims(
    item: Any,
    name: str,
    article: Article,
    places: tuple[Place, ...],
    label: Callable[[str, int], str],
) -> list[str]:
    """``we divide 127 by 5.4 and obtain 23.5``: what a sentence says a number is, in
    words (:mod:`symtf.draft.worded`)."""

    found = worded(item, article.text, places, article.displays)
    if found is None:
        return []
    flat = [x for r in item.rows for x in r]
    return [
        "\n".join(
            [
                "[[claims]]",
                f"label = {toml_string(label(f'{name} (as worded)', at.line))}",
                f"expression = {toml_string(expression)}",
                f"printed = {toml_string(value)}",
                f"source_line = {at.line}",
                places_key((at,)),
                f"# line {at.line}: {found.saying}, as the sentence says",
            ]
        )
        for expression, value, at in zip(found.expressions, flat, places, strict=True)
    ]


def round_trip_claims(
    item: Any, name: str, article: Article, at: Place, label: Callable[[str, int], str]
) -> list[str]:
    """``a quantization error of 0.0008`` after ``0.3*127 = 38.1`` and ``38/127=0.2992``:
    the claim of the value less what comes back (:mod:`symtf.draft.roundtrip`)."""

    flat = [x for r in item.rows for x in r]
    if len(flat) != 1:
        return []
    trip = round_trip_error(item, article.displays, flat[0], at)
    if trip is None:
        return []
    return [
        "\n".join(
            [
                "[[claims]]",
                f"label = {toml_string(label(f'{name} (error)', at.line))}",
                f"expression = {toml_string(trip.expression)}",
                f"printed = {toml_string(flat[0])}",
                f"source_line = {at.line}",
                places_key((at,)),
                f"# line {at.line}: the error of the round trip worked at line {trip.forward}"
                f" and line {trip.back}: the value less what comes back",
            ]
        )
    ]
