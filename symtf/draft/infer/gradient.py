"""The softmax + cross-entropy gradient, as an article prints it without a formula.

The gradient with respect to the scores, ``probs − one_hot(target)``, printed under a
gradient's label (``dL/dlogits = [0.250, 0.249, −0.749, 0.249]``) where the target's index
is stated only in prose (``Target: C (index 2)``, ``target = 1``, ``the correct token is
index 2``): :meth:`ProbabilityRows._target_gradient`. The index is never guessed: without a
sentence stating it there is no step. The probabilities are the nearest row above that the
draft knows, or else the nearest printed row of probabilities no step places, read as
printed (a row printed right after its logits stays the check's to read as their softmax
with the logits known to their printed precision: :mod:`symtf.checking.repeated`).

A row the article labels as probabilities printed after a row it labels as logits or
scores, of as many entries (``**Logits:** [0.00498, 0.0, 0.00502, 0.0]`` then
``**Probabilities:** [0.250, 0.249, 0.251, 0.249]``), is their softmax, the logits read
as printed when no step places them: :meth:`ProbabilityRows._labelled_softmax`.
"""

from __future__ import annotations

import re

from symtf.draft.article import Printing
from symtf.draft.infer.code import CodeSteps
from symtf.draft.infer.target import Known, Outcome, Placement, Target, _certified, parse_target
from symtf.draft.templates import Expr, Num, Ref, call
from symtf.tensor import Tensor

__all__ = ["ProbabilityRows", "stated_targets"]

#: A sentence stating the index of the correct class: ``Target: C (index 2)``, ``the
#: correct token is index 2``, ``target = 1``, ``target index: 3``, ``class 1 is correct``.
_TARGET = re.compile(
    r"\b(?:target|correct|true)\b[^.\n\d]{0,40}?\b(?:index|id)\s*(?:=|:|is)?\s*(\d{1,4})\b(?![.,]\d)"
    r"|\btarget(?:\s+(?:index|id|class|token))?\s*(?:=|:|is)\s*(\d{1,4})\b(?![.,]\d)"
    r"|\b(?:class|token|index)\s+(\d{1,4})\s+is\s+(?:the\s+)?(?:correct|target|true)\b",
    re.I,
)
#: The label of a row of probabilities, and that of the row of logits they are the softmax of.
_PROBABILITIES = re.compile(r"\bprob(?:abilit(?:y|ies)|s)?\b|\bsoftmax\b", re.I)
_LOGITS = re.compile(r"\blogits?\b|\bscores?\b", re.I)
#: Article lines above a row of probabilities within which its logits are printed.
_LOGITS_WINDOW = 12
#: The label of a gradient with respect to the scores.
_GRADIENT = re.compile(r"grad|∂|\bd\s*L\b|dL\s*/|d_?loss|δ", re.I)


def stated_targets(text: str) -> list[tuple[int, int]]:
    """The target indices an article's prose states, as ``(line, index)`` in reading order."""
    out = []
    for no, line in enumerate(text.splitlines(), start=1):
        for m in _TARGET.finditer(line):
            out.append((no, int(next(g for g in m.groups() if g is not None))))
    return out


class ProbabilityRows(CodeSteps):
    """The gradient ``probs − one_hot(target)`` of softmax + cross-entropy."""

    #: What the search had concluded on a row read as probabilities for a gradient.
    _read_for_gradient: Outcome | None = None

    def _target_gradient(self, p: Printing, t: Target) -> Outcome | None:
        """A gradient's row ``probs − one_hot(target)`` (softmax + cross-entropy, with
        respect to the scores), the target's index stated in the article's prose before it.

        The printing is one row under a gradient's label (``dL/dlogits``, ``grad``, ``∂L/∂z``);
        the probabilities are the nearest row of as many entries the draft knows above it
        whose entries lie in [0, 1] and sum to 1 within a hundredth per entry; the index is
        the last one stated above the printing, inside the row. The step is accepted when
        it reproduces most entries, two or more (the label and the stated target name the
        step; an entry that is off gets its verdict, it is never why the step is refused).
        """
        n = t.shape[1] if len(t.shape) == 2 else 0
        if p.role or p.parts or t.shape != (1, n) or n < 2 or self._replaying is not None:
            return None
        said = re.split(r"[\[\d=]", p.context or "", maxsplit=1)[0]  # ``dL/dlogits = [...]``
        if not (_GRADIENT.search(p.label or "") or _GRADIENT.search(said)):
            return None
        stated = [k for line, k in stated_targets(self.article.text) if line < p.line]
        if not stated or not 0 <= stated[-1] < n:
            return None
        index = stated[-1]
        rows = sorted(
            (
                k
                for k in self.known.values()
                if k.shape == (1, n)
                and k.line
                and k.line < p.line
                and bool(((k.value >= 0) & (k.value <= 1)).all())
                and abs(float(k.value.sum()) - 1) <= 0.01 * n
            ),
            key=lambda k: (k.line, k.key),
        )
        probs = rows[-1] if rows else self._printed_probabilities(p, n)
        if probs is None:
            return None
        expr = call("sub", Ref(probs.key), call("one_hot", Num(str(index)), n=n))
        ball, verdicts = self._judged(expr, t)
        full = verdicts.count("full")
        if ball is None or 2 * full <= n or full < 2:  # named by label and target: most agree
            if not rows:  # the probabilities were read for this step only
                self._unread(probs)
            return None
        slips = verdicts.count("slip")
        note = (
            f"the softmax + cross-entropy gradient: the probabilities at line {probs.line} "
            f"less 1 at the target's index {index}, as the article states it: certified "
            f"values reproduce {full} of the {n} printed entries"
            + (f", {slips} more within one unit" if slips else "")
        )
        new = self._add(expr, ball, p, note)
        return Outcome(p, "mapped", Placement(new.key), note)

    def _labelled_softmax(self, p: Printing, t: Target) -> Outcome | None:
        """A row labelled as probabilities (``Probabilities:``, ``probs``, ``softmax``) that
        is the softmax of the row labelled as logits or scores printed just above it.

        The logits are the nearest row of as many entries above (within
        :data:`_LOGITS_WINDOW` lines) whose label names logits or
        scores: a tensor the draft knows, or else a printing no step places, read as
        printed (rounded). The printed probabilities lie in [0, 1] and sum to 1 within a
        hundredth per entry. The labels name the step, so it is taken when it reproduces
        most entries, two or more; an entry that is off gets its verdict.
        """
        n = t.shape[1] if len(t.shape) == 2 else 0
        if p.role or p.parts or t.shape != (1, n) or n < 2 or self._replaying is not None:
            return None
        said = re.split(r"[\[\d=]", p.context or "", maxsplit=1)[0]
        if not (_PROBABILITIES.search(p.label or "") or _PROBABILITIES.search(said)):
            return None
        if any(c.value is None for r in t.printed for c in r):
            return None
        values = t.values
        if not (((values >= 0) & (values <= 1)).all() and abs(values.sum() - 1) <= 0.01 * n):
            return None
        logits = self._labelled_logits(p, n)
        if logits is None:
            return None
        known, read_here = logits
        expr = call("softmax", Ref(known.key), axis=-1)
        ball, verdicts = self._judged(expr, t)
        full = verdicts.count("full")
        if ball is None or 2 * full <= n or full < 2:
            if read_here:
                self._unread(known)
            return None
        self._read_for_gradient = None
        slips = verdicts.count("slip")
        note = (
            f"the softmax of the logits at line {known.line}, as the labels name it: "
            f"certified values reproduce {full} of the {n} printed entries"
            + (f", {slips} more within one unit" if slips else "")
        )
        new = self._add(expr, ball, p, note)
        return Outcome(p, "mapped", Placement(new.key), note)

    def _labelled_logits(self, p: Printing, n: int) -> tuple[Known, bool] | None:
        """The row labelled as logits or scores for :meth:`_labelled_softmax`, and whether it
        was read here (as printed) for it."""
        for q in sorted(self.article.printings, key=lambda x: (-x.line, -x.key)):
            if q.line >= p.line or q.key >= p.key or p.line - q.line > _LOGITS_WINDOW:
                continue
            if q.role or q.parts or q.shape != (1, n):
                continue
            said = re.split(r"[\[\d=]", q.context or "", maxsplit=1)[0]
            if not (_LOGITS.search(q.label or "") or _LOGITS.search(said)):
                return None  # the nearest row of as many entries is not the logits
            seen = self.outcomes.get(q.key)
            if seen is None:
                return None
            if seen.placement is not None and seen.status in ("mapped", "given", "covered"):
                pl = seen.placement
                k = self.known.get(pl.known)
                if k is None or pl.col is not None or pl.index is not None:
                    return None
                if pl.row is None and k.value.shape == (1, n):
                    return k, False
                return None
            if seen.status != "unmapped" or seen.placement is not None:
                return None
            tq = parse_target(q.rows, q.decimals)
            if tq is None or any(c.value is None for r in tq.printed for c in r):
                return None
            given = self._given(q, tq, rounded=True)
            if given.placement is None:
                return None
            self._read_for_gradient = seen
            self.outcomes[q.key] = Outcome(
                q, "given", given.placement, "read as printed: the logits of a softmax"
            )
            return self.known[given.placement.known], True
        return None

    def _printed_probabilities(self, p: Printing, n: int) -> Known | None:
        """The nearest row of probabilities printed above ``p`` that no step places (its
        entries in [0, 1], summing to 1 within a hundredth per entry), read as printed
        (rounded), or None."""
        for q in sorted(self.article.printings, key=lambda x: (-x.line, -x.key)):
            if q.line >= p.line or q.key >= p.key or q.role or q.parts or q.shape != (1, n):
                continue
            seen = self.outcomes.get(q.key)
            if seen is None or seen.status != "unmapped" or seen.placement is not None:
                continue
            tq = parse_target(q.rows, q.decimals)
            if tq is None or any(c.value is None for r in tq.printed for c in r):
                continue
            values = tq.values
            if not (((values >= 0) & (values <= 1)).all() and abs(values.sum() - 1) <= 0.01 * n):
                continue
            given = self._given(q, tq, rounded=True)
            if given.placement is None:
                return None
            self._read_for_gradient = seen
            self.outcomes[q.key] = Outcome(
                q, "given", given.placement, "read as printed: the probabilities of a gradient"
            )
            return self.known[given.placement.known]
        return None

    def _unread(self, probs: Known) -> None:
        """Undo :meth:`_printed_probabilities` when the gradient is refused."""
        seen = self._read_for_gradient
        del self.known[probs.key]
        if seen is not None:
            self.outcomes[seen.printing.key] = seen
        self._read_for_gradient = None

    def _judged(self, expr: Expr, t: Target) -> tuple[Tensor | None, list[str | None]]:
        """A step's certified values and each printed entry's verdict against them (none
        when the step cannot be evaluated or has another shape than the print)."""
        ball = self._ball(expr)
        if ball is None or tuple(ball.shape) != t.shape:
            return ball, []
        flat = [c for r in t.printed for c in r]
        return ball, [_certified(x, c) for x, c in zip(ball.data, flat, strict=True)]
