"""numpy (and ``jax.numpy``, SciPy's ``special``): functions whose meaning differs from the
common table's.

numpy's ``var`` and ``std`` take ``ddof``; its ``transpose`` takes a permutation; SciPy's
``softmax`` with no axis normalises the whole array.
"""

from __future__ import annotations

from symtf.draft.translate.table import AXIS, Translation

__all__ = ["FUNCTIONS", "SCIPY"]

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
