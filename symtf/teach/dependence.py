"""Which input entries each output entry of a step moves with: the node's op evaluated
once on symbols standing for its inputs' entries (an element-wise op that cannot run on
symbols is an unknown function of the entries at each position), and the entries each
resulting expression depends on at the inputs' values.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import Any

import sympy

from symtf.backends import ExactBackend
from symtf.errors import SymtfError
from symtf.ops import REGISTRY, Op
from symtf.ops.array import generic
from symtf.tensor import Tensor

#: An entry of a 2-D step: ``(step, i, j)``.
Entry = tuple[str, int, int]

#: Exceptions an op may raise on symbolic inputs (a sign it cannot decide, a shape it
#: cannot read): the node's relations are then taken to be dense.
SYMBOLIC_FAILURES = (
    ArithmeticError,
    AttributeError,
    IndexError,
    LookupError,
    TypeError,
    ValueError,
)


class SymbolBackend(ExactBackend):
    """Exact arithmetic on the symbols that stand for a step's input entries.

    An element-wise op that cannot run on symbols (``round`` needs the sign of ``x − n``)
    is an unknown function of the entries at each position instead: ``round(W·s)[i, j]``
    then still moves with ``W[i, j]`` and ``s[i]`` and nothing else, so its output is
    linked to the entries it came from (``round`` half to even and half up of the same
    entry print the same number), where a failed op would leave its step with no
    relations at all.
    """

    def __init__(self) -> None:
        super().__init__(max_ops=10**9)
        self.kernels = _OPAQUE_KERNELS


def _opaque_kernel(op: Op[Any]) -> Callable[..., Any]:
    def kernel(xp: Any, *tensors: Any, **params: Any) -> Any:
        try:
            return op.compute(xp, *tensors, **params)
        except (*SYMBOLIC_FAILURES, SymtfError):
            args = [t for t in tensors if isinstance(t, Tensor)]
            if not any(getattr(v, "free_symbols", None) for t in args for v in t.data):
                raise  # numbers: the op's own error stands
            settings = ",".join(f"{k}={v}" for k, v in sorted(params.items()))
            fn = sympy.Function(f"{op.name}[{settings}]" if settings else op.name, real=True)
            return generic(xp, fn, *args)

    return kernel


#: Every element-wise op of the registry, run by :func:`_opaque_kernel`.
_OPAQUE_KERNELS: Mapping[str, Callable[..., Any]] = MappingProxyType(
    {name: _opaque_kernel(op) for name, op in REGISTRY.items() if op.elementwise}
)


def symbol(step: str, i: int, j: int) -> sympy.Symbol:
    return sympy.Symbol(f"{step}\x00{i}\x00{j}", real=True)


def _entry_of(s: sympy.Symbol) -> Entry:
    step, i, j = s.name.split("\x00")
    return step, int(i), int(j)


@dataclass
class Level:
    """One node's output entries as expressions of its inputs' entries.

    Attributes:
        cells: The expressions (``None``: the op did not evaluate on symbols).
        zeros: The input symbols whose value is exactly 0 here.
    """

    cells: list[list[sympy.Expr]] | None
    zeros: frozenset[sympy.Symbol] = frozenset()
    point: dict[sympy.Symbol, sympy.Expr] = field(default_factory=dict)
    _deps: dict[tuple[int, int], frozenset[Entry] | None] = field(
        default_factory=dict, repr=False, compare=False
    )

    def deps(self, i: int, j: int) -> frozenset[Entry] | None:
        """The input entries ``[i, j]`` moves with (cached: the copy and chain searches ask
        for the same entries many times, and each asks SymPy about its factors)."""
        if (i, j) not in self._deps:
            self._deps[i, j] = self._deps_of(i, j)
        return self._deps[i, j]

    def _deps_of(self, i: int, j: int) -> frozenset[Entry] | None:
        """The input entries ``[i, j]`` moves with, at these inputs.

        An input that only multiplies an input equal to 0 does not count: with
        ``v = 0``, ``a·v + b·w`` tells nothing about ``a`` (but still about ``v``).
        Nor does one that multiplies a factor equal to 0 at these inputs: a centred
        entry ``(x − μ)/σ`` that is 0 ties ``x`` to ``μ`` whatever ``σ`` is.
        """
        if self.cells is None:
            return None
        cell = self.cells[i][j]
        zero_factor = self._zero_factor(cell)
        if zero_factor is not None:
            return frozenset(_entry_of(s) for s in zero_factor.free_symbols)
        free = cell.free_symbols
        zeros = self.zeros & free
        if not zeros:
            return frozenset(_entry_of(s) for s in free)
        out = set(cell.xreplace({z: sympy.S.Zero for z in zeros}).free_symbols)
        for z in zeros:
            if z in cell.xreplace({y: sympy.S.Zero for y in zeros if y != z}).free_symbols:
                out.add(z)
        return frozenset(_entry_of(s) for s in out)

    def _zero_factor(self, cell: sympy.Expr) -> sympy.Expr | None:
        """The one factor of a product that is exactly 0 at these inputs, if there is one."""
        factors = sympy.Mul.make_args(cell)
        if len(factors) < 2 or not self.point:
            return None
        found = [
            f
            for f in factors
            if f.free_symbols
            and not (f.is_Pow and f.exp.is_negative)  # a divisor is never 0 here
            and f.xreplace(self.point).is_zero is True
        ]
        return found[0] if len(found) == 1 else None
