"""A displayed line that carries forward an earlier number that is off is ``inherited``.

DESIGN.md, "Verdicts": a slip or wrong number is ``inherited`` when an upstream printed
number was already off, and ``root`` names it, so one mistake does not read as many. Step
claims replayed from an off input always were; a displayed line right with the numbers
it displays was called ``propagated-rounding`` even when one of those numbers was an
earlier line's miscopied result.

The articles here are made up for the test: a softmax of three scores worked by hand, with
e^0.4 miscopied as 1.429 (it is 1.4918…, two digits swapped) and every later line
computed from the miscopied value. Every expected value is computed with mpmath at 50
digits below, or by hand where stated.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import mpmath
import pytest
from mp_reference import rounds_to

from symtf import spec
from symtf.checking.compare import check
from symtf.commands.draft import check_article
from symtf.renderers import json as render_json
from symtf.renderers.text import derivation_lines

ARTICLE = """# Three scores through a softmax, by hand

Our toy head gives the last token three scores, s = [1.2, 0.4, -0.3].
We exponentiate each one, add them up, and divide.

```
e^{1.2} = 3.320
e^{0.4} = 1.429
e^{-0.3} = 0.741
```

The denominator is the sum of the three:

```
3.320 + 1.429 + 0.741 = 5.490
```

and the weights are

```
3.320 / 5.490 = 0.605
1.429 / 5.490 = 0.260
0.741 / 5.490 = 0.135
```

Weighting the first score five times and dropping the second:

```
3.320 × 5 + 1.429 × 0.0 = 16.600
```
"""

#: The article line that miscopies e^0.4.
MISCOPIED = 8


MPMATH_DIGITS = 50


def _exact() -> dict[int, Any]:
    """Each displayed line's exact value, by article line, from the scores."""
    e = [mpmath.exp(mpmath.mpf(s)) for s in ("1.2", "0.4", "-0.3")]
    total = mpmath.fsum(e)
    return {
        7: e[0],
        8: e[1],
        9: e[2],
        15: total,
        21: e[0] / total,
        22: e[1] / total,
        23: e[2] / total,
        29: 5 * e[0],
    }


@pytest.fixture(scope="module")
def article(tmp_path_factory: pytest.TempPathFactory) -> Any:
    path = tmp_path_factory.mktemp("inherited") / "softmax.md"
    path.write_text(ARTICLE, encoding="utf-8")
    return check_article(path)


def _by_line(report: Any) -> dict[int, Any]:
    """Each displayed line's own check (not the numbers it writes again)."""
    out = {}
    for r in report.results:
        if r.claim.restates is None:
            (c,) = r.checks
            out[r.claim.source_line] = c
    return out


def _written_again(report: Any) -> list[tuple[int, str, str, Any, Any]]:
    """(line, printed, verdict, cause, root claim) of each number a line writes again."""
    return sorted(
        (
            r.claim.source_line,
            c.printed,
            c.verdict,
            c.extra.get("cause"),
            (c.extra.get("root") or {}).get("claim"),
        )
        for r in report.results
        if r.claim.restates is not None
        for c in r.checks
    )


def test_the_exact_values_are_mpmaths(article: Any) -> None:
    exact = _exact()
    checks = _by_line(article)
    assert sorted(checks) == sorted(exact)
    for line, x in exact.items():
        c = checks[line]
        digits = c.exact.rstrip("…")
        assert abs(mpmath.mpf(digits) - x) < mpmath.mpf(10) ** -15, (line, c.exact)
        # by hand: only e^1.2 = 3.3201… and e^-0.3 = 0.7408… are printed right
        assert (c.verdict in ("exact", "rounded")) == rounds_to(x, c.printed), (line, c.verdict)


def test_lines_computed_from_the_miscopied_value_are_inherited_from_it(article: Any) -> None:
    checks = _by_line(article)
    root = checks[MISCOPIED]
    assert root.verdict == "wrong"
    assert root.extra["cause"] not in ("inherited", "propagated-rounding")
    # 3.320 + 1.429 + 0.741 = 5.490 and the weights divided by it are each right with the
    # numbers they display, but 1.429 (and 5.490, computed from it) is off
    for line in (15, 21, 22, 23):
        c = checks[line]
        assert c.verdict == "wrong", line
        assert c.extra["as_displayed"]["verdict"] in ("exact", "rounded"), line
        assert c.extra["cause"] == "inherited", (line, c.explanation)
        assert c.extra["root"] == {
            "claim": f"line {MISCOPIED}",
            "step": None,
            "index": None,
            "source_line": MISCOPIED,
        }, line
    # through the sum: its 5.490 repeats line 15, itself off
    assert "inherited from line 8 (through line 15)" in checks[21].explanation
    assert "its 1.429 repeats line 8, which is itself wrong" in checks[22].explanation


def test_a_line_that_does_not_depend_on_the_off_number_is_not_inherited(article: Any) -> None:
    # 3.320 × 5 + 1.429 × 0.0: the 1.429 is multiplied by zero. As displayed 16.6; with
    # e^1.2 it is 16.6005…, which rounds to 16.601: a slip of the rounded 3.320 alone
    c = _by_line(article)[29]
    assert c.verdict == "slip"
    assert c.extra["cause"] == "propagated-rounding"
    assert c.extra["root"] is None


def test_a_number_written_again_carries_the_mistake_of_the_one_it_repeats(article: Any) -> None:
    # each line computes from numbers worked out above it and writes them again: 3.320 and
    # 0.741 are right (mpmath, above), so their repeats are too; 1.429 is off (line 8) and
    # 5.490 carries it (line 15), so each repeat of them is inherited from line 8, not a
    # second transposition of its own
    exact = _exact()
    assert rounds_to(exact[7], "3.320") and rounds_to(exact[9], "0.741")
    assert not rounds_to(exact[8], "1.429") and not rounds_to(exact[15], "5.490")
    off = ("wrong", "inherited", "line 8")
    assert _written_again(article) == sorted(
        [
            (15, "3.320", "rounded", None, None),
            (15, "1.429", *off),
            (15, "0.741", "rounded", None, None),
            (21, "3.320", "rounded", None, None),
            (21, "5.490", *off),
            (22, "1.429", *off),
            (22, "5.490", *off),
            (23, "0.741", "rounded", None, None),
            (23, "5.490", *off),
            (29, "3.320", "rounded", None, None),
            (29, "1.429", *off),
        ]
    )


def test_the_text_report_groups_the_cascade_under_its_root(article: Any) -> None:
    # off: line 8 itself, the four lines computed from it, line 29's slip of its own, and
    # the six repeats of 1.429 and 5.490 (above); all but line 8 and line 29 carry it
    text = "\n".join(derivation_lines(article))
    assert "10 of the 12 numbers that are off carry forward an earlier number" in text
    assert "    line 8 (1.429, wrong) → line 15, line 21, line 22, line 23, line 29" in text


def test_json_carries_the_root_with_its_line(article: Any) -> None:
    d = render_json.derivation_dict(article)
    roots = {c["source_line"]: c["root"] for c in d["checks"] if c.get("cause") == "inherited"}
    assert set(roots) == {15, 21, 22, 23, 29}  # line 29: the 1.429 it writes again
    assert all(r["claim"] == "line 8" and r["source_line"] == 8 for r in roots.values())


STEPS = """title = "a softmax worked by hand, one exponential miscopied"

[tensors]
s = "1.2 0.4 -0.3"

[steps]
e = "exp(s)"

[[claims]]
label = "exponentials"
step = "e"
printed = "3.320 1.429 0.741"

[[claims]]
label = "denominator"
expression = "3.320 + 1.429 + 0.741"
printed = "5.490"
stands_for = { "3.320" = "e[0, 0]", "1.429" = "e[0, 1]", "0.741" = "e[0, 2]" }

[[claims]]
label = "first weight"
expression = "3.320 / 5.490"
printed = "0.605"
stands_for = { "3.320" = "e[0, 0]" }
"""


def test_a_line_that_repeats_an_off_step_entry_is_inherited_from_the_entry(
    tmp_path: Path,
) -> None:
    """As a step replayed from an off input is: the root is the step claim's entry."""
    path = tmp_path / "softmax.toml"
    path.write_text(STEPS, encoding="utf-8")
    report = check(spec.load(path))
    off = {(c.claim, c.index): c for c in report.checks if c.verdict in ("slip", "wrong")}
    # e^0.4 = 1.4918… prints as 1.492 (mpmath below); the others are right
    assert set(off) == {("exponentials", (0, 1)), ("denominator", None), ("first weight", None)}
    entry = {"claim": "exponentials", "step": "e", "index": [0, 1]}
    assert off[("exponentials", (0, 1))].extra["root"] == entry
    for label in ("denominator", "first weight"):
        assert off[(label, None)].extra["cause"] == "inherited", label
        assert off[(label, None)].extra["root"] == entry, label
    exact = _exact()
    assert not rounds_to(exact[8], "1.429") and rounds_to(exact[8], "1.492")
    assert not rounds_to(exact[15], "5.490") and not rounds_to(exact[21], "0.605")


def test_restates_must_name_another_claim() -> None:
    from symtf.errors import SpecError

    text = STEPS.replace(
        'label = "first weight"', 'label = "first weight"\nrestates = "the last weight"'
    )
    with pytest.raises(SpecError, match=r"claims\[2\]\.restates: expected the label of another"):
        spec.loads(text, "softmax.toml")
