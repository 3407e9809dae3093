"""Index notation as people write it: ``x_{ij}``, ``δ_{ij}``, ``∂s_i/∂x_j``, in LaTeX and Unicode."""

from __future__ import annotations

import re
from typing import Any

import sympy
from sympy.printing.latex import LatexPrinter
from sympy.printing.str import StrPrinter

_GREEK = {
    "alpha": "α",
    "beta": "β",
    "gamma": "γ",
    "delta": "δ",
    "varepsilon": "ε",
    "epsilon": "ε",
    "theta": "θ",
    "mu": "μ",
    "sigma": "σ",
    "omega": "ω",
    "varphi": "φ",
    "phi": "φ",
    "pi": "π",
    "tau": "τ",
}


def _index_glue(indices: tuple[sympy.Basic, ...]) -> str:
    simple = all(isinstance(i, sympy.Symbol) and len(i.name) == 1 for i in indices)
    return "" if simple else ","


def _positive_first(terms: list[sympy.Basic]) -> list[sympy.Basic]:
    """``x_i − μ`` rather than ``−μ + x_i``: terms with a minus sign go last, in order."""
    return sorted(terms, key=lambda t: t.could_extract_minus_sign())


class _IndexOrder:
    """Positive terms first, and entries printed by the printer, not by ``Indexed`` itself."""

    def _as_ordered_terms(self, expr: Any, order: Any = None) -> list[sympy.Basic]:
        return _positive_first(super()._as_ordered_terms(expr, order))  # type: ignore[misc]

    def _print(self, expr: Any, **kwargs: Any) -> str:
        # Indexed prints itself (``_latex``, ``_sympystr``) before any printer method is asked.
        if isinstance(expr, sympy.Indexed):
            return str(self._print_Indexed(expr))  # type: ignore[attr-defined]
        return str(super()._print(expr, **kwargs))  # type: ignore[misc]


class IndexLatexPrinter(_IndexOrder, LatexPrinter):
    """SymPy's LaTeX printer with index notation written the textbook way."""

    def _print_Indexed(self, expr: sympy.Indexed) -> str:
        base = self._print(sympy.Symbol(expr.base.name))
        glue = _index_glue(expr.indices)
        return f"{base}_{{{glue.join(self._print(i) for i in expr.indices)}}}"

    def _print_KroneckerDelta(self, expr: sympy.KroneckerDelta, exp: Any = None) -> str:
        glue = _index_glue(expr.args)
        tex = rf"\delta_{{{glue.join(self._print(a) for a in expr.args)}}}"
        return f"{tex}^{{{exp}}}" if exp else tex

    def _print_Derivative(self, expr: sympy.Derivative) -> str:
        if len(expr.variable_count) == 1 and expr.variable_count[0][1] == 1:
            (v, _), e = expr.variable_count[0], expr.expr
            if isinstance(e, sympy.Indexed | sympy.Symbol):
                return rf"\frac{{\partial {self._print(e)}}}{{\partial {self._print(v)}}}"
            inner = self._print(e)
            if isinstance(e, sympy.Add):
                inner = rf"\left({inner}\right)"
            return rf"\frac{{\partial}}{{\partial {self._print(v)}}} {inner}"
        return str(super()._print_Derivative(expr))


class IndexStrPrinter(_IndexOrder, StrPrinter):
    """A Unicode printer for the terminal: ``σ``, ``δ_ij``, ``Σ_{k=1}^{n}``, ``∂s_i/∂x_j``."""

    def _print_Symbol(self, expr: sympy.Symbol) -> str:
        name: str = expr.name
        if name.endswith("hat") and len(name) == 4:
            return name[0] + "\u0302"
        return _GREEK.get(name, name)

    def _print_Indexed(self, expr: sympy.Indexed) -> str:
        base = self._print(sympy.Symbol(expr.base.name))
        glue = _index_glue(expr.indices)
        idx = glue.join(self._print(i) for i in expr.indices)
        return f"{base}_{idx}" if len(idx) == 1 else f"{base}_{{{idx}}}"

    def _print_KroneckerDelta(self, expr: sympy.KroneckerDelta) -> str:
        glue = _index_glue(expr.args)
        idx = glue.join(self._print(a) for a in expr.args)
        return f"δ_{idx}" if len(idx) <= 2 and not glue else f"δ_{{{idx}}}"

    def _print_Derivative(self, expr: sympy.Derivative) -> str:
        parts = "".join(
            f"∂{self._print(v)}" + (f"^{c}" if c != 1 else "") for v, c in expr.variable_count
        )
        e = expr.expr
        if isinstance(e, sympy.Indexed | sympy.Symbol):
            return f"∂{self._print(e)}/{parts}"
        return f"∂/{parts} ({self._print(e)})"

    def _print_Sum(self, expr: sympy.Sum) -> str:
        out = self._print(expr.function)
        for k, lo, hi in expr.limits:
            out = f"Σ_{{{self._print(k)}={self._print(lo)}}}^{{{self._print(hi)}}} ({out})"
        return out

    def _print_exp(self, expr: sympy.exp) -> str:
        return f"e^{{{self._print(expr.args[0])}}}"

    def _print_Pow(self, expr: sympy.Pow, rational: bool = False) -> str:
        if expr.exp == sympy.S.Half:
            return f"√({self._print(expr.base)})"
        if expr.exp == -sympy.S.Half:
            return f"1/√({self._print(expr.base)})"
        out: str = super()._print_Pow(expr, rational)
        return out.replace("**", "^")

    def _print_Infinity(self, expr: Any) -> str:
        return "∞"

    def _print_NegativeInfinity(self, expr: Any) -> str:
        return "−∞"


def tex(e: Any) -> str:
    """LaTeX of an expression in index notation."""
    out: str = IndexLatexPrinter({"fold_func_brackets": True}).doprint(sympy.sympify(e))
    return out


def text(e: Any) -> str:
    """Unicode of an expression in index notation."""
    out: str = IndexStrPrinter().doprint(sympy.sympify(e))
    return out.replace("*", "·").replace(" - ", " − ")


def tex_lines(e: Any, width: int) -> list[str]:
    r"""LaTeX of ``e`` broken into lines of about ``width`` visible characters.

    A sum of terms breaks between terms; a long factor of a product, the body
    of a long ``Σ`` and the numerator of a long fraction break inside
    ``\Bigl( … \Bigr)`` (which, unlike ``\left``/``\right``, may span lines).
    What cannot be broken (one long symbol, a matrix) stays on one line.
    """
    return _lines(sympy.sympify(e), width)


_NAMED = re.compile(r"\\(sin|cos|tan|tanh|log|exp|det|operatorname\{(\w+)\})")


def _vis(t: str) -> int:
    """Visible width, counting a named operator (``\\cos``) by its letters."""
    from symtf.renderers.latex.matrices import visible_width

    return visible_width(_NAMED.sub(lambda m: m.group(2) or m.group(1), t))


def _wrap(prefix: str, body: list[str]) -> list[str]:
    if len(body) == 1:
        return [rf"{prefix}\left({body[0]}\right)"]
    return [rf"{prefix}\Bigl({body[0]}", *body[1:-1], rf"{body[-1]}\Bigr)"]


def _lines(e: sympy.Basic, width: int) -> list[str]:
    whole = tex(e)
    if _vis(whole) <= width:
        return [whole]
    if isinstance(e, sympy.Add):
        return _add_lines(e, width)
    if isinstance(e, sympy.Sum):
        marker = sympy.Symbol("BODYMARK")
        prefix = tex(sympy.Sum(marker, *e.limits)).replace("BODYMARK", "").rstrip()
        body = e.function
        lines = _lines(body, max(width - _vis(prefix), 12))
        if isinstance(body, sympy.Add) or len(lines) > 1:
            return _wrap(prefix + " ", lines)
        return [f"{prefix} {lines[0]}"]
    if isinstance(e, sympy.Derivative) and len(e.variable_count) == 1:
        (v, count), body = e.variable_count[0], e.expr
        power = "" if count == 1 else f"^{{{count}}}"
        prefix = rf"\frac{{\partial{power}}}{{\partial {tex(v)}{power}}}"
        return _wrap(prefix, _lines(body, max(width - 4, 12)))
    if isinstance(e, sympy.Mul):
        num, den = sympy.fraction(e)
        if den != 1 and _vis(tex(num)) > width // 2:
            prefix = rf"\frac{{1}}{{{tex(den)}}}"
            return _wrap(prefix, _lines(num, max(width - _vis(prefix), 12)))
        factors = list(e.args)
        widest = max(factors, key=lambda f: _vis(tex(f)))
        rest = sympy.Mul(*[f for f in factors if f is not widest])
        if isinstance(widest, sympy.Add | sympy.Sum | sympy.Derivative):
            prefix = "" if rest == 1 else ("-" if rest == -1 else tex(rest))
            if isinstance(rest, sympy.Add):
                prefix = rf"\left({prefix}\right)"
            inner = _lines(widest, max(width - _vis(prefix), 12))
            if isinstance(widest, sympy.Add):
                return _wrap(prefix, inner)
            return [f"{prefix} {inner[0]}", *inner[1:]]
    return [whole]


def _add_lines(e: sympy.Add, width: int) -> list[str]:
    lines: list[str] = []
    current = ""
    for term in _positive_first(e.as_ordered_terms()):
        negative = term.could_extract_minus_sign()
        body = -term if negative else term
        sign = "- " if negative else ("+ " if current or lines else "")
        sub = _lines(body, width - 2)
        if isinstance(body, sympy.Add):
            sub = _wrap("", sub)
        sub[0] = sign + sub[0]
        if len(sub) == 1 and (not current or _vis(current + sub[0]) <= width):
            current = f"{current} {sub[0]}".strip()
            continue
        if current:
            lines.append(current)
            current = ""
        if len(sub) == 1:
            current = sub[0]
        else:
            lines.extend(sub[:-1])
            current = sub[-1]
    if current:
        lines.append(current)
    return lines
