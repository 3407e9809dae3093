"""What the article's own setting costs: float-format enclosures and rounded inputs, as ratios.

Run:  python benchmarks/bench_printouts.py [--repeat N]

For every bundled derivation, in the same run:

1. the certified float32 enclosure of every intermediate (:mod:`symtf.checking.framework`)
   against the plain certified ball pass (128 bits) of the same model;
2. the pass with every input as a ball over its rounding interval
   (:mod:`symtf.backends.rounded`) against the same plain ball pass;
3. ``check`` of a 4×6 float32 softmax table with ``computed_in = "float32"``
   against the same file without it.
"""

from __future__ import annotations

import argparse
import statistics
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

import numpy as np  # noqa: E402
from _timing import best_of  # noqa: E402

from symtf import spec  # noqa: E402
from symtf.backends import BallBackend  # noqa: E402
from symtf.backends.rounded import RoundedBallBackend, parse_rounded_inputs  # noqa: E402
from symtf.checking.compare import check  # noqa: E402
from symtf.checking.framework import enclose  # noqa: E402
from symtf.errors import SymtfError  # noqa: E402
from symtf.graph.pipeline import run  # noqa: E402


def _balls(d: spec.Derivation) -> None:
    with BallBackend(128) as xp:
        run(d, xp)


def bench_models(repeat: int) -> None:
    ratios_f, ratios_r = [], []
    for path in sorted((ROOT / "derivations").glob("*.toml")):
        d = spec.load(path)
        base = best_of(lambda d=d: _balls(d), repeat)
        t_f = best_of(lambda d=d: enclose(d, "float32"), repeat)
        ratios_f.append(t_f / base)
        line = f"{path.stem:<20} float32 enclosure / ball pass = {t_f / base:5.1f}"
        if d.model.architecture != "encoder-decoder":
            import tomllib

            raw = tomllib.loads(
                path.read_text(), parse_float=__import__("symtf.numbers").numbers.toml_float
            )
            inputs = parse_rounded_inputs(True, raw["model"], d.model, path.name)

            def rounded(d: spec.Derivation = d, inputs: object = inputs) -> None:
                try:
                    with RoundedBallBackend(inputs, 128, ties=True) as xp:
                        run(d, xp)
                except SymtfError:
                    pass  # a range that reaches a zero variance: timed up to that point

            t_r = best_of(rounded, repeat)
            ratios_r.append(t_r / base)
            line += f"   rounded inputs / ball pass = {t_r / base:5.1f}"
        print(line)
    print(f"median float32 enclosure / ball pass: {statistics.median(ratios_f):.1f}")
    print(f"median rounded-input pass / ball pass: {statistics.median(ratios_r):.1f}")


def bench_table(repeat: int) -> None:
    rng = np.random.default_rng(0)
    x = np.round(rng.normal(size=(4, 6)) * 2, 3)
    x32 = x.astype(np.float32)
    e = np.exp(x32 - x32.max(axis=1, keepdims=True))
    sm = e / e.sum(axis=1, keepdims=True, dtype=np.float32)
    xs = "\n".join(" ".join(f"{v:.3f}" for v in r) for r in x)
    ps = "\n".join(" ".join(f"{v:.8f}" for v in r) for r in sm)
    body = (
        '[model]\narchitecture = "none"\n[[model.standalone]]\nname = "sm"\nop = "softmax"\n'
        f'input = """\n{xs}\n"""\n[[claims]]\nlabel = "P"\nstep = "sm"\nprinted = """\n{ps}\n"""\n'
    )
    plain = spec.loads('title = "t"\n' + body)
    f32 = spec.loads('title = "t"\ncomputed_in = "float32"\n' + body)
    t_plain = best_of(lambda: check(plain), repeat)
    t_f32 = best_of(lambda: check(f32), repeat)
    print(f"float32 table: check with computed_in / without = {t_f32 / t_plain:.2f}")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--repeat", type=int, default=3)
    a = ap.parse_args()
    bench_models(a.repeat)
    bench_table(a.repeat)


if __name__ == "__main__":
    main()
