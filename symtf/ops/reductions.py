"""Reductions: sums, means, extremes, argmax, variance; and the greedy pick of a row.

Along the last axis of a 2-D tensor a sum is the native product with a column
of ones. Extremes and argmax branch on certified signs (``xp.sign``,
``xp.relu``), never on a float that looks close.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping, Sequence
from typing import Any

from symtf.ops.array import (
    add_all,
    apply,
    reduce,
    reduced_shape,
    require_nonzero_each,
    total,
    unbroadcast,
)
from symtf.ops.core import (
    BREAK,
    Param,
    Substitution,
    along,
    axes_of,
    check,
    define,
    elementwise_shape,
    fmt,
    zero_vjp,
)
from symtf.ops.elementwise import mul, sub, times
from symtf.ops.working import Context, Entry, Line, Recorded, both, dims, reads, terms
from symtf.tensor import Tensor

X = Param("x")
AXIS = Param("axis", "axis", None, doc="default: every axis")
KEEP = Param("keepdims", "bool", False)
UNBIASED = Param("unbiased", "bool", False, doc="divide by n − 1, not n")


def _reduce_shape(x: Any, *, axis: Any = None, keepdims: bool = False, **_: Any) -> tuple[int, ...]:
    return reduced_shape(x, axis, keepdims)


def _count(shape: Sequence[int], axis: Any) -> int:
    return math.prod(shape[a] for a in axes_of(axis, len(shape)))


def _keep_for_broadcast(xp: Any, g: Tensor, x: Tensor, axis: Any, keepdims: bool) -> Tensor:
    """A reduction's cotangent reshaped so it broadcasts back over the reduced axes."""
    if keepdims or not x.ndim:
        return g
    return g.reshape(reduced_shape(x.shape, axis, True))


def _sum_vjp(
    xp: Any, g: Tensor, x: Tensor, *, output: Tensor, axis: Any = None, keepdims: bool = False
) -> tuple[Any, ...]:
    from symtf.ops.array import broadcast_to

    return (broadcast_to(_keep_for_broadcast(xp, g, x, axis, keepdims), x.shape),)


@define(
    "sum",
    "reductions",
    (X, AXIS, KEEP),
    shape=_reduce_shape,
    tex=r"\sum_i x_i",
    text="Σ x",
    shapes="axis removed",
    vjp=_sum_vjp,
)
def sum_(xp: Any, x: Tensor, *, axis: Any = None, keepdims: bool = False) -> Tensor:
    """Sum along ``axis`` (default: all)."""
    return total(xp, x, axis, keepdims)


def _mean_vjp(
    xp: Any, g: Tensor, x: Tensor, *, output: Tensor, axis: Any = None, keepdims: bool = False
) -> tuple[Any, ...]:
    (gs,) = _sum_vjp(xp, g, x, output=output, axis=axis, keepdims=keepdims)
    return (times(xp, gs, 1 / xp.const(_count(x.shape, axis))),)


def _mean_display(params: Mapping[str, Any], labels: Mapping[str, str]) -> str:
    return labels.get("formula", r"\mu = \frac{1}{d}\sum_j x_j")


def _mean_sub(s: Substitution) -> str | None:
    shape = s.shapes[0]
    d = shape[-1] if shape else 0
    return rf"\frac{{1}}{{{d}}}\sum_{{j=1}}^{{{d}}} {s.args[0]}_{{\cdot j}}"


def _mean_rule(params: Mapping[str, Any], labels: Mapping[str, str]) -> str:
    return r"\text{mean " + along(params.get("axis")) + "}"


def _over(n: int, line: Line) -> Line:
    """``(line) / n`` as a mean is written."""
    return Line(rf"\tfrac{{1}}{{{n}}}\bigl({line.tex}\bigr)", f"({line.text}) / {n}")


@reads(1)
def _mean_work(ctx: Context, step: Recorded, i: int, j: int) -> Entry | None:
    """``(x[i,0] + … + x[i,n-1]) / n``."""
    x = step.inputs[0]
    n = dims(ctx, x)[1]
    return both(ctx, lambda cell: _over(n, terms([cell(x, i, c) for c in range(n)])))


@define(
    "mean",
    "reductions",
    (X, AXIS, KEEP),
    shape=_reduce_shape,
    tex=r"\frac{1}{n}\sum_i x_i",
    text="Σ x / n",
    shapes="axis removed",
    display=_mean_display,
    substitute=_mean_sub,
    vjp=_mean_vjp,
    rule=_mean_rule,
    work=_mean_work,
)
def mean(xp: Any, x: Tensor, *, axis: Any = None, keepdims: bool = False) -> Tensor:
    """Mean along ``axis`` (default: all): the sum times ``1/n``."""
    return times(xp, total(xp, x, axis, keepdims), 1 / xp.const(_count(x.shape, axis)))


def _ms_shape(
    x: Any, *, axis: Any = -1, keepdims: bool = True, unbiased: bool = False
) -> tuple[int, ...]:
    check(
        not unbiased or _count(x, axis) > 1,
        "the unbiased variance of a single feature is undefined",
    )
    return reduced_shape(x, axis, keepdims)


def _ms_display(params: Mapping[str, Any], labels: Mapping[str, str]) -> str:
    if "formula" in labels:
        return labels["formula"]
    sym = labels.get("out", r"\sigma^2")
    x = labels.get("x", r"(x_j-\mu)")
    d = "d-1" if params.get("unbiased") else "d"
    return rf"{sym} = \frac{{1}}{{{d}}}\sum_j {x}^2"


def _ms_sub(s: Substitution) -> str | None:
    shape = s.shapes[0]
    n = shape[-1] if shape else 0
    d = n - (1 if s.params.get("unbiased") else 0)
    return rf"\frac{{1}}{{{d}}}\sum_{{j=1}}^{{{n}}} \left({s.args[0]}_{{\cdot j}}\right)^2"


def _ms_vjp(
    xp: Any,
    g: Tensor,
    x: Tensor,
    *,
    output: Tensor,
    axis: Any = -1,
    keepdims: bool = True,
    unbiased: bool = False,
) -> tuple[Any, ...]:
    from symtf.ops.array import broadcast_to

    n = _count(x.shape, axis) - (1 if unbiased else 0)
    gb = broadcast_to(_keep_for_broadcast(xp, g, x, axis, keepdims), x.shape)
    return (times(xp, mul(xp, gb, x), 2 / xp.const(n)),)


def _mean_square_rule(params: Mapping[str, Any], labels: Mapping[str, str]) -> str:
    over = r"\text{, over } n - 1" if params.get("unbiased") else ""
    return r"\text{mean square " + along(params.get("axis", -1)) + "}" + over


def _mean_of_squares(ctx: Context, x: str, i: int, n: int, div: int) -> Entry:
    """``(x[i,0]² + … + x[i,n-1]²) / div`` (a variance of centred values, or a mean square)."""
    return both(
        ctx,
        lambda cell: _over(
            div, terms([Line(f"{cell(x, i, k).tex}^2", f"{cell(x, i, k).text}²") for k in range(n)])
        ),
    )


@reads(1)
def _mean_square_work(ctx: Context, step: Recorded, i: int, j: int) -> Entry | None:
    """The row's squares summed over ``n`` (``n − 1`` when unbiased)."""
    x = step.inputs[0]
    n = dims(ctx, x)[1]
    return _mean_of_squares(ctx, x, i, n, n - 1 if step.params.get("unbiased") else n)


@define(
    "mean_square",
    "reductions",
    (X, Param("axis", "axis", -1), Param("keepdims", "bool", True), UNBIASED),
    shape=_ms_shape,
    tex=r"\frac{1}{d}\sum_j x_j^2",
    text="Σ x² / d (or / (d − 1))",
    shapes="(n, d) → (n, 1)",
    public=False,
    display=_ms_display,
    substitute=_ms_sub,
    vjp=_ms_vjp,
    rule=_mean_square_rule,
    work=_mean_square_work,
)
def mean_square(
    xp: Any, x: Tensor, *, axis: Any = -1, keepdims: bool = True, unbiased: bool = False
) -> Tensor:
    """The squares of ``x`` summed along ``axis`` over ``n`` (or ``n − 1``): a centred row's
    variance, an RMSNorm's mean square."""
    n = _count(x.shape, axis)
    sq = total(xp, mul(xp, x, x), axis, keepdims)
    return times(xp, sq, 1 / xp.const(n - 1 if unbiased else n))


def _var_shape(
    x: Any, *, axis: Any = None, keepdims: bool = False, unbiased: bool = False
) -> tuple[int, ...]:
    check(
        not unbiased or _count(x, axis) > 1,
        "the unbiased variance of a single value is undefined",
    )
    return reduced_shape(x, axis, keepdims)


def _var_vjp(
    xp: Any,
    g: Tensor,
    x: Tensor,
    *,
    output: Tensor,
    axis: Any = None,
    keepdims: bool = False,
    unbiased: bool = False,
) -> tuple[Any, ...]:
    # var = Σ(x − μ)²/n': 2(x − μ)/n' (the mean's own term sums to 0)
    centered = sub(xp, x, mean(xp, x, axis=axis, keepdims=True))
    return _ms_vjp(xp, g, centered, output=output, axis=axis, keepdims=keepdims, unbiased=unbiased)


@define(
    "var",
    "reductions",
    (X, AXIS, KEEP, UNBIASED),
    shape=_var_shape,
    tex=r"\frac{1}{n}\sum_i (x_i-\mu)^2",
    text="Σ(x−μ)²/n (or /(n−1))",
    shapes="axis removed",
    vjp=_var_vjp,
)
def var(
    xp: Any, x: Tensor, *, axis: Any = None, keepdims: bool = False, unbiased: bool = False
) -> Tensor:
    """Variance along ``axis``: the mean square of ``x − μ`` (over ``n − 1`` with ``unbiased``)."""
    mu = mean(xp, x, axis=axis, keepdims=True)
    return mean_square.compute(xp, sub(xp, x, mu), axis=axis, keepdims=keepdims, unbiased=unbiased)


def _std_vjp(
    xp: Any,
    g: Tensor,
    x: Tensor,
    *,
    output: Tensor,
    axis: Any = None,
    keepdims: bool = False,
    unbiased: bool = False,
) -> tuple[Any, ...]:
    # std = √var: the variance's cotangent is g/(2·std)
    from symtf.ops.elementwise import quotient

    require_nonzero_each(xp, output, lambda i: "the deviation (√var is 0)")
    gv = quotient(xp, g, times(xp, output, xp.const(2)))
    return _var_vjp(xp, gv, x, output=output, axis=axis, keepdims=keepdims, unbiased=unbiased)


@define(
    "std",
    "reductions",
    (X, AXIS, KEEP, UNBIASED),
    shape=_var_shape,
    tex=r"\sqrt{\frac{1}{n}\sum_i (x_i-\mu)^2}",
    text="√var",
    shapes="axis removed",
    vjp=_std_vjp,
)
def std(
    xp: Any, x: Tensor, *, axis: Any = None, keepdims: bool = False, unbiased: bool = False
) -> Tensor:
    """Standard deviation along ``axis``: ``√var``."""
    return apply(xp, var.compute(xp, x, axis=axis, keepdims=keepdims, unbiased=unbiased), xp.sqrt)


# ----------------------------------------------------------------------------- extremes


def _largest(xp: Any, vs: list[Any]) -> Any:
    best = vs[0]
    for v in vs[1:]:
        best = best + xp.relu(v - best)
    return best


def _smallest(xp: Any, vs: list[Any]) -> Any:
    best = vs[0]
    for v in vs[1:]:
        best = best - xp.relu(best - v)
    return best


def _extreme_shape(
    x: Any, y: Any = None, *, axis: Any = None, keepdims: bool = False
) -> tuple[int, ...]:
    if y is not None:
        return elementwise_shape(x, y)
    return reduced_shape(x, axis, keepdims)


def _extreme_vjp(largest: bool) -> Callable[..., tuple[Any, ...]]:
    """The VJP of ``max`` (``largest``) or ``min``: the cotangent goes to the entries equal
    to the extreme, exact ties sharing it equally (as torch's ``amax`` and ``maximum``).
    Equality and order are certified sign tests."""

    def vjp(
        xp: Any,
        g: Tensor,
        x: Tensor,
        y: Tensor | None = None,
        *,
        output: Tensor,
        axis: Any = None,
        keepdims: bool = False,
    ) -> tuple[Any, ...]:
        from symtf.ops.array import broadcast_to, generic

        zero, one = xp.const(0), xp.const(1)
        if y is not None:
            half = one / 2

            def share(a: Any, b: Any) -> Any:
                c = xp.sign(a - b)
                return half if c == 0 else one if (c > 0) == largest else zero

            gx = mul(xp, g, generic(xp, share, x, y))
            gy = sub(xp, g, gx)
            return unbroadcast(xp, gx, x.shape), unbroadcast(xp, gy, y.shape)
        out_b = broadcast_to(_keep_for_broadcast(xp, output, x, axis, keepdims), x.shape)
        hit = generic(xp, lambda a, m: one if xp.sign(a - m) == 0 else zero, x, out_b)
        count = broadcast_to(total(xp, hit, axis, keepdims=True), x.shape)
        gb = broadcast_to(_keep_for_broadcast(xp, g, x, axis, keepdims), x.shape)
        return generic(xp, lambda gi, h, n: gi * h / n, gb, hit, count), None

    return vjp


def _extreme(name: str, pick: Callable[[Any, list[Any]], Any], pair: Callable[..., Any]) -> Any:
    def compute(
        xp: Any, x: Tensor, y: Tensor | None = None, *, axis: Any = None, keepdims: bool = False
    ) -> Tensor:
        if y is not None:
            from symtf.ops.array import generic

            return generic(xp, lambda a, b: pair(xp, a, b), x, y)
        return reduce(xp, x, lambda vs: pick(xp, vs), axis, keepdims)

    compute.__doc__ = (
        f"``{name}(x)`` along ``axis`` (default: all), or ``{name}(a, b)`` element-wise, "
        "on certified signs."
    )
    word = "largest" if name == "max" else "smallest"
    return define(
        name,
        "reductions",
        (X, Param("y", "tensor", None), AXIS, KEEP),
        shape=_extreme_shape,
        tex=rf"\{name}_i x_i",
        text=f"the {word} entry; {name}(a, b) element-wise: "
        + ("b + relu(a − b)" if name == "max" else "a − relu(a − b)"),
        shapes="axis removed; broadcast for two tensors",
        vjp=_extreme_vjp(name == "max"),
    )(compute)


max_ = _extreme("max", _largest, lambda xp, a, b: b + xp.relu(a - b))
min_ = _extreme("min", _smallest, lambda xp, a, b: a - xp.relu(a - b))


def _argmax_shape(x: Any, *, axis: int | None = None, keepdims: bool = False) -> tuple[int, ...]:
    if axis is None:
        return ()
    return reduced_shape(x, axis, keepdims)


@define(
    "argmax",
    "reductions",
    (X, Param("axis", "int", None), KEEP),
    shape=_argmax_shape,
    tex=r"\arg\max_i x_i",
    text="index of the largest entry (the first of exact ties)",
    shapes="axis removed",
    vjp=zero_vjp,
)
def argmax(xp: Any, x: Tensor, *, axis: int | None = None, keepdims: bool = False) -> Tensor:
    """Index of the largest entry (the first on an exact tie), on certified signs.

    Raises:
        Undecided: When balls cannot yet order two entries.
    """

    def pick(vs: list[Any]) -> Any:
        best = 0
        for j in range(1, len(vs)):
            if xp.sign(vs[j] - vs[best]) > 0:
                best = j
        return xp.const(best)

    if axis is None:
        return Tensor((), [pick(list(x.data))])
    return reduce(xp, x, pick, axis, keepdims)


def tie_groups(n: int, cmp: Callable[[int, int], int | None]) -> list[list[int]] | None:
    """Indices ``0..n-1`` grouped by exact ties, largest first.

    Args:
        n: How many values.
        cmp: ``cmp(j, k)`` is the certified sign of ``value[j] − value[k]``, or ``None``
            when it cannot be decided.

    Returns:
        The groups, or ``None`` when some order cannot be decided.
    """
    remaining = list(range(n))
    groups: list[list[int]] = []
    while remaining:
        best = [remaining[0]]
        for j in remaining[1:]:
            c = cmp(j, best[0])
            if c is None:
                return None
            if c > 0:
                best = [j]
            elif c == 0:
                best.append(j)
        groups.append(best)
        remaining = [j for j in remaining if j not in best]
    return groups


def largest(xp: Any, values: Sequence[Any]) -> tuple[int, ...]:
    """Indices of the largest of ``values``; more than one means an exact tie.

    Raises:
        Undecided: When balls cannot yet separate two entries.
    """
    best = [0]
    for j in range(1, len(values)):
        c = xp.sign(values[j] - values[best[0]])
        if c > 0:
            best = [j]
        elif c == 0:
            best.append(j)
    return tuple(best)


def _greedy_shape(z: Any) -> tuple[int, ...]:
    check(len(z) == 2 and z[0] == 1, f"expected one row of scores, found shape {fmt(z)}")
    return ()


@define(
    "greedy",
    "reductions",
    (Param("z"),),
    shape=_greedy_shape,
    tex=r"\arg\max_i z_i",
    text="the ids of the largest scores (more than one on an exact tie)",
    shapes="(1, V) → token ids",
    public=False,
    tensor_out=False,
    vjp=zero_vjp,
    rule=r"\text{the largest entry}",
)
def greedy(xp: Any, z: Tensor) -> tuple[int, ...] | None:
    """The greedy pick of a ``[1, V]`` row: the indices of its largest entries.

    ``None`` when the exact order depends on free symbols, or the midpoint–radius
    enclosure is too wide to tell (a certified backend then decides).

    Raises:
        Undecided: (balls) when a sign cannot be decided at this precision.
    """
    from symtf.errors import Undecided

    try:
        return largest(xp, list(z.data))
    except Undecided:
        if xp.name in ("exact", "midrad"):
            return None
        raise


_unused = (add_all, unbroadcast, BREAK)

__all__ = [
    "argmax",
    "greedy",
    "largest",
    "max_",
    "mean",
    "mean_square",
    "min_",
    "std",
    "sum_",
    "tie_groups",
    "var",
]
