"""``symtf derive NAME --at FILE:STEP`` reads the right quantity; values recomputed in mpmath.

A stand-alone softmax step is a softmax *output*: its Jacobian is that of the
softmax of its input row (not of the softmax of the already-softmaxed row). A
LayerNorm/RMSNorm output is differentiated at its input row, with the norm's own
ε and variance; a GELU output at its input row.
"""

from __future__ import annotations

from pathlib import Path

import mpmath
import pytest

from symtf import derive
from symtf.cli import main

ARTICLE = Path(__file__).resolve().parent.parent / "derivations" / "i_love_ai.toml"

TOML = '''title = "stand-alone steps"
[model]
architecture = "none"
[[model.standalone]]
name = "sm"
op = "softmax"
input = """
1 2 0.5
0 -1 3
"""
[[model.standalone]]
name = "ln"
op = "layernorm"
eps = "0.1"
variance = "unbiased"
input = "1 2 4 7"
[[model.standalone]]
name = "lnb"
op = "layernorm"
eps = "0"
input = "1 2 4 7"
[[model.standalone]]
name = "rms"
op = "rmsnorm"
eps = "0.01"
input = "1 -2 3"
[[model.standalone]]
name = "g"
op = "gelu"
input = "-1 0.5 2"
'''


@pytest.fixture(scope="module")
def path(tmp_path_factory: pytest.TempPathFactory) -> Path:
    p = tmp_path_factory.mktemp("at") / "steps.toml"
    p.write_text(TOML)
    return p


def mp(*xs: str) -> list[mpmath.mpf]:
    return [mpmath.mpf(x) for x in xs]


def softmax(z: list[mpmath.mpf]) -> list[mpmath.mpf]:
    e = [mpmath.exp(v) for v in z]
    return [v / sum(e) for v in e]


def assert_close(decimals: tuple[tuple[str, ...], ...], want: list[list[mpmath.mpf]]) -> None:
    assert len(decimals) == len(want)
    for got_row, want_row in zip(decimals, want, strict=True):
        assert len(got_row) == len(want_row)
        for g, w in zip(got_row, want_row, strict=True):
            assert abs(mpmath.mpf(g.rstrip("…")) - w) <= mpmath.mpf("1e-10") * max(1, abs(w)), (
                g,
                w,
            )


def quantity(r: derive.Result, label_start: str):  # type: ignore[no-untyped-def]
    assert r.at is not None
    return next(q for q in r.at.quantities if q.label.startswith(label_start))


def test_softmax_jacobian_of_a_standalone_softmax_uses_its_input(path: Path) -> None:
    r = derive.run("softmax-jacobian", n=2, at=f"{path}:sm[1]")
    with mpmath.workdps(40):
        s = softmax(mp("0", "-1", "3"))
        want = [[s[i] * ((1 if i == j else 0) - s[j]) for j in range(3)] for i in range(3)]
    assert_close(quantity(r, "J").decimals, want)
    assert "input of the softmax sm" in r.at.description
    assert r.ok  # includes the check softmax(z) = row 1 of sm


def test_softmax_jacobian_of_a_softmax_input_row(path: Path) -> None:
    r = derive.run("softmax-jacobian", n=2, at=f"{path}:sm.input[0]")
    with mpmath.workdps(40):
        s = softmax(mp("1", "2", "0.5"))
    assert_close(quantity(r, "s").decimals, [s])
    assert "taken as the softmax input" in r.at.description


def test_cross_entropy_gradient_of_a_standalone_softmax(path: Path) -> None:
    r = derive.run("softmax-cross-entropy", n=2, at=f"{path}:sm[0]")
    with mpmath.workdps(40):
        s = softmax(mp("1", "2", "0.5"))
        g = [s[j] - (1 if j == 1 else 0) for j in range(3)]  # target: the largest weight, index 1
    assert_close(quantity(r, "dL/dz").decimals, [g])


def _ln_jacobian(x: list[mpmath.mpf], eps: mpmath.mpf, m: int) -> list[list[mpmath.mpf]]:
    n = len(x)
    mean = sum(x) / n
    c = [v - mean for v in x]
    sigma = mpmath.sqrt(sum(v * v for v in c) / m + eps)
    # differentiate y_i = c_i / sigma numerically-free: closed form from the definition
    out = []
    for i in range(n):
        row = []
        for j in range(n):
            dc = (1 if i == j else 0) - mpmath.mpf(1) / n
            dsigma = c[j] / (m * sigma)
            row.append(dc / sigma - c[i] * dsigma / sigma**2)
        out.append(row)
    return out


def _ln_by_differences(x: list[mpmath.mpf], eps: mpmath.mpf, m: int) -> list[list[mpmath.mpf]]:
    """Independent: central differences of the LayerNorm map at 60 digits."""

    def f(v: list[mpmath.mpf]) -> list[mpmath.mpf]:
        mean = sum(v) / len(v)
        c = [a - mean for a in v]
        s = mpmath.sqrt(sum(a * a for a in c) / m + eps)
        return [a / s for a in c]

    h = mpmath.mpf("1e-25")
    n = len(x)
    cols = []
    for j in range(n):
        up = [x[k] + (h if k == j else 0) for k in range(n)]
        dn = [x[k] - (h if k == j else 0) for k in range(n)]
        cols.append([(a - b) / (2 * h) for a, b in zip(f(up), f(dn), strict=True)])
    return [[cols[j][i] for j in range(n)] for i in range(n)]


@pytest.mark.parametrize("step", ["ln[0]", "ln.std[0]", "ln.input[0]"])
def test_layernorm_jacobian_at_the_norms_input_with_its_eps_and_variance(
    path: Path, step: str
) -> None:
    r = derive.run("layernorm-jacobian", n=2, at=f"{path}:{step}")
    with mpmath.workdps(60):
        x = mp("1", "2", "4", "7")
        want = _ln_by_differences(x, mpmath.mpf("0.1"), 3)  # unbiased: divide by n - 1
        assert mpmath.almosteq(want[0][1], _ln_jacobian(x, mpmath.mpf("0.1"), 3)[0][1], 1e-30)
    if step == "ln.input[0]":
        # the input row itself is taken as the norm's input: the model's eps (0), biased
        assert "taken as the norm's input" in r.at.description
        return
    assert_close(quantity(r, "J").decimals, want)
    assert "eps = 1/10, unbiased variance" in r.at.description


def test_layernorm_jacobian_biased(path: Path) -> None:
    r = derive.run("layernorm-jacobian", n=2, at=f"{path}:lnb[0]")
    with mpmath.workdps(60):
        want = _ln_by_differences(mp("1", "2", "4", "7"), mpmath.mpf(0), 4)
    assert_close(quantity(r, "J").decimals, want)


def test_rmsnorm_jacobian_at_the_norms_input(path: Path) -> None:
    r = derive.run("rmsnorm-jacobian", n=2, at=f"{path}:rms[0]")
    with mpmath.workdps(60):
        x = mp("1", "-2", "3")
        eps = mpmath.mpf("0.01")

        def f(v: list[mpmath.mpf]) -> list[mpmath.mpf]:
            rr = mpmath.sqrt(sum(a * a for a in v) / 3 + eps)
            return [a / rr for a in v]

        h = mpmath.mpf("1e-25")
        want = [
            [
                (
                    f([x[k] + (h if k == j else 0) for k in range(3)])[i]
                    - f([x[k] - (h if k == j else 0) for k in range(3)])[i]
                )
                / (2 * h)
                for j in range(3)
            ]
            for i in range(3)
        ]
    assert_close(quantity(r, "J").decimals, want)
    assert "the input of the norm rms" in r.at.description


def test_gelu_at_a_gelu_output_uses_its_input(path: Path) -> None:
    r = derive.run("gelu", n=None, at=f"{path}:g[0]")
    with mpmath.workdps(40):
        x = mp("-1", "0.5", "2")
        g = [v / 2 * (1 + mpmath.erf(v / mpmath.sqrt(2))) for v in x]
        dg = [mpmath.diff(lambda t: t / 2 * (1 + mpmath.erf(t / mpmath.sqrt(2))), v) for v in x]
    assert_close(quantity(r, "GELU(x)").decimals, [g])
    assert_close(quantity(r, "GELU'(x)").decimals, [dg])
    assert "input of the activation g" in r.at.description


def test_article_layernorm_output_reads_the_residual_row() -> None:
    a = derive.run("layernorm-jacobian", n=2, at=f"{ARTICLE}:l0.ln1[2]")
    b = derive.run("layernorm-jacobian", n=2, at=f"{ARTICLE}:l0.resid_mid[2]")
    assert "row 2 of l0.resid_mid (the input of the norm l0.ln1)" in a.at.description
    assert quantity(a, "J").decimals == quantity(b, "J").decimals


def test_cli_says_which_quantity_it_took(path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["derive", "softmax-jacobian", "--n", "2", "--at", f"{path}:sm[1]"]) == 0
    out = capsys.readouterr().out
    assert "z = row 1 of sm.input (the input of the softmax sm)" in out
