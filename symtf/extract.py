r"""Find the numbers an article prints, and write them as a draft derivation.

Transcription is the slow part of checking a worked example. This module
reads an article — Markdown (``.md``), plain text, LaTeX (``.tex``) or a
Jupyter notebook (``.ipynb``: markdown cells and the plain-text outputs of
code cells) — and finds:

* every printed matrix, vector and number in its maths (``bmatrix``,
  ``pmatrix``, ``array`` bodies, bracketed lists ``[0.1, 1.1]``), in Markdown
  tables, and in notebook outputs (``array([[…]])``, ``tensor([[…]])``), each
  with its nearest label (``Q_1 =``, a bold name, the variable the code cell
  printed, or the heading above it) and its source line;
* every displayed arithmetic line (``5.652 + 5.652 + 10.068 = 21.372``,
  ``\sqrt{2}\approx 1.414``), as an expression and the value it prints.

:func:`extract` returns :class:`Found` records; :func:`draft_toml` writes them
as a draft derivation whose claims carry ``step = "?"`` until a person (or
``symtf check --draft`` suggestions) maps them. The printed strings are kept
verbatim. Nothing here evaluates anything: the expressions are only parsed
(safely, by :mod:`symtf.language.latexmath`) to be sure they are well formed.
"""

from __future__ import annotations

import functools
import json
import re
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any, cast

from symtf import limits
from symtf.errors import ExpressionError, SpecError
from symtf.language import latexmath
from symtf.visible import comment, toml_block, toml_string

__all__ = [
    "MAX_ARTICLE_BYTES",
    "Found",
    "draft_toml",
    "extract",
    "extract_text",
    "notebook_cells",
    "read_article_text",
    "statements",
]

#: Largest article read, in bytes.
MAX_ARTICLE_BYTES = limits.MAX_ARTICLE_BYTES

_NUMBER = r"[-−]?(?:\d+\.?\d*|\.\d+)(?:[eE][-+]?\d+)?"
_NUMBER_RE = re.compile(rf"^{_NUMBER}$")
_INFINITY = re.compile(r"^[-−]\s*(?:\\mathrm\{\\infty\s*\}|\\infty|∞|inf)$")


@dataclass(frozen=True)
class Found:
    """One printed thing found in an article.

    Attributes:
        kind: ``"matrix"``, ``"vector"``, ``"number"`` or ``"arithmetic"``.
        label: The nearest label (``Q_1``, ``A_1``), or ``line N`` when none.
        line: 1-based line in the article (for a notebook: the line in the
            cell, with ``cell`` set).
        rows: The printed strings, verbatim, row by row (one row for a vector
            or a number; for arithmetic, the printed result).
        expression: For arithmetic, the expression in symtf's language.
        latex: For arithmetic, the expression as the article wrote it.
        cell: For a notebook, the 0-based cell index.
        context: The source line (trimmed), to show a person.
        chain: For arithmetic, what the links of one chain ``a = b = c`` that compute
            one printed result share (``""`` for none): they are one printed number,
            to be checked as one claim.
    """

    kind: str
    label: str
    line: int
    rows: tuple[tuple[str, ...], ...]
    expression: str | None = None
    latex: str | None = None
    cell: int | None = None
    context: str = ""
    chain: str = ""

    @property
    def shape(self) -> tuple[int, int]:
        """Rows × columns of the printed values."""
        return (len(self.rows), len(self.rows[0]) if self.rows else 0)


@dataclass
class _Segment:
    """A run of maths (or of plain text) and where it starts."""

    text: str
    line: int
    math: bool
    cell: int | None = None
    heading: str = ""
    code_name: str | None = None
    extra: dict[str, str] = field(default_factory=dict)


# ---------------------------------------------------------------------------
# Reading articles into segments

_MATH_SPANS = re.compile(
    r"\$\$(?P<dd>.+?)\$\$|\\\[(?P<br>.+?)\\\]|\\\((?P<pa>.+?)\\\)|(?<![\\$])\$(?P<d>[^$\n]+?)\$"
    r"|\\begin\{(?P<env>equation\*?|align\*?|gather\*?|displaymath|math)\}(?P<body>.+?)\\end\{(?P=env)\}",
    re.S,
)


#: A decimal comma in LaTeX maths, ``0{,}5`` (the braces keep TeX from spacing it as a
#: separator): the number 0.5. A comma without braces, ``(1, 2)``, separates.
_DECIMAL_COMMA = re.compile(r"(?<=\d)\{,\}(?=\d)")


def text_lines(text: str) -> list[str]:
    """A text's lines as its file numbers them: split at each LF (a CR before it dropped;
    a text with CRs and no LF split at its CRs), where :meth:`str.splitlines` also splits
    at form feeds, U+0085, U+2028 and U+2029, so that the lines counted after one of
    those named a line the file does not have."""
    if "\n" not in text and "\r" in text:
        lines = text.split("\r")
    else:
        lines = [ln[:-1] if ln.endswith("\r") else ln for ln in text.split("\n")]
    if lines and lines[-1] == "":
        lines.pop()
    return lines


def _segments_of_text(text: str, *, cell: int | None = None, first_line: int = 1) -> list[_Segment]:
    out: list[_Segment] = []
    heading = ""
    pos = 0
    line_starts = [0]
    for m in re.finditer("\n", text):
        line_starts.append(m.end())

    def line_of(offset: int) -> int:
        lo, hi = 0, len(line_starts) - 1
        while lo < hi:
            mid = (lo + hi + 1) // 2
            if line_starts[mid] <= offset:
                lo = mid
            else:
                hi = mid - 1
        return lo + first_line

    headings = [
        (m.start(), (m.group(1) or m.group(2)).strip())
        for m in re.finditer(r"^(?:#+\s*(.+)|\\(?:sub)*section\*?\{(.+?)\})$", text, re.M)
        if m.group(1) or m.group(2)
    ]
    for m in _MATH_SPANS.finditer(text):
        before = text[pos : m.start()]
        if before.strip():
            out.append(_Segment(before, line_of(pos), False, cell))
        body = next(
            g
            for g in (m.group("dd"), m.group("br"), m.group("pa"), m.group("d"), m.group("body"))
            if g is not None
        )
        heading = next((h for start, h in reversed(headings) if start <= m.start()), "")
        body = _DECIMAL_COMMA.sub(".", body)
        out.append(_Segment(body, line_of(m.start()), True, cell, heading))
        pos = m.end()
    if text[pos:].strip():
        out.append(_Segment(text[pos:], line_of(pos), False, cell))
    return out


#: Cell types of the Jupyter notebook format (nbformat 4); raw cells hold nothing to read.
_CELL_TYPES = ("markdown", "code", "raw")
#: Output types of a code cell; only the first three print values.
_OUTPUT_TYPES = ("execute_result", "display_data", "stream", "error")


def _kind_of(v: object) -> str:
    names = {
        dict: "a table (object)",
        list: "a list",
        str: "a string",
        bool: "a boolean",
        int: "an integer",
        float: "a number",
    }
    return names.get(type(v), "null" if v is None else f"a {type(v).__name__}")


def _notebook_text(v: object, where: str) -> str:
    """A notebook string field: a string, or a list of strings (lines)."""
    if isinstance(v, str):
        return v
    if isinstance(v, list) and all(isinstance(x, str) for x in v):
        return "".join(v)
    if isinstance(v, list):
        bad = next(x for x in v if not isinstance(x, str))
        raise SpecError(
            f"{where}: expected a string or a list of strings, found a list holding {_kind_of(bad)}"
        )
    raise SpecError(f"{where}: expected a string or a list of strings, found {_kind_of(v)}")


def notebook_cells(raw: str, path: str) -> list[Any]:
    """A Jupyter notebook's cells (read as JSON only, never run).

    Raises:
        SpecError: The text is not JSON with a list of cells.
    """
    try:
        nb = json.loads(raw)
    except (ValueError, RecursionError):
        raise SpecError(
            f"{path}: expected a Jupyter notebook (JSON), found text that is not JSON"
        ) from None
    cells = nb.get("cells") if isinstance(nb, dict) else None
    if not isinstance(cells, list):
        found = "no 'cells' list" if isinstance(nb, dict) else _kind_of(nb)
        raise SpecError(
            f"{path}: expected a Jupyter notebook (JSON with a list of cells), found {found}"
        )
    return cells


def check_notebook(raw: str, path: str) -> None:
    """Refuse a notebook whose cells, sources or outputs have the wrong types (read as JSON
    only, never run), naming the cell and the field: every reader of a notebook (``check``,
    ``draft``, ``extract``, the annotated page) goes by this one rule, so none of them
    reads past a malformed cell in silence.

    Raises:
        SpecError: The text is not a notebook, or a cell's field has the wrong type.
    """
    for k, c in enumerate(notebook_cells(raw, path)):
        where = f"{path}: cells[{k}]"
        kind, _ = _cell(c, where)
        if kind == "code":
            _outputs(c, where)


def _cell(c: object, where: str) -> tuple[str, str]:
    """A cell's type and source text.

    Raises:
        SpecError: A cell that is not an object, of an unknown type, or with a source
            that is not text.
    """
    if not isinstance(c, dict):
        raise SpecError(f"{where}: expected a cell (a JSON object), found {_kind_of(c)}")
    kind = c.get("cell_type")
    if kind not in _CELL_TYPES:
        raise SpecError(
            f"{where}.cell_type: expected one of {', '.join(_CELL_TYPES)}, found {kind!r:.60}"
        )
    return str(kind), _notebook_text(c.get("source", ""), f"{where}.source")


def _outputs(c: dict[str, Any], where: str) -> list[str]:
    """The text each output of a code cell prints (an error output prints none to read).

    Raises:
        SpecError: Outputs that are not a list of output objects of a known type, or whose
            text is not text.
    """
    outputs = c.get("outputs", [])
    if outputs is None:
        return []
    if not isinstance(outputs, list):
        raise SpecError(f"{where}.outputs: expected a list of outputs, found {_kind_of(outputs)}")
    out = []
    for n, o in enumerate(outputs):
        at = f"{where}.outputs[{n}]"
        if not isinstance(o, dict):
            raise SpecError(f"{at}: expected an output (a JSON object), found {_kind_of(o)}")
        kind = o.get("output_type")
        if kind not in _OUTPUT_TYPES:
            raise SpecError(
                f"{at}.output_type: expected one of {', '.join(_OUTPUT_TYPES)}, found {kind!r:.60}"
            )
        if kind == "stream":
            text = _notebook_text(o.get("text", ""), f"{at}.text")
        elif kind == "error":
            continue
        else:
            data = o.get("data", {})
            if not isinstance(data, dict):
                raise SpecError(f"{at}.data: expected a table of formats, found {_kind_of(data)}")
            if data.get("text/plain") is None:
                continue
            text = _notebook_text(data["text/plain"], f"{at}.data.text/plain")
        out.append(text)
    return out


def _segments_of_notebook(raw: str, path: str) -> list[_Segment]:
    """The markdown cells and the printed outputs of the code cells (nbformat 4, never run).

    Raises:
        SpecError: For anything that is not a notebook, naming the cell and the field.
    """
    cells = notebook_cells(raw, path)
    out: list[_Segment] = []
    for k, c in enumerate(cells):
        where = f"{path}: cells[{k}]"
        kind, src = _cell(c, where)
        if kind == "markdown":
            out.extend(_segments_of_text(src, cell=k))
        elif kind == "code":
            name = _printed_variable(src)
            for text in _outputs(c, where):
                seg = _Segment(text, 1, False, k, code_name=name)
                seg.extra["output"] = "1"
                out.append(seg)
    return out


def _printed_variable(src: str) -> str | None:
    """The name a code cell shows: its last line ``A``, ``print(A)`` or ``display(A)``."""
    lines = [
        ln.strip()
        for ln in src.strip().splitlines()
        if ln.strip() and not ln.strip().startswith("#")
    ]
    if not lines:
        return None
    last = lines[-1]
    m = re.fullmatch(r"(?:print|display)\(\s*([A-Za-z_][\w.]*)\s*\)|([A-Za-z_][\w.]*)", last)
    if m:
        return m.group(1) or m.group(2)
    m = re.fullmatch(r"([A-Za-z_]\w*)\s*=.*", last)
    return m.group(1) if m else None


# ---------------------------------------------------------------------------
# Finding printed values


#: What separates two statements in one maths span: ``Q_1=…, K_1=…``, ``a = 1 \\qquad b = 2``,
#: a line break ``\\\\`` outside an environment.
_STATEMENT_SEPARATORS = (
    "\\Rightarrow",
    "\\Longrightarrow",
    "\\qquad",
    "\\quad",
    "\\\\",
    ";",
    "\\implies",
    ",",
)


def _split_top(text: str, seps: tuple[str, ...]) -> list[str]:
    """Split at separators that are outside braces, brackets and environments."""
    parts: list[str] = []
    depth = 0
    env = 0
    start = 0
    i = 0
    while i < len(text):
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
                        re.fullmatch(r"\\[A-Za-z]+", sep)  # \quad is not the start of \quadrant
                        and text[i + len(sep) : i + len(sep) + 1].isalpha()
                    )
                ):
                    parts.append(text[start:i])
                    start = i + len(sep)
                    i = start - 1
                    break
        i += 1
    parts.append(text[start:])
    return [p.strip() for p in parts if p.strip()]


#: LaTeX spacing written between the entries of a list or around a number (``[0.198, \\; 0.401]``).
_LATEX_SPACING = re.compile(
    r"\\[,;:! ]|\\(?:q?quad|enspace|thinspace|medspace|thickspace|negthinspace)(?![A-Za-z])|~"
)


def _numeric_cell(text: str) -> str | None:
    t = _LATEX_SPACING.sub("", text.strip()).replace(" ", "")
    t = re.sub(r"^\{(.*)\}$", r"\1", t)
    if _INFINITY.match(t):
        return "-inf"
    t = t.replace("−", "-")
    return t if _NUMBER_RE.match(t) else None


def _matrix_rows(piece: str) -> tuple[tuple[str, ...], ...] | None:
    """The rows of a numeric matrix environment or bracketed list, verbatim; else None."""
    s = piece.strip()
    s = re.sub(r"(\\end\{\w+\}|\])\s*[.,;:]$", r"\1", s)  # "…\end{bmatrix}." ends a sentence
    s = re.sub(r"^\\left\s*[\[(]\s*|\s*\\right\s*[\])]\s*$", "", s)
    s = re.sub(r"\(\s*\d+\s*\\times\s*\d+\s*\)\s*$", "", s).strip()  # (3\times 6) shape notes
    s = re.sub(r"^\\left\s*[\[(]\s*|\s*\\right\s*[\])]\s*$", "", s)
    m = re.fullmatch(r"\\begin\{(\w+)\}(?:\{[^}]*\})?(.*)\\end\{\1\}", s, re.S)
    if m:
        rows = []
        for raw_row in re.split(r"\\\\", m.group(2)):
            if not raw_row.strip() or raw_row.strip() == "\\hline":
                continue
            cells = [_numeric_cell(c) for c in raw_row.replace("\\hline", "").split("&")]
            if any(c is None for c in cells):
                return None
            rows.append(tuple(c for c in cells if c is not None))
        return tuple(rows) if rows and len({len(r) for r in rows}) == 1 else None
    m = re.fullmatch(r"\[(.*)\]", s, re.S)
    if m and "[" not in m.group(1):
        cells = [_numeric_cell(c) for c in _LATEX_SPACING.sub(" ", m.group(1)).split(",")]
        if cells and all(c is not None for c in cells):
            return (tuple(c for c in cells if c is not None),)
    return None


def _label(piece: str) -> str | None:
    """A label written as maths (``Q_1``, ``S_1+M``, ``h_{\\text{AI}}``), in plain form."""
    p = piece.strip()
    if not p or _numeric_cell(p) is not None or "\\begin" in p:
        return None
    try:
        plain = latexmath.label_text(p, where="label")
    except ExpressionError:
        return None
    return plain if len(plain) <= 60 and not re.search(r"\d\.\d", plain) else None


def _is_arithmetic(piece: str) -> bool:
    """Literals combined by operators or functions (not a bare number, name or matrix)."""
    if _numeric_cell(piece) is not None or _matrix_rows(piece) is not None:
        return False
    try:
        plain = latexmath.to_plain(piece, where="arithmetic")
    except ExpressionError:
        return False
    if re.search(
        r"[A-Za-z]", re.sub(r"\b(?:e|sqrt|exp|ln|log|max|min|sum|pi|sin|cos|tanh)\b", "", plain)
    ):
        return False  # names (Q_1, d_model): symbolic, not displayed arithmetic
    return bool(re.search(r"\d", plain)) and bool(
        re.search(r"[-+*/×·÷^∘√]|sqrt|exp|ln|log|sum|max|min|sin|cos|tanh", plain)
    )


def _math_items(seg: _Segment) -> list[Found]:
    out: list[Found] = []
    context = " ".join(seg.text.split())[:200]
    statements = _split_top(seg.text, _STATEMENT_SEPARATORS)
    # A comma inside a bracket list is not a separator (the list is one piece); a
    # top-level comma splits "Q_1=…,K_1=…" into statements.
    widths = {
        len(rows[0])
        for st in statements
        for piece in _split_top(st, ("=",))[1:]
        if (rows := _matrix_rows(piece)) is not None and len(rows) == 1
    }
    for place, st in enumerate(statements):
        # "0.474[0,0]+0.241[1.1,0.1]": a coefficient written right before a vector scales it
        st = _IMPLICIT_SCALE.sub(r"\1\\times[", st)
        arrow = _arrow_items(st, seg, context)
        if arrow:  # "[0.243, -1.213] \\to [0.243, 0]": a row before and after an element-wise step
            out.extend(arrow)
            continue
        chain = _split_top(st, ("\\approx", "≈", "=", "\\simeq"))
        if not chain:
            continue
        label = _label(chain[0]) if len(chain) > 1 else None
        if len(chain) > 1 and all(_numeric_cell(p) is not None for p in chain):
            # "1.190 = 1.190": a number repeated as the result of a one-term sum
            for piece in chain:
                out.append(
                    Found(
                        "number",
                        seg.extra.get("prose_label") or f"line {seg.line}",
                        seg.line,
                        ((_numeric_cell(piece) or "",),),
                        cell=seg.cell,
                        context=context,
                    )
                )
            continue
        last = chain[-1]
        last_rows = _matrix_rows(last)
        last_number = _numeric_cell(last)
        # Displayed arithmetic: every arithmetic piece of the chain against the printed end,
        # and against each number printed on the way (``= 2.3 × 4 = 9.2 ≈ 9``); the links
        # before one printed result are one chain, one printed number.
        if len(chain) > 1 and (last_number is not None or last_rows is not None):
            # one of the two is set
            ends: list[tuple[int, tuple[tuple[str, ...], ...]]] = [
                (k, ((cast(str, _numeric_cell(p)),),))
                for k, p in enumerate(chain[1:-1], 1)
                if _numeric_cell(p) is not None
            ]
            ends.append(
                (
                    len(chain) - 1,
                    last_rows if last_rows is not None else ((cast(str, last_number),),),
                )
            )
            for end, printed in ends:
                for piece in chain[:end]:
                    if _is_arithmetic(piece):
                        expression = latexmath.to_plain(piece, where="arithmetic")
                        try:
                            latexmath.parse(piece, where="arithmetic")
                        except ExpressionError:
                            continue
                        out.append(
                            Found(
                                "arithmetic",
                                label or f"line {seg.line}",
                                seg.line,
                                printed,
                                expression,
                                piece,
                                seg.cell,
                                context,
                                chain=f"{seg.cell}:{seg.line}:{place}:{end}",
                            )
                        )
        for position, piece in enumerate(chain[:-1]):
            if not _is_arithmetic(piece) and "[" in piece and re.search(r"[A-Za-z]", piece):
                # "[1,0,1,0,0,0]W_Q^{(1)}": a printed row multiplied by a named matrix
                out.extend(_operand_vectors(piece, label, seg.line, seg.cell, context))
            if _is_arithmetic(piece):
                out.extend(_operand_vectors(piece, label, seg.line, seg.cell, context))
                if position > 0:  # "… = 0.01 + 1.21 = 1.22": the terms are printed results too
                    for term in re.findall(r"(?<![\w.])\d+\.\d+(?![\w.])", piece):
                        out.append(
                            Found(
                                "number",
                                f"{label or 'line ' + str(seg.line)} (term)",
                                seg.line,
                                ((term,),),
                                cell=seg.cell,
                                context=context,
                            )
                        )
            if re.fullmatch(r"\s*\d+\s*/\s*\d+\s*", piece):
                out.append(
                    Found(
                        "number",
                        label or f"line {seg.line}",
                        seg.line,
                        ((piece.replace(" ", ""),),),
                        cell=seg.cell,
                        context=context,
                    )
                )
        if len(chain) == 1 and _numeric_cell(chain[0]) is not None:
            out.append(
                Found(
                    "number",
                    seg.extra.get("prose_label") or f"line {seg.line}",
                    seg.line,
                    ((_numeric_cell(chain[0]) or "",),),
                    cell=seg.cell,
                    context=context,
                )
            )
        for piece in chain[1:] if len(chain) > 1 else chain:
            rows = _matrix_rows(piece)
            if rows is None and len(widths) == 1:
                rows = _dotted(piece, next(iter(widths)))
            if rows is not None:
                kind = "vector" if len(rows) == 1 and piece.strip().startswith("[") else "matrix"
                out.append(
                    Found(
                        kind,
                        label or seg.heading or f"line {seg.line}",
                        seg.line,
                        rows,
                        cell=seg.cell,
                        context=context,
                    )
                )
            elif piece is last and len(chain) > 1 and last_number is not None and label:
                out.append(
                    Found(
                        "number",
                        label or f"line {seg.line}",
                        seg.line,
                        ((last_number,),),
                        cell=seg.cell,
                        context=context,
                    )
                )
    return out


_DOTTED = re.compile(
    r"^\[\s*([^,\[\]]+?)\s*,\s*(?:\\[lc]?dots|\\dotsc|…|\.\.\.)\s*,\s*([^,\[\]]+?)\s*\]$"
)


def _dotted(piece: str, width: int) -> tuple[tuple[str, ...], ...] | None:
    """``[0.1, \\dots, 0.1]`` beside vectors of ``width`` entries: ``width`` copies of 0.1.

    Only a constant run is filled in (its first and last entries are one number), and
    only when every other vector of the statement list has that one width.
    """
    m = _DOTTED.match(piece.strip())
    if m is None:
        return None
    first, last = _numeric_cell(m.group(1)), _numeric_cell(m.group(2))
    if first is None or first != last:
        return None
    return ((first,) * width,)


_IMPLICIT_SCALE = re.compile(r"(?<![\w.^_{}\]])(\d+\.\d+)\s*\[")
_ARROWS = ("\\to", "\\rightarrow", "\\mapsto", "→", "\\longrightarrow")


def _arrow_items(statement: str, seg: _Segment, context: str) -> list[Found]:
    """``[a, b] \\to [c, d]``: every side is a printed vector (a row before and after a step)."""
    sides = _split_top(statement, _ARROWS)
    if len(sides) < 2:
        return []
    rows = [_matrix_rows(s) for s in sides]
    if any(r is None or len(r) != 1 for r in rows):
        return []
    label = seg.extra.get("prose_label") or f"line {seg.line}"
    return [
        Found(
            "vector",
            f"{label} ({'before' if k == 0 else 'after'})",
            seg.line,
            r,
            cell=seg.cell,
            context=context,
        )
        for k, r in enumerate(rows)
        if r is not None
    ]


_WEIGHTED = re.compile(r"^\s*(-?\d+(?:\.\d+)?)\s*(?:×|\\times|\*|·|\\cdot)?\s*\[[^\[\]]*\]\s*$")


def _weights(piece: str) -> tuple[str, ...] | None:
    """The coefficients of a weighted sum of vectors, ``0.264×[2,2,1] + 0.471×[1,3,1]``."""
    terms = re.split(r"\s*\+\s*(?![^\[]*\])", piece.strip())
    if len(terms) < 2:
        return None
    coefficients = []
    for t in terms:
        m = _WEIGHTED.match(t)
        if m is None:
            return None
        coefficients.append(m.group(1))
    return tuple(coefficients)


def _operand_vectors(
    piece: str, label: str | None, line: int, cell: int | None, context: str
) -> list[Found]:
    """Vectors written out inside displayed arithmetic (``[0,1,1]+[0.1,0.1,0.1]``) are printed too,
    and so are the weights of a weighted sum (``0.264×[2,2,1] + 0.471×[1,3,1]``)."""
    out = []
    weights = _weights(piece)
    if weights is not None:
        out.append(
            Found(
                "vector",
                f"{label or 'line ' + str(line)} (weights)",
                line,
                (weights,),
                cell=cell,
                context=context,
            )
        )
    for m in re.finditer(r"\[[^\[\]]*\]", piece):
        rows = _matrix_rows(m.group(0))
        if rows is not None and len(rows[0]) >= 2:
            out.append(
                Found(
                    "vector",
                    f"{label or 'line ' + str(line)} (operand)",
                    line,
                    rows,
                    cell=cell,
                    context=context,
                )
            )
    return out


_REPR = re.compile(
    r"(?:(?P<name>[A-Za-z_]\w*)\s*[:=]\s*)?(?P<kind>array|tensor|tf\.Tensor)?\(?\s*(?P<body>\[[\[\]\d\s.,eE+\-−]*\])",
    re.S,
)


def _text_items(seg: _Segment) -> list[Found]:
    if seg.extra.get("output"):
        return _output_items(seg)
    out: list[Found] = []
    lines = text_lines(seg.text)
    k = 0
    while k < len(lines):
        if _ascii_blocks(lines[k]):
            start = k
            while k < len(lines) and _ascii_blocks(lines[k]):
                k += 1
            header = lines[start - 1] if start > 0 else ""
            out.extend(_ascii_matrices(lines[start:k], header, seg, start))
            continue
        if lines[k].strip().startswith("|"):
            start = k
            while k < len(lines) and lines[k].strip().startswith("|"):
                k += 1
            table = _markdown_table(lines[start:k])
            if table is not None:
                label, rows = table
                line = seg.line + start
                out.append(
                    Found(
                        "matrix",
                        label or f"line {line}",
                        line,
                        rows,
                        cell=seg.cell,
                        context=lines[start].strip()[:200],
                    )
                )
            continue
        j = k + 1
        while j < len(lines) and _continues(lines, k, j):
            j += 1
        if j > k + 1:  # an equation continued on the lines below it: read as one line
            joined = " ".join(ln.strip() for ln in lines[k:j])
            out.extend(_line_items(joined, seg.line + j - 1, seg))
        else:
            out.extend(_line_items(lines[k], seg.line + k, seg))
        k = j
    return out


#: A line that carries on the equation above it: ``     = 1.0 / 4`` (not a rule ``====``).
_CONTINUATION = re.compile(r"^\s*(?:=(?!=)|≈)\s*\S")


def _continues(lines: list[str], first: int, at: int) -> bool:
    """Whether ``lines[at]`` continues the equation begun at ``lines[first]``.

    Hand-worked arithmetic in a code block is often aligned under its ``=``::

        mean = (0.1 + 0.3 + (-0.2) + 0.8) / 4
             = 1.0 / 4
             = 0.25

    A continuation starts with ``=`` or ``≈`` and the equation it continues has one.
    """
    return bool(_CONTINUATION.match(lines[at])) and any(
        ("=" in ln or "≈" in ln) for ln in lines[first:at]
    )


_ASCII_BLOCK = re.compile(r"\|\s*((?:[-−]?\d+(?:\.\d+)?\s+)*[-−]?\d+(?:\.\d+)?)\s*\|")


def _ascii_blocks(line: str) -> list[re.Match[str]]:
    """The ``| 1 0 1 |`` blocks of a line of an ASCII-art matrix (two or more numbers each)."""
    blocks = list(_ASCII_BLOCK.finditer(line))
    return [b for b in blocks if len(b.group(1).split()) >= 2] if blocks else []


def _ascii_matrices(block: list[str], header: str, seg: _Segment, offset: int) -> list[Found]:
    """Matrices drawn side by side with ``|`` rules, labelled by ``X =`` before or above them."""
    per_line = [_ascii_blocks(ln) for ln in block]
    width = max(len(b) for b in per_line)
    names = re.findall(r"([A-Za-z_][\w^()]*)\s*=", header) if header.strip().endswith("=") else []
    out = []
    for j in range(width):
        rows = [
            tuple(c.replace("−", "-") for c in b[j].group(1).split())
            for b in per_line
            if len(b) > j
        ]
        if not rows or len({len(r) for r in rows}) != 1:
            continue
        lead = block[0][: per_line[0][0].start()].strip() if j == 0 and per_line[0] else ""
        m = re.fullmatch(r"([A-Za-z_][\w^()]*)\s*=", lead)
        label = m.group(1) if m else (names[j] if j < len(names) else f"line {seg.line + offset}")
        line = seg.line + offset
        out.append(
            Found("matrix", label, line, tuple(rows), cell=seg.cell, context=block[0].strip()[:200])
        )
    return out


_VECTOR_IN_TEXT = re.compile(r"\[[^\[\]]*\d[^\[\]]*\]")

#: A tuple of numbers in parentheses, ``(0.1433, 0.2799, -0.7988)``, not a call ``f(1, 2)``.
_TUPLE_IN_TEXT = re.compile(r"(?<![\w)\]])\(([^()\[\]]*)\)")


def _tuple_rows(piece: str) -> tuple[tuple[str, ...], ...] | None:
    """A parenthesised tuple as one row, when it has three or more entries or a decimal.

    ``(0, 0.6698, 0.3302)`` and ``(0.6698, 0.3302)`` are vectors a worksheet writes; a
    pair of whole numbers, ``(2, 3)``, is more often a shape or a position and stays prose.
    """
    cells = [_numeric_cell(c) for c in piece.strip()[1:-1].split(",")]
    if len(cells) < 2 or any(c is None for c in cells):
        return None
    row = tuple(c for c in cells if c is not None)
    if len(row) < 3 and not any("." in c for c in row):
        return None
    return (row,)


def _line_items(line: str, number: int, seg: _Segment) -> list[Found]:
    """Arithmetic, labelled numbers and bracketed vectors written in a plain-text line."""
    out: list[Found] = []
    # a bullet ("- ", "• ", "* ") or bold marks go; a minus sign before a number stays
    text = re.sub(r"^(?:[•*\s]|-(?![\d.]))+", "", line.strip()).strip()
    if not text:
        return out
    context = text[:200]
    seen_vectors: set[int] = set()
    for place, fragment in enumerate(_fragments(text)):
        label, chain = _plain_chain(fragment)
        if len(chain) == 1 and label and _numeric_cell(chain[0].rstrip(".:;,")) is not None:
            value = _numeric_cell(chain[0].rstrip(".:;,")) or ""
            out.append(Found("number", label, number, ((value,),), cell=seg.cell, context=context))
            continue
        if len(chain) < 2:
            continue
        last = chain[-1]
        rows = _matrix_rows(last) if last.startswith("[") else None
        end = _numeric_cell(last.rstrip(".:;,"))
        if rows is not None:
            printed = rows
        elif end is not None:
            printed = ((end,),)
        else:
            continue
        # each number printed on the way (``= 2.3 × 4 = 9.2 ≈ 9``) is a result of the links
        # before it; the links before one printed result are one chain, one printed number
        ends = [
            (k, ((cast(str, _numeric_cell(p)),),))
            for k, p in enumerate(chain[1:-1], 1)
            if _numeric_cell(p) is not None
        ]
        for k, p in [*ends, (len(chain) - 1, printed)]:  # the last is the line's own result
            for piece in chain[:k]:
                expression = _plain_arithmetic(piece)
                if expression is not None:
                    out.append(
                        Found(
                            "arithmetic",
                            label or f"line {number}",
                            number,
                            p,
                            expression,
                            piece,
                            seg.cell,
                            context,
                            chain=f"{seg.cell}:{number}:{place}:{k}",
                        )
                    )
                out.extend(
                    _operand_vectors(piece, label or f"line {number}", number, seg.cell, context)
                )
        if rows is not None:
            seen_vectors.add(id(last))
            out.append(
                Found(
                    "vector",
                    label or f"line {number}",
                    number,
                    rows,
                    cell=seg.cell,
                    context=context,
                )
            )
        elif label and not any(_plain_arithmetic(p) for p in chain[:-1]):
            out.append(Found("number", label, number, printed, cell=seg.cell, context=context))
    if not out:
        spans = [
            m.span()
            for m in _VECTOR_IN_TEXT.finditer(text)
            if (r := _matrix_rows(m.group(0))) is not None and len(r[0]) >= 2
        ]
        tuples = [m for m in _TUPLE_IN_TEXT.finditer(text) if _tuple_rows(m.group(0)) is not None]
        spans += [m.span() for m in tuples]
        for m in re.finditer(
            r"(?<![\w.])((?:[-−](?=\d))?\d+\.\d+)(?!\w|\.\d|\s*%)", text
        ):  # a decimal in prose ("sums to 1.0"; "-0.7988" keeps its sign; "(25.0%)" beside
            # 0.250 restates it on another scale, and is not read)
            if any(a <= m.start() < b for a, b in spans):
                continue  # an entry of a vector on the line (``-0.4`` is not the number 0.4)
            out.append(
                Found(
                    "number",
                    f"line {number}",
                    number,
                    ((m.group(1).replace("−", "-"),),),
                    cell=seg.cell,
                    context=context,
                )
            )
        for m in tuples:  # a tuple written with parentheses: ``h = (0.6698, 0.3302)``
            rows = _tuple_rows(m.group(0))
            before = text[: m.start()].rstrip()
            lm = re.search(r"([A-Za-z_]\w*)\s*=$", before)
            out.append(
                Found(
                    "vector",
                    lm.group(1) if lm else f"line {number}",
                    number,
                    rows or (),
                    cell=seg.cell,
                    context=context,
                )
            )
        for m in _VECTOR_IN_TEXT.finditer(text):
            rows = _matrix_rows(m.group(0))
            if rows is not None and len(rows[0]) >= 2:
                before = text[: m.start()].rstrip()
                lm = re.search(
                    r"([A-Za-z_][\w]*)\s*[=:]?$",
                    before.rstrip("=: ").strip(),
                )
                label = lm.group(1) if lm and before.endswith(("=", ":")) else None
                out.append(
                    Found(
                        "vector",
                        label or f"line {number}",
                        number,
                        rows,
                        cell=seg.cell,
                        context=context,
                    )
                )
    return out


def _fragments(text: str) -> list[str]:
    """Split prose at top-level commas and semicolons that are followed by a space."""
    parts, depth, start = [], 0, 0
    for i, ch in enumerate(text):
        if ch in "([":
            depth += 1
        elif ch in ")]":
            depth -= 1
        elif depth == 0 and ch in ",;" and text[i + 1 : i + 2] == " ":
            parts.append(text[start:i])
            start = i + 1
    parts.append(text[start:])
    return [p.strip() for p in parts if p.strip()]


def _plain_chain(fragment: str) -> tuple[str | None, list[str]]:
    """``label: a = b ≈ c`` as the label and the pieces of the chain."""
    label = None
    m = re.match(r"^([^:=≈\[\]()]{1,60}):\s+(.*)$", fragment)
    if m:
        label, fragment = m.group(1).strip(), m.group(2)
    pieces = [p.strip() for p in re.split(r"\s*(?:≈|=)\s*", fragment)]
    if pieces:  # a check mark after the result affirms it: ``≈ 0.000 ✅``
        pieces[-1] = re.sub(r"\s*[✅✓✔☑]+\s*$", "", pieces[-1])
    pieces = [
        re.sub(r"\s*\(.*?\)\s*$", "", p)
        if i == len(pieces) - 1 and not p.startswith(("(", "["))
        else p
        for i, p in enumerate(pieces)
    ]
    if (
        pieces
        and label is None
        and re.fullmatch(r"[A-Za-z][\w ]{0,40}", pieces[0])
        and len(pieces) > 1
    ):
        words = pieces[0].split()
        label = pieces[0]
        pieces = pieces[1:] if len(words) > 0 and not _plain_arithmetic(pieces[0]) else pieces
        if len(words) > 1:  # "With d_k = 3": prose before a name; keep the name
            label = words[-1]
    return label, [p for p in pieces if p]


def _plain_arithmetic(piece: str) -> str | None:
    """The piece as an expression when it is arithmetic on literals, else None."""
    if _numeric_cell(piece) is not None or not re.search(r"\d", piece):
        return None
    if not re.search(
        r"[-+*/×·÷^√²³]|\b(?:sqrt|exp|ln|log|max|min|sum|relu|sin|cos|tanh)\(", piece, re.I
    ):
        return None
    if _matrix_rows(piece) is not None:
        return None
    try:
        expr = latexmath.parse(piece, where="arithmetic")
    except ExpressionError:
        return None
    return None if expr.references else expr.text


def _output_items(seg: _Segment) -> list[Found]:
    """Arrays a code cell printed: ``array([[…]])``, ``tensor([[…]])``, ``tf.Tensor(…)``, or a bare list."""
    out: list[Found] = []
    for m in _REPR.finditer(seg.text):
        rows = _nested_rows(m.group("body"))
        if rows is None:
            continue
        line = seg.line + seg.text.count("\n", 0, m.start())
        label = m.group("name") or seg.code_name or f"line {line}"
        kind = "vector" if len(rows) == 1 else "matrix"
        first = seg.text[m.start() :].splitlines()[0].strip()[:200]
        out.append(Found(kind, label, line, rows, cell=seg.cell, context=first))
    return out


def _nested_rows(body: str) -> tuple[tuple[str, ...], ...] | None:
    if "..." in body or "…" in body:
        return None
    inner = body.strip()[1:-1].strip()
    rows = re.findall(r"\[([^\[\]]*)\]", inner) if inner.startswith("[") else [inner]
    out = []
    for r in rows:
        cells = [c.strip() for c in r.replace("\n", " ").split(",") if c.strip()]
        cells = [_numeric_cell(c) or "" for c in cells]
        if not cells or not all(cells):
            return None
        out.append(tuple(c.rstrip(".") if c.endswith(".") else c for c in cells))
    return tuple(out) if out and len({len(r) for r in out}) == 1 else None


def _markdown_table(block: list[str]) -> tuple[str | None, tuple[tuple[str, ...], ...]] | None:
    rows = [[c.strip().strip("*") for c in ln.strip().strip("|").split("|")] for ln in block]
    rows = [r for r in rows if not all(re.fullmatch(r":?-{2,}:?", c) for c in r)]
    numeric = []
    label = None
    for r in rows:
        cells = [_numeric_cell(c) for c in r]
        if all(c is not None for c in cells[1:]) and cells[1:] and cells[0] is None:
            numeric.append(tuple(c for c in cells[1:] if c is not None))
        elif all(c is not None for c in cells) and cells:
            numeric.append(tuple(c for c in cells if c is not None))
        elif label is None:
            label = r[0] or None
    if not numeric or len({len(r) for r in numeric}) != 1:
        return None
    return label, tuple(numeric)


#: Environments whose rows are equations aligned at ``&`` (``&= 1.333 \\\\``).
_ALIGNED = re.compile(
    r"\\begin\{(aligned|alignedat|align\*?|eqnarray\*?|flalign\*?|gather\*?|gathered|split"
    r"|multline\*?)\}(?:\{\d+\})?(?P<body>.*?)\\end\{\1\}",
    re.S,
)
#: A row, or a display, that carries on the equation before it: ``&= 1.333``, ``$$= 13.520$$``.
_CARRIES_ON = re.compile(r"^\s*(?:=(?!=)|≈|\\approx(?![A-Za-z])|\\simeq(?![A-Za-z]))")
_ROW_TAGS = re.compile(r"\\(?:nonumber|notag)(?![A-Za-z])|\\(?:tag|label)\*?\{[^{}]*\}")


def _unaligned(seg: _Segment) -> list[_Segment]:
    """An aligned environment's rows as statements of their own, each at its own line.

    ``\\begin{aligned} \\mu &= \\frac{…}{3} \\\\ &= 1.333 \\end{aligned}`` is one equation
    written on two rows: a row that starts with its relation carries on the row above,
    and the joined equation is read at the line of its last row (where its result is
    printed), as an equation continued under its ``=`` in plain text is. The ``&``
    alignment marks outside matrices are dropped; other rows are separate statements.
    """
    m = _ALIGNED.search(seg.text)
    if m is None:
        return [seg]
    out: list[_Segment] = []
    before, after = seg.text[: m.start()], seg.text[m.end() :]
    body, offset = m.group("body"), m.start("body")
    rows: list[tuple[str, int]] = []  # text, offset of its start in seg.text
    depth = env = start = 0
    i = 0
    while i <= len(body):
        if i == len(body) or (depth == 0 and env == 0 and body.startswith("\\\\", i)):
            rows.append((body[start:i], offset + start))
            start = i = i + 2
            continue
        if body.startswith("\\begin{", i):
            env += 1
        elif body.startswith("\\end{", i):
            env -= 1
        elif body[i] in "{[(":
            depth += 1
        elif body[i] in "}])":
            depth -= 1
        i += 1
    groups: list[tuple[str, int]] = []
    for raw, at in rows:
        text = " ".join(_split_top(_ROW_TAGS.sub("", raw), ("&",)))
        text = re.sub(r"^\[[^\]]*\]", "", text.strip())  # the spacing of "\\[4pt]"
        if not text.strip():
            continue
        line = seg.line + seg.text[: at + len(raw) - len(raw.lstrip())].count("\n")
        if groups and _CARRIES_ON.match(text):
            groups[-1] = (f"{groups[-1][0]} {text}", line)
        else:
            groups.append((text, line))
    if groups and before.strip():
        groups[0] = (f"{before.strip()} {groups[0][0]}", groups[0][1])
    for text, line in groups:
        out.append(
            _Segment(text, line, True, seg.cell, seg.heading, seg.code_name, dict(seg.extra))
        )
    if after.strip():
        rest = _Segment(
            after, seg.line + seg.text[: m.end()].count("\n"), True, seg.cell, seg.heading
        )
        out.extend(_unaligned(rest))
    return out


def _maths_segments(segments: list[_Segment]) -> list[_Segment]:
    """The segments with aligned rows split out and continued displays joined.

    A display that starts with its relation (``$$= [3.406, 4.406]$$`` under
    ``$$[0.198(1) + …]$$``) carries on the maths span right before it (nothing but
    white space between them): the two are read as one equation, at the later line.
    """
    out: list[_Segment] = []
    for seg in segments:
        for part in _unaligned(seg) if seg.math else [seg]:
            prev = out[-1] if out else None
            if (
                part.math
                and prev is not None
                and prev.math
                and prev.cell == part.cell
                and not prev.extra.get("output")
                and _CARRIES_ON.match(part.text)
            ):
                out[-1] = _Segment(
                    f"{prev.text} {part.text.strip()}",
                    part.line,
                    True,
                    prev.cell,
                    prev.heading,
                    prev.code_name,
                    dict(prev.extra),
                )
            else:
                out.append(part)
    return out


def extract_text(text: str, kind: str = "md", *, path: str = "<text>") -> list[Found]:
    """Find every printed value in an article's text; see the module docstring.

    Args:
        text: The article.
        kind: ``"md"``, ``"txt"``, ``"tex"`` or ``"ipynb"``.
        path: The article's name, for error messages.
    """
    segments = _maths_segments(
        _segments_of_notebook(text, path) if kind == "ipynb" else _segments_of_text(text)
    )
    found: list[Found] = []
    for k, seg in enumerate(segments):
        before = segments[k - 1] if k else None
        if seg.math and before is not None and not before.math:
            words = re.findall(
                r"[A-Za-z_]+", before.text.splitlines()[-1] if before.text.splitlines() else ""
            )
            words = [
                w
                for w in words
                if w.lower()
                not in {
                    "is",
                    "are",
                    "of",
                    "the",
                    "a",
                    "an",
                    "so",
                    "only",
                    "its",
                    "gives",
                    "and",
                    "was",
                    "be",
                }
            ]
            if words:
                seg.extra["prose_label"] = words[-1]
        items = _math_items(seg) if seg.math else _text_items(seg)
        # a chain is one statement of one segment: several on a line are several chains
        found.extend(replace(f, chain=f"{k}:{f.chain}") if f.chain else f for f in items)
    return found + _rows_of_arrows(found)


def statements(
    text: str, kind: str = "md", *, path: str = "<text>"
) -> list[tuple[int, int | None, str]]:
    """Every maths statement of an article, for readers of its equations.

    Returns ``(line, cell, text)`` for each top-level statement of a maths span
    (``S_1 = \\frac{Q_1K_1^T}{\\sqrt{2}} = …``) and for each line of plain text,
    in the article's order. Nothing is parsed beyond splitting.
    """
    segments = _maths_segments(
        _segments_of_notebook(text, path) if kind == "ipynb" else _segments_of_text(text)
    )
    out: list[tuple[int, int | None, str]] = []
    for seg in segments:
        if seg.extra.get("output"):
            continue
        if seg.math:
            for st in _split_top(seg.text, _STATEMENT_SEPARATORS):
                out.append((seg.line, seg.cell, st))
        else:
            for k, line in enumerate(text_lines(seg.text)):
                if line.strip():
                    out.append((seg.line + k, seg.cell, line.strip()))
    return out


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
                )
            )
        run.clear()

    for f in found:
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
    suffix = Path(path).suffix.lower().lstrip(".")
    kind = suffix if suffix in ("md", "tex", "ipynb") else "txt"
    return extract_text(text, kind, path=str(path))


# ---------------------------------------------------------------------------
# Writing a draft derivation

_INPUT_LABEL = re.compile(
    r"^(?:W|E|emb|embed|embedding|pos|PE|X_?emb|tokens?|vocab|weights?)(?:_|$|\b)", re.I
)


@functools.lru_cache(maxsize=4096)  # labels repeat: a long article asks for the same few
def _tensor_name(label: str) -> str | None:
    """A given-tensor name for a label (``W_Q^((1))`` → ``W_Q_1``), or None."""
    name = re.sub(r"[^A-Za-z0-9_]+", "_", label).strip("_")  # a TOML bare key is ASCII
    return name if name.isidentifier() and not name[0].isdigit() and len(name) <= 40 else None


def _toml_string(s: str) -> str:
    if s.isascii() and s.isprintable() and '"' not in s and "\\" not in s:
        return f'"{s}"'  # nothing to escape (the common case, fast)
    return toml_string(s)


def _printed(rows: tuple[tuple[str, ...], ...]) -> str:
    if len(rows) == 1:
        return _toml_string(" ".join(rows[0]))
    return toml_block("\n".join(" ".join(r) for r in rows))


def draft_toml(found: list[Found], *, source: str, title: str | None = None) -> str:
    """A draft derivation holding every found value (steps to be mapped: ``step = "?"``).

    What looks like an input (a label such as ``W_Q``, ``E`` or ``pos``) becomes
    a given tensor; every other matrix, vector or number becomes a claim; each
    displayed arithmetic line becomes an expression claim, ready to check.
    """
    lines = [
        comment(f"Draft derivation extracted by `symtf extract` from {source}."),
        "# Every printed string is copied verbatim, with its source line. Map each claim's",
        '# step (step = "?" until then; `symtf check --draft` suggests candidates), then',
        "# remove `draft = true`.",
        "",
        f"title = {_toml_string(title or 'Draft: ' + Path(source).name)}",
        f"source = {_toml_string(source)}",
        "draft = true",
        "",
        "[model]",
        'architecture = "none"   # replace with the article\'s model to check step claims',
        "",
    ]
    claims: list[str] = []
    tensors: list[str] = []
    tensor_names: set[str] = set()
    seen_labels: dict[str, int] = {}

    def unique(label: str) -> str:
        n = seen_labels.get(label, 0)
        seen_labels[label] = n + 1
        return label if n == 0 else f"{label} ({n + 1})"

    for f in found:
        where = f"line {f.line}" + (f", cell {f.cell}" if f.cell is not None else "")
        name = _tensor_name(f.label)
        if (
            f.kind in ("matrix", "vector")
            and name
            and _INPUT_LABEL.match(name)
            and name not in tensor_names
        ):
            tensor_names.add(name)
            tensors.append(f"{name} = {_printed(f.rows)}   {comment(f'{where}: {f.label}')}")
            continue
        block = ["[[claims]]", f"label = {_toml_string(unique(f.label))}"]
        if f.kind == "arithmetic":
            written = " ".join((f.latex or f.expression or "").split())
            block.append(f"expression = {_toml_string(written)}")
            if f.expression and f.expression != written:
                block.append(comment(f"read as: {f.expression[:300]}"))
        else:
            block.append('step = "?"')
        block.append(f"printed = {_printed(f.rows)}")
        block.append(f"source_line = {f.line}")
        if f.context:
            block.append(comment(f"{where}: {f.context[:160]}"))
        claims.append("\n".join(block))
    if tensors:
        lines += [
            "# What looks like the article's inputs, as given tensors for [steps] to use.",
            "[tensors]",
            *tensors,
            "",
        ]
    lines += ["\n\n".join(claims), ""]
    return "\n".join(lines)
