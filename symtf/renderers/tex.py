"""Plain text as LaTeX: text mode (:func:`escape`) and ``\\text`` inside maths (:func:`math_text`).

A leaf of the renderers: the label typesetter (:mod:`symtf.renderers.labels`) and the
LaTeX renderer (:mod:`symtf.renderers.latex`) both read it, so neither imports the other.
No input string can break a document: every special character becomes literal, and a
character outside ASCII becomes a command the default fonts can show, or stays itself
for a document compiled with LuaLaTeX.
"""

from __future__ import annotations

import functools
import re
from typing import Any

from symtf.language.latexmath import GREEK_NAMES

__all__ = ["escape", "math_text"]


# The default (OT1) roman font has no glyph for these; the typewriter font has
# all of ASCII, so they are taken from it (and survive copy-and-paste from the PDF).
_SPECIALS = {
    "\\": r"{\ttfamily\char92}",
    "{": r"{\ttfamily\char123}",
    "}": r"{\ttfamily\char125}",
    "_": r"{\ttfamily\char95}",
    "^": r"{\ttfamily\char94}",
    "~": r"{\ttfamily\char126}",
    "<": r"{\ttfamily\char60}",
    ">": r"{\ttfamily\char62}",
    "|": r"{\ttfamily\char124}",
    '"': r"{\ttfamily\char34}",
    "%": r"\%",
    "&": r"\&",
    "#": r"\#",
    "$": r"{\ttfamily\char36}",
}

# Characters the default (OT1) fonts cannot show, as text-mode LaTeX.
_UNICODE = {
    "−": "$-$",
    "–": "--",
    "—": "---",
    "‘": "`",
    "’": "'",
    "“": "``",
    "”": "''",
    "…": r"\ldots{}",
    "≈": r"$\approx$",
    "×": r"$\times$",
    "·": r"$\cdot$",
    "⋅": r"$\cdot$",
    "÷": r"$\div$",
    "√": r"$\surd$",
    "∞": r"$\infty$",
    "→": r"$\to$",
    "←": r"$\leftarrow$",
    "≤": r"$\le$",
    "≥": r"$\ge$",
    "≠": r"$\ne$",
    "±": r"$\pm$",
    "∘": r"$\circ$",
    "ε": r"$\varepsilon$",
    "σ": r"$\sigma$",
    "μ": r"$\mu$",
    "π": r"$\pi$",
    "ᵀ": r"$^\top$",
    "²": r"$^2$",
    "³": r"$^3$",
    "\u00a0": "~",
}


#: Macros a pylatexenc translation may use and still compile with :data:`PREAMBLE`
#: under pdfLaTeX's default (OT1) fonts; anything else is left as the character
#: itself, and the document is then made for LuaLaTeX (see :func:`standalone`).
_SAFE_TEXT_MACROS = frozenset(
    [
        "'",
        "`",
        "^",
        '"',
        "~",
        "=",
        ".",
        "u",
        "v",
        "H",
        "r",
        "c",
        "k",
        "d",
        "b",
        "t",
        "ss",
        "o",
        "O",
        "l",
        "L",
        "i",
        "j",
        "ae",
        "AE",
        "oe",
        "OE",
        "aa",
        "AA",
    ]
)
#: Math macros that compile under the default fonts: the Greek letters displayed arithmetic
#: reads as names, the other Greek forms, and operators and symbols.
_SAFE_MATH_MACROS = GREEK_NAMES | frozenset(
    [
        "vartheta",
        "pi",
        "varpi",
        "varrho",
        "varsigma",
        "upsilon",
        "Xi",
        "Pi",
        "Upsilon",
        "sum",
        "prod",
        "int",
        "partial",
        "nabla",
        "infty",
        "cdot",
        "times",
        "div",
        "pm",
        "mp",
        "leq",
        "geq",
        "neq",
        "approx",
        "equiv",
        "sim",
        "to",
        "rightarrow",
        "leftarrow",
        "leftrightarrow",
        "Rightarrow",
        "Leftarrow",
        "Leftrightarrow",
        "mapsto",
        "in",
        "notin",
        "subset",
        "subseteq",
        "supset",
        "supseteq",
        "cup",
        "cap",
        "forall",
        "exists",
        "emptyset",
        "varnothing",
        "circ",
        "bullet",
        "star",
        "ast",
        "odot",
        "oplus",
        "otimes",
        "langle",
        "rangle",
        "lfloor",
        "rfloor",
        "lceil",
        "rceil",
        "mathbb",
        "ell",
        "hbar",
        "aleph",
        "prime",
        "neg",
        "wedge",
        "vee",
        "perp",
        "parallel",
        "propto",
        "cdots",
        "ldots",
        "surd",
    ]
)
_MACRO = re.compile(r"\\([A-Za-z]+|[^A-Za-z])")


@functools.cache
def _encoder() -> Any:
    from pylatexenc.latexencode import UnicodeToLatexEncoder

    return UnicodeToLatexEncoder(
        non_ascii_only=True, unknown_char_policy="keep", unknown_char_warning=False
    )


def _pylatexenc(ch: str) -> str | None:
    """``ch`` through pylatexenc, when the result compiles with the default fonts."""
    out = _encoder().unicode_to_latex(ch)
    if out == ch or not out.isascii():
        return None
    m = re.fullmatch(r"\\ensuremath\{(.*)\}", out)
    if m:
        names = _MACRO.findall(m.group(1))
        return f"${m.group(1)}$" if names and all(n in _SAFE_MATH_MACROS for n in names) else None
    names = _MACRO.findall(out)
    return out if all(n in _SAFE_TEXT_MACROS for n in names) else None


#: Characters LuaTeX refuses in its input: U+FFFD is what it writes itself for an
#: invalid byte ("String contains an invalid utf-8 sequence"), and noncharacters.
_TEX_REFUSES = frozenset("\ufffd\ufffe\uffff" + "".join(chr(c) for c in range(0xFDD0, 0xFDF0)))


def _unicode_char(ch: str) -> str:
    """A non-ASCII character as LaTeX that compiles with the default fonts.

    Known symbols come from a table tuned for the default fonts, then any other
    character goes through pylatexenc (``η`` → ``$\\eta$``, ``ő`` → ``\\H{o}``).
    A character with no such form (Cyrillic, Hebrew, CJK) is kept as it is: a
    document holding one is compiled with LuaLaTeX (see :func:`standalone`).
    """
    if ch in _UNICODE:
        return _UNICODE[ch]
    if ch in _TEX_REFUSES:
        return "?"
    with_lib = _pylatexenc(ch)
    return with_lib if with_lib is not None else ch


def escape(text: str) -> str:
    r"""Escape a plain string for LaTeX text mode.

    Every LaTeX special character becomes literal, and characters outside
    ASCII become commands the default fonts can show (``−`` → ``$-$``,
    ``é`` → ``\'{e}``), so no input string can break a document.

    Args:
        text: Any string (titles, labels, paths, explanations).

    Returns:
        Text-mode LaTeX.

    Example:
        >>> escape("50% & more")
        '50\\% \\& more'
    """
    out = []
    for ch in text:
        if ch in _SPECIALS:
            out.append(_SPECIALS[ch])
        elif ch == "\n" or ch == "\t":
            out.append(" ")
        elif ord(ch) < 32 or ord(ch) == 127:
            continue
        elif ch.isascii():
            out.append(ch)
        else:
            out.append(_unicode_char(ch))
    return "".join(out)


_MATH_SPECIALS = {
    "\\": r"\backslash ",
    "{": r"\{",
    "}": r"\}",
    "_": r"\_",
    "%": r"\%",
    "&": r"\&",
    "#": r"\#",
    "$": r"\$",
    "^": r"{}^\wedge ",
    "~": r"\sim ",
    # The text font has no glyph for these (they print as ¡, ¿ and —): as maths.
    "<": "<",
    ">": ">",
    "|": r"\vert ",
}


#: Punctuation written in ASCII inside ``\text`` (which MathJax and KaTeX read without macros).
_MATH_TEXT_ASCII = {"–": "-", "—": "-", "‘": "'", "’": "'", "“": '"', "”": '"', "\u00a0": " "}


def math_text(text: str) -> str:
    r"""A plain string as math-mode LaTeX that both LaTeX and MathJax accept.

    Runs of ordinary characters go into ``\text{...}``; specials are written as
    math symbols outside it (``\_``, ``\%``, ...), because MathJax does not read
    escapes inside ``\text``.

    Example:
        >>> math_text("a_b")
        '\\text{a}\\_\\text{b}'
    """
    parts: list[str] = []
    run: list[str] = []

    def flush() -> None:
        if run:
            parts.append(r"\text{" + "".join(run) + "}")
            run.clear()

    for ch in text:
        if ch in _MATH_SPECIALS:
            flush()
            parts.append(_MATH_SPECIALS[ch])
        elif ch.isascii() and ch.isprintable():
            run.append(ch)
        elif ch in "\n\t":
            run.append(" ")
        elif not ch.isprintable():
            continue
        elif ch in _MATH_TEXT_ASCII:
            run.append(_MATH_TEXT_ASCII[ch])
        elif ch == "…":
            flush()
            parts.append(r"{\ldots}")
        else:
            sub = _unicode_char(ch)
            if sub.startswith("$") and sub.endswith("$"):
                flush()
                parts.append("{" + sub[1:-1] + "}")
            else:
                # MathJax and KaTeX read no accent macros inside \text: keep the
                # character (a document holding one is made for LuaLaTeX).
                run.append(ch)
    flush()
    return "".join(parts)
