"""Rounding, signs, clipping, ``//``, ``%`` and comparisons: the ops whose value jumps.

Each is decided on certified signs (:meth:`Backend.sign`), never on a float
guess: ``floor(x)`` takes a candidate integer ``n`` from the value's midpoint and
keeps it only once ``x − n ≥ 0`` and ``x − (n + 1) < 0`` are shown. Exact
rationals are decided exactly; a ball or midpoint–radius enclosure that
straddles a rounding boundary (or, for a comparison, overlaps the other
operand) raises :class:`~symtf.errors.Undecided`, and evaluation escalates to a
higher precision and then to exact arithmetic, so a certified backend never
gives a wrong value. ``±∞`` keeps its sign through ``floor``/``ceil``/``trunc``/
``round`` (as numpy and torch do).

The gradients follow torch: 0 for ``round``, ``floor``, ``ceil``, ``trunc``,
``sign``, ``//`` and the comparisons; ``clip`` passes the gradient where
``lo ≤ x ≤ hi`` (inclusive) and to ``lo`` or ``hi`` where it clips; ``a % b``
gives ``g`` to ``a`` and ``−g·⌊a/b⌋`` to ``b``.
"""

from __future__ import annotations

import math
from fractions import Fraction
from typing import TYPE_CHECKING, Any

import sympy

from symtf.errors import ModelError, Undecided
from symtf.ops.array import full, generic, unbroadcast
from symtf.ops.core import BREAK, Param, Substitution, define, elementwise_shape, same_shape
from symtf.tensor import Tensor

if TYPE_CHECKING:
    from symtf.backends.protocol import Backend

X = Param("x")
A, B = Param("a"), Param("b")

#: Largest ``|decimals|`` of ``round(x, decimals)``.
MAX_DECIMALS = 100


# ----------------------------------------------------------------------------- certified integers


def infinity(xp: Any, v: Any) -> int:
    """+1 or −1 for an exact ±∞, 0 for a finite value.

    Raises:
        Undecided: For an enclosure whose radius is infinite (an unknown value).
    """
    if isinstance(v, sympy.Basic):
        if v is sympy.S.NaN:
            raise ModelError("the value is undefined (NaN)")
        return (1 if v.is_extended_positive else -1) if v.is_infinite else 0
    b = getattr(v, "b", v)  # a float format's ball holds its arb
    if hasattr(b, "is_finite") and hasattr(b, "rad"):
        if b.is_finite():
            return 0
        if b.is_exact() and not b.is_nan():
            return 1 if float(b.mid()) > 0 else -1
        raise Undecided(f"an enclosure of unknown size ({b}) cannot be rounded")
    f = float(getattr(v, "v", v))
    if math.isnan(f):
        raise ModelError("the value is undefined (NaN)")
    return 0 if math.isfinite(f) else (1 if f > 0 else -1)


def _candidate(xp: Any, v: Any) -> int:
    """An integer near ``⌊v⌋`` (its midpoint's floor), to be confirmed by signs."""
    if isinstance(v, sympy.Basic):
        if v.is_Rational:
            return int(v.p) // int(v.q)
        v = xp.ball(v, 128) if hasattr(xp, "ball") else _ball(v)
    b = getattr(v, "b", v)
    if hasattr(b, "mid") and hasattr(b, "rad"):
        z = b.mid().floor().unique_fmpz()
        if z is None:  # pragma: no cover - the floor of an exact midpoint is exact
            raise Undecided(f"no integer near {b}")
        return int(z)
    return math.floor(float(getattr(v, "v", v)))


def _ball(v: sympy.Basic) -> Any:
    from symtf.backends.certify import ball

    return ball(v, 128)


def minus(xp: Any, a: Any, b: Any) -> Any:
    """``a − b`` for a sign test: exact for a float format's balls (comparing two floats
    rounds nothing), the backend's own subtraction otherwise."""
    if hasattr(a, "fmt") and hasattr(b, "fmt"):
        return type(a)(a.b - b.b, a.fmt)
    return a - b


def ratio(xp: Any, a: Any, b: Any) -> Any:
    """``a / b`` whose floor is taken: the exact quotient for a float format's balls (Python
    and torch floor the exact quotient of two floats), the backend's division otherwise."""
    if hasattr(a, "fmt") and hasattr(b, "fmt"):
        return type(a)(a.b / b.b, a.fmt)
    return a / b


def floor_int(xp: Any, v: Any) -> int:
    """``⌊v⌋`` for a finite backend scalar, proven with certified signs.

    Raises:
        Undecided: When the enclosure straddles an integer (escalate).
    """
    n = _candidate(xp, v)
    if isinstance(v, sympy.Rational):
        return n
    for _ in range(4):  # a midpoint a rounding off: step towards the proven integer
        if xp.sign(minus(xp, v, xp.const(n))) < 0:
            n -= 1
        elif xp.sign(minus(xp, v, xp.const(n + 1))) >= 0:
            n += 1
        else:
            return n
    raise Undecided(f"cannot bracket {v} between two integers")  # pragma: no cover


def _integer(xp: Any, n: int) -> Any:
    return xp.const(n)


def _keep_infinite(xp: Any, fn: Any) -> Any:
    """``fn`` on finite scalars; an exact ±∞ is returned as it is."""

    def one(v: Any) -> Any:
        return v if infinity(xp, v) else fn(v)

    return one


def floor_of(xp: Any, v: Any) -> Any:
    """``⌊v⌋`` as a backend scalar (±∞ unchanged)."""
    return v if infinity(xp, v) else _integer(xp, floor_int(xp, v))


def ceil_of(xp: Any, v: Any) -> Any:
    """``⌈v⌉`` as a backend scalar (±∞ unchanged)."""
    return v if infinity(xp, v) else _integer(xp, -floor_int(xp, -v))


def trunc_of(xp: Any, v: Any) -> Any:
    """``v`` rounded towards 0 (±∞ unchanged)."""
    if infinity(xp, v):
        return v
    return _integer(xp, floor_int(xp, v) if xp.sign(v) >= 0 else -floor_int(xp, -v))


def round_of(xp: Any, v: Any, mode: str = "half_even") -> Any:
    """``v`` rounded to the nearest integer; a tie (``k + ½`` exactly) to the even one
    (``half_even``, numpy and torch) or away from zero (``half_up``, as school
    arithmetic, ``decimal.ROUND_HALF_UP`` and C's ``round``)."""
    if infinity(xp, v):
        return v
    f = floor_int(xp, v)
    side = xp.sign(minus(xp, minus(xp, v, xp.const(f)), xp.const(Fraction(1, 2))))
    if side != 0:
        return _integer(xp, f + 1 if side > 0 else f)
    # a tie: to the even neighbour, or away from zero
    up = f % 2 == 1 if mode in ("half_even", "half-even") else f >= 0
    return _integer(xp, f + 1 if up else f)


def compare(xp: Backend, a: Any, b: Any) -> int:
    """The certified sign of ``a − b`` (−1, 0 or 1), ±∞ included (``∞ = ∞``).

    Raises:
        Undecided: When the enclosures overlap (escalate).
    """
    ia, ib = infinity(xp, a), infinity(xp, b)
    if ia or ib:
        return (ia > ib) - (ia < ib)
    return xp.sign(minus(xp, a, b))


def _each(xp: Any, x: Tensor, fn: Any) -> Tensor:
    """``fn`` on every entry as a backend scalar (never on a whole native matrix)."""
    return Tensor(x.shape, [fn(v) for v in x.data])


def zeros_like(xp: Any, t: Tensor | None) -> Tensor | None:
    """A zero cotangent of ``t``'s shape (``None`` for an argument not given)."""
    return None if t is None else full(xp, t.shape, 0)


def _zero_vjp(xp: Any, g: Tensor, *inputs: Any, output: Tensor, **_: Any) -> tuple[Any, ...]:
    return tuple(zeros_like(xp, t) for t in inputs)


# ----------------------------------------------------------------------------- rounding


def _round_shape(x: Any, *, decimals: int = 0, mode: str = "half_even") -> tuple[int, ...]:
    return tuple(x)


@define(
    "round",
    "rounding",
    (
        X,
        Param("decimals", "int", 0, hi=MAX_DECIMALS, doc="digits after the point"),
        Param(
            "mode",
            "choice",
            "half_even",
            choices=("half_even", "half_up", "half-even", "half-up"),  # as a claim's rounding
        ),
    ),
    shape=_round_shape,
    elementwise=True,
    tex=r"\operatorname{round}(x)",
    text="nearest integer (of x·10^decimals, over 10^decimals); ties to even, or away from 0 "
    "with mode='half_up'",
    shapes="unchanged",
    vjp=_zero_vjp,
)
def round_(xp: Any, x: Tensor, *, decimals: int = 0, mode: str = "half_even") -> Tensor:
    """Round to the nearest integer, ties to even (numpy, torch) or away from zero (``half_up``);
    with ``decimals`` the nearest multiple of ``10^−decimals``."""
    if decimals == 0:
        return _each(xp, x, lambda v: round_of(xp, v, mode))
    s = xp.const(Fraction(10) ** decimals)

    def one(v: Any) -> Any:
        return v if infinity(xp, v) else round_of(xp, v * s, mode) / s

    return _each(xp, x, one)


def _unary(name: str, tex: str, text: str, fn: Any, doc: str, aliases: tuple[str, ...] = ()) -> Any:
    def compute(xp: Any, x: Tensor) -> Tensor:
        return _each(xp, x, lambda v: fn(xp, v))

    compute.__doc__ = doc
    return define(
        name,
        "rounding",
        (X,),
        shape=same_shape,
        elementwise=True,
        tex=tex,
        text=text,
        shapes="unchanged",
        aliases=aliases,
        vjp=_zero_vjp,
        doc=doc,
    )(compute)


floor = _unary(
    "floor", r"\lfloor x \rfloor", "⌊x⌋: the largest integer ≤ x", floor_of, "``⌊x⌋`` element-wise."
)
ceil = _unary(
    "ceil", r"\lceil x \rceil", "⌈x⌉: the smallest integer ≥ x", ceil_of, "``⌈x⌉`` element-wise."
)
trunc = _unary(
    "trunc",
    r"\operatorname{trunc} x",
    "x rounded towards 0",
    trunc_of,
    "``x`` rounded towards 0, element-wise.",
)
sign = _unary(
    "sign",
    r"\operatorname{sgn} x",
    "−1, 0 or 1, on a certified sign",
    lambda xp, v: _integer(xp, compare(xp, v, xp.const(0))),
    "The sign of each entry: −1, 0 or 1 (certified; ±∞ give ±1).",
    aliases=("sgn",),
)


# ----------------------------------------------------------------------------- clip


def _clip_shape(x: Any, lo: Any = None, hi: Any = None) -> tuple[int, ...]:
    from symtf.ops.core import check, fmt

    out = elementwise_shape(x, lo, hi)
    check(
        out == elementwise_shape(x),
        f"the bounds of shapes {fmt(lo or ())} and {fmt(hi or ())} do not fit x of shape {fmt(x)}",
    )
    return out


def _clip_one(xp: Any, v: Any, lo: Any, hi: Any) -> Any:
    if compare(xp, v, lo) < 0:
        v = lo
    return hi if compare(xp, v, hi) > 0 else v


def _clip_parts(xp: Any, x: Tensor, lo: Tensor | None, hi: Tensor | None) -> list[Tensor]:
    """``x``, ``lo`` and ``hi`` broadcast together (a missing bound as ``−∞``/``+∞``)."""
    inf = -xp.neg_inf()
    return [
        x,
        lo if lo is not None else Tensor((), [-inf]),
        hi if hi is not None else Tensor((), [inf]),
    ]


def _clip_vjp(
    xp: Any, g: Tensor, x: Tensor, lo: Tensor | None, hi: Tensor | None, *, output: Tensor
) -> tuple[Any, ...]:
    # out = min(max(x, lo), hi): the gradient goes to whichever of x, lo, hi the value is
    # (x on a tie, as torch.clamp passes it where lo ≤ x ≤ hi)
    zero = xp.const(0)

    def to_x(gv: Any, v: Any, a: Any, b: Any) -> Any:
        return gv if compare(xp, v, a) >= 0 and compare(xp, v, b) <= 0 else zero

    def to_lo(gv: Any, v: Any, a: Any, b: Any) -> Any:
        return gv if compare(xp, v, a) < 0 and compare(xp, a, b) <= 0 else zero

    def to_hi(gv: Any, v: Any, a: Any, b: Any) -> Any:
        m = a if compare(xp, v, a) < 0 else v
        return gv if compare(xp, m, b) > 0 else zero

    parts = _clip_parts(xp, x, lo, hi)
    gx = generic(xp, to_x, g, *parts)
    glo = None if lo is None else unbroadcast(xp, generic(xp, to_lo, g, *parts), lo.shape)
    ghi = None if hi is None else unbroadcast(xp, generic(xp, to_hi, g, *parts), hi.shape)
    return unbroadcast(xp, gx, x.shape), glo, ghi


@define(
    "clip",
    "rounding",
    (X, Param("lo", "tensor", None), Param("hi", "tensor", None)),
    shape=_clip_shape,
    elementwise=True,
    tex=r"\min(\max(x, lo), hi)",
    text="min(max(x, lo), hi), on certified comparisons",
    shapes="unchanged; lo, hi broadcast to x",
    aliases=("clamp",),
    vjp=_clip_vjp,
)
def clip(xp: Any, x: Tensor, lo: Tensor | None = None, hi: Tensor | None = None) -> Tensor:
    """``min(max(x, lo), hi)`` element-wise (``torch.clamp``: ``hi`` wins when ``lo > hi``)."""
    if lo is None and hi is None:
        return x
    return generic(xp, lambda v, a, b: _clip_one(xp, v, a, b), *_clip_parts(xp, x, lo, hi))


# ----------------------------------------------------------------------------- // and %


def _two(a: Any, b: Any) -> tuple[int, ...]:
    return elementwise_shape(a, b)


def _infix(sym: str) -> Any:
    def sub(s: Substitution) -> str:
        return f"{s.args[0]}{BREAK}{sym} {s.args[1]}"

    return sub


def _finite_pair(xp: Any, a: Any, b: Any, what: str) -> None:
    if infinity(xp, a) or infinity(xp, b):
        raise ModelError(f"{what} is undefined for an infinite operand")
    xp.require_nonzero(b, f"the divisor of {what}")


def floordiv_of(xp: Any, a: Any, b: Any) -> Any:
    """``⌊a / b⌋`` (Python's ``//``) as a backend scalar.

    Raises:
        ModelError: For a divisor that is exactly 0, or an infinite operand.
    """
    _finite_pair(xp, a, b, "a // b")
    return _integer(xp, floor_int(xp, ratio(xp, a, b)))


def mod_of(xp: Any, a: Any, b: Any) -> Any:
    """``a − b·⌊a / b⌋`` (Python's ``%``: the sign of the divisor) as a backend scalar."""
    _finite_pair(xp, a, b, "a % b")
    return a - b * xp.const(floor_int(xp, ratio(xp, a, b)))


@define(
    "floordiv",
    "rounding",
    (A, B),
    shape=_two,
    elementwise=True,
    tex=r"\left\lfloor \frac{a}{b} \right\rfloor",
    text="⌊a / b⌋ (Python's //)",
    shapes="broadcast",
    public=False,
    spelling="a // b",
    substitute=_infix("//"),
    vjp=_zero_vjp,
)
def floordiv(xp: Any, a: Tensor, b: Tensor) -> Tensor:
    """``a // b``: ``⌊a / b⌋`` element-wise with broadcasting (Python's floor division).

    Raises:
        ModelError: When a divisor is exactly 0.
    """
    return generic(xp, lambda x, y: floordiv_of(xp, x, y), a, b)


def _mod_vjp(xp: Any, g: Tensor, a: Tensor, b: Tensor, *, output: Tensor) -> tuple[Any, ...]:
    gb = generic(xp, lambda gv, x, y: -gv * _integer(xp, floor_int(xp, ratio(xp, x, y))), g, a, b)
    return unbroadcast(xp, g, a.shape), unbroadcast(xp, gb, b.shape)


@define(
    "mod",
    "rounding",
    (A, B),
    shape=_two,
    elementwise=True,
    tex=r"a \bmod b",
    text="a − b·⌊a / b⌋ (Python's %: the sign of the divisor)",
    shapes="broadcast",
    public=False,
    spelling="a % b",
    substitute=_infix(r"\bmod"),
    vjp=_mod_vjp,
)
def mod(xp: Any, a: Tensor, b: Tensor) -> Tensor:
    """``a % b`` element-wise with broadcasting: ``a − b·⌊a/b⌋``, of the divisor's sign.

    Raises:
        ModelError: When a divisor is exactly 0.
    """
    return generic(xp, lambda x, y: mod_of(xp, x, y), a, b)


# ----------------------------------------------------------------------------- comparisons

#: name -> (spelling, LaTeX relation, whether the sign of a − b satisfies it)
COMPARISONS: dict[str, tuple[str, str, Any]] = {
    "lt": ("<", "<", lambda s: s < 0),
    "le": ("<=", r"\le", lambda s: s <= 0),
    "gt": (">", ">", lambda s: s > 0),
    "ge": (">=", r"\ge", lambda s: s >= 0),
    "eq": ("==", "=", lambda s: s == 0),
    "ne": ("!=", r"\ne", lambda s: s != 0),
}


def _comparison(name: str) -> Any:
    spelled, rel, holds = COMPARISONS[name]

    def compute(xp: Any, a: Tensor, b: Tensor) -> Tensor:
        one, zero = xp.const(1), xp.const(0)
        return generic(xp, lambda x, y: one if holds(compare(xp, x, y)) else zero, a, b)

    compute.__doc__ = (
        f"``a {spelled} b`` element-wise with broadcasting: 1 where it holds, else 0 "
        "(on a certified comparison)."
    )
    return define(
        name,
        "rounding",
        (A, B),
        shape=_two,
        elementwise=True,
        tex=rf"[a {rel} b]",
        text=f"1 where a {spelled} b, else 0 (certified)",
        shapes="broadcast",
        public=False,
        spelling=f"a {spelled} b",
        substitute=_infix(rel),
        vjp=_zero_vjp,
    )(compute)


lt = _comparison("lt")
le = _comparison("le")
gt = _comparison("gt")
ge = _comparison("ge")
eq = _comparison("eq")
ne = _comparison("ne")


__all__ = [
    "COMPARISONS",
    "MAX_DECIMALS",
    "ceil",
    "ceil_of",
    "clip",
    "compare",
    "eq",
    "floor",
    "floor_int",
    "floor_of",
    "floordiv",
    "floordiv_of",
    "ge",
    "gt",
    "infinity",
    "le",
    "lt",
    "minus",
    "mod",
    "mod_of",
    "ne",
    "ratio",
    "round_",
    "round_of",
    "sign",
    "trunc",
    "trunc_of",
    "zeros_like",
]
