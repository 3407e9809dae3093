"""Find the step behind each printed matrix, in the article's order.

The article's printings are taken in its order, with a notebook's code before the
outputs it prints (:mod:`~symtf.draft.infer.code`). For each printing:

- the step an equation of the article states for it (:mod:`symtf.draft.infer.stated`)
  is taken whatever its entries say, unless the search finds a step reproducing every
  entry that overrides it;
- else the step its numbers show (:mod:`~symtf.draft.infer.candidates`, judged by
  :mod:`~symtf.draft.infer.evidence`);
- else it is a given input (short entries, a label naming an input) or stays unmapped;
- a single number is a repeat of an entry printed shortly before, or the mean,
  variance, deviation, largest, sum or range the article names of the row worked above it.

Then each displayed line: the entries its literals stand for (:func:`stands_for`) and
the entry it computes (:meth:`Search.display_result`).
"""

from __future__ import annotations

import re
import warnings
from typing import Any

import numpy as np

from symtf.backends import BallBackend
from symtf.draft.article import Display, Printing
from symtf.draft.infer.applied import applied_step
from symtf.draft.infer.columns import stated_column
from symtf.draft.infer.literals import (
    _stated_constant,
    defined_reduction,
    entry_mention,
    running_repeat,
    stands_for,
    stated_operands,
)
from symtf.draft.infer.reduced import named_on, query_key, reduced, row_of_run, scores_named
from symtf.draft.infer.scored import PrintedScore, scored_sequences
from symtf.draft.infer.staged import softmax_stage
from symtf.draft.infer.statements import StatedSteps
from symtf.draft.infer.target import (
    DIFFERENCE,
    INPUT_LABEL,
    Outcome,
    Placement,
    Target,
    _certified,
    _fit,
    _mids,
    parse_target,
    stat_row,
)
from symtf.draft.infer.weighted import restated_row, weighted_rows
from symtf.draft.sizing import Pace
from symtf.draft.templates import Call, Ref, call, inputs
from symtf.tensor import Tensor

__all__ = ["PREC", "REPEAT_WINDOW", "Search"]

#: Bits of the balls candidates are certified in.
PREC = 128
#: Lines within which a scalar repeats an entry printed earlier.
REPEAT_WINDOW = 40

_KEYWORDS = {
    "mean": ("mean", "mu", "μ", "average"),
    "var": ("variance", "var", "sigma^2", "σ²"),
    "std": ("sigma", "σ", "std", "deviation"),
    "max": ("largest", "max", "biggest", "maximum"),
    "sum": ("sum", "sums", "total", "adds up", "add up"),
    "range": ("range", "spread"),  # its largest entry less its smallest
}


class Search(StatedSteps):
    """The search over one article's printings (see the module docstring)."""

    def run(self) -> None:
        """Search every printing in the article's order, with the code before its outputs."""
        from symtf.draft.translate import Translator

        printings = list(self.article.printings)

        def position(cell: int | None, line: int) -> tuple[int, int]:
            return (cell if cell is not None else -1, line)

        printed = self._printed_opaque(Translator)
        pace = Pace(self.article.path, len(printings))
        with BallBackend(PREC) as xp, np.errstate(all="ignore"), warnings.catch_warnings():
            warnings.simplefilter(
                "ignore", RuntimeWarning
            )  # the float pre-filter's empty reductions
            self._xp = xp
            k = 0
            translator = Translator(self._shape_of)
            translator.printed_opaque = printed
            for block in self.article.code:
                at = position(block.cell, block.first_line)
                while k < len(printings) and position(printings[k].cell, printings[k].line) < at:
                    self._printing(printings[k])
                    k += 1
                    pace.step(k)
                for event in translator.events([block]):
                    self.float32 = translator.float32  # what the code computed in so far
                    self._event(event)
            self.float32 = translator.float32
            for i, p in enumerate(printings[k:], start=k + 1):
                self._printing(p)
                pace.step(i)
            self._same_line_reductions()
            self._displays()
            pairs: list[PrintedScore] = []
            self.scored = scored_sequences(self.article, list(self.article.printings), pairs)
            self._printed_scores(pairs)
            self._xp = None

    def _printed_scores(self, printed: list[PrintedScore]) -> None:
        """The scores a search function printed in its block's own output, where the code's
        translation did not say which values they are: a printing each, checked as the
        expression the code keeps (:mod:`symtf.draft.infer.scored`)."""
        taken = {(p.cell, line) for p in self.extra for line in p.lines}
        for s in printed:
            if (s.cell, s.line) in taken:
                continue
            self._shown_key += 1
            key = 2_000_000 + self._shown_key
            p = Printing(
                key,
                "number",
                "",
                "",
                ((s.score,),),
                (s.line,),
                s.cell,
                s.context,
                places=(s.place,) if s.place is not None else (),
            )
            self.extra.append(p)
            self.outcomes[key] = Outcome(p, "unmapped", note="a score the code prints")
            self.scored[key] = s.scored
            if s.picks:  # the sequence it scores: what the code chose, an input to the score
                self._shown_key += 1
                key = 2_000_000 + self._shown_key
                seq = Printing(
                    key,
                    "vector",
                    "",
                    "",
                    (s.picks,),
                    (s.line,),
                    s.cell,
                    s.context,
                    places=s.pick_places,
                )
                self.extra.append(seq)
                self._printing(seq)  # a step of the known tensors may give it (an argmax)
                if self.outcomes.get(key) is None or self.outcomes[key].status != "mapped":
                    self.outcomes[key] = Outcome(seq, "given", note="the sequence the code prints")

    def _printed_opaque(self, translator: Any) -> set[str]:
        """Variables with no translated value that a print shows (a first, dry pass of the code)."""
        if not self.article.code:
            return set()
        dry = translator(lambda name: None)
        return {e.opaque for e in dry.events(list(self.article.code)) if getattr(e, "opaque", None)}

    def _printing(self, p: Printing) -> None:
        if p.key in self.outcomes and self.outcomes[p.key].status == "covered" and not p.parts:
            return
        if p.parts:
            self._run_printing(p)
        else:
            self._one(p)

    def _displays(self) -> None:
        """For each displayed line: the entries its literals stand for, and the entry it computes."""
        used: dict[tuple[int, int, int], int] = {}
        outcomes = [self.outcomes[p.key] for p in self.article.printings if p.key in self.outcomes]
        seen: set[Any] = set()
        restated = self._restated_prints()
        for d in self.article.displays:
            sources = stands_for(d, outcomes, used, restated)
            self.sources[d.key] = sources
            result = self.display_result(d, sources) or self._display_reduction(d)
            same = (d.line, d.rows, result.placement if result else None)
            if result is not None and same in seen:
                continue  # "= ((-3)² + 0² + 3²) / 3 = (9 + 0 + 9) / 3 = 6": one printed 6
            seen.add(same)
            if result is not None:
                self.results[d.key] = result
                outcomes.append(result)  # later lines may repeat what this one printed
        for key, o in list(self.outcomes.items()):  # m = 9 after m_new = max(5, 9) = 9
            if o.status == "given" and o.placement is None:
                again = running_repeat(o.printing, outcomes, REPEAT_WINDOW)
                if again is not None:
                    self.outcomes[key] = again
        for given in stated_operands(self.article.displays, list(self.outcomes.values())):
            self.outcomes[given.printing.key] = given

    def _restated_prints(self) -> set[int]:
        """Steps that only put printed values together again (``x' = [x_0', x_1', x_2',
        x_3']^T`` after the pairs were printed, each to its digits): a literal that repeats
        one of their entries stands for the entry where it was worked out, not for this
        copy of its print, which knows no more digits than it shows."""
        out: set[int] = set()
        for key, k in self.known.items():
            e = k.expr
            if not isinstance(e, Call) or e.op not in ("concat", "index"):
                continue
            parts = [self.known.get(r.key) for r in e.args if isinstance(r, Ref)]
            if len(parts) == len(e.args) and all(
                p is not None and p.expr is None and p.rounded for p in parts
            ):
                out.add(key)
        return out

    def _display_reduction(self, d: Display) -> Outcome | None:
        """``Mean = (6 + 9 + 12) / 3 = 9``: a named reduction of the row worked just above."""
        if len(d.rows) != 1 or len(d.rows[0]) != 1:
            return None
        p = Printing(d.key, "number", d.label, "result", d.rows, (d.line,), d.cell, d.context)
        t = parse_target(d.rows)
        return self._reduction(p, t) if t is not None else None

    def _one(self, p: Printing) -> None:
        t = parse_target(p.rows, p.decimals)
        if t is None:
            self.outcomes[p.key] = Outcome(p, "unmapped", note="its numbers cannot be read")
            return
        if p.size == 1:
            self.outcomes[p.key] = self._scalar(p, t)
            return
        out = (
            self._difference_of_columns(p, t)
            or stated_column(self, p, t)
            or applied_step(self, p, t)
            or restated_row(self, p)
            or self._stated_or_found(p, t)
        )
        if out is None:
            out = (
                self._target_gradient(p, t)
                or self._labelled_softmax(p, t)
                or softmax_stage(self, p, t)
                or self._given_or_unmapped(p, t)
            )
        self.outcomes[p.key] = out

    def _run_printing(self, run: Printing) -> None:
        """A run: mapped as a whole, else its rows one by one; given as a whole if none maps."""
        t = parse_target(run.rows)
        if t is None:
            return
        if any(self.outcomes.get(k, Outcome(run, "")).status == "covered" for k in run.parts):
            return  # its rows already belong to another run
        out = self._stated_or_found(run, t, allow_rows=False)
        if out is not None and out.status != "mapped":
            self.outcomes[run.key] = out
            return
        if out is not None:
            self.outcomes[run.key] = out
            for i, k in enumerate(run.parts):
                member = self.article.printing(k)
                self.outcomes[k] = Outcome(
                    member,
                    "covered",
                    Placement(out.placement.known, row=i) if out.placement else None,
                    out.note,
                )
            return
        weighted = weighted_rows(self, run, t)
        if weighted is not None and weighted.placement is not None:
            self.outcomes[run.key] = weighted
            for i, k in enumerate(run.parts):
                self.outcomes[k] = Outcome(
                    self.article.printing(k),
                    "covered",
                    Placement(weighted.placement.known, row=i),
                    weighted.note,
                )
            return
        members = [self.article.printing(k) for k in run.parts]
        if run.role == "operands" or not _input_like(run, t):
            return
        trial = [
            self._find(m, tm, evidential=False) for m in members if (tm := parse_target(m.rows))
        ]
        if any(isinstance(x, tuple) for x in trial):
            return  # rows of something known: each is mapped on its own turn
        given = self._given(run, t, rounded=False)
        self.outcomes[run.key] = given
        for k in run.parts:
            self.outcomes[k] = Outcome(
                self.article.printing(k), "covered", note="a row of a given tensor"
            )

    def _given_or_unmapped(self, p: Printing, t: Target) -> Outcome:
        if _input_like(p, t):
            return self._given(p, t, rounded=False)
        if p.role in ("operand", "weights", "result", "before", "after", "term") or p.shape[0] == 1:
            return Outcome(p, "unmapped", note="no step of the known tensors reproduces it")
        given = self._given(p, t, rounded=True)
        if given.placement is None:
            return given
        return Outcome(
            p,
            "unmapped",
            given.placement,
            "no step of the known tensors reproduces it; later steps read it as printed (rounded)",
        )

    def _scalar(self, p: Printing, t: Target) -> Outcome:
        """A single number: a repeat of an entry printed shortly before, or a named reduction."""
        stat = self._row_statistic(p, t)
        if stat is not None:
            return stat
        text = p.rows[0][0]
        if t.informative == 0 or len(text.lstrip("-−").replace(".", "").lstrip("0")) < 2:
            return (
                self._reduction(p, t)
                or _stated_constant(p)
                or self._entry_mention(p)
                or Outcome(p, "unmapped", note="a single number the search does not place")
            )
        for q in sorted(self.outcomes.values(), key=lambda o: -o.printing.key):
            if q.printing.line > p.line or p.line - q.printing.line > REPEAT_WINDOW:
                continue
            if q.status not in ("mapped", "covered") or q.placement is None or q.printing.size < 2:
                continue
            hits = [
                (i, j) for i, r in enumerate(q.printing.rows) for j, c in enumerate(r) if c == text
            ]
            if hits:
                i, j = hits[0]
                return Outcome(
                    p,
                    "mapped",
                    _entry(q.placement, i, j),
                    f"repeats {q.printing.label} at line {q.printing.line}",
                )
        return (
            self._reduction(p, t)
            or _stated_constant(p)
            or self._entry_mention(p)
            or Outcome(p, "unmapped", note="a single number the search does not place")
        )

    def _difference_of_columns(self, p: Printing, t: Target) -> Outcome | None:
        """A table's column headed as a difference (``difference - value``), read right after
        the table's other columns: the difference of two of them, row by row.

        The heading names the step; the pair of columns (and ``a − b``, ``b − a`` or
        ``|a − b|``) is the one that gives most of the entries (certified), at least three
        and more than half, when no other pair gives as many. Its other entries are judged.
        """
        n = p.shape[0]
        if p.shape[1] != 1 or n < 3 or not DIFFERENCE.search(p.label):
            return None
        q = self.outcomes.get(p.key - 1)
        if q is None or q.placement is None or q.printing.shape[0] != n:
            return None
        pl = q.placement
        if pl.row is not None or pl.col is not None or pl.index is not None:
            return None
        base = self.known[pl.known]
        if len(base.shape) != 2 or base.shape[0] != n:
            return None
        scored: list[tuple[int, Call, Tensor, int, int]] = []
        for a in range(base.shape[1]):
            for b in range(a + 1, base.shape[1]):
                x = call("index", Ref(base.key), cols=(a, a + 1))
                y = call("index", Ref(base.key), cols=(b, b + 1))
                best: tuple[int, Call, Tensor, int, int] | None = None
                for expr in (call("sub", x, y), call("sub", y, x), call("abs", call("sub", x, y))):
                    ball = self._ball(expr)
                    if ball is None or tuple(ball.shape) != (n, 1):
                        continue
                    agree = sum(
                        _certified(ball.data[i], t.printed[i][0]) == "full" for i in range(n)
                    )
                    if best is None or agree > best[0]:  # the simplest form among equals
                        best = (agree, expr, ball, a, b)
                if best is not None:
                    scored.append(best)
        scored.sort(key=lambda h: -h[0])
        if not scored or scored[0][0] < 3 or 2 * scored[0][0] <= n:
            return None
        if len(scored) > 1 and scored[1][0] == scored[0][0]:
            return None  # two pairs alike: the heading does not say which
        agree, step, values, first, second = scored[0]
        note = (
            f"the difference of numeric columns {first + 1} and {second + 1} of the table, "
            f"row by row ({agree} of its {n} entries agree)"
        )
        known = self._add(step, values, p, note)
        return Outcome(p, "mapped", Placement(known.key), note)

    def _row_statistic(self, p: Printing, t: Target) -> Outcome | None:
        """A number of a table of named statistics, one row of the table per row of a matrix::

            "Hello": mean=0.25, std=0.364
            ","    : mean=0.10, std=0.208

        The table's rows are the rows of the nearest known matrix with as many rows, in
        order, when one of its columns is that statistic of every row (certified): then
        each of its columns is the statistic it names, of its own row, whatever the
        printed number says. A variance or deviation divides by n unless more of the
        column's entries agree with n − 1.
        """
        table = self._stat_table(p)
        if table is None:
            return None
        first, rows, _, name = table
        n = len(rows)
        shaped = [
            k
            for k in self.known.values()
            if len(k.shape) == 2 and k.shape[0] == n and k.shape[1] >= 2
        ]
        if not shaped:
            return None
        base = max(shaped, key=lambda k: k.key)  # the latest known so far: read before the table
        names = [nm for nm, _ in rows[0]]
        fits: dict[str, tuple[Any, Tensor, int]] = {}
        for j, nm in enumerate(names):
            kind = _stat_kind(nm)
            if kind is None:
                continue
            best = None
            for unbiased in (False, True) if kind in ("var", "std") else (False,):
                params: dict[str, Any] = {"axis": -1, "keepdims": True}
                if kind in ("var", "std"):
                    params["unbiased"] = unbiased
                expr = call(kind, Ref(base.key), **params)
                ball = self._ball(expr)
                if ball is None or tuple(ball.shape) != (n, 1):
                    continue
                agree = 0
                for i, r in enumerate(rows):
                    target = parse_target(((r[j][1],),))
                    if (
                        target is not None
                        and _certified(ball.data[i], target.printed[0][0]) == "full"
                    ):
                        agree += 1
                if best is None or agree > best[2]:
                    best = (expr, ball, agree)
            if best is not None:
                fits[nm] = best
        if name not in fits or not any(a == n for _, _, a in fits.values()):
            return None
        expr, ball, _ = fits[name]
        row = p.line - first
        found = next((k for k in self.known.values() if k.expr == expr), None) or self._add(
            expr, ball, p, f"the {name} of each row of the table at line {first}"
        )
        kind = _stat_kind(name)
        return Outcome(
            p,
            "mapped",
            Placement(found.key, index=(row, 0)),
            f"the {kind} of row {row}, as the table's {name} column names it",
        )

    def _stat_table(self, p: Printing) -> tuple[int, list[list[tuple[str, str]]], int, str] | None:
        """The table of named statistics a single number stands in: its first line, each
        row's ``(name, value)`` pairs, the number's column and name (or None)."""
        mine = stat_row(p.context)
        if mine is None:
            return None
        same = sorted(
            (q for q in self.article.printings if q.line == p.line and q.cell == p.cell),
            key=lambda q: q.key,
        )
        if len(same) != len(mine) or any(q.size != 1 for q in same):
            return None
        column = next(j for j, q in enumerate(same) if q.key == p.key)
        name, value = mine[column]
        if value != p.rows[0][0].replace("−", "-") or _stat_kind(name) is None:
            return None
        names = [nm for nm, _ in mine]
        by_line: dict[int, list[tuple[str, str]]] = {}
        for q in self.article.printings:
            if q.cell == p.cell and q.size == 1 and q.line not in by_line:
                r = stat_row(q.context)
                if r is not None and [nm for nm, _ in r] == names:
                    by_line[q.line] = r
        first = last = p.line
        while first - 1 in by_line:
            first -= 1
        while last + 1 in by_line:
            last += 1
        if last - first + 1 < 3:
            return None
        return first, [by_line[ln] for ln in range(first, last + 1)], column, name

    def _reduction(self, p: Printing, t: Target, on_line: bool = False) -> Outcome | None:
        """A number the article names as the mean, variance, deviation, largest, sum or range of
        the row worked just above it (``Its mean is μ = 5/6``, ``each row sums to 1.0``), or
        ``on_line`` written before it on its line (``[0.5, -0.3]  # Range: 0.8``)."""
        words = f"{p.label} {p.context}".lower()
        label = p.label.lower()
        kinds = [
            k for k, ws in _KEYWORDS.items() if any(w in label.split() or w == label for w in ws)
        ]
        if not kinds:  # m = 3, where the article defines m as the running max
            defined = defined_reduction(self.article.text, p.label.strip())
            kinds = [defined] if defined else []
        if not kinds:
            kinds = [
                k
                for k, ws in _KEYWORDS.items()
                if any(re.search(rf"\b{re.escape(w)}\b", words) for w in ws)
            ][:1]
        if not kinds:
            return None
        context = self._context_row(p, on_line)
        if context is None:
            return None if on_line else self._scores_extreme(p, t, kinds)
        key, row = context
        if on_line and (len(kinds) != 1 or not named_on(p, _KEYWORDS[kinds[0]])):
            return None
        every = kinds == ["sum"] and re.search(r"\b(?:each|every|all)\b[^.]*\brows?\b", words)
        for kind in kinds:
            for unbiased in (False, True) if kind in ("var", "std") else (False,):
                params: dict[str, Any] = {"axis": -1, "keepdims": True}
                if kind in ("var", "std"):
                    params["unbiased"] = unbiased
                expr = reduced(kind, Ref(key), params)
                v = self._value(expr) if kind != "range" else self._mids_of(expr)
                if v is None or v.shape[0] <= row:
                    continue
                rows = range(v.shape[0]) if every else (row,)
                if not all(_fit(v[r : r + 1, :], t)[0].all() for r in rows):
                    continue
                ball = self._ball(expr)
                if ball is None:
                    continue
                if any(_certified(ball.data[r], t.printed[0][0]) != "full" for r in rows):
                    continue
                found = next((k for k in self.known.values() if k.expr == expr), None) or self._add(
                    expr, ball, p, f"its entry {row} is the printed {kind}"
                )
                place = [Placement(found.key, index=(r, 0)) for r in rows]
                what = "every row" if every else f"row {row}"
                return Outcome(
                    p,
                    "mapped",
                    place[0],
                    f"the {kind} of {what} of the step above",
                    also=tuple(place[1:]),
                )
        if on_line and kinds in (["max"], ["sum"], ["mean"], ["range"]):
            # "Range: ~2.88" after the row it is the range of: the article names the step,
            # so a value it does not reproduce is judged, not left aside
            expr = reduced(kinds[0], Ref(key), {"axis": -1, "keepdims": True})
            ball = self._ball(expr)
            if ball is None or self._mids_of(expr) is None:
                return None
            found = next((k for k in self.known.values() if k.expr == expr), None) or self._add(
                expr, ball, p, f"its entry {row} is the {kinds[0]} the line names"
            )
            note = f"the {kinds[0]} the line names of the row written on it"
            return Outcome(p, "mapped", Placement(found.key, index=(row, 0)), note)
        return None

    def _entry_mention(self, p: Printing) -> Outcome | None:
        """A number in prose naming an entry value of a given tensor (:func:`entry_mention`)."""
        lines = self.article.text.splitlines()
        line = lines[p.line - 1] if 0 < p.line <= len(lines) else ""
        return entry_mention(p, line, self.known.values())

    def _scores_extreme(self, p: Printing, t: Target, kinds: list[str]) -> Outcome | None:
        """``its raw scores are tiny (the largest is only 0.28)``: the largest entry of the
        scores ``Q Kᵀ`` of the query and key printed just above, which the sentence names.

        The operand is the pair labelled as one query and key within a few lines; the value
        is read so only when its certified value rounds to the print (a reading, not a step
        guessed from a number that disagrees)."""
        if kinds != ["max"] or p.size != 1 or not p.places or p.cell is not None:
            return None
        lines = self.article.text.splitlines()
        if p.line > len(lines) or not scores_named(lines[p.line - 1], p.places[0].column):
            return None
        pair = query_key(self.known.values(), p.line, 6)
        if pair is None:
            return None
        scores = call("matmul", Ref(pair[0]), call("T", Ref(pair[1])))
        expr = call("max", scores, keepdims=True)
        ball = self._ball(expr)
        if ball is None or _certified(ball.data[0], t.printed[0][0]) != "full":
            return None
        found = next((k for k in self.known.values() if k.expr == expr), None) or self._add(
            expr, ball, p, "the largest of the scores the sentence names"
        )
        note = "the largest entry of the scores Q Kᵀ the sentence names"
        return Outcome(p, "mapped", Placement(found.key, index=(0, 0)), note)

    def _mids_of(self, expr: Call) -> np.ndarray | None:
        """A step's float64 value: its pre-filter's, else its certified balls' midpoints (a
        range's min has no pre-filter)."""
        v = self._value(expr)
        if v is None:
            ball = self._ball(expr)
            v = None if ball is None else _mids(ball)
        return v

    def _same_line_reductions(self) -> None:
        """``[-0.41, 0.14, -1.24, 1.51]  # Range: ~2.75``: a number no step placed, that the
        line names as a reduction of the row written before it on the line, is that
        reduction (tried once that row is placed: the reader finds the number first)."""
        for key, o in list(self.outcomes.items()):
            p = o.printing
            if o.status != "unmapped" or o.placement is not None or p.size != 1:
                continue
            t = parse_target(p.rows, p.decimals)
            found = self._reduction(p, t, on_line=True) if t is not None else None
            if found is not None:
                self.outcomes[key] = found

    def _context_row(self, p: Printing, on_line: bool = False) -> tuple[int, int] | None:
        """The row a number on a worked line is computed from: the nearest row printed before
        it; ``on_line``: the row written before it on its own line."""
        for q in sorted(self.outcomes.values(), key=lambda o: -o.printing.key):
            if on_line:
                r = q.printing
                if r.line != p.line or r.size < 2 or not r.places or not p.places:
                    continue
                if (r.places[-1].end_column or 0) > (p.places[0].column or 0):
                    continue  # not before the number
            elif q.printing.key >= p.key or p.line - q.printing.line > 6:
                continue
            pl = q.placement
            if on_line and pl is None:  # a row of a table the article gives: its row there
                return row_of_run(self.outcomes.values(), q.printing.key)
            if (
                q.status in ("mapped", "covered", "given")
                and pl is not None
                and q.printing.shape[0] == 1
            ):
                if pl.row is not None:
                    return pl.known, pl.row
                if pl.index is None and pl.col is None and self.known[pl.known].shape[0] == 1:
                    base = self.known[pl.known]
                    if isinstance(base.expr, Call) and base.expr.op == "index":
                        src = base.expr.args[0]
                        rows = base.expr.kw.get("rows")  # a slice of columns has none
                        if isinstance(src, Ref) and rows and not base.expr.kw.get("cols"):
                            return src.key, rows[0]
                    return pl.known, 0
        return None

    def display_result(
        self, d: Display, sources: dict[str, tuple[int, int, int]]
    ) -> Outcome | None:
        """The step entry a displayed line computes, when its literals stand for entries of ``N``
        and one entry of a step reading ``N`` is what the line prints (within one unit)."""
        if len(d.rows) != 1 or len(d.rows[0]) != 1 or not sources:
            return None
        t = parse_target(d.rows)
        if t is None:
            return None
        read = {k for k, _, _ in sources.values()}
        hits = []
        for k in self.known.values():
            if not isinstance(k.expr, Call) or not (inputs(k.expr) & read):
                continue
            full, near = _fit(
                k.value,
                Target(
                    t.printed,
                    np.full(k.value.shape, t.values[0, 0]),
                    np.full(k.value.shape, t.units[0, 0]),
                    np.zeros(k.value.shape, bool),
                ),
            )
            for i, j in zip(*np.nonzero(full | near), strict=True):
                hits.append((k.key, int(i), int(j)))
        if len(hits) != 1:
            return None
        key, i, j = hits[0]
        p = Printing(d.key, "number", d.label, "result", d.rows, (d.line,), d.cell, d.context)
        x = self.known[key].ball.data[i * self.known[key].shape[1] + j]
        if _certified(x, t.printed[0][0]) is None:
            return None
        return Outcome(p, "mapped", Placement(key, index=(i, j)), "the entry the line computes")


def _stat_kind(name: str) -> str | None:
    """The reduction a statistic's name says (``mean``, ``std``, ``var``, …), or None."""
    low = name.lower()
    return next((k for k, ws in _KEYWORDS.items() if low in ws), None)


def _entry(pl: Placement, i: int, j: int) -> Placement:
    if pl.row is not None:
        return Placement(pl.known, index=(pl.row, j))
    if pl.col is not None:
        return Placement(pl.known, index=(i, pl.col))
    if pl.index is not None:
        return pl
    return Placement(pl.known, index=(i, j))


def _input_like(p: Printing, t: Target) -> bool:
    """Whether an unexplained printing is one of the article's inputs, not a result."""
    if p.role in ("operand", "weights", "result", "before", "after", "term") and not p.parts:
        return False
    if INPUT_LABEL.match(p.label.strip()):
        return True
    short = all(
        c.is_infinite or (c.decimals <= 1 and c.style == "fixed" and not c.is_fraction)
        for r in t.printed
        for c in r
    )
    return short
