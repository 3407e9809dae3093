"""What the translation of code yields, in the code's order: givens, steps, notes and prints."""

from __future__ import annotations

from dataclasses import dataclass

from symtf.draft.templates import Expr
from symtf.place import Place

__all__ = ["SIZE", "Given", "Note", "Shown", "Step"]

#: Why a printed shape or size is left unchecked (the search never looks for a step giving it)
SIZE = "a shape or size, not a computed value"


@dataclass(frozen=True)
class Given:
    """An array literal (entries as written), or values a seeded stream draws: a given tensor."""

    name: str
    values: tuple[str, ...]
    shape: tuple[int, ...]
    where: str
    float32: bool = False
    #: The step the assigned variable held just before (``probs = softmax(s)`` then
    #: ``probs = [[0.1, 0.9]]``): the literal may be written for that value.
    replaces: str | None = None
    #: The file line of each row of the literal (a one-dimensional literal: one row).
    lines: tuple[int, ...] = ()
    #: The notebook cell it is in.
    cell: int | None = None
    #: Where each entry stands in the article, row by row (empty: not known).
    places: tuple[Place, ...] = ()
    #: Where its values come from when the code does not write them out (values a
    #: seeded random stream draws): said in the derivation. Empty: an array literal.
    origin: str = ""


@dataclass(frozen=True)
class Step:
    """A translated assignment."""

    name: str
    expr: Expr
    where: str
    source: str


@dataclass(frozen=True)
class Note:
    """A statement not translated, and why."""

    where: str
    source: str
    reason: str
    #: The variables it assigned, whose earlier values they no longer name.
    names: tuple[str, ...] = ()


@dataclass(frozen=True)
class Shown:
    """A printed value and the step it shows (``None``: it could not be translated)."""

    name: str | None
    label: str
    rows: tuple[tuple[str, ...], ...]
    lines: tuple[int, ...]
    cell: int | None
    decimals: int | None
    shortened: bool
    reason: str = ""
    opaque: str | None = None  # a variable whose value only this print gives
    vector: bool = False  # printed as a one-dimensional array (one bracket)
    #: The translation covers every op of the value and of everything it is computed from
    #: (no op read loosely, such as a dtype change): a print that disagrees is off.
    complete: bool = False
    #: Printed by PyTorch with every entry a whole number (``tensor([1., 0.])``): each
    #: entry is that number exactly, not a rounding of another.
    whole: bool = False
    #: numpy's print (at its default precision) of a float32 tensor the code drew: each
    #: entry pins its float32 value, or nearly (:func:`symtf.backends.format_print.numpy_printed`).
    float32_print: bool = False
    #: An array literal restating a value the code only rearranged (``q_split = […]``
    #: after ``q = q.view(…)``): where most of its entries are the step's, it is the step,
    #: and the others are off.
    restates: bool = False
