"""What the worker keeps between edits, and what an edit lets it reuse.

Kept warm for the life of the worker process: SymPy, python-flint, the op
registry, the drafting code and their caches (the imports alone are two thirds of
a cold ``symtf check``).

Kept per document: the last text and what its check found. A derivation file
(``kind`` ``toml``) is checked as ``symtf check`` checks it; its numbers' places
are those of their ``printed`` strings (:func:`symtf.fix.placed`). An edit that leaves
the text as it was (a save, a change undone) reuses that result whole. Otherwise
the document is drafted and checked again from its text, exactly as
``symtf check`` does, so that the editor and the command never disagree.
"""

from __future__ import annotations

import dataclasses
import tomllib
from dataclasses import dataclass
from typing import Any

__all__ = ["State", "describe"]


@dataclass
class _Doc:
    text: str
    kind: str
    name: str
    found: dict[str, Any]


class State:
    """The worker's memory of each document (by the server's key for it)."""

    def __init__(self) -> None:
        self.docs: dict[str, _Doc] = {}

    def forget(self, key: str) -> None:
        """Drop what is kept for a document (closed, or its check was cancelled midway)."""
        self.docs.pop(key, None)

    def check(self, key: str, text: str, kind: str, name: str) -> tuple[dict[str, Any], str]:
        """Check a document's text: ``(found, what was reused)`` (see :func:`describe`).

        Raises:
            SymtfError: The text cannot be read as that kind of article.
        """
        from symtf.commands.draft import check_drafted
        from symtf.draft import draft_text
        from symtf.limits import guard

        last = self.docs.get(key)
        if last is not None and (last.text, last.kind, last.name) == (text, kind, name):
            return last.found, "the last result (the text is unchanged)"
        self.docs.pop(key, None)
        if kind == "toml":
            found = _derivation(text, name)
        else:
            with guard(name):
                draft = draft_text(text, kind, path=name)
            report = check_drafted(draft, name)
            found = describe(report, draft.toml, text)
        self.docs[key] = _Doc(text, kind, name, found)
        return found, "the warm process"


def _derivation(text: str, name: str) -> dict[str, Any]:
    """A derivation file's text checked as ``symtf check`` checks the file."""
    from pathlib import Path

    from symtf import fix
    from symtf.commands.fixing import check_text

    report = check_text(Path(name), text, None)  # the caller holds the time budget
    found = describe(report, text, text)
    checks = found["derivation"]["checks"]
    for c, p in zip(checks, fix.placed(report, text), strict=True):
        if p.place is not None:  # where in this file the printed number is
            c["file_place"] = list(p.place)
    found["toml"] = None  # the document is the derivation
    return found


def describe(report: Any, toml: str, text: str) -> dict[str, Any]:
    """A checked document as plain data for the server.

    ``derivation``: the report as ``symtf check --format json`` writes it (``title``,
    ``checks``, ``unchecked``, ``counts``); ``fixes``: every :class:`symtf.fix.Fix`;
    ``toml``: the derivation (an article's draft); ``steps``: each step's expression by name.
    """
    from symtf import fix
    from symtf.checking.report import Report
    from symtf.renderers.json import report_dict

    d = report_dict(Report((report,)))["derivations"][0]
    try:
        steps = tomllib.loads(toml).get("steps", {})
    except ValueError:
        steps = {}
    return {
        "derivation": {k: d[k] for k in ("title", "checks", "unchecked", "counts") if k in d},
        "fixes": [dataclasses.asdict(f) for f in fix.plan(report, text).fixes],
        "toml": toml,
        "steps": {str(k): str(v) for k, v in steps.items() if isinstance(v, str)},
    }
