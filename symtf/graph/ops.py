"""Every step op once, against the backend ``xp``, on N-D :class:`Tensor` values.

Each function takes the number system ``xp`` first (:mod:`symtf.backends`) and
works the same in exact SymPy arithmetic, certified balls and float64: entries
are combined with ``+ − × ÷`` and the backend's scalar functions (``xp.exp``,
``xp.sqrt``, ``xp.log`` …). Branches (ReLU, max, argmax, a mask) are taken on
certified signs (``xp.sign``/``xp.relu``), never on a float that looks close.
Semantics follow numpy (broadcasting, ``axis``, ``keepdims``); shapes are in
each docstring.

Example:
    >>> from symtf.backends import ExactBackend
    >>> xp = ExactBackend()
    >>> softmax(xp, tensor(xp, [0, 0]))
    Tensor(shape=(2,), [1/2, 1/2])
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from fractions import Fraction
from typing import Any

import sympy

from symtf.errors import ShapeError
from symtf.tensor import Tensor, all_indices

Scalar = Any


def _check(cond: bool, message: str) -> None:
    if not cond:
        raise ShapeError(message)


def _shape(s: Sequence[int]) -> str:
    return "(" + ", ".join(str(n) for n in s) + ("," if len(s) == 1 else "") + ")"


def _num(xp: Any, x: Any) -> Scalar:
    """A backend scalar from an int, a Fraction or an exact SymPy number."""
    if isinstance(x, sympy.Basic) and x.is_infinite:
        return xp.neg_inf() if x.is_extended_negative else -xp.neg_inf()
    return xp.const(x)


def tensor(xp: Any, values: Any) -> Tensor:
    """A tensor from nested lists of ints/Fractions/SymPy numbers (for tests and constants)."""

    def shape_of(v: Any) -> tuple[int, ...]:
        return (len(v), *shape_of(v[0])) if isinstance(v, list) else ()

    def flat(v: Any) -> list[Any]:
        return [y for x in v for y in flat(x)] if isinstance(v, list) else [v]

    return Tensor(shape_of(values), [_num(xp, x) for x in flat(values)])


def scalar(x: Scalar) -> Tensor:
    """A 0-D tensor."""
    return Tensor((), [x])


def full(xp: Any, shape: Sequence[int], value: Any) -> Tensor:
    """A tensor of one value: ``-> shape``."""
    v = _num(xp, value)
    return Tensor(shape, [v] * math.prod(shape))


def zeros(xp: Any, shape: Sequence[int]) -> Tensor:
    """Exact zeros: ``-> shape``."""
    return full(xp, shape, 0)


def ones(xp: Any, shape: Sequence[int]) -> Tensor:
    """Exact ones: ``-> shape``."""
    return full(xp, shape, 1)


def eye(xp: Any, n: int) -> Tensor:
    """The identity: ``-> (n, n)``."""
    one, zero = xp.const(1), xp.const(0)
    return Tensor((n, n), [one if i == j else zero for i in range(n) for j in range(n)])


# ----------------------------------------------------------------------------- broadcasting


def broadcast_shape(*shapes: tuple[int, ...]) -> tuple[int, ...]:
    """numpy's broadcast of several shapes.

    Raises:
        ShapeError: Naming every shape when they do not broadcast.
    """
    nd = max(len(s) for s in shapes)
    out = []
    for k in range(nd):
        dims = {s[len(s) - nd + k] for s in shapes if len(s) - nd + k >= 0} - {1}
        _check(
            len(dims) <= 1,
            "shapes " + " and ".join(_shape(s) for s in shapes) + " do not broadcast together",
        )
        out.append(dims.pop() if dims else 1)
    return tuple(out)


def broadcast_to(t: Tensor, shape: tuple[int, ...]) -> Tensor:
    """``t`` repeated along its size-1 (or missing) leading axes: ``-> shape``."""
    if t.shape == shape:
        return t
    lead = len(shape) - t.ndim
    _check(lead >= 0, f"cannot broadcast shape {_shape(t.shape)} to {_shape(shape)}")
    src = t.shape
    out = []
    for idx in all_indices(shape):
        sub = tuple(0 if src[k] == 1 else idx[lead + k] for k in range(len(src)))
        out.append(t.data[t.offset(sub)] if src else t.data[0])
    return Tensor(shape, out)


def _scalar_like(t: Tensor) -> bool:
    return t.size == 1 and t.ndim > 0


def elementwise(xp: Any, fn: Callable[..., Scalar], *args: Tensor) -> Tensor:
    """``fn`` entry by entry with numpy broadcasting; a one-entry tensor mixes like a scalar."""
    sized = [a for a in args if not _scalar_like(a)]
    if len(sized) != len(args) and sized:
        args = tuple(Tensor((), a.data) if _scalar_like(a) else a for a in args)
    shape = broadcast_shape(*(a.shape for a in args))
    bs = [broadcast_to(a, shape) for a in args]
    return Tensor(shape, [fn(*xs) for xs in zip(*(b.data for b in bs), strict=True)])


def add(xp: Any, a: Tensor, b: Tensor) -> Tensor:
    """``a + b`` (broadcast)."""
    return elementwise(xp, lambda x, y: x + y, a, b)


def sub(xp: Any, a: Tensor, b: Tensor) -> Tensor:
    """``a − b`` (broadcast)."""
    return elementwise(xp, lambda x, y: x - y, a, b)


def mul(xp: Any, a: Tensor, b: Tensor) -> Tensor:
    """``a ∘ b``, element-wise (broadcast)."""
    return elementwise(xp, lambda x, y: x * y, a, b)


def div(xp: Any, a: Tensor, b: Tensor) -> Tensor:
    """``a ÷ b``, element-wise (broadcast).

    Raises:
        ModelError: When a divisor is exactly 0.
    """

    def one(x: Scalar, y: Scalar) -> Scalar:
        xp.require_nonzero(y, "a divisor")
        return x / y

    return elementwise(xp, one, a, b)


#: Largest ``|y|`` in ``x ^ y`` for an exact rational ``y``.
MAX_POWER = 1000


def power(xp: Any, a: Tensor, b: Tensor) -> Tensor:
    """``a ^ b``, element-wise (broadcast)."""

    def one(x: Scalar, y: Scalar) -> Scalar:
        if isinstance(y, sympy.Rational) and abs(y) > MAX_POWER:
            raise ShapeError(f"expected an exponent of at most {MAX_POWER}, found {y}")
        if isinstance(y, sympy.Rational) and y < 0:
            xp.require_nonzero(x, "the base of a negative power")
        return x**y

    return elementwise(xp, one, a, b)


def neg(xp: Any, a: Tensor) -> Tensor:
    """``−a``."""
    return a.map(lambda x: -x)


# ----------------------------------------------------------------------------- products and shapes


def _matmul2(xp: Any, a: list[list[Scalar]], b: list[list[Scalar]]) -> list[list[Scalar]]:
    """A 2-D product through the backend's native matrix product."""
    n, m = len(a), len(b[0])
    out = xp.matmul(xp.from_rows(a), xp.from_rows(b))
    return [[xp.entry(out, i, j) for j in range(m)] for i in range(n)]


def matmul(xp: Any, a: Tensor, b: Tensor) -> Tensor:
    """``a @ b`` as numpy: ``(..., n, k) @ (..., k, m) -> (..., n, m)``; 1-D operands are vectors.

    A one-entry operand scales the other (the ``×`` habit of articles).
    """
    if a.ndim == 0 or b.ndim == 0:
        return mul(xp, a, b)
    a2 = a.reshape((1, *a.shape)) if a.ndim == 1 else a
    b2 = b.reshape((*b.shape, 1)) if b.ndim == 1 else b
    (n, k), (k2, m) = a2.shape[-2:], b2.shape[-2:]
    _check(
        k == k2,
        f"cannot multiply shapes {_shape(a.shape)} and {_shape(b.shape)}: {k} ≠ {k2} (inner dimensions)",
    )
    batch = broadcast_shape(a2.shape[:-2], b2.shape[:-2])
    a3 = broadcast_to(a2, (*batch, n, k))
    b3 = broadcast_to(b2, (*batch, k, m))
    out: list[Scalar] = []
    for bi in range(math.prod(batch)):
        ra = a3.data[bi * n * k : (bi + 1) * n * k]
        rb = b3.data[bi * k * m : (bi + 1) * k * m]
        rows = _matmul2(
            xp,
            [list(ra[i * k : (i + 1) * k]) for i in range(n)],
            [list(rb[i * m : (i + 1) * m]) for i in range(k)],
        )
        out.extend(x for r in rows for x in r)
    shape = (*batch, n, m)
    if b.ndim == 1:
        shape = shape[:-1]
    if a.ndim == 1:
        shape = (*shape[:-2], shape[-1]) if b.ndim > 1 else shape[:-1]
    return Tensor(shape, out)


def _axis(axis: int, ndim: int, what: str = "axis") -> int:
    _check(-ndim <= axis < ndim, f"{what} {axis} is out of range for {ndim} axes")
    return axis % ndim


def transpose(xp: Any, x: Tensor, axes: Sequence[int] | None = None) -> Tensor:
    """Permute axes as numpy; no ``axes`` reverses them."""
    nd = x.ndim
    perm = list(reversed(range(nd))) if axes is None else [_axis(a, nd) for a in axes]
    _check(
        sorted(perm) == list(range(nd)),
        f"axes {list(axes or [])} are not a permutation of {nd} axes",
    )
    shape = tuple(x.shape[p] for p in perm)
    out = []
    for idx in all_indices(shape):
        src = [0] * nd
        for k, p in enumerate(perm):
            src[p] = idx[k]
        out.append(x.data[x.offset(src)])
    return Tensor(shape, out)


def T(xp: Any, x: Tensor) -> Tensor:
    """``x.T``: swap the last two axes (a 0- or 1-D tensor is unchanged)."""
    if x.ndim < 2:
        return x
    perm = list(range(x.ndim))
    perm[-2], perm[-1] = perm[-1], perm[-2]
    return transpose(xp, x, perm)


def reshape(xp: Any, x: Tensor, shape: Sequence[int]) -> Tensor:
    """``reshape``/``view``: same entries, another shape; ``-1`` once stands for the rest."""
    shape = list(shape)
    _check(shape.count(-1) <= 1, f"at most one -1 in a shape, found {shape}")
    _check(all(n >= 1 or n == -1 for n in shape), f"expected positive sizes, found {shape}")
    if -1 in shape:
        rest = math.prod(n for n in shape if n != -1)
        _check(
            rest > 0 and x.size % rest == 0,
            f"cannot view shape {_shape(x.shape)} as {shape}",
        )
        shape[shape.index(-1)] = x.size // rest
    _check(
        math.prod(shape) == x.size,
        f"cannot view shape {_shape(x.shape)} ({x.size} entries) as {_shape(shape)}",
    )
    return x.reshape(shape)


def split_heads(xp: Any, x: Tensor, h: int) -> Tensor:
    """Split the last axis into heads: ``(..., s, d) -> (..., h, s, d/h)``."""
    _check(x.ndim >= 2, f"split_heads needs (..., s, d), found {_shape(x.shape)}")
    *lead, s, d = x.shape
    _check(h >= 1 and d % h == 0, f"cannot split width {d} into {h} heads")
    y = reshape(xp, x, [*lead, s, h, d // h])
    nd = y.ndim
    perm = [*range(nd - 3), nd - 2, nd - 3, nd - 1]
    return transpose(xp, y, perm)


def merge_heads(xp: Any, x: Tensor) -> Tensor:
    """Heads side by side: ``(..., h, s, dh) -> (..., s, h·dh)``."""
    _check(x.ndim >= 3, f"merge_heads needs (..., h, s, dh), found {_shape(x.shape)}")
    nd = x.ndim
    *lead, h, s, dh = x.shape
    y = transpose(xp, x, [*range(nd - 3), nd - 2, nd - 3, nd - 1])
    return reshape(xp, y, [*lead, s, h * dh])


def concat(xp: Any, parts: Sequence[Tensor], axis: int = -1) -> Tensor:
    """Join along an existing axis: all shapes equal except along ``axis``."""
    _check(len(parts) >= 1, "concat needs at least one tensor")
    nd = parts[0].ndim
    _check(nd >= 1, "cannot concatenate scalars; use stack")
    ax = _axis(axis, nd)
    for p in parts[1:]:
        _check(
            p.ndim == nd and all(p.shape[k] == parts[0].shape[k] for k in range(nd) if k != ax),
            f"cannot concatenate shapes {_shape(parts[0].shape)} and {_shape(p.shape)} along axis {axis}",
        )
    shape = list(parts[0].shape)
    shape[ax] = sum(p.shape[ax] for p in parts)
    out = []
    for idx in all_indices(shape):
        k = idx[ax]
        for p in parts:
            if k < p.shape[ax]:
                out.append(p[(*idx[:ax], k, *idx[ax + 1 :])])
                break
            k -= p.shape[ax]
    return Tensor(shape, out)


def stack(xp: Any, parts: Sequence[Tensor], axis: int = 0) -> Tensor:
    """Join along a new axis: ``k × shape -> shape with k inserted at axis``."""
    _check(len(parts) >= 1, "stack needs at least one tensor")
    for p in parts[1:]:
        _check(
            p.shape == parts[0].shape,
            f"cannot stack shapes {_shape(parts[0].shape)} and {_shape(p.shape)}",
        )
    nd = parts[0].ndim + 1
    ax = _axis(axis, nd)
    expanded = [p.reshape((*p.shape[:ax], 1, *p.shape[ax:])) for p in parts]
    return concat(xp, expanded, ax)


# ----------------------------------------------------------------------------- element-wise functions


def exp(xp: Any, x: Tensor) -> Tensor:
    """``e^x`` element-wise (``e^{−∞} = 0`` exactly)."""
    return x.map(xp.exp)


def log(xp: Any, x: Tensor) -> Tensor:
    """Natural logarithm element-wise.

    Raises:
        ModelError: For an entry that is exactly 0 (its logarithm is −∞).
    """

    def one(v: Scalar) -> Scalar:
        xp.require_nonzero(v, "the argument of ln")
        return xp.log(v)

    return x.map(one)


def sqrt(xp: Any, x: Tensor) -> Tensor:
    """``√x`` element-wise."""
    return x.map(xp.sqrt)


def absolute(xp: Any, x: Tensor) -> Tensor:
    """``|x|`` element-wise, on a certified sign."""
    return x.map(xp.abs)


def sin(xp: Any, x: Tensor) -> Tensor:
    """``sin x`` element-wise."""
    return x.map(xp.sin)


def cos(xp: Any, x: Tensor) -> Tensor:
    """``cos x`` element-wise."""
    return x.map(xp.cos)


def tanh(xp: Any, x: Tensor) -> Tensor:
    """``tanh x`` element-wise."""
    return x.map(xp.tanh)


def sigmoid(xp: Any, x: Tensor) -> Tensor:
    """``σ(x) = 1/(1 + e^{−x})`` element-wise."""
    return x.map(lambda t: 1 / (1 + xp.exp(-t)))


def relu(xp: Any, x: Tensor) -> Tensor:
    """``max(0, x)`` element-wise, on a certified sign."""
    return x.map(xp.relu)


def gelu(xp: Any, x: Tensor) -> Tensor:
    """Exact GELU ``x/2·(1 + erf(x/√2))`` element-wise."""
    root2 = xp.sqrt(xp.const(2))
    return x.map(lambda t: t / 2 * (1 + xp.erf(t / root2)))


#: The cubic coefficient of the tanh approximation of GELU (Hendrycks & Gimpel).
GELU_TANH_C = Fraction(44715, 1_000_000)


def gelu_tanh(xp: Any, x: Tensor) -> Tensor:
    """GELU's tanh form ``x/2·(1 + tanh(√(2/π)(x + 0.044715x³)))`` element-wise."""
    k = xp.sqrt(xp.const(2) / xp.pi())
    c = xp.const(GELU_TANH_C)
    return x.map(lambda t: t / 2 * (1 + xp.tanh(k * (t + c * t * t * t))))


def silu(xp: Any, x: Tensor) -> Tensor:
    """SiLU ``x/(1 + e^{−x})`` element-wise."""
    return x.map(lambda t: t / (1 + xp.exp(-t)))


def softplus(xp: Any, x: Tensor) -> Tensor:
    """``ln(1 + e^x)`` element-wise."""
    return x.map(lambda t: xp.log(1 + xp.exp(t)))


def maximum(xp: Any, a: Tensor, b: Tensor) -> Tensor:
    """``max(a, b)`` element-wise (broadcast): ``b + relu(a − b)``, a certified branch."""
    return elementwise(xp, lambda x, y: y + xp.relu(x - y), a, b)


def minimum(xp: Any, a: Tensor, b: Tensor) -> Tensor:
    """``min(a, b)`` element-wise (broadcast): ``a − relu(a − b)``, a certified branch."""
    return elementwise(xp, lambda x, y: x - xp.relu(x - y), a, b)


# ----------------------------------------------------------------------------- reductions


def _axes(axis: int | Sequence[int] | None, nd: int) -> list[int]:
    if axis is None:
        return list(range(nd))
    axes = [axis] if isinstance(axis, int) else list(axis)
    out = sorted({_axis(a, nd) for a in axes})
    _check(len(out) == len(axes), f"repeated axis in {axes}")
    return out


def reduce(
    xp: Any,
    x: Tensor,
    fn: Callable[[list[Scalar]], Scalar],
    axis: int | Sequence[int] | None = None,
    keepdims: bool = False,
) -> Tensor:
    """Reduce the entries along ``axis`` (default: all) with ``fn(list) -> scalar``."""
    axes = _axes(axis, x.ndim)
    kept = [k for k in range(x.ndim) if k not in axes]
    out_shape = tuple(x.shape[k] for k in kept)
    groups: dict[tuple[int, ...], list[Scalar]] = {i: [] for i in all_indices(out_shape)}
    for idx, v in zip(all_indices(x.shape), x.data, strict=True):
        groups[tuple(idx[k] for k in kept)].append(v)
    data = [fn(groups[i]) for i in all_indices(out_shape)]
    if keepdims:
        out_shape = tuple(1 if k in axes else n for k, n in enumerate(x.shape))
    return Tensor(out_shape, data)


def _total(xp: Any, values: list[Scalar]) -> Scalar:
    if getattr(xp, "name", "") == "exact":
        return sympy.Add(*values)
    total = values[0]
    for v in values[1:]:
        total = total + v
    return total


def sum_(xp: Any, x: Tensor, axis: Any = None, keepdims: bool = False) -> Tensor:
    """Sum along ``axis`` (default: all)."""
    return reduce(xp, x, lambda vs: _total(xp, vs), axis, keepdims)


def mean(xp: Any, x: Tensor, axis: Any = None, keepdims: bool = False) -> Tensor:
    """Mean along ``axis`` (default: all)."""
    return reduce(xp, x, lambda vs: _total(xp, vs) / xp.const(len(vs)), axis, keepdims)


def _max(xp: Any, vs: list[Scalar]) -> Scalar:
    best = vs[0]
    for v in vs[1:]:
        best = best + xp.relu(v - best)
    return best


def _min(xp: Any, vs: list[Scalar]) -> Scalar:
    best = vs[0]
    for v in vs[1:]:
        best = best - xp.relu(best - v)
    return best


def max_(xp: Any, x: Tensor, axis: Any = None, keepdims: bool = False) -> Tensor:
    """Largest entry along ``axis`` (default: all), on certified signs."""
    return reduce(xp, x, lambda vs: _max(xp, vs), axis, keepdims)


def min_(xp: Any, x: Tensor, axis: Any = None, keepdims: bool = False) -> Tensor:
    """Smallest entry along ``axis`` (default: all), on certified signs."""
    return reduce(xp, x, lambda vs: _min(xp, vs), axis, keepdims)


def argmax(xp: Any, x: Tensor, axis: int | None = None, keepdims: bool = False) -> Tensor:
    """Index of the largest entry (the first on an exact tie), on certified signs.

    Raises:
        Undecided: When balls cannot yet order two entries.
    """

    def pick(vs: list[Scalar]) -> Scalar:
        best = 0
        for j in range(1, len(vs)):
            if xp.sign(vs[j] - vs[best]) > 0:
                best = j
        return xp.const(best)

    if axis is None:
        return Tensor((), [pick(list(x.data))])
    return reduce(xp, x, pick, axis, keepdims)


def var(
    xp: Any, x: Tensor, axis: Any = None, keepdims: bool = False, unbiased: bool = False
) -> Tensor:
    """Variance along ``axis``: ``Σ(x − μ)²/n`` (or ``/(n − 1)`` with ``unbiased``)."""

    def one(vs: list[Scalar]) -> Scalar:
        n = len(vs)
        _check(not unbiased or n > 1, "the unbiased variance of a single value is undefined")
        mu = _total(xp, vs) / xp.const(n)
        return _total(xp, [(v - mu) * (v - mu) for v in vs]) / xp.const(n - 1 if unbiased else n)

    return reduce(xp, x, one, axis, keepdims)


def std(
    xp: Any, x: Tensor, axis: Any = None, keepdims: bool = False, unbiased: bool = False
) -> Tensor:
    """Standard deviation along ``axis``: ``√var``."""
    return var(xp, x, axis, keepdims, unbiased).map(xp.sqrt)


# ----------------------------------------------------------------------------- along one axis


def along(xp: Any, x: Tensor, axis: int, fn: Callable[[list[Scalar]], list[Scalar]]) -> Tensor:
    """Apply ``fn(vector) -> vector`` (same length) to every vector along ``axis``."""
    _check(x.ndim >= 1, "expected a tensor with at least one axis, found a scalar")
    ax = _axis(axis, x.ndim)
    others = [k for k in range(x.ndim) if k != ax]
    out = list(x.data)
    for rest in all_indices(tuple(x.shape[k] for k in others)):
        offs = []
        for i in range(x.shape[ax]):
            idx = list(rest)
            idx.insert(ax, i)
            offs.append(x.offset(idx))
        for o, v in zip(offs, fn([x.data[o] for o in offs]), strict=True):
            out[o] = v
    return Tensor(x.shape, out)


def softmax(xp: Any, x: Tensor, axis: int = -1) -> Tensor:
    """``e^{x_i}/Σ_j e^{x_j}`` along ``axis``; −∞ entries get exactly 0.

    A backend that models how a framework computes it (a floating-point format, which
    may shift by the maximum first) provides ``softmax_row`` and is asked instead.
    """
    framework = getattr(xp, "softmax_row", None)

    def one(vs: list[Scalar]) -> list[Scalar]:
        if framework is not None:
            return framework(vs)
        es = [xp.exp(v) for v in vs]
        total = _total(xp, es)
        xp.require_nonzero(total, "the softmax denominator (every entry is −∞)")
        return [e / total for e in es]

    return along(xp, x, axis, one)


def log_softmax(xp: Any, x: Tensor, axis: int = -1) -> Tensor:
    """``x_i − ln Σ_j e^{x_j}`` along ``axis``."""

    def one(vs: list[Scalar]) -> list[Scalar]:
        total = _total(xp, [xp.exp(v) for v in vs])
        xp.require_nonzero(total, "the softmax denominator (every entry is −∞)")
        lse = xp.log(total)
        return [v - lse for v in vs]

    return along(xp, x, axis, one)


def _last_param(xp: Any, p: Tensor, d: int, what: str) -> list[Scalar]:
    if p.size == 1:
        return [p.data[0]] * d
    _check(
        p.shape[-1:] == (d,) and p.size == d,
        f"{what} of shape {_shape(p.shape)} does not fit width {d}",
    )
    return list(p.data)


def layernorm(
    xp: Any,
    x: Tensor,
    eps: Tensor | None = None,
    gamma: Tensor | None = None,
    beta: Tensor | None = None,
    unbiased: bool = False,
) -> Tensor:
    """LayerNorm over the last axis: ``(x − μ)/√(σ² + ε)·γ + β``; shape unchanged.

    ``σ²`` divides by ``d`` (biased, as frameworks do) or ``d − 1`` with ``unbiased``;
    ``γ``, ``β`` are scalars or ``(d,)``.

    Raises:
        ModelError: When some ``σ² + ε`` is exactly 0.
    """
    d = x.shape[-1] if x.ndim else 1
    _check(x.ndim >= 1, "layernorm needs at least one axis")
    _check(not unbiased or d > 1, "the unbiased variance of a single feature is undefined")
    e = xp.const(0) if eps is None else eps.item()
    g = [xp.const(1)] * d if gamma is None else _last_param(xp, gamma, d, "gamma")
    b = [xp.const(0)] * d if beta is None else _last_param(xp, beta, d, "beta")

    def one(vs: list[Scalar]) -> list[Scalar]:
        mu = _total(xp, vs) / xp.const(d)
        c = [v - mu for v in vs]
        s2 = _total(xp, [t * t for t in c]) / xp.const(d - 1 if unbiased else d)
        ve = s2 + e
        xp.require_nonzero(ve, "the variance + eps of a row")
        sd = xp.sqrt(ve)
        return [c[k] / sd * g[k] + b[k] for k in range(d)]

    return along(xp, x, -1, one)


def rmsnorm(xp: Any, x: Tensor, eps: Tensor | None = None, gamma: Tensor | None = None) -> Tensor:
    """RMSNorm over the last axis: ``x/√(mean(x²) + ε)·γ``; shape unchanged.

    Raises:
        ModelError: When some ``mean(x²) + ε`` is exactly 0.
    """
    _check(x.ndim >= 1, "rmsnorm needs at least one axis")
    d = x.shape[-1]
    e = xp.const(0) if eps is None else eps.item()
    g = [xp.const(1)] * d if gamma is None else _last_param(xp, gamma, d, "gamma")

    def one(vs: list[Scalar]) -> list[Scalar]:
        ms = _total(xp, [v * v for v in vs]) / xp.const(d) + e
        xp.require_nonzero(ms, "the mean square + eps of a row")
        r = xp.sqrt(ms)
        return [vs[k] / r * g[k] for k in range(d)]

    return along(xp, x, -1, one)


# ----------------------------------------------------------------------------- masks


def _nonzero(xp: Any, v: Scalar) -> bool:
    return xp.sign(v) != 0


def where(xp: Any, cond: Tensor, a: Tensor, b: Tensor) -> Tensor:
    """``a`` where ``cond ≠ 0`` (a certified test), else ``b`` (broadcast)."""
    return elementwise(xp, lambda c, x, y: x if _nonzero(xp, c) else y, cond, a, b)


def masked_fill(xp: Any, x: Tensor, mask: Tensor, value: Tensor) -> Tensor:
    """``value`` where ``mask ≠ 0``, else ``x`` (broadcast to ``x``'s shape)."""
    out = where(xp, mask, value, x)
    _check(
        out.shape == x.shape,
        f"mask of shape {_shape(mask.shape)} does not fit x of shape {_shape(x.shape)}",
    )
    return out


def _triangle(xp: Any, x: Tensor, keep: Callable[[int, int], bool]) -> Tensor:
    _check(x.ndim >= 2, f"expected at least 2 axes, found shape {_shape(x.shape)}")
    zero = xp.const(0)
    return Tensor(
        x.shape,
        [v if keep(i[-2], i[-1]) else zero for i, v in zip(x.indices(), x.data, strict=True)],
    )


def tril(xp: Any, x: Tensor) -> Tensor:
    """Zero above the diagonal of the last two axes."""
    return _triangle(xp, x, lambda i, j: j <= i)


def triu(xp: Any, x: Tensor) -> Tensor:
    """Zero below the diagonal of the last two axes."""
    return _triangle(xp, x, lambda i, j: j >= i)


def causal_mask(xp: Any, n: int) -> Tensor:
    """The additive causal mask: ``(n, n)``, 0 on and below the diagonal, −∞ above."""
    zero, ninf = xp.const(0), xp.neg_inf()
    return Tensor((n, n), [zero if j <= i else ninf for i in range(n) for j in range(n)])


def dropout(xp: Any, x: Tensor, keep_mask: Tensor, p: Tensor) -> Tensor:
    """Inverted dropout with a given mask: ``x · keep_mask / (1 − p)`` (broadcast)."""
    keep = 1 - p.item()
    xp.require_nonzero(keep, "1 - p (dropout keeps nothing)")
    return elementwise(xp, lambda a, m: a * m / keep, x, keep_mask)


def _int(xp: Any, v: Scalar, what: str) -> int:
    """An exact integer held by a backend scalar."""
    k = as_int(v)
    if k is None:
        raise ShapeError(f"{what}: expected an integer, found {v}")
    return k


def as_int(v: Any) -> int | None:
    """The integer a backend scalar certainly holds, or ``None``."""
    if isinstance(v, bool):
        return int(v)
    if isinstance(v, int):
        return v
    if isinstance(v, sympy.Basic):
        return int(v) if v.is_Integer else None
    if isinstance(v, float):
        return int(v) if v.is_integer() else None
    unique = getattr(v, "unique_fmpz", None)
    if unique is not None:
        z = unique()
        return None if z is None else int(z)
    try:
        f = float(v)
    except (TypeError, ValueError):
        return None
    return int(f) if f.is_integer() else None


def one_hot(xp: Any, ids: Tensor, n: int) -> Tensor:
    """``ids -> ids.shape + (n,)``: 1 at each id, 0 elsewhere."""
    one, zero = xp.const(1), xp.const(0)
    out = []
    for v in ids.data:
        k = _int(xp, v, "one_hot")
        _check(0 <= k < n, f"one_hot: id {k} is outside 0..{n - 1}")
        out.extend(one if j == k else zero for j in range(n))
    return Tensor((*ids.shape, n), out)


# ----------------------------------------------------------------------------- losses


def _targets(xp: Any, target: Tensor, rows: int, width: int) -> list[int]:
    ids = [_int(xp, v, "target") for v in target.data]
    if len(ids) == 1 and rows > 1 and target.ndim == 0:
        ids = ids * rows
    _check(
        len(ids) == rows,
        f"expected {rows} target ids (one per row), found shape {_shape(target.shape)}",
    )
    for k in ids:
        _check(0 <= k < width, f"target {k} is outside 0..{width - 1}")
    return ids


def _rows(x: Tensor) -> tuple[int, int]:
    _check(x.ndim in (1, 2), f"expected (vocab,) or (n, vocab), found {_shape(x.shape)}")
    return (1, x.shape[0]) if x.ndim == 1 else x.shape


def nll(xp: Any, logp: Tensor, target: Tensor) -> Tensor:
    """Mean over rows of ``−logp[row, target]``: ``(n, V), (n,) -> ()``."""
    n, v = _rows(logp)
    ids = _targets(xp, target, n, v)
    picked = [logp.data[i * v + k] for i, k in enumerate(ids)]
    return scalar(-_total(xp, picked) / xp.const(n))


def cross_entropy(xp: Any, logits: Tensor, target: Tensor) -> Tensor:
    """Mean over rows of ``−log_softmax(logits)[row, target]``: ``(n, V), (n,) -> ()``."""
    return nll(xp, log_softmax(xp, logits, -1), target)


def bce(xp: Any, p: Tensor, y: Tensor) -> Tensor:
    """Mean of ``−(y ln p + (1 − y) ln(1 − p))`` (broadcast) ``-> ()``."""

    def one(a: Scalar, t: Scalar) -> Scalar:
        terms = []
        if _nonzero(xp, t):
            xp.require_nonzero(a, "p in bce (ln 0)")
            terms.append(t * xp.log(a))
        if _nonzero(xp, 1 - t):
            xp.require_nonzero(1 - a, "1 - p in bce (ln 0)")
            terms.append((1 - t) * xp.log(1 - a))
        return -_total(xp, terms) if terms else xp.const(0)

    losses = elementwise(xp, one, p, y)
    return mean(xp, losses)


def mse(xp: Any, a: Tensor, b: Tensor) -> Tensor:
    """Mean of ``(a − b)²`` (broadcast) ``-> ()``."""
    return mean(xp, elementwise(xp, lambda x, y: (x - y) * (x - y), a, b))


# ----------------------------------------------------------------------------- positions


def _exact(x: Any) -> sympy.Expr:
    if isinstance(x, sympy.Basic):
        return x
    if isinstance(x, Fraction):
        return sympy.Rational(x.numerator, x.denominator)
    return sympy.Integer(x)


def sinusoidal(xp: Any, n: int, d: int, base: Any = 10000) -> Tensor:
    """``(n, d)``: ``PE[p, 2i] = sin(p/base^{2i/d})``, ``PE[p, 2i+1] = cos(same)``, exact angles."""
    b = _exact(base)
    out = []
    for p in range(n):
        for j in range(d):
            angle = xp.const(sympy.Integer(p) * b ** sympy.Rational(-(j - j % 2), d))
            out.append(xp.sin(angle) if j % 2 == 0 else xp.cos(angle))
    return Tensor((n, d), out)


def rope(
    xp: Any, x: Tensor, angles: Tensor, cos: Tensor | None = None, sin: Tensor | None = None
) -> Tensor:
    """Rotate pairs ``(2i, 2i+1)`` of row ``t`` by ``angles[t, i]``: ``(..., n, d), (n, d/2) -> (..., n, d)``.

    ``cos`` and ``sin``, when given, are the tables of ``cos(angles)`` and ``sin(angles)``
    to rotate with (an article's printed tables), in place of computing them.
    """
    _check(x.ndim >= 2, f"rope needs (..., n, d), found {_shape(x.shape)}")
    n, d = x.shape[-2:]
    _check(d % 2 == 0, f"rope needs an even width, found {d}")
    _check(
        angles.shape == (n, d // 2),
        f"angles of shape {_shape(angles.shape)} do not fit x of shape {_shape(x.shape)}: expected {_shape((n, d // 2))}",
    )
    for table, what in ((cos, "cos"), (sin, "sin")):
        _check(
            table is None or table.size == angles.size,
            f"a {what} table of shape {_shape(table.shape) if table is not None else ''} does not fit angles of shape {_shape(angles.shape)}",
        )
    cs = [
        (
            xp.cos(a) if cos is None else cos.data[k],
            xp.sin(a) if sin is None else sin.data[k],
        )
        for k, a in enumerate(angles.data)
    ]
    out = list(x.data)
    for idx in all_indices(x.shape[:-1]):
        t = idx[-1]
        base = x.offset((*idx, 0))
        for i in range(d // 2):
            c, s = cs[t * (d // 2) + i]
            a, b = x.data[base + 2 * i], x.data[base + 2 * i + 1]
            out[base + 2 * i] = a * c - b * s
            out[base + 2 * i + 1] = a * s + b * c
    return Tensor(x.shape, out)


# ----------------------------------------------------------------------------- indexing


def index(xp: Any, x: Tensor, items: Sequence[Any]) -> Tensor:
    """numpy basic indexing: ints (negative from the end), ``slice``, ``...``, one 1-D int tensor.

    Raises:
        ShapeError: For an index out of range (the index, the axis and the shape).
    """
    items = list(items)
    n_ell = sum(1 for it in items if it is Ellipsis)
    _check(n_ell <= 1, "at most one ... in an index")
    used = len(items) - n_ell
    _check(
        used <= x.ndim,
        f"too many indices ({used}) for a tensor of shape {_shape(x.shape)}",
    )
    if n_ell:
        k = items.index(Ellipsis)
        items[k : k + 1] = [slice(None)] * (x.ndim - used)
    items += [slice(None)] * (x.ndim - len(items))
    picks: list[list[int]] = []
    out_shape: list[int] = []
    arrays = 0
    for ax, (it, n) in enumerate(zip(items, x.shape, strict=True)):
        if isinstance(it, int):
            k = it + n if it < 0 else it
            _check(
                0 <= k < n,
                f"index {it} is out of range for axis {ax} of size {n} (shape {_shape(x.shape)})",
            )
            picks.append([k])
        elif isinstance(it, slice):
            ks = list(range(*it.indices(n)))
            picks.append(ks)
            out_shape.append(len(ks))
        else:  # a list of ints (from a 1-D integer tensor)
            arrays += 1
            _check(arrays == 1, "at most one tensor of indices in an index")
            ks = []
            for k0 in it:
                k = k0 + n if k0 < 0 else k0
                _check(
                    0 <= k < n,
                    f"index {k0} is out of range for axis {ax} of size {n} (shape {_shape(x.shape)})",
                )
                ks.append(k)
            picks.append(ks)
            out_shape.append(len(ks))
    data = []
    combos: list[tuple[int, ...]] = [()]
    for ks in picks:
        combos = [(*c, k) for c in combos for k in ks]
    data = [x.data[x.offset(c)] for c in combos]
    return Tensor(out_shape, data)


__all__ = [
    "add",
    "argmax",
    "bce",
    "causal_mask",
    "concat",
    "cross_entropy",
    "div",
    "dropout",
    "eye",
    "gelu",
    "gelu_tanh",
    "layernorm",
    "log_softmax",
    "matmul",
    "mean",
    "merge_heads",
    "mse",
    "nll",
    "one_hot",
    "reshape",
    "rmsnorm",
    "rope",
    "sigmoid",
    "silu",
    "sinusoidal",
    "softmax",
    "softplus",
    "split_heads",
    "stack",
    "std",
    "transpose",
    "var",
    "where",
]
