"""symtf: check the arithmetic of hand-worked transformer examples exactly.

Typical use:

    import symtf
    d = symtf.load("i_love_ai")       # a file, or a bundled example by name
    graph = symtf.build(d)          # the step graph: nodes name = op(inputs…)
    trace = symtf.run(d)            # every node's value, exact
    report = symtf.check(d)         # a certified verdict per printed number
    print(symtf.render(report))
"""

from __future__ import annotations

from os import PathLike as _PathLike
from os import fspath as _fspath
from typing import Any as _Any

from symtf.checking import compare as _compare
from symtf.checking.report import Report
from symtf.errors import SymtfError
from symtf.graph.pipeline import build, run
from symtf.spec import Derivation, load, loads


def check(*derivations: Derivation | str | _PathLike[str]) -> Report:
    """Check every printed number of one or more derivations.

    Args:
        *derivations: Loaded derivations, paths of derivation files, or names of
            bundled ones (``"i_love_ai"``).

    Raises:
        SymtfError: For a file that does not exist or is not a valid derivation.
    """
    from symtf import bundled

    loaded = [
        d if isinstance(d, Derivation) else load(bundled.resolve(_fspath(d))) for d in derivations
    ]
    return Report(tuple(_compare.check(d) for d in loaded))


def __getattr__(name: str) -> _Any:
    """``symtf.__version__``, read from the installed package's metadata when first asked.

    pyproject.toml is the one place the version is written. Reading it imports
    ``importlib.metadata`` (and with it the ``email`` package), which a check that never
    prints the version does not pay for.
    """
    if name != "__version__":
        raise AttributeError(f"module 'symtf' has no attribute {name!r}")
    from importlib import metadata

    try:
        version = metadata.version("symtf")
    except metadata.PackageNotFoundError:  # a source tree that was never installed
        version = "0+unknown"
    globals()["__version__"] = version
    return version


#: Formats of :func:`render` (as ``symtf check --format``).
FORMATS = ("text", "json", "junit", "github", "sarif")


def render(report: Report, fmt: str = "text") -> str:
    """Render a report as ``text``, ``json`` (contract v1), ``junit``, ``github`` or ``sarif``.

    Raises:
        ValueError: For another format.
    """
    if fmt not in FORMATS:
        raise ValueError(f"format: expected one of {', '.join(FORMATS)}, found {fmt!r}")
    import importlib

    return str(importlib.import_module(f"symtf.renderers.{fmt}").render(report))


def load_ipython_extension(ipython: _Any) -> None:
    """``%load_ext symtf``: draw reports and traces as HTML, Markdown and LaTeX in IPython.

    ``import symtf`` inside IPython does this already; the extension is for a shell that
    started after symtf was imported. See :mod:`symtf.renderers.display`.
    """
    from symtf.renderers.display import register

    register(ipython.display_formatter)


def _display_in_ipython() -> None:
    """Register the notebook displays when symtf is imported inside IPython (a notebook)."""
    import sys

    if "IPython" in sys.modules:  # never import IPython only to find it is not running
        from symtf.renderers.display import register

        register()


_display_in_ipython()

__all__ = [
    "Derivation",
    "Report",
    "SymtfError",
    "__version__",
    "build",
    "check",
    "load",
    "loads",
    "render",
    "run",
]
