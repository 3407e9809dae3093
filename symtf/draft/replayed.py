"""A section that works an earlier one again at new values, showing only its result::

    ## 8. Position 1 (θ = 0.1)            ## 9. Position 2 (θ = 0.2)
    * cos(0.1) ≈ 0.995                     * cos(0.2) ≈ 0.980
    * sin(0.1) ≈ 0.0998                    * sin(0.2) ≈ 0.199
    x' ≈ 1*0.995 - 2*0.0998 = 0.795        Result: [0, 2, 3, 1]
    y' ≈ 1*0.0998 + 2*0.995 = 2.0898
    …
    Result: [0, 2, 3, 1]

The later section states the earlier one's lines at its own values: each entry of its
list of whole numbers is the earlier section's worked line of the same rank with each
function value (``cos(0.1) ≈ 0.995``) replaced by the later section's value of the same
function (``cos(0.2) ≈ 0.980``): ``1*0.980 - 2*0.199``, checked as the result printed to
no decimals (a truncation instead of a rounding shows as such).

Taken so only in a Markdown article, when

- the two sections' headings are the same words with other numbers (``Position 1
  (θ = 0.1)``, ``Position 2 (θ = 0.2)``), a section being what a heading of the
  article's outer level (below its title) opens;
- each section displays the same functions of one number, each once (``cos(…)``,
  ``sin(…)``), and the later section displays nothing else before the list;
- the earlier section displays as many other lines with one result as the list has
  entries (at least :data:`MIN_ENTRIES`), each of them written with one of its
  function values.

Nothing here computes: the expressions are the earlier lines as written, with the later
values written in.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

__all__ = ["Replayed", "replayed"]

#: The fewest entries (the whole-number lists of :mod:`symtf.draft.stored`).
MIN_ENTRIES = 4

_WHOLE = re.compile(r"^-?\d+$")
_FUNCTION = re.compile(r"^\s*([A-Za-z]+)\s*\(\s*(-?\d+(?:\.\d+)?)\s*\)\s*$")
_HEADING = re.compile(r"^\s{0,3}(#{1,6})\s+(.+?)\s*#*\s*$")
_NUMBER = re.compile(r"[-+]?\d+(?:\.\d+)?")


@dataclass(frozen=True)
class Replayed:
    """The earlier section's lines at the later values, one per entry of the list."""

    expressions: tuple[str, ...]
    worked: tuple[int, ...]  # the earlier lines, one per entry
    values: str  # the later function values (``cos(0.2) = 0.980, sin(0.2) = 0.199``)
    section: str  # the earlier section's heading


def replayed(values: Sequence[str], article: Any, cell: Any, first_line: int) -> Replayed | None:
    """The earlier section a list of whole numbers works again (see the module's rule)."""
    if article.kind not in ("md", "txt") or cell is not None:
        return None
    if len(values) < MIN_ENTRIES or not all(_WHOLE.match(v.strip()) for v in values):
        return None
    sections = _sections(article.text)
    here = _section_of(sections, first_line)
    if here is None:
        return None
    start, _, heading = here
    shape = _shape(heading)
    for s_start, s_end, s_heading in reversed(sections):
        if s_start >= start or _shape(s_heading) != shape:
            continue
        old = _displays(article.displays, s_start, s_end)
        new = _displays(article.displays, start, first_line - 1)
        found = _replay(old, new, len(values))
        if found is not None:
            expressions, worked, now = found
            return Replayed(expressions, worked, now, s_heading)
        return None  # the nearest section of that heading is the one it works again
    return None


def _replay(
    old: list[Any], new: list[Any], n: int
) -> tuple[tuple[str, ...], tuple[int, ...], str] | None:
    old_f, old_worked = _split(old)
    new_f, new_worked = _split(new)
    if new_worked or not old_f or len(old_worked) != n:
        return None
    if sorted(old_f) != sorted(new_f) or len(set(old_f)) != len(old_f):
        return None  # the same functions, each once
    swap = {old_f[name][1]: new_f[name][1] for name in old_f}
    token = re.compile(
        r"(?<![\d.])("
        + "|".join(re.escape(v) for v in sorted(swap, key=len, reverse=True))
        + r")(?![\d.])"
    )
    expressions = []
    for d in old_worked:
        if not token.search(d.latex):
            return None
        expressions.append(token.sub(lambda m: swap[m.group(1)], " ".join(d.latex.split())))
    now = ", ".join(f"{name}({new_f[name][0]}) = {new_f[name][1]}" for name in new_f)
    return tuple(expressions), tuple(d.places[0].line for d in old_worked), now


def _split(displays: list[Any]) -> tuple[dict[str, tuple[str, str]], list[Any]]:
    """A section's function values (name → (argument, value)) and its other lines."""
    functions: dict[str, tuple[str, str]] = {}
    worked = []
    repeated = False
    for d in displays:
        m = _FUNCTION.match(d.latex)
        if m is None:
            worked.append(d)
        elif m.group(1) in functions:
            repeated = True
        else:
            functions[m.group(1)] = (m.group(2), d.rows[0][0])
    return ({} if repeated else functions), worked


def _displays(displays: Sequence[Any], first: int, last: int) -> list[Any]:
    """The lines with one result displayed between two lines, one per printed result."""
    out: list[Any] = []
    for d in sorted(
        (
            d
            for d in displays
            if d.cell is None
            and d.places
            and len(d.rows) == 1
            and len(d.rows[0]) == 1
            and first <= d.places[0].line <= last
        ),
        key=lambda d: (d.places[0].line, d.places[0].column or 0, d.key),
    ):
        if out and out[-1].places[0] == d.places[0]:
            continue  # a chain ``a = b = c``: one display per link, one result
        out.append(d)
    return out


def _sections(text: str) -> list[tuple[int, int, str]]:
    """(first line, last line, heading) of each section the article's outer headings open."""
    heads: list[tuple[int, int, str]] = []
    fence = False
    lines = text.splitlines()
    for i, line in enumerate(lines, 1):
        if line.lstrip().startswith(("```", "~~~")):
            fence = not fence
            continue
        m = None if fence else _HEADING.match(line)
        if m:
            heads.append((i, len(m.group(1)), m.group(2)))
    if len(heads) < 2:
        return []
    outer = min(level for _, level, _ in heads[1:])
    opened = [(at, heading) for at, level, heading in heads if level <= outer]
    return [
        (at, (opened[k + 1][0] - 1) if k + 1 < len(opened) else len(lines), heading)
        for k, (at, heading) in enumerate(opened)
    ]


def _section_of(sections: list[tuple[int, int, str]], line: int) -> tuple[int, int, str] | None:
    for s in sections:
        if s[0] <= line <= s[1]:
            return s
    return None


def _shape(heading: str) -> str:
    """A heading's words without its numbers (``9. Position 2 (θ = 0.2)`` → ``#. Position #
    (θ = #)``)."""
    return _NUMBER.sub("#", heading).strip()
