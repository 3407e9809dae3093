"""The walk through code blocks: statements, assignments, loops and functions, in order.

:class:`Translator` yields the events of the blocks (:mod:`symtf.draft.translate.events`):
an array literal is a :class:`Given`, an assignment of an array expression a
:class:`Step`, a statement with no translation a :class:`Note` saying why, and each
printed value a :class:`Shown`.
"""

from __future__ import annotations

import ast
from collections.abc import Iterator
from typing import Any, cast

from symtf.draft.templates import Call, Var
from symtf.draft.translate.autograd import makes_leaf
from symtf.draft.translate.classes import module_function
from symtf.draft.translate.conventions import conventional_aliases
from symtf.draft.translate.events import Given, Note, Shown, Step
from symtf.draft.translate.iteration import FILLERS
from symtf.draft.translate.prints import comment_outputs, inline_comment_values
from symtf.draft.translate.restated import Restated, named_comment_values
from symtf.draft.translate.scope import (
    Buffer,
    Leaf,
    NotebookFunction,
    Unknown,
    Untranslated,
    stamp,
)
from symtf.draft.translate.sources import Block, without_magics
from symtf.draft.translate.table import Translation
from symtf.draft.translate.torch import MODULES, RANDOM_INIT

#: Functions an exercise may declare without a body (``def softmax(logits): ...``) and
#: then show examples of: each is read as the op its name says, with no other argument
#: than the op's tensors (a stub with more parameters or keywords is not translated).
STUBS: dict[str, Translation] = {
    "softmax": Translation("softmax", ("input",), {}, {"axis": -1}),
    "log_softmax": Translation("log_softmax", ("input",), {}, {"axis": -1}),
    "relu": Translation("relu", ("input",), {}),
    "sigmoid": Translation("sigmoid", ("input",), {}),
    "tanh": Translation("tanh", ("input",), {}),
    "silu": Translation("silu", ("input",), {}),
    "gelu": Translation("gelu", ("input",), {}),
    **{
        name: Translation("cross_entropy", ("input", "target"), {}, {}, ("input", "target"))
        for name in ("cross_entropy", "cross_entropy_loss", "softmax_cross_entropy")
    },
}


#: Ops that only move a tensor's entries: a literal restating their result restates them.
_REARRANGING = frozenset({"reshape", "transpose", "T", "permute", "squeeze", "unsqueeze"})


def _is_stub_class(stmt: ast.ClassDef) -> bool:
    """A class of methods without bodies (docstrings and ``...`` only): an exercise's outline."""
    methods = [s for s in stmt.body if isinstance(s, ast.FunctionDef)]
    rest = [
        s
        for s in stmt.body
        if not isinstance(s, ast.FunctionDef)
        and not (isinstance(s, ast.Expr) and isinstance(s.value, ast.Constant))
        and not isinstance(s, ast.Pass)
    ]
    return bool(methods) and not rest and all(_is_stub(_undocumented(m.body)) for m in methods)


def _undocumented(body: list[ast.stmt]) -> list[ast.stmt]:
    first = body[0] if body else None
    if (
        isinstance(first, ast.Expr)
        and isinstance(first.value, ast.Constant)
        and first.value.value is not Ellipsis
    ):
        return body[1:]  # a docstring
    return body


def _is_stub(body: list[ast.stmt]) -> bool:
    """A function body that only stands for one: ``...``, ``pass``, ``raise NotImplementedError``."""
    if not body:
        return True
    if len(body) != 1:
        return False
    s = body[0]
    if isinstance(s, ast.Pass):
        return True
    if isinstance(s, ast.Expr) and isinstance(s.value, ast.Constant) and s.value.value is Ellipsis:
        return True
    if isinstance(s, ast.Raise) and s.exc is not None:
        exc = s.exc.func if isinstance(s.exc, ast.Call) else s.exc
        return isinstance(exc, ast.Name) and exc.id == "NotImplementedError"
    return False


def _changed(stmt: ast.stmt) -> list[str]:
    """The variables a statement changes in place (``x[i] = …``, ``x.w = …``)."""
    names = []
    for node in ast.walk(stmt):
        if isinstance(node, (ast.Subscript, ast.Attribute)) and isinstance(node.ctx, ast.Store):
            base = node.value
            while isinstance(base, (ast.Subscript, ast.Attribute)):
                base = base.value
            if isinstance(base, ast.Name):
                names.append(base.id)
    return names


def _is_procedure(stmt: ast.FunctionDef, body: list[ast.stmt]) -> bool:
    """A function of no parameters that returns nothing and changes no global: a script's
    ``def main():`` whose body is what a call of it runs."""
    a = stmt.args
    if a.args or a.vararg or a.kwarg or a.posonlyargs or a.kwonlyargs or stmt.decorator_list:
        return False
    return bool(body) and not any(
        isinstance(n, (ast.Return, ast.Global, ast.Nonlocal, ast.Yield, ast.YieldFrom))
        for s in body
        for n in ast.walk(s)
    )


class _Break(Exception):
    """A ``break`` reached in an unrolled loop: the loop ends here."""


class _Continue(Exception):
    """A ``continue`` reached in an unrolled loop: the next item starts here."""


def _targets(stmt: ast.stmt) -> list[str]:
    """The variables a statement assigns, or changes in place (``x[i] = …``)."""
    names = []
    for node in ast.walk(stmt):
        if isinstance(node, ast.Name) and isinstance(node.ctx, ast.Store):
            names.append(node.id)
        elif isinstance(node, (ast.Subscript, ast.Attribute)) and isinstance(node.ctx, ast.Store):
            base = node.value
            while isinstance(base, (ast.Subscript, ast.Attribute)):
                base = base.value
            if isinstance(base, ast.Name):
                names.append(base.id)
    return names


class Translator(Restated):
    """Walks code blocks in order and yields what they define, compute and print.

    Args:
        shape_of: The shape of a translated variable's value so far (``None`` if unknown);
            the translation asks it for ``x.shape``, ``len(x)`` and axis permutations.
    """

    def events(self, code: list[Block]) -> Iterator[Any]:
        """Every event of the blocks in order: Given, Step, Note and Shown records."""
        for block in code:
            self._block = block
            self._src = without_magics(block.text)
            try:
                tree = ast.parse(self._src)
            except (SyntaxError, ValueError) as e:
                yield Note(
                    block.where(getattr(e, "lineno", 1) or 1),
                    "",
                    f"not Python: {e.__class__.__name__}",
                )
                continue
            stamp(tree, self._src, block)
            prints: list[tuple[str, list[Any]]] = []
            body = [s for s in tree.body if not isinstance(s, (ast.Import, ast.ImportFrom))]
            for stmt in tree.body:
                if isinstance(stmt, (ast.Import, ast.ImportFrom)):
                    self._import(stmt)
            self.aliases.update(conventional_aliases(tree, self.aliases, self.names))
            last = body[-1] if body else None
            comments = comment_outputs(block)
            inline = inline_comment_values(block)
            worked = inline_comment_values(block, worked=True)
            restating = named_comment_values(block)
            for stmt in body:
                self._events = []
                self._inner_prints = []
                self._loosened = []
                shown = self._statement(stmt, is_last=stmt is last)
                yield from self._events
                prints.extend(self._inner_prints)
                end = getattr(stmt, "end_lineno", 0) or 0
                after = comments.get(end)
                if after is None and isinstance(stmt, (ast.Assign, ast.AugAssign, ast.AnnAssign)):
                    after = inline.get(end)  # "x = W @ h  # = [0.35, -1.2]"
                    if after is None and set(_targets(stmt)) <= set(self.opaque):
                        # "scale = k.shape[-1] ** 0.5  # sqrt(4) = 2.0": the value it stands for
                        after = worked.get(end)
                if after is not None:
                    # "print(x)  # tensor([[…]])" or "y = x @ w" followed by "# tensor(…)"
                    items = shown[1] if shown is not None else self._assigned(stmt)
                    text, lines, typed, named = after
                    if named is not None and named not in _targets(stmt):
                        items = []  # "# y ≈ …" under a statement that does not assign y
                    if items:
                        yield from self._match(items, [(text, lines)], typed=typed)
                        if shown is not None:  # its output is there all the same, claimed
                            prints.append((f"{shown[0]}-claimed", shown[1]))
                        continue
                if shown is not None:
                    prints.append(shown)
                elif after is None and end in restating:  # "# freqs = [1.0, 0.982, ...]"
                    yield from self._restated(stmt, restating[end])
            yield from self._outputs(block, prints)

    def _statement(self, stmt: ast.stmt, *, is_last: bool) -> Any:
        """Translate one statement; returns a print record when it prints."""
        mark = len(self._inner_prints)
        try:
            if isinstance(stmt, ast.Assign):
                self._assign(stmt.targets, stmt.value, stmt)
            elif isinstance(stmt, ast.AnnAssign) and stmt.value is not None:
                self._assign([stmt.target], stmt.value, stmt)
            elif isinstance(stmt, ast.AugAssign):
                op = ast.BinOp(stmt.target, stmt.op, stmt.value)
                ast.copy_location(op, stmt)
                target = (
                    ast.Name(stmt.target.id, ast.Store())
                    if isinstance(stmt.target, ast.Name)
                    else stmt.target
                )
                self._assign([target], op, stmt)
            elif isinstance(stmt, ast.Expr):
                return self._expression_statement(stmt, is_last=is_last)
            elif isinstance(stmt, ast.For):
                self._loop(stmt)
            elif isinstance(stmt, ast.With):
                off = any(self._turns_grad_off(item.context_expr) for item in stmt.items)
                self.no_grad += off
                try:
                    for s in stmt.body:  # print(x) under ``with torch.no_grad():``
                        self._nested_statement(s)
                finally:
                    self.no_grad -= off
            elif isinstance(stmt, ast.If):
                # if i == j: … in an unrolled loop: the branch its constant condition takes
                empty = isinstance(stmt.test, ast.Name) and self.tuples.get(stmt.test.id) == []
                taken = False if empty else self._const(stmt.test)  # if generated: (none yet)
                for s in stmt.body if taken else stmt.orelse:
                    self._nested_statement(s)
            elif isinstance(stmt, ast.FunctionDef):
                self._function(stmt)
            elif isinstance(stmt, ast.ClassDef):
                self.module_stubs.discard(stmt.name)
                self.classes.pop(stmt.name, None)
                instance = module_function(stmt) if not _is_stub_class(stmt) else None
                if instance is not None:
                    self.classes[stmt.name] = instance
                    self.opaque.pop(stmt.name, None)
                if stmt.name in MODULES and _is_stub_class(stmt):
                    self.module_stubs.add(stmt.name)
                    self._emit(
                        Note(
                            self._where(stmt),
                            f"class {stmt.name}",
                            f"has no bodies: read by its name as torch.nn.{stmt.name}",
                        )
                    )
                else:
                    self._emit(
                        Note(self._where(stmt), f"class {stmt.name}", "a class is not translated")
                    )
            elif isinstance(stmt, (ast.Pass, ast.Assert)):
                pass
            elif isinstance(stmt, ast.Break):  # only an unrolled loop walks its body
                raise _Break
            elif isinstance(stmt, ast.Continue):
                raise _Continue
            else:
                self._emit(
                    Note(
                        self._where(stmt),
                        self._source(stmt),
                        f"a {type(stmt).__name__.lower()} statement is not translated",
                    )
                )
        except Untranslated as e:
            self.rng = None  # code not translated may have drawn from the random state
            self.np_stream = None
            targets = _targets(stmt)
            # a change in place (x[i] = …) changes every name that holds the same array
            targets += [a for t in _changed(stmt) for a in self._aliases(t) if a not in targets]
            self._emit(Note(self._where(stmt), self._source(stmt), str(e), tuple(targets)))
            unknown = _unknown_print(stmt)
            if unknown is not None and isinstance(stmt, (ast.For, ast.While, ast.Expr)):
                # a loop that prints, not translated: what it printed is not told apart,
                # but its lines still stand between the prints around it
                del self._inner_prints[mark:]
                self._lose_targets(targets, stmt, e)
                return unknown
            self._lose_targets(targets, stmt, e)
        finally:
            self._cutting = False
        return None

    def _lose_targets(self, targets: list[str], stmt: ast.stmt, e: Untranslated) -> None:
        """Names an untranslated statement assigns: not known from here on, and why."""
        drawn = self._float32_draw(stmt)
        for t in targets:
            self.opaque[t] = f"{self._where(stmt)}: {e}"
            if drawn:
                self.f32_drawn.add(t)
            else:
                self.f32_drawn.discard(t)
            self.names.pop(t, None)
            self.consts.pop(t, None)
            self.tuples.pop(t, None)
            self.dicts.pop(t, None)
            self.buffers.pop(t, None)
            self.lazy.pop(t, None)
            self.opaque_shapes.pop(t, None)
        if (
            isinstance(stmt, ast.Assign)
            and len(stmt.targets) == 1
            and isinstance(stmt.targets[0], ast.Name)
        ):  # W = torch.rand(3, 2): its values are not known, its shape is
            shape = self._shape_only(stmt.value)
            if shape is not None:
                self.opaque_shapes[stmt.targets[0].id] = shape

    def _function(self, stmt: ast.FunctionDef) -> None:
        body = stmt.body
        if body and isinstance(body[0], ast.Expr) and isinstance(body[0].value, ast.Constant):
            body = body[1:]  # a docstring
        self.stubs.pop(stmt.name, None)
        if _is_stub(body) and stmt.name.lower() in STUBS and not stmt.args.vararg:
            # "def softmax(logits): ..." and an example of what it returns: the exercise
            # names the function; it is read as the op of that name
            t = STUBS[stmt.name.lower()]
            self.stubs[stmt.name] = t
            self.functions.pop(stmt.name, None)
            self.opaque.pop(stmt.name, None)
            self._emit(
                Note(
                    self._where(stmt),
                    f"def {stmt.name}(…)",
                    f"has no body: read by its name as {t.op}"
                    + (" along the last axis" if "axis" in t.defaults else ""),
                )
            )
            return
        args = stmt.args
        self.procedures.pop(stmt.name, None)
        if _is_procedure(stmt, body):
            # def example(): … then example(): the body runs where the call stands
            self.procedures[stmt.name] = body
            self.functions.pop(stmt.name, None)
            self.opaque.pop(stmt.name, None)
            return
        if (
            not any(isinstance(s, ast.Return) for s in body)
            or args.vararg
            or args.kwarg
            or args.posonlyargs
            or args.kwonlyargs
        ):
            self._emit(
                Note(
                    self._where(stmt),
                    f"def {stmt.name}(…)",
                    "only functions with named parameters and a return are inlined",
                )
            )
            self.functions.pop(stmt.name, None)
            self.opaque[stmt.name] = "a function that is not translated"
            return
        params = [a.arg for a in args.args]
        # def layer_norm(x, eps=1e-5): the last parameters have the defaults written
        defaults = dict(zip(params[len(params) - len(args.defaults) :], args.defaults, strict=True))
        self.functions[stmt.name] = NotebookFunction(params, body, defaults)
        self.opaque.pop(stmt.name, None)

    def _loop(self, stmt: ast.For) -> None:
        """A ``for`` loop, unrolled: its body once per item, each print once per iteration."""
        if stmt.orelse:
            raise Untranslated("a loop with an else is not unrolled")
        if any(isinstance(n, ast.Return) for n in ast.walk(stmt)):
            raise Untranslated("a loop with return is not unrolled")
        items = self._loop_items(stmt.iter)
        source = f"{self._source(stmt.target)} in {self._source(stmt.iter)}"
        self._iterations *= len(items) or 1
        try:
            for item in items:
                self._bind_target(stmt.target, item, stmt, source)
                try:
                    for s in stmt.body:
                        self._nested_statement(s)
                except _Continue:
                    continue
                except _Break:  # under an if whose condition the translation decides
                    break
        finally:
            self._iterations //= len(items) or 1

    def _assign(self, targets: list[ast.expr], value: ast.expr, stmt: ast.stmt) -> None:
        if len(targets) != 1:
            raise Untranslated("a chained assignment is not translated")
        target = targets[0]
        if isinstance(target, ast.Attribute) and target.attr in ("requires_grad", "grad"):
            self._grad_attribute(target, value)
            return
        if isinstance(target, ast.Attribute) and target.attr in ("weight", "bias", "data"):
            self._module_weight(target, value)
            return
        if isinstance(target, (ast.Tuple, ast.List)) and (
            self._is_autograd(value) or (isinstance(value, ast.Call) and self._is_topk(value))
        ):
            hints = [t.id if isinstance(t, ast.Name) else "grad" for t in target.elts]
            parts = (
                self._autograd(cast(ast.Call, value), stmt, hints)
                if self._is_autograd(value)
                else list(self._topk(cast(ast.Call, value)))
            )
            if len(parts) != len(target.elts) or not all(
                isinstance(t, ast.Name) for t in target.elts
            ):
                raise Untranslated("unpacking a tuple of tensors into other than its tensors")
            for t, part in zip(target.elts, parts, strict=True):
                assert isinstance(t, ast.Name)
                self._forget(t.id)
                if isinstance(part, Var):
                    self._bind(t.id, part.name)
                elif isinstance(part, str):
                    self.opaque[t.id] = f"{self._where(stmt)}: {part}"
                else:
                    step = self._fresh(t.id)
                    self._emit(Step(step, part, self._where(stmt), self._source(stmt)))
                    self._bind(t.id, step)
            return
        if isinstance(target, (ast.Tuple, ast.List)):
            if isinstance(value, (ast.Tuple, ast.List)) and len(value.elts) == len(target.elts):
                for t, v in zip(target.elts, value.elts, strict=True):
                    self._assign([t], v, stmt)
                return
            # q, k, v = attention(x): a function's tuple, or the rows of a tensor
            self._bind_target(target, self._tuple_value(value), stmt)
            return
        if isinstance(target, ast.Subscript) and isinstance(target.value, ast.Name):
            owner = target.value.id
            if owner not in self.buffers and owner in self.names and owner not in self.leaves:
                # angles[:, 0::2] = np.sin(angles[:, 0::2]): an array computed before, now
                # changed in place; every entry not assigned keeps its value
                shape = self._known_shape(self.names[owner])
                if shape:
                    self.buffers[owner] = Buffer(shape, None, source=Var(self.names[owner]))
            if owner in self.buffers:
                self._assign_entry(target, value, stmt)
                return
        if isinstance(target, ast.Subscript) and self._slice_literal(target, value, stmt):
            return  # attn[0][0] = [[…]]: one slice of a tensor the code does not compute
        self._failed_before(target, stmt)
        if not isinstance(target, ast.Name):
            raise Untranslated("assigning into an index or attribute is not translated")
        name = target.id
        in_place = isinstance(stmt, ast.AugAssign)
        leaf = self.leaves.get(name)  # the value may read its .grad (w -= lr * w.grad)
        new_leaf = makes_leaf(value)
        self._cutting = self._detaches(value)
        try:
            self._assign_name(name, value, stmt)
        except Untranslated:
            self.leaves.pop(name, None)
            if new_leaf:  # drawn at random, say: its print may stand for it
                self.leaves[name] = Leaf([name])
            elif in_place and leaf is not None:
                leaf.versions.append(name)
                leaf.unknown = leaf.unknown or f"{name} was changed in place by untranslated code"
                self.leaves[name] = leaf
            raise
        self.leaves.pop(name, None)  # assigned anew: another tensor, unless changed in place
        now = self.names.get(name)
        if new_leaf and now is not None:
            self.leaves[name] = Leaf([now])
        elif in_place and leaf is not None and now is not None:
            # w -= lr * w.grad: the same tensor, changed in place (the gradient stays)
            leaf.versions.append(now)
            if not self.no_grad:
                leaf.unknown = leaf.unknown or (
                    f"{name}, which requires grad, was changed in place outside torch.no_grad()"
                )
            self.leaves[name] = leaf

    def _forget(self, name: str) -> None:
        """A variable assigned anew: a different tensor from now on."""
        self.tuples.pop(name, None)
        self.leaves.pop(name, None)
        self.optimizers.pop(name, None)

    def _assign_name(self, name: str, value: ast.expr, stmt: ast.stmt) -> None:
        self.instances.pop(name, None)
        if (
            isinstance(value, ast.Call)
            and isinstance(value.func, ast.Name)
            and value.func.id in self.classes
        ):  # ln = LayerNorm(emb_dim=6): computed where it is called
            self.instances[name] = (self.classes[value.func.id], value)
            for held in (self.names, self.consts, self.opaque, self.tuples, self.modules):
                held.pop(name, None)
            return
        if self._made_of_own_list(name, value, stmt):
            return  # scores = torch.tensor(scores), scores a list filled in a loop
        self.tuples.pop(name, None)
        self.texts.pop(name, None)
        self.optimizers.pop(name, None)
        if self._is_autograd(value):
            self.tuples[name] = self._autograd(cast(ast.Call, value), stmt, [name])
            self.names.pop(name, None)
            self.consts.pop(name, None)
            self.opaque.pop(name, None)
            return
        if self._jacobian(name, value, stmt):
            return
        if isinstance(value, ast.Call) and self._is_topk(value):
            # m = torch.max(x, 1): a pair, read as m.values, m.indices, m[0], m[1]
            self.tuples[name] = list(self._topk(value))
            self.names.pop(name, None)
            self.consts.pop(name, None)
            self.opaque.pop(name, None)
            return
        optimized = self._optimizer_params(value)
        if optimized is not None:
            self.optimizers[name] = optimized
            self.names.pop(name, None)
            self.opaque.pop(name, None)
            return
        module = self._module_of(value)
        if module is not None:
            if module.kind in RANDOM_INIT:
                self.rng = None  # its weights are drawn
            self.modules[name] = module
            self.opaque.pop(name, None)
            return
        self.dicts.pop(name, None)
        self.buffers.pop(name, None)
        const = self._const_or_none(value)
        if const is None:
            const = self._words(value)
        if const is not None:
            self.consts[name] = const
            self.names.pop(name, None)
            self.opaque.pop(name, None)
            return
        if self._is_text(value) and not isinstance(value, ast.Constant):
            # row = f"{t:>4} | " + " | ".join(…): what it shows, read here (see texts.py)
            self.texts[name] = self._shown_args(value)
            self.names.pop(name, None)
            self.opaque.pop(name, None)
            return
        if isinstance(value, (ast.ListComp, ast.List, ast.Tuple)) and self._literal(value) is None:
            # rows = [x @ w for x in xs]: a Python list of tensors, stacked where an array
            # is made of it (np.array(rows), torch.stack(rows))
            self.tuples[name] = list(
                self._comprehension(value)
                if isinstance(value, ast.ListComp)
                else [self._operand(e) for e in value.elts]
            )
            self.names.pop(name, None)
            self.consts.pop(name, None)
            self.opaque.pop(name, None)
            return
        if isinstance(value, (ast.Dict, ast.DictComp)):
            self.dicts[name] = self._dict_of(name, value, stmt)
            self.names.pop(name, None)
            self.consts.pop(name, None)
            self.opaque.pop(name, None)
            return
        if (
            isinstance(value, ast.Call)
            and isinstance(value.func, ast.Name)
            and value.func.id in self.functions
        ):
            returned = self._call_function(self.functions[value.func.id], value)
            if isinstance(returned, list):  # out = attention(x), a tuple: out[0], out[1]
                missing = next((v for v in returned if isinstance(v, Unknown)), None)
                if missing is not None:
                    raise Untranslated(missing.reason)
                self.tuples[name] = list(returned)
                self.names.pop(name, None)
                self.consts.pop(name, None)
                self.opaque.pop(name, None)
                return
            if isinstance(returned, Var):
                self._bind(name, returned.name)
            else:
                step = self._fresh(name)
                self._emit(Step(step, returned, self._where(stmt), self._source(stmt)))
                self._bind(name, step)
            return
        empty = self._empty(value)
        if empty is not None:  # a = torch.empty(n): read back only once filled
            self.buffers[name] = Buffer(empty, None)
            self.names.pop(name, None)
            self.consts.pop(name, None)
            self.opaque.pop(name, None)
            return
        self.defs[name] = value
        literal = self._literal(value)
        if literal is not None:
            values, shape, f32 = literal
            replaces = self.names.get(name)
            shown = self._shows(name, value, values, shape)
            if shown is not None:  # judged against the step; later code reads it as written
                self._emit(shown)
            step = self._fresh(name)
            self._emit(
                Given(
                    step,
                    values,
                    shape,
                    self._where(stmt),
                    f32,
                    replaces,
                    self._literal_rows(value, values, shape)[1] if shape else (),
                    self._block.cell if self._block else None,
                    self._entry_places(value) if len(shape) == 2 else (),
                )
            )
            self.float32 |= f32
            self._bind(name, step)
            return
        expr = self._expr(value)
        step = self._fresh(name)
        self._emit(Step(step, expr, self._where(stmt), self._source(stmt)))
        self._bind(name, step)
        self._fill_later(name, value)

    def _shows(
        self, name: str, value: ast.expr, values: tuple[str, ...], shape: tuple[int, ...]
    ) -> Shown | None:
        """An array literal that writes out a value the code has just rearranged: a claim on it.

        A walkthrough computes ``queries = queries.view(b, t, h, d)`` (or ``.transpose(1, 2)``)
        and then writes ``queries_split = [[[…]]]`` to show what it holds: a new name that
        extends the variable's (its name, ``_`` and a word), of the same shape, restates its
        value when the step only moved entries (a view, reshape or transpose: the literal
        cannot be another quantity of that shape, as ``scores_softmax`` after ``scores = q @
        k.T`` is). Its entries are then judged against the step as printed values; later
        code still reads the literal as written.
        """
        if name in self.names or name in self.opaque:
            return None  # the name assigned anew (a rounded stand-in for its value)
        computed = [
            var
            for var, step in self.names.items()
            if name.startswith(var + "_")
            and isinstance(self.exprs.get(step), Call)
            and cast(Call, self.exprs[step]).op in _REARRANGING
        ]
        if not computed:
            return None
        var = max(computed, key=len)  # q_k_split: the longest name it extends
        step = self.names[var]
        if self._known_shape(step) != shape or not shape:
            return None
        rows, lines = self._literal_rows(value, values, shape)
        cell = self._block.cell if self._block else None
        return Shown(
            step,
            name,
            rows,
            lines,
            cell,
            None,
            False,
            vector=len(shape) == 1,
            complete=self._complete(Var(step)),
            restates=True,
        )

    def _jacobian(self, name: str, value: ast.expr, stmt: ast.stmt) -> bool:
        """``j = torch.autograd.functional.jacobian(f, x)`` of a function ``f`` the notebook
        defines and a variable ``x``: ``f`` is translated at ``x`` (as a call would be),
        and ``j`` is the Jacobian of its value by ``x``. Returns whether ``value`` is one.

        Raises:
            Untranslated: Another function (a lambda, a module), more arguments, or keywords
                (``create_graph=…``, ``vectorize=…``).
        """
        if not isinstance(value, ast.Call) or self._dotted(value.func) not in (
            "torch.autograd.functional.jacobian",
            "autograd.functional.jacobian",
            "functional.jacobian",
        ):
            return False
        f, x = [*value.args, None, None][:2] if len(value.args) <= 2 else (None, None)
        if (
            value.keywords
            or not isinstance(f, ast.Name)
            or f.id not in self.functions
            or not isinstance(x, ast.Name)
            or x.id not in self.names
        ):
            raise Untranslated(
                "torch.autograd.functional.jacobian is translated only of a function the "
                "notebook defines, at one variable, without keywords"
            )
        at = ast.copy_location(ast.Call(func=f, args=[x], keywords=[]), value)
        returned = self._call_function(self.functions[f.id], at)
        if isinstance(returned, list):
            raise Untranslated(f"{f.id} returns a tuple: its Jacobian is not translated")
        where, source = self._where(stmt), self._source(stmt)
        if isinstance(returned, Var):
            y = returned.name
        else:
            y = self._fresh(f"{f.id}_value")
            self._emit(Step(y, returned, where, source))
        step = self._fresh(name)
        self._emit(Step(step, Call("jacobian", (Var(y), Var(self.names[x.id]))), where, source))
        self._bind(name, step)
        return True

    def _empty(self, value: ast.expr) -> tuple[int, ...] | None:
        """The shape of ``np.empty(shape)``, ``torch.empty(n, m)`` or ``empty_like(x)``."""
        if not isinstance(value, ast.Call) or (
            value.keywords and any(k.arg not in ("dtype", "device") for k in value.keywords)
        ):
            return None
        made = (self._dotted(value.func) or "").rsplit(".", 1)[-1]
        if made == "empty" and value.args:
            return tuple(self._shape_args(value.args))
        if made == "empty_like" and len(value.args) == 1:
            shape = self._shape(self._expr(value.args[0]))
            if shape is None:
                raise Untranslated("empty_like of a tensor whose shape is not known")
            return shape
        return None

    def _words(self, value: ast.expr) -> tuple[Any, ...] | None:
        """A list of words (and whole numbers): ``tokens = ["the", "cat"]``, kept as constants;
        also a comprehension of them (``[id2tok[i] for i in generated]``)."""
        if isinstance(value, ast.ListComp):
            held = self._const_items(value)
            if held and all(isinstance(v, (str, int)) and not isinstance(v, bool) for v in held):
                return held
            return None
        if not isinstance(value, (ast.List, ast.Tuple)) or not value.elts:
            return None
        items = [self._const_or_none(e) for e in value.elts]
        if any(isinstance(v, str) for v in items) and all(
            isinstance(v, (str, int)) and not isinstance(v, bool) for v in items
        ):
            return tuple(items)
        return None

    def _tuple_value(self, value: ast.expr) -> Any:
        """The value an unpacking reads: a function's tuple, a tuple held by a name, or a
        tensor (whose first axis it unpacks)."""
        if (
            isinstance(value, ast.Call)
            and isinstance(value.func, ast.Name)
            and value.func.id in self.functions
        ):
            returned = self._call_function(self.functions[value.func.id], value)
            return tuple(returned) if isinstance(returned, list) else returned
        return self._argument(value)

    def _fill_later(self, name: str, value: ast.expr) -> None:
        """Remember an array the code just made (``np.zeros((n, n))``, ``x.copy()``), which it
        may then fill entry by entry (``a[i, j] = …``)."""
        if not isinstance(value, ast.Call):
            return
        made = (self._dotted(value.func) or "").rsplit(".", 1)[-1]
        copy = isinstance(value.func, ast.Attribute) and value.func.attr in ("copy", "clone")
        step = self.names[name]
        shape = self._known_shape(step)
        if (made not in FILLERS and not copy) or not shape:
            return
        if copy:  # each entry not assigned is the copy's
            self.buffers[name] = Buffer(shape, None, source=Var(step))
        else:
            self.buffers[name] = Buffer(shape, FILLERS[made])


def _unknown_print(stmt: ast.stmt) -> tuple[str, list[Any]] | None:
    """A print record for a statement that prints but is not translated: ``("print-unknown",
    [("unknown", None, words, None, many)])``, ``words`` the text its first print starts
    with (how its lines are told from the others) and ``many`` whether it may print any
    number of times (a loop), or None if it prints nothing."""
    for n in ast.walk(stmt):
        if isinstance(n, ast.Call) and isinstance(n.func, ast.Name) and n.func.id == "print":
            first = n.args[0] if n.args else None
            words = ""
            if isinstance(first, ast.Constant) and isinstance(first.value, str):
                words = first.value
            elif isinstance(first, ast.JoinedStr) and first.values:
                lead = first.values[0]
                if isinstance(lead, ast.Constant) and isinstance(lead.value, str):
                    words = lead.value
            many = not isinstance(stmt, ast.Expr)  # a loop may print any number of lines
            return ("print-unknown", [("unknown", None, words.strip(), None, many)])
    return None
