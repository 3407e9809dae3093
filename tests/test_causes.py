"""Why a number is off: each cause on a derivation constructed to have it.

``tests/causes/*.toml`` are derivations whose off numbers were made on purpose (each
file's comment says how, with the numbers worked by hand or in mpmath); their
``# expect: CLAIM [i, j] CAUSE`` lines say which cause each off number has. The bundled
derivations' off numbers are checked for a cause other than ``unexplained`` and for
explanations that do not contradict the article's other printed numbers.
"""

from __future__ import annotations

import json
import re
from fractions import Fraction
from pathlib import Path

import pytest
from flint import arb

from symtf import spec
from symtf.checking.compare import check
from symtf.numbers import parse_printed
from symtf.renderers.json import schema

ROOT = Path(__file__).resolve().parent.parent
CASES = sorted((ROOT / "tests" / "causes").glob("*.toml"))
_EXPECT = re.compile(r"^# expect: (.+?) (\[[0-9, ]+\]|-) ([a-z-]+)$")


def _expectations(path: Path) -> dict[tuple[str, tuple[int, ...] | None], str]:
    out = {}
    for line in path.read_text(encoding="utf-8").splitlines():
        m = _EXPECT.match(line)
        if m:
            idx = None if m.group(2) == "-" else tuple(json.loads(m.group(2)))
            out[(m.group(1), idx)] = m.group(3)
    return out


def _index(c: object) -> tuple[int, ...] | None:
    return None if c.index is None else tuple(c.index)  # type: ignore[attr-defined]


@pytest.mark.parametrize("path", CASES, ids=[p.stem for p in CASES])
def test_each_constructed_off_number_gets_its_cause(path: Path) -> None:
    expected = _expectations(path)
    assert expected, f"{path.name} has no '# expect:' lines"
    report = check(spec.load(path))
    off = {(c.claim, _index(c)): c for c in report.checks if c.verdict in ("slip", "wrong")}
    assert set(off) == set(expected), (sorted(off), sorted(expected))
    for key, cause in expected.items():
        c = off[key]
        assert c.extra["cause"] == cause, (key, c.explanation)
    causes = set(schema()["$defs"]["check"]["properties"]["cause"]["enum"])
    assert {c.extra["cause"] for c in off.values()} <= causes


def test_a_decimal_shift_states_the_shifted_value() -> None:
    report = check(spec.load(ROOT / "tests" / "causes" / "decimal_shift.toml"))
    (c,) = [c for c in report.checks if c.verdict == "wrong"]
    assert "the exact value is 0.000787, and 0.00787 prints as 0.008" in c.explanation


def test_rounded_inputs_are_named() -> None:
    report = check(spec.load(ROOT / "tests" / "causes" / "rounded_inputs.toml"))
    (c,) = [c for c in report.checks if c.verdict == "wrong"]
    assert "rounded_inputs = ['x']" in c.explanation  # W has no decimal point: exact


def test_rope_replay_uses_the_printed_cosine() -> None:
    report = check(spec.load(ROOT / "tests" / "causes" / "rope_cos_table.toml"))
    rotated = [c for c in report.checks if c.claim == "rotated"]
    assert all(c.extra["root"]["claim"] == "cos 0.01" for c in rotated)
    # named as the file names it: the claim's label, not the node c[0, 0]
    assert all("(cos 0.01 = 0.999)" in c.explanation for c in rotated)


def test_the_biased_std_does_not_contradict_the_printed_variance() -> None:
    # The file prints the variance divided by d − 1 (4.333) and a std that divides by d
    # (1.803 = √3.25): the std is reproduced, but not by claiming the variance divides by d.
    report = check(spec.load(ROOT / "derivations" / "steps_layernorm_unbiased.toml"))
    (c,) = [c for c in report.checks if c.claim == "std (n - 1)" and c.verdict == "wrong"]
    assert c.extra["cause"] == "convention"
    assert c.extra["not_from"] == ["variance[1, 0]"]
    # variance[1, 0] is the second entry of the claim "variance (n - 1)"; sigma is "std (n - 1)"
    assert "variance (n - 1), entry 2 = 4.333 does not follow that convention" in c.explanation
    assert "std (n - 1) was not computed from the article's variance (n - 1)" in c.explanation
    assert "variance[" not in c.explanation and "sigma" not in c.explanation


def test_a_forgotten_scale_in_one_softmax_row_keeps_the_printed_scaled_scores() -> None:
    report = check(spec.load(ROOT / "derivations" / "steps_masked_dropout.toml"))
    row = [c for c in report.checks if c.claim == "attention weights" and c.verdict == "wrong"]
    assert len(row) == 3
    for c in row:
        assert c.extra["convention"] == ["no-sqrt-dk@scaled"]
        assert c.extra["not_from"] == ["scaled[2, 0]", "scaled[2, 1]", "scaled[2, 2]"]


@pytest.mark.parametrize(
    "path", sorted((ROOT / "derivations").glob("*.toml")), ids=lambda p: p.stem
)
def test_no_bundled_off_number_is_unexplained(path: Path) -> None:
    report = check(spec.load(path))
    for c in report.checks:
        if c.verdict in ("slip", "wrong"):
            assert c.extra.get("cause") not in (None, "unexplained"), (c.claim, c.explanation)


# ----------------------------------------------------------------------------- the detectors


def _ball(text: str) -> arb:
    q = Fraction(text)
    return arb(q.numerator) / q.denominator


@pytest.mark.parametrize(
    ("printed", "exact", "cause"),
    [
        ("0.214", "0.2412", "digit-transposition"),
        ("-0.080", "-0.00803", "decimal-shift"),
        ("0.331", "0.313", "digit-transposition"),
        ("0.008", "0.000787", "decimal-shift"),
        ("-0.241", "0.2412", "sign-flip"),
        ("0.149", "0.1495686", "truncation"),
    ],
)
def test_entry_slips(printed: str, exact: str, cause: str) -> None:
    from symtf.checking import slips

    p = parse_printed(printed)
    s = slips.entry_slip((0, 0), p, lambda idx: _ball(exact), (1, 1), {(0, 0): p})
    assert s is not None and s.cause == cause


def test_no_slip_is_claimed_for_a_right_or_unrelated_number() -> None:
    from symtf.checking import slips

    for printed, exact in (("0.241", "0.2412"), ("0.517", "0.2412"), ("0.150", "0.1495686")):
        p = parse_printed(printed)
        assert (
            slips.entry_slip((0, 0), p, lambda idx, e=exact: _ball(e), (1, 1), {(0, 0): p}) is None
        )


def test_truncation_is_not_claimed_when_another_entry_was_rounded_up() -> None:
    from symtf.checking import slips

    # 0.149 truncates 0.14957, but 0.497 is 0.49659 rounded up: the table was rounded
    exact = {(0, 0): "0.1495686", (0, 1): "0.4965853"}
    printed = {(0, 0): parse_printed("0.149"), (0, 1): parse_printed("0.497")}
    s = slips.entry_slip((0, 0), printed[(0, 0)], lambda idx: _ball(exact[idx]), (1, 2), printed)
    assert s is None


def test_a_copy_must_match_the_neighbour_as_printed() -> None:
    from symtf.checking import slips

    exact = {(0, 0): "0.1231", (0, 1): "0.6739"}
    copied = {(0, 0): parse_printed("0.674"), (0, 1): parse_printed("0.674")}
    other = {(0, 0): parse_printed("0.674"), (0, 1): parse_printed("0.675")}
    ex = lambda idx: _ball(exact[idx])  # noqa: E731
    assert slips.entry_slip((0, 0), copied[(0, 0)], ex, (1, 2), copied).cause == "copied-neighbour"
    assert slips.entry_slip((0, 0), other[(0, 0)], ex, (1, 2), other) is None


def test_shift_text_moves_the_point() -> None:
    from symtf.checking import slips

    assert slips.shift_text("0.000787", 1) == "0.00787"
    assert slips.shift_text("-0.0081", 1) == "-0.081"
    assert slips.shift_text("0.33149896…", -2) == "0.0033149896…"
    assert slips.shift_text("12.5", 2) == "1250"


def test_a_slip_is_not_claimed_for_an_entry_its_printed_row_sums_to_one_with() -> None:
    from symtf.checking import slips

    # softmax(3, 1, 0) = 0.84379…, 0.11419…, 0.04201…; 0.48 has the digits of 0.84 swapped
    exact = {(0, 0): "0.8437947345", (0, 1): "0.1141951271", (0, 2): "0.0420101385"}
    ex = lambda idx: _ball(exact[idx])  # noqa: E731
    summing = {k: parse_printed(v) for k, v in zip(exact, ("0.48", "0.42", "0.10"), strict=True)}
    beside = {k: parse_printed(v) for k, v in zip(exact, ("0.48", "0.11", "0.04"), strict=True)}
    p = summing[(0, 0)]
    # 0.48 + 0.42 + 0.10 = 1 as printed; with 0.84 it would be 1.36
    assert slips.entry_slip((0, 0), p, ex, (1, 3), summing).cause == "digit-transposition"
    assert slips.entry_slip((0, 0), p, ex, (1, 3), summing, row_total=Fraction(1)) is None
    # 0.48 + 0.11 + 0.04 = 0.63: the row as printed is no softmax row, nothing contradicts
    s = slips.entry_slip((0, 0), p, ex, (1, 3), beside, row_total=Fraction(1))
    assert s is not None and s.cause == "digit-transposition"


def test_a_displayed_softmax_entry_whose_row_sums_to_one_is_no_transposition(
    tmp_path: Path,
) -> None:
    """``P(A) = e^3/(e^3 + e^1 + e^0) = 0.48`` beside ``P(B) = 0.42, P(C) = 0.10``."""
    from symtf.commands.draft import check_article

    text = (
        "# Three tokens\n\nWith the logits 3, 1 and 0:\n\n"
        "\\[\nP(A) = \\frac{e^{3}}{e^{3} + e^{1} + e^{0}} = 0.48\n\\]\n"
        "\\[\nP(B) = {b}, \\quad P(C) = {c}\n\\]\n"
    )
    post = tmp_path / "post.md"
    post.write_text(text.replace("{b}", "0.42").replace("{c}", "0.10"), encoding="utf-8")
    [c] = [c for c in check_article(post).checks if c.verdict == "wrong"]
    assert c.printed == "0.48" and c.extra["cause"] == "unexplained"
    assert "0.48 + 0.42 + 0.10, sums to 1, and with 0.84 it would not" in c.explanation
    # with the right neighbours (0.11, 0.04) the row does not sum to 1 as printed
    post.write_text(text.replace("{b}", "0.11").replace("{c}", "0.04"), encoding="utf-8")
    [c] = [c for c in check_article(post).checks if c.verdict == "wrong"]
    assert c.extra["cause"] == "digit-transposition"
