"""``grad(y, x)`` and ``jacobian(y, x)`` in steps, against central differences in mpmath.

Every op a step can call and that has a VJP is put in a derivation written as a file
would be (``y = op(a0, …)``, ``loss = sum(y * w)``, ``d0 = grad(loss, a0)``, …) on a
sample of ``tests/op_references.py`` and random weights ``w``. The gradient symtf
computes through the graph must equal ``Σ w · ∂op/∂a`` where the derivative is a
central difference of the op's own mpmath reference at 60 digits (an implementation
that shares no code with symtf): exactly in exact arithmetic, enclosed by the
certified balls and midpoint–radius intervals. Chains of steps (an attention head, a
LayerNorm, a softmax cross-entropy) are checked against a hand-written mpmath forward
pass, and against ``torch.autograd`` in float64 where torch is installed. Bad uses are
exit 2 naming the file, the step and what was found.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from fractions import Fraction
from pathlib import Path
from typing import Any

import mpmath
import numpy as np
import pytest
import sympy
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st
from op_references import REFERENCES, Case, array
from test_vjp import NO_DERIVATIVE, SMOOTH

import symtf
from symtf.backends import BallBackend, ExactBackend, FloatBackend
from symtf.backends.midrad import MidradBackend
from symtf.cli import main
from symtf.errors import Undecided
from symtf.graph.core import evaluate
from symtf.graph.pipeline import graph_of
from symtf.ops import REGISTRY
from symtf.ops.core import GRAPH_OPS
from symtf.tensor import from_native

#: How a step writes the ops it reaches by syntax.
SPELLED = {
    "add": "{0} + {1}",
    "sub": "{0} - {1}",
    "mul": "{0} * {1}",
    "div": "{0} / {1}",
    "pow": "{0} ^ {1}",
    "neg": "-{0}",
    "T": "{0}.T",
}
STEP_OPS = sorted(
    name
    for name, op in REGISTRY.items()
    if op.vjp is not None
    and op.tensor_out
    and (op.public or name in SPELLED or name == "matmul")
    and len(op.tensor_args) > len(NO_DERIVATIVE.get(name, ()))
)
"""The ops a step calls with an argument to differentiate (not the constructors, and not
``argmax`` or ``one_hot``, whose only tensor argument has no derivative)."""
CERTIFIED = {"ball": lambda: BallBackend(128), "midrad": MidradBackend}


# ----------------------------------------------------------------------------- writing files


def _frac(x: Any) -> str:
    x = Fraction(x)
    return str(x.numerator) if x.denominator == 1 else f"{x.numerator}/{x.denominator}"


def _tensor_toml(a: np.ndarray) -> str:
    shape = ", ".join(str(n) for n in np.shape(a))
    values = ", ".join(f'"{_frac(x)}"' for x in np.asarray(a, dtype=object).flat)
    return f"{{ shape = [{shape}], values = [{values}] }}"


def _literal(v: Any) -> str:
    if isinstance(v, bool):
        return "true" if v else "false"
    if isinstance(v, list):
        return "[" + ", ".join(_literal(x) for x in v) + "]"
    if isinstance(v, Fraction):
        return _frac(v)
    if isinstance(v, str):  # a choice setting (round's mode): a quoted word in a step
        return f"'{v}'"
    return str(v)


def _toml(tensors: dict[str, np.ndarray], steps: dict[str, str], claims: str = "") -> str:
    lines = ['title = "gradients"', 'source = "tests"', "", "[tensors]"]
    lines += [f"{k} = {_tensor_toml(v)}" for k, v in tensors.items()]
    lines += ["", "[steps]"]
    lines += [f'{k} = "{v}"' for k, v in steps.items()]
    return "\n".join(lines) + "\n" + claims


def _call(name: str, case: Case) -> tuple[str, dict[str, np.ndarray], list[int]] | None:
    """The step expression of ``case``, its given tensors, and the arguments to differentiate."""
    op = REGISTRY[name]
    tensors: dict[str, np.ndarray] = {}
    if op.variadic is not None:
        parts = case.tensors[0]
        names = [f"a{k}" for k in range(len(parts))]
        tensors = {n: np.asarray(p, dtype=object) for n, p in zip(names, parts, strict=True)}
        kw = [f"{k}={_literal(v)}" for k, v in case.params.items()]
        return f"{name}({', '.join([*names, *kw])})", tensors, list(range(len(parts)))
    args, wrt = [], []
    for k, (p, a) in enumerate(zip(op.tensor_args, case.tensors, strict=False)):
        if a is None:
            continue
        tensors[f"a{k}"] = np.asarray(a, dtype=object)
        args.append((p.name, f"a{k}"))
        if k not in NO_DERIVATIVE.get(name, set()):
            wrt.append(k)
    if name in SPELLED:
        return SPELLED[name].format(*(n for _, n in args)), tensors, wrt
    if name == "matmul":
        t = ".T" if case.params.get("transpose_b") else ""
        return f"{args[0][1]} @ {args[1][1]}{t}", tensors, wrt
    kw = []
    for k, v in case.params.items():
        p = op.param(k)
        if p is None:
            return None
        if v == p.default and (v is not None or p.default is None):
            continue
        if p.kind == "value":
            return None  # a template's setting other than its default: not written in a step
        if v is None:
            return None
        kw.append(f"{k}={_literal(v)}")
    return f"{name}({', '.join([*(f'{p}={n}' for p, n in args), *kw])})", tensors, wrt


def _finite(c: Case) -> bool:
    def ok(a: Any) -> bool:
        if isinstance(a, list):
            return all(ok(p) for p in a)
        return not isinstance(a, np.ndarray) or all(not isinstance(x, float) for x in a.flat)

    return all(ok(a) for a in c.tensors)


def _values(xp: Any, trace: Any, name: str) -> list[Any]:
    return list(from_native(xp, trace.value(name), trace.true_shapes.get(name)).data)


def _mp(x: Any) -> mpmath.mpf:
    return mpmath.mpf(x.numerator) / x.denominator if isinstance(x, Fraction) else mpmath.mpf(x)


def _agrees(xp: Any, got: Any, want: mpmath.mpf, exact: bool) -> bool:
    tol = mpmath.mpf(10) ** -20 * (1 + abs(want))
    b = xp.ball(got, 300) if exact else got
    mid = mpmath.mpf(b.mid().str(70, radius=False))
    rad = mpmath.mpf(b.rad().str(10, radius=False))
    return abs(mid - want) <= rad + tol


# ----------------------------------------------------------------------------- every op


@pytest.mark.parametrize("name", STEP_OPS)
@settings(
    max_examples=3,
    deadline=None,
    derandomize=True,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.filter_too_much],
)
@given(data=st.data())
def test_grad_of_every_step_op_matches_central_differences(name: str, data: st.DataObject) -> None:
    ref = REFERENCES[name]
    smooth = SMOOTH.get(name, lambda c: True)
    case = data.draw(ref.sample.filter(lambda c: _finite(c) and smooth(c)), label="case")
    written = _call(name, case)
    assume(written is not None)
    assert written is not None
    expr, tensors, wrt = written
    with mpmath.workdps(60):
        out = np.asarray(ref.expect(case), dtype=object)
    w = data.draw(array(out.shape), label="w")
    tensors["w"] = np.asarray(w, dtype=object)
    steps = {"y": expr, "loss": "sum(y * w)"}
    steps.update({f"d{k}": f"grad(loss, a{k})" for k in wrt})
    d = symtf.loads(_toml(tensors, steps), "grads.toml")
    graph = graph_of(d)
    backends = {"exact": ExactBackend(), **{b: make() for b, make in CERTIFIED.items()}}
    traces = {}
    for b, xp in backends.items():
        try:
            traces[b] = (xp, evaluate(graph, xp))
        except Undecided:  # a certified backend may decline a sign (a tie): checking escalates
            assert b != "exact"
    with mpmath.workdps(60):
        h = mpmath.mpf(10) ** -25
        wm = [_mp(x) for x in np.asarray(w, dtype=object).flat]
        for k in wrt:
            base = case.tensors[0][k] if REGISTRY[name].variadic else case.tensors[k]
            base = np.asarray(base, dtype=object)
            for pos, idx in enumerate(np.ndindex(*base.shape)):
                want = _central(ref, case, name, k, idx, h, wm)
                for bname, (xp, trace) in traces.items():
                    got = _values(xp, trace, f"d{k}")[pos]
                    assert _agrees(xp, got, want, bname == "exact"), (
                        f"{name} in {bname}: ∂loss/∂a{k}{list(idx)} = {got}, central "
                        f"differences give {want} ({expr})"
                    )


def _central(
    ref: Any, case: Case, name: str, k: int, idx: tuple[int, ...], h: Any, wm: list[Any]
) -> mpmath.mpf:
    variadic = REGISTRY[name].variadic is not None

    def f(delta: Any) -> list[Any]:
        tensors = [list(p) for p in case.tensors] if variadic else list(case.tensors)
        target = tensors[0] if variadic else tensors
        moved = np.array(target[k], dtype=object)
        moved[idx] = _mp(moved[idx]) + delta
        target[k] = moved
        return list(np.ravel(np.asarray(ref.expect(Case(tensors, case.params)), dtype=object)))

    hi, lo = f(h), f(-h)
    diff = [
        0 if (mpmath.isinf(a) and a == b) else (a - b) / (2 * h)
        for a, b in zip(hi, lo, strict=True)
    ]
    return sum((a * b for a, b in zip(wm, diff, strict=True)), mpmath.mpf(0))


def test_every_differentiable_step_op_is_checked_here() -> None:
    for name in ("exp", "softmax", "layernorm", "cross_entropy", "concat", "matmul", "rope"):
        assert name in STEP_OPS, name
    assert set(GRAPH_OPS) == {"grad", "jacobian"}


# ----------------------------------------------------------------------------- chains of steps

ATT_Q = [["1/2", "-1"], ["1/4", "3/4"], ["0", "1"]]
ATT_K = [["1", "0"], ["-1/2", "1/2"], ["1/4", "1"]]
ATT_V = [["1", "2"], ["0", "-1"], ["3/2", "1/2"]]
ATT_W = [["1", "-1"], ["1/2", "0"], ["-1", "1/4"]]


def _rows(m: Sequence[Sequence[str]]) -> np.ndarray:
    return np.asarray([[Fraction(x) for x in r] for r in m], dtype=object)


def _attention_loss(q: Any, k: Any, v: Any, wt: Any) -> Any:
    """sum(softmax(Q Kᵀ/√2) V ∘ W) in mpmath, written out by hand."""
    n, dk = len(q), len(q[0])
    total = mpmath.mpf(0)
    for i in range(n):
        s = [sum(q[i][t] * k[j][t] for t in range(dk)) / mpmath.sqrt(2) for j in range(n)]
        e = [mpmath.exp(x) for x in s]
        z = sum(e)
        for c in range(len(v[0])):
            total += sum(e[j] / z * v[j][c] for j in range(n)) * wt[i][c]
    return total


ATTENTION_STEPS = {
    "S": "Q @ K.T / sqrt(2)",
    "A": "softmax(S)",
    "O": "A @ V",
    "loss": "sum(O * W)",
    "dQ": "grad(loss, Q)",
    "dK": "grad(loss, K)",
    "dV": "grad(loss, V)",
    "JA": "jacobian(A, S)",
}


def _attention() -> Any:
    tensors = {"Q": _rows(ATT_Q), "K": _rows(ATT_K), "V": _rows(ATT_V), "W": _rows(ATT_W)}
    return symtf.loads(_toml(tensors, ATTENTION_STEPS), "attention.toml")


@pytest.mark.parametrize("backend", ["exact", "ball", "midrad"])
def test_attention_gradients_agree_with_central_differences(backend: str) -> None:
    xp = {"exact": ExactBackend, **CERTIFIED}[backend]()
    trace = evaluate(graph_of(_attention()), xp)
    mats = {
        k: [[_mp(Fraction(x)) for x in r] for r in m]
        for k, m in {"Q": ATT_Q, "K": ATT_K, "V": ATT_V, "W": ATT_W}.items()
    }
    with mpmath.workdps(60):
        h = mpmath.mpf(10) ** -25
        for wrt in ("Q", "K", "V"):
            got = _values(xp, trace, f"d{wrt}")
            for pos, (i, j) in enumerate(np.ndindex(3, 2)):

                def f(delta: Any, i: int = i, j: int = j, wrt: str = wrt) -> Any:
                    m = {k: [list(r) for r in v] for k, v in mats.items()}
                    m[wrt][i][j] += delta
                    return _attention_loss(m["Q"], m["K"], m["V"], m["W"])

                want = (f(h) - f(-h)) / (2 * h)
                assert _agrees(xp, got[pos], want, backend == "exact"), (
                    backend,
                    wrt,
                    i,
                    j,
                    got[pos],
                    want,
                )


def test_jacobian_of_a_softmax_is_diag_minus_outer() -> None:
    xp = ExactBackend()
    trace = evaluate(graph_of(_attention()), xp)
    jac = from_native(xp, trace.value("JA"), trace.true_shapes.get("JA"))
    a = from_native(xp, trace.value("A"), trace.true_shapes.get("A"))
    assert jac.shape == (3, 3, 3, 3)
    for i, j, k, m in np.ndindex(3, 3, 3, 3):
        # ∂A[i, j]/∂S[k, m] = [i = k]·A[i, j]·([j = m] − A[i, m]) (by hand)
        want = (a[i, j] * ((1 if j == m else 0) - a[i, m])) if i == k else 0
        assert sympy.simplify(jac[i, j, k, m] - want) == 0, (i, j, k, m)


def test_grad_is_recorded_as_its_own_op_with_its_parameters() -> None:
    trace = evaluate(graph_of(_attention()), ExactBackend())
    step = trace["dQ"]
    assert step.op == "grad"
    assert (step.params["y"], step.params["x"]) == ("loss", "Q")
    assert trace["JA"].op == "jacobian"
    assert step.inputs == ("loss", "Q")


def test_gradients_match_torch_autograd_in_float64() -> None:
    torch = pytest.importorskip("torch")
    trace = evaluate(graph_of(_attention()), FloatBackend())
    t = {
        k: torch.tensor(
            [[float(Fraction(x)) for x in r] for r in m], dtype=torch.float64, requires_grad=True
        )
        for k, m in {"Q": ATT_Q, "K": ATT_K, "V": ATT_V, "W": ATT_W}.items()
    }
    a = torch.softmax(t["Q"] @ t["K"].T / math.sqrt(2), dim=-1)
    (a @ t["V"] * t["W"]).sum().backward()
    for k in ("Q", "K", "V"):
        got = np.asarray(trace.value(f"d{k}"), dtype=float)
        assert np.allclose(got, t[k].grad.numpy(), rtol=1e-12, atol=1e-12), k


def test_sgd_step_reads_the_gradient_and_chains_through_several_steps() -> None:
    # loss = Σ (tanh(x W) − t)² / 2 by hand: dW = xᵀ((h − t) ∘ (1 − h²))
    x = [[Fraction(1), Fraction(-1, 2)], [Fraction(1, 4), Fraction(2)]]
    w = [[Fraction(1, 2)], [Fraction(-1, 4)]]
    tt = [[Fraction(1, 2)], [Fraction(-1)]]
    tensors = {
        "x": np.asarray(x, dtype=object),
        "W": np.asarray(w, dtype=object),
        "t": np.asarray(tt, dtype=object),
    }
    steps = {
        "z": "x @ W",
        "h": "tanh(z)",
        "r": "h - t",
        "loss": "sum(r * r) / 2",
        "dW": "grad(loss, W)",
        "W1": "W - 1/10 * dW",
    }
    xp = ExactBackend()
    trace = evaluate(graph_of(symtf.loads(_toml(tensors, steps), "sgd.toml")), xp)
    with mpmath.workdps(50):
        h = [mpmath.tanh(sum(_mp(x[i][k]) * _mp(w[k][0]) for k in range(2))) for i in range(2)]
        dw = [
            sum(_mp(x[i][k]) * (h[i] - _mp(tt[i][0])) * (1 - h[i] ** 2) for i in range(2))
            for k in range(2)
        ]
        got = _values(xp, trace, "dW")
        new = _values(xp, trace, "W1")
        for k in range(2):
            assert _agrees(xp, got[k], dw[k], True)
            assert _agrees(xp, new[k], _mp(w[k][0]) - dw[k] / 10, True)


def test_grad_inside_a_larger_expression_is_one_node_read_by_the_step(tmp_path: Path) -> None:
    # y = x W, loss = y²/2 by hand: ∂loss/∂W = xᵀ y = [1, 2]ᵀ · (−3/2) = [−3/2, −3]
    tensors = {"x": _rows([["1", "2"]]), "W": _rows([["1/2"], ["-1"]])}
    steps = {
        "y": "x @ W",
        "loss": "sum(y * y) / 2",
        "W1": "W - 1/10 * grad(loss, W)",
        "W2": "W1 + grad(loss, W) * grad(loss, W) - jacobian(y, W)[0, 0]",
    }
    claims = '\n[[claims]]\nlabel = "W1"\nstep = "W1"\nprinted = "0.65 -0.7"\n'
    p = tmp_path / "sgd.toml"
    p.write_text(_toml(tensors, steps, claims), encoding="utf-8")
    xp = ExactBackend()
    trace = evaluate(graph_of(symtf.load(p)), xp)
    g = [Fraction(-3, 2), Fraction(-3)]
    assert _values(xp, trace, "W1") == [Fraction(1, 2) + Fraction(3, 20), -1 + Fraction(3, 10)]
    # ∂y/∂W = xᵀ, so jacobian(y, W)[0, 0] is the column x = [1, 2]
    w1 = [Fraction(13, 20), Fraction(-7, 10)]
    assert _values(xp, trace, "W2") == [w1[k] + g[k] * g[k] - (1, 2)[k] for k in range(2)]
    # the call is a node of op grad, computed once however often it is written
    hoisted = [n for n in trace if trace[n].op == "grad"]
    assert hoisted == ["grad(loss, W)"], hoisted
    assert trace["grad(loss, W)"].params["y"] == "loss"
    assert "grad(loss, W)" in trace["W1"].inputs and "loss" not in trace["W1"].inputs
    assert [c.verdict for c in symtf.check(p).derivations[0].checks] == ["exact", "exact"]


def test_grad_through_a_literal_power_of_a_negative_base(tmp_path: Path) -> None:
    """``(s - 1) ^ 2`` at s − 1 < 0: the cotangent of the literal exponent (a^b·ln a) is
    not taken; it stopped the check ("the argument of ln is negative")."""
    # loss = (w·x − 1)², by hand: ∂loss/∂w = 2(w·x − 1)·x = 2·(−7/2)·[1/2, 3/2] = [−7/2, −21/2]
    tensors = {"w": _rows([["1", "-2"]]), "x": _rows([["1/2", "3/2"]])}
    steps = {"loss": "(sum(w * x) - 1) ^ 2", "g": "grad(loss, w)"}
    claims = '\n[[claims]]\nlabel = "g"\nstep = "g"\nprinted = "-3.5 -10.5"\n'
    p = tmp_path / "power.toml"
    p.write_text(_toml(tensors, steps, claims), encoding="utf-8")
    xp = ExactBackend()
    trace = evaluate(graph_of(symtf.load(p)), xp)
    assert _values(xp, trace, "g") == [Fraction(-7, 2), Fraction(-21, 2)]
    assert [c.verdict for c in symtf.check(p).derivations[0].checks] == ["exact", "exact"]


def test_the_derivative_of_a_step_by_itself_is_one_and_the_identity(tmp_path: Path) -> None:
    """``grad(L, L)`` reads one name twice: its node has one input. Its shape rule read a
    second one (IndexError, exit 3); dL/dL = 1 and ∂x/∂x = I by definition."""
    tensors = {"x": _rows([["1", "2"]])}
    steps = {
        "L": "sum(x * x)",
        "g": "grad(L, L)",
        "J": "jacobian(x, x)",
        "h": "x - grad(L, L)",
    }
    claims = (
        '\n[[claims]]\nlabel = "g"\nstep = "g"\nprinted = "1"\n'
        '\n[[claims]]\nlabel = "J"\nstep = "J"\nprinted = "1 0\\n0 1"\n'
    )
    p = tmp_path / "self.toml"
    p.write_text(_toml(tensors, steps, claims), encoding="utf-8")
    xp = ExactBackend()
    trace = evaluate(graph_of(symtf.load(p)), xp)
    assert _values(xp, trace, "g") == [1]
    assert _values(xp, trace, "J") == [1, 0, 0, 1]
    assert _values(xp, trace, "h") == [0, 1]
    assert main(["check", str(p)]) == 0


def test_grad_through_indexing_a_join_and_a_constant_branch() -> None:
    # y = Σ_j concat(a, b)[0, j]² + (mask-free) one_hot of ids: only a and b vary
    tensors = {
        "a": _rows([["1/2", "-1"], ["2", "1/4"]]),
        "b": _rows([["3"], ["-1/2"]]),
        "ids": np.asarray([Fraction(1), Fraction(0)], dtype=object),
    }
    steps = {
        "c": "concat(a, b, axis=-1)",
        "r": "c[0, :]",
        "s": "stack(a[1], a[0])",
        "oh": "one_hot(ids, 2)",
        "loss": "sum(r * r) + sum(s * oh)",
        "da": "grad(loss, a)",
        "db": "grad(loss, b)",
    }
    xp = ExactBackend()
    trace = evaluate(graph_of(symtf.loads(_toml(tensors, steps), "join.toml")), xp)
    # by hand: ∂/∂a[0, j] = 2a[0, j] + oh[1, j]; ∂/∂a[1, j] = oh[0, j]; ∂/∂b = [2b[0], 0]
    assert _values(xp, trace, "da") == [2 * Fraction(1, 2) + 1, 2 * -1 + 0, 0, 1]
    assert _values(xp, trace, "db") == [6, 0]


# ----------------------------------------------------------------------------- checking


def _checked(tmp_path: Path, printed: str) -> Any:
    tensors = {"Q": _rows(ATT_Q), "K": _rows(ATT_K), "V": _rows(ATT_V), "W": _rows(ATT_W)}
    claims = f'\n[[claims]]\nlabel = "dV"\nstep = "dV"\nprinted = """\n{printed}\n"""\n'
    p = tmp_path / "attention.toml"
    p.write_text(_toml(tensors, ATTENTION_STEPS, claims), encoding="utf-8")
    return symtf.check(p)


def _printed_dv() -> list[list[mpmath.mpf]]:
    # dV = Aᵀ W, with A by hand in mpmath
    q, k, wt = ([[_mp(Fraction(x)) for x in r] for r in m] for m in (ATT_Q, ATT_K, ATT_W))
    a = []
    for i in range(3):
        s = [sum(q[i][t] * k[j][t] for t in range(2)) / mpmath.sqrt(2) for j in range(3)]
        e = [mpmath.exp(x) for x in s]
        a.append([x / sum(e) for x in e])
    return [[sum(a[i][j] * wt[i][c] for i in range(3)) for c in range(2)] for j in range(3)]


def test_printed_gradients_rounded_to_four_places_are_certified(tmp_path: Path) -> None:
    with mpmath.workdps(40):
        rows = [" ".join(mpmath.nstr(x, 30) for x in r) for r in _printed_dv()]
    rows = [" ".join(f"{float(mpmath.mpf(x)):.4f}" for x in r.split()) for r in rows]
    report = _checked(tmp_path, "\n".join(rows))
    checks = report.derivations[0].checks
    assert len(checks) == 6
    assert {c.verdict for c in checks} <= {"rounded", "exact"}, checks


def test_a_wrong_printed_gradient_is_found(tmp_path: Path) -> None:
    dv = _printed_dv()
    rows = [[f"{float(x):.4f}" for x in r] for r in dv]
    rows[1][0] = f"{float(dv[1][0]) + 0.01:.4f}"  # one entry off by 100 units
    report = _checked(tmp_path, "\n".join(" ".join(r) for r in rows))
    assert report.failed
    bad = [c for c in report.derivations[0].checks if c.verdict not in ("rounded", "exact")]
    assert [(c.index, c.verdict) for c in bad] == [((1, 0), "wrong")], bad


# ----------------------------------------------------------------------------- bad uses


@pytest.mark.parametrize(
    ("expr", "message"),
    [
        ("grad(O, Q)", "grad needs a scalar y (one entry), found shape (3, 2)"),
        ("grad(S, W)", "S does not depend on W (W is not upstream of S)"),
        ("grad(loss, nothing)", "unknown name 'nothing'"),
        ("2 * grad(loss, 2 * Q)", "expected the name of a step or given tensor for x"),
        ("Q - grad(O, Q)", "grad needs a scalar y (one entry), found shape (3, 2)"),
        ("grad(loss, 2 * Q)", "expected the name of a step or given tensor for x"),
        ("grad(loss)", "missing argument x"),
        ("jacobian(loss, pi)", "expected the name of a step or given tensor for x"),
    ],
)
def test_bad_uses_are_exit_2_naming_the_file_and_step(
    tmp_path: Path, capsys: Any, expr: str, message: str
) -> None:
    tensors = {"Q": _rows(ATT_Q), "K": _rows(ATT_K), "V": _rows(ATT_V), "W": _rows(ATT_W)}
    steps = {**{k: v for k, v in ATTENTION_STEPS.items() if k in ("S", "A", "O", "loss")}}
    steps["bad"] = expr
    p = tmp_path / "bad.toml"
    p.write_text(_toml(tensors, steps), encoding="utf-8")
    assert main(["check", str(p)]) == 2
    err = capsys.readouterr().err
    assert "bad.toml" in err and "steps.bad" in err and message in err, err
    assert "Traceback" not in err
