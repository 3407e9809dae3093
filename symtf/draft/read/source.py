"""Texts that remember where each of their characters came from.

The reader cuts an article into pieces (a maths span, a table cell, one line of
an output) and reads each piece on its own. A :class:`Text` is such a piece: a
string and, for every character, the offset it had in its *origin* (the article
file, or the source or output text of one notebook cell). A :class:`Frame`
turns an origin offset into a :class:`~symtf.place.Place`: the file's line and
column and, for a notebook, the cell, the line and column in the cell, and
whether the text is a code cell's output.

Slicing, joining and substituting keep the map, so a number read anywhere in a
piece has the place where the article wrote it. Nothing here searches the
article: :func:`locate` looks for the printed entries only inside the span of
the piece they were read from.
"""

from __future__ import annotations

import bisect
import functools
import re
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field

from symtf.place import Place

__all__ = ["Frame", "LineIndex", "Text", "line_places", "locate", "text_lines"]


def text_lines(text: str) -> list[str]:
    """A text's lines as its file numbers them: split at each LF (a CR before it dropped;
    a text with CRs and no LF split at its CRs), where :meth:`str.splitlines` also splits
    at form feeds, U+0085, U+2028 and U+2029, so that the lines counted after one of
    those named a line the file does not have."""
    if "\n" not in text and "\r" in text:
        lines = text.split("\r")
    else:
        lines = [ln[:-1] if ln.endswith("\r") else ln for ln in text.split("\n")]
    if lines and lines[-1] == "":
        lines.pop()
    return lines


class LineIndex:
    """Line starts of a text: offset → 1-based (line, column in code points)."""

    def __init__(self, text: str) -> None:
        self.length = len(text)
        self.starts = [0]
        find = text.find
        at = find("\n")
        while at >= 0:
            self.starts.append(at + 1)
            at = find("\n", at + 1)

    def line_col(self, offset: int) -> tuple[int, int]:
        """The 1-based line and column of ``offset``."""
        k = bisect.bisect_right(self.starts, offset) - 1
        return k + 1, offset - self.starts[k] + 1

    def start(self, line: int) -> int:
        """The offset where 1-based ``line`` starts (the end of the text past the last)."""
        if line > len(self.starts):
            return self.length
        return self.starts[max(line, 1) - 1]


#: A run of characters: (start in the text, length, start in the origin).
Run = tuple[int, int, int]


def _origin_of(runs: Sequence[Run], starts: Sequence[int], i: int) -> int | None:
    """The origin offset of character ``i`` under ``runs`` (``None`` if it has none)."""
    k = bisect.bisect_right(starts, i) - 1
    if k >= 0:
        s, n, o = runs[k]
        if i < s + n:
            return o + i - s
    return None


@dataclass(frozen=True)
class Frame:
    """Where a text's origin lies: the file, and for a notebook the cell and its map.

    Attributes:
        file: Line index of the file as it lies on disk.
        cell: A notebook's 0-based cell index.
        output: Whether the origin is the text a code cell printed.
        cell_lines: Line index of the origin (the cell's source or output text).
        to_file: For a notebook, runs mapping the origin to the raw JSON file.
    """

    file: LineIndex
    cell: int | None = None
    output: bool = False
    cell_lines: LineIndex | None = None
    to_file: tuple[Run, ...] = ()
    _to_file_starts: tuple[int, ...] = field(default=(), repr=False, compare=False)

    @staticmethod
    def of_cell(
        file: LineIndex, cell: int, text: str, to_file: Sequence[Run], *, output: bool = False
    ) -> Frame:
        """The frame of one notebook cell's source (or output) text."""
        runs = tuple(to_file)
        return Frame(file, cell, output, LineIndex(text), runs, tuple(r[0] for r in runs))

    def file_offset(self, origin: int) -> int | None:
        """The file offset of an origin offset (``None``: not found in the file)."""
        if self.cell is None:
            return origin
        if not self.to_file:
            return None
        return _origin_of(self.to_file, self._to_file_starts, origin)

    def place(self, first: int, last: int) -> Place:
        """The place of the origin characters ``first`` to ``last`` (inclusive)."""
        start, end = self.file_offset(first), self.file_offset(last)
        cell_line = cell_column = None
        if self.cell_lines is not None:
            cell_line, cell_column = self.cell_lines.line_col(first)
        if start is None:  # a notebook whose raw text could not be mapped: the cell only
            return Place(1, None, None, self.cell, cell_line, cell_column, self.output)
        line, column = self.file.line_col(start)
        end_column = None
        if end is not None:
            end_line, end_col = self.file.line_col(end)
            end_column = end_col + 1 if end_line == line else None
        return Place(line, column, end_column, self.cell, cell_line, cell_column, self.output)

    def line_place(self, origin: int) -> Place:
        """A line-level place (no columns) at an origin offset."""
        p = self.place(origin, origin)
        return Place(p.line, None, None, p.cell, p.cell_line, None, p.output)


@dataclass(frozen=True)
class Text:
    """A string read from an article, with the origin offset of each character.

    Characters the reader wrote itself (a space joining two pieces) have no origin;
    their place is the nearest character's before them.
    """

    text: str
    frame: Frame
    runs: tuple[Run, ...] = ()

    @staticmethod
    def of(text: str, frame: Frame, origin: int = 0) -> Text:
        """A text that stands at ``origin`` of its frame's origin, character for character."""
        return Text(text, frame, ((0, len(text), origin),) if text else ())

    @staticmethod
    def synthetic(text: str, frame: Frame) -> Text:
        """Text the reader wrote (no origin)."""
        return Text(text, frame, ())

    @functools.cached_property
    def _starts(self) -> tuple[int, ...]:
        return tuple(r[0] for r in self.runs)

    def __len__(self) -> int:
        return len(self.text)

    def __str__(self) -> str:
        return self.text

    def __getitem__(self, k: slice) -> Text:
        a, b, _ = k.indices(len(self.text))
        b = max(a, b)
        runs = []
        # the runs are in order and apart: only those from the one holding ``a`` to the last
        # starting before ``b`` can overlap (a slice of a long paste is not a walk of all)
        starts = self._starts
        first = max(0, bisect.bisect_right(starts, a) - 1)
        for s, n, o in self.runs[first : bisect.bisect_left(starts, b)]:
            lo, hi = max(s, a), min(s + n, b)
            if lo < hi:
                runs.append((lo - a, hi - lo, o + lo - s))
        return Text(self.text[a:b], self.frame, tuple(runs))

    def __add__(self, other: Text | str) -> Text:
        if isinstance(other, str):
            other = Text.synthetic(other, self.frame)
        shift = len(self.text)
        runs = self.runs + tuple((s + shift, n, o) for s, n, o in other.runs)
        return Text(self.text + other.text, self.frame, runs)

    def strip(self) -> Text:
        """Without white space at either end."""
        lead = len(self.text) - len(self.text.lstrip())
        return self[lead : lead + len(self.text.strip())]

    def sub(self, pattern: re.Pattern[str], repl: str | Callable[[re.Match[str]], str]) -> Text:
        """``pattern.sub(repl, text)`` with the map kept: a replacement maps to what it replaces."""
        out = self[0:0]
        at = 0
        for m in pattern.finditer(self.text):
            new = repl if isinstance(repl, str) else repl(m)
            if isinstance(repl, str):
                new = m.expand(repl)
            out = out + self[at : m.start()]
            kept = min(len(new), m.end() - m.start())
            piece = self[m.start() : m.start() + kept]
            out = out + Text(new[:kept], self.frame, piece.runs) + new[kept:]
            at = m.end()
        return out + self[at:]

    @staticmethod
    def join(sep: str, parts: Iterable[Text], frame: Frame) -> Text:
        """The parts with ``sep`` (written by the reader) between them."""
        out = Text.synthetic("", frame)
        for k, p in enumerate(parts):
            out = out + (sep if k else "") + p
        return out

    def origin(self, i: int, *, before: bool = True) -> int | None:
        """The origin offset of character ``i`` (or of the nearest one that has one)."""
        if not self.runs:
            return None
        i = min(max(i, 0), max(len(self.text) - 1, 0))
        o = _origin_of(self.runs, self._starts, i)
        if o is not None:
            return o
        k = bisect.bisect_right(self._starts, i) - 1
        if before and k >= 0:
            _, n, o = self.runs[k]
            return o + n - 1
        return self.runs[min(k + 1, len(self.runs) - 1)][2]

    def place(self, start: int, end: int) -> Place:
        """The place of the characters ``start`` to ``end`` (exclusive) of this text."""
        first = self.origin(start)
        if first is None:
            return Place(1, cell=self.frame.cell, output=self.frame.output)
        last = self.origin(max(end - 1, start))
        return self.frame.place(first, last if last is not None and last >= first else first)

    def line_place(self, at: int = 0) -> Place:
        """A line-level place (no columns) at character ``at``."""
        o = self.origin(at)
        if o is None:
            return Place(1, cell=self.frame.cell, output=self.frame.output)
        return self.frame.line_place(o)


# ----------------------------------------------------------------------------- locating

_INFINITY_TEXT = r"(?:\\mathrm\{\\infty\s*\}|\\infty|∞|inf(?:inity)?)"


@functools.lru_cache(maxsize=8192)
def _entry_pattern(entry: str) -> re.Pattern[str] | None:
    """How a printed entry may be written: ``-0.5`` as ``−0.5``, ``- 0.5`` or ``{-0.5}``."""
    e = entry.strip().replace("−", "-")
    sign = ""
    if e.startswith(("-", "+")):
        sign, e = (r"[-−]\s*" if e[0] == "-" else r"\+?\s*"), e[1:]
    if e in ("inf", "infinity", "∞"):
        return re.compile(sign + _INFINITY_TEXT)
    if not e or not re.fullmatch(r"[\d.,/eE+\-%]+", e):
        return None
    body = ""
    for ch in e:
        if ch.isdigit():
            body += ch
        elif ch == ".":
            body += r"\."
        elif ch == "/":
            body += r"\s*/\s*"
        elif ch in "eE":
            body += r"\s*(?:[eE]|\\times\s*10\^\{?)\s*"
        else:
            body += re.escape(ch)
    return re.compile(rf"(?<![\w.]){sign}{body}(?!\d)")


def spans(
    text: Text, start: int, end: int, entries: Sequence[str], *, from_end: bool = False
) -> list[tuple[int, int] | None]:
    """Where each printed entry stands in ``text[start:end]``, in order (``None``: not found).

    ``from_end``: the entries are the last numbers of the span (the printed result of
    ``… = 1.0``).
    """
    hay = text.text
    end = min(end, len(hay))
    out: list[tuple[int, int] | None] = []
    if from_end:
        at = end
        for e in reversed(entries):
            pat = _entry_pattern(e)
            found = None
            if pat is not None:
                for m in pat.finditer(hay, start, at):
                    found = m.span()
                if found is not None:
                    at = found[0]
            out.append(found)
        out.reverse()
        return out
    at = start
    for e in entries:
        pat = _entry_pattern(e)
        hit = pat.search(hay, at, end) if pat is not None else None
        if hit is not None:
            at = hit.end()
        out.append(hit.span() if hit is not None else None)
    return out


def locate(
    text: Text,
    start: int,
    end: int,
    entries: Sequence[str],
    *,
    from_end: bool = False,
) -> tuple[Place, ...]:
    """The place of each printed entry, found in order inside ``text[start:end]``.

    The entries were read from that span, so each stands there in order. An entry
    that cannot be told apart there (written in a form the reader rewrote) gets a
    line-level place at the span's start.
    """
    out: list[Place] = []
    fallback: Place | None = None
    for span in spans(text, start, end, entries, from_end=from_end):
        if span is None:
            if fallback is None:
                fallback = text.line_place(start)
            out.append(fallback)
        else:
            out.append(text.place(*span))
    return tuple(out)


def line_places(line: Place, entries: Sequence[str]) -> tuple[Place, ...]:
    """Line-level places for entries whose columns are not known."""
    return tuple(line for _ in entries)
