"""Weights from .npz, .npy and .safetensors files: exact values, limits, clear errors."""

from __future__ import annotations

import json
import os
import struct
from fractions import Fraction
from pathlib import Path

import numpy as np
import pytest
import sympy

from symtf import spec
from symtf.checking import compare
from symtf.checking.evaluation import Evaluator
from symtf.checking.report import DerivationReport
from symtf.cli import main
from symtf.errors import SpecError
from symtf.spec import weights

HEAD = """
title = "tiny, weights from a file"
{weights}

[model]
d_model = 2
n_heads = 1
vocab = ["a", "b"]
{model_extra}

[input]
tokens = ["a", "b"]
"""

CLAIMS = """
[[claims]]
label = "X"
step = "x"
row = 0
printed = "{x}"

[[claims]]
label = "A"
step = "l0.h0.pattern"
row = 1
printed = "0.6 0.4"

[[claims]]
label = "logits"
step = "logits"
printed = "0.10 -0.20"
"""

W = {
    "embed": np.array([[0.5, -1.25], [0.25, 2.0]], dtype=np.float32),
    "unembed": np.array([[1.0, -0.5], [0.5, 0.75]], dtype=np.float32),
    "l0.h0.W_Q": np.array([[1.0, 0.5], [0.0, 1.0]], dtype=np.float32),
    "l0.h0.W_K": np.array([[1.0, 0.0], [0.5, 1.0]], dtype=np.float32),
    "l0.h0.W_V": np.array([[1.0, 0.0], [0.0, 1.0]], dtype=np.float32),
    "l0.b1": np.array([0.125, -0.375], dtype=np.float32),
}

TYPED = """
embed = "0.5 -1.25\\n0.25 2"
unembed = "1 -0.5\\n0.5 0.75"
[[model.layers]]
b1 = "0.125 -0.375"
[[model.layers.heads]]
W_Q = "1 0.5\\n0 1"
W_K = "1 0\\n0.5 1"
W_V = "1 0\\n0 1"
"""


def _write(
    tmp_path: Path, arrays: dict[str, np.ndarray], toml_weights: str, extra: str = ""
) -> Path:
    np.savez(tmp_path / "w.npz", **arrays)
    p = tmp_path / "d.toml"
    p.write_text(
        HEAD.format(weights=toml_weights, model_extra=extra) + CLAIMS.format(x="0.5 -1.25"),
        encoding="utf-8",
    )
    return p


def _verdicts(report: DerivationReport) -> list[tuple]:
    return [(c.claim, c.index, c.verdict, c.expected, c.exact) for c in report.checks]


def test_file_weights_check_like_typed_weights(tmp_path: Path) -> None:
    typed = tmp_path / "typed.toml"
    typed.write_text(
        HEAD.format(weights="", model_extra=TYPED) + CLAIMS.format(x="0.5 -1.25"),
        encoding="utf-8",
    )
    from_file = _write(tmp_path, W, 'weights = "w.npz"')
    a = compare.check(spec.load(typed))
    b = compare.check(spec.load(from_file))
    assert _verdicts(a) == _verdicts(b)
    assert {c.verdict for c in b.checks} >= {"exact", "wrong"}


@pytest.mark.parametrize(
    "dtype, value, exact",
    [
        # the binary values of 0.1 in each format, worked out by hand from the bit patterns
        (np.float32, 0.1, Fraction(13421773, 2**27)),
        (np.float16, 0.1, Fraction(1638, 2**14)),
        (np.float64, 0.1, Fraction(3602879701896397, 2**55)),
    ],
)
def test_floats_are_read_as_their_exact_binary_values(
    tmp_path: Path, dtype: type, value: float, exact: Fraction
) -> None:
    arrays = {k: v.astype(dtype) for k, v in W.items()}
    arrays["embed"] = np.array([[value, 0], [0, 1]], dtype=dtype)
    p = _write(tmp_path, arrays, 'weights = "w.npz"')
    d = spec.load(p)
    assert d.model.embed[0, 0] == sympy.Rational(exact.numerator, exact.denominator)
    # the printed decimal expansion of the binary value is exact, not "rounded"
    text = p.read_text(encoding="utf-8").replace(
        'printed = "0.5 -1.25"', f'printed = "{_decimal(exact)} 0"'
    )
    p.write_text(text, encoding="utf-8")
    report = compare.check(spec.load(p))
    assert [c.verdict for c in report.checks if c.claim == "X"] == ["exact", "exact"]


def _decimal(q: Fraction) -> str:
    """The finite decimal expansion of a dyadic rational, by long division."""
    n = 0
    while (q * 10**n).denominator != 1:
        n += 1
    digits = str(int(q * 10**n)).rjust(n + 1, "0")
    return digits[:-n] + "." + digits[-n:]


def _safetensors(path: Path, tensors: dict[str, tuple[str, list[int], bytes]]) -> None:
    """Write a .safetensors file by the format's definition."""
    header, blobs, offset = {}, [], 0
    for name, (dtype, shape, data) in tensors.items():
        header[name] = {
            "dtype": dtype,
            "shape": shape,
            "data_offsets": [offset, offset + len(data)],
        }
        blobs.append(data)
        offset += len(data)
    h = json.dumps(header).encode()
    path.write_bytes(struct.pack("<Q", len(h)) + h + b"".join(blobs))


def test_safetensors_with_bfloat16_float16_float32_float64(tmp_path: Path) -> None:
    t = {k: ("F32", list(v.shape), v.astype("<f4").tobytes()) for k, v in W.items()}
    # bfloat16 0x3DCD is 0.10009765625 = 205/2048; float16 0x2E66 is 0.0999755859375
    t["embed"] = ("BF16", [2, 2], struct.pack("<4H", 0x3DCD, 0, 0, 0x3F80))
    t["unembed"] = ("F16", [2, 2], struct.pack("<4H", 0x2E66, 0, 0, 0x3C00))
    t["l0.h0.W_V"] = ("F64", [2, 2], struct.pack("<4d", 1.0, 0.0, 0.0, 1.0))
    _safetensors(tmp_path / "w.safetensors", t)
    p = tmp_path / "d.toml"
    p.write_text(
        HEAD.format(weights='weights = "w.safetensors"', model_extra="") + CLAIMS.format(x="0 0"),
        encoding="utf-8",
    )
    d = spec.load(p)
    assert d.model.embed[0, 0] == sympy.Rational(205, 2048)
    assert d.model.embed[1, 1] == 1
    assert d.model.unembed[0, 0] == sympy.Rational(819, 8192)


def test_npy_and_a_map_to_the_files_names(tmp_path: Path) -> None:
    np.save(tmp_path / "table.npy", W["embed"])
    p = tmp_path / "d.toml"
    model = TYPED.replace('embed = "0.5 -1.25\\n0.25 2"\n', "")
    p.write_text(
        HEAD.format(
            weights='[weights]\nfile = "table.npy"\nmap = { embed = "table" }', model_extra=""
        ).replace("[model]", "[model]" + model.split("[[model.layers]]")[0])
        + "\n".join(["[[model.layers]]", *TYPED.split("[[model.layers]]")[1].splitlines()[1:]])
        + CLAIMS.format(x="0.5 -1.25"),
        encoding="utf-8",
    )
    d = spec.load(p)
    assert d.model.embed[0, 1] == sympy.Rational(-5, 4)


def _large(tmp_path: Path, hidden: int) -> Path:
    rng = np.random.default_rng(1)
    arrays = dict(W)
    # random float32: no two entries of a W1 column are equal, so no ReLU input is exactly 0
    arrays["l0.W1"] = rng.standard_normal((2, hidden)).astype(np.float32)
    arrays["l0.W2"] = (rng.standard_normal((hidden, 2)) / 64).astype(np.float32)
    arrays["l0.b1"] = np.zeros(hidden, dtype=np.float32)
    return _write(tmp_path, arrays, 'weights = "w.npz"', f"d_ff = {hidden}")


def test_large_weights_stay_arrays_and_the_exact_trace_is_not_computed(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    p = _large(tmp_path, 10_001)  # 40,000 FFN entries: beyond the TOML cap and MAX_DIM
    d = spec.load(p)
    assert isinstance(d.model.layers[0].W1, weights.FileMatrix)
    ev = Evaluator(d)
    assert ev.lazy_exact
    report = compare.check(d)
    assert report.trace is None  # every verdict was decided without SymPy
    assert all(c.extra.get("decided_by", "").startswith(("midrad", "arb")) for c in report.checks)
    # the arb_mat path alone gives the same verdicts
    monkeypatch.setattr(Evaluator, "midrad", False)
    arb_only = compare.check(d)
    assert _verdicts(arb_only) == _verdicts(report)
    assert all(c.extra.get("decided_by", "").startswith("arb") for c in arb_only.checks)


def _exit2(tmp_path: Path, capsys: pytest.CaptureFixture, p: Path, *says: str) -> None:
    assert main(["check", str(p)]) == 2
    err = capsys.readouterr().err
    assert "Traceback" not in err
    for s in says:
        assert s in err, err


def test_wrong_shaped_array_exits_2_naming_file_and_array(tmp_path, capsys) -> None:
    arrays = dict(W)
    arrays["l0.h0.W_K"] = np.zeros((3, 2), dtype=np.float32)
    p = _write(tmp_path, arrays, 'weights = "w.npz"')
    _exit2(tmp_path, capsys, p, "w.npz", "'l0.h0.W_K'", "expected shape 2x2, found 3x2")


def test_missing_mapped_array_exits_2(tmp_path, capsys) -> None:
    p = _write(tmp_path, W, '[weights]\nfile = "w.npz"\nmap = { embed = "wte" }')
    _exit2(tmp_path, capsys, p, "w.npz", "'wte'")


def test_missing_required_weight_exits_2(tmp_path, capsys) -> None:
    arrays = {k: v for k, v in W.items() if k != "l0.h0.W_K"}
    p = _write(tmp_path, arrays, 'weights = "w.npz"')
    _exit2(tmp_path, capsys, p, "W_K", "required")


def test_mistyped_array_exits_2(tmp_path, capsys) -> None:
    arrays = dict(W)
    arrays["embed"] = np.array([[1, 0], [0, 1]], dtype=np.int64)
    p = _write(tmp_path, arrays, 'weights = "w.npz"')
    _exit2(tmp_path, capsys, p, "w.npz", "'embed'", "int64")


def test_nan_and_typo_and_duplicate_exit_2(tmp_path, capsys) -> None:
    arrays = dict(W)
    arrays["embed"] = np.array([[np.nan, 0], [0, 1]], dtype=np.float32)
    _exit2(tmp_path, capsys, _write(tmp_path, arrays, 'weights = "w.npz"'), "'embed'", "NaN")
    arrays = dict(W)
    arrays["l0.h0.W_q"] = arrays.pop("l0.h0.W_Q")
    _exit2(tmp_path, capsys, _write(tmp_path, arrays, 'weights = "w.npz"'), "'l0.h0.W_q'")
    p = _write(tmp_path, W, 'weights = "w.npz"', 'embed = "1 0\\n0 1"')
    _exit2(tmp_path, capsys, p, "model.embed", "keep one")


def test_only_regular_files_are_read(tmp_path, capsys) -> None:
    (tmp_path / "dir.npz").mkdir()
    p = _write(tmp_path, W, 'weights = "dir.npz"')
    _exit2(tmp_path, capsys, p, "dir.npz", "a regular file", "found a folder")
    os.mkfifo(tmp_path / "pipe.npz")
    p = _write(tmp_path, W, 'weights = "pipe.npz"')
    _exit2(tmp_path, capsys, p, "pipe.npz", "a regular file", "found a FIFO")
    if os.path.exists("/dev/zero"):  # a link out of the folder is refused before it is looked at
        (tmp_path / "zero.npz").symlink_to("/dev/zero")
        p = _write(tmp_path, W, 'weights = "zero.npz"')
        _exit2(tmp_path, capsys, p, "zero.npz", "symbolic link", "--allow-path")
    p = _write(tmp_path, W, 'weights = "absent.npz"')
    _exit2(tmp_path, capsys, p, "absent.npz")
    p = _write(tmp_path, W, 'weights = "w.txt"')
    _exit2(tmp_path, capsys, p, "w.txt", ".npz, .npy or .safetensors")


def test_paths_are_relative_to_the_derivation(tmp_path, monkeypatch) -> None:
    sub = tmp_path / "sub"
    sub.mkdir()
    p = _write(sub, W, 'weights = "w.npz"')
    monkeypatch.chdir(tmp_path)
    assert spec.load(Path("sub") / p.name).model.embed[1, 1] == 2


def test_entry_limit_is_checked_before_reading(tmp_path, capsys, monkeypatch) -> None:
    monkeypatch.setattr(weights, "MAX_FILE_ENTRIES", 10)
    p = _write(tmp_path, W, 'weights = "w.npz"')
    _exit2(tmp_path, capsys, p, "w.npz", "exceed 10 entries")


def test_bad_safetensors_exit_2(tmp_path, capsys) -> None:
    t = {k: ("F32", list(v.shape), v.astype("<f4").tobytes()) for k, v in W.items()}
    t["embed"] = ("F32", [2, 2], b"\0" * 12)  # 3 values for 4
    _safetensors(tmp_path / "w.safetensors", t)
    p = tmp_path / "d.toml"
    p.write_text(
        HEAD.format(weights='weights = "w.safetensors"', model_extra="") + CLAIMS.format(x="0 0")
    )
    _exit2(tmp_path, capsys, p, "w.safetensors", "'embed'", "offsets")
    (tmp_path / "w.safetensors").write_bytes(struct.pack("<Q", 10**12) + b"{}")
    _exit2(tmp_path, capsys, p, "w.safetensors", "header length")


def test_weights_table_errors(tmp_path) -> None:
    for w, says in (
        ("weights = 3", "expected a file name or a table"),
        ('[weights]\nfile = "w.npz"\nmapping = {}', "unknown key"),
        ("[weights]\nmap = {}", "weights.file"),
    ):
        p = _write(tmp_path, W, w)
        with pytest.raises(SpecError, match=says):
            spec.load(p)
