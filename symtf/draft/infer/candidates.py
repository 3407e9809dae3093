"""Candidate steps over the tensors known so far, by shape rules, ranked.

For each printing the search lists candidate steps (:mod:`symtf.draft.templates`) over
the tensors known so far — given inputs and steps found earlier — from the simplest up:

0. a known tensor itself, one of its rows or columns (a repeat);
1. one op on known tensors: products with or without a transpose, sums and
   differences (broadcasting), element-wise activations, row softmax (with
   ÷√d for the dimensions present and with or without the causal mask),
   LayerNorm (biased or unbiased variance, ε of 0, 1e-5, 1e-6, 1e-12) and
   RMSNorm, centring, reductions along rows, concatenation of heads side by side
   and of rows one under another, splitting into column blocks;
2. one of those on a product or sum of known tensors (depth 2), and the
   attention pattern ``softmax(q·kᵀ/√d [+ mask])`` of projections ``x·W``.

The article's own equations and labels (``S_1 = Q_1K_1^T/\\sqrt{2}``, a product
``X·W_V^{(2)}`` read as ``V_2``) rank candidates first, then simpler ones, then
the ones reading more recent printings.
"""

from __future__ import annotations

import itertools
import re
from collections.abc import Iterator
from fractions import Fraction
from typing import Any

from symtf.draft.article import Printing
from symtf.draft.infer.state import SearchState
from symtf.draft.infer.target import Known, _names, _product_alias
from symtf.draft.templates import Call, Expr, Num, Ref, call, inputs, size

__all__ = ["ACTIVATIONS", "EPSILONS", "Candidates"]
#: LayerNorm/RMSNorm ε tried, in order of preference.
EPSILONS = ("0", "1e-05", "1e-06", "1e-12")
#: Element-wise activations tried.
ACTIVATIONS = ("relu", "gelu", "gelu_tanh", "sigmoid", "tanh", "silu", "exp")


class Candidates(SearchState):
    """The candidate steps of a search, built once and ranked for each printing."""

    def _candidates(self, shape: tuple[int, int], whole_only: bool, tier: int) -> Iterator[Expr]:
        """Candidate steps of one tier that can give ``shape`` (or its rows), by shape rules."""
        n, m = shape
        ks = sorted(self.known.values(), key=lambda k: -k.key)
        if tier > 0:
            # a literal written by hand for a computed value is kept for its own prints
            # only: what is computed from it is computed from the value it writes out; the
            # results of displayed lines, gathered in a table, are what those lines work
            # out, not inputs of further steps
            kept = {literal for _, _, literal in self.written.values()} | {
                o.placement.known
                for o in self.outcomes.values()
                if o.status == "given" and o.placement is not None and o.printing.role == "result"
            }
            ks = [k for k in ks if k.matrix and k.key not in kept]
            # the same tensors (and the same labels, which name heads and weights) give the
            # same candidates, in the same order: a printing of a shape already searched with
            # nothing learnt since (another row, a run's members tried) takes the list built
            state = (tier, n, m, whole_only, tuple([(k.key, len(k.labels)) for k in ks]))
            built = self._candidate_lists_memo.get(state)
            if built is None:
                built = self._candidate_lists_memo[state] = list(
                    self._derived(ks, shape, whole_only, tier)
                )
            yield from built
            return
        yield from self._derived(ks, shape, whole_only, tier)

    def _derived(
        self, ks: list[Known], shape: tuple[int, int], whole_only: bool, tier: int
    ) -> Iterator[Expr]:
        """:meth:`_candidates` of one tier over the tensors ``ks``, latest first."""
        n, m = shape

        def fits(s: tuple[int, ...]) -> bool:
            if len(s) != 2:
                return False
            if s == (n, m):
                return True
            return not whole_only and n == 1 and (s[1] == m or s == (m, 1))

        if tier == 0:
            yield from (Ref(k.key) for k in ks if fits(k.shape))
            for k in ks:  # a tensor of three axes or more read as its rows (its last axis)
                if len(k.nd_shape) >= 3 and k.nd_shape[-1] == m:
                    rows = (k.value.size // m, m)
                    if rows == (n, m) or (n == 1 and not whole_only):
                        yield self._made_reshape(k.key, m)
            return
        sig = (n, m, whole_only)
        if tier == 1:
            for k in ks:
                key = (k.key, sig)
                if key not in self._unary_memo:
                    self._unary_memo[key] = list(self._unary(Ref(k.key), k.shape, fits))
                yield from self._unary_memo[key]
            for e, _shape in self._pairs(ks, fits):
                yield e
            yield from self._joins(ks, fits, n, m)
            for size_ in {n, m}:
                if fits((size_, size_)):
                    yield call("causal_mask", n=size_)
            if n == m and fits((n, n)):
                for slope in self._slopes():  # "Penalty = slope × distance" (ALiBi)
                    yield call("alibi", n=n, slope=slope)
            return
        # tier 2: one op on a product or sum of known tensors, and attention patterns
        products = list(self._pairs(ks, lambda s: True, products_only=True))
        for e, s in products:
            if fits(s):
                key2 = (e, sig)
                if key2 not in self._unary_memo:
                    self._unary_memo[key2] = list(self._unary(e, s, fits, cheap=False))
                yield from self._unary_memo[key2]
        by_rows: dict[int, list[tuple[Expr, tuple[int, int]]]] = {}
        by_cols: dict[int, list[tuple[Expr, tuple[int, int]]]] = {}
        by_shape: dict[tuple[int, int], list[Expr]] = {}
        for e, s in products:
            by_rows.setdefault(s[0], []).append((e, s))
            by_cols.setdefault(s[1], []).append((e, s))
            by_shape.setdefault(s, []).append(e)
        known_rows: dict[int, list[Known]] = {}
        for k in ks:
            known_rows.setdefault(k.shape[0], []).append(k)
        # (these four forms recur for every printing of a shape: built once, each looked
        # up by its op, known tensor and product, without building the step to find it)
        made = self._known_made_memo
        for k in ks:
            r, c = k.shape
            at = k.key
            for e, s in by_rows.get(c, ()):  # k @ (a @ b)
                if fits((r, s[1])):
                    got = made.get(("k@", at, e))
                    if got is None:
                        got = made["k@", at, e] = call("matmul", Ref(at), e)
                    yield got
            for e, s in by_cols.get(c, ()):  # k @ (a @ b).T
                if fits((r, s[0])):
                    got = made.get(("k@T", at, e))
                    if got is None:
                        got = made["k@T", at, e] = call("matmul", Ref(at), self._made("T", e))
                    yield got
            if fits(k.shape):
                for e in by_shape.get(k.shape, ()):  # k + (a @ b): a residual
                    got = made.get(("k+", at, e))
                    if got is None:
                        got = made["k+", at, e] = call("add", Ref(at), e)
                    yield got
        for e, s in products:  # (a @ b) @ k
            for k in known_rows.get(s[1], ()):
                if fits((s[0], k.shape[1])):
                    got = made.get(("@k", k.key, e))
                    if got is None:
                        got = made["@k", k.key, e] = call("matmul", e, Ref(k.key))
                    yield got
        projections = [
            (e, s)
            for e, s in products
            if isinstance(e, Call)
            and e.op == "matmul"
            and isinstance(e.args[1], Ref)
            and self._weight_like(e.args[1].key)
        ]
        for (q, qs), (k_, ks_) in itertools.product(projections, projections):
            if qs[1] != ks_[1] or not fits((qs[0], ks_[0])):
                continue
            key3 = (q, k_, (qs[0], ks_[0]), qs[1])
            found = self._pattern_memo.get(key3)
            if found is None:  # built once per search (candidates recur for every printing)
                scores = call("matmul", q, call("T", k_))
                found = self._pattern_memo[key3] = list(
                    self._patterns(scores, (qs[0], ks_[0]), qs[1])
                )
            yield from found

    def _pairs(
        self, ks: list[Known], fits: Any, *, products_only: bool = False
    ) -> Iterator[tuple[Expr, tuple[int, int]]]:
        """One binary op on two known tensors, where the shapes allow it and the result fits."""
        by_cols: dict[int, list[Known]] = {}
        by_rows: dict[int, list[Known]] = {}
        for k in ks:
            by_cols.setdefault(k.shape[1], []).append(k)
            by_rows.setdefault(k.shape[0], []).append(k)
        made = self._pair_memo

        def mk(op: str, a: int, b: int, transpose: bool = False) -> Call:
            key = (op, a, b, transpose)
            e = made.get(key)
            if e is None:
                rhs: Expr = call("T", Ref(b)) if transpose else Ref(b)
                e = made[key] = call(op, Ref(a), rhs)
            return e

        for a in ks:
            ra, ca = a.shape
            for b in by_rows.get(ca, []):  # a @ b
                if fits((ra, b.shape[1])):
                    yield mk("matmul", a.key, b.key), (ra, b.shape[1])
            for b in by_cols.get(ca, []):  # a @ b.T
                if fits((ra, b.shape[0])):
                    yield mk("matmul", a.key, b.key, True), (ra, b.shape[0])
            if not fits(a.shape):
                continue
            for b in ks:
                if b is a:
                    continue
                shape = _broadcast(a.shape, b.shape)
                if shape != a.shape:
                    continue
                if products_only:
                    if b.shape == a.shape and b.key < a.key:
                        yield mk("add", a.key, b.key), shape
                    continue
                if not (b.shape == a.shape and b.key > a.key):  # a + b once, in one order
                    yield mk("add", a.key, b.key), shape
                yield mk("sub", a.key, b.key), shape
                yield mk("mul", a.key, b.key), shape

    def _made_reshape(self, key: int, width: int) -> Call:
        """``reshape(k, [-1, width])``, built once per search."""
        memo_key = (f"reshape:{width}", (Ref(key),))
        e = self._made_memo.get(memo_key)
        if e is None:
            e = self._made_memo[memo_key] = call("reshape", Ref(key), shape=[-1, width])
        return e

    def _made(self, op: str, *args: Expr) -> Call:
        """``call(op, *args)``, built once per search (candidates recur for every printing)."""
        key = (op, args)
        e = self._made_memo.get(key)
        if e is None:
            e = self._made_memo[key] = call(op, *args)
        return e

    def _weight_like(self, key: int) -> bool:
        return any(re.match(r"^W", label) for label in self.known[key].labels)

    def _scales(self, inner: int) -> list[int]:
        return list(dict.fromkeys([inner, *self.dims]))

    def _patterns(self, scores: Expr, shape: tuple[int, int], inner: int) -> Iterator[Expr]:
        """Row softmax of scores, with ÷√d for the dimensions present and with or without a mask."""
        n, m = shape
        for d in self._scales(inner):
            scaled = call("div", scores, call("sqrt", Num(str(d))))
            yield scaled
            if n == m:
                yield call("softmax", call("add", scaled, call("causal_mask", n=n)), axis=-1)
            yield call("softmax", scaled, axis=-1)
        if n == m:
            yield call("softmax", call("add", scores, call("causal_mask", n=n)), axis=-1)
        yield call("softmax", scores, axis=-1)

    def _unary(
        self, x: Expr, s: tuple[int, int], fits: Any, *, cheap: bool = True
    ) -> Iterator[Expr]:
        n, m = s
        if fits(s):
            for act in ACTIVATIONS:
                yield call(act, x)
            yield from (
                self._patterns(x, s, m)
                if n == m
                else (
                    call("softmax", x, axis=-1),
                    *(call("div", x, call("sqrt", Num(str(d)))) for d in self._scales(m)),
                )
            )
            if n == m:
                yield call("add", x, call("causal_mask", n=n))
            for eps in EPSILONS:
                for unbiased in (False, True):
                    yield call("layernorm", x, eps=Num(eps).text, unbiased=unbiased)
            for eps in EPSILONS[:3]:
                yield call("rmsnorm", x, eps=Num(eps).text)
            yield call("centered", x)
        if (fits((m, n)) and n != m) or (n == m and fits(s)):
            yield call("T", x)
        if fits((n, 1)) or fits((1, n)) or fits((n, 1)[::-1]):
            for red in ("mean", "var", "std", "sum", "max"):
                if red in ("var", "std"):
                    for unbiased in (False, True):
                        yield call(red, x, axis=-1, keepdims=True, unbiased=unbiased)
                else:
                    yield call(red, x, axis=-1, keepdims=True)
        if cheap:
            for w in range(1, m):
                if m % w == 0 and fits((n, w)):
                    for j in range(m // w):
                        yield call("index", x, cols=(j * w, (j + 1) * w))

    def _joins(self, ks: list[Known], fits: Any, n: int, m: int) -> Iterator[Expr]:
        """Heads side by side (``concat(H_1, H_2, H_3)``) and rows one under another."""
        by_order = sorted(ks, key=lambda k: k.key)
        for axis in (-1, 0):
            along = 1 if axis == -1 else 0
            across = 1 - along
            same = [k for k in by_order if k.shape[along] < (m if axis == -1 else n)]
            groups: dict[tuple[int, str], list[Known]] = {}
            for k in same:
                stem = re.sub(r"_?\d+$", "", self.display_name(k.key))
                groups.setdefault((k.shape[across], stem), []).append(k)
                groups.setdefault((k.shape[across], "*"), []).append(k)
            seen: set[tuple[int, ...]] = set()
            for group in groups.values():
                for i in range(len(group)):
                    total = 0
                    for j in range(i, len(group)):
                        total += group[j].shape[along]
                        if j == i:
                            continue
                        shape = (
                            (group[i].shape[0], total) if axis == -1 else (total, group[i].shape[1])
                        )
                        if fits(shape):
                            keys = tuple(k.key for k in group[i : j + 1])
                            if keys not in seen:
                                seen.add(keys)
                                yield call("concat", *(Ref(k) for k in keys), axis=axis)
                            break
                        if total > (m if axis == -1 else n):
                            break

    def _slopes(self) -> tuple[str, ...]:
        """The slopes the article states ("Let slope = -0.2"), for an ALiBi distance penalty.

        A single printed number whose label or sentence names it a slope, read with both
        signs: the paper's bias is ``−m·|i − j|`` with ``m > 0``, and an article that writes
        "penalty = slope × distance" gives the slope its sign.
        """
        memo = self._slope_memo
        if memo is None:
            out: list[str] = []
            for q in self.article.printings:
                if q.size != 1 or q.role:
                    continue
                text = q.rows[0][0].replace("−", "-")
                before = q.context.split(q.rows[0][0])[0] if q.context else ""
                if not re.search(r"\bslopes?\b", f"{q.label} {before}", re.I):
                    continue
                value = text[1:] if text.startswith("-") else text
                try:
                    nonzero = Fraction(value) != 0
                except (ValueError, ZeroDivisionError):
                    continue  # not a plain decimal: no slope to read
                out += [value, f"-{value}"] if nonzero else []
            memo = self._slope_memo = tuple(dict.fromkeys(out))
        return memo

    def _wanted(self, p: Printing) -> int:
        """The bonus a candidate needs for the search to stop early: 2 when an equation names the printing."""
        return 2 if any(n in self._equations for n in _names(p.label)) else 0

    def _rank(self, e: Expr, tier: int, p: Printing) -> tuple[Any, ...]:
        ins = inputs(e)
        names = (
            set().union(*(self.known[k].aliases | self.known[k].lineage for k in ins))
            if ins
            else set()
        )
        own = set().union(*(self.known[k].aliases for k in ins)) if ins else set()
        if isinstance(e, Call) and e.op == "matmul" and isinstance(e.args[1], Ref):
            own |= _product_alias(self.known[e.args[1].key].labels)
        for sub in _subexprs(e):
            if isinstance(sub, Call) and sub.op == "matmul" and isinstance(sub.args[1], Ref):
                names |= _product_alias(self.known[sub.args[1].key].labels)
        label_names = _names(p.label)
        bonus = 0
        if isinstance(e, Ref) and label_names & own:
            bonus = 3  # the same name again
        elif label_names & own:
            bonus = 2
        for eq in (self._equations.get(n, []) for n in label_names):
            for names_ in eq:
                hit = len(names_ & (names | own))
                if hit and hit >= min(2, len(names_)):
                    bonus = max(bonus, 1 + (hit >= len(names_)))
        if not bonus and p.role in ("", "result") and isinstance(e, Call) and e.op == "matmul":
            # "[1, 0, 1] W_Q^{(1)}": a row times the matrix the label names
            mentioned = {m for w in re.findall(r"[A-Za-z][\w^()]*", p.label) for m in _names(w)}
            factors = {
                k
                for a in e.args
                for k in inputs(a)
                if isinstance(a, Ref) or (isinstance(a, Call) and a.op == "T")
            }
            if any(mentioned & self.known[k].aliases for k in factors):
                bonus = 1
        recency = tuple(-k for k in sorted(ins, reverse=True))  # the latest printings first
        return (
            -bonus,
            tier,
            size(e) - self._stated_scales(e),
            _params_rank(e) - self._canonical(e),
            recency,
        )

    def _stated_scales(self, e: Expr) -> int:
        """A ``÷√d`` the article states (``Scale by 1/√2``) ranks a candidate ahead of the same
        step without it: softmax of scores so small that the scale hardly moves them fits
        both ways, and the shorter step won, against the article's own words (its two ops,
        the div and the sqrt, are not counted, and one more is taken off)."""
        return sum(
            3
            for sub in _subexprs(e)
            if isinstance(sub, Call)
            and sub.op == "div"
            and isinstance(sub.args[1], Call)
            and sub.args[1].op == "sqrt"
            and isinstance(sub.args[1].args[0], Num)
            and sub.args[1].args[0].text in {str(d) for d in self.dims}
        )

    def _canonical(self, e: Expr) -> int:
        """How much a candidate reads like attention as written: ``Q·Kᵀ``, then ``A·V``."""

        def letter(x: Expr) -> set[str]:
            keys = (
                inputs(x)
                if isinstance(x, Ref) or (isinstance(x, Call) and x.op in ("T", "matmul"))
                else set()
            )
            out = set()
            for k in keys:
                for a in self.known[k].aliases | _product_alias(self.known[k].labels):
                    out.add(a[:1].upper())
            if isinstance(x, Call) and x.op == "matmul" and isinstance(x.args[1], Ref):
                out |= {a[:1].upper() for a in _product_alias(self.known[x.args[1].key].labels)}
            return out

        score = 0
        for sub in _subexprs(e):
            if isinstance(sub, Call) and sub.op == "matmul" and len(sub.args) == 2:
                a, b = sub.args
                if isinstance(b, Call) and b.op == "T":
                    score += 2 * ("Q" in letter(a) and "K" in letter(b.args[0]))
                else:
                    score += "V" in letter(b) and "V" not in letter(a)
        return score


def _subexprs(e: Expr) -> Iterator[Expr]:
    yield e
    if isinstance(e, Call):
        for a in e.args:
            yield from _subexprs(a)


def _params_rank(e: Expr) -> int:
    """Prefer the usual setting: ε = 0, the biased variance, √ of the head width."""
    score = 0
    for sub in _subexprs(e):
        if isinstance(sub, Call):
            kw = sub.kw
            score += EPSILONS.index(kw["eps"]) if kw.get("eps") in EPSILONS else 0
            score += 2 * bool(kw.get("unbiased"))
            score += sub.op in ("gelu_tanh", "silu", "exp", "sigmoid", "tanh")
    return score


def _broadcast(a: tuple[int, int], b: tuple[int, int]) -> tuple[int, int] | None:
    out = []
    for x, y in zip(a, b, strict=True):
        if x == y or y == 1:
            out.append(x)
        elif x == 1:
            out.append(y)
        else:
            return None
    return (out[0], out[1])
