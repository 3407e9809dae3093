"""GELU: the exact (erf) form, its derivative, and the tanh approximation.

The gap between GELU and its tanh approximation on [−6, 6] is bounded with
certified ball arithmetic (python-flint's Arb) and cross-checked with mpmath.
"""

from __future__ import annotations

from fractions import Fraction
from typing import Any

import mpmath
import sympy
from flint import arb, ctx, fmpq

from symtf import ops
from symtf.backends import ExactBackend
from symtf.derive.core import NUMERIC_DPS, Check, Derivation, Identity
from symtf.derive.index import Context
from symtf.derive.proof import Proof, Step
from symtf.derive.words import m, words

X = sympy.Symbol("x", real=True)
_T = sympy.Symbol("t", real=True)
#: The cubic coefficient of the tanh approximation (Hendrycks & Gimpel).
A = sympy.Rational("0.044715")
#: The interval the gap is bounded on, and how finely it is cut.
HALF_WIDTH = 6
PIECES = 12_000


def gelu_ops(x: sympy.Expr) -> sympy.Expr:
    """GELU by :func:`symtf.ops.gelu`."""
    return ops.on_matrices(ops.gelu, ExactBackend(), sympy.ImmutableMatrix([[x]]))[0, 0]


def phi(x: sympy.Expr) -> sympy.Expr:
    """Standard normal density."""
    return sympy.exp(-(x**2) / 2) / sympy.sqrt(2 * sympy.pi)


def big_phi_integral(x: sympy.Expr) -> sympy.Integral:
    """Standard normal CDF as the integral of the density (unevaluated)."""
    return sympy.Integral(phi(_T), (_T, -sympy.oo, x))


def gelu_prime(x: sympy.Expr) -> sympy.Expr:
    """Textbook ``GELU'(x) = Φ(x) + x φ(x)``."""
    return (1 + sympy.erf(x / sympy.sqrt(2))) / 2 + x * phi(x)


def gelu_tanh(x: sympy.Expr) -> sympy.Expr:
    """``x/2 · (1 + tanh(√(2/π)(x + 0.044715 x³)))``."""
    return x / 2 * (1 + sympy.tanh(sympy.sqrt(2 / sympy.pi) * (x + A * x**3)))


def gelu_sigmoid(x: sympy.Expr) -> sympy.Expr:
    """Textbook ``x · σ(2√(2/π)(x + 0.044715 x³))`` with ``σ(t) = 1/(1 + e^{−t})``."""
    return x / (1 + sympy.exp(-2 * sympy.sqrt(2 / sympy.pi) * (x + A * x**3)))


def _gap_parts(x: arb) -> tuple[arb, arb]:
    """``(f, f')`` on a ball, ``f = GELU − GELU_tanh``."""
    a = arb(fmpq(int(A.p), int(A.q)))
    c = (arb(2) / arb.pi()).sqrt()
    u = c * (x + a * x**3)
    th = u.tanh()
    big = (1 + (x / arb(2).sqrt()).erf()) / 2
    small = (-x * x / 2).exp() / (2 * arb.pi()).sqrt()
    f = x * big - x * (1 + th) / 2
    fp = big + x * small - (1 + th) / 2 - x * (1 - th * th) * c * (1 + 3 * a * x * x) / 2
    return f, fp


def certified_gap(pieces: int = PIECES, prec: int = 64) -> tuple[Fraction, Fraction, Fraction]:
    """Certified ``L ≤ max_{|x| ≤ 6} |GELU(x) − GELU_tanh(x)| ≤ U``.

    Each piece ``[m − r, m + r]`` is bounded by the mean-value form
    ``|f(m)| + |f'(piece)|·r`` in Arb balls; the lower bound is the best certified
    ``|f(m)|``.

    Returns:
        ``(L, U, m)`` with ``m`` the midpoint that attains ``L``.
    """
    saved = ctx.prec
    ctx.prec = prec
    try:
        h = fmpq(2 * HALF_WIDTH, pieces)
        r = h / 2
        upper = arb(0)
        lower = arb(0)
        where = fmpq(0)
        for i in range(pieces):
            m = fmpq(-HALF_WIDTH) + h * i + r
            fm, _ = _gap_parts(arb(m))
            _, fp = _gap_parts(arb(m, r))
            u = (abs(fm) + abs(fp) * arb(r)).upper()
            if u > upper:
                upper = u
            low = abs(fm).lower()
            if low > lower:
                lower, where = low, m
        return _fraction(lower), _fraction(upper), Fraction(int(where.p), int(where.q))
    finally:
        ctx.prec = saved


def _fraction(x: arb) -> Fraction:
    man, exp = x.mid().man_exp()
    return Fraction(int(man)) * Fraction(2) ** int(exp)


def _sci(q: Fraction, up: bool, digits: int = 5) -> str:
    """``q`` in scientific notation, rounded outward to ``digits`` significant digits."""
    k = 0
    while q * Fraction(10) ** k < 10 ** (digits - 1):
        k += 1
    scaled = q * Fraction(10) ** k
    n = -(-scaled.numerator // scaled.denominator) if up else scaled.numerator // scaled.denominator
    s = str(n)
    return f"{s[0]}.{s[1:]}e-{k - digits + 1}"


def _gap_step() -> Identity:
    result: dict[str, tuple[Fraction, Fraction, Fraction]] = {}

    def bounds() -> tuple[Fraction, Fraction, Fraction]:
        if "b" not in result:
            result["b"] = certified_gap()
        return result["b"]

    def certified() -> Check:
        lo, hi, _ = bounds()
        ok = 0 < lo <= hi
        return Check(
            ok,
            f"certified: Arb balls on {PIECES} pieces of [-{HALF_WIDTH}, {HALF_WIDTH}], "
            f"mean-value form; max in [{_sci(lo, False)}, {_sci(hi, True)}]",
            "" if ok else f"bounds out of order: {lo} > {hi}",
        )

    def numeric() -> Check:
        lo, hi, m = bounds()
        with mpmath.workdps(NUMERIC_DPS):
            a = mpmath.mpf(int(A.p)) / int(A.q)
            c = mpmath.sqrt(2 / mpmath.pi)

            def f(x: Any) -> Any:
                return x * mpmath.ncdf(x) - x / 2 * (1 + mpmath.tanh(c * (x + a * x**3)))

            peak = mpmath.findroot(
                lambda x: mpmath.diff(f, x), mpmath.mpf(m.numerator) / m.denominator
            )
            value = abs(f(peak))
            ends = max(abs(f(mpmath.mpf(HALF_WIDTH))), abs(f(-mpmath.mpf(HALF_WIDTH))))
            best = max(value, ends)
            ok = (
                mpmath.mpf(lo.numerator) / lo.denominator
                <= best
                <= mpmath.mpf(hi.numerator) / hi.denominator
            )
        return Check(
            ok,
            f"mpmath {NUMERIC_DPS} digits: GELU' - GELU_tanh' = 0 at x = {mpmath.nstr(peak, 10)}, "
            f"|gap| = {mpmath.nstr(best, 12)} lies inside the certified bounds",
            "" if ok else f"mpmath max {mpmath.nstr(best, 15)} outside [{float(lo)}, {float(hi)}]",
        )

    return Identity(
        "tanh-gap",
        r"\max_{|x| \le 6}\bigl|\mathrm{GELU}(x) - \mathrm{GELU}_{\tanh}(x)\bigr| \in [L, U]",
        "max_{|x|≤6} |GELU(x) − GELU_tanh(x)| ∈ [L, U]",
        words(
            "certified ball arithmetic on every piece; the two curves agree to about ",
            m(r"5 \cdot 10^{-4}", "5·10⁻⁴"),
        ),
        sympy.Abs(gelu_ops(X) - gelu_tanh(X)),
        sympy.Symbol("[L, U]"),
        symbolic=certified,
        numeric=numeric,
    )


def _steps(n: int | None) -> list[Identity]:
    del n
    x = X
    g = gelu_ops(x)
    return [
        Identity(
            "definition",
            r"\mathrm{GELU}(x) = x\,\Phi(x) = x\int_{-\infty}^{x}\frac{e^{-t^2/2}}{\sqrt{2\pi}}\,dt"
            r" = \frac{x}{2}\Bigl(1 + \operatorname{erf}\frac{x}{\sqrt 2}\Bigr)",
            "GELU(x) = x·Φ(x) = x/2·(1 + erf(x/√2))",
            words(
                "integrate the normal density: ",
                m(
                    r"\Phi(x) = \tfrac12\bigl(1 + \operatorname{erf}(x/\sqrt2)\bigr)",
                    "Φ(x) = (1 + erf(x/√2))/2",
                ),
                " (symtf's own GELU)",
            ),
            g,
            x * big_phi_integral(x),
        ),
        Identity(
            "derivative",
            r"\mathrm{GELU}'(x) = \Phi(x) + x\,\varphi(x)",
            "GELU′(x) = Φ(x) + x·φ(x)",
            words("the product rule, with ", m(r"\Phi' = \varphi", "Φ′ = φ")),
            sympy.Derivative(g, x),
            gelu_prime(x),
        ),
        Identity(
            "tanh-sigmoid",
            r"\frac{x}{2}\Bigl(1 + \tanh u\Bigr) = \frac{x}{1 + e^{-2u}},"
            r"\quad u = \sqrt{2/\pi}\,(x + 0.044715\,x^3)",
            "x/2·(1 + tanh u) = x·σ(2u),  u = √(2/π)(x + 0.044715x³)",
            words(
                m(r"\tfrac12(1 + \tanh u) = 1/(1 + e^{-2u})", "(1 + tanh u)/2 = 1/(1 + e^{−2u})"),
                ": the tanh form is a sigmoid gate",
            ),
            gelu_tanh(x),
            gelu_sigmoid(x),
        ),
        _gap_step(),
    ]


# --------------------------------------------------------------------------- the steps


def _gelu_proofs() -> list[Proof]:
    ctx = Context()
    x = X
    erf_form = x / 2 * (1 + sympy.erf(x / sympy.sqrt(2)))
    definition = Proof(
        "definition",
        gelu_ops(x),
        x * big_phi_integral(x),
        ctx,
        (
            Step("algebra", erf_form, words("symtf's GELU")),
            Step("integration", x * big_phi_integral(x)),
        ),
        words(
            m(r"\Phi(x) = \int_{-\infty}^{x} \varphi(t)\,dt", "Φ(x) = ∫_{−∞}^{x} φ(t) dt"),
            ", ",
            m(r"\varphi(t) = e^{-t^2/2}/\sqrt{2\pi}", "φ(t) = e^{−t²/2}/√(2π)"),
        ),
    )
    derivative = Proof(
        "derivative",
        sympy.Derivative(gelu_ops(x), x),
        gelu_prime(x),
        ctx,
        (
            Step("algebra", sympy.Derivative(erf_form, x)),
            Step(
                "product-rule",
                (1 + sympy.erf(x / sympy.sqrt(2))) / 2
                + x / 2 * sympy.Derivative(sympy.erf(x / sympy.sqrt(2)), x),
            ),
            Step(
                "chain-rule",
                (1 + sympy.erf(x / sympy.sqrt(2))) / 2
                + x / 2 * 2 / sympy.sqrt(sympy.pi) * sympy.exp(-(x**2) / 2) / sympy.sqrt(2),
                words(
                    m(
                        r"\operatorname{erf}'(u) = \tfrac{2}{\sqrt\pi} e^{-u^2}",
                        "erf′(u) = 2e^{−u²}/√π",
                    )
                ),
            ),
            Step("algebra", gelu_prime(x)),
        ),
        words(
            m(
                r"\Phi(x) = \tfrac12\bigl(1 + \operatorname{erf}(x/\sqrt2)\bigr)",
                "Φ(x) = (1 + erf(x/√2))/2",
            ),
            ", ",
            m(r"\varphi(x) = e^{-x^2/2}/\sqrt{2\pi}", "φ(x) = e^{−x²/2}/√(2π)"),
        ),
    )
    u = sympy.sqrt(2 / sympy.pi) * (x + A * x**3)
    sigmoid = Proof(
        "tanh-sigmoid",
        gelu_tanh(x),
        gelu_sigmoid(x),
        ctx,
        (
            Step("tanh-exp", x / 2 * (1 + (1 - sympy.exp(-2 * u)) / (1 + sympy.exp(-2 * u)))),
            Step("algebra", gelu_sigmoid(x)),
        ),
        words(m(r"u = \sqrt{2/\pi}\,(x + 0.044715\,x^3)", "u = √(2/π)(x + 0.044715x³)")),
    )
    return [definition, derivative, sigmoid]


GELU = Derivation(
    name="gelu",
    title="GELU, its derivative and the tanh approximation",
    build=_steps,
    proofs=lambda: _gelu_proofs(),
)
