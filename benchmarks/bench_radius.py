"""Where the midpoint–radius enclosures widen: the radius after each op, layer by layer.

Run:  python benchmarks/bench_radius.py [--seq N] [--d-model D] [--layers L]

On the random GPT-2-style decoders of ``bench_scale.py`` (float32 weights held
exactly), one certified midpoint–radius pass; for every node the *relative
radius* ``median(rad) / rms(mid)`` (robust to entries near 0). Printed:

1. per layer, that measure after each step of the block (``ln1`` … ``resid_post``)
   and the layer's growth factor (``resid_post`` of this layer over the previous);
2. per op of the block, the geometric mean over the layers of its growth factor
   (its output's measure over its widest input's), which names the amplifiers.

A factor near ``√n`` at a product with inner dimension ``n`` is the wrapping
effect of boxes (the hull of a box's image under a random matrix is ``√n``
times the image of any single point's error); it is the bound's price for
forgetting which way each error points, not a loose rounding bound.
"""

from __future__ import annotations

import argparse
import math
import os
import sys
from pathlib import Path

for _var in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ.setdefault(_var, "1")

import numpy as np  # noqa: E402

sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

import bench_scale as B  # noqa: E402

from symtf.backends.midrad import MidradBackend  # noqa: E402
from symtf.backends.midrad.arithmetic import MR  # noqa: E402
from symtf.graph.pipeline import run  # noqa: E402

#: The block's steps in order (head 0 stands for every head).
STEPS = (
    "ln1",
    "h0.q",
    "h0.scores",
    "h0.pattern",
    "h0.z",
    "attn_out",
    "resid_mid",
    "ln2",
    "ffn_pre",
    "ffn_act",
    "ffn_out",
    "resid_post",
)


def relative(v: MR) -> float:
    """``median(rad) / rms(mid)`` over the finite entries (``inf`` if a radius is infinite)."""
    if not np.all(np.isfinite(v.rad)):
        return math.inf
    fin = np.isfinite(v.mid)
    rms = float(np.sqrt(np.mean(v.mid[fin] ** 2))) if fin.any() else 0.0
    return float(np.median(v.rad[fin])) / rms if rms > 0 else math.inf


def measure(seq: int, d: int, layers: int) -> tuple[dict[str, float], dict[str, tuple[str, ...]]]:
    """Every node's relative radius, and its inputs, in one midpoint–radius pass."""
    w = B.random_weights(seq, d, layers)
    der = B.derivation(w, seq, d, layers)
    with MidradBackend() as xp:
        trace = run(der, xp)
    rel = {n: relative(trace.value(n)) for n in trace if isinstance(trace.value(n), MR)}
    return rel, {n: trace[n].inputs for n in trace}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--seq", type=int, default=16)
    ap.add_argument("--d-model", type=int, default=64)
    ap.add_argument("--layers", type=int, default=4)
    a = ap.parse_args()
    rel, inputs = measure(a.seq, a.d_model, a.layers)
    print(f"relative radius median(rad)/rms(mid): seq {a.seq}, d_model {a.d_model}")
    print("  layer " + " ".join(f"{s.split('.')[-1]:>10}" for s in STEPS) + "   growth")
    prev = rel["x"]
    growth: dict[str, list[float]] = {s: [] for s in STEPS}
    for li in range(a.layers):
        cells = []
        for s in STEPS:
            name = f"l{li}.{s}"
            v = rel[name]
            cells.append(f"{v:10.2e}")
            ins = [rel[i] for i in inputs[name] if i in rel and rel[i] > 0]
            if ins and math.isfinite(v) and v > 0 and max(ins) < math.inf:
                growth[s].append(v / max(ins))
        out = rel[f"l{li}.resid_post"]
        g = out / prev if prev > 0 and math.isfinite(out) else math.inf
        print(f"  {li:>5} " + " ".join(cells) + f"   {g:8.2e}")
        prev = out
    print(f"  final ln_f {rel['ln_f']:.2e}, logits {rel['logits']:.2e}, probs {rel['probs']:.2e}")
    print("growth factor of each op (geometric mean over the layers with finite radii)")
    for s in STEPS:
        gs = growth[s]
        if gs:
            gm = math.exp(sum(math.log(x) for x in gs) / len(gs))
            print(f"  {s:>12}: x{gm:8.2f}")


if __name__ == "__main__":
    main()
