"""Reading an article: every printed number, matrix and displayed line, each with its place.

- :mod:`symtf.draft.read.source`: texts that keep the place of every character.
- :mod:`symtf.draft.read.markdown` (markdown-it-py), :mod:`symtf.draft.read.latex`
  (pylatexenc) and :mod:`symtf.draft.read.notebook` (nbformat, places from the raw
  JSON): an article cut into maths and prose segments (:mod:`symtf.draft.read.segments`),
  and the code its translation reads (:mod:`symtf.draft.read.blocks`).
- :mod:`symtf.draft.read.maths` and :mod:`symtf.draft.read.prose`: the values of one
  segment (:class:`Found`), each entry with its :class:`~symtf.place.Place`.
- :mod:`symtf.draft.read.extract`: the whole article; :mod:`symtf.draft.read.toml`: a
  draft derivation of it (``symtf extract``).
"""

from __future__ import annotations

from symtf.draft.read.blocks import Block, Output
from symtf.draft.read.extract import (
    MAX_ARTICLE_BYTES,
    OutputPlaces,
    Reading,
    extract,
    extract_text,
    read,
    read_article_text,
    segments,
    statements,
)
from symtf.draft.read.items import LITERAL, Found, Segment
from symtf.draft.read.notebook import check_notebook, notebook_cells
from symtf.draft.read.source import text_lines
from symtf.draft.read.toml import draft_toml
from symtf.place import Place

__all__ = [
    "LITERAL",
    "MAX_ARTICLE_BYTES",
    "Block",
    "Found",
    "Output",
    "OutputPlaces",
    "Place",
    "Reading",
    "Segment",
    "check_notebook",
    "draft_toml",
    "extract",
    "extract_text",
    "notebook_cells",
    "read",
    "read_article_text",
    "segments",
    "statements",
    "text_lines",
]
