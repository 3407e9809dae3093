"""Relative position in sinusoidal encodings and in RoPE.

Sinusoidal encodings (Vaswani et al.): ``PE(p, 2i) = sin(p ω_i)``,
``PE(p, 2i+1) = cos(p ω_i)``, ``ω_i = 10000^{−2i/d}``. RoPE (Su et al.) rotates
each pair ``(x_{2i}, x_{2i+1})`` of a query or key at position ``m`` by ``m θ_i``
with the same frequencies.
"""

from __future__ import annotations

import sympy

from symtf.derive.core import Derivation, Identity
from symtf.derive.index import Context
from symtf.derive.proof import Proof, Step
from symtf.derive.words import m, words

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
            words(
                "the angle-addition formulas for ", m(r"\sin", "sin"), " and ", m(r"\cos", "cos")
            ),
            pair,
            shifted,
            sized=False,
        ),
        Identity(
            "is-rotation",
            r"R(k\omega)^{\top} R(k\omega) = I,\quad \det R(k\omega) = 1",
            "R(kω)ᵀR(kω) = I, det R(kω) = 1",
            words(m(r"\cos^2 + \sin^2 = 1", "cos² + sin² = 1"), ": a rotation, not a stretch"),
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
            words(
                "the pair rotation for every frequency; the matrix depends on ",
                m("k", "k"),
                ", not on ",
                m("p", "p"),
            ),
            sinusoidal(P + K, d),
            full * sinusoidal(P, d),
        ),
        Identity(
            "independent-of-position",
            r"\frac{\partial}{\partial p}\Bigl(PE(p+k)^{\top} PE(p)\Bigr) = 0",
            "∂/∂p (PE(p+k)·PE(p)) = 0",
            words(
                m(r"PE(p+k)^{\top} PE(p) = \sum_i \cos k\omega_i", "PE(p+k)·PE(p) = Σᵢ cos kωᵢ"),
                ": a function of the offset ",
                m("k", "k"),
                " alone",
            ),
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
            words("rotations of the plane compose by adding angles"),
            rotation(M_ * W).T * rotation(N_ * W),
            rotation((N_ - M_) * W),
            sized=False,
        ),
        Identity(
            "relative-score",
            r"(R_m q)^{\top}(R_n k) = q^{\top} R_{n-m}\, k",
            "(R_m q)·(R_n k) = qᵀ R_{n−m} k",
            words("block by block, the rotations compose; only ", m("n - m", "n − m"), " is left"),
            sympy.ImmutableMatrix([[score]]),
            q.T * relative_rotation(N_ - M_, d) * k,
        ),
        Identity(
            "shift-invariant",
            r"\Bigl(\frac{\partial}{\partial m} + \frac{\partial}{\partial n}\Bigr)"
            r"(R_m q)^{\top}(R_n k) = 0",
            "(∂/∂m + ∂/∂n)(R_m q)·(R_n k) = 0",
            words("moving both positions together does not change the score"),
            sympy.Derivative(score, M_) + sympy.Derivative(score, N_),
            sympy.S.Zero,
        ),
        Identity(
            "shift",
            r"(R_{m+t} q)^{\top}(R_{n+t} k) = (R_m q)^{\top}(R_n k)",
            "(R_{m+t} q)·(R_{n+t} k) = (R_m q)·(R_n k)",
            words("the same statement for a finite shift ", m("t", "t")),
            (rope(q, M_ + T_).T * rope(k, N_ + T_))[0, 0],
            score,
        ),
    ]


# --------------------------------------------------------------------------- every n

H = sympy.Symbol("h", integer=True, positive=True)
I_ = sympy.Symbol("i", integer=True)
OMEGA = sympy.IndexedBase("omega", positive=True)
THETA = sympy.IndexedBase("theta", positive=True)
QV = sympy.IndexedBase("q", real=True)
KV = sympy.IndexedBase("k", real=True)


def pairs_context() -> Context:
    """Pair ``i`` of ``h`` frequency pairs (``d = 2h``), ``i = 0 … h − 1``."""
    return Context(ranges={I_: (0, H - 1)})


PAIRS_WHERE = words(
    "for every pair ",
    m(r"i \in \{0, \dots, h - 1\}", "i ∈ {0, …, h − 1}"),
    " of a width ",
    m(r"d = 2h", "d = 2h"),
    ", with any frequencies ",
    m(r"\omega_i", "ωᵢ"),
)


def _pe_pair(pos: sympy.Expr) -> sympy.ImmutableMatrix:
    return sympy.ImmutableMatrix([sympy.sin(pos * OMEGA[I_]), sympy.cos(pos * OMEGA[I_])])


def _sinusoidal_proofs() -> list[Proof]:
    ctx = pairs_context()
    w = OMEGA[I_]
    sp, cp, sk, ck = sympy.sin(P * w), sympy.cos(P * w), sympy.sin(K * w), sympy.cos(K * w)
    vector = Proof(
        "whole-vector",
        _pe_pair(P + K),
        pe_shift(K * w) * _pe_pair(P),
        ctx,
        (
            Step("angle-addition", sympy.ImmutableMatrix([sp * ck + cp * sk, cp * ck - sp * sk])),
            Step(
                "algebra",
                pe_shift(K * w) * _pe_pair(P),
                words(
                    "a rotation of ", m(r"(\sin p\omega_i, \cos p\omega_i)", "(sin pωᵢ, cos pωᵢ)")
                ),
            ),
        ),
        PAIRS_WHERE,
    )
    term = sympy.sin((P + K) * w) * sp + sympy.cos((P + K) * w) * cp
    dot = sympy.Sum(term, (I_, 0, H - 1))
    position = Proof(
        "independent-of-position",
        sympy.Derivative(dot, P),
        sympy.S.Zero,
        ctx,
        (
            Step("angle-addition", sympy.Derivative(sympy.Sum(ck, (I_, 0, H - 1)), P)),
            Step("differentiation", sympy.S.Zero, words("no term depends on ", m("p", "p"))),
        ),
        words(
            m(
                r"PE(p)^{\top} PE(p') = \sum_{i=0}^{h-1} \bigl(\sin p\omega_i \sin p'\omega_i"
                r" + \cos p\omega_i \cos p'\omega_i\bigr)",
                "PE(p)·PE(p′) = Σᵢ (sin pωᵢ sin p′ωᵢ + cos pωᵢ cos p′ωᵢ)",
            ),
            ", for any width ",
            m(r"d = 2h", "d = 2h"),
        ),
    )
    return [vector, position]


def _rope_score(m_: sympy.Expr, n_: sympy.Expr) -> sympy.Expr:
    t = THETA[I_]
    q0, q1, k0, k1 = QV[2 * I_], QV[2 * I_ + 1], KV[2 * I_], KV[2 * I_ + 1]
    cm, sm, cn, sn = sympy.cos(m_ * t), sympy.sin(m_ * t), sympy.cos(n_ * t), sympy.sin(n_ * t)
    return sympy.Sum(
        (cm * q0 - sm * q1) * (cn * k0 - sn * k1) + (sm * q0 + cm * q1) * (sn * k0 + cn * k1),
        (I_, 0, H - 1),
    )


def _rope_relative(delta: sympy.Expr) -> sympy.Expr:
    t = THETA[I_]
    q0, q1, k0, k1 = QV[2 * I_], QV[2 * I_ + 1], KV[2 * I_], KV[2 * I_ + 1]
    c, s = sympy.cos(delta * t), sympy.sin(delta * t)
    return sympy.Sum(q0 * (c * k0 - s * k1) + q1 * (s * k0 + c * k1), (I_, 0, H - 1))


ROPE_WHERE = words(
    m(
        r"(R_m q)^{\top}(R_n k) = \sum_{i=0}^{h-1} (R(m\theta_i) q^{(i)})^{\top} R(n\theta_i) k^{(i)}",
        "(R_m q)·(R_n k) = Σᵢ (R(mθᵢ)q⁽ⁱ⁾)·(R(nθᵢ)k⁽ⁱ⁾)",
    ),
    " with ",
    m(r"q^{(i)} = (q_{2i}, q_{2i+1})", "q⁽ⁱ⁾ = (q₂ᵢ, q₂ᵢ₊₁)"),
    ", for any width ",
    m(r"d = 2h", "d = 2h"),
)


def _rope_proofs() -> list[Proof]:
    ctx = pairs_context()
    t = THETA[I_]
    q0, q1, k0, k1 = QV[2 * I_], QV[2 * I_ + 1], KV[2 * I_], KV[2 * I_ + 1]
    cm, sm, cn, sn = sympy.cos(M_ * t), sympy.sin(M_ * t), sympy.cos(N_ * t), sympy.sin(N_ * t)
    grouped = sympy.Sum(
        (q0 * k0 + q1 * k1) * (cm * cn + sm * sn) + (q1 * k0 - q0 * k1) * (cm * sn - sm * cn),
        (I_, 0, H - 1),
    )
    rel = Proof(
        "relative-score",
        _rope_score(M_, N_),
        _rope_relative(N_ - M_),
        ctx,
        (
            Step("algebra", grouped),
            Step(
                "angle-addition",
                sympy.Sum(
                    (q0 * k0 + q1 * k1) * sympy.cos((N_ - M_) * t)
                    + (q1 * k0 - q0 * k1) * sympy.sin((N_ - M_) * t),
                    (I_, 0, H - 1),
                ),
            ),
            Step("algebra", _rope_relative(N_ - M_)),
        ),
        ROPE_WHERE,
    )
    score = _rope_score(M_, N_)
    invariant = Proof(
        "shift-invariant",
        sympy.Derivative(score, M_) + sympy.Derivative(score, N_),
        sympy.S.Zero,
        ctx,
        (
            Step(
                "lemma",
                sympy.Derivative(_rope_relative(N_ - M_), M_)
                + sympy.Derivative(_rope_relative(N_ - M_), N_),
                lemma="relative-score",
            ),
            Step(
                "chain-rule",
                sympy.S.Zero,
                words(
                    m(r"\partial_m f(n - m) = -\partial_n f(n - m)", "∂ₘ f(n − m) = −∂ₙ f(n − m)"),
                ),
            ),
        ),
        ROPE_WHERE,
    )
    shift = Proof(
        "shift",
        _rope_score(M_ + T_, N_ + T_),
        score,
        ctx,
        (
            Step(
                "angle-addition",
                _rope_relative(N_ - M_),
                words(m(r"(n + t) - (m + t) = n - m", "(n + t) − (m + t) = n − m")),
            ),
            Step("angle-addition", score),
        ),
        ROPE_WHERE,
    )
    return [rel, invariant, shift]


SINUSOIDAL_RELATIVE = Derivation(
    name="sinusoidal-relative",
    title="Sinusoidal encodings: a shift is a rotation",
    build=_sinusoidal_steps,
    sizes=(2,),
    size_help="number of frequency pairs (d_model = 2n)",
    min_size=1,
    proofs=lambda: _sinusoidal_proofs(),
)

ROPE_RELATIVE = Derivation(
    name="rope-relative",
    title="RoPE: scores depend only on the offset",
    build=_rope_steps,
    sizes=(1, 2),
    size_help="number of rotated pairs (d = 2n)",
    min_size=1,
    proofs=lambda: _rope_proofs(),
)
