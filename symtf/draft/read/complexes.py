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

__all__ = ["parts", "printed_parts"]

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
