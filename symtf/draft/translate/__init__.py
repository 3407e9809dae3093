"""Notebook cells and fenced Python blocks, read with ``ast`` and translated onto ops.

Nothing is executed, imported or evaluated: the source is parsed by
:func:`ast.parse` and walked. What a reader of the code would take as the
worked example is translated:

- array literals (``np.array([[…]])``, ``torch.tensor(…, dtype=…)``, nested
  lists) become given tensors, their entries copied from the source text;
  float32 (PyTorch's and JAX's default, or a stated ``dtype``) marks the
  computation as float32 (``computed_in``);
- assignments of array expressions become steps: operators, ``.T``, indexing,
  calls and methods that the table of framework calls knows, ``nn`` modules
  with their settings and weights, small functions defined in the notebook
  (inlined), ``for`` loops over literal ranges and list comprehensions
  (unrolled);
- each ``print``, ``display`` and a cell's last expression is matched with the
  printed output, which becomes a claim on the value shown.

- draws from numpy's legacy seeded stream (``np.random.seed(s)`` then ``randn``,
  ``rand``, ``normal``, …) become given tensors of the values numpy's own
  ``RandomState(s)`` draws, exactly (the stream numpy keeps stable across versions);
- a loop whose course depends on its values (a greedy decoding's
  ``int(np.argmax(probs))``, ``if next_id == eos: break``) is unrolled as it runs,
  each index decided from certified values of the inputs, never guessed.

Everything else (other random initialisation, file IO, classes, other control flow)
stays a comment naming the cell and line, and what depends on it is not checked —
unless its value is printed, in which case the print gives it (rounded).

The stages, one module each:

- :mod:`~symtf.draft.translate.sources`: the code blocks the reader found
  (:mod:`symtf.draft.read.blocks`) and a notebook's file line of each cell line;
- :mod:`~symtf.draft.translate.events`: what the translation yields;
- :mod:`~symtf.draft.translate.scope`: names and imports, and the walk's state;
- :mod:`~symtf.draft.translate.constants` and :mod:`~symtf.draft.translate.literals`:
  Python constants, and array literals with their entries as written;
- :mod:`~symtf.draft.translate.expressions` and :mod:`~symtf.draft.translate.calls`:
  expressions and calls onto ops, reading the table
  (:mod:`~symtf.draft.translate.table` and one module per framework:
  :mod:`~symtf.draft.translate.numpy`, :mod:`~symtf.draft.translate.torch`,
  :mod:`~symtf.draft.translate.tensorflow`, :mod:`~symtf.draft.translate.jax`);
- :mod:`~symtf.draft.translate.draws`: numpy's seeded legacy stream;
- :mod:`~symtf.draft.translate.decided`: an argmax decided from certified values;
- :mod:`~symtf.draft.translate.autograd`: ``backward()`` and ``.grad``;
- :mod:`~symtf.draft.translate.texts`: strings built from words and formatted entries;
- :mod:`~symtf.draft.translate.prints` and :mod:`~symtf.draft.translate.outputs`:
  printed output read and matched with the prints;
- :mod:`~symtf.draft.translate.core`: the walk through statements.
"""

from __future__ import annotations

from symtf.draft.translate.core import Translator
from symtf.draft.translate.events import SIZE, Given, Note, Shown, Step
from symtf.draft.translate.sources import (
    Block,
    Output,
    cell_lines,
    file_lines,
)

__all__ = [
    "SIZE",
    "Block",
    "Given",
    "Note",
    "Output",
    "Shown",
    "Step",
    "Translator",
    "cell_lines",
    "file_lines",
]
