"""A displayed chain ``a = b = c`` is one printed number: one verdict, every link checked.

An article writes ``0.0025 × 0.498 + (-0.00749) × 0.502 = 0.001245 - 0.00376 = -0.002515``:
two links computing the one printed -0.002515. Checked as two claims, that number had two
verdicts (and, when off, two flags). A claim may now state the whole chain; each link is
checked as written and with its literals read as the exact values they stand for, and the
number takes the worst link's verdict, naming that link. Expected values are worked by hand
or with mpmath at 50 digits.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import jsonschema
import mpmath
import pytest

import symtf
from symtf.cli import main
from symtf.errors import SpecError
from symtf.renderers.json import schema

CHAINS = """title = "chains, by hand"

[[claims]]
label = "half"
expression = "1/4 + 1/4 = 0.25 + 0.35"
printed = "0.5"

[[claims]]
label = "dot"
expression = "0.0025 × 0.498 + (-0.00749) × 0.502 = 0.001245 - 0.00376"
printed = "-0.002515"

[[claims]]
label = "two e"
expression = "exp(1) + exp(1) = 2.718 + 2.718"
printed = "5.437"

[[claims]]
label = "row"
expression = "[1/3 + 1/3, 1/8] = [0.667, 0.125]"
printed = "0.667 0.125"
"""


MPMATH_DIGITS = 50


@pytest.fixture(scope="module")
def chains(tmp_path_factory: pytest.TempPathFactory) -> Path:
    path = tmp_path_factory.mktemp("chains") / "chains.toml"
    path.write_text(CHAINS, encoding="utf-8")
    return path


@pytest.fixture(scope="module")
def checks(chains: Path) -> dict[str, list[Any]]:
    [report] = symtf.check(symtf.load(chains)).derivations
    out: dict[str, list[Any]] = {}
    for c in report.checks:
        out.setdefault(c.claim, []).append(c)
    return out


def test_a_chain_gives_its_printed_number_one_verdict_the_worst_links(checks: Any) -> None:
    # by hand: 1/4 + 1/4 = 1/2 prints 0.5 exactly; 0.25 + 0.35 = 0.6 is one unit (0.1) off
    [c] = checks["half"]
    assert c.verdict == "wrong" and c.printed == "0.5"
    assert c.extra["link"] == 1
    assert [x["expression"] for x in c.extra["links"]] == ["1/4 + 1/4", "0.25 + 0.35"]
    assert [x["verdict"] for x in c.extra["links"]] == ["exact", "wrong"]
    assert c.extra["expression"] == "1/4 + 1/4 = 0.25 + 0.35"
    # the readings at the top are the deciding link's, and the explanation names it
    assert c.extra["as_displayed"]["exact"] == "0.6"
    assert "link 2 of 2 gives the verdict" in c.explanation
    assert "link 1 of 2, 1/4 + 1/4 = 0.5: exactly as printed" in c.explanation


def test_a_chain_of_right_links_is_one_right_number(checks: Any) -> None:
    # 0.0025·0.498 − 0.00749·0.502 = 0.001245 − 0.00375998 = −0.00251498 (by hand), which
    # prints as −0.002515; the second link is −0.002515 as written, and −0.00251498 with
    # its 0.00376 read as the first link's (-0.00749) × 0.502
    first = mpmath.mpf("0.0025") * mpmath.mpf("0.498") - mpmath.mpf("0.00749") * mpmath.mpf("0.502")
    assert first == mpmath.mpf("-0.00251498")
    [c] = checks["dot"]
    assert c.verdict == "rounded"
    links = c.extra["links"]
    assert [x["verdict"] for x in links] == ["rounded", "rounded"]
    assert links[0]["exact"] == links[1]["exact"] == "-0.00251498"
    assert links[1]["as_displayed"]["verdict"] == "exact"
    # on a tie the later link gives the verdict: the one the result was written from
    assert c.extra["link"] == 1


def test_a_later_link_reads_an_earlier_links_piece_in_a_file_without_article_lines(
    checks: Any,
) -> None:
    # 2.718 + 2.718 = 5.436 as written, one unit below 5.437; 2·e = 5.43656… rounds to
    # 5.437: the second link's 2.718 is the first link's exp(1), unrounded
    assert mpmath.nstr(2 * mpmath.e, 6) == "5.43656"
    [c] = checks["two e"]
    assert c.verdict == "rounded"
    second = c.extra["links"][1]
    assert second["as_displayed"]["verdict"] == "wrong"
    assert second["exact_reading"]["verdict"] == "rounded"
    assert "2.718" in second["exact_reading"]["stands_for"]
    assert second["exact_reading"]["exact"].startswith("5.43656365")


def test_a_vector_chain_gives_each_entry_one_verdict(checks: Any) -> None:
    # 2/3 = 0.6666… prints as 0.667 (rounded); 1/8 = 0.125 exactly
    row = checks["row"]
    assert [(c.index, c.printed, c.verdict) for c in row] == [
        ((0, 0), "0.667", "rounded"),
        ((0, 1), "0.125", "exact"),
    ]
    assert all(len(c.extra["links"]) == 2 for c in row)


def test_the_json_counts_each_number_once_and_keeps_to_the_schema(
    chains: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["check", "--format", "json", str(chains)]) == 1
    data = json.loads(capsys.readouterr().out)
    jsonschema.validate(data, schema())
    [d] = data["derivations"]
    assert [c["printed"] for c in d["checks"]] == ["0.5", "-0.002515", "5.437", "0.667", "0.125"]
    assert d["counts"]["wrong"] == 1
    for c in d["checks"]:
        for link in c["links"]:
            assert isinstance(link["exact_truncated"], bool)
            assert isinstance(link["as_displayed"]["exact_truncated"], bool)


def test_a_stands_for_key_applies_to_the_links_that_write_it(tmp_path: Path) -> None:
    path = tmp_path / "bad.toml"
    path.write_text(
        'title = "x"\n[[claims]]\nlabel = "a"\nexpression = "1/4 + 1/4 = 0.25 + 0.25"\n'
        'printed = "0.5"\nstands_for = { "0.7" = "x[0]" }\n',
        encoding="utf-8",
    )
    with pytest.raises(SpecError, match=r"no literal '0\.7'"):
        symtf.check(symtf.load(path))


ARTICLE = """# A product, by hand

$$x = 2.3 \\times 4 = 9.3 \\approx 9$$

The scaled sum:

$$s = 0.25 \\times 2 + 0.5 = 0.5 + 0.5 = 1.0$$
"""


def test_an_article_chain_is_one_claim_and_a_number_on_the_way_is_its_own(
    tmp_path: Path,
) -> None:
    # 2.3 × 4 = 9.2 (by hand): the 9.3 printed on the way is one unit off (wrong), the 9
    # after it a correct rounding; 0.25·2 + 0.5 = 0.5 + 0.5 = 1 prints 1.0 exactly, once, and
    # the first 0.5 on the way is the operand product 0.25·2 = 0.5 exactly (the second 0.5 is
    # the 0.5 the line states, not a number computed on the way)
    from symtf.commands.draft import check_article

    path = tmp_path / "chain.md"
    path.write_text(ARTICLE, encoding="utf-8")
    report = check_article(path)
    got = sorted(
        (r.claim.source_line, c.printed, c.verdict, len(c.extra.get("links", [None])))
        for r in report.results
        for c in r.checks
        if r.claim.expression is not None
    )
    assert got == [
        (3, "9", "rounded", 1),
        (3, "9.3", "wrong", 1),
        (7, "0.5", "exact", 1),
        (7, "1.0", "exact", 2),
    ]


def test_a_chain_with_its_value_written_last_keeps_every_link() -> None:
    # "a = b = 0.5" without a printed key: the value is read off the end, and both links
    # are checked against it. By hand: 1/4 + 1/4 = 0.5 exactly; 0.25 + 0.35 = 0.6, one
    # unit (0.1) off, so the number is wrong, decided by link 2
    text = 'title = "t"\n[[claims]]\nlabel = "half"\nexpression = "1/4 + 1/4 = 0.25 + 0.35 = 0.5"\n'
    [c] = symtf.check(symtf.loads(text)).derivations[0].checks
    assert c.printed == "0.5"
    assert [x["expression"] for x in c.extra["links"]] == ["1/4 + 1/4", "0.25 + 0.35"]
    assert [x["verdict"] for x in c.extra["links"]] == ["exact", "wrong"]
    assert c.verdict == "wrong" and c.extra["link"] == 1


SCALED = """# Weighted sum

The weights are $a = [0.25, 0.75]$ and the values $v_1 = [2.0, 0.5]$, $v_2 = [0.4, 1.2]$:

$$o = 0.25 \\cdot [2.0, 0.5] + 0.75 \\cdot [0.4, 1.2]$$
$$= [0.5, 0.125] + [0.3, 0.95]$$
$$= [0.8, 1.075]$$
"""


def test_the_lists_of_a_link_write_the_scaled_lists_of_the_link_before(tmp_path: Path) -> None:
    # 0.25·[2.0, 0.5] = [0.5, 0.125] and 0.75·[0.4, 1.2] = [0.3, 0.9] (by hand): the article
    # writes 0.95 for 0.9, five units of its last digit off; the others are exact.
    from symtf.commands.draft import check_article

    path = tmp_path / "scaled.md"
    path.write_text(SCALED, encoding="utf-8")
    report = check_article(path)
    got = sorted(
        (c.printed, c.verdict)
        for r in report.results
        for c in r.checks
        if r.claim.expression is not None and "(term)" in r.claim.label
    )
    assert got == [("0.125", "exact"), ("0.3", "exact"), ("0.5", "exact"), ("0.95", "wrong")]
