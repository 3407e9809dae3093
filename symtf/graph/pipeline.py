"""The templates, written as nodes of the step graph, and ``run``.

``build(derivation)`` expands the decoder, attention and encoder–decoder
settings into nodes with the canonical names (``l0.h0.pattern``, ``ln_f``, …),
adds the user's given tensors and steps after them, and applies the
derivation's convention rewrites; nothing is computed while building.
``run(derivation)`` evaluates that graph and returns an exact
:class:`~symtf.trace.Trace`; pass another backend (``BallBackend(prec)``,
``FloatBackend()``) to run the very same nodes in certified balls or float64.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable
from typing import Any

import sympy

from symtf import ops
from symtf.backends import ExactBackend
from symtf.errors import ModelError, ShapeError, Undecided
from symtf.graph.blocks import (
    _ACT_TEX,
    activation_op,
    add_op,
    attention_nodes,
    concat_op,
    embed_op,
    ffn_nodes,
    ids_op,
    layer_norm_nodes,
    linear_op,
    rms_norm_nodes,
    softmax_op,
)
from symtf.graph.core import Builder, Graph, Live, const, evaluate, given, same
from symtf.limits import enforce
from symtf.spec import Derivation, Head, Layer, Model
from symtf.trace import Trace


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
    forcing = _claims_forcing(xp, override, derivation)
    try:
        return evaluate(build(derivation, forcing=forcing), xp, override)
    except ShapeError as e:
        raise ShapeError(f"{derivation.path}: {e}") from None
    except ModelError as e:
        raise ModelError(f"{derivation.path}: {e}") from None
    except Undecided as e:  # a ball backend's open branch: the caller retries; name the file
        raise Undecided(f"{derivation.path}: {e}") from None


def build(derivation: Derivation, *, forcing: bool = False) -> Graph:
    """The derivation's step graph: template nodes, then given tensors and user steps.

    Args:
        derivation: A loaded derivation.
        forcing: Add the encoder–decoder's ``teacher_forcing`` node (a claim reads it).

    Raises:
        SpecError: A given tensor or step named like a template node.
    """
    from symtf.graph.evaluate import step_nodes
    from symtf.graph.rewrite import apply_rewrites

    m = derivation.model
    b = Builder()
    if m.architecture == "encoder-decoder":
        from symtf.graph.seq2seq import encoder_decoder_nodes

        encoder_decoder_nodes(b, m, forcing=forcing)
    elif m.architecture == "decoder":
        decoder_nodes(b, m, derivation.tokens)
    elif m.architecture == "attention":
        x = b.add("x", given, (), "X", "input rows", matrix=m.embed)
        attention_layer(b, m, m.layers[0], "l0", x)
    standalone_nodes(b, m)
    graph = Graph([*b.nodes, *step_nodes(derivation, b)])
    return apply_rewrites(graph, derivation)


def decoder_nodes(b: Builder, m: Model, tokens: tuple[int, ...]) -> None:
    """A decoder-only model on ``tokens``: embeddings, blocks, final norm, vocabulary, decoding."""
    n = len(tokens)
    b.add("tokens", ids_op, (), "", "token ids", ids=tokens)
    b.add(
        "d_head", const, (), r"d_{\text{head}} = d_{\text{model}}/h", "head width", value=m.d_head
    )
    b.add(
        "embed",
        embed_op,
        (),
        r"E[\text{ids}]",
        "embeddings",
        shown=("tokens",),
        table=m.embed,
        ids=tokens,
    )
    x = _positions(b, m, n)
    for li, layer in enumerate(m.layers):
        x = _block(b, m, layer, f"l{li}", x)
    final = b.add("final", same, (x,), "", "output of the last block")
    out = final
    if m.final_norm:
        eps = m.eps if m.lnf_eps is None else m.lnf_eps
        var = m.variance if m.lnf_variance is None else m.lnf_variance
        out = _norm(b, m, "ln_f", final, m.lnf_gamma, m.lnf_beta, eps, var)
    last = b.add("last", _last_row_op, (out,), "h = Y[-1]", "last row")
    if m.unembed is None:
        return
    logits = b.add(
        "logits",
        linear_op,
        (last,),
        r"z = h\,E^\top" if m.tied else r"z = h\,W_{\text{vocab}}",
        "vocabulary scores",
        w=m.unembed,
    )
    b.add("probs", softmax_op, (logits,), r"P_i = \frac{e^{z_i}}{\sum_j e^{z_j}}", "probabilities")
    b.add("next_token", _argmax_op, (logits,), r"\arg\max_i z_i", "greedy pick")
    if m.generate is not None:
        b.unroll("gen", _generate, m=m, prompt=tokens)


def _last_row_op(xp: Any, y: Any) -> Any:
    return xp.take_rows(y, [xp.shape(y)[0] - 1])


def _argmax_op(xp: Any, z: Any) -> Any:
    """The greedy pick; ``None`` when it depends on free symbols or the fast enclosure is too wide."""
    try:
        return ops.argmax(xp, z)
    except Undecided:
        if isinstance(xp, ExactBackend) or getattr(xp, "name", "") == "midrad":
            return None
        raise


def _claims_forcing(xp: Any, override: Any, derivation: Derivation) -> bool:
    """Whether this run records ``teacher_forcing``: an exact run (not a replay) whose claims read it."""
    return (
        getattr(xp, "name", "") == "exact"
        and override is None
        and any(getattr(c, "assertion", None) == "teacher-forcing" for c in derivation.claims)
    )


def _generate(xp: Any, live: Live, *, m: Model, prompt: tuple[int, ...]) -> None:
    """Decode after the prompt with :mod:`symtf.graph.generate`, a decoder pass per step.

    Every step's pass is built as nodes under ``gen.i.dec`` and evaluated at once;
    ``gen.i.logits``, ``gen.i.probs`` and ``gen.i.token`` follow the names used
    for encoder–decoders.
    """
    from types import SimpleNamespace

    from symtf.graph.generate import generate

    plain = dataclasses.replace(m, generate=None)

    def step(ids: tuple[int, ...], token: int, prefix: str) -> tuple[Any, Any, tuple[int, ...]]:
        ids = (*ids, token)
        nodes: list[Any] = []
        decoder_nodes(Builder(f"{prefix}.dec", nodes), plain, ids)
        top = Builder(sink=nodes)
        logits = top.add(
            f"{prefix}.logits",
            same,
            (f"{prefix}.dec.logits",),
            r"z = h\,W_{\text{vocab}}",
            "vocabulary scores",
        )
        probs = top.add(
            f"{prefix}.probs",
            same,
            (f"{prefix}.dec.probs",),
            r"P_i = \frac{e^{z_i}}{\sum_j e^{z_j}}",
            "probabilities",
        )
        live.run(nodes)
        return live.value(logits), live.value(probs), ids

    view = SimpleNamespace(
        vocab=m.vocab, start=prompt[-1], end=m.stop, target=(), generate=m.generate
    )
    generate(xp, live, view, step, tuple(prompt[:-1]))


def _positions(b: Builder, m: Model, n: int) -> str:
    """Add the positional rows the model asks for; adds ``pos`` (if any) and ``x``."""
    if m.positional in ("given", "learned") and m.pos is not None:
        what = "learned positional rows" if m.positional == "learned" else "positional rows"
        pos = b.add("pos", given, (), "P", what, matrix=m.pos[:n, :])
    elif m.positional == "sinusoidal":
        pos = b.add(
            "pos",
            _sinusoidal_op,
            (),
            r"P_{p,2i} = \sin\frac{p}{b^{2i/d}},\ P_{p,2i+1} = \cos\frac{p}{b^{2i/d}}",
            "sinusoidal positions",
            n=n,
            d=m.d_model,
            base=m.pos_base,
        )
    else:  # none, or rope (positions enter through Q and K)
        return b.add("x", same, ("embed",), "X = E", "block input")
    return b.add("x", add_op, ("embed", pos), "X = E + P", "block input")


def _sinusoidal_op(xp: Any, *, n: int, d: int, base: Any) -> Any:
    return ops.sinusoidal(xp, n, d, base)


def attention_layer(b: Builder, m: Model, layer: Layer, p: str, src: str) -> str:
    """Multi-head attention of node ``src``: heads, ``concat`` and ``attn_out``."""
    heads = [_head(b, m, head, f"{p}.h{hi}", hi, src) for hi, head in enumerate(layer.heads)]
    cat = b.add(
        f"{p}.concat", concat_op, tuple(heads), r"H = [H_1 \cdots H_h]", "heads side by side"
    )
    if layer.W_O is None:
        return cat  # attention alone: the heads are the output
    wo = "W_O" in layer.transposed
    return b.add(
        f"{p}.attn_out",
        linear_op,
        (cat,),
        ("O = H W_O^\\top" if wo else "O = H W_O") + (" + b_O" if layer.b_O is not None else ""),
        "attention output",
        w=layer.W_O,
        bias=layer.b_O,
        transposed=wo,
    )


def _head(b: Builder, m: Model, head: Head, h: str, hi: int, src: str) -> str:
    """One head: projections, scores, scale, mask, pattern and output (``z``)."""
    names = {}
    for letter, w, bias in (
        ("q", head.W_Q, head.b_Q),
        ("k", head.W_K, head.b_K),
        ("v", head.W_V, head.b_V),
    ):
        L = letter.upper()
        tr = f"W_{L}" in head.transposed
        formula = (
            f"{L} = X W_{L}" + ("^\\top" if tr else "") + (f" + b_{L}" if bias is not None else "")
        )
        names[letter] = b.add(
            f"{h}.{letter}",
            linear_op,
            (src,),
            formula,
            f"{ {'q': 'queries', 'k': 'keys', 'v': 'values'}[letter] }, head {hi + 1}",
            w=w,
            bias=bias,
            transposed=tr,
        )
    if m.positional == "rope":
        for letter in ("q", "k"):
            names[letter] = b.add(
                f"{h}.{letter}_rot",
                _rope_op,
                (names[letter],),
                rf"R_p\,{letter.upper()}_p",
                f"rotated {'queries' if letter == 'q' else 'keys'}, head {hi + 1}",
                base=m.pos_base,
                pairs=m.rope_pairs,
            )
    return attention_nodes(
        b,
        h,
        hi,
        (names["q"], names["k"], names["v"]),
        scale=head.scale if head.scale is not None else m.scale,
        d_head=m.d_head,
        mask=m.mask,
        transpose_k=head.transpose_k,
        softmax_axis=head.softmax_axis,
    )


def _rope_op(xp: Any, x: Any, *, base: Any, pairs: str) -> Any:
    return ops.rope(xp, x, base, pairs)


def _norm(
    b: Builder,
    m: Model,
    name: str,
    src: str,
    gamma: Any,
    beta: Any,
    eps: Any,
    variance: str = "biased",
) -> str:
    """The model's norm (LayerNorm or RMSNorm) of node ``src``, with its worked pieces."""
    if m.norm_kind == "rmsnorm":
        return rms_norm_nodes(b, name, src, gamma, beta, eps)
    return layer_norm_nodes(b, name, src, gamma, beta, eps, unbiased=variance == "unbiased")


def _block(b: Builder, m: Model, layer: Layer, p: str, src: str) -> str:
    def norm(k: int, y_src: str) -> str:
        eps = getattr(layer, f"ln{k}_eps")
        var = getattr(layer, f"ln{k}_variance")
        return _norm(
            b,
            m,
            f"{p}.ln{k}",
            y_src,
            getattr(layer, f"ln{k}_gamma"),
            getattr(layer, f"ln{k}_beta"),
            m.eps if eps is None else eps,
            m.variance if var is None else var,
        )

    pre = m.norm == "pre"  # pre-norm: LayerNorm before each sub-layer; post-norm: after each add
    attn = attention_layer(b, m, layer, p, norm(1, src) if pre else src)
    mid = b.add(f"{p}.resid_mid", add_op, (src, attn), "R_1 = X + O", "first residual")
    f_src = norm(2 if pre else 1, mid)
    out = ffn_nodes(b, p, f_src, layer, m.activation, layer.transposed)
    post = b.add(
        f"{p}.resid_post",
        add_op,
        (f_src if m.norm == "post" else mid, out),
        "R_2 = Y + F",
        "second residual",
    )
    if pre:
        return post
    return norm(2, post)


def standalone_nodes(b: Builder, m: Model) -> None:
    """The model's stand-alone steps (a LayerNorm, a softmax, … on a given input)."""
    for s in m.standalone:
        src = b.add(f"{s.name}.input", given, (), "x", f"{s.name} input", matrix=s.input)
        if s.op in ("layernorm", "rmsnorm"):
            d = s.input.cols
            one = sympy.ImmutableMatrix(1, d, [1] * d)
            zero = sympy.ImmutableMatrix(1, d, [0] * d)
            kind = dataclasses.replace(m, norm_kind=s.op)
            eps = m.eps if s.eps is None else s.eps
            _norm(b, kind, s.name, src, one, zero, eps, s.variance)
        elif s.op == "softmax":
            b.add(s.name, softmax_op, (src,), r"\operatorname{softmax}(x)", "softmax")
        else:
            b.add(s.name, activation_op, (src,), _ACT_TEX[s.op], s.op, kind=s.op)
