"""Values that sit where a careless checker guesses: every expected verdict worked by hand.

Each case states its exact value, the printed text and why the verdict follows
from the verdict classes of ``symtf check --help`` (half-up rounding unless stated). None of these may be
decided on a float: midpoints are exact, disguised values only separate from a
boundary with exact algebra, and exp(±10⁶) overflows every double.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest
import sympy
from tiny_derivations import standalone, tiny_model

import symtf
from symtf import ops
from symtf.backends import ExactBackend
from symtf.backends.certify import ball
from symtf.checking.evaluation import Quantity, classify
from symtf.errors import ModelError
from symtf.numbers import parse_printed


def quantity(e: sympy.Expr) -> Quantity:
    """A quantity for a closed-form SymPy value."""
    return Quantity(lambda prec: ball(e, prec), lambda: (e, None))


R = sympy.Rational
ROOT2 = sympy.sqrt(2)
# (1 + √2)² − 2√2 − 3 is exactly 0, but SymPy keeps it unexpanded and balls never show it.
HIDDEN_ZERO = sympy.Add(sympy.Pow(1 + ROOT2, 2, evaluate=False), -2 * ROOT2, -3, evaluate=False)

CASES = [
    # 993/2000 = 0.4965 exactly, the midpoint between 0.496 and 0.497.
    # Half-up takes the larger: 0.497 is the rounding; 0.496, half a unit away, is a slip.
    (R(993, 2000), "0.497", "half-up", "rounded", "0.497"),
    (R(993, 2000), "0.496", "half-up", "slip", "0.497"),
    # Half-even takes the even last digit 6: the roles swap.
    (R(993, 2000), "0.496", "half-even", "rounded", "0.496"),
    (R(993, 2000), "0.497", "half-even", "slip", "0.496"),
    # Truncation chops 0.4965 to 0.496.
    (R(993, 2000), "0.496", "truncate", "rounded", "0.496"),
    # −0.4965: half-up rounds away from zero to −0.497.
    (R(-993, 2000), "-0.497", "half-up", "rounded", "-0.497"),
    (R(-993, 2000), "-0.496", "half-up", "slip", "-0.497"),
    # Printed with one more digit it is simply the exact value.
    (R(993, 2000), "0.4965", "half-up", "exact", None),
    # Two units off.
    (R(993, 2000), "0.495", "half-up", "wrong", "0.497"),
    # The disguised value (1+√2)² − 2√2 − 3 + 1/2000 is exactly 0.0005: a midpoint at 3
    # decimals. Balls straddle 0.0005 forever; exact algebra decides: 0.001 rounded, 0.000 slip.
    (HIDDEN_ZERO + R(1, 2000), "0.001", "half-up", "rounded", "0.001"),
    (HIDDEN_ZERO + R(1, 2000), "0.000", "half-up", "slip", "0.001"),
    (HIDDEN_ZERO + R(1, 2000), "0.0005", "half-up", "exact", None),
    # The hidden zero itself: printed 0 is exact; -0.000 is the same number.
    (HIDDEN_ZERO, "0", "half-up", "exact", None),
    (HIDDEN_ZERO, "-0.000", "half-up", "exact", None),
    # 0.001 for an exact 0 is exactly one unit off: |printed − exact| >= u is wrong.
    (HIDDEN_ZERO, "0.001", "half-up", "wrong", "0.000"),
    # √2 = 1.41421356…: 1.414 rounded, 1.415 a slip, 1.4142 rounded, 1.41 rounded.
    (ROOT2, "1.414", "half-up", "rounded", "1.414"),
    (ROOT2, "1.415", "half-up", "slip", "1.414"),
    (ROOT2, "1.41421", "half-up", "rounded", "1.41421"),
    # e^-10⁶ ≈ 3.3·10^-434295: printed 0.000 is its rounding, not the exact value.
    (sympy.exp(-(10**6)), "0.000", "half-up", "rounded", "0.000"),
    (sympy.exp(-(10**6)), "0", "half-up", "rounded", "0"),
    # 1/(1 + e^-10⁶) is 1 minus a tiny amount: 1.000 rounded (not exact), 0.999 a slip.
    (1 / (1 + sympy.exp(-(10**6))), "1.000", "half-up", "rounded", "1.000"),
    (1 / (1 + sympy.exp(-(10**6))), "0.999", "half-up", "slip", "1.000"),
    # A printed fraction is right only when exactly equal.
    (R(5, 6), "5/6", "half-up", "exact", None),
    (HIDDEN_ZERO + R(5, 6), "5/6", "half-up", "exact", None),
    (ROOT2, "99/70", "half-up", "wrong", None),
]


@pytest.mark.parametrize(("value", "printed", "mode", "verdict", "expected"), CASES)
def test_classify(
    value: sympy.Expr, printed: str, mode: str, verdict: str, expected: str | None
) -> None:
    got, exp, why = classify(quantity(value), parse_printed(printed), mode)
    assert got == verdict, why
    if expected is not None:
        assert exp == expected


def test_relu_at_a_non_structural_exact_zero() -> None:
    # Max(0, HIDDEN_ZERO) cannot decide; the backend decides the sign exactly: 0 → 0,
    # and a value 10^-40 either side of it goes to itself or to 0.
    xp = ExactBackend()
    tiny = R(1, 10**40)
    x = sympy.ImmutableMatrix([[HIDDEN_ZERO, HIDDEN_ZERO + tiny, HIDDEN_ZERO - tiny]])
    y = ops.on_matrices(ops.relu, xp, x)
    assert y[0, 0] == 0
    assert y[0, 1] == HIDDEN_ZERO + tiny
    assert y[0, 2] == 0


def test_relu_at_a_hidden_zero_in_displayed_arithmetic() -> None:
    # relu((1+√2)² − 2√2 − 3) is relu(0) = 0: printed 0 is exact, 0.001 exactly one unit
    # off (wrong). The last value is exactly 0.0005, a tie: with no rounding stated,
    # either neighbour (0.001 or 0.000) is a correct rounding.
    d = symtf.loads(
        _none_model(
            ("r0", "relu((1+sqrt(2))^2 - 2*sqrt(2) - 3)", "0"),
            ("r1", "relu((1+sqrt(2))^2 - 2*sqrt(2) - 3)", "0.001"),
            ("d", "(1+sqrt(2))^2 - 2*sqrt(2) - 3 + 1/2000", "0.001"),
            ("d2", "(1+sqrt(2))^2 - 2*sqrt(2) - 3 + 1/2000", "0.000"),
        )
    )
    assert [c.verdict for c in symtf.check(d).derivations[0].checks] == [
        "exact", "wrong", "rounded", "rounded",
    ]  # fmt: skip


def _none_model(*claims: tuple[str, str, str]) -> str:
    body = 'title = "displayed"\n[model]\narchitecture = "none"\n'
    for label, expression, printed in claims:
        body += (
            f'[[claims]]\nlabel = "{label}"\nexpression = "{expression}"\nprinted = "{printed}"\n'
        )
    return body


def _standalone(eps: str, op: str, row: str, claims: str = "") -> str:
    """A one-token attention model (for eps) plus one stand-alone worked operation."""
    return standalone(op, row, claims, eps=eps)


def _claim(label: str, step: str, printed: str, extra: str = "") -> str:
    return f'[[claims]]\nlabel = "{label}"\nstep = "{step}"\nprinted = "{printed}"\n{extra}\n'


def test_constant_layernorm_row_with_eps0_is_a_model_error_naming_the_row() -> None:
    # Row 1 is constant: variance 0, ε = 0, so (x − μ)/√(σ² + ε) is 0/0.
    text = _standalone("0", "layernorm", "1 2 3\n4 4 4", _claim("y", "op", "0 0 0", "row = 1"))
    with pytest.raises(ModelError, match=r"op: the variance \+ eps of row 1 is exactly 0"):
        symtf.check(symtf.loads(text, "ln.toml"))


def test_constant_layernorm_row_with_eps0_exits_2(tmp_path: Path) -> None:
    path = tmp_path / "ln.toml"
    path.write_text(_standalone("0", "layernorm", "4 4 4", _claim("y", "op", "0 0 0")))
    r = subprocess.run(
        [sys.executable, "-m", "symtf", "check", str(path)], capture_output=True, text=True
    )
    assert r.returncode == 2
    assert str(path) in r.stderr and "row 0" in r.stderr and "op:" in r.stderr
    assert "Traceback" not in r.stderr


def test_constant_layernorm_row_with_symbolic_eps() -> None:
    # With a symbol ε the row is 0/√ε = 0 exactly; the std √ε has no number to round:
    # symbolic (reported as an expression), never a guess and never a crash.
    text = _standalone(
        "epsilon",
        "layernorm",
        "4 4 4",
        _claim("y", "op", "0 0 0") + _claim("std", "op.std", "0.1") + _claim("mu", "op.mean", "4"),
    )
    checks = symtf.check(symtf.loads(text)).derivations[0].checks
    assert [c.verdict for c in checks] == ["exact"] * 3 + ["symbolic", "exact"]
    assert "sqrt(epsilon)" in checks[3].extra["symbolic_value"]


def test_softmax_of_exp_plus_minus_a_million() -> None:
    # softmax(10⁶, 0, −10⁶): p0 = 1/(1 + e^-10⁶ + e^-2·10⁶) is just below 1; p1 ≈ e^-10⁶,
    # p2 ≈ e^-2·10⁶. At 3 decimals 1.000 0.000 0.000 are all roundings, none exact;
    # 0.999 for p0 is just under one unit off (a slip). The row still sums to exactly 1.
    row = "1000000 0 -1000000"
    text = _standalone(
        "0",
        "softmax",
        row,
        _claim("p", "op", "1.000 0.000 0.000")
        + _claim("p0", "op", "0.999", "index = [0, 0]")
        + '[[claims]]\nlabel = "sum"\nexpression = "sum(op[0])"\nprinted = "1"\n',
    )
    checks = symtf.check(symtf.loads(text)).derivations[0].checks
    assert [c.verdict for c in checks] == ["rounded", "rounded", "rounded", "slip", "exact"]
    assert checks[1].exact is not None and checks[1].exact.endswith("e-434295")


def _tied_decoder(claims: str) -> str:
    """Tokens a, b through one causal head with identity weights, then W_vocab.

    Worked by hand: row 1 attends to a and b with weights p0 < p1 (scores 0 and
    1/√2), so the residual row is (p0, 1 + p1) and LayerNorm of a 2-vector with
    a larger second entry is exactly (−1, 1). ReLU gives (0, 1), the residual
    (−1, 2), LayerNorm again (−1, 1). W_vocab's columns for b and c are both
    (0, 1): logits (0, 1, 1), an exact tie between b and c for the largest.
    """
    return (
        tiny_model(
            "tie",
            vocab=["a", "b", "c"],
            embed="1 0\n0 1\n1 1\n",
            unembed="0 0 0\n0 1 1\n",
        )
        + claims
    )


def test_tied_logits_and_argmax_ties() -> None:
    claims = (
        _claim("b wins", "next_token", "b")
        + _claim("c wins", "next_token", "c")
        + _claim("a wins", "next_token", "a")
        + _claim("c second", "probs", "c", "rank = 2")
        + _claim("a third", "probs", "a", "rank = 3")
        + _claim("logits", "logits", "0.000 1.000 1.000")
    )
    checks = symtf.check(symtf.loads(_tied_decoder(claims))).derivations[0].checks
    verdicts = [c.verdict for c in checks]
    # b and c share first place: either is a correct pick; a is not. Ranked 2nd, c is
    # still in the tie for places 1-2; a is 3rd.
    assert verdicts[:5] == ["exact", "exact", "wrong", "exact", "exact"]
    assert "tie" in checks[0].explanation and "tie" in checks[2].explanation
    # Logit a is exactly 0; b and c are exactly 1 but only after cancellation, so they
    # may be proved exact or certified as correctly rounded, the same for both.
    assert verdicts[5] == "exact"
    assert verdicts[6] == verdicts[7] and verdicts[6] in ("exact", "rounded")
