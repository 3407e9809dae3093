"""The README's op tables, written from the registry so they cannot drift from it.

``python -m symtf.ops.table`` prints both tables; ``tests/test_op_table.py`` checks that
the README holds exactly these.
"""

from __future__ import annotations

from typing import Any

from symtf.ops.core import GRAPH_OPS, REGISTRY, Op, zero_vjp

#: Every backend an op may run in, as the tables name them: protocol name -> shown name.
BACKEND_NAMES = {
    "exact": "exact",
    "ball": "balls",
    "midrad": "midrad",
    "float": "float64",
    "format-ball": "float formats",
    "format-sim": "float formats (numpy)",
}


def backends_of(op: Op[Any]) -> str:
    """The backends that run ``op`` (those it is not declared unsupported in)."""
    if not op.unsupported:
        return "all"
    runs = [shown for name, shown in BACKEND_NAMES.items() if name not in op.unsupported]
    return ", ".join(runs) or "none"


def gradient_of(op: Op[Any]) -> str:
    """What reverse mode (``grad``, ``jacobian``) does at ``op``: its VJP, a zero one, or none."""
    if op.family == "autodiff":
        return "reverse mode"
    if op.vjp is None:
        return "none"
    return "zero (constant)" if op.vjp is zero_vjp else "VJP"


def _default(v: object) -> str:
    if v is None:
        return "none"
    if isinstance(v, bool):
        return "true" if v else "false"
    return str(v)


def call(op: Op[Any]) -> str:
    """How a step calls ``op`` (``softmax(x, axis=-1)``), or writes it (``a @ b``)."""
    if op.spelling:
        return ", ".join(f"`{s.strip()}`" for s in op.spelling.split(";"))
    parts = []
    for p in op.step_params if op.public else op.signature:
        if p.name == op.variadic:
            parts.append(f"{p.name}…")
        elif p.required:
            parts.append(p.name)
        else:
            parts.append(f"{p.name}={_default(p.default)}")
    text = f"`{op.name}({', '.join(parts)})`"
    if op.aliases:
        text += " (also " + ", ".join(f"`{a}`" for a in op.aliases) + ")"
    return text


def _cell(text: str) -> str:
    return text.replace("|", "\\|")


def markdown(steps: bool) -> str:
    """The table of the ops steps may use (``steps``), or of the templates' own ops."""
    rows = ["| op | formula | shapes | backends | gradient |", "|---|---|---|---|---|"]
    ops = [*REGISTRY.values(), *GRAPH_OPS.values()]
    for op in sorted(ops, key=lambda o: (o.family, o.name)):
        in_steps = op.public or bool(op.spelling)
        if in_steps != steps:
            continue
        rows.append(
            f"| {call(op)} | {_cell(op.text)} | {_cell(op.shapes)} | {backends_of(op)} "
            f"| {gradient_of(op)} |"
        )
    return "\n".join(rows)


if __name__ == "__main__":  # pragma: no cover - prints the tables for the README
    print(markdown(True))
    print()
    print(markdown(False))
