"""One step as worked lines, the way a handcalcs sheet lays it out: the general formula,
the same formula with its inputs' numbers substituted, the exact result, and the rule
that was applied (read from the op the trace recorded), aligned in a display.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, cast

import sympy

from symtf.ops import Substitution
from symtf.ops import get as get_op
from symtf.renderers.latex.matrices import (
    Rendered,
    as_printed,
    bmatrix,
    matrix_blocks,
    render_value,
    visible_width,
)
from symtf.renderers.latex.names import label_math, tt
from symtf.renderers.latex.numbers import BRK, MAX_LINE, Numbers
from symtf.renderers.latex.options import LatexOptions
from symtf.renderers.tex import math_text

if TYPE_CHECKING:
    from symtf.spec import Derivation
    from symtf.trace import Step, Trace


@dataclass
class Context:
    trace: Trace
    nums: Numbers
    opts: LatexOptions
    derivation: Derivation | None
    rendered: dict[str, Rendered] = field(default_factory=dict)
    #: Step name → what the page calls it (the article's label); steps not in it keep their
    #: node name only when ``node_names`` is set, else their title.
    names: dict[str, str] = field(default_factory=dict)
    node_names: bool = True
    #: Write long entries that depend on a symbol by their place (see :func:`render_value`).
    name_long: bool = False

    def ref_names(self) -> dict[str, str]:
        """What the page calls each step in displayed arithmetic (article name, else title)."""
        if self.node_names:
            return {}
        return {n: self.names.get(n) or self.trace[n].title or n for n in self.trace}

    def step_name(self, step: Step) -> str:
        """A step as math-mode LaTeX for a formula's left side: the article's name for it."""
        if step.name in self.names:
            return label_math(self.names[step.name])
        if self.node_names or not step.title:
            return tt(step.name)
        return math_text(step.title)

    def value(self, name: str) -> Rendered | None:
        if name not in self.trace:
            return None
        if name not in self.rendered:
            v = self.trace.value(name)
            if v is None or isinstance(v, tuple):
                return None
            self.rendered[name] = as_printed(self.trace[name], v, self.opts) or render_value(
                v, self.nums, self.opts, name if self.name_long else None
            )
        return self.rendered[name]

    def operand(self, name: str) -> tuple[str, bool] | None:
        """An input step as it appears in a substituted formula (exact form if possible)."""
        r = self.value(name)
        if r is None:
            return None
        if r.exact is not None:
            return r.exact, True
        return r.approx, r.approx_is_exact

    def weight(self, m: sympy.MatrixBase | None, symbol: str) -> tuple[str, bool]:
        """A weight matrix as substituted (``I_6``, ``\\mathbf{0}``, numbers), or its symbol."""
        if m is None:
            return symbol, True
        if m.rows == m.cols and m == sympy.eye(m.rows):
            return f"I_{{{m.rows}}}", True
        if all(x == 0 for x in m):
            return r"\mathbf{0}", True
        r = render_value(m, self.nums, self.opts)
        return (r.exact, True) if r.exact is not None else (r.approx, r.approx_is_exact)


def _substitution(ctx: Context, step: Step, named: bool = False) -> tuple[str, bool] | None:
    """The step's formula with the numbers of its inputs written in, and whether it is exact.

    It is the worked substitution of the op the trace recorded for the step
    (:mod:`symtf.ops`), written with the inputs' values and the op's parameters (the
    file's weights); an op without one, or a step whose inputs are not shown as
    numbers, shows its formula and result without a substituted line. With ``named``,
    an input too wide for the line is written by its name, as the step above shows it.
    """
    try:
        op = get_op(step.op)
    except KeyError:
        return None
    if op.substitute is None:
        return None
    ins = step.inputs
    if op.variadic is None and len(ins) != len(op.tensor_args):
        return None
    parts = [ctx.operand(i) for i in ins]
    if any(p is None for p in parts):
        return None
    if named and any(visible_width(p[0]) > BLOCK_WIDTH for p in parts if p):
        parts = [
            (ctx.step_name(ctx.trace[i]), True)
            if p is not None and visible_width(p[0]) > BLOCK_WIDTH
            else p
            for i, p in zip(ins, parts, strict=True)
        ]
    exact = [all(p[1] for p in parts if p is not None)]

    def value(name: str, transposed: bool) -> str:
        m = step.params.get(name)
        tex, ok = ctx.weight(m.T if transposed and m is not None else m, name)
        exact[0] = exact[0] and ok
        return tex

    sub = Substitution(
        args=[p[0] for p in parts if p is not None],
        params=step.params,
        labels=step.labels,
        shapes=[ctx.trace.shape(i) for i in ins],
        shape=ctx.trace.shape(step.name),
        value=value,
        matrix=lambda rows: bmatrix(rows, ctx.opts.max_rows, ctx.opts.max_cols),
        latex=sympy.latex,
    )
    tex = op.substitute(sub)
    return None if tex is None else (tex, exact[0])


def _split_formula(formula: str) -> tuple[str, str]:
    """``"Q = X W_Q"`` → ``("Q", "X W_Q")``; a formula without a top-level ``=`` has no left side."""
    depth = 0
    for i, ch in enumerate(formula):
        if ch == "{":
            depth += 1
        elif ch == "}":
            depth -= 1
        elif ch == "=" and depth == 0:
            return formula[:i].strip(), formula[i + 1 :].strip()
    return "", formula.strip()


#: A row-wise softmax of attention scores, entry by entry: each exponential over its
#: row's sum of exponentials.
_SOFTMAX_WRITTEN = r"= \left[\frac{e^{s_{ij}}}{\sum_k e^{s_{ik}}}\right]_{ij}"


def _softmax_of_scores(step: Step) -> bool:
    """Whether a step is an attention pattern: a softmax along the rows of scores ``S``."""
    if step.op != "softmax" or step.params.get("axis", -1) != -1:
        return False
    return "out" in step.labels and str(step.labels.get("x", "")).startswith("S")


#: The mark before a line's rule, in the notes as in the ``derive`` proofs (plain amsmath,
#: so MathJax and KaTeX read it too).
RULE_MARK = r"\triangleright\ "


def step_math(ctx: Context, step: Step) -> list[tuple[str, str]]:
    """The lines of a step's display as ``(left, right)`` pairs for ``align*``.

    The right sides start with their relation (``=`` or ``\\approx``).
    """
    return [(left, right) for left, right, _ in step_rows(ctx, step)]


def _op_of(step: Step) -> Any:
    try:
        return get_op(step.op)
    except KeyError:
        return None


def result_rule(step: Step) -> str:
    """What the step's op did, as math-mode LaTeX: the rule of the op the trace recorded.

    A user step's expression (no registry op) is said to be worked out.
    """
    op = _op_of(step)
    if op is None:
        return r"\text{worked out}"
    rule: str = op.rule_of(step.params, step.labels)
    return rule


def substitution_rule(step: Step) -> str:
    """What a substituted line did: the values of the op's operands, named by their symbols.

    The symbols are the node's labels for the op's tensor arguments and for the file's
    matrices it writes in (``Q``, ``K``; ``X``, ``W_Q``), typeset as a label's maths
    symbols are (:func:`label_tex`); when a tensor argument has none, the line says only
    that the values are substituted.
    """
    op = _op_of(step)
    generic = r"\text{values substituted}"
    if op is None or op.variadic is not None:
        return generic
    names = []
    for p in op.signature:
        label = step.labels.get(p.label or p.name)
        if p.is_tensor and label is None:
            return generic
        if label is not None and (p.is_tensor or step.params.get(p.name) is not None):
            names.append(_symbol_tex(label))  # a tensor, or a matrix of the file written in
    if not names:
        return generic
    if len(names) == 1:
        return r"\text{the values of } " + names[0]
    listed = r",\ ".join(names[:-1]) + r"\text{ and }" + names[-1]
    return r"\text{the values of } " + listed


def _symbol_tex(label: str) -> str:
    """A node's label as maths: a plain symbol (``W_Q``, ``K_1^T``) rebuilt from its parts,
    as :func:`label_tex` does; anything else is the template's own LaTeX (``\\overline{x^2}``),
    the same the op's formula line shows."""
    from symtf.renderers.labels import is_math, label_math

    return label_math(label) if "\\" not in label and is_math(label) else label


def step_rows(ctx: Context, step: Step, broken: bool = False) -> list[tuple[str, str, str]]:
    """The lines of a step's display as ``(left, right, rule)`` for ``align*``.

    The formula comes first and has no rule; the substituted line says whose values it
    writes in, the result line names the op's rule (:func:`result_rule`), and a line of
    decimals says how many it shows. With ``rules`` off every rule is empty.

    ``broken`` lays the lines out for a display that is too wide otherwise: a result
    matrix wider than the line in blocks of columns (:func:`matrix_blocks`), and an
    input too wide for the substituted line by its name.
    """
    rows = _step_rows(ctx, step, broken)
    if not ctx.opts.rules:
        return [(left, right, "") for left, right, _ in rows]
    return rows


def _step_rows(ctx: Context, step: Step, broken: bool) -> list[tuple[str, str, str]]:
    v = step.value
    lines: list[tuple[str, str, str]] = []
    lhs, rhs = _split_formula(step.formula)
    if isinstance(v, tuple) or v is None:  # next_token: token ids
        words = _words(ctx, v)
        left = lhs or rhs or ctx.step_name(step)
        if lhs and rhs:
            lines.append((left, "= " + rhs, ""))
        elif rhs:
            left = rhs
        lines.append(("" if lines else left, "= " + words, result_rule(step)))
        return lines
    first_left = lhs or rhs or ctx.step_name(step)
    if lhs:
        lines.append((first_left, "= " + rhs, ""))
        if _softmax_of_scores(step):
            # the softmax written out, entry by entry, as the worked key writes it
            lines.append(("", _SOFTMAX_WRITTEN, ""))
    sub = _substitution(ctx, step, named=broken)
    r = ctx.value(step.name)
    if r is None:
        return lines
    if sub is not None:
        rel = "= " if sub[1] else r"\approx "
        pieces = sub[0].split(BRK)
        said = substitution_rule(step)
        if (not broken and visible_width("".join(pieces)) <= MAX_LINE - 8) or len(pieces) == 1:
            lines.append(("", rel + " ".join(pieces), said))
        else:
            lines.append(("", rel + pieces[0], said))
            lines.extend(("", r"\phantom{=}\quad " + p, "") for p in pieces[1:])
    rule = result_rule(step)
    if r.exact is not None and (r.exact != r.approx or r.approx_is_exact):
        lines.extend(_value_lines(ctx, "= ", r.exact, r.exact_cells if broken else None, rule))
        rule = rf"\text{{first {ctx.opts.decimals} decimals}}"
    if not r.approx_is_exact:
        cells = r.approx_cells if broken else None
        lines.extend(_value_lines(ctx, r"\approx ", r.approx, cells, rule))
    if not lhs:
        # The formula has no left side: it is the left side of the first line (or, laid
        # out for a narrow page, a line of its own above the others)
        if lines and broken:
            lines.insert(0, ("", first_left, ""))
        elif lines:
            lines[0] = (first_left, *lines[0][1:])
        else:
            lines.append((first_left, "", ""))
    if step.name == "tokens" and ctx.derivation is not None and ctx.derivation.model.vocab:
        vocab = ctx.derivation.model.vocab
        toks = ", ".join(math_text(vocab[i]) for i in ctx.derivation.tokens if i < len(vocab))
        lines.insert(0, (r"\text{ids of}", r"\left(" + toks + r"\right)", ""))
    return lines


#: Widest block of columns of a result matrix, in visible characters (the relation and
#: the column note fit beside it).
BLOCK_WIDTH = MAX_LINE - 12


def _value_lines(
    ctx: Context, rel: str, tex: str, cells: list[list[str]] | None, rule: str
) -> list[tuple[str, str, str]]:
    """A result line, or, for a matrix wider than the line, one line per block of columns.

    Each block is labelled under it with its columns (``columns 1 to 3``); the rule stands
    with the first.
    """
    if cells is None or visible_width(rel + tex) <= BLOCK_WIDTH or len(cells[0]) < 2:
        return [("", rel + tex, rule)]
    blocks = matrix_blocks(cells, ctx.opts.max_rows, ctx.opts.max_cols, BLOCK_WIDTH)
    if len(blocks) < 2:
        return [("", rel + tex, rule)]
    out = []
    for k, b in enumerate(blocks):
        cols = f"column {b.first}" if b.first == b.last else f"columns {b.first} to {b.last}"
        shown = rf"\underset{{\text{{{cols}}}}}{{{b.tex}}}"
        out.append(("", (rel if k == 0 else r"\phantom{=}\ ") + shown, rule if k == 0 else ""))
    return out


def _words(ctx: Context, v: Any) -> str:
    if v is None:
        return r"\text{(undecided: depends on symbols)}"
    vocab = ctx.derivation.model.vocab if ctx.derivation is not None else ()
    parts = []
    for i in v:
        parts.append(
            f"{i}"
            + (r"\;(\text{``}" + math_text(vocab[i]) + r"\text{''})" if i < len(vocab) else "")
        )
    return ", ".join(parts)


#: Visible characters of a display's widest line and its widest rule together (with the
#: gap), past which the rules go on rows of their own, as in the ``derive`` proofs.
RULES_BESIDE = MAX_LINE


def ruled_rows(lines: Sequence[tuple[str, str, str]], side: bool | None = None) -> list[str]:
    """Display lines with their rules as ``aligned`` rows, the ``derive`` proofs' layout.

    Side by side, each rule stands beside its line (``left &= right && ▷ rule``);
    otherwise each rule takes a row of its own just before its line, so no line is
    wider than it was without its rule. ``side=None`` decides by the lines' visible
    widths (:data:`RULES_BESIDE`).
    """
    ruled = [r for _, _, r in lines if r]
    if not ruled:
        return [f"{left} &{right}" for left, right, _ in lines]
    if side is None:
        widest = max(visible_width(left + right) for left, right, _ in lines)
        side = widest + max(visible_width(r) for r in ruled) + 6 <= RULES_BESIDE
    rows = []
    for left, right, rule in lines:
        if not rule:
            rows.append(f"{left} &{right}" + (" &&" if side else ""))
        elif side:
            rows.append(rf"{left} &{right} &&\qquad {RULE_MARK}{rule}")
        else:
            rows.append(rf"&\qquad {RULE_MARK}{rule}")
            rows.append(f"{left} &{right}")
    return rows


def align(
    lines: Sequence[tuple[str, str] | tuple[str, str, str]],
    broken: Sequence[tuple[str, str, str]] | None = None,
) -> str:
    """Display lines aligned at their relations, shrunk to the line width when wider.

    An ``aligned`` block in a box (rather than ``align*``) so that a display wider than
    the page never runs into the margin. Lines may carry a rule (``(left, right,
    rule)``, see :func:`ruled_rows`). TeX measures and takes the first layout that fits
    the line: the rules beside their lines, then the rules on rows of their own, then
    the ``broken`` lines (wide matrices in blocks of columns), which are shrunk only if
    they still do not fit.
    """
    ruled = [cast(tuple[str, str, str], (*x, "")[:3]) for x in lines]

    def display(rows: Sequence[tuple[str, str, str]], side: bool) -> str:
        body = " \\\\\n".join(ruled_rows(rows, side))
        return "{$\\displaystyle\\begin{aligned}\n" + body + "\n\\end{aligned}$}"

    ruled_any = any(x[2] for x in ruled)
    last = broken if broken is not None and list(broken) != ruled else None
    if not ruled_any and last is None:
        return "\\begin{center}\\symtffit" + display(ruled, False) + "\\end{center}\n"
    first = display(ruled, True)
    second = display(ruled, False) if ruled_any else first
    third = display(last, False) if last is not None else second
    return "\\begin{center}\\symtfpick" + first + second + third + "\\end{center}\n"
