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
                "O = A V is linear in V; L = <dO, O>",
                gradient(loss, v),
                grad_v(a, d_o),
            ),
            (
                "dA",
                r"\frac{\partial L}{\partial A} = dO\,V^{\top}",
                "∂L/∂A = dO Vᵀ",
                "O = A V is linear in A (A free here)",
                gradient(pairing(d_o, a_free * v), a_free),
                grad_a(d_o, v),
            ),
            (
                "dS",
                r"\frac{\partial L}{\partial S} = A \circ \bigl(dA - \operatorname{rowsum}(dA \circ A)\bigr)",
                "∂L/∂S = A ∘ (dA − rowsum(dA ∘ A))",
                "softmax Jacobian diag(a) - a a^T applied to each row (S and dA free here)",
                gradient(pairing(d_a_free, a_of_s), s_free),
                grad_s(a_of_s, d_a_free),
            ),
            (
                "dQ",
                r"\frac{\partial L}{\partial Q} = \frac{dS\,K}{\sqrt{d}}",
                "∂L/∂Q = dS K/√d",
                "S = Q K^T / sqrt(d); chain rule through the whole forward pass",
                gradient(loss, q),
                grad_q(d_s_full, k),
            ),
            (
                "dK",
                r"\frac{\partial L}{\partial K} = \frac{dS^{\top} Q}{\sqrt{d}}",
                "∂L/∂K = dSᵀ Q/√d",
                "S^T = K Q^T / sqrt(d); chain rule through the whole forward pass",
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
            "the mask gives exp(-oo) = 0 weight to every position after t, which is exactly "
            "leaving it out of the cache",
            parallel,
            stepwise,
        ),
        Identity(
            "no-future-dependence",
            r"\frac{\partial O_t}{\partial (q_s, k_s, v_s)} = 0 \quad (s > t)",
            "∂O_t/∂(q_s, k_s, v_s) = 0 for s > t",
            "teacher forcing computes every row at once, yet no row reads a later position",
            sympy.ImmutableMatrix(1, len(future), future)
            if future
            else sympy.ImmutableMatrix([[0]]),
            sympy.zeros(1, len(future)) if future else sympy.ImmutableMatrix([[0]]),
        ),
    ]


ATTENTION_BACKWARD = Derivation(
    name="attention-backward",
    title="Backpropagation through scaled dot-product attention",
    build=_backward_steps,
    sizes=(2, 3),
    size_help=f"sequence length (head width {D_HEAD})",
    min_size=1,
)

CAUSAL_PARALLEL = Derivation(
    name="causal-parallel",
    title="Masked parallel attention equals step-by-step generation",
    build=_parallel_steps,
    sizes=(3,),
    size_help=f"sequence length (head width {D_HEAD})",
    min_size=1,
)
