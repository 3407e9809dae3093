"""A table of a formula the code states, row by row: ``theta = 0.1 * position`` in the
code, then a table headed ``| Position | θ (radians) |`` with rows ``| 1 | 0.1 |``.

The table's second column is the formula's value at the first column's value, on each
row: a careful reader checks each entry so. Taken only when all of this is written:

- the table has two columns, headed by the name the formula reads (``position``, in any
  case) and by the name it sets (``theta``, or its Greek letter ``θ``; a unit in
  parentheses after it is read past);
- exactly one line of the article's code sets that name from that one name, numbers and
  arithmetic (nothing else: no call, no other name);
- every row's first cell is a number.

Nothing here computes: each entry becomes a claim of the formula written out at its row.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from typing import Any

from symtf.place import Place
from symtf.visible import toml_string

__all__ = ["formula_rows"]

_GREEK = {
    "alpha": "α", "beta": "β", "gamma": "γ", "delta": "δ", "epsilon": "ε", "theta": "θ",
    "lambda": "λ", "mu": "μ", "sigma": "σ", "tau": "τ", "phi": "φ", "omega": "ω", "eta": "η",
}  # fmt: skip
_ASSIGNMENT = re.compile(r"^\s*(?P<name>[A-Za-z_]\w*)\s*=\s*(?P<rhs>[^=#]+?)\s*(?:#.*)?$")
_ARITHMETIC = re.compile(r"^[\w\s.+\-*/()]+$")
_IDENTIFIER = re.compile(r"(?<![\w.])[A-Za-z_]\w*")
_NUMBER = re.compile(r"^-?\d+(?:\.\d+)?$")


def _header_name(cell: str) -> str:
    """``θ (radians)`` → ``θ``: a unit in parentheses after the name is read past."""
    return re.sub(r"\s*\([^()]*\)\s*$", "", cell.strip().strip("*`")).strip()


def _names_it(header: str, name: str) -> bool:
    return header.lower() == name.lower() or header == _GREEK.get(name.lower())


def _formulas(article: Any) -> list[tuple[str, str, str]]:
    """``(name set, name read, right-hand side)`` of the code's one-name formulas."""
    out = []
    for block in article.code:
        for line in str(getattr(block, "text", "") or "").splitlines():
            m = _ASSIGNMENT.match(line)
            if m is None or not _ARITHMETIC.match(m.group("rhs")):
                continue
            names = set(_IDENTIFIER.findall(m.group("rhs")))
            if len(names) == 1 and re.search(r"\d", m.group("rhs")):
                out.append((m.group("name"), names.pop(), m.group("rhs").strip()))
    return out


def _cells(line: str) -> list[str]:
    return [c.strip() for c in line.strip().strip("|").split("|")]


def formula_rows(
    p: Any,
    places: Sequence[Place],
    article: Any,
    label: Callable[[str, int], str],
    places_key: Callable[[tuple[Place, ...]], str],
) -> list[str]:
    """The claims of a table printing ``p`` that is a code formula row by row (see the
    module's rule); empty if it is not one."""
    if p.cell is not None or p.shape[1] != 1 or p.shape[0] < 2 or len(places) != p.shape[0]:
        return []
    header = _cells(p.context)
    if len(header) != 2:
        return []
    source, target = _header_name(header[0]), _header_name(header[1])
    found = [
        (name, read, rhs)
        for name, read, rhs in _formulas(article)
        if _names_it(target, name) and read.lower() == source.lower()
    ]
    if len(found) != 1:
        return []
    name, read, rhs = found[0]
    lines = article.text.splitlines()
    claims = []
    for (entry,), at in zip(p.rows, places, strict=True):
        if not 1 <= at.line <= len(lines):
            return []
        row = _cells(lines[at.line - 1])
        if len(row) != 2 or not _NUMBER.match(row[0]) or row[1] != entry:
            return []
        expression = re.sub(rf"(?<![\w.]){re.escape(read)}(?![\w])", f"({row[0]})", rhs)
        claims.append(
            "\n".join(
                [
                    "[[claims]]",
                    f"label = {toml_string(label(f'{target} at {source} {row[0]}', at.line))}",
                    f"expression = {toml_string(expression)}",
                    f"printed = {toml_string(entry)}",
                    f"source_line = {at.line}",
                    places_key((at,)),
                    f"# line {at.line}: {name} = {rhs} at {read} = {row[0]}, as the code "
                    f"states it and the table's columns name it",
                ]
            )
        )
    return claims
