"""Every example in symtf's docstrings (``>>>``) runs and prints what it shows.

A reader copies these; an example that has drifted from the code (latexmath's
``\\frac`` once showed brackets ``to_plain`` no longer writes) misleads them.
"""

from __future__ import annotations

import doctest
import importlib
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent


def _modules_with_examples() -> list[str]:
    out = []
    for path in sorted((ROOT / "symtf").rglob("*.py")):
        if ">>> " in path.read_text(encoding="utf-8"):
            name = ".".join(path.relative_to(ROOT).with_suffix("").parts)
            out.append(name.removesuffix(".__init__"))
    return out


MODULES = _modules_with_examples()


def test_examples_are_found() -> None:
    assert "symtf.language.latexmath" in MODULES and len(MODULES) >= 10


@pytest.mark.parametrize("name", MODULES)
def test_docstring_examples_hold(name: str) -> None:
    module = importlib.import_module(name)
    flags = doctest.ELLIPSIS | doctest.NORMALIZE_WHITESPACE
    result = doctest.testmod(module, optionflags=flags, verbose=False, report=True)
    assert result.attempted > 0
    assert result.failed == 0, f"{name}: {result.failed} of {result.attempted} examples differ"
