"""Rows of probabilities and the softmax + cross-entropy gradient, as an article prints them.

Two forms of writing no formula states:

- a row of probabilities printed right after the row of scores it is the softmax of
  (``Logits: [0.00498, 0.0, 0.00502, 0.0]`` then ``Probabilities: [0.250, 0.249, 0.251,
  0.249]``): :meth:`ProbabilityRows._probabilities_after`;
- the gradient of softmax + cross-entropy with respect to the scores, ``probs −
  one_hot(target)``, printed under a gradient's label (``dL/dlogits = [0.250, 0.249,
  −0.749, 0.249]``) where the target's index is stated only in prose (``Target: C (index
  2)``, ``target = 1``, ``the correct token is index 2``):
  :meth:`ProbabilityRows._target_gradient`. The index is never guessed: without a
  sentence stating it there is no step.
"""

from __future__ import annotations

import re

from symtf.draft.article import Printing
from symtf.draft.infer.code import CodeSteps
from symtf.draft.infer.target import Outcome, Placement, Target, _certified, parse_target
from symtf.draft.templates import Num, Ref, call

__all__ = ["ProbabilityRows", "stated_targets"]

#: The fewest entries of a row of probabilities read as the softmax of the row before it.
SOFTMAX_MIN = 3
#: At most this many lines between a row of scores and the probabilities after it.
SOFTMAX_LINES = 6

#: A sentence stating the index of the correct class: ``Target: C (index 2)``, ``the
#: correct token is index 2``, ``target = 1``, ``target index: 3``, ``class 1 is correct``.
_TARGET = re.compile(
    r"\b(?:target|correct|true)\b[^.\n\d]{0,40}?\b(?:index|id)\s*(?:=|:|is)?\s*(\d{1,4})\b(?![.,]\d)"
    r"|\btarget(?:\s+(?:index|id|class|token))?\s*(?:=|:|is)\s*(\d{1,4})\b(?![.,]\d)"
    r"|\b(?:class|token|index)\s+(\d{1,4})\s+is\s+(?:the\s+)?(?:correct|target|true)\b",
    re.I,
)
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
    """Softmax rows printed after their scores, and the gradient ``probs − one_hot(target)``."""

    def _probabilities_after(self, p: Printing, t: Target) -> Outcome | None:
        """A row of probabilities printed right after a row of scores no step explains:
        the scores are read as printed (rounded) and the probabilities as their softmax,
        when that reproduces all but a quarter of the entries (the others get verdicts: an
        entry that is off is never why the step is refused).

        Both rows have :data:`SOFTMAX_MIN` entries or more, the scores' row is the printing
        just before, at most :data:`SOFTMAX_LINES` lines above, and the probabilities lie in
        [0, 1] with two decimals or more: a softmax is far above chance there (three
        3-decimal entries carry about 30 bits), and the scores, read as printed, are never
        flagged.
        """
        n = t.shape[1] if len(t.shape) == 2 else 0
        if p.role or p.parts or t.shape != (1, n) or n < SOFTMAX_MIN or self._replaying is not None:
            return None
        flat = [c for r in t.printed for c in r]
        if any(c.value is None or not 0 <= c.value <= 1 or c.decimals < 2 for c in flat):
            return None
        before = [
            q
            for q in self.article.printings
            if q.key < p.key and q.cell == p.cell and q.line <= p.line and not q.parts
        ]
        if not before:
            return None
        q = max(before, key=lambda x: (x.line, x.key))
        seen = self.outcomes.get(q.key)
        if (
            q.role
            or q.shape != (1, n)
            or p.line - q.line > SOFTMAX_LINES
            or seen is None
            or seen.status != "unmapped"
            or seen.placement is not None
        ):
            return None
        tq = parse_target(q.rows, q.decimals)
        if tq is None or any(c.value is None for r in tq.printed for c in r):
            return None
        scores = self._given(q, tq, rounded=True)
        if scores.placement is None:
            return None
        expr = call("softmax", Ref(scores.placement.known), axis=-1)
        ball = self._ball(expr)
        if ball is None or tuple(ball.shape) != t.shape:
            del self.known[scores.placement.known]
            return None
        verdicts = [_certified(x, c) for x, c in zip(ball.data, flat, strict=True)]
        full = sum(v == "full" for v in verdicts)
        if full < n - n // 4:
            del self.known[scores.placement.known]
            return None
        self.outcomes[q.key] = Outcome(
            q,
            "given",
            scores.placement,
            "read as printed: the scores the next row is the softmax of",
        )
        slips = verdicts.count("slip")
        note = (
            f"the softmax of the row printed at line {q.line}: certified values reproduce "
            f"{full} of the {n} printed entries"
            + (f", {slips} more within one unit" if slips else "")
        )
        new = self._add(expr, ball, p, note)
        return Outcome(p, "mapped", Placement(new.key), note)

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
        if not rows:
            return None
        probs = rows[-1]
        expr = call("sub", Ref(probs.key), call("one_hot", Num(str(index)), n=n))
        ball = self._ball(expr)
        if ball is None or tuple(ball.shape) != t.shape:
            return None
        flat = [c for r in t.printed for c in r]
        verdicts = [_certified(x, c) for x, c in zip(ball.data, flat, strict=True)]
        full = sum(v == "full" for v in verdicts)
        if 2 * full <= n or full < 2:  # named by its label and its stated target: most agree
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
