"""The step graph: named nodes ``name = op(inputs…)``, and their evaluation.

Templates (the decoder, attention and encoder–decoder settings) and the user's
``[steps]`` both write :class:`Node` values into one :class:`Graph`; nothing is
computed while it is built. :func:`evaluate` then runs the nodes in order in a
backend ``xp`` (exact SymPy, certified balls, float64, a simulated float
format), recording each value in a :class:`~symtf.trace.Trace`.

Conventions are rewrites of this graph (:meth:`Graph.with_params`,
:meth:`Graph.replace`): dropping a ÷√d_k sets one node's parameter, the
unbiased variance another's. Replay (the article's printed numbers put in for a
node) is the trace builder's ``override``: every later node reads the printed
values, because it reads its inputs by name.

Decoding is the one part whose shape depends on values: which token comes next
is an argmax. A decoding node is an *unroll* node: when evaluated it emits the
next step's nodes (a whole decoder pass under ``gen.i``) and evaluates them at
once, through :class:`Live`, so each of them is still a node with its op and
inputs.

Example:
    >>> from symtf.backends import ExactBackend
    >>> b = Builder()
    >>> _ = b.add("two", const, value=2)
    >>> _ = b.add("four", lambda xp, a: xp.add(a, a), ("two",), "2 + 2")
    >>> trace = evaluate(b.graph(), ExactBackend())
    >>> trace.value("four")
    Matrix([[4]])
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Iterable, Iterator, Mapping
from dataclasses import dataclass, field
from typing import Any

from sympy.core.parameters import distribute

from symtf.tensor import from_native, to_native
from symtf.trace import Trace, TraceBuilder


@dataclass(frozen=True)
class Node:
    """One named node of the graph.

    Attributes:
        name: The node's name (``l0.h0.scaled``, ``alpha``).
        op: ``op(xp, *values_of_args, **params)`` returns the value in backend
            ``xp``. For an ``unroll`` node: ``op(xp, live, **params)`` emits and
            evaluates further nodes through ``live`` (:class:`Live`).
        args: The nodes whose values the op takes, in order.
        params: Plain settings of the op (a divisor, ``unbiased``, a weight
            matrix from the file); what a convention rewrite changes.
        formula: The general formula it applies, in LaTeX.
        title: A few words for people.
        shown: The inputs a reader is shown, when not ``args``.
        unroll: Whether the node emits further nodes when evaluated (decoding).
        tensors: Whether the op takes and returns N-D
            :class:`~symtf.tensor.Tensor` values (the user's steps) rather
            than the backend's matrices; a missing or non-numeric input is ``None``.
    """

    name: str
    op: Callable[..., Any] = field(compare=False)
    args: tuple[str, ...] = ()
    params: Mapping[str, Any] = field(default_factory=dict, compare=False)
    formula: str = ""
    title: str = ""
    shown: tuple[str, ...] | None = None
    unroll: bool = False
    tensors: bool = False

    @property
    def inputs(self) -> tuple[str, ...]:
        """The names a reader is shown this node was computed from."""
        return self.args if self.shown is None else self.shown


class Graph:
    """An ordered, immutable collection of nodes with unique names.

    Args:
        nodes: The nodes in evaluation order (each reads only earlier nodes).

    Raises:
        ValueError: When two nodes share a name.
    """

    def __init__(self, nodes: Iterable[Node]) -> None:
        self.nodes: tuple[Node, ...] = tuple(nodes)
        self._at: dict[str, int] = {}
        for k, n in enumerate(self.nodes):
            if n.name in self._at:
                raise ValueError(f"node {n.name!r} defined twice")
            self._at[n.name] = k

    def __iter__(self) -> Iterator[Node]:
        return iter(self.nodes)

    def __len__(self) -> int:
        return len(self.nodes)

    def __contains__(self, name: object) -> bool:
        return name in self._at

    def __getitem__(self, name: str) -> Node:
        return self.nodes[self._at[name]]

    def __repr__(self) -> str:
        return f"<Graph of {len(self.nodes)} nodes>"

    def get(self, name: str) -> Node | None:
        """The node called ``name``, or ``None``."""
        k = self._at.get(name)
        return None if k is None else self.nodes[k]

    def names(self) -> list[str]:
        """Every node's name, in order."""
        return [n.name for n in self.nodes]

    def replace(self, name: str, **changes: Any) -> Graph:
        """A graph with node ``name``'s fields changed (``op=…``, ``formula=…``).

        Raises:
            KeyError: When there is no node of that name.
        """
        k = self._at[name]
        nodes = list(self.nodes)
        nodes[k] = dataclasses.replace(nodes[k], **changes)
        return Graph(nodes)

    def with_params(self, name: str, **params: Any) -> Graph:
        """A graph with some of node ``name``'s parameters set."""
        return self.replace(name, params={**self[name].params, **params})

    def extended(self, nodes: Iterable[Node]) -> Graph:
        """This graph with ``nodes`` appended."""
        return Graph((*self.nodes, *nodes))


class Builder:
    """Where a template writes its nodes.

    Args:
        prefix: Put in front of every name and argument (``gen.2.dec``), so a
            nested pass of a template records under its own names.
        sink: The list the nodes go to (shared with the builder that made this one).
    """

    def __init__(self, prefix: str = "", sink: list[Node] | None = None) -> None:
        self.prefix = prefix
        self.nodes: list[Node] = [] if sink is None else sink
        self._names: set[str] = {n.name for n in self.nodes}

    def _full(self, name: str) -> str:
        return f"{self.prefix}.{name}" if self.prefix else name

    def add(
        self,
        name: str,
        op: Callable[..., Any],
        args: tuple[str, ...] = (),
        formula: str = "",
        title: str = "",
        *,
        shown: tuple[str, ...] | None = None,
        **params: Any,
    ) -> str:
        """Add node ``name = op(args…)`` and return ``name`` (so templates read as assignments).

        Names are local to the builder: its prefix goes in front of ``name``, ``args``
        and ``shown`` alike, so a template passes the names it got back as arguments.

        Raises:
            ValueError: When a node of that name was already added.
        """
        full = self._full(name)
        if full in self._names:
            raise ValueError(f"node {full!r} defined twice")
        self._names.add(full)
        node = Node(
            full,
            op,
            tuple(self._full(a) for a in args),
            params,
            formula,
            title,
            None if shown is None else tuple(self._full(a) for a in shown),
        )
        self.nodes.append(node)
        return name

    def unroll(self, name: str, op: Callable[..., Any], **params: Any) -> None:
        """Add a node that emits and evaluates further nodes when it is evaluated."""
        self.nodes.append(Node(self._full(name), op, (), params, unroll=True))

    def __contains__(self, name: object) -> bool:
        return name in self._names

    def graph(self) -> Graph:
        """The nodes added so far, as a graph."""
        return Graph(self.nodes)


def const(xp: Any, *, value: Any) -> Any:
    """A 1×1 constant node in the backend's numbers (``d_head``, a token id)."""
    return xp.from_rows([[xp.const(value)]])


def given(xp: Any, *, matrix: Any) -> Any:
    """A matrix of the file's numbers (embeddings, positional rows) in the backend's numbers."""
    return xp.matrix(matrix)


def same(xp: Any, a: Any) -> Any:
    """The input unchanged (a node that renames, e.g. ``final`` for the last block's output)."""
    return a


class Live:
    """Evaluates nodes as they come, recording each into a trace builder.

    :func:`evaluate` runs a whole graph through one; an unroll node receives it
    to emit and evaluate the nodes of each decoding step. It also takes a
    decoding loop's decisions (``gen.2.token``) with :meth:`add`, as a trace
    builder does.
    """

    def __init__(self, xp: Any, t: TraceBuilder) -> None:
        self.xp = xp
        self.t = t
        self._shapes: dict[str, tuple[int, ...]] = {}  # a tensor node's true shape

    def run(self, nodes: Iterable[Node]) -> None:
        """Evaluate ``nodes`` in order."""
        for node in nodes:
            self.node(node)

    def node(self, node: Node) -> Any:
        """Evaluate one node from the values recorded so far; return what was recorded."""
        if node.unroll:
            node.op(self.xp, self, **node.params)
            return None
        if node.tensors:
            return self._tensor_node(node)
        values = [self.t.value(a) for a in node.args]
        value = node.op(self.xp, *values, **node.params)
        return self.t.add(node.name, value, node.inputs, node.formula, node.title)

    def _tensor_node(self, node: Node) -> Any:
        xp = self.xp
        values = []
        for a in node.args:
            v = self.t.value(a) if a in self.t else None
            ok = v is not None and not isinstance(v, tuple)
            values.append(from_native(xp, v, self._shapes.get(a)) if ok else None)
        result = node.op(xp, *values, **node.params)
        self.t.add(node.name, to_native(xp, result), node.inputs, node.formula, node.title)
        self._shapes[node.name] = result.shape
        return result

    def add(
        self,
        name: str,
        value: Any,
        inputs: tuple[str, ...] = (),
        formula: str = "",
        title: str = "",
    ) -> Any:
        """Record a decision taken while unrolling (a token pick), like a trace builder."""
        return self.t.add(name, value, inputs, formula, title)

    def value(self, name: str) -> Any:
        """The value recorded for ``name``."""
        return self.t.value(name)

    def __contains__(self, name: object) -> bool:
        return name in self.t


def evaluate(
    graph: Graph | Iterable[Node],
    xp: Any,
    override: Callable[[str, Any], Any] | None = None,
) -> Trace:
    """Evaluate every node of ``graph`` in backend ``xp``.

    Args:
        graph: The nodes, in order.
        xp: The number system.
        override: ``override(name, value)`` may return a replacement for a node's
            value (the article's printed numbers, for replay); later nodes read it.
    """
    t = TraceBuilder(xp, override)
    live = Live(xp, t)
    # SymPy must not distribute numbers over sums (2*(a+b) -> 2a+2b): it multiplies sizes.
    with distribute(False):
        live.run(graph)
    trace = t.freeze()
    trace.true_shapes = dict(live._shapes)  # a 0-D or 1-D user step is recorded as a matrix
    return trace


__all__ = ["Builder", "Graph", "Live", "Node", "const", "evaluate", "given", "same"]
