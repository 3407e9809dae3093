"""No exercise sheet gives a blank away: a search of every sheet, independent of the hiding.

For every bundled derivation and 20 seeds (fresh numbers where ``--fresh`` supports the
model, a fresh choice of blanks otherwise), the student sheet is written, both as HTML
and as LaTeX, and read back as a reader would: which numbers each table shows. Then,
for each blank, this test works out on its own what could reveal it, and looks for it
on the sheet:

* its value anywhere it is copied (an output that is one input entry unchanged, found
  by changing that input and watching which outputs follow it, either way and along
  chains of copies), or comes back along a chain of one-entry steps (Adam's
  ``m̂ = m/(1 − β₁)`` with ``m = (1 − β₁)·g`` prints ``g``);
* an output of one step that moves with the blank and whose other inputs are all on
  the sheet (it recovers the blank, or its sign, by undoing one step);
* a row or column of the blank's own step whose other entries are on the sheet and
  determine it (a softmax row sums to 1, a LayerNorm row to 0, the columns of a wide
  linear map are dependent): the blank's gradient lies in the span of theirs;
* a gradient one VJP from the blank's gradient step (``dW = Xᵀ·dz`` with ``dz``'s other
  entries and ``X`` shown), the op's Jacobian found by differencing it;
* a printed reduction (``max``, ``sum``) over it, or a displayed line quoting it.

It imports nothing of :mod:`symtf.teach.reveal` and none of the hiding functions of
:mod:`symtf.teach.exercise`: the relations come from evaluating each node's op on
changed float64 inputs, node by node.
"""

from __future__ import annotations

import contextlib
import html.parser
import os
import re
from dataclasses import dataclass
from fractions import Fraction
from pathlib import Path

import numpy as np
import pytest

from symtf import spec
from symtf.backends import FloatBackend
from symtf.checking.compare import Evaluator
from symtf.checking.evaluation import selection, step_prints
from symtf.graph.core import Live
from symtf.graph.pipeline import build
from symtf.renderers.html.maths import label_html
from symtf.renderers.labels import label_tex
from symtf.teach import exercise as E
from symtf.teach import sheet as S
from symtf.teach.fresh import FreshError, fresh
from symtf.trace import TraceBuilder

ROOT = Path(__file__).resolve().parent.parent
DERIVATIONS = sorted((ROOT / "derivations").glob("*.toml"))
SEEDS = range(int(os.environ.get("SYMTF_SHEET_SEEDS", "20")))
#: Blanks per sheet (fewer where the derivation prints fewer entries).
BLANKS = 8

Entry = tuple[str, int, int]


# ----------------------------------------------------------------------------- reading sheets


class _HtmlTables(html.parser.HTMLParser):
    """The worked example's tables: label -> cells (a number's text, or None for a box)."""

    def __init__(self) -> None:
        super().__init__()
        self.tables: dict[str, list[str | None]] = {}
        self.texts: dict[str, str] = {}
        self._in_example = False
        self._h2 = self._h3 = self._span = self._td = self._p = False
        self._label = ""
        self._h2_text = ""
        self._cell: list[str] = []
        self._cell_box = False
        self._current: str | None = None

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        cls = dict(attrs).get("class") or ""
        if tag == "h2":
            self._h2, self._h2_text = True, ""
        elif tag == "h3" and self._in_example:
            self._h3, self._label = True, ""
        elif tag == "span" and self._h3:
            self._span = True
        elif tag == "td" and self._current is not None:
            self._td, self._cell, self._cell_box = True, [], False
        elif tag == "span" and self._td and cls in ("blank", "hidden"):
            self._cell_box = True
        elif tag == "p" and self._current is not None:
            self._p = True

    def handle_endtag(self, tag: str) -> None:
        if tag == "h2":
            self._h2 = False
            self._in_example = self._h2_text.strip() == "The worked example"
            self._current = None
        elif tag == "h3" and self._h3:
            self._h3 = False
            self._current = self._label.strip()
            self.tables[self._current] = []
        elif tag == "span":
            self._span = False
        elif tag == "td" and self._td:
            self._td = False
            assert self._current is not None
            self.tables[self._current].append(None if self._cell_box else "".join(self._cell))
        elif tag == "p":
            self._p = False

    def handle_data(self, data: str) -> None:
        if self._h2:
            self._h2_text += data
        elif self._h3 and not self._span:
            self._label += data
        elif self._td and not self._cell_box:
            self._cell.append(data)
        elif self._p and self._current is not None:
            self.texts[self._current] = self.texts.get(self._current, "") + data


class _Visible(html.parser.HTMLParser):
    """The text a reader sees in a piece of HTML (a label with its maths as MathML)."""

    def __init__(self) -> None:
        super().__init__()
        self.text = ""

    def handle_data(self, data: str) -> None:
        self.text += data


def _visible(piece: str) -> str:
    v = _Visible()
    v.feed(piece)
    return v.text.strip()


def html_tables(page: str, labels: list[str]) -> tuple[dict[str, list[str | None]], dict[str, str]]:
    """The worked example's tables of an HTML sheet, read by label (a heading's visible
    text, its maths typeset as MathML, is matched to the label that gives it)."""
    p = _HtmlTables()
    p.feed(page)
    by_text = {_visible(label_html(lab)): lab for lab in labels}
    tables = {by_text.get(k, k): v for k, v in p.tables.items()}
    texts = {by_text.get(k, k): v for k, v in p.texts.items()}
    return tables, texts


def tex_tables(doc: str, labels: list[str]) -> dict[str, list[str | None]]:
    """The worked example's tables of a LaTeX sheet, read by label."""
    body = doc.split(r"\section*{The worked example}", 1)[1].split(r"\section*{Blanks}", 1)[0]
    by_tex = {r"\boldmath " + label_tex(lab): lab for lab in labels}
    out: dict[str, list[str | None]] = {}
    for chunk in body.split(r"\paragraph{")[1:]:
        depth, k = 1, 0
        while depth:
            depth += {"{": 1, "}": -1}.get(chunk[k], 0)
            k += 1
        label = by_tex[chunk[: k - 1]]
        m = re.search(r"\\begin\{array\}\{r*\}\n(.*?)\n\\end\{array\}", chunk, re.S)
        cells: list[str | None] = []
        if m is not None:
            for row in re.split(r" \\\\(?:\[\d+pt\])?\n", m.group(1)):
                for cell in row.split(" & "):
                    boxed = r"\fbox" in cell or r"\blacksquare" in cell
                    cells.append(None if boxed else cell.strip())
        out[label] = cells
    return out


def _number(text: str | None) -> Fraction | None:
    if text is None:
        return None
    t = text.replace("−", "-").strip()
    if not re.fullmatch(r"-?\d+(\.\d+)?", t):
        return None
    return Fraction(t)


# ----------------------------------------------------------------------------- relations


@dataclass
class Nodes:
    """Each node evaluated on its own in float64, with changed inputs."""

    graph: object
    values: dict[str, np.ndarray]
    shapes: dict[str, tuple[int, ...]]

    @classmethod
    def of(cls, d: spec.Derivation) -> Nodes:
        graph = build(d)
        xp = FloatBackend()
        t = TraceBuilder(xp)
        live = Live(xp, t)
        live.run(graph)
        trace = t.freeze()
        values = {
            n: np.array(trace.value(n), dtype=float)
            for n in trace
            if isinstance(trace.value(n), np.ndarray) and trace.value(n).ndim == 2
        }
        return cls(graph, values, dict(live._shapes))

    def on_sheet(self, name: str) -> bool:
        """Whether a step's numbers are in the sheet's model section (the file's numbers)."""
        node = self.graph.get(name)
        if node is None or node.unroll or node.args:
            return False
        return getattr(node.op, "name", "") in ("given", "const", "embed", "ids", "divisor") or (
            "given" in node.params
        )

    def args(self, name: str) -> tuple[str, ...]:
        node = self.graph.get(name)
        return () if node is None or node.unroll else tuple(node.args)

    def consumers(self, name: str) -> list[str]:
        return [n.name for n in self.graph if not n.unroll and name in n.args]

    def run(self, name: str, changed: dict[Entry, float]) -> np.ndarray | None:
        node = self.graph.get(name)
        xp = FloatBackend()
        t = TraceBuilder(xp)
        live = Live(xp, t)
        live._shapes = dict(self.shapes)
        for a in node.args:
            v = self.values[a].copy()
            for (s, i, j), x in changed.items():
                if s == a:
                    v[i, j] = x
            t.add(a, v)
        try:
            with np.errstate(all="ignore"):
                live.node(node)
        except Exception:  # a change the op cannot take (a zero variance): no evidence
            return None
        out = t.value(name)
        return np.array(out, dtype=float) if isinstance(out, np.ndarray) else None

    def inputs(self, name: str) -> list[Entry]:
        out = []
        for a in self.args(name):
            if a not in self.values:
                return []
            v = self.values[a]
            out += [
                (a, i, j)
                for i in range(v.shape[0])
                for j in range(v.shape[1])
                if np.isfinite(v[i, j])
            ]
        return out


class Relations:
    """Dependencies and copies found by changing one input entry at a time."""

    def __init__(self, nodes: Nodes) -> None:
        self.nodes = nodes
        self._deps: dict[str, dict[tuple[int, int], set[Entry]] | None] = {}

    def deps(self, name: str) -> dict[tuple[int, int], set[Entry]] | None:
        if name not in self._deps:
            self._deps[name] = self._find(name)
        return self._deps[name]

    def _find(self, name: str) -> dict[tuple[int, int], set[Entry]] | None:
        n = self.nodes
        if name not in n.values or not n.args(name) or any(a not in n.values for a in n.args(name)):
            return None
        base = n.values[name]
        out: dict[tuple[int, int], set[Entry]] = {
            (i, j): set() for i in range(base.shape[0]) for j in range(base.shape[1])
        }
        for e in n.inputs(name):
            v = n.values[e[0]][e[1], e[2]]
            for x in (v + 0.37 + 0.1 * abs(v), -v - 0.53):
                y = n.run(name, {e: x})
                if y is None or y.shape != base.shape:
                    continue
                with np.errstate(invalid="ignore"):
                    moved = ~np.isclose(y, base, rtol=1e-9, atol=1e-12, equal_nan=True)
                for i, j in zip(*np.nonzero(moved), strict=True):
                    out[(int(i), int(j))].add(e)
        return out

    def copies(self, e: Entry) -> set[Entry]:
        """Every entry joined to ``e`` by a chain of copies, either way."""
        seen, todo = {e}, [e]
        while todo:
            x = todo.pop()
            linked = []
            deps = self.deps(x[0])
            if deps is not None:
                ds = deps[(x[1], x[2])]
                if len(ds) == 1:
                    (s,) = ds
                    if self._equal(x, s):
                        linked.append(s)
            for c in self.nodes.consumers(x[0]):
                cd = self.deps(c)
                if cd is None:
                    continue
                for (i, j), ds in cd.items():
                    if ds == {x} and self._equal((c, i, j), x):
                        linked.append((c, i, j))
            for y in linked:
                if y not in seen:
                    seen.add(y)
                    todo.append(y)
        return seen

    def chain(self, e: Entry) -> set[Entry]:
        """Every entry joined to ``e`` by one-entry links, either way: an output that moves
        with one input entry besides the file's numbers (``0.1·g``, then ``that/0.1``)."""

        def known(x: Entry) -> bool:
            return self.nodes.on_sheet(x[0]) or not self.nodes.args(x[0])

        def one(x: Entry) -> Entry | None:
            deps = self.deps(x[0])
            rest = [] if deps is None else [s for s in deps[(x[1], x[2])] if not known(s)]
            return rest[0] if len(rest) == 1 else None

        seen, todo = {e}, [e]
        while todo:
            x = todo.pop()
            linked = [s] if (s := one(x)) is not None else []
            for c in self.nodes.consumers(x[0]):
                cd = self.deps(c)
                if cd is None:
                    continue
                linked += [
                    (c, i, j) for (i, j), ds in cd.items() if x in ds and one((c, i, j)) == x
                ]
            for y in linked:
                if y not in seen:
                    seen.add(y)
                    todo.append(y)
        return seen

    def _equal(self, a: Entry, b: Entry) -> bool:
        va = self.nodes.values[a[0]][a[1], a[2]]
        vb = self.nodes.values[b[0]][b[1], b[2]]
        return bool(np.isclose(va, vb, rtol=1e-12, atol=1e-15))

    def gradients(
        self, name: str, outs: list[tuple[int, int]], shift: float = 0.0
    ) -> np.ndarray | None:
        """Central differences of ``outs`` w.r.t. every finite input entry of the node.

        With ``shift``, at inputs moved off the file's point by a seeded random amount
        of that relative size (a relation that holds whatever the inputs holds there
        too; a coincidence of this one point does not).
        """
        ins = self.nodes.inputs(name)
        if not ins:
            return None
        rng = np.random.default_rng(7)
        at = {}
        for e in ins:
            v = self.nodes.values[e[0]][e[1], e[2]]
            at[e] = v + shift * max(1.0, abs(v)) * rng.uniform(-1, 1)
        g = np.zeros((len(outs), len(ins)))
        for k, e in enumerate(ins):
            v = at[e]
            h = 1e-6 * max(1.0, abs(v))
            up = self.nodes.run(name, {**at, e: v + h})
            down = self.nodes.run(name, {**at, e: v - h})
            if up is None or down is None:
                return None
            for r, (i, j) in enumerate(outs):
                g[r, k] = (up[i, j] - down[i, j]) / (2 * h)
        return g


def _in_span(target: np.ndarray, basis: np.ndarray) -> bool:
    """Whether ``target`` is a combination of ``basis``'s rows (and is not zero: an entry
    that does not move with the inputs, such as a ReLU's 0, is not determined by others)."""
    if (
        float(np.linalg.norm(target)) < 1e-9
        or basis.size == 0
        or not np.all(np.isfinite(basis))
        or not np.all(np.isfinite(target))
    ):
        return False
    scale = max(1e-12, float(np.linalg.norm(target)))
    coef, *_ = np.linalg.lstsq(basis.T, target, rcond=None)
    return float(np.linalg.norm(basis.T @ coef - target)) < 1e-5 * scale


# ----------------------------------------------------------------------------- the search


@dataclass
class Sheet:
    d: spec.Derivation
    blanks: list[E.Blank]
    visible: set[Entry]  # entries whose number the sheet shows
    shown_labels: set[str]  # claims the sheet shows (not left out)
    lines: dict[str, str]  # displayed arithmetic as shown, by label


def _exercise(path: Path, seed: int) -> tuple[spec.Derivation, S.Exercise] | None:
    d = spec.load(path)
    # Where --fresh does not support the model, a fresh choice of blanks instead.
    with contextlib.suppress(FreshError):
        _, d = fresh(path.read_text(), d, seed)
    ev = Evaluator(d)
    trace = ev.exact_trace()
    try:
        blanks = E.choose(d, trace, count=BLANKS, seed=seed)
    except E.ExerciseError:
        try:
            blanks = E.choose(d, trace, count=len(E.printed_entries(d, trace)) // 2, seed=seed)
        except E.ExerciseError:
            return None  # nothing can be blanked (3-D steps only)
    return d, S.Exercise(d, trace, E.key(d, ev, blanks), seed, True)


def _read(ex: S.Exercise, tables: dict[str, list[str | None]], texts: dict[str, str]) -> Sheet:
    d, trace = ex.derivation, ex.trace
    visible: set[Entry] = set()
    by_label = {c.label: c for c in d.claims}
    for c, pairs in step_prints(d.claims, trace):
        cells = tables.get(c.label)
        if not cells:
            continue
        assert len(cells) == len(pairs), c.label
        for ((i, j), _), cell in zip(pairs, cells, strict=True):
            if _number(cell) is not None and len((i, j)) == 2:
                visible.add((c.step, i, j))
    shown = {lab for lab in tables if "(left out" not in texts.get(lab, "")}
    lines = {lab: t for lab, t in texts.items() if by_label[lab].expression is not None}
    return Sheet(d, [k.blank for k in ex.key], visible, shown, lines)


def chain_rules(nodes: Nodes, rel: Relations) -> list[tuple[str, str, Entry, set[Entry]]]:
    """The chain rule between gradient steps, found by differencing one op.

    For ``n = grad(y, x)`` whose ``x`` is read on the way to ``y`` only by ``c``, with the
    sheet's ``g = grad(y, c)``: ``n[i, j] = Σ_k g[k]·∂c[k]/∂x[i, j]``. Each
    ``(n, g, n's entry, the g entries it reads)``; the Jacobian itself needs ``c``'s inputs.
    """
    grads = {}
    for node in nodes.graph:
        if not node.unroll and getattr(node.op, "name", "") == "grad":
            grads[(node.params["y"], node.params["x"])] = node
    out = []
    for (y, x), node in grads.items():
        users = [c for c in node.params["nodes"] if x in c.args]
        if len(users) != 1 or (y, users[0].name) not in grads or x not in nodes.values:
            continue
        c = users[0]
        g = grads[(y, c.name)].name
        if c.name not in nodes.values or g not in nodes.values or node.name not in nodes.values:
            continue
        xs = nodes.values[x]
        for i in range(xs.shape[0]):
            for j in range(xs.shape[1]):
                v = xs[i, j]
                h = 1e-6 * max(1.0, abs(v))
                up = nodes.run(c.name, {(x, i, j): v + h})
                down = nodes.run(c.name, {(x, i, j): v - h})
                if up is None or down is None:
                    continue
                jac = (up - down) / (2 * h)
                reads = {
                    (g, int(a), int(b))
                    for a, b in zip(*np.nonzero(np.abs(jac) > 1e-9), strict=True)
                }
                if reads:
                    out.append((node.name, c.name, (node.name, i, j), reads))
    return out


def leaks(sheet: Sheet, nodes: Nodes, rel: Relations) -> list[str]:
    """Every way the sheet gives a blank away, in words (empty: none)."""
    out = []
    d = sheet.d
    rules = chain_rules(nodes, rel)

    def visible(x: Entry) -> bool:
        if x in sheet.visible or nodes.on_sheet(x[0]):
            return True  # printed, or one of the file's numbers (the model section lists them)
        return any(y in sheet.visible or nodes.on_sheet(y[0]) for y in rel.copies(x))

    for b in sheet.blanks:
        e = (b.step, *b.index)
        cls = rel.copies(e)
        for x in cls:
            if x in sheet.visible:
                out.append(f"{b.id} {e}: its value is printed as {x}")
        for x in rel.chain(e) - cls:
            if x in sheet.visible and rel._equal(x, e):
                out.append(f"{b.id} {e}: its value is printed as {x} (through one-entry links)")
        for x in cls:
            for c in nodes.consumers(x[0]):
                deps = rel.deps(c)
                if deps is None:
                    continue
                for (i, j), ds in deps.items():
                    y = (c, i, j)
                    if x not in ds or y in cls or not visible(y):
                        continue
                    if all(o in cls or visible(o) for o in ds):
                        out.append(f"{b.id} {e}: {y} undoes one step to it (from {sorted(ds)})")
        for x in cls:
            name = x[0]
            shape = nodes.values.get(name, np.zeros((0, 0))).shape
            if not nodes.args(name) or len(shape) != 2:
                continue
            for line in (
                [(x[1], k) for k in range(shape[1])],
                [(k, x[2]) for k in range(shape[0])],
            ):
                seen = [ij for ij in line if ij != (x[1], x[2]) and visible((name, *ij))]
                if not seen:
                    continue
                outs = [(x[1], x[2]), *seen]
                g = rel.gradients(name, outs)
                if g is None or not _in_span(g[0], g[1:]):
                    continue
                g = rel.gradients(name, outs, shift=1e-2)
                if g is not None and _in_span(g[0], g[1:]):
                    out.append(f"{b.id} {e}: {name} entries {seen} determine {x}")
        for _n, c, y, reads in rules:
            if not any(x in reads for x in cls) or y in cls or not visible(y):
                continue
            others = reads | set(nodes.inputs(c))
            if all(o in cls or visible(o) for o in others):
                out.append(f"{b.id} {e}: {y} gives it back by the chain rule through {c}")
        for c in d.claims:
            if c.reduce is None or c.label not in sheet.shown_labels or c.step != b.step:
                continue
            shape = nodes.values[c.step].shape
            if any((c.step, *ij) in cls for row in selection(c, shape) for ij in row):
                out.append(f"{b.id} {e}: the {c.reduce} printed as {c.label!r} covers it")
        for c in d.claims:
            if c.expression is None or c.label not in sheet.lines:
                continue
            refs = set(c.stands_for.values())
            if any(f"{x[0]}[{x[1]}, {x[2]}]" in refs for x in cls):
                out.append(f"{b.id} {e}: the displayed line {c.label!r} stands for it")
    return out


CASES = [pytest.param(p, seed, id=f"{p.stem}-{seed}") for p in DERIVATIONS for seed in SEEDS]


@pytest.mark.parametrize(("path", "seed"), CASES)
def test_no_sheet_gives_a_blank_away(path: Path, seed: int) -> None:
    made = _exercise(path, seed)
    if made is None:
        pytest.skip("nothing in this derivation can be blanked (its steps are 3-D)")
    d, ex = made
    page = S.sheet_html(ex)
    doc = S.sheet_tex(ex)
    tables, texts = html_tables(page, [c.label for c in d.claims])
    from_tex = tex_tables(doc, [c.label for c in d.claims])
    numbers = {k: [_number(c) for c in v] for k, v in tables.items() if v}
    assert numbers == {k: [_number(c) for c in v] for k, v in from_tex.items() if v}
    assert any(c is None for v in tables.values() for c in v)  # the blanks are there
    nodes = Nodes.of(d)
    problems = leaks(_read(ex, tables, texts), nodes, Relations(nodes))
    assert not problems, "\n".join(problems[:40])


def grid_sheet(ex: S.Exercise) -> Sheet:
    """What the grid worksheet shows: every number in its grids (printed, given, or a value
    the worked example does not print, given in grey), by the entry it stands for."""
    from symtf.teach.grid import panels

    visible: set[Entry] = set()
    boxes = 0
    for p in panels(ex):
        for g in (p.result, p.left, p.top, *p.inputs):
            if g is None or not g.step:
                continue  # a weight of the model: the file's numbers
            for r, row in enumerate(g.cells):
                for c, cell in enumerate(row):
                    boxes += cell.kind == "blank"
                    if cell.kind in ("number", "computed") and _number(cell.text) is not None:
                        visible.add((g.step, c, r) if g.flipped else (g.step, r, c))
    assert boxes, "the blanks are there"
    return Sheet(ex.derivation, [k.blank for k in ex.key], visible, set(), {})


#: The grid worksheet reads the same choices of blanks: its first seeds are enough to show
#: that the values it adds (those the worked example does not print) give nothing away.
GRID_CASES = [c for c in CASES if c.values[1] < 3]


@pytest.mark.parametrize(("path", "seed"), GRID_CASES)
def test_no_grid_worksheet_gives_a_blank_away(path: Path, seed: int) -> None:
    made = _exercise(path, seed)
    if made is None:
        pytest.skip("nothing in this derivation can be blanked (its steps are 3-D)")
    d, ex = made
    try:
        sheet = grid_sheet(ex)
    except AssertionError:
        pytest.skip("the grid draws none of these blanks (their steps are not matrices)")
    nodes = Nodes.of(d)
    problems = leaks(sheet, nodes, Relations(nodes))
    assert not problems, "\n".join(problems[:40])
