"""A quantity the article works out at several indices, set by name at another one.

An article that works ``θ₀ = 10000^(-2×0/256)``, ``θ₁ = 10000^(-2×1/256)`` and
``θ₆₄ = 10000^(-2×64/256)`` shows how ``θᵢ`` is computed from its index: the same
expression, with the index written where the subscript's number is. A number it sets by
that name at an index it does not work out (``θ₂ = 0.965`` in a list of frequencies) is
that expression at the new index, and is checked as it.

The rule reads only what the article writes, nothing is guessed:

- the worked lines are displayed arithmetic labelled by the name with a numeric
  subscript (``θ₁``, ``θ_1``, ``θ_{1}``), in the same cell as the number;
- the index stands in the expression as a number equal to the subscript; replacing it
  by a placeholder gives the line's *form*;
- one form only is shared by two worked indices or more (a line where the index
  coincides with another number of the form, ``θ₂ = 10000^(-2×2/256)``, gives another
  form, shared by no second index, and does not count); with two such forms the
  article is not read;
- the number is set by the same name (``NAME = value`` in its sentence) at an index
  no worked line has.

Two more ways of setting a number at an index read the same forms: an entry of a list
set by the bare name (``θ = [1.0, 0.982, 0.965, ..., 0.0001]``, its entries before the
first ellipsis at their indices, when the worked ones repeat their lines), and a line
labelled by a word and an index (``Head 3: -0.125``) under lines that write the
expression of the index (``Head 1: m = -(r^1)``, …).
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from symtf.draft.article import Article, Display

__all__ = ["IndexedForm", "at_index"]

_SUBSCRIPT_DIGITS = str.maketrans("₀₁₂₃₄₅₆₇₈₉", "0123456789")
#: A name with a numeric subscript: ``θ₁₂₇``, ``\theta_1``, ``θ_{64}``.
_INDEXED = re.compile(r"^(?P<base>[^\s_₀-₉=]+?)(?:(?P<uni>[₀-₉]+)|_\{?(?P<plain>\d+)\}?)$")
#: A number standing alone in an expression (not part of a longer one).
_NUMBER = re.compile(r"(?<![\d.])\d+(?:\.\d+)?(?![\d.])")
_PLACEHOLDER = "\x00"


@dataclass(frozen=True)
class IndexedForm:
    """The expression of a name at an index, as the article's worked lines show it."""

    name: str
    index: int
    expression: str
    worked: tuple[str, ...]
    line: int


def _text(printed: str) -> str:
    """A printed number as written, with a typographic minus read as ``-``."""
    return printed.strip().replace("−", "-")


def _split(name: str) -> tuple[str, int] | None:
    m = _INDEXED.match(name.strip())
    if m is None:
        return None
    digits = m.group("uni") or m.group("plain") or ""
    return m.group("base"), int(digits.translate(_SUBSCRIPT_DIGITS))


def _form(latex: str, index: int) -> str | None:
    """The expression with every number equal to ``index`` replaced by a placeholder."""
    text = " ".join(latex.split())
    hits = [m for m in _NUMBER.finditer(text) if m.group(0) == str(index)]
    if not hits:
        return None
    out, at = [], 0
    for m in hits:
        out.append(text[at : m.start()])
        out.append(_PLACEHOLDER)
        at = m.end()
    out.append(text[at:])
    return "".join(out)


def _forms(article: Article, base: str, cell: Any) -> dict[str, list[tuple[int, Display]]]:
    forms: dict[str, list[tuple[int, Display]]] = {}
    for d in article.displays:
        if d.cell != cell or len(d.rows) != 1 or len(d.rows[0]) != 1:
            continue
        split = _split(d.label)
        if split is None or split[0] != base:
            continue
        form = _form(d.latex, split[1])
        if form is not None:
            forms.setdefault(form, []).append((split[1], d))
    return forms


def at_index(f: Any, article: Article, value: str) -> IndexedForm | None:
    """The worked form of the name a single number is set by, at its index; else None."""
    context = (getattr(f, "context", "") or "").replace("−", "-")
    m = re.search(rf"(\S+)\s*=\s*{re.escape(value)}(?![\d.])", context)
    if m is None:
        return _in_list(f, article, value) or _at_labelled_index(f, article, value, context)
    split = _split(m.group(1))
    if split is None:
        return None
    base, index = split
    cell = getattr(f, "cell", None)
    forms = _forms(article, base, cell)
    worked = {i for lines in forms.values() for i, _ in lines}
    if index in worked:
        return None  # worked out by name: a restatement of that line, if anything
    shared = [(form, lines) for form, lines in forms.items() if len({i for i, _ in lines}) >= 2]
    if len(shared) != 1:
        return None
    form, lines = shared[0]
    names = sorted({(i, d.label.strip()) for i, d in lines})
    return IndexedForm(
        m.group(1),
        index,
        form.replace(_PLACEHOLDER, str(index)),
        tuple(n for _, n in names),
        min(d.line for _, d in lines),
    )


#: A list set by a bare name: ``θ = [1.0, 0.982, 0.965, ..., 0.0001]``.
_LIST = re.compile(r"(?P<name>[^\s=\[\]`$]+)\s*=\s*\[(?P<body>[^\[\]]*)\]")
_ELLIPSIS = re.compile(r"^(?:\.\.\.|…|\\[lc]?dots)$")


def _in_list(f: Any, article: Article, value: str) -> IndexedForm | None:
    """``θ = [1.0, 0.982, 0.965, ..., 0.0001]`` where the article works θ₀ and θ₁ out as
    1.0 and 0.982: the list is θ from its first worked index on, so its entries before the
    first ellipsis are θ at their indices (0.965 is θ₂). Taken so only when every entry
    of that run at a worked index repeats that line's printed value to the same digits
    (two at least: a list of other values, ``θ = [1.0, 0.99, 0.98, …]`` for a spacing
    the article rejects, is another quantity), and the number is in that run."""
    places = tuple(getattr(f, "places", ()) or ())
    if len(places) != 1 or places[0].column is None or getattr(f, "cell", None) is not None:
        return None
    lines = article.text.splitlines()
    at = places[0]
    if not 1 <= at.line <= len(lines):
        return None
    text = lines[at.line - 1]
    for m in _LIST.finditer(text):
        start = m.start("body")
        if not start < at.column <= m.end("body"):
            continue
        entries, offset = [], start
        for raw in m.group("body").split(","):
            entries.append((raw.strip(), offset + len(raw) - len(raw.lstrip())))
            offset += len(raw) + 1
        run = []
        for entry, column in entries:
            if _ELLIPSIS.match(entry):
                break
            run.append((entry, column))
        k = next((k for k, (_, c) in enumerate(run) if c + 1 == at.column), None)
        if k is None or run[k][0].replace("−", "-") != value:
            return None
        return _list_entry(article, m.group("name"), [e for e, _ in run], k)
    return None


def _list_entry(article: Article, name: str, run: list[str], k: int) -> IndexedForm | None:
    forms = _forms(article, name, None)
    shared = [(form, lines) for form, lines in forms.items() if len({i for i, _ in lines}) >= 2]
    if len(shared) != 1:
        return None
    form, lines = shared[0]
    first = min(i for i, _ in lines)
    printed = {i: d.rows[0][0] for i, d in lines}
    checked = [i for i in range(first, first + len(run)) if i in printed]
    if len(checked) < 2 or not all(_text(run[i - first]) == _text(printed[i]) for i in checked):
        return None
    index = first + k
    names = sorted({(i, d.label.strip()) for i, d in lines})
    return IndexedForm(
        f"{name}[{k}]",
        index,
        form.replace(_PLACEHOLDER, str(index)),
        tuple(n for _, n in names),
        min(d.line for _, d in lines),
    )


#: A line labelled by a word and an index: ``Head 3: m = -(r^3)``, ``Head 3: -0.125``.
_LABELLED = re.compile(r"^\s*(?P<word>[A-Za-z]+)\s+(?P<k>\d+)\s*:\s*(?P<rest>.+?)\s*$")
#: A name in a worked expression (a function's name is not one).
_NAME = re.compile(r"(?<![\w.])[A-Za-z_]\w*(?![\w(])")


def _at_labelled_index(f: Any, article: Article, value: str, context: str) -> IndexedForm | None:
    """``Head 3: -0.125`` where the article writes ``Head 1: m = -(r^1)``, ``Head 2: m =
    -(r^2)``, …: the worked form at index 3, each name in it (``r``) replaced by the one
    displayed line that works it out (``r = 2^(-8/8) = 0.5``). None unless every name has
    exactly one such line, and the lines labelled by the word share one form (two worked
    indices or more, as for a subscript). The worked lines print no value, so an index
    they write out is checked too."""
    if getattr(f, "cell", None) is not None:
        return None
    m = _LABELLED.match(context)
    if m is None or not re.match(rf"{re.escape(value)}(?![\d.])", m.group("rest")):
        return None
    word, index = m.group("word"), int(m.group("k"))
    forms: dict[str, list[tuple[int, int]]] = {}
    names: dict[str, str] = {}
    for n, line in enumerate(article.text.splitlines(), 1):
        w = _LABELLED.match(line)
        if w is None or w.group("word") != word or "=" not in w.group("rest"):
            continue
        name, _, expression = w.group("rest").partition("=")
        form = _form(expression, int(w.group("k")))
        if form is not None and "=" not in expression:
            forms.setdefault(form, []).append((int(w.group("k")), n))
            names[form] = name.strip()
    shared = [(form, lines) for form, lines in forms.items() if len({i for i, _ in lines}) >= 2]
    if len(shared) != 1:
        return None
    form, lines = shared[0]
    expression = _resolved(form.replace(_PLACEHOLDER, str(index)), article)
    if expression is None:
        return None
    worked = tuple(f"{word} {i}" for i in sorted({i for i, _ in lines}))
    return IndexedForm(
        f"{word} {index}: {names[form]}", index, expression, worked, min(n for _, n in lines)
    )


def _resolved(expression: str, article: Article) -> str | None:
    """The expression with each name replaced by the one displayed line that works it out
    (its arithmetic, in parentheses); None if a name has no such line, or several."""
    out = expression
    for name in sorted(set(_NAME.findall(expression)), key=len, reverse=True):
        lines = {
            " ".join(d.latex.split())
            for d in article.displays
            if d.cell is None
            and d.label.strip() == name
            and len(d.rows) == 1
            and len(d.rows[0]) == 1
            and not re.search(r"[A-Za-z]", d.latex)
        }
        if len(lines) != 1:
            return None
        out = re.sub(rf"(?<![\w.]){re.escape(name)}(?![\w(])", f"({lines.pop()})", out)
    return out
