"""Relative position in sinusoidal encodings and in RoPE.

Sinusoidal encodings (Vaswani et al.): ``PE(p, 2i) = sin(p ω_i)``,
``PE(p, 2i+1) = cos(p ω_i)``, ``ω_i = 10000^{−2i/d}``. RoPE (Su et al.) rotates
each pair ``(x_{2i}, x_{2i+1})`` of a query or key at position ``m`` by ``m θ_i``
with the same frequencies.
"""

from __future__ import annotations

import sympy

from symtf.derive.core import Derivation, Identity

P, K, W = sympy.symbols("p k omega", real=True)
M_, N_, T_ = sympy.symbols("m n t", real=True)


def frequencies(d: int) -> list[sympy.Expr]:
    """``ω_i = 10000^{−2i/d}`` for ``i = 0 … d/2 − 1``."""
    return [sympy.Integer(10000) ** sympy.Rational(-2 * i, d) for i in range(d // 2)]


def rotation(angle: sympy.Expr) -> sympy.ImmutableMatrix:
    """The 2 × 2 rotation ``[[cos, −sin], [sin, cos]]``."""
    c, s = sympy.cos(angle), sympy.sin(angle)
    return sympy.ImmutableMatrix([[c, -s], [s, c]])


def pe_shift(angle: sympy.Expr) -> sympy.ImmutableMatrix:
    """Textbook ``[sin(a+b), cos(a+b)]ᵀ = [[cos b, sin b], [−sin b, cos b]] [sin a, cos a]ᵀ``."""
    return rotation(-angle)


def block_diag(blocks: list[sympy.MatrixBase]) -> sympy.ImmutableMatrix:
    """Blocks down the diagonal."""
    return sympy.ImmutableMatrix(sympy.diag(*blocks))


def sinusoidal(pos: sympy.Expr, d: int) -> sympy.ImmutableMatrix:
    """The column ``PE(pos)`` of width ``d``, interleaved ``sin, cos`` per frequency."""
    out = []
    for w in frequencies(d):
        out += [sympy.sin(pos * w), sympy.cos(pos * w)]
    return sympy.ImmutableMatrix(d, 1, out)


def rope(x: sympy.MatrixBase, pos: sympy.Expr) -> sympy.ImmutableMatrix:
    """RoPE of a column ``x`` at position ``pos``: pair ``i`` rotated by ``pos·θ_i``."""
    d = x.rows
    return sympy.ImmutableMatrix(block_diag([rotation(pos * w) for w in frequencies(d)]) * x)


def relative_rotation(delta: sympy.Expr, d: int) -> sympy.ImmutableMatrix:
    """Textbook ``R_{Δ}``: the block rotation by ``Δ·θ_i`` (``R_mᵀ R_n = R_{n−m}``)."""
    return block_diag([rotation(delta * w) for w in frequencies(d)])


def _sinusoidal_steps(n: int | None) -> list[Identity]:
    assert n is not None
    d = 2 * n
    pair = sympy.ImmutableMatrix([sympy.sin((P + K) * W), sympy.cos((P + K) * W)])
    shifted = pe_shift(K * W) * sympy.ImmutableMatrix([sympy.sin(P * W), sympy.cos(P * W)])
    full = block_diag([pe_shift(K * w) for w in frequencies(d)])
    return [
        Identity(
            "pair-rotation",
            r"\begin{pmatrix}\sin((p+k)\omega)\\ \cos((p+k)\omega)\end{pmatrix}"
            r" = \begin{pmatrix}\cos k\omega & \sin k\omega\\ -\sin k\omega & \cos k\omega\end{pmatrix}"
            r"\begin{pmatrix}\sin p\omega\\ \cos p\omega\end{pmatrix}",
            "[sin((p+k)ω), cos((p+k)ω)]ᵀ = [[cos kω, sin kω], [−sin kω, cos kω]]·[sin pω, cos pω]ᵀ",
            "angle-addition formulas for sin and cos",
            pair,
            shifted,
            sized=False,
        ),
        Identity(
            "is-rotation",
            r"R(k\omega)^{\top} R(k\omega) = I,\quad \det R(k\omega) = 1",
            "R(kω)ᵀR(kω) = I, det R(kω) = 1",
            "cos^2 + sin^2 = 1: a rotation, not a stretch",
            sympy.ImmutableMatrix.vstack(
                pe_shift(K * W).T * pe_shift(K * W),
                sympy.ImmutableMatrix([[pe_shift(K * W).det(), 0]]),
            ),
            sympy.ImmutableMatrix([[1, 0], [0, 1], [1, 0]]),
            sized=False,
        ),
        Identity(
            "whole-vector",
            r"PE(p + k) = \operatorname{blockdiag}_i R(k\omega_i)\,PE(p),"
            r"\quad \omega_i = 10000^{-2i/d}",
            "PE(p + k) = blockdiag_i R(kωᵢ)·PE(p),  ωᵢ = 10000^(−2i/d)",
            "the pair rotation for every frequency; the matrix depends on k, not on p",
            sinusoidal(P + K, d),
            full * sinusoidal(P, d),
        ),
        Identity(
            "independent-of-position",
            r"\frac{\partial}{\partial p}\Bigl(PE(p+k)^{\top} PE(p)\Bigr) = 0",
            "∂/∂p (PE(p+k)·PE(p)) = 0",
            "PE(p+k).PE(p) = sum_i cos(k omega_i): a function of the offset k alone",
            sympy.Derivative((sinusoidal(P + K, d).T * sinusoidal(P, d))[0, 0], P),
            sympy.S.Zero,
        ),
    ]


def _rope_steps(n: int | None) -> list[Identity]:
    assert n is not None
    d = 2 * n
    q = sympy.ImmutableMatrix(d, 1, sympy.symbols(f"q_1:{d + 1}", real=True))
    k = sympy.ImmutableMatrix(d, 1, sympy.symbols(f"k_1:{d + 1}", real=True))
    score = (rope(q, M_).T * rope(k, N_))[0, 0]
    return [
        Identity(
            "rotations-compose",
            r"R(m\theta)^{\top} R(n\theta) = R((n - m)\theta)",
            "R(mθ)ᵀR(nθ) = R((n − m)θ)",
            "rotations of the plane compose by adding angles",
            rotation(M_ * W).T * rotation(N_ * W),
            rotation((N_ - M_) * W),
            sized=False,
        ),
        Identity(
            "relative-score",
            r"(R_m q)^{\top}(R_n k) = q^{\top} R_{n-m}\, k",
            "(R_m q)·(R_n k) = qᵀ R_{n−m} k",
            "block by block, the rotations compose; only n - m is left",
            sympy.ImmutableMatrix([[score]]),
            q.T * relative_rotation(N_ - M_, d) * k,
        ),
        Identity(
            "shift-invariant",
            r"\Bigl(\frac{\partial}{\partial m} + \frac{\partial}{\partial n}\Bigr)"
            r"(R_m q)^{\top}(R_n k) = 0",
            "(∂/∂m + ∂/∂n)(R_m q)·(R_n k) = 0",
            "moving both positions together does not change the score",
            sympy.Derivative(score, M_) + sympy.Derivative(score, N_),
            sympy.S.Zero,
        ),
        Identity(
            "shift",
            r"(R_{m+t} q)^{\top}(R_{n+t} k) = (R_m q)^{\top}(R_n k)",
            "(R_{m+t} q)·(R_{n+t} k) = (R_m q)·(R_n k)",
            "the same statement for a finite shift t",
            (rope(q, M_ + T_).T * rope(k, N_ + T_))[0, 0],
            score,
        ),
    ]


SINUSOIDAL_RELATIVE = Derivation(
    name="sinusoidal-relative",
    title="Sinusoidal encodings: a shift is a rotation",
    build=_sinusoidal_steps,
    sizes=(2,),
    size_help="number of frequency pairs (d_model = 2n)",
    min_size=1,
)

ROPE_RELATIVE = Derivation(
    name="rope-relative",
    title="RoPE: scores depend only on the offset",
    build=_rope_steps,
    sizes=(1, 2),
    size_help="number of rotated pairs (d = 2n)",
    min_size=1,
)
