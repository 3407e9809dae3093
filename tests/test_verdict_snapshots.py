"""Every bundled derivation of 0.1 keeps its JSON verdicts, causes and exact values.

The snapshots in ``tests/snapshots/verdicts_v0_1/`` were recorded with
``symtf check --format json`` before the step graph existed; the graph must not
change a verdict, a cause, a convention, a root, or a digit of an exact value.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from symtf.cli import main

ROOT = Path(__file__).resolve().parent.parent
SNAPSHOTS = sorted((ROOT / "tests" / "snapshots" / "verdicts_v0_1").glob("*.json"))
FIELDS = ("claim", "step", "index", "printed", "verdict", "cause", "convention", "root")


def _digits_agree(a: str | None, b: str | None) -> bool:
    """Whether two certified decimals agree on the digits both have (``…`` marks a cut)."""
    if a is None or b is None:
        return a == b
    cut_a, cut_b = a.endswith("…"), b.endswith("…")
    a, b = a.rstrip("…"), b.rstrip("…")
    if not cut_a and not cut_b:
        return a == b
    n = min(len(a), len(b))
    if (cut_a and len(a) == n) or (cut_b and len(b) == n):
        # a cut string is a truncation: the other must start with it
        short, long_ = (a, b) if len(a) <= len(b) else (b, a)
        return long_.startswith(short)
    return a[:n] == b[:n]


def test_digits_agree_can_fail() -> None:
    assert _digits_agree("0.1234…", "0.123456…")
    assert not _digits_agree("0.1235…", "0.123456…")
    assert not _digits_agree("0.5", "0.50001")


@pytest.fixture(scope="module")
def current(tmp_path_factory: pytest.TempPathFactory) -> dict[str, list[dict]]:
    import contextlib
    import io

    paths = [str(ROOT / "derivations" / (p.stem + ".toml")) for p in SNAPSHOTS]
    buf = io.StringIO()
    with contextlib.redirect_stdout(buf):
        code = main(["check", "--format", "json", *paths])
    assert code in (0, 1)
    report = json.loads(buf.getvalue())
    return {Path(d["path"]).stem: d["checks"] for d in report["derivations"]}


# Changes made on purpose since 0.1, each with its reason: (file, claim, index) -> new fields.
INTENDED: dict[tuple[str, str, tuple[int, ...]], dict[str, str]] = {
    # q1·k1 = sin²1 + cos²1 + 0.75 = 1.75 exactly: the trig-aware zero test now proves it,
    # so the printed 1.75 is exact (0.1 could only say "rounded", with no exact string).
    ("rope_toy", "same position: the rotation cancels (q1 . k1 = 0 + 1 + 0.25 + 0.5)", (1, 1)): {
        "verdict": "exact",
        "exact": "1.75",
    },
    ("rope_toy", "scores", (1, 1)): {"verdict": "exact", "exact": "1.75"},
    ("rope_toy", "scaled by sqrt(4) = 2, masked", (1, 1)): {"verdict": "exact", "exact": "0.875"},
}


def test_intended_changes_name_real_checks() -> None:
    for stem, claim, index in INTENDED:
        before = json.loads(
            (ROOT / "tests" / "snapshots" / "verdicts_v0_1" / f"{stem}.json").read_text()
        )
        assert any(c["claim"] == claim and tuple(c["index"]) == index for c in before["checks"])


@pytest.mark.parametrize("snapshot", SNAPSHOTS, ids=[p.stem for p in SNAPSHOTS])
def test_bundled_verdicts_unchanged(snapshot: Path, current: dict[str, list[dict]]) -> None:
    before = json.loads(snapshot.read_text())["checks"]
    now = current[snapshot.stem]
    assert len(now) == len(before), f"{snapshot.stem}: {len(now)} checks, {len(before)} before"
    for k, (b, n) in enumerate(zip(before, now, strict=True)):
        change = INTENDED.get((snapshot.stem, b["claim"], tuple(b["index"] or ())))
        if change is not None:
            b = {**b, **change}
        for f in FIELDS:
            assert n.get(f) == b.get(f), (
                f"{snapshot.stem} check {k} ({b['claim']}): {f} {n.get(f)!r} != {b.get(f)!r}"
            )
        assert _digits_agree(n.get("exact"), b.get("exact")), (
            f"{snapshot.stem} check {k} ({b['claim']}): exact {n.get('exact')} != {b.get('exact')}"
        )
