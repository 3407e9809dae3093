"""Steps of a formula derivation and their two independent verifications.

A derivation is a list of :class:`Identity` steps, each ``lhs = rhs`` with a
statement for people and a one-line justification. Every step is verified

- **symbolically**: ``lhs − rhs`` (derivatives carried out with SymPy) is reduced
  to 0 by cheap exact algebra (``expand``, ``cancel``/``together``, trigonometric
  and exponential rewriting; never ``simplify``), entry by entry;
- **numerically**: both sides are evaluated with mpmath at 40 digits at a random
  rational point, every unevaluated ``Derivative`` by mpmath's central finite
  differences, and must agree to 25 digits.

Steps whose proof is not an algebraic cancellation (a moment computation, a
certified bound) bring their own checks.
"""

from __future__ import annotations

import functools
import random
import zlib
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import mpmath
import sympy

from symtf.derive.words import Words
from symtf.errors import SymtfError


class DeriveError(SymtfError, ValueError):
    """A derivation was asked for by a wrong name, size or worked-example reference."""


#: Working precision of the numeric check, in decimal digits.
NUMERIC_DPS = 40
#: Digits the two sides must agree to in the numeric check.
AGREE_DIGITS = 25
#: Expressions larger than this (in tree nodes) are reported rather than reduced.
MAX_NODES = 200_000


@dataclass(frozen=True)
class Check:
    """The outcome of one verification of one step.

    Attributes:
        ok: Whether the step was verified.
        method: How it was verified (``cancel``, ``central differences``...).
        detail: Why it failed, naming the entry and the size (empty when ``ok``).
    """

    ok: bool
    method: str
    detail: str = ""


@dataclass(frozen=True)
class Identity:
    """One step of a derivation, at one size, before verification.

    Attributes:
        key: Short stable name of the step (``rows-sum-to-zero``).
        statement: The claim in LaTeX (one relation, e.g. ``J\\mathbf{1} = 0``).
        plain: The same claim in plain Unicode for the terminal.
        justification: Why it holds, in words and maths (:mod:`symtf.derive.words`).
        lhs: SymPy scalar or matrix; may contain unevaluated ``Derivative``.
        rhs: SymPy scalar or matrix of the same shape.
        symbolic: A replacement symbolic (or certified) check, if cancellation
            of ``lhs − rhs`` is not the proof.
        numeric: A replacement numeric check.
        sized: False when the step does not depend on the size ``n`` (it is
            verified once, not once per size).
        notes: Extra lines shown under the step (worked values).
    """

    key: str
    statement: str
    plain: str
    justification: Words
    lhs: Any
    rhs: Any
    symbolic: Callable[[], Check] | None = None
    numeric: Callable[[], Check] | None = None
    sized: bool = True
    notes: tuple[str, ...] = ()


@dataclass(frozen=True)
class StepResult:
    """A verified step.

    Attributes:
        key: Short stable name of the step.
        statement: LaTeX statement.
        plain: Unicode statement.
        justification: Why it holds, in words and maths.
        lhs: Left side at the first size verified.
        rhs: Right side at the first size verified.
        sizes: The sizes ``n`` it was verified at (``(None,)`` when not sized).
        symbolic: Outcome of the symbolic (or certified) check over all sizes.
        numeric: Outcome of the numeric check over all sizes.
        notes: Extra lines (worked values).
        proof: The checked proof for every size, if the statement has one.
    """

    key: str
    statement: str
    plain: str
    justification: Words
    lhs: Any
    rhs: Any
    sizes: tuple[int | None, ...]
    symbolic: Check
    numeric: Check
    notes: tuple[str, ...] = ()
    proof: Any = None

    @property
    def ok(self) -> bool:
        """Verified both ways at the sizes checked, and its proof (if any) checked."""
        return self.symbolic.ok and self.numeric.ok and (self.proof is None or self.proof.ok)

    @property
    def sized(self) -> bool:
        """Whether the statement depends on a size ``n``."""
        return any(n is not None for n in self.sizes)

    @property
    def proved(self) -> bool:
        """Proved for every size: by a checked proof, or exactly when no size is involved."""
        if self.proof is not None:
            return bool(self.proof.ok)
        return not self.sized and self.symbolic.ok

    @property
    def checked_up_to(self) -> int | None:
        """The largest size it was checked at (``None`` when not sized)."""
        known = [n for n in self.sizes if n is not None]
        return max(known) if known else None

    def __repr__(self) -> str:
        from symtf.summary import derive_step_summary

        return derive_step_summary(self)


@dataclass(frozen=True)
class Result:
    """A derivation with every step verified.

    Attributes:
        name: The derivation's name (``softmax-jacobian``).
        title: A few words for people.
        sizes: The sizes ``n`` it was run at (``(None,)`` when not sized).
        steps: The verified steps, in order.
        at: A worked evaluation (see :mod:`symtf.derive.at`), if asked for.
        size_help: What ``n`` means.
    """

    name: str
    title: str
    sizes: tuple[int | None, ...]
    steps: tuple[StepResult, ...]
    at: Any = None
    size_help: str = ""

    @property
    def ok(self) -> bool:
        """Every step verified (and every proof checked, and the worked evaluation passed)."""
        return all(s.ok for s in self.steps) and (self.at is None or self.at.ok)

    @property
    def proved(self) -> bool:
        """Every statement proved for every size."""
        return bool(self.steps) and all(s.proved for s in self.steps)

    @property
    def unproved(self) -> tuple[StepResult, ...]:
        """The statements only checked at fixed sizes."""
        return tuple(s for s in self.steps if not s.proved)

    @property
    def failures(self) -> tuple[StepResult, ...]:
        """The steps that were not verified."""
        return tuple(s for s in self.steps if not s.ok)

    def __repr__(self) -> str:
        from symtf.summary import derive_summary

        return derive_summary(self)

    def _repr_latex_(self) -> str:
        from symtf.derive.render import latex

        return latex(self)

    def _repr_markdown_(self) -> str:
        from symtf.derive.render import markdown

        return markdown(self)

    def _repr_html_(self) -> str:
        from symtf.derive.render import html

        return html(self)


@dataclass(frozen=True)
class Derivation:
    """A named family of steps.

    Attributes:
        name: Command-line name.
        title: A few words for people.
        build: ``build(n)`` returns the steps at size ``n`` (``None`` when unsized).
        sizes: Default sizes, or ``None`` when the derivation takes no size.
        size_help: What ``n`` means (``vector length``).
        min_size: Smallest meaningful ``n``.
        at: ``at(trace, derivation, step, row)`` evaluates the formula at a
            worked example's values, or ``None`` when unsupported.
        proofs: ``proofs()`` returns the proofs for every size
            (:class:`symtf.derive.proof.Proof`), each keyed by the step it proves.
    """

    name: str
    title: str
    build: Callable[[int | None], Sequence[Identity]]
    sizes: tuple[int, ...] | None = None
    size_help: str = ""
    min_size: int = 1
    at: Callable[..., Any] | None = field(default=None, compare=False)
    proofs: Callable[[], Sequence[Any]] | None = field(default=None, compare=False)


# --------------------------------------------------------------------------- verification


def verify(
    derivation: Derivation, sizes: Sequence[int | None], proofs: Mapping[str, Any] | None = None
) -> tuple[StepResult, ...]:
    """Build and verify every step at every size, merging a step's sizes.

    Args:
        derivation: The derivation.
        sizes: The sizes to check at.
        proofs: Checked proofs by step key, attached to the steps they prove.
    """
    order: list[str] = []
    merged: dict[str, dict[str, Any]] = {}
    for n in sizes:
        for ident in derivation.build(n):
            entry = merged.get(ident.key)
            if entry is not None and not ident.sized:
                continue
            sym = _run_check(ident.symbolic, functools.partial(symbolic_check, ident, n))
            num = _run_check(
                ident.numeric, functools.partial(numeric_check, ident, n, derivation.name)
            )
            if entry is None:
                order.append(ident.key)
                merged[ident.key] = {
                    "ident": ident,
                    "sizes": [n if ident.sized else None],
                    "sym": [sym],
                    "num": [num],
                }
            else:
                entry["sizes"].append(n)
                entry["sym"].append(sym)
                entry["num"].append(num)
    out = []
    for key in order:
        e = merged[key]
        ident = e["ident"]
        out.append(
            StepResult(
                key=key,
                statement=ident.statement,
                plain=ident.plain,
                justification=ident.justification,
                lhs=ident.lhs,
                rhs=ident.rhs,
                sizes=tuple(e["sizes"]),
                symbolic=_merge(e["sym"]),
                numeric=_merge(e["num"]),
                notes=ident.notes,
                proof=(proofs or {}).get(key),
            )
        )
    return tuple(out)


def _run_check(custom: Callable[[], Check] | None, default: Callable[[], Check]) -> Check:
    return custom() if custom is not None else default()


def _merge(checks: list[Check]) -> Check:
    bad = [c for c in checks if not c.ok]
    if bad:
        return Check(False, bad[0].method, "; ".join(c.detail for c in bad))
    return checks[0]


def _entries(value: Any) -> list[tuple[str, Any]]:
    if isinstance(value, sympy.MatrixBase):
        return [
            (f"[{i},{j}]" if value.cols > 1 else f"[{i}]", value[i, j])
            for i in range(value.rows)
            for j in range(value.cols)
        ]
    return [("", sympy.sympify(value))]


def _shape(value: Any) -> tuple[int, int]:
    shape: tuple[int, int] = value.shape if isinstance(value, sympy.MatrixBase) else (1, 1)
    return shape


def _at(n: int | None) -> str:
    return "" if n is None else f" at n = {n}"


def symbolic_check(ident: Identity, n: int | None) -> Check:
    """Carry out derivatives and reduce ``lhs − rhs`` to 0 entry by entry."""
    method = "difference reduces to 0 (exact algebra)"
    if _shape(ident.lhs) != _shape(ident.rhs):
        return Check(
            False,
            method,
            f"shapes differ{_at(n)}: {_shape(ident.lhs)} and {_shape(ident.rhs)}",
        )
    for (where, a), (_, b) in zip(_entries(ident.lhs), _entries(ident.rhs), strict=True):
        diff = carried_out(sympy.sympify(a)) - carried_out(sympy.sympify(b))
        if not is_zero(diff):
            shown = sympy.sstr(diff)
            if len(shown) > 120:
                shown = shown[:117] + "..."
            return Check(False, method, f"entry{where} does not cancel{_at(n)}: {shown}")
    return Check(True, method)


@functools.lru_cache(maxsize=4096)
def carried_out(e: sympy.Expr) -> sympy.Expr:
    """``e.doit()``, remembered: the steps of a derivation share their derivatives."""
    if not e.has(sympy.Derivative, sympy.Integral):
        return e
    if isinstance(e, sympy.Add | sympy.Mul):
        return e.func(*[carried_out(a) for a in e.args])
    return e.doit()


def is_zero(e: sympy.Expr) -> bool:
    """Whether an expression is 0 by a ladder of cheap exact transformations."""
    if e == 0:
        return True
    if _nodes(e) > MAX_NODES:
        return False
    if e.has(sympy.erfc):
        e = e.rewrite(sympy.erf)
    if e.has(sympy.tanh):
        e = e.rewrite(sympy.exp)
    if e.has(sympy.log):
        e = sympy.expand_log(e, force=True)
    for transform in (
        lambda t: sympy.cancel(sympy.together(t)),
        sympy.expand,
        lambda t: sympy.cancel(sympy.expand(t, power_exp=True)),
    ):
        if transform(e) == 0:
            return True
    if e.has(sympy.sin, sympy.cos):
        # Euler's formula turns every trigonometric identity into one between
        # products of exponentials, which expansion settles.
        t = sympy.expand(sympy.expand(e.rewrite(sympy.exp)), power_exp=True)
        if t == 0 or sympy.cancel(t) == 0:
            return True
    return False


def _nodes(e: sympy.Basic) -> int:
    return sum(1 for _ in sympy.preorder_traversal(e))


def random_point(symbols: Sequence[sympy.Symbol], seed: str) -> dict[sympy.Symbol, sympy.Rational]:
    """Random small rationals for the symbols, positive where a symbol is positive.

    Args:
        symbols: The free symbols of a step.
        seed: Makes the point reproducible (the derivation, step and size).
    """
    rng = random.Random(zlib.crc32(seed.encode()))
    point = {}
    for s in sorted(symbols, key=str):
        den = rng.randint(2, 9)
        num = rng.randint(1, 3 * den) if s.is_positive else rng.randint(-2 * den, 2 * den)
        point[s] = sympy.Rational(num, den)
    return point


def numeric_check(ident: Identity, n: int | None, seed: str = "") -> Check:
    """Evaluate both sides at a random rational point with mpmath at 40 digits.

    Unevaluated ``Derivative`` objects are computed by central finite differences
    (``mpmath.diff``) on the undifferentiated expression.
    """
    sides = [_basic(ident.lhs), _basic(ident.rhs)]
    has_d = any(v.has(sympy.Derivative) for v in sides)
    how = "central differences" if has_d else "evaluation"
    method = f"{how}, mpmath {NUMERIC_DPS} digits, agree to {AGREE_DIGITS}"
    free: set[sympy.Symbol] = set()
    for v in sides:
        free |= v.free_symbols
        for d in v.atoms(sympy.Derivative):
            free |= set(d.variables)
    point = random_point(list(free), f"{seed}:{ident.key}:{n}")
    with mpmath.workdps(NUMERIC_DPS):
        for (where, a), (_, b) in zip(_entries(ident.lhs), _entries(ident.rhs), strict=True):
            x = numeric_value(a, point)
            y = numeric_value(b, point)
            if not agree(x, y):
                return Check(
                    False,
                    method,
                    f"entry{where}{_at(n)}: {mpmath.nstr(x, 15)} vs {mpmath.nstr(y, 15)}",
                )
    return Check(True, method)


def _basic(v: Any) -> sympy.Basic:
    return sympy.ImmutableMatrix(v) if isinstance(v, sympy.MatrixBase) else sympy.sympify(v)


def agree(x: Any, y: Any, digits: int = AGREE_DIGITS) -> bool:
    """Whether two mpmath numbers agree to ``digits`` digits (relative to max(1, |x|, |y|))."""
    scale = max(mpmath.mpf(1), abs(x), abs(y))
    return bool(abs(x - y) <= mpmath.mpf(10) ** (-digits) * scale)


def numeric_value(e: Any, point: dict[sympy.Symbol, sympy.Rational]) -> Any:
    """An mpmath value of a SymPy expression at a point; derivatives by finite differences."""
    e = sympy.sympify(e)
    values: dict[sympy.Symbol, Any] = {s: _mpf(q) for s, q in point.items()}
    replacements = {}
    for d in e.atoms(sympy.Derivative):
        dummy = sympy.Dummy("d")
        values[dummy] = _finite_difference(d, values)
        replacements[d] = dummy
    body = e.xreplace(replacements)
    syms = tuple(sorted(body.free_symbols, key=str))
    fn = _lambdify(syms, body)
    return mpmath.mpf(fn(*[values[s] for s in syms]))


@functools.lru_cache(maxsize=1024)
def _lambdify(syms: tuple[sympy.Symbol, ...], e: sympy.Expr) -> Callable[..., Any]:
    # The arguments are renamed in one xreplace, to plain Python names no other symbol of
    # the expression has (a symbol's own name may be no Python name, or an mpmath
    # function's). lambdify(dummify=True) renames them with one xreplace of the whole
    # expression per argument, and so does any Dummy argument: on attention-backward's
    # entries, with dozens of arguments, that was most of the numeric check's time.
    taken = {str(s) for s in e.atoms(sympy.Symbol)}
    stem = "_arg"
    while any(t.startswith(stem) for t in taken):
        stem = "_" + stem
    names = tuple(sympy.Symbol(f"{stem}{i}", **s.assumptions0) for i, s in enumerate(syms))
    body = e.xreplace(dict(zip(syms, names, strict=True)))
    fn: Callable[..., Any] = sympy.lambdify(names, body, "mpmath", dummify=False)
    return fn


def _mpf(q: sympy.Rational) -> Any:
    return mpmath.mpf(int(q.p)) / int(q.q)


def _finite_difference(d: sympy.Derivative, values: dict[sympy.Symbol, Any]) -> Any:
    wrt = [v for v, _ in d.variable_count]
    orders = [int(c) for _, c in d.variable_count]
    rest = sorted(d.expr.free_symbols - set(wrt), key=str)
    fn = _lambdify((*wrt, *rest), d.expr)
    fixed = [values[s] for s in rest]

    def f(*x: Any) -> Any:
        return fn(*x, *fixed)

    at = [values[v] for v in wrt]
    if len(wrt) == 1:
        return mpmath.diff(f, at[0], orders[0])
    return mpmath.diff(f, tuple(at), tuple(orders))


def derivative_matrix(f: Any, wrt: Sequence[sympy.Symbol]) -> sympy.ImmutableMatrix:
    """Unevaluated ``∂f_i/∂w_j`` for a column or row of outputs ``f``."""
    outs = list(f) if isinstance(f, sympy.MatrixBase) else [f]
    return sympy.ImmutableMatrix(
        len(outs), len(wrt), lambda i, j: sympy.Derivative(outs[i], wrt[j])
    )


def gradient(f: sympy.Expr, wrt: sympy.MatrixBase) -> sympy.ImmutableMatrix:
    """Unevaluated ``∂f/∂W``, shaped like ``W``."""
    return sympy.ImmutableMatrix(wrt.rows, wrt.cols, lambda i, j: sympy.Derivative(f, wrt[i, j]))


def symbol_matrix(name: str, rows: int, cols: int, **assumptions: bool) -> sympy.ImmutableMatrix:
    """A matrix of real symbols ``name_ij`` (1-based, as in textbooks)."""
    return sympy.ImmutableMatrix(
        rows,
        cols,
        lambda i, j: sympy.Symbol(f"{name}_{{{i + 1}{j + 1}}}", real=True, **assumptions),
    )


def symbol_row(name: str, n: int, **assumptions: bool) -> sympy.ImmutableMatrix:
    """A ``1 × n`` row of real symbols ``name_1 … name_n``."""
    return sympy.ImmutableMatrix(
        1, n, [sympy.Symbol(f"{name}_{i + 1}", real=True, **assumptions) for i in range(n)]
    )
