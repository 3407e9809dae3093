"""``[tool.symtf]`` in ``pyproject.toml``: which files a project checks, and how.

Found as ruff finds ``[tool.ruff]``: the nearest ``pyproject.toml`` with a
``[tool.symtf]`` table, from the working folder up (a ``pyproject.toml``
without one is passed over). Its patterns are relative to its own folder::

    [tool.symtf]
    include = ["posts/**/*.md", "notebooks/*.ipynb"]   # articles to check
    exclude = ["posts/drafts/**"]
    timeout = 120              # seconds per file (symtf check --timeout)
    allow-undecided = false    # symtf check --allow-undecided
    require-checked = 90       # percent of an article's numbers (--require-checked)

A pattern is matched against a file's path from the project's folder, with
``/`` between folders: ``*`` and ``?`` stay within one folder name, ``**``
spans any number of folders (``posts/**/*.md`` matches ``posts/a.md`` and
``posts/2024/b.md``), ``[abc]`` is one of those characters. An ``exclude``
pattern that matches a folder excludes everything in it. Unknown keys, and
values of the wrong type, are errors that name the file and the key. Nothing
here reads an article: it only says which files to read.
"""

from __future__ import annotations

import math
import os
import re
import tomllib
from collections.abc import Iterable
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path
from typing import Any

from symtf.errors import SpecError

#: The file, and the table in it.
PYPROJECT = "pyproject.toml"
TABLE = "tool.symtf"
#: The keys ``[tool.symtf]`` may hold.
KEYS = ("include", "exclude", "timeout", "allow-undecided", "require-checked")
#: The most bytes a ``pyproject.toml`` may have (a derivation's cap).
MAX_BYTES = 2_000_000
#: The most patterns, and the longest pattern.
MAX_PATTERNS = 1000
MAX_PATTERN_CHARS = 1000


@dataclass(frozen=True)
class Config:
    """A project's ``[tool.symtf]``.

    Attributes:
        path: The ``pyproject.toml`` it was read from.
        include: Patterns of the files to check (articles, derivations); empty: the
            derivation files a search of the project's folder finds.
        exclude: Patterns of files (or folders) never checked by a search.
        timeout: Seconds per file, or ``None`` for ``symtf check``'s default.
        allow_undecided: ``--allow-undecided``, or ``None`` when not set.
        require_checked: ``--require-checked`` (a percentage), or ``None``.
    """

    path: Path
    include: tuple[str, ...] = ()
    exclude: tuple[str, ...] = ()
    timeout: float | None = None
    allow_undecided: bool | None = None
    require_checked: float | None = None

    @property
    def root(self) -> Path:
        """The project's folder: patterns are relative to it."""
        return self.path.parent

    def relative(self, path: str | Path) -> str | None:
        """``path`` from the project's folder, with ``/`` between folders; ``None`` outside it."""
        root = os.path.realpath(self.root)
        real = os.path.realpath(path)
        if real != root and not real.startswith(root.rstrip(os.sep) + os.sep):
            return None
        return Path(os.path.relpath(real, root)).as_posix()

    def includes(self, path: str | Path) -> bool:
        """Whether ``include`` names this file and ``exclude`` does not."""
        rel = self.relative(path)
        return rel is not None and _any(self.include, rel) and not self._excluded(rel)

    def excludes(self, path: str | Path) -> bool:
        """Whether ``exclude`` names this file or a folder it is in."""
        rel = self.relative(path)
        return rel is not None and self._excluded(rel)

    def _excluded(self, rel: str) -> bool:
        parts = rel.split("/")
        return any(_any(self.exclude, "/".join(parts[:k])) for k in range(1, len(parts) + 1))


# ----------------------------------------------------------------------------- patterns


@lru_cache(maxsize=256)
def pattern_regex(pattern: str) -> re.Pattern[str]:
    """A pattern (``posts/**/*.md``) as a regular expression over a whole relative path."""
    out = []
    i, n = 0, len(pattern)
    while i < n:
        ch = pattern[i]
        if pattern.startswith("**/", i):
            out.append("(?:[^/]*/)*")  # any number of folders, none too
            i += 3
        elif pattern.startswith("**", i):
            out.append(".*")
            i += 2
        elif ch == "*":
            out.append("[^/]*")
            i += 1
        elif ch == "?":
            out.append("[^/]")
            i += 1
        elif ch == "[" and _class_end(pattern, i) > 0:
            end = _class_end(pattern, i)
            body = pattern[i + 1 : end]
            negated = body.startswith("!")
            body = "".join(c if c == "-" else re.escape(c) for c in body[negated:])
            out.append("(?!/)[" + "^" * negated + body + "]")  # never a folder's "/"
            i = end + 1
        else:
            out.append(re.escape(ch))
            i += 1
    return re.compile("".join(out))


def _class_end(pattern: str, i: int) -> int:
    """Where the ``[...]`` class that starts at ``i`` ends (its ``]``), or -1 if it does not."""
    j = i + 1
    if pattern[j : j + 1] == "!":
        j += 1
    if pattern[j : j + 1] == "]":  # a "]" first is one of the characters
        j += 1
    return pattern.find("]", j)


def _any(patterns: Iterable[str], rel: str) -> bool:
    return any(pattern_regex(p).fullmatch(rel) for p in patterns)


# ----------------------------------------------------------------------------- reading


def find(start: str | Path | None = None) -> Config | None:
    """The ``[tool.symtf]`` of the nearest ``pyproject.toml`` that has one, from ``start`` up.

    Args:
        start: The folder to start from (default: the working folder).

    Raises:
        SpecError: For a ``pyproject.toml`` on the way that cannot be read (too large,
            not UTF-8, not valid TOML), or a ``[tool.symtf]`` with an unknown key or a
            value of the wrong type; the message names the file and the key.
    """
    here = Path(os.path.realpath(start if start is not None else "."))
    for folder in (here, *here.parents):
        candidate = folder / PYPROJECT
        if candidate.is_file():
            table = _table(candidate)
            if table is not None:
                return _config(table, candidate)
    return None


def load(path: str | Path) -> Config:
    """The ``[tool.symtf]`` of one ``pyproject.toml`` (an empty one when it has none).

    Raises:
        SpecError: As :func:`find`.
    """
    p = Path(path)
    return _config(_table(p) or {}, Path(os.path.realpath(p)))


def _table(path: Path) -> dict[str, Any] | None:
    from symtf import files

    text = files.read_text(path, MAX_BYTES, what="a pyproject.toml")
    try:
        data = tomllib.loads(text)
    except ValueError as e:
        raise SpecError(f"{path}: not valid TOML ({e})") from None
    except RecursionError:
        raise SpecError(f"{path}: not valid TOML (nested too deeply)") from None
    tool = data.get("tool")
    if not isinstance(tool, dict) or "symtf" not in tool:
        return None
    table = tool["symtf"]
    if not isinstance(table, dict):
        raise SpecError(f"{path}: {TABLE}: expected a table, found {_kind(table)}")
    return table


def _config(table: dict[str, Any], path: Path) -> Config:
    from symtf.suggest import hint

    where = f"{path}: {TABLE}"
    for key in table:
        if key not in KEYS:
            raise SpecError(
                f"{where}.{key}: unknown key (known: {', '.join(KEYS)}){hint(key, KEYS)}"
            )
    return Config(
        path=path,
        include=_patterns(table, "include", where, path.parent),
        exclude=_patterns(table, "exclude", where, path.parent),
        timeout=_timeout(table, where),
        allow_undecided=_boolean(table, "allow-undecided", where),
        require_checked=_percent(table, "require-checked", where),
    )


def _kind(v: Any) -> str:
    from symtf.numbers import toml_kind

    return toml_kind(v)


def _patterns(table: dict[str, Any], key: str, where: str, folder: Path) -> tuple[str, ...]:
    raw = table.get(key, [])
    if isinstance(raw, str):
        raw = [raw]
    if not isinstance(raw, list):
        raise SpecError(f"{where}.{key}: expected an array of patterns, found {_kind(raw)}")
    if len(raw) > MAX_PATTERNS:
        raise SpecError(
            f"{where}.{key}: expected at most {MAX_PATTERNS} patterns, found {len(raw)}"
        )
    out = []
    for k, p in enumerate(raw):
        at = f"{where}.{key}[{k}]"
        if not isinstance(p, str):
            raise SpecError(f"{at}: expected a pattern (a string), found {_kind(p)}")
        if not p.strip() or "\x00" in p or len(p) > MAX_PATTERN_CHARS:
            raise SpecError(f'{at}: expected a pattern such as "posts/**/*.md", found {p!r}')
        p = p.removeprefix("./").rstrip("/")
        if p.startswith("/") or re.match(r"^[A-Za-z]:", p) or ".." in p.split("/"):
            raise SpecError(
                f"{at}: expected a pattern inside the project's folder ({folder}), found {p!r}"
            )
        out.append(p)
    return tuple(out)


def _timeout(table: dict[str, Any], where: str) -> float | None:
    from symtf.limits import MAX_TIMEOUT

    if "timeout" not in table:
        return None
    v = table["timeout"]
    if isinstance(v, bool) or not isinstance(v, (int, float)):
        raise SpecError(f"{where}.timeout: expected a number of seconds, found {_kind(v)}")
    if not math.isfinite(v) or not 0 < v <= MAX_TIMEOUT:
        raise SpecError(
            f"{where}.timeout: expected a number of seconds greater than 0 and at most "
            f"{MAX_TIMEOUT:g}, found {v!r}"
        )
    return float(v)


def _boolean(table: dict[str, Any], key: str, where: str) -> bool | None:
    if key not in table:
        return None
    v = table[key]
    if not isinstance(v, bool):
        raise SpecError(f"{where}.{key}: expected true or false, found {_kind(v)}")
    return v


def _percent(table: dict[str, Any], key: str, where: str) -> float | None:
    if key not in table:
        return None
    v = table[key]
    if isinstance(v, bool) or not isinstance(v, (int, float)):
        raise SpecError(f"{where}.{key}: expected a percentage from 0 to 100, found {_kind(v)}")
    if not math.isfinite(v) or not 0 <= v <= 100:
        raise SpecError(f"{where}.{key}: expected a percentage from 0 to 100, found {v!r}")
    return float(v)


__all__ = ["KEYS", "Config", "find", "load", "pattern_regex"]
