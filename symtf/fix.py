"""Fixes: the slips and wrong numbers of a report as edits at their places in the file.

A :class:`Fix` is what ruff calls a fix: an :class:`Edit` (replace the characters
of one range with new text) and an *applicability*:

- ``safe``: applied by ``symtf check --fix``. The number's verdict is certain
  (``slip`` or ``wrong``), its place is known to the column, and the new number
  is right in every reading the report gives of it: the correct rounding at the
  printed digits (what the check calls ``expected``), written the way the old one
  was (its minus sign, its digits, its notation);
- ``unsafe``: an ``inherited`` number, wrong only because an upstream printed
  number was. It is applied only on request (``--fix-inherited``) and only
  together with the fix of its root;
- ``display-only``: shown, never applied. A displayed line that is right as
  written but off in its exact reading (``−0.487 + (−1.562) = −2.049``) is never
  rewritten into one that is wrong as written; it gets the suggestion to carry
  more digits or write ≈. So does every number whose place or new value is not
  certain (no column yet, a convention the article may mean, a print whose
  spelling cannot be kept), with the reason.

Places come from the report, never from searching the text: for an article, the
place fields of the JSON contract (``source_line``, ``source_column``,
``source_end_column``); for a derivation file, the claim's ``printed`` string,
found with :mod:`symtf.spec.toml_lines`, whose numbers must be exactly the
claim's printed entries in order. Before an edit is made, the text at its range
must spell the printed number; an edit never spans a line, so every other byte
of the file is kept.

Undecided and symbolic values are never touched; nothing here decides a verdict
or computes a value: the report's ``expected`` is the new number.
"""

from __future__ import annotations

import difflib
import itertools
import re
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from fractions import Fraction
from typing import Any

from symtf.checking.report import DerivationReport, Report
from symtf.errors import SymtfError
from symtf.numbers import parse_printed
from symtf.renderers import safe
from symtf.renderers._claims import located
from symtf.renderers.json import check_dict
from symtf.spec.toml_lines import locate, string_spans

__all__ = [
    "DISPLAY_ONLY",
    "SAFE",
    "UNSAFE",
    "Edit",
    "Fix",
    "Plan",
    "apply",
    "plan",
    "plan_checks",
    "unified_diff",
]

SAFE = "safe"
UNSAFE = "unsafe"
DISPLAY_ONLY = "display-only"

#: Verdicts a fix rewrites.
OFF = ("slip", "wrong")
#: Verdicts under which the printed number is right in that reading.
RIGHT = ("exact", "rounded")
#: Minus signs an article may write (the checks read them all as ``-``).
_MINUS = "-−–‐"
#: A printed number inside a derivation's ``printed`` string, an infinity among them.
_NUMBER = re.compile(
    r"(?<![\w.])[+\-−–‐]?(?:(?:\d+\.?\d*|\.\d+)(?:[eE][+\-]?\d+)?%?|inf\b|∞)", re.IGNORECASE
)


@dataclass(frozen=True)
class Edit:
    """Replace the characters ``[column, end_column)`` of ``line`` with ``new``.

    Attributes:
        line: 1-based line of the file (lines end at ``\\n``).
        column: 1-based column, in code points, of the first character replaced.
        end_column: 1-based column one past the last character replaced.
        old: The text replaced (checked before the edit is made).
        new: The text written instead.
    """

    line: int
    column: int
    end_column: int
    old: str
    new: str


@dataclass(frozen=True)
class Fix:
    """A fix (or a suggestion) for one printed number of a report.

    Attributes:
        applicability: :data:`SAFE`, :data:`UNSAFE` or :data:`DISPLAY_ONLY`.
        message: What the fix does, or why the number is not rewritten, in words.
        claim: The claim's label.
        index: The entry, as the JSON report gives it.
        verdict: The number's verdict (``slip`` or ``wrong``).
        printed: The number as printed.
        line: The line of the file the number is on, where known.
        edit: The edit, or ``None`` where none can be made.
        cause: The verdict's cause (``propagated-rounding``, ``inherited`` …).
        root: For an inherited number, the claim, step and index of its root.
        place: The report's place fields of the number (for editors: cell, columns).
    """

    applicability: str
    message: str
    claim: str
    index: tuple[int, ...] | None
    verdict: str
    printed: str
    line: int | None
    edit: Edit | None = None
    cause: str | None = None
    root: Mapping[str, Any] | None = None
    place: Mapping[str, Any] = field(default_factory=dict)

    @property
    def where(self) -> str:
        """``line 12, column 5`` (or ``line 12``, or ``claim "z"``) for messages."""
        if self.edit is not None:
            return f"line {self.edit.line}, column {self.edit.column}"
        column = self.place.get("source_column")
        if self.line is not None and self.place.get("source_line") == self.line and column:
            return f"line {self.line}, column {column}"
        if self.line is not None:
            return f"line {self.line}"
        return f"claim {self.claim!r}"


@dataclass(frozen=True)
class Plan:
    """Every fix and suggestion for one file.

    Attributes:
        path: The file (an article, or a derivation file).
        fixes: In file order.
    """

    path: str
    fixes: tuple[Fix, ...]

    def chosen(self, *, inherited: bool = False) -> list[Fix]:
        """The fixes ``--fix`` applies: the safe ones, and with ``inherited`` the inherited
        numbers whose root is fixed too."""
        safe_fixes = [f for f in self.fixes if f.applicability == SAFE and f.edit is not None]
        if not inherited:
            return safe_fixes
        roots = {_identity(f.claim, f.index) for f in safe_fixes}
        out = list(safe_fixes)
        for f in self.fixes:
            if f.applicability == UNSAFE and f.edit is not None and _root_fixed(f.root, roots):
                out.append(f)
        return sorted(out, key=lambda f: (f.edit.line, f.edit.column) if f.edit else (0, 0))

    @property
    def suggestions(self) -> list[Fix]:
        """What ``--fix`` does not apply, with its reason."""
        return [f for f in self.fixes if f.applicability != SAFE or f.edit is None]


def _identity(claim: str, index: Iterable[int] | None) -> tuple[str, tuple[int, ...] | None]:
    return claim, tuple(index) if index is not None else None


def _root_fixed(root: Mapping[str, Any] | None, fixed: set[tuple[str, Any]]) -> bool:
    if not root:
        return False
    index = root.get("index")
    return _identity(str(root.get("claim")), index) in fixed


# ----------------------------------------------------------------------------- planning


@dataclass(frozen=True)
class Placed:
    """One check of a report (as the JSON report writes it) and its number's place.

    Attributes:
        check: The check's JSON fields.
        place: ``(line, column, end_column)`` of its number in the file, or ``None``.
        line: The number's line, where known even without a column.
        why: Why the place is not known (``None`` when it is).
    """

    check: Mapping[str, Any]
    place: tuple[int, int, int] | None
    line: int | None
    why: str | None = None


def plan(derivation: DerivationReport, text: str) -> Plan:
    """The fixes of one checked file, given the file's text as the check read it.

    An article checked as it stands (``derivation.article``) is fixed at the places
    the report gives each number; a derivation file in its claims' ``printed``
    strings.
    """
    return _plan(derivation.article or derivation.path, text, placed(derivation, text))


def plan_checks(path: str, text: str, checks: Sequence[Mapping[str, Any]]) -> Plan:
    """The fixes of an article from its checks as the JSON report writes them.

    Each check's place is read from ``source_line``, ``source_column`` and
    ``source_end_column``; a check without a column is not fixed (it gets a
    display-only note saying so).
    """
    return _plan(path, text, [_article_placed(c) for c in checks])


def placed(derivation: DerivationReport, text: str) -> list[Placed]:
    """Every check of a report with the place of its number in ``text`` (the checked file)."""
    checks = [
        (x, check_dict(x.check, x.result, x.file, x.printed_line, x.line))
        for x in located(Report((derivation,)))
    ]
    if derivation.article is not None:
        return [_article_placed(d) for _, d in checks]
    return _derivation_placed(checks, text)


def _article_placed(c: Mapping[str, Any]) -> Placed:
    place = _place(c)
    line = c.get("source_line") if isinstance(c.get("source_line"), int) else None
    why = None if place else "its column is not in the report (places are known only to the line)"
    return Placed(c, place, line, why)


def _plan(path: str, text: str, checks: Sequence[Placed]) -> Plan:
    lines = text.split("\n")
    at: dict[tuple[int, int, int], list[Mapping[str, Any]]] = {}
    line_only: dict[int, list[Mapping[str, Any]]] = {}
    for c in checks:
        if c.place is not None:
            at.setdefault(c.place, []).append(c.check)
        elif c.line is not None:
            line_only.setdefault(c.line, []).append(c.check)
    fixes: list[Fix] = []
    for place, group in sorted(at.items()):
        off = [c for c in group if c.get("verdict") in OFF]
        if not off:
            continue
        blockers = [
            c
            for c in line_only.get(place[0], [])
            if _same_print(c.get("printed"), off[0].get("printed"))
        ]
        fixes.append(_article_fix(lines, place, group + blockers, off[0]))
    for c in checks:
        if c.place is None and c.check.get("verdict") in OFF:
            fixes.append(_unplaced(c.check, c.line, c.why or "its place is not known"))
    fixes.sort(key=lambda f: (f.line or 0, f.edit.column if f.edit else 0))
    return Plan(path, tuple(_without_overlaps(fixes)))


def _place(c: Mapping[str, Any]) -> tuple[int, int, int] | None:
    line, col, end = c.get("source_line"), c.get("source_column"), c.get("source_end_column")
    if isinstance(line, int) and isinstance(col, int) and isinstance(end, int) and end > col >= 1:
        return line, col, end
    return None


def _same_print(a: Any, b: Any) -> bool:
    try:
        return bool(parse_printed(str(a)).text == parse_printed(str(b)).text)
    except SymtfError:
        return False


def _base(c: Mapping[str, Any], line: int | None, **kw: Any) -> dict[str, Any]:
    index = c.get("index")
    return {
        "claim": str(c.get("claim")),
        "index": tuple(index) if isinstance(index, list) else None,
        "verdict": str(c.get("verdict")),
        "printed": str(c.get("printed")),
        "line": line,
        "cause": c.get("cause"),
        "root": c.get("root"),
        "place": {k: v for k, v in c.items() if k.startswith(("source_", "cell"))},
        **kw,
    }


def _unplaced(c: Mapping[str, Any], line: int | None, why: str) -> Fix:
    readings = _readings(c)
    shown = _suggested(c, readings)
    return Fix(DISPLAY_ONLY, f"not rewritten: {why}{shown}", **_base(c, line))


def _suggested(c: Mapping[str, Any], readings: list[tuple[str, Any, Any]]) -> str:
    expected = {e for _, _, e in readings if e is not None}
    if len(expected) == 1 and all(v in OFF for _, v, _ in readings):
        return f"; the article's value there is {next(iter(expected))}"
    return ""


def _readings(c: Mapping[str, Any]) -> list[tuple[str, Any, Any]]:
    """``(reading, verdict, expected)`` of every reading a check gives of its number."""
    out: list[tuple[str, Any, Any]] = []
    readings = [c, *(c.get("links") or [])]
    for r in readings:
        shown = False
        for name in ("as_displayed", "exact_reading"):
            sub = r.get(name)
            if isinstance(sub, Mapping):
                out.append((name, sub.get("verdict"), sub.get("expected")))
                shown = True
        if not shown:
            out.append(("exact", r.get("verdict"), r.get("expected")))
    return out


def _article_fix(
    lines: list[str],
    place: tuple[int, int, int],
    group: list[Mapping[str, Any]],
    first: Mapping[str, Any],
) -> Fix:
    line, col, end = place

    def note(applicability: str, message: str, edit: Edit | None = None) -> Fix:
        return Fix(applicability, message, **_base(first, line, edit=edit))

    readings = [r for c in group for r in _readings(c)]
    if any(v not in OFF + RIGHT for _, v, _ in readings):
        return note(DISPLAY_ONLY, "not rewritten: one of its readings is undecided or symbolic")
    if any(v in RIGHT for _, v, _ in readings):
        return note(DISPLAY_ONLY, _right_as_written(group))
    causes = {c.get("cause") for c in group}
    if "convention" in causes:
        return note(
            DISPLAY_ONLY,
            "not rewritten: a convention of the article reproduces it "
            f"({_conventions(group)}); if the article means the standard step, it reads "
            f"{first.get('expected')}",
        )
    expected = {str(e) for _, _, e in readings}
    if len(expected) != 1 or any(c.get("expected_value_truncated") for c in group):
        return note(
            DISPLAY_ONLY, "not rewritten: its readings disagree on the value it should have"
        )
    new_value = _value(group, next(iter(expected)))
    if line < 1 or line > len(lines) or end - 1 > len(lines[line - 1].rstrip("\r")):
        return note(DISPLAY_ONLY, f"not rewritten: line {line}, column {col} is not in the file")
    old = lines[line - 1][col - 1 : end - 1]
    if new_value is None or not _same_print(old, first.get("printed")):
        return note(
            DISPLAY_ONLY,
            f"not rewritten: the text at line {line}, column {col} ({safe.line(old)!r}) "
            f"is not the printed {first.get('printed')}",
        )
    return _rewrite(note, old, new_value, Edit(line, col, end, old, old), group)


def _value(group: list[Mapping[str, Any]], expected: str) -> Fraction | None:
    """The exact value of the new number: the checks' ``expected_value`` (a decimal)."""
    values = {c.get("expected_value") for c in group if c.get("expected_value") is not None}
    if len(values) != 1:
        try:
            p = parse_printed(expected)
        except SymtfError:
            return None
        return p.value
    try:
        return Fraction(str(next(iter(values))))
    except (ValueError, ZeroDivisionError):
        return None


def _rewrite(
    note: Callable[..., Fix],
    old: str,
    new_value: Fraction,
    edit: Edit,
    group: list[Mapping[str, Any]],
) -> Fix:
    new = spell(old, new_value)
    if new is None:
        return note(
            DISPLAY_ONLY,
            f"not rewritten: {safe.line(old)} cannot be written again in its own notation "
            f"with the value {_plain(new_value)}",
        )
    edit = Edit(edit.line, edit.column, edit.end_column, old, new)
    causes = {c.get("cause") for c in group}
    exact = next((c for c in group if c.get("exact")), None)
    of = f" of {_short(exact)}" if exact is not None else ""
    what = "the correct rounding"
    if "inherited" in causes:
        root = next((c.get("root") for c in group if c.get("root")), None)
        named = f" ({root.get('claim')})" if isinstance(root, Mapping) else ""
        return note(
            UNSAFE,
            f"{safe.line(old)} → {new}: {what}{of}; inherited from an upstream number "
            f"that was already off{named}: rewritten only with --fix-inherited, with its root",
            edit,
        )
    return note(SAFE, f"{safe.line(old)} → {new}: {what}{of}", edit)


def _short(c: Mapping[str, Any], digits: int = 10) -> str:
    """A check's exact value for a message: at most ``digits`` significant digits, cut, with ``…``."""
    text = str(c.get("exact"))
    mantissa, e, exponent = text.partition("e")
    kept, seen, out = 0, False, []
    for ch in mantissa:
        if ch.isdigit():
            seen = seen or ch != "0"
            if seen:
                kept += 1
            if kept > digits:
                break
        out.append(ch)
    cut = kept > digits or bool(c.get("exact_truncated"))
    return "".join(out) + ("…" if cut else "") + (e + exponent if e else "")


def _plain(x: Fraction) -> str:
    return str(x) if x.denominator == 1 else f"{float(x):.6g}"


def _conventions(group: list[Mapping[str, Any]]) -> str:
    names = [str(n) for c in group for n in (c.get("convention") or [])]
    return ", ".join(dict.fromkeys(names)) or "a named rewrite"


def _right_as_written(group: list[Mapping[str, Any]]) -> str:
    """The suggestion for a displayed line that is right as written, off in its exact reading."""
    line = next((c for c in group if isinstance(c.get("as_displayed"), Mapping)), None)
    if line is None:
        return (
            "not rewritten: the number is right in one of its readings "
            "(it is printed again where it is right)"
        )
    exact = line.get("exact_reading") or {}
    written = line.get("as_displayed") or {}
    expression = safe.line(line.get("expression", ""))
    printed = safe.line(line.get("printed"))
    if written.get("verdict") in RIGHT:
        value = _short(exact if exact.get("exact") else line)
        operands = [
            f"{o.get('literal')} is {o.get('unrounded')}"
            for o in exact.get("operands") or []
            if o.get("unrounded")
        ]
        carried = f" ({'; '.join(safe.line(o) for o in operands)})" if operands else ""
        return (
            f"display only: {expression} = {printed} is right as written; with the unrounded "
            f"values it is {safe.line(value)}, which rounds to "
            f"{safe.line(exact.get('expected'))}. Write ≈ instead of =, or carry more digits"
            f"{carried}: rewriting the result alone would make the line wrong as written"
        )
    return (
        f"display only: {expression} = {printed} is right in its exact reading "
        f"but not as written ({safe.line(written.get('expected'))}): show the digits it carries"
    )


def spell(old: str, value: Fraction) -> str | None:
    """``value`` written as ``old`` is written: its sign, digits and notation.

    Returns ``None`` when ``old``'s own value, written that way, would not give
    ``old`` back (a spelling this cannot keep), or when ``value`` needs more digits.

    >>> spell("−2.049", Fraction("-2.048"))
    '−2.048'
    >>> spell("6.3379e-02", Fraction("0.063380"))
    '6.3380e-02'
    >>> spell("42.0%", Fraction("0.419"))
    '41.9%'
    """
    try:
        p = parse_printed(old)
    except SymtfError:
        return None
    if p.value is None or p.is_fraction:
        return None
    sign = old[:1] if old[:1] in _MINUS + "+" else ""
    minus = sign if sign and sign != "+" else "-"

    def write(x: Fraction) -> str | None:
        try:
            t = p.format(x)
        except ValueError:  # more decimals than the print shows
            return None
        if t.startswith("-"):
            return minus + t[1:]
        return "+" + t if sign == "+" else t

    if write(p.value) != old:
        return None
    new = write(value)
    if new is None:
        return None
    try:
        back = parse_printed(new)
    except SymtfError:
        return None
    if back.value != value or back.style != p.style:
        return None
    return new


# ----------------------------------------------------------------------------- derivation files


def _derivation_placed(checks: list[tuple[Any, dict[str, Any]]], text: str) -> list[Placed]:
    """Places in the ``printed`` strings of a derivation file's claims."""
    rows = [r.removesuffix("\r") for r in text.split("\n")]
    even = len(text.splitlines()) == len(rows) - (1 if text.endswith("\n") else 0)
    keys = locate(text) if even else {}
    cells_of: dict[int, list[tuple[int, int, str]] | str] = {}
    out = []
    for x, d in checks:
        i = _claim_number(x.result.claim.where)
        line = keys.get(f"claims[{i}].printed")
        if not even:
            out.append(Placed(d, None, None, "the file ends lines with other characters than \\n"))
            continue
        if i not in cells_of:
            cells_of[i] = _printed_cells(rows, keys, i, x.result.claim)
        cells = cells_of[i]
        if isinstance(cells, str):
            out.append(Placed(d, None, line, cells))
            continue
        position = _position(x, len(cells))
        if position is None:
            out.append(Placed(d, None, line, "which printed entry this check is cannot be told"))
            continue
        n, offset, old = cells[position]
        out.append(Placed(d, (n, offset + 1, offset + 1 + len(old)), n))
    return out


def _claim_number(where: str) -> int:
    m = re.search(r"claims\[(\d+)\]$", where)
    return int(m.group(1)) if m else -1


def _printed_cells(
    rows: list[str], keys: Mapping[str, int], i: int, claim: Any
) -> list[tuple[int, int, str]] | str:
    """``(line, offset, text)`` of each printed entry of claim ``i``, in order, or why not."""
    line = keys.get(f"claims[{i}].printed")
    if i < 0 or line is None:
        return "its printed value is not written as a key of its own (printed = …)"
    spans = string_spans(rows, line)
    if not spans:
        return f"its printed value (line {line}) is not a string"
    quote = rows[line - 1][spans[0][1] - 1] if spans[0][1] >= 1 else ""
    if (
        len(spans) == 1
        and quote in "\"'"
        and rows[line - 1][spans[0][1] - 3 : spans[0][1]]
        not in (
            '"""',
            "'''",
        )
    ):
        n, offset, part = spans[0]
        close = _closing(part, quote)
        if close is None:
            return f"its printed string (line {line}) does not end on its line"
        spans = [(n, offset, part[:close])]
    if quote == '"' and any("\\" in part for _, _, part in spans):
        return f"its printed string (line {line}) holds escapes"
    found = [
        (n, offset + m.start(), m.group(0))
        for n, offset, part in spans
        for m in _NUMBER.finditer(part)
    ]
    entries = [p for row in claim.printed for p in row]
    if len(found) != len(entries) or not all(
        _same_print(t, p.text) for (_, _, t), p in zip(found, entries, strict=True)
    ):
        return f"the numbers of its printed string (line {line}) are not its entries one by one"
    return found


def _closing(part: str, quote: str) -> int | None:
    if quote == "'":
        k = part.find("'")
        return k if k >= 0 else None
    k = 0
    while k < len(part):
        if part[k] == "\\":
            k += 2
            continue
        if part[k] == '"':
            return k
        k += 1
    return None


def _position(x: Any, cells: int) -> int | None:
    """Which printed entry a check is: its place among the claim's checks, when they match."""
    checks = x.result.checks
    if len(checks) != cells:
        return None
    return int(x.position)


# ----------------------------------------------------------------------------- applying


def _without_overlaps(fixes: list[Fix]) -> list[Fix]:
    """Fixes whose edits would overlap become display-only (neither is applied)."""
    spans: dict[int, list[tuple[int, int]]] = {}
    for f in fixes:
        if f.edit is not None:
            spans.setdefault(f.edit.line, []).append((f.edit.column, f.edit.end_column))
    out = []
    for f in fixes:
        e = f.edit
        if e is not None and any(
            (a, b) != (e.column, e.end_column) and a < e.end_column and e.column < b
            for a, b in spans[e.line]
        ):
            f = Fix(
                DISPLAY_ONLY,
                f"not rewritten: its range overlaps another number's ({f.message})",
                f.claim,
                f.index,
                f.verdict,
                f.printed,
                f.line,
                None,
                f.cause,
                f.root,
                f.place,
            )
        out.append(f)
    # one place judged by several claims gives one fix
    seen: set[tuple[int, int, int]] = set()
    unique = []
    for f in out:
        if f.edit is not None:
            key = (f.edit.line, f.edit.column, f.edit.end_column)
            if key in seen:
                continue
            seen.add(key)
        unique.append(f)
    return unique


def apply(text: str, edits: Iterable[Edit]) -> str:
    """``text`` with the edits made; every other character is kept.

    Raises:
        SymtfError: When an edit's range does not hold its ``old`` text (the file
            changed since it was checked), or two edits overlap.
    """
    lines = text.split("\n")
    by_line: dict[int, list[Edit]] = {}
    for e in edits:
        by_line.setdefault(e.line, []).append(e)
    for n, group in by_line.items():
        if not 1 <= n <= len(lines):
            raise SymtfError(f"line {n}: no such line (the file changed since it was checked)")
        row = lines[n - 1]
        group.sort(key=lambda e: e.column)
        for a, b in itertools.pairwise(group):
            if b.column < a.end_column:
                raise SymtfError(f"line {n}: two edits overlap at column {b.column}")
        for e in reversed(group):
            if row[e.column - 1 : e.end_column - 1] != e.old:
                raise SymtfError(
                    f"line {n}, column {e.column}: expected {safe.line(e.old)!r}, found "
                    f"{safe.line(row[e.column - 1 : e.end_column - 1])!r} "
                    "(the file changed since it was checked)"
                )
            row = row[: e.column - 1] + e.new + row[e.end_column - 1 :]
        lines[n - 1] = row
    return "\n".join(lines)


def unified_diff(path: str, before: str, after: str) -> str:
    """A unified diff from ``before`` to ``after``, its text made safe for a terminal."""
    out = []
    for line in difflib.unified_diff(
        before.splitlines(keepends=True),
        after.splitlines(keepends=True),
        fromfile=path if path.startswith("/") else f"a/{path}",
        tofile=path if path.startswith("/") else f"b/{path}",
    ):
        body = line.rstrip("\r\n")
        shown = "\t".join(safe.line(part) for part in body.split("\t"))
        out.append(shown + "\n")
        if not line.endswith("\n"):
            out.append("\\ No newline at end of file\n")
    return "".join(out)
