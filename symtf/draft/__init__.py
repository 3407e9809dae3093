"""Stage 0, draft: an article or notebook as it stands → a derivation (text), never run.

- :mod:`symtf.draft.article`: the article's printings, displayed lines, equations and
  stated sizes (read by :mod:`symtf.extract`; nothing computed).
- :mod:`symtf.draft.templates`: candidate steps as ``(op, params, inputs)`` trees and
  their step-language text.
- :mod:`symtf.draft.translate`: notebook cells and fenced Python read with ``ast`` and
  translated onto the step language's ops (a shared core, and one module per framework
  reading the table of framework calls).
- :mod:`symtf.draft.infer`: the step behind each printed matrix, certified in balls:
  hypotheses from the article's text (``formula``, ``stated``), evidence from its
  numbers (``candidates``, ``prefilter``, ``evidence``), the steps its code states
  (``code``), taken in the article's order (``search``).
- :mod:`symtf.draft.compose`: all of it written as a derivation file.

:func:`draft_file` and :func:`draft_text` are the entry points; the result's ``toml``
is checked by the ordinary pipeline (``symtf.spec.loads`` then ``symtf.check``).
"""

from __future__ import annotations

import contextlib
import gc
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from symtf.files import ARTICLE_SUFFIXES

if TYPE_CHECKING:
    from symtf.draft.article import Article
    from symtf.draft.compose import Stated, Unmapped, Unread

__all__ = [
    "ARTICLE_SUFFIXES",
    "Draft",
    "Stated",
    "Unmapped",
    "Unread",
    "article_kind",
    "draft_file",
    "draft_text",
]


def __getattr__(name: str) -> Any:
    """``Stated``, ``Unmapped`` and ``Unread``, imported when first asked for: reading an article
    (:mod:`symtf.draft.read`) needs none of the search that composing imports."""
    if name in ("Stated", "Unmapped", "Unread"):
        from symtf.draft import compose

        return getattr(compose, name)
    raise AttributeError(f"module 'symtf.draft' has no attribute {name!r}")


@dataclass(frozen=True)
class Draft:
    """An article's inferred derivation and what could not be inferred.

    Attributes:
        path: The article.
        toml: The derivation, as text (``symtf.spec.loads`` reads it).
        unread: Printed claims the draft cannot read, with reasons.
        unmapped: Printings no step explains (``step = "?"`` claims).
        printed: Printed numbers found in the article.
        inputs: Of them, those that define the article's given tensors.
        steps: Steps inferred.
        seconds: How long drafting took.
        stated: The printings the article states as inputs (given tensors).
    """

    path: str
    toml: str
    unread: tuple[Unread, ...]
    unmapped: tuple[Unmapped, ...]
    printed: int
    inputs: int
    steps: int
    seconds: float
    stated: tuple[Stated, ...] = ()


def article_kind(path: str | Path) -> str:
    """``md``, ``tex``, ``ipynb``, ``py``, ``c`` (a C-family program) or ``txt`` from a file name."""
    from symtf.draft.read.program import program_kind

    program = program_kind(path)
    if program is not None:
        return program
    suffix = Path(path).suffix.lower().lstrip(".")
    return (
        {"markdown": "md"}.get(suffix, suffix)
        if suffix in ("md", "markdown", "tex", "ipynb")
        else "txt"
    )


@contextlib.contextmanager
def _collector_paused() -> Iterator[None]:
    """Python's cycle collector paused while the search runs.

    The search makes and drops tens of thousands of small candidates, freed by reference
    counting; each automatic collection meanwhile walks every object the process holds
    (SymPy's modules and caches): 0.1–0.3 s of a 0.7 s draft. What the search leaves in
    cycles is collected when the collector runs again.
    """
    enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if enabled:
            gc.enable()


def draft_text(
    text: str, kind: str, *, path: str = "<text>", article: Article | None = None
) -> Draft:
    """Draft the derivation of an article given as text (see the package docstring).

    ``article``: the text already read (:func:`~symtf.draft.article.read_article`), when the
    caller has read it.
    """
    from symtf.draft import sizing
    from symtf.draft.article import read_article
    from symtf.draft.compose import compose
    from symtf.draft.infer.search import Search

    start = time.perf_counter()
    if article is None:
        article = read_article(text, kind, path=path)
    sizing.size(article, path)  # within the file limits, and the time left, before searching
    search = Search(article)
    with _collector_paused():
        search.run()
    composed = compose(article, search)
    return Draft(
        path,
        composed.toml,
        tuple(composed.unread),
        tuple(composed.unmapped),
        composed.printed,
        composed.inputs,
        composed.steps,
        time.perf_counter() - start,
        tuple(composed.stated),
    )


def draft_file(path: str | Path) -> Draft:
    """Draft the derivation of an article file (``.md``, ``.txt``, ``.tex``, ``.ipynb``).

    Raises:
        SpecError: The file is missing, not a regular file, too large, or not UTF-8.
    """
    from symtf.draft.read import read_article_text

    text = read_article_text(path)
    return draft_text(text, article_kind(path), path=str(path))
