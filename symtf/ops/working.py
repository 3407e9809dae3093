"""The working of one entry of a step, as an op writes it by hand.

An op may give ``define(..., work=...)``: a function ``work(ctx, step, i, j)``
that writes how entry ``[i, j]`` of a recorded step is computed, as a formula
line in terms of other entries (``q[1,0]·k[1,0] + q[1,1]·k[1,1]``) and the same
line with the numbers substituted (``0.1·0.1 + 1.1·1.1``), or ``None`` where it
has no working for that step. Each line comes as LaTeX and as plain text
(:class:`Line`).

The working reads the step as the trace recorded it (:class:`Recorded`) and
writes entries and numbers through a :class:`Context`, which the consumer
provides (:mod:`symtf.teach.worked`): it decides how an entry is named and how
a number is written. This module holds what the workings share; each op's own
working sits beside its definition.
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Protocol, TypeAlias

#: Terms shown in a sum before it is elided.
MAX_TERMS = 8


@dataclass(frozen=True)
class Line:
    """One line of working, in LaTeX (math mode) and in plain text."""

    tex: str
    text: str


class Recorded(Protocol):
    """What a working reads of a step the trace recorded (:class:`symtf.trace.Step`)."""

    @property
    def name(self) -> str:
        """The step's name (``l0.h0.scores``)."""
        ...

    @property
    def inputs(self) -> tuple[str, ...]:
        """The names of the steps it was computed from, in the op's argument order."""
        ...

    @property
    def params(self) -> Mapping[str, Any]:
        """The op's parameters (a weight matrix, ``eps``, the rotary pairing …)."""
        ...

    @property
    def labels(self) -> Mapping[str, str]:
        """The symbols its formula is written with (``w`` → ``W_Q``)."""
        ...


class Context(Protocol):
    """How a working writes entries and numbers, and what it reads of other steps."""

    def ref(self, step: str, i: int, j: int) -> Line:
        """Entry ``[i, j]`` of ``step`` by name (``q[1,0]``), as the consumer names entries."""
        ...

    def plain_ref(self, step: str, i: int, j: int) -> Line:
        """Entry ``[i, j]`` of ``step`` by its short name, counted from 0, whatever names
        :meth:`ref` is given."""
        ...

    def val(self, step: str, i: int, j: int) -> Line:
        """The value of entry ``[i, j]`` of ``step`` as it is written into a formula
        (in parentheses when negative or a fraction); a truncation makes the working
        approximate."""
        ...

    def const(self, e: Any) -> Line:
        """An exact value (a weight, ε, an angle) written as :meth:`val` writes one."""
        ...

    def number(self, e: Any) -> Line:
        """An exact value written as it stands (no parentheses); it does not make the
        working approximate."""
        ...

    def value(self, step: str) -> Any:
        """The value of ``step`` (a backend matrix)."""
        ...

    def shape(self, step: str) -> tuple[int, ...] | None:
        """The shape of a matrix step, or ``None`` for a step that is not one."""
        ...


#: ``cell(step, i, j)``: how an entry is written, by name (:meth:`Context.ref`) or by
#: value (:meth:`Context.val`).
Cell: TypeAlias = Callable[[str, int, int], Line]

#: A worked entry: the formula line and the same line with the numbers substituted.
Entry: TypeAlias = tuple[Line, Line]

#: ``work(ctx, step, i, j)``: the working of entry ``[i, j]`` of a recorded step, or
#: ``None`` where the op has none for it.
Work: TypeAlias = Callable[[Context, Recorded, int, int], Entry | None]


def reads(n: int) -> Callable[[Work], Work]:
    """Decorator: the working applies to a step recorded with exactly ``n`` inputs.

    A step of the op recorded with other inputs (a template's own wiring) gets no working.
    """

    def decorate(work: Work) -> Work:
        @functools.wraps(work)
        def checked(ctx: Context, step: Recorded, i: int, j: int) -> Entry | None:
            if len(step.inputs) != n:
                return None
            return work(ctx, step, i, j)

        return checked

    return decorate


def dims(ctx: Context, step: str) -> tuple[int, ...]:
    """The shape of a matrix step.

    Raises:
        TypeError: For a step that is not a matrix (it has no entries to work).
    """
    shape = ctx.shape(step)
    if shape is None:
        raise TypeError(f"{step} is not a matrix step")
    return shape


def both(ctx: Context, build: Callable[[Cell], Line]) -> Entry:
    """The formula and the substituted line, when one template writes both.

    ``build(cell)`` writes the line from ``cell``: :meth:`Context.ref` gives the formula
    (``q[1,0]``), :meth:`Context.val` the same line with the numbers in.
    """
    return build(ctx.ref), build(ctx.val)


def infix(
    ctx: Context, a: tuple[str, int, int], tex_op: str, text_op: str, b: tuple[str, int, int]
) -> Entry:
    """``a op b`` of two entries (each ``(step, i, j)``)."""
    return both(
        ctx,
        lambda cell: Line(
            f"{cell(*a).tex} {tex_op} {cell(*b).tex}", f"{cell(*a).text} {text_op} {cell(*b).text}"
        ),
    )


def terms(cells: Sequence[Line]) -> Line:
    """``a + b + …``."""
    return _join(cells, " + ", " + ")


def sum_of_products(
    pairs: Sequence[tuple[Line, Line, Line, Line]], bias: tuple[Line, Line] | None = None
) -> Entry:
    """``a·b + …`` as (formula, substituted), elided after :data:`MAX_TERMS` terms.

    Args:
        pairs: Each term as (ref a, value a, ref b, value b); none is written ``0``.
        bias: A last term as (formula, value), if any.
    """
    if not pairs:
        f, s = [Line("0", "0")], [Line("0", "0")]
    else:
        shown = pairs if len(pairs) <= MAX_TERMS else pairs[: MAX_TERMS - 1]
        f = [Line(rf"{a.tex}\,{b.tex}", f"{a.text}·{b.text}") for a, _, b, _ in shown]
        s = [Line(rf"{va.tex}\cdot {vb.tex}", f"{va.text}·{vb.text}") for _, va, _, vb in shown]
        if len(shown) < len(pairs):
            f.append(Line(r"\cdots", "…"))
            s.append(Line(r"\cdots", "…"))
    if bias is not None:
        f.append(bias[0])
        s.append(bias[1])
    return terms(f), terms(s)


def _join(lines: Sequence[Line], tex_sep: str, text_sep: str) -> Line:
    return Line(tex_sep.join(x.tex for x in lines), text_sep.join(x.text for x in lines))


__all__ = [
    "MAX_TERMS",
    "Cell",
    "Context",
    "Entry",
    "Line",
    "Recorded",
    "Work",
    "both",
    "dims",
    "infix",
    "reads",
    "sum_of_products",
    "terms",
]
