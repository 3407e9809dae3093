"""Proofs for every n: the index algebra they rest on, each proof, broken proofs, and their LaTeX.

Expected values come from SymPy's own behaviour, hand-worked identities, and
independent mpmath implementations of the formulas (finite differences), never
from symtf's output.
"""

from __future__ import annotations

import dataclasses
import functools
import re
import shutil
import subprocess
from pathlib import Path

import mpmath
import pytest
import sympy

from symtf import derive
from symtf.cli import main
from symtf.derive import proof, render
from symtf.derive.index import Context, Expect, Family, Normalizer, Variance

N = sympy.Symbol("n", integer=True, positive=True)
I, J, K, M = sympy.symbols("i j k m", integer=True)  # noqa: E741
X = sympy.IndexedBase("x", real=True)
Y = sympy.IndexedBase("y", real=True)
D = sympy.KroneckerDelta

#: Sizes for the fixed checks (the proofs do not depend on them).
SMALL = {
    "softmax-jacobian": 2,
    "softmax-cross-entropy": 2,
    "scaling": 2,
    "layernorm-jacobian": 2,
    "rmsnorm-jacobian": 2,
    "attention-backward": 1,
    "gelu": None,
    "sinusoidal-relative": 1,
    "rope-relative": 1,
    "causal-parallel": 2,
}


@functools.cache
def proofs(name: str) -> tuple[proof.ProofResult, ...]:
    return derive.prove(derive.get(name))


@functools.cache
def run(name: str) -> derive.Result:
    return derive.run(name, n=SMALL[name])


# ------------------------------------------------------------------ the index algebra


def test_sympy_alone_does_not_sift_a_delta_for_symbolic_n() -> None:
    # Why the rules exist: SymPy cannot use 1 <= i <= n.
    got = sympy.Sum(D(I, J) * X[J], (J, 1, N)).doit()
    assert isinstance(got, sympy.Piecewise)


def test_sifting_needs_the_index_range() -> None:
    e = sympy.Sum(D(K, J) * sympy.exp(X[K]), (K, 1, N))
    known = Normalizer(Context(ranges={J: (1, N)}), {"sift"})
    assert known.equal(e, sympy.exp(X[J]))
    assert not known.equal(e, sympy.exp(X[I]))
    # Without the range of j the delta cannot be summed out: not shown equal.
    assert not Normalizer(Context(), {"sift"}).equal(e, sympy.exp(X[J]))
    # A j known to lie beyond the range sums to 0.
    beyond = Normalizer(Context(ranges={J: (N + 1, 2 * N)}), {"sift"})
    assert beyond.equal(e, 0)
    # The capability is needed: linearity alone does not sift.
    assert not Normalizer(Context(ranges={J: (1, N)}), ()).equal(e, sympy.exp(X[J]))


def test_linearity_constants_and_order_of_summation() -> None:
    alg = Normalizer(Context(), ())
    assert alg.equal(sympy.Sum(2 * X[K] + 3, (K, 1, N)), 2 * sympy.Sum(X[M], (M, 1, N)) + 3 * N)
    a = sympy.IndexedBase("a")
    b = sympy.IndexedBase("b")
    ij = sympy.Sum(a[I] * sympy.Sum(b[I, J], (J, 1, N)), (I, 1, N))
    ji = sympy.Sum(sympy.Sum(a[I] * b[I, J], (I, 1, N)), (J, 1, N))
    assert alg.equal(ij, ji)
    assert not alg.equal(ij, sympy.Sum(sympy.Sum(a[J] * b[I, J], (I, 1, N)), (J, 1, N)))


def test_expectation_of_a_dot_product() -> None:
    q, k = sympy.IndexedBase("q"), sympy.IndexedBase("k")
    ctx = Context(families=(Family(q), Family(k)))
    dot = sympy.Sum(q[I] * k[I], (I, 1, N))
    full = Normalizer(ctx, {"independence", "moments", "sift"})
    assert full.equal(Variance(dot), N)
    assert not full.equal(Variance(dot), N**2)
    # Without independence E[q_i k_i] does not factor, and nothing is shown.
    assert not Normalizer(ctx, {"moments", "sift"}).equal(Expect(dot), 0)


def test_unfolding_a_definition_captures_no_index() -> None:
    # t_ij = Σ_k x_k y_j; applied to j = k inside a sum over k, its own k must
    # not capture the argument (which would give n Σ_k x_k y_k).
    t = sympy.IndexedBase("t")
    ctx = Context(definitions={t: sympy.Lambda((I, J), sympy.Sum(X[K] * Y[J], (K, 1, N)))})
    alg = Normalizer(ctx, {"define"})
    lhs = sympy.Sum(t[I, K], (K, 1, N))
    assert alg.equal(lhs, sympy.Sum(X[M], (M, 1, N)) * sympy.Sum(Y[M], (M, 1, N)))
    assert not alg.equal(lhs, N * sympy.Sum(X[M] * Y[M], (M, 1, N)))


# ------------------------------------------------------------------ every proof


@pytest.mark.parametrize("name", list(SMALL))
def test_every_proof_checks_step_by_step(name: str) -> None:
    results = proofs(name)
    assert results, name
    for r in results:
        assert r.ok, (r.proof.key, [(s.step.rule, s.check.detail) for s in r.failures])
        assert r.closes.ok
        for s in r.steps:
            assert s.step.rule in proof.RULES
            assert s.check.method


def test_list_names_all_ten_and_marks_at_least_eight_proved_for_all_n(
    capsys: pytest.CaptureFixture[str],
) -> None:
    assert main(["derive", "--list"]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert len(lines) == len(derive.names()) == 10
    assert sorted(ln.split()[0] for ln in lines) == sorted(derive.names())
    proved = [ln.split()[0] for ln in lines if "proved for all n" in ln and "checked" not in ln]
    assert len(proved) >= 8, lines
    # The one statement without a general proof is said to be checked only.
    jac = next(ln for ln in lines if ln.startswith("softmax-jacobian"))
    assert "checked for n ≤ 4" in jac and "4 of 5" in jac


def test_unproved_statement_never_gets_a_tick() -> None:
    r = run("softmax-jacobian")
    singular = next(s for s in r.steps if s.key == "singular")
    assert singular.proof is None and not singular.proved
    out = render.text(r)
    assert "checked for n = 2, not proved for every n" in out
    block = out[out.index("det J = 0") :]
    block = block[: block.index("\n\n")]
    assert "proved for every n" not in block.replace("not proved for every n", "")


# ------------------------------------------------------------------ broken proofs fail


def _flip_sign(e: sympy.Basic) -> sympy.Basic:
    """The first sum of terms with its first term negated (or the whole, negated)."""
    for sub in sympy.preorder_traversal(e):
        if isinstance(sub, sympy.Add):
            first, *rest = sub.args
            return e.xreplace({sub: sympy.Add(-first, *rest)})
    return -e


def _drop_delta(e: sympy.Basic) -> sympy.Basic:
    deltas = sorted(e.atoms(sympy.KroneckerDelta), key=sympy.default_sort_key)
    assert deltas, e
    return e.xreplace({deltas[0]: sympy.S.One})


MUTATIONS = [
    ("softmax-jacobian", "entries", "delta-sifting", _flip_sign),
    ("softmax-jacobian", "entries", "chain-rule", _drop_delta),
    ("softmax-cross-entropy", "gradient", "delta-sifting", _flip_sign),
    ("layernorm-jacobian", "jacobian", "quotient-rule", _flip_sign),
    ("rmsnorm-jacobian", "jacobian", "delta-sifting", _drop_delta),
    ("attention-backward", "dV", "sum-rule", _drop_delta),
    ("scaling", "second-moment", "moments", _drop_delta),
    ("rope-relative", "relative-score", "angle-addition", _flip_sign),
    ("causal-parallel", "parallel-equals-stepwise", "causal-mask", _flip_sign),
]


def _proof(name: str, key: str) -> proof.Proof:
    return next(p for p in derive.get(name).proofs() if p.key == key)


@pytest.mark.parametrize(("name", "key", "rule", "mutate"), MUTATIONS)
def test_a_broken_step_breaks_the_proof(name: str, key: str, rule: str, mutate: object) -> None:
    p = _proof(name, key)
    lemmas = {r.proof.key: r for r in proofs(name)}
    at = next(i for i, s in enumerate(p.steps) if s.rule == rule)
    broken_after = mutate(p.steps[at].after)  # type: ignore[operator]
    assert broken_after != p.steps[at].after
    steps = list(p.steps)
    steps[at] = dataclasses.replace(steps[at], after=broken_after)
    got = proof.check(dataclasses.replace(p, steps=tuple(steps)), lemmas)
    assert not got.ok
    assert not got.steps[at].check.ok, "the broken line itself must fail"
    # The same proof, unbroken, checks.
    assert proof.check(p, lemmas).ok


def test_a_step_must_name_the_rule_it_uses() -> None:
    p = _proof("softmax-jacobian", "entries")
    at = next(i for i, s in enumerate(p.steps) if s.rule == "delta-sifting")
    steps = list(p.steps)
    steps[at] = dataclasses.replace(steps[at], rule="linearity")
    got = proof.check(dataclasses.replace(p, steps=tuple(steps)))
    assert not got.steps[at].check.ok


def test_a_proof_that_stops_short_does_not_close() -> None:
    p = _proof("softmax-jacobian", "entries")
    got = proof.check(dataclasses.replace(p, steps=p.steps[:-1]))
    assert all(s.check.ok for s in got.steps) and not got.closes.ok and not got.ok


def test_a_lemma_must_be_proved_and_used() -> None:
    p = _proof("softmax-jacobian", "rows-sum-to-zero")
    assert not proof.check(p, {}).ok  # the lemma it names was not proved first
    entries = proof.check(_proof("softmax-jacobian", "entries"))
    assert proof.check(p, {"entries": entries}).ok


def test_a_failing_proof_fails_the_command(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    from symtf.derive import softmax

    real = softmax.quotient_steps

    def broken(*args: object) -> list[proof.Step]:
        steps = real(*args)  # type: ignore[arg-type]
        steps[3] = dataclasses.replace(steps[3], after=_flip_sign(steps[3].after))
        return steps

    monkeypatch.setattr(softmax, "quotient_steps", broken)
    assert main(["derive", "softmax-jacobian", "--n", "2"]) == 1
    out = capsys.readouterr().out
    assert "✗ proof for every n FAILED" in out and "≠" in out


# ------------------------------------------------------------------ the proved formulas, evaluated


def _mp(q: sympy.Rational) -> mpmath.mpf:
    return mpmath.mpf(int(q.p)) / int(q.q)


def _close(exact: sympy.Expr, approx: mpmath.mpf, digits: int = 15) -> bool:
    value = mpmath.mpf(sympy.N(exact, 40))
    return abs(value - approx) <= mpmath.mpf(10) ** (-digits) * max(1, abs(approx))


ROW = [sympy.Rational(p, q) for p, q in ((3, 4), (-1, 3), (2, 1), (0, 1), (-5, 7))]


def test_softmax_jacobian_at_matches_finite_differences() -> None:
    from symtf.derive.softmax import cross_entropy_gradient_at, jacobian_at

    x = ROW[:4]  # beyond the sizes checked exactly
    j = jacobian_at(x)
    g = cross_entropy_gradient_at(x, 2)
    with mpmath.workdps(40):

        def soft(i: int, *v: mpmath.mpf) -> mpmath.mpf:
            e = [mpmath.exp(t) for t in v]
            return e[i] / mpmath.fsum(e)

        at = [_mp(q) for q in x]
        for a in range(4):
            for b in range(4):
                fd = mpmath.diff(lambda t, a=a, b=b: soft(a, *at[:b], t, *at[b + 1 :]), at[b])
                assert _close(j[a, b], fd), (a, b)
            fd = mpmath.diff(lambda t, a=a: -mpmath.log(soft(2, *at[:a], t, *at[a + 1 :])), at[a])
            assert _close(g[0, a], fd), a


@pytest.mark.parametrize("kind", ["layer", "rms"])
def test_norm_jacobians_at_match_finite_differences(kind: str) -> None:
    from symtf.derive.norms import layer_norm_jacobian_at, rms_norm_jacobian_at

    eps = sympy.Rational(1, 10)
    x = ROW
    fn = layer_norm_jacobian_at if kind == "layer" else rms_norm_jacobian_at
    j = fn(x, eps)
    with mpmath.workdps(40):

        def norm(i: int, *v: mpmath.mpf) -> mpmath.mpf:
            n = len(v)
            mu = mpmath.fsum(v) / n if kind == "layer" else 0
            c = [t - mu for t in v]
            return c[i] / mpmath.sqrt(mpmath.fsum(t * t for t in c) / n + _mp(eps))

        at = [_mp(q) for q in x]
        for a in range(5):
            for b in range(5):
                fd = mpmath.diff(lambda t, a=a, b=b: norm(a, *at[:b], t, *at[b + 1 :]), at[b])
                assert _close(j[a, b], fd), (kind, a, b)


@pytest.mark.parametrize("causal", [False, True])
def test_attention_gradients_at_match_finite_differences(causal: bool) -> None:
    from symtf.derive.attention import attention_gradients_at

    r = sympy.Rational
    q = sympy.Matrix([[r(1, 2), r(-1, 3)], [r(2, 5), r(1, 1)], [r(-3, 4), r(1, 6)]])
    k = sympy.Matrix([[r(1, 3), r(1, 2)], [r(-2, 3), r(1, 4)], [r(1, 1), r(-1, 5)]])
    v = sympy.Matrix([[r(2, 3), r(-1, 2)], [r(1, 7), r(3, 4)], [r(-1, 1), r(1, 3)]])
    g = sympy.Matrix([[r(1, 2), r(1, 1)], [r(-1, 4), r(2, 3)], [r(3, 5), r(-1, 2)]])
    got = attention_gradients_at(q, k, v, g, causal)
    with mpmath.workdps(40):
        mats = {
            name: [[_mp(e) for e in m.row(i)] for i in range(3)]
            for name, m in zip("QKVG", (q, k, v, g), strict=True)
        }

        def loss(ms: dict[str, list[list[mpmath.mpf]]]) -> mpmath.mpf:
            total = mpmath.mpf(0)
            for i in range(3):
                s = [
                    mpmath.fsum(ms["Q"][i][c] * ms["K"][j][c] for c in range(2)) / mpmath.sqrt(2)
                    for j in range(3)
                ]
                keep = [j for j in range(3) if not causal or j <= i]
                w = [mpmath.exp(s[j]) for j in keep]
                z = mpmath.fsum(w)
                for c in range(2):
                    o = mpmath.fsum(wj / z * ms["V"][j][c] for wj, j in zip(w, keep, strict=True))
                    total += ms["G"][i][c] * o
            return total

        for key, name in (("dQ", "Q"), ("dK", "K"), ("dV", "V")):
            for a in range(3):
                for b in range(2):

                    def f(t: mpmath.mpf, name: str = name, a: int = a, b: int = b) -> mpmath.mpf:
                        ms = {nm: [row[:] for row in m] for nm, m in mats.items()}
                        ms[name][a][b] = t
                        return loss(ms)

                    fd = mpmath.diff(f, mats[name][a][b])
                    assert _close(got[key][a, b], fd), (key, a, b, causal)


# ------------------------------------------------------------------ LaTeX that compiles


def _compile(tex: str, where: Path) -> str:
    where.mkdir(parents=True, exist_ok=True)
    src = where / "doc.tex"
    src.write_text(tex, encoding="utf-8")
    proc = subprocess.run(
        [
            "latexmk",
            "-pdf",
            "-no-shell-escape",
            "-interaction=nonstopmode",
            "-halt-on-error",
            src.name,
        ],
        cwd=where,
        capture_output=True,
        text=True,
        timeout=300,
    )
    log = (where / "doc.log").read_text(encoding="utf-8", errors="replace")
    assert proc.returncode == 0, log[-3000:]
    return log


def test_the_overfull_check_can_fail(tmp_path: Path) -> None:
    if shutil.which("latexmk") is None:
        pytest.skip("latexmk is not installed")
    from symtf.renderers.latex import standalone

    wide = r"\[ " + " + ".join(f"x_{{{i}}}" for i in range(120)) + r" \]"
    assert "Overfull" in _compile(standalone("wide", wide), tmp_path)


@pytest.mark.parametrize("name", [*SMALL, "softmax-jacobian at its default sizes"])
def test_every_derivation_document_compiles_without_overfull_boxes(
    name: str, tmp_path: Path
) -> None:
    if shutil.which("latexmk") is None:
        pytest.skip("latexmk is not installed")
    from symtf.renderers.latex.preamble import needs_lualatex

    result = run(name) if name in SMALL else derive.run("softmax-jacobian")
    doc = render.document(result)
    assert not needs_lualatex(doc), "a derivation document is plain pdfLaTeX"
    log = _compile(doc, tmp_path)
    boxes = re.findall(r"^(Overfull \\[hv]box.*)$", log, flags=re.M)
    assert boxes == [], boxes
    assert "! " not in log


def test_proof_latex_has_no_ascii_maths_in_text() -> None:
    for name in SMALL:
        tex = render.latex(run(name))
        for body in re.findall(r"\\text\{([^{}]*)\}", tex):
            assert not set(body) & set("=_^<>|"), (name, body)
