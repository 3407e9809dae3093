"""Text and LaTeX renderings of a verified derivation (they only read the result)."""

from __future__ import annotations

from symtf.derive.core import Check, Result, StepResult

_TICK, _CROSS = "✓", "✗"


def _sizes(sizes: tuple[int | None, ...]) -> str:
    known = [str(n) for n in sizes if n is not None]
    return f"n = {', '.join(known)}" if known else ""


def _mark(c: Check) -> str:
    return _TICK if c.ok else _CROSS


def text(result: Result) -> str:
    """The derivation for the terminal: each step, why it holds, and how it was verified."""
    head = f"{result.name}: {result.title}"
    size = _sizes(result.sizes)
    lines = [head + (f"  ({size})" if size else ""), ""]
    for i, s in enumerate(result.steps, 1):
        lines.append(f"{i:2d}. {s.plain}")
        lines.append(f"    step {s.key}: {s.justification}")
        where = _sizes(s.sizes)
        suffix = f"  [{where}]" if where else ""
        for label, c in (("symbolic", s.symbolic), ("numeric ", s.numeric)):
            lines.append(f"    {_mark(c)} {label} {c.method}{suffix}")
            if not c.ok:
                lines.append(f"      {c.detail}")
        lines.extend(f"      {note}" for note in s.notes)
        lines.append("")
    if result.at is not None:
        lines.extend(_at_text(result.at))
    failed = result.failures
    if result.ok:
        lines.append(f"All {len(result.steps)} steps verified both ways.")
    else:
        names = ", ".join(f"{s.key} ({_what(s)})" for s in failed)
        at_bad = result.at is not None and not result.at.ok
        if failed:
            lines.append(
                f"FAILED: {len(failed)} of {len(result.steps)} steps not verified: {names}"
            )
        if at_bad:
            lines.append("FAILED: a property did not hold at the worked example")
    return "\n".join(lines) + "\n"


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
    """An ``align`` environment: per step a line of justification, then the statement."""
    lines = []
    for i, s in enumerate(result.steps, 1):
        where = _sizes(s.sizes)
        how = f" ({latex_text(where)})" if where else ""
        lines.append(
            rf"\intertext{{\small {i}.~{latex_text(s.justification)}{how}"
            rf"\hfill symbolic ${_m(s.symbolic)}$, numeric ${_m(s.numeric)}$}}"
        )
        last = i == len(result.steps) and not s.notes
        end = "" if last else r" \\"
        lines.append(align_point(s.statement) + rf" \tag{{{i}}}\label{{{_label(result, s)}}}{end}")
        lines.extend(rf"\intertext{{\footnotesize {latex_text(n)}}}" for n in s.notes)
    if result.steps and result.steps[-1].notes:
        lines.append(r"&\notag")
    return "\\begin{align}\n" + "\n".join(lines) + "\n\\end{align}\n"


def _m(c: Check) -> str:
    return r"\checkmark" if c.ok else r"\times"


def _label(result: Result, s: StepResult) -> str:
    return f"derive:{result.name}:{s.key}".replace("_", "-")


def at_latex(at: object) -> str:
    """The worked evaluation as an ``align*`` of certified decimal matrices."""
    lines = []
    for q in at.quantities:  # type: ignore[attr-defined]
        body = r" \\ ".join(" & ".join(_num(x) for x in row) for row in q.decimals)
        lines.append(rf"&\text{{{latex_text(q.label)}}} = \begin{{bmatrix}} {body} \end{{bmatrix}}")
    head = rf"\intertext{{\small At {latex_text(at.ref)}: {latex_text(at.description)}}}"  # type: ignore[attr-defined]
    return "\\begin{align*}\n" + head + "\n" + " \\\\\n".join(lines) + "\n\\end{align*}\n"


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
