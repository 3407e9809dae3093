"""Exact algebra of index notation: sums over an index, Kronecker deltas, expectations.

SymPy represents ``Σ_{k=1}^{n} f_k`` (``Sum``), ``x_k`` (``Indexed``) and
``δ_{jk}`` (``KroneckerDelta``) and differentiates through them
(``∂x_k/∂x_j = δ_{jk}``), but it cannot *simplify* them for a symbolic ``n``:
``Sum(δ(i, j) x_j, (j, 1, n)).doit()`` is a ``Piecewise`` on ``1 ≤ i ≤ n``, and
``simplify`` is neither reliable nor fast. This module brings every expression
to a normal form by rewrites that are each an equality, so two expressions with
the same normal form are equal for every ``n`` (the converse need not hold: a
proof step that is true but not seen as such fails, never the other way round).

The rewrites, and the capability each needs:

- always: expansion of products and integer powers; linearity of the sum
  (``Σ(a + b) = Σa + Σb``, constants move out); ``Σ_{k=a}^{b} c = (b − a + 1)c``;
  a sum's bound index renamed canonically; ``δ_{ab}f(b) = δ_{ab}f(a)``;
  linearity of expectation, also over a sum of symbolic length;
  ``Var[X] = E[X²] − E[X]²``.
- ``differentiate``: a ``Derivative`` is carried out by SymPy, after the
  definitions it depends on are unfolded (an opaque name would differentiate to 0).
- ``define``: every definition is unfolded.
- ``sift``: ``Σ_{k=a}^{b} δ_{kj} f_k = f_j`` when ``a ≤ j ≤ b`` is known from the
  declared ranges, and ``= 0`` when ``j`` is known to lie outside ``[a, b]``.
- ``independence``: ``E[XY] = E[X]E[Y]`` for monomials in families declared
  independent of each other.
- ``moments``: ``E[q_a] = 0``, ``E[q_a²] = 1`` and ``E[q_a q_b] = δ_{ab}`` for a
  family of independent zero-mean unit-variance entries.
- ``trig``: sines, cosines and ``tanh`` rewritten as exponentials.
- always: ``erfc(x) = 1 − erf(x)``.
- ``mask``: ``e^{x + m(k, t)} = [k ≤ t]e^{x}`` for the causal mask ``m``.
- ``restrict``: ``Σ_{k=a}^{b} [k ≤ t] f_k = Σ_{k=a}^{t} f_k`` for ``a ≤ t ≤ b``.
- ``log``: logarithms of products and powers split (all arguments positive).
- ``integrate``: a definite ``Integral`` is carried out by SymPy.

Sums, expectations and function applications are held as opaque placeholder
symbols while polynomials are expanded (SymPy's ``expand`` would otherwise
reach inside a ``Sum``), so the zero test is the zero test of a rational
function in independent generators: sound.
"""

from __future__ import annotations

import functools
import itertools
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any, cast

import sympy

#: Capabilities a rule may grant (see the module docstring).
#: The range ``(lo, hi)`` of each bound summation index.
Ranges = dict[sympy.Symbol, tuple[sympy.Expr, sympy.Expr]]

CAPABILITIES = frozenset(
    {
        "differentiate",
        "define",
        "sift",
        "independence",
        "moments",
        "trig",
        "mask",
        "restrict",
        "log",
        "integrate",
    }
)

_BOUND = "ι"


class Expect(sympy.Function):
    """Unevaluated expectation ``E[X]``."""

    nargs = 1

    def _latex(self, printer: Any, exp: Any = None) -> str:
        tex = r"\mathbb{E}\left[" + str(printer._print(self.args[0])) + r"\right]"
        return f"{tex}^{{{exp}}}" if exp else tex

    def _sympystr(self, printer: Any) -> str:
        return "E[" + str(printer._print(self.args[0])) + "]"


class Variance(sympy.Function):
    """Unevaluated variance ``Var[X]`` (normalised as ``E[X²] − E[X]²``)."""

    nargs = 1

    def _latex(self, printer: Any, exp: Any = None) -> str:
        tex = r"\operatorname{Var}\left[" + str(printer._print(self.args[0])) + r"\right]"
        return f"{tex}^{{{exp}}}" if exp else tex

    def _sympystr(self, printer: Any) -> str:
        return "Var[" + str(printer._print(self.args[0])) + "]"


class Upto(sympy.Function):
    """The indicator ``[k ≤ t]`` (1 or 0), evaluated for integer arguments."""

    nargs = 2

    @classmethod
    def eval(cls, k: sympy.Expr, t: sympy.Expr) -> sympy.Expr | None:
        if k.is_Integer and t.is_Integer:
            return sympy.S.One if k <= t else sympy.S.Zero
        if k == t:
            return sympy.S.One
        return None

    def _latex(self, printer: Any, exp: Any = None) -> str:
        k, t = (printer._print(a) for a in self.args)
        return rf"[{k} \le {t}]" + (f"^{{{exp}}}" if exp else "")

    def _sympystr(self, printer: Any) -> str:
        k, t = (printer._print(a) for a in self.args)
        return f"[{k} <= {t}]"


class CausalMask(sympy.Function):
    """The causal mask ``m(k, t)``: 0 when ``k ≤ t``, ``−∞`` otherwise."""

    nargs = 2

    @classmethod
    def eval(cls, k: sympy.Expr, t: sympy.Expr) -> sympy.Expr | None:
        if k.is_Integer and t.is_Integer:
            return sympy.S.Zero if k <= t else sympy.S.NegativeInfinity
        return None

    def _latex(self, printer: Any, exp: Any = None) -> str:
        k, t = (printer._print(a) for a in self.args)
        return rf"M_{{{t}{k}}}" + (f"^{{{exp}}}" if exp else "")

    def _sympystr(self, printer: Any) -> str:
        k, t = (printer._print(a) for a in self.args)
        return f"M[{t},{k}]"


@dataclass(frozen=True)
class Family:
    """A family of random entries (``q_1 … q_d``).

    Attributes:
        base: The ``IndexedBase`` of the entries.
        standard: Whether the entries are independent with mean 0 and variance 1.
    """

    base: sympy.IndexedBase
    standard: bool = True


@dataclass(frozen=True)
class Context:
    """What a proof may assume about its symbols.

    Attributes:
        ranges: Each free index's range ``(lo, hi)``, both ends included.
        definitions: A name (``Symbol`` or ``IndexedBase``) and what it stands for:
            an expression, or a ``Lambda`` of the indices.
        families: Random families; any two different families are independent.
    """

    ranges: Mapping[sympy.Symbol, tuple[sympy.Expr, sympy.Expr]] = field(default_factory=dict)
    definitions: Mapping[sympy.Basic, sympy.Basic] = field(default_factory=dict)
    families: tuple[Family, ...] = ()

    def unfold(self, e: sympy.Basic, only_if_depends_on: sympy.Basic | None = None) -> sympy.Basic:
        """``e`` with definitions replaced by what they stand for, repeatedly.

        Args:
            e: Any expression.
            only_if_depends_on: Unfold only the names whose full unfolding
                contains this symbol or indexed base (``None``: unfold all).
        """
        names = [
            name
            for name in self.definitions
            if only_if_depends_on is None or self._depends(name, only_if_depends_on)
        ]
        for _ in range(32):
            new = self._unfold_once(e, names)
            if new == e:
                return e
            e = new
        raise RecursionError("definitions refer to each other in a cycle")

    def _unfold_once(self, e: sympy.Basic, names: list[sympy.Basic]) -> sympy.Basic:
        plain = {n: self.definitions[n] for n in names if isinstance(n, sympy.Symbol)}
        bases = {n: self.definitions[n] for n in names if isinstance(n, sympy.IndexedBase)}
        if bases:
            e = e.replace(
                lambda a: isinstance(a, sympy.Indexed) and a.base in bases,
                lambda a: _apply(bases[a.base], a.indices),
            )
        return e.xreplace({k: _fresh_bound(v) for k, v in plain.items()}) if plain else e

    @functools.cached_property
    def _direct(self) -> dict[sympy.Basic, frozenset[sympy.Basic]]:
        """The names (bases and symbols) each definition mentions directly."""
        out = {}
        for name, body in self.definitions.items():
            if isinstance(body, sympy.Lambda):
                body = body.expr
            out[name] = frozenset(
                {a.base for a in body.atoms(sympy.Indexed)}
                | {d.expr for d in body.atoms(sympy.Derivative) if d.expr in self.definitions}
                | body.free_symbols
            )
        return out

    def _depends(self, name: sympy.Basic, target: sympy.Basic) -> bool:
        """Whether ``name``, unfolded (with ``target`` kept), mentions ``target``."""
        if isinstance(target, sympy.Indexed):
            target = target.base
        seen, todo = set(), [name]
        while todo:
            cur = todo.pop()
            for dep in self._direct.get(cur, ()):
                if dep == target:
                    return True
                if dep in self.definitions and dep not in seen:
                    seen.add(dep)
                    todo.append(dep)
        return False

    def unfold_all(self, e: sympy.Basic) -> sympy.Basic:
        """``e`` with every definition unfolded."""
        return self.unfold(e, None)

    def family_of(self, e: sympy.Basic) -> Family | None:
        """The random family an ``Indexed`` belongs to, if any."""
        if isinstance(e, sympy.Indexed):
            for f in self.families:
                if f.base == e.base:
                    return f
        return None


def _fresh_bound(e: sympy.Basic) -> sympy.Basic:
    """``e`` with every bound index renamed afresh, so substituting into it captures nothing."""
    sums = [s for s in sympy.preorder_traversal(e) if isinstance(s, sympy.Sum)]
    if not sums:
        return e
    names = {v: sympy.Dummy(v.name, integer=True) for s in sums for v, _, _ in s.limits}
    return e.xreplace(names)


def _apply(definition: sympy.Basic, indices: tuple[sympy.Basic, ...]) -> sympy.Basic:
    """A definition applied to indices, without capturing them in its own sums."""
    if isinstance(definition, sympy.Lambda):
        variables = definition.variables
        body = _fresh_bound(definition.expr)
        if len(variables) != len(indices):
            raise ValueError(f"{definition} takes {len(variables)} indices, given {len(indices)}")
        return body.xreplace(dict(zip(variables, indices, strict=True)))
    return definition


def _is_bound_name(s: sympy.Symbol) -> bool:
    return s.name.startswith(_BOUND) and not isinstance(s, sympy.Dummy)


def _level(s: sympy.Symbol) -> int:
    return int(s.name[len(_BOUND) :])


def bound_symbol(level: int) -> sympy.Symbol:
    """The canonical name of a sum's bound index at a given nesting level (from inside)."""
    return sympy.Symbol(f"{_BOUND}{level}", integer=True)


class Normalizer:
    """Brings expressions to the normal form of this module, for one context and capability set.

    Two expressions are compared with the same :class:`Normalizer`, so their
    placeholders agree.
    """

    def __init__(self, context: Context, caps: Iterable[str] = ()) -> None:
        caps = frozenset(caps)
        unknown = caps - CAPABILITIES
        if unknown:
            raise ValueError(f"unknown capabilities {sorted(unknown)}")
        self.ctx = context
        self.caps = caps
        self._atoms: dict[sympy.Basic, sympy.Symbol] = {}
        self._objects: dict[sympy.Symbol, sympy.Basic] = {}
        self._free: dict[sympy.Symbol, frozenset[sympy.Basic]] = {}
        # Variables differentiated anywhere in the comparison under way.
        self._variables: set[sympy.Basic] = set()
        self._memo: dict[Any, sympy.Expr] = {}

    def _unfold_outside(self, e: sympy.Basic) -> sympy.Basic:
        """Unfold the definitions that depend on a differentiated variable, outside derivatives.

        A derivative keeps its variable (``∂L/∂S_ij`` differentiates with respect
        to ``S_ij`` itself) and unfolds its own result (:meth:`_derivative`).
        """
        held = {d: sympy.Dummy("D") for d in e.atoms(sympy.Derivative)}
        out = e.xreplace(held)
        for v in self._variables:
            out = self.ctx.unfold(out, only_if_depends_on=v)
        return out.xreplace({v: k for k, v in held.items()})

    # ------------------------------------------------------------ placeholders

    def protect(self, obj: sympy.Basic) -> sympy.Expr:
        """A placeholder symbol for a canonical object (numbers stay numbers)."""
        if obj.is_Number or obj.is_NumberSymbol:
            return obj
        got = self._atoms.get(obj)
        if got is None:
            got = sympy.Dummy(f"P{len(self._atoms)}")
            self._atoms[obj] = got
            self._objects[got] = obj
            # A derivative's variables are not free in SymPy's sense, but an
            # index in them is: ∂L/∂S_{ak} depends on k.
            held = {
                s for d in obj.atoms(sympy.Derivative) for v in d.variables for s in v.free_symbols
            }
            self._free[got] = frozenset(obj.free_symbols | held)
        return got

    def unprotect(self, e: sympy.Basic) -> sympy.Basic:
        """``e`` with every placeholder replaced by its object."""
        found = {s: self._objects[s] for s in e.free_symbols if s in self._objects}
        return e.xreplace(found) if found else e

    def free(self, e: sympy.Basic) -> set[sympy.Basic]:
        """Free symbols of ``e``, looking through placeholders."""
        out: set[sympy.Basic] = set()
        for s in e.free_symbols:
            out |= self._free.get(s, {s})
        return out

    # ------------------------------------------------------------ entry points

    def normal(self, e: Any) -> sympy.Expr:
        """The normal form of ``e`` (placeholders kept), expanded."""
        e = sympy.sympify(e)
        return self._norm(e, dict(self.ctx.ranges))

    def equal(self, a: Any, b: Any) -> bool:
        """Whether ``a`` and ``b`` are shown equal (sound; ``False`` may mean unknown).

        When derivatives are carried out, a definition that depends on a
        variable differentiated on either side is unfolded on both sides, so
        ``∂Z/∂x_j`` and ``Z`` are compared in the same terms.
        """
        a, b = sympy.sympify(a), sympy.sympify(b)
        if isinstance(a, sympy.MatrixBase) or isinstance(b, sympy.MatrixBase):
            if not (isinstance(a, sympy.MatrixBase) and isinstance(b, sympy.MatrixBase)):
                return False
            if a.shape != b.shape:
                return False
            return all(self.equal(x, y) for x, y in zip(a, b, strict=True))
        if "differentiate" in self.caps:
            variables = {v for e in (a, b) for d in e.atoms(sympy.Derivative) for v in d.variables}
            if variables != self._variables:
                self._variables, self._memo = variables, {}
            a, b = self._unfold_outside(a), self._unfold_outside(b)
        d = sympy.expand(self.normal(a) - self.normal(b))
        if d == 0:
            return True
        return bool(sympy.cancel(sympy.together(d)) == 0)

    def shown(self, e: sympy.Basic) -> sympy.Basic:
        """The normal form with placeholders replaced (for messages)."""
        return self.unprotect(e)

    # ------------------------------------------------------------ recursion

    def _norm(self, e: sympy.Basic, ranges: Ranges) -> sympy.Expr:
        if e.is_Atom and not ("define" in self.caps and self._defined(e)):
            return e
        # The same subexpression recurs (each e^{S_ij} in every sum): memoise on
        # it and the ranges of the indices it mentions.
        key = (e, tuple(sorted(((k, v) for k, v in ranges.items() if e.has(k)), key=str)))
        got = self._memo.get(key)
        if got is None:
            got = self._memo[key] = self._norm_uncached(e, ranges)
        return got

    def _norm_uncached(self, e: sympy.Basic, ranges: Ranges) -> sympy.Expr:
        if "define" in self.caps and self._defined(e):
            return self._norm(self.ctx.unfold(e), ranges)
        if e.is_Atom or isinstance(e, sympy.Indexed | sympy.IndexedBase):
            return e
        if isinstance(e, sympy.Add):
            return sympy.expand(sympy.Add(*[self._norm(a, ranges) for a in e.args]))
        if isinstance(e, sympy.Mul):
            return self._delta_canon(
                sympy.expand(sympy.Mul(*[self._norm(a, ranges) for a in e.args])), ranges
            )
        if isinstance(e, sympy.Pow):
            return self._pow(e, ranges)
        if isinstance(e, sympy.KroneckerDelta):
            a, b = (self._norm(x, ranges) for x in e.args)
            if "sift" in self.caps and b in ranges and self._within(a, *ranges[b], ranges) is False:
                return sympy.S.Zero
            if "sift" in self.caps and a in ranges and self._within(b, *ranges[a], ranges) is False:
                return sympy.S.Zero
            return sympy.KroneckerDelta(a, b)
        if isinstance(e, sympy.Sum):
            return self._sum(e, ranges)
        if isinstance(e, sympy.Derivative):
            return self._derivative(e, ranges)
        if isinstance(e, Variance):
            x = e.args[0]
            return self._norm(Expect(x**2) - Expect(x) ** 2, ranges)
        if isinstance(e, Expect):
            return self._expect(self._norm(e.args[0], ranges), ranges)
        if isinstance(e, sympy.Integral) and "integrate" in self.caps:
            return self._norm(e.doit(), ranges)
        if isinstance(e, sympy.erfc):
            return self._norm(1 - sympy.erf(e.args[0]), ranges)
        if isinstance(e, sympy.tanh) and "trig" in self.caps:
            g = sympy.exp(-2 * e.args[0])
            return self._norm((1 - g) / (1 + g), ranges)
        if isinstance(e, sympy.sin | sympy.cos) and "trig" in self.caps:
            return self._norm(e.rewrite(sympy.exp), ranges)
        if isinstance(e, sympy.exp):
            return self._exp(e, ranges)
        if isinstance(e, sympy.log) and "log" in self.caps:
            return self._log(e, ranges)
        if isinstance(e, sympy.Function | sympy.Integral | sympy.Derivative):
            args = [self.unprotect(self._norm(a, ranges)) for a in e.args]
            return self.protect(e.func(*args))
        if isinstance(e, sympy.Tuple):
            return e
        raise TypeError(f"index algebra cannot normalise {type(e).__name__}: {e}")

    def _defined(self, e: sympy.Basic) -> bool:
        if isinstance(e, sympy.Indexed):
            return e.base in self.ctx.definitions
        return isinstance(e, sympy.Symbol) and e in self.ctx.definitions

    def _pow(self, e: sympy.Pow, ranges: Ranges) -> sympy.Expr:
        base = self._norm(e.base, ranges)
        exp = self._norm(e.exp, ranges)
        if isinstance(base, sympy.KroneckerDelta) and exp.is_positive:
            return base
        if exp.is_Integer and exp > 0:
            return sympy.expand(base**exp)
        if exp.is_Integer or exp.is_Rational:
            return base**exp
        return self.protect(self.unprotect(base) ** self.unprotect(exp))

    def _exp(self, e: sympy.exp, ranges: Ranges) -> sympy.Expr:
        arg = self._norm(e.args[0], ranges)
        if "mask" in self.caps:
            masks = [m for m in self.unprotect(arg).atoms(CausalMask)]
            if masks:
                m = masks[0]
                rest = self.unprotect(arg).xreplace({m: 0})
                return self._norm(Upto(*m.args) * sympy.exp(rest), ranges)
        out = sympy.S.One
        for term in sympy.Add.make_args(arg):
            coeff, rest = term.as_coeff_Mul()
            if coeff.is_Integer and rest != 1:
                out *= self.protect(sympy.exp(self.unprotect(rest))) ** coeff
            elif coeff.is_Rational and coeff < 0:
                # e^{-a} is 1/e^{a}: one generator for both signs.
                out *= self.protect(sympy.exp(self.unprotect(-term))) ** -1
            else:
                out *= self.protect(sympy.exp(self.unprotect(term)))
        return out

    def _log(self, e: sympy.log, ranges: Ranges) -> sympy.Expr:
        arg = self._norm(e.args[0], ranges)
        total = sympy.S.Zero
        factors = sympy.Mul.make_args(sympy.factor_terms(arg)) if arg.is_Add else [arg]
        if arg.is_Mul:
            factors = list(arg.args)
        for f in factors:
            base, power = f.as_base_exp()
            obj = self.unprotect(base)
            if isinstance(obj, sympy.exp):
                total += power * self._norm(obj.args[0], ranges)
            elif obj.is_Number and obj.is_positive:
                total += power * sympy.log(obj)
            else:
                total += power * self.protect(sympy.log(obj))
        return sympy.expand(total)

    def _delta_canon(self, e: sympy.Expr, ranges: Ranges) -> sympy.Expr:
        """``δ_{ab} f(b) = δ_{ab} f(a)`` term by term, keeping the smaller name."""
        out = []
        changed = False
        for term in sympy.Add.make_args(e):
            factors = sympy.Mul.make_args(term)
            deltas = [
                f
                for f in factors
                if isinstance(f, sympy.KroneckerDelta)
                and all(isinstance(a, sympy.Symbol) for a in f.args)
            ]
            done = False
            for d in deltas:
                # Keep the index that is not bound by a sum being built (a
                # Dummy), so that δ_{ik} s_k and δ_{ik} s_i meet in one form.
                keep, drop = sorted(
                    d.args, key=lambda a: (isinstance(a, sympy.Dummy), sympy.default_sort_key(a))
                )
                others = [f for f in factors if f is not d]
                if any(drop in self.free(f) for f in others):
                    rest = self.unprotect(sympy.Mul(*others)).xreplace({drop: keep})
                    out.append(d * self._norm(rest, ranges))
                    done = changed = True
                    break
            if not done:
                out.append(term)
        return sympy.expand(sympy.Add(*out)) if changed else e

    # ------------------------------------------------------------ sums

    def _sum(self, e: sympy.Sum, ranges: Ranges) -> sympy.Expr:
        body, limits = e.function, list(e.limits)
        # Sum(f, (i, ...), (j, ...)) is Σ_j Σ_i f: the first limit is innermost.
        for k, lo, hi in limits[:-1]:
            body = sympy.Sum(body, (k, lo, hi))
        k, lo, hi = limits[-1]
        lo, hi = self._norm(lo, ranges), self._norm(hi, ranges)
        fresh = sympy.Dummy("k", integer=True)
        inner = dict(ranges)
        inner[fresh] = (lo, hi)
        b = self._norm(body.xreplace({k: fresh}), inner)
        return self._sum_terms(b, fresh, lo, hi, ranges)

    def _sum_terms(
        self, b: sympy.Expr, k: sympy.Symbol, lo: sympy.Expr, hi: sympy.Expr, ranges: Ranges
    ) -> sympy.Expr:
        total = sympy.S.Zero
        inner = dict(ranges)
        inner[k] = (lo, hi)
        for term in sympy.Add.make_args(b):
            coeff: list[sympy.Expr] = []
            dep: list[sympy.Expr] = []
            for f in sympy.Mul.make_args(term):
                (dep if k in self.free(f) else coeff).append(f)
            c = sympy.Mul(*coeff)
            if not dep:
                total += c * (hi - lo + 1)
                continue
            done = self._sift(dep, k, lo, hi, ranges) if "sift" in self.caps else None
            if done is None and "restrict" in self.caps:
                done = self._restrict(dep, k, lo, hi, ranges)
            if done is not None:
                total += c * done
                continue
            total += c * self._sum_atom(sympy.Mul(*dep), k, lo, hi)
        return sympy.expand(total)

    def _sum_atom(
        self, body: sympy.Expr, k: sympy.Symbol, lo: sympy.Expr, hi: sympy.Expr
    ) -> sympy.Expr:
        """One canonical sum over ``k`` (and over the indices of the sums it multiplies).

        ``Σ_k a_k Σ_m b_{km}`` becomes the double sum ``Σ_{k,m} a_k b_{km}`` when the
        inner range does not depend on ``k``, so the order of summation never
        matters; the bound indices are then named canonically by trying every
        assignment of the names and keeping the least.
        """
        limits = [(k, self.unprotect(lo), self.unprotect(hi))]
        factors = []
        for f in sympy.Mul.make_args(body):
            base, power = f.as_base_exp()
            obj = self.unprotect(base)
            if (
                isinstance(obj, sympy.Sum)
                and power.is_Integer
                and power > 0
                and not any(k in (a.free_symbols | b.free_symbols) for _, a, b in obj.limits)
            ):
                for _ in range(int(power)):
                    fresh = {v: sympy.Dummy("k", integer=True) for v, _, _ in obj.limits}
                    limits += [(fresh[v], a, b) for v, a, b in obj.limits]
                    factors.append(obj.function.xreplace(fresh))
            else:
                factors.append(self.unprotect(f))
        obj = sympy.Mul(*factors)
        variables = [v for v, _, _ in limits]
        levels = [_level(s) for s in obj.atoms(sympy.Symbol) if _is_bound_name(s)]
        first = max(levels, default=0) + 1
        if any(v in (a.free_symbols | b.free_symbols) for _, a, b in limits for v in variables):
            # A range that depends on another bound index: keep the given order.
            orders: Iterable[tuple[sympy.Symbol, ...]] = [tuple(variables)]
        else:
            orders = itertools.permutations(variables)
        best: tuple[str, sympy.Expr] | None = None
        for order in orders:
            names = {v: bound_symbol(first + t) for t, v in enumerate(order)}
            lims = sorted(
                ((names[v], a.xreplace(names), b.xreplace(names)) for v, a, b in limits),
                key=lambda lim: _level(lim[0]),
                reverse=True,
            )
            cand = sympy.Sum(obj.xreplace(names), *lims)
            key = sympy.srepr(cand)
            if best is None or key < best[0]:
                best = (key, cand)
        assert best is not None
        return self.protect(best[1])

    def _within(
        self, j: sympy.Basic, lo: sympy.Expr, hi: sympy.Expr, ranges: Ranges
    ) -> bool | None:
        """Whether ``lo ≤ j ≤ hi`` follows from the ranges: True, False, or None (unknown)."""
        if _positive(lo - j) or _positive(j - hi):
            return False
        if j.is_Integer:
            jl = jh = j
        elif j in ranges:
            jl, jh = ranges[j]
        else:
            return None
        if _nonneg(jl - lo) and _nonneg(hi - jh):
            return True
        if _positive(jl - hi) or _positive(lo - jh):
            return False
        return None

    def _sift(
        self, dep: list[sympy.Expr], k: sympy.Symbol, lo: Any, hi: Any, ranges: Ranges
    ) -> Any:
        for f in dep:
            if not isinstance(f, sympy.KroneckerDelta) or k not in f.args:
                continue
            other = f.args[1] if f.args[0] == k else f.args[0]
            if other == k or k in self.free(other):
                continue
            inside = self._within(other, lo, hi, ranges)
            if inside is False:
                return sympy.S.Zero
            if inside:
                rest = self.unprotect(sympy.Mul(*[g for g in dep if g is not f]))
                return self._norm(rest.xreplace({k: other}), ranges)
        return None

    def _restrict(
        self, dep: list[sympy.Expr], k: sympy.Symbol, lo: Any, hi: Any, ranges: Ranges
    ) -> Any:
        for f in dep:
            obj = self.unprotect(f)
            if not isinstance(obj, Upto) or obj.args[0] != k or k in obj.args[1].free_symbols:
                continue
            t = obj.args[1]
            if self._within(t, lo, hi, ranges):
                rest = [g for g in dep if g is not f]
                body = self.unprotect(sympy.Mul(*rest))
                fresh = sympy.Dummy("k", integer=True)
                return self._sum(sympy.Sum(body.xreplace({k: fresh}), (fresh, lo, t)), ranges)
        return None

    # ------------------------------------------------------------ derivatives

    def _derivative(self, e: sympy.Derivative, ranges: Ranges) -> sympy.Expr:
        expr = e.expr
        if "differentiate" not in self.caps:
            inner = self.unprotect(self._norm(expr, ranges))
            return self.protect(sympy.Derivative(inner, *e.variable_count))
        for v, _ in e.variable_count:
            expr = self.ctx.unfold(expr, only_if_depends_on=v)
        out = sympy.diff(expr, *e.variable_count)
        for v in self._variables:
            out = self._unfold_outside(out) if out.has(sympy.Derivative) else out
            out = self.ctx.unfold(out, only_if_depends_on=v)
        return self._norm(out, ranges)

    # ------------------------------------------------------------ expectations

    def _random(self, e: sympy.Basic) -> bool:
        obj = self.unprotect(e)
        return any(self.ctx.family_of(a) is not None for a in obj.atoms(sympy.Indexed))

    def _expect(self, arg: sympy.Expr, ranges: Ranges) -> sympy.Expr:
        total = sympy.S.Zero
        for term in sympy.Add.make_args(arg):
            const: list[sympy.Expr] = []
            rand: list[sympy.Expr] = []
            for f in sympy.Mul.make_args(term):
                (rand if self._random(f) else const).append(f)
            total += sympy.Mul(*const) * self._expect_product(rand, ranges)
        return sympy.expand(total)

    def _expect_product(self, factors: list[sympy.Expr], ranges: Ranges) -> sympy.Expr:
        if not factors:
            return sympy.S.One
        # Products of sums become one nested sum with E inside (linearity).
        for idx, f in enumerate(factors):
            base, power = f.as_base_exp()
            obj = self.unprotect(base)
            if isinstance(obj, sympy.Sum) and power.is_Integer and power > 0:
                k, lo, hi = obj.limits[0]
                fresh = sympy.Dummy("k", integer=True)
                term = obj.function.xreplace({k: fresh})
                rest = [*factors[:idx], *factors[idx + 1 :]]
                if power > 1:
                    rest.append(base ** (power - 1))
                inner = self.unprotect(sympy.Mul(*rest))
                return self._norm(sympy.Sum(Expect(term * inner), (fresh, lo, hi)), ranges)
        monomial = self.unprotect(sympy.Mul(*factors))
        if "independence" in self.caps:
            groups: dict[sympy.Basic, list[sympy.Expr]] = {}
            for f in sympy.Mul.make_args(monomial):
                fams = {self.ctx.family_of(a) for a in f.atoms(sympy.Indexed)} - {None}
                key = cast(Family, next(iter(fams))).base if len(fams) == 1 else None
                groups.setdefault(key, []).append(f)
            if None not in groups and len(groups) > 1:
                out = sympy.S.One
                for fs in groups.values():
                    out *= self._expect_monomial(sympy.Mul(*fs), ranges)
                return out
        return self._expect_monomial(monomial, ranges)

    def _expect_monomial(self, m: sympy.Expr, ranges: Ranges) -> sympy.Expr:
        if "moments" in self.caps:
            got = self._moment(m)
            if got is not None:
                return self._norm(got, ranges)
        return self.protect(Expect(m))

    def _moment(self, m: sympy.Expr) -> sympy.Expr | None:
        powers = m.as_powers_dict()
        if not all(isinstance(b, sympy.Indexed) for b in powers):
            return None
        fams = {self.ctx.family_of(b) for b in powers}
        if len(fams) != 1 or None in fams or not cast(Family, next(iter(fams))).standard:
            return None
        items = sorted(powers.items(), key=lambda kv: sympy.default_sort_key(kv[0]))
        if len(items) == 1 and items[0][1] == 1:
            return sympy.S.Zero
        if len(items) == 1 and items[0][1] == 2:
            return sympy.S.One
        if len(items) == 2 and items[0][1] == items[1][1] == 1:
            (a, _), (b, _) = items
            if len(a.indices) == len(b.indices) == 1:
                return sympy.KroneckerDelta(a.indices[0], b.indices[0])
        return None


def _nonneg(e: sympy.Expr) -> bool:
    return bool(sympy.sympify(e).is_nonnegative)


def _positive(e: sympy.Expr) -> bool:
    return bool(sympy.sympify(e).is_positive)


def instantiate(
    expr: sympy.Basic,
    context: Context,
    sizes: Mapping[sympy.Symbol, int],
    arrays: Mapping[sympy.IndexedBase, Any],
    indices: Mapping[sympy.Symbol, int] | None = None,
    *,
    first: int = 1,
) -> sympy.Expr:
    """A general formula at concrete sizes, indices and entries: an exact SymPy value.

    Args:
        expr: An expression in index notation (definitions allowed).
        context: Its definitions.
        sizes: Each size symbol's value (``{n: 3}``).
        arrays: Each indexed base's entries: a sequence (one index) or a
            matrix (two), indexed from ``first``.
        indices: Each free index's value.
        first: The index of the first entry (1 for ``x_1 … x_n``).

    Raises:
        ValueError: When an entry is outside the array given.
    """
    e = context.unfold_all(sympy.sympify(expr))
    e = e.xreplace({**dict(sizes), **dict(indices or {})})
    e = e.doit()

    def entry(a: sympy.Indexed) -> sympy.Expr:
        values = arrays[a.base]
        at = [int(i) - first for i in a.indices]
        if any(i < 0 for i in at):
            raise ValueError(f"{a} is outside the entries given")
        if len(at) == 1:
            return sympy.sympify(values[at[0]])
        return sympy.sympify(values[at[0], at[1]])

    return e.replace(
        lambda a: isinstance(a, sympy.Indexed) and a.base in arrays and a.indices[0].is_Integer,
        entry,
    )
