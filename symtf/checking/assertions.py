"""Claims about decoding (``assert = "tokens" | "teacher-forcing"``), read from the trace.

Decoding (:mod:`symtf.graph.generate`) records ``gen.…`` steps and, when a claim asks
for it, the encoder–decoder pipeline records ``teacher_forcing``
(:func:`symtf.graph.seq2seq.teacher_forcing`); checking only reads those steps.
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from typing import Any

from symtf.errors import SpecError
from symtf.spec.seq2seq import Seq2SeqModel


def check_claim(claim: Any, ev: Any, derivation: Any, make_check: Callable[..., Any]) -> Any:
    """Check an ``assert`` claim against the exact trace; it runs no model.

    Args:
        claim: The claim (``assert = "tokens" | "teacher-forcing"``).
        ev: The evaluator whose exact trace holds the decoding steps and
            ``teacher_forcing`` (recorded by the pipeline when a claim asks for it).
        derivation: The derivation (its model's vocabulary and target).
        make_check: The result type, :class:`symtf.checking.report.Check`.

    Raises:
        SpecError: When the claim does not fit this model or trace.
    """
    kind = claim.assertion
    printed = (claim.word or "").strip()
    if kind == "teacher-forcing":
        m = derivation.model
        if not isinstance(m, Seq2SeqModel) or not m.target:
            raise SpecError(
                f"{claim.where}.assert: teacher-forcing needs an encoder-decoder model "
                "with input.target"
            )
        said = {"holds": True, "fails": False, "does not hold": False}.get(printed.lower())
        if said is None:
            raise SpecError(
                f'{claim.where}.printed: expected "holds" or "fails", found {printed!r}'
            )
        t = ev.exact_trace()
        if "teacher_forcing" not in t:
            raise SpecError(f"{claim.where}.assert: no teacher_forcing step in this trace")
        f = t.value("teacher_forcing")
        expected = None if f.holds is None else ("holds" if f.holds else "fails")
        verdict = "undecided" if f.holds is None else "exact" if f.holds == said else "wrong"
        return make_check(
            claim.label,
            None,
            None,
            printed,
            expected,
            None,
            verdict,
            f.explanation,
            extra=_extra(kind),
        )
    return _check_tokens(
        claim, ev, derivation, printed, functools.partial(make_check, extra=_extra(kind))
    )


def _extra(kind: str) -> dict[str, str]:
    # JSON field; also keeps the numeric diagnosis (replays, conventions) off these checks
    return {"assertion": kind}


def _check_tokens(claim: Any, ev: Any, d: Any, printed: str, check: Any) -> Any:
    step = claim.step or "gen.output"
    t = ev.exact_trace()
    if step not in t:
        from symtf.suggest import hint

        raise SpecError(
            f"{claim.where}.step: no step {step!r} in this model{hint(step, list(t), steps=True)}"
        )
    value = t.value(step)
    if value is not None and not isinstance(value, tuple):
        raise SpecError(f"{claim.where}.step: {step} holds numbers, not token ids")
    vocab = d.model.vocab
    words = printed.split()
    for w in words:
        if w not in vocab:
            raise SpecError(f"{claim.where}.printed: expected words of model.vocab, found {w!r}")
    stops = [
        n
        for n in t
        if n.startswith("gen.") and n.endswith((".tie", ".token")) and _stopped(t.value(n))
    ]
    note = ""
    if stops:
        s = stops[0]
        v = t.value(s)
        note = f"; decoding stopped at {s}: " + (
            "undecided (depends on symbols)"
            if v is None
            else f"exact tie between {', '.join(repr(vocab[k]) for k in v)}"
        )
    if value is None:
        tied = bool(stops) and t.value(stops[0]) is not None
        verdict = "wrong" if tied else "undecided"
        return check(
            claim.label,
            step,
            None,
            printed,
            None,
            None,
            verdict,
            f"{_said(step, claim)} is not determined{note}",
        )
    got = [vocab[k] for k in value]
    if step.endswith(".token") and len(value) > 1:
        if len(words) == 1 and words[0] in got:
            why = f"exact tie between {', '.join(got)}: either is a correct pick"
            return check(claim.label, step, None, printed, printed, None, "exact", why)
        why = f"exact tie between {', '.join(got)}"
        return check(claim.label, step, None, printed, "/".join(got), None, "wrong", why)
    expected = " ".join(got)
    if words == got:
        return check(
            claim.label,
            step,
            None,
            printed,
            expected,
            None,
            "exact",
            f"{_said(step, claim)} is {expected!r}{note}",
        )
    return check(
        claim.label,
        step,
        None,
        printed,
        expected,
        None,
        "wrong",
        f"{_said(step, claim)} is {expected!r}, not {printed!r}{note}",
    )


def _said(step: str, claim: Any) -> str:
    """The decoded step as the reader knows it: the claim's label (its node name is data)."""
    return claim.label or step


def _stopped(v: Any) -> bool:
    return v is None or (isinstance(v, tuple) and len(v) > 1)
