"""Generation after a prompt with a decoder-only model, against the independent reference.

The "I love AI" model with three more flat positional rows keeps generating; each
step's probabilities and pick are compared with tests/reference_model.py run on the
growing token sequence.
"""

from __future__ import annotations

import itertools
from fractions import Fraction
from pathlib import Path

import pytest
import sympy as sp
from mpmath import mp, mpf
from reference_model import forward, i_love_ai_weights

import symtf
from symtf.errors import SpecError

ARTICLE = (Path(__file__).resolve().parent.parent / "derivations" / "i_love_ai.toml").read_text()
SIX_ROWS = "\n".join(" ".join([f"0.{k}" if k else "0"] * 6) for k in range(6))


def with_generation(table: str, pos_rows: str = SIX_ROWS) -> str:
    model = ARTICLE[: ARTICLE.index("[[claims]]")]
    start = model.index('pos = """')
    end = model.index('"""', start + 9) + 3
    return model[:start] + f'pos = """\n{pos_rows}\n"""' + model[end:] + "\n" + table


def reference_probs(ids: list[int]) -> list[mpf]:
    w = i_love_ai_weights()
    w["token_ids"] = ids
    w["pos"] = [[Fraction(k, 10)] * 6 for k in range(6)]
    return forward(w)["probs"][0]


def test_greedy_steps_match_the_reference() -> None:
    d = symtf.loads(with_generation('[generate]\nstrategy = "greedy"\nmax_len = 3\n'), "gen.toml")
    t = symtf.run(d)
    ids = [0, 1, 2]
    with mp.workdps(50):
        for i in range(3):
            ref = reference_probs(ids)
            got = t.value(f"gen.{i}.probs")
            for j in range(7):
                assert abs(t.backend.ball(got[0, j], 128).mid() - float(ref[j])) < 1e-15
            best = max(range(7), key=lambda j: ref[j])
            assert t.value(f"gen.{i}.token") == (best,)
            ids.append(best)
    assert t.value("gen.output") == tuple(ids[3:])


def test_beam_as_wide_as_the_vocabulary_is_exhaustive_search() -> None:
    table = '[generate]\nstrategy = "beam"\nmax_len = 2\nbeam_width = 7\n'
    t = symtf.run(symtf.loads(with_generation(table), "beam.toml"))
    with mp.workdps(50):
        first = reference_probs([0, 1, 2])
        score = {
            (a, b): first[a] * reference_probs([0, 1, 2, a])[b]
            for a, b in itertools.product(range(7), repeat=2)
        }
    best = max(score, key=score.__getitem__)
    assert t.value("gen.output") == best


def test_symbolic_weight_leaves_the_pick_undecided() -> None:
    src = with_generation('[generate]\nstrategy = "greedy"\nmax_len = 1\n').replace(
        "0 0 0 0 0 1 0\n", "0 0 0 0 0 a 0\n", 1
    )
    t = symtf.run(symtf.loads(src, "sym.toml"))
    a = sp.Symbol("a", real=True)
    assert a in t.backend.user_symbols(t.value("gen.0.logits")[0, 5])  # the "math" logit
    assert t.value("gen.output") is None


def test_no_room_for_generation_is_a_clear_error() -> None:
    three = "\n".join(" ".join([f"0.{k}" if k else "0"] * 6) for k in range(3))
    with pytest.raises(SpecError, match="generate"):
        symtf.loads(with_generation('[generate]\nstrategy = "greedy"\n', three), "x.toml")
