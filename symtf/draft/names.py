"""Step names for an article's labels (``W_Q^((1))`` → ``W_Q_1``)."""

from __future__ import annotations

import re

__all__ = ["ident"]

_SYNTHETIC = re.compile(r"^(?:line \d+.*|\[.*|.*\(\d+\))$")
_RESERVED = {"e", "pi", "inf", "true", "false", "T"}


def _ops() -> frozenset[str]:
    from symtf.ops import public_signatures  # the op names a step may not take

    return frozenset(public_signatures())


def ident(label: str) -> str | None:
    """An ASCII step name for an article label (``W_Q^((1))`` → ``W_Q_1``), or None.

    Labels that name nothing (``line 91``, a bracketed list) give None.
    """
    text = label.strip()
    if not text or _SYNTHETIC.match(text) or len(text) > 40:
        return None
    text = text.replace("ᵀ", "T").replace("^T", "T")
    name = re.sub(r"[^A-Za-z0-9_]+", "_", text).strip("_")
    name = re.sub(r"_+", "_", name)
    if not name or not re.match(r"^[A-Za-z_]", name):
        return None
    if name.lower() in _ops() or name in _RESERVED:
        name += "_"
    return name
