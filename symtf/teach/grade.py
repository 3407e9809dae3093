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
3. Otherwise the cause is ``unexplained``.

The first answer, in the order of the computation, whose cause is not
``inherited`` is where the student's chain first went off.
"""

from __future__ import annotations

import hashlib
import json
import tomllib
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from symtf.checking.diagnose import (
    _overlaps,
    _Override,
    _replay,
    convention_variants,
    printed_values,
)
from symtf.checking.evaluation import Evaluator, classify
from symtf.errors import SpecError, SymtfError
from symtf.numbers import ROUNDING_MODES, Printed, parse_printed, toml_float
from symtf.spec import Derivation, load
from symtf.trace import Trace

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
        verdict: ``exact``, ``rounded``, ``slip``, ``wrong``, ``undecided`` or ``missing``.
        expected: The correct rounding at the student's precision.
        explanation: Why, in a sentence.
        cause: For an off answer: ``propagated-rounding``, ``inherited``, ``convention``
            or ``unexplained``.
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


def _read_toml(path: Path, what: str) -> dict[str, Any]:
    try:
        raw = path.read_bytes()
    except OSError as e:
        raise SpecError(f"{path}: cannot read the {what} ({e.strerror or e})") from None
    if len(raw) > 2_000_000:
        raise SpecError(f"{path}: expected a {what} of at most 2,000,000 bytes, found {len(raw)}")
    try:
        return tomllib.loads(raw.decode("utf-8"), parse_float=toml_float)
    except UnicodeDecodeError as e:
        raise SpecError(
            f"{path}: expected UTF-8 text, found an undecodable byte at offset {e.start}"
        ) from None
    except ValueError as e:
        raise SpecError(f"{path}: not valid TOML ({e})") from None


def read_key(path: Path) -> tuple[Derivation, list[KeyBlank], dict[str, Any]]:
    """Read a key written by ``symtf exercise`` and the derivation it names.

    Raises:
        SpecError: When the key is malformed, or its derivation is missing or changed.
    """
    data = _read_toml(path, "key")
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
    try:
        text = dpath.read_bytes()
    except OSError as e:
        raise SpecError(f"{path}: derivation: cannot read {dpath} ({e.strerror or e})") from None
    digest = data.get("sha256")
    if digest != hashlib.sha256(text).hexdigest():
        raise SpecError(
            f"{path}: sha256: {dpath} is not the derivation this key was written for "
            "(it was changed after symtf exercise wrote the key)"
        )
    d = load(dpath)
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


def read_answers(path: Path, blanks: list[KeyBlank]) -> tuple[str, dict[str, Printed | None]]:
    """Read a student's answer file: ``(student name, blank id -> answer or None)``.

    Raises:
        SpecError: For an unknown blank name or an answer that is not a plain decimal.
    """
    data = _read_toml(path, "answer file")
    student = data.get("student", "")
    if not isinstance(student, str):
        raise SpecError(f"{path}: student: expected a string, found {type(student).__name__}")
    answers = data.get("answers")
    if not isinstance(answers, dict):
        raise SpecError(f'{path}: answers: expected a table [answers] with b1 = "…" lines')
    ids = [b.id for b in blanks]
    unknown = sorted(set(answers) - set(ids))
    if unknown:
        raise SpecError(
            f"{path}: answers.{unknown[0]}: no such blank in the key (blanks: {', '.join(ids)})"
        )
    out: dict[str, Printed | None] = {}
    for b in blanks:
        v = answers.get(b.id, "")
        where = f"{path}: answers.{b.id}"
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
        verdict, expected, why = classify(ev.entry(b.step, *b.index), p, b.rounding)
        g = Graded(b, p.text, verdict, expected, why)
        if p.decimals < b.decimals and verdict == "rounded":
            g.notes.append(f"{p.decimals} decimals given, {b.decimals} asked")
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
) -> dict[str, dict[tuple[int, int], Printed]]:
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
    for g in off:
        b = g.blank
        if b.step not in replays:
            replays[b.step] = (
                _replay(ev, d, _Override(numbers, b.step), b.step),
                _replay(ev, d, _Override(numbers, b.step, widen=True), b.step),
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
        if not consistent:
            wide = wide_rp.ball_trace(128)
            consistent = wide is not None and _overlaps(
                wide.value(b.step)[b.index[0], b.index[1]], p
            )
        if consistent:
            anc = _ancestors(trace, b.step)
            earlier = [
                h
                for h in graded
                if h.blank.step in anc
                and h.verdict in ("slip", "wrong")
                and _depends(d, numbers, b, h.blank, exact_rp)
            ]
            if earlier:
                root = earlier[0]
                g.cause, g.root = "inherited", root.root or root.blank.id
                g.explanation += (
                    f"; but it follows from your own earlier numbers: the mistake came in at "
                    f"{root.blank.id} ({root.blank.label} [{root.blank.index[0]}, {root.blank.index[1]}])"
                )
            else:
                g.cause = "propagated-rounding"
                g.explanation += "; it follows from the rounded numbers you worked from"
            continue
        by_step_row.setdefault((b.step, b.index[0]), []).append(g)
    _conventions(d, trace, by_step_row, answers, ev)
    for group in by_step_row.values():
        for g in group:
            if g.cause is None:
                g.cause = "unexplained"
                g.explanation += (
                    "; no replay from your earlier numbers and no alternative convention gives it"
                )


def _depends(
    d: Derivation,
    numbers: dict[str, dict[tuple[int, int], Printed]],
    b: KeyBlank,
    on: KeyBlank,
    replay: Evaluator,
) -> bool:
    """Whether ``b``'s entry, replayed from the student's numbers, moves when ``on``'s does."""
    base = replay.ball_trace(128)
    nudge = _Override(numbers, b.step, nudge=(on.step, on.index[0], on.index[1]))
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
                    ok = (
                        classify(var.entry(step, *g.blank.index), p, g.blank.rounding)[0]
                        in GOOD
                    )
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
            g.explanation += f"; your {g.blank.label} row {row} {words}"


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
        text = f"your {last.label} row {last.index[0]} is right; "
    what = {
        "convention": f"your {b.label} row {b.index[0]} {_CONVENTION_WORDS.get((root.convention or '').split('@')[0], 'followed another convention')}",
        "propagated-rounding": f"your {b.label} [{b.index[0]}, {b.index[1]}] is off only by the rounding of the numbers you used",
    }.get(
        root.cause or "",
        f"your {b.label} [{b.index[0]}, {b.index[1]}] is {root.verdict} (should be {root.expected})",
    )
    return f"first off at {b.id} ({b.step}[{b.index[0]}, {b.index[1]}]): {text}{what}"


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
        where = f"{b.label} [{b.index[0]}, {b.index[1]}]"
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
            f", {total[v]} {v}" for v in ("slip", "wrong", "undecided", "missing") if total.get(v)
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
    return json.dumps(data, indent=2, ensure_ascii=False) + "\n"


__all__ = [
    "GradeResult",
    "Graded",
    "grade",
    "read_answers",
    "read_key",
    "render_json",
    "render_text",
]
