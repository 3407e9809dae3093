r"""Read the maths articles write in LaTeX as symtf's safe expression language.

An article displays ``e^{2.309}\approx 10.068`` or
``\frac{5.652}{21.372}``; :mod:`symtf.language.expr` reads ``e^2.309`` and
``5.652 / 21.372``. This module is a front end onto that same parser: it
tokenizes the LaTeX, rewrites the handful of constructions articles use into
the plain language, and hands the result to :func:`symtf.language.expr.parse`, so the
syntax tree, the limits and the exact evaluation are the ones every other
expression gets. Nothing is executed: an unknown command (``\input``,
``\def``, ``\catcode``) is an error, never a macro.

Accepted: ``e^{…}``, ``\exp``, ``\ln``, ``\log``, ``\frac{…}{…}`` (and
``\dfrac``, ``\tfrac``), ``\sqrt{…}``, ``\sqrt[n]{…}``, ``\times``, ``\cdot``,
``\div``, ``\left( … \right)`` and the ``\big`` family, ``\mathrm{…}``,
``\operatorname{…}``, ``\text{…}`` around names, accented names (``\hat{y}``, read
``hat_y``; in a label ``ŷ``), subscripted names (``Q_1``,
``S_{12}``, ``{K}_1``), ``^{\top}``/``^T`` for the transpose, ``\pi``,
``\infty``, angles in degrees (``30°``, ``30^\circ``, ``30\degree``: ``30*(pi/180)``),
implicit multiplication where it is unambiguous (``2e^{x}``,
``0.5x``, ``2\sqrt{3}``), ``bmatrix``/``pmatrix``/``array`` bodies, and
``\approx``/``≈``/``=`` separating an expression from the value it prints.

The module is one reader (its tables, tokenizer, recursive reader and the cuts of a
display at its relations share the tokens), and is kept whole past 800 lines for it.

Example:
    >>> to_plain(r"\frac{5.652}{21.372}")
    '5.652/21.372'
    >>> split_display(r"e^{2.309}\approx 10.068")
    ('e^{2.309}', '10.068')
"""

from __future__ import annotations

import re
import unicodedata
from dataclasses import dataclass

from symtf.errors import ExpressionError
from symtf.language import expr as sx

__all__ = [
    "GREEK_NAMES",
    "MAX_BRACE_DEPTH",
    "MAX_LATEX_LENGTH",
    "label_text",
    "looks_like_latex",
    "parse",
    "split_chain",
    "split_display",
    "split_links",
    "to_plain",
]

#: Longest LaTeX source accepted, in characters (the plain result must also fit ``expr.MAX_LENGTH``).
MAX_LATEX_LENGTH = 4000
#: Deepest nesting of braces and environments.
MAX_BRACE_DEPTH = 50

_FRACTIONS = {"frac", "dfrac", "tfrac", "cfrac"}
_NAMED_FUNCTIONS = {
    "exp": "exp",
    "ln": "ln",
    "log": "log",
    "max": "max",
    "min": "min",
    "sqrt": "sqrt",
    "sin": "sin",
    "cos": "cos",
    "tanh": "tanh",
}
_OPERATORS = {
    "times": "×",
    "cdot": "·",
    "div": "÷",
    "ast": "*",
    "odot": "∘",  # the element-wise (Hadamard) product
    "pm": None,
    "mp": None,
}
_SPACES = {
    ",",
    ";",
    ":",
    "!",
    " ",
    "quad",
    "qquad",
    "thinspace",
    "enspace",
    "medspace",
    "thickspace",
    "negthinspace",
    "displaystyle",
    "textstyle",
}
_SIZES = {
    "left",
    "right",
    "big",
    "Big",
    "bigg",
    "Bigg",
    "bigl",
    "bigr",
    "Bigl",
    "Bigr",
    "biggl",
    "biggr",
    "middle",
}
_NAME_WRAPPERS = {
    "mathrm",
    "operatorname",
    "text",
    "textrm",
    "mathit",
    "mathbf",
    "boldsymbol",
    "mathsf",
    "textbf",
    "textit",
    "bm",
}
#: Accents over a name: ``\hat{y}`` is the name ``hat_y`` (as the formula reader names it),
#: written ``ŷ`` in a label (the combining mark after the letter).
_ACCENTS = {"hat": "\u0302", "widehat": "\u0302", "bar": "\u0304", "overline": "\u0304",
            "tilde": "\u0303", "widetilde": "\u0303"}  # fmt: skip
_ACCENT_WORDS = {"\u0302": "hat", "\u0304": "bar", "\u0303": "tilde"}
_CONSTANTS = {"pi": "pi", "infty": "inf", "top": "ᵀ", "intercal": "ᵀ", "mathsf{T}": "ᵀ"}
_MATRICES = {"bmatrix", "pmatrix", "matrix", "vmatrix", "Bmatrix", "array", "smallmatrix"}
_RELATIONS = {"approx", "simeq", "eq", "equiv", "doteq"}
_ELISIONS = {"dots", "cdots", "ldots", "vdots", "ddots"}
#: The degree sign: an angle written ``30°`` (``30^\circ``, ``30\degree``) is read in
#: radians, as ``sin``/``cos`` take it: ``30*(pi/180)``, exactly π/6.
DEGREE_SIGN = "°"
_RADIANS_PER_DEGREE = ("*", "(", "pi", "/", "180", ")")
#: Greek-letter macros read as names (``\\alpha_1`` is the reference ``alpha_1``).
GREEK_NAMES = frozenset(
    [
        "alpha",
        "beta",
        "gamma",
        "delta",
        "epsilon",
        "varepsilon",
        "zeta",
        "eta",
        "theta",
        "iota",
        "kappa",
        "lambda",
        "mu",
        "nu",
        "xi",
        "rho",
        "sigma",
        "tau",
        "phi",
        "varphi",
        "chi",
        "psi",
        "omega",
        "Gamma",
        "Delta",
        "Theta",
        "Lambda",
        "Sigma",
        "Phi",
        "Psi",
        "Omega",
    ]
)
_FUNCTION_NAMES = set(sx.FUNCTIONS) | {
    "softmax",
    "sigmoid",
    "tanh",
    "sin",
    "cos",
    "gelu",
    "silu",
    "layernorm",
    "rmsnorm",
}


@dataclass(frozen=True, slots=True)
class _Tok:
    kind: str  # "cmd", "num", "letter", "op", "deg", "{", "}", "^", "_", "&", "row", "end"
    text: str
    pos: int


def looks_like_latex(text: str) -> bool:
    """Whether ``text`` uses LaTeX notation (a backslash command or braces)."""
    return "\\" in text or "{" in text or "}" in text


def split_display(text: str) -> tuple[str, str | None]:
    r"""Split ``lhs = … ≈ value`` (``\approx``, ``≈``, ``=``) into the expression and its printed value.

    Returns the chain up to its last relation (every link of ``a = b ≈ c``: ``a = b``,
    each checked against the value) and the plain number written after the last
    relation, or ``(text, None)`` when there is no relation or what follows the last
    one is not a plain number.
    """
    cuts = _relation_cuts(text)
    if not cuts:
        return text, None
    lhs, rhs = text[: cuts[-1][0]].strip(), text[cuts[-1][1] :].strip()
    number = re.sub(r"\\[,;:! ]|~", "", rhs.replace("−", "-")).replace(" ", "").rstrip(".,;")
    if lhs and re.fullmatch(r"-?\d+(\.\d+)?(e[-+]?\d+)?%?", number):
        return lhs, number
    return text, None


def _relation_cuts(text: str) -> list[tuple[int, int]]:
    r"""The spans of the top-level relations (``=``, ``≈``, ``\approx``, …) of ``text``."""
    depth = 0
    cuts: list[tuple[int, int]] = []
    for i, ch in enumerate(text):
        if ch in "{([":
            depth += 1
        elif ch in "})]":
            depth -= 1
        elif depth == 0:
            if ch in "=≈":
                cuts.append((i, i + 1))
            elif ch == "\\":
                m = re.match(r"\\([A-Za-z]+)", text[i:])
                if m and m.group(1) in _RELATIONS:
                    cuts.append((i, i + len(m.group(0))))
    return cuts


def split_links(text: str) -> list[str]:
    r"""The links of a chain ``a = b ≈ c``, each an expression, in order.

    An expression claim may state a chain of links that each compute its one printed
    value (``0.0025 × 0.498 + (-0.00749) × 0.502 = 0.001245 - 0.00376``); a text with
    no top-level relation is one link.

    Example:
        >>> split_links(r"0.198 \cdot 1 + 0.401 \cdot 3 = 0.198 + 1.203")
        ['0.198 \\cdot 1 + 0.401 \\cdot 3', '0.198 + 1.203']
        >>> split_links("e^{2.309}")
        ['e^{2.309}']
    """
    return [link for _, link in split_chain(text)[0]]


def split_chain(text: str) -> tuple[list[tuple[int, str]], list[str]]:
    r"""The links of a chain ``a = b ≈ c`` with their offsets, and the relations between them.

    Returns:
        Each link (stripped, as :func:`split_links` gives it) with its offset in ``text``,
        and the relations between consecutive links as written (``=``, ``≈``,
        ``\approx``, …), one fewer than the links.

    Example:
        >>> split_chain(r"1/4 + 1/4 = 0.5 \approx 0.50")
        ([(0, '1/4 + 1/4'), (12, '0.5'), (24, '0.50')], ['=', '\\approx'])
    """
    links: list[tuple[int, str]] = []
    relations: list[str] = []
    start = 0
    for a, b in _relation_cuts(text):
        piece = text[start:a]
        links.append((start + len(piece) - len(piece.lstrip()), piece.strip()))
        relations.append(text[a:b])
        start = b
    piece = text[start:]
    links.append((start + len(piece) - len(piece.lstrip()), piece.strip()))
    return links, relations


_DIGITS = frozenset("0123456789")


#: A number in scientific notation, ``1e-8`` or ``2.5E+3`` (not ``2e^{x}``, ``1e-8x``).
_SCIENTIFIC = re.compile(r"[0-9]*\.?[0-9]+[eE][-+]?[0-9]+(?![0-9A-Za-z.^_{])")


def _tokenize(text: str, where: str) -> list[_Tok]:
    toks: list[_Tok] = []
    i, n = 0, len(text)
    while i < n:
        ch = text[i]
        if ch.isspace():
            i += 1
        elif ch == "\\":
            if i + 1 < n and text[i + 1] == "\\":
                toks.append(_Tok("row", "\\\\", i))
                i += 2
                continue
            m = re.match(r"\\([A-Za-z]+|.)", text[i:])
            if not m:
                raise _fail(text, where, i, "a LaTeX command after the backslash")
            toks.append(_Tok("cmd", m.group(1), i))
            i += len(m.group(0))
        elif ch in _DIGITS or (ch == "." and i + 1 < n and text[i + 1] in _DIGITS):
            # ASCII digits only: "²".isdigit() is true, but it is no number to read here;
            # ``1e-8`` is one number (an ε), not 1·e − 8, unless a name or power follows
            m = _SCIENTIFIC.match(text, i) or re.match(r"[0-9]*\.?[0-9]+|[0-9]+\.?", text[i:])
            assert m is not None
            toks.append(_Tok("num", m.group(0), i))
            i += len(m.group(0))
        elif ch.isalpha():
            toks.append(_Tok("letter", ch, i))
            i += 1
        elif ch in "{}^_&":
            toks.append(_Tok(ch, ch, i))
            i += 1
        elif ch in "+-−*/()[],|×·÷≈=√ᵀ":
            toks.append(_Tok("op", ch, i))
            i += 1
        elif ch == DEGREE_SIGN:
            toks.append(_Tok("deg", ch, i))
            i += 1
        else:
            raise _fail(
                text, where, i, f"a number, a name, an operator or a LaTeX command, not {ch!r}"
            )
    toks.append(_Tok("end", "", n))
    return toks


def _fail(text: str, where: str, pos: int, expected: str) -> ExpressionError:
    return ExpressionError(
        f"{where}: in the LaTeX {text!r} at column {pos + 1}: expected {expected}"
    )


class _Reader:
    """Recursive descent over LaTeX tokens, writing the plain language as atoms."""

    def __init__(self, text: str, where: str, *, words: bool = False) -> None:
        self.text = text
        self.where = where
        self.words = words  # a label: text keeps its spaces (``\\text{Hello world}``)
        self.toks = _tokenize(text, where)
        self.i = 0
        self.depth = 0

    @property
    def tok(self) -> _Tok:
        return self.toks[self.i]

    def fail(self, expected: str) -> ExpressionError:
        return _fail(self.text, self.where, self.tok.pos, expected)

    def enter(self) -> None:
        self.depth += 1
        if self.depth > MAX_BRACE_DEPTH:
            raise self.fail(f"braces nested at most {MAX_BRACE_DEPTH} deep")

    def group(self) -> list[str]:
        """A ``{…}`` group (or a single token) as a list of atoms."""
        if self.tok.kind == "{":
            self.enter()
            self.i += 1
            atoms = self.sequence(stop={"}"})
            if self.tok.kind != "}":
                raise self.fail("a closing brace")
            self.i += 1
            self.depth -= 1
            return atoms
        return self.atom()

    def plain_group(self) -> str:
        """The raw text of a ``{…}`` group of letters and digits (``\\text{AI}``)."""
        if self.tok.kind != "{":
            t = self.tok
            self.i += 1
            return t.text
        self.i += 1
        parts: list[str] = []
        end = self.tok.pos
        while self.tok.kind not in ("}", "end"):
            t = self.tok
            if self.words and parts and t.pos > end:  # a space as written, kept in words
                parts.append(" ")
            end = t.pos + len(t.text) + (t.kind == "cmd")
            if t.kind == "cmd" and t.text in (" ", ",", ";", "!"):
                parts.append(" " if self.words else "_")
            elif t.kind == "cmd" and t.text in _CONSTANTS:
                parts.append(_CONSTANTS[t.text])
            elif t.kind == "cmd" and t.text in ("_", "{", "}"):
                parts.append("_")
            elif t.kind == "cmd" and t.text in _NAME_WRAPPERS:
                self.i += 1
                parts.append(self.plain_group())
                continue
            elif t.kind in ("letter", "num"):
                parts.append(t.text)
            elif t.kind == "_" or (t.kind == "op" and t.text in "-−"):
                parts.append("_")
            else:
                raise self.fail("letters or digits inside a name")
            self.i += 1
        if self.tok.kind != "}":
            raise self.fail("a closing brace")
        self.i += 1
        return "".join(parts).strip("_ ")

    def sequence(self, stop: set[str]) -> list[str]:
        atoms: list[str] = []
        while not (self.tok.kind in stop or (self.tok.kind == "cmd" and self.tok.text in stop)):
            if self.tok.kind == "end":
                break
            atoms.extend(self.atom())
        return atoms

    def atom(self) -> list[str]:
        t = self.tok
        if t.kind == "num":
            self.i += 1
            return [t.text.rstrip(".") if t.text.endswith(".") else t.text]
        if t.kind == "letter":
            self.i += 1
            # Letters run together into a name only when the article wrote them as one
            # (softmax); a single letter followed by a subscript is a subscripted name.
            name = t.text
            while self.tok.kind == "letter" and self.toks[self.i - 1].pos + 1 == self.tok.pos:
                name += self.tok.text
                self.i += 1
            return [self.subscripted(name)]
        if t.kind == "{":
            inner = self.group()
            if self.tok.kind == "_" and len(inner) == 1 and re.fullmatch(r"[A-Za-z]\w*", inner[0]):
                return [self.subscripted(inner[0])]
            return ["(", *inner, ")"] if len(inner) > 1 else inner
        if t.kind == "deg":
            self.i += 1
            return self.degrees()
        if t.kind == "^":
            self.i += 1
            if self.tok.kind == "cmd" and self.tok.text == "circ":  # 30^\circ
                self.i += 1
                return self.degrees()
            if self._braced_circ():  # 30^{\circ}
                self.i += 3
                return self.degrees()
            if self.tok.kind == "cmd" and self.tok.text in ("top", "intercal"):
                self.i += 1
                return ["ᵀ"]
            if self.tok.kind == "letter" and self.tok.text == "T":
                self.i += 1
                return ["ᵀ"]
            sup = self.group()
            if sup in (["ᵀ"], ["T"]):
                return ["ᵀ"]
            return ["^", "(", *sup, ")"]
        if t.kind == "_":
            raise self.fail("a name before the subscript")
        if t.kind == "op":
            self.i += 1
            return [{"−": "-", "|": "|"}.get(t.text, t.text)]
        if t.kind in ("&", "row"):
            raise self.fail("a matrix environment around '&' and '\\\\'")
        if t.kind == "cmd":
            return self.command()
        raise self.fail("more of the expression")

    def degrees(self) -> list[str]:
        """The degree sign after an angle: its radians, ``30°`` is ``30*(pi/180)`` (a label
        keeps the sign as written)."""
        return [DEGREE_SIGN] if self.words else list(_RADIANS_PER_DEGREE)

    def _braced_circ(self) -> bool:
        toks = self.toks[self.i : self.i + 3]
        return [(t.kind, t.text) for t in toks] == [("{", "{"), ("cmd", "circ"), ("}", "}")]

    def subscripted(self, name: str) -> str:
        if self.tok.kind != "_":
            return name
        self.i += 1
        sub = self.plain_group()
        if not sub:
            raise self.fail("a subscript")
        return f"{name}_{sub}"

    def command(self) -> list[str]:
        name = self.tok.text
        self.i += 1
        if name in _SPACES:
            return []
        if name == "left" and self._brackets_a_matrix():
            self.i += 1  # the bracket; the matrix environment writes its own
            inner = self.atom()
            if not (self.tok.kind == "cmd" and self.tok.text == "right"):
                raise self.fail("\\right closing the matrix")
            self.i += 2
            return inner
        if name in _SIZES:
            if (self.tok.kind == "op" and self.tok.text == ".") or (
                self.tok.kind == "cmd" and self.tok.text == "."
            ):
                self.i += 1
                return []
            if self.tok.kind == "cmd" and self.tok.text in (
                "{",
                "}",
                "|",
                "langle",
                "rangle",
                "lvert",
                "rvert",
            ):
                t = self.tok.text
                self.i += 1
                return [{"{": "(", "}": ")"}.get(t, "|" if t in ("|", "lvert", "rvert") else "")]
            return []
        if name in _FRACTIONS:
            num = self.group()
            den = self.group()
            return ["(", *_wrapped(num), "/", *_wrapped(den), ")"]
        if name == "sqrt":
            if self.tok.kind == "op" and self.tok.text == "[":
                self.i += 1
                index = self._until_bracket()
                radicand = self.group()
                return ["(", "(", *radicand, ")", "^", "(", "1", "/", "(", *index, ")", ")", ")"]
            return ["sqrt", "(", *self.group(), ")"]
        if name in _NAMED_FUNCTIONS:
            # \sin\!\left( … \right): spacing and a sized bracket before the argument
            while self.tok.kind == "cmd" and (
                self.tok.text in _SPACES
                or (
                    self.tok.text in _SIZES
                    and self.i + 1 < len(self.toks)
                    and self.toks[self.i + 1].kind == "op"
                    and self.toks[self.i + 1].text == "("
                )
            ):
                self.i += 1
            if self.tok.kind == "op" and self.tok.text == "(":
                return [_NAMED_FUNCTIONS[name]]
            if self.tok.kind == "^":  # \exp^{…} is not a thing articles write; e^{…} is
                raise self.fail(f"an argument after \\{name}")
            return [_NAMED_FUNCTIONS[name], "(", *self.atom(), ")"]
        if name in _OPERATORS:
            op = _OPERATORS[name]
            if op is None:
                raise self.fail(f"an operator symtf evaluates, not \\{name}")
            return [op]
        if name in _NAME_WRAPPERS:
            plain = self.plain_group()
            if plain in ("T", "ᵀ"):
                return ["ᵀ"]
            if re.fullmatch(r"\d+(\.\d+)?", plain):
                return [plain]
            if not plain:
                return []
            return [self.subscripted(plain)]
        if name in _ACCENTS:
            plain = self.plain_group()
            if not re.fullmatch(r"[A-Za-z]", plain):
                raise self.fail(f"one letter under \\{name}")
            if self.words:
                return [self.subscripted(unicodedata.normalize("NFC", plain + _ACCENTS[name]))]
            return [self.subscripted(f"{_ACCENT_WORDS[_ACCENTS[name]]}_{plain}")]
        if name in _CONSTANTS:
            return [_CONSTANTS[name]]
        if name == "degree":  # gensymb's \degree
            return self.degrees()
        if name in GREEK_NAMES:
            return [self.subscripted(name)]
        if name == "begin":
            return self.environment()
        if name in _ELISIONS:
            raise self.fail(
                f"every entry written out (\\{name} elides entries, which cannot be checked)"
            )
        if name in _RELATIONS:
            raise self.fail("one expression (split the printed value off with split_display)")
        if name in ("{", "}"):
            return ["(" if name == "{" else ")"]
        if self.words and name in ("|", "parallel", "Vert"):  # D(P \| Q): "from P to Q"
            return ["‖"]
        if name == "%":
            return ["%"]
        raise _fail(
            self.text,
            self.where,
            self.toks[self.i - 1].pos,
            f"a LaTeX command symtf knows, not \\{name}",
        )

    def _brackets_a_matrix(self) -> bool:
        nxt = self.toks[self.i + 1] if self.i + 1 < len(self.toks) else self.tok
        return (
            self.tok.kind == "op"
            and self.tok.text in "[("
            and nxt.kind == "cmd"
            and nxt.text == "begin"
        )

    def _until_bracket(self) -> list[str]:
        atoms: list[str] = []
        while not (self.tok.kind == "op" and self.tok.text == "]"):
            if self.tok.kind == "end":
                raise self.fail("']' closing the root's index")
            atoms.extend(self.atom())
        self.i += 1
        return atoms

    def environment(self) -> list[str]:
        env = self.plain_group()
        if env not in _MATRICES:
            raise self.fail(f"a matrix environment ({', '.join(sorted(_MATRICES))}), not {env!r}")
        if env == "array" and self.tok.kind == "{":
            self.plain_group()  # the column specification, e.g. {ccc}
        self.enter()
        rows: list[list[list[str]]] = [[[]]]
        while True:
            t = self.tok
            if t.kind == "end":
                raise self.fail(f"\\end{{{env}}}")
            if t.kind == "cmd" and t.text == "end":
                self.i += 1
                closing = self.plain_group()
                if closing != env:
                    raise self.fail(f"\\end{{{env}}}, not \\end{{{closing}}}")
                break
            if t.kind == "&":
                self.i += 1
                rows[-1].append([])
            elif t.kind == "row":
                self.i += 1
                rows.append([[]])
            elif t.kind == "cmd" and t.text == "hline":
                self.i += 1
            else:
                rows[-1][-1].extend(self.atom())
        self.depth -= 1
        while rows and rows[-1] == [[]]:
            rows.pop()
        if not rows:
            raise self.fail("at least one entry in the matrix")
        out = ["["]
        for r, row in enumerate(rows):
            out += [",", "["] if r else ["["]
            for c, cell in enumerate(row):
                if not cell:
                    raise self.fail("an entry in every cell of the matrix")
                out += ([","] if c else []) + cell
            out.append("]")
        out.append("]")
        return out


def _wrapped(atoms: list[str]) -> list[str]:
    """Parentheses around more than one atom (``\\frac{a+b}{c}`` → ``(a+b)/c``)."""
    return atoms if len(atoms) == 1 else ["(", *atoms, ")"]


def _strip_outer(text: str) -> str:
    """``(6/3)`` → ``6/3`` when one pair of parentheses wraps the whole text."""
    while text.startswith("(") and text.endswith(")"):
        depth = 0
        for k, ch in enumerate(text):
            depth += ch == "("
            depth -= ch == ")"
            if depth == 0 and k < len(text) - 1:
                return text
        text = text[1:-1]
    return text


def _is_operand_end(atom: str) -> bool:
    return bool(atom) and (atom[-1].isalnum() or atom[-1] in ")]ᵀ_π") and atom not in ("^",)


def _is_operand_start(atom: str) -> bool:
    return bool(atom) and atom != "ᵀ" and (atom[0].isalnum() or atom[0] in "([√π.")


def _join(atoms: list[str], *, words: bool = False) -> str:
    """Join atoms, writing ``*`` where two operands meet (implicit multiplication).

    With ``words`` (a label, the article's own words) nothing is invented: operands
    meet as written (``P(Hello)``), with a space between two words (``the cat``).
    """
    out: list[str] = []
    prev = ""
    for a in atoms:
        if not a:
            continue
        if prev and _is_operand_end(prev) and _is_operand_start(a):
            function_call = prev.lower() in _FUNCTION_NAMES and a == "("
            numbers = prev[0].isdigit() and a[0].isdigit()
            if numbers:
                raise ExpressionError(
                    f"two numbers side by side ({prev} {a}) with no operator between them"
                )
            if words:
                if prev[-1].isalnum() and a[0].isalnum():
                    out.append(" ")
            elif not function_call:
                out.append("*")
        out.append(a)
        prev = a
    return "".join(out)


def _bracket_span(atoms: list[str], start: int, step: int) -> int | None:
    """The index of the bracket matching ``atoms[start]`` walking by ``step`` (±1)."""
    opening, closing = ("[", "]") if step == 1 else ("]", "[")
    if atoms[start] != opening:
        return None
    depth = 0
    k = start
    while 0 <= k < len(atoms):
        if atoms[k] == opening:
            depth += 1
        elif atoms[k] == closing:
            depth -= 1
            if depth == 0:
                return k
        k += step
    return None


def _dot_products(atoms: list[str]) -> list[str]:
    """``[a, b]·[c, d]`` between two written vectors is their dot product, as articles mean it."""
    k = 0
    while k < len(atoms):
        if atoms[k] == "·" and 0 < k < len(atoms) - 1:
            left = _bracket_span(atoms, k - 1, -1)
            right = _bracket_span(atoms, k + 1, 1)
            flat = (
                left is not None
                and right is not None
                and "[" not in atoms[left + 1 : k - 1] + atoms[k + 2 : right]
            )
            if flat:
                assert left is not None and right is not None
                atoms = [
                    *atoms[:left],
                    "sum",
                    "(",
                    *atoms[left:k],
                    "∘",
                    *atoms[k + 1 : right + 1],
                    ")",
                    *atoms[right + 1 :],
                ]
                k = left + 2
        k += 1
    return atoms


def to_plain(text: str, *, where: str = "expression") -> str:
    r"""Rewrite LaTeX maths as symtf's plain expression language.

    Raises:
        ExpressionError: For an unknown command, unbalanced braces, nesting
            deeper than :data:`MAX_BRACE_DEPTH`, an elided matrix, or text
            longer than :data:`MAX_LATEX_LENGTH`; the message names ``where``
            and the column.
    """
    atoms = _read(text, where, "expression")
    try:
        return _strip_outer(_join(_dot_products(atoms)))
    except ExpressionError as e:
        raise ExpressionError(f"{where}: {e}") from None


def _read(text: str, where: str, what: str, *, words: bool = False) -> list[str]:
    """The atoms of LaTeX ``text`` (an expression, or a label read ``words``-wise).

    Raises:
        ExpressionError: Not a string, longer than :data:`MAX_LATEX_LENGTH`, or with an
            unmatched closing brace, naming ``where``.
    """
    if not isinstance(text, str):
        raise ExpressionError(
            f"{where}: expected the {what} as a string, found {type(text).__name__}"
        )
    if len(text) > MAX_LATEX_LENGTH:
        raise ExpressionError(
            f"{where}: expected LaTeX of at most {MAX_LATEX_LENGTH} characters but found {len(text)}"
        )
    reader = _Reader(text.strip().strip("$").strip(), where, words=words)
    atoms = reader.sequence(stop=set())
    if reader.tok.kind != "end":
        raise reader.fail(f"the end of the {what} (an unmatched closing brace?)")
    return atoms


def label_text(text: str, *, where: str = "label") -> str:
    r"""A label written as maths, readable as plain text and with nothing invented.

    The article's own words: ``P(\text{Hello})`` reads ``P(Hello)`` and
    ``h_{\text{AI}}`` reads ``h_AI``; where :func:`to_plain` writes an implicit product
    (``P*(Hello)``), a label keeps the juxtaposition it was written with.

    Raises:
        ExpressionError: As :func:`to_plain` does, naming ``where``.

    Example:
        >>> label_text(r"P(\text{the} \text{cat})")
        'P(the cat)'
    """
    atoms = _read(text, where, "label", words=True)
    try:
        return _strip_outer(_join(atoms, words=True))
    except ExpressionError as e:
        raise ExpressionError(f"{where}: {e}") from None


def parse(text: str, *, where: str = "expression") -> sx.Expression:
    """Parse LaTeX (or plain) maths into the same :class:`symtf.language.expr.Expression` as :func:`symtf.language.expr.parse`.

    The expression keeps the plain rewriting as its text, so literals are
    matched and errors are shown on what symtf actually read.
    """
    if looks_like_latex(text):
        return sx.parse(to_plain(text, where=where), where=where)
    text = text.replace(DEGREE_SIGN, "*" + "".join(_RADIANS_PER_DEGREE[1:]))
    if _VECTOR_DOT.search(text):  # ``[0.0, 0.1] · [0.1, 0.0]``: a dot product, as in LaTeX
        text = to_plain(text, where=where)
    return sx.parse(_implicit(text), where=where)


#: ``·`` between two written vectors in plain text.
_VECTOR_DOT = re.compile(r"\]\s*·\s*\[")


_IMPLICIT = re.compile(r"(?<![\w.])(\d+(?:\.\d+)?)(?=(?:e\^|[A-DF-Za-df-z(√]))")


def _implicit(text: str) -> str:
    """Implicit products in plain text: ``2e^x`` → ``2*e^x``, ``0.5x`` → ``0.5*x``, ``(a)(b)`` → ``(a)*(b)``."""
    return re.sub(r"\)\s*\(", ")*(", _IMPLICIT.sub(r"\1*", text))
