"""A literal that stands for a simple expression of numbers the article states.

``0.5 · log(0.556) = −0.2939``, a few lines below ``P(H) = 0.5`` and ``Q(H) = 0.9``:
the article computed log(0.5/0.9) and wrote the ratio 0.5555… as 0.556. Read as
written, the line gives −0.29349 and its −0.2939 looks wrong; with 0.556 read as
0.5/0.9 it gives −0.29389, and −0.2939 is right. Likewise a constant written as its
value: ``0.729`` for 0.9³, ``0.271`` for 1 − 0.9³.

A literal is read as such an expression only when all of these hold:

- the expression is *simple*: a function the article names (on the line, or on a
  displayed line near it) of one stated number; a power of one (``a²``, ``a³``, or
  ``aⁿ`` for a whole number n stated near it), its complement ``1 − aⁿ`` (``1 − a``
  too) or its reciprocal ``1/a``; or the sum, difference, product or quotient of two;
- its numbers are *stated*, never computed: the line's other literals, the numbers no
  step computes printed on the :data:`STATED_LINES` article lines before it
  (``Q(H) = 0.9``), and the literals of the displayed lines there (not their results);
- the literal has at least :data:`MIN_DIGITS` significant digits, repeats no number
  printed before it, and no entry of the model prints as it;
- the expression's value is certainly printed as the literal at its printed digits;
- the reading is *unique*: every candidate printed as the literal has the same value;
- it makes the line right: every printed result of the line is a correct rounding of
  the line with the literal so read;
- the evidence is far above chance (DESIGN.md, "infer"): the literal's digits, worth
  log2(value / unit of its last digit) bits, plus, when the reading turns a result that
  was off right, log2 of how many units of that result the literal's rounding interval
  spans, exceed the cost of the candidates tried (log2 of their number) by
  :data:`MARGIN_BITS`.

The literal then gets a check of its own (JSON ``expresses``; the line's own check
names the expression in ``stands_for``). By construction it is a correct rounding of
the expression: a printed number the article explains, never an error.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from fractions import Fraction
from typing import Any

import mpmath
import sympy

from symtf.backends.certify import PRECISIONS
from symtf.checking import repeated
from symtf.errors import ExpressionError, SymtfError, Undecided
from symtf.numbers import Printed, parse_printed
from symtf.spec import Claim, Derivation

#: Article lines before a displayed line whose stated numbers and named functions count.
STATED_LINES = 15
#: The most stated numbers tried (the line's own first, then the nearest lines').
MAX_STATED = 8
#: The fewest significant digits of a literal read as an expression (``0.56`` is too
#: short to tell a computed ratio from a number chosen).
MIN_DIGITS = 3
#: How far the evidence must exceed the cost of the candidates tried, in bits.
MARGIN_BITS = 4.0
#: The largest whole number read as a power's exponent (``0.9^t`` for a stated t = 5).
MAX_EXPONENT = 12

#: Functions an article may name, with their exact and guide forms and their domain.
_FUNCTIONS: dict[
    str, tuple[Callable[[Any], Any], Callable[[Any], Any], Callable[[Fraction], bool]]
] = {
    "log": (sympy.log, mpmath.log, lambda x: x > 0),
    "ln": (sympy.log, mpmath.log, lambda x: x > 0),
    "exp": (sympy.exp, mpmath.exp, lambda x: abs(x) <= 50),
    "sqrt": (sympy.sqrt, mpmath.sqrt, lambda x: x >= 0),
    "sin": (sympy.sin, mpmath.sin, lambda x: abs(x) <= 1000),
    "cos": (sympy.cos, mpmath.cos, lambda x: abs(x) <= 1000),
    "tanh": (sympy.tanh, mpmath.tanh, lambda x: abs(x) <= 1000),
}

#: Where a number of the line itself is stated.
HERE = "this line"

_SUPERSCRIPT = str.maketrans("0123456789", "⁰¹²³⁴⁵⁶⁷⁸⁹")


@dataclass(frozen=True)
class Stated:
    """A number the article states near a displayed line.

    Attributes:
        text: As printed (a minus sign as ``-``).
        value: Its exact value.
        where: Where it is stated, in the article's words (``Q(H), line 45``; ``this
            line``).
    """

    text: str
    value: Fraction
    where: str


@dataclass(frozen=True)
class Reading:
    """A literal read as a simple expression of stated numbers.

    Attributes:
        pos: The literal's offset in the expression.
        text: The literal as written (its magnitude: a minus sign before it stays in
            the line).
        value: The expression's exact value (the literal's own sense).
        formula: The expression as the article's numbers write it (``0.5/0.9``).
        numbers: The stated numbers it uses.
        bits: The evidence, less the cost of the candidates tried.
        negated: Whether a unary minus stands before the literal (the expression is then
            the signed number, ``value`` its magnitude).
    """

    pos: int
    text: str
    value: Any
    formula: str
    numbers: tuple[Stated, ...]
    bits: float
    negated: bool = False

    @property
    def signed(self) -> str:
        """The literal with the minus sign before it, if any (``-0.5878``)."""
        return ("-" if self.negated else "") + self.text

    def words(self) -> str:
        """The reading in the article's words: ``0.5/0.9 (0.9 from Q(H), line 45)``; the
        line's own numbers need no place."""
        said = list(
            dict.fromkeys(f"{n.text} from {n.where}" for n in self.numbers if n.where != HERE)
        )
        return f"{self.formula} ({'; '.join(said)})" if said else self.formula


@dataclass(frozen=True)
class _Candidate:
    formula: str
    exact: Any
    guide: Any
    numbers: tuple[Stated, ...]


def stated_numbers(
    parsed: Any, lit: Any, claim: Claim, derivation: Derivation, negated: Callable[[Any], bool]
) -> list[Stated]:
    """The distinct numbers stated on the line (its other literals) and on the
    :data:`STATED_LINES` article lines before it, nearest first, at most
    :data:`MAX_STATED`."""
    out: list[Stated] = []
    seen: set[Fraction] = set()

    def add(text: str, value: Fraction, where: str) -> None:
        if value not in seen and value != 0 and len(out) < MAX_STATED:
            seen.add(value)
            out.append(Stated(text, value, where))

    for other in parsed.literals:
        if other.pos == lit.pos or "e" in other.text.lower():
            continue
        x = _fraction(other.text)
        if x is not None:
            sign = -1 if negated(other) else 1
            add(("-" if sign < 0 else "") + other.text, sign * x, HERE)
    line = claim.source_line
    found = repeated.article_order(claim, derivation)
    if line is None or found is None:
        return out
    claims, here = found
    for c in reversed(claims[:here]):
        if c.source_line is None or not 0 < line - c.source_line <= STATED_LINES:
            continue
        where = _where(c)
        if c.expression is not None:
            for text in _literal_texts(c.expression):
                x = _fraction(text)
                if x is not None:
                    add(text, x, where)
        elif c.unmapped:  # a number no step computes: stated (a placed one is a result)
            for row in c.printed:
                for p in row:
                    if p.value is not None and not p.is_fraction and p.style != "sci":
                        add(p.text.replace("−", "-").strip(), p.value, where)
    return out


def named_functions(parsed: Any, claim: Claim, derivation: Derivation) -> list[str]:
    """The functions the line and the displayed lines of the :data:`STATED_LINES` article
    lines before it name, in a fixed order."""
    names = set(_calls(parsed.root))
    line = claim.source_line
    found = repeated.article_order(claim, derivation)
    if line is not None and found is not None:
        claims, here = found
        for c in claims[:here]:
            if c.expression is None or c.source_line is None:
                continue
            if 0 < line - c.source_line <= STATED_LINES:
                names.update(_calls_in(c.expression))
    return [f for f in _FUNCTIONS if f in names and not (f == "ln" and "log" in names)]


def readings(
    parsed: Any,
    claim: Claim,
    derivation: Derivation,
    replace: Mapping[int, Any],
    itself: frozenset[str],
    *,
    skip: Callable[[Any], bool],
    negated: Callable[[Any], bool],
    evaluate: Callable[[Mapping[int, Any]], list[Any]],
    fits: Callable[[Sequence[Any]], bool],
    xp: Any,
) -> list[Reading]:
    """The literals of a line, read no other way, that stand for a simple expression of
    stated numbers (the rules are the module's).

    Args:
        parsed: The line.
        claim: Its claim.
        derivation: The derivation (the article's claims in order).
        replace: The literals already read (kept).
        itself: Literals the line's lineage read as themselves.
        skip: Whether the model has an entry printed as the literal.
        negated: Whether a unary minus applies to a literal.
        evaluate: The line's values (one per printed result) with a replacement map.
        fits: Whether such values are correct roundings of every printed result.
        xp: The exact backend (for certified balls).
    """
    line = claim.source_line
    if not getattr(claim, "match_literals", True) or line is None:
        return []
    printed = [p for row in claim.printed for p in row]
    if not printed or any(p.value is None or p.is_fraction for p in printed):
        return []
    order = repeated.article_order(claim, derivation)
    if order is None:
        return []
    claims, here = order
    seen = {  # numbers printed before the line (its own, drafted as numbers, are not)
        p.text.replace("−", "-").lstrip("+-").strip()
        for c in claims[:here]
        if not (c.unmapped and c.source_line == line)
        for row in c.printed
        for p in row
    }
    given: frozenset[Fraction] | None = None
    found: list[tuple[Any, _Candidate, float, int]] = []
    functions: list[str] | None = None
    for lit in parsed.literals:
        text = lit.text
        if lit.pos in replace or "." not in text or "e" in text.lower():
            continue
        if text in itself or text in seen or _significant(text) < MIN_DIGITS:
            continue
        if given is None:
            given = repeated.exact_givens(derivation)
        if repeated.read_as_itself(text, given) or skip(lit):
            continue
        if functions is None:
            functions = named_functions(parsed, claim, derivation)
        numbers = stated_numbers(parsed, lit, claim, derivation, negated)
        sign = -1 if negated(lit) else 1
        hit = _unique_match(lit.text, sign, numbers, functions, xp)
        if hit is not None:
            found.append((lit, *hit, sign))
    if not found:
        return []
    trial = dict(replace)
    for lit, cand, _, sign in found:
        trial[lit.pos] = sign * cand.exact  # the literal's own sense: its magnitude
    try:
        before, after = evaluate(replace), evaluate(trial)
    except (ExpressionError, SymtfError, ArithmeticError, TypeError, ValueError, Undecided):
        return []
    if not fits(after):
        return []  # the reading must make the line right
    gained = 0.0 if fits(before) else _chain_bits(found, replace, evaluate, printed, xp)
    out = []
    for lit, cand, bits, sign in found:
        if bits + gained < MARGIN_BITS:
            return []  # too little evidence for one of them: no link is invented
        out.append(
            Reading(
                lit.pos,
                lit.text,
                sign * cand.exact,
                cand.formula,
                cand.numbers,
                bits + gained,
                sign < 0,
            )
        )
    return out


def _unique_match(
    text: str, sign: int, numbers: Sequence[Stated], functions: Sequence[str], xp: Any
) -> tuple[_Candidate, float] | None:
    """The one candidate value printed as the literal (with the sign before it), with the
    literal's bits less the candidates' cost; ``None`` when none or several values are."""
    from symtf.checking.slips import prints_as

    target = sign * Fraction(text)
    decimals = len(text.partition(".")[2])
    unit = Fraction(1, 10**decimals)
    p = Printed(("-" if sign < 0 else "") + text, target, decimals)
    with mpmath.workdps(40):
        lo, hi = _mpq(target - unit / 2), _mpq(target + unit / 2)
        slack = _mpq(unit) * mpmath.mpf("1e-9")
        tried = 0
        hits: list[_Candidate] = []
        for cand in _candidates(numbers, functions):
            tried += 1
            if lo - slack <= cand.guide <= hi + slack:
                hits.append(cand)
        if not hits:
            return None
        certain = []
        for cand in hits:
            try:
                ball = xp.ball(cand.exact, PRECISIONS[0])
            except (Undecided, SymtfError, TypeError, ValueError, ArithmeticError):
                return None  # a candidate that cannot be told apart: no unique reading
            if prints_as(ball, p):
                certain.append(cand)
            elif _may_print(ball, p):
                return None
        if not certain:
            return None
        first = certain[0]
        if any(abs(c.guide - first.guide) > mpmath.mpf(10) ** -30 for c in certain[1:]):
            return None  # two readings with different values: ambiguous
    bits = math.log2(float(abs(target) / unit)) - math.log2(max(tried, 1))
    return first, bits


def _may_print(ball: Any, p: Printed) -> bool:
    from symtf.checking.lineage import _may_print_as

    return _may_print_as(ball, p)


def _chain_bits(
    found: Sequence[tuple[Any, _Candidate, float, int]],
    replace: Mapping[int, Any],
    evaluate: Callable[[Mapping[int, Any]], list[Any]],
    printed: Sequence[Printed],
    xp: Any,
) -> float:
    """The bits a reading gains by turning off results right: log2 of how many units of
    each result the literals' rounding intervals span (at least 0)."""
    lo, hi = dict(replace), dict(replace)
    for lit, _, _, _ in found:
        x = Fraction(lit.text)
        half = Fraction(1, 2 * 10 ** len(lit.text.partition(".")[2]))
        lo[lit.pos] = sympy.Rational(x - half)
        hi[lit.pos] = sympy.Rational(x + half)
    total = 0.0
    try:
        a, b = evaluate(lo), evaluate(hi)
        for x, y, p in zip(a, b, printed, strict=False):
            span = abs(_mid(xp, x) - _mid(xp, y)) / float(p.ulp)
            if span > 1:
                total += math.log2(span)
    except (ExpressionError, SymtfError, ArithmeticError, TypeError, ValueError, Undecided):
        return 0.0
    return total


def _mid(xp: Any, e: Any) -> float:
    """A guide value of an exact expression (a ball's midpoint)."""
    return float(xp.ball(e, PRECISIONS[0]).mid())


def _candidates(numbers: Sequence[Stated], functions: Sequence[str]) -> Iterator[_Candidate]:
    """Every simple expression of the stated numbers, simplest first."""
    vals = [(n, sympy.Rational(n.value.numerator, n.value.denominator)) for n in numbers]
    stated_whole = {
        int(n.value) for n in numbers if n.value.denominator == 1 and 3 < n.value <= MAX_EXPONENT
    }
    exponents = [2, 3, *sorted(stated_whole)]
    for n, v in vals:
        a = _par(n.text)
        for f in functions:
            exact_f, guide_f, domain = _FUNCTIONS[f]
            if domain(n.value):
                yield _Candidate(f"{f}({n.text})", exact_f(v), guide_f(_mpq(n.value)), (n,))
        for k in exponents:
            power = n.value**k
            sup = str(k).translate(_SUPERSCRIPT)
            yield _Candidate(f"{a}{sup}", v**k, _mpq(power), (n,))
            yield _Candidate(f"1 − {a}{sup}", 1 - v**k, _mpq(1 - power), (n,))
        yield _Candidate(f"1 − {a}", 1 - v, _mpq(1 - n.value), (n,))
        yield _Candidate(f"1/{a}", 1 / v, _mpq(1 / n.value), (n,))
    for i, (m, u) in enumerate(vals):
        for j, (n, v) in enumerate(vals):
            if i == j:
                continue
            a, b = _par(m.text), _par(n.text)
            if i < j:
                yield _Candidate(f"{a} + {b}", u + v, _mpq(m.value + n.value), (m, n))
                yield _Candidate(f"{a} × {b}", u * v, _mpq(m.value * n.value), (m, n))
            yield _Candidate(f"{a} − {b}", u - v, _mpq(m.value - n.value), (m, n))
            yield _Candidate(f"{a}/{b}", u / v, _mpq(m.value / n.value), (m, n))


def literal_check(
    r: Reading, claim: Claim, quantity: Any, decide: Any, short: Any, check_type: Any
) -> Any:
    """The check of a literal read as an expression: the expression against what it shows.

    ``quantity`` makes a certified quantity of an exact value; ``decide`` classifies one
    printed number against it; ``short`` cuts a certified decimal; ``check_type`` builds
    the check.
    """
    signed = r.signed
    p = parse_printed(signed, where=f"{claim.where}.expression")
    q = quantity(-r.value if r.negated else r.value)
    res = decide(q, p, claim.rounding)
    exact = res.decimal or q.decimal()
    said = "exactly as printed" if res.verdict == "exact" else "correctly rounded"
    why = f"{signed} is {r.words()} = {short(exact)}: {said}"
    extra = {
        "expresses": {
            "formula": r.formula,
            "numbers": [{"printed": n.text, "where": n.where} for n in r.numbers],
        },
        "literal_of": claim.label,
        "units_off": res.units_off,
    }
    return check_type(
        label(r, claim.label),
        None,
        None,
        signed,
        res.expected,
        exact,
        res.verdict,
        why,
        None,
        extra,
    )


def label(r: Reading, line_label: str) -> str:
    """The label of a literal's own check: the line's, naming the expression."""
    return f"{line_label} ({r.signed} = {r.formula})"


def _where(c: Claim) -> str:
    if c.source_line is None:
        return c.label
    if c.label.startswith("line "):
        return f"line {c.source_line}"
    return f"{c.label}, line {c.source_line}"


def _literal_texts(expression: str) -> list[str]:
    """The literals of a displayed line's links (its inputs, not its printed result)."""
    from symtf.language.latexmath import parse as parse_expression
    from symtf.language.latexmath import split_links

    out: list[str] = []
    try:
        for link in split_links(expression):
            parsed = parse_expression(link, where="stated")
            out.extend(
                ("-" if _minus_before(parsed.text, lit.pos) else "") + lit.text
                for lit in parsed.literals
                if "e" not in lit.text.lower()
            )
    except (ExpressionError, SymtfError):
        return []
    return out


def _calls_in(expression: str) -> set[str]:
    from symtf.language.latexmath import parse as parse_expression
    from symtf.language.latexmath import split_links

    out: set[str] = set()
    try:
        for link in split_links(expression):
            out.update(_calls(parse_expression(link, where="stated").root))
    except (ExpressionError, SymtfError):
        return set()
    return out


def _calls(node: Any) -> Iterator[str]:
    from symtf.language import expr as sx
    from symtf.language.syntax import Link

    if isinstance(node, sx.Call):
        yield node.name
    for name in getattr(node, "__slots__", ()):
        value = getattr(node, name, None)
        for item in value if isinstance(value, tuple) else (value,):
            inner = item.node if isinstance(item, Link) else item
            if hasattr(inner, "__slots__") and not isinstance(inner, (str, int)):
                yield from _calls(inner)


def _minus_before(text: str, pos: int) -> bool:
    before = text[:pos].rstrip(" (")
    if not before.endswith(("-", "−")):
        return False
    rest = before[:-1].rstrip()
    return not rest or not (rest[-1].isalnum() or rest[-1] in ".)]")


def _par(text: str) -> str:
    return f"({text})" if text.startswith("-") else text


def _mpq(x: Fraction) -> Any:
    return mpmath.mpf(x.numerator) / x.denominator


def _fraction(text: str) -> Fraction | None:
    try:
        return Fraction(text.replace("−", "-"))
    except (ValueError, ZeroDivisionError):
        return None


def _significant(text: str) -> int:
    return len(text.lstrip("+-−").replace(".", "").lstrip("0"))


def is_reading(check: Any) -> bool:
    """Whether a check is the verdict on a literal read as an expression."""
    return "expresses" in check.extra


__all__ = [
    "MARGIN_BITS",
    "MAX_STATED",
    "MIN_DIGITS",
    "STATED_LINES",
    "Reading",
    "Stated",
    "is_reading",
    "label",
    "literal_check",
    "named_functions",
    "readings",
    "stated_numbers",
]
