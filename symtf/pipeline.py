"""Compose :mod:`symtf.ops` into a forward pass that records every step.

``run(derivation)`` returns an exact :class:`~symtf.trace.Trace`; pass another
backend (``BallBackend(prec)``, ``FloatBackend()``) to run the very same steps
in certified balls or float64.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable
from typing import Any

import sympy
from sympy.core.parameters import distribute

from symtf import ops
from symtf.backends import ExactBackend
from symtf.errors import ModelError, ShapeError, Undecided
from symtf.limits import enforce
from symtf.spec import Derivation, Head, Layer, Model
from symtf.trace import Trace, TraceBuilder

_RMS = r"\frac{x}{\sqrt{\overline{x^2}+\varepsilon}}\,\gamma+\beta"
_ACT_TEX = {
    "relu": r"\max(0, x)",
    "gelu": r"\tfrac{x}{2}\bigl(1+\operatorname{erf}(x/\sqrt{2})\bigr)",
    "gelu_tanh": r"\tfrac{x}{2}\bigl(1+\tanh\bigl(\sqrt{2/\pi}\,(x+0.044715x^3)\bigr)\bigr)",
    "silu": r"\frac{x}{1+e^{-x}}",
}


def run(
    derivation: Derivation, backend: Any = None, override: Callable[[str, Any], Any] | None = None
) -> Trace:
    """Run a derivation's model on its input tokens.

    Args:
        derivation: A loaded derivation.
        backend: Number system; exact SymPy arithmetic by default.
        override: Optional ``override(step, value) -> value`` (see :class:`TraceBuilder`).

    Raises:
        ModelError: When a step is undefined for these numbers (a zero variance
            with ε = 0), with the step named.
        Undecided: (ball backends only) when a sign cannot be decided at this precision.
        LimitError: When the model is too large to evaluate (see :mod:`symtf.limits`).
    """
    enforce(derivation)  # refuse a model too large to evaluate before evaluating any of it
    xp = backend if backend is not None else ExactBackend()
    t = TraceBuilder(xp, override)
    # Numbers must not distribute over sums (2*(a+b) -> 2a+2b): it multiplies sizes.
    with distribute(False):
        _run(xp, t, derivation)
    return t.freeze()


def _run(xp: Any, t: TraceBuilder, derivation: Derivation) -> None:
    m = derivation.model
    try:
        if m.architecture == "encoder-decoder":
            from symtf.graph.core import Builder, Live
            from symtf.seq2seq import encoder_decoder_nodes

            b = Builder()
            encoder_decoder_nodes(b, m, forcing=_claims_forcing(xp, t, derivation))
            Live(xp, t).run(b.nodes)
        elif m.architecture == "decoder":
            _decoder(xp, t, m, derivation.tokens)
        elif m.architecture == "attention":
            x = t.add("x", xp.matrix(m.embed), (), "X", "input rows")
            _attention(xp, t, m, m.layers[0], "l0", x)
        _standalone(xp, t, m)
        if (
            derivation.tensors or derivation.steps
        ):  # given tensors and user steps, after the templates
            from symtf.graph.evaluate import run_graph

            run_graph(xp, t, derivation)
    except ShapeError as e:
        raise ShapeError(f"{derivation.path}: {e}") from None
    except ModelError as e:
        raise ModelError(f"{derivation.path}: {e}") from None
    except Undecided as e:  # a ball backend's open branch: the caller retries; name the file
        raise Undecided(f"{derivation.path}: {e}") from None


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
    x = _positions(xp, t, m, emb, n)
    prev = "x"
    for li, layer in enumerate(m.layers):
        x = _block(xp, t, m, layer, f"l{li}", x, prev)
        prev = f"l{li}.resid_post" if m.norm == "pre" else f"l{li}.ln2"
    final = t.add("final", x, (prev,), "", "output of the last block")
    out, out_name = final, "final"
    if m.final_norm:
        eps = m.eps if m.lnf_eps is None else m.lnf_eps
        var = m.variance if m.lnf_variance is None else m.lnf_variance
        out = _norm(xp, t, m, "ln_f", final, "final", m.lnf_gamma, m.lnf_beta, eps, var)
        out_name = "ln_f"
    last = t.add("last", xp.take_rows(out, [n - 1]), (out_name,), "h = Y[-1]", "last row")
    if m.unembed is None:
        return
    logits = t.add(
        "logits",
        ops.linear(xp, last, xp.matrix(m.unembed)),
        ("last",),
        r"z = h\,E^\top" if m.tied else r"z = h\,W_{\text{vocab}}",
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
        if isinstance(xp, ExactBackend) or getattr(xp, "name", "") == "midrad":
            pick = None  # depends on free symbols, or the fast enclosure is too wide
        else:
            raise
    t.add("next_token", pick, ("logits",), r"\arg\max_i z_i", "greedy pick")
    if m.generate is not None:
        _generate(xp, t, m, tokens)


class _Prefixed:
    """Records a nested forward pass under a prefix (``gen.2.dec.l0.h0.pattern``)."""

    def __init__(self, t: TraceBuilder, prefix: str) -> None:
        self.t, self.prefix = t, prefix

    def add(
        self,
        name: str,
        value: Any,
        inputs: tuple[str, ...] = (),
        formula: str = "",
        title: str = "",
    ) -> Any:
        return self.t.add(
            f"{self.prefix}.{name}",
            value,
            tuple(f"{self.prefix}.{i}" for i in inputs),
            formula,
            title,
        )


def _claims_forcing(xp: Any, t: TraceBuilder, derivation: Derivation) -> bool:
    """Whether this run records ``teacher_forcing``: an exact run (not a replay) whose claims read it."""
    return (
        getattr(xp, "name", "") == "exact"
        and t.override is None
        and any(getattr(c, "assertion", None) == "teacher-forcing" for c in derivation.claims)
    )


def _generate(xp: Any, t: TraceBuilder, m: Model, prompt: tuple[int, ...]) -> None:
    """Decode after the prompt with :mod:`symtf.generate`, re-running the decoder each step.

    Every step's forward pass is recorded under ``gen.i.dec``; ``gen.i.logits``,
    ``gen.i.probs`` and ``gen.i.token`` follow the names used for encoder–decoders.
    """
    from types import SimpleNamespace

    from symtf.generate import generate

    def step(ids: tuple[int, ...], token: int, prefix: str) -> tuple[Any, Any, tuple[int, ...]]:
        ids = (*ids, token)
        sub = _Prefixed(t, f"{prefix}.dec")
        _decoder(xp, sub, dataclasses.replace(m, generate=None), ids)  # type: ignore[arg-type]
        logits = t.add(
            f"{prefix}.logits",
            t.value(f"{prefix}.dec.logits"),
            (f"{prefix}.dec.logits",),
            r"z = h\,W_{\text{vocab}}",
            "vocabulary scores",
        )
        probs = t.add(
            f"{prefix}.probs",
            t.value(f"{prefix}.dec.probs"),
            (f"{prefix}.dec.probs",),
            r"P_i = \frac{e^{z_i}}{\sum_j e^{z_j}}",
            "probabilities",
        )
        return logits, probs, ids

    view = SimpleNamespace(
        vocab=m.vocab, start=prompt[-1], end=m.stop, target=(), generate=m.generate
    )
    generate(xp, t, view, step, tuple(prompt[:-1]))


def _positions(xp: Any, t: TraceBuilder, m: Model, emb: Any, n: int) -> Any:
    """Add the positional rows the model asks for; records ``pos`` (if any) and ``x``."""
    if m.positional in ("given", "learned") and m.pos is not None:
        what = "learned positional rows" if m.positional == "learned" else "positional rows"
        pos = t.add("pos", xp.matrix(m.pos[:n, :]), (), "P", what)
    elif m.positional == "sinusoidal":
        pos = t.add(
            "pos",
            ops.sinusoidal(xp, n, m.d_model, m.pos_base),
            (),
            r"P_{p,2i} = \sin\frac{p}{b^{2i/d}},\ P_{p,2i+1} = \cos\frac{p}{b^{2i/d}}",
            "sinusoidal positions",
        )
    else:  # none, or rope (positions enter through Q and K)
        return t.add("x", emb, ("embed",), "X = E", "block input")
    return t.add("x", ops.add(xp, emb, pos), ("embed", "pos"), "X = E + P", "block input")


def _divisor(xp: Any, m: Model, head: Head) -> Any:
    if head.scale is not None:
        return xp.const(head.scale)
    if m.scale is not None:
        return xp.const(m.scale)
    return xp.sqrt(xp.const(m.d_head))


def _attention(
    xp: Any, t: TraceBuilder, m: Model, layer: Layer, p: str, x: Any, src: str = "x"
) -> Any:
    """Multi-head attention of ``x`` (recorded as step ``src``); records heads, concat and ``attn_out``."""
    heads = []
    for hi, head in enumerate(layer.heads):
        heads.append(_head(xp, t, m, head, f"{p}.h{hi}", hi, x, src))
    cat = t.add(
        f"{p}.concat",
        ops.concat(xp, heads),
        tuple(f"{p}.h{i}.z" for i in range(len(heads))),
        r"H = [H_1 \cdots H_h]",
        "heads side by side",
    )
    if layer.W_O is None:
        return cat  # attention alone: the heads are the output
    b_O = None if layer.b_O is None else xp.matrix(layer.b_O)
    wo = "W_O" in layer.transposed
    return t.add(
        f"{p}.attn_out",
        ops.linear(xp, cat, xp.matrix(layer.W_O), b_O, transposed=wo),
        (f"{p}.concat",),
        ("O = H W_O^\\top" if wo else "O = H W_O") + (" + b_O" if b_O is not None else ""),
        "attention output",
    )


def _head(xp: Any, t: TraceBuilder, m: Model, head: Head, h: str, hi: int, x: Any, src: str) -> Any:
    """One head: projections, scores, scale, mask, pattern and output (``z``)."""
    proj = {}
    for letter, w, b in (
        ("q", head.W_Q, head.b_Q),
        ("k", head.W_K, head.b_K),
        ("v", head.W_V, head.b_V),
    ):
        L = letter.upper()
        tr = f"W_{L}" in head.transposed
        formula = (
            f"{L} = X W_{L}" + ("^\\top" if tr else "") + (f" + b_{L}" if b is not None else "")
        )
        proj[letter] = t.add(
            f"{h}.{letter}",
            ops.linear(xp, x, xp.matrix(w), None if b is None else xp.matrix(b), transposed=tr),
            (src,),
            formula,
            f"{ {'q': 'queries', 'k': 'keys', 'v': 'values'}[letter] }, head {hi + 1}",
        )
    q, k, v = proj["q"], proj["k"], proj["v"]
    qn, kn = f"{h}.q", f"{h}.k"
    if m.positional == "rope":
        for letter in ("q", "k"):
            rot = t.add(
                f"{h}.{letter}_rot",
                ops.rope(xp, proj[letter], m.pos_base, m.rope_pairs),
                (f"{h}.{letter}",),
                rf"R_p\,{letter.upper()}_p",
                f"rotated {'queries' if letter == 'q' else 'keys'}, head {hi + 1}",
            )
            if letter == "q":
                q, qn = rot, f"{h}.q_rot"
            else:
                k, kn = rot, f"{h}.k_rot"
    from symtf.blocks import attention_steps  # type: ignore[attr-defined]

    return attention_steps(
        xp,
        t,
        h,
        hi,
        q,
        k,
        v,
        (qn, kn),
        divisor=_divisor(xp, m, head),
        mask=m.mask,
        transpose_k=head.transpose_k,
        softmax_axis=head.softmax_axis,
    )


def _norm(
    xp: Any,
    t: TraceBuilder,
    m: Model,
    name: str,
    x: Any,
    src: str,
    gamma: Any,
    beta: Any,
    eps: Any,
    variance: str = "biased",
) -> Any:
    """The model's norm (LayerNorm or RMSNorm) of ``x``, with its worked pieces."""
    from symtf.blocks import _norm_from_std, layer_norm_steps  # type: ignore[attr-defined]

    if m.norm_kind == "rmsnorm":
        r = ops.rms_norm(xp, x, xp.matrix(gamma), xp.matrix(beta), xp.const(eps))
        replay = getattr(t, "override", None) is not None
        ms = t.add(
            f"{name}.ms", r.ms, (src,), r"\overline{x^2} = \frac{1}{d}\sum_j x_j^2", "mean squares"
        )
        rms_v = r.rms
        if replay:  # carry the article's printed mean square forward
            n = xp.shape(x)[0]
            ms_eps = xp.add(ms, xp.scale(ops.ones(xp, n, 1), xp.const(eps)))
            for i in range(n):
                xp.require_nonzero(xp.entry(ms_eps, i, 0), f"the mean square + eps of row {i}")
            rms_v = xp.map(ms_eps, xp.sqrt)
        rms = t.add(
            f"{name}.rms", rms_v, (f"{name}.ms",), r"\sqrt{\overline{x^2} + \varepsilon}", "row RMS"
        )
        out = _norm_from_std(xp, x, rms, gamma, beta).out if replay else r.out
        return t.add(name, out, (src, f"{name}.rms"), _RMS, "RMSNorm")
    return layer_norm_steps(xp, t, name, x, src, gamma, beta, eps, unbiased=variance == "unbiased")


def _block(xp: Any, t: TraceBuilder, m: Model, layer: Layer, p: str, x: Any, src: str) -> Any:
    def norm(k: int, y: Any, y_src: str) -> Any:
        eps = getattr(layer, f"ln{k}_eps")
        var = getattr(layer, f"ln{k}_variance")
        return _norm(
            xp,
            t,
            m,
            f"{p}.ln{k}",
            y,
            y_src,
            getattr(layer, f"ln{k}_gamma"),
            getattr(layer, f"ln{k}_beta"),
            m.eps if eps is None else eps,
            m.variance if var is None else var,
        )

    pre = m.norm == "pre"  # pre-norm: LayerNorm before each sub-layer; post-norm: after each add
    attn = _attention(xp, t, m, layer, p, norm(1, x, src) if pre else x, f"{p}.ln1" if pre else src)
    mid = t.add(
        f"{p}.resid_mid",
        ops.add(xp, x, attn),
        (src, f"{p}.attn_out"),
        "R_1 = X + O",
        "first residual",
    )
    k = 2 if pre else 1
    f_in = norm(k, mid, f"{p}.resid_mid")
    f_src = f"{p}.ln{k}"
    out = _ffn(xp, t, m, layer, p, f_in, f_src)
    post = t.add(
        f"{p}.resid_post",
        ops.add(xp, f_in if m.norm == "post" else mid, out),
        (f_src if m.norm == "post" else f"{p}.resid_mid", f"{p}.ffn_out"),
        "R_2 = Y + F",
        "second residual",
    )
    if m.norm == "pre":
        return post
    return norm(2, post, f"{p}.resid_post")


def _ffn(xp: Any, t: TraceBuilder, m: Model, layer: Layer, p: str, y: Any, src: str) -> Any:
    """The feed-forward sublayer; records ``ffn_pre``, (``ffn_up``, ``ffn_gate``), ``ffn_act``, ``ffn_out``."""
    tr = layer.transposed
    pre = t.add(
        f"{p}.ffn_pre",
        ops.linear(xp, y, xp.matrix(layer.W1), xp.matrix(layer.b1), transposed="W1" in tr),
        (src,),
        "Y W_1 + b_1",
        "FFN pre-activation" if m.activation != "swiglu" else "FFN gate pre-activation",
    )
    if m.activation == "swiglu":
        assert layer.W3 is not None and layer.b3 is not None  # the loader gives swiglu a W3
        up = t.add(
            f"{p}.ffn_up",
            ops.linear(xp, y, xp.matrix(layer.W3), xp.matrix(layer.b3), transposed="W3" in tr),
            (src,),
            "Y W_3 + b_3",
            "FFN up projection",
        )
        gate = t.add(
            f"{p}.ffn_gate", ops.silu(xp, pre), (f"{p}.ffn_pre",), _ACT_TEX["silu"], "SiLU gate"
        )
        act = t.add(
            f"{p}.ffn_act",
            ops.hadamard(xp, gate, up),
            (f"{p}.ffn_gate", f"{p}.ffn_up"),
            r"\operatorname{SiLU}(Y W_1) \odot (Y W_3)",
            "FFN activation (SwiGLU)",
        )
    else:
        act = t.add(
            f"{p}.ffn_act",
            ops.ACTIVATIONS[m.activation](xp, pre),
            (f"{p}.ffn_pre",),
            _ACT_TEX[m.activation],
            "FFN activation",
        )
    return t.add(
        f"{p}.ffn_out",
        ops.linear(xp, act, xp.matrix(layer.W2), xp.matrix(layer.b2), transposed="W2" in tr),
        (f"{p}.ffn_act",),
        "F = a W_2 + b_2",
        "FFN output",
    )


def _standalone(xp: Any, t: TraceBuilder, m: Model) -> None:
    for s in m.standalone:
        x = t.add(f"{s.name}.input", xp.matrix(s.input), (), "x", f"{s.name} input")
        src = f"{s.name}.input"
        if s.op in ("layernorm", "rmsnorm"):
            d = xp.shape(x)[1]
            one = sympy.ImmutableMatrix(1, d, [1] * d)
            zero = sympy.ImmutableMatrix(1, d, [0] * d)
            kind = dataclasses.replace(m, norm_kind=s.op)
            eps = m.eps if s.eps is None else s.eps
            _norm(xp, t, kind, s.name, x, src, one, zero, eps, s.variance)
        elif s.op == "softmax":
            t.add(s.name, ops.softmax(xp, x), (src,), r"\operatorname{softmax}(x)", "softmax")
        else:
            t.add(s.name, ops.ACTIVATIONS[s.op](xp, x), (src,), _ACT_TEX[s.op], s.op)
