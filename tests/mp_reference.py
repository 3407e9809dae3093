"""The tests' independent reference: whether a printed decimal is a correct rounding of a
value computed with mpmath (never with symtf).

A test module that sets ``MPMATH_DIGITS = 50`` has mpmath at that precision in each of
its tests (``tests/conftest.py``); the global precision is left alone.
"""

from __future__ import annotations

from typing import Any

import mpmath


def rounds_to(x: Any, printed: str) -> bool:
    """Whether ``printed`` is a correct rounding of ``x`` at its own digits (ties: either).

    ``6.3379e-02`` (scientific notation) has its digits in the mantissa.
    """
    mantissa, _, exponent = printed.lower().partition("e")
    decimals = len(mantissa.partition(".")[2]) - int(exponent or 0)
    unit = mpmath.mpf(10) ** -decimals
    return bool(abs(mpmath.mpf(printed) - x) <= unit / 2)
