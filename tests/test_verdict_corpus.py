"""The verdict rule, printed formats and certification at the printed precision.

Every expectation comes from how the case was built: exact fractions worked by
hand, values recomputed with mpmath at 250 digits, ties constructed exactly,
and numpy float32 prints for the pasted-array cases. None is read back from
symtf's own output.
"""

from __future__ import annotations

import subprocess
import sys
from fractions import Fraction
from pathlib import Path
from typing import Any

import mpmath
import pytest
import sympy
from tiny_derivations import standalone

import symtf
from symtf.backends.certify import ball
from symtf.backends.zero import trig_zero
from symtf.checking.evaluation import Quantity
from symtf.checking.verdict import VERDICTS, decide
from symtf.errors import SpecError
from symtf.numbers import parse_exact, parse_printed, split_printed

R = sympy.Rational
CORPUS = Path(__file__).parent / "verdict_corpus"


@pytest.fixture(autouse=True)
def _mpmath_at_250_digits() -> Any:
    """Every independent value of this module is computed with mpmath at 250 digits."""
    with mpmath.workdps(250):
        yield


def quantity(e: sympy.Expr) -> Quantity:
    """A quantity for a closed-form SymPy value."""
    return Quantity(lambda prec: ball(e, prec), lambda: (e, None))


# ----------------------------------------------------------------------------- the rule

RULE = [
    # (exact value, printed, rounding, verdict, units_off)
    (R(7, 4), "1.75", "nearest", "exact", "0"),
    # 1/16 = 0.0625 is a tie at 3 decimals: either neighbour unless a rule is stated.
    (R(1, 16), "0.062", "nearest", "rounded", "-0.5"),
    (R(1, 16), "0.063", "nearest", "rounded", "0.5"),
    (R(1, 16), "0.062", "half-up", "slip", "-0.5"),
    (R(1, 16), "0.063", "half-even", "slip", "0.5"),
    (R(1, 16), "0.062", "half-even", "rounded", "-0.5"),
    # 0.5 for 0.3715 is 1.285 units off: wrong, not a slip.
    (R(3715, 10000), "0.5", "nearest", "wrong", "1.285"),
    # 0.22 for 0.21 is exactly one unit: wrong.
    (R(21, 100), "0.22", "nearest", "wrong", "1"),
    # 0.214 for 0.2146 (truncated) is 0.6 units off: slip.
    (R(2146, 10000), "0.214", "nearest", "slip", "-0.6"),
    (R(2146, 10000), "0.214", "truncate", "rounded", "-0.6"),
    # Percentages: 42.0% is 0.420 on a grid of 0.001.
    (R(42, 100), "42.0%", "nearest", "exact", "0"),
    (R(4196, 10000), "42.0%", "nearest", "rounded", "0.4"),
    (R(4196, 10000), "42.1%", "nearest", "wrong", "1.4"),
    (R(4196, 10000), "41.9%", "nearest", "slip", "-0.6"),
    # Scientific: 6.3379e-02 has u = 10^-6.
    (R(633794, 10**7), "6.3379e-02", "nearest", "rounded", "-0.4"),
    (R(633794, 10**7), "6.3380e-02", "nearest", "slip", "0.6"),
    # A mantissa 1.0000 sits on a decade: 0.09999996 rounds to it, 0.099996 does not
    # (it is 9.9996e-02 at 5 significant digits), yet is 0.4 units away: slip.
    (R(99999996, 10**9), "1.0000e-01", "nearest", "rounded", "0.0004"),
    (R(99996, 10**6), "1.0000e-01", "nearest", "slip", "0.4"),
]


@pytest.mark.parametrize(("value", "printed", "mode", "verdict", "units"), RULE)
def test_verdict_rule(value, printed, mode, verdict, units) -> None:
    v = decide(quantity(value), parse_printed(printed), mode)
    assert (v.verdict, v.units_off) == (verdict, units), v.explanation


def _mp_digits(x: mpmath.mpf, decimals: int) -> tuple[str, str]:
    """The correct rounding of x at ``decimals`` places, and its other grid neighbour."""
    scaled = x * mpmath.mpf(10) ** decimals
    k = int(mpmath.nint(scaled))
    other = k + 1 if scaled > k else k - 1

    def text(n: int) -> str:
        s = str(abs(n)).rjust(decimals + 1, "0")
        return ("-" if n < 0 else "") + s[:-decimals] + "." + s[-decimals:]

    return text(k), text(other)


@pytest.mark.parametrize(
    ("expr", "mp"),
    [
        (sympy.sin(1), lambda: mpmath.sin(1)),
        (sympy.sqrt(2), lambda: mpmath.sqrt(2)),
        (sympy.exp(R(4, 3)) / 7, lambda: mpmath.exp(mpmath.mpf(4) / 3) / 7),
    ],
)
@pytest.mark.parametrize("decimals", [3, 9, 20])
def test_irrational_rounded_slip_wrong(expr, mp, decimals) -> None:
    right, other = _mp_digits(mp(), decimals)
    assert decide(quantity(expr), parse_printed(right)).verdict == "rounded"
    assert decide(quantity(expr), parse_printed(other)).verdict == "slip"
    k, j = (int(t.replace(".", "").replace("-", "")) for t in (right, other))
    far = str(2 * j - k).rjust(decimals + 1, "0")  # two grid steps from the rounding
    far_text = far[:-decimals] + "." + far[-decimals:]
    assert decide(quantity(expr), parse_printed(far_text)).verdict == "wrong"


def test_scientific_prints_of_sin1() -> None:
    # sin 1 = 0.841470984807896506652…: at 9 significant digits 8.41470985e-01.
    q = quantity(sympy.sin(1))
    assert mpmath.nstr(mpmath.sin(1), 9) == "0.841470985"
    assert decide(q, parse_printed("8.41470985e-01")).verdict == "rounded"
    assert decide(q, parse_printed("8.41470984e-01")).verdict == "slip"  # 0.81 units
    assert decide(q, parse_printed("8.41470986e-01")).verdict == "wrong"  # 1.19 units


# ----------------------------------------------------------------------------- totality

PRINTED_FORMS = ["0", "3", "-2", "0.000", "0.496", "-1.25", "6.3379e-02", "1.5e+03",
                 "42.0%", "-inf", "inf", "+∞", "5/6", "1."]  # fmt: skip
w = sympy.Symbol("w", real=True)
EXACT_KINDS = [R(1, 3), R(0), R(-5, 4), sympy.sqrt(2), sympy.exp(-(10**6)), sympy.S.Infinity,
               sympy.S.NegativeInfinity, 2 * w + R(1, 10), sympy.sin(w)]  # fmt: skip


@pytest.mark.parametrize("printed", PRINTED_FORMS)
@pytest.mark.parametrize("value", EXACT_KINDS, ids=str)
def test_every_printed_form_against_every_kind_of_value(printed, value) -> None:
    p = parse_printed(printed)
    v = decide(quantity(value), p)
    assert v.verdict in VERDICTS
    if value.free_symbols:
        assert v.verdict == "symbolic"
    elif p.is_infinite and value.is_finite:
        assert v.verdict == "wrong"  # a printed ±∞ at a finite entry
    elif value.is_infinite and not p.is_infinite:
        assert v.verdict == "wrong"
    else:
        assert v.verdict != "undecided"


def test_symbolic_value_reports_the_solution_set() -> None:
    # 2w + 1/10 prints as 0.5 (nearest, 1 decimal) for 0.45 <= 2w + 0.1 <= 0.55: w in [0.175, 0.225].
    v = decide(quantity(2 * w + R(1, 10)), parse_printed("0.5"))
    assert v.verdict == "symbolic"
    assert v.extra["solutions"] == [
        {"lo": "0.175", "hi": "0.225", "lo_closed": True, "hi_closed": True}
    ]


def test_symbolic_solution_set_of_a_polynomial() -> None:
    # w² prints as 2.0 for 1.95 <= w² <= 2.05: w in ±[√1.95, √2.05] = ±[1.396424…, 1.431782…].
    v = decide(quantity(w**2), parse_printed("2.0"))
    lows = [s["lo"] for s in v.extra["solutions"]]
    highs = [s["hi"] for s in v.extra["solutions"]]
    with mpmath.workdps(30):
        r1, r2 = mpmath.sqrt(mpmath.mpf("1.95")), mpmath.sqrt(mpmath.mpf("2.05"))
    assert lows[0].startswith(mpmath.nstr(-r2, 8)[:9]) and highs[0].startswith(
        mpmath.nstr(-r1, 8)[:9]
    )
    assert lows[1].startswith(mpmath.nstr(r1, 8)[:8]) and highs[1].startswith(
        mpmath.nstr(r2, 8)[:8]
    )
    # w² + 1 never prints as 0.5.
    assert decide(quantity(w**2 + 1), parse_printed("0.5")).extra["solutions"] == []


# ----------------------------------------------------------------------------- precision


def _claim(step: str, printed: str, extra: str = "index = [0, 0]") -> str:
    return f'[[claims]]\nlabel = "c"\nstep = "{step}"\nprinted = "{printed}"\n{extra}\n'


@pytest.mark.parametrize("decimals", [36, 39, 40, 45, 50, 60, 70, 80])
def test_no_missed_slip_at_high_precision(decimals: int) -> None:
    # softmax(0, 0, 0) = 1/3; LayerNorm of (0, 0, 3) has std sqrt(2) (mean 1, variance 2).
    third_right, third_other = _mp_digits(mpmath.mpf(1) / 3, decimals)
    root_right, root_other = _mp_digits(mpmath.sqrt(2), decimals)
    text = standalone(
        "softmax", "0 0 0", _claim("op", third_right) + _claim("op", third_other)
    ).replace('label = "c"', 'label = "third"', 1)
    checks = symtf.check(symtf.loads(text.replace('label = "c"', 'label = "c2"'))).derivations[0]
    assert [c.verdict for c in checks.checks] == ["rounded", "slip"]
    text = standalone("layernorm", "0 0 3", _claim("op.std", root_right, "row = 0"))
    text += _claim("op.std", root_other, "row = 0").replace('"c"', '"c2"')
    checks = symtf.check(symtf.loads(text)).derivations[0].checks
    assert [c.verdict for c in checks] == ["rounded", "slip"]


@pytest.mark.parametrize("name", ["softmax_underflow_1e8.toml", "softmax_underflow_1e50.toml"])
def test_underflow_softmax_checks_without_hanging(name: str) -> None:
    # softmax(0, -X) = (1/(1+e^-X), e^-X/(1+e^-X)): 1.000 and 0.000 are roundings, not exact.
    r = subprocess.run(
        [sys.executable, "-m", "symtf", "check", "--format", "json", str(CORPUS / name)],
        capture_output=True,
        text=True,
        timeout=600,  # a generous "no hang" bound; the speed itself is measured in benchmarks
    )
    assert r.returncode == 0, r.stderr
    import json

    checks = json.loads(r.stdout)["derivations"][0]["checks"]
    assert [c["verdict"] for c in checks] == ["rounded", "rounded"]
    digits = {"softmax_underflow_1e8.toml": "e-43429449", "softmax_underflow_1e50.toml": None}
    if digits[name]:
        # e^-10^8 = 6.4517096928217…e-43429449 (mpmath)
        lead = mpmath.nstr(mpmath.exp(-(10**8)), 8)
        assert checks[1]["exact"].startswith(lead.split("e")[0][:8])
        assert checks[1]["exact"].endswith(digits[name])


# ----------------------------------------------------------------------------- trig


@pytest.mark.parametrize(
    ("expr", "zero"),
    [
        (sympy.sin(1) ** 2 + sympy.cos(1) ** 2 - 1, True),
        (sympy.sin(2) - 2 * sympy.sin(1) * sympy.cos(1), True),
        (sympy.cos(3) * sympy.cos(2) + sympy.sin(3) * sympy.sin(2) - sympy.cos(1), True),
        (
            sympy.sin(R(101, 100))
            - sympy.sin(1) * sympy.cos(R(1, 100))
            - sympy.cos(1) * sympy.sin(R(1, 100)),
            True,
        ),
        (sympy.tan(1) * sympy.cos(1) - sympy.sin(1), True),
        (sympy.sin(1) ** 2 + sympy.cos(1) ** 2 - 1 + R(1, 10**40), False),
        (sympy.sin(1) - sympy.cos(1), False),
    ],
)
def test_trig_zero(expr, zero) -> None:
    assert trig_zero(expr) is zero


def test_exact_sign_sees_trig_zeros_and_cancelling_differences() -> None:
    # ReLU/argmax/reduce branch on exact_sign: sin²1 + cos²1 − 1 is 0 exactly (balls never
    # show it); 1/(1 + e^-10⁶) − 1 = −e^-10⁶/(1 + e^-10⁶) < 0 needs 1.4 million bits in balls.
    from symtf.backends.signs import exact_sign

    assert exact_sign(sympy.sin(1) ** 2 + sympy.cos(1) ** 2 - 1) == 0
    assert exact_sign(1 / (1 + sympy.exp(-(10**6))) - 1) == -1


def test_log_identities_are_decided() -> None:
    # log 2 + log 3 − log 6 + 1/2000 is exactly 0.0005, a tie at 3 decimals: either neighbour.
    e = sympy.log(2) + sympy.log(3) - sympy.log(6) + R(1, 2000)
    assert decide(quantity(e), parse_printed("0.001")).verdict == "rounded"
    assert decide(quantity(e), parse_printed("0.001"), "half-even").verdict == "slip"


def test_displayed_relu_and_max_on_an_identity_zero() -> None:
    # ln 2 + ln 3 − ln 6 = 0 exactly: relu of it is 0, and the max of ln 6 and ln 2 + ln 3
    # is ln 6 = 1.791759469… (mpmath), 1.792 at 3 decimals.
    text = (
        'title = "d"\n[model]\narchitecture = "none"\n'
        '[[claims]]\nlabel = "r"\nexpression = "relu(ln(2) + ln(3) - ln(6))"\nprinted = "0"\n'
        '[[claims]]\nlabel = "m"\nexpression = "max(ln(6), ln(2) + ln(3))"\nprinted = "1.792"\n'
    )
    assert _mp_digits(mpmath.log(6), 3)[0] == "1.792"
    checks = symtf.check(symtf.loads(text)).derivations[0].checks
    assert [c.verdict for c in checks] == ["exact", "rounded"]


def test_undecided_says_why() -> None:
    # tanh 1 = (e² − 1)/(e² + 1), an identity outside the zero test's rules: with 1/2000 added
    # the value sits exactly on the boundary 0.0005 and no ball of up to MAX_BITS separates it.
    e = sympy.tanh(1) - (sympy.exp(2) - 1) / (sympy.exp(2) + 1) + R(1, 2000)
    v = decide(quantity(e), parse_printed("0.001"), "half-up")
    assert v.verdict == "undecided"
    assert "0.0005" in v.explanation and "beyond the precision cap" in v.explanation


def test_escalation_stops_within_the_timeout_budget(monkeypatch: pytest.MonkeyPatch) -> None:
    # With (almost) no --timeout budget left, escalation stops after the first step beyond
    # 1024 bits and says so, instead of costing the whole file its budget.
    from symtf.checking import located as located_module

    monkeypatch.setattr(located_module, "time_left", lambda: 1e-9)
    e = sympy.tanh(1) - (sympy.exp(2) - 1) / (sympy.exp(2) + 1) + R(1, 2000)
    v = decide(quantity(e), parse_printed("0.001"), "half-up")
    assert v.verdict == "undecided"
    assert "2048 bits" in v.explanation and "--timeout" in v.explanation


def test_rope_score_that_is_exactly_175_is_exact() -> None:
    root = Path(__file__).parent.parent / "derivations" / "rope_toy.toml"
    checks = symtf.check(symtf.load(root)).derivations[0].checks
    same = [c for c in checks if c.step == "l0.h0.scores" and c.index == (1, 1)]
    assert same and all(c.verdict == "exact" and c.exact == "1.75" for c in same)


# ----------------------------------------------------------------------------- formats


def _softmax_row_mp(row: list[int]) -> list[mpmath.mpf]:
    es = [mpmath.exp(x) for x in row]
    s = sum(es)
    return [e / s for e in es]


def test_pasted_reprs_are_read_as_printed_values() -> None:
    np = pytest.importorskip("numpy")
    row = [0, 1, 2, 3]
    exact = _softmax_row_mp(row)
    x = np.array(row, dtype=np.float32)
    y = np.exp(x - x.max()) / np.exp(x - x.max()).sum()
    with np.printoptions(precision=4):
        pasted = repr(y.astype(np.float32).reshape(1, 4))
    cells = split_printed(pasted, "w")[0][0]
    for cell, e in zip(cells, exact, strict=True):  # each float32 print is the 4-decimal rounding
        assert Fraction(cell) == Fraction(_mp_digits(e, 4)[0])
    body = pasted.replace("\n", " ")
    text = standalone("softmax", "0 1 2 3", _claim("op", body, "row = 0"))
    checks = symtf.check(symtf.loads(text)).derivations[0].checks
    assert [c.verdict for c in checks] == ["rounded"] * 4
    torch_style = "tensor([[" + ", ".join(_mp_digits(e, 4)[0] for e in exact) + "]])"
    tf_style = (
        "tf.Tensor(["
        + " ".join(_mp_digits(e, 4)[0] for e in exact)
        + "], shape=(4,), dtype=float32)"
    )
    for body in (torch_style, tf_style):
        checks = symtf.check(
            symtf.loads(standalone("softmax", "0 1 2 3", _claim("op", body, "row = 0")))
        )
        assert [c.verdict for c in checks.derivations[0].checks] == ["rounded"] * 4


def test_shortened_prints_use_the_claims_decimals() -> None:
    # softmax(0, -6.1) = (0.99776…, 0.00223…): at 3 decimals numpy prints 0.998 and 0.002.
    # "0." at decimals 3 is 0.000 and must not pass for 0.00223 (2.2 units off): wrong.
    exact = _softmax_row_mp([0, mpmath.mpf("-6.1")])
    assert _mp_digits(exact[1], 3)[0] == "0.002"
    text = standalone("softmax", "0 -6.1", _claim("op", "1. 0.", "row = 0\ndecimals = 3"))
    checks = symtf.check(symtf.loads(text)).derivations[0].checks
    # "1." is 1.000, which is 2.24 units above 0.99776…: wrong as well.
    assert [c.verdict for c in checks] == ["wrong", "wrong"]


def test_elided_print_is_an_error() -> None:
    with pytest.raises(SpecError, match="elided"):
        symtf.loads(
            standalone(
                "softmax", "0 1 2 3", _claim("op", "tensor([0.0321, ..., 0.6439])", "row = 0")
            )
        )


def test_nested_list_with_e_notation() -> None:
    exact = _softmax_row_mp([0, 1])
    cells = [mpmath.nstr(e, 5, min_fixed=1, max_fixed=0) for e in exact]
    text = "[[" + ", ".join(cells) + "]]"
    assert "e" in text
    checks = symtf.check(symtf.loads(standalone("softmax", "0 1", _claim("op", text, "row = 0"))))
    assert [c.verdict for c in checks.derivations[0].checks] == ["rounded"] * 2


# ----------------------------------------------------------------------------- ASCII


@pytest.mark.parametrize(
    ("text", "name"),
    [
        ("٠.٥", "ARABIC-INDIC DIGIT ZERO"),
        ("０.５", "FULLWIDTH DIGIT ZERO"),
        ("0.৪", "BENGALI DIGIT FOUR"),
    ],
)
def test_non_ascii_digits_are_refused(text: str, name: str) -> None:
    with pytest.raises(SpecError, match=name):
        parse_printed(text)
    with pytest.raises(SpecError, match=name):
        parse_exact(text)
    model = standalone("softmax", f"0 {text}", "")
    with pytest.raises(SpecError, match=name):
        symtf.loads(model)
    displayed = (
        'title = "d"\n[model]\narchitecture = "none"\n[[claims]]\nlabel = "c"\n'
        f'expression = "{text} + 1"\nprinted = "1.5"\n'
    )
    with pytest.raises(SpecError, match=name):
        symtf.check(symtf.loads(displayed))


def test_unicode_minus_stays_accepted() -> None:
    assert parse_printed("−0.5").value == Fraction(-1, 2)


def test_file_level_rounding_rule() -> None:
    # softmax(0, 0, 0, 0) = 1/4 exactly; printed at 1 decimal 0.25 is a tie between 0.2 and 0.3.
    base = standalone("softmax", "0 0 0 0", _claim("op", "0.2"))
    assert symtf.check(symtf.loads(base)).derivations[0].checks[0].verdict == "rounded"
    stated = 'rounding = "half-up"\n' + base
    assert symtf.check(symtf.loads(stated)).derivations[0].checks[0].verdict == "slip"
    own = standalone(
        "softmax", "0 0 0 0", _claim("op", "0.2", 'index = [0, 0]\nrounding = "half-even"')
    )
    assert (
        symtf.check(symtf.loads('rounding = "half-up"\n' + own)).derivations[0].checks[0].verdict
        == "rounded"
    )


def test_undecided_and_symbolic_exit_status(tmp_path: Path) -> None:
    path = tmp_path / "sym.toml"
    path.write_text(standalone("relu", "w", _claim("op", "0.5")))
    run = [sys.executable, "-m", "symtf", "check", str(path)]
    r = subprocess.run(run, capture_output=True, text=True)
    assert r.returncode == 1 and "check out" not in r.stdout.split("—")[-1].split(";")[0]
    r = subprocess.run([*run, "--allow-undecided"], capture_output=True, text=True)
    assert r.returncode == 0


def test_json_carries_units_off() -> None:
    # The seed's −2.049 is a slip: units_off = (printed − exact)/u agrees with its certified exact.
    from symtf.renderers.json import report_dict

    root = Path(__file__).parent.parent / "derivations" / "i_love_ai.toml"
    checks = report_dict(symtf.check(symtf.load(root)))["derivations"][0]["checks"]
    slip = next(c for c in checks if c["printed"] == "-2.049" and c["verdict"] == "slip")
    units = float(slip["units_off"].rstrip("…"))
    exact = float(slip["exact"].rstrip("…"))
    assert abs(units - (-2.049 - exact) / 0.001) < 1e-3 and -1 < units < 0
    numbers = [c for c in checks if not c["printed"].isalpha()]  # not the predicted words
    assert numbers and all("units_off" in c for c in numbers)
