"""Code the article shows: a notebook's code cells, or a Markdown article's Python fences,
each with what it printed. The code's translation (:mod:`symtf.draft.code`) reads them.

A fenced ```` ```python ```` block that parses as Python (read with :mod:`ast`,
never run) is code; the plain fenced blocks right after it (``Output:`` or a
blank line between them, or a heading that says so) are what it printed. A block fenced as
Python that does not parse (hand-worked arithmetic fenced for its colours) is
prose. A space pasted from a web page (a no-break space, ``U+00A0``, or another Unicode
space) is a space to Python's reader of the code (:func:`as_code`): Python itself refuses it, a
reader of the post does not. A setup line that states what a size formula comes to
(``head_dim = d_out // num_heads = 4``) is read as the formula
(:func:`without_stated_sizes`). Every line of code and output keeps its file line.
"""

from __future__ import annotations

import ast
import dataclasses
import re
from dataclasses import dataclass

from symtf.draft.read.markdown import PLAIN, PYTHON, SHELL, Fence
from symtf.draft.read.notebook import Cell
from symtf.draft.read.source import Text

__all__ = [
    "Block",
    "Output",
    "as_code",
    "code_fences",
    "code_prefix",
    "fenced_blocks",
    "next_to",
    "notebook_blocks",
    "printed_fence",
    "without_stated_sizes",
]


#: Unicode spaces that pages paste into code (a no-break space above all): each is one
#: character, as the ASCII space that stands for it, so every place stays where it was.
_SPACES = dict.fromkeys(
    map(
        ord,
        "\u00a0\u1680\u2000\u2001\u2002\u2003\u2004\u2005\u2006\u2007\u2008\u2009"
        "\u200a\u202f\u205f\u3000",
    ),
    " ",
)


def as_code(text: Text) -> Text:
    """Code as Python reads it: each Unicode space (``U+00A0`` pasted from a web page) an
    ASCII space, character for character (its places are the same)."""
    plain = text.text.translate(_SPACES)
    return text if plain == text.text else dataclasses.replace(text, text=plain)


@dataclass(frozen=True)
class Output:
    """What a cell printed: its text and the file line of each of its lines.

    ``source`` is the text with the place of each character (``None`` when not known).
    """

    text: str
    lines: tuple[int, ...]
    kind: str  # "stream" or "result"
    source: Text | None = None


@dataclass(frozen=True)
class Block:
    """One code cell or fenced Python block, with what it printed.

    ``source`` is its text with the place of each character (``None`` when not known).
    """

    cell: int | None
    text: str
    first_line: int  # the file line of its first line
    outputs: tuple[Output, ...] = ()
    lines: tuple[int, ...] = ()  # the file line of each of its lines, where known
    source: Text | None = None
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


_MAGIC = re.compile(r"^\s*[%!].*$", re.M)

#: ``head_dim = d_out // num_heads = 4``: a size defined by whole-number arithmetic on
#: other names, followed by the whole number it comes to (not Python as written).
_STATED_SIZE = re.compile(
    r"^(?P<lhs>[ \t]*[A-Za-z_]\w*[ \t]*=[ \t]*)"
    r"(?P<formula>(?=[^=#\n]*[A-Za-z_])(?=[^=#\n]*[-+*/%])[\w \t()+\-*/%]+?)"
    r"(?P<stated>[ \t]*=[ \t]*\d+)(?P<rest>[ \t]*(?:#.*)?)$",
    re.M,
)


def without_stated_sizes(body: str) -> str:
    """``n = a // b = 4`` read as ``n = a // b``: the stated result blanked, places kept.

    Configuration blocks write a derived size together with its value; Python refuses
    the second ``=``, and the formula is what the code means. Only whole-number arithmetic
    over names qualifies (no decimals, no comparison), so a fenced line of hand-worked
    decimals (``mean = (0.1 + 0.3) / 2 = 0.2``) stays prose.
    """

    def blank(m: re.Match[str]) -> str:
        if "." in m["formula"] or re.fullmatch(r"\s*[A-Za-z_]\w*\s*", m["formula"]):
            return m[0]
        return m["lhs"] + m["formula"] + " " * len(m["stated"]) + m["rest"]

    return _STATED_SIZE.sub(blank, body)


def parses(body: str) -> bool:
    """Whether a block fenced as Python is Python (parsed with ``ast``, never run).

    Posts often fence hand-worked arithmetic as ``python`` for its colours
    (``mean = (0.1 + 0.3) / 2`` then ``     = 0.2`` on the next line, ``√0.1325``):
    such a block is not code, and the prose reader reads its numbers instead.
    IPython's ``%magic`` and ``!shell`` lines are blanked first.
    """
    try:
        ast.parse(without_stated_sizes(_MAGIC.sub("", body)))
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return False  # too deep for the parser: not read as code either
    return True


#: A heading that names what the code above it printed (``### Expected Output``): the
#: plain block under it is that output, not another part of the article.
_OUTPUT_HEADING = re.compile(
    r"#{1,6}\s*[*_]*\s*(?:(?:expected|sample|example|console|program)\s+)?outputs?"
    r"\s*:?\s*[*_]*\s*#*",
    re.IGNORECASE,
)


def next_to(between: list[str]) -> bool:
    """Whether a plain block follows the one before it closely enough to be its output.

    ``Output:``, a heading that says so (``### Expected Output``) or a blank line may
    come between a code block and what it printed; another heading, a rule (``---``) or
    a paragraph starts another part of the article, whose plain blocks (hand arithmetic,
    a diagram) are prose.
    """
    words = [ln.strip() for ln in between if ln.strip()]
    return len(words) <= 1 and not any(
        (w.startswith("#") and not _OUTPUT_HEADING.fullmatch(w))
        or re.fullmatch(r"[-*_=\s]{3,}", w)
        or len(w) > 60
        for w in words
    )


def _defines_data(head: str) -> bool:
    """Whether code assigns an array written out (``x = [[0.1, 0.3], …]``,
    ``x = np.array([…])``): the data a post defines before it prints what it made of it."""
    try:
        tree = ast.parse(_MAGIC.sub("", head))
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return False
    for node in tree.body:
        if isinstance(node, ast.Assign):
            v = node.value
            if isinstance(v, ast.Call) and v.args:
                v = v.args[0]
            if isinstance(v, (ast.List, ast.Tuple)) and v.elts:
                return True
    return False


def code_prefix(body: str) -> int | None:
    """Where the code of a block fenced as Python ends, when the block is not Python as a
    whole but its leading paragraphs are, and they define data.

    A post may fence its data and, after a blank line, a table of what it made of it
    (``"Hello": mean=0.25, std=0.364``) as one ``python`` block: the data is code, the
    table prose. Returns the offset where the prose begins (after the last blank line
    whose paragraphs before it parse), or None. Hand arithmetic fenced as ``python``
    (``mean = (0.1 + 0.3) / 2`` then ``     = 0.2``) has no such paragraph, and a
    paragraph of plain numbers (``variance = 0.1325``) defines no data: both stay prose.
    """
    lines = body.split("\n")
    best = None
    at = 0
    for i, line in enumerate(lines):
        if i and not line.strip() and lines[i - 1].strip():
            head = "\n".join(lines[:i])
            if parses(head) and _defines_data(head) and "\n".join(lines[i:]).strip():
                best = at
        at += len(line) + 1
    return best


#: The first line of a terminal fence that is a command, not what a program printed.
_COMMAND = re.compile(
    r"^\s*(?:[$%>]|\w+@[\w.-]+:|(?:python3?|pip3?|conda|uv|git|cd|ls|cat|echo|export|curl|wget|"
    r"mkdir|source|sudo|docker|jupyter|pytest|torchrun|accelerate)\b)"
)


def printed_fence(fence: Fence) -> bool:
    """Whether a fence right after a Python fence can be what it printed: a plain fence,
    or a terminal's (```` ```shell ````, ```` ```sh ````, …) whose first line is not a
    command (``$ python train.py``, ``pip install …``)."""
    if fence.info in PLAIN:
        return True
    if fence.info not in SHELL:
        return False
    first = next((ln for ln in fence.body.text.split("\n") if ln.strip()), "")
    return not _COMMAND.match(first)


def code_fences(fences: list[Fence], lines: list[str]) -> list[tuple[Fence, list[Fence]]]:
    """Each fenced Python block that parses, with the plain blocks right after it; a block
    whose leading paragraphs only are Python (:func:`code_prefix`) gives those, with no
    output (the rest of it is prose)."""
    out: list[tuple[Fence, list[Fence]]] = []
    for i, block in enumerate(fences):
        if block.info not in PYTHON:
            continue
        block = dataclasses.replace(block, body=as_code(block.body))
        if not parses(block.body.text):
            cut = code_prefix(block.body.text)
            if cut is not None:
                head = block.body[:cut]
                end = block.open_line + head.text.rstrip("\n").count("\n") + 1
                out.append((Fence(block.info, head, block.open_line, end), []))
            continue
        outputs: list[Fence] = []
        end = block.close_line
        for later in fences[i + 1 :]:
            if not printed_fence(later) or not next_to(lines[end : later.open_line - 1]):
                break
            outputs.append(later)
            end = later.close_line
        out.append((block, outputs))
    return out


def fenced_blocks(code: list[tuple[Fence, list[Fence]]]) -> list[Block]:
    """The code fences of a Markdown article as blocks, each with the plain fences after it."""
    out = []
    for block, outputs in code:
        printed = tuple(
            Output(
                o.body.text + "\n",
                tuple(range(o.open_line + 1, o.open_line + 1 + len(o.body.text.split("\n")))),
                "stream",
                o.body,
            )
            for o in outputs
        )
        out.append(
            Block(None, block.body.text + "\n", block.open_line + 1, printed, source=block.body)
        )
    return out


def _line_starts(text: Text) -> tuple[int, ...]:
    """The file line of each line of a text (0 where it has no place)."""
    out = []
    at = 0
    for piece in text.text.splitlines(keepends=True):
        p = text.place(at, at + 1)
        out.append(p.line if p.column is not None else 0)
        at += len(piece)
    return tuple(out)


def notebook_blocks(cells: list[Cell]) -> list[Block]:
    """The code cells of a notebook as blocks, each with its printed outputs."""
    out = []
    for c in cells:
        if c.kind != "code":
            continue
        source = as_code(c.source)
        lines = _line_starts(source)
        outputs = tuple(
            Output(o.text.text, _line_starts(o.text), o.kind, o.text) for o in c.outputs
        )
        first = next((n for n in lines if n), 0)
        out.append(Block(c.index, source.text, first, outputs, lines, source))
    return out
