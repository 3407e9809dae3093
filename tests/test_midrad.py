"""The midpoint–radius backend never loses the exact value.

Every expected value here is computed independently: exact products and sums
with :class:`fractions.Fraction`, and ``exp``/``sqrt``/``erf`` with mpmath at
300 bits. A result ``(mid, rad)`` is checked entry by entry with exact rational
comparisons: ``|exact − mid| <= rad``.
"""

from __future__ import annotations

import math
import random
from fractions import Fraction

import mpmath
import numpy as np
import pytest

from symtf.backends.midrad import MidradBackend
from symtf.backends.midrad.arithmetic import (
    ETA,
    MR,
    add,
    div,
    from_rational,
    gamma,
    matmul,
    mul,
    relu,
)

F = Fraction


@pytest.fixture(autouse=True)
def _quiet_overflow():
    """Overflow and inf − inf are expected here (they must give unknown entries)."""
    with np.errstate(all="ignore"):
        yield


def _inside(exact: Fraction, mid: float, rad: float) -> bool:
    if not (math.isfinite(mid) and math.isfinite(rad)):
        return rad == math.inf  # unknown is allowed; a finite wrong ball is not
    return abs(exact - F(mid)) <= F(rad)


def _random_ball(rng: random.Random, rows: int, cols: int, scale: int, exact: bool):
    """A midpoint–radius matrix and one exact rational matrix inside it (sometimes on the edge)."""
    mid = np.empty((rows, cols))
    rad = np.zeros((rows, cols))
    true = []
    for i in range(rows):
        row = []
        for j in range(cols):
            q = F(rng.randint(-(10**9), 10**9), rng.randint(1, 10**6)) * F(2) ** scale
            m, r = from_rational(q.numerator, q.denominator)
            if not exact:
                r = max(r, abs(m) * rng.choice([0.0, 1e-16, 1e-10, 1e-3]))
            mid[i, j], rad[i, j] = m, r
            t = rng.choice([F(-1), F(1), F(rng.randint(-1000, 1000), 1000)])
            row.append(F(m) + t * F(r))
        true.append(row)
    return MR(mid, rad), true


def _exact_product(a: list[list[Fraction]], b: list[list[Fraction]]) -> list[list[Fraction]]:
    return [
        [sum((a[i][k] * b[k][j] for k in range(len(b))), F(0)) for j in range(len(b[0]))]
        for i in range(len(a))
    ]


@pytest.mark.parametrize(
    "scale_a, scale_b",
    [
        (0, 0),  # ordinary sizes
        (-540, -540),  # products near 2^-1080: every product underflows
        (-520, -530),  # products around the smallest normal number, partly subnormal
        (480, 490),  # products near 2^1000, sums close to overflow
        (-300, 300),
    ],
)
@pytest.mark.parametrize("exact", [True, False])
def test_matmul_encloses_the_exact_product(scale_a: int, scale_b: int, exact: bool) -> None:
    rng = random.Random(scale_a * 7 + scale_b + exact)
    for n in (1, 2, 7, 33):
        a, ta = _random_ball(rng, 4, n, scale_a, exact)
        b, tb = _random_ball(rng, n, 5, scale_b, exact or n == 7)
        c = matmul(a, b)
        want = _exact_product(ta, tb)
        for i in range(4):
            for j in range(5):
                assert _inside(want[i][j], c.mid[i, j], c.rad[i, j]), (n, i, j)


def test_matmul_with_cancellation() -> None:
    """Rows whose exact products cancel to 0 or to a tiny rest: the ball still holds them."""
    rng = random.Random(3)
    for _ in range(20):
        n = rng.randint(2, 40)
        x = [F(rng.randint(-(10**12), 10**12), 2 ** rng.randint(0, 60)) for _ in range(n)]
        # y makes x·y exactly 0 except for a tiny rest: y_k = x_{k+1}, y_{k+1} = −x_k pairs
        y = [F(0)] * n
        for k in range(0, n - 1, 2):
            y[k], y[k + 1] = x[k + 1], -x[k]
        y[-1] += F(1, 2**70) if n % 2 else 0
        a = MR(np.array([[float(v) for v in x]]), np.zeros((1, n)))
        b = MR(np.array([[float(v)] for v in y]), np.zeros((n, 1)))
        # the floats are the exact values used (from_rational of a float is exact)
        xa = [F(float(v)) for v in x]
        yb = [F(float(v)) for v in y]
        want = sum((p * q for p, q in zip(xa, yb, strict=True)), F(0))
        c = matmul(a, b)
        assert _inside(want, c.mid[0, 0], c.rad[0, 0])


def test_matmul_underflow_of_every_product_is_covered() -> None:
    """Each product is 0.49·eta, which rounds to 0: only the n·eta term covers the sum."""
    n = 64
    x, y = 2.0**-537, 0.49 * 2.0**-537
    a = MR(np.full((1, n), x), np.zeros((1, n)))
    b = MR(np.full((n, 1), y), np.zeros((n, 1)))
    c = matmul(a, b)
    assert c.mid[0, 0] == 0.0
    assert _inside(n * F(x) * F(y), c.mid[0, 0], c.rad[0, 0])


def test_matmul_overflow_gives_unknown_not_a_wrong_ball() -> None:
    a = MR(np.full((1, 3), 2.0**1000), np.zeros((1, 3)))
    b = MR(np.full((3, 1), 2.0**30), np.zeros((3, 1)))
    c = matmul(a, b)
    assert c.rad[0, 0] == math.inf


def test_radius_is_of_the_size_the_bound_states() -> None:
    """The radius is γ_n|A||B|-sized, not a loose overestimate (a regression guard)."""
    rng = np.random.default_rng(0)
    a = MR(rng.standard_normal((16, 768)), np.zeros((16, 768)))
    b = MR(rng.standard_normal((768, 64)), np.zeros((768, 64)))
    c = matmul(a, b)
    bound = gamma(768) * (np.abs(a.mid) @ np.abs(b.mid))
    assert np.all(c.rad >= bound)
    assert np.all(c.rad <= 1.01 * bound + 768 * ETA * 4)


@pytest.mark.parametrize("scale", [0, -540, -1000, 500, 1000])
def test_elementwise_operations_enclose_exact_results(scale: int) -> None:
    rng = random.Random(scale)
    for exact in (True, False):
        a, ta = _random_ball(rng, 3, 8, scale, exact)
        b, tb = _random_ball(rng, 3, 8, -scale // 2, exact)
        s, p, q = add(a, b), mul(a, b), div(a, b)
        for i in range(3):
            for j in range(8):
                assert _inside(ta[i][j] + tb[i][j], s.mid[i, j], s.rad[i, j])
                assert _inside(ta[i][j] * tb[i][j], p.mid[i, j], p.rad[i, j])
                if tb[i][j] != 0:
                    assert _inside(ta[i][j] / tb[i][j], q.mid[i, j], q.rad[i, j])


def test_division_by_a_ball_around_zero_is_unknown() -> None:
    q = div(MR(np.array([[1.0]]), np.zeros((1, 1))), MR(np.array([[1e-3]]), np.array([[1e-2]])))
    assert q.rad[0, 0] == math.inf


def test_relu_branches() -> None:
    x = MR(np.array([[1.0, -1.0, 0.1]]), np.array([[0.5, 0.5, 0.2]]))
    y = relu(x)
    assert (y.mid[0, 0], y.rad[0, 0]) == (1.0, 0.5)
    assert (y.mid[0, 1], y.rad[0, 1]) == (0.0, 0.0)
    for t in (F(0), F(3, 10) - F(1, 10**17)):  # max(0, x) for x in [-0.1, 0.3]
        assert _inside(t, y.mid[0, 2], y.rad[0, 2])


def _mp(x: float) -> mpmath.mpf:
    return mpmath.mpf(x)


@pytest.mark.parametrize("fn", ["exp", "sqrt", "erf", "tanh", "log"])
def test_elementary_functions_enclose_mpmath(fn: str) -> None:
    """Both ends of each input ball (and its middle) map inside the result."""
    rng = random.Random(fn)
    mids = [rng.uniform(-30, 30) for _ in range(200)]
    mids += [rng.uniform(-760, 720) for _ in range(200)]
    mids += [-745.1, -740.0, -739.9, 708.9, 709.0, 709.9, 0.0, 1e-300, -1e-300, 0.3465735]
    rads = [rng.choice([0.0, 1e-17, 1e-12, 1e-6, 0.1, 0.3, 2.0]) for _ in mids]
    if fn in ("sqrt", "log"):
        mids = [abs(m) for m in mids]
    x = MR(np.array([mids]), np.array([rads]))
    with MidradBackend() as xp:
        y = getattr(xp, fn)(x)
    f = getattr(mpmath, fn)
    with mpmath.workprec(300):  # the global precision is left alone
        for j, (m, r) in enumerate(zip(mids, rads, strict=True)):
            ym, yr = float(y.mid[0, j]), float(y.rad[0, j])
            if yr == math.inf:
                continue
            for t in (_mp(m) - _mp(r), _mp(m), _mp(m) + _mp(r)):
                if fn in ("sqrt", "log") and t <= 0:
                    continue
                v = f(t)
                assert abs(v - _mp(ym)) <= _mp(yr), (fn, m, r, ym, yr, v)


def test_exp_is_tight_where_it_is_fast() -> None:
    x = MR(np.linspace(-50, 50, 101)[None, :], np.zeros((1, 101)))
    with MidradBackend() as xp:
        y = xp.exp(x)
    assert np.all(y.rad <= 1e-14 * y.mid + 1e-300)


def test_exact_minus_infinity_exponentiates_to_exactly_zero() -> None:
    with MidradBackend() as xp:
        y = xp.exp(MR(np.array([[-np.inf, 0.0]]), np.zeros((1, 2))))
    assert (y.mid[0, 0], y.rad[0, 0]) == (0.0, 0.0)
    assert y.mid[0, 1] == 1.0 and y.rad[0, 1] < 1e-14


def test_inflation_is_at_least_one_float_step() -> None:
    """up/down replace nextafter: never less than one float step outwards."""
    rng = np.random.default_rng(5)
    x = np.concatenate(
        [
            rng.random(2000) * 2.0 ** rng.integers(-1074, 1000, 2000),
            [0.0, ETA, 2 * ETA, 2.0**-1022, 2.0**-1022 - ETA, 1.0, 2.0 - 2**-52, 2.0**1000],
            np.nextafter(2.0 ** rng.integers(-1070, 1000, 200).astype(float), 0),
        ]
    )
    from symtf.backends.midrad.arithmetic import down, up

    assert np.all(up(x) >= np.nextafter(x, np.inf))
    pos = x[x > 0]
    assert np.all(down(pos) <= np.nextafter(pos, -np.inf))


def test_conversions_beyond_the_float_range_are_unknown_or_tiny() -> None:
    from flint import arb

    from symtf.backends.midrad.arithmetic import from_arb

    assert from_rational(10**400, 1)[1] == math.inf
    assert from_rational(-(10**400), 3)[1] == math.inf
    m, r = from_rational(1, 10**400)  # below the smallest subnormal: 0 ± eta
    assert _inside(F(1, 10**400), m, r)
    assert from_arb(arb(10) ** 400)[1] == math.inf
    m, r = from_arb(arb(1) / 3)
    assert _inside(F(1, 3), m, r)


# ----------------------------------------------------------------------------- binary32 radii


@pytest.fixture
def single_radii(monkeypatch: pytest.MonkeyPatch) -> None:
    """Every product's radius in binary32 BLAS (normally only the large ones)."""
    import symtf.backends.midrad.arithmetic as arithmetic

    monkeypatch.setattr(arithmetic, "_SINGLE_MIN_WORK", 0)


@pytest.mark.parametrize(
    "scale_a, scale_b", [(0, 0), (-540, -540), (-520, -530), (480, 490), (-300, 300), (-70, -70)]
)
@pytest.mark.parametrize("exact", [True, False])
def test_matmul_with_binary32_radii_encloses_the_exact_product(
    single_radii: None, scale_a: int, scale_b: int, exact: bool
) -> None:
    # (-70, -70): products near 2^-140, in binary32's subnormal range
    test_matmul_encloses_the_exact_product(scale_a, scale_b, exact)


def test_matmul_with_binary32_radii_handles_cancellation_underflow_and_overflow(
    single_radii: None,
) -> None:
    test_matmul_with_cancellation()
    test_matmul_underflow_of_every_product_is_covered()
    test_matmul_overflow_gives_unknown_not_a_wrong_ball()


def test_up32_is_an_upper_bound_in_every_range() -> None:
    from symtf.backends.midrad.arithmetic import up32

    rng = np.random.default_rng(5)
    xs = np.concatenate(
        [
            np.abs(rng.standard_normal(2000)) * 2.0 ** rng.integers(-160, 130, 2000),
            [0.0, 2.0**-149, 2.0**-150, 3 * 2.0**-151, 2.0**-126, 2.0**127 * 1.999, 2.0**128],
            np.nextafter(np.float32(1.5), np.float32(2)).astype(np.float64) * np.ones(1),
        ]
    )
    f = up32(xs)
    assert f.dtype == np.float32
    for x, y in zip(xs.tolist(), f.astype(np.float64).tolist(), strict=True):
        assert y == math.inf or F(y) >= F(x), x
        assert y <= x * (1 + 2.0**-20) + 2.0**-147 or x > 2.0**127  # and tight


def test_binary32_radii_are_as_tight_as_binary64_ones(monkeypatch: pytest.MonkeyPatch) -> None:
    import symtf.backends.midrad.arithmetic as arithmetic

    rng = np.random.default_rng(1)
    a = MR(rng.standard_normal((16, 768)), np.abs(rng.standard_normal((16, 768))) * 1e-9)
    b = MR(
        rng.standard_normal((768, 300)).astype(np.float32).astype(np.float64), np.zeros((768, 300))
    )
    monkeypatch.setattr(arithmetic, "_SINGLE_MIN_WORK", 0)
    r32 = matmul(a, b).rad
    monkeypatch.setattr(arithmetic, "_SINGLE_MIN_WORK", 1 << 62)
    r64 = matmul(MR(a.mid, a.rad), MR(b.mid, b.rad)).rad
    assert np.all(r32 >= r64 * (1 - 1e-3)) and np.all(r32 <= r64 * (1 + 1e-3))
