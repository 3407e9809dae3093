"""An article cut into segments: runs of maths and runs of prose, each with its places.

Markdown and plain text go through :mod:`symtf.draft.read.markdown`, LaTeX through
:mod:`symtf.draft.read.latex`, notebooks through :mod:`symtf.draft.read.notebook`
(markdown cells read as Markdown, code cells as code and printed outputs), programs
(a marimo notebook, a Python script, a C-family file's comments) through
:mod:`symtf.draft.read.program`.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from symtf.draft.read.blocks import Block, code_fences, fenced_blocks, notebook_blocks
from symtf.draft.read.items import Segment
from symtf.draft.read.latex import latex_segments
from symtf.draft.read.markdown import Fence, read_markdown
from symtf.draft.read.notebook import cells, printed_variable
from symtf.draft.read.program import read_program
from symtf.draft.read.source import Frame, LineIndex, Text

__all__ = ["Pieces", "file_text", "pieces"]


@dataclass
class Pieces:
    """An article cut up: its segments in order, and the code its translation reads."""

    segments: list[Segment] = field(default_factory=list)
    blocks: list[Block] = field(default_factory=list)
    #: For a notebook: each cell's source, by cell index.
    sources: dict[int, Text] = field(default_factory=dict)


def file_text(text: str) -> Text:
    """A whole file's text, each character at its own place."""
    return Text.of(text, Frame(LineIndex(text)))


def pieces(text: str, kind: str, path: str, *, code: bool) -> Pieces:
    """An article's segments and code.

    ``code``: the code (a notebook's code cells, a Markdown article's Python fences
    and what they printed) is left to the code's translation and handed over as
    blocks; otherwise it is read like the rest (``symtf extract`` reads every number
    an article shows, printed outputs included).

    Raises:
        SpecError: A notebook that is not one (naming the cell and the field).
    """
    out = Pieces()
    if kind == "ipynb":
        for c in cells(text, path):
            out.sources[c.index] = c.source
            if c.kind == "markdown":
                out.segments.extend(read_markdown(c.source, cell=c.index).segments)
            elif c.kind == "code" and not code:
                name = printed_variable(c.source.text)
                for o in c.outputs:
                    seg = Segment(o.text, 1, False, c.index, code_name=name)
                    seg.extra["output"] = "1"
                    out.segments.append(seg)
            if c.kind == "code" and code:
                out.blocks.extend(notebook_blocks([c]))
        return out
    whole = file_text(text)
    if kind in ("py", "c"):  # a program: its Markdown strings and comments, and its code
        program = read_program(whole, kind, code=code)
        out.segments, out.blocks = program.segments, program.blocks
        return out
    if kind == "tex":
        out.segments = latex_segments(whole)
        return out
    lines = text.splitlines()
    chosen: list[tuple[Fence, list[Fence]]] = []

    def skip(fences: list[Fence]) -> dict[int, int]:
        chosen.extend(code_fences(fences, lines))
        # each fence the code reads → how much of its body it reads (the rest is prose)
        return {f.open_line: len(f.body.text) for block, outs in chosen for f in (block, *outs)}

    read = read_markdown(whole, skip=skip if code and kind == "md" else None, plain=kind != "md")
    out.segments = read.segments
    out.blocks = fenced_blocks(chosen)
    return out
