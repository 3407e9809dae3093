"""Every bundled derivation keeps its whole JSON report, field by field.

``tests/snapshots/report_v1/`` holds ``symtf check --format json`` of every
bundled derivation, recorded before the op registry replaced the op modules.
The contract allows fields to be added, never renamed or changed silently, so
every field of every check recorded there must still have the same value. A
change made on purpose is listed in :data:`INTENDED` with its reason.

Update the snapshots deliberately with ``python tests/test_report_snapshots.py --update``.
"""

from __future__ import annotations

import contextlib
import io
import json
import sys
from pathlib import Path
from typing import Any

import pytest

from symtf.cli import main
from symtf.limits import MAX_TIMEOUT

ROOT = Path(__file__).resolve().parent.parent
SNAPDIR = ROOT / "tests" / "snapshots" / "report_v1"
SNAPSHOTS = sorted(SNAPDIR.glob("*.json"))

#: Fields whose value may change on purpose, with why: field -> reason.
INTENDED: dict[str, str] = {}


def _report(stems: list[str]) -> dict[str, dict[str, Any]]:
    paths = [f"derivations/{s}.toml" for s in stems]  # as a user names them from the checkout
    buf = io.StringIO()
    with contextlib.chdir(ROOT), contextlib.redirect_stdout(buf):
        # The time budget is a wall clock, not what this test is about: the largest there is.
        code = main(["check", "--format", "json", "--timeout", f"{MAX_TIMEOUT:g}", *paths])
    assert code in (0, 1)
    report = json.loads(buf.getvalue())
    return {Path(d["path"]).stem: d for d in report["derivations"]}


@pytest.fixture(scope="module")
def current() -> dict[str, dict[str, Any]]:
    return _report([p.stem for p in SNAPSHOTS])


def test_every_bundled_derivation_has_a_snapshot() -> None:
    bundled = {p.stem for p in (ROOT / "derivations").glob("*.toml")}
    assert bundled == {p.stem for p in SNAPSHOTS}


@pytest.mark.parametrize("snapshot", SNAPSHOTS, ids=[p.stem for p in SNAPSHOTS])
def test_report_fields_unchanged(snapshot: Path, current: dict[str, dict[str, Any]]) -> None:
    before = json.loads(snapshot.read_text(encoding="utf-8"))
    now = current[snapshot.stem]
    assert now["counts"] == before["counts"]
    assert len(now["checks"]) == len(before["checks"])
    for k, (b, n) in enumerate(zip(before["checks"], now["checks"], strict=True)):
        for field, value in b.items():
            if field in INTENDED:
                continue
            assert field in n, f"{snapshot.stem} check {k}: field {field!r} is gone"
            assert n[field] == value, (
                f"{snapshot.stem} check {k} ({b['claim']}, {b.get('index')}): "
                f"{field} {n[field]!r} != {value!r}"
            )


if __name__ == "__main__" and sys.argv[1:] == ["--update"]:
    stems = [p.stem for p in (ROOT / "derivations").glob("*.toml")]
    for stem, d in _report(stems).items():
        keep = {k: d[k] for k in ("path", "title", "counts", "checks")}
        (SNAPDIR / f"{stem}.json").write_text(
            json.dumps(keep, indent=1, ensure_ascii=False) + "\n", encoding="utf-8"
        )
