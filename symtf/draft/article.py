"""An article read for drafting: its printings, displayed lines, equations and settings.

Nothing here computes. The printed numbers come from :mod:`symtf.draft.read`
(verbatim strings with their lines and places); this module groups them the way a
reader does before looking for the steps:

- a **printing** is one printed matrix, vector or number, with its label and the
  article line of each row, and its *role* on a displayed line (an operand of
  ``[1, 0] + [0.1, 0.1] = [1.1, 0.1]``, its result, the weights of a weighted
  sum, the row before or after ``\\to``);
- a **run** stacks the rows an article prints one per line (``• I: [...]``,
  ``• love: [...]``) into the matrix they are rows of, so that the search can
  find the step of the whole matrix; the rows keep their own lines;
- an **equation** is a symbolic line (``S_1 = Q_1K_1^T/\\sqrt{2}``, ``R_1 = X + O``)
  read only for the names it relates, which rank the candidates;
- **dims** are the small integers the article states (``d_k = 2``, ``\\sqrt{3}``),
  the scales a softmax may divide by.
"""

from __future__ import annotations

import dataclasses
import json
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from symtf.draft.names import ident
from symtf.draft.read import LITERAL, Found, read, text_lines
from symtf.draft.read.memo import SegmentMemo
from symtf.errors import ExpressionError
from symtf.language import latexmath
from symtf.place import Place

__all__ = ["Article", "Display", "Equation", "Printing", "ident", "read_article"]


#: Roles a printing may have on a displayed line (from extract's label suffixes).
ROLES = ("operand", "weights", "term", "before", "after")
#: Lines between two rows of a run (a blank line may separate them).
RUN_GAP = 2
#: Runs are numbered from here (printings and displayed lines are numbered from 1).
RUN_KEYS = 1_000_000


@dataclass(frozen=True)
class Printing:
    """A printed matrix, vector or number, or a run of printed rows.

    Attributes:
        key: Its place in the article's order (runs come right after their last row).
        kind: ``"matrix"``, ``"vector"`` or ``"number"``.
        label: The nearest label, as extract found it (without the role suffix).
        role: ``""`` or one of :data:`ROLES`, or ``"result"`` (the printed end of a
            displayed line).
        rows: The printed strings, row by row.
        lines: The article line of each row.
        cell: A notebook cell, if any.
        context: The source line, trimmed.
        parts: For a run, the keys of the printings it stacks (one per row).
        decimals: The grid of a print that drops trailing zeros (numpy's ``0.54`` at 8
            decimals).
        places: Where each printed entry stands, row by row (empty when not known).
    """

    key: int
    kind: str
    label: str
    role: str
    rows: tuple[tuple[str, ...], ...]
    lines: tuple[int, ...]
    cell: int | None = None
    context: str = ""
    parts: tuple[int, ...] = ()
    decimals: int | None = None
    places: tuple[Place, ...] = ()
    #: A literal written in the code itself, not printed by it (its places are in the code).
    in_code: bool = False

    @property
    def shape(self) -> tuple[int, int]:
        """Rows × columns."""
        return (len(self.rows), len(self.rows[0]) if self.rows else 0)

    @property
    def line(self) -> int:
        """The line of the first row."""
        return self.lines[0]

    @property
    def size(self) -> int:
        """How many printed numbers."""
        return sum(len(r) for r in self.rows)


@dataclass(frozen=True)
class Display:
    """A displayed arithmetic line: the expression as written and what it prints."""

    key: int
    label: str
    line: int
    rows: tuple[tuple[str, ...], ...]
    expression: str
    latex: str
    cell: int | None = None
    context: str = ""
    #: What the links of one chain ``a = b = c`` computing one printed result share
    #: (``""``: none); drafting writes them as one claim (symtf.draft.read.Found.chain).
    chain: str = ""
    #: Where each entry of the printed result stands.
    places: tuple[Place, ...] = ()


@dataclass(frozen=True)
class Equation:
    """A symbolic equation: the name it defines and the names it is made of.

    ``lhs_latex`` and ``latex`` keep both sides as the article wrote them, for reading
    the step the equation states (:mod:`symtf.draft.infer.stated`); ``cell`` is the
    notebook cell it sits in.
    """

    line: int
    lhs: str
    names: tuple[str, ...]
    text: str
    lhs_latex: str = ""
    latex: str = ""
    cell: int | None = None


@dataclass(frozen=True)
class Article:
    """What drafting reads from an article (frozen; nothing computed)."""

    path: str
    kind: str
    title: str
    printings: tuple[Printing, ...]
    displays: tuple[Display, ...]
    equations: tuple[Equation, ...]
    dims: tuple[int, ...]
    text: str = field(repr=False, default="")
    #: Code cells or fenced Python blocks (symtf.draft.read.Block), translated, never run.
    code: tuple[Any, ...] = ()
    #: Every value the reader found in the prose, and in the code (``("output", found)``:
    #: what a block printed; ``("comment", found)``: what its comments write): each of
    #: their numbers ends as a claim or as an unchecked entry (symtf.draft.compose).
    seen: tuple[Found, ...] = field(default=(), repr=False)
    in_code: tuple[tuple[str, Found], ...] = field(default=(), repr=False)
    #: The article's headings, ``(line, text)`` in the printings' line numbering (a
    #: notebook's file lines), in order: what drafting names an unlabelled step after.
    headings: tuple[tuple[int, str], ...] = ()

    def heading_before(self, line: int) -> str | None:
        """The last heading at or above ``line`` (``None``: the line is above every one)."""
        found = None
        for at, text in self.headings:
            if at > line:
                break
            found = text
        return found

    def printing(self, key: int) -> Printing:
        """The printing with this key."""
        return next(p for p in self.printings if p.key == key)


def _role(label: str) -> tuple[str, str]:
    m = re.match(r"^(.*) \((" + "|".join(ROLES) + r")\)(?: \(\d+\))?$", label)
    return (m.group(1), m.group(2)) if m else (label, "")


def _printings(found: list[Found]) -> tuple[list[Printing], list[Display]]:
    """Printings and displayed lines from extract's records, with duplicates dropped."""
    displays: list[Display] = []
    printings: list[Printing] = []
    by_line: dict[tuple[int | None, int], list[Found]] = {}
    for f in found:
        by_line.setdefault((f.cell, f.line), []).append(f)
    key = 0
    seen: set[tuple[int | None, int, str, tuple[tuple[str, ...], ...]]] = set()
    for f in found:
        key += 1
        if f.kind == "arithmetic":
            displays.append(
                Display(
                    key,
                    f.label,
                    f.line,
                    f.rows,
                    f.expression or "",
                    f.latex or f.expression or "",
                    f.cell,
                    f.context,
                    f.chain,
                    f.places,
                )
            )
            continue
        if f.label.endswith(LITERAL):
            continue  # checked only as the result it repeats (symtf.draft.accounting)
        label, role = _role(f.label)
        same_line = by_line[(f.cell, f.line)]
        results = {
            g.rows for g in same_line if g.kind == "arithmetic"
        }  # what the line's arithmetic prints
        if f.kind == "number":
            text = f.rows[0][0]
            inside = any(
                g is not f
                and g.kind in ("vector", "matrix")
                and any(text == c for r in g.rows for c in r)
                for g in same_line
            )
            if inside or f.rows in results:
                continue  # an entry of a vector on its line, or a displayed line's result
        if f.kind == "vector" and not role and f.rows in results:
            role = "result"
        ident_key = (f.cell, f.line, role, f.rows)
        if ident_key in seen and role in ("", "result"):
            continue
        seen.add(ident_key)
        printings.append(
            Printing(
                key,
                f.kind,
                label,
                role,
                f.rows,
                (f.line,) * len(f.rows),
                f.cell,
                f.context,
                places=f.places,
            )
        )
    return printings, displays


def _runs(printings: list[Printing]) -> list[Printing]:
    """Rows printed one per line, grouped into the matrices they are rows of.

    Two one-row printings belong to one run when they have the same width and role,
    the same place among that role's printings on their lines, and lines at most
    :data:`RUN_GAP` apart. The operands of one displayed line of two or more
    vectors also stack into a matrix (``0.474·[0, 0] + 0.241·[1.1, 0.1] + …``).
    """
    rows = [p for p in printings if p.kind == "vector" and len(p.rows) == 1]
    slot: dict[int, tuple[str, int]] = {}
    count: dict[tuple[int | None, int, str], int] = {}
    for p in rows:
        k = (p.cell, p.line, p.role)
        slot[p.key] = (p.role, count.get(k, 0))
        count[k] = count.get(k, 0) + 1
    out: list[Printing] = []
    open_runs: dict[tuple[str, int, int], list[Printing]] = {}

    def close(run: list[Printing]) -> None:
        if len(run) < 2 or len({p.rows for p in run}) == 1:
            return  # one row printed again is not a matrix
        labels = {p.label for p in run}
        label = labels.pop() if len(labels) == 1 else ""
        if _continued(run):
            label = run[0].label
        out.append(
            Printing(
                RUN_KEYS + len(out),
                "matrix",
                label,
                run[0].role,
                tuple(p.rows[0] for p in run),
                tuple(p.line for p in run),
                run[0].cell,
                run[0].context,
                tuple(p.key for p in run),
                places=_stacked(run),
            )
        )

    for p in rows:
        role, place = slot[p.key]
        run_key = (role, place, len(p.rows[0]))
        run = open_runs.get(run_key)
        if run and (
            p.cell != run[-1].cell
            or not 0 < p.line - run[-1].line <= RUN_GAP
            or (_continued(run) and not _unnamed(p))  # the next matrix's first row
        ):
            close(run)
            run = None
        if run is None:
            open_runs[run_key] = [p]
        else:
            run.append(p)
    for run in open_runs.values():
        close(run)
    # the operands of one displayed line, stacked
    groups: dict[tuple[int | None, int], list[Printing]] = {}
    for p in rows:
        if p.role == "operand":
            groups.setdefault((p.cell, p.line), []).append(p)
    for (cell, line), group in groups.items():
        widths = {len(p.rows[0]) for p in group}
        if len(group) >= 2 and len(widths) == 1:
            out.append(
                Printing(
                    RUN_KEYS + len(out),
                    "matrix",
                    group[0].label,
                    "operands",
                    tuple(p.rows[0] for p in group),
                    (line,) * len(group),
                    cell,
                    group[0].context,
                    tuple(p.key for p in group),
                    places=_stacked(group),
                )
            )
    return out


def _stacked(rows: list[Printing]) -> tuple[Place, ...]:
    """The places of printings stacked as the rows of one matrix (none if one lacks them)."""
    if not all(len(p.places) == p.size for p in rows):
        return ()
    return tuple(q for p in rows for q in p.places)


def _unnamed(p: Printing) -> bool:
    """Whether a row was printed with no name of its own (extract labels it by its line)."""
    return re.fullmatch(r"line \d+", p.label) is not None


def _continued(run: list[Printing]) -> bool:
    """Whether a run is a named matrix whose rows after the first carry no name::

        W_Q = [0.1, 0.0]
              [0.0, 0.1]

    Such a run is one matrix: a named row after it begins the next one.
    """
    return len(run) >= 2 and not _unnamed(run[0]) and all(_unnamed(p) for p in run[1:])


_NAME = re.compile(r"[A-Za-z][A-Za-z0-9_]*(?:\^\(\(\d+\)\))?")
_FUNCTIONS = {
    "sqrt", "exp", "ln", "log", "max", "min", "sum", "relu", "softmax", "frac", "text",
    "mathrm", "left", "right", "cdot", "times", "top", "T", "e", "pi", "ReLU", "LayerNorm",
    "FFN", "Attention", "GELU", "mathbf", "operatorname", "sin", "cos", "tanh",
}  # fmt: skip


def _equations(statements: list[tuple[int, int | None, str]]) -> list[Equation]:
    """Symbolic equations: ``lhs = expression of names``, with both sides as written."""
    from symtf.draft.infer.formula import parse, split_equation

    out: list[Equation] = []
    for line, cell, st in statements:
        if "=" not in st and len(st) <= 400:
            bare = _applied(st)
            if bare is not None:
                try:
                    plain = latexmath.to_plain(st, where="equation")
                except ExpressionError:
                    plain = st
                out.append(Equation(line, "", bare, plain, "", st, cell))
            continue
        if len(st) > 400:
            continue
        pieces = [p.strip() for p in split_equation(st)]
        lhs_node = parse(pieces[0])
        if lhs_node is not None and lhs_node.kind == "mul" and lhs_node.args[0].kind == "name":
            lhs_node = lhs_node.args[0]  # ``P(y_i) = …``: the function P
        try:
            lhs = latexmath.to_plain(pieces[0], where="label")
        except ExpressionError:
            lhs = ""
        if not re.fullmatch(r"[A-Za-z][\w^()]*(?:\s*\+\s*[A-Za-z]\w*)?", lhs):
            if lhs_node is None or lhs_node.kind != "name":
                continue
            lhs = ident(pieces[0].split("(")[0]) or ""
            if not lhs:
                continue
        for piece in pieces[1:]:
            if "\\begin" in piece or not re.search(r"[A-Za-z]", piece):
                continue
            try:
                plain = latexmath.to_plain(piece, where="equation")
            except ExpressionError:
                plain = ""
            if plain:
                names = tuple(
                    n
                    for n in _NAME.findall(plain.replace("ᵀ", ""))
                    if n not in _FUNCTIONS and not re.fullmatch(r"d_?\w*", n)
                )
            else:
                node = parse(piece)
                names = tuple(n.text for n in node.names()) if node is not None else ()
            if names and (not re.search(r"\d\.\d", plain or piece) or _scaled_name(parse(piece))):
                out.append(Equation(line, lhs, names, plain or piece, pieces[0], piece, cell))
    return out


def _applied(statement: str) -> tuple[str, ...] | None:
    r"""``\text{ReLU}(O \cdot W_1 + b_1)`` displayed alone, with no ``=`` (or in plain
    text, ``ReLU(O · W_1 + b_1)``): a function the article applies to a formula of names,
    whose result it names below (``Apply: … Output: H = …``). The names it reads, or None
    for anything else (prose, a bare name, numbers)."""
    from symtf.draft.infer.formula import FUNCTIONS, parse

    if re.search(r"\d\.\d", statement):
        return None
    node = parse(statement)
    if node is None or node.kind != "call" or len(node.args) != 1:
        return None
    if node.text.lower() not in FUNCTIONS:
        return None
    if "\\" not in statement and node.args[0].kind == "name":
        return None  # plain text: ``softmax(S)`` in a sentence names, a formula computes
    names = tuple(n.text for n in node.names())
    return names if names else None


def _scaled_name(node: Any) -> bool:
    r"""``-0.1 \cdot \text{W update}``: one written coefficient times a formula of names only
    (an update scaled by its learning rate), still an equation over names; any other
    decimal makes the piece arithmetic written out."""
    if node is None or node.kind != "mul":
        return False
    a, b = node.args

    def number(n: Any) -> bool:
        return bool(n.kind == "num" or (n.kind == "neg" and n.args[0].kind == "num"))

    def no_number(n: Any) -> bool:
        return bool(n.kind != "num" and all(no_number(x) for x in n.args))

    return (number(a) and no_number(b)) or (number(b) and no_number(a))


_DIM = re.compile(
    r"(?:\bd_?\{?(?:k|q|v|h|head|model|\\text\{(?:head|model)\})\}?\s*=\s*|\\sqrt\{|√|sqrt\()\s*(\d{1,4})\b"
)


def _dims(text: str) -> list[int]:
    """Small integers the article states as sizes (``d_k = 2``) or takes square roots of."""
    dims = {int(m.group(1)) for m in _DIM.finditer(text)}
    return sorted(d for d in dims if 1 <= d <= 4096)


def read_article(
    text: str, kind: str, *, path: str = "<text>", memo: SegmentMemo | None = None
) -> Article:
    """Read an article's text (``kind``: ``md``, ``txt``, ``tex`` or ``ipynb``).

    ``memo``: what an earlier reading of the same document found in each segment, taken
    where a segment is the same (:mod:`symtf.draft.read.memo`); the article read is the
    same either way.

    Raises:
        SpecError: A notebook that is not JSON with a list of cells.
    """
    reading = read(text, kind, path=path, code=True)  # code: the translation reads it
    found = reading.found(memo)
    if kind == "ipynb":  # a markdown cell's lines → the notebook file's lines
        found = [dataclasses.replace(f, line=reading.file_line(f.cell, f.line)) for f in found]
    # hand arithmetic written in a comment of the code (``# sqrt(4) = 2.0``) is a displayed
    # line like any other (its places are already the file's)
    found += [f for where, f in reading.in_code() if where == "comment" and f.kind == "arithmetic"]
    found.sort(
        key=lambda f: (f.cell if f.cell is not None else -1, f.line)
    )  # stable: a line's order stays
    printings, displays = _printings(found)
    runs = _runs(printings)
    ordered = sorted(
        [*printings, *runs], key=lambda p: (p.parts[0] - 0.5 if p.parts else p.key, -len(p.parts))
    )
    prose = reading.prose()
    title = next(
        (
            ln.strip().lstrip("# ")
            for ln in prose.splitlines()
            if ln.strip() and not ln.lstrip().startswith(("```", "~~~"))
        ),
        "",
    )
    if kind == "ipynb":
        title = Path(path).stem
    elif kind == "tex":
        m = re.search(r"\\title\{([^{}]+)\}|\\(?:sub)*section\*?\{([^{}]+)\}", text)
        title = (m.group(1) or m.group(2)) if m else Path(path).stem
    return Article(
        path,
        kind,
        title[:120],
        tuple(ordered),
        tuple(displays),
        tuple(_equations(reading.statements())),
        tuple(_dims(prose)),
        text,
        reading.blocks,
        tuple(found),
        tuple(reading.in_code()),
        tuple(_headings(text, kind)),
    )


#: A Markdown heading (``## Step 5: Apply Causal Mask``), and a LaTeX sectioning command.
_MD_HEADING = re.compile(r"^\s{0,3}#{1,6}\s+(.+?)\s*#*\s*$")
_TEX_HEADING = re.compile(r"\\(?:sub)*section\*?\{([^{}]{1,200})\}")
_FENCE = re.compile(r"^\s{0,3}(```|~~~)")


def _md_headings(lines: list[str], numbers: list[int]) -> list[tuple[int, str]]:
    """Markdown headings outside fenced code, each with its line (``numbers[k]``)."""
    out: list[tuple[int, str]] = []
    fence = None
    for k, line in enumerate(lines):
        f = _FENCE.match(line)
        if f:
            fence = None if fence == f.group(1) else (fence or f.group(1))
            continue
        if fence is not None:
            continue
        m = _MD_HEADING.match(line)
        if m and k < len(numbers) and numbers[k]:
            out.append((numbers[k], m.group(1)))
    return out


def _headings(text: str, kind: str) -> list[tuple[int, str]]:
    """The article's headings in the printings' line numbering (nothing computed)."""
    if kind == "ipynb":
        from symtf.draft.code import cell_lines

        try:
            cells = json.loads(text).get("cells", [])
        except (ValueError, AttributeError):
            return []
        lines = cell_lines(text)
        out: list[tuple[int, str]] = []
        for k, c in enumerate(cells if isinstance(cells, list) else []):
            if not isinstance(c, dict) or c.get("cell_type") != "markdown":
                continue
            src = c.get("source", "")
            rows = text_lines("".join(src) if isinstance(src, list) else str(src))
            out += _md_headings(rows, lines.get(k, []))
        return sorted(out)
    rows = text_lines(text)
    if kind == "tex":
        return [(k + 1, m.group(1)) for k, r in enumerate(rows) if (m := _TEX_HEADING.search(r))]
    return _md_headings(rows, list(range(1, len(rows) + 1)))
