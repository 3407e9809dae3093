"""The model a derivation describes: frozen dataclasses and the vocabularies of its switches.

Also the ``[generate]`` decoding settings and their reader, kept here so that
parsing (:mod:`symtf.spec`, :mod:`symtf.spec.seq2seq`) and decoding
(:mod:`symtf.graph.generate`) share them without importing each other.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import sympy

from symtf.errors import SpecError
from symtf.spec.symbols import declared, make
from symtf.spec.tomlread import _cell, _Reader

ARCHITECTURES = ("decoder", "attention", "none", "encoder-decoder")
MASKS = ("causal", "none", "causal-after-softmax", "causal-after-softmax-unnormalized")
NORMS = ("post", "pre")
NORM_KINDS = ("layernorm", "rmsnorm")
VARIANCES = ("biased", "unbiased")
ACTIVATIONS = ("relu", "gelu", "gelu_tanh", "swiglu")
POSITIONALS = ("given", "learned", "sinusoidal", "rope", "none")
ROPE_PAIRS = ("adjacent", "halves")
SOFTMAX_AXES = ("rows", "columns")
HEAD_PROJECTIONS = ("W_Q", "W_K", "W_V")
LAYER_PROJECTIONS = ("W_O", "W1", "W2", "W3")
_BASE = sympy.Integer(10000)  # Vaswani et al.'s frequency base
STANDALONE_OPS = ("layernorm", "rmsnorm", "relu", "softmax", "gelu", "gelu_tanh", "silu")


@dataclass(frozen=True)
class Head:
    """One attention head's projections, each ``d_model × d_head``, and its conventions.

    Attributes:
        W_Q, W_K, W_V: Projections, ``d_model × d_head``.
        b_Q, b_K, b_V: Biases, ``1 × d_head``, or ``None`` (no bias).
        scale: This head's score divisor, overriding the model's (``None``: the model's).
        transpose_k: ``Q·Kᵀ`` (True, the definition) or ``Q·K`` (False; only
            when ``d_head`` equals the number of keys).
        softmax_axis: ``rows`` (each query's weights sum to 1) or ``columns``.
        transposed: Projections applied as ``x·Wᵀ`` (the ``W·x`` habit); square only.
    """

    W_Q: sympy.ImmutableMatrix
    W_K: sympy.ImmutableMatrix
    W_V: sympy.ImmutableMatrix
    b_Q: sympy.ImmutableMatrix | None = None
    b_K: sympy.ImmutableMatrix | None = None
    b_V: sympy.ImmutableMatrix | None = None
    scale: sympy.Expr | None = None
    transpose_k: bool = True
    softmax_axis: str = "rows"
    transposed: tuple[str, ...] = ()


@dataclass(frozen=True)
class Layer:
    """One transformer block's weights.

    ``W1``/``b1`` feed the activation (the gate, for SwiGLU), ``W3``/``b3`` are
    SwiGLU's "up" projection, ``W2``/``b2`` project back to ``d_model``.
    ``ln1``/``ln2`` are the first and second norm of the block, in execution
    order; their ``eps``/``variance`` override the model's when not ``None``.
    ``transposed`` names the layer projections applied as ``x·Wᵀ``.
    """

    heads: tuple[Head, ...]
    W_O: sympy.ImmutableMatrix | None  # None: attention-only model whose heads are the output
    W1: sympy.ImmutableMatrix
    b1: sympy.ImmutableMatrix
    W2: sympy.ImmutableMatrix
    b2: sympy.ImmutableMatrix
    ln1_gamma: sympy.ImmutableMatrix
    ln1_beta: sympy.ImmutableMatrix
    ln2_gamma: sympy.ImmutableMatrix
    ln2_beta: sympy.ImmutableMatrix
    b_O: sympy.ImmutableMatrix | None = None
    W3: sympy.ImmutableMatrix | None = None
    b3: sympy.ImmutableMatrix | None = None
    ln1_eps: sympy.Expr | None = None
    ln2_eps: sympy.Expr | None = None
    ln1_variance: str | None = None
    ln2_variance: str | None = None
    transposed: tuple[str, ...] = ()


@dataclass(frozen=True)
class Standalone:
    """A worked operation on a given row, outside the model (``op(input)``).

    ``eps`` (``None``: the model's) and ``variance`` apply to ``layernorm`` and
    ``rmsnorm`` only.
    """

    name: str
    op: str
    input: sympy.ImmutableMatrix
    eps: sympy.Expr | None = None
    variance: str = "biased"


@dataclass(frozen=True)
class Model:
    """Architecture switches and exact weights.

    Attributes:
        architecture: ``decoder`` (embeddings → blocks → logits), ``attention``
            (one attention layer and nothing around it) or ``none`` (stand-alone
            operations only).
        d_model: Width of the residual stream.
        n_heads: Heads per layer.
        d_head: Width of each head (``d_model / n_heads`` unless given).
        mask: ``causal`` (−∞ above the diagonal before the softmax), ``none``,
            ``causal-after-softmax`` (softmax of every score, then the future
            zeroed and each row renormalised) or
            ``causal-after-softmax-unnormalized`` (zeroed, not renormalised).
        mask_value: What a ``causal`` mask puts above the diagonal: ``None`` for −∞,
            else an exact negative number (``-10**9``; GPT-2's ``-10000``) or a symbol
            (``m``, ``-M``), so the masked weights are ``e^{mask − max}/Σ``.
        norm: ``post`` (norm after each residual add) or ``pre`` (before each sublayer).
        eps: Norm ε, exact (``0`` unless given).
        activation: ``relu``, ``gelu`` (exact, erf), ``gelu_tanh`` or ``swiglu``.
        scale: Attention divisor (``√d_head`` unless given; any exact value or a symbol).
        vocab: Token strings, in id order.
        embed: ``|vocab| × d_model`` table (``None`` for ``architecture = "attention"``).
        pos: ``max_seq × d_model`` positional rows (``given``/``learned``), or ``None``.
        unembed: ``d_model × |vocab|`` projection to logits (``embedᵀ`` when tied), or ``None``.
        layers: Blocks in order.
        standalone: Worked operations outside the model.
        positional: ``given``/``learned`` (the ``pos`` table), ``sinusoidal``,
            ``rope`` (Q and K rotated per pair) or ``none``.
        pos_base: Base of the sinusoidal and rotary frequencies (10000).
        rope_pairs: ``adjacent`` (features 2i, 2i+1) or ``halves`` (i, i + d/2).
        norm_kind: ``layernorm`` or ``rmsnorm``.
        variance: ``biased`` (÷ d) or ``unbiased`` (÷ d − 1) LayerNorm variance.
        final_norm: Whether a last norm (``ln_f``) follows the last block.
        lnf_gamma, lnf_beta: That norm's ``1 × d_model`` weights.
        lnf_eps, lnf_variance: That norm's own ε and variance (``None``: the model's).
        tied: Whether ``unembed`` is the transposed embedding table.
    """

    architecture: str = "decoder"
    d_model: int = 0
    n_heads: int = 1
    d_head: int = 0
    mask: str = "causal"
    norm: str = "post"
    eps: sympy.Expr = sympy.S.Zero
    activation: str = "relu"
    scale: sympy.Expr | None = None
    vocab: tuple[str, ...] = ()
    embed: sympy.ImmutableMatrix | None = None
    pos: sympy.ImmutableMatrix | None = None
    unembed: sympy.ImmutableMatrix | None = None
    layers: tuple[Layer, ...] = ()
    standalone: tuple[Standalone, ...] = ()
    positional: str = "given"
    pos_base: sympy.Expr = _BASE
    rope_pairs: str = "adjacent"
    norm_kind: str = "layernorm"
    variance: str = "biased"
    final_norm: bool = False
    lnf_gamma: sympy.ImmutableMatrix | None = None
    lnf_beta: sympy.ImmutableMatrix | None = None
    tied: bool = False
    lnf_eps: sympy.Expr | None = None
    lnf_variance: str | None = None
    generate: Any = None  # Generation: decode after the prompt ([generate])
    stop: int | None = None  # token id that ends decoding ([generate] stop = "word")
    mask_value: sympy.Expr | None = None  # a causal mask's fill; None: −∞ (see the docstring)


# ----------------------------------------------------------------------------- [generate]
# Decoding settings, read here so that parsing never imports decoding (symtf.graph.generate).

STRATEGIES = ("greedy", "beam", "sample")
LP_STYLES = ("gnmt", "power")
MAX_STEPS = 64


@dataclass(frozen=True)
class Generation:
    """Decoding settings (``[generate]``)."""

    strategy: str = "greedy"
    max_len: int = 10
    beam_width: int = 2
    length_penalty: sympy.Expr = sympy.S.Zero
    length_penalty_style: str = "gnmt"
    temperature: sympy.Expr | None = None
    top_k: int | None = None
    top_p: sympy.Expr | None = None


def parse_generate(raw: Any, name: str, max_positions: int | None = None) -> Generation | None:
    """Read a ``[generate]`` table (``None`` when absent).

    Raises:
        SpecError: Naming the file and the key.
    """
    if raw is None:
        return None
    r = _Reader(raw, "generate")
    w = f"{name}: generate"

    def wrap(fn: Callable[[], Any]) -> Any:
        try:
            return fn()
        except SpecError as e:
            msg = str(e)
            raise SpecError(msg if msg.startswith(name) else f"{name}: {msg}") from None

    strategy = wrap(lambda: r.choice("strategy", STRATEGIES, "greedy"))
    hi = min(MAX_STEPS, max_positions) if max_positions else MAX_STEPS
    max_len = wrap(lambda: r.integer("max_len", None, lo=1, hi=hi))
    width = wrap(lambda: r.integer("beam_width", 2, lo=1, hi=16))
    style = wrap(lambda: r.choice("length_penalty_style", LP_STYLES, "gnmt"))
    alpha = _cell(r.get("length_penalty", 0), f"{w}.length_penalty", symbols=False)
    if alpha < 0:
        raise SpecError(f"{w}.length_penalty: expected a number >= 0, found {alpha}")
    t_raw = r.get("temperature")
    # A setting, like the score divisor: "T" makes it a symbol (logits / T stays exact).
    temp = None if t_raw is None else _cell(t_raw, f"{w}.temperature", symbols=True)
    if temp is not None and temp.is_Symbol:
        temp = make(str(temp), default="positive")  # a temperature is > 0
        if not temp.is_positive:
            spec = declared(str(temp))
            raise SpecError(
                f"{w}.temperature: expected a positive symbol, found {str(temp)!r}, declared "
                f"{spec.assumption if spec else 'real'} in [symbols] (a temperature is > 0: "
                f"declare {temp} = {{ positive = true }})"
            )
    elif temp is not None and temp <= 0:
        raise SpecError(f"{w}.temperature: expected a number > 0 or a symbol, found {temp}")
    top_k = wrap(lambda: r.integer("top_k", None, lo=1, hi=5000))
    p_raw = r.get("top_p")
    top_p = None if p_raw is None else _cell(p_raw, f"{w}.top_p", symbols=False)
    if temp is not None and temp.is_Symbol and p_raw is not None:
        raise SpecError(
            f"{w}.temperature: a symbol with top_p: the top-p cut depends on the temperature, "
            "so it cannot be decided for every value; give a number, or drop top_p"
        )
    if top_p is not None and not 0 < top_p <= 1:
        raise SpecError(f"{w}.top_p: expected a number in (0, 1], found {top_p}")
    if strategy != "sample" and (temp is not None or top_k is not None or top_p is not None):
        raise SpecError(
            f'{w}.strategy: temperature, top_k and top_p need strategy = "sample", found {strategy!r}'
        )
    if strategy != "beam" and ("beam_width" in raw or "length_penalty" in raw):
        raise SpecError(
            f'{w}.strategy: beam_width and length_penalty need strategy = "beam", found {strategy!r}'
        )
    try:
        r.done()
    except SpecError as e:
        raise SpecError(f"{name}: {e}") from None
    return Generation(strategy, max_len or 0, width, alpha, style, temp, top_k, top_p)
