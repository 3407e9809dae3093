"""Complex arithmetic an article writes in plain text, as its real and imaginary parts.

RoPE is often worked with complex numbers: a pair ``[x, y]`` is ``x + yj``, and turning
it by θ is multiplying by ``e^(iθ) = cos θ + i·sin θ``::

    (1.0+2.0j) × (0.540+0.841j) = (1.0×0.540 - 2.0×0.841) + i(1.0×0.841 + 2.0×0.540)
                                = -1.142 + 1.921j

symtf's expression language is real, so a link of such a chain is read here as two
real expressions, its real part and its imaginary part (:func:`parts`), each checked
against the matching part of the printed result ``-1.142 + 1.921j``
(:func:`printed_parts`). Nothing is evaluated: the parts are text in the plain
language (``1.0*0.540 - 2.0*0.841``), and a part that is zero as written (``0j``, the
imaginary part of a real number) is left out rather than written as a product by 0.

A link is complex only when it writes the imaginary unit (``2.0j``, ``0.5i``, ``i·sin``,
``i(…)``, ``e^(i×θ)``); names other than ``e``, ``cos``, ``sin`` and ``exp`` make it
unreadable here (``z × e^(i×0.524)``: what ``z`` is, the line does not say).
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from symtf.draft.read.items import numeric_cell
from symtf.errors import ExpressionError
from symtf.language import latexmath

__all__ = ["Worked", "list_entries", "parts", "printed_parts", "unread_numbers", "worked"]

#: A part of a complex value as plain text; ``None`` is a part that is zero as written.
Part = str | None

_TOKEN = re.compile(
    r"\s*(?:(?P<num>\d+(?:\.\d+)?|\.\d+)(?P<unit>[ij](?![A-Za-z]))?"
    r"|(?P<name>cos|sin|exp|e|[ij])(?![A-Za-z])"
    r"|(?P<op>[-+−×*·()^]))"
)
#: The imaginary unit written somewhere in a text (a number's suffix, or on its own).
_UNIT = re.compile(r"(?:\d[ij]|(?<![A-Za-z])[ij](?![A-Za-z]))")
#: A printed complex number ``x + yj`` (``x+yj``, ``x - yi`` written without a space).
_LITERAL = re.compile(
    r"^\s*(?P<re>[-−]?\d+(?:\.\d+)?)\s*(?:\+\s*(?P<im>\d+(?:\.\d+)?)|(?P<neg>[-−]\d+(?:\.\d+)?))"
    r"\s*[ij]\s*$"
)


@dataclass(frozen=True)
class Worked:
    """One part of a complex link, against the printed part it computes.

    Attributes:
        part: ``"real part"`` or ``"imaginary part"``.
        printed: The printed part as written (``-1.142``).
        span: Where it stands in the line.
        expression: The link's part in the plain language (``1.0*0.540 - 2.0*0.841``).
        where: For an entry of a list, its place (``[1, 0]``); else ``""``.
        chain: What the links computing this printed part share (they are one claim).
    """

    part: str
    printed: str
    span: tuple[int, int]
    expression: str
    where: str
    chain: str


_PARTS = ("real part", "imaginary part")

#: A decimal written in a link (``0.524`` of ``e^(i×0.524)``).
_DECIMAL = re.compile(r"(?<![\w.])[-−]?\d+\.\d+(?![\w.])")


def worked(pieces: list[str], spans: list[tuple[int, int]]) -> list[Worked] | None:
    """The parts a chain's links work out, against its printed complex result (a number
    ``x + yj``, or a list of them entry by entry); None when it prints no such result.

    A link read as complex arithmetic (:func:`parts`) gives each part that is worked out
    (not zero as written, not the printed number itself); a list link, the parts of each
    entry against the printed entry at its place.
    """
    end = len(pieces) - 1
    number = printed_parts(pieces[-1])
    if number is not None:
        last: list[list[tuple[str, int]]] = [[(pieces[-1], 0)]]
        shown = [[number]]
        single = True
    else:
        entries = list_entries(pieces[-1])
        if entries is None:
            return None
        read = [[printed_parts(e) for e, _ in row] for row in entries]
        if any(p is None for row in read for p in row):
            return None
        last, shown, single = entries, [[p for p in row if p is not None] for row in read], False
    shape = [len(r) for r in last]
    out: list[Worked] = []
    for piece in pieces[:end]:
        rows = [[(piece, 0)]] if single else list_entries(piece)
        if rows is None or [len(r) for r in rows] != shape:
            continue
        for i, row in enumerate(rows):
            for j, (entry, _) in enumerate(row):
                both = parts(entry)
                if both is None:
                    continue
                where = "" if single else f"[{i}, {j}]"
                for expression, (value, offset), part in zip(
                    both, shown[i][j], _PARTS, strict=True
                ):
                    if expression is None or numeric_cell(expression) is not None:
                        continue  # zero as written, or the number itself: nothing worked out
                    try:
                        latexmath.parse(expression, where="arithmetic")
                    except ExpressionError:
                        continue
                    at = spans[end][0] + last[i][j][1] + offset
                    chain = f"{end}:{where or '-'}:{part}"
                    out.append(Worked(part, value, (at, at + len(value)), expression, where, chain))
    return out + _printed_between(pieces, spans, out, single, shape)


def _printed_between(
    pieces: list[str],
    spans: list[tuple[int, int]],
    found: list[Worked],
    single: bool,
    shape: list[int],
) -> list[Worked]:
    """A link between the first and the last that prints an entry as a number again
    (``[e^(i×0), …] = [1.0+0j, …] ≈ [1.0+0j, …]``): each printed part is checked against
    the part an earlier link works out for that entry, at its own place."""
    worked = {(w.where, w.part): w.expression for w in found}
    out: list[Worked] = []
    end = len(pieces) - 1
    for k in range(1, end):
        rows = [[(pieces[k], 0)]] if single else list_entries(pieces[k])
        if rows is None or [len(r) for r in rows] != shape:
            continue
        for i, row in enumerate(rows):
            for j, (entry, offset) in enumerate(row):
                printed = printed_parts(entry)
                if printed is None:
                    continue
                where = "" if single else f"[{i}, {j}]"
                for (value, at), part in zip(printed, _PARTS, strict=True):
                    expression = worked.get((where, part))
                    if expression is None:
                        continue
                    start = spans[k][0] + offset + at
                    chain = f"{k}:{where or '-'}:{part}"
                    out.append(
                        Worked(part, value, (start, start + len(value)), expression, where, chain)
                    )
    return out


def unread_numbers(pieces: list[str], spans: list[tuple[int, int]]) -> list[tuple[int, int]]:
    """The places of the decimals written in the links of a complex chain that are read
    neither as complex arithmetic nor as a list (``z × e^(i×0.524)``)."""
    out: list[tuple[int, int]] = []
    for piece, (start, _) in zip(pieces[:-1], spans, strict=False):
        if parts(piece) is not None or list_entries(piece) is not None:
            continue
        out.extend((start + m.start(), start + m.end()) for m in _DECIMAL.finditer(piece))
    return out


def printed_parts(text: str) -> tuple[tuple[str, int], tuple[str, int]] | None:
    """The real and imaginary parts of a printed complex number ``x + yj``, each as
    written with its offset in ``text``; None when ``text`` is no such number."""
    m = _LITERAL.match(text)
    if m is None:
        return None
    im = "im" if m.group("im") is not None else "neg"
    return (m.group("re").replace("−", "-"), m.start("re")), (
        m.group(im).replace("−", "-"),
        m.start(im),
    )


def list_entries(text: str) -> list[list[tuple[str, int]]] | None:
    """The entries of a list ``[a, b]`` or a list of rows ``[[a, b], [c, d]]``, row by row,
    each as written (stripped) with its offset in ``text``; None for anything else (an
    empty entry, rows of different lengths, a deeper list)."""
    body = text.strip()
    lead = len(text) - len(text.lstrip())
    if not (body.startswith("[") and body.endswith("]")):
        return None
    inner_at = lead + 1
    inner = body[1:-1]
    rows = _split(inner, inner_at)
    if rows is None:
        return None
    if all(e.startswith("[") and e.endswith("]") for e, _ in rows):
        out = []
        for e, at in rows:
            row = _split(e[1:-1], at + 1)
            if row is None or any(x.startswith("[") for x, _ in row):
                return None
            out.append(row)
        return out if len({len(r) for r in out}) == 1 else None
    if any(e.startswith("[") for e, _ in rows):
        return None
    return [rows]


def _split(text: str, offset: int) -> list[tuple[str, int]] | None:
    """``text`` cut at its top-level commas: each piece stripped, with its offset."""
    out: list[tuple[str, int]] = []
    depth = start = 0
    for k, ch in enumerate([*text, ","]):
        if ch in "([":
            depth += 1
        elif ch in ")]":
            depth -= 1
            if depth < 0:
                return None
        elif ch == "," and depth == 0:
            piece = text[start:k]
            if not piece.strip():
                return None
            out.append((piece.strip(), offset + start + len(piece) - len(piece.lstrip())))
            start = k + 1
    return out if depth == 0 else None


def parts(text: str) -> tuple[Part, Part] | None:
    """A complex expression's real and imaginary parts as plain real expressions; None
    when it writes no imaginary unit or cannot be read."""
    if not _UNIT.search(text):
        return None
    tokens = _tokens(text)
    if tokens is None:
        return None
    reader = _Reader(tokens)
    try:
        value = reader.sum()
    except _Unreadable:
        return None
    return value if reader.at == len(tokens) else None


def _tokens(text: str) -> list[tuple[str, str]] | None:
    out: list[tuple[str, str]] = []
    at = 0
    while at < len(text):
        if text[at:].strip() == "":
            break
        m = _TOKEN.match(text, at)
        if m is None or m.end() == at:
            return None
        if m.group("num") is not None:
            out.append(("imag" if m.group("unit") else "num", m.group("num")))
        elif m.group("name") is not None:
            name = m.group("name")
            out.append(("unit", name) if name in "ij" else ("name", name))
        else:
            op = m.group("op")
            out.append(("op", {"−": "-", "×": "*", "·": "*"}.get(op, op)))
        at = m.end()
    return out


class _Unreadable(Exception):
    """The text is no complex expression this reader reads."""


def _zero(number: str) -> bool:
    return float(number) == 0.0


def _grouped(x: str) -> str:
    """``x`` bracketed when it is a sum or difference (as a factor or a subtrahend)."""
    depth = 0
    for k, ch in enumerate(x):
        if ch == "(":
            depth += 1
        elif ch == ")":
            depth -= 1
        elif ch in "+-" and depth == 0 and k > 0:
            return f"({x})"
    return x


def _add(a: Part, b: Part, sign: str = "+") -> Part:
    if b is None:
        return a
    if a is None:
        return b if sign == "+" else f"-{_grouped(b)}"
    return f"{a} {sign} {_grouped(b) if sign == '-' else b}"


def _mul(a: Part, b: Part) -> Part:
    if a is None or b is None:
        return None
    if a == "1" or b == "1":  # the imaginary unit's own factor
        return b if a == "1" else a
    return f"{_grouped(a)}*{_grouped(b)}"


def _neg(a: Part) -> Part:
    return None if a is None else f"-{_grouped(a)}"


class _Reader:
    """Recursive descent over the tokens: sums of products of (signed) powers."""

    def __init__(self, tokens: list[tuple[str, str]]) -> None:
        self.tokens = tokens
        self.at = 0

    def peek(self) -> tuple[str, str] | None:
        return self.tokens[self.at] if self.at < len(self.tokens) else None

    def take(self, kind: str, text: str | None = None) -> str:
        tok = self.peek()
        if tok is None or tok[0] != kind or (text is not None and tok[1] != text):
            raise _Unreadable
        self.at += 1
        return tok[1]

    def sum(self) -> tuple[Part, Part]:
        re_, im = self.product()
        while (tok := self.peek()) is not None and tok[0] == "op" and tok[1] in "+-":
            self.at += 1
            r, i = self.product()
            re_, im = _add(re_, r, tok[1]), _add(im, i, tok[1])
        return re_, im

    def product(self) -> tuple[Part, Part]:
        a = self.signed()
        while (tok := self.peek()) is not None and (
            (tok[0] == "op" and tok[1] == "*")
            or tok[0] in ("num", "imag", "unit", "name")
            or tok == ("op", "(")
        ):
            if tok == ("op", "*"):
                self.at += 1
            b = self.signed()
            a = (
                _add(_mul(a[0], b[0]), _mul(a[1], b[1]), "-"),
                _add(_mul(a[0], b[1]), _mul(a[1], b[0])),
            )
        return a

    def signed(self) -> tuple[Part, Part]:
        tok = self.peek()
        if tok is not None and tok[0] == "op" and tok[1] in "+-":
            self.at += 1
            re_, im = self.signed()
            return (re_, im) if tok[1] == "+" else (_neg(re_), _neg(im))
        return self.power()

    def power(self) -> tuple[Part, Part]:
        tok = self.peek()
        if tok == ("name", "e"):
            self.at += 1
            self.take("op", "^")
            return self._exp(self.atom())
        base = self.atom()
        if self.peek() == ("op", "^"):
            raise _Unreadable  # a power of a complex number: not read here
        return base

    def atom(self) -> tuple[Part, Part]:
        tok = self.peek()
        if tok is None:
            raise _Unreadable
        kind, text = tok
        self.at += 1
        if kind == "num":
            return (None if _zero(text) else text), None
        if kind == "imag":
            return None, (None if _zero(text) else text)
        if kind == "unit":
            return None, "1"
        if kind == "name" and text in ("cos", "sin", "exp"):
            self.take("op", "(")
            arg = self.sum()
            self.take("op", ")")
            if text == "exp":
                return self._exp(arg)
            if arg[1] is not None:
                raise _Unreadable  # cos of a complex number: not read here
            return f"{text}({arg[0] if arg[0] is not None else 0})", None
        if kind == "op" and text == "(":
            inner = self.sum()
            self.take("op", ")")
            return inner
        raise _Unreadable

    @staticmethod
    def _exp(arg: tuple[Part, Part]) -> tuple[Part, Part]:
        """e to an imaginary power, ``e^(iθ) = cos θ + i·sin θ`` (Euler's formula)."""
        if arg[0] is not None:
            raise _Unreadable  # a real part in the exponent: not a rotation
        theta = arg[1] if arg[1] is not None else "0"
        return f"cos({theta})", f"sin({theta})"
