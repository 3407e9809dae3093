"""Building blocks shared by the decoder and encoder–decoder templates.

One attention head from its projections and one LayerNorm with its worked
pieces, each recorded step by step into a :class:`~symtf.trace.TraceBuilder`.
:mod:`symtf.pipeline` and :mod:`symtf.seq2seq` both build on them; this module
imports neither.
"""

from __future__ import annotations

from typing import Any

from symtf import ops
from symtf.errors import ModelError
from symtf.trace import TraceBuilder

_LN = r"\frac{x-\mu}{\sqrt{\sigma^2+\varepsilon}}\,\gamma+\beta"


def attention_steps(
    xp: Any,
    t: TraceBuilder,
    h: str,
    hi: int,
    q: Any,
    k: Any,
    v: Any,
    names: tuple[str, str],
    *,
    divisor: Any,
    mask: str = "causal",
    transpose_k: bool = True,
    softmax_axis: str = "rows",
) -> Any:
    """Record one head from its projections: scores, scale, mask, pattern and ``z``.

    Args:
        names: The recorded names of ``q`` and ``k`` (``l0.h0.q`` or ``l0.h0.q_rot``).
        mask: ``causal``, ``none``, ``causal-after-softmax`` or its unnormalised variant.
    """
    qn, kn = names
    s = t.add(
        f"{h}.scores",
        ops.scores(xp, q, k, transpose_k=transpose_k),
        (qn, kn),
        "Q K^\\top" if transpose_k else "Q K",
        f"raw scores, head {hi + 1}",
    )
    t.add(f"{h}.sqrt_dk", xp.from_rows([[divisor]]), (), r"\sqrt{d_k}", "scale divisor")
    sc = t.add(
        f"{h}.scaled",
        ops.scale(xp, s, divisor),
        (f"{h}.scores", f"{h}.sqrt_dk"),
        r"S = \frac{Q K^\top}{\sqrt{d_k}}",
        f"scaled scores, head {hi + 1}",
    )
    softmax = ops.softmax_columns if softmax_axis == "columns" else ops.softmax
    sm_tex = r"\operatorname{softmax}" + ("_{\\text{col}}" if softmax_axis == "columns" else "")
    src_s = f"{h}.scaled"
    if mask == "causal":
        sc = t.add(
            f"{h}.masked",
            ops.causal_mask(xp, sc),
            (src_s,),
            "S + M",
            f"masked scores, head {hi + 1}",
        )
        src_s = f"{h}.masked"
    if mask.startswith("causal-after-softmax"):
        w = t.add(
            f"{h}.weights",
            softmax(xp, sc),
            (src_s,),
            sm_tex + "(S)",
            f"unmasked weights, head {hi + 1}",
        )
        zeroed = t.add(
            f"{h}.masked",
            ops.zero_future(xp, w),
            (f"{h}.weights",),
            r"W_{ij} = 0\ (j > i)",
            f"future weights zeroed, head {hi + 1}",
        )
        if mask == "causal-after-softmax":
            a = t.add(
                f"{h}.pattern",
                ops.normalize_rows(xp, zeroed),
                (f"{h}.masked",),
                r"A_{ij} = W_{ij} / \sum_k W_{ik}",
                f"attention weights, head {hi + 1}",
            )
        else:
            a = t.add(
                f"{h}.pattern",
                zeroed,
                (f"{h}.masked",),
                "A = W",
                f"attention weights, head {hi + 1}",
            )
    else:
        a = t.add(
            f"{h}.pattern",
            softmax(xp, sc),
            (src_s,),
            "A = " + sm_tex + ("(S + M)" if mask == "causal" else "(S)"),
            f"attention weights, head {hi + 1}",
        )
    return t.add(
        f"{h}.z",
        ops.attend(xp, a, v),
        (f"{h}.pattern", f"{h}.v"),
        "H = A V",
        f"head {hi + 1} output",
    )


def layer_norm_steps(
    xp: Any,
    t: TraceBuilder,
    name: str,
    x: Any,
    src: str,
    gamma: Any,
    beta: Any,
    eps: Any,
    *,
    unbiased: bool = False,
) -> Any:
    """Record LayerNorm of ``x`` as ``name`` with its worked pieces (``.mean`` … ``.std``)."""
    try:
        parts = ops.layer_norm(
            xp, x, xp.matrix(gamma), xp.matrix(beta), xp.const(eps), unbiased=unbiased
        )
    except ModelError as e:  # name the step: "l0.ln1: the variance + eps of row 2 is exactly 0"
        raise ModelError(f"{name}: {e}") from None
    replay = getattr(t, "override", None) is not None
    mean = t.add(f"{name}.mean", parts.mean, (src,), r"\mu = \frac{1}{d}\sum_j x_j", "row means")
    if replay:  # a replay may have put the article's printed mean in: carry it forward
        parts = _norm_from_mean(xp, x, mean, gamma, beta, eps, unbiased)
    centered = t.add(
        f"{name}.centered", parts.centered, (src, f"{name}.mean"), r"x - \mu", "centred rows"
    )
    if replay:
        parts = _norm_from_centered(xp, centered, gamma, beta, eps, unbiased)
    var = t.add(
        f"{name}.var",
        parts.var,
        (f"{name}.centered",),
        r"\sigma^2 = \frac{1}{d-1}\sum_j (x_j-\mu)^2"
        if unbiased
        else r"\sigma^2 = \frac{1}{d}\sum_j (x_j-\mu)^2",
        "row variances",
    )
    if replay:
        parts = _norm_from_var(xp, centered, var, gamma, beta, eps)
    std = t.add(
        f"{name}.std",
        parts.std,
        (f"{name}.var",),
        r"\sqrt{\sigma^2 + \varepsilon}",
        "row deviations",
    )
    if replay:
        parts = _norm_from_std(xp, centered, std, gamma, beta)
    return t.add(name, parts.out, (f"{name}.centered", f"{name}.std"), _LN, "LayerNorm")


# A replay (symtf.diagnose) substitutes the article's printed pieces of a LayerNorm; each
# later piece is then recomputed from the recorded one, as the article would have.


def _norm_from_std(xp: Any, centered: Any, std: Any, gamma: Any, beta: Any) -> ops.NormParts:
    n, d = xp.shape(centered)
    for i in range(n):
        xp.require_nonzero(xp.entry(std, i, 0), f"the deviation of row {i}")
    normed = xp.div(centered, ops.spread(xp, std, d))
    out = xp.add(
        xp.mul(normed, ops.stack_row(xp, xp.matrix(gamma), n)),
        ops.stack_row(xp, xp.matrix(beta), n),
    )
    return ops.NormParts(None, centered, None, std, out)


def _norm_from_var(
    xp: Any, centered: Any, var: Any, gamma: Any, beta: Any, eps: Any
) -> ops.NormParts:
    n, _ = xp.shape(centered)
    var_eps = xp.add(var, xp.scale(ops.ones(xp, n, 1), xp.const(eps)))
    for i in range(n):
        xp.require_nonzero(xp.entry(var_eps, i, 0), f"the variance + eps of row {i}")
    std = xp.map(var_eps, xp.sqrt)
    parts = _norm_from_std(xp, centered, std, gamma, beta)
    return ops.NormParts(None, centered, var, std, parts.out)


def _norm_from_centered(
    xp: Any, centered: Any, gamma: Any, beta: Any, eps: Any, unbiased: bool
) -> ops.NormParts:
    _, d = xp.shape(centered)
    sq = ops.row_sum(xp, xp.mul(centered, centered))
    var = xp.scale(sq, 1 / xp.const(d - 1 if unbiased else d))
    return _norm_from_var(xp, centered, var, gamma, beta, eps)


def _norm_from_mean(
    xp: Any, x: Any, mean: Any, gamma: Any, beta: Any, eps: Any, unbiased: bool
) -> ops.NormParts:
    _, d = xp.shape(x)
    centered = xp.sub(x, ops.spread(xp, mean, d))
    parts = _norm_from_centered(xp, centered, gamma, beta, eps, unbiased)
    return ops.NormParts(mean, centered, parts.var, parts.std, parts.out)
