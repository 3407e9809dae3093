"""Displayed arithmetic: check a line like ``e^2.309 ≈ 10.068`` two ways.

*As displayed*: the expression evaluated exactly with its literals as written,
which is what a reader redoing the line gets. *Exact*: the same expression with
each literal replaced by the exact value it stands for — declared in the claim
(``stands_for``), the exact reading of an earlier displayed line whose printed
result it repeats, or an entry of the line's own lineage it is the printed
rounding of: an input of the step the line computes (the step one of whose
entries the printed result is a rounding of), or an input of that step's worked
pieces (``l0.ln1.centered`` for ``l0.ln1``). A literal that matches nothing there
stays as written (``0.1*1`` is 0.1, whatever else in the model prints as 0.1);
``stands_for = "none"`` keeps every literal as written. The claim's
verdict is the exact reading's when any literal stood for something (that is
the quantity the article computes), else the displayed one's; the explanation
says which reading holds, so hidden precision is told apart from an error, and
JSON ``reading`` names it (``through_chain`` when a literal carries an earlier
value it does not print as: :mod:`symtf.checking.lineage`, which also finds copy
slips).

This module is long on purpose: the readings of one line share its parsing, its
substitutions and their wording; what the article's chain of lines says about a
literal lives in :mod:`symtf.checking.lineage`.
"""

from __future__ import annotations

import bisect
import dataclasses
import math
import re
from dataclasses import dataclass
from fractions import Fraction
from typing import Any

import sympy

from symtf.backends.certify import PRECISIONS, to_fmpq
from symtf.backends.exact import infinite_sign
from symtf.checking import expressed, lineage, repeated
from symtf.checking.wording import Names
from symtf.errors import ExpressionError, SpecError, Undecided
from symtf.language import expr as sx
from symtf.language.latexmath import parse as parse_expression
from symtf.language.latexmath import split_links
from symtf.language.syntax import Link
from symtf.numbers import Printed, rounding_interval
from symtf.spec import Claim, Derivation

#: The source of a literal repeating an earlier line's result whose label is not known.
_EARLIER = "an earlier line"

_REF = re.compile(
    r"^\s*([A-Za-z_][A-Za-z0-9_.]*(?:\[\d+\])?)\s*\[\s*(\d+)\s*(?:,\s*(\d+)\s*)?\]\s*$"
)
_BARE = re.compile(r"^\s*([A-Za-z_][A-Za-z0-9_.]*(?:\[\d+\])?)\s*$")


def check_expression(claim: Claim, ev: Any, derivation: Derivation) -> tuple[Any, ...]:
    """Check one expression claim; returns its :class:`~symtf.checking.report.Check` entries.

    A claim whose expression is a chain ``a = b`` (each link computing the one printed
    value, as ``0.0025 × 0.498 + (-0.00749) × 0.502 = 0.001245 - 0.00376 = -0.002515``
    writes it) still gets one verdict per printed number: every link is checked both
    ways, and the number takes the worst verdict of its links, naming the link that
    gives it (see :func:`_combine`).

    Raises:
        SpecError: For an expression that cannot be parsed or evaluated, naming the claim.
    """
    assert claim.expression is not None
    links = split_links(claim.expression)
    if len(links) == 1:
        checks, value = _check_link(claim, ev, derivation)
        _remember(ev, claim, value)
        return checks
    if not all(links):
        raise SpecError(
            f"{claim.where}.expression: expected an expression on each side of every relation, "
            f"found {claim.expression!r}"
        )
    parts = [_check_link(c, ev, derivation) for c in _link_claims(claim, links)]
    # the line's value for later lines: its first link's reading, as when each link was a claim
    _remember(ev, claim, parts[0][1])
    split = [lineage.split(checks) for checks, _ in parts]
    copies = {c.printed: c for _, cs in split for c in cs}  # one verdict per copied literal
    return (*copies.values(), *_combine(claim, links, [checks for checks, _ in split]))


def _check_link(claim: Claim, ev: Any, derivation: Derivation) -> tuple[tuple[Any, ...], Any]:
    """Check one expression (a claim, or one link of a chain claim) both ways.

    Returns:
        Its checks, and its exact reading (the value later lines may repeat).

    Raises:
        SpecError: For an expression that cannot be parsed or evaluated, naming the claim.
    """
    from symtf.checking.evaluation import Quantity
    from symtf.checking.report import Check
    from symtf.checking.verdict import decide

    where = f"{claim.where}.expression"
    assert claim.expression is not None
    try:
        parsed = parse_expression(claim.expression, where=where)
    except ExpressionError as e:
        raise SpecError(str(e)) from None
    trace = ev.exact_trace()
    xp = trace.backend
    resolve = _resolver(trace, derivation, ev, claim)
    printed = [p for row in claim.printed for p in row]

    def quantity(e: sympy.Expr) -> Any:
        return Quantity(lambda prec: xp.ball(e, prec), lambda: (e, xp))

    def fits_entries(vals: Any) -> bool:  # every printed number a correct rounding of these
        return len(vals) == len(printed) and all(
            decide(quantity(v), p, claim.rounding, derivation.symbols).verdict in _GOOD
            for v, p in zip(vals, printed, strict=True)
        )

    def fits(value: Any) -> bool:  # every printed number a correct rounding of this reading
        return fits_entries(_entries(value))

    try:
        shown = parsed.evaluate(resolve, backend=xp)
        replace, sources, anchored = _substitutions(parsed, claim, trace, derivation, ev, resolve)
        # literals the line's own lineage read as themselves, and the inputs the article
        # states (x = 0.5), leave no rounded value in the reading: it is the quantity the
        # article computes
        itself = lineage.written_upstream(ev, sources) | repeated.stated_inputs(claim, derivation)
        if not anchored and replace:
            anchored = not [t for t in _unread(parsed, replace, derivation) if t not in itself]
        copies = lineage.copy_slips(
            parsed,
            claim,
            derivation,
            ev,
            replace,
            itself,
            lambda lit: bool(_matches(lit, parsed.text, trace)),
            lambda lit: _negated(lit, parsed.text),
        )
        # a literal that rounds the exact value right is no slip (the earlier print is off)
        copies = [c for c in copies if not lineage.rounds_right(c, xp)]
        if copies:
            trial = {**replace, **{c.pos: c.value for c in copies}}
            through = parsed.evaluate(resolve, trial, backend=xp)
            # a copy slip must fit the article's numbers: one reading gives the printed result
            # (a literal repeating an earlier copy slip carries it whatever the line gives)
            if all(c.repeats for c in copies) or fits(shown) or fits(through):
                replace = trial
                for c in copies:
                    sources[c.key] = c.label(claim.label)
                anchored = not [t for t in _unread(parsed, replace, derivation) if t not in itself]
            else:
                copies = []
        # a literal that stands for a simple expression of the article's stated numbers
        # (0.556 for 0.5/0.9), when that reading is unique and makes the line right
        expressions = expressed.readings(
            parsed,
            claim,
            derivation,
            replace,
            itself,
            skip=lambda lit: bool(_matches(lit, parsed.text, trace)),
            negated=lambda lit: _negated(lit, parsed.text),
            evaluate=lambda values: _entries(parsed.evaluate(resolve, values, backend=xp)),
            fits=fits_entries,
            xp=xp,
        )
        if expressions:
            replace = {**replace, **{r.pos: r.value for r in expressions}}
            for r in expressions:
                sources[r.signed] = r.formula
            anchored = not [t for t in _unread(parsed, replace, derivation) if t not in itself]
        exact = parsed.evaluate(resolve, replace, backend=xp) if replace else shown
    except ExpressionError as e:
        raise SpecError(str(e)) from None
    _remember_pieces(ev, claim, parsed, resolve, replace, xp)

    shown_vals = _entries(shown)
    exact_vals = _entries(exact)
    if len(printed) != len(shown_vals):
        raise SpecError(
            f"{claim.where}.printed: expected {len(shown_vals)} value(s) for {claim.expression!r}, "
            f"found {len(printed)}"
        )

    names = Names(derivation.claims, trace)
    labels = {c.label for c in derivation.claims}
    words = {k: v if v in labels else names.reference(v) for k, v in sources.items()}
    for c in copies:
        again = f"line {c.repeats_line}" if c.repeats_line is not None else c.repeats
        words[c.key] = f"a miscopy of {c.source}'s {c.printed}" + (
            f", as on {again}" if c.repeats else ""
        )
    for r in expressions:
        words[r.signed] = r.words()
    operands = _unrounded(parsed, replace, quantity, names, labels)
    chain = lineage.carried(parsed, replace, xp)
    chain_words = dict(words)  # and what each literal carried through the chain is
    for lit, value in chain:
        key = lineage.key_of(lit, _negated(lit, parsed.text), words)
        if key is not None and not words[key].startswith("a miscopy"):
            signed = -value if key.startswith("-") else value  # as the key writes it
            chain_words[key] = (
                f"{words[key]}, exactly {lineage.significant(quantity(sympy.sympify(signed)).decimal())}"
            )

    checks = []
    for k, (p, a, b) in enumerate(zip(printed, shown_vals, exact_vals, strict=True)):
        qa, qb = quantity(a), quantity(b)
        ra = decide(qa, p, claim.rounding, derivation.symbols)
        rb = decide(qb, p, claim.rounding, derivation.symbols)
        (va, ea, wa), (vb, eb, wb) = ((r.verdict, r.expected, r.explanation) for r in (ra, rb))
        da, db = ra.decimal or qa.decimal(), rb.decimal or qb.decimal()
        substituted = bool(replace)
        verdict, expected, exact_str, value = (vb, eb, db, b) if substituted else (va, ea, da, a)
        why = _explain(
            claim,
            p,
            va,
            da,
            vb,
            db,
            words,
            substituted,
            operands,
            chain_words if chain else None,
            copies,
        )
        reading = (
            "as_displayed" if not substituted else "through_chain" if chain else "exact_reading"
        )
        if substituted and not anchored and va in _GOOD and vb not in _GOOD:
            # A mixed reading: some literals unrounded, another (a sum of them printed
            # in prose) left as written, and no step of the model it computes. It is no
            # quantity of the article, so it cannot call a line that is right as
            # displayed off.
            verdict, expected, exact_str, value = va, ea, da, a
            reading = "as_displayed"
            why = _explain_mixed(
                p, va, da, db, words, operands, _unread(parsed, replace, derivation)
            )
        symbolic = rb if substituted else ra
        if symbolic.cancels:
            why += (
                f" ({symbolic.cancels} cancels: the value is the same for every {symbolic.cancels})"
            )
        if symbolic.verdict == "symbolic":  # what it depends on, never worded as an error
            why = _explain_symbolic(claim, p, va, da, words, substituted, symbolic.explanation)
        pending = xp.undecided_in(value) if verdict == "undecided" else []
        if pending:  # a branch of the model itself could not be taken: say which
            file = claim.where.rsplit(": claims[", 1)[0]
            why += f"; it depends on the model's branch at {file}: " + "; ".join(pending)
        index = (0, k) if len(printed) > 1 else None
        extra = {
            "expression": claim.expression,
            "entry": [k] if index is not None else None,  # a vector result: its own index
            "units_off": (rb if substituted else ra).units_off,
            "as_displayed": {"exact": da, "expected": ea, "verdict": va, "explanation": wa},
            "exact_reading": {
                "exact": db,
                "expected": eb,
                "verdict": vb,
                "explanation": wb,
                "stands_for": sources,
                **({"unrounded": operands[1], "operands": operands[2]} if substituted else {}),
            },
            "reading": reading,
            **(
                {
                    "carried": lineage.carried_fields(
                        chain, lambda lit: _negated(lit, parsed.text), sources, copies, quantity
                    )
                }
                if chain
                else {}
            ),
        }
        if symbolic.verdict == "symbolic":
            extra.update(symbolic.extra)
        how = (qb if substituted else qa).decided_by
        if how is not None:
            extra["decided_by"] = how  # balls or exact: displayed lines have no fast trace
        checks.append(
            Check(claim.label, None, index, p.text, expected, exact_str, verdict, why, value, extra)
        )
    if any(ch.verdict in ("slip", "wrong") for ch in checks):
        checks = _with_rounded_literals(checks, parsed, claim, derivation, replace, resolve, xp)
    if anchored or not replace:
        lineage.remember_written(ev, claim, parsed, replace, itself)
    lineage.remember_copies(ev, claim, copies)
    own = [
        lineage.copy_check(c, claim, quantity, decide, _short, Check)
        for c in copies
        if not c.repeats
    ] + [expressed.literal_check(r, claim, quantity, decide, _short, Check) for r in expressions]
    return (*own, *checks), exact


def _with_rounded_literals(
    checks: list[Any],
    parsed: sx.Expression,
    claim: Claim,
    derivation: Derivation,
    replace: dict[int, Any],
    resolve: Any,
    xp: Any,
) -> list[Any]:
    """The line's checks, accepted when its repeated literals are read as rounded prints.

    A literal left as written that repeats an earlier printed number no step explains
    (:mod:`symtf.checking.repeated`) is known only to its printed digits: when one point
    of its rounding interval gives every printed result of the line, the off results
    become ``rounded`` with that reason (JSON ``accepted_by`` = ``rounded_inputs`` and
    ``rounded_literals``); otherwise they keep their verdicts.
    """
    loose = repeated.loose_literals(parsed, claim, derivation, replace)
    if not loose:
        return checks
    printed = [p for row in claim.printed for p in row]
    if any(p.value is None for p in printed):
        return checks

    def evaluate(values: Any) -> list[Any]:
        return _entries(parsed.evaluate(resolve, values, backend=xp))

    def ball(e: Any) -> Any:
        try:
            x = xp.ball(e, 128)
        except (Undecided, ExpressionError, SpecError):
            return None
        return x if x.is_finite() else None

    try:
        ok = repeated.reached(parsed, loose, replace, evaluate, ball, printed, claim.rounding, xp)
    except (Undecided, ExpressionError, SpecError, ArithmeticError):
        ok = False
    if not ok:
        return checks
    out = []
    for ch in checks:
        if ch.verdict not in ("slip", "wrong"):
            out.append(ch)
            continue
        extra = dict(ch.extra)
        extra["accepted_by"] = "rounded_inputs"
        extra["rounded_literals"] = [
            {
                "literal": lo.text,
                "repeats": lo.label,
                "source_line": lo.line,
                **({"softmax_of": lo.logits_label} if lo.logits else {}),
            }
            for lo in loose
        ]
        why = f"{ch.explanation}; {repeated.explain(loose, ch.printed)}"
        out.append(dataclasses.replace(ch, verdict="rounded", explanation=why, extra=extra))
    return out


#: How far a verdict is from a right number: a chain's printed number takes its worst link's.
_SEVERITY = {"exact": 0, "rounded": 1, "symbolic": 2, "undecided": 3, "slip": 4, "wrong": 5}


def _link_claims(claim: Claim, links: list[str]) -> list[Claim]:
    """One claim per link of a chain claim, each with the ``stands_for`` keys it writes.

    Raises:
        SpecError: For a ``stands_for`` key that no link writes.
    """
    parsed = []
    for text in links:
        try:
            parsed.append(parse_expression(text, where=f"{claim.where}.expression"))
        except ExpressionError as e:
            raise SpecError(str(e)) from None
    out = []
    for text, tree in zip(links, parsed, strict=True):
        keys = {k: v for k, v in claim.stands_for.items() if _writes(tree, k)}
        out.append(dataclasses.replace(claim, expression=text, stands_for=keys))
    for key in claim.stands_for:
        if not any(_writes(tree, key) for tree in parsed):
            raise SpecError(f"{claim.where}.stands_for: no literal {key!r} in {claim.expression!r}")
    return out


def _writes(parsed: sx.Expression, key: str) -> bool:
    """Whether an expression writes the literal (or bracketed row) a ``stands_for`` key names."""
    if key.strip().startswith("["):
        return any(r.key == _row_key(_split_key(key)) for r in _rows_of(parsed))
    return bool(parsed.literals_with_text(key.strip().lstrip("-−").strip()))


def _combine(claim: Claim, links: list[str], parts: list[tuple[Any, ...]]) -> tuple[Any, ...]:
    """One check per printed number of a chain claim, from the checks of its links.

    Each number takes the worst verdict of its links (a later link on a tie: the one the
    article wrote the result from); its readings are that link's, the JSON adds ``link``
    (its place, from 0) and ``links`` (every link with both readings), and the
    explanation names each link, the deciding one last.
    """
    n = len(links)
    out = []
    for k, column in enumerate(zip(*parts, strict=True)):
        j = max(range(n), key=lambda i: (_SEVERITY.get(column[i].verdict, 3), i))
        chosen = column[j]
        said = [
            f"link {i + 1} of {n}, {links[i]} = {_short(c.exact)}: {_word(c.verdict)}"
            for i, c in enumerate(column)
            if i != j
        ]
        why = "; ".join([*said, f"link {j + 1} of {n} gives the verdict: {chosen.explanation}"])
        extra = dict(chosen.extra)
        extra["expression"] = claim.expression
        extra["link"] = j
        extra["links"] = [
            {
                "expression": links[i],
                "verdict": c.verdict,
                "exact": c.exact,
                "as_displayed": c.extra["as_displayed"],
                "exact_reading": c.extra["exact_reading"],
            }
            for i, c in enumerate(column)
        ]
        out.append(dataclasses.replace(chosen, explanation=why, extra=extra))
        assert out[-1].index == column[0].index, k
    return tuple(out)


def decided_by_link(claim: Claim, check: Any) -> Claim:
    """The claim narrowed to the link of a chain that gave ``check`` its verdict.

    A claim of one expression is returned as it is; what re-reads a displayed line to
    explain a number (its inputs, a slip, a computation in a float format) reads this.
    """
    j = check.extra.get("link") if check is not None else None
    if claim.expression is None or not isinstance(j, int):
        return claim
    links = split_links(claim.expression)
    if not 0 <= j < len(links):
        return claim
    try:
        return _link_claims(claim, links)[j]
    except SpecError:
        return claim


def _explain(
    claim: Claim,
    p: Printed,
    va: str,
    da: str | None,
    vb: str,
    db: str | None,
    words: dict[str, str],
    substituted: bool,
    operands: tuple[str, str, list[dict[str, Any]]],
    through: dict[str, str] | None = None,
    copies: list[lineage.Copy] | tuple[()] = (),
) -> str:
    """The claim's explanation in the article's words.

    ``words`` maps each literal that stands for an unrounded value to the article's name
    for it; ``operands`` is the line as written with references in words, and the line
    with every such literal replaced by its unrounded value. ``through``: when some
    literal carries an earlier value it does not print as (the line is read through the
    chain), ``words`` with what each such value is; ``copies``: the literals that are
    copy slips.
    """
    written, unrounded, _ = operands
    shown = f"as displayed, {written} = {_short(da)}"
    if not substituted:
        return f"{shown}: {_word(va)}"
    if through is not None and not (va in _GOOD and vb in _GOOD):
        # (both readings right: the chain changes nothing a reader must tell apart)
        return lineage.explain_through(p, va, da, vb, db, through, operands, copies)
    which = "; ".join(f"{k} is {v}" for k, v in words.items())
    exact = f"with the unrounded values ({which}) it is {unrounded} = {_short(db)}"
    good = ("exact", "rounded")
    if va in good and vb in good:
        return f"{shown} and {exact}: both readings give {p.text}"
    if vb in good:
        return f"{shown}, which does not give {p.text}; {exact}, so the article carried unrounded values (hidden precision)"
    if va in good:
        return f"{shown}, consistent with computing from the rounded inputs; {exact}, so {p.text} is {'a slip' if vb == 'slip' else vb}"
    return f"{shown}; {exact}: neither reading gives {p.text}"


_GOOD = ("exact", "rounded")


def _unread(parsed: sx.Expression, replace: dict[int, Any], derivation: Derivation) -> list[str]:
    """The decimal literals of a line left as written by its exact reading that may stand
    for a rounded value.

    A literal that is exactly an entry of a tensor the article gives (``K[0][0] = 0.1``),
    or a whole number written with decimals (``× 0.0``), is read as itself: it leaves no
    rounded value in the reading.
    """
    given = repeated.exact_givens(derivation)
    return [
        lit.text
        for lit in parsed.literals
        if lit.pos not in replace
        and "." in lit.text
        and not repeated.read_as_itself(lit.text, given)
    ]


def _explain_mixed(
    p: Printed,
    va: str,
    da: str | None,
    db: str | None,
    words: dict[str, str],
    operands: tuple[str, str, list[dict[str, Any]]],
    unread: list[str],
) -> str:
    """A line right as displayed whose partly unrounded reading computes nothing known."""
    written, unrounded, _ = operands
    which = "; ".join(f"{k} is {v}" for k, v in words.items())
    kept = ", ".join(unread)
    return (
        f"as displayed, {written} = {_short(da)}: {_word(va)}; with only some values unrounded"
        f" ({which}) it is {unrounded} = {_short(db)}, but {kept} stays as printed and that"
        f" reading computes no step of the article, so it does not decide {p.text}"
    )


def _explain_symbolic(
    claim: Claim,
    p: Printed,
    va: str,
    da: str | None,
    sources: dict[str, str],
    substituted: bool,
    depends: str,
) -> str:
    """A displayed line whose value depends on a symbol: what it depends on, and where it prints."""
    if not substituted or da is None:
        return f"as displayed, {claim.expression} {depends}"
    shown = f"as displayed, {claim.expression} = {_short(da)}"
    if va in ("exact", "rounded"):
        shown += ", consistent with computing from the rounded inputs"
    stands = ", ".join(f"{k} = {v}" for k, v in sources.items())
    return f"{shown}; with the values the literals stand for ({stands}) it {depends}"


_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_.]*(?:\s*\[[^\]]*\])?")


def _unrounded(
    parsed: sx.Expression, replace: dict[int, Any], quantity: Any, names: Names, labels: set[str]
) -> tuple[str, str, list[dict[str, Any]]]:
    """The line with references in the article's words, and with its unrounded operands.

    Returns the two texts and, for each literal read as an unrounded value, its position
    in the parsed text, its text and the value's certified digits.

    A reference to a step (``sum(l0.h0.pattern[0])``) is written as the article names it
    (``sum(pattern Birds row)``); the second text also writes each literal that stands
    for an unrounded value as that value's certified digits (``5.652233…``).
    """
    text = parsed.text
    spans: list[tuple[int, int, str, str]] = []  # start, end, as written, unrounded
    used: list[dict[str, Any]] = []
    for ref in parsed.references:
        m = _NAME.match(text, ref.pos)
        if m is None or ref.name in labels:
            continue
        said = names.reference(str(ref)) if ref.index else names.step(ref.name)
        bare = text[ref.pos - 1 : ref.pos] == "(" and text[m.end() : m.end() + 1] == ")"
        spans.append((ref.pos, m.end(), said if bare or not ref.index else f"({said})", ""))
    for lit in parsed.literals:
        if lit.pos in replace:
            value = replace[lit.pos]
            digits = _short(quantity(sympy.sympify(value)).decimal())
            used.append({"position": lit.pos, "literal": lit.text, "unrounded": digits})
            if digits.startswith("-"):
                digits = f"({digits})"
            spans.append((lit.pos, lit.pos + len(lit.text), lit.text, digits))
    written, unrounded, last = [], [], 0
    for start, end, said, digits in sorted(spans):
        if start < last:
            continue
        written += [text[last:start], said]
        unrounded += [text[last:start], digits or said]
        last = end
    written.append(text[last:])
    unrounded.append(text[last:])
    return "".join(written), "".join(unrounded), used


def _word(v: str) -> str:
    return {"exact": "exactly as printed", "rounded": "correctly rounded"}.get(v, v)


def _short(s: str | None) -> str:
    if s is None:
        return "(undecided)"
    head, dot, tail = s.partition(".")
    return s if len(tail) <= 6 else f"{head}{dot}{tail[:6]}…"


def _entries(v: Any) -> list[sympy.Expr]:
    if isinstance(v, sympy.MatrixBase):
        return list(v)
    return [sympy.sympify(v) if not isinstance(v, sympy.Basic) else v]


def _resolver(trace: Any, derivation: Derivation, ev: Any, claim: Claim) -> Any:
    labels = {c.label: c for c in derivation.claims}
    done = ev.expression_values

    def resolve(name: str, index: tuple[int, ...]) -> Any:
        if name in trace:
            value = trace.value(name)
        elif name in labels:
            other = labels[name]
            if other is claim:
                raise SpecError(f"{claim.where}.expression: the claim refers to itself")
            if other.step is not None:
                value = _claim_value(trace, other)
            elif name in done:
                value = done[name]
            else:
                raise SpecError(
                    f"{claim.where}.expression: {name} is a displayed line checked later or in a cycle; "
                    "refer only to earlier displayed lines"
                )
        else:
            from symtf.suggest import close_steps

            close = close_steps(name, [*trace, *labels])
            if close:  # otherwise the expression language says it does not know the name
                raise LookupError(
                    f"no step or claim called {name!r}; did you mean {' or '.join(close)}?"
                )
            return None
        if not isinstance(value, sympy.MatrixBase):
            raise SpecError(f"{claim.where}.expression: {name} is not a matrix of numbers")
        true = trace.true_shape(name) if name in trace else value.shape
        try:
            if len(index) == 1 and true is not None and len(true) == 1:
                if not 0 <= index[0] < true[0]:
                    raise IndexError
                return value[0, index[0]]  # a vector step: its entry
            if len(index) == 2:
                if not (0 <= index[0] < value.rows and 0 <= index[1] < value.cols):
                    raise IndexError
                return value[index[0], index[1]]
            if len(index) == 1:
                if not 0 <= index[0] < value.rows:
                    raise IndexError
                return sympy.ImmutableMatrix(value.row(index[0]))
        except IndexError:
            raise SpecError(
                f"{claim.where}.expression: {name}{list(index)} is outside its shape "
                f"{tuple(true) if true is not None else value.shape}"
            ) from None
        return value if value.shape != (1, 1) else value[0, 0]

    return resolve


def _claim_value(trace: Any, c: Claim) -> sympy.ImmutableMatrix:
    v = trace.value(c.step)
    if c.index is not None:
        return sympy.ImmutableMatrix([[v[c.index]]])
    if c.row is not None:
        return sympy.ImmutableMatrix(v.row(c.row))
    if c.col is not None:
        return sympy.ImmutableMatrix(v.col(c.col))
    return v


def _nearer(lines: dict[str, int | None], text: str, line: int | None) -> bool:
    """Whether a result printed as ``text`` at ``line`` is the one later literals repeat:
    the first so printed, or one printed again further down the article than the
    literals' reach (:data:`lineage.LONG_ENTRY_LINES`) from it (a literal ``0.5`` in
    ``3*0.5`` repeats the ``sin(0.524) = 0.5`` beside it, not a ``θ₆₃ = 0.5`` two hundred
    lines up). Within that reach the first stays: a line's chain prints its terms again."""
    if text not in lines:
        return True
    before = lines[text]
    return line is not None and before is not None and line - before > lineage.LONG_ENTRY_LINES


def _blank_zero(text: str, value: Any) -> bool:
    """Whether a result printed as a zero (``0.0``, ``-0.00``) is not zero: a tiny value
    rounded away. Its print has no digit to tell it apart from the zeros articles write as
    inputs (a weight ``0.0``, a bias), so no later literal is taken to repeat it."""
    digits = text.strip().lstrip("+-−")
    return bool(re.fullmatch(r"0*\.?0*", digits)) and "0" in digits and value != 0


def _remember(ev: Any, claim: Claim, value: Any) -> None:
    m = value if isinstance(value, sympy.MatrixBase) else sympy.ImmutableMatrix([[value]])
    ev.expression_values[claim.label] = m
    if claim.printed and len(claim.printed) == 1 and len(claim.printed[0]) == 1:
        text = claim.printed[0][0].text
        if _blank_zero(text, m[0, 0]):
            pass  # a later literal 0.0 is a zero the article writes, not this rounded result
        elif _nearer(ev.printed_result_lines, text, claim.source_line):
            ev.printed_results[text] = m[0, 0]
            ev.printed_labels[text] = claim.label
            ev.printed_result_lines[text] = claim.source_line
    elif claim.printed and len(claim.printed) == 1 and len(claim.printed[0]) == len(m):
        # a vector result: a later line may repeat it as a bracketed literal
        key = _row_key(p.text for p in claim.printed[0])
        ev.printed_results.setdefault(key, sympy.ImmutableMatrix([list(m)]))
        ev.printed_labels.setdefault(key, claim.label)
        lineage.remember_entries(ev, claim, m)  # or one of its numbers, on its own
    else:  # a matrix or a column: a later line may repeat one of its numbers
        lineage.remember_entries(ev, claim, m)


def _row_key(texts: Any) -> str:
    """A bracketed row of literals as one key: ``[1.0,4.0,0.0]`` (signs kept, spaces dropped)."""
    return "[" + ",".join(t.replace("−", "-").strip() for t in texts) + "]"


@dataclass(frozen=True)
class _Row:
    """A bracketed row of number literals in a displayed line, ``[1.0, -4.0, 0.0]``.

    Attributes:
        literals: Its literals, in order.
        signs: The sign written before each (``-1`` for ``-4.0``).
        key: Its text as :func:`_row_key` writes it.
    """

    literals: tuple[sx.Literal, ...]
    signs: tuple[int, ...]
    key: str


def _rows_of(parsed: sx.Expression) -> list[_Row]:
    """Every bracketed row whose items are all number literals (perhaps signed)."""
    out: list[_Row] = []

    def walk(node: Any) -> None:
        if isinstance(node, sx.Brackets):
            lits, signs = [], []
            for item in node.items:
                sign = 1
                while isinstance(item, sx.Unary):
                    sign = -sign if item.op == "-" else sign
                    item = item.operand
                if not isinstance(item, sx.Literal):
                    break
                lits.append(item)
                signs.append(sign)
            else:
                if len(lits) > 1:
                    texts = [
                        ("-" if g < 0 else "") + lit.text
                        for lit, g in zip(lits, signs, strict=True)
                    ]
                    out.append(_Row(tuple(lits), tuple(signs), _row_key(texts)))
                    return
        for child in _children(node):
            walk(child)

    walk(parsed.root)
    return out


def _children(node: Any) -> list[Any]:
    out: list[Any] = []
    for name in getattr(node, "__slots__", ()):
        v = getattr(node, name, None)
        if isinstance(v, tuple):
            out.extend(x for x in v if hasattr(x, "__slots__") and not isinstance(x, str))
        elif hasattr(v, "__slots__") and not isinstance(v, (str, int)):
            out.append(v)
    return out


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


def _substitutions(
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
    """:func:`_substitutions` for a line read where it stands."""
    replace: dict[int, Any] = {}
    sources: dict[str, str] = {}
    rows = _rows_of(parsed)
    for key, ref in claim.stands_for.items():
        where = f"{claim.where}.stands_for.{key}"
        if key.strip().startswith("["):
            row = next((r for r in rows if r.key == _row_key(_split_key(key))), None)
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
    for step, _ij, entry, _ball in _result_entries(claim, trace):
        along = _read_along(parsed, rows, trace, _lineage(step, trace), replace, sources)
        if along is not None and _computes(parsed, resolve, along[0], entry, trace):
            found = along
            break
    if (
        found is None
    ):  # a line whose printed result is off: the step it computes is the one it equals
        found = _anchored(parsed, rows, trace, replace, sources, resolve)
    replace, sources = found if found is not None else (replace, sources)
    _earlier_results(
        parsed, results, replace, sources, ev.printed_labels, skip=shadowed
    )  # numbers of rows read no other way
    # a number of an earlier line's vector result, repeated on its own
    lineage.earlier_entries(
        parsed, claim, ev, replace, sources, lambda lit: _negated(lit, parsed.text)
    )
    _earlier_links(parsed, claim, ev, replace, sources)
    anchored = (
        found is not None or bool(claim.stands_for) or not _unread(parsed, replace, derivation)
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
        rows: list[_Row] = []
        for link in split_links(c.expression):
            try:
                rows += _rows_of(parse_expression(link, where=c.where))
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
        hits = found.get((_negated(lit, parsed.text), lit.text))
        if lit.pos in replace or not hits or any(v != hits[0][0] for v, _ in hits):
            continue
        replace[lit.pos] = hits[0][0]
        sources[("-" if _negated(lit, parsed.text) else "") + lit.text] = hits[0][1]


def _chain_key(claim: Claim) -> tuple[int | str, str] | None:
    """The links of one chain ``a = b = c`` share their article line and printed result
    (the claim's label, in a file that does not name the article's lines)."""
    if not claim.printed:
        return None
    if claim.source_line is None:
        return "claim", claim.label
    return claim.source_line, _row_key(p.text for row in claim.printed for p in row)


def _pieces(node: Any, root: bool = True) -> list[Any]:
    """The compound nodes under ``node`` (brackets, calls, powers, and the first k > 1
    operands of a chain), the whole expression excluded."""
    out: list[Any] = []
    if isinstance(node, sx.Chain):
        for k in range(1, len(node.rest) + (0 if root else 1)):
            out.append(sx.Chain(node.pos, node.first, node.rest[:k]))
    elif not root and isinstance(node, (sx.Call, sx.Power)):
        out.append(node)
    for child in _children(node):
        out.extend(_pieces(child.node if isinstance(child, Link) else child, False))
    return out


def _piece_text(text: str, node: Any) -> str:
    """A piece as the line writes it, from its first character to its last literal (and the
    brackets that close inside it)."""
    start = node.pos
    ends = [lit.pos + len(lit.text) for lit in _literals_under(node)]
    end = max(ends, default=len(text))
    while text[start:end].count("(") > text[start:end].count(")"):
        close = text.find(")", end)
        if close < 0:
            break
        end = close + 1
    while text[start:end].count(")") > text[start:end].count("("):
        opening = text.rfind("(", 0, start)
        if opening < 0:
            break
        start = opening
    piece = text[start:end].strip()
    whole = text[:start].rstrip().endswith("(") and text[end:].lstrip().startswith(")")
    return f"({piece})" if whole else piece


def _literals_under(node: Any) -> list[Any]:
    if isinstance(node, sx.Literal):
        return [node]
    out = []
    for child in _children(node):
        out.extend(_literals_under(child.node if isinstance(child, Link) else child))
    return out


def _remember_pieces(
    ev: Any, claim: Claim, parsed: sx.Expression, resolve: Any, replace: dict[int, Any], xp: Any
) -> None:
    """Keep each compound piece of a link of a chain, for the links after it.

    In ``0.498 × (0.0025 - (-0.002515)) = 0.498 × 0.005015 = 0.002497`` the second link's
    0.005015 is the first link's bracket worked out: it stands for that bracket's exact
    reading, not for itself (which, beside the unrounded 0.498, mixes the two readings).
    """
    key = _chain_key(claim)
    if key is None:
        return
    pieces = ev.chain_pieces.setdefault(key, [])
    for node in _pieces(parsed.root):
        try:
            shown = parsed.evaluate(resolve, backend=xp, node=node)
            exact = parsed.evaluate(resolve, replace, backend=xp, node=node) if replace else shown
        except (ExpressionError, SpecError, LookupError, TypeError):
            continue
        if isinstance(shown, sympy.MatrixBase) or isinstance(exact, sympy.MatrixBase):
            continue
        pieces.append((shown, exact, claim.label, _piece_text(parsed.text, node)))


def _earlier_links(
    parsed: sx.Expression, claim: Claim, ev: Any, replace: dict[int, Any], sources: dict[str, str]
) -> None:
    """Read a literal that an earlier link of the same chain worked out as that piece.

    A literal read no other way, whose printed rounding holds a compound piece of an
    earlier link (as displayed, or as its exact reading), stands for the piece's exact
    reading; the source names the piece and its line.
    """
    key = _chain_key(claim)
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
        sign = -1 if _negated(lit, parsed.text) else 1
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
        if _negated(lit, parsed.text) and earlier_negative:
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
    return before.endswith(("-", "−")) and not _negated(lit, text)


def _split_key(key: str) -> list[str]:
    return [c for c in re.split(r"[\s,]+", key.strip().strip("[]")) if c]


def _negated(lit: sx.Literal, text: str) -> bool:
    """Whether a unary minus applies to the literal (``-0.487``, ``(−0.5)``, ``x + -1``).

    A minus after an operand (``0.3090 − 0.8968``) is a subtraction: the literal is the
    positive number subtracted.
    """
    before = text[: lit.pos].rstrip(" (")
    if not before.endswith(("-", "−")):
        return False
    rest = before[:-1].rstrip()
    return not rest or not (rest[-1].isalnum() or rest[-1] in ".)]²³⁴⁵⁶⁷⁸⁹⁰¹ᵀ_")


def _read_along(
    parsed: sx.Expression,
    rows: list[_Row],
    trace: Any,
    lineage: dict[str, int],
    replace: dict[int, Any],
    sources: dict[str, str],
) -> tuple[dict[int, Any], dict[str, str]] | None:
    """The literals read as entries (rows first, then single numbers) of ``lineage``'s steps.

    ``None`` when no further literal is read.
    """
    more, more_sources = dict(replace), dict(sources)
    for row in rows:
        if any(lit.pos in more for lit in row.literals):
            continue
        if not any("." in lit.text for lit in row.literals):
            continue  # [2, 2, 1], like the integer 2, stands for itself
        hit = _row_match(row, trace, lineage)
        if hit is not None:
            name, i, values = hit
            for lit, sign, e in zip(row.literals, row.signs, values, strict=True):
                more[lit.pos] = sign * e
            more_sources[row.key.replace(",", ", ")] = _row_ref(trace, name, i)
    for lit in parsed.literals:
        if lit.pos in more or "." not in lit.text:
            continue
        found = _trace_match(lit, parsed.text, trace, lineage)
        if found is not None:
            name, (i, j), value = found
            more[lit.pos] = value
            more_sources[lit.text] = _entry_ref(trace, name, i, j)
    return (more, more_sources) if len(more) > len(replace) else None


def _entry_ref(trace: Any, name: str, i: int, j: int) -> str:
    true = trace.true_shape(name)
    if true is not None and len(true) <= 1:
        return name if not true else f"{name}[{j}]"
    return f"{name}[{i}, {j}]"


def _row_ref(trace: Any, name: str, i: int) -> str:
    true = trace.true_shape(name)
    return name if true is not None and len(true) == 1 else f"{name}[{i}]"


def _row_match(row: _Row, trace: Any, lineage: dict[str, int]) -> tuple[str, int, list[Any]] | None:
    """A row of a lineage step whose every entry prints as the row's signed literals (the
    nearest step first): its name, row and entries."""
    for name in sorted(lineage, key=lambda n: lineage[n]):
        v = trace.value(name)
        if not isinstance(v, sympy.MatrixBase) or v.cols != len(row.literals):
            continue
        for i in range(v.rows):
            if all(
                _prints_as(v[i, j], lit, sign, trace)
                for j, (lit, sign) in enumerate(zip(row.literals, row.signs, strict=True))
            ):
                return name, i, [v[i, j] for j in range(v.cols)]
    return None


def _prints_as(e: Any, lit: sx.Literal, sign: int, trace: Any) -> bool:
    if infinite_sign(e) or "e" in lit.text.lower():
        return False
    from symtf.checking.slips import prints_as

    decimals = len(lit.text.partition(".")[2])
    try:
        b = trace.backend.ball(e, PRECISIONS[0])
    except (Undecided, TypeError):
        return False
    return prints_as(b, Printed(lit.text, Fraction(lit.text) * sign, decimals))


def _anchored(
    parsed: sx.Expression,
    rows: list[_Row],
    trace: Any,
    replace: dict[int, Any],
    sources: dict[str, str],
    resolve: Any,
) -> tuple[dict[int, Any], dict[str, str]] | None:
    """The reading along the lineage of the step one of whose entries the line equals.

    Tried for the steps whose inputs hold an entry or a row that one of the line's
    literals prints, in trace order: the first step whose entry the line then equals
    exactly (a guide on balls, as :func:`_computes`) is the step the line computes.
    """
    if resolve is None:
        return None
    touched: set[str] = set()
    for lit in parsed.literals:
        if lit.pos not in replace and "." in lit.text:
            touched.update(name for name, *_ in _matches(lit, parsed.text, trace))
    if not touched:
        return None
    xp = trace.backend
    for step in trace:
        lineage = _lineage(step, trace)
        if not touched & set(lineage):
            continue
        found = _read_along(parsed, rows, trace, lineage, replace, sources)
        v = trace.value(step)
        if found is None or not isinstance(v, sympy.MatrixBase):
            continue
        try:
            first = _entries(parsed.evaluate(resolve, found[0]))[0]
            line = xp.ball(first, PRECISIONS[0])
        except (ExpressionError, Undecided, TypeError):
            continue
        balls = _index(trace).balls
        for i in range(v.rows):
            for j in range(v.cols):
                b = balls.get((step, (i, j)))
                if (
                    b is not None
                    and b.overlaps(line)
                    and _computes(parsed, resolve, found[0], v[i, j], trace)
                ):
                    return found
    return None


def _computes(
    parsed: sx.Expression, resolve: Any, replace: dict[int, Any], entry: Any, trace: Any
) -> bool:
    """Whether the line, with these literals replaced, equals the step entry (first value).

    Decided on balls of the difference at 128 and 256 bits: a guide to which reading
    the line is, never a verdict (the verdict is then certified on that reading).
    """
    if resolve is None:
        return False
    try:
        value = parsed.evaluate(resolve, replace)
    except ExpressionError:
        return False
    first = _entries(value)[0]
    xp = trace.backend
    for prec in PRECISIONS[:2]:
        try:
            b = xp.ball(first - entry, prec)
        except (Undecided, TypeError):
            return False
        if not b.contains(0):
            return False
    return True


def _result_entries(claim: Claim, trace: Any) -> list[tuple[str, tuple[int, int], Any, Any]]:
    """Trace entries the line's first printed value is a rounding of (candidates for its step)."""
    if not claim.printed or claim.printed[0][0].is_infinite or claim.printed[0][0].is_fraction:
        return []
    return _entries_in(rounding_interval(claim.printed[0][0]), trace)


def _lineage(step: str, trace: Any) -> dict[str, int]:
    """The steps a literal of a line computing ``step`` may stand for, by distance.

    The step's inputs are at distance 1, the inputs of its worked pieces
    (``l0.ln1.centered`` for ``l0.ln1``) at distance 2. A literal in
    ``0.241*1.1 + 0.285*1.2 = 0.607`` is then read as an input of the step printed
    as 0.607 (``l0.h0.v``), never as an equal number elsewhere in the model.
    """
    dist: dict[str, int] = {}
    for i in trace[step].inputs:
        if i in trace:
            dist[i] = 1
    for i in list(dist):
        if i.startswith(step + "."):
            for k in trace[i].inputs:
                if k in trace and k != step:
                    dist.setdefault(k, 2)
    return dist


def _trace_match(
    lit: sx.Literal, text: str, trace: Any, lineage: dict[str, int]
) -> tuple[str, tuple[int, int], Any] | None:
    """The entry of the line's lineage whose printed rounding is this literal (sign from the text).

    Among several, the nearest step wins, then the first in trace order.
    """
    hits = [h for h in _matches(lit, text, trace) if h[0] in lineage]
    if not hits:
        return None
    name, ij, e, _ = min(hits, key=lambda h: lineage[h[0]])
    return name, ij, e


_Entry = tuple[str, tuple[int, int], Any, Any]


@dataclass(frozen=True)
class _Index:
    """Every finite numeric entry of a trace with its 128-bit ball, found three ways.

    Attributes:
        entries: ``(step, (i, j), exact value, ball)`` in trace order.
        mids: The balls' float midpoints, ascending (a guide to the entries near a number).
        order: The place in :attr:`entries` of each of :attr:`mids`.
        balls: Each entry's ball by ``(step, (i, j))``.
    """

    entries: list[_Entry]
    mids: list[float]
    order: list[int]
    balls: dict[tuple[str, tuple[int, int]], Any]


def _index(trace: Any) -> _Index:
    """The trace's :class:`_Index` (made once per trace)."""
    cached: _Index | None = getattr(trace, "_symtf_index", None)
    if cached is None:
        xp = trace.backend
        out: list[_Entry] = []
        for name in trace:
            v = trace.value(name)
            if not isinstance(v, sympy.MatrixBase):
                continue
            for i in range(v.rows):
                for j in range(v.cols):
                    e = v[i, j]
                    if infinite_sign(e):  # a masked score
                        continue
                    try:
                        out.append((name, (i, j), e, xp.ball(e, PRECISIONS[0])))
                    except (Undecided, TypeError):
                        continue
        order = sorted(range(len(out)), key=lambda k: _mid(out[k][3]))
        balls = {(name, ij): b for name, ij, _, b in out}
        cached = _Index(out, [_mid(out[k][3]) for k in order], order, balls)
        trace._symtf_index = cached  # the trace is read-only: a safe cache
    return cached


def _entries_of(trace: Any) -> list[_Entry]:
    """Every finite numeric entry of a trace with its 128-bit ball (computed once per trace)."""
    return _index(trace).entries


def _mid(b: Any) -> float:
    """A ball's midpoint as a float (±inf for one beyond floats: never inside a printed
    number's rounding interval)."""
    try:
        return float(b.mid())
    except (OverflowError, ValueError):
        return math.inf


def _matches(lit: sx.Literal, text: str, trace: Any) -> list[tuple[str, tuple[int, int], Any, Any]]:
    """Every trace entry whose printed rounding is this literal, in trace order (a literal
    under a unary minus prints a negative entry)."""
    negative = _negated(lit, text)
    decimals = len(lit.text.partition(".")[2])
    if "e" in lit.text.lower():
        return []
    try:
        value = Fraction(lit.text)
    except ValueError:  # not a plain decimal literal: it stands for nothing in the trace
        return []
    iv = rounding_interval(Printed(lit.text, -value if negative else value, decimals))
    return [(name, ij, -e if negative else e, b) for name, ij, e, b in _entries_in(iv, trace)]


def _entries_in(iv: Any, trace: Any) -> list[tuple[str, tuple[int, int], Any, Any]]:
    """Every trace entry certainly inside the interval ``iv`` (its ends excluded), in order.

    The float midpoints only narrow the search to the entries near ``iv`` (with a margin
    far wider than any float rounding); each entry is then decided on its ball.
    """
    index = _index(trace)
    mids, order = index.mids, index.order
    lo, hi = to_fmpq(iv.lo), to_fmpq(iv.hi)  # once per interval, not once per entry
    flo, fhi = float(iv.lo), float(iv.hi)
    margin = 1e-9 * max(abs(flo), abs(fhi)) + 1e-300
    start = bisect.bisect_left(mids, flo - margin)
    stop = bisect.bisect_right(mids, fhi + margin)
    out = []
    for k in sorted(order[start:stop]):  # back in trace order
        name, ij, e, b = index.entries[k]
        if b > lo and b < hi:  # certified: the whole ball inside the open interval
            out.append((name, ij, e, b))
    return out
