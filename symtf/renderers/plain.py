"""Mathematics as plain Unicode text, for a terminal.

Formulas are recorded in LaTeX (one record for LaTeX, HTML and teaching); a
terminal wants ``S = (Q Kᵀ)/√(d_k)``, not ``S = \\frac{Q K^\\top}{\\sqrt{d_k}}``.
Fractions get parentheses wherever precedence needs them, then pylatexenc's
``latex2text`` turns the rest (Greek, operators, ``\\text``) into Unicode.
Values are laid out as aligned rows of the same decimals the LaTeX notes show.
"""

from __future__ import annotations

import functools
import re
from typing import Any

_SUPERSCRIPTS = {"2": "²", "3": "³", "\\top": "ᵀ", "T": "ᵀ", "-1": "⁻¹", "n": "ⁿ"}
#: Subscripts written as Unicode when an entry's indices (``w_{1,2}``, ``w_{i,j}``) are.
_SUBSCRIPTS = {**dict(zip("0123456789", "₀₁₂₃₄₅₆₇₈₉", strict=True)), "i": "ᵢ", "j": "ⱼ", ",": ","}


def _group(tex: str, start: int) -> tuple[str, int]:
    """The balanced ``{...}`` group starting at ``start`` (content, index after it)."""
    if start >= len(tex) or tex[start] != "{":
        # A single token argument (\frac12 or \frac\alpha\beta).
        m = re.match(r"\\[A-Za-z]+|.", tex[start:])
        tok = m.group(0) if m else ""
        return tok, start + len(tok)
    depth = 0
    for i in range(start, len(tex)):
        if tex[i] == "{":
            depth += 1
        elif tex[i] == "}":
            depth -= 1
            if depth == 0:
                return tex[start + 1 : i], i + 1
    return tex[start + 1 :], len(tex)


def _paren(s: str) -> str:
    s = s.strip()
    if re.fullmatch(r"[^\s+\-/,]+", s) or re.fullmatch(r"\([^()]*\)[²³ᵀⁿ⁻¹]*", s):
        return s  # one token, or one group in parentheses already: (a + 1)²
    return f"({s})"


def _rewrite(tex: str) -> str:
    """``\\frac{a}{b}`` → ``(a)/(b)``, ``x^{ab}`` → ``x^(ab)``, ``^\\top`` → ``ᵀ``, recursively."""
    out: list[str] = []
    i = 0
    while i < len(tex):
        if tex.startswith(("\\frac", "\\tfrac", "\\dfrac"), i):
            j = tex.index("frac", i) + 4
            num, j = _group(tex, j)
            den, j = _group(tex, j)
            out.append(f"{_paren(_rewrite(num))}/{_paren(_rewrite(den))} ")
            i = j
            continue
        if tex[i] == "^":
            arg, j = _group(tex, i + 1)
            key = arg.strip()
            if key in _SUPERSCRIPTS:
                out.append(_SUPERSCRIPTS[key])
            else:
                inner = _rewrite(arg).strip()
                out.append("^" + (inner if len(inner) == 1 else f"({inner})"))
            i = j
            continue
        if tex.startswith("_{", i):
            arg, j = _group(tex, i + 1)
            if "," in arg and all(c in _SUBSCRIPTS for c in arg.replace(" ", "")):
                # w_{1,2}: an entry's two indices, which pylatexenc would run together
                out.append("".join(_SUBSCRIPTS[c] for c in arg.replace(" ", "")))
                i = j
                continue
        if tex.startswith("\\sqrt", i) and not tex[i + 5 : i + 6].isalpha():
            arg, j = _group(tex, i + 5)
            inner = _rewrite(arg)
            out.append(f"√{inner}" if re.fullmatch(r"[A-Za-z0-9.]+", inner) else f"√({inner})")
            i = j
            continue
        out.append(tex[i])
        i += 1
    return "".join(out)


@functools.cache
def _converter() -> Any:
    from pylatexenc.latex2text import LatexNodes2Text

    return LatexNodes2Text(math_mode="text", strict_latex_spaces=False)


def to_text(tex: str) -> str:
    r"""A LaTeX formula as Unicode text.

    Example:
        >>> to_text(r"S = \frac{Q K^\top}{\sqrt{d_k}}")
        'S = (Q Kᵀ)/√(d_k)'
    """
    if not tex:
        return ""
    pre = _rewrite(tex.replace(r"\arg\max", r"\operatorname{argmax}"))
    pre = re.sub(r"\\operatorname\{([^{}]*)\}", r"\1", pre)
    pre = pre.replace(r"\left", "").replace(r"\right", "")
    pre = re.sub(r"\\(?:,|;|!|quad|qquad)", " ", pre)
    try:
        text = _converter().latex_to_text(pre)
    except Exception:  # pylatexenc is lenient; never let a formula stop an explanation
        text = pre
    text = text.replace("−", "-")
    text = re.sub(r"[ \t]{2,}", " ", text).strip()
    text = re.sub(r"\(\s+", "(", re.sub(r"\s+\)", ")", text))  # (a/10 + 11/10 ) → (… 11/10)
    return re.sub(r"(^|[(=,] ?)- (?=[\w(√])", r"\1-", text)  # a leading minus: -(9 √2 …)


def matrix_cells(value: Any) -> list[list[Any]] | None:
    """A matrix value's entries, row by row (SymPy, or anything with ``tolist``); None for a scalar."""
    import sympy

    if isinstance(value, sympy.MatrixBase):
        return [[value[i, j] for j in range(value.cols)] for i in range(value.rows)]
    tolist = getattr(value, "tolist", None)
    if tolist is not None:
        rows: list[list[Any]] = tolist()
        if rows and isinstance(rows[0], list):
            return rows
    return None


def value_text(value: Any, numbers: Any, *, max_rows: int = 8, max_cols: int = 8) -> list[str]:
    """A matrix or scalar as aligned text rows (exact when short, else certified decimals ``…``).

    Args:
        value: A trace value (SymPy matrix, ball matrix, scalar).
        numbers: A :class:`symtf.renderers.latex.numbers.Numbers` (it decides no verdict: it only
            prints the certified decimals or short exact forms of each entry).
        max_rows: Rows shown before the middle is elided.
        max_cols: Columns shown before the middle is elided.
    """
    cells = matrix_cells(value)
    if cells is None:
        return [_entry_text(numbers.entry(value), exact=True)]
    n, m = len(cells), len(cells[0]) if cells else 0
    ri = list(range(n)) if n <= max_rows else [*range(max_rows - 2), -1, n - 1]
    ci = list(range(m)) if m <= max_cols else [*range(max_cols - 2), -1, m - 1]
    entries = {(i, j): numbers.entry(cells[i][j]) for i in ri for j in ci if i >= 0 and j >= 0}
    # One form for the whole matrix: exact only when every shown entry has a short exact form.
    exact = all(e.best()[1] and len(e.best()[0]) <= 24 for e in entries.values())
    grid = [
        [
            ("⋯" if j < 0 else "⋮") if i < 0 or j < 0 else _entry_text(entries[i, j], exact=exact)
            for j in ci
        ]
        for i in ri
    ]
    widths = [max(len(row[k]) for row in grid) for k in range(len(ci))]
    return [
        "[" + "  ".join(x.rjust(w) for x, w in zip(row, widths, strict=True)) + "]" for row in grid
    ]


def _entry_text(entry: Any, *, exact: bool) -> str:
    tex, is_exact = entry.best()
    if not exact or not is_exact or len(tex) > 24:
        tex = entry.approx
    text = to_text(tex.replace(r"{\scriptstyle\ldots}", "…").replace(r"{\pm}", "±"))
    return text.replace("−", "-").replace("-∞", "-inf").replace(" ", "")
