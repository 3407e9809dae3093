"""What the worker keeps between edits, and what an edit lets it reuse.

Kept warm for the life of the worker process: SymPy, python-flint, the op
registry, the drafting code and their caches (the imports alone are two thirds of
a cold ``symtf check``).

Kept per document, and reused when an edit allows:

- **the last results**: a text seen among the last few (a save, an undo) gets its
  result back whole, and the next edit starts from that text's search and check (an
  edit undone leaves nothing of itself in what the one after it reuses);
- **what the reading found in each segment.** Reading the article is done again for every
  text, but a segment the edit left as it was (the same text at the same lines and
  columns, after the same definitions) gives back what it gave before, without being read
  again (:mod:`symtf.draft.read.memo`);
- **the search's state before each printing.** Drafting reads the article (cheap),
  then searches the step behind each printed matrix in the article's order, each
  over the tensors known from the printings before it (most of the cost). When an
  edit leaves the first *k* printings as they were (same numbers, labels, lines and
  neighbours on their lines) and the article's equations and stated sizes too, the
  search resumes at printing *k* from the state it had there, instead of starting
  over: only the printings from the edit on are searched again. An article with
  code (notebooks, fenced Python) is searched whole: its code is translated in
  one pass interleaved with the printings;
- **the candidates' pre-filter values.** Each candidate's float64 value is a function
  of the candidate and the values of the tensors it reads; the document keeps them, keyed
  on exactly that, from search to search (and replay to replay): the search after an edit
  computes only the values over tensors the edit changed, or over candidates no earlier
  search of the document tried. The pool is asked in the walk that computes the values
  (one look-up a candidate, by the candidate; its values by the tokens of its inputs'
  values), and a candidate's inputs are worked out from those of the candidates it reads;
- **the check.** When the drafted derivation is the same text (an edit in the
  prose, or to a number no claim reads), its report: the report is a function of that
  text. Otherwise the derivation is checked again, reusing the last draft's check where
  the edit left it as it was (:mod:`symtf.checking.incremental`: its traces, the verdicts
  of the claims it did not change, the causes of off numbers none of whose inputs
  changed); the report is exactly the one ``symtf check`` gives, so that what the editor
  shows is what the command reports.

A derivation file (``kind`` ``toml``) is checked as ``symtf check`` checks it; its
numbers' places are those of their ``printed`` strings (:func:`symtf.fix.placed`).
"""

from __future__ import annotations

import dataclasses
import itertools
import operator
import time
import tomllib
import warnings
from collections import OrderedDict
from dataclasses import dataclass, field
from typing import Any

from symtf.checking.incremental import Checked
from symtf.draft.infer.search import Search
from symtf.draft.read.memo import SegmentMemo
from symtf.numbers import Printed

__all__ = ["Resumable", "State", "describe"]

#: Results kept per document (by text), for a save or an undo.
KEPT_RESULTS = 4
#: Documents whose state is kept (the least recently checked goes first).
KEPT_DOCUMENTS = 16
#: Pre-filter values a document's pool keeps (past this, it starts again).
POOLED_VALUES = 200_000


@dataclass
class _Doc:
    """A document's recent texts: for each, what its check found and its search."""

    kind: str
    name: str
    results: OrderedDict[
        str, tuple[dict[str, Any], Resumable | None, tuple[str, Checked] | None]
    ] = field(default_factory=OrderedDict)
    search: Resumable | None = None
    #: The last draft's derivation text and its check (its report is a function of that
    #: text alone; what it computed serves the check of the next draft).
    checked: tuple[str, Checked] | None = None
    #: The latest check of any of its texts (its traces serve the next check too).
    last: Checked | None = None
    #: What the last reading found in each segment of the text (:mod:`symtf.draft.read.memo`).
    segments: SegmentMemo = field(default_factory=SegmentMemo)


class State:
    """The worker's memory of each document (by the server's key for it).

    A check that is cancelled, or runs out of its budget, changes nothing here: a
    document's search, results and last check are replaced only once a new one is
    complete (an earlier search is read, never changed, by the one resuming it).
    """

    def __init__(self) -> None:
        self.docs: dict[str, _Doc] = {}

    def forget(self, key: str) -> None:
        """Drop what is kept for a document (closed, or its check was cancelled midway)."""
        self.docs.pop(key, None)

    def check(self, key: str, text: str, kind: str, name: str) -> tuple[dict[str, Any], str]:
        """Check a document's text: ``(found, what was reused)`` (see :func:`describe`).

        Raises:
            SymtfError: The text cannot be read as that kind of article.
        """
        from symtf.limits import guard

        doc = self.docs.pop(key, None)
        if doc is None or (doc.kind, doc.name) != (kind, name):
            doc = _Doc(kind, name)
        self.docs[key] = doc  # the most recently checked last
        while len(self.docs) > KEPT_DOCUMENTS:
            self.docs.pop(next(iter(self.docs)))
        if text in doc.results:  # a save, an undo: the result, search and check of that text
            doc.results.move_to_end(text)
            found, doc.search, its_check = doc.results[text]
            if its_check is not None:  # the next edit reuses the check of the text it edits
                doc.checked = its_check
            return found, "the result of the same text, checked before"
        if kind == "toml":
            found, reused = _derivation(text, name), "nothing (a derivation file)"
        else:
            start = time.perf_counter()
            with guard(name):
                draft, doc.search, reused = _drafted(text, kind, name, doc.search, doc.segments)
            if doc.checked is not None and doc.checked[0] == draft.toml:
                report = doc.checked[1].report  # the same derivation: the same report
                reused += ", and the check of the same drafted derivation"
            else:
                report, checked = _checked(draft, name, start, doc.checked, doc.last)
                doc.checked = (draft.toml, checked)
                if checked.evaluator is not None:
                    doc.last = checked
                kept, claims, causes, traces = checked.reused
                if kept or traces:
                    reused += (
                        f", and the verdicts of {kept} of {claims} claims"
                        + (f" (the causes of {causes})" if causes else "")
                        + (" with the traces" if traces else "")
                    )
            found = describe(report, draft.toml, text)
        doc.results[text] = (found, doc.search, doc.checked)
        while len(doc.results) > KEPT_RESULTS:
            doc.results.popitem(last=False)
        return found, reused


def _checked(
    draft: Any,
    name: str,
    start: float,
    previous: tuple[str, Checked] | None,
    latest: Checked | None = None,
) -> tuple[Any, Checked]:
    """The check of a draft, reusing the check of the document's previous draft (and the
    traces of its ``latest`` check)."""
    from symtf.checking import incremental
    from symtf.commands.draft import check_drafted

    last: list[Checked] = []

    def check(derivation: Any) -> Any:
        done = incremental.check(
            derivation, previous[1] if previous is not None else None, seeds=latest
        )
        last.append(done)
        return done.report

    report = check_drafted(draft, name, start=start, check=check)
    # the report is the last check's, with the draft's own fields (what it could not place)
    return report, dataclasses.replace(last[-1], report=report)


def _drafted(
    text: str,
    kind: str,
    name: str,
    previous: Resumable | None,
    segments: SegmentMemo | None = None,
) -> tuple[Any, Resumable | None, str]:
    """The draft of an article, resuming ``previous``'s search where the edit allows (and
    taking what the last reading found in the segments an edit left as they were)."""
    from symtf.draft import Draft, _collector_paused, draft_text, sizing
    from symtf.draft.article import read_article
    from symtf.draft.compose import compose

    start = time.perf_counter()
    article = read_article(text, kind, path=name, memo=segments)
    if article.code:  # code is translated in one pass with the printings: searched whole
        drafted = draft_text(text, kind, path=name, article=article)
        return drafted, None, "the warm process (an article with code)"
    sizing.size(article, name)  # refused as the command refuses it (limits, time left)
    search = Resumable(article, previous)
    with _collector_paused():
        search.run()
    composed = compose(article, search)
    draft = Draft(
        name,
        composed.toml,
        tuple(composed.unread),
        tuple(composed.unmapped),
        composed.printed,
        composed.inputs,
        composed.steps,
        time.perf_counter() - start,
    )
    n = len(article.printings)
    reused = (
        f"the search of printings 1 to {search.resumed_at} of {n}"
        if search.resumed_at
        else "the warm process"
    )
    return draft, search, reused


class Resumable(Search):
    """The draft's search over an article without code, with its state before each printing.

    ``previous``: the search of an earlier version of the article. When the two
    articles agree on their equations, stated sizes and first printings, the search
    starts from ``previous``'s state before the first printing that differs
    (:attr:`resumed_at` printings are not searched again).

    Past the printings the edit changed, a printing keeps its earlier outcome without
    being searched again when the search has come back to ``previous``'s state before it
    (the same tensors known, the same outcomes, but for the changed printings' notes) and
    its search read no printed number of another printing (:attr:`reads`): its candidates
    read only known tensors, none of which changed. A replay from the article's printed
    values, and a single number (which may repeat one printed before it), read printed
    numbers: those printings are searched again, and the state compared again after each.
    """

    def __init__(self, article: Any, previous: Resumable | None = None) -> None:
        super().__init__(article)
        self.checkpoints: list[dict[str, Any]] = []
        #: The memos the checkpoints hold prefixes of (the last run's, grown from the first).
        self.memos: dict[str, dict[Any, Any]] = {}
        self.resumed_at = 0
        #: Per printing: whether its search read printed numbers of other printings.
        self.reads: list[bool] = []
        #: How many printings after the edit kept their earlier outcome unsearched.
        self.adopted = 0
        self._reading = False
        self._previous: Resumable | None = None
        self._changed: frozenset[int] = frozenset()
        #: The document's pre-filter values, kept from search to search (:meth:`_tokens_for`).
        self.pool: _Pool = previous.pool if previous is not None else _Pool()
        #: The tokens of the tensors a candidate reads, by their keys, with the known
        #: tensors they were taken of (a replay's tensors, under the same keys, are others).
        self._tokens_of: dict[tuple[int, ...], tuple[tuple[Any, ...], tuple[int, ...]]] = {}
        #: Tokens by value (:meth:`_token`), each with the value it names.
        self._tokens: dict[int, tuple[Any, int]] = {}
        #: How many pre-filter values it took from the pool.
        self.took = 0
        start = _common_prefix(previous.article, article) if previous is not None else 0
        if previous is not None and 0 < start < len(previous.checkpoints):
            _restore(self, previous.checkpoints[start], previous.memos)
            self.checkpoints = previous.checkpoints[: start + 1]
            self.reads = previous.reads[:start]
            self.resumed_at = start
        if previous is not None and len(previous.reads) == len(previous.article.printings):
            changed = _changed_printings(previous.article, article)
            if changed is not None:
                self._previous, self._changed = previous, changed

    def run(self) -> None:
        """Search the printings from :attr:`resumed_at` on, then the displayed lines."""
        import numpy as np

        from symtf.backends import BallBackend
        from symtf.draft.infer.search import PREC

        printings = list(self.article.printings)
        self.memos.update((k, v) for k, v in vars(self).items() if _is_memo(k, v))
        if not self.checkpoints:
            self.checkpoints = [_snapshot(self)]
        with BallBackend(PREC) as xp, np.errstate(all="ignore"), warnings.catch_warnings():
            warnings.simplefilter("ignore", RuntimeWarning)  # the float pre-filter's reductions
            self._xp = xp
            k = self.resumed_at
            while k < len(printings):
                k = self._adopt(k)
                if k == len(printings):
                    break
                self._reading = False
                self._printing(printings[k])
                self.reads.append(self._reading)
                self.checkpoints.append(_snapshot(self))
                k += 1
            self._displays()
            self._xp = None
        self._previous = None  # what it took from the earlier search is its own now

    def _fill(self, exprs: Any) -> None:
        """The candidates' pre-filter values (see :meth:`_tokens_for`), the document's
        earlier searches' values taken where they hold (a replay's too: its values are over
        the tensors it replays, and so are its keys in the pool).

        The pool is asked in the same walk that computes the rest
        (:func:`~symtf.draft.infer.prefilter.fill`'s ``borrow``): a candidate it holds is
        not walked into; one it does not hold is computed over its inputs' values, which
        the pool may hold. A replay borrows from the main search's values what it does not
        change (:meth:`SearchState._fill <symtf.draft.infer.state.SearchState._fill>`)."""
        from symtf.draft.infer.prefilter import MISSING, fill
        from symtf.draft.templates import inputs

        known, memo, entries = self.known, self._memo, self.pool.entries
        missing = MISSING
        taken: set[int] = set()  # ids of the memo's keys taken from the pool
        tokens_for = self._tokens_for
        main, changed = self._exact_memo, self._replaying

        toks_of: dict[tuple[int, ...], tuple[int, ...]] = {}  # the known tensors stay put

        def borrow(e: Any) -> Any:
            got = entries.get(e)
            if got is not None:
                toks = toks_of.get(got[0])
                if toks is None:
                    toks = toks_of[got[0]] = tokens_for(got[0])
                v = got[1].get(toks, missing)
                if v is not missing:
                    taken.add(id(e))
                    return v
            if changed is not None and e in main and not inputs(e) & changed:
                return main[e]  # reads no value the replay changed
            return missing

        before = len(memo)
        fill(exprs, lambda k: known[k].value, memo, borrow)
        self.took += len(taken)
        self._give(
            [(e, v) for e, v in itertools.islice(memo.items(), before, None) if id(e) not in taken],
            toks_of,
        )

    def _token(self, key: int) -> int:
        """A known tensor's value as a small number: the same for two tensors of the
        document's searches (or replays) whose float64 values are the same, bit for bit."""
        v = self.known[key].value
        got = self._tokens.get(id(v))
        if got is not None and got[0] is v:
            return got[1]
        b: object = (
            b""
            if v is None
            else object()  # objects' bytes are their addresses: a token of its own
            if v.dtype.hasobject
            else v.dtype.str.encode() + repr(v.shape).encode() + v.tobytes()
        )
        t = self.pool.tokens.setdefault(b, len(self.pool.tokens))
        self._tokens[id(v)] = (v, t)  # the value held: its id names it while it is kept
        return t

    def _tokens_for(self, ins: tuple[int, ...]) -> tuple[int, ...]:
        """The values of the known tensors ``ins`` (a candidate's inputs), as tokens: with
        the candidate, its key in the pool.

        A candidate's pre-filter value is computed from those values and nothing else
        (:func:`~symtf.draft.infer.prefilter.fill`), so two searches agree on it whenever
        they agree on them (a key names one tensor within a search, whose value never
        changes once it is known)."""
        held = tuple(map(self.known.__getitem__, ins))
        got = self._tokens_of.get(ins)
        if got is not None and all(map(operator.is_, got[0], held)):
            return got[1]  # the same known tensors as when their tokens were taken
        toks = tuple(self._token(k) for k in ins)
        self._tokens_of[ins] = (held, toks)
        return toks

    def _give(
        self, computed: list[tuple[Any, Any]], toks_of: dict[tuple[int, ...], tuple[int, ...]]
    ) -> None:
        """Keep the values this search computed in the pool (``toks_of``: the tokens of the
        inputs of candidates, by their inputs, taken while the same tensors are known)."""
        pool = self.pool
        if pool.size > POOLED_VALUES or len(pool.tokens) > POOLED_VALUES:
            pool.clear()
            self._tokens, self._tokens_of = {}, {}
            toks_of.clear()  # the tokens start again
        entries, tokens_for = pool.entries, self._tokens_for
        for e, v in computed:
            got = entries.get(e)
            if got is None:
                got = entries[e] = (_inputs(e, entries), {})
            toks = toks_of.get(got[0])
            if toks is None:
                toks = toks_of[got[0]] = tokens_for(got[0])
            got[1][toks] = v
        pool.size += len(computed)

    def _printed_entries(self) -> dict[int, dict[tuple[int, int], Printed]]:
        self._reading = True  # a replay, or a witness over rounded inputs: printed numbers
        return super()._printed_entries()

    def _adopt(self, k: int) -> int:
        """Take the earlier search's outcomes of the printings from ``k`` on that need no
        search (see the class docstring); the first printing to search next."""
        prev = self._previous
        if prev is None or any(c >= k for c in self._changed) or k >= len(prev.checkpoints):
            return k
        printings = self.article.printings
        end = k
        while end < len(printings) and not prev.reads[end] and printings[end].size > 1:
            end += 1
        if end == k:
            return k
        assert len(self.checkpoints) == k + 1
        patches = _equivalent(self.checkpoints[k], prev.checkpoints[k])
        if patches is None:
            return k
        for at in range(k + 1, end + 1):
            self.checkpoints.append(_patched(prev.checkpoints[at], patches, self))
        _restore(self, self.checkpoints[end], self.memos, memo=False)
        self.reads.extend(prev.reads[k:end])
        self.adopted += end - k
        return end


def _inputs(e: Any, entries: dict[Any, tuple[tuple[int, ...], Any]]) -> tuple[int, ...]:
    """The known tensors a candidate reads, in order (:func:`symtf.draft.templates.inputs`),
    taking those of the candidates it reads from the pool's entries (a candidate's values
    are given after those of the candidates it reads: most are there)."""
    from symtf.draft.templates import Call, Ref

    keys: set[int] = set()
    for a in e.args:
        kind = type(a)
        if kind is Ref:
            keys.add(a.key)
        elif kind is Call:
            got = entries.get(a)
            keys.update(got[0] if got is not None else _inputs(a, entries))
    return tuple(sorted(keys))


@dataclass
class _Pool:
    """A document's candidates' pre-filter values, by candidate and input values."""

    #: By candidate: the known tensors it reads (in order), and its values by the tokens
    #: of their values.
    entries: dict[Any, tuple[tuple[int, ...], dict[tuple[int, ...], Any]]] = field(
        default_factory=dict
    )
    #: A token for each float64 value seen (its dtype, shape and bytes).
    tokens: dict[object, int] = field(default_factory=dict)
    #: How many values it has been given since it started (again).
    size: int = 0

    def clear(self) -> None:
        """Start again (the tokens name values; the values go with them)."""
        self.entries.clear()
        self.tokens.clear()
        self.size = 0


def _common_prefix(old: Any, new: Any) -> int:
    """How many of the first printings an edit left as they were (0: none can be reused).

    Printings compare whole (key, label, role, numbers, lines and the text of their
    lines), so a change on a printing's line changes the printing. A displayed line
    that changed ends the prefix at the first printing on or after its line (a
    printing's search asks whether a displayed line on its own line prints it).
    """
    if (
        old.code
        or new.code
        or old.equations != new.equations
        or old.dims != new.dims
        or old.kind != new.kind
    ):
        return 0
    n = 0
    for a, b in zip(old.printings, new.printings, strict=False):
        if a != b:
            break
        n += 1
    changed = [
        min(a.line, b.line) for a, b in zip(old.displays, new.displays, strict=False) if a != b
    ]
    if len(old.displays) != len(new.displays):
        shorter = min(len(old.displays), len(new.displays))
        rest = [*old.displays[shorter:], *new.displays[shorter:]]
        changed.append(min(d.line for d in rest))
    if changed:
        first = min(changed)
        n = min(n, next((i for i, p in enumerate(new.printings) if p.line >= first), n))
    return n


def _changed_printings(old: Any, new: Any) -> frozenset[int] | None:
    """The printings (by position) an edit changed, their numbers or a displayed line on
    their line; ``None`` when the edit changed more than printings can tell (the article's
    equations, sizes, headings or code, or how many printings there are), or changed a single
    number (an equation may read it as a size or a scale)."""
    from symtf.draft.infer.statements import _heading_lines

    if (
        old.code
        or new.code
        or old.equations != new.equations
        or old.dims != new.dims
        or old.kind != new.kind
        or len(old.printings) != len(new.printings)
        or len(old.displays) != len(new.displays)
        or _heading_lines(old) != _heading_lines(new)
    ):
        return None
    lines = {
        line
        for a, b in zip(old.displays, new.displays, strict=True)
        if a != b
        for line in (a.line, b.line)
    }
    out = set()
    for k, (a, b) in enumerate(zip(old.printings, new.printings, strict=True)):
        if (a.key, a.parts) != (b.key, b.parts):
            return None
        if a != b or a.line in lines or b.line in lines:
            if a.size == 1 or b.size == 1:
                return None
            out.add(k)
    return frozenset(out)


#: What an edited printing's search may leave different in the state of the search, the
#: later printings reading none of it: its outcome's note and the tensor's (the draft's
#: comments), the printed numbers it holds, its candidates, and its rejected guesses.
_NOTES = ("note", "candidates", "printing")


def _equivalent(now: dict[str, Any], then: dict[str, Any]) -> dict[str, Any] | None:
    """Whether two snapshots of the search differ only in what the edited printings' notes
    say (:data:`_NOTES`): the differences to carry over, else ``None``."""
    if now.keys() != then.keys():
        return None
    patches: dict[str, Any] = {"known": {}, "outcomes": {}, "_evidential": {}}
    for name, a in now.items():
        b = then[name]
        if isinstance(a, (_Prefix, _Alias)) or name == "_replay_cache":
            continue  # caches
        if name == "known":
            if a.keys() != b.keys():
                return None
            for key, x in a.items():
                if not _same_known(x, b[key]):
                    return None
                patches["known"][key] = x[0].matched
        elif name == "outcomes":
            if list(a) != list(b):
                return None
            for key, x in a.items():
                y = b[key]
                if x is y:
                    continue
                if _outcome_key(x) != _outcome_key(y):
                    return None
                patches["outcomes"][key] = x
        elif name == "_evidential":  # each printing's own rejected guesses, read by it alone
            patches["_evidential"] = {k: v for k, v in a.items() if b.get(k) is not v}
            if set(b) - set(a):
                patches["_evidential"].update({k: None for k in set(b) - set(a)})
        else:
            try:
                if not (a is b or bool(a == b)):
                    return None
            except (TypeError, ValueError):  # an array compared entry by entry
                return None
    return patches


def _same_known(a: tuple[Any, ...], b: tuple[Any, ...]) -> bool:
    """Two snapshots of a known tensor that differ at most in their note (``matched``).

    Its values are a function of its step over earlier tensors (or of its printed entries,
    for a given one), and those are compared."""
    x, y = a[0], b[0]
    if a[1:] != b[1:] or type(x) is not type(y):
        return False
    if x is y:
        return True
    for f in dataclasses.fields(x):
        if f.name in ("matched", "value", "ball"):
            continue
        u, v = getattr(x, f.name), getattr(y, f.name)
        if f.name in ("labels", "aliases", "lineage"):
            continue  # compared in the snapshot's own tuple
        try:
            if not (u is v or bool(u == v)):
                return False
        except (TypeError, ValueError):
            return False
    if x.expr is None and not x.rows:  # a given tensor not read from printed rows
        return x.ball is y.ball
    return True


def _outcome_key(o: Any) -> tuple[Any, ...]:
    """What later printings read of an outcome (all of it but :data:`_NOTES`)."""
    p = o.printing
    rest = tuple(getattr(o, f.name) for f in dataclasses.fields(o) if f.name not in _NOTES)
    return (rest, p.key, p.kind, p.label, p.role, p.lines, p.cell, p.parts, p.shape)


def _patched(snapshot: dict[str, Any], patches: dict[str, Any], search: Any) -> dict[str, Any]:
    """An earlier search's snapshot with the edited printings' notes of this one, and with
    this search's memos (their entries hold for it too: the same tensors are known)."""
    out = dict(snapshot)
    for name, v in snapshot.items():
        if isinstance(v, _Prefix):
            out[name] = _Prefix(len(search.memos[name]))
        elif name == "_replay_cache":
            out[name] = None
    known = dict(out["known"])
    for key, matched in patches["known"].items():
        if key in known:
            x = known[key]
            known[key] = (dataclasses.replace(x[0], matched=matched), *x[1:])
    out["known"] = known
    outcomes = dict(out["outcomes"])
    outcomes.update((k, v) for k, v in patches["outcomes"].items() if k in outcomes)
    out["outcomes"] = outcomes
    evidential = dict(out.get("_evidential", {}))
    for k, v in patches["_evidential"].items():
        if v is None:
            evidential.pop(k, None)
        else:
            evidential[k] = v
    if "_evidential" in out:
        out["_evidential"] = evidential
    return out


@dataclass(frozen=True)
class _Alias:
    """In a snapshot: this attribute was the same object as another one (``_memo`` and
    ``_exact_memo`` are), and stays so when restored."""

    name: str


@dataclass(frozen=True)
class _Prefix:
    """In a snapshot: a memo (a cache the search only adds to) held its first ``size`` entries."""

    size: int


#: Attributes of the search that are not its state (or are kept apart).
_SKIPPED = (
    "article",
    "_xp",
    "checkpoints",
    "resumed_at",
    "memos",
    "reads",
    "adopted",
    "_reading",
    "_previous",
    "_changed",
    "pool",
    "_tokens",
    "_tokens_of",
    "took",
)


def _is_memo(name: str, value: Any) -> bool:
    """The search's caches: each entry is a value of an expression over earlier tensors,
    added once; an entry made before printing *k* stays right after an edit at *k*."""
    return isinstance(value, dict) and (name == "_memo" or name.endswith("_memo"))


def _snapshot(search: Any) -> dict[str, Any]:
    """The search's state between two printings, cheaply: memos by their size, known
    tensors with their mutable parts, other containers copied one level down."""
    from symtf.draft.infer.target import Known

    out: dict[str, Any] = {}
    first: dict[int, str] = {}
    for k, v in vars(search).items():
        if k in _SKIPPED:
            continue
        if isinstance(v, (dict, list, set)) and id(v) in first:
            out[k] = _Alias(first[id(v)])
            continue
        first[id(v)] = k
        if _is_memo(k, v):
            search.memos[k] = v
            out[k] = _Prefix(len(v))
        elif isinstance(v, dict):
            out[k] = {
                key: (x, tuple(x.labels), frozenset(x.aliases), frozenset(x.lineage))
                if isinstance(x, Known)
                else x
                for key, x in v.items()
            }
        elif isinstance(v, (list, set)):
            out[k] = type(v)(v)
        else:
            out[k] = v
    return out


def _restore(
    search: Any, snapshot: dict[str, Any], memos: dict[str, dict[Any, Any]], *, memo: bool = True
) -> None:
    """Put a snapshot's state into a search (every container a fresh copy).

    ``memo``: whether its memos are restored too (else the search keeps its own).
    """
    for k, v in snapshot.items():
        if isinstance(v, _Alias):
            continue
        if isinstance(v, _Prefix):
            if memo:
                setattr(search, k, dict(itertools.islice(memos[k].items(), v.size)))
        elif isinstance(v, dict):
            setattr(
                search,
                k,
                {
                    key: dataclasses.replace(
                        x[0], labels=list(x[1]), aliases=set(x[2]), lineage=set(x[3])
                    )
                    if isinstance(x, tuple) and len(x) == 4 and hasattr(x[0], "labels")
                    else x
                    for key, x in v.items()
                },
            )
        elif isinstance(v, (list, set)):
            setattr(search, k, type(v)(v))
        else:
            setattr(search, k, v)
    for k, v in snapshot.items():
        if isinstance(v, _Alias) and memo:
            setattr(search, k, getattr(search, v.name))


def _derivation(text: str, name: str) -> dict[str, Any]:
    """A derivation file's text checked as ``symtf check`` checks the file."""
    from pathlib import Path

    from symtf import fix
    from symtf.commands.fixing import check_text

    report = check_text(Path(name), text, None)  # the caller holds the time budget
    found = describe(report, text, text)
    checks = found["derivation"]["checks"]
    for c, p in zip(checks, fix.placed(report, text), strict=True):
        if p.place is not None:  # where in this file the printed number is
            c["file_place"] = list(p.place)
    found["toml"] = None  # the document is the derivation
    return found


def describe(report: Any, toml: str, text: str) -> dict[str, Any]:
    """A checked document as plain data for the server.

    ``derivation``: the report as ``symtf check --format json`` writes it (``title``,
    ``checks``, ``unchecked``, ``counts``); ``fixes``: every :class:`symtf.fix.Fix`;
    ``toml``: the derivation (an article's draft); ``steps``: each step's expression by name.
    """
    from symtf import fix
    from symtf.checking.report import Report
    from symtf.renderers.json import report_dict

    d = report_dict(Report((report,)))["derivations"][0]
    plan = (  # an article's places are the report's own fields: planned from the same dicts
        fix.plan_checks(report.article, text, d["checks"])
        if report.article is not None
        else fix.plan(report, text)
    )
    try:
        steps = tomllib.loads(toml).get("steps", {})
    except ValueError:
        steps = {}
    return {
        "derivation": {k: d[k] for k in ("title", "checks", "unchecked", "counts") if k in d},
        "fixes": [dataclasses.asdict(f) for f in plan.fixes],
        "toml": toml,
        "steps": {str(k): str(v) for k, v in steps.items() if isinstance(v, str)},
    }
