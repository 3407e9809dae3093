"""Find the step behind each printed matrix: candidates over earlier tensors, certified.

The article's printings are taken in its order. For each one the search lists
candidate steps (:mod:`symtf.draft.templates`) over the tensors known so far —
given inputs and steps found earlier — from the simplest up:

0. a known tensor itself, one of its rows or columns (a repeat);
1. one op on known tensors: products with or without a transpose, sums and
   differences (broadcasting), element-wise activations, row softmax (with
   ÷√d for the dimensions present and with or without the causal mask),
   LayerNorm (biased or unbiased variance, ε of 0, 1e-5, 1e-6, 1e-12) and
   RMSNorm, centring, reductions along rows, concatenation of heads side by side
   and of rows one under another, splitting into column blocks;
2. one of those on a product or sum of known tensors (depth 2), and the
   attention pattern ``softmax(q·kᵀ/√d [+ mask])`` of projections ``x·W``.

The article's own equations and labels (``S_1 = Q_1K_1^T/\\sqrt{2}``, a product
``X·W_V^{(2)}`` read as ``V_2``) rank candidates first, then simpler ones, then
the ones reading more recent printings.

Each candidate is first computed in float64 only to drop the ones nowhere
near the printed numbers. A kept candidate is evaluated again through the step
language in certified balls (:func:`symtf.graph.evaluate.evaluate_text`), and
it is accepted only when those certified values reproduce the printed entries
at their printed precision — all of them, or all but a few that lie within one
unit of the last printed digit (a slip; the check then gives them their
verdicts and causes). Two best candidates that give different values leave the
printing unmapped, as does no candidate at all: a value the search cannot
explain is never flagged.
"""

from __future__ import annotations

import dataclasses
import itertools
import math
import re
import warnings
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass, field
from fractions import Fraction
from typing import Any

import numpy as np
import sympy
from flint import arb

from symtf.backends import BallBackend
from symtf.backends.certify import compare_ball, exact_fraction
from symtf.draft.article import Article, Display, Printing, ident
from symtf.draft.infer.formula import parse
from symtf.draft.infer.stated import Resolver, label_words, meanings
from symtf.draft.prefilter import MISSING, Missing, fill
from symtf.draft.sizing import Pace, refuse_array
from symtf.draft.templates import (
    Call,
    Expr,
    Num,
    Ref,
    bind,
    call,
    inputs,
    render,
    size,
    variables,
)
from symtf.errors import ExpressionError, SymtfError, Undecided
from symtf.graph.evaluate import evaluate_text
from symtf.language import latexmath
from symtf.numbers import (
    Printed,
    claim_grid,
    format_fixed,
    on_grid,
    parse_printed,
    round_exact,
    rounding_interval,
)
from symtf.tensor import Tensor

__all__ = ["Known", "Outcome", "Placement", "Search", "parse_target"]

#: Bits of the balls candidates are certified in.
PREC = 128
#: At most this many candidates are certified for one printing.
MAX_CERTIFIED = 8
#: LayerNorm/RMSNorm ε tried, in order of preference.
EPSILONS = ("0", "1e-05", "1e-06", "1e-12")
#: Element-wise activations tried.
ACTIVATIONS = ("relu", "gelu", "gelu_tanh", "sigmoid", "tanh", "silu", "exp")
#: Labels of what an article gives rather than computes.
INPUT_LABEL = re.compile(
    r"^(?:W|E|emb|embed|embedding|pos|PE|P|X_?emb|tokens?|vocab|weights?|b|bias|gamma|beta|"
    r"input|inputs|M|mask)(?:_|$|\^|\b)",
    re.I,
)
#: Lines within which a scalar repeats an entry printed earlier.
REPEAT_WINDOW = 40
#: Evidence a step the article names needs, with half its entries reproduced.
NAMED_BITS = 12.0
#: Evidence an unnamed step needs, with half its entries reproduced.
UNNAMED_BITS = 30.0
#: Evidence that takes a step however few of its entries agree (several exact rows).
STRONG_BITS = 40.0
#: How far the best guess must stand above the next one that gives other values.
MARGIN_BITS = 10.0

_KEYWORDS = {
    "mean": ("mean", "mu", "μ", "average"),
    "var": ("variance", "var", "sigma^2", "σ²"),
    "std": ("sigma", "σ", "std", "deviation"),
    "max": ("largest", "max", "biggest", "maximum"),
    "sum": ("sum", "sums", "total", "adds up", "add up"),
}


# ----------------------------------------------------------------------------- targets


@dataclass(frozen=True)
class Target:
    """A printing's numbers on its grid: values, units, and where they are infinite."""

    printed: tuple[tuple[Printed, ...], ...]
    values: np.ndarray
    units: np.ndarray
    neg_inf: np.ndarray

    @property
    def shape(self) -> tuple[int, int]:
        """Rows × columns."""
        return self.values.shape

    @property
    def informative(self) -> int:
        """Entries that are not 0, ±1 or an infinity (what a coincidence rarely matches)."""
        v = self.values
        return int(np.sum(np.isfinite(v) & (np.abs(v) != 0) & (np.abs(v) != 1)))


def parse_target(rows: tuple[tuple[str, ...], ...], decimals: int | None = None) -> Target | None:
    """The printed strings read as a claim reads them (an integer among decimals takes their
    grid; ``decimals`` states the grid of a print that drops trailing zeros)."""
    try:
        cells = [[parse_printed(c, where="printed") for c in r] for r in rows]
    except (SymtfError, ValueError):
        return None
    stated = decimals is not None
    if decimals is None:
        decimals = claim_grid(cells)
    cells = [[on_grid(p, decimals, stated=stated) for p in r] for r in cells]
    vals = np.array(
        [[float(p.value) if p.value is not None else p.inf * math.inf for p in r] for r in cells]
    )
    units = np.array([[float(p.ulp) if not p.is_fraction else 0.0 for p in r] for r in cells])
    neg = np.array([[p.is_neg_inf for p in r] for r in cells])
    return Target(tuple(tuple(r) for r in cells), vals, units, neg)


def _fit(v: np.ndarray, t: Target) -> tuple[np.ndarray, np.ndarray]:
    """Per entry: a correct rounding (float pre-filter), and within one unit."""
    with np.errstate(invalid="ignore"):
        d = np.abs(v - t.values)
        slack = 1e-9 * np.maximum(1.0, np.abs(t.values))
        finite = np.isfinite(t.values)
        full = np.where(finite, d <= t.units / 2 + slack, (v == t.values))
        near = np.where(finite, d < t.units + slack, False)
    return full, near & ~full


# ----------------------------------------------------------------------------- state


@dataclass
class Known:
    """A tensor the draft knows: given by the article, or a step found by the search.

    Attributes:
        key: Its identity (names are chosen when the draft is written).
        value: Float64 midpoints of its certified values (2-D).
        ball: Its certified values (a Tensor of balls).
        expr: The step, or ``None`` for a given tensor.
        labels: Article labels naming it, first the one that introduced it.
        aliases: Names the article's equations may use for it.
        lineage: Aliases of everything it is computed from.
        line: The article line that introduced it.
        rows: For a given tensor, its entries as printed.
        rounded: For a given tensor, whether its entries are rounded prints.
        matched: What the search matched (for the draft's comment).
    """

    key: int
    value: np.ndarray
    ball: Tensor
    expr: Expr | None = None
    labels: list[str] = field(default_factory=list)
    aliases: set[str] = field(default_factory=set)
    lineage: set[str] = field(default_factory=set)
    line: int = 0
    rows: tuple[tuple[str, ...], ...] = ()
    rounded: bool = False
    matched: str = ""
    #: A name the draft must keep (a notebook's variable).
    fixed: str | None = None
    #: For an array literal: its entries as written and its own (N-D) shape.
    flat: tuple[str, ...] = ()
    nd_shape: tuple[int, ...] = ()

    @property
    def shape(self) -> tuple[int, int]:
        """Rows × columns."""
        return self.value.shape

    @property
    def matrix(self) -> bool:
        """Whether its value is 2-D (the search builds candidates on 2-D tensors only)."""
        return len(self.ball.shape) == 2


@dataclass(frozen=True)
class Placement:
    """Where a printing's numbers sit in a known tensor (as a claim writes it)."""

    known: int
    row: int | None = None
    col: int | None = None
    index: tuple[int, int] | None = None


@dataclass
class Outcome:
    """What the search made of one printing.

    ``status``: ``mapped`` (a claim at ``placement``), ``given`` (it defines a given
    tensor), ``unmapped`` (no single step explains it: ``candidates`` are the best
    tried) or ``covered`` (a run holding it was mapped or given).
    """

    printing: Printing
    status: str
    placement: Placement | None = None
    note: str = ""
    candidates: tuple[Expr, ...] = ()
    also: tuple[Placement, ...] = ()  # one printed number stated of several entries


@dataclass(frozen=True)
class _Candidate:
    expr: Expr
    tier: int
    rank: tuple[Any, ...]
    place: str  # whole | row | tcol | col
    where: int  # the row/column of the known candidate, for row/col places
    value: np.ndarray
    full: int
    slip: int
    #: Found on the article's printed values of these earlier steps (a replay), if any.
    replayed: str = ""
    #: Printed entries it does not reproduce within one unit, and the evidence, in bits, of
    #: the ones it does (see :func:`_entry_bits`).
    off: int = 0
    bits: float = 0.0


def _names(label: str) -> set[str]:
    """The names a label may be written as in an equation (``W_Q^((1))`` → ``W_Q_1``)."""
    out = set()
    n = ident(label)
    if n:
        out.add(n)
        out.add(n.replace("_", ""))
    return out


def _math_names(label: str) -> set[str]:
    """The names of the maths inside a label (``Query $Q$`` → ``Q``)."""
    out: set[str] = set()
    for m in re.finditer(r"\$([^$]+)\$", label):
        out |= _names(m.group(1))
    return out


def _heading_lines(article: Article) -> tuple[int, ...]:
    """The lines of an article's Markdown headings (outside fenced code)."""
    if article.kind not in ("md", "txt"):
        return ()
    out, fence = [], False
    for i, line in enumerate(article.text.splitlines(), 1):
        stripped = line.lstrip()
        if stripped.startswith(("```", "~~~")):
            fence = not fence
        elif not fence and re.match(r"#{1,6}\s", stripped):
            out.append(i)
    return tuple(out)


def _product_alias(weight_labels: list[str]) -> set[str]:
    """``x·W_V^{(2)}`` is what an article calls ``V_2``: the names of a projection."""
    out = set()
    for label in weight_labels:
        m = re.match(r"^W_?\{?([A-Za-z]+)\}?(?:\^?\(*\{?\(?(\d+)\)?\}?\)*|_(\d+))?$", label.strip())
        if m:
            letter, k = m.group(1), m.group(2) or m.group(3)
            out.add(letter)
            if k:
                out.add(f"{letter}_{k}")
                out.add(f"{letter}{k}")
    return out


class Search:
    """The search over one article's printings (see the module docstring)."""

    def __init__(self, article: Article) -> None:
        self.article = article
        self.known: dict[int, Known] = {}
        self.outcomes: dict[int, Outcome] = {}
        self.dims = article.dims
        self._xp: BallBackend | None = None
        self._memo: dict[Expr, np.ndarray | None] = {}
        self._unary_memo: dict[Any, list[Expr]] = {}
        self._pair_memo: dict[tuple[str, int, int, bool], Call] = {}
        self._made_memo: dict[tuple[str, tuple[Expr, ...]], Call] = {}
        self._binary_memo: dict[Any, list[tuple[Expr, tuple[int, int]]]] = {}
        self._pattern_memo: dict[Any, list[Expr]] = {}
        #: While a replay runs: the known tensors whose values it changed (else None).
        self._replaying: set[int] | None = None
        self._replay_cache: tuple[Any, dict[int, Known], set[int]] | None = None
        self._exact_memo: dict[Expr, np.ndarray | None] = self._memo
        self._next = 0
        self._equations: dict[str, list[set[str]]] = {}
        #: For each displayed line (by key): literal → (known, row, column) it stands for.
        self.sources: dict[int, dict[str, tuple[int, int, int]]] = {}
        #: For each displayed line (by key): the step entry it computes, where found.
        self.results: dict[int, Outcome] = {}
        #: Code: variable (step name) → known key; steps waiting for an input; notes.
        self.var_keys: dict[str, int] = {}
        self.pending: list[Any] = []
        self.notes: list[Any] = []
        #: Printed values of the code (they are not among the article's printings).
        self.extra: list[Printing] = []
        self._shown_key = 0
        self.float32 = False
        self._heading_lines: tuple[int, ...] | None = None
        #: Per printing: candidates taken on their evidence when nothing reproduces it all.
        self._evidential: dict[int, list[_Candidate]] = {}
        for eq in article.equations:
            for name in _names(eq.lhs):
                self._equations.setdefault(name, []).append(
                    {m for n in eq.names for m in _names(n)}
                )

    # -- running --
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
                    self._event(event)
            self.float32 = translator.float32
            for i, p in enumerate(printings[k:], start=k + 1):
                self._printing(p)
                pace.step(i)
            self._displays()
            self._xp = None

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

    def _shape_of(self, name: str) -> tuple[int, ...] | None:
        key = self.var_keys.get(name)
        return tuple(self.known[key].ball.shape) if key is not None else None

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
            f"{e.where}: an array literal",
        )
        k.fixed = e.name
        k.flat = texts
        k.nd_shape = tuple(e.shape)
        self.known[key] = k
        self.var_keys[e.name] = key

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
        label = e.name or e.label
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
        if e.opaque and p.size > 1:
            # later steps read the printed value (rounded) of what the code draws or fills in;
            # PyTorch prints whole numbers as 1. only when every entry is one: each is exact
            q = p
            if getattr(e, "whole", False):
                q = dataclasses.replace(p, rows=tuple(tuple(c[:-1] for c in r) for r in p.rows))
            given = self._given(q, parse_target(q.rows) or t, rounded=True, vector=e.vector)
            if given.placement is None:
                self.outcomes.setdefault(key, given)
                return
            g = self.known[given.placement.known]
            g.fixed = e.opaque
            self.var_keys[e.opaque] = g.key
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
        holding those intervals leaves every print's rounding interval."""
        from symtf.backends.rounded import half_width

        xp = self._xp
        assert xp is not None
        order = self._lineage([key])
        names = {k: f"k{k}" for k in order}
        env: dict[str, Tensor] = {}
        try:
            for k in order:
                known = self.known[k]
                if known.expr is None:
                    data = list(known.ball.data)
                    if known.rounded:
                        texts = [text for r in known.rows for text in r]
                        if len(texts) != len(data):
                            return False
                        for i, text in enumerate(texts):
                            if h := half_width(text):
                                data[i] = data[i] + arb(0, math.nextafter(float(h), math.inf))
                    env[names[k]] = Tensor(known.ball.shape, data)
                elif isinstance(known.expr, Call) and known.expr.op in ("grad", "jacobian"):
                    return False
                else:
                    env[names[k]] = evaluate_text(xp, render(known.expr, names), env, where="draft")
            result = env[names[key]].data
        except (SymtfError, Undecided, ArithmeticError, ValueError, IndexError, KeyError):
            return False
        for i, c in entries:
            x = result[i]
            if c.value is None or not isinstance(x, arb) or not x.is_finite():
                return False
            iv = rounding_interval(c)
            below, above = compare_ball(x, iv.lo), compare_ball(x, iv.hi)
            if not ((below is not None and below < 0) or (above is not None and above > 0)):
                return False
        return bool(entries)

    def _lineage_keys(self, key: int) -> set[int]:
        """Every known tensor a step is computed from."""
        out: set[int] = set()
        todo = [key]
        while todo:
            e = self.known[todo.pop()].expr
            for k in inputs(e) if e is not None else ():
                if k not in out:
                    out.add(k)
                    todo.append(k)
        return out

    def _displays(self) -> None:
        """For each displayed line: the entries its literals stand for, and the entry it computes."""
        used: dict[tuple[int, int, int], int] = {}
        outcomes = [self.outcomes[p.key] for p in self.article.printings if p.key in self.outcomes]
        seen: set[Any] = set()
        for d in self.article.displays:
            sources = stands_for(d, outcomes, used)
            self.sources[d.key] = sources
            result = self.display_result(d, sources) or self._display_reduction(d)
            same = (d.line, d.rows, result.placement if result else None)
            if result is not None and same in seen:
                continue  # "= ((-3)² + 0² + 3²) / 3 = (9 + 0 + 9) / 3 = 6": one printed 6
            seen.add(same)
            if result is not None:
                self.results[d.key] = result
                outcomes.append(result)  # later lines may repeat what this one printed

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
        out = self._stated_or_found(p, t)
        if out is None:
            out = self._given_or_unmapped(p, t)
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

    # -- what the article states --
    def _stated_or_found(
        self, p: Printing, t: Target, *, allow_rows: bool = True
    ) -> Outcome | None:
        """The step the article states for a printing, else the one its numbers show.

        A stated step (:meth:`_stated`) is taken whatever its printed entries say: the
        entries it does not reproduce are the findings. Only when the search finds a step
        that reproduces every entry (in its first two tiers, or named by the article) does
        that step stand instead: the formula was read wrong, or names a quantity next to
        the printed one (``S_1`` above a printed ``S_1 + M``).
        """
        stated = self._stated(p, t)
        if stated is not None and stated[0].slip == 0 and stated[0].full == t.values.size:
            return self._accept_stated(p, *stated)
        found = self._find(p, t, allow_rows=allow_rows)
        if stated is not None:
            searched = found[0] if isinstance(found, tuple) else None
            overwhelming = (
                searched is not None
                and searched.slip == 0
                and searched.off == 0
                and (searched.tier < 2 or searched.rank[0] < 0)
            )
            if not overwhelming:
                return self._accept_stated(p, *stated)
        if found is None or isinstance(found, Outcome):
            return found
        return self._accept(p, *found)

    def _stated(self, p: Printing, t: Target) -> tuple[_Candidate, Tensor, Any] | None:
        """The step an equation of the article states for a printing, with its certified
        values and the equation, or None.

        The equations whose left side names the printing are tried nearest first, those
        in the printing's own section before the others. Each is read as every step it
        may mean over the tensors known so far (:func:`symtf.draft.infer.stated.meanings`);
        the meanings of the printing's shape are certified, and the one reproducing the
        most printed entries is the step (the simplest among equals). Two meanings that
        reproduce as many entries but give other values leave the equation unread.
        """
        if p.role in ("operand", "weights", "term", "before", "after", "operands"):
            return None
        if self._replaying is not None or len(t.shape) != 2:
            return None
        for eq in self._statements_for(p):
            node = parse(eq.latex) if eq.latex else None
            if node is None:
                continue
            exprs = meanings(node, self._resolver(p, eq))
            scored: list[tuple[tuple[int, int, int, int], _Candidate, Tensor]] = []
            for order, e in enumerate(exprs):
                if inputs(e) and max(inputs(e)) >= 10_000_000 and self._after(e, p):
                    continue
                ball = self._ball(e)
                if ball is None or tuple(ball.shape) != t.shape:
                    continue
                flat = [c for r in t.printed for c in r]
                verdicts = [_certified(x, c) for x, c in zip(ball.data, flat, strict=True)]
                full = sum(v == "full" for v in verdicts)
                slip = sum(v == "slip" for v in verdicts)
                c = _Candidate(e, 0, (-4, 0), "whole", 0, _mids(ball), full, slip)
                scored.append(((-(full + slip), -full, size(e), order), c, ball))
            if not scored:
                continue
            scored.sort(key=lambda x: x[0])
            best = scored[0]
            rivals = [
                x
                for x in scored[1:]
                if x[0][:2] == best[0][:2]
                and not np.allclose(x[1].value, best[1].value, rtol=0, atol=1e-12, equal_nan=True)
            ]
            if rivals and rivals[0][0][2] == best[0][2]:
                continue  # two readings of the formula, equally simple, disagree
            return best[1], best[2], eq
        return None

    def _after(self, e: Expr, p: Printing) -> bool:
        """Whether a candidate reads a tensor the article introduces after the printing."""
        return any(self.known[k].line > p.line for k in inputs(e) if self.known[k].line)

    def _statements_for(self, p: Printing) -> list[Any]:
        """The equations naming a printing, nearest first (its own section's first)."""
        names = _names(p.label) | _math_names(p.label)
        words = label_words(p.label)
        found = []
        for eq in self.article.equations:
            if not eq.latex or eq.line > p.line:
                continue
            if p.cell is not None and eq.cell is not None and eq.cell > p.cell:
                continue
            lhs = re.sub(r"_\{?(?:[ijklmnt]|[ijkl]{2}|[ijkl],[ijkl])\}?$", "", eq.lhs)
            lhs_names = _names(lhs) | {lhs}
            prose = not re.search(r"[-+*/=·×@^]", p.label.replace("_{", "").replace("^{(", ""))
            if not (lhs_names & names or (prose and lhs.lower() in words)):
                continue
            same = not self._heading_between(eq.line, p.line)
            found.append((not same, p.line - eq.line, eq))
        found.sort(key=lambda x: (x[0], x[1]))
        return [eq for *_, eq in found]

    def _heading_between(self, a: int, b: int) -> bool:
        """Whether a heading of the article lies on a line after ``a`` and up to ``b``."""
        return any(a < h <= b for h in self._headings)

    @property
    def _headings(self) -> tuple[int, ...]:
        if self._heading_lines is None:
            self._heading_lines = _heading_lines(self.article)
        return self._heading_lines

    def _resolver(self, p: Printing, eq: Any) -> Resolver:
        """Names of the equation → the known tensors and numbers they name, as of ``p``."""

        def tensors(name: str) -> list[Expr]:
            wanted = _names(name) | {name}
            if name.endswith("s") and len(name) > 2:
                wanted |= _names(name[:-1])
            hits = [
                k
                for k in self.known.values()
                if (k.aliases & wanted or set(k.labels) & {name})
                and (not k.line or k.line <= p.line)
            ]
            hits.sort(key=lambda k: -k.key)
            return [Ref(k.key) for k in hits[:2]]

        def number(name: str) -> str | None:
            wanted = _names(name) | {name}
            best = None
            for q in self.article.printings:
                if q.size != 1 or q.line > p.line or q.role:
                    continue
                named = (_names(q.label) | {q.label.strip()}) & wanted
                if named and (best is None or q.line >= best.line):
                    best = q
            if best is not None:
                return best.rows[0][0].replace("−", "-")
            if re.fullmatch(r"d_?\{?(?:k|q|v|h|head|model)\}?|d", name) and len(self.dims) == 1:
                return str(self.dims[0])
            return None

        return Resolver(tensors, number)

    def _accept_stated(self, p: Printing, c: _Candidate, ball: Tensor, eq: Any) -> Outcome:
        n = t_size = c.value.size
        agree = c.full + c.slip
        where = f"line {eq.line}"
        note = f"the step the article states at {where} ({eq.lhs} = {eq.text})"
        if agree == t_size and not c.slip:
            note += f": certified values reproduce the {n} printed entries"
        else:
            note += f": certified values reproduce {c.full} of the {n} printed entries"
            if c.slip:
                note += f", {c.slip} more within one unit"
        new = self._add(c.expr, ball, p, note)
        lhs = re.sub(r"_\{?(?:[ijklmnt]|[ijkl]{2})\}?$", "", eq.lhs)
        new.aliases |= _names(lhs)
        return Outcome(p, "mapped", Placement(new.key), note)

    # -- the candidates --
    def _explain(self, p: Printing, t: Target, *, allow_rows: bool = True) -> Outcome | None:
        """Map a printing to its certified best candidate (adding the step), or None."""
        found = self._find(p, t, allow_rows=allow_rows)
        if found is None or isinstance(found, Outcome):
            return found
        return self._accept(p, *found)

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

    # -- replay: steps computed from the article's printed values --
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
        placed.sort(key=lambda x: (x[0].line, x[0].key))
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

    def _lineage_keys_of(self, e: Expr) -> set[int]:
        """Every known tensor a candidate reads, directly or through the steps it reads."""
        out = set(inputs(e))
        for k in inputs(e):
            out |= self._lineage_keys(k)
        return out

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
                new = self._add(row, self._slice(k.ball, c.where), p, note)
                return Outcome(p, "mapped", Placement(new.key), note)
            return Outcome(p, "mapped", self._place(k.key, c), note)
        new = self._add(c.expr, ball, p, note)
        if c.place == "whole":
            return Outcome(p, "mapped", Placement(new.key), note)
        return Outcome(p, "mapped", self._place(new.key, c), note)

    @staticmethod
    def _place(key: int, c: _Candidate) -> Placement:
        if c.place == "row":
            return Placement(key, row=c.where)
        if c.place in ("col", "tcol"):
            return Placement(key, col=c.where)
        return Placement(key)

    @staticmethod
    def _slice(t: Tensor, i: int) -> Tensor:
        m = t.shape[1]
        return Tensor((1, m), list(t.data[i * m : (i + 1) * m]))

    def _add(self, expr: Expr, ball: Tensor, p: Printing, note: str) -> Known:
        self._next += 1
        key = 10_000_000 + self._next
        value = _mids(ball)
        lineage: set[str] = set()
        whole = tuple(value.shape) == p.shape  # a row's label ("Birds") names the row, not the step
        aliases: set[str] = set(_names(p.label)) if whole and not p.role else set()
        for k in inputs(expr):
            lineage |= self.known[k].aliases | self.known[k].lineage
        if isinstance(expr, Call) and expr.op == "matmul" and isinstance(expr.args[1], Ref):
            aliases |= _product_alias(self.known[expr.args[1].key].labels)
        where = (
            f"{p.label} (line {p.line})"
            if p.label and not p.label.startswith("line ")
            else f"line {p.line}"
        )
        labels = [p.label] if whole and p.role in ("", "result") else []
        known = Known(
            key, value, ball, expr, labels, aliases, lineage, p.line, matched=f"{where}: {note}"
        )
        self.known[key] = known
        return known

    def text(self, e: Expr) -> str:
        """A candidate's step text with the names known so far (for notes)."""
        return render(e, {k: self.display_name(k) for k in inputs(e)})

    def display_name(self, key: int) -> str:
        """A readable name for a known tensor: its first proper label, else where it came from."""
        k = self.known[key]
        for label in k.labels:
            name = ident(label)
            if name:
                return name
        return f"t{k.line}"

    def _candidates(self, shape: tuple[int, int], whole_only: bool, tier: int) -> Iterator[Expr]:
        """Candidate steps of one tier that can give ``shape`` (or its rows), by shape rules."""
        n, m = shape
        ks = sorted(self.known.values(), key=lambda k: -k.key)
        if tier > 0:
            ks = [k for k in ks if k.matrix]

        def fits(s: tuple[int, ...]) -> bool:
            if len(s) != 2:
                return False
            if s == (n, m):
                return True
            return not whole_only and n == 1 and (s[1] == m or s == (m, 1))

        if tier == 0:
            yield from (Ref(k.key) for k in ks if fits(k.shape))
            return
        sig = (n, m, whole_only)
        if tier == 1:
            for k in ks:
                key = (k.key, sig)
                if key not in self._unary_memo:
                    self._unary_memo[key] = list(self._unary(Ref(k.key), k.shape, fits))
                yield from self._unary_memo[key]
            for e, _shape in self._pairs(ks, fits):
                yield e
            yield from self._joins(ks, fits, n, m)
            for size_ in {n, m}:
                if fits((size_, size_)):
                    yield call("causal_mask", n=size_)
            return
        # tier 2: one op on a product or sum of known tensors, and attention patterns
        products = list(self._pairs(ks, lambda s: True, products_only=True))
        for e, s in products:
            if fits(s):
                key2 = (e, sig)
                if key2 not in self._unary_memo:
                    self._unary_memo[key2] = list(self._unary(e, s, fits, cheap=False))
                yield from self._unary_memo[key2]
        by_rows: dict[int, list[tuple[Expr, tuple[int, int]]]] = {}
        by_cols: dict[int, list[tuple[Expr, tuple[int, int]]]] = {}
        by_shape: dict[tuple[int, int], list[Expr]] = {}
        for e, s in products:
            by_rows.setdefault(s[0], []).append((e, s))
            by_cols.setdefault(s[1], []).append((e, s))
            by_shape.setdefault(s, []).append(e)
        known_rows: dict[int, list[Known]] = {}
        for k in ks:
            known_rows.setdefault(k.shape[0], []).append(k)
        for k in ks:
            r, c = k.shape
            for e, s in by_rows.get(c, []):  # k @ (a @ b)
                if fits((r, s[1])):
                    yield self._made("matmul", Ref(k.key), e)
            for e, s in by_cols.get(c, []):  # k @ (a @ b).T
                if fits((r, s[0])):
                    yield self._made("matmul", Ref(k.key), self._made("T", e))
            if fits(k.shape):
                for e in by_shape.get(k.shape, []):  # k + (a @ b): a residual
                    yield self._made("add", Ref(k.key), e)
        for e, s in products:  # (a @ b) @ k
            for k in known_rows.get(s[1], []):
                if fits((s[0], k.shape[1])):
                    yield self._made("matmul", e, Ref(k.key))
        projections = [
            (e, s)
            for e, s in products
            if isinstance(e, Call)
            and e.op == "matmul"
            and isinstance(e.args[1], Ref)
            and self._weight_like(e.args[1].key)
        ]
        for (q, qs), (k_, ks_) in itertools.product(projections, projections):
            if qs[1] != ks_[1] or not fits((qs[0], ks_[0])):
                continue
            key3 = (q, k_, (qs[0], ks_[0]), qs[1])
            found = self._pattern_memo.get(key3)
            if found is None:  # built once per search (candidates recur for every printing)
                scores = call("matmul", q, call("T", k_))
                found = self._pattern_memo[key3] = list(
                    self._patterns(scores, (qs[0], ks_[0]), qs[1])
                )
            yield from found

    def _pairs(
        self, ks: list[Known], fits: Any, *, products_only: bool = False
    ) -> Iterator[tuple[Expr, tuple[int, int]]]:
        """One binary op on two known tensors, where the shapes allow it and the result fits."""
        by_cols: dict[int, list[Known]] = {}
        by_rows: dict[int, list[Known]] = {}
        for k in ks:
            by_cols.setdefault(k.shape[1], []).append(k)
            by_rows.setdefault(k.shape[0], []).append(k)
        made = self._pair_memo

        def mk(op: str, a: int, b: int, transpose: bool = False) -> Call:
            key = (op, a, b, transpose)
            e = made.get(key)
            if e is None:
                rhs: Expr = call("T", Ref(b)) if transpose else Ref(b)
                e = made[key] = call(op, Ref(a), rhs)
            return e

        for a in ks:
            ra, ca = a.shape
            for b in by_rows.get(ca, []):  # a @ b
                if fits((ra, b.shape[1])):
                    yield mk("matmul", a.key, b.key), (ra, b.shape[1])
            for b in by_cols.get(ca, []):  # a @ b.T
                if fits((ra, b.shape[0])):
                    yield mk("matmul", a.key, b.key, True), (ra, b.shape[0])
            if not fits(a.shape):
                continue
            for b in ks:
                if b is a:
                    continue
                shape = _broadcast(a.shape, b.shape)
                if shape != a.shape:
                    continue
                if products_only:
                    if b.shape == a.shape and b.key < a.key:
                        yield mk("add", a.key, b.key), shape
                    continue
                if not (b.shape == a.shape and b.key > a.key):  # a + b once, in one order
                    yield mk("add", a.key, b.key), shape
                yield mk("sub", a.key, b.key), shape
                yield mk("mul", a.key, b.key), shape

    def _made(self, op: str, *args: Expr) -> Call:
        """``call(op, *args)``, built once per search (candidates recur for every printing)."""
        key = (op, args)
        e = self._made_memo.get(key)
        if e is None:
            e = self._made_memo[key] = call(op, *args)
        return e

    def _weight_like(self, key: int) -> bool:
        return any(re.match(r"^W", label) for label in self.known[key].labels)

    def _scales(self, inner: int) -> list[int]:
        return list(dict.fromkeys([inner, *self.dims]))

    def _patterns(self, scores: Expr, shape: tuple[int, int], inner: int) -> Iterator[Expr]:
        """Row softmax of scores, with ÷√d for the dimensions present and with or without a mask."""
        n, m = shape
        for d in self._scales(inner):
            scaled = call("div", scores, call("sqrt", Num(str(d))))
            yield scaled
            if n == m:
                yield call("softmax", call("add", scaled, call("causal_mask", n=n)), axis=-1)
            yield call("softmax", scaled, axis=-1)
        if n == m:
            yield call("softmax", call("add", scores, call("causal_mask", n=n)), axis=-1)
        yield call("softmax", scores, axis=-1)

    def _unary(
        self, x: Expr, s: tuple[int, int], fits: Any, *, cheap: bool = True
    ) -> Iterator[Expr]:
        n, m = s
        if fits(s):
            for act in ACTIVATIONS:
                yield call(act, x)
            yield from (
                self._patterns(x, s, m)
                if n == m
                else (
                    call("softmax", x, axis=-1),
                    *(call("div", x, call("sqrt", Num(str(d)))) for d in self._scales(m)),
                )
            )
            if n == m:
                yield call("add", x, call("causal_mask", n=n))
            for eps in EPSILONS:
                for unbiased in (False, True):
                    yield call("layernorm", x, eps=Num(eps).text, unbiased=unbiased)
            for eps in EPSILONS[:3]:
                yield call("rmsnorm", x, eps=Num(eps).text)
            yield call("centered", x)
        if (fits((m, n)) and n != m) or (n == m and fits(s)):
            yield call("T", x)
        if fits((n, 1)) or fits((1, n)) or fits((n, 1)[::-1]):
            for red in ("mean", "var", "std", "sum", "max"):
                if red in ("var", "std"):
                    for unbiased in (False, True):
                        yield call(red, x, axis=-1, keepdims=True, unbiased=unbiased)
                else:
                    yield call(red, x, axis=-1, keepdims=True)
        if cheap:
            for w in range(1, m):
                if m % w == 0 and fits((n, w)):
                    for j in range(m // w):
                        yield call("index", x, cols=(j * w, (j + 1) * w))

    def _binary(
        self,
        a: Expr,
        sa: tuple[int, int],
        b: Expr,
        sb: tuple[int, int],
        *,
        products_only: bool = False,
    ) -> list[tuple[Expr, tuple[int, int]]]:
        key = (a, b, sa, sb, products_only)
        found = self._binary_memo.get(key)
        if found is None:
            found = self._binary_memo[key] = list(
                self._binary_all(a, sa, b, sb, products_only=products_only)
            )
        return found

    @staticmethod
    def _binary_all(
        a: Expr, sa: tuple[int, int], b: Expr, sb: tuple[int, int], *, products_only: bool = False
    ) -> Iterator[tuple[Expr, tuple[int, int]]]:
        if sa[1] == sb[0]:
            yield call("matmul", a, b), (sa[0], sb[1])
        if sa[1] == sb[1] and a != b:
            yield call("matmul", a, call("T", b)), (sa[0], sb[0])
        if a == b and sa[1] == sb[1]:
            yield call("matmul", a, call("T", b)), (sa[0], sb[0])
        if products_only:
            if sa == sb and a != b:
                yield call("add", a, b), sa
            return
        shape = _broadcast(sa, sb)
        if shape is not None and a != b:
            yield call("add", a, b), shape
            yield call("sub", a, b), shape
            yield call("mul", a, b), shape

    def _joins(self, ks: list[Known], fits: Any, n: int, m: int) -> Iterator[Expr]:
        """Heads side by side (``concat(H_1, H_2, H_3)``) and rows one under another."""
        by_order = sorted(ks, key=lambda k: k.key)
        for axis in (-1, 0):
            along = 1 if axis == -1 else 0
            across = 1 - along
            same = [k for k in by_order if k.shape[along] < (m if axis == -1 else n)]
            groups: dict[tuple[int, str], list[Known]] = {}
            for k in same:
                stem = re.sub(r"_?\d+$", "", self.display_name(k.key))
                groups.setdefault((k.shape[across], stem), []).append(k)
                groups.setdefault((k.shape[across], "*"), []).append(k)
            seen: set[tuple[int, ...]] = set()
            for group in groups.values():
                for i in range(len(group)):
                    total = 0
                    for j in range(i, len(group)):
                        total += group[j].shape[along]
                        if j == i:
                            continue
                        shape = (
                            (group[i].shape[0], total) if axis == -1 else (total, group[i].shape[1])
                        )
                        if fits(shape):
                            keys = tuple(k.key for k in group[i : j + 1])
                            if keys not in seen:
                                seen.add(keys)
                                yield call("concat", *(Ref(k) for k in keys), axis=axis)
                            break
                        if total > (m if axis == -1 else n):
                            break

    # -- screening and certification --
    def _value(self, e: Expr) -> np.ndarray | None:
        """A candidate's float64 pre-filter value (None: it has none)."""
        if isinstance(e, Ref):
            return self.known[e.key].value
        memo = self._memo
        if e not in memo:
            self._fill([e])
        return memo.get(e)

    def _fill(self, exprs: Iterable[Expr]) -> None:
        """Pre-filter values for the candidates, computed together (:func:`~symtf.draft.prefilter.fill`)."""
        borrow = None
        if self._replaying is not None:
            main, changed = self._exact_memo, self._replaying

            def borrow(e: Call) -> np.ndarray | Missing | None:
                if e in main and not inputs(e) & changed:
                    return main[e]  # reads no value the replay changed
                return MISSING

        known = self.known
        fill(exprs, lambda k: known[k].value, self._memo, borrow)

    def _screen(
        self, e: Expr, tier: int, p: Printing, t: Target, whole_only: bool
    ) -> list[_Candidate]:
        """One candidate's places that fit the printing (float pre-filter)."""
        return self._screen_all([e], tier, p, t, whole_only)

    def _screen_all(
        self, exprs: list[Expr], tier: int, p: Printing, t: Target, whole_only: bool
    ) -> list[_Candidate]:
        """The candidates' places that fit the printing, screened together by shape."""
        n, m = t.shape
        stacks: dict[tuple[int, int], list[tuple[Expr, str, int, np.ndarray]]] = {}
        exprs = list(dict.fromkeys(exprs))
        self._fill(exprs)
        memo, known = self._memo, self.known
        for e in exprs:
            v = known[e.key].value if isinstance(e, Ref) else memo.get(e)
            if v is None:
                continue
            if v.shape == (n, m):
                stacks.setdefault((n, m), []).append((e, "whole", 0, v))
            if not whole_only and n == 1:
                if v.shape[1] == m and v.shape[0] > 1:
                    for i in range(v.shape[0]):
                        stacks.setdefault((n, m), []).append((e, "row", i, v[i : i + 1]))
                if v.shape == (m, 1):
                    stacks.setdefault((n, m), []).append((e, "tcol", 0, v.T))
        out = []
        for items in stacks.values():
            w = np.stack([x[3] for x in items])
            with np.errstate(invalid="ignore"):
                d = np.abs(w - t.values)
                slack = 1e-9 * np.maximum(1.0, np.abs(t.values))
                finite = np.isfinite(t.values)
                full = np.where(finite, d <= t.units / 2 + slack, w == t.values)
                near = np.where(finite, d < t.units + slack, False) & ~full
                exact = np.where(finite, d <= 1e-12 * np.maximum(1.0, np.abs(t.values)), False)
            n_full = full.reshape(len(items), -1).sum(axis=1)
            n_near = near.reshape(len(items), -1).sum(axis=1)
            n_exact = exact.reshape(len(items), -1).sum(axis=1)
            size_ = t.values.size
            weights = _entry_bits(t).reshape(-1)
            bits = full.reshape(len(items), -1) @ weights + near.reshape(
                len(items), -1
            ) @ np.maximum(weights - 1.0, 0.0)
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
            for at in ok:
                e, place, where, wv = items[at]
                base = self._rank(e, tier, p)
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

    def _wanted(self, p: Printing) -> int:
        """The bonus a candidate needs for the search to stop early: 2 when an equation names the printing."""
        return 2 if any(n in self._equations for n in _names(p.label)) else 0

    def _rank(self, e: Expr, tier: int, p: Printing) -> tuple[Any, ...]:
        ins = inputs(e)
        names = (
            set().union(*(self.known[k].aliases | self.known[k].lineage for k in ins))
            if ins
            else set()
        )
        own = set().union(*(self.known[k].aliases for k in ins)) if ins else set()
        if isinstance(e, Call) and e.op == "matmul" and isinstance(e.args[1], Ref):
            own |= _product_alias(self.known[e.args[1].key].labels)
        for sub in _subexprs(e):
            if isinstance(sub, Call) and sub.op == "matmul" and isinstance(sub.args[1], Ref):
                names |= _product_alias(self.known[sub.args[1].key].labels)
        label_names = _names(p.label)
        bonus = 0
        if isinstance(e, Ref) and label_names & own:
            bonus = 3  # the same name again
        elif label_names & own:
            bonus = 2
        for eq in (self._equations.get(n, []) for n in label_names):
            for names_ in eq:
                hit = len(names_ & (names | own))
                if hit and hit >= min(2, len(names_)):
                    bonus = max(bonus, 1 + (hit >= len(names_)))
        if not bonus and p.role in ("", "result") and isinstance(e, Call) and e.op == "matmul":
            # "[1, 0, 1] W_Q^{(1)}": a row times the matrix the label names
            mentioned = {m for w in re.findall(r"[A-Za-z][\w^()]*", p.label) for m in _names(w)}
            factors = {
                k
                for a in e.args
                for k in inputs(a)
                if isinstance(a, Ref) or (isinstance(a, Call) and a.op == "T")
            }
            if any(mentioned & self.known[k].aliases for k in factors):
                bonus = 1
        recency = tuple(-k for k in sorted(ins, reverse=True))  # the latest printings first
        return (
            -bonus,
            tier,
            size(e) - self._stated_scales(e),
            _params_rank(e) - self._canonical(e),
            recency,
        )

    def _stated_scales(self, e: Expr) -> int:
        """A ``÷√d`` the article states (``Scale by 1/√2``) ranks a candidate ahead of the same
        step without it: softmax of scores so small that the scale hardly moves them fits
        both ways, and the shorter step won, against the article's own words (its two ops,
        the div and the sqrt, are not counted, and one more is taken off)."""
        return sum(
            3
            for sub in _subexprs(e)
            if isinstance(sub, Call)
            and sub.op == "div"
            and isinstance(sub.args[1], Call)
            and sub.args[1].op == "sqrt"
            and isinstance(sub.args[1].args[0], Num)
            and sub.args[1].args[0].text in {str(d) for d in self.dims}
        )

    def _canonical(self, e: Expr) -> int:
        """How much a candidate reads like attention as written: ``Q·Kᵀ``, then ``A·V``."""

        def letter(x: Expr) -> set[str]:
            keys = (
                inputs(x)
                if isinstance(x, Ref) or (isinstance(x, Call) and x.op in ("T", "matmul"))
                else set()
            )
            out = set()
            for k in keys:
                for a in self.known[k].aliases | _product_alias(self.known[k].labels):
                    out.add(a[:1].upper())
            if isinstance(x, Call) and x.op == "matmul" and isinstance(x.args[1], Ref):
                out |= {a[:1].upper() for a in _product_alias(self.known[x.args[1].key].labels)}
            return out

        score = 0
        for sub in _subexprs(e):
            if isinstance(sub, Call) and sub.op == "matmul" and len(sub.args) == 2:
                a, b = sub.args
                if isinstance(b, Call) and b.op == "T":
                    score += 2 * ("Q" in letter(a) and "K" in letter(b.args[0]))
                else:
                    score += "V" in letter(b) and "V" not in letter(a)
        return score

    @staticmethod
    def _exactness(w: np.ndarray, t: Target) -> float:
        """Share of finite entries the candidate gives exactly as printed (toy inputs give exact values)."""
        finite = np.isfinite(t.values)
        if not finite.any():
            return 0.0
        with np.errstate(invalid="ignore"):
            same = np.abs(w - t.values) <= 1e-12 * np.maximum(1.0, np.abs(t.values))
        return float(np.sum(same & finite)) / float(np.sum(finite))

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

    def _rounded_names(self, key: int) -> str:
        """The rounded given tensors a step is computed from, by name."""
        names = [
            self.display_name(k) for k in sorted(self._lineage_keys(key)) if self.known[k].rounded
        ]
        return ", ".join(names[:3]) + (" …" if len(names) > 3 else "")

    def _reached(self, key: int, t: Target) -> bool:
        """Whether a point of the rounding intervals of the rounded givens a step reads gives
        values that print as ``t`` (and as every printed entry of the steps between).

        A witness (:func:`symtf.witness.reach`): the enclosure over those intervals
        meeting the prints is not enough, since enclosures are wider than the range.
        """
        from symtf.backends.rounded import half_width
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
            entries += [((k, i), h) for i, c in enumerate(texts) if (h := half_width(c))]
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
        names = {k: f"k{k}" for k in order}

        def at(moves: Any) -> list[arb] | None:
            env: dict[str, Tensor] = {}
            try:
                for k in order:
                    known = self.known[k]
                    if known.expr is None:
                        data = list(known.ball.data)
                        for i in range(len(data)):
                            dv = moves.get((k, i))
                            if dv:
                                data[i] = data[i] + xp.const(dv)
                        env[names[k]] = Tensor(known.ball.shape, data)
                    elif isinstance(known.expr, Call) and known.expr.op in ("grad", "jacobian"):
                        return None
                    else:
                        env[names[k]] = evaluate_text(
                            xp, render(known.expr, names), env, where="draft"
                        )
                return [env[names[k]].data[i] for k, i, _ in targets]
            except (SymtfError, Undecided, ArithmeticError, ValueError, IndexError, KeyError):
                return None

        intervals = [rounding_interval(c) for _, _, c in targets]
        return reach(entries, at, intervals)

    def _rounded_lineage(self, key: int) -> bool:
        """Whether a known tensor is computed from an input known only to its printed digits."""
        return any(self.known[k].rounded for k in self._lineage_keys(key))

    def _ball(self, e: Expr) -> Tensor | None:
        if isinstance(e, Call) and e.op in ("grad", "jacobian"):
            return self._derivative_ball(e)
        keys = sorted(inputs(e))
        names = {k: f"k{k}" for k in keys}
        try:
            return evaluate_text(
                self._xp,
                render(e, names),
                {names[k]: self.known[k].ball for k in keys},
                where="draft",
            )
        except Undecided:
            return self._exact_ball(e)
        except (SymtfError, ArithmeticError, ValueError, ZeroDivisionError):
            return None

    def _exact_ball(self, e: Expr) -> Tensor | None:
        """A step balls cannot decide (``x < topk(x)[-1]`` compares an entry with itself),
        evaluated exactly from the code's own literals, as the check escalates; ``None``
        when it reads a printed value (known only to its digits)."""
        from symtf.backends import ExactBackend

        order = self._lineage(sorted(inputs(e)))
        leaves = [k for k in order if self.known[k].expr is None]
        if any(self.known[k].rounded or not self.known[k].flat for k in leaves):
            return None
        names = {k: f"k{k}" for k in order}
        xp = ExactBackend()
        env: dict[str, Tensor] = {}
        try:
            for k in order:
                known = self.known[k]
                if known.expr is None:
                    shape = known.nd_shape or known.ball.shape
                    env[names[k]] = Tensor(
                        tuple(shape) or (1,),
                        [
                            -sympy.oo if t == "-inf" else sympy.oo if t == "inf" else _exact(t)
                            for t in known.flat
                        ],
                    )
                else:
                    env[names[k]] = evaluate_text(xp, render(known.expr, names), env, where="draft")
            exact = evaluate_text(xp, render(e, names), env, where="draft")
        except (SymtfError, Undecided, ArithmeticError, ValueError, ZeroDivisionError):
            return None
        ball = self._xp
        assert ball is not None
        return Tensor(
            exact.shape,
            [
                ball.neg_inf()
                if v == -sympy.oo
                else -ball.neg_inf()
                if v == sympy.oo
                else ball.const(v)
                for v in exact.data
            ],
        )

    def _lineage(self, keys: Sequence[int], stop: int | None = None) -> list[int]:
        """The known tensors ``keys`` are computed from, each after what it reads (the walk
        does not go past ``stop``)."""
        order: list[int] = []
        seen: set[int] = set()
        todo: list[tuple[int, bool]] = [(k, False) for k in reversed(keys)]
        while todo:
            k, done = todo.pop()
            if done:
                order.append(k)
                continue
            if k in seen:
                continue
            seen.add(k)
            todo.append((k, True))
            expr = self.known[k].expr
            if k != stop and expr is not None:
                todo.extend((j, False) for j in sorted(inputs(expr), reverse=True) if j not in seen)
        return order

    def _derivative_ball(self, e: Call) -> Tensor | None:
        """``grad(y, x)`` of two known tensors: swept back through the steps ``y`` was computed
        by (the code translation's ``loss.backward()`` and ``torch.autograd.grad``)."""
        from symtf.graph.autodiff import sweep_steps

        y, x = e.args
        if not (isinstance(y, Ref) and isinstance(x, Ref)):
            return None
        order = self._lineage([y.key], stop=x.key)  # each step after what it reads
        names = {k: f"k{k}" for k in order}
        steps = [
            (names[k], render(expr, names))
            for k in order
            if k != x.key and (expr := self.known[k].expr) is not None
        ]
        values = {
            names[k]: self.known[k].ball for k in order if k == x.key or self.known[k].expr is None
        }
        try:
            return sweep_steps(
                self._xp, steps, values, names[y.key], names[x.key], kind=e.op, where="draft"
            )
        except (SymtfError, Undecided, ArithmeticError, ValueError, ZeroDivisionError, KeyError):
            return None

    # -- what is not a step --
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

    def _given(self, p: Printing, t: Target, *, rounded: bool, vector: bool = False) -> Outcome:
        """A given tensor from a printing (``rounded``: its entries are known to their digits).

        ``vector``: printed as a one-dimensional array, so the tensor is one too
        (``torch.cat`` of two such prints is one longer vector, not a matrix).

        A rounded printing with an infinite entry gives none (a derivation cannot state
        its rounding): the outcome then has no placement.
        """
        xp = self._xp
        assert xp is not None
        vals = []
        for r in t.printed:
            for c in r:
                if c.value is None:
                    vals.append(xp.neg_inf() if c.is_neg_inf else -xp.neg_inf())
                else:  # as printed: the value the check reads (rounded = true widens it there)
                    vals.append(xp.const(c.value))
        ball = Tensor((len(vals),) if vector else t.shape, vals)
        self._next += 1
        key = 10_000_000 + self._next
        labels = [p.label]
        k = Known(
            key,
            t.values.copy(),
            ball,
            None,
            labels,
            _names(p.label),
            set(),
            p.line,
            p.rows,
            rounded,
            "given",
        )
        if vector:
            k.nd_shape = (len(vals),)
        self.known[key] = k
        return Outcome(p, "given", Placement(key), "given")

    # -- single numbers --
    def _scalar(self, p: Printing, t: Target) -> Outcome:
        """A single number: a repeat of an entry printed shortly before, or a named reduction."""
        text = p.rows[0][0]
        if t.informative == 0 or len(text.lstrip("-−").replace(".", "").lstrip("0")) < 2:
            return self._reduction(p, t) or Outcome(
                p, "unmapped", note="a single number the search does not place"
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
        return self._reduction(p, t) or Outcome(
            p, "unmapped", note="a single number the search does not place"
        )

    def _reduction(self, p: Printing, t: Target) -> Outcome | None:
        """A number the article names as the mean, variance, deviation, largest or sum of the
        row worked just above it (``Its mean is μ = 5/6``, ``each row sums to 1.0``)."""
        words = f"{p.label} {p.context}".lower()
        label = p.label.lower()
        kinds = [
            k for k, ws in _KEYWORDS.items() if any(w in label.split() or w == label for w in ws)
        ]
        if not kinds:
            kinds = [
                k
                for k, ws in _KEYWORDS.items()
                if any(re.search(rf"\b{re.escape(w)}\b", words) for w in ws)
            ][:1]
        if not kinds:
            return None
        context = self._context_row(p)
        if context is None:
            return None
        key, row = context
        every = kinds == ["sum"] and re.search(r"\b(?:each|every|all)\b[^.]*\brows?\b", words)
        for kind in kinds:
            for unbiased in (False, True) if kind in ("var", "std") else (False,):
                params: dict[str, Any] = {"axis": -1, "keepdims": True}
                if kind in ("var", "std"):
                    params["unbiased"] = unbiased
                expr = call(kind, Ref(key), **params)
                v = self._value(expr)
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
        return None

    def _context_row(self, p: Printing) -> tuple[int, int] | None:
        """The row a number on a worked line is computed from: the nearest row printed before it."""
        for q in sorted(self.outcomes.values(), key=lambda o: -o.printing.key):
            if q.printing.key >= p.key or p.line - q.printing.line > 6:
                continue
            pl = q.placement
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
                        rows = base.expr.kw.get("rows")
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


# ----------------------------------------------------------------------------- helpers


#: Lines within which a displayed literal may repeat an entry printed before it.
STANDS_WINDOW = 30


def _literals(d: Display) -> list[str]:
    """The decimal literals of a displayed line, as written (``-0.728`` where a minus sign
    stands right before it: ``1.039 + (-0.728)``)."""
    try:
        parsed = latexmath.parse(d.latex, where="display")
    except ExpressionError:
        return []
    out = []
    for lit in parsed.literals:
        if "." not in lit.text:
            continue
        signed = re.search(rf"(?:^|[(\[{{,=+]|\s)\s*[-−]\s*{re.escape(lit.text)}(?![\d.])", d.latex)
        out.append(f"-{lit.text}" if signed else lit.text)
    return out


def stands_for(
    d: Display, outcomes: list[Outcome], used: dict[tuple[int, int, int], int]
) -> dict[str, tuple[int, int, int]]:
    """Literals of ``d`` that repeat an entry of a printing mapped shortly before (or on its line)."""
    out: dict[str, tuple[int, int, int]] = {}
    near = [
        o
        for o in outcomes
        if o.placement is not None
        and o.status in ("mapped", "covered", "given")
        and (o.printing.size > 1 or o.printing.role == "result")
        and o.printing.key != d.key
        and o.printing.cell == d.cell
        and 0 <= d.line - o.printing.line <= STANDS_WINDOW
    ]
    near.sort(key=lambda o: (o.printing.line != d.line, d.line - o.printing.line, -o.printing.key))
    expr_text = d.latex
    for text in dict.fromkeys(_literals(d)):
        digits = text.lstrip("-").replace(".", "").lstrip("0")
        if len(digits) < 2 and text.count(".") == 1 and len(text.split(".")[1]) < 2:
            continue  # "0.1": too short to tell one printed entry from another
        for o in near:
            pl = o.placement
            assert pl is not None
            hits = [
                (i, j) for i, r in enumerate(o.printing.rows) for j, c in enumerate(r) if c == text
            ]
            if not hits:
                continue
            place = [_at(pl, i, j) for i, j in hits]
            fresh = [x for x in place if used.get(x, 0) == 0]
            chosen = (fresh or place)[0]
            used[chosen] = used.get(chosen, 0) + 1
            sign_text = text
            if f"-{text}" in expr_text.replace(" ", "") and not text.startswith("-"):
                pass  # the key is the literal as written; a minus sign in front stays an operator
            out[sign_text] = chosen
            break
    return out


def _at(pl: Placement, i: int, j: int) -> tuple[int, int, int]:
    if pl.row is not None:
        return (pl.known, pl.row, j)
    if pl.col is not None:
        return (pl.known, i, pl.col)
    if pl.index is not None:
        return (pl.known, *pl.index)
    return (pl.known, i, j)


def _entry(pl: Placement, i: int, j: int) -> Placement:
    if pl.row is not None:
        return Placement(pl.known, index=(pl.row, j))
    if pl.col is not None:
        return Placement(pl.known, index=(i, pl.col))
    if pl.index is not None:
        return pl
    return Placement(pl.known, index=(i, j))


def _subexprs(e: Expr) -> Iterator[Expr]:
    yield e
    if isinstance(e, Call):
        for a in e.args:
            yield from _subexprs(a)


def _params_rank(e: Expr) -> int:
    """Prefer the usual setting: ε = 0, the biased variance, √ of the head width."""
    score = 0
    for sub in _subexprs(e):
        if isinstance(sub, Call):
            kw = sub.kw
            score += EPSILONS.index(kw["eps"]) if kw.get("eps") in EPSILONS else 0
            score += 2 * bool(kw.get("unbiased"))
            score += sub.op in ("gelu_tanh", "silu", "exp", "sigmoid", "tanh")
    return score


def _broadcast(a: tuple[int, int], b: tuple[int, int]) -> tuple[int, int] | None:
    out = []
    for x, y in zip(a, b, strict=True):
        if x == y or y == 1:
            out.append(x)
        elif x == 1:
            out.append(y)
        else:
            return None
    return (out[0], out[1])


def _mid(q: Fraction) -> arb:
    return arb(q.numerator) / q.denominator


def _shape2(shape: tuple[int, ...]) -> tuple[int, int]:
    """The 2-D shape a tensor is matched as: a vector is one row, a scalar one entry."""
    if len(shape) == 2:
        return (shape[0], shape[1])
    if len(shape) == 1:
        return (1, shape[0])
    if not shape:
        return (1, 1)
    return (1, math.prod(shape))


def _exact(text: str) -> sympy.Expr:
    """A literal's exact value (``0.1`` → 1/10)."""
    f = _fraction(text)
    return sympy.Rational(f.numerator, f.denominator)


def _fraction(text: str) -> Fraction:
    from symtf.numbers import parse_exact

    return parse_exact(text, where="literal")


def _mids(t: Tensor) -> np.ndarray:
    vals = []
    for x in t.data:
        if isinstance(x, arb):
            vals.append(float(x.mid()) if x.is_finite() else (-math.inf if x < 0 else math.inf))
        else:
            vals.append(float(x))
    return np.array(vals, dtype=float).reshape(_shape2(tuple(t.shape)))


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


def _certified(x: Any, p: Printed) -> str | None:
    """``full`` if the ball is certified to print as ``p``, ``slip`` if within one unit, else None."""
    if p.value is None:
        if isinstance(x, arb) and not x.is_finite() and ((x < 0) == p.is_neg_inf):
            return "full"
        return None
    if not isinstance(x, arb) or not x.is_finite():
        return None
    try:
        iv = rounding_interval(p)
    except (ValueError, ArithmeticError):
        return None
    lo, hi = compare_ball(x, iv.lo), compare_ball(x, iv.hi)
    if lo is not None and hi is not None and lo >= 0 and hi <= 0:
        return "full"
    u = p.ulp
    below, above = compare_ball(x, p.value - u), compare_ball(x, p.value + u)
    if below is not None and above is not None and below > 0 and above < 0:
        return "slip"
    return None


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


def _distinct_informative(t: Target) -> int:
    """How many different printed values are not 0, ±1 or infinite."""
    v = t.values[np.isfinite(t.values)]
    return len({x for x in v.tolist() if abs(x) not in (0.0, 1.0)})


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
