"""Conventions as rewrites of the step graph: of template nodes' parameters and of user steps.

Template nodes (:data:`NODE_REWRITES`): a convention at a scope sets parameters
of the nodes there (a head's ``sqrt_dk`` scale, a norm's ``unbiased`` and
``eps``, a projection's ``transposed``); :func:`apply_rewrites` applies the ones
a derivation records when its graph is built.

User steps: a user step is a syntax tree, so an alternative convention is a new tree: the
unbiased variance (``std(x, unbiased=true)``), a division by ``sqrt(...)``
dropped, a weight operand of ``@`` transposed, the softmax taken down the
columns. Each :class:`StepRewrite` says at which steps it applies (its scopes are
step names) and returns a derivation with that one step rewritten; the claims
are never touched. :mod:`symtf.graph.conventions` merges these into its switches of
the same name, so diagnosis tries them like any other convention.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Protocol, cast

import sympy

from symtf import ops
from symtf.graph.core import Graph, Node
from symtf.language import lang
from symtf.language.syntax import Tree
from symtf.spec.steps import StepNode

if TYPE_CHECKING:
    from symtf.spec import Derivation


class Convention(Protocol):
    """A named alternative convention: a :class:`symtf.graph.conventions.Switch`, or a rewrite of user steps
    (:class:`StepRewrite`) that no switch of its name takes in."""

    @property
    def name(self) -> str:
        """Short name, e.g. ``no-sqrt-dk``."""
        ...

    @property
    def doc(self) -> str:
        """One line for people."""
        ...

    @property
    def level(self) -> str:
        """What a scope names (``head``, ``norm``, ``projection``, ``model``)."""
        ...

    def scopes(self, d: Derivation) -> list[str]:
        """Where it can apply and would change something (``[]`` if nowhere)."""
        ...

    def apply(self, d: Derivation, scope: str) -> Derivation:
        """A new derivation with it applied at ``scope``; claims untouched."""
        ...


#: The step ops that take ``unbiased``, and where it stands among their arguments.
_POSITION = {
    name: [p.name for p in op.step_params].index("unbiased")
    for name, op in ops.REGISTRY.items()
    if op.public and op.param("unbiased") is not None
}
_VARIANCE_OPS = tuple(_POSITION)


def _kw(call: lang.Call, key: str, position: int) -> Tree | None:
    for k, v in call.kwargs:
        if k == key:
            return v
    return call.args[position] if len(call.args) > position else None


def _with_kw(call: lang.Call, key: str, position: int, value: Tree) -> lang.Call:
    args = list(call.args)
    if len(args) > position:
        args[position] = value
        return lang.Call(call.pos, call.name, tuple(args), call.kwargs)
    kwargs = (*tuple((k, v) for k, v in call.kwargs if k != key), (key, value))
    return lang.Call(call.pos, call.name, call.args, kwargs)


def _is_true(node: Tree | None) -> bool:
    return isinstance(node, lang.Name) and node.name == "true"


def _set_unbiased(flag: bool) -> Callable[[Tree, Any], Tree | None]:
    def fn(node: Tree, d: Any) -> Tree | None:
        if (
            isinstance(node, lang.Call)
            and node.name in _VARIANCE_OPS
            and _is_true(_kw(node, "unbiased", _POSITION[node.name])) != flag
        ):
            value = lang.Name(node.pos, "true" if flag else "false")
            return _with_kw(node, "unbiased", _POSITION[node.name], value)
        return None

    return fn


def _drop_sqrt_division(replacement: str) -> Callable[[Tree, Any], Tree | None]:
    """``a / sqrt(k)`` → ``a`` (``drop``) or ``a / k`` (``square``)."""

    def fn(node: Tree, d: Any) -> Tree | None:
        if not isinstance(node, lang.Chain):
            return None
        rest = []
        changed = False
        for link in node.rest:
            if link.op == "/" and isinstance(link.node, lang.Call) and link.node.name == "sqrt":
                changed = True
                if replacement == "square":
                    rest.append(lang.Link("/", "/", link.pos, link.node.args[0]))
                continue
            rest.append(link)
        if not changed:
            return None
        return lang.Chain(node.pos, node.first, tuple(rest)) if rest else node.first

    return fn


def _square_weights(d: Any) -> dict[str, Any]:
    """Given square, non-symmetric 2-D tensors (a transposed one is a different matrix)."""
    out = {}
    for g in getattr(d, "tensors", ()):
        if len(g.shape) == 2 and g.shape[0] == g.shape[1] > 1:
            n = g.shape[0]
            m = sympy.Matrix(n, n, list(g.values))
            if m != m.T:
                out[g.name] = g
    return out


def _transpose_weights(node: Tree, d: Any) -> Tree | None:
    if not isinstance(node, lang.Chain):
        return None
    weights = _square_weights(d)
    changed = False
    rest = []
    for link in node.rest:
        if link.op == "@" and isinstance(link.node, lang.Name) and link.node.name in weights:
            rest.append(
                lang.Link(link.op, link.text, link.pos, lang.Transpose(link.node.pos, link.node))
            )
            changed = True
        else:
            rest.append(link)
    return lang.Chain(node.pos, node.first, tuple(rest)) if changed else None


_SOFTMAX_AXIS = [p.name for p in ops.softmax.step_params].index("axis")


def _softmax_columns(node: Tree, d: Any) -> Tree | None:
    if isinstance(node, lang.Call) and node.name == "softmax":
        axis = _kw(node, "axis", _SOFTMAX_AXIS)
        last = axis is None or (
            isinstance(axis, lang.Unary)
            and isinstance(axis.operand, lang.Num)
            and axis.operand.value == 1
        )
        if last:
            minus2 = lang.Unary(node.pos, "-", lang.Num(node.pos, "2", sympy.Integer(2)))
            return _with_kw(node, "axis", _SOFTMAX_AXIS, minus2)
    return None


@dataclass(frozen=True)
class StepRewrite:
    """One convention as a rewrite of user steps.

    Attributes:
        name: The convention's name (shared with the model switch of that name).
        doc: One line for people.
    """

    name: str
    doc: str
    _fn: Callable[[Tree, Any], Tree | None] = field(repr=False, compare=False)
    level: str = "norm"

    def rewritten(self, step: StepNode, d: Any) -> lang.Node | None:
        """The step's tree under this convention, or ``None`` if it does not change."""
        tree = lang.mapped(step.tree, lambda n: self._fn(n, d))
        # Rebuilt from a step's tree with step-language nodes only (a node's children are
        # typed by the parser both languages share, :class:`~symtf.language.syntax.Tree`).
        return None if tree == step.tree else cast(lang.Node, tree)

    def scopes(self, d: Derivation) -> list[str]:
        """The user steps this convention would change."""
        return [s.name for s in getattr(d, "steps", ()) if self.rewritten(s, d) is not None]

    def apply(self, d: Derivation, scope: str) -> Derivation:
        """A derivation with step ``scope`` rewritten (claims untouched)."""
        steps = list(d.steps)
        for k, s in enumerate(steps):
            if s.name == scope:
                tree = self.rewritten(s, d)
                if tree is not None:
                    steps[k] = dataclasses.replace(s, tree=tree, text=lang.unparse(tree))
                return dataclasses.replace(d, steps=tuple(steps))
        raise KeyError(scope)


STEP_REWRITES: tuple[StepRewrite, ...] = (
    StepRewrite(
        "unbiased-variance",
        "std/var/layernorm divide the squared deviations by n − 1, not n (per step)",
        _set_unbiased(True),
    ),
    StepRewrite(
        "biased-variance",
        "std/var/layernorm divide the squared deviations by n, not n − 1 (per step)",
        _set_unbiased(False),
        "norm",  # a scope names the step whose std/var/layernorm changes
    ),
    StepRewrite(
        "no-sqrt-dk", "scores are not divided by √d_k (per step)", _drop_sqrt_division("drop")
    ),
    StepRewrite(
        "divide-by-dk",
        "scores are divided by d_k instead of √d_k (per step)",
        _drop_sqrt_division("square"),
    ),
    StepRewrite(
        "weights-left",
        "a square weight applied as W·x, i.e. x·Wᵀ (per step)",
        _transpose_weights,
    ),
    StepRewrite(
        "softmax-columns",
        "softmax taken down each column instead of along each row (per step)",
        _softmax_columns,
    ),
)


def merge_switches(switches: tuple[Any, ...]) -> tuple[Convention, ...]:
    """The model switches with the step rewrites of the same name folded in (new names appended).

    Args:
        switches: :class:`symtf.graph.conventions.Switch` values (a dataclass with
            ``_scopes``/``_apply``).
    """
    merged = list(switches)
    by_name = {s.name: k for k, s in enumerate(merged)}
    extra: list[StepRewrite] = []
    for rw in STEP_REWRITES:
        k = by_name.get(rw.name)
        if k is None:
            extra.append(rw)
            continue
        sw = merged[k]

        def scopes(d: Derivation, sw: Any = sw, rw: StepRewrite = rw) -> list[str]:
            theirs: list[str] = sw._scopes(d)
            return theirs + rw.scopes(d)

        def apply(d: Derivation, scope: str, sw: Any = sw, rw: StepRewrite = rw) -> Derivation:
            if scope in rw.scopes(d):
                return rw.apply(d, scope)
            if sw._apply is not None:
                out: Derivation = sw._apply(d, scope)
                return out
            return with_rewrite(d, sw.name, scope)

        doc = f"{sw.doc[:-1]}, or per step)" if sw.doc.endswith(")") else sw.doc
        merged[k] = dataclasses.replace(sw, doc=doc, _scopes=scopes, _apply=apply)
    return (*merged, *extra)


# ----------------------------------------------------------------------------- template nodes
#
# The templates' nodes carry their conventions as parameters of their registry ops
# (symtf.graph.blocks, symtf.graph.pipeline): a head's ``sqrt_dk`` node its ``scale``, a
# norm's ``var`` node ``unbiased`` and its ``std`` (``rms``) node ``eps``, the ``scores``
# node ``transpose_b``, the softmax node its ``axis``, a projection ``transposed``, a
# rotation its ``pairs``; an activation is its op. A convention at a scope sets those
# parameters (or that op) on the nodes there, and nothing else: each node's formula
# follows from its op and parameters.


def with_rewrite(d: Derivation, name: str, scope: str) -> Derivation:
    """``d`` recording the rewrite of template nodes ``name`` at ``scope`` (claims untouched)."""
    return dataclasses.replace(d, rewrites=(*d.rewrites, (name, scope)))


def apply_rewrites(graph: Graph, d: Any) -> Graph:
    """``graph`` with the derivation's convention rewrites of template nodes applied.

    ``d.rewrites`` holds ``(convention, scope)`` pairs, set by
    :meth:`symtf.graph.conventions.Switch.apply`; each changes the parameters of the
    nodes at that scope (see :data:`NODE_REWRITES`).

    Raises:
        KeyError: A scope with none of the nodes the convention changes.
    """
    for name, scope in getattr(d, "rewrites", ()):
        before = graph
        graph = NODE_REWRITES[name](graph, scope, d)
        if graph is before:
            raise KeyError(f"{name} changes no node at {scope!r}")
    return graph


def _scale(value: Callable[[Any], Any]) -> Callable[[Graph, str, Any], Graph]:
    def rw(g: Graph, scope: str, d: Any) -> Graph:
        return g.with_params(f"{scope}.sqrt_dk", scale=value(d.model))

    return rw


def _variance(unbiased: bool) -> Callable[[Graph, str, Any], Graph]:
    def rw(g: Graph, scope: str, d: Any) -> Graph:
        return g.with_params(f"{scope}.var", unbiased=unbiased)

    return rw


def _eps(value: str) -> Callable[[Graph, str, Any], Graph]:
    def rw(g: Graph, scope: str, d: Any) -> Graph:
        root = f"{scope}.std" if f"{scope}.std" in g else f"{scope}.rms"
        return g.with_params(root, eps=sympy.Rational(value))

    return rw


def _every(
    suffix: str, when: Callable[[Node], bool], change: Callable[[Node], dict[str, Any]]
) -> Callable[[Graph, str, Any], Graph]:
    """A model-wide rewrite: every node named ``….suffix`` that ``when`` accepts."""

    def rw(g: Graph, scope: str, d: Any) -> Graph:
        for node in g:
            if node.name.endswith(suffix) and when(node):
                g = g.replace(node.name, **change(node))
        return g

    return rw


def _activation(kind: str) -> Callable[[Graph, str, Any], Graph]:
    old = "gelu_tanh" if kind == "gelu" else "gelu"
    return _every(
        ".ffn_act",
        lambda n: getattr(n.op, "name", None) == old,
        lambda n: {"op": ops.get(kind)},
    )


def _k_not_transposed(g: Graph, scope: str, d: Any) -> Graph:
    return g.with_params(f"{scope}.scores", transpose_b=False)


def _softmax_columns_node(g: Graph, scope: str, d: Any) -> Graph:
    for part in ("weights", "pattern"):  # the softmax is ``weights`` when masking follows it
        name = f"{scope}.{part}"
        if name in g and g[name].op is ops.softmax:
            return g.with_params(name, axis=-2)
    return g


#: A projection's scope suffix → the node it feeds (``l0.h0.W_Q`` → ``l0.h0.q``).
_PROJECTED = {
    "W_Q": "q",
    "W_K": "k",
    "W_V": "v",
    "W_O": "attn_out",
    "W1": "ffn_pre",
    "W2": "ffn_out",
    "W3": "ffn_up",
}


def _weights_left(g: Graph, scope: str, d: Any) -> Graph:
    """Transpose the square, non-symmetric weight of one projection, or of every one of a head."""
    last = scope.rsplit(".", 1)[-1]
    if last in _PROJECTED:
        targets = [f"{scope.rsplit('.', 1)[0]}.{_PROJECTED[last]}"]
    else:
        targets = [f"{scope}.{x}" for x in ("q", "k", "v")]
    for name in targets:
        node = g.get(name)
        if node is None:
            continue
        w = node.params.get("w")
        if w is None or node.params.get("transposed") or w.rows != w.cols or w == w.T:
            continue
        g = g.with_params(name, transposed=True)
    return g


def _rope_pairs(pairs: str) -> Callable[[Graph, str, Any], Graph]:
    return _every(
        "_rot",
        lambda n: "pairs" in n.params,
        lambda n: {"params": {**n.params, "pairs": pairs}},
    )


#: Each convention that is a change of template nodes' parameters: ``rewrite(graph, scope, d)``.
#: The norm placement and the mask's place change the template's shape; those are
#: re-expansions of the template from a model setting (symtf.graph.conventions).
NODE_REWRITES: dict[str, Callable[[Graph, str, Any], Graph]] = {
    "no-sqrt-dk": _scale(lambda m: sympy.Integer(1)),
    "sqrt-dmodel": _scale(lambda m: sympy.sqrt(m.d_model)),
    "divide-by-dk": _scale(lambda m: sympy.Integer(m.d_head)),
    "unbiased-variance": _variance(True),
    "biased-variance": _variance(False),
    "eps-1e-5": _eps("1e-5"),
    "eps-1e-6": _eps("1e-6"),
    "eps-1e-12": _eps("1e-12"),
    "gelu-tanh": _activation("gelu_tanh"),
    "gelu-erf": _activation("gelu"),
    "k-not-transposed": _k_not_transposed,
    "softmax-columns": _softmax_columns_node,
    "weights-left": _weights_left,
    "rope-halves": _rope_pairs("halves"),
    "rope-adjacent": _rope_pairs("adjacent"),
}
