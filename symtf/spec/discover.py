"""Which files of a folder are derivations: one rule for ``symtf check DIR`` and the pytest plugin.

A project keeps other TOML files beside its derivations (``pyproject.toml``,
``ruff.toml``): a ``*.toml`` file is a derivation when it holds a ``[[claims]]``
table or a top-level ``claims =`` array. Only a file that is read whole as TOML
and holds neither is skipped: a file ``symtf check`` cannot read (larger than a
derivation may be, not UTF-8, not valid TOML, not a regular file) is checked, so
that its error names it, never passed over in silence.
"""

from __future__ import annotations

import fnmatch
import os
import tomllib
from pathlib import Path
from typing import Literal

from symtf.spec.derivation import MAX_FILE_BYTES

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

TomlKind = Literal["derivation", "other", "unreadable"]


def toml_kind(path: Path) -> TomlKind:
    """What a ``*.toml`` file is to a search.

    Returns:
        ``"derivation"`` for a TOML file that holds claims (``[[claims]]`` or
        ``claims =`` at the top level); ``"other"`` for a TOML file, read whole,
        that holds none (``pyproject.toml``); ``"unreadable"`` for a file that
        ``symtf check`` cannot read: larger than a derivation may be, not UTF-8,
        not valid TOML, or not a regular file (a FIFO is not waited on).
    """
    from symtf import files
    from symtf.errors import SpecError

    try:  # the one capped reader, as symtf check reads a derivation
        text = files.read_text(path, MAX_FILE_BYTES, what="a derivation")
        data = tomllib.loads(text)
    except (SpecError, ValueError, RecursionError):  # ValueError: TOMLDecodeError, or 4300+ digits
        return "unreadable"
    return "derivation" if "claims" in data else "other"


def is_derivation_file(path: Path) -> bool:
    """Whether ``path`` is a readable TOML file that holds claims (``[[claims]]`` or ``claims =``)."""
    return toml_kind(path) == "derivation"


def is_checked(path: Path) -> bool:
    """Whether a search checks this ``*.toml`` file: all but a readable TOML file with no claims.

    A file that cannot be read is checked, so that its error names it (exit 2).
    """
    return toml_kind(path) != "other"


def toml_files(folder: Path) -> list[Path]:
    """Every ``*.toml`` under ``folder`` and its subfolders, sorted, outside :data:`SKIPPED_FOLDERS`."""
    found: list[Path] = []
    for here, dirs, files in os.walk(folder):
        dirs[:] = sorted(d for d in dirs if not any(fnmatch.fnmatch(d, p) for p in SKIPPED_FOLDERS))
        found.extend(Path(here) / f for f in files if f.endswith(".toml"))
    return sorted(found)


def derivation_files(folder: Path) -> tuple[list[Path], list[Path]]:
    """The files under ``folder`` (subfolders too) to check, and the other TOML files.

    The files to check are the derivations and every ``*.toml`` file that cannot be
    read (see :func:`toml_kind`): checking it says why, by name. A file that is a
    symbolic link out of ``folder`` is checked without being read, so that checking
    it refuses it by name.

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
        (derivations if is_checked(path) else skipped).append(path)
    return derivations, skipped


__all__ = [
    "SKIPPED_FOLDERS",
    "derivation_files",
    "is_checked",
    "is_derivation_file",
    "toml_files",
    "toml_kind",
]
