"""A displayed literal that repeats an earlier printed number no step places.

``Loss = -ln(0.42) = 0.869`` after ``P(cat) = 0.42``: the article took the loss from the
unrounded probability, which 0.42 only rounds. The line is judged against the range the
literal's rounding allows, accepted only with a witness point, and flagged when the
article's other printed numbers (the logits the probabilities are the softmax of) fix the
literal more tightly. Every expected value is computed here with mpmath at 50 digits.
"""

from __future__ import annotations

import itertools
from pathlib import Path

import mpmath
from mp_reference import rounds_to

from symtf.commands.draft import check_article

MPMATH_DIGITS = 50


def _softmax(z: list[str]) -> list[mpmath.mpf]:
    e = [mpmath.exp(mpmath.mpf(v)) for v in z]
    total = mpmath.fsum(e)
    return [v / total for v in e]


def _check(tmp_path: Path, text: str) -> list:
    path = tmp_path / "post.md"
    path.write_text(text, encoding="utf-8")
    report = check_article(path)
    return [c for r in report.results for c in r.checks]


ONE_WORD = """# One word

After the softmax the model gives the word cat the probability P(cat) = 0.421.

Loss = -ln(0.421) = {loss}
"""


def test_a_repeated_probability_is_read_as_its_rounding_interval(tmp_path: Path) -> None:
    # as written -ln(0.421) = 0.865122…, which prints 0.865 (0.866 is a slip as displayed);
    # a probability that prints as 0.421 may be 0.4206, whose -ln is 0.866073…
    assert not rounds_to(-mpmath.log(mpmath.mpf("0.421")), "0.866")
    witness = mpmath.mpf("0.4206")
    assert rounds_to(witness, "0.421") and rounds_to(-mpmath.log(witness), "0.866")
    [c] = _check(tmp_path, ONE_WORD.format(loss="0.866"))
    assert (c.printed, c.verdict) == ("0.866", "rounded")
    assert c.extra["accepted_by"] == "rounded_inputs"
    assert c.extra["rounded_literals"] == [
        {"literal": "0.421", "repeats": "line 3", "source_line": 3}
    ]
    assert "0.421 repeats line 3, which no step places" in c.explanation
    assert c.extra["as_displayed"]["verdict"] == "slip"  # the reading as written is kept


def test_a_result_no_point_of_the_interval_gives_stays_flagged(tmp_path: Path) -> None:
    # -ln over [0.4205, 0.4215] is [0.863935…, 0.866310…]: 0.868 is out of reach
    lo, hi = -mpmath.log(mpmath.mpf("0.4215")), -mpmath.log(mpmath.mpf("0.4205"))
    assert mpmath.mpf("0.8675") > hi > lo
    [c] = _check(tmp_path, ONE_WORD.format(loss="0.868"))
    assert c.verdict == "wrong" and "accepted_by" not in c.extra


def test_a_chosen_value_of_two_digits_is_exact_as_written(tmp_path: Path) -> None:
    """``P(cat) = 0.42`` reads as a value the article chose: -ln(0.42) = 0.867500…, so
    0.869 stays wrong, though 0.4192 (which prints as 0.42) would give 0.869407…."""
    assert rounds_to(-mpmath.log(mpmath.mpf("0.4192")), "0.869")
    text = ONE_WORD.format(loss="0.869").replace("0.421", "0.42")
    [c] = _check(tmp_path, text)
    assert c.verdict == "wrong" and "accepted_by" not in c.extra


LOGITS = """# A three-word loss

**Logits:** [1.250, 0.500, -0.750]

**Probabilities:** [0.62, 0.29, 0.08]

**Loss:** L = -log(0.29) ≈ {loss}
"""


def test_probabilities_after_their_logits_take_the_logits_precision(tmp_path: Path) -> None:
    p = _softmax(["1.250", "0.500", "-0.750"])
    # the probabilities row is the softmax of the printed logits, as printed
    assert [rounds_to(v, s) for v, s in zip(p, ("0.62", "0.29", "0.08"), strict=True)] == [
        True,
        True,
        True,
    ]
    loss = -mpmath.log(p[1])  # 1.224805728…: 1.225, where -log(0.29) = 1.237874…
    assert rounds_to(loss, "1.225") and not rounds_to(-mpmath.log(mpmath.mpf("0.29")), "1.225")
    # the probabilities printed under their logits are that softmax: each is checked, and
    # the loss's 0.29 stands for the unrounded second one (0.293814…), whose -log is 1.2248
    checks = _check(tmp_path, LOGITS.format(loss="1.225"))
    assert [(c.printed, c.verdict) for c in checks if c.printed != "1.225"] == [
        ("0.62", "rounded"),
        ("0.29", "rounded"),
        ("0.08", "rounded"),
    ]
    [c] = [c for c in checks if c.printed == "1.225"]
    assert c.verdict == "rounded"


def test_logits_that_fix_the_literal_keep_a_wrong_loss_flagged(tmp_path: Path) -> None:
    """1.232 is -ln of 0.29171…, which prints as 0.29, but the printed logits allow only
    P = 0.29381 ± 0.0002: their softmax must not be contradicted."""
    assert rounds_to(mpmath.exp(-mpmath.mpf("1.232")), "0.29")
    # -ln P is convex in the logits (log-sum-exp less one of them): its largest value over
    # their rounding box is at a corner, and stays below 1.2315
    half = mpmath.mpf("0.0005")
    worst = [
        -mpmath.log(
            _softmax([str(mpmath.mpf(v) + s * half) for v, s in zip(z, signs, strict=True)])[1]
        )
        for signs in itertools.product((-1, 1), repeat=3)
        for z in [("1.250", "0.500", "-0.750")]
    ]
    assert max(worst) < mpmath.mpf("1.2315")
    [c] = [c for c in _check(tmp_path, LOGITS.format(loss="1.232")) if c.printed == "1.232"]
    assert c.verdict == "wrong" and "accepted_by" not in c.extra
