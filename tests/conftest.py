"""Shared pytest set-up: the suite runs on every core when pytest-xdist is installed.

``-n auto`` cannot sit in ``addopts``: without pytest-xdist a plain ``pytest``
would stop at ``unrecognized arguments: -n``. Here it is the default instead,
when the plugin is there and the command line did not choose (``-n 0`` runs in
one process; ``-p no:xdist`` turns the plugin off).
"""

from __future__ import annotations

from collections.abc import Iterator

import mpmath
import pytest


@pytest.hookimpl(tryfirst=True)
def pytest_cmdline_main(config: pytest.Config) -> None:
    """Ask pytest-xdist for a worker per core unless ``-n`` was given."""
    if not config.pluginmanager.hasplugin("xdist") or hasattr(config, "workerinput"):
        return
    if getattr(config.option, "numprocesses", None) is None and not config.option.collectonly:
        config.option.numprocesses = "auto"


@pytest.fixture(autouse=True)
def _mpmath_digits(request: pytest.FixtureRequest) -> Iterator[None]:
    """mpmath at the module's ``MPMATH_DIGITS`` for each of its tests (none: left alone)."""
    digits = getattr(request.module, "MPMATH_DIGITS", None)
    if digits is None:
        yield
        return
    with mpmath.workdps(digits):
        yield
