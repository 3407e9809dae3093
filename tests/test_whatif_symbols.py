"""``symtf whatif`` with several symbols, whole matrices, temperature, and a cut-short run.

Expectations come from hand derivations on the "I love AI" model and from the
mpmath reference model (``tests/reference_model.py``, which does not import symtf).

By hand, with ``W_Q[0,0] = a`` and ``W_K[1,0] = b`` in head 0: the inputs are
``x_0 = (1, 0, 1, 0, 0, 0)`` and ``x_1 = (0.1, 1.1, 1.1, 0.1, 0.1, 0.1)``, so
``q_1 = (0.1a, 1.1)``, ``k_0 = (1, 1)``, ``k_1 = (0.1 + 1.1b, 1.1)``; the scores of
row 1 are ``s_10 = 0.1a + 1.1`` and ``s_11 = 0.1a(0.1 + 1.1b) + 1.21``, and
``A_1[1,0] = p = 1 / (1 + exp(D))`` with ``D = (s_11 − s_10)/√2 = (0.11ab − 0.09a + 0.11)/√2``.
At the file's ``a = 1, b = 0``: ``∂p/∂a = p(1 − p)·0.09/√2`` and ``∂p/∂b = −p(1 − p)·0.11/√2``.
"""

from __future__ import annotations

import copy
import json
import math
from fractions import Fraction
from pathlib import Path

import pytest
from mpmath import mp, mpf
from reference_model import forward, i_love_ai_weights, round_half_up

from symtf import cli

ROOT = Path(__file__).resolve().parent.parent
SEED = ROOT / "derivations" / "i_love_ai.toml"


def _m(q: Fraction) -> mpf:
    return mpf(q.numerator) / q.denominator


def _p_by_hand(a: mpf, b: mpf) -> mpf:
    d = (mpf("0.11") * a * b - mpf("0.09") * a + mpf("0.11")) / mp.sqrt(2)
    return 1 / (1 + mp.exp(d))


def _reference_p(a: Fraction, b: Fraction) -> mpf:
    w = copy.deepcopy(i_love_ai_weights())
    w["layers"][0]["heads"][0]["W_Q"][0][0] = a
    w["layers"][0]["heads"][0]["W_K"][1][0] = b
    return forward(w)["l0.h0.pattern"][1][0]


def test_two_symbols_partials_and_intervals_by_hand(tmp_path: Path) -> None:
    from symtf.teach.whatif import whatif

    r = whatif(
        SEED,
        ["l0.h0.W_Q[0,0]=a", "l0.h0.W_K[1,0]=b"],
        Fraction(-2),
        Fraction(2),
        claims=["A_1"],
        out=tmp_path,
    )
    o = next(o for o in r.outputs if o.index == (1, 0))
    assert [str(p.weight.symbol) for p in o.partials] == ["a", "b"]
    with mp.workdps(40):
        p = _p_by_hand(mpf(1), mpf(0))
        assert abs(p - _reference_p(Fraction(1), Fraction(0))) < mpf("1e-35")  # the hand form
        da = p * (1 - p) * mpf("0.09") / mp.sqrt(2)
        db = -p * (1 - p) * mpf("0.11") / mp.sqrt(2)
        pa, pb = o.partials
        assert pa.derivative is not None and pb.derivative is not None
        assert abs(mpf(pa.derivative.rstrip("…")) - da) < mpf("1e-15")
        assert abs(mpf(pb.derivative.rstrip("…")) - db) < mpf("1e-15")
        assert pa.derivative_exact is not None and pb.derivative_exact is not None
        assert abs(mpf(str(pa.derivative_exact.evalf(30))) - da) < mpf("1e-25")

        # Each interval with the other symbol at the file's value: p = c solved by hand.
        # p rises with a (b = 0): a = (0.11 − √2 ln(1/c − 1))/0.09; falls with b (a = 1):
        # b = (√2 ln(1/c − 1) − 0.02)/0.11. 0.496 is a correct rounding for 0.4955 ≤ p < 0.4965.
        def a_at(c: str) -> mpf:
            return (mpf("0.11") - mp.sqrt(2) * mp.log(1 / mpf(c) - 1)) / mpf("0.09")

        def b_at(c: str) -> mpf:
            return (mp.sqrt(2) * mp.log(1 / mpf(c) - 1) - mpf("0.02")) / mpf("0.11")

        for part, lo_end, hi_end, inside in (
            (pa, a_at("0.4955"), a_at("0.4965"), Fraction(1)),
            (pb, b_at("0.4965"), b_at("0.4955"), Fraction(0)),
        ):
            assert part.searched and len(part.intervals) == 1 and part.contains_value
            ol, il, ih, oh = part.intervals[0]
            assert _m(ol) <= lo_end <= _m(il) and _m(ih) <= hi_end <= _m(oh)
            assert ol <= inside <= oh
    # Just outside the ends the reference model's value rounds to another number.
    step = Fraction(1, 10**6)
    ol, il, ih, oh = pb.intervals[0]
    assert round_half_up(_reference_p(Fraction(1), il + step), 3) == "0.496"
    assert round_half_up(_reference_p(Fraction(1), ol - step), 3) != "0.496"
    assert round_half_up(_reference_p(Fraction(1), oh + step), 3) != "0.496"
    ol, il, ih, oh = pa.intervals[0]
    assert round_half_up(_reference_p(ol - step, Fraction(0)), 3) != "0.496"
    assert round_half_up(_reference_p(oh + step, Fraction(0)), 3) != "0.496"
    data = json.loads((tmp_path / "whatif.json").read_text())
    assert [s["symbol"] for s in data["symbols"]] == ["a", "b"] and data["complete"]
    assert (tmp_path / "whatif.png").stat().st_size > 1000


def test_two_symbols_on_the_command_line_say_the_other_is_held(
    capsys: pytest.CaptureFixture[str],
) -> None:
    args = ["whatif", str(SEED), "--symbol", "l0.h0.W_Q[0,0]=a", "--symbol", "l0.h0.W_K[1,0]=b"]
    assert cli.main([*args, "--claims", "A_1", "--range", "b=-1:1"]) == 0
    out = capsys.readouterr().out
    assert "∂/∂a at the file's values" in out and "∂/∂b at the file's values" in out
    assert "for b in [" in out and "(with a = 1, the file's value)" in out
    assert "l0.h0.W_K[1,0] = b (the file has 0); range [-1, 1]" in out


def test_whole_matrix_symbols_and_a_partial_by_hand() -> None:
    from symtf.teach.whatif import whatif

    r = whatif(SEED, "l0.h0.W_Q=w", Fraction(-2), Fraction(2), claims=["A_1"])
    # counted from 1, as the maths writes them: w_{2,1} is row 2, column 1 (W_Q[1,0])
    assert [str(w.symbol) for w in r.weights][:3] == ["w_{1,1}", "w_{1,2}", "w_{2,1}"]
    assert [w.index for w in r.weights][:3] == [(0, 0), (0, 1), (1, 0)]
    assert len(r.weights) == 12 and not r.searched  # 6x2 entries: no interval search
    o = next(o for o in r.outputs if o.index == (1, 0))
    by = {str(p.weight.symbol): p for p in o.partials}
    # W_Q[1,0] carries x_i1 into q_i0: ∂s_10 = 1.1·k_00 = 1.1, ∂s_11 = 1.1·k_10 = 0.11,
    # so ∂D = −0.99/√2 and ∂p/∂w_{2,1} = p(1 − p)·0.99/√2 (and W_Q[0,0]'s is the a above).
    with mp.workdps(40):
        p = _p_by_hand(mpf(1), mpf(0))
        want = p * (1 - p) * mpf("0.99") / mp.sqrt(2)
        assert abs(mpf(str(by["w_{2,1}"].derivative).rstrip("…")) - want) < mpf("1e-15")
        want_a = p * (1 - p) * mpf("0.09") / mp.sqrt(2)
        assert abs(mpf(str(by["w_{1,1}"].derivative).rstrip("…")) - want_a) < mpf("1e-15")
    assert all(not part.intervals and not part.searched for part in o.partials)


@pytest.mark.parametrize(
    ("symbols", "words"),
    [
        (["l0.h0.W_Q[0,0]=a", "l0.h0.W_X[0,0]=b"], "--symbol 'l0.h0.W_X[0,0]=b'"),
        (["l0.h0.W_Q[0,0]=a", "l0.h0.W_K[0,0]=a"], "the name 'a' is given twice"),
        (["l0.h0.W_Q[0,0]=a", "l0.h0.W_Q[0,0]=b"], "already made a symbol by --symbol"),
        (["l0.h0.W_Q=w", "l0.h0.W_Q[1,1]=b"], "already made a symbol by --symbol 'l0.h0.W_Q=w'"),
        (["scale=t", "l0.h1.scale=u"], "already made a symbol by --symbol 'scale=t'"),
        (["l0.h0.W_Q[0,0]=W_K"], "'W_K' is a reserved name"),
        (["l0.h0.W_Q[0,0]=a", "embed[9,0]=b"], "--symbol 'embed[9,0]=b': embed is"),
        (["l0.h7.W_Q=w"], "--symbol 'l0.h7.W_Q=w': no head l0.h7"),
    ],
)
def test_bad_symbols_exit_2_naming_the_symbol(
    symbols: list[str], words: str, capsys: pytest.CaptureFixture[str]
) -> None:
    args = ["whatif", str(SEED)]
    for s in symbols:
        args += ["--symbol", s]
    assert cli.main(args) == 2
    err = capsys.readouterr().err
    assert words in err and "Traceback" not in err


# ----------------------------------------------------------------------------- temperature


def _sampling_file(tmp_path: Path) -> Path:
    """The reference model with a fourth position and sampling at T = 1/2 after the prompt."""
    text = SEED.read_text(encoding="utf-8")
    start = text.index('pos = """\n') + len('pos = """\n')
    end = text.index('"""', start)
    text = text[:end] + "0.3 0.3 0.3 0.3 0.3 0.3\n" + text[end:]
    i = text.index("[input]")
    gen = '[generate]\nstrategy = "sample"\ntemperature = "0.5"\nmax_len = 1\n\n'
    text = text[:i] + gen + text[i:]
    text += (
        '\n[[claims]]\nlabel = "tempered"\nstep = "gen.0.temp.probs"\n'
        'printed = [["0.08", "0.02", "0.003", "0.2", "0.01", "0.0001", "0.6"]]\n'
    )
    p = tmp_path / "sampling.toml"
    p.write_text(text, encoding="utf-8")
    return p


def test_temperature_as_a_symbol_against_mpmath(tmp_path: Path) -> None:
    from symtf.teach.whatif import whatif

    path = _sampling_file(tmp_path)
    r = whatif(path, "temperature=T", Fraction(1, 4), Fraction(2), claims=["tempered"])
    assert r.weight.value == Fraction(1, 2)
    z = forward(i_love_ai_weights())["logits"][-1]  # the prompt's last logits, in mpmath

    def tempered(t: Fraction, j: int) -> mpf:
        ex = [mp.exp(x / _m(t)) for x in z]
        return ex[j] / sum(ex)

    o = next(o for o in r.outputs if o.index == (0, 6))
    with mp.workdps(40):
        assert o.value is not None
        assert abs(mpf(o.value.rstrip("…")) - tempered(Fraction(1, 2), 6)) < mpf("1e-15")
        assert o.printed == "0.6" and len(o.intervals) == 1 and o.contains_value
        ol, il, ih, oh = o.intervals[0]
        step = Fraction(1, 10**6)
        assert round_half_up(tempered(il + step, 6), 1) == "0.6"
        assert round_half_up(tempered(ih - step, 6), 1) == "0.6"
        outside = [t for t in (ol - step, oh + step) if Fraction(1, 4) <= t <= 2]
        assert outside  # at least one end is a root inside the range, not the range's end
        for t in outside:  # (an end at the range's end is not a root)
            assert round_half_up(tempered(t, 6), 1) != "0.6"


def test_temperature_needs_one_in_the_file(capsys: pytest.CaptureFixture[str]) -> None:
    assert cli.main(["whatif", str(SEED), "--symbol", "temperature=T"]) == 2
    assert "samples at no temperature" in capsys.readouterr().err


def test_spec_reads_a_symbolic_temperature(tmp_path: Path) -> None:
    import symtf

    text = _sampling_file(tmp_path).read_text().replace('temperature = "0.5"', 'temperature = "T"')
    d = symtf.loads(text, "t.toml")
    t = d.model.generate.temperature
    assert t.is_Symbol and t.is_positive
    # check searches a positive symbol's values in [0, 10], not [-10, 10]
    f = tmp_path / "symbolic.toml"
    f.write_text(text, encoding="utf-8")
    from symtf.checking import compare

    report = compare.check(symtf.spec.load(f))
    tempered = [c for r in report.results if r.claim.label == "tempered" for c in r.checks]
    assert len(tempered) == 7 and all(c.verdict == "symbolic" for c in tempered)
    assert all("searched T in [0, 10]" in c.explanation for c in tempered)
    bad = text.replace("max_len = 1", 'max_len = 1\ntop_p = "0.9"')
    with pytest.raises(symtf.errors.SpecError, match="top_p"):
        symtf.loads(bad, "t.toml")


# ----------------------------------------------------------------------------- sharpness


def test_sharpness_reads_the_articles_scores(tmp_path: Path) -> None:
    from symtf.shown import softmax_at
    from symtf.teach.whatif import whatif

    r = whatif(SEED, "scale=t", Fraction(1, 2), Fraction(4), claims=["S_1"], out=tmp_path)
    ref = forward(i_love_ai_weights())
    assert [s.head for s in r.sharpness] == ["l0.h0", "l0.h1", "l0.h2"]
    for sh in r.sharpness:
        want = ref[f"{sh.head}.scores"]
        for i, row in enumerate(sh.scores):
            for j, v in enumerate(row):
                if j > i:
                    assert v == -math.inf  # causal mask
                else:
                    assert abs(v - float(want[i][j])) < 1e-12
    # At the file's divisor √2 the softmax of a row is the article's pattern row.
    sh = r.sharpness[0]
    (row,) = softmax_at(sh.scores[2], [float(sh.divisor)])
    assert max(abs(a - float(b)) for a, b in zip(row, ref["l0.h0.pattern"][2], strict=True)) < 1e-12
    assert (tmp_path / "sharpness.png").stat().st_size > 1000


# ----------------------------------------------------------------------------- time budget


def test_budget_running_out_gives_a_partial_report(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    from symtf.teach import whatif as W

    calls = {"n": 0}

    def nearly_spent() -> float | None:  # two entries finish, then the budget is nearly gone
        calls["n"] += 1
        return None if calls["n"] <= 2 else 0.1

    monkeypatch.setattr(W, "time_left", nearly_spent)
    out = tmp_path / "out"
    args = ["whatif", str(SEED), "--symbol", "l0.h0.W_Q[0,0]=a", "--claims", "A_1", "-o", str(out)]
    assert cli.main(args) == 2
    got = capsys.readouterr()
    assert "PARTIAL" in got.out and "2 of 9 entries finished" in got.out
    assert "not reached: A_1, row 1, column 3; A_1, row 2, column 1" in got.out
    assert "partial, 2 of 9 entries finished" in got.err and "Traceback" not in got.err
    data = json.loads((out / "whatif.json").read_text())
    assert not data["complete"] and len(data["not_reached"]) == 7


@pytest.mark.parametrize(
    ("ranges", "words"),
    [
        (["z=0:1"], "no --symbol is named 'z'"),
        (["a=0:1", "a=0:2"], "a second range for 'a'"),
        (["0:1", "-1:1"], "a second default range"),
        (["a=1:0"], "expected LO < HI"),
    ],
)
def test_bad_ranges_exit_2(
    ranges: list[str], words: str, capsys: pytest.CaptureFixture[str]
) -> None:
    args = ["whatif", str(SEED), "--symbol", "l0.h0.W_Q[0,0]=a", "--claims", "A_1"]
    for x in ranges:
        args += ["--range", x]
    assert cli.main(args) == 2
    assert words in capsys.readouterr().err


# ----------------------------------------------------------------------------- reserved names


@pytest.mark.parametrize("name", ["E", "pi", "I", "oo", "nan", "zoo", "inf", "NaN", "W_Q", "scale"])
@pytest.mark.parametrize("form", ["l0.h0.W_Q[0,0]={}", "l0.h0.W_K={}", "scale={}"])
def test_whatif_and_symbols_refuse_the_same_reserved_names(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], name: str, form: str
) -> None:
    """``--symbol …=E`` was accepted, and its closed forms printed E where Euler's e
    reads; ``[symbols]`` refused the name. One rule now: both refuse it, in the same words."""
    assert cli.main(["whatif", str(SEED), "--symbol", form.format(name)]) == 2
    err = capsys.readouterr().err
    reason = f"{name!r} is a reserved name"
    assert reason in err and "Traceback" not in err, err
    declared = tmp_path / "declared.toml"
    declared.write_text(
        SEED.read_text(encoding="utf-8") + f"\n[symbols]\n{name} = {{ range = [-1, 1] }}\n",
        encoding="utf-8",
    )
    assert cli.main(["check", str(declared)]) == 2
    err = capsys.readouterr().err
    assert f"symbols.{name}: {reason}" in err, err


def test_the_text_names_entries_from_1_and_typesets_the_maths(
    capsys: pytest.CaptureFixture[str],
) -> None:
    # A_1[1, 0] (from 0) is row 2, column 1 for people; its closed form is
    # e^(s_10/√2) / (e^(s_10/√2) + e^(s_11/√2)), written with e^ and √, not exp( and sqrt(
    args = ["whatif", str(SEED), "--symbol", "l0.h0.W_Q[0,0]=a", "--claims", "A_1"]
    assert cli.main(args) == 0
    out = capsys.readouterr().out
    assert "A_1, row 2, column 1\n  = " in out
    assert "A_1 [1, 0]" not in out and "(l0.h0.pattern)" not in out
    for sympy_syntax in ("**", "exp(", "sqrt(", "*a", "a*"):
        assert sympy_syntax not in out, (sympy_syntax, out)
    assert "e^(" in out and "√2" in out
    # a whole matrix: one symbol per entry, counted from 1, subscripts typeset
    assert cli.main(["whatif", str(SEED), "--symbol", "l0.h0.W_Q=w", "--claims", "A_1"]) == 0
    out = capsys.readouterr().out
    assert "w₁,₁" in out and "w_{" not in out and "w₀" not in out
