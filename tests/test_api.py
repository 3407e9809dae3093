"""The documented Python API keeps working however often it is called."""

from __future__ import annotations

import importlib
from pathlib import Path

import symtf

ROPE = Path(__file__).resolve().parent.parent / "derivations" / "rope_toy.toml"


def test_render_is_a_function_after_subpackage_imports_and_rich_display() -> None:
    report = symtf.check(symtf.load(ROPE))
    first = symtf.render(report)
    # A rich display imports the renderer subpackages; that must not rebind symtf.render.
    report._repr_latex_()
    importlib.import_module("symtf.renderers.json")
    importlib.import_module("symtf.renderers.text")

    assert callable(symtf.render)
    assert symtf.render(report) == first
    assert symtf.render(report) == first
    assert symtf.render(report, "json").startswith("{")
