"""“Did you mean …?” for misspelled step names, TOML keys, sub-commands and names.

Articles call the same step by many names: what symtf records as
``l0.h0.pattern`` is "attention weights", "attn_probs" or "A" elsewhere. A
misspelling (``l0.h0.patern``) is caught by string similarity (:mod:`difflib`);
an article's own word (``attention_weights``) by a small table of such words,
matched against the last part of each step name.
"""

from __future__ import annotations

import argparse
import difflib
import re
from collections.abc import Iterable, Sequence
from typing import Any

#: Words articles use for a step, mapped to the last part of symtf's step names.
STEP_WORDS: dict[str, tuple[str, ...]] = {
    "pattern": (
        "attention_weights", "attn_weights", "attention_weight", "attention_probs",
        "attn_probs", "attention_probabilities", "attention_pattern", "attention_matrix",
        "attention", "attn", "weights", "alpha", "alphas", "a", "softmax_scores",
    ),
    "scores": ("attention_scores", "attn_scores", "raw_scores", "qk", "qkt", "logits_attn", "dot"),
    "scaled": ("scaled_scores", "scaled_attention", "scaled_dot", "s"),
    "masked": ("masked_scores", "mask", "causal_mask"),
    "q": ("query", "queries", "q_proj"),
    "k": ("key", "keys", "k_proj"),
    "v": ("value", "values", "v_proj"),
    "z": ("head_output", "head_out", "context", "attention_output_head", "weighted_values", "h"),
    "concat": ("heads", "concatenated", "multihead", "multi_head"),
    "attn_out": ("attention_output", "attn_output", "mha", "mha_out", "o", "output_projection"),
    "resid_mid": ("residual", "residual1", "resid1", "add1", "add_norm"),
    "resid_post": ("residual2", "resid2", "add2"),
    "ln1": ("layernorm", "layer_norm", "ln", "norm", "norm1", "layernorm1", "rmsnorm"),
    "ln2": ("norm2", "layernorm2", "layer_norm2"),
    "ffn_pre": ("ffn_hidden", "hidden_pre", "pre_activation", "ffn1", "mlp_in", "w1"),
    "ffn_act": ("ffn", "mlp", "hidden", "relu", "gelu", "activation", "activations"),
    "ffn_out": ("ffn_output", "mlp_out", "mlp_output", "ffn2", "w2"),
    "embed": ("embedding", "embeddings", "token_embeddings", "emb", "wte"),
    "pos": ("positional", "positions", "position", "positional_encoding", "pe", "wpe"),
    "x": ("input", "inputs", "x0", "block_input"),
    "probs": ("probabilities", "probability", "softmax", "output_probs", "p", "prediction"),
    "logits": ("logit", "vocab_scores", "output_logits", "scores_vocab"),
    "next_token": ("prediction_token", "predicted", "argmax", "next", "output_token"),
    "sqrt_dk": ("sqrt_d_k", "scale", "scale_factor", "sqrt_d"),
}  # fmt: skip

_WORD_TO_LEAF = {w: leaf for leaf, words in STEP_WORDS.items() for w in words}


def _norm(word: str) -> str:
    return re.sub(r"[\s\-]+", "_", word.strip()).lower()


def _leaf(name: str) -> str:
    return name.rsplit(".", 1)[-1]


def _closest(word: str, candidates: Sequence[str], n: int, cutoff: float = 0.6) -> list[str]:
    """The candidates most similar to ``word``, keeping only those nearly as close as the best."""
    scored = sorted(
        ((difflib.SequenceMatcher(None, word, c).ratio(), c) for c in candidates), reverse=True
    )
    if not scored or scored[0][0] < cutoff:
        return []
    best = scored[0][0]
    return [c for r, c in scored[:n] if r >= cutoff and r >= best - 0.05]


def close_steps(name: str, names: Iterable[str], n: int = 3) -> list[str]:
    """Step names a misspelled or article-worded ``name`` most likely means, best first.

    Example:
        >>> close_steps("attention_weights", ["x", "l0.h0.scores", "l0.h0.pattern"])
        ['l0.h0.pattern']
    """
    names = list(names)
    known = set(names)
    out: list[str] = []

    def add(cands: Iterable[str]) -> None:
        for c in cands:
            if c in known and c not in out:
                out.append(c)

    prefix, _, leaf = name.rpartition(".")
    word = _norm(leaf)
    target = _WORD_TO_LEAF.get(word) or (word if word in STEP_WORDS else None)
    if target is not None:
        if prefix:
            add([f"{prefix}.{target}"])
        add(s for s in names if _leaf(s) == target)
    add(_closest(name, names, n))
    if len(out) < n:
        leaves = sorted({_leaf(s) for s in names})
        for lf in difflib.get_close_matches(word, leaves, n=2, cutoff=0.75):
            with_prefix = f"{prefix}.{lf}" if prefix else None
            if with_prefix in known:
                add([with_prefix])
            add(s for s in names if _leaf(s) == lf)
    return out[:n]


def hint(name: str, candidates: Sequence[str], *, steps: bool = False, n: int = 3) -> str:
    """``"; did you mean X?"`` (or ``""``) for a misspelled name among ``candidates``."""
    close = close_steps(name, candidates, n) if steps else _closest(name, list(candidates), n)
    if not close:
        return "; `symtf steps FILE` lists every step" if steps else ""
    return f"; did you mean {' or '.join(close)}?"


class SuggestingParser(argparse.ArgumentParser):
    """An :class:`argparse.ArgumentParser` whose "invalid choice" errors suggest the closest one.

    Sub-parsers are created with the parent's class, so ``symtf chek`` and
    ``symtf check --format jsn`` are both answered with a suggestion.
    """

    _INVALID = re.compile(r"invalid choice: '([^']*)' \(choose from (.*)\)")

    def _print_message(self, message: str, file: Any = None) -> None:
        """argparse's own writes (usage errors quote what was typed): control characters
        spelled out (:mod:`symtf.visible`)."""
        from symtf.visible import block

        super()._print_message(block(message, tabs=True) if message else message, file)

    def error(self, message: str) -> None:  # type: ignore[override]
        m = self._INVALID.search(message)
        if m:
            choices = [c.strip().strip("'") for c in m.group(2).split(",")]
            close = difflib.get_close_matches(m.group(1), choices, n=2, cutoff=0.5)
            if close:
                message += f"; did you mean {' or '.join(close)}?"
        super().error(message)
