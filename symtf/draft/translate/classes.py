"""A module class the notebook defines, read as one function of its settings and inputs.

``class LayerNorm(nn.Module)`` with ``__init__(self, emb_dim)`` setting ``self.eps``,
``self.scale`` and ``self.shift``, and ``forward(self, x)`` computing from them: an
instance made with ``ln = LayerNorm(emb_dim=6)`` and called as ``ln(x)`` computes what
one function ``f(emb_dim, x)`` would, whose body is ``__init__``'s then ``forward``'s,
each ``self.name`` read as a local name. That function is inlined where the instance is
called, as the notebook's own functions are. A class that reads ``self`` otherwise (passes
it on, calls its own methods) is not read so.
"""

from __future__ import annotations

import ast

from symtf.draft.translate.scope import ModuleClass, NotebookFunction, placed_as

__all__ = ["SELF_PREFIX", "ModuleClass", "module_function"]

#: ``self.eps`` is read as the local name ``self__eps``.
SELF_PREFIX = "self__"


def module_function(cls: ast.ClassDef) -> ModuleClass | None:
    """The function an instance of ``cls`` computes when called, or None.

    Its parameters are ``__init__``'s, then ``forward``'s (``self`` left out); None when
    the class has no ``forward``, when a name is a parameter of both, or when ``self``
    is read other than as ``self.name``.
    """
    methods = {s.name: s for s in cls.body if isinstance(s, ast.FunctionDef)}
    forward = methods.get("forward")
    if forward is None:
        return None
    init = methods.get("__init__")
    parts = [m for m in (init, forward) if m is not None]
    params: list[str] = []
    defaults: dict[str, ast.expr] = {}
    for m in parts:
        a = m.args
        if a.vararg or a.kwarg or a.posonlyargs or a.kwonlyargs or not a.args:
            return None
        if a.args[0].arg != "self":
            return None
        names = [p.arg for p in a.args[1:]]
        if set(names) & set(params) or len(a.defaults) > len(names):
            return None
        params += names
        for p, d in zip(names[len(names) - len(a.defaults) :], a.defaults, strict=True):
            defaults[p] = d
    body: list[ast.stmt] = []
    for m in parts:
        for s in _undocumented(m.body):
            if m is init and _is_super_init(s):
                continue
            body.append(s)
    renamed = [_SelfToLocal().visit(s) for s in body]
    if any(isinstance(n, ast.Name) and n.id == "self" for s in renamed for n in ast.walk(s)):
        return None
    for s in renamed:
        ast.fix_missing_locations(s)
    inputs = tuple(p.arg for p in forward.args.args[1:])
    return ModuleClass(NotebookFunction(params, renamed, defaults), inputs)


def _undocumented(body: list[ast.stmt]) -> list[ast.stmt]:
    first = body[0] if body else None
    if isinstance(first, ast.Expr) and isinstance(first.value, ast.Constant):
        return body[1:]
    return body


def _is_super_init(s: ast.stmt) -> bool:
    """``super().__init__()`` (with or without arguments)."""
    return (
        isinstance(s, ast.Expr)
        and isinstance(s.value, ast.Call)
        and isinstance(s.value.func, ast.Attribute)
        and s.value.func.attr == "__init__"
        and isinstance(s.value.func.value, ast.Call)
        and isinstance(s.value.func.value.func, ast.Name)
        and s.value.func.value.func.id == "super"
    )


class _SelfToLocal(ast.NodeTransformer):
    """``self.name`` → ``self__name`` (the method bodies are copied, never changed)."""

    def visit_Attribute(self, node: ast.Attribute) -> ast.expr:
        if isinstance(node.value, ast.Name) and node.value.id == "self":
            return placed_as(ast.Name(SELF_PREFIX + node.attr, node.ctx), node)
        return ast.copy_location(ast.Attribute(self.visit(node.value), node.attr, node.ctx), node)
