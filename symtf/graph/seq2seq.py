"""Encoder–decoder transformers: the parallel pass and KV-cached decoding.

A derivation with ``[model] architecture = "encoder-decoder"`` describes the
original transformer: an encoder stack over the source sentence (no mask), and
a decoder stack whose layers apply masked self-attention, cross-attention
(queries from the decoder, keys and values from the encoder output) and an FFN.

File format: see :mod:`symtf.spec.seq2seq`.

Step names: ``enc.tokens``, ``enc.embed``, ``enc.pos``, ``enc.x``,
``enc.l0.h0.q`` … ``enc.l0.h0.pattern``, ``enc.l0.attn_out``,
``enc.l0.resid_mid``, ``enc.l0.ln1``, ``enc.l0.ffn_pre``/``ffn_act``/``ffn_out``,
``enc.l0.resid_post``, ``enc.l0.ln2``, ``enc.out``; the cross-attention keys
and values of the encoder output, ``dec.l0.cross.h0.k``/``.v``; with a target,
the teacher-forced parallel pass ``dec.tokens``, ``dec.x``,
``dec.l0.self.h0.pattern``, ``dec.l0.self.attn_out``, ``dec.l0.resid_mid``,
``dec.l0.ln1``, ``dec.l0.cross.h0.pattern``, ``dec.l0.cross.attn_out``,
``dec.l0.resid_cross``, ``dec.l0.ln2``, ``dec.l0.ffn_*``, ``dec.l0.resid_post``,
``dec.l0.ln3``, ``dec.final``, ``dec.logits``, ``dec.probs`` (one row per
target position); and each decoding step ``gen.2.dec.…`` with one query row and
the KV cache as keys (see :mod:`symtf.graph.generate`).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

import sympy

from symtf import ops
from symtf.errors import SpecError
from symtf.graph.blocks import attention_nodes, ffn_nodes, layer_norm_nodes
from symtf.graph.core import Builder, Live, Node, evaluate
from symtf.graph.ties import equal
from symtf.ops.core import Op, Param
from symtf.spec.model import Head
from symtf.spec.seq2seq import DecoderLayer, EncoderLayer, Seq2SeqModel

# ----------------------------------------------------------------------------- forward pass
#
# The template writes nodes into a Builder (nothing is computed while building);
# every value is computed by a node's op from its inputs' values, so a replay that
# puts the article's printed numbers into a node flows on to everything after it.
# The KV cache is nodes too: a decoding step's ``{h}.k`` appends this step's rows
# to the previous step's ``{h}.k`` node.


@dataclass(frozen=True)
class DecoderState:
    """What a decoder remembers between steps: its next position and the KV cache.

    Attributes:
        position: Index of the next token (row of ``pos``).
        cache: Per layer, per head, the names of the ``(K, V)`` nodes holding the
            rows of every token so far (empty before the first token).
    """

    position: int
    cache: tuple[tuple[tuple[str, str], ...], ...]


@dataclass(frozen=True)
class Encoded:
    """The names of the encoder output node and of the cross-attention key and value nodes."""

    out: str
    cross_kv: tuple[tuple[tuple[str, str], ...], ...]  # per decoder layer, per head


def _inputs(b: Builder, p: str, table: Any, pos: Any, ids: Sequence[int], start: int) -> str:
    """Token ids, embedding rows and positional rows ``start…``: adds ``p.tokens/embed/pos/x``.

    Returns:
        The name of the block input node ``p.x``.

    Raises:
        SpecError: When the positions run past the positional table.
    """
    n, ids = len(ids), tuple(ids)
    tok = b.add(f"{p}.tokens", ops.ids, (), "", "token ids", ids=ids)
    emb = b.add(
        f"{p}.embed",
        ops.embed,
        (),
        r"E[\text{ids}]",
        "embeddings",
        shown=(tok,),
        table=table,
        ids=ids,
    )
    if pos is None:
        return b.add(f"{p}.x", ops.identity, (emb,), "X = E", "block input")
    if start + n > pos.rows:
        raise SpecError(
            f"position {start + n - 1} is beyond the {pos.rows} rows of the positional table"
        )
    prow = b.add(f"{p}.pos", ops.given, (), "P", "positional rows", value=pos[start : start + n, :])
    return b.add(f"{p}.x", ops.add, (emb, prow), "X = E + P", "block input")


def _norm(b: Builder, name: str, src: str, gb: tuple[Any, Any], eps: Any) -> str:
    return layer_norm_nodes(b, name, src, gb[0], gb[1], eps)


def _attention(
    b: Builder,
    m: Seq2SeqModel,
    p: str,
    heads: Sequence[Head],
    W_O: Any,
    src: str,
    *,
    kv: Sequence[tuple[str, str]] | None = None,
    past: Sequence[tuple[str, str]] | None = None,
    causal: bool = False,
) -> tuple[str, tuple[tuple[str, str], ...]]:
    """Multi-head attention of the query rows ``src``.

    Keys and values are, in order of preference: the nodes ``kv`` given per head
    (cross-attention over the encoder), the cached nodes ``past`` with the rows of
    ``src`` appended (KV-cached decoding), or the rows of ``src`` (self-attention).

    Returns:
        The name of ``attn_out`` and the names of every head's ``(K, V)`` nodes.
    """
    zs, used = [], []
    for hi, head in enumerate(heads):
        h = f"{p}.h{hi}"
        q = b.add(f"{h}.q", ops.linear, (src,), "Q = X W_Q", f"queries, head {hi + 1}", w=head.W_Q)
        if kv is not None:
            k, v = kv[hi]
        elif past is not None:  # the cache grows; shown as read from this step's rows
            pk, pv = past[hi]
            k = b.add(
                f"{h}.k",
                ops.kv_append,
                (pk, src),
                "K = X W_K",
                f"keys, head {hi + 1}",
                shown=(src,),
                w=head.W_K,
            )
            v = b.add(
                f"{h}.v",
                ops.kv_append,
                (pv, src),
                "V = X W_V",
                f"values, head {hi + 1}",
                shown=(src,),
                w=head.W_V,
            )
        else:
            k = b.add(f"{h}.k", ops.linear, (src,), "K = X W_K", f"keys, head {hi + 1}", w=head.W_K)
            v = b.add(
                f"{h}.v", ops.linear, (src,), "V = X W_V", f"values, head {hi + 1}", w=head.W_V
            )
        used.append((k, v))
        zs.append(
            attention_nodes(
                b,
                h,
                hi,
                (q, k, v),
                scale=m.scale,
                d_head=m.d_head,
                mask="causal" if causal else "none",
            )
        )
    cat = b.add(f"{p}.concat", ops.concat, tuple(zs), r"Z = [Z_1 \cdots Z_h]", "heads side by side")
    out = b.add(f"{p}.attn_out", ops.linear, (cat,), "O = Z W_O", "attention output", w=W_O)
    return out, tuple(used)


def _sublayer(
    b: Builder,
    m: Seq2SeqModel,
    p: str,
    resid: str,
    ln: str,
    gb: Any,
    src: str,
    inner: Callable[[str], tuple[str, Any]],
) -> tuple[str, Any]:
    """Residual sub-layer ``inner`` in the model's norm style.

    ``inner(y)`` adds its nodes reading node ``y`` and returns ``(out, extra)``.
    Post-norm: ``LN(x + inner(x))``. Pre-norm: ``x + inner(LN(x))``.

    Returns:
        The name of the sub-layer's output node and ``inner``'s extra result.
    """
    if m.norm == "pre":
        out, extra = inner(_norm(b, f"{p}.{ln}", src, gb, m.eps))
        return b.add(f"{p}.{resid}", ops.add, (src, out), "X + O", "residual"), extra
    out, extra = inner(src)
    r = b.add(f"{p}.{resid}", ops.add, (src, out), "X + O", "residual")
    return _norm(b, f"{p}.{ln}", r, gb, m.eps), extra


def encode(b: Builder, m: Seq2SeqModel) -> Encoded:
    """Add the encoder over the source and the cross-attention keys and values read from it.

    Adds ``enc.*`` and ``dec.l{i}.cross.h{j}.k``/``.v``.
    """
    src = _inputs(b, "enc", m.source_embed, m.source_pos, m.source, 0)
    for li, layer in enumerate(m.encoder):
        p = f"enc.l{li}"

        def attn(y: str, layer: EncoderLayer = layer, p: str = p) -> tuple[str, Any]:
            causal = m.encoder_mask == "causal"
            return _attention(b, m, p, layer.heads, layer.W_O, y, causal=causal)[0], None

        def ffn(y: str, layer: EncoderLayer = layer, p: str = p) -> tuple[str, Any]:
            return ffn_nodes(b, p, y, layer, m.activation), None

        src, _ = _sublayer(b, m, p, "resid_mid", "ln1", layer.norms[0], src, attn)
        src, _ = _sublayer(b, m, p, "resid_post", "ln2", layer.norms[1], src, ffn)
    out = b.add("enc.out", ops.identity, (src,), "", "encoder output")
    cross = []
    for li, dec_layer in enumerate(m.decoder):
        kvs = []
        for hi, head in enumerate(dec_layer.cross_heads):
            h = f"dec.l{li}.cross.h{hi}"
            k = b.add(
                f"{h}.k",
                ops.linear,
                (out,),
                "K = H_{enc} W_K",
                f"cross keys, head {hi + 1}",
                w=head.W_K,
            )
            v = b.add(
                f"{h}.v",
                ops.linear,
                (out,),
                "V = H_{enc} W_V",
                f"cross values, head {hi + 1}",
                w=head.W_V,
            )
            kvs.append((k, v))
        cross.append(tuple(kvs))
    return Encoded(out, tuple(cross))


def empty_state(m: Seq2SeqModel) -> DecoderState:
    """A decoder that has seen no token yet."""
    return DecoderState(0, ())


def decode(
    b: Builder,
    m: Seq2SeqModel,
    enc: Encoded,
    tokens: Sequence[int],
    p: str = "dec",
    state: DecoderState | None = None,
    out: str | None = None,
) -> tuple[str, str, DecoderState]:
    """Add the decoder on ``tokens``, with the logits and probabilities of every row.

    With ``state is None`` this is the parallel pass: every row at once, the
    self-attention masked by ``decoder_mask``. With a state it is one step of
    KV-cached decoding: the new rows attend to the cached keys and values and
    to themselves, and the new state names the longer cache.

    Adds ``{p}.tokens``, ``{p}.x``, ``{p}.l0.…``, ``{p}.final``, and
    ``{out}.logits``, ``{out}.probs`` (``out`` defaults to ``p``).

    Returns:
        ``(logits, probs, state)``: the names of the ``[len(tokens), |vocab|]``
        nodes, and the state after these tokens.
    """
    cached = state is not None
    start = state.position if state is not None else 0
    src = _inputs(b, p, m.embed, m.pos, tokens, start)
    caches = []
    for li, layer in enumerate(m.decoder):
        lp = f"{p}.l{li}"
        past = state.cache[li] if state is not None and state.cache else None

        def self_attn(
            y: str, layer: DecoderLayer = layer, lp: str = lp, past: Any = past
        ) -> tuple[str, Any]:
            causal = not cached and m.decoder_mask == "causal"
            return _attention(
                b, m, f"{lp}.self", layer.self_heads, layer.W_O, y, past=past, causal=causal
            )

        def cross_attn(
            y: str, layer: DecoderLayer = layer, lp: str = lp, li: int = li
        ) -> tuple[str, Any]:
            kv = enc.cross_kv[li]
            out, _ = _attention(b, m, f"{lp}.cross", layer.cross_heads, layer.cross_W_O, y, kv=kv)
            return out, None

        def ffn(y: str, layer: DecoderLayer = layer, lp: str = lp) -> tuple[str, Any]:
            return ffn_nodes(b, lp, y, layer, m.activation), None

        src, kv = _sublayer(b, m, lp, "resid_mid", "ln1", layer.norms[0], src, self_attn)
        caches.append(kv)
        src, _ = _sublayer(b, m, lp, "resid_cross", "ln2", layer.norms[1], src, cross_attn)
        src, _ = _sublayer(b, m, lp, "resid_post", "ln3", layer.norms[2], src, ffn)
    final = b.add(f"{p}.final", ops.identity, (src,), "", "decoder output")
    o = out or p
    logits = b.add(
        f"{o}.logits",
        ops.linear,
        (final,),
        r"z = h\,W_{\text{vocab}}",
        "vocabulary scores",
        w=m.unembed,
    )
    probs = b.add(
        f"{o}.probs",
        ops.softmax,
        (logits,),
        r"P_i = \frac{e^{z_i}}{\sum_j e^{z_j}}",
        "probabilities",
    )
    return logits, probs, DecoderState(start + len(tokens), tuple(caches))


def forced_input(m: Seq2SeqModel) -> tuple[int, ...]:
    """The decoder input under teacher forcing: the start token, then the target but its last token."""
    return (m.start, *m.target[:-1])


def decoding_op(xp: Any, live: Live, *, model: Seq2SeqModel, enc: Encoded) -> None:
    """The unroll node's op: decode with :func:`symtf.graph.generate.generate`, one step at a time.

    Each step adds one KV-cached decoder pass (``gen.i.dec.…``, ``gen.i.logits``,
    ``gen.i.probs``) as nodes and evaluates them through ``live``; the loop records
    its decisions (``gen.i.token``, ``gen.output``) with ``live.add``.
    """
    from symtf.graph.generate import generate

    def step(state: DecoderState, token: int, prefix: str) -> tuple[Any, Any, DecoderState]:
        nodes: list[Node] = []
        logits, probs, after = decode(
            Builder(sink=nodes), model, enc, [token], f"{prefix}.dec", state, prefix
        )
        live.run(nodes)
        return live.value(logits), live.value(probs), after

    generate(xp, live, model, step, empty_state(model))


def _forcing(xp: Any, *, model: Seq2SeqModel) -> Forcing:
    """:func:`teacher_forcing` of the model (an exact comparison of its own)."""
    return teacher_forcing(model)


#: The ``teacher_forcing`` node's op: the outcome of :func:`teacher_forcing`, not a tensor.
TEACHER_FORCING = Op(
    "teacher_forcing",
    "decoding",
    (Param("model", "value"),),
    _forcing,
    lambda **_: (),
    tex="",
    text="the parallel pass against step-by-step decoding",
    public=False,
    tensor_out=False,
)


def encoder_decoder_nodes(b: Builder, m: Seq2SeqModel, *, forcing: bool) -> None:
    """Add the whole encoder–decoder graph to ``b``: encoder, teacher-forced pass, decoding.

    Args:
        b: Where the nodes go.
        m: The model (with its input and decoding settings).
        forcing: Also add ``teacher_forcing``, the :class:`Forcing` outcome of
            comparing the parallel pass with step-by-step decoding (read by
            ``assert = "teacher-forcing"`` claims); needs ``input.target``.
    """
    enc = encode(b, m)
    if m.target:
        decode(b, m, enc, forced_input(m))
    if m.generate is not None:
        b.unroll("gen", decoding_op, model=m, enc=enc)
    if forcing and m.target:
        b.add(
            "teacher_forcing",
            TEACHER_FORCING,
            (),
            "",
            "parallel (teacher-forced) pass against step-by-step decoding",
            model=m,
        )


# ----------------------------------------------------------------------------- teacher forcing


@dataclass(frozen=True)
class Forcing:
    """The outcome of comparing the parallel pass with step-by-step decoding.

    Attributes:
        holds: ``True`` (every entry equal, exactly), ``False`` (some entry
            certified different) or ``None`` (undecided).
        explanation: Where it fails, or how it was decided.
    """

    holds: bool | None
    explanation: str


def teacher_forcing(m: Seq2SeqModel) -> Forcing:
    """Decide whether the causal parallel pass equals KV-cached step-by-step decoding.

    The decoder runs once over the whole forced input (start token + target
    but its last token), every row at once, and once token by token with a KV
    cache. Every row of the decoder output (``final``) and of ``probs`` must be
    the same exact number. Equality is proved by exact structure (the two
    one-level definitions unfold to the same expression) or by cancelling the
    closed-form difference; a difference is certified by a ball that excludes 0
    (with symbolic weights: after substituting sample rationals for the symbols,
    which shows the two are not the same function).
    """
    from sympy.core.parameters import distribute

    from symtf.backends import ExactBackend

    xp = ExactBackend()
    tokens = forced_input(m)
    b = Builder()
    enc = encode(b, m)
    decode(b, m, enc, tokens, "tf")
    state = empty_state(m)
    for i, tok in enumerate(tokens):
        _, _, state = decode(b, m, enc, [tok], f"kv.{i}", state)
    with distribute(False):
        tr = evaluate(b.graph(), xp)
    undecided = None
    memo: dict[tuple[Any, Any], bool] = {}
    for i in range(len(tokens)):
        for what in ("final", "probs"):
            par, inc = tr.value(f"tf.{what}"), tr.value(f"kv.{i}.{what}")
            for j in range(par.cols):
                same = equal(xp, par[i, j], inc[0, j], memo)
                if same is False:
                    par_v, inc_v = _approx(xp, par[i, j]), _approx(xp, inc[0, j])
                    why = (
                        f"position {i} ({m.vocab[tokens[i]]!r}) differs: the parallel pass gives "
                        f"dec.{what}[{i}, {j}] ≈ {par_v}, step-by-step decoding gives ≈ {inc_v}"
                    )
                    if m.decoder_mask != "causal":
                        why += " (without a causal mask the parallel pass lets a position see later tokens)"
                    return Forcing(False, why)
                if same is None and undecided is None:
                    undecided = f"cannot decide whether dec.{what}[{i}, {j}] agrees"
    if undecided is not None:
        return Forcing(None, undecided)
    return Forcing(
        True,
        f"all {len(tokens)} positions agree exactly (decoder output and probabilities): "
        "the causal parallel pass equals KV-cached step-by-step decoding",
    )


def _approx(xp: Any, e: sympy.Expr) -> str:
    from symtf.backends.decimals import decimal_string

    if xp.user_symbols(e):
        return str(xp.closed_form(e) or e)
    try:
        return decimal_string(xp.ball(e, 128), 12) or "?"
    except Exception:  # an enclosure is only shown, never decided on
        return "?"
