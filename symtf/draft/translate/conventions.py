"""Names a snippet reads by convention without importing them.

An article's code block often shows a few lines out of a longer program: it calls
``torch.softmax(…)`` although no block imports ``torch``. A reader takes such a name for
the library every tutorial means by it; so does the translation, as long as nothing in
the code defines the name otherwise (an import under another name, an assignment, a
function or a parameter).
"""

from __future__ import annotations

import ast
from collections.abc import Container, Mapping

__all__ = ["CONVENTIONAL", "conventional_aliases"]

#: Module names a snippet may read without importing them, and the module each means.
CONVENTIONAL: Mapping[str, str] = {"torch": "torch"}


def conventional_aliases(
    tree: ast.Module, aliases: Mapping[str, str], bound: Container[str]
) -> dict[str, str]:
    """The conventional modules ``tree`` reads as ``name.attr`` without importing them.

    Args:
        tree: One code block.
        aliases: The imports seen so far (local name → module).
        bound: Names the code has given a value so far.

    Returns:
        Local name → module, for each such name nothing in ``tree`` or before it defines.
    """
    read: set[str] = set()
    defined: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name):
            if isinstance(node.value.ctx, ast.Load):
                read.add(node.value.id)
        elif isinstance(node, ast.Name) and not isinstance(node.ctx, ast.Load):
            defined.add(node.id)
        elif isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            defined.add(node.name)
        elif isinstance(node, ast.arg):
            defined.add(node.arg)
        elif isinstance(node, ast.alias):
            defined.add(node.asname or node.name.split(".")[0])
    return {
        name: module
        for name, module in CONVENTIONAL.items()
        if name in read
        and name not in defined
        and name not in bound
        and name not in aliases
        and module not in aliases.values()
    }
