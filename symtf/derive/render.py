"""Text and LaTeX renderings of a verified derivation (they only read the result)."""

from __future__ import annotations

import re

from symtf.derive.core import Check, Result, StepResult
from symtf.derive.words import latex_math, latex_text, plain
from symtf.renderers.latex.steps import RULE_MARK
from symtf.renderers.tex import math_text

_TICK, _CROSS = "✓", "✗"


def _sizes(sizes: tuple[int | None, ...]) -> str:
    known = [str(n) for n in sizes if n is not None]
    return f"n = {', '.join(known)}" if known else ""


def _mark(c: Check) -> str:
    return _TICK if c.ok else _CROSS


def status(result: Result) -> str:
    """``proved for all n``, or up to which size the rest is only checked, in a few words."""
    sized = [s for s in result.steps if s.sized]
    if not sized:
        return "proved (no size involved)" if result.proved else "not proved"
    if result.proved:
        return "proved for all n"
    top = max(s.checked_up_to or 0 for s in result.steps)
    proved = sum(1 for s in result.steps if s.proved)
    return f"checked for n ≤ {top} ({proved} of {len(result.steps)} statements proved for all n)"


def _checked_range(s: StepResult) -> str:
    known = sorted(n for n in s.sizes if n is not None)
    if len(known) > 1 and known == list(range(known[0], known[-1] + 1)):
        return f"n = {known[0]}…{known[-1]}"
    return "n = " + ", ".join(map(str, known))


def text(result: Result) -> str:
    """The derivation for the terminal: each statement, its proof, and its checks."""
    head = f"{result.name}: {result.title}"
    lines = [head, f"  {status(result)}" + _size_note(result), ""]
    for i, s in enumerate(result.steps, 1):
        lines.append(f"{i:2d}. {s.plain}")
        lines.append(f"    {plain(s.justification)}")
        lines.extend(_proof_text(s, _numbers(result)))
        where = _sizes(s.sizes)
        suffix = f" at {where}" if where else ""
        for label, c in (("exact", s.symbolic), ("numeric", s.numeric)):
            lines.append(f"    {_mark(c)} {label}{suffix}: {c.method}")
            if not c.ok:
                lines.append(f"      {c.detail}")
        lines.extend(f"      {note}" for note in s.notes)
        lines.append("")
    if result.at is not None:
        lines.extend(_at_text(result.at))
    failed = result.failures
    if result.ok:
        proved = sum(1 for s in result.steps if s.proved)
        lines.append(
            f"All {len(result.steps)} statements verified; {proved} of them proved"
            + (" for every n." if any(s.sized for s in result.steps) else ".")
        )
    else:
        names = ", ".join(f"{s.key} ({_what(s)})" for s in failed)
        at_bad = result.at is not None and not result.at.ok
        if failed:
            lines.append(
                f"FAILED: {len(failed)} of {len(result.steps)} statements not verified: {names}"
            )
        if at_bad:
            lines.append("FAILED: a property did not hold at the worked example")
    return "\n".join(lines) + "\n"


def _size_note(result: Result) -> str:
    size = _sizes(result.sizes)
    if not size:
        return ""
    help_ = f" ({result.size_help})" if result.size_help else ""
    return f"; also checked exactly at {size}{help_}"


def _proof_text(s: StepResult, numbers: dict[str, int]) -> list[str]:
    from symtf.derive.printing import text as show

    if s.proof is None:
        if s.sized:
            return [f"    – checked for {_checked_range(s)}, not proved for every n"]
        return []
    r = s.proof
    head = "✓ proved for every n" if r.ok else "✗ proof for every n FAILED"
    where = plain(r.proof.where)
    out = [f"    {head}" + (f", {where}" if where else "") + ":"]
    rows = [("  " + show(r.proof.lhs), "")]
    for sc in r.steps:
        why = _rule_name(sc, numbers)
        if sc.step.note:
            why += f" ({plain(sc.step.note)})"
        elif sc.rule.formula is not None:
            why += f": {sc.rule.formula.plain}"
        rows.append((("= " if sc.check.ok else "≠ ") + show(sc.step.after), why))
        if not sc.check.ok:
            rows.append(("  ✗ " + sc.check.detail, ""))
    width = min(max(len(a) for a, _ in rows), 60)
    for a, why in rows:
        out.append(f"        {a.ljust(width)}   {why}".rstrip())
    if not r.closes.ok:
        out.append(f"        ✗ {r.closes.detail}")
    return out


def _what(s: StepResult) -> str:
    bad = [k for k, c in (("symbolic", s.symbolic), ("numeric", s.numeric)) if not c.ok]
    return " and ".join(bad)


def _at_text(at: object) -> list[str]:
    lines = [f"At {at.ref}: {at.description}"]  # type: ignore[attr-defined]
    for q in at.quantities:  # type: ignore[attr-defined]
        lines.append(f"  {q.label} (certified decimals):")
        width = max(len(x) for row in q.decimals for x in row)
        for row in q.decimals:
            lines.append("    [" + "  ".join(x.rjust(width) for x in row) + "]")
        for where, e in q.exact:
            lines.append(f"    exact{where} = {e}")
    for what, c in at.checks:  # type: ignore[attr-defined]
        lines.append(f"  {_mark(c)} {what}: {c.method}" + ("" if c.ok else f" ({c.detail})"))
    lines.append("")
    return lines


# ----------------------------------------------------------------------------- LaTeX

#: Visible characters of a proof line's expression before it is broken, and of
#: a rule with its formula before the formula goes on a line of its own.
EXPR_WIDTH = 66
RULE_WIDTH = 44
#: A left side wider than this starts the chain on a line of its own.
LHS_WIDTH = 26


def _visible(tex: str) -> int:
    from symtf.derive.printing import _vis

    return _vis(tex)


def latex_blocks(result: Result) -> list[str]:
    r"""Each statement as display blocks: the statement and its status, then its proof.

    A block is one ``align*`` environment, which amsmath, MathJax 3 and KaTeX all
    read, so each can be pasted into a document or between display delimiters
    on a web page. Proofs read like a textbook: the expression, ``=`` the next
    one, with the rule that justifies it beside it; long expressions are cut at
    a top-level ``+`` or ``−``. Words are escaped by construction
    (:func:`symtf.derive.words.latex_math`); no ``\intertext`` or ``\label``.
    """
    blocks = []
    for i, s in enumerate(result.steps, 1):
        rows = [rf"&\textbf{{{i}.}}\quad {s.statement}"]
        rows.append(rf"&\qquad {latex_math(s.justification)}")
        rows.append(rf"&\qquad {_status_math(s)}")
        rows.extend(rf"&\qquad {math_text(n)}" for n in s.notes)
        blocks.append(_align(rows))
        if s.proof is not None:
            where = s.proof.proof.where
            head = [rf"&\qquad {latex_math(where)}"] if where else []
            blocks.append(_align(head + proof_rows(s.proof, _numbers(result))))
    return blocks


def _numbers(result: Result) -> dict[str, int]:
    return {s.key: i for i, s in enumerate(result.steps, 1)}


def latex(result: Result) -> str:
    """The derivation as portable display blocks (see :func:`latex_blocks`)."""
    return "\n".join(latex_blocks(result))


def _align(rows: list[str]) -> str:
    return "\\begin{align*}\n" + " \\\\\n".join(rows) + "\n\\end{align*}\n"


def _status_math(s: StepResult) -> str:
    parts = []
    if s.proof is not None:
        parts.append(
            r"\text{proved for every } n\ \checkmark"
            if s.proof.ok
            else r"\text{proof for every } n \text{ failed}\ \times"
        )
    elif s.sized:
        parts.append(r"\text{checked for } " + _sizes_tex(s) + r"\text{, not proved for every } n")
    at = r"\text{ at } " + _sizes_tex(s) if s.sized else ""
    parts.append(r"\text{exact}" + at + r"\ " + _m(s.symbolic))
    parts.append(r"\text{numeric}\ " + _m(s.numeric))
    return r";\ ".join(parts)


def _sizes_tex(s: StepResult) -> str:
    known = sorted(n for n in s.sizes if n is not None)
    if len(known) > 2 and known == list(range(known[0], known[-1] + 1)):
        return rf"n = {known[0]}, \dots, {known[-1]}"
    return "n = " + ", ".join(map(str, known))


#: Visible characters of the left side, the widest line and the widest rule
#: together, past which rules go on rows of their own instead of beside the lines.
SIDE_BY_SIDE = 80


def _rule_name(sc: object, numbers: dict[str, int]) -> str:
    """The rule's name; a lemma says which statement it uses (``statement 1 above``)."""
    rule = sc.rule  # type: ignore[attr-defined]
    lemma = sc.step.lemma  # type: ignore[attr-defined]
    if rule.key == "lemma" and lemma in numbers:
        return f"by statement {numbers[lemma]} above"
    name: str = rule.name
    return name


def _rule_parts(sc: object, numbers: dict[str, int]) -> tuple[str, str]:
    """The rule's name (with a failure mark) and its formula or note, as math-mode LaTeX."""
    rule = sc.rule  # type: ignore[attr-defined]
    step = sc.step  # type: ignore[attr-defined]
    name = math_text(_rule_name(sc, numbers))
    if not sc.check.ok:  # type: ignore[attr-defined]
        name += r"\ \times\ " + math_text(sc.check.detail)  # type: ignore[attr-defined]
    if step.note:
        extra = r"\textstyle " + latex_math(step.note)
    elif rule.formula is not None:
        extra = r"\textstyle " + rule.formula.latex
    else:
        extra = ""
    return name, extra


def _rule_lines(sc: object, width: int, numbers: dict[str, int]) -> list[str]:
    name, extra = _rule_parts(sc, numbers)
    if not extra:
        return [name]
    if _visible(name + extra) <= width:
        return [rf"{name}\text{{: }}{extra}"]
    return [name, extra]


def proof_rows(r: object, numbers: dict[str, int] | None = None) -> list[str]:
    """The proof as ``align*`` rows: the expression, then each rule and the result it gives.

    When the lines and the rules fit side by side, each rule stands beside its
    result (``lhs &= e_1 && ▹ rule``); otherwise the rule takes a row of its
    own before the result, so no line is wider than the longest expression.
    """
    from symtf.derive.printing import tex_lines

    proof = r.proof  # type: ignore[attr-defined]
    steps = r.steps  # type: ignore[attr-defined]
    lhs = tex_lines(proof.lhs, EXPR_WIDTH)
    results = [tex_lines(sc.step.after, EXPR_WIDTH) for sc in steps]
    rules = [_rule_lines(sc, RULE_WIDTH, numbers or {}) for sc in steps]
    rels = ["=" if sc.check.ok else r"\neq" for sc in steps]
    short_lhs = len(lhs) == 1 and _visible(lhs[0]) <= LHS_WIDTH
    widest = max(_visible(line) for lines in results for line in lines)
    widest_rule = max(_visible(line) for lines in rules for line in lines)
    side = short_lhs and _visible(lhs[0]) + widest + widest_rule + 4 <= SIDE_BY_SIDE
    mark = RULE_MARK
    rows: list[str] = []
    if side:
        for k, (lines, rule, rel) in enumerate(zip(results, rules, rels, strict=True)):
            lead = lhs[0] if k == 0 else ""
            rows.append(rf"{lead} &{rel} {lines[0]} && {mark}{rule[0]}")
            extra = [rf"&&& \phantom{{{mark}}}{x}" for x in rule[1:]]
            for n, line in enumerate(lines[1:]):
                rows.append(rf"&\qquad {line}" + (extra.pop(0)[1:] if extra and n == 0 else ""))
            rows.extend(extra)
    else:
        if short_lhs:
            rows.append(rf"{lhs[0]} &")
        else:
            rows.append(rf"&\phantom{{=}} {lhs[0]}")
            rows.extend(rf"&\qquad {line}" for line in lhs[1:])
        for lines, rule, rel in zip(results, rules, rels, strict=True):
            rows.append(rf"&\qquad {mark}{rule[0]}")
            rows.extend(rf"&\qquad \phantom{{{mark}}}{x}" for x in rule[1:])
            rows.append(rf"&{rel} {lines[0]}")
            rows.extend(rf"&\qquad {line}" for line in lines[1:])
    if not r.closes.ok:  # type: ignore[attr-defined]
        rows.append(rf"&{math_text(r.closes.detail)}")  # type: ignore[attr-defined]
    return rows


def markdown(result: Result) -> str:
    """The derivation as Markdown with ``$$`` display maths (for notebooks and previews)."""
    size = _sizes(result.sizes)
    out = [f"**{result.name}**: {result.title}" + (f" ({size})" if size else ""), ""]
    for i, s in enumerate(result.steps, 1):
        marks = f"symbolic {_mark(s.symbolic)}, numeric {_mark(s.numeric)}"
        out.append(f"{i}. {plain(s.justification)} — {marks}")
        out.append("")
        out.append(f"   $${s.statement}$$")
        out.append("")
    out.append("All steps verified both ways." if result.ok else "**Not every step was verified.**")
    return "\n".join(out) + "\n"


def html(result: Result) -> str:
    """The derivation as an HTML fragment with native MathML (for notebooks)."""
    from html import escape

    from symtf.renderers.html import CSS, mathml

    size = _sizes(result.sizes)
    items = []
    for s in result.steps:
        marks = f"symbolic {_mark(s.symbolic)}, numeric {_mark(s.numeric)}"
        cls = "verdict-ok" if s.ok else "verdict-wrong"
        items.append(
            f'<li><p>{escape(plain(s.justification))} <span class="{cls}">{marks}</span></p>'
            f'<div class="scroll">{mathml(s.statement, display=True)}</div></li>'
        )
    state = (
        '<p class="verdict-ok">✓ All steps verified both ways.</p>'
        if result.ok
        else '<p class="verdict-wrong">✗ Not every step was verified.</p>'
    )
    head = f"<h3>{escape(result.name)}: {escape(result.title)}</h3>"
    head += f'<p class="muted">{escape(size)}</p>' if size else ""
    return f'<div class="symtf"><style>{CSS}</style>{head}<ol>{"".join(items)}</ol>{state}</div>'


def _m(c: Check) -> str:
    return r"\checkmark" if c.ok else r"\times"


def at_latex(at: object) -> str:
    """The worked evaluation as an ``align*`` of certified decimal matrices (portable, as :func:`latex`)."""
    lines = [rf"&{math_text(f'At {at.ref}: {at.description}')}"]  # type: ignore[attr-defined]
    for q in at.quantities:  # type: ignore[attr-defined]
        body = r" \\ ".join(" & ".join(_num(x) for x in row) for row in q.decimals)
        lines.append(rf"&{math_text(q.label)} = \begin{{bmatrix}} {body} \end{{bmatrix}}")
    return "\\begin{align*}\n" + " \\\\\n".join(lines) + "\n\\end{align*}\n"


def _num(x: str) -> str:
    if x.endswith("…"):
        return x[:-1] + r"\ldots"
    return x


def document(result: Result) -> str:
    """A complete, compilable LaTeX document: per statement the claim, its status and its proof.

    Words run as paragraphs (they wrap); mathematics is displayed, and each
    proof is an ``align*`` of checked steps.
    """
    from symtf.renderers.latex import standalone
    from symtf.renderers.tex import escape

    head = f"{status(result)}{_size_note(result)}."
    head = escape(head[:1].upper() + head[1:])
    parts = [re.sub(r"\bn\b", "$n$", head) + "\n"]
    for i, s in enumerate(result.steps, 1):
        parts.append(f"\\subsection*{{{i}.\\quad {escape(_key_title(s.key))}}}")
        parts.append(f"\\[ {s.statement} \\]")
        text = latex_text(s.justification)
        parts.append(text[:1].upper() + text[1:] + ". " + _status_text(s))
        parts.extend(escape(n) + "\\par" for n in s.notes)
        if s.proof is not None:
            where = latex_text(s.proof.proof.where)
            parts.append(f"\\par\\smallskip\\emph{{Proof}}{', ' + where if where else ''}:")
            parts.append(_align(proof_rows(s.proof, _numbers(result))).rstrip())
    body = "\n\n".join(parts) + "\n"
    if result.at is not None:
        body += at_latex(result.at)
    return standalone(f"{result.name}: {result.title}", body)


def _key_title(key: str) -> str:
    tag, _, rest = key.rpartition(":")
    words_ = rest.replace("-", " ")
    if len(words_) <= 3:
        return words_ + (f" ({tag})" if tag else "")
    if tag == "eps0":
        words_ += " (ε = 0)"
    elif tag:
        words_ += f" ({tag})"
    return words_[:1].upper() + words_[1:]


def _status_text(s: StepResult) -> str:
    marks = {True: "\\symtfok", False: "\\symtfbad"}
    parts = []
    if s.proof is not None:
        parts.append(
            f"Proved for every $n$ {marks[True]}"
            if s.proof.ok
            else f"Proof for every $n$ failed {marks[False]}"
        )
    elif s.sized:
        parts.append(f"Checked for ${_sizes_tex(s)}$, not proved for every $n$")
    where = _sizes(s.sizes)
    at = f" at ${where}$" if where else ""
    parts.append(f"exact{at} {marks[s.symbolic.ok]}")
    parts.append(f"numeric {marks[s.numeric.ok]}")
    return "; ".join(parts) + "."
