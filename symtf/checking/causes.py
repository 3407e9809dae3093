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
"""

from __future__ import annotations

import dataclasses
from collections.abc import Iterable, Mapping
from fractions import Fraction
from typing import Any, cast

import sympy
from flint import arb

from symtf.checking import repeated, slips
from symtf.checking.evaluation import Evaluator, classify
from symtf.checking.report import Check, ClaimResult
from symtf.checking.wording import Names
from symtf.errors import SymtfError
from symtf.numbers import Printed, parse_printed
from symtf.spec import Derivation
from symtf.trace import Trace

GOOD = ("exact", "rounded")

Index = tuple[int, ...]


@dataclasses.dataclass(frozen=True)
class Cause:
    """A cause for some off entries of one claim.

    Attributes:
        cause: The JSON ``cause`` (``sign-flip``, ``transposed-operand``, ``rounded-inputs`` …).
        entries: The claim's entries it explains (``None`` for a displayed line's value).
        text: The explanation, with only numbers that were computed.
        convention: The JSON ``convention`` (names of what was rewritten, if anything).
        extra: Further JSON fields.
    """

    cause: str
    entries: tuple[Index | None, ...]
    text: str
    convention: tuple[str, ...] = ()
    extra: Mapping[str, Any] = dataclasses.field(default_factory=dict)


# ----------------------------------------------------------------------------- the step's table


def exact_balls(ev: Evaluator, step: str) -> slips.Exact:
    """The exact value of any entry of ``step`` as a 128-bit certified ball (cached), for
    :mod:`symtf.checking.slips`; ``None`` where it cannot be enclosed."""
    cache: dict[Index, arb | None] = {}

    def exact(idx: Index) -> arb | None:
        if idx not in cache:
            try:
                cache[idx] = ev.entry(step, *idx).ball(128)
            except (SymtfError, IndexError, TypeError):
                cache[idx] = None
        return cache[idx]

    return exact


def _claim_printed(result: ClaimResult) -> dict[Index, Printed]:
    """The claim's own printed entries by index (the ones its checks were made for)."""
    out: dict[Index, Printed] = {}
    texts = [p for row in result.claim.printed for p in row]
    for c, p in zip(result.checks, texts, strict=False):
        if c.index is not None and p.text == c.printed:
            out[tuple(c.index)] = p
    return out


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
    return step, shape, off, exact_balls(ev, step), _claim_printed(result), _texts(result)


def _texts(result: ClaimResult) -> dict[Index, str]:
    """The certified decimals the verdicts wrote for the claim's entries."""
    return {tuple(c.index): c.exact for c in result.checks if c.index is not None and c.exact}


def line_slip(
    c: Check, claim: Any, ev: Evaluator, d: Derivation, others: Iterable[Check] = ()
) -> Cause | None:
    """A slip that reproduces one value of a displayed line: as displayed, or as the exact reading.

    ``e^−1.9 = 0.149`` is the line's value truncated; a neighbour's value is not looked for.
    Truncation is a habit of writing, so it must fit the line's other numbers: it is not
    offered when one of ``others`` (the checks of the same line) that is right was rounded
    up, which truncation would have printed otherwise.
    """
    from symtf.checking.displayed import _entries, _resolver, decided_by_link
    from symtf.errors import ExpressionError
    from symtf.language.latexmath import parse as parse_expression

    claim = decided_by_link(claim, c)  # a chain: the link that gave the verdict
    p = next((q for row in claim.printed for q in row if q.text == c.printed), None)
    if p is None or p.value is None:
        return None
    trace = ev.exact_trace()
    xp = trace.backend
    k = c.index[-1] if c.index is not None else 0
    values = []
    try:
        parsed = parse_expression(claim.expression, where=claim.where)
        shown = _entries(parsed.evaluate(_resolver(trace, d, ev, claim), backend=xp))
        values.append(("as displayed", shown[k]))
    except (ExpressionError, SymtfError, IndexError, TypeError):
        pass
    if c.value is not None and c.extra.get("exact_reading", {}).get("stands_for"):
        values.append(("with the values the literals stand for", c.value))
    row = softmax_row(claim, d)
    refuted: tuple[str, str] | None = None
    rounded_up: Check | None = None
    for how, v in values:
        try:
            x = xp.ball(v, 128)
        except (SymtfError, TypeError):
            continue
        reading = "as_displayed" if how == "as displayed" else "exact_reading"
        text = c.extra.get(reading, {}).get("exact")
        for detect in (
            slips.sign_flip,
            slips.decimal_shift,
            slips.digit_transposition,
            slips.truncation,
        ):
            s = detect(p, x, text)
            if s is not None and s.cause == "truncation":
                up = _rounded_up(others, xp)
                if up is not None:
                    rounded_up = rounded_up or up
                    continue
            if s is not None and row and slips.breaks_sum(p, x, row):
                # the row sums to 1 as printed: the number was written as the row needs
                right = slips.correct_roundings(x, p)
                refuted = refuted or (s.cause, right[0].text if right else "")
                continue
            if s is not None:
                return Cause(
                    s.cause,
                    (None,),
                    f"{how}, {s.text}",
                    extra={"slip": s.detail} if s.detail else {},
                )
    if refuted is not None:
        terms = " + ".join(q.text for q in (p, *row))
        return Cause(
            "unexplained",
            (None,),
            f"not {_SLIP_WORDS.get(refuted[0], refuted[0])} either: the row printed with it, "
            f"{terms}, sums to 1, and with {refuted[1]} it would not",
        )
    if rounded_up is not None:
        return Cause(
            "unexplained",
            (None,),
            f"not digits truncated either: the same line prints {rounded_up.printed} for "
            f"{rounded_up.exact}, rounded up, so it rounds rather than truncates",
        )
    return None


def _rounded_up(checks: Iterable[Check], xp: Any) -> Check | None:
    """The first of ``checks`` that is right and prints its exact value rounded up (away
    from zero), so that truncating would have printed it otherwise; else ``None``."""
    for o in checks:
        if o.verdict not in GOOD or o.value is None:
            continue
        try:
            q = parse_printed(o.printed)
            x = xp.ball(o.value, 128)
        except (SymtfError, TypeError, ValueError):
            continue
        if slips.prints_as(x, q) and not slips.prints_as(x, q, "truncate"):
            return o
    return None


#: A reader's slip in words, for saying it is contradicted.
_SLIP_WORDS = {
    "digit-transposition": "two digits swapped",
    "decimal-shift": "a shifted decimal point",
    "sign-flip": "a flipped sign",
    "truncation": "digits truncated",
}

#: How many article lines from a displayed softmax entry its row's other printed entries may be.
ROW_LINES = 5


def softmax_row(claim: Any, d: Derivation) -> list[Printed]:
    """The other printed entries of the softmax row a displayed line computes one entry of.

    A line ``\\frac{e^{5.0}}{e^{5.0} + e^{4.0} + e^{3.0}}`` (or ``exp(a) / (exp(a) + …)``)
    is one entry of a row of as many entries as its denominator has terms. The others are
    the printed numbers written next to it (the claims right after it, else right before,
    within :data:`ROW_LINES` lines) when, with the line's own printed value, they sum to 1
    as printed; else none is known (an empty list).
    """
    n = _softmax_terms(claim.expression or "")
    own = [q for r in claim.printed for q in r]
    if n is None or len(own) != 1 or own[0].value is None:
        return []
    found_at = repeated.article_order(claim, d)
    if found_at is None:
        return []
    claims, here = found_at
    line = claim.source_line

    def near(c: Any) -> bool:
        return line is None or (
            c.source_line is not None and abs(c.source_line - line) <= ROW_LINES
        )

    for side in (claims[here + 1 :], list(reversed(claims[:here]))):
        found: list[Printed] = []
        for c in side:
            if not near(c) or c.expression is not None:
                break
            if c.source_line == line and all(
                _written_in(q.text, claim.expression or "") for r in c.printed for q in r
            ):
                continue  # a number the line itself writes (its exponents), not a sibling
            found.extend(q for r in c.printed for q in r)
            if len(found) >= n - 1:
                break
        others = found[: n - 1]
        if len(others) == n - 1 and all(q.value is not None for q in others):
            tol = sum((q.ulp / 2 for q in (own[0], *others)), Fraction(0))
            total = sum((cast(Fraction, q.value) for q in (own[0], *others)), Fraction(0))
            if abs(total - 1) <= tol:
                return others
    return []


def _written_in(text: str, expression: str) -> bool:
    """Whether a printed number is one the expression writes (not part of a longer one)."""
    import re

    return (
        re.search(r"(?<![\d.])" + re.escape(text.lstrip("-−")) + r"(?![\d])", expression)
        is not None
    )


def _softmax_terms(expression: str) -> int | None:
    """The number of terms of the denominator when the line is one softmax entry, else None."""
    import re

    t = expression.strip()
    m = re.fullmatch(r"\\frac\{(.+?)\}\{(.+)\}", t) or re.fullmatch(r"(.+?)\s*/\s*\((.+)\)", t)
    if m is None:
        return None
    num, den = (g.replace(" ", "") for g in m.groups())
    if not ("e^" in num or "exp" in num):
        return None
    terms: list[str] = []
    depth, cur = 0, ""
    for ch in den:
        depth += 1 if ch in "({[" else -1 if ch in ")}]" else 0
        if ch == "+" and depth == 0:
            terms.append(cur)
            cur = ""
        else:
            cur += ch
    terms.append(cur)
    return len(terms) if len(terms) >= 2 and num in terms else None


def line_inputs(c: Check, claim: Any, ev: Evaluator, d: Derivation) -> list[tuple[str, str]]:
    """The earlier printed numbers a displayed line's value, as displayed, is computed from.

    Each literal the exact reading read as an earlier number (``stands_for``: an earlier
    line's result, an entry or a row of a step) is moved by 1; the pairs ``(literal, what
    it stands for)`` whose move changes the line's value, in the order of ``stands_for``
    (``0.001765 × 0.0`` does not depend on its 0.001765).
    """
    from symtf.checking.displayed import (
        _entries,
        _negated,
        _resolver,
        _row_key,
        _rows_of,
        _split_key,
        decided_by_link,
    )
    from symtf.errors import ExpressionError
    from symtf.language.latexmath import parse as parse_expression

    claim = decided_by_link(claim, c)  # a chain: the link that gave the verdict
    sources = c.extra.get("exact_reading", {}).get("stands_for") or {}
    if not sources or claim.expression is None:
        return []
    trace = ev.exact_trace()
    xp = trace.backend
    k = c.index[-1] if c.index is not None else 0
    try:
        parsed = parse_expression(claim.expression, where=claim.where)
        resolve = _resolver(trace, d, ev, claim)
        shown = _entries(parsed.evaluate(resolve, backend=xp))[k]
    except (ExpressionError, SymtfError, IndexError, TypeError, LookupError):
        return []
    rows = _rows_of(parsed)
    out = []
    for key, ref in sources.items():
        if key.strip().startswith("["):
            row = next((r for r in rows if r.key == _row_key(_split_key(key))), None)
            lits = row.literals if row is not None else ()
        else:  # "-0.5" is read for negated literals only, "0.5" for the others then
            text = key.strip().lstrip("-−").strip()
            minus = key.strip()[:1] in ("-", "−")
            lits = tuple(
                lit
                for lit in parsed.literals_with_text(text)
                if minus == _negated(lit, parsed.text) or (not minus and "-" + text not in sources)
            )
        if not lits:
            continue
        try:
            moved = {lit.pos: sympy.Rational(lit.text.replace("−", "-")) + 1 for lit in lits}
            after = _entries(parsed.evaluate(resolve, moved, backend=xp))[k]
            change = sympy.sympify(after - shown)
            if change == 0 or xp.ball(change, 128).contains(0):
                continue  # a literal the value does not depend on (multiplied by 0.0)
        except (ExpressionError, SymtfError, ArithmeticError, IndexError, TypeError, ValueError):
            pass  # not decided: counted as an input, as the line reads it
        out.append((key, str(ref)))
    return out


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
    own = _claim_printed(result)
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

    marked = with_rounded(d, names)
    if not rounded_witness(marked, [(step, idx, p) for idx, p in targets], result.claim.rounding):
        return None
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
