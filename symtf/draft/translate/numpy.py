"""numpy (and ``jax.numpy``, SciPy's ``special``): functions whose meaning differs from the
common table's, and the joins that depend on their inputs' rank.

numpy's ``var`` and ``std`` take ``ddof``; its ``transpose`` takes a permutation; SciPy's
``softmax`` with no axis normalises the whole array. ``np.vstack``, ``np.hstack`` and
``np.column_stack`` stack vectors but join matrices (:class:`Numpy`).
"""

from __future__ import annotations

import ast

from symtf.draft.templates import Expr, call
from symtf.draft.translate.scope import Scope, Untranslated
from symtf.draft.translate.table import AXIS, Translation

__all__ = ["FUNCTIONS", "SCIPY", "Numpy"]

#: ``np.vstack`` and its kin: (the axis vectors are stacked on, the axis matrices are
#: joined on).
_JOINS: dict[str, tuple[int, int]] = {
    "vstack": (0, 0),
    "row_stack": (0, 0),
    "hstack": (-1, 1),  # vectors are joined end to end
    "column_stack": (1, 1),
}

#: ``numpy.*`` and ``jax.numpy.*`` functions beyond the common table.
FUNCTIONS: dict[str, Translation] = {
    "var": Translation("var", ("input", "axis"), {**AXIS, "ddof": "ddof"}),
    "std": Translation("std", ("input", "axis"), {**AXIS, "ddof": "ddof"}),
    "transpose": Translation("transpose", ("input", "axes"), {"axes": "axes"}),
    "softmax": Translation("softmax", ("input", "axis"), AXIS, {"axis": None}),
}

#: ``scipy.special.*``.
SCIPY: dict[str, Translation] = {
    "softmax": Translation("softmax", ("input", "axis"), AXIS, {"axis": None}),
}


class Numpy(Scope):
    """numpy's calls that need more than a table entry."""

    def _numpy_call(self, mod: str, fname: str, node: ast.Call) -> Expr | None:
        """``np.vstack([a, b])`` and its kin (``None``: not one of them)."""
        if mod not in ("numpy", "jax.numpy") or fname not in _JOINS:
            return None
        if len(node.args) != 1 or node.keywords:
            raise Untranslated(f"np.{fname} with these arguments is not translated")
        parts = self._items(node.args[0])
        if parts is None:
            raise Untranslated(f"np.{fname} of a list that is not written out")
        ranks = {len(s) if (s := self._shape(p)) is not None else None for p in parts}
        if None in ranks or len(ranks) != 1:
            raise Untranslated(f"np.{fname} of arrays whose ranks are not known or differ")
        vectors, matrices = _JOINS[fname]
        if ranks == {1}:
            if vectors == -1:
                return call("concat", *parts, axis=0)
            return call("stack", *parts, axis=vectors)
        return call("concat", *parts, axis=matrices)
