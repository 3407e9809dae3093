"""What a sheet leaves out around a blank, on cases worked by hand.

The constructed derivation has x = [[1, -2, 1.5], [3, 0, 1]] and W whose third
column is the sum of the first two, so (by hand):

    pre = 2x              = [[2, -4, 3], [6, 0, 2]]
    h   = relu(pre - 1)   = [[1, 0, 2], [5, 0, 1]]     (h[0, 1] = 0 says pre[0, 1] < 1)
    t   = preᵀ            (t[1, 0] is pre[0, 1] unchanged)
    a   = softmax(pre)    (each row sums to 1)
    mu  = row means of pre = [[1/3], [8/3]]             (mu[0] and two entries give the third)
    z   = pre·W           = [[2, -4, -2], [6, 0, 6]]   (z[:, 2] = z[:, 0] + z[:, 1])

The softmax values printed in the file are computed here with mpmath.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from mpmath import mp, mpf
from reference_model import forward, i_love_ai_weights

from symtf import spec
from symtf.checking.compare import Evaluator
from symtf.teach import exercise as E

ROOT = Path(__file__).resolve().parent.parent


def _softmax_rows(rows: list[list[int]]) -> str:
    out = []
    with mp.workdps(40):
        for r in rows:
            e = [mp.exp(mpf(v)) for v in r]
            out.append(" ".join(mp.nstr(v / sum(e), 3, strip_zeros=False) for v in e))
    return "\n".join(out)


def _derivation() -> spec.Derivation:
    text = f'''
title = "constructed"
source = "tests/test_reveal.py"

[tensors]
x = """
1 -2 1.5
3 0 1
"""
W = """
1 0 1
0 1 1
0 0 0
"""

[steps]
pre = "x * 2"
h = "relu(pre - 1)"
t = "pre.T"
a = "softmax(pre, axis=-1)"
mu = "mean(pre, axis=-1, keepdims=true)"
z = "pre @ W"

[[claims]]
label = "pre"
step = "pre"
printed = """
2 -4 3
6 0 2
"""

[[claims]]
label = "h"
step = "h"
printed = """
1 0 2
5 0 1
"""

[[claims]]
label = "t"
step = "t"
printed = """
2 6
-4 0
3 2
"""

[[claims]]
label = "a"
step = "a"
printed = """
{_softmax_rows([[2, -4, 3], [6, 0, 2]])}
"""

[[claims]]
label = "mu"
step = "mu"
printed = """
0.333
2.667
"""

[[claims]]
label = "z"
step = "z"
printed = """
2 -4 -2
6 0 6
"""
'''
    return spec.loads(text, "constructed.toml")


@pytest.fixture(scope="module")
def built() -> tuple[spec.Derivation, object]:
    d = _derivation()
    return d, Evaluator(d).exact_trace()


def _hide(built, step: str, ij: tuple[int, int]) -> tuple[set, set]:
    d, trace = built
    h = E.hiding(d, trace, [("?1", step, ij)])
    printed = set(E.printed_entries(d, trace))
    return {e for e in h.boxes if e in printed}, {e for e in h.hidden if e in printed}


def test_a_blank_is_boxed_in_its_copies_and_hidden_where_one_step_undoes_it(built) -> None:
    boxes, hidden = _hide(built, "pre", (0, 1))
    # The transpose prints pre[0, 1] unchanged; so does z[0, 1] = pre[0, 1]·W[1, 1], W[1, 1] = 1.
    assert boxes == {("pre", 0, 1), ("t", 1, 0), ("z", 0, 1)}
    assert hidden == {
        ("h", 0, 1),  # relu(pre[0, 1] - 1) = 0 gives its sign
        ("a", 0, 0),  # each softmax weight of row 0, with pre[0, 0] and pre[0, 2] shown
        ("a", 0, 1),
        ("a", 0, 2),
        ("mu", 0, 0),  # 3·mu[0] − 2 − 3
        ("z", 0, 2),  # pre[0, 0] + pre[0, 1]
    }


def test_a_softmax_row_keeps_two_entries_out(built) -> None:
    # a[1, 0] = 1 − a[1, 1] − a[1, 2]: one more entry of the row is left out.
    assert _hide(built, "a", (1, 0)) == ({("a", 1, 0)}, {("a", 1, 2)})


def test_dependent_columns_of_a_product(built) -> None:
    # z[0, 2] = z[0, 0] + z[0, 1]: one of them is left out, and one is enough; z[0, 1] is
    # pre[0, 1] (W[1, 1] = 1), so that is left out with it, and the transpose's copy.
    assert _hide(built, "z", (0, 2)) == (
        {("z", 0, 2)},
        {("z", 0, 1), ("pre", 0, 1), ("t", 1, 0)},
    )


def test_concatenated_heads_either_way_and_a_relu_of_a_copy() -> None:
    # i_love_ai: W_O and W_1 are identities, so H (the heads side by side) is O, and
    # the FFN pre-activation is the LayerNorm output.
    d = spec.load(ROOT / "derivations" / "i_love_ai.toml")
    trace = Evaluator(d).exact_trace()
    for blank in (("l0.concat", (1, 3)), ("l0.h1.z", (1, 1))):
        cov = E.covered(d, trace, [("?1", *blank)])
        assert {k for k, v in cov.items() if v == "?1"} >= {
            ("l0.h1.z", 1, 1),
            ("l0.concat", 1, 3),
            ("l0.attn_out", 1, 3),
        }
    # LN1 row 3, column 3 is negative (mpmath: -0.2531…): its ReLU prints 0.
    assert forward(i_love_ai_weights())["l0.ln1"][2][2] < 0
    cov = E.covered(d, trace, [("?1", "l0.ln1", (2, 2))])
    assert cov[("l0.ffn_pre", 2, 2)] == "?1"  # Y·I: a copy
    assert cov[("l0.ffn_act", 2, 2)] == ""  # max(0, y) = 0: left out, it gives the sign
    # A positive one is copied by the ReLU: boxed there too.
    assert forward(i_love_ai_weights())["l0.ln1"][1][2] > 0
    cov = E.covered(d, trace, [("?1", "l0.ln1", (1, 2))])
    assert cov[("l0.ffn_act", 1, 2)] == "?1"


def test_given_numbers_are_not_blanks() -> None:
    d = spec.load(ROOT / "derivations" / "i_love_ai.toml")
    trace = Evaluator(d).exact_trace()
    with pytest.raises(E.ExerciseError, match="only given numbers"):
        E.choose(d, trace, steps="X_emb")  # the embedding rows are the file's table
    chosen = E.choose(d, trace, count=40, seed=3)
    assert not {b.step for b in chosen} & {"embed", "pos", "tokens", "d_head"}


def _gradients() -> spec.Derivation:
    """h = x·W and L = Σ h², with gradients asked of the graph. By hand, with
    x = [[1, 2], [3, -1]] and W = [[2, 1], [0, 1]]:

        h  = [[2, 3], [6, 2]],  L = 4 + 9 + 36 + 4 = 53
        dh = 2h                 = [[4, 6], [12, 4]]
        dx = dh·Wᵀ              = [[14, 6], [28, 4]]    (row i reads h's row i and W)
        dW = xᵀ·dh              = [[40, 18], [-4, 8]]   (column j reads h's column j and x)
    """
    text = '''
title = "constructed gradients"
source = "tests/test_reveal.py"

[tensors]
x = """
1 2
3 -1
"""
W = """
2 1
0 1
"""

[steps]
h = "x @ W"
L = "sum(h * h)"
dh = "grad(L, h)"
dx = "grad(L, x)"
dW = "grad(L, W)"

[[claims]]
label = "h"
step = "h"
printed = """
2 3
6 2
"""

[[claims]]
label = "L"
step = "L"
printed = "53"

[[claims]]
label = "dh"
step = "dh"
printed = """
4 6
12 4
"""

[[claims]]
label = "dx"
step = "dx"
printed = """
14 6
28 4
"""

[[claims]]
label = "dW"
step = "dW"
printed = """
40 18
-4 8
"""
'''
    return spec.loads(text, "gradients.toml")


def test_a_gradient_reads_only_what_its_vjps_read() -> None:
    d = _gradients()
    trace = Evaluator(d).exact_trace()
    rel = E.relations(d, trace)
    # dx[0, 0] = 2·(h[0, 0]·W[0, 0] + h[0, 1]·W[0, 1]): the sweep's one-step equation.
    assert rel.deps(("dx", 0, 0)) == {("h", 0, 0), ("h", 0, 1), ("W", 0, 0), ("W", 0, 1)}
    assert rel.deps(("dW", 1, 0)) == {("x", 0, 1), ("x", 1, 1), ("h", 0, 0), ("h", 1, 0)}
    boxes, hidden = _hide((d, trace), "h", (0, 1))
    assert boxes == {("h", 0, 1)}
    assert hidden == {
        ("L", 0, 0),  # 53 − 4 − 36 − 4 = h[0, 1]²
        ("dh", 0, 1),  # 2·h[0, 1]
        ("dx", 0, 0),  # from h[0, 0] and W
        ("dx", 0, 1),
        ("dW", 0, 1),  # from h[1, 1] and x
        ("dW", 1, 1),
    }


def test_a_chain_of_scalings_back_to_the_blank_is_a_copy() -> None:
    # By hand: a = 3x, m = a/4 (not printed), b = 4m = a. Adam's m̂ = m/(1 − β₁) with
    # m = (1 − β₁)·g prints the gradient g again in the same way.
    d = spec.loads(
        '''
title = "constructed chain"
source = "tests/test_reveal.py"

[tensors]
x = """
1 2
"""

[steps]
a = "x * 3"
m = "a / 4"
b = "m * 4"
c = "a + 1"

[[claims]]
label = "a"
step = "a"
printed = "3 6"

[[claims]]
label = "b"
step = "b"
printed = "3 6"

[[claims]]
label = "c"
step = "c"
printed = "4 7"
''',
        "chain.toml",
    )
    trace = Evaluator(d).exact_trace()
    boxes, hidden = _hide((d, trace), "a", (0, 1))
    assert boxes == {("a", 0, 1), ("b", 0, 1)}  # b[0, 1] = 6 is a[0, 1] itself
    assert hidden == {("c", 0, 1)}  # 7 − 1


def test_a_gradient_one_vjp_from_another_gives_it_away() -> None:
    # dx = dh·Wᵀ and dW = xᵀ·dh (the chain rule through h = x·W), by hand with the numbers
    # of _gradients: dx[0, k] = 2·dh[0, 0]·… reads dh's row 0, dW[k, 1] reads dh's column 1.
    d = _gradients()
    trace = Evaluator(d).exact_trace()
    boxes, hidden = _hide((d, trace), "dh", (0, 1))
    # dx[0, 1] = dh[0, 0]·W[1, 0] + dh[0, 1]·W[1, 1] = dh[0, 1] (= 6): the blank itself.
    assert boxes == {("dh", 0, 1), ("dx", 0, 1)}
    # dx[0, 0] = dh[0, 0]·2 + dh[0, 1]·1 gives it back.
    assert ("dx", 0, 0) in hidden
    # dW[0, 1] = 1·dh[0, 1] + 3·dh[1, 1], dW[1, 1] = 2·dh[0, 1] − dh[1, 1].
    assert {("dW", 0, 1), ("dW", 1, 1)} <= hidden
    # dx[1, 0] and column 0 of dW do not read dh[0, 1]. (dx[1, 1] is dh[1, 1], which a
    # gradient's column rule leaves out with the blank.)
    assert not {("dx", 1, 0), ("dW", 0, 0), ("dW", 1, 0)} & hidden
