"""Autograd in code: ``backward()``, ``.grad``, ``torch.autograd.grad``, ``no_grad`` and optimizers.

Each tensor created with ``requires_grad=True`` is a leaf; a ``backward()`` adds
∂y/∂w to the ``.grad`` of each leaf it reaches (PyTorch accumulates), and reading
``w.grad`` is a ``grad`` step of the registry, or the sum of several. What autograd
does not follow (a detached value, an in-place change, untranslated code) leaves the
gradient unknown, never guessed.
"""

from __future__ import annotations

import ast
from typing import cast

from symtf.draft.templates import Expr, Var, call, variables
from symtf.draft.translate.events import Step
from symtf.draft.translate.expressions import Expressions
from symtf.draft.translate.scope import ARRAY_MAKERS, Leaf, Untranslated

#: What autograd does not follow: a value read through these is detached from its inputs.
_DETACHING = {"detach", "data", "item", "tolist", "numpy"}


#: In-place changes translated as the augmented assignment they are (``w.sub_(d)``: ``w -= d``).
_IN_PLACE: dict[str, type[ast.operator]] = {
    "add_": ast.Add,
    "sub_": ast.Sub,
    "mul_": ast.Mult,
    "div_": ast.Div,
}


def makes_leaf(node: ast.expr) -> bool:
    """Whether an expression creates a tensor that requires grad: ``requires_grad=True``
    (``torch.tensor([…], requires_grad=True)``), ``nn.Parameter(t)``, ``t.requires_grad_()``."""
    if not isinstance(node, ast.Call):
        return False
    for kw in node.keywords:
        if kw.arg == "requires_grad":
            return isinstance(kw.value, ast.Constant) and kw.value.value is True
    func = node.func
    if isinstance(func, ast.Attribute) and func.attr == "requires_grad_":
        return not node.args or (
            isinstance(node.args[0], ast.Constant) and node.args[0].value is True
        )
    name = func.attr if isinstance(func, ast.Attribute) else getattr(func, "id", "")
    return name == "Parameter"


class Autograd(Expressions):
    """Gradients of the translated steps (see the module docstring)."""

    def _turns_grad_off(self, node: ast.expr) -> bool:
        """``torch.no_grad()``, ``torch.inference_mode()``, ``torch.set_grad_enabled(False)``."""
        if not isinstance(node, ast.Call):
            return False
        name = (self._dotted(node.func) or "").rsplit(".", 1)[-1]
        if name in ("no_grad", "inference_mode"):
            return True
        return (
            name == "set_grad_enabled"
            and bool(node.args)
            and (self._const_or_none(node.args[0]) is False)
        )

    def _detaches(self, node: ast.expr) -> bool:
        """Whether an expression reads a value autograd does not follow (``.detach()``,
        ``.data``, ``.item()``, ``torch.tensor(x)`` of a variable), here or in a notebook
        function it calls."""
        seen: set[str] = set()
        todo: list[ast.AST] = [node]
        while todo:
            n = todo.pop()
            for sub in ast.walk(n):
                if isinstance(sub, ast.Attribute) and sub.attr in _DETACHING:
                    return True
                if not isinstance(sub, ast.Call):
                    continue
                dotted = self._dotted(sub.func)
                module = self._module_name(dotted) if dotted else None
                if module in ARRAY_MAKERS and sub.args and self._literal(sub) is None:
                    return True
                fn = sub.func.id if isinstance(sub.func, ast.Name) else None
                if fn is not None and fn in self.functions and fn not in seen:
                    seen.add(fn)
                    todo.extend(self.functions[fn].body)
        return False

    def _tuple_parts(self, node: ast.expr) -> list[Expr | str] | None:
        """The elements of a tuple of tensors (a variable holding one, or the call)."""
        if isinstance(node, ast.Name) and node.id in self.tuples:
            return self.tuples[node.id]
        if self._is_autograd(node):
            return self._autograd(cast(ast.Call, node), self._stmt_of(node))
        if isinstance(node, ast.Call) and self._is_topk(node):
            return list(self._topk(node))
        return None

    def _is_autograd(self, node: ast.expr) -> bool:
        return isinstance(node, ast.Call) and self._dotted(node.func) == "torch.autograd.grad"

    def _autograd(
        self, node: ast.Call, stmt: ast.stmt, hints: list[str] | None = None
    ) -> list[Expr | str]:
        """``torch.autograd.grad(y, w)`` or ``(y, [w, b])``: one ``grad`` step per tensor, or
        why one has none (the tuple's elements, in order). ``hints`` name the steps: the
        variables assigned (one for the tuple, or one per element).

        Raises:
            Untranslated: Arguments other than a scalar output, its inputs and
                ``retain_graph``/``create_graph``/``allow_unused``.
        """
        named = dict(zip(("outputs", "inputs"), node.args, strict=False))
        for kw in node.keywords:
            if kw.arg in ("outputs", "inputs"):
                named[kw.arg] = kw.value
            elif kw.arg not in ("retain_graph", "create_graph", "allow_unused"):
                raise Untranslated(f"torch.autograd.grad with {kw.arg}= is not translated")
        if len(node.args) > 2 or set(named) != {"outputs", "inputs"}:
            raise Untranslated("torch.autograd.grad with these arguments is not translated")
        y = self._scalar_step(named["outputs"], "torch.autograd.grad")
        xs = named["inputs"]
        items = xs.elts if isinstance(xs, (ast.List, ast.Tuple)) else [xs]
        out: list[Expr | str] = []
        for k, item in enumerate(items):
            hint = None
            if hints and len(hints) == len(items):
                hint = hints[k]
            elif hints:
                hint = f"{hints[0]}_{k}"
            try:
                x, versions = self._variable(item)
                out.append(self._grad_step([(y, x)], versions, node, stmt, hint))
            except Untranslated as e:
                out.append(str(e))
        return out

    def _variable(self, node: ast.expr) -> tuple[str, set[str]]:
        """The step a gradient is taken with respect to, and every step that is the same
        tensor for autograd (a leaf's values before in-place changes)."""
        if not isinstance(node, ast.Name):
            raise Untranslated(f"a gradient with respect to {self._source(node)}")
        leaf = self.leaves.get(node.id)
        step = self.names.get(node.id)
        if step is None and node.id in self.printed_opaque and node.id in self.opaque:
            step = node.id  # its printed value stands for it
        if step is None:
            raise Untranslated(f"{node.id} is not translated")
        return step, set(leaf.versions) if leaf is not None else {step}

    def _scalar_step(self, node: ast.expr, what: str) -> str:
        """The step of a one-entry tensor a gradient is taken of (an expression gets one)."""
        if isinstance(node, ast.Name) and node.id in self.names:
            y = self.names[node.id]
        elif isinstance(node, ast.Name) and node.id in self.opaque:
            raise Untranslated(f"{what} of {node.id}, which is not translated")
        else:
            y = self._fresh("output")
            self._emit(Step(y, self._expr(node), self._where(node), self._source(node)))
        if y in self.cut:
            raise Untranslated(
                f"{what} of a step that reads a detached value or was computed under "
                "torch.no_grad() (not translated)"
            )
        shape = self.shape_of(y)
        if shape is None:
            raise Untranslated(f"{what} of a tensor whose shape is not known")
        size = 1
        for d in shape:
            size *= d
        if size != 1:
            raise Untranslated(f"{what} of a tensor of {size} entries (not a scalar)")
        return y

    def _reach(self, y: str) -> tuple[set[str], set[str], set[str]]:
        """What ``y`` is computed from, stopping at autograd's leaves: every step and given
        reached, those reached along paths with no detached step, and the names that stand
        for untranslated code (whose own inputs are unknown)."""
        stops = {v for leaf in self.leaves.values() for v in leaf.versions}
        reached: set[str] = set()
        clean: set[str] = set()
        unknown: set[str] = set()
        todo = [(y, True)]
        while todo:
            name, ok = todo.pop()
            if name in reached and (not ok or name in clean):
                continue
            reached.add(name)
            if ok:
                clean.add(name)
            if name in stops and name != y:
                continue
            expr = self.exprs.get(name)
            if expr is None:
                if name not in self.givens and name not in stops:
                    unknown.add(name)
                continue
            ok = ok and name not in self.cut
            todo.extend((v, ok) for v in variables(expr))
        return reached, clean, unknown

    def _grad_step(
        self,
        terms: list[tuple[str, str]],
        versions: set[str],
        node: ast.AST,
        stmt: ast.stmt,
        hint: str | None = None,
    ) -> Var:
        """The step of Σ ∂y/∂x over ``terms``: one ``grad(y, x)`` step each, then their sum
        (``hint`` names it, if it is new).

        Raises:
            Untranslated: A ``y`` that reads another version of ``x`` (changed in place),
                reads ``x`` through a detached value, or reads code that is not translated.
        """
        names = []
        for y, x in terms:
            reached, clean, unknown = self._reach(y)
            if unknown:
                raise Untranslated(
                    f"{y} is computed from {sorted(unknown)[0]}, whose computation is not "
                    "translated (a gradient may flow through it)"
                )
            hit = versions & reached
            if hit != {x} or x not in clean:
                if not hit:
                    raise Untranslated(f"{y} does not depend on {x}")
                raise Untranslated(
                    f"the gradient of {y} reaches {x} through a detached value or an earlier "
                    "value of it (changed in place): not translated"
                )
            key: tuple[tuple[str, str], ...] = ((y, x),)
            if key not in self._grad_steps:
                self._grad_steps[key] = self._fresh(
                    hint if hint and len(terms) == 1 else f"grad_{x}"
                )
                self._emit(
                    Step(
                        self._grad_steps[key],
                        call("grad", Var(y), Var(x)),
                        self._where(stmt),
                        f"{self._source(node)}: ∂{y}/∂{x}",
                    )
                )
            names.append(self._grad_steps[key])
        if len(names) == 1:
            return Var(names[0])
        key = tuple(terms)
        if key not in self._grad_steps:
            total: Expr = Var(names[0])
            for n in names[1:]:
                total = call("add", total, Var(n))
            self._grad_steps[key] = self._fresh(hint or f"grad_{terms[0][1]}")
            self._emit(
                Step(
                    self._grad_steps[key],
                    total,
                    self._where(stmt),
                    f"{self._source(node)}: {len(names)} backward() calls accumulated",
                )
            )
        return Var(self._grad_steps[key])

    def _grad_of(self, node: ast.Attribute) -> Expr:
        """``w.grad``: what the ``backward()`` calls so far accumulated into it."""
        base = node.value
        if not isinstance(base, ast.Name):
            raise Untranslated(f"{self._source(node)} is not translated")
        leaf = self.leaves.get(base.id)
        if leaf is None:
            raise Untranslated(
                f"{base.id}.grad: {base.id} is not a tensor created with requires_grad=True "
                "in the translated code"
            )
        if leaf.unknown:
            raise Untranslated(f"{base.id}.grad is not known: {leaf.unknown}")
        if not leaf.terms:
            if leaf.base == "zero":
                shape = self.shape_of(leaf.versions[-1])
                if shape is None:
                    raise Untranslated(f"{base.id}.grad: zeros of a shape not known")
                return call("zeros", shape=list(shape))
            if leaf.base == "either":
                raise Untranslated(
                    f"{base.id}.grad after zero_grad() is None or zeros, by PyTorch version"
                )
            raise Untranslated(f"{base.id}.grad is None: no backward() reached {base.id}")
        return self._grad_step(
            leaf.terms, set(leaf.versions), node, self._stmt_of(node), f"{base.id}_grad"
        )

    def _stmt_of(self, node: ast.AST) -> ast.stmt:
        """A statement to place a step at (a node's own line)."""
        stmt = ast.Pass()
        ast.copy_location(stmt, node)
        return stmt

    def _weighted_output(self, owner: ast.expr, gradient: ast.expr, node: ast.Call) -> str:
        """``y.backward(gradient=g)`` is ``(y * g).sum().backward()``, ``g`` held constant:
        the step of that sum.

        Raises:
            Untranslated: ``y`` not translated, ``g`` of another shape than ``y``, or ``g``
                computed from a tensor that requires grad.
        """
        if isinstance(owner, ast.Name) and owner.id in self.names:
            y = self.names[owner.id]
        else:
            y = self._fresh("output")
            self._emit(Step(y, self._expr(owner), self._where(owner), self._source(owner)))
        if y in self.cut:
            raise Untranslated(
                "backward() of a step that reads a detached value or was computed under "
                "torch.no_grad() (not translated)"
            )
        g = self._operand(gradient)
        stops = {v for leaf in self.leaves.values() for v in leaf.versions}
        if any(self._reach(v)[0] & stops for v in variables(g)):
            raise Untranslated("backward(gradient=…) with a gradient that requires grad")
        y_shape, g_shape = self._known_shape(y), self._shape(g)
        if y_shape is None or g_shape is None or tuple(y_shape) != tuple(g_shape):
            raise Untranslated(
                f"backward(gradient=…) with a gradient of shape {g_shape} for a tensor of "
                f"shape {y_shape}"
            )
        out = self._fresh("weighted_output")
        self._emit(
            Step(
                out,
                call("sum", call("mul", Var(y), g)),
                self._where(node),
                f"{self._source(node)}: the sum of {y} times the gradient given",
            )
        )
        return out

    def _backward(self, node: ast.Call) -> None:
        """``y.backward()``: ∂y/∂w added to the ``.grad`` of each leaf ``w`` it reaches.

        A leaf it reaches in a way not translated (through a detached value, an earlier
        value, or untranslated code) gets an unknown ``.grad``; if ``y`` itself is not
        translated, every leaf does.
        """
        assert isinstance(node.func, ast.Attribute)
        try:
            gradient = node.args[0] if len(node.args) == 1 else None
            for k in node.keywords:
                if k.arg == "gradient" and gradient is None and not node.args:
                    gradient = k.value
                elif k.arg not in ("retain_graph", "create_graph"):
                    raise Untranslated(f"backward() with {k.arg}= is not translated")
            if len(node.args) > 1:
                raise Untranslated("backward() with these arguments is not translated")
            if gradient is None:
                y = self._scalar_step(node.func.value, "backward()")
            else:
                y = self._weighted_output(node.func.value, gradient, node)
        except Untranslated as e:
            for leaf in self.leaves.values():
                leaf.unknown = leaf.unknown or f"{self._where(node)}: {e}"
            raise
        reached, clean, unknown = self._reach(y)
        for var, leaf in self.leaves.items():
            if leaf.unknown:
                continue
            x = leaf.versions[-1]
            hit = set(leaf.versions) & reached
            if unknown:
                leaf.unknown = (
                    f"{self._where(node)}: {y} is computed from {sorted(unknown)[0]}, whose "
                    "computation is not translated"
                )
            elif hit and (hit != {x} or x not in clean):
                leaf.unknown = (
                    f"{self._where(node)}: the gradient reaches {var} through a detached value "
                    "or an earlier value of it"
                )
            elif hit:
                leaf.terms.append((y, x))

    def _autograd_call(self, v: ast.Call) -> bool:
        """Statements about gradients: ``backward()``, ``zero_grad()``, ``.grad.zero_()``,
        ``requires_grad_()``, an optimizer's ``step()``, in-place changes (``w.sub_(…)``).
        Returns whether the statement was one.

        Raises:
            Untranslated: One whose effect is not translated (its tensors are marked so).
        """
        assert isinstance(v.func, ast.Attribute)
        owner, method = v.func.value, v.func.attr
        where = f"{self._where(v)}: {self._source(v)}"
        if method == "backward":
            self._backward(v)
            return True
        if method == "zero_" and isinstance(owner, ast.Attribute):
            inner = owner.value if owner.attr == "data" else owner
            if (
                isinstance(inner, ast.Attribute)
                and inner.attr == "grad"
                and isinstance(inner.value, ast.Name)
            ):
                if inner.value.id in self.leaves:
                    self.leaves[inner.value.id].reset("zero")
                return True
        if method == "requires_grad_" and isinstance(owner, ast.Name):
            on = self._const_or_none(v.args[0]) if v.args else True
            step = self.names.get(owner.id)
            if on is False:
                self.leaves.pop(owner.id, None)
            elif step is not None and owner.id not in self.leaves:
                self.leaves[owner.id] = Leaf([step])
            return True
        if method in ("zero_grad", "step") and isinstance(owner, ast.Name):
            params = self.optimizers.get(owner.id)
            if params is None and owner.id not in self.opaque:
                return False  # not an optimizer the code built
            touched = params if params is not None else list(self.leaves)
            for var in touched:
                leaf = self.leaves.get(var)
                if method == "zero_grad":
                    if leaf is not None and params is not None:
                        keyword = next(
                            (k.value for k in v.keywords if k.arg == "set_to_none"), None
                        )
                        flag = self._const_or_none(keyword) if keyword is not None else None
                        leaf.reset(
                            "none" if flag is True else "zero" if flag is False else "either"
                        )
                    elif leaf is not None:
                        leaf.unknown = f"{where}: which tensors it zeroes is not translated"
                    continue
                # an optimizer's update is not translated: the values it changes are unknown
                self.names.pop(var, None)
                self.opaque[var] = f"{where}: changed in place by an optimizer (not translated)"
                if leaf is not None:
                    leaf.versions.append(var)
            if method == "step":
                raise Untranslated("an optimizer's update is not translated")
            return True
        if method in _IN_PLACE and isinstance(owner, ast.Name) and len(v.args) == 1:
            if v.keywords:
                raise Untranslated(f"{method} with keywords is not translated")
            change = ast.AugAssign(ast.Name(owner.id, ast.Store()), _IN_PLACE[method](), v.args[0])
            ast.copy_location(change, v)
            ast.copy_location(change.target, owner)
            self._statement(change, is_last=False)
            return True
        if method.endswith("_") and isinstance(owner, ast.Name) and owner.id in self.names:
            # another in-place change (fill_, clamp_, …): the variable's value is unknown
            self.names.pop(owner.id, None)
            self.opaque[owner.id] = f"{where}: changed in place (not translated)"
            if owner.id in self.leaves:
                self.leaves[owner.id].versions.append(owner.id)
            raise Untranslated(f"the in-place .{method}() is not translated")
        return False

    def _grad_attribute(self, target: ast.Attribute, value: ast.expr) -> None:
        """``w.requires_grad = True`` and ``w.grad = None``."""
        if not isinstance(target.value, ast.Name):
            raise Untranslated("assigning to an attribute is not translated")
        name = target.value.id
        v = self._const_or_none(value)
        if target.attr == "requires_grad":
            step = self.names.get(name)
            if v is False:
                self.leaves.pop(name, None)
            elif v is True and step is not None and name not in self.leaves:
                self.leaves[name] = Leaf([step])
            return
        leaf = self.leaves.get(name)
        if leaf is not None and isinstance(value, ast.Constant) and value.value is None:
            leaf.reset("none")
            return
        if leaf is not None:
            leaf.unknown = "its .grad was assigned a value that is not translated"
        raise Untranslated("assigning to .grad is not translated")

    def _optimizer_params(self, value: ast.expr) -> list[str] | None:
        """``torch.optim.SGD([w, b], lr=0.1)``: the variables it updates, when written out."""
        if not isinstance(value, ast.Call) or not value.args:
            return None
        dotted = self._dotted(value.func) or ""
        if not dotted.startswith("torch.optim."):
            return None
        params = value.args[0]
        if isinstance(params, (ast.List, ast.Tuple)) and all(
            isinstance(e, ast.Name) for e in params.elts
        ):
            return [cast(ast.Name, e).id for e in params.elts]
        return None
