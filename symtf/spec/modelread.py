"""The ``[model]`` table of a derivation file read into a :class:`~symtf.spec.model.Model`:
its architecture and sizes, layers and heads, norms, masks and standalone ops, and the
tokens its input gives. Every error names the file, the key, what was expected and what
was found.
"""

from __future__ import annotations

import re
from contextvars import ContextVar
from typing import Any

import sympy

from symtf.errors import SpecError
from symtf.numbers import toml_kind as _kind
from symtf.spec.model import (
    ACTIVATIONS,
    ARCHITECTURES,
    HEAD_PROJECTIONS,
    LAYER_PROJECTIONS,
    MASKS,
    NORM_KINDS,
    NORMS,
    POSITIONALS,
    ROPE_PAIRS,
    SOFTMAX_AXES,
    STANDALONE_OPS,
    VARIANCES,
    Head,
    Layer,
    Model,
    Standalone,
)
from symtf.spec.symbols import NAME as SYMBOL_NAME
from symtf.spec.symbols import make
from symtf.spec.tomlread import MAX_DIM, _cell, _Reader, _vector, matrix

#: Set while a derivation with a weights file is read: dimensions may then exceed MAX_DIM.
FILE_WEIGHTS: ContextVar[bool] = ContextVar("symtf_file_weights", default=False)


def max_dim() -> int:
    """The largest dimension allowed: MAX_DIM, or symtf.spec.weights.MAX_FILE_DIM with a weights file."""
    if not FILE_WEIGHTS.get():
        return MAX_DIM
    from symtf.spec.weights import MAX_FILE_DIM

    return MAX_FILE_DIM


_STEP = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*(\.[A-Za-z0-9_]+)*$")


def read_words(raw: Any, where: str) -> tuple[str, ...]:
    """A ``vocab``: the model's tokens, or a step file's words a claim on a score vector or an
    argmax may print."""
    if raw is None:
        return ()
    if not isinstance(raw, list) or not all(isinstance(t, str) and t for t in raw):
        raise SpecError(f"{where}: expected an array of non-empty strings, found {_kind(raw)}")
    if len(set(raw)) != len(raw):
        raise SpecError(f"{where}: expected distinct tokens, found a repeated one")
    if len(raw) > 5000:
        raise SpecError(f"{where}: expected at most 5000 tokens, found {len(raw)}")
    return tuple(raw)


def finish(r: _Reader, name: str) -> None:
    try:
        r.done()
    except SpecError as e:
        raise SpecError(f"{name}: {e}") from None


def read_model(r: _Reader, name: str) -> Model:
    w = f"{name}: model"
    arch = r.choice("architecture", ARCHITECTURES, "decoder")
    standalone = _standalone(r.get("standalone", []), name)
    if arch == "none":
        finish(r, name)
        return Model(architecture="none", standalone=standalone)
    d_model = r.integer("d_model", lo=1, hi=max_dim())
    if d_model is None:
        raise SpecError(f"{w}.d_model: required key is missing")
    n_heads = r.integer("n_heads", 1, lo=1)
    if d_model % n_heads and r.get("d_head") is None:
        raise SpecError(f"{w}.n_heads: expected a divisor of d_model = {d_model}, found {n_heads}")
    d_head = r.integer("d_head", d_model // n_heads, lo=1, hi=max_dim())
    mask = r.choice("mask", MASKS, "causal")
    mask_value = _mask_value(r.get("mask_value"), mask, f"{w}.mask_value")
    norm = r.choice("norm", NORMS, "post")
    norm_kind = r.choice("norm_kind", NORM_KINDS, "layernorm")
    variance = r.choice("variance", VARIANCES, "biased")
    activation = r.choice("activation", ACTIVATIONS, "relu")
    eps = _cell(r.get("eps", 0), f"{w}.eps", symbols=True)
    _nonnegative(eps, f"{w}.eps")
    d_ff = r.integer("d_ff", lo=1, hi=max_dim())
    scale_raw = r.get("scale")
    scale = None if scale_raw is None else _cell(scale_raw, f"{w}.scale", symbols=True)
    if scale is not None and scale == 0:
        raise SpecError(f"{w}.scale: expected a non-zero divisor, found 0")
    vocab = list(read_words(r.get("vocab", []), f"{w}.vocab"))
    V = len(vocab)
    if arch == "decoder":
        if not vocab:
            raise SpecError(f"{w}.vocab: required for a decoder")
        embed = matrix(r.require("embed"), f"{w}.embed", shape=(V, d_model))
        unembed_raw = r.get("unembed")
        unembed = (
            None if unembed_raw is None else matrix(unembed_raw, f"{w}.unembed", shape=(d_model, V))
        )
    else:
        embed = matrix(r.require("embed"), f"{w}.embed", shape=(None, d_model))
        unembed = None
        if vocab and len(vocab) != embed.rows:
            raise SpecError(
                f"{w}.vocab: expected {embed.rows} tokens (one per embed row), found {len(vocab)}"
            )
    pos_raw = r.get("pos")
    pos = None if pos_raw is None else matrix(pos_raw, f"{w}.pos", shape=(None, d_model))
    positional = r.choice("positional", POSITIONALS, "none" if pos is None else "given")
    if positional in ("given", "learned") and pos is None:
        raise SpecError(f"{w}.pos: required for positional = {positional!r} (the table of rows)")
    if positional not in ("given", "learned") and pos is not None:
        raise SpecError(
            f"{w}.pos: expected no table with positional = {positional!r} (the rows are computed)"
        )
    pos_base = _cell(r.get("pos_base", 10000), f"{w}.pos_base", symbols=True)
    if pos_base.is_Rational and pos_base <= 0:
        raise SpecError(f"{w}.pos_base: expected a positive number, found {pos_base}")
    rope_pairs = r.choice("rope_pairs", ROPE_PAIRS, "adjacent")
    if positional == "rope" and d_head % 2:
        raise SpecError(f"{w}.d_head: rotary positions need an even d_head, found {d_head}")
    tied = r.boolean("tie_embeddings", False)
    if tied:
        if arch != "decoder":
            raise SpecError(f"{w}.tie_embeddings: only a decoder has an unembedding to tie")
        if unembed is not None:
            raise SpecError(
                f"{w}.unembed: expected no unembed with tie_embeddings = true (it is embed transposed)"
            )
        unembed = sympy.ImmutableMatrix(embed.T) if isinstance(embed, sympy.MatrixBase) else embed.T
    final_norm = r.boolean("final_norm", False)
    lnf_gamma = _vector(r.get("lnf_gamma"), f"{w}.lnf_gamma", d_model, 1)
    lnf_beta = _vector(r.get("lnf_beta"), f"{w}.lnf_beta", d_model, 0)
    lnf_eps_raw = r.get("lnf_eps")
    lnf_eps = None if lnf_eps_raw is None else _cell(lnf_eps_raw, f"{w}.lnf_eps", symbols=True)
    if lnf_eps is not None:
        _nonnegative(lnf_eps, f"{w}.lnf_eps")
    lnf_variance = (
        None
        if r.table.get("lnf_variance") is None
        else r.choice("lnf_variance", VARIANCES, "biased")
    )
    for k in ("lnf_gamma", "lnf_beta", "lnf_eps", "lnf_variance"):
        if not final_norm and r.table.get(k) is not None:
            raise SpecError(f"{w}.{k}: given, but final_norm is false")
    layers_raw = r.get("layers", [])
    if not isinstance(layers_raw, list) or not all(isinstance(x, dict) for x in layers_raw):
        raise SpecError(
            f"{w}.layers: expected an array of tables ([[model.layers]]), found {_kind(layers_raw)}"
        )
    if not layers_raw:
        raise SpecError(f"{w}.layers: expected at least one [[model.layers]] table, found none")
    if arch == "attention" and len(layers_raw) != 1:
        raise SpecError(
            f"{w}.layers: an attention-only model has exactly one layer, found {len(layers_raw)}"
        )
    layers = tuple(
        _layer(
            _Reader(x, f"model.layers[{i}]"),
            name,
            d_model,
            n_heads,
            d_head,
            full=arch == "decoder",
            activation=activation,
            d_ff=d_ff,
        )
        for i, x in enumerate(layers_raw)
    )
    finish(r, name)
    return Model(
        arch,
        d_model,
        n_heads,
        d_head,
        mask,
        norm,
        eps,
        activation,
        scale,
        tuple(vocab),
        embed,
        pos,
        unembed,
        layers,
        standalone,
        positional=positional,
        pos_base=pos_base,
        rope_pairs=rope_pairs,
        norm_kind=norm_kind,
        variance=variance,
        final_norm=final_norm,
        lnf_gamma=lnf_gamma if final_norm else None,
        lnf_beta=lnf_beta if final_norm else None,
        tied=tied,
        lnf_eps=lnf_eps,
        lnf_variance=lnf_variance,
        mask_value=mask_value,
    )


_NEG_INF = re.compile(r"^-\s*(inf|infinity|∞)$", re.IGNORECASE)


def _mask_value(raw: Any, mask: str, where: str) -> sympy.Expr | None:
    """A causal mask's fill above the diagonal: ``None`` for −∞ (the default, also when
    written ``"-inf"``), an exact number below 0, a symbol ``m`` or its negative ``-M``."""
    if raw is None:
        return None
    if mask != "causal":
        raise SpecError(
            f'{where}: applies to mask = "causal" only (the fill above the diagonal, before '
            f"the softmax); found mask = {mask!r}"
        )
    text = raw.strip().replace("−", "-") if isinstance(raw, str) else None
    if text is not None and _NEG_INF.match(text):
        return None
    if text is not None and text.startswith("-") and SYMBOL_NAME.match(text[1:].strip()):
        return -make(text[1:].strip())  # -M: the symbol M, negated
    expected = (
        f"{where}: expected a negative number (like -1e9 or -10000), a symbol (m or -M) or -inf"
    )
    try:
        value = _cell(raw, where, symbols=True)
    except SpecError:
        raise SpecError(f"{expected}, found {_kind(raw)}") from None
    if not value.is_Symbol and not value < 0:
        raise SpecError(f"{expected}, found {raw if not isinstance(raw, str) else repr(raw)}")
    return value


def _nonnegative(x: sympy.Expr, where: str) -> None:
    if x.is_Rational and x < 0:
        raise SpecError(f"{where}: expected a number >= 0, found {x}")


def _square(m: sympy.ImmutableMatrix | None, name: str, where: str) -> None:
    if m is not None and m.rows != m.cols:
        raise SpecError(
            f"{where}.transposed: {name} is {m.rows}x{m.cols}; only a square matrix can be applied as x·Wᵀ"
        )


def _layer(
    r: _Reader,
    name: str,
    d: int,
    h: int,
    dh: int,
    *,
    full: bool,
    activation: str = "relu",
    d_ff: int | None = None,
) -> Layer:
    w = f"{name}: {r.where}"
    heads_raw = r.require("heads")
    if not isinstance(heads_raw, list) or not all(isinstance(x, dict) for x in heads_raw):
        raise SpecError(f"{w}.heads: expected an array of tables, found {_kind(heads_raw)}")
    if len(heads_raw) != h:
        raise SpecError(f"{w}.heads: expected {h} heads (model.n_heads), found {len(heads_raw)}")
    heads = []
    for k, hr in enumerate(heads_raw):
        hrd = _Reader(hr, f"{r.where}.heads[{k}]")
        hw = f"{name}: {hrd.where}"
        W_Q, W_K, W_V = (
            matrix(hrd.require(m), f"{hw}.{m}", shape=(d, dh)) for m in HEAD_PROJECTIONS
        )
        b_Q, b_K, b_V = (
            None if hrd.get(b) is None else _vector(hrd.get(b), f"{hw}.{b}", dh, 0)
            for b in ("b_Q", "b_K", "b_V")
        )
        scale_raw = hrd.get("scale")
        head_scale = None if scale_raw is None else _cell(scale_raw, f"{hw}.scale", symbols=True)
        if head_scale is not None and head_scale == 0:
            raise SpecError(f"{hw}.scale: expected a non-zero divisor, found 0")
        transposed = hrd.names("transposed", HEAD_PROJECTIONS)
        for nm, m in zip(HEAD_PROJECTIONS, (W_Q, W_K, W_V), strict=True):
            if nm in transposed:
                _square(m, nm, hw)
        heads.append(
            Head(
                W_Q,
                W_K,
                W_V,
                b_Q,
                b_K,
                b_V,
                head_scale,
                hrd.boolean("transpose_k", True),
                hrd.choice("softmax_axis", SOFTMAX_AXES, "rows"),
                transposed,
            )
        )
        finish(hrd, name)
    W_O_raw = r.get("W_O", "identity" if h * dh == d else None)
    if W_O_raw is None and full:
        raise SpecError(
            f"{w}.W_O: required when n_heads * d_head ({h * dh}) differs from d_model ({d})"
        )
    W_O = None if W_O_raw is None else matrix(W_O_raw, f"{w}.W_O", shape=(h * dh, d))
    b_O_raw = r.get("b_O")
    b_O = None if b_O_raw is None else _vector(b_O_raw, f"{w}.b_O", d, 0)
    W3 = b3 = None
    if full:
        W1 = matrix(r.get("W1", "identity"), f"{w}.W1", shape=(d, d_ff))
        hidden = W1.cols
        b1 = _vector(r.get("b1"), f"{w}.b1", hidden, 0)
        W2 = matrix(r.get("W2", "identity"), f"{w}.W2", shape=(hidden, d))
        b2 = _vector(r.get("b2"), f"{w}.b2", d, 0)
        if activation == "swiglu":
            W3 = matrix(r.get("W3", "identity"), f"{w}.W3", shape=(d, hidden))
            b3 = _vector(r.get("b3"), f"{w}.b3", hidden, 0)
        elif r.table.get("W3") is not None or r.table.get("b3") is not None:
            raise SpecError(f"{w}.W3: only a swiglu FFN has a third matrix (model.activation)")
    else:
        W1 = W2 = sympy.ImmutableMatrix(sympy.eye(d))
        b1 = b2 = sympy.ImmutableMatrix(1, d, [0] * d)
    ln = [
        _vector(r.get(k), f"{w}.{k}", d, 1 if k.endswith("gamma") else 0)
        for k in ("ln1_gamma", "ln1_beta", "ln2_gamma", "ln2_beta")
    ]
    ln_eps = []
    for key in ("ln1_eps", "ln2_eps"):
        raw = r.get(key)
        e = None if raw is None else _cell(raw, f"{w}.{key}", symbols=True)
        if e is not None:
            _nonnegative(e, f"{w}.{key}")
        ln_eps.append(e)
    ln_var = [
        None if r.table.get(k) is None else r.choice(k, VARIANCES, "biased")
        for k in ("ln1_variance", "ln2_variance")
    ]
    transposed = r.names("transposed", LAYER_PROJECTIONS)
    for nm, m in (("W_O", W_O), ("W1", W1), ("W2", W2), ("W3", W3)):
        if nm in transposed:
            _square(m, nm, w)
    finish(r, name)
    return Layer(
        tuple(heads),
        W_O,
        W1,
        b1,
        W2,
        b2,
        ln[0],
        ln[1],
        ln[2],
        ln[3],
        b_O=b_O,
        W3=W3,
        b3=b3,
        ln1_eps=ln_eps[0],
        ln2_eps=ln_eps[1],
        ln1_variance=ln_var[0],
        ln2_variance=ln_var[1],
        transposed=transposed,
    )


def _standalone(raw: Any, name: str) -> tuple[Standalone, ...]:
    if not isinstance(raw, list) or not all(isinstance(x, dict) for x in raw):
        raise SpecError(
            f"{name}: model.standalone: expected an array of tables, found {_kind(raw)}"
        )
    out = []
    names: set[str] = set()
    for i, x in enumerate(raw):
        r = _Reader(x, f"model.standalone[{i}]")
        nm = r.string("name")
        if nm is None or not _STEP.match(nm) or (nm.startswith(("l", "x")) and nm[1:2].isdigit()):
            raise SpecError(
                f"{name}: {r.key('name')}: expected a step name like ln_example, found {nm!r}"
            )
        if nm in names:
            raise SpecError(f"{name}: {r.key('name')}: expected a unique name, found {nm!r} again")
        names.add(nm)
        op = r.choice("op", STANDALONE_OPS, "layernorm")
        inp = matrix(r.require("input"), f"{name}: {r.key('input')}", shape=(None, None))
        eps_raw = r.get("eps")
        eps = None if eps_raw is None else _cell(eps_raw, f"{name}: {r.key('eps')}", symbols=True)
        if eps is not None:
            _nonnegative(eps, f"{name}: {r.key('eps')}")
        variance = r.choice("variance", VARIANCES, "biased")
        finish(r, name)
        out.append(Standalone(nm, op, inp, eps, variance))
    return tuple(out)


def read_tokens(raw: Any, model: Model, name: str) -> tuple[int, ...]:
    if model.architecture != "decoder":
        if raw is not None:
            r = _Reader(raw, "input")
            r.get("tokens")
            r.get("token_ids")
            finish(r, name)
        n = model.embed.rows if model.embed is not None else 0
        return tuple(range(n))
    if raw is None:
        raise SpecError(f"{name}: input: required table is missing (input.tokens = [...])")
    r = _Reader(raw, "input")
    toks, ids = r.get("tokens"), r.get("token_ids")
    finish(r, name)
    if (toks is None) == (ids is None):
        raise SpecError(f"{name}: input: expected exactly one of tokens or token_ids")
    if toks is not None:
        if not isinstance(toks, list) or not toks:
            raise SpecError(
                f"{name}: input.tokens: expected a non-empty array of strings, found {_kind(toks)}"
            )
        out = []
        for i, t in enumerate(toks):
            if t not in model.vocab:
                raise SpecError(
                    f"{name}: input.tokens[{i}]: expected a word of model.vocab, found {_kind(t)}"
                )
            out.append(model.vocab.index(t))
    else:
        if not isinstance(ids, list) or not ids:
            raise SpecError(
                f"{name}: input.token_ids: expected a non-empty array, found {_kind(ids)}"
            )
        out = []
        for i, t in enumerate(ids):
            if isinstance(t, bool) or not isinstance(t, int) or not 0 <= t < len(model.vocab):
                raise SpecError(
                    f"{name}: input.token_ids[{i}]: expected an id from 0 to {len(model.vocab) - 1}, found {_kind(t)}"
                )
            out.append(t)
    if model.pos is not None and len(out) > model.pos.rows:
        raise SpecError(
            f"{name}: input: expected at most {model.pos.rows} tokens (model.pos has that many rows), found {len(out)}"
        )
    return tuple(out)
