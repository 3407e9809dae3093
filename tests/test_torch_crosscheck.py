"""symtf against PyTorch in float64 (optional dependency): layers, and gradients.

The same rational weights are loaded into ``nn.TransformerEncoderLayer`` /
``nn.MultiheadAttention`` and written into a derivation; symtf's exact values
(enclosed in certified balls) must agree with PyTorch to 1e-12. Every bundled
derivation with ``grad``/``jacobian`` steps is rebuilt in torch from the given
tensors symtf loaded, and each gradient step (float64 backend, and exact) must
agree with ``torch.autograd`` to 1e-12. So must ``grad(sum(op(…) * w), a)`` and
``jacobian(op(…), a0)`` of every differentiable op with a torch counterpart, on
rational inputs away from where the op's derivative does not exist.
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
    with_gradients = set()
    for p in DERIVATIONS.glob("*.toml"):
        d = symtf.load(p)
        # a file that writes grad(…) or jacobian(…) anywhere, as a step or inside one
        if any("grad(" in s.text or "jacobian(" in s.text for s in d.steps):
            assert _gradient_steps(d), p.stem
            with_gradients.add(p.stem)
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


# ----------------------------------------------------------------------------- every op

F = torch.nn.functional


def _unary(fn: Any) -> Any:
    return lambda a, c: fn(a[0])


#: op -> (step expression over a0, a1, … and constants c0, …; shapes of the a's; the domain
#: of their entries; the constants' shapes and values; the same computation in torch).
#: Domains keep each op away from where its derivative does not exist.
TORCH_OPS: dict[str, tuple[str, list[tuple[int, ...]], str, dict[str, Any], Any]] = {
    "exp": ("exp(a0)", [(2, 3)], "any", {}, _unary(torch.exp)),
    "expm1": ("expm1(a0)", [(2, 3)], "any", {}, _unary(torch.expm1)),
    "log": ("log(a0)", [(2, 3)], "pos", {}, _unary(torch.log)),
    "log1p": ("log1p(a0)", [(2, 3)], "pos", {}, _unary(torch.log1p)),
    "log2": ("log2(a0)", [(2, 3)], "pos", {}, _unary(torch.log2)),
    "log10": ("log10(a0)", [(2, 3)], "pos", {}, _unary(torch.log10)),
    "sqrt": ("sqrt(a0)", [(2, 3)], "pos", {}, _unary(torch.sqrt)),
    "tanh": ("tanh(a0)", [(2, 3)], "any", {}, _unary(torch.tanh)),
    "sigmoid": ("sigmoid(a0)", [(2, 3)], "any", {}, _unary(torch.sigmoid)),
    "sin": ("sin(a0)", [(2, 3)], "any", {}, _unary(torch.sin)),
    "cos": ("cos(a0)", [(2, 3)], "any", {}, _unary(torch.cos)),
    "abs": ("abs(a0)", [(2, 3)], "nonzero", {}, _unary(torch.abs)),
    "relu": ("relu(a0)", [(2, 3)], "nonzero", {}, _unary(torch.relu)),
    "gelu": ("gelu(a0)", [(2, 3)], "any", {}, _unary(F.gelu)),
    "gelu_tanh": (
        "gelu_tanh(a0)",
        [(2, 3)],
        "any",
        {},
        _unary(lambda x: F.gelu(x, approximate="tanh")),
    ),
    "silu": ("silu(a0)", [(2, 3)], "any", {}, _unary(F.silu)),
    "softplus": ("softplus(a0)", [(2, 3)], "any", {}, _unary(F.softplus)),
    "neg": ("-a0", [(2, 3)], "any", {}, _unary(torch.neg)),
    "round": ("round(a0)", [(2, 3)], "off_ties", {}, _unary(torch.round)),
    "floor": ("floor(a0)", [(2, 3)], "off_integers", {}, _unary(torch.floor)),
    "ceil": ("ceil(a0)", [(2, 3)], "off_integers", {}, _unary(torch.ceil)),
    "trunc": ("trunc(a0)", [(2, 3)], "off_integers", {}, _unary(torch.trunc)),
    "sign": ("sign(a0)", [(2, 3)], "nonzero", {}, _unary(torch.sign)),
    "add": ("a0 + a1", [(2, 3), (3,)], "any", {}, lambda a, c: a[0] + a[1]),
    "sub": ("a0 - a1", [(2, 3), (2, 1)], "any", {}, lambda a, c: a[0] - a[1]),
    "mul": ("a0 * a1", [(2, 3), (2, 3)], "any", {}, lambda a, c: a[0] * a[1]),
    "div": ("a0 / a1", [(2, 3), (2, 3)], "nonzero", {}, lambda a, c: a[0] / a[1]),
    "pow": ("a0 ^ a1", [(2, 3), (2, 3)], "pos", {}, lambda a, c: a[0] ** a[1]),
    "matmul": ("a0 @ a1", [(2, 3), (3, 4)], "any", {}, lambda a, c: a[0] @ a[1]),
    "T": ("a0.T", [(2, 3)], "any", {}, lambda a, c: a[0].T),
    "transpose": ("transpose(a0)", [(2, 3)], "any", {}, lambda a, c: a[0].T),
    "softmax": ("softmax(a0)", [(2, 4)], "any", {}, lambda a, c: torch.softmax(a[0], -1)),
    "log_softmax": ("log_softmax(a0)", [(2, 4)], "any", {}, lambda a, c: F.log_softmax(a[0], -1)),
    "logsumexp": (
        "logsumexp(a0, axis=-1)",
        [(2, 4)],
        "any",
        {},
        lambda a, c: torch.logsumexp(a[0], -1),
    ),
    "sum": ("sum(a0, axis=0)", [(2, 3)], "any", {}, lambda a, c: a[0].sum(0)),
    "mean": ("mean(a0, axis=-1)", [(2, 3)], "any", {}, lambda a, c: a[0].mean(-1)),
    "var": ("var(a0, axis=-1)", [(2, 4)], "any", {}, lambda a, c: a[0].var(-1, correction=0)),
    "std": (
        "std(a0, axis=-1, unbiased=true)",
        [(2, 4)],
        "distinct",
        {},
        lambda a, c: a[0].std(-1, correction=1),
    ),
    "norm": (
        "norm(a0, axis=-1)",
        [(2, 3)],
        "nonzero",
        {},
        lambda a, c: torch.linalg.vector_norm(a[0], dim=-1),
    ),
    "max": ("max(a0, axis=-1)", [(2, 4)], "distinct", {}, lambda a, c: a[0].amax(-1)),
    "min": (
        "min(a0, a1)",
        [(2, 3), (2, 3)],
        "distinct",
        {},
        lambda a, c: torch.minimum(a[0], a[1]),
    ),
    "cumsum": ("cumsum(a0)", [(2, 3)], "any", {}, lambda a, c: a[0].cumsum(-1)),
    "cumprod": ("cumprod(a0)", [(2, 3)], "nonzero", {}, lambda a, c: a[0].cumprod(-1)),
    "concat": ("concat(a0, a1, axis=0)", [(2, 3), (1, 3)], "any", {}, lambda a, c: torch.cat(a, 0)),
    "stack": ("stack(a0, a1)", [(3,), (3,)], "any", {}, lambda a, c: torch.stack(a)),
    "tril": ("tril(a0)", [(3, 3)], "any", {}, lambda a, c: torch.tril(a[0])),
    "triu": ("triu(a0, diagonal=1)", [(3, 3)], "any", {}, lambda a, c: torch.triu(a[0], 1)),
    "sort": ("sort(a0)", [(2, 4)], "distinct", {}, lambda a, c: torch.sort(a[0], -1).values),
    "clip": (
        "clip(a0, c0, c1)",
        [(2, 3)],
        "off_quarters",
        {"c0": ((), ["-1/4"]), "c1": ((), ["1/4"])},
        lambda a, c: torch.clamp(a[0], c["c0"], c["c1"]),
    ),
    "where": (
        "where(c0, a0, a1)",
        [(2, 3), (2, 3)],
        "any",
        {"c0": ((2, 3), ["1", "0", "1", "0", "0", "1"])},
        lambda a, c: torch.where(c["c0"] != 0, a[0], a[1]),
    ),
    "layernorm": (
        "layernorm(a0, c0, a1, a2)",
        [(2, 4), (4,), (4,)],
        "any",
        {"c0": ((), ["1/100000"])},
        lambda a, c: F.layer_norm(a[0], (4,), a[1], a[2], float(c["c0"])),
    ),
    "rmsnorm": (
        "rmsnorm(a0, c0, a1)",
        [(2, 4), (4,)],
        "any",
        {"c0": ((), ["1/100000"])},
        lambda a, c: F.rms_norm(a[0], (4,), a[1], float(c["c0"])),
    ),
    "cross_entropy": (
        "cross_entropy(a0, c0)",
        [(3, 4)],
        "any",
        {"c0": ((3,), ["2", "0", "3"])},
        lambda a, c: F.cross_entropy(a[0], c["c0"].long()),
    ),
    "nll": (
        "nll(a0, c0)",
        [(3, 4)],
        "any",
        {"c0": ((3,), ["1", "3", "0"])},
        lambda a, c: F.nll_loss(a[0], c["c0"].long()),
    ),
    "mse": ("mse(a0, a1)", [(2, 3), (2, 3)], "any", {}, lambda a, c: F.mse_loss(a[0], a[1])),
    "bce": (
        "bce(a0, c0)",
        [(2, 2)],
        "prob",
        {"c0": ((2, 2), ["1", "0", "0", "1"])},
        lambda a, c: F.binary_cross_entropy(a[0], c["c0"]),
    ),
    "kl_div": (
        "kl_div(a0, a1, reduction='batchmean')",
        [(2, 3), (2, 3)],
        "pos",
        {},
        lambda a, c: F.kl_div(a[0], a[1], reduction="batchmean"),
    ),
    "reshape": ("reshape(a0, [3, 2])", [(2, 3)], "any", {}, lambda a, c: a[0].reshape(3, 2)),
    "topk": ("topk(a0, 2)", [(2, 4)], "distinct", {}, lambda a, c: torch.topk(a[0], 2).values),
    "masked_fill": (
        "masked_fill(a0, c0, a1)",
        [(2, 3), ()],
        "any",
        {"c0": ((2, 3), ["0", "1", "0", "0", "0", "1"])},
        lambda a, c: a[0].masked_fill(c["c0"] != 0, a[1]),
    ),
    "dropout": (
        "dropout(a0, c0, c1)",
        [(2, 3)],
        "any",
        {"c0": ((2, 3), ["1", "0", "1", "1", "1", "0"]), "c1": ((), ["1/4"])},
        # torch's dropout draws its own mask: the same keep mask, applied as it applies it
        lambda a, c: a[0] * c["c0"] / (1 - c["c1"]),
    ),
    "cosine_similarity": (
        "cosine_similarity(a0, a1)",
        [(2, 3), (2, 3)],
        "nonzero",
        {},
        lambda a, c: F.cosine_similarity(a[0], a[1], dim=-1, eps=1e-8),
    ),
}


def _sample(rng: np.random.Generator, shape: tuple[int, ...], domain: str) -> list[Fraction]:
    """Entries k/8 in [−2, 2] in ``domain``, the smooth part of the op's domain."""
    n = math.prod(shape)
    ok = {
        "any": lambda v: True,
        "pos": lambda v: v > 0,
        "nonzero": lambda v: v != 0,
        "distinct": lambda v: True,
        "prob": lambda v: 0 < v < 1,
        "off_ties": lambda v: (2 * v).denominator != 1,
        "off_integers": lambda v: v.denominator != 1,
        "off_quarters": lambda v: v not in (Fraction(-1, 4), Fraction(1, 4)),
    }[domain]
    pool = [Fraction(k, 8) for k in range(-16, 17) if ok(Fraction(k, 8))]
    picks = rng.choice(len(pool), size=n, replace=domain != "distinct")
    return [pool[int(i)] for i in picks]


def _tensor_text(shape: tuple[int, ...], values: list[Any]) -> str:
    dims = ", ".join(str(s) for s in shape)
    return (
        f"{{ shape = [{dims}], values = [{', '.join(f'{chr(34)}{v}{chr(34)}' for v in values)}] }}"
    )


#: Differentiable step ops with no one-call torch counterpart, and why.
NO_TORCH = {
    "argsort": "integer indices: no derivative to compare",
    "full": "a constructor: its value argument is a one-entry tensor, not an input",
    "rope": "torch has no rotary embedding op (test_grad checks it by central differences)",
    "split_heads": "a reshape and a permute whose layout is symtf's (checked in test_grad)",
    "merge_heads": "the inverse of split_heads",
}


def test_every_differentiable_step_op_is_checked_against_torch_or_listed() -> None:
    from test_grad import STEP_OPS

    from symtf.ops import REGISTRY

    for name in TORCH_OPS:
        assert REGISTRY[name].vjp is not None, name
    assert set(STEP_OPS) - set(TORCH_OPS) == set(NO_TORCH)


@pytest.mark.parametrize("name", sorted(TORCH_OPS))
def test_grad_of_each_op_matches_torch_autograd(name: str) -> None:
    expr, shapes, domain, consts, fn = TORCH_OPS[name]
    rng = np.random.default_rng(sum(map(ord, name)))  # a fixed draw per op
    args = [_sample(rng, s, domain) for s in shapes]
    if domain == "distinct":  # distinct across the arguments too (no tie for min/max)
        flat = _sample(rng, (sum(math.prod(s) for s in shapes),), "distinct")
        args, k = [], 0
        for s in shapes:
            args.append(flat[k : k + math.prod(s)])
            k += math.prod(s)
    ta = [
        torch.tensor([float(v) for v in a], dtype=torch.float64).reshape(s).requires_grad_(True)
        for a, s in zip(args, shapes, strict=True)
    ]
    tc = {
        k: torch.tensor([float(Fraction(v)) for v in vals], dtype=torch.float64).reshape(s)
        for k, (s, vals) in consts.items()
    }
    out = fn(ta, tc)
    w_vals = _sample(rng, tuple(out.shape), "nonzero")
    w = torch.tensor([float(v) for v in w_vals], dtype=torch.float64).reshape(out.shape)
    (out * w).sum().backward()
    lines = ['title = "torch op"', 'source = "tests"', "[tensors]"]
    lines += [
        f"a{i} = {_tensor_text(s, a)}" for i, (s, a) in enumerate(zip(shapes, args, strict=True))
    ]
    lines += [f"{k} = {_tensor_text(s, vals)}" for k, (s, vals) in consts.items()]
    lines += [f"w = {_tensor_text(tuple(out.shape), w_vals)}", "[steps]", f'y = "{expr}"']
    lines += ['loss = "sum(y * w)"']
    lines += [f'd{i} = "grad(loss, a{i})"' for i in range(len(shapes))]
    d = symtf.loads("\n".join(lines), f"{name}.toml")
    got = _symtf_values(d, ["y", *(f"d{i}" for i in range(len(shapes)))])
    for kind, values in got.items():
        assert np.max(np.abs(values["y"] - out.detach().numpy()), initial=0.0) < TOL, (kind, name)
        for i, t in enumerate(ta):
            assert t.grad is not None
            diff = float(np.max(np.abs(values[f"d{i}"] - t.grad.numpy()), initial=0.0))
            assert diff < TOL, f"{name}: ∂loss/∂a{i} ({kind}) differs from torch by {diff:.3g}"


@pytest.mark.parametrize("name", sorted(TORCH_OPS))
def test_jacobian_of_each_op_matches_torch_autograd(name: str) -> None:
    expr, shapes, domain, consts, fn = TORCH_OPS[name]
    rng = np.random.default_rng(sum(map(ord, name)) + 1)
    args = [_sample(rng, s, domain) for s in shapes]
    if domain == "distinct":
        flat = _sample(rng, (sum(math.prod(s) for s in shapes),), "distinct")
        args, k = [], 0
        for s in shapes:
            args.append(flat[k : k + math.prod(s)])
            k += math.prod(s)
    ta = [
        torch.tensor([float(v) for v in a], dtype=torch.float64).reshape(s)
        for a, s in zip(args, shapes, strict=True)
    ]
    tc = {
        k: torch.tensor([float(Fraction(v)) for v in vals], dtype=torch.float64).reshape(s)
        for k, (s, vals) in consts.items()
    }
    want = torch.autograd.functional.jacobian(lambda x: fn([x, *ta[1:]], tc), ta[0]).numpy()
    lines = ['title = "torch jacobian"', 'source = "tests"', "[tensors]"]
    lines += [
        f"a{i} = {_tensor_text(s, a)}" for i, (s, a) in enumerate(zip(shapes, args, strict=True))
    ]
    lines += [f"{k} = {_tensor_text(s, vals)}" for k, (s, vals) in consts.items()]
    lines += ["[steps]", f'y = "{expr}"', 'J = "jacobian(y, a0)"']
    d = symtf.loads("\n".join(lines), f"{name}.toml")
    for kind, values in _symtf_values(d, ["J"]).items():
        got = values["J"]
        assert got.shape == want.shape, (kind, name, got.shape, want.shape)
        diff = float(np.max(np.abs(got - want), initial=0.0))
        assert diff < TOL, f"{name}: jacobian ({kind}) differs from torch by {diff:.3g}"


@pytest.mark.parametrize("smoothing", ["0", "1/10", "1/2", "1"])
def test_cross_entropy_with_label_smoothing_matches_torch(smoothing: str) -> None:
    """``cross_entropy(z, t, label_smoothing=ε)`` and its gradient are PyTorch's."""
    z_rows = [["2", "1", "1/10"], ["1/2", "5/2", "3/10"], ["-1", "0", "3/4"]]
    targets = [0, 1, 2]
    text = "\n".join(" ".join(r) for r in z_rows)
    d = symtf.loads(
        f'title = "smoothed"\n[tensors]\nz = """\n{text}\n"""\nt = ["0", "1", "2"]\n'
        f'[steps]\nloss = "cross_entropy(z, t, label_smoothing={smoothing})"\n'
        'dz = "grad(loss, z)"\n',
        "smoothed.toml",
    )
    z = torch.tensor(
        [[float(Fraction(v)) for v in r] for r in z_rows], dtype=torch.float64, requires_grad=True
    )
    loss = torch.nn.functional.cross_entropy(
        z, torch.tensor(targets), label_smoothing=float(Fraction(smoothing))
    )
    loss.backward()
    assert z.grad is not None
    got = _symtf_values(d, ["loss", "dz"])
    for kind, values in got.items():
        assert abs(float(values["loss"].reshape(())) - loss.item()) < TOL, kind
        assert np.max(np.abs(values["dz"] - z.grad.numpy())) < TOL, kind
