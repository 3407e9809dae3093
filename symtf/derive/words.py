"""Justifications as words and mathematics, so each output writes the maths as maths.

A justification is a tuple of plain strings (words) and :class:`Math` pieces
(LaTeX for documents and web pages, Unicode for the terminal). Words are
escaped by construction when they reach LaTeX; mathematics is written by the
derivations themselves, never taken from input.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Math:
    """A piece of mathematics.

    Attributes:
        latex: The LaTeX (math mode, without delimiters).
        plain: The same in Unicode for the terminal.
    """

    latex: str
    plain: str


#: Words and maths, read in order.
Words = tuple["str | Math", ...]


def m(latex: str, plain: str) -> Math:
    """Shorthand for :class:`Math`."""
    return Math(latex, plain)


def words(*parts: str | Math) -> Words:
    """A justification from its parts."""
    return tuple(parts)


def plain(ws: Words | str) -> str:
    """The justification as Unicode text."""
    if isinstance(ws, str):
        return ws
    return "".join(p.plain if isinstance(p, Math) else p for p in ws)


def latex_math(ws: Words | str) -> str:
    r"""The justification in math mode: words in ``\text``, maths as it is."""
    from symtf.renderers.tex import math_text

    if isinstance(ws, str):
        ws = (ws,)
    return "".join(p.latex if isinstance(p, Math) else math_text(p) for p in ws if p)


def latex_text(ws: Words | str) -> str:
    """The justification in text mode: words escaped, maths in ``$…$``."""
    from symtf.renderers.tex import escape

    if isinstance(ws, str):
        ws = (ws,)
    return "".join(f"${p.latex}$" if isinstance(p, Math) else escape(p) for p in ws if p)
