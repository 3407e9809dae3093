"""The steps a notebook's code states: its givens, its translated steps and what it prints.

The code translation (:mod:`symtf.draft.translate`) reads a notebook's code as events:
an array literal is a given tensor, a translated assignment a step (added as soon as
every tensor it reads is known), a print a printing. A print of a translated value is
mapped to that value when its certified values reproduce the printed entries; when the
translation covers every op of it, the code states the step, and a print that disagrees
is mapped to it all the same (the check judges its entries). A print of what the code
computes untranslated is searched like any other printing, and later steps read what
it shows.
"""

from __future__ import annotations

import dataclasses
import math
import re
from collections.abc import Callable
from fractions import Fraction
from typing import Any

from flint import arb

from symtf.backends.certify import compare_ball, exact_fraction
from symtf.draft.article import Printing
from symtf.draft.infer.evidence import Evidence
from symtf.draft.infer.state import _fraction
from symtf.draft.infer.target import (
    Known,
    Outcome,
    Placement,
    Target,
    _certified,
    _mids,
    _shape2,
    parse_target,
)
from symtf.draft.replayed import replayed
from symtf.draft.sizing import refuse_array
from symtf.draft.stored import whole_prints
from symtf.draft.templates import Ref, bind, call, inputs, variables
from symtf.numbers import Printed, format_fixed, round_exact, rounding_interval
from symtf.tensor import Tensor

__all__ = ["CodeSteps"]

#: The name of a tensor's normalisation: ``normalized_x``, ``x_normalized``, ``normed_x``.
_NORMALIZED = re.compile(
    r"(?:normali[sz]ed|normed)_(?P<a>[A-Za-z]\w*)|(?P<b>[A-Za-z]\w*?)_(?:normali[sz]ed|normed)"
)

#: The fewest entries a literal needs to be taken for a value written by hand.
MIN_WRITTEN = 4

#: Parts a single rounded input's interval is cut into to tell a print certainly off.
PIECES = 16

#: Lines within which a code literal may write out results displayed before it (the
#: window a displayed literal may repeat a printed entry in).
RESTATED_WINDOW = 30


class CodeSteps(Evidence):
    """The search's reading of the code's events (see the module docstring)."""

    def _event(self, e: Any) -> None:
        """One event of the code translation (symtf.draft.translate): a given, a step, a note, a print."""
        from symtf.draft.translate import Given, Note, Shown, Step

        if isinstance(e, Note):
            self.notes.append(e)
            for name in e.names:  # "probs = softmax(logits)" again, not translated
                key = self.var_keys.pop(name, None)
                if key is not None:  # the earlier value is no longer what the name shows
                    self.known[key].aliases.discard(name)
        elif isinstance(e, Given):
            self._code_given(e)
        elif isinstance(e, Step):
            self.pending.append(e)
            self._retry()
        elif isinstance(e, Shown):
            self._shown(e)

    def _code_given(self, e: Any) -> None:
        xp = self._xp
        assert xp is not None
        # over what a derivation holds: refused before its balls are made
        refuse_array(self.article.path, e.name, e.where, tuple(e.shape), " ".join(e.values))
        if self._normalized_literal(e):
            return
        k = self._literal(e)
        if self._written_for(e, k):
            return
        self._restating_displays(e)
        self.known[k.key] = k
        self.var_keys[e.name] = k.key

    def _literal(self, e: Any) -> Known:
        """The given tensor of an array literal of the code (not yet known to the search)."""
        xp = self._xp
        assert xp is not None
        vals = []
        for text in e.values:
            if text in ("-inf", "inf"):
                vals.append(xp.neg_inf() if text == "-inf" else -xp.neg_inf())
            else:
                vals.append(xp.const(_fraction(text)))
        ball = Tensor(e.shape if e.shape else (1,), vals)
        self._next += 1
        key = 10_000_000 + self._next
        shape2 = _shape2(ball.shape)
        texts = tuple(e.values)
        rows = (
            tuple(texts[i * shape2[1] : (i + 1) * shape2[1]] for i in range(shape2[0]))
            if len(ball.shape) <= 2
            else ()
        )
        k = Known(
            key,
            _mids(ball),
            ball,
            None,
            [e.name],
            {e.name},
            set(),
            0,
            rows,
            False,
            f"{e.where}: {e.origin or 'an array literal'}",
        )
        k.fixed = e.name
        k.flat = texts
        k.nd_shape = tuple(e.shape)
        return k

    def _written_for(self, e: Any, literal: Known) -> bool:
        """A literal written by hand for the value its variable held just before, rounded
        (``probs = softmax(s)``, printed, then ``probs = [[0.1, 0.2, 0.7], …]``): a printing
        of that value, and the variable keeps naming the value it stands for.

        Taken so only when the value was computed (not itself a literal), has the
        literal's shape and at least :data:`MIN_WRITTEN` entries, and every entry is a
        decimal within one unit of its last digit of it, most of them its correct rounding:
        a new input that close to the value it replaces, entry for entry, would be a
        coincidence. Then each entry is judged as that value's printing, and what is
        computed from the variable is computed from the value, as the code names it; the
        ``literal`` is kept (not named by the variable) for prints that show it again.
        """
        key = self.var_keys.get(e.replaces) if getattr(e, "replaces", None) else None
        if key is None or not e.lines:
            return False
        k = self.known[key]
        if k.expr is None or len(k.ball.data) != len(e.values) or len(e.values) < MIN_WRITTEN:
            return False
        if tuple(e.shape) != tuple(k.ball.shape) and _shape2(tuple(e.shape)) != _shape2(
            tuple(k.ball.shape)
        ):
            return False
        if not all("." in text and "e" not in text.lower() for text in e.values):
            return False
        shape2 = _shape2(tuple(e.shape))
        rows = tuple(tuple(e.values[i * shape2[1] : (i + 1) * shape2[1]]) for i in range(shape2[0]))
        if len(e.lines) != len(rows):
            return False
        t = parse_target(rows)
        if t is None:
            return False
        flat = [c for r in t.printed for c in r]
        verdicts = [_certified(x, c) for x, c in zip(k.ball.data, flat, strict=True)]
        if any(v is None for v in verdicts) or 2 * verdicts.count("full") < len(verdicts):
            return False
        self._shown_key += 1
        pkey = 2_000_000 + self._shown_key
        label = f"{e.replaces} as written by hand"
        p = Printing(
            pkey,
            "matrix" if len(rows) > 1 else "vector",
            label,
            "",
            rows,
            e.lines,
            e.cell,
            in_code=True,
        )
        self.extra.append(p)
        k.labels.append(label)
        self.outcomes[pkey] = Outcome(
            p,
            "mapped",
            Placement(key),
            f"{e.where}: a literal written for the value computed just before, each of its "
            f"{len(flat)} entries within one unit of it",
            feeds=True,
        )
        self.known[literal.key] = literal  # not named by the variable: kept for its prints
        self.written[key] = (tuple(e.values), e.where, literal.key)
        self.var_keys[e.name] = key
        return True

    def _restating_displays(self, e: Any) -> None:
        """A literal that writes out, entry by entry, the results of lines the article
        displays just above it (``Q_rotated = [[2.0, 1.0, …], [-1.142, 1.921, …]]`` under
        ``(1.0+2.0j) × (0.540+0.841j) = -1.142 + 1.921j``): a printing of those results,
        not only an input. Its entries are then checked as the lines they repeat.

        Taken so only when every entry is a decimal that repeats, as written, the single
        printed result of a different displayed line of its cell within
        :data:`RESTATED_WINDOW` lines before it, and at least two
        entries carry three significant digits or more (short values such as ``1.0`` repeat
        by chance). The variable still names the literal as written: code that reads it
        computes from the printed values, as the article's code does.
        """
        if e.replaces or len(e.values) < MIN_WRITTEN or len(e.places) != len(e.values):
            return
        if whole_prints(e.values, self.article.displays, e.cell, min(q.line for q in e.places)):
            self._restating(e, "a literal restating, as whole numbers, results displayed above it")
            return
        if replayed(e.values, self.article, e.cell, min(q.line for q in e.places)):
            self._restating(
                e, "a literal of the results of an earlier section's lines at new values"
            )
            return
        if not all("." in v and "e" not in v.lower() for v in e.values):
            return
        if sum(len(v.lstrip("-").replace(".", "").strip("0")) >= 3 for v in e.values) < 2:
            return
        shape2 = _shape2(tuple(e.shape))
        rows = tuple(tuple(e.values[i * shape2[1] : (i + 1) * shape2[1]]) for i in range(shape2[0]))
        if len(e.lines) != len(rows):
            return
        first = min(q.line for q in e.places)
        near = [
            d
            for d in self.article.displays
            if d.cell == e.cell
            and len(d.rows) == 1
            and len(d.rows[0]) == 1
            and d.places
            and 0 < first - d.places[0].line <= RESTATED_WINDOW
        ]
        taken: set[int] = set()
        for v in e.values:
            same = [d for d in near if d.key not in taken and d.rows[0][0].replace("−", "-") == v]
            if not same:
                return
            taken.add(max(same, key=lambda d: (d.places[0].line, d.key)).key)
        self._restating(e, "a literal restating results displayed above it")

    def _restating(self, e: Any, note: str) -> None:
        """The printing of a literal that restates displayed results (checked as them)."""
        shape2 = _shape2(tuple(e.shape))
        rows = tuple(tuple(e.values[i * shape2[1] : (i + 1) * shape2[1]]) for i in range(shape2[0]))
        if len(e.lines) != len(rows):
            return
        self._shown_key += 1
        pkey = 2_000_000 + self._shown_key
        p = Printing(
            pkey,
            "matrix" if len(rows) > 1 else "vector",
            e.name,
            "",
            rows,
            tuple(e.lines),
            e.cell,
            in_code=True,
        )
        self.extra.append(p)
        self.outcomes[pkey] = Outcome(p, "unmapped", note=f"{e.where}: {note}")

    def _through_refs(self, key: int) -> int:
        """The known tensor a step that only renames another (``p = torch.tensor(p)``) is."""
        seen = 0
        while isinstance(self.known[key].expr, Ref) and seen < 100:
            ref = self.known[key].expr
            assert isinstance(ref, Ref)
            key, seen = ref.key, seen + 1
        return key

    def _normalized_literal(self, e: Any) -> bool:
        """An array literal the code names the normalisation of a tensor it defined before
        (``normalized_embeddings`` written out below ``embeddings``): the article writes
        the result of a LayerNorm without scale and shift, and its entries are claims on it,
        not inputs.

        The step is each row less its mean, over its deviation (divided by n, no ε), each
        a step of its own, so that a deviation the article prints elsewhere (a table of each
        row's mean and deviation) is the one the result is computed from. The name is taken
        at its word only when a whole row of the literal is what the step gives (certified):
        otherwise the literal stays a given tensor.
        """
        m = _NORMALIZED.fullmatch(e.name)
        base = (m.group("a") or m.group("b")) if m else None
        key = self.var_keys.get(base) if base else None
        if key is None or len(e.shape) != 2 or len(e.places) != len(e.values):
            return False
        x = self.known[key]
        if tuple(x.shape) != tuple(e.shape) or e.shape[1] < 2:
            return False
        texts = tuple(e.values)
        n, width = e.shape
        rows = tuple(texts[i * width : (i + 1) * width] for i in range(n))
        t = parse_target(rows)
        if t is None:
            return False
        mean = call("mean", Ref(key), axis=-1, keepdims=True)
        std = call("std", Ref(key), axis=-1, keepdims=True, unbiased=False)
        balls = [self._ball(mean), self._ball(std)]
        if balls[0] is None or balls[1] is None:
            return False
        probe = call("div", call("sub", Ref(key), mean), std)
        ball = self._ball(probe)
        if ball is None or tuple(ball.shape) != (n, width):
            return False
        flat = [c for r in t.printed for c in r]
        whole_rows = [
            i
            for i in range(n)
            if all(
                _certified(ball.data[i * width + j], flat[i * width + j]) == "full"
                for j in range(width)
            )
        ]
        if not whole_rows:
            return False
        self._shown_key += 1
        lines = tuple(e.places[i * width].line for i in range(n))
        p = Printing(
            2_000_000 + self._shown_key,
            "matrix",
            e.name,
            "",
            rows,
            lines,
            e.places[0].cell,
            "",
            places=tuple(e.places),
        )
        self.extra.append(p)
        note = f"{e.where}: its name says it is {base} normalised"
        parts = []
        for expr, b, what in ((mean, balls[0], "mean"), (std, balls[1], "deviation")):
            found = next((k for k in self.known.values() if k.expr == expr), None)
            parts.append(found or self._add(expr, b, p, f"the {what} of each row of {base}"))
        step = call("div", call("sub", Ref(key), Ref(parts[0].key)), Ref(parts[1].key))
        known = self._add(step, ball, p, note)
        self.var_keys[e.name] = known.key
        agree = f"row {whole_rows[0]} agrees" if len(whole_rows) == 1 else "rows agree"
        self.outcomes[p.key] = Outcome(
            p, "mapped", Placement(known.key), f"{note} (its {agree}; the check judges the rest)"
        )
        return True

    def _retry(self) -> None:
        """Add every pending step whose inputs are known (in order), until none can be added."""
        from symtf.draft.translate import Note

        progress = True
        while progress:
            progress = False
            for step in list(self.pending):
                names = variables(step.expr)
                if not names <= set(self.var_keys):
                    continue
                self.pending.remove(step)
                progress = True
                expr = bind(step.expr, self.var_keys)
                ball = self._ball(expr)
                if ball is None:
                    self.notes.append(
                        Note(step.where, step.source, "the translated step could not be evaluated")
                    )
                    continue
                self._next += 1
                key = 10_000_000 + self._next
                lineage = (
                    set().union(
                        *(self.known[k].aliases | self.known[k].lineage for k in inputs(expr))
                    )
                    if inputs(expr)
                    else set()
                )
                k = Known(
                    key,
                    _mids(ball),
                    ball,
                    expr,
                    [step.name],
                    {step.name},
                    lineage,
                    0,
                    matched=f"{step.where}: {step.source}",
                )
                k.fixed = step.name
                self.known[key] = k
                self.var_keys[step.name] = key

    def _shown(self, e: Any) -> None:
        """A printed value of the code: a printing, searched like any other (its label names the step)."""
        from symtf.draft.translate import SIZE

        self._shown_key += 1
        key = 2_000_000 + self._shown_key
        kind = (
            "number"
            if len(e.rows) == 1 and len(e.rows[0]) == 1
            else ("vector" if len(e.rows) == 1 else "matrix")
        )
        # a literal restating a step is named as the article names it (queries_split)
        label = e.label if getattr(e, "restates", False) else (e.name or e.label)
        lines = (
            tuple(e.lines)
            if len(e.lines) == len(e.rows)
            else (e.lines[0] if e.lines else 0,) * len(e.rows)
        )
        p = Printing(key, kind, label, "", e.rows, lines, e.cell, e.label, (), e.decimals)
        self.extra.append(p)
        t = parse_target(p.rows, p.decimals)
        if t is None:
            self.outcomes[key] = Outcome(p, "unmapped", note="its numbers cannot be read")
            return
        complete = bool(getattr(e, "complete", False))
        if complete and getattr(e, "restates", False) and e.name in self.var_keys:
            complete = self._mostly_restated(t, self.var_keys[e.name])
        held = self._through_refs(self.var_keys[e.name]) if e.name in self.var_keys else None
        if held is not None and held in self.written:
            texts, where, literal = self.written[held]
            if _same_values(t, texts):  # a print of the literal: it shows what was written
                self.outcomes[key] = Outcome(
                    p, "mapped", Placement(literal), f"prints the values written by hand at {where}"
                )
                return
        if e.name and e.name in self.var_keys:
            direct = self._direct(p, t, self.var_keys[e.name], complete=complete)
            if direct is not None:
                self.outcomes[key] = direct
                return
        found = (
            self._find(p, t, evidential=False)
            if p.size > 1 and e.reason != SIZE and not complete
            else None
        )
        if isinstance(found, tuple):
            accepted = self._accept(p, *found)
            self.outcomes[key] = accepted
            at = accepted.placement
            if (
                e.opaque
                and at is not None
                and at.row is None
                and at.col is None
                and at.index is None
            ):
                # the step found is what the untranslated code computed: later steps read it
                self.var_keys[e.opaque] = at.known
                self._retry()
                return
        if e.opaque:
            # later steps read the printed value (rounded) of what the code draws or fills in;
            # PyTorch prints whole numbers as 1. only when every entry is one: each is exact
            q = p
            if getattr(e, "whole", False):
                q = dataclasses.replace(p, rows=tuple(tuple(c[:-1] for c in r) for r in p.rows))
            given = self._given(
                q,
                parse_target(q.rows) or t,
                rounded=True,
                vector=e.vector,
                float32=getattr(e, "float32_print", False),
            )
            if given.placement is None:
                self.outcomes.setdefault(key, given)
                return
            g = self.known[given.placement.known]
            g.fixed = e.opaque
            self.var_keys[e.opaque] = g.key
            if p.size == 1 and key not in self.outcomes:
                # one number: later steps read it, and the print itself stays to be told
                # apart (a restatement of an earlier value is still checked as one)
                self.outcomes[key] = Outcome(p, "unmapped", note=e.reason or "not translated")
            if key not in self.outcomes:
                self.outcomes[key] = Outcome(
                    p, "given", given.placement, f"the printed value of {e.opaque} (not translated)"
                )
            self._retry()
            return
        if key in self.outcomes:
            return
        if e.name and e.name not in self.var_keys:
            note = f"{e.label}: depends on code that is not translated"
        elif e.name:
            k = self.known[self.var_keys[e.name]]
            gives = _rounded_like(k.ball, t)
            what = f"{gives}, not the printed values" if gives else "other values"
            if not complete:
                note = f"{e.label}: the translated step gives {what} (its translation may be off)"
            elif len(k.ball.data) != p.size:
                note = (
                    f"{e.label}: the translated step has {len(k.ball.data)} entries, not {p.size}"
                )
            else:  # computed from printed values no point of whose rounding intervals fits
                note = (
                    f"{e.label}: the code computes {what} from {self._rounded_names(k.key)}, "
                    "printed with fewer digits; whether a value they may stand for prints "
                    "as shown is not decided"
                )
        else:
            note = e.reason or "the translated code does not give these values"
        self.outcomes[key] = Outcome(p, "unmapped", note=note)

    def _mostly_restated(self, t: Target, key: int) -> bool:
        """Whether a literal restating a rearranged value holds the value's entries in at
        least three of every four places (and at least three): then it writes out that value,
        and the entries that differ are off (a copying slip), not a sign of another value."""
        values = list(self.known[key].ball.data)
        flat = [c for r in t.printed for c in r]
        if len(values) != len(flat):
            return False
        agree = sum(_certified(x, c) == "full" for x, c in zip(values, flat, strict=True))
        return agree >= 3 and 4 * agree >= 3 * len(flat)

    def _direct(
        self, p: Printing, t: Target, key: int, *, complete: bool = False
    ) -> Outcome | None:
        """A print of a translated value: mapped to it when its certified values reproduce the
        printed entries (all, or all but a few within one unit), else None.

        With ``complete`` (the translation covers every op of the value and of what it is
        computed from), the code states the step: a print that disagrees is mapped to it
        all the same, and the check gives the entries their verdicts. Computed from values
        printed with fewer digits, it is mapped so only when every entry that disagrees is
        certainly off: no point of their rounding intervals gives a value printing as it.
        """
        k = self.known[key]
        values = list(k.ball.data)
        flat = [c for r in t.printed for c in r]
        if len(values) != len(flat):
            return None
        rounded = k.rounded or self._rounded_lineage(key)
        verdicts = [_certified(x, c) for x, c in zip(values, flat, strict=True)]
        slips = sum(v == "slip" for v in verdicts)
        stated = (
            f"the value the code computes (every op of it translated); {len(flat)} printed "
            "entries, judged against it"
        )
        if rounded and (slips or any(v is None for v in verdicts)):
            # computed from values known only to their printed digits: placed only where a
            # point of their rounding intervals is shown to print as every printed entry
            # (check then accepts these entries, with that reason)
            if complete and k.expr is not None and not self._reached(key, t):
                off = [i for i, v in enumerate(verdicts) if v != "full"]
                if self._certainly_off(key, [(i, flat[i]) for i in off]):
                    k.labels.append(p.label)
                    return Outcome(
                        p,
                        "mapped",
                        Placement(key),
                        f"{stated}: with {self._rounded_names(key)} anywhere in their rounding "
                        f"intervals, {len(off)} printed entries cannot be reached",
                    )
                if self.float32 and all(_zero_noise(values[i], flat[i]) for i in off):
                    # the mean of a normalized row, -5.9605e-08: zero to float32's digits;
                    # the check decides whether float32 rounding of the step gives the print
                    k.labels.append(p.label)
                    return Outcome(
                        p,
                        "mapped",
                        Placement(key),
                        f"{stated}: {len(off)} entries are 0 at the printed values of "
                        f"{self._rounded_names(key)} and printed as a trace of float32 rounding",
                    )
                if self.float32 and self._float32_lineage(key):
                    # the inputs are numpy's prints of float32 values, each within 5e-9 of
                    # its print (most pin it): what is left between the code's value and
                    # the print is float32 arithmetic, which the check bounds
                    k.labels.append(p.label)
                    return Outcome(
                        p,
                        "mapped",
                        Placement(key),
                        f"{stated}: computed in float32 from {self._rounded_names(key)}, "
                        "numpy's prints of float32 values (each pins its value or lies "
                        "within 5e-9 of it)",
                    )
                return None
            if k.expr is None or not self._reached(key, t):
                return None
            k.labels.append(p.label)
            return Outcome(
                p,
                "mapped",
                Placement(key),
                f"the value the code prints: reached with {self._rounded_names(key)} known "
                f"only to their printed digits (a point of their rounding intervals gives "
                f"the {len(flat)} printed entries)",
            )
        if any(v is None for v in verdicts) or slips > max(1, len(flat) // 8):
            if complete and k.expr is not None:
                k.labels.append(p.label)
                return Outcome(p, "mapped", Placement(key), stated)
            return None
        note = (
            f"the value the code prints: certified values reproduce the {len(flat)} printed entries"
        )
        if slips:
            note += f" ({slips} within one unit)"
        k.labels.append(p.label)
        return Outcome(p, "mapped", Placement(key), note)

    def _certainly_off(self, key: int, entries: list[tuple[int, Printed]]) -> bool:
        """Whether each of a step's ``entries`` (index, print) is off wherever in their rounding
        intervals the rounded givens it is computed from lie: the step evaluated in balls
        holding those intervals leaves every print's rounding interval.

        When a single rounded number feeds the step (``scale = 2.0``), its interval is cut
        into :data:`PIECES` parts and the step evaluated on each: balls widened by the whole
        interval overstate how far a softmax or a quotient can move."""
        from symtf.backends.rounded import half_width

        order = self._lineage([key])
        widths = [
            h
            for k in order
            if self.known[k].expr is None and self.known[k].rounded
            for r in self.known[k].rows
            for text in r
            if (h := half_width(text))
        ]
        pieces = PIECES if len(widths) == 1 else 1

        def widened(piece: int) -> Callable[[int, list[Any]], list[Any] | None]:
            def leaf(k: int, data: list[Any]) -> list[Any] | None:
                known = self.known[k]
                if not known.rounded:
                    return data
                texts = [text for r in known.rows for text in r]
                if len(texts) != len(data):
                    return None
                for i, text in enumerate(texts):
                    if h := half_width(text):  # [-h, h] cut in equal parts, each covered
                        part = Fraction(h) / pieces
                        mid = -Fraction(h) + part * (2 * piece + 1) / 2
                        rad = math.nextafter(float(part / 2), math.inf)
                        at = arb(mid.numerator) / mid.denominator
                        data[i] = data[i] + at + arb(0, rad)
                return data

            return leaf

        for piece in range(pieces):
            values = self._evaluate_lineage(order, widened(piece))
            if values is None:
                return False
            result = values[key].data
            for i, c in entries:
                x = result[i]
                if c.value is None or not isinstance(x, arb) or not x.is_finite():
                    return False
                iv = rounding_interval(c)
                below, above = compare_ball(x, iv.lo), compare_ball(x, iv.hi)
                if not ((below is not None and below < 0) or (above is not None and above > 0)):
                    return False
        return bool(entries)


#: The largest print read as float32 rounding of an exact zero: 2^-14, a thousand and
#: twenty-four units of float32's roundoff (2^-24) on entries of size one.
ZERO_NOISE = Fraction(1, 2**14)

#: The widest certified ball still taken for an exact zero (a root's balls are not points).
ZERO_BALL = arb(2) ** -64


def _zero_noise(x: Any, c: Printed) -> bool:
    """Whether a value the code computes as exactly 0 is printed as a tiny nonzero number in
    exponent form (``-5.9605e-08``): how PyTorch shows float32 rounding left in a zero."""
    if not isinstance(x, arb) or not x.contains(0) or x.rad() > ZERO_BALL:
        return False  # not zero: its certified ball holds other values than 0
    if c.value is None or c.value == 0:
        return False
    return c.style == "sci" and abs(c.value) <= ZERO_NOISE


def _same_values(t: Target, texts: tuple[str, ...]) -> bool:
    """Whether a print shows exactly the numbers ``texts`` (``0.5000`` for ``0.5``)."""
    flat = [c for r in t.printed for c in r]
    if len(flat) != len(texts):
        return False
    return all(
        c.value is not None and c.value == _fraction(text)
        for c, text in zip(flat, texts, strict=True)
    )


def _rounded_like(ball: Tensor, t: Target, most: int = 6) -> str | None:
    """A translated step's certified values rounded as the printing is (``0.3185``), or
    None: more than ``most`` entries, another shape, or a rounding the ball leaves open."""
    flat = [p for row in t.printed for p in row]
    values = list(ball.data)
    if len(values) != len(flat) or len(flat) > most:
        return None
    out = []
    for x, p in zip(values, flat, strict=True):
        if not isinstance(x, arb) or not x.is_finite() or p.value is None or p.decimals < 0:
            return None
        ends = {round_exact(exact_fraction(end), p.decimals) for end in (x.lower(), x.upper())}
        if len(ends) != 1:
            return None
        out.append(format_fixed(ends.pop(), p.decimals))
    return " ".join(out)
