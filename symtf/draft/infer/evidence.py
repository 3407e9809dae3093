"""Evidence from the numbers: candidates screened, certified, and the step they show taken.

Each candidate is first computed in float64 only to drop the ones nowhere
near the printed numbers. A kept candidate is evaluated again through the step
language in certified balls (:func:`symtf.graph.evaluate.evaluate_text`), and
it is accepted only when those certified values reproduce the printed entries
at their printed precision — all of them, or all but a few that lie within one
unit of the last printed digit (a slip; the check then gives them their
verdicts and causes). Two best candidates that give different values leave the
printing unmapped, as does no candidate at all: a value the search cannot
explain is never flagged.

When no candidate reproduces a printing from the exact values of the tensors known,
the same candidates are tried on the article's printed values of earlier steps (a
replay: a step the article computed from its own rounded results). When none does
either way, a step whose evidence stands far above chance is taken, and the entries it
misses are judged (DESIGN: inference by evidence).
"""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Sequence
from fractions import Fraction
from typing import Any

import numpy as np
from flint import arb

from symtf.backends.certify import exact_fraction
from symtf.draft.article import Printing, ident
from symtf.draft.infer.candidates import Candidates
from symtf.draft.infer.target import (
    INPUT_LABEL,
    Known,
    Outcome,
    Placement,
    Target,
    _Candidate,
    _certified,
    _fit,
    _mids,
    parse_target,
)
from symtf.draft.templates import Call, Expr, Ref, call, inputs
from symtf.numbers import Printed, rounding_interval
from symtf.tensor import Tensor

__all__ = [
    "DEPTH2_BITS",
    "MARGIN_BITS",
    "MAX_CERTIFIED",
    "NAMED_BITS",
    "STRONG_BITS",
    "UNNAMED_BITS",
    "Evidence",
]
#: At most this many candidates are certified for one printing.
MAX_CERTIFIED = 8
#: Evidence a step the article names needs, with half its entries reproduced.
NAMED_BITS = 12.0
#: Evidence an unnamed step needs, with half its entries reproduced.
UNNAMED_BITS = 30.0
#: Evidence that takes a step however few of its entries agree (several exact rows).
STRONG_BITS = 40.0
#: Evidence, net of the candidates tried, a depth-2 step no name points to needs, even when
#: it reproduces every printed entry: with identity-like inputs, ``W_Q·W_Q`` or ``V·Kᵀ``
#: print the values of ``Q·Kᵀ``, and a scaled product anything proportional to it.
DEPTH2_BITS = 16.0
#: How far the best guess must stand above the next one that gives other values.
MARGIN_BITS = 10.0


class Evidence(Candidates):
    """The search's judgement of candidates against a printing's numbers, and their acceptance."""

    def _find(
        self, p: Printing, t: Target, *, allow_rows: bool = True, evidential: bool = True
    ) -> tuple[_Candidate, Tensor] | Outcome | None:
        """The certified best candidate for a printing (no side effects), an ambiguity, or None.

        ``evidential``: whether a step that misses some entries may be taken on its evidence
        (not for what a notebook's code prints: the code, translated or not, is the step).

        When no candidate reproduces it from the exact values of the tensors known so far,
        the same candidates are tried again on the article's printed values of earlier steps
        (:meth:`_replay_find`): a step the article computed from its own rounded results.
        """
        found = self._find_exact(p, t, allow_rows=allow_rows)
        input_label = bool(INPUT_LABEL.match(p.label.strip())) and not p.role
        if (
            found is None
            and self._replaying is None
            and not input_label
            and not self._displayed_result(p)
        ):
            # (what the article names as an input is given: a replay tries no repeat; and
            # the result of a displayed line is that line's claim, checked with it)
            found = self._replay_find(p, t, allow_rows=allow_rows)
        if found is None and self._replaying is None and evidential:
            # no step reproduces every entry, from exact or from printed values: a step
            # whose evidence is far above chance is taken, and the entries it misses judged
            evident = self._evidential.pop(p.key, [])
            if evident:
                c = evident[0]
                ball = self._certify(c, t)
                if ball is not None:
                    return c, ball
        return found

    def _displayed_result(self, p: Printing) -> bool:
        """Whether a printing is what a displayed line on its line prints (one printed
        number, one claim: the line's)."""
        values = {c for row in p.rows for c in row}
        return any(
            d.line == p.line and d.cell == p.cell and values <= {c for r in d.rows for c in r}
            for d in self.article.displays
        )

    def _find_exact(
        self, p: Printing, t: Target, *, allow_rows: bool = True
    ) -> tuple[_Candidate, Tensor] | Outcome | None:
        whole_only = not allow_rows or p.shape[0] > 1
        found: list[_Candidate] = []
        input_label = bool(INPUT_LABEL.match(p.label.strip())) and not p.role
        low = _distinct_informative(t) < 2
        wants = self._wanted(p)
        tried_exprs = 0
        for tier in (0, 1, 2):
            if tier == 0 and self._replaying is not None:
                continue  # a repeat of a printing is not a step computed from printed values
            if tier >= 1 and input_label:
                break  # what the article names as an input is given
            if tier == 2 and any(c.slip == 0 and c.off == 0 and c.rank[0] <= -wants for c in found):
                break
            exprs = list(self._candidates(t.shape, whole_only, tier))
            tried_exprs += len(exprs)
            cands = self._screen_all(exprs, tier, p, t, whole_only)
            if tier == 0 and input_label:
                cands = [c for c in cands if c.rank[0] <= -3]  # only the same input again
            if tier >= 1 and low:
                cands = [c for c in cands if c.rank[0] < 0]  # too little to tell steps apart
            found.extend(cands)
        if self._replaying is None:
            self._evidential[p.key] = self._evident(p, t, found, tried_exprs)
        if not found:
            return None
        # a depth-2 guess no name points to is taken only on evidence far above the chance
        # that one of the many tried matches (each printed magnitude counted once, and a
        # known tensor times a number showing only that number)
        cost = math.log2(max(2, tried_exprs))
        found = [c for c in found if c.tier == 0 or c.rank[0] < 0 or self._weighty(c, t, cost)]
        full = [c for c in found if c.slip == 0 and c.off == 0]
        allowed = max(1, t.values.size // 8)
        # A partial match flags the entries it misses, so it must be likely to be the step:
        # it rests on entries of two digits or more, and it is not one of the many depth-2
        # guesses (an attention pattern over any two known tensors), which match by chance.
        partial = [
            c
            for c in found
            if c.off == 0 and 0 < c.slip <= allowed and _telling(c, t) >= 3 and c.tier < 2
        ]
        if self._replaying is not None:
            # a replay places only a step that reads a value it changed; as above, all
            # entries reproduced, or all but a few within one unit (which check flags)
            full = [c for c in full if inputs(c.expr) & self._replaying]
            partial = [c for c in partial if inputs(c.expr) & self._replaying]
        return self._best(p, t, full or partial)

    def _weighty(self, c: _Candidate, t: Target, cost: float) -> bool:
        """Whether an unnamed computed step shows more than a coincidence: not a LayerNorm
        of two features (:func:`_blind_norm`), and, for a depth-2 guess, evidence of
        :data:`DEPTH2_BITS` above the cost of those tried, or a ``÷√d`` the article states
        on values that are not merely a known tensor times one number."""
        if _blind_norm(c):
            return False
        if c.tier < 2:
            return True
        scaled = self._scales_known(c.value)
        if self._stated_scales(c.expr) and not scaled:
            return True
        return _distinct_bits(c, t, scaled=scaled) - cost >= DEPTH2_BITS

    def _scales_known(self, value: np.ndarray) -> bool:
        """Whether a candidate's values are a known tensor's (or one of its rows) times one
        number: ``M·T/√2`` with ``T = 0.3·I`` is ``0.212·M``, a print of one number."""
        v = value.reshape(-1)
        if not np.isfinite(v).all() or not v.any():
            return False
        for k in self.known.values():
            kv = k.value
            if kv.ndim != 2 or kv.shape[1] != value.shape[-1]:
                continue
            rows = [kv] if kv.shape == value.shape else []
            if value.shape[0] == 1:
                rows += [kv[i : i + 1] for i in range(kv.shape[0])]
            for r in rows:
                w = r.reshape(-1)
                if r.shape != value.shape or not np.isfinite(w).all() or not w.any():
                    continue
                at = int(np.argmax(np.abs(w)))
                if np.allclose(v, w * (v[at] / w[at]), rtol=1e-9, atol=1e-12):
                    return True
        return False

    def _repeats_known(self, value: np.ndarray) -> bool:
        """Whether a candidate's values are those of a tensor already known."""
        return any(
            k.value.shape == value.shape
            and np.allclose(k.value, value, rtol=1e-12, atol=1e-12, equal_nan=True)
            for k in self.known.values()
        )

    def _best(
        self, p: Printing, t: Target, pool: list[_Candidate]
    ) -> tuple[_Candidate, Tensor] | Outcome | None:
        """The certified best of equally ranked candidates, an ambiguity, or None."""
        pool = sorted(pool, key=lambda c: c.rank)
        best_pair: tuple[_Candidate, Tensor] | None = None
        tried = 0
        for c in pool:
            if best_pair is not None and c.rank[:6] != best_pair[0].rank[:6]:
                break  # the next candidates rank lower: the best stands
            if tried == MAX_CERTIFIED:
                break
            tried += 1
            ball = self._certify(c, t)
            if ball is None:
                continue
            if best_pair is None:
                best_pair = (c, ball)
                continue
            if not self._same(best_pair[0], c):
                return Outcome(
                    p,
                    "unmapped",
                    note="two steps explain it equally well",
                    candidates=(best_pair[0].expr, c.expr),
                )
        return best_pair

    def _evident(
        self, p: Printing, t: Target, found: list[_Candidate], tried: int
    ) -> list[_Candidate]:
        """The candidates whose evidence stands far above chance although some printed
        entries disagree with them, best first (DESIGN: inference by evidence).

        The evidence of a candidate is the bits of the entries it reproduces
        (:func:`_entry_bits`) less the cost of having tried ``tried`` candidates. A step
        the article's labels or equations name needs :data:`NAMED_BITS` of it, an unnamed
        one :data:`UNNAMED_BITS` and more than half of the entries. A repeat of a known tensor
        (also in disguise: a step whose values are those of a known tensor), a
        depth-2 guess, a printing the article names as an input and a step reading values
        known only to their printed digits are never taken this way: each would flag
        entries on a guess.
        """
        if p.role or INPUT_LABEL.match(p.label.strip()) or t.values.size < 4:
            return []
        cost = math.log2(max(2, tried))
        out = []
        for c in found:
            if not c.off or c.tier != 1 or c.place != "whole":
                continue
            if self._repeats_known(c.value):
                continue  # a known tensor again in disguise (a centred row of mean 0)
            named = c.rank[0] < 0
            evidence = c.bits - cost
            agree = c.full + c.slip
            if _telling(c, t) < 3:
                continue
            if any(self.known[k].rounded or self._rounded_lineage(k) for k in inputs(c.expr)):
                # read from printed values known to their digits: the entries it reproduces
                # show those values are the inputs, but only a strong majority says so
                if evidence >= STRONG_BITS and 2 * agree >= t.values.size and not c.slip:
                    out.append((evidence, c))
                continue
            if (
                (named and evidence >= NAMED_BITS and 2 * agree >= t.values.size)
                or (evidence >= UNNAMED_BITS and 2 * agree > t.values.size)
                or evidence >= STRONG_BITS
            ):
                out.append((evidence, c))
        if not out:
            return []
        top = max(e for e, _ in out)
        near = [c for e, c in out if top - e < MARGIN_BITS]
        near.sort(key=lambda c: c.rank)
        best = near[0]
        half = t.units / 2
        for c in near[1:]:
            with np.errstate(invalid="ignore"):
                same = np.where(
                    np.isfinite(t.values), np.abs(c.value - best.value) < half, True
                ).all()
            if not same:
                return []  # two guesses nearly as good, with other values at the printed digits
        return [best]

    def _printed_entries(self) -> dict[int, dict[tuple[int, int], Printed]]:
        """The article's printed value of each entry of a known step, as check reads them
        (a claim's entries, first printing first), for a replay."""
        out: dict[int, dict[tuple[int, int], Printed]] = {}
        placed = [
            (o.printing, o.placement)
            for o in self.outcomes.values()
            if o.status in ("mapped", "covered")
            and o.placement is not None
            and not o.printing.parts
        ]
        placed += [(o.printing, o.placement) for o in self.results.values() if o.placement]
        feeding = {o.printing.key for o in self.outcomes.values() if o.feeds}
        # the printed version later steps read (a value written by hand) first, as check's
        # replay takes it; else the first printing
        placed.sort(key=lambda x: (x[0].key not in feeding, x[0].line, x[0].key))
        for p, pl in placed:
            k = self.known.get(pl.known)
            if k is None or k.expr is None or not k.matrix:
                continue
            t = parse_target(p.rows, p.decimals)
            if t is None:
                continue
            flat = [c for r in t.printed for c in r]
            n, m = k.shape
            if pl.index is not None:
                spots = [pl.index] if len(flat) == 1 else []
            elif pl.row is not None:
                spots = [(pl.row, j) for j in range(m)]
            elif pl.col is not None:
                spots = [(i, pl.col) for i in range(n)]
            else:
                spots = [(i, j) for i in range(n) for j in range(m)] if t.shape == (n, m) else []
            if len(spots) != len(flat):
                continue
            mine = out.setdefault(k.key, {})
            for ij, c in zip(spots, flat, strict=True):
                if c.value is not None:
                    mine.setdefault(ij, c)
        return out

    def _replay_known(self) -> tuple[dict[int, Known], set[int]] | None:
        """The known tensors with the article's printed values put in for their printed
        entries, and every step downstream computed again from them (as check's replay
        does); with the keys whose values changed. None when no printed value differs."""
        printed = self._printed_entries()
        stamp = (len(self.known), tuple((k, tuple(sorted(v.items()))) for k, v in printed.items()))
        if self._replay_cache is not None and self._replay_cache[0] == stamp:
            return self._replay_cache[1], self._replay_cache[2]
        xp = self._xp
        assert xp is not None
        replayed = dict(self.known)
        changed: set[int] = set()
        saved = self.known
        self.known = replayed
        try:
            for key in sorted(saved):
                k = saved[key]
                if k.expr is None:
                    continue
                ball: Tensor | None = k.ball
                moved = bool(inputs(k.expr) & changed)
                if moved:
                    ball = self._ball(k.expr)
                    if ball is None or tuple(ball.shape) != tuple(k.ball.shape):
                        return self._cache_replay(stamp, None)
                assert ball is not None
                entries = printed.get(key, {})
                if entries:
                    m = ball.shape[1]
                    data = list(ball.data)
                    for (i, j), c in entries.items():
                        assert c.value is not None
                        if not _is_point(data[i * m + j], c.value):
                            data[i * m + j] = xp.const(c.value)
                            moved = True
                    ball = Tensor(ball.shape, data)
                if moved:
                    replayed[key] = dataclasses.replace(k, value=_mids(ball), ball=ball)
                    changed.add(key)
        finally:
            self.known = saved
        return self._cache_replay(stamp, (replayed, changed) if changed else None)

    def _cache_replay(
        self, stamp: Any, got: tuple[dict[int, Known], set[int]] | None
    ) -> tuple[dict[int, Known], set[int]] | None:
        self._replay_cache = (stamp, got[0], got[1]) if got is not None else (stamp, {}, set())
        return got

    def _replay_find(
        self, p: Printing, t: Target, *, allow_rows: bool = True
    ) -> tuple[_Candidate, Tensor] | Outcome | None:
        """The candidates again, on the article's printed values of earlier steps.

        A candidate is accepted as in :meth:`_find_exact` (every printed entry, or all but a
        few within one unit), with its certified values computed from those printed values:
        the replay check makes, so the check's verdicts and ``propagated-rounding`` causes
        follow. The step then carries its exact value, as every step does; check decides
        each entry's verdict from it (a step computed from printed values is not excused).
        """
        got = self._replay_known()
        if got is None or not got[1]:
            return None
        replayed, changed = got
        saved = (self.known, self._memo)
        self.known, self._memo, self._replaying = replayed, {}, changed
        try:
            found = self._find_exact(p, t, allow_rows=allow_rows)
        finally:
            self.known, self._memo = saved
            self._replaying = None
        if not isinstance(found, tuple):
            return None  # nothing, or two steps the replay cannot tell apart
        c, _ = found
        ball = self._ball(c.expr)  # the step's exact values
        if ball is None:
            return None
        names = sorted({self.display_name(k) for k in self._lineage_keys_of(c.expr) & changed})
        shown = ", ".join(names[:3]) + (" …" if len(names) > 3 else "")
        return dataclasses.replace(c, replayed=shown or "earlier steps"), ball

    def _same(self, a: _Candidate, b: _Candidate) -> bool:
        """Whether two candidates are one step for what follows: the same values throughout
        (a row of a new step brings the whole step along)."""
        if (isinstance(a.expr, Ref) and isinstance(b.expr, Ref)) or a.place == b.place == "whole":
            return np.allclose(a.value, b.value, rtol=0, atol=1e-12, equal_nan=True)
        va, vb = self._value(a.expr), self._value(b.expr)
        return (
            va is not None
            and vb is not None
            and va.shape == vb.shape
            and np.allclose(va, vb, rtol=0, atol=1e-12, equal_nan=True)
        )

    def _accept(self, p: Printing, c: _Candidate, ball: Tensor) -> Outcome:
        n = c.full + c.slip + c.off
        what = f"row {c.where} of the step" if c.place == "row" else "the step"
        note = f"{what}: certified values reproduce the {n} printed entries"
        if c.slip:
            note = f"{what}: certified values reproduce {c.full} of the {n} printed entries; {c.slip} within one unit"
        if c.off:
            note = (
                f"{what}, taken on the evidence of the entries it reproduces (about "
                f"{c.bits:.0f} bits): certified values reproduce {c.full} of the {n} printed "
                f"entries" + (f", {c.slip} more within one unit" if c.slip else "")
            )
        if c.replayed:
            some = f"{c.full} of the {n}" if c.slip else f"the {n}"
            note = (
                f"{what}, computed from the printed values of {c.replayed}: certified values of "
                f"that replay reproduce {some} printed entries"
                + (f"; {c.slip} within one unit" if c.slip else "")
            )
        if isinstance(c.expr, Ref):
            k = self.known[c.expr.key]
            if c.place == "whole":
                k.labels.append(p.label)
                return Outcome(p, "mapped", Placement(k.key), note)
            name = ident(p.label)
            own_name = (
                name
                and p.role == ""
                and "→" not in p.label
                and not any(ident(x) == name for x in k.labels)
            )
            if own_name and c.place == "row":
                row = call("index", Ref(k.key), rows=(c.where, c.where + 1))
                new = self._add(row, _slice(k.ball, c.where), p, note)
                return Outcome(p, "mapped", Placement(new.key), note)
            return Outcome(p, "mapped", _place(k.key, c), note)
        new = self._add(c.expr, ball, p, note)
        if c.place == "whole":
            return Outcome(p, "mapped", Placement(new.key), note)
        return Outcome(p, "mapped", _place(new.key, c), note)

    def _screen_all(
        self, exprs: list[Expr], tier: int, p: Printing, t: Target, whole_only: bool
    ) -> list[_Candidate]:
        """The candidates' places that fit the printing, screened together by shape."""
        n, m = t.shape
        items: list[tuple[Expr, str, int, np.ndarray]] = []
        exprs = list(dict.fromkeys(exprs))
        self._fill(exprs)
        memo, known = self._memo, self.known
        values = [known[e.key].value if type(e) is Ref else memo.get(e) for e in exprs]
        if whole_only or n != 1:
            # each candidate as a whole only (the usual case, kept lean: thousands of them)
            nm = (n, m)
            items = [
                (e, "whole", 0, v)
                for e, v in zip(exprs, values, strict=True)
                if v is not None and v.shape == nm
            ]
        else:
            add = items.append
            for e, v in zip(exprs, values, strict=True):
                if v is None:
                    continue
                shape = v.shape
                if shape == (n, m):
                    add((e, "whole", 0, v))
                if shape[1] == m and shape[0] > 1:
                    for i in range(shape[0]):
                        add((e, "row", i, v[i : i + 1]))
                if shape == (m, 1):
                    add((e, "tcol", 0, v.T))
        if not items:
            return []
        # one (n, m) block per place, end to end (as ``np.stack`` would put them)
        w = np.concatenate([x[3] for x in items]).reshape(len(items), n, m)
        with np.errstate(invalid="ignore"):
            d = np.abs(w - t.values)
            slack = 1e-9 * np.maximum(1.0, np.abs(t.values))
            finite = np.isfinite(t.values)
            full = np.where(finite, d <= t.units / 2 + slack, w == t.values)
            near = np.where(finite, d < t.units + slack, False) & ~full
            exact = np.where(finite, d <= 1e-12 * np.maximum(1.0, np.abs(t.values)), False)
        full = full.reshape(len(items), -1)
        near = near.reshape(len(items), -1)
        n_full = full.sum(axis=1)
        n_near = near.sum(axis=1)
        n_exact = exact.reshape(len(items), -1).sum(axis=1)
        size_ = t.values.size
        weights = _entry_bits(t).reshape(-1)
        bits = full @ weights + near @ np.maximum(weights - 1.0, 0.0)
        complete = n_full + n_near == size_
        if tier == 1 and self._replaying is None:
            # a candidate that misses entries is kept only where its evidence could
            # carry it (:meth:`_evident` decides): whole, and well above chance
            floor = NAMED_BITS + math.log2(max(2, len(exprs)))
            whole = np.array([x[1] == "whole" for x in items])
            half = 2 * (n_full + n_near) >= size_
            evident = whole & (bits >= floor) & (half | (bits >= STRONG_BITS))
            ok = np.nonzero(complete | evident)[0]
        else:
            ok = np.nonzero(complete)[0]
        n_fin = max(1, int(finite.sum()))
        if _zeros_and_ones(t):
            # a row of whole 0s and ±1s (a one-hot label, a mask) that a step reproduces only
            # by rounding shows nothing of the step: the step must give those very values
            ok = ok[n_exact[ok] == n_fin]
        out = []
        ranks: dict[Expr, tuple[Any, ...]] = {}  # each row of one step ranks as the step
        for at in ok.tolist():
            e, place, where, wv = items[at]
            base = ranks.get(e)
            if base is None:
                base = ranks[e] = self._rank(e, tier, p)
            rank = (
                base[0],
                base[1],
                -int(n_exact[at]) / n_fin,
                *base[2:],
                place != "whole",
                where,
            )
            out.append(
                _Candidate(
                    e,
                    tier,
                    rank,
                    place,
                    where,
                    wv,
                    int(n_full[at]),
                    int(n_near[at]),
                    off=size_ - int(n_full[at]) - int(n_near[at]),
                    bits=float(bits[at]),
                )
            )
        return out

    def _certify(self, c: _Candidate, t: Target) -> Tensor | None:
        """The candidate's certified values if they reproduce the printing, else None."""
        ball = self._ball(c.expr)
        if ball is None or len(ball.shape) != 2:
            return None
        n, m = t.shape
        rows = ball.shape[0]
        # A printed input is read as printed: the check then sees these very values. Where one
        # is known only to its digits, an entry within one unit may be its rounding, not a
        # slip, so such a step is accepted only when it reproduces every entry.
        rounded = any(self.known[k].rounded or self._rounded_lineage(k) for k in inputs(c.expr))
        entries: Sequence[Any]
        if c.place == "whole":
            if tuple(ball.shape) != (n, m):
                return None
            entries = ball.data
        elif c.place == "row":
            entries = ball.data[c.where * m : (c.where + 1) * m]
        elif c.place == "tcol":
            entries = [ball.data[i * ball.shape[1]] for i in range(rows)]
        else:
            return None
        flat = [p for r in t.printed for p in r]
        slips = fulls = 0
        for x, p in zip(entries, flat, strict=True):
            verdict = _certified(x, p)
            if verdict is None and c.off:
                continue  # an entry the candidate is taken to disagree with
            if verdict is None or (verdict == "slip" and rounded and c.full < 3):
                # an entry within one unit of a step over rounded inputs may be their
                # rounding: the check decides (a point of their intervals, or a slip)
                return None
            slips += verdict == "slip"
            fulls += verdict == "full"
        return ball if slips == c.slip and fulls == c.full else None

    def _reached(self, key: int, t: Target) -> bool:
        """Whether a point of the rounding intervals of the rounded givens a step reads gives
        values that print as ``t`` (and as every printed entry of the steps between).

        A witness (:func:`symtf.witness.reach`): the enclosure over those intervals
        meeting the prints is not enough, since enclosures are wider than the range.
        """
        from symtf.backends.rounded import tensor_half_widths
        from symtf.witness import reach

        xp = self._xp
        assert xp is not None
        order = self._lineage([key])
        leaves = [k for k in order if self.known[k].expr is None and self.known[k].rounded]
        entries: list[tuple[Any, Fraction]] = []
        for k in leaves:
            texts = [c for r in self.known[k].rows for c in r]
            if len(texts) != len(self.known[k].ball.data):
                return False
            entries += [((k, i), h) for i, h in enumerate(tensor_half_widths(texts)) if h]
        if not entries:
            return False
        # the step's printed entries, then those printed of the steps it is computed from
        printed = self._printed_entries()
        targets: list[tuple[int, int, Printed]] = [
            (key, i, c) for i, c in enumerate(c for r in t.printed for c in r)
        ]
        for k in order:
            if k != key and k in printed and self.known[k].expr is not None:
                m = self.known[k].shape[1]
                targets += [(k, i * m + j, c) for (i, j), c in printed[k].items()]
        if any(c.value is None for _, _, c in targets):
            return False

        def at(moves: Any) -> list[arb] | None:
            def moved(k: int, data: list[Any]) -> list[Any]:
                for i in range(len(data)):
                    if dv := moves.get((k, i)):
                        data[i] = data[i] + xp.const(dv)
                return data

            values = self._evaluate_lineage(order, moved)
            if values is None:
                return None
            return [values[k].data[i] for k, i, _ in targets]

        intervals = [rounding_interval(c) for _, _, c in targets]
        return reach(entries, at, intervals)


def _place(key: int, c: _Candidate) -> Placement:
    if c.place == "row":
        return Placement(key, row=c.where)
    if c.place in ("col", "tcol"):
        return Placement(key, col=c.where)
    return Placement(key)


def _slice(t: Tensor, i: int) -> Tensor:
    m = t.shape[1]
    return Tensor((1, m), list(t.data[i * m : (i + 1) * m]))


def _is_point(x: Any, v: Fraction) -> bool:
    """Whether a certified value is exactly ``v`` (a printed value that needs no replay)."""
    return isinstance(x, arb) and x.is_exact() and exact_fraction(x) == v


def _telling(c: _Candidate, t: Target) -> int:
    """The entries a candidate reproduces that were printed with two significant digits or more.

    A candidate that leaves an entry one unit off flags it as a slip, so it must rest on
    entries a coincidence rarely matches: a row printed to one digit, ``[0.3, -0.1, 0.1, 0.5]``,
    is three-quarters reproduced by GELU of the row before it.
    """
    full, _ = _fit(c.value, t)
    with np.errstate(invalid="ignore"):
        telling = np.isfinite(t.values) & (np.abs(t.values) >= 10 * t.units)
    return int(np.sum(full & telling))


def _zeros_and_ones(t: Target) -> bool:
    """Whether a printing writes only whole 0s and ±1s, without decimals (``[0, 1, 0]``)."""
    v = t.values
    finite = np.isfinite(v)
    return bool(
        finite.any()
        and np.all(~finite | (np.abs(v) == 0) | (np.abs(v) == 1))
        and np.all(t.units[finite] == 1)
    )


def _entry_bits(t: Target) -> np.ndarray:
    """Per printed entry: the bits a candidate reproducing it earns, log2 of the printing's
    range over the entry's unit (a match by chance has about that probability).

    The range is the spread of the printing's finite values (at least their largest
    magnitude, and ten units). Entries that are 0, ±1, infinite, or printed with a single
    significant digit earn one bit: masks, one-hot rows and short prints match by design
    or by chance, not by computation.
    """
    v = t.values
    finite = np.isfinite(v)
    if not finite.any():
        return np.zeros(v.shape)
    fv = v[finite]
    spread = max(float(fv.max() - fv.min()), float(np.abs(fv).max()))
    with np.errstate(divide="ignore", invalid="ignore"):
        units = np.where(t.units > 0, t.units, 1.0)
        bits = np.log2(np.maximum(spread, 10 * units) / units)
        plain = ~finite | (np.abs(v) == 0) | (np.abs(v) == 1) | (np.abs(v) < 10 * units)
    return np.where(plain, 1.0, np.maximum(bits, 1.0))


def _distinct_bits(c: _Candidate, t: Target, *, scaled: bool = False) -> float:
    """The evidence, in bits, of the entries a candidate reproduces, each printed magnitude
    counted once: ``[0.707, -0.707; -0.707, 0.707]`` shows one number and where its signs
    fall (a bit for each entry more), not four numbers (see :func:`_entry_bits`).

    ``scaled``: the candidate is a known tensor times one number, so its entries show that
    number once and a bit each more, however many magnitudes they print.
    """
    full, near = _fit(c.value, t)
    weights = _entry_bits(t)
    best: dict[Any, float] = {}
    repeats = 0
    for i, j in zip(*np.nonzero(full | near), strict=True):
        cell = t.printed[int(i)][int(j)]
        key = abs(cell.value) if cell.value is not None else cell.text
        w = float(weights[i, j]) - (0.0 if full[i, j] else 1.0)
        repeats += key in best
        best[key] = max(best.get(key, 0.0), w)
    if scaled and best:
        return max(best.values()) + int(np.sum(full | near)) - 1
    return sum(best.values()) + repeats


def _distinct_informative(t: Target) -> int:
    """How many different printed values are not 0, ±1 or infinite."""
    v = t.values[np.isfinite(t.values)]
    return len({x for x in v.tolist() if abs(x) not in (0.0, 1.0)})


def _blind_norm(c: _Candidate) -> bool:
    """Whether a candidate is a LayerNorm over two features: it gives ±1 (±1/√2 with the
    unbiased variance; a little less with ε) whatever the input, so its values cannot show
    which tensor it normalised."""
    e = c.expr
    return isinstance(e, Call) and e.op == "layernorm" and c.value.shape[-1] == 2
