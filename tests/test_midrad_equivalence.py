"""The midpoint–radius fast path changes no verdict on the bundled derivations.

Each derivation is checked twice: with the midrad trace tried first (the default)
and with the arb_mat path alone. Every verdict, correct rounding, certified
decimal and explanation must be the same; only ``decided_by`` may differ.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from symtf import spec
from symtf.checking import compare
from symtf.checking.evaluation import Evaluator
from symtf.checking.report import DerivationReport
from symtf.cli import bundled_derivations


def _fields(report: DerivationReport) -> list[tuple]:
    return [
        (c.claim, c.step, c.index, c.printed, c.verdict, c.expected, c.exact, c.explanation)
        for c in report.checks
    ]


#: Derivations no interval trace can decide, and why: their checks are all decided exactly.
EXACT_ONLY = {
    # absmax quantisation puts the largest entry on x·127/max|x| = ±127 exactly, and an
    # interval around an integer cannot be rounded (nor can the exact ties 12.5, −64.5)
    "steps_int8_absmax",
}


@pytest.mark.parametrize("path", bundled_derivations(), ids=lambda p: Path(p).stem)
def test_midrad_verdicts_equal_arb_verdicts(path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    d = spec.load(path)
    fast = compare.check(d)
    monkeypatch.setattr(Evaluator, "midrad", False)
    slow = compare.check(d)
    assert _fields(fast) == _fields(slow)
    paths = [c.extra.get("decided_by") for c in fast.checks]
    if Path(path).stem in EXACT_ONLY:
        assert set(paths) == {"exact"}, paths
        return
    assert "midrad" in paths
    assert "midrad" not in [c.extra.get("decided_by") for c in slow.checks]
