"""The derivation replayed from the article's printed tables, and which printed inputs a
convention would contradict.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping
from typing import Any

from symtf.checking.causes.found import GOOD
from symtf.checking.evaluation import Evaluator, classify
from symtf.checking.wording import Names
from symtf.errors import SymtfError
from symtf.numbers import Printed
from symtf.spec import Derivation
from symtf.trace import Trace

# ----------------------------------------------------------------------------- replay


def replay_derivation(d: Derivation, printed: Mapping[str, Any]) -> Derivation:
    """The derivation replay runs: ``rope(x, angles)`` rotates with the article's printed tables.

    When a printed user step is ``cos(angles)`` (or ``sin(angles)``) of the very angles a
    ``rope`` step turns by, the article rotated with those printed numbers (a truncated
    ``cos 0.01 = 0.999`` carries into the rotated row); replay then passes them to ``rope``
    as its ``cos``/``sin`` tables.
    """
    from symtf.language import lang

    steps = getattr(d, "steps", ())
    tables: dict[tuple[str, str], str] = {}
    for s in steps:
        t = s.tree
        if (
            s.name in printed
            and isinstance(t, lang.Call)
            and t.name in ("cos", "sin")
            and len(t.args) == 1
            and not t.kwargs
            and isinstance(t.args[0], lang.Name)
        ):
            tables.setdefault((t.name, t.args[0].name), s.name)
    if not tables:
        return d
    order = {s.name: k for k, s in enumerate(steps)}
    changed = False
    out = []
    for s in steps:
        new = _with_tables(s.tree, tables, order, order[s.name])
        if new is not None:
            names = [n.name for n in _table_names(new)]
            s = dataclasses.replace(s, tree=new, inputs=tuple(dict.fromkeys((*s.inputs, *names))))
            changed = True
        out.append(s)
    return dataclasses.replace(d, steps=tuple(out)) if changed else d


def replay_trace(trace: Trace, d: Derivation) -> Trace:
    """``trace`` with each user step's inputs as :func:`replay_derivation` wired them."""
    inputs = {s.name: s.inputs for s in getattr(d, "steps", ())}
    if all(trace[n].inputs == tuple(i) for n, i in inputs.items() if n in trace):
        return trace
    out = Trace(
        [
            dataclasses.replace(trace[n], inputs=tuple(inputs[n]))
            if n in inputs and tuple(inputs[n]) != trace[n].inputs
            else trace[n]
            for n in trace
        ],
        trace.backend,
    )
    out.true_shapes = trace.true_shapes
    return out


def _with_tables(
    node: Any, tables: Mapping[tuple[str, str], str], order: Mapping[str, int], at: int
) -> Any:
    """``node`` with each ``rope(x, A)`` given the printed ``cos(A)``/``sin(A)`` steps before it."""
    from symtf.language import lang

    if isinstance(node, lang.Call) and node.name == "rope" and len(node.args) >= 2:
        angles = node.args[1]
        given = {k for k, _ in node.kwargs} | ({"cos", "sin"} if len(node.args) > 2 else set())
        if isinstance(angles, lang.Name):
            extra = []
            for fn in ("cos", "sin"):
                table = tables.get((fn, angles.name))
                if table is not None and fn not in given and order.get(table, at) < at:
                    extra.append((fn, lang.Name(node.pos, table)))
            if extra:
                return dataclasses.replace(node, kwargs=(*node.kwargs, *extra))
    changed = False
    fields: dict[str, Any] = {}
    for name in getattr(node, "__slots__", ()):
        value = getattr(node, name, None)
        if isinstance(value, tuple):
            items = []
            for item in value:
                inner = item.node if isinstance(item, lang.Link) else item
                sub = (
                    _with_tables(inner, tables, order, at)
                    if hasattr(inner, "__slots__") and not isinstance(inner, str)
                    else None
                )
                if sub is not None:
                    changed = True
                    item = (
                        lang.Link(item.op, item.text, item.pos, sub)
                        if isinstance(item, lang.Link)
                        else sub
                    )
                items.append(item)
            fields[name] = tuple(items)
        elif hasattr(value, "__slots__") and not isinstance(value, str):
            sub = _with_tables(value, tables, order, at)
            if sub is not None:
                changed = True
                fields[name] = sub
    return dataclasses.replace(node, **fields) if changed else None


def _table_names(node: Any) -> list[Any]:
    from symtf.language import lang

    out: list[Any] = []
    if isinstance(node, lang.Call) and node.name == "rope":
        out.extend(v for k, v in node.kwargs if k in ("cos", "sin") and isinstance(v, lang.Name))
    for name in getattr(node, "__slots__", ()):
        value = getattr(node, name, None)
        for item in value if isinstance(value, tuple) else (value,):
            inner = item.node if isinstance(item, lang.Link) else item
            if isinstance(inner, tuple):  # a kwarg pair
                inner = inner[1]
            if hasattr(inner, "__slots__") and not isinstance(inner, str):
                out.extend(_table_names(inner))
    return out


# ----------------------------------------------------------------------------- conventions


def upstream_printed(trace: Trace, step: str, printed: Mapping[str, Any]) -> list[str]:
    """The nearest printed steps walking back from ``step`` (its printed inputs), in trace order."""
    out: list[str] = []
    seen = {step}
    frontier = list(trace[step].inputs)
    while frontier:
        s = frontier.pop()
        if s in seen or s not in trace:
            continue
        seen.add(s)
        if s in printed:
            out.append(s)
        else:
            frontier.extend(trace[s].inputs)
    order = list(trace)
    return sorted(out, key=order.index)


def contradicted_inputs(
    ev: Evaluator,
    variant: Evaluator,
    trace: Trace,
    step: str,
    printed: Mapping[str, Mapping[tuple[int, ...], Printed]],
    rows: set[tuple[int, ...]] | None = None,
) -> list[tuple[str, tuple[int, ...], Printed]]:
    """The printed entries of ``step``'s inputs that are right as computed but wrong under ``variant``.

    With ``rows`` (the step's rows a convention explains), an input with as many rows as
    the step is checked in those rows only.
    """
    out: list[tuple[str, tuple[int, ...], Printed]] = []
    n = trace.shape(step)
    for s in upstream_printed(trace, step, printed):
        shape = trace.shape(s)
        same_rows = (
            rows is not None and shape is not None and n is not None and shape[:-1] == n[:-1]
        )
        for idx, p in sorted(printed[s].items()):
            if same_rows and rows is not None and tuple(idx[:-1]) not in rows:
                continue
            try:
                before = classify(ev.entry(s, *idx), p)[0]
                if before not in GOOD:
                    continue
                after = classify(variant.entry(s, *idx), p)[0]
            except (SymtfError, TypeError, IndexError, KeyError):
                continue
            if after not in GOOD:
                out.append((s, tuple(idx), p))
    return out


def entries_text(
    entries: list[tuple[str, tuple[int, ...], Printed]], names: Names, limit: int = 4
) -> str:
    """``variance, row 2 = 4.333, …`` for an explanation, in the article's names."""
    shown = [f"{names.entry(s, idx)} = {p.text}" for s, idx, p in entries[:limit]]
    more = f" and {len(entries) - limit} more" if len(entries) > limit else ""
    return ", ".join(shown) + more
