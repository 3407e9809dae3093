"""Lay out an exercise: the student sheet and the answer key (LaTeX and HTML), and the
answer template a student fills in.

Renderers only: every number here was computed and certified in
:mod:`symtf.teach.exercise`. The HTML pages are self-contained (inline CSS, no
JavaScript, nothing fetched from the network) and readable on a phone.
"""

from __future__ import annotations

import dataclasses
import html
import re
from collections.abc import Sequence
from dataclasses import dataclass

import sympy

from symtf.renderers.html import head
from symtf.renderers.html.maths import label_html
from symtf.renderers.labels import entry_math, label_math, label_tex
from symtf.renderers.latex import standalone
from symtf.renderers.tex import escape
from symtf.spec import Derivation
from symtf.teach.exercise import (
    Blank,
    KeyEntry,
    blanked_cells,
    hidden_expressions,
    hidden_reductions,
)
from symtf.teach.worked import number
from symtf.trace import Trace
from symtf.visible import comment, toml_string


@dataclass(frozen=True)
class Exercise:
    """Everything a sheet and a key are drawn from."""

    derivation: Derivation
    trace: Trace
    key: list[KeyEntry]
    seed: int
    fresh: bool


# ----------------------------------------------------------------------------- model data


#: Model fields as symbols (LaTeX), for the sheet's "The model" section.
_FIELD_TEX = {
    "embed": r"E",
    "pos": r"P",
    "unembed": r"W_{\text{vocab}}",
    "W_Q": "W_Q",
    "W_K": "W_K",
    "W_V": "W_V",
    "b_Q": "b_Q",
    "b_K": "b_K",
    "b_V": "b_V",
    "W_O": "W_O",
    "b_O": "b_O",
    "W1": "W_1",
    "b1": "b_1",
    "W2": "W_2",
    "b2": "b_2",
    "W3": "W_3",
    "b3": "b_3",
    "ln1_gamma": r"\gamma_1",
    "ln1_beta": r"\beta_1",
    "ln2_gamma": r"\gamma_2",
    "ln2_beta": r"\beta_2",
    "lnf_gamma": r"\gamma_f",
    "lnf_beta": r"\beta_f",
}
#: What each field is, in words.
_FIELD_WORDS = {
    "embed": "embeddings",
    "pos": "positional rows",
    "unembed": "unembedding",
    "W_O": "output projection",
    "b_O": "output bias",
    "W1": "FFN, first layer",
    "b1": "FFN, first bias",
    "W2": "FFN, second layer",
    "b2": "FFN, second bias",
    "W3": "FFN, up projection",
    "b3": "FFN, up bias",
}


@dataclass(frozen=True)
class Named:
    """A matrix on the sheet with its symbol (LaTeX) and words."""

    tex: str
    words: str
    matrix: sympy.MatrixBase


def _field_tex(name: str) -> str:
    return _FIELD_TEX.get(name) or label_math(name)


def _weights(d: Derivation) -> list[Named]:
    """Every matrix of the model a student needs, with its symbol (``W_Q``, head 1).

    Read from the model's fields, so decoders, attention-only and encoder–decoder
    models are all listed the same way; a tied unembedding is left out (it is the
    embedding transposed). The file's given tensors (for its own steps) follow.
    """
    out: list[Named] = []

    def walk(obj: object, where: list[str], name: str) -> None:
        if isinstance(obj, sympy.MatrixBase):
            words = ", ".join([*where, _FIELD_WORDS.get(name, "")]).strip(", ")
            out.append(Named(_field_tex(name), words, obj))
        elif isinstance(obj, tuple) and obj and all(dataclasses.is_dataclass(x) for x in obj):
            for k, x in enumerate(obj):
                kind = "head" if name == "heads" else "layer" if name == "layers" else name
                many = len(obj) > 1 or kind == "head"
                walk(x, [*where, f"{kind} {k + 1}"] if many else where, "")
        elif dataclasses.is_dataclass(obj) and not isinstance(obj, type):
            for f in dataclasses.fields(obj):
                if f.name in ("generate", "standalone"):
                    continue
                walk(getattr(obj, f.name), where, f.name)

    m = d.model
    walk(m, [], "")
    if getattr(m, "tied", False):
        out = [w for w in out if w.tex != _FIELD_TEX["unembed"]]
    for s in getattr(m, "standalone", ()):
        out.append(Named(_field_tex(s.name), "input", s.input))
    for g in getattr(d, "tensors", ()):
        if len(g.shape) > 2:
            continue  # a 3-D/4-D tensor: listed by its 2-D slices below
        cols = g.shape[-1] if g.shape else 1
        rows = len(g.values) // cols if cols else 0
        out.append(Named(_field_tex(g.name), "given", sympy.Matrix(rows, cols, list(g.values))))
    for g in getattr(d, "tensors", ()):
        if len(g.shape) > 2:
            cols = g.shape[-1]
            rows = g.shape[-2]
            per = rows * cols
            for k in range(len(g.values) // per):
                lead = []
                rest = k
                for size in reversed(g.shape[:-2]):
                    lead.append(rest % size)
                    rest //= size
                at = ", ".join(str(x) for x in reversed(lead))
                out.append(
                    Named(
                        _field_tex(g.name) + f"[{at}]",
                        "given",
                        sympy.Matrix(rows, cols, list(g.values[k * per : (k + 1) * per])),
                    )
                )
    return out


def _settings(d: Derivation) -> list[tuple[str, str]]:
    """The model's settings (text, numbers and switches), as written in its fields."""
    m = d.model
    out: list[tuple[str, str]] = []
    if m.architecture == "none":  # the article's own steps: no model settings to list
        return out
    positional = getattr(m, "positional", "")
    skip = set()
    if positional not in ("rope", "sinusoidal"):
        skip.add("pos_base")
    if positional != "rope":
        skip.add("rope_pairs")
    for f in dataclasses.fields(m):
        if f.name in skip:
            continue
        v = getattr(m, f.name)
        if f.name in ("vocab", "source_vocab") and v:
            out.append((f.name, ", ".join(v)))
        elif isinstance(v, (str, int, bool)) and not isinstance(v, sympy.Basic):
            out.append((f.name, str(v)))
        elif isinstance(v, sympy.Expr) and not isinstance(v, sympy.MatrixBase):
            out.append((f.name, sympy.sstr(v)))
    if getattr(m, "scale", None) is None and m.architecture != "none":
        out.append(("score divisor", "√d_head"))
    if m.architecture == "decoder" and m.vocab:
        out.append(("input", " ".join(m.vocab[i] for i in d.tokens)))
    return out


def _model_heading(d: Derivation) -> str:
    """The heading of the sheet's first section: the model, or the article's given numbers."""
    return "The given numbers" if d.model.architecture == "none" else "The model"


def _dec(n: int) -> str:
    return f"{n} decimal" + ("" if n == 1 else "s")


def _cell_text(trace: Trace, e: sympy.Expr) -> str:
    return number(trace, e)[0].text


def _cell_tex(trace: Trace, e: sympy.Expr) -> str:
    return number(trace, e)[0].tex


def where_words(b: Blank) -> str:
    """Where a blank is, in a reader's words: ``A_1, row 3, column 1`` (counted from 1,
    in the table that prints it), ``X sum AI: result, entry 2`` (a one-row table)."""
    return b.label + _place(b)


def _place(b: Blank) -> str:
    """A blank's place in its table in words (``, row 3, column 1``), or ``""``."""
    r, k, rows, cols = b.cell
    if rows == 1 and cols == 1:
        return ""
    if rows == 1 or cols == 1:
        return f", entry {max(r, k) + 1}"
    return f", row {r + 1}, column {k + 1}"


def where_tex(b: Blank) -> str:
    """:func:`where_words` in LaTeX text mode, the label typeset."""
    return label_tex(b.label) + escape(_place(b))


def where_html(b: Blank) -> str:
    """:func:`where_words` in HTML, the label typeset."""
    return label_html(b.label) + html.escape(_place(b))


@dataclass(frozen=True)
class Cell:
    """One cell of a printed table on the sheet.

    Attributes:
        kind: ``number``, ``blank`` (a box to fill in), ``hidden`` (left out, because it
            would give a blank away) or ``neg-inf`` (a masked score).
        text: The printed number, or the blank's id.
    """

    kind: str
    text: str = ""
    width: int = 0  # a blank's box: the characters it must hold, with room to write


@dataclass(frozen=True)
class Shown:
    """One claim as the sheet shows it.

    Attributes:
        label: The article's label.
        title: What its step is (``attention weights, head 1``), or ``""``.
        formula: The step's formula in LaTeX, or ``""``.
        rows: Its table (``None`` when it is not a table).
        text: What it shows instead of a table (a word, a line of arithmetic), or ``""``.
        left_out: Whether it is left off whole (it would show a blank's value).
        line: Whether ``text`` is a line of arithmetic.
    """

    label: str
    title: str
    formula: str
    rows: list[list[Cell]] | None
    text: str = ""
    left_out: bool = False
    line: bool = False  # ``text`` is a line of arithmetic (typeset as maths)


def shown_claims(ex: Exercise) -> list[Shown]:
    """Every claim of the worked example as the student sheet shows it."""
    d, t = ex.derivation, ex.trace
    blanks = [k.blank for k in ex.key]
    cells = blanked_cells(blanks, d, t)
    decimals = {b.id: b.decimals for b in blanks}
    hidden = hidden_expressions(d, blanks, t) | hidden_reductions(d, blanks, t)
    out = []
    for c in d.claims:
        if c.assertion is not None:
            continue
        st = t[c.step] if c.step is not None and c.step in t else None
        title = st.title if st is not None else ""
        formula = st.formula if st is not None else ""
        if c.label in hidden:
            out.append(Shown(c.label, title, formula, None, left_out=True))
            continue
        if c.expression is not None:
            res = " ".join(p.text for row in c.printed for p in row)
            out.append(Shown(c.label, title, "", None, f"{c.expression} = {res}", line=True))
            continue
        if c.word is not None:
            out.append(Shown(c.label, title, formula, None, f"printed: {c.word}"))
            continue
        rows = []
        widest = max((len(p.text) for row in c.printed for p in row), default=1)
        for r_, row in enumerate(c.printed):
            line = []
            for k, p in enumerate(row):
                bid = cells.get((c.label, r_, k))
                if bid:
                    line.append(Cell("blank", bid, box_width(widest, decimals.get(bid, 3))))
                elif bid is not None:
                    line.append(Cell("hidden"))
                elif p.is_neg_inf:
                    line.append(Cell("neg-inf"))
                else:
                    line.append(Cell("number", p.text))
            rows.append(line)
        out.append(Shown(c.label, title, formula, rows))
    return out


# ----------------------------------------------------------------------------- LaTeX


def _tex_table(rows: Sequence[Sequence[str]]) -> str:
    """A table as a bracketed array, centred, scaled down only if wider than the line."""
    cols = max(len(r) for r in rows)
    body = " \\\\\n".join(" & ".join(r) for r in rows)
    return (
        "\\begin{center}\\symtffit{$\\displaystyle\\left[\\begin{array}{"
        + "r" * cols
        + "}\n"
        + body
        + "\n\\end{array}\\right]$}\\end{center}\n"
    )


def box_width(widest: int, decimals: int) -> int:
    """The characters a blank's box holds: the widest number printed in its table, or a
    sign, a digit, the point and the decimals asked, whichever is more, and one for room.

    The same for every blank of a table, so a box's size gives no answer away.
    """
    return max(widest, decimals + 3) + 1


#: A handwritten character's width in a box, in em.
_CHAR_EM = 0.65


def blank_tex(bid: str, width: int = 6) -> str:
    """A blank's box in LaTeX (text or math mode): its name small in the corner, room to
    write ``width`` characters by hand."""
    return (
        r"\fbox{\parbox[c][2.1em][t]{"
        + f"{width * _CHAR_EM:.1f}em"
        + r"}{\tiny\textcolor{black!70}{"
        + escape(bid)
        + "}}}"
        + r"\rule[-1.5em]{0pt}{3.6em}"  # a strut taller than the box: rows of boxes apart
    )


#: A cell left out because it would give a blank away (LaTeX, math mode).
HIDDEN_TEX = r"\textcolor{gray}{\blacksquare}"


def cell_tex(cell: Cell) -> str:
    """One table cell in LaTeX math mode."""
    if cell.kind == "blank":
        return blank_tex(cell.text, cell.width or 6)
    if cell.kind == "hidden":
        return HIDDEN_TEX
    if cell.kind == "neg-inf":
        return r"-\infty"
    return cell.text


def _formula_tex(formula: str) -> str:
    return r"\(\displaystyle " + formula + r"\)" if formula else ""


def _steps_tex(ex: Exercise) -> str:
    out = []
    for s in shown_claims(ex):
        head = r"\paragraph{\boldmath " + label_tex(s.label) + "}"
        if s.title:
            head += " " + escape(s.title)
        if s.formula:
            head += r"\hfill " + _formula_tex(s.formula)
        out.append(head + "\n")
        if s.left_out:
            out.append(r"\emph{(left out: it would show a blank's value)}" + "\n\n")
        elif s.rows is None:
            out.append((r"\(" + line_tex(s.text) + r"\)" if s.line else escape(s.text)) + "\n\n")
        else:
            out.append(_tex_table([[cell_tex(c) for c in row] for row in s.rows]))
    return "".join(out)


def line_tex(text: str) -> str:
    """A line of displayed arithmetic as math-mode LaTeX (as the notes typeset it)."""
    from symtf.renderers.latex.expressions import expression_latex

    return expression_latex(text)


def _instructions(html_: bool) -> str:
    code = "<code>answers.toml</code>" if html_ else r"\texttt{answers.toml}"
    gray = '<span class="hidden"></span>' if html_ else "$" + HIDDEN_TEX + "$"
    return (
        "Work out each boxed blank by hand from the model below and the numbers before it. "
        "Give each answer rounded to the decimals asked (half up), and write it into the "
        f"answer file ({code}) under its name. A grey cell {gray} is left out because it "
        "would give a blank away: work it out too if you need it."
    )


def sheet_tex(ex: Exercise) -> str:
    """The student sheet as a LaTeX document."""
    d, t = ex.derivation, ex.trace
    parts = [
        r"\sloppy",
        r"\section*{Instructions}",
        _instructions(False),
        r"\section*{" + _model_heading(d) + "}",
    ]
    settings = _settings(d)
    if settings:  # a derivation with no model lists only its given numbers
        parts += [
            r"\begin{itemize}",
            *[r"\item " + escape(f"{k}: {v}") for k, v in settings],
            r"\end{itemize}",
        ]
    for w in _weights(d):
        m = w.matrix
        parts.append(r"\paragraph{\(" + w.tex + r"\)} " + escape(w.words))
        parts.append(
            _tex_table([[_cell_tex(t, m[i, j]) for j in range(m.cols)] for i in range(m.rows)])
        )
    parts.append(r"\section*{The worked example}")
    parts.append(_steps_tex(ex))
    parts.append(r"\section*{Blanks}")
    parts.append(r"\begin{itemize}")
    for k in ex.key:
        b = k.blank
        parts.append(
            r"\item "
            + blank_tex(b.id, box_width(1, b.decimals))
            + " "
            + where_tex(b)
            + escape(f": {k.title} — {_dec(b.decimals)}")
        )
    parts.append(r"\end{itemize}")
    return standalone(f"Exercise: {d.title}", "\n".join(parts), subtitle=_subtitle(ex))


def _subtitle(ex: Exercise) -> str:
    s = ex.derivation.source or ""
    return (s + (" — " if s else "") + f"seed {ex.seed}").strip()


#: Widest line of working, in rough printed characters, before it is broken.
_MAX_TEX_LINE = 62


def _visible(tex: str) -> int:
    return len(re.sub(r"\\[A-Za-z]+|[{}_^&]", "", tex))


def _break(rel: str, tex: str) -> list[str]:
    """``rel + tex`` as align lines, broken before a top-level ``+``/``-`` when too wide."""
    pieces, depth, start = [], 0, 0
    for k, ch in enumerate(tex):
        if ch == "{":
            depth += 1
        elif ch == "}":
            depth -= 1
        elif depth == 0 and tex.startswith((" + ", " - "), k) and k > start:
            pieces.append(tex[start:k])
            start = k + 1
    pieces.append(tex[start:])
    lines, cur = [], rel + pieces[0]
    for p in pieces[1:]:
        if _visible(cur + p) > _MAX_TEX_LINE:
            lines.append(cur)
            cur = r"&\quad " + p
        else:
            cur += " " + p
    lines.append(cur)
    return lines


def entry_tex(b: Blank) -> str:
    """A blank's entry as math: its table's label typeset, the place counted from 1."""
    r, k, rows, cols = b.cell
    if rows == 1 and cols == 1:
        return entry_math(b.label, "")
    at = f"{max(r, k) + 1}" if rows == 1 or cols == 1 else f"{r + 1},{k + 1}"
    return entry_math(b.label, at)


def working_tex(ex: Exercise, k: KeyEntry) -> list[str]:
    """A blank's working as ``align*`` lines: the formula with the entry on its left, the
    numbers written in, the exact value (shared by the LaTeX and the HTML key)."""
    b = k.blank
    lines: list[str] = []
    lhs = entry_tex(b)
    w = k.worked
    if w.formula is not None:
        first = _break("&= ", w.formula.tex)
        lines += [lhs + " " + first[0], *first[1:]]
    if w.substituted is not None:
        lines += _break("&\\approx " if w.approximate else "&= ", w.substituted.tex)
    if k.closed_tex is not None:
        lines.append("&= " + k.closed_tex)
    if k.exact is not None:
        exact = k.exact.replace("…", r"\ldots")
        lines.append(("&\\approx " if "…" in k.exact else "&= ") + exact)
    if w.formula is None and ex.trace[b.step].formula:
        lines.insert(0, r"&\text{from } " + ex.trace[b.step].formula)
        lines[0] = lhs + " " + lines[0]
    elif lines and w.formula is None:
        lines[0] = lhs + " " + lines[0]
    return lines


def key_tex(ex: Exercise) -> str:
    """The answer key as a LaTeX document."""
    parts = []
    for k in ex.key:
        b = k.blank
        parts.append(r"\subsection*{" + escape(b.id) + ": " + where_tex(b) + "}")
        parts.append(escape(k.title) + "\n")
        lines = working_tex(ex, k)
        if lines:
            parts.append("\\begin{align*}\n" + " \\\\\n".join(lines) + "\n\\end{align*}\n")
        ans = k.answer if k.answer is not None else "(undecided)"
        parts.append(
            r"\textbf{Answer: "
            + escape(ans)
            + "}"
            + escape(f" (the exact value rounded {b.rounding} to {_dec(b.decimals)})")
            + "\n\n"
        )
        if k.printed_verdict not in ("exact", "rounded"):
            parts.append(
                escape(f"The derivation printed {b.printed} here: {k.printed_verdict}.") + "\n\n"
            )
    title = f"Answer key: {ex.derivation.title}"
    return standalone(title, "\n".join(parts), subtitle=_subtitle(ex))


# ----------------------------------------------------------------------------- HTML

_CSS = """
body{font-family:system-ui,-apple-system,"Segoe UI",sans-serif;max-width:52rem;margin:auto;
padding:1rem;line-height:1.45;color:#222}
h1{font-size:1.5rem}h2{font-size:1.2rem;margin-top:2rem;border-bottom:1px solid #ccc}
h3{font-size:1rem;margin:1.2rem 0 .3rem}
.scroll{overflow-x:auto}table.m{border-collapse:collapse;margin:.3rem 0;font-variant-numeric:tabular-nums}
table.m td{padding:.15rem .5rem;text-align:right;border-left:1px solid #eee;font-family:ui-monospace,monospace}
.blank{display:inline-block;min-width:3.5rem;min-height:2.2em;border:1.5px solid #333;
border-radius:3px;text-align:left;vertical-align:middle;color:#555;line-height:1}
.blank small{font-size:.65rem;padding:0 .2rem}
.hidden{display:inline-block;min-width:3.5rem;height:1em;background:#ccc;border-radius:3px;
vertical-align:middle}
.step{color:#666;font-size:.9rem;font-weight:normal}
.formula{margin:.2rem 0 .3rem 0}
.work{background:#f7f7f7;padding:.4rem .6rem;border-radius:4px;overflow-x:auto}
.work .more{padding-left:2.5rem}
.answer{font-weight:bold}.note{color:#a33}
"""


def _page(title: str, body: str) -> str:
    return (
        f'<!DOCTYPE html>\n<html lang="en">\n{head(title, _CSS)}\n<body>\n'
        f"<h1>{html.escape(title)}</h1>\n{body}\n</body>\n</html>\n"
    )


def _html_table(rows: Sequence[Sequence[str]]) -> str:
    body = "".join("<tr>" + "".join(f"<td>{c}</td>" for c in r) + "</tr>" for r in rows)
    return f'<div class="scroll"><table class="m">{body}</table></div>\n'


def blank_html(bid: str, width: int = 6) -> str:
    """A blank's box in HTML: its name small in the corner, room for ``width`` characters."""
    return (
        f'<span class="blank" style="min-width:{int(width) + 1}ch">'
        f"<small>{html.escape(bid)}</small></span>"
    )


def cell_html(cell: Cell) -> str:
    """One table cell in HTML."""
    if cell.kind == "blank":
        return blank_html(cell.text, cell.width or 6)
    if cell.kind == "hidden":
        return '<span class="hidden" title="left out: it would give a blank away"></span>'
    if cell.kind == "neg-inf":
        return "−∞"
    return html.escape(cell.text)


def _math(tex: str) -> str:
    from symtf.renderers.html import mathml

    return mathml(tex)


def sheet_html(ex: Exercise) -> str:
    """The student sheet as one self-contained HTML page."""
    d, t = ex.derivation, ex.trace
    e = html.escape
    out = [
        f"<p>{e(_subtitle(ex))}</p>",
        f"<h2>Instructions</h2><p>{_instructions(True)}</p>",
        f"<h2>{_model_heading(d)}</h2>",
    ]
    settings = _settings(d)
    if settings:
        out += ["<ul>", *(f"<li>{e(k)}: {e(v)}</li>" for k, v in settings), "</ul>"]
    for w in _weights(d):
        m = w.matrix
        out.append(f'<h3>{_math(w.tex)} <span class="step">{e(w.words)}</span></h3>')
        out.append(
            _html_table([[e(_cell_text(t, m[i, j])) for j in range(m.cols)] for i in range(m.rows)])
        )
    out.append("<h2>The worked example</h2>")
    for s in shown_claims(ex):
        title = f' <span class="step">{e(s.title)}</span>' if s.title else ""
        out.append(f"<h3>{label_html(s.label)}{title}</h3>")
        if s.formula:
            out.append(f'<p class="formula">{_math(s.formula)}</p>')
        if s.left_out:
            out.append("<p><em>(left out: it would show a blank's value)</em></p>")
        elif s.rows is None and s.line:
            out.append(f'<p class="formula">{_math(line_tex(s.text))}</p>')
        elif s.rows is None:
            out.append(f"<p><code>{e(s.text)}</code></p>")
        else:
            out.append(_html_table([[cell_html(c) for c in row] for row in s.rows]))
    out.append("<h2>Blanks</h2><ul>")
    for k in ex.key:
        b = k.blank
        out.append(
            f"<li>{blank_html(b.id, box_width(1, b.decimals))} {where_html(b)}: "
            f"{e(k.title)} — {_dec(b.decimals)}</li>"
        )
    out.append("</ul>")
    return _page(f"Exercise: {d.title}", "\n".join(out))


def anchor(bid: str) -> str:
    """The HTML id of a blank's section in the key (``?1`` → ``blank-1``)."""
    return "blank-" + re.sub(r"[^A-Za-z0-9_-]", "", bid)


def key_html(ex: Exercise) -> str:
    """The answer key as one self-contained HTML page."""
    e = html.escape
    out = [f"<p>{e(_subtitle(ex))}</p>"]
    for k in ex.key:
        b = k.blank
        out.append(
            f'<h3 id="{anchor(b.id)}">{e(b.id)}: {where_html(b)} '
            f'<span class="step">{e(k.title)}</span></h3>'
        )
        formula = ex.trace[b.step].formula
        if formula:
            out.append(f'<p class="formula">{_math(formula)}</p>')
        lines = working_tex(ex, k)
        if lines:  # each align line as its own formula, its continuation lines indented
            out.append(
                '<div class="work">'
                + "".join(
                    f'<div class="{"more" if line.startswith("&") else "first"}">'
                    f"{_math(line.replace('&', ''))}</div>"
                    for line in lines
                )
                + "</div>"
            )
        ans = k.answer if k.answer is not None else "(undecided)"
        out.append(
            f'<p><span class="answer">Answer: {e(ans)}</span> (the exact value rounded '
            f"{e(b.rounding)} to {_dec(b.decimals)})</p>"
        )
        if k.printed_verdict not in ("exact", "rounded"):
            out.append(
                f'<p class="note">The derivation printed {e(b.printed)} here: '
                f"{e(k.printed_verdict)}.</p>"
            )
    return _page(f"Answer key: {ex.derivation.title}", "\n".join(out))


# ----------------------------------------------------------------------------- answers


def answer_template(ex: Exercise, key_file: str) -> str:
    """The TOML file a student fills in and ``symtf grade`` reads."""
    first = ex.key[0].blank.id if ex.key else "?1"
    lines = [
        comment(f"Answers for: {ex.derivation.title}"),
        f'# Write each answer as a string with the decimals asked, e.g. "{first}" = "0.496".',
        '# Leave a blank empty ("") if you did not work it out.',
        comment(f"Graded with: symtf grade {key_file} THIS_FILE"),
        "",
        'student = ""',
        "",
        "[answers]",
    ]
    for k in ex.key:
        b = k.blank
        note = f"{where_words(b)} ({k.title}), {_dec(b.decimals)}"
        lines.append(f'{toml_string(b.id)} = ""  {comment(note)}')
    return "\n".join(lines) + "\n"


__all__ = [
    "Cell",
    "Exercise",
    "Shown",
    "answer_template",
    "key_html",
    "key_tex",
    "sheet_html",
    "sheet_tex",
    "shown_claims",
    "where_words",
]
