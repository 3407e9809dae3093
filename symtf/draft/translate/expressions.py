"""Expressions of code translated onto ops: operators, comparisons, indexing, literals.

An expression's calls (framework calls, ``nn`` modules, the notebook's own functions) are
translated by the layer below, :mod:`~symtf.draft.translate.calls`; what has no
translation raises :class:`~symtf.draft.translate.scope.Untranslated` with a reason the
draft shows.
"""

from __future__ import annotations

import ast

from symtf.draft.templates import Call, Expr, Num, Var, call, variables
from symtf.draft.translate.calls import IDENTITY_METHODS, Calls
from symtf.draft.translate.events import Given, Step
from symtf.draft.translate.literals import MAX_LITERAL_ENTRIES
from symtf.draft.translate.scope import Untranslated, num_text, step_number

#: Comparisons: the registry's ops (1 where it holds, else 0).
_COMPARISONS: dict[type[ast.cmpop], str] = {
    ast.Lt: "lt",
    ast.LtE: "le",
    ast.Gt: "gt",
    ast.GtE: "ge",
    ast.Eq: "eq",
    ast.NotEq: "ne",
}


class Expressions(Calls):
    """Translates expressions of the code (see the module docstring)."""

    def _tensor_or_const(self, node: ast.expr) -> Expr:
        c = self._const_or_none(node)
        if c is not None:
            return Num(num_text(c))
        return self._tensor(node)

    def _tensor(self, node: ast.expr) -> Expr:
        literal = self._literal(node)
        if literal is not None:
            values, shape, f32 = literal
            # a row standing alone (``[0, 2, 3, 1]`` under results): its line and places; the
            # same row written again on another line is printed again, a given of its own
            b, row = self._block, len(shape) == 1 and isinstance(node, ast.List)
            at = ((b.file_line(node.lineno) if b else node.lineno),) if row else ()
            seen = (*literal, at)
            step = self._anonymous.get(seen)
            if step is None:  # the same literal again (in an unrolled loop): the same given
                step = self._fresh("literal")
                where, places = self._where(node), self._entry_places(node) if row else ()
                cell: int | None = b.cell if b else None
                self._emit(Given(step, values, shape, where, f32, None, at, cell, places))
                self._anonymous[seen] = step
            self.float32 |= f32
            return Var(step)
        return self._expr(node)

    def _expr(self, node: ast.expr) -> Expr:
        match node:
            case ast.Name(id=name):
                if name in self.lazy:
                    expr, where, source = self.lazy.pop(name)
                    step = self._fresh(name)
                    self._emit(Step(step, expr, where, source))
                    self._bind(name, step)
                    return Var(step)
                if name in self.buffers and name not in self.names:
                    return self._filled(name, node)
                if name in self.names:
                    return Var(self.names[name])
                if name in self.tuples:
                    raise Untranslated(f"{name} is a tuple of tensors, not a tensor")
                if name in self.dicts:
                    raise Untranslated(f"{name} is a dict, not a tensor")
                if name in self.consts:
                    if isinstance(self.consts[name], tuple):
                        raise Untranslated(f"{name} is a list of words or numbers, not a tensor")
                    return Num(num_text(self.consts[name]))
                if name in self.opaque and name in self.printed_opaque:
                    return Var(name)  # its printed value will stand for it
                if name in self.opaque:
                    raise Untranslated(
                        f"depends on {name}, which is not translated ({self.opaque[name]})"
                    )
                raise Untranslated(
                    f"depends on {name}, which is not defined in the notebook's translated code"
                )
            case ast.Constant(value=v) if isinstance(v, (int, float)) and not isinstance(v, bool):
                return Num(step_number(self._number_text(node)))
            case ast.UnaryOp(op=ast.USub(), operand=x):
                c = self._const_or_none(node)
                if c is not None:
                    return Num(num_text(c))
                return call("neg", self._expr(x))
            case ast.UnaryOp(op=ast.UAdd(), operand=x):
                return self._expr(x)
            case ast.BinOp(left=a, op=ast.Mult(), right=b) if isinstance(
                a, (ast.List, ast.Tuple)
            ) or isinstance(b, (ast.List, ast.Tuple)):
                # [0.0] * d: a Python list repeated, not its entries multiplied
                items, times = (a, b) if isinstance(a, (ast.List, ast.Tuple)) else (b, a)
                assert isinstance(items, (ast.List, ast.Tuple))
                n = self._int(times)
                if not 0 < n * len(items.elts) <= MAX_LITERAL_ENTRIES:
                    raise Untranslated(f"a list repeated {n} times is not translated")
                repeated = ast.List(elts=items.elts * n, ctx=ast.Load())
                return self._tensor(ast.copy_location(repeated, items))
            case ast.BinOp(left=a, op=op, right=b):
                c = self._const_or_none(node)
                if c is not None:
                    return Num(num_text(c))
                ops = {
                    ast.Add: "add",
                    ast.Sub: "sub",
                    ast.Mult: "mul",
                    ast.Div: "div",
                    ast.MatMult: "matmul",
                    ast.Pow: "pow",
                    ast.FloorDiv: "floordiv",
                    ast.Mod: "mod",
                }
                op_name = ops.get(type(op))
                if op_name is None:
                    raise Untranslated(f"the operator {type(op).__name__} is not translated")
                operands = [self._operand(a), self._operand(b)]
                if op_name == "matmul":
                    self._no_number_in_product(operands)
                return call(op_name, *operands)
            case ast.Attribute(value=x, attr="T" | "mT"):
                return call("T", self._expr(x))
            case ast.Attribute(attr="grad"):
                return self._grad_of(node)
            case ast.Attribute(value=x, attr="values" | "indices" as attr) if (
                parts := self._tuple_parts(x)
            ) is not None and len(parts) == 2:
                # torch.max(x, 1).values, torch.topk(x, 2).indices: a named field of the pair
                part = parts[0 if attr == "values" else 1]
                if isinstance(part, str):
                    raise Untranslated(part)
                return part
            case ast.Compare(left=a, ops=[op], comparators=[b]):
                compared = _COMPARISONS.get(type(op))
                if compared is None:
                    raise Untranslated(f"the comparison {type(op).__name__} is not translated")
                return call(compared, self._operand(a), self._operand(b))
            case ast.Attribute(value=x, attr=attr) if attr in IDENTITY_METHODS:
                return self._expr(x)
            case ast.Subscript():
                return self._subscript(node)
            case ast.Call():
                return self._call(node)
            case ast.List() | ast.Tuple():
                literal = self._literal(node)
                if literal is not None:
                    return self._tensor(node)
                # np.array([a @ b, c]), torch.tensor([x1, x2]): the parts stacked on a new
                # first axis, as the array maker does
                return self._stacked([self._element(e) for e in node.elts])
            case ast.ListComp():
                return self._stacked(self._comprehension(node))
        raise Untranslated(f"{self._source(node) or type(node).__name__} is not translated")

    def _element(self, node: ast.expr) -> Expr:
        """One element of a list made into an array (a nested list is stacked in turn)."""
        if isinstance(node, (ast.List, ast.Tuple)) and self._literal(node) is None:
            return self._stacked([self._element(e) for e in node.elts])
        return self._operand(node)

    def _operand(self, node: ast.expr) -> Expr:
        c = self._const_or_none(node)
        if c is not None:
            return Num(num_text(c))
        return self._tensor(node) if isinstance(node, (ast.List, ast.Tuple)) else self._expr(node)

    def _subscript(self, node: ast.Subscript) -> Expr:
        owner = node.value.id if isinstance(node.value, ast.Name) else None
        if owner is not None and owner in self.dicts:  # embeddings["cat"]
            return self._held(owner, self._const(node.slice))
        if owner is not None and owner in self.buffers and owner not in self.names:
            entry = self._entry(owner, node.slice)
            if entry is not None:  # a[i] read back while a is filled entry by entry
                return entry
        parts_of = self._tuple_parts(node.value)
        if parts_of is not None:  # grads[0]: an element of torch.autograd.grad's tuple
            k = self._int(node.slice)
            if not -len(parts_of) <= k < len(parts_of):
                raise Untranslated("an index past the end of a tuple")
            part = parts_of[k]
            if isinstance(part, str):
                raise Untranslated(part)
            return part
        base = self._expr(node.value)
        items = node.slice.elts if isinstance(node.slice, ast.Tuple) else [node.slice]
        parts = []
        for it in items:
            if isinstance(it, ast.Slice):
                lo = "" if it.lower is None else str(self._int(it.lower))
                hi = "" if it.upper is None else str(self._int(it.upper))
                if it.step is not None:
                    parts.append(f"{lo}:{hi}:{self._int(it.step)}")
                else:
                    parts.append(f"{lo}:{hi}")
            elif isinstance(it, ast.Constant) and it.value is Ellipsis:
                parts.append("...")
            elif (isinstance(it, ast.Constant) and it.value is None) or (
                self._dotted(it) in ("numpy.newaxis", "jax.numpy.newaxis")
            ):
                return self._new_axes(base, node)
            else:
                c = self._const_or_none(it)
                if isinstance(c, int) and not isinstance(c, bool):
                    parts.append(str(c))
                elif len(items) == 1 and (rows := self._rows_picked(base, c)) is not None:
                    return rows  # E[ids], ids a list of whole numbers: those rows, in order
                else:
                    ids = self._expr(it)  # E[ids]: rows picked by a tensor of ids
                    return call("getitem", base, ids, index="{1}")
        return call("getitem", base, index=", ".join(parts))

    def _ndim(self, x: Expr) -> int | None:
        """The rank of a translated expression, from its inputs' shapes and its op."""
        if isinstance(x, Var):
            shape = self.shape_of(x.name)
            return len(shape) if shape is not None else None
        if isinstance(x, Call) and x.op == "reshape":
            return len(x.kw["shape"])
        if isinstance(x, Call) and x.op in (
            "T",
            "transpose",
            "softmax",
            "layernorm",
            "exp",
            "relu",
        ):
            return self._ndim(x.args[0])
        if isinstance(x, Call) and x.op == "matmul":
            ranks = [self._ndim(a) for a in x.args]
            return None if None in ranks else max(r for r in ranks if r is not None)
        names = variables(x)
        if isinstance(x, Call) and x.op in ("add", "sub", "mul", "div", "neg") and names:
            ranks = [self._ndim(a) for a in x.args if not isinstance(a, Num)]
            return max((r for r in ranks if r is not None), default=None)
        return None

    def _items(self, node: ast.expr) -> list[Expr] | None:
        """A written-out list of tensors (``[a, b]``, ``[h @ W for h in heads]``), or None."""
        if isinstance(node, (ast.List, ast.Tuple)):
            return [self._operand(e) for e in node.elts]
        if isinstance(node, (ast.ListComp, ast.GeneratorExp)):
            return self._comprehension(node)
        if isinstance(node, ast.Name) and node.id in self.tuples:
            parts = self.tuples[node.id]
            if all(not isinstance(p, str) for p in parts):
                return [p for p in parts if not isinstance(p, str)]
        return None

    def _new_axes(self, base: Expr, node: ast.Subscript) -> Expr:
        """``x[None, :]``, ``x[:, np.newaxis]``, ``x[np.newaxis, ...]``: a reshape with axes of
        one inserted."""
        items = node.slice.elts if isinstance(node.slice, ast.Tuple) else [node.slice]
        shape = self._shape(base)
        if shape is None:
            raise Untranslated("a new axis on a tensor whose shape is not known")
        out: list[int] = []
        axes = list(shape)
        # the axes an ellipsis stands for: those no full slice names
        ellipsis = len(axes) - sum(1 for it in items if isinstance(it, ast.Slice))
        for it in items:
            if isinstance(it, ast.Constant) and it.value is Ellipsis:
                out.extend(axes[:ellipsis])
                axes = axes[ellipsis:]
            elif (isinstance(it, ast.Constant) and it.value is None) or self._dotted(it) in (
                "numpy.newaxis",
                "jax.numpy.newaxis",
            ):
                out.append(1)
            elif isinstance(it, ast.Slice) and it.lower is it.upper is it.step is None and axes:
                out.append(axes.pop(0))
            else:
                raise Untranslated("a new axis beside an index or a partial slice")
        return call("reshape", base, shape=[*out, *axes])
