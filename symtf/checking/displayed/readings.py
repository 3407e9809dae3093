"""Each literal of a displayed line read as the exact value it stands for: a reference, a
declared ``stands_for``, an earlier line's result or link it repeats, or an entry of the
line's lineage; what matches nothing stays as written.
"""

from __future__ import annotations

import re
from fractions import Fraction
from typing import Any

import sympy

from symtf.backends.certify import PRECISIONS
from symtf.checking import lineage
from symtf.checking.displayed.matching import (
    anchored_values,
    computes,
    lineage_of,
    read_along,
    result_entries,
)
from symtf.checking.displayed.rows import (
    Row,
    chain_key,
    negated_literal,
    row_key,
    rows_of,
    split_key,
)
from symtf.checking.displayed.wording import unread_literals
from symtf.errors import ExpressionError, SpecError, Undecided
from symtf.language import expr as sx
from symtf.language.latexmath import parse as parse_expression
from symtf.language.latexmath import split_links
from symtf.numbers import Printed
from symtf.spec import Claim, Derivation

#: The source of a literal repeating an earlier line's result whose label is not known.
_EARLIER = "an earlier line"

_REF = re.compile(
    r"^\s*([A-Za-z_][A-Za-z0-9_.]*(?:\[\d+\])?)\s*\[\s*(\d+)\s*(?:,\s*(\d+)\s*)?\]\s*$"
)
_BARE = re.compile(r"^\s*([A-Za-z_][A-Za-z0-9_.]*(?:\[\d+\])?)\s*$")


def _reference_value(ref: str, trace: Any, where: str) -> Any:
    """The exact value ``stands_for`` names: ``step[i, j]``, ``vec[k]``, ``step[i]`` (a row)
    or a bare step (a scalar or a vector).

    Raises:
        SpecError: For a reference of another form, an unknown step or an index outside it.
    """
    m = _REF.match(ref) or _BARE.match(ref)
    if m is not None and m.group(1) not in trace and ref.strip() in trace:
        m = _BARE.match(ref)  # a family member such as h[1], named whole
    if not m:
        raise SpecError(
            f"{where}: expected a reference like l0.h0.scaled[0, 2], h[1] or a step name, found {ref!r}"
        )
    name = m.group(1)
    if name not in trace:
        from symtf.suggest import hint

        raise SpecError(
            f"{where}: no step {name!r} in this model{hint(name, list(trace), steps=True)}"
        )
    v = trace.value(name)
    if not isinstance(v, sympy.MatrixBase):
        raise SpecError(f"{where}: {name} is not a matrix of numbers")
    true = trace.true_shape(name) or v.shape
    idx = [int(g) for g in m.groups()[1:] if g is not None]
    try:
        if not idx:
            if v.shape == (1, 1):
                return v[0, 0]
            if v.rows == 1:
                return sympy.ImmutableMatrix(v)
            raise SpecError(
                f"{where}: {name} has shape {tuple(true)}; name an entry or a row ({name}[0])"
            )
        if len(idx) == 1 and len(true) == 1:
            if not 0 <= idx[0] < v.cols:
                raise IndexError
            return v[0, idx[0]]
        if len(idx) == 1:
            if not 0 <= idx[0] < v.rows:
                raise IndexError
            return sympy.ImmutableMatrix(v.row(idx[0]))
        if not (0 <= idx[0] < v.rows and 0 <= idx[1] < v.cols):
            raise IndexError
        return v[idx[0], idx[1]]
    except IndexError:
        raise SpecError(f"{where}: {ref} is outside {name}'s shape {tuple(true)}") from None


def substitutions(
    parsed: sx.Expression,
    claim: Claim,
    trace: Any,
    derivation: Derivation,
    ev: Any,
    resolve: Any = None,
) -> tuple[dict[int, Any], dict[str, str], bool]:
    """Which literals stand for which exact values: declared, repeated results, then trace entries.

    A bracketed row of literals (``[1.0, 4.0, 0.0]``) is read as a whole: a row of a step
    or an earlier line's vector result. The step the line computes is found from its
    printed result, or, when that result is off, as the step one of whose entries the
    line equals once its literals are read along that step's lineage.

    Returns:
        The replacements, the source of each replaced literal in words, and whether the
        reading is anchored: declared in the claim, computing a step's entry, or leaving
        no decimal literal as written.
    """
    # a line written again (``restates``, with the chain that worked it out) reads its
    # literals as the line it restates read them, there: not as the numbers printed
    # nearest to where it is written again, far below
    kept = ev.readings.get((claim.restates, claim.expression)) if claim.restates else None
    if kept is not None:
        return dict(kept[0]), dict(kept[1]), kept[2]
    replace, sources, anchored = _read_substitutions(parsed, claim, trace, derivation, ev, resolve)
    ev.readings[(claim.label, claim.expression)] = (dict(replace), dict(sources), anchored)
    return replace, sources, anchored


def _read_substitutions(
    parsed: sx.Expression,
    claim: Claim,
    trace: Any,
    derivation: Derivation,
    ev: Any,
    resolve: Any = None,
) -> tuple[dict[int, Any], dict[str, str], bool]:
    """:func:`substitutions` for a line read where it stands."""
    replace: dict[int, Any] = {}
    sources: dict[str, str] = {}
    rows = rows_of(parsed)
    for key, ref in claim.stands_for.items():
        where = f"{claim.where}.stands_for.{key}"
        if key.strip().startswith("["):
            row = next((r for r in rows if r.key == row_key(split_key(key))), None)
            if row is None:
                raise SpecError(
                    f"{claim.where}.stands_for: no literal {key!r} in {claim.expression!r}"
                )
            value = _reference_value(ref, trace, where)
            entries = list(value) if isinstance(value, sympy.MatrixBase) else [value]
            if len(entries) != len(row.literals):
                raise SpecError(
                    f"{where}: {ref} has {len(entries)} entries, the row {key} has {len(row.literals)}"
                )
            for lit, sign, e in zip(row.literals, row.signs, entries, strict=True):
                replace[lit.pos] = sign * e
            sources[key] = ref
            continue
        sign = -1 if key.strip()[:1] in ("-", "−") else 1
        text = key.strip().lstrip("-−").strip()
        lits = parsed.literals_with_text(text)
        if not lits:
            raise SpecError(f"{claim.where}.stands_for: no literal {key!r} in {claim.expression!r}")
        value = _reference_value(ref, trace, where)
        if isinstance(value, sympy.MatrixBase):
            raise SpecError(f"{where}: {ref} is a row of {len(value)} entries, {key} one number")
        for lit in lits:
            replace[lit.pos] = sign * value
        sources[key] = ref
    if not getattr(claim, "match_literals", True):
        return replace, sources, True
    results = ev.printed_results
    for row in rows:
        if row.key in results and not any(lit.pos in replace for lit in row.literals):
            for lit, sign, e in zip(row.literals, row.signs, results[row.key], strict=True):
                replace[lit.pos] = sign * e
            sources[row.key.replace(",", ", ")] = ev.printed_labels.get(row.key, _EARLIER)
    in_rows = {lit.pos for row in rows for lit in row.literals}
    _chain_rows(parsed, claim, derivation, ev, replace, sources)
    shadowed = lineage.shadowed_results(parsed, claim, ev, derivation)
    in_rows |= shadowed
    _earlier_results(parsed, results, replace, sources, ev.printed_labels, skip=in_rows)
    # the step the line computes: an entry its printed result rounds to, which the line
    # then computes exactly once its literals are read as that step's inputs
    found = None
    for step, _ij, entry, _ball in result_entries(claim, trace):
        along = read_along(parsed, rows, trace, lineage_of(step, trace), replace, sources)
        if along is not None and computes(parsed, resolve, along[0], entry, trace):
            found = along
            break
    if (
        found is None
    ):  # a line whose printed result is off: the step it computes is the one it equals
        found = anchored_values(parsed, rows, trace, replace, sources, resolve)
    replace, sources = found if found is not None else (replace, sources)
    _earlier_results(
        parsed, results, replace, sources, ev.printed_labels, skip=shadowed
    )  # numbers of rows read no other way
    # a number of an earlier line's vector result, repeated on its own
    lineage.earlier_entries(
        parsed, claim, ev, replace, sources, lambda lit: negated_literal(lit, parsed.text)
    )
    _earlier_links(parsed, claim, ev, replace, sources)
    anchored = (
        found is not None
        or bool(claim.stands_for)
        or not unread_literals(parsed, replace, derivation)
    )
    return replace, sources, anchored


def _chain_rows(
    parsed: sx.Expression,
    claim: Claim,
    derivation: Derivation,
    ev: Any,
    replace: dict[int, Any],
    sources: dict[str, str],
) -> None:
    """Read a number that a row of the line's chain writes as that row's entry.

    In ``1.0 × 6.0 + [0.007, 0.001] @ [[9], [11]] = 6.0 + 0.063 + 0.011`` the 0.063 is
    checked as ``0.007×9``: its 0.007 is the first entry of the row [0.007, 0.001], which
    repeats a vector result printed above as a whole, so it stands for that entry (not
    for an ``exp(-5.0) = 0.007`` worked out earlier). A number two such rows write with
    different values is read no way here.
    """
    if claim.source_line is None:
        return
    found: dict[tuple[bool, str], list[tuple[Any, str]]] = {}
    for c in derivation.claims:
        if c.source_line != claim.source_line or not c.expression or "[" not in c.expression:
            continue
        rows: list[Row] = []
        for link in split_links(c.expression):
            try:
                rows += rows_of(parse_expression(link, where=c.where))
            except ExpressionError:
                continue
        for row in rows:
            value = ev.printed_results.get(row.key)
            if not isinstance(value, sympy.MatrixBase) or len(value) != len(row.literals):
                continue
            label = ev.printed_labels.get(row.key, _EARLIER)
            for lit, sign, e in zip(row.literals, row.signs, value, strict=True):
                found.setdefault((sign < 0, lit.text), []).append((sign * e, label))
    if not found:
        return
    for lit in parsed.literals:
        hits = found.get((negated_literal(lit, parsed.text), lit.text))
        if lit.pos in replace or not hits or any(v != hits[0][0] for v, _ in hits):
            continue
        replace[lit.pos] = hits[0][0]
        sources[("-" if negated_literal(lit, parsed.text) else "") + lit.text] = hits[0][1]


def _earlier_links(
    parsed: sx.Expression, claim: Claim, ev: Any, replace: dict[int, Any], sources: dict[str, str]
) -> None:
    """Read a literal that an earlier link of the same chain worked out as that piece.

    A literal read no other way, whose printed rounding holds a compound piece of an
    earlier link (as displayed, or as its exact reading), stands for the piece's exact
    reading; the source names the piece and its line.
    """
    key = chain_key(claim)
    pieces = ev.chain_pieces.get(key, []) if key is not None else []
    if not pieces:
        return
    from symtf.checking.slips import prints_as

    xp = ev.exact_trace().backend
    more: dict[int, Any] = {}
    said: dict[str, str] = {}
    for lit in parsed.literals:
        if lit.pos in replace or "." not in lit.text:
            continue
        if "e" in lit.text.lower():
            return
        sign = -1 if negated_literal(lit, parsed.text) else 1
        # "0.001245 - 0.00376": a subtracted literal may be a negative piece's magnitude
        after_minus = parsed.text[: lit.pos].rstrip().endswith(("-", "−"))
        decimals = len(lit.text.partition(".")[2])
        p = Printed(lit.text, Fraction(lit.text) * sign, decimals)
        for shown, exact, label, text in pieces:
            flips = (1, -1) if after_minus and sign > 0 else (1,)
            try:
                flip = next(
                    (
                        f
                        for f in flips
                        if any(prints_as(xp.ball(f * v, PRECISIONS[0]), p) for v in (shown, exact))
                    ),
                    None,
                )
            except (Undecided, TypeError):
                continue
            if flip is not None:
                more[lit.pos] = sign * flip * exact
                said[("-" if sign < 0 else "") + lit.text] = f"{text} in {label}"
                break
        else:
            return  # a literal read no way: mixing its print with exact values is no reading
    replace.update(more)
    sources.update(said)


def _earlier_results(
    parsed: sx.Expression,
    results: dict[str, Any],
    replace: dict[int, Any],
    sources: dict[str, str],
    labels: dict[str, str],
    skip: set[int] | frozenset[int] = frozenset(),
) -> None:
    """Read literals that repeat an earlier displayed line's printed result as its exact value.

    The source of such a literal is that line's label (``labels``: printed text → label).
    A literal subtracted (``4.1069 - 0.1742``) that no earlier line printed, whose
    negative an earlier line printed as its result (``-0.1742``), is that result's
    magnitude: the line adds the earlier result as a difference.
    """
    for lit in parsed.literals:
        if lit.pos in replace or lit.pos in skip or "." not in lit.text:
            continue
        negative = "-" + lit.text
        earlier_negative = negative in results and not isinstance(
            results[negative], sympy.MatrixBase
        )
        if negated_literal(lit, parsed.text) and earlier_negative:
            # "−0.5878" was an earlier line's result: the literal is its magnitude (and
            # repeats that line, not an earlier +0.5878)
            replace[lit.pos] = -results[negative]
            sources[negative] = labels.get(negative, _EARLIER)
        elif earlier_negative and lit.text not in results and _subtracted(lit, parsed.text):
            replace[lit.pos] = -results[negative]
            sources[lit.text] = labels.get(negative, _EARLIER)
        elif lit.text in results and not isinstance(results[lit.text], sympy.MatrixBase):
            replace[lit.pos] = results[lit.text]
            sources[lit.text] = labels.get(lit.text, _EARLIER)


def _subtracted(lit: sx.Literal, text: str) -> bool:
    """Whether the literal is subtracted: a minus after an operand (``4.1 − 0.17``)."""
    before = text[: lit.pos].rstrip()
    return before.endswith(("-", "−")) and not negated_literal(lit, text)
