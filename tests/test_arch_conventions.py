"""Convention switches: each applied to the bundled "I love AI" model, run, and
checked against the independent mpmath reference told the same convention in
its own terms (see ``ref_forward`` in ``test_arch.py``)."""

from __future__ import annotations

import dataclasses
from fractions import Fraction
from typing import Any

import pytest
import sympy
from mpmath import mp, mpf
from test_arch import OPTIONS, assert_agree, exact_values, make_toml, ref_forward

import symtf
from symtf.backends import BallBackend
from symtf.graph.conventions import SWITCHES, ConventionError, switch
from symtf.spec import Derivation

I_LOVE_AI = "derivations/i_love_ai.toml"
BIRDS = "derivations/birds_build_nests.toml"


@pytest.fixture(scope="module")
def ai() -> Derivation:
    return symtf.load(I_LOVE_AI)


def _variant(d: Derivation, **model: Any) -> Derivation:
    return dataclasses.replace(d, model=dataclasses.replace(d.model, **model))


def _check(d: Derivation, name: str, scope: str, steps: list[str], **knobs: Any) -> Derivation:
    s = switch(name)
    assert scope in s.scopes(d), (name, s.scopes(d))
    d2 = s.apply(d, scope)
    assert d2.claims is d.claims and d2.path == d.path and d2.tokens == d.tokens
    assert_agree(exact_values(d2, steps), ref_forward(d.model, d.tokens, **knobs), steps)
    return d2


# (switch, scope, steps compared, reference knobs) on the unchanged i_love_ai model
ON_I_LOVE_AI: list[tuple[str, str, list[str], dict[str, Any]]] = [
    ("no-sqrt-dk", "l0.h0", ["l0.h0.pattern", "logits"], {"divisor": {(0, 0): lambda: mpf(1)}}),
    ("sqrt-dmodel", "l0.h1", ["l0.h1.pattern"], {"divisor": {(0, 1): lambda: mp.sqrt(6)}}),
    ("divide-by-dk", "l0.h2", ["l0.h2.pattern"], {"divisor": {(0, 2): lambda: mpf(2)}}),
    ("unbiased-variance", "l0.ln1", ["l0.ln1", "logits"], {"variance": {"l0.ln1": "unbiased"}}),
    ("eps-1e-5", "l0.ln2", ["l0.ln2"], {"eps": {"l0.ln2": Fraction(1, 10**5)}}),
    ("eps-1e-6", "l0.ln1", ["l0.ln1"], {"eps": {"l0.ln1": Fraction(1, 10**6)}}),
    ("eps-1e-12", "l0.ln2", ["l0.ln2"], {"eps": {"l0.ln2": Fraction(1, 10**12)}}),
    ("pre-norm", "", ["final", "logits"], {"norm": "pre"}),
    ("mask-missing", "", ["l0.h0.pattern", "logits"], {"mask": "none"}),
    ("mask-after-softmax", "", ["l0.h1.pattern"], {"mask": "after"}),
    (
        "mask-after-softmax-unnormalized",
        "",
        ["l0.h1.pattern", "logits"],
        {"mask": "after-unnormalized"},
    ),
    ("softmax-columns", "l0.h1", ["l0.h1.pattern", "logits"], {"cols": {(0, 1)}}),
]


@pytest.mark.parametrize(
    ("name", "scope", "steps", "knobs"), ON_I_LOVE_AI, ids=[c[0] for c in ON_I_LOVE_AI]
)
def test_switch_on_i_love_ai(
    ai: Derivation, name: str, scope: str, steps: list[str], knobs: dict
) -> None:
    _check(ai, name, scope, steps, **knobs)


def test_one_entry_by_hand(ai: Derivation) -> None:
    """no-sqrt-dk, head 1, row "love": q = (0.1, 1.1), keys of I and love (1, 1) and (0.1, 1.1),
    so the raw scores are 1.2 and 1.22 and love's weight on itself is 1/(1 + e^−0.02)."""
    d2 = switch("no-sqrt-dk").apply(ai, "l0.h0")
    got = exact_values(d2, ["l0.h0.pattern"])["l0.h0.pattern"][1][1]
    with mp.workdps(50):
        want = 1 / (1 + mp.exp(mpf("-0.02")))
        assert abs(got - want) < mpf("1e-40")


def test_mask_after_softmax_renormalised_equals_the_causal_pattern(ai: Derivation) -> None:
    """Zeroing the future after the softmax and renormalising is the masked softmax, exactly."""
    d2 = switch("mask-after-softmax").apply(ai, "")
    steps = ["l0.h2.pattern"]
    assert_agree(exact_values(d2, steps), exact_values(ai, steps), steps)


def test_post_norm_on_a_pre_norm_variant(ai: Derivation) -> None:
    pre = _variant(ai, norm="pre")
    assert switch("post-norm").scopes(ai) == []
    _check(pre, "post-norm", "", ["logits"], norm="post")


@pytest.mark.parametrize(
    ("start", "name", "ref"),
    [("gelu", "gelu-tanh", "gelu_tanh"), ("gelu_tanh", "gelu-erf", "gelu")],
)
def test_gelu_switches_on_a_gelu_variant(ai: Derivation, start: str, name: str, ref: str) -> None:
    assert switch(name).scopes(ai) == []  # i_love_ai uses ReLU
    _check(_variant(ai, activation=start), name, "", ["l0.ffn_act", "logits"], activation=ref)


def test_k_not_transposed_on_birds(ai: Derivation) -> None:
    assert switch("k-not-transposed").scopes(ai) == []  # d_k = 2 but 3 keys: Q·K is undefined
    birds = symtf.load(BIRDS)
    _check(birds, "k-not-transposed", "l0.h0", ["l0.h0.pattern"], qk={(0, 0)})


def test_weights_left_on_a_non_symmetric_variant(ai: Derivation) -> None:
    assert switch("weights-left").scopes(ai) == []  # W_O, W1, W2 are identities
    w1 = sympy.ImmutableMatrix(6, 6, lambda i, j: sympy.Rational(i + 2 * j - 3, 10))
    layer = dataclasses.replace(ai.model.layers[0], W1=w1)
    d = _variant(ai, layers=(layer,))
    assert switch("weights-left").scopes(d) == ["l0.W1"]
    _check(d, "weights-left", "l0.W1", ["l0.ffn_act", "logits"], left={"l0.W1"})


def test_weights_left_per_head() -> None:
    text = "\n".join(
        [
            'title = "sq"',
            "[model]",
            "d_model = 2",
            'eps = "1/100"',
            'vocab = ["a", "b"]',
            'embed = "1 0.5\\n-0.2 0.3"',
            "[[model.layers]]",
            "[[model.layers.heads]]",
            'W_Q = "1 2\\n0 1"',
            'W_K = "1 0\\n3 1"',
            'W_V = "identity"',
            "[input]",
            'tokens = ["a", "b"]',
        ]
    )
    d = symtf.loads(text, "sq")
    s = switch("weights-left")
    assert s.scopes(d) == ["l0.h0", "l0.h0.W_Q", "l0.h0.W_K"]
    _check(d, "weights-left", "l0.h0", ["l0.h0.pattern", "final"], left={"l0.h0.W_Q", "l0.h0.W_K"})


def test_rope_pair_switches() -> None:
    model, layer, heads, layers = OPTIONS["positional=rope halves base 100"]
    d = symtf.loads(make_toml(model, layer, heads, layers), "rope")
    assert switch("rope-halves").scopes(d) == []
    assert switch("rope-adjacent").scopes(d) == [""]
    _check(d, "rope-adjacent", "", ["l0.h0.pattern", "logits"], pairs="adjacent")


def test_every_switch_runs_everywhere_it_applies(ai: Derivation) -> None:
    """Every scope of every switch gives a model the certified backend can run."""
    birds = symtf.load(BIRDS)
    for s in SWITCHES:
        assert s.doc and s.level in ("head", "norm", "projection", "model")
        for d in (ai, birds):
            for scope in s.scopes(d):
                with BallBackend(128) as xp:
                    symtf.run(s.apply(d, scope), xp)


def test_scopes_list_heads_and_norms(ai: Derivation) -> None:
    assert switch("no-sqrt-dk").scopes(ai) == ["l0.h0", "l0.h1", "l0.h2"]
    assert switch("unbiased-variance").scopes(ai) == ["l0.ln1", "l0.ln2"]
    assert switch("eps-1e-5").scopes(symtf.load(BIRDS)) == ["ln_example"]
    assert switch("mask-missing").scopes(ai) == [""]


def test_standalone_norm_switch_by_hand() -> None:
    """Birds' worked LayerNorm of (6, 9, 12): unbiased variance 9, so the row is (−1, 0, 1)."""
    birds = symtf.load(BIRDS)
    d2 = switch("unbiased-variance").apply(birds, "ln_example")
    t = symtf.run(d2)
    assert t.value("ln_example.var")[0, 0] == 9
    assert list(t.value("ln_example")) == [-1, 0, 1]


def test_errors(ai: Derivation) -> None:
    with pytest.raises(ConventionError, match="did you mean no-sqrt-dk"):
        switch("no-sqrt-d")
    with pytest.raises(
        ConventionError, match=r"i_love_ai\.toml: no-sqrt-dk does not apply at 'l0\.h7'"
    ):
        switch("no-sqrt-dk").apply(ai, "l0.h7")
    with pytest.raises(ConventionError, match="nowhere in this model"):
        switch("gelu-tanh").apply(ai, "")
