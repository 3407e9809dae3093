"""Certified evaluation at scale: symtf's midpoint–radius path against numpy float64.

Run:  python benchmarks/bench_scale.py [--repeat N] [--cap SECONDS] [--plot PATH]
          [--only SEQ,D_MODEL,LAYERS ...] [--max-bits BITS] [--exact-cap SECONDS]

All in one run, on random GPT-2-style decoders (pre-norm LayerNorm, tanh GELU,
FFN 4·d_model, learned positions, final LayerNorm, tied 64-token embedding;
3 heads at d_model 6, 4 at 64, 8 at 256, 12 at 768; float32 weights from a seed,
held as exact dyadic arrays like weights read from a file):

1. Certified evaluation of every intermediate (``MidradBackend``: float64 BLAS
   midpoints with rigorous radii) against a plain numpy float64 forward pass of
   the same model, at seq ∈ {3, 16, 64}, d_model ∈ {6, 64, 768}, layers ∈
   {1, 2, 12}: all 27 combinations (each timing is the best of ``--repeat``
   runs, of 2 when one run takes over a second).
2. Which path decides each verdict: the float64 reference of every entry of
   ``logits`` and ``probs``, of the last row of ``ln_f`` and of row 0 of each
   layer's ``attn_out`` and ``ffn_out`` is printed to 4 decimals, and each of the
   two comparisons a ``rounded`` verdict needs (against both ends of the printed
   value's rounding interval) goes the way ``symtf check`` takes it
   (``Evaluator.entry``): the midpoint–radius enclosure, then balls of what the
   step is computed from at the precisions its depth needs (up to ``--max-bits``),
   then exact values. A verdict is counted under the most expensive path either
   comparison needed; one no path decides is ``open``, with the reason (balls or
   exact values beyond the memory limit, by their own estimates; exact values
   not tried because their estimated time exceeds ``--exact-cap``). The midrad
   column is the share decided by the fast path alone.
3. Time against d_model ∈ {6, 64, 256, 768} at seq 16, 1 layer, for symtf
   (midrad), numpy float64, python-flint ``arb_mat`` at 128 bits (symtf's
   previous certified path), mpmath at 113 bits (uncertified), and naive SymPy
   (symtf's exact trace); the last three stop at the first size whose run would
   exceed ``--cap`` seconds (predicted from the previous size by the d_model²
   cost of the products). Written as a PNG plot (matplotlib).

BLAS runs on one thread for both sides (override with OPENBLAS_NUM_THREADS); times are
CPU times of the process.
"""

from __future__ import annotations

import argparse
import os
import sys
import time
from collections import Counter
from collections.abc import Callable
from fractions import Fraction
from pathlib import Path

# One BLAS thread for both sides: on a shared 2-core machine a threaded BLAS makes
# every timing depend on the neighbours' load. Set before numpy is imported.
for _var in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ.setdefault(_var, "1")

import numpy as np  # noqa: E402

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

import sympy  # noqa: E402

from symtf import limits  # noqa: E402
from symtf.backends import BallBackend, ExactBackend  # noqa: E402
from symtf.backends.certify import PRECISIONS, compare_ball  # noqa: E402
from symtf.backends.midrad import MidradBackend  # noqa: E402
from symtf.backends.signs import exact_sign  # noqa: E402
from symtf.checking.evaluation import DECIDED_BY, Evaluator, Quantity  # noqa: E402
from symtf.errors import Undecided  # noqa: E402
from symtf.graph.pipeline import _GRAPHS, run  # noqa: E402
from symtf.spec import Derivation, Head, Layer, Model  # noqa: E402
from symtf.spec.weights import FileMatrix  # noqa: E402

VOCAB = 64
EPS = 1e-5


def best_of(fn: Callable[[], object], repeat: int) -> float:
    """The fastest of ``repeat`` timings (2 when a run takes over a second), in seconds.

    CPU time of this process: with one BLAS thread it is the work done, whatever the
    neighbours' load on a shared machine does to the wall clock.
    """
    times: list[float] = []
    for _ in range(repeat):
        t = time.process_time()
        fn()
        times.append(time.process_time() - t)
        if times[-1] > 1.0 and len(times) >= 2:
            break
    return min(times)


def _heads(d: int) -> int:
    return 3 if d < 16 else 4 if d < 256 else 8 if d == 256 else 12


def random_weights(seq: int, d: int, layers: int, seed: int = 0) -> dict[str, np.ndarray]:
    """Float32 weights by canonical name (integers scaled, so every numpy draws the same)."""
    rng = np.random.default_rng(seed)

    def draw(shape: tuple[int, ...], scale: float) -> np.ndarray:
        k = rng.integers(-(2**15), 2**15, size=shape)
        return (k * (scale / 2**15)).astype(np.float32).astype(np.float64)

    h = _heads(d)
    dh = d // h
    w = {
        "embed": draw((VOCAB, d), 0.3),
        "pos": draw((seq, d), 0.05),
        "lnf_gamma": 1 + draw((1, d), 0.1),
        "lnf_beta": draw((1, d), 0.05),
    }
    s = 1.7 / np.sqrt(d)  # keeps activations of order 1 at every width
    for li in range(layers):
        p = f"l{li}."
        for hi in range(h):
            for n in ("W_Q", "W_K", "W_V"):
                w[f"{p}h{hi}.{n}"] = draw((d, dh), s)
        w[p + "W_O"] = draw((d, d), s)
        w[p + "b_O"] = draw((1, d), 0.02)
        w[p + "W1"] = draw((d, 4 * d), s)
        w[p + "b1"] = draw((1, 4 * d), 0.05)
        w[p + "W2"] = draw((4 * d, d), s / 2)
        w[p + "b2"] = draw((1, d), 0.02)
        for k in ("ln1", "ln2"):
            w[f"{p}{k}_gamma"] = 1 + draw((1, d), 0.1)
            w[f"{p}{k}_beta"] = draw((1, d), 0.05)
    return w


def derivation(w: dict[str, np.ndarray], seq: int, d: int, layers: int) -> Derivation:
    """The same model as a symtf derivation, its weights held as exact float arrays."""
    h = _heads(d)
    f = {k: FileMatrix(v, k) for k, v in w.items()}
    blocks = []
    for li in range(layers):
        p = f"l{li}."
        heads = tuple(
            Head(f[f"{p}h{hi}.W_Q"], f[f"{p}h{hi}.W_K"], f[f"{p}h{hi}.W_V"]) for hi in range(h)
        )
        blocks.append(
            Layer(
                heads,
                f[p + "W_O"],
                f[p + "W1"],
                f[p + "b1"],
                f[p + "W2"],
                f[p + "b2"],
                f[p + "ln1_gamma"],
                f[p + "ln1_beta"],
                f[p + "ln2_gamma"],
                f[p + "ln2_beta"],
                b_O=f[p + "b_O"],
            )
        )
    from sympy import Rational

    model = Model(
        architecture="decoder",
        d_model=d,
        n_heads=h,
        d_head=d // h,
        norm="pre",
        eps=Rational(1, 100000),
        activation="gelu_tanh",
        vocab=tuple(f"t{i}" for i in range(VOCAB)),
        embed=f["embed"],
        pos=f["pos"],
        unembed=f["embed"].T,
        layers=tuple(blocks),
        positional="learned",
        final_norm=True,
        lnf_gamma=f["lnf_gamma"],
        lnf_beta=f["lnf_beta"],
        tied=True,
    )
    tokens = tuple(int(t) for t in np.random.default_rng(seq).integers(0, VOCAB, size=seq))
    return Derivation("random", "random", "", model, tokens, ())


def numpy_forward(w: dict[str, np.ndarray], tokens: tuple[int, ...], layers: int, d: int) -> dict:
    """A plain float64 forward pass (picoGPT style) of the same model: the baseline."""
    h = _heads(d)
    dh = d // h
    n = len(tokens)
    out: dict[str, np.ndarray] = {}

    def ln(x: np.ndarray, g: np.ndarray, b: np.ndarray) -> np.ndarray:
        mu = x.mean(-1, keepdims=True)
        return (x - mu) / np.sqrt(x.var(-1, keepdims=True) + EPS) * g + b

    def softmax(s: np.ndarray) -> np.ndarray:
        e = np.exp(s - s.max(-1, keepdims=True))
        return e / e.sum(-1, keepdims=True)

    mask = np.triu(np.full((n, n), -np.inf), 1)
    x = w["embed"][list(tokens)] + w["pos"][:n]
    for li in range(layers):
        p = f"l{li}."
        y = ln(x, w[p + "ln1_gamma"], w[p + "ln1_beta"])
        z = [
            softmax((y @ w[f"{p}h{i}.W_Q"]) @ (y @ w[f"{p}h{i}.W_K"]).T / np.sqrt(dh) + mask)
            @ (y @ w[f"{p}h{i}.W_V"])
            for i in range(h)
        ]
        attn = np.hstack(z) @ w[p + "W_O"] + w[p + "b_O"]
        x = x + attn
        y = ln(x, w[p + "ln2_gamma"], w[p + "ln2_beta"])
        a = y @ w[p + "W1"] + w[p + "b1"]
        a = 0.5 * a * (1 + np.tanh(np.sqrt(2 / np.pi) * (a + 0.044715 * a**3)))
        ffn = a @ w[p + "W2"] + w[p + "b2"]
        x = x + ffn
        out[p + "attn_out"], out[p + "ffn_out"] = attn, ffn
    lnf = ln(x, w["lnf_gamma"], w["lnf_beta"])
    logits = lnf[-1:] @ w["embed"].T
    out.update(ln_f=lnf, logits=logits, probs=softmax(logits))
    return out


def certified(d: Derivation) -> object:
    """Every intermediate certified: midrad, escalating to arb_mat balls when it cannot decide.

    (A ReLU or an argmax undecided in midpoint–radius ends that trace, as in ``symtf check``,
    which then takes its balls from arb_mat at 128 bits and up.)
    """
    try:
        with MidradBackend() as xp:
            return run(d, xp)
    except Undecided:
        for prec in (128, 256, 512, 1024):
            try:
                with BallBackend(prec) as xp:
                    return run(d, xp)
            except Undecided:
                continue
        raise


def _picks(ref: dict, layers: int) -> list[tuple[str, int, int]]:
    """The printed entries of the verdict count (see the module docstring)."""
    picks: list[tuple[str, int, int]] = []
    for name in ("logits", "probs"):
        picks += [(name, 0, j) for j in range(ref[name].shape[1])]
    last = ref["ln_f"].shape[0] - 1
    picks += [("ln_f", last, j) for j in range(ref["ln_f"].shape[1])]
    for li in range(layers):
        for s in (f"l{li}.attn_out", f"l{li}.ffn_out"):
            picks += [(s, 0, j) for j in range(ref[s].shape[1])]
    return picks


def _sign(q: Quantity, b: Fraction, max_bits: int, exact: bool) -> tuple[str, str, int | None]:
    """The sign of ``value − b`` and the path that decides it: ``(path, "", sign)``, or
    ``("open", why, None)``.

    The order of ``Quantity.locate``: midrad, balls from the precision the step's depth
    needs (at most ``max_bits``), exact values; ``exact`` False stops before them.
    """
    x = q.fast_ball()
    c = compare_ball(x, b) if x is not None else None
    if c is not None:
        return "midrad", "", c
    first = q.first_precision()
    for prec in PRECISIONS:
        if first <= prec <= max_bits:
            x = q.ball(prec)
            c = compare_ball(x, b) if x is not None else None
            if c is not None:
                return f"arb{prec}", "", c
    if not exact:
        return "open", "exact values not tried (estimated time over --exact-cap)", None
    try:
        e, xp = q.exact()
        c = exact_sign(e - sympy.Rational(b.numerator, b.denominator), xp)
    except Undecided as err:  # ExactRefused: balls and exact values out of reach
        return "open", str(err), None
    return ("exact", "", c) if c is not None else ("open", "exact algebra could not decide", None)


def _reason(why: str) -> str:
    """A short name for why a verdict stayed open."""
    balls = "balls beyond the memory limit" if "balls are out of reach" in why else ""
    if "exact value is out of reach" in why:
        exact = "exact values beyond the memory limit"
    elif "--exact-cap" in why:
        exact = "exact values not tried (over --exact-cap)"
    else:
        return why
    return f"{balls}, {exact}" if balls else f"balls undecided, {exact}"


#: The first open verdict of each reason, by configuration: its step, entry and full reason.
EXAMPLES: dict[tuple[int, int, int], dict[str, str]] = {}


def escalate(
    d: Derivation, ref: dict, layers: int, max_bits: int, exact_cap: float
) -> tuple[Counter[str], Counter[str], int]:
    """Each printed verdict's deciding path as ``symtf check`` takes it (module docstring).

    Returns:
        The count of verdicts by path (``midrad``, ``arb128`` … ``exact``, ``open``), of
        the open ones by reason, and how many decided verdicts found the 4-decimal float64
        print misrounded (the true value outside its rounding interval).
    """
    ev = Evaluator(d)
    exact = ev.exact_refused or limits.estimate(d.model, d.tokens)[0].seconds <= exact_cap
    paths: Counter[str] = Counter()
    reasons: Counter[str] = Counter()
    misrounded = 0
    half = Fraction(1, 20000)
    examples = EXAMPLES.setdefault((len(d.tokens), d.model.d_model, layers), {})
    for step, i, j in _picks(ref, layers):
        p = Fraction(round(float(ref[step][i, j]) * 10**4), 10**4)
        q = ev.entry(step, i, j)
        lo = _sign(q, p - half, max_bits, exact)
        hi = _sign(q, p + half, max_bits, exact)
        why = lo[1] or hi[1]
        if why:
            paths["open"] += 1
            if step in ev.ball_refusals and "balls" not in why:  # exact values not tried
                why = f"{ev.ball_refusals[step]}; {why}"
            reasons[_reason(why)] += 1
            examples.setdefault(_reason(why), f"{step}[{i}, {j}]: {why}")
            continue
        paths[max(lo[0], hi[0], key=DECIDED_BY.index)] += 1
        if (lo[2], hi[2]) != (1, -1):
            misrounded += 1
    return paths, reasons, misrounded


def configurations(only: list[tuple[int, int, int]] | None) -> list[tuple[int, int, int]]:
    """The 27 (seq, d_model, layers) of the grid, or the ``--only`` ones."""
    grid = [(s, dm, n) for s in (3, 16, 64) for dm in (6, 64, 768) for n in (1, 2, 12)]
    return only if only else grid


def bench_grid(
    repeat: int,
    max_bits: int = PRECISIONS[-1],
    exact_cap: float = 60.0,
    only: list[tuple[int, int, int]] | None = None,
) -> list[tuple]:
    print("certified evaluation (midrad, every intermediate) vs numpy float64, same run;")
    print(
        f"then each 4-decimal verdict by the path that decides it (balls up to {max_bits} bits,"
        f" exact values if estimated under {exact_cap:g} s)"
    )
    print(
        f"  {'seq':>4} {'d_model':>7} {'layers':>6} {'symtf ms':>10} {'numpy ms':>10} "
        f"{'ratio':>7} {'verdicts':>8} {'midrad':>7} {'balls':>7} {'exact':>6} {'open':>7} "
        f"{'escalation s':>12}"
    )
    rows = []
    reasons: Counter[str] = Counter()
    for seq, dm, layers in configurations(only):
        w = random_weights(seq, dm, layers)
        d = derivation(w, seq, dm, layers)
        certified(d)  # also warms the caches of |W|
        ref = numpy_forward(w, d.tokens, layers, dm)
        t_s = best_of(lambda d=d: certified(d), repeat)
        t_n = best_of(
            lambda w=w, d=d, L=layers, dm=dm: numpy_forward(w, d.tokens, L, dm),
            max(repeat, 10),
        )
        t0 = time.process_time()
        paths, why, misrounded = escalate(d, ref, layers, max_bits, exact_cap)
        t_e = time.process_time() - t0
        reasons.update(why)
        total = sum(paths.values())
        balls = sum(v for k, v in paths.items() if k.startswith("arb"))

        def pct(n: int, total: int = total) -> str:
            return f"{100 * n / total:6.1f}%"

        rows.append((seq, dm, layers, t_s, t_n, paths["midrad"], total, paths, t_e))
        print(
            f"  {seq:>4} {dm:>7} {layers:>6} {t_s * 1e3:>10.2f} {t_n * 1e3:>10.2f} "
            f"{t_s / t_n:>7.1f} {total:>8} {pct(paths['midrad'])} {pct(balls)} "
            f"{pct(paths['exact']):>6} {pct(paths['open'])} {t_e:>12.1f}"
            + (f"  ({misrounded} float64 prints misrounded)" if misrounded else ""),
            flush=True,
        )
        del d, w, ref
        _GRAPHS.clear()  # the built graphs pin each model's weights and their balls
    for why, n in reasons.most_common():
        print(f"  open: {n} verdicts: {why}")
    for config, found in EXAMPLES.items():
        for text in found.values():
            print(f"  e.g. (seq, d_model, layers) = {config}: {text}")
    print()
    return rows


def mpmath_forward(w: dict[str, np.ndarray], tokens: tuple[int, ...], d: int) -> object:
    """The same one-layer pass in mpmath at 113 bits (uncertified), pure Python."""
    import mpmath

    mpmath.mp.prec = 113
    h = _heads(d)
    dh = d // h

    def M(a: np.ndarray) -> mpmath.matrix:
        return mpmath.matrix(a.tolist())

    def ln(x: mpmath.matrix, g: np.ndarray, b: np.ndarray) -> mpmath.matrix:
        out = mpmath.matrix(x.rows, x.cols)
        for i in range(x.rows):
            row = [x[i, j] for j in range(x.cols)]
            mu = mpmath.fsum(row) / x.cols
            var = mpmath.fsum((v - mu) ** 2 for v in row) / x.cols
            sd = mpmath.sqrt(var + mpmath.mpf(1) / 100000)
            for j in range(x.cols):
                out[i, j] = (row[j] - mu) / sd * g[0, j] + b[0, j]
        return out

    def softmax_rows(s: mpmath.matrix) -> mpmath.matrix:
        out = mpmath.matrix(s.rows, s.cols)
        for i in range(s.rows):
            e = [mpmath.exp(s[i, j]) if j <= i else mpmath.mpf(0) for j in range(s.cols)]
            tot = mpmath.fsum(e)
            for j in range(s.cols):
                out[i, j] = e[j] / tot
        return out

    x = M(w["embed"][list(tokens)] + w["pos"][: len(tokens)])
    y = ln(x, w["l0.ln1_gamma"], w["l0.ln1_beta"])
    zs = []
    for i in range(h):
        q, k, v = (y * M(w[f"l0.h{i}.{n}"]) for n in ("W_Q", "W_K", "W_V"))
        a = softmax_rows(q * k.T / mpmath.sqrt(dh))
        zs.append(a * v)
    cat = mpmath.matrix(x.rows, d)
    for hi, z in enumerate(zs):
        for r in range(x.rows):
            for c in range(dh):
                cat[r, hi * dh + c] = z[r, c]
    x = x + cat * M(w["l0.W_O"])
    y = ln(x, w["l0.ln2_gamma"], w["l0.ln2_beta"])
    a = y * M(w["l0.W1"])
    k = mpmath.sqrt(2 / mpmath.pi)
    for r in range(a.rows):
        for c in range(a.cols):
            t = a[r, c]
            a[r, c] = t / 2 * (1 + mpmath.tanh(k * (t + mpmath.mpf(44715) / 10**6 * t**3)))
    return x + a * M(w["l0.W2"])


def bench_plot(repeat: int, cap: float, plot: Path) -> None:
    sizes = (6, 64, 256, 768)
    seq = 16
    names = (
        "symtf (midrad)",
        "numpy float64",
        "arb_mat 128 bits",
        "mpmath 113 bits",
        "SymPy exact",
    )
    times: dict[str, list[float | None]] = {n: [] for n in names}
    last: dict[str, tuple[int, float]] = {}
    print(f"time against d_model at seq {seq}, 1 layer (cap {cap:g} s for the slow ones)")
    for dm in sizes:
        w = random_weights(seq, dm, 1)
        d = derivation(w, seq, dm, 1)
        certified(d)

        def ball(d: Derivation = d) -> object:
            with BallBackend(128) as xp:
                return run(d, xp)

        runs = {
            "symtf (midrad)": (lambda d=d: certified(d), repeat),
            "numpy float64": (lambda w=w, d=d, dm=dm: numpy_forward(w, d.tokens, 1, dm), 10),
            "arb_mat 128 bits": (ball, 1),
            "mpmath 113 bits": (lambda w=w, d=d, dm=dm: mpmath_forward(w, d.tokens, dm), 1),
            "SymPy exact": (lambda d=d: run(d, ExactBackend()), 1),
        }
        for name, (fn, rep) in runs.items():
            prev = last.get(name)
            if prev is not None and prev[1] * (dm / prev[0]) ** 2 > cap:
                times[name].append(None)
                continue
            if name == "SymPy exact" and prev is None and dm > 6:
                times[name].append(None)
                continue
            t = best_of(fn, rep)
            times[name].append(t)
            last[name] = (dm, t)
        shown = "  ".join(
            f"{n.split()[0]} {'>cap' if times[n][-1] is None else f'{times[n][-1] * 1e3:.1f} ms'}"
            for n in names
        )
        print(f"  d_model {dm:>4}: {shown}", flush=True)
    print()
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(7, 4.5))
    for name, marker in zip(names, "o^sDv", strict=True):
        pts = [(s, t) for s, t in zip(sizes, times[name], strict=True) if t is not None]
        if pts:
            ax.plot(*zip(*pts, strict=True), marker=marker, label=name)
    ax.axhline(cap, color="grey", linestyle=":", linewidth=1)
    ax.text(sizes[0], cap * 1.15, f"cap {cap:g} s", color="grey", fontsize=8)
    ax.set_xscale("log")
    ax.set_yscale("log")
    ax.set_xticks(sizes, [str(s) for s in sizes])
    ax.set_xlabel("d_model (seq 16, 1 layer, FFN 4·d_model)")
    ax.set_ylabel("time for every intermediate (s)")
    ax.set_title("symtf: certified forward pass vs float and exact baselines")
    ax.legend(fontsize=8)
    fig.tight_layout()
    plot.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(plot, dpi=120)
    print(f"plot written to {plot}")


def main() -> None:
    ap = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    ap.add_argument("--repeat", type=int, default=5)
    ap.add_argument("--cap", type=float, default=60.0, help="time cap for the slow baselines")
    ap.add_argument(
        "--plot", type=Path, default=ROOT / "benchmarks" / "scale.png", help="PNG to write"
    )
    ap.add_argument(
        "--only",
        type=_config,
        action="append",
        metavar="SEQ,D_MODEL,LAYERS",
        help="run this configuration of the grid (repeatable), and skip the plot",
    )
    ap.add_argument(
        "--max-bits",
        type=int,
        default=PRECISIONS[-1],
        choices=PRECISIONS,
        help="highest ball precision a verdict escalates to (default: all)",
    )
    ap.add_argument(
        "--exact-cap",
        type=float,
        default=60.0,
        help="try exact values only for models whose exact pass is estimated under SECONDS",
    )
    args = ap.parse_args()
    t0 = time.perf_counter()
    rows = bench_grid(args.repeat, args.max_bits, args.exact_cap, args.only)
    for key in ((16, 64, 2), (16, 768, 1), (64, 768, 2)):
        r = next((r for r in rows if r[:3] == key), None)
        if r is not None:
            print(f"  ratio at (seq, d_model, layers) = {key}: {r[3] / r[4]:.1f} x")
    total = sum(r[6] for r in rows)
    by: Counter[str] = Counter()
    for r in rows:
        by.update(r[7])
    shares = ", ".join(f"{k} {by[k]}" for k in (*DECIDED_BY, "open") if by[k])
    print(f"  verdicts by deciding path, {len(rows)} configurations: {shares} (of {total})")
    print(f"  grid wall time {time.perf_counter() - t0:.0f} s")
    print()
    if not args.only:
        bench_plot(args.repeat, args.cap, args.plot)


def _config(text: str) -> tuple[int, int, int]:
    """``16,768,12`` -> (16, 768, 12)."""
    try:
        seq, dm, layers = (int(x) for x in text.split(","))
    except ValueError:
        raise argparse.ArgumentTypeError(
            f"expected SEQ,D_MODEL,LAYERS such as 16,768,12, found {text!r}"
        ) from None
    if dm not in (6, 64, 256, 768) or min(seq, layers) < 1:
        raise argparse.ArgumentTypeError(
            f"expected d_model 6, 64, 256 or 768 and positive seq and layers, found {text!r}"
        )
    return seq, dm, layers


if __name__ == "__main__":
    main()
