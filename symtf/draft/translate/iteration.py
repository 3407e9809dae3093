"""Python's own structures around the arrays: loops, comprehensions, tuples, dicts, buffers.

A worked example is often written with plain Python around its arrays:

- loops and list comprehensions over ``range(n)``, a list of words, a dict, the rows
  of an array, ``enumerate(…)`` or ``zip(…)`` of these, unrolled (at most
  :data:`~symtf.draft.translate.scope.MAX_UNROLL` iterations each);
- tuples unpacked into names (``q, k = x @ W_q, x @ W_k``, ``a, b = rows``);
- embeddings held in a dict with words as keys (``E = {"cat": np.array([…])}``);
- arrays filled entry by entry (``s = np.zeros(n)`` then ``s[i] = q @ k[i]`` in a loop),
  read back as the stack of their entries.

Each value bound to a name is a constant (a number, a word, a tuple of them), a
translated expression, a tuple of values, or a dict.
"""

from __future__ import annotations

import ast
import itertools
from typing import Any

from symtf.draft.templates import Expr, Num, Var, call, render
from symtf.draft.translate.events import Given, Step
from symtf.draft.translate.literals import Literals
from symtf.draft.translate.scope import (
    MAX_ITERATIONS,
    MAX_LOOP,
    MAX_UNROLL,
    Buffer,
    DecimalText,
    NotebookFunction,
    Unknown,
    Untranslated,
    const_of_num,
    is_expr,
    num_text,
)

__all__ = ["Iteration", "assigned_names", "quiet_assignment", "returns_tuple", "whole_numbers"]

#: Longest step text a buffer is read back in, part by part (the step language reads
#: expressions of at most 2000 characters).
_MAX_TEXT = 1500
#: Most entries one change in place may set (``pe[:, 0::2] = …`` on a 64×64 array sets 2048).
_MAX_ENTRIES_CHANGED = 4096

#: Calls that make a new array to be filled entry by entry, and what an entry not
#: assigned holds (``None``: unknown).
FILLERS: dict[str, str | None] = {
    "zeros": "0",
    "zeros_like": "0",
    "ones": "1",
    "ones_like": "1",
    "empty": None,
    "empty_like": None,
}


class Iteration(Literals):
    """Loops, comprehensions, tuples, dicts and buffers (see the module docstring)."""

    # -- binding names --
    def _argument(self, node: ast.expr) -> Any:
        """A value as a function argument or loop item: a constant, a dict, a tuple of
        values, or a translated expression."""
        if isinstance(node, ast.Name) and node.id in self.dicts:
            return self.dicts[node.id]
        if isinstance(node, ast.Name) and node.id in self.tuples:
            parts = self.tuples[node.id]
            if all(not isinstance(p, str) for p in parts):
                return tuple(parts)
        if isinstance(node, ast.Name) and isinstance(self.consts.get(node.id), tuple):
            return self.consts[node.id]
        c = self._const_or_none(node)
        if c is not None and not isinstance(c, float):
            return c
        return self._operand(node)

    def _argument_at(self, node: ast.expr, call: ast.Call) -> Any:
        """An argument's value (raises :class:`Untranslated` when it is not translated)."""
        return self._argument(node)

    def _argument_or_unknown(self, node: ast.expr, call: ast.Call) -> Any:
        """An argument's value, or :class:`Unknown` when it is not translated: the values
        the function makes without it (the weights an attention returns beside an output
        that needs an untranslated V) are still translated."""
        try:
            return self._argument(node)
        except Untranslated as e:
            return Unknown(f"{self._where(call)}: {e}")

    def _bind_value(self, name: str, value: Any, node: ast.AST, source: str = "") -> None:
        """Bind ``name`` to a value (a translated expression gets a step named after it,
        written where the name is first read)."""
        self.lazy.pop(name, None)
        self.tuples.pop(name, None)
        self.dicts.pop(name, None)
        self.buffers.pop(name, None)
        self.opaque.pop(name, None)
        if isinstance(value, Unknown):  # what reads it says why it is not translated
            self.opaque[name] = value.reason
            self.names.pop(name, None)
            self.consts.pop(name, None)
        elif isinstance(value, dict):
            self.dicts[name] = value
            self.names.pop(name, None)
            self.consts.pop(name, None)
        elif isinstance(value, tuple) and value and all(is_expr(v) for v in value):
            self.tuples[name] = list(value)
            self.names.pop(name, None)
            self.consts.pop(name, None)
        elif isinstance(value, Var):
            self._bind(name, value.name)
        elif isinstance(value, Num):
            self.consts[name] = const_of_num(value)
            self.names.pop(name, None)
        elif is_expr(value):
            self.names.pop(name, None)
            self.consts.pop(name, None)
            self.lazy[name] = (value, self._where(node), source or self._source(node))
        else:
            self.consts[name] = value
            self.names.pop(name, None)

    def _bind_target(self, target: ast.expr, value: Any, node: ast.AST, source: str = "") -> None:
        """Bind a loop's or an assignment's target (a name, or a tuple of names) to a value."""
        if isinstance(target, ast.Name):
            self._bind_value(target.id, value, node, source)
            return
        if isinstance(target, (ast.Tuple, ast.List)):
            parts = self._unpacked(value, len(target.elts))
            for t, part in zip(target.elts, parts, strict=True):
                self._bind_target(t, part, node, source)
            return
        if isinstance(target, ast.Subscript) and isinstance(target.value, ast.Name):
            # out[i], out[j] = rotate(x, y): each value into its entry
            if not is_expr(value) or not isinstance(node, ast.stmt):
                raise Untranslated("unpacking other than a tensor into an entry is not translated")
            owner = target.value.id
            if owner not in self.buffers and owner in self.names and owner not in self.leaves:
                shape = self._known_shape(self.names[owner])
                if shape:
                    self.buffers[owner] = Buffer(shape, None, source=Var(self.names[owner]))
            if owner not in self.buffers:
                raise Untranslated(f"unpacking into an entry of {owner} is not translated")
            self._assign_entry(target, value, node)
            return
        raise Untranslated("a loop or unpacking into other than names is not translated")

    def _made_of_own_list(self, name: str, value: ast.expr, stmt: ast.stmt) -> bool:
        """``scores = torch.tensor(scores)`` where ``scores`` is a list of tensors (filled by
        ``append`` in a loop): the array is made of the list before the name is bound to
        it anew. Returns whether ``value`` was such a call (and ``name`` is bound)."""
        if name not in self.tuples or not isinstance(value, ast.Call):
            return False
        if not any(isinstance(n, ast.Name) and n.id == name for n in ast.walk(value)):
            return False
        expr = self._expr(value)
        self.tuples.pop(name)
        step = self._fresh(name)
        self._emit(Step(step, expr, self._where(stmt), self._source(stmt)))
        self._bind(name, step)
        return True

    def _unpacked(self, value: Any, n: int) -> list[Any]:
        """A value's ``n`` parts, as unpacking reads them (a tensor: its first axis)."""
        if isinstance(value, (tuple, list)):
            if len(value) != n:
                raise Untranslated(f"unpacking {len(value)} values into {n} names")
            return list(value)
        if is_expr(value):
            shape = self._shape(value)
            if shape is None or not shape or shape[0] != n:
                raise Untranslated(
                    "unpacking a tensor whose first axis is not known to have "
                    f"{n} entries is not translated"
                )
            return [call("getitem", value, index=str(k)) for k in range(n)]
        raise Untranslated(f"unpacking a {type(value).__name__} is not translated")

    # -- loops and comprehensions --
    def _iterate(self, node: ast.expr) -> list[Any] | None:
        """The items a comprehension reads from ``node``, in order (``None``: not unrolled)."""
        try:
            items = self._items_of(node)
        except Untranslated:
            return None
        return items if items is not None and len(items) <= MAX_UNROLL else None

    def _loop_items(self, node: ast.expr, what: str = "a loop") -> list[Any]:
        """The items a ``for`` loop reads from ``node``, in order.

        Raises:
            Untranslated: Items not known (a bound the translation does not know, say), or
                more than :data:`MAX_LOOP` of them, or more than :data:`MAX_ITERATIONS`
                with the loops around this one; the message says which.
        """
        try:
            items = self._items_of(node, MAX_LOOP)
        except Untranslated as e:
            raise Untranslated(f"{what} over {self._source(node)} is not unrolled: {e}") from e
        if items is None:
            raise Untranslated(
                f"{what} over anything but a range, a list, a dict, the rows of an array, "
                "enumerate or zip of these is not unrolled"
            )
        if self._iterations * len(items) > MAX_ITERATIONS:
            raise Untranslated(
                f"{what} of {len(items)} iterations inside loops of {self._iterations} is not "
                f"unrolled (at most {MAX_ITERATIONS} iterations in all)"
            )
        return items

    def _items_of(self, node: ast.expr, limit: int = MAX_UNROLL) -> list[Any] | None:
        """The items ``node`` holds (``None``: not a form that is unrolled).

        Raises:
            Untranslated: A form that is unrolled, of items not known or more than ``limit``.
        """
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Name):
            fn, args = node.func.id, node.args
            if fn == "range":
                r = range(*[self._int(a) for a in args])
                return _bounded(list(r), limit)
            if fn == "enumerate" and len(args) == 1:
                start = next((self._int(k.value) for k in node.keywords if k.arg == "start"), 0)
                inner = self._items_of(args[0], limit)
                return None if inner is None else [(start + k, v) for k, v in enumerate(inner)]
            if fn == "zip" and args and not node.keywords:
                parts = [self._items_of(a, limit) for a in args]
                if any(p is None for p in parts):
                    return None
                return [tuple(t) for t in zip(*(p for p in parts if p is not None), strict=False)]
            if fn in ("list", "tuple") and len(args) == 1:
                return self._items_of(args[0], limit)
        if (
            isinstance(node, ast.Call)
            and self._dotted(node.func) == "numpy.arange"
            and 1 <= len(node.args) <= 3
            and not node.keywords
        ):
            # numpy's whole numbers, read one by one as Python's
            r = range(*[self._whole(a) for a in node.args])
            return _bounded(list(r), limit)
        if (
            isinstance(node, ast.Call)
            and isinstance(node.func, ast.Attribute)
            and isinstance(node.func.value, ast.Name)
            and node.func.value.id in self.dicts
            and not node.args
        ):
            held = self.dicts[node.func.value.id]
            match node.func.attr:
                case "items":
                    return list(held.items())
                case "keys":
                    return list(held)
                case "values":
                    return list(held.values())
        if isinstance(node, ast.Name) and node.id in self.dicts:
            return list(self.dicts[node.id])
        if isinstance(node, ast.Name) and isinstance(self.consts.get(node.id), tuple):
            return list(self.consts[node.id])
        if isinstance(node, ast.Name) and node.id in self.tuples:
            parts_held = self.tuples[node.id]
            return list(parts_held) if all(not isinstance(p, str) for p in parts_held) else None
        if isinstance(node, (ast.List, ast.Tuple)):
            return [self._argument(e) for e in node.elts]
        # the rows of a translated array
        e = self._expr(node)
        shape = self._shape(e)
        if shape is None or not shape:
            return None
        _bounded(list(range(shape[0])), limit)
        if not isinstance(e, Var):
            step = self._fresh("rows")
            self._emit(Step(step, e, self._where(node), self._source(node)))
            e = Var(step)
        return [call("getitem", e, index=str(k)) for k in range(shape[0])]

    def _comprehension(self, node: ast.ListComp | ast.GeneratorExp) -> list[Expr]:
        """The elements of ``[f(x) for x in items if cond]``, unrolled (each translated)."""
        saved = self._save_scope()
        out: list[Expr] = []
        try:
            self._generate(node.elt, list(node.generators), out, node)
        finally:
            self._restore_scope(saved)
        if not out:
            raise Untranslated("a comprehension with no elements is not translated")
        return out

    def _generate(
        self, elt: ast.expr, gens: list[ast.comprehension], out: list[Expr], node: ast.AST
    ) -> None:
        if not gens:
            out.append(self._operand(elt))
            if len(out) > MAX_LOOP:
                raise Untranslated(f"a comprehension of more than {MAX_LOOP} elements")
            return
        g = gens[0]
        if g.is_async:
            raise Untranslated("an async comprehension is not translated")
        items = self._loop_items(g.iter, "a comprehension")
        self._iterations *= len(items) or 1
        try:
            for item in items:
                self._bind_target(g.target, item, node)
                if all(self._const(cond) for cond in g.ifs):
                    self._generate(elt, gens[1:], out, node)
        finally:
            self._iterations //= len(items) or 1

    def _more_const(self, node: ast.expr) -> Any:
        """``" ".join(words)`` of a list of words the translation knows: the text."""
        if (
            isinstance(node, ast.Call)
            and isinstance(node.func, ast.Attribute)
            and node.func.attr == "join"
            and isinstance(node.func.value, ast.Constant)
            and isinstance(node.func.value.value, str)
            and len(node.args) == 1
            and not node.keywords
        ):
            items = self._const_items(node.args[0])
            if items is not None and all(isinstance(w, str) for w in items):
                return node.func.value.value.join(items)
        return super()._more_const(node)

    def _const_items(self, node: ast.expr) -> tuple[Any, ...] | None:
        """The constants a list holds: written out, held by a name, or a comprehension of
        constants over constants (``[id2tok[i] for i in generated]``); ``None`` otherwise."""
        if isinstance(node, ast.Name) and isinstance(self.consts.get(node.id), tuple):
            return tuple(self.consts[node.id])
        if isinstance(node, (ast.List, ast.Tuple)):
            items = [self._const_or_none(e) for e in node.elts]
            return None if any(v is None for v in items) else tuple(items)
        if not isinstance(node, (ast.ListComp, ast.GeneratorExp)) or len(node.generators) != 1:
            return None
        g = node.generators[0]
        if g.is_async or not isinstance(g.target, ast.Name):
            return None
        over = self._const_items(g.iter)
        if over is None:
            return None
        saved = self._save_scope()
        out = []
        try:
            for item in over:
                self.consts[g.target.id] = item
                self.names.pop(g.target.id, None)
                if all(self._const(c) for c in g.ifs):
                    out.append(self._const(node.elt))
        except Untranslated:
            return None
        finally:
            self._restore_scope(saved)
        return tuple(out)

    def _save_scope(self) -> tuple[dict[str, Any], ...]:
        return (
            dict(self.names),
            dict(self.consts),
            dict(self.opaque),
            dict(self.tuples),
            dict(self.dicts),
            dict(self.buffers),
            dict(self.defs),
            dict(self.lazy),
            dict(self.opaque_shapes),
        )

    def _restore_scope(self, saved: tuple[dict[str, Any], ...]) -> None:
        (
            self.names,
            self.consts,
            self.opaque,
            self.tuples,
            self.dicts,
            self.buffers,
            self.defs,
            self.lazy,
            self.opaque_shapes,
        ) = saved

    # -- dicts --
    def _dict_of(self, name: str, node: ast.Dict | ast.DictComp, stmt: ast.stmt) -> dict[Any, Any]:
        """A dict with constant keys: each value a constant or a translated tensor (an array
        literal is a given named after its key: ``E_cat``)."""
        held: dict[Any, Any] = {}
        if isinstance(node, ast.Dict):
            pairs = list(zip(node.keys, node.values, strict=True))
            for k, v in pairs:
                if k is None:
                    raise Untranslated("a dict with ** is not translated")
                key = self._const(k)
                held[key] = self._held_value(name, key, v)
            return held
        saved = self._save_scope()
        try:
            if len(node.generators) != 1:
                raise Untranslated("a dict comprehension of several loops is not translated")
            g = node.generators[0]
            items = self._iterate(g.iter)
            if items is None:
                raise Untranslated(f"a dict comprehension over {self._source(g.iter)}")
            for item in items:
                self._bind_target(g.target, item, stmt)
                if all(self._const(cond) for cond in g.ifs):
                    key = self._const(node.key)
                    held[key] = self._held_value(name, key, node.value)
        finally:
            self._restore_scope(saved)
        return held

    def _ids_given(self, ids: tuple[int, ...], node: ast.expr) -> Expr:
        """``np.array(ids)`` of a list of whole numbers the translation knows: a given
        tensor of them (the same list again is the same given)."""
        literal = (tuple(str(k) for k in ids), (len(ids),), False)
        step = self._anonymous.get(literal)
        if step is None:
            step = self._fresh("ids")
            self._emit(Given(step, literal[0], literal[1], self._where(node)))
            self._anonymous[literal] = step
        return Var(step)

    def _rows_picked(self, base: Expr, ids: Any) -> Expr | None:
        """``E[ids]`` with ``ids`` a list of whole numbers the translation knows: those rows
        of ``E``, in order (``None``: ``ids`` is not such a list)."""
        if not whole_numbers(ids):
            return None
        return call("stack", *(call("getitem", base, index=str(k)) for k in ids), axis=0)

    def _dict_get(self, node: ast.Call) -> Expr | None:
        """``E.get(word, default)`` of a dict the translation holds, or of one written out
        (``{"cat": e_cat, …}.get(w, e_the)``); ``None``: no such call."""
        func = node.func
        if not isinstance(func, ast.Attribute) or func.attr != "get":
            return None
        if isinstance(func.value, ast.Dict):
            return self._written_get(func.value, node)
        if isinstance(func.value, ast.Name) and func.value.id in self.dicts and node.args:
            key = self._const(node.args[0])
            if key in self.dicts[func.value.id] or len(node.args) < 2:
                return self._held(func.value.id, key)
            return self._operand(node.args[1])
        return None

    def _written_get(self, d: ast.Dict, node: ast.Call) -> Expr:
        """``{"cat": e_cat, …}.get(w, e_the)`` of a dict written out with constant keys:
        the value written for the key, or the default."""
        if not 1 <= len(node.args) <= 2 or node.keywords or any(k is None for k in d.keys):
            raise Untranslated(f"{self._source(node)} is not translated")
        keys = [self._const(k) for k in d.keys if k is not None]
        key = self._const(node.args[0])
        if key in keys:
            return self._operand(d.values[keys.index(key)])
        if len(node.args) < 2:
            raise Untranslated(f"{self._source(node)} gets None")
        return self._operand(node.args[1])

    def _held_value(self, name: str, key: Any, node: ast.expr) -> Any:
        """One value of a dict: a constant, or a tensor (a literal is a given named
        after the dict and the key)."""
        c = self._const_or_none(node)
        if c is not None:
            return c
        literal = self._literal(node)
        if literal is not None:
            values, shape, f32 = literal
            step = self._fresh(f"{name}_{key}")
            self._emit(Given(step, values, shape, self._where(node), f32))
            self.float32 |= f32
            return Var(step)
        return self._argument(node)

    def _held(self, owner: str, key: Any) -> Expr:
        """``E["cat"]``: the tensor (or number) a dict holds under a constant key."""
        held = self.dicts[owner]
        if key not in held:
            raise Untranslated(f"{owner} has no key {key!r}")
        value = held[key]
        if is_expr(value):
            return value  # type: ignore[no-any-return]
        if isinstance(value, (int, float, DecimalText)) and not isinstance(value, bool):
            return Num(num_text(value))
        raise Untranslated(f"{owner}[{key!r}] is not a number or a tensor")

    # -- arrays filled entry by entry --
    def _index_of(self, name: str, node: ast.expr) -> tuple[int, ...]:
        """A constant index into a buffer, with negative entries counted from the end."""
        items = node.elts if isinstance(node, ast.Tuple) else [node]
        shape = self.buffers[name].shape
        if len(items) > len(shape):
            raise Untranslated("an index with more axes than the array")
        out = []
        for it, n in zip(items, shape, strict=False):
            if isinstance(it, ast.Slice):
                raise Untranslated("a slice is not one entry")
            k = self._int(it)
            if not -n <= k < n:
                raise Untranslated(f"an index {k} past the end of an axis of {n}")
            out.append(k % n)
        return tuple(out)

    def _selection(self, name: str, node: ast.expr) -> tuple[list[list[int]], list[bool]]:
        """The positions an index selects on each axis (``a[:, 0::2]``), and which axes an
        integer index drops."""
        items = node.elts if isinstance(node, ast.Tuple) else [node]
        shape = self.buffers[name].shape
        if len(items) > len(shape):
            raise Untranslated("an index with more axes than the array")
        picked: list[list[int]] = []
        dropped: list[bool] = []
        for axis, n in enumerate(shape):
            it = items[axis] if axis < len(items) else ast.Slice()
            if isinstance(it, ast.Slice):
                bounds = [
                    None if b is None else self._int(b) for b in (it.lower, it.upper, it.step)
                ]
                if bounds[2] == 0:
                    raise Untranslated("a slice with a step of 0")
                picked.append(list(range(*slice(*bounds).indices(n))))
                dropped.append(False)
            else:
                k = self._int(it)
                if not -n <= k < n:
                    raise Untranslated(f"an index {k} past the end of an axis of {n}")
                picked.append([k % n])
                dropped.append(True)
        return picked, dropped

    def _entry(self, name: str, node: ast.expr) -> Expr | None:
        """``a[i]`` of a buffer, when that entry was assigned or is known (else None)."""
        try:
            idx = self._index_of(name, node)
        except Untranslated:
            return None
        b = self.buffers[name]
        if idx in b.entries:
            return b.entries[idx]
        if any(idx[: len(k)] == k or k[: len(idx)] == idx for k in b.entries):
            return None  # part of it assigned: read from the whole
        if b.source is not None:
            return call("getitem", b.source, index=", ".join(str(k) for k in idx))
        if len(idx) == len(b.shape) and b.base is not None:
            return Num(b.base)
        return None

    def _assign_entry(self, target: ast.Subscript, value: ast.expr | Expr, stmt: ast.stmt) -> None:
        """``a[i, j] = v`` or ``a[:, 0::2] = v`` into an array changed entry by entry (``v``
        written in the code, or a value already translated: a part of a tuple unpacked)."""
        assert isinstance(target.value, ast.Name)
        name = target.value.id
        for other in self._aliases(name):  # b = a; a[i] = …: b is that array too
            raise Untranslated(f"{other} holds the same array, changed in place here")
        b = self.buffers[name]
        picked, dropped = self._selection(name, target.slice)
        count = 1
        for p in picked:
            count *= len(p)
        if count > _MAX_ENTRIES_CHANGED:
            raise Untranslated(f"a change of {count} entries in place is not translated")
        expr = self._operand(value) if isinstance(value, ast.expr) else value
        kept = [len(p) for p, d in zip(picked, dropped, strict=True) if not d]
        items = target.slice.elts if isinstance(target.slice, ast.Tuple) else [target.slice]
        whole = not any(isinstance(it, ast.Slice) for it in items)
        if whole:  # a[i] = row, a[i, j] = v: one entry (or one row) assigned whole
            idx = self._index_of(name, target.slice)
            self._clear(b, idx)
            b.entries[idx] = expr
        else:
            shape = self._shape(expr)
            if shape is None or (shape and tuple(shape) != tuple(kept)):
                raise Untranslated(
                    f"assigning a value of shape {shape} into a selection of shape "
                    f"{tuple(kept)} is not translated"
                )
            if shape and not isinstance(expr, Var):
                step = self._fresh("assigned")
                source = self._source(value if isinstance(value, ast.expr) else stmt)
                self._emit(Step(step, expr, self._where(stmt), source))
                expr = Var(step)
            for cell in itertools.product(*picked):
                at = [
                    str(p.index(k)) for k, p, d in zip(cell, picked, dropped, strict=True) if not d
                ]
                self._clear(b, cell)
                b.entries[cell] = call("getitem", expr, index=", ".join(at)) if shape else expr
        self.names.pop(name, None)  # read back as the stack of its entries from now on
        self.opaque.pop(name, None)

    def _failed_before(self, target: ast.expr, stmt: ast.stmt) -> None:
        """``a[i] = …`` in a loop whose earlier iteration could not translate this line:
        the same reason again (not "``a`` is not translated" nested in it once per item).

        Raises:
            Untranslated: The line failed before, for ``a``.
        """
        if isinstance(target, ast.Subscript) and isinstance(target.value, ast.Name):
            lost = self.opaque.get(target.value.id, "")
            where = f"{self._where(stmt)}: "
            if lost.startswith(where):
                raise Untranslated(lost.removeprefix(where))

    def _clear(self, b: Buffer, idx: tuple[int, ...]) -> None:
        """Make room for an entry at ``idx``: entries under it go, and an entry over it (a
        row assigned whole) is split into its own entries."""
        for k in [k for k in b.entries if k[: len(idx)] == idx and k != idx]:
            del b.entries[k]
        for depth in range(len(idx) - 1, 0, -1):
            row = idx[:depth]
            if row in b.entries:
                whole = b.entries.pop(row)
                for c in range(b.shape[depth]):
                    b.entries[(*row, c)] = call("getitem", whole, index=str(c))

    def _filled(self, name: str, node: ast.AST) -> Expr:
        """An array filled entry by entry, read whole: the stack of its entries."""
        b = self.buffers[name]
        expr = self._stack_of(b, (), name, node)
        step = self._fresh(name)
        self._emit(Step(step, expr, self._where(node), f"{name}, filled entry by entry"))
        self.names[name] = step
        return Var(step)

    def _stack_of(self, b: Buffer, prefix: tuple[int, ...], name: str, node: ast.AST) -> Expr:
        if prefix in b.entries:
            return b.entries[prefix]
        under = any(k[: len(prefix)] == prefix for k in b.entries)
        if not under and b.source is not None:
            if not prefix:
                return b.source
            return call("getitem", b.source, index=", ".join(str(k) for k in prefix))
        if len(prefix) == len(b.shape):
            if b.base is None:
                raise Untranslated(
                    f"entry {list(prefix)} of an array made with empty() is never assigned"
                )
            return Num(b.base)
        n = b.shape[len(prefix)]
        if b.base is not None and not under:
            return call("zeros" if b.base == "0" else "ones", shape=list(b.shape[len(prefix) :]))
        parts = [self._stack_of(b, (*prefix, k), name, node) for k in range(n)]
        return self._joined(parts, name, node)

    def _joined(self, parts: list[Expr], name: str, node: ast.AST) -> Expr:
        """``stack(parts…)``, written in steps of at most a few hundred characters each (a
        step's text is bounded): runs of parts stacked, then their runs joined."""
        if sum(len(render(p, {})) + 2 for p in parts) <= _MAX_TEXT:
            return call("stack", *parts)
        runs: list[Expr] = []
        run: list[Expr] = []
        size = 0
        for p in [*parts, None]:
            width = len(render(p, {})) + 2 if p is not None else 0
            if run and (p is None or size + width > _MAX_TEXT):
                step = self._fresh(f"{name}_part")
                self._emit(Step(step, call("stack", *run), self._where(node), f"part of {name}"))
                runs.append(Var(step))
                run, size = [], 0
            if p is not None:
                run.append(p)
                size += width
        return call("concat", *runs, axis=0)


def _bounded(items: list[Any], limit: int) -> list[Any]:
    """``items``, when there are at most ``limit`` of them.

    Raises:
        Untranslated: More than ``limit`` items.
    """
    if len(items) > limit:
        raise Untranslated(f"it has {len(items)} items, more than the {limit} unrolled")
    return items


def _assigned(s: ast.stmt) -> list[ast.expr]:
    """The targets a statement assigns."""
    if isinstance(s, ast.Assign):
        return list(s.targets)
    if isinstance(s, (ast.AugAssign, ast.AnnAssign)):
        return [s.target]
    return []


def _names_in(target: ast.expr) -> list[str]:
    """The names a target binds (``a``, ``a, b``), not an entry or an attribute it changes."""
    if isinstance(target, ast.Name):
        return [target.id]
    if isinstance(target, (ast.Tuple, ast.List)):
        return [n for e in target.elts for n in _names_in(e)]
    return []


def quiet_assignment(s: ast.stmt) -> bool:
    """An assignment of names that prints nothing (no call of ``print`` or ``display``)."""
    targets = _assigned(s)
    if not targets or not all(
        _names_in(t) and isinstance(t, (ast.Name, ast.Tuple, ast.List)) for t in targets
    ):
        return False
    return not any(
        isinstance(n, ast.Call)
        and isinstance(n.func, ast.Name)
        and n.func.id in ("print", "display")
        for n in ast.walk(s)
    )


def returns_tuple(f: NotebookFunction) -> bool:
    """Whether a function's body ends in ``return a, b``."""
    returns = [s for s in f.body if isinstance(s, ast.Return)]
    return bool(returns) and isinstance(returns[0].value, ast.Tuple)


def assigned_names(s: ast.stmt) -> list[str]:
    """The names a statement assigns (``a = …``, ``a, b = …``)."""
    return [n for t in _assigned(s) for n in _names_in(t)]


def whole_numbers(c: Any) -> bool:
    """A non-empty list of whole numbers the translation knows (``ids = [2, 3, 2]``)."""
    return (
        isinstance(c, tuple)
        and bool(c)
        and all(isinstance(k, int) and not isinstance(k, bool) for k in c)
    )
