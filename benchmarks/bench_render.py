"""Benchmarks for the renderers, reported as ratios to checking the same file.

Run:  python benchmarks/bench_render.py [--repeat N]

For each bundled derivation: the time to check it (``compare.check``), then
the time to render the checked report as text, as the HTML page and as the
LaTeX notes, each as a ratio to the check in the same run. A renderer only
reads the report, so a ratio well above 1 means presentation costs more than
the exact arithmetic it presents.
"""

from __future__ import annotations

import argparse
import statistics
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from _timing import best_of  # noqa: E402

from symtf import spec  # noqa: E402
from symtf.checking import compare  # noqa: E402
from symtf.checking.report import Report  # noqa: E402
from symtf.renderers import latex, text  # noqa: E402
from symtf.renderers.html import render_html  # noqa: E402


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args()
    print(f"{'derivation':<20} {'check s':>8} {'text':>7} {'html':>7} {'latex':>7}  (× check)")
    ratios: dict[str, list[float]] = {"text": [], "html": [], "latex": []}
    for path in sorted((ROOT / "derivations").glob("*.toml")):
        d = spec.load(path)
        base = best_of(lambda d=d: compare.check(d), args.repeat)
        report = compare.check(d)
        row = {
            "text": best_of(lambda r=report: text.render(Report((r,))), args.repeat),
            "html": best_of(lambda r=report, d=d: render_html(r, d), args.repeat),
            "latex": best_of(lambda r=report, d=d: latex.document(r, d), args.repeat),
        }
        for k, v in row.items():
            ratios[k].append(v / base)
        print(
            f"{path.stem:<20} {base:8.3f} "
            + " ".join(f"{row[k] / base:7.2f}" for k in ("text", "html", "latex"))
        )
    print("median ratio:", ", ".join(f"{k} {statistics.median(v):.2f}×" for k, v in ratios.items()))


if __name__ == "__main__":
    main()
