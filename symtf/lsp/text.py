"""A document's text, and positions in it the way symtf and the client each count them.

symtf's places (the JSON report's ``source_line`` and ``source_column``) count
lines ended by ``\\n`` and columns in code points. The Language Server Protocol
ends lines at ``\\r\\n``, ``\\r`` or ``\\n`` and counts columns in the code units
the client and server agreed on (UTF-16 unless the client offers UTF-8 or
UTF-32). A text with a lone ``\\r`` or a character above U+FFFF numbers the
same character differently in the two systems, so every position goes through
the character offset in the text. Changes the client sends are applied here the
same way (pygls splits lines with ``str.splitlines``, which also breaks at
U+2028, form feeds and other separators a client does not).
"""

from __future__ import annotations

import bisect
import re
from dataclasses import dataclass

__all__ = ["Text"]

_EOL = re.compile(r"\r\n|\r|\n")


@dataclass(frozen=True)
class Span:
    """A range of character offsets ``[start, end)`` in a text."""

    start: int
    end: int


class Text:
    """A document's text with the line starts both ways of counting need.

    Args:
        text: The text.
        encoding: ``utf-16``, ``utf-8`` or ``utf-32``: the unit of an LSP column.
    """

    def __init__(self, text: str, encoding: str = "utf-16") -> None:
        self.text = text
        self.encoding = encoding
        self._lsp: list[int] | None = None
        self._nl: list[int] | None = None

    # -- line starts, computed when first asked for --

    @property
    def lsp_starts(self) -> list[int]:
        """Offsets where the client's lines start (after ``\\r\\n``, ``\\r`` or ``\\n``)."""
        if self._lsp is None:
            self._lsp = [0, *(m.end() for m in _EOL.finditer(self.text))]
        return self._lsp

    @property
    def nl_starts(self) -> list[int]:
        """Offsets where symtf's lines start (after ``\\n``)."""
        if self._nl is None:
            out = [0]
            find = self.text.find
            at = find("\n")
            while at >= 0:
                out.append(at + 1)
                at = find("\n", at + 1)
            self._nl = out
        return self._nl

    # -- symtf's places --

    def line_span(self, line: int) -> Span | None:
        """The characters of 1-based symtf ``line``, without its line end (``None``: no such line)."""
        starts = self.nl_starts
        if not 1 <= line <= len(starts):
            return None
        start = starts[line - 1]
        end = starts[line] - 1 if line < len(starts) else len(self.text)
        if end > start and self.text[end - 1] == "\r":
            end -= 1
        return Span(start, end)

    def place_span(self, line: int, column: int | None, end_column: int | None) -> Span | None:
        """The characters of a place: columns when both are given and fit, else the whole line."""
        whole = self.line_span(line)
        if whole is None:
            return None
        if column is None or end_column is None:
            return whole
        start, end = whole.start + column - 1, whole.start + end_column - 1
        if not whole.start <= start < end <= whole.end:
            return whole
        return Span(start, end)

    # -- the client's positions --

    def _units(self, s: str) -> int:
        if self.encoding == "utf-32":
            return len(s)
        if self.encoding == "utf-8":
            return len(s.encode("utf-8", "surrogatepass"))
        return len(s) + sum(1 for ch in s if ord(ch) > 0xFFFF)

    def position(self, offset: int) -> tuple[int, int]:
        """The client's ``(line, character)`` of a character offset."""
        offset = max(0, min(offset, len(self.text)))
        starts = self.lsp_starts
        k = bisect.bisect_right(starts, offset) - 1
        return k, self._units(self.text[starts[k] : offset])

    def offset(self, line: int, character: int) -> int:
        """The character offset of the client's ``(line, character)`` (clamped to the text)."""
        starts = self.lsp_starts
        if line < 0:
            return 0
        if line >= len(starts):
            return len(self.text)
        start = starts[line]
        end = starts[line + 1] if line + 1 < len(starts) else len(self.text)
        row = self.text[start:end].rstrip("\r\n")  # one line end: \r\n, \r or \n
        if self.encoding == "utf-32":
            return start + min(max(character, 0), len(row))
        units = 0
        for k, ch in enumerate(row):
            if units >= character:
                return start + k
            units += self._units(ch)
        return start + len(row)

    def replaced(self, start: int, end: int, new: str) -> Text:
        """A new :class:`Text` with the characters ``[start, end)`` replaced by ``new``."""
        return Text(self.text[:start] + new + self.text[end:], self.encoding)
