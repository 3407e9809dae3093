"""What the notes call things: an article's labels typeset (through
:mod:`symtf.renderers.labels`), a step's name in typewriter math, and a step's heading.
"""

from __future__ import annotations

import re

from symtf.renderers.tex import _MATH_SPECIALS


def tt(name: str) -> str:
    """A step or reference name in typewriter math (``\\mathtt{l0.h0.q}``)."""
    return (
        r"\mathtt{" + "".join(_MATH_SPECIALS.get(ch, ch) for ch in name if ch.isprintable()) + "}"
    )


def label_tex(label: str) -> str:
    r"""An article's label in LaTeX text mode: its maths typeset, the rest escaped.

    ``"Q_1 K_1^T"`` becomes ``$Q_{1}\,K_{1}^{\top}$``; ``"H_1 AI row: weights"`` keeps its
    words as text. The one path every output takes: :mod:`symtf.renderers.labels`.
    """
    from symtf.renderers.labels import label_tex as typeset

    return typeset(label)


def label_math(label: str) -> str:
    r"""An article's label in LaTeX math mode (:func:`symtf.renderers.labels.label_math`)."""
    from symtf.renderers.labels import label_math as typeset

    return typeset(label)


def heading_title(title: str) -> str:
    """A step's title as a heading: capitalised when it is words (``Row means``), as written
    when it is the author's code (``inputs @ inputs.T``: a variable keeps its case)."""
    if not title or re.search(r"[\[\]()@/*=.]", title):
        return title
    return title[0].upper() + title[1:]
