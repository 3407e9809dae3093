"""Stage 1, parse: a derivation file (TOML) → a frozen, validated Derivation.

Data only: nothing here computes a model. Numbers are read from their decimal text
into exact rationals, and every error names the file, the key, what was expected and
what was found. The package exports the API of :mod:`symtf.spec.derivation` and
:mod:`symtf.spec.claims` (``from symtf.spec import load, Derivation``); inside the package, modules import
each other by their own names, never through the package.

- :mod:`symtf.spec.derivation`: Derivation files: TOML → a frozen, validated
  :class:`Derivation`.
- :mod:`symtf.spec.claims`: Claims: the numbers an article printed and where in the
  computation they belong.
- :mod:`symtf.spec.modelread`: The ``[model]`` table read into a :class:`Model`.
- :mod:`symtf.spec.model`: The model a derivation describes: frozen dataclasses and the
  vocabularies of its switches.
- :mod:`symtf.spec.seq2seq`: Encoder–decoder derivation files: the model's frozen dataclasses
  and their reader.
- :mod:`symtf.spec.steps`: ``[tensors]`` and ``[steps]`` of a derivation file → frozen data
  (nothing is computed).
- :mod:`symtf.spec.symbols`: The ``[symbols]`` table: a file's declared symbols, and the one
  place a file's symbols are made.
- :mod:`symtf.spec.toml_lines`: Line numbers of tables and keys in TOML text (``tomllib`` does
  not keep them).
- :mod:`symtf.spec.tomlread`: Typed reading of TOML tables, and exact cells, vectors and
  matrices.
- :mod:`symtf.spec.weights`: Weights from files: ``.npz``, ``.npy`` and ``.safetensors``, read
  as exact dyadic rationals.
"""

from symtf.errors import SpecError
from symtf.spec.claims import Claim
from symtf.spec.derivation import MAX_FILE_BYTES, Derivation, load, loads, with_line
from symtf.spec.model import HEAD_PROJECTIONS, Head, Layer, Model
from symtf.spec.tomlread import MAX_DIM, MAX_ENTRIES

__all__ = [
    "HEAD_PROJECTIONS",
    "MAX_DIM",
    "MAX_ENTRIES",
    "MAX_FILE_BYTES",
    "Claim",
    "Derivation",
    "Head",
    "Layer",
    "Model",
    "SpecError",
    "load",
    "loads",
    "with_line",
]
