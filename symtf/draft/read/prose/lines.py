"""One line of prose and the values it writes: labelled numbers (``loss: 0.4581``),
arithmetic chains (``0.1 + 0.2 = 0.3``), bracketed vectors, tuples, worded functions,
stated constants and decimals in sentences, each entry placed in the line.
"""

from __future__ import annotations

import re
from typing import cast

import symtf.draft.read.complexes as complexes
from symtf.draft.read.items import (
    LITERAL,
    Found,
    Rows,
    Segment,
    expression_text,
    matrix_rows,
    numeric_cell,
)
from symtf.draft.read.maths import Collects, term_values, weights
from symtf.draft.read.prose.outputs import nested_rows
from symtf.draft.read.rounded import rounded_wholes
from symtf.draft.read.source import Text
from symtf.errors import ExpressionError
from symtf.language import latexmath

_VECTOR_IN_TEXT = re.compile(r"\[[^\[\]]*\d[^\[\]]*\]")

#: A tuple of numbers in parentheses, ``(0.1433, 0.2799, -0.7988)``, not a call ``f(1, 2)``.
_TUPLE_IN_TEXT = re.compile(r"(?<![\w)\]])\(([^()\[\]]*)\)")
_BULLET = re.compile(r"^(?:[•*\s]|-(?![\d.(√]|ln\b|log\b|exp\b))+")
#: A decimal in prose ("sums to 1.0"; "-0.7988" keeps its sign), a percentage ("88.08%", a
#: restatement of 0.8808 that drafting links to it) or a whole number with thousands
#: separators ("about 2,600 parameters").
_PROSE_DECIMAL = re.compile(
    r"(?<![\w.,])((?:[-−](?=\d))?(?:\d{1,3}(?:,\d{3})+(?:\.\d+)?|\d+\.\d+%?))"
    r"(?![\w%]|[.,]\d|\s+%)"
)
#: A percentage in parentheses right after a number restates it: ``0.250 (25.0%)``.
_BESIDE = re.compile(r"\d\s*\(\s*$")


def _tuple_rows(piece: str) -> Rows | None:
    """A parenthesised tuple as one row, when it has three or more entries or a decimal.

    ``(0, 0.6698, 0.3302)`` and ``(0.6698, 0.3302)`` are vectors a worksheet writes; a
    pair of whole numbers, ``(2, 3)``, is more often a shape or a position and stays prose.
    """
    cells = [numeric_cell(c) for c in piece.strip()[1:-1].split(",")]
    if len(cells) < 2 or any(c is None for c in cells):
        return None
    row = tuple(c for c in cells if c is not None)
    if len(row) < 3 and not any("." in c for c in row):
        return None
    return (row,)


class _Line(Collects):
    """One prose line being read: its text with places, and what it makes."""

    def __init__(self, text: Text, number: int, seg: Segment, context: str) -> None:
        self.text = text
        self.number = self.line = number
        self.seg = seg
        self.context = context
        self.out = []


def line_items(line: Text, number: int, seg: Segment) -> list[Found]:
    """Arithmetic, labelled numbers and bracketed vectors written in a plain-text line."""
    # a bullet ("- ", "• ", "* ") or bold marks go; a minus sign before a number stays
    stripped = line.strip()
    bullet = _BULLET.match(stripped.text)
    text = stripped[bullet.end() if bullet else 0 :].strip()
    closing = _CLOSING_BOLD.search(text.text) if stripped.text.startswith("*") else None
    if closing is not None:  # "**Scale by 1/√2 ≈ 0.707:**": the bold's closing marks go too
        text = text[: closing.start()].strip()
    if not text.text:
        return []
    s = _Line(text, number, seg, text.text[:200])
    raw = _ESCAPE.sub(" ", text.text)
    raw = _TERM_NAME.sub(lambda m: " " * len(m.group()), raw)
    raw = _BOLD_NUMBER.sub(lambda m: "  " + m.group(1) + "  ", raw)
    raw = _BOLD_STATEMENT.sub(lambda m: "  " + m.group(1) + "  ", raw)
    raw = _tuples_as_lists(raw)
    if bullet is not None and "**" in bullet.group():  # "**Total Sum:** 1.5 + 2.5 = 4.0"
        raw = _BOLD_LABEL.sub(lambda m: m.group().replace("*", " "), raw)
    for place, (fragment, at) in enumerate(_fragments(raw)):
        _fragment_items(s, fragment, at, place)
    if all(f.label.endswith(LITERAL) for f in s.out):  # no chain read: its numbers, loose
        s.out = []
        _loose_numbers(s)
    taken = {(q.line, q.column) for f in s.out for q in f.places}
    for value, span in rounded_wholes(raw):  # "through rounding, we get the value of 38"
        s.found("number", f"line {number}", ((value,),), span)
        if any((q.line, q.column) in taken for q in s.out[-1].places):
            s.out.pop()  # already read (``≈ 38`` ending a chain)
    return s.out


#: The marks closing a bold or italic line, after its last word or number (and a colon).
_CLOSING_BOLD = re.compile(r"(?<=[\w.:%)\]])\*{1,3}$")

#: A Markdown escape before an operator or a list of numbers (``0.73 \* \[0, 1]``, which
#: renders as ``0.73 * [0, 1]``): the backslash is not part of the arithmetic; it is read
#: as a space, so every offset stays.
_ESCAPE = re.compile(r"\\(?=\*|\[\s*[-−+]?\.?\d)")


#: A number in bold in a chain, ``= **0.61**``: the marks only stress the result (each
#: becomes two spaces, so every offset stays).
_BOLD_NUMBER = re.compile(r"(?<=[=≈\s])\*\*([-−]?\d[\d,]*(?:\.\d+)?%?)\*\*(?![\w*])")

#: A statement in bold inside a sentence, ``The sum is **[0.4, 0.1] + [0.1, 0] = [0.5, 0.1]**``:
#: arithmetic on literals with its relation and result; the marks only stress it (each
#: becomes two spaces, so every offset stays).
_BOLD_STATEMENT = re.compile(
    r"\*\*(\s*[\[(]?[-−]?[\d.\[][^*\n]*?(?:=|≈)[^*\n]*?[\d\]])\*\*(?![\w*])"
)

#: A tuple of numbers, ``(0.1, −0.2)``: not a call's arguments (no name before it).
_NUMBER_TUPLE = re.compile(
    r"(?<![\w)\]])\(\s*[-−]?\d+(?:\.\d+)?(?:\s*,\s*[-−]?\d+(?:\.\d+)?)+\s*\)"
)


def _tuples_as_lists(raw: str) -> str:
    """``(0.1, 0.2) + (0.3, 0.4) = (0.4, 0.6)``: vectors written as tuples, read as lists.

    Only where it cannot be anything else: the line's last link is one tuple (after its
    ``=``), another tuple of as many numbers is added to, taken from or scaled by
    something before it, and every tuple of the line has that width, a decimal among
    them. The parentheses become brackets (same length: every offset stays)."""
    tuples = list(_NUMBER_TUPLE.finditer(raw))
    if len(tuples) < 2:
        return raw
    last = tuples[-1]
    before = raw[: last.start()].rstrip()
    if not before.endswith(("=", "≈")) or raw[last.end() :].strip(" .,;:"):
        return raw
    widths = {m.group().count(",") for m in tuples}
    if len(widths) != 1 or not any("." in m.group() for m in tuples):
        return raw
    operand = any(
        re.search(r"[-+−×*·⊙]\s*$", raw[: m.start()]) or re.match(r"\s*[-+−×*·⊙]", raw[m.end() :])
        for m in tuples[:-1]
    )
    if not operand:
        return raw
    out = list(raw)
    for m in tuples:
        out[m.start()], out[m.end() - 1] = "[", "]"
    return "".join(out)


#: A bold label opening a line, its closing marks after its colon or before it:
#: ``**Total Sum:** 1.5 + 2.5 = 4.0`` (the opening marks went with the bullet).
_BOLD_LABEL = re.compile(r"^[^*\n:=]{1,60}?(?::\*\*|\*\*:)(?=\s)")

#: Words in parentheses naming a term of a sum, ``18,944,000 (embeddings) + 25,190,400
#: (decoder)``: right after the term's number, before an operator, a relation or the end
#: of the line. The arithmetic is read without them (blanked: every offset stays).
_TERM_NAME = re.compile(
    r"(?<=\d)\s*\((?=[^()\d]*[A-Za-z])[^()\d=≈<>%]*\)(?=\s*(?:[-+−×/·=≈]|\*(?!\*)|$))", re.M
)


#: ``(2×1.6=3.2)`` inside a link: arithmetic worked out in passing, in parentheses.
_ASIDE = re.compile(r"\((?P<expr>[^()=≈]+?)\s*=\s*(?P<value>[-−]?\d+(?:\.\d+)?)\s*\)")


def _asides(s: _Line, fragment: str, at: int, place: int) -> str:
    """``v₂ = 0.9×4 + (2×1.6=3.2) = 3.6 + 3.2``: the parenthesised ``2×1.6=3.2`` works a
    term out in passing. It is checked on its own (3.2 is 2×1.6), and the chain reads the
    term as written, ``(2×1.6)``, so that ``3.6 + 3.2`` checks term by term. Returns the
    fragment with each aside's ``=3.2`` blanked (same length: every offset stays)."""
    out = fragment
    for k, m in enumerate(_ASIDE.finditer(fragment)):
        if fragment[: m.start()].count("(") != fragment[: m.start()].count(")"):
            continue  # inside other parentheses: a call's argument, not an aside
        expression = plain_arithmetic(m.group("expr"))
        value = numeric_cell(m.group("value"))
        if expression is None or value is None:
            continue
        s.found(
            "arithmetic",
            f"line {s.number} (term)",
            ((value,),),
            (at + m.start("value"), at + m.end("value")),
            expression=expression,
            latex=expression_text(m.group("expr")),
            chain=f"{s.seg.cell}:{s.number}:{place}:aside{k}",
        )
        a, b = m.end("expr"), m.end()
        out = out[:a] + ")" + " " * (b - a - 1) + out[b:]
    return out


#: A percentage as a line's result, ``1/4 = 25%`` or ``= 3.2%``.
_PERCENTAGE = re.compile(r"\d+(?:\.\d+)?%")


def _percentage(text: str) -> str | None:
    """A percentage a line ends on (``1/4 = 25%``), as written; None for anything else."""
    t = text.strip()
    return t if _PERCENTAGE.fullmatch(t) else None


def _fragment_items(s: _Line, fragment: str, at: int, place: int) -> None:
    number, seg = s.number, s.seg
    fragment = _asides(s, fragment, at, place)
    label, chain = _plain_chain(fragment)
    chain = _trimmed(chain)
    pieces = [p for p, _ in chain]
    spans = [(at + a, at + a + len(p)) for p, a in chain]
    if len(chain) == 1 and label and numeric_cell(pieces[0].rstrip(".:;,")) is not None:
        value = numeric_cell(pieces[0].rstrip(".:;,")) or ""
        s.found("number", label, ((value,),), spans[0])
        return
    if len(chain) < 2:
        return
    last = pieces[-1]
    rows = matrix_rows(last) if last.startswith("[") else None
    if rows is None and re.match(r"\[\s*\[", last) and re.search(r"\]\s*\]$", last):
        rows = nested_rows(last)  # "= [[1, 0.37], [0.37, 1]]": a matrix, row by row
    end = numeric_cell(last.rstrip(".:;,")) or _percentage(last.rstrip(".:;,"))
    if rows is not None:
        printed = rows
    elif end is not None:
        printed = ((end,),)
    else:
        if not _complex_items(s, pieces, spans, label or f"line {number}", place):
            _stated_constant(s, pieces, spans, label or f"line {number}", place)
        return
    # each number printed on the way (``= 2.3 × 4 = 9.2 ≈ 9``) is a result of the links
    # before it; the links before one printed result are one chain, one printed number
    ends: list[tuple[int, Rows]] = [
        (k, ((cast(str, numeric_cell(p)),),))
        for k, p in enumerate(pieces[1:-1], 1)
        if numeric_cell(p) is not None
    ]
    name = label or f"line {number}"
    term_values(s, pieces, spans, name, f"{seg.cell}:{number}:{place}")  # "= 3 + 1.6": 3 is 2 × 1.5
    # the first link that writes numbers puts the line's inputs in (``dQ = dS × K``, then
    # ``= 0.001765 × 0.1 + …`` below it): a name before it computes nothing
    first = next((k for k, p in enumerate(pieces[:-1]) if plain_arithmetic(p) is not None), None)
    if first is not None:
        _first_literals(s, pieces[first], spans[first][0], name)
    for k, p in [*ends, (len(chain) - 1, printed)]:  # the last is the line's own result
        for j, piece in enumerate(pieces[:k]):
            if any(_worded(q) for q in pieces[j + 1 : k]):
                # "= 41.9 million float32 values = 167 MB": a link in words between them
                # changes what is counted (values to megabytes); no equality to check
                continue
            expression = plain_arithmetic(piece)
            if expression is not None and _whole_list(piece) and len(p) * len(p[0]) == 1:
                expression = None  # "[a², b²] => x + y => 1.26": a list is not its sum
            if expression is not None:
                s.found(
                    "arithmetic",
                    name,
                    p,
                    spans[k],
                    expression=expression,
                    latex=expression_text(piece),
                    chain=f"{seg.cell}:{number}:{place}:{k}",
                )
            _operand_vectors(s, piece, spans[j][0], name)
    if rows is not None:
        s.found("vector", name, rows, spans[-1])
    elif label and not any(plain_arithmetic(p) for p in pieces[:-1]):
        s.found("number", label, printed, spans[-1])


#: A number written in arithmetic, with the minus before it (not part of a name).
_LITERAL = re.compile(r"[-−]?(?<![\w.])(?:\d{1,3}(?:,\d{3})+(?![\d,])|\d+)(?:\.\d+)?(?![\w.])")


def _first_literals(s: _Line, piece: str, at: int, name: str) -> None:
    """The numbers of three significant digits or more that a line's first link computes
    from (``(0.8 - 0.25) / 0.364``): one may repeat a result printed before it (0.364, the
    deviation worked out above) and is then checked as that result; one that repeats none
    is an input of the line (:data:`symtf.draft.read.items.LITERAL`)."""
    for m in _LITERAL.finditer(piece):
        text, start = m.group(), m.start()
        before = piece[:start].rstrip()
        if text[0] in "-−" and before and before[-1] not in "([,=+*/×·":
            text, start = text[1:], start + 1  # a subtraction, not a negative number
        if len(text.lstrip("-−").replace(".", "").replace(",", "").lstrip("0")) >= 3:
            s.found(
                "number", name + LITERAL, ((text.replace("−", "-"),),), (at + start, at + m.end())
            )


def _whole_list(piece: str) -> bool:
    """Whether a piece is one bracketed list as a whole (``[a^2, b^2]``, not ``[1,2] · [3,1]``)."""
    text = piece.strip()
    if not text.startswith("["):
        return False
    depth = 0
    for i, ch in enumerate(text):
        depth += {"[": 1, "]": -1}.get(ch, 0)
        if depth == 0:
            return i == len(text) - 1
    return False


#: A word that is no function of arithmetic: ``million``, ``values``, ``MB``.
_WORD = re.compile(r"(?<![\\A-Za-z])[A-Za-z]{2,}")
_FUNCTION_WORDS = frozenset(
    [
        "sqrt",
        "exp",
        "ln",
        "log",
        "max",
        "min",
        "sum",
        "relu",
        "sin",
        "cos",
        "tan",
        "tanh",
        "softmax",
        "sigmoid",
        "mean",
        "var",
        "std",
    ]
)


def _worded(piece: str) -> bool:
    """Whether a link of a chain is written in words (``41.9 million float32 values``),
    not as a number or as arithmetic on numbers."""
    if numeric_cell(piece) is not None or plain_arithmetic(piece) is not None:
        return False
    return any(w.lower() not in _FUNCTION_WORDS for w in _WORD.findall(piece))


def _complex_items(
    s: _Line, pieces: list[str], spans: list[tuple[int, int]], name: str, place: int
) -> bool:
    """``(1.0+2.0j) × (0.540+0.841j) = -1.142 + 1.921j`` and lists of such numbers: each
    link's parts against the printed result's (:func:`symtf.draft.read.complexes.worked`).

    Returns whether the chain ends in a printed complex number (or a list of them).
    """
    found = complexes.worked(pieces, spans)
    if found is None:
        return False
    for w in found:
        s.found(
            "arithmetic",
            f"{name}{w.where} ({w.part})",
            ((w.printed,),),
            w.span,
            expression=w.expression,
            latex=w.expression,
            chain=f"{s.seg.cell}:{s.number}:{place}:{w.chain}",
        )
    for start, end in complexes.unread_numbers(pieces, spans):
        # "z × e^(i×0.524)": a link not read here; its numbers are still the article's
        value = s.text.text[start:end].replace("−", "-")
        s.found("number", f"line {s.number}", ((value,),), (start, end))
    return True


def _stated_constant(
    s: _Line, pieces: list[str], spans: list[tuple[int, int]], name: str, place: int
) -> None:
    """``γ = 0.729 = 0.9³``: a constant stated, then the expression it is."""
    first = next((k for k, p in enumerate(pieces) if numeric_cell(p) is not None), None)
    if first is None or first == len(pieces) - 1:
        return
    printed = ((numeric_cell(pieces[first]) or "",),)
    for k in range(first + 1, len(pieces)):
        expression = plain_arithmetic(pieces[k])
        if expression is not None:
            s.found(
                "arithmetic",
                name,
                printed,
                spans[first],
                expression=expression,
                latex=expression_text(pieces[k]),
                chain=f"{s.seg.cell}:{s.number}:{place}:{first}",
            )


def _operand_vectors(s: _Line, piece: str, at: int, name: str) -> None:
    """Vectors and weights written inside a line's arithmetic are printed too."""
    w = weights(piece)
    if w is not None:
        s.found("vector", f"{name} (weights)", (w,), (at, at + len(piece)))
    for m in re.finditer(r"\[[^\[\]]*\]", piece):
        rows = matrix_rows(m.group(0))
        if rows is not None and len(rows[0]) >= 2:
            s.found("vector", f"{name} (operand)", rows, (at + m.start(), at + m.end()))


def _loose_numbers(s: _Line) -> None:
    """A line with no labelled value or chain: its vectors, tuples and decimals."""
    text = s.text.text
    number = s.number
    spans = [
        m.span()
        for m in _VECTOR_IN_TEXT.finditer(text)
        if (r := matrix_rows(m.group(0))) is not None and len(r[0]) >= 2
    ]
    tuples = [m for m in _TUPLE_IN_TEXT.finditer(text) if _tuple_rows(m.group(0)) is not None]
    spans += [m.span() for m in tuples]
    for m in _PROSE_DECIMAL.finditer(text):
        if any(a <= m.start() < b for a, b in spans):
            continue  # an entry of a vector on the line (``-0.4`` is not the number 0.4)
        if m.group(1).endswith("%") and _BESIDE.search(text[: m.start()]):
            continue  # "0.250 (25.0%)": the same number on another scale
        s.found("number", f"line {number}", ((m.group(1).replace("−", "-"),),), m.span(1))
    for m in tuples:  # a tuple written with parentheses: ``h = (0.6698, 0.3302)``
        rows = _tuple_rows(m.group(0))
        before = text[: m.start()].rstrip()
        lm = re.search(r"([A-Za-z_]\w*)\s*=$", before)
        s.found("vector", lm.group(1) if lm else f"line {number}", rows or (), m.span())
    for m in _VECTOR_IN_TEXT.finditer(text):
        rows = matrix_rows(m.group(0))
        if rows is not None and len(rows[0]) >= 2:
            before = text[: m.start()].rstrip()
            lm = re.search(r"([A-Za-z_][\w]*)\s*[=:]?$", before.rstrip("=: ").strip())
            label = lm.group(1) if lm and before.endswith(("=", ":")) else None
            s.found("vector", label or f"line {number}", rows, m.span())


def _fragments(text: str) -> list[tuple[str, int]]:
    """Split prose at top-level commas and semicolons followed by a space, at `` | `` and
    before a note's arrow (`` ← Increased!``)."""
    parts, depth, start = [], 0, 0
    for i, ch in enumerate(text):
        if ch in "([":
            depth += 1
        elif ch in ")]":
            depth -= 1
        elif depth == 0 and ch in ",;" and text[i + 1 : i + 2] == " ":
            parts.append((start, i))
            start = i + 1
        elif depth == 0 and ch == "|" and text[i - 1 : i] == " " and text[i + 1 : i + 2] == " ":
            parts.append((start, i))  # "σ(1) = 0.731 | e¹ = 2.718": two statements
            start = i + 1
        elif depth == 0 and ch in "←⟵" and text[i - 1 : i] == " ":
            parts.append((start, i))  # "= -0.749  ← Negative!": a note after the chain
            start = i + 1
    parts.append((start, len(text)))
    out = []
    for a, b in parts:
        p = text[a:b]
        if p.strip():
            out.append((p.strip(), a + len(p) - len(p.lstrip())))
    return out


_LEADING_NUMBER = re.compile(r"^([-−]?\d[\d,]*(?:\.\d+)?%?)\s+[A-Za-z(]")
_ARITHMETIC_TAIL = re.compile(
    # √4, or sqrt(4) spelled out; −ln(0.25), a function named with its minus sign
    r"(?<=\s)(?:[\d(√|\[]|[-−]?(?:sqrt|exp|ln|log)\()[\d\s.,+\-−×·*/^()√|\[\]]*$"
)
#: A list that ends a chain with words after it: ``= [0.35, 1.30] here.``
_LEADING_LIST = re.compile(r"^(\[[^\[\]]*\d[^\[\]]*\])\s+[A-Za-z][A-Za-z\s]*[.,;:!]?$")
_PROSE_WORD = re.compile(r"(?:^|\s)[A-Za-z]{2,}:?\s+$")


def _trimmed(chain: list[tuple[str, int]]) -> list[tuple[str, int]]:
    """A chain written inside a sentence, its words left out: ``The layer has 80 × 80``
    begins with words, ``6,400 weights.`` ends with them; the arithmetic and the number
    are what is read."""
    if len(chain) < 2:
        return chain
    out = list(chain)
    first, a = out[0]
    if plain_arithmetic(first) is None and numeric_cell(first) is None:
        tail = _ARITHMETIC_TAIL.search(first)
        # only after a word of prose ("has 80 × 80"), never after an operator or a name
        # it would cut off ("q·k / √64" is not √64)
        words = _PROSE_WORD.search(first[: tail.start()]) if tail else None
        if tail and words and plain_arithmetic(tail.group().strip()) is not None:
            text = tail.group().strip()
            out[0] = (text, a + first.index(text, tail.start()))
    last, b = out[-1]
    listed = _LEADING_LIST.match(last) if last.startswith("[") else None
    if listed is not None and matrix_rows(last) is None:  # "= [0.35, 1.30] here."
        out[-1] = (listed.group(1), b)
    if numeric_cell(last.rstrip(".:;,")) is None and not last.startswith("["):
        m = _LEADING_NUMBER.match(last)
        if m and (numeric_cell(m.group(1)) or _percentage(m.group(1))) is not None:
            out[-1] = (m.group(1), b)
    return out


_LABELLED = re.compile(r"^([^:=≈\[\]()]{1,60}):\s+(.*)$")
_RELATION = re.compile(r"\s*(?:=>|⇒|≈|=)\s*")  # "1.26 / 3 => 0.42": gives
_CHECK_MARK = re.compile(r"\s*[✅✓✔☑]+\s*$")
_TRAILING_NOTE = re.compile(r"\s*\(.*?\)\s*$")


def _plain_chain(fragment: str) -> tuple[str | None, list[tuple[str, int]]]:
    """``label: a = b ≈ c`` as the label and the pieces of the chain, each with its offset."""
    label = None
    base = 0
    m = _LABELLED.match(fragment)
    if m:
        label, base = m.group(1).strip(), m.start(2)
        fragment = m.group(2)
    pieces: list[tuple[str, int]] = []
    at = 0
    for sep in _RELATION.finditer(fragment):
        pieces.append((fragment[at : sep.start()], base + at))
        at = sep.end()
    pieces.append((fragment[at:], base + at))
    pieces = [(p.strip(), a + len(p) - len(p.lstrip())) for p, a in pieces]
    if pieces:  # a check mark after the result affirms it: ``≈ 0.000 ✅``
        p, a = pieces[-1]
        pieces[-1] = (_CHECK_MARK.sub("", p), a)
    if pieces:
        p, a = pieces[-1]
        if not p.startswith(("(", "[")):
            pieces[-1] = (_TRAILING_NOTE.sub("", p), a)
    if (
        pieces
        and label is None
        and re.fullmatch(r"[A-Za-zα-ωΑ-Ω][\w ]{0,40}", pieces[0][0])
        and len(pieces) > 1
    ):
        words = pieces[0][0].split()
        label = pieces[0][0]
        if words and not plain_arithmetic(pieces[0][0]):
            pieces = pieces[1:]
        if len(words) > 1:  # "With d_k = 3": prose before a name; keep the name
            label = words[-1]
    return label, [(p, a) for p, a in pieces if p]


_PLAIN_OPERATORS = re.compile(
    r"[-−+*/×·÷^√²³°∘⊙]|\b(?:sqrt|exp|ln|log|max|min|sum|relu|sin|cos|tanh|softmax|sigmoid)\(",
    re.I,
)


def plain_arithmetic(piece: str) -> str | None:
    """The piece as an expression when it is arithmetic on literals, else None."""
    written = expression_text(piece)
    if numeric_cell(piece) is not None or not re.search(r"\d", written):
        return None
    if not _PLAIN_OPERATORS.search(written):
        return None
    if matrix_rows(piece) is not None:
        return None
    try:
        expr = latexmath.parse(written, where="arithmetic")
    except ExpressionError:
        return None
    return None if expr.references else expr.text
