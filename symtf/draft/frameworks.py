"""Framework calls → ops: the table the code translation reads, as data.

Each entry says, for a numpy / PyTorch / TensorFlow / JAX function or method,
which op of the step language it is and how its arguments map onto the op's
parameters: ``torch.softmax(x, dim=-1)`` is ``softmax`` with ``dim`` read as
``axis``; ``F.layer_norm(x, shape, w, b, eps)`` is ``layernorm`` with ``weight``
as ``gamma`` and a default ``eps`` of 1e-5 (PyTorch's, not the op's 0). A call
that is not here is not translated: the draft keeps it as a comment naming
its cell and line, and claims that depend on it stay ``step = "?"``.

When the op registry (``symtf.ops``) lands, :attr:`Call.op` names its entry and
the parameter names are its signature's.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

__all__ = ["FAMILIES", "FAMILY_METHODS", "METHODS", "MODULES", "Translation", "lookup"]


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

_AXIS = {
    "dim": "axis",
    "axis": "axis",
    "keepdim": "keepdims",
    "keepdims": "keepdims",
    "dtype": None,
}
_UNARY = ("exp", "log", "sqrt", "tanh", "abs", "sin", "cos", "sigmoid", "relu", "silu", "softplus")


def _unary(op: str) -> Translation:
    return Translation(op, ("input",), {"out": None})


def _reduce(op: str, **defaults: Any) -> Translation:
    return Translation(op, ("input", "axis"), _AXIS, defaults)


_COMMON: dict[str, Translation] = {
    **{f: _unary(f) for f in _UNARY},
    "gelu": Translation("gelu", ("input",), {"approximate": "approximate"}),
    "softmax": Translation("softmax", ("input", "axis"), _AXIS, {"axis": -1}),
    "log_softmax": Translation("log_softmax", ("input", "axis"), _AXIS, {"axis": -1}),
    "matmul": Translation("matmul", ("input", "other"), {}, {}, ("input", "other")),
    "mm": Translation("matmul", ("input", "other"), {}, {}, ("input", "other")),
    "bmm": Translation("matmul", ("input", "other"), {}, {}, ("input", "other")),
    "dot": Translation("matmul", ("input", "other"), {}, {}, ("input", "other")),
    "add": Translation("add", ("input", "other"), {}, {}, ("input", "other")),
    "subtract": Translation("sub", ("input", "other"), {}, {}, ("input", "other")),
    "multiply": Translation("mul", ("input", "other"), {}, {}, ("input", "other")),
    "divide": Translation("div", ("input", "other"), {}, {}, ("input", "other")),
    "maximum": Translation("maximum", ("input", "other"), {}, {}, ("input", "other")),
    "minimum": Translation("minimum", ("input", "other"), {}, {}, ("input", "other")),
    "mean": _reduce("mean"),
    "sum": _reduce("sum"),
    "max": _reduce("max"),
    "min": _reduce("min"),
    "amax": _reduce("max"),
    "var": _reduce("var"),
    "std": _reduce("std"),
    "tril": Translation("tril", ("input", "diagonal"), {"diagonal": "diagonal"}),
    "triu": Translation("triu", ("input", "diagonal"), {"diagonal": "diagonal"}),
    "transpose": Translation("transpose", ("input", "dim0", "dim1"), {"axes": "axes"}),
    "concatenate": Translation(
        "concat", ("tensors", "axis"), _AXIS, {"axis": 0}, ("tensors",), True
    ),
    "cat": Translation("concat", ("tensors", "axis"), _AXIS, {"axis": 0}, ("tensors",), True),
    "concat": Translation("concat", ("tensors", "axis"), _AXIS, {"axis": 0}, ("tensors",), True),
    "stack": Translation("stack", ("tensors", "axis"), _AXIS, {"axis": 0}, ("tensors",), True),
    "reshape": Translation("reshape", ("input", "shape"), {"newshape": "shape", "shape": "shape"}),
    "where": Translation(
        "where", ("condition", "input", "other"), {}, {}, ("condition", "input", "other")
    ),
    "round": Translation("round", ("input", "decimals"), {"decimals": "decimals"}),
    # torch.argmax(x, dim=None): the first index of the largest entry (of the flattened
    # tensor without dim), as the registry's argmax
    "argmax": Translation("argmax", ("input", "axis"), _AXIS),
    # x.flatten(): the entries in one row-major vector (from the first axis to the last)
    "flatten": Translation(
        "flatten", ("input", "start_dim", "end_dim"), {"start_dim": "start", "end_dim": "end"}
    ),
    # torch.topk(x, k): the values and the indices of the k largest entries
    "topk": Translation(
        "topk",
        ("input", "k", "axis", "largest", "sorted"),
        {**_AXIS, "k": "k", "largest": "largest", "sorted": "sorted"},
    ),
    "layer_norm": Translation(
        "layernorm",
        ("input", "normalized_shape", "weight", "bias", "eps"),
        {"normalized_shape": None, "weight": "gamma", "bias": "beta", "eps": "eps"},
        {"eps": "1e-05"},
        ("input", "weight", "bias"),
    ),
}

#: Per family: functions whose defaults differ (PyTorch's var and std are unbiased).
_BY_FAMILY: dict[str, dict[str, Translation]] = {
    "torch": {
        # F.cross_entropy(logits, target): the mean over rows, integer class targets
        "cross_entropy": Translation(
            "cross_entropy",
            ("input", "target"),
            {"label_smoothing": "label_smoothing"},
            {},
            ("input", "target"),
        ),
        # F.binary_cross_entropy(p, y) and F.mse_loss(a, b): the mean over every entry
        "binary_cross_entropy": Translation(
            "bce", ("input", "target"), {}, {}, ("input", "target")
        ),
        "mse_loss": Translation("mse", ("input", "target"), {}, {}, ("input", "target")),
        "var": Translation(
            "var",
            ("input", "axis"),
            {**_AXIS, "unbiased": "unbiased", "correction": "correction"},
            {"unbiased": True},
        ),
        "std": Translation(
            "std",
            ("input", "axis"),
            {**_AXIS, "unbiased": "unbiased", "correction": "correction"},
            {"unbiased": True},
        ),
    },
    "numpy": {
        "var": Translation("var", ("input", "axis"), {**_AXIS, "ddof": "ddof"}),
        "std": Translation("std", ("input", "axis"), {**_AXIS, "ddof": "ddof"}),
        "transpose": Translation("transpose", ("input", "axes"), {"axes": "axes"}),
        "softmax": Translation("softmax", ("input", "axis"), _AXIS, {"axis": None}),
    },
    "scipy": {"softmax": Translation("softmax", ("input", "axis"), _AXIS, {"axis": None})},
    "tf": {
        "reduce_mean": _reduce("mean"),
        "reduce_sum": _reduce("sum"),
        "reduce_max": _reduce("max"),
        "reduce_variance": _reduce("var"),
        "reduce_std": _reduce("std"),
    },
    "math": {
        "sqrt": _unary("sqrt"),
        "exp": _unary("exp"),
        "log": _unary("log"),
        "tanh": _unary("tanh"),
    },
}

#: Tensor methods: ``x.softmax(dim=-1)``, ``x.mean(-1, keepdim=True)``, ``x.masked_fill(m, v)``.
METHODS: dict[str, Translation] = {
    **{
        name: t
        for name, t in _COMMON.items()
        if name not in ("concatenate", "cat", "concat", "stack", "where")
    },
    "masked_fill": Translation("masked_fill", ("mask", "value"), {}, {}, ("self", "mask", "value")),
    "view": Translation("reshape", ("shape",), {}),
    # x.reshape(3, 2), as x.view: the shape is the method's first parameter, not its second
    "reshape": Translation("reshape", ("shape",), {"shape": "shape"}),
    "transpose": Translation("transpose", ("dim0", "dim1"), {}),
    "permute": Translation("transpose", ("axes",), {}),
    # x.sub(y), x.mul(y), x.div(y): methods whose function form numpy spells otherwise (a
    # method's first positional is the other operand; the rest of _COMMON reads its
    # receiver as the function's first parameter, see code.Translator._apply)
    **{
        name: Translation(name, ("other",), {}, {}, ("self", "other"))
        for name in ("sub", "mul", "div")
    },
}

#: Methods whose defaults differ between a PyTorch tensor and a numpy array (``x.var()`` is
#: unbiased on a tensor): translated as the family the code imports says (:func:`lookup`).
FAMILY_METHODS = frozenset({"var", "std"})

#: ``torch.nn`` modules: calling an instance applies the op with its settings.
MODULES: dict[str, Translation] = {
    "LayerNorm": Translation(
        "layernorm",
        ("normalized_shape", "eps"),
        {"normalized_shape": None, "eps": "eps", "elementwise_affine": None, "bias": None},
        {"eps": "1e-05"},
    ),
    "Softmax": Translation("softmax", ("dim",), {"dim": "axis"}, {"axis": -1}),
    "ReLU": Translation("relu", (), {"inplace": None}),
    "GELU": Translation("gelu", (), {"approximate": "approximate"}),
    "Tanh": Translation("tanh", ()),
    "Sigmoid": Translation("sigmoid", ()),
    "SiLU": Translation("silu", ()),
    "Linear": Translation(
        "linear",
        ("in_features", "out_features", "bias"),
        {"bias": "bias", "dtype": None, "device": None},
    ),
    "Embedding": Translation(
        "embedding", ("num_embeddings", "embedding_dim"), {"padding_idx": None}
    ),
}


def lookup(module: str | None, name: str) -> Translation | None:
    """The translation of ``module.name`` (``module`` canonical: ``torch``, ``numpy`` …)."""
    family = FAMILIES.get(module or "")
    if family is None:
        return None
    special = _BY_FAMILY.get(family, {})
    if name in special:
        return special[name]
    if family == "math":
        return None
    return _COMMON.get(name)
