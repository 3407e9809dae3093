"""What one call of a registry op costs in the float64 backend, as a ratio to numpy in the same run.

Run:  python benchmarks/bench_registry_float.py [--repeat N] [--calls N] [--rows N] [--cols N]

The draft's search screens tens of thousands of candidate steps per article in
float64 through the registry (:mod:`symtf.ops` on
:class:`~symtf.backends.FloatBackend`), one op call per candidate on small
matrices. This times each op it builds on ``rows × cols`` float64 matrices
(``rows × rows`` attention scores) against the same computation written
directly in numpy — the baseline here, timed in the same run — and reports
CPU µs per call (median of ``--repeat`` runs of ``--calls`` calls) and the
ratio. The numpy lines are a yardstick only: symtf computes each op once, in
the registry.
"""

from __future__ import annotations

import argparse
import math
import statistics
import sys
import time
from collections.abc import Callable
from fractions import Fraction
from pathlib import Path
from typing import Any

import numpy as np

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from symtf import ops  # noqa: E402
from symtf.backends import FloatBackend  # noqa: E402
from symtf.tensor import Tensor  # noqa: E402


def _cpu_per_call(fn: Callable[[], object], calls: int, repeat: int) -> float:
    """Median CPU seconds of one call of ``fn`` over ``repeat`` runs of ``calls`` calls."""
    runs = []
    for _ in range(repeat):
        t = time.process_time()
        for _ in range(calls):
            fn()
        runs.append((time.process_time() - t) / calls)
    return statistics.median(runs)


def _cases(n: int, m: int) -> list[tuple[str, Callable[[], object], Callable[[], object]]]:
    """``(name, registry call, numpy baseline)`` for every op the draft's search builds."""
    xp = FloatBackend()
    rng = np.random.default_rng(0)
    xa, ya = rng.normal(size=(n, m)), rng.normal(size=(n, m))
    wa, sa = rng.normal(size=(m, m)), rng.normal(size=(n, n))
    row, pos = rng.normal(size=(1, m)), rng.uniform(1, 2, size=(n, m))
    x, y, w, s = (Tensor.wrap(xp, a) for a in (xa, ya, wa, sa))
    r, p = Tensor.wrap(xp, row), Tensor.wrap(xp, pos)
    mask = ops.causal_mask(xp, n=n)
    maska = np.where(np.tril(np.ones((n, n))) > 0, 0.0, -np.inf)
    eps = ops.scalar(xp.const(Fraction(1, 100_000)))
    erf = np.vectorize(math.erf, otypes=[float])

    def softmax(a: Any) -> Any:
        e = np.exp(a - np.max(a, axis=-1, keepdims=True))
        return e / np.sum(e, axis=-1, keepdims=True)

    def layernorm(a: Any) -> Any:
        mu = a.mean(axis=-1, keepdims=True)
        return (a - mu) / np.sqrt(a.var(axis=-1, keepdims=True) + 1e-5)

    masked = ops.add(xp, s, mask)
    maskeda = sa + maska
    return [
        ("matmul", lambda: ops.matmul(xp, x, w), lambda: xa @ wa),
        ("matmul x·yᵀ", lambda: ops.matmul(xp, x, ops.T(xp, y)), lambda: xa @ ya.T),
        ("add", lambda: ops.add(xp, x, y), lambda: xa + ya),
        ("add row", lambda: ops.add(xp, x, r), lambda: xa + row),
        ("sub", lambda: ops.sub(xp, x, y), lambda: xa - ya),
        ("mul", lambda: ops.mul(xp, x, y), lambda: xa * ya),
        ("div", lambda: ops.div(xp, x, p), lambda: xa / pos),
        ("div scalar", lambda: ops.div(xp, s, ops.scalar(2.0)), lambda: sa / 2.0),
        ("T", lambda: ops.T(xp, x), lambda: xa.T),
        ("sqrt", lambda: ops.sqrt(xp, p), lambda: np.sqrt(pos)),
        ("exp", lambda: ops.exp(xp, x), lambda: np.exp(xa)),
        ("relu", lambda: ops.relu(xp, x), lambda: np.maximum(xa, 0.0)),
        ("gelu", lambda: ops.gelu(xp, x), lambda: xa / 2 * (1 + erf(xa / math.sqrt(2)))),
        (
            "gelu_tanh",
            lambda: ops.gelu_tanh(xp, x),
            lambda: xa / 2 * (1 + np.tanh(math.sqrt(2 / math.pi) * (xa + 0.044715 * xa**3))),
        ),
        ("sigmoid", lambda: ops.sigmoid(xp, x), lambda: 1 / (1 + np.exp(-xa))),
        ("tanh", lambda: ops.tanh(xp, x), lambda: np.tanh(xa)),
        ("silu", lambda: ops.silu(xp, x), lambda: xa / (1 + np.exp(-xa))),
        ("softmax", lambda: ops.softmax(xp, s), lambda: softmax(sa)),
        ("softmax masked", lambda: ops.softmax(xp, masked), lambda: softmax(maskeda)),
        ("layernorm", lambda: ops.layernorm(xp, x, eps), lambda: layernorm(xa)),
        (
            "rmsnorm",
            lambda: ops.rmsnorm(xp, x, eps),
            lambda: xa / np.sqrt(np.mean(xa * xa, axis=-1, keepdims=True) + 1e-5),
        ),
        ("mean", lambda: ops.mean(xp, x, axis=-1), lambda: xa.mean(axis=-1)),
        ("var", lambda: ops.var(xp, x, axis=-1), lambda: xa.var(axis=-1)),
        ("std", lambda: ops.std(xp, x, axis=-1), lambda: xa.std(axis=-1)),
        ("sum", lambda: ops.sum_(xp, x, axis=-1), lambda: xa.sum(axis=-1)),
        ("max", lambda: ops.max_(xp, x, axis=-1), lambda: xa.max(axis=-1)),
        ("causal_mask", lambda: ops.causal_mask(xp, n=n), lambda: maska.copy()),
        ("concat", lambda: ops.concat(xp, [x, y], axis=-1), lambda: np.concatenate([xa, ya], -1)),
        (
            "index",
            lambda: ops.index(xp, x, items=[slice(0, 2), slice(1, 3)]),
            lambda: xa[0:2, 1:3],
        ),
    ]


def main(argv: list[str] | None = None) -> int:
    """Print µs per call and the ratio to numpy for each op."""
    ap = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    ap.add_argument("--repeat", type=int, default=7)
    ap.add_argument("--calls", type=int, default=2000)
    ap.add_argument("--rows", type=int, default=4)
    ap.add_argument("--cols", type=int, default=8)
    args = ap.parse_args(argv)
    cases = _cases(args.rows, args.cols)
    print(f"{args.rows} × {args.cols} float64 matrices; CPU µs per call, median of {args.repeat}")
    print(f"{'op':<16}{'registry':>10}{'numpy':>10}{'ratio':>8}")
    ratios = []
    for name, registry, baseline in cases:
        reg = _cpu_per_call(registry, args.calls, args.repeat)
        base = _cpu_per_call(baseline, args.calls, args.repeat)
        ratios.append(reg / base)
        print(f"{name:<16}{reg * 1e6:10.1f}{base * 1e6:10.1f}{reg / base:8.1f}")
    print(f"geometric mean of the ratios: {statistics.geometric_mean(ratios):.2f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
