r"""Programs read as articles: a Python file (a marimo notebook, or a script) and the comments
of a C-family source file.

A worked example is often written inside a program rather than beside it:

- a **marimo notebook** is a Python file whose cells are functions decorated with
  ``@app.cell``; its Markdown cells are ``mo.md(r"…")`` calls (triple-quoted, as a rule), its code cells the
  functions' bodies (marimo keeps no printed outputs in the file);
- a **Python script** shows its working in its docstrings, its bare string statements and
  its comments;
- a **C, C++, CUDA, Rust, Go, Java or JavaScript file** writes the hand calculation in its
  comments (``/* 1.26 / 3 => 0.42 */``).

The Python file is parsed with :mod:`ast` (never run). Its Markdown strings are read as
Markdown (:mod:`symtf.draft.read.markdown`, without indented code blocks), after the
indentation the code gave them is taken off; its code becomes
:class:`~symtf.draft.read.blocks.Block`\ s for the code's translation, whose comments that
translation reads. A C-family file is cut into its comments by a small lexer that steps
over string and character literals; each comment is read as plain text. Only strings
whose characters stand in the file as written (raw strings, or strings without
backslashes) are read, so every number keeps its line and column in the file.
"""

from __future__ import annotations

import ast
import re
from dataclasses import dataclass, field
from pathlib import Path

from symtf.draft.read.blocks import Block, as_code
from symtf.draft.read.items import Segment
from symtf.draft.read.markdown import read_markdown
from symtf.draft.read.source import Text
from symtf.files import C_SUFFIXES, PYTHON_SUFFIXES

__all__ = ["Program", "c_comments", "program_kind", "read_program"]

_STRING_START = re.compile(r"([rRbBuUfF]{0,2})('''|\"\"\"|'|\")")
_INDENT = re.compile(r"[ \t]*")


def program_kind(path: str | Path) -> str | None:
    """``py`` or ``c`` for a program's file name (``None`` for anything else)."""
    suffix = Path(path).suffix.lower()
    if suffix in PYTHON_SUFFIXES:
        return "py"
    return "c" if suffix in C_SUFFIXES else None


@dataclass
class Program:
    """A program read: its prose and Markdown segments in order, and its code blocks."""

    segments: list[Segment] = field(default_factory=list)
    blocks: list[Block] = field(default_factory=list)


def read_program(whole: Text, kind: str, *, code: bool) -> Program:
    """A program's segments (``kind``: ``py`` or ``c``) and, with ``code``, its code blocks.

    A Python file that does not parse is read for its comments, as a C-family file is.
    """
    if kind == "py":
        whole = as_code(whole)
        try:
            tree = ast.parse(whole.text)
        except (SyntaxError, ValueError, RecursionError, MemoryError):
            tree = None
        if tree is not None:
            return _python(whole, tree, code=code)
    out = Program()
    for comment in c_comments(whole, hash_comments=kind == "py"):
        out.segments.append(comment_segment(comment))
    return out


def comment_segment(comment: Text) -> Segment:
    """A comment as one plain-text segment: its lines, blank ones included, read together,
    so that a calculation broken over a blank line is read whole."""
    p = comment.place(0, 1)
    return Segment(comment, p.line, False, None)


# -- Python


class _Places:
    """Offsets in the file of :mod:`ast`'s positions (lines from 1, columns in UTF-8 bytes)."""

    def __init__(self, text: str) -> None:
        self.lines = text.split("\n")
        self.starts = [0]
        for line in self.lines:
            self.starts.append(self.starts[-1] + len(line) + 1)

    def offset(self, line: int, col: int) -> int:
        row = self.lines[line - 1] if 0 < line <= len(self.lines) else ""
        chars = len(row.encode("utf-8")[:col].decode("utf-8", "replace"))
        return self.starts[min(max(line, 1), len(self.starts)) - 1] + chars


def _python(whole: Text, tree: ast.Module, *, code: bool) -> Program:
    places = _Places(whole.text)
    out = Program()
    cells = [s for s in tree.body if isinstance(s, ast.FunctionDef) and _is_cell(s)]
    if cells:  # a marimo notebook: each cell its Markdown, or its code
        for cell in cells:
            body = [s for s in cell.body if not isinstance(s, ast.Return)]
            shown = [s for s in body if _markdown_string(s) is not None]
            for s in shown:
                _markdown(whole, places, s, out)
            rest = [s for s in body if s not in shown]
            if code and rest:
                out.blocks.append(_block(whole, places, rest))
        return out
    for s in tree.body:  # a script: its docstring and bare strings, then its code
        _markdown(whole, places, s, out)
    if code and tree.body:
        out.blocks.append(_block(whole, places, tree.body))
    return out


def _is_cell(f: ast.FunctionDef) -> bool:
    """Whether a function is a marimo cell (``@app.cell`` or ``@app.cell(hide_code=True)``)."""
    for d in f.decorator_list:
        target = d.func if isinstance(d, ast.Call) else d
        if isinstance(target, ast.Attribute) and target.attr == "cell":
            return True
    return False


def _markdown_string(s: ast.stmt) -> ast.Constant | None:
    """The string of a statement that shows Markdown: ``mo.md("…")`` or a bare string."""
    if not isinstance(s, ast.Expr):
        return None
    value = s.value
    if isinstance(value, ast.Call) and len(value.args) == 1 and not value.keywords:
        f = value.func
        if isinstance(f, ast.Attribute) and f.attr == "md":
            value = value.args[0]
    if isinstance(value, ast.Constant) and isinstance(value.value, str):
        return value
    return None


def _markdown(whole: Text, places: _Places, s: ast.stmt, out: Program) -> None:
    """Read a statement's Markdown string, where its characters stand in the file as written."""
    node = _markdown_string(s)
    if node is None or node.end_lineno is None or node.end_col_offset is None:
        return
    a = places.offset(node.lineno, node.col_offset)
    b = places.offset(node.end_lineno, node.end_col_offset)
    written = whole.text[a:b]
    m = _STRING_START.match(written)
    if m is None or not written.endswith(m.group(2)) or len(written) < len(m.group()) + 3:
        return  # implicitly joined strings, or not where ast said: not read
    start, end = a + m.end(), b - len(m.group(2))
    body = whole[start:end]
    if body.text != node.value:
        return  # escapes: the characters do not stand as written
    out.segments.extend(read_markdown(_dedent(body), plain=True).segments)


def _dedent(text: Text) -> Text:
    """A text without the indentation its lines share (blank lines aside), places kept."""
    lines = text.text.split("\n")
    widths = [len(_INDENT.match(ln).group()) for ln in lines if ln.strip()]  # type: ignore[union-attr]
    cut = min(widths) if widths else 0
    out = text[0:0]
    at = 0
    for k, line in enumerate(lines):
        if k:
            out = out + text[at - 1 : at]  # the line break
        lead = min(cut, len(line) - len(line.lstrip(" \t")))
        out = out + text[at + lead : at + len(line)]
        at += len(line) + 1
    return out


def _block(whole: Text, places: _Places, body: list[ast.stmt]) -> Block:
    """Statements as a block of code: their whole lines, the indentation they share taken off."""
    first = min([body[0].lineno, *(d.lineno for d in getattr(body[0], "decorator_list", []))])
    last = max(s.end_lineno or s.lineno for s in body)
    a = places.offset(first, 0)
    b = places.offset(last, len(places.lines[last - 1].encode("utf-8")))
    source = _dedent(whole[a:b])
    lines = tuple(range(first, last + 1))
    return Block(None, source.text + "\n", first, (), lines, source)


# -- C-family comments


def c_comments(whole: Text, *, hash_comments: bool = False) -> list[Text]:
    """The comments of a C-family source, each a text with its places: a ``/* … */`` body
    with the ``*`` that starts its lines taken off, or a run of ``//`` lines (``#`` lines
    with ``hash_comments``). String and character literals are stepped over."""
    src = whole.text
    out: list[Text] = []
    run: list[Text] = []  # consecutive line comments
    run_end = -1
    i, n = 0, len(src)
    while i < n:
        c = src[i]
        if c in "\"'":
            i = _literal_end(src, i)
            continue
        line_comment = src.startswith("//", i) or (hash_comments and c == "#")
        if line_comment:
            j = src.find("\n", i)
            j = n if j < 0 else j
            body = whole[i + (1 if c == "#" else 2) : j]
            before = src[src.rfind("\n", 0, i) + 1 : i]
            if run and (before.strip() or src[run_end:i].count("\n") > 1):
                out.append(_joined(run))
                run = []
            run.append(body)
            run_end = j
            i = j
            continue
        if src.startswith("/*", i):
            j = src.find("*/", i + 2)
            j = n if j < 0 else j
            out.append(_starred(whole[i + 2 : j]))
            i = j + 2
            continue
        if run and c == "\n" and src[run_end:i].count("\n") > 1:
            out.append(_joined(run))
            run = []
        i += 1
    if run:
        out.append(_joined(run))
    return [t for t in out if t.text.strip()]


def _literal_end(src: str, i: int) -> int:
    """The offset past a string or character literal starting at ``i`` (its line's end at most)."""
    quote = src[i]
    j = i + 1
    while j < len(src) and src[j] != "\n":
        if src[j] == "\\":
            j += 2
            continue
        if src[j] == quote:
            return j + 1
        j += 1
    return j


def _joined(run: list[Text]) -> Text:
    """Consecutive line comments as one text, a line break between them."""
    out = run[0]
    for t in run[1:]:
        out = out + "\n" + t
    return _dedent(out)


def _starred(body: Text) -> Text:
    """A block comment's body without the `` * `` its lines may start with, then dedented."""
    lines = body.text.split("\n")
    starred = len(lines) > 1 and all(ln.lstrip().startswith("*") for ln in lines[1:] if ln.strip())
    if not starred:
        return _dedent(body)
    out = body[0:0]
    at = 0
    for k, line in enumerate(lines):
        if k:
            out = out + body[at - 1 : at]
        lead = len(line) - len(line.lstrip())
        if k and line.lstrip().startswith("*"):
            lead += 1
        out = out + body[at + lead : at + len(line)]
        at += len(line) + 1
    return _dedent(out)
