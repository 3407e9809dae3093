"""Which files a search checks: one rule for ``symtf check DIR``, the hook and the pytest plugin.

A project keeps other TOML files beside its derivations (``pyproject.toml``,
``ruff.toml``): a ``*.toml`` file is a derivation when it holds a ``[[claims]]``
table or a top-level ``claims =`` array. Only a file that is read whole as TOML
and holds neither is skipped: a file ``symtf check`` cannot read (larger than a
derivation may be, not UTF-8, not valid TOML, not a regular file) is checked, so
that its error names it, never passed over in silence. An article (``.md``,
``.ipynb``, ``.tex``, ``.txt``) is found only when the project's ``[tool.symtf]``
``include`` names it (:mod:`symtf.spec.config`), so that a search without one
finds what it always found, and never a README.
"""

from __future__ import annotations

import fnmatch
import os
import tomllib
from collections.abc import Iterator
from pathlib import Path
from typing import TYPE_CHECKING, Literal

from symtf.spec.derivation import MAX_FILE_BYTES

if TYPE_CHECKING:
    from symtf.spec.config import Config

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


def walk(folder: Path) -> Iterator[Path]:
    """Every file under ``folder`` and its subfolders, in sorted order, outside
    :data:`SKIPPED_FOLDERS` (links to folders are not followed)."""
    for here, dirs, names in os.walk(folder):
        dirs[:] = sorted(d for d in dirs if not any(fnmatch.fnmatch(d, p) for p in SKIPPED_FOLDERS))
        for name in sorted(names):
            yield Path(here) / name


def toml_files(folder: Path) -> list[Path]:
    """Every ``*.toml`` under ``folder`` and its subfolders, sorted, outside :data:`SKIPPED_FOLDERS`."""
    return sorted(p for p in walk(folder) if p.name.endswith(".toml"))


def search(folder: Path, config: Config | None = None) -> tuple[list[Path], list[Path]]:
    """The files under ``folder`` (subfolders too) to check, and the TOML files passed over.

    The files to check are the derivations and every ``*.toml`` file that cannot be
    read (see :func:`toml_kind`): checking it says why, by name. A file that is a
    symbolic link out of ``folder`` is checked without being read, so that checking
    it refuses it by name. With a project's ``[tool.symtf]`` (``config``), the articles
    (``.md``, ``.ipynb``, ``.tex``, ``.txt``) its ``include`` names are checked too, and
    no file its ``exclude`` names is; without one, a search finds derivations only.

    Returns:
        ``(to_check, skipped)``, each sorted by path: ``skipped`` holds the readable
        TOML files without claims.
    """
    from symtf.files import ARTICLE_SUFFIXES

    to_check: list[Path] = []
    skipped: list[Path] = []
    root = os.path.realpath(folder)
    for path in walk(folder):
        if config is not None and config.excludes(path):
            continue
        if path.suffix.lower() in ARTICLE_SUFFIXES:
            if config is not None and config.includes(path):
                to_check.append(path)
            continue
        if not path.name.endswith(".toml"):
            continue
        real = os.path.realpath(path)
        if os.path.commonpath([root, real]) != root:
            # A link out of the folder is not read, not even sniffed: it is checked, and
            # refused on its own as a file outside the folder.
            to_check.append(path)
            continue
        (to_check if is_checked(path) else skipped).append(path)
    return sorted(to_check), sorted(skipped)


def derivation_files(folder: Path) -> tuple[list[Path], list[Path]]:
    """:func:`search` without a project's ``[tool.symtf]``: the derivation files (and the
    ``*.toml`` files that cannot be read), and the other TOML files."""
    return search(folder)


__all__ = [
    "SKIPPED_FOLDERS",
    "derivation_files",
    "is_checked",
    "is_derivation_file",
    "search",
    "toml_files",
    "toml_kind",
    "walk",
]


def configured_files(config: Config) -> list[Path]:
    """Every file under a project's folder that its ``[tool.symtf]`` includes, sorted.

    The folders a search never enters (:data:`SKIPPED_FOLDERS`: ``.git``, ``.venv``,
    ``node_modules`` …) are not entered here either. The paths are as a user would write
    them from the working folder, where that is shorter.
    """
    found = [p for p in walk(config.root) if config.includes(p)]
    return sorted(_short(p) for p in found)


def _short(p: Path) -> Path:
    rel = os.path.relpath(p)
    return Path(rel) if not rel.startswith("..") else p
