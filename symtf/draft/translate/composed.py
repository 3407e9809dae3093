"""Framework functions that are a few ops of the step language, written out as those ops.

A norm is the square root of a sum of squares; ``F.normalize`` divides by it; cosine
similarity divides a dot product by two of them; an outer product multiplies a column by a
row; ``F.scaled_dot_product_attention`` is ``softmax(q kᵀ/√d) v``. Each is translated only in
the form whose definition is that formula (documented by its framework):

- ``torch.norm(x)``, ``x.norm()``, ``torch.linalg.norm``, ``torch.linalg.vector_norm`` and
  ``np.linalg.norm``, of the whole tensor or along one axis (``dim``/``axis``, ``keepdim``),
  with no order or order 2 (``'fro'`` for a matrix): ``sqrt(sum(x * x))``. Another order,
  or order 2 of a matrix (its largest singular value), is not translated;
- ``F.normalize(x, p=2, dim=1, eps=1e-12)``: ``x / max(‖x‖ along dim, eps)``;
- ``F.cosine_similarity(a, b, dim=1, eps=1e-8)``: ``sum(a * b) / max(‖a‖ ‖b‖, eps)`` along
  ``dim``;
- ``torch.outer(a, b)`` and ``np.outer``: ``a`` as a column times ``b`` as a row;
- ``F.scaled_dot_product_attention(q, k, v)`` with no mask, no dropout and not causal:
  ``softmax(q @ kᵀ / √d) @ v``, ``d`` the last axis of ``q`` (or ``scale`` when given).
"""

from __future__ import annotations

import ast
from typing import Any

from symtf.draft.templates import Expr, Num, call
from symtf.draft.translate.literals import Literals
from symtf.draft.translate.scope import DecimalText, Untranslated, num_text

__all__ = ["Composed"]

#: (module, function) → the parameter names of its positionals, in order.
_NORMS = {
    ("torch", "norm"): ("input", "p", "dim", "keepdim"),
    ("torch.linalg", "norm"): ("input", "ord", "dim", "keepdim"),
    ("torch.linalg", "vector_norm"): ("input", "ord", "dim", "keepdim"),
    ("numpy.linalg", "norm"): ("input", "ord", "axis", "keepdims"),
    ("jax.numpy.linalg", "norm"): ("input", "ord", "axis", "keepdims"),
}
_OTHERS = {
    ("torch.nn.functional", "normalize"): ("input", "p", "dim", "eps"),
    ("torch.nn.functional", "cosine_similarity"): ("x1", "x2", "dim", "eps"),
    ("torch", "cosine_similarity"): ("x1", "x2", "dim", "eps"),
    ("torch", "outer"): ("input", "vec2"),
    ("numpy", "outer"): ("a", "b"),
    ("torch.nn.functional", "scaled_dot_product_attention"): (
        "query",
        "key",
        "value",
        "attn_mask",
        "dropout_p",
        "is_causal",
        "scale",
    ),
}
#: Keywords accepted and ignored (they do not change the values).
_IGNORED = frozenset({"out", "dtype"})


class Composed(Literals):
    """The functions of the module docstring, as ops of the step language."""

    def _composed(self, mod: str, fname: str, node: ast.Call) -> Expr | None:
        """The call written out as ops (``None``: not one of these functions)."""
        names = _NORMS.get((mod, fname)) or _OTHERS.get((mod, fname))
        if names is None:
            return None
        args = self._bound(names, node.args, node.keywords, f"{mod}.{fname}")
        if (mod, fname) in _NORMS:
            return self._norm(args, names, f"{fname}")
        if fname == "normalize":
            return self._normalize(args)
        if fname == "cosine_similarity":
            return self._cosine(args)
        if fname == "outer":
            a, b = (args[n] for n in names)
            return self._outer(a, b)
        return self._sdpa(args)

    def _composed_method(self, name: str, node: ast.Call) -> Expr | None:
        """``x.norm(…)`` written out as ops (``None``: not that method)."""
        if name != "norm":
            return None
        assert isinstance(node.func, ast.Attribute)
        names = ("p", "dim", "keepdim")
        args = self._bound(names, node.args, node.keywords, ".norm()")
        args["input"] = node.func.value
        return self._norm(args, ("input", *names), "norm")

    # -- the functions ----------------------------------------------------------------

    def _bound(
        self, names: tuple[str, ...], args: list[ast.expr], keywords: list[ast.keyword], what: str
    ) -> dict[str, ast.expr]:
        if len(args) > len(names) or any(isinstance(a, ast.Starred) for a in args):
            raise Untranslated(f"{what} with these arguments is not translated")
        bound: dict[str, ast.expr] = dict(zip(names, args, strict=False))
        for kw in keywords:
            if kw.arg in _IGNORED:
                continue
            if kw.arg is None or kw.arg not in names or kw.arg in bound:
                raise Untranslated(f"{what} with the argument {kw.arg} is not translated")
            bound[kw.arg] = kw.value
        return bound

    def _value(self, node: ast.expr | None) -> Any:
        """A written constant (a decimal as its float), ``None`` when absent or not one."""
        value = None if node is None else self._const_or_none(node)
        return value.value if isinstance(value, DecimalText) else value

    def _axis(self, node: ast.expr | None) -> int | None:
        if node is None or self._value(node) is None:
            return None
        value = self._value(node)
        if isinstance(value, bool) or not isinstance(value, int):
            raise Untranslated("a norm along several axes is not translated")
        return value

    def _flag(self, node: ast.expr | None) -> bool:
        value = self._value(node)
        if value not in (None, True, False):
            raise Untranslated("a keepdim that is not a written True or False")
        return bool(value)

    def _two_norm(self, x: Expr, axis: int | None, keep: bool) -> Expr:
        """``sqrt(sum(x * x))`` over every entry, or along ``axis``."""
        params: dict[str, Any] = {}
        if axis is not None:
            params["axis"] = axis
        if keep:
            params["keepdims"] = True
        return call("sqrt", call("sum", call("mul", x, x), **params))

    def _norm(self, args: dict[str, ast.expr], names: tuple[str, ...], what: str) -> Expr:
        x = self._expr(args["input"])
        order = self._value(args.get(names[1])) if names[1] in args else None
        axis = self._axis(args.get(names[2]))
        keep = self._flag(args.get(names[3]))
        shape = self._shape(x)
        if shape is None:
            raise Untranslated(f"{what} of a tensor whose shape is not known")
        matrix = axis is None and len(shape) == 2
        euclidean = order is None or order == "fro" or (order == 2 and not matrix)
        if isinstance(order, bool) or not euclidean:
            raise Untranslated(f"{what} of order {order!r} is not translated")
        if order == "fro" and not matrix and axis is None and len(shape) != 2:
            raise Untranslated(f"{what} 'fro' of a tensor that is not a matrix")
        return self._two_norm(x, axis, keep)

    def _normalize(self, args: dict[str, ast.expr]) -> Expr:
        x = self._expr(args["input"])
        if self._value(args.get("p")) not in (None, 2, 2.0):
            raise Untranslated("normalize with an order other than 2 is not translated")
        axis = self._axis(args["dim"]) if "dim" in args else 1
        eps = self._number(args.get("eps"), "1e-12")
        return call("div", x, call("maximum", self._two_norm(x, axis, True), eps))

    def _cosine(self, args: dict[str, ast.expr]) -> Expr:
        a, b = self._expr(args["x1"]), self._expr(args["x2"])
        axis = self._axis(args["dim"]) if "dim" in args else 1
        eps = self._number(args.get("eps"), "1e-8")
        dot = call("sum", call("mul", a, b), axis=axis)
        norms = call("mul", self._two_norm(a, axis, False), self._two_norm(b, axis, False))
        return call("div", dot, call("maximum", norms, eps))

    def _outer(self, a_node: ast.expr, b_node: ast.expr) -> Expr:
        a, b = self._expr(a_node), self._expr(b_node)
        sa, sb = self._shape(a), self._shape(b)
        if sa is None or sb is None or len(sa) != 1 or len(sb) != 1:
            raise Untranslated("an outer product of tensors that are not known vectors")
        column = call("reshape", a, shape=[sa[0], 1])
        row = call("reshape", b, shape=[1, sb[0]])
        return call("mul", column, row)

    def _sdpa(self, args: dict[str, ast.expr]) -> Expr:
        mask = args.get("attn_mask")
        if mask is not None and not (isinstance(mask, ast.Constant) and mask.value is None):
            raise Untranslated("scaled_dot_product_attention with a mask is not translated")
        if self._value(args.get("dropout_p")) not in (None, 0, 0.0):
            raise Untranslated("scaled_dot_product_attention with dropout is not translated")
        if self._value(args.get("is_causal")) not in (None, False):
            raise Untranslated("a causal scaled_dot_product_attention is not translated")
        q, k, v = (self._expr(args[n]) for n in ("query", "key", "value"))
        shape = self._shape(q)
        if shape is None or not shape:
            raise Untranslated("scaled_dot_product_attention of a query of unknown shape")
        scores = call("matmul", q, call("T", k))
        if "scale" in args and self._value(args["scale"]) is not None:
            scaled = call("mul", scores, self._number(args["scale"], ""))
        else:
            scaled = call("div", scores, call("sqrt", Num(str(shape[-1]))))
        return call("matmul", call("softmax", scaled, axis=-1), v)

    def _number(self, node: ast.expr | None, default: str) -> Expr:
        """A written number argument (``eps=1e-6``), or ``default`` when not given."""
        if node is None:
            return Num(default)
        value = self._const_or_none(node)
        if isinstance(value, bool) or not isinstance(value, (int, DecimalText)):
            raise Untranslated("a number argument that is not written as a number")
        return Num(num_text(value))
