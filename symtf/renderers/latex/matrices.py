"""Matrices as LaTeX: ``bmatrix`` blocks elided past the options' size, split into column
blocks that fit the page, slices of a tensor of three axes or more, and a value as the
article printed it.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, cast

import sympy

from symtf.renderers.latex.numbers import MAX_LINE, Entry, Numbers, node_latex, num
from symtf.renderers.latex.options import LatexOptions
from symtf.renderers.plain import matrix_cells as _matrix_cells

if TYPE_CHECKING:
    from symtf.trace import Step


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
    widths = [max(visible_width(row[j]) for row in grid) for j in range(len(cols))]
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
        entries = named_long(entries, shown, cells, name, nums, opts)
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


def as_printed(step: Step, value: Any, opts: LatexOptions) -> Rendered | None:
    """A given tensor as the file wrote it: its numbers' own digits (``0.9570``, not
    ``0.957`` or ``957/1000``), in its own shape; ``None`` when it is not one, or a number
    is not a plain decimal."""
    if step.op != "given":
        return None
    texts = getattr(step.params.get("value"), "texts", None)
    if not texts or not all(_PLAIN_NUMBER.fullmatch(t.strip()) for t in texts):
        return None
    tex = [num(t.strip().replace("−", "-")) for t in texts]
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


def named_long(
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
            if isinstance(x, sympy.Basic) and x.free_symbols and visible_width(text) > LONG_ENTRY:
                # a copy (a concatenation, a residual's unchanged part) is written as the
                # entry it copies, so that a step names itself only where the entry is new
                place = nums.origins.setdefault(x, f"{name}[{ri[a]},{ci[b]}]")
                e = Entry(node_latex(place, nums.names, nums.titles), True)
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


def visible_width(tex: str) -> int:
    """A rough count of printed characters in a LaTeX formula (a matrix counts its widest row)."""

    def flat(m: re.Match[str]) -> str:
        rows = m.group(2).split(r"\\")
        width = max(sum(visible_width(c) + 2 for c in r.split("&")) for r in rows)
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
    widths = [max(visible_width(row[j]) for row in cells) for j in range(len(cells[0]))]
    return sum(widths) + 2 * len(widths) > MAX_LINE
