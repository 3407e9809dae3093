"""The steps an article's equations state for its printings.

A layer of the search (:mod:`~symtf.draft.infer.search` is the one above): for a printing,
the equations that name it (its label, its section's constants, the equation on its
own line), parsed (:mod:`~symtf.draft.infer.formula`) and resolved over the known
tensors (:mod:`~symtf.draft.infer.stated`); a stated step is taken when most of its
entries agree, or whatever they say when no found step reproduces every entry.
"""

from __future__ import annotations

import re
from typing import Any

import numpy as np

from symtf.draft.article import Article, Printing
from symtf.draft.infer.formula import parse
from symtf.draft.infer.gradient import ProbabilityRows
from symtf.draft.infer.literals import (
    _column_for_row,
)
from symtf.draft.infer.stated import (
    Resolver,
    formula_names,
    label_equation,
    label_words,
    meanings,
)
from symtf.draft.infer.target import (
    Outcome,
    Placement,
    Target,
    _Candidate,
    _certified,
    _mids,
    _names,
)
from symtf.draft.templates import Call, Expr, Ref, call, inputs, size
from symtf.tensor import Tensor

__all__ = ["StatedSteps"]


class StatedSteps(ProbabilityRows):
    """The steps the article's equations state (see the module docstring)."""

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
        if self._replaying is not None or len(t.shape) != 2 or p.parts:
            return None  # a run stacks several printings: an equation names one of them
        label_eq = label_equation(p, self._resolver(p, None))
        for eq in [*self._statements_for(p), *([label_eq] if label_eq else [])]:
            node = parse(eq.latex) if eq.latex else None
            if node is None:
                continue
            exprs = meanings(node, self._resolver(p, eq))
            scored: list[tuple[tuple[int, int, int, int], _Candidate, Tensor]] = []
            for order, e in enumerate(exprs):
                if inputs(e) and max(inputs(e)) >= 10_000_000 and self._after(e, p):
                    continue
                ball = self._ball(e)
                if ball is not None and _column_for_row(tuple(ball.shape), t.shape):
                    # z = H·W₂ ⇒ z = [0.76, 0.76, 0.76]: a column written out as a list
                    e = call("T", e)
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
            if (
                eq is label_eq
                and 2 * (best[1].full + best[1].slip) <= t.values.size
                and not _products_of_known(best[1].expr)
            ):
                continue  # a label read as a formula states its step only where most agree
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
        constants: set[str] | None = None  # the section's constants, read once if needed
        for eq in self.article.equations:
            if not eq.latex or eq.line > p.line:
                continue
            if p.cell is not None and eq.cell is not None and eq.cell > p.cell:
                continue
            if not eq.lhs:
                if self._applied_to(eq, p):
                    found.append((True, True, p.line - eq.line, eq))
                continue
            lhs = re.sub(r"_\{?(?:[ijklmnt]|[ijkl]{2}|[ijkl],[ijkl])\}?$", "", eq.lhs)
            lhs_names = _names(lhs) | {lhs}
            prose = not re.search(r"[-+*/=·×@^]", p.label.replace("_{", "").replace("^{(", ""))
            # ŷ = σ(z) = [0.681, …]: the equation its own line writes, whatever its label
            own = (
                eq.line == p.line
                and eq.cell == p.cell
                and bool(eq.lhs_latex)
                and p.context.replace(" ", "").startswith(eq.lhs_latex.replace(" ", "") + "=")
            )
            if not (own or lhs_names & names or (prose and lhs.lower() in words)):
                continue
            same = not self._heading_between(eq.line, p.line)
            # outside the printing's section, an equation in a constant the section sets
            # ("Low Temperature (T = 0.5)" above e^{z_i/T}) is read before one without it
            if not same and constants is None:
                constants = self._section_constants(p)
            unset = not same and not ((constants or set()) & formula_names(eq.latex))
            found.append((not same, unset, p.line - eq.line, eq))
        found.sort(key=lambda x: (x[0], x[1], x[2]))
        return [eq for *_, eq in found]

    def _applied_to(self, eq: Any, p: Printing) -> bool:
        r"""Whether a function the article applies with no name for its result
        (``Apply: \text{ReLU}(O \cdot W_1 + b_1)``) is the step of the printing below it:
        the next one printed in its section, with no other equation or printing between,
        and words between them that say it is the result (``Assuming output: H = …``).
        Tried after every equation that names the printing."""
        if eq.line >= p.line or (eq.cell is not None and eq.cell != p.cell):
            return False
        if self._heading_between(eq.line, p.line):
            return False
        between = any(eq.line < q.line < p.line for q in self.article.printings)
        other = any(
            e is not eq and eq.line < e.line < p.line and e.cell == p.cell
            for e in self.article.equations
        )
        if between or other:
            return False
        lines = self.article.text.splitlines()[eq.line : p.line]
        return bool(_RESULT_WORDS.search(" ".join(lines)))

    def _section_constants(self, p: Printing) -> set[str]:
        """The names of the numbers the article sets in a printing's section, before it."""
        return {
            n
            for q in self.article.printings
            if q.size == 1
            and not q.role
            and q.line <= p.line
            and q.key != p.key
            and not self._heading_between(q.line, p.line)
            for n in _names(q.label) | {q.label.strip()}
        }

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
            if not hits and re.fullmatch(r"[A-Z]", name):
                hits = self._by_initial(name, p)
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

    def _by_initial(self, letter: str, p: Printing) -> list[Any]:
        """``O`` in ``\\text{ReLU}(O \\cdot W_1 + b_1)``, a letter no tensor is named, is the
        result the article computed above and named by a word with that initial (the
        ``Final Output`` of attention): the one such step before the printing, else none."""
        hits = [
            k
            for k in self.known.values()
            if k.expr is not None
            and (not k.line or k.line <= p.line)
            and any(_head_initial(label) == letter for label in k.labels)
        ]
        return hits if len(hits) == 1 else []

    def _accept_stated(self, p: Printing, c: _Candidate, ball: Tensor, eq: Any) -> Outcome:
        n = t_size = c.value.size
        agree = c.full + c.slip
        where = f"line {eq.line}"
        note = f"the step the article states at {where} ({eq.lhs} = {eq.text})"
        if not eq.lhs:  # a function applied with no name for its result
            note = f"the step the article applies at {where} ({eq.text})"
        elif eq.lhs == eq.text == eq.latex:  # a label written as a formula
            note = f"the step the article writes as its label at {where} ({eq.lhs})"
        if agree == t_size and not c.slip:
            note += f": certified values reproduce the {n} printed entries"
        else:
            note += f": certified values reproduce {c.full} of the {n} printed entries"
            if c.slip:
                note += f", {c.slip} more within one unit"
        same = None
        if eq.lhs == eq.text == eq.latex:  # the label printed again: the step it named before
            same = next((k for k in self.known.values() if k.expr == c.expr), None)
        if same is not None:
            return Outcome(p, "mapped", Placement(same.key), note)
        new = self._add(c.expr, ball, p, note)
        lhs = re.sub(r"_\{?(?:[ijklmnt]|[ijkl]{2})\}?$", "", eq.lhs)
        new.aliases |= _names(lhs)
        return Outcome(p, "mapped", Placement(new.key), note)


#: Words between an applied function and a printing that say the printing is its result.
_RESULT_WORDS = re.compile(r"\b(?:outputs?|results?|gives?|yields?|we get|returns?)\b", re.I)

#: Words that say what kind of array a label shows, not what it is (``Score Matrix``).
_KIND_WORDS = {"matrix", "vector", "tensor", "value", "values", "result", "results", "table",
               "row", "rows", "column", "columns", "array", "entries"}  # fmt: skip


def _products_of_known(e: Expr) -> bool:
    """Whether a step is known tensors, transposed or multiplied (``QKᵀ``, ``XW_Q``, ``AV``):
    a label that writes one names every operand, with nothing left to read a scale into."""
    if isinstance(e, Ref):
        return True
    return (
        isinstance(e, Call)
        and e.op in ("matmul", "T")
        and all(_products_of_known(a) for a in e.args)
    )


def _head_initial(label: str) -> str | None:
    """The capital initial of a label's last word (``Final Output:`` → ``O``;
    ``AttentionOutput`` → ``O``), None for a label of maths or of a word for an array."""
    text = re.sub(r"\$[^$]*\$|\([^()]*\)", " ", label)
    words: list[str] = re.findall(r"[A-Z]?[a-z]+|[A-Z]+(?![a-z])", text)
    if not words or words[-1].lower() in _KIND_WORDS or len(words[-1]) < 3:
        return None
    return words[-1][0].upper()


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
