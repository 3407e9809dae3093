"""Step names for an article's labels (``W_Q^((1))`` → ``W_Q_1``) and headings
(``## Step 5: Apply Causal Mask`` → ``apply_causal_mask``)."""

from __future__ import annotations

import re
import unicodedata

__all__ = ["heading_name", "ident"]

_SYNTHETIC = re.compile(r"^(?:line \d+.*|\[.*|.*\(\d+\))$")
_MARKS = {"\u0302": "hat", "\u0304": "bar", "\u0303": "tilde"}
_MARKED = re.compile("([A-Za-z])([\u0302\u0304\u0303])")
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
    # ŷ (y with a combining circumflex) is hat_y, as the formula reader names \hat{y}
    text = _MARKED.sub(lambda m: f"{_MARKS[m[2]]}_{m[1]}", unicodedata.normalize("NFD", text))
    name = re.sub(r"[^A-Za-z0-9_]+", "_", text).strip("_")
    name = re.sub(r"_+", "_", name)
    if not name or not re.match(r"^[A-Za-z_]", name):
        return None
    if name.lower() in _ops() or name in _RESERVED:
        name += "_"
    return name


#: Words a heading's name leaves out.
_STOP = frozenset(
    [
        "a",
        "an",
        "the",
        "of",
        "to",
        "for",
        "and",
        "or",
        "with",
        "in",
        "on",
        "by",
        "from",
        "into",
        "as",
        "at",
        "is",
        "are",
        "its",
        "it",
        "this",
        "that",
    ]
)
#: Most words of a heading kept in a name.
HEADING_WORDS = 4


def heading_name(heading: str) -> str | None:
    """A step name after an article heading: its first words, lower case, joined by ``_``
    (``## Step 5: Apply Causal Mask`` → ``apply_causal_mask``; ``3.2 Scaled scores`` →
    ``scaled_scores``), or None when no word is left.

    Example:
        >>> heading_name("Step 6: Softmax and Scaling")
        'softmax_scaling'
    """
    text = re.sub(r"[`*_\[\]]|\(https?:[^)]*\)", " ", heading)  # Markdown emphasis, links
    text = re.sub(
        r"^\s*(?:step|part|section|stage)?\s*[0-9.]*\s*[:.)\-–—]?\s*", "", text, flags=re.I
    )
    words = [w for w in re.findall(r"[A-Za-z][A-Za-z0-9]*", text) if w.lower() not in _STOP]
    if not words:
        return None
    name = "_".join(w.lower() for w in words[:HEADING_WORDS])
    return ident(name)
