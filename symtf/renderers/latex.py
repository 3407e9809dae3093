"""LaTeX rendering: a worked example as lecture notes.

The renderer reads a :class:`~symtf.checking.report.DerivationReport` (verdicts) and its
:class:`~symtf.trace.Trace` (named exact steps) and lays them out the way a
handcalcs sheet does: the general formula, the same formula with the numbers
substituted, the exact result, and beside it what the article printed with its
verdict. It does no rounding of its own: decimals are certified truncations of
ball enclosures (``…`` marks an expansion that goes on), and closed forms come
from :func:`sympy.latex`.

Public entry points:

- :func:`standalone` wraps any LaTeX body in a compilable document with the
  project preamble (only packages of a basic TeX Live).
- :func:`document` renders one checked derivation as a whole document.
- :func:`trace_latex`, :func:`report_latex` and :func:`derivation_report_latex`
  give math-mode LaTeX for Jupyter's ``_repr_latex_`` (MathJax-safe).
"""

from __future__ import annotations

import math
import re
from collections.abc import Sequence
from dataclasses import dataclass, field
from fractions import Fraction
from typing import TYPE_CHECKING, Any, cast

import sympy

from symtf.checking.report import DerivationReport
from symtf.checking.wording import place
from symtf.ops import BREAK, Substitution
from symtf.ops import get as get_op
from symtf.renderers._wording import (
    also_text,
    depends_words,
    once_each,
    printed_grid,
    sentence,
    short_decimal,
    symbolic_detail,
    where_in_step,
)
from symtf.renderers.plain import matrix_cells as _matrix_cells
from symtf.renderers.tex import _MATH_SPECIALS, escape, math_text

if TYPE_CHECKING:
    from symtf.checking.report import Check, ClaimResult, DerivationReport, Report
    from symtf.spec import Derivation
    from symtf.trace import Step, Trace

PREAMBLE = r"""\documentclass[11pt]{article}
\usepackage[margin=2cm]{geometry}
\usepackage{amsmath}
\usepackage{amssymb}
\usepackage{booktabs}
\usepackage{longtable}
\usepackage{array}
\usepackage{xcolor}
\usepackage{graphicx}
\setcounter{MaxMatrixCols}{20}
\allowdisplaybreaks
\renewcommand{\labelitemi}{$\bullet$}
\setlength{\parindent}{0pt}
\setlength{\parskip}{0.5ex}
\setlength{\emergencystretch}{3em}
\newcommand{\symtfok}{\textcolor{green!50!black}{$\checkmark$}}
\newcommand{\symtfbad}{\textcolor{red!75!black}{$\boldsymbol{\times}$}}
\newcommand{\symtfslip}{\textcolor{orange!85!black}{$\boldsymbol{\pm}$}}
\newcommand{\symtfundecided}{\textcolor{gray}{\textbf{?}}}
\newcommand{\symtfwrong}[1]{\textcolor{red!75!black}{\underline{#1}}}
\newsavebox{\symtfbox}
\newcommand{\symtffitto}[2]{\sbox{\symtfbox}{#2}\ifdim\wd\symtfbox>#1\relax\resizebox{#1}{!}{\usebox{\symtfbox}}\else\usebox{\symtfbox}\fi}
\newcommand{\symtffit}[1]{\symtffitto{\linewidth}{#1}}
\newcommand{\symtfpick}[3]{\sbox{\symtfbox}{#1}\ifdim\wd\symtfbox>\linewidth\relax\sbox{\symtfbox}{#2}\ifdim\wd\symtfbox>\linewidth\relax\symtffit{#3}\else\usebox{\symtfbox}\fi\else\usebox{\symtfbox}\fi}
\newcommand{\symtfstep}[1]{\hfill{\normalfont\small #1}}
"""

#: Marks of a value that depends on a symbol: added to the preamble of a document that uses them.
SYMBOLIC_MACROS = r"""\newcommand{\symtfsymbolic}{\textcolor{blue!65!black}{$\boldsymbol{f}$}}
\newcommand{\symtfdepends}[1]{\textcolor{blue!65!black}{#1}}
"""

#: Verdict → LaTeX mark (text mode; macros defined in :data:`PREAMBLE`).
MARKS = {
    "exact": r"\symtfok",
    "rounded": r"\symtfok",
    "slip": r"\symtfslip",
    "wrong": r"\symtfbad",
    "symbolic": r"\symtfsymbolic",
    "undecided": r"\symtfundecided",
}
_GOOD = ("exact", "rounded")

EXACT_FORMS = ("auto", "always", "never")


@dataclass(frozen=True)
class LatexOptions:
    """How a document is laid out.

    Attributes:
        decimals: Decimal places shown for values that are not short exact numbers.
        exact_forms: ``auto`` (closed forms when short), ``always`` (whenever
            they fit the size budget) or ``never`` (decimals only).
        max_rows: Matrices with more rows are elided with ``\\vdots``.
        max_cols: Matrices with more columns are elided with ``\\cdots``.
        steps: Only the steps matching this pattern (see :func:`symtf.renderers.steps.select`).
        node_names: Show internal node names (``l0.h0.pattern``) beside the article's labels.
        rules: Name beside each worked line what was done (``▷ matrix product``), as the
            ``derive`` proofs do; the rule comes from the op the trace recorded.
    """

    decimals: int = 4
    exact_forms: str = "auto"
    max_rows: int = 8
    max_cols: int = 8
    steps: str | None = None
    node_names: bool = False
    rules: bool = True

    def __post_init__(self) -> None:
        if self.exact_forms not in EXACT_FORMS:
            raise ValueError(
                f"exact_forms: expected one of {', '.join(EXACT_FORMS)}, found {self.exact_forms!r}"
            )
        if not 0 <= self.decimals <= 30:
            raise ValueError(f"decimals: expected 0 to 30, found {self.decimals}")
        if self.max_rows < 3 or self.max_cols < 3:
            raise ValueError("max_rows and max_cols: expected at least 3")


# ----------------------------------------------------------------------------- text

#: Fonts for a document that holds characters pdfLaTeX's default fonts lack:
#: Latin Modern (the same look), falling back to DejaVu for Greek, Cyrillic, Hebrew, ...
UNICODE_FONTS = r"""\usepackage{fontspec}
\directlua{luaotfload.add_fallback("symtffallback", {"DejaVuSerif:mode=harf;", "DejaVuSans:mode=harf;"})}
\setmainfont{Latin Modern Roman}[RawFeature={fallback=symtffallback}]
\setmonofont{Latin Modern Mono}[RawFeature={fallback=symtffallback}]
"""
#: The first line of a document that needs LuaLaTeX (read by editors, latexmk and symtf).
LUALATEX_MAGIC = "% !TEX program = lualatex\n"

#: Characters beyond ASCII that pdfLaTeX sets with T1 fonts and UTF-8 input: the
#: letters of Latin-1 and Latin Extended-A that LaTeX's ``t1enc.dfu`` declares,
#: and the quotes, dashes and guillemets of European text.
T1_TEXT = frozenset(
    "ÀÁÂÃÄÅÆÇÈÉÊËÌÍÎÏÐÑÒÓÔÕÖØÙÚÛÜÝÞßàáâãäåæçèéêëìíîïðñòóôõöøùúûüýþÿ"
    "ĀāĂăĄąĆćĈĉĊċČčĎďĐđĒēĔĕĖėĘęĚěĜĝĞğĠġĢģĤĥĨĩĪīĬĭĮįİıĲĳĴĵĶķĹĺĻļĽľŁłŃńŅņŇňŊŋ"
    "ŌōŎŏŐőŒœŔŕŖŗŘřŚśŜŝŞşŠšŢţŤťŨũŪūŬŭŮůŰűŲųŴŵŶŷŸŹźŻżŽžȘșȚț"
    "¡¿«»‘’‚“”„‹›–—\u00a0"
)
#: What a pdfLaTeX document with characters of :data:`T1_TEXT` loads (Latin Modern
#: where the ``lmodern`` package is installed, else the EC fonts of the same design).
T1_FONTS = r"""\usepackage[T1]{fontenc}
\usepackage[utf8]{inputenc}
\IfFileExists{lmodern.sty}{\usepackage{lmodern}}{}
"""


def standalone(title: str, body: str, *, subtitle: str = "") -> str:
    """Wrap a LaTeX body in a compilable document with the project preamble.

    A document that is all ASCII is plain pdfLaTeX; one whose other characters
    are Latin letters and punctuation of :data:`T1_TEXT` (``pájaros``, ``Łódź``)
    is pdfLaTeX with T1 fonts and UTF-8 input (:data:`T1_FONTS`). A document with
    characters pdfLaTeX cannot set (Greek text, Cyrillic, Hebrew, CJK, ...)
    starts with :data:`LUALATEX_MAGIC` and loads :data:`UNICODE_FONTS`.

    Args:
        title: Plain-text title (escaped here).
        body: LaTeX body (already LaTeX; not escaped).
        subtitle: Plain-text line under the title (escaped here), e.g. the source.

    Returns:
        A complete ``.tex`` document.
    """
    author = (
        "\\author{\\normalsize\\parbox{0.9\\linewidth}{\\centering " + escape(subtitle) + "}}\n"
        if subtitle
        else "\\author{}\n"
    )
    rest = (
        "\\title{"
        + escape(title)
        + "}\n"
        + author
        + "\\date{}\n\\begin{document}\n\\maketitle\n"
        + body.rstrip("\n")
        + "\n\\end{document}\n"
    )
    preamble = PREAMBLE
    if "\\symtfsymbolic" in body or "\\symtfdepends" in body:
        preamble += SYMBOLIC_MACROS
    if rest.isascii():
        return preamble + rest
    first, _, packages = preamble.partition("\n")
    if all(ch.isascii() or ch in T1_TEXT for ch in rest):
        return first + "\n" + T1_FONTS + packages + rest
    return LUALATEX_MAGIC + first + "\n" + UNICODE_FONTS + packages + rest


def needs_lualatex(tex: str) -> bool:
    """Whether a document from :func:`standalone` must be compiled with LuaLaTeX."""
    return tex.startswith(LUALATEX_MAGIC)


# ----------------------------------------------------------------------------- numbers


@dataclass(frozen=True)
class Entry:
    """One value as LaTeX.

    Attributes:
        approx: Decimal form (exact when ``is_exact``, else a certified truncation with ``…``).
        is_exact: Whether ``approx`` is the exact value.
        closed: Exact closed form, when allowed and short enough (``None`` otherwise).
        fraction: Whether ``closed`` is a short fraction (``\frac{1}{6}``), shown even
            among decimals: a rational value is written exactly where it is short.
    """

    approx: str
    is_exact: bool
    closed: str | None = None
    fraction: bool = False

    def shown(self) -> str:
        """What a row of decimals shows: a short fraction exactly, else the decimal."""
        return self.closed if self.fraction and self.closed is not None else self.approx

    def best(self) -> tuple[str, bool]:
        """The exact form if there is one, else the decimal; and whether it is exact."""
        if self.is_exact:
            return self.approx, True
        if self.closed is not None:
            return self.closed, True
        return self.approx, False


_AUTO_MAX_CHARS = 48
# Internal tag: a decimal proved equal to the value (never printed).
_EXACT_MARK = "\x01"
#: Widest display line, in rough printed characters, before it is broken.
_MAX_LINE = 78
#: Where a long substituted formula may be broken (before an operator).
_BRK = BREAK
_ALWAYS_MAX_CHARS = 600


class Numbers:
    """Writes exact trace values as LaTeX (with a cache per expression).

    It formats only: each value's certified decimal and closed forms come from the trace
    (:class:`symtf.shown.Shown`); here they are cut to the chosen decimals and written.

    Args:
        shown: The trace's answers for its values (``trace.shown``).
        options: Layout options.
    """

    def __init__(
        self,
        shown: Any,
        options: LatexOptions,
        names: dict[str, str] | None = None,
        titles: dict[str, str] | None = None,
    ) -> None:
        self.shown = shown
        self.options = options
        #: Step name -> the article's symbol for it (``l0.h0.z`` -> ``H_1``), else the
        #: step's title (``centred rows``): an entry of a symbolic trace that is a named
        #: node is written as that step's entry, not in the node's internal name.
        self.names = names or {}
        self.titles = titles or {}
        #: Each long symbolic entry written by place, at the first step that holds it
        #: (``H[2,1]`` of the heads side by side is ``H_1[2,1]``), see ``_named_long``.
        self.origins: dict[Any, str] = {}
        self._cache: dict[Any, Entry] = {}

    def entry(self, e: Any) -> Entry:
        """A value as an :class:`Entry`."""
        key = e if isinstance(e, sympy.Basic) else (type(e).__name__, str(e))
        hit = self._cache.get(key)
        if hit is None:
            hit = self._entry(e)
            self._cache[key] = hit
        return hit

    def _entry(self, e: Any) -> Entry:
        from symtf.numbers import rational_decimal

        if not isinstance(e, sympy.Basic):
            return self._other(e)
        if e.is_Rational:
            q = _fraction(e)
            text = rational_decimal(q, 20)
            if not text.endswith("…") and _decimals_of(text) <= max(self.options.decimals, 6):
                return Entry(_num(text), True)
            closed = None if self.options.exact_forms == "never" else sympy.latex(e)
            short = closed is not None and q.denominator <= 99 and abs(q.numerator) < 10**4
            return Entry(_num(self._cut(text)), False, closed, short)
        if e is sympy.S.NegativeInfinity:
            return Entry(r"-\infty", True)
        if e is sympy.S.Infinity:
            return Entry(r"\infty", True)
        closed = self._closed(e)
        approx = self._decimal(e)
        if approx is not None and approx.endswith(_EXACT_MARK):
            return Entry(approx.removesuffix(_EXACT_MARK), True)
        if approx is None:
            # Depends on free symbols: the symbolic form is the only honest one.
            return Entry(closed if closed is not None else self._symbolic(e), True)
        return Entry(approx, False, closed)

    def _other(self, e: Any) -> Entry:
        if self.shown.is_ball(e):
            s = self.shown.ball_decimal(e)
            return Entry(_num(self._cut(s)) if s else r"\ast", False)
        if isinstance(e, (int, float)):
            return Entry(_num(f"{e:.{self.options.decimals}f}"), isinstance(e, int))
        return Entry(math_text(str(e)), False)

    def _closed(self, e: sympy.Expr) -> str | None:
        mode = self.options.exact_forms
        if mode == "never":
            return None
        limit_ops = 40 if mode == "auto" else 400
        candidates = self.shown.closed_forms(e, limit_ops)
        if not candidates:
            return None
        texts = [sympy.latex(c) for c in candidates]
        text = min(texts, key=len)
        limit = _AUTO_MAX_CHARS if mode == "auto" else _ALWAYS_MAX_CHARS
        return text if len(text) <= limit else None

    def _decimal(self, e: sympy.Expr) -> str | None:
        """The certified decimal the trace gives, cut to the chosen decimals.

        A value whose ball holds 0 and that exact algebra could not settle is shown by its
        size bound, ``±0.0000…`` (the magnitude truncates to zero at the shown decimals;
        the sign is not known), rather than as a formula in the trace's internal names.
        """
        n = self.options.decimals
        x = self.shown.expansion(e, n)
        if x.text is not None:
            return _num(x.text) + _EXACT_MARK if x.exact else _num(self._cut(x.text))
        if x.near_zero:
            return r"{\pm}0." + "0" * n + r"{\scriptstyle\ldots}"
        return None

    def _cut(self, s: str) -> str:
        """Truncate a certified decimal expansion to the chosen decimal places.

        A value written in scientific notation (``4.7175…e-434294483``) keeps its exponent:
        the mantissa is cut, the power of ten stays.
        """
        m = re.match(r"^(.*?)([eE][+-]?\d+)$", s)
        if m:
            return self._cut(m.group(1)) + m.group(2)
        n = self.options.decimals
        more = s.endswith("…")
        digits = s.rstrip("…")
        head, dot, tail = digits.partition(".")
        if len(tail) <= n:
            return digits + ("…" if more else "")
        kept = tail[:n]
        if not any(c in "123456789" for c in head + kept):
            # A tiny value: keep n significant digits rather than show 0.000…
            lead = len(tail) - len(tail.lstrip("0"))
            kept = tail[: lead + max(n, 1)]
        return head + dot + kept + ("…" if kept != tail or more else "")

    def _symbolic(self, e: sympy.Expr) -> str:
        names = {
            s: _node_latex(s.name, self.names, self.titles)
            for s in e.free_symbols
            if self.shown.is_node(s)
        }
        text: str = sympy.latex(e, symbol_names=names)
        return text


def _fraction(e: sympy.Rational) -> Any:
    from fractions import Fraction

    return Fraction(int(e.p), int(e.q))


def _decimals_of(text: str) -> int:
    return len(text.partition(".")[2])


def _num(text: str) -> str:
    """A decimal string as math-mode LaTeX (``…`` → ``\\ldots``, ``e-7`` → ``\\times 10^{-7}``)."""
    m = re.match(r"^(.*?)[eE]([+-]?\d+)$", text)
    if m:
        return _num(m.group(1)) + r"\times 10^{" + str(int(m.group(2))) + "}"
    if text.endswith("…"):
        return text[:-1] + r"{\scriptstyle\ldots}"
    return text


def _node_latex(
    name: str, labels: dict[str, str] | None = None, titles: dict[str, str] | None = None
) -> str:
    """A named node of a symbolic trace, rows and columns counted from 1: the article's
    symbol's entry (``(H_{1})_{3,1}``), else its step's title (``(\\text{centred
    rows})_{3,6}``); the node's own name only where the caller gives neither (node names
    asked for)."""
    m = re.match(r"^(.*)\[(\d+),(\d+)\]$", name)
    if not m:
        return _tt(name)
    at = f"{int(m.group(2)) + 1},{int(m.group(3)) + 1}"
    label = (labels or {}).get(m.group(1), "")
    from symtf.renderers.labels import entry_math, is_math

    if label and is_math(label):
        return entry_math(label, at)
    title = (titles or {}).get(m.group(1))
    if title:
        return rf"\left(\text{{{escape(title)}}}\right)_{{{at}}}"
    return _tt(m.group(1)) + "_{" + f"{m.group(2)},{m.group(3)}" + "}"


# ----------------------------------------------------------------------------- matrices


def bmatrix(
    cells: Sequence[Sequence[str]],
    max_rows: int = 8,
    max_cols: int = 8,
    env: str = "bmatrix",
) -> str:
    r"""A matrix of LaTeX cells as ``bmatrix``, eliding the middle past a size.

    Args:
        cells: Rows of math-mode LaTeX cells.
        max_rows: More rows than this are elided with ``\vdots``.
        max_cols: More columns than this are elided with ``\cdots``.
        env: The amsmath matrix environment.

    Example:
        >>> bmatrix([["1", "2"], ["3", "4"]])
        '\\begin{bmatrix}1 & 2 \\\\ 3 & 4\\end{bmatrix}'
    """
    grid, _ = _shown_grid(cells, max_rows, max_cols)
    return _matrix_tex(grid, env)


def _matrix_tex(grid: Sequence[Sequence[str]], env: str = "bmatrix") -> str:
    return f"\\begin{{{env}}}" + r" \\ ".join(" & ".join(r) for r in grid) + f"\\end{{{env}}}"


def _shown_grid(
    cells: Sequence[Sequence[str]], max_rows: int, max_cols: int
) -> tuple[list[list[str]], list[int | None]]:
    """The cells a matrix shows (the middle elided with dots), and each shown column's
    index in the whole matrix (``None`` for the column of dots)."""
    n = len(cells)
    m = len(cells[0]) if n else 0
    rows_idx: list[int | None] = (
        list(range(n)) if n <= max_rows else [*range(max_rows - 2), None, n - 1]
    )
    cols_idx: list[int | None] = (
        list(range(m)) if m <= max_cols else [*range(max_cols - 2), None, m - 1]
    )
    grid = []
    for i in rows_idx:
        row = []
        for j in cols_idx:
            if i is None and j is None:
                row.append(r"\ddots")
            elif i is None:
                row.append(r"\vdots")
            elif j is None:
                row.append(r"\cdots")
            else:
                row.append(cells[i][j])
        grid.append(row)
    return grid, cols_idx


def column_blocks(widths: Sequence[int], limit: int) -> list[tuple[int, int]]:
    """Consecutive column ranges ``[start, end)`` each as wide as ``limit`` at most.

    ``widths`` are the columns' visible widths; each column also takes 2 of
    separation. A column wider than ``limit`` on its own makes a block by itself.
    """
    blocks: list[tuple[int, int]] = []
    start, total = 0, 0
    for j, w in enumerate(widths):
        if j > start and total + w + 2 > limit:
            blocks.append((start, j))
            start, total = j, 0
        total += w + 2
    if widths:
        blocks.append((start, len(widths)))
    return blocks


@dataclass(frozen=True)
class MatrixBlock:
    """Some consecutive columns of a matrix, as a matrix of their own.

    Attributes:
        first: The first column's number, counted from 1.
        last: The last column's number.
        tex: The block as a ``bmatrix``.
    """

    first: int
    last: int
    tex: str


def matrix_blocks(
    cells: Sequence[Sequence[str]], max_rows: int, max_cols: int, limit: int
) -> list[MatrixBlock]:
    """A matrix broken into blocks of consecutive columns, each at most ``limit`` wide.

    The matrix is elided first as :func:`bmatrix` elides it; a block holds whole
    columns of what is shown (a single column wider than ``limit`` is a block alone).
    """
    grid, cols = _shown_grid(cells, max_rows, max_cols)
    if not grid:
        return []
    widths = [max(_visible_width(row[j]) for row in grid) for j in range(len(cols))]
    m = len(cells[0])
    out = []
    for a, b in column_blocks(widths, limit):
        # the column of dots stands for the elided ones, from after the real column
        # before it up to before the real column after it
        head, tail = cols[a], cols[b - 1]
        before = [j for j in cols[:a] if j is not None]
        after = [j for j in cols[b:] if j is not None]
        first = head if head is not None else (before[-1] + 1 if before else 0)
        last = tail if tail is not None else (after[0] - 1 if after else m - 1)
        out.append(MatrixBlock(first + 1, last + 1, _matrix_tex([r[a:b] for r in grid])))
    return out


@dataclass(frozen=True)
class Rendered:
    """A value rendered both ways: the best exact form and the decimal form."""

    exact: str | None  # None when some entry has no exact form we may show
    approx: str
    approx_is_exact: bool
    scalar: bool = False
    #: The entries of each form, as the matrix is laid out (for breaking it into blocks).
    exact_cells: list[list[str]] | None = field(default=None, compare=False, repr=False)
    approx_cells: list[list[str]] | None = field(default=None, compare=False, repr=False)


#: Visible characters past which an entry that depends on a symbol is written by name
#: (``(H_1)_{2,3}``) in the notes, rather than as its expression.
LONG_ENTRY = 40


def render_value(
    value: Any, nums: Numbers, opts: LatexOptions, name: str | None = None
) -> Rendered:
    """Render a matrix (1×1 → a scalar) in its exact and decimal forms.

    With ``name`` (the step's), an entry that depends on a symbol and whose expression
    is longer than :data:`LONG_ENTRY` is written as that step's entry, as a named node
    of a symbolic trace is (``(\\text{LayerNorm})_{2,1}``): its expression is in the
    verdict, and on the page it would be too wide to read.
    """
    exact: str | None
    slices = _slices(value)
    if slices is not None:
        return _render_slices(slices, nums, opts)
    cells = _matrix_cells(value)
    if cells is None:
        e = nums.entry(value)
        exact, ok = e.best()
        return Rendered(exact if ok else None, e.approx, e.is_exact, True)
    shown = _visible(cells, opts)
    entries = [[nums.entry(x) for x in row] for row in shown]
    if name is not None:
        entries = _named_long(entries, shown, cells, name, nums, opts)
    scalar = len(cells) == 1 and len(cells[0]) == 1
    approx_is_exact = all(e.is_exact or e.fraction for row in entries for e in row)
    bests = [[e.best() for e in row] for row in entries]
    exact_ok = all(ok for row in bests for _, ok in row)
    full = _restore(cells, entries, opts)
    approx_cells = [[e.shown() for e in row] for row in full]
    approx = _layout(approx_cells, scalar, opts)
    exact = exact_cells = None
    if exact_ok:
        exact_cells = [[e.best()[0] for e in row] for row in full]
        exact = _layout(exact_cells, scalar, opts)
        if _too_wide([[e.best()[0] for e in row] for row in entries], opts):
            exact = None if opts.exact_forms != "always" else exact
    return Rendered(exact, approx, approx_is_exact, scalar, exact_cells, approx_cells)


def _slices(value: Any) -> list[tuple[tuple[int, ...], list[list[Any]]]] | None:
    """A 3-D or 4-D value as its 2-D slices, each with its leading index (``None``: not N-D)."""
    if isinstance(value, sympy.MatrixBase):
        return None
    tolist = getattr(value, "tolist", None)
    if tolist is None:
        return None
    rows = tolist()
    if not (rows and isinstance(rows[0], list) and rows[0] and isinstance(rows[0][0], list)):
        return None
    out: list[tuple[tuple[int, ...], list[list[Any]]]] = []

    def walk(x: Any, lead: tuple[int, ...]) -> None:
        if x and isinstance(x[0], list) and x[0] and isinstance(x[0][0], list):
            for k, y in enumerate(x):
                walk(y, (*lead, k))
        else:
            out.append((lead, x))

    walk(rows, ())
    return out


#: Most 2-D slices of an N-D value shown (the first ones, then the last).
MAX_SLICES = 8


def _render_slices(
    slices: list[tuple[tuple[int, ...], list[list[Any]]]],
    nums: Numbers | None,
    opts: LatexOptions,
) -> Rendered:
    """An N-D value as its 2-D slices one under another, each a matrix named by its leading
    index counted from 1 (``slice (1, 2)``), so that it fits the page's width."""
    shown = slices
    if len(slices) > MAX_SLICES:
        shown = [*slices[: MAX_SLICES - 1], slices[-1]]
    parts = []
    for lead, rows in shown:
        if nums is None:  # already LaTeX: the numbers as the file wrote them
            body = _layout(rows, False, opts)
            r = Rendered(body, body, True, False)
        else:
            r = render_value(sympy.Matrix(rows), nums, opts)
        where = ", ".join(str(i + 1) for i in lead)
        label = f"slice {where}" if len(lead) == 1 else f"slice ({where})"
        parts.append((label, r))
    exact_ok = all(r.exact is not None for _, r in parts)
    skipped = len(slices) - len(shown)

    def stack(forms: list[str]) -> str:
        cells = [
            r"\underset{\text{" + lab + "}}{" + f + "}"
            for (lab, _), f in zip(parts, forms, strict=True)
        ]
        if skipped:
            cells.insert(len(cells) - 1, r"\vdots\ \text{(" + str(skipped) + " more)}")
        return r"\begin{array}{c}" + r" \\ ".join(cells) + r"\end{array}"

    exact = stack([cast(str, r.exact) for _, r in parts]) if exact_ok else None
    approx = stack([r.approx for _, r in parts])
    return Rendered(exact, approx, all(r.approx_is_exact for _, r in parts), False)


#: A number as a file writes it that the notes may show as written (no fractions, no words).
_PLAIN_NUMBER = re.compile(r"[+\-−]?(?:\d+\.?\d*|\.\d+)(?:[eE][+\-]?\d+)?")


def _as_printed(step: Step, value: Any, opts: LatexOptions) -> Rendered | None:
    """A given tensor as the file wrote it: its numbers' own digits (``0.9570``, not
    ``0.957`` or ``957/1000``), in its own shape; ``None`` when it is not one, or a number
    is not a plain decimal."""
    if step.op != "given":
        return None
    texts = getattr(step.params.get("value"), "texts", None)
    if not texts or not all(_PLAIN_NUMBER.fullmatch(t.strip()) for t in texts):
        return None
    tex = [_num(t.strip().replace("−", "-")) for t in texts]
    slices = _slices(value)
    if slices is not None:
        per = len(slices[0][1]) * len(slices[0][1][0])
        if per * len(slices) != len(tex):
            return None
        grids = [
            (
                lead,
                [
                    tex[k * per + i * len(rows[0]) : k * per + (i + 1) * len(rows[0])]
                    for i in range(len(rows))
                ],
            )
            for k, (lead, rows) in enumerate(slices)
        ]
        return _render_slices(grids, None, opts)
    cells = _matrix_cells(value)
    if cells is None or sum(len(r) for r in cells) != len(tex):
        return None
    m = len(cells[0])
    grid = [tex[i * m : (i + 1) * m] for i in range(len(cells))]
    scalar = len(grid) == 1 and m == 1
    shown = _layout(grid, scalar, opts)
    return Rendered(shown, shown, True, scalar, grid, grid)


def _named_long(
    entries: list[list[Entry]],
    shown: list[list[Any]],
    cells: list[list[Any]],
    name: str,
    nums: Numbers,
    opts: LatexOptions,
) -> list[list[Entry]]:
    """``entries`` with each long one that depends on a symbol written by its place: the
    first step's entry that held it (this step's, if none did)."""
    n, m = len(cells), len(cells[0]) if cells else 0
    ri = list(range(n)) if n <= opts.max_rows else [*range(opts.max_rows - 2), n - 1]
    ci = list(range(m)) if m <= opts.max_cols else [*range(opts.max_cols - 2), m - 1]
    out = []
    for a, row in enumerate(entries):
        new = []
        for b, e in enumerate(row):
            x = shown[a][b]
            text = e.best()[0]
            if isinstance(x, sympy.Basic) and x.free_symbols and _visible_width(text) > LONG_ENTRY:
                # a copy (a concatenation, a residual's unchanged part) is written as the
                # entry it copies, so that a step names itself only where the entry is new
                place = nums.origins.setdefault(x, f"{name}[{ri[a]},{ci[b]}]")
                e = Entry(_node_latex(place, nums.names, nums.titles), True)
            new.append(e)
        out.append(new)
    return out


def _visible(cells: list[list[Any]], opts: LatexOptions) -> list[list[Any]]:
    """Only the cells that survive elision (so hidden cells are never evaluated)."""
    n, m = len(cells), len(cells[0]) if cells else 0
    ri = list(range(n)) if n <= opts.max_rows else [*range(opts.max_rows - 2), n - 1]
    ci = list(range(m)) if m <= opts.max_cols else [*range(opts.max_cols - 2), m - 1]
    return [[cells[i][j] for j in ci] for i in ri]


def _restore(
    cells: list[list[Any]], visible: list[list[Entry]], opts: LatexOptions
) -> list[list[Entry]]:
    """Put visible entries back at their places (elided ones get a placeholder)."""
    n, m = len(cells), len(cells[0]) if cells else 0
    ri = list(range(n)) if n <= opts.max_rows else [*range(opts.max_rows - 2), n - 1]
    ci = list(range(m)) if m <= opts.max_cols else [*range(opts.max_cols - 2), m - 1]
    blank = Entry("", True)
    full = [[blank] * m for _ in range(n)]
    for a, i in enumerate(ri):
        for b, j in enumerate(ci):
            full[i][j] = visible[a][b]
    return full


def _layout(cells: list[list[str]], scalar: bool, opts: LatexOptions) -> str:
    if scalar:
        return cells[0][0]
    return bmatrix(cells, opts.max_rows, opts.max_cols)


_MATRIX = re.compile(r"\\begin\{([bpv]?matrix)\}((?:(?!\\begin\{).)*?)\\end\{\1\}", re.S)


def _visible_width(tex: str) -> int:
    """A rough count of printed characters in a LaTeX formula (a matrix counts its widest row)."""

    def flat(m: re.Match[str]) -> str:
        rows = m.group(2).split(r"\\")
        width = max(sum(_visible_width(c) + 2 for c in r.split("&")) for r in rows)
        return "x" * width

    prev = None
    while prev != tex:
        prev, tex = tex, _MATRIX.sub(flat, tex)
    tex = re.sub(r"\\text\{([^{}]*)\}", lambda m: "x" * len(m.group(1)), tex)
    t = re.sub(r"\{\\scriptstyle\\ldots\}", "x", tex)
    t = re.sub(r"\\(?:left|right|quad|;|,|!)", "", t)
    t = re.sub(r"\\[a-zA-Z]+", "x", t)
    return len(re.sub(r"[{}^_ ]", "", t))


def _too_wide(cells: list[list[str]], opts: LatexOptions) -> bool:
    if not cells:
        return False
    widths = [max(_visible_width(row[j]) for row in cells) for j in range(len(cells[0]))]
    return sum(widths) + 2 * len(widths) > _MAX_LINE


# ----------------------------------------------------------------------------- stages


def stage_of(name: str) -> tuple[str, str]:
    """The stage a step belongs to: ``(key, title)``; steps are grouped by key in trace order.

    Example:
        >>> stage_of("l0.h1.pattern")
        ('l0.h1', 'Block 1, head 2: attention')
    """
    m = re.match(r"^((?:\w+\.)*?)l(\d+)\.(.+)$", name)
    if m:
        prefix, layer, rest = m.group(1), int(m.group(2)), m.group(3)
        who = _prefix_title(prefix) + f"Block {layer + 1}"
        base = f"{prefix}l{layer}"
        h = re.match(r"^(?:(cross|self)\.)?h(\d+)\.", rest)
        if h:
            kind = f" {h.group(1)}-attention" if h.group(1) else " attention"
            key = f"{base}.{h.group(1) + '.' if h.group(1) else ''}h{h.group(2)}"
            return key, f"{who}, head {int(h.group(2)) + 1}:{kind}"
        first = rest.split(".")[0]
        if first in ("concat", "attn_out", "resid_mid"):
            return f"{base}.mix", f"{who}: heads combined and the first residual"
        if first == "ln1":
            return f"{base}.ln1", f"{who}: first LayerNorm"
        if first == "ln2":
            return f"{base}.ln2", f"{who}: second LayerNorm"
        if first.startswith("ffn") or first == "resid_post":
            return f"{base}.ffn", f"{who}: feed-forward and the second residual"
        words = {
            "self": "self-attention heads combined",
            "cross": "cross-attention heads combined",
            "resid_cross": "the cross-attention residual",
            "ln3": "third LayerNorm",
        }
        return f"{base}.{first}", f"{who}: {words.get(first, first)}"
    if name in _INPUTS:
        return "input", "Input: tokens, embeddings and positions"
    if name in _OUTPUTS:
        return "output", "Output: logits and the next word"
    p = re.match(r"^((?:\w+\.)+)(\w+)$", name)
    if p and _is_stack_prefix(p.group(1)):
        prefix, last = p.group(1), p.group(2)
        who = _prefix_title(prefix).strip()
        if last in _INPUTS:
            return f"{prefix}input", f"{who}: tokens, embeddings and positions"
        return f"{prefix}output", f"{who}: output"
    head = name.split(".")[0]
    return f"other.{head}", _own_title(head)


def _own_title(name: str) -> str:
    """The title of a step the file's author named: the name read as words when it is words
    (``apply_causal_mask`` → ``Apply causal mask``, as a drafted step named after the
    article's heading reads), else the name as written (a notebook's ``attn_scores_2``)."""
    if re.fullmatch(r"[a-z]{3,}(?:_[a-z]{2,})*", name):
        words = name.replace("_", " ")
        return words[0].upper() + words[1:]
    return name


_INPUTS = ("tokens", "d_head", "embed", "pos", "x")
_OUTPUTS = ("final", "last", "logits", "probs", "next_token", "out", "token", "output")


def _is_stack_prefix(prefix: str) -> bool:
    """Whether a dotted prefix names an encoder, decoder or generation step (not a user op)."""
    parts = [x for x in prefix.split(".") if x]
    return bool(parts) and parts[0] in ("enc", "dec", "gen")


def _prefix_title(prefix: str) -> str:
    """``gen.0.b1.dec.`` → ``"Generation step 1, beam 2, decoder "``."""
    parts = [x for x in prefix.split(".") if x]
    words: list[str] = []
    k = 0
    while k < len(parts):
        part = parts[k]
        if part == "gen" and k + 1 < len(parts) and parts[k + 1].isdigit():
            words.append(f"Generation step {int(parts[k + 1]) + 1}")
            k += 2
            continue
        beam = re.fullmatch(r"b(\d+)", part)
        if beam:
            words.append(f"beam {int(beam.group(1)) + 1}")
        else:
            words.append(
                {"enc": "Encoder", "dec": "decoder" if words else "Decoder"}.get(part, part)
            )
        k += 1
    return ", ".join(words) + " " if words else ""


def stages(trace: Trace) -> list[tuple[str, list[str]]]:
    """Steps grouped into stages, in the order the data flows (trace order).

    A step that holds a claim's outcome rather than numbers (``teacher_forcing``)
    is shown with its claim's verdict, not as a stage.
    """
    out: list[tuple[str, list[str]]] = []
    keys: list[str] = []
    for name in trace:
        if trace[name].op == "teacher_forcing":  # a claim's outcome, not numbers
            continue
        key, title = stage_of(name)
        if keys and keys[-1] == key:
            out[-1][1].append(name)
        else:
            keys.append(key)
            out.append((title, [name]))
    return out


# ----------------------------------------------------------------------------- steps


@dataclass
class _Context:
    trace: Trace
    nums: Numbers
    opts: LatexOptions
    derivation: Derivation | None
    rendered: dict[str, Rendered] = field(default_factory=dict)
    #: Step name → what the page calls it (the article's label); steps not in it keep their
    #: node name only when ``node_names`` is set, else their title.
    names: dict[str, str] = field(default_factory=dict)
    node_names: bool = True
    #: Write long entries that depend on a symbol by their place (see :func:`render_value`).
    name_long: bool = False

    def ref_names(self) -> dict[str, str]:
        """What the page calls each step in displayed arithmetic (article name, else title)."""
        if self.node_names:
            return {}
        return {n: self.names.get(n) or self.trace[n].title or n for n in self.trace}

    def step_name(self, step: Step) -> str:
        """A step as math-mode LaTeX for a formula's left side: the article's name for it."""
        if step.name in self.names:
            return label_math(self.names[step.name])
        if self.node_names or not step.title:
            return _tt(step.name)
        return math_text(step.title)

    def value(self, name: str) -> Rendered | None:
        if name not in self.trace:
            return None
        if name not in self.rendered:
            v = self.trace.value(name)
            if v is None or isinstance(v, tuple):
                return None
            self.rendered[name] = _as_printed(self.trace[name], v, self.opts) or render_value(
                v, self.nums, self.opts, name if self.name_long else None
            )
        return self.rendered[name]

    def operand(self, name: str) -> tuple[str, bool] | None:
        """An input step as it appears in a substituted formula (exact form if possible)."""
        r = self.value(name)
        if r is None:
            return None
        if r.exact is not None:
            return r.exact, True
        return r.approx, r.approx_is_exact

    def weight(self, m: sympy.MatrixBase | None, symbol: str) -> tuple[str, bool]:
        """A weight matrix as substituted (``I_6``, ``\\mathbf{0}``, numbers), or its symbol."""
        if m is None:
            return symbol, True
        if m.rows == m.cols and m == sympy.eye(m.rows):
            return f"I_{{{m.rows}}}", True
        if all(x == 0 for x in m):
            return r"\mathbf{0}", True
        r = render_value(m, self.nums, self.opts)
        return (r.exact, True) if r.exact is not None else (r.approx, r.approx_is_exact)


def _substitution(ctx: _Context, step: Step, named: bool = False) -> tuple[str, bool] | None:
    """The step's formula with the numbers of its inputs written in, and whether it is exact.

    It is the worked substitution of the op the trace recorded for the step
    (:mod:`symtf.ops`), written with the inputs' values and the op's parameters (the
    file's weights); an op without one, or a step whose inputs are not shown as
    numbers, shows its formula and result without a substituted line. With ``named``,
    an input too wide for the line is written by its name, as the step above shows it.
    """
    try:
        op = get_op(step.op)
    except KeyError:
        return None
    if op.substitute is None:
        return None
    ins = step.inputs
    if op.variadic is None and len(ins) != len(op.tensor_args):
        return None
    parts = [ctx.operand(i) for i in ins]
    if any(p is None for p in parts):
        return None
    if named and any(_visible_width(p[0]) > BLOCK_WIDTH for p in parts if p):
        parts = [
            (ctx.step_name(ctx.trace[i]), True)
            if p is not None and _visible_width(p[0]) > BLOCK_WIDTH
            else p
            for i, p in zip(ins, parts, strict=True)
        ]
    exact = [all(p[1] for p in parts if p is not None)]

    def value(name: str, transposed: bool) -> str:
        m = step.params.get(name)
        tex, ok = ctx.weight(m.T if transposed and m is not None else m, name)
        exact[0] = exact[0] and ok
        return tex

    sub = Substitution(
        args=[p[0] for p in parts if p is not None],
        params=step.params,
        labels=step.labels,
        shapes=[ctx.trace.shape(i) for i in ins],
        shape=ctx.trace.shape(step.name),
        value=value,
        matrix=lambda rows: bmatrix(rows, ctx.opts.max_rows, ctx.opts.max_cols),
        latex=sympy.latex,
    )
    tex = op.substitute(sub)
    return None if tex is None else (tex, exact[0])


def _split_formula(formula: str) -> tuple[str, str]:
    """``"Q = X W_Q"`` → ``("Q", "X W_Q")``; a formula without a top-level ``=`` has no left side."""
    depth = 0
    for i, ch in enumerate(formula):
        if ch == "{":
            depth += 1
        elif ch == "}":
            depth -= 1
        elif ch == "=" and depth == 0:
            return formula[:i].strip(), formula[i + 1 :].strip()
    return "", formula.strip()


#: A row-wise softmax of attention scores, entry by entry: each exponential over its
#: row's sum of exponentials.
_SOFTMAX_WRITTEN = r"= \left[\frac{e^{s_{ij}}}{\sum_k e^{s_{ik}}}\right]_{ij}"


def _softmax_of_scores(step: Step) -> bool:
    """Whether a step is an attention pattern: a softmax along the rows of scores ``S``."""
    if step.op != "softmax" or step.params.get("axis", -1) != -1:
        return False
    return "out" in step.labels and str(step.labels.get("x", "")).startswith("S")


#: The mark before a line's rule, in the notes as in the ``derive`` proofs (plain amsmath,
#: so MathJax and KaTeX read it too).
RULE_MARK = r"\triangleright\ "


def step_math(ctx: _Context, step: Step) -> list[tuple[str, str]]:
    """The lines of a step's display as ``(left, right)`` pairs for ``align*``.

    The right sides start with their relation (``=`` or ``\\approx``).
    """
    return [(left, right) for left, right, _ in step_rows(ctx, step)]


def _op_of(step: Step) -> Any:
    try:
        return get_op(step.op)
    except KeyError:
        return None


def result_rule(step: Step) -> str:
    """What the step's op did, as math-mode LaTeX: the rule of the op the trace recorded.

    A user step's expression (no registry op) is said to be worked out.
    """
    op = _op_of(step)
    if op is None:
        return r"\text{worked out}"
    rule: str = op.rule_of(step.params, step.labels)
    return rule


def substitution_rule(step: Step) -> str:
    """What a substituted line did: the values of the op's operands, named by their symbols.

    The symbols are the node's labels for the op's tensor arguments and for the file's
    matrices it writes in (``Q``, ``K``; ``X``, ``W_Q``), typeset as a label's maths
    symbols are (:func:`label_tex`); when a tensor argument has none, the line says only
    that the values are substituted.
    """
    op = _op_of(step)
    generic = r"\text{values substituted}"
    if op is None or op.variadic is not None:
        return generic
    names = []
    for p in op.signature:
        label = step.labels.get(p.label or p.name)
        if p.is_tensor and label is None:
            return generic
        if label is not None and (p.is_tensor or step.params.get(p.name) is not None):
            names.append(_symbol_tex(label))  # a tensor, or a matrix of the file written in
    if not names:
        return generic
    if len(names) == 1:
        return r"\text{the values of } " + names[0]
    listed = r",\ ".join(names[:-1]) + r"\text{ and }" + names[-1]
    return r"\text{the values of } " + listed


def _symbol_tex(label: str) -> str:
    """A node's label as maths: a plain symbol (``W_Q``, ``K_1^T``) rebuilt from its parts,
    as :func:`label_tex` does; anything else is the template's own LaTeX (``\\overline{x^2}``),
    the same the op's formula line shows."""
    from symtf.renderers.labels import is_math, label_math

    return label_math(label) if "\\" not in label and is_math(label) else label


def step_rows(ctx: _Context, step: Step, broken: bool = False) -> list[tuple[str, str, str]]:
    """The lines of a step's display as ``(left, right, rule)`` for ``align*``.

    The formula comes first and has no rule; the substituted line says whose values it
    writes in, the result line names the op's rule (:func:`result_rule`), and a line of
    decimals says how many it shows. With ``rules`` off every rule is empty.

    ``broken`` lays the lines out for a display that is too wide otherwise: a result
    matrix wider than the line in blocks of columns (:func:`matrix_blocks`), and an
    input too wide for the substituted line by its name.
    """
    rows = _step_rows(ctx, step, broken)
    if not ctx.opts.rules:
        return [(left, right, "") for left, right, _ in rows]
    return rows


def _step_rows(ctx: _Context, step: Step, broken: bool) -> list[tuple[str, str, str]]:
    v = step.value
    lines: list[tuple[str, str, str]] = []
    lhs, rhs = _split_formula(step.formula)
    if isinstance(v, tuple) or v is None:  # next_token: token ids
        words = _words(ctx, v)
        left = lhs or rhs or ctx.step_name(step)
        if lhs and rhs:
            lines.append((left, "= " + rhs, ""))
        elif rhs:
            left = rhs
        lines.append(("" if lines else left, "= " + words, result_rule(step)))
        return lines
    first_left = lhs or rhs or ctx.step_name(step)
    if lhs:
        lines.append((first_left, "= " + rhs, ""))
        if _softmax_of_scores(step):
            # the softmax written out, entry by entry, as the worked key writes it
            lines.append(("", _SOFTMAX_WRITTEN, ""))
    sub = _substitution(ctx, step, named=broken)
    r = ctx.value(step.name)
    if r is None:
        return lines
    if sub is not None:
        rel = "= " if sub[1] else r"\approx "
        pieces = sub[0].split(_BRK)
        said = substitution_rule(step)
        if (not broken and _visible_width("".join(pieces)) <= _MAX_LINE - 8) or len(pieces) == 1:
            lines.append(("", rel + " ".join(pieces), said))
        else:
            lines.append(("", rel + pieces[0], said))
            lines.extend(("", r"\phantom{=}\quad " + p, "") for p in pieces[1:])
    rule = result_rule(step)
    if r.exact is not None and (r.exact != r.approx or r.approx_is_exact):
        lines.extend(_value_lines(ctx, "= ", r.exact, r.exact_cells if broken else None, rule))
        rule = rf"\text{{first {ctx.opts.decimals} decimals}}"
    if not r.approx_is_exact:
        cells = r.approx_cells if broken else None
        lines.extend(_value_lines(ctx, r"\approx ", r.approx, cells, rule))
    if not lhs:
        # The formula has no left side: it is the left side of the first line (or, laid
        # out for a narrow page, a line of its own above the others)
        if lines and broken:
            lines.insert(0, ("", first_left, ""))
        elif lines:
            lines[0] = (first_left, *lines[0][1:])
        else:
            lines.append((first_left, "", ""))
    if step.name == "tokens" and ctx.derivation is not None and ctx.derivation.model.vocab:
        vocab = ctx.derivation.model.vocab
        toks = ", ".join(math_text(vocab[i]) for i in ctx.derivation.tokens if i < len(vocab))
        lines.insert(0, (r"\text{ids of}", r"\left(" + toks + r"\right)", ""))
    return lines


#: Widest block of columns of a result matrix, in visible characters (the relation and
#: the column note fit beside it).
BLOCK_WIDTH = _MAX_LINE - 12


def _value_lines(
    ctx: _Context, rel: str, tex: str, cells: list[list[str]] | None, rule: str
) -> list[tuple[str, str, str]]:
    """A result line, or, for a matrix wider than the line, one line per block of columns.

    Each block is labelled under it with its columns (``columns 1 to 3``); the rule stands
    with the first.
    """
    if cells is None or _visible_width(rel + tex) <= BLOCK_WIDTH or len(cells[0]) < 2:
        return [("", rel + tex, rule)]
    blocks = matrix_blocks(cells, ctx.opts.max_rows, ctx.opts.max_cols, BLOCK_WIDTH)
    if len(blocks) < 2:
        return [("", rel + tex, rule)]
    out = []
    for k, b in enumerate(blocks):
        cols = f"column {b.first}" if b.first == b.last else f"columns {b.first} to {b.last}"
        shown = rf"\underset{{\text{{{cols}}}}}{{{b.tex}}}"
        out.append(("", (rel if k == 0 else r"\phantom{=}\ ") + shown, rule if k == 0 else ""))
    return out


def _tt(name: str) -> str:
    """A step or reference name in typewriter math (``\\mathtt{l0.h0.q}``)."""
    return (
        r"\mathtt{" + "".join(_MATH_SPECIALS.get(ch, ch) for ch in name if ch.isprintable()) + "}"
    )


def _words(ctx: _Context, v: Any) -> str:
    if v is None:
        return r"\text{(undecided: depends on symbols)}"
    vocab = ctx.derivation.model.vocab if ctx.derivation is not None else ()
    parts = []
    for i in v:
        parts.append(
            f"{i}"
            + (r"\;(\text{``}" + math_text(vocab[i]) + r"\text{''})" if i < len(vocab) else "")
        )
    return ", ".join(parts)


#: Visible characters of a display's widest line and its widest rule together (with the
#: gap), past which the rules go on rows of their own, as in the ``derive`` proofs.
RULES_BESIDE = _MAX_LINE


def ruled_rows(lines: Sequence[tuple[str, str, str]], side: bool | None = None) -> list[str]:
    """Display lines with their rules as ``aligned`` rows, the ``derive`` proofs' layout.

    Side by side, each rule stands beside its line (``left &= right && ▷ rule``);
    otherwise each rule takes a row of its own just before its line, so no line is
    wider than it was without its rule. ``side=None`` decides by the lines' visible
    widths (:data:`RULES_BESIDE`).
    """
    ruled = [r for _, _, r in lines if r]
    if not ruled:
        return [f"{left} &{right}" for left, right, _ in lines]
    if side is None:
        widest = max(_visible_width(left + right) for left, right, _ in lines)
        side = widest + max(_visible_width(r) for r in ruled) + 6 <= RULES_BESIDE
    rows = []
    for left, right, rule in lines:
        if not rule:
            rows.append(f"{left} &{right}" + (" &&" if side else ""))
        elif side:
            rows.append(rf"{left} &{right} &&\qquad {RULE_MARK}{rule}")
        else:
            rows.append(rf"&\qquad {RULE_MARK}{rule}")
            rows.append(f"{left} &{right}")
    return rows


def _align(
    lines: Sequence[tuple[str, str] | tuple[str, str, str]],
    broken: Sequence[tuple[str, str, str]] | None = None,
) -> str:
    """Display lines aligned at their relations, shrunk to the line width when wider.

    An ``aligned`` block in a box (rather than ``align*``) so that a display wider than
    the page never runs into the margin. Lines may carry a rule (``(left, right,
    rule)``, see :func:`ruled_rows`). TeX measures and takes the first layout that fits
    the line: the rules beside their lines, then the rules on rows of their own, then
    the ``broken`` lines (wide matrices in blocks of columns), which are shrunk only if
    they still do not fit.
    """
    ruled = [cast(tuple[str, str, str], (*x, "")[:3]) for x in lines]

    def display(rows: Sequence[tuple[str, str, str]], side: bool) -> str:
        body = " \\\\\n".join(ruled_rows(rows, side))
        return "{$\\displaystyle\\begin{aligned}\n" + body + "\n\\end{aligned}$}"

    ruled_any = any(x[2] for x in ruled)
    last = broken if broken is not None and list(broken) != ruled else None
    if not ruled_any and last is None:
        return "\\begin{center}\\symtffit" + display(ruled, False) + "\\end{center}\n"
    first = display(ruled, True)
    second = display(ruled, False) if ruled_any else first
    third = display(last, False) if last is not None else second
    return "\\begin{center}\\symtfpick" + first + second + third + "\\end{center}\n"


# ----------------------------------------------------------------------------- claims


def _printed_cell(text: str) -> str:
    if text.strip().lower() in ("-inf", "-∞", "−∞") or "infty" in text:
        return r"-\infty"
    if re.fullmatch(r"[+-]?\d+(\.\d*)?([eE][+-]?\d+)?|[+-]?\d+/\d+|[+-]?\.\d+", text):
        return text
    return math_text(text)


def _printed_matrix(result: ClaimResult, opts: LatexOptions) -> str:
    """What the article printed, shaped as printed; entries that are off are underlined in red."""
    cells = [[_mark_printed(c) for c in row] for row in printed_grid(result)]
    if len(cells) == 1 and len(cells[0]) == 1:
        return cells[0][0]
    return bmatrix(cells, opts.max_rows, opts.max_cols)


def _mark_printed(c: Check) -> str:
    cell = _printed_cell(c.printed)
    if c.verdict in _GOOD:
        return cell
    if c.verdict == "symbolic":  # its own colour: a value that depends on a symbol is no error
        return r"\symtfdepends{" + cell + "}"
    return r"\symtfwrong{" + cell + "}"


def _counts_text(checks: Sequence[Check]) -> str:
    counts: dict[str, int] = {}
    for c in checks:
        counts[c.verdict] = counts.get(c.verdict, 0) + 1
    return ", ".join(f"{n} {k}" for k, n in counts.items())


def _verdict_cell(result: ClaimResult) -> str:
    checks = result.checks
    mark = MARKS[result.verdict]
    if len(checks) == 1:
        c = checks[0]
        text = f"{mark}~{escape(c.verdict if c.verdict != 'symbolic' else depends_words(c))}"
        if c.verdict == "rounded" and c.exact:
            text += r" {\footnotesize(exact " + _exact_text(short_decimal(c.exact, 10)) + ")}"
        elif c.verdict not in _GOOD and c.expected:
            text += ": " + _bold(c.expected)
        return text
    text = f"{mark}~{escape(_counts_text(checks))}"
    depends = sorted({s for c in checks for s in c.extra.get("depends_on") or ()})
    if depends:
        text += r" \symtfdepends{(" + escape("depend on " + ", ".join(depends)) + ")}"
    return text


def _bold(s: str) -> str:
    """A corrected value, in bold (math included)."""
    return r"\textbf{\boldmath " + _exact_text(s) + "}"


def _exact_text(s: str) -> str:
    """A certified decimal string in text mode (math digits, ``\\ldots``)."""
    if s in ("inf", "-inf"):
        return "$" + ("-" if s.startswith("-") else "") + r"\infty$"
    return "$" + _num(s if len(s) <= 26 else s[:24] + "…") + "$"


#: A symbol of the file, as the notes typeset it (the names a derivation may give).
_SYMBOL_NAME = re.compile(r"[A-Za-z][A-Za-z0-9_]*")


def _symbolic_tex(c: Check) -> str:
    """A symbolic check's value and solution set, with the maths typeset as maths.

    The closed form is the verdict's own LaTeX of it (``symbolic_latex``); an exact
    solution set over all reals is set from its recorded ends (cut short with ``…``,
    as every certified decimal here); anything else keeps the explanation's words.
    """
    detail = sentence(symbolic_detail(c))
    tex = c.extra.get("symbolic_latex")
    names = c.extra.get("depends_on") or []
    value = _said_value(c)
    lead = f"The exact value is {value}"
    if (
        value is None
        or not detail.startswith(lead)
        or not all(isinstance(n, str) and _SYMBOL_NAME.fullmatch(n) for n in names)
    ):
        return escape(detail)
    out = "The exact value is " + ("$" + tex + "$" if isinstance(tex, str) else escape(value))
    rest = detail[len(lead) :]
    sols = c.extra.get("solutions")
    plain = isinstance(sols, list) and all(
        isinstance(x, dict) and x.get("lo_end", "root") == x.get("hi_end", "root") == "root"
        for x in sols
    )
    if len(names) == 1 and plain and "solutions_range" not in c.extra:
        assert isinstance(sols, list)
        sym = sympy.latex(sympy.Symbol(names[0]))
        printed = "$" + _printed_cell(c.printed) + "$"
        if sols:
            sets = r" \cup ".join(_interval_tex(s) for s in sols)
            return out + f"; it prints as {printed} for ${sym} \\in {sets}$."
        return out + f"; no value of ${sym}$ prints as {printed}."
    searched = _searched_tex(c, names)
    if searched is not None:
        return out + searched
    return out + escape(rest)


def _said_value(c: Check) -> str | None:
    """The value as a symbolic check's explanation says it: its short form, or the words
    for one too long to write out (:func:`~symtf.checking.verdict.long_value_words`)."""
    from symtf.checking.verdict import long_value_words

    names = c.extra.get("depends_on") or []
    if c.extra.get("symbolic_latex") is None and all(isinstance(n, str) for n in names):
        long = long_value_words(", ".join(names))
        if long in c.explanation:
            return long
    value = c.extra.get("symbolic_value")
    return value if isinstance(value, str) else None


def _decimal_field(text: Any) -> tuple[Fraction, Fraction] | None:
    """A verdict's decimal field as exact bounds: ``(x, x)``, or the ``…`` cut's bounds."""
    if not isinstance(text, str) or not re.fullmatch(r"-?[0-9]+(\.[0-9]+)?…?", text):
        return None
    digits = text.rstrip("…")
    x = Fraction(digits)
    if not text.endswith("…"):
        return x, x
    ulp = Fraction(1, 10 ** len(digits.partition(".")[2]))
    return (x - ulp, x) if x < 0 else (x, x + ulp)  # a cut goes toward zero


#: Most decimals a searched interval's ends are printed with.
SEARCHED_DECIMALS = 12


def searched_ends(s: dict[str, Any]) -> tuple[Fraction, Fraction, int] | None:
    """A searched interval's ends rounded outward, and the decimals they are printed with.

    Each end is certified to lie within its ``lo_within`` / ``hi_within`` bounds; the
    lower end is rounded down from the lowest place it can be, the upper end up from the
    highest, so the printed interval holds the certified one. The decimals are the fewest
    for which rounding widens the interval by at most a tenth of its certain width
    (``[0.99914, 1.00056]``), at most :data:`SEARCHED_DECIMALS`. ``None`` when a field
    is missing or is not a decimal.
    """
    lo_in, hi_in = s.get("lo_within"), s.get("hi_within")
    if not (isinstance(lo_in, list) and isinstance(hi_in, list) and len(lo_in) == len(hi_in) == 2):
        return None
    bounds = [_decimal_field(x) for x in (*lo_in, *hi_in)]
    if any(b is None for b in bounds):
        return None
    (lo_a, _), (_, lo_b), (hi_a, _), (_, hi_b) = cast(list[tuple[Fraction, Fraction]], bounds)
    width = hi_a - lo_b  # the stretch certainly inside
    n = 1
    while n < SEARCHED_DECIMALS and (width <= 0 or 20 * Fraction(1, 10**n) > width):
        n += 1
    scale = 10**n
    return Fraction(math.floor(lo_a * scale), scale), Fraction(math.ceil(hi_b * scale), scale), n


def _searched_tex(c: Check, names: Sequence[str]) -> str | None:
    """A searched solution set as maths: ``; it prints as 0.707 for a ∈ [0.99914, 1.00056]
    (searched a ∈ [−10, 10])``, from the verdict's fields (``None`` if one is missing)."""
    from symtf.numbers import format_fixed

    sols, searched = c.extra.get("solutions"), c.extra.get("solutions_range")
    if len(names) != 1 or not isinstance(sols, list) or not isinstance(searched, list):
        return None
    ends = [_decimal_field(x) for x in searched]
    if len(ends) != 2 or any(e is None or e[0] != e[1] for e in ends):
        return None
    sym = sympy.latex(sympy.Symbol(names[0]))
    pieces, notes = [], []
    for s in sols:
        got = searched_ends(s) if isinstance(s, dict) else None
        if got is None:
            return None
        lo, hi, n = got
        exact_lo = _decimal_field(s["lo_within"][0]) == _decimal_field(s["lo_within"][1])
        exact_hi = _decimal_field(s["hi_within"][0]) == _decimal_field(s["hi_within"][1])
        # an end known exactly and printed as it is keeps its own bracket; a rounded one is closed
        left = (
            "("
            if exact_lo and not s.get("lo_closed") and lo == Fraction(s["lo_within"][0])
            else "["
        )
        right = (
            ")"
            if exact_hi and not s.get("hi_closed") and hi == Fraction(s["hi_within"][1])
            else "]"
        )
        pieces.append(left + _num(format_fixed(lo, n)) + r",\ " + _num(format_fixed(hi, n)) + right)
        for side, word in (("lo", "lower"), ("hi", "upper")):
            kind = s.get(side + "_end", "root")
            if kind == "unresolved":
                notes.append(f"its {word} end is not certain: the set may go on past it")
            elif kind == "search-range":
                notes.append(f"its {word} end is the search range's end")
    printed = "$" + _printed_cell(c.printed) + "$"
    rng = rf"${sym} \in [{_num(str(searched[0]))},\ {_num(str(searched[1]))}]$"
    if pieces:
        text = f"; it prints as {printed} for ${sym} \\in " + r" \cup ".join(pieces) + "$"
    else:
        text = f"; no value of ${sym}$ is certified to print as {printed}"
    text += " (searched " + rng
    cells = c.extra.get("solutions_unresolved") or []
    if cells:
        text += escape(f"; {len(cells)} stretch(es) undecided")
        stopped = c.extra.get("solutions_stopped")
        if isinstance(stopped, str):
            text += escape(": " + stopped)
    text += ")"
    if notes:
        text += escape("; " + "; ".join(once for once in dict.fromkeys(notes)))
    return text + "."


def _interval_tex(s: dict[str, Any]) -> str:
    """One interval of a solution set in maths (``[0.958333…, 1.04166…]``)."""

    def end(v: Any) -> str:
        text = str(v)
        if len(text) <= 10 or "e" in text.lower():
            return _num(text)
        return _num(text.rstrip("…")[:9] + "…")

    lo = r"(-\infty" if s.get("lo") is None else ("[" if s["lo_closed"] else "(") + end(s["lo"])
    hi = r"\infty)" if s.get("hi") is None else end(s["hi"]) + ("]" if s["hi_closed"] else ")")
    return lo + ", " + hi


def _correction_items(results: Sequence[ClaimResult]) -> list[str]:
    items = []
    off = [(r, c) for r in results for c in r.checks if c.verdict not in _GOOD]
    for r, c, also in once_each(off):
        where = "" if c.index is None or len(r.checks) == 1 else f", {place(c.index, None)}"
        head = rf"{MARKS[c.verdict]}~{{\itshape {label_tex(r.claim.label)}}}{escape(where)}: printed ${_printed_cell(c.printed)}$"
        if c.verdict == "symbolic" and not c.extra.get("as_displayed"):
            items.append(
                head + r", \symtfdepends{" + escape(depends_words(c)) + "}. " + _symbolic_tex(c)
            )
            continue
        if c.expected is not None and c.verdict not in ("undecided", "symbolic"):
            head += ", correct value " + _bold(c.expected)
        if c.exact:
            head += ", exact value " + _exact_text(c.exact)
        head += ". " + escape(sentence(c.explanation))
        if also:
            head += " " + escape(also_text(also))
        items.append(head)
    return items


def _claims_table(results: Sequence[ClaimResult], opts: LatexOptions) -> str:
    rows = []
    for r in results:
        where = where_in_step(r)
        label = label_tex(r.claim.label) + (
            r" {\footnotesize(" + escape(where) + ")}" if where else ""
        )
        printed = _printed_matrix(r, opts)
        rows.append(
            f"{label} & \\symtffitto{{0.4\\linewidth}}{{${printed}$}} & {_verdict_cell(r)} \\\\"
        )
    out = (
        "\\begin{center}\\small\n"
        "\\begin{tabular}{>{\\raggedright\\arraybackslash}p{0.27\\linewidth} c >{\\raggedright\\arraybackslash}p{0.25\\linewidth}}\n"
        "\\toprule\nIn the article & Printed & Verdict \\\\\n\\midrule\n"
        + "\n".join(rows)
        + "\n\\bottomrule\n\\end{tabular}\n\\end{center}\n"
    )
    items = _correction_items(results)
    if items:
        # long certified decimals and labels cannot be hyphenated: let the lines go loose
        out += (
            "\\begin{itemize}\\sloppy\n"
            + "\n".join(f"\\item {i}" for i in items)
            + "\n\\end{itemize}\n"
        )
    return out


def _displayed_block(
    results: Sequence[ClaimResult], opts: LatexOptions, names: dict[str, str] | None = None
) -> str:
    """Displayed arithmetic: the line as the article wrote it, its verdict and any correction."""
    parts = ["\\paragraph{Arithmetic as displayed in the article.}\n"]
    parts.append("\\begin{itemize}\\sloppy\n")
    for r in results:
        expr = expression_latex(r.claim.expression or "", names)
        printed = _printed_matrix(r, opts)
        line = (
            rf"\item {MARKS[r.verdict]}~{{\itshape {label_tex(r.claim.label)}}}:"
            rf"\par{{\centering\symtfpick{{$\displaystyle {expr} \approx {printed}$}}"
            rf"{{$\displaystyle {expr} \approx {printed}$}}"
            rf"{{$\displaystyle\begin{{aligned}}&{expr} \\ &\approx {printed}\end{{aligned}}$}}\par}}"
        )
        for c in r.checks:
            where = "" if len(r.checks) == 1 or c.index is None else f"entry {c.index[1] + 1}: "
            bits = _prose(where + sentence(c.explanation), r.claim.expression or "", c, names)
            if c.verdict not in _GOOD and c.expected is not None:
                bits += " Correct value " + _bold(c.expected) + "."
            if len(r.checks) == 1 or c.verdict not in _GOOD:
                line += "\n" + bits
        if len(r.checks) > 1 and r.verdict in _GOOD:
            line += "\n" + escape(f"All {len(r.checks)} entries: {_counts_text(r.checks)}.")
        parts.append(line + "\n")
    parts.append("\\end{itemize}\n")
    return "".join(parts)


def _prose(text: str, expression: str, c: Check, names: dict[str, str] | None) -> str:
    r"""An explanation of a displayed line, with the line itself typeset as maths.

    The explanation is plain text; the places where it quotes the line (as written, or
    with its unrounded operands), each followed by ``= value``, are rendered by
    :func:`expression_latex`, and everything else is escaped. The text is split at
    those known strings, never searched for markup.
    """
    from symtf.language.latexmath import split_chain

    text, tail = _searched_tail(text, c)
    reading = c.extra.get("exact_reading") or {}
    # each piece: the text quoted, the line it quotes, and the digits it shows in place
    # of that line's literals (by position in the line)
    links = [link for _, link in split_chain(expression)[0]]
    pieces: list[tuple[str, str, dict[int, str] | None]] = [(expression, expression, None)]
    if len(links) > 1:  # a chain's explanation quotes its links one at a time
        pieces += [(link, link, None) for link in links]
    subs: dict[int, str] | None
    if reading.get("unrounded"):
        j = c.extra.get("link")
        # a chain's reading is its deciding link's: the positions are in that link
        line = (
            links[j]
            if len(links) > 1 and isinstance(j, int) and 0 <= j < len(links)
            else expression
        )
        subs = {int(o["position"]): str(o["unrounded"]) for o in reading.get("operands", ())}
        pieces.insert(0, (str(reading["unrounded"]), line, subs))
    out, k = [], 0
    number = re.compile(r" = (\(?-?[0-9][0-9.]*(?:e-?[0-9]+)?…?\)?|\(undecided\))")
    while k < len(text):
        hits = [(_quoted(text, p, k), p, line, subs) for p, line, subs in pieces if p]
        hits = [h for h in hits if h[0] >= 0]
        if not hits:
            break
        at, p, line, subs = min(hits, key=lambda h: (h[0], -len(h[1])))
        end = at + len(p)
        m = number.match(text, end)
        maths = expression_latex(line, names, subs)
        if m is not None:
            value = m.group(1)
            shown = (
                escape(value) if value.startswith("(undecided") else value.replace("…", r"\ldots")
            )
            maths += " = " + shown
            end = m.end()
        out += [escape(text[k:at]), f"${maths}$"]
        k = end
    out.append(escape(text[k:]))
    return "".join(out) + tail


def _quoted(text: str, piece: str, start: int) -> int:
    """Where ``text`` quotes ``piece`` from ``start`` on, as a whole (not inside a longer
    number or name: ``0.6`` is not quoted by ``0.65``); -1 when it does not."""
    at = text.find(piece, start)
    while at >= 0:
        before = text[at - 1] if at > 0 else " "
        after = text[at + len(piece)] if at + len(piece) < len(text) else " "
        if not (before.isalnum() or before in "._" or after.isalnum() or after == "_"):
            return at
        at = text.find(piece, at + 1)
    return -1


def _searched_tail(text: str, c: Check) -> tuple[str, str]:
    """A symbolic explanation's value and searched set, set as maths (see :func:`_searched_tex`).

    The explanation is cut where it says the value the verdict records
    (``symbolic_value``); what follows it is the searched set, written from the
    verdict's fields. Returns the text before, and the LaTeX of the rest (``""`` when
    there is no searched set to write).
    """
    value, names = _said_value(c), c.extra.get("depends_on") or []
    if c.verdict != "symbolic" or value is None:
        return text, ""
    if not all(isinstance(n, str) and _SYMBOL_NAME.fullmatch(n) for n in names):
        return text, ""
    said = "the exact value is " + value
    k = text.find(said)
    rest = text[k + len(said) :] if k >= 0 else ""
    searched = _searched_tex(c, names) if rest.startswith("; ") else None
    if searched is None or not rest.rstrip(".").endswith(")"):
        return text, ""
    tex = c.extra.get("symbolic_latex")
    shown = "$" + tex + "$" if isinstance(tex, str) else escape(value)
    return text[:k], "the exact value is " + shown + searched


# ----------------------------------------------------------------------------- expressions

_OPS = {
    "+": "+",
    "-": "-",
    "*": r"\cdot",
    "/": "/",
    "@": r"\,",
    "∘": r"\circ",
}
_OP_TEXT = {"×": r"\times", "·": r"\cdot", "⋅": r"\cdot", "÷": r"\div", ".*": r"\odot", "−": "-"}
_PREC = {"+": 1, "-": 1, "*": 2, "/": 2, "@": 2, "∘": 2}
#: The relations of a displayed chain (as :func:`symtf.language.latexmath.split_chain`
#: gives them) in LaTeX; anything else is shown as ``=``.
_RELATION_TEX = {
    "=": "=",
    "≈": r"\approx",
    r"\approx": r"\approx",
    r"\simeq": r"\simeq",
    r"\eq": "=",
    r"\equiv": r"\equiv",
    r"\doteq": r"\doteq",
}


def expression_latex(
    text: str, names: dict[str, str] | None = None, literals: dict[int, str] | None = None
) -> str:
    r"""A displayed-arithmetic expression as the article wrote it, in math-mode LaTeX.

    Literals keep their printed digits (``e^2.309`` → ``e^{2.309}``), or, with
    ``literals`` (position in ``text`` → digits), show those digits instead: the line
    with its unrounded operands. A chain ``a = b ≈ c`` is each link typeset so, joined
    by its relations. When the text cannot be parsed it is shown verbatim in typewriter
    type.

    Example:
        >>> expression_latex("5.652 / 21.372")
        '5.652 / 21.372'
        >>> expression_latex("1/4 + 1/4 = 0.25 + 0.25")
        '1 / 4 + 1 / 4 = 0.25 + 0.25'
    """
    from symtf.errors import ExpressionError
    from symtf.language import expr as sx
    from symtf.language.latexmath import split_chain

    links, relations = split_chain(text)
    if len(links) > 1 and all(link for _, link in links):
        out = ""
        for k, (at, link) in enumerate(links):
            own = {p - at: v for p, v in (literals or {}).items() if at <= p < at + len(link)}
            if k:
                out += f" {_RELATION_TEX.get(relations[k - 1], '=')} "
            out += expression_latex(link, names, own or None)
        return out
    try:
        parsed = sx.parse(text, where="expression")
    except (ExpressionError, RecursionError):
        return _tt(text)
    try:
        return _node(parsed.root, 0, names or {}, literals)
    except (RecursionError, AttributeError, TypeError):
        return _tt(text)


def _node(
    n: Any,
    parent_prec: float = 0,
    names: dict[str, str] | None = None,
    literals: dict[int, str] | None = None,
) -> str:
    from symtf.language import expr as sx

    if isinstance(n, sx.Literal):
        if literals and n.pos in literals:  # its unrounded value's digits (… marks a cut)
            digits = literals[n.pos]
            cut = digits.endswith("…")
            digits = digits.rstrip("…")
            if not re.fullmatch(r"[-+]?[0-9.eE+-]+", digits):
                return n.text
            shown = digits + (r"\ldots" if cut else "")
            return shown if not digits.startswith("-") else rf"\left({shown}\right)"
        return n.text
    if isinstance(n, sx.Superscript):
        return str(n.value)
    if isinstance(n, sx.Constant):
        name = n.name.lower()
        return {"e": "e", "pi": r"\pi", "π": r"\pi", "inf": r"\infty", "∞": r"\infty"}.get(
            name, math_text(n.name)
        )
    if isinstance(n, sx.Reference):
        idx = "" if not n.index else "[" + ", ".join(str(i) for i in n.index) + "]"
        given = (names or {}).get(n.name)
        return (label_math(given) if given is not None else _tt(n.name)) + idx
    if isinstance(n, sx.Unary):
        inner = _node(n.operand, 3, names, literals)
        s = f"{n.op}{inner}"
        return s if parent_prec == 0 else rf"\left({s}\right)"
    if isinstance(n, sx.Chain):
        prec = _PREC.get(n.rest[0].op, 1) if n.rest else 1
        # a leading sign needs no brackets where the chain stands alone or is bracketed
        # (−x + y, 2·(−x + y)), but does inside another (a + (−x)·y)
        alone = parent_prec == 0 or parent_prec >= prec
        first = 0 if isinstance(n.first, sx.Unary) and alone else prec
        s = _node(n.first, first, names, literals)
        for link in n.rest:
            op = _OP_TEXT.get(link.text, _OPS.get(link.op, link.op))
            s += f" {op} " + _node(link.node, prec + 0.5, names, literals)
        return rf"\left({s}\right)" if parent_prec >= prec else s
    if isinstance(n, sx.Power):
        base = _node(n.base, 4, names, literals)
        return f"{{{base}}}^{{{_node(n.exponent, 0, names, literals)}}}"
    if isinstance(n, sx.Transpose):
        return f"{{{_node(n.operand, 4, names, literals)}}}^\\top"
    if isinstance(n, sx.Call):
        args = [_node(a, 0, names, literals) for a in n.args]
        if n.name == "sqrt" and len(args) == 1:
            return rf"\sqrt{{{args[0]}}}"
        if n.name in ("exp", "ln", "log", "max", "min"):
            return rf"\{n.name}\left(" + ", ".join(args) + r"\right)"
        return rf"\operatorname{{{n.name}}}\left(" + ", ".join(args) + r"\right)"
    if isinstance(n, sx.Brackets):
        if n.items and all(isinstance(i, sx.Brackets) for i in n.items):
            rows = [
                [_node(x, 0, names, literals) for x in cast(sx.Brackets, row).items]
                for row in n.items
            ]
            width = max(len(r) for r in rows)
            rows = [r + [""] * (width - len(r)) for r in rows]
            return bmatrix(rows)
        return "[" + ", ".join(_node(x, 0, names, literals) for x in n.items) + "]"
    raise TypeError(f"unknown expression node {type(n).__name__}")


# ----------------------------------------------------------------------------- documents


def _claims_by_step(
    report: DerivationReport, trace: Trace
) -> tuple[dict[str, list[ClaimResult]], dict[str, list[ClaimResult]], list[ClaimResult]]:
    """Step claims by step; displayed-arithmetic claims by the step they belong to; leftovers."""
    by_step: dict[str, list[ClaimResult]] = {}
    shown: dict[str, list[ClaimResult]] = {}
    leftover: list[ClaimResult] = []
    results = list(report.results)
    steps_of = [r.claim.step if r.claim.expression is None else None for r in results]
    for k, r in enumerate(results):
        cl = r.claim
        if cl.expression is None:
            step = cl.step if cl.step in trace else None
            if step is None:
                leftover.append(r)
            else:
                by_step.setdefault(step, []).append(r)
            continue
        after = [s for s in steps_of[k + 1 :] if s is not None and s in trace]
        before = [s for s in steps_of[:k] if s is not None and s in trace]
        home = after[0] if after else _expression_home(r, trace)
        if home is None and before:
            home = before[-1]
        if home is None:
            leftover.append(r)
        else:
            shown.setdefault(home, []).append(r)
    return by_step, shown, leftover


def _expression_home(r: ClaimResult, trace: Trace) -> str | None:
    for ref in r.claim.stands_for.values():
        name = ref.split("[")[0].strip()
        if name in trace:
            return name
    text = r.claim.expression or ""
    for name in sorted(trace, key=len, reverse=True):
        if "." in name and re.search(r"(?<![\w.])" + re.escape(name) + r"(?![\w])", text):
            return name
    return None


def label_tex(label: str) -> str:
    r"""An article's label in LaTeX text mode: its maths typeset, the rest escaped.

    ``"Q_1 K_1^T"`` becomes ``$Q_{1}\,K_{1}^{\top}$``; ``"H_1 AI row: weights"`` keeps its
    words as text. The one path every output takes: :mod:`symtf.renderers.labels`.
    """
    from symtf.renderers.labels import label_tex as typeset

    return typeset(label)


def label_math(label: str) -> str:
    r"""An article's label in LaTeX math mode (:func:`symtf.renderers.labels.label_math`)."""
    from symtf.renderers.labels import label_math as typeset

    return typeset(label)


def heading_title(title: str) -> str:
    """A step's title as a heading: capitalised when it is words (``Row means``), as written
    when it is the author's code (``inputs @ inputs.T``: a variable keeps its case)."""
    if not title or re.search(r"[\[\]()@/*=.]", title):
        return title
    return title[0].upper() + title[1:]


def _step_heading(step: Step, labels: Sequence[str] = (), node_names: bool = False) -> str:
    title = heading_title(step.title or step.name)
    right = ", ".join(label_tex(x) for x in labels[:3]) + (escape(", …") if len(labels) > 3 else "")
    if node_names:
        right += (" " if right else "") + "\\texttt{" + escape(step.name) + "}"
    tail = "\\symtfstep{" + right + "}" if right else ""
    return "\\subsection*{" + escape(title) + tail + "}\n"


def _model_table(d: Derivation, opts: LatexOptions, nums: Numbers) -> str:
    m = d.model
    rows: list[tuple[str, str]] = []
    if m.architecture != "none":  # no model: the article's own steps, no architecture to name
        rows += [
            ("Architecture", escape(m.architecture)),
            ("$d_{\\text{model}}$", f"${m.d_model}$"),
            ("Heads $h$", f"${m.n_heads}$"),
            ("$d_{\\text{head}} = d_k$", f"${m.d_head}$"),
            (
                "Attention divisor",
                f"${sympy.latex(m.scale)}$"
                if m.scale is not None
                else f"$\\sqrt{{d_k}} = {sympy.latex(sympy.sqrt(m.d_head))}$",
            ),
            ("Mask", escape(m.mask)),
        ]
        if m.architecture == "decoder":
            rows += [
                ("LayerNorm placement", escape(m.norm) + "-norm"),
                ("LayerNorm $\\varepsilon$", f"${sympy.latex(m.eps)}$"),
                ("Activation", escape(m.activation)),
                ("Blocks", f"${len(m.layers)}$"),
            ]
        if m.vocab:
            rows.append(
                ("Vocabulary", ", ".join(f"{i}\\,{escape(w)}" for i, w in enumerate(m.vocab)))
            )
        if d.tokens and m.vocab:
            rows.append(
                (
                    "Input",
                    " ".join(escape(m.vocab[i]) for i in d.tokens if i < len(m.vocab))
                    + f" (ids {', '.join(map(str, d.tokens))})",
                )
            )

        def mat(x: sympy.MatrixBase | None) -> str | None:
            if x is None:
                return None
            if x.rows == x.cols and x == sympy.eye(x.rows):
                return f"$I_{{{x.rows}}}$"
            r = render_value(x, nums, opts)
            return "$" + (r.exact if r.exact is not None else r.approx) + "$"

        weights: list[tuple[str, sympy.MatrixBase | None]] = [
            ("Embeddings $E$", m.embed),
            ("Positions $P$", m.pos),
            ("Unembedding $W_{\\text{vocab}}$", m.unembed),
        ]
        for li, layer in enumerate(m.layers):
            b = f"block {li + 1}" if len(m.layers) > 1 else ""
            for hi, h in enumerate(layer.heads):
                for nm, w in (("W_Q", h.W_Q), ("W_K", h.W_K), ("W_V", h.W_V)):
                    weights.append((f"${nm}$, head {hi + 1}" + (f", {b}" if b else ""), w))
            if m.architecture == "decoder":
                weights += [
                    (f"$W_O$ {b}", layer.W_O),
                    (f"$W_1$ {b}", layer.W1),
                    (f"$b_1$ {b}", layer.b1),
                    (f"$W_2$ {b}", layer.W2),
                    (f"$b_2$ {b}", layer.b2),
                ]
        for label, w in weights:
            t = mat(w)
            if t is not None:
                rows.append((label, t))
    if m.standalone and m.architecture != "decoder":
        rows.append(("LayerNorm $\\varepsilon$", f"${sympy.latex(m.eps)}$"))
    for s in m.standalone:
        r = render_value(s.input, nums, opts)
        rows.append(
            (
                f"Worked {escape(s.op)} \\texttt{{{escape(s.name)}}}",
                "$" + (r.exact or r.approx) + "$",
            )
        )
    if not rows:
        return ""
    body = "\n".join(f"{a} & {b} \\\\" for a, b in rows)
    return (
        "\\section*{The model}\n"
        "\\begin{longtable}{>{\\raggedright\\arraybackslash}p{0.3\\linewidth} >{\\raggedright\\arraybackslash}p{0.62\\linewidth}}\n"
        "\\toprule\nSetting & Value \\\\\n\\midrule\n\\endhead\n"
        + body
        + "\n\\bottomrule\n\\end{longtable}\n"
    )


def _summary(report: DerivationReport) -> str:
    counts = report.counts
    total = sum(counts.values())
    parts = [f"{n} {k}" for k, n in counts.items() if n]
    bad = counts.get("slip", 0) + counts.get("wrong", 0)
    symbolic = counts.get("symbolic", 0)
    verdict = (
        "every printed number checks out."
        if not bad and not counts.get("undecided") and not symbolic
        else "every decided number checks out."
        if not bad and not counts.get("undecided")
        else f"{bad} printed number(s) are off; corrections are in bold."
    )
    if symbolic:
        verdict += f" {symbolic} depend on the file's symbols."
    return (
        "\\paragraph{Summary.} "
        + escape(f"{total} printed numbers: {', '.join(parts) if parts else 'none'} — {verdict}")
        + "\n\nMarks: \\symtfok{} right (exact or correctly rounded), \\symtfslip{} off by one unit in "
        "the last place, \\symtfbad{} wrong, "
        + ("\\symtfsymbolic{} depends on a symbol, " if symbolic else "")
        + "\\symtfundecided{} undecided. Decimals ending in "
        "$\\ldots$ are certified truncations of the exact value; $=$ is exact, $\\approx$ shows digits.\n\n"
    )


def derivation_body(
    report: DerivationReport,
    derivation: Derivation | None = None,
    options: LatexOptions | None = None,
) -> str:
    """The body (no preamble) of one derivation's lecture notes.

    Args:
        report: The checked derivation (with its exact trace).
        derivation: The loaded derivation, for the model table and weights; optional.
        options: Layout options.
    """
    from symtf.renderers.steps import article_names, labels_by_step, select

    opts = options or LatexOptions()
    trace = report.trace
    if trace is None:
        raise ValueError("the report carries no trace; check() the derivation first")
    names = {} if opts.node_names else article_names(report)
    titles = {} if opts.node_names else {n: trace[n].title for n in trace if trace[n].title}
    nums = Numbers(trace.shown, opts, names, titles)
    ctx = _Context(
        trace, nums, opts, derivation, names=names, node_names=opts.node_names, name_long=True
    )
    labels = labels_by_step(report)
    refs = ctx.ref_names()
    chosen = set(select(trace, opts.steps, labels))
    out = [_summary(report)]
    if derivation is not None and opts.steps is None:
        out.append(_model_table(derivation, opts, nums))
    by_step, shown, leftover = _claims_by_step(report, trace)
    for title, names_in_stage in stages(trace):
        picked = [n for n in names_in_stage if n in chosen]
        if not picked:
            continue
        out.append("\\section{" + escape(title) + "}\n")
        for name in picked:
            step = trace[name]
            out.append(_step_heading(step, labels.get(name, []), opts.node_names))
            out.append(_align(step_rows(ctx, step), step_rows(ctx, step, broken=True)))
            if name in by_step:
                out.append(_claims_table(by_step[name], opts))
            if name in shown:
                out.append(_displayed_block(shown[name], opts, refs))
    if opts.steps is not None:
        leftover = []
    if leftover:
        out.append("\\section{Other printed claims}\n")
        steps = [r for r in leftover if r.claim.expression is None]
        exprs = [r for r in leftover if r.claim.expression is not None]
        if steps:
            out.append(_claims_table(steps, opts))
        if exprs:
            out.append(_displayed_block(exprs, opts, refs))
    return "".join(out)


def document(
    report: DerivationReport,
    derivation: Derivation | None = None,
    options: LatexOptions | None = None,
) -> str:
    """One checked derivation as a standalone LaTeX document (lecture notes).

    Args:
        report: The checked derivation (``symtf.checking.compare.check(derivation)``).
        derivation: The loaded derivation, for the model table, weights and source.
        options: Layout options.
    """
    source = derivation.source if derivation is not None else ""
    subtitle = f"Source: {source}" if source else f"File: {report.path}"
    return standalone(report.title, derivation_body(report, derivation, options), subtitle=subtitle)


# ----------------------------------------------------------------------------- Jupyter


def trace_latex(trace: Trace, options: LatexOptions | None = None) -> str:
    """A trace as display math (for Jupyter): one aligned line group per step."""
    opts = options or LatexOptions()
    ctx = _Context(trace, Numbers(trace.shown, opts), opts, None)
    blocks = []
    for name in trace:
        step = trace[name]
        lines = step_math(ctx, step)
        head = [(_tt(name), r"\quad " + math_text(step.title))]
        blocks.extend(head + lines)
    body = " \\\\\n".join(f"{a} &{b}" for a, b in blocks)
    return "$$\\begin{aligned}\n" + body + "\n\\end{aligned}$$"


def _report_rows(d: DerivationReport) -> list[str]:
    rows = []
    for r in d.results:
        c0 = r.checks[0] if r.checks else None
        where = r.claim.step or r.claim.expression or ""
        if len(r.checks) == 1 and c0 is not None:
            got = _printed_cell(c0.printed)
            fix = (
                ""
                if c0.verdict in _GOOD or c0.expected is None
                else r"\to \mathbf{" + _printed_cell(c0.expected) + "}"
            )
            summary = math_text(c0.verdict) + (r"\ " + fix if fix else "")
        else:
            got = math_text(f"{len(r.checks)} numbers")
            summary = math_text(_counts_text(r.checks))
        mark = (
            r"\color{green}{\checkmark}"
            if r.verdict in _GOOD
            else r"\color{blue}{f}"
            if r.verdict == "symbolic"
            else r"\color{red}{\times}"
        )
        rows.append(
            f"{mark} & {label_math(r.claim.label)} & {math_text(where)} & {got} & {summary}"
        )
    return rows


def derivation_report_latex(d: DerivationReport) -> str:
    """One derivation's verdicts as display math (for Jupyter)."""
    head = math_text(d.title)
    rows = _report_rows(d)
    return (
        "$$\\begin{array}{clllll}\n"
        + f"\\rlap{{{head}}} \\\\\n\\hline\n"
        + " \\\\\n".join(rows)
        + "\n\\end{array}$$"
    )


def report_latex(report: Report) -> str:
    """A report's verdicts as display math (for Jupyter)."""
    return "\n".join(derivation_report_latex(d) for d in report.derivations)
