"""Self-tests of the mpmath reference model against values worked out by hand.

The expected values here come from closed forms derived on paper for the
"I love AI" model (every head weight selects two features, W_O, W1, W2 are
identities), not from the reference's own output.
"""

from __future__ import annotations

from fractions import Fraction

import pytest
from mpmath import mp, mpf
from reference_model import (
    DPS,
    classify,
    forward,
    i_love_ai_weights,
    round_half_up,
)

TIGHT = mpf("1e-50")


@pytest.fixture(scope="module")
def trace() -> dict[str, list[list[mpf]]]:
    """The reference forward pass of the article's model."""
    return forward(i_love_ai_weights())


def close(a: mpf, b: mpf) -> bool:
    """Agreement to far more digits than any printed value carries."""
    with mp.workdps(DPS):
        return abs(a - b) < TIGHT


def exact(value: str) -> mpf:
    """A decimal or fractional string as a DPS-digit mpf."""
    q = Fraction(value)
    with mp.workdps(DPS):
        return mpf(q.numerator) / q.denominator


# --------------------------------------------------------------------------- forward pass


def test_global_precision_is_left_alone(trace: dict[str, list[list[mpf]]]) -> None:
    assert mp.dps == 15
    # An irrational entry carries about DPS digits (~200 bits), not 53.
    assert trace["l0.h0.pattern"][1][0].man.bit_length() > 150


def test_input_rows_are_embedding_plus_position(trace: dict[str, list[list[mpf]]]) -> None:
    want = ["1.2", "1.2", "0.2", "1.2", "0.2", "0.2"]
    for a, b in zip(trace["x"][2], want, strict=True):
        assert close(a, exact(b))


@pytest.mark.parametrize(
    ("head", "expected"),
    [
        (0, [["1", "0.1", "1.2"], ["1.2", "1.22", "0.34"], ["2.4", "1.44", "1.68"]]),
        (1, [["0", "1.1", "1.2"], ["0", "1.22", "1.44"], ["0", "0.34", "1.68"]]),
        (2, [["0", "0", "0"], ["0", "0.02", "0.14"], ["0", "0.04", "0.28"]]),
    ],
)
def test_raw_scores_by_hand(
    trace: dict[str, list[list[mpf]]], head: int, expected: list[list[str]]
) -> None:
    got = trace[f"l0.h{head}.scores"]
    for row, want in zip(got, expected, strict=True):
        for a, b in zip(row, want, strict=True):
            assert close(a, exact(b))


def test_scale_is_root_two(trace: dict[str, list[list[mpf]]]) -> None:
    with mp.workdps(DPS):
        assert close(trace["l0.h0.sqrt_dk"][0][0] ** 2, mpf(2))
    assert trace["d_head"] == [[2]]


def test_mask_is_minus_infinity_and_pattern_zero(trace: dict[str, list[list[mpf]]]) -> None:
    for h in range(3):
        masked = trace[f"l0.h{h}.masked"]
        pattern = trace[f"l0.h{h}.pattern"]
        assert pattern[0][0] == 1  # a lone visible score
        for i in range(3):
            for j in range(i + 1, 3):
                assert masked[i][j] == mpf("-inf")
                assert pattern[i][j] == 0
            with mp.workdps(DPS):
                assert close(sum(pattern[i]), mpf(1))


def test_head1_love_row_closed_form(trace: dict[str, list[list[mpf]]]) -> None:
    # Two visible scores 1.2 and 1.22, both over sqrt(2): a logistic of their gap.
    with mp.workdps(DPS):
        want = 1 / (1 + mp.exp((exact("1.22") - exact("1.2")) / mp.sqrt(2)))
    assert close(trace["l0.h0.pattern"][1][0], want)
    assert round_half_up(trace["l0.h0.pattern"][1][0], 3) == "0.496"


def test_head2_love_row_closed_form(trace: dict[str, list[list[mpf]]]) -> None:
    # Scores 0 and 1.22: the weight on itself is 1 / (1 + e^(-1.22/sqrt 2)).
    with mp.workdps(DPS):
        want = 1 / (1 + mp.exp(-exact("1.22") / mp.sqrt(2)))
    assert close(trace["l0.h1.pattern"][1][1], want)


def test_head3_ai_row_closed_form(trace: dict[str, list[list[mpf]]]) -> None:
    with mp.workdps(DPS):
        r = mp.sqrt(2)
        e = [mpf(1), mp.exp(exact("0.04") / r), mp.exp(exact("0.28") / r)]
        want = [v / sum(e) for v in e]
    for a, b in zip(trace["l0.h2.pattern"][2], want, strict=True):
        assert close(a, b)


def test_head1_ai_output_is_pattern_times_values(trace: dict[str, list[list[mpf]]]) -> None:
    a = trace["l0.h0.pattern"][2]
    with mp.workdps(DPS):
        want = [
            a[1] * exact("1.1") + a[2] * exact("1.2"),
            a[1] * exact("0.1") + a[2] * exact("1.2"),
        ]
    for got, w in zip(trace["l0.h0.z"][2], want, strict=True):
        assert close(got, w)


def test_first_layernorm_of_i_exactly(trace: dict[str, list[list[mpf]]]) -> None:
    # R_1 row I is [1, 0, 2, 1, 1, 0]: mean 5/6, centered (1, -5, 7, 1, 1, -5)/6,
    # variance (1+25+49+1+1+25)/36/6 = 17/36, so LN = (1, -5, 7, 1, 1, -5)/sqrt(17).
    assert close(trace["l0.ln1.mean"][0][0], exact("5/6"))
    assert close(trace["l0.ln1.var"][0][0], exact("17/36"))
    with mp.workdps(DPS):
        assert close(trace["l0.ln1.std"][0][0], mp.sqrt(17) / 6)
        want = [k / mp.sqrt(17) for k in (1, -5, 7, 1, 1, -5)]
    for a, b in zip(trace["l0.ln1"][0], want, strict=True):
        assert close(a, b)
    for a, k in zip(trace["l0.ln1.centered"][0], (1, -5, 7, 1, 1, -5), strict=True):
        assert close(a, exact(f"{k}/6"))


def test_second_layernorm_of_i_exactly(trace: dict[str, list[list[mpf]]]) -> None:
    # R_2 row I = LN + ReLU(LN) = (2, -5, 14, 2, 2, -5)/sqrt(17); LayerNorm ignores
    # the positive scale: mean 5/3, centered (1, -20, 37, 1, 1, -20)/3,
    # variance 2172/54 = 362/9 (so 362/153 before the 1/sqrt(17) scale is removed),
    # and Y_final row I = (1, -20, 37, 1, 1, -20)/sqrt(362).
    with mp.workdps(DPS):
        want = [k / mp.sqrt(362) for k in (1, -20, 37, 1, 1, -20)]
        resid = [k / mp.sqrt(17) for k in (2, -5, 14, 2, 2, -5)]
    for a, b in zip(trace["l0.ln2"][0], want, strict=True):
        assert close(a, b)
    for a, b in zip(trace["l0.resid_post"][0], resid, strict=True):
        assert close(a, b)
    assert close(trace["l0.ln2.var"][0][0], exact("362/153"))


def test_ffn_is_relu_of_the_norm(trace: dict[str, list[list[mpf]]]) -> None:
    for y_row, f_row in zip(trace["l0.ln1"], trace["l0.ffn_out"], strict=True):
        assert f_row == [max(mpf(0), v) for v in y_row]


def test_logits_select_features_of_the_last_row(trace: dict[str, list[list[mpf]]]) -> None:
    h = trace["last"][0]
    assert trace["last"][0] == trace["final"][2] == trace["l0.ln2"][2]
    with mp.workdps(DPS):
        want = [h[0], h[1], h[2], h[0] + h[1], h[3] + h[4], h[2] + h[5], h[0] + h[3]]
    for a, b in zip(trace["logits"][0], want, strict=True):
        assert close(a, b)


def test_prediction_is_too_then_and(trace: dict[str, list[list[mpf]]]) -> None:
    vocab = i_love_ai_weights()["vocab"]
    probs = trace["probs"][0]
    order = sorted(range(len(probs)), key=lambda j: -probs[j])
    assert vocab[int(trace["next_token"][0][0])] == "too"
    assert [vocab[j] for j in order[:2]] == ["too", "and"]
    with mp.workdps(DPS):
        assert close(sum(probs), mpf(1))


def test_no_mask_leaves_every_score_finite() -> None:
    weights = i_love_ai_weights() | {"mask": "none"}
    t = forward(weights)
    assert all(mp.isfinite(v) for row in t["l0.h0.masked"] for v in row)
    assert all(v > 0 for row in t["l0.h0.pattern"] for v in row)


# --------------------------------------------------------------------------- rounding


@pytest.mark.parametrize(
    ("value", "decimals", "expected"),
    [
        (Fraction("0.2405"), 3, "0.241"),
        (Fraction("-0.2405"), 3, "-0.241"),
        (Fraction("0.24049999"), 3, "0.240"),
        (Fraction("0.05"), 3, "0.050"),
        (Fraction("-0.0004"), 3, "0.000"),
        (Fraction(5, 6), 3, "0.833"),
        (Fraction(5, 2), 0, "3"),
        (mpf("1.5"), 0, "2"),
    ],
)
def test_round_half_up(value: Fraction | mpf, decimals: int, expected: str) -> None:
    assert round_half_up(value, decimals) == expected


@pytest.mark.parametrize(
    ("printed", "value", "decimals", "expected"),
    [
        ("1.22", Fraction("1.22"), None, "exact"),
        ("0.050", Fraction("0.05"), None, "exact"),
        ("0.833", Fraction(5, 6), None, "rounded"),
        ("0.834", Fraction(5, 6), None, "slip"),
        ("0.835", Fraction(5, 6), None, "wrong"),
        ("5/6", Fraction(5, 6), None, "exact"),
        ("0.241", Fraction("0.2405"), None, "rounded"),
        ("0.240", Fraction("0.2405"), None, "slip"),
        ("-0.241", Fraction("-0.2405"), None, "rounded"),
        ("1", Fraction("0.9996"), 3, "rounded"),
        ("1", Fraction("0.9994"), 3, "slip"),
        ("1", Fraction("0.9994"), None, "rounded"),
        ("0.608", Fraction("0.6066"), None, "slip"),
        ("0.609", Fraction("0.6074"), None, "wrong"),
        ("-inf", mpf("-inf"), None, "exact"),
        ("−∞", mpf("-inf"), None, "exact"),
        ("0", mpf("-inf"), None, "wrong"),
        ("0.241", "0.2405", None, "boundary"),
        ("0.242", "0.2405", None, "boundary"),
        ("0.2", "0.2", None, "exact"),
        ("-0.3", Fraction("-0.25"), None, "rounded"),
        ("-0.2", Fraction("-0.25"), None, "slip"),
        ("-0.3", "-0.2500000001", None, "rounded"),
    ],
)
def test_classify(
    printed: str, value: Fraction | mpf | str, decimals: int | None, expected: str
) -> None:
    # A string stands for an mpf made at DPS digits (not at import-time precision).
    x = exact(value) if isinstance(value, str) else value
    assert classify(printed, x, decimals) == expected


def test_classify_on_the_article(trace: dict[str, list[list[mpf]]]) -> None:
    assert classify("0.496", trace["l0.h0.pattern"][1][0]) == "rounded"
    assert classify("0.472", trace["l0.ln1.var"][0][0]) == "rounded"
    assert classify("1", trace["l0.h0.pattern"][0][0], decimals=3) == "exact"
    # The "math" logit: -0.487 + (-1.562) as printed, but exactly -2.04837...
    assert classify("-2.049", trace["logits"][0][5]) == "slip"
    assert classify("-2.048", trace["logits"][0][5]) == "rounded"
