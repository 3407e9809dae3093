"""Building blocks shared by the decoder and encoder–decoder templates.

One attention head from its projections, and one LayerNorm or RMSNorm with
its worked pieces, each written as nodes of the step graph
(:class:`~symtf.graph.core.Builder`); nothing is computed here. Each node's op
is a small function of the backend ``xp``, its inputs' values and its
parameters, so a convention is a change of one node's parameters
(``sqrt_dk``'s ``scale``, ``var``'s ``unbiased``, ``std``'s ``eps``, the
pattern's softmax ``axis``). :mod:`symtf.graph.pipeline` and :mod:`symtf.graph.seq2seq`
both build on them; this module imports neither.
"""

from __future__ import annotations

from typing import Any

from symtf import ops
from symtf.errors import ModelError
from symtf.graph.core import Builder, same

_LN = r"\frac{x-\mu}{\sqrt{\sigma^2+\varepsilon}}\,\gamma+\beta"
_ACT_TEX = {
    "relu": r"\max(0, x)",
    "gelu": r"\tfrac{x}{2}\bigl(1+\operatorname{erf}(x/\sqrt{2})\bigr)",
    "gelu_tanh": r"\tfrac{x}{2}\bigl(1+\tanh\bigl(\sqrt{2/\pi}\,(x+0.044715x^3)\bigr)\bigr)",
    "silu": r"\frac{x}{1+e^{-x}}",
}
_RMS = r"\frac{x}{\sqrt{\overline{x^2}+\varepsilon}}\,\gamma+\beta"


def attention_nodes(
    b: Builder,
    h: str,
    hi: int,
    names: tuple[str, str, str],
    *,
    scale: Any,
    d_head: int,
    mask: str = "causal",
    transpose_k: bool = True,
    softmax_axis: str = "rows",
) -> str:
    """Add one head's nodes from its projections: scores, scale, mask, pattern and ``z``.

    Args:
        names: The nodes holding the queries, keys and values (``l0.h0.q`` or ``l0.h0.q_rot``, …).
        scale: The score divisor, or ``None`` for ``√d_head`` (node ``sqrt_dk``'s parameters).
        mask: ``causal``, ``none``, ``causal-after-softmax`` or its unnormalised variant.

    Returns:
        The name of the head's output node (``h.z``).
    """
    qn, kn, vn = names
    s = b.add(
        f"{h}.scores",
        scores_op,
        (qn, kn),
        "Q K^\\top" if transpose_k else "Q K",
        f"raw scores, head {hi + 1}",
        transpose_k=transpose_k,
    )
    d = b.add(
        f"{h}.sqrt_dk", divisor_op, (), r"\sqrt{d_k}", "scale divisor", scale=scale, d_head=d_head
    )
    src = b.add(
        f"{h}.scaled",
        scaled_op,
        (s, d),
        r"S = \frac{Q K^\top}{\sqrt{d_k}}",
        f"scaled scores, head {hi + 1}",
    )
    sm_tex = softmax_tex(softmax_axis)
    if mask == "causal":
        src = b.add(f"{h}.masked", masked_op, (src,), "S + M", f"masked scores, head {hi + 1}")
    if mask.startswith("causal-after-softmax"):
        w = b.add(
            f"{h}.weights",
            softmax_op,
            (src,),
            sm_tex + "(S)",
            f"unmasked weights, head {hi + 1}",
            axis=softmax_axis,
        )
        zeroed = b.add(
            f"{h}.masked",
            zero_future_op,
            (w,),
            r"W_{ij} = 0\ (j > i)",
            f"future weights zeroed, head {hi + 1}",
        )
        if mask == "causal-after-softmax":
            a = b.add(
                f"{h}.pattern",
                normalize_rows_op,
                (zeroed,),
                r"A_{ij} = W_{ij} / \sum_k W_{ik}",
                f"attention weights, head {hi + 1}",
            )
        else:
            a = b.add(f"{h}.pattern", same, (zeroed,), "A = W", f"attention weights, head {hi + 1}")
    else:
        a = b.add(
            f"{h}.pattern",
            softmax_op,
            (src,),
            "A = " + sm_tex + ("(S + M)" if mask == "causal" else "(S)"),
            f"attention weights, head {hi + 1}",
            axis=softmax_axis,
        )
    return b.add(f"{h}.z", attend_op, (a, vn), "H = A V", f"head {hi + 1} output")


def softmax_tex(axis: str) -> str:
    """The LaTeX of a softmax along rows (the definition) or down columns."""
    return r"\operatorname{softmax}" + ("_{\\text{col}}" if axis == "columns" else "")


def scores_op(xp: Any, q: Any, k: Any, *, transpose_k: bool = True) -> Any:
    """``Q·Kᵀ`` (or ``Q·K``)."""
    return ops.scores(xp, q, k, transpose_k=transpose_k)


def divisor_op(xp: Any, *, scale: Any, d_head: int) -> Any:
    """The score divisor as a 1×1 matrix: the given scale, or ``√d_head``."""
    div = xp.const(scale) if scale is not None else xp.sqrt(xp.const(d_head))
    return xp.from_rows([[div]])


def scaled_op(xp: Any, s: Any, d: Any) -> Any:
    """Scores divided by the 1×1 divisor ``d``."""
    return ops.scale(xp, s, xp.entry(d, 0, 0))


def masked_op(xp: Any, s: Any) -> Any:
    """Scores with −∞ above the diagonal."""
    return ops.causal_mask(xp, s)


def softmax_op(xp: Any, s: Any, *, axis: str = "rows") -> Any:
    """Softmax along each row (``rows``) or down each column (``columns``)."""
    return ops.softmax_columns(xp, s) if axis == "columns" else ops.softmax(xp, s)


def zero_future_op(xp: Any, a: Any) -> Any:
    """Weights with the entries above the diagonal set to 0."""
    return ops.zero_future(xp, a)


def normalize_rows_op(xp: Any, a: Any) -> Any:
    """Each row divided by its sum."""
    return ops.normalize_rows(xp, a)


def attend_op(xp: Any, a: Any, v: Any) -> Any:
    """``pattern · V``."""
    return ops.attend(xp, a, v)


def layer_norm_nodes(
    b: Builder,
    name: str,
    src: str,
    gamma: Any,
    beta: Any,
    eps: Any,
    *,
    unbiased: bool = False,
) -> str:
    """Add LayerNorm of node ``src`` as ``name``, with its worked pieces (``.mean`` … ``.std``).

    Each piece is its own node, so a replay that puts the article's printed mean (or
    variance, or deviation) in carries it forward as the article would have.
    """
    mean = b.add(f"{name}.mean", row_mean_op, (src,), r"\mu = \frac{1}{d}\sum_j x_j", "row means")
    centered = b.add(f"{name}.centered", centered_op, (src, mean), r"x - \mu", "centred rows")
    var = b.add(
        f"{name}.var",
        variance_op,
        (centered,),
        variance_tex(unbiased),
        "row variances",
        unbiased=unbiased,
    )
    std = b.add(
        f"{name}.std",
        root_op,
        (var,),
        r"\sqrt{\sigma^2 + \varepsilon}",
        "row deviations",
        eps=eps,
        where=name,
        what="the variance + eps",
    )
    return b.add(
        name, normed_op, (centered, std), _LN, "LayerNorm", gamma=gamma, beta=beta, where=name
    )


def rms_norm_nodes(b: Builder, name: str, src: str, gamma: Any, beta: Any, eps: Any) -> str:
    """Add RMSNorm of node ``src`` as ``name``, with its worked pieces (``.ms``, ``.rms``)."""
    ms = b.add(
        f"{name}.ms",
        mean_square_op,
        (src,),
        r"\overline{x^2} = \frac{1}{d}\sum_j x_j^2",
        "mean squares",
    )
    rms = b.add(
        f"{name}.rms",
        root_op,
        (ms,),
        r"\sqrt{\overline{x^2} + \varepsilon}",
        "row RMS",
        eps=eps,
        where=name,
        what="the mean square + eps",
    )
    return b.add(name, normed_op, (src, rms), _RMS, "RMSNorm", gamma=gamma, beta=beta, where=name)


def variance_tex(unbiased: bool) -> str:
    """The LaTeX of the row variance, dividing by ``d`` or by ``d − 1``."""
    if unbiased:
        return r"\sigma^2 = \frac{1}{d-1}\sum_j (x_j-\mu)^2"
    return r"\sigma^2 = \frac{1}{d}\sum_j (x_j-\mu)^2"


def row_mean_op(xp: Any, x: Any) -> Any:
    """``[n, d] -> [n, 1]``: the mean of each row."""
    return ops.row_mean(xp, x)


def mean_square_op(xp: Any, x: Any) -> Any:
    """``[n, d] -> [n, 1]``: the mean of the squares of each row."""
    return ops.mean_square(xp, x)


def centered_op(xp: Any, x: Any, mean: Any) -> Any:
    """Each row minus its mean."""
    return ops.centre(xp, x, mean)


def variance_op(xp: Any, centered: Any, *, unbiased: bool = False) -> Any:
    """``[n, d] -> [n, 1]``: the squared deviations of each row over ``d`` (or ``d − 1``)."""
    return ops.row_variance(xp, centered, unbiased=unbiased)


def root_op(xp: Any, v: Any, *, eps: Any, where: str, what: str) -> Any:
    """``√(v + ε)`` of each row.

    Raises:
        ModelError: When a row's ``v + ε`` is exactly 0 (the norm and the row named).
    """
    try:
        return ops.row_root(xp, v, xp.const(eps), what)
    except ModelError as e:
        raise ModelError(f"{where}: {e}") from None


def normed_op(xp: Any, centered: Any, std: Any, *, gamma: Any, beta: Any, where: str) -> Any:
    """``centered / std · γ + β`` row by row; ``γ``, ``β`` are the file's ``1 × d`` rows.

    Raises:
        ModelError: A deviation that is exactly 0 (a replayed printed 0), the norm named.
    """
    try:
        return ops.normalise(xp, centered, std, xp.matrix(gamma), xp.matrix(beta))
    except ModelError as e:
        raise ModelError(f"{where}: {e}") from None


def ffn_nodes(
    b: Builder, p: str, src: str, layer: Any, activation: str, transposed: tuple[str, ...] = ()
) -> str:
    """Add the feed-forward sublayer of node ``src``: ``ffn_pre``, (``ffn_up``, ``ffn_gate``),
    ``ffn_act``, ``ffn_out``.

    Args:
        layer: Anything with the file's ``W1``, ``b1``, ``W2``, ``b2`` (and ``W3``, ``b3``
            for SwiGLU).
        activation: ``relu``, ``gelu``, ``gelu_tanh``, ``silu`` or ``swiglu``.
        transposed: The weights applied as ``x·Wᵀ`` (``W1``, ``W2``, ``W3``).
    """
    tr = transposed
    pre = b.add(
        f"{p}.ffn_pre",
        linear_op,
        (src,),
        "Y W_1 + b_1",
        "FFN pre-activation" if activation != "swiglu" else "FFN gate pre-activation",
        w=layer.W1,
        bias=layer.b1,
        transposed="W1" in tr,
    )
    if activation == "swiglu":
        assert layer.W3 is not None and layer.b3 is not None  # the loader gives swiglu a W3
        up = b.add(
            f"{p}.ffn_up",
            linear_op,
            (src,),
            "Y W_3 + b_3",
            "FFN up projection",
            w=layer.W3,
            bias=layer.b3,
            transposed="W3" in tr,
        )
        gate = b.add(
            f"{p}.ffn_gate", activation_op, (pre,), _ACT_TEX["silu"], "SiLU gate", kind="silu"
        )
        act = b.add(
            f"{p}.ffn_act",
            hadamard_op,
            (gate, up),
            r"\operatorname{SiLU}(Y W_1) \odot (Y W_3)",
            "FFN activation (SwiGLU)",
        )
    else:
        act = b.add(
            f"{p}.ffn_act",
            activation_op,
            (pre,),
            _ACT_TEX[activation],
            "FFN activation",
            kind=activation,
        )
    return b.add(
        f"{p}.ffn_out",
        linear_op,
        (act,),
        "F = a W_2 + b_2",
        "FFN output",
        w=layer.W2,
        bias=layer.b2,
        transposed="W2" in tr,
    )


def ids_op(xp: Any, *, ids: tuple[int, ...]) -> Any:
    """Token ids as a ``[1, n]`` row of the backend's numbers."""
    return xp.from_rows([[xp.const(i) for i in ids]])


def embed_op(xp: Any, *, table: Any, ids: tuple[int, ...]) -> Any:
    """The rows ``ids`` of the file's embedding ``table``."""
    return ops.embed(xp, xp.matrix(table), ids)


def linear_op(xp: Any, x: Any, *, w: Any, bias: Any = None, transposed: bool = False) -> Any:
    """``x·W (+ b)``, or ``x·Wᵀ (+ b)``; ``W`` and ``b`` are the file's matrices."""
    b = None if bias is None else xp.matrix(bias)
    return ops.linear(xp, x, xp.matrix(w), b, transposed=transposed)


def add_op(xp: Any, a: Any, b: Any) -> Any:
    """``a + b`` (positions, residual connections)."""
    return ops.add(xp, a, b)


def concat_op(xp: Any, *heads: Any) -> Any:
    """Heads side by side."""
    return ops.concat(xp, list(heads))


def activation_op(xp: Any, x: Any, *, kind: str) -> Any:
    """An activation (``relu``, ``gelu``, ``gelu_tanh``, ``silu``) element-wise."""
    return ops.ACTIVATIONS[kind](xp, x)


def hadamard_op(xp: Any, a: Any, b: Any) -> Any:
    """Entry-wise product (the SwiGLU gate times the up projection)."""
    return ops.hadamard(xp, a, b)


def activation_tex(kind: str) -> str:
    """The LaTeX formula of an activation (``relu``, ``gelu``, ``gelu_tanh``, ``silu``)."""
    return _ACT_TEX[kind]
