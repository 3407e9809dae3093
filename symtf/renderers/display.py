"""Jupyter display of reports and traces, registered from the renderers' side.

A report or a trace knows nothing of how it looks in a notebook: its module imports no
renderer. This module tells IPython, by type *name*, which renderer draws each one as
HTML, Markdown or LaTeX (IPython's ``for_type_by_name``), so neither side imports the
other until a notebook asks for a picture:

- ``import symtf`` registers it when it runs inside IPython (a notebook, a console);
- ``%load_ext symtf`` registers it by hand (an IPython started after the import).

Each renderer is imported the first time an object of its type is shown.

Example (in IPython; ``report`` is a :class:`~symtf.checking.report.Report`)::

    from IPython.core.formatters import DisplayFormatter
    formatter = DisplayFormatter()
    register(formatter)
    data, _ = formatter.format(report)
    data["text/html"].startswith('<div class="symtf">')  # True
"""

from __future__ import annotations

import importlib
from collections.abc import Callable
from typing import Any

#: (module, class) -> MIME type -> the renderer that draws it, as ``module:function``.
DISPLAYS: dict[tuple[str, str], dict[str, str]] = {
    ("symtf.checking.report", "DerivationReport"): {
        "text/html": "symtf.renderers.html:report_fragment",
        "text/markdown": "symtf.renderers.markdown:report_markdown",
        "text/latex": "symtf.renderers.latex:derivation_report_latex",
    },
    ("symtf.checking.report", "Report"): {
        "text/html": "symtf.renderers.html:report_fragment",
        "text/markdown": "symtf.renderers.markdown:report_markdown",
        "text/latex": "symtf.renderers.latex:report_latex",
    },
    ("symtf.trace", "Trace"): {
        "text/html": "symtf.renderers.html:trace_fragment",
        "text/markdown": "symtf.renderers.markdown:trace_markdown",
        "text/latex": "symtf.renderers.latex:trace_latex",
    },
}


def _lazy(target: str) -> Callable[[Any], str]:
    """A function that imports ``module:function`` when first called, then calls it."""
    module, _, name = target.partition(":")

    def draw(obj: Any) -> str:
        out: str = getattr(importlib.import_module(module), name)(obj)
        return out

    draw.__name__ = draw.__qualname__ = name
    return draw


def render(obj: Any, mime: str) -> str:
    """``obj`` drawn as ``mime`` (``text/html``, ``text/markdown``, ``text/latex``).

    What a notebook shows, without a notebook.

    Raises:
        TypeError: For an object or a MIME type with no display here.
    """
    cls = type(obj)
    kinds = DISPLAYS.get((cls.__module__, cls.__name__))
    if kinds is None or mime not in kinds:
        raise TypeError(f"no {mime} display for a {cls.__name__}")
    return _lazy(kinds[mime])(obj)


def register(formatter: Any = None) -> bool:
    """Tell IPython's display formatter how to draw reports and traces.

    Args:
        formatter: An IPython ``DisplayFormatter``; by default the running shell's.

    Returns:
        Whether a formatter was found and registered with (``False`` outside IPython).
    """
    if formatter is None:
        try:
            from IPython.core.getipython import get_ipython
        except ImportError:
            return False
        shell = get_ipython()  # type: ignore[no-untyped-call]
        if shell is None:
            return False
        formatter = shell.display_formatter
    formatters = formatter.formatters
    for (module, name), kinds in DISPLAYS.items():
        for mime, target in kinds.items():
            if mime in formatters:
                formatters[mime].for_type_by_name(module, name, _lazy(target))
    return True
