"""Table columns whose heading states the step that makes them from another column.

A worked table often heads a column with what it computes::

    | Token  | Logit | Softmax @ T=1 | Softmax @ T=0.5 | exp(Logit) | σ(Logit) | Logit / 2 |

A careful reader takes such a heading as the step: the softmax (over the column) of the
Logit column divided by the temperature, its exponential, its sigmoid, the column
multiplied or divided by a constant. Only a heading that names one of these operations
is read so; a heading that merely names data (``Probability``, ``P(token)``, ``σ`` alone,
which may be a deviation) states no step. Reading only parses the heading: the search
(:mod:`symtf.draft.infer.columns`) builds the step and judges every entry against it.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import TypeVar

__all__ = ["ColumnStep", "column_step", "heading_of", "stated_columns"]

P = TypeVar("P")

_NUMBER = r"(\d+(?:\.\d+)?)"
#: A temperature stated in a heading: ``@ T=0.5``, ``(T = 2)``, ``τ=2``, ``temperature 2``.
_TEMPERATURE = re.compile(
    r"(?:\b[Tτ]|τ|\btemp(?:erature)?)\s*(?:=|:)?\s*" + _NUMBER + r"(?![\w.])", re.IGNORECASE
)
#: The softmax, by name.
_SOFTMAX = re.compile(r"\bsoft[\s-]?max\b", re.IGNORECASE)
#: The exponential: ``exp(z)``, ``e^z``, ``exp``.
_EXP = re.compile(r"(?:^|[\s(])(?:exp\s*\(|exp$|e\s*\^|exponential\b)", re.IGNORECASE)
#: The sigmoid: ``sigmoid``, ``σ(z)`` (a bare ``σ`` is more often a deviation).
_SIGMOID = re.compile(r"\bsigmoid\b|σ\s*\(", re.IGNORECASE)
#: A column scaled by a constant: ``Logit / 2``, ``× 0.5``, ``z ÷ 4``, ``2 × Logit``.
_SCALED = re.compile(
    r"^(?:([A-Za-z_][\w ]{0,23}?)\s*)?([×*·÷/])\s*" + _NUMBER + r"$"
    r"|^" + _NUMBER + r"\s*([×*·])\s*([A-Za-z_][\w ]{0,23}?)$"
)
#: The name inside ``op(name …)``: the column an operation is applied to.
_OPERAND = re.compile(r"\(\s*([A-Za-z_][\w ]{0,23}?)\s*(?:[/÷)]|$)")


@dataclass(frozen=True)
class ColumnStep:
    """The step a column heading states.

    Attributes:
        op: ``"softmax"``, ``"exp"``, ``"sigmoid"``, ``"mul"`` or ``"div"``.
        constant: The temperature (softmax), or the factor or divisor, as written; ``None``
            for none.
        operand: The name of the column it is applied to, when the heading names one.
    """

    op: str
    constant: str | None
    operand: str | None


def _plain(heading: str) -> str:
    return " ".join(heading.replace("$", "").replace("`", "").replace("*", " ").split()).strip()


def column_step(heading: str) -> ColumnStep | None:
    """The step a column heading states, or None when it names no operation of a column.

    >>> column_step("Softmax @ T=0.5")
    ColumnStep(op='softmax', constant='0.5', operand=None)
    >>> column_step("exp(Logit)")
    ColumnStep(op='exp', constant=None, operand='Logit')
    >>> column_step("Probability") is None
    True
    """
    text = _plain(heading)
    if not text or len(text) > 60:
        return None
    m = _OPERAND.search(text)
    operand = m.group(1).strip() if m else None
    if _SOFTMAX.search(text):
        t = _TEMPERATURE.search(text)
        if t is None:
            after = re.search(r"[/÷]\s*" + _NUMBER + r"(?![\w.])", text)
            constant = after.group(1) if after else None
        else:
            constant = t.group(1)
        return ColumnStep("softmax", constant, operand)
    if _SIGMOID.search(text):
        return ColumnStep("sigmoid", None, operand)
    if _EXP.search(text):
        return ColumnStep("exp", None, operand)
    s = _SCALED.match(text)
    if s is not None:
        if s.group(3) is not None:
            name, sign, number = s.group(1), s.group(2), s.group(3)
        else:
            number, sign, name = s.group(4), s.group(5), s.group(6)
        op = "div" if sign in "÷/" else "mul"
        return ColumnStep(op, number, name.strip() if name else None)
    return None


def heading_of(texts: list[list[str]], values: list[list[str | None]], j: int) -> str:
    """Column ``j``'s heading: its cells in the rows that are not numbers there."""
    return " ".join(
        t[j].strip() for t, v in zip(texts, values, strict=True) if len(t) > j and v[j] is None
    )


def stated_columns(
    texts: list[list[str]],
    values: list[list[str | None]],
    columns: list[int],
    numeric: list[tuple[str, ...]],
    places: list[P],
) -> tuple[
    list[tuple[str, ...]], list[P], list[tuple[str, tuple[tuple[str, ...], ...], tuple[P, ...]]]
]:
    """Split off the columns whose heading states a step of another column of the table.

    Returns the table's other columns (rows and places) and each stated column (its heading,
    one number per row, its places), in the table's order. Nothing is split when no column
    would be left, the table has fewer than two rows, or the places do not match the rows.
    """
    width = len(columns)
    derived = [
        i for i, j in enumerate(columns) if column_step(heading_of(texts, values, j)) is not None
    ]
    if (
        not derived
        or len(derived) == width
        or len(numeric) < 2
        or len(places) != width * len(numeric)
    ):
        return numeric, places, []
    keep = [i for i in range(width) if i not in derived]
    rest = [tuple(r[i] for i in keep) for r in numeric]
    kept = [q for k, q in enumerate(places) if k % width in keep]
    out: list[tuple[str, tuple[tuple[str, ...], ...], tuple[P, ...]]] = []
    for i in derived:
        heading = " ".join(heading_of(texts, values, columns[i]).split())
        column: tuple[tuple[str, ...], ...] = tuple((r[i],) for r in numeric)
        own = tuple(q for k, q in enumerate(places) if k % width == i)
        out.append((heading, column, own))
    return rest, kept, out
