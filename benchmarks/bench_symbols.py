"""Symbolic weights: ``check`` with symbols, as ratios to the numeric check in the same run.

Run:  python benchmarks/bench_symbols.py [--repeat N]

Baseline: ``symtf.checking.compare.check`` of each article as bundled. Measured
against it, in one process, the same article with

(a) one symbolic entry (``i_love_ai``: head 1's ``W_Q[0, 0] = a``; ``birds_build_nests``:
    ``W_Q[0, 2] = a``), every value depending on ``a`` searched for its certified
    correct-rounding set;
(b) a whole symbolic ``W_Q`` (head 1: twelve symbols, so expressions only, no sets);
(c) ``scale = "t"`` (every head's divisor a symbol; its pole at t = 0 lies in the range).
"""

from __future__ import annotations

import argparse
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from _timing import best_of  # noqa: E402

from symtf import spec  # noqa: E402
from symtf.checking import compare  # noqa: E402

NAMES = "bcdfghkmnpqr"


def _whole(rows: list[str]) -> str:
    it = iter(NAMES)
    return "\n".join(" ".join(next(it) for _ in r.split()) for r in rows)


def variants(name: str, text: str) -> dict[str, str]:
    """The three symbolic variants of an article's text."""
    if name == "i_love_ai":
        one_old, one_new = 'W_Q = """\n1 0\n0 1\n', 'W_Q = """\na 0\n0 1\n'
        rows = ["1 0", "0 1", "0 0", "0 0", "0 0", "0 0"]
        anchor = 'mask = "causal"'
    else:
        one_old, one_new = 'W_Q = """\n0 0 1\n', 'W_Q = """\n0 0 a\n'
        rows = ["0 0 1", "0 1 1", "1 0 0", "1 1 0"]
        anchor = 'mask = "none"'
    whole_old = 'W_Q = """\n' + "\n".join(rows) + "\n"
    out = {
        "(a) one entry a": text.replace(one_old, one_new, 1),
        "(b) whole W_Q": text.replace(whole_old, 'W_Q = """\n' + _whole(rows) + "\n", 1),
        "(c) scale = t": text.replace(anchor, anchor + '\nscale = "t"', 1),
    }
    for k, v in out.items():
        assert v != text, (name, k)
    return out


def main() -> None:
    """Print each measurement as a ratio to the numeric check of the same article."""
    ap = argparse.ArgumentParser()
    ap.add_argument("--repeat", type=int, default=1)
    args = ap.parse_args()
    tmp = Path(tempfile.mkdtemp(prefix="symtf-bench-"))
    for name in ("i_love_ai", "birds_build_nests"):
        src = ROOT / "derivations" / f"{name}.toml"
        text = src.read_text(encoding="utf-8")
        base = best_of(lambda src=src: compare.check(spec.load(src)), args.repeat)
        print(f"{name}: numeric check = {base * 1000:.0f} ms (best of {args.repeat})")
        for label, variant in variants(name, text).items():
            path = tmp / f"{name}-{label[1]}.toml"
            path.write_text(variant, encoding="utf-8")
            t = best_of(lambda path=path: compare.check(spec.load(path)), args.repeat)
            print(f"  {label:<20} {t / base:7.2f} x numeric check")


if __name__ == "__main__":
    main()
