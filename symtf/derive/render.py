"""Text and LaTeX renderings of a verified derivation (they only read the result)."""

from __future__ import annotations

from symtf.derive.core import Check, Result, StepResult
from symtf.derive.words import latex_math, latex_text, plain
from symtf.renderers.latex import math_text

_TICK, _CROSS = "✓", "✗"


def _sizes(sizes: tuple[int | None, ...]) -> str:
    known = [str(n) for n in sizes if n is not None]
    return f"n = {', '.join(known)}" if known else ""


def _mark(c: Check) -> str:
    return _TICK if c.ok else _CROSS


def status(result: Result) -> str:
    """``proved for all n``, or what is only checked, in a few words."""
    if not any(s.sized for s in result.steps):
        return "proved (no size involved)" if result.proved else "not proved"
    if result.proved:
        return "proved for all n"
    top = max((s.checked_up_to or 0) for s in result.steps)
    return f"checked for n ≤ {top}"


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
        lines.extend(_proof_text(s))
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


def _proof_text(s: StepResult) -> list[str]:
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
        why = sc.rule.name
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

_UNICODE = {
    "…": r"\ldots{}",
    "√": r"$\surd$",
    "÷": r"$\div$",
    "−": "-",
    "ε": r"$\varepsilon$",
    "·": r"$\cdot$",
    "∘": r"$\circ$",
    "≤": r"$\le$",
    "≥": r"$\ge$",
}


def latex_text(s: str) -> str:
    """Plain text made safe for LaTeX text mode (specials escaped, a few symbols mapped)."""
    from symtf.renderers.latex import escape

    out = escape(s)
    for k, v in _UNICODE.items():
        out = out.replace(k, v)
    return "".join(ch if ord(ch) < 128 else "?" for ch in out)


def align_point(statement: str) -> str:
    """The statement with ``&`` before its first top-level ``=`` (or at the start)."""
    depth = 0
    for i, ch in enumerate(statement):
        if ch == "{":
            depth += 1
        elif ch == "}":
            depth -= 1
        elif ch == "=" and depth == 0:
            return statement[:i] + "&" + statement[i:]
    return "&" + statement


def latex(result: Result) -> str:
    r"""An ``align`` environment: per step a line of justification, then the numbered statement.

    The fragment is portable: it uses only what amsmath, MathJax 3 and KaTeX all
    read (``\text``, ``\tag``, ``\notag``, ``\checkmark``), so it can be pasted into
    a LaTeX document or a web page alike. No ``\intertext`` (MathJax 3 and KaTeX
    lack it) and no ``\label`` (KaTeX lacks it, and labels clash between pastes).
    """
    rows: list[str] = []
    for i, s in enumerate(result.steps, 1):
        where = _sizes(s.sizes)
        how = f" ({where})" if where else ""
        rows.append(
            rf"&{math_text(f'{i}. {s.justification}{how}')}\quad "
            rf"\text{{symbolic }}{_m(s.symbolic)}\text{{, numeric }}{_m(s.numeric)} \notag"
        )
        rows.append(align_point(s.statement) + rf" \tag{{{i}}}")
        rows.extend(rf"&\quad {math_text(n)} \notag" for n in s.notes)
    return "\\begin{align}\n" + " \\\\\n".join(rows) + "\n\\end{align}\n"


def markdown(result: Result) -> str:
    """The derivation as Markdown with ``$$`` display maths (for notebooks and previews)."""
    size = _sizes(result.sizes)
    out = [f"**{result.name}**: {result.title}" + (f" ({size})" if size else ""), ""]
    for i, s in enumerate(result.steps, 1):
        marks = f"symbolic {_mark(s.symbolic)}, numeric {_mark(s.numeric)}"
        out.append(f"{i}. {s.justification} — {marks}")
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
            f'<li><p>{escape(s.justification)} <span class="{cls}">{marks}</span></p>'
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
    """A complete, compilable LaTeX document with the project preamble."""
    from symtf.renderers.latex import standalone

    body = latex(result)
    if result.at is not None:
        body += at_latex(result.at)
    return standalone(f"{result.name}: {result.title}", body)
