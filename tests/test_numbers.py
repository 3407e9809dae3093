"""Printed-number parsing and exact rounding intervals."""

from fractions import Fraction as F

import pytest

from symtf.errors import SpecError
from symtf.numbers import (
    format_fixed,
    from_float,
    parse_exact,
    parse_printed,
    round_exact,
    rounding_interval,
    ungrouped,
)


@pytest.mark.parametrize(
    ("text", "value"),
    [
        ("0.1", F(1, 10)),
        ("-1.213", F(-1213, 1000)),
        ("−0.487", F(-487, 1000)),  # U+2212 as pasted from an article
        ("1e-3", F(1, 1000)),
        ("2.5E2", F(250)),
        ("5/6", F(5, 6)),
        ("-5/6", F(-5, 6)),
        (".5", F(1, 2)),
        ("7", F(7)),
        (" 0.050 ", F(1, 20)),
    ],
)
def test_parse_exact(text: str, value: F) -> None:
    assert parse_exact(text) == value


@pytest.mark.parametrize(
    "text",
    [
        "abc",
        "1,000",
        "0.5%",
        "≈0.5",
        "1e999999999",
        "1e-1000000000",
        "nan",
        "inf",
        "",
        "1/0",
        "9" * 200,
    ],
)
def test_parse_exact_refuses(text: str) -> None:
    with pytest.raises(SpecError) as e:
        parse_exact(text, where="f.toml: model.embed[0][0]")
    assert "f.toml: model.embed[0][0]" in str(e.value)


def test_from_float_uses_shortest_repr() -> None:
    assert from_float(0.1) == F(1, 10)
    assert from_float(-2.25) == F(-9, 4)
    with pytest.raises(SpecError):
        from_float(float("nan"))
    with pytest.raises(SpecError):
        from_float(float("inf"))


@pytest.mark.parametrize(
    ("text", "decimals"), [("0.050", 3), ("1", 0), ("1.0", 1), ("-2.049", 3), ("0.28", 2)]
)
def test_printed_keeps_precision(text: str, decimals: int) -> None:
    assert parse_printed(text).decimals == decimals


def test_printed_minus_infinity_forms() -> None:
    for text in ("-inf", "−∞", "-\\infty"):
        assert parse_printed(text).is_neg_inf


def test_printed_fraction_is_exact_claim() -> None:
    p = parse_printed("5/6")
    assert p.is_fraction and p.value == F(5, 6)


@pytest.mark.parametrize(
    ("text", "mode", "lo", "hi", "lo_closed", "hi_closed"),
    [
        # half-up (away from zero): [p - u/2, p + u/2) for p > 0
        ("0.496", "half-up", F(4955, 10000), F(4965, 10000), True, False),
        # mirrored for negatives: (p - u/2, p + u/2]
        ("-2.049", "half-up", F(-20495, 10000), F(-20485, 10000), False, True),
        # half-even: the last digit 6 is even, so both ends round to it
        ("0.496", "half-even", F(4955, 10000), F(4965, 10000), True, True),
        ("0.497", "half-even", F(4965, 10000), F(4975, 10000), False, False),
        # truncation chops toward zero
        ("0.496", "truncate", F(496, 1000), F(497, 1000), True, False),
        ("-0.496", "truncate", F(-497, 1000), F(-496, 1000), False, True),
        ("0.000", "half-up", F(-5, 10000), F(5, 10000), False, False),
    ],
)
def test_rounding_intervals(text, mode, lo, hi, lo_closed, hi_closed) -> None:
    iv = rounding_interval(parse_printed(text), mode)
    assert (iv.lo, iv.hi, iv.lo_closed, iv.hi_closed) == (lo, hi, lo_closed, hi_closed)


@pytest.mark.parametrize(
    ("x", "decimals", "mode", "expected"),
    [
        (F(993, 2000), 3, "half-up", F(497, 1000)),  # exact midpoint rounds away from zero
        (F(-993, 2000), 3, "half-up", F(-497, 1000)),
        (F(993, 2000), 3, "half-even", F(496, 1000)),  # ... or to the even digit
        (F(995, 2000), 3, "half-even", F(498, 1000)),
        (F(4969, 10000), 3, "truncate", F(496, 1000)),
    ],
)
def test_round_exact(x: F, decimals: int, mode: str, expected: F) -> None:
    assert round_exact(x, decimals, mode) == expected


def test_format_fixed() -> None:
    assert format_fixed(F(-1, 20), 3) == "-0.050"
    assert format_fixed(F(2), 3) == "2.000"
    assert format_fixed(F(7), 0) == "7"


def test_shortened_prints_on_a_stated_grid() -> None:
    from symtf.numbers import on_grid

    # numpy under precision=3 prints 0.540 as 0.54 and 1.000 as "1.": both on a 0.001 grid.
    assert on_grid(parse_printed("0.54"), 3, stated=True).ulp == F(1, 1000)
    assert on_grid(parse_printed("1."), 3, stated=False).ulp == F(1, 1000)
    # Without a stated grid a hand-written 0.5 keeps its own precision.
    assert on_grid(parse_printed("0.5"), 3, stated=False).ulp == F(1, 10)
    # Scientific prints and percentages carry their own grid.
    assert on_grid(parse_printed("6.3379e-02"), 9, stated=True).ulp == F(1, 10**6)


@pytest.mark.parametrize(
    "text",
    ["tensor([[[1, 2], [3, 4]], [[5, 6]]])", "[[1, 2], [3, 4]", "array([1, 2]) + 1"],
)
def test_bad_pasted_arrays_are_refused(text: str) -> None:
    from symtf.numbers import split_printed

    with pytest.raises(SpecError, match=r"f\.toml: claims"):
        split_printed(text, "f.toml: claims[0].printed")


def test_bracketed_rows_and_wrapped_arrays() -> None:
    from symtf.numbers import split_printed

    # One bracketed row per line is plain matrix text (read elsewhere), with or without commas.
    assert split_printed("[0.1, 0.2]\n[0.3, 0.4]", "w") is None
    assert split_printed("[0.1 0.2]\n[0.3 0.4]", "w") is None
    # numpy wraps a long 1-D array over lines: still one row. numpy's print form (entries
    # apart by spaces) shortens its entries like its repr does: the claim's grid applies.
    assert split_printed("[0.1 0.2 0.3\n 0.4 0.5]", "w") == (
        [["0.1", "0.2", "0.3", "0.4", "0.5"]],
        True,
    )
    assert split_printed("[[0.1 0.2]\n [0.3 0.4]]", "w") == (
        [["0.1", "0.2"], ["0.3", "0.4"]],
        True,
    )


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("163,009,536", "163009536"),
        ("-1,234.5", "-1234.5"),
        ("1,23", "1,23"),  # not grouped by threes: left as written
        ("0.5,0.25", "0.5,0.25"),
        ("12", "12"),
    ],
)
def test_ungrouped_drops_only_commas_that_group_digits_by_three(text: str, expected: str) -> None:
    assert ungrouped(text) == expected
