"""The search's state: the tensors known so far, and their values, certified and in float64.

The search is built in layers, each a subclass of the one below it and calling only
down: this state (:class:`SearchState`), the candidate steps over it
(:mod:`~symtf.draft.infer.candidates`), the evidence that takes one
(:mod:`~symtf.draft.infer.evidence`), the steps a notebook's code states
(:mod:`~symtf.draft.infer.code`) and the article-order driver
(:mod:`~symtf.draft.infer.search`).

A step's certified values are computed through the step language in balls
(:func:`symtf.graph.evaluate.evaluate_text`); a step balls cannot decide is evaluated
exactly from the code's own literals, as the check escalates, and a derivative is swept
back through the steps it reads. Its float64 values, for the pre-filter only, come from
:func:`symtf.draft.infer.prefilter.fill`.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from fractions import Fraction
from typing import Any

import numpy as np
import sympy

from symtf.backends import BallBackend
from symtf.draft.article import Article, Printing, ident
from symtf.draft.infer.prefilter import MISSING, Missing, fill
from symtf.draft.infer.target import (
    Known,
    Outcome,
    Placement,
    Target,
    _Candidate,
    _mids,
    _names,
    _product_alias,
)
from symtf.draft.templates import Call, Expr, Ref, inputs, render
from symtf.errors import SymtfError, Undecided
from symtf.graph.evaluate import evaluate_text
from symtf.tensor import Tensor

__all__ = ["SearchState"]


class SearchState:
    """The tensors a search knows and their values (see the module docstring)."""

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
        self._pattern_memo: dict[Any, list[Expr]] = {}
        #: Depth-2 steps of a known tensor and a product (``k @ (a @ b)``), by their parts.
        self._known_made_memo: dict[tuple[str, int, Expr], Call] = {}
        #: A tier's candidate list, by the tensors (and their labels) it was built over.
        self._candidate_lists_memo: dict[Any, list[Expr]] = {}
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
        #: Steps whose rows the article works out a line each (symtf.draft.infer.weighted):
        #: known key → the run of those lines' results; and those displayed lines (by key),
        #: whose results the step's claims check.
        self.worked_rows: dict[int, Printing] = {}
        self.worked_lines: set[int] = set()
        #: Printed scores of sequences a search function of the code keeps (by printing
        #: key): the expression each is (symtf.draft.infer.scored).
        self.scored: dict[int, Any] = {}
        #: Code: variable (step name) → known key; steps waiting for an input; notes.
        self.var_keys: dict[str, int] = {}
        self.pending: list[Any] = []
        self.notes: list[Any] = []
        #: Printed values of the code (they are not among the article's printings).
        self.extra: list[Printing] = []
        #: Computed tensors (by key) the code then writes by hand, rounded: the literal's
        #: texts, where it is written, and the given tensor of the literal as written.
        self.written: dict[int, tuple[tuple[str, ...], str, int]] = {}
        self._shown_key = 0
        self.float32 = False
        self._heading_lines: tuple[int, ...] | None = None
        #: The slopes the article states (see ``Candidates._slopes``), read once.
        self._slope_memo: tuple[str, ...] | None = None
        #: Per printing: candidates taken on their evidence when nothing reproduces it all.
        self._evidential: dict[int, list[_Candidate]] = {}
        for eq in article.equations:
            for name in _names(eq.lhs):
                self._equations.setdefault(name, []).append(
                    {m for n in eq.names for m in _names(n)}
                )

    def _shape_of(self, name: str) -> tuple[int, ...] | None:
        key = self.var_keys.get(name)
        return tuple(self.known[key].ball.shape) if key is not None else None

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

    def _lineage_keys_of(self, e: Expr) -> set[int]:
        """Every known tensor a candidate reads, directly or through the steps it reads."""
        out = set(inputs(e))
        for k in inputs(e):
            out |= self._lineage_keys(k)
        return out

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

    def _given(
        self,
        p: Printing,
        t: Target,
        *,
        rounded: bool,
        vector: bool = False,
        float32: bool = False,
    ) -> Outcome:
        """A given tensor from a printing (``rounded``: its entries are known to their digits).

        ``vector``: printed as a one-dimensional array, so the tensor is one too
        (``torch.cat`` of two such prints is one longer vector, not a matrix).

        ``float32``: numpy's print of float32 values; each entry stands for the float32
        value it pins (:func:`~symtf.backends.format_print.numpy_printed`), and the
        tensor is rounded only where an entry leaves more than one float32 possible.

        A rounded printing with an infinite entry gives none (a derivation cannot state
        its rounding): the outcome then has no placement.
        """
        xp = self._xp
        assert xp is not None
        pinned = _float32_values(p.rows) if float32 else None
        if pinned is not None:
            rounded = any(w for _, w in pinned)
        vals = []
        for r in t.printed:
            for c in r:
                if c.value is None:
                    vals.append(xp.neg_inf() if c.is_neg_inf else -xp.neg_inf())
                elif pinned is not None:  # the float32 value the print pins
                    vals.append(xp.const(pinned[len(vals)][0]))
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
        k.float32_print = pinned is not None
        if vector:
            k.nd_shape = (len(vals),)
        self.known[key] = k
        return Outcome(p, "given", Placement(key), "given")

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

    def _value(self, e: Expr) -> np.ndarray | None:
        """A candidate's float64 pre-filter value (None: it has none)."""
        if isinstance(e, Ref):
            return self.known[e.key].value
        memo = self._memo
        if e not in memo:
            self._fill([e])
        return memo.get(e)

    def _fill(self, exprs: Iterable[Expr]) -> None:
        """Pre-filter values for the candidates, computed together (:func:`~symtf.draft.infer.prefilter.fill`)."""
        borrow = None
        if self._replaying is not None:
            main, changed = self._exact_memo, self._replaying

            def borrow(e: Call) -> np.ndarray | Missing | None:
                if e in main and not inputs(e) & changed:
                    return main[e]  # reads no value the replay changed
                return MISSING

        known = self.known
        fill(exprs, lambda k: known[k].value, self._memo, borrow)

    def _rounded_names(self, key: int) -> str:
        """The rounded given tensors a step is computed from, by name."""
        names = [
            self.display_name(k) for k in sorted(self._lineage_keys(key)) if self.known[k].rounded
        ]
        return ", ".join(names[:3]) + (" …" if len(names) > 3 else "")

    def _rounded_lineage(self, key: int) -> bool:
        """Whether a known tensor is computed from an input known only to its printed digits."""
        return any(self.known[k].rounded for k in self._lineage_keys(key))

    def _float32_lineage(self, key: int) -> bool:
        """Whether every rounded input a step is computed from is numpy's print of float32
        values (each entry within 5e-9 of its value, not half a unit of its last digit)."""
        rounded = [self.known[k] for k in self._lineage_keys(key) if self.known[k].rounded]
        return bool(rounded) and all(k.float32_print for k in rounded)

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

    def _evaluate_lineage(
        self, order: Sequence[int], leaf: Callable[[int, list[Any]], list[Any] | None]
    ) -> dict[int, Tensor] | None:
        """The known tensors ``order`` (a :meth:`_lineage`) evaluated in balls, each tensor
        given by a print taking the entries ``leaf(key, entries)`` makes of its own.

        Widening a rounded print's entries to their rounding intervals, or moving them to a
        point of those intervals, then shows what the steps computed from them can be.
        None when ``leaf`` refuses a tensor, a step is a derivative (swept, not evaluated
        here), or the balls cannot evaluate a step.
        """
        xp = self._xp
        assert xp is not None
        names = {k: f"k{k}" for k in order}
        env: dict[str, Tensor] = {}
        try:
            for k in order:
                known = self.known[k]
                if known.expr is None:
                    data = leaf(k, list(known.ball.data))
                    if data is None:
                        return None
                    env[names[k]] = Tensor(known.ball.shape, data)
                elif isinstance(known.expr, Call) and known.expr.op in ("grad", "jacobian"):
                    return None
                else:
                    env[names[k]] = evaluate_text(xp, render(known.expr, names), env, where="draft")
        except (SymtfError, Undecided, ArithmeticError, ValueError, IndexError, KeyError):
            return None
        return {k: env[names[k]] for k in order}

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


def _exact(text: str) -> sympy.Expr:
    """A literal's exact value (``0.1`` → 1/10)."""
    f = _fraction(text)
    return sympy.Rational(f.numerator, f.denominator)


def _fraction(text: str) -> Fraction:
    from symtf.numbers import parse_exact

    return parse_exact(text, where="literal")


def _float32_values(rows: tuple[tuple[str, ...], ...]) -> list[tuple[Fraction, Fraction]] | None:
    """Each printed entry's float32 value (centre, half-width) as numpy's print pins it
    (``None``: an entry numpy prints for no float32, or an infinite one)."""
    from symtf.backends.format_print import numpy_printed
    from symtf.backends.formats import FORMATS

    out = []
    for r in rows:
        for text in r:
            found = numpy_printed(text.replace("−", "-"), FORMATS["float32"])
            if found is None:
                return None
            out.append(found)
    return out
