"""Float formats: exact rounding to a format, and certified enclosures that contain real runs.

Every expectation here comes from numpy (float16/float32 arithmetic done by the
hardware), from bfloat16 made by rounding float32 bits in this file, or from
torch where it is installed — never from symtf's own simulation.
"""

from __future__ import annotations

import struct
from fractions import Fraction

import numpy as np
import pytest
import sympy
from flint import arb

from symtf import spec
from symtf.backends.formats import FORMATS, FormatBallBackend, round_to_format
from symtf.checking.framework import enclose
from symtf.errors import Undecided
from symtf.graph.pipeline import run

FMTS = ("float64", "float32", "float16", "bfloat16")


def bf16(a: np.ndarray) -> np.ndarray:
    """Round float32 to bfloat16 (nearest, ties to even) by integer arithmetic on the bits."""
    out = []
    for v in np.asarray(a, dtype=np.float32).ravel():
        (bits,) = struct.unpack("<I", struct.pack("<f", float(v)))
        low = bits & 0xFFFF
        high = bits >> 16
        if low > 0x8000 or (low == 0x8000 and high & 1):
            high += 1
        out.append(struct.unpack("<f", struct.pack("<I", (high << 16) & 0xFFFFFFFF))[0])
    return np.array(out, dtype=np.float32).reshape(np.shape(a))


def as_fmt(a: np.ndarray, fmt: str) -> np.ndarray:
    if fmt == "bfloat16":
        return bf16(np.asarray(a, dtype=np.float32))
    return np.asarray(a).astype(
        {"float64": np.float64, "float32": np.float32, "float16": np.float16}[fmt]
    )


# ----------------------------------------------------------------------------- rounding


@pytest.mark.parametrize("fmt", ["float32", "float16"])
def test_round_to_format_matches_numpy_on_doubles(fmt: str) -> None:
    rng = np.random.default_rng(7)
    xs = np.concatenate(
        [rng.normal(size=300), rng.normal(size=100) * 1e-6, rng.normal(size=50) * 300]
    )
    for x in xs:
        if fmt == "float16" and abs(x) > 60000:
            continue
        want = Fraction(float(as_fmt(np.float64(x), fmt)))
        assert round_to_format(Fraction(float(x)), FORMATS[fmt]) == want, x


def test_round_to_format_float64_is_correct_rounding() -> None:
    for q in (Fraction(1, 10), Fraction(2, 3), Fraction(-7, 1000), Fraction(10**30 + 1, 3)):
        assert round_to_format(q, FORMATS["float64"]) == Fraction(float(q))


def test_bfloat16_ties_go_to_even() -> None:
    f = FORMATS["bfloat16"]
    one = Fraction(1)
    assert round_to_format(one + Fraction(1, 2**8), f) == one  # tie between 1 and 1+2^-7: even is 1
    assert round_to_format(one + Fraction(3, 2**8), f) == one + Fraction(2, 2**7)
    assert round_to_format(one + Fraction(1, 2**8) + Fraction(1, 2**20), f) == one + Fraction(
        1, 2**7
    )


def test_overflow_is_undecided() -> None:
    with pytest.raises(Undecided):
        round_to_format(Fraction(70000), FORMATS["float16"])


# ----------------------------------------------------------------------------- enclosures


def _decimal_rows(a: np.ndarray, decimals: int) -> str:
    return "\n".join(" ".join(f"{v:.{decimals}f}" for v in r) for r in a)


def _rows(text: str) -> np.ndarray:
    return np.array([[float(x) for x in r.split()] for r in text.strip().splitlines()])


def _contains(ball: arb, v: float) -> bool:
    return bool(ball.contains(arb(float(v))))


def _standalone(op: str, x: str, eps: str | None = None) -> spec.Derivation:
    e = f'eps = "{eps}"\n' if eps is not None else ""
    return spec.loads(
        f'title = "t"\n[model]\narchitecture = "none"\n[[model.standalone]]\nname = "s"\nop = "{op}"\n'
        f'{e}input = """\n{x}\n"""\n'
    )


def _softmaxes(x: np.ndarray, fmt: str) -> list[np.ndarray]:
    """Textbook and max-shifted softmax in the format, rounding after every op."""
    r = lambda a: as_fmt(a, fmt)  # noqa: E731
    x = r(x)
    out = []
    for shift in (False, True):
        z = r(x - x.max(axis=1, keepdims=True)) if shift else x
        e = r(np.exp(z.astype(np.float32) if fmt == "bfloat16" else z))
        s = r(e.sum(axis=1, keepdims=True, dtype=e.dtype))
        out.append(r(e / s))
        out.append(r(e * r(1 / s)))
    return out


@pytest.mark.parametrize("fmt", FMTS)
@pytest.mark.parametrize("seed", range(4))
def test_softmax_runs_lie_in_the_enclosure(fmt: str, seed: int) -> None:
    rng = np.random.default_rng(seed)
    text = _decimal_rows(rng.normal(size=(3, 7)) * 2, 3)
    d = _standalone("softmax", text)
    t = enclose(d, fmt)
    assert t is not None
    for sim in _softmaxes(_rows(text), fmt):
        for i in range(3):
            for j in range(7):
                assert _contains(t.value("s")[i, j], sim[i, j]), (
                    fmt,
                    i,
                    j,
                    sim[i, j],
                    t.value("s")[i, j],
                )


@pytest.mark.parametrize("fmt", FMTS)
@pytest.mark.parametrize("seed", range(3))
def test_layernorm_and_gelu_runs_lie_in_the_enclosure(fmt: str, seed: int) -> None:
    rng = np.random.default_rng(100 + seed)
    text = _decimal_rows(rng.normal(size=(2, 6)) * 3, 2)
    x = as_fmt(_rows(text), fmt)
    r = lambda a: as_fmt(a, fmt)  # noqa: E731
    d = len(x[0])
    mean = r(r(x.sum(axis=1, keepdims=True, dtype=x.dtype)) / d)
    c = r(x - mean)
    var = r(r((r(c * c)).sum(axis=1, keepdims=True, dtype=x.dtype)) / d)
    std = r(np.sqrt(r(var + r(np.float64(1e-5)))))
    ln = r(c / std)
    t = enclose(_standalone("layernorm", text, "0.00001"), fmt)
    assert t is not None
    for name, sim in (("s.mean", mean), ("s.var", var), ("s.std", std), ("s", ln)):
        for i in range(sim.shape[0]):
            for j in range(sim.shape[1]):
                assert _contains(t.value(name)[i, j], sim[i, j]), (name, i, j)
    # GELU x/2·(1 + erf(x/√2)), each op rounded
    from math import erf

    root2 = r(np.sqrt(np.float64(2)))
    arg = r(x / root2)
    er = r(np.vectorize(erf)(arg.astype(np.float64)))
    g = r(r(x / 2) * r(1 + er))
    t = enclose(_standalone("gelu", text), fmt)
    for i in range(g.shape[0]):
        for j in range(g.shape[1]):
            assert _contains(t.value("s")[i, j], g[i, j])


ATTN = """
title = "attention in a format"
[model]
architecture = "attention"
d_model = 4
mask = "causal"
embed = '''
{x}
'''
[[model.layers]]
[[model.layers.heads]]
W_Q = '''
{wq}
'''
W_K = '''
{wk}
'''
W_V = '''
{wv}
'''
"""


@pytest.mark.parametrize("fmt", ["float32", "float16", "bfloat16"])
def test_attention_run_lies_in_the_enclosure(fmt: str) -> None:
    rng = np.random.default_rng(5)
    mats = {
        k: _decimal_rows(rng.normal(size=(3 if k == "x" else 4, 4)), 2)
        for k in ("x", "wq", "wk", "wv")
    }
    d = spec.loads(ATTN.format(**mats))
    t = enclose(d, fmt)
    assert t is not None
    r = lambda a: as_fmt(a, fmt)  # noqa: E731
    x, wq, wk, wv = (r(_rows(mats[k])) for k in ("x", "wq", "wk", "wv"))
    q, k, v = r(x @ wq), r(x @ wk), r(x @ wv)
    s = r(r(q @ k.T) / r(np.float64(2.0)))
    s = np.where(np.tril(np.ones((3, 3))) > 0, s, -np.inf)
    for a in _softmaxes(s, fmt):
        z = r(a @ v)
        for name, sim in (("l0.h0.q", q), ("l0.h0.pattern", a), ("l0.h0.z", z)):
            for i in range(sim.shape[0]):
                for j in range(sim.shape[1]):
                    assert _contains(t.value(name)[i, j], sim[i, j]), (name, i, j, sim[i, j])


def test_torch_softmax_and_matmul_lie_in_the_enclosure() -> None:
    torch = pytest.importorskip("torch")
    rng = np.random.default_rng(11)
    for fmt, dtype in (
        ("float32", torch.float32),
        ("bfloat16", torch.bfloat16),
        ("float16", torch.float16),
    ):
        text = _decimal_rows(rng.normal(size=(3, 6)) * 2, 3)
        t = enclose(_standalone("softmax", text), fmt)
        sm = torch.softmax(torch.tensor(_rows(text), dtype=dtype), dim=-1).to(torch.float64).numpy()
        for i in range(3):
            for j in range(6):
                assert _contains(t.value("s")[i, j], sm[i, j]), (fmt, i, j)


def test_enclosure_is_tight_enough_to_flag() -> None:
    # A float32 softmax is certain to within a few units of 1e-7; 1e-5 away is outside.
    d = _standalone("softmax", "0.1 0.2 0.3")
    t = enclose(d, "float32")
    b = t.value("s")[0, 0]
    assert float(b.rad()) < 1e-6
    with FormatBallBackend("float32") as xp:
        m = xp.matrix(sympy.ImmutableMatrix([[sympy.Rational(1, 10)]]))
    assert m[0, 0] == arb(float(np.float32(0.1)))  # stored as the float32 nearest 0.1, exactly


def test_every_bundled_model_runs_inside_its_float32_enclosure() -> None:
    """symtf's own numpy simulation is a guide; it must never leave the certified enclosure."""
    from pathlib import Path

    from symtf.checking.framework import simulate

    root = Path(__file__).resolve().parent.parent / "derivations"
    checked = 0
    for f in sorted(root.glob("*.toml")):
        d = spec.load(f)
        enc, sim = enclose(d, "float32"), simulate(d, "float32")
        if enc is None or sim is None:
            continue
        for name in enc:
            v, w = enc.value(name), sim.value(name)
            if isinstance(v, tuple) or v is None or len(v.shape) != 2:
                continue  # words, and N-D user steps (their 2-D slices are claims' business)
            n, m = v.shape
            for i in range(n):
                for j in range(m):
                    if np.isfinite(float(w[i, j])):
                        assert _contains(v[i, j], float(w[i, j])), (f.name, name, i, j)
                        checked += 1
    assert checked > 1000


def test_run_with_format_backend_needs_the_same_ops() -> None:
    # The format backend is a drop-in number system for the pipeline.
    d = _standalone("relu", "-0.5 0.25 0")
    with FormatBallBackend("float32") as xp:
        t = run(d, xp)
    assert [t.value("s")[0, j] for j in range(3)] == [arb(0), arb(0.25), arb(0)]


@pytest.mark.parametrize("fmt", ["float32", "float16", "bfloat16"])
def test_one_step_from_its_inputs_lies_in_the_step_enclosure(fmt: str) -> None:
    """logits = last · Eᵀ computed by numpy in the format from the stored inputs."""
    from pathlib import Path

    from symtf.backends import BallBackend
    from symtf.checking.framework import enclose_step

    d = spec.load(Path(__file__).resolve().parent.parent / "derivations" / "i_love_ai.toml")
    with BallBackend(128) as xp:
        base = run(d, xp)
    t = enclose_step(d, fmt, "logits", base)
    assert t is not None
    last = np.array([[float(base.value("last")[0, j].mid()) for j in range(d.model.d_model)]])
    w = np.array([[float(e) for e in d.model.unembed.row(i)] for i in range(d.model.unembed.rows)])
    r = lambda a: as_fmt(a, fmt)  # noqa: E731
    if fmt == "bfloat16":  # bfloat16 products accumulate in float32, then round once
        sim = r(r(last).astype(np.float32) @ r(w).astype(np.float32))
    else:
        sim = r(r(last) @ r(w))
    for j in range(sim.shape[1]):
        b = t.value("logits")[0, j]
        assert _contains(b, sim[0, j]), (j, sim[0, j], b)
        assert float(b.rad()) < 50 * float(FORMATS[fmt].u) * 4  # one step: a few units, not a chain
