"""Which files of a folder are derivations: one rule for ``symtf check DIR`` and the pytest plugin.

A project keeps other TOML files beside its derivations (``pyproject.toml``,
``ruff.toml``): a ``*.toml`` file is a derivation when it holds a ``[[claims]]``
table or a top-level ``claims =`` array, read with the TOML line locator so that
the words inside a string do not count. Reading stops at the size limit of a
derivation file; nothing is parsed beyond that sniff.
"""

from __future__ import annotations

import fnmatch
import os
import re
from pathlib import Path

from symtf.spec.derivation import MAX_FILE_BYTES

_CLAIMS = re.compile(r"^\s*\[\[\s*claims\s*\]\]|^\s*claims\s*=", re.MULTILINE)

#: Folders a search does not enter (pytest's default ``norecursedirs``).
SKIPPED_FOLDERS = (
    "*.egg",
    ".*",
    "_darcs",
    "build",
    "CVS",
    "dist",
    "node_modules",
    "venv",
    "{arch}",
)


def is_derivation_file(path: Path) -> bool:
    """Whether ``path`` is a TOML file that holds claims (``[[claims]]`` or ``claims =``).

    A file that cannot be read, or is larger than a derivation may be, is not one.
    """
    from symtf import files
    from symtf.errors import SpecError

    try:  # the one capped reader: a FIFO or a device named *.toml is not waited on
        text = files.read_bytes(path, MAX_FILE_BYTES).decode("utf-8", errors="replace")
    except SpecError:
        return False
    if not _CLAIMS.search(text):
        return False
    from symtf.spec.toml_lines import locate

    lines = locate(text)  # a [[claims]] inside a string is not a table
    return "claims[0]" in lines or "claims" in lines


def toml_files(folder: Path) -> list[Path]:
    """Every ``*.toml`` under ``folder`` and its subfolders, sorted, outside :data:`SKIPPED_FOLDERS`."""
    found: list[Path] = []
    for here, dirs, files in os.walk(folder):
        dirs[:] = sorted(d for d in dirs if not any(fnmatch.fnmatch(d, p) for p in SKIPPED_FOLDERS))
        found.extend(Path(here) / f for f in files if f.endswith(".toml"))
    return sorted(found)


def derivation_files(folder: Path) -> tuple[list[Path], list[Path]]:
    """The derivation files under ``folder`` (subfolders too), and the other TOML files.

    A file that is a symbolic link out of ``folder`` counts as a derivation without
    being read, so that checking it refuses it by name.

    Returns:
        ``(derivations, skipped)``, each sorted by path.
    """
    derivations: list[Path] = []
    skipped: list[Path] = []
    root = os.path.realpath(folder)
    for path in toml_files(folder):
        real = os.path.realpath(path)
        if os.path.commonpath([root, real]) != root:
            # A link out of the folder is not read, not even sniffed: it is checked, and
            # refused on its own as a file outside the folder.
            derivations.append(path)
            continue
        (derivations if is_derivation_file(path) else skipped).append(path)
    return derivations, skipped


__all__ = ["SKIPPED_FOLDERS", "derivation_files", "is_derivation_file", "toml_files"]
