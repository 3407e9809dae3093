"""Where code is, for the translation: the code blocks the reader found
(:class:`symtf.draft.read.blocks.Block`, re-exported here), a notebook's file line of each
cell line (:func:`cell_lines`, :func:`file_lines`), and IPython's magics blanked
(:func:`without_magics`). Nothing is run.
"""

from __future__ import annotations

import bisect
import json
import re
from typing import Any

from symtf.draft.read.blocks import Block, Output, without_stated_sizes

__all__ = [
    "Block",
    "Output",
    "cell_lines",
    "file_lines",
    "without_magics",
]


class _Finder:
    """The file line of each JSON string of a notebook, searched from a position.

    A cell's keys may come in any order (nbformat writes ``outputs`` before
    ``source``), so each run of strings (a cell's source, one output) is searched
    from where the cell starts, and the cell ends after the last string found.
    """

    def __init__(self, raw: str) -> None:
        self.raw = raw
        self.starts = [0] + [m.end() for m in re.finditer("\n", raw)]
        self.cell = 0  # where the current cell's strings are searched from
        self.end = 0  # the furthest string found in the current cell

    def run(self, strings: list[str]) -> list[int]:
        """The lines of consecutive strings (0 where one is not found)."""
        at = self.cell
        out = []
        for s in strings:
            line, after = self._find(s, at)
            if line:
                at = after
                self.end = max(self.end, after)
            out.append(line)
        return out

    def next_cell(self) -> None:
        """Strings searched from now on belong to the next cell."""
        self.cell = max(self.cell, self.end)

    def _find(self, s: str, start: int) -> tuple[int, int]:
        for needle in (json.dumps(s, ensure_ascii=False)[1:-1], json.dumps(s)[1:-1]):
            if not needle:
                continue
            at = self.raw.find(needle, start)
            if at >= 0:
                return bisect.bisect_right(self.starts, at), at + len(needle)
        return 0, start


def cell_lines(text: str) -> dict[int, list[int]]:
    """For a notebook: the file line of each source line of each cell (by cell index)."""
    try:
        cells = json.loads(text).get("cells", [])
    except (ValueError, AttributeError):
        return {}
    find = _Finder(text)
    out: dict[int, list[int]] = {}
    for k, c in enumerate(cells if isinstance(cells, list) else []):
        if not isinstance(c, dict):
            continue
        out[k] = find.run(_lines_of(c.get("source", "")))
        for o in c.get("outputs", []) or []:
            if isinstance(o, dict):
                find.run(_lines_of(_output_text(o)[0]))
        find.next_cell()
    return out


def file_lines(text: str) -> dict[int, tuple[int, int, bool]]:
    """For a notebook: what each file line holds, ``(cell, line, output)``.

    ``line`` is 1-based within the cell's source, or (``output`` true) within its printed
    outputs taken one after the other (streams and the plain text of results, each
    starting on a line of its own). A line the reader cannot place is left out.
    """
    try:
        cells = json.loads(text).get("cells", [])
    except (ValueError, AttributeError):
        return {}
    find = _Finder(text)
    out: dict[int, tuple[int, int, bool]] = {}
    for k, c in enumerate(cells if isinstance(cells, list) else []):
        if not isinstance(c, dict):
            continue
        for n, line in enumerate(find.run(_lines_of(c.get("source", ""))), start=1):
            if line:
                out.setdefault(line, (k, n, False))
        printed = 0
        for o in c.get("outputs", []) or []:
            if isinstance(o, dict):
                for n, line in enumerate(find.run(_lines_of(_output_text(o)[0])), start=1):
                    if line:
                        out.setdefault(line, (k, printed + n, True))
                printed += len(_lines_of(_output_text(o)[0]))
        find.next_cell()
    return out


def _output_text(o: dict[str, Any]) -> tuple[Any, str]:
    """An output's text and kind: ``stream`` (prints) or ``result`` (the shown value)."""
    if o.get("output_type") == "stream":
        # warnings go to stderr: they are not what the code printed
        return o.get("text", ""), "stderr" if o.get("name") == "stderr" else "stream"
    if o.get("output_type") in ("execute_result", "display_data"):
        data = o.get("data", {})
        return (data.get("text/plain", "") if isinstance(data, dict) else ""), "result"
    return "", ""


def _lines_of(v: Any) -> list[str]:
    if isinstance(v, list):
        return [str(x) for x in v]
    return str(v).splitlines(keepends=True)


def without_magics(text: str) -> str:
    """IPython's ``%magic`` and ``!shell`` lines as blank lines (same line numbers): they are
    not Python, and they are never run. A size stated with its value (``n = a // b = 4``)
    is read as its formula (:func:`symtf.draft.read.blocks.without_stated_sizes`)."""
    return without_stated_sizes(
        "\n".join("" if line.lstrip().startswith(("%", "!")) else line for line in text.split("\n"))
    )
