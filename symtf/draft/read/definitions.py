r"""Functions an article defines in one variable, and the places it applies them to a number.

An article states ``R(\theta) = \begin{pmatrix} \cos\theta & -\sin\theta \\ \sin\theta &
\cos\theta \end{pmatrix}`` once, then writes ``R(0.02) = \begin{pmatrix} 0.9998 & -0.0200
\\ … \end{pmatrix}`` and ``R(0.02) \begin{pmatrix} 3.0 \\ 4.0 \end{pmatrix} = …``: each
application is the definition's body with the number put in for the variable. This
module finds the definitions (:func:`definition`) and writes an application out
(:func:`expanded`), as text the reader then reads like any displayed arithmetic.
Nothing is evaluated here.

A definition is one statement ``F(v) = body`` of exactly two links: ``F`` a name (a
letter, with an optional subscript), ``v`` one variable (a letter or a Greek letter),
and ``body`` arithmetic once a number stands for ``v`` (so no other name is free in it).
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from symtf.draft.read.items import is_arithmetic

__all__ = ["Definition", "definition", "expanded"]

_NAME = r"[A-Za-z](?:_\{?[A-Za-z0-9]+\}?)?"
_VARIABLE = r"\\[A-Za-z]+|[A-Za-z]"
_HEAD = re.compile(rf"^\s*({_NAME})\s*(?:\\left)?\(\s*({_VARIABLE})\s*(?:\\right)?\)\s*$")
_NUMBER = r"[-−]?\d+(?:\.\d+)?"


@dataclass(frozen=True)
class Definition:
    """``F(v) = body``, as the article wrote it.

    Attributes:
        name: ``F`` as written (``R``, ``R_1``).
        variable: ``v`` as written (``\\theta``, ``t``).
        body: The right-hand side, in the article's LaTeX (or plain text).
    """

    name: str
    variable: str
    body: str

    def applied(self, number: str) -> str | None:
        """The body with ``number`` for the variable, bracketed; None when that is no
        arithmetic on numbers (another name is free in it)."""
        text = _variable_at(self.variable).sub(f"({number.replace('−', '-')})", self.body)
        return f"({text})" if is_arithmetic(text) else None


def _variable_at(variable: str) -> re.Pattern[str]:
    """Where the variable stands in a body: as a whole token, not inside a longer name
    (``\\theta`` not in ``\\thetaX``; ``t`` not in ``\\tanh`` or ``t_1``)."""
    if variable.startswith("\\"):
        return re.compile(re.escape(variable) + r"(?![A-Za-z_])")
    return re.compile(rf"(?<![\\A-Za-z]){re.escape(variable)}(?![A-Za-z_])")


def definition(pieces: list[str]) -> Definition | None:
    """The definition a statement's links state (``["R(\\theta)", "\\begin{pmatrix}…"]``),
    if any."""
    if len(pieces) != 2:
        return None
    m = _HEAD.match(pieces[0])
    if m is None:
        return None
    name, variable = m.group(1), m.group(2)
    if variable in ("\\pi", "\\infty", "e") or variable == name:
        return None
    found = Definition(name, variable, pieces[1].strip())
    if not _variable_at(variable).search(found.body) or found.applied("1") is None:
        return None
    return found


def expanded(piece: str, definitions: dict[str, Definition]) -> str | None:
    """``piece`` with each application ``F(number)`` of a definition written out; None
    when it applies none."""
    if not definitions:
        return None
    names = "|".join(re.escape(n) for n in sorted(definitions, key=len, reverse=True))
    call = re.compile(rf"(?<![\\A-Za-z_])({names})\s*(?:\\left)?\(\s*({_NUMBER})\s*(?:\\right)?\)")
    out: list[str] = []
    at = 0
    for m in call.finditer(piece):
        body = definitions[m.group(1)].applied(m.group(2))
        if body is None:
            return None
        out.append(piece[at : m.start()])
        out.append(body)
        at = m.end()
    if not out:
        return None
    out.append(piece[at:])
    return "".join(out)
