"""Certified verdicts on hand-constructed cases (expectations derived by hand)."""

from __future__ import annotations

from fractions import Fraction as F

import pytest
import sympy as sp

import symtf
from symtf.backends.certify import ball
from symtf.checking.evaluation import Quantity, classify, correct_rounding
from symtf.errors import ModelError
from symtf.numbers import parse_printed


def q(expr: sp.Expr) -> Quantity:
    return Quantity(lambda prec: ball(expr, prec), lambda: (expr, None))


@pytest.mark.parametrize(
    ("expr", "printed", "verdict", "expected"),
    [
        # 993/2000 = 0.4965 exactly, a tie: with no rule stated either neighbour is rounded
        (sp.Rational(993, 2000), "0.497", "rounded", "0.497"),
        (sp.Rational(993, 2000), "0.496", "rounded", "0.496"),
        (sp.Rational(993, 2000), "0.4965", "exact", "0.4965"),
        (sp.Rational(993, 2000), "0.499", "wrong", "0.497"),
        # -0.4965 rounds away from zero to -0.497
        (sp.Rational(-993, 2000), "-0.497", "rounded", "-0.497"),
        # e^{4/sqrt3} = 10.06839...: 10.068 rounded, 10.064 is 4 units off
        (sp.exp(4 / sp.sqrt(3)), "10.068", "rounded", "10.068"),
        # 10.067 is 1.39 units from 10.06839…: not a slip (|printed − exact| >= u), wrong
        (sp.exp(4 / sp.sqrt(3)), "10.067", "wrong", "10.068"),
        (sp.exp(4 / sp.sqrt(3)), "10.069", "slip", "10.068"),
        (sp.exp(4 / sp.sqrt(3)), "10.064", "wrong", "10.068"),
        # (1+sqrt2)^2 - 2 sqrt2 - 3 + 1/2000 is exactly 0.0005, a midpoint at 3 decimals
        (
            (1 + sp.sqrt(2)) ** 2 - 2 * sp.sqrt(2) - 3 + sp.Rational(1, 2000),
            "0.001",
            "rounded",
            "0.001",
        ),
        (
            (1 + sp.sqrt(2)) ** 2 - 2 * sp.sqrt(2) - 3 + sp.Rational(1, 2000),
            "0.000",
            "rounded",
            "0.000",
        ),
        # sqrt(2) = 1.41421...: 1.414 rounded; printed integer 1 with 0 decimals is correct rounding
        (sp.sqrt(2), "1.414", "rounded", "1.414"),
        (sp.sqrt(2), "1", "rounded", "1"),
    ],
)
def test_classify(expr, printed, verdict, expected) -> None:
    v, e, _ = classify(q(expr), parse_printed(printed))
    assert (v, e) == (verdict, expected)


def test_half_even_and_truncate_modes() -> None:
    # 0.4965 exactly: half-even keeps the even 6, truncation keeps 0.496
    x = q(sp.Rational(993, 2000))
    assert classify(x, parse_printed("0.496"), "half-even")[0] == "rounded"
    assert classify(x, parse_printed("0.496"), "truncate")[0] == "rounded"
    assert classify(x, parse_printed("0.497"), "truncate")[0] == "slip"


def test_correct_rounding_of_a_midpoint_needs_exact_arithmetic() -> None:
    # A ball can never decide 0.4965 against the boundary 0.4965; exact arithmetic can.
    assert correct_rounding(q(sp.Rational(993, 2000)), 3) == F(497, 1000)


TOML = """
title = "tiny"
[model]
d_model = 2
n_heads = 1
vocab = ["a", "b", "c"]
embed = "{embed}"
unembed = "{unembed}"
[[model.layers]]
W1 = "identity"
[[model.layers.heads]]
W_Q = "1 0 \\n 0 1"
W_K = "1 0 \\n 0 1"
W_V = "1 0 \\n 0 1"
[input]
tokens = {tokens}
{claims}
"""


def _derivation(
    embed="1 0 \\n 0 1 \\n 1 1", unembed="1 0 1 \\n 0 1 1", tokens='["a", "b"]', claims=""
):
    return symtf.loads(
        TOML.format(embed=embed, unembed=unembed, tokens=tokens, claims=claims), "tiny.toml"
    )


def test_constant_layernorm_row_is_a_model_error_naming_the_row() -> None:
    # token "c" embeds as [1, 1]: its first residual row is constant, so its variance is 0 with eps 0
    d = _derivation(tokens='["c"]')
    with pytest.raises(ModelError, match="row 0"):
        symtf.run(d)


def test_tied_logits_are_reported_as_a_tie() -> None:
    # With one token "a" = [1, 0], attention returns v0 = [1, 0]; x + attn = [2, 0];
    # LayerNorm gives [1, -1]; ReLU [1, 0]; +residual [2, -1]; LayerNorm [1, -1].
    # Logits with unembed columns [1,0], [1,0], [0,1] are [1, 1, -1]: "a" and "b" tie exactly.
    claims = '[[claims]]\nlabel = "pick"\nstep = "next_token"\nprinted = "a"\n'
    d = _derivation(unembed="1 1 0 \\n 0 0 1", tokens='["a"]', claims=claims)
    trace = symtf.run(d)
    assert trace.value("next_token") == (0, 1)
    [check] = symtf.check(d).derivations[0].checks
    assert check.verdict == "exact" and "tie" in check.explanation


def test_relu_at_an_exact_zero_that_is_not_structural() -> None:
    # (1+sqrt2)^2 - 2 sqrt2 - 3 is exactly 0 but is not the SymPy zero; balls straddle 0 at
    # every precision, so the branch must come from exact algebra, not from a guess.
    from symtf import ops
    from symtf.backends import ExactBackend

    zero = (1 + sp.sqrt(2)) ** 2 - 2 * sp.sqrt(2) - 3
    assert zero != 0  # not structurally zero
    xp = ExactBackend()
    out = ops.on_matrices(
        ops.relu, xp, sp.ImmutableMatrix([[zero, zero + sp.Rational(1, 10**30), -sp.sqrt(2)]])
    )
    assert out[0, 0] == 0
    assert out[0, 1] == zero + sp.Rational(1, 10**30)
    assert out[0, 2] == 0


def test_far_off_value_is_wrong_even_when_its_rounding_is_out_of_reach() -> None:
    # e^9999 ~ 10^4342: at 1024 bits its ball is far wider than 0.001, so its correct
    # rounding at 3 decimals cannot be pinned, yet it is certainly not 1.000.
    v, e, _ = classify(q(sp.exp(9999)), parse_printed("1.000"))
    assert (v, e) == ("wrong", None)
