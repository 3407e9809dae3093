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


#: The label's end of a number a displayed line computes from, found only to be checked as
#: the earlier result it may repeat (never a printing of its own).
LITERAL = " (literal)"


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


#: A number written with a power of ten: ``2.5 \times 10^{-3}``, ``2.5·10⁻³``.
_TIMES_TEN = re.compile(r"^(-?\d+(?:\.\d+)?)(?:\\times|\\cdot|×|·|\*)10\^\{?([-+]?\d+)\}?$")
#: ``1e^{-5}``: an ε written with a caret; read as 1e-5 when the power is a small number's
#: (the article's own digits, as in √5.00001 beside it, show that reading).
_E_CARET = re.compile(r"^(-?\d+(?:\.\d+)?)e\^\{?([-+]?\d+)\}?$")
#: Whole numbers with thousands separators, ``6,400`` and ``12,800.5``.
THOUSANDS = re.compile(r"^-?\d{1,3}(?:,\d{3})+(?:\.\d+)?$")
_SUPERSCRIPT = str.maketrans("⁰¹²³⁴⁵⁶⁷⁸⁹⁻⁺", "0123456789-+")


def numeric_cell(text: str) -> str | None:
    """A printed number as written (spacing and one pair of braces dropped), or None.

    Besides plain decimals: ``\boxed{0.5}`` and the like (the box is emphasis),
    ``2.5 \times 10^{-3}`` and ``1e^{-5}`` (as ``2.5e-3`` and ``1e-5``), and whole
    numbers with thousands separators (``6,400``, kept as written).
    """
    t = LATEX_SPACING.sub("", text.strip()).replace(" ", "")
    t = unwrapped(t)
    if t.startswith("{") and t.endswith("}"):
        t = t[1:-1]
    if _INFINITY.match(t):
        return "-inf"
    t = t.replace("−", "-")
    if NUMBER_RE.match(t):
        return t
    m = _TIMES_TEN.match(t.translate(_SUPERSCRIPT)) or _E_CARET.match(t)
    if m is not None and (m.re is _TIMES_TEN or abs(int(m.group(2))) >= 3):
        return f"{m.group(1)}e{int(m.group(2))}"
    if THOUSANDS.match(t):
        return t
    return None


#: Commands that only mark a number up (``\boxed{0.5}``): their argument is what is read.
_MARKUP = re.compile(
    r"\\(?:boxed|fbox|underline|mathbf|bm|boldsymbol|textbf"
    r"|(?:textcolor|colorbox|color)\s*\{[^{}]*\})\s*\{"
)


def unwrapped(text: str) -> str:
    """``\boxed{X}``, ``\textcolor{red}{X}`` … as ``{X}`` (braces kept for grouping)."""
    out = text
    for _ in range(20):  # nested marks: each pass takes the outermost left one
        m = _MARKUP.search(out)
        if m is None:
            return out
        close = _closing(out, m.end() - 1)
        if close is None:
            return out
        out = out[: m.start()] + "{" + out[m.end() : close] + "}" + out[close + 1 :]
    return out


def unwrapped_text(text: Text) -> Text:
    """:func:`unwrapped` on a text with places: the marks go, the characters keep their places."""
    out = text
    for _ in range(20):
        m = _MARKUP.search(out.text)
        if m is None:
            return out
        close = _closing(out.text, m.end() - 1)
        if close is None:
            return out
        inner = out.text[m.end() : close]
        if re.search(r"=|\\approx|≈", inner):  # \boxed{a = b}: the box marks a whole equation
            out = out[: m.start()] + out[m.end() : close] + out[close + 1 :]
        else:  # \boxed{0.15}: braces kept, as a group
            out = out[: m.start()] + out[m.end() - 1 : close + 1] + out[close + 1 :]
    return out


def _closing(text: str, at: int) -> int | None:
    """The offset of the bracket closing the one at ``at`` (``{``, ``(``, ``[`` or ``|``)."""
    pairs = {"{": "}", "(": ")", "[": "]"}
    opener = text[at]
    closer = pairs.get(opener, opener)
    depth = 0
    for i in range(at, len(text)):
        ch = text[i]
        if ch == opener and (opener != closer or i == at):
            depth += 1
        elif ch == closer:
            depth -= 1
            if depth == 0:
                return i
    return None


_ABS_COMMANDS = re.compile(
    r"\\left\s*\\?\|(.*?)\\right\s*\\?\||\\left\s*\\lvert(.*?)\\right\s*\\rvert|\\lvert(.*?)\\rvert"
)
_SIGMOID = re.compile(r"(?:σ|\\sigma)\s*(?:\\left)?\s*\(")
_SCI_IN_MATHS = re.compile(
    r"(?<![\w.])(\d+(?:\.\d+)?)[eE](?:\^\{([-+]?\d+)\}|(\^?)([-+]?\d+))(?![\w.])"
)
_THOUSANDS_IN_TEXT = re.compile(r"(?<![\d.,])\d{1,3}(?:,\d{3})+(?![\d,])")
_SUPERSCRIPTS = re.compile(r"[⁰¹⁴⁵⁶⁷⁸⁹⁻⁺][⁰¹²³⁴⁵⁶⁷⁸⁹⁻⁺]*|[²³](?=[⁰¹²³⁴⁵⁶⁷⁸⁹])")


def expression_text(piece: str) -> str:
    """Arithmetic as the article writes it, in the forms symtf's parser reads.

    - marks around a number: ``\boxed{0.5}`` → ``{0.5}``;
    - absolute values: ``|0.01 − 0.7514|``, ``\\left| … \right|``, ``\\lvert … \rvert``
      → ``abs(…)``;
    - a number with a power of ten: ``1e-5``, and ``1e^{-5}`` when the power is at least
      three (an ε) → ``(1 \times 10^{-5})``; a smaller power stays ``e`` to that power;
    - σ of a number, the logistic function: ``σ(1)`` → ``1/(1+e^{-(1)})``, and of a list,
      entry by entry: ``σ([1, 2])`` → ``sigmoid([1, 2])``;
    - the element-wise product written ``⊙`` → ``∘``;
    - superscript digits: ``e¹`` → ``e^{1}``;
    - thousands separators: ``6,400`` → ``6400``;
    - a C float literal's suffix: ``1e-5f``, ``0.5f`` → ``1e-5``, ``0.5``.
    """
    s = _C_FLOAT.sub(r"\1", unwrapped(piece))
    s = _ABS_COMMANDS.sub(
        lambda m: "\\operatorname{abs}(" + next(g for g in m.groups() if g is not None) + ")", s
    )
    s = _bars(s)
    if "\\" in s or "^" in s:  # LaTeX reads 1e-5 as 1·e − 5; plain text reads it right
        s = _SCI_IN_MATHS.sub(_sci, s)
    s = _sigmoid(s).replace("⊙", "∘")  # the element-wise product, as Unicode writes it
    s = _SUPERSCRIPTS.sub(lambda m: "^{" + m.group().translate(_SUPERSCRIPT) + "}", s)
    return _THOUSANDS_IN_TEXT.sub(lambda m: m.group().replace(",", ""), s)


#: A number with C's float suffix (``1e-5f``, ``0.5f``, ``2.f``): the number.
_C_FLOAT = re.compile(
    r"(?<![\w.])(\d+\.\d*(?:[eE][-+]?\d+)?|\d*\.\d+(?:[eE][-+]?\d+)?|\d+[eE][-+]?\d+)[fF](?!\w)"
)


def _sci(m: re.Match[str]) -> str:
    power = m.group(2) if m.group(2) is not None else m.group(4)
    caret = m.group(2) is not None or bool(m.group(3))
    if caret and abs(int(power)) < 3:
        return m.group()  # 2e^{2}: 2 times e squared
    return f"({m.group(1)} \\times 10^{{{int(power)}}})"


def _bars(s: str) -> str:
    r"""``|a − b|`` → ``\operatorname{abs}(a − b)``, for bars that pair up at one depth."""
    if s.count("|") < 2 or "||" in s:
        return s
    out = []
    i = 0
    while i < len(s):
        if s[i] == "|":
            close = s.find("|", i + 1)
            inner = s[i + 1 : close] if close > i else ""
            if close > i and inner.count("{") == inner.count("}") and inner.strip():
                out.append("\\operatorname{abs}(" + inner + ")")
                i = close + 1
                continue
        out.append(s[i])
        i += 1
    return "".join(out)


def _sigmoid(s: str) -> str:
    """``σ(x)`` of a numeric argument → the logistic function written out."""
    for _ in range(10):
        m = _SIGMOID.search(s)
        if m is None:
            return s
        close = _closing(s, m.end() - 1)
        if close is None:
            return s
        arg = s[m.end() : close].replace("\\right", "")
        if re.search(r"[A-Za-z]", re.sub(r"\\[A-Za-z]+|\b(?:e|exp|sqrt)\b", "", arg)):
            return s  # σ(x) of a name: not a number to compute
        if arg.strip().startswith("["):  # σ([1, 2]): the logistic function of each entry
            s = s[: m.start()] + "\\operatorname{sigmoid}(" + arg + ")" + s[close + 1 :]
            continue
        s = s[: m.start()] + "\\frac{1}{1+e^{-(" + arg + ")}}" + s[close + 1 :]
    return s


_END_OF_SENTENCE = re.compile(r"(\\end\{\w+\}|\])\s*[.,;:]$")
_LEFT_RIGHT = re.compile(r"^\\left\s*[\[(]\s*|\s*\\right\s*[\])]\s*$")
_SHAPE_NOTE = re.compile(r"\(\s*\d+\s*\\times\s*\d+\s*\)\s*$")
_ENVIRONMENT = re.compile(r"\\begin\{(\w+)\}(?:\{[^}]*\})?(.*)\\end\{\1\}", re.S)
_ROW_BREAK = re.compile(r"\\\\")
#: A transpose mark after a bracketed list or a matrix: ``[1.0, 2.0]^T``, ``^{\top}``, ``^⊤``.
_TRANSPOSED = re.compile(r"\s*\^\s*(?:\{\s*(?:T|\\top|\\intercal)\s*\}|T|\\top|\\intercal|⊤)$")


def matrix_rows(piece: str) -> Rows | None:
    """The rows of a numeric matrix environment or bracketed list, verbatim; else None.

    A transpose mark after it (``[1.0, 2.0]^T``, a column written on one line) reads the
    rows as columns: the entries stay as printed, in the order they are written.
    """
    s = piece.strip()
    s = _END_OF_SENTENCE.sub(r"\1", s)  # "…\end{bmatrix}." ends a sentence
    transposed = _TRANSPOSED.search(s)
    if transposed is not None:
        rows = matrix_rows(s[: transposed.start()])
        return None if rows is None else tuple(zip(*rows, strict=True))
    s = _LEFT_RIGHT.sub("", s)
    s = _SHAPE_NOTE.sub("", s).strip()  # (3\times 6) shape notes
    s = _LEFT_RIGHT.sub("", s)
    m = _ENVIRONMENT.fullmatch(s)
    if m:
        cells: list[list[str | None]] = []
        for raw_row in _ROW_BREAK.split(m.group(2)):
            if not raw_row.strip() or raw_row.strip() == "\\hline":
                continue
            cells.append([numeric_cell(c) for c in raw_row.replace("\\hline", "").split("&")])
        return _labelled(cells)
    if s.startswith("[") and s.endswith("]") and "[" not in s[1:-1]:
        row = [numeric_cell(c) for c in LATEX_SPACING.sub(" ", s[1:-1]).split(",")]
        if row and all(c is not None for c in row):
            return (tuple(c for c in row if c is not None),)
    return None


def _labelled(cells: list[list[str | None]]) -> Rows | None:
    """A matrix's numeric rows; a first row of column names and a first column of row names
    (``\\text{I} & 0.1 & 0.2``) are left out, as a reader reads past them."""
    if len(cells) > 1 and all(c is None for c in cells[0]) and len(cells[0]) > 1:
        cells = cells[1:]  # "& d_0 & d_1": the columns' names
    if cells and all(len(r) > 1 and r[0] is None for r in cells):
        cells = [r[1:] for r in cells]  # "\text{love} & 0.3 & 0.4": the rows' names
    if not cells or any(c is None for r in cells for c in r):
        return None
    rows = [tuple(c for c in r if c is not None) for r in cells]
    return tuple(rows) if len({len(r) for r in rows}) == 1 else None


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


_FUNCTION_WORDS = re.compile(
    r"\b(?:e|sqrt|exp|ln|log|max|min|sum|pi|sin|cos|tanh|abs|(?i:relu|sigmoid|softmax))\b"
)
_OPERATORS = re.compile(
    r"[-+*/×·÷^∘√]|sqrt|exp|ln|log|sum|max|min|sin|cos|tanh|abs|(?i:relu|sigmoid|softmax)"
)


def link_plain(link: str) -> str | None:
    """A link of a chain as plain text, or None when it cannot be read."""
    try:
        # "[0.007, 0.001] @ [[9], [11]]": a row times a column, as the reader writes it
        return latexmath.to_plain(expression_text(link.replace("@", "·")), where="link")
    except ExpressionError:
        return None


def is_arithmetic(piece: str) -> bool:
    """Literals combined by operators or functions (not a bare number, name or matrix)."""
    if numeric_cell(piece) is not None or matrix_rows(piece) is not None:
        return False
    try:
        plain = latexmath.to_plain(expression_text(piece), where="arithmetic")
    except ExpressionError:
        return False
    if re.search(r"[A-Za-z]", _FUNCTION_WORDS.sub("", plain)):
        return False  # names (Q_1, d_model): symbolic, not displayed arithmetic
    return bool(re.search(r"\d", plain)) and bool(_OPERATORS.search(plain))
