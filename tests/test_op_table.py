"""The README's op tables are the registry's, and its "Adding an op" recipe works as written."""

from __future__ import annotations

import re
from pathlib import Path

import numpy as np
import pytest
import sympy

from symtf import ops
from symtf.ops import core
from symtf.ops.table import markdown

ROOT = Path(__file__).resolve().parent.parent
README = (ROOT / "README.md").read_text(encoding="utf-8")


def _between(tag: str) -> str:
    m = re.search(rf"<!-- ops:{tag} -->\n(.*?)\n<!-- /ops:{tag} -->", README, re.S)
    assert m, f"README has no <!-- ops:{tag} --> table"
    return m.group(1)


@pytest.mark.parametrize(("tag", "steps"), [("steps", True), ("templates", False)])
def test_readme_op_tables_are_written_from_the_registry(tag: str, steps: bool) -> None:
    assert _between(tag) == markdown(steps), (
        "the README's op table differs from the registry: paste `python -m symtf.ops.table`"
    )


def test_every_op_is_in_one_readme_table() -> None:
    shown = _between("steps") + _between("templates")
    for op in ops.REGISTRY.values():
        first = op.spelling.split(";")[0].strip() if op.spelling else f"{op.name}("
        assert first in shown, op.name


def _recipe() -> tuple[str, str]:
    """The two code blocks of the README's "Adding an op": the definition, the reference."""
    section = README[README.index("### Adding an op") :]
    blocks = re.findall(r"```python\n(.*?)```", section, re.S)
    return blocks[0], blocks[1]


def test_the_adding_an_op_recipe_registers_an_op_steps_can_call(monkeypatch, tmp_path) -> None:
    from symtf.ops.array import apply
    from symtf.ops.core import Param, define, same_shape

    definition, reference = _recipe()
    monkeypatch.setattr(core, "_REGISTRY", dict(core._REGISTRY))  # undone after the test
    monkeypatch.setattr(core, "REGISTRY", core.MappingProxyType(core._REGISTRY))
    scope = {"define": define, "Param": Param, "same_shape": same_shape, "apply": apply}
    exec(compile(definition, "README.md", "exec"), scope)  # the project's own README
    op = core.REGISTRY["softsign"]
    assert op.public and "softsign" in core.public_signatures()

    from symtf.backends import BallBackend, ExactBackend

    xp = ExactBackend()
    out = op(xp, ops.tensor(xp, [-3, 0, 1]))
    assert out.data == (sympy.Rational(-3, 4), 0, sympy.Rational(1, 2))  # by hand
    with BallBackend(128) as bx:
        b = op(bx, ops.tensor(bx, [-3, 0, 1]))
        assert b.data[0].contains(-0.75) and b.data[2].contains(0.5)

    import symtf

    path = tmp_path / "softsign.toml"
    path.write_text(
        'title = "softsign"\n[tensors]\nx = ["-3", "1"]\n[steps]\ny = "softsign(x)"\n'
        '[[claims]]\nlabel = "y"\nstep = "y"\nprinted = "-0.75 0.5"\n'
    )
    report = symtf.check(symtf.load(path))
    assert [c.verdict for d in report.derivations for c in d.checks] == ["exact", "exact"]

    # the reference line of the recipe is a valid entry of tests/op_references.py
    import op_references

    key, _, expr = reference.split("#")[0].strip().rstrip(",").partition(":")
    entry = eval(expr, {"_unary": op_references._unary, "np": np})  # the project's own README
    assert key.strip().strip('"') == "softsign" and isinstance(entry, op_references.Reference)
