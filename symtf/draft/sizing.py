"""An article sized before it is drafted: within the file limits, and within the time left.

Two questions are answered before the search starts (:func:`size`), and one while it
runs (:class:`Pace`):

- **Can its draft be checked?** What ``draft`` writes, ``check`` reads, so every printed
  matrix must fit the limits a derivation file is read within (:mod:`symtf.limits`:
  rows, columns, entries, characters). A printing over them is refused at its own
  article line, before anything is searched; a draft written to a file is held to the
  file size cap (:func:`refuse_text`).
- **Can the search finish in time?** Each printing's candidates are built over the
  tensors known before it, so the search grows with the square of the printings.
  Calibrated on two cores (Markdown and LaTeX matrices, prose numbers, displayed
  arithmetic: 4.2–7.9 × 10⁻⁷ s per pair of printings; a little under the smallest is
  taken, so the estimate is a lower bound), an article whose estimate exceeds the time left of the
  running ``--timeout`` is refused with the estimate. Shapes the estimate undercounts
  (wide tables) are caught by :class:`Pace` once a part of the search has run.

A refusal is a :class:`~symtf.errors.LimitError` (exit 2) naming the article, the line
(for a matrix) and the numbers behind the estimate.
"""

from __future__ import annotations

import time
from dataclasses import dataclass

from symtf import limits
from symtf.errors import LimitError

__all__ = [
    "SECONDS_PER_PAIR",
    "Pace",
    "Size",
    "array_refusal",
    "refuse_array",
    "refuse_text",
    "size",
]

#: Search seconds per pair of printings (a lower bound over the measured article shapes).
SECONDS_PER_PAIR = 4e-7
#: The pace of a running search is judged from this many printings on.
PACE_FROM = 200
#: A running search is refused when its projected remainder exceeds the time left this
#: many times over (the projection assumes the square law; a slack for early outliers).
PACE_SLACK = 2.0


@dataclass(frozen=True)
class Size:
    """An article's size as the search sees it.

    Attributes:
        path: The article, for messages.
        printings: Printed matrices, vectors and numbers.
        numbers: Printed numbers in them.
        largest: The most entries one printing holds.
    """

    path: str
    printings: int
    numbers: int
    largest: int

    @property
    def seconds(self) -> float:
        """The search's estimated CPU seconds (a lower bound: see the module)."""
        return SECONDS_PER_PAIR * self.printings**2

    def describe(self) -> str:
        """The counts and the estimate in words."""
        return (
            f"its {self.numbers:,} printed numbers ({self.printings:,} printed matrices, "
            f"vectors and single numbers) would take at least about "
            f"{limits.duration(self.seconds)} to draft"
        )


def size(article: object, path: str) -> Size:
    """Size an article read for drafting, and refuse it when its draft could not be checked
    or the search cannot finish in the time left.

    Args:
        article: A :class:`~symtf.draft.article.Article`.
        path: The article, for messages.

    Raises:
        LimitError: A printed matrix over the file limits (at its line), or a search whose
            estimate exceeds the time left of the running ``--timeout``.
    """
    printings = list(getattr(article, "printings", ()))
    numbers = largest = 0
    for p in printings:
        n = p.size
        numbers += n
        largest = max(largest, n)
        if not p.parts:  # a run's rows are printings of their own, checked one by one
            _within_limits(p, path)
    s = Size(path, len(printings), numbers, largest)
    left = _time_left()
    if left is not None and s.seconds > left:
        raise LimitError(
            f"{path}: too large to draft in the time left: {s.describe()}, and "
            f"{limits.duration(left)} of the time budget is left (raise it with --timeout, "
            "or check a part of the article)"
        )
    return s


def array_refusal(shape: tuple[int, ...], text: str) -> str | None:
    """Why an array of ``shape``, written as ``text``, is over what a derivation holds."""
    return limits.shape_refusal(shape) or limits.text_refusal(len(text))


def refuse_array(path: str, name: str, where: str, shape: tuple[int, ...], text: str) -> None:
    """Refuse a code literal's array over the limits, at its place (``cell 2, line 4``).

    Raises:
        LimitError: Naming the article, the array and its place.
    """
    why = array_refusal(shape, text)
    if why is not None:
        raise LimitError(
            f"{path}: the array {name} ({where}): {why}; a derivation holds no larger one, "
            "so its draft could not be checked"
        )


def _within_limits(p: object, path: str) -> None:
    rows = getattr(p, "rows", ())
    shape = (len(rows), max((len(r) for r in rows), default=0))
    why = array_refusal(shape, "\n".join(" ".join(r) for r in rows))
    if why is not None:
        label = getattr(p, "label", "").strip()
        what = f"the printed matrix {label}" if label else "a printed matrix"
        raise LimitError(
            f"{path}: {what}: {why}; a derivation holds no larger one, so its draft "
            f"could not be checked (line {getattr(p, 'line', 0)})"
        )


def refuse_text(text: str, path: str) -> None:
    """Refuse a draft whose text is over the file size cap (``check`` would not read it).

    Raises:
        LimitError: Naming the article and both sizes.
    """
    n = len(text.encode("utf-8", "surrogatepass"))
    if n > limits.MAX_FILE_BYTES:
        raise LimitError(
            f"{path}: its draft would be {n:,} bytes, over the {limits.MAX_FILE_BYTES:,} "
            "bytes a derivation file may hold, so check could not read it (symtf check "
            "the article itself, or draft a part of it)"
        )


class Pace:
    """The running search's projection: refused when, at its pace so far, it cannot finish.

    Args:
        path: The article, for messages.
        total: The printings the search will go through.
    """

    def __init__(self, path: str, total: int) -> None:
        self.path = path
        self.total = total
        self.start = time.process_time()

    def step(self, done: int) -> None:
        """After ``done`` printings: refuse if the rest, at this pace, exceeds the time left.

        Raises:
            LimitError: With the projection.
        """
        if done < PACE_FROM or done >= self.total:
            return
        left = _time_left()
        if left is None:
            return
        spent = time.process_time() - self.start
        rest = spent * ((self.total / done) ** 2 - 1)  # the square law, from here on
        if rest > PACE_SLACK * left:
            raise LimitError(
                f"{self.path}: too large to draft in the time left: {done:,} of "
                f"{self.total:,} printings took {limits.duration(spent)}, so the rest would take "
                f"about {limits.duration(rest)}, and {limits.duration(left)} of the time budget is left "
                "(raise it with --timeout, or check a part of the article)"
            )


def _time_left() -> float | None:
    from symtf.backends.certify import time_left

    return time_left()
