"""Lines of text the code builds before printing them: ``row = f"{t:>4} | " + " | ".join(…)``.

A table printed row by row is often built as a string first: a label, then a vector's
entries formatted one by one and joined by a separator, and only then printed. What such
a string shows is read as a print's parts would be: its words as text, and the vector
whose entries it formats (``" | ".join([f"{w:>6.3f}" for w in a])`` shows ``a`` to 3
decimals) as a value. The parts are read where the string is built, so the names it reads
are the ones in scope there, and a later ``print(row)`` prints them.
"""

from __future__ import annotations

import ast
import re
from typing import Any, cast

from symtf.draft.templates import call
from symtf.draft.translate.autograd import Autograd
from symtf.draft.translate.scope import Untranslated

__all__ = ["Texts"]

#: The most entries of one vector read from a join (a printed row of a table).
MAX_JOINED = 256
#: A format spec that only pads (``>6``, ``<10``, ``^4``): the text is the value's own.
_PADDING = re.compile(r"[<>^]?\d{0,3}")
#: A format spec of fixed decimals (``>6.3f``, ``.4f``).
_FIXED = re.compile(r"[<>^+ -]?\d{0,3}\.(\d+)[fF]")


class Texts(Autograd):
    """Strings built from words and formatted entries, read as what they print."""

    def _shown_args(self, node: ast.expr) -> list[tuple[str, Any, str, int | None, str | None]]:
        raise NotImplementedError

    def _more_const(self, node: ast.expr) -> Any:
        """An f-string of known words padded (``f"{w:>6}"``): its text."""
        if isinstance(node, ast.JoinedStr):
            text = self._padded(node)
            if text is not None:
                return text
        return super()._more_const(node)

    def _is_text(self, node: ast.expr) -> bool:
        """Whether an expression builds a string (a literal, an f-string, a join, a sum of them)."""
        if isinstance(node, ast.Constant):
            return isinstance(node.value, str)
        if isinstance(node, ast.JoinedStr):
            return True
        if isinstance(node, ast.Name):
            return node.id in self.texts
        if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Add):
            return self._is_text(node.left) or self._is_text(node.right)
        return _joins(node) is not None

    def _text_parts(
        self, node: ast.expr
    ) -> list[tuple[str, Any, str, int | None, str | None]] | None:
        """What a built string shows, part by part (``None``: not such a string)."""
        if isinstance(node, ast.Name) and node.id in self.texts:
            return list(self.texts[node.id])
        if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Add) and self._is_text(node):
            c = self._const_or_none(node)
            if isinstance(c, str):
                return [("text", None, c, None, None)]
            return self._shown_args(node.left) + self._shown_args(node.right)
        joined = _joins(node)
        if joined is None:
            return None
        c = self._const_or_none(node)
        if isinstance(c, str):
            return [("text", None, c, None, None)]
        entries = self._entries_joined(joined)
        if entries is None:
            return None
        label = self._source(node)
        vector, decimals = entries
        try:
            whole = self._tensor_or_const(vector)
        except Untranslated as e:
            return [("value", None, label, None, _why(str(e), vector))]
        shape = self._shape(whole)
        if shape is None or len(shape) != 1 or not 0 < shape[0] <= MAX_JOINED:
            why = "entries joined from a tensor that is not one vector of known length"
            return [("value", None, label, None, _why(why, vector))]
        # each entry is printed on its own, the separator between them
        sep = str(cast(ast.Constant, cast(ast.Attribute, cast(ast.Call, node).func).value).value)
        out: list[tuple[str, Any, str, int | None, str | None]] = []
        for k in range(shape[0]):
            if k:
                out.append(("text", None, sep, None, None))
            entry = call("getitem", whole, index=str(k))
            out.append(("value", entry, f"{label}[{k}]", decimals, None))
        return out

    def _entries_joined(self, node: ast.expr) -> tuple[ast.expr, int | None] | None:
        """``[f"{w:.3f}" for w in a]``: the vector ``a`` whose entries are formatted, and
        their decimals (``None`` when the format does not fix them)."""
        if not isinstance(node, (ast.ListComp, ast.GeneratorExp)) or len(node.generators) != 1:
            return None
        g = node.generators[0]
        if g.ifs or g.is_async or not isinstance(g.target, ast.Name):
            return None
        if self._const_items(g.iter) is not None:
            return None  # words, not entries
        name = g.target.id
        elt = node.elt
        if isinstance(elt, ast.Name) and elt.id == name:
            return g.iter, None
        if not isinstance(elt, ast.JoinedStr):
            return None
        values = [p for p in elt.values if isinstance(p, ast.FormattedValue)]
        if len(values) != 1 or not (
            isinstance(values[0].value, ast.Name) and values[0].value.id == name
        ):
            return None
        spec = values[0].format_spec
        if spec is None:
            return g.iter, None
        if not (
            isinstance(spec, ast.JoinedStr)
            and len(spec.values) == 1
            and isinstance(spec.values[0], ast.Constant)
        ):
            return None
        m = _FIXED.fullmatch(str(spec.values[0].value))
        return (g.iter, int(m.group(1))) if m else None

    def _padded(self, node: ast.JoinedStr) -> str | None:
        """An f-string of words and whole numbers the translation knows, with at most a
        padding spec (``f"{w:>6}"``): its text."""
        out = []
        for part in node.values:
            if isinstance(part, ast.Constant):
                out.append(str(part.value))
                continue
            if not isinstance(part, ast.FormattedValue) or part.conversion != -1:
                return None
            v = self._const_or_none(part.value)
            if not isinstance(v, (str, int)) or isinstance(v, bool):
                return None
            spec = ""
            if part.format_spec is not None:
                f = part.format_spec
                if not (
                    isinstance(f, ast.JoinedStr)
                    and len(f.values) == 1
                    and isinstance(f.values[0], ast.Constant)
                ):
                    return None
                spec = str(f.values[0].value)
            if not _PADDING.fullmatch(spec):
                return None
            out.append(format(v, spec))
        return "".join(out)


def _joins(node: ast.expr) -> ast.expr | None:
    """``"sep".join(items)``: the items (``None``: not such a call)."""
    if (
        isinstance(node, ast.Call)
        and isinstance(node.func, ast.Attribute)
        and node.func.attr == "join"
        and isinstance(node.func.value, ast.Constant)
        and isinstance(node.func.value.value, str)
        and len(node.args) == 1
        and not node.keywords
    ):
        return node.args[0]
    return None


def _why(reason: str, node: ast.expr) -> str:
    import json

    return json.dumps([reason, node.id if isinstance(node, ast.Name) else None])
