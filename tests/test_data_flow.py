"""One-way data flow: decoding claims read the trace, and the modules form no import cycle here."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

import symtf
from symtf import compare
from symtf.assertions import check_claim

ROOT = Path(__file__).resolve().parent.parent
DERIVATIONS = ROOT / "derivations"


def _imports() -> dict[str, set[str]]:
    """symtf module -> symtf modules it imports anywhere (lazy imports too, but not in ``_repr_*``)."""
    mods: dict[str, set[str]] = {}
    for p in (ROOT / "symtf").rglob("*.py"):
        name = ".".join(p.relative_to(ROOT).with_suffix("").parts).removesuffix(".__init__")
        tree = ast.parse(p.read_text())
        display = {
            id(x)
            for f in ast.walk(tree)
            if isinstance(f, ast.FunctionDef) and f.name.startswith("_repr_")
            for x in ast.walk(f)
        }
        deps: set[str] = set()
        for n in ast.walk(tree):
            if id(n) in display:  # Jupyter display hooks may import a renderer
                continue
            if isinstance(n, ast.ImportFrom) and n.module and n.module.startswith("symtf."):
                deps.add(n.module)
            elif isinstance(n, ast.Import):
                deps |= {a.name for a in n.names if a.name.startswith("symtf.")}
        mods[name] = deps
    return mods


def _reach(graph: dict[str, set[str]], start: str) -> set[str]:
    seen, todo = set(), [start]
    while todo:
        for v in graph.get(todo.pop(), ()):
            if v not in seen:
                seen.add(v)
                todo.append(v)
    return seen


@pytest.mark.parametrize(
    "module",
    [
        "symtf.pipeline",
        "symtf.blocks",
        "symtf.ties",
        "symtf.rounded",
        "symtf.floatsim",
        "symtf.accept",
        "symtf.assertions",
        "symtf.derive.at",
        # The parser dispatches to seq2seq's; seq2seq and decoding read through
        # symtf.tomlread and symtf.model, never back through symtf.spec.
        "symtf.spec",
        "symtf.seq2seq",
        "symtf.generate",
        "symtf.tomlread",
        "symtf.model",
    ],
)
def test_module_is_on_no_import_cycle(module: str) -> None:
    g = _imports()
    assert module in g
    assert module not in _reach(g, module)



@pytest.mark.parametrize(
    "module",
    [
        "symtf.evaluation",
        "symtf.report",
        "symtf.compare",
        "symtf.diagnose",
        "symtf.displayed",
        "symtf.accept",
        "symtf.floatsim",
        "symtf.assertions",
    ],
)
def test_checking_and_diagnosis_are_on_no_import_cycle(module: str) -> None:
    g = _imports()
    assert module in g
    assert module not in _reach(g, module)


def test_values_and_results_import_neither_checking_nor_diagnosis() -> None:
    g = _imports()
    above = {"symtf.compare", "symtf.diagnose", "symtf.displayed", "symtf.accept"}
    for m in ("symtf.evaluation", "symtf.report"):
        assert not above & _reach(g, m), m
    assert {"symtf.evaluation", "symtf.report"} <= g["symtf.diagnose"]
    assert "symtf.compare" not in g["symtf.diagnose"] | g["symtf.displayed"]


def test_compare_still_names_the_moved_values_and_results() -> None:
    from symtf import evaluation, report

    for name in ("Evaluator", "Quantity", "selection", "_fit", "classify", "correct_rounding"):
        assert getattr(compare, name) is getattr(evaluation, name)
    for name in ("Check", "ClaimResult", "DerivationReport", "Report", "FileError", "FAILING"):
        assert getattr(compare, name) is getattr(report, name)

def test_parsing_and_decoding_import_neither_checking_nor_each_other() -> None:
    g = _imports()
    assert "symtf.generate" not in g["symtf.spec"]  # the parser reads [generate] itself
    for m in ("symtf.generate", "symtf.pipeline", "symtf.seq2seq"):
        assert not {"symtf.compare", "symtf.diagnose", "symtf.accept"} & _reach(g, m)


def _translation() -> symtf.Derivation:
    return symtf.load(DERIVATIONS / "translation_toy.toml")


def test_teacher_forcing_claim_reads_the_node_and_runs_no_model(monkeypatch) -> None:
    d = _translation()
    ev = compare.Evaluator(d)
    t = ev.exact_trace()
    assert t.value("teacher_forcing").holds is True  # the file has a causal decoder mask

    def no_model(*_: object, **__: object) -> None:
        raise AssertionError("checking ran the model")

    monkeypatch.setattr("symtf.seq2seq.teacher_forcing", no_model)
    monkeypatch.setattr("symtf.pipeline.run", no_model)
    claim = next(c for c in d.claims if c.assertion == "teacher-forcing")
    c = check_claim(claim, ev, d, compare.Check)
    assert (c.verdict, c.expected) == ("exact", "holds")
    tokens = next(c for c in d.claims if c.assertion == "tokens")
    assert check_claim(tokens, ev, d, compare.Check).verdict == "exact"


def test_no_teacher_forcing_node_without_a_claim_that_reads_it() -> None:
    d = symtf.load(DERIVATIONS / "beam_toy.toml")
    assert not any(c.assertion == "teacher-forcing" for c in d.claims)
    assert "teacher_forcing" not in compare.Evaluator(d).exact_trace()
