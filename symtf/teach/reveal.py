"""What on a sheet would give a blank away, read from the step graph.

A blank is one entry of one step. Printing it anywhere else, or printing a
number from which one step of the computation recovers it, gives the answer
away. Every relation here is read from a node of the step graph
(:mod:`symtf.graph`): its op, evaluated once on symbols standing for its
inputs' entries, says which input entries each output entry depends on; the
op itself (softmax, LayerNorm, a linear map) says which constraints its
outputs satisfy whatever the inputs are.

Three kinds of giveaway are hidden:

* **copies** — an output entry that is one input entry unchanged (a
  concatenation, a renaming node, a transpose, an identity projection, a
  ReLU of a positive number), in either direction and along chains of copies:
  every entry of the blank's copy class is shown as the blank;
* **inverses** — an output entry that depends on the blank, all of whose
  other inputs are on the sheet (``S/√d_k`` gives ``S``; ``max(0, x) = 0``
  gives the sign of ``x``; a row's printed mean gives its one missing entry);
* **constraints** — an output row that satisfies a relation whatever the
  inputs (a softmax row sums to 1, a centred or LayerNorm row to 0, the
  columns of a wide linear map are dependent): when the blank is the one
  entry of such a relation missing from the sheet, one more entry of it is
  hidden.

"Determines in one step" is one equation of one node in which the blank is
the only quantity the sheet does not show. Chains of such steps through
entries that are themselves hidden are not followed.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from typing import Any

import sympy

from symtf.backends import ExactBackend
from symtf.graph import blocks
from symtf.graph.core import Graph, Node
from symtf.tensor import Tensor, from_native, to_native
from symtf.trace import Trace

#: An entry of a 2-D step: ``(step, i, j)``.
Entry = tuple[str, int, int]

#: Exceptions an op may raise on symbolic inputs (a sign it cannot decide, a shape it
#: cannot read): the node's relations are then taken to be dense.
_SYMBOLIC_FAILURES = (
    ArithmeticError,
    AttributeError,
    IndexError,
    LookupError,
    TypeError,
    ValueError,
)


def _symbol(step: str, i: int, j: int) -> sympy.Symbol:
    return sympy.Symbol(f"{step}\x00{i}\x00{j}", real=True)


def _entry_of(s: sympy.Symbol) -> Entry:
    step, i, j = s.name.split("\x00")
    return step, int(i), int(j)


@dataclass
class _Level:
    """One node's output entries as expressions of its inputs' entries."""

    cells: list[list[sympy.Expr]] | None  # None: the op did not evaluate on symbols

    def deps(self, i: int, j: int) -> frozenset[Entry] | None:
        if self.cells is None:
            return None
        return frozenset(_entry_of(s) for s in self.cells[i][j].free_symbols)


@dataclass
class Relations:
    """The relations between the entries of a derivation's steps.

    Args:
        graph: The derivation's step graph (:func:`symtf.graph.pipeline.build`).
        trace: Its exact trace.
    """

    graph: Graph
    trace: Trace
    _levels: dict[str, _Level] = field(default_factory=dict)
    _consumers: dict[str, list[str]] = field(default_factory=dict)

    def __post_init__(self) -> None:
        for name in self.trace:
            for a in self.args(name):
                self._consumers.setdefault(a, []).append(name)

    # ------------------------------------------------------------------ structure

    def _node(self, name: str) -> Node | None:
        n = self.graph.get(name)
        return None if n is None or n.unroll else n

    def args(self, name: str) -> tuple[str, ...]:
        """The steps a step's value is computed from (the graph's args; the trace's inputs
        for nodes emitted while decoding)."""
        n = self._node(name)
        args = n.args if n is not None else self.trace[name].inputs
        return tuple(a for a in args if a in self.trace)

    def shape(self, name: str) -> tuple[int, int] | None:
        """The shape of a 2-D step, else ``None``."""
        if name not in self.trace:
            return None
        s = self.trace.shape(name)
        return (s[0], s[1]) if s is not None and len(s) == 2 else None

    def is_given(self, name: str) -> bool:
        """Whether a step holds the file's numbers or a setting (it reads no other step)."""
        return not self.args(name)

    def consumers(self, name: str) -> list[str]:
        """The steps that read ``name``."""
        return self._consumers.get(name, [])

    # ------------------------------------------------------------------ one level

    def level(self, name: str) -> _Level:
        """``name``'s entries as expressions in symbols for its inputs' entries (cached)."""
        if name not in self._levels:
            self._levels[name] = _Level(self._evaluate(name))
        return self._levels[name]

    def _evaluate(self, name: str) -> list[list[sympy.Expr]] | None:
        node = self._node(name)
        if node is None or self.shape(name) is None:
            return None
        mats = []
        for a in node.args:
            v = self.trace.value(a)
            if not isinstance(v, sympy.MatrixBase):
                return None
            mats.append(
                sympy.ImmutableMatrix(
                    v.rows,
                    v.cols,
                    lambda i, j, a=a, v=v: (
                        v[i, j]
                        if v[i, j] in (sympy.S.NegativeInfinity, sympy.oo)
                        else _symbol(a, i, j)
                    ),
                )
            )
        xp = ExactBackend(max_ops=10**9)
        try:
            if node.tensors:
                out = self._tensor_op(xp, node, mats)
            else:
                out = node.op(xp, *mats, **node.params)
        except _SYMBOLIC_FAILURES:
            return None
        except Exception as e:  # symtf's own errors: an undecidable sign, a model error
            from symtf.errors import SymtfError

            if isinstance(e, SymtfError):
                return None
            raise
        if not isinstance(out, sympy.MatrixBase) or out.shape != self.shape(name):
            return None
        return [[out[i, j] for j in range(out.cols)] for i in range(out.rows)]

    @staticmethod
    def _tensor_op(xp: Any, node: Node, mats: list[sympy.ImmutableMatrix]) -> Any:
        """A user step on symbols; a one-row input is tried as 2-D, then as a vector."""
        attempts = [[None] * len(mats), [(m.cols,) if m.rows == 1 else None for m in mats]]
        last: Exception | None = None
        for shapes in attempts:
            try:
                values = [from_native(xp, m, s) for m, s in zip(mats, shapes, strict=True)]
                result = node.op(xp, *values, **node.params)
                return to_native(xp, result) if isinstance(result, Tensor) else result
            except _SYMBOLIC_FAILURES as e:
                last = e
        assert last is not None
        raise last

    def deps(self, e: Entry) -> frozenset[Entry] | None:
        """The input entries ``e`` depends on (``None``: not known, take every input entry)."""
        return self.level(e[0]).deps(e[1], e[2])

    def dense_deps(self, e: Entry) -> frozenset[Entry]:
        """Every entry of every input of ``e``'s step (when the exact ones are not known)."""
        out = set()
        for a in self.args(e[0]):
            shape = self.shape(a)
            if shape is not None:
                out |= {(a, i, j) for i in range(shape[0]) for j in range(shape[1])}
        return frozenset(out)

    # ------------------------------------------------------------------ copies

    def copy_source(self, e: Entry) -> Entry | None:
        """The one input entry ``e`` equals, if ``e`` is a copy of it."""
        lvl = self.level(e[0])
        if lvl.cells is None:
            return None
        cell = lvl.cells[e[1]][e[2]]
        deps = list(cell.free_symbols)
        if len(deps) != 1:
            return None
        src = _entry_of(deps[0])
        if cell == deps[0] or self._same_value(e, src):
            return src
        return None

    def _same_value(self, a: Entry, b: Entry) -> bool:
        defs = getattr(self.trace.backend, "defs", {})

        def chase(x: sympy.Expr) -> sympy.Expr:
            for _ in range(64):
                if isinstance(x, sympy.Symbol) and x in defs:
                    x = defs[x]
                else:
                    break
            return x

        va = self.trace.value(a[0])[a[1], a[2]]
        vb = self.trace.value(b[0])[b[1], b[2]]
        return va == vb or chase(va) == chase(vb)

    def copies_of(self, e: Entry) -> set[Entry]:
        """The copy class of ``e``: every entry joined to it by copies, either way."""
        seen = {e}
        todo = [e]
        while todo:
            x = todo.pop()
            linked: list[Entry] = []
            src = self.copy_source(x)
            if src is not None:
                linked.append(src)
            for c in self.consumers(x[0]):
                shape = self.shape(c)
                if shape is None:
                    continue
                for y in self._outputs_reading(c, x, shape):
                    if self.copy_source(y) == x:
                        linked.append(y)
            for y in linked:
                if y not in seen:
                    seen.add(y)
                    todo.append(y)
        return seen

    def _outputs_reading(self, step: str, x: Entry, shape: tuple[int, int]) -> Iterator[Entry]:
        lvl = self.level(step)
        if lvl.cells is None:
            yield from ((step, i, j) for i in range(shape[0]) for j in range(shape[1]))
            return
        s = _symbol(*x)
        for i, row in enumerate(lvl.cells):
            for j, cell in enumerate(row):
                if s in cell.free_symbols:
                    yield (step, i, j)

    def readers(self, x: Entry) -> Iterator[tuple[Entry, frozenset[Entry] | None]]:
        """Every entry computed from ``x`` in one step, with its other inputs (``None``:
        the exact inputs are not known)."""
        for c in self.consumers(x[0]):
            shape = self.shape(c)
            if shape is None:
                continue
            exact = self.level(c).cells is not None
            for y in self._outputs_reading(c, x, shape):
                yield y, (self.deps(y) if exact else None)

    def is_given_entry(self, e: Entry) -> bool:
        """Whether ``e`` is one of the file's numbers or a setting, or a copy of one."""
        return any(self.is_given(x[0]) for x in self.copies_of(e))

    # ------------------------------------------------------------------ constraints

    def constraints(self, e: Entry) -> list[frozenset[Entry]]:
        """The relations among ``e``'s step's entries, whatever its inputs, that involve ``e``.

        Each is the set of entries one equation ties together (``e`` among them).
        """
        step, i, j = e
        shape = self.shape(step)
        node = self._node(step)
        if shape is None or node is None:
            return []
        n, m = shape
        row = frozenset((step, i, k) for k in range(m))
        col = frozenset((step, k, j) for k in range(n))
        op = node.op
        if op is blocks.softmax_op:
            return [col if node.params.get("axis") == "columns" else row]
        if op in (blocks.normalize_rows_op, blocks.centered_op):
            return [row]
        if op is blocks.normed_op:
            return self._norm_constraints(node, e, n, m)
        if op is blocks.linear_op:
            return self._linear_constraints(node, e, m)
        if op is blocks.zero_future_op:
            return []
        if node.tensors:
            return self._sum_constraints(e, n, m)
        return []

    def _norm_constraints(self, node: Node, e: Entry, n: int, m: int) -> list[frozenset[Entry]]:
        step, i, _ = e
        gamma = node.params["gamma"]
        live = frozenset((step, i, k) for k in range(m) if gamma[0, k] != 0)
        if e not in live:
            return []
        src = node.args[0]
        src_node = self._node(src)
        centred = src_node is not None and src_node.op is blocks.centered_op
        if centred:
            return [live]  # sum_k (y_k - beta_k)/gamma_k = 0
        eps = self._eps(node)
        return [live] if eps == 0 else []  # RMSNorm, eps = 0: sum_k ((y_k - beta_k)/gamma_k)^2 = d

    def _eps(self, node: Node) -> Any:
        std = self._node(node.args[1]) if len(node.args) > 1 else None
        return None if std is None else std.params.get("eps")

    def _linear_constraints(self, node: Node, e: Entry, m: int) -> list[frozenset[Entry]]:
        step, i, j = e
        w = sympy.Matrix(ExactBackend().matrix(node.params["w"]))
        if node.params.get("transposed"):
            w = w.T
        if w.cols != m or w.cols <= w.rank():
            return []
        out = []
        for v in w.nullspace():  # sum_k v_k y_k = sum_k v_k b_k for every input
            if v[j] != 0:
                out.append(frozenset((step, i, k) for k in range(m) if v[k] != 0))
        return out

    def _sum_constraints(self, e: Entry, n: int, m: int) -> list[frozenset[Entry]]:
        """A user step's rows or columns whose sum is the same for every input."""
        lvl = self.level(e[0])
        if lvl.cells is None:
            return []
        step, i, j = e
        out = []
        for cells in (
            [((step, i, k), lvl.cells[i][k]) for k in range(m)],
            [((step, k, j), lvl.cells[k][j]) for k in range(n)],
        ):
            total = sum((c for _, c in cells), sympy.S.Zero)
            if total.free_symbols and sympy.cancel(sympy.together(total)).free_symbols:
                continue
            if len(cells) > 1:
                out.append(frozenset(x for x, _ in cells))
        return out


@dataclass(frozen=True)
class Hiding:
    """What a sheet leaves out.

    Attributes:
        boxes: Every entry shown as a blank, with its blank's id (the blank and its copies).
        hidden: Entries left out because they would give a blank away in one step.
        given: Blank ids whose value is one of the file's numbers (nothing to work out).
    """

    boxes: dict[Entry, str]
    hidden: frozenset[Entry]
    given: frozenset[str] = frozenset()

    def covered(self) -> dict[Entry, str]:
        """Every entry left off the sheet: blank boxes by id, hidden entries by ``""``."""
        return {**{e: "" for e in self.hidden}, **self.boxes}


def hide(rel: Relations, blanks: Iterable[tuple[str, Entry]], printed: Iterable[Entry]) -> Hiding:
    """Decide what the sheet leaves out so that no blank can be read off it.

    Args:
        rel: The derivation's relations.
        blanks: ``(id, entry)`` of each blank.
        printed: Every entry the sheet would print (the claims' tables).
    """
    shown = set(printed)
    boxes: dict[Entry, str] = {}
    given_ids = set()
    classes: list[tuple[str, set[Entry]]] = []
    for bid, e in blanks:
        cls = rel.copies_of(e)
        classes.append((bid, cls))
        if any(rel.is_given(x[0]) for x in cls):
            given_ids.add(bid)
        for x in cls:
            boxes.setdefault(x, bid)
    hidden: set[Entry] = set()

    def visible(x: Entry) -> bool:
        if x in boxes or x in hidden:
            return False
        if x in shown or rel.is_given(x[0]):
            return True
        src = rel.copy_source(x)
        return src is not None and visible(src)

    for _bid, cls in classes:
        for x in sorted(cls):
            for y, others in rel.readers(x):
                if y in cls or not visible(y):
                    continue
                if others is None or all(o in cls or visible(o) for o in others):
                    hidden.update(rel.copies_of(y))
    for _bid, cls in classes:
        for x in sorted(cls):
            for group in rel.constraints(x):
                if any(g != x and g in cls for g in group):
                    continue  # a copy of the blank itself: already hidden
                rest = [g for g in group if g not in cls]
                if rest and all(visible(g) for g in rest):
                    hidden.update(rel.copies_of(max(rest, key=lambda g: (g in shown, g))))
    return Hiding(boxes, frozenset(hidden - set(boxes)), frozenset(given_ids))


__all__ = ["Entry", "Hiding", "Relations", "hide"]
