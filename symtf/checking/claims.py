"""Which entries of a step a claim prints, for 1-D and N-D steps (``at``, N indices).

A 1-D step is recorded as one row, so ``index = [k]`` means entry ``(0, k)``.
A 3-D/4-D step prints 2-D slices: ``at = [b]`` or ``at = [b, h]`` picks the
leading indices, then ``row``/``col`` work as for a matrix; ``index`` may give
all N indices of a single entry. Without any of them the claim prints the whole
step, its slices' rows one after the other (a pasted 3-D/4-D print).
"""

from __future__ import annotations

from typing import Any

from symtf.errors import SpecError


def selection_nd(claim: Any, shape: tuple[int, ...]) -> list[list[tuple[int, ...]]]:
    """The entries of a step a claim refers to, as rows of full indices.

    Raises:
        SpecError: When ``at``/``index``/``row``/``col`` do not fit the step's shape.
    """
    where, step = claim.where, claim.step
    shown = "x".join(str(n) for n in shape)

    def bound(k: int, size: int, what: str) -> None:
        if not 0 <= k < size:
            raise SpecError(
                f"{where}.{what}: index out of range: expected 0 to {size - 1} for step {step} of shape {shown}, found {k}"
            )

    at = getattr(claim, "at", None)
    if claim.index is not None:
        idx = tuple(claim.index)
        if len(idx) == 1 and len(shape) == 2 and shape[0] == 1:
            idx = (0, idx[0])
        if len(idx) != len(shape):
            raise SpecError(
                f"{where}.index: expected {len(shape)} indices for step {step} of shape {shown}, found {len(idx)}"
            )
        for k, n in zip(idx, shape, strict=True):
            bound(k, n, "index")
        return [[idx]]
    if len(shape) == 2:
        raise SpecError(f"{where}.at: only a 3-D or 4-D step takes at; {step} has shape {shown}")
    if at is None and claim.row is None and claim.col is None:
        # the whole step, as a 3-D/4-D print shows it: each 2-D slice's rows in turn
        from symtf.tensor import all_indices

        lead = all_indices(shape[:-1])
        return [[(*r, j) for j in range(shape[-1])] for r in lead]
    if at is None or len(at) != len(shape) - 2:
        raise SpecError(
            f"{where}.at: expected the {len(shape) - 2} leading indices of step {step} of shape {shown} "
            f"(the 2-D slice printed), found {'none' if at is None else list(at)}"
        )
    for k, n in zip(at, shape, strict=False):
        bound(k, n, "at")
    n, m = shape[-2:]
    if claim.row is not None:
        bound(claim.row, n, "row")
    if claim.col is not None:
        bound(claim.col, m, "col")
    rows = range(n) if claim.row is None else [claim.row]
    cols = range(m) if claim.col is None else [claim.col]
    return [[(*at, i, j) for j in cols] for i in rows]
