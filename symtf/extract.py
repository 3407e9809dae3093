"""The reader's public names where they have always been imported from.

``symtf extract`` and drafting read articles with :mod:`symtf.draft.read`; this
module re-exports its names so that ``from symtf.extract import extract`` keeps
working.
"""

from __future__ import annotations

from symtf.draft.read import (
    MAX_ARTICLE_BYTES,
    Found,
    Place,
    check_notebook,
    draft_toml,
    extract,
    extract_text,
    notebook_cells,
    read_article_text,
    statements,
    text_lines,
)

__all__ = [
    "MAX_ARTICLE_BYTES",
    "Found",
    "Place",
    "check_notebook",
    "draft_toml",
    "extract",
    "extract_text",
    "notebook_cells",
    "read_article_text",
    "statements",
    "text_lines",
]
