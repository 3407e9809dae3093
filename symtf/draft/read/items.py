"""What the reader finds (:class:`Found`), the pieces it reads (:class:`Segment`), and the
small parsers of printed numbers and matrices that the maths and prose readers share.

Every helper here reads *one* piece (a maths span, a statement, a table cell),
never the whole article.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
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


# ----------------------------------------------------------------------------- chain links

_ADDITIVE = "+-−"
_MULTIPLICATIVE = "*/×·÷"


def _terms(plain: str) -> tuple[list[str], list[str]] | None:
    """A plain expression cut at its top-level additive operators (else multiplicative
    ones): the terms and the operators between them; None if it is one term."""
    for ops in (_ADDITIVE, _MULTIPLICATIVE):
        terms: list[str] = []
        between: list[str] = []
        depth = start = 0
        for i, ch in enumerate(plain):
            if ch in "([{":
                depth += 1
            elif ch in ")]}":
                depth -= 1
            elif depth == 0 and ch in ops and i > start:
                before = plain[start:i].rstrip()
                if ops is _ADDITIVE and (not before or before[-1] in "*/×·÷^e(E"):
                    continue  # a sign, or an exponent's: not a term's end
                terms.append(plain[start:i].strip())
                between.append("-" if ch == "−" else ch)
                start = i + 1
        terms.append(plain[start:].strip())
        if len(terms) > 1 and all(terms):
            return terms, between
    return None


def _listed(link: str) -> list[str] | None:
    """The entries of a bracketed list of expressions, ``[0.3^2, 0.6^2]`` (else None)."""
    text = link.strip()
    if not (text.startswith("[") and text.endswith("]")) or text.count("[") != 1:
        return None
    entries = [e.strip() for e in text[1:-1].split(",")]
    if len(entries) < 2 or not all(entries):
        return None
    try:
        return [latexmath.to_plain(expression_text(e), where="link") for e in entries]
    except ExpressionError:
        return None


def term_links(
    links: Sequence[str], plains: Sequence[str | None] | None = None
) -> list[tuple[int, tuple[str, ...], str, list[str]]]:
    """The intermediate numbers of a chain, each with the terms it is the value of.

    In ``2 \\times 1.5 + 1.6 = 3 + 1.6 = 4.6`` the link ``3 + 1.6`` writes the value of
    the term ``2 \\times 1.5`` of the link before it: the two links are cut at their
    top-level operators, and when they have the same operators in the same order, a
    term written as a bare number in the later link is the value of the term at its
    place in the earlier one. Other ways a careful reader lines the terms up:

    - a term that is zero as written (``0``, ``0 × 0``: a product with a factor 0) may be
      left out of the next link (``0 × 0 + exp(3.5-7.1) + exp(7.1-7.1) = exp(-3.6) +
      exp(0)``);
    - a term that is one function of one argument, written again with a bare number for
      its argument (``exp(3.5-7.1)`` then ``exp(-3.6)``), writes the argument's value;
    - a product written again with its other factors alike and one worked out
      (``3*cos(0.524)`` then ``3*0.866``) writes that factor's value (:func:`_factor_links`);
    - a negative term may be written with its sign moved to the operator before it
      (``+ (-0.5) × 2`` then ``- 1``: :func:`_aligned`);
    - a bracketed list of expressions followed by a sum of as many terms,
      ``[0.3^2, 0.6^2] => 0.09 + 0.36``, writes each entry's value as the term at its
      place (the list is what is summed).

    Returns ``(later link, terms, number, before)``: ``terms`` are the term the number is
    the value of and, first, each term that term was written as in the links before it
    (``exp(3.5-7.1)``, ``exp(-3.6)`` for the 0.027 of ``= 0.027 + 1.0``), so that its
    check reads the whole way; ``before`` are the numbers of the later link written before
    it (to place it). ``plains``: the links already read as plain text (:func:`link_plain`).
    """
    out: list[tuple[int, tuple[str, ...], str, list[str]]] = []
    if plains is None:
        plains = [link_plain(link) for link in links]
    terms = [_expanded(_terms(plain)) if plain is not None else None for plain in plains]
    # for each link: its term j was term i of the link before it (negated, or not)
    earlier_of: list[dict[int, tuple[int, str, bool]]] = [{}]
    for k in range(1, len(links)):
        a, b = terms[k - 1], terms[k]
        listed = _listed(links[k - 1])
        if listed is not None and b is not None and set(b[1]) == {"+"}:
            a = (listed, b[1])  # [0.3², 0.6²] ⇒ 0.09 + 0.36: each term is its entry's value
        if a is None and b is None:
            # "10000^(-2×1/256) = 10000^(-0.0078)": the exponent worked out
            _exponent_link(k, links[k - 1], links[k], out)
        pairs = {} if _cancelled(a, b) else _aligned(a, b)
        earlier_of.append({j: (i, earlier, neg) for j, (i, earlier, _, neg) in pairs.items()})
        before: list[str] = []
        for j, (_i, earlier, later, _neg) in sorted(pairs.items()):
            number = numeric_cell(later.strip("()"))
            if number is not None:
                if numeric_cell(earlier.strip("()")) is None and re.search(r"\d", earlier):
                    out.append((k, _written_as(earlier_of, k, j), number, before[:]))
                before.append(number)
                continue
            argument = _argument_value(earlier, later)
            if argument is not None:
                out.append((k, (argument[0],), argument[1], before[:]))
                before.append(argument[1])
                continue
            # "3*cos(0.524) - 4*sin(0.524) = 3*0.866 - 4*0.5": the factors of a term
            # written alike, one worked out (0.866 is the value of cos(0.524))
            _factor_links(k, earlier, later, before, out)
    return out


def _cancelled(
    a: tuple[list[str], list[str]] | None, b: tuple[list[str], list[str]] | None
) -> bool:
    """Whether link ``b`` writes the quotient ``a`` with a common factor cancelled.

    ``\\frac{2/6}{3/6} = \\frac{2}{3}`` and ``\\frac{6 \\times 1}{6 \\times 2} = \\frac{1}{2}``
    reduce a fraction: the numerator and the denominator are written with one factor or
    divisor in common, and the next quotient leaves it out, so its two numbers are the
    reduced fraction, not the values of the two terms (2 is not the value of 2/6).
    """
    if a is None or b is None or a[1] != ["/"] or b[1] != ["/"]:
        return False
    top, bottom = (_common_factors(t) for t in a[0])
    return bool(top & bottom)


def _common_factors(term: str) -> set[str]:
    """The factors and divisors of a product or quotient written as one term
    (``(2/6)`` → {2, 6}); an empty set for anything else."""
    text = term.strip()
    while text.startswith("(") and text.endswith(")") and _balanced(text[1:-1]):
        text = text[1:-1].strip()
    cut = _factors(text)
    return set() if cut is None else {t.strip() for t in cut[0]}


def _written_as(
    earlier_of: Sequence[Mapping[int, tuple[int, str, bool]]], k: int, j: int
) -> tuple[str, ...]:
    """What term ``j`` of link ``k`` was written as in the links before it, the earliest
    first, as far as their terms line up; a term the later link writes with the other
    sign (``+ (-0.5) × 2`` then ``- 1``) is negated."""
    chain: list[str] = []
    negated = False
    while k >= 1 and j in earlier_of[k]:
        j, previous, flip = earlier_of[k][j]
        if chain and not is_arithmetic(previous):
            break  # a term in names (dL/ds[0] × s[0]): the chain of numbers starts after it
        negated ^= flip
        k -= 1
        text = f"-({previous})" if negated else previous
        if not chain or text != chain[0]:
            chain.insert(0, text)
    return tuple(chain)


#: A row times a column, as plain text: ``[0.007,0.001]·[[9],[11]]``.
_ROW_COLUMN = re.compile(r"^\[([^\[\]]+)\]·\[((?:\[[^\[\],]+\],?)+)\]$")


def _expanded(cut: tuple[list[str], list[str]] | None) -> tuple[list[str], list[str]] | None:
    """A link's terms with each row-times-column product written out as the sum of its
    entries' products (``[0.007,0.001]·[[9],[11]]`` is ``0.007×9 + 0.001×11``), the way
    the next link writes it."""
    if cut is None:
        return None
    terms, ops = cut
    if ops == ["·"] and len(terms) == 2:  # the whole link is one such product
        whole = _row_column(f"{terms[0]}·{terms[1]}")
        return (whole, ["+"] * (len(whole) - 1)) if whole else cut
    out: list[str] = []
    between: list[str] = []
    for i, t in enumerate(terms):
        if i:
            between.append(ops[i - 1])
        for j, piece in enumerate(_row_column(t) or [t]):
            if j:
                between.append("+")
            out.append(piece)
    return out, between


def _row_column(term: str) -> list[str] | None:
    """The entries' products of a row times a column of as many entries (else None)."""
    m = _ROW_COLUMN.match(term.replace(" ", ""))
    if m is None:
        return None
    row = m.group(1).split(",")
    column = re.findall(r"\[([^\[\],]+)\]", m.group(2))
    if len(row) < 2 or len(row) != len(column):
        return None
    return [f"{a}×{b}" for a, b in zip(row, column, strict=True)]


#: A term that is zero as written: 0, or a product with a factor 0.
_ZERO_TERM = re.compile(
    r"^\(?\s*(?:0(?:\.0*)?(?:\s*[*×·]\s*[^+\-]+)?|[^+\-]+[*×·]\s*0(?:\.0*)?)\s*\)?$"
)
#: A term that starts with a minus sign: ``(-0.5) × 2``, ``-0.5 × 2``.
_NEGATIVE_TERM = re.compile(r"^\(*\s*[-−]")


def _aligned(
    a: tuple[list[str], list[str]] | None, b: tuple[list[str], list[str]] | None
) -> dict[int, tuple[int, str, str, bool]]:
    """The terms of two consecutive links lined up, by the later link's places.

    They line up when they have the same operators in the same order, or so once the
    earlier link's zero terms are left out; and an earlier ``+ (-0.5) × 2`` may be written
    ``- 1`` (the sign moved to the operator: the later term is the earlier one negated).
    Each later place gets (the earlier term's place, the earlier term, the later term,
    whether the later term is the earlier one negated)."""
    if a is None or b is None:
        return {}
    terms, ops = a
    kept = list(range(len(terms)))
    if len(terms) > len(b[0]):  # leave out the zero terms
        kept = []
        for i, t in enumerate(terms):
            if _ZERO_TERM.match(t) and (ops[i - 1] == "+" if i else ops[0] == "+"):
                continue
            kept.append(i)
    if len(kept) != len(b[0]):
        return {}
    negated = [False] * len(kept)
    for p in range(1, len(kept)):
        i = kept[p]
        mine, theirs = ops[i - 1], b[1][p - 1]
        if mine == theirs:
            continue
        if {mine, theirs} != {"+", "-"} or not _NEGATIVE_TERM.match(terms[i]):
            return {}
        negated[p] = True
    return {
        j: (i, terms[i], y, negated[j]) for j, (i, y) in enumerate(zip(kept, b[0], strict=True))
    }


_CALL = re.compile(r"^([A-Za-z]+)\((.*)\)$")


def _argument_value(earlier: str, later: str) -> tuple[str, str] | None:
    """``exp(3.5-7.1)`` then ``exp(-3.6)``: the argument and the number written for it."""
    a, b = _CALL.match(earlier.strip()), _CALL.match(later.strip())
    if a is None or b is None or a.group(1) != b.group(1):
        return None
    if not _balanced(a.group(2)) or not _balanced(b.group(2)) or "," in a.group(2) + b.group(2):
        return None
    number = numeric_cell(b.group(2).strip())
    argument = a.group(2).strip()
    if number is None or numeric_cell(argument) is not None or not re.search(r"\d", argument):
        return None
    if not is_arithmetic(argument):
        return None
    return argument, number


def _balanced(text: str) -> bool:
    """Whether every bracket of ``text`` closes within it (one argument, not ``a)(b``)."""
    depth = 0
    for ch in text:
        depth += ch in "([{"
        depth -= ch in ")]}"
        if depth < 0:
            return False
    return depth == 0


def _factor_links(
    k: int,
    earlier: str,
    later: str,
    before: list[str],
    out: list[tuple[int, tuple[str, ...], str, list[str]]],
) -> None:
    """The factors of the term ``later`` worked out from those of ``earlier``, for
    :func:`term_links`: both are products of as many factors with the same operators, the
    other factors written alike, and a factor written as a bare number in ``later`` is the
    value of the factor at its place in ``earlier``. ``before`` gains the term's numbers."""
    a, b = _factors(earlier), _factors(later)
    numbers = [numeric_cell(f.strip("()")) for f in b[0]] if b is not None else []
    if a is None or b is None or a[1] != b[1] or len(a[0]) != len(b[0]):
        before.extend(n for n in numbers if n is not None)
        return
    worked = [
        (x, n)
        for x, y, n in zip(a[0], b[0], numbers, strict=True)
        if n is not None and x != y and numeric_cell(x.strip("()")) is None
    ]
    same = all(x == y or (x, n) in worked for x, y, n in zip(a[0], b[0], numbers, strict=True))
    for x, n in zip(a[0], numbers, strict=True):
        if n is None:
            continue
        if same and (x, n) in worked and re.search(r"\d", x):
            out.append((k, (x,), n, list(before)))
        before.append(n)


def _exponent_link(
    k: int, earlier: str, later: str, out: list[tuple[int, tuple[str, ...], str, list[str]]]
) -> None:
    """For :func:`term_links`: two links that are one power each, of the same base, the
    later with a bare number for the earlier's exponent (its value)."""
    try:
        a, b = _power(_plain(earlier)), _power(_plain(later))
    except ExpressionError:
        return
    if a is None or b is None or a[0] != b[0]:
        return
    number = numeric_cell(b[1])
    if number is None or numeric_cell(a[1]) is not None or not re.search(r"\d", a[1]):
        return
    base = numeric_cell(b[0])
    out.append((k, (a[1],), number, [base] if base is not None else []))


def _plain(link: str) -> str:
    """A link in the plain language (LaTeX rewritten; plain text as written)."""
    text = expression_text(link)
    return latexmath.to_plain(text, where="link") if latexmath.looks_like_latex(text) else text


def _power(plain: str) -> tuple[str, str] | None:
    """``base^(exponent)`` cut at its one top-level ``^`` (the exponent's brackets
    dropped); None for anything else."""
    depth = 0
    at = None
    for i, ch in enumerate(plain):
        if ch in "([{":
            depth += 1
        elif ch in ")]}":
            depth -= 1
        elif ch == "^" and depth == 0:
            if at is not None:
                return None
            at = i
    if at is None:
        return None
    base, exponent = plain[:at].strip(), plain[at + 1 :].strip()
    if not (exponent.startswith("(") and exponent.endswith(")")) or _terms(base) is not None:
        return None
    inner = exponent[1:-1].strip()
    if not inner or inner.count("(") != inner.count(")"):
        return None
    return base, inner


def _factors(plain: str) -> tuple[list[str], list[str]] | None:
    """A term cut at its top-level multiplicative operators (None: no product)."""
    cut = _terms(plain)
    if cut is None or any(op not in _MULTIPLICATIVE for op in cut[1]):
        return None
    return cut
