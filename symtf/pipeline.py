"""Compose :mod:`symtf.ops` into a forward pass that records every step.

``run(derivation)`` returns an exact :class:`~symtf.trace.Trace`; pass another
backend (``BallBackend(prec)``, ``FloatBackend()``) to run the very same steps
in certified balls or float64.
"""

from __future__ import annotations

from typing import Any

import sympy
from sympy.core.parameters import distribute

from symtf import ops
from symtf.backends import ExactBackend
from symtf.errors import ModelError, ShapeError, Undecided
from symtf.spec import Derivation, Layer, Model
from symtf.trace import Trace, TraceBuilder

_LN = r"\frac{x-\mu}{\sqrt{\sigma^2+\varepsilon}}\,\gamma+\beta"


def run(derivation: Derivation, backend: Any = None) -> Trace:
    """Run a derivation's model on its input tokens.

    Args:
        derivation: A loaded derivation.
        backend: Number system; exact SymPy arithmetic by default.

    Raises:
        ModelError: When a step is undefined for these numbers (a zero variance
            with ε = 0), with the step named.
        Undecided: (ball backends only) when a sign cannot be decided at this precision.
    """
    xp = backend if backend is not None else ExactBackend()
    t = TraceBuilder(xp)
    # Numbers must not distribute over sums (2*(a+b) -> 2a+2b): it multiplies sizes.
    with distribute(False):
        _run(xp, t, derivation)
    return t.freeze()


def _run(xp: Any, t: TraceBuilder, derivation: Derivation) -> None:
    m = derivation.model
    try:
        if m.architecture == "decoder":
            _decoder(xp, t, m, derivation.tokens)
        elif m.architecture == "attention":
            x = t.add("x", xp.matrix(m.embed), (), "X", "input rows")
            _attention(xp, t, m, m.layers[0], "l0", x)
        _standalone(xp, t, m)
    except ShapeError as e:
        raise ShapeError(f"{derivation.path}: {e}") from None
    except ModelError as e:
        raise ModelError(f"{derivation.path}: {e}") from None


def _decoder(xp: Any, t: TraceBuilder, m: Model, tokens: tuple[int, ...]) -> None:
    n = len(tokens)
    t.add("tokens", xp.from_rows([[xp.const(i) for i in tokens]]), (), "", "token ids")
    t.add(
        "d_head",
        xp.from_rows([[xp.const(m.d_head)]]),
        (),
        r"d_{\text{head}} = d_{\text{model}}/h",
        "head width",
    )
    emb = t.add(
        "embed",
        ops.embed(xp, xp.matrix(m.embed), tokens),
        ("tokens",),
        r"E[\text{ids}]",
        "embeddings",
    )
    if m.pos is not None:
        pos = t.add("pos", xp.matrix(m.pos[:n, :]), (), "P", "positional rows")
        x = t.add("x", ops.add(xp, emb, pos), ("embed", "pos"), "X = E + P", "block input")
    else:
        x = t.add("x", emb, ("embed",), "X = E", "block input")
    prev = "x"
    for li, layer in enumerate(m.layers):
        x = _block(xp, t, m, layer, f"l{li}", x, prev)
        prev = f"l{li}.resid_post" if m.norm == "pre" else f"l{li}.ln2"
    final = t.add("final", x, (prev,), "", "output of the last block")
    last = t.add("last", xp.take_rows(final, [n - 1]), ("final",), "h = Y[-1]", "last row")
    if m.unembed is None:
        return
    logits = t.add(
        "logits",
        ops.linear(xp, last, xp.matrix(m.unembed)),
        ("last", "unembed"),
        r"z = h\,W_{\text{vocab}}",
        "vocabulary scores",
    )
    t.add(
        "probs",
        ops.softmax(xp, logits),
        ("logits",),
        r"P_i = \frac{e^{z_i}}{\sum_j e^{z_j}}",
        "probabilities",
    )
    try:
        pick = ops.argmax(xp, logits)
    except Undecided:
        if isinstance(xp, ExactBackend):
            pick = None  # depends on free symbols
        else:
            raise
    t.add("next_token", pick, ("logits",), r"\arg\max_i z_i", "greedy pick")


def _attention(xp: Any, t: TraceBuilder, m: Model, layer: Layer, p: str, x: Any) -> Any:
    """Multi-head attention of ``x``; records heads, concat and ``attn_out``."""
    n = xp.shape(x)[0]
    divisor = xp.const(m.scale) if m.scale is not None else xp.sqrt(xp.const(m.d_head))
    heads = []
    for hi, head in enumerate(layer.heads):
        h = f"{p}.h{hi}"
        q = t.add(
            f"{h}.q",
            ops.linear(xp, x, xp.matrix(head.W_Q)),
            ("x",),
            "Q = X W_Q",
            f"queries, head {hi + 1}",
        )
        k = t.add(
            f"{h}.k",
            ops.linear(xp, x, xp.matrix(head.W_K)),
            ("x",),
            "K = X W_K",
            f"keys, head {hi + 1}",
        )
        v = t.add(
            f"{h}.v",
            ops.linear(xp, x, xp.matrix(head.W_V)),
            ("x",),
            "V = X W_V",
            f"values, head {hi + 1}",
        )
        s = t.add(
            f"{h}.scores",
            ops.scores(xp, q, k),
            (f"{h}.q", f"{h}.k"),
            "Q K^\\top",
            f"raw scores, head {hi + 1}",
        )
        d = t.add(f"{h}.sqrt_dk", xp.from_rows([[divisor]]), (), r"\sqrt{d_k}", "scale divisor")
        sc = t.add(
            f"{h}.scaled",
            ops.scale(xp, s, divisor),
            (f"{h}.scores", f"{h}.sqrt_dk"),
            r"S = \frac{Q K^\top}{\sqrt{d_k}}",
            f"scaled scores, head {hi + 1}",
        )
        src = f"{h}.scaled"
        if m.mask == "causal":
            sc = t.add(
                f"{h}.masked",
                ops.causal_mask(xp, sc),
                (f"{h}.scaled",),
                "S + M",
                f"masked scores, head {hi + 1}",
            )
            src = f"{h}.masked"
        a = t.add(
            f"{h}.pattern",
            ops.softmax(xp, sc),
            (src,),
            r"A = \operatorname{softmax}(S + M)",
            f"attention weights, head {hi + 1}",
        )
        z = t.add(
            f"{h}.z",
            ops.attend(xp, a, v),
            (f"{h}.pattern", f"{h}.v"),
            "H = A V",
            f"head {hi + 1} output",
        )
        heads.append(z)
        del d
    cat = t.add(
        f"{p}.concat",
        ops.concat(xp, heads),
        tuple(f"{p}.h{i}.z" for i in range(len(heads))),
        r"H = [H_1 \cdots H_h]",
        "heads side by side",
    )
    del n
    if layer.W_O is None:
        return cat  # attention alone: the heads are the output
    return t.add(
        f"{p}.attn_out",
        ops.linear(xp, cat, xp.matrix(layer.W_O)),
        (f"{p}.concat",),
        "O = H W_O",
        "attention output",
    )


def _norm(
    xp: Any, t: TraceBuilder, name: str, x: Any, src: str, gamma: Any, beta: Any, eps: Any
) -> Any:
    parts = ops.layer_norm(xp, x, xp.matrix(gamma), xp.matrix(beta), xp.const(eps))
    t.add(f"{name}.mean", parts.mean, (src,), r"\mu = \frac{1}{d}\sum_j x_j", "row means")
    t.add(f"{name}.centered", parts.centered, (src, f"{name}.mean"), r"x - \mu", "centred rows")
    t.add(
        f"{name}.var",
        parts.var,
        (f"{name}.centered",),
        r"\sigma^2 = \frac{1}{d}\sum_j (x_j-\mu)^2",
        "row variances",
    )
    t.add(
        f"{name}.std",
        parts.std,
        (f"{name}.var",),
        r"\sqrt{\sigma^2 + \varepsilon}",
        "row deviations",
    )
    return t.add(name, parts.out, (f"{name}.centered", f"{name}.std"), _LN, "LayerNorm")


def _block(xp: Any, t: TraceBuilder, m: Model, layer: Layer, p: str, x: Any, src: str) -> Any:
    eps = m.eps
    if m.norm == "pre":
        a_in = _norm(xp, t, f"{p}.ln1", x, src, layer.ln1_gamma, layer.ln1_beta, eps)
        attn = _attention_from(xp, t, m, layer, p, a_in, f"{p}.ln1")
        mid = t.add(
            f"{p}.resid_mid",
            ops.add(xp, x, attn),
            (src, f"{p}.attn_out"),
            "R_1 = X + O",
            "first residual",
        )
        f_in = _norm(xp, t, f"{p}.ln2", mid, f"{p}.resid_mid", layer.ln2_gamma, layer.ln2_beta, eps)
        f_src = f"{p}.ln2"
    else:
        attn = _attention_from(xp, t, m, layer, p, x, src)
        mid = t.add(
            f"{p}.resid_mid",
            ops.add(xp, x, attn),
            (src, f"{p}.attn_out"),
            "R_1 = X + O",
            "first residual",
        )
        f_in = _norm(xp, t, f"{p}.ln1", mid, f"{p}.resid_mid", layer.ln1_gamma, layer.ln1_beta, eps)
        f_src = f"{p}.ln1"
    pre = t.add(
        f"{p}.ffn_pre",
        ops.linear(xp, f_in, xp.matrix(layer.W1), xp.matrix(layer.b1)),
        (f_src,),
        "Y W_1 + b_1",
        "FFN pre-activation",
    )
    act = t.add(
        f"{p}.ffn_act",
        ops.ACTIVATIONS[m.activation](xp, pre),
        (f"{p}.ffn_pre",),
        rf"\operatorname{{{m.activation}}}(\cdot)",
        "FFN activation",
    )
    out = t.add(
        f"{p}.ffn_out",
        ops.linear(xp, act, xp.matrix(layer.W2), xp.matrix(layer.b2)),
        (f"{p}.ffn_act",),
        "F = a W_2 + b_2",
        "FFN output",
    )
    post = t.add(
        f"{p}.resid_post",
        ops.add(xp, f_in if m.norm == "post" else mid, out),
        (f_src if m.norm == "post" else f"{p}.resid_mid", f"{p}.ffn_out"),
        "R_2 = Y + F",
        "second residual",
    )
    if m.norm == "pre":
        return post
    return _norm(xp, t, f"{p}.ln2", post, f"{p}.resid_post", layer.ln2_gamma, layer.ln2_beta, eps)


def _attention_from(
    xp: Any, t: TraceBuilder, m: Model, layer: Layer, p: str, x: Any, src: str
) -> Any:
    del src  # Q, K, V read the block input; their recorded input is "x" by convention
    return _attention(xp, t, m, layer, p, x)


def _standalone(xp: Any, t: TraceBuilder, m: Model) -> None:
    for s in m.standalone:
        x = t.add(f"{s.name}.input", xp.matrix(s.input), (), "x", f"{s.name} input")
        if s.op == "layernorm":
            d = xp.shape(x)[1]
            one = sympy.ImmutableMatrix(1, d, [1] * d)
            zero = sympy.ImmutableMatrix(1, d, [0] * d)
            _norm(xp, t, s.name, x, f"{s.name}.input", one, zero, m.eps)
        elif s.op == "relu":
            t.add(s.name, ops.relu(xp, x), (f"{s.name}.input",), r"\max(0, x)", "ReLU")
        else:
            t.add(
                s.name,
                ops.softmax(xp, x),
                (f"{s.name}.input",),
                r"\operatorname{softmax}(x)",
                "softmax",
            )
