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

from symtf.draft.templates import Var
from symtf.draft.translate.autograd import makes_leaf
from symtf.draft.translate.events import Given, Note, Step
from symtf.draft.translate.outputs import Outputs
from symtf.draft.translate.prints import comment_outputs
from symtf.draft.translate.scope import (
    Leaf,
    NotebookFunction,
    Untranslated,
)
from symtf.draft.translate.sources import Block, without_magics
from symtf.draft.translate.table import Translation
from symtf.draft.translate.torch import MODULES

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


class Translator(Outputs):
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
            prints: list[tuple[str, list[Any]]] = []
            body = [s for s in tree.body if not isinstance(s, (ast.Import, ast.ImportFrom))]
            for stmt in tree.body:
                if isinstance(stmt, (ast.Import, ast.ImportFrom)):
                    self._import(stmt)
            last = body[-1] if body else None
            comments = comment_outputs(block)
            for stmt in body:
                self._events = []
                self._inner_prints = []
                shown = self._statement(stmt, is_last=stmt is last)
                yield from self._events
                prints.extend(self._inner_prints)
                after = comments.get(getattr(stmt, "end_lineno", 0) or 0)
                if after is not None:
                    # "print(x)  # tensor([[…]])" or "y = x @ w" followed by "# tensor(…)"
                    items = shown[1] if shown is not None else self._assigned(stmt)
                    text, lines, typed, named = after
                    if named is not None and named not in _targets(stmt):
                        items = []  # "# y ≈ …" under a statement that does not assign y
                    if items:
                        yield from self._match(items, [(text, lines)], typed=typed)
                    continue
                if shown is not None:
                    prints.append(shown)
            yield from self._outputs(block, prints)

    def _statement(self, stmt: ast.stmt, *, is_last: bool) -> Any:
        """Translate one statement; returns a print record when it prints."""
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
                    for s in stmt.body:
                        shown = self._statement(s, is_last=False)
                        if shown is not None:  # print(x) under ``with torch.no_grad():``
                            self._inner_prints.append(shown)
                finally:
                    self.no_grad -= off
            elif isinstance(stmt, ast.FunctionDef):
                self._function(stmt)
            elif isinstance(stmt, ast.ClassDef):
                self.module_stubs.discard(stmt.name)
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
            else:
                self._emit(
                    Note(
                        self._where(stmt),
                        self._source(stmt),
                        f"a {type(stmt).__name__.lower()} statement is not translated",
                    )
                )
        except Untranslated as e:
            self._emit(Note(self._where(stmt), self._source(stmt), str(e), tuple(_targets(stmt))))
            for t in _targets(stmt):
                self.opaque[t] = f"{self._where(stmt)}: {e}"
                self.names.pop(t, None)
                self.consts.pop(t, None)
                self.tuples.pop(t, None)
        finally:
            self._cutting = False
        return None

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
        simple = all(isinstance(s, (ast.Assign, ast.Return, ast.AugAssign)) for s in body)
        if (
            not simple
            or not body
            or not isinstance(body[-1], ast.Return)
            or stmt.args.vararg
            or stmt.args.kwarg
        ):
            self._emit(
                Note(
                    self._where(stmt),
                    f"def {stmt.name}(…)",
                    "only functions of assignments and a return are inlined",
                )
            )
            self.opaque[stmt.name] = "a function that is not translated"
            return
        self.functions[stmt.name] = NotebookFunction([a.arg for a in stmt.args.args], body)

    def _loop(self, stmt: ast.For) -> None:
        values = self._range(stmt.iter)
        if values is None or not isinstance(stmt.target, ast.Name) or stmt.orelse:
            raise Untranslated("a loop over anything but a literal range is not unrolled")
        name = stmt.target.id
        for v in values:
            self.consts[name] = v
            for s in stmt.body:
                if isinstance(s, (ast.Break, ast.Continue, ast.Return)):
                    raise Untranslated("a loop with break or continue is not unrolled")
                self._statement(s, is_last=False)
        self.consts.pop(name, None)

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
            raise Untranslated("unpacking a value that is not a literal tuple is not translated")
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
        self.tuples.pop(name, None)
        self.optimizers.pop(name, None)
        if self._is_autograd(value):
            self.tuples[name] = self._autograd(cast(ast.Call, value), stmt, [name])
            self.names.pop(name, None)
            self.consts.pop(name, None)
            self.opaque.pop(name, None)
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
            self.modules[name] = module
            self.opaque.pop(name, None)
            return
        const = self._const_or_none(value)
        if const is not None:
            self.consts[name] = const
            self.names.pop(name, None)
            self.opaque.pop(name, None)
            return
        self.defs[name] = value
        literal = self._literal(value)
        if literal is not None:
            values, shape, f32 = literal
            step = self._fresh(name)
            self._emit(Given(step, values, shape, self._where(stmt), f32))
            self.float32 |= f32
            self._bind(name, step)
            return
        expr = self._expr(value)
        step = self._fresh(name)
        self._emit(Step(step, expr, self._where(stmt), self._source(stmt)))
        self._bind(name, step)
