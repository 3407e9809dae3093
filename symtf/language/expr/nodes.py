"""The syntax tree of displayed arithmetic: the shared nodes of
:mod:`symtf.language.syntax` (``Literal``, ``Unary``, ``Chain``, ``Power``, ``Transpose``,
``Call``, ``Brackets``) and its own three (a superscript, a constant, a reference), with
the functions and constants the language knows.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, TypeAlias

import sympy

from symtf.language.syntax import (
    Brackets,
    Call,
    Chain,
    Link,
    Literal,
    Power,
    Transpose,
    Tree,
    Unary,
)

#: Function names and how many arguments each takes (``None``: one or more).
FUNCTIONS: dict[str, tuple[int, int | None]] = {
    "sqrt": (1, 1),
    "exp": (1, 1),
    "ln": (1, 1),
    "log": (1, 2),
    "abs": (1, 1),
    "relu": (1, 1),
    "sin": (1, 1),
    "cos": (1, 1),
    "tanh": (1, 1),
    "sigmoid": (1, 1),
    "softmax": (1, 1),
    "max": (1, None),
    "min": (1, None),
    "sum": (1, None),
}

CONSTANTS: dict[str, sympy.Expr] = {
    "e": sympy.E,
    "pi": sympy.pi,
    "π": sympy.pi,
    "inf": sympy.oo,
    "∞": sympy.oo,
}

# ---------------------------------------------------------------------------
# Syntax tree: the shared nodes of :mod:`symtf.language.syntax` (``Literal``, ``Unary``,
# ``Chain``, ``Power``, ``Transpose``, ``Call``, ``Brackets``) and these three.

#: One ``op operand`` link of a :class:`Chain` (the step language calls it ``Link``).
Operand = Link


@dataclass(frozen=True, slots=True)
class Superscript:
    """A superscript integer exponent such as the ``²`` of ``3²``.

    Attributes:
        pos: Offset of its first character.
        text: The superscript as written.
        value: Its integer value.
    """

    pos: int
    text: str
    value: int


@dataclass(frozen=True, slots=True)
class Constant:
    """A named constant: ``e``, ``pi``/``π`` or ``inf``/``∞``.

    Attributes:
        pos: Offset of its first character.
        name: The name as written.
    """

    pos: int
    name: str


@dataclass(frozen=True, slots=True)
class Reference:
    """A reference to a trace entry or another claim, e.g. ``l0.h0.scaled[0, 2]``.

    Attributes:
        pos: Offset of its first character.
        name: The dotted name (``"l0.h0.scaled"``).
        index: The integer index written after it (``(0, 2)``), or ``()``.
    """

    pos: int
    name: str
    index: tuple[int, ...]

    def __str__(self) -> str:
        if not self.index:
            return self.name
        return f"{self.name}[{', '.join(str(i) for i in self.index)}]"


Node: TypeAlias = (
    Literal
    | Superscript
    | Constant
    | Reference
    | Unary
    | Chain
    | Power
    | Transpose
    | Call
    | Brackets
)

#: ``resolve(name, index)`` returns the exact value a reference stands for.
Resolver: TypeAlias = Callable[[str, tuple[int, ...]], Any]


def position_of(node: Tree) -> int:
    return node.pos
