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

Every node's op is an entry of the registry (:mod:`symtf.ops`), and the trace
records it with the node's parameters, so that renderers, teaching and
``derive`` read what ran from the op, never from a formula string.

Example:
    >>> from symtf import ops
    >>> from symtf.backends import ExactBackend
    >>> b = Builder()
    >>> _ = b.add("two", ops.const, value=2)
    >>> _ = b.add("four", ops.add, ("two", "two"), "2 + 2")
    >>> trace = evaluate(b.graph(), ExactBackend())
    >>> trace.value("four"), trace["four"].op
    (Matrix([[4]]), 'add')
"""

from __future__ import annotations

import dataclasses
from collections import Counter
from collections.abc import Callable, Collection, Iterable, Iterator, Mapping
from dataclasses import dataclass, field
from typing import Any

from sympy.core.parameters import distribute

from symtf.tensor import Tensor, from_native, to_native
from symtf.trace import Trace, TraceBuilder


@dataclass(frozen=True)
class Node:
    """One named node of the graph.

    Attributes:
        name: The node's name (``l0.h0.scaled``, ``alpha``).
        op: The registry op (:class:`symtf.ops.Op`) computing the value:
            ``op(xp, *tensors_of_args, **params)``. For an ``unroll`` node, a function
            ``op(xp, live, **params)`` that emits and evaluates further nodes through
            ``live`` (:class:`Live`).
        args: The nodes whose values the op takes, in order.
        params: The op's plain settings (a divisor, ``unbiased``, a weight matrix from
            the file); what a convention rewrite changes.
        tex: The formula this node shows, when not the op's own (from ``params``
            and ``labels``).
        title: A few words for people.
        shown: The inputs a reader is shown, when not ``args``.
        unroll: Whether the node emits further nodes when evaluated (decoding).
        labels: The symbols the node's formula is written with (``w`` → ``W_Q``).
    """

    name: str
    op: Any = field(compare=False)
    args: tuple[str, ...] = ()
    params: Mapping[str, Any] = field(default_factory=dict, compare=False)
    tex: str | None = None
    title: str = ""
    shown: tuple[str, ...] | None = None
    unroll: bool = False
    labels: Mapping[str, str] = field(default_factory=dict, compare=False)

    @property
    def inputs(self) -> tuple[str, ...]:
        """The names a reader is shown this node was computed from."""
        return self.args if self.shown is None else self.shown

    @property
    def formula(self) -> str:
        """The LaTeX formula the node shows: its own, or its op's from its parameters."""
        if self.tex is not None:
            return self.tex
        formula = getattr(self.op, "formula", None)
        return formula(self.params, self.labels) if formula is not None else ""


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
        """A graph with node ``name``'s fields changed (``op=…``, ``params=…``).

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

    def shapes(self) -> dict[str, tuple[int, ...] | None]:
        """Every node's shape from its op's shape rule, before anything is evaluated.

        A node whose shape is known only from values (a decoding step, token ids, a slice
        bound computed from a tensor) is ``None``, and so is every node that reads it.

        Raises:
            ShapeError: A template node whose shapes do not fit (the node named).
            SpecError: A user step whose shapes do not fit (the file, step and column named).
        """
        from symtf.errors import ShapeError

        out: dict[str, tuple[int, ...] | None] = {}
        for node in self.nodes:
            op = node.op
            if node.unroll or not getattr(op, "tensor_out", False):
                out[node.name] = None
                continue
            args: list[Any] = [out.get(a) for a in node.args]
            if op.variadic is not None:
                args = [args] if all(a is not None for a in args) else [None]
            if any(a is None for a in args) and op.name != "step":
                out[node.name] = None
                continue
            try:
                shape = op.shape(*args, **node.params)
            except ShapeError as e:
                raise ShapeError(f"{node.name}: {e}") from None
            out[node.name] = None if shape is None else tuple(shape)
        return out


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
        op: Any,
        args: tuple[str, ...] = (),
        formula: str | None = None,
        title: str = "",
        *,
        shown: tuple[str, ...] | None = None,
        labels: Mapping[str, str] | None = None,
        **params: Any,
    ) -> str:
        """Add node ``name = op(args…, **params)`` and return ``name`` (templates read as assignments).

        Names are local to the builder: its prefix goes in front of ``name``, ``args``
        and ``shown`` alike, so a template passes the names it got back as arguments.

        Args:
            op: The registry op.
            formula: The formula the node shows, when not the op's own from ``labels``.
            labels: The symbols of the op's formula for this node (``w`` → ``W_Q``).

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
            labels=dict(labels or {}),
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


#: How many graphs were evaluated (``graph:BACKEND``, ``replay:BACKEND`` for an evaluation
#: that reused an earlier one) and how many nodes were computed, reused or skipped.
#: Benchmarks read it; :func:`reset_counts` starts afresh.
COUNTS: Counter[str] = Counter()


def reset_counts() -> Counter[str]:
    """The counts so far, and zero them."""
    out = Counter(COUNTS)
    COUNTS.clear()
    return out


@dataclass(frozen=True)
class Reuse:
    """What an evaluation may take, unchanged, from an earlier one in the same backend.

    A node is taken from ``base`` when ``base`` computed a node of that name with the
    same op, arguments and parameters, every argument was itself taken, and it is not
    ``fresh``; everything downstream of a change is computed again.

    Attributes:
        base: The earlier trace (same backend).
        fresh: Nodes computed again although their definition is the same (the ones
            an override replaces: replayed printed values).
        given: ``given(name)`` hands in a node's value without computing it, or ``None``.
        take: Whether unchanged nodes are taken from ``base`` (``False`` when ``base`` is
            another backend's trace, read only through ``given``).
        also: Earlier evaluations of other graphs (same backend) a node that ``base`` does
            not have as it is may be taken from, on the same terms and recorded the same (its
            formula, title and labels): the same op and parameters over arguments that were
            themselves taken give the same value, whichever trace each came from.
    """

    base: Trace
    fresh: frozenset[str] = frozenset()
    given: Callable[[str], Any] | None = None
    take: bool = True
    also: tuple[Trace, ...] = ()


def _same_params(a: Mapping[str, Any], b: Mapping[str, Any]) -> bool:
    if a is b:
        return True
    if a.keys() != b.keys():
        return False
    for k, x in a.items():
        y = b[k]
        if x is y:
            continue
        try:
            if type(x) is not type(y) or not bool(x == y):
                return False
        except Exception:  # an array compared entry by entry: not the same object, so compute
            return False
    return True


def _same_node(a: Any, b: Node) -> bool:
    return a is b or (
        isinstance(a, Node)
        and a.op is b.op
        and a.args == b.args
        and a.unroll == b.unroll
        and _same_params(a.params, b.params)
    )


def _same_record(a: Any, b: Node) -> bool:
    """The same node, and recorded the same (formula, title, inputs shown, labels): its
    value and its step in the trace taken from an earlier evaluation of another graph."""
    return _same_node(a, b) and a == b and dict(a.labels) == dict(b.labels)


class Live:
    """Evaluates nodes as they come, recording each into a trace builder.

    :func:`evaluate` runs a whole graph through one; an unroll node receives it
    to emit and evaluate the nodes of each decoding step. It also takes a
    decoding loop's decisions (``gen.2.token``) with :meth:`add`, as a trace
    builder does.
    """

    def __init__(
        self,
        xp: Any,
        t: TraceBuilder,
        reuse: Reuse | None = None,
        keep: Collection[str] | None = None,
    ) -> None:
        self.xp = xp
        self.t = t
        self.reuse = reuse
        self.keep = keep  # only these nodes are evaluated (what the asked-for steps read)
        self._shapes = t.shapes  # a tensor node's true shape
        #: Each node taken from an earlier evaluation -> the traces it is the same in (it
        #: and its arguments, all the way up): only those may lend what is computed from it.
        self._taken: dict[str, tuple[Trace, ...]] = {}

    def run(self, nodes: Iterable[Node]) -> None:
        """Evaluate ``nodes`` in order."""
        for node in nodes:
            self.node(node)

    def node(self, node: Node) -> Any:
        """Evaluate one node from the values recorded so far; return what was recorded."""
        if node.unroll:
            node.op(self.xp, self, **node.params)
            return None
        if self.keep is not None and node.name not in self.keep:
            COUNTS["nodes skipped"] += 1
            return None
        if self.reuse is not None:
            taken = self._take(node)
            if taken is not None:
                return taken[0]
        xp = self.xp
        COUNTS["nodes computed"] += 1
        self.t.nodes[node.name] = node
        values: list[Any] = [self.tensor(a) for a in node.args]
        if getattr(node.op, "variadic", None) is not None:
            values = [values]  # one argument takes every input (concat's heads)
        result = node.op(xp, *values, **node.params)
        if isinstance(result, Tensor):
            self._shapes[node.name] = result.shape
            recorded = to_native(xp, result)
        else:  # token ids, a decision, an outcome
            recorded = result
        return self.t.add(
            node.name,
            recorded,
            node.inputs,
            node.formula,
            node.title,
            op=node.op.name,
            params=node.params,
            labels=node.labels,
        )

    def _take(self, node: Node) -> tuple[Any] | None:
        """The node's value from the earlier evaluation (wrapped), or ``None`` to compute it."""
        reuse = self.reuse
        assert reuse is not None
        if reuse.given is not None:
            v = reuse.given(node.name)
            if v is not None:
                base_step = reuse.base[node.name]
                self.t.record(dataclasses.replace(base_step, value=v))
                if node.name in reuse.base.true_shapes:
                    self._shapes[node.name] = reuse.base.true_shapes[node.name]
                COUNTS["nodes given"] += 1
                return (v,)
        if not reuse.take or node.name in reuse.fresh:
            return None
        sources = tuple(
            b
            for k, b in enumerate((reuse.base, *reuse.also))
            if (
                node.name in b
                and (_same_node if k == 0 else _same_record)(b.nodes.get(node.name), node)
                and all(any(b is t for t in self._taken.get(a, ())) for a in node.args)
            )
        )
        if not sources:
            return None
        base = sources[0]
        step = base[node.name]
        self.t.record(step)
        self.t.nodes[node.name] = base.nodes[node.name]
        if node.name in base.true_shapes:
            self._shapes[node.name] = base.true_shapes[node.name]
        self._taken[node.name] = sources
        COUNTS["nodes reused"] += 1
        return (step.value,)

    def tensor(self, name: str) -> Any:
        """The value recorded for ``name`` as a tensor of its true shape (``None`` if not numbers)."""
        v = self.t.value(name) if name in self.t else None
        if v is None or isinstance(v, tuple) or not _numbers(self.xp, v):
            return None
        return from_native(self.xp, v, self._shapes.get(name))

    def add(
        self,
        name: str,
        value: Any,
        inputs: tuple[str, ...] = (),
        formula: str = "",
        title: str = "",
        *,
        op: str = "decide",
        params: Mapping[str, Any] | None = None,
    ) -> Any:
        """Record a value the decoding loop computed or a decision it took (a token pick).

        Args:
            op: The registry op that computed it, or ``decide`` for a decision.
        """
        value = to_native(self.xp, value) if isinstance(value, Tensor) else value
        return self.t.add(name, value, inputs, formula, title, op=op, params=params or {})

    def value(self, name: str) -> Any:
        """The value recorded for ``name``."""
        return self.t.value(name)

    def __contains__(self, name: object) -> bool:
        return name in self.t


def evaluate(
    graph: Graph | Iterable[Node],
    xp: Any,
    override: Callable[[str, Any], Any] | None = None,
    *,
    reuse: Reuse | None = None,
    needed: Collection[str] | None = None,
) -> Trace:
    """Evaluate every node of ``graph`` in backend ``xp``.

    Args:
        graph: The nodes, in order.
        xp: The number system.
        override: ``override(name, value)`` may return a replacement for a node's
            value (the article's printed numbers, for replay); later nodes read it.
        reuse: An earlier evaluation in the same backend whose unchanged nodes are
            taken as they are (only what is downstream of a change is computed).
        needed: Evaluate only what these nodes are computed from (and them); the
            trace then holds just those nodes.
    """
    nodes = graph.nodes if isinstance(graph, Graph) else tuple(graph)
    keep = _upstream(nodes, needed) if needed is not None else None
    COUNTS[("replay:" if reuse is not None else "graph:") + str(getattr(xp, "name", "?"))] += 1
    t = TraceBuilder(xp, override)
    # SymPy must not distribute numbers over sums (2*(a+b) -> 2a+2b): it multiplies sizes.
    with distribute(False):
        Live(xp, t, reuse, keep).run(nodes)
    return t.freeze()


def _upstream(nodes: Iterable[Node], needed: Collection[str]) -> set[str] | None:
    """The names of ``needed`` and of every node they are computed from (``None`` when a
    needed name is emitted while evaluating, such as a decoding step's)."""
    by_name = {n.name: n for n in nodes}
    if any(n not in by_name for n in needed) or any(n.unroll for n in by_name.values()):
        return None
    out: set[str] = set()
    todo = list(needed)
    while todo:
        n = todo.pop()
        if n in out:
            continue
        out.add(n)
        todo.extend(by_name[n].args)
    return out


def _numbers(xp: Any, v: Any) -> bool:
    """Whether a recorded value holds numbers (a matrix or a tensor, not an outcome)."""
    if isinstance(v, Tensor):
        return True
    try:
        xp.shape(v)
    except (AttributeError, TypeError):
        return False
    return True


__all__ = ["COUNTS", "Builder", "Graph", "Live", "Node", "Reuse", "evaluate", "reset_counts"]
