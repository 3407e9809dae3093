"""Index notation as people write it: ``x_{ij}``, ``δ_{ij}``, ``∂s_i/∂x_j``, in LaTeX and Unicode."""

from __future__ import annotations

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


class IndexLatexPrinter(LatexPrinter):
    """SymPy's LaTeX printer with index notation written the textbook way."""

    def _as_ordered_terms(self, expr: Any, order: Any = None) -> list[sympy.Basic]:
        return _positive_first(super()._as_ordered_terms(expr, order))

    def _print(self, expr: Any, **kwargs: Any) -> str:
        # Indexed prints itself (``_latex``) before any printer method is asked.
        if isinstance(expr, sympy.Indexed):
            return self._print_Indexed(expr)
        return super()._print(expr, **kwargs)

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
        return super()._print_Derivative(expr)


class IndexStrPrinter(StrPrinter):
    """A Unicode printer for the terminal: ``σ``, ``δ_ij``, ``Σ_{k=1}^{n}``, ``∂s_i/∂x_j``."""

    def _as_ordered_terms(self, expr: Any, order: Any = None) -> list[sympy.Basic]:
        return _positive_first(super()._as_ordered_terms(expr, order))

    def _print(self, expr: Any, **kwargs: Any) -> str:
        if isinstance(expr, sympy.Indexed):
            return self._print_Indexed(expr)
        return super()._print(expr, **kwargs)

    def _print_Symbol(self, expr: sympy.Symbol) -> str:
        name = expr.name
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
        out = super()._print_Pow(expr, rational)
        return out.replace("**", "^")

    def _print_Infinity(self, expr: Any) -> str:
        return "∞"

    def _print_NegativeInfinity(self, expr: Any) -> str:
        return "−∞"


def tex(e: Any) -> str:
    """LaTeX of an expression in index notation."""
    return IndexLatexPrinter().doprint(sympy.sympify(e))


def text(e: Any) -> str:
    """Unicode of an expression in index notation."""
    out = IndexStrPrinter().doprint(sympy.sympify(e))
    return out.replace("*", "·").replace(" - ", " − ")


def tex_lines(e: Any, width: int) -> list[str]:
    """LaTeX of ``e`` cut at top-level ``+``/``−`` into lines of about ``width`` characters.

    A single term longer than ``width`` stays on a line of its own.
    """
    from symtf.renderers.latex import _visible_width

    e = sympy.sympify(e)
    whole = tex(e)
    if _visible_width(whole) <= width or not isinstance(e, sympy.Add):
        return [whole]
    lines: list[str] = []
    current = ""
    for term in _positive_first(e.as_ordered_terms()):
        coeff = term.as_coeff_Mul()[0]
        negative = coeff.is_Number and coeff < 0
        body = tex(-term if negative else term)
        if isinstance(-term if negative else term, sympy.Add):
            body = rf"\left({body}\right)"
        piece = ("- " if negative else ("+ " if current or lines else "")) + body
        if current and _visible_width(current + piece) > width:
            lines.append(current)
            current = piece
        else:
            current = f"{current} {piece}".strip()
    if current:
        lines.append(current)
    return lines
