"""No number disappears: each one the reader found ends in a claim or an unchecked entry.

After the draft's claims are written, the places they hold, the places of what
it could not check (:class:`Unmapped`, :class:`Unread`) and of the article's
inputs (:class:`Stated`) are covered. Every other number the reader found is
either

- a **restatement**: the same printed strings as a value printed before it
  (a comment ``# tensor([[0., 1., 1.]])`` under a print, a result repeated in a
  final list, ``88.08%`` for a printed ``0.8808``), linked to the step that
  value is placed at and checked as it is; or
- an unchecked entry saying why (a number in prose no claim checks, a value the
  code printed or wrote in a comment that its translation does not tell apart).

A restatement is linked only when it carries enough digits not to equal the earlier
value by chance: one number of three significant digits or more, or a row of numbers
with four or more between them (zeros and ones count for nothing); a row of two or more
may restate the value with more digits (``0.5000`` for ``0.5``), one number only
with the same digits.
"""

from __future__ import annotations

import re
import tomllib
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from decimal import ROUND_HALF_EVEN, ROUND_HALF_UP, Decimal, InvalidOperation
from typing import TYPE_CHECKING, Any

from symtf.draft.read import LITERAL
from symtf.place import Place
from symtf.visible import toml_string

if TYPE_CHECKING:
    from symtf.draft.article import Article, Printing
    from symtf.draft.infer.target import Placement

__all__ = ["Stated", "Unmapped", "Unread", "account", "restatements"]


@dataclass(frozen=True)
class Unread:
    """A printed claim the draft cannot read, and why (with the places of its numbers)."""

    label: str
    line: int
    text: str
    reason: str
    places: tuple[Place, ...] = ()


@dataclass(frozen=True)
class Unmapped:
    """A printing no step explains (its claim has ``step = "?"``), or a number no claim holds."""

    label: str
    line: int
    size: int
    note: str
    candidates: tuple[str, ...] = ()
    places: tuple[Place, ...] = ()
    #: Its printed numbers as written, row after row (space-separated).
    text: str = ""


@dataclass(frozen=True)
class Stated:
    """A printing the article states as an input (a given tensor): not a result to check."""

    label: str
    line: int
    size: int
    places: tuple[Place, ...] = ()


#: Why a number the reader found is in no claim, by where it was found.
WHY_UNCLAIMED = {
    "prose": "a printed number that no claim of the draft checks",
    "output": "printed by the code; its translation does not tell which value it is",
    "comment": "written in a comment of the code; its translation does not tell which value it is",
}

Key = tuple[int, int | None, int | None]


def _key(p: Place) -> Key:
    return (p.line, p.column, p.cell if p.column is None else None)


def where(p: Place) -> str:
    """A name for an unlabelled number: its line, or in a notebook its cell (the report
    beside it gives the file line: a cell's own line would mix the two)."""
    if p.cell is not None:
        return f"output of cell {p.cell}" if p.output else f"cell {p.cell}"
    return f"line {p.line}"


def _covered(text: str, entries: Sequence[Unmapped | Unread | Stated]) -> set[Key] | None:
    try:
        claims = tomllib.loads(text).get("claims", [])
    except tomllib.TOMLDecodeError:  # the draft is checked by the parser, which says why
        return None
    out: set[Key] = set()
    for c in claims:
        for q in c.get("places", []) if isinstance(c, dict) else []:
            if isinstance(q, dict) and isinstance(q.get("line"), int):
                col = q.get("column")
                out.add((q["line"], col, q.get("cell") if col is None else None))
    for u in entries:
        out.update(_key(q) for q in u.places)
    return out


def _value(text: str) -> tuple[Decimal, int] | None:
    """A printed entry's value and significant digits (``88.08%`` is 0.8808, 4 digits)."""
    t = text.strip().replace("−", "-").replace(",", "")
    scale = Decimal(1)
    if t.endswith("%"):
        t, scale = t[:-1], Decimal(100)
    if t.endswith("."):
        t = t[:-1]
    if not re.fullmatch(r"-?(?:\d+\.?\d*|\.\d+)(?:[eE][-+]?\d+)?", t):
        return None
    try:
        d = Decimal(t)
    except InvalidOperation:
        return None
    digits = len(re.sub(r"^[-0.]+", "", t.split("e")[0].split("E")[0].replace(".", "")))
    return d / scale, digits


def _digits(row: Sequence[str]) -> int:
    """The significant digits a row of entries carries (0 and ±1 carry none: masks, one-hot)."""
    total = 0
    for x in row:
        v = _value(x)
        if v is None:
            return 0
        if abs(v[0]) not in (0, 1):
            total += v[1]
    return total


def _same(a: str, b: str, *, digits: bool = True) -> bool:
    """Whether two printed entries are one value (printed to the same digits, if ``digits``)."""
    if a.strip().replace("−", "-").rstrip(".") == b.strip().replace("−", "-").rstrip("."):
        return True
    va, vb = _value(a), _value(b)
    if va is None or vb is None:
        return False
    return va == vb if digits else va[0] == vb[0]


def _entry(pl: Placement, p: Printing, i: int, j: int) -> dict[str, Any]:
    """Where entry (i, j) of a printing placed at ``pl`` sits in its step."""
    if pl.index is not None:
        return {"index": pl.index}
    if pl.row is not None:
        return {"index": (pl.row, j if p.shape[0] == 1 else i)}
    if pl.col is not None:
        return {"index": (i if p.shape[0] > 1 else j, pl.col)}
    return {"index": (i, j)}


def _link(
    f: Any,
    left: tuple[Place, ...],
    sources: list[tuple[Printing, Placement]],
) -> list[tuple[Placement, dict[str, Any], tuple[str, ...], tuple[Place, ...], Printing]]:
    """The claims that link a found value's rows to an earlier printing with the same values.

    Every row must stand in one printing (the latest that holds them all); the value as a
    whole must carry enough digits (:func:`_digits`) not to equal it by chance.
    """
    rows = list(f.rows)
    if len(left) != sum(len(r) for r in rows):
        return []
    flat = [x for r in rows for x in r]
    if _digits(flat) < (3 if len(flat) == 1 else 4):
        # a few digits, or zeros and ones: too likely equal by coincidence, but for one
        # number right after the one it rounds ("tensor(0.0430)", then "a 4.3% chance")
        return _next_to(flat, left, sources) if len(flat) == 1 and _digits(flat) == 2 else []
    # a value of two or more numbers is not equal by chance: a print of it with more
    # digits (0.5000 for a given 0.5) restates it too
    loose = len(flat) >= 2
    for p, pl in reversed(sources):
        hits: list[tuple[int, int]] = []
        for row in rows:
            hit = next(
                (
                    (i, j0)
                    for i, source_row in enumerate(p.rows)
                    for j0 in range(len(source_row) - len(row) + 1)
                    if all(
                        _same(x, y, digits=not loose)
                        for x, y in zip(row, source_row[j0 : j0 + len(row)], strict=True)
                    )
                ),
                None,
            )
            if hit is None:
                break
            hits.append(hit)
        if len(hits) == len(rows):
            return _claims_of(rows, left, p, pl, hits)
    return []


def _next_to(
    flat: list[str], left: tuple[Place, ...], sources: list[tuple[Printing, Placement]]
) -> list[tuple[Placement, dict[str, Any], tuple[str, ...], tuple[Place, ...], Printing]]:
    """One number of two digits restating the one printing just before it: the next cell
    of a notebook (its first lines), or within three lines of a post, with that printing's
    one value rounded to this number's digits (a percentage read as its fraction)."""
    at, v = left[0], _value(flat[0])
    if v is None:
        return []
    before = [(p, pl) for p, pl in sources if p.lines and p.lines[-1] < at.line]
    if not before:
        return []
    p, pl = max(before, key=lambda x: x[0].lines[-1])
    if p.size != 1:
        return []
    if at.cell is not None:
        if p.cell is None or at.cell != p.cell + 1 or (at.cell_line or 0) > 2:
            return []
    elif at.line - p.lines[-1] > 3:
        return []
    w = _value(p.rows[0][0])
    if w is None:
        return []
    quantum = v[0].as_tuple().exponent
    if not isinstance(quantum, int):
        return []
    try:
        rounded = {
            w[0].quantize(Decimal(1).scaleb(quantum), rounding=r)
            for r in (ROUND_HALF_EVEN, ROUND_HALF_UP)
        }
    except InvalidOperation:  # more digits than a quantize holds: not one value rounded
        return []
    if v[0] not in rounded:
        return []
    return _claims_of([(flat[0],)], left, p, pl, [(0, 0)])


def _claims_of(
    rows: list[tuple[str, ...]],
    left: tuple[Place, ...],
    p: Printing,
    pl: Placement,
    hits: list[tuple[int, int]],
) -> list[tuple[Placement, dict[str, Any], tuple[str, ...], tuple[Place, ...], Printing]]:
    out = []
    at = 0
    for row, (i, j0) in zip(rows, hits, strict=True):
        places = left[at : at + len(row)]
        at += len(row)
        if len(row) == len(p.rows[i]) and pl.index is None and pl.col is None and p.shape[0] > 1:
            key: dict[str, Any] = {"row": pl.row if pl.row is not None else i}
            out.append((pl, key, row, places, p))
        else:
            for j, (value, place) in enumerate(zip(row, places, strict=True)):
                out.append((pl, _entry(pl, p, i, j0 + j), (value,), (place,), p))
    return out


def _displayed(
    f: Any, article: Article, places: tuple[Place, ...], before_only: bool = False
) -> list[tuple[Any, str, Place]]:
    """The displayed lines whose results a found value restates, one per number, with the
    number and its place; empty if it restates none.

    One number restates the nearest displayed line before it with the same value to the
    same digits, if it carries three digits or more (``88.08%`` after ``σ(2) = 0.8808``).
    A row or matrix of numbers (``dL/dx = [0.025, -0.0749]`` after ``dL/dx[0] = … = 0.025``
    and ``dL/dx[1] = … = -0.0749``) restates such lines only when every number repeats the
    result of a different one, and the numbers together carry four digits or more
    (:func:`_link`'s bar): fewer could equal earlier results by chance. A zero among them
    that no line before it prints (``dL/dS^T = [0.0, 0.001765]``, a position with no
    gradient) is an entry the article writes: it restates nothing, and the others still must. A number set by
    name ahead of the line that works it out (``θ₁ = 0.982``, then ``θ₁ = … ≈ 0.982``)
    restates that line (:func:`_named_ahead`).
    """
    if f.kind == "arithmetic":
        return []
    flat = [x for r in f.rows for x in r]
    before = _displayed_before(f, article, places, flat, before_only)
    if before or before_only or len(flat) != 1 or len(places) != 1:
        return before
    ahead = _named_ahead(f, article, flat[0], places[0])
    if ahead is None:
        ahead = _named_behind(f, article, flat[0], places[0])
    return [(ahead, flat[0], places[0])] if ahead is not None else []


def _displayed_before(
    f: Any, article: Article, places: tuple[Place, ...], flat: list[str], strict: bool = False
) -> list[tuple[Any, str, Place]]:
    """:func:`_displayed` for the lines before the value (each number its nearest), or, for
    a list of whole numbers, the lines it restates so (:mod:`symtf.draft.stored`);
    ``strict``: printed before it, not later on its line."""
    from symtf.draft.stored import whole_prints

    if len(flat) != len(places):
        return []
    whole = whole_prints(flat, article.displays, f.cell, min(q.line for q in places))
    if whole is not None:
        return list(zip(whole, flat, places, strict=True))
    if _digits(flat) < (3 if len(flat) == 1 else 4):
        return _summed_in_order(f, article, places[0]) if len(flat) == 1 else []
    out: list[tuple[Any, str, Place]] = []
    taken: set[int] = set()
    zero = [(v := _value(x)) is not None and v[0] == 0 for x in flat]
    if len(flat) > 1 and all(zero):
        return []
    for value, at, is_zero in zip(flat, places, zero, strict=True):
        best = None
        for d in article.displays:
            if d.cell != f.cell or len(d.rows) != 1 or len(d.rows[0]) != 1 or not d.places:
                continue
            if d.key in taken or _unreadable(d.latex):
                continue
            if (
                d.places[0].line <= at.line
                and (d.places[0].line, d.places[0].column) != (at.line, at.column)
                and not (strict and d.places[0].line == at.line)
                and _same(value, d.rows[0][0])
                and (best is None or d.places[0].line >= best.places[0].line)
            ):
                best = d
        if best is None and is_zero and len(flat) > 1:
            continue  # a zero entry the article writes (no gradient there), no line's result
        if best is None:
            return []
        taken.add(best.key)
        out.append((best, value, at))
    return out


def _summed_in_order(f: Any, article: Article, at: Place) -> list[tuple[Any, str, Place]]:
    """A term of a sum that writes the results of the lines just above it, one term per
    line and in their order (``1.0 + 0.25 + 1.0 + 0.25 + 0.0 = 2.5`` under five lines that
    each work one squared deviation out): the term at place ``k`` restates the ``k``-th
    of those lines, however few digits it has.

    The terms are the numbers the sum's link writes (``f`` is one of them); the lines are
    the nearest lines above it under the same heading, each with its last printed result,
    as many as there are terms, three or more; every term must be its line's result to
    the same digits, in order, or none is linked.
    """
    if getattr(f, "role", "") != "term" or at.column is None:
        return []
    terms = sorted(
        (
            q
            for q in article.printings
            if q.role == "term"
            and q.cell == f.cell
            and q.label == f.label
            and q.size == 1
            and q.places
            and q.places[0].line == at.line
            and q.places[0].column is not None
        ),
        key=lambda q: q.places[0].column or 0,
    )
    mine = next((k for k, q in enumerate(terms) if q.places[0] == at), None)
    if mine is None or len(terms) < 3:
        return []
    heading = article.heading_before(at.line)
    last: dict[int, Any] = {}  # each line above: the display printing its last result
    for d in article.displays:
        if d.cell != f.cell or len(d.rows) != 1 or len(d.rows[0]) != 1 or not d.places:
            continue
        q = d.places[0]
        if q.line >= at.line or article.heading_before(q.line) != heading:
            continue
        if q.line not in last or (q.column or 0) >= (last[q.line].places[0].column or 0):
            last[q.line] = d
    lines = sorted(last)[-len(terms) :]
    if len(lines) < len(terms):
        return []
    worked = [last[n] for n in lines]
    if any(_unreadable(d.latex) for d in worked):
        return []
    if not all(_same(q.rows[0][0], d.rows[0][0]) for q, d in zip(terms, worked, strict=True)):
        return []
    return [(worked[mine], terms[mine].rows[0][0], at)]


def _named_ahead(f: Any, article: Article, value: str, at: Place) -> Any:
    """The displayed line a number set by name states ahead of its working (``θ₁ = 0.982``
    in a list of frequencies, then ``θ₁ = 10000^(-2×1/256) ≈ 0.982`` below): the nearest
    later line of the same cell that the article labels with that very name and that
    prints the same value to the same digits; None if there is none.

    The name is what links them, so no digit bar applies: a number whose sentence sets
    no name (``NAME = value``), or a name no later line works out, is left alone.
    """
    context = getattr(f, "context", "") or ""
    m = re.search(rf"(\S+)\s*=\s*{re.escape(value)}(?![\d.])", context.replace("−", "-"))
    if m is None:
        return None
    name = m.group(1)
    best = None
    for d in article.displays:
        if d.cell != f.cell or len(d.rows) != 1 or len(d.rows[0]) != 1 or not d.places:
            continue
        if d.label.strip() != name or d.places[0].line <= at.line or _unreadable(d.latex):
            continue
        if not _same(value, d.rows[0][0]):
            continue
        if (
            best is None
            or d.places[0].line < best.places[0].line
            or (d.places[0].line == best.places[0].line and d.key > best.key)
        ):
            best = d
    return best


#: A displayed line's label as a quantity: a name, ``D_KL``, with its arguments, ``(P‖Q)``.
_QUANTITY = re.compile(r"(?P<name>[^\W\d]\w*?)(?:\([^()]*\))?")


def _names_of(label: str) -> set[str]:
    """What prose calls the quantity a displayed line is labelled with: the label, its name
    without the arguments (``D_KL`` for ``D_KL(P‖Q)``) and that name's subscript (``KL``)."""
    out = {label.strip()}
    m = _QUANTITY.fullmatch(label.strip())
    if m is not None:
        name = m.group("name")
        out.add(name)
        if "_" in name.strip("_"):
            out.add(name.split("_", 1)[1])
    return out


def _named_behind(f: Any, article: Article, value: str, at: Place) -> Any:
    """The displayed line a number set by name sums up (``D_KL(P‖Q) ≈ 0.5106``, then, below
    it, ``KL = 0.51 nats``): the nearest earlier line of the same cell labelled with that
    name (its subscript is a name too) whose result, rounded to the number's digits, is the
    number; None if there is none.

    The number again later on that line (``KL = 0.51 nats → … ~0.51 nats of surprise``)
    is that result too. The name is what links them (as in :func:`_named_ahead`): a number
    whose line sets no name, or a name no line above works out, is left alone.

    Under the same heading, a result line that states the value again by its name
    (``**Result:** $E[X] = 0.7$`` under ``E[X] = 1 × 0.7 + 0 × 0.3 = 0.7``, or
    ``\\text{Var}(X) \\approx 2.92`` under ``… = 2.918``) restates it too: to the same digits
    when it is the same value, or rounded to two significant digits or more (one digit,
    ``P(X = 2) = 0.2``, may round another example's 0.167 of that name by chance).
    """
    setting = rf"(\S+)\s*=\s*{re.escape(value)}(?![\d.])"
    m = re.search(setting, (getattr(f, "context", "") or "").replace("−", "-"))
    for g in article.seen if m is None else ():
        # "KL = 0.51 nats → … costs us ~0.51 nats": the number again, later on the line
        # whose sentence set it by name
        q = g.places[0] if g.places else None
        if (
            q is None
            or q.line != at.line
            or g.cell != f.cell
            or (q.column or 0) >= (at.column or 0)
        ):
            continue
        m = re.search(setting, (getattr(g, "context", "") or "").replace("−", "-"))
        if m is not None:
            break
    v = _value(value)
    if v is None:
        return None
    best = _behind(f, article, v, {m.group(1)}, at) if m is not None else None
    if best is not None:
        return best
    stated = rf"(\S+)\s*(?:=|≈|\\approx)\s*{re.escape(value)}(?![\d.])"
    m = re.search(stated, (getattr(f, "context", "") or "").replace("−", "-"))
    if m is None:
        return None
    names = {m.group(1), (getattr(f, "label", "") or "").strip()} - {""}
    return _behind(f, article, v, names, at, near=True)


def _behind(
    f: Any,
    article: Article,
    v: tuple[Decimal, int],
    names: set[str],
    at: Place,
    *,
    near: bool = False,
) -> Any:
    """For :func:`_named_behind`: the nearest displayed line above ``at`` named by one of
    ``names`` whose result rounds to ``v``; ``near``: under the same heading, the same
    value to the same digits too, and a rounding only to two digits or more."""
    quantum = v[0].as_tuple().exponent
    if not isinstance(quantum, int):
        return None
    heading = article.heading_before(at.line)
    best = None
    for d in article.displays:
        if d.cell != f.cell or len(d.rows) != 1 or len(d.rows[0]) != 1 or not d.places:
            continue
        if d.places[0].line >= at.line or not names & _names_of(d.label):
            continue
        if near and article.heading_before(d.places[0].line) != heading:
            continue
        w = _value(d.rows[0][0])
        if w is None or _unreadable(d.latex):
            continue
        if near and w[1] == v[1]:
            if w[0] == v[0] and (best is None or d.places[0].line > best.places[0].line):
                best = d
            continue
        if w[1] <= v[1] or (near and v[1] < 2):
            continue  # not a result given with more digits than the number keeps
        try:
            rounded = {
                w[0].quantize(Decimal(1).scaleb(quantum), rounding=r)
                for r in (ROUND_HALF_EVEN, ROUND_HALF_UP)
            }
        except InvalidOperation:
            continue
        if abs(w[0] - v[0]) * 2 == Decimal(1).scaleb(quantum):
            continue  # the line's result at a tie: its exact value may round either way
        if v[0] in rounded and (best is None or d.places[0].line > best.places[0].line):
            best = d
    return best


def _unreadable(latex: str) -> bool:
    """Whether a displayed line's expression is one the checker's parser refuses."""
    from symtf.errors import ExpressionError
    from symtf.language import latexmath

    try:
        latexmath.parse(" ".join(latex.split()), where="expression")
    except ExpressionError:
        return True
    return False


def account(
    article: Article,
    text: str,
    lists: tuple[list[Unmapped], list[Unread], list[Stated]],
    sources: list[tuple[Printing, Placement]],
    placement: Callable[[Placement], list[str]],
    label: Callable[[str, int], str],
    chains: Mapping[int, tuple[str, str, str]] | None = None,
) -> list[str]:
    """Account for every number the reader found; returns the claims of its restatements.

    ``lists``: the draft's unmapped, unread and stated entries (numbers with no claim are
    added to the first). ``sources``: the printings placed at a step, in the article's
    order. ``placement``: a placement's claim keys (``step = …``, ``row = …``).
    ``chains``: for a displayed line's key, the claim keys that check its whole chain
    (:func:`restatements`).
    """

    unmapped, unread, stated = lists
    covered = _covered(text, [*unmapped, *unread, *stated])
    if covered is None:
        return []
    claims: list[str] = []
    found = [("prose", f) for f in article.seen] + list(article.in_code)
    for origin, f in found:
        left = tuple(q for q in f.places if _key(q) not in covered)
        if not left:
            continue
        covered.update(_key(q) for q in left)
        name = f.label.strip() or where(left[0])
        literal = f.label.endswith(LITERAL)
        if literal:  # "(0.8 - 0.25) / 0.364": 0.364 as the deviation worked out above
            name = f.label[: -len(LITERAL)].strip() or where(left[0])
        if len(left) == len(f.places):
            restated = restatements(
                f, name, article, sources, placement, label, chains, before_only=literal
            )
            if restated:
                claims.extend(restated)
                continue
        if literal:
            continue  # an input of its line: it repeats no result printed before it
        unmapped.append(Unmapped(name, left[0].line, len(left), WHY_UNCLAIMED[origin], (), left))
    return claims


def restatements(
    item: Any,
    name: str,
    article: Article,
    sources: list[tuple[Printing, Placement]],
    placement: Callable[[Placement], list[str]],
    label: Callable[[str, int], str],
    chains: Mapping[int, tuple[str, str, str]] | None = None,
    *,
    results_only: bool = False,
    before_only: bool = False,
) -> list[str]:
    """The claims of a value (a found value or a printing, with its places) that restates
    an earlier one: at the step the earlier value is placed at, or as the displayed line
    whose result it repeats. None if it restates nothing (then it is not checked).

    ``results_only``: only as displayed lines' results (a table that sums up the lines
    worked above it), never as another printing. ``before_only``: only results printed
    before it (a number a line computes from repeats no result of that line); such a
    number is first the result of the displayed line that worked it out, not of a table
    that wrote that result again (and may be read as given).

    ``chains``: for a displayed line's key, the ``expression = …`` line of the claim that
    checks its whole chain ``a = b = c`` and its ``stands_for = …`` line (or ``""``): a
    restated result is checked as that chain, every link and what its literals stand for,
    not its last link alone."""
    from symtf.draft.read.toml import places_key
    from symtf.draft.said import replayed_claims, round_trip_claims, worded_claims

    places: tuple[Place, ...] = tuple(item.places)
    if not places or len(places) != sum(len(r) for r in item.rows):
        return []
    claims: list[str] = []
    worked = _displayed(item, article, places, before_only) if before_only else []
    links = [] if results_only or worked else _link(item, places, sources)
    for pl, keys, row, at, p in links:
        step = [k for k in placement(pl) if k.startswith("step")]
        extra = [
            f"{k} = [{v[0]}, {v[1]}]" if k == "index" else f"{k} = {v}" for k, v in keys.items()
        ]
        claims.append(
            "\n".join(
                [
                    "[[claims]]",
                    f"label = {_toml(label(name + ' (restated)', at[0].line))}",
                    *step,
                    *extra,
                    f"printed = {_toml(' '.join(row))}",
                    f"source_line = {at[0].line}",
                    places_key(at),
                    f"# line {at[0].line}: restates the value printed at line {p.line}",
                ]
            )
        )
    if claims:
        return claims
    # "88.08%" after "σ(2) = 0.8808", or "dL/dx = [0.025, -0.0749]" after the lines that
    # computed dL/dx[0] and dL/dx[1]: each number is the displayed line, again
    claims = [
        "\n".join(
            [
                "[[claims]]",
                f"label = {_toml(label(name + ' (restated)', at.line))}",
                *_chain_keys(d, chains),
                f"printed = {_toml(value)}",
                f"source_line = {at.line}",
                places_key((at,)),
                f"# line {at.line}: restates the result displayed at line {d.line}",
            ]
        )
        for d, value, at in worked or _displayed(item, article, places, before_only)
    ]
    if not claims and not results_only and item.kind != "arithmetic":
        claims = replayed_claims(item, name, article, places, label) or worded_claims(
            item, name, article, places, label
        )
    if claims or results_only or item.kind == "arithmetic":
        return claims
    if len(places) != 1:
        return _row_restated(item, name, article, places, label, chains, before_only)
    return _at_worked_index(item, name, article, places[0], label) or round_trip_claims(
        item, name, article, places[0], label
    )


def _row_restated(
    item: Any,
    name: str,
    article: Article,
    places: tuple[Place, ...],
    label: Callable[[str, int], str],
    chains: Mapping[int, tuple[str, str, str]] | None,
    before_only: bool,
) -> list[str]:
    """A row that writes again, entry by entry, the row a displayed line worked out above
    it (``y_pred = [0.098, 0.659, 0.242]`` under ``softmax = [0.149/1.517, …] ≈ [0.098,
    0.659, 0.242]``): the claim of that line's chain, printed where the row stands.

    The nearest such line before the row is the one it repeats; the row carries four
    significant digits or more (:func:`_digits`), so that it does not equal the line's
    result by chance, and is not all zeros."""
    from symtf.draft.read.toml import places_key

    if len(item.rows) != 1 or len(item.rows[0]) < 2 or len(places) != len(item.rows[0]):
        return []
    row = item.rows[0]
    if _digits(row) < 4 or all((v := _value(x)) is not None and v[0] == 0 for x in row):
        return []
    first = min(places, key=lambda q: (q.line, q.column or 0))
    best = None
    for d in article.displays:
        if d.cell != item.cell or len(d.rows) != 1 or len(d.rows[0]) != len(row):
            continue
        if not d.places or any(q in places for q in d.places) or _unreadable(d.latex):
            continue
        at = d.places[0]
        if at.line > first.line or (
            at.line == first.line and (before_only or (at.column or 0) >= (first.column or 0))
        ):
            continue
        if not all(_same(a, b) for a, b in zip(row, d.rows[0], strict=True)):
            continue
        if best is None or (at.line, at.column or 0) > (
            best.places[0].line,
            best.places[0].column or 0,
        ):
            best = d
    if best is None:
        return []
    return [
        "\n".join(
            [
                "[[claims]]",
                f"label = {_toml(label(name + ' (restated)', first.line))}",
                *_chain_keys(best, chains),
                f"printed = {_toml(' '.join(row))}",
                f"source_line = {first.line}",
                places_key(places),
                f"# line {first.line}: restates the row displayed at line {best.line}",
            ]
        )
    ]


def _at_worked_index(
    item: Any, name: str, article: Article, at: Place, label: Callable[[str, int], str]
) -> list[str]:
    """``θ₂ = 0.965`` where the article works θ₀, θ₁, θ₆₄ out by one expression of the
    index (:mod:`symtf.draft.indexed`): the claim of that expression at index 2."""
    from symtf.draft.indexed import at_index
    from symtf.draft.read.toml import places_key

    flat = [x for r in item.rows for x in r]
    if len(flat) != 1:
        return []
    form = at_index(item, article, flat[0])
    if form is None or _unreadable(form.expression):
        return []
    worked = ", ".join(form.worked)
    return [
        "\n".join(
            [
                "[[claims]]",
                f"label = {_toml(label(f'{name} ({form.name})', at.line))}",
                f"expression = {_toml(form.expression)}",
                f"printed = {_toml(flat[0])}",
                f"source_line = {at.line}",
                places_key((at,)),
                f"# line {at.line}: {form.name} by the expression of its index the article "
                f"writes for {worked} (from line {form.line}), at index {form.index}",
            ]
        )
    ]


def _chain_keys(d: Any, chains: Mapping[int, tuple[str, str, str]] | None) -> list[str]:
    """The keys that check a displayed line's result: its whole chain when it is known,
    and the claim whose result it restates (``restates``)."""
    expression, stands, label = (chains or {}).get(d.key, ("", "", ""))
    if not expression:
        return [f"expression = {_toml(' '.join(d.latex.split()))}"]
    restates = [label.replace("label = ", "restates = ", 1)] if label else []
    return [expression, *([stands] if stands else []), *restates]


def _toml(s: str) -> str:
    """A TOML string that reads back as ``s``, with no control character of the article's."""
    return toml_string(s)
