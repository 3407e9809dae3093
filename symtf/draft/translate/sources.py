"""Where code is: a notebook's code cells and a Markdown article's fenced Python blocks.

Each :class:`Block` keeps its cell, the file line of each of its lines, and what it
printed (the cell's outputs, or the plain fenced blocks right after it). Nothing is
run: a block fenced as Python is parsed with :func:`ast.parse` only to tell code from
hand arithmetic fenced for its colours.
"""

from __future__ import annotations

import ast
import bisect
import json
import re
from dataclasses import dataclass
from typing import Any

from symtf.draft.read import check_notebook, notebook_cells, text_lines
from symtf.draft.read.blocks import next_to as _next_to
from symtf.draft.read.blocks import without_stated_sizes

__all__ = [
    "Block",
    "Output",
    "blocks",
    "cell_lines",
    "code_lines",
    "file_lines",
    "without_code",
    "without_magics",
]


@dataclass(frozen=True)
class Output:
    """What a cell printed: its text and the file line of each of its lines."""

    text: str
    lines: tuple[int, ...]
    kind: str  # "stream" or "result"


@dataclass(frozen=True)
class Block:
    """One code cell or fenced Python block, with what it printed."""

    cell: int | None
    text: str
    first_line: int  # the file line of its first line
    outputs: tuple[Output, ...] = ()
    lines: tuple[int, ...] = ()  # the file line of each of its lines, where known
    path: str = ""  # the file it is in (for messages)

    def file_line(self, line: int) -> int:
        """The file line of the block's ``line`` (1-based)."""
        if 1 <= line <= len(self.lines) and self.lines[line - 1]:
            return self.lines[line - 1]
        return self.first_line + line - 1 if self.first_line else 0

    def where(self, line: int) -> str:
        """``cell 3, line 2`` (notebooks) or ``line 42`` (a block in an article)."""
        if self.cell is not None:
            return f"cell {self.cell}, line {line}"
        return f"line {self.first_line + line - 1}"


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


def without_code(text: str, kind: str) -> str:
    """The article with its Python code left out (blank lines keep the line numbers); for a
    notebook, its markdown cells only."""
    if kind == "ipynb":
        try:
            nb = json.loads(text)
            cells = [
                c
                if c.get("cell_type") == "markdown"
                else {"cell_type": "code", "source": "", "outputs": []}
                for c in nb.get("cells", [])
                if isinstance(c, dict)
            ]
        except (ValueError, AttributeError):
            return text
        return json.dumps({"cells": cells})
    inside = code_lines(text)
    return "\n".join("" if k + 1 in inside else line for k, line in enumerate(text_lines(text)))


def _lines_of(v: Any) -> list[str]:
    if isinstance(v, list):
        return [str(x) for x in v]
    return str(v).splitlines(keepends=True)


def blocks(text: str, kind: str, path: str) -> list[Block]:
    """The code of a notebook's cells, or the fenced Python blocks of an article.

    Raises:
        SpecError: A notebook that is not JSON with a list of cells, or a cell of the wrong
            shape (:func:`symtf.extract.check_notebook`).
    """
    if kind == "ipynb":
        check_notebook(text, path)  # a malformed cell is refused, not read past
        cells = notebook_cells(text, path)
        find = _Finder(text)
        out = []
        for k, c in enumerate(cells):
            if not isinstance(c, dict):
                continue
            src = _lines_of(c.get("source", ""))
            src_lines = find.run(src)
            outputs = []
            for o in c.get("outputs", []) or []:
                if not isinstance(o, dict):
                    continue
                raw, what = _output_text(o)
                if not what:
                    continue
                lines = _lines_of(raw)
                outputs.append(Output("".join(lines), tuple(find.run(lines)), what))
            find.next_cell()
            if c.get("cell_type") == "code":
                first = next((n for n in src_lines if n), 0)
                out.append(Block(k, "".join(src), first, tuple(outputs), tuple(src_lines), path))
        return out
    return _fenced(text, path)


_FENCE = re.compile(r"^(\s*)(```+|~~~+)\s*([\w+-]*)[^\n]*$")


_PYTHON = ("python", "py", "python3", "ipython", "pycon")


_PLAIN = ("", "text", "output", "console", "plaintext", "txt")


def _fences(text: str) -> list[tuple[str, int, int, list[str]]]:
    """Every fenced block: its language, the lines of its fences (1-based), and its body."""
    lines = text_lines(text)
    found = []
    k = 0
    while k < len(lines):
        m = _FENCE.match(lines[k])
        if not m:
            k += 1
            continue
        j = k + 1
        while j < len(lines) and not lines[j].strip().startswith(m.group(2)[:3]):
            j += 1
        found.append((m.group(3).lower(), k + 1, j + 1, lines[k + 1 : j]))
        k = j + 1
    return found


def _code_and_outputs(
    text: str,
) -> list[tuple[tuple[str, int, int, list[str]], list[tuple[str, int, int, list[str]]]]]:
    """Each fenced Python block with the plain blocks right after it (what it printed)."""
    found = _fences(text)
    lines = text_lines(text)
    out = []
    for i, block in enumerate(found):
        if block[0] not in _PYTHON or not _parses("\n".join(block[3])):
            continue
        outputs = []
        end = block[2]
        for later in found[i + 1 :]:
            if later[0] not in _PLAIN or not _next_to(lines[end : later[1] - 1]):
                break
            outputs.append(later)
            end = later[2]
        out.append((block, outputs))
    return out


def _parses(body: str) -> bool:
    """Whether a block fenced as Python is Python (parsed with ``ast``, never run).

    Posts often fence hand-worked arithmetic as ``python`` for its colours
    (``mean = (0.1 + 0.3) / 2`` then ``     = 0.2`` on the next line, ``√0.1325``):
    such a block is not code, and the prose reader reads its numbers instead.
    """
    try:
        ast.parse(without_magics(body))
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return False  # too deep for the parser: not read as code either
    return True


def _fenced(text: str, path: str = "") -> list[Block]:
    """Fenced ```python blocks of a Markdown article, each with the plain fences after it."""
    out: list[Block] = []
    for (_lang, start, _end, body), outputs in _code_and_outputs(text):
        printed = tuple(
            Output("\n".join(b) + "\n", tuple(range(s + 1, s + 1 + len(b))), "stream")
            for _l, s, _e, b in outputs
        )
        out.append(Block(None, "\n".join(body) + "\n", start + 1, printed, (), path))
    return out


def code_lines(text: str) -> set[int]:
    """Article lines of fenced Python blocks and of the output blocks right after them
    (fences included): the code translation reads them, not the prose reader."""
    inside: set[int] = set()
    for (_lang, start, end, _body), outputs in _code_and_outputs(text):
        for _l, s, e, _b in [(_lang, start, end, _body), *outputs]:
            inside.update(range(s, e + 1))
    return inside


def without_magics(text: str) -> str:
    """IPython's ``%magic`` and ``!shell`` lines as blank lines (same line numbers): they are
    not Python, and they are never run. A size stated with its value (``n = a // b = 4``)
    is read as its formula (:func:`symtf.draft.read.blocks.without_stated_sizes`)."""
    return without_stated_sizes(
        "\n".join("" if line.lstrip().startswith(("%", "!")) else line for line in text.split("\n"))
    )
