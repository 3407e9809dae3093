"""How the LaTeX notes are laid out (:class:`LatexOptions`) and the mark each verdict gets."""

from __future__ import annotations

from dataclasses import dataclass

#: Verdict → LaTeX mark (text mode; macros defined in :data:`PREAMBLE`).
MARKS = {
    "exact": r"\symtfok",
    "rounded": r"\symtfok",
    "slip": r"\symtfslip",
    "wrong": r"\symtfbad",
    "symbolic": r"\symtfsymbolic",
    "undecided": r"\symtfundecided",
}
GOOD = ("exact", "rounded")

EXACT_FORMS = ("auto", "always", "never")


@dataclass(frozen=True)
class LatexOptions:
    """How a document is laid out.

    Attributes:
        decimals: Decimal places shown for values that are not short exact numbers.
        exact_forms: ``auto`` (closed forms when short), ``always`` (whenever
            they fit the size budget) or ``never`` (decimals only).
        max_rows: Matrices with more rows are elided with ``\\vdots``.
        max_cols: Matrices with more columns are elided with ``\\cdots``.
        steps: Only the steps matching this pattern (see :func:`symtf.renderers.steps.select`).
        node_names: Show internal node names (``l0.h0.pattern``) beside the article's labels.
        rules: Name beside each worked line what was done (``▷ matrix product``), as the
            ``derive`` proofs do; the rule comes from the op the trace recorded.
    """

    decimals: int = 4
    exact_forms: str = "auto"
    max_rows: int = 8
    max_cols: int = 8
    steps: str | None = None
    node_names: bool = False
    rules: bool = True

    def __post_init__(self) -> None:
        if self.exact_forms not in EXACT_FORMS:
            raise ValueError(
                f"exact_forms: expected one of {', '.join(EXACT_FORMS)}, found {self.exact_forms!r}"
            )
        if not 0 <= self.decimals <= 30:
            raise ValueError(f"decimals: expected 0 to 30, found {self.decimals}")
        if self.max_rows < 3 or self.max_cols < 3:
            raise ValueError("max_rows and max_cols: expected at least 3")
