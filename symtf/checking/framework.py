"""The forward pass as an article's framework computes it, in a binary floating-point format.

The number systems live in :mod:`symtf.backends.formats`: a certified enclosure of
every value a format can give (:class:`~symtf.backends.formats.FormatBallBackend`)
and a numpy simulation (:class:`~symtf.backends.formats.FormatSimBackend`). These
functions run a derivation's graph in them.
"""

from __future__ import annotations

from typing import Any

from symtf.backends.formats import FORMATS, FormatBallBackend, FormatSimBackend, as_format


def simulate(derivation: Any, fmt: str, softmax: str = "shifted") -> Any:
    """The derivation's forward pass in ``fmt`` with numpy (``None`` if it cannot run).

    Args:
        softmax: How the softmax is computed (see :class:`FormatSimBackend`).
    """
    import warnings

    from symtf.errors import SymtfError
    from symtf.graph.pipeline import run

    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            return run(derivation, FormatSimBackend(fmt, softmax))
    except (SymtfError, TypeError, ValueError, ZeroDivisionError, OverflowError):
        return None


def enclose(derivation: Any, fmt: str, radii: Any = None, prec: int = 128) -> Any:
    """The forward pass as certified enclosures of ``fmt`` results (``None`` if undecidable)."""
    from symtf.errors import SymtfError
    from symtf.graph.pipeline import run

    ties = derivation.model.generate is None and derivation.model.architecture != "encoder-decoder"
    try:
        with FormatBallBackend(fmt, prec, radii, ties=ties) as xp:
            return run(derivation, xp)
    except (SymtfError, TypeError, ZeroDivisionError):
        return None


def enclose_rounded(derivation: Any, prec: int = 128) -> Any:
    """The exact forward pass with the ``rounded_inputs`` as balls (``None`` if none or undecidable).

    See :mod:`symtf.backends.rounded`; every value downstream becomes a certified range.
    """
    from symtf.backends.rounded import RoundedBallBackend
    from symtf.errors import SymtfError
    from symtf.graph.pipeline import run

    inputs = getattr(derivation, "rounded_inputs", None)
    if not inputs:
        return None
    ties = derivation.model.generate is None
    try:
        with RoundedBallBackend(inputs, prec, ties=ties) as xp:
            return run(derivation, xp)
    except (SymtfError, TypeError, ZeroDivisionError):
        return None


def enclose_step(derivation: Any, fmt: str, step: str, base: Any, prec: int = 128) -> Any:
    """What ``fmt`` gives for one step computed from its inputs (``None`` if undecidable).

    Every other step takes its value from ``base`` (a certified ball trace of the exact
    values, or of ranges over rounded inputs), stored once in the format; only ``step``
    is computed with the format's rounding (and only what it reads is looked at). This
    is the step's own rounding error, not the accumulation through the whole model (see
    :func:`enclose` for that bound).
    """
    from symtf.errors import SymtfError
    from symtf.graph.core import Reuse
    from symtf.graph.pipeline import run

    f = FORMATS[fmt]

    def given(name: str) -> Any:
        if name == step or name not in base:
            return None
        value = base.value(name)
        if isinstance(value, tuple) or value is None:
            return None
        return as_format(value, f)

    ties = derivation.model.generate is None and derivation.model.architecture != "encoder-decoder"
    try:
        with FormatBallBackend(fmt, prec, ties=ties) as xp:
            return run(derivation, xp, reuse=Reuse(base, given=given, take=False), needed={step})
    except (SymtfError, TypeError, ZeroDivisionError):
        return None


__all__ = ["enclose", "enclose_rounded", "enclose_step", "simulate"]
