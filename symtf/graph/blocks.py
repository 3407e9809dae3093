"""Building blocks shared by the decoder and encoder–decoder templates.

One attention head from its projections, one LayerNorm or RMSNorm with its
worked pieces, and the feed-forward sublayer, each written as nodes of the step
graph (:class:`~symtf.graph.core.Builder`) whose ops are registry entries
(:mod:`symtf.ops`); nothing is computed here. A convention is a change of one
node's parameters (``sqrt_dk``'s ``scale``, ``var``'s ``unbiased``, ``std``'s
``eps``, the pattern's softmax ``axis``). :mod:`symtf.graph.pipeline` and
:mod:`symtf.graph.seq2seq` both build on them; this module imports neither.
"""

from __future__ import annotations

from typing import Any

from symtf import ops
from symtf.graph.core import Builder

#: A head's softmax axis by the model's setting.
SOFTMAX_AXIS = {"rows": -1, "columns": -2}


def attention_nodes(
    b: Builder,
    h: str,
    hi: int,
    names: tuple[str, str, str],
    *,
    scale: Any,
    d_head: int,
    mask: str = "causal",
    mask_value: Any = None,
    transpose_k: bool = True,
    softmax_axis: str = "rows",
) -> str:
    """Add one head's nodes from its projections: scores, scale, mask, pattern and ``z``.

    Args:
        names: The nodes holding the queries, keys and values (``l0.h0.q`` or ``l0.h0.q_rot``, …).
        scale: The score divisor, or ``None`` for ``√d_head`` (node ``sqrt_dk``'s parameters).
        mask: ``causal``, ``none``, ``causal-after-softmax`` or its unnormalised variant.
        mask_value: The causal mask's fill above the diagonal (``None``: −∞), the
            ``mask_future`` node's ``value``; only a ``causal`` mask has one.

    Returns:
        The name of the head's output node (``h.z``).
    """
    qn, kn, vn = names
    s = b.add(
        f"{h}.scores",
        ops.matmul,
        (qn, kn),
        title=f"raw scores, head {hi + 1}",
        labels={"a": "Q", "b": "K"},
        transpose_b=transpose_k,
    )
    d = b.add(f"{h}.sqrt_dk", ops.divisor, (), title="scale divisor", scale=scale, d_head=d_head)
    src = b.add(
        f"{h}.scaled",
        ops.scale,
        (s, d),
        r"S = \frac{Q K^\top}{\sqrt{d_k}}",
        f"scaled scores, head {hi + 1}",
        labels={"s": r"Q K^\top", "d": r"\sqrt{d_k}"} if scale is None else {"s": r"Q K^\top"},
    )
    axis = SOFTMAX_AXIS[softmax_axis]
    if mask == "causal":
        fill = {} if mask_value is None else {"value": mask_value}  # −∞: no parameter, as before
        src = b.add(
            f"{h}.masked", ops.mask_future, (src,), title=f"masked scores, head {hi + 1}", **fill
        )
    if mask.startswith("causal-after-softmax"):
        w = b.add(
            f"{h}.weights",
            ops.softmax,
            (src,),
            title=f"unmasked weights, head {hi + 1}",
            labels={"x": "S"},
            axis=axis,
        )
        zeroed = b.add(
            f"{h}.masked", ops.zero_future, (w,), title=f"future weights zeroed, head {hi + 1}"
        )
        if mask == "causal-after-softmax":
            a = b.add(
                f"{h}.pattern",
                ops.normalize_rows,
                (zeroed,),
                title=f"attention weights, head {hi + 1}",
            )
        else:
            a = b.add(
                f"{h}.pattern",
                ops.identity,
                (zeroed,),
                "A = W",
                f"attention weights, head {hi + 1}",
            )
    else:
        a = b.add(
            f"{h}.pattern",
            ops.softmax,
            (src,),
            title=f"attention weights, head {hi + 1}",
            labels={"out": "A", "x": "S + M" if mask == "causal" else "S"},
            axis=axis,
        )
    return b.add(
        f"{h}.z",
        ops.matmul,
        (a, vn),
        title=f"head {hi + 1} output",
        labels={"out": "H", "a": "A", "b": "V", "skip_zero_terms": "1"},
    )


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
    mean = b.add(
        f"{name}.mean",
        ops.mean,
        (src,),
        r"\mu = \frac{1}{d}\sum_j x_j",
        "row means",
        axis=-1,
        keepdims=True,
    )
    centered = b.add(f"{name}.centered", ops.sub, (src, mean), r"x - \mu", "centred rows")
    var = b.add(
        f"{name}.var", ops.mean_square, (centered,), title="row variances", unbiased=unbiased
    )
    std = b.add(
        f"{name}.std",
        ops.norm_root,
        (var,),
        title="row deviations",
        eps=eps,
        where=name,
        what="the variance + eps",
    )
    return b.add(
        name,
        ops.normalize,
        (centered, std),
        title="LayerNorm",
        gamma=gamma,
        beta=beta,
        where=name,
    )


def rms_norm_nodes(b: Builder, name: str, src: str, gamma: Any, beta: Any, eps: Any) -> str:
    """Add RMSNorm of node ``src`` as ``name``, with its worked pieces (``.ms``, ``.rms``)."""
    ms = b.add(
        f"{name}.ms",
        ops.mean_square,
        (src,),
        title="mean squares",
        labels={"out": r"\overline{x^2}", "x": "x_j"},
    )
    rms = b.add(
        f"{name}.rms",
        ops.norm_root,
        (ms,),
        title="row RMS",
        labels={"x": r"\overline{x^2}"},
        eps=eps,
        where=name,
        what="the mean square + eps",
    )
    return b.add(
        name,
        ops.normalize,
        (src, rms),
        title="RMSNorm",
        labels={"kind": "rmsnorm"},
        gamma=gamma,
        beta=beta,
        where=name,
    )


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
        ops.linear,
        (src,),
        title="FFN pre-activation" if activation != "swiglu" else "FFN gate pre-activation",
        labels={"x": "Y", "w": "W_1", "b": "b_1"},
        w=layer.W1,
        bias=layer.b1,
        transposed="W1" in tr,
    )
    if activation == "swiglu":
        assert layer.W3 is not None and layer.b3 is not None  # the loader gives swiglu a W3
        up = b.add(
            f"{p}.ffn_up",
            ops.linear,
            (src,),
            title="FFN up projection",
            labels={"x": "Y", "w": "W_3", "b": "b_3"},
            w=layer.W3,
            bias=layer.b3,
            transposed="W3" in tr,
        )
        gate = b.add(f"{p}.ffn_gate", ops.silu, (pre,), title="SiLU gate")
        act = b.add(
            f"{p}.ffn_act",
            ops.mul,
            (gate, up),
            title="FFN activation (SwiGLU)",
            labels={"formula": r"\operatorname{SiLU}(Y W_1) \odot (Y W_3)"},
        )
    else:
        act = b.add(f"{p}.ffn_act", ops.get(activation), (pre,), title="FFN activation")
    return b.add(
        f"{p}.ffn_out",
        ops.linear,
        (act,),
        title="FFN output",
        labels={"out": "F", "x": "a", "w": "W_2", "b": "b_2"},
        w=layer.W2,
        bias=layer.b2,
        transposed="W2" in tr,
    )
