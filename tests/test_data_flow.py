"""One-way data flow: decoding claims read the trace, and the modules form no import cycle here."""

from __future__ import annotations

import ast
import functools
from pathlib import Path

import pytest

import symtf
from symtf.checking.assertions import check_claim
from symtf.checking.evaluation import Evaluator
from symtf.checking.report import Check

ROOT = Path(__file__).resolve().parent.parent
DERIVATIONS = ROOT / "derivations"


@functools.cache  # parsing every module takes seconds; the tests only read the graph
def _imports(hooks: tuple[str, ...] = ("_repr_",)) -> dict[str, set[str]]:
    """symtf module -> symtf modules it imports anywhere (lazy imports too).

    ``from symtf.checking import compare`` counts as an import of ``symtf.checking.compare``.
    Imports inside functions named with one of ``hooks`` (display hooks such as Jupyter's
    ``_repr_html_``) are left out, and so is the package ``symtf`` itself (the API facade).
    """
    files = {
        ".".join(p.relative_to(ROOT).with_suffix("").parts).removesuffix(".__init__"): p
        for p in (ROOT / "symtf").rglob("*.py")
    }
    mods: dict[str, set[str]] = {}
    for name, p in files.items():
        tree = ast.parse(p.read_text())
        display = {
            id(x)
            for f in ast.walk(tree)
            if isinstance(f, ast.FunctionDef) and f.name.startswith(hooks)
            for x in ast.walk(f)
        }
        deps: set[str] = set()
        for n in ast.walk(tree):
            if id(n) in display:
                continue
            if isinstance(n, ast.ImportFrom) and n.module and n.module.split(".")[0] == "symtf":
                for a in n.names:
                    full = f"{n.module}.{a.name}"
                    deps.add(full if full in files else n.module)
            elif isinstance(n, ast.Import):
                deps |= {a.name for a in n.names if a.name.startswith("symtf.")}
        mods[name] = deps - {"symtf", name}
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
        "symtf.graph.pipeline",
        "symtf.graph.blocks",
        "symtf.graph.ties",
        "symtf.backends.rounded",
        "symtf.checking.framework",
        "symtf.checking.accept",
        "symtf.checking.assertions",
        "symtf.derive.at",
        # The parser dispatches to seq2seq's; seq2seq and decoding read through
        # symtf.spec.tomlread and symtf.spec.model, never back through symtf.spec.
        "symtf.spec.derivation",
        "symtf.graph.seq2seq",
        "symtf.graph.generate",
        "symtf.spec.tomlread",
        "symtf.spec.model",
    ],
)
def test_module_is_on_no_import_cycle(module: str) -> None:
    g = _imports()
    assert module in g
    assert module not in _reach(g, module)


@pytest.mark.parametrize(
    "module",
    [
        "symtf.checking.evaluation",
        "symtf.checking.report",
        "symtf.checking.compare",
        "symtf.checking.diagnose",
        "symtf.checking.displayed",
        "symtf.checking.accept",
        "symtf.checking.framework",
        "symtf.checking.assertions",
    ],
)
def test_checking_and_diagnosis_are_on_no_import_cycle(module: str) -> None:
    g = _imports()
    assert module in g
    assert module not in _reach(g, module)


def test_values_and_results_import_neither_checking_nor_diagnosis() -> None:
    g = _imports()
    above = {
        "symtf.checking.compare",
        "symtf.checking.diagnose",
        "symtf.checking.displayed",
        "symtf.checking.accept",
    }
    for m in ("symtf.checking.evaluation", "symtf.checking.report"):  # nor their modules
        assert not {d for d in _reach(g, m) if _within(d, *above)}, m
    assert {"symtf.checking.evaluation", "symtf.checking.report"} <= g["symtf.checking.diagnose"]
    diagnosis = [m for m in g if _within(m, "symtf.checking.diagnose", "symtf.checking.displayed")]
    assert "symtf.checking.compare" not in set().union(*(g[m] for m in diagnosis))


def test_parsing_and_decoding_import_neither_checking_nor_each_other() -> None:
    g = _imports()
    assert (
        "symtf.graph.generate" not in g["symtf.spec.derivation"]
    )  # the parser reads [generate] itself
    for m in ("symtf.graph.generate", "symtf.graph.pipeline", "symtf.graph.seq2seq"):
        assert not {
            "symtf.checking.compare",
            "symtf.checking.diagnose",
            "symtf.checking.accept",
        } & _reach(g, m)


def _translation() -> symtf.Derivation:
    return symtf.load(DERIVATIONS / "translation_toy.toml")


def test_teacher_forcing_claim_reads_the_node_and_runs_no_model(monkeypatch) -> None:
    d = _translation()
    ev = Evaluator(d)
    t = ev.exact_trace()
    assert t.value("teacher_forcing").holds is True  # the file has a causal decoder mask

    def no_model(*_: object, **__: object) -> None:
        raise AssertionError("checking ran the model")

    monkeypatch.setattr("symtf.graph.seq2seq.teacher_forcing", no_model)
    monkeypatch.setattr("symtf.graph.pipeline.run", no_model)
    claim = next(c for c in d.claims if c.assertion == "teacher-forcing")
    c = check_claim(claim, ev, d, Check)
    assert (c.verdict, c.expected) == ("exact", "holds")
    tokens = next(c for c in d.claims if c.assertion == "tokens")
    assert check_claim(tokens, ev, d, Check).verdict == "exact"


def test_no_teacher_forcing_node_without_a_claim_that_reads_it() -> None:
    d = symtf.load(DERIVATIONS / "beam_toy.toml")
    assert not any(c.assertion == "teacher-forcing" for c in d.claims)
    assert "teacher_forcing" not in Evaluator(d).exact_trace()


# ----------------------------------------------------------------------------- the stages
# DESIGN.md's data flow, one package per stage: spec/ (TOML → frozen Derivation) → graph/
# (templates, user steps and conventions as one graph, evaluated into a Trace) → check/
# (claims → verdicts). Renderers, formula derivations and teaching read the stages; the
# CLI, the pytest plugin, the explanation of a claim, the sub-commands and the language
# server sit on top; fixes read the report and the place it gives each number.
# draft/ writes an article's derivation as text for spec/ to read; its search evaluates
# candidate steps through graph/, so among the imports it comes after graph/.
# Every other top-level module is a leaf: it imports only leaves.
STAGES = ("symtf.spec", "symtf.graph", "symtf.draft", "symtf.checking")
READERS = ("symtf.renderers", "symtf.derive", "symtf.teach", "symtf.fix")
TOP = (
    "symtf.extract",  # the reader's names where they were always imported from (symtf.draft.read)
    "symtf.cli",
    "symtf.lsp",
    "symtf.pytest_plugin",
    "symtf.__main__",
    "symtf.commands.explain",
    "symtf.commands",
)
#: Display hooks: a formula derivation may describe itself through a renderer (a report
#: and a trace may not: see test_results_and_values_import_no_renderer_…).
DISPLAY = ("_repr_", "__repr__")


def _rank(module: str) -> int:
    """0 leaf, then each stage in order, then readers, then the top."""

    def within(pkgs: tuple[str, ...]) -> bool:
        return any(module == p or module.startswith(p + ".") for p in pkgs)

    if module == "symtf" or within(TOP):
        return len(STAGES) + 2
    if within(READERS):
        return len(STAGES) + 1
    for i, stage in enumerate(STAGES, start=1):
        if within((stage,)):
            return i
    return 0


def test_each_stage_imports_only_earlier_stages_and_leaves() -> None:
    g = _imports(DISPLAY)
    for stage in STAGES:
        assert any(m.startswith(stage + ".") for m in g), stage
    wrong = sorted(f"{m} -> {d}" for m, deps in g.items() for d in deps if _rank(d) > _rank(m))
    assert not wrong, "imports against the data flow:\n" + "\n".join(wrong)


# draft/'s own stages (DESIGN.md, layout): reading the article, translating its code,
# inferring the steps, composing the derivation; each reads only the ones before it (the
# step trees, the article's records and the sizes are shared by all of them). Inference
# is built in layers, each reading only the ones below it: the records a search works on,
# its state, the candidates over it, the evidence that takes one, the steps the code
# states, the rows of probabilities and their gradient, the article-order driver; the
# article's formulas feed the driver.
DRAFT_STAGES = ("read", "translate", "infer", "compose")
INFER_LAYERS = (
    "formula",
    "stated",
    "prefilter",
    "target",
    "state",
    "candidates",
    "evidence",
    "code",
    "literals",
    "gradient",
    "columns",
    "statements",
    "search",
)


def _order(module: str, package: str, parts: tuple[str, ...]) -> int | None:
    return next((i for i, s in enumerate(parts) if _within(module, f"{package}.{s}")), None)


def test_drafting_stages_and_inference_layers_read_only_earlier_ones() -> None:
    g = _imports(DISPLAY)
    assert all(any(_within(m, f"symtf.draft.infer.{x}") for m in g) for x in INFER_LAYERS)
    wrong = sorted(
        f"{m} -> {d}"
        for package, parts in (("symtf.draft", DRAFT_STAGES), ("symtf.draft.infer", INFER_LAYERS))
        for m, deps in g.items()
        if (a := _order(m, package, parts)) is not None
        for d in deps
        if (b := _order(d, package, parts)) is not None and b > a
    )
    assert not wrong, "imports against the draft's stages:\n" + "\n".join(wrong)


def test_ops_and_backends_read_no_stage_above_them() -> None:
    """The registry is written against the backend protocol alone; the number systems know
    no op; neither reads the parser, the graph, checking or a renderer."""
    g = _imports(DISPLAY)
    for m, deps in g.items():
        if m.startswith("symtf.backends"):
            assert not {d for d in deps if _rank(d) > _rank("symtf.backends")}, m
        if m.startswith("symtf.ops"):
            assert not {d for d in deps if _rank(d) > _rank("symtf.ops")}, m


def _within(module: str, *packages: str) -> bool:
    return any(module == p or module.startswith(p + ".") for p in packages)


def test_results_and_values_import_no_renderer_not_even_to_display_themselves() -> None:
    """A report, a trace and the graph describe themselves without a renderer: Jupyter's
    display is registered from the renderers' side (symtf.renderers.display). Every import
    counts here, display hooks too."""
    g = _imports(())
    wrong = sorted(
        f"{m} -> {d}"
        for m, deps in g.items()
        if _within(m, "symtf.checking", "symtf.graph", "symtf.trace")
        for d in deps
        if _within(d, "symtf.renderers")
    )
    assert not wrong, "\n".join(wrong)
    for m in ("symtf.checking.report", "symtf.trace"):
        assert "symtf.renderers" not in " ".join(_reach(g, m)), m


def test_renderers_read_and_compute_nothing() -> None:
    """No renderer reaches a number system or the graph: every decimal, enclosure and
    picture it shows comes from the report and its trace (symtf.shown)."""
    g = _imports(())
    renderers = [m for m in g if _within(m, "symtf.renderers")]
    assert "symtf.renderers.latex" in renderers and "symtf.renderers.charts" in renderers
    wrong = sorted(
        f"{m} -> {d}"
        for m in renderers
        for d in g[m]
        if _within(d, "symtf.backends", "symtf.graph")
    )
    assert not wrong, "\n".join(wrong)


def test_spec_modules_never_import_through_their_own_package() -> None:
    g = _imports()
    assert not [m for m, deps in g.items() if m.startswith("symtf.spec.") and "symtf.spec" in deps]


def test_symtf_has_no_import_cycle() -> None:
    g = _imports()
    for m in g:
        assert m not in _reach(g, m), m


def test_the_api_names_stay_where_the_readme_puts_them() -> None:
    from symtf.spec import Derivation as D
    from symtf.spec import load as spec_load

    assert callable(symtf.check) and symtf.load is spec_load and symtf.Derivation is D
    assert symtf.run.__module__ == "symtf.graph.pipeline" and callable(symtf.render)
    function = symtf.check  # the API function over the symtf.checking package
    assert function.__module__ == "symtf"
