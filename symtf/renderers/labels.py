r"""An article's labels typeset as maths, by one path, for every output.

A label is what the article wrote beside a number: ``Q_1 K_1^T``, ``sqrt(2)``, ``d_k``,
``1.1*1.1 = 1.21``, ``S_1 + M``, ``H_1 AI row: weights``. :func:`parts` reads it into
pieces of text and pieces of maths. A maths piece is rebuilt from what a small grammar
matched (a symbol with its subscript or transpose, a square root, numbers and the
operators between them, a function applied to those), never copied, so nothing of a
label reaches LaTeX or HTML unescaped; everything else stays text, as the article wrote
it. The same pieces are then written for each output:

- :func:`label_tex`: LaTeX text mode (headings, paragraphs, lists);
- :func:`label_math`: LaTeX math mode (an entry's name inside a formula);
- :func:`entry_math`: an entry of a labelled table inside a formula (``(S_1)_{2,1}``);
- :func:`label_html`: HTML, the maths as MathML;
- :func:`label_plain`: Unicode text for a terminal.

A label written in LaTeX (``h_{\text{AI}}``) is first read as the article's plain words
(:func:`symtf.language.latexmath.label_text`), then typeset the same way.

Example:
    >>> label_tex("Q_1 K_1^T")
    '$Q_{1}\\,K_{1}^{\\top}$'
    >>> label_tex("sqrt(2) scale divisor")
    '$\\sqrt{2}$ scale divisor'
    >>> label_tex("1.1*1.1 = 1.21")
    '$1.1 \\cdot 1.1 = 1.21$'
    >>> label_tex("X sum love: result")
    'X sum love: result'
"""

from __future__ import annotations

import contextlib
import functools
import re
from dataclasses import dataclass

from symtf.errors import ExpressionError
from symtf.language.latexmath import GREEK_NAMES, label_text

#: Greek letters a label may spell out (``alpha_1``, ``sigma^2``).
_GREEK = frozenset(GREEK_NAMES)
#: Functions a label may apply (``exp(x)``, ``softmax(S_1)``); the rest are text.
_FUNCTIONS = {
    "exp": r"\exp",
    "log": r"\log",
    "ln": r"\ln",
    "max": r"\max",
    "min": r"\min",
    "tanh": r"\tanh",
    "softmax": r"\operatorname{softmax}",
    "relu": r"\operatorname{ReLU}",
    "ReLU": r"\operatorname{ReLU}",
    "GELU": r"\operatorname{GELU}",
    "gelu": r"\operatorname{GELU}",
    "sigmoid": r"\sigma",
}
#: Operators between maths atoms, as LaTeX.
_OPERATORS = {
    "+": "+",
    "-": "-",
    "−": "-",
    "*": r"\cdot",
    "·": r"\cdot",
    "×": r"\times",
    "/": "/",
    "=": "=",
    "≈": r"\approx",
    "≤": r"\le",
    "≥": r"\ge",
}

_SUB = r"(?:\{[A-Za-z0-9,]{1,12}\}|[A-Za-z0-9]{1,12})"
_SUP = r"(?:\{[-A-Za-z0-9.\\]{1,8}\}|\(\(?[A-Za-z0-9]{1,3}\)?\)|\\top|-?[0-9]{1,3}|[A-Za-z])"
#: One lexeme of a label; ``kind`` is the group that matched.
_LEXEME = re.compile(
    r"(?P<space>\s+)"
    r"|(?P<sqrt>sqrt(?=\()|√)"
    r"|(?P<number>[0-9]+(?:\.[0-9]+)?(?:[eE][+-]?[0-9]+)?(?![A-Za-z_0-9]))"
    rf"|(?P<symbol>(?P<base>[A-Za-z]+)(?:_(?P<sub>{_SUB}))?(?:\^(?P<sup>{_SUP}))?"
    r"(?![A-Za-z0-9_^{]))"
    r"|(?P<op>[+\-−*·×/=≈≤≥])"
    r"|(?P<open>\()|(?P<close>\))|(?P<comma>,(?=\S))"
    r"|(?P<other>[^\s]+?(?=\s|$|[()]))"
    r"|(?P<rest>\S)"
)


@dataclass(frozen=True)
class Piece:
    """A run of a label: text as written, or maths as LaTeX built from the grammar."""

    math: bool
    text: str  # the label's own characters (text) or math-mode LaTeX (maths)


@dataclass(frozen=True)
class _Lex:
    kind: str
    text: str
    tex: str = ""  # math-mode LaTeX, for a lexeme that can be maths
    strong: bool = False  # maths on its own (a subscript, a transpose, an operator, a root)


def _symbol_tex(m: re.Match[str]) -> tuple[str, bool] | None:
    """A symbol as LaTeX, and whether it is maths on its own; ``None`` for a plain word."""
    base, sub, sup = m.group("base"), m.group("sub"), m.group("sup")
    if base in _GREEK:
        tex = "\\" + base
    elif len(base) <= 2 or (sub is None and sup is None and len(base) == 1):
        tex = base
    else:
        return None  # a word (attn_scores, scaled): text, however it is subscripted
    if sub is not None:
        inner = sub.strip("{}")
        if len(inner) > 1 and inner.isalpha() and inner not in _GREEK:
            tex += r"_{\text{" + inner + "}}"  # Y_final: a word as the subscript
        else:
            tex += "_{" + ("\\" + inner if inner in _GREEK else inner) + "}"
    if sup is not None:
        inner = sup.strip("{}")
        if inner in ("T", "\\top"):
            tex += "^{\\top}"
        elif inner.startswith("("):  # z^((2)): a superscript in parentheses, z^{(2)}
            tex += "^{(" + inner.strip("()") + ")}"
        elif re.fullmatch(r"-?[A-Za-z0-9.]+", inner):
            tex += "^{" + inner + "}"
        else:
            return None
    strong = sub is not None or sup is not None
    return tex, strong


def _lex(label: str) -> list[_Lex]:
    out: list[_Lex] = []
    pos = 0
    while pos < len(label):
        m = _LEXEME.match(label, pos)
        if m is None or m.end() == pos:  # pragma: no cover - the last branch takes any char
            out.append(_Lex("text", label[pos]))
            pos += 1
            continue
        kind = m.lastgroup or "rest"
        if kind in ("base", "sub", "sup"):
            kind = "symbol"
        text = m.group(0)
        pos = m.end()
        if kind == "symbol":
            if text in _FUNCTIONS and label.startswith("(", pos):
                out.append(_Lex("function", text, _FUNCTIONS[text], True))
                continue
            got = _symbol_tex(m)
            out.append(_Lex("text", text) if got is None else _Lex("symbol", text, *got))
        elif kind == "number":
            out.append(_Lex("number", text, text))
        elif kind == "sqrt":
            out.append(_Lex("sqrt", text, r"\sqrt", True))
        elif kind == "op":
            out.append(_Lex("op", text, _OPERATORS[text], True))
        elif kind in ("open", "close", "comma"):
            out.append(_Lex(kind, text, {"open": "(", "close": ")", "comma": ","}[kind]))
        elif kind == "space":
            out.append(_Lex("space", text))
        else:
            out.append(_Lex("text", text))
    return out


_MATHS = ("symbol", "number", "sqrt", "op", "open", "close", "comma", "function")


def _runs(lexemes: list[_Lex]) -> list[tuple[bool, list[_Lex]]]:
    """Maximal runs of lexemes that can be maths (spaces inside them kept), and the rest."""
    out: list[tuple[bool, list[_Lex]]] = []
    cur: list[_Lex] = []
    for lx in lexemes:
        if lx.kind in _MATHS or (lx.kind == "space" and cur):
            cur.append(lx)
            continue
        if cur:
            out.append((True, cur))
            cur = []
        out.append((False, [lx]))
    if cur:
        out.append((True, cur))
    out = [piece for is_math, run in out for piece in (_split(run) if is_math else [(False, run)])]
    # a run keeps its spaces inside; the spaces at its ends go back to the text
    fixed: list[tuple[bool, list[_Lex]]] = []
    for is_math, run in out:
        if not is_math:
            fixed.append((False, run))
            continue
        k = len(run)
        while k and run[k - 1].kind == "space":
            k -= 1
        fixed.append((True, run[:k]))
        if k < len(run):
            fixed.append((False, run[k:]))
    return fixed


def _split(run: list[_Lex]) -> list[tuple[bool, list[_Lex]]]:
    """A run cut where two atoms stand side by side and one of them is a plain letter or a
    number: ``Q_1 K_1^T`` is one product, ``R_2 I`` a symbol and a word."""
    out: list[tuple[bool, list[_Lex]]] = []
    start = 0
    for k, lx in enumerate(run):
        if lx.kind != "space":
            continue
        before = [x for x in run[:k] if x.kind != "space"]
        after = [x for x in run[k + 1 :] if x.kind != "space"]
        if not before or not after:
            continue
        left, right = before[-1], after[0]
        joined = left.kind in ("op", "open", "comma", "sqrt", "function") or right.kind in (
            "op",
            "close",
            "comma",
        )
        # a factor of an equation: O = H W_O = H (an operator on the far side of either)
        in_formula = (len(before) > 1 and before[-2].kind == "op") or (
            len(after) > 1 and after[1].kind == "op"
        )
        if joined or in_formula or (left.strong and right.strong) or left.kind == "close":
            continue
        out.append((True, run[start:k]))
        out.append((False, [lx]))
        start = k + 1
    out.append((True, run[start:]))
    return [(m, r) for m, r in out if r]


def _balanced(run: list[_Lex]) -> list[_Lex]:
    """The run cut before an unmatched parenthesis (``H (heads…`` keeps only ``H``)."""
    depth = 0
    for k, lx in enumerate(run):
        if lx.kind == "open":
            depth += 1
        elif lx.kind == "close":
            if depth == 0:
                return run[:k]
            depth -= 1
    if depth == 0:
        return run
    last_open = max(k for k, lx in enumerate(run) if lx.kind == "open")
    return _balanced(run[:last_open])


def _run_tex(run: list[_Lex]) -> str:
    """A maths run as LaTeX: ``sqrt(x)`` as a root, a binary operator spaced, a unary one
    not, factors written side by side with a thin space."""
    out: list[str] = []
    k = 0
    prev = ""  # the kind of the last atom written
    while k < len(run):
        lx = run[k]
        if lx.kind == "space":
            k += 1
            nxt = run[k] if k < len(run) else None
            if (
                prev in ("symbol", "number", "close")
                and nxt is not None
                and nxt.kind
                in (
                    "symbol",
                    "number",
                    "sqrt",
                    "function",
                    "open",
                )
            ):
                out.append(r"\,")  # Q_1 K_1^T: a product written with a space
            continue
        if lx.kind == "sqrt":
            arg, k = _sqrt_argument(run, k + 1)
            out.append(r"\sqrt{" + arg + "}")
            prev = "close"
            continue
        if lx.kind == "op":
            binary = prev in ("symbol", "number", "close")
            out.append(f" {lx.tex} " if binary else lx.tex)
            prev = "op"
        elif lx.kind == "comma":
            out.append(", ")
            prev = "comma"
        else:
            out.append(
                lx.tex
                + (
                    " "
                    if lx.tex.endswith(tuple("abcdefghijklmnopqrstuvwxyz"))
                    and lx.tex.startswith("\\")
                    else ""
                )
            )
            prev = lx.kind
        k += 1
    return re.sub(r" {2,}", " ", "".join(out)).strip()


def _sqrt_argument(run: list[_Lex], k: int) -> tuple[str, int]:
    """The argument of a root at ``run[k]``: a parenthesised run, or one atom (``√2``)."""
    if k < len(run) and run[k].kind == "open":
        depth = 0
        for e in range(k, len(run)):
            depth += (run[e].kind == "open") - (run[e].kind == "close")
            if depth == 0:
                return _run_tex(run[k + 1 : e]), e + 1
        return _run_tex(run[k + 1 :]), len(run)
    if k < len(run) and run[k].kind in ("symbol", "number"):
        return run[k].tex, k + 1
    return "", k


def _strong(run: list[_Lex], whole: bool) -> bool:
    """Whether a run is maths: a symbol with a subscript or transpose, an operator between
    atoms, a root or a function; or the whole label is one symbol (``Y``)."""
    atoms = [lx for lx in run if lx.kind != "space"]
    if not atoms:
        return False
    if any(lx.strong for lx in atoms if lx.kind != "op"):
        return True
    ops = [k for k, lx in enumerate(atoms) if lx.kind == "op"]
    if any(0 < k < len(atoms) - 1 for k in ops):
        return True  # an operator between two atoms: 1.1*1.1, S + M
    return whole and len(atoms) == 1 and atoms[0].kind == "symbol"


@functools.lru_cache(maxsize=4096)
def _parts(label: str) -> tuple[Piece, ...]:
    if "\\" in label:
        # not readable as LaTeX: read as written (a backslash is then only text)
        with contextlib.suppress(ExpressionError):
            label = label_text(label)
    lexemes = _lex(label)
    only_one = sum(1 for lx in lexemes if lx.kind != "space") == 1
    pieces: list[Piece] = []

    def text(s: str) -> None:
        if pieces and not pieces[-1].math:
            pieces[-1] = Piece(False, pieces[-1].text + s)
        elif s:
            pieces.append(Piece(False, s))

    for is_math, run in _runs(lexemes):
        if not is_math:
            text("".join(lx.text for lx in run))
            continue
        lead = 0
        while lead < len(run) and (
            run[lead].kind in ("close", "comma", "space")
            or (run[lead].kind == "op" and run[lead].text not in "+-−")
        ):
            lead += 1  # a leading relation, comma or bracket is the sentence's
        if lead:
            text("".join(lx.text for lx in run[:lead]))
            run = run[lead:]
        kept = _balanced(run)
        while kept and kept[-1].kind in ("op", "comma", "open", "space") and kept[-1].text != ")":
            kept = kept[:-1]  # a trailing operator or comma is the sentence's, not the maths'
        if _strong(kept, only_one) and kept:
            pieces.append(Piece(True, _run_tex(kept)))
            text("".join(lx.text for lx in run[len(kept) :]))
        else:
            text("".join(lx.text for lx in run))
    return tuple(pieces)


def parts(label: str) -> tuple[Piece, ...]:
    """A label read into text and maths pieces, in order (see the module docstring)."""
    return _parts(label)


def is_math(label: str) -> bool:
    """Whether the whole label is one piece of maths (``Q_1 K_1^T``, ``S_1``, ``d_k``)."""
    p = parts(label)
    return len(p) == 1 and p[0].math


def label_tex(label: str) -> str:
    r"""A label in LaTeX text mode: its maths in ``$…$``, its text escaped."""
    from symtf.renderers.tex import escape

    return "".join("$" + p.text + "$" if p.math else escape(p.text) for p in parts(label))


def label_math(label: str) -> str:
    r"""A label in LaTeX math mode: its maths as maths, its text in ``\text{…}``."""
    from symtf.renderers.tex import math_text

    return "".join(p.text if p.math else math_text(p.text) for p in parts(label))


def entry_math(label: str, at: str) -> str:
    r"""An entry of a labelled table inside a formula: ``S_1`` row 2, column 1 as
    ``(S_{1})_{2,1}``; ``Y`` as ``Y_{2,1}``; a label in words as ``[\text{…}]_{2,1}``
    (plain brackets: MathML spaces stretchy ones apart).

    Args:
        label: The table's label.
        at: The entry's place as LaTeX (``2,1``, counted from 1), or ``""`` for a scalar.
    """
    inner = label_math(label)
    if not at:
        return "{" + inner + "}"
    p = parts(label)
    if len(p) == 1 and p[0].math and re.fullmatch(r"\\?[A-Za-z]+", p[0].text):
        return inner + "_{" + at + "}"  # one plain letter: Y_{2,1}
    if len(p) == 1 and p[0].math:
        return "(" + inner + ")_{" + at + "}"
    return "[" + inner + "]_{" + at + "}"


def label_plain(label: str) -> str:
    """A label for a terminal: its maths as Unicode (``Q₁ K₁ᵀ`` reads ``Q_1 K_1ᵀ``)."""
    from symtf.renderers.plain import to_text

    text = "".join(to_text(p.text) if p.math else p.text for p in parts(label))
    return re.sub(r" ?· ?", " · ", text)


__all__ = [
    "Piece",
    "entry_math",
    "is_math",
    "label_math",
    "label_plain",
    "label_tex",
    "parts",
]
