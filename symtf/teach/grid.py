"""The student sheet as a printable grid worksheet, in the style of AI by Hand.

Each printed step gets a panel with its formula. A matrix product is laid out in
space for multiplying: the left operand to the left, the right operand above, and
the result grid where their rows and columns meet, so a row of the left and a
column of the top are read off in line with the cell they make. Every other step
shows its inputs' grids, then the result's. A blank is an empty, shaded cell with
its name in a corner, wide enough to write the digits asked by hand; a cell left out
because it would give a blank away is dark grey; an entry the worked example does not
print is given in grey (its correct rounding, certified), so no cell is left white.

A renderer only: what is hidden was decided in :mod:`symtf.teach.exercise`. Every label
is typeset through one path (:mod:`symtf.renderers.labels`: its maths rebuilt from a
grammar, the rest escaped); numbers and formulas come from the step graph.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import sympy

from symtf.backends.certify import exact_fraction
from symtf.numbers import format_fixed, round_exact
from symtf.renderers.labels import label_math, label_tex
from symtf.renderers.latex.preamble import LUALATEX_MAGIC, UNICODE_FONTS
from symtf.renderers.tex import escape, math_text
from symtf.teach.exercise import NOT_BLANKABLE, covered, printed_entries, relations, step_labels
from symtf.teach.sheet import Exercise, _dec, _settings, _subtitle, box_width, where_tex
from symtf.teach.worked import number
from symtf.trace import Trace

#: Paper sizes for ``--paper``.
PAPERS = ("a4", "letter")
#: Widest grid, in columns, laid out at full size (wider grids are scaled to the page).
_FONT = r"\footnotesize"


@dataclass(frozen=True)
class GridCell:
    """A cell of a grid: ``number`` (text), ``computed`` (a value the worked example does not
    print, given here: text), ``blank`` (id), ``hidden``, ``neg-inf`` or ``empty``."""

    kind: str
    text: str = ""
    width: int = 0  # a blank: the characters its box must hold, with room to write


@dataclass(frozen=True)
class Grid:
    """A matrix as the worksheet draws it.

    Attributes:
        name: Its name, math-mode LaTeX.
        cells: Its cells, row by row.
        step: The step it shows (``""``: a weight of the model).
        flipped: Whether it is drawn transposed (cell ``[i][j]`` is the step's ``[j, i]``).
    """

    name: str
    cells: list[list[GridCell]]
    step: str = ""
    flipped: bool = False

    @property
    def width(self) -> int:
        return max((len(r) for r in self.cells), default=0)

    def transposed(self, name: str) -> Grid:
        rows, cols = len(self.cells), self.width
        cells = [[self.cells[i][j] for i in range(rows)] for j in range(cols)]
        return Grid(name, cells, self.step, not self.flipped)


@dataclass(frozen=True)
class Panel:
    """One step of the worksheet.

    Attributes:
        title: The claim labels and what the step is, as text.
        label: The article's label (typeset as maths where it is maths).
        formula: The step's formula (LaTeX).
        result: The step's grid.
        left, top: For a product, the operands (left times top).
        inputs: For any other step, its inputs' grids.
    """

    title: str
    formula: str
    result: Grid
    left: Grid | None = None
    top: Grid | None = None
    inputs: tuple[Grid, ...] = ()
    label: str = ""  # the article's label, the start of ``title``


# ----------------------------------------------------------------------------- panels


#: The weight a linear step multiplies by, by the step's canonical name.
_WEIGHTS = {
    "q": "W_Q",
    "k": "W_K",
    "v": "W_V",
    "attn_out": "W_O",
    "ffn_pre": "W_1",
    "ffn_up": "W_3",
    "ffn_out": "W_2",
    "logits": r"W_{\text{vocab}}",
}


def panels(ex: Exercise) -> list[Panel]:
    """The worksheet's panels: one for each step the worked example prints, in order."""
    d, t = ex.derivation, ex.trace
    rel = relations(d, t)
    entries = printed_entries(d, t)
    labels = step_labels(d)
    steps = list(dict.fromkeys(s for s, _, _ in entries))
    # every entry of every grid drawn is shown (those not printed are given in grey), so
    # what would give a blank away is decided with all of them on the sheet
    drawn = set(steps)
    for step in steps:
        node = rel.graph.get(step)
        drawn.update(a for a in (node.args if node is not None else ()) if a in t)
    shown = [
        (s, i, j)
        for s in drawn
        if (shape := rel.shape(s)) is not None
        for i in range(shape[0])
        for j in range(shape[1])
    ]
    cov = covered(d, t, [(k.blank.id, k.blank.step, k.blank.index) for k in ex.key], shown)
    decimals = {b.id: b.decimals for b in (k.blank for k in ex.key)}
    # a value no table prints is given to the decimals its step prints (else the blanks')
    asked = max(decimals.values(), default=3)
    printed: dict[str, int] = {}
    for (s, _, _), prints in entries.items():
        printed[s] = max(printed.get(s, 0), *(p.decimals for _, p in prints))

    def grid_of(step: str, name: str) -> Grid | None:
        shape = rel.shape(step)
        if shape is None:
            return None
        widest = max(
            (len(p.text) for (s, _, _), prints in entries.items() if s == step for _, p in prints),
            default=1,
        )
        rows = []
        for i in range(shape[0]):
            row = []
            for j in range(shape[1]):
                k = (step, i, j)
                if k in cov:
                    bid = cov[k]
                    width = box_width(widest, decimals.get(bid, asked))
                    row.append(GridCell("blank", bid, width) if bid else GridCell("hidden"))
                elif k in entries:
                    row.append(GridCell("number", entries[k][0][1].text))
                elif t.value(step)[i, j] == sympy.S.NegativeInfinity:
                    row.append(GridCell("neg-inf"))  # a masked score (the sheet prints it)
                elif rel.is_given(step):
                    row.append(_exact_cell(t, t.value(step)[i, j]))
                else:  # not printed: given, so that no cell is left white to puzzle over
                    row.append(_computed_cell(t, t.value(step)[i, j], printed.get(step, asked)))
            rows.append(row)
        return Grid(name, rows, step)

    def name_of(step: str) -> str:
        label = labels.get(step)
        return label_math(label) if label else math_text(t[step].title or step)

    out = []
    for step in steps:
        node = rel.graph.get(step)
        result = grid_of(step, name_of(step))
        if result is None or rel.is_given(step) or step in NOT_BLANKABLE:
            continue  # the file's numbers and settings: operands, not steps to work
        label = title = labels.get(step, "")
        if t[step].title and t[step].title != title:
            title += (" — " if title else "") + t[step].title
        formula = t[step].formula
        args = [a for a in (node.args if node is not None else ()) if a in t]
        op = None if node is None else getattr(node.op, "name", None)
        if op == "linear" and node is not None and len(args) == 1:
            left = grid_of(args[0], name_of(args[0]))
            w = _weight_grid(
                t,
                node.params["w"],
                bool(node.params.get("transposed")),
                _WEIGHTS.get(step.rsplit(".", 1)[-1], "W"),
            )
            if left is not None:
                out.append(Panel(title, formula, result, left=left, top=w, label=label))
                continue
        if op == "matmul" and node is not None and len(args) == 2:
            # laid out for multiplying: the left operand beside, the right one above it
            # (transposed when the op multiplies by its transpose, as the scores Q Kᵀ do)
            a, b = (grid_of(x, name_of(x)) for x in args)
            if a is not None and b is not None:
                top = b.transposed(b.name + r"^\top") if node.params.get("transpose_b") else b
                out.append(Panel(title, formula, result, left=a, top=top, label=label))
                continue
        inputs = tuple(
            g for a in args if (g := grid_of(a, name_of(a))) is not None and g.width <= 12
        )
        out.append(Panel(title, formula, result, inputs=inputs, label=label))
    return out


def _exact_cell(trace: Trace, e: sympy.Expr) -> GridCell:
    return GridCell("number", number(trace, e)[0].text.replace("−", "-"))


def _computed_cell(trace: Trace, e: sympy.Expr, decimals: int) -> GridCell:
    """A value the worked example does not print: exact when it is a short decimal, else its
    correct rounding to ``decimals`` places (certified: both ends of its ball round alike),
    else a certified truncation."""
    line, exact = number(trace, e)
    text = line.text.replace("−", "-")
    if exact and "/" not in text and len(text) <= decimals + 3:
        return GridCell("computed", text)
    try:
        x = trace.backend.ball(e, 128) if hasattr(trace.backend, "ball") else None
    except (ArithmeticError, TypeError, ValueError):
        x = None
    if x is not None and x.is_finite():
        lo, hi = (exact_fraction(x.lower()), exact_fraction(x.upper()))
        a, b = round_exact(lo, decimals), round_exact(hi, decimals)
        if a == b:
            return GridCell("computed", format_fixed(a, decimals))
    return GridCell("computed", text)


def _weight_grid(trace: Trace, w: object, transposed: bool, name: str) -> Grid:
    m = sympy.Matrix(w.to_sympy() if hasattr(w, "to_sympy") else w)
    if transposed:
        m, name = m.T, name + r"^\top"
    return Grid(name, [[_exact_cell(trace, m[i, j]) for j in range(m.cols)] for i in range(m.rows)])


# ----------------------------------------------------------------------------- LaTeX


def _text(s: str) -> str:
    """Plain text for the worksheet (escaped; ``--`` kept as two hyphens, not a dash)."""
    return "-{}-".join(escape(part) for part in s.split("--"))


def _cell_tex(c: GridCell) -> str:
    if c.kind == "number":
        return "$" + c.text.replace("-", "-") + "$"
    if c.kind == "computed":  # grey: the worked example does not print it
        return r"\textcolor{black!55}{$" + c.text + "$}"
    if c.kind == "blank":
        return r"\cellcolor{yellow!18}\blankid{" + escape(c.text) + "}"
    if c.kind == "hidden":
        return r"\cellcolor{black!28}"
    if c.kind == "neg-inf":
        return r"$-\infty$"
    return ""


def _grid_tex(g: Grid, width: str) -> str:
    cols = g.width
    spec = "|" + ("C{" + width + "}|") * cols
    body = "".join(" & ".join(_cell_tex(c) for c in row) + r" \\\hline" + "\n" for row in g.cells)
    return r"\begin{tabular}[t]{" + spec + "}\\hline\n" + body + r"\end{tabular}"


def _named(g: Grid, width: str, *, below: bool = False) -> str:
    """A grid with its name above it (or below, for the top operand)."""
    name = r"\footnotesize$" + g.name + "$"
    grid = _grid_tex(g, width)
    if below:
        return r"\begin{tabular}[b]{@{}c@{}}" + grid + r"\\[2pt]" + name + r"\end{tabular}"
    return r"\begin{tabular}[t]{@{}c@{}}" + name + r"\\[2pt]" + grid + r"\end{tabular}"


def _cell_width(grids: Sequence[Grid]) -> str:
    """One column width for a panel: its longest number, and room to write each blank's
    digits by hand (about 0.3 cm a character)."""
    longest = max(
        (
            len(c.text)
            for g in grids
            for row in g.cells
            for c in row
            if c.kind in ("number", "computed")
        ),
        default=4,
    )
    written = max((c.width for g in grids for row in g.cells for c in row), default=0)
    return f"{max(0.85, 0.17 * longest + 0.3, 0.3 * written):.2f}cm"


def _panel_tex(p: Panel) -> str:
    grids = [p.result, *(g for g in (p.left, p.top) if g is not None), *p.inputs]
    width = _cell_width(grids)
    title = label_tex(p.label) + _text(p.title[len(p.label) :]) if p.label else _text(p.title)
    head = r"\panelhead{" + title + "}{" + (("$" + p.formula + "$") if p.formula else "") + "}"
    if p.left is not None and p.top is not None:
        # The product: the top operand over the result, the left operand beside it.
        body = (
            r"\begin{tabular}{@{}r@{\hspace{6pt}}l@{}}"
            + "\n & "
            + _named(p.top, width, below=True)
            + r"\\[4pt]"
            + "\n"
            + _grid_tex(p.left, width)
            + " & "
            + _grid_tex(p.result, width)
            + r"\\[2pt]"
            + "\n\\footnotesize$"
            + p.left.name
            + "$ & \\footnotesize$= "
            + p.result.name
            + "$\n\\end{tabular}"
        )
    else:
        parts = [_named(g, width) for g in p.inputs]
        arrow = r"\quad$\rightarrow$\quad " if parts else ""
        body = r"\hspace{6pt}".join(parts) + arrow + _named(p.result, width)
    return (
        r"\begin{minipage}{\linewidth}"
        + head
        + "\n\\medskip\n\\centering\n\\symtffitwidth{"
        + body
        + "}\n\\end{minipage}\n\\par\\vspace{14pt}\n"
    )


_PREAMBLE = r"""\documentclass[11pt]{article}
\usepackage[%(paper)s,margin=1.8cm]{geometry}
\usepackage{amsmath}
\usepackage{array}
\usepackage[table]{xcolor}
\usepackage{graphicx}
\setlength{\parindent}{0pt}
\setlength{\tabcolsep}{2pt}
\renewcommand{\arraystretch}{1.55}
\newcolumntype{C}[1]{>{\centering\arraybackslash\footnotesize}p{#1}}
\newcommand{\blankid}[1]{\makebox[0pt][l]{\raisebox{1.1ex}{\hspace{-0.9ex}\tiny\textcolor{black!70}{#1}}}}
\newcommand{\panelhead}[2]{\textbf{#1}\hfill #2\par}
\newsavebox{\symtfgridbox}
\newcommand{\symtffitwidth}[1]{\sbox{\symtfgridbox}{#1}\ifdim\wd\symtfgridbox>\linewidth\resizebox{\linewidth}{!}{\usebox{\symtfgridbox}}\else\usebox{\symtfgridbox}\fi}
\pagestyle{plain}
"""


def grid_tex(ex: Exercise, *, paper: str = "a4") -> str:
    """The grid worksheet as a LaTeX document (``paper``: ``a4`` or ``letter``)."""
    if paper not in PAPERS:
        raise ValueError(f"paper: expected one of {', '.join(PAPERS)}, found {paper!r}")
    d = ex.derivation
    settings = "; ".join(f"{k}: {v}" for k, v in _settings(d))
    intro = (
        r"{\Large\textbf{"
        + _text(f"Worksheet: {d.title}")
        + r"}}\par\smallskip"
        + r"{\small "
        + _text(_subtitle(ex))
        + r"}\par\medskip"
        + r"\small Fill in each shaded cell by hand (its name is in its corner), rounded to the "
        r"decimals listed at the end, and write your answers into \texttt{answers.toml}. "
        r"In a product, each cell is the row to its left times the column above it. "
        r"A dark grey cell is left out because it would give a blank away; a number in grey "
        r"is one the worked example does not print, given to the decimals its step prints."
        r"\par\smallskip" + r"{\footnotesize " + _text(settings) + r"}\par\bigskip" + "\n"
    )
    body = [intro, *(_panel_tex(p) for p in panels(ex))]
    items = "".join(
        r"\item[\colorbox{yellow!18}{\strut "
        + escape(k.blank.id)
        + "}] "
        + where_tex(k.blank)
        + _text(f": {k.title} — {_dec(k.blank.decimals)}")
        + "\n"
        for k in ex.key
    )
    body.append(
        r"\begin{minipage}{\linewidth}\textbf{Blanks}\begin{itemize}\setlength{\itemsep}{0pt}"
        + "\n"
        + items
        + r"\end{itemize}\end{minipage}"
        + "\n"
    )
    doc = "\\begin{document}\n" + "".join(body) + "\\end{document}\n"
    pre = _PREAMBLE % {"paper": "a4paper" if paper == "a4" else "letterpaper"}
    if (pre + doc).isascii():
        return pre + doc
    first, _, rest = pre.partition("\n")
    return LUALATEX_MAGIC + first + "\n" + UNICODE_FONTS + rest + doc


__all__ = ["PAPERS", "Grid", "GridCell", "Panel", "grid_tex", "panels"]
