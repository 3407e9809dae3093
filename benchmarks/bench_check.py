"""Benchmarks for ``symtf check`` and certified evaluation, reported as ratios.

Run:  python benchmarks/bench_check.py [--repeat N] [--against OTHER_CHECKOUT]

0. How many graph and node evaluations checking each bundled derivation takes.

1. Checking the bundled derivations, end to end in a fresh interpreter
   (imports included), against a bare ``python -c pass`` in the same run.
2. Certified evaluation of every intermediate of random rational decoder
   models (ball arithmetic, 128 bits) against a plain numpy float64 forward
   pass of the same model in the same run.
"""

from __future__ import annotations

import argparse
import os
import random
import resource
import statistics
import subprocess
import sys
from pathlib import Path

import numpy as np
import sympy

from symtf.checking.evaluation import Evaluator, _fit, correct_rounding, selection

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from _timing import best_of  # noqa: E402

from symtf.backends import BallBackend, ExactBackend  # noqa: E402
from symtf.graph.pipeline import run  # noqa: E402
from symtf.spec import Derivation, Head, Layer, Model  # noqa: E402


def bench_bundled(repeat: int) -> None:
    """Time ``symtf check`` on the bundled derivations, imports included."""
    check = [sys.executable, "-m", "symtf", "check"]  # as the command runs
    bare = [sys.executable, "-c", "pass"]

    def run_check() -> None:
        subprocess.run(check, capture_output=True, cwd=ROOT, check=False)

    def run_bare() -> None:
        subprocess.run(bare, capture_output=True, check=False)

    t_check = best_of(run_check, repeat)
    t_bare = best_of(run_bare, repeat)
    print("symtf check (bundled derivations, fresh interpreter, imports included)")
    print(f"  symtf check        {t_check:8.3f} s")
    print(f"  python -c pass     {t_bare:8.3f} s   (baseline)")
    print(f"  ratio              {t_check / t_bare:8.1f} x")
    print()


def _cpu_of(cmd: list[str], env: dict[str, str]) -> float:
    """CPU seconds (user + system) a child process takes.

    The child runs in the folder of the code it is given (``PYTHONPATH``): Python puts
    its working folder first on ``sys.path``, so from this checkout every child would
    import this checkout's symtf, whatever ``PYTHONPATH`` says.
    """
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    subprocess.run(cmd, capture_output=True, cwd=env.get("PYTHONPATH", ROOT), env=env, check=False)
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    return (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)


#: The two source-article derivations, held to a fraction of a bare scientific import.
ARTICLES = ("i_love_ai", "birds_build_nests")
BARE = [sys.executable, "-c", "import sympy, flint, numpy"]


def _child_env(tree: Path, cache: str) -> dict[str, str]:
    """An environment running ``tree``'s symtf, bytecode cached under ``cache`` (both trees
    alike, whatever the caller's PYTHONDONTWRITEBYTECODE)."""
    env = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
    return {**env, "PYTHONPATH": str(tree.resolve()), "PYTHONPYCACHEPREFIX": cache}


def bench_against(other: Path, repeat: int) -> None:
    """``symtf check`` of each bundled derivation, this code against another checkout's.

    Both check the same files (this tree's ``derivations/``), each file in a fresh
    interpreter; runs alternate so that a change in the machine's load falls on both.
    CPU time, not wall time, so other work on a shared machine counts less. The two
    source articles are also timed against a bare ``import sympy, flint, numpy`` in
    the same loop.
    """
    import tempfile

    code = ["-m", "symtf", "check"]  # the command as a user runs it (python -m symtf = symtf)
    files = sorted((ROOT / "derivations").glob("*.toml"))
    with tempfile.TemporaryDirectory() as cache:
        envs = {
            "this": _child_env(ROOT, f"{cache}/this"),
            "other": _child_env(other, f"{cache}/other"),
        }
        for env in envs.values():  # compile once, untimed
            subprocess.run(
                [sys.executable, *code, str(files[0])],
                capture_output=True,
                cwd=env["PYTHONPATH"],
                env=env,
            )
        print(f"symtf check, one derivation per fresh interpreter, CPU time, median of {repeat}")
        print(f"  {'derivation':30s} {'this':>8s} {str(other)[-12:]:>12s} {'ratio':>7s}")
        slower = []
        for f in files:
            this, base, bare = [], [], []
            for _ in range(repeat):
                this.append(_cpu_of([sys.executable, *code, str(f)], envs["this"]))
                base.append(_cpu_of([sys.executable, *code, str(f)], envs["other"]))
                if f.stem in ARTICLES:
                    bare.append(_cpu_of(BARE, envs["this"]))
            t, b = statistics.median(this), statistics.median(base)
            note = ""
            if f.stem in ARTICLES:
                note = (
                    f"   {t / statistics.median(bare):.2f} x a bare import of sympy, flint, numpy"
                )
            if t > b * 1.05:
                slower.append(f.stem)
            print(f"  {f.stem:30s} {t:7.2f}s {b:11.2f}s {t / b:7.2f}{note}")
        print(f"  slower than {other} by more than 5%: {', '.join(slower) or 'none'}")
    print()


def bench_evaluations() -> None:
    """How many graph and node evaluations checking each bundled derivation takes.

    A graph evaluation is one pass of the derivation's graph in one backend; a replay of
    the article's printed numbers or a convention's variant evaluates only what it
    changes and takes the rest from the pass it starts from.
    """
    from symtf.checking.compare import check
    from symtf.graph.core import reset_counts
    from symtf.spec import load

    print("graph and node evaluations per check (this tree)")
    print(
        f"  {'derivation':30s} {'graphs':>6s} {'partial':>7s} {'nodes':>6s} {'reused':>6s} "
        f"{'skipped':>7s}  graphs by backend"
    )
    for f in sorted((ROOT / "derivations").glob("*.toml")):
        d = load(f)
        reset_counts()
        check(d)
        c = reset_counts()
        full = {k.split(":")[1]: v for k, v in c.items() if k.startswith("graph:")}
        partial = sum(v for k, v in c.items() if k.startswith("replay:"))
        by = ", ".join(f"{k} {v}" for k, v in sorted(full.items()))
        print(
            f"  {f.stem:30s} {sum(full.values()):6d} {partial:7d} {c['nodes computed']:6d} "
            f"{c['nodes reused']:6d} {c['nodes skipped']:7d}  {by}"
        )
    print()


def _rand(rng: random.Random, rows: int, cols: int) -> sympy.ImmutableMatrix:
    return sympy.ImmutableMatrix(
        rows, cols, [sympy.Rational(rng.randint(-9, 9), 10) for _ in range(rows * cols)]
    )


def random_model(seq: int, d: int, layers: int, seed: int = 0) -> Derivation:
    """A random decoder with rational weights k/10; d_model 6 -> 3 heads, else 4 heads."""
    rng = random.Random(seed)
    n_heads = 3 if d % 3 == 0 and d < 16 else 4
    dh = d // n_heads
    vocab = tuple(f"t{i}" for i in range(max(seq, 8)))
    one = sympy.ImmutableMatrix(1, d, [1] * d)
    zero = sympy.ImmutableMatrix(1, d, [0] * d)
    blocks = []
    for _ in range(layers):
        heads = tuple(
            Head(_rand(rng, d, dh), _rand(rng, d, dh), _rand(rng, d, dh)) for _ in range(n_heads)
        )
        blocks.append(
            Layer(
                heads,
                _rand(rng, d, d),
                _rand(rng, d, d),
                _rand(rng, 1, d),
                _rand(rng, d, d),
                _rand(rng, 1, d),
                one,
                zero,
                one,
                zero,
            )
        )
    model = Model(
        architecture="decoder",
        d_model=d,
        n_heads=n_heads,
        d_head=dh,
        eps=sympy.Rational(1, 100000),
        vocab=vocab,
        embed=_rand(rng, len(vocab), d),
        pos=_rand(rng, seq, d),
        unembed=_rand(rng, d, len(vocab)),
        layers=tuple(blocks),
    )
    return Derivation("random", "random", "", model, tuple(range(seq)), ())


def prepare(d: Derivation) -> dict:
    """The model's weights as float64 arrays, converted once (outside the timing)."""
    m = d.model
    f = lambda a: np.array(a.tolist(), dtype=np.float64)  # noqa: E731
    return {
        "x": f(m.embed)[list(d.tokens)] + f(m.pos)[: len(d.tokens)],
        "layers": [
            (
                [(f(h.W_Q), f(h.W_K), f(h.W_V)) for h in layer.heads],
                f(layer.W_O),
                f(layer.W1),
                f(layer.b1),
                f(layer.W2),
                f(layer.b2),
            )
            for layer in m.layers
        ],
        "unembed": f(m.unembed),
        "eps": float(m.eps),
        "scale": float(np.sqrt(m.d_head)),
    }


def numpy_forward(w: dict) -> np.ndarray:
    """A plain float64 forward pass (picoGPT style), the baseline."""
    x = w["x"]
    n = x.shape[0]
    mask = np.triu(np.full((n, n), -np.inf), 1)
    eps, scale = w["eps"], w["scale"]

    def ln(v: np.ndarray) -> np.ndarray:
        mu = v.mean(-1, keepdims=True)
        return (v - mu) / np.sqrt(v.var(-1, keepdims=True) + eps)

    def softmax(s: np.ndarray) -> np.ndarray:
        e = np.exp(s - s.max(-1, keepdims=True))
        return e / e.sum(-1, keepdims=True)

    for heads, w_o, w1, b1, w2, b2 in w["layers"]:
        z = [softmax(x @ wq @ (x @ wk).T / scale + mask) @ (x @ wv) for wq, wk, wv in heads]
        y = ln(x + np.hstack(z) @ w_o)
        x = ln(y + np.maximum(y @ w1 + b1, 0) @ w2 + b2)
    return softmax(x[-1:] @ w["unembed"])


def certified(d: Derivation) -> object:
    """Every intermediate as a certified ball, 128 bits."""
    with BallBackend(128) as xp:
        return run(d, xp)


def bench_models(repeat: int) -> list[tuple[int, int, int, float, float]]:
    """Ratio table: certified evaluation / numpy float64."""
    rows = []
    print("certified evaluation of every intermediate (balls, 128 bits) vs numpy float64 forward")
    print(
        f"  {'seq':>4} {'d_model':>7} {'layers':>6} {'symtf (ms)':>11} {'numpy (ms)':>11} {'ratio':>8}"
    )
    for seq in (3, 16, 32):
        for dm in (6, 64):
            for layers in (1, 2):
                d = random_model(seq, dm, layers)
                # the balls enclose the float64 result
                probs = certified(d).value("probs")
                w = prepare(d)
                ref = numpy_forward(w)
                assert all(
                    probs[0, j].contains(ref[0, j])
                    or abs(float(probs[0, j].mid()) - ref[0, j]) < 1e-9
                    for j in range(ref.shape[1])
                )
                t_ball = best_of(lambda d=d: certified(d), repeat)
                t_np = best_of(lambda w=w: numpy_forward(w), max(repeat, 20))
                rows.append((seq, dm, layers, t_ball, t_np))
                print(
                    f"  {seq:>4} {dm:>7} {layers:>6} {t_ball * 1e3:>11.2f} {t_np * 1e3:>11.3f} {t_ball / t_np:>8.1f}"
                )
    print()
    return rows


def bench_exact(repeat: int) -> None:
    """Exact SymPy trace of the bundled article vs its ball trace (same run)."""
    from symtf.spec import load

    d = load(ROOT / "derivations" / "i_love_ai.toml")
    t_exact = best_of(lambda: run(d, ExactBackend()), repeat)
    t_ball = best_of(lambda: certified(d), repeat)
    print("i_love_ai: exact SymPy trace (one-level definitions) vs ball trace")
    print(
        f"  exact {t_exact * 1e3:8.1f} ms   balls {t_ball * 1e3:8.2f} ms   ratio {t_exact / t_ball:6.1f} x"
    )
    print()


def bench_diagnosis(repeat: int) -> None:
    """Checking with the diagnosis (replay, roots, convention search) vs without, same run.

    The bundled articles have only slips; the mutant reprints head 2 of the "I love AI"
    article without the sqrt(d_k), so the convention search has wrong numbers to explain.
    """
    import dataclasses

    from symtf.checking import compare
    from symtf.graph.conventions import switch
    from symtf.numbers import Printed, format_fixed
    from symtf.spec import load

    article = load(ROOT / "derivations" / "i_love_ai.toml")
    ev = Evaluator(switch("no-sqrt-dk").apply(article, "l0.h1"))
    claims = []
    for c in article.claims:
        if c.step is None or c.word is not None or c.reduce is not None:
            claims.append(c)
            continue
        pairs = _fit(c, selection(c, ev.exact_trace().shape(c.step)))
        new = []
        for (i, j), p in pairs:
            r = (
                None
                if p.is_neg_inf or p.is_fraction
                else correct_rounding(ev.entry(c.step, i, j), p.decimals)
            )
            new.append(p if r is None else Printed(format_fixed(r, p.decimals), r, p.decimals))
        cols = len(c.printed[0])
        claims.append(
            dataclasses.replace(
                c, printed=tuple(tuple(new[k : k + cols]) for k in range(0, len(new), cols))
            )
        )
    mutant = dataclasses.replace(
        article, claims=tuple(claims), path="i_love_ai (head 2 without sqrt d_k)"
    )
    cases = [
        load(ROOT / "derivations" / n) for n in ("i_love_ai.toml", "birds_build_nests.toml")
    ] + [mutant]
    print("check with diagnosis vs without (same derivation, same run)")
    for d in cases:
        t_with = best_of(lambda d=d: compare.check(d), repeat)
        t_without = best_of(lambda d=d: compare.check(d, explain=False), repeat)
        off = sum(c.verdict in ("slip", "wrong") for c in compare.check(d).checks)
        print(
            f"  {Path(d.path).name:<40} {off:>3} off   with {t_with:6.2f} s   without {t_without:6.2f} s"
            f"   ratio {t_with / t_without:5.1f} x"
        )
    print()


def main() -> None:
    ap = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    ap.add_argument("--repeat", type=int, default=5)
    ap.add_argument(
        "--against",
        type=Path,
        metavar="CHECKOUT",
        help="only compare checking the bundled derivations with another checkout's code "
        "(e.g. a worktree of the previous release)",
    )
    args = ap.parse_args()
    if args.against is not None:
        bench_against(args.against, args.repeat)
        bench_evaluations()
        return
    bench_evaluations()
    bench_bundled(args.repeat)
    bench_exact(args.repeat)
    bench_diagnosis(args.repeat)
    rows = bench_models(args.repeat)
    ratios = [b / n for *_, b, n in rows]
    print(f"ratio symtf/numpy: median {statistics.median(ratios):.1f} x, max {max(ratios):.1f} x")


if __name__ == "__main__":
    main()
