"""The op registry: every op symtf computes, each defined once.

One file per family (:mod:`~symtf.ops.elementwise`, :mod:`~symtf.ops.rounding`,
:mod:`~symtf.ops.logarithms`, :mod:`~symtf.ops.ordering`, :mod:`~symtf.ops.similarity`,
:mod:`~symtf.ops.activations`,
:mod:`~symtf.ops.linalg`, :mod:`~symtf.ops.reductions`, :mod:`~symtf.ops.attention`,
:mod:`~symtf.ops.norms`, :mod:`~symtf.ops.shape`, :mod:`~symtf.ops.losses`,
:mod:`~symtf.ops.positional`, :mod:`~symtf.ops.constructors`). Each op
(:class:`~symtf.ops.core.Op`) carries its signature, shape rule, computation
against the backend protocol, formula, worked substitution, working of one entry
(:mod:`~symtf.ops.working`) and VJP; the step parser, the templates, the
conventions, the renderers, teaching and ``derive`` all read it. Every op is callable: ``softmax(xp, x, axis=-1)``.

Example:
    >>> from symtf.backends import ExactBackend
    >>> from symtf import ops
    >>> xp = ExactBackend()
    >>> ops.softmax(xp, ops.tensor(xp, [0, 0]))
    Tensor(shape=(2,), [1/2, 1/2])
"""

from __future__ import annotations

from typing import Any

from symtf.ops.activations import ACTIVATIONS, GELU_TANH_C, gelu, gelu_tanh, relu, silu
from symtf.ops.array import as_int, full, scalar, tensor
from symtf.ops.attention import (
    causal_mask,
    log_softmax,
    mask_future,
    masked_fill,
    normalize_rows,
    softmax,
    softmax_tex,
    tril,
    triu,
    where,
    zero_future,
)
from symtf.ops.autodiff import grad, jacobian
from symtf.ops.constructors import (
    arange,
    const,
    divisor,
    eye,
    full_,
    given,
    ids,
    one_hot,
    ones,
    zeros,
)
from symtf.ops.core import (
    BREAK,
    REGISTRY,
    Op,
    Param,
    ParamError,
    Substitution,
    get,
    public_signatures,
)
from symtf.ops.elementwise import (
    absolute,
    add,
    cos,
    div,
    dropout,
    exp,
    log,
    mul,
    neg,
    power,
    sigmoid,
    sin,
    softplus,
    sqrt,
    sub,
    tanh,
)
from symtf.ops.linalg import linear, matmul, scale
from symtf.ops.logarithms import expm1, log1p, log2, log10, logsumexp
from symtf.ops.losses import bce, cross_entropy, mse, nll
from symtf.ops.norms import layernorm, norm_root, normalize, rmsnorm
from symtf.ops.ordering import argsort, cumprod, cumsum, sort, topk
from symtf.ops.positional import ROPE_PAIRS, alibi, rope, sinusoidal
from symtf.ops.reductions import (
    argmax,
    greedy,
    largest,
    max_,
    mean,
    mean_square,
    min_,
    std,
    sum_,
    tie_groups,
    var,
)
from symtf.ops.rounding import (
    ceil,
    clip,
    eq,
    floor,
    floordiv,
    ge,
    gt,
    le,
    lt,
    mod,
    ne,
    round_,
    sign,
    trunc,
)
from symtf.ops.shape import (
    T,
    concat,
    embed,
    identity,
    index,
    kv_append,
    last_row,
    merge_heads,
    reshape,
    split_heads,
    stack,
    transpose,
)
from symtf.ops.similarity import cosine_similarity, kl_div, norm


def on_matrices(op: Op[Any], xp: Any, *matrices: Any, **params: Any) -> Any:
    """Run ``op`` on backend matrices (2-D) and return the backend matrix it gives.

    Example:
        >>> import sympy
        >>> from symtf.backends import ExactBackend
        >>> on_matrices(softmax, ExactBackend(), sympy.ImmutableMatrix([[0, 0]]))
        Matrix([[1/2, 1/2]])
    """
    from symtf.tensor import Tensor

    out = op(xp, *(Tensor.wrap(xp, m) for m in matrices), **params)
    return out.native(xp) if isinstance(out, Tensor) else out


__all__ = [
    "ACTIVATIONS",
    "BREAK",
    "GELU_TANH_C",
    "REGISTRY",
    "ROPE_PAIRS",
    "Op",
    "Param",
    "ParamError",
    "Substitution",
    "T",
    "absolute",
    "add",
    "alibi",
    "arange",
    "argmax",
    "argsort",
    "as_int",
    "bce",
    "causal_mask",
    "ceil",
    "clip",
    "concat",
    "const",
    "cos",
    "cosine_similarity",
    "cross_entropy",
    "cumprod",
    "cumsum",
    "div",
    "divisor",
    "dropout",
    "embed",
    "eq",
    "exp",
    "expm1",
    "eye",
    "floor",
    "floordiv",
    "full",
    "full_",
    "ge",
    "gelu",
    "gelu_tanh",
    "get",
    "given",
    "grad",
    "greedy",
    "gt",
    "identity",
    "ids",
    "index",
    "jacobian",
    "kl_div",
    "kv_append",
    "largest",
    "last_row",
    "layernorm",
    "le",
    "linear",
    "log",
    "log1p",
    "log2",
    "log10",
    "log_softmax",
    "logsumexp",
    "lt",
    "mask_future",
    "masked_fill",
    "matmul",
    "max_",
    "mean",
    "mean_square",
    "merge_heads",
    "min_",
    "mod",
    "mse",
    "mul",
    "ne",
    "neg",
    "nll",
    "norm",
    "norm_root",
    "normalize",
    "normalize_rows",
    "on_matrices",
    "one_hot",
    "ones",
    "power",
    "public_signatures",
    "relu",
    "reshape",
    "rmsnorm",
    "rope",
    "round_",
    "scalar",
    "scale",
    "sigmoid",
    "sign",
    "silu",
    "sin",
    "sinusoidal",
    "softmax",
    "softmax_tex",
    "softplus",
    "sort",
    "split_heads",
    "sqrt",
    "stack",
    "std",
    "sub",
    "sum_",
    "tanh",
    "tensor",
    "tie_groups",
    "topk",
    "transpose",
    "tril",
    "triu",
    "trunc",
    "var",
    "where",
    "zero_future",
    "zeros",
]
