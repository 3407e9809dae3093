r"""LaTeX articles read with pylatexenc's walker: maths, prose and section headings.

:class:`pylatexenc.latexwalker.LatexWalker` (tolerant parsing, nothing expanded
or run) gives the document's nodes with their offsets. Maths nodes (``$…$``,
``\[…\]``, ``$$…$$``) and maths environments (``equation``, ``align``,
``bmatrix``, …) become maths segments; comments are left out; the text between
them is prose; ``\section{…}`` and its kin are the headings maths is labelled
by. Every segment keeps the place of each character.
"""

from __future__ import annotations

from typing import Any

from symtf.draft.read.items import DECIMAL_COMMA, Segment
from symtf.draft.read.source import LineIndex, Text

__all__ = ["latex_segments"]

#: Environments that are maths; those of the second kind keep their ``\begin…\end`` (the
#: maths reader splits their rows, or reads them as a matrix).
_BODY_ONLY = {"equation", "equation*", "displaymath", "math"}
_WHOLE = {
    "align", "align*", "aligned", "alignat", "alignat*", "gather", "gather*", "gathered",
    "multline", "multline*", "eqnarray", "eqnarray*", "flalign", "flalign*", "split",
    "bmatrix", "pmatrix", "matrix", "vmatrix", "Bmatrix", "Vmatrix", "array",
}  # fmt: skip
_HEADINGS = {"section", "subsection", "subsubsection", "paragraph", "title", "chapter"}


class _Walk:
    def __init__(self, raw: str) -> None:
        self.raw = raw
        #: (start, end, body start, body end) of each maths span; comments have no body.
        self.spans: list[tuple[int, int, int, int]] = []
        self.comments: list[tuple[int, int]] = []
        self.headings: list[tuple[int, str]] = []

    def nodes(self, nodes: Any) -> None:
        for n in nodes or []:
            self.node(n)

    def node(self, n: Any) -> None:
        kind = type(n).__name__
        start, end = n.pos, n.pos + n.len
        if kind == "LatexMathNode":
            left, right = (len(d) for d in (n.delimiters or ("", "")))
            self.spans.append((start, end, start + left, end - right))
        elif kind == "LatexCommentNode":
            self.comments.append((start, end))
        elif kind == "LatexEnvironmentNode":
            name = n.environmentname
            if name in _BODY_ONLY:
                body = self.raw[start:end]
                a = body.find("}") + 1  # after \begin{equation}
                b = body.rfind("\\end")
                self.spans.append((start, end, start + a, start + (b if b >= a else len(body))))
            elif name in _WHOLE:
                self.spans.append((start, end, start, end))
            else:
                self.nodes(n.nodelist)
        elif kind == "LatexGroupNode":
            self.nodes(n.nodelist)
        elif kind == "LatexMacroNode":
            args = getattr(n.nodeargd, "argnlist", None) or [] if n.nodeargd else []
            if n.macroname in _HEADINGS and args:
                last = args[-1]
                if last is not None:
                    title = self.raw[last.pos : last.pos + last.len].strip().strip("{}").strip()
                    self.headings.append((start, title))
            for a in args:
                if a is not None and type(a).__name__ in ("LatexGroupNode", "LatexMathNode"):
                    self.node(a)


def latex_segments(text: Text) -> list[Segment]:
    """A LaTeX text as maths and prose segments (nothing expanded, nothing run)."""
    from pylatexenc.latexwalker import LatexWalker

    raw = text.text
    walk = _Walk(raw)
    try:
        nodes, _, _ = LatexWalker(raw, tolerant_parsing=True).get_latex_nodes()
        walk.nodes(nodes)
    except (RecursionError, ValueError, IndexError, TypeError, AttributeError):
        walk = _Walk(raw)  # a text the walker cannot take apart: all prose
    cuts = sorted(
        [(a, b, c, d, True) for a, b, c, d in walk.spans]
        + [(a, b, b, b, False) for a, b in walk.comments]
    )
    out: list[Segment] = []
    at = 0
    lines = LineIndex(raw)

    def line(i: int) -> int:
        return lines.line_col(i)[0] if text.frame.cell is None else _cell_line(text, i)

    for a, b, c, d, maths in cuts:
        if a < at:
            continue  # inside a span already read
        if raw[at:a].strip():
            out.append(Segment(text[at:a], line(at), False, text.frame.cell))
        if maths:
            heading = next((h for pos, h in reversed(walk.headings) if pos <= a), "")
            body = text[c:d]
            out.append(
                Segment(body.sub(DECIMAL_COMMA, "."), line(a), True, text.frame.cell, heading)
            )
        at = b
    if raw[at:].strip():
        out.append(Segment(text[at:], line(at), False, text.frame.cell))
    return out


def _cell_line(text: Text, i: int) -> int:
    p = text.place(i, i + 1)
    return p.cell_line if p.cell_line is not None else p.line
