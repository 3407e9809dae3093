"""``symtf steps FILE``: every step of a derivation's computation, with the claims on it.

A claim names the step its numbers belong to (``step = "l0.h0.pattern"``);
this lists the names there are to choose from, in the order they are
computed, with each step's shape, what it is, what it is computed from, and
the labels of the article's claims that already print it.
"""

from __future__ import annotations

import argparse
import re
from dataclasses import dataclass
from typing import Any

from symtf import files
from symtf.commands import SOURCE_HELP, add_allow_path
from symtf.visible import json_text

_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]*(?:\.[A-Za-z0-9_]+)*")


@dataclass(frozen=True)
class StepInfo:
    """One step as listed.

    Attributes:
        name: The step's name (what a claim's ``step`` says).
        shape: ``(rows, cols)``, or ``None`` for a step that holds token ids.
        title: A few words (``attention weights, head 1``).
        formula: The formula it applies, in LaTeX.
        inputs: The steps it is computed from.
        claims: Labels of the claims that print (part of) this step.
        displayed: Labels of displayed-arithmetic claims whose expression or
            ``stands_for`` refers to it.
    """

    name: str
    shape: tuple[int, ...] | None
    title: str
    formula: str
    inputs: tuple[str, ...]
    claims: tuple[str, ...]
    displayed: tuple[str, ...] = ()


def steps(derivation: Any) -> list[StepInfo]:
    """The steps of a derivation's forward pass, in order, with the claims on each.

    The forward pass runs once (certified balls, or exact values when a ball
    cannot decide a branch); no claim is checked.
    """
    from symtf.checking.evaluation import Evaluator

    ev = Evaluator(derivation)
    trace = ev.ball_trace(128) or ev.exact_trace()
    on: dict[str, list[str]] = {name: [] for name in trace}
    used: dict[str, list[str]] = {name: [] for name in trace}
    for c in derivation.claims:
        if c.step is not None and c.step in on:
            on[c.step].append(c.label)
        refs: list[str] = []
        if c.expression is not None:
            refs += [m.group(0) for m in _NAME.finditer(c.expression)]
        refs += [m.group(0) for v in c.stands_for.values() for m in _NAME.finditer(v)]
        for n in dict.fromkeys(refs):
            if n in used:
                used[n].append(c.label)
    out = []
    for name in trace:
        st = trace[name]
        out.append(
            StepInfo(
                name,
                trace.shape(name),
                st.title,
                st.formula,
                tuple(st.inputs),
                tuple(on[name]),
                tuple(used[name]),
            )
        )
    return out


def render_text(path: str, title: str, infos: list[StepInfo]) -> str:
    """The steps as an aligned table for people."""
    from symtf.visible import line

    width = max((len(i.name) for i in infos), default=4) + 2
    lines = [f"{line(path)} — {line(title)}: {len(infos)} steps"]
    lines.append(f"  {'step':<{width}}{'shape':<10}{'what':<34}claims")
    for i in infos:
        shape = "ids" if i.shape is None else f"{i.shape[0]}x{i.shape[1]}"
        claims = ", ".join(line(c) for c in i.claims)
        if i.displayed:
            more = f"{len(i.displayed)} displayed line{'s' if len(i.displayed) > 1 else ''}"
            claims = f"{claims} (+ {more})" if claims else f"({more})"
        lines.append(f"  {line(i.name):<{width}}{shape:<10}{line(i.title):<34}{claims}".rstrip())
    return "\n".join(lines) + "\n"


def render_json(path: str, title: str, infos: list[StepInfo]) -> str:
    """The steps as JSON (``{"path", "title", "steps": [...]}``)."""
    doc = {
        "path": path,
        "title": title,
        "steps": [
            {
                "name": i.name,
                "shape": list(i.shape) if i.shape is not None else None,
                "title": i.title,
                "formula": i.formula,
                "inputs": list(i.inputs),
                "claims": list(i.claims),
                "displayed": list(i.displayed),
            }
            for i in infos
        ],
    }
    return json_text(doc, indent=2) + "\n"


def cmd_steps(args: argparse.Namespace) -> int:
    """``symtf steps FILE``: list every step."""
    from symtf.cli import EXIT_OK, time_budget
    from symtf.commands import source
    from symtf.limits import guard

    with time_budget(args.timeout, args.file), guard(args.file):
        read = source.read(args.file, check=False)  # a file, a bundled name or an article
        source.warn_left_out(read)
        d = read.derivation
        infos = steps(d)
    render = render_json if args.format == "json" else render_text
    files.write_stdout(render(d.path, d.title, infos))
    return EXIT_OK


def configure(subparsers: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """Add the ``steps`` sub-command."""
    from symtf.limits import timeout_seconds

    p = subparsers.add_parser(
        "steps",
        help="list every step of a derivation (name, shape, what it is, claims on it)",
        description=(
            "List every step a derivation's model computes, in order: the name a claim's "
            "`step` can use, its shape, what it is, and the labels of the claims on it."
        ),
    )
    p.add_argument("file", metavar="FILE", help=SOURCE_HELP)
    p.add_argument(
        "--format", choices=("text", "json"), default="text", help="output format (default: text)"
    )
    p.add_argument("--timeout", type=timeout_seconds, default=60.0, metavar="SECONDS")
    add_allow_path(p)
    p.set_defaults(func=cmd_steps)
