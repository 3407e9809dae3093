"""The server's settings: ``[tool.symtf]`` of the workspace, then the client's.

Read from the workspace's ``pyproject.toml`` (only these keys; any other key of the
table is left to ``symtf check``)::

    [tool.symtf]
    timeout = 30            # seconds a check may take (as symtf check --timeout)

    [tool.symtf.lsp]
    show-unchecked = true   # an Information diagnostic on each number not checked

and then from the client (``initializationOptions`` or
``workspace/didChangeConfiguration``), under ``symtf``: ``timeout`` and
``showUnchecked``. A value of the wrong type is ignored with a message in the
server's log, never an error that stops it.
"""

from __future__ import annotations

import dataclasses
import math
import tomllib
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from symtf.cli import DEFAULT_TIMEOUT
from symtf.limits import MAX_TIMEOUT

__all__ = ["Settings", "from_client", "from_pyproject"]

#: At most this many bytes of pyproject.toml are read.
MAX_PYPROJECT_BYTES = 1_000_000


@dataclass(frozen=True)
class Settings:
    """What the server does.

    Attributes:
        timeout: Seconds a check may take (``symtf check --timeout``).
        show_unchecked: Whether numbers no step explains get an Information diagnostic.
    """

    timeout: float = DEFAULT_TIMEOUT
    show_unchecked: bool = False


def _timeout(v: Any) -> float | None:
    if isinstance(v, bool) or not isinstance(v, (int, float)):
        return None
    v = float(v)
    return v if math.isfinite(v) and 0 < v <= MAX_TIMEOUT else None


def _flag(v: Any) -> bool | None:
    return v if isinstance(v, bool) else None


def _merged(
    base: Settings, values: Mapping[str, Any], keys: Mapping[str, str], log: Callable[[str], None]
) -> Settings:
    changes: dict[str, Any] = {}
    readers = {"timeout": _timeout, "show_unchecked": _flag}
    for key, attr in keys.items():
        if key not in values:
            continue
        v = readers[attr](values[key])
        if v is None:
            log(f"symtf: setting {key}: ignored {values[key]!r} (expected {_expected(attr)})")
            continue
        changes[attr] = v
    return dataclasses.replace(base, **changes)


def _expected(attr: str) -> str:
    return (
        f"seconds, more than 0 and at most {MAX_TIMEOUT:g}"
        if attr == "timeout"
        else "true or false"
    )


def from_pyproject(folder: Path | None, log: Callable[[str], None]) -> Settings:
    """The settings ``[tool.symtf]`` of ``folder/pyproject.toml`` gives (defaults without one)."""
    from symtf import files
    from symtf.errors import SymtfError

    settings = Settings()
    if folder is None or not (folder / "pyproject.toml").is_file():
        return settings
    path = folder / "pyproject.toml"
    try:
        data = tomllib.loads(files.read_text(path, MAX_PYPROJECT_BYTES, what="pyproject.toml"))
    except (SymtfError, ValueError) as e:
        log(f"symtf: {path}: not read ({e})")
        return settings
    table = data.get("tool", {}).get("symtf", {})
    if not isinstance(table, dict):
        return settings
    settings = _merged(settings, table, {"timeout": "timeout"}, log)
    lsp = table.get("lsp", {})
    if isinstance(lsp, dict):
        settings = _merged(settings, lsp, {"show-unchecked": "show_unchecked"}, log)
    return settings


def from_client(base: Settings, values: Any, log: Callable[[str], None]) -> Settings:
    """``base`` with what the client sent (``{"symtf": {...}}`` or the inner table itself)."""
    if not isinstance(values, Mapping):
        return base
    inner = values.get("symtf", values)
    if not isinstance(inner, Mapping):
        return base
    return _merged(base, inner, {"timeout": "timeout", "showUnchecked": "show_unchecked"}, log)
