"""Typed reading of TOML tables, and exact cells, vectors and matrices.

Shared by the parsers of derivation files (:mod:`symtf.spec`, :mod:`symtf.spec.seq2seq`
and the ``[generate]`` reader in :mod:`symtf.spec.model`). Nothing read is executed or
passed to ``sympify``; every error names the file, the key, what was expected and
what was found.
"""

from __future__ import annotations

import re
from fractions import Fraction
from typing import Any

import sympy

from symtf import limits
from symtf.errors import SpecError
from symtf.numbers import from_float, parse_exact
from symtf.numbers import split_rows as _split_rows
from symtf.numbers import toml_kind as _kind
from symtf.spec.symbols import make as make_symbol

#: Largest matrix a derivation may declare (rows × columns), and largest dimension.
MAX_ENTRIES = limits.MAX_ENTRIES
MAX_DIM = limits.MAX_DIM

_SYMBOL = re.compile(r"^[A-Za-z][A-Za-z0-9_]{0,30}$")


class _Reader:
    """Typed access to one TOML table, with messages that name file and key."""

    def __init__(self, table: Any, where: str) -> None:
        if not isinstance(table, dict):
            raise SpecError(f"{where}: expected a table, found {_kind(table)}")
        self.table = table
        self.where = where
        self.used: set[str] = set()

    def key(self, k: str) -> str:
        return f"{self.where}.{k}" if self.where else k

    def get(self, k: str, default: Any = None) -> Any:
        self.used.add(k)
        return self.table.get(k, default)

    def require(self, k: str) -> Any:
        self.used.add(k)
        if k not in self.table:
            raise SpecError(f"{self.key(k)}: required key is missing")
        return self.table[k]

    def string(self, k: str, default: str | None = None, *, max_len: int = 2000) -> str | None:
        v = self.get(k, default)
        if v is None:
            return None
        if not isinstance(v, str):
            raise SpecError(f"{self.key(k)}: expected a string, found {_kind(v)}")
        if len(v) > max_len:
            raise SpecError(f"{self.key(k)}: expected at most {max_len} characters, found {len(v)}")
        return v

    def choice(self, k: str, options: tuple[str, ...], default: str) -> str:
        v = self.string(k, default)
        if v not in options:
            raise SpecError(f"{self.key(k)}: expected one of {', '.join(options)}, found {v!r}")
        return v

    def integer(self, k: str, default: int | None = None, *, lo: int = 0, hi: int = MAX_DIM) -> Any:
        v = self.get(k, default)
        if v is None:
            return None
        if isinstance(v, bool) or not isinstance(v, int):
            raise SpecError(f"{self.key(k)}: expected an integer, found {_kind(v)}")
        if not lo <= v <= hi:
            raise SpecError(f"{self.key(k)}: expected an integer from {lo} to {hi}, found {v}")
        return v

    def boolean(self, k: str, default: bool) -> bool:
        v = self.get(k, default)
        if not isinstance(v, bool):
            raise SpecError(f"{self.key(k)}: expected true or false, found {_kind(v)}")
        return v

    def names(self, k: str, options: tuple[str, ...]) -> tuple[str, ...]:
        v = self.get(k, [])
        if not isinstance(v, list) or not all(isinstance(x, str) and x in options for x in v):
            raise SpecError(
                f"{self.key(k)}: expected an array of names from {', '.join(options)}, found {_kind(v)}"
            )
        return tuple(dict.fromkeys(v))

    def done(self) -> None:
        unknown = sorted(set(self.table) - self.used)
        if unknown:
            from symtf.suggest import hint

            raise SpecError(
                f"{self.key(unknown[0])}: unknown key{hint(unknown[0], sorted(self.used))} "
                f"(known keys: {', '.join(sorted(self.used))})"
            )


def _cell(v: Any, where: str, *, symbols: bool) -> sympy.Expr:
    """One exact matrix entry."""
    if isinstance(v, bool):
        raise SpecError(f"{where}: expected a number, found {v!r}")
    if isinstance(v, int):
        if abs(v) > 10**60:
            raise SpecError(
                f"{where}: expected a number of at most 60 digits, found a larger integer"
            )
        return sympy.Integer(v)
    if isinstance(v, float):
        return _rational(from_float(v, where=where))
    if isinstance(v, str):
        s = v.strip()
        if symbols and _SYMBOL.match(s) and s.lower() not in ("nan", "inf", "infinity"):
            return make_symbol(s)
        return _rational(parse_exact(s, where=where))
    raise SpecError(f"{where}: expected a number, found {_kind(v)}")


def _rational(q: Fraction) -> sympy.Rational:
    return sympy.Rational(q.numerator, q.denominator)


def matrix(
    v: Any, where: str, *, shape: tuple[int | None, int | None] = (None, None), symbols: bool = True
) -> sympy.ImmutableMatrix:
    """Read an exact matrix written as rows text, an array of arrays, or a keyword.

    Args:
        v: The TOML value.
        where: ``file: key`` for messages.
        shape: Expected ``(rows, cols)``; ``None`` leaves a side free.
        symbols: Whether a bare identifier (``a``) becomes a SymPy symbol.
    """
    rows_expected, cols_expected = shape
    if not isinstance(v, (str, list, int, float, bool, dict)):
        from symtf.spec.weights import FileArray

        if isinstance(v, FileArray):  # an array of the weights file (symtf.spec.weights)
            return v.matrix(where, shape)
    if (
        isinstance(v, str)
        and v.strip() == "identity"
        and (rows_expected is None) != (cols_expected is None)
    ):
        rows_expected = cols_expected = rows_expected or cols_expected
    if isinstance(v, str) and v.strip() in ("identity", "zeros", "ones"):
        if rows_expected is None or cols_expected is None:
            raise SpecError(
                f"{where}: {v.strip()!r} needs a shape the model implies; write the matrix"
            )
        if v.strip() == "identity":
            if rows_expected != cols_expected:
                raise SpecError(
                    f"{where}: expected a {rows_expected}x{cols_expected} matrix, "
                    "found 'identity' (only square matrices can be the identity)"
                )
            return sympy.ImmutableMatrix(sympy.eye(rows_expected))
        fill = 0 if v.strip() == "zeros" else 1
        return sympy.ImmutableMatrix(
            rows_expected, cols_expected, [fill] * (rows_expected * cols_expected)
        )
    cells: list[list[Any]]
    if isinstance(v, str):
        too_long = limits.text_refusal(len(v))
        if too_long:
            raise SpecError(f"{where}: {too_long}")
        cells = _split_rows(v)
    elif isinstance(v, list) and all(isinstance(r, list) for r in v):
        cells = v
    elif isinstance(v, list):
        cells = [v]
    elif isinstance(v, (int, float)) and not isinstance(v, bool):
        cells = [[v]]
    else:
        raise SpecError(
            f"{where}: expected a matrix (rows text, an array of rows, or 'identity'), found {_kind(v)}"
        )
    if not cells or not cells[0]:
        raise SpecError(f"{where}: expected a matrix, found an empty one")
    n, m = len(cells), len(cells[0])
    too_large = limits.shape_refusal((n, m))
    if too_large:
        raise SpecError(f"{where}: {too_large}")
    for i, r in enumerate(cells):
        if len(r) != m:
            raise SpecError(f"{where}: ragged matrix: row 0 has {m} entries, row {i} has {len(r)}")
    if (rows_expected is not None and n != rows_expected) or (
        cols_expected is not None and m != cols_expected
    ):
        exp = f"{rows_expected if rows_expected is not None else 'any'}x{cols_expected if cols_expected is not None else 'any'}"
        hint = ""
        if (m, n) == (rows_expected, cols_expected):
            hint = (
                f"; this is the transpose of the expected shape: symtf multiplies x·W, so write "
                f"the {m} rows of Wᵀ (the article may use W·x)"
            )
        raise SpecError(f"{where}: expected a {exp} matrix, found {n}x{m}{hint}")
    return sympy.ImmutableMatrix(
        [
            [_cell(c, f"{where}[{i}][{j}]", symbols=symbols) for j, c in enumerate(r)]
            for i, r in enumerate(cells)
        ]
    )


def _vector(v: Any, where: str, d: int, default: int) -> sympy.ImmutableMatrix:
    if v is None:
        return sympy.ImmutableMatrix(1, d, [default] * d)
    if isinstance(v, (int, float, str)) and not (isinstance(v, str) and len(_split_rows(v)) > 1):
        cells: list[list[Any]] = _split_rows(v) if isinstance(v, str) else [[v]]
        if isinstance(v, str) and v.strip() in ("zeros", "ones"):
            return matrix(v, where, shape=(1, d))
        if len(cells) == 1 and len(cells[0]) == 1:
            c = _cell(cells[0][0], where, symbols=True)
            return sympy.ImmutableMatrix(1, d, [c] * d)
    return matrix(v, where, shape=(1, d))
