"""Decoding on exact probabilities: greedy, beam search, temperature, top-k, top-p, ties.

Cross-checked against an independent numpy float64 decoder written here: it
reads the weights of a loaded derivation as plain float arrays and recomputes
everything (forward pass, decoding loops, filters) without symtf; softmax and
LayerNorm are those of test_seq2seq's numpy reference.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
import sympy
from test_seq2seq import BASE, _ln, _softmax, model_toml

import symtf
from symtf.backends import BallBackend, ExactBackend
from symtf.graph.generate import length_penalty, rank, renormalise, top_k, top_p

ROOT = Path(__file__).resolve().parent.parent

# ----------------------------------------------------------------------------- an independent decoder


def _np(m: sympy.MatrixBase) -> np.ndarray:
    return np.array([[float(sympy.Rational(e)) for e in m.row(i)] for i in range(m.rows)])


class NumpyDecoder:
    """The encoder–decoder of a loaded derivation, recomputed in float64."""

    def __init__(self, m: object) -> None:
        self.m = m
        self.pre = m.norm == "pre"
        enc = self._inputs(m.source_embed, m.source_pos, list(m.source))
        for layer in m.encoder:
            enc = self._block(
                enc,
                [
                    lambda y, L=layer: self._mha(y, y, L.heads, L.W_O, False),
                    lambda y, L=layer: self._ffn(y, L),
                ],
            )
        self.enc = enc

    def _inputs(self, table: sympy.MatrixBase, pos: sympy.MatrixBase, ids: list[int]) -> np.ndarray:
        return _np(table)[ids] + _np(pos)[: len(ids)]

    def _mha(
        self, xq: np.ndarray, xkv: np.ndarray, heads: tuple, wo: sympy.MatrixBase, causal: bool
    ) -> np.ndarray:
        zs = []
        for h in heads:
            q, k, v = xq @ _np(h.W_Q), xkv @ _np(h.W_K), xkv @ _np(h.W_V)
            s = q @ k.T / np.sqrt(q.shape[1])
            if causal:
                n, c = s.shape
                s = np.where(np.arange(c)[None, :] > np.arange(n)[:, None], -np.inf, s)
            zs.append(_softmax(s) @ v)
        return np.hstack(zs) @ _np(wo)

    def _ffn(self, y: np.ndarray, L: object) -> np.ndarray:
        return np.maximum(y @ _np(L.W1) + _np(L.b1), 0) @ _np(L.W2) + _np(L.b2)

    def _block(self, x: np.ndarray, subs: list) -> np.ndarray:
        for f in subs:
            x = x + f(_ln(x)) if self.pre else _ln(x + f(x))
        return x

    def logits(self, prefix: list[int]) -> np.ndarray:
        """Logits of the next token after ``<s> + prefix`` (a full recomputation, no cache)."""
        m = self.m
        y = self._inputs(m.embed, m.pos, [m.start, *prefix])
        for L in m.decoder:
            y = self._block(
                y,
                [
                    lambda y, L=L: self._mha(y, y, L.self_heads, L.W_O, True),
                    lambda y, L=L: self._mha(y, self.enc, L.cross_heads, L.cross_W_O, False),
                    lambda y, L=L: self._ffn(y, L),
                ],
            )
        return (y @ _np(m.unembed))[-1]

    def beam(self, width: int, steps: int, alpha: float) -> tuple[list, tuple]:
        beams, fin = [((), 1.0)], []
        for _ in range(steps):
            cands = []
            for toks, pr in beams:
                p = _softmax(self.logits(list(toks)))
                cands += [((*toks, v), pr * p[v]) for v in range(len(p))]
            cands.sort(key=lambda c: -c[1])
            live = []
            for c in cands[: width - len(fin)]:
                (fin if c[0][-1] == self.m.end else live).append(c)
            beams = live
            if not beams:
                break
        fin += beams
        scored = [(np.log(p) / ((5 + len(t)) / 6) ** alpha, t, p) for t, p in fin]
        return scored, max(scored, key=lambda s: s[0])[1]


def _floats(xp: object, m: object) -> np.ndarray:
    if isinstance(xp, BallBackend):
        return np.array([[float(x.mid()) for x in r] for r in m.tolist()])
    return np.array([[float(xp.ball(e, 128).mid()) for e in m.row(i)] for i in range(m.rows)])


def _ball_trace(text: str) -> symtf.trace.Trace:
    with BallBackend(128) as xp:
        return symtf.run(symtf.loads(text, "t.toml"), xp)


# ----------------------------------------------------------------------------- pure pieces, exact


def _row(*xs: object) -> sympy.ImmutableMatrix:
    return sympy.ImmutableMatrix([[sympy.Rational(x) for x in xs]])


def test_rank_groups_exact_ties() -> None:
    xp = ExactBackend()
    vals = [sympy.Rational(1, 3), sympy.exp(1) - 2, sympy.Rational(1, 3), 1]
    assert rank(xp, vals) == [[3], [1], [0, 2]]


def test_top_k_keeps_every_token_tied_at_the_boundary() -> None:
    assert top_k([[0], [1, 2], [3]], 2) == ([0, 1, 2], [1, 2])
    assert top_k([[0], [1, 2], [3]], 3) == ([0, 1, 2], [])
    assert top_k([[0], [1, 2], [3]], 1) == ([0], [])


@pytest.mark.parametrize(
    ("p", "kept", "tied"),
    [
        ("1/2", [0], []),
        ("3/4", [0, 1], []),
        ("0.76", [0, 1, 2, 3], [2, 3]),
        ("1", [0, 1, 2, 3], []),
    ],
)
def test_top_p_exact_boundaries_and_renormalisation(p: str, kept: list, tied: list) -> None:
    xp = ExactBackend()
    probs = _row("1/2", "1/4", "1/8", "1/8")
    groups = rank(xp, [probs[0, j] for j in range(4)])
    assert top_p(xp, probs, groups, sympy.Rational(p)) == (kept, tied)
    out = renormalise(xp, probs, kept)
    assert sum(out) == 1  # exactly
    ref = np.array([1 / 2, 1 / 4, 1 / 8, 1 / 8]) * np.isin(np.arange(4), kept)
    np.testing.assert_allclose(np.array(out, dtype=float).ravel(), ref / ref.sum(), rtol=1e-15)


def test_length_penalty_forms() -> None:
    assert length_penalty(3, sympy.S.Zero, "gnmt") == 1
    assert length_penalty(7, sympy.Rational(1), "gnmt") == 2
    assert length_penalty(4, sympy.Rational(1, 2), "power") == 2
    assert float(length_penalty(3, sympy.Rational(3, 5), "gnmt")) == pytest.approx((8 / 6) ** 0.6)


# ----------------------------------------------------------------------------- greedy


def test_translation_toy_derivation_checks_out() -> None:
    d = symtf.load(ROOT / "derivations" / "translation_toy.toml")
    rep = symtf.check(d)
    counts = rep.derivations[0].counts
    assert not rep.failed and counts["undecided"] == 0 and counts["wrong"] == 0
    tr = rep.derivations[0].trace
    assert [d.model.vocab[i] for i in tr.value("gen.output")] == [
        "Los",
        "pájaros",
        "construyen",
        "nidos",
        "</s>",
    ]


def test_greedy_probabilities_match_the_reference_at_every_step() -> None:
    text = (ROOT / "derivations" / "translation_toy.toml").read_text()
    tr = _ball_trace(text)
    ref = NumpyDecoder(symtf.loads(text, "t.toml").model)
    out: list[int] = []
    for i in range(5):
        p = _softmax(ref.logits(out))
        np.testing.assert_allclose(
            _floats(tr.backend, tr.value(f"gen.{i}.probs"))[0], p, atol=1e-12
        )
        assert tr.value(f"gen.{i}.token") == (int(np.argmax(p)),)
        out.append(int(np.argmax(p)))
    assert tr.value("gen.output") == tuple(out)


TIED = {**BASE, "unembed": [[r[0], r[1], r[1], r[3], r[4]] for r in BASE["unembed"]]}


def test_greedy_exact_tie_is_reported_and_stops_decoding() -> None:
    claims = (
        '[[claims]]\nlabel = "pick"\nassert = "tokens"\nstep = "gen.0.token"\nprinted = "y"\n'
        '[[claims]]\nlabel = "out"\nassert = "tokens"\nprinted = "x </s>"\n'
    )
    text = model_toml(TIED, target=None, generate="[generate]\nmax_len = 3\n", claims=claims)
    rep = symtf.check(symtf.loads(text, "t.toml")).derivations[0]
    assert rep.trace.value("gen.0.token") == (1, 2)
    assert rep.trace.value("gen.output") is None
    pick, out = rep.checks
    assert pick.verdict == "exact" and "exact tie between x, y" in pick.explanation
    assert out.verdict == "wrong" and "decoding stopped at gen.0.token" in out.explanation


def test_symbolic_weight_makes_the_pick_undecided_not_guessed() -> None:
    claims = '[[claims]]\nlabel = "out"\nassert = "tokens"\nprinted = "x"\n'
    text = model_toml(target=None, generate="[generate]\nmax_len = 2\n", claims=claims)
    text = text.replace('unembed = """\n-1 2', 'unembed = """\n-1 u')
    rep = symtf.check(symtf.loads(text, "t.toml")).derivations[0]
    assert rep.trace.value("gen.0.token") is None
    assert rep.checks[0].verdict == "undecided"


# ----------------------------------------------------------------------------- beam search


def test_beam_toy_derivation_checks_out() -> None:
    rep = symtf.check(symtf.load(ROOT / "derivations" / "beam_toy.toml"))
    assert not rep.failed and rep.derivations[0].counts["undecided"] == 0


@pytest.mark.parametrize(("alpha", "winner"), [("0.6", (2, 1, 3)), ("0", (1, 3))])
def test_beam_width_2_with_length_penalty_matches_the_reference(alpha: str, winner: tuple) -> None:
    text = (ROOT / "derivations" / "beam_toy.toml").read_text()
    text = text.replace('length_penalty = "0.6"', f'length_penalty = "{alpha}"')
    tr = _ball_trace(text)
    ref = NumpyDecoder(symtf.loads(text, "t.toml").model)
    scored, best = ref.beam(2, 3, float(alpha))
    assert best == winner and tr.value("gen.output") == winner
    for j, (score, toks, prob) in enumerate(scored):
        assert tr.value(f"gen.hyp{j}.tokens") == toks
        assert float(tr.value(f"gen.hyp{j}.prob")[0, 0].mid()) == pytest.approx(prob, abs=1e-12)
        assert float(tr.value(f"gen.hyp{j}.score")[0, 0].mid()) == pytest.approx(score, abs=1e-12)
    # step 1 keeps two hypotheses; their sequence probabilities match
    for k, prefix in enumerate([(1,), (2,)]):
        assert tr.value(f"gen.1.b{k}.tokens") == prefix
        p = _softmax(ref.logits(list(prefix))) * _softmax(ref.logits([]))[prefix[0]]
        np.testing.assert_allclose(
            _floats(tr.backend, tr.value(f"gen.1.b{k}.seqprob"))[0], p, atol=1e-12
        )


def test_beam_tie_at_the_cut_is_reported() -> None:
    gen = '[generate]\nstrategy = "beam"\nbeam_width = 1\nmax_len = 2\n'
    tr = symtf.run(symtf.loads(model_toml(TIED, target=None, generate=gen), "t.toml"))
    assert tr.value("gen.0.tie") == (1, 2)
    assert tr.value("gen.output") is None


# ----------------------------------------------------------------------------- sampling filters


def test_temperature_top_k_top_p_distributions_match_the_reference() -> None:
    gen = '[generate]\nstrategy = "sample"\ntemperature = "0.5"\ntop_k = 3\ntop_p = "0.9"\n'
    text = model_toml(target='["y", "z", "</s>"]', generate=gen)
    tr = _ball_trace(text)
    ref = NumpyDecoder(symtf.loads(text, "t.toml").model)
    for i, prefix in enumerate([[], [2], [2, 3]]):
        z = ref.logits(prefix)
        pt = _softmax(z / 0.5)
        order = np.argsort(-pt)
        pk = np.where(np.isin(np.arange(5), order[:3]), pt, 0)
        pk /= pk.sum()
        srt = np.sort(pk)[::-1]
        keep = np.concatenate([[True], np.cumsum(srt)[:-1] < 0.9])
        pp = np.where(np.isin(np.arange(5), np.argsort(-pk)[: keep.sum()]), pk, 0)
        pp /= pp.sum()
        for name, want in (("temp.probs", pt), ("topk.probs", pk), ("topp.probs", pp)):
            got = _floats(tr.backend, tr.value(f"gen.{i}.{name}"))[0]
            np.testing.assert_allclose(got, want, atol=1e-12, err_msg=f"gen.{i}.{name}")
        assert tr.value(f"gen.{i}.token") == ((2, 3, 4)[i],)  # follows input.target


def test_sampled_distribution_is_exact_and_sums_to_one() -> None:
    gen = '[generate]\nstrategy = "sample"\ntop_k = 2\nmax_len = 1\n'
    tr = symtf.run(symtf.loads(model_toml(target=None, generate=gen), "t.toml"))
    probs = tr.value("gen.0.topk.probs")
    assert sum(1 for e in probs if e == 0) == 3  # three tokens filtered out, exactly 0
    # a/(a+b) + b/(a+b) = 1 whatever a and b are: exact algebra on the node symbols
    assert sympy.cancel(sympy.together(sum(probs) - 1)) == 0
