"""The draft's float64 pre-filter gives each candidate what the step it renders means.

The search pre-filters its candidates through the registry's ops in float64,
many per call (``symtf/draft/infer/prefilter.py``): candidates of one op, parameters
and input shapes are stacked on rows or side by side, computed by one registry
call and cut back. What is pinned here is that arrangement, and the hand-over of
the few ops a step writes in other terms (a block of rows or columns,
``centered``, an ε written as a number). Groups of random candidates over random
rational tensors, some sharing an input, are rendered to step text, evaluated
exactly by the step language (the registry in exact arithmetic), evaluated to 30
digits, and compared with the pre-filter's value for each, which must agree to
float64's accuracy; a candidate the exact evaluation refuses must have no value.
(Each op's float64 computation is itself held to mpmath by
``tests/test_op_registry.py``.) An op the search builds without a case here fails
the coverage test.
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
from symtf.draft.infer import prefilter
from symtf.draft.templates import OPS, Call, Expr, Num, Ref, call, render
from symtf.errors import ModelError, SpecError
from symtf.graph.evaluate import evaluate_text

Draw = Callable[..., Any]
Shape = tuple[int, int]
Tensors = dict[int, list[list[Fraction]]]
Build = Callable[[Draw, Shape], tuple[Expr, Tensors]]

_ENTRY = st.integers(-12, 12).map(lambda k: Fraction(k, 4))
_POSITIVE = st.integers(1, 12).map(lambda k: Fraction(k, 4))


def _matrix(draw: Draw, n: int, m: int, entry: st.SearchStrategy[Fraction] = _ENTRY) -> Any:
    return [[draw(entry) for _ in range(m)] for _ in range(n)]


def _unary(op: str, entry: st.SearchStrategy[Fraction] = _ENTRY, **params: Any) -> Build:
    def build(draw: Draw, shape: Shape) -> tuple[Expr, Tensors]:
        n, m = shape
        return call(op, Ref(0), **params), {0: _matrix(draw, n, m, entry)}

    return build


def _binary(op: str, right: st.SearchStrategy[Fraction] = _ENTRY) -> Build:
    def build(draw: Draw, shape: Shape) -> tuple[Expr, Tensors]:
        n, m = shape
        # the right operand may be a full matrix, a row, a column or one number (numpy
        # broadcasting), or a number as a step writes it
        kind = draw(st.sampled_from(["full", "row", "column", "one", "number"]))
        if kind == "number":
            text = str(draw(st.sampled_from([2, 3, 0.5])))
            return call(op, Ref(0), Num(text)), {0: _matrix(draw, n, m)}
        bn, bm = {"full": (n, m), "row": (1, m), "column": (n, 1), "one": (1, 1)}[kind]
        return call(op, Ref(0), Ref(1)), {0: _matrix(draw, n, m), 1: _matrix(draw, bn, bm, right)}

    return build


def _matmul(draw: Draw, shape: Shape) -> tuple[Expr, Tensors]:
    n, k = shape
    m = draw(st.integers(1, 3))
    if draw(st.booleans()):
        return call("matmul", Ref(0), call("T", Ref(1))), {
            0: _matrix(draw, n, k),
            1: _matrix(draw, m, k),
        }
    return call("matmul", Ref(0), Ref(1)), {0: _matrix(draw, n, k), 1: _matrix(draw, k, m)}


def _scaled(draw: Draw, shape: Shape) -> tuple[Expr, Tensors]:
    n, m = shape
    d = draw(st.integers(1, 9))
    return call("div", Ref(0), call("sqrt", Num(str(d)))), {0: _matrix(draw, n, m)}


def _axis_op(op: str, *, unbiased: bool = False) -> Build:
    def build(draw: Draw, shape: Shape) -> tuple[Expr, Tensors]:
        n, m = shape
        params: dict[str, Any] = {}
        axis = draw(st.sampled_from([None, -1, 0, 1, -2]))
        if axis is not None:
            params["axis"] = axis
        if draw(st.booleans()):
            params["keepdims"] = True
        if unbiased and draw(st.booleans()):
            params["unbiased"] = True
        return call(op, Ref(0), **params), {0: _matrix(draw, n, m)}

    return build


def _softmax(draw: Draw, shape: Shape) -> tuple[Expr, Tensors]:
    n, m = shape
    params = draw(st.sampled_from([{}, {"axis": -1}, {"axis": 0}, {"axis": 1}]))
    x: Expr = Ref(0)
    if draw(st.booleans()):  # the masked scores the search builds
        x = call("add", Ref(0), call("causal_mask", n=m))
        n = m
    return call("softmax", x, **params), {0: _matrix(draw, n, m)}


def _norm(op: str) -> Build:
    def build(draw: Draw, shape: Shape) -> tuple[Expr, Tensors]:
        n, m = shape
        params: dict[str, Any] = {"eps": draw(st.sampled_from(["0", "1e-05", "1e-12", "0.5"]))}
        if op == "layernorm" and draw(st.booleans()):
            params["unbiased"] = True
        return call(op, Ref(0), **params), {0: _matrix(draw, n, m)}

    return build


def _concat(draw: Draw, shape: Shape) -> tuple[Expr, Tensors]:
    n, m = shape
    axis = draw(st.sampled_from([-1, 0]))
    parts = draw(st.integers(2, 3))
    values = {k: _matrix(draw, n, m) for k in range(parts)}
    return call("concat", *(Ref(k) for k in range(parts)), axis=axis), values


def _index(draw: Draw, shape: Shape) -> tuple[Expr, Tensors]:
    n, m = shape
    params: dict[str, Any] = {}
    if draw(st.booleans()):
        a = draw(st.integers(0, n - 1))
        params["rows"] = (a, draw(st.integers(a + 1, n)))
    if draw(st.booleans()) or not params:
        a = draw(st.integers(0, m - 1))
        params["cols"] = (a, draw(st.integers(a + 1, m)))
    return call("index", Ref(0), **params), {0: _matrix(draw, n, m)}


def _reshape(draw: Draw, shape: Shape) -> tuple[Expr, Tensors]:
    # the rows of a tensor of more axes, which the search holds flattened: any width
    # dividing the number of entries
    n, m = shape
    width = draw(st.sampled_from([w for w in range(1, n * m + 1) if (n * m) % w == 0]))
    return call("reshape", Ref(0), shape=[-1, width]), {0: _matrix(draw, n, m)}


def _causal(draw: Draw, shape: Shape) -> tuple[Expr, Tensors]:
    return call("causal_mask", n=draw(st.integers(1, 4))), {}


def _alibi(draw: Draw, shape: Shape) -> tuple[Expr, Tensors]:
    # the slope as the search writes it: a decimal of the article, either sign
    slope = draw(st.sampled_from(["0.25", "-0.2", "1.5", "0.0625"]))
    return call("alibi", n=draw(st.integers(1, 4)), slope=slope), {}


CASES: dict[str, Build] = {
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
    "alibi": _alibi,
    "concat": _concat,
    "index": _index,
    "centered": _unary("centered"),
    "reshape": _reshape,
}


def test_every_prefiltered_op_has_a_case() -> None:
    assert sorted(CASES) == sorted(name for name, op in OPS.items() if op.searched)


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
    except (ModelError, SpecError):  # a zero variance, one feature unbiased: no value
        return None
    flat = [float(v.evalf(30)) for v in out.data]  # ±∞ (a causal mask) stays ±∞
    # the search reads every value as a matrix: a 1-D one as a row, a number as 1 × 1
    return np.atleast_2d(np.array(flat, dtype=float).reshape(out.shape))


def _renumbered(e: Expr, keys: dict[int, int]) -> Expr:
    if isinstance(e, Ref):
        return Ref(keys[e.key])
    if isinstance(e, Call):
        return Call(e.op, tuple(_renumbered(a, keys) for a in e.args), e.params)
    return e


def _group(draw: Draw, name: str, shape: Shape, size: int) -> list[tuple[Expr, Tensors]]:
    """``size`` candidates of one case on one shape, each input its own tensor or, at random,
    the first candidate's (a shared factor, a shared bias), with its keys in one space."""
    first, tensors = CASES[name](draw, shape)  # its keys stay as they are
    out = [(first, tensors)]
    for j in range(1, size):
        e, own = CASES[name](draw, shape)
        keys, mine = {}, {}
        for k, v in own.items():
            shared = k in tensors and _dims(tensors[k]) == _dims(v) and draw(st.booleans())
            keys[k] = k if shared else 100 * j + k
            mine[keys[k]] = tensors[k] if shared else v
        out.append((_renumbered(e, keys), mine))
    return out


def _dims(m: list[list[Fraction]]) -> tuple[int, int]:
    return len(m), len(m[0])


def _fill(exprs: list[Expr], tensors: Tensors) -> dict[Expr, Any]:
    floats = {k: np.array([[float(x) for x in row] for row in v]) for k, v in tensors.items()}
    memo: dict[Expr, Any] = {}
    prefilter.fill(exprs, floats.__getitem__, memo)
    return memo


def _agrees(pre: Any, exact: np.ndarray) -> bool:
    # Sums of a few quarter-integers and smooth functions of them: float64 is good to a few
    # ulps, a 1e-12 eps added to a variance of order 1 included; a deviation near sqrt(eps)
    # is the worst case, with relative error below 1e-9.
    return bool(
        pre.shape == exact.shape and np.allclose(pre, exact, rtol=1e-9, atol=1e-12, equal_nan=False)
    )


@pytest.mark.parametrize("name", sorted(CASES))
@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(data=st.data())
def test_prefilter_agrees_with_the_registry(name: str, data: st.DataObject) -> None:
    """Each candidate alone: what the registry computes for the step it renders."""
    shape = (data.draw(st.integers(1, 3)), data.draw(st.integers(1, 4)))
    e, tensors = CASES[name](data.draw, shape)
    assert name in _ops_in(e)
    exact = _exact(e, tensors)
    assume(exact is not None)
    assert exact is not None
    pre = _fill([e], tensors)[e]
    assert pre is not None and _agrees(pre, exact), (
        render(e, {k: f"k{k}" for k in tensors}),
        pre,
        exact,
    )


@pytest.mark.parametrize("name", sorted(CASES))
@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(data=st.data())
def test_candidates_screened_together_get_their_own_values(name: str, data: st.DataObject) -> None:
    """A group screened in one go (stacked, cut back, split where a stack is refused): each
    candidate gets its own step's value, and no value where its step has none."""
    shape = (data.draw(st.integers(1, 3)), data.draw(st.integers(1, 4)))
    group = _group(data.draw, name, shape, data.draw(st.integers(2, 6)))
    tensors: Tensors = {}
    for _, t in group:
        tensors.update(t)
    memo = _fill([e for e, _ in group], tensors)
    for e, t in group:
        exact = _exact(e, t)
        pre = memo[e]
        text = render(e, {k: f"k{k}" for k in t})
        if exact is None:
            assert pre is None, (text, pre)
        else:
            assert pre is not None and _agrees(pre, exact), (text, pre, exact)


def test_one_candidate_the_registry_refuses_leaves_the_rest_of_its_stack() -> None:
    # Five LayerNorms of 2 × 3 matrices: the fourth has a constant row (variance 0), so the
    # stack of all five is refused; the other four keep values, computed by hand.
    rows = {k: [[1.0 + k, 2.0, 4.0], [0.0, 1.0, -1.0]] for k in range(5)}
    rows[3] = [[2.0, 2.0, 2.0], [0.0, 1.0, -1.0]]
    exprs = [call("layernorm", Ref(k), eps="0") for k in range(5)]
    memo: dict[Expr, Any] = {}
    prefilter.fill(exprs, lambda k: np.array(rows[k]), memo)
    assert memo[exprs[3]] is None
    for k in (0, 1, 2, 4):
        x = np.array(rows[k])
        mu = x.mean(axis=1, keepdims=True)
        want = (x - mu) / np.sqrt(((x - mu) ** 2).mean(axis=1, keepdims=True))
        assert np.allclose(memo[exprs[k]], want, rtol=1e-12, atol=0)


def test_what_the_search_never_builds_has_no_value() -> None:
    e = call("log", Ref(0))
    memo: dict[Expr, Any] = {}
    prefilter.fill([e, call("add", e, Ref(0))], lambda k: np.ones((1, 2)), memo)
    assert memo[e] is None
    assert memo[call("add", e, Ref(0))] is None


def test_shapes_that_do_not_fit_have_no_value() -> None:
    e = call("matmul", Ref(0), Ref(1))
    memo: dict[Expr, Any] = {}
    prefilter.fill([e], lambda k: np.ones((2, 3)), memo)
    assert memo[e] is None
