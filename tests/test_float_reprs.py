"""Prints of full-precision floats: Python's and numpy's float64 reprs, float16 and bfloat16.

Every expected value comes from a real run of the constructed case (Python floats,
numpy float64/float16, and bfloat16 rounded here bit by bit), never from symtf. With
``computed_in`` the run's print is accepted, saying why; without it the verdict stays
strict (the exact value decides).
"""

from __future__ import annotations

import dataclasses
import math
import random
import struct
from fractions import Fraction
from pathlib import Path

import numpy as np
import pytest

from symtf import spec
from symtf.checking.compare import check
from symtf.numbers import parse_printed

GOOD = ("exact", "rounded")
ROOT = Path(__file__).resolve().parent.parent


def _verdicts(text: str) -> dict[str, object]:
    return {c.claim: c for c in check(spec.loads(text)).checks}


# ----------------------------------------------------------------------------- certified comparison


def test_16_decimal_prints_of_a_layernorm_are_decided() -> None:
    # The reference (mpmath, 60 digits) rounded to 16 decimals: every entry is a correct
    # rounding, and a print one unit off is a slip; none may be left undecided because a
    # boundary like 0.4929313592373927 was compared with the value at 53 bits.
    from reference_model import forward, i_love_ai_weights, round_half_up

    ref = forward(i_love_ai_weights())["l0.ln1"]
    d = spec.load(ROOT / "derivations" / "i_love_ai.toml")
    rows = []
    for i in range(3):
        rows.append(" ".join(round_half_up(v, 16) for v in ref[i]))
    from reference_model import to_fraction

    r = Fraction(round_half_up(ref[1][3], 16))
    # the other neighbour on the grid, toward the exact value: within one unit, a slip
    one_off = r + Fraction(1, 10**16) * (1 if to_fraction(ref[1][3]) > r else -1)
    printed = "\n".join(rows)
    claims = spec.loads(
        f'title = "t"\n[tensors]\nx = ["1"]\n[[claims]]\nlabel = "Y"\nstep = "x"\n'
        f'printed = """\n{printed}\n"""\n[[claims]]\nlabel = "one off"\nstep = "x"\n'
        f'index = [1, 3]\nprinted = "{float(one_off):.16f}"\n'
    ).claims
    claims = tuple(dataclasses.replace(c, step="l0.ln1") for c in claims)
    report = check(dataclasses.replace(d, claims=claims))
    verdicts = [c.verdict for c in report.checks if c.claim == "Y"]
    assert verdicts and all(v in GOOD for v in verdicts), verdicts
    assert [c.verdict for c in report.checks if c.claim == "one off"] == ["slip"]


def test_a_17_digit_float64_print_is_a_slip_against_the_exact_value() -> None:
    # exp(0.1) = 1.10517091807564762481…: numpy prints the float64 result 1.1051709180756477,
    # 0.75 units above the exact value; the correct 16-decimal rounding is …476.
    assert repr(math.exp(0.1)) == "1.1051709180756477"
    text = """title = "exp"
[tensors]
x = { shape = [], values = "0.1" }
[steps]
e = "exp(x)"
[[claims]]
label = "float64 print"
step = "e"
printed = "1.1051709180756477"
[[claims]]
label = "correct rounding"
step = "e"
printed = "1.1051709180756476"
"""
    got = _verdicts(text)
    assert got["float64 print"].verdict == "slip"
    assert got["float64 print"].expected == "1.1051709180756476"
    assert got["correct rounding"].verdict == "rounded"
    got = _verdicts(text.replace('title = "exp"', 'title = "exp"\ncomputed_in = "float64"'))
    assert got["float64 print"].verdict == "rounded"
    assert got["float64 print"].extra["accepted_by"] == "computed_in"


# ----------------------------------------------------------------------------- shortest reprs


@pytest.mark.parametrize("seed", range(3))
def test_shortest_repr_is_what_python_and_numpy_print(seed: int) -> None:
    from symtf.backends.format_print import shortest_repr
    from symtf.backends.formats import FORMATS

    rng = random.Random(seed)
    for _ in range(2000):
        x = rng.random() * 10 ** rng.randint(-12, 12) * rng.choice((1, -1))
        assert shortest_repr(Fraction(x), FORMATS["float64"])[0] == Fraction(repr(x))
        f32 = np.float32(x)
        assert shortest_repr(Fraction(float(f32)), FORMATS["float32"])[0] == Fraction(str(f32))
        f16 = np.float16(rng.random() * rng.choice((1, 100, 1e-3)))
        assert shortest_repr(Fraction(float(f16)), FORMATS["float16"])[0] == Fraction(str(f16))


def test_simulated_print_tells_repr_from_digits() -> None:
    from symtf.backends.format_print import simulated_print
    from symtf.backends.formats import FORMATS

    x = math.exp(0.1)
    f64 = FORMATS["float64"]
    assert simulated_print(x, parse_printed("1.1051709180756477"), f64) == (
        "its shortest round-trip repr"
    )
    # numpy's array print, 8 decimals of the binary value
    assert simulated_print(x, parse_printed("1.10517092"), f64) == (
        "its digits at the printed precision"
    )
    assert simulated_print(x, parse_printed("1.1051709180756476"), f64) is None


# ----------------------------------------------------------------------------- float64 runs


def _recurrence(setting: str) -> str:
    s = [0.5]
    for _ in range(40):
        s.append(s[-1] * 1.1 + 0.1)  # Python floats: float64, one rounding per operation
    text = f"""title = "a recurrence"
{setting}
[tensors]
s0 = {{ shape = [], values = "0.5" }}
[steps]
"s[0]" = "s0"
"s[t]" = {{ expr = "s[t-1] * 1.1 + 0.1", t = [1, 40] }}
"""
    for t in (10, 20, 30, 40):
        text += f'[[claims]]\nlabel = "s{t}"\nstep = "s[{t}]"\nprinted = "{s[t]!r}"\n'
    return text


def test_float64_reprs_of_a_long_chain_are_accepted_as_the_runs_value() -> None:
    got = _verdicts(_recurrence('computed_in = "float64"'))
    for label in ("s10", "s20", "s30", "s40"):
        c = got[label]
        assert c.verdict == "rounded", c.explanation
        assert c.extra["accepted_by"] == "computed_in"
    # the error of forty steps is beyond one step's rounding from exact inputs: the
    # numpy run's own value, inside the certified range of the whole computation, says so
    c = got["s40"]
    assert "is its shortest round-trip repr" in c.explanation
    lo, hi = map(Fraction, c.extra["enclosure_whole"])
    assert lo <= Fraction(c.printed) <= hi


def test_float64_reprs_stay_flagged_without_the_setting() -> None:
    got = _verdicts(_recurrence(""))
    assert all(got[f"s{t}"].verdict == "wrong" for t in (10, 20, 30, 40))


def test_float64_masked_attention_is_enclosed() -> None:
    q = np.array([[1.0, 0.0], [0.5, 1.0], [1.0, 1.0]])
    scores = q @ q.T / math.sqrt(2)
    scores[np.triu_indices(3, 1)] = -np.inf
    e = np.exp(scores - scores.max(axis=1, keepdims=True))
    p = e / e.sum(axis=1, keepdims=True)
    rows = "\n".join(" ".join("-inf" if v == -np.inf else repr(float(v)) for v in r) for r in p)
    text = f'''title = "masked"
computed_in = "float64"
[tensors]
Q = """
1 0
0.5 1
1 1
"""
[steps]
s = "(Q @ Q.T + causal_mask(3)) / sqrt(2)"
a = "softmax(s, axis=-1)"
[[claims]]
label = "weights"
step = "a"
printed = """
{rows}
"""
'''
    report = check(spec.loads(text))
    assert all(c.verdict in GOOD for c in report.checks), [c.explanation for c in report.checks]
    assert not any("could not be certified" in c.explanation for c in report.checks)


def test_float64_three_d_step_is_checked() -> None:
    x = np.array([[[0.1, 0.7], [-0.3, 0.2]], [[0.9, -0.4], [0.6, 0.6]]])
    e = np.exp(x - x.max(axis=-1, keepdims=True))
    p = e / e.sum(axis=-1, keepdims=True)
    text = """title = "batch"
computed_in = "float64"
[tensors]
X = { shape = [2, 2, 2], values = "0.1 0.7 -0.3 0.2 0.9 -0.4 0.6 0.6" }
[steps]
P = "softmax(X, axis=-1)"
"""
    for b in range(2):
        rows = "\n".join(" ".join(repr(float(v)) for v in r) for r in p[b])
        text += (
            f'[[claims]]\nlabel = "batch {b}"\nstep = "P"\nat = [{b}]\nprinted = """\n{rows}\n"""\n'
        )
    report = check(spec.loads(text))
    assert all(c.verdict in GOOD for c in report.checks), [c.explanation for c in report.checks]


def test_float64_step_indexed_by_a_computed_integer() -> None:
    emb = [[1.0, 0.0], [0.0, 1.0], [1.0, 1.0]]
    tok = [2, 0, 1]
    h = [0.0, 0.0]
    out = []
    for t in (1, 2):
        e = emb[tok[t]]
        h = [0.7 * a + 0.3 * b for a, b in zip(e, h, strict=True)]
        h = [math.tanh(v) for v in h]
        out.append(h)
    text = '''title = "recurrent"
computed_in = "float64"
[tensors]
E = """
1 0
0 1
1 1
"""
tok = ["2", "0", "1"]
[steps]
"h[0]" = "zeros(2)"
"h[t]" = { expr = "tanh(0.7*E[tok[t]] + 0.3*h[t-1])", t = [1, 2] }
'''
    for t in (1, 2):
        shown = " ".join(repr(v) for v in out[t - 1])
        text += f'[[claims]]\nlabel = "h{t}"\nstep = "h[{t}]"\nprinted = "{shown}"\n'
    report = check(spec.loads(text))
    assert not any("could not be certified" in c.explanation for c in report.checks)
    assert all(c.verdict in GOOD for c in report.checks), [c.explanation for c in report.checks]


# ----------------------------------------------------------------------------- float16, bfloat16


def _softmax_file(fmt: str, printed: str) -> str:
    return f"""title = "softmax in {fmt}"
computed_in = "{fmt}"
[tensors]
x = ["1.25", "-0.5", "2.0", "0.375"]
[steps]
p = "softmax(x)"
[[claims]]
label = "p"
step = "p"
printed = "{printed}"
"""


def test_float16_prints_are_accepted_and_a_moved_one_is_not() -> None:
    x = np.array([1.25, -0.5, 2.0, 0.375], dtype=np.float16)
    e = np.exp(x - x.max())
    p = e / e.sum()
    assert p.dtype == np.float16
    shown = [str(v) for v in p]  # numpy's shortest float16 digits: 0.2698 0.04688 …
    report = check(spec.loads(_softmax_file("float16", " ".join(shown))))
    assert all(c.verdict in GOOD for c in report.checks), [c.explanation for c in report.checks]
    moved = list(shown)
    moved[2] = f"{float(p[2]) + 0.01:.4f}"
    report = check(spec.loads(_softmax_file("float16", " ".join(moved))))
    assert [c.index for c in report.checks if c.verdict not in GOOD] == [(0, 2)]


def _bf16(x: float) -> float:
    """Round to bfloat16 (nearest, ties to even) through the float32 bit pattern."""
    (bits,) = struct.unpack("<I", struct.pack("<f", x))
    bits = ((bits + 0x7FFF + ((bits >> 16) & 1)) >> 16) << 16
    return struct.unpack("<f", struct.pack("<I", bits & 0xFFFFFFFF))[0]


def test_bfloat16_prints_are_accepted() -> None:
    # a framework's bfloat16 softmax: stored inputs, then each operation rounded
    x = [_bf16(v) for v in (1.25, -0.5, 2.0, 0.375)]
    m = max(x)
    e = [_bf16(math.exp(_bf16(v - m))) for v in x]
    total = 0.0
    for v in e:
        total = _bf16(total + v)
    p = [_bf16(v / total) for v in e]
    shown = " ".join(f"{v:.4f}" for v in p)  # as torch prints a bfloat16 tensor
    report = check(spec.loads(_softmax_file("bfloat16", shown)))
    assert all(c.verdict in GOOD for c in report.checks), [c.explanation for c in report.checks]
    flagged = check(
        spec.loads(_softmax_file("bfloat16", shown).replace('computed_in = "bfloat16"', ""))
    )
    assert any(c.verdict not in GOOD for c in flagged.checks)  # the exact value alone flags it


def _short_recurrence(fmt: str, printed: list[str]) -> str:
    text = f"""title = "a recurrence in {fmt}"
computed_in = "{fmt}"
[tensors]
s0 = {{ shape = [], values = "0.5" }}
[steps]
"s[0]" = "s0"
"s[t]" = {{ expr = "s[t-1] * 1.1 + 0.1", t = [1, 12] }}
"""
    for t, shown in zip((4, 8, 12), printed, strict=True):
        text += f'[[claims]]\nlabel = "s{t}"\nstep = "s[{t}]"\nprinted = "{shown}"\n'
    return text


def test_float16_run_of_a_chain_is_accepted_as_the_runs_value() -> None:
    s = [np.float16(0.5)]
    for _ in range(12):
        s.append(s[-1] * np.float16(1.1) + np.float16(0.1))  # numpy float16 arithmetic
    assert s[-1].dtype == np.float16
    shown = [str(s[t]) for t in (4, 8, 12)]
    report = check(spec.loads(_short_recurrence("float16", shown)))
    assert all(c.verdict in GOOD for c in report.checks), [c.explanation for c in report.checks]
    assert any(
        "a numpy float16 run of the whole computation gives" in c.explanation for c in report.checks
    )


def test_bfloat16_run_of_a_chain_is_accepted_as_the_runs_value() -> None:
    s = [_bf16(0.5)]
    for _ in range(12):
        s.append(_bf16(_bf16(s[-1] * _bf16(1.1)) + _bf16(0.1)))
    shown = [f"{s[t]:.4f}" for t in (4, 8, 12)]  # torch's print of a bfloat16 tensor
    report = check(spec.loads(_short_recurrence("bfloat16", shown)))
    assert all(c.verdict in GOOD for c in report.checks), [c.explanation for c in report.checks]
    # Each print is the run's value: accepted either from the step's own certified range
    # or as the run's value inside the range of every result, and the run is named.
    assert all("a numpy bfloat16 run" in c.explanation for c in report.checks)
