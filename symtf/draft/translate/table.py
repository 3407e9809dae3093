"""Framework calls → ops: the part of the table every framework shares, as data.

Each entry says, for a function or method, which op of the step language it is and
how its arguments map onto the op's parameters: ``softmax(x, dim=-1)`` is ``softmax``
with ``dim`` read as ``axis``. Where one framework's defaults differ from another's
(PyTorch's unbiased ``var``, numpy's softmax over the whole array), its own module
holds the entry (:mod:`~symtf.draft.translate.numpy`, :mod:`~symtf.draft.translate.torch`,
:mod:`~symtf.draft.translate.tensorflow`, :mod:`~symtf.draft.translate.jax`), and
:func:`symtf.draft.translate.frameworks.lookup` reads that one first. A call that is
in no table is not translated: the draft keeps it as a comment naming its cell and
line, and claims that depend on it stay ``step = "?"``.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

__all__ = ["AXIS", "COMMON", "FAMILIES", "FAMILY_METHODS", "METHODS", "Translation"]


@dataclass(frozen=True)
class Translation:
    """How one framework function maps onto an op.

    Attributes:
        op: The op's name (:data:`symtf.draft.templates.OPS`).
        args: The framework's positional parameter names, in order.
        params: Framework keyword → op parameter (``None``: accepted and ignored,
            such as ``normalized_shape`` or ``dtype``).
        defaults: Op parameters the framework sets when the call does not
            (PyTorch's ``eps=1e-5``, its unbiased ``var``).
        tensors: The framework parameters that are tensors (the op's inputs), in the
            op's input order.
        listed: The first positional is a list of tensors (``torch.cat([a, b], dim=1)``).
    """

    op: str
    args: tuple[str, ...] = ("input",)
    params: Mapping[str, str | None] = field(default_factory=dict)
    defaults: Mapping[str, Any] = field(default_factory=dict)
    tensors: tuple[str, ...] = ("input",)
    listed: bool = False


#: Canonical module → family (the defaults of a function differ by family).
FAMILIES = {
    "numpy": "numpy",
    "jax.numpy": "numpy",
    "torch": "torch",
    "torch.nn.functional": "torch",
    "jax.nn": "jax",
    "tensorflow": "tf",
    "tensorflow.nn": "tf",
    "tensorflow.math": "tf",
    "scipy.special": "scipy",
    "math": "math",
}

#: Keywords naming an axis (and keeping it), as the op's parameters.
AXIS: Mapping[str, str | None] = {
    "dim": "axis",
    "axis": "axis",
    "keepdim": "keepdims",
    "keepdims": "keepdims",
    "dtype": None,
}
_UNARY = (
    *("exp", "log", "log2", "log10", "log1p", "expm1", "sqrt", "tanh", "abs", "sin", "cos"),
    *("sigmoid", "relu", "silu", "softplus"),
)


def unary(op: str) -> Translation:
    """An element-wise function of one tensor."""
    return Translation(op, ("input",), {"out": None})


def reduction(op: str, **defaults: Any) -> Translation:
    """A reduction along an axis (all axes when none is given)."""
    return Translation(op, ("input", "axis"), AXIS, defaults)


def binary(op: str) -> Translation:
    """An element-wise (or matrix) function of two tensors."""
    return Translation(op, ("input", "other"), {}, {}, ("input", "other"))


def joined(op: str) -> Translation:
    """A function of a written-out list of tensors along an axis (``cat``, ``stack``)."""
    return Translation(op, ("tensors", "axis"), AXIS, {"axis": 0}, ("tensors",), True)


#: Functions every framework spells and means alike.
COMMON: dict[str, Translation] = {
    **{f: unary(f) for f in _UNARY},
    "gelu": Translation("gelu", ("input",), {"approximate": "approximate"}),
    "softmax": Translation("softmax", ("input", "axis"), AXIS, {"axis": -1}),
    "log_softmax": Translation("log_softmax", ("input", "axis"), AXIS, {"axis": -1}),
    "matmul": binary("matmul"),
    "mm": binary("matmul"),
    "bmm": binary("matmul"),
    "dot": binary("matmul"),
    "add": binary("add"),
    "subtract": binary("sub"),
    "multiply": binary("mul"),
    "divide": binary("div"),
    "power": binary("pow"),
    "pow": binary("pow"),
    "maximum": binary("maximum"),
    "minimum": binary("minimum"),
    "mean": reduction("mean"),
    "sum": reduction("sum"),
    "max": reduction("max"),
    "min": reduction("min"),
    "amax": reduction("max"),
    "var": reduction("var"),
    "std": reduction("std"),
    "tril": Translation("tril", ("input", "diagonal"), {"diagonal": "diagonal"}),
    "triu": Translation("triu", ("input", "diagonal"), {"diagonal": "diagonal"}),
    "transpose": Translation("transpose", ("input", "dim0", "dim1"), {"axes": "axes"}),
    "concatenate": joined("concat"),
    "cat": joined("concat"),
    "concat": joined("concat"),
    "stack": joined("stack"),
    "reshape": Translation("reshape", ("input", "shape"), {"newshape": "shape", "shape": "shape"}),
    "where": Translation(
        "where", ("condition", "input", "other"), {}, {}, ("condition", "input", "other")
    ),
    "round": Translation("round", ("input", "decimals"), {"decimals": "decimals"}),
    # argmax(x, dim=None): the first index of the largest entry (of the flattened
    # tensor without dim), as the registry's argmax
    "argmax": Translation("argmax", ("input", "axis"), AXIS),
    # x.flatten(): the entries in one row-major vector (from the first axis to the last)
    "flatten": Translation(
        "flatten", ("input", "start_dim", "end_dim"), {"start_dim": "start", "end_dim": "end"}
    ),
    # topk(x, k): the values and the indices of the k largest entries
    "topk": Translation(
        "topk",
        ("input", "k", "axis", "largest", "sorted"),
        {**AXIS, "k": "k", "largest": "largest", "sorted": "sorted"},
    ),
    "layer_norm": Translation(
        "layernorm",
        ("input", "normalized_shape", "weight", "bias", "eps"),
        {"normalized_shape": None, "weight": "gamma", "bias": "beta", "eps": "eps"},
        {"eps": "1e-05"},
        ("input", "weight", "bias"),
    ),
}

#: Python's ``math``: functions of plain numbers.
MATH: dict[str, Translation] = {
    f: unary(f)
    for f in ("sqrt", "exp", "log", "log2", "log10", "log1p", "expm1", "tanh", "sin", "cos")
}

#: Tensor methods every framework spells alike: ``x.softmax(dim=-1)``, ``x.mean(-1)``.
METHODS: dict[str, Translation] = {
    name: t
    for name, t in COMMON.items()
    if name not in ("concatenate", "cat", "concat", "stack", "where")
}

#: Methods whose defaults differ between a PyTorch tensor and a numpy array (``x.var()`` is
#: unbiased on a tensor): translated as the family the code imports says.
FAMILY_METHODS = frozenset({"var", "std"})
