"""Python values the code computes from its literals, as a reader of the code would.

:class:`Constants` reads numbers (``0.1`` stays the text ``0.1``, never a binary float),
whole numbers and shapes (``x.shape[-1]``, ``len(x)``), words joined or repeated, tuples,
dict entries and comparisons in an unrolled loop; whatever else raises
:class:`~symtf.draft.translate.scope.Untranslated` with the reason.
"""

from __future__ import annotations

import ast
import re
from decimal import Decimal, InvalidOperation
from typing import Any

from symtf.draft.translate.scope import (
    MAX_UNROLL,
    DecimalText,
    Scope,
    Untranslated,
    is_expr,
    num_text,
)

#: A dict key that is not there.
_MISSING = object()


#: Longest string the code may compute by joining or repeating words (a printed rule line).
MAX_WORDS = 1000


def _words_computed(x: Any, op: ast.operator, y: Any) -> str | None:
    """Words the code joins (``"a" + "b"``) or repeats (``"=" * 50``), or None.

    Only plain strings and whole counts: ``print("=" * 50)`` prints a rule, not a value.
    """
    if isinstance(op, ast.Add) and isinstance(x, str) and isinstance(y, str):
        joined = x + y
        return joined if len(joined) <= MAX_WORDS else None
    if isinstance(op, ast.Mult):
        if isinstance(y, str) and isinstance(x, int) and not isinstance(x, bool):
            x, y = y, x
        if (
            isinstance(x, str)
            and isinstance(y, int)
            and not isinstance(y, bool)
            and 0 <= len(x) * y <= MAX_WORDS
        ):
            return x * max(y, 0)
    return None


def _compare(op: ast.cmpop, a: Any, b: Any) -> bool:
    """A comparison of two constants (``i == j`` in an unrolled loop, ``w in words``).

    Raises:
        Untranslated: A decimal literal (its float is not the number written) or an
            operator other than the six comparisons and ``in``.
    """
    if isinstance(a, DecimalText) or isinstance(b, DecimalText):
        raise Untranslated("a comparison of decimal literals is not translated")
    try:
        match op:
            case ast.Eq():
                return bool(a == b)
            case ast.NotEq():
                return bool(a != b)
            case ast.Lt():
                return bool(a < b)
            case ast.LtE():
                return bool(a <= b)
            case ast.Gt():
                return bool(a > b)
            case ast.GtE():
                return bool(a >= b)
            case ast.In():
                return bool(a in b)
            case ast.NotIn():
                return bool(a not in b)
    except TypeError:
        pass
    raise Untranslated("a comparison that is not of two plain numbers or words")


class Constants(Scope):
    """The walk's state (:class:`~symtf.draft.translate.scope.Scope`) and the plain Python
    values it computes: constants, whole numbers, shapes and ranges."""

    def _number_text(self, node: ast.Constant) -> str:
        text = self._segment(node)
        if text and re.fullmatch(r"[\d_.eE+-]+", text):
            return text.replace("_", "")
        return num_text(node.value)

    def _const_or_none(self, node: ast.expr) -> Any:
        try:
            return self._const(node)
        except Untranslated:
            return None

    def _const(self, node: ast.expr) -> Any:
        """A Python number the code computes from literals (no tensor involved)."""
        match node:
            case ast.Constant(value=v) if isinstance(v, (int, float, bool)) or v is None:
                if isinstance(v, float):
                    return DecimalText(self._number_text(node), v)
                return v
            case ast.Constant(value=str() as s):
                return s
            case ast.Name(id=name) if name in self.consts:
                return self.consts[name]
            case ast.Attribute(value=ast.Name(id="self"), attr=name) if (
                name in self.consts and self._self_unbound()
            ):
                # self.num_heads in a method's lines shown outside their class: the setting
                # of that name the article's configuration defines
                return self.consts[name]
            case ast.UnaryOp(op=ast.USub(), operand=x):
                v = self._const(x)
                if isinstance(v, DecimalText):
                    return DecimalText("-" + v.text, -v.value)
                if isinstance(v, (int, float)) and not isinstance(v, bool):
                    return -v
            case ast.BinOp(left=a, op=op, right=b):
                x, y = self._const(a), self._const(b)
                if isinstance(x, DecimalText) or isinstance(y, DecimalText):
                    raise Untranslated("arithmetic on decimal literals")
                words = _words_computed(x, op, y)
                if words is not None:  # "\n" + "=" * 50: a rule line printed as words
                    return words
                if isinstance(x, int) and isinstance(y, int):
                    if isinstance(op, ast.Add):
                        return x + y
                    if isinstance(op, ast.Sub):
                        return x - y
                    if isinstance(op, ast.Mult):
                        return x * y
                    if isinstance(op, ast.FloorDiv) and y:
                        return x // y
                    if isinstance(op, ast.Pow) and 0 <= y <= 64:
                        return x**y
                    if isinstance(op, ast.Div) and y and x % y == 0 and abs(x) <= 2**53:
                        # d / 2 of whole numbers: a float, exact when the quotient is whole
                        return DecimalText(f"{x // y}.0", float(x // y))
            case ast.Call(func=f, args=[x]) if self._dotted(f) in (
                "numpy.float32",
                "numpy.float64",
                "numpy.int64",
                "numpy.int32",
            ):
                v = self._const(x)
                if isinstance(v, int) and not isinstance(v, bool) and abs(v) <= 2**24:
                    return v  # np.float32(d_model): a whole number float32 holds exactly
            case ast.Call(func=ast.Name(id="int"), args=[x]):
                return self._truncated(x)
            case ast.Call(func=f, args=args) if self._dotted(f) in ("float",) and args:
                v = self._const(args[0])
                if v in ("-inf", "inf", "-Infinity"):
                    return float(v)
                return v
            case ast.Attribute(attr="inf") if (self._dotted(node) or "").startswith(
                ("numpy", "torch", "math")
            ):
                return float("inf")
            case ast.Subscript(value=ast.Attribute(value=base, attr="shape"), slice=idx):
                shape = self._shape_of_node(base)
                k = self._int(idx)
                return shape[k]
            case ast.Call(func=ast.Name(id="len"), args=[x]):
                if isinstance(x, ast.Name) and isinstance(self.consts.get(x.id), str):
                    return len(self.consts[x.id])  # "-" * len(header): a rule as long
                return self._shape_of_node(x)[0]
            case ast.Call(func=ast.Attribute(value=base, attr="size"), args=[idx]):
                return self._shape_of_node(base)[self._int(idx)]
            case ast.Subscript(value=ast.Name(id=name), slice=key) if name in self.dicts:
                value = self.dicts[name].get(self._const(key), _MISSING)
                if value is not _MISSING and not is_expr(value):
                    return value  # tok2id["cat"]: a constant the dict holds
            case ast.Subscript(value=ast.Name(id=name), slice=idx) if isinstance(
                self.consts.get(name), tuple
            ):
                words = self.consts[name]
                k = self._int(idx)
                if -len(words) <= k < len(words):
                    return words[k]
            case ast.Compare(left=a, ops=[op], comparators=[b]):
                return _compare(op, self._const(a), self._const(b))
        more = self._more_const(node)
        if more is not None:
            return more
        raise Untranslated(f"{self._source(node)} is not a plain number")

    def _more_const(self, node: ast.expr) -> Any:
        """A constant the mixins compute (words joined from a list of them, an index the
        code decides from translated values); ``None`` here."""
        return None

    def _shape_of_node(self, node: ast.expr) -> tuple[int, ...]:
        if isinstance(node, ast.Name) and node.id in self.consts:
            value = self.consts[node.id]
            if isinstance(value, tuple):  # len(words): a list of constants
                return (len(value),)
        if isinstance(node, ast.Name) and node.id in self.dicts:
            return (len(self.dicts[node.id]),)
        if isinstance(node, ast.Name) and node.id in self.buffers:
            return self.buffers[node.id].shape
        shape = None
        if isinstance(node, ast.Name) and node.id in self.opaque and node.id in self.opaque_shapes:
            return self.opaque_shapes[node.id]
        if isinstance(node, ast.Name) and node.id in self.opaque and node.id in self.printed_opaque:
            shape = self._known_shape(node.id)  # its print stands for it (once printed)
        elif isinstance(node, ast.Name) and node.id in self.lazy:
            shape = self._shape(self.lazy[node.id][0])
        elif isinstance(node, ast.Name) and node.id in self.names:
            shape = self._known_shape(self.names[node.id])
        elif not isinstance(node, ast.Name):
            try:
                shape = self._shape(self._expr(node))
            except Untranslated:
                shape = None
        if shape is not None:
            return shape
        raise Untranslated(f"the shape of {self._source(node)} is not known")

    def _int(self, node: ast.expr) -> int:
        v = self._const(node)
        if isinstance(v, bool) or not isinstance(v, int):
            raise Untranslated(f"{self._source(node)} is not a whole number")
        return int(v)

    def _whole(self, node: ast.expr) -> int:
        """A whole number, written as an integer or a float (``np.arange(depth)``, depth 2.0)."""
        v = self._const(node)
        if isinstance(v, DecimalText):
            try:
                exact = Decimal(v.text)
            except InvalidOperation:
                exact = Decimal("NaN")
            if exact.is_finite() and exact == exact.to_integral_value() and abs(exact) <= 2**53:
                return int(exact)
        if isinstance(v, bool) or not isinstance(v, int):
            raise Untranslated(f"{self._source(node)} is not a whole number")
        return int(v)

    def _truncated(self, node: ast.expr) -> int:
        """``int(x)`` of a number the code computes: whole numbers, and quotients of them
        (``int(d / 2)``, exact while the dividend is below 2**52, where the float division
        never rounds up to the next whole number)."""
        if (
            isinstance(node, ast.BinOp)
            and isinstance(node.op, ast.Div)
            and isinstance(x := self._const_or_none(node.left), int)
            and isinstance(y := self._const_or_none(node.right), int)
            and not isinstance(x, bool)
            and not isinstance(y, bool)
            and y
            and abs(x) <= 2**52
        ):
            q = abs(x) // abs(y)
            return q if (x < 0) == (y < 0) else -q
        return self._whole(node)

    def _int_or_none(self, node: ast.expr) -> int | None:
        try:
            return self._int(node)
        except Untranslated:
            return None

    def _shape_args(self, args: list[ast.expr]) -> list[int]:
        match args:
            case [ast.Attribute(value=base, attr="shape")] | [
                ast.Call(func=ast.Attribute(value=base, attr="size"), args=[])
            ]:  # torch.zeros(query.shape): the shape of a tensor the code holds
                return list(self._shape_of_node(base))
        if len(args) == 1 and isinstance(args[0], (ast.Tuple, ast.List)):
            args = list(args[0].elts)
        return [self._int(a) for a in args]

    def _self_unbound(self) -> bool:
        """Whether ``self`` names nothing the code defines (a method's lines shown alone)."""
        return (
            not any(
                "self" in held
                for held in (self.names, self.consts, self.tuples, self.dicts, self.modules)
            )
            and "self" not in self.opaque
        )

    def _range(self, node: ast.AST) -> list[int] | None:
        if (
            isinstance(node, ast.Call)
            and isinstance(node.func, ast.Name)
            and node.func.id == "range"
        ):
            try:
                args = [self._int(a) for a in node.args]
            except Untranslated:
                return None
            r = range(*args)
            return list(r) if len(r) <= MAX_UNROLL else None
        return None
