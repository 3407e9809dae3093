"""Small step derivations end to end, against values computed independently with mpmath.

Each derivation in ``tests/steps/`` was constructed by hand; the expected
verdicts follow from how it was built, and the exact values are recomputed
here with mpmath at 40 digits (never taken from symtf).
"""

from __future__ import annotations

import json
from pathlib import Path

import mpmath
import pytest

import symtf
from symtf.backends import BallBackend, FloatBackend
from symtf.graph.tensor import Tensor

HERE = Path(__file__).resolve().parent / "steps"
mpmath.mp.dps = 40
mpf = mpmath.mpf


def checks(name: str) -> list[dict]:
    report = symtf.check(symtf.load(HERE / name))
    return json.loads(symtf.render(report, "json"))["derivations"][0]["checks"]


def agree(decimal: str, want: mpmath.mpf, digits: int = 15) -> bool:
    return abs(mpf(decimal.rstrip("…")) - want) < mpf(10) ** -digits


def test_biased_std_print_is_found_as_a_convention() -> None:
    cs = checks("ln_biased_print.toml")
    x = [mpf(1), mpf(2), mpf(3), mpf(6)]
    sd = mpmath.sqrt(sum((v - 3) ** 2 for v in x) / 3)
    by = {(c["claim"], tuple(c["index"])): c for c in cs}
    assert by[("mean", (0, 0))]["verdict"] == "exact"
    assert by[("unbiased std", (0, 0))]["verdict"] == "rounded"
    assert agree(by[("unbiased std", (0, 0))]["exact"], sd)
    off = [c for c in cs if c["claim"].startswith("standardised")]
    for k, c in enumerate(off):
        assert agree(c["exact"], (x[k] - 3) / sd)
        if k == 2:
            assert c["verdict"] == "exact"  # 0 is 0 under either convention
            continue
        assert c["verdict"] == "wrong"
        assert c["cause"] == "convention"
        assert c["convention"] == ["biased-variance@sd"]


def test_loss_from_rounded_probabilities_is_propagated_rounding() -> None:
    cs = checks("ffn_bce.toml")
    z = [mpf("0.75"), mpf("0.25")]  # by hand: h = [[0, 0, 1.5], [2.25, 1, 0]], z = h·w2
    p = [1 / (1 + mpmath.exp(-v)) for v in z]
    loss = -(mpmath.log(p[0]) + mpmath.log(1 - p[1])) / 2
    by = {c["claim"]: c for c in cs if c["claim"].startswith("loss")}
    c = next(iter(by.values()))
    assert agree(c["exact"], loss)
    assert c["verdict"] == "wrong"
    assert c["cause"] == "propagated-rounding"
    replay = -(mpmath.log(mpf("0.68")) + mpmath.log(1 - mpf("0.56"))) / 2
    assert mpmath.nstr(replay, 4) == "0.6033"  # how the printed loss was made
    probs = [c for c in cs if c["claim"] == "probabilities"]
    assert [c["verdict"] for c in probs] == ["rounded", "rounded"]
    for c, want in zip(probs, p, strict=True):
        assert agree(c["exact"], want)


def _recurrent_reference() -> dict[str, list[mpmath.mpf]]:
    E = [[1, 0], [0, 1], [1, 1]]
    tok = [2, 0, 1, 2]
    K = [[1, 0], [0, 1], [1, -1]]
    V = [[1, 0], [0, 1], [2, 2]]
    out = {"ctx[0]": [mpf(0), mpf(0)]}
    for t in range(1, 4):
        s = [mpf("0.5") * E[tok[t]][j] + mpf("0.5") * out[f"ctx[{t - 1}]"][j] for j in range(2)]
        scores = [sum(K[i][j] * s[j] for j in range(2)) for i in range(3)]
        e = [mpmath.exp(v) for v in scores]
        a = [v / sum(e) for v in e]
        out[f"state[{t}]"] = s
        out[f"ctx[{t}]"] = [sum(a[i] * V[i][j] for i in range(3)) for j in range(2)]
    return out


def test_recurrent_state_against_mpmath_in_every_backend() -> None:
    ref = _recurrent_reference()
    d = symtf.load(HERE / "recurrent.toml")
    assert [s.name for s in d.steps] == [
        "ctx[0]",
        "state[1]",
        "ctx[1]",
        "state[2]",
        "ctx[2]",
        "state[3]",
        "ctx[3]",
    ]
    exact = symtf.run(d)
    with BallBackend(128) as xp:
        balls = symtf.run(d, xp)
    floats = symtf.run(d, FloatBackend())
    for name, want in ref.items():
        for j, w in enumerate(want):
            e = exact.backend.ball(exact.value(name)[0, j], 160)
            assert abs(mpf(e.mid().str(45, radius=False)) - w) < mpf(10) ** -30
            b = balls.value(name)[0, j]
            assert (
                abs(mpf(b.mid().str(40, radius=False)) - w)
                <= mpf(b.rad().str(5, radius=False)) + mpf(10) ** -35
            )
            assert abs(floats.value(name)[0, j] - float(w)) < 1e-12
    cs = checks("recurrent.toml")
    last = [c for c in cs if c["step"] == "ctx[3]"]
    assert agree(last[0]["exact"], ref["ctx[3]"][0]) and last[0]["verdict"] == "rounded"
    assert agree(last[1]["exact"], ref["ctx[3]"][1]) and last[1]["verdict"] == "slip"
    assert last[1]["index"] == [0, 1]


def test_batch_heads_claims_pick_slices_with_at() -> None:
    X = [[[1, 0, 1, 0], [0, 1, 0, 1]], [[2, 0, 0, 1], [0, 0, 1, 1]]]

    def q(b: int, h: int, s: int) -> list[int]:
        return X[b][s][2 * h : 2 * h + 2]

    def pattern(b: int, h: int) -> list[list[mpmath.mpf]]:
        rows = []
        for i in range(2):
            sc = [
                sum(x * y for x, y in zip(q(b, h, i), q(b, h, j), strict=True)) / mpmath.sqrt(2)
                for j in range(2)
            ]
            e = [mpmath.exp(v) for v in sc]
            rows.append([v / sum(e) for v in e])
        return rows

    cs = checks("batch_heads.toml")
    pat = [c for c in cs if c["step"] == "pattern"]
    assert [c["index"] for c in pat] == [[1, 0, 0, 0], [1, 0, 0, 1], [1, 0, 1, 0], [1, 0, 1, 1]]
    want = pattern(1, 0)
    for c in pat:
        i, j = c["index"][2:]
        assert agree(c["exact"], want[i][j])
        assert c["verdict"] in ("exact", "rounded")
    # merged[0, 1, 3] is head 1, row 1, feature 1 of batch 0: z = pattern @ q
    p = pattern(0, 1)
    z = sum(p[1][j] * q(0, 1, j)[1] for j in range(2))
    merged = next(c for c in cs if c["step"] == "merged")
    assert merged["index"] == [0, 1, 3] and agree(merged["exact"], z)
    d = symtf.load(HERE / "batch_heads.toml")
    t = symtf.run(d)
    assert isinstance(t.value("heads"), Tensor) and t.shape("heads") == (2, 2, 2, 2)
    assert t.value("heads") == t.value("q")  # split_heads is view + transpose


def test_a_file_without_model_with_minus_infinity_mask(tmp_path: Path) -> None:
    path = tmp_path / "mask.toml"
    path.write_text(
        '''title = "masked scores"
[tensors]
S = """
1 -inf
2 0
"""
[steps]
A = "softmax(S)"
L = "log_softmax(S, axis=-1)"
[[claims]]
label = "weights"
step = "A"
printed = """
1 0
0.8808 0.1192
"""
'''
    )
    cs = checks(path)
    assert [c["verdict"] for c in cs] == ["exact", "exact", "rounded", "rounded"]
    assert cs[1]["exact"] == "0"
    assert agree(cs[2]["exact"], mpmath.exp(2) / (mpmath.exp(2) + 1))


@pytest.mark.parametrize(
    "name", ["ln_biased_print.toml", "ffn_bce.toml", "recurrent.toml", "batch_heads.toml"]
)
def test_float_and_ball_runs_agree_with_exact(name: str) -> None:
    d = symtf.load(HERE / name)
    exact = symtf.run(d)
    floats = symtf.run(d, FloatBackend())
    for s in d.steps:
        v, f = exact.value(s.name), floats.value(s.name)
        if isinstance(v, Tensor):
            pairs = zip(v.data, f.data, strict=True)
        else:
            pairs = ((v[i, j], f[i, j]) for i in range(v.rows) for j in range(v.cols))
        for e, x in pairs:
            assert abs(float(exact.backend.ball(e, 128).mid()) - float(x)) < 1e-9
