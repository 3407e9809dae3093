"""The bundled "I love AI" derivation end to end, against an independent reference.

The reference (tests/reference_model.py) is a separate mpmath/Fraction forward pass
with the article's weights typed in by hand; it shares no code with symtf.
"""

from __future__ import annotations

import dataclasses
import json
from fractions import Fraction
from pathlib import Path

import pytest
import sympy as sp
from mpmath import mp, mpf
from reference_model import classify, forward, i_love_ai_weights

import symtf
from symtf.backends.zero import exact_zero
from symtf.cli import main

PATH = Path(__file__).resolve().parent.parent / "derivations" / "i_love_ai.toml"


@pytest.fixture(scope="module")
def derivation() -> symtf.Derivation:
    return symtf.load(PATH)


@pytest.fixture(scope="module")
def report(derivation):
    return symtf.check(derivation).derivations[0]


@pytest.fixture(scope="module")
def reference():
    return forward(i_love_ai_weights())


def test_weights_match_the_hand_typed_reference(derivation) -> None:
    w = i_love_ai_weights()
    m = derivation.model
    assert [[Fraction(int(e.p), int(e.q)) for e in m.embed.row(i)] for i in range(3)] == w["embed"][
        :3
    ]
    assert [[Fraction(int(e.p), int(e.q)) for e in m.unembed.row(i)] for i in range(6)] == w[
        "unembed"
    ]
    for h, head in enumerate(m.layers[0].heads):
        for name in ("W_Q", "W_K", "W_V"):
            got = [
                [Fraction(int(e.p), int(e.q)) for e in getattr(head, name).row(i)] for i in range(6)
            ]
            assert got == w["layers"][0]["heads"][h][name], (h, name)


def test_every_certified_value_agrees_with_the_reference(report, reference) -> None:
    checked = 0
    with mp.workdps(60):
        for c in report.checks:
            if c.step is None or c.index is None or c.step not in reference or c.exact is None:
                continue
            ref = reference[c.step][c.index[0]][c.index[1]]
            if ref == mpf("-inf"):
                assert c.exact == "-inf"
                continue
            got = mpf(c.exact.rstrip("…"))
            assert abs(got - ref) <= mpf("1e-15") * max(1, abs(ref)), (
                c.claim,
                c.index,
                c.exact,
                ref,
            )
            checked += 1
    assert checked >= 400


def test_every_verdict_agrees_with_the_reference(derivation, report, reference) -> None:
    decided = 0
    for result in report.results:
        claim = result.claim
        for c in result.checks:
            if c.step is None or c.index is None or c.step not in reference:
                continue
            ref = reference[c.step][c.index[0]][c.index[1]]
            p = next(p for row in claim.printed for p in row if p.text == c.printed)
            expected = classify(c.printed, ref, p.decimals)
            if expected == "boundary":
                continue
            assert c.verdict == expected, (claim.label, c.index, c.printed, c.verdict, expected)
            decided += 1
    assert decided >= 400


def test_the_math_logit_is_a_slip(report) -> None:
    # -0.487 + (-1.562) = -2.049 adds two rounded numbers; the exact logit is -2.04837...
    z = [c for c in report.checks if c.claim == "z"]
    assert [c.verdict for c in z].count("slip") == 1
    assert next(c for c in z if c.verdict == "slip").index == (0, 5)


def test_json_contract(capsys) -> None:
    code = main(["check", "--format", "json", str(PATH)])
    data = json.loads(capsys.readouterr().out)
    assert code == 1  # the slip above makes the check fail
    [d] = data["derivations"]
    assert data["symtf"] == symtf.__version__
    assert len(d["checks"]) >= 200
    keys = {"claim", "step", "index", "printed", "expected", "exact", "verdict", "explanation"}
    assert all(keys <= set(c) for c in d["checks"])
    assert sum(d["counts"].values()) == len(d["checks"])
    numeric = [c for c in d["checks"] if c["exact"] not in (None, "-inf") and "…" in c["exact"]]
    assert all(len(c["exact"].replace("-", "").replace(".", "").lstrip("0")) >= 16 for c in numeric)
    expr = [c for c in d["checks"] if c["step"] is None]
    assert expr and all({"expression", "as_displayed", "exact_reading"} <= set(c) for c in expr)


def test_symbolic_weight_runs_through_the_same_pipeline(derivation) -> None:
    a = sp.Symbol("a", real=True)
    layer = derivation.model.layers[0]
    head = layer.heads[0]
    w_q = head.W_Q.as_mutable()
    w_q[0, 0] = a
    heads = (dataclasses.replace(head, W_Q=sp.ImmutableMatrix(w_q)), *layer.heads[1:])
    model = dataclasses.replace(derivation.model, layers=(dataclasses.replace(layer, heads=heads),))
    symbolic = symtf.run(dataclasses.replace(derivation, model=model))
    numeric = symtf.run(derivation)
    pattern = symbolic.value("l0.h0.pattern")
    assert a in pattern[2, 0].free_symbols
    for i in range(3):
        for j in range(3):
            assert exact_zero(pattern[i, j].subs(a, 1) - numeric.value("l0.h0.pattern")[i, j])
    # a = 1 is the article; at a = 0 the query of "I" is [0, 0], so its scores are all 0
    assert symbolic.value("l0.h0.scores")[0, :].subs(a, 0) == sp.zeros(1, 3)
