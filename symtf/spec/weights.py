"""Weights from files: ``.npz``, ``.npy`` and ``.safetensors``, read as exact dyadic rationals.

A derivation names its weights file at the top level::

    weights = "model.npz"            # arrays named embed, l0.h0.W_Q, l0.W1, ...

    [weights]                        # or: the file and a map to the file's own names
    file = "model.safetensors"
    map = { embed = "wte", "l0.h0.W_Q" = "h.0.attn.q" }

Canonical names: ``embed``, ``pos``, ``unembed``, ``lnf_gamma``, ``lnf_beta``;
per layer ``l{i}.`` + ``W_O``, ``b_O``, ``W1``, ``b1``, ``W2``, ``b2``, ``W3``,
``b3``, ``ln1_gamma``, ``ln1_beta``, ``ln2_gamma``, ``ln2_beta``; per head
``l{i}.h{k}.`` + ``W_Q``, ``W_K``, ``W_V``, ``b_Q``, ``b_K``, ``b_V``. Without a
map every array of the file must have a canonical name (a typo is an error, not
an ignored array); with a map only the mapped arrays are read.

float16, bfloat16, float32 and float64 values are dyadic rationals, and they are
read as exactly those (the float64 that holds each is the same number); never
through decimal text. The file is read only if it is a regular file, relative
to the derivation's folder; its arrays' headers are checked (type, shape, at
most :data:`MAX_FILE_ENTRIES` entries in all) before any data is read.

Small weights (at most the TOML limits, 20,000 entries) become SymPy matrices
like typed ones. Larger ones stay :class:`FileMatrix` arrays: the certified
path runs them in midpoint–radius float64 (:mod:`symtf.backends.midrad`) and balls, and
the exact SymPy path is taken only if a verdict needs it.

The ``.safetensors`` reader is this module's own (the format is an 8-byte
little-endian header length, a JSON header of dtype/shape/offsets, then raw
little-endian data); it needs no package and reads bfloat16, which numpy lacks.
"""

from __future__ import annotations

import json
import re
import struct
import zipfile
from collections.abc import Iterator
from contextvars import ContextVar
from dataclasses import dataclass
from pathlib import Path
from typing import IO, TYPE_CHECKING, Any, cast

import numpy as np
import sympy

from symtf import files
from symtf.errors import SpecError

if TYPE_CHECKING:
    from flint import arb_mat

#: Most entries all arrays of one weights file may have together.
MAX_FILE_ENTRIES = 10**8
#: Largest dimension (rows, columns, d_model, …) a derivation with a weights file may have.
MAX_FILE_DIM = 1 << 16
#: Largest weights file, in bytes (100,000,000 float64 entries and their headers).
MAX_WEIGHTS_BYTES = 1_000_000_000
#: Largest total a .npz archive may declare for its members, in bytes, when they are
#: compressed more than :data:`MAX_ZIP_RATIO` to one (a zip bomb is refused unopened).
MAX_ZIP_INFLATED = 64_000_000
MAX_ZIP_RATIO = 100
#: Largest safetensors JSON header, in bytes.
MAX_HEADER_BYTES = 100_000_000
#: Weights files with at most this many entries in all become SymPy matrices (the TOML cap).
SMALL_ENTRIES = 20_000

#: Every matrix a model may give, by where it sits: the names a weights file may use
#: (``l0.h1.W_Q``), also the matrices ``symtf whatif`` can make symbolic.
MODEL_MATRICES = ("embed", "pos", "unembed", "lnf_gamma", "lnf_beta")
LAYER_MATRICES = (
    "W_O",
    "b_O",
    "W1",
    "b1",
    "W2",
    "b2",
    "W3",
    "b3",
    "ln1_gamma",
    "ln1_beta",
    "ln2_gamma",
    "ln2_beta",
)
HEAD_MATRICES = ("W_Q", "W_K", "W_V", "b_Q", "b_K", "b_V")
_CANONICAL = re.compile(
    r"^(?:(?P<model>" + "|".join(MODEL_MATRICES) + r")"
    r"|l(?P<layer>\d{1,4})\.(?:(?P<lname>" + "|".join(LAYER_MATRICES) + r")"
    r"|h(?P<head>\d{1,4})\.(?P<hname>" + "|".join(HEAD_MATRICES) + r")))$"
)

_NPY_DTYPES = {"<f2": "float16", "<f4": "float32", "<f8": "float64"}
_ST_DTYPES = {"F16": ("<f2", 2), "BF16": ("<u2", 2), "F32": ("<f4", 4), "F64": ("<f8", 8)}

#: Set while a derivation with a weights file is read (raises the dimension limits).
FILE_WEIGHTS: ContextVar[bool] = ContextVar("symtf_file_weights", default=False)


# ----------------------------------------------------------------------------- exact matrices


class FileMatrix:
    """An exact matrix of dyadic rationals from a weights file, held as float64.

    It answers the parts of SymPy's matrix interface the pipeline uses
    (``rows``, ``cols``, ``shape``, ``[i, j]``, slices, ``T``, ``tolist``);
    entries are exact ``sympy.Rational`` values of the floats.

    Attributes:
        float64: The values, a read-only 2-D float64 array (exactly the file's numbers).
        source: ``file: array`` for messages.
    """

    __slots__ = ("_arb", "_midrad", "float64", "source")

    def __init__(self, array: np.ndarray, source: str) -> None:
        a = np.asarray(array, dtype=np.float64)
        a.setflags(write=False)
        self.float64 = a
        self.source = source
        self._midrad: Any = None
        self._arb: arb_mat | None = None

    @property
    def rows(self) -> int:
        return int(self.float64.shape[0])

    @property
    def cols(self) -> int:
        return int(self.float64.shape[1])

    @property
    def shape(self) -> tuple[int, int]:
        return cast(tuple[int, int], self.float64.shape)  # a weights array is 2-D

    def __getitem__(self, key: Any) -> Any:
        if isinstance(key, tuple) and all(isinstance(k, (int, np.integer)) for k in key):
            return _rational(float(self.float64[key]))
        sub = self.float64[key]
        if sub.ndim != 2:
            raise TypeError("a FileMatrix slice must keep two dimensions")
        return FileMatrix(sub, self.source)

    @property
    def T(self) -> FileMatrix:
        return FileMatrix(self.float64.T, self.source)

    def __iter__(self) -> Iterator[sympy.Rational]:
        for x in self.float64.flat:
            yield _rational(float(x))

    def tolist(self) -> list[list[sympy.Rational]]:
        return [[_rational(float(x)) for x in row] for row in self.float64]

    def to_sympy(self) -> sympy.ImmutableMatrix:
        """The exact SymPy matrix (slow for large weights: the exact path only)."""
        return sympy.ImmutableMatrix(self.tolist())

    def __repr__(self) -> str:
        return f"FileMatrix({self.source}, {self.rows}x{self.cols})"


def _rational(x: float) -> sympy.Rational:
    """The exact value of a float (never through decimal)."""
    p, q = x.as_integer_ratio()
    return sympy.Rational(p, q)


@dataclass(frozen=True)
class FileArray:
    """One array read from a weights file, waiting for its place in the model.

    Attributes:
        array: The values as float64 (exact), 1-D or 2-D.
        file: The file, as the derivation names it.
        name: The array's name in the file.
        small: Whether the file's weights become SymPy matrices.
    """

    array: np.ndarray
    file: str
    name: str
    small: bool

    def matrix(self, where: str, shape: tuple[int | None, int | None]) -> Any:
        """The array as a model matrix of the expected shape.

        A 1-D array of ``d`` values is a ``1 x d`` row (a bias or a norm's weights).

        Raises:
            SpecError: Naming the key, the file and the array, when the shape does not fit.
        """
        a = self.array
        if a.ndim == 1:
            a = a.reshape(1, -1)
        rows, cols = shape
        if (rows is not None and a.shape[0] != rows) or (cols is not None and a.shape[1] != cols):
            want = f"{rows if rows is not None else 'any'}x{cols if cols is not None else 'any'}"
            found = "x".join(str(k) for k in self.array.shape)
            raise SpecError(
                f"{where}: weights file {self.file}, array {self.name!r}: "
                f"expected shape {want}, found {found}"
            )
        if self.small:
            return FileMatrix(a, f"{self.file}: {self.name}").to_sympy()
        return FileMatrix(a, f"{self.file}: {self.name}")


# ----------------------------------------------------------------------------- reading files


def _open(path: Path, shown: str, roots: tuple[str, ...] | None) -> Any:
    """Open a weights file through the one reader (a regular file of at most the cap)."""
    return files.open_binary(
        path, MAX_WEIGHTS_BYTES, name=f"weights: {shown}", what="a weights file", roots=roots
    )


class _Budget:
    """Counts entries against :data:`MAX_FILE_ENTRIES` before any data is read."""

    def __init__(self, shown: str) -> None:
        self.left = MAX_FILE_ENTRIES
        self.total = 0
        self.shown = shown

    def take(self, name: str, shape: tuple[int, ...]) -> None:
        n = 1
        for k in shape:
            n *= k
        self.total += n
        if n > self.left:
            raise SpecError(
                f"weights: {self.shown}, array {name!r}: the file's arrays exceed "
                f"{MAX_FILE_ENTRIES:,} entries in all"
            )
        self.left -= n


def _check_shape(shown: str, name: str, shape: tuple[int, ...]) -> None:
    if len(shape) not in (1, 2) or any(k <= 0 for k in shape):
        raise SpecError(
            f"weights: {shown}, array {name!r}: expected a 1-D or 2-D array with entries, "
            f"found shape {'x'.join(map(str, shape)) or '()'}"
        )
    if max(shape) > MAX_FILE_DIM:
        raise SpecError(
            f"weights: {shown}, array {name!r}: expected at most {MAX_FILE_DIM} rows or columns, "
            f"found shape {'x'.join(map(str, shape))}"
        )


def _finite(shown: str, name: str, a: np.ndarray) -> np.ndarray:
    if not np.all(np.isfinite(a)):
        raise SpecError(f"weights: {shown}, array {name!r}: contains NaN or infinite values")
    return a


def _read_npy(f: IO[bytes], shown: str, name: str, budget: _Budget) -> np.ndarray:
    """One .npy stream: header checked (dtype, shape, budget) before the data is read."""
    fmt = np.lib.format
    try:
        version = fmt.read_magic(f)
        if version == (1, 0):
            shape, fortran, dtype = fmt.read_array_header_1_0(f)
        elif version in ((2, 0), (3, 0)):
            shape, fortran, dtype = fmt.read_array_header_2_0(f)
        else:
            raise ValueError(f"unknown .npy version {version}")
    except SpecError:
        raise
    except (ValueError, OSError, EOFError, SyntaxError, TypeError, MemoryError, RecursionError):
        # numpy's messages quote the bytes it found: say what is wrong, never what is there.
        raise SpecError(
            f"weights: {shown}, array {name!r}: not a .npy array (no valid .npy magic and header)"
        ) from None
    try:
        dt = np.dtype(dtype)
        shape = tuple(int(k) for k in shape)
    except (TypeError, ValueError):
        raise SpecError(
            f"weights: {shown}, array {name!r}: not a .npy array (bad header)"
        ) from None
    key = dt.newbyteorder("<").str if dt.byteorder == ">" else dt.str
    if key not in _NPY_DTYPES and dt.str not in (">f2", ">f4", ">f8"):
        raise SpecError(
            f"weights: {shown}, array {name!r}: expected float16, bfloat16, float32 or float64, "
            f"found {str(dt)[:40]}"
        )
    _check_shape(shown, name, shape)
    budget.take(name, shape)
    count = int(np.prod(shape))
    data = f.read(count * dt.itemsize)
    if len(data) != count * dt.itemsize:
        raise SpecError(f"weights: {shown}, array {name!r}: the data ends early")
    a = np.frombuffer(data, dtype=dt).reshape(shape, order="F" if fortran else "C")
    return _finite(shown, name, a.astype(np.float64))


def _read_npz(
    path: Path, shown: str, wanted: set[str] | None, roots: tuple[str, ...] | None = None
) -> tuple[dict[str, np.ndarray], int]:
    budget = _Budget(shown)
    out: dict[str, np.ndarray] = {}
    with _open(path, shown, roots) as raw:
        try:
            z = zipfile.ZipFile(raw)
        except (zipfile.BadZipFile, OSError, ValueError, EOFError, NotImplementedError):
            raise SpecError(
                f"weights: {shown}: not a .npz archive (no valid zip directory)"
            ) from None
        with z:
            members = z.infolist()
            _check_archive(shown, members, wanted)
            for info in members:
                if not info.filename.endswith(".npy"):
                    raise SpecError(
                        f"weights: {shown}: expected only .npy members, found {info.filename[:80]!r}"
                    )
                name = info.filename[:-4]
                if wanted is not None and name not in wanted:
                    continue
                try:
                    with z.open(info) as f:
                        out[name] = _read_npy(f, shown, name, budget)
                except SpecError:
                    raise
                except (
                    zipfile.BadZipFile,
                    OSError,
                    EOFError,
                    ValueError,
                    NotImplementedError,
                    RuntimeError,
                ) as e:
                    why = "encrypted" if isinstance(e, RuntimeError) else "a damaged member"
                    raise SpecError(
                        f"weights: {shown}, array {name!r}: unreadable ({why})"
                    ) from None
    return out, budget.total


def _check_archive(shown: str, members: list[zipfile.ZipInfo], wanted: set[str] | None) -> None:
    """Refuse an archive by what its directory declares, before anything is decompressed.

    Python's reader never inflates a member past its declared size, so the
    declared sizes bound the work: at most :data:`MAX_WEIGHTS_BYTES` in all, and
    at most :data:`MAX_ZIP_INFLATED` for members compressed more than
    :data:`MAX_ZIP_RATIO` to one (real weights barely compress; a zip bomb does).
    """
    if len(members) > 100_000:
        raise SpecError(
            f"weights: {shown}: expected at most 100,000 arrays, found {len(members):,}"
        )
    chosen = [m for m in members if wanted is None or m.filename.removesuffix(".npy") in wanted]
    inflated = sum(m.file_size for m in chosen)
    packed = sum(m.compress_size for m in chosen)
    if inflated > MAX_WEIGHTS_BYTES:
        raise SpecError(
            f"weights: {shown}: the archive's arrays would take {files.size_text(inflated)} "
            f"once decompressed; the limit is {files.size_text(MAX_WEIGHTS_BYTES)}"
        )
    if inflated > MAX_ZIP_INFLATED and inflated > MAX_ZIP_RATIO * max(packed, 1):
        raise SpecError(
            f"weights: {shown}: the archive declares {files.size_text(inflated)} of arrays in "
            f"{files.size_text(packed)} (compressed more than {MAX_ZIP_RATIO} to 1, like a zip "
            f"bomb); refused unopened (the limit for such archives is "
            f"{files.size_text(MAX_ZIP_INFLATED)} decompressed)"
        )


def _read_npy_file(
    path: Path, shown: str, roots: tuple[str, ...] | None = None
) -> tuple[dict[str, np.ndarray], int]:
    budget = _Budget(shown)
    name = Path(shown).stem or path.stem
    with _open(path, shown, roots) as f:
        return {name: _read_npy(f, shown, name, budget)}, budget.total


def _read_safetensors(
    path: Path, shown: str, wanted: set[str] | None, roots: tuple[str, ...] | None = None
) -> tuple[dict[str, np.ndarray], int]:
    budget = _Budget(shown)
    out: dict[str, np.ndarray] = {}
    with _open(path, shown, roots) as f:
        size = f.seek(0, 2)
        f.seek(0)
        head = f.read(8)
        if len(head) != 8:
            raise SpecError(f"weights: {shown}: not a .safetensors file (shorter than 8 bytes)")
        (n,) = struct.unpack("<Q", head)
        if n > MAX_HEADER_BYTES or 8 + n > size:
            raise SpecError(
                f"weights: {shown}: not a .safetensors file (its header length does not fit the "
                f"file; at most {files.size_text(MAX_HEADER_BYTES)})"
            )
        try:
            header = json.loads(f.read(n).decode("utf-8"))
        except (UnicodeDecodeError, ValueError, RecursionError):
            raise SpecError(
                f"weights: {shown}: the .safetensors header is not UTF-8 JSON"
            ) from None
        if not isinstance(header, dict):
            raise SpecError(f"weights: {shown}: the .safetensors header is not a JSON object")
        base = 8 + n
        for name, entry in header.items():
            if name == "__metadata__":
                continue
            if wanted is not None and name not in wanted:
                continue
            if not isinstance(entry, dict):
                raise SpecError(f"weights: {shown}, array {name!r}: malformed header entry")
            dtype, shape, offsets = (
                entry.get("dtype"),
                entry.get("shape"),
                entry.get("data_offsets"),
            )
            if dtype not in _ST_DTYPES:
                raise SpecError(
                    f"weights: {shown}, array {name!r}: expected F16, BF16, F32 or F64, "
                    f"found {str(dtype)[:20]!r}"
                )
            if (
                not isinstance(shape, list)
                or not all(isinstance(k, int) and not isinstance(k, bool) and k >= 0 for k in shape)
                or not isinstance(offsets, list)
                or len(offsets) != 2
                or not all(isinstance(k, int) and not isinstance(k, bool) for k in offsets)
            ):
                raise SpecError(f"weights: {shown}, array {name!r}: malformed shape or offsets")
            shp = tuple(shape)
            _check_shape(shown, name, shp)
            budget.take(name, shp)
            code, width = _ST_DTYPES[dtype]
            count = int(np.prod(shp))
            begin, end = offsets
            if not 0 <= begin <= end or base + end > size or end - begin != count * width:
                raise SpecError(
                    f"weights: {shown}, array {name!r}: data offsets {offsets} do not fit "
                    f"{count} values of {dtype} in the file"
                )
            f.seek(base + begin)
            a = np.frombuffer(f.read(end - begin), dtype=np.dtype(code)).reshape(shp)
            if dtype == "BF16":  # the high half of a float32: exact
                a = (a.astype(np.uint32) << 16).view(np.float32)
            out[name] = _finite(shown, name, a.astype(np.float64))
    return out, budget.total


def read_weights(
    path: Path,
    shown: str,
    wanted: set[str] | None = None,
    roots: tuple[str, ...] | None = None,
) -> tuple[dict[str, np.ndarray], int]:
    """Read the arrays of a weights file as float64 (exact values).

    Args:
        path: The file.
        shown: How messages name it.
        wanted: Names to read (``None``: all).
        roots: Folders the file must lie in once opened (see :func:`symtf.files.within`).

    Returns:
        The arrays by name, and how many entries they have in all.

    Raises:
        SpecError: Naming the file (and the array) for anything unreadable, mistyped or too large.
    """
    suffix = Path(shown).suffix.lower() or path.suffix.lower()  # the name as written
    if suffix == ".npz":
        return _read_npz(path, shown, wanted, roots)
    if suffix == ".npy":
        return _read_npy_file(path, shown, roots)
    if suffix == ".safetensors":
        return _read_safetensors(path, shown, wanted, roots)
    raise SpecError(
        f"weights: {shown}: expected a .npz, .npy or .safetensors file, found {suffix or 'no suffix'!r}"
    )


# ----------------------------------------------------------------------------- into the derivation


def inject(data: dict[str, Any], raw: Any, name: str) -> None:
    """Read the ``weights`` of a derivation's TOML data into its ``model`` tables.

    Each array becomes a :class:`FileArray` at the key its canonical name says
    (creating ``[[model.layers]]`` and ``heads`` tables as needed); the reader of
    :mod:`symtf.spec` checks its shape where it reads that key.

    Raises:
        SpecError: Naming the derivation, the weights file and the array.
    """
    file, mapping = _weights_table(raw, name)
    key = "weights.file" if isinstance(raw, dict) else "weights"
    # Relative to the derivation's folder, and inside it (or a --allow-path folder).
    path, roots = files.within(file, files.folder_of(name), key)
    shown = file
    wanted = set(mapping.values()) if mapping else None
    arrays, total = read_weights(path, shown, wanted, roots)
    if mapping:
        missing = [f for f in mapping.values() if f not in arrays]
        if missing:
            canon = next(c for c, f in mapping.items() if f == missing[0])
            raise SpecError(
                f"weights.map.{canon}: weights file {shown} has no array {missing[0]!r}"
            )
        placed = {canon: (fname, arrays[fname]) for canon, fname in mapping.items()}
    else:
        placed = {n: (n, a) for n, a in arrays.items()}
    small = total <= SMALL_ENTRIES
    model = data.get("model")
    if not isinstance(model, dict):
        raise SpecError("model: required table is missing (the weights file fills it)")
    if model.get("architecture", "decoder") not in ("decoder", "attention"):
        raise SpecError(
            f"weights: a weights file fills decoder and attention models, "
            f"not architecture = {model.get('architecture')!r}"
        )
    for canon, (fname, array) in sorted(placed.items()):
        m = _CANONICAL.match(canon)
        if m is None:
            raise SpecError(
                f"weights: {shown}, array {fname!r}: {canon!r} is not a weight name "
                "(embed, pos, unembed, lnf_gamma, lnf_beta, l0.W_O, l0.W1, l0.h0.W_Q, …); "
                "name the file's arrays in a [weights.map] table"
            )
        value = FileArray(array, shown, fname, small)
        if m["model"]:
            table, key, where = model, m["model"], "model"
        else:
            layers = model.setdefault("layers", [])
            if not isinstance(layers, list):
                raise SpecError("model.layers: expected an array of tables ([[model.layers]])")
            li = int(m["layer"])
            while len(layers) <= li:
                layers.append({})
            layer = layers[li]
            if not isinstance(layer, dict):
                raise SpecError(f"model.layers[{li}]: expected a table")
            if m["lname"]:
                table, key, where = layer, m["lname"], f"model.layers[{li}]"
            else:
                heads = layer.setdefault("heads", [])
                if not isinstance(heads, list):
                    raise SpecError(f"model.layers[{li}].heads: expected an array of tables")
                hi = int(m["head"])
                while len(heads) <= hi:
                    heads.append({})
                if not isinstance(heads[hi], dict):
                    raise SpecError(f"model.layers[{li}].heads[{hi}]: expected a table")
                table, key, where = heads[hi], m["hname"], f"model.layers[{li}].heads[{hi}]"
        if key in table:
            raise SpecError(
                f"{where}.{key}: given in the derivation and as array {fname!r} of {shown}; "
                "keep one"
            )
        table[key] = value


def _weights_table(raw: Any, name: str) -> tuple[str, dict[str, str]]:
    if isinstance(raw, str):
        return _file_name(raw), {}
    if not isinstance(raw, dict):
        raise SpecError(f"weights: expected a file name or a table, found {type(raw).__name__}")
    unknown = sorted(set(raw) - {"file", "map"})
    if unknown:
        raise SpecError(f"weights.{unknown[0]}: unknown key (known keys: file, map)")
    file = raw.get("file")
    if not isinstance(file, str):
        raise SpecError("weights.file: required: the weights file (.npz, .npy or .safetensors)")
    mapping = raw.get("map", {})
    if not isinstance(mapping, dict) or not all(
        isinstance(k, str) and isinstance(v, str) and len(v) < 500 for k, v in mapping.items()
    ):
        raise SpecError('weights.map: expected a table of weight name = "array name in the file"')
    return _file_name(file), dict(mapping)


def _file_name(s: str) -> str:
    if not s or len(s) > 1000 or "\x00" in s:
        raise SpecError(f"weights: expected a file name, found {s[:40]!r}")
    return s


# ----------------------------------------------------------------------------- checking with them


def _matrices(model: Any) -> Iterator[Any]:
    for f in ("embed", "pos", "unembed", "lnf_gamma", "lnf_beta"):
        yield getattr(model, f, None)
    for layer in getattr(model, "layers", ()):
        for f in LAYER_MATRICES:
            yield getattr(layer, f, None)
        for head in layer.heads:
            for f in HEAD_MATRICES:
                yield getattr(head, f, None)


def exact_is_expensive(derivation: Any) -> bool:
    """Whether the derivation holds weights from files too large for SymPy (the exact path is lazy)."""
    model = getattr(derivation, "model", None)
    return model is not None and any(isinstance(m, FileMatrix) for m in _matrices(model))
