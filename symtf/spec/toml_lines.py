"""Line numbers of tables and keys in TOML text (``tomllib`` does not keep them).

A small locator, not a parser: it follows table headers (``[model]``,
``[[claims]]``, ``[[model.layers.heads]]``) and ``key =`` lines, skipping
strings, comments and multi-line arrays, and names each place the way symtf's
messages do: ``claims[3]``, ``claims[3].printed``,
``model.layers[0].heads[1].W_Q``. Places written inline (``claims = [{...}]``)
have no line of their own.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

_BARE = r"[A-Za-z0-9_-]+"
_QUOTED = r"\"(?:[^\"\\]|\\.)*\"|'[^']*'"
_KEY = rf"(?:{_BARE}|{_QUOTED})"
_DOTTED = rf"{_KEY}(?:\s*\.\s*{_KEY})*"
_HEADER = re.compile(rf"^\s*(\[\[|\[)\s*({_DOTTED})\s*(\]\]|\])\s*(?:#.*)?$")
_ASSIGN = re.compile(rf"^\s*({_DOTTED})\s*=")
_PART = re.compile(rf"\s*({_KEY})\s*(?:\.|$)")
_SPECIAL = re.compile(r"\"\"\"|'''|[\"'#\[\]{}]")
_BASIC_REST = re.compile(r'(?:[^"\\]|\\.)*"')  # the rest of a one-line basic string
_KEY_PATH = re.compile(r"^[A-Za-z_][\w-]*(?:\[\d+\])*(?:\.[A-Za-z_][\w-]*(?:\[\d+\])*)*")


def _parts(dotted: str) -> list[str]:
    out = []
    for m in _PART.finditer(dotted):
        k = m.group(1)
        out.append(k[1:-1] if k[0] in "\"'" else k)
    return out


class _Scanner:
    """Tracks what a value leaves open at the end of a line: a multi-line string, brackets."""

    def __init__(self) -> None:
        self.string: str | None = None  # '"""' or "'''" while inside one
        self.depth = 0

    @property
    def idle(self) -> bool:
        return self.string is None and self.depth == 0

    def feed(self, line: str, start: int = 0) -> None:
        i = start
        while True:
            if self.string is not None:
                end = line.find(self.string, i)
                if end < 0:
                    return
                i = end + 3
                self.string = None
            m = _SPECIAL.search(line, i)
            if m is None:
                return
            tok = m.group(0)
            i = m.end()
            if tok == "#":
                return
            if tok in ('"""', "'''"):
                self.string = tok
            elif tok == '"':
                rest = _BASIC_REST.match(line, i)
                i = rest.end() if rest else len(line)
            elif tok == "'":
                end = line.find("'", i)
                i = len(line) if end < 0 else end + 1
            elif tok in "[{":
                self.depth += 1
            else:
                self.depth = max(self.depth - 1, 0)


def locate(text: str) -> dict[str, int]:
    """Map each table and key of ``text`` to its 1-based line, named as in messages."""
    lines: dict[str, int] = {}
    table: list[str] = []  # concrete path of the current table, e.g. ["model", "layers[0]"]
    counts: dict[str, int] = {}  # concrete array-of-tables path -> instances so far
    current: dict[str, str] = {}  # abstract array-of-tables path -> its latest concrete segment
    scan = _Scanner()
    for number, line in enumerate(text.splitlines(), start=1):
        if not scan.idle:
            scan.feed(line)
            continue
        header = _HEADER.match(line)
        if header:
            parts = _parts(header.group(2))
            concrete: list[str] = []
            for k in range(len(parts) - 1):
                abstract = ".".join(parts[: k + 1])
                concrete.append(current.get(abstract, parts[k]))
            last = parts[-1]
            if header.group(1) == "[[":
                base = ".".join([*concrete, last])
                index = counts.get(base, 0)
                counts[base] = index + 1
                last = f"{last}[{index}]"
                current[".".join(parts)] = last
            table = [*concrete, last]
            lines.setdefault(".".join(table), number)
            continue
        assign = _ASSIGN.match(line)
        if assign:
            lines.setdefault(".".join([*table, *_parts(assign.group(1))]), number)
            scan.feed(line, assign.end())
        else:
            scan.feed(line)
    return lines


def line_of(lines: dict[str, int], key: str) -> int | None:
    """The line of ``key`` or of the nearest enclosing place that has one.

    ``key`` may run past what the locator knows (``claims[3].printed[0][1]``):
    the longest known prefix answers.
    """
    m = _KEY_PATH.match(key)
    if m is None:
        return None
    path = m.group(0)
    while path:
        if path in lines:
            return lines[path]
        cut = max(path.rfind("."), path.rfind("["))
        path = path[:cut] if cut > 0 else ""
    return None


def string_lines(rows: Sequence[str], line: int) -> list[tuple[int, str]]:
    """The lines of the string value assigned on ``line``, each with its part of the value.

    For a multi-line string, its lines up to the closing delimiter (the text on
    the line of the key after the opening delimiter counts too); for a one-line
    string, the key's line. Anything else (an array, a number) gives ``[]``.
    The parts are raw text, before TOML resolves escapes.

    Args:
        rows: The file's lines (``text.splitlines()``, split once for all calls).
        line: 1-based line of the key.
    """
    return [(n, part) for n, _, part in string_spans(rows, line)]


def string_spans(rows: Sequence[str], line: int) -> list[tuple[int, int, str]]:
    """:func:`string_lines` with where each part starts: ``(line, offset, part)``.

    ``offset`` is the 0-based index, in code points, of the part's first character
    on its line, so that ``rows[line - 1][offset:offset + len(part)] == part``.
    A one-line string's part runs to the end of the line (its closing quote and
    anything after it included), as :func:`string_lines` gives it.
    """
    if not 1 <= line <= len(rows):
        return []
    row = rows[line - 1]
    assign = _ASSIGN.match(row)
    if assign is None:
        return []
    start = assign.end() + len(row[assign.end() :]) - len(row[assign.end() :].lstrip())
    rest = row[start:]
    for delim in ('"""', "'''"):
        if not rest.startswith(delim):
            continue
        body = rest[3:]
        end = body.find(delim)
        if end >= 0:
            return [(line, start + 3, body[:end])]
        out = [(line, start + 3, body)]
        for n in range(line + 1, len(rows) + 1):
            end = rows[n - 1].find(delim)
            out.append((n, 0, rows[n - 1] if end < 0 else rows[n - 1][:end]))
            if end >= 0:
                break
        return out
    if rest[:1] in ('"', "'"):
        return [(line, start + 1, rest[1:])]
    return []
