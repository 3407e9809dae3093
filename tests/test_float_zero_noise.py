"""A zero that float32 leaves as a trace: the mean of a normalized row printed as 1.7881e-08.

The notebook below was made by running its code in PyTorch (float32); its outputs are
copied as PyTorch printed them. The layer is random, so the article's ``out`` is known only
to its printed digits. By hand: each row of ``(out - mean) / sqrt(var)`` sums to exactly
0 (the deviations from a mean sum to 0, and dividing by the deviation keeps that), so the
exact mean is 0 at every value ``out`` may stand for, and the prints ``1.7881e-08`` and
``-1.1921e-08`` (a few units of float32's roundoff, 2^-24 ≈ 5.96e-08, on entries of size
about 1.8) are float32's rounding of that zero: correct. A print of ``2.5000e-03`` there is
not float32 noise, and ``3.0518e-05`` is farther than float32's rounding of this step
reaches from any entry of its size; neither may be accepted.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from flint import arb

from symtf.draft.infer.code import ZERO_NOISE, _zero_noise
from symtf.numbers import parse_printed
from tests.article_checks import json_checks

_SOURCES = [
    "import torch\n\ntorch.manual_seed(7)\n"
    "batch = torch.tensor([[0.5, -1.2, 0.3, 2.0], [1.1, 0.4, -0.7, -0.2]])\n"
    "layer = torch.nn.Sequential(torch.nn.Linear(4, 5), torch.nn.ReLU())\n"
    "out = layer(batch)\nprint(out)",
    "mean = out.mean(dim=-1, keepdim=True)\nvar = out.var(dim=-1, keepdim=True)\n"
    'print("Mean:\\n", mean)\nprint("Variance:\\n", var)',
    "out_norm = (out - mean) / torch.sqrt(var)\n"
    "mean = out_norm.mean(dim=-1, keepdim=True)\nvar = out_norm.var(dim=-1, keepdim=True)\n"
    'print("Normalized layer outputs:\\n", out_norm)\nprint("Mean:\\n", mean)\n'
    'print("Variance:\\n", var)',
]

_OUTPUTS = [
    "tensor([[1.1233e+00, 4.1078e-02, 0.0000e+00, 1.4278e-01, 6.9141e-06],\n"
    "        [1.5799e-01, 0.0000e+00, 0.0000e+00, 0.0000e+00, 0.0000e+00]],\n"
    "       grad_fn=<ReluBackward0>)\n",
    "Mean:\n tensor([[0.2614],\n        [0.0316]], grad_fn=<MeanBackward1>)\n"
    "Variance:\n tensor([[0.2355],\n        [0.0050]], grad_fn=<VarBackward0>)\n",
    "Normalized layer outputs:\n"
    " tensor([[ 1.7759, -0.4540, -0.5387, -0.2445, -0.5387],\n"
    "        [ 1.7889, -0.4472, -0.4472, -0.4472, -0.4472]], grad_fn=<DivBackward0>)\n"
    "Mean:\n tensor([[ 1.7881e-08],\n        [-1.1921e-08]], grad_fn=<MeanBackward1>)\n"
    "Variance:\n tensor([[1.0000],\n        [1.0000]], grad_fn=<VarBackward0>)\n",
]


def _notebook(noise: str = "1.7881e-08") -> str:
    outputs = [*_OUTPUTS[:2], _OUTPUTS[2].replace(" 1.7881e-08", f" {noise}")]
    cells: list[dict[str, Any]] = [
        {
            "cell_type": "markdown",
            "metadata": {},
            "source": "# Normalizing a layer's outputs\n\nEach row to mean 0 and variance 1.",
        }
    ]
    for k, (source, text) in enumerate(zip(_SOURCES, outputs, strict=True), 1):
        cells.append(
            {
                "cell_type": "code",
                "execution_count": k,
                "metadata": {},
                "outputs": [{"name": "stdout", "output_type": "stream", "text": text}],
                "source": source,
            }
        )
    doc = {"cells": cells, "metadata": {}, "nbformat": 4, "nbformat_minor": 5}
    return json.dumps(doc, indent=1)


def _verdicts(tmp_path: Path, noise: str = "1.7881e-08") -> dict[str, list[dict[str, Any]]]:
    out: dict[str, list[dict[str, Any]]] = {}
    for c in json_checks(tmp_path, _notebook(noise), name="norm.ipynb"):
        out.setdefault(c["printed"], []).append(c)
    return out


def test_a_zero_printed_as_float32_noise_is_accepted(tmp_path: Path) -> None:
    got = _verdicts(tmp_path)
    # the two means of the normalized rows: 0 by hand, printed as float32 left them
    assert [c["verdict"] for c in got["1.7881e-08"]] == ["rounded"]
    assert [c["verdict"] for c in got["-1.1921e-08"]] == ["rounded"]
    first = got["1.7881e-08"][0]
    assert first["accepted_by"] == "computed_in+rounded_inputs"
    assert "at the printed values of out" in first["explanation"]
    lo, hi = (float(x) for x in first["enclosure"])
    assert lo < 1.7881e-08 < hi and hi < 1e-6  # float32's rounding of the step, not more
    # the rest of the walk-through keeps its verdicts: the variances are 1 exactly
    assert {c["verdict"] for c in got["1.0000"]} == {"exact"}


def test_a_print_beyond_float32_rounding_is_not_accepted(tmp_path: Path) -> None:
    # within the draft's reach (below 2^-14) but far beyond float32's rounding of the step
    got = _verdicts(tmp_path, "3.0518e-05")
    assert all(c["verdict"] not in ("exact", "rounded") for c in got.get("3.0518e-05", []))
    # not a trace of rounding at all: the draft does not take it for the zero
    got = _verdicts(tmp_path, "2.5000e-03")
    assert all(c["verdict"] not in ("exact", "rounded") for c in got.get("2.5000e-03", []))


def test_zero_noise_reads_only_a_tiny_exponent_print_of_an_exact_zero() -> None:
    zero = arb(0)
    assert _zero_noise(zero, parse_printed("-5.9605e-08"))
    assert not _zero_noise(zero, parse_printed("-0.0000"))  # a fixed print: its rounding
    assert not _zero_noise(zero, parse_printed("2.5000e-03"))  # no float32 trace
    assert not _zero_noise(arb(1) / 3, parse_printed("5.9605e-08"))  # not zero
    assert float(ZERO_NOISE) == 2.0**-14
