"""The draft's float64 pre-filters compute what the op registry computes.

Each op the search builds has a numpy pre-filter (``symtf/draft/templates.py``): a
second body of a registry op, kept because the search screens tens of thousands of
candidates per article. Here every such body is pinned to the registry: random
candidates over random rational tensors are rendered to step text, evaluated
exactly by the step language (the registry in exact arithmetic), evaluated to 30
digits, and compared with the pre-filter, which must agree to float64's
accuracy. An op that gains a pre-filter without a case here fails the coverage test.
"""

from __future__ import annotations

from collections.abc import Callable
from fractions import Fraction
from typing import Any

import numpy as np
import pytest
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st

from symtf import ops
from symtf.backends import ExactBackend
from symtf.draft.templates import OPS, Call, Expr, Num, Ref, call, render, screen
from symtf.errors import ModelError, SpecError
from symtf.graph.evaluate import evaluate_text

Draw = Callable[..., Any]
Tensors = dict[int, list[list[Fraction]]]

_ENTRY = st.integers(-12, 12).map(lambda k: Fraction(k, 4))
_POSITIVE = st.integers(1, 12).map(lambda k: Fraction(k, 4))


def _matrix(draw: Draw, n: int, m: int, entry: st.SearchStrategy[Fraction] = _ENTRY) -> Any:
    return [[draw(entry) for _ in range(m)] for _ in range(n)]


def _shape(draw: Draw) -> tuple[int, int]:
    return draw(st.integers(1, 3)), draw(st.integers(1, 4))


def _unary(op: str, entry: st.SearchStrategy[Fraction] = _ENTRY, **params: Any) -> Any:
    def build(draw: Draw) -> tuple[Expr, Tensors]:
        n, m = _shape(draw)
        return call(op, Ref(0), **params), {0: _matrix(draw, n, m, entry)}

    return build


def _binary(op: str, right: st.SearchStrategy[Fraction] = _ENTRY) -> Any:
    def build(draw: Draw) -> tuple[Expr, Tensors]:
        n, m = _shape(draw)
        # the right operand may be a full matrix, a row or a column (numpy broadcasting)
        bn, bm = draw(st.sampled_from([(n, m), (1, m), (n, 1)]))
        return call(op, Ref(0), Ref(1)), {0: _matrix(draw, n, m), 1: _matrix(draw, bn, bm, right)}

    return build


def _matmul(draw: Draw) -> tuple[Expr, Tensors]:
    n, k = _shape(draw)
    m = draw(st.integers(1, 3))
    if draw(st.booleans()):
        return call("matmul", Ref(0), call("T", Ref(1))), {
            0: _matrix(draw, n, k),
            1: _matrix(draw, m, k),
        }
    return call("matmul", Ref(0), Ref(1)), {0: _matrix(draw, n, k), 1: _matrix(draw, k, m)}


def _scaled(draw: Draw) -> tuple[Expr, Tensors]:
    n, m = _shape(draw)
    d = draw(st.integers(1, 9))
    return call("div", Ref(0), call("sqrt", Num(str(d)))), {0: _matrix(draw, n, m)}


def _axis_op(op: str, *, unbiased: bool = False) -> Any:
    def build(draw: Draw) -> tuple[Expr, Tensors]:
        n, m = _shape(draw)
        params: dict[str, Any] = {}
        axis = draw(st.sampled_from([None, -1, 0]))
        if axis is not None:
            params["axis"] = axis
        if draw(st.booleans()):
            params["keepdims"] = True
        if unbiased and draw(st.booleans()):
            params["unbiased"] = True
        return call(op, Ref(0), **params), {0: _matrix(draw, n, m)}

    return build


def _softmax(draw: Draw) -> tuple[Expr, Tensors]:
    n, m = _shape(draw)
    params = draw(st.sampled_from([{}, {"axis": -1}, {"axis": 0}]))
    x: Expr = Ref(0)
    if draw(st.booleans()):  # the masked scores the search builds
        x = call("add", Ref(0), call("causal_mask", n=m))
        n = m
    return call("softmax", x, **params), {0: _matrix(draw, n, m)}


def _norm(op: str) -> Any:
    def build(draw: Draw) -> tuple[Expr, Tensors]:
        n, m = _shape(draw)
        params: dict[str, Any] = {"eps": draw(st.sampled_from(["0", "1e-05", "1e-12", "0.5"]))}
        if op == "layernorm" and draw(st.booleans()):
            params["unbiased"] = True
        return call(op, Ref(0), **params), {0: _matrix(draw, n, m)}

    return build


def _concat(draw: Draw) -> tuple[Expr, Tensors]:
    n, m = _shape(draw)
    axis = draw(st.sampled_from([-1, 0]))
    parts = draw(st.integers(2, 3))
    values = {k: _matrix(draw, n, m) for k in range(parts)}
    return call("concat", *(Ref(k) for k in range(parts)), axis=axis), values


def _index(draw: Draw) -> tuple[Expr, Tensors]:
    n, m = _shape(draw)
    params: dict[str, Any] = {}
    if draw(st.booleans()):
        a = draw(st.integers(0, n - 1))
        params["rows"] = (a, draw(st.integers(a + 1, n)))
    if draw(st.booleans()) or not params:
        a = draw(st.integers(0, m - 1))
        params["cols"] = (a, draw(st.integers(a + 1, m)))
    return call("index", Ref(0), **params), {0: _matrix(draw, n, m)}


def _causal(draw: Draw) -> tuple[Expr, Tensors]:
    return call("causal_mask", n=draw(st.integers(1, 4))), {}


CASES: dict[str, Callable[[Draw], tuple[Expr, Tensors]]] = {
    "matmul": _matmul,
    "add": _binary("add"),
    "sub": _binary("sub"),
    "mul": _binary("mul"),
    "div": _binary("div", _POSITIVE),
    "T": _unary("T"),
    "sqrt": _scaled,
    "exp": _unary("exp"),
    "relu": _unary("relu"),
    "gelu": _unary("gelu"),
    "gelu_tanh": _unary("gelu_tanh"),
    "sigmoid": _unary("sigmoid"),
    "tanh": _unary("tanh"),
    "silu": _unary("silu"),
    "softmax": _softmax,
    "layernorm": _norm("layernorm"),
    "rmsnorm": _norm("rmsnorm"),
    "mean": _axis_op("mean"),
    "var": _axis_op("var", unbiased=True),
    "std": _axis_op("std", unbiased=True),
    "sum": _axis_op("sum"),
    "max": _axis_op("max"),
    "causal_mask": _causal,
    "concat": _concat,
    "index": _index,
    "centered": _unary("centered"),
}


def test_every_prefiltered_op_has_a_case() -> None:
    assert sorted(CASES) == sorted(name for name, op in OPS.items() if op.screen is not None)


def _ops_in(e: Expr) -> set[str]:
    if isinstance(e, Call):
        return {e.op}.union(*(_ops_in(a) for a in e.args))
    return set()


def _exact(e: Expr, tensors: Tensors) -> np.ndarray | None:
    """The candidate's rendered step evaluated exactly, then to 30 digits (None where undefined)."""
    xp = ExactBackend()
    names = {k: f"k{k}" for k in tensors}
    values = {names[k]: ops.tensor(xp, v) for k, v in tensors.items()}
    try:
        out = evaluate_text(xp, render(e, names), values, where="test")
    except (ModelError, SpecError):  # a zero variance, one feature unbiased: discarded
        return None
    flat = [float(v.evalf(30)) for v in out.data]  # ±∞ (a causal mask) stays ±∞
    return np.array(flat, dtype=float).reshape(out.shape)


@pytest.mark.parametrize("name", sorted(CASES))
@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(data=st.data())
def test_prefilter_agrees_with_the_registry(name: str, data: st.DataObject) -> None:
    e, tensors = CASES[name](data.draw)
    assert name in _ops_in(e)
    exact = _exact(e, tensors)
    assume(exact is not None)
    assert exact is not None
    floats = {k: np.array([[float(x) for x in row] for row in v]) for k, v in tensors.items()}
    with np.errstate(all="ignore"):
        pre = screen(e, floats)
    # The search reads both as matrices (a 1-D result is one row).
    assert np.atleast_2d(pre).shape == np.atleast_2d(exact).shape, (pre, exact)
    pre = pre.reshape(exact.shape)
    # Sums of a few quarter-integers and smooth functions of them: float64 is good to a few
    # ulps, a 1e-12 eps added to a variance of order 1 included; a deviation near sqrt(eps)
    # is the worst case, with relative error below 1e-9.
    assert np.allclose(pre, exact, rtol=1e-9, atol=1e-12, equal_nan=False), (
        render(e, {k: f"k{k}" for k in tensors}),
        pre,
        exact,
    )
