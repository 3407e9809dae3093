"""Where a value that depends on a symbol prints as the printed number: the symbol's
solution set (exact roots of a polynomial, certified intervals found by search), the
points at which it prints so, and how each is written in an explanation.
"""

from __future__ import annotations

from collections.abc import Mapping
from fractions import Fraction
from typing import TYPE_CHECKING, Any, cast

import sympy
from sympy.polys.polyerrors import CoercionFailed

from symtf.checking.located import Located, rational_text
from symtf.dag import postorder
from symtf.errors import Undecided
from symtf.numbers import Interval, Printed, rounding_interval

if TYPE_CHECKING:
    from symtf.spec.symbols import SymbolSpec


#: Largest closed form written out for a symbolic value (expression operations); a longer
#: value is written as its named node and that node's one-level definition.
SHORT_FORM_OPS = 150
#: Where a symbol's values are searched when its value is not a rational function of it.
SEARCH_RANGE = (Fraction(-10), Fraction(10))
#: The finest cell of that search, as a fraction of the range (20 · 2^-18 ≈ 7.6e-5 wide).
SEARCH_CELL = Fraction(1, 2**18)


def held_sets(
    x: Located,
    p: Printed,
    mode: str,
    symbols: Mapping[str, SymbolSpec],
    closed: sympy.Expr | None,
    extra: dict[str, Any],
) -> str:
    """For a value of two symbols: each one's solution set with the other held at its
    declared ``value`` (``held_solutions``), and the words for the explanation.

    A symbol whose partner has no declared value gets no set (there is no article's
    value to hold it at); the words say how to get one.
    """
    words = ""
    held: list[dict[str, Any]] = []
    pair = sorted(x.symbols, key=str)
    for sym, other in (pair, pair[::-1]):
        partner = symbols.get(str(other))
        if partner is None or partner.value is None:
            continue
        at = sympy.Rational(partner.value.numerator, partner.value.denominator)
        spec = symbols.get(str(sym))
        window = spec.range if spec is not None else None
        entry: dict[str, Any] = {"symbol": str(sym), "held": {str(other): partner.value_text}}
        one = closed.xreplace({other: at}) if closed is not None else None
        inside: bool | None = None
        if one is not None and rational_in(one, sym):
            sol = solutions(one, p, mode, window)
            if sol is None:
                continue
            entry["solutions"] = sol
            if window is not None:
                entry["solutions_range"] = [rational_text(window[0]), rational_text(window[1])]
            clause = (
                f"it prints as {p.text} for {sym} in " + " ∪ ".join(interval_text(s) for s in sol)
                if sol
                else f"no value of {sym} prints as {p.text}"
            )
            if spec is not None and spec.value is not None:
                inside = prints_at(one, sym, spec.value, p, mode)
        else:
            found = searched(x, sym, p, mode, window, {other: at})
            if found is None:
                continue
            rset, dual = found.pop("_set"), found.pop("_dual")
            entry.update(found)
            clause = searched_text(entry, sym, p, declared=window is not None).removeprefix("; ")
            if spec is not None and spec.value is not None:
                inside = searched_at(x, sym, rset, spec.value, p, mode, dual)
        if spec is not None and spec.value is not None:
            entry["declared_value"] = {
                "symbol": str(sym),
                "value": spec.value_text,
                "inside": inside,
            }
        held.append(entry)
        words += f"; with {other} held at the article's value {partner.value_text}, {clause}"
        if "declared_value" in entry:
            place = {True: "inside", False: "outside", None: "not certainly inside or outside"}
            words += f" (the article's {sym} = {spec.value_text} is {place[inside]} it)"  # type: ignore[union-attr]
    if held:
        extra["held_solutions"] = held
    elif not any((s := symbols.get(str(v))) is not None and s.value is not None for v in pair):
        words += (
            f"; give {pair[0]} or {pair[1]} its article's value in [symbols] for the other's "
            "set with it held there"
        )
    return words


def prints_at(
    e: sympy.Expr, sym: sympy.Symbol, value: Fraction, p: Printed, mode: str
) -> bool | None:
    """Whether ``p`` is a correct rounding of the rational function ``e`` at ``sym = value``, exactly."""
    try:
        at = e.xreplace({sym: sympy.Rational(value.numerator, value.denominator)})
    except (TypeError, ValueError, ZeroDivisionError):
        return None
    if at.has(sympy.zoo, sympy.nan) or at.is_infinite:
        return False  # a pole at the value: no number there to print (the set excludes it)
    if not at.is_Rational:
        return None
    iv = rounding_interval(p, mode) if not p.is_fraction else _point(p)
    return _in(iv, _fraction(at))


def _in(iv: Interval, v: Fraction) -> bool:
    return (iv.lo < v or (v == iv.lo and iv.lo_closed)) and (
        v < iv.hi or (v == iv.hi and iv.hi_closed)
    )


def searched_at(
    x: Located,
    sym: sympy.Symbol,
    found: Any,
    value: Fraction,
    p: Printed,
    mode: str,
    dual: Any = None,
) -> bool | None:
    """Whether the searched set holds ``value``: read from the set, else decided at the point
    (with ``dual``, the search's own: other symbols held where it held them)."""
    from symtf import roots

    inside: bool | None = found.contains(value)
    if inside is not None or (x.xp is None and dual is None):
        return inside
    iv = rounding_interval(p, mode) if not p.is_fraction else _point(p)
    try:
        return roots.member_at(dual or roots.dual_for(x.xp, sym), x.expr, value, iv)
    except (TypeError, Undecided, RecursionError):
        return None


def short_form(x: Located) -> sympy.Expr | None:
    """The value with its nodes expanded, if that stays short (else ``None``)."""
    if x.xp is None or not hasattr(x.xp, "closed_form"):
        return x.expr if sympy.count_ops(x.expr) <= SHORT_FORM_OPS else None
    if _expanded_size(x.expr, x.xp.defs, {}, SHORT_FORM_OPS * 4) > SHORT_FORM_OPS * 4:
        return None  # expanding it would build (and simplify) a large tree first
    closed = x.xp.closed_form(x.expr, SHORT_FORM_OPS)
    if closed is None:
        return None
    return closed if len(sympy.sstr(closed)) <= 300 else None


def _expanded_size(
    e: sympy.Basic, defs: dict[sympy.Symbol, sympy.Expr], memo: dict[sympy.Basic, int], cap: int
) -> int:
    """Tree size of ``e`` with its nodes expanded, counted without building it (capped at
    ``cap + 1``).

    Walked with a stack, not recursion: a chain of 2,000 steps nests its nodes 2,000 deep.
    Every distinct node reached appears at least once in the expanded tree, so the walk
    stops past ``cap`` of them.
    """

    def parts(n: sympy.Basic) -> tuple[sympy.Basic, ...]:
        return (defs[n],) if n.is_Symbol and n in defs else tuple(n.args)

    order = postorder(e, parts, memo, cap)
    if order is None:
        return cap + 1
    for n in order:
        own = 0 if n.is_Symbol and n in defs else 1  # a node stands for its definition
        memo[n] = min(own + sum(memo[k] for k in parts(n)), cap + 1)
    return memo[e]


def named_form(x: Located) -> str:
    """A long value as the DAG writes it: its node and that node's one-level definition."""
    defs = getattr(x.xp, "defs", {})
    e = x.expr
    if e.is_Symbol and e in defs:
        return brief(sympy.Eq(e, defs[e], evaluate=False))
    return brief(e)


def rational_in(e: sympy.Expr, s: sympy.Symbol) -> bool:
    """Whether ``e`` is built from rationals and ``s`` by ``+ × ÷`` and integer powers."""
    for t in sympy.preorder_traversal(e):
        if t.is_Rational or t == s or t.is_Add or t.is_Mul:
            continue
        if t.is_Pow and t.exp.is_Integer:
            continue
        return False
    return True


def _point(p: Printed) -> Interval:
    """A printed fraction's one-point interval (a printed ``p/q`` is always finite)."""
    v = cast(Fraction, p.value)
    return Interval(v, v, True, True)


def searched(
    x: Located,
    sym: sympy.Symbol,
    p: Printed,
    mode: str,
    window: tuple[Fraction, Fraction] | None = None,
    held: dict[sympy.Symbol, sympy.Expr] | None = None,
) -> dict[str, Any] | None:
    """The certified set of ``sym`` in ``window`` (the declared range, else :data:`SEARCH_RANGE`)
    where ``p`` is a correct rounding, other symbols at their ``held`` values; the
    :class:`~symtf.roots.RoundingSet` itself under ``_set``, its Dual under ``_dual``."""
    from symtf import roots

    if held:
        dual = roots.Dual(getattr(x.xp, "defs", {}), sym, held)
    else:
        dual = roots.dual_for(x.xp, sym) if x.xp is not None else roots.Dual({}, sym)
    iv = rounding_interval(p, mode) if not p.is_fraction else _point(p)
    lo, hi = window or SEARCH_RANGE
    if window is None and (sym.is_positive or sym.is_nonnegative):
        lo = Fraction(0)  # a temperature: its negative half means nothing
    try:
        found = roots.rounding_set(dual, x.expr, iv, lo, hi, roots.Budget(min_cell=SEARCH_CELL))
    except (TypeError, Undecided, RecursionError):
        return None
    out: dict[str, Any] = {
        "solutions": [_piece_fields(piece) for piece in found.pieces],
        "solutions_range": [rational_text(lo), rational_text(hi)],
        "solutions_unresolved": [[_exact_text(a), _exact_text(b)] for a, b in found.unresolved],
    }
    if found.stopped:
        out["solutions_stopped"] = found.stopped
    out["_set"] = found
    out["_dual"] = dual
    return out


def _exact_text(q: Fraction) -> str:
    """A search edge as an exact decimal (edges are dyadic: the range's ends halved)."""
    return rational_text(q, 400)


def _piece_fields(piece: Any) -> dict[str, Any]:
    """One interval of a searched set as JSON fields (ends, and how each is known)."""
    kinds = {"root": "root", "unresolved": "unresolved", "range": "search-range"}
    out: dict[str, Any] = {}
    for side, edge in (("lo", piece.left), ("hi", piece.right)):
        at = edge.hi if side == "lo" else edge.lo
        if edge.kind == "root" and edge.lo != edge.hi:
            out[side] = _root_text((edge.lo, edge.hi, ""))
        else:
            out[side] = rational_text(at, 30)
        out[f"{side}_closed"] = edge.kind != "root" or edge.closed
        out[f"{side}_end"] = kinds[edge.kind]
        out[f"{side}_within"] = [_exact_text(edge.lo), _exact_text(edge.hi)]
    return out


def searched_text(
    found: dict[str, Any], sym: sympy.Symbol, p: Printed, *, declared: bool = False
) -> str:
    lo, hi = found["solutions_range"]
    sols = found["solutions"]
    if sols:
        text = f"; it prints as {p.text} for {sym} in " + " ∪ ".join(interval_text(s) for s in sols)
    else:
        text = f"; no {sym} is certified to print as {p.text}"
    text += f" (searched {sym} in {'its declared range ' if declared else ''}[{lo}, {hi}]"
    cells = found["solutions_unresolved"]
    if cells:
        text += f"; {len(cells)} stretch(es) undecided"
        if found.get("solutions_stopped"):
            text += f": {found['solutions_stopped']}"
    return text + ")"


def brief(e: sympy.Expr, limit: int = 300) -> str:
    try:
        text: str = sympy.sstr(e)
    except ValueError:
        return "an expression with very large numbers"
    return text if len(text) <= limit else text[:limit] + "…"


def latex_form(e: sympy.Expr, limit: int = 600) -> str | None:
    """The closed form as LaTeX for the notes (``None`` when it is longer than ``limit``)."""
    try:
        text: str = sympy.latex(e)
    except ValueError:
        return None
    return text if len(text) <= limit else None


def interval_text(s: dict[str, Any]) -> str:
    lo = "(-∞" if s["lo"] is None else ("[" if s["lo_closed"] else "(") + s["lo"]
    hi = "∞)" if s["hi"] is None else s["hi"] + ("]" if s["hi_closed"] else ")")
    ends = [
        f"{'lower' if side == 'lo' else 'upper'} end {_END_WORDS[s[side + '_end']]}"
        for side in ("lo", "hi")
        if s.get(side + "_end", "root") != "root"
    ]
    return f"{lo}, {hi}" + (f" ({'; '.join(ends)})" if ends else "")


_END_WORDS = {"unresolved": "not certain", "search-range": "at the search range's end"}


def _fraction(r: sympy.Rational) -> Fraction:
    return Fraction(int(r.p), int(r.q))


#: Largest degree of a polynomial whose real roots bound a symbolic value's solution set.
MAX_SOLUTION_DEGREE = 12


def solutions(
    e: sympy.Expr, p: Printed, mode: str, window: tuple[Fraction, Fraction] | None = None
) -> list[dict[str, Any]] | None:
    """Where a rational function ``P(s)/Q(s)`` of one symbol prints as ``p``, or ``None``.

    With a ``window`` (the symbol's declared range, closed) the set is cut to it: the
    window's ends join the critical points, and an end of the set that is the
    window's is marked ``search-range``.

    The critical points are the real roots of ``P − lo·Q``, ``P − hi·Q`` and
    ``Q`` (``lo``, ``hi`` the ends of the printed number's rounding interval),
    isolated by SymPy's certified real-root isolation into disjoint rational
    intervals; between them membership is decided exactly at a rational test
    point, at them by the interval's closed ends. ``None`` when the value is not
    such a function with rational coefficients, the degree exceeds
    :data:`MAX_SOLUTION_DEGREE`, or the roots do not separate.
    """
    if len(e.free_symbols) != 1:
        return None
    (s,) = e.free_symbols
    try:
        num, den = sympy.fraction(sympy.cancel(sympy.together(e)))
        pn, pd = sympy.Poly(num, s, domain="QQ"), sympy.Poly(den, s, domain="QQ")
    except (sympy.PolynomialError, sympy.GeneratorsNeeded, ValueError, TypeError, CoercionFailed):
        return None
    if max(pn.degree(), pd.degree()) > MAX_SOLUTION_DEGREE:
        return None
    iv = rounding_interval(p, mode) if not p.is_fraction else _point(p)
    lo_q = sympy.Rational(iv.lo.numerator, iv.lo.denominator)
    hi_q = sympy.Rational(iv.hi.numerator, iv.hi.denominator)
    polys = [(pn - pd * lo_q, "lo"), (pn - pd * hi_q, "hi"), (pd, "pole")]
    eps = Fraction(1, 10**12)
    ends = (
        [] if window is None else [(window[0], window[0], "range"), (window[1], window[1], "range")]
    )
    for _ in range(4):
        points = list(ends)
        for poly, kind in polys:
            if poly.is_zero or poly.degree() <= 0:
                continue
            for (a, b), _mult in poly.intervals(eps=sympy.Rational(eps.numerator, eps.denominator)):
                points.append((_fraction(a), _fraction(b), kind))
        points.sort()
        if all(points[k][1] < points[k + 1][0] for k in range(len(points) - 1)):
            break
        eps /= 10**6
    else:
        return None

    def member(t: Fraction) -> bool:
        if window is not None and not window[0] <= t <= window[1]:
            return False
        qv = _fraction(pd.eval(sympy.Rational(t.numerator, t.denominator)))
        if qv == 0:  # a pole (only a window's end is tested at a point)
            return False
        x = _fraction(pn.eval(sympy.Rational(t.numerator, t.denominator))) / qv
        return (iv.lo < x or (x == iv.lo and iv.lo_closed)) and (
            x < iv.hi or (x == iv.hi and iv.hi_closed)
        )

    # Regions: (−∞, r1), {r1}, (r1, r2), ..., {rm}, (rm, ∞), each inside or not.
    regions: list[tuple[Any, Any, bool]] = []
    tests = ([points[0][0] - 1] if points else [Fraction(0)]) + [
        (points[k][1] + points[k + 1][0]) / 2 for k in range(len(points) - 1)
    ]
    if points:
        tests.append(points[-1][1] + 1)
    for k, t in enumerate(tests):
        left = points[k - 1] if k > 0 else None
        right = points[k] if k < len(points) else None
        regions.append((left, right, member(t)))
        if right is not None:
            at = (right[2] == "lo" and iv.lo_closed) or (right[2] == "hi" and iv.hi_closed)
            if right[2] == "range":
                at = member(right[0])
            elif window is not None and not window[0] <= right[0] <= window[1]:
                at = False  # a root outside the window (its bracket lies wholly outside)
            regions.append((right, right, at))
    out: list[dict[str, Any]] = []
    for left, right, inside in regions:
        if not inside:
            continue
        lo_closed = left is not None and left is right
        if out and out[-1]["_right"] is left:
            out[-1]["_right"] = right
            out[-1]["hi_closed"] = right is not None and left is right
            continue
        out.append({"_left": left, "_right": right, "lo_closed": lo_closed,
                    "hi_closed": right is not None and left is right})  # fmt: skip
    pieces = []
    for r in out:
        piece = {
            "lo": None if r["_left"] is None else _root_text(r["_left"]),
            "hi": None if r["_right"] is None else _root_text(r["_right"]),
            "lo_closed": r["lo_closed"],
            "hi_closed": r["hi_closed"],
        }
        for side, end in (("lo", r["_left"]), ("hi", r["_right"])):
            if end is not None and end[2] == "range":
                piece[f"{side}_end"] = "search-range"
        pieces.append(piece)
    return pieces


def _root_text(root: tuple[Fraction, Fraction, str]) -> str:
    """A root isolated in ``[a, b]``: exact if ``a == b``, else its certain leading digits and ``…``."""
    a, b, _ = root
    if a == b:
        return rational_text(a)
    ta, tb = rational_text(a, 12).rstrip("…"), rational_text(b, 12).rstrip("…")
    common = ""
    for x, y in zip(ta, tb, strict=False):
        if x != y:
            break
        common += x
    return (common or ta[:4]) + "…"
