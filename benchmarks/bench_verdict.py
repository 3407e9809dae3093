"""Benchmarks for the verdict core, reported as ratios in the same run.

Run:  python benchmarks/bench_verdict.py [--repeat N]

1. Softmax rows whose small entry underflows every float (e^-10^8, e^-10^50)
   against the same row with an ordinary entry (e^-1): certified decimals come
   from the ball's exponent, so the ratio must stay near 1 whatever the exponent.
2. A value printed to 80 decimals (1/3 and √2 through a LayerNorm std) against
   the same value printed to 3 decimals.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Callable
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "tests"))  # tiny_derivations: the derivation texts of the tests

from _timing import best_of  # noqa: E402
from tiny_derivations import standalone  # noqa: E402

import symtf  # noqa: E402


def checker(text: str) -> Callable[[], object]:
    """Parse and check a derivation text (a fresh evaluation every call)."""
    return lambda: symtf.check(symtf.loads(text))


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--repeat", type=int, default=5)
    args = ap.parse_args()
    claim = '[[claims]]\nlabel = "p"\nstep = "op"\nprinted = "{}"\n'
    base = best_of(checker(standalone("softmax", "0 -1", claim.format("0.731 0.269"))), args.repeat)
    print("softmax(0, -X) at 3 decimals")
    print(f"  X = 1 (baseline)   {base:8.3f} s")
    for x in ("1e8", "1e50"):
        t = best_of(
            checker(standalone("softmax", f"0 -{x}", claim.format("1.000 0.000"))), args.repeat
        )
        print(f"  X = {x:<14} {t:8.3f} s   ratio {t / base:6.1f} x")
    print()
    third80 = "0." + "3" * 79 + "4"  # a slip at 80 decimals
    third3 = "0.334"
    for name, op, row, p80, p3, step in (
        ("1/3 (softmax of 0 0 0)", "softmax", "0 0 0", third80, third3, "op"),
        ("sqrt 2 (LayerNorm std)", "layernorm", "0 0 3", "1." + "4" * 80, "1.415", "op.std"),
    ):
        c = '[[claims]]\nlabel = "p"\nstep = "{}"\nindex = [0, 0]\nprinted = "{}"\n'
        t3 = best_of(checker(standalone(op, row, c.format(step, p3))), args.repeat)
        t80 = best_of(checker(standalone(op, row, c.format(step, p80))), args.repeat)
        print(f"{name}: 80 decimals {t80:.3f} s, 3 decimals {t3:.3f} s, ratio {t80 / t3:.1f} x")


if __name__ == "__main__":
    main()
