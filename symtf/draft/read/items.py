"""What the reader finds (:class:`Found`), the pieces it reads (:class:`Segment`), and the
small parsers of printed numbers and matrices that the maths and prose readers share.

Every helper here reads *one* piece (a maths span, a statement, a table cell),
never the whole article.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass, field

from symtf.draft.read.source import Text, locate
from symtf.errors import ExpressionError
from symtf.language import latexmath
from symtf.place import Place

__all__ = ["Found", "Segment"]

_NUMBER = r"[-−]?(?:\d+\.?\d*|\.\d+)(?:[eE][-+]?\d+)?"
NUMBER_RE = re.compile(rf"^{_NUMBER}$")
_INFINITY = re.compile(r"^[-−]\s*(?:\\mathrm\{\\infty\s*\}|\\infty|∞|inf)$")

Rows = tuple[tuple[str, ...], ...]

#: A decimal comma in LaTeX maths, ``0{,}5`` (the braces keep TeX from spacing it as a
#: separator): the number 0.5. A comma without braces, ``(1, 2)``, separates.
DECIMAL_COMMA = re.compile(r"(?<=\d)\{,\}(?=\d)")


@dataclass(frozen=True)
class Found:
    """One printed thing found in an article.

    Attributes:
        kind: ``"matrix"``, ``"vector"``, ``"number"`` or ``"arithmetic"``.
        label: The nearest label (``Q_1``, ``A_1``), or ``line N`` when none.
        line: 1-based line in the article (for a notebook: the line in the
            cell, with ``cell`` set) of the piece it was read from.
        rows: The printed strings, verbatim, row by row (one row for a vector
            or a number; for arithmetic, the printed result).
        expression: For arithmetic, the expression in symtf's language.
        latex: For arithmetic, the expression as the article wrote it.
        cell: For a notebook, the 0-based cell index.
        context: The source line (trimmed), to show a person.
        chain: For arithmetic, what the links of one chain ``a = b = c`` that compute
            one printed result share (``""`` for none): they are one printed number,
            to be checked as one claim.
        places: Where each printed string stands, row by row (one per entry of ``rows``).
    """

    kind: str
    label: str
    line: int
    rows: Rows
    expression: str | None = None
    latex: str | None = None
    cell: int | None = None
    context: str = ""
    chain: str = ""
    places: tuple[Place, ...] = ()

    @property
    def shape(self) -> tuple[int, int]:
        """Rows × columns of the printed values."""
        return (len(self.rows), len(self.rows[0]) if self.rows else 0)


@dataclass
class Segment:
    """A run of maths (or of plain text), where it starts, and what labels it.

    Attributes:
        text: The run, with the place of each character.
        line: Its first line (for a notebook, the line in the cell).
        math: Whether it is maths (a ``$…$`` span, a display, an environment).
        cell: A notebook's cell index.
        heading: The heading above it.
        code_name: For a code cell's output, the variable the cell shows.
        extra: Flags: ``output`` (a code cell's output), ``prose_label`` (the word
            before a maths span).
        table: For a Markdown table, its cells row by row (``text`` then holds them
            joined, for readers of its words).
    """

    text: Text
    line: int
    math: bool
    cell: int | None = None
    heading: str = ""
    code_name: str | None = None
    extra: dict[str, str] = field(default_factory=dict)
    table: list[list[Text]] | None = None

    def line_at(self, i: int) -> int:
        """The line (in the cell, for a notebook) of character ``i``."""
        return self.line + self.text.text.count("\n", 0, i)

    def places(
        self, start: int, end: int, rows: Rows, *, from_end: bool = False
    ) -> tuple[Place, ...]:
        """The places of ``rows``' entries, read from ``text[start:end]``."""
        return locate(self.text, start, end, [c for r in rows for c in r], from_end=from_end)


def places_in(
    text: Text, start: int, end: int, rows: Rows, *, from_end: bool = False
) -> tuple[Place, ...]:
    """The places of ``rows``' entries, read from ``text[start:end]``."""
    return locate(text, start, end, [c for r in rows for c in r], from_end=from_end)


# ----------------------------------------------------------------------------- splitting


def split_top_at(text: str, seps: Sequence[str]) -> list[tuple[str, int]]:
    """Split at separators outside braces, brackets and environments.

    Returns each non-blank piece, stripped, with the offset of its first character.
    """
    parts: list[tuple[int, int]] = []
    depth = 0
    env = 0
    start = 0
    i = 0
    n = len(text)
    while i < n:
        if text.startswith("\\begin{", i):
            env += 1
        elif text.startswith("\\end{", i):
            env -= 1
        ch = text[i]
        if ch in "{[(":
            depth += 1
        elif ch in "}])":
            depth -= 1
        elif depth == 0 and env == 0:
            for sep in seps:
                if (
                    text.startswith(sep, i)
                    and not (
                        sep[0] == "\\"
                        and sep[1:].isalpha()  # \quad is not the start of \quadrant
                        and text[i + len(sep) : i + len(sep) + 1].isalpha()
                    )
                ):
                    parts.append((start, i))
                    start = i + len(sep)
                    i = start - 1
                    break
        i += 1
    parts.append((start, n))
    out = []
    for a, b in parts:
        piece = text[a:b]
        stripped = piece.strip()
        if stripped:
            out.append((stripped, a + len(piece) - len(piece.lstrip())))
    return out


def split_top(text: str, seps: Sequence[str]) -> list[str]:
    """Split at separators that are outside braces, brackets and environments."""
    return [p for p, _ in split_top_at(text, seps)]


# ----------------------------------------------------------------------------- numbers

#: LaTeX spacing written between the entries of a list or around a number (``[0.198, \\; 0.401]``).
LATEX_SPACING = re.compile(
    r"\\[,;:! ]|\\(?:q?quad|enspace|thinspace|medspace|thickspace|negthinspace)(?![A-Za-z])|~"
)


def numeric_cell(text: str) -> str | None:
    """A printed number as written (spacing and one pair of braces dropped), or None."""
    t = LATEX_SPACING.sub("", text.strip()).replace(" ", "")
    if t.startswith("{") and t.endswith("}"):
        t = t[1:-1]
    if _INFINITY.match(t):
        return "-inf"
    t = t.replace("−", "-")
    return t if NUMBER_RE.match(t) else None


_END_OF_SENTENCE = re.compile(r"(\\end\{\w+\}|\])\s*[.,;:]$")
_LEFT_RIGHT = re.compile(r"^\\left\s*[\[(]\s*|\s*\\right\s*[\])]\s*$")
_SHAPE_NOTE = re.compile(r"\(\s*\d+\s*\\times\s*\d+\s*\)\s*$")
_ENVIRONMENT = re.compile(r"\\begin\{(\w+)\}(?:\{[^}]*\})?(.*)\\end\{\1\}", re.S)
_ROW_BREAK = re.compile(r"\\\\")


def matrix_rows(piece: str) -> Rows | None:
    """The rows of a numeric matrix environment or bracketed list, verbatim; else None."""
    s = piece.strip()
    s = _END_OF_SENTENCE.sub(r"\1", s)  # "…\end{bmatrix}." ends a sentence
    s = _LEFT_RIGHT.sub("", s)
    s = _SHAPE_NOTE.sub("", s).strip()  # (3\times 6) shape notes
    s = _LEFT_RIGHT.sub("", s)
    m = _ENVIRONMENT.fullmatch(s)
    if m:
        rows = []
        for raw_row in _ROW_BREAK.split(m.group(2)):
            if not raw_row.strip() or raw_row.strip() == "\\hline":
                continue
            cells = [numeric_cell(c) for c in raw_row.replace("\\hline", "").split("&")]
            if any(c is None for c in cells):
                return None
            rows.append(tuple(c for c in cells if c is not None))
        return tuple(rows) if rows and len({len(r) for r in rows}) == 1 else None
    if s.startswith("[") and s.endswith("]") and "[" not in s[1:-1]:
        cells = [numeric_cell(c) for c in LATEX_SPACING.sub(" ", s[1:-1]).split(",")]
        if cells and all(c is not None for c in cells):
            return (tuple(c for c in cells if c is not None),)
    return None


def label_of(piece: str) -> str | None:
    """A label written as maths (``Q_1``, ``S_1+M``, ``h_{\\text{AI}}``), in plain form."""
    p = piece.strip()
    if not p or numeric_cell(p) is not None or "\\begin" in p:
        return None
    try:
        plain = latexmath.label_text(p, where="label")
    except ExpressionError:
        return None
    return plain if len(plain) <= 60 and not re.search(r"\d\.\d", plain) else None


_FUNCTION_WORDS = re.compile(r"\b(?:e|sqrt|exp|ln|log|max|min|sum|pi|sin|cos|tanh)\b")
_OPERATORS = re.compile(r"[-+*/×·÷^∘√]|sqrt|exp|ln|log|sum|max|min|sin|cos|tanh")


def is_arithmetic(piece: str) -> bool:
    """Literals combined by operators or functions (not a bare number, name or matrix)."""
    if numeric_cell(piece) is not None or matrix_rows(piece) is not None:
        return False
    try:
        plain = latexmath.to_plain(piece, where="arithmetic")
    except ExpressionError:
        return False
    if re.search(r"[A-Za-z]", _FUNCTION_WORDS.sub("", plain)):
        return False  # names (Q_1, d_model): symbolic, not displayed arithmetic
    return bool(re.search(r"\d", plain)) and bool(_OPERATORS.search(plain))
