"""Proofs for every size: chains of equalities in index notation, each step checked.

A :class:`Proof` states ``lhs = rhs`` for a symbolic size (``n``, ``d``…) and
gives the chain ``lhs = e_1 = e_2 = … = rhs``; each link names the
:class:`Rule` that justifies it. A link is checked by bringing both of its
sides to the normal form of :mod:`symtf.derive.index` with only the
capabilities its rule grants (a step called "linearity of the sum" may not
sift a delta, a step called "delta sifting" may not differentiate), so a step
that is false, or true only by a rule it does not name, fails. The proof holds
when every link is checked and the chain ends at the stated right-hand side.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import sympy

from symtf.derive.core import Check
from symtf.derive.index import Context, Normalizer
from symtf.derive.words import Math, Words


@dataclass(frozen=True)
class Rule:
    """A reason one expression equals the next.

    Attributes:
        key: Stable name (``delta-sifting``).
        name: What it is called, for people (``delta sifting``).
        caps: The rewrites of :mod:`symtf.derive.index` the rule allows.
        formula: The rule itself, when it has a short formula.
    """

    key: str
    name: str
    caps: frozenset[str]
    formula: Math | None = None


def _rule(key: str, name: str, caps: Sequence[str] = (), tex: str = "", plain: str = "") -> Rule:
    return Rule(key, name, frozenset(caps), Math(tex, plain) if tex else None)


#: Every rule a proof may name.
RULES: dict[str, Rule] = {
    r.key: r
    for r in (
        _rule("definition", "definition", ["define"]),
        _rule("algebra", "algebra"),
        _rule("lemma", "a statement proved above"),
        _rule(
            "linearity",
            "linearity of the sum",
            tex=r"\textstyle\sum_k (a f_k + b g_k) = a\sum_k f_k + b\sum_k g_k",
            plain="Σₖ(a fₖ + b gₖ) = a Σₖ fₖ + b Σₖ gₖ",
        ),
        _rule(
            "quotient-rule",
            "quotient rule",
            ["differentiate"],
            r"(f/g)' = (f'g - fg')/g^2",
            "(f/g)′ = (f′g − fg′)/g²",
        ),
        _rule(
            "product-rule",
            "product rule",
            ["differentiate"],
            r"(fg)' = f'g + fg'",
            "(fg)′ = f′g + fg′",
        ),
        _rule(
            "chain-rule",
            "chain rule",
            ["differentiate"],
            r"(f\circ g)' = (f'\circ g)\, g'",
            "(f∘g)′ = (f′∘g)·g′",
        ),
        _rule(
            "differentiation",
            "differentiation, deltas summed out",
            ["differentiate", "sift"],
        ),
        _rule(
            "sum-rule",
            "derivative of a sum",
            ["differentiate"],
            r"\textstyle\partial \sum_k f_k = \sum_k \partial f_k",
            "∂ Σₖ fₖ = Σₖ ∂fₖ",
        ),
        _rule(
            "index-derivative",
            "derivative of an entry",
            ["differentiate"],
            r"\partial x_k / \partial x_j = \delta_{kj}",
            "∂xₖ/∂xⱼ = δₖⱼ",
        ),
        _rule(
            "delta-sifting",
            "delta sifting",
            ["sift"],
            r"\textstyle\sum_{k=1}^{n} \delta_{kj} f_k = f_j",
            "Σₖ δₖⱼ fₖ = fⱼ (1 ≤ j ≤ n)",
        ),
        _rule(
            "sums-to-one",
            "the weights sum to 1",
            ["define"],
            r"\textstyle\sum_k s_k = 1",
            "Σₖ sₖ = 1",
        ),
        _rule(
            "expectation-linearity",
            "linearity of expectation",
            tex=r"\mathbb{E}\bigl[\textstyle\sum_k X_k\bigr] = \sum_k \mathbb{E}[X_k]",
            plain="E[Σₖ Xₖ] = Σₖ E[Xₖ]",
        ),
        _rule(
            "independence",
            "independence",
            ["independence"],
            r"\mathbb{E}[XY] = \mathbb{E}[X]\,\mathbb{E}[Y]",
            "E[XY] = E[X]·E[Y]",
        ),
        _rule(
            "moments",
            "zero mean, unit variance, independent entries",
            ["moments"],
            r"\mathbb{E}[q_i q_j] = \delta_{ij}",
            "E[qᵢqⱼ] = δᵢⱼ",
        ),
        _rule(
            "variance-scaling",
            "scaling a variance",
            tex=r"\operatorname{Var}[aX] = a^2 \operatorname{Var}[X]",
            plain="Var[aX] = a²·Var[X]",
        ),
        _rule(
            "variance",
            "definition of the variance",
            tex=r"\operatorname{Var}[X] = \mathbb{E}[X^2] - \mathbb{E}[X]^2",
            plain="Var[X] = E[X²] − E[X]²",
        ),
        _rule(
            "angle-addition",
            "angle addition",
            ["trig"],
            r"\sin(a+b) = \sin a\cos b + \cos a\sin b",
            "sin(a+b) = sin a cos b + cos a sin b",
        ),
        _rule(
            "tanh-exp",
            "tanh as exponentials",
            ["trig"],
            r"\tanh u = \frac{1 - e^{-2u}}{1 + e^{-2u}}",
            "tanh u = (1 − e^{−2u})/(1 + e^{−2u})",
        ),
        _rule(
            "causal-mask",
            "the causal mask",
            ["mask"],
            r"e^{x + M_{ts}} = [s \le t]\, e^{x}",
            "e^{x + M_ts} = [s ≤ t]·eˣ",
        ),
        _rule(
            "restrict-range",
            "restricting the range",
            ["restrict"],
            r"\textstyle\sum_{s=1}^{n} [s \le t] f_s = \sum_{s=1}^{t} f_s",
            "Σ_{s=1}^{n} [s ≤ t] fₛ = Σ_{s=1}^{t} fₛ",
        ),
        _rule(
            "log-rules",
            "logarithm of a quotient",
            ["log"],
            r"\log(e^{a}/b) = a - \log b",
            "log(eᵃ/b) = a − log b",
        ),
        _rule(
            "integration",
            "integral of the normal density",
            ["integrate"],
            r"\textstyle\int_{-\infty}^{x} \varphi = \frac{1}{2}\bigl(1 + \operatorname{erf}\frac{x}{\sqrt 2}\bigr)",
            "∫_{−∞}^{x} φ = (1 + erf(x/√2))/2",
        ),
    )
}


@dataclass(frozen=True)
class Step:
    """One link of a chain: ``… = after``, by ``rule``.

    Attributes:
        rule: A key of :data:`RULES`.
        after: The expression the link arrives at.
        note: A remark shown with the rule (``with j = k``).
        lemma: With the rule ``lemma``, the key of the proved statement used.
    """

    rule: str
    after: Any
    note: Words = ()
    lemma: str = ""


@dataclass(frozen=True)
class Proof:
    """``lhs = rhs`` for every size, as a chain of checked steps.

    Attributes:
        key: The key of the statement of the derivation this proves.
        lhs: Where the chain starts.
        rhs: Where it must end.
        context: Ranges of the free indices, definitions, random families.
        steps: The links, in order.
        where: The definitions and ranges, as shown to people.
    """

    key: str
    lhs: Any
    rhs: Any
    context: Context
    steps: tuple[Step, ...]
    where: Words = ()


@dataclass(frozen=True)
class StepCheck:
    """A checked link.

    Attributes:
        step: The link.
        before: The expression it starts from.
        check: Whether the rule takes ``before`` to ``after``.
    """

    step: Step
    before: Any
    check: Check

    @property
    def rule(self) -> Rule:
        """The rule named by the step."""
        return RULES[self.step.rule]


@dataclass(frozen=True)
class ProofResult:
    """A proof with every link checked.

    Attributes:
        proof: The proof.
        steps: Each link and its check.
        closes: Whether the chain ends at the stated right-hand side.
    """

    proof: Proof
    steps: tuple[StepCheck, ...]
    closes: Check = field(default_factory=lambda: Check(True, "chain ends at the statement"))

    @property
    def ok(self) -> bool:
        """Every link checked and the chain closed."""
        return bool(self.steps) and self.closes.ok and all(s.check.ok for s in self.steps)

    @property
    def failures(self) -> tuple[StepCheck, ...]:
        """The links that were not checked."""
        return tuple(s for s in self.steps if not s.check.ok)


def check_step(
    before: Any,
    step: Step,
    context: Context,
    lemmas: Mapping[str, ProofResult] | None = None,
) -> Check:
    """Whether ``step.rule`` takes ``before`` to ``step.after``."""
    rule = RULES.get(step.rule)
    if rule is None:
        return Check(False, "unknown rule", f"no rule called {step.rule!r}")
    if rule.key == "lemma":
        return _lemma_check(before, step, context, lemmas or {})
    method = f"normal form with {', '.join(sorted(rule.caps)) or 'algebra'} only"
    try:
        ok = Normalizer(context, rule.caps).equal(before, step.after)
    except (TypeError, ValueError, RecursionError, NotImplementedError) as exc:
        return Check(False, method, f"could not be normalised: {exc}")
    if ok:
        return Check(True, method)
    return Check(False, method, f"{rule.name} does not take the previous line to this one")


def _lemma_check(
    before: Any, step: Step, context: Context, lemmas: Mapping[str, ProofResult]
) -> Check:
    """``before`` and ``after`` agree once each use of the lemma is replaced by its right side.

    The lemma's free indices match any index whose range (declared, or bound by
    an enclosing sum) is the range the lemma was proved for.
    """
    method = f"uses the proved statement {step.lemma!r}, then algebra"
    got = lemmas.get(step.lemma)
    if got is None:
        return Check(False, method, f"no statement {step.lemma!r} was proved before this one")
    if not got.ok:
        return Check(False, method, f"the statement {step.lemma!r} it uses was not proved")
    lp = got.proof
    indices = sorted(
        (s for s in sympy.sympify(lp.lhs).atoms(sympy.Symbol) if s in lp.context.ranges), key=str
    )
    wild = {s: sympy.Wild(f"{s.name}_w") for s in indices}
    pattern = sympy.sympify(lp.lhs).xreplace(wild)
    result = sympy.sympify(lp.rhs).xreplace(wild)
    sides = [sympy.sympify(before), sympy.sympify(step.after)]
    used = False
    for side in sides:
        for found in side.find(pattern):
            used = True
            match = found.match(pattern) or {}
            for s, w in wild.items():
                if _range_of(match.get(w), side, context) != lp.context.ranges[s]:
                    return Check(
                        False,
                        method,
                        f"{step.lemma!r} is used at an index whose range is not the one proved",
                    )
    if not used:
        return Check(False, method, f"the statement {step.lemma!r} is not used here")
    replaced = [side.replace(pattern, result) for side in sides]
    try:
        ok = Normalizer(context, ()).equal(*replaced)
    except (TypeError, ValueError, RecursionError) as exc:
        return Check(False, method, f"could not be normalised: {exc}")
    return Check(True, method) if ok else Check(False, method, "the two lines still differ")


def _range_of(index: Any, expr: sympy.Basic, context: Context) -> Any:
    if index is None:
        return None
    if index in context.ranges:
        return tuple(context.ranges[index])
    for s in expr.atoms(sympy.Sum):
        for v, lo, hi in s.limits:
            if v == index:
                return (lo, hi)
    return None


def check(proof: Proof, lemmas: Mapping[str, ProofResult] | None = None) -> ProofResult:
    """Check every link of a proof and that it ends at the statement.

    Args:
        proof: The proof.
        lemmas: Proofs already checked, by key, that steps may use.
    """
    out = []
    before = proof.lhs
    for step in proof.steps:
        out.append(StepCheck(step, before, check_step(before, step, proof.context, lemmas)))
        before = step.after
    if not proof.steps:
        closes = Check(False, "chain ends at the statement", "the proof has no steps")
    elif sympy.sympify(before) != sympy.sympify(proof.rhs):
        closes = Check(
            False,
            "chain ends at the statement",
            "the last line is not the right-hand side of the statement",
        )
    else:
        closes = Check(True, "chain ends at the statement")
    return ProofResult(proof, tuple(out), closes)


def check_all(proofs: Sequence[Proof]) -> tuple[ProofResult, ...]:
    """Check proofs in order; each may use the ones before it as lemmas."""
    done: dict[str, ProofResult] = {}
    out = []
    for p in proofs:
        r = check(p, done)
        done[p.key] = r
        out.append(r)
    return tuple(out)
