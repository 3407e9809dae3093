"""A model is refused only when no certified backend can evaluate it.

The size estimate is the cost of the pass that runs (:mod:`symtf.limits`): a
model whose exact values would need tens of GB but whose float64 midpoints and
radii fit is evaluated in midpoint–radius arithmetic, and its enclosures contain
the values mpmath computes at 60 digits; a model too large even for that is
refused before any of it is evaluated, with the estimate.
"""

from __future__ import annotations

import dataclasses
from fractions import Fraction
from pathlib import Path

import mpmath
import numpy as np
import pytest
from sympy import Rational

from symtf import limits
from symtf.backends import BallBackend
from symtf.backends.midrad import MidradBackend
from symtf.checking.compare import check
from symtf.checking.evaluation import Evaluator
from symtf.errors import LimitError
from symtf.graph.pipeline import run
from symtf.spec import Derivation, Head, Layer, Model
from symtf.spec.weights import FileMatrix

VOCAB = 8


def _decoder(seq: int, d: int, heads: int, layers: int) -> tuple[Derivation, dict[str, np.ndarray]]:
    """A pre-norm decoder with float32 weights held exactly, and its raw weights.

    No positions, no attention-output bias, LayerNorm with γ = 1 and β = 0, a tanh-GELU
    FFN of width 2·d_model; ``w`` holds ``embed``, ``lL.hH.W_Q`` … and ``lL.W_O``, ``lL.W1``,
    ``lL.b1``, ``lL.W2``, ``lL.b2``.
    """
    rng = np.random.default_rng(7)

    def draw(shape: tuple[int, ...], scale: float) -> np.ndarray:
        k = rng.integers(-(2**12), 2**12, size=shape)
        return (k * (scale / 2**12)).astype(np.float32).astype(np.float64)

    dh = d // heads
    w: dict[str, np.ndarray] = {"embed": draw((VOCAB, d), 0.5)}
    blocks = []
    for li in range(layers):
        hs = []
        for hi in range(heads):
            names = [f"l{li}.h{hi}.{n}" for n in ("W_Q", "W_K", "W_V")]
            for n in names:
                w[n] = draw((d, dh), 1 / np.sqrt(d))
            hs.append(Head(*(FileMatrix(w[n], n) for n in names)))
        for n, v in (
            ("W_O", draw((d, d), 1 / np.sqrt(d))),
            ("W1", draw((d, 2 * d), 1 / np.sqrt(d))),
            ("b1", draw((1, 2 * d), 0.05)),
            ("W2", draw((2 * d, d), 1 / np.sqrt(2 * d))),
            ("b2", draw((1, d), 0.05)),
        ):
            w[f"l{li}.{n}"] = v
        f = {n: FileMatrix(w[f"l{li}.{n}"], f"l{li}.{n}") for n in ("W_O", "W1", "b1", "W2", "b2")}
        f["one"] = FileMatrix(np.ones((1, d)), "one")
        f["zero"] = FileMatrix(np.zeros((1, d)), "zero")
        blocks.append(
            Layer(
                tuple(hs),
                f["W_O"],
                f["W1"],
                f["b1"],
                f["W2"],
                f["b2"],
                f["one"],
                f["zero"],
                f["one"],
                f["zero"],
            )
        )
    embed = FileMatrix(w["embed"], "embed")
    model = Model(
        architecture="decoder",
        d_model=d,
        n_heads=heads,
        d_head=dh,
        norm="pre",
        eps=Rational(1, 100000),
        activation="gelu_tanh",
        vocab=tuple(f"t{i}" for i in range(VOCAB)),
        embed=embed,
        unembed=embed.T,
        layers=tuple(blocks),
        positional="none",
        final_norm=True,
        lnf_gamma=FileMatrix(np.ones((1, d)), "lnf_gamma"),
        lnf_beta=FileMatrix(np.zeros((1, d)), "lnf_beta"),
        tied=True,
    )
    tokens = tuple(int(t) for t in rng.integers(0, VOCAB, size=seq))
    return Derivation("big", "big", "", model, tokens, ()), w


def _first_pattern_row(w: dict[str, np.ndarray], tokens: tuple[int, ...], i: int, d: int) -> list:
    """Row ``i`` of ``l0.h0.pattern`` by mpmath at 60 digits (LayerNorm with γ = 1, β = 0)."""
    with mpmath.workdps(60):
        rows = [[mpmath.mpf(float(v)) for v in w["embed"][t]] for t in tokens[: i + 1]]

        def ln(x: list) -> list:
            mu = mpmath.fsum(x) / d
            var = mpmath.fsum((v - mu) ** 2 for v in x) / d
            sd = mpmath.sqrt(var + mpmath.mpf(1) / 100000)
            return [(v - mu) / sd for v in x]

        def proj(x: list, W: np.ndarray) -> list:
            return [mpmath.fsum(x[k] * float(W[k, c]) for k in range(d)) for c in range(W.shape[1])]

        ys = [ln(r) for r in rows]
        dh = w["l0.h0.W_Q"].shape[1]
        q = proj(ys[i], w["l0.h0.W_Q"])
        s = [
            mpmath.fsum(a * b for a, b in zip(q, proj(y, w["l0.h0.W_K"]), strict=True))
            / mpmath.sqrt(dh)
            for y in ys
        ]
        e = [mpmath.exp(v) for v in s]
        tot = mpmath.fsum(e)
        return [v / tot for v in e]


def test_a_model_too_large_for_exact_values_runs_in_midpoint_radius_and_contains_the_values() -> (
    None
):
    d, w = _decoder(limits.MAX_SEQ_LEN, d=16, heads=4, layers=2)
    with pytest.raises(LimitError, match="too large to evaluate exactly"):
        limits.enforce(d)  # tens of GB of exact values
    with MidradBackend() as xp:
        trace = run(d, xp)  # not refused: its midpoints and radii take a few hundred MB
    pattern = trace.value("l0.h0.pattern")
    ref = _first_pattern_row(w, d.tokens, 3, 16) + [0] * (limits.MAX_SEQ_LEN - 4)  # the mask
    with mpmath.workdps(60):
        for j, exact in enumerate(ref):
            mid, rad = mpmath.mpf(float(pattern.mid[3, j])), mpmath.mpf(float(pattern.rad[3, j]))
            assert abs(exact - mid) <= rad, (j, exact, mid, rad)
            assert rad < mpmath.mpf(10) ** -8  # and narrow enough to decide 4 decimals


def test_a_model_no_backend_can_evaluate_is_refused_before_evaluation_with_its_estimate() -> None:
    # 512 tokens, 64 heads and 64 layers: each within its own cap, but 4·512² attention
    # entries per head add up to about 69 GB even as float64 midpoints and radii.
    d, _ = _decoder(limits.MAX_SEQ_LEN, d=64, heads=64, layers=64)
    for backend, words in (
        (MidradBackend(), "even in float64 midpoint–radius enclosures"),
        (BallBackend(128), "even in certified balls"),
    ):
        with pytest.raises(LimitError) as e:
            run(d, backend)
        assert words in str(e.value) and "GB" in str(e.value)
        assert str(e.value).startswith("big: model: too large to evaluate")
    with pytest.raises(LimitError, match="even in float64 midpoint–radius enclosures"):
        check(d)  # checking refuses it too: no certified pass would fit


def _first_token_ffn_out(w: dict[str, np.ndarray], token: int, layers: int, d: int) -> list:
    """Row 0 of ``l{layers-1}.ffn_out`` by mpmath at 60 digits.

    The first token attends only to itself (its causal softmax is ``[1]``), so each
    head's output is its value row and the row is one token's pass through the blocks.
    """
    with mpmath.workdps(60):

        def ln(x: list) -> list:
            mu = mpmath.fsum(x) / d
            var = mpmath.fsum((v - mu) ** 2 for v in x) / d
            sd = mpmath.sqrt(var + mpmath.mpf(1) / 100000)
            return [(v - mu) / sd for v in x]

        def lin(x: list, W: np.ndarray, b: np.ndarray | None = None) -> list:
            out = [
                mpmath.fsum(x[k] * float(W[k, c]) for k in range(len(x))) for c in range(W.shape[1])
            ]
            return out if b is None else [o + float(b[0, c]) for c, o in enumerate(out)]

        k = mpmath.sqrt(2 / mpmath.pi)
        c3 = mpmath.mpf(44715) / 10**6

        def gelu(t: mpmath.mpf) -> mpmath.mpf:
            return t / 2 * (1 + mpmath.tanh(k * (t + c3 * t**3)))

        x = [mpmath.mpf(float(v)) for v in w["embed"][token]]
        heads = sum(1 for n in w if n.startswith("l0.h") and n.endswith(".W_V"))
        for li in range(layers):
            y = ln(x)
            z = [v for hi in range(heads) for v in lin(y, w[f"l{li}.h{hi}.W_V"])]
            x = [a + b for a, b in zip(x, lin(z, w[f"l{li}.W_O"]), strict=True)]
            h = [gelu(t) for t in lin(ln(x), w[f"l{li}.W1"], w[f"l{li}.b1"])]
            f = lin(h, w[f"l{li}.W2"], w[f"l{li}.b2"])
            x = [a + b for a, b in zip(x, f, strict=True)]
        return f


def test_an_undecided_entry_escalates_with_only_the_nodes_it_is_computed_from() -> None:
    # 12 layers: the float64 enclosure of layer 3's FFN output is too wide for 4 decimals,
    # so those entries go to balls of 128 bits, evaluating layers 0-3 and nothing after.
    d, w = _decoder(16, d=16, heads=4, layers=12)
    exact = _first_token_ffn_out(w, d.tokens[0], 4, 16)
    ev = Evaluator(d)
    with mpmath.workdps(60):
        for j, v in enumerate(exact):
            q = ev.entry("l3.ffn_out", 0, j)
            assert q.fast_ball() is not None and not q.fast_ball().rad() < 1e-5  # open in float64
            r = Fraction(int(mpmath.nint(v * 10**4)), 10**4)  # 4 decimals, mpmath's
            lo, hi = r - Fraction(1, 20000), r + Fraction(1, 20000)
            assert (q.locate(lo), q.locate(hi)) == (1, -1)
            assert q.decided_by == "arb128"
    part = ev._partial[128]
    assert "l3.ffn_out" in part and "l3.resid_post" not in part and "l11.ffn_out" not in part
    assert 128 not in ev._balls  # no whole-model ball pass


def test_a_deep_entry_starts_its_escalation_at_the_precision_its_depth_needs() -> None:
    # Layer 11's output passes through 6 products per layer, each widening the float64
    # enclosure about 4-fold at d_model 16: 128 bits cannot decide it, so that pass is
    # skipped; layer 3's starts at 128. The verdicts are mpmath's all the same.
    d, w = _decoder(16, d=16, heads=4, layers=12)
    ev = Evaluator(d)
    assert ev.start_precision("l3.ffn_out") == 128
    start = ev.start_precision("l11.ffn_out")
    assert start >= 256
    exact = _first_token_ffn_out(w, d.tokens[0], 12, 16)
    with mpmath.workdps(60):
        for j, v in enumerate(exact):
            q = ev.entry("l11.ffn_out", 0, j)
            r = Fraction(int(mpmath.nint(v * 10**4)), 10**4)
            lo, hi = r - Fraction(1, 20000), r + Fraction(1, 20000)
            assert (q.locate(lo), q.locate(hi)) == (1, -1)
            assert q.decided_by == f"arb{start}"
    assert 128 not in ev._partial and 128 not in ev._balls  # no pass that could not decide


def _costs(d: Derivation, step: str) -> dict[str, limits.Estimate]:
    """The estimates of the passes that could decide ``step``: midpoint–radius over the
    whole model, balls of 128 bits over what ``step`` is computed from and over the whole
    model, and exact values."""
    from symtf.graph.core import _upstream
    from symtf.graph.pipeline import graph_of

    g = graph_of(d)
    shapes = g.shapes()
    part = limits.graph_estimate(g.nodes, shapes, _upstream(g.nodes, [step]), "ball", 128)
    whole = limits.graph_estimate(g.nodes, shapes, None, "ball", 128)
    midrad = limits.graph_estimate(g.nodes, shapes, None, "midrad")
    assert part is not None and whole is not None and midrad is not None
    return {
        "midrad": midrad,
        "balls of the step": part,
        "balls of the model": whole,
        "exact": limits.estimate(d.model, d.tokens)[0],
    }


def test_a_step_whose_own_balls_fit_is_decided_by_them_though_the_whole_model_would_not(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # The memory limit is set between the cost of balls of what l3.ffn_out is computed
    # from (layers 0-3) and balls of all 12 layers; exact values are far beyond it. The
    # float64 enclosure of l3.ffn_out is too wide for 4 decimals, so deciding them needs
    # the balls of layers 0-3: those are estimated, fit, and decide mpmath's roundings.
    d, w = _decoder(16, d=16, heads=4, layers=12)
    c = _costs(d, "l3.ffn_out")
    limit = (c["balls of the step"].bytes + c["balls of the model"].bytes) // 2
    assert c["midrad"].bytes < c["balls of the step"].bytes < limit
    assert limit < c["balls of the model"].bytes < c["exact"].bytes
    monkeypatch.setattr(limits, "MAX_ESTIMATED_BYTES", limit)
    with (
        pytest.raises(LimitError, match="even in certified balls of 128 bits"),
        BallBackend(128) as xp,
    ):
        run(d, xp)  # the whole model in balls is refused
    ev = Evaluator(d)
    assert ev.exact_refused
    exact = _first_token_ffn_out(w, d.tokens[0], 4, 16)
    with mpmath.workdps(60):
        for j, v in enumerate(exact):
            q = ev.entry("l3.ffn_out", 0, j)
            r = Fraction(int(mpmath.nint(v * 10**4)), 10**4)
            lo, hi = r - Fraction(1, 20000), r + Fraction(1, 20000)
            assert (q.locate(lo), q.locate(hi)) == (1, -1)
            assert q.decided_by is not None and q.decided_by.startswith("arb")
    assert not ev.ball_refusals and ev._exact is None


def test_a_number_no_backend_can_decide_is_undecided_with_the_estimates_that_refused_it(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # The limit now lies between the whole model's float64 enclosures and balls of layers
    # 0-3: l3.ffn_out's entries, open in float64, can be decided neither by balls nor by
    # exact values, and say so with both estimates; l0.h0.pattern[0, 0], a softmax over
    # one token (exactly 1), is still decided by the enclosures, and nothing is raised.
    from symtf.checking.compare import check
    from symtf.numbers import parse_printed
    from symtf.spec import Claim

    d, w = _decoder(16, d=16, heads=4, layers=12)
    c = _costs(d, "l3.ffn_out")
    limit = (c["midrad"].bytes + c["balls of the step"].bytes) // 2
    assert c["midrad"].bytes < limit < c["balls of the step"].bytes
    monkeypatch.setattr(limits, "MAX_ESTIMATED_BYTES", limit)
    exact = _first_token_ffn_out(w, d.tokens[0], 4, 16)
    with mpmath.workdps(60):
        row = tuple(parse_printed(mpmath.nstr(v, 4, min_fixed=-99, max_fixed=99)) for v in exact)
    claims = (
        Claim("ffn", "claims[0]", "l3.ffn_out", (row,), row=0),
        Claim("one", "claims[1]", "l0.h0.pattern", ((parse_printed("1.0000"),),), index=(0, 0)),
    )
    report = check(dataclasses.replace(d, claims=claims))
    ffn, one = report.results
    assert len(ffn.checks) == 16
    for ch in ffn.checks:
        assert ch.verdict == "undecided", ch
        why = ch.explanation
        assert "its exact value is out of reach" in why and "exactly" in why, why
        assert "its balls are out of reach" in why, why
        assert "what l3.ffn_out is computed from even in certified balls of 128 bits" in why
    (only,) = one.checks
    assert only.verdict in ("exact", "rounded") and only.extra.get("decided_by") == "midrad"


# ----------------------------------------------------------------------------- articles


def _matrix_article(path: Path, n: int, m: int, entry: str) -> None:
    """A LaTeX article whose line 5 displays an n×m matrix of ``entry`` (one line)."""
    rows = " \\\\ ".join(" & ".join([entry] * m) for _ in range(n))
    path.write_text(
        "\\documentclass{article}\n\\usepackage{amsmath}\n\\begin{document}\n"
        f"The weights are\n\\[ W = \\begin{{bmatrix}} {rows} \\end{{bmatrix}} \\]\n"
        "\\end{document}\n",
        encoding="utf-8",
    )


def test_a_matrix_within_the_limits_is_drafted_and_its_draft_checks(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """141 × 141 = 19,881 entries: under the 20,000 a derivation holds. What draft writes,
    check reads (a given tensor, no claim: exit 0)."""
    from symtf.cli import main

    article = tmp_path / "w.tex"
    _matrix_article(article, 141, 141, "0.25")
    draft = tmp_path / "w.toml"
    assert main(["draft", str(article), "-o", str(draft)]) == 0, capsys.readouterr().err
    assert main(["check", str(draft)]) == 0, capsys.readouterr().err


@pytest.mark.parametrize(
    ("n", "m", "entry", "why"),
    [
        # 142 × 142 = 20,164 entries
        (142, 142, "0.25", "20,000 entries, found 142x142 (20,164 entries)"),
        # 317 × 317, as the round that found it
        (317, 317, "0.5", "found 317x317 (100,489 entries)"),
        # 100 × 200 = 20,000 entries of 21 characters and a space or newline between: 439,999
        (100, 200, "0.1234567890123456789", "at most 400,000 characters, found 439,999"),
    ],
)
def test_draft_and_check_refuse_a_matrix_over_the_limits_at_the_articles_line(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], n: int, m: int, entry: str, why: str
) -> None:
    """``draft`` exited 0 and wrote a draft ``check`` refused (``tensors.W: expected at most
    400,000 characters``); ``check`` of the article named that key and the draft's line 11,
    neither of which the article has. Both now refuse at the article's line 5."""
    from symtf.cli import main

    article = tmp_path / "w.tex"
    _matrix_article(article, n, m, entry)
    for argv in (["draft", str(article), "-o", str(tmp_path / "w.toml")], ["check", str(article)]):
        assert main(argv) == 2
        err = capsys.readouterr().err
        assert f"{article}: the printed matrix W: " in err and why in err, err
        assert err.rstrip().endswith("(line 5)") and "tensors." not in err, err
    assert not (tmp_path / "w.toml").exists()


def test_an_article_too_large_to_draft_in_the_time_left_is_refused_with_its_estimate(
    tmp_path: Path,
) -> None:
    """About 45,000 printed numbers in prose: the search pairs each printing with those
    before it, at least 4 × 10⁻⁷ s a pair (so about 800 s), more than the 600 s budget.
    Refused once read, with the estimate, not when the budget runs out: the child's CPU
    time is limited far below the budget."""
    from limited import run_symtf

    article = tmp_path / "long.md"
    n = 45_000
    article.write_text(
        "".join(f"In step {k} the score is 0.{k % 1000:03d}.\n\n" for k in range(n)),
        encoding="utf-8",
    )
    r = run_symtf("draft", str(article), "--timeout", "600", cpu_seconds=120, cwd=tmp_path)
    assert r.returncode == 2, r.output[-2000:]
    assert "too large to draft in the time left" in r.stderr, r.stderr
    assert f"its {n:,} printed numbers ({n:,} printed matrices" in r.stderr, r.stderr
    assert "exceeded the time budget" not in r.stderr


def test_a_search_whose_pace_cannot_finish_is_refused_with_its_projection(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """The square law from the pace so far: 400 of 4,000 printings in 10 s leave
    10 · (10² − 1) = 990 s; refused with 100 s left, not with 600 s left."""
    from symtf.draft import sizing

    clock = iter([0.0, 10.0, 0.0, 10.0])
    monkeypatch.setattr(sizing.time, "process_time", lambda: next(clock))
    monkeypatch.setattr(sizing, "_time_left", lambda: 100.0)
    pace = sizing.Pace("a.md", 4000)
    with pytest.raises(LimitError, match=r"400 of 4,000 printings took 10 s, so the rest would"):
        pace.step(400)
    monkeypatch.setattr(sizing, "_time_left", lambda: 600.0)
    sizing.Pace("a.md", 4000).step(400)  # 990 s is under twice 600 s: it goes on


def test_a_draft_over_the_file_size_cap_is_refused() -> None:
    from symtf.draft import sizing

    sizing.refuse_text("x" * limits.MAX_FILE_BYTES, "a.md")
    with pytest.raises(LimitError, match="2,000,001 bytes, over the 2,000,000 bytes"):
        sizing.refuse_text("x" * (limits.MAX_FILE_BYTES + 1), "a.md")
