"""The ``[symbols]`` table: a file's declared symbols, and the one place a file's symbols are made.

A bare identifier in a weight cell, a setting (``scale``, ``eps``, ``pos_base``,
``temperature``, ``mask_value``) or a given tensor is a symbol. Undeclared, it
is a real symbol (a temperature: a positive one). Declared in ``[symbols]``::

    [symbols]
    a = { range = [-2, 2] }              # where check searches its correct-rounding set
    T = { positive = true }              # assumptions: positive / nonnegative (default real)
    b = { value = 0.5, range = [0, 1] }  # the article's own value, marked in that set

it carries its assumptions wherever it appears: every symbol of a file is made
by :func:`make` while the file is read (:func:`reading`), which looks the name
up in the declared table. Nothing here computes; the range and value are data
that checking reads (:mod:`symtf.checking.verdict`).
"""

from __future__ import annotations

import keyword
import re
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import dataclass, field
from fractions import Fraction
from typing import Any

import sympy

from symtf.errors import SpecError
from symtf.numbers import from_float, parse_exact
from symtf.numbers import toml_kind as _kind

#: A symbol's name: what a weight cell reads as a symbol.
NAME = re.compile(r"^[A-Za-z][A-Za-z0-9_]{0,30}$")
#: Names a cell reads as something else (a number or a matrix keyword), or that print as a
#: constant of SymPy's (``E`` is Euler's number in SymPy's text, ``I`` the imaginary unit).
RESERVED = frozenset(
    ("nan", "inf", "infinity", "identity", "zeros", "ones", "E", "I", "pi", "oo", "zoo")
)
#: The keys of one declaration.
KEYS = ("range", "positive", "nonnegative", "value")
#: The assumptions a declaration may make (``real`` when it makes none).
ASSUMPTIONS = ("real", "positive", "nonnegative")


@dataclass(frozen=True)
class SymbolSpec:
    """One declared symbol.

    Attributes:
        name: Its name, as the file writes it.
        assumption: ``real``, ``positive`` or ``nonnegative``.
        range: Where check searches the values for which a print is a correct
            rounding (``None``: the default search range), exact ends, ``lo < hi``.
        value: The article's own value of it, if the file gives one.
        value_text: That value as written (``0.5``), for reports.
    """

    name: str
    assumption: str = "real"
    range: tuple[Fraction, Fraction] | None = None
    value: Fraction | None = None
    value_text: str | None = None

    @property
    def symbol(self) -> sympy.Symbol:
        """The SymPy symbol, with its assumptions."""
        return sympy.Symbol(self.name, **{self.assumption: True})


def parse(raw: Any, name: str) -> dict[str, SymbolSpec]:
    """Read a ``[symbols]`` table (``{}`` when absent).

    Raises:
        SpecError: Naming the file and the key: a name that is no identifier or is
            reserved, an unknown key, a bad range, conflicting assumptions, a value
            outside the range or against the assumption.
    """
    if raw is None:
        return {}
    if not isinstance(raw, dict):
        raise SpecError(f"{name}: symbols: expected a table ([symbols]), found {_kind(raw)}")
    out: dict[str, SymbolSpec] = {}
    for key, spec in raw.items():
        w = f"{name}: symbols.{key}"
        why = name_refusal(key)
        if why is not None:
            raise SpecError(f"{w}: {why}")
        out[key] = _one(key, spec, w)
    return out


def name_refusal(name: str) -> str | None:
    """Why ``name`` cannot be a symbol's, or ``None``: the one rule ``[symbols]`` and
    ``symtf whatif --symbol`` keep.

    A symbol's name is an identifier (a letter, then letters, digits or ``_``, at most 31
    characters, not a Python keyword) that a cell does not read as something else
    (:data:`RESERVED`: a number, a matrix keyword, a constant SymPy prints the same way,
    so that ``E`` would read as Euler's number in a closed form) and that is not a
    weight's or setting's own name (a formula with a symbol ``W_Q`` would read as the
    matrix).
    """
    from symtf.spec.weights import HEAD_MATRICES, LAYER_MATRICES, MODEL_MATRICES

    if not NAME.match(name) or keyword.iskeyword(name):
        return (
            "expected a symbol name (a letter, then letters, digits or _, at most "
            f"31 characters), found {name!r}"
        )
    own = {*HEAD_MATRICES, *LAYER_MATRICES, *MODEL_MATRICES, "scale", "eps", "temperature"}
    if name in RESERVED or name.lower() in ("nan", "inf", "infinity") or name in own:
        return (
            f"{name!r} is a reserved name (a number, a matrix keyword, a SymPy constant, "
            "or a weight's or setting's own name); choose another, like a, t or w"
        )
    return None


def _one(key: str, spec: Any, w: str) -> SymbolSpec:
    if not isinstance(spec, dict):
        number = isinstance(spec, (int, float)) and not isinstance(spec, bool)
        found = f"the number {_written(spec)}" if number else _kind(spec)
        raise SpecError(
            f"{w}: expected a table like {{ range = [-2, 2] }} or {{ positive = true }}, "
            f"found {found}"
        )
    unknown = sorted(set(spec) - set(KEYS))
    if unknown:
        from symtf.suggest import hint

        raise SpecError(
            f"{w}.{unknown[0]}: unknown key{hint(unknown[0], list(KEYS))} "
            f"(known keys: {', '.join(KEYS)})"
        )
    flags = {}
    for flag in ("positive", "nonnegative"):
        v = spec.get(flag)
        if v is not None and not isinstance(v, bool):
            raise SpecError(f"{w}.{flag}: expected true or false, found {_kind(v)}")
        flags[flag] = v
    if flags["positive"] and flags["nonnegative"] is False:
        raise SpecError(
            f"{w}: conflicting assumptions: positive = true, but nonnegative = false "
            "(a positive symbol is nonnegative)"
        )
    assumption = (
        "positive" if flags["positive"] else "nonnegative" if flags["nonnegative"] else "real"
    )
    lo_ok = {"real": None, "positive": Fraction(0), "nonnegative": Fraction(0)}[assumption]
    rng = None
    if "range" in spec:
        r = spec["range"]
        if not isinstance(r, list) or len(r) != 2:
            raise SpecError(f"{w}.range: expected [LO, HI], two numbers, found {_kind(r)}")
        lo, hi = (_number(x, f"{w}.range[{i}]") for i, x in enumerate(r))
        if not lo < hi:
            raise SpecError(f"{w}.range: expected LO < HI, found [{_text(lo)}, {_text(hi)}]")
        if lo_ok is not None and lo < lo_ok:
            raise SpecError(
                f"{w}.range: conflicts with {assumption} = true: expected LO >= 0, found "
                f"[{_text(lo)}, {_text(hi)}]"
            )
        rng = (lo, hi)
    value = text = None
    if "value" in spec:
        raw_value = spec["value"]
        value = _number(raw_value, f"{w}.value")
        text = raw_value.strip() if isinstance(raw_value, str) else _written(raw_value)
        if assumption == "positive" and value <= 0:
            raise SpecError(f"{w}.value: expected a number > 0 (positive = true), found {text}")
        if assumption == "nonnegative" and value < 0:
            raise SpecError(f"{w}.value: expected a number >= 0 (nonnegative = true), found {text}")
        if rng is not None and not rng[0] <= value <= rng[1]:
            raise SpecError(
                f"{w}.value: expected a value inside range = [{_text(rng[0])}, {_text(rng[1])}], "
                f"found {text}"
            )
    return SymbolSpec(key, assumption, rng, value, text)


def _number(v: Any, where: str) -> Fraction:
    """An exact number of a declaration: a TOML integer or float, or a string like ``"1/3"``."""
    if isinstance(v, bool) or not isinstance(v, (int, float, str)):
        raise SpecError(f"{where}: expected a number, found {_kind(v)}")
    if isinstance(v, int):
        if abs(v) > 10**60:
            raise SpecError(f"{where}: expected a number of at most 60 digits, found a larger one")
        return Fraction(v)
    if isinstance(v, float):
        return from_float(v, where=where)
    return parse_exact(v, where=where)


def _written(v: Any) -> str:
    return str(getattr(v, "text", v))


def _text(q: Fraction) -> str:
    return str(q.numerator) if q.denominator == 1 else f"{q.numerator}/{q.denominator}"


# ----------------------------------------------------------------------------- making symbols


@dataclass
class _Reading:
    """The declared table of the file being read, and the names its cells made symbols of."""

    declared: Mapping[str, SymbolSpec]
    used: set[str] = field(default_factory=set)


_READING: ContextVar[_Reading | None] = ContextVar("symtf_symbols", default=None)


@contextmanager
def reading(declared: Mapping[str, SymbolSpec]) -> Iterator[_Reading]:
    """While a file is read: :func:`make` gives its declared symbols, and records each name used."""
    state = _Reading(declared)
    token = _READING.set(state)
    try:
        yield state
    finally:
        _READING.reset(token)


def make(name: str, *, default: str = "real") -> sympy.Symbol:
    """The symbol a file means by ``name``: its declared assumptions, else ``default``'s.

    Args:
        name: The identifier the file wrote.
        default: The assumption of an undeclared symbol (``positive`` for a temperature).
    """
    state = _READING.get()
    if state is not None:
        state.used.add(name)
        spec = state.declared.get(name)
        if spec is not None:
            return spec.symbol
    return sympy.Symbol(name, **{default: True})


def declared(name: str) -> SymbolSpec | None:
    """The declaration of ``name`` in the file being read, if any."""
    state = _READING.get()
    return None if state is None else state.declared.get(name)


def check_used(state: _Reading, name: str) -> None:
    """Refuse a declared symbol no cell of the file used.

    Raises:
        SpecError: Naming the first such symbol's key.
    """
    for key in state.declared:
        if key not in state.used:
            raise SpecError(
                f"{name}: symbols.{key}: declared, but no weight, setting or tensor of the file "
                f"is {key!r} (write {key!r} in a cell, or remove the declaration)"
            )


__all__ = [
    "ASSUMPTIONS",
    "KEYS",
    "NAME",
    "RESERVED",
    "SymbolSpec",
    "check_used",
    "declared",
    "make",
    "name_refusal",
    "parse",
    "reading",
]
