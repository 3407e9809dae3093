"""An independent reference for the bundled step derivations, in plain mpmath.

Nothing here imports symtf or SymPy. Each ``steps_*`` function below rebuilds
one bundled ``derivations/steps_*.toml`` example from its own copy of the given
numbers (exact :class:`~fractions.Fraction` values, cross-checked against the
TOML file by the tests) with list-of-lists arithmetic at :data:`DPS` digits,
and returns every step the derivation names, keyed by that name.

Tensors are nested Python lists; a scalar step is a bare number. The helpers
are deliberately the textbook formulas, written out loop by loop.
"""

from __future__ import annotations

from collections.abc import Callable
from decimal import Decimal
from fractions import Fraction
from typing import Any

from mpmath import mp, mpf

DPS = 60
"""Working precision in significant decimal digits."""

F = Fraction
Tensor = Any


def M(x: Any) -> mpf:
    """An mpf from a Fraction, int or mpf (mpmath does not take Fractions directly)."""
    if isinstance(x, Fraction):
        return mpf(x.numerator) / x.denominator
    return mpf(x)


def _m(text: str) -> list[list[Fraction]]:
    """Rows of a matrix written as whitespace-separated decimals."""
    return [[F(c) for c in line.split()] for line in text.strip().splitlines()]


def _v(text: str) -> list[Fraction]:
    return [F(c) for c in text.split()]


def _map(t: Tensor, fn: Callable[[Any], Any]) -> Tensor:
    return [_map(e, fn) for e in t] if isinstance(t, list) else fn(t)


def _zip(a: Tensor, b: Tensor, fn: Callable[[Any, Any], Any]) -> Tensor:
    if isinstance(a, list) and isinstance(b, list):
        return [_zip(x, y, fn) for x, y in zip(a, b, strict=True)]
    return fn(a, b)


def matmul(a: list[list[Any]], b: list[list[Any]]) -> list[list[Any]]:
    """Matrix product of two 2-D lists."""
    return [
        [sum(a[i][k] * b[k][j] for k in range(len(b))) for j in range(len(b[0]))]
        for i in range(len(a))
    ]


def transpose(a: list[list[Any]]) -> list[list[Any]]:
    return [list(col) for col in zip(*a, strict=True)]


def softmax_row(row: list[Any]) -> list[mpf]:
    """exp(r_i) / Σ exp(r_j), with −∞ entries giving 0."""
    finite = [M(r) for r in row if not (isinstance(r, mpf) and mp.isinf(r))]
    top = max(finite)
    e = [mp.exp(M(r) - top) if not (isinstance(r, mpf) and mp.isinf(r)) else mpf(0) for r in row]
    s = sum(e)
    return [x / s for x in e]


def sigmoid(z: Any) -> mpf:
    return 1 / (1 + mp.exp(-M(z)))


# --- 1. self-attention with no projections -----------------------------------------

NOPROJ_X = _m("""
1 0 1 0
0 2 0 1
1 1 0 0.5
""")


def steps_self_attention_noproj() -> dict[str, Tensor]:
    x = NOPROJ_X
    scores = matmul(x, transpose(x))
    scaled = _map(scores, lambda s: s / 2)  # ÷ √4
    alpha = [softmax_row(r) for r in scaled]
    out = matmul(alpha, _map(x, M))
    return {"scores": scores, "scaled": scaled, "alpha": alpha, "out": out}


# --- 2. given Q, K, V; causal mask before the scaling; dropout -----------------------

MASKED_Q = _m("""
1 0
0.5 1
1 1
""")
MASKED_K = _m("""
1 1
0 1
2 0
""")
MASKED_V = _m("""
1 0
0 2
1 1
""")
MASKED_KEEP = _m("""
1 1 1
0 1 1
1 1 0
""")
MASKED_P = F(1, 2)


def steps_masked_dropout() -> dict[str, Tensor]:
    scores = matmul(MASKED_Q, transpose(MASKED_K))
    ninf = mpf("-inf")
    masked = [[s if j <= i else ninf for j, s in enumerate(r)] for i, r in enumerate(scores)]
    scaled = [
        [M(s) / mp.sqrt(2) if j <= i else ninf for j, s in enumerate(r)]
        for i, r in enumerate(masked)
    ]
    alpha = [softmax_row(r) for r in scaled]
    dropped = [
        [a * M(k) / M(1 - MASKED_P) for a, k in zip(ar, kr, strict=True)]
        for ar, kr in zip(alpha, MASKED_KEEP, strict=True)
    ]
    z = matmul(dropped, _map(MASKED_V, M))
    return {
        "scores": scores,
        "masked": masked,
        "scaled": scaled,
        "alpha": alpha,
        "dropped": dropped,
        "z": z,
    }


# --- 3. FFN, sigmoid, binary cross-entropy ---------------------------------------------

BCE_X = _m("""
1 -1 0.5
0 2 1
""")
BCE_W1 = _m("""
0.5 -1 0.25 1
1 0.5 -0.5 0
-1 1 1 0.5
""")
BCE_B1 = _v("0 0.5 -0.25 0")
BCE_W2 = _m("""
1
-0.5
0.75
0.25
""")
BCE_B2 = F("-0.1")
BCE_Y = [F(1), F(0)]


def steps_ffn_bce() -> dict[str, Tensor]:
    pre = [[h + b for h, b in zip(r, BCE_B1, strict=True)] for r in matmul(BCE_X, BCE_W1)]
    h = _map(pre, lambda v: max(v, F(0)))
    z = [[r[0] + BCE_B2] for r in matmul(h, BCE_W2)]
    p = [[sigmoid(r[0])] for r in z]
    loss = -sum(
        M(y) * mp.log(pr[0]) + M(1 - y) * mp.log(1 - pr[0]) for y, pr in zip(BCE_Y, p, strict=True)
    ) / len(BCE_Y)
    return {"pre": pre, "h": h, "z": z, "p": p, "loss": loss}


# --- 4. LayerNorm with the unbiased standard deviation --------------------------------

LN_X = _m("""
2 4 4 6
1 0 3 -2
""")


def steps_layernorm_unbiased() -> dict[str, Tensor]:
    n = len(LN_X[0])
    mu = [[sum(r) / n] for r in LN_X]
    var = [[sum((v - m[0]) ** 2 for v in r) / (n - 1)] for r, m in zip(LN_X, mu, strict=True)]
    std = [[mp.sqrt(M(v[0]))] for v in var]
    y = [[M(v - m[0]) / s[0] for v in r] for r, m, s in zip(LN_X, mu, std, strict=True)]
    return {"mu": mu, "variance": var, "sigma": std, "y": y, "normed": y}


# --- 5. a sinusoidal positional table on its own ---------------------------------------


def steps_sinusoidal_table() -> dict[str, Tensor]:
    n, d, base = 4, 6, 10000
    pe = []
    for p in range(n):
        row = []
        for i in range(d // 2):
            angle = mpf(p) / mpf(base) ** (mpf(2 * i) / d)
            row += [mp.sin(angle), mp.cos(angle)]
        pe.append(row)
    return {"pe": pe}


# --- 6. a toy RoPE: every pair turns by 0.1 × position ---------------------------------

ROPE_Q = _m("""
1 0 0 1
0.5 0.5 1 0
1 1 -1 0
""")
ROPE_K = _m("""
0 1 1 0
1 0 0.5 0.5
-1 1 0 1
""")


def _rot(x: list[list[Fraction]], step: Fraction) -> list[list[mpf]]:
    out = []
    for t, row in enumerate(x):
        th = M(step) * t
        c, s = mp.cos(th), mp.sin(th)
        new = []
        for i in range(0, len(row), 2):
            a, b = row[i], row[i + 1]
            new += [M(a) * c - M(b) * s, M(a) * s + M(b) * c]
        out.append(new)
    return out


def steps_rope_one_angle() -> dict[str, Tensor]:
    q_rot = _rot(ROPE_Q, F("0.1"))
    k_rot = _rot(ROPE_K, F("0.1"))
    scores = matmul(q_rot, transpose(k_rot))
    return {"q_rot": q_rot, "k_rot": k_rot, "scores": scores}


# --- 7. cross-attention on its own, d_v ≠ d_k -----------------------------------------

CROSS_H = _m("""
1 0 1
0 1 -1
""")
CROSS_E = _m("""
1 1 0
0 1 1
1 0 1
""")
CROSS_WQ = _m("""
1 0
0 1
1 1
""")
CROSS_WK = _m("""
0.5 0
0 0.5
1 -1
""")
CROSS_WV = _m("""
1 0 0 1
0 1 0 -1
0 0 1 2
""")


def steps_cross_attention() -> dict[str, Tensor]:
    q = matmul(CROSS_H, CROSS_WQ)
    k = matmul(CROSS_E, CROSS_WK)
    v = matmul(CROSS_E, CROSS_WV)
    scores = matmul(q, transpose(k))
    a = [softmax_row([M(s) / mp.sqrt(2) for s in r]) for r in scores]
    c = matmul(a, _map(v, M))
    return {"q": q, "k": k, "v": v, "scores": scores, "a": a, "c": c}


# --- 8. batch × heads, split with view/transpose ---------------------------------------

BATCH_X = [
    _m("""
1 0 1 0
0 1 0 1
1 1 0 0
"""),
    _m("""
0 0 1 1
1 -1 0 0
0.5 0.5 0.5 0.5
"""),
]
BATCH_WQ = _m("""
1 0 0 0
0 1 0 0
0 0 0.5 0
0 0 0 2
""")
BATCH_WK = _m("""
0 1 0 0
1 0 0 0
0 0 1 0
0 0 1 1
""")
BATCH_WV = _m("""
1 0 0 0
0 0 1 0
0 1 0 0
0 0 0 1
""")
BATCH_HEADS = 2


def _split(x: list[list[Any]], h: int) -> list[list[list[Any]]]:
    dh = len(x[0]) // h
    return [[row[j * dh : (j + 1) * dh] for row in x] for j in range(h)]


def steps_batch_heads() -> dict[str, Tensor]:
    q, k, v, s, a, z, out = [], [], [], [], [], [], []
    for x in BATCH_X:
        qb = _split(matmul(x, BATCH_WQ), BATCH_HEADS)
        kb = _split(matmul(x, BATCH_WK), BATCH_HEADS)
        vb = _split(matmul(x, BATCH_WV), BATCH_HEADS)
        sb = [
            _map(matmul(qh, transpose(kh)), lambda e: M(e) / mp.sqrt(2))
            for qh, kh in zip(qb, kb, strict=True)
        ]
        ab = [[softmax_row(r) for r in sh] for sh in sb]
        zb = [matmul(ah, _map(vh, M)) for ah, vh in zip(ab, vb, strict=True)]
        merged = [[e for j in range(BATCH_HEADS) for e in zb[j][t]] for t in range(len(x))]
        for acc, val in ((q, qb), (k, kb), (v, vb), (s, sb), (a, ab), (z, zb), (out, merged)):
            acc.append(val)
    return {"q": q, "k": k, "v": v, "s": s, "a": a, "z": z, "out": out}


# --- 9. a recurrent decoder state ------------------------------------------------------

REC_E = _m("""
1 0
0 1
1 1
-1 0.5
""")
REC_K = _m("""
1 0
0 1
1 -1
""")
REC_V = _m("""
2 0
0 2
1 1
""")
REC_TOK = [2, 0, 3, 1]
REC_T = 3


def steps_recurrent_state() -> dict[str, Tensor]:
    out: dict[str, Tensor] = {}
    ctx: list[Any] = [F(0), F(0)]
    out["ctx[0]"] = ctx
    for t in range(1, REC_T + 1):
        e = REC_E[REC_TOK[t]]
        state = [M(F(1, 2) * a) + M(F(1, 2)) * M(b) for a, b in zip(e, ctx, strict=True)]
        w = softmax_row(
            [sum(M(kk) * M(ss) for kk, ss in zip(krow, state, strict=True)) for krow in REC_K]
        )
        ctx = [sum(w[i] * M(REC_V[i][j]) for i in range(len(w))) for j in range(2)]
        out[f"state[{t}]"] = state
        out[f"ctx[{t}]"] = ctx
    return out


# --- backward passes: gradients by the textbook formulas, loop by loop ---------------------

ATTB_Q = _m("""
0.2 -0.4
0.6 0.1
-0.3 0.5
""")
ATTB_K = _m("""
0.5 0.3
-0.2 0.8
0.4 -0.6
""")
ATTB_V = _m("""
1.0 -0.5
0.3 0.7
-0.8 0.2
""")
ATTB_DO = _m("""
0.1 -0.2
-0.3 0.4
0.5 0.2
""")


def steps_attention_backward() -> dict[str, Tensor]:
    """Q, K, V → S = QKᵀ/√2 → A = softmax(S) → O = AV, and back from dO."""
    root = mp.sqrt(2)
    s = [[M(x) / root for x in r] for r in matmul(ATTB_Q, transpose(ATTB_K))]
    a = [softmax_row(r) for r in s]
    o = matmul(a, [[M(x) for x in r] for r in ATTB_V])
    d_o = [[M(x) for x in r] for r in ATTB_DO]
    dv = matmul(transpose(a), d_o)
    da = matmul(d_o, transpose([[M(x) for x in r] for r in ATTB_V]))
    ds = [
        [ai[j] * (dai[j] - sum(ai[k] * dai[k] for k in range(len(ai)))) for j in range(len(ai))]
        for ai, dai in zip(a, da, strict=True)
    ]
    dq = [[x / root for x in r] for r in matmul(ds, [[M(x) for x in r] for r in ATTB_K])]
    dk = [[x / root for x in r] for r in matmul(transpose(ds), [[M(x) for x in r] for r in ATTB_Q])]
    loss = sum(x * y for ro, rd in zip(o, d_o, strict=True) for x, y in zip(ro, rd, strict=True))
    return {"S": s, "A": a, "O": o, "L": loss, "dV": dv, "dA": da, "dS": ds, "dQ": dq, "dK": dk}


LNB_X = _m("""
1.0 2.0 -1.0 0.5
0.3 -0.7 1.5 2.1
""")
LNB_GAMMA = _v("1.5 0.5 -1.0 2.0")
LNB_BETA = _v("0.1 0.0 -0.2 0.3")
LNB_G = _m("""
0.2 -0.1 0.4 0.3
-0.5 0.6 0.1 -0.2
""")
LNB_EPS = F(1, 100000)


def steps_layernorm_backward() -> dict[str, Tensor]:
    """LayerNorm over each row, and back: dγ = Σ G·x̂, dβ = Σ G, dx = (dx̂ − mean dx̂ − x̂·mean(dx̂·x̂))/σ."""
    d = len(LNB_X[0])
    out: dict[str, Tensor] = {"mu": [], "xc": [], "sigma2": [], "xhat": [], "y": [], "dxhat": []}
    dx, dgamma, dbeta = [], [mpf(0)] * d, [mpf(0)] * d
    loss = mpf(0)
    for row, g in zip(LNB_X, LNB_G, strict=True):
        mu = sum(M(v) for v in row) / d
        xc = [M(v) - mu for v in row]
        var = sum(c * c for c in xc) / d
        sigma = mp.sqrt(var + M(LNB_EPS))
        xhat = [c / sigma for c in xc]
        y = [h * M(gm) + M(b) for h, gm, b in zip(xhat, LNB_GAMMA, LNB_BETA, strict=True)]
        dxhat = [M(gi) * M(gm) for gi, gm in zip(g, LNB_GAMMA, strict=True)]
        m1 = sum(dxhat) / d
        m2 = sum(a * h for a, h in zip(dxhat, xhat, strict=True)) / d
        dx.append([(a - m1 - h * m2) / sigma for a, h in zip(dxhat, xhat, strict=True)])
        for j in range(d):
            dgamma[j] += M(g[j]) * xhat[j]
            dbeta[j] += M(g[j])
        loss += sum(M(gi) * yi for gi, yi in zip(g, y, strict=True))
        out["mu"].append([mu])
        out["xc"].append(xc)
        out["sigma2"].append([var])
        out["xhat"].append(xhat)
        out["y"].append(y)
        out["dxhat"].append(dxhat)
    out.update(L=loss, dgamma=dgamma, dbeta=dbeta, dx=dx, y_op=out["y"], L_op=loss, dx_op=dx)
    return out


CEB_X = _m("""
0.5 -1.0 2.0
1.5 0.2 -0.4
""")
CEB_W = _m("""
0.1 -0.3 0.2 0.4
-0.2 0.5 0.1 -0.1
0.3 0.2 -0.4 0.1
""")
CEB_B = _v("0.0 0.1 -0.1 0.05")
CEB_T = [2, 0]
CEB_LR = F(1, 10)
CEB_ADAM = {"lr": F(1, 100), "beta1": F(9, 10), "beta2": F(999, 1000), "eps": F(1, 10**8)}


def steps_softmax_ce_sgd_adam() -> dict[str, Tensor]:
    """Logits → softmax → mean cross-entropy; dz = (p − onehot)/n, dW = Xᵀdz, db = Σ dz;
    one SGD step and one Adam step from m = v = 0."""
    n = len(CEB_X)
    z = [
        [
            sum(M(x) * M(w[j]) for x, w in zip(row, CEB_W, strict=True)) + M(CEB_B[j])
            for j in range(len(CEB_B))
        ]
        for row in CEB_X
    ]
    p = [softmax_row(r) for r in z]
    loss = -sum(mp.log(p[i][t]) for i, t in enumerate(CEB_T)) / n
    dz = [
        [(p[i][j] - (1 if j == t else 0)) / n for j in range(len(p[i]))]
        for i, t in enumerate(CEB_T)
    ]
    dw = matmul(transpose([[M(x) for x in r] for r in CEB_X]), dz)
    db = [sum(dz[i][j] for i in range(n)) for j in range(len(CEB_B))]
    w_sgd = [
        [M(w) - M(CEB_LR) * g for w, g in zip(wr, gr, strict=True)]
        for wr, gr in zip(CEB_W, dw, strict=True)
    ]
    a = {k: M(v) for k, v in CEB_ADAM.items()}
    m = [[(1 - a["beta1"]) * g for g in r] for r in dw]
    v = [[(1 - a["beta2"]) * g * g for g in r] for r in dw]
    mhat = [[x / (1 - a["beta1"]) for x in r] for r in m]
    vhat = [[x / (1 - a["beta2"]) for x in r] for r in v]
    w_adam = [
        [
            M(w) - a["lr"] * mh / (mp.sqrt(vh) + a["eps"])
            for w, mh, vh in zip(wr, mr, vr, strict=True)
        ]
        for wr, mr, vr in zip(CEB_W, mhat, vhat, strict=True)
    ]
    return {
        "z": z,
        "p": p,
        "loss": loss,
        "dz": dz,
        "dW": dw,
        "db": db,
        "W_sgd": w_sgd,
        "m": m,
        "v": v,
        "m_hat": mhat,
        "v_hat": vhat,
        "W_adam": w_adam,
    }


# --- int8 absmax quantisation: exact rationals throughout --------------------------------

Q8_X = _m("""
0.9 -2.1 0.35 1.4
-0.6 0.25 3.2 -1.06
""")
Q8_W = _m("""
0.125 -1.27 0.43 -0.645
0.5 -0.21 0.33 -0.07
-0.8 0.15 0.62 -0.3
""")
Q8_G = _m("""
0.5 -1.0 0.25
-0.2 0.4 1.0
""")


def round_half_even(v: Fraction) -> int:
    """The nearest integer to ``v``; an exact tie (``k + ½``) to the even one."""
    f = v.numerator // v.denominator
    r = v - f
    if r != F(1, 2):
        return f + 1 if r > F(1, 2) else f
    return f if f % 2 == 0 else f + 1


def round_half_up(v: Fraction) -> int:
    """The nearest integer to ``v``; an exact tie away from zero (school rounding)."""
    a = abs(v)
    n = a.numerator // a.denominator
    n += 1 if a - n >= F(1, 2) else 0
    return n if v >= 0 else -n


def steps_int8_absmax() -> dict[str, Tensor]:
    """scale = 127 / max|·| (x per tensor, W per row), q = clip(round(·scale), ±127),
    x̂ = q / scale; y = xWᵀ exact, with Ŵ, and as (q_x q_Wᵀ)/(s_x s_W); L = Σ y_w8·G,
    whose gradient reaches W only through each row's scale (round has derivative 0)."""

    def clip(n: int) -> int:
        return max(-127, min(127, n))

    s_x = 127 / max(abs(v) for r in Q8_X for v in r)
    q_x = [[clip(round_half_even(v * s_x)) for v in r] for r in Q8_X]
    x_hat = [[F(q) / s_x for q in r] for r in q_x]
    s_w = [127 / max(abs(v) for v in r) for r in Q8_W]
    q_w = [[clip(round_half_even(v * s)) for v in r] for r, s in zip(Q8_W, s_w, strict=True)]
    q_up = [[round_half_up(v * s) for v in r] for r, s in zip(Q8_W, s_w, strict=True)]
    w_hat = [[F(q) / s for q in r] for r, s in zip(q_w, s_w, strict=True)]
    err_w = _zip(Q8_W, w_hat, lambda a, b: a - b)
    y = matmul(Q8_X, transpose(Q8_W))
    y_w8 = matmul(Q8_X, transpose(w_hat))
    acc = matmul(q_x, transpose(q_w))
    y_8 = [[a / (s_x * s) for a, s in zip(r, s_w, strict=True)] for r in acc]
    loss = sum(a * g for r, gr in zip(y_w8, Q8_G, strict=True) for a, g in zip(r, gr, strict=True))
    dw_hat = matmul(transpose(Q8_G), Q8_X)
    # W_hat[i, j] = q[i, j]·m_i/127 with m_i = max_j |W[i, j]|: only m_i varies, so
    # dL/dW[i, k] = sign(W[i, k])·Σ_j dW_hat[i, j]·q[i, j]/127 at the row's largest |W[i, k]|.
    dw: list[list[Fraction]] = []
    for r, gr, qr in zip(Q8_W, dw_hat, q_w, strict=True):
        k = max(range(len(r)), key=lambda j: abs(r[j]))
        row = [F(0)] * len(r)
        row[k] = (1 if r[k] > 0 else -1) * sum(g * q for g, q in zip(gr, qr, strict=True)) / 127
        dw.append(row)
    return {
        "s_x": s_x,
        "q_x": q_x,
        "x_hat": x_hat,
        "err_x": _zip(Q8_X, x_hat, lambda a, b: a - b),
        "s_W": [[s] for s in s_w],
        "q_W": q_w,
        "q_W_up": q_up,
        "W_hat": w_hat,
        "err_W": err_w,
        "max_err_W": max(abs(v) for r in err_w for v in r),
        "y": y,
        "y_w8": y_w8,
        "acc": acc,
        "y_8": y_8,
        "err_y": _zip(y, y_8, lambda a, b: a - b),
        "L": loss,
        "dW_hat": dw_hat,
        "dW": dw,
    }


REFERENCES: dict[str, Callable[[], dict[str, Tensor]]] = {
    "steps_self_attention_noproj": steps_self_attention_noproj,
    "steps_masked_dropout": steps_masked_dropout,
    "steps_ffn_bce": steps_ffn_bce,
    "steps_layernorm_unbiased": steps_layernorm_unbiased,
    "steps_sinusoidal_table": steps_sinusoidal_table,
    "steps_rope_one_angle": steps_rope_one_angle,
    "steps_cross_attention": steps_cross_attention,
    "steps_batch_heads": steps_batch_heads,
    "steps_recurrent_state": steps_recurrent_state,
    "steps_attention_backward": steps_attention_backward,
    "steps_layernorm_backward": steps_layernorm_backward,
    "steps_softmax_ce_sgd_adam": steps_softmax_ce_sgd_adam,
    "steps_int8_absmax": steps_int8_absmax,
}
"""Every bundled step derivation, by file stem."""


def evaluate(stem: str) -> dict[str, Tensor]:
    """The reference values of one derivation's steps, at :data:`DPS` digits."""
    with mp.workdps(DPS):
        return REFERENCES[stem]()


def to_fraction(x: Any) -> Fraction:
    """The exact rational value of a Fraction, int or (finite) mpf."""
    if isinstance(x, Fraction | int):
        return Fraction(x)
    return Fraction(
        Decimal(mp.nstr(x, DPS, strip_zeros=False, min_fixed=-mp.inf, max_fixed=mp.inf))
    )


def classify(printed: str, x: Any) -> str:
    """The verdict DESIGN.md's rule gives a printed decimal for the value ``x``.

    ``u`` is the weight of the last printed digit. ``exact``: printed == x;
    ``rounded``: printed is the half-up rounding of x (either neighbour on an
    exact tie); ``slip``: not that, but |printed − x| < u; ``wrong``: |printed − x| ≥ u.
    ``boundary`` when x is within 1e-40 of a rounding boundary (not decided here).
    """
    text = printed.strip().replace("−", "-")
    if text in ("-inf", "inf"):
        target = mpf(text)
        return "exact" if isinstance(x, mpf) and x == target else "wrong"
    d = Decimal(text)
    places = max(0, -d.as_tuple().exponent)
    u = Fraction(1, 10**places)
    p = Fraction(d)
    exact_value = isinstance(x, Fraction | int)
    q = Fraction(x) if exact_value else to_fraction(x)
    if exact_value and p == q:
        return "exact"
    dist = abs(p - q)
    tol = Fraction(1, 10**40)
    if not exact_value and (abs(dist - u / 2) < tol or abs(dist - u) < tol or dist < tol):
        return "boundary"
    if dist < u / 2 or (exact_value and dist == u / 2):
        return "rounded"
    return "slip" if dist < u else "wrong"


def fmt(x: Any, places: int) -> str:
    """Half-up rounding of ``x`` to ``places`` decimals, as an author would print it."""
    q = Fraction(x) if isinstance(x, Fraction | int) else to_fraction(x)
    scaled = q * 10**places
    n = int(abs(scaled) + Fraction(1, 2))
    sign = "-" if scaled < 0 and n != 0 else ""
    s = str(n).rjust(places + 1, "0")
    return f"{sign}{s[:-places]}.{s[-places:]}" if places else f"{sign}{s}"
