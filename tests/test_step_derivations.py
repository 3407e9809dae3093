"""Small step derivations end to end, against values computed independently with mpmath.

Each derivation in ``tests/steps/`` was constructed by hand; the expected
verdicts follow from how it was built, and the exact values are recomputed
here with mpmath at 40 digits (never taken from symtf).
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import mpmath
import pytest

import symtf
from symtf.backends import BallBackend, FloatBackend
from symtf.tensor import Tensor

HERE = Path(__file__).resolve().parent / "steps"


@pytest.fixture(autouse=True)
def _digits() -> Iterator[None]:
    """40 digits for mpmath inside each test; the global precision is left alone."""
    with mpmath.workdps(40):
        yield


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
    by = {(c["claim"], tuple(c["entry"] or ())): c for c in cs}  # a scalar's entry is []
    assert by[("mean", ())]["verdict"] == "exact"
    assert by[("unbiased std", ())]["verdict"] == "rounded"
    assert agree(by[("unbiased std", ())]["exact"], sd)
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
    # ctx[3] is a vector: held as one row in index (contract 1), its own index in entry
    assert last[1]["index"] == [0, 1] and last[1]["entry"] == [1]


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


def test_the_readme_example_checks_out(tmp_path: Path) -> None:
    text = (HERE.parent.parent / "README.md").read_text()
    start = text.index('title = "Self-attention without projections')
    path = tmp_path / "readme.toml"
    path.write_text(text[start : text.index("```", start)])
    cs = checks(path)
    assert {c["verdict"] for c in cs} <= {"exact", "rounded"}
    # by hand: scores = X·Xᵀ = [[2, 1], [1, 2]], masked, ÷√3: row 1 weights 1/(1 + e^{1/√3})
    w = 1 / (1 + mpmath.exp(1 / mpmath.sqrt(3)))
    assert agree(next(c for c in cs if c["index"] == [1, 0])["exact"], w)


def test_one_row_under_another_convention_is_found_for_that_row() -> None:
    cs = checks("row_unscaled.toml")
    row0 = [c for c in cs if c["index"][0] == 0]
    row1 = [c for c in cs if c["index"][0] == 1]
    # by hand: row 0 is 1/(1 + e^{1/√2}) and its complement; row 1 was printed as softmax([0, 2])
    w0 = 1 / (1 + mpmath.exp(1 / mpmath.sqrt(2)))
    assert agree(row0[0]["exact"], w0) and [c["verdict"] for c in row0] == ["rounded"] * 2
    assert mpmath.nstr(1 / (1 + mpmath.exp(2)), 4) == "0.1192"  # how row 1 was made
    for c in row1:
        assert c["verdict"] == "wrong"
        assert c["cause"] == "convention"
        assert c["convention"] == ["no-sqrt-dk@scaled"]
        assert "row 2" in c["explanation"]  # the second row, counted from 1 as a reader counts


def test_symbols_in_given_tensors_run_exactly(tmp_path: Path) -> None:
    path = tmp_path / "sym.toml"
    path.write_text(
        'title = "s"\n[tensors]\nW = """\na 1\n0 2\n"""\nx = ["1", "3"]\n'
        '[steps]\ny = "W @ x"\nr = "relu(y - 10)"\n'
    )
    import sympy

    t = symtf.run(symtf.load(path))
    a = sympy.Symbol("a", real=True)
    assert t.value("y")[0, 0] == a + 3 and t.value("y")[0, 1] == 6
    assert t.value("r")[0, 1] == 0  # 6 - 10 < 0: a certified branch
    assert t.value("r")[0, 0] == sympy.Max(0, a - 7)  # undecidable with a symbol: kept symbolic


def _printed(values: list[mpmath.mpf], digits: int = 4) -> str:
    from decimal import ROUND_HALF_UP, Decimal

    step = Decimal(1).scaleb(-digits)
    return " ".join(
        str(Decimal(mpmath.nstr(v, 40)).quantize(step, rounding=ROUND_HALF_UP)) for v in values
    )


E1 = mpmath.e


@pytest.mark.parametrize(
    ("convention", "tensors", "steps", "step", "printed"),
    [
        (
            "weights-left@y",  # x·Wᵀ by hand: [[1·1+2·2, 1·3+2·4], [0·1+1·2, 0·3+1·4]]
            'X = """\n1 2\n0 1\n"""\nW = """\n1 2\n3 4\n"""',
            'y = "X @ W"',
            "y",
            '"""\n5 11\n2 4\n"""',
        ),
        (
            "softmax-columns@alpha",  # columns of [[1, 0], [2, 3]]: 1/(1+e), e/(1+e); 1/(1+e³), e³/(1+e³)
            'S = """\n1 0\n2 3\n"""',
            'alpha = "softmax(S)"',
            "alpha",
            '"""\n0.2689 0.0474\n0.7311 0.9526\n"""',
        ),
        (
            "unbiased-variance@sd",  # √(14/3) for (1, 2, 3, 6)
            'x = ["1", "2", "3", "6"]',
            'sd = "std(x)"',
            "sd",
            '"2.1602"',
        ),
        (
            "divide-by-dk@scaled",  # softmax([2, 6] / 4) = 1/(1+e), e/(1+e)
            'S = ["2", "6"]',
            'scaled = "S / sqrt(4)"\nalpha = "softmax(scaled)"',
            "alpha",
            '"0.2689 0.7311"',
        ),
    ],
)
def test_each_step_convention_is_found(
    tmp_path: Path, convention: str, tensors: str, steps: str, step: str, printed: str
) -> None:
    # the printed numbers, recomputed here under the alternative convention
    made = {
        "softmax-columns@alpha": [
            1 / (1 + E1),
            1 / (1 + E1**3),
            E1 / (1 + E1),
            E1**3 / (1 + E1**3),
        ],
        "unbiased-variance@sd": [mpmath.sqrt(mpf(14) / 3)],
        "divide-by-dk@scaled": [1 / (1 + E1), E1 / (1 + E1)],
    }
    if convention in made:
        assert _printed(made[convention]) == " ".join(printed.strip('"\n').split())
    path = tmp_path / "c.toml"
    path.write_text(
        f'title = "c"\n[tensors]\n{tensors}\n[steps]\n{steps}\n'
        f'[[claims]]\nlabel = "c"\nstep = "{step}"\nprinted = {printed}\n'
    )
    off = [c for c in checks(path) if c["verdict"] in ("slip", "wrong")]
    assert off
    for c in off:
        assert c["cause"] == "convention", c
        assert c["convention"] == [convention]


def test_diagnosis_on_slices_of_a_4d_step(tmp_path: Path) -> None:
    """Replay and printing conventions work on the 2-D slices of an N-D step."""
    text = (HERE / "batch_heads.toml").read_text().split("[[claims]]")[0]
    # batch 1, head 0: scores = [[4/√2, 0], [0, 0]]; printed to 2 decimals, 2.83 gives
    # softmax([2.83, 0]) = 0.94429…, printed 0.9443, while the exact weight is 0.94419…
    s = 4 / mpmath.sqrt(2)
    assert _printed([s], 2) == "2.83"
    assert _printed([1 / (1 + mpmath.exp(-mpf("2.83")))]) == "0.9443"
    assert _printed([1 / (1 + mpmath.exp(-s))]) == "0.9442"
    # batch 1, head 1: pattern [[0.5, 0.5], [0.3302, 0.6698]], printed transposed
    text += '''
[[claims]]
label = "scores b1 h0"
step = "scores"
at = [1, 0]
printed = """
2.83 0.00
0.00 0.00
"""

[[claims]]
label = "pattern b1 h0"
step = "pattern"
at = [1, 0]
printed = """
0.9443 0.0557
0.5000 0.5000
"""

[[claims]]
label = "pattern b1 h1 (transposed)"
step = "pattern"
at = [1, 1]
printed = """
0.5000 0.3302
0.5000 0.6698
"""
'''
    path = tmp_path / "bh.toml"
    path.write_text(text)
    cs = checks(path)
    b0 = [c for c in cs if c["claim"] == "pattern b1 h0" and c["verdict"] in ("slip", "wrong")]
    assert [c["index"] for c in b0] == [[1, 0, 0, 0], [1, 0, 0, 1]]
    # |0.9443 − 0.94419…| = 1.07 units of 1e-4: wrong by DESIGN's rule (≥ one unit), explained by replay.
    assert all(c["verdict"] == "wrong" and c["cause"] == "propagated-rounding" for c in b0)
    # the printed score it was recomputed from, in a reader's words: batch 1 head 0 is the
    # slice (2, 1) counted from 1, its first row and column
    assert "slice (2, 1), row 1, column 1 = 2.83" in b0[0]["explanation"]
    tr = [c for c in cs if c["claim"].endswith("(transposed)") and c["verdict"] == "wrong"]
    assert tr and all(c["cause"] == "transposed" and c["convention"] == [] for c in tr)


def test_a_given_x_is_the_input_of_the_attention_template(tmp_path: Path) -> None:
    root = HERE.parent.parent / "derivations" / "rope_toy.toml"
    text = root.read_text()
    start = text.index('embed = """')
    end = text.index('"""', start + 12) + 3
    block = text[start:end].replace("embed =", "x =", 1)
    moved = text[:start] + text[end:]
    moved = moved.replace("[model]", f"[tensors]\n{block}\n\n[model]", 1)
    moved += '\n[steps]\nxx = "x @ x.T"\n'
    path = tmp_path / "rope_x.toml"
    path.write_text(moved)
    given = checks(path)
    assert [(c["claim"], c["index"], c["verdict"]) for c in given] == [
        (c["claim"], c["index"], c["verdict"]) for c in checks(root)
    ]
    t = symtf.run(symtf.load(path))
    assert next(iter(t)) == "x" and t["xx"].inputs == ("x",)
    # by hand: x = [[1, 0, 1, 0], [0, 1, 0.5, 0.5]]
    assert t.value("xx").tolist() == [[2, sympy_half()], [sympy_half(), sympy_half() * 3]]
    both = tmp_path / "both.toml"
    both.write_text(text.replace("[model]", f"[tensors]\n{block}\n\n[model]", 1))
    with pytest.raises(symtf.SymtfError, match="given twice"):
        symtf.load(both)


def sympy_half() -> object:
    import sympy

    return sympy.Rational(1, 2)
