"""Machine-readable reports validate against their published schemas.

JSON against symtf's own shipped schema (draft 2020-12), JUnit against the
``junit-10.xsd`` pytest validates its own reports with, SARIF against the OASIS
SARIF 2.1.0 schema; the two external schemas are kept in ``tests/schemas/``
exactly as published (pytest-dev/pytest ``testing/example_scripts/junit-10.xsd``
at df87db7b0462fb764ef73fa00561adf8ad047572, oasis-tcs/sarif-spec
``sarif-2.1/schema/sarif-schema-2.1.0.json`` at
e0583813964ec43cea53b6b531b402866095ed1f).
"""

from __future__ import annotations

import json
import tomllib
from decimal import Decimal
from pathlib import Path
from xml.etree import ElementTree as ET

import jsonschema
import pytest
import xmlschema
from tiny_derivations import tiny_model

from symtf import bundled
from symtf.checking.report import Check, ClaimResult, DerivationReport, FileError, Report
from symtf.cli import main
from symtf.commands.check import check_file
from symtf.renderers import github, junit, sarif
from symtf.renderers import json as render_json
from symtf.spec import Claim

SCHEMAS = Path(__file__).parent / "schemas"
ROOT = Path(__file__).resolve().parent.parent

BAD = (
    tiny_model("bad", tokens=["a"])
    + """
[[claims]]
label = "x"
step = "x"
printed = "1 0"

[[claims]]
label = "y"
step = "x"
printed = "1 0"
decimalz = 3
"""
)
#: Line of the misspelled key in BAD, counted by hand.
BAD_KEY_LINE = 23


@pytest.fixture(scope="module")
def bundled_report() -> Report:
    return Report(tuple(check_file(p, timeout=None) for p in bundled.paths()))  # no wall clock


@pytest.fixture
def mixed_folder(tmp_path: Path) -> Path:
    for name in ("rope_toy", "i_love_ai"):
        (tmp_path / f"{name}.toml").write_bytes(bundled.get(name).read_bytes())
    (tmp_path / "broken.toml").write_text(BAD, encoding="utf-8")
    return tmp_path


def run_cli(args: list[str], capsys: pytest.CaptureFixture[str]) -> tuple[int, str, str]:
    code = main(args)
    out, err = capsys.readouterr()
    return code, out, err


def claim_headers(path: Path) -> list[int]:
    """Lines of the ``[[claims]]`` headers, found by plain string comparison."""
    lines = path.read_text(encoding="utf-8").splitlines()
    return [i + 1 for i, line in enumerate(lines) if line.strip() == "[[claims]]"]


def printed_row_line(path: Path, header: int, position: int) -> int:
    """The line of a claim's ``position``-th printed value, read off the text by hand.

    The first ``printed`` line after the claim's header; when it only opens a
    multi-line string, the non-blank lines up to the closing delimiter are the
    rows, and the row is ``position`` divided by the values per row.
    """
    lines = path.read_text(encoding="utf-8").splitlines()
    key = next(n for n in range(header, len(lines) + 1) if lines[n - 1].startswith("printed"))
    value = lines[key - 1].split("=", 1)[1].strip()
    if value not in ('"""', "'''"):
        return key
    rows = []
    n = key + 1
    while lines[n - 1].strip() != value:
        if lines[n - 1].strip():
            rows.append(n)
        n += 1
    per_row = len(lines[rows[0] - 1].split())
    return rows[position // per_row]


def off_lines(report: Report, verdicts: tuple[str, ...]) -> list[tuple[str, int, str]]:
    """(file, line of the printed number, verdict) of every check with one of ``verdicts``."""
    return [
        (d.path, printed_row_line(Path(d.path), r.claim.line, k), c.verdict)
        for d in report.derivations
        for r in d.results
        for k, c in enumerate(r.checks)
        if c.verdict in verdicts
    ]


def expected_kind(raw: dict) -> str:
    """The kind of a claim, read from the TOML table itself."""
    if "assert" in raw:
        return "tokens"
    if "expression" in raw:
        return "expression"
    if raw.get("step") == "next_token" or "rank" in raw:
        return "word"
    return "number"


# ----------------------------------------------------------------------------- JSON


def json_validator() -> jsonschema.Draft202012Validator:
    schema = render_json.schema()
    jsonschema.Draft202012Validator.check_schema(schema)
    return jsonschema.Draft202012Validator(schema)


def test_json_of_every_bundled_derivation_validates(bundled_report: Report) -> None:
    data = json.loads(render_json.render(bundled_report))
    json_validator().validate(data)
    assert data["contract"] == 1 and data["errors"] == []
    assert len(data["derivations"]) == len(bundled.paths()) >= 9


def test_json_exact_values_are_decimals_and_consistent_with_the_verdict(
    bundled_report: Report,
) -> None:
    data = json.loads(render_json.render(bundled_report))
    seen_truncated = 0
    for d in data["derivations"]:
        for c in d["checks"]:
            readings = [c] + [c[k] for k in ("as_displayed", "exact_reading") if k in c]
            for r in readings:
                assert r["exact"] is None or "…" not in r["exact"]
            if c["kind"] in ("word", "tokens"):
                assert c["exact"] is None
                continue
            exact = Decimal(c["exact"])  # every number has a certified decimal
            if not exact.is_finite() or "/" in c["printed"] or "inf" in c["printed"]:
                continue
            printed = Decimal(c["printed"].replace("−", "-"))
            ulp = Decimal(1).scaleb(printed.as_tuple().exponent)
            # exact_truncated: the value lies within one unit of exact's last digit.
            slack = Decimal(1).scaleb(exact.as_tuple().exponent) if c["exact_truncated"] else 0
            seen_truncated += c["exact_truncated"]
            gap = abs(exact - printed)
            if c["verdict"] == "exact":
                assert gap <= slack, c
            elif c["verdict"] == "rounded":
                assert gap <= ulp / 2 + slack, c
            elif c["verdict"] == "slip":
                assert gap < ulp + slack and gap >= ulp / 2 - slack, c
            elif c["verdict"] == "wrong":
                assert gap >= ulp - slack, c
    assert seen_truncated > 100  # softmax and LayerNorm values go on forever


def test_json_kind_file_and_line_match_the_toml(bundled_report: Report) -> None:
    data = json.loads(render_json.render(bundled_report))
    for d in data["derivations"]:
        path = Path(d["path"])
        raw_claims = tomllib.loads(path.read_text(encoding="utf-8"))["claims"]
        headers = claim_headers(path)
        assert len(headers) == len(raw_claims)
        by_label = {
            c["label"]: (expected_kind(c), line)
            for c, line in zip(raw_claims, headers, strict=True)
        }
        position: dict[str, int] = {}
        for c in d["checks"]:
            assert c["file"] == d["path"]
            assert (c["kind"], c["line"]) == by_label[c["claim"]], c["claim"]
            k = position[c["claim"]] = position.get(c["claim"], -1) + 1
            assert c["printed_line"] == printed_row_line(path, c["line"], k), (c["claim"], k)


def test_one_bad_file_does_not_hide_the_others(
    mixed_folder: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(mixed_folder)
    code, out, err = run_cli(["check", "--format", "json", "."], capsys)
    assert code == 2
    data = json.loads(out)
    json_validator().validate(data)
    assert sorted(Path(d["path"]).name for d in data["derivations"]) == [
        "i_love_ai.toml",
        "rope_toy.toml",
    ]
    [e] = data["errors"]
    assert e["path"] == "broken.toml"
    assert "claims[1].decimalz" in e["error"]
    assert e["error"].endswith(f"(line {BAD_KEY_LINE})")
    assert "broken.toml" in err


def test_schema_rejects_what_the_contract_forbids(bundled_report: Report) -> None:
    data = json.loads(render_json.render(bundled_report))
    validator = json_validator()
    check = data["derivations"][0]["checks"][0]
    for field, bad in (
        ("exact", "0.1234…"),
        ("kind", "matrix"),
        ("line", 0),
        ("verdict", "close"),
        ("exact_truncated", "yes"),
    ):
        broken = json.loads(json.dumps(data))
        broken["derivations"][0]["checks"][0] = {**check, field: bad}
        assert not validator.is_valid(broken), field
    missing = json.loads(json.dumps(data))
    del missing["derivations"][0]["checks"][0]["file"]
    assert not validator.is_valid(missing)


# ----------------------------------------------------------------------------- JUnit


def junit_schema() -> xmlschema.XMLSchema:
    return xmlschema.XMLSchema(str(SCHEMAS / "junit-10.xsd"))


def test_junit_of_every_bundled_derivation_validates(bundled_report: Report) -> None:
    xml = junit.render(bundled_report)
    junit_schema().validate(xml)
    root = ET.fromstring(xml)
    suites = root.findall("testsuite")
    assert len(suites) == len(bundled.paths())
    for s in suites:
        assert float(s.get("time")) > 0
        assert s.get("file") == s.get("name")
        assert int(s.get("tests")) == len(s.findall("testcase"))
        assert int(s.get("failures")) == len(s.findall("testcase/failure"))
    failures = root.findall(".//failure")
    assert failures and all(f.get("type") in ("slip", "wrong") for f in failures)
    love = bundled.get("i_love_ai")
    lines = love.read_text("utf-8").splitlines()
    header = claim_headers(love)[
        [c["label"] for c in tomllib.loads("\n".join(lines))["claims"]].index("logit math")
    ]
    logit_line = printed_row_line(love, header, 0)
    assert lines[logit_line - 1] == 'printed = "-2.049"'
    messages = [f.get("message") for f in failures]
    assert any(m.startswith(f"{love}:{logit_line}: ") for m in messages), messages


def test_junit_with_a_bad_file_validates(
    mixed_folder: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(mixed_folder)
    code, out, _ = run_cli(["check", "--format", "junit", "."], capsys)
    assert code == 2
    junit_schema().validate(out)
    root = ET.fromstring(out)
    bad = [s for s in root.findall("testsuite") if s.get("name") == "broken.toml"]
    assert len(bad) == 1 and bad[0].find("testcase/failure").get("type") == "bad-input"
    assert len(root.findall("testsuite")) == 3


def synthetic(label: str, verdict: str, line: int | None = 7) -> Report:
    """A report built by hand (no checking involved)."""
    claim = Claim(label, "f.toml: claims[0]", "x", line=line)
    c = Check(label, "x", (0, 1), "0.50", None, None, verdict, f"because {label}")
    return Report((DerivationReport("f.toml", "t", (ClaimResult(claim, (c,)),)),))


def test_junit_marks_undecided_as_skipped_and_keeps_control_characters_out() -> None:
    label = "A\x1b[31m\r\n\x00"
    xml = junit.render(synthetic(label, "undecided"))
    junit_schema().validate(xml)
    root = ET.fromstring(xml)
    assert root.find("testsuite").get("skipped") == "1"
    skipped = root.find(".//skipped")
    assert skipped.get("type") == "undecided" and skipped.get("message").startswith("f.toml:7: ")
    assert root.find(".//testcase").get("name") == "A\\x1b[31m\\r\\n\\x00"


# ----------------------------------------------------------------------------- GitHub


def test_github_annotations_escape_like_the_actions_toolkit() -> None:
    out = github.render(synthetic("a,b:c%d\ne", "wrong", line=12))
    # Properties escape % CR LF : and ,; the message escapes % CR LF (control characters
    # in labels are first made visible: the newline becomes the two characters \n).
    assert out == (
        "::error file=f.toml,line=12,title=symtf%3A a%2Cb%3Ac%25d\\ne is wrong::"
        "a,b:c%25d\\ne[0, 1]: wrong: printed 0.50: because a,b:c%25d\\ne\n"
    )
    assert github.escape_data("50%\r\n") == "50%25%0D%0A"
    assert github.escape_property("a:b,c%") == "a%3Ab%2Cc%25"


def test_github_annotates_the_line_of_each_off_number(bundled_report: Report) -> None:
    out = github.render(bundled_report).splitlines()
    off = off_lines(bundled_report, ("slip", "wrong"))
    assert len(out) == len(off) > 0
    for line, (path, n, _) in zip(out, off, strict=True):
        assert line.startswith(f"::error file={github.escape_property(path)},line={n},title=")


def test_github_reports_a_bad_file_at_its_line(
    mixed_folder: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(mixed_folder)
    code, out, _ = run_cli(["check", "--format", "github", "."], capsys)
    assert code == 2
    assert f"::error file=broken.toml,line={BAD_KEY_LINE},title=symtf%3A bad input::" in out


# ----------------------------------------------------------------------------- SARIF


def sarif_validator() -> jsonschema.Draft4Validator:
    schema = json.loads((SCHEMAS / "sarif-schema-2.1.0.json").read_text(encoding="utf-8"))
    return jsonschema.Draft4Validator(schema)


def test_sarif_of_every_bundled_derivation_validates(bundled_report: Report) -> None:
    log = json.loads(sarif.render(bundled_report))
    sarif_validator().validate(log)
    results = log["runs"][0]["results"]
    off = [(n, v) for _, n, v in off_lines(bundled_report, ("slip", "wrong", "undecided"))]
    got = [
        (x["locations"][0]["physicalLocation"]["region"]["startLine"], x["ruleId"]) for x in results
    ]
    assert got == off and got


def test_sarif_with_a_bad_file_and_control_characters_validates(
    mixed_folder: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(mixed_folder)
    code, out, _ = run_cli(["check", "--format", "sarif", "."], capsys)
    assert code == 2
    log = json.loads(out)
    sarif_validator().validate(log)
    [bad] = [x for x in log["runs"][0]["results"] if x["ruleId"] == "bad-input"]
    loc = bad["locations"][0]["physicalLocation"]
    assert loc == {
        "artifactLocation": {"uri": "broken.toml"},
        "region": {"startLine": BAD_KEY_LINE},
    }
    weird = json.loads(sarif.render(synthetic("x\x07 y", "slip", line=None)))
    sarif_validator().validate(weird)
    assert weird["runs"][0]["results"][0]["message"]["text"].startswith("x\\x07 y[0, 1]: slip")


def test_a_file_error_keeps_its_path_in_every_format() -> None:
    report = Report((), (FileError("dir with space/b.toml", "dir with space/b.toml: oops"),))
    sarif_validator().validate(json.loads(sarif.render(report)))
    assert "dir%20with%20space/b.toml" in sarif.render(report)
    junit_schema().validate(junit.render(report))
    json_validator().validate(json.loads(render_json.render(report)))


def test_an_undecided_claim_in_every_format(tmp_path: Path) -> None:
    from test_pytest_plugin import SYMBOLIC_EPS

    path = tmp_path / "eps.toml"
    path.write_text(SYMBOLIC_EPS, encoding="utf-8")
    report = Report((check_file(path),))
    data = json.loads(render_json.render(report))
    json_validator().validate(data)
    # A symbolic eps leaves no decimal to give: null, and said so by the verdict.
    assert {(c["verdict"], c["exact"]) for c in data["derivations"][0]["checks"]} == {
        ("symbolic", None)
    }
    xml = junit.render(report)
    junit_schema().validate(xml)
    assert ET.fromstring(xml).find("testsuite").get("skipped") == "1"
    assert github.render(report).startswith(
        f"::warning file={github.escape_property(str(path))},line=18,"  # printed = "1.000 -1.000"
    )
    sarif_validator().validate(json.loads(sarif.render(report)))


@pytest.mark.parametrize(
    ("text", "exact", "truncated"),
    [
        ("0.25", "0.25", False),
        ("-0.33333333333333333333…", "-0.33333333333333333333", True),
        ("1.2345678901234567890…e-70", "1.2345678901234567890e-70", True),
        ("4.5e+61", "4.5e+61", False),
        ("-inf", "-inf", False),
        (None, None, False),
    ],
)
def test_exact_fields_are_parseable_decimals(
    text: str | None, exact: str | None, truncated: bool
) -> None:
    fields = render_json.exact_fields(text)
    assert fields == {"exact": exact, "exact_truncated": truncated}
    if exact is not None:
        Decimal(exact)
        decimal_schema = {"$defs": render_json.schema()["$defs"], "$ref": "#/$defs/decimal"}
        jsonschema.Draft202012Validator(decimal_schema).validate(exact)


def test_an_off_number_is_annotated_on_the_line_of_its_row(tmp_path: Path) -> None:
    text = BAD.split("[[claims]]")[0] + (
        '[[claims]]\nlabel = "rows"\nstep = "x"\nprinted = """\n\n1 0\n0 3\n"""\n'
    )
    text = text.replace('tokens = ["a"]', 'tokens = ["a", "b"]')
    path = tmp_path / "rows.toml"
    path.write_text(text, encoding="utf-8")
    row_line = text.splitlines().index("0 3") + 1
    report = Report((check_file(path),))
    # x is the identity (one-hot embeddings): only x[1, 1], printed 3, is off.
    [annotation] = github.render(report).splitlines()
    assert annotation.startswith(
        f"::error file={github.escape_property(str(path))},line={row_line},"
    )
    assert "rows[1, 1]: wrong" in annotation
    [check] = [
        c
        for c in json.loads(render_json.render(report))["derivations"][0]["checks"]
        if c["verdict"] == "wrong"
    ]
    assert check["printed_line"] == row_line
    assert check["line"] == text.splitlines().index("[[claims]]") + 1
