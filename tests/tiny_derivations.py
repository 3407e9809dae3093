"""Small derivation texts the tests (and benchmarks) build from a few parameters.

Each builder writes the TOML a test would otherwise spell out by hand, key by key in a
fixed order, so that a test states only what differs (title, vocabulary, tokens,
weights, mask …). Keys left at ``None`` are not written. The texts keep the layout a
hand-written file has (one key a line, no blank lines), so line numbers counted by hand
in a test stay what they were.

Imported by name (``from tiny_derivations import tiny_model``): ``tests`` is on
pytest's ``pythonpath``; a benchmark puts it on ``sys.path`` itself.
"""

from __future__ import annotations

import json
from collections.abc import Sequence

#: A 2 x 2 identity written out, the embedding most tiny models use.
IDENTITY_2 = "1 0\n0 1"


def toml_value(value: str | int | Sequence[str]) -> str:
    """One TOML value: a basic string, an integer or an array of basic strings.

    JSON's quoting of these (``ensure_ascii=False``: escaped quotes, backslashes and
    control characters, other characters as they are) is also TOML's.
    """
    if isinstance(value, int):
        return str(value)
    if isinstance(value, str):
        return json.dumps(value, ensure_ascii=False)
    return json.dumps(list(value), ensure_ascii=False)


def _keys(pairs: Sequence[tuple[str, str | int | Sequence[str] | None]]) -> str:
    return "".join(f"{k} = {toml_value(v)}\n" for k, v in pairs if v is not None)


def _one_head(W_Q: str, W_K: str, W_V: str) -> str:
    return "[[model.layers]]\n[[model.layers.heads]]\n" + _keys(
        [("W_Q", W_Q), ("W_K", W_K), ("W_V", W_V)]
    )


def tiny_model(
    title: str = "tiny",
    *,
    source: str | None = None,
    architecture: str | None = None,
    d_model: int = 2,
    n_heads: int | None = None,
    eps: str | None = None,
    mask: str | None = None,
    positional: str | None = None,
    vocab: Sequence[str] = ("a", "b"),
    embed: str = IDENTITY_2,
    unembed: str | None = None,
    W_Q: str = "identity",
    W_K: str = "identity",
    W_V: str = "identity",
    tokens: Sequence[str] = ("a", "b"),
) -> str:
    """A one-layer, one-head model and its input, without claims.

    Args:
        title: The derivation's title.
        source: The ``source`` line under the title, if any.
        architecture: ``model.architecture``, if stated.
        d_model: ``model.d_model``.
        n_heads: ``model.n_heads``, if stated.
        eps: ``model.eps``, if stated.
        mask: ``model.mask``, if stated.
        positional: ``model.positional``, if stated.
        vocab: ``model.vocab``.
        embed: ``model.embed`` (matrix text, rows split by newlines).
        unembed: ``model.unembed``, if stated.
        W_Q: The head's query weights.
        W_K: The head's key weights.
        W_V: The head's value weights.
        tokens: ``input.tokens``.

    Returns:
        The TOML text, ending with the ``tokens`` line; claims are appended by the caller.
    """
    return (
        _keys([("title", title), ("source", source)])
        + "[model]\n"
        + _keys(
            [
                ("architecture", architecture),
                ("d_model", d_model),
                ("n_heads", n_heads),
                ("eps", eps),
                ("mask", mask),
                ("positional", positional),
                ("vocab", vocab),
                ("embed", embed),
                ("unembed", unembed),
            ]
        )
        + _one_head(W_Q, W_K, W_V)
        + "[input]\n"
        + _keys([("tokens", tokens)])
    )


def standalone(
    op: str, row: str, claims: str = "", *, eps: str | None = None, title: str = "standalone"
) -> str:
    """A one-token attention model (for ``eps``) plus one stand-alone worked operation.

    Args:
        op: The stand-alone operation (``softmax``, ``layernorm`` …), named ``op``.
        row: Its input, matrix text (rows split by newlines).
        claims: Claim tables appended as they are.
        eps: ``model.eps``, if stated.
        title: The derivation's title.

    Returns:
        The TOML text.
    """
    return (
        _keys([("title", title)])
        + "[model]\n"
        + _keys(
            [
                ("architecture", "attention"),
                ("d_model", 1),
                ("mask", "none"),
                ("eps", eps),
                ("embed", "1"),
            ]
        )
        + _one_head("1", "1", "1")
        + "[[model.standalone]]\n"
        + _keys([("name", "op"), ("op", op)])
        + f'input = """\n{row}\n"""\n'
        + claims
    )
