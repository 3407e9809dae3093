"""Reverse mode through the step graph: the nodes of ``grad(y, x)`` and ``jacobian(y, x)``.

A step written ``dW = "grad(loss, W)"`` becomes a node of op ``grad`` (the trace records
it with its parameters ``y`` and ``x`` like any other op). When the graph is built,
:func:`resolve` finds the recorded nodes between ``x`` and ``y`` (upstream of ``y``
and downstream of ``x``) and makes their values the node's inputs; evaluating it is a
reverse sweep over them, in whichever backend evaluates the graph:

- a user step is walked again on its inputs' values with every registry op it applies
  taped, and the tape is swept backwards with each op's VJP;
- a template node's cotangents come from its op's VJP with the node's parameters.

Cotangents are summed where a value is read twice. Nothing is approximated: on exact
numbers the result is exact, on balls or midpoint–radius intervals it is certified.
Only ops that depend on ``x`` need a VJP; a constant branch (a mask, ``one_hot`` of
the targets) is not differentiated.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Container, Iterable, Mapping, Sequence
from typing import Any, cast

from symtf import ops
from symtf.errors import ExpressionError, SpecError, Undecided
from symtf.graph.core import Graph, Node
from symtf.graph.evaluate import STEP, _located, _Values
from symtf.language import lang
from symtf.ops.array import full
from symtf.ops.core import Op
from symtf.spec.steps import StepNode
from symtf.tensor import Tensor

#: The step-language names resolved here.
KINDS = ("grad", "jacobian")


def is_derivative(step: StepNode) -> bool:
    """Whether the step's whole expression is ``grad(…)`` or ``jacobian(…)``."""
    return isinstance(step.tree, lang.Call) and step.tree.name in KINDS


def derivative_node(step: StepNode, path: str, tex: str) -> Node:
    """The graph node of a step ``grad(y, x)`` / ``jacobian(y, x)`` (inputs set by :func:`resolve`).

    Raises:
        SpecError: An argument that is not a plain name (file, step and column named).
    """
    call = step.tree
    assert isinstance(call, lang.Call)
    op = ops.get(call.name)
    try:
        bound = op.bind(call.args, call.kwargs)
    except ops.ParamError as e:  # pragma: no cover - checked when the file was read
        raise _error(step, getattr(e.where, "pos", call.pos), str(e)) from None
    names: dict[str, str] = {}
    for p in ("y", "x"):
        arg = bound[p]
        if not isinstance(arg, lang.Name) or arg.name in lang.CONSTANTS:
            raise _error(
                step,
                getattr(arg, "pos", call.pos),
                f"{call.name}: expected the name of a step or given tensor for {p}, "
                f"found {lang.unparse(arg)!r}",
            )
        names[p] = arg.name
    return Node(
        step.name,
        DERIVATIVE[call.name],
        (names["y"], names["x"]),
        {"y": names["y"], "x": names["x"], "step": step, "path": path, "nodes": ()},
        tex,
        step.text,
        shown=(names["y"], names["x"]),
        labels={"y": _tex(names["y"]), "x": _tex(names["x"])},
    )


def hoisted(node: Node, known: Container[str] = ()) -> list[Node]:
    """A step with ``grad``/``jacobian`` inside a larger expression, as nodes: one per call,
    then the step reading them by name.

    ``W - 0.1 * grad(loss, W)`` becomes the node ``grad(loss, W)`` (op ``grad``, recorded
    like a whole-step derivative) and the step ``W - 0.1 * ⟨grad(loss, W)⟩``; its text and
    formula stay as written. The same call twice, here or in an earlier step (a name in
    ``known``), is one node.

    Raises:
        SpecError: An argument that is not a plain name, at its column.
    """
    step: StepNode = node.params["step"]
    if is_derivative(step):
        return [node]
    calls = [n for n in lang.walk(step.tree) if isinstance(n, lang.Call) and n.name in KINDS]
    if not calls:
        return [node]
    made: dict[str, Node] = {}
    named: dict[int, str] = {}  # by the call's column: unique within the step's text
    for call in calls:
        sub = dataclasses.replace(step, tree=call)
        d = derivative_node(sub, node.params["path"], lang.latex(call))
        name = f"{call.name}({d.params['y']}, {d.params['x']})"
        named[call.pos] = name
        if name not in made and name not in known:
            sub = dataclasses.replace(sub, name=name, inputs=(d.params["y"], d.params["x"]))
            # titled by its call; its step keeps the text the columns point into
            made[name] = dataclasses.replace(
                d, name=name, title=lang.unparse(call), params={**d.params, "step": sub}
            )
    tree = lang.mapped(
        step.tree,
        lambda n: (
            lang.Name(n.pos, named[n.pos])
            if isinstance(n, lang.Call) and n.name in KINDS and n.pos in named
            else None
        ),
    )
    # what the rewritten expression reads: a name used only inside a call is the call's
    readable = {*step.inputs, *named.values()}
    inputs = tuple(dict.fromkeys(n.name for n in lang.names(tree) if n.name in readable))
    outer = dataclasses.replace(step, tree=cast(lang.Node, tree), inputs=inputs)
    return [
        *made.values(),
        dataclasses.replace(node, args=inputs, params={**node.params, "step": outer}),
    ]


def resolve(graph: Graph) -> Graph:
    """``graph`` with every derivative node reading the nodes its sweep passes through.

    Raises:
        SpecError: ``x`` that ``y`` does not depend on, or a name that is not a node
            (file, step and what was found named).
    """
    nodes: list[Node] = []
    known: set[str] = set()
    for n in graph.nodes:
        more = hoisted(n, known) if n.op is STEP else [n]
        nodes.extend(more)
        known.update(m.name for m in more)
    for k, node in enumerate(nodes):
        if node.op is STEP and is_derivative(node.params["step"]):
            node = derivative_node(node.params["step"], node.params["path"], node.tex or "")
        if not _derivative(node):
            continue
        y, x = node.params["y"], node.params["x"]
        step: StepNode = node.params["step"]
        earlier = {n.name: n for n in nodes[:k]}
        for p, name in (("y", y), ("x", x)):
            if name not in earlier:
                raise _error(
                    step,
                    _pos(step, p),
                    f"{node.op.name}: {p} = {name} is not a given tensor, model step or "
                    "earlier step",
                )
        up = _upstream(earlier, y)
        if x not in up:
            raise _error(
                step,
                _pos(step, "x"),
                f"{node.op.name}: {y} does not depend on {x} ({x} is not upstream of {y})",
            )
        down = _downstream(nodes[:k], x)
        path = tuple(n for n in nodes[:k] if n.name in up and n.name in down and n.name != x)
        reads = [y, x]
        for n in path:
            reads.append(n.name)
            reads.extend(n.args)
        nodes[k] = dataclasses.replace(
            node, args=tuple(dict.fromkeys(reads)), params={**node.params, "nodes": path}
        )
    return Graph(nodes)


def _derivative(node: Node) -> bool:
    return any(node.op is op for op in _OPS)


def _upstream(by_name: Mapping[str, Node], name: str) -> set[str]:
    out: set[str] = set()
    todo = [name]
    while todo:
        n = todo.pop()
        if n in out or n not in by_name:
            continue
        out.add(n)
        todo.extend(by_name[n].args)
    return out


def _downstream(nodes: Iterable[Node], name: str) -> set[str]:
    out = {name}
    for n in nodes:
        if any(a in out for a in n.args):
            out.add(n.name)
    return out


def _pos(step: StepNode, p: str) -> int:
    call = step.tree
    assert isinstance(call, lang.Call)
    arg = ops.get(call.name).bind(call.args, call.kwargs)[p]
    return getattr(arg, "pos", call.pos)


def _error(step: StepNode, pos: int, message: str) -> SpecError:
    return SpecError(str(lang.error(step.text, step.where, pos, message)))


def _tex(name: str) -> str:
    return lang.latex(lang.Name(0, name))


# ----------------------------------------------------------------------------- the sweep


class _Tape:
    """One node's backward pass: ``back(g)`` gives the cotangent of each input name."""

    def __init__(self, xp: Any, node: Node, env: Mapping[str, Tensor | None]) -> None:
        self.xp = xp
        self.node = node
        self.inputs = [env.get(a) for a in node.args]
        self.output = env[node.name]
        self.entries: list[tuple[Op[Any], list[Any], dict[str, Any], Any]] = []
        self.leaves: dict[int, str] = {}
        if node.op.name == "step":
            self._record(env)

    def _record(self, env: Mapping[str, Tensor | None]) -> None:
        step: StepNode = self.node.params["step"]
        values = {a: v for a, v in zip(self.node.args, self.inputs, strict=True)}
        self.leaves = {id(v): a for a, v in values.items() if v is not None}
        tape = self.entries

        class Taped(_Values):
            def apply(self, op: Op[Any], args: list[Any], params: dict[str, Any]) -> Tensor:
                out = super().apply(op, args, params)
                tape.append((op, args, params, out))
                return out

        out = _located(
            step, self.node.params["path"], lambda: Taped(self.xp, values.get).walk(step.tree)
        )
        self.result = out

    def back(self, g: Tensor) -> dict[str, Tensor]:
        """The cotangents of the node's inputs by name, from the output's ``g``."""
        xp, node = self.xp, self.node
        if node.op.name != "step":
            op = node.op
            vals: list[Any] = list(self.inputs)
            if op.variadic is not None:
                vals = [vals]
            cots = _vjp(xp, op, g, vals, dict(node.params), self.output, node.name)
            if op.variadic is not None:
                cots = tuple(cots[0]) if cots[0] is not None else (None,) * len(node.args)
            out: dict[str, Tensor] = {}
            for a, c in zip(node.args, cots, strict=False):
                if c is not None:
                    out[a] = _plus(xp, out.get(a), c)
            return out
        cot: dict[int, Tensor] = {id(self.result): g}
        # what depends on the node's inputs: a literal exponent (x ^ 2) is not, and its
        # cotangent (a^b·ln a, undefined for a < 0) is never asked for
        live = set(self.leaves)
        for _op, args, _params, result in self.entries:
            if any(_ids(a) & live for a in args):
                live.add(id(result))
        for op, args, params, result in reversed(self.entries):
            gk = cot.pop(id(result), None)
            if gk is None:
                continue
            if op.name == "pow" and not _ids(args[1]) & live:
                base = _pow_base_vjp(xp, gk, args[0], args[1])
                cot[id(args[0])] = _plus(xp, cot.get(id(args[0])), base)
                continue
            cots = _vjp(xp, op, gk, args, params, result, node.name)
            for arg, c in zip(args, cots, strict=False):
                if c is None or arg is None:
                    continue
                if isinstance(arg, list):
                    for a, ci in zip(arg, c, strict=True):
                        if ci is not None:
                            cot[id(a)] = _plus(xp, cot.get(id(a)), ci)
                else:
                    cot[id(arg)] = _plus(xp, cot.get(id(arg)), c)
        return {self.leaves[i]: c for i, c in cot.items() if i in self.leaves}


def _ids(arg: Any) -> set[int]:
    """The ids of a recorded argument (a variadic op's list: each of its tensors)."""
    return {id(a) for a in arg} if isinstance(arg, list) else {id(arg)}


def _pow_base_vjp(xp: Any, g: Tensor, a: Tensor, b: Tensor) -> Tensor:
    """The cotangent of ``a`` in ``a ^ b`` for a constant ``b``: g·b·a^(b−1)."""
    from symtf.ops.array import generic, unbroadcast

    local = generic(xp, lambda x, y: y * x ** (y - 1), a, b)
    out: Tensor = unbroadcast(xp, ops.mul(xp, g, local), a.shape)
    return out


def _vjp(
    xp: Any,
    op: Op[Any],
    g: Tensor,
    args: Sequence[Any],
    params: dict[str, Any],
    out: Any,
    where: str,
) -> tuple[Any, ...]:
    if op.vjp is None:
        raise SpecError(
            f"the gradient passes through {op.name} in {where}, and {op.name} has no "
            "derivative (vector–Jacobian product) in symtf"
        )
    params = {k: v for k, v in params.items() if k not in ("step", "path")}
    return op.vjp(xp, g, *args, output=out, **params)


def _plus(xp: Any, a: Tensor | None, b: Tensor) -> Tensor:
    if a is None:
        return b
    if b.shape != a.shape:  # a one-entry cotangent of a scalar read as (1, 1)
        b = b.reshape(a.shape)
    return ops.add(xp, a, b)


def _sweep(
    xp: Any, *values: Tensor | None, kind: str, y: str, x: str, nodes: tuple[Node, ...], **p: Any
) -> Tensor:
    step: StepNode = p["step"]
    names = [y, x]
    for n in nodes:
        names.append(n.name)
        names.extend(n.args)
    env = dict(zip(dict.fromkeys(names), values, strict=True))
    yv, xv = env[y], env[x]
    if yv is None or xv is None:
        raise SpecError(f"{step.where}: {kind} needs numbers, and {y} or {x} holds none")
    try:
        tapes = [_Tape(xp, n, env) for n in nodes]
        rows = []
        seeds = [0] if kind == "grad" else range(yv.size)
        for s in seeds:
            seed = [xp.const(0)] * yv.size
            seed[s] = xp.const(1)
            rows.append(_backward(xp, tapes, y, x, Tensor(yv.shape, seed), xv.shape))
    except Undecided as e:
        if getattr(xp, "name", "") != "exact":
            raise
        from symtf.errors import ModelError

        raise ModelError(f"{step.where.removeprefix(p['path'] + ': ')}: {e}") from None
    if kind == "grad":
        return rows[0]
    return Tensor((*yv.shape, *xv.shape), [v for r in rows for v in r.data])


def _backward(
    xp: Any, tapes: Sequence[_Tape], y: str, x: str, seed: Tensor, shape: tuple[int, ...]
) -> Tensor:
    cot: dict[str, Tensor] = {y: seed}
    for tape in reversed(tapes):
        g = cot.pop(tape.node.name, None)
        if g is None:
            continue
        out = tape.output  # a node a cotangent reaches lies between x and y: it has a value
        if out is not None and g.shape != out.shape:
            g = g.reshape(out.shape)
        for a, c in tape.back(g).items():
            cot[a] = _plus(xp, cot.get(a), c)
    got = cot.get(x)
    if got is None:
        return full(xp, shape, 0)
    return got if got.shape == shape else got.reshape(shape)


def sweep_steps(
    xp: Any,
    steps: Sequence[tuple[str, str]],
    values: Mapping[str, Tensor],
    y: str,
    x: str,
    *,
    kind: str = "grad",
    where: str = "draft",
) -> Tensor:
    """``grad(y, x)`` (or ``jacobian``) through named step texts, without a graph.

    For a caller that holds values rather than a derivation (the draft's search, which
    knows each tensor's certified value and the step-language text it was computed by):
    the steps are evaluated in order on ``values`` and the names before them, taped, and
    swept back from ``y`` exactly as a derivation's ``grad(y, x)`` node is.

    Args:
        xp: The backend (certified balls in the draft).
        steps: ``(name, text)`` of every step between ``x`` and ``y`` (and any others
            ``y`` reads), in an order where each reads only names before it.
        values: The tensors the first steps read (``x`` among them, or one of ``steps``).
        y: A scalar (``grad``) or any step (``jacobian``).
        x: The variable: a name of ``values`` or of ``steps``.
        kind: ``grad`` or ``jacobian``.
        where: For messages.

    Raises:
        SpecError: A text that does not parse, a name not defined, or ``y`` not a scalar
            for ``grad``.
        ModelError: A step undefined for these numbers.
        Undecided: (balls) a sign that cannot be decided at this precision.
    """
    from symtf.graph.evaluate import evaluate_text

    env: dict[str, Tensor | None] = dict(values)
    nodes: list[Node] = []
    for name, text in steps:
        try:
            tree = lang.parse(text, ops.public_signatures(), where=where)
        except ExpressionError as e:
            raise SpecError(f"{where}: {name}: {e}") from None
        reads = tuple(dict.fromkeys(n.name for n in lang.names(tree) if n.name in env))
        env[name] = evaluate_text(
            xp, text, {a: v for a in reads if (v := env[a]) is not None}, where=where
        )
        node = StepNode(name, text, tree, f"{where}: {name}", reads, name)
        nodes.append(Node(name, STEP, reads, {"step": node, "path": where}, None, text))
    if y not in env or x not in env:
        raise SpecError(f"{where}: {kind}({y}, {x}): a name that is not defined")
    yv, xv = env[y], env[x]
    assert yv is not None and xv is not None
    if kind == "grad" and yv.size != 1:
        raise SpecError(f"{where}: grad({y}, {x}): {y} has {yv.size} entries, not one")
    down = _downstream(nodes, x)
    tapes = [_Tape(xp, n, env) for n in nodes if n.name in down and n.name != x]
    rows = []
    for s in [0] if kind == "grad" else range(yv.size):
        seed = [xp.const(0)] * yv.size
        seed[s] = xp.const(1)
        rows.append(_backward(xp, tapes, y, x, Tensor(yv.shape, seed), xv.shape))
    if kind == "grad":
        return rows[0]
    return Tensor((*yv.shape, *xv.shape), [v for r in rows for v in r.data])


def _derivative_op(kind: str) -> Op[Tensor]:
    def compute(xp: Any, *values: Tensor | None, **params: Any) -> Tensor:
        return _sweep(xp, *values, kind=kind, **params)

    rule = ops.get(kind).shape

    def shape(*shapes: Any, **params: Any) -> tuple[int, ...] | None:
        from symtf.errors import ShapeError

        # the node reads each name once: grad(L, L) has one input, read as y and as x
        sy = shapes[0]
        sx = sy if params["x"] == params["y"] else shapes[1]
        if sy is None or sx is None:
            return None
        try:
            return rule(sy, sx)
        except ShapeError as e:
            step: StepNode = params["step"]
            raise _error(step, _pos(step, "y"), str(e)) from None

    return dataclasses.replace(ops.get(kind), compute=compute, shape=shape)


#: The graph's op for each derivative (the registry's signature and formula, the sweep).
DERIVATIVE: dict[str, Op[Tensor]] = {k: _derivative_op(k) for k in KINDS}
_OPS = tuple(DERIVATIVE.values())

__all__ = [
    "DERIVATIVE",
    "KINDS",
    "derivative_node",
    "hoisted",
    "is_derivative",
    "resolve",
    "sweep_steps",
]
