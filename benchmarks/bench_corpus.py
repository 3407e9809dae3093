"""symtf on a corpus of public articles and notebooks checked as they stand.

Run:  python benchmarks/bench_corpus.py [--slack 0] [--corpus DIR] [--json OUT.json]

The corpus (``shared/corpus`` beside the project: its articles, ``expected.json`` with
every printed value placed on its line and classed by an independent recomputation,
and its own ``score.py``) is a benchmark, not a test: most of its files state no
licence, so none is copied into the project. This script runs the corpus's
``score.py`` on this checkout's ``symtf`` (through a small launcher that puts this
tree first on the import path), once with ``--slack 40`` (a verdict may sit up to 40
lines above its number) and once with the slack asked for (0 by default: each
verdict on its number's own line), and prints the corpus's figures: printed values
that get a verdict, errors flagged, false alarms, verdicts on their own line, and the
seconds each file took (wall time: a loaded machine shows in them). Each check runs
with ``--timeout 900`` so that load does not turn a slow check into a missing one.

Exit status: 0 when the corpus was scored (whatever the figures), 2 when it is absent.
"""

from __future__ import annotations

import argparse
import json
import re
import stat
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent

LAUNCHER = """#!/bin/sh
if [ "$1" = check ]; then shift; set -- check --timeout 900 "$@"; fi
PYTHONPATH={root}${{PYTHONPATH:+:$PYTHONPATH}} exec {python} -m symtf "$@"
"""


def _find_corpus() -> Path | None:
    for base in (ROOT.parent, ROOT.parent.parent, ROOT.parent.parent.parent):
        p = base / "shared" / "corpus"
        if (p / "score.py").exists() and (p / "expected.json").exists():
            return p
    return None


def _score(corpus: Path, launcher: Path, slack: int, json_out: str | None) -> str:
    cmd = [
        sys.executable,
        str(corpus / "score.py"),
        str(launcher),
        str(corpus),
        "--slack",
        str(slack),
    ]
    if json_out:
        cmd += ["--json", json_out]
    done = subprocess.run(cmd, capture_output=True, text=True, check=False)
    return done.stdout + done.stderr


def _totals(text: str) -> dict[str, int]:
    out: dict[str, int] = {}
    m = re.search(r"auto-draft: (\d+)/(\d+) .*?, (\d+) agree, (\d+) false alarms", text)
    if m:
        out |= dict(
            zip(("checked", "values", "agree", "false_alarms"), map(int, m.groups()), strict=True)
        )
    m = re.search(r"misses \(independent slip/wrong not flagged\): (\d+)", text)
    if m:
        out["misses"] = int(m.group(1))
    m = re.search(r"on their own line: (\d+)/(\d+)", text)
    if m:
        out["on_line"], out["verdicts"] = int(m.group(1)), int(m.group(2))
    return out


def main(argv: list[str] | None = None) -> int:
    """Score the corpus twice (slack 40, and the slack asked for) and print the figures."""
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--slack", type=int, default=0, help="lines for placement (default 0)")
    ap.add_argument("--corpus", type=Path, default=None, help="the corpus folder")
    ap.add_argument("--json", default=None, help="write score.py's per-case figures here")
    a = ap.parse_args(argv)
    corpus = a.corpus or _find_corpus()
    if corpus is None or not (corpus / "score.py").exists():
        print("bench_corpus: no shared/corpus beside the project (nothing to score)")
        return 2
    off = sum(
        1
        for case in json.loads((corpus / "expected.json").read_text()).values()
        if isinstance(case, dict)
        for c in case.get("checks", [])
        if c.get("expected") in ("slip", "wrong")
    )
    with tempfile.TemporaryDirectory() as tmp:
        launcher = Path(tmp) / "symtf"
        launcher.write_text(LAUNCHER.format(root=ROOT, python=sys.executable))
        launcher.chmod(launcher.stat().st_mode | stat.S_IXUSR)
        wide = _score(corpus, launcher, 40, a.json)
        print(wide)
        placed = _score(corpus, launcher, a.slack, None) if a.slack != 40 else wide
    t, p = _totals(wide), _totals(placed)
    if not t:
        print("bench_corpus: score.py printed no totals")
        return 1
    flagged = off - t.get("misses", off)
    print(f"values with a verdict: {t['checked']}/{t['values']} ({t['checked'] / t['values']:.1%})")
    print(f"errors flagged: {flagged}/{off} ({flagged / max(off, 1):.1%})")
    print(f"false alarms: {t['false_alarms']}")
    if p.get("verdicts"):
        print(
            f"verdicts on their own line (slack {a.slack}): {p['on_line']}/{p['verdicts']} "
            f"({p['on_line'] / p['verdicts']:.1%}); values matched at slack {a.slack}: "
            f"{p['checked']}/{p['values']}"
        )
    return 0


if __name__ == "__main__":
    sys.exit(main())
