"""Literals in displayed arithmetic stand only for their own lineage.

The RoPE toy's raw score of token 1 on token 0 is 0.0742…, which prints as 0.1 at
one decimal. A line ``0.1*1 = 0.1`` must keep its 0.1 (the score is not an input
of anything the line computes), so the line is exactly right as written.
"""

from __future__ import annotations

from pathlib import Path

import mpmath

import symtf
from symtf import spec
from symtf.checking.compare import check

ROOT = Path(__file__).resolve().parent.parent / "derivations"


def _with_claim(path: Path, claim: str) -> spec.Derivation:
    return spec.loads(path.read_text() + "\n" + claim, str(path))


def test_the_literal_trap_keeps_the_literal() -> None:
    d = _with_claim(
        ROOT / "rope_toy.toml",
        '[[claims]]\nlabel = "trap"\nexpression = "0.1*1"\nprinted = "0.1"\n',
    )
    # the trap is real: the trace has an unrelated entry that prints as 0.1
    with mpmath.workdps(30):
        assert round(float(mpmath.mpf("0.0742395911373011")), 1) == 0.1
    [c] = [c for c in check(d).checks if c.claim == "trap"]
    assert c.extra["exact_reading"]["stands_for"] == {}
    assert c.verdict == "exact"
    assert c.exact == "0.1"


def test_a_coincidental_result_does_not_pull_in_unrelated_inputs() -> None:
    # 0.1*0.1 = 0.01: some unrelated step entry prints as 0.01 and has inputs that print
    # as 0.1, but the line does not compute that entry: 0.1 stays 0.1.
    [r] = symtf.check(symtf.load(ROOT / "i_love_ai.toml")).derivations
    [c] = [c for c in r.checks if c.claim == "love.love: first product"]
    assert c.verdict == "exact" and c.extra["exact_reading"]["stands_for"] == {}


H1 = "H_1 AI row, first entry, as written"


def _h1(stands_for: str) -> list:
    text = (ROOT / "i_love_ai.toml").read_text()
    old = 'stands_for = { "0.474" = "l0.h0.pattern[2, 0]", "0.241" = "l0.h0.pattern[2, 1]", "0.285" = "l0.h0.pattern[2, 2]" }'
    i = text.index(H1)
    j = text.index(old, i)
    d = spec.loads(text[:j] + stands_for + text[j + len(old) :], "i_love_ai.toml")
    return [c for c in check(d, explain=False).checks if c.claim == H1]


def test_lineage_finds_every_input_of_the_computed_step() -> None:
    # With an empty table the literals are still read along the line's lineage: the
    # result 0.607 is H_1[2, 0] = A[2, :]·V[:, 0], so 0.241 and 0.285 are A's entries
    # and 1.1, 1.2 are V's.
    [c] = _h1("stands_for = {}")
    found = c.extra["exact_reading"]["stands_for"]
    assert found["0.241"] == "l0.h0.pattern[2, 1]"
    assert found["0.285"] == "l0.h0.pattern[2, 2]"
    assert found["1.1"] == "l0.h0.v[1, 0]"


def test_stands_for_none_switches_matching_off() -> None:
    [c] = _h1('stands_for = "none"')
    assert c.extra["exact_reading"]["stands_for"] == {}
    # as written: 0.474*0 + 0.241*1.1 + 0.285*1.2 = 0.6071 -> 0.607
    with mpmath.workdps(30):
        v = mpmath.mpf("0.241") * mpmath.mpf("1.1") + mpmath.mpf("0.285") * mpmath.mpf("1.2")
    assert mpmath.nstr(v, 10) == "0.6071"
    assert c.exact == "0.6071"
    assert c.verdict == "rounded"


def test_stands_for_must_be_a_table_or_none() -> None:
    import pytest

    from symtf.errors import SpecError

    with pytest.raises(
        SpecError, match=r'stands_for: expected a table of literal = "step\[i, j\]" or "none"'
    ):
        _h1('stands_for = "all"')
