"""Diagnosis on mutated copies of the bundled article.

Each mutant's printed values are regenerated from a model changed in one known
way (one convention switched in one place, or one early entry altered); the
diagnosis must name exactly that convention, or that root. The expectation comes
from how the mutant was made, never from symtf's output.
"""

from __future__ import annotations

import dataclasses
from pathlib import Path

import pytest
import sympy as sp

import symtf
from symtf.checking.diagnose.replay import Override
from symtf.checking.evaluation import Evaluator, correct_rounding
from symtf.graph.conventions import switch
from symtf.numbers import Printed, format_fixed
from symtf.spec import Derivation

PATH = Path(__file__).resolve().parent.parent / "derivations" / "i_love_ai.toml"


@pytest.fixture(scope="module")
def article() -> Derivation:
    return symtf.load(PATH)


def regenerate(original: Derivation, ev: Evaluator, only: set[str] | None = None) -> Derivation:
    """The article's step claims, reprinted (same decimals) from ``ev``'s values."""
    claims = []
    for c in original.claims:
        if (
            c.step is None
            or c.word is not None
            or c.reduce is not None
            or (only and c.step not in only)
        ):
            claims.append(c)
            continue
        from symtf.checking.evaluation import _fit, selection

        t = ev.exact_trace()
        pairs = _fit(c, selection(c, t.shape(c.step)))
        new = []
        for (i, j), p in pairs:
            if p.is_neg_inf or p.is_fraction:
                new.append(p)
                continue
            r = correct_rounding(ev.entry(c.step, i, j), p.decimals)
            assert r is not None
            new.append(Printed(format_fixed(r, p.decimals), r, p.decimals))
        rows, cols = len(c.printed), len(c.printed[0])
        grid = tuple(tuple(new[k * cols : (k + 1) * cols]) for k in range(rows))
        claims.append(dataclasses.replace(c, printed=grid))
    return dataclasses.replace(original, claims=tuple(claims))


def off_checks(d: Derivation) -> list:
    [report] = symtf.check(d).derivations
    return [c for c in report.checks if c.step is not None and c.verdict in ("slip", "wrong")]


@pytest.mark.parametrize(
    ("name", "scope", "root_step"),
    [
        ("no-sqrt-dk", "l0.h1", "l0.h1.pattern"),  # head 2 printed without ÷√d_k
        ("unbiased-variance", "l0.ln1", "l0.ln1"),  # first LayerNorm divided by n − 1
    ],
)
def test_switched_convention_is_named(article, name, scope, root_step) -> None:
    mutant_model = switch(name).apply(article, scope)
    mutant = regenerate(article, Evaluator(mutant_model))
    off = off_checks(mutant)
    assert off, "the mutation must change some printed numbers"
    roots = [c for c in off if c.extra["cause"] == "convention"]
    assert roots, [(c.claim, c.extra["cause"]) for c in off]
    for c in roots:
        assert c.extra["convention"] == [f"{name}@{scope}"], (c.claim, c.extra["convention"])
    # the first divergence is in the switched place; everything after it follows from it
    assert any(c.step.startswith(root_step) for c in roots)
    for c in off:
        assert c.extra["cause"] in ("convention", "inherited", "propagated-rounding"), (
            c.claim,
            c.extra,
        )
        if c.extra["cause"] == "inherited":
            assert c.extra["root"]["step"].startswith(scope.split(".")[0]), c.extra["root"]


def test_altered_early_entry_is_the_root(article) -> None:
    # The article's R_1 row "I" is [1, 0, 2, 1, 1, 0]; print R_1[0, 3] as 3 instead, and
    # reprint everything downstream as if the author had carried on from that value.
    printed = {"l0.resid_mid": {(0, 3): Printed("3", sp.Integer(3), 0)}}

    class Altered(Evaluator):
        def ball_trace(self, prec):
            from symtf.backends import BallBackend
            from symtf.graph.pipeline import run

            if prec not in self._balls:
                with BallBackend(prec) as xp:
                    self._balls[prec] = run(self.derivation, xp, Override(printed, ""))
            return self._balls[prec]

        def exact_trace(self):
            from symtf.graph.pipeline import run

            if self._exact is None:
                self._exact = run(self.derivation, None, Override(printed, ""))
            return self._exact

    mutant = regenerate(article, Altered(article))
    off = off_checks(mutant)
    r1 = [c for c in off if c.step == "l0.resid_mid"]
    # the row is printed twice (the R_1 line and the LayerNorm worked example)
    assert {(c.index, c.printed) for c in r1} == {((0, 3), "3")}
    assert all(c.extra["cause"] == "unexplained" for c in r1)
    later = [c for c in off if c.step != "l0.resid_mid"]
    assert later, "entries computed from the altered one must be off too"
    for c in later:
        assert c.extra["cause"] == "inherited", (c.claim, c.index, c.extra)
        assert (c.extra["root"]["step"], c.extra["root"]["index"]) == ("l0.resid_mid", [0, 3]), (
            c.extra["root"]
        )


def test_bundled_articles_every_off_entry_has_a_cause() -> None:
    report = symtf.check(*(symtf.load(p) for p in sorted(PATH.parent.glob("*.toml"))))
    for d in report.derivations:
        for c in d.checks:
            if c.verdict not in ("exact", "rounded"):
                assert c.extra.get("cause") in (
                    "propagated-rounding",
                    "inherited",
                    "convention",
                    "unexplained",
                    # the deliberate slips of the backward passes and the int8 example
                    "digit-transposition",
                    "sign-flip",
                    "decimal-shift",
                )
