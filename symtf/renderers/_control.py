"""Control characters made visible in labels a renderer emits (private to symtf.renderers).

The escaping itself is :mod:`symtf.renderers.safe`'s, shared by every renderer.
"""

from __future__ import annotations

from symtf.renderers.safe import block, line


def visible(text: str, *, keep_newlines: bool = False) -> str:
    """``text`` with every control, reordering or separator character spelled out.

    Args:
        text: Any text from a derivation file or built from one.
        keep_newlines: Keep ``\\n`` (multi-line bodies such as a JUnit failure text).
    """
    return block(text) if keep_newlines else line(text)
