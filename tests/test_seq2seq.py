"""Encoder–decoder models: parsing, the forward pass, and teacher forcing = generation.

Every number is cross-checked against :func:`reference`, an independent numpy
float64 implementation written here (no symtf, no SymPy).
"""

from __future__ import annotations

from fractions import Fraction

import numpy as np
import pytest
import sympy

import symtf
from symtf.backends import BallBackend
from symtf.backends.certify import ball
from symtf.errors import SpecError
from symtf.graph.seq2seq import equal, teacher_forcing

# ----------------------------------------------------------------------------- an independent reference


def _softmax(z: np.ndarray) -> np.ndarray:
    e = np.exp(z - z.max(axis=-1, keepdims=True))
    return e / e.sum(axis=-1, keepdims=True)


def _ln(x: np.ndarray) -> np.ndarray:
    mu = x.mean(-1, keepdims=True)
    return (x - mu) / np.sqrt(((x - mu) ** 2).mean(-1, keepdims=True))


def _mha(xq: np.ndarray, xkv: np.ndarray, heads: list, wo: np.ndarray, causal: bool) -> np.ndarray:
    zs = []
    for wq, wk, wv in heads:
        s = (xq @ wq) @ (xkv @ wk).T / np.sqrt(wq.shape[1])
        if causal:
            n, m = s.shape
            s = np.where(np.arange(m)[None, :] > np.arange(n)[:, None], -np.inf, s)
        zs.append(_softmax(s) @ (xkv @ wv))
    return np.hstack(zs) @ wo


def _block(x: np.ndarray, subs: list, pre: bool) -> np.ndarray:
    for f in subs:
        x = x + f(_ln(x)) if pre else _ln(x + f(x))
    return x


def reference(w: dict, source: list[int], dec_in: list[int], *, causal: bool = True) -> dict:
    """Encoder–decoder forward pass in float64: ``enc``, ``final`` and ``probs``."""
    keys = ("source_embed", "embed", "pos", "unembed", "W1")
    f = {k: np.array(w[k], dtype=float) for k in keys}
    pre = w.get("norm") == "pre"
    hw = [tuple(np.array(m, dtype=float) for m in hd) for hd in w["heads"]]
    wo = np.eye(4) * 0.5
    ffn = lambda y: np.maximum(y @ f["W1"], 0) @ (np.eye(4) * 0.5)  # noqa: E731
    x = f["source_embed"][source] + f["pos"][: len(source)]
    enc = _block(x, [lambda y: _mha(y, y, hw, wo, False), ffn], pre)
    y = f["embed"][dec_in] + f["pos"][: len(dec_in)]
    y = _block(
        y,
        [lambda y: _mha(y, y, hw, wo, causal), lambda y: _mha(y, enc, hw[::-1], wo, False), ffn],
        pre,
    )
    return {"enc": enc, "final": y, "probs": _softmax(y @ f["unembed"])}


# ----------------------------------------------------------------------------- models as TOML text


def _rows(m: list) -> str:
    return '"""\n' + "\n".join(" ".join(str(c) for c in r) for r in m) + '\n"""'


BASE = {
    "source_vocab": ["a", "b", "c"],
    "vocab": ["<s>", "x", "y", "z", "</s>"],
    "source_embed": [[1, 1, 0, 1], [1, 0, 1, 0], [0, 1, 1, 1]],
    "embed": [[1, 0, 0, 0], [0, 1, 0, 0], [0, 0, 1, 0], [0, 0, 0, 1], [1, 1, 0, 0]],
    "pos": [[0, 0, 0, 0], [0.1, 0, 0, 0], [0, 0.1, 0, 0], [0, 0, 0.1, 0]],
    "unembed": [[-1, 2, 0, 0, -1], [-1, -1, 2, 0, 1], [-1, 0, -1, 2, -1], [-1, -1, 0, -1, 2]],
    "W1": [[1, 0, 0, 0], [0, 1, 0, 0], [0, 0, 1, 0], [0, 0, 0, 1]],
    # self-attention heads; cross-attention uses them in reverse order
    "heads": [
        (
            [[1, 0], [0, 1], [1, 0], [0, 0]],
            [[1, 0], [0, 0], [0, 1], [1, 1]],
            [[1, 0], [0, 1], [0, 0], [1, 1]],
        ),
        (
            [[0, 1], [1, 0], [0, 0], [0, 1]],
            [[0, 0], [1, 0], [0, 1], [0, 1]],
            [[0, 1], [1, 1], [1, 0], [0, 0]],
        ),
    ],
}
HALF = '"0.5 0 0 0 \\\\\\\\ 0 0.5 0 0 \\\\\\\\ 0 0 0.5 0 \\\\\\\\ 0 0 0 0.5"'


def model_toml(
    w: dict = BASE,
    *,
    source: str = '["a", "b"]',
    target: str | None = '["x", "y", "</s>"]',
    extra_model: str = "",
    generate: str = "",
    claims: str = "",
    symbol: str | None = None,
) -> str:
    """A two-head encoder–decoder (one layer each side) as a derivation file."""
    heads = w["heads"]

    def head_tables(key: str, order: list) -> str:
        out = []
        for q, k, v in order:
            out.append(f"[[model.{key}]]\nW_Q = {_rows(q)}\nW_K = {_rows(k)}\nW_V = {_rows(v)}\n")
        return "\n".join(out)

    w1 = [list(r) for r in w["W1"]]
    if symbol is not None:
        w1[0][0] = symbol
    return f"""
title = "test"
[model]
architecture = "encoder-decoder"
d_model = 4
n_heads = {len(heads)}
norm = "{w.get("norm", "post")}"
source_vocab = {w["source_vocab"]!r}
vocab = {w["vocab"]!r}
end = "</s>"
source_embed = {_rows(w["source_embed"])}
embed = {_rows(w["embed"])}
pos = {_rows(w["pos"])}
unembed = {_rows(w["unembed"])}
{extra_model}
[[model.encoder]]
W_O = {HALF}
W1 = {_rows(w1)}
W2 = {HALF}
{head_tables("encoder.heads", heads)}
[[model.decoder]]
W_O = {HALF}
cross_W_O = {HALF}
W1 = {_rows(w1)}
W2 = {HALF}
{head_tables("decoder.self", heads)}
{head_tables("decoder.cross", heads[::-1])}
[input]
source = {source}
{"" if target is None else f"target = {target}"}
{generate}
{claims}
""".replace("'", '"')


def _float(e: sympy.Expr, xp: object) -> float:
    return float(xp.ball(e, 128).mid()) if hasattr(xp, "ball") else float(e)


# ----------------------------------------------------------------------------- forward pass


@pytest.fixture(scope="module")
def exact_trace() -> symtf.trace.Trace:
    return symtf.run(symtf.loads(model_toml(), "t.toml"))


def test_exact_parallel_pass_matches_reference(exact_trace: symtf.trace.Trace) -> None:
    ref = reference(BASE, [0, 1], [0, 1, 2])
    xp = exact_trace.backend
    for name, key in (("enc.out", "enc"), ("dec.final", "final"), ("dec.probs", "probs")):
        got = exact_trace.value(name)
        assert got.shape == ref[key].shape
        for i in range(got.rows):
            for j in range(got.cols):
                assert _float(got[i, j], xp) == pytest.approx(ref[key][i, j], abs=1e-12), (
                    name,
                    i,
                    j,
                )


def test_step_names_and_shapes(exact_trace: symtf.trace.Trace) -> None:
    for name, shape in (
        ("enc.l0.h1.pattern", (2, 2)),
        ("enc.l0.ln2", (2, 4)),
        ("dec.l0.cross.h0.k", (2, 2)),
        ("dec.l0.self.h0.masked", (3, 3)),
        ("dec.l0.self.h1.pattern", (3, 3)),
        ("dec.l0.cross.h1.pattern", (3, 2)),
        ("dec.l0.resid_cross", (3, 4)),
        ("dec.l0.ln3", (3, 4)),
        ("dec.probs", (3, 5)),
    ):
        assert exact_trace.shape(name) == shape, name
    masked = exact_trace.value("dec.l0.self.h0.masked")
    assert masked[0, 1] == sympy.S.NegativeInfinity and masked[1, 2] == sympy.S.NegativeInfinity
    pattern = exact_trace.value("dec.l0.self.h0.pattern")
    assert pattern[0, 0] == 1 and pattern[0, 1] == 0  # exactly


@pytest.mark.parametrize("norm", ["post", "pre"])
def test_ball_pass_matches_reference(norm: str) -> None:
    w = {**BASE, "norm": norm}
    d = symtf.loads(model_toml(w, source='["c", "a", "b"]', target='["z", "x", "y"]'), "t.toml")
    with BallBackend(128) as xp:
        tr = symtf.run(d, xp)
    ref = reference(w, [2, 0, 1], [0, 3, 1])
    got = tr.value("dec.probs")
    for i in range(3):
        for j in range(5):
            b = got[i, j]
            assert float(b.rad()) < 1e-30
            assert float(b.mid()) == pytest.approx(ref["probs"][i, j], abs=1e-12)


def test_symbolic_weight_keeps_the_symbol_and_substitutes_to_the_reference() -> None:
    d = symtf.loads(model_toml(symbol="w"), "t.toml")
    tr = symtf.run(d)
    xp = tr.backend
    e = tr.value("dec.probs")[2, 1]
    w = sympy.Symbol("w", real=True)
    assert w in xp.user_symbols(e)
    ref = reference(BASE, [0, 1], [0, 1, 2])  # W1[0][0] = 1
    defs = {k: v.xreplace({w: 1}) for k, v in xp.defs.items()}
    assert float(ball(e.xreplace({w: 1}), 128, defs=defs).mid()) == pytest.approx(
        ref["probs"][2, 1], abs=1e-12
    )
    # teacher forcing holds for every value of w: proved on the expressions
    assert teacher_forcing(d.model).holds is True


# ----------------------------------------------------------------------------- the step graph

GREEDY = '[generate]\nstrategy = "greedy"\nmax_len = 3\n'
TF_CLAIM = '[[claims]]\nlabel = "tf"\nassert = "teacher-forcing"\nprinted = "holds"\n'


def test_building_the_graph_computes_nothing(monkeypatch: pytest.MonkeyPatch) -> None:
    from symtf.graph.core import Builder
    from symtf.graph.seq2seq import encoder_decoder_nodes

    def boom(*_: object, **__: object) -> None:
        raise AssertionError("an op ran while building")

    monkeypatch.setattr("symtf.ops.linear", boom)
    monkeypatch.setattr("symtf.graph.seq2seq.teacher_forcing", boom)
    m = symtf.loads(model_toml(generate=GREEDY), "t.toml").model
    b = Builder()
    encoder_decoder_nodes(b, m, forcing=True)
    names = [n.name for n in b.nodes]
    # decoding steps are emitted only when the unroll node is evaluated
    assert names[-2:] == ["gen", "teacher_forcing"] and b.nodes[-2].unroll
    assert not any(n.startswith("gen.") for n in names)
    assert {"enc.out", "dec.l0.cross.h1.v", "dec.probs"} <= set(names)
    b2 = Builder()
    encoder_decoder_nodes(b2, m, forcing=False)
    assert "teacher_forcing" not in b2


@pytest.mark.parametrize("generate", [GREEDY, GREEDY.replace('"greedy"', '"beam"\nbeam_width = 2')])
def test_every_input_names_a_recorded_step(generate: str) -> None:
    tr = symtf.run(symtf.loads(model_toml(generate=generate, claims=TF_CLAIM), "t.toml"))
    assert "gen.1.dec.l0.cross.h0.z" in tr or "gen.1.b0.dec.l0.cross.h0.z" in tr
    for name in tr:
        for i in tr[name].inputs:
            assert i in tr, (name, i)


def _replay(text: str, values: dict[str, sympy.ImmutableMatrix]) -> symtf.trace.Trace:
    from symtf.backends import ExactBackend

    def override(name: str, value: object) -> object:
        return values.get(name, value)

    return symtf.run(symtf.loads(text, "t.toml"), ExactBackend(), override)


def _close(tr: symtf.trace.Trace, got: object, want: sympy.MatrixBase) -> None:
    xp = tr.backend
    assert got.shape == want.shape  # type: ignore[attr-defined]
    for i in range(want.rows):
        for j in range(want.cols):
            assert _float(got[i, j], xp) == pytest.approx(float(want[i, j]), abs=1e-12)  # type: ignore[index]


def test_a_replayed_cache_row_reaches_the_next_decoding_step() -> None:
    text = model_toml(generate=GREEDY)
    r = sympy.ImmutableMatrix([[sympy.Rational(3, 7), sympy.Rational(-2, 5)]])
    tr = _replay(text, {"gen.0.dec.l0.self.h0.k": r})
    k = tr.value("gen.1.dec.l0.self.h0.k")
    # the cache: the replayed row of step 0, then this step's row x W_K (post-norm: x is dec.x)
    w_k = sympy.Matrix(BASE["heads"][0][1])
    x = tr.value("gen.1.dec.x")
    mine = sympy.Matrix([[sum(x[0, a] * w_k[a, j] for a in range(4)) for j in range(2)]])
    _close(tr, k, sympy.Matrix.vstack(r, mine))
    q = tr.value("gen.1.dec.l0.self.h0.q")
    _close(
        tr,
        tr.value("gen.1.dec.l0.self.h0.scores")[:, 0],
        sympy.Matrix([[q[0, 0] * r[0, 0] + q[0, 1] * r[0, 1]]]),
    )
    plain = symtf.run(symtf.loads(text, "t.toml")).value("gen.1.dec.l0.self.h0.k")
    assert abs(_float(plain[0, 0], tr.backend) - 3 / 7) > 1e-3  # the replay made a difference


def test_a_replayed_decoder_output_reaches_the_logits() -> None:
    f = sympy.ImmutableMatrix(3, 4, [sympy.Rational(k - 5, 4) for k in range(12)])
    tr = _replay(model_toml(), {"dec.final": f})
    _close(tr, tr.value("dec.logits"), f * sympy.Matrix(BASE["unembed"]))


# ----------------------------------------------------------------------------- teacher forcing


def test_teacher_forcing_holds_exactly_with_a_causal_mask() -> None:
    f = teacher_forcing(symtf.loads(model_toml(), "t.toml").model)
    assert f.holds is True
    assert "3 positions agree exactly" in f.explanation


def test_teacher_forcing_claims_without_a_mask_are_checked_and_explained() -> None:
    claims = "".join(
        f'[[claims]]\nlabel = "{p}"\nassert = "teacher-forcing"\nprinted = "{p}"\n'
        for p in ("holds", "fails")
    )
    text = model_toml(target='["x", "</s>"]', extra_model='decoder_mask = "none"', claims=claims)
    holds, fails = symtf.check(symtf.loads(text, "t.toml")).derivations[0].checks
    assert (holds.verdict, holds.expected) == ("wrong", "fails")
    assert (fails.verdict, fails.step) == ("exact", None)
    assert "position 0" in holds.explanation and "causal mask" in holds.explanation
    # the reference agrees that the unmasked parallel pass differs at position 0
    a = reference(BASE, [0, 1], [0, 1], causal=False)["final"][0]
    b = reference(BASE, [0, 1], [0], causal=False)["final"][0]
    assert np.abs(a - b).max() > 1e-3


def test_equal_decides_exactly() -> None:
    from symtf.backends import ExactBackend

    xp = ExactBackend(max_ops=3)
    a = sympy.exp(sympy.Rational(1, 3)) + sympy.exp(sympy.Rational(1, 7)) + 2
    n1 = xp.compact("p", sympy.ImmutableMatrix([[a]]))[0, 0]
    n2 = xp.compact("q", sympy.ImmutableMatrix([[a]]))[0, 0]
    assert n1 != n2 and equal(xp, n1, n2) is True
    n3 = xp.compact("r", sympy.ImmutableMatrix([[a + sympy.Rational(1, 10**30)]]))[0, 0]
    assert equal(xp, n1, n3) is False
    assert Fraction(1, 3) != Fraction(1, 7)


# ----------------------------------------------------------------------------- file format errors


@pytest.mark.parametrize(
    ("edit", "message"),
    [
        (
            lambda t: t.replace('source = ["a", "b"]', 'source = ["a", "q"]'),
            "t.toml: input.source[1]",
        ),
        (
            lambda t: t.replace("[[model.decoder.cross]]", "[[model.decoder.crosss]]", 1),
            "model.decoder[0].cross",
        ),
        (
            lambda t: t.replace('end = "</s>"', 'end = "</s>"\nwidth = 3'),
            "t.toml: model.width: unknown key",
        ),
        (lambda t: t.replace("[[model.encoder]]", "[[model.encoders]]"), "model.encoder"),
        (lambda t: t.replace('norm = "post"', 'norm = "sideways"'), "t.toml: model.norm"),
        (lambda t: t + '[generate]\nstrategy = "greedy"\ntop_k = 2\n', "generate.strategy"),
        (lambda t: t + '[generate]\nstrategy = "beam"\nbeam_width = 0\n', "generate.beam_width"),
        (lambda t: t + '[generate]\nstrategy = "sample"\ntop_p = "1.5"\n', "generate.top_p"),
        (
            lambda t: t + '[[claims]]\nlabel = "l"\nassert = "vibes"\nprinted = "holds"\n',
            "claims[0].assert",
        ),
    ],
)
def test_spec_errors_name_file_and_key(edit: object, message: str) -> None:
    with pytest.raises(SpecError) as e:
        symtf.loads(edit(model_toml()), "t.toml")  # type: ignore[operator]
    assert message in str(e.value)


def test_teacher_forcing_claim_needs_a_target() -> None:
    claim = '[[claims]]\nlabel = "tf"\nassert = "teacher-forcing"\nprinted = "holds"\n'
    d = symtf.loads(model_toml(target=None, claims=claim), "t.toml")
    with pytest.raises(SpecError, match=r"input\.target"):
        symtf.check(d)
