"""An article cut into segments: runs of maths and runs of prose, each with its places."""

from __future__ import annotations

import re

from symtf.draft.read.items import Segment
from symtf.draft.read.notebook import cells, printed_variable
from symtf.draft.read.source import Frame, LineIndex, Text

__all__ = ["notebook_segments", "text_segments"]

_MATH_SPANS = re.compile(
    r"\$\$(?P<dd>.+?)\$\$|\\\[(?P<br>.+?)\\\]|\\\((?P<pa>.+?)\\\)|(?<![\\$])\$(?P<d>[^$\n]+?)\$"
    r"|\\begin\{(?P<env>equation\*?|align\*?|gather\*?|displaymath|math)\}(?P<body>.+?)\\end\{(?P=env)\}",
    re.S,
)
_HEADINGS = re.compile(r"^(?:#+\s*(.+)|\\(?:sub)*section\*?\{(.+?)\})$", re.M)
#: A decimal comma in LaTeX maths, ``0{,}5`` (the braces keep TeX from spacing it as a
#: separator): the number 0.5. A comma without braces, ``(1, 2)``, separates.
DECIMAL_COMMA = re.compile(r"(?<=\d)\{,\}(?=\d)")


def text_segments(text: Text, *, first_line: int = 1, cell: int | None = None) -> list[Segment]:
    """A Markdown, plain-text or LaTeX text as maths and prose segments."""
    raw = text.text
    out: list[Segment] = []
    pos = 0
    starts = LineIndex(raw)

    def line_of(offset: int) -> int:
        return starts.line_col(offset)[0] + first_line - 1

    headings = [
        (m.start(), (m.group(1) or m.group(2)).strip())
        for m in _HEADINGS.finditer(raw)
        if m.group(1) or m.group(2)
    ]
    for m in _MATH_SPANS.finditer(raw):
        before = raw[pos : m.start()]
        if before.strip():
            out.append(Segment(text[pos : m.start()], line_of(pos), False, cell))
        group = next(g for g in ("dd", "br", "pa", "d", "body") if m.group(g) is not None)
        heading = next((h for start, h in reversed(headings) if start <= m.start()), "")
        body = text[m.start(group) : m.end(group)].sub(DECIMAL_COMMA, ".")
        out.append(Segment(body, line_of(m.start()), True, cell, heading))
        pos = m.end()
    if raw[pos:].strip():
        out.append(Segment(text[pos:], line_of(pos), False, cell))
    return out


def notebook_segments(raw: str, path: str, *, outputs: bool = True) -> list[Segment]:
    """The markdown cells and the printed outputs of the code cells (nbformat 4, never run).

    Raises:
        SpecError: For anything that is not a notebook, naming the cell and the field.
    """
    out: list[Segment] = []
    for c in cells(raw, path, outputs=outputs):
        if c.kind == "markdown":
            out.extend(text_segments(c.source, cell=c.index))
        elif c.kind == "code" and outputs:
            name = printed_variable(c.source.text)
            for o in c.outputs:
                seg = Segment(o.text, 1, False, c.index, code_name=name)
                seg.extra["output"] = "1"
                out.append(seg)
    return out


def file_text(text: str) -> Text:
    """A whole file's text, each character at its own place."""
    return Text.of(text, Frame(LineIndex(text)))
