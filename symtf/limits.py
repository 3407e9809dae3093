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

Each pass is sized in its own backend (:func:`cost`) and, for the certified float and
ball passes, from the nodes it evaluates (:func:`graph_estimate`): the balls a number
left open in float64 needs are those of what its step is computed from, with the
weights they convert. A model is refused only when the pass that would run does not
fit; a number no pass can decide is *undecided*, with the estimates that refused them.
"""

from __future__ import annotations

import ctypes
import glob
import math
import os
import re
import sys
from collections.abc import Callable, Collection, Iterable, Iterator, Mapping
from contextlib import contextmanager, suppress
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from symtf.errors import LimitError

# ----------------------------------------------------------------------------- what a file holds
# The one table of input sizes. A derivation file is read within them (symtf.spec), and
# an article's draft is written within them (symtf.draft): what ``draft`` writes,
# ``check`` reads, and an article over one of them is refused at its own line.

#: Largest derivation file, in bytes (a draft is written within it too).
MAX_FILE_BYTES = 2_000_000
#: Largest article (Markdown, LaTeX, plain text or a notebook), in bytes.
MAX_ARTICLE_BYTES = 5_000_000
#: Most entries of one tensor: given, printed, or made by an op (``zeros``, ``eye``).
MAX_ENTRIES = 20_000
#: Most rows or columns of a matrix (most entries along any axis of a tensor).
MAX_DIM = 512
#: Most axes of a tensor.
MAX_NDIM = 4
#: Most characters of one matrix written as text (rows of numbers).
MAX_MATRIX_CHARS = 400_000


def shape_refusal(shape: tuple[int, ...]) -> str | None:
    """Why a tensor of ``shape`` is over the limits (``expected …, found …``), or ``None``."""
    if len(shape) > MAX_NDIM:
        return f"expected at most {MAX_NDIM} dimensions, found {len(shape)}"
    if any(n > MAX_DIM for n in shape) or math.prod(shape) > MAX_ENTRIES:
        found = "x".join(map(str, shape))
        return (
            f"expected at most {MAX_DIM} rows or columns and {MAX_ENTRIES:,} entries, "
            f"found {found} ({math.prod(shape):,} entries)"
        )
    return None


def text_refusal(chars: int) -> str | None:
    """Why a matrix written in ``chars`` characters is over the limit, or ``None``."""
    if chars > MAX_MATRIX_CHARS:
        return f"expected a matrix of at most {MAX_MATRIX_CHARS:,} characters, found {chars:,}"
    return None


# ----------------------------------------------------------------------------- what a model is

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
#: Largest ``x`` of ``e^x``, in a step and in displayed arithmetic alike: e^10000 has 4,343
#: digits before the point, and an exponent of e larger than that (``exp(exp(exp(1000)))``)
#: gives a value no enclosure can pin. A very negative exponent is fine (e^x is then a tiny
#: positive number: a manual softmax of scores masked with −10⁹).
MAX_EXP_ARGUMENT = 10_000
#: What a refused exponent of e is told (:data:`MAX_EXP_ARGUMENT`), wherever it is refused.
EXP_ARGUMENT_REFUSED = (
    f"expected an exponent of e of at most {MAX_EXP_ARGUMENT:,} but found a larger one"
)
#: Calibration of the estimate (exact SymPy values plus their balls).
BYTES_PER_ENTRY = 1500
SECONDS_PER_OP = 25e-6


@dataclass(frozen=True)
class Cost:
    """What one backend spends on a pass, per unit of work.

    Attributes:
        entry_bytes: Bytes per stored entry of the trace.
        weight_bytes: Bytes per entry of a weight matrix the pass converts into its
            numbers and keeps (a weights file's floats as balls); ``0`` where the
            calibration of ``entry_bytes`` already includes them.
        entry_seconds: Seconds per stored entry (the elementwise work around it).
        op_seconds: Seconds per multiply–add of a matrix product.
    """

    entry_bytes: float
    weight_bytes: float
    entry_seconds: float
    op_seconds: float


#: Each backend's cost by its name: exact SymPy values (with their cached balls), the
#: float64 passes (a midpoint and a radius, or one float, in numpy arrays; midpoint–radius
#: keeps about 20 bytes per weight, as measured: a zero radius, |W| and |W| rounded up to
#: binary32), a simulated number format. Balls depend on their precision: see :func:`cost`.
COSTS: dict[str, Cost] = {
    "exact": Cost(BYTES_PER_ENTRY, 0, SECONDS_PER_OP, SECONDS_PER_OP),
    "midrad": Cost(16, 20, 2e-8, 1e-9),
    "float": Cost(8, 0, 2e-9, 2e-9),
    "format-sim": Cost(8, 0, 1e-7, 1e-7),
}
#: Balls of 128 bits (python-flint ``arb``/``arb_mat``, measured on one core): about 70
#: bytes per stored entry, 48 per weight converted to a ball (a float is exact in one),
#: a microsecond of Python-level work per entry and 30 ns per multiply–add of ``arb_mat``.
BALL_128 = Cost(70, 48, 1e-6, 3e-8)
_BALLS = ("ball", "format-ball")


def cost(kind: str, prec: int = 128) -> Cost:
    """The :class:`Cost` of backend ``kind``; balls at ``prec`` bits.

    A ball's midpoint past two limbs (128 bits) takes ``prec/8`` bytes more, and its
    products about ``(prec/128)^0.4`` times as long (measured up to 1024 bits).
    """
    if kind not in _BALLS:
        return COSTS.get(kind, COSTS["exact"])
    extra = max(prec - 128, 0) / 8
    slow = max(prec / 128, 1.0) ** 0.4
    b = BALL_128
    return Cost(b.entry_bytes + extra, b.weight_bytes, b.entry_seconds, b.op_seconds * slow)


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
is checked by its float64 enclosures and the balls of what each open number is computed
from). --timeout takes 0 < SECONDS <= {MAX_TIMEOUT:,.0f}.
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


def percent(text: str) -> float:
    """An ``argparse`` type for ``--require-checked``: a finite percentage from 0 to 100.

    Raises:
        argparse.ArgumentTypeError: For ``nan``, ``-5``, ``101`` or text.
    """
    import argparse

    try:
        p = float(text.strip().removesuffix("%"))
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a percentage, found {text!r}") from None
    if not math.isfinite(p) or not 0 <= p <= 100:
        raise argparse.ArgumentTypeError(f"expected a percentage from 0 to 100, found {text!r}")
    return p


# ----------------------------------------------------------------------------- model size


@dataclass(frozen=True)
class Estimate:
    """The size of one forward pass in one backend, before it runs.

    Attributes:
        entries: Matrix entries the trace stores.
        ops: Multiply–adds of the matrix products.
        backend: The backend's name (a key of :data:`COSTS`, or ``ball``).
        weights: Entries of the weight matrices the pass converts into its numbers
            (counted for the passes that keep them converted: balls, midpoint–radius).
        prec: The working precision of a ball pass, in bits.
    """

    entries: int
    ops: int
    backend: str = "exact"
    weights: int = 0
    prec: int = 128

    @property
    def bytes(self) -> int:
        """Estimated memory of the pass's values in its backend, in bytes."""
        c = cost(self.backend, self.prec)
        return int(self.entries * c.entry_bytes + self.weights * c.weight_bytes)

    @property
    def seconds(self) -> float:
        """Estimated time of the pass in its backend, in seconds."""
        c = cost(self.backend, self.prec)
        return self.entries * c.entry_seconds + self.ops * c.op_seconds

    def within(self) -> bool:
        """Whether the pass fits the memory limit."""
        return self.bytes <= MAX_ESTIMATED_BYTES

    def describe(self) -> str:
        """``about 15 GB and 2 h`` — the estimate in words."""
        return f"about {_size(self.bytes)} and {duration(self.seconds)}"


def graph_estimate(
    nodes: Iterable[Any],
    shapes: Mapping[str, tuple[int, ...] | None],
    keep: Collection[str] | None,
    backend: str,
    prec: int = 128,
) -> Estimate | None:
    """The cost of evaluating a step graph's nodes (only those in ``keep``, if given).

    Counted from the graph itself: each node's entries from its shape, the multiply–adds
    of each product (its entries times its first input's last dimension: ``matmul``,
    ``linear``), and the entries of the weight matrices its nodes read, once each. This
    is the pass that runs, so a step of layer 0 of a 12-layer model costs layer 0.

    Args:
        nodes: The graph's nodes (:class:`symtf.graph.core.Node`), in order.
        shapes: Each node's shape (:meth:`symtf.graph.core.Graph.shapes`).
        keep: The names evaluated (``None``: every node).
        backend: The backend's name.
        prec: The working precision of a ball pass.

    Returns:
        The estimate, or ``None`` when a node's size is known only from values (a
        decoding step): the caller then estimates from the model.
    """
    entries = ops = weights = 0
    seen: set[int] = set()
    for node in nodes:
        if keep is not None and node.name not in keep:
            continue
        if node.unroll:
            return None
        shape = shapes.get(node.name)
        if shape is None:
            if getattr(node.op, "tensor_out", False):
                return None  # a tensor whose size only its values tell
            continue  # an outcome (token ids, a verdict), not stored entries
        n = math.prod(shape)
        entries += n
        if getattr(node.op, "name", "") in ("matmul", "linear") and node.args:
            first = shapes.get(node.args[0])
            ops += n * (first[-1] if first else 1)
        for v in node.params.values():
            dims = getattr(v, "shape", None)
            if (
                isinstance(dims, tuple)
                and len(dims) == 2
                and all(isinstance(k, int) for k in dims)
                and id(v) not in seen
            ):
                seen.add(id(v))
                weights += dims[0] * dims[1]
    return Estimate(entries, ops, backend, weights, prec)


def _size(b: float) -> str:
    for unit, k in (("TB", 1e12), ("GB", 1e9), ("MB", 1e6)):
        if b >= k:
            return f"{b / k:.3g} {unit}"
    return f"{max(b / 1e3, 1):.3g} kB"


def duration(s: float) -> str:
    """``2.5 min``, ``8.35 h``: seconds in words."""
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
    layer_weights = heads * 3 * d * dh + heads * dh * d + 2 * d * d_ff
    return Estimate(
        n * d * 3 + layers * per_layer + 2 * vocab,
        layers * layer_ops + d * vocab,
        weights=layers * layer_weights + d * vocab,
    )


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
        total = Estimate(
            enc.entries + dec.entries * (1 + width),
            enc.ops + dec.ops * (1 + width),
            weights=enc.weights + dec.weights,
        )
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
    return Estimate(entries, ops, weights=one.weights), n + gen_steps


def exact_out_of_reach(derivation: Any) -> bool:
    """Whether an exact pass of the derivation's model would be refused for its size.

    Such a model is checked by its certified float and ball passes alone, and its exact
    values are built only where those cannot decide (and refused there).
    """
    m = getattr(derivation, "model", None)
    if m is None or m.architecture == "none":
        return False
    return not estimate(m, derivation.tokens)[0].within()


def enforce(
    derivation: Any,
    backend: Any = None,
    size: Callable[[], Estimate | None] | None = None,
    what: str = "",
) -> None:
    """Refuse a model too large to evaluate in ``backend``, before any of it is evaluated.

    The caps on tokens, layers, heads and vocabulary hold for every backend; the memory
    estimate is the backend's own (:func:`cost`), so a model whose exact values would
    not fit can still run in midpoint–radius float64 or in balls.

    Args:
        derivation: The derivation whose model is evaluated.
        backend: The backend of the pass (exact when ``None``).
        size: The pass's own estimate (:func:`graph_estimate`), asked for once the caps
            hold and when the whole model's estimate is over half the limit; ``None`` (or
            a ``None`` from it): the whole model's, from its shape.
        what: The part of the model the pass evaluates, in words ("what l3.ffn_out is
            computed from"), for the refusal; empty for the whole model.

    Raises:
        LimitError: Naming the file and the key, with the estimate of memory and time.
    """
    m = derivation.model
    name = derivation.path
    if m.architecture == "none":
        return
    kind = str(getattr(backend, "name", "exact"))
    kind = kind if kind in COSTS or kind in _BALLS else "exact"
    prec = int(getattr(backend, "prec", 128) or 128)
    whole, seq = estimate(m, derivation.tokens)
    est = Estimate(whole.entries, whole.ops, kind, whole.weights, prec)
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
    # The pass's own count walks its graph: asked for only when the whole model's comes
    # near the limit (a small model pays nothing for it).
    own = size() if size is not None and est.bytes * 2 > MAX_ESTIMATED_BYTES else None
    if own is not None:
        est = own
    else:
        what = ""  # the whole model's estimate
    if not est.within():
        words = _PASS_WORDS[kind] + (f" of {prec} bits" if kind in _BALLS else "")
        part = f"{what} " if what else ""
        raise LimitError(
            f"{name}: model: too large to evaluate {part}{words}: {seq} tokens, "
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
        from symtf.visible import block

        os.write(2, f"symtf: error: {block(text)}\n".encode("utf-8", "replace"))
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
