"""The stages a derivation's steps fall into (inputs, each layer or head, outputs), as the
notes' sections: one title for a run of steps that share a prefix.
"""

from __future__ import annotations

import re
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from symtf.trace import Trace


def stage_of(name: str) -> tuple[str, str]:
    """The stage a step belongs to: ``(key, title)``; steps are grouped by key in trace order.

    Example:
        >>> stage_of("l0.h1.pattern")
        ('l0.h1', 'Block 1, head 2: attention')
    """
    m = re.match(r"^((?:\w+\.)*?)l(\d+)\.(.+)$", name)
    if m:
        prefix, layer, rest = m.group(1), int(m.group(2)), m.group(3)
        who = _prefix_title(prefix) + f"Block {layer + 1}"
        base = f"{prefix}l{layer}"
        h = re.match(r"^(?:(cross|self)\.)?h(\d+)\.", rest)
        if h:
            kind = f" {h.group(1)}-attention" if h.group(1) else " attention"
            key = f"{base}.{h.group(1) + '.' if h.group(1) else ''}h{h.group(2)}"
            return key, f"{who}, head {int(h.group(2)) + 1}:{kind}"
        first = rest.split(".")[0]
        if first in ("concat", "attn_out", "resid_mid"):
            return f"{base}.mix", f"{who}: heads combined and the first residual"
        if first == "ln1":
            return f"{base}.ln1", f"{who}: first LayerNorm"
        if first == "ln2":
            return f"{base}.ln2", f"{who}: second LayerNorm"
        if first.startswith("ffn") or first == "resid_post":
            return f"{base}.ffn", f"{who}: feed-forward and the second residual"
        words = {
            "self": "self-attention heads combined",
            "cross": "cross-attention heads combined",
            "resid_cross": "the cross-attention residual",
            "ln3": "third LayerNorm",
        }
        return f"{base}.{first}", f"{who}: {words.get(first, first)}"
    if name in _INPUTS:
        return "input", "Input: tokens, embeddings and positions"
    if name in _OUTPUTS:
        return "output", "Output: logits and the next word"
    p = re.match(r"^((?:\w+\.)+)(\w+)$", name)
    if p and _is_stack_prefix(p.group(1)):
        prefix, last = p.group(1), p.group(2)
        who = _prefix_title(prefix).strip()
        if last in _INPUTS:
            return f"{prefix}input", f"{who}: tokens, embeddings and positions"
        return f"{prefix}output", f"{who}: output"
    head = name.split(".")[0]
    return f"other.{head}", _own_title(head)


def _own_title(name: str) -> str:
    """The title of a step the file's author named: the name read as words when it is words
    (``apply_causal_mask`` → ``Apply causal mask``, as a drafted step named after the
    article's heading reads), else the name as written (a notebook's ``attn_scores_2``)."""
    if re.fullmatch(r"[a-z]{3,}(?:_[a-z]{2,})*", name):
        words = name.replace("_", " ")
        return words[0].upper() + words[1:]
    return name


_INPUTS = ("tokens", "d_head", "embed", "pos", "x")
_OUTPUTS = ("final", "last", "logits", "probs", "next_token", "out", "token", "output")


def _is_stack_prefix(prefix: str) -> bool:
    """Whether a dotted prefix names an encoder, decoder or generation step (not a user op)."""
    parts = [x for x in prefix.split(".") if x]
    return bool(parts) and parts[0] in ("enc", "dec", "gen")


def _prefix_title(prefix: str) -> str:
    """``gen.0.b1.dec.`` → ``"Generation step 1, beam 2, decoder "``."""
    parts = [x for x in prefix.split(".") if x]
    words: list[str] = []
    k = 0
    while k < len(parts):
        part = parts[k]
        if part == "gen" and k + 1 < len(parts) and parts[k + 1].isdigit():
            words.append(f"Generation step {int(parts[k + 1]) + 1}")
            k += 2
            continue
        beam = re.fullmatch(r"b(\d+)", part)
        if beam:
            words.append(f"beam {int(beam.group(1)) + 1}")
        else:
            words.append(
                {"enc": "Encoder", "dec": "decoder" if words else "Decoder"}.get(part, part)
            )
        k += 1
    return ", ".join(words) + " " if words else ""


def stages(trace: Trace) -> list[tuple[str, list[str]]]:
    """Steps grouped into stages, in the order the data flows (trace order).

    A step that holds a claim's outcome rather than numbers (``teacher_forcing``)
    is shown with its claim's verdict, not as a stage.
    """
    out: list[tuple[str, list[str]]] = []
    keys: list[str] = []
    for name in trace:
        if trace[name].op == "teacher_forcing":  # a claim's outcome, not numbers
            continue
        key, title = stage_of(name)
        if keys and keys[-1] == key:
            out[-1][1].append(name)
        else:
            keys.append(key)
            out.append((title, [name]))
    return out
