"""Explanations are generated from the numbers they state, and causes follow the article's chain.

Property test: over every bundled derivation and a constructed corpus of off
printouts, no explanation says "gives X, which prints as Y" unless X rounds to Y,
no widened replay claims a range that does not reach the printed value, and no
placeholder text appears. Then constructed cases, each with its expectation from
how it was made: a normalised row divided by a wrongly printed std (root: the
std), a std printed with the other variance convention, both ways, a displayed
line under another convention, and ``feeds = true`` for a step printed twice.
"""

from __future__ import annotations

import re
from fractions import Fraction
from pathlib import Path

import mpmath
import numpy as np
import pytest

import symtf
from symtf import spec
from symtf.checking.compare import check
from symtf.numbers import format_fixed, parse_printed, round_exact, rounding_interval

ROOT = Path(__file__).resolve().parent.parent

# ----------------------------------------------------------------------------- a corpus

LN = """title = "layernorm worked"
[model]
architecture = "none"
[[model.standalone]]
name = "ln"
op = "layernorm"
{variance}
input = "1 2 4 7 3 1"
[[claims]]
label = "std"
step = "ln.std"
printed = "{std}"
[[claims]]
label = "normalised"
step = "ln"
printed = "{row}"
"""

X = [1, 2, 4, 7, 3, 1]


def ln_case(std: mpmath.mpf, variance: str = "") -> str:
    """The article divides the centred row by ``std`` (as printed at 4 decimals)."""
    with mpmath.workdps(40):
        mean = mpmath.mpf(sum(X)) / 6
        shown = mpmath.mpf(f"{float(std):.4f}")
        row = " ".join(f"{float((v - mean) / shown):.4f}" for v in X)
    return LN.format(variance=variance, std=f"{float(std):.4f}", row=row)


def std_of(denominator: int) -> mpmath.mpf:
    with mpmath.workdps(40):
        mean = mpmath.mpf(sum(X)) / 6
        return mpmath.sqrt(sum((v - mean) ** 2 for v in X) / denominator)


ATTN = '''title = "printed twice"
[model]
architecture = "attention"
d_model = 2
mask = "none"
embed = """
1 0
0 2
"""
[[model.layers]]
[[model.layers.heads]]
W_Q = "identity"
W_K = "identity"
W_V = """
1 2
3 4
"""
{first}
{second}
[[claims]]
label = "H"
step = "l0.h0.z"
printed = """
2.50 3.80
5.75 7.70
"""
'''
TRUE = '[[claims]]\nlabel = "A (true)"\nstep = "l0.h0.pattern"\nprinted = """\n0.6698 0.3302\n0.0558 0.9442\n"""\n'
APPROX = '[[claims]]\nlabel = "A (approximated)"\nstep = "l0.h0.pattern"\n{feeds}printed = """\n0.70 0.30\n0.05 0.95\n"""\n'


def feeds_case(approx_first: bool, feeds: bool) -> str:
    a = APPROX.format(feeds="feeds = true\n" if feeds else "")
    return ATTN.format(first=a if approx_first else TRUE, second=TRUE if approx_first else a)


def corpus() -> list[spec.Derivation]:
    out = [spec.load(p) for p in sorted((ROOT / "derivations").glob("*.toml"))]
    texts = [
        ln_case(mpmath.mpf("2.2")),
        ln_case(mpmath.mpf("2.3805")),
        ln_case(std_of(5)),
        ln_case(std_of(6), 'variance = "unbiased"'),
        feeds_case(False, True),
        feeds_case(True, True),
        feeds_case(False, False),
    ]
    # float32 tables and rounded-input chains without their settings: many slips
    from test_printouts import chain, float32_table, rows_text, softmax_file

    for seed in range(2):
        x, sm = float32_table(seed)
        texts.append(softmax_file(x, rows_text(sm, ".8f")))
        texts.append(chain(seed, settings="", given=4))
        texts.append(chain(seed, settings="", given=2))
    out += [spec.loads(t, f"corpus{k}.toml") for k, t in enumerate(texts)]
    return out


@pytest.fixture(scope="module")
def reports() -> list:
    return [check(d) for d in corpus()]


# ----------------------------------------------------------------------------- properties

_GIVES = re.compile(r"gives (-?[0-9][0-9.e+-]*)…?,? \(?which prints as (-?[0-9][0-9.]*)")
_SPAN = re.compile(
    r"lies in \[(-?[0-9.]+), (-?[0-9.]+)\], which includes values that print as (-?[0-9.]+)"
)


def _rounds_to(x: str, y: str) -> bool:
    p = parse_printed(y)
    return format_fixed(round_exact(Fraction(x), p.decimals, "half-up"), p.decimals) == y


def test_every_stated_rounding_is_true(reports: list) -> None:
    seen = 0
    for r in reports:
        for c in r.checks:
            for x, y in _GIVES.findall(c.explanation):
                assert _rounds_to(x, y), (r.path, c.claim, c.index, c.explanation)
                seen += 1
    assert seen >= 20


def test_every_stated_range_reaches_the_printed_value(reports: list) -> None:
    seen = 0
    for r in reports:
        for c in r.checks:
            for lo, hi, y in _SPAN.findall(c.explanation):
                assert y == c.printed
                iv = rounding_interval(parse_printed(y))
                assert Fraction(lo) <= iv.hi and iv.lo <= Fraction(hi), (
                    r.path,
                    c.claim,
                    c.explanation,
                )
                seen += 1
    assert seen >= 1


def test_a_replay_that_reproduces_names_the_printed_value(reports: list) -> None:
    for r in reports:
        for c in r.checks:
            if c.extra.get("cause") in ("propagated-rounding", "inherited") and c.step is not None:
                said = _GIVES.findall(c.explanation) + [
                    (None, y) for *_, y in _SPAN.findall(c.explanation)
                ]
                assert any(y == c.printed for _, y in said), (r.path, c.claim, c.explanation)


def test_no_placeholder_text(reports: list) -> None:
    for r in reports:
        for c in r.checks:
            e = c.explanation
            assert "(the printed inputs)" not in e
            for bad in ("None", "nan", "{", "}", "object at 0x", "TODO"):
                assert bad not in e, (r.path, c.claim, e)


# ----------------------------------------------------------------------------- causes


def _off(text: str) -> list:
    return [c for c in check(spec.loads(text)).checks if c.verdict in ("slip", "wrong")]


@pytest.mark.parametrize("std", ["2.2", "2.3805"])
def test_a_copied_wrong_std_is_the_root(std: str) -> None:
    off = _off(ln_case(mpmath.mpf(std)))
    [s] = [c for c in off if c.claim == "std"]
    rows = [c for c in off if c.claim == "normalised"]
    assert len(rows) == 5  # the sixth entry is 0 either way
    for c in rows:
        assert c.extra["cause"] == "inherited"
        assert c.extra["root"] == {"claim": "std", "step": "ln.std", "index": [0, 0]}
    assert s.extra["root"]["claim"] == "std"


@pytest.mark.parametrize(
    "denominator,variance,switch",
    [(5, "", "unbiased-variance@ln"), (6, 'variance = "unbiased"', "biased-variance@ln")],
)
def test_std_with_the_other_variance_both_ways(
    denominator: int, variance: str, switch: str
) -> None:
    off = _off(ln_case(std_of(denominator), variance))
    [s] = [c for c in off if c.claim == "std"]
    assert s.extra["cause"] == "convention" and s.extra["convention"] == [switch]
    for c in off:
        if c.claim == "normalised":
            assert c.extra["root"]["claim"] == "std"


def test_convention_search_runs_on_displayed_lines() -> None:
    text = (
        LN.format(variance="", std=f"{float(std_of(6)):.4f}", row="")
        .split("[[claims]]")[0]
        .rstrip()
    )
    text += f'\n[[claims]]\nlabel = "sigma"\nexpression = "ln.std[0, 0] * 1"\nprinted = "{float(std_of(5)):.4f}"\n'
    [c] = _off(text)
    assert c.extra["cause"] == "convention" and c.extra["convention"] == ["unbiased-variance@ln"]


def _pattern_printed_from_mpmath() -> None:
    with mpmath.workdps(30):
        r0 = [mpmath.exp(1 / mpmath.sqrt(2)), mpmath.mpf(1)]
        r1 = [mpmath.mpf(1), mpmath.exp(4 / mpmath.sqrt(2))]
        s0 = [v / sum(r0) for v in r0]
        s1 = [v / sum(r1) for v in r1]
    assert [f"{float(v):.4f}" for v in s0 + s1] == ["0.6698", "0.3302", "0.0558", "0.9442"]
    # the article's H is the approximated pattern times V = [[1, 2], [6, 8]]
    h = np.array([[0.70, 0.30], [0.05, 0.95]]) @ np.array([[1, 2], [6, 8]])
    assert [f"{v:.2f}" for v in h.ravel()] == ["2.50", "3.80", "5.75", "7.70"]


@pytest.mark.parametrize("approx_first", [False, True])
def test_feeds_picks_the_print_later_steps_used(approx_first: bool) -> None:
    _pattern_printed_from_mpmath()
    off = _off(feeds_case(approx_first, feeds=True))
    h = [c for c in off if c.claim == "H"]
    assert len(h) == 4
    for c in h:
        assert c.extra["cause"] == "inherited", c.explanation
        assert c.extra["root"]["claim"] == "A (approximated)"


def test_without_feeds_the_first_print_is_replayed() -> None:
    off = _off(feeds_case(False, feeds=False))
    h = [c for c in off if c.claim == "H"]
    assert h and all(c.extra["cause"] != "inherited" for c in h)


def test_bundled_seed_causes_unchanged() -> None:
    [r] = symtf.check(symtf.load(ROOT / "derivations" / "i_love_ai.toml")).derivations
    found = [c for c in r.checks if c.printed == "-2.049"]
    assert len(found) == 3  # the logits row, z, and the displayed sum
    for c in found:
        assert c.verdict == "slip" and c.extra["cause"] == "propagated-rounding"
