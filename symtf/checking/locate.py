"""Locate a draft claim's printed numbers in a trace: which step they belong to.

A draft written by ``symtf extract`` has claims with ``step = "?"``. This
module compares each such claim's printed numbers with every node of a trace
— whole matrices, single rows, single columns and single entries — and ranks
the places whose values the printed numbers are certified roundings of. A
suggestion is a reading of the trace, never a computation of the model: the
caller hands in the trace (ball values) it already has.

The score of a place is the share of its printed numbers that are a correct
rounding of the certified value there (a ball of the trace's precision lies
inside the printed number's rounding interval), with half a point for a
number off by less than one unit in its last place (an article's slip should
not hide the step it belongs to). Ties are broken by how alike the claim's
label and the step's name are, then by the order of the trace.
"""

from __future__ import annotations

import difflib
import re
from dataclasses import dataclass
from fractions import Fraction
from typing import Any, cast

from symtf.backends.certify import compare_ball
from symtf.numbers import Printed, rounding_interval
from symtf.spec import Claim
from symtf.trace import Trace

__all__ = ["Suggestion", "suggest"]

#: Largest number of suggestions returned per claim.
TOP = 3


@dataclass(frozen=True)
class Suggestion:
    """One place a claim's printed numbers may come from.

    Attributes:
        step: The node's name.
        row, col, index: The part of the node (as a claim would write it).
        score: Share of printed numbers that match (1.0: all are correct roundings).
    """

    step: str
    row: int | None
    col: int | None
    index: tuple[int, int] | None
    score: float

    def toml(self) -> str:
        """The claim keys that map to this place (``step = "l0.h0.pattern"`` …)."""
        keys = [f'step = "{self.step}"']
        if self.row is not None:
            keys.append(f"row = {self.row}")
        if self.col is not None:
            keys.append(f"col = {self.col}")
        if self.index is not None:
            keys.append(f"index = [{self.index[0]}, {self.index[1]}]")
        return ", ".join(keys)


def _match(value: Any, p: Printed) -> float:
    """1 if ``p`` is a certified correct rounding of the ball ``value``, ½ if within a unit, else 0."""
    if p.is_neg_inf:
        return 1.0 if _is_neg_inf(value) else 0.0
    try:
        iv = rounding_interval(p)
    except (ValueError, ArithmeticError):
        return 0.0
    lo, hi = compare_ball(value, iv.lo), compare_ball(value, iv.hi)
    if lo is not None and hi is not None and lo >= 0 and hi <= 0:
        return 1.0
    u, v = p.ulp, cast(Fraction, p.value)  # finite: rounding_interval accepted it
    below, above = compare_ball(value, v - u), compare_ball(value, v + u)
    if below is not None and above is not None and below > 0 and above < 0:
        return 0.5
    return 0.0


def _is_neg_inf(value: Any) -> bool:
    """Whether a ball is minus infinity (a masked entry)."""
    is_finite = getattr(value, "is_finite", None)
    return is_finite is not None and not is_finite() and bool(value < 0)


def _words(text: str) -> str:
    return re.sub(r"[^a-z0-9]+", " ", text.lower()).strip()


# What articles call each canonical step: keyword sets, any one of which fits.
_NAMES: dict[str, tuple[frozenset[str], ...]] = {
    kind: tuple(frozenset(ws.split()) for ws in sets)
    for kind, sets in {
        "q": ("q", "query", "queries"),
        "k": ("k", "key", "keys"),
        "v": ("v", "value", "values"),
        "scores": ("scores", "score", "qk", "q k"),
        "scaled": ("s", "scaled"),
        "masked": ("masked", "mask", "s m"),
        "pattern": ("a", "attention", "weights", "pattern", "softmax"),
        "z": ("h", "head output"),
        "concat": ("h", "concat", "heads"),
        "attn_out": ("attention output", "o", "w o"),
        "resid_mid": ("residual", "sum", "r"),
        "embed": ("emb", "embedding", "embeddings", "x emb"),
        "pos": ("pos", "position", "positional"),
        "x": ("x", "input", "sum"),
        "ffn_pre": ("relu input", "hidden", "pre"),
        "ffn_act": ("relu output", "activation", "act", "relu"),
        "ffn_out": ("f", "ffn", "ffn output"),
        "ln1": ("y", "normalized", "layernorm", "norm"),
        "ln2": ("y final", "final"),
        "final": ("final", "output"),
        "logits": ("z", "logit", "logits"),
        "probs": ("p", "probability", "probabilities", "probs"),
    }.items()
}


def _similarity(label: str, step: str) -> float:
    """How well a claim's label names a step: article vocabulary first, then spelling."""
    words = set(_words(label).split())
    kind = step.rsplit(".", 1)[-1]
    score = 0.0
    sets = _NAMES.get(kind, ())
    if sets:
        best = max((len(ws) for ws in sets if ws <= words), default=0)
        score += best
    digits = [int(d) for d in re.findall(r"\d+", label)]
    head = re.search(r"\bh(\d+)\b", step)
    if head and digits:
        h = int(head.group(1))
        score += 1.0 if h + 1 in digits else 0.5 if h in digits else 0.0
    return score + difflib.SequenceMatcher(None, _words(label), _words(step)).ratio() / 10


def suggest(claim: Claim, trace: Trace, *, top: int = TOP) -> list[Suggestion]:
    """Rank the places of ``trace`` whose values ``claim``'s printed numbers round.

    Args:
        claim: A claim with printed numbers (its ``step`` is ignored).
        trace: A trace whose values are python-flint balls (``BallBackend``).
        top: How many suggestions to return at most.

    Returns:
        The best places, best first; only places with a positive score.
    """
    printed = claim.printed
    if not printed:
        return []
    rows, cols = len(printed), len(printed[0])
    flat = [p for r in printed for p in r]
    found: list[tuple[float, float, int, Suggestion]] = []
    for order, name in enumerate(trace):
        shape = trace.shape(name)
        if shape is None:
            continue
        n, m = shape
        value = trace.value(name)
        places: list[
            tuple[list[tuple[int, int]], int | None, int | None, tuple[int, int] | None]
        ] = []
        if (n, m) == (rows, cols):
            places.append(([(i, j) for i in range(n) for j in range(m)], None, None, None))
        if rows == 1 and cols == m and n > 1:
            places += [([(i, j) for j in range(m)], i, None, None) for i in range(n)]
        if rows * cols == n and m > 1 and min(rows, cols) == 1:
            places += [([(i, j) for i in range(n)], None, j, None) for j in range(m)]
        if rows * cols == 1 and n * m > 1:
            places += [([(i, j)], None, None, (i, j)) for i in range(n) for j in range(m)]
        for entries, row, col, index in places:
            score = sum(
                _match(value[i, j], p) for (i, j), p in zip(entries, flat, strict=True)
            ) / len(flat)
            if score > 0:
                found.append(
                    (
                        score,
                        _similarity(claim.label, name),
                        -order,
                        Suggestion(name, row, col, index, score),
                    )
                )
    found.sort(key=lambda t: (t[0], t[1], t[2]), reverse=True)
    seen: set[str] = set()
    out: list[Suggestion] = []
    for *_, s in found:
        key = s.toml()
        if key not in seen:
            seen.add(key)
            out.append(s)
        if len(out) == top:
            break
    return out
