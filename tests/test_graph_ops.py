"""The registry's step ops (symtf.ops) in three backends, against independent references.

References are numpy itself: object arrays of mpmath numbers at 50 digits (numpy
does the shapes, broadcasting and axes; mpmath the arithmetic) and float64
arrays. Inputs are random rationals from a seeded generator. The exact result,
evaluated to 50 digits, must match the mpmath reference to 1e-40; every ball
must contain it; float64 must match numpy to 1e-10 relative.
"""

from __future__ import annotations

import random
from collections.abc import Callable, Iterator
from fractions import Fraction
from typing import Any

import mpmath
import numpy as np
import pytest
import sympy

from symtf import ops as O
from symtf.backends import BallBackend, ExactBackend, FloatBackend
from symtf.tensor import Tensor


@pytest.fixture(autouse=True)
def _digits() -> Iterator[None]:
    """50 digits for mpmath inside each test; the global precision is left alone."""
    with mpmath.workdps(50):
        yield


RNG = random.Random(20261130)


def rand_array(shape: tuple[int, ...], lo: int = -3, hi: int = 3, den: int = 8) -> np.ndarray:
    a = np.empty(shape, dtype=object)
    for idx in np.ndindex(*shape):
        a[idx] = Fraction(RNG.randint(lo * den, hi * den), RNG.randint(1, den))
    return a


def to_tensor(xp: Any, a: np.ndarray) -> Tensor:
    return Tensor(a.shape, [xp.const(Fraction(x)) for x in a.flat])


def to_mp(a: np.ndarray) -> np.ndarray:
    out = np.empty(a.shape, dtype=object)
    for idx in np.ndindex(*a.shape):
        x = Fraction(a[idx])
        out[idx] = mpmath.mpf(x.numerator) / x.denominator
    return out


def to_f64(a: np.ndarray) -> np.ndarray:
    return np.array([float(x) for x in a.flat], dtype=np.float64).reshape(a.shape)


vexp = np.vectorize(mpmath.exp, otypes=[object])
vlog = np.vectorize(mpmath.log, otypes=[object])
vsqrt = np.vectorize(mpmath.sqrt, otypes=[object])
verf = np.vectorize(mpmath.erf, otypes=[object])
vtanh = np.vectorize(mpmath.tanh, otypes=[object])


def check_all(
    op: Callable[..., Tensor],
    ref_mp: Callable[..., np.ndarray],
    ref_f64: Callable[..., np.ndarray],
    *arrays: np.ndarray,
) -> None:
    """Run ``op`` in each backend on ``arrays`` and compare with the references."""
    want = np.asarray(ref_mp(*[to_mp(a) for a in arrays]), dtype=object)
    # exact
    xp = ExactBackend()
    got = op(xp, *[to_tensor(xp, a) for a in arrays])
    assert got.shape == want.shape, (got.shape, want.shape)
    for g, w in zip(got.data, want.flat, strict=True):
        v = sympy.N(g, 60)
        assert abs(mpmath.mpf(str(v)) - w) < mpmath.mpf(10) ** -40, (g, w)
    # balls
    with BallBackend(200) as bx:
        got_b = op(bx, *[to_tensor(bx, a) for a in arrays])
        for g, w in zip(got_b.data, want.flat, strict=True):
            mid, rad = (
                mpmath.mpf(g.mid().str(60, radius=False)),
                mpmath.mpf(g.rad().str(5, radius=False)),
            )
            assert abs(mid - w) <= rad + mpmath.mpf(10) ** -45, (g, w)
    # float64
    fx = FloatBackend()
    got_f = op(fx, *[to_tensor(fx, a) for a in arrays])
    want_f = np.asarray(ref_f64(*[to_f64(a) for a in arrays]), dtype=np.float64)
    assert got_f.shape == want_f.shape
    np.testing.assert_allclose(
        np.array(got_f.data, dtype=np.float64), want_f.ravel(), rtol=1e-10, atol=1e-12
    )


def softmax_ref(exp: Callable[[Any], Any], axis: int = -1) -> Callable[[np.ndarray], np.ndarray]:
    def f(a: np.ndarray) -> np.ndarray:
        e = exp(a)
        return e / e.sum(axis=axis, keepdims=True)

    return f


@pytest.mark.parametrize("trial", range(3))
def test_elementwise_arithmetic_broadcasts_as_numpy(trial: int) -> None:
    a, b = rand_array((2, 1, 3)), rand_array((4, 1))
    check_all(O.add, lambda x, y: x + y, lambda x, y: x + y, a, b)
    check_all(O.sub, lambda x, y: x - y, lambda x, y: x - y, a, b)
    check_all(O.mul, lambda x, y: x * y, lambda x, y: x * y, a, b)
    c = rand_array((4, 1), lo=1, hi=3)
    check_all(O.div, lambda x, y: x / y, lambda x, y: x / y, a, c)


@pytest.mark.parametrize(
    ("sa", "sb"),
    [
        ((2, 3), (3, 4)),
        ((3,), (3, 2)),
        ((2, 3), (3,)),
        ((3,), (3,)),
        ((2, 2, 3), (3, 2)),
        ((2, 1, 2, 3), (3, 3, 2)),
    ],
)
def test_matmul_matches_numpy(sa: tuple[int, ...], sb: tuple[int, ...]) -> None:
    a, b = rand_array(sa), rand_array(sb)
    check_all(O.matmul, lambda x, y: x @ y, lambda x, y: x @ y, a, b)


def test_shape_ops_match_numpy() -> None:
    a = rand_array((2, 3, 4))
    check_all(
        lambda xp, x: O.transpose(xp, x, axes=[2, 0, 1]),
        lambda x: x.transpose(2, 0, 1),
        lambda x: x.transpose(2, 0, 1),
        a,
    )
    check_all(
        lambda xp, x: O.T(xp, x),
        lambda x: np.swapaxes(x, -1, -2),
        lambda x: np.swapaxes(x, -1, -2),
        a,
    )
    check_all(
        lambda xp, x: O.reshape(xp, x, shape=[4, -1]),
        lambda x: x.reshape(4, -1),
        lambda x: x.reshape(4, -1),
        a,
    )
    b = rand_array((2, 3, 1))
    check_all(
        lambda xp, x, y: O.concat(xp, [x, y], axis=-1),
        lambda x, y: np.concatenate([x, y], -1),
        lambda x, y: np.concatenate([x, y], -1),
        a,
        b,
    )
    c = rand_array((2, 3, 4))
    check_all(
        lambda xp, x, y: O.stack(xp, [x, y], axis=1),
        lambda x, y: np.stack([x, y], 1),
        lambda x, y: np.stack([x, y], 1),
        a,
        c,
    )


def test_indexing_matches_numpy() -> None:
    a = rand_array((3, 4, 5))
    cases = [
        ((0,), lambda x: x[0]),
        ((slice(None), slice(1, 3)), lambda x: x[:, 1:3]),
        ((Ellipsis, -1), lambda x: x[..., -1]),
        ((1, 2), lambda x: x[1, 2]),
        ((slice(None, None, -1), Ellipsis, slice(0, 5, 2)), lambda x: x[::-1, ..., 0:5:2]),
        (([2, 0], 1), lambda x: x[[2, 0], 1]),
    ]
    for items, ref in cases:
        check_all(lambda xp, x, items=items: O.index(xp, x, items=items), ref, ref, a)


def test_index_out_of_range_names_axis_and_shape() -> None:
    xp = ExactBackend()
    with pytest.raises(Exception, match=r"index 3 is out of range for axis 0 of size 3"):
        O.index(xp, to_tensor(xp, rand_array((3, 2))), items=[3])


def test_softmax_and_log_softmax_along_any_axis() -> None:
    a = rand_array((2, 3, 4))
    for axis in (-1, 0, 1):
        check_all(
            lambda xp, x, axis=axis: O.softmax(xp, x, axis=axis),
            softmax_ref(vexp, axis),
            softmax_ref(np.exp, axis),
            a,
        )
        check_all(
            lambda xp, x, axis=axis: O.log_softmax(xp, x, axis=axis),
            lambda x, axis=axis: x - vlog(vexp(x).sum(axis=axis, keepdims=True)),
            lambda x, axis=axis: x - np.log(np.exp(x).sum(axis=axis, keepdims=True)),
            a,
        )


def test_softmax_of_minus_infinity_is_exactly_zero() -> None:
    for xp in (ExactBackend(), BallBackend(128), FloatBackend()):
        x = Tensor((2, 2), [xp.const(1), xp.neg_inf(), xp.const(Fraction(1, 2)), xp.const(3)])
        y = O.softmax(xp, x)
        z = y.data[1]
        assert (z == 0) if not isinstance(xp, BallBackend) else (z.is_exact() and z.is_zero())
        assert (
            y.data[0] == xp.const(1) if not isinstance(xp, BallBackend) else y.data[0].contains(1)
        )


def test_unary_functions() -> None:
    a = rand_array((2, 3))
    pos = rand_array((2, 3), lo=1, hi=4)
    sig = lambda x: 1 / (1 + vexp(-x))  # noqa: E731
    checks = [
        (O.exp, vexp, np.exp, a),
        (O.log, vlog, np.log, pos),
        (O.sqrt, vsqrt, np.sqrt, pos),
        (O.absolute, np.abs, np.abs, a),
        (O.sin, np.vectorize(mpmath.sin, otypes=[object]), np.sin, a),
        (O.cos, np.vectorize(mpmath.cos, otypes=[object]), np.cos, a),
        (O.tanh, vtanh, np.tanh, a),
        (O.sigmoid, sig, lambda x: 1 / (1 + np.exp(-x)), a),
        (
            O.relu,
            lambda x: np.vectorize(lambda v: max(v, 0), otypes=[object])(x),
            lambda x: np.maximum(x, 0),
            a,
        ),
        (O.silu, lambda x: x * sig(x), lambda x: x / (1 + np.exp(-x)), a),
        (O.softplus, lambda x: vlog(1 + vexp(x)), lambda x: np.log1p(np.exp(x)), a),
        (O.gelu, lambda x: x / 2 * (1 + verf(x / mpmath.sqrt(2))), None, a),
        (
            O.gelu_tanh,
            lambda x: (
                x
                / 2
                * (1 + vtanh(mpmath.sqrt(2 / mpmath.pi) * (x + mpmath.mpf("0.044715") * x**3)))
            ),
            lambda x: x / 2 * (1 + np.tanh(np.sqrt(2 / np.pi) * (x + 0.044715 * x**3))),
            a,
        ),
    ]
    from math import erf

    for op, ref, ref_f, arr in checks:
        if ref_f is None:
            ref_f = lambda x: x / 2 * (1 + np.vectorize(erf)(x / np.sqrt(2)))  # noqa: E731
        check_all(op, ref, ref_f, arr)


def test_elementwise_max_min_and_reductions() -> None:
    a, b = rand_array((2, 3)), rand_array((1, 3))
    vmax = np.vectorize(max, otypes=[object])
    vmin = np.vectorize(min, otypes=[object])
    check_all(O.max_, vmax, np.maximum, a, b)
    check_all(O.min_, vmin, np.minimum, a, b)
    c = rand_array((2, 3, 4))
    for axis in (None, 0, -1, [0, 2]):
        ax = tuple(axis) if isinstance(axis, list) else axis
        for keep in (False, True):
            check_all(
                lambda xp, x, axis=axis, keep=keep: O.sum_(xp, x, axis=axis, keepdims=keep),
                lambda x, ax=ax, keep=keep: x.sum(axis=ax, keepdims=keep),
                lambda x, ax=ax, keep=keep: x.sum(axis=ax, keepdims=keep),
                c,
            )
            check_all(
                lambda xp, x, axis=axis, keep=keep: O.mean(xp, x, axis=axis, keepdims=keep),
                lambda x, ax=ax, keep=keep: (
                    x.sum(axis=ax, keepdims=keep)
                    / (x.size // np.asarray(x.sum(axis=ax, keepdims=keep)).size)
                ),
                lambda x, ax=ax, keep=keep: x.mean(axis=ax, keepdims=keep),
                c,
            )
            check_all(
                lambda xp, x, axis=axis, keep=keep: O.max_(xp, x, axis=axis, keepdims=keep),
                lambda x, ax=ax, keep=keep: x.max(axis=ax, keepdims=keep),
                lambda x, ax=ax, keep=keep: x.max(axis=ax, keepdims=keep),
                c,
            )
            check_all(
                lambda xp, x, axis=axis, keep=keep: O.min_(xp, x, axis=axis, keepdims=keep),
                lambda x, ax=ax, keep=keep: x.min(axis=ax, keepdims=keep),
                lambda x, ax=ax, keep=keep: x.min(axis=ax, keepdims=keep),
                c,
            )


def test_argmax_var_std() -> None:
    c = rand_array((3, 4))
    for axis in (0, 1):
        xp = ExactBackend()
        got = O.argmax(xp, to_tensor(xp, c), axis=axis)
        want = np.argmax(to_f64(c), axis=axis)
        assert [int(v) for v in got.data] == list(want)
    for unbiased in (False, True):
        ddof = 1 if unbiased else 0
        for axis in (None, -1):

            def vref(x: np.ndarray, axis: Any = axis, ddof: int = ddof) -> np.ndarray:
                m = x.mean(axis=axis, keepdims=True) if axis is not None else x.sum() / x.size
                n = x.shape[-1] if axis is not None else x.size
                return ((x - m) ** 2).sum(axis=axis) / (n - ddof)

            check_all(
                lambda xp, x, axis=axis, u=unbiased: O.var(xp, x, axis=axis, unbiased=u),
                vref,
                lambda x, axis=axis, ddof=ddof: x.var(axis=axis, ddof=ddof),
                c,
            )
            check_all(
                lambda xp, x, axis=axis, u=unbiased: O.std(xp, x, axis=axis, unbiased=u),
                lambda x, vref=vref: np.vectorize(mpmath.sqrt, otypes=[object])(
                    np.asarray(vref(x), dtype=object)
                ),
                lambda x, axis=axis, ddof=ddof: x.std(axis=axis, ddof=ddof),
                c,
            )


def test_layernorm_rmsnorm() -> None:
    x = rand_array((2, 4))
    g, b = rand_array((4,)), rand_array((4,))
    eps = np.array(Fraction(1, 100), dtype=object)

    def ln(x: np.ndarray, e: Any, g: Any, b: Any, sqrt: Callable, ddof: int) -> np.ndarray:
        m = x.sum(axis=-1, keepdims=True) / x.shape[-1]
        v = ((x - m) ** 2).sum(axis=-1, keepdims=True) / (x.shape[-1] - ddof)
        return (x - m) / sqrt(v + e) * g + b

    for unbiased in (False, True):
        ddof = int(unbiased)
        check_all(
            lambda xp, x, e, g, b, u=unbiased: O.layernorm(xp, x, e, g, b, unbiased=u),
            lambda x, e, g, b, d=ddof: ln(x, e, g, b, vsqrt, d),
            lambda x, e, g, b, d=ddof: ln(x, e, g, b, np.sqrt, d),
            x,
            eps,
            g,
            b,
        )

    def rms(x: np.ndarray, e: Any, g: Any, sqrt: Callable) -> np.ndarray:
        return x / sqrt((x * x).sum(axis=-1, keepdims=True) / x.shape[-1] + e) * g

    check_all(
        O.rmsnorm,
        lambda x, e, g: rms(x, e, g, vsqrt),
        lambda x, e, g: rms(x, e, g, np.sqrt),
        x,
        eps,
        g,
    )


def test_masks_dropout_where() -> None:
    x = rand_array((3, 3))
    mask = np.array([[0, 1, 1], [0, 0, 1], [0, 0, 0]], dtype=object)
    check_all(
        lambda xp, x, m: O.masked_fill(xp, x, m, O.scalar(xp.const(7))),
        lambda x, m: np.where(m != 0, 7, x),
        lambda x, m: np.where(m != 0, 7.0, x),
        x,
        mask,
    )
    check_all(O.tril, np.tril, np.tril, x)
    check_all(O.triu, np.triu, np.triu, x)
    keep = np.array([[1, 0, 1], [1, 1, 0], [0, 1, 1]], dtype=object)
    p = np.array(Fraction(1, 3), dtype=object)
    check_all(
        O.dropout, lambda x, k, p: x * k / (1 - p), lambda x, k, p: x * k / (1 - p), x, keep, p
    )
    y = rand_array((3, 3))
    check_all(
        O.where,
        lambda c, a, b: np.where(c != 0, a, b),
        lambda c, a, b: np.where(c != 0, a, b),
        mask,
        x,
        y,
    )
    xp = ExactBackend()
    cm = O.causal_mask(xp, n=3)
    assert cm.tolist() == [[0, -sympy.oo, -sympy.oo], [0, 0, -sympy.oo], [0, 0, 0]]


def test_losses() -> None:
    logits = rand_array((3, 4))
    target = np.array([2, 0, 3], dtype=object)

    def ce(z: np.ndarray, t: np.ndarray, exp: Callable, log: Callable) -> Any:
        lp = z - log(exp(z).sum(axis=-1, keepdims=True))
        return -sum(lp[i, int(t[i])] for i in range(len(t))) / len(t)

    check_all(
        O.cross_entropy,
        lambda z, t: ce(z, t, vexp, vlog),
        lambda z, t: ce(z, t, np.exp, np.log),
        logits,
        target,
    )
    check_all(
        O.nll,
        lambda z, t: -sum(z[i, int(t[i])] for i in range(3)) / 3,
        lambda z, t: -sum(z[i, int(t[i])] for i in range(3)) / 3,
        logits,
        target,
    )
    p = np.array([Fraction(1, 5), Fraction(7, 10), Fraction(1, 2)], dtype=object)
    y = np.array([0, 1, 1], dtype=object)
    check_all(
        O.bce,
        lambda p, y: -(y * vlog(p) + (1 - y) * vlog(1 - p)).sum() / 3,
        lambda p, y: -(y * np.log(p) + (1 - y) * np.log(1 - p)).mean(),
        p,
        y,
    )
    a, b = rand_array((2, 3)), rand_array((3,))
    check_all(
        O.mse, lambda a, b: ((a - b) ** 2).sum() / 6, lambda a, b: ((a - b) ** 2).mean(), a, b
    )
    xp = ExactBackend()
    oh = O.one_hot(xp, to_tensor(xp, np.array([2, 0], dtype=object)), n=3)
    assert oh.tolist() == [[0, 0, 1], [1, 0, 0]]


def test_sinusoidal_and_rope() -> None:
    xp = ExactBackend()
    pe = O.sinusoidal(xp, n=3, d=4, base=100)
    for p in range(3):
        for j in range(4):
            angle = mpmath.mpf(p) / mpmath.power(100, mpmath.mpf(j - j % 2) / 4)
            want = mpmath.sin(angle) if j % 2 == 0 else mpmath.cos(angle)
            assert abs(mpmath.mpf(str(sympy.N(pe[p, j], 60))) - want) < mpmath.mpf(10) ** -40
    x = rand_array((2, 3, 4))
    ang = rand_array((3, 2))

    def rope_ref(x: np.ndarray, a: np.ndarray, cos: Callable, sin: Callable) -> np.ndarray:
        out = x.copy()
        for idx in np.ndindex(*x.shape[:-1]):
            t = idx[-1]
            for i in range(x.shape[-1] // 2):
                c, s = cos(a[t, i]), sin(a[t, i])
                u, v = x[(*idx, 2 * i)], x[(*idx, 2 * i + 1)]
                out[(*idx, 2 * i)] = u * c - v * s
                out[(*idx, 2 * i + 1)] = u * s + v * c
        return out

    check_all(
        O.rope,
        lambda x, a: rope_ref(x, a, mpmath.cos, mpmath.sin),
        lambda x, a: rope_ref(x, a, np.cos, np.sin),
        x,
        ang,
    )


# ----------------------------------------------------------------------------- properties


@pytest.mark.parametrize("trial", range(4))
def test_softmax_rows_sum_to_exactly_one(trial: int) -> None:
    xp = ExactBackend()
    x = to_tensor(xp, rand_array((2, 3)))
    y = O.softmax(xp, x)
    for i in range(2):
        total = sympy.together(sympy.Add(*y.data[3 * i : 3 * i + 3]))
        assert sympy.cancel(total) == 1


@pytest.mark.parametrize("trial", range(4))
def test_layernorm_without_eps_has_mean_zero_and_variance_one_exactly(trial: int) -> None:
    xp = ExactBackend()
    a = rand_array((2, 4))
    a[0, 0] += 1  # rows are not constant (random rationals: almost surely; this makes sure)
    a[1, 1] -= 1
    y = O.layernorm(xp, to_tensor(xp, a))
    for i in range(2):
        row = y.data[4 * i : 4 * i + 4]
        assert sympy.expand(sympy.Add(*row)) == 0
        assert sympy.expand(sympy.Add(*(v * v for v in row)) / 4) == 1


@pytest.mark.parametrize("shape", [(4, 6), (2, 4, 6), (2, 3, 4, 6)])
def test_split_heads_then_merge_heads_is_the_identity(shape: tuple[int, ...]) -> None:
    xp = ExactBackend()
    x = to_tensor(xp, rand_array(shape))
    for h in (1, 2, 3, 6):
        s = O.split_heads(xp, x, h=h)
        assert s.shape == (*shape[:-2], h, shape[-2], shape[-1] // h)
        assert O.merge_heads(xp, s) == x
    # and split_heads is numpy's reshape + swapaxes
    a = rand_array(shape)
    want = np.swapaxes(a.reshape(*shape[:-1], 2, shape[-1] // 2), -2, -3)
    got = O.split_heads(xp, to_tensor(xp, a), h=2)
    assert got.tolist() == [
        [*map(sympy.Rational, r)] for r in want.reshape(-1, want.shape[-1]).tolist()
    ] or got.data == tuple(sympy.Rational(x.numerator, x.denominator) for x in want.flat)


@pytest.mark.parametrize("trial", range(3))
def test_attention_without_mask_is_permutation_equivariant(trial: int) -> None:
    xp = ExactBackend()
    n, d = 3, 2
    X = rand_array((n, d))
    Wq, Wk, Wv = rand_array((d, d)), rand_array((d, d)), rand_array((d, d))
    perm = [2, 0, 1]

    def attention(Xa: np.ndarray) -> Tensor:
        x = to_tensor(xp, Xa)
        q = O.matmul(xp, x, to_tensor(xp, Wq))
        k = O.matmul(xp, x, to_tensor(xp, Wk))
        v = O.matmul(xp, x, to_tensor(xp, Wv))
        s = O.div(xp, O.matmul(xp, q, O.T(xp, k)), O.scalar(xp.sqrt(xp.const(d))))
        return O.matmul(xp, O.softmax(xp, s), v)

    out = attention(X)
    out_p = attention(X[perm])
    for i, pi in enumerate(perm):
        for j in range(d):
            assert sympy.simplify(out_p[i, j] - out[pi, j]) == 0
