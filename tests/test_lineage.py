"""A displayed line's literals read along the article's own chain of lines.

DESIGN.md, "Displayed arithmetic is checked both ways": as written, and with each literal
replaced by the exact value it stands for, found along the line's data lineage. Here:

- an error upstream is carried: ``12.4 − 46.19 = −33.79`` after a wrong mean 46.19 (the
  12.4 a stated input the mean's line read as itself), and ``(−33.79)² = 1141.76`` after
  it, are wrong *through the chain*, ``inherited`` from the mean;
- a mistyped copy of a number printed just before (0.2321 where the line above gives
  0.2312) is a ``copy-slip`` on that literal, with a verdict of its own; the numbers
  computed from it are judged as displayed and through the chain, right for the quantity
  when the article computed with the right value, else ``inherited`` from the copy;
- no copy is read into a coincidence: a number printed far before, two numbers it could
  copy, a line its copy would not explain, a number too short to tell, a number printed
  before, a derivation written by hand;
- every displayed line's check says which reading its verdict uses (JSON ``reading``).

The articles are made up for the test. Every expected value is computed with mpmath at
50 digits below (or by hand where a comment says so), never by symtf.
"""

from __future__ import annotations

import json
from fractions import Fraction
from pathlib import Path
from typing import Any

import mpmath
import pytest
from mp_reference import rounds_to

from symtf import spec
from symtf.checking.compare import check
from symtf.checking.report import Report
from symtf.commands.draft import check_article
from symtf.renderers import json as render_json
from symtf.renderers.text import derivation_lines

MPMATH_DIGITS = 50

pytest_plugins = ["pytester"]

CARRIED = """# Centring one feature by hand

The feature takes three values, x = [12.4, 58.0, 67.87]. Their mean is

$$\\mu = (12.4 + 58.0 + 67.87) / 3 = 46.19$$

The first value's deviation from the mean is

$$12.4 - 46.19 = -33.79$$

and its square is

$$(-33.79)^2 = 1141.76$$
"""

COPIED = """# Cross-entropy for one token, by hand

Our model gives three logits, z = [2.0, 1.0, 0.5], and the target is the second token.

$$e^{2.0} = 7.389$$

$$e^{1.0} = 2.718$$

$$e^{0.5} = 1.649$$

$$7.389 + 2.718 + 1.649 = 11.756$$

$$p_2 = 2.718 / 11.756 = 0.2312$$

so the other two tokens share

$$1 - 0.2322 = 0.7678$$

The loss for the target is

$$L = -\\ln(0.2321) = 1.464$$

and the gradient of the loss with respect to the target's logit is

$$p_2 - 1 = 0.2321 - 1 = -0.7679$$
"""

#: Article lines of COPIED: the probability; the rest (its 0.2322 a copy slip of 0.2312);
#: the loss (its 0.2321 another); the gradient, repeating that 0.2321.
P2, REST, LOSS, GRADIENT = 13, 17, 21, 25


def _guards() -> str:
    """Look-alike numbers none of which is a copy slip (each section says why)."""
    lines = ["# Numbers that look alike", "", "## Far apart", "", "$$q = 1.5 / 4.0 = 0.3750$$", ""]
    for i in range(10):  # 0.3760 sits 22 lines below 0.3750: no longer the line it works from
        lines += [f"Some prose about the weather, paragraph {i}.", ""]
    lines += [
        "$$0.3760 \\times 2 = 0.7520$$",
        "",
        "## Two numbers it could copy",
        "",
        "$$a = 1.0 / 4.3 = 0.2326$$",
        "",
        "$$b = 1.0 / 4.2 = 0.2381$$",
        "",
        "$$0.2336 \\times 3 = 0.7008$$",
        "",
        "## Right in neither reading",
        "",
        "$$c = 1.0 / 7.0 = 0.1429$$",
        "",
        "$$0.1439 \\times 2 = 0.3000$$",
        "",
        "## Too short to tell",
        "",
        "$$d = 1.0 / 4.0 = 0.25$$",
        "",
        "$$0.35 \\times 2 = 0.70$$",
        "",
        "## A number printed before",
        "",
        "$$g = 1.0 / 7.547 = 0.1325$$",
        "",
        "$$f = 1.0 / 8.1 = 0.1235$$",
        "",
        "$$0.1325 \\times 2 = 0.2650$$",
        "",
        "## The earlier print is the one off",
        "",
        "$$h = 1.0 / 3.0 = 0.3334$$",
        "",
        "$$0.3333 \\times 3 = 0.9999$$",
        "",
    ]
    return "\n".join(lines)


def _report(tmp_path_factory: pytest.TempPathFactory, name: str, text: str) -> Any:
    path = tmp_path_factory.mktemp("lineage") / name
    path.write_text(text, encoding="utf-8")
    return check_article(path)


@pytest.fixture(scope="module")
def carried(tmp_path_factory: pytest.TempPathFactory) -> Any:
    return _report(tmp_path_factory, "carried.md", CARRIED)


@pytest.fixture(scope="module")
def copied(tmp_path_factory: pytest.TempPathFactory) -> Any:
    return _report(tmp_path_factory, "copied.md", COPIED)


@pytest.fixture(scope="module")
def guards(tmp_path_factory: pytest.TempPathFactory) -> Any:
    return _report(tmp_path_factory, "guards.md", _guards())


def _json(report: Any) -> dict[str, Any]:
    from test_formats import json_validator

    data = json.loads(render_json.render(Report((report,))))
    json_validator().validate(data)
    declared = render_json.schema()["$defs"]["check"]["properties"]
    for c in data["derivations"][0]["checks"]:  # every field written is declared
        assert set(c) <= set(declared), set(c) - set(declared)
    out: dict[str, Any] = data["derivations"][0]
    return out


def _lines(d: dict[str, Any]) -> dict[int, dict[str, Any]]:
    """The check of each displayed line, by article line: not a copy slip's literal, nor
    a link of the line checked on its own (``p_2 - 1 = 0.2321 - 1``: the term 0.2321 as
    p_2) or an operand that restates an earlier line's value (2.718 as e^{1.0})."""
    return {
        c["source_line"]: c
        for c in d["checks"]
        if c["kind"] == "expression"
        and "copy_of" not in c
        and not c["claim"].endswith("(term)")
        and "(restated)" not in c["claim"]
    }


def _close(text: str, x: Any) -> bool:
    return bool(abs(mpmath.mpf(text) - x) < mpmath.mpf(10) ** -12)


# ----------------------------------------------------------------------------- an error carried


def test_a_stated_input_and_an_off_result_carry_the_error_to_the_lines_after(
    carried: Any,
) -> None:
    d = _json(carried)
    lines = _lines(d)
    mean = (mpmath.mpf("12.4") + mpmath.mpf("58.0") + mpmath.mpf("67.87")) / 3
    assert not rounds_to(mean, "46.19") and lines[5]["verdict"] == "wrong"
    # 12.4 − 46.19 as written is −33.79; through the chain it is 12.4 − 46.09 = −33.69
    dev = mpmath.mpf("12.4") - mean
    assert rounds_to(mpmath.mpf("12.4") - mpmath.mpf("46.19"), "-33.79")
    assert not rounds_to(dev, "-33.79")
    # (−33.79)² = 1141.7641 as written; through the chain (−33.69)² = 1135.0161
    assert rounds_to(mpmath.mpf("-33.79") ** 2, "1141.76")
    assert not rounds_to(dev**2, "1141.76")
    for line, value in ((9, dev), (13, dev**2)):
        c = lines[line]
        assert c["as_displayed"]["verdict"] in ("exact", "rounded"), line
        assert c["verdict"] == "wrong", line
        assert c["reading"] == "through_chain", line
        assert _close(c["exact"], value), (line, c["exact"])
        assert c["cause"] == "inherited", (line, c["explanation"])
        assert c["root"] == {"claim": "mu", "step": None, "index": None, "source_line": 5}
        assert "through the chain" in c["explanation"]
    assert lines[9]["carried"] == [
        {"position": 7, "literal": "46.19", "stands_for": "mu", "value": "46.09"}
    ]
    carried_13 = lines[13]["carried"]
    assert [(x["literal"], x["stands_for"]) for x in carried_13] == [("-33.79", "line 9")]
    assert _close(carried_13[0]["value"], dev)
    assert "inherited from mu (through line 9)" in lines[13]["explanation"]


def test_the_text_report_puts_the_carried_lines_under_the_mean(carried: Any) -> None:
    text = "\n".join(derivation_lines(carried))
    assert "    line 5 (46.19, wrong) → line 9, line 13" in text


# ----------------------------------------------------------------------------- copy slips


def _exact_copied() -> dict[str, Any]:
    e = [mpmath.exp(mpmath.mpf(z)) for z in ("2.0", "1.0", "0.5")]
    p2 = e[1] / mpmath.fsum(e)
    return {"p2": p2, "loss": -mpmath.log(p2), "gradient": p2 - 1}


def test_a_miscopied_literal_gets_its_own_verdict_and_cause(copied: Any) -> None:
    d = _json(copied)
    x = _exact_copied()
    assert rounds_to(x["p2"], "0.2312") and not rounds_to(x["p2"], "0.2321")
    copies = [c for c in d["checks"] if "copy_of" in c]
    assert [(c["source_line"], c["printed"]) for c in copies] == [
        (REST, "0.2322"),
        (LOSS, "0.2321"),
    ]
    second, first = copies
    assert first["verdict"] == "wrong"  # 0.2321 − 0.23122… is nine units of the last digit
    assert first["cause"] == "copy-slip"
    assert first["expected"] == "0.2312"
    assert _close(first["exact"], x["p2"])
    assert first["copy_of"] == {
        "claim": "p_2",
        "printed": "0.2312",
        "source_line": P2,
        "how": "two digits swapped (12 written 21)",
    }
    assert first["root"]["claim"] == first["claim"] and first["root"]["source_line"] == LOSS
    assert "0.2321 copies p_2's 0.2312 (line 13) with two digits swapped" in first["explanation"]
    # 0.2322 for 0.2312: one digit changed, ten units off
    assert second["copy_of"]["how"] == "one digit changed (1 written 2)"
    assert second["verdict"] == "wrong" and second["cause"] == "copy-slip"
    assert second["copy_of"]["source_line"] == P2


def test_a_line_right_for_the_quantity_is_not_called_off(copied: Any) -> None:
    c = _lines(_json(copied))[LOSS]
    x = _exact_copied()
    # −ln(0.2321) = 1.4606 as written; −ln(p₂) = 1.4644 through the chain
    assert not rounds_to(-mpmath.log(mpmath.mpf("0.2321")), "1.464")
    assert rounds_to(x["loss"], "1.464")
    assert c["as_displayed"]["verdict"] == "wrong"
    assert c["verdict"] == "rounded" and "cause" not in c
    assert c["reading"] == "through_chain"
    assert _close(c["exact"], x["loss"])
    assert c["carried"][0]["copy_of"] == {"claim": "p_2", "printed": "0.2312", "source_line": P2}
    assert "right for the quantity, only the copied 0.2321 is off" in c["explanation"]


def test_a_line_computed_from_the_miscopied_value_is_inherited_from_the_copy(
    copied: Any,
) -> None:
    lines = _lines(_json(copied))
    x = _exact_copied()
    # 1 − 0.2322 = 0.7678 as written; 1 − p₂ = 0.76878 exactly
    assert rounds_to(1 - mpmath.mpf("0.2322"), "0.7678")
    assert not rounds_to(1 - x["p2"], "0.7678")
    # 0.2321 − 1 = −0.7679 as written (the loss line's miscopy, repeated); p₂ − 1 = −0.76878
    assert rounds_to(mpmath.mpf("0.2321") - 1, "-0.7679")
    assert not rounds_to(x["gradient"], "-0.7679")
    for line, value, root in ((REST, 1 - x["p2"], REST), (GRADIENT, x["gradient"], LOSS)):
        c = lines[line]
        assert c["as_displayed"]["verdict"] == "exact", line
        assert c["verdict"] == "wrong" and c["reading"] == "through_chain", line
        assert _close(c["exact"], value), line
        assert c["cause"] == "inherited", (line, c["explanation"])
        assert c["root"]["source_line"] == root and "(copy of p_2)" in c["root"]["claim"], line
    assert "its 0.2321 is a miscopy of p_2's 0.2312" in lines[GRADIENT]["explanation"]
    assert "0.2321 is a miscopy of p_2's 0.2312, as on line 21" in lines[GRADIENT]["explanation"]


def test_readings_name_the_hidden_precision_apart_from_the_chain(copied: Any) -> None:
    lines = _lines(_json(copied))
    # e^{0.5}: 0.5 is too short to tell which printed 0.5 it repeats, so it is itself
    assert lines[9]["reading"] == "as_displayed"
    # e^{2.0}: 2.0 is the given logit z[0], exactly 2
    assert lines[5]["reading"] == "exact_reading"
    assert lines[5]["exact_reading"]["stands_for"] == {"2.0": "z[0, 0]"}
    # 2.718 / 11.756 reads e^1 and the sum line's exact value, each printed as its rounding
    assert lines[P2]["reading"] == "exact_reading"
    assert lines[P2]["exact_reading"]["stands_for"] == {"2.718": "line 7", "11.756": "line 11"}


def test_the_copied_literal_is_counted_once(copied: Any) -> None:
    # a verdict of its own, so it is no longer among the numbers not checked
    at_loss = [u for u in copied.unchecked if getattr(u, "line", None) == LOSS]
    assert at_loss == []
    assert copied.printed_count == copied.checked_count + copied.unchecked_count


# ----------------------------------------------------------------------------- no invented link


def test_no_copy_is_read_into_a_coincidence(guards: Any) -> None:
    d = _json(guards)
    assert not [c for c in d["checks"] if "copy_of" in c or c.get("cause") == "copy-slip"]
    lines = _lines(d)
    one = mpmath.mpf(1)
    # far apart (22 lines), two candidates (0.2326 and 0.2381), too short (0.35): as written
    for line, value, printed in (
        (27, mpmath.mpf("0.3760") * 2, "0.7520"),
        (35, mpmath.mpf("0.2336") * 3, "0.7008"),
        (47, mpmath.mpf("0.35") * 2, "0.70"),
    ):
        assert rounds_to(value, printed)
        assert lines[line]["verdict"] == "exact" and lines[line]["reading"] == "as_displayed"
    # 0.1439 × 2 = 0.2878, and 1/7 × 2 = 0.2857: neither gives 0.3000, so no copy is offered
    assert not rounds_to(mpmath.mpf("0.1439") * 2, "0.3000")
    assert not rounds_to(one / 7 * 2, "0.3000")
    assert lines[41]["verdict"] == "wrong" and lines[41]["reading"] == "as_displayed"
    # 0.1325 repeats g (1/7.547), printed just before: it stands for g, not a copy of f
    assert rounds_to(one / mpmath.mpf("7.547") * 2, "0.2650")
    assert lines[55]["exact_reading"]["stands_for"] == {"0.1325": "g"}
    assert lines[55]["reading"] == "exact_reading"
    # 0.3333 is one digit from h's 0.3334, but it is the right rounding of 1/3: h's print is
    # the one off (a slip), and 0.3333 is no miscopy of it
    assert rounds_to(one / 3, "0.3333") and not rounds_to(one / 3, "0.3334")
    assert lines[59]["verdict"] == "slip"
    assert lines[61]["verdict"] == "exact" and lines[61]["reading"] == "as_displayed"


HAND = """title = "a probability and a product, written by hand"

[model]
architecture = "none"

[[claims]]
label = "p"
expression = "1.0 / 4.3"
printed = "0.2326"

[[claims]]
label = "three p"
expression = "0.2336 * 3"
printed = "0.7008"
"""


def test_a_derivation_written_by_hand_is_read_as_declared(tmp_path: Path) -> None:
    """No article lines, no copy slips: its literals mean what its author declared."""
    path = tmp_path / "hand.toml"
    path.write_text(HAND, encoding="utf-8")
    report = check(spec.load(path))
    assert [c.claim for c in report.checks] == ["p", "three p"]
    three = report.checks[1]
    assert rounds_to(mpmath.mpf("0.2336") * 3, "0.7008")
    assert three.verdict == "exact" and three.extra["reading"] == "as_displayed"


def test_pytest_fails_the_line_whose_literal_is_a_copy_slip(pytester: pytest.Pytester) -> None:
    """The loss line is right for the quantity, but its 0.2321 is off: its item fails."""
    (pytester.path / "post.md").write_text(COPIED, encoding="utf-8")
    pytester.makefile(".toml", pyproject='[project]\nname = "blog"\nversion = "1"\n')
    plugin = ("-p", "no:symtf", "-p", "symtf.pytest_plugin", "-p", "no:cacheprovider")
    result = pytester.runpytest(
        *plugin, "-W", "ignore::pytest.PytestAssertRewriteWarning", "--symtf", "post.md"
    )
    out = result.stdout.str()
    assert "FAILED post.md::L - L (copy of p_2): wrong: printed 0.2321" in out, out
    # the other lines off: the rest (its own copy slip), the gradient (inherited), and the
    # gradient's term 0.2321 read as p_2 (0.23122…, mpmath above), printed off
    assert "FAILED post.md::p_2-1 (term) - p_2-1 (term): wrong: printed 0.2321" in out, out
    assert result.parseoutcomes().get("failed") == 4, out


# ----------------------------------------------------------------------------- a vector's numbers

VECTOR = """# A softmax by hand, printed to three decimals

The three logits are [0.3, 2.0, 0.6]. Shifted by the largest:

$$[0.3, 2.0, 0.6] - 2.0 = [-1.7, 0, -1.4]$$

Exponentiate:

$$\\exp = [e^{-1.7}, e^0, e^{-1.4}] \\approx [0.182, 1.0, 0.247]$$

Sum:

$$0.182 + 1.0 + 0.247 = 1.429$$

Divide:

$$\\left[\\frac{0.182}{1.429}, \\frac{1.0}{1.429}, \\frac{0.247}{1.429}\\right] \\approx [0.127, 0.700, 0.173]$$
"""


def test_a_number_of_an_earlier_vector_result_stands_for_its_entry(
    tmp_path_factory: pytest.TempPathFactory,
) -> None:
    """0.182 (e^−1.7 = 0.18268…, truncated) written again on its own carries its slip."""
    d = _json(_report(tmp_path_factory, "vector.md", VECTOR))
    e = [mpmath.exp(mpmath.mpf("-1.7")), mpmath.mpf(1), mpmath.exp(mpmath.mpf("-1.4"))]
    total = mpmath.fsum(e)
    checks: dict[int, list[dict[str, Any]]] = {}
    for c in d["checks"]:
        if c["kind"] == "expression":
            checks.setdefault(c["source_line"], []).append(c)
    exps, (sum_line,), weights = checks[9], checks[13], checks[17]
    # the exponentials: 0.182 is e^−1.7 truncated (it rounds to 0.183), a slip
    assert not rounds_to(e[0], "0.182") and abs(e[0] - mpmath.mpf("0.182")) < mpmath.mpf("0.001")
    assert [c["verdict"] for c in exps] == ["slip", "exact", "rounded"]
    # the sum: 1.429 both as written (0.182 + 1.0 + 0.247) and exactly (1.42928…)
    assert rounds_to(total, "1.429")
    assert sum_line["verdict"] == "rounded" and sum_line["reading"] == "through_chain"
    assert sum_line["exact_reading"]["stands_for"] == {
        "0.182": "line 9",
        "1.0": "line 9",
        "0.247": "line 9",
    }
    # the weights, through the chain: e^−1.7 / 1.42928… = 0.12781… is printed 0.127, a
    # slip inherited from the truncated 0.182; 0.700 and 0.173 are right
    w = [x / total for x in e]
    assert not rounds_to(w[0], "0.127") and abs(w[0] - mpmath.mpf("0.127")) < mpmath.mpf("0.001")
    assert rounds_to(w[1], "0.700") and rounds_to(w[2], "0.173")
    assert rounds_to(mpmath.mpf("0.182") / mpmath.mpf("1.429"), "0.127")  # right as written
    assert [c["verdict"] for c in weights] == ["slip", "rounded", "rounded"]
    first = weights[0]
    assert first["reading"] == "through_chain" and first["cause"] == "inherited"
    assert first["root"]["source_line"] == 9
    for c, x in zip(weights, w, strict=True):
        assert _close(c["exact"], x)


def test_a_written_zero_does_not_repeat_a_result_rounded_to_zero(tmp_path: Path) -> None:
    """A weight update written out line by line: ``d_2 = (0.0498 − 0.09992 + 0.0500) / 3 ≈ 0.0``
    is −0.00004 rounded away, and ``w_new = 0.0 − 0.1 × 0.0333`` below writes the weight's
    own zero (an exact ``= 0.0`` a hundred lines up is the zero's first printing). The print
    ``0.0`` has no digit to tell a rounded-away value from a written zero, so the weight's
    0.0 is read as written: 0 − 0.1 × d_1 = −0.00332933…, which prints as −0.0033; read as
    d_2 it would be −0.0033693… and a slip (by hand)."""
    pad = "".join(f"Note {i}: the weights stay as they are.\n\n" for i in range(50))
    text = (
        "# Update\n\n```\nWO = [0.1, 0.0]\n     [0.0, 0.1]\n```\n\n"
        "- score = [0.1, 0.0] · [0.0, 0.1] = 0.0\n\n"
        + pad
        + "```\nd_1 = (0.0498 + 0.00008 + 0.0500) / 3 ≈ 0.0333\n"
        "d_2 = (0.0498 - 0.09992 + 0.0500) / 3 ≈ 0.0\n```\n\n"
        "**WO_new = WO_old - η × d**\n\n```\nw_new = 0.0 - 0.1 × 0.0333 ≈ -0.0033\n```\n"
    )
    d_1 = (Fraction("0.0498") + Fraction("0.00008") + Fraction("0.0500")) / 3
    d_2 = (Fraction("0.0498") - Fraction("0.09992") + Fraction("0.0500")) / 3
    assert d_2 == Fraction("-0.00004")  # prints as 0.0, is not 0
    assert rounds_to(mpmath.mpf(d_1.numerator) / d_1.denominator, "0.0333")
    written, as_d2 = 0 - Fraction("0.1") * d_1, d_2 - Fraction("0.1") * d_1
    assert rounds_to(mpmath.mpf(written.numerator) / written.denominator, "-0.0033")
    assert not rounds_to(mpmath.mpf(as_d2.numerator) / as_d2.denominator, "-0.0033")
    path = tmp_path / "update.md"
    path.write_text(text, encoding="utf-8")
    report = check_article(path)
    line = text.splitlines().index("w_new = 0.0 - 0.1 × 0.0333 ≈ -0.0033") + 1
    verdicts = {
        (r.claim.source_line, c.printed): c.verdict for r in report.results for c in r.checks
    }
    assert verdicts[(line, "-0.0033")] in ("exact", "rounded"), verdicts
