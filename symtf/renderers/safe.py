"""Text from a derivation file, made safe to print.

Labels, titles, step names, printed values and notes come from files that may be
hostile. A raw ``ESC ]0;…BEL`` retitles the terminal, ``ESC [2J`` clears it, a
bidirectional override (U+202E) reorders what a reviewer sees, and most C0
control characters are not even allowed in XML. Every renderer that writes such
text (text, JUnit, GitHub annotations, SARIF, error messages) passes it through
:func:`line` (one-line fields) or :func:`block` (multi-line fields), which keep
ordinary Unicode — Greek, CJK, emoji — and spell out control characters the way
Python does (``\\x1b``, ``\\u202e``), so nothing is lost and nothing acts.

Example:
    >>> line("A_1\\x1b]0;pwned\\x07")
    'A_1\\\\x1b]0;pwned\\\\x07'
    >>> block("two\\nlines\\x1b[2J")
    'two\\nlines\\\\x1b[2J'
"""

from __future__ import annotations

import unicodedata

#: Format characters that reorder or hide text (bidirectional embeddings,
#: overrides and isolates, the line and paragraph separators).
_REORDERING = frozenset(
    "\u061c\u200e\u200f\u2028\u2029\u202a\u202b\u202c\u202d\u202e\u2066\u2067\u2068\u2069"
)
_NAMED = {"\n": "\\n", "\r": "\\r", "\t": "\\t"}


def _unsafe(ch: str) -> bool:
    """Whether a character must not reach a terminal or an XML file raw."""
    if ch in _REORDERING:
        return True
    cat = unicodedata.category(ch)
    # Cc: C0 and C1 controls and DEL; Cs: lone surrogates (not encodable);
    # Cn among the noncharacters U+FFFE/U+FFFF (invalid in XML).
    return cat in ("Cc", "Cs") or ch in ("\ufffe", "\uffff")


def _escape(ch: str) -> str:
    if ch in _NAMED:
        return _NAMED[ch]
    n = ord(ch)
    if n < 0x100:
        return f"\\x{n:02x}"
    if n < 0x10000:
        return f"\\u{n:04x}"
    return f"\\U{n:08x}"


def line(text: object) -> str:
    """One-line text with every control character spelled out (newlines and tabs too).

    Args:
        text: Anything; ``str()`` of it is escaped (``None`` gives ``"None"``).
    """
    s = str(text)
    if s.isprintable() and not any(ch in _REORDERING for ch in s):
        return s  # the common case, fast
    return "".join(_escape(ch) if _unsafe(ch) or ch in _NAMED else ch for ch in s)


def block(text: object) -> str:
    """Multi-line text: newlines kept, every other control character spelled out."""
    return "\n".join(line(part) for part in str(text).split("\n"))


def is_clean(text: str) -> bool:
    """Whether ``text`` holds no character that :func:`block` would escape."""
    return block(text) == text
