"""Teaching tools: exercise sheets and keys, fresh numbers, grading, what-if.

Expected values come from tests/reference_model.py (an mpmath forward pass that
does not import symtf) or from how a case was built (a slip is one unit off
the reference rounding; the chain error is a softmax of the unscaled scores,
computed here in mpmath).
"""

from __future__ import annotations

import copy
import json
import re
import shutil
import subprocess
import tomllib
from fractions import Fraction
from pathlib import Path

import pytest
from mpmath import mp, mpf
from reference_model import forward, i_love_ai_weights, round_half_up, to_fraction

from symtf import cli

ROOT = Path(__file__).resolve().parent.parent
SEED = ROOT / "derivations" / "i_love_ai.toml"
HAVE_TEX = shutil.which("latexmk") is not None and shutil.which("pdflatex") is not None


def _key(folder: Path) -> list[dict]:
    return tomllib.loads((folder / "key.toml").read_text())["blanks"]


def _ref_rounding(x: object, decimals: int) -> str:
    return round_half_up(x, decimals)


# ----------------------------------------------------------------------------- exercise


@pytest.fixture(scope="module")
def seed_exercise(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("exercise")
    args = ["exercise", str(SEED), "-o", str(out), "--blank-steps", "A_1,logits", "--seed", "1"]
    if not HAVE_TEX:
        args.append("--no-pdf")
    assert cli.main(args) == 0
    return out


def test_seed_key_agrees_with_reference(seed_exercise: Path) -> None:
    ref = forward(i_love_ai_weights())
    blanks = _key(seed_exercise)
    assert {b["step"] for b in blanks} == {"l0.h0.pattern", "logits"}
    assert len(blanks) == 9 + 7
    for b in blanks:
        i, j = b["index"]
        assert b["answer"] == _ref_rounding(ref[b["step"]][i][j], b["decimals"]), b
    # The article printed -2.049 for the logit of "math"; its correct rounding is -2.048.
    math_logit = next(b for b in blanks if b["step"] == "logits" and b["index"] == [0, 5])
    assert (math_logit["printed"], math_logit["answer"]) == ("-2.049", "-2.048")
    assert math_logit["printed_verdict"] == "slip"


def test_seed_sheet_hides_the_blanks(seed_exercise: Path) -> None:
    page = (seed_exercise / "sheet.html").read_text()
    assert "<script" not in page.lower()
    assert not re.search(r"(src|href)\s*=\s*[\"']?(https?:)?//", page)
    text = re.sub(r"<[^>]+>", " ", page)
    for b in _key(seed_exercise):
        assert f">{b['id']}<" in page
    # The A_1 row 2 weights and the logits are printed nowhere else on the sheet.
    for hidden in ("0.474", "0.241", "0.285", "2.229", "1.737", "-2.049"):
        assert hidden not in text, hidden
    assert "0.496" in text  # A_3 prints it too, and A_3 is not blanked
    key_page = (seed_exercise / "key.html").read_text()
    assert "-2.048" in key_page and "<script" not in key_page.lower()
    template = tomllib.loads((seed_exercise / "answers.toml").read_text())
    assert set(template["answers"]) == {b["id"] for b in _key(seed_exercise)}


@pytest.mark.skipif(not HAVE_TEX, reason="latexmk/pdflatex not installed")
def test_seed_pdfs_compile(seed_exercise: Path, tmp_path: Path) -> None:
    from symtf.commands.teach import compile_pdf

    for name in ("sheet", "key"):
        pdf = seed_exercise / f"{name}.pdf"
        assert pdf.exists() and pdf.stat().st_size > 1000
        log = tmp_path / f"{name}.log"
        tex = (seed_exercise / f"{name}.tex").read_text()
        assert compile_pdf(tex, tmp_path / f"{name}.pdf", log=log)
        assert "Overfull \\hbox" not in log.read_text(errors="replace"), name
    if shutil.which("pdftotext"):
        text = subprocess.run(
            ["pdftotext", str(seed_exercise / "key.pdf"), "-"],
            capture_output=True,
            text=True,
            check=True,
        ).stdout
        assert "Answer: -2.048" in text.replace("−", "-")


def test_worked_lines_by_hand() -> None:
    from symtf import spec
    from symtf.graph.pipeline import run
    from symtf.teach.worked import worked

    d = spec.load(SEED)
    t = run(d)
    # QK^T[1, 1] for "love": the article's own line 0.1*0.1 + 1.1*1.1.
    w = worked(t, d, "l0.h0.scores", 1, 1)
    assert w.substituted is not None and w.substituted.text == "0.1·0.1 + 1.1·1.1"
    assert not w.approximate
    # LayerNorm mean of the row 1 0 2 1 1 0 (R_1 for "I").
    w = worked(t, d, "l0.ln1.mean", 0, 0)
    assert w.substituted is not None and w.substituted.text == "(1 + 0 + 2 + 1 + 1 + 0) / 6"
    # A_1[1, 0]: scores 0.6 and 1.22 over sqrt(2) = 0.848528... and 0.862670...
    w = worked(t, d, "l0.h0.pattern", 1, 0)
    assert w.substituted is not None and w.approximate
    assert w.substituted.text == "e^0.848528… / (e^0.848528… + e^0.86267…)"


def test_a_masked_attention_weight_is_worked_as_exactly_zero() -> None:
    from symtf import spec
    from symtf.graph.pipeline import run
    from symtf.teach.worked import worked

    d = spec.load(ROOT / "derivations" / "gpt2_block.toml")
    t = run(d)
    # Causal mask: token 0 cannot see token 1, so its weight is e^−∞ / (…) = 0 exactly,
    # and no truncated value of the row is written in (the line reads "=", not "≈").
    w = worked(t, d, "l0.h0.pattern", 0, 1)
    assert w.substituted is not None and w.substituted.text == "e^−∞ / (…) = 0"
    assert w.approximate is False


#: The ops whose entries the exercises work by hand.
WORKED_OPS = {
    "linear", "matmul", "scale", "mask_future", "softmax", "concat", "add", "sub",
    "mean", "mean_square", "norm_root", "normalize", "relu", "gelu", "gelu_tanh",
    "silu", "embed", "mul", "rope", "last_row", "identity",
}  # fmt: skip


def test_each_worked_op_carries_its_working_in_the_registry() -> None:
    from symtf import ops

    with_work = {name for name, op in ops.REGISTRY.items() if op.work is not None}
    assert with_work == WORKED_OPS
    assert all(ops.get(name).work is not None for name in WORKED_OPS)


def test_a_step_is_worked_by_the_working_of_the_op_it_recorded() -> None:
    import dataclasses

    from symtf import ops, spec
    from symtf.graph.pipeline import run
    from symtf.teach.worked import worked
    from symtf.trace import Trace

    d = spec.load(SEED)
    t = run(d)
    assert t["x"].op == "add" and t["x"].inputs == ("embed", "pos")  # x = embed + pos

    def recorded_as(**changes: object) -> Trace:
        steps = [dataclasses.replace(t[n], **changes) if n == "x" else t[n] for n in t]
        return Trace(steps, t.backend)

    w = worked(t, d, "x", 0, 0)
    assert w.formula is not None and w.formula.text == "embed[0,0] + pos[0,0]"
    assert w.substituted is not None
    # The same step recorded as an op without a working: no lines at all.
    assert ops.get("exp").work is None
    w = worked(recorded_as(op="exp"), d, "x", 0, 0)
    assert w.formula is None and w.substituted is None
    # An add recorded with one input is not the a + b its working writes: none either.
    w = worked(recorded_as(inputs=("embed",)), d, "x", 0, 0)
    assert w.formula is None and w.substituted is None


# ----------------------------------------------------------------------------- fresh


def _matrix(v: str, rows: int, cols: int) -> list[list[Fraction]]:
    v = v.strip()
    if v == "identity":
        return [[Fraction(int(i == j)) for j in range(cols)] for i in range(rows)]
    if v in ("zeros", "ones"):
        return [[Fraction(int(v == "ones"))] * cols for _ in range(rows)]
    return [[Fraction(t) for t in line.split()] for line in v.splitlines() if line.strip()]


def _weights_from_toml(path: Path) -> dict:
    """The fresh model, read from its TOML text by this test (not by symtf)."""
    data = tomllib.loads(path.read_text())
    m = data["model"]
    d = m["d_model"]
    vocab = m["vocab"]
    layer_raw = m["layers"][0]
    heads = [
        {k: _matrix(h[k], d, m.get("d_head", d // m["n_heads"])) for k in ("W_Q", "W_K", "W_V")}
        for h in layer_raw["heads"]
    ]
    layer = {
        "heads": heads,
        "W_O": _matrix(layer_raw.get("W_O", "identity"), d, d),
        "W1": _matrix(layer_raw.get("W1", "identity"), d, d),
        "b1": _matrix(layer_raw.get("b1", "zeros"), 1, d)[0],
        "W2": _matrix(layer_raw.get("W2", "identity"), d, d),
        "b2": _matrix(layer_raw.get("b2", "zeros"), 1, d)[0],
        "ln1_gamma": [Fraction(1)] * d,
        "ln1_beta": [Fraction(0)] * d,
        "ln2_gamma": [Fraction(1)] * d,
        "ln2_beta": [Fraction(0)] * d,
    }
    return {
        "vocab": vocab,
        "token_ids": [vocab.index(t) for t in data["input"]["tokens"]],
        "embed": _matrix(m["embed"], len(vocab), d),
        "pos": _matrix(m["pos"], 3, d),
        "d_head": d // m["n_heads"],
        "mask": m.get("mask", "causal"),
        "eps": Fraction(m.get("eps", "0")),
        "layers": [layer],
        "unembed": _matrix(m["unembed"], d, len(vocab)),
    }


@pytest.fixture(scope="module")
def fresh_exercise(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("fresh")
    args = [
        "exercise",
        str(SEED),
        "-o",
        str(out),
        "--fresh",
        "--seed",
        "7",
        "--blank",
        "12",
        "--no-pdf",
    ]
    assert cli.main(args) == 0
    return out


def test_fresh_key_agrees_with_mpmath(fresh_exercise: Path) -> None:
    weights = _weights_from_toml(fresh_exercise / "derivation.toml")
    assert weights["layers"][0]["heads"] != i_love_ai_weights()["layers"][0]["heads"]
    ref = forward(weights)
    blanks = _key(fresh_exercise)
    assert len(blanks) == 12
    for b in blanks:
        i, j = b["index"]
        assert b["answer"] == _ref_rounding(ref[b["step"]][i][j], b["decimals"]), b
    # Every number the fresh derivation prints is right (it was computed, not copied).
    from reference_model import classify

    data = tomllib.loads((fresh_exercise / "derivation.toml").read_text())
    checked = 0
    for c in data["claims"]:
        if c.get("step") in ("l0.h0.pattern", "logits", "l0.ln2") and not {
            "row",
            "index",
            "reduce",
            "rank",
        } & set(c):
            rows = [r.split() for r in c["printed"].strip().splitlines()]
            for i, row in enumerate(rows):
                for j, p in enumerate(row):
                    if p != "-inf":
                        assert classify(p, ref[c["step"]][i][j], c.get("decimals")) in (
                            "exact",
                            "rounded",
                        )
                        checked += 1
    assert checked > 20


def test_fresh_is_seeded_and_structure_kept(fresh_exercise: Path, tmp_path: Path) -> None:
    same = tmp_path / "same"
    other = tmp_path / "other"
    for folder, seed in ((same, "7"), (other, "8")):
        assert (
            cli.main(
                [
                    "exercise",
                    str(SEED),
                    "-o",
                    str(folder),
                    "--fresh",
                    "--seed",
                    seed,
                    "--blank",
                    "12",
                    "--no-pdf",
                ]
            )
            == 0
        )
    text = (fresh_exercise / "derivation.toml").read_text()
    assert (same / "derivation.toml").read_text() == text
    assert (other / "derivation.toml").read_text() != text
    fresh_w = _weights_from_toml(fresh_exercise / "derivation.toml")
    seed_w = i_love_ai_weights()
    for h_new, h_old in zip(
        fresh_w["layers"][0]["heads"], seed_w["layers"][0]["heads"], strict=True
    ):
        for k in ("W_Q", "W_K", "W_V"):
            zeros_new = [[x == 0 for x in r] for r in h_new[k]]
            zeros_old = [[x == 0 for x in r] for r in h_old[k]]
            assert zeros_new == zeros_old  # which features a head reads is the structure
    assert "identity" in tomllib.loads(text)["model"]["layers"][0]["W_O"]
    # No LayerNorm row of the fresh model is constant, and the top logit is not a tie.
    ref = forward(fresh_w)
    for name in ("l0.ln1.var", "l0.ln2.var"):
        assert all(row[0] > mpf("1e-30") for row in ref[name])
    logits = ref["logits"][0]
    top = sorted(logits, reverse=True)
    assert top[0] - top[1] > mpf("1e-30")


# ----------------------------------------------------------------------------- grade


@pytest.fixture(scope="module")
def grade_exercise(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("grade")
    args = ["exercise", str(SEED), "-o", str(out), "--blank-steps", "S_1,A_1,H_1", "--no-pdf"]
    assert cli.main(args) == 0
    return out


def _student(folder: Path) -> tuple[dict[str, str], dict[str, str]]:
    """Answers built from the reference: right ones, one slip, one chain error.

    Returns the answers and the expected verdict per blank id.
    """
    ref = forward(i_love_ai_weights())
    blanks = {b["id"]: b for b in _key(folder)}
    by_entry = {(b["step"], *b["index"]): bid for bid, b in blanks.items()}
    answers: dict[str, str] = {}
    expected: dict[str, str] = {}
    for bid, b in blanks.items():
        i, j = b["index"]
        answers[bid] = _ref_rounding(ref[b["step"]][i][j], 3)
        expected[bid] = "ok"
    # 0.4870 and 0.487: a right answer with one more decimal is still right.
    b = by_entry[("l0.h0.pattern", 1, 0)]
    answers[b] = _ref_rounding(ref["l0.h0.pattern"][1][0], 4)
    with mp.workdps(60):
        # Chain error: A_1 row 2 is the softmax of the unscaled scores QK^T.
        raw = ref["l0.h0.scores"][2]
        exps = [mp.exp(x) for x in raw]
        wrong_row = [e / sum(exps) for e in exps]
        for j, v in enumerate(wrong_row):
            bid = by_entry[("l0.h0.pattern", 2, j)]
            answers[bid] = _ref_rounding(v, 3)
            expected[bid] = "wrong"
        # H_1 row 2 from the student's own (wrong) A_1 row 2: the error carried on.
        own = [Fraction(answers[by_entry[("l0.h0.pattern", 2, k)]]) for k in range(3)]
        v = ref["l0.h0.v"]  # short decimals (X W_V): read back exactly
        for j in range(2):
            h = sum(own[k] * Fraction(mp.nstr(v[k][j], 15)) for k in range(3))
            bid = by_entry[("l0.h0.z", 2, j)]
            answers[bid] = _ref_rounding(h, 3)
            expected[bid] = "inherited"
        # A slip: H_1[1, 0] one unit off, towards the exact value.
        x = to_fraction(ref["l0.h0.z"][1][0])
        r = Fraction(_ref_rounding(x, 3))
        slip = r + Fraction(1, 1000) if x > r else r - Fraction(1, 1000)
        bid = by_entry[("l0.h0.z", 1, 0)]
        answers[bid] = f"{float(slip):.3f}"
        expected[bid] = "slip"
    return answers, expected


def _write_answers(path: Path, answers: dict[str, str]) -> None:
    path.write_text(
        'student = "Ada"\n[answers]\n'
        + "".join(f'{json.dumps(k)} = "{v}"\n' for k, v in answers.items())
    )


def test_grade_classes_and_first_wrong_step(
    grade_exercise: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    answers, expected = _student(grade_exercise)
    student = tmp_path / "ada.toml"
    _write_answers(student, answers)
    assert (
        cli.main(["grade", str(grade_exercise / "key.toml"), str(student), "--format", "json"]) == 1
    )
    result = json.loads(capsys.readouterr().out)
    got = {a["id"]: a for a in result["answers"]}
    for bid, exp in expected.items():
        a = got[bid]
        if exp == "ok":
            assert a["verdict"] in ("exact", "rounded"), a
        elif exp == "wrong":
            assert a["verdict"] == "wrong" and a["cause"] == "convention", a
            assert a["convention"].startswith("no-sqrt-dk"), a
        elif exp == "inherited":
            assert a["verdict"] in ("wrong", "slip") and a["cause"] == "inherited", a
            assert got[a["root"]]["step"] == "l0.h0.pattern" and got[a["root"]]["index"][0] == 2
        elif exp == "slip":
            assert a["verdict"] == "slip", a
    first = result["first_off"]
    assert "A_1, row 3" in first and "unscaled" in first and "l0." not in first
    assert "S_1, row 3 is right" in first  # the third row (index 2), counted from 1
    assert cli.main(["grade", str(grade_exercise / "key.toml"), str(student)]) == 1
    text = capsys.readouterr().out
    # the same row as first_off names, counted from 1 in both
    assert "A_1, row 3 used the unscaled scores" in text and "row 2 used" not in text


def test_grade_all_right_and_bad_input(
    grade_exercise: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    ref = forward(i_love_ai_weights())
    answers = {
        b["id"]: _ref_rounding(ref[b["step"]][b["index"][0]][b["index"][1]], 3)
        for b in _key(grade_exercise)
    }
    good = tmp_path / "good.toml"
    _write_answers(good, answers)
    key = str(grade_exercise / "key.toml")
    assert cli.main(["grade", key, str(good)]) == 0
    # A bare TOML number keeps its written digits: 0.7071 (four decimals) is still right.
    bare = tmp_path / "bare.toml"
    s1 = to_fraction(forward(i_love_ai_weights())["l0.h0.scaled"][0][0])
    b1 = next(
        b["id"]
        for b in _key(grade_exercise)
        if b["step"] == "l0.h0.scaled" and b["index"] == [0, 0]
    )
    text = good.read_text().replace(
        f'{json.dumps(b1)} = "{answers[b1]}"', f"{json.dumps(b1)} = {_ref_rounding(s1, 4)}"
    )
    bare.write_text(text)
    capsys.readouterr()
    assert cli.main(["grade", key, str(bare), "--format", "json"]) == 0
    got = {a["id"]: a for a in json.loads(capsys.readouterr().out)["answers"]}
    assert got[b1]["answer"] == _ref_rounding(s1, 4) and got[b1]["verdict"] == "rounded"
    bad = tmp_path / "bad.toml"
    _write_answers(bad, {**answers, "?999": "1"})
    assert cli.main(["grade", key, str(bad)]) == 2
    assert '"?999"' in capsys.readouterr().err
    _write_answers(bad, {**answers, "?1": "about 0.7"})
    assert cli.main(["grade", key, str(bad)]) == 2
    assert 'answers."?1"' in capsys.readouterr().err
    tampered = tmp_path / "t"
    shutil.copytree(grade_exercise, tampered)
    (tampered / "derivation.toml").write_text(
        (tampered / "derivation.toml").read_text() + "\n# edited\n"
    )
    assert cli.main(["grade", str(tampered / "key.toml"), str(good)]) == 2
    assert "sha256" in capsys.readouterr().err


# ----------------------------------------------------------------------------- whatif


def _pattern_at(a: Fraction) -> list[list[mpf]]:
    w = copy.deepcopy(i_love_ai_weights())
    w["layers"][0]["heads"][0]["W_Q"][0][0] = a
    return forward(w)["l0.h0.pattern"]


def test_whatif_formulas_roots_and_plot(tmp_path: Path) -> None:
    import sympy

    from symtf.teach.whatif import whatif

    r = whatif(SEED, "l0.h0.W_Q[0,0]=a", Fraction(-2), Fraction(2), claims=["A_1"], out=tmp_path)
    a = r.weight.symbol
    by = {o.index: o for o in r.outputs}
    assert not by[(0, 0)].depends and by[(1, 0)].depends
    for a_val in (Fraction(1), Fraction(-3, 4)):
        ref = _pattern_at(a_val)
        for (i, j), o in by.items():
            if not o.depends:
                continue
            assert o.closed is not None
            f = sympy.lambdify(a, o.closed, "mpmath")
            with mp.workdps(50):
                assert abs(f(mpf(a_val.numerator) / a_val.denominator) - ref[i][j]) < mpf("1e-40")
    # Derivative at the file's value (a = 1), against a central difference in mpmath.
    with mp.workdps(60):
        h = Fraction(1, 10**20)
        num = (_pattern_at(1 + h)[1][0] - _pattern_at(1 - h)[1][0]) / (
            2 * mpf(h.numerator) / h.denominator
        )
        assert abs(mpf(by[(1, 0)].derivative.rstrip("…")) - num) < mpf("1e-14")
    # The printed 0.496 is a correct rounding on an interval that holds the file's value 1.
    o = by[(1, 0)]
    assert o.printed == "0.496" and len(o.intervals) == 1 and o.contains_value
    outer_lo, inner_lo, inner_hi, outer_hi = o.intervals[0]
    assert outer_lo <= 1 <= outer_hi and inner_hi - inner_lo > Fraction(1, 100)
    step = Fraction(1, 10**6)
    assert round_half_up(_pattern_at(inner_lo + step)[1][0], 3) == "0.496"
    assert round_half_up(_pattern_at(inner_hi - step)[1][0], 3) == "0.496"
    assert round_half_up(_pattern_at(outer_lo - step)[1][0], 3) != "0.496"
    assert round_half_up(_pattern_at(outer_hi + step)[1][0], 3) != "0.496"
    for ext in ("png", "svg"):
        assert (tmp_path / f"whatif.{ext}").stat().st_size > 1000
    data = json.loads((tmp_path / "whatif.json").read_text())
    assert data["symbol"] == "a" and data["outputs"]


@pytest.mark.parametrize(
    "symbol",
    ["l0.h0.W_Q[9,0]=a", "l0.h7.W_Q[0,0]=a", "W_Q=a", "l0.h0.W_Q[0,0]=1a", "nonsense[0,0]=a"],
)
def test_whatif_bad_symbol_exits_2(symbol: str, capsys: pytest.CaptureFixture[str]) -> None:
    assert cli.main(["whatif", str(SEED), "--symbol", symbol]) == 2
    assert "--symbol" in capsys.readouterr().err


def test_exercise_bad_input_exits_2(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert (
        cli.main(["exercise", str(SEED), "-o", str(tmp_path), "--blank-steps", "no.such.step"]) == 2
    )
    assert "matches no printed entry" in capsys.readouterr().err
    assert cli.main(["exercise", str(SEED), "-o", str(tmp_path), "--blank", "100000"]) == 2


@pytest.mark.parametrize("name", ["gpt2_block", "llama_block", "rope_toy"])
def test_fresh_other_models(name: str, tmp_path: Path) -> None:
    args = ["exercise", str(ROOT / "derivations" / f"{name}.toml"), "-o", str(tmp_path)]
    assert cli.main([*args, "--fresh", "--seed", "3", "--blank", "4", "--no-pdf"]) == 0
    assert len(_key(tmp_path)) == 4
    assert cli.main(["check", str(tmp_path / "derivation.toml")]) == 0


def test_fresh_refuses_encoder_decoder(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    args = ["exercise", str(ROOT / "derivations" / "translation_toy.toml"), "-o", str(tmp_path)]
    assert cli.main([*args, "--fresh", "--no-pdf"]) == 2
    assert "encoder-decoder" in capsys.readouterr().err


@pytest.mark.parametrize(
    ("value", "decimals", "printed"),
    [
        ("43/200", 6, "0.215000"),  # exact with fewer decimals than printed: padded
        ("1/16", 3, "0.0625"),  # exact with up to 4 decimals: printed exactly
        ("1/32", 4, None),  # 0.03125 is a rounding tie at 4 decimals: redrawn
        ("5/6", 3, "0.833"),
    ],
)
def test_fresh_printed_values(value: str, decimals: int, printed: str | None) -> None:
    import sympy

    from symtf.checking.evaluation import Quantity
    from symtf.teach.fresh import _printed_text

    e = sympy.Rational(value)
    q = Quantity(lambda prec: None, lambda: (e, None))
    got = _printed_text(q, decimals, "half-up")
    assert (got[0] if got else None) == printed


def test_whatif_ffn_weight_intervals_by_hand(capsys: pytest.CaptureFixture[str]) -> None:
    from symtf.teach.whatif import whatif

    # ffn_pre[0, 2] = w * ln1[0, 2] (W1 is the identity otherwise), so 1.698 is a correct
    # rounding exactly for w in [1.6975, 1.6985) / ln1[0, 2].
    r = whatif(
        SEED, "l0.W1[2,2]=w", Fraction(0), Fraction(3), claims=["ReLU I: input", "ReLU AI: output"]
    )
    ln1 = forward(i_love_ai_weights())["l0.ln1"]
    o = next(o for o in r.outputs if o.label == "ReLU I: input" and o.index == (0, 2))
    assert len(o.intervals) == 1
    outer_lo, inner_lo, inner_hi, outer_hi = o.intervals[0]
    with mp.workdps(50):
        lo, hi = mpf("1.6975") / ln1[0][2], mpf("1.6985") / ln1[0][2]
        assert (
            mpf(outer_lo.numerator) / outer_lo.denominator
            <= lo
            <= mpf(inner_lo.numerator) / inner_lo.denominator
        )
        assert (
            mpf(inner_hi.numerator) / inner_hi.denominator
            <= hi
            <= mpf(outer_hi.numerator) / outer_hi.denominator
        )
        assert abs(mpf(o.derivative.rstrip("…")) - ln1[0][2]) < mpf("1e-14")
    # ReLU of w * ln1[2, 2] < 0 is 0 for every w >= 0: "0" is right on the whole range.
    z = next(o for o in r.outputs if o.label == "ReLU AI: output" and o.index == (2, 2))
    assert z.intervals == [(Fraction(0), Fraction(0), Fraction(3), Fraction(3))]
    assert (
        cli.main(
            [
                "whatif",
                str(SEED),
                "--symbol",
                "l0.W1[2,2]=w",
                "--range",
                "0:3",
                "--claims",
                "ReLU AI: output",
            ]
        )
        == 0
    )
    assert "for w in [0, 3] (exact ends)" in capsys.readouterr().out


def test_whatif_negative_range_on_the_command_line(capsys: pytest.CaptureFixture[str]) -> None:
    args = ["whatif", str(SEED), "--symbol", "l0.h0.W_Q[0,0]=a", "--range", "-1:1.5"]
    assert cli.main([*args, "--claims", "head 2: love attends to itself"]) == 0
    out = capsys.readouterr().out
    assert "range [-1, 3/2]" in out and "does not depend on a" in out
    assert cli.main([*args[:-1], "2:1"]) == 2
    assert "LO < HI" in capsys.readouterr().err


def test_exercise_on_a_batch_heads_file_is_a_clear_error(tmp_path) -> None:
    """Entries of 4-D steps (printed with ``at``) are not blanked yet: exit 2 saying so, not a crash."""
    import subprocess
    import sys

    r = subprocess.run(
        [
            sys.executable,
            "-m",
            "symtf",
            "exercise",
            "derivations/steps_batch_heads.toml",
            "-o",
            str(tmp_path / "ex"),
            "--no-pdf",
        ],
        capture_output=True,
        text=True,
    )
    assert r.returncode == 2, r.stderr
    assert "cannot be blanked yet" in r.stderr and "Traceback" not in r.stderr


# ----------------------------------------------------------------------------- grading rules


def _grade_json(key: Path, answers: dict[str, str], tmp_path: Path, capsys) -> tuple[int, dict]:
    path = tmp_path / "answers.toml"
    _write_answers(path, answers)
    capsys.readouterr()
    code = cli.main(["grade", str(key), str(path), "--format", "json"])
    return code, {a["id"]: a for a in json.loads(capsys.readouterr().out)["answers"]}


def test_grade_trailing_zeros_right_and_too_few_decimals_incomplete(
    grade_exercise: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    ref = forward(i_love_ai_weights())
    blanks = [b for b in _key(grade_exercise) if b["decimals"] == 3]
    value = {b["id"]: ref[b["step"]][b["index"][0]][b["index"][1]] for b in blanks}
    right = {bid: _ref_rounding(v, 3) for bid, v in value.items()}
    # A blank whose 4-decimal rounding does not end in 0: its 3-decimal answer with a
    # trailing zero is not a correct 4-decimal rounding, but it is the answer asked for.
    padded = next(bid for bid, v in value.items() if not _ref_rounding(v, 4).endswith("0"))
    # A blank whose 2-decimal rounding is right: given to 2 decimals, it is incomplete.
    short = next(bid for bid in value if bid != padded)
    answers = {**right, padded: right[padded] + "0", short: _ref_rounding(value[short], 2)}
    assert answers[padded] != _ref_rounding(value[padded], 4)
    code, got = _grade_json(grade_exercise / "key.toml", answers, tmp_path, capsys)
    assert got[padded]["verdict"] == "rounded", got[padded]
    assert got[padded]["answer"] == right[padded] + "0"
    assert got[short]["verdict"] == "incomplete", got[short]
    assert got[short]["explanation"].startswith("incomplete: give 3 decimals")
    assert code == 1  # incomplete is not right
    # Two trailing zeros, and a value right to 4 decimals (not zeros), are right too.
    answers = {**right, padded: right[padded] + "00", short: _ref_rounding(value[short], 4)}
    code, got = _grade_json(grade_exercise / "key.toml", answers, tmp_path, capsys)
    assert code == 0 and got[padded]["verdict"] == got[short]["verdict"] == "rounded"
    # A short answer that is off even at its own precision is graded as what it is.
    x = to_fraction(value[short])
    off = Fraction(_ref_rounding(x, 2)) + Fraction(5, 100)
    code, got = _grade_json(
        grade_exercise / "key.toml", {**right, short: f"{float(off):.2f}"}, tmp_path, capsys
    )
    assert got[short]["verdict"] == "wrong"


def test_grade_an_exact_whole_number_needs_no_decimals(
    grade_exercise: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # The masked entries of A_1 are exactly 0 and its first row starts with exactly 1
    # (softmax of one visible score): "0" and "1" are those values, not short roundings.
    ref = forward(i_love_ai_weights())
    blanks = _key(grade_exercise)
    value = {b["id"]: ref[b["step"]][b["index"][0]][b["index"][1]] for b in blanks}
    whole = {bid for bid, v in value.items() if to_fraction(v).denominator == 1}
    assert whole, "the key blanks no entry that is exactly a whole number"
    right = {bid: _ref_rounding(v, 3) for bid, v in value.items()}
    answers = {**right, **{bid: str(to_fraction(value[bid]).numerator) for bid in whole}}
    code, got = _grade_json(grade_exercise / "key.toml", answers, tmp_path, capsys)
    assert {got[bid]["verdict"] for bid in whole} == {"exact"}
    assert code == 0


def test_grade_reads_blank_names_and_old_keys(
    grade_exercise: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    ref = forward(i_love_ai_weights())
    blanks = _key(grade_exercise)
    assert all(re.fullmatch(r"\?\d+", b["id"]) for b in blanks)
    right = {
        b["id"]: _ref_rounding(ref[b["step"]][b["index"][0]][b["index"][1]], 3) for b in blanks
    }
    # "1", "blank 2" and "?3" name the blanks ?1, ?2, ?3.
    names = {"?1": "1", "?2": "blank 2"}
    code, got = _grade_json(
        grade_exercise / "key.toml",
        {names.get(k, k): v for k, v in right.items()},
        tmp_path,
        capsys,
    )
    assert code == 0 and set(got) == set(right)
    # Two names for one blank are an error.
    code = cli.main(["grade", str(grade_exercise / "key.toml"), str(_dup(tmp_path, right))])
    assert code == 2 and "a second answer" in capsys.readouterr().err
    # A key written with b1, b2, … ids (before blanks were named ?1) still grades.
    old = tmp_path / "old"
    shutil.copytree(grade_exercise, old)
    text = (old / "key.toml").read_text()
    (old / "key.toml").write_text(re.sub(r'id = "\?(\d+)"', r'id = "b\1"', text))
    code, got = _grade_json(
        old / "key.toml", {"b" + k[1:]: v for k, v in right.items()}, tmp_path, capsys
    )
    assert code == 0 and set(got) == {"b" + k[1:] for k in right}


def _dup(tmp_path: Path, right: dict[str, str]) -> Path:
    path = tmp_path / "dup.toml"
    _write_answers(path, {**right, "1": right["?1"]})
    return path


# ----------------------------------------------------------------------------- grid worksheet


def test_grid_worksheet_lays_products_out_and_compiles(tmp_path: Path) -> None:
    from symtf import spec
    from symtf.checking.compare import Evaluator
    from symtf.teach import exercise as E
    from symtf.teach import sheet as S
    from symtf.teach.grid import grid_tex, panels

    # A label with every LaTeX special: the worksheet escapes it when it writes it.
    text = SEED.read_text().replace('label = "A_1"', 'label = "A_1 & {50%} \\\\ #$^~_"', 1)
    src = tmp_path / "special.toml"
    src.write_text(text)
    d = spec.load(src)
    ev = Evaluator(d)
    trace = ev.exact_trace()
    blanks = E.choose(d, trace, steps="l0.h0.q,l0.h0.pattern")
    ex = S.Exercise(d, trace, E.key(d, ev, blanks), 0, False)
    by_title = {p.title.split(" — ")[0]: p for p in panels(ex)}
    # Q_1 = X W_Q: X to the left, W_Q (head 1, read from the file) above, Q_1 where they meet.
    q = by_title["Q_1"]
    raw = tomllib.loads(text)["model"]["layers"][0]["heads"][0]["W_Q"].split()
    assert q.top is not None and q.left is not None
    assert [c.text for row in q.top.cells for c in row] == raw
    assert len(q.left.cells) == len(q.result.cells) == 3  # rows of X meet rows of Q
    assert q.top.width == q.result.width == 2  # columns of W_Q meet columns of Q
    assert {c.kind for row in q.result.cells for c in row} == {"blank"}
    a = next(p for t, p in by_title.items() if t.startswith("A_1"))
    assert a.left is None and [c.text for row in a.result.cells for c in row if c.kind == "blank"]
    tex = grid_tex(ex, paper="letter")
    from symtf.renderers.labels import label_tex

    # the label through its one path: A_1 typeset as maths, every special escaped
    typeset = label_tex("A_1 & {50%} \\ #$^~_")
    assert "letterpaper" in tex and typeset in tex and typeset.startswith("$A_{1}$ \\&")
    if not HAVE_TEX:
        return
    from symtf.commands.teach import compile_pdf

    log = tmp_path / "grid.log"
    assert compile_pdf(tex, tmp_path / "grid.pdf", log=log)
    assert "Overfull \\hbox" not in log.read_text(errors="replace")
    if shutil.which("pdftotext"):
        out = subprocess.run(
            ["pdftotext", str(tmp_path / "grid.pdf"), "-"], capture_output=True, text=True
        ).stdout
        for b in blanks:
            assert b.id in out
        assert "& {50%}" in out


def test_exercise_layout_grid_on_the_command_line(tmp_path: Path) -> None:
    args = ["exercise", str(SEED), "-o", str(tmp_path), "--blank", "4", "--layout", "grid"]
    assert cli.main([*args, "--no-pdf"]) == 0
    tex = (tmp_path / "sheet.tex").read_text()
    assert "a4paper" in tex and r"\begin{tabular}" in tex and r"\blankid{?1}" in tex
    with pytest.raises(SystemExit) as exit_:
        cli.main([*args, "--paper", "legal"])
    assert exit_.value.code == 2


def test_whatif_with_two_symbols_follows_both(
    capsys: pytest.CaptureFixture[str],
) -> None:
    # two --symbol flags once kept the last silently; now both are followed
    code = cli.main(
        ["whatif", str(SEED), "--symbol", "l0.h0.W_Q[0,0]=a", "--symbol", "embed[0,0]=b"]
    )
    out = capsys.readouterr().out
    assert code == 0, out
    assert "l0.h0.W_Q[0,0] = a (the file has 1)" in out and "embed[0,0] = b (the file has 1)" in out
    assert "∂/∂b at the file's values" in out


def test_whatif_scale_as_a_symbol_by_hand() -> None:
    import sympy

    from symtf.teach.whatif import whatif

    # S_1[0, 0] = (Q_1 K_1ᵀ)[0, 0] / t, and the article's product there is exactly 1
    # (its "Q_1 K_1^T" claim), so 0.707 is a correct rounding (half up, 3 decimals)
    # exactly for 0.7065 ≤ 1/t < 0.7075: t in (1/0.7075, 1/0.7065].
    r = whatif(SEED, "scale=t", Fraction(1, 2), Fraction(4), claims=["S_1"])
    assert r.weight.index is None and r.weight.value == sympy.sqrt(2)  # √d_head, d_head = 2
    o = next(o for o in r.outputs if o.index == (0, 0))
    assert o.closed == 1 / r.weight.symbol
    assert o.printed == "0.707" and len(o.intervals) == 1
    outer_lo, inner_lo, inner_hi, outer_hi = o.intervals[0]
    lo, hi = 1 / Fraction("0.7075"), 1 / Fraction("0.7065")
    assert outer_lo <= lo <= inner_lo and inner_hi <= hi <= outer_hi
    assert inner_hi - inner_lo > (hi - lo) * Fraction(99, 100)
    # the file's own value, √2 = 1.41421…, lies inside (mpmath at 50 digits)
    with mp.workdps(50):
        root2 = mp.sqrt(2)
        assert mpf(outer_lo.numerator) / outer_lo.denominator < root2
        assert root2 < mpf(outer_hi.numerator) / outer_hi.denominator
    assert o.contains_value
    # the value at t = √2, certified, against mpmath
    assert o.value is not None
    with mp.workdps(30):
        assert abs(mpf(o.value.rstrip("…")) - 1 / mp.sqrt(2)) < mpf("1e-15")


def test_whatif_eps_as_a_symbol_by_hand() -> None:
    from symtf.teach.whatif import whatif

    # LN1's std of "I" is sqrt(var + e) with var = 17/36 (the reference model's), so 0.687 is a correct rounding for 0.6865² ≤ 17/36 + e < 0.6875²;
    # the lower end is below 0, so in [0, 1] the set is [0, 0.6875² − 17/36).
    r = whatif(SEED, "eps=e", Fraction(0), Fraction(1), claims=["LN1 I: standard deviation"])
    assert r.weight.value == 0
    o = next(o for o in r.outputs if o.index == (0, 0))
    assert o.printed == "0.687" and len(o.intervals) == 1
    outer_lo, _, inner_hi, outer_hi = o.intervals[0]
    var = forward(i_love_ai_weights())["l0.ln1.var"][0][0]  # the reference model, in mpmath
    assert abs(var - mpf(17) / 36) < mpf("1e-15")
    top = Fraction("0.6875") ** 2 - Fraction(17, 36)
    assert outer_lo == 0 and inner_hi <= top <= outer_hi and top - inner_hi < Fraction(1, 10**9)
    assert o.contains_value  # the file's eps = 0


@pytest.mark.parametrize(
    ("symbol", "words"),
    [
        ("l0.h9.scale=t", "no head l0.h9"),
        ("scale=1t", "expected WEIGHT"),
        ("temperature=T", "samples at no temperature"),
    ],
)
def test_whatif_bad_setting_exits_2(
    symbol: str, words: str, capsys: pytest.CaptureFixture[str]
) -> None:
    assert cli.main(["whatif", str(SEED), "--symbol", symbol]) == 2
    assert words in capsys.readouterr().err
