"""Escalating only what is undecided, against escalating the whole trace, in one run.

Run:  python benchmarks/bench_escalation.py [--d-model D] [--layers L] [--step NAME]

On a random GPT-2-style decoder of ``bench_scale.py`` (seq 16), the row 0 of
``--step`` (default ``l1.ffn_out``) is printed to 4 decimals from a numpy float64
pass and checked: once as ``symtf check`` does (a number midpoint–radius leaves open
goes to balls with only the nodes it is computed from), once with every ball pass
over the whole model (the evaluator's full ``ball_trace``), as escalation worked
before (a failed precision still moves on to the next rather than to exact values,
without which the whole-trace run of the default builds a SymPy trace for over 10 min).
Both print their wall time, verdicts and the paths that decided them.
"""

from __future__ import annotations

import argparse
import dataclasses
import os
import sys
import time
from collections import Counter
from pathlib import Path

for _var in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ.setdefault(_var, "1")

sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

import bench_scale as B  # noqa: E402

from symtf.checking import compare  # noqa: E402
from symtf.checking.evaluation import Evaluator  # noqa: E402
from symtf.numbers import parse_printed  # noqa: E402
from symtf.spec import Claim  # noqa: E402


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--d-model", type=int, default=64)
    ap.add_argument("--layers", type=int, default=12)
    ap.add_argument("--step", default="l1.ffn_out")
    a = ap.parse_args()
    seq = 16
    w = B.random_weights(seq, a.d_model, a.layers)
    d = B.derivation(w, seq, a.d_model, a.layers)
    ref = B.numpy_forward(w, d.tokens, a.layers, a.d_model)
    printed = tuple(parse_printed(f"{v:.4f}") for v in ref[a.step][0])
    claim = Claim("row 0", "bench: claims[0]", a.step, printed=(printed,), row=0)
    d = dataclasses.replace(d, claims=(claim,))
    own = Evaluator.ball_trace_of
    print(f"seq {seq}, d_model {a.d_model}, {a.layers} layers: row 0 of {a.step} to 4 decimals")
    for how in ("only what is undecided", "the whole trace"):
        if how == "the whole trace":
            Evaluator.ball_trace_of = lambda self, prec, step: self.ball_trace(prec)  # type: ignore[method-assign]
        t = time.perf_counter()
        report = compare.check(d, explain=False)
        el = time.perf_counter() - t
        Evaluator.ball_trace_of = own  # type: ignore[method-assign]
        checks = [c for r in report.results for c in r.checks]
        verdicts = Counter(c.verdict for c in checks)
        paths = Counter(c.extra.get("decided_by") for c in checks)
        print(f"  {how:>24}: {el:8.2f} s  {dict(verdicts)}  decided by {dict(paths)}", flush=True)


if __name__ == "__main__":
    main()
