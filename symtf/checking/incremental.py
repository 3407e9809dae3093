"""Check an edited derivation again, reusing what the edit left as it was.

``check(derivation, previous)`` gives exactly the report of
:func:`symtf.checking.compare.check` (a test compares the two, claim for claim and
explanation for explanation, over many edits of articles); it only skips work whose
result cannot have changed. The check itself runs as always, in the same order, through
the hooks of :class:`symtf.checking.reuse.Reuse`:

- **traces.** When the edit left the model as it was (the same given tensors, steps and
  settings: only claims changed), the new check starts with the earlier check's traces
  (midpoint–radius, balls, exact), and so does each convention variant the diagnosis built,
  or that a check among the ``seeds`` built of this same model (an edit since undone), when
  its exact values are named in this check's backend.
  Otherwise each trace takes from the earlier check's, and from the traces of the
  document's other recent checks (``seeds``), every node the edit left as it was
  (the same op and parameters over arguments themselves unchanged:
  :class:`~symtf.graph.core.Reuse`), and so does each convention variant from the same
  variant of those checks; only what is downstream of the edit is computed again.
- **claims.** A claim whose text is the same (its place in the derivation file aside) keeps
  its verdicts (the file's ``computed_in`` and ``rounded_inputs`` applied) when the value of
  its step cannot have changed: the same model, or no node it is computed from changed (the
  graph's downstream closure of the edit). A displayed line reads the whole trace, the
  values of the lines before it and the printed numbers before it in the article: it keeps
  its verdicts only when the model and every claim up to it are the same.
- **causes.** The off numbers of a claim keep their causes (replay, convention, slips) when
  the model, the claim and its verdicts are the same, and so is every printed number, with
  its verdict, of its step and of every step it is computed from (and of its norm's worked
  pieces), and the names the article gives the steps. Roots, and the causes of displayed
  lines (which follow other numbers' causes), are always worked out again.

What is kept is never changed by a later check: a check that stops midway (cancelled,
out of time) leaves the earlier :class:`Checked` as good as it was.
"""

from __future__ import annotations

import copy
import dataclasses
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

from symtf.checking.evaluation import Evaluator
from symtf.checking.report import Check, ClaimResult, DerivationReport
from symtf.numbers import Printed
from symtf.spec import Claim, Derivation

__all__ = ["Checked", "check"]

#: Evaluators kept per key in a check's pool (the latest first): an edit that changed the
#: model computes its exact values apart from the earlier checks', so a variant of the
#: unedited model stays beside the edited one's.
POOLED = 3

#: An evaluator's caches of traces (everything else it holds is what the lines checked so
#: far remember, or its settings). A trace depends on the model alone, never on the claims.
_TRACES = (
    "_balls",
    "_partial",
    "_partial_steps",
    "_exact",
    "_midrad",
    "_midrad_done",
    "_bits",
    "ball_refusals",
    "_refused_at",
)


@dataclass(frozen=True)
class _Claimed:
    """One claim as checked: its verdicts before diagnosis, and what the lines remembered."""

    claim: Claim
    #: Its results: its own last, after those of its copy slips' literals (a displayed line).
    results: tuple[ClaimResult, ...]
    #: The evaluator's memory of the displayed lines after this claim, when it changed it.
    state: dict[str, Any] | None


@dataclass(frozen=True)
class Checked:
    """A checked derivation, and what a check of an edited version of it may reuse.

    Attributes:
        derivation: The derivation checked.
        report: Its report, as :func:`symtf.checking.compare.check` gives it.
    """

    derivation: Derivation
    report: DerivationReport
    evaluator: Evaluator | None = field(default=None, repr=False)
    claims: tuple[_Claimed, ...] = field(default=(), repr=False)
    #: Claim label -> (what its causes depend on, the diagnosis's findings for it).
    causes: Mapping[str, tuple[Any, dict[Any, Any]]] = field(default_factory=dict, repr=False)
    variants: Mapping[tuple[str, str], Evaluator | None] = field(default_factory=dict, repr=False)
    #: What this check reused: (claims kept, claims, causes kept, traces kept).
    reused: tuple[int, int, int, bool] = (0, 0, 0, False)
    #: The latest few evaluators of the model (key ``None``) and of each convention
    #: variant, from this check or earlier ones, whose traces a later check's may start from.
    pool: Mapping[tuple[str, str] | None, tuple[Evaluator, ...]] = field(
        default_factory=dict, repr=False
    )


def check(
    derivation: Derivation, previous: Checked | None = None, seeds: Checked | None = None
) -> Checked:
    """Check ``derivation`` (every slip or wrong number diagnosed), reusing ``previous``.

    Args:
        derivation: The derivation, typically an edited version of ``previous``'s.
        previous: An earlier check, or ``None`` (then this is a cold check).
        seeds: Another earlier check (a document's latest), whose traces serve too.

    Returns:
        The report, with what a later check may reuse.

    Raises:
        SpecError, ModelError: As :func:`symtf.checking.compare.check` raises them.
    """
    from symtf.checking import compare

    session = _Session(previous, seeds)
    report = compare.check(derivation, reuse=session)
    return session.checked_as(derivation, report)


# ----------------------------------------------------------------------------- what is the same


def _same_claim(a: Claim, b: Claim, checks: Iterable[Check] | None = None) -> bool:
    """The same claim but for its place in the derivation file.

    The report reads a claim's lines from the claim, never from its checks. Its ``where``
    (``FILE: claims[7]``, which moves when a claim before it comes or goes) only names it
    in messages: given ``a``'s ``checks``, they are the same when none of them says it.
    """
    if a == b:
        return True
    if a.where != b.where and (
        checks is None or any(a.where in c.explanation or a.where in str(c.extra) for c in checks)
    ):
        return False
    return dataclasses.replace(a, line=None, printed_lines=(), where="") == dataclasses.replace(
        b, line=None, printed_lines=(), where=""
    )


def _model(d: Derivation) -> tuple[Any, ...]:
    """Everything of a derivation its traces and convention variants are computed from."""
    forcing = any(getattr(c, "assertion", None) == "teacher-forcing" for c in d.claims)
    return (dataclasses.replace(d, claims=(), drafted=()), dict(d.written_inputs), forcing)


def _skeleton(claims: Iterable[Claim]) -> tuple[Any, ...]:
    """What the article's names for steps and entries are made of (symtf.checking.wording),
    and what a displayed line finds a label by: every claim but its printed numbers."""
    return tuple(
        (
            c.label,
            c.step,
            c.expression is not None,
            c.reduce,
            c.rank,
            c.at,
            c.index,
            c.row,
            c.col,
        )
        for c in claims
    )


def _leading(a: tuple[Claim, ...], b: tuple[Claim, ...]) -> int:
    """How many first claims of ``a`` and ``b`` are the same."""
    n = 0
    for x, y in zip(a, b, strict=False):
        if not _same_claim(x, y):
            break
        n += 1
    return n


def _drafted(d: Derivation) -> tuple[Claim, ...]:
    """The claims in the article's order, as displayed lines read the ones before them."""
    return tuple(getattr(d, "drafted", ()) or d.claims)


def _changed_nodes(old: Derivation, new: Derivation) -> set[str] | None:
    """The nodes of ``new``'s graph whose value may differ from ``old``'s (the downstream
    closure of every node added or changed); ``None`` when that cannot be told."""
    from symtf.graph.core import _same_node
    from symtf.graph.pipeline import graph_of

    try:
        a, b = graph_of(old, _model(old)[2]), graph_of(new, _model(new)[2])
    except Exception:  # a graph that cannot be built: the check itself says why
        return None
    if any(n.unroll for n in (*a.nodes, *b.nodes)):
        return None  # decoding emits nodes as it runs
    changed: set[str] = set()
    for n in b.nodes:
        before = a.get(n.name)
        if (
            before is None
            or not _same_node(before, n)
            or (n.shown or ()) != (before.shown or ())
            or any(i in changed for i in (*n.args, *(n.shown or ())))
        ):
            changed.add(n.name)
    return changed


def _reads(claim: Claim) -> set[str]:
    """The nodes a step claim's verdicts read."""
    assert claim.step is not None
    out = {claim.step}
    if claim.step == "next_token" or claim.rank is not None or claim.word is not None:
        out.add("logits")
    return out


# ----------------------------------------------------------------------------- the evaluator's memory


def _state_names(ev: Evaluator) -> list[str]:
    """The evaluator's memory of the displayed lines checked so far (its mutable containers
    that are not traces)."""
    return [
        k
        for k, v in vars(ev).items()
        if k not in _TRACES and isinstance(v, (dict, list, set)) and k != "fresh"
    ]


def _state(ev: Evaluator) -> dict[str, Any]:
    """A copy of that memory (its containers copied one level down)."""
    return {k: _copy(getattr(ev, k)) for k in _state_names(ev)}


def _copy(v: Any) -> Any:
    if isinstance(v, dict):
        return {k: _copy_leaf(x) for k, x in v.items()}
    return type(v)(v)


def _copy_leaf(x: Any) -> Any:
    return type(x)(x) if isinstance(x, (list, dict, set)) else x


def _signature(ev: Evaluator) -> tuple[Any, ...]:
    """Whether the memory changed, cheaply: the size of each container and of their lists."""
    out = []
    for k in _state_names(ev):
        v = getattr(ev, k)
        inner = sum(len(x) for x in v.values() if isinstance(x, list)) if isinstance(v, dict) else 0
        out.append((k, len(v), inner))
    return tuple(out)


def _warm(
    derivation: Derivation,
    old: Evaluator,
    base: Evaluator | None = None,
    seeds: tuple[Evaluator, ...] = (),
) -> Evaluator:
    """A fresh evaluator of ``derivation`` holding ``old``'s traces (the same model)."""
    ev = Evaluator(derivation, base=base, seeds=seeds)
    for k in _TRACES:
        if k not in vars(old):
            continue
        v = getattr(old, k)
        if k == "_partial_steps":
            v = {p: set(s) for p, s in v.items()}
        elif isinstance(v, dict):
            v = dict(v)
        setattr(ev, k, v)
    return ev


def _same_variant(old: Evaluator, variant: Derivation, base: Evaluator) -> bool:
    """Whether ``old``'s traces are those of ``variant`` over ``base``: the same model, and
    exact values (if it has them) named in ``base``'s exact backend."""
    if old.base is None or _model(old.derivation) != _model(variant):
        return False
    exact = vars(old).get("_exact")
    return exact is None or (
        vars(old.base).get("_exact") is not None
        and vars(old.base).get("_exact") is vars(base).get("_exact")
    )


# ----------------------------------------------------------------------------- the session


class _Session:
    """One check reusing an earlier one: implements :class:`symtf.checking.reuse.Reuse`."""

    def __init__(self, previous: Checked | None, seeds: Checked | None = None) -> None:
        self.previous = previous if previous is not None and previous.evaluator else None
        #: Earlier evaluators by key (``None``: the model; else a convention variant).
        self.pool: dict[tuple[str, str] | None, list[Evaluator]] = {}
        for earlier in (seeds, previous):  # the latest first
            if earlier is None:
                continue
            if earlier.evaluator is not None:
                self._seed(None, earlier.evaluator)
            for k, v in earlier.variants.items():
                if v is not None:
                    self._seed(k, v)
            for key, evs in earlier.pool.items():
                for e in evs:
                    self._seed(key, e)
        self.derivation: Derivation | None = None
        self.ev: Evaluator | None = None
        self.same_model = False
        self.changed: set[str] | None = None
        self.old: dict[str, _Claimed] = {}
        self.leading = 0
        self.leading_drafted = 0
        self.same_names = False
        self.position = 0
        self.signature: tuple[Any, ...] = ()
        self.states: dict[str, dict[str, Any] | None] = {}
        #: Each claim checked or kept so far, and how many results it gave.
        self.given: list[tuple[Claim, int]] = []
        self.grouped: dict[str, tuple[ClaimResult, ...]] = {}
        self.results: tuple[ClaimResult, ...] | None = None
        self.causes: dict[str, tuple[Any, dict[Any, Any]]] = {}
        self.variant_cache: dict[tuple[str, str], Evaluator | None] = {}
        self.kept_claims = 0
        self.kept_causes = 0
        self.complete = False
        self._inputs: dict[str, set[str]] | None = None
        self.printed: Mapping[str, Mapping[tuple[int, ...], Printed]] = {}
        self.status: Mapping[tuple[Any, ...], tuple[str, str]] = {}
        self.replayed: Derivation | None = None

    # -- the hooks --

    def evaluator(self, derivation: Derivation) -> Evaluator:
        self.derivation = derivation
        prev = self.previous
        if prev is not None:
            old = prev.derivation
            self.same_model = _model(old) == _model(derivation)
            self.changed = set() if self.same_model else _changed_nodes(old, derivation)
            self.old = {c.claim.label: c for c in prev.claims}
            self.leading = _leading(old.claims, derivation.claims)
            self.leading_drafted = _leading(_drafted(old), _drafted(derivation))
            self.same_names = _skeleton(old.claims) == _skeleton(derivation.claims)
        seeds = tuple(self.pool.get(None, ()))
        if prev is not None and self.same_model:
            assert prev.evaluator is not None
            self.ev = _warm(derivation, prev.evaluator, seeds=seeds)
        else:
            self.ev = Evaluator(derivation, seeds=seeds)
        self.signature = _signature(self.ev)
        return self.ev

    def kept(self, claim: Claim, ev: Evaluator) -> tuple[ClaimResult, ...] | None:
        at, self.position = self.position, self.position + 1
        was = self.old.get(claim.label)
        if (
            was is None
            or not _same_claim(was.claim, claim, [c for r in was.results for c in r.checks])
            or not self._still(claim, at)
        ):
            return None
        from symtf.checking import lineage

        self.kept_claims += 1
        self.states[claim.label] = was.state
        self.given.append((claim, len(was.results)))
        if was.state is not None:  # the lines' memory as after this line
            for k, v in was.state.items():
                setattr(ev, k, _copy(v))
            self.signature = _signature(ev)
        *copies, own = was.results
        return (
            *(ClaimResult(lineage.copy_claim(claim, r.checks[0]), r.checks) for r in copies),
            ClaimResult(claim, own.checks),
        )

    def checked(self, claim: Claim, ev: Evaluator, results: int) -> None:
        self.given.append((claim, results))
        signature = _signature(ev)
        if signature != self.signature:
            self.states[claim.label] = _state(ev)
            self.signature = signature
        else:
            self.states[claim.label] = None

    def settled(self, report: DerivationReport) -> None:
        self.results = report.results
        at = 0
        for claim, n in self.given:
            self.grouped[claim.label] = report.results[at : at + n]
            at += n
        self.complete = at == len(report.results)

    def variants(self, derivation: Derivation, ev: Evaluator) -> dict[tuple[str, str], Any]:
        from symtf.checking.reuse import Variants

        self.variant_cache = Variants({k: v for k, v in self.pool.items() if k is not None})
        prev = self.previous
        if prev is not None and self.same_model:
            from symtf.errors import SymtfError
            from symtf.graph.conventions import switch

            for key, old in prev.variants.items():
                if old is None:
                    self.variant_cache[key] = None
                    continue
                try:
                    variant = switch(key[0]).apply(derivation, key[1])
                    self.variant_cache[key] = _warm(
                        variant, old, base=ev, seeds=tuple(self.pool.get(key, ()))
                    )
                except SymtfError:  # pragma: no cover - applied to the same model before
                    continue
            # a variant an earlier check of the document built of this same model (an edit
            # elsewhere, undone since): its traces too, when its exact values are named in
            # this check's base backend
            for pooled, evs in self.pool.items():
                if pooled is None or pooled in self.variant_cache:
                    continue
                try:
                    variant = switch(pooled[0]).apply(derivation, pooled[1])
                except SymtfError:
                    continue
                same = next((e for e in evs if _same_variant(e, variant, ev)), None)
                if same is not None:
                    self.variant_cache[pooled] = _warm(variant, same, base=ev, seeds=tuple(evs))
        return self.variant_cache

    def findings(
        self,
        replayed: Derivation,
        report: DerivationReport,
        printed: Mapping[str, Mapping[tuple[int, ...], Printed]],
        status: Mapping[tuple[Any, ...], tuple[str, str]],
    ) -> dict[str, dict[Any, Any]]:
        self.printed, self.status, self.replayed = printed, status, replayed
        prev = self.previous
        out: dict[str, dict[Any, Any]] = {}
        if prev is None or not self.same_model or not self.same_names:
            return out
        for r in report.results:
            label = r.claim.label
            was = prev.causes.get(label)
            if was is None or r.claim.step is None or r.claim.expression is not None:
                continue
            key = self._cause_key(r)
            where = r.claim.where
            if was[0][1:] == key[1:] and (was[0][0] == where or was[0][0] not in repr(was[1])):
                out[label] = copy.deepcopy(was[1])
                self.causes[label] = (key, was[1])
        self.kept_causes = len(out)
        return out

    def found(self, findings: Mapping[str, Mapping[Any, Any]]) -> None:
        for label, found in findings.items():
            result = next((r for r in self.results or () if r.claim.label == label), None)
            if result is None or result.claim.step is None:
                continue
            self.causes[label] = (self._cause_key(result), copy.deepcopy(dict(found)))

    def _seed(self, key: tuple[str, str] | None, ev: Evaluator) -> None:
        kept = self.pool.setdefault(key, [])
        if all(e is not ev for e in kept):
            kept.append(ev)

    # -- the rules --

    def _still(self, claim: Claim, at: int) -> bool:
        """Whether a claim the same as before keeps its verdicts (see the module's docstring)."""
        d = self.derivation
        assert d is not None
        prev = self.previous
        assert prev is not None
        if claim.expression is not None or getattr(claim, "assertion", None) is not None:
            if not (self.same_model and self.same_names and at < self.leading):
                return False
            from symtf.checking.repeated import article_order

            found = article_order(claim, d)
            return found is None or found[1] < self.leading_drafted
        if claim.step is None:
            return False
        if self.same_model:
            return True
        old = prev.derivation
        if (
            self.changed is None
            or old.computed_in is not None
            or d.computed_in is not None
            or old.rounded_inputs
            or d.rounded_inputs
            or (old.path, old.symbols, old.model.vocab) != (d.path, d.symbols, d.model.vocab)
        ):
            return False  # the settings read the whole model
        return not (_reads(claim) & self.changed)

    def _cause_key(self, result: ClaimResult) -> Any:
        """What the causes of a claim's off numbers are found from (see the module's docstring)."""
        step = result.claim.step
        assert step is not None and self.ev is not None
        near = self._upstream(step) | _norm_names(step)
        printed = {s: dict(self.printed[s]) for s in sorted(near) if s in self.printed}
        status = {e: v for e, v in self.status.items() if e[0] in near}
        assert self.replayed is not None
        replayed = _model(self.replayed)
        claim = dataclasses.replace(result.claim, line=None, printed_lines=(), where="")
        return (
            result.claim.where,  # (compared apart: it only names the claim in messages)
            claim,
            result.checks,
            frozenset(self.printed),
            printed,
            status,
            replayed,
        )

    def _upstream(self, step: str) -> set[str]:
        if self._inputs is None:
            assert self.derivation is not None and self.ev is not None
            self._inputs = _inputs(self.derivation, self.ev.exact_trace())
        return _closure(self._inputs, step)

    # -- the outcome --

    def checked_as(self, derivation: Derivation, report: DerivationReport) -> Checked:
        if not self.complete or self.results is None or self.ev is None:
            return Checked(derivation, report)  # a partial check: nothing to reuse later
        claims = tuple(
            _Claimed(claim, self.grouped[claim.label], self.states.get(claim.label))
            for claim, _ in self.given
            if claim.label in self.states and self.grouped.get(claim.label)
        )
        variants = dict(self.variant_cache)
        # the latest evaluator of each key; what it took its nodes from is let go (a chain
        # of seeds would keep every earlier check alive)
        mine: dict[tuple[str, str] | None, Evaluator] = {
            k: v for k, v in variants.items() if v is not None
        }
        mine[None] = self.ev
        pool: dict[tuple[str, str] | None, tuple[Evaluator, ...]] = {}
        for k in {*self.pool, *mine}:
            evs = [mine[k]] if k in mine else []
            evs += [e for e in self.pool.get(k, ()) if e is not mine.get(k)]
            pool[k] = tuple(evs[:POOLED])
            for e in pool[k]:
                e.seeds = ()
        return Checked(
            derivation,
            report,
            self.ev,
            claims,
            dict(self.causes),
            variants,
            (self.kept_claims, len(derivation.claims), self.kept_causes, self.same_model),
            pool,
        )


def _inputs(derivation: Derivation, trace: Any) -> dict[str, set[str]]:
    """Each node's inputs: its operands in the graph and those the trace shows a reader."""
    from symtf.graph.pipeline import graph_of

    out = {name: set(trace[name].inputs) for name in trace}
    for n in graph_of(derivation, _model(derivation)[2]).nodes:
        out.setdefault(n.name, set()).update(n.args, n.inputs)
    return out


def _closure(inputs: Mapping[str, set[str]], step: str) -> set[str]:
    """``step`` and every node it is computed from."""
    out = {step}
    todo = [step]
    while todo:
        for i in inputs.get(todo.pop(), ()):
            if i not in out:
                out.add(i)
                todo.append(i)
    return out


def _norm_names(step: str) -> set[str]:
    """The norm a worked piece belongs to, and its other worked pieces (diagnosis replays
    a norm from its input when the article recomputed its pieces)."""
    from symtf.checking.diagnose import _PIECES

    norm = step
    for piece in _PIECES:
        if step.endswith(piece):
            norm = step[: -len(piece)]
    return {norm, *(norm + piece for piece in _PIECES)}
