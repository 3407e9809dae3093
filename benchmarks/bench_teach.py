"""Benchmarks for the teaching tools, reported as ratios to ``check`` in the same run.

Run:  python benchmarks/bench_teach.py [--repeat N]

Baseline: ``symtf.checking.compare.check`` of the seed derivation (``i_love_ai.toml``).
Measured against it, in one process:

1. the answer key of every computed printed entry (343 blanks: certified
   answers, closed forms and working);
2. one ``--fresh`` draw (new weights, degenerate draws redrawn, claims printed);
3. grading a full answer file (every answer right, so no diagnosis);
4. ``whatif`` on ``l0.h0.W_Q[0,0]`` for the nine entries of ``A_1`` (closed forms,
   derivatives, certified root isolation, 121 plot samples, no files).
"""

from __future__ import annotations

import argparse
import sys
import tempfile
from fractions import Fraction
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from _timing import best_of  # noqa: E402

from symtf import spec  # noqa: E402
from symtf.checking import compare  # noqa: E402
from symtf.checking.evaluation import Evaluator  # noqa: E402
from symtf.teach import exercise as E  # noqa: E402
from symtf.teach.fresh import fresh  # noqa: E402
from symtf.teach.grade import grade  # noqa: E402
from symtf.teach.whatif import whatif  # noqa: E402

SEED = ROOT / "derivations" / "i_love_ai.toml"


def main() -> None:
    """Print each measurement as a ratio to the baseline."""
    ap = argparse.ArgumentParser()
    ap.add_argument("--repeat", type=int, default=3)
    args = ap.parse_args()
    d = spec.load(SEED)
    text = SEED.read_text()

    def baseline() -> None:
        compare.check(spec.load(SEED))

    def key_all() -> None:
        ev = Evaluator(d)
        t = ev.exact_trace()
        pool = [
            k for k in E.printed_entries(d, t) if k[0] not in E.NOT_BLANKABLE and t[k[0]].inputs
        ]
        E.key(d, ev, E.choose(d, t, count=len(pool)))

    def fresh_draw() -> None:
        fresh(text, d, 11)

    tmp = Path(tempfile.mkdtemp(prefix="symtf-bench-"))
    from symtf import cli

    cli.main(["exercise", str(SEED), "-o", str(tmp), "--blank-steps", "l0.*", "--no-pdf"])
    import tomllib

    blanks = tomllib.loads((tmp / "key.toml").read_text())["blanks"]
    (tmp / "s.toml").write_text(
        "[answers]\n" + "".join(f'{b["id"]} = "{b["answer"]}"\n' for b in blanks)
    )

    def grade_all() -> None:
        grade(tmp / "key.toml", tmp / "s.toml")

    def whatif_a1() -> None:
        whatif(SEED, "l0.h0.W_Q[0,0]=a", Fraction(-2), Fraction(2), claims=["A_1"])

    base = best_of(baseline, args.repeat)
    print(f"baseline: check(i_love_ai) = {base * 1000:.0f} ms (best of {args.repeat})")
    for name, fn in (
        ("key of all 343 computed entries", key_all),
        ("one --fresh draw", fresh_draw),
        (f"grade {len(blanks)} right answers", grade_all),
        ("whatif W_Q[0,0] on A_1 (9 entries)", whatif_a1),
    ):
        t = best_of(fn, args.repeat)
        print(f"{name:<40} {t / base:6.2f} x check")


if __name__ == "__main__":
    main()
