r"""Find the numbers an article prints, each with its place.

Reads an article — Markdown (``.md``), plain text, LaTeX (``.tex``) or a Jupyter
notebook (``.ipynb``: markdown cells and the plain-text outputs of code cells) —
and finds:

* every printed matrix, vector and number in its maths (``bmatrix``,
  ``pmatrix``, ``array`` bodies, bracketed lists ``[0.1, 1.1]``), in Markdown
  tables, and in notebook outputs (``array([[…]])``, ``tensor([[…]])``), each
  with its nearest label (``Q_1 =``, a bold name, the variable the code cell
  printed, or the heading above it);
* every displayed arithmetic line (``5.652 + 5.652 + 10.068 = 21.372``,
  ``\sqrt{2}\approx 1.414``), as an expression and the value it prints.

:func:`extract` returns :class:`~symtf.draft.read.items.Found` records, each
entry with its :class:`~symtf.place.Place`. The printed strings are kept
verbatim. Nothing here evaluates anything: the expressions are only parsed
(safely, by :mod:`symtf.language.latexmath`) to be sure they are well formed.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path

from symtf import limits
from symtf.draft.read.blocks import Block
from symtf.draft.read.definitions import Definition
from symtf.draft.read.items import LITERAL, Found, Rows, Segment, split_top
from symtf.draft.read.maths import STATEMENT_SEPARATORS, math_items, maths_segments
from symtf.draft.read.memo import SegmentMemo, outcome, segment_key
from symtf.draft.read.prose import comment_numbers, text_items
from symtf.draft.read.prose.outputs import printed_numbers
from symtf.draft.read.segments import pieces
from symtf.draft.read.source import LineIndex, Text, spans, text_lines
from symtf.errors import SpecError
from symtf.place import Place

__all__ = [
    "MAX_ARTICLE_BYTES",
    "OutputPlaces",
    "Reading",
    "extract",
    "extract_text",
    "read",
    "read_article_text",
    "segments",
    "statements",
]

#: Largest article read, in bytes.
MAX_ARTICLE_BYTES = limits.MAX_ARTICLE_BYTES

_FILLER = {
    "is", "are", "of", "the", "a", "an", "so", "only", "its", "gives", "and", "was", "be",
}  # fmt: skip
_WORD = re.compile(r"[A-Za-z_]+")


@dataclass(frozen=True)
class Reading:
    """An article read: its segments (aligned rows split out, continued displays joined),
    the code its translation reads, and, for a notebook, each cell's source."""

    kind: str
    segments: tuple[Segment, ...]
    blocks: tuple[Block, ...] = ()
    sources: dict[int, Text] = field(default_factory=dict)

    def found(self, memo: SegmentMemo | None = None) -> list[Found]:
        """Every printed value, each entry with its place; see the module docstring.

        ``memo``: the segments an earlier reading found, taken where they are the same
        (:mod:`symtf.draft.read.memo`).
        """
        return found_in(list(self.segments), memo)

    def in_code(self) -> list[tuple[str, Found]]:
        """The values the code shows, as the reader sees them: ``("output", …)`` for what a
        block printed, ``("comment", …)`` for what its comments write. (The code's
        translation reads them too; this is what it must account for.)"""
        out: list[tuple[str, Found]] = []
        for b in self.blocks:
            for o in b.outputs:
                if o.source is not None:
                    seg = Segment(o.source, _first_line(o.source), False, b.cell)
                    out.extend(("output", f) for f in printed_numbers(seg))
            if b.source is not None:
                for text in comments(b.source):
                    seg = Segment(text, _first_line(text), False, b.cell)
                    out.extend(("comment", f) for f in comment_numbers(seg))
        return out

    def statements(self) -> list[tuple[int, int | None, str]]:
        """Every maths statement and prose line: ``(line, cell, text)`` (see :func:`statements`)."""
        out: list[tuple[int, int | None, str]] = []
        for seg in self.segments:
            if seg.extra.get("output"):
                continue
            if seg.math:
                for st in split_top(seg.text.text, STATEMENT_SEPARATORS):
                    out.append((seg.line, seg.cell, st))
            else:
                for k, line in enumerate(text_lines(seg.text.text)):
                    if line.strip():
                        out.append((seg.line + k, seg.cell, line.strip()))
        return out

    def prose(self) -> str:
        """The words and maths the reader reads (no code), one segment a line."""
        return "\n".join(seg.text.text for seg in self.segments if not seg.extra.get("output"))

    def file_line(self, cell: int | None, line: int) -> int:
        """The file line of a notebook cell's 1-based line (the line itself elsewhere)."""
        src = self.sources.get(cell) if cell is not None else None
        if src is None or src.frame.cell_lines is None:
            return line
        starts = src.frame.cell_lines.starts
        at = starts[min(max(line, 1), len(starts)) - 1]
        p = src.place(at, at + 1)
        return p.line if p.column is not None else line


def read(text: str, kind: str = "md", *, path: str = "<text>", code: bool = False) -> Reading:
    """Read an article (``kind``: ``md``, ``txt``, ``tex`` or ``ipynb``).

    ``code``: leave the code (notebook code cells, Markdown Python fences and what
    they printed) to the code's translation, as blocks; otherwise read it as prose.

    Raises:
        SpecError: A notebook that is not one (naming the cell and the field).
    """
    cut = pieces(text, kind, path, code=code)
    blocks = tuple(replace(b, path=path) for b in cut.blocks)  # messages name the file
    return Reading(kind, tuple(maths_segments(cut.segments)), blocks, cut.sources)


def segments(
    text: str, kind: str = "md", *, path: str = "<text>", outputs: bool = True
) -> list[Segment]:
    """An article's maths and prose segments (``outputs``: a notebook's printed outputs too).

    Raises:
        SpecError: A notebook that is not one (naming the cell and the field).
    """
    return list(read(text, kind, path=path, code=not outputs).segments)


def found_in(segs: list[Segment], memo: SegmentMemo | None = None) -> list[Found]:
    """Every printed value of the segments, in order (``memo``: see :meth:`Reading.found`)."""
    found: list[Found] = []
    if memo is not None:
        memo.start()
    definitions: dict[str, Definition] = {}  # R(θ) = …, for the segments after it
    quantities: dict[str, str] = {}  # D = 0.5 log 5 + … with no value yet, by label
    for k, seg in enumerate(segs):
        before = segs[k - 1] if k else None
        if seg.math and before is not None and not before.math:
            lines = before.text.text.splitlines()
            words = [
                w for w in _WORD.findall(lines[-1] if lines else "") if w.lower() not in _FILLER
            ]
            if words:
                seg.extra["prose_label"] = words[-1]
        key = segment_key(seg, definitions, quantities) if memo is not None else None
        kept = memo.get(key) if memo is not None else None
        if kept is not None:  # read before: its findings, and what it defined
            items = list(kept[0])
            definitions.clear()
            definitions.update(kept[1])
            quantities.clear()
            quantities.update(kept[2])
        else:
            items = math_items(seg, definitions, quantities) if seg.math else text_items(seg)
            if memo is not None:
                memo.put(key, outcome(items, definitions, quantities))
        # a chain is one statement of one segment: several on a line are several chains
        found.extend(replace(f, chain=f"{k}:{f.chain}") if f.chain else f for f in items)
    if memo is not None:
        memo.finish()
    return found + _rows_of_arrows(found)


def extract_text(
    text: str, kind: str = "md", *, path: str = "<text>", outputs: bool = True
) -> list[Found]:
    """Find every printed value in an article's text; see the module docstring.

    Args:
        text: The article.
        kind: ``"md"``, ``"txt"``, ``"tex"`` or ``"ipynb"``.
        path: The article's name, for error messages.
        outputs: Read the code too (a notebook's printed outputs, a Markdown article's
            Python fences); otherwise it is left to the code's translation.
    """
    found = read(text, kind, path=path, code=not outputs).found()
    return [f for f in found if not f.label.endswith(LITERAL)]


def statements(
    text: str, kind: str = "md", *, path: str = "<text>"
) -> list[tuple[int, int | None, str]]:
    """Every maths statement of an article, for readers of its equations.

    Returns ``(line, cell, text)`` for each top-level statement of a maths span
    (``S_1 = \\frac{Q_1K_1^T}{\\sqrt{2}} = …``) and for each line of plain text,
    in the article's order. Nothing is parsed beyond splitting.
    """
    return read(text, kind, path=path, code=True).statements()


def _rows_of_arrows(found: list[Found]) -> list[Found]:
    """Consecutive lines ``A → B: … ≈ 0.264``, ``A → C: … ≈ 0.264`` print the row of A."""
    out: list[Found] = []
    run: list[Found] = []

    def close() -> None:
        if len(run) >= 2:
            head = run[0].label.split("→")[0].strip()
            row = tuple(f.rows[0][0] for f in run)
            out.append(
                Found(
                    "vector",
                    f"{head} →",
                    run[0].line,
                    (row,),
                    cell=run[0].cell,
                    context=run[0].context,
                    places=tuple(f.places[0] for f in run if f.places),
                )
            )
        run.clear()

    for f in found:
        if f.label.endswith(LITERAL):
            continue  # a number the line computes from: no break in the run of lines
        if f.kind == "arithmetic" and "→" in f.label and f.shape == (1, 1):
            if run and (
                f.line != run[-1].line + 1 or f.label.split("→")[0] != run[0].label.split("→")[0]
            ):
                close()
            run.append(f)
        elif not run or f.line != run[-1].line:
            close()
    close()
    return out


def read_article_text(path: str | Path) -> str:
    """An article file's text: a regular UTF-8 file of at most :data:`MAX_ARTICLE_BYTES`.

    Raises:
        SpecError: The file is missing, not a regular file, too large, or not UTF-8.
    """
    from symtf import files

    p = Path(path)
    if p.is_dir():
        raise SpecError(f"{path}: expected an article file, found a folder")
    if not p.exists():
        raise SpecError(f"{path}: expected an article file, found nothing")
    return files.read_text(p, MAX_ARTICLE_BYTES, name=str(path), what="an article")


def extract(path: str | Path) -> list[Found]:
    """Read an article file (``.md``, ``.txt``, ``.tex``, ``.ipynb``) and find its printed values.

    Raises:
        SpecError: The file is missing, not a regular file, too large, or not UTF-8.
    """
    text = read_article_text(path)
    from symtf.draft.read.program import program_kind

    suffix = Path(path).suffix.lower().lstrip(".")
    kind = program_kind(path) or (suffix if suffix in ("md", "tex", "ipynb") else "txt")
    return extract_text(text, kind, path=str(path))


def _first_line(text: Text) -> int:
    """The line a text starts on (in its cell, for a notebook)."""
    p = text.place(0, 1)
    return p.cell_line if p.cell is not None and p.cell_line is not None else p.line


def comments(code: Text) -> list[Text]:
    """The comments of a block of Python, each without its ``#`` (read with :mod:`tokenize`,
    never run): comments on consecutive lines are one text, one line each (a value printed
    over several lines and pasted as comments, ``# tensor([[…],`` / ``#  […]])``). None if
    the block does not tokenize."""
    import io
    import tokenize

    lines = LineIndex(code.text)
    found: list[tuple[int, Text]] = []
    try:
        for tok in tokenize.generate_tokens(io.StringIO(code.text).readline):
            if tok.type == tokenize.COMMENT:
                (row, col), (_, end) = tok.start, tok.end
                at = lines.start(row) + col
                found.append((row, code[at + 1 : lines.start(row) + end]))
    except (tokenize.TokenError, SyntaxError, ValueError):  # an unfinished block: what was read
        pass
    out: list[Text] = []
    last = -2
    for row, body in found:
        if out and row == last + 1:
            out[-1] = out[-1] + "\n" + body
        else:
            out.append(body)
        last = row
    return [t for t in out if t.text.strip()]


class OutputPlaces:
    """The places of values the code shows, found in the blocks' printed outputs and comments
    (and, last, in the code: a literal restating a computed value).

    The code's translation gives each value it matched to a print (or to a comment
    written under a statement, ``# expected: [[…]]``) as rows of printed strings, with
    the cell and the file line of each row. The rows are found, entry by entry and in
    order, in the texts that cell (or, in a Markdown article, the block holding those
    lines) printed or wrote in comments; values of one block are found in the order they
    are asked for, so a value printed twice is placed at each of its prints.
    """

    def __init__(self, blocks: Sequence[Block]) -> None:
        self.blocks = list(blocks)
        self.texts: dict[int, list[Text]] = {}
        self.cursor: dict[int, tuple[int, int]] = {}  # block: (text, offset)

    def _texts(self, k: int) -> list[Text]:
        if k not in self.texts:
            b = self.blocks[k]
            outs = [o.source for o in b.outputs if o.source is not None]
            self.texts[k] = outs + (comments(b.source) if b.source is not None else [])
        return self.texts[k]

    def __call__(self, cell: int | None, lines: Sequence[int], rows: Rows) -> tuple[Place, ...]:
        entries = [c for r in rows for c in r]
        wanted = set(lines)
        for k, b in enumerate(self.blocks):
            if cell is not None and b.cell != cell:
                continue
            if cell is None:
                span = set(range(b.first_line, b.first_line + b.text.count("\n") + 1))
                if not wanted & (span | {n for o in b.outputs for n in o.lines}):
                    continue
            found = self._in_block(k, entries, wanted)
            if found:
                return found
        return ()

    def in_code(self, cell: int | None, lines: Sequence[int], rows: Rows) -> tuple[Place, ...]:
        """The places of a literal written in the code itself (``p = [[0.1, 0.9]]``): its
        entries, in order, in the source lines ``lines`` of the block (cell) holding them."""
        entries = [c for r in rows for c in r]
        wanted = set(lines)
        for k, b in enumerate(self.blocks):
            if b.source is None or (cell is not None and b.cell != cell):
                continue
            found = self._in_code(k, entries, wanted)
            if found:
                return found
        return ()

    def _in_block(self, k: int, entries: list[str], wanted: set[int]) -> tuple[Place, ...]:
        texts = self._texts(k)
        first, offset = self.cursor.get(k, (0, 0))
        order = [(j, offset if j == first else 0) for j in range(first, len(texts))]
        order += [(j, 0) for j in range(first)]  # a value shown before the last one found
        # the texts on the value's own lines first (a comment that repeats a print is
        # placed in the comment, the print in the output)
        order.sort(key=lambda ja: not (_lines(texts[ja[0]]) & wanted))
        for j, at in order:
            text = texts[j]
            found = spans(text, at, len(text.text), entries)
            if found and all(s is not None for s in found):
                hits = [s for s in found if s is not None]
                self.cursor[k] = (j, hits[-1][1])
                return tuple(text.place(*s) for s in hits)
        return self._in_code(k, entries, wanted)

    def _in_code(self, k: int, entries: list[str], wanted: set[int]) -> tuple[Place, ...]:
        """The entries in the code's own lines ``wanted``: an array literal that writes out
        a value the code computed (``q_split = [[…]]`` after ``q = q.view(…)``)."""
        code = self.blocks[k].source
        if code is None or not code.text:
            return ()
        starts = LineIndex(code.text).starts
        ends = [*starts[1:], len(code.text)]
        rows = list(zip(starts, ends, strict=True))
        mine = [(a, b) for a, b in rows if b > a and code.place(a, a + 1).line in wanted]
        if not mine:
            return ()
        found = spans(code, mine[0][0], mine[-1][1], entries)
        if not found or any(s is None for s in found):
            return ()
        return tuple(code.place(*s) for s in found if s is not None)


def _lines(text: Text) -> set[int]:
    """The file lines a text spans."""
    if not text.text:
        return set()
    a, b = text.place(0, 1).line, text.place(len(text.text) - 1, len(text.text)).line
    return set(range(a, b + 1))
