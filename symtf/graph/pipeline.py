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
from collections.abc import Callable, Collection
from typing import Any

import sympy

from symtf import ops
from symtf.backends import ExactBackend
from symtf.errors import ModelError, ShapeError, Undecided
from symtf.graph.blocks import attention_nodes, ffn_nodes, layer_norm_nodes, rms_norm_nodes
from symtf.graph.core import Builder, Graph, Live, Reuse, _upstream, evaluate
from symtf.limits import Estimate, enforce, graph_estimate
from symtf.spec import Derivation, Head, Layer, Model
from symtf.spec.seq2seq import Seq2SeqModel
from symtf.trace import Trace


def run(
    derivation: Derivation,
    backend: Any = None,
    override: Callable[[str, Any], Any] | None = None,
    *,
    reuse: Reuse | None = None,
    needed: Collection[str] | None = None,
) -> Trace:
    """Run a derivation's model on its input tokens.

    Args:
        derivation: A loaded derivation.
        backend: Number system; exact SymPy arithmetic by default.
        override: Optional ``override(step, value) -> value`` (see :class:`TraceBuilder`).
        reuse: An earlier trace in the same backend whose unchanged nodes are taken
            as they are (:class:`~symtf.graph.core.Reuse`).
        needed: Evaluate only what these steps are computed from.

    Raises:
        ModelError: When a step is undefined for these numbers (a zero variance
            with ε = 0), with the step named.
        Undecided: (ball backends only) when a sign cannot be decided at this precision.
        LimitError: When the model is too large to evaluate (see :mod:`symtf.limits`).
    """
    xp = backend if backend is not None else ExactBackend()
    forcing = _claims_forcing(xp, override, derivation)
    # Refuse a model too large for this backend before evaluating it. A certified float or
    # ball pass is sized from the nodes it evaluates (only what ``needed`` is computed
    # from); the exact pass from the model's shape, as calibrated.
    kind = str(getattr(xp, "name", "exact"))
    size = None if kind == "exact" else (lambda: _size_of(derivation, forcing, xp, needed))
    what = "" if needed is None else f"what {_listed(needed)} {_is(needed)} computed from"
    try:
        enforce(derivation, xp, size, what)
        return evaluate(graph_of(derivation, forcing), xp, override, reuse=reuse, needed=needed)
    except ShapeError as e:
        raise ShapeError(f"{derivation.path}: {e}") from None
    except ModelError as e:
        raise ModelError(f"{derivation.path}: {e}") from None
    except Undecided as e:  # a ball backend's open branch: the caller retries; name the file
        raise Undecided(f"{derivation.path}: {e}") from None


def _size_of(
    derivation: Derivation, forcing: bool, xp: Any, needed: Collection[str] | None
) -> Estimate | None:
    """The cost of this pass: the graph's nodes that run, in backend ``xp``."""
    graph = graph_of(derivation, forcing)
    keep = None if needed is None else _upstream(graph.nodes, needed)
    if needed is not None and keep is None:
        return None  # a needed name emitted while evaluating (decoding): the whole model's
    prec = int(getattr(xp, "prec", 128) or 128)
    return graph_estimate(graph.nodes, graph.shapes(), keep, str(xp.name), prec)


def _listed(names: Collection[str]) -> str:
    """``l3.ffn_out`` / ``l0.attn_out and l3.ffn_out`` / ``l0.attn_out and 4 other steps``."""
    s = sorted(names)
    if len(s) <= 2:
        return " and ".join(s)
    return f"{s[0]} and {len(s) - 1} other steps"


def _is(names: Collection[str]) -> str:
    return "is" if len(names) == 1 else "are"


#: Graphs already built, by the derivation object they were built from (kept while it lives).
_GRAPHS: dict[tuple[int, bool], tuple[Derivation, Graph]] = {}


def graph_of(derivation: Derivation, forcing: bool = False) -> Graph:
    """The derivation's graph, built once per derivation object (it is frozen)."""
    key = (id(derivation), forcing)
    hit = _GRAPHS.get(key)
    if hit is not None and hit[0] is derivation:
        return hit[1]
    graph = build(derivation, forcing=forcing)
    if len(_GRAPHS) > 64:
        _GRAPHS.clear()
    _GRAPHS[key] = (derivation, graph)
    return graph


def build(derivation: Derivation, *, forcing: bool = False) -> Graph:
    """The derivation's step graph: template nodes, then given tensors and user steps.

    Args:
        derivation: A loaded derivation.
        forcing: Add the encoder–decoder's ``teacher_forcing`` node (a claim reads it).

    Raises:
        SpecError: A given tensor or step named like a template node, or a step whose
            shapes do not fit (file, step and column named).
        ShapeError: A template node whose shapes do not fit.
    """
    from symtf.graph.rewrite import apply_rewrites

    m = derivation.model
    b = Builder()
    if isinstance(m, Seq2SeqModel):  # architecture "encoder-decoder" (only it reads as one)
        from symtf.graph.seq2seq import encoder_decoder_nodes

        encoder_decoder_nodes(b, m, forcing=forcing)  # its standalone steps are always none
    else:
        if m.architecture == "decoder":
            decoder_nodes(b, m, derivation.tokens)
        elif m.architecture == "attention":
            x = b.add("x", ops.given, (), "X", "input rows", value=m.embed)
            attention_layer(b, m, m.layers[0], "l0", x)
        standalone_nodes(b, m)
    # the step language is imported only for a file that gives tensors or writes steps
    written = bool(getattr(derivation, "tensors", ()) or getattr(derivation, "steps", ()))
    nodes = list(b.nodes)
    if written:
        from symtf.graph.evaluate import step_nodes

        nodes += step_nodes(derivation, b)
    graph = apply_rewrites(Graph(nodes), derivation)
    if written:  # each grad/jacobian node reads the nodes its sweep passes through
        from symtf.graph.autodiff import resolve

        graph = resolve(graph)
    graph.shapes()  # every shape rule before anything is evaluated: errors name both shapes
    return graph


def decoder_nodes(b: Builder, m: Model, tokens: tuple[int, ...]) -> None:
    """A decoder-only model on ``tokens``: embeddings, blocks, final norm, vocabulary, decoding."""
    n = len(tokens)
    b.add("tokens", ops.ids, (), "", "token ids", ids=tokens)
    b.add(
        "d_head",
        ops.const,
        (),
        r"d_{\text{head}} = d_{\text{model}}/h",
        "head width",
        value=m.d_head,
    )
    b.add(
        "embed",
        ops.embed,
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
    final = b.add("final", ops.identity, (x,), "", "output of the last block")
    out = final
    if m.final_norm:
        eps = m.eps if m.lnf_eps is None else m.lnf_eps
        var = m.variance if m.lnf_variance is None else m.lnf_variance
        out = _norm(b, m, "ln_f", final, m.lnf_gamma, m.lnf_beta, eps, var)
    last = b.add("last", ops.last_row, (out,), title="last row")
    if m.unembed is None:
        return
    logits = b.add(
        "logits",
        ops.linear,
        (last,),
        title="vocabulary scores",
        labels=(
            {"out": "z", "x": "h", "w": "E", "tight": "1", "tied": "1"}
            if m.tied
            else {"out": "z", "x": "h", "w": r"W_{\text{vocab}}", "w_text": "W_vocab", "tight": "1"}
        ),
        w=m.unembed,
    )
    b.add(
        "probs",
        ops.softmax,
        (logits,),
        r"P_i = \frac{e^{z_i}}{\sum_j e^{z_j}}",
        "probabilities",
    )
    b.add("next_token", ops.greedy, (logits,), title="greedy pick")
    if m.generate is not None:
        b.unroll("gen", _generate, m=m, prompt=tokens)


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
            ops.identity,
            (f"{prefix}.dec.logits",),
            r"z = h\,W_{\text{vocab}}",
            "vocabulary scores",
        )
        probs = top.add(
            f"{prefix}.probs",
            ops.identity,
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
        pos = b.add("pos", ops.given, (), "P", what, value=m.pos[:n, :])
    elif m.positional == "sinusoidal":
        pos = b.add(
            "pos",
            ops.sinusoidal,
            (),
            title="sinusoidal positions",
            n=n,
            d=m.d_model,
            base=m.pos_base,
        )
    else:  # none, or rope (positions enter through Q and K)
        return b.add("x", ops.identity, ("embed",), "X = E", "block input")
    return b.add("x", ops.add, ("embed", pos), "X = E + P", "block input")


def attention_layer(b: Builder, m: Model, layer: Layer, p: str, src: str) -> str:
    """Multi-head attention of node ``src``: heads, ``concat`` and ``attn_out``."""
    heads = [_head(b, m, head, f"{p}.h{hi}", hi, src) for hi, head in enumerate(layer.heads)]
    cat = b.add(
        f"{p}.concat", ops.concat, tuple(heads), r"H = [H_1 \cdots H_h]", "heads side by side"
    )
    if layer.W_O is None:
        return cat  # attention alone: the heads are the output
    wo = "W_O" in layer.transposed
    return b.add(
        f"{p}.attn_out",
        ops.linear,
        (cat,),
        title="attention output",
        labels={"out": "O", "x": "H", "w": "W_O", "b": "b_O"},
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
        names[letter] = b.add(
            f"{h}.{letter}",
            ops.linear,
            (src,),
            title=f"{ {'q': 'queries', 'k': 'keys', 'v': 'values'}[letter] }, head {hi + 1}",
            labels={"out": L, "x": "X", "w": f"W_{L}", "b": f"b_{L}"},
            w=w,
            bias=bias,
            transposed=f"W_{L}" in head.transposed,
        )
    if m.positional == "rope":
        for letter in ("q", "k"):
            names[letter] = b.add(
                f"{h}.{letter}_rot",
                ops.rope,
                (names[letter],),
                title=f"rotated {'queries' if letter == 'q' else 'keys'}, head {hi + 1}",
                labels={"x": letter.upper()},
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
        mask_value=m.mask_value,
        transpose_k=head.transpose_k,
        softmax_axis=head.softmax_axis,
    )


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
    mid = b.add(f"{p}.resid_mid", ops.add, (src, attn), "R_1 = X + O", "first residual")
    f_src = norm(2 if pre else 1, mid)
    out = ffn_nodes(b, p, f_src, layer, m.activation, layer.transposed)
    post = b.add(
        f"{p}.resid_post",
        ops.add,
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
        src = b.add(f"{s.name}.input", ops.given, (), "x", f"{s.name} input", value=s.input)
        if s.op in ("layernorm", "rmsnorm"):
            d = s.input.cols
            one = sympy.ImmutableMatrix(1, d, [1] * d)
            zero = sympy.ImmutableMatrix(1, d, [0] * d)
            kind = dataclasses.replace(m, norm_kind=s.op)
            eps = m.eps if s.eps is None else s.eps
            _norm(b, kind, s.name, src, one, zero, eps, s.variance)
        elif s.op == "softmax":
            b.add(s.name, ops.softmax, (src,), r"\operatorname{softmax}(x)", "softmax")
        else:
            b.add(s.name, ops.get(s.op), (src,), title=s.op)
