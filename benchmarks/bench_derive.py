"""Benchmarks for ``symtf derive``, reported as ratios within one run.

Run:  python benchmarks/bench_derive.py [--repeat N]

1. The checks at a fixed size (exact cancellation and mpmath numerics of every
   statement) of ``softmax-jacobian`` at n = 7 and ``layernorm-jacobian`` at
   n = 6, each as a ratio to the same derivation at n = 3.
2. Checking every proof for all n of each derivation, as a ratio to the fixed-size
   checks of ``softmax-jacobian`` at n = 3.

Caches of derivatives and compiled functions are cleared before every timing,
so no run profits from the one before it.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from _timing import best_of  # noqa: E402

from symtf import derive  # noqa: E402
from symtf.derive import core  # noqa: E402


def _fresh() -> None:
    core.carried_out.cache_clear()
    core._lambdify.cache_clear()


def fixed(name: str, n: int) -> None:
    """Every statement of ``name`` checked at size ``n`` (no proofs)."""
    _fresh()
    steps = core.verify(derive.get(name), (n,))
    if not all(s.symbolic.ok and s.numeric.ok for s in steps):
        raise SystemExit(f"{name} at n = {n} was not verified")


def proofs(name: str) -> None:
    """Every proof for all n of ``name``."""
    _fresh()
    if not all(r.ok for r in derive.prove(derive.get(name))):
        raise SystemExit(f"a proof of {name} failed")


def main() -> None:
    """Print each measurement as a ratio to its baseline."""
    ap = argparse.ArgumentParser()
    ap.add_argument("--repeat", type=int, default=1)
    args = ap.parse_args()
    base = best_of(lambda: fixed("softmax-jacobian", 3), args.repeat)
    print(f"baseline: softmax-jacobian checked at n = 3: {base:.3f} s")
    for name, big in (("softmax-jacobian", 7), ("layernorm-jacobian", 6)):
        small = (
            base
            if name == "softmax-jacobian"
            else best_of(lambda name=name: fixed(name, 3), args.repeat)
        )
        large = best_of(lambda name=name, big=big: fixed(name, big), args.repeat)
        print(f"{name:22s} n = {big} / n = 3: {large / small:7.1f}×")
    for name in derive.names():
        t = best_of(lambda name=name: proofs(name), args.repeat)
        print(f"{name:22s} proofs for all n / baseline: {t / base:7.1f}×")


if __name__ == "__main__":
    main()
