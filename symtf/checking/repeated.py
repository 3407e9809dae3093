"""Displayed literals that repeat an earlier printed number no step explains.

``Loss1 = -ln(0.3099) = 1.1714``, after ``P("shoe")1 = 0.3099`` that no step of the
draft places: the article computed the loss from the unrounded probability, and 0.3099
is only that probability to four decimals. Read as written the line is off (-ln(0.3099)
= 1.171506); read as what it repeats, the literal is known only to its printed
precision, and the line is right when one point of its rounding interval gives the
printed result (a witness found by :func:`symtf.witness.decide`, never an
enclosure merely meeting the print); it stays flagged only when no point does (the
intervals cut into parts, each ruled out in certified balls), and is ``undecided``
when neither can be shown.

Without such a relation the repeated number must have at least :data:`MIN_DIGITS`
significant digits, or share its row's precision with a number that has
(:func:`chosen_value`): ``z_1 = 2.5`` is a value the article chose, exact as written.

A literal that a step places keeps its reading (as written, or the exact value it
stands for). When the row the repeated number belongs to is, as printed, the softmax of
an earlier printed row (probabilities after their logits), the literal is that softmax
entry with the logits known to their printed precision: the witness must give the
literal's own print and the line's result at one point of the logits' intervals, so
other printed numbers that fix the literal more tightly are not contradicted
(``-log(0.251) ≈ 1.383`` stays off when the printed logits fix P = 0.25063).

A literal that stands for an entry of a step that is the softmax of a given row known
only to its printed digits (``Loss1 = -ln(0.3099)`` with 0.3099 standing for
``Probabilities1 = softmax(Logits1)``, the logits read as printed) is read the same way:
that softmax entry with the logits known to their printed precision
(:func:`softmax_entries`).
"""

from __future__ import annotations

import re
from collections.abc import Callable, Hashable, Mapping, Sequence
from dataclasses import dataclass
from fractions import Fraction
from typing import Any, Protocol

import mpmath
import sympy

from symtf import ops
from symtf.backends import BallBackend, ExactBackend
from symtf.errors import SymtfError
from symtf.numbers import Interval, Printed, parse_printed, rounding_interval
from symtf.spec import Claim, Derivation

#: The fewest significant digits of a repeated number read as the rounded print of a
#: computed value when nothing else shows it was computed: ``0.3099`` is one, while
#: ``z_1 = 2.5`` reads as a value the article chose, exact as written.
MIN_DIGITS = 3

#: At most this share of a softmax row may print one unit off (the draft's "all but a few").
_OFF_SHARE = 4


@dataclass(frozen=True)
class Loose:
    """A literal of a displayed line that repeats an earlier printed number no step explains.

    Attributes:
        pos: The literal's offset in the expression.
        text: The literal as written.
        repeats: The earlier printed number it repeats.
        label: That number's claim label.
        line: That number's source line (``None`` in a derivation file).
        logits: The earlier printed row whose softmax the repeated number's row is, if any.
        logits_label: That row's claim label.
        index: The repeated number's place in its row.
        step: For a literal standing for a softmax step's entry, that step's name (its
            ``label`` then names the step too), else ``""``.
    """

    pos: int
    text: str
    repeats: Printed
    label: str
    line: int | None
    logits: tuple[Printed, ...] = ()
    logits_label: str = ""
    index: int = 0
    step: str = ""


def article_order(claim: Claim, derivation: Any) -> tuple[list[Claim], int] | None:
    """The derivation's claims in the article's order (a draft's unplaced ones included)
    and where ``claim`` stands among them; ``None`` when it is not one of them."""
    claims = list(getattr(derivation, "drafted", ()) or derivation.claims)
    here = next(
        (
            i
            for i, c in enumerate(claims)
            if c.label == claim.label and c.source_line == claim.source_line
        ),
        None,
    )
    return None if here is None else (claims, here)


def loose_literals(
    parsed: Any, claim: Claim, derivation: Derivation, replace: Mapping[int, Any]
) -> list[Loose]:
    """The literals of a line, left as written, that repeat an earlier unplaced printed number.

    Only the claims before ``claim`` are searched, nearest first. A literal that a placed
    claim (one with a step) also prints is left alone: a step explains that number.
    """
    if not getattr(claim, "match_literals", True):
        return []
    stood = softmax_entries(parsed, claim, derivation, replace)
    found = article_order(claim, derivation)
    if found is None:
        return stood
    claims, here = found
    earlier = claims[:here]
    given = exact_givens(derivation)
    out = []
    lines: dict[int, list[Printed]] | None = None
    for lit in parsed.literals:
        if lit.pos in replace or "." not in lit.text or read_as_itself(lit.text, given):
            continue
        hits = _repeated(lit.text, earlier)
        if not hits:
            continue
        # the nearest occurrence whose row is the softmax of an earlier row, else the nearest
        chosen = None
        for k, r, j in hits:
            logits, logits_label = _softmax_of(earlier[k].printed[r], earlier[:k])
            if logits:
                chosen = (k, r, j, logits, logits_label)
                break
        if chosen is None:
            k, r, j = hits[0]
            p = earlier[k].printed[r][j]
            if _significant(p) < MIN_DIGITS:
                if lines is None:
                    lines = _line_rows(earlier)
                if chosen_value(p, _row(earlier[k], r, lines)):
                    continue  # a chosen input (z = 2.5), not the print of a computed value
            chosen = (k, r, j, (), "")
        k, r, j, logits, logits_label = chosen
        c = earlier[k]
        out.append(
            Loose(
                lit.pos, lit.text, c.printed[r][j], c.label, c.source_line, logits, logits_label, j
            )
        )
    return stood + out


_ENTRY = re.compile(r"^\s*([A-Za-z_][A-Za-z0-9_.]*)\s*\[\s*(\d+)\s*(?:,\s*(\d+)\s*)?\]\s*$")


def softmax_entries(
    parsed: Any, claim: Claim, derivation: Any, replace: Mapping[int, Any]
) -> list[Loose]:
    """The literals the claim's ``stands_for`` replaced by an entry of a step that is the
    softmax of a given tensor known only to its printed digits (``softmax(logits, axis=-1)``
    with ``logits`` a rounded given): each is that softmax entry with the logits known to
    their printed precision, as a repeated number whose row is the softmax of printed logits.

    Only a non-negative literal is read so (a probability, written without a sign)."""
    steps = {s.name: s for s in getattr(derivation, "steps", ())}
    given = {g.name: g for g in getattr(derivation, "tensors", ()) if g.rounded}
    out = []
    for lit in parsed.literals:
        if lit.pos not in replace or lit.text.startswith(("-", "−")):
            continue
        ref = claim.stands_for.get(lit.text) if isinstance(claim.stands_for, Mapping) else None
        m = _ENTRY.match(ref or "")
        if m is None or m.group(1) not in steps:
            continue
        logits = _softmax_input(steps[m.group(1)].tree, given)
        if logits is None:
            continue
        n = logits.shape[-1]
        i, j = (0, int(m.group(2))) if m.group(3) is None else (int(m.group(2)), int(m.group(3)))
        if len(logits.shape) == 1 and m.group(3) is not None and i != 0:
            continue
        texts = logits.texts[i * n : (i + 1) * n]
        if len(texts) != n or not 0 <= j < n:
            continue
        try:
            row = tuple(parse_printed(t, where="logits") for t in texts)
            own = parse_printed(lit.text, where="literal")
        except (SymtfError, ValueError):
            continue
        if any(q.value is None for q in row) or own.value is None:
            continue
        name = m.group(1)
        out.append(Loose(lit.pos, lit.text, own, name, None, row, logits.name, j, step=name))
    return out


def _softmax_input(tree: Any, given: Mapping[str, Any]) -> Any:
    """The rounded given tensor a step is the last-axis softmax of (``softmax(z, axis=-1)``,
    ``z`` of one or two axes), or ``None``."""
    from symtf.language.lang import Name
    from symtf.language.syntax import Call, Literal, Unary

    if not isinstance(tree, Call) or tree.name != "softmax" or len(tree.args) != 1:
        return None
    arg = tree.args[0]
    if not isinstance(arg, Name) or arg.name not in given:
        return None
    g = given[arg.name]
    if len(g.shape) not in (1, 2):
        return None
    for key, v in tree.kwargs:
        if key != "axis":
            return None
        value = (
            -v.operand.value
            if isinstance(v, Unary) and v.op == "-" and isinstance(v.operand, Literal)
            else getattr(v, "value", None)
        )
        if value not in (-1, len(g.shape) - 1):
            return None
    return g


def _repeated(text: str, earlier: Sequence[Claim]) -> list[tuple[int, int, int]]:
    """Where the earlier printed numbers the literal repeats are, nearest first.

    Empty when a placed claim (one a step explains) prints it too.
    """
    try:
        x = Fraction(text.replace("−", "-"))
    except (ValueError, ZeroDivisionError):
        return []
    decimals = len(text.split(".", 1)[1]) if "." in text else 0
    hits: list[tuple[int, int, int]] = []
    for k in range(len(earlier) - 1, -1, -1):
        c = earlier[k]
        for r, row in enumerate(c.printed):
            for j, p in enumerate(row):
                if p.value is None or p.decimals < decimals or p.style == "sci":
                    continue
                if _round(abs(p.value), decimals) != abs(x):
                    continue
                if not c.unmapped:
                    return []  # a step places this number: its reading stays
                hits.append((k, r, j))
    return hits


def chosen_value(p: Printed, row: Sequence[Printed]) -> bool:
    """Whether a printed number reads as a value the article chose, exact as written.

    It has fewer than :data:`MIN_DIGITS` significant digits (``z = 2.5``), and no number
    of its row printed to as many decimals has more: ``-0.0032`` among ``0.6368,
    -1.9709`` is rounded to 4 decimals like them, a value as small as that printed to
    the row's precision, not one the article chose.
    """
    if _significant(p) >= MIN_DIGITS:
        return False
    return not any(
        q.decimals == p.decimals and q.style == p.style and _significant(q) >= MIN_DIGITS
        for q in row
    )


def _line_rows(claims: Sequence[Claim]) -> dict[int, list[Printed]]:
    """The numbers claims no step computes print on each article line (a list in prose is
    drafted one claim a number)."""
    out: dict[int, list[Printed]] = {}
    for c in claims:
        if c.unmapped and c.expression is None and c.source_line is not None:
            out.setdefault(c.source_line, []).extend(q for row in c.printed for q in row)
    return out


def _row(c: Claim, r: int, lines: Mapping[int, list[Printed]]) -> list[Printed]:
    """Row ``r`` of the claim, with the other numbers printed on its article line."""
    row = list(c.printed[r])
    return row + lines.get(c.source_line, []) if c.source_line is not None else row


def _significant(p: Printed) -> int:
    """Significant digits of a fixed-point print (``0.3099`` has 4, ``2.5`` has 2)."""
    digits = p.text.strip().lstrip("+-−").replace(".", "").lstrip("0")
    return len(digits)


def _round(x: Fraction, decimals: int) -> Fraction:
    """``x`` rounded half-up at ``decimals`` places."""
    scale = 10**decimals
    return Fraction(int(x * scale + Fraction(1, 2)), scale)


def _softmax_of(
    row: Sequence[Printed], earlier: Sequence[Claim]
) -> tuple[tuple[Printed, ...], str]:
    """The nearest earlier printed row whose softmax ``row`` is, as printed.

    Every entry of ``row`` must lie within one unit of its last digit of the softmax, and
    all but a quarter of them (at least one may be off) must be its correct roundings.
    """
    n = len(row)
    if n < 2 or any(p.value is None for p in row):
        return (), ""
    for c in reversed(earlier):
        for cand in c.printed:
            if len(cand) != n or any(q.value is None for q in cand):
                continue
            with mpmath.workdps(50):
                s = _softmax([_known(q.value) for q in cand])
                off = 0
                fits = True
                for p, v in zip(row, s, strict=True):
                    pv = _mp(p.value)
                    iv = rounding_interval(p)
                    lo, hi = _mp(iv.lo), _mp(iv.hi)
                    if abs(pv - v) >= _mp(p.ulp):
                        fits = False
                        break
                    if not lo <= v <= hi:
                        off += 1
            if fits and off <= max(1, n // _OFF_SHARE):
                return tuple(cand), c.label
    return (), ""


def loose_entries(loose: Sequence[Loose], prefix: tuple[Any, ...] = ()) -> dict[Hashable, Fraction]:
    """The entries the loose literals move (a logit, or the literal itself), each with its
    half-width; ``prefix`` keeps an earlier line's entries apart from this line's."""
    entries: dict[Hashable, Fraction] = {}
    for lo in loose:
        if lo.logits:
            for k, q in enumerate(lo.logits):
                # a whole number written with decimals (``0.0``) is read as itself, as in a line
                if q.value is not None and q.value.denominator != 1:
                    entries[(*prefix, lo.logits_label, k)] = q.ulp / 2
        else:
            entries[(*prefix, "literal", lo.pos)] = lo.repeats.ulp / 2
    return entries


def loose_centres(loose: Sequence[Loose], prefix: tuple[Any, ...] = ()) -> dict[Hashable, Fraction]:
    """The printed value each entry of :func:`loose_entries` moves from (a literal's
    magnitude, a logit as printed)."""
    out: dict[Hashable, Fraction] = {}
    for lo in loose:
        if lo.logits:
            for k, q in enumerate(lo.logits):
                if q.value is not None and q.value.denominator != 1:
                    out[(*prefix, lo.logits_label, k)] = q.value
        else:
            out[(*prefix, "literal", lo.pos)] = abs(_known(lo.repeats.value))
    return out


def loose_intervals(loose: Sequence[Loose]) -> list[Interval]:
    """The rounding intervals the loose literals standing for softmax entries must keep."""
    return [rounding_interval(lo.repeats) for lo in loose if lo.logits]


def loose_values(
    loose: Sequence[Loose],
    moves: Mapping[Any, Fraction],
    xp: ExactBackend,
    prefix: tuple[Any, ...] = (),
) -> tuple[dict[int, Any], list[Any]]:
    """The loose literals' values at a point (by position in the line), and the softmax
    entries they stand for (in the order of :func:`loose_intervals`)."""
    values: dict[int, Any] = {}
    own = []
    for lo in loose:
        sign = 1 if Fraction(lo.text.replace("−", "-")) >= 0 else -1
        if lo.logits:
            z = [
                _shifted(_known(q.value), moves.get((*prefix, lo.logits_label, k), 0))
                for k, q in enumerate(lo.logits)
            ]
            v = ops.softmax(xp, ops.tensor(xp, z)).data[lo.index]
            own.append(v)
            values[lo.pos] = sign * v
        else:
            centre = abs(_known(lo.repeats.value))
            shift = moves.get((*prefix, "literal", lo.pos), 0)
            values[lo.pos] = sign * _shifted(centre, shift)
    return values, own


def _shifted(centre: Fraction, shift: Any) -> Any:
    """A printed value moved by ``shift``: an exact shift, or a symbol standing for any
    shift of a box (the line is then enclosed over the box, :func:`decided`)."""
    if isinstance(shift, sympy.Basic) and not shift.is_Rational:
        return sympy.Rational(centre) + shift
    return sympy.Rational(centre + shift)


class Linked(Protocol):
    """A literal of the line that stands for an earlier line's result, that line's own
    literals known only to their printed precision (:mod:`symtf.checking.displayed.linked`)."""

    @property
    def pos(self) -> int:
        """The literal's offset in the line."""
        ...

    def entries(self) -> dict[Hashable, Fraction]: ...

    @property
    def sign(self) -> int:
        """1, or -1 when the literal is the earlier result's negative."""
        ...

    def centres(self) -> dict[Hashable, Fraction]: ...

    def intervals(self) -> list[Interval]: ...

    def interval(self) -> Interval:
        """The rounding interval of the earlier line's printed result."""
        ...

    def at(
        self, moves: Mapping[Any, Any], boxes: Mapping[Any, Any] | None = None
    ) -> tuple[Any, list[Any]]:
        """The literal's value at a point (or with symbols standing for the values of
        ``boxes``), and the values that must print as :meth:`intervals` says."""
        ...


def decided(
    loose: Sequence[Loose],
    replace: Mapping[int, Any],
    evaluate: Callable[[Mapping[int, Any], Mapping[Any, Any] | None], list[Any]],
    ball: Callable[[Any], Any],
    printed: Sequence[Printed],
    mode: str,
    xp: ExactBackend,
    linked: Sequence[Linked] = (),
) -> Any:
    """A witness, a certified refutation, or "could not decide" for the line's prints over
    its rounded literals' intervals (a :class:`~symtf.witness.Decision`).

    A witness is one point of the intervals whose certified values all print as printed
    (:func:`symtf.witness.decide`). Without one the box is cut into parts, each enclosed
    by evaluating the line once with a symbol for every moved value and enclosing that
    expression over the part (certified balls): a part is ruled out when a value's ball
    misses its interval.

    Args:
        loose: The line's loose literals.
        replace: The literals the exact reading already replaced (kept).
        evaluate: The line's entries with a replacement map (and the intervals of the
            symbols it may hold).
        ball: A certified ball of an exact value (``None`` when it cannot be had).
        printed: The line's printed results, in the order ``evaluate`` gives them.
        mode: The claim's rounding mode.
        xp: The exact backend ``evaluate`` and ``ball`` use (a softmax entry of printed
            logits is computed in it, by the registry's ``softmax``).
        linked: Replaced literals that stand for an earlier line's result computed from
            its own rounded literals: those move too, and the earlier line's printed
            results must hold at the same point.
    """
    from symtf.witness import Decision, decide

    entries, centres = loose_entries(loose), loose_centres(loose)
    rmode = "half-up" if mode == "any" else mode
    intervals: list[Interval] = [rounding_interval(p, rmode) for p in printed]
    intervals += loose_intervals(loose)
    for link in linked:
        entries.update(link.entries())
        centres.update(link.centres())
        intervals += link.intervals()
    if not entries:
        return Decision(None, reason="no literal moves")

    def values(moves: Mapping[Any, Any], boxes: Mapping[Any, Any] | None = None) -> list[Any]:
        vals = dict(replace)
        moved, own = loose_values(loose, moves, xp)
        vals.update(moved)
        for link in linked:
            vals[link.pos], more = link.at(moves, boxes)
            own += more
        return [*evaluate(vals, boxes), *own]

    def at(moves: Mapping[Any, Fraction]) -> list[Any] | None:
        try:
            out = [ball(e) for e in values(moves)]
        except (ArithmeticError, TypeError, ValueError, LookupError):
            return None
        return None if any(x is None for x in out) else out

    full = decide(list(entries.items()), at, _enclosure(entries, centres, values, xp), intervals)
    if full.reached is not None or not linked:
        return full
    # no certificate over the earlier lines' literals: a relaxation may give one, each
    # earlier result standing for any value of its own printed interval (a witness point
    # gives it one of those), so a part of it ruled out rules out the points it holds
    free, at_print = loose_entries(loose), loose_centres(loose)
    for n, link in enumerate(linked):
        iv = link.interval()
        free[("result", n)], at_print[("result", n)] = (iv.hi - iv.lo) / 2, (iv.lo + iv.hi) / 2

    def relaxed(moves: Mapping[Any, Any], boxes: Mapping[Any, Any] | None = None) -> list[Any]:
        vals = dict(replace)
        moved, own = loose_values(loose, moves, xp)
        vals.update(moved)
        for n, link in enumerate(linked):
            vals[link.pos] = link.sign * _shifted(at_print[("result", n)], moves[("result", n)])
        return [*evaluate(vals, boxes), *own]

    wide = [rounding_interval(p, rmode) for p in printed] + loose_intervals(loose)
    ruled = decide(
        list(free.items()), lambda _: None, _enclosure(free, at_print, relaxed, xp), wide
    )
    return Decision(False, boxes=ruled.boxes) if ruled.reached is False else full


def _enclosure(
    entries: Mapping[Hashable, Fraction],
    centres: Mapping[Hashable, Fraction],
    values: Callable[[Mapping[Any, Any], Mapping[Any, Any] | None], list[Any]],
    xp: ExactBackend,
) -> Callable[[Mapping[Any, Fraction], Mapping[Any, Fraction]], Any]:
    """How a part of the box encloses the values: the line evaluated once with a symbol for
    each moved value (of its interval's sign: a logarithm's argument, a root's, must be
    seen to be positive), enclosed over each part in certified balls."""
    from flint import arb

    from symtf.backends.certify import ball as enclosure
    from symtf.backends.certify import to_fmpq
    from symtf.errors import Undecided

    named = {k: _value_symbol(n, centres[k], h) for n, (k, h) in enumerate(entries.items())}
    shifts = {k: v - sympy.Rational(centres[k]) for k, v in named.items()}
    boxes = {v: _box(centres[k], entries[k]) for k, v in named.items()}
    try:
        symbolic: list[Any] | None = values(shifts, boxes)
    except (ArithmeticError, TypeError, ValueError, LookupError, SymtfError, Undecided):
        symbolic = None

    def enclose(centre: Mapping[Any, Fraction], radius: Mapping[Any, Fraction]) -> Any:
        if symbolic is None:
            return None
        memo: dict[Any, Any] = {}
        for k, v in named.items():
            r = radius.get(k, Fraction(0))
            # the radius rounded up: a wider part only makes ruling it out harder
            mid = arb(to_fmpq(centres[k] + centre.get(k, Fraction(0))))
            memo[v] = mid + arb(0, float(r) * (1 + 2**-40))
        try:
            out = [enclosure(e, 128, defs=xp.defs, memo=memo) for e in symbolic]
        except (ArithmeticError, TypeError, ValueError, Undecided):
            return None
        return out if all(x.is_finite() for x in out) else None

    return enclose


def _box(centre: Fraction, half: Fraction) -> Any:
    """An mpmath interval holding ``centre ± half`` (widened a little: it decides signs)."""
    lo, hi = centre - half, centre + half
    slack = mpmath.mpf(2) ** -60 * (1 + abs(mpmath.mpf(lo.numerator) / lo.denominator))
    with mpmath.workprec(128):
        a = mpmath.mpf(lo.numerator) / lo.denominator - slack
        b = mpmath.mpf(hi.numerator) / hi.denominator + slack
    return mpmath.iv.mpf([a, b])


def _value_symbol(n: int, centre: Fraction, half: Fraction) -> Any:
    """A symbol for a value of ``centre ± half``, positive or negative when all of them are."""
    if centre - half > 0:
        return sympy.Dummy(f"v{n}", positive=True)
    if centre + half < 0:
        return sympy.Dummy(f"v{n}", negative=True)
    return sympy.Dummy(f"v{n}", real=True)


def explain(loose: Sequence[Loose], printed: str, more: Sequence[str] = ()) -> str:
    """Why the line is accepted, in the article's words (``more``: what its other
    rounded literals stand for, in words)."""
    parts = []
    for lo in loose:
        where = _where(lo.label, lo.line)
        iv = rounding_interval(lo.repeats)
        if lo.step:
            parts.append(
                f"{lo.text} stands for an entry of {lo.step}, the softmax of "
                f"{lo.logits_label}, with those logits known only to their printed precision"
            )
        elif lo.logits:
            parts.append(
                f"{lo.text} repeats {where}, which no step places; its row is, as printed, the "
                f"softmax of {_where(lo.logits_label, None)}, so it stands for that softmax entry "
                "with those logits known only to their printed precision"
            )
        else:
            parts.append(
                f"{lo.text} repeats {where}, which no step places, so it is known only to its "
                f"printed precision ({_fixed(iv.lo)} … {_fixed(iv.hi)})"
            )
    parts += more
    return (
        "; ".join(parts) + f": one point of those rounding intervals gives {printed} "
        "(a witness, not only an enclosure), so the line is right with rounded inputs"
    )


def _known(x: Fraction | None) -> Fraction:
    """A finite printed value (infinities are left out before any is read)."""
    assert x is not None
    return x


def _softmax(z: Sequence[Fraction]) -> list[Any]:
    """The registry's softmax of a printed row, in balls of 170 bits (50 digits), as mpmath
    numbers (the midpoints; the radii are far below the printed digits)."""
    with BallBackend(170) as xp:
        balls = ops.softmax(xp, ops.tensor(xp, list(z))).data
    return [mpmath.mpf(tuple(map(int, b.mid().man_exp()))) for b in balls]


def _mp(x: Fraction | None) -> Any:
    """A finite printed value as a 50-digit mpmath number."""
    return mpmath.mpf(_known(x).numerator) / _known(x).denominator


def _where(label: str, line: int | None) -> str:
    if line is None or label.startswith("line "):
        return label if line is None else f"line {line}"
    return f"{label} (line {line})"


def _fixed(x: Fraction) -> str:
    from symtf.numbers import format_fixed

    d = 0
    while (x * 10**d).denominator != 1 and d < 30:
        d += 1
    return format_fixed(x, d)


def stated_inputs(claim: Claim, derivation: Any) -> frozenset[str]:
    """The numbers the article states as inputs before a displayed line, as written.

    A number printed before the line by a claim no step computes (not a displayed
    line's result, not the line's own numbers drafted apart), with fewer than
    :data:`MIN_DIGITS` significant digits: a weight or an input the article chose
    (``x = 0.5``, ``w = 0.2``). A literal repeating one is read as itself, exact as
    written: it leaves no rounded value in the line's reading.
    """
    found = article_order(claim, derivation)
    if found is None:
        return frozenset()
    claims, here = found
    out: set[str] = set()
    lines: dict[int, list[Printed]] | None = None
    for c in claims[:here]:
        if not c.unmapped or c.expression is not None:
            continue
        if claim.source_line is not None and c.source_line == claim.source_line:
            continue  # the line's own numbers, drafted as numbers of their own
        for r, row in enumerate(c.printed):
            for p in row:
                if p.value is None or p.is_fraction or p.style == "sci":
                    continue
                if "." not in p.text or _significant(p) >= MIN_DIGITS:
                    continue
                if lines is None:
                    lines = _line_rows(claims[:here])
                if chosen_value(p, _row(c, r, lines)):
                    out.add(p.text.replace("−", "-").strip().lstrip("+-"))
    return frozenset(out)


def read_as_itself(text: str, given: frozenset[Fraction]) -> bool:
    """Whether a literal is a whole number or exactly an entry of a given tensor."""
    x = _fraction(text)
    return x is not None and (x.denominator == 1 or x in given)


def exact_givens(derivation: Derivation) -> frozenset[Fraction]:
    """Every exact (not rounded) rational entry of the tensors the article gives."""
    return frozenset(
        Fraction(int(v.p), int(v.q))
        for t in derivation.tensors
        if not t.rounded
        for v in t.values
        if isinstance(v, sympy.Rational)
    )


def _fraction(text: str) -> Fraction | None:
    """A decimal literal's exact value (``None`` when it is not a plain decimal)."""
    try:
        return Fraction(text.replace("−", "-"))
    except (ValueError, ZeroDivisionError):
        return None


__all__ = [
    "Linked",
    "Loose",
    "article_order",
    "chosen_value",
    "decided",
    "exact_givens",
    "explain",
    "loose_centres",
    "loose_entries",
    "loose_intervals",
    "loose_literals",
    "loose_values",
    "read_as_itself",
    "stated_inputs",
]
