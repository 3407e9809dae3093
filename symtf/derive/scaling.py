"""Why attention divides by √d_k, and what the division does to softmax.

The moments of ``q·k`` are derived by moment algebra (linearity of expectation,
independence, zero mean, unit variance) and checked numerically by averaging
over a concrete zero-mean, unit-variance distribution. The effect on softmax is
derived for scores ``c·u`` and shown on the "I love AI" article's own scores.
"""

from __future__ import annotations

import functools
import itertools
from typing import Any

import mpmath
import sympy

from symtf.derive.core import NUMERIC_DPS, Check, Derivation, Identity, agree, symbol_row
from symtf.derive.index import Context, Expect, Family, Variance
from symtf.derive.proof import Proof, Step
from symtf.derive.softmax import softmax_row
from symtf.derive.words import m, words

#: The bundled worked example whose scores illustrate the effect of the scale.
ARTICLE = "i_love_ai"

C = sympy.Symbol("c", positive=True)


def moment(k: int) -> sympy.Expr:
    """``E[X^k]`` of a zero-mean, unit-variance variable (higher moments stay symbolic)."""
    if k == 0:
        return sympy.S.One
    if k == 1:
        return sympy.S.Zero
    if k == 2:
        return sympy.S.One
    return sympy.Symbol(f"mu_{k}")


def moments(e: sympy.Expr, variables: list[sympy.Symbol]) -> sympy.Expr:
    """``E[e]`` for a polynomial in independent zero-mean, unit-variance variables.

    Linearity turns ``E`` of a sum into a sum of ``E`` of monomials; independence
    turns ``E`` of a monomial into the product of the variables' moments.
    """
    poly = sympy.Poly(sympy.expand(e), *variables)
    total = sympy.S.Zero
    for powers, coeff in poly.terms():
        term = coeff
        for k in powers:
            term *= moment(k)
        total += term
    return sympy.expand(total)


def variance(e: sympy.Expr, variables: list[sympy.Symbol]) -> sympy.Expr:
    """``Var[e] = E[e²] − E[e]²`` by :func:`moments`."""
    return sympy.expand(moments(e**2, variables) - moments(e, variables) ** 2)


def dot_variance_textbook(d_k: int) -> sympy.Expr:
    """Textbook ``Var[q·k] = d_k`` (a sum of d_k independent unit-variance products)."""
    return sympy.Integer(d_k)


def _three_point_average(e: sympy.Expr, variables: list[sympy.Symbol], power: int = 1) -> Any:
    # E over i.i.d. X with P(±√3) = 1/6, P(0) = 2/3: mean 0, variance 1 (the
    # three-point Gauss–Hermite rule, which also matches the normal's moments to
    # the fifth), enumerated exactly at 40 digits.
    fn = sympy.lambdify(variables, e**power, "mpmath")
    r3 = mpmath.sqrt(3)
    support = (
        (-r3, mpmath.mpf(1) / 6),
        (mpmath.mpf(0), mpmath.mpf(2) / 3),
        (r3, mpmath.mpf(1) / 6),
    )
    total = mpmath.mpf(0)
    for combo in itertools.product(support, repeat=len(variables)):
        weight = mpmath.fprod(w for _, w in combo)
        total += weight * fn(*[v for v, _ in combo])
    return total


def _moment_checks(
    kind: str, e: sympy.Expr, variables: list[sympy.Symbol], rhs: sympy.Expr, n: int
) -> tuple[Any, Any]:
    def symbolic() -> Check:
        got = moments(e, variables) if kind == "mean" else variance(e, variables)
        if kind == "second":
            got = moments(e**2, variables)
        ok = sympy.expand(got - rhs) == 0
        return Check(
            ok,
            "moment algebra (linearity, independence, E[x]=0, E[x^2]=1)",
            "" if ok else f"at d_k = {n}: got {got}, expected {rhs}",
        )

    def numeric() -> Check:
        with mpmath.workdps(NUMERIC_DPS):
            m1 = _three_point_average(e, variables)
            m2 = _three_point_average(e, variables, 2)
            got = {"mean": m1, "second": m2, "variance": m2 - m1**2}[kind]
            want = mpmath.mpf(sympy.N(rhs, NUMERIC_DPS + 5))
            ok = agree(got, want)
        return Check(
            ok,
            f"exact average over a 3-point zero-mean unit-variance law, mpmath {NUMERIC_DPS} digits",
            "" if ok else f"at d_k = {n}: {mpmath.nstr(got, 15)} vs {mpmath.nstr(want, 15)}",
        )

    return symbolic, numeric


def entropy(p: sympy.MatrixBase) -> sympy.Expr:
    """Shannon entropy ``−Σ p log p`` in nats (terms with ``p = 0`` are 0)."""
    return -sum((pi * sympy.log(pi) for pi in p if pi != 0), sympy.S.Zero)


def log_weight_slope(p: sympy.MatrixBase, u: sympy.MatrixBase, i: int) -> sympy.Expr:
    """Textbook ``∂/∂c log softmax(cu)_i = u_i − Σ_j p_j u_j``."""
    return u[i] - sum(p[j] * u[j] for j in range(len(u)))


def entropy_slope(p: sympy.MatrixBase, u: sympy.MatrixBase, c: sympy.Expr) -> sympy.Expr:
    """Textbook ``dH/dc = −c·Var_p(u)`` for ``p = softmax(cu)``."""
    mean = sum(p[j] * u[j] for j in range(len(u)))
    return -c * (sum(p[j] * u[j] ** 2 for j in range(len(u))) - mean**2)


@functools.lru_cache(maxsize=1)
def article_trace() -> Any:
    """The exact trace of the "I love AI" article (cached)."""
    import symtf
    from symtf import bundled
    from symtf.derive.core import DeriveError

    path = bundled.named(ARTICLE)
    if path is None:
        raise DeriveError(f"the bundled worked example {ARTICLE} is missing from this installation")
    return symtf.run(symtf.load(path))


def _masked_row(scores: sympy.MatrixBase, i: int, c: sympy.Expr) -> sympy.ImmutableMatrix:
    return sympy.ImmutableMatrix(
        1,
        scores.cols,
        [c * scores[i, j] if j <= i else sympy.S.NegativeInfinity for j in range(scores.cols)],
    )


def _decimal(e: sympy.Expr, digits: int = 6) -> str:
    from symtf.backends.certify import ball
    from symtf.backends.decimals import decimal_string

    for prec in (128, 256, 512):
        s = decimal_string(ball(e, prec), digits)
        if s is not None:
            return s
    return "?"


def _worked_instance() -> Identity:
    trace = article_trace()
    scores = trace.value("l0.h0.scores")
    scaled = trace.value("l0.h0.scaled")
    pattern = trace.value("l0.h0.pattern")
    n = scores.rows
    root = sympy.sqrt(trace.value("d_head")[0, 0])
    rows = [softmax_row(_masked_row(scores, i, 1 / root)) for i in range(n)]
    lhs = sympy.ImmutableMatrix.vstack(*rows)
    notes = [
        f"the scores of l0.h0.scores divided by √{trace.value('d_head')[0, 0]}, with the causal "
        "mask; without the division the weights use the scores themselves:"
    ]
    for i in range(n):
        with_scale = softmax_row(_masked_row(scaled, i, sympy.S.One))
        without = softmax_row(_masked_row(scores, i, sympy.S.One))
        notes.append(
            f"row {i + 1}: largest weight {_decimal(max_weight(with_scale))} with the division, "
            f"{_decimal(max_weight(without))} without; entropy {_decimal(entropy(with_scale))} "
            f"vs {_decimal(entropy(without))} nats"
        )
    return Identity(
        "worked-instance",
        r"A_1 = \operatorname{softmax}\Bigl(\frac{Q_1K_1^{\top}}{\sqrt{2}} + M\Bigr)",
        "A₁ = softmax(Q₁K₁ᵀ/√2 + M)  (the article's scores)",
        words(
            "the article's scores with ",
            m(r"c = 1/\sqrt{d_k}", "c = 1/√d_k"),
            "; the same ops as the worked example",
        ),
        lhs,
        pattern,
        sized=False,
        notes=tuple(notes),
    )


def max_weight(p: sympy.MatrixBase) -> sympy.Expr:
    """The largest weight of an exact row (compared with certified balls)."""
    from symtf.backends import ExactBackend
    from symtf.ops import largest

    xp = ExactBackend()
    best = largest(xp, list(p))
    return p[best[0]]


def _steps(n: int | None) -> list[Identity]:
    assert n is not None
    q = [sympy.Symbol(f"q_{i + 1}", real=True) for i in range(n)]
    k = [sympy.Symbol(f"k_{i + 1}", real=True) for i in range(n)]
    variables = q + k
    dot = sum(a * b for a, b in zip(q, k, strict=True))
    d_k = sympy.Integer(n)
    scaled = dot / sympy.sqrt(d_k)
    out = []
    for key, kind, e, rhs, tex, plain, why in (
        (
            "mean",
            "mean",
            dot,
            sympy.S.Zero,
            r"\mathbb{E}[q\cdot k] = \sum_i \mathbb{E}[q_i]\,\mathbb{E}[k_i] = 0",
            "E[q·k] = Σᵢ E[qᵢ]E[kᵢ] = 0",
            words(
                "linearity, then independence of ",
                m("q_i", "qᵢ"),
                " and ",
                m("k_i", "kᵢ"),
                ", then zero mean",
            ),
        ),
        (
            "second-moment",
            "second",
            dot,
            d_k,
            r"\mathbb{E}[(q\cdot k)^2] = \sum_{i,j}\mathbb{E}[q_iq_j]\,\mathbb{E}[k_ik_j] = d_k",
            "E[(q·k)²] = Σᵢⱼ E[qᵢqⱼ]E[kᵢkⱼ] = d_k",
            words(
                "cross terms vanish by independence and zero mean; ",
                m(r"\mathbb{E}[q_i^2]\,\mathbb{E}[k_i^2] = 1", "E[qᵢ²]E[kᵢ²] = 1"),
            ),
        ),
        (
            "variance",
            "variance",
            dot,
            dot_variance_textbook(n),
            r"\operatorname{Var}[q\cdot k] = \mathbb{E}[(q\cdot k)^2] - \mathbb{E}[q\cdot k]^2 = d_k",
            "Var[q·k] = E[(q·k)²] − E[q·k]² = d_k",
            words("the definition of the variance and the two moments above"),
        ),
        (
            "scaled-variance",
            "variance",
            scaled,
            sympy.S.One,
            r"\operatorname{Var}\Bigl[\frac{q\cdot k}{\sqrt{d_k}}\Bigr] = \frac{d_k}{d_k} = 1",
            "Var[q·k/√d_k] = d_k/d_k = 1",
            words(
                m(r"\operatorname{Var}[aX] = a^2\operatorname{Var}[X]", "Var[aX] = a²Var[X]"),
                " with ",
                m(r"a = 1/\sqrt{d_k}", "a = 1/√d_k"),
            ),
        ),
    ):
        lhs = Expect(e if kind != "second" else e**2) if kind != "variance" else Variance(e)
        symbolic, numeric = _moment_checks(kind, e, variables, rhs, n)
        out.append(Identity(key, tex, plain, why, lhs, rhs, symbolic=symbolic, numeric=numeric))

    u = symbol_row("u", n)
    p = softmax_row(C * u)
    out.append(
        Identity(
            "log-weight-slope",
            r"\frac{\partial}{\partial c}\log \operatorname{softmax}(c\,u)_i = u_i - \sum_j p_j u_j",
            "∂/∂c log softmax(cu)ᵢ = uᵢ − Σⱼ pⱼuⱼ",
            words(
                "differentiate ",
                m(r"c u_i - \log \sum_j e^{c u_j}", "c uᵢ − log Σⱼ e^{c uⱼ}"),
                "; for the largest ",
                m("u_i", "uᵢ"),
                " this is ",
                m(r"\ge 0", "≥ 0"),
                ", so the largest weight grows with ",
                m("c", "c"),
            ),
            sympy.ImmutableMatrix(1, n, [sympy.Derivative(sympy.log(p[i]), C) for i in range(n)]),
            sympy.ImmutableMatrix(1, n, [log_weight_slope(p, u, i) for i in range(n)]),
        )
    )
    out.append(
        Identity(
            "entropy-slope",
            r"\frac{dH}{dc} = -c\,\operatorname{Var}_{p}(u),\quad H = -\sum_j p_j\log p_j",
            "dH/dc = −c·Var_p(u),  H = −Σⱼ pⱼ log pⱼ",
            words(
                m(r"H = \log Z - c\,\mathbb{E}_p[u]", "H = log Z − c E_p[u]"),
                " and ",
                m(
                    r"\tfrac{d}{dc}\mathbb{E}_p[u] = \operatorname{Var}_p(u)",
                    "d/dc E_p[u] = Var_p(u)",
                ),
                ": larger scores, lower entropy",
            ),
            sympy.Derivative(entropy(p), C),
            entropy_slope(p, u, C),
        )
    )
    out.append(_worked_instance())
    return out


# --------------------------------------------------------------------------- every n

D = sympy.Symbol("d_k", integer=True, positive=True)
N = sympy.Symbol("n", integer=True, positive=True)
I_, J_, K_ = sympy.symbols("i j k", integer=True)
QF = sympy.IndexedBase("q", real=True)
KF = sympy.IndexedBase("k", real=True)
U = sympy.IndexedBase("u", real=True)
P = sympy.IndexedBase("p", positive=True)
ZC = sympy.Symbol("Z", positive=True)


def moments_context() -> Context:
    """``q`` and ``k``: independent families of independent zero-mean unit-variance entries."""
    return Context(families=(Family(QF), Family(KF)))


MOMENTS_WHERE = words(
    "where ",
    m(r"q \cdot k = \sum_{i=1}^{d_k} q_i k_i", "q·k = Σ_{i=1}^{d_k} qᵢkᵢ"),
    " and the ",
    m(r"q_i, k_j", "qᵢ, kⱼ"),
    " are independent with mean 0 and variance 1",
)


def _dot() -> sympy.Expr:
    return sympy.Sum(QF[I_] * KF[I_], (I_, 1, D))


def _moment_proofs() -> list[Proof]:
    ctx = moments_context()
    dot = _dot()
    d = sympy.KroneckerDelta
    mean = Proof(
        "mean",
        Expect(dot),
        sympy.S.Zero,
        ctx,
        (
            Step("expectation-linearity", sympy.Sum(Expect(QF[I_] * KF[I_]), (I_, 1, D))),
            Step("independence", sympy.Sum(Expect(QF[I_]) * Expect(KF[I_]), (I_, 1, D))),
            Step("moments", sympy.S.Zero),
        ),
        MOMENTS_WHERE,
    )
    double = sympy.Sum(QF[I_] * KF[I_] * QF[J_] * KF[J_], (J_, 1, D), (I_, 1, D))
    second = Proof(
        "second-moment",
        Expect(dot**2),
        D,
        ctx,
        (
            Step("algebra", Expect(double), words("a square of a sum is a double sum")),
            Step(
                "expectation-linearity",
                sympy.Sum(Expect(QF[I_] * QF[J_] * KF[I_] * KF[J_]), (J_, 1, D), (I_, 1, D)),
            ),
            Step(
                "independence",
                sympy.Sum(
                    Expect(QF[I_] * QF[J_]) * Expect(KF[I_] * KF[J_]), (J_, 1, D), (I_, 1, D)
                ),
            ),
            Step("moments", sympy.Sum(d(I_, J_) * d(I_, J_), (J_, 1, D), (I_, 1, D))),
            Step("delta-sifting", sympy.Sum(1, (I_, 1, D))),
            Step("algebra", D),
        ),
        MOMENTS_WHERE,
    )
    variance = Proof(
        "variance",
        Variance(dot),
        D,
        ctx,
        (
            Step("variance", Expect(dot**2) - Expect(dot) ** 2),
            Step("lemma", D - Expect(dot) ** 2, lemma="second-moment"),
            Step("lemma", D, lemma="mean"),
        ),
        MOMENTS_WHERE,
    )
    scaled = Proof(
        "scaled-variance",
        Variance(dot / sympy.sqrt(D)),
        sympy.S.One,
        ctx,
        (
            Step("variance-scaling", Variance(dot) / D),
            Step("lemma", sympy.S.One, lemma="variance"),
        ),
        MOMENTS_WHERE,
    )
    return [mean, second, variance, scaled]


def sharpness_context() -> Context:
    """``p_i = e^{c u_i}/Z``, ``Z = Σ_k e^{c u_k}``, for ``i`` in ``1 … n``."""
    return Context(
        ranges={I_: (1, N), J_: (1, N)},
        definitions={
            P: sympy.Lambda(I_, sympy.exp(C * U[I_]) / ZC),
            ZC: sympy.Sum(sympy.exp(C * U[K_]), (K_, 1, N)),
        },
    )


SHARPNESS_WHERE = words(
    "where ",
    m(r"p_i = e^{c u_i}/Z", "pᵢ = e^{c uᵢ}/Z"),
    " and ",
    m(r"Z = \sum_{k=1}^{n} e^{c u_k}", "Z = Σ_{k=1}^{n} e^{c uₖ}"),
    ", for ",
    m(r"i \in \{1, \dots, n\}", "i ∈ {1, …, n}"),
)


def _sharpness_proofs() -> list[Proof]:
    ctx = sharpness_context()
    pu = sympy.Sum(P[J_] * U[J_], (J_, 1, N))
    slope = Proof(
        "log-weight-slope",
        sympy.Derivative(sympy.log(P[I_]), C),
        U[I_] - pu,
        ctx,
        (
            Step("definition", sympy.Derivative(sympy.log(sympy.exp(C * U[I_]) / ZC), C)),
            Step("log-rules", sympy.Derivative(C * U[I_] - sympy.log(ZC), C)),
            Step("chain-rule", U[I_] - sympy.Derivative(ZC, C) / ZC),
            Step("sum-rule", U[I_] - sympy.Sum(U[J_] * sympy.exp(C * U[J_]), (J_, 1, N)) / ZC),
            Step("definition", U[I_] - pu),
        ),
        SHARPNESS_WHERE,
    )
    h = -sympy.Sum(P[J_] * sympy.log(P[J_]), (J_, 1, N))
    var_p = sympy.Sum(P[J_] * U[J_] ** 2, (J_, 1, N)) - pu**2
    entropy_ = Proof(
        "entropy-slope",
        sympy.Derivative(h, C),
        -C * var_p,
        ctx,
        (
            Step(
                "definition",
                sympy.Derivative(
                    -sympy.Sum(P[J_] * sympy.log(sympy.exp(C * U[J_]) / ZC), (J_, 1, N)), C
                ),
            ),
            Step(
                "log-rules",
                sympy.Derivative(-sympy.Sum(P[J_] * (C * U[J_] - sympy.log(ZC)), (J_, 1, N)), C),
            ),
            Step(
                "linearity",
                sympy.Derivative(-C * pu + sympy.log(ZC) * sympy.Sum(P[J_], (J_, 1, N)), C),
            ),
            Step("sums-to-one", sympy.Derivative(-C * pu + sympy.log(ZC), C)),
            Step(
                "product-rule",
                -pu - C * sympy.Derivative(pu, C) + sympy.Derivative(sympy.log(ZC), C),
            ),
            Step(
                "differentiation",
                -pu - C * sympy.Sum(U[J_] * P[J_] * (U[J_] - pu), (J_, 1, N)) + pu,
                words(
                    m(
                        r"\partial p_j/\partial c = p_j(u_j - \textstyle\sum_k p_k u_k)",
                        "∂pⱼ/∂c = pⱼ(uⱼ − Σₖ pₖuₖ)",
                    ),
                    ", ",
                    m(
                        r"\partial \log Z/\partial c = \textstyle\sum_k p_k u_k",
                        "∂log Z/∂c = Σₖ pₖuₖ",
                    ),
                ),
            ),
            Step("linearity", -C * var_p),
        ),
        SHARPNESS_WHERE,
    )
    return [slope, entropy_]


SCALING = Derivation(
    name="scaling",
    title="Why scores are divided by sqrt(d_k)",
    build=_steps,
    sizes=(2, 3, 4),
    size_help="d_k, the width of q and k",
    min_size=1,
    proofs=lambda: [*_moment_proofs(), *_sharpness_proofs()],
)
