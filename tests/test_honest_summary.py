"""An article's report says how many of its printed numbers were checked, lists each one
that was not with its reason, in every format, and never says "all printed numbers check
out" when some were not checked; ``--require-checked`` makes too few a failure.

The article reports here are built by hand: a small derivation's real checks, with the
numbers its draft could not check set as the case needs, so the counts expected are
those of the construction, whatever the reader finds in a real article.
"""

from __future__ import annotations

import dataclasses
import json
import re
import xml.etree.ElementTree as ET
from pathlib import Path

import jsonschema
import pytest

from symtf.checking.report import DerivationReport, Report
from symtf.cli import main
from symtf.commands.check import check_file
from symtf.draft.compose import Unmapped, Unread
from symtf.renderers import github, junit, sarif, text
from symtf.renderers import json as render_json

ROOT = Path(__file__).resolve().parent.parent

#: Three right numbers (the identity's first row, and 2 + 1 = 3).
RIGHT = """title = "three right numbers"
[tensors]
x = "1 0\\n0 1"
[[claims]]
label = "x row 0"
step = "x"
row = 0
printed = "1 0"
[[claims]]
label = "sum"
expression = "2 + 1"
printed = "3"
"""

#: What the draft could not check: 4 numbers no step explains, and 1 it could not read.
UNCHECKED = (
    Unmapped("scores", 12, 3, "no step of the known tensors reproduces it"),
    Unread("weights", 20, "softmax(s) = [0.2, 0.8]", "an operand it cannot read"),
)


@pytest.fixture(scope="module")
def checked(tmp_path_factory: pytest.TempPathFactory) -> DerivationReport:
    path = tmp_path_factory.mktemp("right") / "right.toml"
    path.write_text(RIGHT, encoding="utf-8")
    d = check_file(path)
    assert [c.verdict for c in d.checks] == ["exact", "exact", "exact"]
    return d


def _article(d: DerivationReport, unchecked: tuple[object, ...] = UNCHECKED) -> DerivationReport:
    return dataclasses.replace(d, article="posts/post.md", unchecked=unchecked)


def test_the_counts_are_those_of_the_construction(checked: DerivationReport) -> None:
    a = _article(checked)
    assert (a.checked_count, a.unchecked_count, a.printed_count) == (3, 4, 7)
    assert round(a.checked_percent, 6) == round(300 / 7, 6)
    assert Report((a,), require_checked=50).too_few_checked == (a,)  # 3/7 = 43 % < 50 %
    assert Report((a,), require_checked=40).too_few_checked == ()
    assert Report((a,)).few_checked == (a,)  # under half, no rule: a warning
    assert Report((_article(checked, ()),)).few_checked == ()


def test_text_always_says_how_many_were_checked(checked: DerivationReport) -> None:
    out = text.render(Report((_article(checked),)))
    assert "  3 of 7 printed numbers checked, 4 not checked: 3 exact" in out
    assert "line 12: scores (3 number(s)): no step of the known tensors reproduces it" in out
    assert "line 20: softmax(s) = [0.2, 0.8]: an operand it cannot read" in out
    assert "all printed numbers check out" not in out
    assert out.rstrip().endswith("the checked numbers check out; 4 printed number(s) not checked")
    full = text.render(Report((_article(checked, ()),)))
    assert "  3 of 3 printed numbers checked, 0 not checked: 3 exact" in full
    assert full.rstrip().endswith("— all printed numbers check out")


def test_quiet_text_still_lists_the_numbers_not_checked(checked: DerivationReport) -> None:
    out = text.render(Report((_article(checked),)), quiet=True)
    assert "3 of 7 printed numbers checked, 4 not checked" in out
    assert "line 12: scores" in out


def test_json_gives_the_coverage_and_each_number_not_checked(checked: DerivationReport) -> None:
    data = render_json.report_dict(Report((_article(checked),), require_checked=50))
    jsonschema.validate(data, render_json.schema())
    (d,) = data["derivations"]
    assert d["coverage"] == {"printed": 7, "checked": 3, "not_checked": 4, "given": 0}
    assert [(u["source_line"], u["why"], u["numbers"]) for u in d["unchecked"]] == [
        (12, "unmapped", 3),
        (20, "unread", 1),
    ]
    assert d["too_few_checked"] is True and data["require_checked"] == 50
    plain = render_json.report_dict(Report((checked,)))
    assert plain["derivations"][0]["coverage"] == {
        "printed": 3,
        "checked": 3,
        "not_checked": 0,
        "given": 0,
    }
    assert "too_few_checked" not in plain["derivations"][0] and plain["require_checked"] is None


def test_junit_github_and_sarif_show_each_number_not_checked(checked: DerivationReport) -> None:
    report = Report((_article(checked),), require_checked=50)
    suite = ET.fromstring(junit.render(report).split("\n", 1)[1]).find("testsuite")
    assert suite is not None
    skipped = [c for c in suite.iter("testcase") if c.find("skipped") is not None]
    assert [c.get("name") for c in skipped] == ["scores", "weights"]
    assert all(s.get("type") == "not-checked" for c in skipped for s in c.iter("skipped"))
    failing = [c for c in suite.iter("testcase") if c.find("failure") is not None]
    assert [c.get("name") for c in failing] == ["printed numbers checked"]
    assert suite.get("failures") == "1" and suite.get("skipped") == "2"

    lines = github.render(report).splitlines()
    notices = [x for x in lines if x.startswith("::notice ")]
    assert [re.search(r"line=(\d+)", x).group(1) for x in notices] == ["12", "20"]  # type: ignore[union-attr]
    assert any(x.startswith("::error ") and "fewer than the 50%" in x for x in lines)

    results = sarif.report_dict(report)["runs"][0]["results"]
    notes = [r for r in results if r["ruleId"] == "not-checked"]
    assert [r["level"] for r in notes] == ["note", "note"]
    lines_of = [r["locations"][0]["physicalLocation"]["region"]["startLine"] for r in notes]
    assert lines_of == [12, 20]
    assert [r["level"] for r in results if r["ruleId"] == "too-few-checked"] == ["error"]


def test_under_half_is_a_warning_without_a_rule(checked: DerivationReport) -> None:
    lines = github.render(Report((_article(checked),))).splitlines()
    assert any(x.startswith("::warning ") and "fewer than half" in x for x in lines)


# ----------------------------------------------------------------------------- exit codes


@pytest.fixture
def post(checked: DerivationReport, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A post whose check gives the report built above (3 of 7 numbers checked)."""
    path = tmp_path / "post.md"
    path.write_text("# a post\n", encoding="utf-8")
    report = dataclasses.replace(checked, article=str(path), unchecked=UNCHECKED)
    monkeypatch.setattr("symtf.commands.draft.check_article", lambda p, drafted=None: report)
    monkeypatch.chdir(tmp_path)
    return path


def test_require_checked_makes_too_few_a_failure(
    post: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["check", str(post), "--require-checked", "50"]) == 1
    err = capsys.readouterr().err
    assert "symtf: fail: " in err and "3 of 7 printed numbers checked (43%)" in err
    assert "fewer than the 50% --require-checked asks for" in err
    assert main(["check", str(post), "--require-checked", "40"]) == 0
    assert "symtf: fail" not in capsys.readouterr().err


def test_require_checked_comes_from_the_table_too(
    post: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    (post.parent / "pyproject.toml").write_text("[tool.symtf]\nrequire-checked = 90\n", "utf-8")
    assert main(["check", str(post)]) == 1
    assert "fewer than the 90%" in capsys.readouterr().err
    assert main(["check", str(post), "--require-checked", "0"]) == 0  # the command line wins


def test_by_default_under_half_warns_on_stderr_and_passes(
    post: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["check", str(post)]) == 0
    cap = capsys.readouterr()
    assert "symtf: warning: " in cap.err and "fewer than half" in cap.err
    assert "all printed numbers check out" not in cap.out


@pytest.mark.parametrize("value", ["-5", "101", "nan", "most"])
def test_a_bad_require_checked_is_a_usage_error(
    value: str, capsys: pytest.CaptureFixture[str]
) -> None:
    with pytest.raises(SystemExit) as e:
        main(["check", "--require-checked", value])
    assert e.value.code == 2 and "expected a percentage" in capsys.readouterr().err


# ----------------------------------------------------------------------------- a real article


def test_a_real_article_s_counts_add_up(capsys: pytest.CaptureFixture[str]) -> None:
    # Whatever the reader finds, the report's own figures must agree with each other.
    main(["check", "--format", "json", str(ROOT / "docs" / "tutorial" / "softmax-post.md")])
    (d,) = json.loads(capsys.readouterr().out)["derivations"]
    cov = d["coverage"]
    assert cov["checked"] == len(d["checks"])
    assert cov["not_checked"] == sum(u.get("numbers", 1) for u in d["unchecked"])
    assert cov["printed"] == cov["checked"] + cov["not_checked"]
    main(["check", str(ROOT / "docs" / "tutorial" / "softmax-post.md")])
    out = capsys.readouterr().out
    shown = f"{cov['checked']} of {cov['printed']} printed numbers checked"
    assert shown in out
    if cov["not_checked"]:
        assert "all printed numbers check out" not in out


def test_the_inputs_an_article_gives_are_counted_apart(checked: DerivationReport) -> None:
    """Five printed inputs (given tensors) are neither checked nor left unchecked: the summary
    says so, and the share checked counts only the numbers the article computes."""
    d = dataclasses.replace(_article(checked), given=5)
    assert text.coverage_text(d) == (
        "3 of 7 printed numbers checked, 4 not checked (5 more are inputs the article gives)"
    )
    data = render_json.report_dict(Report((d,)))
    jsonschema.validate(data, render_json.schema())
    assert data["derivations"][0]["coverage"] == {
        "printed": 7,
        "checked": 3,
        "not_checked": 4,
        "given": 5,
    }
