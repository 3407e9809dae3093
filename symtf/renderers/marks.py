"""The numbers an annotated page marks: where each stands, its verdict, and its note.

Each check of an article's report is one :class:`Mark`, placed by the fields the report
carries (:func:`place_of`), and so is each printed number the draft left out (marked
*not checked*). :class:`Marks` hands a text's marks out by line as they are drawn;
:func:`notes` draws those drawn away from their numbers (after a formula, or after the
block of their line).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any
from xml.etree import ElementTree as ET

from symtf.renderers._claims import place_of as claim_place
from symtf.renderers.html.style import VERDICT_WORDS
from symtf.renderers.tree import add, el

if TYPE_CHECKING:
    from symtf.checking.report import Check, DerivationReport

#: The symbol and words of a number the check left out.
UNCHECKED = ("○", "not checked")
#: Verdicts that count as off.
OFF = ("slip", "wrong")
RIGHT = ("exact", "rounded")


@dataclass(frozen=True)
class Place:
    """Where a number stands in the text being drawn.

    Attributes:
        line: 1-based line, in the file (Markdown, text, LaTeX) or, for a notebook, in its
            cell's source or its cell's printed outputs.
        start: 0-based offset of the number's first character on that line, in code
            points; ``None`` when only the line is known.
        end: One past its last character.
        cell: The notebook cell, if any.
        output: Whether the number was printed by the cell's code (its outputs).
    """

    line: int
    start: int | None = None
    end: int | None = None
    cell: int | None = None
    output: bool = False

    @property
    def unit(self) -> tuple[int | None, bool]:
        """The text the place is in: the file, or a cell's source or outputs."""
        return (self.cell, self.output)


@dataclass
class Mark:
    """A number to mark: its place, its verdict (or ``unchecked``) and what to say about it."""

    place: Place
    verdict: str
    printed: str
    note: list[ET.Element | str] = field(default_factory=list)
    key: int = 0

    @property
    def symbol(self) -> str:
        """The verdict's symbol (✓ ± ✗ ? ƒ, ○ for a number not checked)."""
        return UNCHECKED[0] if self.verdict == "unchecked" else VERDICT_WORDS[self.verdict][0]

    @property
    def words(self) -> str:
        """The verdict in a few words."""
        if self.verdict == "unchecked":
            return UNCHECKED[1]
        return {"exact": "exact", "rounded": "correctly rounded"}.get(self.verdict, self.verdict)


_WORST = {"wrong": 0, "slip": 1, "undecided": 2, "symbolic": 3, "unchecked": 4, "rounded": 5}


def _field(check: Any, name: str) -> Any:
    """A place field of a check: an attribute, or a JSON field of its ``extra``."""
    v = getattr(check, name, None)
    if v is None:
        extra = getattr(check, "extra", None)
        if isinstance(extra, Mapping):
            v = extra.get(name)
    return v


def _int(v: Any) -> int | None:
    return v if isinstance(v, int) and not isinstance(v, bool) and v >= 0 else None


def place_of(
    check: Any,
    claim_line: int | None,
    notebook: Mapping[int, tuple[int, int, bool]] | None = None,
) -> Place | None:
    """A check's place from the fields the report carries (see the module docstring).

    Args:
        check: The check (its place fields are attributes, or JSON fields in ``extra``).
        claim_line: The article line of its claim, used when the check has no line of its own.
        notebook: For a notebook: what each file line holds, ``(cell, line, output)``, to
            place a check known only by its file line.

    Returns:
        The place, or ``None`` when not even a line is known.
    """
    line = _int(_field(check, "source_line")) or claim_line
    col, end = _int(_field(check, "source_column")), _int(_field(check, "source_end_column"))
    width = end - col if col is not None and end is not None and end > col else None
    if notebook is not None:
        cell, cell_line = _int(_field(check, "cell_index")), _int(_field(check, "cell_line"))
        if cell is not None and cell_line:
            output = _field(check, "cell_output") is True
            start = _int(_field(check, "cell_column"))
            if start and width:
                return Place(cell_line, start - 1, start - 1 + width, cell, output)
            return Place(cell_line, None, None, cell, output)
        if line is None or line not in notebook:
            return None
        cell, cell_line, output = notebook[line]
        return Place(cell_line, None, None, cell, output)
    if line is None:
        return None
    if col and width:
        return Place(line, col - 1, col - 1 + width)
    return Place(line)


def _check_note(c: Check, label: str) -> list[ET.Element | str]:
    """What the check says about one printed number: its verdict, why, and the values."""
    head = VERDICT_WORDS[c.verdict][1]
    note: list[ET.Element | str] = [el("b", None, head), f" ({label})"]
    if c.explanation and c.explanation not in (head, c.verdict):
        note.append(f": {c.explanation}")
    values = " · ".join(
        x
        for x in (
            f"printed {c.printed}",
            f"correctly rounded {c.expected}"
            if c.expected is not None and c.expected != c.printed and c.verdict not in RIGHT
            else "",
            f"exact {c.exact}" if c.exact is not None else "",
        )
        if x
    )
    note += [el("br"), el("span", {"class": "muted"}, values)]
    return note


def marks_of(
    report: DerivationReport,
    drafted: Sequence[Any] = (),
    notebook: Mapping[int, tuple[int, int, bool]] | None = None,
) -> tuple[list[Mark], list[Mark]]:
    """The numbers to mark: each check of the report, and each printed number the draft
    left out (its claims with ``step = "?"`` and the claims the check could not read).

    Args:
        report: The article's report (``symtf.commands.draft.check_article``).
        drafted: Every claim of the draft (``Derivation.drafted``), for the numbers left out.
        notebook: For a notebook, what each file line holds (see :func:`place_of`).

    Returns:
        ``(placed, unplaced)``: the marks with a place, and those with none.
    """
    placed: list[Mark] = []
    unplaced: list[Mark] = []
    for r in report.results:
        for k, c in enumerate(r.checks):
            # the check's own place fields first, else its number's place on the claim (the
            # reader's columns), else the claim's line
            own = None if _int(_field(c, "source_column")) else claim_place(r, c, k)
            p = place_of(_Fields(own.fields()) if own else c, r.claim.source_line, notebook)
            m = Mark(p or Place(0), c.verdict, c.printed, _check_note(c, r.claim.label))
            (placed if p is not None else unplaced).append(m)
    checked = {(r.claim.label, r.claim.source_line) for r in report.results}
    left = [
        c
        for c in drafted
        if (c.label, c.source_line) not in checked and not getattr(c, "given", False)
    ]
    reasons = {(u.line, getattr(u, "label", "")): u for u in report.unchecked}
    for claim in left:
        why = _left_out_words(claim, reasons)
        entries = [p for row in claim.printed or () for p in row]
        places = tuple(getattr(claim, "places", ()) or ())
        for n, p in enumerate(entries):
            text = getattr(p, "text", str(p))
            own = places[n] if len(places) == len(entries) else None
            fields = _Fields(own.fields()) if own is not None else _NoFields()
            where = place_of(fields, claim.source_line, notebook)
            note: list[ET.Element | str] = [
                el("b", None, UNCHECKED[1]),
                f" ({claim.label}): {why}",
                el("br"),
                el("span", {"class": "muted"}, f"printed {text}"),
            ]
            m = Mark(where or Place(0), "unchecked", text, note)
            (placed if where is not None else unplaced).append(m)
    return placed, unplaced


class _NoFields:
    """A check with no place fields (a claim the check left out has only its line)."""

    extra: Mapping[str, Any] = {}


@dataclass(frozen=True)
class _Fields:
    """The report's place fields of one number (``symtf.place.Place.fields``), read as a
    check's ``extra`` is."""

    extra: Mapping[str, Any]


def _left_out_words(claim: Any, reasons: Mapping[tuple[int, str], Any]) -> str:
    line = claim.source_line or 0
    label = claim.label.removesuffix(f" (line {line})")
    u = reasons.get((line, label))
    if getattr(claim, "unmapped", False):
        why = str(u.note) if u is not None and hasattr(u, "note") else ""
        note = f" ({why})" if why else ""
        return f'No step of the draft explains this printing{note}: symtf draft writes it with step = "?" to map by hand.'
    reason = str(getattr(u, "reason", "")) if u is not None else ""
    first = reason.splitlines()[0] if reason else ""
    return f"The check cannot read this claim{': ' + first if first else ''}."


# ----------------------------------------------------------------------------- marks in text


class Marks:
    """The marks of one text (the file, or a notebook cell's source or outputs), by line.

    Each mark is drawn once: :meth:`take` hands out the marks of a line as they are placed,
    and :meth:`rest` what is left for the line-level notes.
    """

    def __init__(self, marks: Iterable[Mark]) -> None:
        self.by_line: dict[int, list[Mark]] = {}
        at: dict[Place, Mark] = {}
        for m in marks:
            same = at.get(m.place) if m.place.start is not None else None
            if same is not None:  # two checks of one printed number: one mark, both notes
                same.note += [el("br"), *m.note]
                if _WORST.get(m.verdict, 6) < _WORST.get(same.verdict, 6):
                    same.verdict = m.verdict
                continue
            at[m.place] = m
            self.by_line.setdefault(m.place.line, []).append(m)
        for ms in self.by_line.values():
            ms.sort(key=lambda m: m.place.start if m.place.start is not None else -1)
            end = -1
            for m in ms:  # a number inside another's span is marked by its line
                start, stop = m.place.start, m.place.end
                if start is None or stop is None:
                    continue
                if start < end:
                    m.place = Place(m.place.line, None, None, m.place.cell, m.place.output)
                else:
                    end = stop

    def on(self, line: int) -> list[Mark]:
        """The marks not yet drawn on a line (1-based) that have columns."""
        return [m for m in self.by_line.get(line, []) if m.place.start is not None]

    def drawn(self, m: Mark) -> None:
        """Record that a mark is drawn."""
        ms = self.by_line.get(m.place.line, [])
        if m in ms:
            ms.remove(m)

    def rest(self, lines: range) -> list[Mark]:
        """Every mark left on these lines (1-based), taken out."""
        out: list[Mark] = []
        for line in lines:
            out.extend(self.by_line.pop(line, []))
        return out

    def left(self) -> list[Mark]:
        """Every mark no block drew."""
        out = [m for ms in self.by_line.values() for m in ms]
        self.by_line.clear()
        return out


def details(m: Mark, *, math: bool = False) -> ET.Element:
    """The mark of one number: the number (or, after a formula, its tag) and its note."""
    title = f"{m.words}: {m.printed}"
    summary = el("summary", {"title": title, "aria-label": title})
    if math:
        add(
            summary,
            el("span", {"class": "sym"}, f"{m.symbol}{m.key}"),
            " ",
            el("span", {"class": "printed"}, m.printed),
        )
    else:
        add(
            summary,
            el("span", {"class": "printed"}, m.printed),
            el("span", {"class": "sym"}, m.symbol),
        )
    why = el("span", {"class": "why"}, *m.note)
    return el("details", {"class": f"num v-{m.verdict}", "id": f"n{m.key}"}, summary, why)


def line_words(p: Place) -> str:
    """``line 12``; in a notebook ``cell 3, line 2`` or ``cell 3, output line 1``."""
    if p.cell is None:
        return f"line {p.line}"
    return f"cell {p.cell}, {'output ' if p.output else ''}line {p.line}"


def notes(marks: Sequence[Mark], *, by_line: bool = False) -> ET.Element | None:
    """The notes of marks drawn away from their numbers (after a formula, or after the block
    of their line when no column is known): each number that is not right on its own, the
    right ones together."""
    if not marks:
        return None
    box = el("span", {"class": "notes line-mark" if by_line else "notes"})
    groups: dict[tuple[Any, ...], list[Mark]] = {}
    for m in marks:
        groups.setdefault((*m.place.unit, m.place.line) if by_line else (), []).append(m)
    for ms in groups.values():
        where = f" on {line_words(ms[0].place)}" if by_line else ""
        for m in ms:
            if m.verdict not in RIGHT:
                d = details(m, math=True)
                if by_line:
                    summary = d.find("summary")
                    assert summary is not None
                    add(summary, f" ({line_words(m.place)})")
                add(box, d, " ")
        right = [m for m in ms if m.verdict in RIGHT]
        if not right:
            continue
        if len(right) == 1:
            words = f" {right[0].key}: {right[0].printed} right{where}"
        else:
            words = f" {len(right)} numbers right{where} ({right[0].key}–{right[-1].key})"
        summary = el("summary", None, el("span", {"class": "sym"}, "✓"), words)
        body = el("span", {"class": "why"})
        for m in right:
            add(body, el("span", {"class": "sym"}, f"{m.symbol}{m.key}"), " ", *m.note, el("br"))
        add(box, el("details", {"class": "num v-rounded"}, summary, body), " ")
    return box


def text_with_marks(text: str, marks: Sequence[tuple[int, int, Mark]]) -> list[ET.Element | str]:
    """Text with the numbers at ``(start, end)`` offsets replaced by their marks."""
    out: list[ET.Element | str] = []
    at = 0
    for start, end, m in sorted(marks, key=lambda x: x[0]):
        if start < at:
            continue
        out.append(text[at:start])
        out.append(details(m))
        at = end
    out.append(text[at:])
    return out
