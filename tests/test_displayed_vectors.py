"""Displayed lines whose literals are vectors, negative results and exact values behind identities.

The cases are constructed with their own numbers; each expectation follows from the
construction (which exact values the literals stand for, and what they give).
"""

from __future__ import annotations

import random
from fractions import Fraction

from symtf import spec
from symtf.checking.compare import check

GOOD = ("exact", "rounded")


def _by_claim(text: str) -> dict[str, list]:
    out: dict[str, list] = {}
    for c in check(spec.loads(text)).checks:
        out.setdefault(c.claim, []).append(c)
    return out


# a, b and c print at one decimal as the three vectors of the line; their true sum is
# [1.853, 6.91, 1.53] (by hand), so the line's printed [2.0, 7.0, 1.5] is right only as
# displayed: 2.0 is 1.47 units off (wrong), 7.0 is 0.9 units off (a slip), 1.5 rounds 1.53.
VECTORS = """title = "a sum of rounded vectors"
[tensors]
a = ["-0.049", "-0.04", "0.03"]
b = ["0.951", "3.96", "0.04"]
c = ["0.951", "2.99", "1.46"]
[steps]
s = "a + b + c"
[[claims]]
label = "a"
step = "a"
printed = "-0.0 -0.0 0.0"
[[claims]]
label = "b"
step = "b"
printed = "1.0 4.0 0.0"
[[claims]]
label = "c"
step = "c"
printed = "1.0 3.0 1.5"
[[claims]]
label = "the sum, displayed"
expression = "[-0.0, -0.0, 0.0] + [1.0, 4.0, 0.0] + [1.0, 3.0, 1.5]"
printed = "[2.0, 7.0, 1.5]"
"""


def test_vector_literals_are_read_as_the_vectors_they_stand_for() -> None:
    line = _by_claim(VECTORS)["the sum, displayed"]
    assert [c.verdict for c in line] == ["wrong", "slip", "rounded"]
    assert [Fraction(c.exact) for c in line] == [
        Fraction("1.853"),
        Fraction("6.91"),
        Fraction("1.53"),
    ]
    reading = line[0].extra["exact_reading"]["stands_for"]
    assert reading == {"[-0.0, -0.0, 0.0]": "a", "[1.0, 4.0, 0.0]": "b", "[1.0, 3.0, 1.5]": "c"}
    # both ways: as displayed, the line is exactly what it prints
    assert all(c.extra["as_displayed"]["verdict"] == "exact" for c in line)


def test_a_vector_result_is_read_by_the_next_line() -> None:
    text = (
        VECTORS
        + """[[claims]]
label = "half the sum"
expression = "[2.0, 7.0, 1.5] / 2"
printed = "[0.93, 3.46, 0.77]"
"""
    )
    half = _by_claim(text)["half the sum"]
    # [1.853, 6.91, 1.53] / 2 = [0.9265, 3.455, 0.765]: ties at two decimals, either neighbour
    assert [c.verdict for c in half] == ["rounded", "rounded", "rounded"]
    # the literal row repeats the line "the sum, displayed": its label is the source
    assert half[0].extra["exact_reading"]["stands_for"] == {
        "[2.0, 7.0, 1.5]": "the sum, displayed"
    }


def test_a_negative_result_is_picked_up_by_the_next_line() -> None:
    # u − v = 0.30901699 − 0.89675841 = −0.58774142; the line printing it as −0.5878 is
    # right as displayed. The next line doubles that exact value: −1.17548284 → −1.1755,
    # while the displayed −0.5878 × 2 gives −1.1756.
    text = """title = "a negative result"
[tensors]
u = "0.30901699"
v = "0.89675841"
[steps]
w = "u - v"
[[claims]]
label = "difference"
expression = "0.3090 - 0.8968"
printed = "-0.5878"
[[claims]]
label = "doubled"
expression = "-0.5878 × 2"
printed = "-1.1755"
"""
    got = _by_claim(text)
    (diff,) = got["difference"]
    assert diff.extra["exact_reading"]["stands_for"] == {"0.3090": "u", "0.8968": "v"}
    (doubled,) = got["doubled"]
    assert doubled.verdict == "rounded"
    assert Fraction(doubled.exact) == Fraction("-1.17548284")
    assert doubled.extra["as_displayed"]["verdict"] == "wrong"


def test_exact_zeros_behind_identities_are_exact() -> None:
    # x and y come from a LayerNorm and a softmax over 24 entries, so their values are
    # large expressions; cos 2x − cos²x + sin²x and ln(y₀) + ln(y₁) − ln(y₀y₁) are 0 for
    # every real x and positive y₀, y₁.
    rng = random.Random(3)
    v = ", ".join(f'"{round(rng.uniform(-2, 2), 2)}"' for _ in range(24))
    w = " ".join(str(round(rng.uniform(-1, 1), 1)) for _ in range(24 * 24))
    text = f"""title = "identities"
[tensors]
v = [{v}]
W = {{ shape = [24, 24], values = "{w}" }}
[steps]
n = "layernorm(v @ W, eps=0)"
y = "softmax(n)"
x = "y[1] * 3 + n[2]"
h = "relu(cos(2*x) - cos(x)^2 + sin(x)^2)"
k = "ln(y[0]) + ln(y[1]) - ln(y[0]*y[1])"
m = "relu(k) + 1"
[[claims]]
label = "relu of a trigonometric zero"
step = "h"
printed = "0.000"
[[claims]]
label = "a logarithmic zero"
step = "k"
printed = "0.000"
[[claims]]
label = "relu of it, plus one"
step = "m"
printed = "1.000"
"""
    got = _by_claim(text)
    assert [c.verdict for cs in got.values() for c in cs] == ["exact", "exact", "exact"]
