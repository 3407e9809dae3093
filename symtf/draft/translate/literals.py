"""Array literals (``np.array([[…]])``, ``torch.tensor(…)``, nested lists) read with their
entries as written, each placed in the source, and refused past the size a derivation holds.
"""

from __future__ import annotations

import ast
import math
import re

from symtf import limits
from symtf.draft.translate.constants import Constants
from symtf.draft.translate.scope import ARRAY_MAKERS, DecimalText, Untranslated, origin_of
from symtf.errors import SpecError
from symtf.place import Place

#: Most entries read from one array literal: a derivation's tensors hold at most as many
#: (the one table of input sizes, :mod:`symtf.limits`, that draft and check share).
MAX_LITERAL_ENTRIES = limits.MAX_ENTRIES


class Literals(Constants):
    """Constants (:class:`~symtf.draft.translate.constants.Constants`) and the array
    literals the code writes, entry by entry."""

    def _literal(self, node: ast.expr) -> tuple[tuple[str, ...], tuple[int, ...], bool] | None:
        """An array literal's entries as written, its shape, and whether it is float32."""
        f32 = False
        inner = node
        if isinstance(node, ast.Call):
            dotted = self._dotted(node.func)
            mod = self._module_name(dotted) if dotted else None
            if mod is None or mod not in ARRAY_MAKERS or not node.args:
                return None
            inner = node.args[0]
            dtype = next((k.value for k in node.keywords if k.arg == "dtype"), None)
            name = (self._dotted(dtype) or "") if dtype is not None else ""
            if mod[0] in ("torch", "tensorflow", "jax.numpy"):
                f32 = not name.endswith(("float64", "double", "int64", "int32", "long", "int"))
            else:
                f32 = name.endswith("float32")
        if not isinstance(inner, (ast.List, ast.Tuple)):
            return None
        self._refuse_large(inner)
        try:
            values, shape = self._nested(inner)
        except Untranslated:
            return None
        if not values:
            return None
        if all(re.fullmatch(r"-?\d+", v) for v in values) and isinstance(node, ast.Call):
            f32 = f32 and any(k.arg == "dtype" for k in node.keywords)  # integer ids stay ints
        return tuple(values), shape, f32

    def _entry_places(self, node: ast.expr) -> tuple[Place, ...]:
        """Where each entry of a matrix literal (or of a one-dimensional one) stands in the
        article, row by row (empty when not known: a block without places, an entry over
        two lines)."""
        inner = node.args[0] if isinstance(node, ast.Call) and node.args else node
        origin = origin_of(inner)
        source = getattr(origin.block, "source", None) if origin is not None else None
        if origin is None or source is None or not isinstance(inner, (ast.List, ast.Tuple)):
            return ()
        starts = [0]
        for raw in origin.lines:  # each line with its end, as the parser counts lines
            starts.append(starts[-1] + len(raw.decode("utf-8", "replace")))
        out = []
        flat = not any(isinstance(e, (ast.List, ast.Tuple)) for e in inner.elts)
        for row in [inner] if flat else inner.elts:  # a one-dimensional literal: one row
            if not isinstance(row, (ast.List, ast.Tuple)):
                return ()
            for e in row.elts:
                line, end_line = e.lineno, e.end_lineno
                col, end = e.col_offset, e.end_col_offset
                if line != end_line or end is None or not 1 <= line <= len(origin.lines):
                    return ()
                raw = origin.lines[line - 1]
                a = starts[line - 1] + len(raw[:col].decode("utf-8", "replace"))
                b = starts[line - 1] + len(raw[:end].decode("utf-8", "replace"))
                out.append(source.place(a, b))
        return tuple(out)

    def _refuse_large(self, node: ast.List | ast.Tuple) -> None:
        """Count a literal's entries before any is read, and refuse one too large to check.

        Raises:
            SpecError: More than :data:`MAX_LITERAL_ENTRIES` entries (a derivation's
                tensors hold at most as many), naming the file, the cell and the line.
        """
        count = 0
        todo: list[ast.expr] = [node]
        while todo:
            n = todo.pop()
            if isinstance(n, (ast.List, ast.Tuple)):
                todo.extend(n.elts)
            else:
                count += 1
        if count > MAX_LITERAL_ENTRIES:
            origin = origin_of(node)
            block = origin.block if origin is not None else self._block
            path = f"{block.path}: " if block is not None and block.path else ""
            raise SpecError(
                f"{path}{self._where(node)}: an array literal: expected at most "
                f"{MAX_LITERAL_ENTRIES:,} entries, found {count:,}; a derivation holds no "
                "larger tensor, so its draft could not be checked"
            )

    def _nested(self, node: ast.expr) -> tuple[list[str], tuple[int, ...]]:
        if isinstance(node, (ast.List, ast.Tuple)):
            if not node.elts:
                raise Untranslated("an empty list")
            parts = [self._nested(e) for e in node.elts]
            shapes = {p[1] for p in parts}
            if len(shapes) != 1:
                raise Untranslated("a ragged list")
            return [v for p in parts for v in p[0]], (len(parts), *parts[0][1])
        v = self._bare_infinity(node)
        v = self._const(node) if v is None else v
        if isinstance(v, DecimalText):
            return [v.text], ()
        if isinstance(v, float) and v in (float("inf"), float("-inf")):
            return ["inf" if v > 0 else "-inf"], ()
        if isinstance(v, int) and not isinstance(v, bool):
            return [str(v)], ()
        raise Untranslated("an array entry that is not a number")

    def _bare_infinity(self, node: ast.expr) -> float | None:
        """``inf`` or ``-inf`` written bare in an array, as PyTorch and numpy print it, where
        the code gives the name ``inf`` no value: infinity (``None`` for anything else)."""
        sign = 1.0
        if isinstance(node, ast.UnaryOp) and isinstance(node.op, (ast.USub, ast.UAdd)):
            sign = -1.0 if isinstance(node.op, ast.USub) else 1.0
            node = node.operand
        if not isinstance(node, ast.Name) or node.id != "inf":
            return None
        held = (self.names, self.consts, self.opaque, self.aliases, self.defs, self.tuples)
        return None if any("inf" in h for h in held) else sign * math.inf
