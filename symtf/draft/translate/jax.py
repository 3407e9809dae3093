"""JAX: ``jax.nn`` functions (``jax.numpy`` reads numpy's table).

``jax.nn.softmax(x, axis=-1)`` and the activations mean what the common table says;
an entry here would say where JAX's defaults differ.
"""

from __future__ import annotations

from symtf.draft.translate.table import Translation

__all__ = ["FUNCTIONS"]

#: ``jax.nn.*`` functions beyond the common table (none differ yet).
FUNCTIONS: dict[str, Translation] = {}
