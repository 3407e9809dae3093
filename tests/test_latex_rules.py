"""The worked notes' rule lines: each line after the formula names what was done.

The rule of a result line is the rule of the op the trace recorded (``Op.rule``, written
in the registry), never read off the formula or the labels; the substituted line names
whose values it writes in by the node's labels.
"""

from __future__ import annotations

import dataclasses
from pathlib import Path

import pytest

from symtf import spec
from symtf.checking import compare
from symtf.ops import REGISTRY
from symtf.ops import get as get_op
from symtf.renderers import latex as L
from symtf.renderers.latex.numbers import Numbers
from symtf.renderers.latex.options import LatexOptions
from symtf.renderers.latex.steps import Context, ruled_rows, step_rows

ROOT = Path(__file__).resolve().parent.parent
SEED = ROOT / "derivations" / "i_love_ai.toml"


@pytest.fixture(scope="module")
def seed() -> tuple[spec.Derivation, Context]:
    d = spec.load(SEED)
    report = compare.check(d)
    assert report.trace is not None
    opts = LatexOptions()
    ctx = Context(report.trace, Numbers(report.trace.shown, opts), opts, d)
    return d, ctx


def _rules(ctx: Context, name: str) -> list[tuple[str, str, str]]:
    return step_rows(ctx, ctx.trace[name])


def test_matmul_result_line_names_the_product(seed: tuple[spec.Derivation, Context]) -> None:
    _, ctx = seed
    rows = _rules(ctx, "l0.h0.q")  # Q = X W_Q: the linear op, no bias
    assert rows[0] == ("Q", "= X W_Q", "")  # the formula carries no rule
    assert rows[1][2] == r"\text{the values of } X\text{ and }W_{Q}"
    assert rows[-1][1].startswith("= ") and rows[-1][2] == r"\text{matrix product}"
    scores = _rules(ctx, "l0.h0.scores")  # Q K^T: matmul
    assert scores[-1][2] == r"\text{matrix product}"


def test_scaled_scores_and_softmax_rules(seed: tuple[spec.Derivation, Context]) -> None:
    _, ctx = seed
    rows = _rules(ctx, "l0.h0.scaled")
    assert [r for _, _, r in rows] == [
        "",
        r"\text{the values of } Q K^\top\text{ and }\sqrt{d_k}",
        r"\text{each entry divided by } \sqrt{d_k}",
        r"\text{first 4 decimals}",  # the approximate line: truncated decimals
    ]
    pattern = _rules(ctx, "l0.h0.pattern")
    assert r"\text{softmax of each row}" in [r for _, _, r in pattern]


def test_rule_comes_from_the_op_not_the_formula(
    seed: tuple[spec.Derivation, Context], monkeypatch: pytest.MonkeyPatch
) -> None:
    # The same step, formula and labels, recorded as another op: the rule follows the op.
    _, ctx = seed
    step = ctx.trace["l0.h0.scores"]
    as_add = dataclasses.replace(step, op="add", formula=r"P = Q K^\top \text{ matrix product}")
    rows = step_rows(ctx, as_add)
    assert rows[-1][2] == r"\text{entrywise sum}"
    assert all("matrix product" not in r for _, _, r in rows)
    # the op's rule changed in the registry changes the line: nothing else is read
    import symtf.ops.core as core

    changed = dataclasses.replace(get_op("matmul"), rule=r"\text{a rule of our own}")
    monkeypatch.setitem(core._REGISTRY, "matmul", changed)
    assert step_rows(ctx, step)[-1][2] == r"\text{a rule of our own}"


USER_STEP = """
title = "a user step that looks like a product"
source = "constructed"

[tensors]
Q = "1 2"
K = "3 4"

[steps]
matmul = "Q + K"
"""


def test_user_step_is_worked_out_whatever_its_name(tmp_path: Path) -> None:
    f = tmp_path / "u.toml"
    f.write_text(USER_STEP, encoding="utf-8")
    d = spec.load(f)
    report = compare.check(d)
    assert report.trace is not None
    opts = LatexOptions()
    ctx = Context(report.trace, Numbers(report.trace.shown, opts), opts, d)
    rows = step_rows(ctx, report.trace["matmul"])
    assert rows[-1][2] == r"\text{worked out}"  # a user step's expression: no op's rule


def test_rules_off(seed: tuple[spec.Derivation, Context]) -> None:
    d, _ = seed
    report = compare.check(d)
    on = L.document(report, d)
    off = L.document(report, d, LatexOptions(rules=False))
    assert r"\triangleright" in on and r"\text{matrix product}" in on
    body = off[off.index(r"\begin{document}") :]
    assert r"\triangleright" not in body and r"\symtfruled" not in body


def test_layout_beside_or_on_its_own_row() -> None:
    lines = [("y", "= a", ""), ("", "= b", r"\text{r}")]
    assert ruled_rows(lines, True) == ["y &= a &&", r" &= b &&\qquad \triangleright\ \text{r}"]
    assert ruled_rows(lines, False) == ["y &= a", r"&\qquad \triangleright\ \text{r}", " &= b"]
    assert ruled_rows([("y", "= " + "x" * 90, r"\text{r}")]) == [
        r"&\qquad \triangleright\ \text{r}",
        "y &= " + "x" * 90,
    ]


def test_fallback_names_the_op() -> None:
    log1p = get_op("log1p")
    assert not log1p.rule and log1p.elementwise
    assert log1p.rule_of({}, {}) == r"\operatorname{log1p}\text{ of each entry}"


def test_every_op_of_the_bundled_derivations_has_its_own_rule() -> None:
    missing = set()
    for path in sorted((ROOT / "derivations").glob("*.toml")):
        report = compare.check(spec.load(path))
        assert report.trace is not None
        for name in report.trace:
            op = report.trace[name].op
            if op in REGISTRY and not REGISTRY[op].rule:
                missing.add(op)
    assert missing <= {"log"}, sorted(missing)  # log: the generic ``log of each entry``
