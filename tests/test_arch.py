"""Every architecture option against an independent mpmath forward pass.

:func:`ref_forward` below is written from the papers' formulas in plain Python
lists of mpmath numbers; it imports nothing from symtf's ops or pipeline and
reads only the loaded weights. Each option is run through symtf's *exact*
pipeline (rationals, and once with a symbolic weight substituted afterwards),
the exact values are enclosed in certified balls, and they must agree with the
reference to 30 digits.
"""

from __future__ import annotations

from fractions import Fraction
from typing import Any

import pytest
import sympy
from mpmath import mp, mpf

import symtf
from symtf.backends.certify import ball
from symtf.errors import SpecError
from symtf.spec import Derivation, Model

DPS = 50
TOL = mpf("1e-30")

Matrix = list[list[Any]]

# ----------------------------------------------------------------------------- reference


def _num(e: sympy.Expr, values: dict[str, Fraction]) -> mpf:
    if e.is_Symbol:
        v = values[str(e)]
        return mpf(v.numerator) / v.denominator
    if not e.is_Rational:
        raise TypeError(f"reference weights must be rational, found {e}")
    return mpf(int(e.p)) / int(e.q)


def _mat(m: sympy.MatrixBase | None, values: dict[str, Fraction]) -> Matrix | None:
    if m is None:
        return None
    return [[_num(m[i, j], values) for j in range(m.cols)] for i in range(m.rows)]


def _mm(a: Matrix, b: Matrix) -> Matrix:
    assert len(a[0]) == len(b), (len(a[0]), len(b))
    return [
        [mp.fsum(a[i][k] * b[k][j] for k in range(len(b))) for j in range(len(b[0]))]
        for i in range(len(a))
    ]


def _t(a: Matrix) -> Matrix:
    return [list(r) for r in zip(*a, strict=True)]


def _add(a: Matrix, b: Matrix) -> Matrix:
    return [[x + y for x, y in zip(r, s, strict=True)] for r, s in zip(a, b, strict=True)]


def _bias(a: Matrix, b: Matrix | None) -> Matrix:
    return a if b is None else [[x + y for x, y in zip(r, b[0], strict=True)] for r in a]


def _softmax_rows(a: Matrix) -> Matrix:
    out = []
    for r in a:
        top = max(x for x in r)
        e = [mp.exp(x - top) for x in r]
        s = mp.fsum(e)
        out.append([x / s for x in e])
    return out


def _rotate(x: Matrix, base: mpf, pairs: str) -> Matrix:
    d = len(x[0])
    half = d // 2
    idx = (
        [(2 * i, 2 * i + 1) for i in range(half)]
        if pairs == "adjacent"
        else [(i, i + half) for i in range(half)]
    )
    out = []
    for p, row in enumerate(x):
        new = list(row)
        for i, (a, b) in enumerate(idx):
            th = p * base ** (mpf(-2 * i) / d)
            new[a] = row[a] * mp.cos(th) - row[b] * mp.sin(th)
            new[b] = row[a] * mp.sin(th) + row[b] * mp.cos(th)
        out.append(new)
    return out


def _norm(x: Matrix, gamma: Matrix, beta: Matrix, eps: mpf, kind: str, variance: str) -> Matrix:
    out = []
    for r in x:
        d = len(r)
        if kind == "rmsnorm":
            den = mp.sqrt(mp.fsum(v * v for v in r) / d + eps)
            out.append([v / den * g + b for v, g, b in zip(r, gamma[0], beta[0], strict=True)])
            continue
        mu = mp.fsum(r) / d
        var = mp.fsum((v - mu) ** 2 for v in r) / (d - 1 if variance == "unbiased" else d)
        den = mp.sqrt(var + eps)
        out.append([(v - mu) / den * g + b for v, g, b in zip(r, gamma[0], beta[0], strict=True)])
    return out


def _act(name: str, v: mpf) -> mpf:
    if name == "relu":
        return max(v, mpf(0))
    if name == "gelu":
        return v / 2 * (1 + mp.erf(v / mp.sqrt(2)))
    if name == "gelu_tanh":
        return v / 2 * (1 + mp.tanh(mp.sqrt(2 / mp.pi) * (v + mpf("0.044715") * v**3)))
    if name == "silu":
        return v / (1 + mp.exp(-v))
    raise ValueError(name)


def ref_forward(
    m: Model,
    tokens: tuple[int, ...],
    values: dict[str, Fraction] | None = None,
    **knobs: Any,
) -> dict[str, Matrix]:
    """An independent forward pass of a loaded model, in mpmath at :data:`DPS` digits.

    ``knobs`` override what the model says, in the reference's own terms:
    ``divisor={(l, h): callable returning the mpf divisor}``, ``eps={"l0.ln1": Fraction}``,
    ``variance={"l0.ln1": "unbiased"}``, ``norm``, ``activation``, ``mask``
    (``causal``/``none``/``after``/``after-unnormalized``),
    ``qk={(l, h)}`` (Q·K without transposing), ``cols={(l, h)}`` (column softmax),
    ``left={"l0.W1", "l0.h0.W_Q"}`` (x·Wᵀ), ``pairs``.
    """
    v = values or {}
    with mp.workdps(DPS):
        return _forward(m, tokens, v, knobs)


def _forward(
    m: Model, tokens: tuple[int, ...], v: dict[str, Fraction], k: dict[str, Any]
) -> dict[str, Matrix]:
    out: dict[str, Matrix] = {}
    E = _mat(m.embed, v)
    x = [E[t] for t in tokens] if m.architecture == "decoder" else E
    n, d = len(x), len(x[0])
    if m.positional in ("given", "learned") and m.pos is not None:
        out["pos"] = _mat(m.pos, v)[:n]
        x = _add(x, out["pos"])
    elif m.positional == "sinusoidal":
        base = _num(m.pos_base, v)
        out["pos"] = [
            [(mp.sin if j % 2 == 0 else mp.cos)(p / base ** (mpf(j - j % 2) / d)) for j in range(d)]
            for p in range(n)
        ]
        x = _add(x, out["pos"])
    out["x"] = x
    norm_pos = k.get("norm", m.norm)
    activation = k.get("activation", m.activation)
    mask = k.get(
        "mask",
        {
            "causal-after-softmax": "after",
            "causal-after-softmax-unnormalized": "after-unnormalized",
        }.get(m.mask, m.mask),
    )
    left = k.get("left", set())
    eps_k, var_k = k.get("eps", {}), k.get("variance", {})

    def lin(name: str, a: Matrix, w: sympy.MatrixBase, b: sympy.MatrixBase | None) -> Matrix:
        W = _mat(w, v)
        return _bias(_mm(a, _t(W) if name in left else W), _mat(b, v))

    def norm(name: str, a: Matrix, gamma: Any, beta: Any, eps: Any, var: str | None) -> Matrix:
        e = eps_k.get(name, eps if eps is not None else m.eps)
        e = mpf(e.numerator) / e.denominator if isinstance(e, Fraction) else _num(e, v)
        va = var_k.get(name, var if var is not None else m.variance)
        out[name] = _norm(a, _mat(gamma, v), _mat(beta, v), e, m.norm_kind, va)
        return out[name]

    for li, layer in enumerate(m.layers):
        p = f"l{li}"

        def attention(a: Matrix, li: int = li, layer: Any = layer, p: str = p) -> Matrix:
            zs = []
            for hi, h in enumerate(layer.heads):
                q = lin(f"{p}.h{hi}.W_Q", a, h.W_Q, h.b_Q)
                kk = lin(f"{p}.h{hi}.W_K", a, h.W_K, h.b_K)
                vv = lin(f"{p}.h{hi}.W_V", a, h.W_V, h.b_V)
                if m.positional == "rope":
                    pairs = k.get("pairs", m.rope_pairs)
                    q = _rotate(q, _num(m.pos_base, v), pairs)
                    kk = _rotate(kk, _num(m.pos_base, v), pairs)
                s = _mm(q, kk) if (li, hi) in k.get("qk", set()) else _mm(q, _t(kk))
                out[f"{p}.h{hi}.scores"] = s
                if (li, hi) in k.get("divisor", {}):
                    div = k["divisor"][(li, hi)]()
                elif h.scale is not None:
                    div = _num(h.scale, v)
                elif m.scale is not None:
                    div = _num(m.scale, v)
                else:
                    div = mp.sqrt(m.d_head)
                s = [[e / div for e in r] for r in s]
                causal = mask == "causal"
                fill = mpf("-inf") if m.mask_value is None else _num(m.mask_value, v)
                s = [
                    [e if (j <= i or not causal) else fill for j, e in enumerate(r)]
                    for i, r in enumerate(s)
                ]
                cols = (li, hi) in k.get("cols", set())
                att = _t(_softmax_rows(_t(s))) if cols else _softmax_rows(s)
                if mask.startswith("after"):
                    att = [
                        [e if j <= i else mpf(0) for j, e in enumerate(r)]
                        for i, r in enumerate(att)
                    ]
                    if mask == "after":
                        att = [[e / mp.fsum(r) for e in r] for r in att]
                out[f"{p}.h{hi}.pattern"] = att
                zs.append(_mm(att, vv))
            cat = [[e for z in zs for e in z[i]] for i in range(len(a))]
            if layer.W_O is None:
                return cat
            out[f"{p}.attn_out"] = lin(f"{p}.W_O", cat, layer.W_O, layer.b_O)
            return out[f"{p}.attn_out"]

        def ffn(a: Matrix, layer: Any = layer, p: str = p) -> Matrix:
            pre = lin(f"{p}.W1", a, layer.W1, layer.b1)
            if activation == "swiglu":
                up = lin(f"{p}.W3", a, layer.W3, layer.b3)
                act = [
                    [_act("silu", g) * u for g, u in zip(r, s, strict=True)]
                    for r, s in zip(pre, up, strict=True)
                ]
            else:
                act = [[_act(activation, e) for e in r] for r in pre]
            out[f"{p}.ffn_act"] = act
            return lin(f"{p}.W2", act, layer.W2, layer.b2)

        if m.architecture == "attention":
            x = attention(x)
            continue
        if norm_pos == "pre":
            mid = _add(
                x,
                attention(
                    norm(
                        f"{p}.ln1",
                        x,
                        layer.ln1_gamma,
                        layer.ln1_beta,
                        layer.ln1_eps,
                        layer.ln1_variance,
                    )
                ),
            )
            x = _add(
                mid,
                ffn(
                    norm(
                        f"{p}.ln2",
                        mid,
                        layer.ln2_gamma,
                        layer.ln2_beta,
                        layer.ln2_eps,
                        layer.ln2_variance,
                    )
                ),
            )
            out[f"{p}.resid_post"] = x
        else:
            y = norm(
                f"{p}.ln1",
                _add(x, attention(x)),
                layer.ln1_gamma,
                layer.ln1_beta,
                layer.ln1_eps,
                layer.ln1_variance,
            )
            out[f"{p}.resid_post"] = _add(y, ffn(y))
            x = norm(
                f"{p}.ln2",
                out[f"{p}.resid_post"],
                layer.ln2_gamma,
                layer.ln2_beta,
                layer.ln2_eps,
                layer.ln2_variance,
            )
    out["final"] = x
    if m.final_norm:
        x = norm("ln_f", x, m.lnf_gamma, m.lnf_beta, m.lnf_eps, m.lnf_variance)
    if m.architecture == "decoder" and m.unembed is not None:
        U = _t(E) if m.tied else _mat(m.unembed, v)
        out["logits"] = _mm([x[-1]], U)
        out["probs"] = _softmax_rows(out["logits"])
    return out


# ----------------------------------------------------------------------------- symtf side


def exact_values(
    d: Derivation, steps: list[str], values: dict[str, Fraction] | None = None
) -> dict[str, Matrix]:
    """symtf's exact values of ``steps``, each entry enclosed in a certified ball.

    With ``values``, the free symbols are substituted *after* the exact
    (symbolic) pass, so the symbolic pipeline itself is what is tested.
    """
    t = symtf.run(d)
    xp = t.backend
    sub = {
        sympy.Symbol(k, real=True): sympy.Rational(f.numerator, f.denominator)
        for k, f in (values or {}).items()
    }
    defs = {s: e.xreplace(sub) for s, e in xp.defs.items()} if sub else xp.defs
    memo: dict[sympy.Basic, Any] = {}
    out = {}
    for name in steps:
        val = t.value(name)
        rows = []
        for i in range(val.rows):
            row = []
            for j in range(val.cols):
                e = val[i, j].xreplace(sub) if sub else val[i, j]
                if e == sympy.S.NegativeInfinity:
                    row.append(mpf("-inf"))
                    continue
                b = ball(e, 200, defs=defs, memo=memo)
                assert b.rad() < 1e-40, (name, i, j, b)
                with mp.workdps(DPS):
                    row.append(mpf(b.mid().str(60, radius=False)))
            rows.append(row)
        out[name] = rows
    return out


def assert_agree(got: dict[str, Matrix], want: dict[str, Matrix], steps: list[str]) -> None:
    """Every entry of every step agrees to :data:`TOL`."""
    with mp.workdps(DPS):
        for s in steps:
            g, w = got[s], want[s]
            assert len(g) == len(w) and len(g[0]) == len(w[0]), (s, len(g), len(w))
            for i, (rg, rw) in enumerate(zip(g, w, strict=True)):
                for j, (a, b) in enumerate(zip(rg, rw, strict=True)):
                    if mp.isinf(b):
                        assert a == b, (s, i, j, a, b)
                    else:
                        assert abs(a - b) < TOL, (s, i, j, a, b)


# ----------------------------------------------------------------------------- the test model


def _rows(text: str) -> str:
    return '"""\n' + text.strip() + '\n"""'


BASE: dict[str, str] = {
    "d_model": "4",
    "n_heads": "2",
    "eps": '"1/100"',
    "vocab": '["a", "b", "c", "d"]',
    "embed": _rows("1 0.5 -0.2 0.3\n0.1 -1 0.4 0.2\n0.7 0.2 0.1 -0.5\n-0.3 0.6 0.9 0.1"),
    "unembed": _rows("1 0 0.5 -1\n0 1 0.2 0.3\n-0.5 0.3 1 0\n0.2 -0.4 0 1"),
}
LAYER: dict[str, str] = {
    "W1": _rows("0.5 -0.2 0.3 0.1\n0.3 -0.1 0.2 0.4\n-0.6 0.5 0.1 0.2\n-0.2 0.1 0.4 -0.3"),
    "b1": '"0.1 -0.2 0.05 0"',
    "W2": _rows("0.1 0 0.2 0.1\n0 0.3 0 0.1\n0.2 0.1 0.1 0\n-0.1 0.2 0 0.3"),
    "ln2_gamma": '"1.5 0.5 1 2"',
    "ln2_beta": '"0.1 0 -0.1 0.2"',
}
HEADS: list[dict[str, str]] = [
    {
        "W_Q": _rows("1 0\n0 1\n0.5 0\n0 0.5"),
        "W_K": _rows("0.5 0\n0 1\n1 0\n0 0.2"),
        "W_V": _rows("1 0\n0 1\n0 0\n1 1"),
    },
    {
        "W_Q": _rows("0 1\n1 0\n0.5 0\n0 -0.5"),
        "W_K": _rows("0.5 0\n0 1\n1 0\n0.3 0.2"),
        "W_V": _rows("0 1\n1 0\n0.5 0\n0 1"),
    },
]


def make_toml(
    model: dict[str, str] | None = None,
    layer: dict[str, str] | None = None,
    heads: list[dict[str, str]] | None = None,
    layers: int = 1,
    tokens: str = '["a", "b", "c"]',
) -> str:
    """A small decoder file with the given overrides (values are TOML source text)."""
    mdl = {**BASE, **(model or {})}
    lines = ['title = "arch test"', "[model]"]
    lines += [f"{k} = {v}" for k, v in mdl.items() if v is not None]
    for _ in range(layers):
        lines.append("[[model.layers]]")
        lines += [f"{k} = {v}" for k, v in {**LAYER, **(layer or {})}.items() if v is not None]
        for h0, h1 in zip(HEADS, heads or [{}, {}], strict=True):
            lines.append("[[model.layers.heads]]")
            lines += [f"{k} = {v}" for k, v in {**h0, **h1}.items() if v is not None]
    lines += ["[input]", f"tokens = {tokens}"]
    return "\n".join(lines) + "\n"


SWIGLU_LAYER = {
    "W1": _rows("0.5 -0.2 0.3\n0.3 -0.1 0.2\n-0.6 0.5 0.1\n-0.2 0.1 0.4"),
    "b1": None,
    "W3": _rows("0.2 0.1 0\n0 0.3 0.1\n0.1 0 0.2\n0.3 0.1 -0.1"),
    "W2": _rows("0.1 0 0.2 0.1\n0 0.3 0 0.1\n0.2 0.1 0.1 0"),
}

#: option name -> (model overrides, layer overrides, head overrides, layers)
OPTIONS: dict[str, tuple[dict, dict, list, int]] = {
    "defaults (post-norm, relu, given pos)": (
        {"pos": _rows("0 0 0 0\n0.1 0.1 0.1 0.1\n0.2 0.2 0.2 0.2")},
        {},
        [],
        1,
    ),
    "positional=learned": (
        {"positional": '"learned"', "pos": _rows("0.3 -0.1 0 0.2\n0.1 0.4 -0.2 0\n0 0 0.5 0.1")},
        {},
        [],
        1,
    ),
    "positional=sinusoidal": ({"positional": '"sinusoidal"'}, {}, [], 1),
    "positional=sinusoidal base 100": (
        {"positional": '"sinusoidal"', "pos_base": '"100"'},
        {},
        [],
        1,
    ),
    "positional=rope": ({"positional": '"rope"'}, {}, [], 1),
    "positional=rope halves base 100": (
        {"positional": '"rope"', "rope_pairs": '"halves"', "pos_base": "100", "d_head": "4"},
        {"W_O": _rows("\n".join(["0.5 0 0 0", "0 0.5 0 0", "0 0 0.5 0", "0 0 0 0.5"] * 2))},
        [
            {
                "W_Q": _rows("1 0 0.5 0\n0 1 0 0\n0.5 0 1 0\n0 0.5 0 1"),
                "W_K": _rows("0.5 0 0 1\n0 1 0 0\n1 0 0.2 0\n0 0.2 0 1"),
                "W_V": '"identity"',
            },
            {
                "W_Q": _rows("0 1 0 0\n1 0 0 0\n0.5 0 0 1\n0 -0.5 1 0"),
                "W_K": _rows("0.5 0 0 0\n0 1 0 0\n1 0 1 0\n0.3 0.2 0 1"),
                "W_V": '"identity"',
            },
        ],
        1,
    ),
    "positional=none": ({"positional": '"none"'}, {}, [], 1),
    "norm=pre": ({"norm": '"pre"'}, {}, [], 1),
    "norm_kind=rmsnorm": (
        {"norm_kind": '"rmsnorm"', "eps": '"1e-6"'},
        {"ln1_gamma": '"0.5 1 1.5 2"'},
        [],
        1,
    ),
    "eps, gamma, beta per layer": (
        {"eps": '"1e-5"'},
        {"ln1_gamma": '"2 1 0.5 1"', "ln1_beta": '"0 0.1 0.2 0.3"', "ln2_eps": '"0.25"'},
        [],
        1,
    ),
    "variance=unbiased": ({"variance": '"unbiased"'}, {}, [], 1),
    "activation=gelu": ({"activation": '"gelu"'}, {}, [], 1),
    "activation=gelu_tanh": ({"activation": '"gelu_tanh"'}, {}, [], 1),
    "activation=swiglu, d_ff=3": ({"activation": '"swiglu"', "d_ff": "3"}, SWIGLU_LAYER, [], 1),
    "ffn width 6": (
        {"d_ff": "6"},
        {
            "W1": _rows(
                "0.5 -0.2 0.3 0.1 0 1\n0.3 -0.1 0.2 0.4 1 0\n-0.6 0.5 0.1 0.2 0 0\n-0.2 0.1 0.4 -0.3 0 0.5"
            ),
            "b1": '"0 0 0 0 0.1 -0.1"',
            "W2": _rows(
                "0.1 0 0.2 0.1\n0 0.3 0 0.1\n0.2 0.1 0.1 0\n-0.1 0.2 0 0.3\n1 0 0 0\n0 0 0 1"
            ),
        },
        [],
        1,
    ),
    "W_O given, biases on Q/K/V/O": (
        {},
        {"W_O": _rows("0.5 0 0 0.1\n0 0.5 0.2 0\n0.1 0 1 0\n0 0 0 1"), "b_O": '"0.1 0 0 -0.1"'},
        [{"b_Q": '"0.1 -0.1"', "b_K": '"0.2 0"', "b_V": '"0 0.3"'}, {"b_Q": '"0.05 0"'}],
        1,
    ),
    "two layers": ({}, {}, [], 2),
    "tie_embeddings": ({"unembed": None, "tie_embeddings": "true"}, {}, [], 1),
    "scale=3/2 (model), 1 (head 1)": ({"scale": '"3/2"'}, {}, [{}, {"scale": '"1"'}], 1),
    "final_norm (GPT-2 ln_f)": (
        {"norm": '"pre"', "final_norm": "true", "lnf_gamma": '"1 2 1 2"'},
        {},
        [],
        1,
    ),
    "mask=none": ({"mask": '"none"'}, {}, [], 1),
    "mask_value=-10000 (GPT-2's fill)": ({"mask_value": "-10000"}, {}, [], 1),
    "mask_value=-1e9": ({"mask_value": '"-1e9"'}, {}, [], 1),
    "mask_value=-3/2 (a mask that leaks)": ({"mask_value": '"-3/2"'}, {}, [], 1),
}


def _steps(d: Derivation) -> list[str]:
    m = d.model
    s = ["x", "final", "logits", "probs"]
    for li in range(len(m.layers)):
        s += [
            f"l{li}.h0.pattern",
            f"l{li}.h1.pattern",
            f"l{li}.ffn_act",
            f"l{li}.ln1",
            f"l{li}.resid_post",
        ]
    if m.final_norm:
        s.append("ln_f")
    return s


@pytest.mark.parametrize("option", list(OPTIONS))
def test_option_exact_matches_reference(option: str) -> None:
    model, layer, heads, layers = OPTIONS[option]
    d = symtf.loads(make_toml(model, layer, heads or None, layers), option)
    steps = _steps(d)
    assert_agree(exact_values(d, steps), ref_forward(d.model, d.tokens), steps)


@pytest.mark.parametrize("option", list(OPTIONS))
def test_option_symbolic_weight_matches_reference(option: str) -> None:
    """The same model with one embedding entry a free symbol ``w``, substituted after the exact pass."""
    model, layer, heads, layers = OPTIONS[option]
    model = dict(model)
    model["embed"] = _rows("1 w -0.2 0.3\n0.1 -1 0.4 0.2\n0.7 0.2 0.1 -0.5\n-0.3 0.6 0.9 0.1")
    d = symtf.loads(make_toml(model, layer, heads or None, layers), option)
    w = sympy.Symbol("w", real=True)
    assert w in d.model.embed.free_symbols
    value = {"w": Fraction(3, 10)}
    steps = ["logits"]
    assert_agree(exact_values(d, steps, value), ref_forward(d.model, d.tokens, value), steps)


def test_symbolic_scale() -> None:
    """A symbolic attention divisor ``s`` stays a symbol, and substitutes to the reference."""
    d = symtf.loads(make_toml({"scale": '"s"'}), "sym")
    t = symtf.run(d)
    assert sympy.Symbol("s", real=True) in t.backend.user_symbols(t.value("l0.h0.scaled")[1, 0])
    value = {"s": Fraction(7, 4)}
    steps = ["l0.h0.pattern", "logits"]
    assert_agree(exact_values(d, steps, value), ref_forward(d.model, d.tokens, value), steps)


# ----------------------------------------------------------------------------- closed forms by hand


def test_sinusoidal_closed_form() -> None:
    d = symtf.loads(make_toml({"positional": '"sinusoidal"'}), "pe")
    pos = symtf.run(d).value("pos")
    b = sympy.Integer(10000)
    assert pos[0, :] == sympy.Matrix([[0, 1, 0, 1]])
    assert pos[2, 1] == sympy.cos(2)
    assert pos[1, 2] == sympy.sin(b ** sympy.Rational(-1, 2))
    assert pos[2, 3] == sympy.cos(2 * b ** sympy.Rational(-1, 2))


def test_rope_is_a_rotation() -> None:
    """Position 0 is unchanged; position p rotates each pair by p·θ_i; norms are kept."""
    d = symtf.loads(make_toml({"positional": '"rope"'}), "rope")
    t = symtf.run(d)
    q, r = t.value("l0.h0.q"), t.value("l0.h0.q_rot")
    assert r[0, :] == q[0, :]
    # d_head = 2: one pair, θ_0 = 1, so row p turns by p radians.
    assert sympy.expand(r[1, 0] - (q[1, 0] * sympy.cos(1) - q[1, 1] * sympy.sin(1))) == 0
    lengths = sympy.expand(r[2, 0] ** 2 + r[2, 1] ** 2 - q[2, 0] ** 2 - q[2, 1] ** 2)
    assert sympy.expand(lengths.subs(sympy.sin(2) ** 2, 1 - sympy.cos(2) ** 2)) == 0


def test_tied_unembedding_is_embedding_transposed() -> None:
    d = symtf.loads(make_toml({"unembed": None, "tie_embeddings": "true"}), "tied")
    assert d.model.unembed == d.model.embed.T
    assert d.model.tied


def test_existing_keys_still_load() -> None:
    """The v1 keys pos, norm, eps, activation, scale keep their meaning."""
    d = symtf.load("derivations/i_love_ai.toml")
    m = d.model
    assert (m.positional, m.norm, m.norm_kind, m.activation, m.variance) == (
        "given",
        "post",
        "layernorm",
        "relu",
        "biased",
    )
    assert m.scale is None and m.eps == 0 and not m.final_norm and not m.tied


# ----------------------------------------------------------------------------- errors


@pytest.mark.parametrize(
    ("model", "layer", "message"),
    [
        ({"positional": '"sinusoidal"', "pos": '"0 0 0 0"'}, {}, "model.pos: expected no table"),
        ({"positional": '"learned"'}, {}, "model.pos: required for positional = 'learned'"),
        ({"positional": '"spiral"'}, {}, "model.positional: expected one of given, learned"),
        ({"norm_kind": '"batchnorm"'}, {}, "model.norm_kind: expected one of layernorm, rmsnorm"),
        ({"activation": '"swish"'}, {}, "model.activation: expected one of relu, gelu"),
        ({"tie_embeddings": "true"}, {}, "model.unembed: expected no unembed"),
        ({"tie_embeddings": '"yes"'}, {}, "model.tie_embeddings: expected true or false"),
        ({}, {"W3": '"identity"'}, "W3: only a swiglu FFN"),
        ({"eps": '"-1"'}, {}, "model.eps: expected a number >= 0"),
        ({}, {"lnf_gamma": '"1"'}, "unknown key"),
        ({"lnf_gamma": '"1 1 1 1"'}, {}, "model.lnf_gamma: given, but final_norm is false"),
        ({}, {"transposed": '["W9"]'}, "transposed: expected an array of names"),
        ({"d_ff": "3"}, {"W1": '"identity"'}, "W1: expected a 4x3 matrix"),
        (
            {"positional": '"rope"', "d_head": "3", "W_O": None},
            {},
            "model.d_head: rotary positions need an even d_head",
        ),
    ],
)
def test_bad_options_name_file_and_key(model: dict, layer: dict, message: str) -> None:
    with pytest.raises(SpecError, match=r"^bad\.toml: ") as e:
        symtf.loads(make_toml(model, layer), "bad.toml")
    assert message in str(e.value)


def test_transposed_needs_square() -> None:
    with pytest.raises(
        SpecError, match=r"bad\.toml: model\.layers\[0\]\.heads\[0\]\.transposed: W_Q is 4x2"
    ):
        symtf.loads(make_toml(heads=[{"transposed": '["W_Q"]'}, {}]), "bad.toml")


# ----------------------------------------------------------------------------- backends agree


@pytest.mark.parametrize(
    "option",
    ["positional=rope", "activation=swiglu, d_ff=3", "norm_kind=rmsnorm", "activation=gelu_tanh"],
)
def test_float_and_ball_backends_agree(option: str) -> None:
    from symtf.backends import BallBackend, FloatBackend

    model, layer, heads, layers = OPTIONS[option]
    d = symtf.loads(make_toml(model, layer, heads or None, layers), option)
    with BallBackend(128) as xp:
        b = symtf.run(d, xp).value("probs")
    f = symtf.run(d, FloatBackend()).value("probs")
    want = ref_forward(d.model, d.tokens)["probs"][0]
    for j in range(len(want)):
        assert abs(float(b[0, j].mid()) - float(want[j])) < 1e-15
        assert abs(f[0, j] - float(want[j])) < 1e-12
