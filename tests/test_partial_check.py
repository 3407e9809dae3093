"""A check whose --timeout budget runs out writes a partial report: what was decided
stands, the claims not reached are named (undecided, saying why), the exit code is 2.

The budget's clock is injected (``time_left``), so the test does not depend on the
machine's speed: it reads 30 s left for the first claim and 1 s (below the reserve)
after it.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from symtf import spec
from symtf.checking import compare
from symtf.cli import main

TEXT = """title = "two claims"
source = "by hand"

[tensors]
x = "1 2"

[steps]
y = "x * 3"
z = "y + 1"

[[claims]]
label = "y"
step = "y"
printed = "3 6"

[[claims]]
label = "z"
step = "z"
printed = "4 7"
"""


@pytest.fixture
def two_claims(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    path = tmp_path / "two.toml"
    path.write_text(TEXT, encoding="utf-8")
    left = iter([30.0, 30.0])  # at the start (the reserve: 3 s), and at the first claim
    monkeypatch.setattr("symtf.backends.certify.time_left", lambda: next(left, 1.0))
    return path


def test_the_claims_the_budget_left_are_named_and_undecided(two_claims: Path) -> None:
    report = compare.check(spec.load(two_claims))
    assert report.not_reached == ("z",)
    first, second = report.results
    assert [c.verdict for c in first.checks] == ["exact", "exact"]  # 3·1 and 3·2, by hand
    assert [c.verdict for c in second.checks] == ["undecided", "undecided"]
    assert all("--timeout budget ran out" in c.explanation for c in second.checks)


def test_the_cli_writes_the_partial_report_and_exits_2(
    two_claims: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    code = main(["check", "--format", "json", str(two_claims)])
    out, err = capsys.readouterr()
    assert code == 2
    d = json.loads(out)["derivations"][0]
    assert d["not_reached"] == ["z"]
    assert [c["verdict"] for c in d["checks"]] == ["exact", "exact", "undecided", "undecided"]
    assert "ran out: 1 of 2 claims not checked, from 'z' on" in err
    assert "Traceback" not in err


def test_without_a_budget_nothing_is_cut(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    path = tmp_path / "two.toml"
    path.write_text(TEXT, encoding="utf-8")
    monkeypatch.setattr("symtf.backends.certify.time_left", lambda: None)
    report = compare.check(spec.load(path))
    assert report.not_reached == ()
    assert [c.verdict for c in report.checks] == ["exact"] * 4


def test_notes_and_pages_are_not_written_from_half_a_check(
    two_claims: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out = tmp_path / "notes.tex"
    code = main(["latex", "-o", str(out), str(two_claims)])
    err = capsys.readouterr().err
    assert code == 2 and not out.exists()
    assert "exceeded the time budget: 1 of 2 claims were not checked" in err


def test_a_short_budget_is_not_all_reserve(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """With 2 s left at the start, the reserve is a quarter of it (0.5 s), not 3 s: a
    file that checks in well under that is checked whole."""
    path = tmp_path / "two.toml"
    path.write_text(TEXT, encoding="utf-8")
    monkeypatch.setattr("symtf.backends.certify.time_left", lambda: 2.0)
    report = compare.check(spec.load(path))
    assert report.not_reached == ()
    assert [c.verdict for c in report.checks] == ["exact"] * 4
