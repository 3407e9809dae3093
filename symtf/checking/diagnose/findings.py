"""What a diagnosis finds: the causes it names, and one finding (a cause with its
explanation, the conventions that explain it and the root it is inherited from).
"""

from __future__ import annotations

import dataclasses
from typing import Any

CAUSES = (
    "propagated-rounding",
    "inherited",
    "convention",
    "rounded-inputs",
    "truncation",
    "decimal-shift",
    "digit-transposition",
    "sign-flip",
    "copied-neighbour",
    "swapped-rows",
    "swapped-columns",
    "transposed",
    "transposed-operand",
    "copy-slip",
    "unexplained",
)
#: Causes that are not a mistake of the article: no root is named for them.
NOT_MISTAKES = ("propagated-rounding", "rounded-inputs")
GOOD = ("exact", "rounded")

Entry = tuple[str, *tuple[int, ...]]  # (step, *index): (step, i, j) for a matrix


@dataclasses.dataclass
class Finding:
    cause: str
    explanation: str
    convention: list[str] = dataclasses.field(default_factory=list)
    root: dict[str, Any] | None = None
    #: Printed input entries a convention for this step alone was not computed from.
    not_from: list[str] | None = None
