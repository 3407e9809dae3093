"""numpy (and ``jax.numpy``, SciPy's ``special``): functions whose meaning differs from the
common table's, and the joins that depend on their inputs' rank.

numpy's ``var`` and ``std`` take ``ddof``; its ``transpose`` takes a permutation; SciPy's
``softmax`` with no axis normalises the whole array. ``np.vstack``, ``np.hstack`` and
``np.column_stack`` stack vectors but join matrices (:class:`Numpy`). Draws from the
legacy global stream after ``np.random.seed(s)`` are the values numpy's ``RandomState``
draws (:mod:`symtf.draft.translate.draws`).
"""

from __future__ import annotations

import ast
from fractions import Fraction

from symtf.draft.templates import Expr, Var, call
from symtf.draft.translate.decided import Decided
from symtf.draft.translate.draws import DRAWS
from symtf.draft.translate.events import Given
from symtf.draft.translate.scope import DecimalText, Untranslated
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


class Numpy(Decided):
    """numpy's calls that need more than a table entry."""

    def _numpy_call(self, mod: str, fname: str, node: ast.Call) -> Expr | None:
        """``np.vstack([a, b])`` and its kin, and draws after ``np.random.seed(s)`` (``None``:
        not one of them)."""
        if mod == "numpy.random":
            return self._numpy_draw(f"{mod}.{fname}", node)
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

    def _numpy_draw(self, dotted: str, node: ast.Call) -> Expr | None:
        """``np.random.randn(3, 4)`` (and its kin in :data:`DRAWS`) after ``np.random.seed(s)``:
        a given tensor of the values the seeded legacy stream draws next, exactly.

        ``None`` when the call is no such draw or the stream is not known (no seed, or
        code not translated since it); the caller says the values are not translated.
        """
        mod, _, fname = dotted.rpartition(".")
        if mod != "numpy.random" or fname not in DRAWS or self.np_stream is None or self._dry:
            return None
        named, dims_listed = DRAWS[fname]
        if dims_listed:
            if node.keywords or not node.args:
                return None
            shape = self._shape_args(node.args)
            params: tuple[float, ...] = ()
        else:
            given = list(node.args)
            kw = {k.arg: k.value for k in node.keywords}
            if None in kw or set(kw) - {"size", *(n for n, _ in named)}:
                return None
            if len(given) > len(named) + 1:
                return None
            size = given.pop() if len(given) == len(named) + 1 else kw.get("size")
            if size is None:
                return None  # one number, not an array
            shape = self._shape_args([size])
            values = []
            for k, (pname, default) in enumerate(named):
                written = given[k] if k < len(given) else kw.get(pname)
                values.append(default if written is None else self._float_param(written))
            params = tuple(values)
        drawn = self.np_stream.draw(fname, params, tuple(shape))
        if drawn is None:
            return None
        self.np_stream, exact = drawn
        step = self._fresh(fname)
        self._emit(
            Given(
                step,
                tuple(_ratio(v) for v in exact),
                tuple(shape),
                self._where(node),
                origin=self.np_stream.describe(),
            )
        )
        return Var(step)

    def _float_param(self, node: ast.expr) -> float:
        """A draw's parameter as the float64 numpy receives (a number the code writes)."""
        v = self._const(node)
        if isinstance(v, DecimalText):
            return float(v.value)
        if isinstance(v, int) and not isinstance(v, bool):
            return float(v)
        raise Untranslated(f"{self._source(node)} is not a number written in the code")


def _ratio(v: Fraction) -> str:
    """A drawn float64's exact value as ``p/q`` (an integer as itself)."""
    return str(v.numerator) if v.denominator == 1 else f"{v.numerator}/{v.denominator}"
