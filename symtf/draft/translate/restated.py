"""A variable's value restated by name in a comment of its own, after the code that made it.

A worked example fills a list or an array in a loop, leaves a blank line, and writes what
it holds: ``# freqs = [1.0, 0.982, 0.965, ..., 0.0001]``. The comment names the variable
the code just changed, so it restates that variable's value there, as a hand-typed
printing of it (each entry known to the digits written). A list written with entries
left out (``...``) shows its first entries and its last ones at their places; entries
between two ellipses are at places not known and are left unread.
"""

from __future__ import annotations

import ast
from collections.abc import Iterator
from typing import Any

from symtf.draft.templates import Expr, call
from symtf.draft.translate.prints import named_comment_values, summarised
from symtf.draft.translate.scope import Untranslated
from symtf.draft.translate.slices import Slices

__all__ = ["Restated", "changed_names", "named_comment_values"]

#: Methods that change a list in place by adding to it.
_GROWING = frozenset({"append", "extend", "insert"})


def changed_names(stmt: ast.stmt) -> set[str]:
    """The variables a statement assigns, changes entry by entry (``a[i] = …``) or adds to
    (``freqs.append(θ)``), its nested statements included."""
    names: set[str] = set()
    if isinstance(stmt, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
        return names  # its names are its own, and nothing runs where it is defined
    for node in ast.walk(stmt):
        if isinstance(node, ast.Name) and isinstance(node.ctx, ast.Store):
            names.add(node.id)
        elif isinstance(node, ast.Subscript) and isinstance(node.ctx, ast.Store):
            base = node.value
            while isinstance(base, ast.Subscript):
                base = base.value
            if isinstance(base, ast.Name):
                names.add(base.id)
        elif (
            isinstance(node, ast.Call)
            and isinstance(node.func, ast.Attribute)
            and node.func.attr in _GROWING
            and isinstance(node.func.value, ast.Name)
        ):
            names.add(node.func.value.id)
    return names


class Restated(Slices):
    """Reads ``# name = value`` standing after the code that changed ``name``."""

    def _restated(
        self, stmt: ast.stmt, comment: tuple[str, list[int], bool, str | None]
    ) -> Iterator[Any]:
        """Claims on the value a named comment after ``stmt`` restates (none when ``stmt``
        does not change that name or its value is not translated)."""
        text, lines, typed, name = comment
        if name is None or name not in changed_names(stmt):
            return
        mark = len(self._events)
        try:
            value = self._named_value(name, stmt)
        except Untranslated:
            return  # the comment's numbers stay unread, with the reason the report gives
        yield from self._events[mark:]  # the steps the value is read in (a long list's parts)
        del self._events[mark:]
        ends = summarised(text)
        if ends is None:
            yield from self._match(
                [("value", value, name, None, None)], [(text, lines)], typed=typed
            )
            return
        shape = self._shape(value)
        head, tail = ends
        if shape is None or len(shape) != 1 or len(head) + len(tail) > shape[0]:
            return
        n = shape[0]
        items: list[Any] = []
        texts: list[tuple[str, list[int]]] = []
        for entries, start in ((head, 0), (tail, n - len(tail))):
            if entries:
                part = call("getitem", value, index=f"{start}:{start + len(entries)}")
                items.append(("value", part, name, None, None))
                texts.append((f"[{', '.join(entries)}]", lines))
        yield from self._match(items, texts, typed=typed)

    def _named_value(self, name: str, stmt: ast.stmt) -> Expr:
        """A variable's value: a tensor, or a list of numbers read as the vector it prints as.

        Raises:
            Untranslated: Its value is not translated, or is a list of other than numbers.
        """
        if name in self.tuples:
            parts = [p for p in self.tuples[name] if not isinstance(p, str)]
            if len(parts) != len(self.tuples[name]) or not parts:
                raise Untranslated(f"{name} is a list of other than numbers")
            if not all(self._shape(p) == () for p in parts):
                raise Untranslated(f"{name} is a list of other than numbers")
            return self._joined(parts, name, stmt)
        return self._expr(ast.Name(name, ast.Load()))
