"""The renderers' name for :mod:`symtf.visible`, the one rule for control characters.

New code imports :mod:`symtf.visible` (a leaf module every stage may import); this
name stays so that code written against it keeps working.
"""

from __future__ import annotations

from symtf.visible import block, is_clean, line

__all__ = ["block", "is_clean", "line"]
