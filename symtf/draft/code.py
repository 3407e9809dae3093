"""The code translation's former home: its names, re-exported from :mod:`symtf.draft.translate`.

Notebook cells and fenced Python are translated by :mod:`symtf.draft.translate` (one
module per stage and per framework); this module keeps the names other modules import.
"""

from __future__ import annotations

from symtf.draft.translate import (
    SIZE,
    Block,
    Given,
    Note,
    Output,
    Shown,
    Step,
    Translator,
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
