"""The bundled step derivations, end to end, against an independent mpmath computation.

Each ``derivations/steps_*.toml`` is written with ``[tensors]`` and ``[steps]``
only. ``tests/reference_steps.py`` recomputes every step from its own copy of
the given numbers (checked here against the TOML), so every certified ``exact``
value and every verdict symtf reports is compared with a computation that
shares no code with symtf. The deliberately wrong numbers must be found with
the cause their construction implies.
"""

from __future__ import annotations

import json
import tomllib
from decimal import Decimal
from fractions import Fraction
from pathlib import Path
from typing import Any

import pytest
import reference_steps as ref
from mpmath import mp, mpf

import symtf

DERIVATIONS = Path(__file__).resolve().parent.parent / "derivations"
STEMS = sorted(ref.REFERENCES)

# The given numbers each reference uses, by tensor name, to compare with the file.
GIVEN: dict[str, dict[str, Any]] = {
    "steps_self_attention_noproj": {"X": ref.NOPROJ_X},
    "steps_masked_dropout": {
        "Q": ref.MASKED_Q,
        "K": ref.MASKED_K,
        "V": ref.MASKED_V,
        "keep": ref.MASKED_KEEP,
    },
    "steps_ffn_bce": {
        "x": ref.BCE_X,
        "W1": ref.BCE_W1,
        "b1": ref.BCE_B1,
        "W2": ref.BCE_W2,
        "b2": ref.BCE_B2,
        "y": [[v] for v in ref.BCE_Y],
    },
    "steps_layernorm_unbiased": {"x": ref.LN_X},
    "steps_sinusoidal_table": {},
    "steps_rope_one_angle": {"Q": ref.ROPE_Q, "K": ref.ROPE_K},
    "steps_cross_attention": {
        "H": ref.CROSS_H,
        "E": ref.CROSS_E,
        "W_q": ref.CROSS_WQ,
        "W_k": ref.CROSS_WK,
        "W_v": ref.CROSS_WV,
    },
    "steps_batch_heads": {
        "X": ref.BATCH_X,
        "W_Q": ref.BATCH_WQ,
        "W_K": ref.BATCH_WK,
        "W_V": ref.BATCH_WV,
    },
    "steps_recurrent_state": {"E": ref.REC_E, "K": ref.REC_K, "V": ref.REC_V, "tok": ref.REC_TOK},
    "steps_attention_backward": {
        "Q": ref.ATTB_Q,
        "K": ref.ATTB_K,
        "V": ref.ATTB_V,
        "dO": ref.ATTB_DO,
    },
    "steps_layernorm_backward": {
        "x": ref.LNB_X,
        "gamma": ref.LNB_GAMMA,
        "beta": ref.LNB_BETA,
        "G": ref.LNB_G,
        "eps": ref.LNB_EPS,
    },
    "steps_softmax_ce_sgd_adam": {
        "X": ref.CEB_X,
        "W": ref.CEB_W,
        "b": ref.CEB_B,
        "t": ref.CEB_T,
        "lr": ref.CEB_LR,
        "adam_lr": ref.CEB_ADAM["lr"],
        "beta1": ref.CEB_ADAM["beta1"],
        "beta2": ref.CEB_ADAM["beta2"],
        "adam_eps": ref.CEB_ADAM["eps"],
    },
    "steps_int8_absmax": {"x": ref.Q8_X, "W": ref.Q8_W, "G": ref.Q8_G},
}


def _toml_tensor(v: Any) -> Any:
    """A given tensor as the file writes it, read independently of symtf."""
    if isinstance(v, str):
        lines = [ln.split() for ln in v.strip().splitlines()]
        if len(lines) == 1 and "\n" not in v.strip() and len(lines[0]) == 1:
            return Fraction(lines[0][0])
        return [[Fraction(c) for c in ln] for ln in lines]
    if isinstance(v, list):
        return [_toml_tensor(e) if isinstance(e, list) else Fraction(e) for e in v]
    raise TypeError(v)


@pytest.mark.parametrize("stem", STEMS)
def test_given_numbers_match_the_reference(stem: str) -> None:
    data = tomllib.loads((DERIVATIONS / f"{stem}.toml").read_text(encoding="utf-8"))
    tensors = data.get("tensors", {})
    for name, expected in GIVEN[stem].items():
        got = _toml_tensor(tensors[name])
        if name == "tok":
            got = [int(x) for x in got]
        assert got == expected, f"{stem}: tensor {name} differs from the reference's copy"


@pytest.fixture(scope="module")
def reports() -> dict[str, list[dict[str, Any]]]:
    out = {}
    for stem in STEMS:
        report = symtf.check(symtf.load(DERIVATIONS / f"{stem}.toml"))
        data = json.loads(symtf.render(report, "json"))
        out[stem] = data["derivations"][0]["checks"]
    return out


def _at(tensor: Any, index: list[int]) -> Any:
    for k in index:
        tensor = tensor[k]
    return tensor


def _reference_entry(stem: str, check: dict[str, Any], claim: dict[str, Any]) -> Any:
    value = ref.evaluate(stem)[check["step"]]
    index = list(check["index"] or [])  # a scalar step's check has no index
    lead = list(claim.get("at", []))
    depth = 0
    probe = value
    while isinstance(probe, list):
        depth += 1
        probe = probe[0]
    if len(lead) + len(index) == depth:
        index = lead + index
    elif depth == 1 and len(index) == 2:  # a 1-D step printed as one row
        index = index[1:]
    elif depth == 0:
        index = []
    if depth == 2 and len(index) == 2 and not isinstance(value[0], list):
        index = index[1:]
    return _at(value, index)


def _claims(stem: str) -> dict[str, dict[str, Any]]:
    data = tomllib.loads((DERIVATIONS / f"{stem}.toml").read_text(encoding="utf-8"))
    return {c["label"]: c for c in data["claims"]}


def _decimal(text: str) -> Decimal:
    return Decimal(text.rstrip("…").replace("−", "-"))


@pytest.mark.parametrize("stem", STEMS)
def test_exact_values_and_verdicts_agree_with_mpmath(
    stem: str, reports: dict[str, list[dict[str, Any]]]
) -> None:
    claims = _claims(stem)
    checks = reports[stem]
    assert checks, f"{stem}: no printed number was checked"
    with mp.workdps(ref.DPS):
        for c in checks:
            where = f"{stem}: {c['claim']} {c['step']}{c['index']}"
            x = _reference_entry(stem, c, claims[c["claim"]])
            if isinstance(x, mpf) and mp.isinf(x):
                assert c["exact"] in ("-inf", "-oo", "−∞") or "inf" in str(c["exact"]), where
            else:
                assert c["exact"] is not None, where
                got = _decimal(c["exact"])
                want = ref.to_fraction(x)
                assert abs(Fraction(got) - want) <= Fraction(1, 10**14) * max(1, abs(want)), (
                    f"{where}: symtf exact {c['exact']}, mpmath {mp.nstr(ref.M(want), 20)}"
                )
            expected = ref.classify(c["printed"], x)
            if expected != "boundary":
                assert c["verdict"] == expected, (
                    f"{where}: printed {c['printed']}, verdict {c['verdict']}, mpmath says {expected}"
                )


def _by(checks: list[dict[str, Any]], label: str, row: int | None = None) -> list[dict[str, Any]]:
    return [c for c in checks if c["claim"] == label and (row is None or c["index"][0] == row)]


def test_masked_dropout_finds_the_forgotten_scaling_and_its_descendants(
    reports: dict[str, list[dict[str, Any]]],
) -> None:
    checks = reports["steps_masked_dropout"]
    # Everything but row 2 of the weights and what was computed from it is right.
    off = [c for c in checks if c["verdict"] in ("slip", "wrong")]
    assert {(c["claim"], c["index"][0]) for c in off} <= {
        ("attention weights", 2),
        ("after dropout", 2),
        ("output", 2),
    }
    weights = [c for c in _by(checks, "attention weights", 2) if c["verdict"] == "wrong"]
    assert weights, "the unscaled row 2 was not flagged"
    for c in weights:
        assert c["cause"] == "convention", c
        named = " ".join(c.get("convention") or [])
        assert "sqrt" in named or "√" in named, c
    for label in ("after dropout", "output"):
        for c in _by(checks, label, 2):
            if c["verdict"] in ("slip", "wrong"):
                assert c["cause"] == "inherited", c


def test_layernorm_finds_the_biased_std_and_the_row_divided_by_it(
    reports: dict[str, list[dict[str, Any]]],
) -> None:
    checks = reports["steps_layernorm_unbiased"]
    (std1,) = _by(checks, "std (n - 1)", 1)
    assert std1["verdict"] == "wrong" and std1["cause"] == "convention", std1
    assert "biased" in " ".join(std1.get("convention") or []), std1
    wrong_y = [c for c in _by(checks, "normalised", 1) if c["verdict"] in ("slip", "wrong")]
    assert len(wrong_y) == 4
    for c in wrong_y:
        assert c["cause"] == "inherited", c
    assert all(c["verdict"] in ("exact", "rounded") for c in _by(checks, "normalised", 0))


def test_ffn_bce_loss_is_explained_by_the_rounded_probabilities(
    reports: dict[str, list[dict[str, Any]]],
) -> None:
    (loss,) = _by(reports["steps_ffn_bce"], "BCE loss")
    # Independently: the loss from the printed 0.724 and 0.444 prints as 0.4550,
    # while the exact loss prints as 0.4552.
    with mp.workdps(50):
        from_printed = -(mp.log(mpf("0.724")) + mp.log(1 - mpf("0.444"))) / 2
        exact = ref.evaluate("steps_ffn_bce")["loss"]
    assert ref.fmt(from_printed, 4) == "0.4550"
    assert ref.fmt(exact, 4) == "0.4552"
    assert loss["verdict"] == "wrong" and loss["cause"] == "propagated-rounding", loss


def test_attention_backward_finds_the_swapped_digits_of_dk(
    reports: dict[str, list[dict[str, Any]]],
) -> None:
    checks = reports["steps_attention_backward"]
    off = [c for c in checks if c["verdict"] not in ("exact", "rounded")]
    assert [(c["step"], c["index"]) for c in off] == [("dK", [2, 0])], off
    (c,) = off
    # by construction: the reference's dK[2, 0] prints as 0.0697, the file says 0.0679
    with mp.workdps(ref.DPS):
        assert ref.fmt(ref.evaluate("steps_attention_backward")["dK"][2][0], 4) == "0.0697"
    assert c["printed"] == "0.0679"
    assert c["verdict"] == "wrong" and c["cause"] == "digit-transposition", c


def test_softmax_ce_finds_the_flipped_sign_of_the_target_gradient(
    reports: dict[str, list[dict[str, Any]]],
) -> None:
    checks = reports["steps_softmax_ce_sgd_adam"]
    off = [c for c in checks if c["verdict"] not in ("exact", "rounded")]
    assert [(c["step"], c["index"]) for c in off] == [("dz", [0, 2])], off
    (c,) = off
    with mp.workdps(ref.DPS):
        assert ref.fmt(ref.evaluate("steps_softmax_ce_sgd_adam")["dz"][0][2], 4) == "-0.4619"
    assert c["printed"] == "0.4619"
    assert c["verdict"] == "wrong" and c["cause"] == "sign-flip", c


def test_int8_absmax_finds_the_scale_with_its_point_moved(
    reports: dict[str, list[dict[str, Any]]],
) -> None:
    checks = reports["steps_int8_absmax"]
    off = [c for c in checks if c["verdict"] not in ("exact", "rounded")]
    assert [(c["step"], c["index"]) for c in off] == [("s_W", [2, 0])], off
    (c,) = off
    # by construction: 127 / 0.8 = 158.75, printed as 15.8750
    assert ref.evaluate("steps_int8_absmax")["s_W"][2][0] == Fraction(635, 4)
    assert c["printed"] == "15.8750"
    assert c["verdict"] == "wrong" and c["cause"] == "decimal-shift", c


def test_int8_absmax_rounds_its_ties_to_even(reports: dict[str, list[dict[str, Any]]]) -> None:
    # W[0] · 100 holds two exact ties, 12.5 and -64.5: half to even gives 12 and -64 (numpy,
    # torch), half up 13 and -65; the file prints each way once, and both are exact.
    values = ref.evaluate("steps_int8_absmax")
    scaled = [ref.Q8_W[0][j] * values["s_W"][0][0] for j in (0, 3)]
    assert scaled == [Fraction(25, 2), Fraction(-129, 2)]
    assert values["q_W"][0] == [12, -127, 43, -64] and values["q_W_up"][0] == [13, -127, 43, -65]
    for step in ("q_W", "q_W_up"):
        row0 = [c for c in reports["steps_int8_absmax"] if c["step"] == step and c["index"][0] == 0]
        assert len(row0) == 4 and {c["verdict"] for c in row0} == {"exact"}, row0


@pytest.mark.parametrize(
    "stem",
    [
        s
        for s in STEMS
        if s
        not in (
            "steps_masked_dropout",
            "steps_layernorm_unbiased",
            "steps_ffn_bce",
            "steps_attention_backward",
            "steps_softmax_ce_sgd_adam",
            "steps_int8_absmax",
        )
    ],
)
def test_correct_derivations_have_nothing_off(
    stem: str, reports: dict[str, list[dict[str, Any]]]
) -> None:
    assert all(c["verdict"] in ("exact", "rounded") for c in reports[stem]), [
        c for c in reports[stem] if c["verdict"] not in ("exact", "rounded")
    ]
