"""Earlier displayed lines a literal stands for, read as functions of their rounded literals.

``y = 0.0347 × 0.9784 + … = 0.0630`` and then ``e^{0.0630} = 1.0651``: the second line's
0.0630 is y, whose exact reading is computed from literals that repeat earlier prints
(:mod:`symtf.checking.repeated`: each known only to its printed precision). The article
computed both lines from the unrounded inputs, so y is known only to the range those
intervals allow, and the chain's exact reading (the literals as written) is one point of
it. A witness for the second line may therefore move the first line's loose literals too,
as long as the first line's own printed result still holds at the same point: one point
of the inputs' intervals gives every printed number involved, never a point chosen for
one line that another line's print contradicts.

Each line is remembered after it is checked (:func:`remember`); a line that stands for
another through a literal reads it the same way, to :data:`DEPTH` lines back. An earlier
line's literals are entries of its own (keyed by its label and line), apart from the
literals of the line that repeats its result.
"""

from __future__ import annotations

from collections.abc import Hashable, Mapping, Sequence
from dataclasses import dataclass, field
from fractions import Fraction
from typing import Any

import sympy

from symtf.checking import repeated
from symtf.checking.displayed.rows import value_entries
from symtf.numbers import Interval, rounding_interval
from symtf.spec import Claim, Derivation

#: How many displayed lines back a chain of results standing for earlier results is read.
DEPTH = 4


@dataclass
class Line:
    """A displayed line as checked: how to evaluate it with its literals moved.

    Attributes:
        parsed: The line's expression.
        claim: Its claim (one printed result: only those are stood for by a literal).
        derivation: The derivation it belongs to.
        replace: The literals its exact reading replaced.
        resolve: How it resolves names.
        xp: The exact backend it is evaluated in.
        links: The earlier lines its own replaced literals stand for.
    """

    parsed: Any
    claim: Claim
    derivation: Derivation
    replace: dict[int, Any]
    resolve: Any
    xp: Any
    links: list[Link] = field(default_factory=list)
    _loose: list[repeated.Loose] | None = None

    @property
    def prefix(self) -> tuple[Any, ...]:
        return ("line", self.claim.label, self.claim.source_line)

    def loose(self) -> list[repeated.Loose]:
        """Its loose literals (found once, when a later line first needs them)."""
        if self._loose is None:
            self._loose = repeated.loose_literals(
                self.parsed, self.claim, self.derivation, self.replace
            )
        return self._loose

    def entries(self) -> dict[Hashable, Fraction]:
        out = repeated.loose_entries(self.loose(), self.prefix)
        for link in links(self):
            out.update(link.entries())
        return out

    def centres(self) -> dict[Hashable, Fraction]:
        out = repeated.loose_centres(self.loose(), self.prefix)
        for link in links(self):
            out.update(link.centres())
        return out

    def intervals(self) -> list[Interval]:
        out = repeated.loose_intervals(self.loose())
        for link in links(self):
            out += link.intervals()
        mode = "half-up" if self.claim.rounding == "any" else self.claim.rounding
        return out + [rounding_interval(p, mode) for row in self.claim.printed for p in row]

    def at(
        self, moves: Mapping[Any, Any], boxes: Mapping[Any, Any] | None = None
    ) -> tuple[Any, list[Any]]:
        values = dict(self.replace)
        moved, own = repeated.loose_values(self.loose(), moves, self.xp, self.prefix)
        values.update(moved)
        for link in links(self):
            values[link.pos], more = link.at(moves, boxes)
            own += more
        result = value_entries(
            self.parsed.evaluate(self.resolve, values, backend=self.xp, boxes=boxes)
        )
        return result[0], [*own, *result]


@dataclass(frozen=True)
class Link:
    """A literal of a line standing for an earlier line's result (``sign`` times it)."""

    pos: int
    sign: int
    line: Line

    def entries(self) -> dict[Hashable, Fraction]:
        return self.line.entries()

    def centres(self) -> dict[Hashable, Fraction]:
        return self.line.centres()

    def interval(self) -> Interval:
        c = self.line.claim
        return rounding_interval(c.printed[0][0], "half-up" if c.rounding == "any" else c.rounding)

    def intervals(self) -> list[Interval]:
        return self.line.intervals()

    def at(
        self, moves: Mapping[Any, Any], boxes: Mapping[Any, Any] | None = None
    ) -> tuple[Any, list[Any]]:
        value, must = self.line.at(moves, boxes)
        return self.sign * value, must


def links(line: Line) -> list[Link]:
    """The line's replaced literals that stand for an earlier line's result whose value
    moves with some rounded literal."""
    return [link for link in line.links if link.entries()]


def remember(
    ev: Any,
    parsed: Any,
    claim: Claim,
    derivation: Derivation,
    replace: Mapping[int, Any],
    resolve: Any,
    depth: int = DEPTH,
) -> Line:
    """The line as checked, kept (when it prints one result) for later lines whose
    literals stand for it; its own replaced literals that stand for an earlier kept line's
    result (as printed, or its negative) are linked to it, to ``depth`` lines back."""
    line = Line(parsed, claim, derivation, dict(replace), resolve, ev.exact_trace().backend)
    lines: dict[str, Line] = ev.displayed_lines
    for lit in parsed.literals:
        if lit.pos not in replace:
            continue
        for text, sign in ((lit.text, 1), ("-" + lit.text, -1)):
            label = ev.printed_labels.get(text)
            earlier = lines.get(label) if label is not None else None
            value = ev.printed_results.get(text)
            if earlier is None or value is None or isinstance(value, sympy.MatrixBase):
                continue
            if replace[lit.pos] == sign * value and _depth(earlier) < depth:
                line.links.append(Link(lit.pos, sign, earlier))
            break
    if len(claim.printed) == 1 and len(claim.printed[0]) == 1:
        lines[claim.label] = line
    return line


def literal_fields(parsed: Any, link: Link) -> dict[str, Any]:
    """The JSON fields of a literal standing for an earlier line's result."""
    return {
        "literal": _text(parsed, link),
        "stands_for": link.line.claim.label,
        "source_line": link.line.claim.source_line,
    }


def words(parsed: Any, chained: Sequence[Link]) -> list[str]:
    """What each literal standing for an earlier line's result is, in the article's words."""
    out = []
    for link in chained:
        c = link.line.claim
        where = f"line {c.source_line}" if c.source_line is not None else c.label
        named = "" if c.label.startswith("line ") else f"{c.label}, "
        out.append(
            f"{_text(parsed, link)} stands for the result of {named}{where}, computed "
            "from numbers known only to their printed precision (that line's printed result "
            "holds at the same point)"
        )
    return out


def _text(parsed: Any, link: Link) -> str:
    """The literal as the article writes it, its minus included when it is the result's."""
    text = next((lit.text for lit in parsed.literals if lit.pos == link.pos), "?")
    return f"-{text}" if link.sign < 0 else text


def _depth(line: Line) -> int:
    return 1 + max((_depth(link.line) for link in line.links), default=0)


__all__ = ["DEPTH", "Line", "Link", "links", "literal_fields", "remember", "words"]
