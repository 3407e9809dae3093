"""Where each string of a JSON file lies in its raw text (a notebook's cells and outputs).

:mod:`nbformat` reads a notebook's content; it keeps no positions. This module
tokenises the raw JSON once and records, for every string value, its path
(``("cells", 3, "source", 0)``) and a map from the decoded string's characters
to the raw text's offsets (escapes such as ``\\n`` or ``\\u00e9`` make the two
differ), so that a number read in a cell has its line and column in the file.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from dataclasses import dataclass

from symtf.draft.read.source import Run

__all__ = ["RawString", "strings"]

#: A JSON string (the unrolled form, fast on long base64 images), a structural character,
#: or a bare literal (number, true, false, null).
_TOKEN = re.compile(r'"[^"\\]*(?:\\.[^"\\]*)*"|[{}\[\]:,]|[^\s{}\[\]:,"]+', re.S)
_ESCAPE = re.compile(r"\\(?:u([0-9a-fA-F]{4})|(.))", re.S)
_SIMPLE = {"n": "\n", "t": "\t", "r": "\r", "b": "\b", "f": "\f", "/": "/", "\\": "\\", '"': '"'}

Path = tuple[str | int, ...]


@dataclass(frozen=True)
class RawString:
    """A string value of the raw JSON: its decoded text and where its characters lie."""

    text: str
    runs: tuple[Run, ...]


def _decode(raw: str, at: int) -> RawString:
    """The string whose content (without quotes) is ``raw``, starting at raw offset ``at``."""
    if "\\" not in raw:
        return RawString(raw, ((0, len(raw), at),) if raw else ())
    out: list[str] = []
    runs: list[Run] = []
    n = 0  # decoded length so far
    pos = 0
    pending_high: tuple[int, int] | None = None  # a high surrogate and where it began
    for m in _ESCAPE.finditer(raw):
        if m.start() > pos:
            runs.append((n, m.start() - pos, at + pos))
            out.append(raw[pos : m.start()])
            n += m.start() - pos
        if m.group(1) is not None:
            code = int(m.group(1), 16)
            if 0xD800 <= code < 0xDC00:
                pending_high = (code, m.start())
                pos = m.end()
                continue
            if 0xDC00 <= code < 0xE000 and pending_high is not None:
                high, where = pending_high
                ch = chr(0x10000 + ((high - 0xD800) << 10) + (code - 0xDC00))
                runs.append((n, 1, at + where))
            else:
                ch = chr(code)
                runs.append((n, 1, at + m.start()))
        else:
            ch = _SIMPLE.get(m.group(2), m.group(2))
            runs.append((n, 1, at + m.start()))
        pending_high = None
        out.append(ch)
        n += 1
        pos = m.end()
    if pos < len(raw):
        runs.append((n, len(raw) - pos, at + pos))
        out.append(raw[pos:])
    return RawString("".join(out), tuple(runs))


def strings(raw: str, want: int = 5) -> Iterator[tuple[Path, RawString]]:
    """Every string value of a JSON text with its path, in the text's order.

    Only paths of at most ``want`` + 2 steps whose first step is ``"cells"`` are
    decoded (a notebook's sources and outputs); the text is not validated here
    (:mod:`nbformat` and the reader's own checks do that).
    """
    stack: list[list[str | int | None]] = []  # [kind, key or index] per open container
    key: str | None = None
    expect_key = False
    for m in _TOKEN.finditer(raw):
        tok = m.group()
        c = tok[0]
        if c == "{":
            stack.append(["{", key if stack and stack[-1][0] == "{" else _index(stack)])
            expect_key, key = True, None
            continue
        if c == "[":
            stack.append(["[", key if stack and stack[-1][0] == "{" else _index(stack)])
            stack[-1].append(0)
            expect_key = False
            continue
        if c in "}]":
            if stack:
                stack.pop()
            expect_key = False
            continue
        if c == ":":
            expect_key = False
            continue
        if c == ",":
            if stack and stack[-1][0] == "[":
                stack[-1][2] = int(stack[-1][2] or 0) + 1
            expect_key = bool(stack) and stack[-1][0] == "{"
            continue
        if c == '"':
            if expect_key:
                key = tok[1:-1]
                expect_key = False
                continue
            path = _path(stack, key)
            if len(path) <= want + 2 and path[:1] == ("cells",):
                yield path, _decode(tok[1:-1], m.start() + 1)
            continue
        # a bare literal: nothing to record


def _index(stack: list[list[str | int | None]]) -> int | None:
    """The index of the next value in the innermost array (``None`` outside arrays)."""
    if stack and stack[-1][0] == "[":
        v = stack[-1][2]
        return int(v) if v is not None else 0
    return None


def _path(stack: list[list[str | int | None]], key: str | None) -> Path:
    """The path of a value about to be read: each container's place, then the key or index."""
    out: list[str | int] = []
    for k, frame in enumerate(stack):
        if k == 0:
            continue
        name = frame[1]
        if name is not None:
            out.append(name)
    top = stack[-1] if stack else None
    if top is not None and top[0] == "{" and key is not None:
        out.append(key)
    elif top is not None and top[0] == "[":
        out.append(int(top[2] or 0))
    return tuple(out)
