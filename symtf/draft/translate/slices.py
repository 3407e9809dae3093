"""Array literals written into one index of a tensor the code does not compute.

A walkthrough shows a batched tensor through one of its slices: after
``attn_scores.masked_fill_(mask, -torch.inf)`` it writes ``attn_scores[0][0] = [[0.8, -inf],
[0.3, 0.9]]``, and after ``attn_weights = torch.softmax(attn_scores / scale, dim=-1)`` it
writes ``attn_weights[0][0] = [[1.0, 0.0], [0.4, 0.6]]``. Where the code that makes the
whole tensor is not translated, each such literal is read as what that slice holds (a
given tensor). A slice of a tensor the code computed, entry by entry or row by row within
the slice, from slices written out at the same index before it (and from numbers) is
computed from those slices; its literal is then a printing of that step and its entries
are judged as a print of that step is (the code states the step: an entry that
disagrees is off).
"""

from __future__ import annotations

import ast
import math
from collections.abc import Callable

from symtf.draft.templates import Var
from symtf.draft.translate.events import Given, Shown, Step
from symtf.draft.translate.outputs import Outputs
from symtf.draft.translate.scope import Untranslated, origin_of

__all__ = ["Slices"]

#: Functions of a tensor that act on each entry alone: they commute with taking a slice.
_ELEMENTWISE = frozenset({"exp", "log", "sqrt", "tanh", "sigmoid", "relu", "abs"})
#: Functions of a tensor that act on each row (their last axis, ``dim=-1``) alone.
_ROWWISE = frozenset({"softmax", "log_softmax"})
_ARITHMETIC = (ast.Add, ast.Sub, ast.Mult, ast.Div)


def _index(target: ast.Subscript) -> tuple[str, tuple[int, ...]] | None:
    """``a[0][1]`` or ``a[0, 1]``: the variable and its whole-number indices."""
    idx: list[int] = []
    node: ast.expr = target
    while isinstance(node, ast.Subscript):
        s = node.slice
        parts = s.elts if isinstance(s, ast.Tuple) else [s]
        ints = [p.value for p in parts if isinstance(p, ast.Constant) and type(p.value) is int]
        if len(ints) != len(parts) or any(i < 0 for i in ints):
            return None
        idx[:0] = ints
        node = node.value
    return (node.id, tuple(idx)) if isinstance(node, ast.Name) else None


class Slices(Outputs):
    """Reads ``x[i][j] = [[…]]`` where ``x`` is not translated (see the module docstring)."""

    def __init__(self, shape_of: Callable[[str], tuple[int, ...] | None]) -> None:
        super().__init__(shape_of)
        #: Literals written into an index of an untranslated variable, by variable and
        #: index: the given's step, the variable's state when written, and where.
        self.slices: dict[tuple[str, tuple[int, ...]], tuple[str, str, tuple[int, int]]] = {}
        #: Steps of slices the code changed in place (``x.masked_fill_(mask, -inf)``): a
        #: literal written into that slice next is a printing of the step.
        self.changed_slices: set[str] = set()

    def _autograd_call(self, v: ast.Call) -> bool:
        """``x.masked_fill_(mask, value)``: ``x`` becomes ``x.masked_fill(mask, value)``; for
        an ``x`` the code does not compute, each slice of it written out is masked."""
        assert isinstance(v.func, ast.Attribute)
        owner = v.func.value
        if (
            v.func.attr != "masked_fill_"
            or not isinstance(owner, ast.Name)
            or len(v.args) != 2
            or v.keywords
            or owner.id in self.leaves
        ):
            return super()._autograd_call(v)
        if owner.id in self.names:
            masked = ast.Call(ast.Attribute(owner, "masked_fill", ast.Load()), v.args, [])
            change = ast.Assign([ast.Name(owner.id, ast.Store())], ast.copy_location(masked, v))
            self._statement(ast.copy_location(change, v), is_last=False)
            return True
        if owner.id not in self.opaque:
            return super()._autograd_call(v)
        before = self.opaque[owner.id]
        after = f"{self._where(v)}: changed in place by .masked_fill_() ({before})"
        for (name, idx), (step, reason, _) in list(self.slices.items()):
            if name != owner.id or reason != before:
                continue
            try:
                expr = self._masked_fill(Var(step), v.args[0], v.args[1])
            except Untranslated:
                continue
            if self._shape(expr) != self._known_shape(step):
                continue
            changed = self._fresh(f"{step}_masked")
            self._emit(Step(changed, expr, self._where(v), self._source(v)))
            self.slices[(name, idx)] = (changed, after, self._position(v))
            self.changed_slices.add(changed)
        self.opaque[owner.id] = after
        raise Untranslated(f"depends on {owner.id}, which is not translated ({before})")

    def _slice_literal(self, target: ast.Subscript, value: ast.expr, stmt: ast.stmt) -> bool:
        """Translate ``x[i][j] = <array literal>`` for an untranslated ``x``; returns whether
        it did (else the statement stays untranslated)."""
        found = _index(target)
        literal = self._literal(value)
        if found is None or literal is None or not literal[1]:
            return False
        owner, idx = found
        if owner not in self.opaque or owner in self.names or owner in self.buffers:
            return False
        values, shape, f32 = literal
        rows, lines = self._literal_rows(value, values, shape)
        held = self.slices.get((owner, idx))
        computed = (
            held[0]
            if held is not None
            and held[0] in self.changed_slices
            and held[1] == self.opaque[owner]
            and self._known_shape(held[0]) == shape
            else self._slice_step(owner, idx, shape, stmt)
        )
        step = self._fresh(f"{owner}_{'_'.join(map(str, idx))}")
        cell = self._block.cell if self._block else None
        if computed is not None:
            self._emit(
                Shown(
                    computed,
                    f"{owner}{''.join(f'[{i}]' for i in idx)}",
                    rows,
                    lines,
                    cell,
                    None,
                    False,
                    vector=len(shape) == 1,
                    complete=self._complete_step(computed),
                )
            )
        places = self._entry_places(value) if len(shape) == 2 else ()
        where = self._where(stmt)
        self._emit(Given(step, values, shape, where, f32, None, lines, cell, places))
        self.float32 |= f32
        self.slices[(owner, idx)] = (step, self.opaque[owner], self._position(stmt))
        return True

    def _complete_step(self, name: str) -> bool:
        expr = self.exprs.get(name)
        return expr is not None and self._complete(expr)

    def _position(self, node: ast.stmt | ast.expr) -> tuple[int, int]:
        """Where a node stands in the article's order: its cell, then its file line."""
        origin = origin_of(node)
        block = origin.block if origin is not None else self._block
        if block is None:
            return (-1, 0)
        return (block.cell if block.cell is not None else -1, block.file_line(node.lineno))

    def _slice_step(
        self, owner: str, idx: tuple[int, ...], shape: tuple[int, ...], stmt: ast.stmt
    ) -> str | None:
        """The step of ``owner[idx]`` from the slices its definition reads, if it has one of
        ``shape``: the definition is the assignment that made ``owner`` what it is, and reads
        only slices at ``idx`` written before it, unchanged since, and numbers."""
        node = self.defs.get(owner)
        if node is None or not self.opaque[owner].startswith(f"{self._where(node)}:"):
            return None
        at = self._position(node)
        bound: dict[str, str] = {}
        try:
            rewritten = self._sliced(node, idx, at, bound)
        except Untranslated:
            return None
        if not bound:
            return None
        held = {name: self.names.get(name) for name in bound}
        for name, step in bound.items():
            self.names[name] = step
        try:
            expr = self._expr(rewritten)
        except Untranslated:
            return None
        finally:
            for name, old in held.items():
                if old is None:
                    self.names.pop(name, None)
                else:
                    self.names[name] = old
        if self._shape(expr) != shape:
            return None
        step = self._fresh(f"{owner}_{'_'.join(map(str, idx))}_computed")
        self._emit(Step(step, expr, self._where(stmt), self._source(stmt)))
        return step

    def _sliced(
        self, node: ast.expr, idx: tuple[int, ...], at: tuple[int, int], bound: dict[str, str]
    ) -> ast.expr:
        """``node`` with each variable read replaced by its slice at ``idx``.

        Raises:
            Untranslated: When ``node`` is not an entry-by-entry or row-by-row function of
                such slices and numbers.
        """
        out: ast.expr
        if isinstance(node, ast.Constant):
            return node
        if isinstance(node, ast.Name):
            held = self.slices.get((node.id, idx))
            if held is not None:
                step, reason, written = held
                if self.opaque.get(node.id) != reason or not written < at:
                    raise Untranslated(f"{node.id} changed since its slice was written")
                name = f"{step}__slice"
                bound[name] = step
                out = ast.Name(name, ast.Load())
            elif self._scalar(node.id):
                return node
            else:
                raise Untranslated(f"{node.id} is read whole")
        elif isinstance(node, ast.BinOp) and isinstance(node.op, _ARITHMETIC):
            out = ast.BinOp(
                self._sliced(node.left, idx, at, bound),
                node.op,
                self._sliced(node.right, idx, at, bound),
            )
        elif isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.USub):
            out = ast.UnaryOp(node.op, self._sliced(node.operand, idx, at, bound))
        elif isinstance(node, ast.Call) and len(node.args) == 1:
            fname = (self._dotted(node.func) or "").rsplit(".", 1)[-1]
            axes = [k for k in node.keywords if k.arg in ("dim", "axis")]
            last = (
                len(axes) == 1
                and len(node.keywords) == 1
                and self._const_or_none(axes[0].value) == -1
            )
            if not (fname in _ELEMENTWISE and not node.keywords) and not (
                fname in _ROWWISE and last
            ):
                raise Untranslated(f"{fname or 'a call'} does not act within a slice")
            arg = self._sliced(node.args[0], idx, at, bound)
            out = ast.Call(node.func, [arg], node.keywords)
        else:
            raise Untranslated("not an entry-by-entry function of slices")
        return ast.copy_location(out, node)

    def _scalar(self, name: str) -> bool:
        """A variable holding one number: a Python number, or a tensor of one entry."""
        if name in self.consts:
            return isinstance(self.consts[name], (int, float))
        known = name in self.names or (name in self.opaque and name in self.printed_opaque)
        shape = self._known_shape(self.names.get(name, name)) if known else None
        return shape is not None and math.prod(shape) == 1

    def _literal_rows(
        self, value: ast.expr, values: tuple[str, ...], shape: tuple[int, ...]
    ) -> tuple[tuple[tuple[str, ...], ...], tuple[int, ...]]:
        """An array literal's entries row by row (its last axis), with each row's file line."""
        width = shape[-1]
        rows = tuple(values[i : i + width] for i in range(0, len(values), width))
        inner = value.args[0] if isinstance(value, ast.Call) and value.args else value
        starts: list[int] = []

        def walk(node: ast.expr, depth: int) -> None:
            if not isinstance(node, (ast.List, ast.Tuple)):
                return
            if depth == len(shape) - 1:
                starts.append(node.lineno)
                return
            for e in node.elts:
                walk(e, depth + 1)

        walk(inner, 0)
        block = self._block
        lines = tuple(block.file_line(n) if block else n for n in starts)
        return rows, lines if len(lines) == len(rows) else (lines[:1] or (0,)) * len(rows)
