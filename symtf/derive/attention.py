"""Backpropagation through attention, and why masked attention is causal.

Attention here is symtf's own forward pass, the registry's ops
(:func:`symtf.ops.matmul`, :func:`~symtf.ops.scale`, :func:`~symtf.ops.mask_future`,
:func:`~symtf.ops.softmax`) on symbolic Q, K, V.
"""

from __future__ import annotations

import sympy
from sympy.core.parameters import distribute

from symtf import ops
from symtf.backends import ExactBackend
from symtf.derive.core import Derivation, Identity, gradient, symbol_matrix
from symtf.derive.index import CausalMask, Context, Upto, instantiate
from symtf.derive.proof import Proof, Step
from symtf.derive.words import Words, m, words

#: Width of the symbolic queries, keys and values.
D_HEAD = 2


def attention(
    q: sympy.MatrixBase, k: sympy.MatrixBase, v: sympy.MatrixBase, causal: bool
) -> tuple[sympy.ImmutableMatrix, sympy.ImmutableMatrix]:
    """``(A, O)`` with ``A = softmax(QKᵀ/√d [+ M])`` and ``O = A V``, by :mod:`symtf.ops`."""
    xp = ExactBackend(max_ops=10**9)
    with distribute(False):
        scores = ops.on_matrices(ops.matmul, xp, q, k, transpose_b=True)
        s = ops.on_matrices(ops.scale, xp, scores, sympy.ImmutableMatrix([[sympy.sqrt(q.cols)]]))
        if causal:
            s = ops.on_matrices(ops.mask_future, xp, s)
        a = ops.on_matrices(ops.softmax, xp, s)
        return a, ops.on_matrices(ops.matmul, xp, a, v)


def pairing(g: sympy.MatrixBase, o: sympy.MatrixBase) -> sympy.Expr:
    """``L = ⟨G, O⟩ = Σ G ∘ O``: a scalar whose gradient with respect to ``O`` is ``G``."""
    return sum((g[i, j] * o[i, j] for i in range(o.rows) for j in range(o.cols)), sympy.S.Zero)


def grad_v(a: sympy.MatrixBase, d_o: sympy.MatrixBase) -> sympy.ImmutableMatrix:
    """Textbook ``dV = Aᵀ dO``."""
    return sympy.ImmutableMatrix(a.T * d_o)


def grad_a(d_o: sympy.MatrixBase, v: sympy.MatrixBase) -> sympy.ImmutableMatrix:
    """Textbook ``dA = dO Vᵀ``."""
    return sympy.ImmutableMatrix(d_o * v.T)


def grad_s(a: sympy.MatrixBase, d_a: sympy.MatrixBase) -> sympy.ImmutableMatrix:
    """Textbook ``dS = A ∘ (dA − rowsum(dA ∘ A))``."""
    n, m = a.shape
    rows = [sum(d_a[i, j] * a[i, j] for j in range(m)) for i in range(n)]
    return sympy.ImmutableMatrix(n, m, lambda i, j: a[i, j] * (d_a[i, j] - rows[i]))


def grad_q(d_s: sympy.MatrixBase, k: sympy.MatrixBase) -> sympy.ImmutableMatrix:
    """Textbook ``dQ = dS K / √d``."""
    return sympy.ImmutableMatrix(d_s * k / sympy.sqrt(k.cols))


def grad_k(d_s: sympy.MatrixBase, q: sympy.MatrixBase) -> sympy.ImmutableMatrix:
    """Textbook ``dK = dSᵀ Q / √d``."""
    return sympy.ImmutableMatrix(d_s.T * q / sympy.sqrt(q.cols))


def _backward_steps(n: int | None) -> list[Identity]:
    assert n is not None
    d = D_HEAD
    q, k, v = symbol_matrix("q", n, d), symbol_matrix("k", n, d), symbol_matrix("v", n, d)
    d_o = symbol_matrix("g", n, d)
    a_free = symbol_matrix("a", n, n)
    s_free = symbol_matrix("s", n, n)
    d_a_free = symbol_matrix("h", n, n)
    out = []
    for causal in (False, True):
        tag = "causal:" if causal else ""
        mask_tex = r"\quad(\text{causal mask})" if causal else ""
        mask_plain = "  (causal mask)" if causal else ""
        a, o = attention(q, k, v, causal)
        loss = pairing(d_o, o)
        # dA and dS are stated for A and S as free variables (upstream gradients
        # free too), so each link of the chain is checked on its own.
        s_in = ops.on_matrices(ops.mask_future, ExactBackend(), s_free) if causal else s_free
        a_of_s = ops.on_matrices(ops.softmax, ExactBackend(max_ops=10**9), s_in)
        d_s_full = grad_s(a, grad_a(d_o, v))
        steps = [
            (
                "dV",
                r"\frac{\partial L}{\partial V} = A^{\top}\,dO",
                "∂L/∂V = Aᵀ dO",
                words(
                    m("O = AV", "O = AV"),
                    " is linear in ",
                    m("V", "V"),
                    "; ",
                    m(r"L = \langle dO, O\rangle", "L = ⟨dO, O⟩"),
                ),
                gradient(loss, v),
                grad_v(a, d_o),
            ),
            (
                "dA",
                r"\frac{\partial L}{\partial A} = dO\,V^{\top}",
                "∂L/∂A = dO Vᵀ",
                words(
                    m("O = AV", "O = AV"),
                    " is linear in ",
                    m("A", "A"),
                    " (",
                    m("A", "A"),
                    " free here)",
                ),
                gradient(pairing(d_o, a_free * v), a_free),
                grad_a(d_o, v),
            ),
            (
                "dS",
                r"\frac{\partial L}{\partial S} = A \circ \bigl(dA - \operatorname{rowsum}(dA \circ A)\bigr)",
                "∂L/∂S = A ∘ (dA − rowsum(dA ∘ A))",
                words(
                    "the softmax Jacobian ",
                    m(r"\operatorname{diag}(a) - a a^{\top}", "diag(a) − a aᵀ"),
                    " applied to each row (",
                    m("S", "S"),
                    " and ",
                    m("dA", "dA"),
                    " free here)",
                ),
                gradient(pairing(d_a_free, a_of_s), s_free),
                grad_s(a_of_s, d_a_free),
            ),
            (
                "dQ",
                r"\frac{\partial L}{\partial Q} = \frac{dS\,K}{\sqrt{d}}",
                "∂L/∂Q = dS K/√d",
                words(
                    m(r"S = QK^{\top}/\sqrt{d}", "S = QKᵀ/√d"),
                    "; the chain rule through the whole forward pass",
                ),
                gradient(loss, q),
                grad_q(d_s_full, k),
            ),
            (
                "dK",
                r"\frac{\partial L}{\partial K} = \frac{dS^{\top} Q}{\sqrt{d}}",
                "∂L/∂K = dSᵀ Q/√d",
                words(
                    m(r"S^{\top} = KQ^{\top}/\sqrt{d}", "Sᵀ = KQᵀ/√d"),
                    "; the chain rule through the whole forward pass",
                ),
                gradient(loss, k),
                grad_k(d_s_full, q),
            ),
        ]
        for key, tex, plain, why, lhs, rhs in steps:
            out.append(Identity(tag + key, tex + mask_tex, plain + mask_plain, why, lhs, rhs))
    return out


def _parallel_steps(n: int | None) -> list[Identity]:
    assert n is not None
    d = D_HEAD
    q, k, v = symbol_matrix("q", n, d), symbol_matrix("k", n, d), symbol_matrix("v", n, d)
    _, parallel = attention(q, k, v, causal=True)
    rows = []
    for t in range(n):
        # generation: the new query sees the cache of keys and values so far, no mask
        _, o = attention(q[t : t + 1, :], k[: t + 1, :], v[: t + 1, :], causal=False)
        rows.append(o)
    stepwise = sympy.ImmutableMatrix.vstack(*rows)
    future = [
        sympy.Derivative(parallel[t, a], m[s, b])
        for t in range(n)
        for s in range(t + 1, n)
        for m in (q, k, v)
        for a in range(d)
        for b in range(d)
    ]
    return [
        Identity(
            "parallel-equals-stepwise",
            r"\operatorname{softmax}\Bigl(\frac{QK^{\top}}{\sqrt{d}} + M\Bigr)V\Big|_t"
            r" = \operatorname{softmax}\Bigl(\frac{q_t K_{\le t}^{\top}}{\sqrt{d}}\Bigr)V_{\le t}",
            "row t of softmax(QKᵀ/√d + M)V = softmax(q_t K_{≤t}ᵀ/√d) V_{≤t}",
            words(
                "the mask gives weight ",
                m(r"e^{-\infty} = 0", "e^{−∞} = 0"),
                " to every position after ",
                m("t", "t"),
                ", which is exactly leaving it out of the cache",
            ),
            parallel,
            stepwise,
        ),
        Identity(
            "no-future-dependence",
            r"\frac{\partial O_t}{\partial (q_s, k_s, v_s)} = 0 \quad (s > t)",
            "∂O_t/∂(q_s, k_s, v_s) = 0 for s > t",
            words("teacher forcing computes every row at once, yet no row reads a later position"),
            sympy.ImmutableMatrix(1, len(future), future)
            if future
            else sympy.ImmutableMatrix([[0]]),
            sympy.zeros(1, len(future)) if future else sympy.ImmutableMatrix([[0]]),
        ),
    ]


# --------------------------------------------------------------------------- every n

N = sympy.Symbol("n", integer=True, positive=True)
D = sympy.Symbol("d", integer=True, positive=True)
A_, B_, I_, J_, K_, C_, R_, T_ = sympy.symbols("a b i j k c r t", integer=True)
QB, KB, VB, GB = (sympy.IndexedBase(t, real=True) for t in "QKVG")
SB = sympy.IndexedBase("S", real=True)
AB = sympy.IndexedBase("A", positive=True)
HB = sympy.IndexedBase("H", real=True)
DA = sympy.IndexedBase("dA", real=True)
DS = sympy.IndexedBase("dS", real=True)
LOSS = sympy.Symbol("L", real=True)


def attention_context(causal: bool) -> Context:
    """Scaled dot-product attention in index notation, ``L = Σ_{i,c} G_ic O_ic``.

    ``S_ij = Σ_c Q_ic K_jc/√d``; ``A_ij = e^{S_ij + M_ij}/Σ_k e^{S_ik + M_ik}``
    (``M`` the causal mask, or 0); ``O_ic = Σ_j A_ij V_jc``; ``dA_ij = Σ_c G_ic V_jc``;
    ``dS_ij = A_ij(dA_ij − Σ_k dA_ik A_ik)``. ``a, i, j, r, t`` run over the
    ``n`` positions, ``b, c`` over the ``d`` columns of a head.
    """

    def mask(k: sympy.Expr, t: sympy.Expr) -> sympy.Expr:
        return CausalMask(k, t) if causal else sympy.S.Zero

    return Context(
        ranges={A_: (1, N), I_: (1, N), J_: (1, N), R_: (1, N), T_: (1, N), B_: (1, D)},
        definitions={
            SB: sympy.Lambda(
                (I_, J_), sympy.Sum(QB[I_, C_] * KB[J_, C_], (C_, 1, D)) / sympy.sqrt(D)
            ),
            AB: sympy.Lambda(
                (I_, J_),
                sympy.exp(SB[I_, J_] + mask(J_, I_))
                / sympy.Sum(sympy.exp(SB[I_, K_] + mask(K_, I_)), (K_, 1, N)),
            ),
            LOSS: sympy.Sum(
                GB[I_, C_] * sympy.Sum(AB[I_, J_] * VB[J_, C_], (J_, 1, N)), (C_, 1, D), (I_, 1, N)
            ),
            DA: sympy.Lambda((I_, J_), sympy.Sum(GB[I_, C_] * VB[J_, C_], (C_, 1, D))),
            DS: sympy.Lambda(
                (I_, J_), AB[I_, J_] * (DA[I_, J_] - sympy.Sum(DA[I_, K_] * AB[I_, K_], (K_, 1, N)))
            ),
        },
    )


def attention_where(causal: bool) -> Words:
    """The definitions of :func:`attention_context`, for people."""
    mask = r" + M_{ij}" if causal else ""
    mask_k = r" + M_{ik}" if causal else ""
    out = words(
        "where ",
        m(r"L = \sum_{i,c} G_{ic} O_{ic}", "L = Σᵢ,c G_ic O_ic"),
        ", ",
        m(r"O_{ic} = \sum_j A_{ij} V_{jc}", "O_ic = Σⱼ A_ij V_jc"),
        ", ",
        m(
            rf"A_{{ij}} = e^{{S_{{ij}}{mask}}} / \sum_k e^{{S_{{ik}}{mask_k}}}",
            "A_ij = e^{S_ij"
            + (" + M_ij" if causal else "")
            + "}/Σₖ e^{S_ik"
            + (" + M_ik" if causal else "")
            + "}",
        ),
        ", ",
        m(r"S_{ij} = \sum_c Q_{ic} K_{jc} / \sqrt{d}", "S_ij = Σ_c Q_ic K_jc/√d"),
        ", ",
        m(r"dA_{ij} = \sum_c G_{ic} V_{jc}", "dA_ij = Σ_c G_ic V_jc"),
        ", ",
        m(
            r"dS_{ij} = A_{ij}\bigl(dA_{ij} - \sum_k dA_{ik} A_{ik}\bigr)",
            "dS_ij = A_ij(dA_ij − Σₖ dA_ik A_ik)",
        ),
        "; positions run over ",
        m(r"1, \dots, n", "1 … n"),
        ", the columns ",
        m("b, c", "b, c"),
        " over ",
        m(r"1, \dots, d", "1 … d"),
    )
    if causal:
        out += words(
            ", and ",
            m(r"M_{ij} = 0", "M_ij = 0"),
            " for ",
            m(r"j \le i", "j ≤ i"),
            ", else ",
            m(r"-\infty", "−∞"),
        )
    return out


def grad_v_general(a: sympy.Expr, b: sympy.Expr) -> sympy.Expr:
    """``∂L/∂V_ab = Σ_i A_ia G_ib`` (``dV = Aᵀ dO``)."""
    return sympy.Sum(AB[I_, a] * GB[I_, b], (I_, 1, N))


def grad_q_general(a: sympy.Expr, b: sympy.Expr) -> sympy.Expr:
    """``∂L/∂Q_ab = Σ_j dS_aj K_jb/√d`` (``dQ = dS K/√d``)."""
    return sympy.Sum(DS[a, J_] * KB[J_, b], (J_, 1, N)) / sympy.sqrt(D)


def grad_k_general(a: sympy.Expr, b: sympy.Expr) -> sympy.Expr:
    """``∂L/∂K_ab = Σ_i dS_ia Q_ib/√d`` (``dK = dSᵀ Q/√d``)."""
    return sympy.Sum(DS[I_, a] * QB[I_, b], (I_, 1, N)) / sympy.sqrt(D)


def _backward_proofs(causal: bool) -> list[Proof]:
    tag = "causal:" if causal else ""
    ctx = attention_context(causal)
    where = attention_where(causal)
    d = sympy.KroneckerDelta
    loss = ctx.definitions[LOSS]
    a_def = ctx.definitions[AB]
    dv = Proof(
        f"{tag}dV",
        sympy.Derivative(LOSS, VB[A_, B_]),
        grad_v_general(A_, B_),
        ctx,
        (
            Step("definition", sympy.Derivative(loss, VB[A_, B_])),
            Step(
                "sum-rule",
                sympy.Sum(
                    GB[I_, C_] * sympy.Sum(AB[I_, J_] * d(J_, A_) * d(C_, B_), (J_, 1, N)),
                    (C_, 1, D),
                    (I_, 1, N),
                ),
            ),
            Step("delta-sifting", grad_v_general(A_, B_)),
        ),
        where,
    )
    # dA: A taken as free entries, so L is linear in them.
    da_ctx = Context(ctx.ranges, {LOSS: loss, DA: ctx.definitions[DA]})
    da = Proof(
        f"{tag}dA",
        sympy.Derivative(LOSS, AB[R_, T_]),
        sympy.Sum(GB[R_, C_] * VB[T_, C_], (C_, 1, D)),
        da_ctx,
        (
            Step("definition", sympy.Derivative(loss, AB[R_, T_])),
            Step(
                "sum-rule",
                sympy.Sum(
                    GB[I_, C_] * sympy.Sum(d(I_, R_) * d(J_, T_) * VB[J_, C_], (J_, 1, N)),
                    (C_, 1, D),
                    (I_, 1, N),
                ),
            ),
            Step("delta-sifting", sympy.Sum(GB[R_, C_] * VB[T_, C_], (C_, 1, D))),
        ),
        words("with the weights ", m("A", "A"), " taken as free variables; ", *where),
    )
    # dS: S free, H the gradient arriving at A.
    hs = sympy.Sum(HB[I_, J_] * AB[I_, J_], (J_, 1, N), (I_, 1, N))
    ds_ctx = Context(ctx.ranges, {AB: a_def})
    dA_dS = d(I_, R_) * AB[I_, J_] * (d(J_, T_) - AB[I_, T_])
    rhs_s = AB[R_, T_] * (HB[R_, T_] - sympy.Sum(HB[R_, K_] * AB[R_, K_], (K_, 1, N)))
    ds = Proof(
        f"{tag}dS",
        sympy.Derivative(hs, SB[R_, T_]),
        rhs_s,
        ds_ctx,
        (
            Step(
                "sum-rule",
                sympy.Sum(
                    HB[I_, J_] * sympy.Derivative(AB[I_, J_], SB[R_, T_]), (J_, 1, N), (I_, 1, N)
                ),
            ),
            Step(
                "differentiation",
                sympy.Sum(HB[I_, J_] * dA_dS, (J_, 1, N), (I_, 1, N)),
                words("the softmax Jacobian of row ", m("i", "i")),
            ),
            Step(
                "delta-sifting",
                HB[R_, T_] * AB[R_, T_]
                - AB[R_, T_] * sympy.Sum(HB[R_, J_] * AB[R_, J_], (J_, 1, N)),
            ),
            Step("algebra", rhs_s),
        ),
        words(
            "with ",
            m(r"L = \sum_{i,j} H_{ij} A_{ij}", "L = Σᵢⱼ H_ij A_ij"),
            " for a fixed upstream gradient ",
            m("H", "H"),
            " and the scores ",
            m("S", "S"),
            " taken as free variables; ",
            *where,
        ),
    )
    out = [dv, da, ds]
    for key, var, rhs, via, sift_to in (
        (
            "dQ",
            QB,
            grad_q_general(A_, B_),
            sympy.Sum(
                sympy.Derivative(LOSS, SB[I_, J_])
                * sympy.Sum(d(I_, A_) * d(C_, B_) * KB[J_, C_], (C_, 1, D))
                / sympy.sqrt(D),
                (J_, 1, N),
                (I_, 1, N),
            ),
            sympy.Sum(sympy.Derivative(LOSS, SB[A_, J_]) * KB[J_, B_], (J_, 1, N)) / sympy.sqrt(D),
        ),
        (
            "dK",
            KB,
            grad_k_general(A_, B_),
            sympy.Sum(
                sympy.Derivative(LOSS, SB[I_, J_])
                * sympy.Sum(QB[I_, C_] * d(J_, A_) * d(C_, B_), (C_, 1, D))
                / sympy.sqrt(D),
                (J_, 1, N),
                (I_, 1, N),
            ),
            sympy.Sum(sympy.Derivative(LOSS, SB[I_, A_]) * QB[I_, B_], (I_, 1, N)) / sympy.sqrt(D),
        ),
    ):
        chain = sympy.Sum(
            sympy.Derivative(LOSS, SB[I_, J_]) * sympy.Derivative(SB[I_, J_], var[A_, B_]),
            (J_, 1, N),
            (I_, 1, N),
        )
        explicit = rhs
        for name in (DS, DA):
            explicit = explicit.replace(
                lambda e, name=name: isinstance(e, sympy.Indexed) and e.base == name,
                lambda e, name=name: ctx.definitions[name](*e.indices),
            )
        out.append(
            Proof(
                f"{tag}{key}",
                sympy.Derivative(LOSS, var[A_, B_]),
                rhs,
                ctx,
                (
                    Step(
                        "differentiation",
                        chain,
                        words("the chain rule through the scores ", m("S", "S")),
                    ),
                    Step("sum-rule", via),
                    Step("delta-sifting", sift_to),
                    Step(
                        "differentiation",
                        explicit,
                        words(
                            m(r"\partial L/\partial S = dS", "∂L/∂S = dS"),
                            ", as for ",
                            m("dS", "dS"),
                            " above",
                        ),
                    ),
                    Step("definition", rhs),
                ),
                where,
            )
        )
    return out


ATTENTION_BACKWARD = Derivation(
    name="attention-backward",
    title="Backpropagation through scaled dot-product attention",
    build=_backward_steps,
    sizes=(2, 3),
    size_help=f"sequence length (head width {D_HEAD})",
    min_size=1,
    proofs=lambda: [*_backward_proofs(False), *_backward_proofs(True)],
)

# --------------------------------------------------------------------------- causal, every n

U_, S_ = sympy.symbols("u s", integer=True)
OB = sympy.IndexedBase("O", real=True)


def causal_context() -> Context:
    """Row ``t`` of masked attention: ``O_tc = Σ_s A_ts V_sc``, ``A`` with the causal mask."""
    return Context(
        ranges={T_: (1, N), C_: (1, D), B_: (1, D), U_: (T_ + 1, N)},
        definitions={
            SB: sympy.Lambda(
                (I_, J_), sympy.Sum(QB[I_, K_] * KB[J_, K_], (K_, 1, D)) / sympy.sqrt(D)
            ),
            AB: sympy.Lambda(
                (I_, J_),
                sympy.exp(SB[I_, J_] + CausalMask(J_, I_))
                / sympy.Sum(sympy.exp(SB[I_, K_] + CausalMask(K_, I_)), (K_, 1, N)),
            ),
            OB: sympy.Lambda((I_, C_), sympy.Sum(AB[I_, S_] * VB[S_, C_], (S_, 1, N))),
        },
    )


CAUSAL_WHERE = words(
    "where ",
    m(r"O_{tc} = \sum_{s=1}^{n} A_{ts} V_{sc}", "O_tc = Σ_{s=1}^{n} A_ts V_sc"),
    ", ",
    m(
        r"A_{ts} = e^{S_{ts} + M_{ts}} / \sum_{k=1}^{n} e^{S_{tk} + M_{tk}}",
        "A_ts = e^{S_ts + M_ts}/Σₖ e^{S_tk + M_tk}",
    ),
    ", ",
    m(r"S_{ts} = \sum_{c} Q_{tc} K_{sc}/\sqrt{d}", "S_ts = Σ_c Q_tc K_sc/√d"),
    ", ",
    m(r"M_{ts} = 0", "M_ts = 0"),
    " for ",
    m(r"s \le t", "s ≤ t"),
    " and ",
    m(r"-\infty", "−∞"),
    " after; ",
    m(r"t \in \{1, \dots, n\}", "t ∈ {1, …, n}"),
    ", a later position ",
    m(r"u \in \{t + 1, \dots, n\}", "u ∈ {t + 1, …, n}"),
)


def stepwise_general(t: sympy.Expr, c: sympy.Expr) -> sympy.Expr:
    """Generation with a cache: ``Σ_{s≤t} e^{S_ts} V_sc / Σ_{k≤t} e^{S_tk}``."""
    return sympy.Sum(sympy.exp(SB[t, S_]) * VB[S_, c], (S_, 1, t)) / sympy.Sum(
        sympy.exp(SB[t, K_]), (K_, 1, t)
    )


def _parallel_proofs() -> list[Proof]:
    ctx = causal_context()
    masked = sympy.Sum(
        sympy.exp(SB[T_, S_] + CausalMask(S_, T_)) * VB[S_, C_], (S_, 1, N)
    ) / sympy.Sum(sympy.exp(SB[T_, K_] + CausalMask(K_, T_)), (K_, 1, N))
    kept = sympy.Sum(Upto(S_, T_) * sympy.exp(SB[T_, S_]) * VB[S_, C_], (S_, 1, N)) / sympy.Sum(
        Upto(K_, T_) * sympy.exp(SB[T_, K_]), (K_, 1, N)
    )
    parallel = Proof(
        "parallel-equals-stepwise",
        OB[T_, C_],
        stepwise_general(T_, C_),
        ctx,
        (
            Step("definition", masked),
            Step("causal-mask", kept),
            Step(
                "restrict-range",
                stepwise_general(T_, C_),
                words(
                    "which is row ",
                    m("t", "t"),
                    " computed from the cache of positions ",
                    m(r"s \le t", "s ≤ t"),
                ),
            ),
        ),
        CAUSAL_WHERE,
    )
    variables = (QB[U_, B_], KB[U_, B_], VB[U_, B_])
    future = Proof(
        "no-future-dependence",
        sympy.ImmutableMatrix([[sympy.Derivative(OB[T_, C_], v) for v in variables]]),
        sympy.zeros(1, 3),
        ctx,
        (
            Step(
                "lemma",
                sympy.ImmutableMatrix(
                    [[sympy.Derivative(stepwise_general(T_, C_), v) for v in variables]]
                ),
                lemma="parallel-equals-stepwise",
            ),
            Step(
                "differentiation",
                sympy.ImmutableMatrix(sympy.zeros(1, 3)),
                words(
                    "every ",
                    m(r"\delta_{su}", "δ_su"),
                    " with ",
                    m(r"s \le t < u", "s ≤ t < u"),
                    " is 0",
                ),
            ),
        ),
        CAUSAL_WHERE,
    )
    return [parallel, future]


CAUSAL_PARALLEL = Derivation(
    name="causal-parallel",
    title="Masked parallel attention equals step-by-step generation",
    build=_parallel_steps,
    sizes=(3,),
    size_help=f"sequence length (head width {D_HEAD})",
    min_size=1,
    proofs=lambda: _parallel_proofs(),
)


def attention_gradients_at(
    q: sympy.MatrixBase,
    k: sympy.MatrixBase,
    v: sympy.MatrixBase,
    g: sympy.MatrixBase,
    causal: bool = False,
) -> dict[str, sympy.ImmutableMatrix]:
    """The proved ``dQ``, ``dK``, ``dV`` of ``L = ⟨G, softmax(QKᵀ/√d [+ M])V⟩``, exactly.

    The general formulas (proved for every ``n`` and ``d``) at these entries:
    ``n × d`` matrices ``q``, ``k``, ``v`` and the upstream gradient ``g``.
    """
    n, d = q.shape
    ctx = attention_context(causal)
    arrays = {QB: q, KB: k, VB: v, GB: g}
    out = {}
    for key, general in (("dQ", grad_q_general), ("dK", grad_k_general), ("dV", grad_v_general)):
        out[key] = sympy.ImmutableMatrix(
            n,
            d,
            lambda a, b, general=general: instantiate(
                general(A_, B_), ctx, {N: n, D: d}, arrays, {A_: a + 1, B_: b + 1}
            ),
        )
    return out
