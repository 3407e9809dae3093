"""Text from a file, made safe to print: the one rule for control characters.

Labels, titles, step names, printed values, notes, notebook code and file names come
from files that may be hostile. A raw ``ESC ]0;…BEL`` retitles the terminal, ``ESC
[2J`` clears it, a C1 ``CSI`` (U+009B) does the same on some terminals, a
bidirectional override (U+202E) reorders what a reviewer sees, an invisible format
character (U+200B, U+2060, the tag characters U+E0000…) hides text in plain sight,
and most C0 control characters are not even allowed in XML or TOML. Whatever symtf
prints that carries such text (messages, reports in every format, drafts, notes on
standard error) passes it through :func:`line` (one-line fields) or :func:`block`
(multi-line text), which keep ordinary Unicode — Greek, CJK, emoji — and spell out
every :func:`unsafe` character the way Python does (``\\x1b``, ``\\u202e``), so
nothing is lost and nothing acts. Text that a program reads back keeps its value
and escapes the same characters in its own syntax: :func:`toml_string` (a TOML
basic string) and :func:`json_text` (JSON).

Example:
    >>> line("A_1\\x1b]0;pwned\\x07")
    'A_1\\\\x1b]0;pwned\\\\x07'
    >>> block("two\\nlines\\x1b[2J")
    'two\\nlines\\\\x1b[2J'
    >>> toml_string("a\\x1bb")
    '"a\\\\u001bb"'
"""

from __future__ import annotations

import json
import unicodedata
from typing import Any

__all__ = [
    "block",
    "comment",
    "is_clean",
    "json_text",
    "line",
    "page",
    "toml_block",
    "toml_string",
    "unsafe",
]

#: Characters of the format category (Cf) that join letters in scripts written with them
#: (Persian, the Indic scripts) and in emoji sequences: kept, since they hide nothing.
_JOINERS = frozenset("\u200c\u200d")
_NAMED = {"\n": "\\n", "\r": "\\r", "\t": "\\t"}


def unsafe(ch: str) -> bool:
    """Whether a character must not reach a terminal, an XML file or a TOML file raw.

    C0 and C1 controls and DEL (Unicode category Cc); invisible format characters
    (Cf: bidirectional embeddings, overrides, isolates and marks, zero-width spaces,
    word joiners, the byte-order mark, soft hyphens, tag characters) except the two
    joiners scripts need; the line and paragraph separators (Zl, Zp); lone
    surrogates (Cs); and the noncharacters U+FFFE, U+FFFF and their kin.
    """
    if ch in _JOINERS:
        return False
    cat = unicodedata.category(ch)
    if cat in ("Cc", "Cf", "Cs", "Zl", "Zp"):
        return True
    n = ord(ch)
    return 0xFDD0 <= n <= 0xFDEF or (n & 0xFFFE) == 0xFFFE


def _spelled(ch: str) -> str:
    if ch in _NAMED:
        return _NAMED[ch]
    n = ord(ch)
    if n < 0x100:
        return f"\\x{n:02x}"
    if n < 0x10000:
        return f"\\u{n:04x}"
    return f"\\U{n:08x}"


def _toml_escape(ch: str) -> str:
    """A character as a TOML escape (``\\u001b``, ``\\U000e0041``). A lone surrogate has
    no TOML spelling (TOML holds Unicode scalar values): it becomes U+FFFD."""
    n = ord(ch)
    if 0xD800 <= n <= 0xDFFF:
        return "\\ufffd"
    return f"\\u{n:04x}" if n < 0x10000 else f"\\U{n:08x}"


def line(text: object) -> str:
    """One-line text with every :func:`unsafe` character spelled out (newlines and tabs too).

    Args:
        text: Anything; ``str()`` of it is escaped (``None`` gives ``"None"``).
    """
    s = str(text)
    if s.isprintable():
        return s  # the common case, fast: no control, format or separator character
    return "".join(_spelled(ch) if ch in _NAMED or unsafe(ch) else ch for ch in s)


def block(text: object, *, tabs: bool = False) -> str:
    """Multi-line text: newlines kept (and tabs, with ``tabs``), every other
    :func:`unsafe` character spelled out."""
    parts = str(text).split("\n")
    if tabs:
        return "\n".join("\t".join(line(p) for p in part.split("\t")) for part in parts)
    return "\n".join(line(part) for part in parts)


#: The invisible operators MathML writes (function application, invisible times,
#: separator and plus): a formula's markup needs them raw.
_MATH_INVISIBLE = frozenset("\u2061\u2062\u2063\u2064")


def page(text: str) -> str:
    """Text for an HTML page: C0 and C1 controls, DEL and lone surrogates dropped (a page
    cannot show them and XML forbids most; tabs and newlines kept), every other
    :func:`unsafe` character (bidirectional controls, invisible format characters, tag
    characters, separators) spelled out as :func:`line` spells it, so that none reorders
    or hides what the page shows; MathML's invisible operators are kept."""
    if text.isprintable():
        return text
    out = []
    for ch in text:
        if ch in "\t\n" or ch in _MATH_INVISIBLE:
            out.append(ch)
        elif unicodedata.category(ch) in ("Cc", "Cs") or ch in ("\ufffe", "\uffff"):
            continue
        else:
            out.append(_spelled(ch) if unsafe(ch) else ch)
    return "".join(out)


def is_clean(text: str) -> bool:
    """Whether ``text`` holds no character that :func:`block` would escape."""
    return block(text) == text


def toml_string(text: str) -> str:
    """``text`` as a TOML basic string (``"…"``) that reads back as ``text`` exactly.

    Quotes and backslashes are escaped, and every :func:`unsafe` character is written as
    a ``\\uXXXX`` escape: TOML forbids most control characters raw, and the rest would
    act on a terminal showing the file.
    """
    body = json.dumps(text, ensure_ascii=False)[1:-1]
    if body.isprintable():
        return f'"{body}"'
    return '"' + "".join(_toml_escape(ch) if unsafe(ch) else ch for ch in body) + '"'


def toml_block(text: str) -> str:
    """``text`` as a TOML multi-line basic string (``\"\"\"`` on lines of their own) that
    reads back as ``text`` (TOML drops the newline right after the opening quotes);
    backslashes, runs of quotes and every :func:`unsafe` character but the newline
    escaped."""
    body = text.replace("\\", "\\\\").replace('"', '\\"')
    if not body.replace("\n", "").isprintable():
        body = "".join(_toml_escape(ch) if ch != "\n" and unsafe(ch) else ch for ch in body)
    return '"""\n' + body + ('"""' if body.endswith("\n") else '\n"""')


def comment(text: object) -> str:
    """A TOML (or Python, shell) comment ``# text`` on one line, ``text`` made :func:`line`-safe:
    a comment ends at a newline, and TOML refuses control characters in one."""
    return f"# {line(text)}"


def json_text(data: Any, **options: Any) -> str:
    """``json.dumps(data, ensure_ascii=False, **options)`` with every :func:`unsafe`
    character written as a ``\\uXXXX`` escape: the same value, and nothing that acts
    on a terminal. (Outside strings JSON holds no such character: the substitution
    touches string contents only.)"""
    text = json.dumps(data, ensure_ascii=False, **options)
    if block(text, tabs=True) == text:
        return text
    out = []
    for ch in text:
        if ch not in "\n\t" and unsafe(ch):
            n = ord(ch)
            if n < 0x10000:
                out.append(f"\\u{n:04x}")
            else:  # JSON spells a character beyond the BMP as a surrogate pair
                n -= 0x10000
                out.append(f"\\u{0xD800 + (n >> 10):04x}\\u{0xDC00 + (n & 0x3FF):04x}")
        else:
            out.append(ch)
    return "".join(out)
