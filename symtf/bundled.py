"""The worked examples shipped with symtf, found the same way in a checkout and an install.

In a source checkout they live in the top-level ``derivations/`` folder; the
wheel maps that folder into the package as ``symtf/derivations``. A bundled
example can be named by its file stem (``i_love_ai``) wherever a path is taken.
"""

from __future__ import annotations

from pathlib import Path

from symtf.errors import SymtfError

_HERE = Path(__file__).resolve().parent


def folder() -> Path | None:
    """The folder of bundled derivations, or ``None`` if this installation has none."""
    for candidate in (_HERE / "derivations", _HERE.parent / "derivations"):
        if candidate.is_dir() and any(candidate.glob("*.toml")):
            return candidate
    return None


def paths() -> list[Path]:
    """Every bundled derivation file, sorted by name."""
    where = folder()
    return sorted(where.glob("*.toml")) if where is not None else []


def names() -> list[str]:
    """The names (file stems) of the bundled derivations."""
    return [p.stem for p in paths()]


def named(name: str) -> Path | None:
    """The bundled derivation called ``name`` (``i_love_ai`` or ``i_love_ai.toml``), if any.

    Only a bare name is looked up: anything with a folder in it is a path.
    """
    if not name or Path(name).name != name:
        return None
    stem = name.removesuffix(".toml")
    for p in paths():
        if p.stem == stem:
            return p
    return None


def resolve(path: str | Path) -> Path:
    """A derivation file: ``path`` if it exists, else the bundled derivation of that name.

    Raises:
        SymtfError: When it is neither an existing path nor a bundled name.
    """
    p = Path(path)
    if p.exists():
        return p
    found = named(str(path))
    if found is not None:
        return found
    known = ", ".join(names()) or "none in this installation"
    raise SymtfError(f"{path}: no such file or folder, nor a bundled derivation (bundled: {known})")


def get(name: str) -> Path:
    """The bundled derivation called ``name``.

    Raises:
        SymtfError: When there is none by that name (the bundled names are listed).
    """
    found = named(name)
    if found is None:
        known = ", ".join(names()) or "none in this installation"
        raise SymtfError(f"no bundled derivation called {name!r} (bundled: {known})")
    return found
