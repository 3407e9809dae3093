"""Inputs known only to their printed precision.

When an article's weights are 4-decimal prints of unrounded values, a number
recomputed from them may be one unit off without any mistake by the author. A
derivation file can say so:

```toml
rounded_inputs = true                       # every model matrix
rounded_inputs = ["embed", "l0.h0.W_Q"]     # or these, by name
```

Input names: ``embed``, ``pos``, ``unembed``, ``lnf_gamma``, ``lnf_beta``;
per layer ``l0.W_O``, ``l0.b_O``, ``l0.W1``, ``l0.b1``, ``l0.W2``, ``l0.b2``,
``l0.W3``, ``l0.b3``, ``l0.ln1_gamma`` … ``l0.ln2_beta``; per head
``l0.h0.W_Q`` … ``l0.h0.b_V``; a stand-alone operation's ``NAME.input``.

Each marked entry stands for any value within half a unit of its last printed
digit (``0.1234`` → ``[0.12335, 0.12345]``; ``1.5e-3`` → ``±5e-5``). Entries
written without a decimal point (``1``, ``0``, ``identity``, a symbol) stay
exact. The model then runs in certified balls with those inputs as balls
(:class:`RoundedBallBackend`), so every value downstream becomes a certified
range; :mod:`symtf.checking.accept` accepts a printed number that is a correct rounding of
some value in that range, saying so. Unmarked inputs stay exact.

Entry point for other inputs (given tensors of a step graph): build a
:class:`RoundedInput` with :func:`half_widths` from the tensor's written values and
pass ``inputs.with_input(...)``; any backend matrix built from that very matrix
object (``xp.matrix(values)``) then carries the radii. For a tensor table
``[tensors] X = { values = "...", rounded = true }`` read into ``values``::

    from symtf.backends.rounded import RoundedInput, RoundedInputs, half_widths

    item = RoundedInput("X", values, half_widths(raw["values"], values.shape, f"{name}: tensors.X"))
    rounded_inputs = (derivation_rounded_inputs or RoundedInputs()).with_input(item)

and store the result in ``Derivation.rounded_inputs``; :mod:`symtf.checking.accept` does the rest.
"""

from __future__ import annotations

import re
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass
from fractions import Fraction
from typing import Any

import sympy
from flint import arb, arb_mat, fmpq

from symtf.backends import BallBackend
from symtf.errors import SpecError

_DECIMAL = re.compile(r"^\s*[+\-−]?(\d*)\.(\d*)(?:[eE]([+-]?\d+))?\s*$")
_SCI_INT = re.compile(r"^\s*[+\-−]?\d+[eE]([+-]?\d+)\s*$")


def half_width(text: str) -> Fraction:
    """Half a unit of the last written digit of a number (0 when written without a point).

    ``"0.1234"`` → 1/20000, ``"1.5e-3"`` → 1/20000, ``"2"`` → 0, ``"1e-3"`` → 1/2000.
    A whole number with a bare trailing point (``"1."``, ``"-0."``) is how numpy and
    PyTorch print a float that is a whole number (any other value gets its digits), so
    it is known exactly: ``"1."`` → 0.
    """
    m = _DECIMAL.match(text)
    if m and m.group(1) and not m.group(2) and not m.group(3):
        return Fraction(0)
    if m:
        decimals = len(m.group(2)) - int(m.group(3) or 0)
        return Fraction(1, 2) * Fraction(10) ** (-decimals)
    m = _SCI_INT.match(text)
    if m:
        return Fraction(1, 2) * Fraction(10) ** int(m.group(1))
    return Fraction(0)


def tensor_half_widths(texts: Sequence[str]) -> tuple[Fraction, ...]:
    """Half-widths of a given tensor's entries known to their printed digits, as written.

    Each entry is known to half a unit of its last written digit (:func:`half_width`),
    except a zero written with fewer decimals than the tensor's finest entry: an author
    who prints ``0.00498`` writes a zero as ``0.0``, so that zero is known to the finest
    grid of its tensor (``0.00498 0.0 0.00502`` → the ``0.0`` lies within 0.000005 of 0),
    not to one decimal.
    """
    widths = [half_width(t) for t in texts]
    finest = min(
        (w for t, w in zip(texts, widths, strict=True) if w and not _is_zero(t)), default=None
    )
    if finest is None:
        return tuple(widths)
    return tuple(
        min(w, finest) if w and _is_zero(t) else w for t, w in zip(texts, widths, strict=True)
    )


def _is_zero(text: str) -> bool:
    """Whether a written decimal is a zero (``0.0``, ``-0.00``, ``.0``)."""
    m = _DECIMAL.match(text)
    if m is None:
        return False
    return not (m.group(1) or "").strip("0") and not (m.group(2) or "").strip("0")


def _cell_text(v: Any) -> str:
    from symtf.numbers import TomlFloat

    if isinstance(v, TomlFloat):
        return v.text
    if isinstance(v, bool):
        return ""
    if isinstance(v, (int, str)):
        return str(v)
    if isinstance(v, float):
        return repr(v)
    return ""


def half_widths(raw: Any, shape: tuple[int, int], where: str) -> tuple[tuple[Fraction, ...], ...]:
    """Half-widths of every entry of a matrix as written in the file.

    Args:
        raw: The TOML value the matrix was read from (rows text, array of rows, a
            number, or a keyword).
        shape: The matrix's shape (a single written number may fill a row vector).
        where: ``file: key`` for messages.

    Raises:
        SpecError: When the written cells do not fit the shape.
    """
    from symtf.numbers import join_infinities as _join_infinities
    from symtf.numbers import split_rows as _split_rows

    n, m = shape
    if isinstance(raw, str) and raw.strip() in ("identity", "zeros", "ones"):
        return tuple(tuple(Fraction(0) for _ in range(m)) for _ in range(n))
    if isinstance(raw, str):
        cells = _split_rows(_join_infinities(raw))
    elif isinstance(raw, list) and all(isinstance(r, list) for r in raw):
        cells = raw
    elif isinstance(raw, list):
        cells = [raw]
    else:
        cells = [[raw]]
    if len(cells) == 1 and len(cells[0]) == 1 and (n, m) != (1, 1):
        cells = [[cells[0][0]] * m for _ in range(n)]  # one number broadcast over a row vector
    if len(cells) != n or any(len(r) != m for r in cells):
        raise SpecError(f"{where}: the written values do not fit its {n}x{m} shape")
    return tuple(tuple(half_width(_cell_text(c)) for c in r) for r in cells)


@dataclass(frozen=True)
class RoundedInput:
    """One input known only to its printed precision.

    Attributes:
        name: Its input name (``l0.h0.W_Q``).
        values: The exact matrix the model holds (looked up by identity).
        half: Half-width of each entry (0: exact).
    """

    name: str
    values: sympy.ImmutableMatrix
    half: tuple[tuple[Fraction, ...], ...]


class RoundedInputs(Mapping[str, RoundedInput]):
    """The inputs of a derivation that are known only to their printed precision."""

    def __init__(self, inputs: Sequence[RoundedInput] = ()) -> None:
        self._by_name = {r.name: r for r in inputs}
        self._by_id = {id(r.values): r for r in inputs}

    def __getitem__(self, name: str) -> RoundedInput:
        return self._by_name[name]

    def __iter__(self) -> Iterator[str]:
        return iter(self._by_name)

    def __len__(self) -> int:
        return len(self._by_name)

    def with_input(self, item: RoundedInput) -> RoundedInputs:
        """These inputs and one more (the entry point for given tensors)."""
        return RoundedInputs([*self._by_name.values(), item])

    def lookup(self, m: Any) -> tuple[tuple[Fraction, ...], ...] | None:
        """The half-widths for a matrix the pipeline is about to use, or ``None``.

        A matrix is found by identity; the positional table is also found when the
        pipeline takes its first rows (``pos[:n, :]``).
        """
        hit = self._by_id.get(id(m))
        if hit is not None:
            return hit.half
        pos = self._by_name.get("pos")
        if pos is not None and isinstance(m, sympy.MatrixBase):
            n = m.rows
            if m.cols == pos.values.cols and n <= pos.values.rows and m == pos.values[:n, :]:
                return pos.half[:n]
        return None


def _raw_layers(raw_model: Mapping[str, Any]) -> list[dict[str, Any]]:
    v = raw_model.get("layers", [])
    return v if isinstance(v, list) else []


def model_inputs(raw_model: Mapping[str, Any], model: Any) -> dict[str, tuple[Any, Any]]:
    """Every named input matrix of a model with the TOML value it was read from."""
    out: dict[str, tuple[Any, Any]] = {}

    def put(name: str, raw: Any, value: Any) -> None:
        if value is not None:
            out[name] = (raw if raw is not None else "identity", value)

    put("embed", raw_model.get("embed"), model.embed)
    put("pos", raw_model.get("pos"), model.pos)
    if not model.tied:
        put("unembed", raw_model.get("unembed"), model.unembed)
    if model.final_norm:
        put("lnf_gamma", raw_model.get("lnf_gamma", "ones"), model.lnf_gamma)
        put("lnf_beta", raw_model.get("lnf_beta", "zeros"), model.lnf_beta)
    raw_layers = _raw_layers(raw_model)
    for li, layer in enumerate(model.layers):
        rl = raw_layers[li] if li < len(raw_layers) and isinstance(raw_layers[li], dict) else {}
        for k in ("W_O", "b_O", "W1", "b1", "W2", "b2", "W3", "b3"):
            put(f"l{li}.{k}", rl.get(k), getattr(layer, k))
        for k in ("ln1_gamma", "ln1_beta", "ln2_gamma", "ln2_beta"):
            put(
                f"l{li}.{k}",
                rl.get(k, "ones" if k.endswith("gamma") else "zeros"),
                getattr(layer, k),
            )
        heads = rl.get("heads", [])
        for hi, head in enumerate(layer.heads):
            rh = heads[hi] if isinstance(heads, list) and hi < len(heads) else {}
            for k in ("W_Q", "W_K", "W_V", "b_Q", "b_K", "b_V"):
                put(
                    f"l{li}.h{hi}.{k}",
                    rh.get(k) if isinstance(rh, dict) else None,
                    getattr(head, k),
                )
    raw_sa = raw_model.get("standalone", [])
    for i, s in enumerate(model.standalone):
        r = raw_sa[i] if isinstance(raw_sa, list) and i < len(raw_sa) else {}
        put(f"{s.name}.input", r.get("input") if isinstance(r, dict) else None, s.input)
    return out


def parse_rounded_inputs(
    value: Any, raw_model: Any, model: Any, name: str, tensors: Sequence[str] = ()
) -> tuple[RoundedInputs | None, frozenset[str]]:
    """Read the file's ``rounded_inputs`` (``true`` or an array of input names).

    Args:
        tensors: The names of the file's given tensors (``[tensors]``), which may be
            named too (``true`` marks them all).

    Returns:
        The model's inputs known to their printed precision, and the given tensors named.

    Raises:
        SpecError: For a value that is not ``true``/``false`` or an array of known names
            (an unknown name gets the closest known ones).
    """
    if value is None or value is False:
        return None, frozenset()
    where = f"{name}: rounded_inputs"
    if model.architecture == "encoder-decoder":
        raise SpecError(f"{where}: not available for encoder-decoder models yet")
    inputs = model_inputs(raw_model, model) if isinstance(raw_model, Mapping) else {}
    known = [*inputs, *tensors]
    if value is True:
        names = list(known)
    elif isinstance(value, list) and all(isinstance(x, str) for x in value):
        names = list(dict.fromkeys(value))
        for n in names:
            if n not in known:
                import difflib

                close = difflib.get_close_matches(n, known, n=3)
                hint = f"; did you mean {', '.join(close)}?" if close else ""
                shown = ", ".join(known[:6]) + (", …" if len(known) > 6 else "")
                raise SpecError(
                    f"{where}: expected input names of this file ({shown or 'none'}), "
                    f"found {n!r}{hint}"
                )
    else:
        from symtf.numbers import toml_kind as _kind

        raise SpecError(f"{where}: expected true or an array of input names, found {_kind(value)}")
    given = frozenset(n for n in names if n in tensors and n not in inputs)
    names = [n for n in names if n in inputs]
    if not names:
        return None, given
    out = []
    for n in names:
        raw, values = inputs[n]
        out.append(RoundedInput(n, values, half_widths(raw, values.shape, f"{name}: model {n}")))
    if model.tied and "embed" in names and model.unembed is not None:
        e = next(r for r in out if r.name == "embed")
        half_t = tuple(
            tuple(e.half[j][i] for j in range(len(e.half))) for i in range(len(e.half[0]))
        )
        out.append(RoundedInput("unembed", model.unembed, half_t))
    return RoundedInputs(out), given


class RoundedBallBackend(BallBackend):
    """Certified balls in which the marked inputs are balls over their rounding intervals.

    Args:
        inputs: The inputs known only to their printed precision.
        prec: Working precision in bits.
    """

    name = "rounded-ball"

    def __init__(self, inputs: RoundedInputs, prec: int = 128, *, ties: bool = False) -> None:
        super().__init__(prec)
        self.inputs = inputs
        self.ties = ties

    def sign(self, x: arb) -> int:
        if self.ties and not (x > 0 or x < 0):
            return 0  # an argmax over ranges: entries that may be equal count as tied
        return super().sign(x)

    def matrix(self, m: sympy.MatrixBase) -> arb_mat:
        half = self.inputs.lookup(m)
        if half is None:
            return super().matrix(m)
        base = super().matrix(m).tolist()
        rows = []
        for i in range(m.rows):
            row = []
            for j in range(m.cols):
                h = half[i][j]
                x = base[i][j]
                row.append(
                    x + arb(0, arb(fmpq(h.numerator, h.denominator)).abs_upper()) if h else x
                )
            rows.append(row)
        return arb_mat(rows)


class ShiftedBallBackend(BallBackend):
    """Certified balls in which some input matrices are moved by exact amounts.

    The witness of a rounding: the model evaluated at one point of its inputs' rounding
    intervals (each entry of a marked matrix plus its shift), to show that a printed
    number is reached, not only that an enclosure meets it. With ``radii`` it is a box
    instead: each entry a ball of that radius around its shifted value, to show that no
    point of a part of the intervals reaches it.

    Args:
        shifts: ``id(matrix)`` → the exact shift of each of its entries, row by row
            (matrices are found by identity, as :class:`RoundedInputs` finds them).
        prec: Working precision in bits.
        radii: ``id(matrix)`` → the radius of each of its entries (0: a point), row by row.
    """

    name = "shifted-ball"

    def __init__(
        self,
        shifts: Mapping[int, Sequence[Sequence[Fraction]]],
        prec: int = 128,
        radii: Mapping[int, Sequence[Sequence[Fraction]]] | None = None,
    ) -> None:
        super().__init__(prec)
        self._shifts = shifts
        self._radii = radii or {}

    def matrix(self, m: sympy.MatrixBase) -> arb_mat:
        shift = self._shifts.get(id(m))
        radius = self._radii.get(id(m))
        base = super().matrix(m)
        if shift is None and radius is None:
            return base
        rows = base.tolist()
        n, k = len(rows), len(rows[0]) if rows else 0
        zero = [[Fraction(0)] * k for _ in range(n)]
        ds, rs = shift or zero, radius or zero
        return arb_mat(
            [
                [_moved(x, d, r) for x, d, r in zip(row, drow, rrow, strict=True)]
                for row, drow, rrow in zip(rows, ds, rs, strict=True)
            ]
        )


def _moved(x: arb, shift: Fraction, radius: Fraction) -> arb:
    """``x`` moved by an exact shift, widened to a ball of ``radius`` (rounded outward)."""
    if shift:
        x = x + arb(fmpq(shift.numerator, shift.denominator))
    if radius:
        x = x + arb(0, arb(fmpq(radius.numerator, radius.denominator)).abs_upper())
    return x


__all__ = [
    "RoundedBallBackend",
    "RoundedInput",
    "RoundedInputs",
    "ShiftedBallBackend",
    "half_width",
    "half_widths",
    "model_inputs",
    "parse_rounded_inputs",
    "tensor_half_widths",
]
