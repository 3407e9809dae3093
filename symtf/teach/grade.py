"""Grade a student's answers to an exercise, and find where their chain went off.

Every answer is classified with symtf's verdicts against the exact value
(``0.487`` and ``0.4870`` are both right; a slip is a slip). An answer that is
off is then explained the way :mod:`symtf.checking.diagnose` explains an article:

1. **Replay from the student's own numbers.** The step is recomputed from what
   the student saw on the sheet and what they wrote in their earlier blanks. If
   that reproduces their answer, the mistake is not here: it is ``inherited``
   from an earlier answer of theirs (named as the root), or, when their earlier
   answers were right, ``propagated-rounding`` (they computed from rounded
   numbers).
2. **Convention search.** The step is recomputed under the alternative
   conventions of :mod:`symtf.graph.conventions` (no ÷√d_k, unbiased variance, …);
   a convention that reproduces every off answer in the row is reported
   ("your A_1 row 2 used the unscaled scores").
3. **A slip in the writing** (:mod:`symtf.checking.slips`, shared with the
   diagnosis of articles): rows or columns swapped, a table transposed, a row
   truncated instead of rounded (before the conventions), then a single answer with
   its sign flipped, its decimal point off, two digits swapped or a neighbour's value.
4. Otherwise the cause is ``unexplained``.

The first answer, in the order of the computation, whose cause is not
``inherited`` is where the student's chain first went off.
"""

from __future__ import annotations

import hashlib
import re
import tomllib
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, cast

from symtf import files
from symtf.checking.diagnose import printed_values
from symtf.checking.diagnose.conventions import convention_variants
from symtf.checking.diagnose.replay import Override, overlaps, replay_with_printed
from symtf.checking.evaluation import Evaluator, classify
from symtf.checking.wording import place
from symtf.errors import SpecError, SymtfError
from symtf.numbers import ROUNDING_MODES, Printed, parse_printed, toml_float
from symtf.spec import MAX_FILE_BYTES, Derivation, loads
from symtf.trace import Trace
from symtf.visible import json_text, toml_string

GOOD = ("exact", "rounded")

#: What a convention did, in a student's words.
_CONVENTION_WORDS = {
    "no-sqrt-dk": "used the unscaled scores (no division by √d_k)",
    "sqrt-dmodel": "divided the scores by √d_model instead of √d_k",
    "divide-by-dk": "divided the scores by d_k instead of √d_k",
    "unbiased-variance": "divided the squared deviations by d − 1 instead of d",
    "mask-missing": "left out the causal mask",
    "mask-after-softmax": "applied the mask after the softmax",
    "mask-after-softmax-unnormalized": "zeroed the future weights after the softmax without renormalising",
    "softmax-columns": "took the softmax down the columns instead of along the rows",
    "k-not-transposed": "multiplied Q by K instead of by Kᵀ",
    "weights-left": "multiplied by the transposed weight matrix (W·x)",
    "pre-norm": "put the norm before the sublayer (pre-norm)",
    "post-norm": "put the norm after the residual add (post-norm)",
    "gelu-tanh": "used the tanh approximation of GELU",
    "gelu-erf": "used the exact (erf) GELU",
}


@dataclass(frozen=True)
class KeyBlank:
    """One blank as the key records it."""

    id: str
    label: str
    step: str
    index: tuple[int, int]
    decimals: int
    rounding: str
    answer: str


@dataclass
class Graded:
    """The grade of one answer.

    Attributes:
        blank: The blank.
        answer: What the student wrote (``None``: left empty).
        verdict: ``exact``, ``rounded``, ``slip``, ``wrong``, ``undecided``, ``incomplete``
            (right, to fewer decimals than asked) or ``missing``.
        expected: The correct rounding at the student's precision.
        explanation: Why, in a sentence.
        cause: For an off answer: ``propagated-rounding``, ``inherited``, ``convention``,
            a slip in the writing (``sign-flip``, ``decimal-shift``, ``digit-transposition``,
            ``copied-neighbour``, ``truncation``, ``swapped-rows``, ``swapped-columns``,
            ``transposed``; see :mod:`symtf.checking.slips`) or ``unexplained``.
        root: The blank id an inherited mistake comes from.
        convention: The convention that reproduces it.
    """

    blank: KeyBlank
    answer: str | None
    verdict: str
    expected: str | None
    explanation: str
    cause: str | None = None
    root: str | None = None
    convention: str | None = None
    notes: list[str] = field(default_factory=list)

    @property
    def right(self) -> bool:
        """Whether the answer is right."""
        return self.verdict in GOOD


@dataclass
class GradeResult:
    """A graded answer file."""

    key: str
    student_file: str
    student: str
    title: str
    graded: list[Graded]
    first_off: str | None
    steps: list[tuple[str, str, dict[str, int]]]
    roots: list[str] = field(default_factory=list)

    @property
    def all_right(self) -> bool:
        """Whether every blank has a right answer."""
        return all(g.right for g in self.graded)


# ----------------------------------------------------------------------------- reading


#: Largest key or answer file, in bytes (the derivation's own cap).
MAX_ANSWER_BYTES = MAX_FILE_BYTES


def _read_toml(path: Path, what: str) -> dict[str, Any]:
    text = files.read_text(path, MAX_ANSWER_BYTES, name=str(path), what=what)
    return _parse_toml(text, path)


def _parse_toml(text: str, path: Path) -> dict[str, Any]:
    try:
        return tomllib.loads(text, parse_float=toml_float)
    except ValueError as e:
        raise SpecError(f"{path}: not valid TOML ({e})") from None
    except RecursionError:
        raise SpecError(f"{path}: not valid TOML (nested too deeply)") from None


def read_key(path: Path) -> tuple[Derivation, list[KeyBlank], dict[str, Any]]:
    """Read a key written by ``symtf exercise`` and the derivation it names.

    Raises:
        SpecError: When the key is malformed, or its derivation is missing or changed.
    """
    data = _read_toml(path, "an exercise key")
    if data.get("symtf_key") != 1:
        raise SpecError(
            f"{path}: symtf_key: expected 1 (a key written by symtf exercise), found {data.get('symtf_key')!r}"
        )
    dname = data.get("derivation")
    if (
        not isinstance(dname, str)
        or not dname
        or "/" in dname
        or "\\" in dname
        or dname.startswith(".")
    ):
        raise SpecError(f"{path}: derivation: expected a file name beside the key, found {dname!r}")
    dpath = path.parent / dname
    try:  # beside the key, for real: a link out of the key's folder is refused
        real, roots = files.within(dname, files.folder_of(path), "derivation")
    except SpecError as e:
        raise SpecError(f"{path}: {e}") from None
    # Read once, capped like any derivation; the digest and the parse see the same bytes.
    text = files.read_bytes(real, MAX_FILE_BYTES, name=str(dpath), what="a derivation", roots=roots)
    digest = data.get("sha256")
    if digest != hashlib.sha256(text).hexdigest():
        raise SpecError(
            f"{path}: sha256: {dpath} is not the derivation this key was written for "
            "(it was changed after symtf exercise wrote the key)"
        )
    try:
        source = text.decode("utf-8")
    except UnicodeDecodeError as e:
        raise SpecError(
            f"{dpath}: expected UTF-8 text, found an undecodable byte at offset {e.start}"
        ) from None
    d = loads(source, str(dpath))
    blanks_raw = data.get("blanks")
    if not isinstance(blanks_raw, list) or not all(isinstance(b, dict) for b in blanks_raw):
        raise SpecError(f"{path}: blanks: expected an array of tables ([[blanks]])")
    blanks = []
    for n, b in enumerate(blanks_raw):
        where = f"{path}: blanks[{n}]"
        try:
            idx = b["index"]
            kb = KeyBlank(
                str(b["id"]),
                str(b["label"]),
                str(b["step"]),
                (int(idx[0]), int(idx[1])),
                int(b["decimals"]),
                str(b.get("rounding", "half-up")),
                str(b.get("answer", "")),
            )
        except (KeyError, TypeError, ValueError, IndexError):
            raise SpecError(
                f"{where}: expected id, label, step, index = [i, j] and decimals"
            ) from None
        if kb.rounding not in ROUNDING_MODES:
            raise SpecError(
                f"{where}.rounding: expected one of {', '.join(ROUNDING_MODES)}, found {kb.rounding!r}"
            )
        blanks.append(kb)
    return d, blanks, data


def _answer_key(name: str) -> str:
    """``answers.NAME`` as TOML writes it (quoted unless it is a bare key)."""
    bare = name and all(ch.isascii() and (ch.isalnum() or ch in "-_") for ch in name)
    return f"answers.{name}" if bare else f"answers.{toml_string(name)}"


def _blank_named(name: str, ids: list[str]) -> str | None:
    """The blank id an answer's name means: the id itself, or ``1``/``blank 1`` for ``?1``."""
    if name in ids:
        return name
    m = re.fullmatch(r"(?:blank\s*)?\??\s*(\d+)", name.strip(), re.I)
    if m is not None and f"?{int(m[1])}" in ids:
        return f"?{int(m[1])}"
    return None


def read_answers(path: Path, blanks: list[KeyBlank]) -> tuple[str, dict[str, Printed | None]]:
    """Read a student's answer file: ``(student name, blank id -> answer or None)``.

    Raises:
        SpecError: For an unknown blank name or an answer that is not a plain decimal.
    """
    data = _read_toml(path, "an answer file")
    student = data.get("student", "")
    if not isinstance(student, str):
        raise SpecError(f"{path}: student: expected a string, found {type(student).__name__}")
    answers = data.get("answers")
    if not isinstance(answers, dict):
        raise SpecError(f'{path}: answers: expected a table [answers] with "?1" = "…" lines')
    ids = [b.id for b in blanks]
    by_name = {}
    for name in answers:
        bid = _blank_named(str(name), ids)
        if bid is None:
            raise SpecError(
                f"{path}: {_answer_key(name)}: no such blank in the key (blanks: {', '.join(ids)})"
            )
        if bid in by_name:
            raise SpecError(f"{path}: {_answer_key(name)}: a second answer to blank {bid}")
        by_name[bid] = answers[name]
    out: dict[str, Printed | None] = {}
    for b in blanks:
        v = by_name.get(b.id, "")
        where = f"{path}: {_answer_key(b.id)}"
        if hasattr(v, "text"):  # a TOML float, read from its text (0.4870 keeps its zero)
            v = v.text
        elif isinstance(v, int) and not isinstance(v, bool):
            v = str(v)
        if not isinstance(v, str):
            raise SpecError(
                f'{where}: expected the answer as a string like "0.496", found {type(v).__name__}'
            )
        if not v.strip():
            out[b.id] = None
            continue
        p = parse_printed(v, where=where)
        if p.is_neg_inf or p.is_fraction:
            raise SpecError(f"{where}: expected a decimal number like 0.496, found {v!r}")
        out[b.id] = p
    return student, out


# ----------------------------------------------------------------------------- grading


def at_asked_precision(p: Printed, decimals: int) -> Printed:
    """An answer with its trailing zeros beyond the asked decimals dropped.

    ``0.5950`` for a 3-decimal blank is read as ``0.595``: zeros add no digits the
    answer was asked for. Digits that are not zeros are kept (``0.5952`` is graded
    at 4 decimals).
    """
    text = p.text
    if p.decimals <= decimals or not re.fullmatch(r"[+-]?\d*\.\d+", text):
        return p
    keep = len(text)
    extra = p.decimals - decimals
    while extra > 0 and text[keep - 1] == "0":
        keep -= 1
        extra -= 1
    if keep == len(text):
        return p
    return parse_printed(text[:keep].rstrip("."), where="answer")


def _ancestors(trace: Trace, step: str) -> set[str]:
    seen: set[str] = set()
    frontier = list(trace[step].inputs)
    while frontier:
        s = frontier.pop()
        if s in seen or s not in trace:
            continue
        seen.add(s)
        frontier.extend(trace[s].inputs)
    return seen


def grade(key_path: Path, student_path: Path) -> GradeResult:
    """Grade ``student_path`` against the key at ``key_path``.

    Raises:
        SpecError: For a malformed key or answer file.
    """
    d, blanks, _ = read_key(key_path)
    student, answers = read_answers(student_path, blanks)
    ev = Evaluator(d)
    trace = ev.exact_trace()
    for b in blanks:
        shape = trace.shape(b.step) if b.step in trace else None
        if shape is None or not (0 <= b.index[0] < shape[0] and 0 <= b.index[1] < shape[1]):
            raise SpecError(
                f"{key_path}: blank {b.id}: no entry {b.step}[{b.index[0]}, {b.index[1]}] in the derivation"
            )
    order = {name: k for k, name in enumerate(trace)}
    blanks = sorted(blanks, key=lambda b: (order[b.step], b.index))
    graded: list[Graded] = []
    for b in blanks:
        p = answers[b.id]
        if p is None:
            graded.append(Graded(b, None, "missing", b.answer, "left empty"))
            continue
        asked = at_asked_precision(p, b.decimals)
        answers[b.id] = asked
        verdict, expected, why = classify(ev.entry(b.step, *b.index), asked, b.rounding)
        g = Graded(b, p.text, verdict, expected, why)
        # fewer decimals than asked are incomplete, unless they are the exact value itself
        # (``0`` for an entry that is exactly 0: padding the zeros changes no digit)
        if p.decimals < b.decimals and verdict in GOOD and verdict != "exact":
            g.verdict = "incomplete"
            g.explanation = (
                f"incomplete: give {b.decimals} decimals ({p.text} is right to {p.decimals})"
            )
        graded.append(g)
    _diagnose(d, ev, trace, graded, answers)
    first = _first_off(trace, graded)
    steps = _per_step(d, trace, graded)
    roots = [
        g.blank.id for g in graded if g.verdict in ("slip", "wrong") and g.cause != "inherited"
    ]
    return GradeResult(
        str(key_path), str(student_path), student, d.title, graded, first, steps, roots
    )


def _sheet_numbers(
    d: Derivation, trace: Trace, graded: list[Graded], answers: dict[str, Printed | None]
) -> dict[str, dict[tuple[int, ...], Printed]]:
    """The numbers the student worked from: the sheet's printed values and their own answers."""
    from symtf.teach.exercise import covered

    shown = printed_values(d, trace)
    hidden = covered(d, trace, [(g.blank.id, g.blank.step, g.blank.index) for g in graded])
    for step, i, j in hidden:
        entries = shown.get(step)
        if entries is not None:
            entries.pop((i, j), None)
    for g in graded:
        p = answers[g.blank.id]
        if p is not None:
            shown.setdefault(g.blank.step, {})[g.blank.index] = p
    return shown


def _diagnose(
    d: Derivation,
    ev: Evaluator,
    trace: Trace,
    graded: list[Graded],
    answers: dict[str, Printed | None],
) -> None:
    off = [g for g in graded if g.verdict in ("slip", "wrong")]
    if not off:
        return
    numbers = _sheet_numbers(d, trace, graded, answers)
    replays: dict[str, tuple[Evaluator, Evaluator]] = {}
    by_step_row: dict[tuple[str, int], list[Graded]] = {}
    deferred: list[Graded] = []
    for g in off:
        b = g.blank
        if b.step not in replays:
            replays[b.step] = (
                replay_with_printed(ev, d, Override(numbers, b.step), b.step),
                replay_with_printed(ev, d, Override(numbers, b.step, widen=True), b.step),
            )
        exact_rp, wide_rp = replays[b.step]
        p = answers[b.id]
        assert p is not None
        q = exact_rp.entry(b.step, *b.index)
        try:
            v = classify(q, p, b.rounding)[0]
        except (SymtfError, TypeError):
            v = "undecided"
        consistent = v in GOOD
        wide_only = False
        if not consistent:
            wide = wide_rp.ball_trace(128)
            consistent = wide_only = wide is not None and overlaps(
                wide.value(b.step)[b.index[0], b.index[1]], p
            )
        if wide_only:
            # only inputs at the edges of their rounding reach it: a slip that gives the
            # answer exactly (a row truncated) is named first, this is kept for the rest
            deferred.append(g)
            by_step_row.setdefault((b.step, b.index[0]), []).append(g)
            continue
        if consistent:
            _follows(g, d, numbers, trace, graded, exact_rp)
            continue
        by_step_row.setdefault((b.step, b.index[0]), []).append(g)
    _table_slips(ev, trace, by_step_row, answers, graded)  # rows/columns swapped, transposed
    for g in deferred:
        if g.cause is None:
            _follows(g, d, numbers, trace, graded, replays[g.blank.step][0])
    _conventions(d, trace, by_step_row, answers, ev)
    _entry_slips(ev, trace, by_step_row, answers, numbers)
    for group in by_step_row.values():
        for g in group:
            if g.cause is None:
                g.cause = "unexplained"
                g.explanation += (
                    "; recomputing from your own earlier numbers does not give it, nor does "
                    "any common alternative convention or a slip in writing it down"
                )


def _follows(
    g: Graded,
    d: Derivation,
    numbers: dict[str, dict[tuple[int, ...], Printed]],
    trace: Trace,
    graded: list[Graded],
    replay: Evaluator,
) -> None:
    """An answer that follows from the student's own numbers: inherited, or their rounding.

    ``replay``: the evaluator of the answer's step from the student's numbers.
    """
    b = g.blank
    anc = _ancestors(trace, b.step)
    earlier = [
        h
        for h in graded
        if h.blank.step in anc
        and h.verdict in ("slip", "wrong")
        and _depends(d, numbers, b, h.blank, replay)
    ]
    if earlier:
        root = earlier[0]
        g.cause, g.root = "inherited", root.root or root.blank.id
        g.explanation += (
            f"; but it follows from your own earlier numbers: the mistake came in at "
            f"{root.blank.id} ({_at(root.blank)})"
        )
    else:
        g.cause = "propagated-rounding"
        g.explanation += "; it follows from the rounded numbers you worked from"


def _step_exact(ev: Evaluator, step: str) -> Any:
    """The exact value of any entry of ``step`` as a certified ball (for symtf.checking.slips)."""
    from symtf.checking.causes import exact_balls

    return exact_balls(ev, step)


def _table_slips(
    ev: Evaluator,
    trace: Trace,
    groups: dict[tuple[str, int], list[Graded]],
    answers: dict[str, Printed | None],
    graded: list[Graded],
) -> None:
    """Name a step's answers written with its rows or columns swapped, or transposed, or truncated."""
    from symtf.checking import slips

    by_step: dict[str, list[Graded]] = {}
    for (step, _), group in groups.items():
        by_step.setdefault(step, []).extend(g for g in group if g.cause is None)
    for step, off in by_step.items():
        shape = trace.shape(step)
        if not off or shape is None:
            continue
        exact = _step_exact(ev, step)
        written: dict[
            tuple[int, ...], Printed
        ] = {  # every answer the student gave in this step, right or not
            g.blank.index: a
            for g in graded
            if g.blank.step == step and (a := answers[g.blank.id]) is not None
        }
        found = slips.table_slip(written, exact, shape, [g.blank.index for g in off])
        if found is not None:
            for g in off:
                g.cause = found.cause
                g.explanation += f"; {_words(found)}"
            continue
        # a student works row by row: a row truncated throughout, the others rounded
        for row in sorted({g.blank.index[0] for g in off}):
            in_row = [g for g in off if g.blank.index[0] == row]
            # a blank off its step is an answered one (grade checks each answer first)
            cut = [
                slips.truncation(cast(Printed, answers[g.blank.id]), exact(g.blank.index))
                for g in in_row
            ]
            mine: dict[tuple[int, ...], Printed] = {k: v for k, v in written.items() if k[0] == row}
            if len(in_row) > 1 and all(cut) and slips.truncated_throughout(mine, exact):
                for g, t in zip(in_row, cut, strict=True):
                    g.cause = "truncation"
                    g.explanation += f"; {_words(t)}"


def _entry_slips(
    ev: Evaluator,
    trace: Trace,
    groups: dict[tuple[str, int], list[Graded]],
    answers: dict[str, Printed | None],
    numbers: dict[str, dict[tuple[int, ...], Printed]],
) -> None:
    """Name a single answer written with a slip: a sign, the decimal point, two digits, a copy."""
    from symtf.checking import slips

    for (step, row), group in groups.items():
        shape = trace.shape(step)
        if shape is None:
            continue
        exact = _step_exact(ev, step)
        # the row's numbers: truncation is named when the rest of the row is consistent with it
        seen = {tuple(k): v for k, v in numbers.get(step, {}).items() if k[0] == row}
        for g in group:
            p = answers[g.blank.id]
            if g.cause is not None or p is None:
                continue
            found = slips.entry_slip(g.blank.index, p, exact, shape, seen)
            if found is not None:
                g.cause = found.cause
                g.explanation += f"; {_words(found)}"


def _words(found: Any) -> str:
    """What a slip in the writing was, said to the student once, then the slip's own numbers."""
    what: str = found.what
    if found.cause == "sign-flip":
        said = "you flipped the sign"
    elif found.cause == "decimal-shift":  # the decimal point is 1 place off (×10^1)
        said = f"your {what.removeprefix('the ')}"
    elif found.cause == "digit-transposition":
        said = "you swapped two digits"
    elif found.cause == "copied-neighbour":  # it is the value of the entry beside it (…)
        said = what.replace("it is", "you wrote", 1)
    elif found.cause == "truncation":
        said = "you truncated instead of rounding"
    elif found.cause in ("swapped-rows", "swapped-columns"):  # rows 1 and 2 are swapped
        said = f"you swapped {what.removesuffix(' are swapped')}"
    elif found.cause == "transposed":
        said = "you wrote the table transposed"
    else:
        said = what
    return f"{said}: {found.said}"


def _depends(
    d: Derivation,
    numbers: dict[str, dict[tuple[int, ...], Printed]],
    b: KeyBlank,
    on: KeyBlank,
    replay: Evaluator,
) -> bool:
    """Whether ``b``'s entry, replayed from the student's numbers, moves when ``on``'s does."""
    base = replay.ball_trace(128)
    nudge = Override(numbers, b.step, nudge=(on.step, on.index[0], on.index[1]))
    nudged = Evaluator(d, base=replay, override=nudge, fresh={on.step}, needed={b.step}).ball_trace(
        128
    )
    if base is None or nudged is None:
        return True  # cannot tell: keep the earlier mistake as a candidate
    x = base.value(b.step)[b.index[0], b.index[1]]
    y = nudged.value(b.step)[b.index[0], b.index[1]]
    return not (x.overlaps(y) and abs(float((x - y).mid())) < 1e-12)


def _conventions(
    d: Derivation,
    trace: Trace,
    groups: dict[tuple[str, int], list[Graded]],
    answers: dict[str, Printed | None],
    ev: Evaluator,
) -> None:
    variants: dict[tuple[str, str], Evaluator | None] = {}
    for (step, row), group in groups.items():
        best: tuple[int, str, str] | None = None
        for sw, scope, var in convention_variants(d, trace, step, variants, ev):
            try:
                t = var.ball_trace(128) or var.exact_trace()
            except SymtfError:
                continue
            if step not in t:
                continue
            n = 0
            for g in group:
                p = answers[g.blank.id]
                assert p is not None
                try:
                    ok = classify(var.entry(step, *g.blank.index), p, g.blank.rounding)[0] in GOOD
                except (SymtfError, TypeError):
                    ok = False
                if not ok:
                    n = -1
                    break
                n += 1
            if n > 0 and (best is None or n > best[0]):
                best = (n, sw.name, scope)
        if best is None:
            continue
        _, name, scope = best
        words = _CONVENTION_WORDS.get(name, f"followed a different convention ({name})")
        for g in group:
            g.cause = "convention"
            g.convention = name + (f"@{scope}" if scope else "")
            g.explanation += f"; your {g.blank.label}, row {row + 1} {words}"


def _first_off(trace: Trace, graded: list[Graded]) -> str | None:
    """Where the student's chain first went off, in words."""
    root = next(
        (g for g in graded if g.verdict in ("slip", "wrong") and g.cause != "inherited"), None
    )
    if root is None:
        missing = next((g for g in graded if g.verdict == "missing"), None)
        return (
            None
            if missing is None
            else f"your first empty blank is {missing.blank.id} ({missing.blank.label})"
        )
    b = root.blank
    anc = _ancestors(trace, b.step)
    right_before = [
        g for g in graded if g.blank.step in anc and g.right and g.blank.index[0] == b.index[0]
    ]
    if not right_before:
        right_before = [g for g in graded if g.blank.step in anc and g.right]
    text = ""
    if right_before:
        last = right_before[-1].blank
        text = f"your {last.label}, row {last.index[0] + 1} is right; "
    what = {
        "convention": f"your {b.label}, row {b.index[0] + 1} {_CONVENTION_WORDS.get((root.convention or '').split('@')[0], 'followed another convention')}",
        "propagated-rounding": f"your {_at(b)} is off only by the rounding of the numbers you used",
    }.get(
        root.cause or "",
        f"your {_at(b)} is {root.verdict} (should be {root.expected})",
    )
    return f"first off at {b.id} ({_at(b)}): {text}{what}"


def _at(b: Any) -> str:
    """A blank's place in the article's words: ``A_1, row 3, column 1``."""
    return f"{b.label}, {place(b.index, None)}"


def _per_step(
    d: Derivation, trace: Trace, graded: list[Graded]
) -> list[tuple[str, str, dict[str, int]]]:
    out: dict[str, tuple[str, dict[str, int]]] = {}
    for g in graded:
        _, counts = out.setdefault(g.blank.step, (g.blank.label, {}))
        counts[g.verdict] = counts.get(g.verdict, 0) + 1
    return [(step, label, counts) for step, (label, counts) in out.items()]


# ----------------------------------------------------------------------------- output


def render_text(r: GradeResult) -> str:
    """The grade as text for a terminal."""
    who = f"{r.student} ({r.student_file})" if r.student else r.student_file
    out = [f"Grading {who}", f"  against {r.key}: {r.title}", ""]
    for g in r.graded:
        b = g.blank
        where = _at(b)
        ans = g.answer if g.answer is not None else "—"
        out.append(f"  {b.id:<4} {where:<34} {ans:>10}  {g.verdict}")
        if not g.right:
            out.append(f"         {g.explanation}")
        for n in g.notes:
            out.append(f"         note: {n}")
    out.append("")
    out.append("Per step:")
    for step, label, counts in r.steps:
        parts = ", ".join(f"{n} {v}" for v, n in counts.items())
        out.append(f"  {label} ({step}): {parts}")
    total: dict[str, int] = {}
    for g in r.graded:
        total[g.verdict] = total.get(g.verdict, 0) + 1
    right = sum(1 for g in r.graded if g.right)
    out.append("")
    out.append(
        f"{len(r.graded)} blanks: {right} right"
        + "".join(
            f", {total[v]} {v}"
            for v in ("slip", "wrong", "undecided", "incomplete", "missing")
            if total.get(v)
        )
    )
    if r.first_off:
        out.append(r.first_off[0].upper() + r.first_off[1:] + ".")
    if len(r.roots) > 1:
        out.append(f"Mistakes of their own (not inherited): {', '.join(r.roots)}.")
    return "\n".join(out) + "\n"


def render_json(r: GradeResult) -> str:
    """The grade as JSON."""
    data = {
        "key": r.key,
        "student_file": r.student_file,
        "student": r.student,
        "title": r.title,
        "all_right": r.all_right,
        "first_off": r.first_off,
        "roots": r.roots,
        "answers": [
            {
                "id": g.blank.id,
                "label": g.blank.label,
                "step": g.blank.step,
                "index": list(g.blank.index),
                "answer": g.answer,
                "verdict": g.verdict,
                "expected": g.expected,
                "explanation": g.explanation,
                "cause": g.cause,
                "root": g.root,
                "convention": g.convention,
                "notes": g.notes,
            }
            for g in r.graded
        ],
        "steps": [{"step": s, "label": lab, "counts": c} for s, lab, c in r.steps],
    }
    return json_text(data, indent=2) + "\n"


__all__ = [
    "GradeResult",
    "Graded",
    "grade",
    "read_answers",
    "read_key",
    "render_json",
    "render_text",
]
