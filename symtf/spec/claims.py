"""Claims: the numbers an article printed and where in the computation they belong,
read from a derivation file's ``[[claims]]`` (each printed value an exact
:class:`~symtf.numbers.Printed`, with its place).
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from typing import Any

from symtf.errors import SpecError
from symtf.numbers import (
    DEFAULT_ROUNDING,
    ROUNDING_MODES,
    Printed,
    claim_grid,
    is_label,
    on_grid,
    parse_printed,
    protect_thousands_separators,
    split_printed,
    strip_labels,
)
from symtf.numbers import join_infinities as _join_infinities
from symtf.numbers import split_rows as _split_rows
from symtf.numbers import toml_kind as _kind
from symtf.place import Place
from symtf.spec.modelread import finish, max_dim
from symtf.spec.places import read_places
from symtf.spec.tomlread import _Reader

#: The step of a draft claim that is not mapped yet.
UNMAPPED = "?"
_STEP_NODE = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*(\.[A-Za-z0-9_]+)*(\[-?\d+\])?$")  # also state[2]

#: Claim kinds checked by symtf.checking.assertions (``assert = "..."``).
ASSERTIONS = ("tokens", "teacher-forcing")
REDUCTIONS = ("max", "min", "sum")


@dataclass(frozen=True)
class Claim:
    """Numbers an article printed, and where in the computation they belong.

    Attributes:
        label: The article's own name for it (unique in the file).
        where: ``file: claims[i]`` for messages.
        step: Canonical step, or ``None`` for an expression claim.
        printed: The printed entries, row by row (a scalar is ``((p,),)``).
        word: For ``next_token`` and ``rank`` claims, the printed token.
        row, col, index: Which part of the step is printed.
        rounding: Rounding mode the article is held to.
        reduce: ``max``/``min``/``sum`` of the selected entries, or ``None``.
        rank: For a ``rank`` claim, the position in the ranking (1 = largest).
        expression: The displayed arithmetic, for an expression claim.
        stands_for: Literal text → trace reference it stands for.
        computed_in: The float format the article computed this claim in, if stated.
        feeds: Whether this is the printed version later steps used (replay prefers it).
        given: A number the article states rather than computes (a constant it sets,
            ``w = 0.2``): never checked, counted among the inputs; a displayed line that
            repeats it reads it as written.
        restates: The label of the claim whose printed number this one repeats
            (``5.490`` written again in ``3.320 / 5.490``): when that number is off, this
            one is inherited from it, not a mistake of its own.
        match_literals: Whether undeclared literals may be read as exact values.
        note: Free text.
    """

    label: str
    where: str
    step: str | None
    printed: tuple[tuple[Printed, ...], ...] = ()
    word: str | None = None
    row: int | None = None
    col: int | None = None
    index: tuple[int, int] | None = None
    rounding: str = "nearest"  # an exact tie accepts either neighbour
    reduce: str | None = None
    rank: int | None = None
    expression: str | None = None
    stands_for: Mapping[str, str] = field(default_factory=dict)
    note: str = ""
    assertion: str | None = (
        None  # ``assert = "tokens" | "teacher-forcing"`` (symtf.checking.assertions)
    )
    at: tuple[int, ...] | None = None  # leading indices of a 3-D/4-D step (the 2-D slice printed)
    #: The article's float format for this claim (symtf.checking.framework).
    computed_in: str | None = None
    feeds: bool = False  # the printed version later steps used (symtf.checking.diagnose replay)
    given: bool = False  # a constant the article sets: an input, never checked
    restates: str | None = None  # the label of the claim whose printed number this repeats
    match_literals: bool = True  # False for stands_for = "none" (symtf.checking.displayed)
    source_line: int | None = None  # line in the article (drafts written by ``symtf extract``)
    #: Where each printed entry stands in the article, row by row (``places``; drafts).
    places: tuple[Place, ...] = ()
    line: int | None = None  # 1-based line of the claim's ``[[claims]]`` header, if it has one
    #: Line of each printed row when the rows could be told apart, else of ``printed =``.
    printed_lines: tuple[int, ...] = ()

    @property
    def unmapped(self) -> bool:
        """A draft's claim whose step is not known yet (``step = "?"``)."""
        return self.step == UNMAPPED


def _printed_rows(v: Any, where: str) -> tuple[tuple[Printed, ...], ...]:
    if isinstance(v, str):
        if len(v) > 100_000:
            raise SpecError(
                f"{where}: expected printed values of at most 100,000 characters, found {len(v)}"
            )
        pasted = split_printed(v, where)  # a numpy/torch/TF print, or a nested list
        if pasted is None:  # rows text, perhaps a table with labels and 1,234 groupings
            cells = strip_labels(
                _split_rows(_join_infinities(protect_thousands_separators(v))), where
            )
        else:
            cells = pasted[0]
        if pasted is not None and pasted[1]:
            cells = [[_Shortened(c) for c in r] for r in cells]
    elif isinstance(v, list) and all(isinstance(r, list) for r in v):
        cells = v
    elif isinstance(v, list):
        cells = [v]
    else:
        raise SpecError(f"{where}: expected the printed value(s) as a string, found {_kind(v)}")
    if not cells or not cells[0]:
        raise SpecError(f"{where}: expected printed values, found none")
    m = len(cells[0])
    out = []
    for i, r in enumerate(cells):
        if len(r) != m:
            raise SpecError(f"{where}: ragged rows: row 0 has {m} entries, row {i} has {len(r)}")
        out.append(tuple(_printed_cell(c, f"{where}[{i}][{j}]") for j, c in enumerate(r)))
    return tuple(out)


class _Shortened(str):
    """A cell of a pasted array print: numpy drops its trailing zeros (``0.54`` is ``0.540``)."""


def _printed_cell(c: Any, where: str) -> Printed:
    if isinstance(c, str) and is_label(c):
        raise SpecError(
            f"{where}: expected a printed number, found the label {c!r} (a table's header row and "
            "row labels are read only before the numbers)"
        )
    p = parse_printed(c, where=where)
    return replace(p, shortened=True) if isinstance(c, _Shortened) else p


def _is_word(v: Any) -> bool:
    """A printed value that is one vocabulary word (``"cat"``), not a number or a table."""
    if not isinstance(v, str) or len(v.split()) != 1 or split_printed(v, "printed") is not None:
        return False
    return is_label(v.strip()) and not v.strip().startswith(("(", "[", "tensor", "array"))


#: Floating-point formats an article's framework may have computed in (symtf.checking.framework).
FLOAT_FORMATS = ("float64", "float32", "float16", "bfloat16")


def float_format(r: _Reader, key: str, where: str) -> str | None:
    v = r.get(key)
    if v is None:
        return None
    if v not in FLOAT_FORMATS:
        raise SpecError(
            f"{where}: {r.key(key)}: expected one of {', '.join(FLOAT_FORMATS)}, found {_kind(v)}"
        )
    return str(v)


def read_claim(
    raw: dict[str, Any], i: int, name: str, rounding_default: str = DEFAULT_ROUNDING
) -> Claim:
    r = _Reader(raw, f"claims[{i}]")
    where = f"{name}: claims[{i}]"
    label = r.string("label", max_len=200)
    if not label:
        raise SpecError(
            f"{where}.label: required key is missing (the article's name for these numbers)"
        )
    step = r.string("step", max_len=200)
    expression = r.string("expression", max_len=2000)
    assertion = r.string("assert", max_len=40)
    if assertion is not None and (assertion not in ASSERTIONS or expression is not None):
        raise SpecError(
            f"{where}.assert: expected one of {', '.join(ASSERTIONS)} (without expression), found {assertion!r}"
        )
    if assertion is None and (step is None) == (expression is None):
        raise SpecError(f"{where}: expected exactly one of step or expression")
    if step is not None and step != UNMAPPED and not _STEP_NODE.match(step):
        raise SpecError(f"{where}.step: expected a step name like l0.h0.pattern, found {step!r}")
    printed_raw = r.get("printed")
    if printed_raw is None and expression is not None:
        # "e^{2.309} \approx 10.068": the value after the last relation is what the article printed.
        from symtf.language.latexmath import split_display

        lhs, value = split_display(expression)
        if value is not None:
            expression, printed_raw = lhs, value
    if printed_raw is None:
        printed_raw = r.require("printed")
    rank = r.integer("rank", lo=1, hi=10_000)
    word = None
    printed: tuple[tuple[Printed, ...], ...] = ()
    if (
        step == "next_token"
        or rank is not None
        or assertion is not None
        or (step is not None and _is_word(printed_raw))
    ):
        if not isinstance(printed_raw, str) or not printed_raw.strip():
            raise SpecError(
                f"{where}.printed: expected a vocabulary word, found {_kind(printed_raw)}"
            )
        word = printed_raw.strip()
    else:
        printed = _printed_rows(printed_raw, f"{where}.printed")
    index_raw = r.get("index")
    index = None
    if index_raw is not None:
        if (
            not isinstance(index_raw, list)
            or not 1 <= len(index_raw) <= 4
            or not all(
                isinstance(k, int) and not isinstance(k, bool) and 0 <= k < max_dim()
                for k in index_raw
            )
        ):
            raise SpecError(
                f"{where}.index: expected [row, column] (or all N indices of an N-D step) with whole numbers, found {_kind(index_raw)}"
            )
        index = tuple(index_raw)
    at_raw = r.get("at")
    at = None
    if at_raw is not None:
        if (
            not isinstance(at_raw, list)
            or not 1 <= len(at_raw) <= 2
            or not all(
                isinstance(k, int) and not isinstance(k, bool) and 0 <= k < max_dim()
                for k in at_raw
            )
        ):
            raise SpecError(
                f"{where}.at: expected the leading indices [b] or [b, h] of a 3-D/4-D step, found {_kind(at_raw)}"
            )
        at = tuple(at_raw)
    row = r.integer("row", lo=0, hi=max_dim())
    col = r.integer("col", lo=0, hi=max_dim())
    if index is not None and (row is not None or col is not None):
        raise SpecError(f"{where}.index: expected index alone, found it together with row/col")
    decimals = r.integer("decimals", lo=0, hi=30)
    rounding = r.choice("rounding", ROUNDING_MODES, rounding_default)
    reduce = r.get("reduce")
    if reduce is not None and reduce not in REDUCTIONS:
        raise SpecError(
            f"{where}.reduce: expected one of {', '.join(REDUCTIONS)}, found {_kind(reduce)}"
        )
    stands_raw = r.get("stands_for", {})
    match_literals = stands_raw != "none"  # "none": every literal stands only for itself
    if stands_raw == "none":
        stands_raw = {}
    if not isinstance(stands_raw, dict) or not all(
        isinstance(k, str) and isinstance(v, str) and len(v) < 200 for k, v in stands_raw.items()
    ):
        raise SpecError(
            f'{where}.stands_for: expected a table of literal = "step[i, j]" or "none", found {_kind(stands_raw)}'
        )
    note = r.string("note", "") or ""
    computed_in = float_format(r, "computed_in", name)
    feeds = r.boolean("feeds", False)
    given = r.boolean("given", False)
    restates = r.string("restates", None)
    source_line = r.integer("source_line", lo=1, hi=10_000_000)
    count = sum(len(row_) for row_ in printed) if printed else 1
    places = read_places(r.get("places"), f"{where}.places", count)
    finish(r, name)
    stated = decimals is not None
    if printed and decimals is None:
        decimals = claim_grid(printed)
    if printed:  # a claim's decimals is the grid of integers and numpy's shortened prints
        printed = tuple(
            tuple(on_grid(p, decimals, stated=stated) for p in row_) for row_ in printed
        )
    return Claim(
        label,
        where,
        step,
        printed,
        word,
        row,
        col,
        index,
        rounding,
        reduce,
        rank,
        expression,
        dict(stands_raw),
        note,
        assertion,
        at,
        computed_in=computed_in,
        feeds=feeds,
        given=given,
        restates=restates,
        match_literals=match_literals,
        source_line=source_line,
        places=places,
    )
