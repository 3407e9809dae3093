"""symtf against PyTorch in float64 (optional dependency): layers, and gradients.

The same rational weights are loaded into ``nn.TransformerEncoderLayer`` /
``nn.MultiheadAttention`` and written into a derivation; symtf's exact values
(enclosed in certified balls) must agree with PyTorch to 1e-12. Every bundled
derivation with ``grad``/``jacobian`` steps is rebuilt in torch from the given
tensors symtf loaded, and each gradient step (float64 backend, and exact) must
agree with ``torch.autograd`` to 1e-12.
"""

from __future__ import annotations

import math
from fractions import Fraction
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from test_arch import exact_values

import symtf
from symtf.backends import ExactBackend, FloatBackend
from symtf.tensor import from_native

torch = pytest.importorskip(
    "torch", reason="PyTorch is not installed (optional cross-check: pip install torch)"
)

D, HEADS, FF, SEQ = 4, 2, 6, 3
TOL = 1e-12


def _rational(rng: np.random.Generator, *shape: int) -> np.ndarray:
    """Weights k/10 with k in −9..9, as Fractions (exact) in an object array."""
    k = rng.integers(-9, 10, size=shape)
    return np.vectorize(lambda v: Fraction(int(v), 10), otypes=[object])(k)


def _text(a: np.ndarray) -> str:
    a = np.atleast_2d(a)
    return '"""\n' + "\n".join(" ".join(str(x) for x in row) for row in a) + '\n"""'


def _t(a: np.ndarray) -> torch.Tensor:
    return torch.tensor(a.astype(float), dtype=torch.float64)


def _attention_weights(rng: np.random.Generator) -> dict[str, np.ndarray]:
    return {
        "in_w": _rational(rng, 3 * D, D),
        "in_b": _rational(rng, 3 * D),
        "out_w": _rational(rng, D, D),
        "out_b": _rational(rng, D),
        "x": _rational(rng, SEQ, D),
    }


def _heads_toml(w: dict[str, np.ndarray]) -> list[str]:
    """Per-head W_Q/W_K/W_V (d_model × d_head, i.e. PyTorch's rows transposed) and biases."""
    dh = D // HEADS
    lines = []
    for h in range(HEADS):
        lines.append("[[model.layers.heads]]")
        for k, name in enumerate(("Q", "K", "V")):
            rows = slice(k * D + h * dh, k * D + (h + 1) * dh)
            lines.append(f"W_{name} = {_text(w['in_w'][rows].T)}")
            lines.append(f"b_{name} = {_text(w['in_b'][rows])}")
    return lines


def _load_attention(mha: torch.nn.MultiheadAttention, w: dict[str, np.ndarray]) -> None:
    with torch.no_grad():
        mha.in_proj_weight.copy_(_t(w["in_w"]))
        mha.in_proj_bias.copy_(_t(w["in_b"]))
        mha.out_proj.weight.copy_(_t(w["out_w"]))
        mha.out_proj.bias.copy_(_t(w["out_b"]))


@pytest.mark.parametrize(
    ("norm_first", "activation"), [(False, "relu"), (True, "gelu")], ids=["post-relu", "pre-gelu"]
)
def test_transformer_encoder_layer(norm_first: bool, activation: str) -> None:
    rng = np.random.default_rng(7)
    w = _attention_weights(rng)
    w1, b1 = _rational(rng, FF, D), _rational(rng, FF)
    w2, b2 = _rational(rng, D, FF), _rational(rng, D)
    g1, be1, g2, be2 = (_rational(rng, D) for _ in range(4))
    layer = torch.nn.TransformerEncoderLayer(
        D,
        HEADS,
        dim_feedforward=FF,
        dropout=0.0,
        activation=activation,
        layer_norm_eps=1e-5,
        batch_first=True,
        norm_first=norm_first,
        dtype=torch.float64,
    ).eval()
    _load_attention(layer.self_attn, w)
    with torch.no_grad():
        layer.linear1.weight.copy_(_t(w1))
        layer.linear1.bias.copy_(_t(b1))
        layer.linear2.weight.copy_(_t(w2))
        layer.linear2.bias.copy_(_t(b2))
        for norm, g, b in ((layer.norm1, g1, be1), (layer.norm2, g2, be2)):
            norm.weight.copy_(_t(g))
            norm.bias.copy_(_t(b))
        want = layer(_t(w["x"]).unsqueeze(0)).squeeze(0).numpy()
    toml = [
        'title = "torch encoder layer"',
        "[model]",
        f"d_model = {D}",
        f"n_heads = {HEADS}",
        'mask = "none"',
        f'norm = "{"pre" if norm_first else "post"}"',
        'eps = "1e-5"',
        f'activation = "{activation}"',
        f"vocab = {[f't{i}' for i in range(SEQ)]}".replace("'", '"'),
        f"embed = {_text(w['x'])}",
        "[[model.layers]]",
        f"W_O = {_text(w['out_w'].T)}",
        f"b_O = {_text(w['out_b'])}",
        f"W1 = {_text(w1.T)}",
        f"b1 = {_text(b1)}",
        f"W2 = {_text(w2.T)}",
        f"b2 = {_text(b2)}",
        f"ln1_gamma = {_text(g1)}",
        f"ln1_beta = {_text(be1)}",
        f"ln2_gamma = {_text(g2)}",
        f"ln2_beta = {_text(be2)}",
        *_heads_toml(w),
        "[input]",
        f"token_ids = {list(range(SEQ))}",
    ]
    d = symtf.loads("\n".join(toml), "torch.toml")
    got = exact_values(d, ["final"])["final"]
    assert np.max(np.abs(np.array(got, dtype=float) - want)) < TOL


def test_multihead_attention_causal() -> None:
    rng = np.random.default_rng(11)
    w = _attention_weights(rng)
    mha = torch.nn.MultiheadAttention(D, HEADS, batch_first=True, dtype=torch.float64).eval()
    _load_attention(mha, w)
    x = _t(w["x"]).unsqueeze(0)
    future = torch.triu(torch.ones(SEQ, SEQ, dtype=torch.bool), diagonal=1)
    with torch.no_grad():
        out, weights = mha(x, x, x, attn_mask=future, average_attn_weights=False)
    toml = [
        'title = "torch MHA"',
        "[model]",
        'architecture = "attention"',
        f"d_model = {D}",
        f"n_heads = {HEADS}",
        'mask = "causal"',
        f"embed = {_text(w['x'])}",
        "[[model.layers]]",
        f"W_O = {_text(w['out_w'].T)}",
        f"b_O = {_text(w['out_b'])}",
        *_heads_toml(w),
    ]
    d = symtf.loads("\n".join(toml), "mha.toml")
    steps = ["l0.attn_out", *(f"l0.h{h}.pattern" for h in range(HEADS))]
    got = exact_values(d, steps)
    assert np.max(np.abs(np.array(got["l0.attn_out"], dtype=float) - out[0].numpy())) < TOL
    for h in range(HEADS):
        pattern = np.array(got[f"l0.h{h}.pattern"], dtype=float)
        assert np.max(np.abs(pattern - weights[0, h].numpy())) < TOL


# ----------------------------------------------------------------------------- gradients

DERIVATIONS = Path(__file__).resolve().parent.parent / "derivations"


def _given(d: Any) -> dict[str, torch.Tensor]:
    """A derivation's given tensors (as symtf loaded them) in torch float64; integer
    tensors (targets) as int64."""
    out = {}
    for g in d.tensors:
        values = [Fraction(v) for v in g.values]
        if all(v.denominator == 1 for v in values) and g.texts and "." not in "".join(g.texts):
            out[g.name] = torch.tensor([int(v) for v in values], dtype=torch.int64).reshape(g.shape)
        else:
            out[g.name] = torch.tensor([float(v) for v in values], dtype=torch.float64).reshape(
                g.shape
            )
    return out


def _leaf(t: torch.Tensor) -> torch.Tensor:
    return t.detach().clone().requires_grad_(True)


def _symtf_values(d: Any, names: list[str]) -> dict[str, dict[str, np.ndarray]]:
    """Each step's value in the float64 backend and exactly (its certified ball's midpoint)."""
    out: dict[str, dict[str, np.ndarray]] = {"float": {}, "exact": {}}
    for kind, xp in (("float", FloatBackend()), ("exact", ExactBackend())):
        trace = symtf.run(d, xp)
        for n in names:
            t = from_native(xp, trace.value(n), trace.true_shapes.get(n))
            if kind == "exact":
                vals = [float(xp.ball(v, 200).mid()) for v in t.data]
            else:
                vals = [float(v) for v in t.data]
            out[kind][n] = np.asarray(vals, dtype=float).reshape(t.shape)
    return out


def _torch_attention_backward(g: dict[str, torch.Tensor]) -> dict[str, torch.Tensor]:
    q, k, v = (_leaf(g[n]) for n in ("Q", "K", "V"))
    s = q @ k.T / math.sqrt(2)
    s.retain_grad()
    a = torch.softmax(s, dim=-1)
    a.retain_grad()
    (a @ v * g["dO"]).sum().backward()
    return {"dV": v.grad, "dA": a.grad, "dS": s.grad, "dQ": q.grad, "dK": k.grad}


def _torch_layernorm_backward(g: dict[str, torch.Tensor]) -> dict[str, torch.Tensor]:
    x, gamma, beta = (_leaf(g[n]) for n in ("x", "gamma", "beta"))
    eps = float(g["eps"])
    xc = x - x.mean(-1, keepdim=True)
    xhat = xc / torch.sqrt((xc * xc).mean(-1, keepdim=True) + eps)
    xhat.retain_grad()
    ((xhat * gamma + beta) * g["G"]).sum().backward()
    x_op = _leaf(g["x"])
    y_op = torch.nn.functional.layer_norm(x_op, (x_op.shape[-1],), g["gamma"], g["beta"], eps)
    (y_op * g["G"]).sum().backward()
    return {
        "dgamma": gamma.grad,
        "dbeta": beta.grad,
        "dxhat": xhat.grad,
        "dx": x.grad,
        "dx_op": x_op.grad,
    }


def _torch_softmax_ce(g: dict[str, torch.Tensor]) -> dict[str, torch.Tensor]:
    w, b = _leaf(g["W"]), _leaf(g["b"])
    z = g["X"] @ w + b
    z.retain_grad()
    torch.nn.functional.cross_entropy(z, g["t"]).backward()
    return {"dz": z.grad, "dW": w.grad, "db": b.grad}


def _torch_int8_absmax(g: dict[str, torch.Tensor]) -> dict[str, torch.Tensor]:
    w = _leaf(g["W"])
    # torch.round rounds an exact tie to even, as symtf's round: 12.5 -> 12
    s_w = 127 / w.abs().amax(dim=-1, keepdim=True)
    w_hat = torch.clamp(torch.round(w * s_w), -127, 127) / s_w
    w_hat.retain_grad()
    ((g["x"] @ w_hat.T) * g["G"]).sum().backward()
    return {"dW_hat": w_hat.grad, "dW": w.grad}


#: Every bundled derivation with grad/jacobian steps, rebuilt in torch from its given tensors.
TORCH_BACKWARD = {
    "steps_attention_backward": _torch_attention_backward,
    "steps_layernorm_backward": _torch_layernorm_backward,
    "steps_softmax_ce_sgd_adam": _torch_softmax_ce,
    "steps_int8_absmax": _torch_int8_absmax,
}


def _gradient_steps(d: Any) -> list[str]:
    trace = symtf.run(d, FloatBackend())
    return [s.name for s in d.steps if trace[s.name].op in ("grad", "jacobian")]


def test_every_bundled_derivation_with_gradients_is_rebuilt_in_torch() -> None:
    with_gradients = {
        p.stem for p in DERIVATIONS.glob("steps_*.toml") if _gradient_steps(symtf.load(p))
    }
    assert with_gradients == set(TORCH_BACKWARD)


@pytest.mark.parametrize("stem", sorted(TORCH_BACKWARD))
def test_bundled_gradients_match_torch_autograd(stem: str) -> None:
    d = symtf.load(DERIVATIONS / f"{stem}.toml")
    names = _gradient_steps(d)
    want = {k: v.detach().numpy() for k, v in TORCH_BACKWARD[stem](_given(d)).items()}
    assert set(want) == set(names), "every grad/jacobian step has its torch counterpart"
    got = _symtf_values(d, names)
    for kind, values in got.items():
        for n in names:
            assert values[n].shape == want[n].shape, (kind, n)
            diff = float(np.max(np.abs(values[n] - want[n]), initial=0.0))
            assert diff < TOL, f"{stem}: {n} ({kind}) differs from torch by {diff:.3g}"
