"""The links of a chain: which numbers a later link writes are the terms an earlier link
works out (``= 0.2·0.5 + 0.3·0.1 = 0.1 + 0.03 = 0.13``: 0.1 and 0.03 are the two products).

Each helper reads the links of *one* chain, never the whole article; the pieces it reads
are parsed by :mod:`symtf.draft.read.items`.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence

from symtf.draft.read.items import expression_text, is_arithmetic, link_plain, numeric_cell
from symtf.errors import ExpressionError
from symtf.language import latexmath

__all__ = ["term_links"]

_ADDITIVE = "+-−"
_MULTIPLICATIVE = "*/×·÷"


def _terms(plain: str) -> tuple[list[str], list[str]] | None:
    """A plain expression cut at its top-level additive operators (else multiplicative
    ones): the terms and the operators between them; None if it is one term."""
    for ops in (_ADDITIVE, _MULTIPLICATIVE):
        terms: list[str] = []
        between: list[str] = []
        depth = start = 0
        for i, ch in enumerate(plain):
            if ch in "([{":
                depth += 1
            elif ch in ")]}":
                depth -= 1
            elif depth == 0 and ch in ops and i > start:
                before = plain[start:i].rstrip()
                if ops is _ADDITIVE and (not before or before[-1] in "*/×·÷^e(E"):
                    continue  # a sign, or an exponent's: not a term's end
                terms.append(plain[start:i].strip())
                between.append("-" if ch == "−" else ch)
                start = i + 1
        terms.append(plain[start:].strip())
        if len(terms) > 1 and all(terms):
            return terms, between
    return None


def _listed(link: str) -> list[str] | None:
    """The entries of a bracketed list of expressions, ``[0.3^2, 0.6^2]`` (else None)."""
    text = link.strip()
    if not (text.startswith("[") and text.endswith("]")) or text.count("[") != 1:
        return None
    entries = [e.strip() for e in text[1:-1].split(",")]
    if len(entries) < 2 or not all(entries):
        return None
    try:
        return [latexmath.to_plain(expression_text(e), where="link") for e in entries]
    except ExpressionError:
        return None


def term_links(
    links: Sequence[str], plains: Sequence[str | None] | None = None
) -> list[tuple[int, tuple[str, ...], str, list[str]]]:
    """The intermediate numbers of a chain, each with the terms it is the value of.

    In ``2 \\times 1.5 + 1.6 = 3 + 1.6 = 4.6`` the link ``3 + 1.6`` writes the value of
    the term ``2 \\times 1.5`` of the link before it: the two links are cut at their
    top-level operators, and when they have the same operators in the same order, a
    term written as a bare number in the later link is the value of the term at its
    place in the earlier one. Other ways a careful reader lines the terms up:

    - a term that is zero as written (``0``, ``0 × 0``: a product with a factor 0) may be
      left out of the next link (``0 × 0 + exp(3.5-7.1) + exp(7.1-7.1) = exp(-3.6) +
      exp(0)``);
    - a term that is one function of one argument, written again with a bare number for
      its argument (``exp(3.5-7.1)`` then ``exp(-3.6)``), writes the argument's value;
    - a product written again with its other factors alike and one worked out
      (``3*cos(0.524)`` then ``3*0.866``) writes that factor's value (:func:`_factor_links`);
    - a negative term may be written with its sign moved to the operator before it
      (``+ (-0.5) × 2`` then ``- 1``: :func:`_aligned`);
    - a bracketed list of expressions followed by a sum of as many terms,
      ``[0.3^2, 0.6^2] => 0.09 + 0.36``, writes each entry's value as the term at its
      place (the list is what is summed).

    Returns ``(later link, terms, number, before)``: ``terms`` are the term the number is
    the value of and, first, each term that term was written as in the links before it
    (``exp(3.5-7.1)``, ``exp(-3.6)`` for the 0.027 of ``= 0.027 + 1.0``), so that its
    check reads the whole way; ``before`` are the numbers of the later link written before
    it (to place it). ``plains``: the links already read as plain text (:func:`link_plain`).
    """
    out: list[tuple[int, tuple[str, ...], str, list[str]]] = []
    if plains is None:
        plains = [link_plain(link) for link in links]
    terms = [_expanded(_terms(plain)) if plain is not None else None for plain in plains]
    # for each link: its term j was term i of the link before it (negated, or not)
    earlier_of: list[dict[int, tuple[int, str, bool]]] = [{}]
    for k in range(1, len(links)):
        a, b = terms[k - 1], terms[k]
        listed = _listed(links[k - 1])
        if listed is not None and b is not None and set(b[1]) == {"+"}:
            a = (listed, b[1])  # [0.3², 0.6²] ⇒ 0.09 + 0.36: each term is its entry's value
        if a is None and b is None:
            # "10000^(-2×1/256) = 10000^(-0.0078)": the exponent worked out
            _exponent_link(k, links[k - 1], links[k], out)
        pairs = {} if _cancelled(a, b) else _aligned(a, b)
        earlier_of.append({j: (i, earlier, neg) for j, (i, earlier, _, neg) in pairs.items()})
        before: list[str] = []
        for j, (_i, earlier, later, _neg) in sorted(pairs.items()):
            number = numeric_cell(later.strip("()"))
            if number is not None:
                if numeric_cell(earlier.strip("()")) is None and re.search(r"\d", earlier):
                    out.append((k, _written_as(earlier_of, k, j), number, before[:]))
                before.append(number)
                continue
            argument = _argument_value(earlier, later)
            if argument is not None:
                out.append((k, (argument[0],), argument[1], before[:]))
                before.append(argument[1])
                continue
            # "3*cos(0.524) - 4*sin(0.524) = 3*0.866 - 4*0.5": the factors of a term
            # written alike, one worked out (0.866 is the value of cos(0.524))
            _factor_links(k, earlier, later, before, out)
    return out


def _cancelled(
    a: tuple[list[str], list[str]] | None, b: tuple[list[str], list[str]] | None
) -> bool:
    """Whether link ``b`` writes the quotient ``a`` with a common factor cancelled.

    ``\\frac{2/6}{3/6} = \\frac{2}{3}`` and ``\\frac{6 \\times 1}{6 \\times 2} = \\frac{1}{2}``
    reduce a fraction: the numerator and the denominator are written with one factor or
    divisor in common, and the next quotient leaves it out, so its two numbers are the
    reduced fraction, not the values of the two terms (2 is not the value of 2/6).
    """
    if a is None or b is None or a[1] != ["/"] or b[1] != ["/"]:
        return False
    top, bottom = (_common_factors(t) for t in a[0])
    return bool(top & bottom)


def _common_factors(term: str) -> set[str]:
    """The factors and divisors of a product or quotient written as one term
    (``(2/6)`` → {2, 6}); an empty set for anything else."""
    text = term.strip()
    while text.startswith("(") and text.endswith(")") and _balanced(text[1:-1]):
        text = text[1:-1].strip()
    cut = _factors(text)
    return set() if cut is None else {t.strip() for t in cut[0]}


def _written_as(
    earlier_of: Sequence[Mapping[int, tuple[int, str, bool]]], k: int, j: int
) -> tuple[str, ...]:
    """What term ``j`` of link ``k`` was written as in the links before it, the earliest
    first, as far as their terms line up; a term the later link writes with the other
    sign (``+ (-0.5) × 2`` then ``- 1``) is negated."""
    chain: list[str] = []
    negated = False
    while k >= 1 and j in earlier_of[k]:
        j, previous, flip = earlier_of[k][j]
        if chain and not is_arithmetic(previous):
            break  # a term in names (dL/ds[0] × s[0]): the chain of numbers starts after it
        negated ^= flip
        k -= 1
        text = f"-({previous})" if negated else previous
        if not chain or text != chain[0]:
            chain.insert(0, text)
    return tuple(chain)


#: A row times a column, as plain text: ``[0.007,0.001]·[[9],[11]]``.
_ROW_COLUMN = re.compile(r"^\[([^\[\]]+)\]·\[((?:\[[^\[\],]+\],?)+)\]$")


def _expanded(cut: tuple[list[str], list[str]] | None) -> tuple[list[str], list[str]] | None:
    """A link's terms with each row-times-column product written out as the sum of its
    entries' products (``[0.007,0.001]·[[9],[11]]`` is ``0.007×9 + 0.001×11``), the way
    the next link writes it."""
    if cut is None:
        return None
    terms, ops = cut
    if ops == ["·"] and len(terms) == 2:  # the whole link is one such product
        whole = _row_column(f"{terms[0]}·{terms[1]}")
        return (whole, ["+"] * (len(whole) - 1)) if whole else cut
    out: list[str] = []
    between: list[str] = []
    for i, t in enumerate(terms):
        if i:
            between.append(ops[i - 1])
        for j, piece in enumerate(_row_column(t) or [t]):
            if j:
                between.append("+")
            out.append(piece)
    return out, between


def _row_column(term: str) -> list[str] | None:
    """The entries' products of a row times a column of as many entries (else None)."""
    m = _ROW_COLUMN.match(term.replace(" ", ""))
    if m is None:
        return None
    row = m.group(1).split(",")
    column = re.findall(r"\[([^\[\],]+)\]", m.group(2))
    if len(row) < 2 or len(row) != len(column):
        return None
    return [f"{a}×{b}" for a, b in zip(row, column, strict=True)]


#: A term that is zero as written: 0, or a product with a factor 0.
_ZERO_TERM = re.compile(
    r"^\(?\s*(?:0(?:\.0*)?(?:\s*[*×·]\s*[^+\-]+)?|[^+\-]+[*×·]\s*0(?:\.0*)?)\s*\)?$"
)
#: A term that starts with a minus sign: ``(-0.5) × 2``, ``-0.5 × 2``.
_NEGATIVE_TERM = re.compile(r"^\(*\s*[-−]")


def _aligned(
    a: tuple[list[str], list[str]] | None, b: tuple[list[str], list[str]] | None
) -> dict[int, tuple[int, str, str, bool]]:
    """The terms of two consecutive links lined up, by the later link's places.

    They line up when they have the same operators in the same order, or so once the
    earlier link's zero terms are left out; and an earlier ``+ (-0.5) × 2`` may be written
    ``- 1`` (the sign moved to the operator: the later term is the earlier one negated).
    Each later place gets (the earlier term's place, the earlier term, the later term,
    whether the later term is the earlier one negated)."""
    if a is None or b is None:
        return {}
    terms, ops = a
    kept = list(range(len(terms)))
    if len(terms) > len(b[0]):  # leave out the zero terms
        kept = []
        for i, t in enumerate(terms):
            if _ZERO_TERM.match(t) and (ops[i - 1] == "+" if i else ops[0] == "+"):
                continue
            kept.append(i)
    if len(kept) != len(b[0]):
        return {}
    negated = [False] * len(kept)
    for p in range(1, len(kept)):
        i = kept[p]
        mine, theirs = ops[i - 1], b[1][p - 1]
        if mine == theirs:
            continue
        if {mine, theirs} != {"+", "-"} or not _NEGATIVE_TERM.match(terms[i]):
            return {}
        negated[p] = True
    return {
        j: (i, terms[i], y, negated[j]) for j, (i, y) in enumerate(zip(kept, b[0], strict=True))
    }


_CALL = re.compile(r"^([A-Za-z]+)\((.*)\)$")


def _argument_value(earlier: str, later: str) -> tuple[str, str] | None:
    """``exp(3.5-7.1)`` then ``exp(-3.6)``: the argument and the number written for it."""
    a, b = _CALL.match(earlier.strip()), _CALL.match(later.strip())
    if a is None or b is None or a.group(1) != b.group(1):
        return None
    if not _balanced(a.group(2)) or not _balanced(b.group(2)) or "," in a.group(2) + b.group(2):
        return None
    number = numeric_cell(b.group(2).strip())
    argument = a.group(2).strip()
    if number is None or numeric_cell(argument) is not None or not re.search(r"\d", argument):
        return None
    if not is_arithmetic(argument):
        return None
    return argument, number


def _balanced(text: str) -> bool:
    """Whether every bracket of ``text`` closes within it (one argument, not ``a)(b``)."""
    depth = 0
    for ch in text:
        depth += ch in "([{"
        depth -= ch in ")]}"
        if depth < 0:
            return False
    return depth == 0


def _factor_links(
    k: int,
    earlier: str,
    later: str,
    before: list[str],
    out: list[tuple[int, tuple[str, ...], str, list[str]]],
) -> None:
    """The factors of the term ``later`` worked out from those of ``earlier``, for
    :func:`term_links`: both are products of as many factors with the same operators, the
    other factors written alike, and a factor written as a bare number in ``later`` is the
    value of the factor at its place in ``earlier``. ``before`` gains the term's numbers."""
    a, b = _factors(earlier), _factors(later)
    numbers = [numeric_cell(f.strip("()")) for f in b[0]] if b is not None else []
    if a is None or b is None or a[1] != b[1] or len(a[0]) != len(b[0]):
        before.extend(n for n in numbers if n is not None)
        return
    worked = [
        (x, n)
        for x, y, n in zip(a[0], b[0], numbers, strict=True)
        if n is not None and x != y and numeric_cell(x.strip("()")) is None
    ]
    same = all(x == y or (x, n) in worked for x, y, n in zip(a[0], b[0], numbers, strict=True))
    for x, n in zip(a[0], numbers, strict=True):
        if n is None:
            continue
        if same and (x, n) in worked and re.search(r"\d", x):
            out.append((k, (x,), n, list(before)))
        before.append(n)


def _exponent_link(
    k: int, earlier: str, later: str, out: list[tuple[int, tuple[str, ...], str, list[str]]]
) -> None:
    """For :func:`term_links`: two links that are one power each, of the same base, the
    later with a bare number for the earlier's exponent (its value)."""
    try:
        a, b = _power(_plain(earlier)), _power(_plain(later))
    except ExpressionError:
        return
    if a is None or b is None or a[0] != b[0]:
        return
    number = numeric_cell(b[1])
    if number is None or numeric_cell(a[1]) is not None or not re.search(r"\d", a[1]):
        return
    base = numeric_cell(b[0])
    out.append((k, (a[1],), number, [base] if base is not None else []))


def _plain(link: str) -> str:
    """A link in the plain language (LaTeX rewritten; plain text as written)."""
    text = expression_text(link)
    return latexmath.to_plain(text, where="link") if latexmath.looks_like_latex(text) else text


def _power(plain: str) -> tuple[str, str] | None:
    """``base^(exponent)`` cut at its one top-level ``^`` (the exponent's brackets
    dropped); None for anything else."""
    depth = 0
    at = None
    for i, ch in enumerate(plain):
        if ch in "([{":
            depth += 1
        elif ch in ")]}":
            depth -= 1
        elif ch == "^" and depth == 0:
            if at is not None:
                return None
            at = i
    if at is None:
        return None
    base, exponent = plain[:at].strip(), plain[at + 1 :].strip()
    if not (exponent.startswith("(") and exponent.endswith(")")) or _terms(base) is not None:
        return None
    inner = exponent[1:-1].strip()
    if not inner or inner.count("(") != inner.count(")"):
        return None
    return base, inner


def _factors(plain: str) -> tuple[list[str], list[str]] | None:
    """A term cut at its top-level multiplicative operators (None: no product)."""
    cut = _terms(plain)
    if cut is None or any(op not in _MULTIPLICATIVE for op in cut[1]):
        return None
    return cut
