"""Decoding strategies on exact probabilities: greedy, beam search and sampling filters.

Every decision (an argmax, a beam cut, a top-k or top-p boundary) is a
certified sign of an exact difference (``xp.sign``). An exact tie is reported,
never silently broken: a tied greedy pick or beam cut ends decoding with the
tie recorded; a tie at a top-k or top-p boundary keeps every tied token (as
Hugging Face's top-k does) and says so in the step's title.

File format::

    [generate]
    strategy = "greedy"            # "greedy" | "beam" | "sample"
    max_len = 6                    # decoding steps at most (default: len(input.target) or 10)
    beam_width = 2                 # beam: hypotheses kept
    length_penalty = "0.6"         # beam: alpha (0 = plain log-probability)
    length_penalty_style = "gnmt"  # beam: "gnmt" ((5+L)/6)^alpha | "power" L^alpha
    temperature = "0.5"            # sample: logits / T
    top_k = 2                      # sample: keep the k most likely tokens
    top_p = "0.9"                  # sample: keep the smallest head of mass >= p

Sampling is not deterministic, so for ``sample`` symtf records the exact,
filtered and renormalised distribution that would be sampled from, and
continues along ``input.target`` (or, without a target, along the most likely
token of that distribution).

Step names, for decoding step ``i`` (counting from 0):

- greedy / sample: ``gen.i.dec.…`` (the decoder on one new token, KV cache as
  keys), ``gen.i.logits``, ``gen.i.probs``, then for sample ``gen.i.temp.logits``,
  ``gen.i.temp.probs``, ``gen.i.topk.probs``, ``gen.i.topp.probs``; and
  ``gen.i.token`` (token ids; more than one means an exact tie).
- beam: for each live hypothesis ``k`` (best first) ``gen.i.bk.tokens``,
  ``gen.i.bk.dec.…``, ``gen.i.bk.logits``, ``gen.i.bk.probs``,
  ``gen.i.bk.seqprob`` (prefix probability times each next-token probability);
  ``gen.i.tie`` when a tie straddles the cut. Finished hypotheses:
  ``gen.hypj.tokens``, ``gen.hypj.prob``, ``gen.hypj.logprob``, ``gen.hypj.score``
  (log-probability / length penalty).
- ``gen.output``: the decoded tokens (without the start token).

Claims about decoding use ``assert`` (checked from the trace by :mod:`symtf.checking.assertions`;
the settings are read by :func:`symtf.spec.model.parse_generate`)::

    [[claims]]
    label = "translation"
    assert = "tokens"              # printed words equal the token ids of `step`
    step = "gen.output"            # default; also gen.2.token, gen.hyp0.tokens, ...
    printed = "Los pájaros construyen nidos </s>"

    [[claims]]
    label = "teacher forcing"
    assert = "teacher-forcing"     # parallel masked pass == step-by-step decoding
    printed = "holds"              # "holds" | "fails"
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

import sympy

from symtf import ops
from symtf.errors import Undecided
from symtf.graph.core import Live
from symtf.graph.ties import _exact, rank
from symtf.spec.model import Generation
from symtf.tensor import Tensor

Step = Callable[[Any, int, str], tuple[Any, Any, Any]]


# ----------------------------------------------------------------------------- pure pieces


def _row(xp: Any, m: Any) -> Any:
    """A recorded ``[1, n]`` matrix as a tensor (the ops' values)."""
    return m if isinstance(m, Tensor) else Tensor.wrap(xp, m)


def row(xp: Any, m: Any) -> list[Any]:
    """The entries of a ``[1, n]`` row."""
    return [xp.entry(m, 0, j) for j in range(xp.shape(m)[1])]


def renormalise(xp: Any, probs: Any, keep: Sequence[int]) -> Any:
    """Zero every entry not in ``keep`` and rescale the rest to sum to 1: ``[1, n] -> [1, n]``
    (the registry's ``normalize_rows`` of the kept entries)."""
    p = row(xp, probs)
    zero = xp.const(0)
    kept = xp.from_rows([[p[j] if j in keep else zero for j in range(len(p))]])
    return ops.normalize_rows(xp, Tensor.wrap(xp, kept)).native(xp)


def top_k(groups: Sequence[Sequence[int]], k: int) -> tuple[list[int], list[int]]:
    """The ``k`` most likely ids from ranked tie groups.

    Returns:
        ``(kept, tied)``: kept ids (all of a group straddling the boundary), and
        that group when it was kept only because of an exact tie.
    """
    kept: list[int] = []
    for g in groups:
        if len(kept) >= k:
            break
        kept.extend(g)
        if len(kept) > k:
            return kept, list(g)
    return kept, []


def top_p(
    xp: Any, probs: Any, groups: Sequence[Sequence[int]], p: Any
) -> tuple[list[int], list[int]]:
    """The smallest most-likely head of probability mass ``>= p`` (nucleus).

    A token is kept when the mass of the tokens strictly more likely than it is
    below ``p``; an exact tie straddling the boundary keeps the whole group.

    Returns:
        ``(kept, tied)`` as in :func:`top_k`.
    """
    vals = row(xp, probs)
    kept: list[int] = []
    mass = xp.const(0)
    for g in groups:
        q = vals[g[0]]  # equal within a tie group
        if xp.sign(q) == 0 or xp.sign(mass - p) >= 0:
            break
        kept.extend(g)
        if len(g) > 1 and xp.sign(mass + (len(g) - 1) * q - p) >= 0:
            return kept, list(g)
        mass = mass + len(g) * q
    return kept, []


def length_penalty(length: int, alpha: sympy.Expr, style: str) -> sympy.Expr:
    """The divisor of a hypothesis' log-probability: ``((5+L)/6)^α`` or ``L^α``."""
    if alpha == 0:
        return sympy.S.One
    base = sympy.Rational(5 + length, 6) if style == "gnmt" else sympy.Integer(length)
    return base**alpha


# ----------------------------------------------------------------------------- loops


def generate(xp: Any, t: Live, m: Any, step: Step, state: Any) -> None:
    """Decode with the model's ``[generate]`` settings, recording every step.

    Args:
        xp: Number system.
        t: The evaluation under way: decisions are recorded with ``t.add``, and the
            ``step`` callback evaluates each decoder pass as graph nodes through it.
        m: The model (``vocab``, ``start``, ``end``, ``target``, ``generate``).
        step: ``step(state, token, prefix) -> (logits, probs, state)`` feeds one
            token and records the decoder's steps under ``prefix``.
        state: The decoder state before the start token.
    """
    g: Generation = m.generate
    steps = g.max_len or (len(m.target) if m.target else 10)
    if g.strategy == "beam":
        _beam(xp, t, m, g, step, state, steps)
    else:
        _one_path(xp, t, m, g, step, state, steps)


def _one_path(xp: Any, t: Live, m: Any, g: Generation, step: Step, state: Any, steps: int) -> None:
    out: list[int] = []
    decided = True  # until an undecided order or an exact tie leaves the output open
    token = m.start
    for i in range(steps):
        p = f"gen.{i}"
        logits, probs, state = step(state, token, p)
        try:
            groups = rank(xp, row(xp, logits))
        except Undecided:
            if not _exact(xp):
                raise
            t.add(
                f"{p}.token",
                None,
                (f"{p}.logits",),
                r"\arg\max_i z_i",
                "undecided: the order cannot be certified (free symbols?)",
                op="greedy",
            )
            decided = False
            break
        if g.strategy == "sample":
            src = _filters(xp, t, g, p, logits, probs, groups)
            if i < len(m.target):
                pick: tuple[int, ...] = (m.target[i],)
                how = "followed (input.target)"
            else:
                pick = tuple(groups[0])
                how = "most likely of the sampled distribution"
                if len(pick) > 1:
                    how = "exact tie: decoding stops here"
            t.add(f"{p}.token", pick, (src,), "", how)
        else:
            pick = tuple(groups[0])
            title = "greedy pick" if len(pick) == 1 else "exact tie: decoding stops here"
            t.add(f"{p}.token", pick, (f"{p}.logits",), r"\arg\max_i z_i", title, op="greedy")
        if len(pick) != 1:
            decided = False  # not determined: an exact tie
            break
        token = pick[0]
        out.append(token)
        if token == m.end or (g.strategy == "sample" and m.target and i + 1 >= len(m.target)):
            break
    t.add("gen.output", tuple(out) if decided else None, (), "", "decoded tokens")


def _filters(
    xp: Any,
    t: Live,
    g: Generation,
    p: str,
    logits: Any,
    probs: Any,
    groups: list[list[int]],
) -> str:
    """Temperature, then top-k, then top-p; returns the name of the final distribution.

    Temperature keeps the order of the logits and renormalising keeps the order
    of the kept tokens, so the ranking of the raw logits serves every filter.
    """
    src = f"{p}.probs"
    if g.temperature is not None:
        z = t.add(
            f"{p}.temp.logits",
            ops.mul(xp, _row(xp, logits), ops.scalar(1 / xp.const(g.temperature))),
            (f"{p}.logits",),
            r"z / T",
            f"logits at temperature {g.temperature}",
            op="mul",
        )
        probs = t.add(
            f"{p}.temp.probs",
            ops.softmax(xp, _row(xp, z)),
            (f"{p}.temp.logits",),
            r"\operatorname{softmax}(z/T)",
            "tempered probabilities",
            op="softmax",
        )
        src = f"{p}.temp.probs"
    if g.top_k is not None:
        kept, tied = top_k(groups, g.top_k)
        title = f"top-{g.top_k}, renormalised" + (
            f" (exact tie at the boundary: all of ids {tied} kept)" if tied else ""
        )
        probs = t.add(
            f"{p}.topk.probs",
            renormalise(xp, probs, kept),
            (src,),
            r"P_i / \sum_{j \in K} P_j",
            title,
            op="renormalise",
        )
        src = f"{p}.topk.probs"
    if g.top_p is not None:
        kept, tied = top_p(xp, probs, groups, xp.const(g.top_p))
        title = f"top-p {g.top_p}, renormalised" + (
            f" (exact tie at the boundary: all of ids {tied} kept)" if tied else ""
        )
        t.add(
            f"{p}.topp.probs",
            renormalise(xp, probs, kept),
            (src,),
            r"P_i / \sum_{j \in N} P_j",
            title,
            op="renormalise",
        )
        src = f"{p}.topp.probs"
    return src


@dataclass(frozen=True)
class _Hyp:
    tokens: tuple[int, ...]
    prob: Any
    state: Any


def _beam(xp: Any, t: Live, m: Any, g: Generation, step: Step, state: Any, steps: int) -> None:
    beams = [_Hyp((), xp.const(1), state)]
    finished: list[_Hyp] = []
    V = len(m.vocab)
    for i in range(steps):
        cands: list[tuple[int, int, Any]] = []
        after: list[Any] = []
        for k, b in enumerate(beams):
            p = f"gen.{i}.b{k}"
            t.add(f"{p}.tokens", b.tokens, (), "", f"hypothesis {k + 1}")
            last = b.tokens[-1] if b.tokens else m.start
            _, probs, st = step(b.state, last, p)
            after.append(st)
            seq = t.add(
                f"{p}.seqprob",
                ops.mul(xp, _row(xp, probs), ops.scalar(b.prob)),
                (f"{p}.probs",),
                r"P(y_{<t}) \, P(y_t \mid y_{<t})",
                "sequence probabilities",
                op="mul",
            )
            cands.extend((k, v, xp.entry(seq, 0, v)) for v in range(V))
        width = g.beam_width - len(finished)
        try:
            groups = rank(xp, [c[2] for c in cands])
        except Undecided:
            if not _exact(xp):
                raise
            t.add(
                f"gen.{i}.tie",
                None,
                (),
                "",
                "undecided: the order cannot be certified (free symbols?)",
            )
            beams = []
            break
        chosen: list[int] = []
        for grp in groups:
            if len(chosen) >= width:
                break
            if len(chosen) + len(grp) > width:
                tied = tuple(cands[c][1] for c in grp)
                t.add(
                    f"gen.{i}.tie", tied, (), "", "exact tie at the beam cut: decoding stops here"
                )
                chosen = []
                beams = []
                break
            chosen.extend(grp)
        if not chosen:
            break
        live: list[_Hyp] = []
        for c in chosen:
            k, v, prob = cands[c]
            h = _Hyp((*beams[k].tokens, v), prob, after[k])
            (finished if v == m.end else live).append(h)
        beams = live
        if not beams:
            break
    finished.extend(beams)
    if not finished:
        t.add("gen.output", None, (), "", "not determined (see gen.*.tie)")
        return
    scores = []
    for j, h in enumerate(finished):
        p = f"gen.hyp{j}"
        t.add(f"{p}.tokens", h.tokens, (), "", f"finished hypothesis {j + 1}")
        t.add(
            f"{p}.prob",
            xp.from_rows([[h.prob]]),
            (),
            r"\prod_t P(y_t \mid y_{<t})",
            "sequence probability",
        )
        lp = t.add(
            f"{p}.logprob",
            xp.from_rows([[xp.log(h.prob)]]),
            (f"{p}.prob",),
            r"\log P(y)",
            "log-probability",
            op="log",
        )
        pen = length_penalty(len(h.tokens), g.length_penalty, g.length_penalty_style)
        s = t.add(
            f"{p}.score",
            xp.from_rows([[xp.entry(lp, 0, 0) / xp.const(pen)]]),
            (f"{p}.logprob",),
            r"\log P(y) / \mathrm{lp}(|y|)",
            f"length-penalised score (alpha {g.length_penalty}, {g.length_penalty_style})",
            op="div",
        )
        scores.append(xp.entry(s, 0, 0))
    try:
        best = rank(xp, scores)[0]
    except Undecided:
        if not _exact(xp):
            raise
        t.add(
            "gen.output", None, (), "", "undecided: the order cannot be certified (free symbols?)"
        )
        return
    if len(best) > 1:
        t.add("gen.tie", tuple(best), (), "", "exact tie between finished hypotheses")
        t.add("gen.output", None, (), "", "undetermined: exact tie (see gen.tie)")
        return
    t.add(
        "gen.output",
        finished[best[0]].tokens,
        tuple(f"gen.hyp{j}.score" for j in range(len(finished))),
        "",
        "best hypothesis",
    )
