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

This module checks a line and its links; reading each literal as what it stands for is
:mod:`~symtf.checking.displayed.readings`, matching it to an entry of the line's lineage
:mod:`~symtf.checking.displayed.matching`, what the lines above leave for it
:mod:`~symtf.checking.displayed.rows`, and the wording of a verdict
:mod:`~symtf.checking.displayed.wording`. What the article's chain of lines says about a
literal lives in :mod:`symtf.checking.lineage`.
"""

from __future__ import annotations

import dataclasses
from typing import Any

import sympy

from symtf.checking import expressed, lineage, repeated
from symtf.checking.displayed import linked
from symtf.checking.displayed.matching import matches
from symtf.checking.displayed.readings import substitutions
from symtf.checking.displayed.rows import (
    negated_literal,
    remember,
    remember_pieces,
    row_key,
    rows_of,
    split_key,
    value_entries,
)
from symtf.checking.displayed.wording import (
    GOOD,
    explain_mixed,
    explain_reading,
    explain_symbolic,
    short,
    unread_literals,
    unrounded_note,
    word,
)
from symtf.checking.wording import Names
from symtf.errors import ExpressionError, SpecError, Undecided
from symtf.language import expr as sx
from symtf.language.latexmath import parse as parse_expression
from symtf.language.latexmath import split_links
from symtf.spec import Claim, Derivation


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
        remember(ev, claim, value)
        return checks
    if not all(links):
        raise SpecError(
            f"{claim.where}.expression: expected an expression on each side of every relation, "
            f"found {claim.expression!r}"
        )
    parts = []
    first = None
    for k, c in enumerate(_link_claims(claim, links)):
        parts.append(_check_link(c, ev, derivation))
        if k == 0:  # a later line standing for the chain's result reads its first link
            first = ev.displayed_lines.get(claim.label)
    if first is not None:
        ev.displayed_lines[claim.label] = first
    # the line's value for later lines: its first link's reading, as when each link was a claim
    remember(ev, claim, parts[0][1])
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
            decide(quantity(v), p, claim.rounding, derivation.symbols).verdict in GOOD
            for v, p in zip(vals, printed, strict=True)
        )

    def fits(value: Any) -> bool:  # every printed number a correct rounding of this reading
        return fits_entries(value_entries(value))

    try:
        shown = parsed.evaluate(resolve, backend=xp)
        replace, sources, anchored = substitutions(parsed, claim, trace, derivation, ev, resolve)
        # literals the line's own lineage read as themselves, and the inputs the article
        # states (x = 0.5), leave no rounded value in the reading: it is the quantity the
        # article computes
        itself = lineage.written_upstream(ev, sources) | repeated.stated_inputs(claim, derivation)
        if not anchored and replace:
            anchored = not [
                t for t in unread_literals(parsed, replace, derivation) if t not in itself
            ]
        copies = lineage.copy_slips(
            parsed,
            claim,
            derivation,
            ev,
            replace,
            itself,
            lambda lit: bool(matches(lit, parsed.text, trace)),
            lambda lit: negated_literal(lit, parsed.text),
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
                anchored = not [
                    t for t in unread_literals(parsed, replace, derivation) if t not in itself
                ]
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
            skip=lambda lit: bool(matches(lit, parsed.text, trace)),
            negated=lambda lit: negated_literal(lit, parsed.text),
            evaluate=lambda values: value_entries(parsed.evaluate(resolve, values, backend=xp)),
            fits=fits_entries,
            xp=xp,
        )
        if expressions:
            replace = {**replace, **{r.pos: r.value for r in expressions}}
            for r in expressions:
                sources[r.signed] = r.formula
            anchored = not [
                t for t in unread_literals(parsed, replace, derivation) if t not in itself
            ]
        exact = parsed.evaluate(resolve, replace, backend=xp) if replace else shown
    except ExpressionError as e:
        raise SpecError(str(e)) from None
    remember_pieces(ev, claim, parsed, resolve, replace, xp)

    shown_vals = value_entries(shown)
    exact_vals = value_entries(exact)
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
    operands = unrounded_note(parsed, replace, quantity, names, labels)
    chain = lineage.carried(parsed, replace, xp)
    chain_words = dict(words)  # and what each literal carried through the chain is
    for lit, value in chain:
        key = lineage.key_of(lit, negated_literal(lit, parsed.text), words)
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
        why = explain_reading(
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
        if substituted and not anchored and va in GOOD and vb not in GOOD:
            # A mixed reading: some literals unrounded, another (a sum of them printed
            # in prose) left as written, and no step of the model it computes. It is no
            # quantity of the article, so it cannot call a line that is right as
            # displayed off.
            verdict, expected, exact_str, value = va, ea, da, a
            reading = "as_displayed"
            why = explain_mixed(
                p, va, da, db, words, operands, unread_literals(parsed, replace, derivation)
            )
        symbolic = rb if substituted else ra
        if symbolic.cancels:
            why += (
                f" ({symbolic.cancels} cancels: the value is the same for every {symbolic.cancels})"
            )
        if symbolic.verdict == "symbolic":  # what it depends on, never worded as an error
            why = explain_symbolic(claim, p, va, da, words, substituted, symbolic.explanation)
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
                        chain,
                        lambda lit: negated_literal(lit, parsed.text),
                        sources,
                        copies,
                        quantity,
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
    line = linked.remember(ev, parsed, claim, derivation, replace, resolve)
    if any(ch.verdict in ("slip", "wrong") for ch in checks):
        checks = _with_rounded_literals(checks, parsed, claim, derivation, line)
    if anchored or not replace:
        lineage.remember_written(ev, claim, parsed, replace, itself)
    lineage.remember_copies(ev, claim, copies)
    own = [
        lineage.copy_check(c, claim, quantity, decide, short, Check)
        for c in copies
        if not c.repeats
    ] + [expressed.literal_check(r, claim, quantity, decide, short, Check) for r in expressions]
    return (*own, *checks), exact


def _with_rounded_literals(
    checks: list[Any],
    parsed: sx.Expression,
    claim: Claim,
    derivation: Derivation,
    line: linked.Line,
) -> list[Any]:
    """The line's checks, accepted when its repeated literals are read as rounded prints.

    A literal left as written that repeats an earlier printed number no step explains
    (:mod:`symtf.checking.repeated`) is known only to its printed digits, and so is a
    literal standing for an earlier line's result computed from such literals
    (:mod:`symtf.checking.displayed.linked`): when one point of their rounding intervals
    gives every printed result of the line (and of the earlier lines it stands for), the
    off results become ``rounded`` with that reason (JSON ``accepted_by`` =
    ``rounded_inputs`` and ``rounded_literals``); otherwise they keep their verdicts.
    """
    replace, resolve, xp = line.replace, line.resolve, line.xp
    loose = repeated.loose_literals(parsed, claim, derivation, replace)
    chained = linked.links(line)
    if not loose and not chained:
        return checks
    printed = [p for row in claim.printed for p in row]
    if any(p.value is None for p in printed):
        return checks

    def evaluate(values: Any, boxes: Any = None) -> list[Any]:
        return value_entries(parsed.evaluate(resolve, values, backend=xp, boxes=boxes))

    def ball(e: Any) -> Any:
        try:
            x = xp.ball(e, 128)
        except (Undecided, ExpressionError, SpecError):
            return None
        return x if x.is_finite() else None

    def decision(links: list[linked.Link]) -> Any:
        try:
            return repeated.decided(
                loose, replace, evaluate, ball, printed, claim.rounding, xp, links
            )
        except (Undecided, ExpressionError, SpecError, ArithmeticError):
            return None

    # the loose literals alone first (an earlier result at its exact reading); then the
    # earlier lines' literals move too, their prints holding at the same point. A line
    # stays flagged only when every reading is ruled out (certified)
    found = [decision([])] if loose else []
    if not (found and found[0] is not None and found[0].reached) and chained:
        found.append(decision(chained))
    else:
        chained = []
    if not any(d is not None and d.reached for d in found):
        if all(d is not None and d.reached is False for d in found):
            return checks
        return [_undecided(ch, found) for ch in checks]
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
        ] + [linked.literal_fields(parsed, link) for link in chained]
        why = f"{ch.explanation}; {repeated.explain(loose, ch.printed, linked.words(parsed, chained))}"
        out.append(dataclasses.replace(ch, verdict="rounded", explanation=why, extra=extra))
    return out


def _undecided(ch: Any, found: list[Any]) -> Any:
    """A slip or wrong entry whose rounded literals neither reach nor certainly miss it."""
    if ch.verdict not in ("slip", "wrong"):
        return ch
    reasons = sorted({d.reason for d in found if d is not None and d.reason})
    why = f" ({'; '.join(reasons)})" if reasons else ""
    return dataclasses.replace(
        ch,
        verdict="undecided",
        explanation=(
            f"{ch.explanation}; but its literals that repeat rounded prints are known only to "
            f"their printed precision: no point of their rounding intervals was found that "
            f"gives {ch.printed}, and none could be ruled out{why}, so whether it is right "
            "with rounded inputs cannot be decided"
        ),
    )


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
        return any(r.key == row_key(split_key(key)) for r in rows_of(parsed))
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
            f"link {i + 1} of {n}, {links[i]} = {short(c.exact)}: {word(c.verdict)}"
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
