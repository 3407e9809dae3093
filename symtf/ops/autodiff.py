"""Derivatives as steps: ``grad(y, x)`` and ``jacobian(y, x)``.

Both take *names* (a scalar step ``y`` and a given tensor or earlier step ``x``), not
values: a step written ``dW = "grad(loss, W)"`` is resolved when the graph is built
into a reverse-mode sweep over the recorded nodes between ``W`` and ``loss``, each
node's cotangent computed from its op's vector–Jacobian product
(:attr:`symtf.ops.core.Op.vjp`). The sweep itself lives with the graph
(:mod:`symtf.graph.autodiff`); these definitions give the signature the step parser
checks, the shape rule and the formula; they are graph ops
(:data:`~symtf.ops.core.GRAPH_OPS`), not value ops of the registry. A ``grad`` inside a
larger expression becomes a node of its own that the step reads
(:func:`symtf.graph.autodiff.hoisted`).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from symtf.errors import ShapeError
from symtf.ops.core import Param, check, define, fmt, register_graph_op
from symtf.tensor import Tensor

Y = Param("y", doc="the name of a step")
X = Param("x", doc="the name of a given tensor or step")


def _size(s: Any) -> int:
    n = 1
    for k in s:
        n *= k
    return n


def grad_shape(y: Any, x: Any, *_: Any, **__: Any) -> tuple[int, ...]:
    """``x``'s shape, for a ``y`` of one entry."""
    check(_size(y) == 1, f"grad needs a scalar y (one entry), found shape {fmt(y)}; use jacobian")
    return tuple(x)


def jacobian_shape(y: Any, x: Any, *_: Any, **__: Any) -> tuple[int, ...]:
    """``y``'s shape followed by ``x``'s (one entry of ``y`` per leading index)."""
    return (*tuple(y), *tuple(x))


def _whole_step(name: str) -> Any:
    def compute(xp: Any, y: Tensor, x: Tensor) -> Tensor:
        raise ShapeError(f"{name}(y, x) must be a whole step (write d = {name}(y, x), then use d)")

    return compute


def _display(kind: str) -> Any:
    def display(params: Mapping[str, Any], labels: Mapping[str, str]) -> str:
        y, x = labels.get("y", "y"), labels.get("x", "x")
        if kind == "grad":
            return rf"\frac{{\partial {y}}}{{\partial {x}}}"
        return rf"\frac{{\partial {y}}}{{\partial {x}}}\ (\text{{Jacobian}})"

    return display


grad = register_graph_op(
    define(
        "grad",
        "autodiff",
        (Y, X),
        shape=grad_shape,
        tex=r"\frac{\partial y}{\partial x}",
        text="∂y/∂x",
        shapes="(), x → x",
        display=_display("grad"),
        doc="The gradient of a scalar step ``y`` with respect to ``x`` (reverse mode, exact).",
        registered=False,
    )(_whole_step("grad"))
)

jacobian = register_graph_op(
    define(
        "jacobian",
        "autodiff",
        (Y, X),
        shape=jacobian_shape,
        tex=r"\frac{\partial y}{\partial x}",
        text="∂y/∂x",
        shapes="y, x → y + x",
        display=_display("jacobian"),
        doc="Every partial derivative of step ``y`` by ``x``: shape ``y.shape + x.shape``.",
        registered=False,
    )(_whole_step("jacobian"))
)

__all__ = ["grad", "grad_shape", "jacobian", "jacobian_shape"]
