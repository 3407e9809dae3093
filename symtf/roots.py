"""Certified sets of one symbol's values: where does a value print as a given number?

A value of the exact trace that depends on one real symbol ``a`` is a function
``e(a)`` written as a DAG of named nodes (:attr:`ExactBackend.defs`). Which
``a`` make a printed number a correct rounding of ``e(a)``? That is the set
where ``lo ≤ e(a) ≤ hi`` (ends open or closed by the rounding rule), bounded by
the roots of ``e(a) − lo`` and ``e(a) − hi``.

Certification. Values and derivatives are enclosed by forward-mode
differentiation in ball arithmetic (python-flint ``arb``) over the DAG, with
``a`` a point or a whole interval; nothing is expanded into one closed form.
Roots are isolated by subdivision of a bounded search range: a cell whose value
enclosure excludes the boundary holds no root; a cell whose derivative
enclosure excludes 0 is monotone, so a sign change at its exact rational ends
proves exactly one root there, narrowed by bisection on exact-point
evaluations. A cell that cannot be settled within the budget (evaluations or
the running ``--timeout``) is *unresolved*: it splits the range, and no
interval is claimed across it. Between settled edges membership is constant
and is decided at one rational point.

One cache of node enclosures per cell is shared by every value of a trace, so
the second entry of a step costs little more than its own nodes.
"""

from __future__ import annotations

import heapq
import itertools
import time
from collections import OrderedDict
from dataclasses import dataclass, field
from fractions import Fraction
from typing import Any

import sympy
from flint import arb, ctx, fmpq

from symtf.backends.certify import ball_parts, time_left
from symtf.dag import postorder
from symtf.errors import Undecided

#: Initial cells of the range for root isolation, and the finest cell (fraction of the range).
CELLS = 32
MIN_CELL = Fraction(1, 2**24)
#: Width of a root's certified bracket (fraction of the range).
ROOT_TOL = Fraction(1, 2**40)
#: Dual evaluations allowed per boundary before cells are left unresolved.
EVAL_BUDGET = 3000
#: Cells whose node enclosures stay cached (per precision), shared by all values.
CACHED_CELLS = 2048
#: Seconds of the ``--timeout`` budget a root search leaves for the rest of the run.
RESERVE_SECONDS = 3.0


def _q(x: Fraction) -> fmpq:
    return fmpq(x.numerator, x.denominator)


def _interval(lo: Fraction, hi: Fraction) -> arb:
    a = arb(_q(lo))
    return a if lo == hi else a.union(arb(_q(hi)))


def _constant(v: sympy.Expr, prec: int) -> arb:
    """A certified ball of an exact constant (a rational, or √2) at ``prec`` bits."""
    if v.is_Rational:
        return arb(fmpq(int(v.p), int(v.q)))
    from symtf.backends.certify import ball

    return ball(v, prec)


class Dual:
    """Forward-mode derivative in ball arithmetic over an exact expression DAG.

    Args:
        defs: Node symbol → definition (:attr:`ExactBackend.defs`).
        symbol: The variable.
        fixed: Other symbols held at exact values (the file's), derivative 0: the
            partial derivative in ``symbol`` with the others at those values.
    """

    def __init__(
        self,
        defs: dict[sympy.Symbol, sympy.Expr],
        symbol: sympy.Symbol,
        fixed: dict[sympy.Symbol, sympy.Expr] | None = None,
    ) -> None:
        self.defs = defs
        self.symbol = symbol
        self.fixed = dict(fixed or {})
        self.calls = 0
        # keyed by the ends' integers: a Fraction's hash is recomputed (a modular inverse)
        # on every lookup, and the search looks cells up hundreds of thousands of times
        self._cells: OrderedDict[tuple[int, int, int, int, int], dict[Any, Any]] = OrderedDict()
        #: Finished searches, by (value, boundaries, range): a value printed twice is searched once.
        self.sets: dict[tuple[Any, ...], RoundingSet] = {}

    def at(self, e: sympy.Expr, lo: Fraction, hi: Fraction, prec: int = 128) -> tuple[arb, arb]:
        """Enclosures of the value and the derivative of ``e`` for the symbol in ``[lo, hi]``."""
        self.calls += 1
        key = (lo.numerator, lo.denominator, hi.numerator, hi.denominator, prec)
        saved = ctx.prec
        ctx.prec = prec
        try:
            memo = self._cells.get(key)
            if memo is None:  # the cell's ends read at ``prec`` bits, not the context's 53
                memo = {self.symbol: (_interval(lo, hi), arb(1))}
                for s, v in self.fixed.items():  # enclosed at ``prec`` bits, slope 0
                    memo[s] = (_constant(v, prec), arb(0))
                self._cells[key] = memo
                if len(self._cells) > CACHED_CELLS:
                    self._cells.popitem(last=False)
            else:
                self._cells.move_to_end(key)
            # parts before the nodes built from them: _d then never recurses more than a
            # level (a chain of 2,000 steps nests its nodes 2,000 deep)
            order = postorder(e, lambda n: ball_parts(n, self.defs), memo)
            for node in order or ():
                self._d(node, memo)
            return self._d(e, memo)
        finally:
            ctx.prec = saved

    def _d(self, e: sympy.Basic, memo: dict[Any, tuple[arb, arb]]) -> tuple[arb, arb]:
        hit = memo.get(e)
        if hit is not None:
            return hit
        zero = arb(0)
        if e.is_Rational:
            r = (arb(fmpq(int(e.p), int(e.q))), zero)
        elif e is sympy.S.Pi:
            r = (arb.pi(), zero)
        elif e is sympy.S.Exp1:
            r = (arb(1).exp(), zero)
        elif e is sympy.S.NegativeInfinity:
            r = (arb("-inf"), zero)
        elif e.is_Symbol:
            if e not in self.defs:
                raise Undecided(f"the value depends on another symbol, {e}")
            r = self._d(self.defs[e], memo)
        elif e.is_Add:
            v, dv = arb(0), arb(0)
            for a in e.args:
                x, dx = self._d(a, memo)
                v += x
                dv += dx
            r = (v, dv)
        elif e.is_Mul:
            v, dv = arb(1), arb(0)
            for a in e.args:
                x, dx = self._d(a, memo)
                v, dv = v * x, dv * x + v * dx
            r = (v, dv)
        elif e.is_Pow:
            r = self._pow(e, memo)
        elif e.func is sympy.exp:
            x, dx = self._d(e.args[0], memo)
            v = x.exp()
            r = (v, v * dx)
        elif e.func is sympy.log:
            x, dx = self._d(e.args[0], memo)
            r = (x.log(), dx / x)
        elif e.func is sympy.erf:
            x, dx = self._d(e.args[0], memo)
            r = (x.erf(), 2 / arb.pi().sqrt() * (-(x * x)).exp() * dx)
        elif e.func is sympy.tanh:
            x, dx = self._d(e.args[0], memo)
            t = x.tanh()
            r = (t, (1 - t * t) * dx)
        elif e.func is sympy.sin:
            x, dx = self._d(e.args[0], memo)
            r = (x.sin(), x.cos() * dx)
        elif e.func is sympy.cos:
            x, dx = self._d(e.args[0], memo)
            r = (x.cos(), -x.sin() * dx)
        elif e.func is sympy.Abs:
            x, dx = self._d(e.args[0], memo)
            r = _pick((x, dx), (-x, -dx), largest=True)
        elif isinstance(e, (sympy.Max, sympy.Min)):
            items = [self._d(a, memo) for a in e.args]
            r = items[0]
            for item in items[1:]:
                r = _pick(r, item, largest=isinstance(e, sympy.Max))
        else:
            raise TypeError(f"cannot differentiate {type(e).__name__}")
        memo[e] = r
        return r

    def _pow(self, e: sympy.Pow, memo: dict[Any, tuple[arb, arb]]) -> tuple[arb, arb]:
        base, ex = e.args
        b, db = self._d(base, memo)
        if ex.is_Integer:
            n = int(ex)
            if n >= 0:
                return b**n, (n * b ** (n - 1) * db if n else arb(0))
            p = b ** (-n)
            return 1 / p, n * db / (p * b)
        if ex == sympy.S.Half:
            s = b.sqrt()
            return s, db / (2 * s)
        if ex == -sympy.S.Half:
            s = b.rsqrt()
            return s, -db * s / (2 * b)
        x, dx = self._d(ex, memo)
        lb = b.log()
        v = (x * lb).exp()
        return v, v * (dx * lb + x * db / b)


def _pick(a: tuple[arb, arb], b: tuple[arb, arb], *, largest: bool) -> tuple[arb, arb]:
    """max/min of two duals; where the branch is not decided, the hull of both slopes
    (a Clarke derivative: still a valid enclosure for monotonicity)."""
    diff = a[0] - b[0]
    if diff > 0:
        return a if largest else b
    if diff < 0:
        return b if largest else a
    v = a[0].max(b[0]) if largest else a[0].min(b[0])
    return v, a[1].union(b[1])


def dual_for(backend: Any, symbol: sympy.Symbol) -> Dual:
    """The trace's one :class:`Dual` for ``symbol`` (its cell cache shared by every value)."""
    duals: dict[sympy.Symbol, Dual] | None = getattr(backend, "_duals", None)
    if duals is None:
        duals = {}
        backend._duals = duals
    if symbol not in duals:
        duals[symbol] = Dual(backend.defs, symbol)
    return duals[symbol]


# ----------------------------------------------------------------------------- roots


def _sign(x: arb) -> int | None:
    if x > 0:
        return 1
    if x < 0:
        return -1
    if x.is_exact() and x.is_zero():
        return 0
    return None


class Budget:
    """Evaluations and seconds a search may spend.

    Args:
        evaluations: Dual evaluations allowed.
        seconds: Wall-clock seconds allowed (``None``: only the ``--timeout`` budget's reserve).
        min_cell: The finest cell, as a fraction of the range: near a pole the enclosures
            stay wide however small the cell, and each halving below this only costs.
    """

    def __init__(
        self,
        evaluations: int = EVAL_BUDGET,
        seconds: float | None = None,
        min_cell: Fraction = MIN_CELL,
    ) -> None:
        self.evaluations = evaluations
        #: The finest cell split, as a fraction of the range (below it a cell is unresolved).
        self.min_cell = min_cell
        self.deadline = None if seconds is None else time.perf_counter() + seconds
        #: Why the search stopped early ("" while it has not).
        self.spent = ""

    def exhausted(self, calls: int) -> bool:
        """Whether the search must stop (and :attr:`spent` says why)."""
        if self.spent:
            return True
        if calls > self.evaluations:
            self.spent = f"the search's {self.evaluations} evaluations were used up"
        elif self.deadline is not None and time.perf_counter() > self.deadline:
            self.spent = "the search's time was used up"
        else:
            left = time_left()
            if left is not None and left < RESERVE_SECONDS:
                self.spent = "the --timeout budget was nearly used up"
        return bool(self.spent)


@dataclass
class Isolation:
    """The roots of ``value(a) − c`` in a range.

    Attributes:
        roots: Brackets ``(lo, hi)`` each holding exactly one root (``lo == hi``: exact root).
        unresolved: Cells where no decision was reached.
    """

    roots: list[tuple[Fraction, Fraction]] = field(default_factory=list)
    unresolved: list[tuple[Fraction, Fraction]] = field(default_factory=list)


def _evaluate(dual: Dual, e: sympy.Expr, lo: Fraction, hi: Fraction, prec: int) -> tuple[arb, arb]:
    try:
        return dual.at(e, lo, hi, prec)
    except (ZeroDivisionError, ValueError):
        return arb("nan"), arb("nan")


def point_sign(dual: Dual, e: sympy.Expr, a: Fraction, c: Fraction) -> int | None:
    """Certified sign of ``e(a) − c`` at a rational point, or ``None``."""
    for prec in (128, 256, 512):
        v, _ = _evaluate(dual, e, a, a, prec)
        s = _sign(v - arb(_q(c)))
        if s is not None:
            return s
    return None


def _enclose(dual: Dual, e: sympy.Expr, left: Fraction, right: Fraction) -> tuple[arb, arb]:
    """Value and slope enclosures over a cell, the value tightened by the mean-value form.

    ``e([l, r]) ⊆ e(m) + e'([l, r])·[−h, h]`` (``m`` the midpoint, ``h`` the half-width),
    intersected with the direct enclosure: small cells then shrink quadratically.
    """
    v, dv = _evaluate(dual, e, left, right, 128)
    if left == right or not dv.is_finite():
        return v, dv
    mid, half = (left + right) / 2, (right - left) / 2
    vm, _ = _evaluate(dual, e, mid, mid, 128)
    centred = vm + dv * arb(_q(-half)).union(arb(_q(half)))
    if not v.is_finite():
        return centred, dv
    try:
        return v.intersection(centred), dv
    except ValueError:  # disjoint enclosures cannot both hold: keep the direct one
        return v, dv


def isolate_all(
    dual: Dual,
    e: sympy.Expr,
    cs: list[Fraction],
    lo: Fraction,
    hi: Fraction,
    budget: Budget | None = None,
) -> list[Isolation]:
    """Certified isolation of the roots of ``e(a) − c`` in ``[lo, hi]``, for each ``c`` of ``cs``.

    One subdivision serves every ``c``: a cell is split only while some ``c`` is
    not settled in it.
    """
    budget = budget or Budget()
    outs = [Isolation() for _ in cs]
    balls = [arb(_q(c)) for c in cs]
    width = hi - lo
    start = dual.calls
    everyone = tuple(range(len(cs)))
    # Widest cells first: the budget is spread over the whole range, so a pole or a
    # near-tangency that needs endless splitting leaves only its own neighbourhood undecided.
    # A cell is (depth, k): the k-th of CELLS·2^depth equal cells. Integers order the heap
    # as the widths and left ends did (widest first, then left to right), without the
    # Fraction comparisons that once took a tenth of the search.
    heap = [(0, k, everyone) for k in range(CELLS)]
    heapq.heapify(heap)
    while heap:
        depth, k_cell, ks = heapq.heappop(heap)
        n_cells = CELLS << depth
        left = lo + width * Fraction(k_cell, n_cells)
        right = lo + width * Fraction(k_cell + 1, n_cells)
        if budget.exhausted(dual.calls - start):
            for k in ks:
                outs[k].unresolved.append((left, right))
            continue
        v, dv = _enclose(dual, e, left, right)
        open_ks = []
        for k in ks:
            g = v - balls[k]
            if g > 0 or g < 0:
                continue  # no root of this boundary in this cell
            out, c = outs[k], cs[k]
            sl, sr = point_sign(dual, e, left, c), point_sign(dual, e, right, c)
            if sl == 0 and (left, left) not in out.roots:
                out.roots.append((left, left))
            if (dv > 0 or dv < 0) and sl is not None and sr is not None:
                if sl * sr < 0:
                    out.roots.append(_bisect(dual, e, c, left, right, sl, width * ROOT_TOL))
                elif sr == 0 and (right, right) not in out.roots:
                    out.roots.append((right, right))
                continue  # monotone: at most one root, found or absent
            if right - left <= width * budget.min_cell:
                out.unresolved.append((left, right))
                continue
            open_ks.append(k)
        if open_ks:
            heapq.heappush(heap, (depth + 1, 2 * k_cell, tuple(open_ks)))
            heapq.heappush(heap, (depth + 1, 2 * k_cell + 1, tuple(open_ks)))
    for out in outs:  # found in order of width: sorted by position for the caller
        out.roots.sort()
        out.unresolved.sort()
    return outs


def isolate(
    dual: Dual,
    e: sympy.Expr,
    c: Fraction,
    lo: Fraction,
    hi: Fraction,
    budget: Budget | None = None,
) -> Isolation:
    """Certified isolation of the roots of ``e(a) − c`` for ``a`` in ``[lo, hi]``."""
    return isolate_all(dual, e, [c], lo, hi, budget)[0]


def _bisect(
    dual: Dual, e: sympy.Expr, c: Fraction, left: Fraction, right: Fraction, sl: int, tol: Fraction
) -> tuple[Fraction, Fraction]:
    while right - left > tol:
        mid = (left + right) / 2
        s = point_sign(dual, e, mid, c)
        if s is None:
            break  # the root is within the balls' reach of mid: keep the bracket we have
        if s == 0:
            return mid, mid
        if s == sl:
            left = mid
        else:
            right = mid
    return left, right


# ----------------------------------------------------------------------------- the set


@dataclass(frozen=True)
class Edge:
    """Where membership may change: a root bracket, an unresolved cell, or an end of the range.

    Attributes:
        lo: Left end of the bracket or cell.
        hi: Right end (``lo == hi``: an exact point).
        kind: ``"root"`` (exactly one root of one boundary inside), ``"unresolved"``
            (nothing is known inside) or ``"range"`` (an end of the search range).
        closed: For a root, whether the boundary it solves belongs to the rounding interval.
    """

    lo: Fraction
    hi: Fraction
    kind: str
    closed: bool = False


@dataclass(frozen=True)
class Piece:
    """One interval of the set, between two edges.

    Every ``a`` in ``[left.hi, right.lo]`` belongs to the set. With a ``root`` edge the
    interval ends at that root (inside its bracket), closed when the edge is; with an
    ``unresolved`` or ``range`` edge it may go on past it.
    """

    left: Edge
    right: Edge

    @property
    def inner(self) -> tuple[Fraction, Fraction]:
        """The part certified inside the set."""
        return self.left.hi, self.right.lo

    def contains(self, a: Fraction) -> bool | None:
        """Whether ``a`` lies in this interval (``None`` near an end that is not certain)."""
        lo, hi = self.inner
        open_lo = a == lo and self.left.kind == "root" and not self.left.closed
        open_hi = a == hi and self.right.kind == "root" and not self.right.closed
        if lo <= a <= hi and not open_lo and not open_hi:
            return True
        outside_left = a < self.left.lo and self.left.kind == "root"
        outside_right = a > self.right.hi and self.right.kind == "root"
        if outside_left or outside_right:
            return False
        return None


@dataclass
class RoundingSet:
    """The symbol's values in a range for which a print is a correct rounding.

    Attributes:
        lo: Lower end of the search range.
        hi: Upper end of the search range.
        pieces: Its intervals, left to right.
        unresolved: Cells where nothing was decided.
        stopped: Why the search stopped early ("" when it ran to the end).
    """

    lo: Fraction
    hi: Fraction
    pieces: list[Piece]
    unresolved: list[tuple[Fraction, Fraction]]
    stopped: str = ""

    def contains(self, a: Fraction) -> bool | None:
        """Whether ``a`` is certainly in the set (``True``), certainly not (``False``), or unknown."""
        if not self.lo <= a <= self.hi:
            return None
        answers = [p.contains(a) for p in self.pieces]
        if True in answers:
            return True
        if any(lo <= a <= hi for lo, hi in self.unresolved):
            return None
        if any(p.left.lo <= a <= p.right.hi for p in self.pieces):
            return None
        return False


def _member(dual: Dual, e: sympy.Expr, t: Fraction, iv: Any, lo_b: arb, hi_b: arb) -> bool | None:
    for prec in (256, 512, 1024):
        v, _ = _evaluate(dual, e, t, t, prec)
        a, b = _sign(v - lo_b), _sign(v - hi_b)
        if a is None or b is None:
            continue
        return (a > 0 or (a == 0 and iv.lo_closed)) and (b < 0 or (b == 0 and iv.hi_closed))
    return None


def member_at(dual: Dual, e: sympy.Expr, t: Fraction, iv: Any) -> bool | None:
    """Whether ``iv`` holds ``e`` at the point ``a = t`` (``None`` if the balls cannot tell)."""
    return _member(dual, e, t, iv, arb(_q(iv.lo)), arb(_q(iv.hi)))


def _merge(edges: list[Edge]) -> list[Edge]:
    """Sorted edges with overlapping ones joined (an overlap decides nothing: unresolved)."""
    out: list[Edge] = []
    for ed in sorted(edges, key=lambda x: (x.lo, x.hi)):
        if out and ed.lo < out[-1].hi:
            last = out[-1]
            out[-1] = Edge(last.lo, max(last.hi, ed.hi), "unresolved")
        else:
            out.append(ed)
    return out


def rounding_set(
    dual: Dual,
    e: sympy.Expr,
    iv: Any,
    lo: Fraction,
    hi: Fraction,
    budget: Budget | None = None,
) -> RoundingSet:
    """The ``a`` in ``[lo, hi]`` for which ``iv.lo ≤ e(a) ≤ iv.hi`` (ends as ``iv`` says).

    Args:
        dual: The evaluator over the trace's DAG.
        e: The value (a node of the DAG, or an expression in its nodes).
        iv: The rounding interval of the print (:class:`symtf.numbers.Interval`).
        lo: Lower end of the search range.
        hi: Upper end of the search range.
        budget: What the search may spend (shared by both boundaries).
    """
    key = (e, iv.lo, iv.hi, iv.lo_closed, iv.hi_closed, lo, hi)
    if key in dual.sets:
        return dual.sets[key]
    budget = budget or Budget()
    edges: list[Edge] = [Edge(lo, lo, "range"), Edge(hi, hi, "range")]
    unresolved: list[tuple[Fraction, Fraction]] = []
    found = isolate_all(dual, e, [iv.lo, iv.hi], lo, hi, budget)
    for r, closed in zip(found, (iv.lo_closed, iv.hi_closed), strict=True):
        edges += [Edge(a, b, "root", closed) for a, b in r.roots]
        unresolved += r.unresolved
    edges += [Edge(a, b, "unresolved") for a, b in _joined(unresolved)]
    edges = _merge(edges)
    lo_b, hi_b = arb(_q(iv.lo)), arb(_q(iv.hi))
    # Gaps between edges: membership there is constant; decide it at the midpoint.
    status: list[bool | None] = []
    for a, b in itertools.pairwise(edges):
        if b.lo <= a.hi:
            status.append(None if a.kind == "unresolved" or b.kind == "unresolved" else False)
            continue
        status.append(_member(dual, e, (a.hi + b.lo) / 2, iv, lo_b, hi_b))
    pieces: list[Piece] = []
    start: Edge | None = None
    for k, inside in enumerate(status):
        left, right = edges[k], edges[k + 1]
        if inside is None:  # an undecided gap: as good as an unresolved cell
            if start is not None:  # a point root may be a tangency: the set may go on
                end = left if left.lo < left.hi else Edge(left.lo, left.hi, "unresolved")
                pieces.append(Piece(start, end))
                start = None
            unresolved.append((left.hi, right.lo))
            continue
        if not inside:
            if start is not None:
                pieces.append(Piece(start, left))
                start = None
            continue
        if start is None:
            start = left
        elif not (left.kind == "root" and left.closed):
            pieces.append(Piece(start, left))  # the root point itself is outside
            start = left
        if k + 1 == len(status) or right.kind != "root":
            pieces.append(Piece(start, right))
            start = None
    result = RoundingSet(lo, hi, pieces, _joined(unresolved), budget.spent)
    if not budget.spent:  # a search cut short may do better with more time
        dual.sets[key] = result
    return result


def _joined(cells: list[tuple[Fraction, Fraction]]) -> list[tuple[Fraction, Fraction]]:
    out: list[tuple[Fraction, Fraction]] = []
    for a, b in sorted(cells):
        if out and a <= out[-1][1]:
            out[-1] = (out[-1][0], max(out[-1][1], b))
        else:
            out.append((a, b))
    return out


__all__ = [
    "Budget",
    "Dual",
    "Edge",
    "Isolation",
    "Piece",
    "RoundingSet",
    "dual_for",
    "isolate",
    "isolate_all",
    "point_sign",
    "rounding_set",
]
