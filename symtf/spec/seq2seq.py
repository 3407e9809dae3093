"""Encoder–decoder derivation files: the model's frozen dataclasses and their reader.

File format (data only, numbers as in the README's "Derivation files")::

    [model]
    architecture = "encoder-decoder"
    d_model = 4
    n_heads = 1                  # d_head = d_model / n_heads unless d_head given
    norm = "post"                # "post" | "pre" (three norms per decoder layer)
    eps = "0"
    activation = "relu"
    encoder_mask = "none"        # "none" (default) | "causal"
    decoder_mask = "causal"      # "causal" (default) | "none" (teacher forcing then fails)
    source_vocab = ["Birds", "build", "nests"]
    vocab = ["<s>", "Los", ...]  # target vocabulary
    start = "<s>"                # decoder start token (default: vocab[0])
    end = "</s>"                 # end token (optional: decoding then runs to max_len)
    source_embed = '''...'''     # |source_vocab| x d_model
    embed = '''...'''            # |vocab| x d_model
    pos = '''...'''              # max_len x d_model, shared by both sides unless source_pos given
    source_pos = '''...'''       # optional
    unembed = '''...'''          # d_model x |vocab|

    [[model.encoder]]            # one table per encoder layer: W_O, W1, b1, W2, b2, ln1_*, ln2_*
    [[model.encoder.heads]]      # W_Q, W_K, W_V (d_model x d_head)

    [[model.decoder]]            # W_O, cross_W_O, W1, b1, W2, b2, ln1_*, ln2_*, ln3_*
    [[model.decoder.self]]       # masked self-attention heads: W_Q, W_K, W_V
    [[model.decoder.cross]]      # cross-attention heads: W_Q reads the decoder, W_K/W_V the encoder

    [input]
    source = ["Birds", "build", "nests"]       # (or source_ids)
    target = ["Los", ..., "</s>"]              # optional: teacher-forced output

    [generate]                   # optional; see symtf.graph.generate
    strategy = "greedy"          # "greedy" | "beam" | "sample"

The encoder pass, the decoder pass and decoding are in :mod:`symtf.graph.seq2seq`.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import sympy

from symtf import ops
from symtf.errors import SpecError
from symtf.numbers import toml_kind as _kind
from symtf.spec.model import MASKS, NORMS, Head, Layer, Standalone, parse_generate
from symtf.spec.tomlread import _cell, _Reader, _vector, matrix

ARCHITECTURE = "encoder-decoder"


@dataclass(frozen=True)
class EncoderLayer:
    """One encoder block: self-attention and FFN, each with a residual and a norm."""

    heads: tuple[Head, ...]
    W_O: sympy.ImmutableMatrix
    W1: sympy.ImmutableMatrix
    b1: sympy.ImmutableMatrix
    W2: sympy.ImmutableMatrix
    b2: sympy.ImmutableMatrix
    norms: tuple[tuple[sympy.ImmutableMatrix, sympy.ImmutableMatrix], ...]  # (gamma, beta) x 2


@dataclass(frozen=True)
class DecoderLayer:
    """One decoder block: masked self-attention, cross-attention and FFN."""

    self_heads: tuple[Head, ...]
    W_O: sympy.ImmutableMatrix
    cross_heads: tuple[Head, ...]
    cross_W_O: sympy.ImmutableMatrix
    W1: sympy.ImmutableMatrix
    b1: sympy.ImmutableMatrix
    W2: sympy.ImmutableMatrix
    b2: sympy.ImmutableMatrix
    norms: tuple[tuple[sympy.ImmutableMatrix, sympy.ImmutableMatrix], ...]  # (gamma, beta) x 3


@dataclass(frozen=True)
class Seq2SeqModel:
    """An encoder–decoder model, its input and its decoding settings.

    Attributes:
        vocab: Target vocabulary (``logits``/``probs`` columns), in id order.
        source_vocab: Source vocabulary.
        start, end: Target ids of the start token and the end token (``None``: none).
        source, target: Source ids; teacher-forced target ids (may be empty).
        generate: Decoding settings, or ``None``.
        layers, standalone: Always empty (kept for code that reads decoder models).
    """

    architecture: str
    d_model: int
    n_heads: int
    d_head: int
    norm: str
    eps: sympy.Expr
    activation: str
    scale: sympy.Expr | None
    encoder_mask: str
    decoder_mask: str
    source_vocab: tuple[str, ...]
    vocab: tuple[str, ...]
    start: int
    end: int | None
    source_embed: sympy.ImmutableMatrix
    embed: sympy.ImmutableMatrix
    source_pos: sympy.ImmutableMatrix | None
    pos: sympy.ImmutableMatrix | None
    unembed: sympy.ImmutableMatrix
    encoder: tuple[EncoderLayer, ...]
    decoder: tuple[DecoderLayer, ...]
    source: tuple[int, ...]
    target: tuple[int, ...]
    generate: Any = None
    layers: tuple[Layer, ...] = ()
    standalone: tuple[Standalone, ...] = ()

    @property
    def mask(self) -> str:
        """The decoder's self-attention mask (the setting decoder models call ``mask``)."""
        return self.decoder_mask


# ----------------------------------------------------------------------------- parsing


def parse(top: _Reader, name: str) -> tuple[Seq2SeqModel, tuple[int, ...]]:
    """Read ``[model]``, ``[input]`` and ``[generate]`` of an encoder–decoder file.

    Args:
        top: The file's top-level table (keys read here are marked as used).
        name: The file name, for messages.

    Returns:
        The model and the source token ids.

    Raises:
        SpecError: Naming the file and the key.
    """
    r = _Reader(top.require("model"), "model")
    w = f"{name}: model"
    r.get("architecture")
    d = r.integer("d_model", lo=1)
    if d is None:
        raise SpecError(f"{w}.d_model: required key is missing")
    h = r.integer("n_heads", 1, lo=1)
    if d % h and r.get("d_head") is None:
        raise SpecError(f"{w}.n_heads: expected a divisor of d_model = {d}, found {h}")
    dh = r.integer("d_head", d // h, lo=1)
    norm = _choice(r, name, "norm", NORMS, "post")
    activation = _choice(r, name, "activation", tuple(ops.ACTIVATIONS), "relu")
    eps = _cell(r.get("eps", 0), f"{w}.eps", symbols=True)
    scale_raw = r.get("scale")
    scale = None if scale_raw is None else _cell(scale_raw, f"{w}.scale", symbols=True)
    enc_mask = _choice(r, name, "encoder_mask", MASKS, "none")
    dec_mask = _choice(r, name, "decoder_mask", MASKS, "causal")
    src_vocab = _words(r.get("source_vocab"), f"{w}.source_vocab")
    vocab = _words(r.get("vocab"), f"{w}.vocab")
    start = _word_id(r.string("start", vocab[0]), vocab, f"{w}.start")
    end_w = r.string("end")
    end = None if end_w is None else _word_id(end_w, vocab, f"{w}.end")
    src_embed = matrix(r.require("source_embed"), f"{w}.source_embed", shape=(len(src_vocab), d))
    embed = matrix(r.require("embed"), f"{w}.embed", shape=(len(vocab), d))
    pos_raw, spos_raw = r.get("pos"), r.get("source_pos")
    pos = None if pos_raw is None else matrix(pos_raw, f"{w}.pos", shape=(None, d))
    src_pos = pos if spos_raw is None else matrix(spos_raw, f"{w}.source_pos", shape=(None, d))
    unembed = matrix(r.require("unembed"), f"{w}.unembed", shape=(d, len(vocab)))
    encoder = tuple(
        _encoder_layer(_Reader(x, f"model.encoder[{i}]"), name, d, h, dh)
        for i, x in enumerate(_tables(r.get("encoder"), f"{w}.encoder", "[[model.encoder]]"))
    )
    decoder = tuple(
        _decoder_layer(_Reader(x, f"model.decoder[{i}]"), name, d, h, dh)
        for i, x in enumerate(_tables(r.get("decoder"), f"{w}.decoder", "[[model.decoder]]"))
    )
    _done(r, name)

    inp = _Reader(top.require("input"), "input")
    src_words, src_ids = inp.get("source"), inp.get("source_ids")
    tgt_words = inp.get("target")
    _done(inp, name)
    if (src_words is None) == (src_ids is None):
        raise SpecError(f"{name}: input: expected exactly one of source or source_ids")
    if src_words is not None:
        source = _sentence(src_words, src_vocab, f"{name}: input.source")
    else:
        source = _ids(src_ids, len(src_vocab), f"{name}: input.source_ids")
    target = () if tgt_words is None else _sentence(tgt_words, vocab, f"{name}: input.target")
    if src_pos is not None and len(source) > src_pos.rows:
        raise SpecError(
            f"{name}: input.source: expected at most {src_pos.rows} tokens "
            f"(the positional table has that many rows), found {len(source)}"
        )
    if pos is not None and len(target) > pos.rows:
        raise SpecError(
            f"{name}: input.target: expected at most {pos.rows} tokens "
            f"(model.pos has that many rows), found {len(target)}"
        )
    generate = parse_generate(top.get("generate"), name, max_positions=pos.rows if pos else None)
    model = Seq2SeqModel(
        ARCHITECTURE,
        d,
        h,
        dh,
        norm,
        eps,
        activation,
        scale,
        enc_mask,
        dec_mask,
        src_vocab,
        vocab,
        start,
        end,
        src_embed,
        embed,
        src_pos,
        pos,
        unembed,
        encoder,
        decoder,
        source,
        target,
        generate,
    )
    return model, source


def _done(r: _Reader, name: str) -> None:
    try:
        r.done()
    except SpecError as e:
        raise SpecError(f"{name}: {e}") from None


def _choice(r: _Reader, name: str, k: str, options: tuple[str, ...], default: str) -> str:
    try:
        return r.choice(k, options, default)
    except SpecError as e:
        raise SpecError(f"{name}: {e}") from None


def _words(v: Any, where: str) -> tuple[str, ...]:
    if not isinstance(v, list) or not v or not all(isinstance(t, str) and t for t in v):
        raise SpecError(
            f"{where}: expected a non-empty array of non-empty strings, found {_kind(v)}"
        )
    if len(set(v)) != len(v):
        raise SpecError(f"{where}: expected distinct tokens, found a repeated one")
    if len(v) > 5000:
        raise SpecError(f"{where}: expected at most 5000 tokens, found {len(v)}")
    return tuple(v)


def _word_id(word: str | None, vocab: Sequence[str], where: str) -> int:
    if word is None or word not in vocab:
        raise SpecError(f"{where}: expected a word of model.vocab, found {_kind(word)}")
    return list(vocab).index(word)


def _sentence(v: Any, vocab: Sequence[str], where: str) -> tuple[int, ...]:
    if not isinstance(v, list) or not v:
        raise SpecError(f"{where}: expected a non-empty array of words, found {_kind(v)}")
    return tuple(_word_id(t, vocab, f"{where}[{i}]") for i, t in enumerate(v))


def _ids(v: Any, n: int, where: str) -> tuple[int, ...]:
    if not isinstance(v, list) or not v:
        raise SpecError(f"{where}: expected a non-empty array of ids, found {_kind(v)}")
    for i, t in enumerate(v):
        if isinstance(t, bool) or not isinstance(t, int) or not 0 <= t < n:
            raise SpecError(f"{where}[{i}]: expected an id from 0 to {n - 1}, found {_kind(t)}")
    return tuple(v)


def _tables(v: Any, where: str, how: str) -> list[dict[str, Any]]:
    if v is None:
        raise SpecError(f"{where}: expected at least one {how} table, found none")
    if not isinstance(v, list) or not v or not all(isinstance(x, dict) for x in v):
        raise SpecError(f"{where}: expected an array of tables ({how}), found {_kind(v)}")
    return v


def _heads(r: _Reader, key: str, name: str, d: int, h: int, dh: int) -> tuple[Head, ...]:
    w = f"{name}: {r.key(key)}"
    raw = r.get(key)
    if raw is None:
        raise SpecError(f"{w}: required key is missing ({h} head tables)")
    if not isinstance(raw, list) or not all(isinstance(x, dict) for x in raw):
        raise SpecError(f"{w}: expected an array of tables, found {_kind(raw)}")
    if len(raw) != h:
        raise SpecError(f"{w}: expected {h} heads (model.n_heads), found {len(raw)}")
    out = []
    for k, x in enumerate(raw):
        hr = _Reader(x, f"{r.key(key)}[{k}]")
        hw = f"{name}: {hr.where}"
        out.append(
            Head(
                *(matrix(hr.require(m), f"{hw}.{m}", shape=(d, dh)) for m in ("W_Q", "W_K", "W_V"))
            )
        )
        _done(hr, name)
    return tuple(out)


def _ffn_and_norms(r: _Reader, name: str, d: int, n_norms: int) -> tuple[Any, ...]:
    w = f"{name}: {r.where}"
    W1 = matrix(r.get("W1", "identity"), f"{w}.W1", shape=(d, None))
    b1 = _vector(r.get("b1"), f"{w}.b1", W1.cols, 0)
    W2 = matrix(r.get("W2", "identity"), f"{w}.W2", shape=(W1.cols, d))
    b2 = _vector(r.get("b2"), f"{w}.b2", d, 0)
    norms = tuple(
        (
            _vector(r.get(f"ln{i}_gamma"), f"{w}.ln{i}_gamma", d, 1),
            _vector(r.get(f"ln{i}_beta"), f"{w}.ln{i}_beta", d, 0),
        )
        for i in range(1, n_norms + 1)
    )
    return W1, b1, W2, b2, norms


def _out(r: _Reader, key: str, name: str, d: int, h: int, dh: int) -> sympy.ImmutableMatrix:
    raw = r.get(key, "identity" if h * dh == d else None)
    if raw is None:
        raise SpecError(
            f"{name}: {r.key(key)}: required when n_heads * d_head ({h * dh}) differs from d_model ({d})"
        )
    return matrix(raw, f"{name}: {r.key(key)}", shape=(h * dh, d))


def _encoder_layer(r: _Reader, name: str, d: int, h: int, dh: int) -> EncoderLayer:
    heads = _heads(r, "heads", name, d, h, dh)
    W_O = _out(r, "W_O", name, d, h, dh)
    W1, b1, W2, b2, norms = _ffn_and_norms(r, name, d, 2)
    _done(r, name)
    return EncoderLayer(heads, W_O, W1, b1, W2, b2, norms)


def _decoder_layer(r: _Reader, name: str, d: int, h: int, dh: int) -> DecoderLayer:
    self_heads = _heads(r, "self", name, d, h, dh)
    W_O = _out(r, "W_O", name, d, h, dh)
    cross_heads = _heads(r, "cross", name, d, h, dh)
    cross_W_O = _out(r, "cross_W_O", name, d, h, dh)
    W1, b1, W2, b2, norms = _ffn_and_norms(r, name, d, 3)
    _done(r, name)
    return DecoderLayer(self_heads, W_O, cross_heads, cross_W_O, W1, b1, W2, b2, norms)
