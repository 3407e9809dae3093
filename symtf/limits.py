"""Resource bounds: what symtf reads, how large a model it evaluates, how long it runs.

Every bound is checked *before* the work it bounds: a path is inspected before
it is read (a FIFO or ``/dev/zero`` is refused, never drained), and a model's
size is estimated before its forward pass (10,000 tokens would need about
15 GB of exact values; they are refused in milliseconds with that estimate).

The estimate counts the entries a forward pass stores and the multiply–adds it
does, calibrated on exact SymPy evaluation on two cores (about
:data:`BYTES_PER_ENTRY` bytes per stored entry, :data:`SECONDS_PER_OP` seconds
per entry or multiply–add). It is a guide for messages and for the memory cap,
never part of a verdict.
"""

from __future__ import annotations

import ctypes
import glob
import math
import os
import re
import sys
from collections.abc import Iterator
from contextlib import contextmanager, suppress
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from symtf.errors import LimitError

#: Longest token sequence a forward pass may run over (prompt plus generated tokens).
MAX_SEQ_LEN = 512
#: Most transformer blocks (an encoder–decoder counts encoder and decoder layers together).
MAX_LAYERS = 64
#: Most attention heads per layer.
MAX_HEADS = 64
#: Largest vocabulary (the loader enforces the same number).
MAX_VOCAB = 5000
#: Largest estimated memory of one exact forward pass, in bytes.
MAX_ESTIMATED_BYTES = 2_000_000_000
#: Longest ``--timeout`` accepted, in seconds (one day).
MAX_TIMEOUT = 86_400.0
#: Calibration of the estimate (exact SymPy values plus their balls).
BYTES_PER_ENTRY = 1500
SECONDS_PER_OP = 25e-6
#: Bytes per stored entry and seconds per multiply–add of each backend, by its name: exact
#: SymPy values (with their cached balls), Python-level balls of 128–1024 bits, and the
#: float64 passes (a midpoint and a radius, or one float, in numpy arrays).
COSTS: dict[str, tuple[int, float]] = {
    "exact": (BYTES_PER_ENTRY, SECONDS_PER_OP),
    "ball": (200, 2e-6),
    "format-ball": (200, 2e-6),
    "midrad": (16, 5e-9),
    "float": (8, 2e-9),
    "format-sim": (8, 1e-7),
}
#: How a refusal names each backend's pass.
_PASS_WORDS = {
    "exact": "exactly",
    "ball": "even in certified balls",
    "format-ball": "even in certified balls",
    "midrad": "even in float64 midpoint–radius enclosures",
    "float": "even in float64",
    "format-sim": "even in a simulated number format",
}

LIMITS_HELP = f"""\
model limits, checked before evaluation (a refusal states its estimate of memory
and time): at most {MAX_SEQ_LEN} tokens per forward pass (prompt plus generated),
{MAX_LAYERS} layers, {MAX_HEADS} heads per layer, a vocabulary of {MAX_VOCAB:,} tokens, and an
estimated {MAX_ESTIMATED_BYTES // 1_000_000:,} MB for the pass that runs (a model too large for exact values
is checked by its float64 enclosures alone). --timeout takes 0 < SECONDS <= {MAX_TIMEOUT:,.0f}.
Only regular files are read (not FIFOs or devices), at most the size cap + 1 byte."""


# ----------------------------------------------------------------------------- options


def timeout_seconds(text: str) -> float:
    """An ``argparse`` type for ``--timeout``: a finite number with 0 < t <= :data:`MAX_TIMEOUT`.

    Raises:
        argparse.ArgumentTypeError: For ``nan``, ``inf``, ``1e308``, ``-1``, ``0`` or text.
    """
    import argparse

    try:
        t = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a number of seconds, found {text!r}") from None
    if not math.isfinite(t) or not 0 < t <= MAX_TIMEOUT:
        raise argparse.ArgumentTypeError(
            f"expected a number of seconds greater than 0 and at most {MAX_TIMEOUT:g}, found {text!r}"
        )
    return t


# ----------------------------------------------------------------------------- model size


@dataclass(frozen=True)
class Estimate:
    """The size of one exact forward pass, before it runs.

    Attributes:
        entries: Matrix entries the trace stores.
        ops: Multiply–adds of the matrix products.
    """

    entries: int
    ops: int
    backend: str = "exact"

    @property
    def bytes(self) -> int:
        """Estimated memory of the pass's values in its backend, in bytes."""
        return self.entries * COSTS.get(self.backend, COSTS["exact"])[0]

    @property
    def seconds(self) -> float:
        """Estimated time of the pass in its backend, in seconds."""
        return (self.entries + self.ops) * COSTS.get(self.backend, COSTS["exact"])[1]

    def within(self) -> bool:
        """Whether the pass fits the memory limit."""
        return self.bytes <= MAX_ESTIMATED_BYTES

    def describe(self) -> str:
        """``about 15 GB and 2 h`` — the estimate in words."""
        return f"about {_size(self.bytes)} and {_duration(self.seconds)}"


def _size(b: float) -> str:
    for unit, k in (("TB", 1e12), ("GB", 1e9), ("MB", 1e6)):
        if b >= k:
            return f"{b / k:.3g} {unit}"
    return f"{max(b / 1e3, 1):.3g} kB"


def _duration(s: float) -> str:
    for unit, k in (("days", 86400.0), ("h", 3600.0), ("min", 60.0)):
        if s >= k:
            return f"{s / k:.3g} {unit}"
    return f"{s:.2g} s"


def _pass(
    n: int, d: int, dh: int, heads: int, layers: int, d_ff: int, vocab: int, m: int = 0
) -> Estimate:
    """One decoder-style pass over ``n`` tokens (``m`` keys of cross-attention, if any)."""
    per_head = 3 * n * dh + 4 * n * n + n * dh
    head_ops = 3 * n * d * dh + 2 * n * n * dh
    if m:
        per_head += 4 * n * m + n * dh
        head_ops += 2 * n * d * dh + 2 * n * m * dh
    per_layer = heads * per_head + 12 * n * d + 3 * n * d_ff
    layer_ops = heads * head_ops + n * heads * dh * d + 2 * n * d * d_ff
    return Estimate(n * d * 3 + layers * per_layer + 2 * vocab, layers * layer_ops + d * vocab)


def estimate(model: Any, tokens: tuple[int, ...]) -> tuple[Estimate, int]:
    """The cost of evaluating a model on its input, and the longest sequence it runs over.

    Args:
        model: A loaded :class:`~symtf.spec.model.Model` (or encoder–decoder model).
        tokens: The prompt's token ids (decoders).
    """
    d = int(getattr(model, "d_model", 0) or 0)
    if getattr(model, "architecture", "none") == "none":
        return Estimate(0, 0), 0
    heads = int(getattr(model, "n_heads", 1) or 1)
    dh = int(getattr(model, "d_head", 0) or 0) or max(d // heads, 1)
    vocab = len(getattr(model, "vocab", ()) or ())
    g = getattr(model, "generate", None)
    gen_steps = int(getattr(g, "max_len", 0) or 0) if g is not None else 0
    width = int(getattr(g, "beam_width", 1) or 1) if g is not None and g.strategy == "beam" else 1
    if model.architecture == "encoder-decoder":
        src = len(model.source)
        tgt = max(len(model.target), gen_steps or 10) + 1
        enc = _pass(src, d, dh, heads, len(model.encoder), 4 * d, 0)
        dec = _pass(tgt, d, dh, 2 * heads, len(model.decoder), 4 * d, vocab, src)
        total = Estimate(enc.entries + dec.entries * (1 + width), enc.ops + dec.ops * (1 + width))
        return total, max(src, tgt)
    layers = getattr(model, "layers", ())
    d_ff = max((int(la.W1.cols) for la in layers), default=d)
    n = len(tokens) if model.architecture == "decoder" else int(model.embed.rows)
    one = _pass(n, d, dh, heads, len(layers), d_ff, vocab)
    if not gen_steps:
        return one, n
    # Decoding re-runs the decoder on every prefix (times the beam width).
    entries, ops = one.entries, one.ops
    for k in range(1, gen_steps + 1):
        p = _pass(n + k, d, dh, heads, len(layers), d_ff, vocab)
        entries += width * p.entries
        ops += width * p.ops
    return Estimate(entries, ops), n + gen_steps


def exact_out_of_reach(derivation: Any) -> bool:
    """Whether an exact pass of the derivation's model would be refused for its size.

    Such a model is checked by its certified float and ball passes alone, and its exact
    values are built only where those cannot decide (and refused there).
    """
    m = getattr(derivation, "model", None)
    if m is None or m.architecture == "none":
        return False
    return not estimate(m, derivation.tokens)[0].within()


def enforce(derivation: Any, backend: Any = None) -> None:
    """Refuse a model too large to evaluate in ``backend``, before any of it is evaluated.

    The caps on tokens, layers, heads and vocabulary hold for every backend; the memory
    estimate is the backend's own (:data:`COSTS`), so a model whose exact values would
    not fit can still run in midpoint–radius float64.

    Raises:
        LimitError: Naming the file and the key, with the estimate of memory and time.
    """
    m = derivation.model
    name = derivation.path
    if m.architecture == "none":
        return
    kind = str(getattr(backend, "name", "exact"))
    kind = kind if kind in COSTS else "exact"
    exact, seq = estimate(m, derivation.tokens)
    est = Estimate(exact.entries, exact.ops, kind)
    why = f"(a forward pass would take {est.describe()})"
    heads = int(getattr(m, "n_heads", 1) or 1)
    if m.architecture == "encoder-decoder":
        n_layers = len(m.encoder) + len(m.decoder)
        seq_key = "input.source / input.target / generate.max_len"
    else:
        n_layers = len(m.layers)
        seq_key = "input.tokens" if m.architecture == "decoder" else "model.embed"
        if getattr(m, "generate", None) is not None:
            seq_key += " + generate.max_len"
    if seq > MAX_SEQ_LEN:
        raise LimitError(
            f"{name}: {seq_key}: expected at most {MAX_SEQ_LEN} tokens per forward pass, "
            f"found {seq} {why}"
        )
    if n_layers > MAX_LAYERS:
        raise LimitError(
            f"{name}: model.layers: expected at most {MAX_LAYERS} layers, found {n_layers} {why}"
        )
    if heads > MAX_HEADS:
        raise LimitError(
            f"{name}: model.n_heads: expected at most {MAX_HEADS} heads, found {heads} {why}"
        )
    if len(getattr(m, "vocab", ()) or ()) > MAX_VOCAB:
        raise LimitError(
            f"{name}: model.vocab: expected at most {MAX_VOCAB} tokens, found {len(m.vocab)}"
        )
    if not est.within():
        raise LimitError(
            f"{name}: model: too large to evaluate {_PASS_WORDS[kind]}: {seq} tokens, "
            f"{n_layers} layers, "
            f"{heads} heads of width {m.d_head}, d_model {m.d_model} would take "
            f"{est.describe()} (the limit is {_size(MAX_ESTIMATED_BYTES)})"
        )


# ----------------------------------------------------------------------------- memory


#: The file being checked, named when memory runs out inside FLINT.
_current: list[str] = []
_flint_hook: Any = None


@contextmanager
def guard(name: str) -> Iterator[None]:
    """Turn running out of memory while working on ``name`` into a :class:`LimitError`.

    A Python ``MemoryError`` (SymPy, Python integers) is caught here; an
    allocation failure inside FLINT, which would abort the process, ends it
    with exit code 2 and the same kind of message (see :func:`install_flint_hook`).
    """
    _current.append(name)
    try:
        yield
    except MemoryError:
        raise LimitError(
            f"{name}: ran out of memory while evaluating it; make the model or input smaller"
        ) from None
    finally:
        _current.pop()


def install_flint_hook() -> bool:
    """Make a FLINT error (e.g. ``Unable to allocate memory``) exit 2 with a message.

    FLINT reports such errors by printing to stderr and calling ``abort()``. For
    the command line we register a handler (``flint_set_throw``) that names the
    file being checked and exits with code 2 instead. Returns whether the hook
    is installed (``False`` when the FLINT library cannot be located).
    """
    global _flint_hook
    if _flint_hook is not None:
        return True
    lib = _flint_library()
    if lib is None or not hasattr(lib, "flint_set_throw"):
        return False
    proto = ctypes.CFUNCTYPE(None, ctypes.c_int, ctypes.c_char_p, ctypes.c_void_p)

    def on_error(code: int, msg: bytes | None, args: int | None) -> None:  # pragma: no cover
        what = (msg or b"").decode("utf-8", "replace").strip()
        what = re.sub(r"\s*\([^)]*%[^)]*\)", "", what)  # "(%zu)": the size is not passed on
        what = re.sub(r"%\w+", "?", what).rstrip(".")
        where = _current[-1] if _current else "symtf"
        if "alloc" in what.lower():
            text = f"{where}: ran out of memory in certified arithmetic ({what}); make the model or input smaller"
        else:
            text = f"{where}: certified arithmetic failed ({what})"
        with suppress(Exception):
            sys.stdout.flush()
        os.write(2, f"symtf: error: {text}\n".encode("utf-8", "replace"))
        os._exit(2)

    _flint_hook = proto(on_error)
    lib.flint_set_throw(_flint_hook)
    return True


def _flint_library() -> Any:
    try:
        import flint
    except ImportError:  # pragma: no cover
        return None
    base = Path(flint.__file__).resolve().parent.parent
    for pattern in (
        "python_flint.libs/libflint*.so*",
        "flint/libflint*.so*",
        "flint.libs/libflint*",
    ):
        for path in sorted(glob.glob(str(base / pattern))):
            try:
                return ctypes.CDLL(path)
            except OSError:
                continue
    try:
        return ctypes.CDLL("libflint.so")
    except OSError:
        return None
