"""pytest plugin: derivation files as test items, one per claim.

Opt-in, so it never touches a project's other TOML files::

    pytest --symtf derivations/
    pytest --symtf .            # only TOML files that hold [[claims]] are collected

With ``--symtf``, a ``*.toml`` file is collected when it holds a ``[[claims]]``
table, or, if the ini option ``symtf_files`` is set (glob patterns such as
``derivations/*.toml``), when its path matches one of them. Collection only
reads the file (a bad file is one collection error with the command line's
message); the checking happens when the first claim of a file runs, within the
ini option ``symtf_timeout`` (seconds, default that of ``symtf check``). Each
claim fails when any of its printed numbers is a ``slip`` or ``wrong`` and is
skipped when one is ``undecided``. Items are named by the claim's label
(``i_love_ai.toml::logit math``); ``-k`` matches words of a label
(``-k "logit and math"``) or the label with an underscore for each run of
spaces and punctuation ``-k`` cannot spell (``-k logit_math``).
"""

from __future__ import annotations

import fnmatch
import re
from pathlib import Path
from typing import Any

import pytest

#: Runs of characters that ``-k`` cannot spell (it reads words of ``\w:+-.[]\\/``).
_KEYWORD_GAP = re.compile(r"[^\w:+\-.\[\]\\/]+")


def pytest_addoption(parser: pytest.Parser) -> None:
    """Register ``--symtf`` and the ini options ``symtf_files`` and ``symtf_timeout``."""
    group = parser.getgroup("symtf")
    group.addoption(
        "--symtf",
        action="store_true",
        default=False,
        help="collect symtf derivation files (*.toml holding [[claims]]) as tests, one per claim",
    )
    parser.addini(
        "symtf_files",
        type="args",
        default=[],
        help="glob patterns of derivation files for --symtf (default: any *.toml with [[claims]])",
    )
    parser.addini(
        "symtf_timeout",
        default="",
        help="seconds to check one derivation file under --symtf, 0 for none (default: as symtf check)",
    )


def _is_derivation(config: pytest.Config, file_path: Path) -> bool:
    patterns = config.getini("symtf_files")
    if patterns:
        try:
            rel = file_path.relative_to(config.rootpath).as_posix()
        except ValueError:  # a file outside the rootdir, named on the command line
            rel = file_path.as_posix()
        return any(fnmatch.fnmatch(rel, p) or fnmatch.fnmatch(file_path.name, p) for p in patterns)
    from symtf.spec.discover import is_derivation_file

    return is_derivation_file(file_path)


def pytest_collect_file(file_path: Path, parent: pytest.Collector) -> pytest.Collector | None:
    """Collect a derivation file when ``--symtf`` is given."""
    config = parent.config
    if file_path.suffix != ".toml" or not config.getoption("symtf"):
        return None
    if not _is_derivation(config, file_path):
        return None
    return DerivationFile.from_parent(parent, path=file_path)


def _timeout(config: pytest.Config) -> float:
    from symtf.cli import DEFAULT_TIMEOUT

    raw = str(config.getini("symtf_timeout") or "").strip()
    if not raw:
        return DEFAULT_TIMEOUT
    try:
        return float(raw)
    except ValueError:
        raise pytest.UsageError(f"symtf_timeout: expected seconds, found {raw!r}") from None


def _visible(text: str) -> str:
    """A message with the file's control characters spelled out (:mod:`symtf.visible`)."""
    from symtf.visible import block

    return block(text)


def _node_name(label: str) -> str:
    """A label as a node id segment: visible, and without the ``::`` that separates ids."""
    from symtf.visible import line

    return line(label).replace("::", ": :")


class DerivationFile(pytest.File):
    """A derivation file; its items are its claims (checked when the first one runs)."""

    def __init__(self, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.derivation: Any = None  # the parsed file, once collected
        self._report: Any = None
        self._error: str | None = None

    def collect(self) -> Any:
        from symtf import spec
        from symtf.errors import SymtfError

        try:
            derivation = spec.load(self.path)
        except (SymtfError, RecursionError) as e:
            msg = str(e) if isinstance(e, SymtfError) else f"{self.path}: input nested too deeply"
            raise self.CollectError(f"symtf: error: {_visible(msg)}") from None
        self.derivation = derivation
        seen: set[str] = set()
        for claim in derivation.claims:
            name = _node_name(claim.label)
            while name in seen:  # labels are unique; their visible forms might not be
                name += "'"
            seen.add(name)
            yield ClaimItem.from_parent(self, name=name, claim=claim)

    def report(self) -> Any:
        """The derivation's report, checked once within the time budget."""
        if self._report is None and self._error is None:
            from symtf.commands.check import check_file
            from symtf.errors import SymtfError

            try:
                self._report = check_file(self.path, _timeout(self.config))
            except SymtfError as e:  # the command line's message, with the line where known
                self._error = str(e)
        if self._error is not None:
            raise CheckError(self._error)
        return self._report


class ClaimItem(pytest.Item):
    """One claim of a derivation."""

    def __init__(self, *, claim: Any, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.claim = claim
        self.extra_keyword_matches.add(_KEYWORD_GAP.sub("_", claim.label).strip("_"))

    def runtest(self) -> None:
        from symtf.checking.report import FAILING

        assert isinstance(self.parent, DerivationFile)
        report = self.parent.report()
        [result] = [r for r in report.results if r.claim.label == self.claim.label]
        bad = [c for c in result.checks if c.verdict in FAILING]
        if bad:
            raise ClaimFailure(bad)
        if result.verdict == "undecided":
            from symtf.renderers._claims import one_line

            open_ = [c for c in result.checks if c.verdict == "undecided"]
            pytest.skip(_visible(one_line(open_[0])))
        if any(c.verdict == "symbolic" for c in result.checks):
            pytest.skip("symbolic: the value depends on a symbol of the file")

    def repr_failure(self, excinfo: Any, style: Any = None) -> str:
        """One line per off number: verdict, printed, exact, correct rounding, explanation."""
        if isinstance(excinfo.value, ClaimFailure):
            from symtf.renderers._claims import one_line

            return _visible("\n".join(one_line(c) for c in excinfo.value.checks))
        if isinstance(excinfo.value, CheckError):
            return f"symtf: error: {_visible(str(excinfo.value))}"
        return str(super().repr_failure(excinfo))

    def reportinfo(self) -> tuple[Path, int | None, str]:
        """Where the claim is: its file, the line of its ``[[claims]]`` header (0-based)."""
        line = self.claim.line - 1 if self.claim.line else None
        # pytest turns dots into "::" in a domain that ends the node id ("a.b" -> "a::b");
        # a domain that names the place keeps the node id as it is.
        where = f"{self.path.name}:{self.claim.line}" if self.claim.line else self.path.name
        return self.path, line, f"{self.name} ({where})"


class ClaimFailure(Exception):
    """Some printed numbers of a claim are off."""

    def __init__(self, checks: list[Any]) -> None:
        super().__init__(f"{len(checks)} printed number(s) off")
        self.checks = checks


class CheckError(Exception):
    """The derivation could not be checked (bad input, or over the time budget)."""
