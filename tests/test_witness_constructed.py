"""Worked examples built so that a point of the inputs' rounding box gives every print.

Each case is constructed: true inputs are random rationals (seeded), the article prints
them to 4 decimals, and every later number is computed with mpmath at 50 digits from the
TRUE inputs (or, for a middle value printed and reused, from the true middle value) and
printed rounded. The true inputs lie in the box of the printed inputs' rounding
intervals, so some point of the box gives every print: no such line may be called a
slip. The converse cases print a result that no point of the box reaches (shown here
with interval arithmetic, ``mpmath.iv``); those must stay flagged. Every expectation
comes from the construction and mpmath, never from symtf.

Forms: a dot product; two steps, the first's result printed to 4 (or 6) decimals and
reused (``e^{y}``); a layer norm worked by hand whose mean, printed inputs summed and
divided, falls exactly on a rounding boundary; a softmax worked by hand (each
exponential, their sum, one weight); and, for the diagnosis of a derivation whose inputs
are written to 4 decimals, a product whose prints only the whole box reaches. A few seeds
of each run by default; the seeded sweeps over more seeds and one-line forms (dot
products of 3 to 16 terms, a softmax weight, a normalisation, e^s and ln s, results to
more decimals than their inputs) are marked slow.
"""

from __future__ import annotations

import random
from fractions import Fraction
from pathlib import Path
from typing import Any

import mpmath
import pytest
from mp_reference import rounds_to

import symtf
from symtf.commands.draft import check_article
from symtf.numbers import Interval
from symtf.witness import reach

MPMATH_DIGITS = 50

FLAGS = ("slip", "wrong")


def _true(rng: random.Random, lo: float = -1, hi: float = 1) -> Any:
    """A random rational with 9 decimals in [lo, hi]: an input as the framework held it."""
    den = 10**9
    return mpmath.mpf(rng.randint(int(lo * den), int(hi * den))) / den


def _print(x: Any, decimals: int) -> str:
    """``x`` rounded to ``decimals`` (half away from zero; ties never occur here)."""
    n = int(mpmath.nint(x * 10**decimals))
    sign, n = ("-" if n < 0 else ""), abs(n)
    return f"{sign}{n // 10**decimals}.{n % 10**decimals:0{decimals}d}"


def _par(text: str) -> str:
    return f"({text})" if text.startswith("-") else text


def _verdicts(tmp_path: Path, text: str) -> dict[str, set[str]]:
    """Each printed number's verdicts (all its checks), by its text."""
    path = tmp_path / "post.md"
    path.write_text(text, encoding="utf-8")
    out: dict[str, set[str]] = {}
    for r in check_article(path).results:
        for c in r.checks:
            out.setdefault(c.printed, set()).add(c.verdict)
    return out


def _half(text: str) -> Any:
    return mpmath.mpf(5) / 10 ** (len(text.partition(".")[2]) + 1)


def _box(text: str) -> Any:
    """The rounding interval of a printed number, as an mpmath interval."""
    return mpmath.iv.mpf([mpmath.mpf(text) - _half(text), mpmath.mpf(text) + _half(text)])


# ------------------------------------------------------------------------- two steps

CHAIN = """# Two steps

The inputs are x = [{x}] and the weights w = [{w}].

y = {terms} = {y}

e^{{{y}}} = {e}
"""


def _chain(
    seed: int, result_decimals: int = 4, y_decimals: int | None = None
) -> tuple[str, dict[str, Any]]:
    """``y = x·w`` printed, then ``e^y`` from the true y: the text and what it is built from."""
    rng = random.Random(f"chain-{seed}")
    x = [_true(rng) for _ in range(3)]
    w = [_true(rng) for _ in range(3)]
    xs, ws = [_print(v, 4) for v in x], [_print(v, 4) for v in w]
    y = mpmath.fsum(a * b for a, b in zip(x, w, strict=True))
    ys = _print(y, result_decimals if y_decimals is None else y_decimals)
    terms = " + ".join(f"{a} × {_par(b)}" for a, b in zip(xs, ws, strict=True))
    built = {
        "xs": xs,
        "ws": ws,
        "y": ys,
        "e": _print(mpmath.exp(y), result_decimals),
        "y_mid": mpmath.fsum(mpmath.mpf(a) * mpmath.mpf(b) for a, b in zip(xs, ws, strict=True)),
    }
    text = CHAIN.format(x=", ".join(xs), w=", ".join(ws), terms=terms, y=ys, e=built["e"])
    return text, built


# seeds whose e^y neither reading gives: e^(printed y) and e^(y from the printed inputs)
CHAIN_SEEDS = [2, 7, 10]


@pytest.mark.parametrize("seed", CHAIN_SEEDS)
def test_a_reused_middle_value_whose_inputs_were_rounded_is_no_slip(
    tmp_path: Path, seed: int
) -> None:
    text, b = _chain(seed)
    # the construction: the printed y is right, and neither reading of e^y gives its print
    assert not rounds_to(mpmath.exp(mpmath.mpf(b["y"])), b["e"])
    assert not rounds_to(mpmath.exp(b["y_mid"]), b["e"])
    got = _verdicts(tmp_path, text)
    assert got[b["e"]] == {"rounded"}, got
    assert not got[b["y"]] & set(FLAGS), got


def test_a_reused_value_printed_to_more_decimals_than_its_inputs(tmp_path: Path) -> None:
    # y and e^y to 6 decimals from inputs printed to 4
    text, b = _chain(0, result_decimals=6)
    assert not rounds_to(b["y_mid"], b["y"])
    assert not rounds_to(mpmath.exp(b["y_mid"]), b["e"])
    got = _verdicts(tmp_path, text)
    assert got[b["e"]] == {"rounded"} and got[b["y"]] == {"rounded"}, got


def test_a_step_off_by_more_than_its_reused_input_allows_is_flagged(tmp_path: Path) -> None:
    text, b = _chain(2)
    # e^ over the whole rounding interval of the printed y, widened by half a unit
    enclosure = mpmath.iv.exp(_box(b["y"]))
    wrong = _print(mpmath.mpf(enclosure.b) + mpmath.mpf("0.0003"), 4)
    assert mpmath.mpf(wrong) - _half(wrong) > enclosure.b
    got = _verdicts(tmp_path, text.replace(f"= {b['e']}\n", f"= {wrong}\n"))
    assert got[wrong] <= set(FLAGS) and got[wrong], got


def test_the_reused_value_moves_only_as_far_as_its_own_inputs_allow(tmp_path: Path) -> None:
    """y printed to 3 decimals, e^y to 6: a print of e^y reached from a value y prints as
    but from no point of the inputs' box is flagged (reading the reused 0.xxx as any
    value of its own rounding interval alone would accept it)."""
    text, b = _chain(10, result_decimals=6, y_decimals=3)
    xs, ws = ([mpmath.mpf(t) for t in b[k]] for k in ("xs", "ws"))
    h = mpmath.mpf("0.00005")  # the inputs' half-unit
    # every y the box gives lies within `over` of y from the printed inputs
    over = mpmath.fsum(abs(a) * h + abs(c) * h + h**2 for a, c in zip(xs, ws, strict=True))
    low_end = mpmath.mpf(b["y"]) - _half(b["y"])
    assert b["y_mid"] - over > low_end + mpmath.mpf("0.0001")
    shown = _print(mpmath.exp(low_end + mpmath.mpf("0.00001")), 6)
    assert rounds_to(mpmath.mpf(b["y"]), b["y"])  # (the y it is reached from prints as y)
    assert mpmath.exp(b["y_mid"] - over) > mpmath.mpf(shown) + _half(shown)
    line = f"e^{{{b['y']}}} = {b['e']}"
    assert line in text
    got = _verdicts(tmp_path, text.replace(line, f"e^{{{b['y']}}} = {shown}"))
    assert got[shown] <= set(FLAGS) and got[shown], got
    # and the e^y the true inputs give is accepted
    assert _verdicts(tmp_path, text)[b["e"]] == {"rounded"}


# ------------------------------------------------------------ layer norm by hand

LAYER_NORM = """# Layer norm by hand

The row is x = [{x}].

μ = ({sum}) / 4 = {mean}

σ² = ({squares}) / 4 = {var}

σ = √({var} + 0.00001) = {sd}

y_1 = ({x0} - {mean_p}) / {sd} = {y0}
"""


def _layer_norm(seed: int) -> tuple[str, dict[str, Any]]:
    rng = random.Random(f"ln_chain-{seed}")
    x = [_true(rng, -2, 2) for _ in range(4)]
    xs = [_print(v, 4) for v in x]
    mu = mpmath.fsum(x) / 4
    var = mpmath.fsum((v - mu) ** 2 for v in x) / 4
    sd = mpmath.sqrt(var + mpmath.mpf("0.00001"))
    means = _print(mu, 4)
    built = {"xs": xs, "mean": means, "var": _print(var, 4), "sd": _print(sd, 4)}
    text = LAYER_NORM.format(
        x=", ".join(xs),
        sum=" + ".join(xs),
        mean=means,
        squares=" + ".join(f"({a} - {_par(means)})^2" for a in xs),
        var=built["var"],
        sd=built["sd"],
        x0=xs[0],
        mean_p=_par(means),
        y0=_print((x[0] - mu) / sd, 4),
    )
    return text, built


# seeds whose later lines need μ's own inputs to move, from a μ on a rounding boundary
@pytest.mark.parametrize("seed", [89, 146])
def test_a_mean_on_a_rounding_boundary_still_lets_the_inputs_move(
    tmp_path: Path, seed: int
) -> None:
    text, b = _layer_norm(seed)
    # the printed inputs' mean is a tie at the 4th decimal: exactly on a rounding boundary
    assert (sum(Fraction(t) for t in b["xs"]) / 4 * 10**4).denominator == 2
    got = _verdicts(tmp_path, text)
    assert not any(v & set(FLAGS) for v in got.values()), got


# ------------------------------------------------------------- softmax by hand

SOFTMAX = """# Softmax by hand

The scores are {z}.

{exps}

Sum: {terms} = {total}

p_1 = {e0} / {total} = {p}
"""


def _softmax(seed: int, decimals: int) -> tuple[str, list[str]]:
    rng = random.Random(f"softmax_chain-{seed}")
    z = [_true(rng, -2, 2) for _ in range(3)]
    zs = [_print(v, 4) for v in z]
    e = [mpmath.exp(v) for v in z]
    es = [_print(v, decimals) for v in e]
    total = _print(mpmath.fsum(e), decimals)
    p = _print(e[0] / mpmath.fsum(e), decimals)
    exps = "\n\n".join(f"e^{{{a}}} = {b}" for a, b in zip(zs, es, strict=True))
    text = SOFTMAX.format(
        z=", ".join(zs), exps=exps, terms=" + ".join(es), total=total, e0=es[0], p=p
    )
    return text, [*es, total, p]


def test_a_softmax_worked_step_by_step_from_rounded_scores(tmp_path: Path) -> None:
    text, prints = _softmax(3, 6)
    got = _verdicts(tmp_path, text)
    assert set(prints) <= set(got), (prints, got)
    assert not any(v & set(FLAGS) for v in got.values()), got


def test_a_small_score_printed_to_its_rows_precision_moves_with_the_others(
    tmp_path: Path,
) -> None:
    """-0.0032 among 0.6368 and -1.9709: two significant digits, but printed to 4 decimals
    like its row, so it is a rounded print too; the sum of the exponentials is reached
    only when it moves as well."""
    text, prints = _softmax(121, 4)
    assert "The scores are 0.6368, -1.9709, -0.0032." in text
    got = _verdicts(tmp_path, text)
    assert set(prints) <= set(got), (prints, got)
    assert not any(v & set(FLAGS) for v in got.values()), got


def test_a_weight_no_point_of_the_scores_box_gives_is_flagged(tmp_path: Path) -> None:
    text, prints = _softmax(121, 4)
    z = [_box(t) for t in ("0.6368", "-1.9709", "-0.0032")]
    # p_1 = 1 / (1 + e^(z2 − z1) + e^(z3 − z1)) over the box of the scores
    p = 1 / (1 + mpmath.iv.exp(z[1] - z[0]) + mpmath.iv.exp(z[2] - z[0]))
    wrong = _print(mpmath.mpf(p.b) + mpmath.mpf("0.003"), 4)
    assert mpmath.mpf(wrong) - _half(wrong) > p.b
    got = _verdicts(tmp_path, text.replace(f"= {prints[-1]}\n", f"= {wrong}\n"))
    assert got[wrong] and got[wrong] <= set(FLAGS), got


ATTENTION = """# Attention by hand

The scores are {z} and the values are {v}.

{exps}

Sum: {terms} = {total}

{weights}

output = {products} = {out}
"""


def _attention(seed: int, decimals: int) -> tuple[str, list[str]]:
    """The softmax of three scores worked step by step, then the weighted sum of three values."""
    rng = random.Random(f"attn_chain_m6-{seed}")
    z = [_true(rng, -2, 2) for _ in range(3)]
    v = [_true(rng) for _ in range(3)]
    zs, vs = [_print(t, 4) for t in z], [_print(t, 4) for t in v]
    e = [mpmath.exp(t) for t in z]
    total = mpmath.fsum(e)
    es, ps = [_print(t, decimals) for t in e], [_print(t / total, decimals) for t in e]
    totals, out = (
        _print(total, decimals),
        _print(mpmath.fsum(t / total * u for t, u in zip(e, v, strict=True)), decimals),
    )
    text = ATTENTION.format(
        z=", ".join(zs),
        v=", ".join(vs),
        exps="\n\n".join(f"e^{{{a}}} = {b}" for a, b in zip(zs, es, strict=True)),
        terms=" + ".join(es),
        total=totals,
        weights="\n\n".join(f"p_{i + 1} = {es[i]} / {totals} = {ps[i]}" for i in range(3)),
        products=" + ".join(f"{a} × {_par(b)}" for a, b in zip(ps, vs, strict=True)),
        out=out,
    )
    return text, [*es, totals, *ps, out]


def test_a_weight_whose_inputs_leave_a_thin_sliver_of_their_box_is_reached(
    tmp_path: Path,
) -> None:
    """To 6 decimals p_1 = e_1 / S holds only where e_1 is in the lowest tenth of its
    interval and p_1 at the top of its own: the point must be sought close to the ends."""
    text, prints = _attention(13, 6)
    e1, total, p1 = (mpmath.mpf(prints[k]) for k in (0, 3, 4))
    h = mpmath.mpf("0.0000005")
    # the largest e_1 that still gives p_1's print, even with the largest S, is within a
    # tenth of e_1's interval of its lower end
    assert (p1 + h) * (total + h) < e1 - h + 2 * h / 10
    got = _verdicts(tmp_path, text)
    assert set(prints) <= set(got), (prints, got)
    assert not any(v & set(FLAGS) for v in got.values()), got


GAP = """# A gap

The inputs are x = [0.5000, 0.4999] and the weights w = [0.3127, 0.2219].

g = 1 / (0.5000 - 0.4999) = {g}
"""


def test_a_print_neither_reached_nor_ruled_out_is_undecided_not_flagged(tmp_path: Path) -> None:
    """0.5000 − 0.4999 over the box is [0, 0.0002]: 1/(it) is at least 5000 or undefined, so
    −5.000 is never reached, but no part of the box holding the zero can be enclosed, so
    nothing certifies that: the honest verdict is undecided."""
    lo = Fraction("0.49995") - Fraction("0.49995")  # the corner where the gap is 0
    hi = Fraction("0.50005") - Fraction("0.49985")
    assert lo == 0 and 1 / hi == 5000
    got = _verdicts(tmp_path, GAP.format(g="-5.000"))
    assert got["-5.000"] == {"undecided"}, got
    # a print the box reaches (the gap 0.0001 ± 0.0001 holds 1/0.00015) is accepted
    reached = _print(1 / mpmath.mpf("0.00015"), 3)
    assert _verdicts(tmp_path, GAP.format(g=reached))[reached] == {"rounded"}


# ------------------------------------------------------------- the search, on its own


def test_a_value_on_a_boundary_of_its_interval_is_moved_not_given_up() -> None:
    # one entry x ∈ [−0.1, 0.1] around 0.5; the value x itself must print in [0.5, 0.6]:
    # at the printed input it sits on the interval's lower end (no certified side)
    def at(moves: Any) -> list[Any]:
        from flint import arb

        v = Fraction(1, 2) + moves.get("x", Fraction(0))
        return [arb(v.numerator) / v.denominator]

    iv = Interval(Fraction("0.5"), Fraction("0.6"), True, False)
    assert reach([("x", Fraction("0.1"))], at, [iv])


# ------------------------------------- the diagnosis of inputs written to 4 decimals

PRODUCT = """
title = "a product of inputs written to 4 decimals"
[tensors]
X = {{ values = "{x}" }}
W = {{ values = \"\"\"
{w}
\"\"\" }}
[steps]
Y = "X @ W"
[[claims]]
label = "Y"
step = "Y"
printed = "{y}"
"""


def _product(seed: int) -> tuple[str, list[str], list[Any]]:
    rng = random.Random(f"cause-{seed}")
    x = [_true(rng) for _ in range(4)]
    w = [[_true(rng) for _ in range(3)] for _ in range(4)]
    y = [mpmath.fsum(x[i] * w[i][j] for i in range(4)) for j in range(3)]
    xs, ws = [_print(v, 4) for v in x], [[_print(v, 4) for v in row] for row in w]
    mid = [
        mpmath.fsum(mpmath.mpf(xs[i]) * mpmath.mpf(ws[i][j]) for i in range(4)) for j in range(3)
    ]
    ys = [_print(v, 6) for v in y]
    text = PRODUCT.format(x=" ".join(xs), w="\n".join(" ".join(r) for r in ws), y=" ".join(ys))
    return text, ys, mid


def test_the_diagnosis_names_rounded_inputs_when_only_all_of_them_reach_the_prints() -> None:
    text, ys, mid = _product(1)
    off = [y for y, m in zip(ys, mid, strict=True) if not rounds_to(m, y)]
    assert off  # the written inputs, read exactly, miss these prints
    report = symtf.check(symtf.loads(text))
    checks = {c.printed: c for c in report.derivations[0].checks}
    for y in off:
        c = checks[y]
        assert c.verdict in FLAGS  # the inputs are read as written: the values are off
        assert c.extra.get("cause") == "rounded-inputs", (c.extra.get("cause"), c.explanation)


# ------------------------------------------------------------------ the seeded sweep
# More seeds of each form, and the forms of one line: a dot product of 3, 8 or 16 terms,
# a softmax weight written as a fraction of exponentials, a normalisation by a sum, e^s and
# ln s, each printed to 4 or 6 decimals from inputs printed to 4.


def _dot(rng: random.Random, n: int, decimals: int) -> tuple[str, list[str]]:
    x = [_true(rng) for _ in range(n)]
    w = [_true(rng) for _ in range(n)]
    xs, ws = [_print(v, 4) for v in x], [_print(v, 4) for v in w]
    y = _print(mpmath.fsum(a * b for a, b in zip(x, w, strict=True)), decimals)
    terms = " + ".join(f"{a} × {_par(b)}" for a, b in zip(xs, ws, strict=True))
    return (
        f"# A weighted sum\n\nThe inputs are x = [{', '.join(xs)}] and the weights "
        f"w = [{', '.join(ws)}].\n\ny = {terms} = {y}\n"
    ), [y]


def _weight(rng: random.Random, decimals: int) -> tuple[str, list[str]]:
    z = [_true(rng, -2, 2) for _ in range(3)]
    zs = [_print(v, 4) for v in z]
    e = [mpmath.exp(v) for v in z]
    p = _print(e[0] / mpmath.fsum(e), decimals)
    den = " + ".join(f"e^{{{v}}}" for v in zs)
    return (
        f"# One weight\n\nThe scores are {', '.join(zs)}.\n\n"
        f"$$\\alpha_1 = \\frac{{e^{{{zs[0]}}}}}{{{den}}} = {p}$$\n"
    ), [p]


def _normalised(rng: random.Random, decimals: int) -> tuple[str, list[str]]:
    x = [_true(rng, 0.05, 1) for _ in range(3)]
    xs = [_print(v, 4) for v in x]
    y = _print(x[0] / mpmath.fsum(x), decimals)
    return (
        f"# Normalising\n\nThe weights are {', '.join(xs)}.\n\n"
        f"w_1 = {xs[0]} / ({' + '.join(xs)}) = {y}\n"
    ), [y]


def _exp_log(rng: random.Random, decimals: int) -> tuple[str, list[str]]:
    true = _true(rng, 0.05, 2)
    s = _print(true, 4)
    a, b = _print(mpmath.exp(true), decimals), _print(mpmath.log(true), decimals)
    return (f"# exp and log\n\nThe score is s = {s}.\n\ne^{{{s}}} = {a}\n\nln({s}) = {b}\n"), [a, b]


SWEEP: dict[str, Any] = {
    "dot3": lambda g: _dot(g, 3, 4),
    "dot8-6": lambda g: _dot(g, 8, 6),
    "dot16": lambda g: _dot(g, 16, 4),
    "weight-6": lambda g: _weight(g, 6),
    "normalised-6": lambda g: _normalised(g, 6),
    "exp-log-6": lambda g: _exp_log(g, 6),
    "chain": lambda g: _from_seed(_chain, g),
    "chain-6": lambda g: _from_seed(_chain, g, 6),
    "layer-norm": lambda g: _from_seed(_layer_norm, g),
    "softmax-4": lambda g: _from_seed(_softmax, g, 4),
}


def _from_seed(build: Any, rng: random.Random, *args: Any) -> tuple[str, list[str]]:
    text, built = build(rng.randrange(10**6), *args)
    prints = (
        built
        if isinstance(built, list)
        else [v for k, v in built.items() if k in ("y", "e", "mean", "var", "sd")]
    )
    return text, prints


@pytest.mark.slow  # about a minute: 10 forms × 12 seeds, each an article checked whole
@pytest.mark.parametrize("form", sorted(SWEEP))
def test_no_constructed_line_is_flagged(tmp_path: Path, form: str) -> None:
    for seed in range(12):
        text, prints = SWEEP[form](random.Random(f"sweep-{form}-{seed}"))
        got = _verdicts(tmp_path, text)
        flagged = {p: v for p, v in got.items() if v & set(FLAGS)}
        assert not flagged, (form, seed, flagged, text)
        assert set(prints) <= set(got), (form, seed, prints, got)


def _beyond(rng: random.Random, enclosure: Any, decimals: int) -> str:
    """A print to ``decimals`` whose whole rounding interval lies outside ``enclosure``."""
    unit = mpmath.mpf(10) ** -decimals
    step = unit * rng.randint(2, 4)
    if rng.random() < 0.5:
        return _print(mpmath.mpf(enclosure.b) + step, decimals)
    return _print(mpmath.mpf(enclosure.a) - step, decimals)


def _off_dot(rng: random.Random) -> tuple[str, str]:
    text, [y] = _dot(rng, 3, 4)
    xs, ws = (part.split("]")[0].split(", ") for part in text.split("[")[1:3])
    enclosure = mpmath.iv.mpf(0)
    for a, b in zip(xs, ws, strict=True):
        enclosure += _box(a) * _box(b)
    wrong = _beyond(rng, enclosure, 4)
    return text.replace(f"= {y}\n", f"= {wrong}\n"), wrong


def _off_chain(rng: random.Random) -> tuple[str, str]:
    text, b = _chain(rng.randrange(10**6), 6)
    y = _box(b["y"])
    # e^ over y's rounding interval and the y its printed inputs give (the chain's reading)
    hull = mpmath.iv.mpf([min(y.a, b["y_mid"]), max(y.b, b["y_mid"])])
    wrong = _beyond(rng, mpmath.iv.exp(hull), 6)
    return text.replace(f"= {b['e']}\n", f"= {wrong}\n"), wrong


def _off_normalised(rng: random.Random) -> tuple[str, str]:
    text, [y] = _normalised(rng, 6)
    xs = [_box(t) for t in text.split("are ")[1].split(".\n")[0].split(", ")]
    enclosure = xs[0] / (xs[0] + xs[1] + xs[2])  # wider than the range: a valid bound
    wrong = _beyond(rng, enclosure, 6)
    return text.replace(f"= {y}\n", f"= {wrong}\n"), wrong


def _off_exp(rng: random.Random) -> tuple[str, str]:
    text, [a, _] = _exp_log(rng, 6)
    s = text.split("s = ")[1].split(".\n")[0]
    wrong = _beyond(rng, mpmath.iv.exp(_box(s)), 6)
    return text.replace(f"= {a}\n", f"= {wrong}\n"), wrong


OFF: dict[str, Any] = {
    "dot": _off_dot,
    "chain": _off_chain,
    "normalised": _off_normalised,
    "exp": _off_exp,
}


@pytest.mark.parametrize("form", sorted(OFF))
def test_a_print_out_of_reach_of_the_box_is_flagged(tmp_path: Path, form: str) -> None:
    text, wrong = OFF[form](random.Random(f"off-{form}-0"))
    got = _verdicts(tmp_path, text)
    assert got[wrong] and got[wrong] <= set(FLAGS), (got, text)


@pytest.mark.slow  # half a minute: 4 forms × 12 seeds, each an article checked whole
@pytest.mark.parametrize("form", sorted(OFF))
def test_every_print_out_of_reach_of_the_box_is_flagged(tmp_path: Path, form: str) -> None:
    for seed in range(1, 13):
        text, wrong = OFF[form](random.Random(f"off-{form}-{seed}"))
        got = _verdicts(tmp_path, text)
        assert got[wrong] and got[wrong] <= set(FLAGS), (form, seed, got, text)
