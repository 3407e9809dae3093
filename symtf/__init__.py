"""symtf: check the arithmetic of hand-worked transformer examples exactly.

Typical use::

    import symtf
    d = symtf.load("derivations/i_love_ai.toml")
    trace = symtf.run(d)            # every named step, exact
    report = symtf.check(d)         # a certified verdict per printed number
    print(symtf.render(report))
"""

from __future__ import annotations

__version__ = "0.1.0"

from symtf import compare as _compare
from symtf.compare import Report
from symtf.errors import SymtfError
from symtf.pipeline import run
from symtf.spec import Derivation, load, loads


def check(*derivations: Derivation) -> Report:
    """Check every printed number of one or more derivations."""
    return Report(tuple(_compare.check(d) for d in derivations))


def render(report: Report, fmt: str = "text") -> str:
    """Render a report as ``text`` or ``json``."""
    if fmt == "json":
        from symtf.renderers.json import render as render_json

        return render_json(report)
    from symtf.renderers.text import render as render_text

    return render_text(report)


__all__ = [
    "Derivation",
    "Report",
    "SymtfError",
    "__version__",
    "check",
    "load",
    "loads",
    "render",
    "run",
]
