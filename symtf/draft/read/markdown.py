r"""Markdown (and plain text) read with markdown-it-py: maths, prose, tables and code.

The document becomes markdown-it's flat list of block tokens, each with
``map = [first_line, last_line)``; mdit-py-plugins add ``$…$``/``$$…$$``
(dollarmath), top-level ``\begin{align}…`` environments (amsmath) and tables.
Each token is read on its own:

- a paragraph or heading: its raw inline source, cut at the maths spans the
  parser found (``$…$``) and at ``\(…\)``, ``\[…\]`` and ``\begin{…}…\end{…}``
  written inside it (markdown-it reads ``\[`` as an escaped bracket), into prose
  and maths segments;
- a ``$$`` block or an amsmath environment: one maths segment;
- a table: its cells, row by row (:attr:`Segment.table`);
- a fenced block: Python code (with the plain blocks right after it, what it
  printed) goes to the code's translation as a :class:`~symtf.draft.read.blocks.Block`;
  any other fenced or indented block is read as prose lines.

Every segment is a :class:`~symtf.draft.read.source.Text`, so each number read
in it has its line and column in the file.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

from symtf.draft.read.items import DECIMAL_COMMA, Segment
from symtf.draft.read.source import LineIndex, Text

__all__ = ["PLAIN", "PYTHON", "SHELL", "Fence", "MarkdownRead", "read_markdown"]

#: Fence languages read as Python code, and those read as what a block printed.
PYTHON = ("python", "py", "python3", "ipython", "pycon")
PLAIN = ("", "text", "output", "console", "plaintext", "txt")
#: Fence languages of a terminal: right after a Python fence, what it printed (unless the
#: fence holds a command, ``$ python train.py``: see symtf.draft.read.blocks).
SHELL = ("shell", "sh", "bash", "zsh", "shell-session", "terminal")

#: Maths written inside a paragraph that markdown-it does not see as maths.
_INLINE_MATHS = re.compile(
    r"\\\[(?P<br>.+?)\\\]|\\\((?P<pa>.+?)\\\)"
    r"|\\begin\{(?P<env>equation\*?|align\*?|aligned|gather\*?|displaymath|math|bmatrix|pmatrix)\}"
    r"(?P<body>.+?)\\end\{(?P=env)\}",
    re.S,
)
#: Environments whose whole text (``\begin{align}`` included) is the segment: their rows
#: are split by the maths reader.
_WHOLE_ENVIRONMENTS = re.compile(r"^\\begin\{(?!equation|displaymath|math\b)")
_ENVIRONMENT_BODY = re.compile(r"^\\begin\{(\w+\*?)\}(.*)\\end\{\1\}\s*$", re.S)
_CR_BEFORE_LF = re.compile(r"\r(?=\n)")


@functools.lru_cache(maxsize=2)
def _parser(indented_code: bool = True) -> Any:
    """markdown-it with the maths and table plugins. ``indented_code=False`` for plain text
    (a ``.txt`` article, or Markdown kept in a program's strings, indented with the code):
    there an indented line is prose, not a code block."""
    from markdown_it import MarkdownIt
    from mdit_py_plugins.amsmath import amsmath_plugin
    from mdit_py_plugins.dollarmath import dollarmath_plugin

    md = MarkdownIt("commonmark", {"html": True}).enable("table")
    md.use(dollarmath_plugin, double_inline=True).use(amsmath_plugin)
    if not indented_code:
        md.disable("code")
    return md


@dataclass(frozen=True)
class Fence:
    """A fenced block: its language, its body with places, and its fence lines (1-based)."""

    info: str
    body: Text
    open_line: int
    close_line: int


@dataclass
class MarkdownRead:
    """A Markdown text read: its segments, in order, and its fenced blocks."""

    segments: list[Segment] = field(default_factory=list)
    fences: list[Fence] = field(default_factory=list)


class _Reader:
    def __init__(self, text: Text, cell: int | None, skip: dict[int, int]) -> None:
        self.text = text
        self.src = text.text
        self.lines = LineIndex(self.src)
        self.cell = cell
        #: Opening lines (1-based) of fenced code the translation reads → how much of the
        #: body it reads (a block fenced as Python may end in prose: its data, then a table)
        self.skip = skip
        self.heading = ""
        self.out = MarkdownRead()

    # -- places
    def line_text(self, k: int) -> tuple[int, str]:
        """The start offset and text (no line break) of 0-based line ``k``."""
        a = self.lines.start(k + 1)
        b = self.lines.start(k + 2)
        return a, self.src[a:b].rstrip("\r\n")

    def lines_text(self, content: str, first: int) -> Text:
        """``content`` (a token's lines, markers and indentation removed) mapped onto the
        source lines from 0-based ``first``: each content line is the end of its line."""
        out = Text.synthetic("", self.text.frame)
        for i, piece in enumerate(content.split("\n")):
            a, line = self.line_text(first + i)
            body, written = piece.rstrip(), line.rstrip()
            if written.endswith(body):
                at = len(written) - len(body)
            else:  # not where the parser said: the first place the words stand
                found = line.find(body.strip()) if body.strip() else -1
                at = max(found - (len(body) - len(body.lstrip())), 0) if found >= 0 else 0
            if i:
                out = out + self.text[a - 1 : a]  # the line break before it
            out = out + self.text[a + at : a + min(at + len(piece), len(line))]
        return out

    def segment(self, text: Text, math: bool) -> Segment:
        return Segment(text, _line(text), math, self.cell, self.heading if math else "")

    # -- tokens
    def run(self, tokens: Sequence[Any]) -> MarkdownRead:
        k = 0
        while k < len(tokens):
            t = tokens[k]
            if t.type in ("paragraph_open", "heading_open") and k + 1 < len(tokens):
                inline = tokens[k + 1]
                if t.map is not None and inline.type == "inline":
                    if t.type == "heading_open":
                        self.heading = inline.content.strip()
                    self.inline(inline, t.map[0], heading=t.type == "heading_open")
                k += 2
                continue
            if t.type == "table_open":
                k = self.table(tokens, k)
                continue
            if t.type in ("math_block", "math_block_label", "amsmath") and t.map is not None:
                self.maths_block(t)
            elif t.type == "code_block" and t.map is not None and _written_maths(t.content):
                self.indented_prose(t.content, t.map[0])
            elif t.type in ("fence", "code_block") and t.map is not None:
                self.fence(t)
            elif t.type == "html_block" and t.map is not None:
                self.prose_block(t.content, t.map[0])
            k += 1
        return self.out

    def inline(self, inline: Any, first: int, *, heading: bool) -> None:
        content = inline.content
        if heading and "$" not in content and "\\" not in content and "`" not in content:
            a, line = self.line_text(first)  # the heading line as written ("## Step 2: 0.5")
            number = _SECTION_NUMBER.match(line)
            cut = number.end() if number else 0
            self.out.segments.append(self.segment(self.text[a + cut : a + len(line)], False))
            return
        text = self.lines_text(content, first)
        number = _SECTION_NUMBER.match(text.text) if heading else None
        if number is not None:
            text = text[number.end() :]
        at = 0
        chain: Text | None = None  # a statement in code, continued on the lines below it
        for a, b, c, d, maths in self.spans(inline, text.text):
            between = text.text[at:a]
            if between.strip():
                self.out.segments.append(self.segment(text[at:a], False))
            if maths:
                self.out.segments.append(self.segment(_maths_body(text, c, d), True))
            elif text.text[c:d].strip():  # `e^0.577 = 1.78`: a statement of its own
                body = text[c:d]
                link = _continued(chain, body.text) if between.count("\n") == 1 else None
                if chain is not None and link is not None and not between.strip():
                    chain = Text.join(" ", [chain, body[link:].strip()], text.frame)
                    self.out.segments[-1] = self.segment(chain, False)
                else:
                    self.out.segments.append(self.segment(body, False))
                    chain = body
                at = b
                continue
            chain = None
            at = b
        if text.text[at:].strip():
            self.out.segments.append(self.segment(text[at:], False))

    def spans(self, inline: Any, raw: str) -> list[tuple[int, int, int, int, bool]]:
        """The maths and code spans of a paragraph, in order: (start, end, body start,
        body end, whether maths) in its raw text."""
        found: list[tuple[int, int, int, int, bool]] = []
        cursor = 0
        for child in inline.children or []:
            if child.type in ("math_inline", "math_inline_double"):
                written = child.markup + child.content + child.markup
                at = raw.find(written, cursor)
                if at >= 0:
                    n = len(child.markup)
                    found.append((at, at + len(written), at + n, at + len(written) - n, True))
                    cursor = at + len(written)
            elif child.type == "code_inline" and child.content:
                at = raw.find(child.content, cursor)
                if at >= 0:
                    n = len(child.markup)
                    a, b = max(at - n, 0), min(at + len(child.content) + n, len(raw))
                    found.append((a, b, at, at + len(child.content), False))
                    cursor = at + len(child.content)
        out: list[tuple[int, int, int, int, bool]] = []
        at = 0
        for span in [*found, (len(raw), len(raw), len(raw), len(raw), True)]:
            for m in _INLINE_MATHS.finditer(raw, at, span[0]):
                group = next(g for g in ("br", "pa", "body") if m.group(g) is not None)
                if group == "body" and _WHOLE_ENVIRONMENTS.match(m.group()):
                    out.append((m.start(), m.end(), m.start(), m.end(), True))
                else:
                    out.append((m.start(), m.end(), m.start(group), m.end(group), True))
            if span[0] < len(raw):
                out.append(span)
            at = span[1]
        return out

    def maths_block(self, t: Any) -> None:
        a = self.lines.start(t.map[0] + 1)
        end = t.map[1]
        if t.type == "amsmath":  # the plugin's map ends a line early: the block is its content
            end = max(end, t.map[0] + t.content.count("\n") + 1)
        b = self.lines.start(end + 1)
        # the parser's content has LF line ends; a CRLF file's block is read without its
        # CRs (each kept character keeps its place)
        whole = self.text[a:b].sub(_CR_BEFORE_LF, "") if "\r" in self.src[a:b] else self.text[a:b]
        block = whole.text
        content = t.content
        at = block.find(content) if content else -1
        if at < 0:
            at = block.find(content.strip())
            content = content.strip()
        if at < 0:  # not where the parser said: read the block's lines as they are
            self.out.segments.append(self.segment(self.text[a:b], True))
            return
        body = whole[at : at + len(content)]
        if t.type == "amsmath":
            m = _ENVIRONMENT_BODY.match(content)
            if m is not None and not _WHOLE_ENVIRONMENTS.match(content):
                body = body[m.start(2) : m.end(2)]
        # "$$1/2 = 0.5$$ and $$\sqrt{2} \approx 1.414$$" on one line is one block to the
        # plugin: its "$$" inside part displays from the words between them
        start = 0
        for k, piece in enumerate(content.split("$$") if t.type != "amsmath" else [content]):
            part = body[start : start + len(piece)] if t.type != "amsmath" else body
            start += len(piece) + 2
            if not part.text.strip():
                continue
            seg = self.segment(part.sub(DECIMAL_COMMA, "."), k % 2 == 0)
            if k == 0:
                seg.line = _line(self.text[a : a + 1])  # a display is read at its opening line
            self.out.segments.append(seg)

    def table(self, tokens: Sequence[Any], k: int) -> int:
        """A table's cells, row by row, as one segment; returns the token after it."""
        rows: list[list[Text]] = []
        first = tokens[k].map[0] if tokens[k].map else 0
        row: list[Text] | None = None
        cursor = 0
        line_at = 0
        line = ""
        while k < len(tokens) and tokens[k].type != "table_close":
            t = tokens[k]
            if t.type == "tr_open":
                row = []
                rows.append(row)
                if t.map is not None:
                    line_at, line = self.line_text(t.map[0])
                cursor = 0
            elif t.type == "inline" and row is not None:
                content = t.content
                bar = line.find("|", cursor) if cursor or line.lstrip().startswith("|") else -1
                start = bar + 1 if bar >= 0 else cursor
                at = line.find(content, start) if content else -1
                if at < 0:
                    at = start
                row.append(self.text[line_at + at : line_at + at + len(content)])
                cursor = at + len(content)
            k += 1
        if rows:
            frame = self.text.frame
            text = Text.join("\n", [Text.join(" | ", r, frame) for r in rows], frame)
            seg = self.segment(text, False)
            seg.table = rows
            a = self.lines.start(first + 1)
            seg.line = _line(self.text[a : a + 1])
            self.out.segments.append(seg)
        return k + 1

    def fence(self, t: Any) -> None:
        fence = reader_fence(self, t)
        self.out.fences.append(fence)
        body = fence.body[self.skip.get(fence.open_line, 0) :]
        if body.text.strip():
            self.out.segments.append(self.segment(body, False))

    def indented_prose(self, content: str, first: int) -> None:
        """An indented block that writes LaTeX maths (``\\(e^{3.2}\\) \\approx 24.53``) is
        Markdown indented under a list item, not code: a program does not write maths
        delimiters. It is read as Markdown, its own indentation not taken for code."""
        text = self.lines_text(content.rstrip("\n"), first)
        inner = _Reader(text, self.cell, {})
        inner.heading = self.heading
        read = inner.run(_parser(False).parse(text.text))
        self.out.segments.extend(read.segments)
        self.heading = inner.heading

    def prose_block(self, content: str, first: int) -> None:
        if content.strip():
            text = self.lines_text(content.rstrip("\n"), first)
            self.out.segments.append(self.segment(text, False))


#: The left side of a statement in code: ``z1 =`` (not ``==``).
_LEFT_SIDE = re.compile(r"\s*([A-Za-z_]\w*)\s*=(?!=)")
#: A binary operator between two operands (``] +``, ``0.39 *``), not a sign (``[-0.5``).
_OPERATOR = re.compile(r"[\w)\]]\s*[-+*/×·]\s*[\w(\[.]")


def _continued(chain: Text | None, body: str) -> int | None:
    """Where the value a code span writes continues the chain of the span on the line above
    (the offset of its ``=``), or ``None``.

    Worked arithmetic often restates its left side on each line, one code span a line::

        `z1 = [0, 0.39, 0.39] + [0.39, 0, 0.39]`
        `z1 = [0 + 0.39, 0.39 + 0]`
        `z1 = [0.39, 0.39]`

    which is the one chain ``z1 = … = … = …``. A line restating the same name continues
    the chain only while every link so far is an expression still to be worked out (one
    ``=``, an operator on its right): ``w = 0.5`` then ``w = 0.45`` are two values (an
    update), never one chain.
    """
    if chain is None:
        return None
    first, this = _LEFT_SIDE.match(chain.text), _LEFT_SIDE.match(body)
    if first is None or this is None or first.group(1) != this.group(1):
        return None
    links = chain.text[first.end() :].split("=")
    if not all(_OPERATOR.search(link) for link in links):
        return None
    return this.end() - 1


#: A heading's section number, ``### 2.1 Parameter Breakdown``, ``## 3. Results``: it
#: numbers the section (a dotted number, not opening with 0, before a capitalised word), it is no value.
_SECTION_NUMBER = re.compile(r"^\s*#*\s*[1-9]\d*\.(?:\d+\.?)*\s+(?=[A-Z])")

#: Inline maths delimiters, ``\\(…\\)`` on one line: no program writes them.
_DELIMITED_MATHS = re.compile(r"\\\((?=[^\n]*?\\\))")


def _written_maths(content: str) -> bool:
    """Whether an indented block writes inline LaTeX maths, ``\\(…\\)``, on one of its
    lines outside a string a program would write (a block whose every such line is
    Markdown: a list item or words, not an assignment or a call)."""
    return any(
        _DELIMITED_MATHS.search(line) and not _CODE_LINE.match(line)
        for line in content.splitlines()
    )


#: A line of code: an assignment, a call or a keyword statement.
_CODE_LINE = re.compile(r"\s*(?:[A-Za-z_][\w.]*\s*(?:=[^=]|\()|(?:def|return|import|print)\b)")


def _line(text: Text) -> int:
    """The line a text starts on (in the cell, for a notebook)."""
    p = text.place(0, 1)
    if p.cell is not None and p.cell_line is not None:
        return p.cell_line
    return p.line


def _maths_body(text: Text, a: int, b: int) -> Text:
    """A maths span's body, with a decimal comma ``0{,}5`` read as 0.5."""
    return text[a:b].sub(DECIMAL_COMMA, ".")


def read_markdown(
    text: Text,
    *,
    cell: int | None = None,
    skip: Callable[[list[Fence]], dict[int, int]] | None = None,
    plain: bool = False,
) -> MarkdownRead:
    """A Markdown (or plain) text's segments and fenced blocks.

    ``skip``: given the fenced blocks, the opening lines (1-based) of those the code's
    translation reads (Python and what it printed), each with how much of its body it
    reads; that much is left out of the prose, the rest is read as prose. ``plain``:
    the text is not Markdown (an indented line is not code).
    """
    tokens = _parser(not plain).parse(text.text)
    fences = [
        t
        for t in tokens
        if t.map is not None
        and (t.type == "fence" or (t.type == "code_block" and not _written_maths(t.content)))
    ]
    reader = _Reader(text, cell, {})
    if skip is not None and fences:
        reader.skip = skip([reader_fence(reader, t) for t in fences])
    return reader.run(tokens)


def reader_fence(reader: _Reader, t: Any) -> Fence:
    """A fence token as a :class:`Fence` (for choosing what the code translation reads).

    An indented code block (``code_block``: what a notebook exported to Markdown prints
    under its code, indented four spaces) is a plain fence with no fence lines: its
    ``open_line`` is the line above its first, as a fence's opening line is.
    """
    first, end = t.map
    if t.type == "code_block":
        first -= 1  # no opening fence: the body starts on the token's first line
        end = max(end, first + 1)
    content = t.content.rstrip("\n")
    body = (
        reader.lines_text(content, first + 1) if content else Text.synthetic("", reader.text.frame)
    )
    info = (t.info or "").strip().split()
    return Fence(info[0].lower() if info else "", body, first + 1, end)
