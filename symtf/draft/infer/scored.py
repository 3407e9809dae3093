"""Sequences a search decoder prints with their scores, read from the code that scores them.

A beam (or greedy) search over a table of probabilities, one row a step, keeps candidate
sequences with a running score, written the way most tutorials write it::

    sequences = [[list(), 1.0]]
    for row in data:
        ...
            for j in range(len(row)):
                candidate = [seq + [j], score * -log(row[j])]

and prints what it keeps, ``[[4, 0, 4, 0], 0.2306…]``. The code states the score: its
first value (``1.0``) and how each pick updates it (``score * -log(row[j])``), so a
printed sequence's score is that update applied along the sequence, picking in each row
of the table it was called with the entry the sequence names. Each printed score is
checked as that expression of the table's entries as written (computed in Python's
floats, as the code does). Nothing here runs the code: the function is read with ``ast``,
and only this form of it (one update of ``score`` by the picked entry) is read, with the
table a literal of the block that calls it, and the pairs printed after that block: in
the article's text, or in what the block printed (a notebook cell's outputs, the plain or
terminal fence right under a Markdown fence), one pair a line.
"""

from __future__ import annotations

import ast
import re
from dataclasses import dataclass
from typing import Any

from symtf.draft.article import Article, Printing
from symtf.place import Place

__all__ = ["PrintedScore", "Scored", "scored_sequences"]

#: A printed sequence and its score: ``[[4, 0, 4, 0], 0.025600863289563108]``.
_PRINTED = re.compile(
    r"^\s*\[\s*\[(?P<seq>\s*\d+(?:\s*,\s*\d+)*\s*)\]\s*,\s*(?P<score>[-+.\deE]+)\s*\]\s*$"
)

#: One pick of a printed sequence.
_INT = re.compile(r"\d+")

#: The longest sequence read (its score is one nested expression per pick).
MAX_PICKS = 64

#: Functions of the update, in the expression language.
_FUNCTIONS = {"log": "ln", "exp": "exp", "sqrt": "sqrt"}


@dataclass(frozen=True)
class Scored:
    """The expression a printed score is, and where the code says so."""

    expression: str
    note: str


@dataclass(frozen=True)
class PrintedScore:
    """A score printed in a block's own output (not one of the article's printings): the
    pair's line as printed, the score's place, and the expression it is."""

    score: str
    context: str
    line: int
    cell: int | None
    place: Place | None
    scored: Scored
    #: The sequence's picks as printed, with their places (empty when not known): what
    #: the code chose, which its score is computed from.
    picks: tuple[str, ...] = ()
    pick_places: tuple[Place, ...] = ()


@dataclass(frozen=True)
class _Rule:
    name: str  # the function
    data_arg: int  # which argument is the table
    start: str  # the first score, as written
    update: ast.expr  # the new score, of ``score`` and ``row[j]``
    score: str
    row: str
    j: str


def _rule(fn: ast.FunctionDef) -> _Rule | None:
    """The scoring of a search function of the form in the module docstring, or None."""
    start = None
    for node in ast.walk(fn):
        if (
            isinstance(node, ast.Assign)
            and isinstance(node.value, ast.List)
            and len(node.value.elts) == 1
            and isinstance(node.value.elts[0], ast.List)
            and len(node.value.elts[0].elts) == 2
        ):
            empty, first = node.value.elts[0].elts
            is_empty = (isinstance(empty, ast.List) and not empty.elts) or (
                isinstance(empty, ast.Call)
                and isinstance(empty.func, ast.Name)
                and empty.func.id == "list"
                and not empty.args
            )
            if (
                is_empty
                and isinstance(first, ast.Constant)
                and isinstance(first.value, float | int)
            ):
                start = repr(first.value)
    if start is None:
        return None
    params = [a.arg for a in fn.args.args]
    found = []
    for outer in ast.walk(fn):
        if not (
            isinstance(outer, ast.For)
            and isinstance(outer.target, ast.Name)
            and isinstance(outer.iter, ast.Name)
            and outer.iter.id in params
        ):
            continue
        row = outer.target.id
        for node in ast.walk(outer):
            if not (isinstance(node, ast.List) and len(node.elts) == 2):
                continue
            grown, update = node.elts
            if not (
                isinstance(grown, ast.BinOp)
                and isinstance(grown.op, ast.Add)
                and isinstance(grown.right, ast.List)
                and len(grown.right.elts) == 1
                and isinstance(grown.right.elts[0], ast.Name)
            ):
                continue
            j = grown.right.elts[0].id
            names = {n.id for n in ast.walk(update) if isinstance(n, ast.Name)}
            scores = names - {row, j, "log", "exp", "sqrt", "math", "np", "numpy"}
            if len(scores) == 1 and row in names:
                found.append(
                    _Rule(fn.name, params.index(outer.iter.id), start, update, scores.pop(), row, j)
                )
    return found[0] if len(found) == 1 else None


def _render(node: ast.expr, rule: _Rule, score: str, entry: str) -> str | None:
    """The update as an expression, with the running score and the picked entry put in."""
    if isinstance(node, ast.Name) and node.id == rule.score:
        return f"({score})"
    if (
        isinstance(node, ast.Subscript)
        and isinstance(node.value, ast.Name)
        and node.value.id == rule.row
        and isinstance(node.slice, ast.Name)
        and node.slice.id == rule.j
    ):
        return entry
    if isinstance(node, ast.Constant) and isinstance(node.value, float | int):
        return repr(node.value)
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.USub):
        inner = _render(node.operand, rule, score, entry)
        return None if inner is None else f"(-{inner})"
    if isinstance(node, ast.BinOp):
        ops = {ast.Mult: "*", ast.Add: "+", ast.Sub: "-", ast.Div: "/"}
        op = ops.get(type(node.op))
        a = _render(node.left, rule, score, entry)
        b = _render(node.right, rule, score, entry)
        return None if op is None or a is None or b is None else f"{a} {op} {b}"
    if isinstance(node, ast.Call) and len(node.args) == 1 and not node.keywords:
        f = node.func
        name = f.attr if isinstance(f, ast.Attribute) else f.id if isinstance(f, ast.Name) else ""
        inner = _render(node.args[0], rule, score, entry)
        return None if name not in _FUNCTIONS or inner is None else f"{_FUNCTIONS[name]}({inner})"
    return None


def _table(tree: ast.Module, text: str, name: str) -> list[list[str]] | None:
    """The rows of a table literal assigned to ``name`` in the block, as written."""
    rows = None
    for node in tree.body:
        if (
            isinstance(node, ast.Assign)
            and len(node.targets) == 1
            and isinstance(node.targets[0], ast.Name)
            and node.targets[0].id == name
            and isinstance(node.value, ast.List)
        ):
            got = []
            for r in node.value.elts:
                if not isinstance(r, ast.List):
                    return None
                cells = [ast.get_source_segment(text, c) for c in r.elts]
                if not all(
                    isinstance(c, ast.Constant) and isinstance(c.value, float | int) for c in r.elts
                ):
                    return None
                got.append([c or "" for c in cells])
            rows = got
    return rows


def scored_sequences(
    article: Article, printings: list[Printing], outputs: list[PrintedScore] | None = None
) -> dict[int, Scored]:
    """For each printed score of a sequence a search function of the article's code printed
    (see the module docstring): the expression it is. The scores a block printed in its
    own output are appended to ``outputs`` when it is given."""
    out: dict[int, Scored] = {}
    blocks = sorted(
        article.code, key=lambda b: (b.cell if b.cell is not None else -1, b.first_line)
    )
    for k, block in enumerate(blocks):
        try:
            tree = ast.parse(block.text)
        except (SyntaxError, ValueError, RecursionError, MemoryError):
            continue
        rules = [x for fn in tree.body if isinstance(fn, ast.FunctionDef) and (x := _rule(fn))]
        if len(rules) != 1:
            continue
        rule = rules[0]
        calls = [
            n.value
            for n in tree.body
            if isinstance(n, ast.Assign)
            and isinstance(n.value, ast.Call)
            and isinstance(n.value.func, ast.Name)
            and n.value.func.id == rule.name
            and len(n.value.args) > rule.data_arg
            and isinstance(n.value.args[rule.data_arg], ast.Name)
        ]
        if len(calls) != 1:
            continue
        arg = calls[0].args[rule.data_arg]
        assert isinstance(arg, ast.Name)
        table = _table(tree, block.text, arg.id)
        if not table or len(table) > MAX_PICKS:
            continue
        end = block.first_line + block.text.count("\n")
        nxt = blocks[k + 1] if k + 1 < len(blocks) else None
        note = (
            f"the score {rule.name} keeps for the sequence it prints: from "
            f"{rule.start}, {ast.unparse(rule.update)} for the entry it picks in each row of "
            f"{arg.id}"
        )
        for p in printings:
            if p.kind != "number" or p.size != 1 or p.line <= end:
                continue
            if nxt is not None and p.line >= nxt.first_line and p.cell == nxt.cell:
                continue
            if block.cell is not None and p.cell != block.cell:
                continue
            m = _PRINTED.match(p.context)
            if m is None or m.group("score") != p.rows[0][0]:
                continue
            expression = _scored(rule, table, m)
            if expression is not None:
                out[p.key] = Scored(expression, note)
        if outputs is not None:
            outputs.extend(_printed_scores(block, rule, table, note))
    return out


def _scored(rule: _Rule, table: list[list[str]], m: re.Match[str]) -> str | None:
    """The expression of the score of the printed pair ``m`` (None: it picks outside the
    table, or the update cannot be written)."""
    picks = [int(x) for x in m.group("seq").split(",")]
    if len(picks) != len(table) or any(
        i >= len(cells) for i, cells in zip(picks, table, strict=True)
    ):
        return None
    expression: str | None = rule.start
    for i, cells in zip(picks, table, strict=True):
        assert expression is not None
        expression = _render(rule.update, rule, expression, cells[i])
        if expression is None:
            return None
    return expression


def _printed_scores(
    block: Any, rule: _Rule, table: list[list[str]], note: str
) -> list[PrintedScore]:
    """The pairs a block printed in its own output, one a line, with their expressions."""
    out: list[PrintedScore] = []
    for o in block.outputs:
        at = 0
        for n, line in enumerate(o.text.split("\n")):
            m = _PRINTED.match(line)
            if m is not None and n < len(o.lines):
                expression = _scored(rule, table, m)
                if expression is not None:
                    start = at + m.start("score")
                    place = o.source.place(start, at + m.end("score")) if o.source else None
                    ints = list(_INT.finditer(line, m.start("seq"), m.end("seq")))
                    out.append(
                        PrintedScore(
                            m.group("score"),
                            line.strip(),
                            o.lines[n],
                            block.cell,
                            place,
                            Scored(expression, note),
                            tuple(i.group() for i in ints),
                            tuple(o.source.place(at + i.start(), at + i.end()) for i in ints)
                            if o.source
                            else (),
                        )
                    )
            at += len(line) + 1
    return out
