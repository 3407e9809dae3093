"""Control characters made visible in labels a renderer emits (private to symtf.renderers).

A label or message comes from a derivation file; a raw ESC, CR or NUL in it would
move a terminal's cursor, break a CI log line or make an XML document invalid.
Each control character becomes a visible escape (``\\x1b``, ``\\r``, ``\\u2028``).
"""

from __future__ import annotations

import unicodedata

_NAMED = {"\n": "\\n", "\r": "\\r", "\t": "\\t"}


def _escape(ch: str) -> str:
    if ch in _NAMED:
        return _NAMED[ch]
    code = ord(ch)
    return f"\\x{code:02x}" if code < 0x100 else f"\\u{code:04x}"


def visible(text: str, *, keep_newlines: bool = False) -> str:
    """``text`` with every control, line or paragraph separator character escaped.

    Args:
        text: Any text from a derivation file or built from one.
        keep_newlines: Keep ``\\n`` (multi-line bodies such as a JUnit failure text).
    """
    out = []
    for ch in text:
        if keep_newlines and ch == "\n":
            out.append(ch)
        elif unicodedata.category(ch) in ("Cc", "Zl", "Zp", "Cs") or ch in "\ufffe\uffff":
            out.append(_escape(ch))
        else:
            out.append(ch)
    return "".join(out)
