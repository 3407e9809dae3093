"""Generate the GPT-2-sized worked example: random float32 weights and printed activations.

Run:  python examples/gpt2_scale/make_gpt2_scale.py [--out DIR]

Writes ``DIR/gpt2_scale.npz`` (float32 weights under symtf's canonical names,
about 28 MB, so it is generated rather than shipped) and ``DIR/gpt2_scale.toml``
(the derivation; the copy in this folder is what the script writes). Default
``DIR`` is this folder.

The model is one GPT-2 block: d_model 768, 12 heads of 64, FFN 3072 with the tanh
GELU, pre-norm LayerNorm (ε = 10⁻⁵), learned positions, a final LayerNorm and
logits through the tied embedding, on 16 tokens of a 64-token vocabulary. The
weights come from a fixed seed (integers scaled to float32, so every numpy
version draws the same numbers).

The printed numbers come from an independent numpy float64 forward pass (not
from symtf), rounded to 4 decimals (probabilities to 6). An entry whose float64 value is within 10⁻⁹ of a rounding
boundary is never printed, since float64 could round it either way. Two numbers
are printed off on purpose: ``l0.attn_out[2, 5]`` by 7 units in the last place
(``wrong``) and ``l0.ffn_out[9, 40]`` as the other neighbour of its rounding, less
than one unit from the exact value (``slip``).
"""

from __future__ import annotations

import argparse
from decimal import ROUND_HALF_UP, Decimal
from pathlib import Path

import numpy as np

SEED = 2026
SEQ, D, HEADS, D_FF, VOCAB = 16, 768, 12, 3072, 64
DH = D // HEADS
EPS = 1e-5
HERE = Path(__file__).resolve().parent


def _draw(rng: np.random.Generator, shape: tuple[int, ...], scale: float) -> np.ndarray:
    """Float32 weights ``k/2^15 · scale`` for uniform integers k: the same on every numpy."""
    k = rng.integers(-(2**15), 2**15, size=shape)
    return (k.astype(np.float64) * (scale / 2**15)).astype(np.float32)


def weights(seed: int = SEED) -> dict[str, np.ndarray]:
    """The model's float32 weights, by canonical name."""
    rng = np.random.default_rng(seed)
    w: dict[str, np.ndarray] = {
        "embed": _draw(rng, (VOCAB, D), 0.1),
        "pos": _draw(rng, (SEQ, D), 0.02),
        "lnf_gamma": 1 + _draw(rng, (D,), 0.1),
        "lnf_beta": _draw(rng, (D,), 0.05),
    }
    for h in range(HEADS):
        for name, scale in (("W_Q", 0.12), ("W_K", 0.12), ("W_V", 0.05)):
            w[f"l0.h{h}.{name}"] = _draw(rng, (D, DH), scale)
        for name in ("b_Q", "b_K", "b_V"):
            w[f"l0.h{h}.{name}"] = _draw(rng, (DH,), 0.02)
    w["l0.W_O"] = _draw(rng, (D, D), 0.05)
    w["l0.b_O"] = _draw(rng, (D,), 0.02)
    w["l0.W1"] = _draw(rng, (D, D_FF), 0.06)
    w["l0.b1"] = _draw(rng, (D_FF,), 0.05)
    w["l0.W2"] = _draw(rng, (D_FF, D), 0.03)
    w["l0.b2"] = _draw(rng, (D,), 0.02)
    for k in ("ln1", "ln2"):
        w[f"l0.{k}_gamma"] = 1 + _draw(rng, (D,), 0.1)
        w[f"l0.{k}_beta"] = _draw(rng, (D,), 0.05)
    return w


def tokens(seed: int = SEED) -> list[int]:
    return [int(t) for t in np.random.default_rng(seed + 1).integers(0, VOCAB, size=SEQ)]


def forward(w: dict[str, np.ndarray], ids: list[int]) -> dict[str, np.ndarray]:
    """A plain float64 GPT-2 block (picoGPT style), recording the steps that are printed."""
    f = {k: v.astype(np.float64) for k, v in w.items()}
    out: dict[str, np.ndarray] = {}

    def ln(x: np.ndarray, g: np.ndarray, b: np.ndarray) -> np.ndarray:
        mu = x.mean(-1, keepdims=True)
        return (x - mu) / np.sqrt(((x - mu) ** 2).mean(-1, keepdims=True) + EPS) * g + b

    def softmax(s: np.ndarray) -> np.ndarray:
        e = np.exp(s - s.max(-1, keepdims=True))
        return e / e.sum(-1, keepdims=True)

    n = len(ids)
    x = f["embed"][ids] + f["pos"][:n]
    out["x"] = x
    h = ln(x, f["l0.ln1_gamma"], f["l0.ln1_beta"])
    out["l0.ln1"] = h
    mask = np.triu(np.full((n, n), -np.inf), 1)
    heads = []
    for i in range(HEADS):
        q = h @ f[f"l0.h{i}.W_Q"] + f[f"l0.h{i}.b_Q"]
        k = h @ f[f"l0.h{i}.W_K"] + f[f"l0.h{i}.b_K"]
        v = h @ f[f"l0.h{i}.W_V"] + f[f"l0.h{i}.b_V"]
        scaled = q @ k.T / np.sqrt(DH)
        a = softmax(scaled + mask)
        out[f"l0.h{i}.q"], out[f"l0.h{i}.scaled"], out[f"l0.h{i}.pattern"] = q, scaled, a
        heads.append(a @ v)
    attn = np.hstack(heads) @ f["l0.W_O"] + f["l0.b_O"]
    mid = x + attn
    h2 = ln(mid, f["l0.ln2_gamma"], f["l0.ln2_beta"])
    pre = h2 @ f["l0.W1"] + f["l0.b1"]
    act = 0.5 * pre * (1 + np.tanh(np.sqrt(2 / np.pi) * (pre + 0.044715 * pre**3)))
    ffn = act @ f["l0.W2"] + f["l0.b2"]
    post = mid + ffn
    lnf = ln(post, f["lnf_gamma"], f["lnf_beta"])
    logits = lnf[-1:] @ f["embed"].T
    out.update(
        {
            "l0.attn_out": attn,
            "l0.resid_mid": mid,
            "l0.ln2": h2,
            "l0.ffn_pre": pre,
            "l0.ffn_act": act,
            "l0.ffn_out": ffn,
            "l0.resid_post": post,
            "ln_f": lnf,
            "logits": logits,
            "probs": softmax(logits),
        }
    )
    return out


def _safe(v: float, ulp: float) -> bool:
    """Whether ``v`` is at least 10⁻⁹ (relative) away from every rounding boundary of the grid."""
    frac = abs(v) / ulp - np.floor(abs(v) / ulp)
    return abs(frac - 0.5) * ulp > 1e-9 * max(1.0, abs(v))


def _fixed(v: float, decimals: int = 4) -> str:
    q = Decimal(v).quantize(Decimal(1).scaleb(-decimals), rounding=ROUND_HALF_UP)
    return str(q if q != 0 else abs(q))


def _other_neighbour(v: float, decimals: int = 4) -> str:
    """The grid neighbour of ``v`` that is not its rounding: less than one unit away (a slip)."""
    unit = Decimal(1).scaleb(-decimals)
    r = Decimal(v).quantize(unit, rounding=ROUND_HALF_UP)
    other = r + unit if Decimal(v) > r else r - unit
    return str(other if other != 0 else abs(other))


def derivation(w: dict[str, np.ndarray], ids: list[int]) -> str:
    """The derivation's TOML text: the model, the input and the printed claims."""
    ref = forward(w, ids)
    lines = [
        'title = "A GPT-2-sized block on random float32 weights"',
        'source = "generated by examples/gpt2_scale/make_gpt2_scale.py (seed '
        f'{SEED}); printed values from a numpy float64 forward pass, 4 decimals"',
        'weights = "gpt2_scale.npz"',
        "",
        "[model]",
        'architecture = "decoder"',
        f"d_model = {D}",
        f"n_heads = {HEADS}",
        f"d_ff = {D_FF}",
        'norm = "pre"',
        'eps = "1e-5"',
        'activation = "gelu_tanh"',
        'positional = "learned"',
        "final_norm = true",
        "tie_embeddings = true",
        "vocab = [" + ", ".join(f'"t{i}"' for i in range(VOCAB)) + "]",
        "",
        "[input]",
        f"token_ids = {ids}",
    ]

    def claim(label: str, step: str, printed: str, where: str, note: str = "") -> None:
        lines.extend(["", "[[claims]]", f'label = "{label}"', f'step = "{step}"', where])
        lines.append(f'printed = "{printed}"')
        if note:
            lines.append(f'note = "{note}"')

    picks = [(0, 0), (3, 17), (7, 300), (9, 40), (15, 767), (2, 5), (12, 511)]
    steps = [
        "x",
        "l0.ln1",
        "l0.h0.q",
        "l0.attn_out",
        "l0.resid_mid",
        "l0.ln2",
        "l0.ffn_pre",
        "l0.ffn_act",
        "l0.ffn_out",
        "l0.resid_post",
        "ln_f",
    ]
    for step in steps:
        for i, j in picks:
            j %= ref[step].shape[1]
            v = float(ref[step][i, j])
            if not _safe(v, 1e-4):
                continue
            text, note = _fixed(v), ""
            if (step, i, j) == ("l0.attn_out", 2, 5):
                text, note = _fixed(v + 7e-4), "printed 7 units off on purpose"
            elif (step, i, j) == ("l0.ffn_out", 9, 40):
                text, note = _other_neighbour(v), "printed one unit off on purpose"
            claim(f"{step}[{i}, {j}]", step, text, f"index = [{i}, {j}]", note)
    for step, row in (("l0.h0.pattern", 15), ("l0.h5.pattern", 6), ("l0.h11.scaled", 3)):
        vals = [float(v) for v in ref[step][row]]  # a pattern's future entries are exactly 0
        if all(_safe(v, 1e-4) for v in vals):
            claim(f"{step} row {row}", step, " ".join(_fixed(v) for v in vals), f"row = {row}")
    logits = [float(v) for v in ref["logits"][0]]
    if all(_safe(v, 1e-4) for v in logits):
        claim("logits", "logits", " ".join(_fixed(v) for v in logits), "row = 0")
    probs = [float(v) for v in ref["probs"][0]]
    if all(_safe(v, 1e-6) for v in probs):
        claim("probabilities", "probs", " ".join(_fixed(v, 6) for v in probs), "row = 0")
    best = int(np.argmax(ref["logits"][0]))
    lines.extend(["", "[[claims]]", 'label = "next token"', 'step = "next_token"'])
    lines.append(f'printed = "t{best}"')
    return "\n".join(lines) + "\n"


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--out", type=Path, default=HERE, help="folder to write into (default: here)")
    args = ap.parse_args()
    args.out.mkdir(parents=True, exist_ok=True)
    w = weights()
    ids = tokens()
    np.savez(args.out / "gpt2_scale.npz", **w)
    (args.out / "gpt2_scale.toml").write_text(derivation(w, ids), encoding="utf-8")
    print(f"wrote {args.out / 'gpt2_scale.npz'} and {args.out / 'gpt2_scale.toml'}")


if __name__ == "__main__":
    main()
