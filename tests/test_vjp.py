"""Every vector–Jacobian product the registry gives, against central differences in mpmath.

For an op with a ``vjp`` and a sample of ``tests/op_references.py``, the cotangent of each
tensor argument, computed exactly (``vjp(xp, g, *inputs, output=y, **params)``), must
equal ``Σ_out g[out] · ∂f_out/∂x`` where the derivative is a central difference of the
op's own mpmath reference (an independent implementation) at 60 digits.
"""

from __future__ import annotations

from collections.abc import Callable
from fractions import Fraction
from typing import Any

import mpmath
import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from op_references import REFERENCES, Case, array

from symtf.backends import ExactBackend
from symtf.ops import REGISTRY
from symtf.tensor import Tensor

WITH_VJP = sorted(
    name
    for name, op in REGISTRY.items()
    if op.vjp is not None and op.tensor_out and op.variadic is None
)
"""Ops checked here (``concat`` and ``stack`` take a list of tensors: ``tests/test_grad.py``
checks them through steps)."""

#: Tensor arguments an op's value does not vary with smoothly (indices, masks, choices,
#: target ids): their VJP gives no cotangent, and nothing here is compared.
NO_DERIVATIVE = {
    "argmax": {0},
    "one_hot": {0},
    "where": {0},
    "masked_fill": {1},
    "dropout": {1},
    "nll": {1},
    "cross_entropy": {1},
}


def _distinct(c: Case) -> bool:
    """No two entries of any tensor argument equal (no tie for an extreme to share)."""
    vals = [x for a in c.tensors if isinstance(a, np.ndarray) for x in a.flat]
    return len(set(vals)) == len(vals)


def _nonzero_output(name: str) -> Callable[[Case], bool]:
    def ok(c: Case) -> bool:
        out = np.asarray(REFERENCES[name].expect(c), dtype=object)
        return all(x != 0 for x in out.flat)

    return ok


#: Ops whose derivative does not exist at some samples: which samples to leave out.
SMOOTH = {
    "relu": lambda c: all(x != 0 for x in c.tensors[0].flat),
    "pow": lambda c: all(x > 0 for x in c.tensors[0].flat),
    "sqrt": lambda c: all(x > 0 for x in c.tensors[0].flat),
    # the ops whose value jumps: away from their jumps (where the derivative is 0, or
    # for clip and % the derivative of the piece the value lies on)
    "round": lambda c: all(
        (x * Fraction(10) ** c.params["decimals"] * 2).denominator != 1 for x in c.tensors[0].flat
    ),
    "floor": lambda c: _off_integers(c.tensors[0]),
    "ceil": lambda c: _off_integers(c.tensors[0]),
    "trunc": lambda c: _off_integers(c.tensors[0]),
    "sign": lambda c: all(x != 0 for x in c.tensors[0].flat),
    "clip": lambda c: all(
        x != v
        for bound in c.tensors[1:]
        if bound is not None
        for x in c.tensors[0].flat
        for v in bound.flat
    ),
    "floordiv": lambda c: _off_integers(_ratios(c)),
    "mod": lambda c: _off_integers(_ratios(c)),
    # kl_div's gradient in the target is ln p + 1 − log q: −∞ at p = 0; |x| at 0 for norm
    "kl_div": lambda c: all(x > 0 for x in c.tensors[1].flat),
    "norm": lambda c: all(x != 0 for x in c.tensors[0].flat),
    # a sort's gradient is a permutation of g: where no two entries are equal
    "sort": lambda c: len(set(c.tensors[0].flat)) == c.tensors[0].size,
    "topk": lambda c: len(set(c.tensors[0].flat)) == c.tensors[0].size,
    "argsort": lambda c: len(set(c.tensors[0].flat)) == c.tensors[0].size,
    **{
        name: (lambda c: all(a != b for a in c.tensors[0].flat for b in c.tensors[1].flat))
        for name in ("lt", "le", "gt", "ge", "eq", "ne")
    },
    "abs": lambda c: all(x != 0 for x in c.tensors[0].flat),
    "max": _distinct,
    "min": _distinct,
    "std": _nonzero_output("std"),
}


def _off_integers(a: Any) -> bool:
    return all(Fraction(x).denominator != 1 for x in np.asarray(a, dtype=object).flat)


def _ratios(c: Case) -> np.ndarray:
    a, b = (np.asarray(t, dtype=object) for t in c.tensors)
    return np.asarray([x / y for x in a.flat for y in b.flat], dtype=object)


def _finite(c: Case) -> bool:
    return all(
        not isinstance(x, float) for a in c.tensors if isinstance(a, np.ndarray) for x in a.flat
    )


def _tensor(xp: Any, a: np.ndarray) -> Tensor:
    from symtf.ops.array import num

    return Tensor(np.shape(a), [num(xp, x) for x in np.asarray(a, dtype=object).flat])


def test_the_ops_with_a_vjp_include_the_arithmetic_and_the_attention_pieces() -> None:
    for name in ("add", "mul", "div", "matmul", "exp", "log", "sum", "mean", "softmax"):
        assert name in WITH_VJP, name


@pytest.mark.parametrize("name", WITH_VJP)
@settings(
    max_examples=4,
    deadline=None,
    derandomize=True,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.filter_too_much],
)
@given(data=st.data())
def test_vjp_matches_central_differences(name: str, data: st.DataObject) -> None:
    ref = REFERENCES[name]
    op = REGISTRY[name]
    smooth = SMOOTH.get(name, lambda c: True)
    case = data.draw(ref.sample.filter(lambda c: _finite(c) and smooth(c)), label="case")
    xp = ExactBackend()
    inputs = [None if a is None else _tensor(xp, a) for a in case.tensors]
    y = op(xp, *inputs, **case.params)
    g_arr = data.draw(array(y.shape), label="g")
    g = _tensor(xp, g_arr)
    cots = op.vjp(xp, g, *inputs, output=y, **case.params)
    constant = NO_DERIVATIVE.get(name, set())
    tensor_args = [
        k for k, a in enumerate(case.tensors) if isinstance(a, np.ndarray) and k not in constant
    ]
    assert len(cots) == len(op.tensor_args), (len(cots), len(op.tensor_args))
    for k in constant:
        assert cots[k] is None, f"{name}: argument {k} has no derivative, found {cots[k]}"
    for k in range(len(case.tensors), len(cots)):
        assert cots[k] is None, f"{name}: argument {k} was not given, found {cots[k]}"
    with mpmath.workdps(60):
        h = mpmath.mpf(10) ** -25
        gm = np.asarray([mpmath.mpf(x.numerator) / x.denominator for x in g_arr.flat], dtype=object)
        for k in tensor_args:
            got = cots[k]
            assert got is not None and got.shape == np.shape(case.tensors[k]), (k, got)
            base = case.tensors[k]
            for pos, idx in enumerate(np.ndindex(*np.shape(base))):

                def f(
                    delta: mpmath.mpf, idx: tuple[int, ...] = idx, k: int = k, base: Any = base
                ) -> np.ndarray:
                    moved = np.array(base, dtype=object)
                    moved[idx] = _shifted(base[idx], delta)
                    tensors = list(case.tensors)
                    tensors[k] = moved
                    return np.asarray(ref.expect(Case(tensors, case.params)), dtype=object)

                hi, lo = f(h), f(-h)
                diff = np.asarray(
                    [
                        0 if (mpmath.isinf(a) and a == b) else (a - b) / (2 * h)
                        for a, b in zip(np.ravel(hi), np.ravel(lo), strict=True)
                    ],
                    dtype=object,
                )  # an entry fixed at ±∞ (a masked score) does not vary
                want = sum((a * b for a, b in zip(gm, diff.flat, strict=True)), mpmath.mpf(0))
                ball = xp.ball(got.data[pos], 300)
                mid = mpmath.mpf(ball.mid().str(70, radius=False))
                assert abs(mid - want) < mpmath.mpf(10) ** -20 * (1 + abs(want)), (
                    f"{name}: cotangent of argument {k} at {idx}: {got.data[pos]} ≈ {mid}, "
                    f"central differences give {want}"
                )


def _shifted(x: Fraction, delta: mpmath.mpf) -> mpmath.mpf:
    return mpmath.mpf(x.numerator) / x.denominator + delta
