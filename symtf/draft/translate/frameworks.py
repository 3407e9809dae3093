"""The table of framework calls, read per family: each framework's own entries first.

:func:`lookup` finds ``module.name`` (``torch.softmax``, ``np.var``) and
:func:`method` a tensor method (``x.var()``), in the module of the framework the
call belongs to (:mod:`~symtf.draft.translate.numpy`, :mod:`~symtf.draft.translate.torch`,
:mod:`~symtf.draft.translate.tensorflow`, :mod:`~symtf.draft.translate.jax`), then in the
common table (:mod:`~symtf.draft.translate.table`).
"""

from __future__ import annotations

import symtf.draft.translate.jax as jax
import symtf.draft.translate.numpy as numpy
import symtf.draft.translate.tensorflow as tensorflow
import symtf.draft.translate.torch as torch
from symtf.draft.translate.table import COMMON, FAMILIES, MATH, METHODS, Translation

__all__ = ["lookup", "method"]

_BY_FAMILY: dict[str, dict[str, Translation]] = {
    "torch": torch.FUNCTIONS,
    "numpy": numpy.FUNCTIONS,
    "scipy": numpy.SCIPY,
    "tf": tensorflow.FUNCTIONS,
    "jax": jax.FUNCTIONS,
    "math": MATH,
}


def lookup(module: str | None, name: str) -> Translation | None:
    """The translation of ``module.name`` (``module`` canonical: ``torch``, ``numpy`` …)."""
    family = FAMILIES.get(module or "")
    if family is None:
        return None
    special = _BY_FAMILY.get(family, {})
    if name in special:
        return special[name]
    if family == "math":
        return None
    return COMMON.get(name)


def method(name: str) -> Translation | None:
    """The translation of a tensor method ``x.name(…)`` (PyTorch's spelling first)."""
    return torch.METHODS.get(name) or METHODS.get(name)
