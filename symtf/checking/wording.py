"""The article's names for steps and entries, so explanations speak the reader's words.

An explanation that names a number names it as the article does: the label of the
claim that prints it (``exp Birds->nests``), that label and the entry's place in it
(``A_1, row 3, column 1``), or else the step's title (``attention weights, head 1,
row 3, column 1``). Internal node names (``l0.h0.pattern[2, 0]``) are kept for the
JSON fields that reference trace entries and for ``--node-names``; they never appear in
an explanation's prose.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import Any

from symtf.spec import Claim


def place(idx: Sequence[int], shape: Sequence[int] | None) -> str:
    """An entry's place in words: ``row 3, column 1``, or ``entry 2`` in a vector.

    Args:
        idx: The entry's index as the trace stores it (a vector's entry is ``(0, j)``).
        shape: The step's true shape, when known (``(6,)`` for a vector).
    """
    idx = tuple(idx)
    if len(idx) == 1:
        return f"entry {idx[0] + 1}"
    if shape is not None and len(shape) == 1:
        return f"entry {idx[-1] + 1}"
    if shape is not None and len(shape) == 2 and shape[0] == 1:
        return f"entry {idx[-1] + 1}"
    if shape is not None and len(shape) == 2 and shape[1] == 1:
        return f"entry {idx[0] + 1}"
    where = f"row {idx[-2] + 1}, column {idx[-1] + 1}"
    if len(idx) > 2:  # an N-D step: the 2-D slice first (batch, head …), counted from 1
        where = f"slice ({', '.join(str(i + 1) for i in idx[:-2])}), {where}"
    return where


class Names:
    """How the article names the steps and entries of one derivation.

    Args:
        claims: The derivation's claims (their labels are the article's names).
        trace: The trace the entries belong to (for titles and shapes), or ``None``.
    """

    def __init__(self, claims: Iterable[Claim], trace: Any = None) -> None:
        claims = tuple(claims)
        self.trace = trace
        #: Every claim's label (a displayed line is named by its label alone).
        self.labels = frozenset(c.label for c in claims)
        self.whole: dict[str, str] = {}
        self.rows: dict[tuple[str, int], str] = {}
        self.cols: dict[tuple[str, int], str] = {}
        self.entries: dict[tuple[str, tuple[int, ...]], str] = {}
        for c in claims:
            if c.step is None or c.expression is not None or c.reduce is not None:
                continue
            if getattr(c, "rank", None) is not None or getattr(c, "at", None) is not None:
                continue
            if c.index is not None:
                self.entries.setdefault((c.step, tuple(c.index)), c.label)
            elif c.row is not None:
                self.rows.setdefault((c.step, c.row), c.label)
            elif c.col is not None:
                self.cols.setdefault((c.step, c.col), c.label)
            else:
                self.whole.setdefault(c.step, c.label)

    def _shape(self, step: str) -> Sequence[int] | None:
        t = self.trace
        if t is None or step not in t:
            return None
        try:
            shape: Sequence[int] | None = t.true_shape(step) or t.shape(step)
            return shape
        except (AttributeError, KeyError, TypeError):
            return None

    def step(self, step: str) -> str:
        """The article's name for a whole step: a claim's label, the step's title, or its name."""
        if step in self.whole:
            return self.whole[step]
        t = self.trace
        if t is not None and step in t and getattr(t[step], "title", None):
            return str(t[step].title)
        return step

    def entry(self, step: str, idx: Sequence[int]) -> str:
        """The article's name for one entry of a step (``A_1, row 3, column 1``)."""
        idx = tuple(idx)
        if (step, idx) in self.entries:
            return self.entries[(step, idx)]
        shape = self._shape(step)
        if len(idx) == 2 and (step, idx[0]) in self.rows:
            return f"{self.rows[(step, idx[0])]}, {place(idx[1:], None)}"
        if len(idx) == 2 and (step, idx[1]) in self.cols:
            return f"{self.cols[(step, idx[1])]}, {place(idx[:1], None)}"
        if shape is not None and all(n == 1 for n in shape):
            return self.step(step)  # a single number: its name says which
        return f"{self.step(step)}, {place(idx, shape)}"

    def row(self, step: str, i: int) -> str:
        """The article's name for one row of a step (``scaled Birds row``)."""
        if (step, i) in self.rows:
            return self.rows[(step, i)]
        return f"{self.step(step)}, row {i + 1}"

    def reference(self, ref: str) -> str:
        """A trace reference as ``stands_for`` writes it (``l0.h0.scaled[0, 2]``), in words."""
        import re

        m = re.fullmatch(r"\s*(.+?)\s*\[\s*(\d+)\s*(?:,\s*(\d+)\s*)?\]\s*", ref)
        t = self.trace
        if m is None or (t is not None and ref.strip() in t):
            return self.step(ref.strip())
        name, i, j = m.group(1), int(m.group(2)), m.group(3)
        if j is not None:
            return self.entry(name, (i, int(j)))
        shape = self._shape(name)
        if shape is not None and len(shape) == 1:
            return self.entry(name, (0, i))
        return self.row(name, i)

    def scope(self, scope: str) -> str:
        """A convention's scope in words: ``l0.h0`` is ``layer 1, head 1``; a step its name."""
        import re

        m = re.fullmatch(r"l(\d+)(?:\.h(\d+))?", scope)
        if m is not None:
            head = f", head {int(m.group(2)) + 1}" if m.group(2) is not None else ""
            return f"layer {int(m.group(1)) + 1}{head}"
        m = re.fullmatch(r"l(\d+)\.(W1|W2|ffn\w*)", scope)
        if m is not None:
            return f"the feed-forward network of layer {int(m.group(1)) + 1}"
        return self.step(scope)
