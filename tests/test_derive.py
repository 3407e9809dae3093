"""symtf derive: every derivation verified, and checked against textbook forms written here."""

from __future__ import annotations

import functools
import math
import shutil
import subprocess
from pathlib import Path

import mpmath
import numpy as np
import pytest
import sympy

from symtf import derive
from symtf.cli import main
from symtf.derive import render

ARTICLE = Path(__file__).resolve().parent.parent / "derivations" / "i_love_ai.toml"

#: The smallest size worth verifying for each derivation (keeps the file fast).
SMALL = {
    "softmax-jacobian": 3,
    "softmax-cross-entropy": 3,
    "scaling": 3,
    "layernorm-jacobian": 3,
    "rmsnorm-jacobian": 3,
    "attention-backward": 2,
    "gelu": None,
    "sinusoidal-relative": 2,
    "rope-relative": 2,
    "causal-parallel": 3,
}


@functools.cache
def result(name: str) -> derive.Result:
    return derive.run(name, n=SMALL[name])


def step(name: str, key: str) -> derive.StepResult:
    return next(s for s in result(name).steps if s.key == key)


def value(e: sympy.Expr, point: dict) -> float:
    return float(sympy.sympify(e).doit().xreplace(point).evalf(30))


def matrix_value(m: sympy.MatrixBase, point: dict) -> np.ndarray:
    return np.array([[value(m[i, j], point) for j in range(m.cols)] for i in range(m.rows)])


def point_for(m: sympy.MatrixBase, seed: int = 1) -> dict:
    rng = np.random.default_rng(seed)
    syms = sorted(
        set().union(*(sympy.sympify(e).free_symbols for e in m))
        | {v for e in m for d in sympy.sympify(e).atoms(sympy.Derivative) for v in d.variables},
        key=str,
    )
    return {s: sympy.Rational(int(rng.integers(-15, 16)), 7) for s in syms}


# ------------------------------------------------------------------ the list and the runs


def test_the_registry_names_all_ten() -> None:
    # `derive --list` prints them (it proves each one, so its output is tested once, in
    # test_derive_proofs.test_list_names_all_ten_and_marks_at_least_eight_proved_for_all_n)
    assert len(derive.names()) == 10
    assert set(derive.names()) == set(SMALL)


@pytest.mark.parametrize("name", list(SMALL))
def test_every_step_verified_both_ways(name: str) -> None:
    r = result(name)
    assert r.ok, render.text(r)
    assert r.steps
    for s in r.steps:
        assert s.symbolic.ok and s.numeric.ok, (s.key, s.symbolic, s.numeric)
        assert s.statement and s.plain and s.justification
        # Words carry no maths: every symbol is in a maths piece (real LaTeX).
        for part in s.justification:
            if isinstance(part, str):
                assert not set(part) & set("=_^<>|/\\"), (s.key, part)


# ------------------------------------------------------------------ textbook forms


def test_softmax_jacobian_matches_textbook() -> None:
    d = step("softmax-jacobian", "entries").lhs
    pt = point_for(d)
    x = np.array([float(pt[sympy.Symbol(f"x_{i}", real=True)]) for i in (1, 2, 3)])
    s = np.exp(x) / np.exp(x).sum()
    textbook = np.diag(s) - np.outer(s, s)
    got = matrix_value(d, pt)
    np.testing.assert_allclose(got, textbook, rtol=0, atol=1e-14)
    np.testing.assert_allclose(got.sum(axis=1), 0, atol=1e-14)
    assert np.linalg.matrix_rank(textbook) == 2


def test_cross_entropy_gradient_matches_textbook() -> None:
    g = step("softmax-cross-entropy", "gradient").lhs  # row y: gradient of loss with target y
    pt = point_for(g)
    z = np.array([float(pt[sympy.Symbol(f"z_{i}", real=True)]) for i in (1, 2, 3)])
    p = np.exp(z - z.max()) / np.exp(z - z.max()).sum()
    textbook = np.stack([p - np.eye(3)[y] for y in range(3)])
    np.testing.assert_allclose(matrix_value(g, pt), textbook, atol=1e-14)


def test_scaling_moments_match_brute_force() -> None:
    # E and Var of q·k over every sign pattern of Rademacher entries, exactly.
    for d_k in (1, 2, 3):
        samples = [
            sum(a * b for a, b in zip(bits[:d_k], bits[d_k:], strict=True))
            for bits in np.array(np.meshgrid(*[[-1, 1]] * (2 * d_k))).T.reshape(-1, 2 * d_k)
        ]
        mean = sympy.Rational(sum(int(v) for v in samples), len(samples))
        var = sympy.Rational(sum(int(v) ** 2 for v in samples), len(samples)) - mean**2
        assert mean == 0 and var == d_k
    assert step("scaling", "variance").rhs == 3
    assert step("scaling", "scaled-variance").rhs == 1


def test_scaling_worked_instance_uses_article_scores() -> None:
    s = step("scaling", "worked-instance")
    assert s.sizes == (None,)
    # Without the division by sqrt(2) the last row of A_1 is more peaked.
    scores = np.array([2.4, 1.44, 1.68])
    with_scale = np.exp(scores / math.sqrt(2)) / np.exp(scores / math.sqrt(2)).sum()
    without = np.exp(scores) / np.exp(scores).sum()
    assert without.max() > with_scale.max()
    row3 = s.notes[-1]
    assert f"{with_scale.max():.6f}"[:7] in row3 and f"{without.max():.6f}"[:7] in row3


@pytest.mark.parametrize("eps0", [False, True])
def test_layernorm_jacobian_matches_textbook(eps0: bool) -> None:
    key = "eps0:jacobian" if eps0 else "jacobian"
    d = step("layernorm-jacobian", key).lhs
    pt = point_for(d, seed=3)
    x = np.array([float(pt[sympy.Symbol(f"x_{i}", real=True)]) for i in (1, 2, 3)])
    eps = 0.0 if eps0 else float(pt[sympy.Symbol("varepsilon", positive=True)])
    c = x - x.mean()
    sigma = math.sqrt((c**2).mean() + eps)
    xhat = c / sigma
    textbook = (np.eye(3) - np.ones((3, 3)) / 3 - np.outer(xhat, xhat) / 3) / sigma
    got = matrix_value(d, pt)
    np.testing.assert_allclose(got, textbook, atol=1e-12)
    np.testing.assert_allclose(got @ np.ones(3), 0, atol=1e-12)
    if eps0:
        np.testing.assert_allclose(got @ xhat, 0, atol=1e-12)


def test_rmsnorm_jacobian_matches_textbook() -> None:
    d = step("rmsnorm-jacobian", "jacobian").lhs
    pt = point_for(d, seed=4)
    x = np.array([float(pt[sympy.Symbol(f"x_{i}", real=True)]) for i in (1, 2, 3)])
    eps = float(pt[sympy.Symbol("varepsilon", positive=True)])
    r = math.sqrt((x**2).mean() + eps)
    textbook = np.eye(3) / r - np.outer(x, x) / (3 * r**3)
    np.testing.assert_allclose(matrix_value(d, pt), textbook, atol=1e-12)


def _attention_backward_numpy(q, k, v, g, causal):  # type: ignore[no-untyped-def]
    n, d = q.shape
    s = q @ k.T / math.sqrt(d)
    if causal:
        s = np.where(np.tril(np.ones((n, n))) > 0, s, -np.inf)
    a = np.exp(s - s.max(axis=1, keepdims=True))
    a /= a.sum(axis=1, keepdims=True)
    da = g @ v.T
    ds = a * (da - (da * a).sum(axis=1, keepdims=True))
    return {"dV": a.T @ g, "dQ": ds @ k / math.sqrt(d), "dK": ds.T @ q / math.sqrt(d)}


@pytest.mark.parametrize("causal", [False, True])
def test_attention_backward_matches_textbook(causal: bool) -> None:
    tag = "causal:" if causal else ""
    steps = {k: step("attention-backward", tag + k).lhs for k in ("dV", "dQ", "dK")}
    pt = point_for(sympy.ImmutableMatrix.vstack(*steps.values()), seed=5)

    def mat(name: str) -> np.ndarray:
        return np.array(
            [
                [float(pt[sympy.Symbol(f"{name}_{{{i}{j}}}", real=True)]) for j in (1, 2)]
                for i in (1, 2)
            ]
        )

    want = _attention_backward_numpy(mat("q"), mat("k"), mat("v"), mat("g"), causal)
    for key, lhs in steps.items():
        np.testing.assert_allclose(matrix_value(lhs, pt), want[key], atol=1e-12, err_msg=key)


def test_gelu_matches_textbook() -> None:
    d = step("gelu", "derivative").lhs
    x = sympy.Symbol("x", real=True)
    for t in (-2.5, -0.3, 0.0, 1.7):
        textbook = 0.5 * (1 + math.erf(t / math.sqrt(2))) + t * math.exp(-t * t / 2) / math.sqrt(
            2 * math.pi
        )
        assert value(d, {x: sympy.Rational(str(t))}) == pytest.approx(textbook, abs=1e-14)
    gap = step("gelu", "tanh-gap")
    assert "[4.7323e-4, 4.7329e-4]" in gap.symbolic.method
    # independent: a dense float grid never exceeds the certified upper bound
    xs = np.linspace(-6, 6, 20001)
    tanh_form = 0.5 * xs * (1 + np.tanh(math.sqrt(2 / math.pi) * (xs + 0.044715 * xs**3)))
    exact = xs * 0.5 * (1 + np.vectorize(math.erf)(xs / math.sqrt(2)))
    assert 4.72e-4 < np.abs(exact - tanh_form).max() <= 4.7329e-4


def test_sinusoidal_shift_matches_textbook() -> None:
    d, p, k = 4, 3.0, 5.0
    w = 10000.0 ** (-np.arange(0, d, 2) / d)

    def pe(pos: float) -> np.ndarray:
        return np.ravel(np.column_stack([np.sin(pos * w), np.cos(pos * w)]))

    blocks = [
        np.array([[np.cos(k * wi), np.sin(k * wi)], [-np.sin(k * wi), np.cos(k * wi)]]) for wi in w
    ]
    m = np.block([[blocks[0], np.zeros((2, 2))], [np.zeros((2, 2)), blocks[1]]])
    np.testing.assert_allclose(m @ pe(p), pe(p + k), atol=1e-12)
    s = step("sinusoidal-relative", "whole-vector")
    syms = {str(x): x for x in s.lhs.free_symbols}
    pt = {syms["p"]: sympy.Integer(3), syms["k"]: sympy.Integer(5)}
    np.testing.assert_allclose(matrix_value(s.rhs, pt).ravel(), pe(p + k), atol=1e-12)


def test_rope_score_matches_textbook() -> None:
    rng = np.random.default_rng(7)
    q, kk = rng.normal(size=4), rng.normal(size=4)
    theta = 10000.0 ** (-np.arange(0, 4, 2) / 4)

    def rot(x: np.ndarray, pos: float) -> np.ndarray:
        out = x.copy()
        for i, t in enumerate(theta):
            c, s = math.cos(pos * t), math.sin(pos * t)
            out[2 * i] = c * x[2 * i] - s * x[2 * i + 1]
            out[2 * i + 1] = s * x[2 * i] + c * x[2 * i + 1]
        return out

    assert rot(q, 7) @ rot(kk, 3) == pytest.approx(rot(q, 14) @ rot(kk, 10), abs=1e-12)
    s = step("rope-relative", "relative-score")
    syms = {str(x): x for x in s.lhs.free_symbols}
    pt = {syms[f"q_{i + 1}"]: sympy.Rational(str(round(q[i], 6))) for i in range(4)}
    pt |= {syms[f"k_{i + 1}"]: sympy.Rational(str(round(kk[i], 6))) for i in range(4)}
    pt |= {syms["m"]: sympy.Integer(7), syms["n"]: sympy.Integer(3)}
    qr = np.array([round(v, 6) for v in q])
    kr = np.array([round(v, 6) for v in kk])
    assert value(s.lhs[0, 0], pt) == pytest.approx(rot(qr, 7) @ rot(kr, 3), abs=1e-12)


def test_causal_parallel_matches_textbook() -> None:
    s = step("causal-parallel", "parallel-equals-stepwise")
    names = [f"{m}_{{{i}{j}}}" for m in "qkv" for i in (1, 2, 3) for j in (1, 2)]
    pt = point_for(sympy.ImmutableMatrix([[sympy.Symbol(x, real=True) for x in names]]), seed=9)

    def mat(name: str) -> np.ndarray:
        return np.array(
            [
                [float(pt[sympy.Symbol(f"{name}_{{{i}{j}}}", real=True)]) for j in (1, 2)]
                for i in (1, 2, 3)
            ]
        )

    q, k, v = mat("q"), mat("k"), mat("v")
    rows = []
    for t in range(3):  # generation with a growing cache
        w = np.exp(q[t] @ k[: t + 1].T / math.sqrt(2))
        rows.append((w / w.sum()) @ v[: t + 1])
    np.testing.assert_allclose(matrix_value(s.lhs, pt), np.array(rows), atol=1e-12)


# ------------------------------------------------------------------ failures and the CLI


def test_broken_formula_fails_naming_the_step(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    from symtf.derive import softmax

    def wrong(s: sympy.MatrixBase) -> sympy.ImmutableMatrix:
        col = sympy.Matrix(list(s))
        return sympy.ImmutableMatrix(sympy.diag(*col) + col * col.T)

    monkeypatch.setattr(softmax, "jacobian", wrong)
    assert main(["derive", "softmax-jacobian", "--n", "2"]) == 1
    captured = capsys.readouterr()
    assert "'matrix-form'" in captured.err
    assert "FAILED" in captured.out and "matrix-form (symbolic and numeric)" in captured.out


def test_broken_gelu_derivative_fails(monkeypatch: pytest.MonkeyPatch) -> None:
    from symtf.derive import gelu

    monkeypatch.setattr(gelu, "gelu_prime", lambda x: (1 + sympy.erf(x / sympy.sqrt(2))) / 2)
    r = derive.run("gelu")
    assert not r.ok
    assert [s.key for s in r.failures] == ["derivative"]


def test_numeric_check_catches_a_wrong_derivative() -> None:
    from symtf.derive.core import Identity, numeric_check

    x = sympy.Symbol("x", real=True)
    bad = Identity("d", "", "", "", sympy.Derivative(sympy.sin(x), x), sympy.sin(x))
    good = Identity("d", "", "", "", sympy.Derivative(sympy.sin(x), x), sympy.cos(x))
    assert not numeric_check(bad, None).ok
    assert numeric_check(good, None).ok


@pytest.mark.parametrize(
    "argv",
    [
        ["derive", "no-such-thing"],
        ["derive"],
        ["derive", "gelu", "--n", "3"],
        ["derive", "softmax-jacobian", "--n", "1"],
        ["derive", "rope-relative", "--at", f"{ARTICLE}:l0.h0.pattern[2]"],
        ["derive", "softmax-jacobian", "--at", f"{ARTICLE}:l0.h0.patern[2]"],
        ["derive", "softmax-jacobian", "--at", f"{ARTICLE}:l0.h0.pattern[7]"],
        ["derive", "softmax-jacobian", "--at", "missing.toml:l0.h0.pattern[2]"],
    ],
)
def test_bad_usage_exits_2(argv: list[str], capsys: pytest.CaptureFixture[str]) -> None:
    assert main(argv) == 2
    assert "symtf: error:" in capsys.readouterr().err


def test_at_softmax_jacobian_of_article_row(capsys: pytest.CaptureFixture[str]) -> None:
    assert (
        main(["derive", "softmax-jacobian", "--n", "2", "--at", f"{ARTICLE}:l0.h0.pattern[2]"]) == 0
    )
    out = capsys.readouterr().out
    # Independently: S_1 last row = [2.4, 1.44, 1.68]/sqrt(2), softmax, diag(s) - s s^T.
    with mpmath.workdps(30):
        e = [mpmath.exp(mpmath.mpf(v) / mpmath.sqrt(2)) for v in ("2.4", "1.44", "1.68")]
        s = [x / sum(e) for x in e]
        j00 = s[0] * (1 - s[0])
        j12 = -s[1] * s[2]
    assert mpmath.nstr(j00, 10, strip_zeros=False)[:11] in out
    assert mpmath.nstr(j12, 10, strip_zeros=False)[:12] in out
    assert "J·1 = 0" in out


def test_at_layernorm_on_article_row() -> None:
    r = derive.run("layernorm-jacobian", n=2, at=f"{ARTICLE}:l0.resid_mid[2]")
    assert r.ok and r.at is not None
    j = r.at.quantities[-1].decimals
    assert len(j) == 6 and all(len(row) == 6 for row in j)


def test_latex_is_a_sequence_of_align_blocks(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["derive", "rope-relative", "--n", "1", "--latex"]) == 0
    out = capsys.readouterr().out
    assert out.startswith("\\begin{align*}") and out.rstrip().endswith("\\end{align*}")
    # 4 statements, 3 with a proof block of their own (the unsized one is proved exactly).
    assert out.count("\\begin{align*}") == 4 + 3
    assert out.count("\\textbf{") == 4


def test_latex_compiles(tmp_path: Path) -> None:
    if shutil.which("pdflatex") is None:
        pytest.skip("pdflatex is not installed; the LaTeX compile test needs it")
    r = derive.run("scaling", n=2, at=None)
    worked = derive.run("softmax-jacobian", n=2, at=f"{ARTICLE}:l0.h0.pattern[2]")
    for name, res in (("scaling", r), ("jac", worked), ("gelu", result("gelu"))):
        tex = tmp_path / f"{name}.tex"
        tex.write_text(render.document(res), encoding="utf-8")
        proc = subprocess.run(
            ["pdflatex", "-interaction=nonstopmode", "-halt-on-error", tex.name],
            cwd=tmp_path,
            capture_output=True,
            text=True,
            timeout=600,
        )
        assert proc.returncode == 0, proc.stdout[-2000:]
        assert (tmp_path / f"{name}.pdf").exists()
