"""What a reading of an article's segments found, kept for the next reading of an edit.

An edit changes a line or two of an article; the numbers every other segment prints are
found again just as before. :func:`~symtf.draft.read.extract.found_in` reads the
segments in order, and what one segment yields is a function of:

- the segment: its text, its first line, whether it is maths, its heading, the name of the
  code it shows, its flags (``prose_label``…) and its table's cells;
- where its characters stand: each entry's place is worked out from the origin offsets
  of its characters and the file's line starts between them, so the key holds those
  offsets relative to the segment's first character, the line and column of that
  character, and the line starts it spans (a segment after an edit that made an earlier
  line longer or shorter is the same segment, at the same lines and columns);
- what the segments before it defined (``R(θ) = …``) and the quantities they wrote out
  with no value yet, which it may read and add to.

A :class:`SegmentMemo` maps that key to the segment's findings and to the definitions
and quantities after it. Only segments of a text file are kept (a notebook's cells map to
the raw JSON file through a map of their own: they are read again each time).
"""

from __future__ import annotations

import bisect
from collections.abc import Iterable
from typing import Any

from symtf.draft.read.definitions import Definition
from symtf.draft.read.items import Found, Segment
from symtf.draft.read.source import Text

__all__ = ["SegmentMemo"]

#: What a segment yields: its findings, then the definitions and quantities after it.
Outcome = tuple[tuple[Found, ...], tuple[tuple[str, Definition], ...], tuple[tuple[str, str], ...]]


class SegmentMemo:
    """The findings of segments read before, by what they are a function of (see above).

    Each reading that uses it keeps only the segments it read (:meth:`start` begins a
    reading): what an article no longer holds is dropped, so it never grows past one
    article's segments.
    """

    def __init__(self) -> None:
        self._kept: dict[tuple[Any, ...], Outcome] = {}
        self._read: dict[tuple[Any, ...], Outcome] = {}
        #: Segments found in it (``hits``) and read again (``misses``) by the last reading.
        self.hits = 0
        self.misses = 0

    def start(self) -> None:
        """Begin a reading: the segments of the readings before it are still found."""
        self._kept.update(self._read)
        self._read = {}
        self.hits = self.misses = 0

    def finish(self) -> None:
        """End a reading: only its segments are kept for the next one."""
        self._kept = self._read
        self._read = {}

    def get(self, key: tuple[Any, ...] | None) -> Outcome | None:
        """A segment's outcome under ``key`` (``None``: not read before, or not keyable)."""
        if key is None:
            return None
        got = self._read.get(key) or self._kept.get(key)
        if got is None:
            self.misses += 1
            return None
        self.hits += 1
        self._read[key] = got
        return got

    def put(self, key: tuple[Any, ...] | None, outcome: Outcome) -> None:
        """Keep a segment's outcome (nothing for a segment without a key)."""
        if key is not None:
            self._read[key] = outcome


def segment_key(
    seg: Segment, definitions: dict[str, Definition], quantities: dict[str, str]
) -> tuple[Any, ...] | None:
    """What a segment's findings are a function of (the module docstring); ``None`` for a
    segment of a notebook."""
    frame = seg.text.frame
    if frame.cell is not None or frame.to_file or frame.cell_lines is not None:
        return None
    texts: list[Text] = [seg.text]
    for row in seg.table or ():
        texts.extend(row)
    if any(t.frame is not frame for t in texts):
        return None
    runs = [r for t in texts for r in t.runs]
    if runs:
        base = min(o for _, _, o in runs)
        end = max(o + n for _, n, o in runs)
        starts = frame.file.starts
        first = bisect.bisect_right(starts, base) - 1
        last = bisect.bisect_right(starts, end)
        lines: tuple[Any, ...] = (first, tuple(s - base for s in starts[first : last + 1]))
    else:
        base, lines = 0, ()

    def placed(t: Text) -> tuple[str, tuple[tuple[int, int, int], ...]]:
        return t.text, tuple((s, n, o - base) for s, n, o in t.runs)

    table = None if seg.table is None else tuple(tuple(map(placed, row)) for row in seg.table)
    return (
        placed(seg.text),
        lines,
        frame.output,
        seg.line,
        seg.math,
        seg.heading,
        seg.code_name,
        tuple(sorted(seg.extra.items())),
        table,
        tuple(definitions.items()),
        tuple(quantities.items()),
    )


def outcome(
    found: Iterable[Found], definitions: dict[str, Definition], quantities: dict[str, str]
) -> Outcome:
    """What a segment yielded, to keep."""
    return tuple(found), tuple(definitions.items()), tuple(quantities.items())
