"""Walking a DAG of exact values without recursion.

The exact backend writes a value as a DAG of named nodes (``s_2000[0,1]`` is defined
from ``s_1999[…]``, and so on down a chain of steps): a chain of 2,000 steps nests
its definitions 2,000 deep, beyond Python's recursion limit. Every walk over such a
value (balls, derivatives, rationals, the symbols it depends on) visits the parts of
a node before the node, in the order :func:`postorder` gives, with an explicit stack.

Example:
    >>> parts = {"c": ("b",), "b": ("a",), "a": ()}
    >>> postorder("c", lambda n: parts[n])
    ['a', 'b', 'c']
"""

from __future__ import annotations

from collections.abc import Callable, Container, Hashable, Iterable
from typing import TypeVar

N = TypeVar("N", bound=Hashable)

__all__ = ["postorder"]


def postorder(
    root: N,
    parts: Callable[[N], Iterable[N]],
    done: Container[N] = (),
    limit: int | None = None,
) -> list[N] | None:
    """Every node reachable from ``root``, each after its parts, ``root`` last.

    Args:
        root: Where to start.
        parts: The nodes a node is computed from.
        done: Nodes already known (a cache): neither listed nor walked below.
        limit: Give up (``None``) past this many nodes.

    Returns:
        The nodes in an order where each comes after every one of its parts (each
        node once), or ``None`` past ``limit``.
    """
    if root in done:
        return []
    order: list[N] = []
    placed: set[N] = set()
    stack: list[tuple[N, bool]] = [(root, False)]
    while stack:
        node, ready = stack.pop()
        if node in placed:
            continue
        if ready:
            placed.add(node)
            order.append(node)
            if limit is not None and len(order) > limit:
                return None
            continue
        stack.append((node, True))
        stack.extend((p, False) for p in parts(node) if p not in placed and p not in done)
    return order
