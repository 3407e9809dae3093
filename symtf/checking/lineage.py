"""What a displayed line's literals stand for along the article's own chain of lines.

:mod:`symtf.checking.displayed` reads a line two ways: *as displayed* (literals as
written) and with each literal replaced by the exact value it stands for. This module
adds what the article's chain of lines says about its literals:

- **Read as itself upstream.** A literal that an earlier line of this line's lineage
  wrote and read as itself (``12.4`` in ``(12.4 + 58.0 + 67.87) / 3 = 46.19``) is read
  as itself again in ``12.4 − 46.19 = −33.79``: the reading is then that of the quantity
  the article computes, not a mix of unrounded values and rounded prints.
- **Through the chain.** A literal replaced by a value it does not print as (it repeats
  an earlier printed number that is itself off, or it is a copy slip) carries the
  earlier value forward: the line is then read *through the chain*, and the checks say so
  (:func:`carried`; JSON ``reading = "through_chain"``).
- **Copy slips.** A literal one or two digits away from a number printed a few lines
  before it (``0.2442`` where the line above gives ``0.2424``), that repeats no printed
  number and prints no quantity of the model, is a mistyped copy of it
  (:func:`copy_slips`). It is accepted only when one reading of the line, as displayed or
  through the chain, gives the line's printed result (the cause must fit the article's
  other numbers); the literal then gets a verdict of its own (:func:`copy_check`, cause
  ``copy-slip``), and the line's result is judged through the chain.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from fractions import Fraction
from typing import Any

import sympy

from symtf.backends.certify import PRECISIONS
from symtf.checking import repeated
from symtf.errors import SymtfError, Undecided
from symtf.numbers import Printed, parse_printed
from symtf.spec import Claim, Derivation

#: Article lines after a printed number within which a literal may be a copy of it.
COPY_LINES = 8
#: The fewest significant digits of a literal read as a copy slip (``0.25`` for ``0.35``
#: is too short to tell a slip from another number).
COPY_DIGITS = 3


@dataclass(frozen=True)
class Copy:
    """A literal that is a mistyped copy of a number printed shortly before it.

    Attributes:
        pos: The literal's offset in the expression.
        text: The literal as written (without a sign).
        negated: Whether a unary minus applies to it.
        source: The label of the claim that printed the number it copies.
        printed: That printed number, as written.
        line: Its article line.
        value: The exact value of the quantity it copies, in the literal's own sense
            (its magnitude when a minus sign stands before it).
        how: The slip in words (``two digits swapped``).
        repeats: For a literal repeating an earlier copy slip's literal, that literal's
            claim (it carries the same slip and gets no verdict of its own); else ``""``.
        repeats_line: The article line of that earlier literal.
    """

    pos: int
    text: str
    negated: bool
    source: str
    printed: str
    line: int | None
    value: Any
    how: str
    repeats: str = ""
    repeats_line: int | None = None

    @property
    def key(self) -> str:
        """The literal as ``stands_for`` keys it (``-0.2442`` under a minus sign)."""
        return ("-" if self.negated else "") + self.text

    def label(self, line_label: str) -> str:
        """The label of the literal's own claim: the line's, naming what it copies (for a
        repeat, the claim of the copy it repeats)."""
        return self.repeats or f"{line_label} (copy of {self.source})"


def written_upstream(ev: Any, sources: Mapping[str, str]) -> frozenset[str]:
    """The literals the earlier lines this line's literals stand for read as themselves."""
    out: set[str] = set()
    for ref in sources.values():
        out.update(ev.written_literals.get(ref, ()))
    return frozenset(out)


def remember_written(
    ev: Any, claim: Claim, parsed: Any, replace: Mapping[int, Any], upstream: frozenset[str]
) -> None:
    """Keep the decimal literals a line read as themselves (with its lineage's), for later lines."""
    mine = {lit.text for lit in parsed.literals if lit.pos not in replace and "." in lit.text}
    ev.written_literals[claim.label] = frozenset(
        ev.written_literals.get(claim.label, frozenset()) | mine | upstream
    )


#: Article lines after a displayed line's result within which a literal repeating one of
#: its numbers stands for that entry (as the draft's ``stands_for`` window).
ENTRY_LINES = 30
#: The same for a literal of at least :data:`LONG_DIGITS` significant digits (``−0.4161``
#: after a rotation matrix printed 46 lines before): such a match is far above chance.
LONG_ENTRY_LINES = 90
#: Significant digits from which a repeated number reaches back :data:`LONG_ENTRY_LINES`.
LONG_DIGITS = 4


def remember_entries(ev: Any, claim: Claim, value: Any) -> None:
    """Keep each number of a line's printed result of several numbers (a vector
    ``≈ [0.149, 1.0, 0.368]`` or a matrix) with its exact reading, for later lines that
    repeat one of them (``0.149 / 1.517``)."""
    from symtf.checking.wording import place

    flat = [p for row in claim.printed for p in row]
    if len(flat) < 2 or not isinstance(value, sympy.MatrixBase) or len(value) != len(flat):
        return
    shape = (len(claim.printed), len(claim.printed[0]))
    for k, (p, v) in enumerate(zip(flat, value, strict=True)):
        text = p.text.replace("−", "-").strip()
        if "." not in text or _significant(text) < 2:  # "0.5" is too short to tell apart
            continue
        # a matrix's number says where it sits (R(2), row 1, column 2); a vector's is the line's
        said = (
            claim.label if shape[0] == 1 else f"{claim.label}, {place(divmod(k, shape[1]), shape)}"
        )
        ev.printed_entries.setdefault(text, []).append((v, said, claim.source_line))


def shadowed_results(parsed: Any, claim: Claim, ev: Any, derivation: Any) -> set[int]:
    """The literals of a displayed line not read as an earlier line's printed result,
    because the article prints their number again, nearer, as an entry of a table it
    gives (by their positions in ``parsed``).

    In ``W = [[0.2, 0.1], [0.1, 0.2]]`` then ``0.707 × 0.2 + (-0.707) × 0.1``, the 0.1 is
    the weight stated just above, not a normalised value printed as 0.1 some lines
    before: the nearest printing of a number is the one a literal repeats.
    """
    line = claim.source_line
    if line is None:
        return set()
    if ev.stated_prints is None:
        given = {t.name for t in derivation.tensors}
        ev.stated_prints = [
            (
                c.source_line,
                frozenset(p.text.replace("−", "-").strip() for r in c.printed for p in r),
            )
            for c in derivation.claims
            if c.step in given and c.source_line is not None
        ]
    out: set[int] = set()
    for lit in parsed.literals:
        for text in (lit.text, "-" + lit.text):
            at = ev.printed_result_lines.get(text)
            if at is None:
                continue
            if any(at < seen <= line and lit.text in texts for seen, texts in ev.stated_prints):
                out.add(lit.pos)
    return out


def earlier_entries(
    parsed: Any,
    claim: Claim,
    ev: Any,
    replace: dict[int, Any],
    sources: dict[str, str],
    negated: Any,
) -> None:
    """Read the literals, read no other way, that repeat a number of an earlier line's
    result printed at most :data:`ENTRY_LINES` lines before (:data:`LONG_ENTRY_LINES` for a
    number of :data:`LONG_DIGITS` significant digits or more), as that entry's exact
    reading; ``sources`` names the line. Two such entries of different values make the
    literal ambiguous: it is not read so.
    """
    line = claim.source_line
    xp = None
    for lit in parsed.literals:
        if lit.pos in replace or "." not in lit.text or "e" in lit.text.lower():
            continue
        minus = negated(lit)
        window = ENTRY_LINES if _significant(lit.text) < LONG_DIGITS else LONG_ENTRY_LINES
        # "−0.5878" repeats a printed −0.5878 (the literal is its magnitude), else 0.5878
        tries = (("-" + lit.text, -1), (lit.text, 1)) if minus else ((lit.text, 1),)
        for key, sign in tries:
            hits = [
                (value, label, at)
                for value, label, at in ev.printed_entries.get(key, ())
                if line is None or at is None or 0 <= line - at <= window
            ]
            if not hits:
                continue
            if xp is None:
                xp = ev.exact_trace().backend
            value, label, _ = hits[-1]  # the nearest
            if any(not _same(xp, value, other) for other, _, _ in hits[:-1]):
                break  # two different quantities printed alike: no link is invented
            replace[lit.pos] = sign * value
            sources[key] = label
            break


def _same(xp: Any, a: Any, b: Any) -> bool:
    """Whether two exact values are the same quantity (equal as written, or not told
    apart by 128-bit balls)."""
    if a == b:
        return True
    try:
        return bool(xp.ball(sympy.sympify(a - b), PRECISIONS[0]).contains(0))
    except (Undecided, SymtfError, TypeError, ValueError, ArithmeticError):
        return False


#: Whether two exact values are the same quantity, for readers of printed results.
same_quantity = _same


def carried(parsed: Any, replace: Mapping[int, Any], xp: Any) -> list[tuple[Any, Any]]:
    """The replaced literals whose value does not print as the literal: ``(literal, value)``.

    Such a literal carries an earlier number forward that it is not a correct rounding
    of (an earlier number that is off, or a copy slip): the line is read through the chain.
    """
    from symtf.checking.slips import prints_as

    out = []
    for lit in parsed.literals:
        if lit.pos not in replace or "." not in lit.text or "e" in lit.text.lower():
            continue
        value = replace[lit.pos]
        try:
            p = Printed(lit.text, Fraction(lit.text), len(lit.text.partition(".")[2]))
            ball = xp.ball(sympy.sympify(value), PRECISIONS[0])
        except (Undecided, SymtfError, TypeError, ValueError, ArithmeticError):
            continue
        # a ball too wide to tell is not a carried error: only a certain miss counts
        if not prints_as(ball, p) and not _may_print_as(ball, p):
            out.append((lit, value))
    return out


def _may_print_as(ball: Any, p: Printed) -> bool:
    """Whether the ball meets the rounding interval of ``p`` (cannot rule the print out)."""
    from symtf.backends.certify import compare_ball
    from symtf.numbers import rounding_interval

    iv = rounding_interval(p)
    lo, hi = compare_ball(ball, iv.lo), compare_ball(ball, iv.hi)
    if lo is None or hi is None:
        return True
    return not (lo < 0 or hi > 0)


def copy_slips(
    parsed: Any,
    claim: Claim,
    derivation: Derivation,
    ev: Any,
    replace: Mapping[int, Any],
    itself: frozenset[str],
    matches: Any,
    negated: Any,
) -> list[Copy]:
    """The literals of a line, read no other way, that are mistyped copies of a number
    printed in the :data:`COPY_LINES` article lines before it.

    A literal qualifies when it has at least :data:`COPY_DIGITS` significant digits,
    repeats no number printed before it, prints no entry of the model (``matches``:
    literal → the trace entries it prints) and differs from exactly one earlier printed
    number (of the same sign and layout) in one digit, or two digits (swapped, or in a
    number of four significant digits or more) whose quantity is known. Lines without an
    article line (a derivation written by hand) have none.
    """
    line = claim.source_line
    if line is None or not getattr(claim, "match_literals", True):
        return []
    found = repeated.article_order(claim, derivation)
    if found is None:
        return []
    claims, here = found
    first = next((k for k, c in enumerate(claims[:here]) if c.expression == claim.expression), None)
    at = claims[first].source_line if first is not None else None
    if first is not None and at is not None:
        # a result restated with the chain that worked it out (8.125 again, as 1.25 + 2.75
        # + 4.125): its literals were written on the line it restates, before that line's
        # own result, so they are looked at from there
        here, line = first, at
    earlier = claims[:here]
    seen = {  # (the line's own literals, drafted as numbers of their own, are not before it)
        p.text.replace("−", "-").lstrip("+-").strip()
        for c in earlier
        if not (c.unmapped and c.source_line == line)
        for row in c.printed
        for p in row
    }
    written = {lit.text for lit in parsed.literals}
    near = [
        c
        for c in reversed(earlier)
        if c.source_line is not None and 0 <= line - c.source_line <= COPY_LINES
    ]
    given: frozenset[Fraction] | None = None  # found only for a literal that gets this far
    out = []
    for lit in parsed.literals:
        text = lit.text
        if lit.pos in replace or "." not in text or "e" in text.lower():
            continue
        earlier_copy = ev.copied.get(("-" if negated(lit) else "") + text)
        if earlier_copy is not None and text not in itself:
            # the same miscopied number written again: it carries the same slip
            out.append(dataclasses.replace(earlier_copy, pos=lit.pos))
            continue
        if text in itself or text in seen or _significant(text) < COPY_DIGITS:
            continue
        if given is None:
            given = repeated.exact_givens(derivation)
        if repeated.read_as_itself(text, given) or matches(lit):
            continue
        minus = negated(lit)
        hits: dict[str, tuple[Claim, Printed, Any, str]] = {}
        for c in near:
            flat = [p for row in c.printed for p in row]
            for k, p in enumerate(flat):
                how = _miscopy(text, p.text, minus)
                if how is None or p.text in hits or p.text.lstrip("+-−") in written:
                    continue  # (a number the line also writes as it is: no copy of it)
                value = _quantity(c, k, len(flat), ev)
                if value is not None:
                    hits[p.text] = (c, p, value, how)
        if len(hits) != 1:
            continue  # none, or several numbers it could be a copy of: no link is invented
        ((c, p, value, how),) = hits.values()
        out.append(
            Copy(
                lit.pos,
                text,
                minus,
                c.label,
                p.text,
                c.source_line,
                -value if minus else value,
                how,
            )
        )
    return out


def _significant(text: str) -> int:
    return len(text.lstrip("+-−").replace(".", "").lstrip("0"))


def _miscopy(text: str, printed: str, negated: bool) -> str | None:
    """How the literal ``text`` (a minus before it when ``negated``) miscopies ``printed``,
    or ``None`` when it is no copy of it."""
    p = printed.replace("−", "-").strip()
    if p.startswith("-") != negated:
        return None
    b = p.lstrip("+-")
    if "." not in b or len(b) != len(text) or b.index(".") != text.index(".") or b == text:
        return None
    diffs = [i for i, (x, y) in enumerate(zip(text, b, strict=True)) if x != y]
    if not all(text[i].isdigit() and b[i].isdigit() for i in diffs):
        return None
    if len(diffs) == 1:
        i = diffs[0]
        return f"one digit changed ({b[i]} written {text[i]})"
    if len(diffs) == 2:
        i, j = diffs
        if j == i + 1 and text[i] == b[j] and text[j] == b[i]:
            return f"two digits swapped ({b[i]}{b[j]} written {text[i]}{text[j]})"
        if _significant(text) >= 4:
            return f"two digits changed ({b[i]}…{b[j]} written {text[i]}…{text[j]})"
    return None


def _quantity(c: Claim, k: int, n: int, ev: Any) -> Any:
    """The exact value of the ``k``-th of the ``n`` numbers claim ``c`` prints, if known."""
    if c.expression is not None:
        m = ev.expression_values.get(c.label)
        return m[k] if isinstance(m, sympy.MatrixBase) and len(m) == n else None
    if c.step is None or c.unmapped or c.reduce is not None or c.word is not None:
        return None
    if c.at is not None:
        return None
    trace = ev.exact_trace()
    if c.step not in trace:
        return None
    v = trace.value(c.step)
    if not isinstance(v, sympy.MatrixBase):
        return None
    try:
        if c.index is not None:
            entries = [v[c.index[0], c.index[1]]]
        elif c.row is not None:
            entries = list(v.row(c.row))
        elif c.col is not None:
            entries = list(v.col(c.col))
        else:
            entries = list(v)
    except IndexError:
        return None
    return entries[k] if len(entries) == n else None


def rounds_right(copy: Copy, xp: Any) -> bool:
    """Whether the literal is a correct rounding of the value of the number it copies
    (then it is no slip: that number's own print was the one off)."""
    from symtf.checking.slips import prints_as

    try:
        p = Printed(copy.text, Fraction(copy.text), len(copy.text.partition(".")[2]))
        return prints_as(xp.ball(sympy.sympify(copy.value), PRECISIONS[0]), p)
    except (Undecided, SymtfError, TypeError, ValueError, ArithmeticError):
        return False


def remember_copies(ev: Any, claim: Claim, copies: Sequence[Copy]) -> None:
    """Keep the copy slips a line made, for later lines that write the same number again."""
    for c in copies:
        if not c.repeats:
            ev.copied.setdefault(
                c.key,
                dataclasses.replace(
                    c, repeats=c.label(claim.label), repeats_line=claim.source_line
                ),
            )


def copy_check(
    copy: Copy, claim: Claim, quantity: Any, decide: Any, short: Any, check_type: Any
) -> Any:
    """The verdict on a copy slip's literal: the number it copies, against what it shows.

    ``quantity`` makes a certified quantity of an exact value; ``decide`` classifies one
    printed number against it; ``check_type`` builds the check.
    """
    signed = copy.key
    p = parse_printed(signed, where=f"{claim.where}.expression")
    q = quantity(-copy.value if copy.negated else copy.value)
    r = decide(q, p, claim.rounding)
    exact = r.decimal or q.decimal()
    where = f" (line {copy.line})" if copy.line is not None else ""
    why = (
        f"{signed} copies {copy.source}'s {copy.printed}{where} with {copy.how}: "
        f"{copy.source} is {short(exact)}"
        + (f", which prints as {r.expected}" if r.expected else "")
    )
    extra = {
        "copy_of": {
            "claim": copy.source,
            "printed": copy.printed,
            "source_line": copy.line,
            "how": copy.how,
        },
        "literal_of": claim.label,
        "units_off": r.units_off,
    }
    return check_type(
        copy.label(claim.label), None, None, signed, r.expected, exact, r.verdict, why, None, extra
    )


def copy_claim(claim: Claim, check: Any) -> Claim:
    """The claim a copy slip's literal is checked as: one printed number on the line's line."""
    p = parse_printed(check.printed, where=f"{claim.where}.expression")
    return dataclasses.replace(
        claim,
        label=check.claim,
        step=None,
        expression=None,
        stands_for={},
        printed=((p,),),
        index=None,
        row=None,
        col=None,
        note=f"a literal of {claim.label}",
    )


def is_copy(check: Any) -> bool:
    """Whether a check is the verdict on a copy slip's literal."""
    return "copy_of" in check.extra


def is_literal(check: Any) -> bool:
    """Whether a check is the verdict on one literal of a displayed line (a copy slip, or
    a literal read as an expression of stated numbers), not on the line's result."""
    return "literal_of" in check.extra


def split(checks: Sequence[Any]) -> tuple[tuple[Any, ...], tuple[Any, ...]]:
    """A line's checks, and the checks of its literals (copy slips, expressions)."""
    return (
        tuple(c for c in checks if not is_literal(c)),
        tuple(c for c in checks if is_literal(c)),
    )


# ----------------------------------------------------------------------------- in words


_GOOD = ("exact", "rounded")


def explain_through(
    p: Printed,
    va: str,
    da: str | None,
    vb: str,
    db: str | None,
    words: Mapping[str, str],
    operands: tuple[str, str, list[dict[str, Any]]],
    copies: Sequence[Copy],
) -> str:
    """A line one of whose literals carries an earlier value it is no rounding of, read
    as displayed and through the chain (the verdict is the chain's).

    ``words``: each replaced literal and what it stands for, in the article's words;
    ``operands``: the line as written and with its literals' values.
    """
    written, unrounded, _ = operands
    shown = f"as displayed, {written} = {significant(da)}"
    which = "; ".join(f"{k} is {v}" for k, v in words.items())
    chain = f"through the chain ({which}) it is {unrounded} = {significant(db)}"
    if va in _GOOD and vb in _GOOD:
        return f"{shown} and {chain}: both readings give {p.text}"
    if vb in _GOOD:
        if copies:
            what = f"only the copied {', '.join(c.key for c in copies)} is off"
        else:
            carried = [k for k, v in words.items() if ", exactly " in v]
            what = f"only the earlier {', '.join(carried) or 'number'} it repeats is off"
        return f"{shown}, which does not give {p.text}; {chain}: right for the quantity, {what}"
    if va in _GOOD:
        return (
            f"{shown}, right with the numbers it displays; {chain}, so {p.text} is "
            f"{'a slip' if vb == 'slip' else vb} for the quantity"
        )
    return f"{shown}; {chain}: neither reading gives {p.text}"


def key_of(lit: Any, negated: bool, keyed: Mapping[str, str]) -> str | None:
    """The key a literal has in ``stands_for`` (``-0.5`` under a unary minus), if any."""
    text = str(lit.text)
    if negated and "-" + text in keyed:
        return "-" + text
    return text if text in keyed else None


def significant(s: str | None, digits: int = 7) -> str:
    """A certified decimal cut after ``digits`` significant digits (``…`` marks a cut; the
    integer part is never cut)."""
    if s is None:
        return "(undecided)"
    body = s.rstrip("…")
    if "e" in body.lower() or "." not in body:
        return s
    seen, end = 0, len(body)
    for i, ch in enumerate(body):
        if ch.isdigit() and (seen or ch != "0"):
            seen += 1
            if seen == digits:
                end = i + 1
                break
    end = max(end, body.index("."))
    return s if end >= len(body) else body[:end] + "…"


def carried_fields(
    chain: Sequence[tuple[Any, Any]],
    negated: Any,
    sources: Mapping[str, str],
    copies: Sequence[Copy],
    quantity: Any,
) -> list[dict[str, Any]]:
    """JSON ``carried``: each literal read through the chain (``negated``: whether a unary
    minus applies to it), what it stands for and that value's leading certified digits
    (and, for a copy slip, what it copies)."""
    by_pos = {c.pos: c for c in copies}
    out = []
    for lit, value in chain:
        key = key_of(lit, negated(lit), sources) or lit.text
        signed = -value if key.startswith("-") else value  # as the key writes it
        item: dict[str, Any] = {
            "position": lit.pos,
            "literal": key,
            "stands_for": sources.get(key, ""),
            "value": significant(quantity(sympy.sympify(signed)).decimal()),
        }
        copy = by_pos.get(lit.pos)
        if copy is not None:
            item["copy_of"] = {
                "claim": copy.source,
                "printed": copy.printed,
                "source_line": copy.line,
            }
        out.append(item)
    return out


__all__ = [
    "COPY_DIGITS",
    "COPY_LINES",
    "ENTRY_LINES",
    "LONG_DIGITS",
    "LONG_ENTRY_LINES",
    "Copy",
    "carried",
    "carried_fields",
    "copy_check",
    "copy_claim",
    "copy_slips",
    "earlier_entries",
    "explain_through",
    "is_copy",
    "is_literal",
    "key_of",
    "remember_copies",
    "remember_entries",
    "remember_written",
    "rounds_right",
    "significant",
    "split",
    "written_upstream",
]
