"""Exercises: which printed numbers become blanks, and each blank's certified answer.

A blank is one entry of one step (``l0.h0.pattern[1, 0]``). Every place the
derivation prints that entry is blanked together, so no other table gives the
answer away; a displayed line of arithmetic that shows one of the blanked
numbers is left off the sheet for the same reason.

The answer to a blank is the correct rounding of the exact value at the
printed precision (the article's own printed number may be off: the key says
so), with the certified decimal, the closed form when it is short, and the
working of :mod:`symtf.teach.worked`.
"""

from __future__ import annotations

import fnmatch
import random
import re
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any, cast

import sympy

from symtf.checking.evaluation import Evaluator, classify, correct_rounding, selection, step_prints
from symtf.errors import SymtfError
from symtf.numbers import Printed, format_fixed
from symtf.spec import Claim, Derivation
from symtf.teach.reveal import Hiding, Relations, hide
from symtf.teach.worked import Worked, worked
from symtf.trace import Trace

#: Steps that are settings or token ids, never blanked.
NOT_BLANKABLE = ("tokens", "d_head", "next_token")
#: Longest closed form shown in a key (characters of SymPy's text).
MAX_CLOSED_CHARS = 120


class ExerciseError(SymtfError, ValueError):
    """The exercise cannot be built as asked (no such step, too many blanks)."""


@dataclass(frozen=True)
class Blank:
    """One blanked entry.

    Attributes:
        id: ``?1``, ``?2``, … in the order of the computation.
        step: The step (``l0.h0.pattern``).
        index: The entry ``(i, j)``.
        label: The label of the first claim that prints it.
        decimals: Decimal places the answer is asked to (the most any print uses).
        rounding: The rounding rule of that claim.
        printed: What the derivation prints there (first print).
        claims: Labels of every claim that prints this entry.
        cell: Where ``label``'s printed table shows it: ``(row, column, rows, columns)``.
    """

    id: str
    step: str
    index: tuple[int, int]
    label: str
    decimals: int
    rounding: str
    printed: str
    claims: tuple[str, ...]
    cell: tuple[int, int, int, int] = (0, 0, 1, 1)


@dataclass(frozen=True)
class KeyEntry:
    """A blank's answer.

    Attributes:
        blank: The blank.
        answer: The correct rounding at ``blank.decimals`` places (``None`` if undecidable).
        exact: Certified decimal of the exact value (≥ 15 significant digits).
        closed: Exact closed form as SymPy text, when short (else ``None``).
        closed_tex: The same in LaTeX.
        printed_verdict: The verdict on what the derivation printed there.
        worked: Formula and numbers substituted.
        title: What the step is (``attention weights, head 1``).
    """

    blank: Blank
    answer: str | None
    exact: str | None
    closed: str | None
    closed_tex: str | None
    printed_verdict: str
    worked: Worked
    title: str


def printed_entries(
    d: Derivation, trace: Trace
) -> dict[tuple[str, int, int], list[tuple[Claim, Printed]]]:
    """Every numeric printed entry of a step claim, by ``(step, i, j)``, in trace order.

    Masked ``-inf`` entries, exact fractions (``5/6``), reduced claims and words are
    not entries a student fills in, and are left out; so are entries of 3-D and 4-D
    steps (``at = [b, h]``), whose worked lines the sheets do not lay out yet.
    """
    out: dict[tuple[str, int, int], list[tuple[Claim, Printed]]] = {}
    for c, pairs in step_prints(d.claims, trace):
        for index, p in pairs:
            if p.is_neg_inf or p.is_fraction or len(index) != 2:
                continue
            i, j = index
            # step_prints yields only claims of a step
            out.setdefault((cast(str, c.step), i, j), []).append((c, p))
    order = {name: k for k, name in enumerate(trace)}
    return dict(sorted(out.items(), key=lambda kv: (order[kv[0][0]], kv[0][1], kv[0][2])))


def _patterns(text: str) -> list[str]:
    pats = [p.strip() for p in text.split(",") if p.strip()]
    if not pats:
        raise ExerciseError(
            "--blank-steps: expected step names or labels (globs allowed), found none"
        )
    return pats


def choose(
    d: Derivation,
    trace: Trace,
    *,
    count: int | None = None,
    steps: str | None = None,
    seed: int = 0,
) -> list[Blank]:
    """Choose the blanks.

    Args:
        d: The derivation.
        trace: Its exact trace.
        count: Blank this many computed entries, chosen at random (seeded).
        steps: Comma-separated globs over step names and claim labels
            (``l0.h0.*``, ``A_1``): blank every entry they print.
        seed: Seed of the random choice.

    Raises:
        ExerciseError: When nothing matches, or more blanks are asked than entries exist.
    """
    entries = printed_entries(d, trace)
    rel = relations(d, trace)

    def computed(k: tuple[str, int, int]) -> bool:
        # Given numbers (embeddings, positions, settings, and copies of them) are what
        # students start from: only entries something computes can be blanks.
        return k[0] not in NOT_BLANKABLE and not rel.is_given_entry(k)

    if steps is not None:
        pats = _patterns(steps)
        matched = [
            k
            for k, occ in entries.items()
            if k[0] not in NOT_BLANKABLE
            and any(
                fnmatch.fnmatchcase(k[0], p) or any(fnmatch.fnmatchcase(c.label, p) for c, _ in occ)
                for p in pats
            )
        ]
        if not matched:
            known = ", ".join(dict.fromkeys(k[0] for k in entries))
            raise ExerciseError(
                f"{d.path}: --blank-steps {steps!r} matches no printed entry (printed steps: {known})"
            )
        keys = [k for k in matched if computed(k)]
        if not keys:
            raise ExerciseError(
                f"{d.path}: --blank-steps {steps!r} matches only given numbers "
                "(the file's weights, embeddings or settings, or copies of them): nothing to work out"
            )
        keys = _one_per_class(rel, keys, None)
    else:
        n = 8 if count is None else count
        if n < 1:
            raise ExerciseError(f"--blank: expected at least 1, found {n}")
        pool = [k for k in entries if computed(k)]
        rng = random.Random(seed)
        order = rng.sample(pool, len(pool))
        chosen = _one_per_class(rel, order, list(entries), limit=n)
        if len(chosen) < n:
            raise ExerciseError(
                f"{d.path}: --blank {n}: only {len(chosen)} computed printed entries can be blanked"
                + (
                    " (entries of 3-D and 4-D steps, printed with at = [...], cannot be blanked yet)"
                    if any(c.at is not None for c in d.claims)
                    else ""
                )
            )
        keys = [k for k in entries if k in set(chosen)]
    blanks = []
    for n_, k in enumerate(keys, start=1):
        occ = entries[k]
        c0, p0 = occ[0]
        cell = (0, 0, 1, 1)
        for _, pairs in step_prints([c0], trace):
            at = [ij for ij, _ in pairs].index((k[1], k[2]))
            rows, cols = len(c0.printed), len(c0.printed[0])
            if len(pairs) == rows * cols:
                cell = (at // cols, at % cols, rows, cols)
            else:  # a one-row table printing a column of the step
                cell = (0, at, 1, len(pairs))
        blanks.append(
            Blank(
                blank_id(n_),
                k[0],
                (k[1], k[2]),
                c0.label,
                max(p.decimals for _, p in occ),
                "half-up" if c0.rounding == "any" else c0.rounding,
                p0.text,
                tuple(dict.fromkeys(c.label for c, _ in occ)),
                cell,
            )
        )
    return blanks


def blank_id(n: int) -> str:
    """The name of the ``n``-th blank (``?1``): a box no weight or bias is named like."""
    return f"?{n}"


def _one_per_class(
    rel: Relations,
    keys: list[tuple[str, int, int]],
    printed: list[tuple[str, int, int]] | None,
    limit: int | None = None,
) -> list[tuple[str, int, int]]:
    """One blank per copy class among ``keys`` (the first), up to ``limit``.

    With ``printed``, a class (a head's entry, its place in the concatenation, an
    identity projection of it) is asked at its first printed entry in the order of the
    computation, where it is computed rather than copied.
    """
    out: list[tuple[str, int, int]] = []
    taken: set[tuple[str, int, int]] = set()
    at = {k: n for n, k in enumerate(printed or ())}
    for k in keys:
        if limit is not None and len(out) >= limit:
            break
        if k in taken:
            continue
        cls = rel.copies_of(k)
        taken |= cls
        out.append(k if not at else min((x for x in cls if x in at), key=at.__getitem__, default=k))
    return out


def _closed(trace: Trace, e: sympy.Expr) -> tuple[str | None, str | None]:
    if e.is_Rational:
        q = int(e.q)
        while q % 2 == 0:
            q //= 2
        while q % 5 == 0:
            q //= 5
        if q == 1:
            return None, None  # a terminating decimal: the decimal says it all
        return sympy.sstr(e), sympy.latex(e)
    backend = trace.backend
    closed = backend.closed_form(e, 200) if hasattr(backend, "closed_form") else e
    if closed is None:
        return None, None
    text = sympy.sstr(closed)
    if len(text) > MAX_CLOSED_CHARS:
        return None, None
    return text, sympy.latex(closed)


def key(d: Derivation, ev: Evaluator, blanks: list[Blank]) -> list[KeyEntry]:
    """The certified answer and working of every blank."""
    trace = ev.exact_trace()
    labels = step_labels(d)
    out = []
    for b in blanks:
        q = ev.entry(b.step, *b.index)
        r = correct_rounding(q, b.decimals, b.rounding)
        answer = None if r is None else format_fixed(r, b.decimals)
        e, _ = q.exact()
        closed, closed_tex = _closed(trace, e)
        p = _printed(d, trace, b)
        verdict = classify(q, p, b.rounding)[0]
        out.append(
            KeyEntry(
                b,
                answer,
                q.decimal(),
                closed,
                closed_tex,
                verdict,
                worked(trace, d, b.step, *b.index, names=labels),
                trace[b.step].title,
            )
        )
    return out


def step_labels(d: Derivation) -> dict[str, str]:
    """Each step's label: the first claim that prints all of it (not a row or an entry)."""
    out: dict[str, str] = {}
    for c in d.claims:
        if c.step is None or c.expression is not None or c.reduce is not None or c.word:
            continue
        if c.row is None and c.col is None and c.index is None and c.at is None:
            out.setdefault(c.step, c.label)
    return out


def _printed(d: Derivation, trace: Trace, b: Blank) -> Printed:
    for c, p in printed_entries(d, trace).get((b.step, *b.index), []):
        if c.label == b.label:
            return p
    raise AssertionError("a blank without its printed entry")


_NUMBER = re.compile(r"[-−]?\d+(?:\.\d+)?")

#: Relations of the traces seen last (the graph is rebuilt only for a new trace).
_RELATIONS: dict[int, tuple[Trace, Relations]] = {}


def relations(d: Derivation, trace: Trace) -> Relations:
    """The relations between ``trace``'s entries, read from ``d``'s step graph (cached)."""
    hit = _RELATIONS.get(id(trace))
    if hit is not None and hit[0] is trace:
        return hit[1]
    from symtf.graph.pipeline import build

    rel = Relations(build(d), trace)
    if len(_RELATIONS) >= 4:
        _RELATIONS.pop(next(iter(_RELATIONS)))
    _RELATIONS[id(trace)] = (trace, rel)
    return rel


def hiding(
    d: Derivation,
    trace: Trace,
    blanks: list[tuple[str, str, tuple[int, int]]],
    shown: Iterable[tuple[str, int, int]] = (),
) -> Hiding:
    """What the sheet leaves out for these blanks (see :mod:`symtf.teach.reveal`).

    Args:
        blanks: ``(id, step, (i, j))`` of each blank.
        shown: Entries the sheet shows besides the printed ones (a grid worksheet gives
            the entries of its steps the worked example does not print).
    """
    printed = [*printed_entries(d, trace), *shown]
    return hide(relations(d, trace), [(bid, (s, *ij)) for bid, s, ij in blanks], printed)


def covered(
    d: Derivation,
    trace: Trace,
    blanks: list[tuple[str, str, tuple[int, int]]],
    shown: Iterable[tuple[str, int, int]] = (),
) -> dict[tuple[str, int, int], str]:
    """Every entry the sheet leaves out: blank boxes by their id, hidden entries by ``""``.

    Args:
        blanks: ``(id, step, (i, j))`` of each blank.
        shown: Entries the sheet shows besides the printed ones (see :func:`hiding`).

    Returns:
        ``(step, i, j)`` → blank id: each blank and its copies (a concatenation repeats each
        head, ``S + M`` keeps ``S``, either way), and ``""`` for each entry that would
        give a blank away in one step (a ReLU output, a softmax row's last entry).
    """
    return hiding(d, trace, blanks, shown).covered()


def hidden_expressions(d: Derivation, blanks: list[Blank], trace: Trace) -> set[str]:
    """Labels of displayed-arithmetic claims that show a blanked number (left off the sheet)."""
    texts: set[str] = set()
    entries = printed_entries(d, trace)
    cov = covered(d, trace, [(b.id, b.step, b.index) for b in blanks])
    for k in cov:
        for _, p in entries.get(k, []):
            if p.value is not None and p.value.denominator != 1:  # 0 and 1 are everywhere
                texts.add(p.text.lstrip("+"))
    refs = {f"{s}[{i}, {j}]" for (s, i, j) in cov}
    out = set()
    for c in d.claims:
        if c.expression is None:
            continue
        shown = {t.replace("−", "-") for t in _NUMBER.findall(c.expression)}
        shown |= {p.text for row in c.printed for p in row}
        if shown & texts or set(c.stands_for.values()) & refs:
            out.add(c.label)
    return out


def blanked_cells(
    blanks: list[Blank], d: Derivation, trace: Trace
) -> dict[tuple[str, int, int], str]:
    """(claim label, row, col of its printed table) -> blank id (``""``: hidden, no blank)."""
    by_entry = covered(d, trace, [(b.id, b.step, b.index) for b in blanks])
    out: dict[tuple[str, int, int], str] = {}
    for c, pairs in step_prints(d.claims, trace):
        cols = len(c.printed[0])
        for k, (index, _) in enumerate(pairs):
            if len(index) != 2:  # a 3-D/4-D step has no blanks (see printed_entries)
                continue
            i, j = index
            bid = by_entry.get((cast(str, c.step), i, j))  # a claim of a step
            if bid is not None:
                out[(c.label, k // cols, k % cols)] = bid
    return out


def hidden_reductions(d: Derivation, blanks: list[Blank], trace: Trace) -> set[str]:
    """Labels of claims left off whole: a reduction (``max``, ``sum`` of a step) over an
    entry left out, and a table of a 3-D/4-D step read from a step that holds one."""
    blanked = set(covered(d, trace, [(b.id, b.step, b.index) for b in blanks]))
    steps = {s for s, _, _ in blanked}
    rel = relations(d, trace)
    out = set()
    for c in d.claims:
        if c.step is None or c.step not in trace:
            continue
        shape = trace.shape(c.step)
        if shape is None:
            continue
        if len(shape) != 2 or c.at is not None:
            if c.step in steps or any(a in steps for a in rel.args(c.step)):
                out.add(c.label)
            continue
        if c.reduce is None:
            continue
        if any((c.step, i, j) in blanked for row in selection(c, shape) for (i, j) in row):
            out.add(c.label)
    return out


def as_toml_key(
    entries: list[KeyEntry], derivation_file: str, digest: str, seed: int, fresh: bool
) -> str:
    """The machine-readable answer key that ``symtf grade`` reads."""
    from symtf.teach.tomlout import dumps

    data: dict[str, Any] = {
        "symtf_key": 1,
        "derivation": derivation_file,
        "sha256": digest,
        "seed": seed,
        "fresh": fresh,
        "blanks": [
            {
                "id": k.blank.id,
                "label": k.blank.label,
                "step": k.blank.step,
                "index": list(k.blank.index),
                "decimals": k.blank.decimals,
                "rounding": k.blank.rounding,
                "answer": k.answer or "",
                "exact": k.exact or "",
                "printed": k.blank.printed,
                "printed_verdict": k.printed_verdict,
            }
            for k in entries
        ],
    }
    return (
        "# Answer key written by symtf exercise. symtf grade recomputes every verdict from\n"
        "# the derivation named below; the answers here are for people to read.\n" + dumps(data)
    )


__all__ = ["Blank", "ExerciseError", "KeyEntry", "choose", "key", "printed_entries"]
