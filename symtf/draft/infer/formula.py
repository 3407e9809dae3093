r"""An article's formula, read as the tensor step it states: ``Q = X \cdot W_Q``.

Drafting weighs what an article *says* it computes above what its numbers happen to
match. This module reads one side of a displayed equation, in the LaTeX (or plain
text) the article wrote, into a small tree (:class:`Node`): names with their
subscripts and superscripts, numbers, sums, products, quotients, powers, transposes,
function calls, and index notation (``\frac{e^{z_i}}{\sum_j e^{z_j}}``,
``Q_i \cdot K_j^T``). Nothing is evaluated and nothing is looked up here:
:func:`parse` only reads. :mod:`symtf.draft.infer.stated` turns a tree into the
candidate steps it can mean over the tensors the article has shown.

The grammar is the one worked examples use; a formula it cannot read gives ``None``
(the article then states no step there, and the numbers alone are weighed).
"""

from __future__ import annotations

import re
from dataclasses import dataclass

__all__ = ["FUNCTIONS", "INDEX", "Node", "parse", "split_equation"]

#: Subscripts that index entries rather than name a tensor (``Q_i``, ``\alpha_{ij}``).
INDEX = re.compile(r"^(?:[ijklmnt]|[ijkl]{2}|[ijkl],\s*[ijkl]|t-1|t\+1)$")

#: Function words an article writes, and the op family each names.
FUNCTIONS: dict[str, str] = {
    "softmax": "softmax",
    "relu": "relu",
    "sigmoid": "sigmoid",
    "sigma": "sigmoid",
    "σ": "sigmoid",
    "tanh": "tanh",
    "gelu": "gelu",
    "silu": "silu",
    "swish": "silu",
    "exp": "exp",
    "log": "log",
    "ln": "log",
    "sqrt": "sqrt",
    "layernorm": "layernorm",
    "layer_norm": "layernorm",
    "ln_": "layernorm",
    "rmsnorm": "rmsnorm",
    "mean": "mean",
    "avg": "mean",
    "var": "var",
    "std": "std",
    "sum": "sum",
    "max": "max",
}

_GREEK = {
    "alpha": "α", "beta": "β", "gamma": "γ", "delta": "δ", "epsilon": "ε", "varepsilon": "ε",
    "theta": "θ", "lambda": "λ", "mu": "μ", "sigma": "σ", "tau": "τ", "phi": "φ", "psi": "ψ",
    "omega": "ω", "eta": "η", "pi": "π", "rho": "ρ", "nu": "ν", "xi": "ξ", "zeta": "ζ",
    "kappa": "κ", "chi": "χ", "Delta": "Δ", "Sigma": "Σ", "Omega": "Ω", "Theta": "Θ",
}  # fmt: skip
_GREEK_NAMES = {v: k for k, v in _GREEK.items()}

#: Commands that only lay out (spacing, sizing, colour), dropped with their argument-less selves.
_LAYOUT = {
    "left", "right", "big", "Big", "bigg", "Bigg", "bigl", "bigr", "Bigl", "Bigr", "quad",
    "qquad", "displaystyle", "textstyle", "limits", "nolimits", ",", ";", ":", "!", " ",
    "enspace", "thinspace", "medspace", "thickspace", "cdotp", "middle",
}  # fmt: skip
#: Commands whose one argument is a name (accents and fonts keep the name).
_FONT = {"mathbf", "mathrm", "mathit", "boldsymbol", "bm", "mathsf", "mathcal", "text", "textbf",
         "textit", "operatorname", "mathtt", "hat", "bar", "tilde", "vec", "widehat", "overline",
         "dot", "check"}  # fmt: skip
_ACCENT = {"hat": "hat", "bar": "bar", "tilde": "tilde", "widehat": "hat", "overline": "bar",
           "vec": "", "dot": "dot", "check": "check"}  # fmt: skip


@dataclass(frozen=True)
class Node:
    """One part of a formula.

    ``kind`` is one of:

    - ``name``: ``text`` the name as written (``W``, ``Score``, ``α``), ``sub`` and ``sup``
      its subscript and superscript as text (``"Q"``, ``"(1)"``), ``""`` when absent;
    - ``num``: ``text`` the number (``"3"``, ``"0.5"``);
    - ``add``, ``sub``, ``mul`` (a written ``·``, ``×``, ``*`` or two factors side by
      side), ``matmul`` (``@``), ``hadamard`` (``⊙``), ``div``, ``pow``: two ``args``;
    - ``neg``, ``T`` (a transpose), ``sqrt``: one ``args``;
    - ``call``: ``text`` the function word as written, ``args`` its arguments;
    - ``sum``: ``sub`` the index summed over, ``args`` the summand.
    """

    kind: str
    text: str = ""
    args: tuple[Node, ...] = ()
    sub: str = ""
    sup: str = ""

    def names(self) -> list[Node]:
        """Every name in the tree, in order."""
        if self.kind == "name":
            return [self]
        return [n for a in self.args for n in a.names()]


class _Fail(Exception):
    """The formula is not one this reader understands."""


_TOKEN = re.compile(
    r"\\(?:[A-Za-z]+|.)|\d+(?:\.\d+)?|\.\d+|\.T\b|\*\*|[A-Za-z]+|[{}()\[\]^_+\-*/=,|'@]|[·×⊙∘ᵀ⊤√−]"
    r"|[α-ωΑ-Ω]|\s+|."
)


def _tokens(text: str) -> list[str]:
    out = []
    for m in _TOKEN.finditer(text):
        t = m.group(0)
        if t.isspace():
            continue
        if t.startswith("\\") and t[1:] in _LAYOUT:
            continue
        out.append({"−": "-"}.get(t, t))
    return out


class _Parser:
    def __init__(self, tokens: list[str]) -> None:
        self.t = tokens
        self.i = 0

    def peek(self, k: int = 0) -> str | None:
        j = self.i + k
        return self.t[j] if j < len(self.t) else None

    def take(self, want: str | None = None) -> str:
        tok = self.peek()
        if tok is None or (want is not None and tok != want):
            raise _Fail(f"expected {want!r}, found {tok!r}")
        self.i += 1
        return tok

    # -- grammar --
    def expr(self) -> Node:
        left = self.term()
        while self.peek() in ("+", "-"):
            op = self.take()
            right = self.term()
            left = Node("add" if op == "+" else "sub", args=(left, right))
        return left

    def term(self) -> Node:
        left = self.unary()
        while True:
            tok = self.peek()
            if tok in ("·", "×", "*", "\\cdot", "\\times", "\\ast"):
                self.take()
                left = Node("mul", args=(left, self.unary()))
            elif tok == "@":  # code written as prose: ``Q = X @ W_Q``
                self.take()
                left = Node("matmul", args=(left, self.unary()))
            elif tok in ("⊙", "∘", "\\odot", "\\circ"):
                self.take()
                left = Node("hadamard", args=(left, self.unary()))
            elif tok in ("/", "\\div"):
                self.take()
                left = Node("div", args=(left, self.unary()))
            elif self._starts_factor(tok):
                left = Node("mul", args=(left, self.postfix()))
            else:
                return left

    def _starts_factor(self, tok: str | None) -> bool:
        if tok is None:
            return False
        if tok in ("(", "{", "√") or re.fullmatch(r"[A-Za-z]+|\d+(?:\.\d+)?|\.\d+|[α-ωΑ-Ω]", tok):
            return True
        if tok.startswith("\\"):
            word = tok[1:]
            return word in _GREEK or word in _FONT or word in (
                "frac", "dfrac", "tfrac", "sqrt", "exp", "log", "ln", "max", "min", "tanh",
                "sum", "mathrm", "operatorname", "sigma", "text",
            )  # fmt: skip
        return False

    def unary(self) -> Node:
        if self.peek() == "-":
            self.take()
            return Node("neg", args=(self.unary(),))
        if self.peek() == "+":
            self.take()
        return self.postfix()

    def postfix(self) -> Node:
        node = self.atom()
        while True:
            tok = self.peek()
            if tok in ("ᵀ", "⊤", ".T"):
                self.take()
                node = Node("T", args=(node,))
            elif tok == "**":
                self.take()
                node = Node("pow", args=(node, self.atom()))
            elif tok == "'":
                self.take()
                node = _rename(node, "'")
            elif tok == "^":
                self.take()
                sup = self.script()
                if sup in ("T", "\\top", "\\intercal", "⊤", "{T}", "t") or re.fullmatch(
                    r"\{?\\?top\}?|\{?\\?intercal\}?", sup
                ):
                    node = Node("T", args=(node,))
                elif node.kind == "name" and not node.sup and re.fullmatch(r"\(\d+\)|\(\w\)", sup):
                    node = Node("name", node.text, sub=node.sub, sup=sup)
                elif node.kind == "name" and node.text == "e":
                    node = Node("call", "exp", (_parse_script(sup),))
                else:
                    node = Node("pow", args=(node, _parse_script(sup)))
            elif tok == "_" and node.kind == "name" and not node.sub:
                self.take()
                node = Node("name", node.text, sub=self.script(), sup=node.sup)
            elif tok == "(" and node.kind == "name" and _function_word(node) is not None:
                self.take()
                args = [self.expr()]
                while self.peek() == ",":
                    self.take()
                    args.append(self.expr())
                self.take(")")
                node = Node("call", _function_word(node) or node.text, tuple(args), sub=node.sub)
            else:
                return node

    def script(self) -> str:
        """A subscript or superscript as text: one token, or a braced group."""
        tok = self.take()
        if tok == "{":
            depth, parts = 1, []
            while True:
                t = self.take()
                if t == "{":
                    depth += 1
                elif t == "}":
                    depth -= 1
                    if depth == 0:
                        break
                parts.append(t)
            return _script_text(parts)
        if tok.startswith("\\") and tok[1:] in _GREEK:
            return _GREEK[tok[1:]]
        return tok

    def group(self) -> Node:
        if self.peek() == "{":
            self.take()
            node = self.expr()
            self.take("}")
            return node
        return self.atom()

    def atom(self) -> Node:
        tok = self.take()
        if tok in ("(", "["):
            node = self.expr()
            self.take(")" if tok == "(" else "]")
            return node
        if tok == "{":
            node = self.expr()
            self.take("}")
            return node
        if tok == "|":
            node = self.expr()
            self.take("|")
            return Node("call", "abs", (node,))
        if tok == "√":
            return Node("sqrt", args=(self.postfix() if self.peek() != "(" else self.atom(),))
        if re.fullmatch(r"\d+(?:\.\d+)?|\.\d+", tok):
            return Node("num", tok)
        if re.fullmatch(r"[A-Za-z]+", tok):
            # a run of letters written without spaces is one word (``Score``), read again as
            # single-letter factors when the word names nothing (``QK``)
            return Node("name", tok)
        if re.fullmatch(r"[α-ωΑ-Ω]", tok):
            return Node("name", tok)
        if tok.startswith("\\"):
            return self.command(tok[1:])
        raise _Fail(f"unexpected {tok!r}")

    def command(self, word: str) -> Node:
        if word in ("frac", "dfrac", "tfrac"):
            num = self.group()
            den = self.group()
            return Node("div", args=(num, den))
        if word == "sqrt":
            if self.peek() == "[":
                raise _Fail("an n-th root")
            return Node("sqrt", args=(self.group(),))
        if word in _GREEK:
            return Node("name", _GREEK[word])
        if word in _FONT:
            inner = self._braced_text()
            accent = _ACCENT.get(word, "")
            if re.fullmatch(r"[A-Za-z][A-Za-z0-9_ \-]*|[α-ωΑ-Ω]", inner):
                text = inner.strip().replace(" ", "_").replace("-", "_")
                return Node("name", f"{accent}_{text}" if accent else text)
            sub = _Parser(_tokens(inner))
            node = sub.expr()
            if sub.peek() is not None:
                raise _Fail("a font group holding more than one expression")
            return node
        if word in ("exp", "log", "ln", "tanh", "max", "min", "sigma"):
            name = Node("name", "σ" if word == "sigma" else word)
            if self.peek() == "(":
                return name  # postfix reads the call
            if word in ("max", "min"):
                return name
            arg = self.postfix()
            return Node("call", word, (arg,))
        if word == "sum":
            index = ""
            while self.peek() in ("_", "^"):
                mark = self.take()
                text = self.script()
                if mark == "_":
                    index = text.split("=")[0].strip()
            body = self.term()
            return Node("sum", args=(body,), sub=index)
        if word in ("cdot", "times"):
            raise _Fail("a product sign with nothing before it")
        raise _Fail(f"the command \\{word}")

    def _braced_text(self) -> str:
        self.take("{")
        depth, parts = 1, []
        while True:
            t = self.take()
            if t == "{":
                depth += 1
            elif t == "}":
                depth -= 1
                if depth == 0:
                    break
            parts.append(t)
        return "".join(parts)


def _script_text(parts: list[str]) -> str:
    out = []
    for p in parts:
        if p.startswith("\\") and p[1:] in _GREEK:
            out.append(_GREEK[p[1:]])
        elif (p.startswith("\\") and p[1:] in _FONT) or p in ("{", "}"):
            continue
        elif p.startswith("\\"):
            out.append(p[1:])
        else:
            out.append(p)
    return "".join(out)


def _parse_script(text: str) -> Node:
    parser = _Parser(_tokens(text))
    node = parser.expr()
    if parser.peek() is not None:
        raise _Fail("a superscript holding more than one expression")
    return node


def _rename(node: Node, mark: str) -> Node:
    if node.kind != "name":
        raise _Fail("a prime on an expression")
    return Node("name", node.text + mark, sub=node.sub, sup=node.sup)


def _function_word(node: Node) -> str | None:
    if node.sup:
        return None
    word = node.text.lower().replace("\\", "")
    word = {"α": "alpha", "σ": "sigma"}.get(word, word)
    if word in FUNCTIONS or word in ("max", "min", "abs"):
        return word
    if word in ("attention", "ffn", "multihead", "mha", "head", "concat"):
        return word
    return None


def parse(text: str) -> Node | None:
    """Read one side of an equation (LaTeX or plain text); ``None`` when it cannot be read.

    >>> parse(r"X \\cdot W_Q").kind
    'mul'
    >>> parse(r"\\frac{Q K^T}{\\sqrt{2}}").args[1].kind
    'sqrt'
    """
    if not text or len(text) > 400:
        return None
    try:
        parser = _Parser(_tokens(text))
        node = parser.expr()
        if parser.peek() is not None:
            return None
        return node
    except (_Fail, RecursionError):
        return None


_RELATION = re.compile(r"\\approx|≈|=|:=|\\coloneqq|\\triangleq|\\equiv")


def split_equation(text: str) -> list[str]:
    """The sides of a chain ``a = b ≈ c`` at its top level (not inside braces or brackets)."""
    sides, depth, start = [], 0, 0
    i = 0
    while i < len(text):
        c = text[i]
        if c in "{([":
            depth += 1
        elif c in "})]":
            depth -= 1
        elif depth == 0:
            m = _RELATION.match(text, i)
            if m and not (c == "=" and i > 0 and text[i - 1] in "<>!:"):
                sides.append(text[start:i].strip())
                start = m.end()
                i = m.end()
                continue
        i += 1
    sides.append(text[start:].strip())
    return sides


def name_text(node: Node) -> str:
    """A name as a label would write it (``W_Q^{(1)}``), for matching the article's labels."""
    out = _GREEK_NAMES.get(node.text, node.text)
    if node.sub:
        out += "_" + node.sub
    if node.sup:
        out += "^{" + node.sup + "}"
    return out
