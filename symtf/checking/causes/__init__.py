"""Causes beyond replay: a reader's slips, an input used transposed, inputs known only to their
printed digits, and which printed inputs a convention would contradict.

:mod:`symtf.checking.diagnose` asks, for the slips and wrong numbers that replay from
the article's own numbers does not reproduce:

- :func:`table_causes` and :func:`entry_causes`: the reader's slips of
  :mod:`symtf.checking.slips` on a step's printed table (truncated throughout, swapped
  rows or columns, a transposed table) and on each entry (a flipped sign, a shifted
  decimal point, swapped digits, a neighbour's value, truncated digits);
  :func:`line_slip` on a displayed line's values;
- :func:`transposed_operand`: a user step whose ``@`` has one operand transposed (or
  its transpose dropped) reproduces the claim;
- :func:`rounded_inputs_cause`: the entries are possible once the inputs written with a
  decimal point stand for any value within half a unit of their last digit (naming the
  fewest inputs that do it);
- :func:`contradicted_inputs`: the printed entries of a step's inputs that a convention
  would make wrong (a convention is then offered only for this step, saying so).

Each returns a cause only when it reproduces the printed values and contradicts none of
the other printed numbers of the step and of its inputs.

This module holds the causes of a step's table, an operand transposed and inputs rounded;
a cause and what every cause is tried against is :mod:`~symtf.checking.causes.found`, a
displayed line's slips :mod:`~symtf.checking.causes.lines`, and the replay from printed
tables with the inputs a convention contradicts :mod:`~symtf.checking.causes.replay`.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Iterable, Mapping
from fractions import Fraction
from typing import Any, cast

import sympy

from symtf.checking import slips
from symtf.checking.causes.found import GOOD, Cause, Index, claim_printed, exact_balls
from symtf.checking.causes.lines import line_inputs, line_slip
from symtf.checking.causes.replay import (
    contradicted_inputs,
    entries_text,
    replay_derivation,
    replay_trace,
    upstream_printed,
)
from symtf.checking.evaluation import Evaluator, classify
from symtf.checking.report import Check, ClaimResult
from symtf.errors import SymtfError
from symtf.numbers import Printed
from symtf.spec import Derivation
from symtf.trace import Trace

# ----------------------------------------------------------------------------- the step's table


def _index(c: Check) -> tuple[int, ...]:
    """An off check's index (:func:`_table` keeps only checks of an entry)."""
    return tuple(cast(tuple[int, ...], c.index))


def table_causes(
    result: ClaimResult, checks: Iterable[Check], ev: Evaluator, trace: Trace
) -> list[Cause]:
    """Slips of a claim's whole table: truncated throughout, swapped rows or columns, transposed."""
    table = _table(result, checks, ev, trace)
    if table is None:
        return []
    _, shape, checks, exact, own, texts = table
    # truncated throughout: every off entry truncates to its print and none was rounded up
    cut = [
        slips.truncation(own[_index(c)], exact(_index(c)), texts.get(_index(c)))
        for c in checks
        if _index(c) in own
    ]
    if cut and all(cut) and len(cut) == len(checks) and slips.truncated_throughout(own, exact):
        return [
            Cause("truncation", (_index(c),), t.text)
            for c, t in zip(checks, cut, strict=True)
            if t is not None
        ]
    slip = slips.table_slip(own, exact, shape, [_index(c) for c in checks])
    if slip is not None:
        return [Cause(slip.cause, slip.entries, slip.text, extra={"slip": slip.detail})]
    return []


def entry_causes(
    result: ClaimResult,
    checks: Iterable[Check],
    ev: Evaluator,
    trace: Trace,
    printed: Mapping[str, Mapping[tuple[int, ...], Printed]],
) -> list[Cause]:
    """The reader's slips of single entries that reproduce off entries of one step claim.

    Args:
        result: The claim and all its checks.
        checks: Its off checks still without a cause.
        ev: The derivation's evaluator.
        trace: The exact trace (shapes).
        printed: Every printed entry of every step (:func:`symtf.checking.diagnose.printed_values`).
    """
    table = _table(result, checks, ev, trace)
    if table is None:
        return []
    step, shape, checks, exact, own, texts = table
    everything = {tuple(k): v for k, v in printed.get(step, {}).items()}
    everything.update(own)
    total = Fraction(1) if _softmax_rows(trace[step], shape) else None
    out = []
    for c in checks:
        idx = _index(c)
        p = own.get(idx)
        if p is None:
            continue
        s = slips.entry_slip(idx, p, exact, shape, everything, texts, row_total=total)
        if s is not None:
            out.append(Cause(s.cause, (idx,), s.text, extra={"slip": s.detail} if s.detail else {}))
    return out


def _softmax_rows(node: Any, shape: tuple[int, ...]) -> bool:
    """Whether each row (last axis) of a step is a softmax row, so sums to 1.

    A template's ``softmax`` over the last axis, or a user step written as one call
    ``softmax(…)`` (over the last axis unless it names another).
    """
    params = dict(node.params)
    if node.op == "softmax":
        return params.get("axis") in (None, -1, len(shape) - 1)
    text = getattr(params.get("step"), "text", "")
    if node.op != "step" or not isinstance(text, str):
        return False
    t = text.replace(" ", "")
    if not (t.startswith("softmax(") and t.endswith(")")):
        return False
    depth = 0
    for k, ch in enumerate(t):
        depth += 1 if ch == "(" else -1 if ch == ")" else 0
        if depth == 0 and ch == ")" and k != len(t) - 1:
            return False  # softmax(a)+softmax(b): not one call
    tail = t[len("softmax(") : -1]
    return not any(f"{k}=" in tail for k in ("axis", "dim")) or any(
        f"{k}=-1" in tail or f"{k}={len(shape) - 1}" in tail for k in ("axis", "dim")
    )


def _table(
    result: ClaimResult, checks: Iterable[Check], ev: Evaluator, trace: Trace
) -> (
    tuple[str, tuple[int, ...], list[Check], slips.Exact, dict[Index, Printed], dict[Index, str]]
    | None
):
    """A step claim's step, shape, off checks, exact balls, printed entries and exact texts."""
    step = result.claim.step
    assert step is not None
    shape = trace.shape(step)
    off = [c for c in checks if c.index is not None]
    if shape is None or not off:
        return None
    return step, shape, off, exact_balls(ev, step), claim_printed(result), _texts(result)


def _texts(result: ClaimResult) -> dict[Index, str]:
    """The certified decimals the verdicts wrote for the claim's entries."""
    return {tuple(c.index): c.exact for c in result.checks if c.index is not None and c.exact}


# ----------------------------------------------------------------------------- transposed operand


def transposed_operand(
    result: ClaimResult, checks: list[Check], d: Derivation, trace: Trace
) -> Cause | None:
    """A user step computed with one ``@`` operand transposed (or its transpose left out).

    Offered when the rewritten step makes every printed entry of the claim right; only
    the step itself is rewritten, so its printed inputs keep their values.
    """
    from symtf.language import lang

    step = result.claim.step
    node = next((s for s in getattr(d, "steps", ()) if s.name == step), None)
    if node is None or step is None or not checks:
        return None
    for tree, what in _toggled(node.tree, trace):
        variant = dataclasses.replace(
            d,
            steps=tuple(
                dataclasses.replace(s, tree=tree, text=lang.unparse(tree)) if s is node else s
                for s in d.steps
            ),
        )
        try:
            ev = Evaluator(variant)
            ev.exact_trace()
        except (SymtfError, TypeError, ValueError):
            continue
        if _all_right(result, ev, step):
            failing = tuple(tuple(c.index) for c in checks if c.index is not None)
            return Cause(
                "transposed-operand",
                failing,
                f"reproduced by computing {step} with {what}",
                convention=(f"transposed-operand@{step}",),
            )
    return None


def _all_right(result: ClaimResult, ev: Evaluator, step: str) -> bool:
    texts = [p for row in result.claim.printed for p in row]
    for c, p in zip(result.checks, texts, strict=False):
        if c.index is None:
            return False
        try:
            if classify(ev.entry(step, *c.index), p, result.claim.rounding)[0] not in GOOD:
                return False
        except (SymtfError, TypeError, IndexError, KeyError):
            return False
    return True


def _toggled(tree: Any, trace: Trace) -> Iterable[tuple[Any, str]]:
    """Each variant of ``tree`` with one square named ``@`` operand transposed or un-transposed."""
    from symtf.language import lang

    def square(name: str) -> bool:
        if name not in trace:
            return False
        shape = trace.true_shape(name) or trace.shape(name)
        return shape is not None and len(shape) == 2 and shape[0] == shape[1] > 1

    def variants(node: Any) -> Iterable[tuple[Any, str]]:
        if isinstance(node, lang.Chain):
            parts = [node.first, *(link.node for link in node.rest)]
            ops = [link.op for link in node.rest]
            for k, part in enumerate(parts):
                beside = (k > 0 and ops[k - 1] == "@") or (k < len(ops) and ops[k] == "@")
                if not beside:
                    continue
                swapped = _flip(part, square)
                if swapped is not None:
                    new, what = swapped
                    if k == 0:
                        yield lang.Chain(node.pos, new, node.rest), what
                    else:
                        rest = list(node.rest)
                        link = rest[k - 1]
                        rest[k - 1] = lang.Link(link.op, link.text, link.pos, new)
                        yield lang.Chain(node.pos, node.first, tuple(rest)), what
        for name in getattr(node, "__slots__", ()):
            child = getattr(node, name, None)
            kids = child if isinstance(child, tuple) else (child,)
            for kid in kids:
                if isinstance(kid, lang.Link):
                    kid = kid.node
                if hasattr(kid, "__slots__") and not isinstance(kid, str | int):
                    for sub, what in variants(kid):
                        yield _replace_child(node, name, kid, sub), what

    yield from variants(tree)


def _flip(part: Any, square: Any) -> tuple[Any, str] | None:
    from symtf.language import lang

    if isinstance(part, lang.Name) and square(part.name):
        return lang.Transpose(part.pos, part), f"{part.name}ᵀ in place of {part.name}"
    if (
        isinstance(part, lang.Transpose)
        and isinstance(part.operand, lang.Name)
        and square(part.operand.name)
    ):
        name = part.operand.name
        return part.operand, f"{name} in place of {name}ᵀ"
    return None


def _replace_child(node: Any, name: str, old: Any, new: Any) -> Any:
    from symtf.language import lang

    value = getattr(node, name)
    if isinstance(value, tuple):
        items = []
        for item in value:
            if isinstance(item, lang.Link) and item.node is old:
                items.append(lang.Link(item.op, item.text, item.pos, new))
            else:
                items.append(new if item is old else item)
        return dataclasses.replace(node, **{name: tuple(items)})
    return dataclasses.replace(node, **{name: new})


# ----------------------------------------------------------------------------- rounded inputs


def rounded_inputs_cause(
    d: Derivation, result: ClaimResult, checks: list[Check], cache: dict[frozenset[str], Any]
) -> Cause | None:
    """The off entries are possible once inputs written with a decimal point are rounded prints.

    Every such input (``Derivation.written_inputs``) first stands for any value within
    half a unit of its last written digit; when the printed values are then in range,
    inputs are dropped one at a time while they stay so, and the ones left are named.
    ``cache`` keeps the enclosure of each set of inputs tried (shared by a file's claims).
    """
    written = getattr(d, "written_inputs", None)
    step = result.claim.step
    if not written or step is None or d.rounded_inputs:
        return None
    own = claim_printed(result)
    targets = [
        (tuple(c.index), own[tuple(c.index)])
        for c in checks
        if c.index is not None and tuple(c.index) in own
    ]
    if not targets:
        return None

    def explains(names: frozenset[str]) -> bool:
        if names not in cache:
            from symtf.checking.framework import enclose_rounded

            cache[names] = enclose_rounded(with_rounded(d, names))
        t = cache[names]
        if t is None or step not in t:
            return False
        from symtf.checking.accept import _meets

        try:
            return all(_meets(t.value(step)[idx], p, result.claim.rounding) for idx, p in targets)
        except (IndexError, TypeError):
            return False

    names = frozenset(written)
    if not explains(names):
        return None
    for n in sorted(written):
        if n in names and len(names) > 1 and explains(names - {n}):
            names = names - {n}
    # An enclosure that meets the print does not show that it is reached (enclosures are
    # wider than the range): the cause is stated only with a witness, one point of the
    # inputs' rounding intervals at which the step's values print as these.
    from symtf.checking.framework import rounded_witness

    wanted = [(step, idx, p) for idx, p in targets]
    if not rounded_witness(with_rounded(d, names), wanted, result.claim.rounding):
        # the inputs were dropped on enclosures, which are wider than the values: the
        # point may need one of them to move, so every written input may
        if names == frozenset(written) or not rounded_witness(
            with_rounded(d, written), wanted, result.claim.rounding
        ):
            return None
        names = frozenset(written)
    listed = ", ".join(sorted(names))
    return Cause(
        "rounded-inputs",
        tuple(idx for idx, _ in targets),
        f"consistent with rounded inputs: if {listed}, as written, stood for any values within "
        f"half a unit of their last digit, {step} would reach values that print as these "
        f"(rounded_inputs = [{', '.join(repr(n) for n in sorted(names))}] says the article rounded them)",
        extra={"rounded_inputs": sorted(names)},
    )


def with_rounded(d: Derivation, names: Iterable[str]) -> Derivation:
    """The derivation with these inputs (model inputs or given tensors) known to their print only."""
    from symtf.backends.rounded import RoundedInput, RoundedInputs, tensor_half_widths

    names = set(names)
    written = getattr(d, "written_inputs", None) or {}
    items = [written[n] for n in sorted(names) if written.get(n) is not None]
    tensors = []
    for g in getattr(d, "tensors", ()):
        if g.name in names:
            flat = g.flat if g.flat is not None else sympy.ImmutableMatrix([list(g.values)])
            g = dataclasses.replace(g, rounded=True, flat=flat)
            items.append(RoundedInput(g.name, flat, (tensor_half_widths(g.texts),)))
        tensors.append(g)
    return dataclasses.replace(d, rounded_inputs=RoundedInputs(items), tensors=tuple(tensors))


__all__ = [
    "Cause",
    "contradicted_inputs",
    "entries_text",
    "entry_causes",
    "exact_balls",
    "line_inputs",
    "line_slip",
    "replay_derivation",
    "replay_trace",
    "rounded_inputs_cause",
    "table_causes",
    "transposed_operand",
    "upstream_printed",
    "with_rounded",
]
