"""For every registry op: a generator of sample inputs and an independent mpmath reference.

Imported by ``tests/test_op_registry.py``, which runs every op of :data:`symtf.ops.REGISTRY`
in every backend on these samples. An op registered without an entry here fails that
test: adding an op means adding its reference (one entry, below) and nothing else.

A reference is written from the op's definition with numpy object arrays of mpmath
numbers at 60 digits (numpy does the shapes, broadcasting and axes; mpmath the
arithmetic), never with symtf. Samples are small rationals (with zeros and ties), and
``−∞`` where the op allows it.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass, field
from fractions import Fraction
from typing import Any

import mpmath
import numpy as np
import sympy
from hypothesis import strategies as st

INF = float("-inf")


@dataclass
class Case:
    """One sample: tensor arguments (object arrays of Fractions, ``None``, or lists of arrays
    for a variadic op) in signature order, and the plain parameters."""

    tensors: list[Any]
    params: dict[str, Any] = field(default_factory=dict)
    native: bool = True  # also run it with the tensors as native matrices (0-, 1-, 2-D)


@dataclass(frozen=True)
class Reference:
    """How to sample an op and what it must give.

    Attributes:
        sample: A hypothesis strategy of :class:`Case`.
        expect: ``expect(case) -> object array of mpf`` (or a tuple of ints for token picks).
        integer: Whether the result holds integers (indices) compared exactly.
    """

    sample: st.SearchStrategy[Case]
    expect: Callable[[Case], Any]
    integer: bool = False


# ----------------------------------------------------------------------------- samples


def _frac(lo: int = -3, hi: int = 3, den: int = 4) -> st.SearchStrategy[Fraction]:
    return st.builds(
        lambda n, d: Fraction(n, d), st.integers(lo * den, hi * den), st.integers(1, den)
    )


def array(
    shape: tuple[int, ...],
    values: st.SearchStrategy[Any] | None = None,
    *,
    ties: bool = True,
) -> st.SearchStrategy[np.ndarray]:
    """An object array of Fractions; with ``ties`` the entries come from a pool of a few values."""
    vals = values if values is not None else _frac()
    n = math.prod(shape)

    def build(items: list[Any]) -> np.ndarray:
        a = np.empty(shape, dtype=object)
        for k, idx in enumerate(np.ndindex(*shape)):
            a[idx] = items[k]
        return a

    if ties:
        pool = st.lists(vals, min_size=1, max_size=3)
        return pool.flatmap(lambda p: st.lists(st.sampled_from(p), min_size=n, max_size=n)).map(
            build
        )
    return st.lists(vals, min_size=n, max_size=n).map(build)


def shapes(lo: int = 0, hi: int = 3, side: int = 3) -> st.SearchStrategy[tuple[int, ...]]:
    return st.integers(lo, hi).flatmap(
        lambda nd: st.tuples(*[st.integers(1, side) for _ in range(nd)])
    )


def _pos() -> st.SearchStrategy[Fraction]:
    return _frac(0, 3).filter(lambda x: x > 0)


def _broadcast_pair(
    values_b: st.SearchStrategy[Any] | None = None, *, divisor: bool = False
) -> st.SearchStrategy[tuple[np.ndarray, np.ndarray]]:
    """Two arrays whose shapes broadcast (one may be a single number).

    Either may be the smaller one, and the one drawn from ``values_b`` may come first or
    second; with ``divisor`` it is always the second (a divisor stays nonzero whichever
    side it broadcasts from).
    """

    def pair(s: tuple[int, ...]) -> st.SearchStrategy[tuple[np.ndarray, np.ndarray]]:
        sub = st.sampled_from(
            [s, s[1:], tuple(1 if k == 0 else n for k, n in enumerate(s)), (), (1,)]
        )
        return st.tuples(sub, st.booleans()).flatmap(
            lambda t: (
                st.tuples(array(t[0]), array(s, values_b))
                if t[1]
                else st.tuples(array(s), array(t[0], values_b))
            )
        )

    pairs = shapes(0, 3).flatmap(pair)
    if divisor:
        return pairs
    return pairs.flatmap(lambda ab: st.sampled_from([ab, (ab[1], ab[0])]))


# ----------------------------------------------------------------------------- mpmath helpers


def mp(a: np.ndarray) -> np.ndarray:
    """Fractions (and ±∞, and mpmath numbers already) as mpmath numbers."""
    out = np.empty(np.shape(a), dtype=object)
    for idx in np.ndindex(*np.shape(a)):
        x = a[idx]
        if isinstance(x, mpmath.mpf):
            out[idx] = x
        elif isinstance(x, float):
            out[idx] = mpmath.mpf(x)
        else:
            out[idx] = mpmath.mpf(x.numerator) / x.denominator
    return out


def vec(fn: Callable[..., Any]) -> Callable[..., np.ndarray]:
    return np.vectorize(fn, otypes=[object])


def mix(a: np.ndarray, b: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """A one-entry operand mixes with a sized one like a scalar (the step language's rule)."""
    if a.size == 1 and b.size != 1:
        a = a.reshape(())
    if b.size == 1 and a.size != 1:
        b = b.reshape(())
    return a, b


def _mp_matrix(m: sympy.MatrixBase) -> np.ndarray:
    return mp(
        np.array(
            [[Fraction(int(x.p), int(x.q)) for x in m.row(i)] for i in range(m.rows)], dtype=object
        )
    )


def _matrix(a: np.ndarray) -> sympy.ImmutableMatrix:
    return sympy.ImmutableMatrix(
        [[sympy.Rational(x.numerator, x.denominator) for x in row] for row in a.tolist()]
    )


exp, log, sqrt = vec(mpmath.exp), vec(mpmath.log), vec(mpmath.sqrt)
erf, tanh, sin, cos = vec(mpmath.erf), vec(mpmath.tanh), vec(mpmath.sin), vec(mpmath.cos)


def _softmax(x: np.ndarray, axis: int) -> np.ndarray:
    e = exp(x)
    return e / e.sum(axis=axis, keepdims=True)


# ----------------------------------------------------------------------------- the table


def _binary(
    fn: Callable[[np.ndarray, np.ndarray], np.ndarray], nonzero_b: bool = False
) -> Reference:
    values_b = _frac().filter(lambda x: x != 0) if nonzero_b else None
    return Reference(
        _broadcast_pair(values_b, divisor=nonzero_b).map(lambda ab: Case([ab[0], ab[1]])),
        lambda c: fn(*mix(mp(c.tensors[0]), mp(c.tensors[1]))),
    )


def _unary(fn: Callable[[np.ndarray], np.ndarray], values: Any = None) -> Reference:
    return Reference(
        shapes(0, 3).flatmap(lambda s: array(s, values)).map(lambda a: Case([a])),
        lambda c: fn(mp(c.tensors[0])),
    )


def _axis_case(
    lo_nd: int = 1, values: Any = None, keepdims: bool = True
) -> st.SearchStrategy[Case]:
    def case(s: tuple[int, ...]) -> st.SearchStrategy[Case]:
        axes = st.one_of(st.none(), st.integers(-len(s), len(s) - 1)) if s else st.none()
        return st.tuples(array(s, values), axes, st.booleans() if keepdims else st.just(False)).map(
            lambda t: Case([t[0]], {"axis": t[1], "keepdims": t[2]})
        )

    return shapes(lo_nd, 3).flatmap(case)


def _reduce(fn: Callable[..., np.ndarray]) -> Callable[[Case], np.ndarray]:
    def expect(c: Case) -> np.ndarray:
        x = mp(c.tensors[0])
        axis = c.params.get("axis")
        return np.asarray(fn(x, axis=axis, keepdims=c.params.get("keepdims", False)), dtype=object)

    return expect


def _var(x: np.ndarray, axis: Any, keepdims: bool, unbiased: bool) -> np.ndarray:
    n = x.size if axis is None else x.shape[axis]
    mu = x.sum(axis=axis, keepdims=True) / n
    return ((x - mu) ** 2).sum(axis=axis, keepdims=keepdims) / (n - 1 if unbiased else n)


def _var_case(s: tuple[int, ...]) -> st.SearchStrategy[Case]:
    axes = st.one_of(st.none(), st.integers(-len(s), len(s) - 1))
    return (
        st.tuples(array(s), axes, st.booleans(), st.booleans())
        .filter(lambda t: not t[3] or (t[0].size if t[1] is None else t[0].shape[t[1]]) > 1)
        .map(lambda t: Case([t[0]], {"axis": t[1], "keepdims": t[2], "unbiased": t[3]}))
    )


def _extreme(pick: Callable[..., Any], pair: Callable[..., Any]) -> Reference:
    reduce_case = _axis_case().map(lambda c: Case([c.tensors[0], None], c.params))
    pair_case = _broadcast_pair().map(lambda ab: Case([ab[0], ab[1]]))

    def expect(c: Case) -> np.ndarray:
        x, y = c.tensors
        if y is not None:
            return pair(*mix(mp(x), mp(y)))
        return np.asarray(
            pick(mp(x), axis=c.params["axis"], keepdims=c.params["keepdims"]), dtype=object
        )

    return Reference(st.one_of(reduce_case, pair_case), expect)


def _matmul_case() -> st.SearchStrategy[Case]:
    def case(nkm: tuple[int, int, int, int, bool]) -> st.SearchStrategy[Case]:
        n, k, m, form, tb = nkm
        a_shape = {0: (n, k), 1: (k,), 2: (2, n, k), 3: (n, k)}[form]
        b_shape = {0: (k, m), 1: (k, m), 2: (k, m), 3: (k,)}[form]
        if tb and len(b_shape) >= 2:
            b_shape = (*b_shape[:-2], b_shape[-1], b_shape[-2])
        else:
            tb = False
        return st.tuples(array(a_shape), array(b_shape)).map(
            lambda ab: Case([ab[0], ab[1]], {"transpose_b": tb})
        )

    return st.tuples(
        st.integers(1, 3), st.integers(1, 3), st.integers(1, 3), st.integers(0, 3), st.booleans()
    ).flatmap(case)


def _matmul(c: Case) -> np.ndarray:
    a, b = mp(c.tensors[0]), mp(c.tensors[1])
    if c.params.get("transpose_b"):
        b = np.swapaxes(b, -1, -2)
    return np.asarray(np.matmul(a, b), dtype=object)


def _linear_case() -> st.SearchStrategy[Case]:
    def case(t: tuple[int, int, int, bool, bool]) -> st.SearchStrategy[Case]:
        n, din, dout, bias, tr = t
        w_shape = (dout, din) if tr else (din, dout)
        return st.tuples(array((n, din)), array(w_shape), array((1, dout))).map(
            lambda x: Case(
                [x[0]],
                {"w": _matrix(x[1]), "bias": _matrix(x[2]) if bias else None, "transposed": tr},
            )
        )

    return st.tuples(
        st.integers(1, 3), st.integers(1, 3), st.integers(1, 3), st.booleans(), st.booleans()
    ).flatmap(case)


def _linear(c: Case) -> np.ndarray:
    w = _mp_matrix(c.params["w"])
    if c.params["transposed"]:
        w = w.T
    y = mp(c.tensors[0]) @ w
    if c.params["bias"] is not None:
        y = y + _mp_matrix(c.params["bias"])
    return y


def _rows(values: Any = None, side: int = 3) -> st.SearchStrategy[np.ndarray]:
    return st.tuples(st.integers(1, side), st.integers(1, side)).flatmap(
        lambda nm: array(nm, values)
    )


def _softmax_case() -> st.SearchStrategy[Case]:
    def case(s: tuple[int, ...]) -> st.SearchStrategy[Case]:
        axis = st.integers(-len(s), len(s) - 1)
        vals = st.one_of(_frac(), st.just(INF))
        return (
            st.tuples(array(s, vals), axis)
            .filter(
                lambda t: bool(
                    np.all(np.any(t[0] != INF, axis=t[1]))
                )  # every vector has a finite entry
            )
            .map(lambda t: Case([t[0]], {"axis": t[1]}))
        )

    return shapes(1, 3).flatmap(case)


def _index_case() -> st.SearchStrategy[Case]:
    def case(s: tuple[int, ...]) -> st.SearchStrategy[Case]:
        n = len(s)
        item = st.one_of(
            st.integers(-s[0], s[0] - 1),
            st.builds(
                slice,
                st.one_of(st.none(), st.integers(-3, 3)),
                st.one_of(st.none(), st.integers(-3, 3)),
                st.one_of(st.none(), st.sampled_from([1, 2, -1])),
            ),
            st.lists(st.integers(-s[0], s[0] - 1), min_size=1, max_size=3),
        )
        rest = st.lists(st.just(slice(None)), max_size=n - 1)
        return st.tuples(array(s), item, rest).map(lambda t: Case([t[0]], {"items": [t[1], *t[2]]}))

    return shapes(1, 3).flatmap(case)


def _index(c: Case) -> np.ndarray:
    items = tuple(np.array(i) if isinstance(i, list) else i for i in c.params["items"])
    return np.asarray(mp(c.tensors[0])[items], dtype=object)


def _norm_root_case() -> st.SearchStrategy[Case]:
    return (
        st.tuples(
            st.integers(1, 3).flatmap(lambda n: array((n, 1), _frac(0, 3))),
            st.sampled_from([Fraction(0), Fraction(1, 100), Fraction(1, 3)]),
        )
        .filter(lambda t: t[1] > 0 or bool(np.all(t[0] != 0)))
        .map(lambda t: Case([t[0]], {"eps": t[1], "what": "v", "where": None}))
    )


def _normalize_case() -> st.SearchStrategy[Case]:
    def case(nd: tuple[int, int]) -> st.SearchStrategy[Case]:
        n, d = nd
        return st.tuples(array((n, d)), array((n, 1), _pos()), array((1, d)), array((1, d))).map(
            lambda t: Case([t[0], t[1]], {"gamma": _matrix(t[2]), "beta": _matrix(t[3])})
        )

    return st.tuples(st.integers(1, 3), st.integers(1, 3)).flatmap(case)


def _layernorm_case() -> st.SearchStrategy[Case]:
    def case(s: tuple[int, ...]) -> st.SearchStrategy[Case]:
        d = s[-1]
        param = st.one_of(st.none(), array(()), array((d,)))
        return (
            st.tuples(
                array(s),
                st.one_of(st.none(), st.sampled_from([Fraction(1, 100), Fraction(1, 2)])),
                param,
                param,
                st.booleans() if d > 1 else st.just(False),
            )
            .filter(
                lambda t: t[1] is not None or bool(np.all(np.ptp(t[0].astype(float), axis=-1) > 0))
            )
            .map(
                lambda t: Case(
                    [t[0], None if t[1] is None else np.array(t[1], dtype=object), t[2], t[3]],
                    {"unbiased": t[4]},
                )
            )
        )

    return shapes(1, 3).flatmap(case)


def _layernorm(c: Case) -> np.ndarray:
    x, eps, g, b = c.tensors
    x = mp(x)
    d = x.shape[-1]
    mu = x.sum(axis=-1, keepdims=True) / d
    v = ((x - mu) ** 2).sum(axis=-1, keepdims=True) / (d - 1 if c.params["unbiased"] else d)
    out = (x - mu) / sqrt(v + (0 if eps is None else mp(eps)))
    if g is not None:
        out = out * mp(g)
    if b is not None:
        out = out + mp(b)
    return out


def _rmsnorm_case() -> st.SearchStrategy[Case]:
    def case(s: tuple[int, ...]) -> st.SearchStrategy[Case]:
        d = s[-1]
        return (
            st.tuples(
                array(s),
                st.one_of(st.none(), st.sampled_from([Fraction(1, 100), Fraction(1, 2)])),
                st.one_of(st.none(), array(()), array((d,))),
            )
            .filter(lambda t: t[1] is not None or bool(np.all(np.any(t[0] != 0, axis=-1))))
            .map(
                lambda t: Case([t[0], None if t[1] is None else np.array(t[1], dtype=object), t[2]])
            )
        )

    return shapes(1, 3).flatmap(case)


def _rmsnorm(c: Case) -> np.ndarray:
    x, eps, g = c.tensors
    x = mp(x)
    ms = (x**2).sum(axis=-1, keepdims=True) / x.shape[-1]
    out = x / sqrt(ms + (0 if eps is None else mp(eps)))
    return out * mp(g) if g is not None else out


def _targets(n: int, v: int) -> st.SearchStrategy[np.ndarray]:
    return st.lists(st.integers(0, v - 1), min_size=n, max_size=n).map(
        lambda ids: np.array([Fraction(i) for i in ids], dtype=object)
    )


def _loss_case(values: Any = None) -> st.SearchStrategy[Case]:
    def case(nv: tuple[int, int, bool]) -> st.SearchStrategy[Case]:
        n, v, one_d = nv
        shape = (v,) if one_d else (n, v)
        rows = 1 if one_d else n
        return st.tuples(array(shape, values), _targets(rows, v)).map(
            lambda t: Case([t[0], t[1].reshape(()) if one_d else t[1]])
        )

    return st.tuples(st.integers(1, 3), st.integers(1, 4), st.booleans()).flatmap(case)


def _nll(logp: np.ndarray, target: np.ndarray) -> np.ndarray:
    lp = logp.reshape(1, -1) if logp.ndim == 1 else logp
    ids = [int(t) for t in np.atleast_1d(target)]
    return np.asarray(-sum(lp[i, k] for i, k in enumerate(ids)) / lp.shape[0], dtype=object)


def _smoothed_cross_entropy(logp: np.ndarray, target: np.ndarray, eps: Any) -> np.ndarray:
    """−(1/n) Σ_r Σ_c q[r, c] logp[r, c] with q = (1 − ε)·one_hot + ε/V (PyTorch's rule)."""
    lp = logp.reshape(1, -1) if logp.ndim == 1 else logp
    ids = [int(t) for t in np.atleast_1d(target)]
    e = mpmath.mpf(Fraction(eps).numerator) / Fraction(eps).denominator
    v = lp.shape[1]
    total = sum(
        ((1 - e) * (c == k) + e / v) * lp[i, c] for i, k in enumerate(ids) for c in range(v)
    )
    return np.asarray(-total / lp.shape[0], dtype=object)


def _bce_case() -> st.SearchStrategy[Case]:
    p = st.sampled_from([Fraction(1, 10), Fraction(1, 4), Fraction(1, 2), Fraction(9, 10)])
    y = st.sampled_from([Fraction(0), Fraction(1), Fraction(1, 3)])
    return (
        shapes(0, 2)
        .flatmap(lambda s: st.tuples(array(s, p), array(s, y)))
        .map(lambda t: Case([t[0], t[1]]))
    )


def _bce(c: Case) -> np.ndarray:
    p, y = mp(c.tensors[0]), mp(c.tensors[1])
    terms = np.asarray(-(y * log(p) + (1 - y) * log(1 - p)), dtype=object)
    return np.asarray(sum(terms.flat, mpmath.mpf(0)) / terms.size, dtype=object)


def _mse(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    sq = np.asarray((a - b) ** 2, dtype=object)
    return np.asarray(sum(sq.flat, mpmath.mpf(0)) / sq.size, dtype=object)


def _rope_case() -> st.SearchStrategy[Case]:
    def case(t: tuple[int, int, bool, str, int]) -> st.SearchStrategy[Case]:
        n, half, given, pairs, offset = t
        x = array((n, 2 * half))
        if given:
            return st.tuples(x, array((n, half))).map(lambda a: Case([a[0], a[1]], {}))
        return x.map(
            lambda a: Case(
                [a, None], {"base": sympy.Integer(100), "pairs": pairs, "offset": offset}
            )
        )

    return st.tuples(
        st.integers(1, 3),
        st.integers(1, 2),
        st.booleans(),
        st.sampled_from(["adjacent", "halves"]),
        st.integers(0, 2),
    ).flatmap(case)


def _rope(c: Case) -> np.ndarray:
    x, angles = c.tensors
    x = mp(x)
    n, d = x.shape
    half = d // 2
    pairs = c.params.get("pairs", "adjacent")
    index = (
        [(2 * i, 2 * i + 1) for i in range(half)]
        if pairs == "adjacent"
        else [(i, i + half) for i in range(half)]
    )
    out = x.copy()
    for p in range(n):
        for i, (a, b) in enumerate(index):
            if angles is not None:
                th = mp(angles)[p, i]
            else:
                base = mpmath.mpf(int(c.params["base"]))
                th = (p + c.params["offset"]) * base ** (mpmath.mpf(-2 * i) / d)
            out[p, a] = x[p, a] * mpmath.cos(th) - x[p, b] * mpmath.sin(th)
            out[p, b] = x[p, a] * mpmath.sin(th) + x[p, b] * mpmath.cos(th)
    return out


def _sinusoidal(c: Case) -> np.ndarray:
    n, d, base = c.params["n"], c.params["d"], c.params["base"]
    out = np.empty((n, d), dtype=object)
    for p in range(n):
        for j in range(d):
            b = mpmath.mpf(base.numerator) / base.denominator
            ang = p * b ** (mpmath.mpf(-(j - j % 2)) / d)
            out[p, j] = mpmath.sin(ang) if j % 2 == 0 else mpmath.cos(ang)
    return out


#: A causal mask's fills: −∞ (no parameter), GPT-2's −10000 and a leaky −3/2, as the
#: file's mask_value reaches the op (SymPy numbers).
_MASK_FILLS = (None, sympy.Integer(-10000), sympy.Rational(-3, 2))


def _mp_fill(v: Any) -> Any:
    return "-inf" if v is None else mpmath.mpf(int(v.p)) / int(v.q)


def _mask(above: Any) -> Callable[[Case], np.ndarray]:
    def expect(c: Case) -> np.ndarray:
        x = mp(c.tensors[0])
        n, m = x.shape
        out = x.copy()
        for i in range(n):
            for j in range(m):
                if j > i:
                    out[i, j] = mpmath.mpf(above)
        return out

    return expect


def _gelu(x: Any) -> Any:
    return x / 2 * (1 + erf(x / mpmath.sqrt(2)))


def _gelu_tanh(x: Any) -> Any:
    k = mpmath.sqrt(2 / mpmath.pi)
    return x / 2 * (1 + tanh(k * (x + mpmath.mpf(44715) / 10**6 * x**3)))


def _sigmoid(x: Any) -> Any:
    return 1 / (1 + exp(-x))


def _pow_case() -> st.SearchStrategy[Case]:
    def case(s: tuple[int, ...]) -> st.SearchStrategy[Case]:
        ints = st.integers(-3, 3).map(Fraction)
        return st.one_of(
            st.tuples(array(s, _frac().filter(lambda v: v != 0)), array((), ints)),
            st.tuples(
                array(s, _pos()), array((), st.sampled_from([Fraction(1, 2), Fraction(-3, 2)]))
            ),
        ).map(lambda t: Case([t[0], t[1]]))

    return shapes(0, 2).flatmap(case)


def _kv_case() -> st.SearchStrategy[Case]:
    def case(t: tuple[int, int, int, int]) -> st.SearchStrategy[Case]:
        n1, n2, din, d = t
        return st.tuples(array((n1, d)), array((n2, din)), array((din, d))).map(
            lambda a: Case([a[0], a[1]], {"w": _matrix(a[2])})
        )

    return st.tuples(*[st.integers(1, 3)] * 4).flatmap(case)


def _concat_case(stack: bool) -> st.SearchStrategy[Case]:
    def case(t: tuple[tuple[int, ...], int, int]) -> st.SearchStrategy[Case]:
        s, k, raw_axis = t
        nd = len(s) + (1 if stack else 0)
        axis = raw_axis % nd - (nd if raw_axis < 0 else 0)
        if stack:
            parts = st.tuples(*[array(s) for _ in range(k)])
        else:
            ax = axis % len(s)
            parts = st.tuples(
                *[
                    st.integers(1, 2).flatmap(
                        lambda w: array(tuple(w if i == ax else n for i, n in enumerate(s)))
                    )
                    for _ in range(k)
                ]
            )
        return parts.map(lambda ps: Case([list(ps)], {"axis": axis}))

    return st.tuples(shapes(1, 3), st.integers(1, 3), st.integers(-3, 3)).flatmap(case)


def _embed_case() -> st.SearchStrategy[Case]:
    return (
        st.tuples(st.integers(1, 4), st.integers(1, 3))
        .flatmap(
            lambda vd: st.tuples(
                array(vd), st.lists(st.integers(0, vd[0] - 1), min_size=1, max_size=4)
            )
        )
        .map(lambda t: Case([], {"table": _matrix(t[0]), "ids": tuple(t[1])}))
    )


def _given_case() -> st.SearchStrategy[Case]:
    return _rows().map(lambda a: Case([], {"value": _matrix(a)}))


# ----------------------------------------------------------------------------- rounding
# written with Python's own exact Fraction arithmetic (round() on a Fraction rounds half to
# even, // and % keep the divisor's sign), independent of symtf


def _exact_of(fn: Callable[..., Any]) -> Callable[..., np.ndarray]:
    """``fn`` on Fractions (or −∞), entry by entry with broadcasting, as mpmath numbers."""

    def one(*vs: Any) -> Any:
        if any(isinstance(v, mpmath.mpf) for v in vs):  # moved by a central difference
            vs = tuple(
                v if isinstance(v, mpmath.mpf) else mp(np.array(v, dtype=object))[()] for v in vs
            )
        out = fn(*vs)
        if isinstance(out, (float, mpmath.mpf)):
            return mpmath.mpf(out)
        out = Fraction(out)
        return mpmath.mpf(out.numerator) / out.denominator

    return vec(one)


def _half_up(q: Fraction, d: int) -> Fraction:
    s = Fraction(10) ** d
    m = math.floor(abs(q) * s + Fraction(1, 2))
    return (1 if q >= 0 else -1) * Fraction(m) / s


def _round_ref(c: Case) -> np.ndarray:
    d, mode = c.params["decimals"], c.params["mode"]

    def one(q: Any) -> Any:
        if isinstance(q, float):
            return q
        if isinstance(q, mpmath.mpf):  # away from a tie (central differences): the nearest
            return mpmath.nint(q * 10**d) / mpmath.mpf(10) ** d
        return round(q, d) if mode == "half_even" else _half_up(q, d)

    return _exact_of(one)(c.tensors[0])


def _round_case() -> st.SearchStrategy[Case]:
    halves = st.builds(lambda n: Fraction(2 * n + 1, 2), st.integers(-4, 3))
    values = st.one_of(_frac(), halves, st.just(INF))
    return st.tuples(
        shapes(0, 3).flatmap(lambda s: array(s, values)),
        st.sampled_from([0, 0, 1, -1]),
        st.sampled_from(["half_even", "half_up"]),
    ).map(lambda t: Case([t[0]], {"decimals": t[1], "mode": t[2]}))


def _keep_inf(fn: Callable[[Fraction], Any]) -> Callable[[Case], np.ndarray]:
    return lambda c: _exact_of(lambda q: q if isinstance(q, float) else fn(q))(c.tensors[0])


def _unary_inf(fn: Callable[[Fraction], Any], keep: bool = True) -> Reference:
    """An op on Fractions and −∞ (kept as it is when ``keep``)."""
    return Reference(
        shapes(0, 3)
        .flatmap(lambda s: array(s, st.one_of(_frac(), st.just(INF))))
        .map(lambda a: Case([a])),
        _keep_inf(fn) if keep else lambda c: _exact_of(fn)(c.tensors[0]),
    )


def _clip_case() -> st.SearchStrategy[Case]:
    def case(s: tuple[int, ...]) -> st.SearchStrategy[Case]:
        bound = st.one_of(st.none(), array(()), array(s))
        return st.tuples(array(s), bound, bound).map(lambda t: Case(list(t)))

    return shapes(0, 2).flatmap(case)


def _clip_ref(c: Case) -> np.ndarray:
    x, lo, hi = c.tensors
    lo = np.array(-math.inf, dtype=object) if lo is None else lo
    hi = np.array(math.inf, dtype=object) if hi is None else hi
    if x.size != 1:  # a one-entry bound mixes like a scalar
        lo = lo.reshape(()) if lo.size == 1 else lo
        hi = hi.reshape(()) if hi.size == 1 else hi
    return _exact_of(lambda v, a, b: min(max(v, a), b))(x, lo, hi)


def _exact_binary(
    fn: Callable[[Any, Any], Any], nonzero_b: bool = False, inf: bool = False
) -> Reference:
    values = st.one_of(_frac(), st.just(INF)) if inf else None
    values_b = _frac().filter(lambda x: x != 0) if nonzero_b else values
    pairs = _broadcast_pair(values_b, divisor=nonzero_b)
    return Reference(
        pairs.map(lambda ab: Case([ab[0], ab[1]])),
        lambda c: _exact_of(fn)(*mix(c.tensors[0], c.tensors[1])),
    )


def _py_arange(start: Fraction, stop: Fraction | None, step: Fraction) -> list[Fraction]:
    """numpy's arange on Fractions, written out: start, start + step, … short of stop."""
    if stop is None:
        start, stop = Fraction(0), start
    out, x = [], start
    while (x < stop) if step > 0 else (x > stop):
        out.append(x)
        x += step
    return out


def _along_case(extra: Callable[[tuple[int, ...]], Any] | None = None) -> st.SearchStrategy[Case]:
    """A tensor of one to three axes (ties and −∞ among its entries) and an axis of it."""

    def case(s: tuple[int, ...]) -> st.SearchStrategy[Case]:
        values = st.one_of(_frac(), _frac(), st.just(INF))
        more = extra(s) if extra is not None else st.just({})
        return st.tuples(array(s, values), st.integers(-len(s), len(s) - 1), more).map(
            lambda t: Case([t[0]], {"axis": t[1], **t[2]})
        )

    return shapes(1, 3).flatmap(case)


def _stable_order(x: np.ndarray, axis: int, descending: bool) -> np.ndarray:
    """numpy's stable argsort (equal entries by index), of −x for a descending order."""
    keys = mp(x)
    return np.argsort(-keys if descending else keys, axis=axis, kind="stable")


def _cosine(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    a, b = np.broadcast_arrays(a, b)
    dot = (a * b).sum(axis=-1)
    den = sqrt((a * a).sum(axis=-1)) * sqrt((b * b).sum(axis=-1))
    eps = mpmath.mpf(10) ** -8
    return np.asarray(dot / vec(lambda d: max(d, eps))(den), dtype=object)


def _kl(c: Case) -> np.ndarray:
    logq, p = mix(mp(c.tensors[0]), mp(c.tensors[1]))
    logq, p = np.broadcast_arrays(logq, p)
    terms = vec(lambda lq, t: mpmath.mpf(0) if t == 0 else t * (mpmath.log(t) - lq))(logq, p)
    r = c.params["reduction"]
    if r == "none":
        return terms
    total_ = terms.sum()
    n = terms.size if r == "mean" else (terms.shape[0] if terms.ndim and r == "batchmean" else 1)
    return np.asarray(total_ / n, dtype=object)


def _tri_case() -> st.SearchStrategy[Case]:
    return st.tuples(shapes(2, 3).flatmap(array), st.one_of(st.none(), st.integers(-3, 3))).map(
        lambda t: Case([t[0]], {} if t[1] is None else {"diagonal": t[1]})
    )


REFERENCES: dict[str, Reference] = {
    # elementwise
    "add": _binary(lambda a, b: a + b),
    "sub": _binary(lambda a, b: a - b),
    "mul": _binary(lambda a, b: a * b),
    "div": _binary(lambda a, b: a / b, nonzero_b=True),
    "pow": Reference(
        _pow_case(), lambda c: vec(lambda x, y: x**y)(*mix(mp(c.tensors[0]), mp(c.tensors[1])))
    ),
    "neg": _unary(lambda x: -x),
    "exp": _unary(exp),
    "log": _unary(log, _pos()),
    "sqrt": _unary(sqrt, _frac(0, 3)),
    "abs": _unary(np.abs),
    "sin": _unary(sin),
    "cos": _unary(cos),
    "tanh": _unary(tanh),
    "sigmoid": _unary(_sigmoid),
    "softplus": _unary(lambda x: log(1 + exp(x))),
    # logarithms
    "log2": _unary(lambda x: log(x) / mpmath.log(2), _pos()),
    "log10": _unary(vec(mpmath.log10), _pos()),
    "log1p": _unary(vec(mpmath.log1p), _frac(0, 3)),
    "expm1": _unary(vec(mpmath.expm1)),
    "logsumexp": Reference(
        _axis_case(0, st.one_of(_frac(), _frac(), st.just(INF))),
        _reduce(lambda x, axis, keepdims: log(exp(x).sum(axis=axis, keepdims=keepdims))),
    ),
    # rounding
    "round": Reference(_round_case(), _round_ref),
    "floor": _unary_inf(math.floor),
    "ceil": _unary_inf(math.ceil),
    "trunc": _unary_inf(lambda q: math.floor(q) if q >= 0 else math.ceil(q)),
    "sign": _unary_inf(lambda q: (q > 0) - (q < 0), keep=False),
    "clip": Reference(_clip_case(), _clip_ref),
    "floordiv": _exact_binary(lambda a, b: math.floor(a / b), nonzero_b=True),
    "mod": _exact_binary(
        lambda a, b: a % b if isinstance(a / b, Fraction) else a - b * math.floor(a / b),
        nonzero_b=True,
    ),
    "lt": _exact_binary(lambda a, b: int(a < b), inf=True),
    "le": _exact_binary(lambda a, b: int(a <= b), inf=True),
    "gt": _exact_binary(lambda a, b: int(a > b), inf=True),
    "ge": _exact_binary(lambda a, b: int(a >= b), inf=True),
    "eq": _exact_binary(lambda a, b: int(a == b), inf=True),
    "ne": _exact_binary(lambda a, b: int(a != b), inf=True),
    "dropout": Reference(
        shapes(0, 2)
        .flatmap(
            lambda s: st.tuples(
                array(s),
                array(s, st.sampled_from([Fraction(0), Fraction(1)])),
                array((), st.sampled_from([Fraction(0), Fraction(1, 5), Fraction(1, 2)])),
            )
        )
        .map(lambda t: Case(list(t))),
        lambda c: mp(c.tensors[0]) * mp(c.tensors[1]) / (1 - mp(c.tensors[2])),
    ),
    # activations
    "relu": _unary(lambda x: vec(lambda v: max(v, mpmath.mpf(0)))(x)),
    "gelu": _unary(_gelu),
    "gelu_tanh": _unary(_gelu_tanh),
    "silu": _unary(lambda x: x * _sigmoid(x)),
    # linear algebra
    "matmul": Reference(_matmul_case(), _matmul),
    "linear": Reference(_linear_case(), _linear),
    "scale": Reference(
        st.tuples(_rows(), array((1, 1), _frac().filter(lambda v: v != 0))).map(
            lambda t: Case([t[0], t[1]])
        ),
        lambda c: mp(c.tensors[0]) / mp(c.tensors[1])[0, 0],
    ),
    # shape
    "transpose": Reference(
        shapes(0, 3)
        .flatmap(
            lambda s: st.tuples(
                array(s), st.one_of(st.none(), st.permutations(list(range(len(s)))))
            )
        )
        .map(lambda t: Case([t[0]], {"axes": t[1]})),
        lambda c: np.transpose(mp(c.tensors[0]), c.params["axes"]),
    ),
    "T": _unary(lambda x: np.swapaxes(x, -1, -2) if x.ndim >= 2 else x),
    "reshape": Reference(
        shapes(1, 3)
        .flatmap(
            lambda s: st.tuples(
                array(s), st.sampled_from([[-1], [math.prod(s)], [1, -1], [math.prod(s), 1]])
            )
        )
        .map(lambda t: Case([t[0]], {"shape": t[1]})),
        lambda c: mp(c.tensors[0]).reshape(c.params["shape"]),
    ),
    "split_heads": Reference(
        st.tuples(st.integers(1, 3), st.integers(1, 2), st.integers(1, 2)).flatmap(
            lambda t: array((t[0], t[1] * t[2])).map(lambda a: Case([a], {"h": t[1]}))
        ),
        lambda c: np.swapaxes(
            mp(c.tensors[0]).reshape(c.tensors[0].shape[0], c.params["h"], -1), 0, 1
        ),
    ),
    "merge_heads": Reference(
        st.tuples(*[st.integers(1, 2)] * 3).flatmap(array).map(lambda a: Case([a])),
        lambda c: np.swapaxes(mp(c.tensors[0]), 0, 1).reshape(c.tensors[0].shape[1], -1),
    ),
    "concat": Reference(
        _concat_case(False),
        lambda c: np.concatenate([mp(p) for p in c.tensors[0]], axis=c.params["axis"]),
    ),
    "stack": Reference(
        _concat_case(True),
        lambda c: np.stack([mp(p) for p in c.tensors[0]], axis=c.params["axis"]),
    ),
    "index": Reference(_index_case(), _index),
    "embed": Reference(
        _embed_case(), lambda c: _mp_matrix(c.params["table"])[list(c.params["ids"]), :]
    ),
    "last_row": Reference(_rows().map(lambda a: Case([a])), lambda c: mp(c.tensors[0])[-1:, :]),
    "kv_append": Reference(
        _kv_case(),
        lambda c: np.vstack([mp(c.tensors[0]), mp(c.tensors[1]) @ _mp_matrix(c.params["w"])]),
    ),
    "identity": _unary(lambda x: x),
    # reductions
    "sum": Reference(
        _axis_case(0), _reduce(lambda x, axis, keepdims: x.sum(axis=axis, keepdims=keepdims))
    ),
    "mean": Reference(
        _axis_case(0),
        _reduce(
            lambda x, axis, keepdims: (
                x.sum(axis=axis, keepdims=keepdims) / (x.size if axis is None else x.shape[axis])
            )
        ),
    ),
    "mean_square": Reference(
        _rows().flatmap(
            lambda a: (
                st.booleans()
                .filter(lambda u: not u or a.shape[1] > 1)
                .map(lambda u: Case([a], {"unbiased": u}))
            )
        ),
        lambda c: (
            (mp(c.tensors[0]) ** 2).sum(axis=-1, keepdims=True)
            / (c.tensors[0].shape[-1] - (1 if c.params["unbiased"] else 0))
        ),
    ),
    "var": Reference(
        shapes(1, 3).flatmap(_var_case),
        lambda c: np.asarray(_var(mp(c.tensors[0]), **c.params), dtype=object),
    ),
    "std": Reference(
        shapes(1, 3).flatmap(_var_case),
        lambda c: sqrt(np.asarray(_var(mp(c.tensors[0]), **c.params), dtype=object)),
    ),
    "max": _extreme(lambda x, **kw: np.max(x, **kw), lambda a, b: vec(max)(a, b)),
    "min": _extreme(lambda x, **kw: np.min(x, **kw), lambda a, b: vec(min)(a, b)),
    "argmax": Reference(
        shapes(1, 3)
        .flatmap(
            lambda s: st.tuples(array(s), st.one_of(st.none(), st.integers(-len(s), len(s) - 1)))
        )
        .map(lambda t: Case([t[0]], {"axis": t[1]})),
        lambda c: np.asarray(np.argmax(mp(c.tensors[0]), axis=c.params["axis"]), dtype=object),
        integer=True,
    ),
    "greedy": Reference(
        st.integers(1, 4).flatmap(lambda v: array((1, v))).map(lambda a: Case([a])),
        lambda c: tuple(j for j, x in enumerate(c.tensors[0][0]) if x == max(c.tensors[0][0])),
        integer=True,
    ),
    # attention
    "softmax": Reference(_softmax_case(), lambda c: _softmax(mp(c.tensors[0]), c.params["axis"])),
    "log_softmax": Reference(
        shapes(1, 3)
        .flatmap(lambda s: st.tuples(array(s), st.integers(-len(s), len(s) - 1)))
        .map(lambda t: Case([t[0]], {"axis": t[1]})),
        lambda c: (
            mp(c.tensors[0]) - log(exp(mp(c.tensors[0])).sum(axis=c.params["axis"], keepdims=True))
        ),
    ),
    "mask_future": Reference(
        _rows().flatmap(
            lambda a: st.sampled_from(_MASK_FILLS).map(
                lambda v: Case([a], {} if v is None else {"value": v})
            )
        ),
        lambda c: _mask(_mp_fill(c.params.get("value")))(c),
    ),
    "zero_future": Reference(_rows().map(lambda a: Case([a])), _mask(0)),
    "normalize_rows": Reference(
        _rows(_pos()).map(lambda a: Case([a])),
        lambda c: mp(c.tensors[0]) / mp(c.tensors[0]).sum(axis=-1, keepdims=True),
    ),
    "where": Reference(
        shapes(0, 2)
        .flatmap(
            lambda s: st.tuples(
                array(s, st.sampled_from([Fraction(0), Fraction(1), Fraction(-2)])),
                array(s),
                array(s, st.one_of(_frac(), st.just(INF))),
            )
        )
        .map(lambda t: Case(list(t))),
        lambda c: np.where(c.tensors[0] != 0, mp(c.tensors[1]), mp(c.tensors[2])),
    ),
    "masked_fill": Reference(
        shapes(0, 2)
        .flatmap(
            lambda s: st.tuples(
                array(s),
                array(s, st.sampled_from([Fraction(0), Fraction(1)])),
                array((), st.one_of(_frac(), st.just(INF))),
            )
        )
        .map(lambda t: Case(list(t))),
        lambda c: np.where(c.tensors[1] != 0, mp(c.tensors[2]), mp(c.tensors[0])),
    ),
    "tril": Reference(
        _tri_case(), lambda c: np.tril(mp(c.tensors[0]), c.params.get("diagonal", 0))
    ),
    "triu": Reference(
        _tri_case(), lambda c: np.triu(mp(c.tensors[0]), c.params.get("diagonal", 0))
    ),
    "causal_mask": Reference(
        st.integers(1, 4).map(lambda n: Case([], {"n": n})),
        lambda c: np.array(
            [
                [mpmath.mpf(0) if j <= i else mpmath.mpf("-inf") for j in range(c.params["n"])]
                for i in range(c.params["n"])
            ],
            dtype=object,
        ),
    ),
    # norms
    "norm_root": Reference(
        _norm_root_case(),
        lambda c: sqrt(
            mp(c.tensors[0]) + mpmath.mpf(c.params["eps"].numerator) / c.params["eps"].denominator
        ),
    ),
    "normalize": Reference(
        _normalize_case(),
        lambda c: (
            mp(c.tensors[0]) / mp(c.tensors[1]) * _mp_matrix(c.params["gamma"])
            + _mp_matrix(c.params["beta"])
        ),
    ),
    "layernorm": Reference(_layernorm_case(), _layernorm),
    "rmsnorm": Reference(_rmsnorm_case(), _rmsnorm),
    # losses
    "nll": Reference(_loss_case(), lambda c: _nll(mp(c.tensors[0]), c.tensors[1])),
    "cross_entropy": Reference(
        st.tuples(
            _loss_case(), st.sampled_from([None, Fraction(0), Fraction(1, 10), Fraction(1, 3), 1])
        ).map(
            lambda t: (
                t[0] if t[1] is None else Case(t[0].tensors, {"label_smoothing": t[1]}, t[0].native)
            )
        ),
        lambda c: _smoothed_cross_entropy(
            mp(c.tensors[0]) - log(exp(mp(c.tensors[0])).sum(axis=-1, keepdims=True)),
            c.tensors[1],
            c.params.get("label_smoothing", 0),
        ),
    ),
    "bce": Reference(_bce_case(), _bce),
    "mse": Reference(
        _broadcast_pair().map(lambda ab: Case([ab[0], ab[1]])),
        lambda c: _mse(*mix(mp(c.tensors[0]), mp(c.tensors[1]))),
    ),
    # positions
    "sinusoidal": Reference(
        st.tuples(
            st.integers(1, 3),
            st.integers(1, 4),
            st.sampled_from([Fraction(10000), Fraction(10), Fraction(7, 2)]),
        ).map(lambda t: Case([], {"n": t[0], "d": t[1], "base": t[2]})),
        _sinusoidal,
    ),
    "rope": Reference(_rope_case(), _rope),
    "alibi": Reference(
        st.tuples(
            st.integers(1, 4), st.sampled_from([Fraction(1, 2), Fraction(-1, 5), Fraction(0), 3])
        ).map(lambda t: Case([], {"n": t[0], "slope": t[1]})),
        lambda c: np.array(  # B[i, j] = -m |i - j| (Press et al., ALiBi)
            [
                [
                    -mpmath.mpf(
                        c.params["slope"].numerator
                        if isinstance(c.params["slope"], Fraction)
                        else c.params["slope"]
                    )
                    / (
                        c.params["slope"].denominator
                        if isinstance(c.params["slope"], Fraction)
                        else 1
                    )
                    * abs(i - j)
                    for j in range(c.params["n"])
                ]
                for i in range(c.params["n"])
            ],
            dtype=object,
        ),
    ),
    # constructors
    "zeros": Reference(
        shapes(1, 3).map(lambda s: Case([], {"shape": list(s)})),
        lambda c: np.full(c.params["shape"], mpmath.mpf(0), dtype=object),
    ),
    "ones": Reference(
        shapes(1, 3).map(lambda s: Case([], {"shape": list(s)})),
        lambda c: np.full(c.params["shape"], mpmath.mpf(1), dtype=object),
    ),
    "full": Reference(
        st.tuples(shapes(1, 3), array((), st.one_of(_frac(), st.just(INF)))).map(
            lambda t: Case([t[1]], {"shape": list(t[0])})
        ),
        lambda c: np.full(c.params["shape"], mp(c.tensors[0])[()], dtype=object),
    ),
    "arange": Reference(
        st.tuples(
            _frac(-3, 3),
            st.one_of(st.none(), _frac(-3, 3)),
            st.sampled_from([Fraction(1), Fraction(1, 2), Fraction(-1, 3), Fraction(2)]),
        )
        .filter(
            lambda t: (
                math.ceil(
                    ((t[1] if t[1] is not None else t[0]) - (t[0] if t[1] is not None else 0))
                    / t[2]
                )
                >= 1
            )
        )
        .map(lambda t: Case([], {"start": t[0], "stop": t[1], "step": t[2]})),
        lambda c: mp(
            np.array(
                [
                    Fraction(x)
                    for x in _py_arange(c.params["start"], c.params["stop"], c.params["step"])
                ],
                dtype=object,
            )
        ),
    ),
    # ordering
    "cumsum": Reference(
        _along_case(), lambda c: np.cumsum(mp(c.tensors[0]), axis=c.params["axis"])
    ),
    "cumprod": Reference(
        _along_case(), lambda c: np.cumprod(mp(c.tensors[0]), axis=c.params["axis"])
    ),
    "sort": Reference(
        _along_case(lambda s: st.booleans().map(lambda d: {"descending": d})),
        lambda c: np.take_along_axis(
            mp(c.tensors[0]),
            _stable_order(c.tensors[0], c.params["axis"], c.params["descending"]),
            c.params["axis"],
        ),
    ),
    "argsort": Reference(
        _along_case(lambda s: st.booleans().map(lambda d: {"descending": d})),
        lambda c: _stable_order(c.tensors[0], c.params["axis"], c.params["descending"]),
        integer=True,
    ),
    "topk": Reference(
        _along_case(
            lambda s: st.tuples(st.integers(1, min(s)), st.booleans()).map(
                lambda t: {"k": t[0], "largest": t[1]}
            )
        ).filter(lambda c: c.params["k"] <= c.tensors[0].shape[c.params["axis"]]),
        lambda c: np.take(
            np.take_along_axis(
                mp(c.tensors[0]),
                _stable_order(c.tensors[0], c.params["axis"], c.params["largest"]),
                c.params["axis"],
            ),
            range(c.params["k"]),
            axis=c.params["axis"],
        ),
    ),
    # similarity
    "norm": Reference(
        _axis_case(
            1,
        ).flatmap(
            lambda c: st.sampled_from([1, 2, 3]).map(
                lambda o: Case(c.tensors, {**c.params, "ord": o})
            )
        ),
        lambda c: np.asarray(
            (vec(abs)(mp(c.tensors[0])) ** c.params["ord"]).sum(
                axis=c.params["axis"], keepdims=c.params["keepdims"]
            )
            ** (mpmath.mpf(1) / c.params["ord"]),
            dtype=object,
        ),
    ),
    "cosine_similarity": Reference(
        _broadcast_pair()
        .filter(lambda ab: len(np.broadcast_shapes(*(t.shape for t in mix(ab[0], ab[1])))) >= 1)
        .map(lambda ab: Case([ab[0], ab[1]], {"axis": -1})),
        lambda c: _cosine(*mix(mp(c.tensors[0]), mp(c.tensors[1]))),
    ),
    "kl_div": Reference(
        st.tuples(
            shapes(0, 2).flatmap(lambda s: st.tuples(array(s), array(s, _frac(0, 1)))),
            st.sampled_from(["mean", "batchmean", "sum", "none"]),
        ).map(lambda t: Case([t[0][0], t[0][1]], {"reduction": t[1]})),
        _kl,
    ),
    "eye": Reference(
        st.integers(1, 4).map(lambda n: Case([], {"n": n})),
        lambda c: np.array(
            [[mpmath.mpf(int(i == j)) for j in range(c.params["n"])] for i in range(c.params["n"])],
            dtype=object,
        ),
    ),
    "one_hot": Reference(
        st.tuples(st.integers(1, 4), shapes(0, 2)).flatmap(
            lambda t: array(t[1], st.integers(0, t[0] - 1).map(Fraction)).map(
                lambda a: Case([a], {"n": t[0]})
            )
        ),
        lambda c: np.array(
            [
                [mpmath.mpf(int(int(k) == j)) for j in range(c.params["n"])]
                for k in c.tensors[0].flat
            ],
            dtype=object,
        ).reshape(*c.tensors[0].shape, c.params["n"]),
    ),
    "given": Reference(_given_case(), lambda c: _mp_matrix(c.params["value"])),
    "const": Reference(
        _frac().map(lambda q: Case([], {"value": q})),
        lambda c: np.array(
            [[mpmath.mpf(c.params["value"].numerator) / c.params["value"].denominator]],
            dtype=object,
        ),
    ),
    "ids": Reference(
        st.lists(st.integers(0, 5), min_size=1, max_size=4).map(
            lambda ids: Case([], {"ids": tuple(ids)})
        ),
        lambda c: np.array([[mpmath.mpf(i) for i in c.params["ids"]]], dtype=object),
    ),
    "divisor": Reference(
        st.tuples(st.one_of(st.none(), _pos()), st.integers(1, 8)).map(
            lambda t: Case([], {"scale": t[0], "d_head": t[1]})
        ),
        lambda c: np.array(
            [
                [
                    mpmath.sqrt(c.params["d_head"])
                    if c.params["scale"] is None
                    else mpmath.mpf(c.params["scale"].numerator) / c.params["scale"].denominator
                ]
            ],
            dtype=object,
        ),
    ),
}
