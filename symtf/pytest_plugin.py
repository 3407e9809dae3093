"""pytest plugin: derivation files as test items, one per claim.

Opt-in, so it never collects unrelated TOML files::

    pytest --symtf derivations/

Each claim becomes a test that fails when any of its printed numbers is a
``slip`` or ``wrong``; an ``undecided`` number is reported as skipped.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest


def pytest_addoption(parser: pytest.Parser) -> None:
    """Register ``--symtf``."""
    group = parser.getgroup("symtf")
    group.addoption(
        "--symtf",
        action="store_true",
        default=False,
        help="collect symtf derivation files (*.toml) as tests, one per claim",
    )


def pytest_collect_file(parent: pytest.Collector, file_path: Path) -> pytest.Collector | None:
    """Collect ``*.toml`` files when ``--symtf`` is given."""
    if file_path.suffix == ".toml" and parent.config.getoption("symtf"):
        return DerivationFile.from_parent(parent, path=file_path)
    return None


class DerivationFile(pytest.File):
    """A derivation file; its items are its claims."""

    def collect(self) -> Any:
        from symtf import compare, spec

        report = compare.check(spec.load(self.path))
        for result in report.results:
            yield ClaimItem.from_parent(self, name=result.claim.label, result=result)


class ClaimItem(pytest.Item):
    """One claim of a derivation."""

    def __init__(self, *, result: Any, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.result = result

    def runtest(self) -> None:
        from symtf.compare import FAILING

        bad = [c for c in self.result.checks if c.verdict in FAILING]
        if bad:
            raise ClaimFailure(bad)
        if self.result.verdict == "undecided":
            pytest.skip("undecided: the exact value cannot be separated from a rounding boundary")
        if any(c.verdict == "symbolic" for c in self.result.checks):
            pytest.skip("symbolic: the value depends on a symbol of the file")

    def repr_failure(self, excinfo: Any, style: Any = None) -> str:
        if isinstance(excinfo.value, ClaimFailure):
            return "\n".join(
                f"{c.index or ''} printed {c.printed}, exact {c.exact}, correctly rounded "
                f"{c.expected}: {c.verdict}: {c.explanation}"
                for c in excinfo.value.checks
            )
        return str(super().repr_failure(excinfo))

    def reportinfo(self) -> tuple[Path, int | None, str]:
        return self.path, None, f"{self.path.name}::{self.name}"


class ClaimFailure(Exception):
    """Some printed numbers of a claim are off."""

    def __init__(self, checks: list[Any]) -> None:
        super().__init__(f"{len(checks)} printed number(s) off")
        self.checks = checks
