r"""The printed values of one maths span: matrices, vectors, numbers and displayed arithmetic.

A maths span (``$…$``, a display, an ``equation``/``align`` environment) is
split into statements (``Q_1=…, K_1=…``), each statement into the links of its
chain (``a = b \approx c``); each link is read as a label, a number, a matrix
or arithmetic on literals. Every value keeps the place of each of its entries.
"""

from __future__ import annotations

import re
from typing import cast

from symtf.draft.read.definitions import Definition, definition, expanded
from symtf.draft.read.items import (
    Found,
    Rows,
    Segment,
    expression_text,
    is_arithmetic,
    label_of,
    matrix_rows,
    numeric_cell,
    places_in,
    split_top_at,
    unwrapped_text,
)
from symtf.draft.read.listed import chain_links, list_terms
from symtf.draft.read.source import Text
from symtf.draft.read.source import spans as source_spans
from symtf.errors import ExpressionError
from symtf.language import latexmath

__all__ = ["STATEMENT_SEPARATORS", "math_items", "maths_segments"]

#: What separates two statements in one maths span: ``Q_1=…, K_1=…``, ``a = 1 \\qquad b = 2``,
#: a line break ``\\\\`` outside an environment.
STATEMENT_SEPARATORS = (
    "\\Rightarrow",
    "\\Longrightarrow",
    "\\qquad",
    "\\quad",
    "\\\\",
    ";",
    "\\implies",
    ",",
)
_RELATIONS = ("\\approx", "≈", "=", "\\simeq")

_IMPLICIT_SCALE = re.compile(r"(?<![\w.^_{}\]])(\d+\.\d+)\s*\[")
_ARROWS = ("\\to", "\\rightarrow", "\\mapsto", "→", "\\longrightarrow")
#: A decimal written in a link, with its sign when it opens a bracket (``(-2.5)^2``).
_TERM = re.compile(r"(?:(?<=[(\[{])[-−])?(?<![\w.])\d+\.\d+(?![\w.])")
_FRACTION = re.compile(r"\s*\d+\s*/\s*\d+\s*")
_BRACKETS = re.compile(r"\[[^\[\]]*\]")
#: A remark in words closing a statement, not maths: ``[0.41, 0.49] \ (\text{approx})``,
#: ``\quad \text{(rounded)}`` (letters, spaces and dots only: no number hides in it).
_REMARK = re.compile(
    r"(?:\\[ ,;:!]|\\quad|\\qquad|~|\s)*"
    r"(?:\(\s*\\text\{[A-Za-z .]+\}\s*\)|\\text\{\s*\([A-Za-z .]+\)\s*\})\s*$"
)

_SPACING = r"(?:\\[ ,;:!]|\\quad|\\qquad|~|\s)*"
#: A number restated as a percentage in brackets right after it, ``0.61\ (61\%)``:
#: the same value written again; the statement is read without it.
_AS_PERCENTAGE = re.compile(rf"(?<=\d){_SPACING}\(\s*\d+(?:\.\d+)?\s*\\?%\s*\)")
_INFORMATION = r"\\text\{\s*(nats?|bits?)\s*\}"
#: A value in units of information, and the same value in the other unit in brackets:
#: ``0.51 \;\text{nats} \; (\approx 0.74 \;\text{bits})``. The unit is a word, not
#: maths; the bracket states a conversion (one bit is ``ln 2`` nats).
_IN_UNITS = re.compile(
    rf"(?<![\w.])(-?\d+(?:\.\d+)?){_SPACING}{_INFORMATION}"
    rf"(?:{_SPACING}\(\s*(?:\\approx|≈|=)\s*(\d+(?:\.\d+)?){_SPACING}{_INFORMATION}\s*\))?"
    rf"{_SPACING}$"
)


class Collects:
    """What reads one piece of text with places (a maths statement, a prose line) and
    collects the values it finds there, each placed in that text.

    Attributes set by the reader: ``text``, ``seg`` (its segment), ``line`` (the line the
    values are reported on), ``context`` and ``out``.
    """

    text: Text
    seg: Segment
    line: int
    context: str
    out: list[Found]

    def found(
        self,
        kind: str,
        label: str,
        rows: Rows,
        span: tuple[int, int],
        *,
        from_end: bool = False,
        expression: str | None = None,
        latex: str | None = None,
        chain: str = "",
    ) -> None:
        """Keep a value found at ``span`` of the text."""
        self.out.append(
            Found(
                kind,
                label,
                self.line,
                rows,
                expression,
                latex,
                self.seg.cell,
                self.context,
                chain,
                places_in(self.text, span[0], span[1], rows, from_end=from_end),
            )
        )


class _Statement(Collects):
    """One statement of a maths span, as a text with places, and what it makes."""

    def __init__(
        self,
        seg: Segment,
        text: Text,
        place: int,
        context: str,
        definitions: dict[str, Definition] | None = None,
        quantities: dict[str, str] | None = None,
    ) -> None:
        self.seg = seg
        self.text = text
        self.line = seg.line
        self.place = place
        self.context = context
        self.definitions = definitions if definitions is not None else {}
        self.quantities = quantities if quantities is not None else {}
        self.out = []


def math_items(
    seg: Segment,
    definitions: dict[str, Definition] | None = None,
    quantities: dict[str, str] | None = None,
) -> list[Found]:
    """Every printed value of a maths segment, each entry with its place.

    ``definitions``: the functions of one variable the article defined before the
    segment (``R(\\theta) = …``), by name; the segment's own definitions are added to it,
    for the segments after it. ``quantities``: likewise, the quantities written out as
    arithmetic with no value yet (``D = 0.5 \\log 5 + …``), by label, until a later
    statement prints the value (``D \\approx 0.80``).
    """
    out: list[Found] = []
    whole = unwrapped_text(seg.text)  # \boxed{a = b}: the box only marks the result
    whole = whole.sub(_AS_PERCENTAGE, "")  # "0.61\ (61\%)": the value, restated
    context = " ".join(whole.text.split())[:200]
    units = _IN_UNITS.search(whole.text)
    if units is not None:  # "≈ 0.51 \;\text{nats}": the unit closes the span (its \; no separator)
        whole = _converted(seg, whole, units, context, out)
        if units.group(2).startswith("bit"):
            quantities = None  # \log written out is in nats: a value in bits is not its value
    statements = split_top_at(whole.text, STATEMENT_SEPARATORS)
    # A comma inside a bracket list is not a separator (the list is one piece); a
    # top-level comma splits "Q_1=…,K_1=…" into statements.
    widths = {
        len(rows[0])
        for st, _ in statements
        for piece, _ in split_top_at(st, ("=",))[1:]
        if (rows := matrix_rows(piece)) is not None and len(rows) == 1
    }
    for place, (raw, at) in enumerate(statements):
        # "0.474[0,0]+0.241[1.1,0.1]": a coefficient written right before a vector scales it
        text = whole[at : at + len(raw)].sub(_IMPLICIT_SCALE, r"\1\\times[")
        remark = _REMARK.search(text.text)
        if remark is not None and remark.start() > 0:
            text = text[: remark.start()]
        st = _Statement(seg, text, place, context, definitions, quantities)
        _statement_items(st, widths)
        out.extend(st.out)
    return out


def _converted(
    seg: Segment, text: Text, units: re.Match[str], context: str, out: list[Found]
) -> Text:
    """The statement without its unit words; a value restated in the other unit of
    information (nats and bits) becomes the conversion it states, ``0.51/ln(2)`` for bits."""
    value, unit, other, other_unit = units.groups()
    if other is not None and other_unit[:3] != unit[:3]:
        op = "/" if unit.startswith("nat") else "*"
        before = split_top_at(text.text[: units.start()], _RELATIONS)
        name = label_of(before[0][0]) if before else None
        convert = _Statement(seg, text, 0, context)
        convert.found(
            "arithmetic",
            f"{name or f'line {seg.line}'} (in {other_unit.rstrip('s')}s)",
            ((other,),),
            units.span(3),
            expression=f"{value}{op}ln(2)",
            latex=value + (" / " if op == "/" else " \\times ") + "\\ln 2",
            chain=f"{seg.cell}:{seg.line}:{other_unit}",
        )
        out.extend(convert.out)
    return text[: units.end(1)]


def _statement_items(s: _Statement, widths: set[int]) -> None:
    seg, text = s.seg, s.text.text
    if _arrow_items(s):  # "[0.243, -1.213] \\to [0.243, 0]": a row before and after a step
        return
    chain = split_top_at(text, _RELATIONS)
    if not chain:
        return
    pieces = [p for p, _ in chain]
    spans = [(a, a + len(p)) for p, a in chain]
    label = label_of(pieces[0]) if len(chain) > 1 else None
    stated = definition(pieces)
    if stated is not None:
        s.definitions[stated.name] = stated
    applied = _applications(pieces, s.definitions)
    if 0 in applied and label is None:
        try:
            label = latexmath.label_text(pieces[0], where="label")  # "R(0.02)", as written
        except ExpressionError:
            label = None
    where = f"line {seg.line}"
    if label is not None and len(chain) == 2:
        _quantity(s, label, pieces, spans[1])
    if len(chain) > 1 and all(numeric_cell(p) is not None for p in pieces):
        # "1.190 = 1.190": a number repeated as the result of a one-term sum
        for piece, span in zip(pieces, spans, strict=True):
            value = numeric_cell(piece) or ""
            s.found("number", seg.extra.get("prose_label") or where, ((value,),), span)
        return
    last = pieces[-1]
    last_rows = matrix_rows(last)
    last_number = numeric_cell(last)
    # Displayed arithmetic: every arithmetic piece of the chain against the printed end,
    # and against each number printed on the way (``= 2.3 × 4 = 9.2 ≈ 9``); the links
    # before one printed result are one chain, one printed number.
    if len(chain) > 1 and (last_number is not None or last_rows is not None):
        ends: list[tuple[int, Rows]] = [
            (k, ((cast(str, numeric_cell(p)),),))
            for k, p in enumerate(pieces[1:-1], 1)
            if numeric_cell(p) is not None
        ]
        ends.append(
            (len(chain) - 1, last_rows if last_rows is not None else ((cast(str, last_number),),))
        )
        for end, printed in ends:
            for k, piece in enumerate(pieces[:end]):
                piece = applied.get(k, piece)
                if not is_arithmetic(piece):
                    continue
                written = expression_text(piece)
                expression = latexmath.to_plain(written, where="arithmetic")
                try:
                    latexmath.parse(written, where="arithmetic")
                except ExpressionError:
                    continue
                s.found(
                    "arithmetic",
                    label or where,
                    printed,
                    spans[end],
                    expression=expression,
                    latex=written,
                    chain=f"{seg.cell}:{seg.line}:{s.place}:{end}",
                )
    elif len(chain) > 1 and is_arithmetic(last):
        # "\gamma = 0.729 = 0.9^3": a constant stated, then the expression it is
        first = next((k for k, p in enumerate(pieces) if numeric_cell(p) is not None), None)
        if first is not None and first < len(chain) - 1:
            printed = ((cast(str, numeric_cell(pieces[first])),),)
            for k in range(first + 1, len(chain)):
                written = expression_text(pieces[k])
                if not is_arithmetic(pieces[k]):
                    continue
                try:
                    latexmath.parse(written, where="arithmetic")
                except ExpressionError:
                    continue
                s.found(
                    "arithmetic",
                    label or where,
                    printed,
                    spans[first],
                    expression=latexmath.to_plain(written, where="arithmetic"),
                    latex=written,
                    chain=f"{seg.cell}:{seg.line}:{s.place}:{first}",
                )
    term_values(s, pieces, spans, label or where, f"{s.seg.cell}:{s.seg.line}:{s.place}")
    for position, piece in enumerate(pieces[:-1]):
        span = spans[position]
        arithmetic = is_arithmetic(piece)
        if not arithmetic and "[" in piece and re.search(r"[A-Za-z]", piece):
            # "[1,0,1,0,0,0]W_Q^{(1)}": a printed row multiplied by a named matrix
            _operand_vectors(s, piece, span[0], label)
        if arithmetic:
            _operand_vectors(s, piece, span[0], label)
            if position > 0:  # "… = 0.01 + 1.21 = 1.22": the terms are printed results too
                for m in _TERM.finditer(piece):
                    s.found(
                        "number",
                        f"{label or where} (term)",
                        ((m.group().replace("−", "-"),),),
                        (span[0] + m.start(), span[0] + m.end()),
                    )
        if _FRACTION.fullmatch(piece):
            s.found("number", label or where, ((piece.replace(" ", ""),),), span)
    if len(chain) == 1 and numeric_cell(pieces[0]) is not None:
        value = numeric_cell(pieces[0]) or ""
        s.found("number", seg.extra.get("prose_label") or where, ((value,),), spans[0])
    for k in range(1, len(chain)) if len(chain) > 1 else range(1):
        piece = pieces[k]
        rows = matrix_rows(piece)
        if rows is None and len(widths) == 1:
            rows = _dotted(piece, next(iter(widths)))
        if rows is not None:
            kind = "vector" if len(rows) == 1 and piece.strip().startswith("[") else "matrix"
            s.found(kind, label or seg.heading or where, rows, spans[k])
        elif k == len(chain) - 1 and len(chain) > 1 and last_number is not None and label:
            s.found("number", label, ((last_number,),), spans[k])


def _quantity(s: _Statement, label: str, pieces: list[str], span: tuple[int, int]) -> None:
    """``D = 0.5 \\log 5 + 0.5 \\log 2`` with no value printed, then ``D \\approx 0.80``:
    the arithmetic written out for a label is the value printed for it next."""
    value = numeric_cell(pieces[1])
    if value is None:
        if is_arithmetic(pieces[1]):
            try:
                latexmath.parse(expression_text(pieces[1]), where="arithmetic")
            except ExpressionError:
                return
            s.quantities[label] = expression_text(pieces[1])
        return
    written = s.quantities.pop(label, None)
    if written is not None:
        s.found(
            "arithmetic",
            label,
            ((value,),),
            span,
            expression=latexmath.to_plain(written, where="arithmetic"),
            latex=written,
            chain=f"{s.seg.cell}:{s.seg.line}:{s.place}:{label}",
        )


def _applications(pieces: list[str], definitions: dict[str, Definition]) -> dict[int, str]:
    """The links that apply a function the article defined to a number (``R(0.02)``,
    ``R(0.02) [3.0, 4.0]^T``), written out, by their place in the chain.

    A link that is arithmetic already is read as written; the first link (the chain's
    name, ``R(0.02) = …``) only when no other link works the value out (``R(2) =
    [[\\cos 2, …]] ≈ …`` says it itself).
    """
    out: dict[int, str] = {}
    for k, piece in enumerate(pieces[:-1]):
        if is_arithmetic(piece):
            continue
        text = expanded(piece, definitions)
        if text is not None:
            out[k] = text
    if 0 in out and any(is_arithmetic(p) for p in pieces[1:-1]):
        del out[0]
    return out


def term_values(
    s: Collects, pieces: list[str], spans: list[tuple[int, int]], name: str, chain: str
) -> None:
    """``… = 2 \\times 1.5 + 1.6 = 3 + 1.6 = …``: the 3 is the value of ``2 \\times 1.5``.

    ``chain``: what the links of the line share (its cell, line and place), before each
    term's own part.
    """
    for k, written, number, before in chain_links(pieces):
        found = source_spans(s.text, spans[k][0], spans[k][1], [*before, number])
        if found[-1] is None:
            continue
        for earlier in written:  # the term as first written, then as each link rewrote it
            s.found(
                "arithmetic",
                f"{name} (term)",
                ((number,),),
                found[-1],
                expression=earlier,
                latex=earlier,
                chain=f"{chain}:term{k}:{len(before)}",
            )
    for k, j, earlier in list_terms(pieces):  # "= [0, 0.8] + [0.2, 0.2]": each list whole
        lists = [m for m in _BRACKETS.finditer(pieces[k]) if matrix_rows(m.group()) is not None]
        rows = matrix_rows(lists[j].group()) if j < len(lists) else None
        if rows is None or len(rows) != 1:
            continue
        at = spans[k][0]
        s.found(
            "arithmetic",
            f"{name} (term)",
            rows,
            (at + lists[j].start(), at + lists[j].end()),
            expression=earlier,
            latex=earlier,
            chain=f"{chain}:list{k}:{j}",
        )


_DOTTED = re.compile(
    r"^\[\s*([^,\[\]]+?)\s*,\s*(?:\\[lc]?dots|\\dotsc|…|\.\.\.)\s*,\s*([^,\[\]]+?)\s*\]$"
)


def _dotted(piece: str, width: int) -> Rows | None:
    """``[0.1, \\dots, 0.1]`` beside vectors of ``width`` entries: ``width`` copies of 0.1.

    Only a constant run is filled in (its first and last entries are one number), and
    only when every other vector of the statement list has that one width.
    """
    m = _DOTTED.match(piece.strip())
    if m is None:
        return None
    first, last = numeric_cell(m.group(1)), numeric_cell(m.group(2))
    if first is None or first != last:
        return None
    return ((first,) * width,)


def _arrow_items(s: _Statement) -> bool:
    """``[a, b] \\to [c, d]``: every side is a printed vector (a row before and after a step)."""
    sides = split_top_at(s.text.text, _ARROWS)
    if len(sides) < 2:
        return False
    rows = [matrix_rows(side) for side, _ in sides]
    if any(r is None or len(r) != 1 for r in rows):
        return False
    label = s.seg.extra.get("prose_label") or f"line {s.seg.line}"
    for k, ((side, at), r) in enumerate(zip(sides, rows, strict=True)):
        if r is not None:
            what = "before" if k == 0 else "after"
            s.found("vector", f"{label} ({what})", r, (at, at + len(side)))
    return True


_WEIGHTED = re.compile(r"^\s*(-?\d+(?:\.\d+)?)\s*(?:×|\\times|\*|·|\\cdot)?\s*\[[^\[\]]*\]\s*$")
_PLUS_OUTSIDE = re.compile(r"\s*\+\s*(?![^\[]*\])")


def weights(piece: str) -> tuple[str, ...] | None:
    """The coefficients of a weighted sum of vectors, ``0.264×[2,2,1] + 0.471×[1,3,1]``."""
    terms = _PLUS_OUTSIDE.split(piece.strip())
    if len(terms) < 2:
        return None
    coefficients = []
    for t in terms:
        m = _WEIGHTED.match(t)
        if m is None:
            return None
        coefficients.append(m.group(1))
    return tuple(coefficients)


def _operand_vectors(s: _Statement, piece: str, at: int, label: str | None) -> None:
    """Vectors written out inside displayed arithmetic (``[0,1,1]+[0.1,0.1,0.1]``) are printed
    too, and so are the weights of a weighted sum (``0.264×[2,2,1] + 0.471×[1,3,1]``)."""
    name = label or f"line {s.seg.line}"
    w = weights(piece)
    if w is not None:
        s.found("vector", f"{name} (weights)", (w,), (at, at + len(piece)))
    for m in _BRACKETS.finditer(piece):
        rows = matrix_rows(m.group(0))
        if rows is not None and len(rows[0]) >= 2:
            s.found("vector", f"{name} (operand)", rows, (at + m.start(), at + m.end()))


# ----------------------------------------------------------------------------- aligned rows

#: Environments whose rows are equations aligned at ``&`` (``&= 1.333 \\\\``).
_ALIGNED = re.compile(
    r"\\begin\{(aligned|alignedat|align\*?|eqnarray\*?|flalign\*?|gather\*?|gathered|split"
    r"|multline\*?)\}(?:\{\d+\})?(?P<body>.*?)\\end\{\1\}",
    re.S,
)
#: A row, or a display, that carries on the equation before it: ``&= 1.333``, ``$$= 13.520$$``.
CARRIES_ON = re.compile(r"^\s*(?:=(?!=)|≈|\\approx(?![A-Za-z])|\\simeq(?![A-Za-z]))")
_ROW_TAGS = re.compile(r"\\(?:nonumber|notag)(?![A-Za-z])|\\(?:tag|label)\*?\{[^{}]*\}")
_ROW_SPACING = re.compile(r"^\[[^\]]*\]")


def _rows_of(body: str) -> list[tuple[int, int]]:
    """The spans of an aligned body's rows (split at ``\\\\`` outside braces and environments)."""
    rows: list[tuple[int, int]] = []
    depth = env = start = 0
    i = 0
    while i <= len(body):
        if i == len(body) or (depth == 0 and env == 0 and body.startswith("\\\\", i)):
            rows.append((start, i))
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
    return rows


def _unaligned(seg: Segment) -> list[Segment]:
    """An aligned environment's rows as statements of their own, each at its own line.

    ``\\begin{aligned} \\mu &= \\frac{…}{3} \\\\ &= 1.333 \\end{aligned}`` is one equation
    written on two rows: a row that starts with its relation carries on the row above,
    and the joined equation is read at the line of its last row (where its result is
    printed), as an equation continued under its ``=`` in plain text is. The ``&``
    alignment marks outside matrices are dropped; other rows are separate statements.
    """
    whole = seg.text
    m = _ALIGNED.search(whole.text)
    if m is None:
        return [seg]
    out: list[Segment] = []
    before, after = whole[: m.start()], whole[m.end() :]
    offset = m.start("body")
    groups: list[tuple[Text, int]] = []
    for a, b in _rows_of(m.group("body")):
        raw = whole[offset + a : offset + b]
        row = raw.sub(_ROW_TAGS, "")
        cells = [row[at : at + len(p)] for p, at in split_top_at(row.text, ("&",))]
        text = Text.join(" ", cells, whole.frame).strip()
        spacing = _ROW_SPACING.match(text.text)  # the spacing of "\\[4pt]"
        if spacing:
            text = text[spacing.end() :].strip()
        if not text.text.strip():
            continue
        lead = len(raw.text) - len(raw.text.lstrip())
        line = seg.line + whole.text[: offset + a + lead].count("\n")
        if groups and CARRIES_ON.match(text.text):
            groups[-1] = (groups[-1][0] + " " + text, line)
        else:
            groups.append((text, line))
    if groups and before.text.strip():
        groups[0] = (before.strip() + " " + groups[0][0], groups[0][1])
    for text, line in groups:
        out.append(Segment(text, line, True, seg.cell, seg.heading, seg.code_name, dict(seg.extra)))
    if after.text.strip():
        rest = Segment(
            after, seg.line + whole.text[: m.end()].count("\n"), True, seg.cell, seg.heading
        )
        out.extend(_unaligned(rest))
    return out


def maths_segments(segments: list[Segment]) -> list[Segment]:
    """The segments with aligned rows split out and continued displays joined.

    A display that starts with its relation (``$$= [3.406, 4.406]$$`` under
    ``$$[0.198(1) + …]$$``) carries on the maths span right before it (nothing but
    white space between them): the two are read as one equation, at the later line.
    """
    out: list[Segment] = []
    for seg in segments:
        for part in _unaligned(seg) if seg.math else [seg]:
            prev = out[-1] if out else None
            if (
                part.math
                and prev is not None
                and prev.math
                and prev.cell == part.cell
                and not prev.extra.get("output")
                and CARRIES_ON.match(part.text.text)
            ):
                out[-1] = Segment(
                    prev.text + " " + part.text.strip(),
                    part.line,
                    True,
                    prev.cell,
                    prev.heading,
                    prev.code_name,
                    dict(prev.extra),
                )
            elif (joined := _prose_result(out, part)) is not None:
                out.append(joined)
            elif (valued := _value_in_prose(out, part)) is not None:
                out[-1] = valued[0]
                if valued[1] is not None:
                    out.append(valued[1])
            elif _after_aside(out, part):
                before = out[-2]
                out[-2] = Segment(
                    before.text + " " + part.text.strip(),
                    part.line,
                    True,
                    before.cell,
                    before.heading,
                    before.code_name,
                    dict(before.extra),
                )
            else:
                out.append(part)
    return out


_NUMBER = r"[-−]?\d+(?:\.\d+)?"
_OPERAND = rf"\(?\s*{_NUMBER}\s*\)?"
#: Arithmetic on plain numbers closing a line of prose with its ``=``: ``24.53 / 40.04 =``.
_OPEN_EQUATION = re.compile(rf"(?<![\w.]){_OPERAND}(?:\s*[-+−*/×·÷]\s*{_OPERAND})+\s*=\s*$")


def _prose_result(out: list[Segment], part: Segment) -> Segment | None:
    """``\\(p(\\text{mat})\\): 24.53 / 40.04 = \\(0.61\\)``: arithmetic in prose that ends on
    its ``=``, with the result written as maths right after it on the same line, is one
    equation. The prose before the arithmetic stays; the equation is the maths segment
    returned (``out`` loses the arithmetic)."""
    if not out or not part.math:
        return None
    prose = out[-1]
    if (
        prose.math
        or prose.table is not None
        or prose.extra.get("output")
        or prose.cell != part.cell
        or CARRIES_ON.match(part.text.text)
    ):
        return None
    m = _OPEN_EQUATION.search(prose.text.text)
    if m is None or "\n" in m.group() or prose.line + prose.text.text.count("\n") != part.line:
        return None
    head = prose.text[: m.start()]
    if head.text.strip():
        out[-1] = Segment(head, prose.line, False, prose.cell, prose.heading, prose.code_name)
    else:
        out.pop()
    equation = prose.text[m.start() :].strip() + " " + part.text.strip()
    return Segment(equation, part.line, True, part.cell, part.heading, part.code_name)


#: Prose right after a maths span that gives its value: ``≈ 24.53``, ``= **0.61**``,
#: ``(for "rug") ≈ 12.18`` (words in parentheses naming it may stand first).
_PROSE_VALUE = re.compile(
    r"^(?P<aside>\s*\([^()\d\n]*\))?\s*(?P<rel>=|≈|\\approx)\s*(?P<bold>\*\*|__)?"
    r"(?P<value>[-−]?\d+(?:\.\d+)?)(?P=bold)?(?![\w.]|\.\d|\s*[-+×*/·^(])"
)


def _value_in_prose(out: list[Segment], part: Segment) -> tuple[Segment, Segment | None] | None:
    """``$e^{1.0}$ = 2.72``, ``\\(e^{3.2}\\) ≈ 24.53``: arithmetic in a maths span whose value
    the prose right after it gives, on the same line, is one equation (the maths span and
    the relation and number after it). The rest of the prose stays prose."""
    if not out or part.math or part.table is not None or part.extra.get("output"):
        return None
    maths = out[-1]
    if not maths.math or maths.extra.get("output") or maths.cell != part.cell:
        return None
    if maths.line != part.line or "\n" in maths.text.text or not is_arithmetic(maths.text.text):
        return None
    m = _PROSE_VALUE.match(part.text.text)
    if m is None:
        return None
    text = part.text
    equation = maths.text + " " + text[m.start("rel") : m.end("rel")]
    equation = equation + " " + text[m.start("value") : m.end("value")]
    joined = Segment(equation, maths.line, True, maths.cell, maths.heading, maths.code_name)
    rest = text[m.end() :]
    if not rest.text.strip():
        return joined, None
    return joined, Segment(rest, part.line, False, part.cell, part.heading, part.code_name)


#: Words in parentheses with no number, between two maths spans: ``(for "mat")``.
_ASIDE_WORDS = re.compile(r"\s*\([^()\d\n]*\)\s*")


def _after_aside(out: list[Segment], part: Segment) -> bool:
    """``\\(e^{3.2}\\) (for "mat") \\(\\approx 24.53\\)``: a maths span that starts with
    its relation carries on the maths span before it on the same line when only words in
    parentheses, naming what is computed, stand between them (the words stay, as prose)."""
    if len(out) < 2 or not part.math or not CARRIES_ON.match(part.text.text):
        return False
    before, aside = out[-2], out[-1]
    return (
        before.math
        and not aside.math
        and aside.table is None
        and not before.extra.get("output")
        and before.cell == aside.cell == part.cell
        and before.line == aside.line == part.line
        and _ASIDE_WORDS.fullmatch(aside.text.text) is not None
    )
