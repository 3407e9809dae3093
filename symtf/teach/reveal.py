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

What an entry depends on is read by :mod:`symtf.teach.dependence`; the relations a step's
outputs satisfy whatever the inputs are :mod:`symtf.teach.constraints`.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field
from typing import Any

import sympy

from symtf.backends import ExactBackend
from symtf.errors import SymtfError
from symtf.graph.core import Graph, Node
from symtf.teach.constraints import POINT_BITS, Constraint, constant_in_inputs, linear_gradients
from symtf.teach.dependence import SYMBOLIC_FAILURES, Entry, Level, SymbolBackend, symbol
from symtf.tensor import Tensor, from_native, to_native
from symtf.trace import Trace

#: Ops whose values are the file's numbers or its settings: embeddings, given tensors and
#: positions, token ids, head width and score divisor.
_FILE_OPS = frozenset({"given", "const", "embed", "ids", "divisor"})

#: Ops whose value is a reverse-mode sweep over the graph (``grad``, ``jacobian``).
_GRADIENT_OPS = frozenset({"grad", "jacobian"})


@dataclass
class Relations:
    """The relations between the entries of a derivation's steps.

    Args:
        graph: The derivation's step graph (:func:`symtf.graph.pipeline.build`).
        trace: Its exact trace.
    """

    graph: Graph
    trace: Trace
    _levels: dict[str, Level] = field(default_factory=dict)
    _copies: dict[Entry, frozenset[Entry]] = field(default_factory=dict)
    _consumers: dict[str, list[str]] = field(default_factory=dict)
    _constraints: dict[Entry, list[Constraint]] = field(default_factory=dict)
    _lines: dict[tuple[str, str, int], Constraint | None] = field(default_factory=dict)
    _hidings: dict[tuple[tuple[tuple[str, Entry], ...], frozenset[Entry]], Hiding] = field(
        default_factory=dict
    )
    _chain_rules: dict[str, tuple[str, ...]] = field(default_factory=dict)
    _chain_readers: dict[str, list[str]] = field(default_factory=dict)
    _chain_levels: dict[str, Level] = field(default_factory=dict)
    _grad_steps: dict[tuple[str, str], str] = field(default_factory=dict)

    def __post_init__(self) -> None:
        for name in self.trace:
            for a in self.args(name):
                self._consumers.setdefault(a, []).append(name)
        self._find_chain_rules()

    # ------------------------------------------------------------------ the chain rule

    def _find_chain_rules(self) -> None:
        """The gradient steps that another gradient step gives in one VJP.

        ``dW = grad(L, W)`` where ``W`` is read on the way to ``L`` only by ``z`` and the
        sheet has ``dz = grad(L, z)``: ``dW`` is ``z``'s VJP of ``dz`` (``Xᵀ·dz``), one
        step from ``dz`` and ``z``'s inputs. Each such equation's values (the cotangent
        steps, and the inputs and outputs of the ops whose VJPs are taken) are recorded.
        """
        grads = self._grad_steps
        for n in self.graph:
            if not n.unroll and _op_name(n) == "grad" and n.name in self.trace:
                grads[(n.params["y"], n.params["x"])] = n.name
        for (y, x), name in grads.items():
            node = self._node(name)
            assert node is not None
            users = [c for c in node.params["nodes"] if x in c.args]
            if not users or any(
                (c.name != y and (y, c.name) not in grads) or c.name not in self.trace
                for c in users
            ):
                continue
            values = [grads[(y, c.name)] for c in users if c.name != y]
            for c in users:
                values += [*c.args, c.name]
            values = list(dict.fromkeys(v for v in values if v in self.trace))
            self._chain_rules[name] = tuple(values)
            for v in values:
                self._chain_readers.setdefault(v, []).append(name)

    def _chain_level(self, name: str) -> Level:
        """``name``'s entries by the chain rule, as expressions in symbols for its values."""
        if name not in self._chain_levels:
            values = self._chain_rules[name]
            self._chain_levels[name] = Level(
                self._chain_cells(name, values),
                frozenset(s for s, v in self._point(values).items() if v == 0),
                self._point(values),
            )
        return self._chain_levels[name]

    def _point(self, names: Iterable[str]) -> dict[sympy.Symbol, sympy.Expr]:
        return {
            symbol(a, i, j): v[i, j]
            for a in names
            if isinstance(v := self.trace.value(a), sympy.MatrixBase)
            for i in range(v.rows)
            for j in range(v.cols)
        }

    def _chain_cells(self, name: str, values: tuple[str, ...]) -> list[list[sympy.Expr]] | None:
        from symtf.graph.autodiff import _plus, _Tape

        node = self._node(name)
        assert node is not None
        y, x = node.params["y"], node.params["x"]
        xp = SymbolBackend()
        env: dict[str, Any] = {}
        for a in values:
            v = self.trace.value(a)
            if not isinstance(v, sympy.MatrixBase):
                return None
            held = self.is_given(a)  # the file's numbers stay numbers (one_hot of targets)
            m = sympy.ImmutableMatrix(
                v.rows,
                v.cols,
                lambda i, j, a=a, v=v, held=held: (
                    v[i, j]
                    if held or v[i, j] in (sympy.S.NegativeInfinity, sympy.oo)
                    else symbol(a, i, j)
                ),
            )
            env[a] = from_native(xp, m, self.trace.true_shape(a))
        try:
            total: Tensor | None = None
            for c in (c for c in node.params["nodes"] if x in c.args):
                if c.name == y:
                    g = from_native(xp, sympy.ImmutableMatrix([[1]]), self.trace.true_shape(y))
                else:
                    g = env[self._grad_steps[(y, c.name)]]
                got = _Tape(xp, c, env).back(g).get(x)
                if got is None:
                    continue
                total = got if total is None else _plus(xp, total, got)
        except (*SYMBOLIC_FAILURES, SymtfError):
            return None
        if total is None:
            return None
        out = to_native(xp, total)
        if not isinstance(out, sympy.MatrixBase) or out.shape != self.shape(name):
            return None
        return [[out[i, j] for j in range(out.cols)] for i in range(out.rows)]

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
        """Whether a step holds the file's numbers or a setting (the sheet's model section).

        A step computed from settings alone (a sinusoidal table) is not given.
        """
        node = self._node(name)
        if node is None:
            return not self.trace[name].inputs
        return not node.args and (_op_name(node) in _FILE_OPS or "given" in node.params)

    def consumers(self, name: str) -> list[str]:
        """The steps that read ``name``."""
        return self._consumers.get(name, [])

    # ------------------------------------------------------------------ one level

    def level(self, name: str) -> Level:
        """``name``'s entries as expressions in symbols for its inputs' entries (cached)."""
        if name not in self._levels:
            zeros = frozenset(
                symbol(a, i, j)
                for a in self.args(name)
                if isinstance(v := self.trace.value(a), sympy.MatrixBase)
                for i in range(v.rows)
                for j in range(v.cols)
                if v[i, j] == 0
            )
            point = {
                symbol(a, i, j): self._number(v[i, j])
                for a in self.args(name)
                if isinstance(v := self.trace.value(a), sympy.MatrixBase)
                for i in range(v.rows)
                for j in range(v.cols)
            }
            self._levels[name] = Level(self._evaluate(name), zeros, point)
        return self._levels[name]

    def _number(self, e: Any) -> Any:
        """An input's value as a number :func:`differs` can evaluate at.

        The exact trace keeps a value as a DAG: an entry of a concatenation is the symbol of
        the entry it copies (``H_2[2,0]``), defined in the backend's ``defs``; written out in
        full, such a value can be a tree too large to evaluate. It is replaced by the
        midpoint of its ball at :data:`POINT_BITS` bits: :func:`differs` only looks for a
        point near the inputs' values (a constant expression is the same number at every
        point), never decides with it.
        """
        defs = getattr(self.trace.backend, "defs", None)
        if not defs or not isinstance(e, sympy.Basic) or not any(s in defs for s in e.free_symbols):
            return e
        from symtf.backends.certify import exact_fraction

        try:
            mid = exact_fraction(self.trace.backend.ball(e, POINT_BITS).mid())
        except (SymtfError, TypeError, ValueError, ArithmeticError):
            return e
        return sympy.Rational(mid.numerator, mid.denominator)

    def _evaluate(self, name: str) -> list[list[sympy.Expr]] | None:
        node = self._node(name)
        if node is None or self.shape(name) is None:
            return None
        cells = self._on_symbols(node, hold=frozenset())
        if cells is None:
            # An op that needs numbers where the file gives them (one_hot of the targets in
            # a cross-entropy's VJP): the file's numbers stay numbers. The sheet shows them,
            # so no relation through them is lost.
            held = frozenset(a for a in node.args if self.is_given(a))
            if held:
                cells = self._on_symbols(node, hold=held)
        return cells

    def _on_symbols(self, node: Node, hold: frozenset[str]) -> list[list[sympy.Expr]] | None:
        """``node``'s op on symbols for its inputs' entries (those of ``hold`` kept as values).

        A ``grad``/``jacobian`` node is its recorded op too: a reverse sweep through the
        VJPs of the ops on its path, with the path's values as symbols. Each entry is then
        the one-step equation the sweep computes, in the values its VJPs read (``dQ`` from
        ``S``, ``K``, ``V`` and ``dO``), never expanded.
        """
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
                        if a in hold or v[i, j] in (sympy.S.NegativeInfinity, sympy.oo)
                        else symbol(a, i, j)
                    ),
                )
            )
        xp = SymbolBackend()
        shapes = None
        if _op_name(node) in _GRADIENT_OPS:  # the sweep reads each value at its true shape
            shapes = [self.trace.true_shape(a) for a in node.args]
        try:
            out = self._tensor_op(xp, node, mats, shapes)
        except (*SYMBOLIC_FAILURES, SymtfError):  # (an undecidable sign, a model error)
            return None
        if not isinstance(out, sympy.MatrixBase) or out.shape != self.shape(node.name):
            return None
        return [[out[i, j] for j in range(out.cols)] for i in range(out.rows)]

    @staticmethod
    def _tensor_op(
        xp: Any,
        node: Node,
        mats: list[sympy.ImmutableMatrix],
        shapes: list[tuple[int, ...] | None] | None = None,
    ) -> Any:
        """A node's op on symbols; a one-row input is tried as 2-D, then as a vector (or
        each input at ``shapes``)."""
        attempts: list[list[tuple[int, ...] | None]] = (
            [shapes]
            if shapes is not None
            else [[None] * len(mats), [(m.cols,) if m.rows == 1 else None for m in mats]]
        )
        last: Exception | None = None
        for shapes in attempts:
            try:
                values: list[Any] = [
                    from_native(xp, m, s) for m, s in zip(mats, shapes, strict=True)
                ]
                if getattr(node.op, "variadic", None) is not None:
                    values = [values]  # one argument takes every input (concat's heads)
                result = node.op(xp, *values, **node.params)
                return to_native(xp, result) if isinstance(result, Tensor) else result
            except SYMBOLIC_FAILURES as e:
                last = e
        assert last is not None
        raise last

    def deps(self, e: Entry) -> frozenset[Entry] | None:
        """The input entries ``e`` depends on (``None``: not known, take every input entry)."""
        return self.level(e[0]).deps(e[1], e[2])

    # ------------------------------------------------------------------ copies

    def copy_source(self, e: Entry) -> Entry | None:
        """The one input entry ``e`` equals, if ``e`` is a copy of it."""
        lvl = self.level(e[0])
        if lvl.cells is None:
            return None
        cell = lvl.cells[e[1]][e[2]]
        deps = lvl.deps(e[1], e[2]) or frozenset()
        if len(deps) != 1:
            return None
        (src,) = deps
        if cell == symbol(*src) or self._same_value(e, src):
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
        return bool(va == vb or chase(va) == chase(vb))

    def copies_of(self, e: Entry) -> frozenset[Entry]:
        """The copy class of ``e``: every entry joined to it by copies, either way (cached)."""
        if e not in self._copies:
            cls = frozenset(self._copy_class(e))
            for x in cls:
                self._copies[x] = cls
        return self._copies[e]

    def _copy_class(self, e: Entry) -> set[Entry]:
        copies = self._closure(e, self.copy_source)
        return copies | {y for y in self._chain(e) if self._same_value(y, e)}

    def _chain(self, e: Entry) -> set[Entry]:
        """Every entry joined to ``e`` by one-entry links, either way: an output that moves
        with one entry besides the file's numbers and settings (``m = β₁·0 + (1 − β₁)·dW``
        is ``dW`` scaled). A chain may come back to ``e``'s own value (Adam's ``m̂ = m/(1 − β₁)``
        is ``dW`` again): that entry prints the blank as surely as a copy does."""
        return self._closure(e, self._one_source)

    def _closure(self, e: Entry, source: Callable[[Entry], Entry | None]) -> set[Entry]:
        """Every entry joined to ``e`` by ``source`` links, either way: ``x``'s source, and
        each output whose source is ``x``. No entry of a step whose op did not evaluate on
        symbols has a source, so such steps are not searched."""
        seen = {e}
        todo = [e]
        while todo:
            x = todo.pop()
            src = source(x)
            linked = [] if src is None else [src]
            for c in self.consumers(x[0]):
                shape = self.shape(c)
                if shape is None or self.level(c).cells is None:
                    continue
                linked += [y for y in self._outputs_reading(c, x, shape) if source(y) == x]
            for y in linked:
                if y not in seen:
                    seen.add(y)
                    todo.append(y)
        return seen

    def _one_source(self, e: Entry) -> Entry | None:
        """The one entry ``e`` moves with besides the file's numbers and settings, if one."""
        deps = self.deps(e)
        if not deps:
            return None
        rest = [x for x in deps if not (self.is_given(x[0]) or not self.args(x[0]))]
        return rest[0] if len(rest) == 1 else None

    def _outputs_reading(self, step: str, x: Entry, shape: tuple[int, int]) -> Iterator[Entry]:
        lvl = self.level(step)
        if lvl.cells is None:
            yield from ((step, i, j) for i in range(shape[0]) for j in range(shape[1]))
            return
        s = symbol(*x)
        for i, row in enumerate(lvl.cells):
            for j, cell in enumerate(row):
                if s in cell.free_symbols and x in (lvl.deps(i, j) or ()):
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
        for c in self._chain_readers.get(x[0], []):
            # A gradient one VJP from another (dW from dz): its chain-rule equation.
            lvl = self._chain_level(c)
            shape = self.shape(c)
            if shape is None:
                continue
            s = symbol(*x)
            for i in range(shape[0]):
                for j in range(shape[1]):
                    if lvl.cells is None:
                        yield (c, i, j), None
                    elif s in lvl.cells[i][j].free_symbols and x in (lvl.deps(i, j) or ()):
                        yield (c, i, j), lvl.deps(i, j)

    def is_constant(self, e: Entry) -> bool:
        """Whether ``e`` does not move with its step's inputs (a masked weight's 0)."""
        return self.deps(e) == frozenset() and bool(self.args(e[0]))

    def is_given_entry(self, e: Entry) -> bool:
        """Whether ``e`` is one of the file's numbers or a setting, or a copy of one."""
        return any(self.is_given(x[0]) for x in self.copies_of(e))

    # ------------------------------------------------------------------ constraints

    def constraints(self, e: Entry) -> list[Constraint]:
        """The relations among ``e``'s step's entries, whatever its inputs, that involve ``e``.

        A softmax row gives one entry from the others; a LayerNorm row with ε = 0 two
        (its sum and its squares); a row of ``x·W`` whatever ``W``'s columns span.
        (Cached: every blank of a sheet, and every sheet of a derivation, asks again.)
        """
        if e not in self._constraints:
            self._constraints[e] = self._find_constraints(e)
        return self._constraints[e]

    def _find_constraints(self, e: Entry) -> list[Constraint]:
        step, i, j = e
        shape = self.shape(step)
        node = self._node(step)
        if shape is None or node is None:
            return []
        n, m = shape
        row = frozenset((step, i, k) for k in range(m))
        col = frozenset((step, k, j) for k in range(n))
        op = _op_name(node)
        if op == "softmax":
            return [Constraint(col if node.params.get("axis", -1) in (0, -2) else row, 1)]
        if op == "normalize_rows" or self._centred(node):
            return [Constraint(row, 1)]
        if op == "normalize":
            return self._norm_constraints(node, e, m)
        if op == "linear":
            return self._linear_constraints(node, e, m)
        if op == "step":
            return self._step_constraints(e, n, m)
        if op in _GRADIENT_OPS:
            # A gradient's rows and columns may obey relations whatever the inputs (through
            # a softmax a row sums to 0, through a LayerNorm a row sums to 0 and is
            # orthogonal to x̂, whose entries the sheet may show): those with coefficients
            # that are inputs are not derived, so each row and column is taken to have two,
            # and more where its entries are linear with dependent gradients (``X^T dz``
            # wider than ``X`` is tall).
            return [
                *self._step_constraints(e, n, m, sums=False),
                Constraint(row, 2),
                Constraint(col, 2),
            ]
        return []

    def _centred(self, node: Node | None) -> bool:
        """Whether ``node`` is ``x − mean(x)`` along the rows (LayerNorm's centred rows)."""
        if node is None or _op_name(node) != "sub" or len(node.args) != 2:
            return False
        mean = self._node(node.args[1])
        return (
            mean is not None
            and _op_name(mean) == "mean"
            and mean.args == (node.args[0],)
            and mean.params.get("axis") == -1
            and bool(mean.params.get("keepdims"))
        )

    def _norm_constraints(self, node: Node, e: Entry, m: int) -> list[Constraint]:
        step, i, _ = e
        gamma = node.params["gamma"]
        live = frozenset((step, i, k) for k in range(m) if gamma[0, k] != 0)
        if e not in live:
            return []
        src = self._node(node.args[0])
        centred = self._centred(src)
        std = self._node(node.args[1]) if len(node.args) > 1 else None
        no_eps = std is not None and std.params.get("eps") == 0
        # LayerNorm: sum_k (y_k - beta_k)/gamma_k = 0; with eps = 0 the squares sum to d too.
        # RMSNorm with eps = 0: the squares sum to d.
        k = int(centred) + int(no_eps)
        return [Constraint(live, k)] if k else []

    def _linear_constraints(self, node: Node, e: Entry, m: int) -> list[Constraint]:
        """The row of ``x·W`` when ``W`` has dependent columns: entry ``k``'s gradient in
        ``x`` is column ``k`` of ``W``."""
        step, i, _ = e
        w = sympy.Matrix(ExactBackend().matrix(node.params["w"]))
        if node.params.get("transposed"):
            w = w.T
        if w.cols != m or w.cols <= w.rank():
            return []
        grads = {(step, i, k): w[:, k].T for k in range(m)}
        return [Constraint(frozenset(grads), w.cols - w.rank(), grads)]

    def _step_constraints(self, e: Entry, n: int, m: int, sums: bool = True) -> list[Constraint]:
        """A user step's rows or columns whose sum (and sum of squares) is the same for
        every input (a softmax, a LayerNorm), or that are linear with dependent gradients
        (a product with the file's matrix). Without ``sums``, only the linear ones."""
        step, i, j = e
        out = []
        for line in (("row", step, i), ("col", step, j)):
            if line not in self._lines:  # every entry of a row shares the row's relations
                self._lines[line] = self._line_constraint(line, n, m, sums)
            con = self._lines[line]
            if con is not None:
                out.append(con)
        return out

    def _line_constraint(
        self, line: tuple[str, str, int], n: int, m: int, sums: bool = True
    ) -> Constraint | None:
        """The relation of one row or column of a user step, if it has one."""
        kind, step, k0 = line
        lvl = self.level(step)
        if lvl.cells is None:
            return None
        cells = (
            [((step, k0, k), lvl.cells[k0][k]) for k in range(m)]
            if kind == "row"
            else [((step, k, k0), lvl.cells[k][k0]) for k in range(n)]
        )
        if len(cells) < 2:
            return None
        group = frozenset(x for x, _ in cells)
        k = sums and sum(
            constant_in_inputs(sum((c**p for _, c in cells), sympy.S.Zero), lvl.point)
            for p in (1, 2)
        )
        if k:
            return Constraint(group, k)
        fixed = self._given_values(step)
        grads = linear_gradients([(x, c.xreplace(fixed)) for x, c in cells])
        if grads is not None:
            rank = sympy.Matrix.vstack(*grads.values()).rank()
            if rank < len(cells):
                return Constraint(group, len(cells) - rank, grads)
        return None

    def _given_values(self, step: str) -> dict[sympy.Symbol, sympy.Expr]:
        """The symbols of a step's inputs that are the file's numbers, with their values."""
        out: dict[sympy.Symbol, sympy.Expr] = {}
        for a in self.args(step):
            v = self.trace.value(a)
            if self.is_given(a) and isinstance(v, sympy.MatrixBase):
                out |= {symbol(a, i, j): v[i, j] for i in range(v.rows) for j in range(v.cols)}
        return out


def _op_name(node: Node) -> str:
    """The registry name of the op a node computes (``softmax``, ``step`` for a user step)."""
    return str(getattr(node.op, "name", ""))


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
    blanks = tuple(blanks)
    shown = frozenset(printed)
    memo = (blanks, shown)
    if memo not in rel._hidings:  # a sheet asks once per table, and the LaTeX and HTML again
        rel._hidings[memo] = _hide(rel, blanks, shown)
    return rel._hidings[memo]


def _hide(rel: Relations, blanks: tuple[tuple[str, Entry], ...], shown: frozenset[Entry]) -> Hiding:
    boxes: dict[Entry, str] = {}
    given_ids = set()
    classes: list[tuple[str, frozenset[Entry]]] = []
    for bid, e in blanks:
        cls = rel.copies_of(e)
        classes.append((bid, cls))
        if any(rel.is_given(x[0]) for x in cls):
            given_ids.add(bid)
        for x in cls:
            boxes.setdefault(x, bid)
    hidden: set[Entry] = set()

    def visible(x: Entry) -> bool:
        # On the sheet: printed, one of the file's numbers, or a copy of either.
        if x in boxes or x in hidden:
            return False
        return any(y not in hidden and (y in shown or rel.is_given(y[0])) for y in rel.copies_of(x))

    for _bid, cls in classes:
        for x in sorted(cls):
            for y, others in rel.readers(x):
                if y in cls or not visible(y):
                    continue
                if others is None or all(o in cls or visible(o) for o in others):
                    hidden.update(rel.copies_of(y))
    for _bid, cls in classes:
        for x in sorted(cls):
            for con in rel.constraints(x):
                group = con.group
                if any(g != x and g in cls for g in group):
                    continue  # a copy of the blank itself: already hidden
                while True:
                    # An entry that moves with no input (a masked 0) is known anyway.
                    rest = [g for g in group if g != x and not rel.is_constant(g)]
                    known = {g for g in rest if visible(g)}
                    known |= {g for g in group if g != x and rel.is_constant(g)}
                    droppable = [g for g in rest if g in known]
                    if not droppable or not con.determined(x, known):
                        break  # (nothing to drop: the blank is a constant, such as a first row's 1)
                    hidden.update(rel.copies_of(max(droppable, key=lambda g: (g in shown, g))))
    return Hiding(boxes, frozenset(hidden - set(boxes)), frozenset(given_ids))


__all__ = ["Entry", "Hiding", "Relations", "hide"]
