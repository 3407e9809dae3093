"""The step graph: templates emit nodes, conventions rewrite node parameters, replay flows by name.

Expected values come from how each case is built (hand arithmetic on small
rationals), never from symtf's own output.
"""

from __future__ import annotations

import dataclasses

import pytest
import sympy

import symtf
from symtf import ops
from symtf.backends import ExactBackend
from symtf.graph.conventions import switch
from symtf.graph.core import Builder, Graph, Node, evaluate
from symtf.graph.pipeline import build
from symtf.spec import loads

I_LOVE_AI = "derivations/i_love_ai.toml"


@pytest.fixture(scope="module")
def ai() -> symtf.Derivation:
    return symtf.load(I_LOVE_AI)


def test_builder_prefixes_names_and_arguments_alike() -> None:
    nodes: list[Node] = []
    outer = Builder(sink=nodes)
    outer.add("a", ops.const, value=3)
    inner = Builder("gen.0", nodes)
    inner.add("b", ops.const, value=4)
    got = inner.add("c", ops.add, ("b", "b"), "b + b")
    assert got == "c"  # local names, so a template passes them on as arguments
    assert [n.name for n in nodes] == ["a", "gen.0.b", "gen.0.c"]
    assert nodes[2].args == ("gen.0.b", "gen.0.b")
    trace = evaluate(Graph(nodes), ExactBackend())
    assert trace.value("gen.0.c")[0, 0] == 8


def test_a_name_defined_twice_is_refused() -> None:
    b = Builder()
    b.add("a", ops.const, value=1)
    with pytest.raises(ValueError, match="'a' defined twice"):
        b.add("a", ops.const, value=2)
    with pytest.raises(ValueError, match="defined twice"):
        Graph([Node("x", ops.identity), Node("x", ops.identity)])


def test_unroll_node_emits_and_evaluates_nodes_while_running() -> None:
    """An unroll node sees earlier values and adds nodes that later nodes can read."""

    def unroll(xp, live, *, times):
        for i in range(times):
            prev = "seed" if i == 0 else f"step.{i - 1}"
            live.run([Node(f"step.{i}", ops.add, (prev, prev))])

    b = Builder()
    b.add("seed", ops.const, value=sympy.Rational(1, 3))
    b.unroll("loop", unroll, times=3)
    trace = evaluate(b.graph(), ExactBackend())
    assert "loop" not in trace  # the unroll node itself records nothing
    assert trace.value("step.2")[0, 0] == sympy.Rational(8, 3)


def test_templates_build_the_canonical_names_in_order(ai) -> None:
    g = build(ai)
    names = g.names()
    for name in ("tokens", "embed", "x", "l0.h0.q", "l0.h0.sqrt_dk", "l0.ln1.std", "logits"):
        assert name in g
    # each node reads only earlier nodes: the graph is in evaluation order
    at = {n: k for k, n in enumerate(names)}
    for node in g:
        assert all(at[a] < at[node.name] for a in node.args), node.name
    assert g["l0.h0.scaled"].args == ("l0.h0.scores", "l0.h0.sqrt_dk")
    assert g["l0.ln1"].args == ("l0.ln1.centered", "l0.ln1.std")


@pytest.mark.parametrize(
    ("name", "scope", "node", "params"),
    [
        ("no-sqrt-dk", "l0.h1", "l0.h1.sqrt_dk", {"scale": 1}),
        ("divide-by-dk", "l0.h0", "l0.h0.sqrt_dk", {"scale": 2}),
        ("sqrt-dmodel", "l0.h2", "l0.h2.sqrt_dk", {"scale": sympy.sqrt(6)}),
        ("unbiased-variance", "l0.ln2", "l0.ln2.var", {"unbiased": True}),
        ("eps-1e-6", "l0.ln1", "l0.ln1.std", {"eps": sympy.Rational(1, 10**6)}),
        ("softmax-columns", "l0.h0", "l0.h0.pattern", {"axis": -2}),
    ],
)
def test_a_convention_changes_only_its_nodes_parameters(ai, name, scope, node, params) -> None:
    before = build(ai)
    after = build(switch(name).apply(ai, scope))
    assert after.names() == before.names()  # the same graph shape
    changed = [
        n.name
        for n, m in zip(before, after, strict=True)
        if dict(n.params) != dict(m.params) or n.formula != m.formula
    ]
    assert changed == [node]
    for k, v in params.items():
        assert after[node].params[k] == v


def test_shape_conventions_expand_the_template_again(ai) -> None:
    """Masking after the softmax adds a node per head: a template re-expansion, not a rewrite."""
    after = build(switch("mask-after-softmax").apply(ai, ""))
    assert "l0.h0.weights" in after and "l0.h0.weights" not in build(ai)


def test_replayed_std_flows_into_the_normalised_row() -> None:
    """Row (1, 2, 3): mean 2, centred (−1, 0, 1), biased variance 2/3. Replace the std by the
    printed 1/2 and the normalised row must become (−2, 0, 2), read through the graph."""
    text = """
title = "norm"
[model]
architecture = "none"
[[model.standalone]]
name = "n"
op = "layernorm"
input = "1 2 3"
eps = "0"
"""
    d = loads(text, "n.toml")
    plain = symtf.run(d)
    assert plain.value("n.var")[0, 0] == sympy.Rational(2, 3)

    def override(name, value):
        if name == "n.std":
            return sympy.ImmutableMatrix([[sympy.Rational(1, 2)]])
        return value

    replayed = symtf.run(d, ExactBackend(), override)
    assert list(replayed.value("n")) == [-2, 0, 2]
    assert replayed.value("n.var")[0, 0] == sympy.Rational(2, 3)  # upstream untouched


def test_rewrites_are_recorded_on_the_derivation_not_its_model(ai) -> None:
    d2 = switch("no-sqrt-dk").apply(ai, "l0.h0")
    assert d2.model == ai.model and d2.claims is ai.claims
    assert d2.rewrites == (("no-sqrt-dk", "l0.h0"),)
    assert dataclasses.replace(d2, rewrites=()) == ai


def test_build_is_public_and_its_graph_runs_to_the_same_trace(ai) -> None:
    """``symtf.build`` gives the graph ``symtf.run`` evaluates: same names, same exact values."""
    graph = symtf.build(ai)
    via_graph = evaluate(graph, ExactBackend())
    via_run = symtf.run(ai)
    assert list(via_graph) == list(via_run) == graph.names()
    assert via_graph.value("logits") == via_run.value("logits")
