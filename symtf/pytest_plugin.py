"""pytest plugin: derivation files and articles as test items, one per claim.

Opt-in, so it never touches a project's other files::

    pytest --symtf derivations/
    pytest --symtf .            # TOML files that hold [[claims]], and [tool.symtf]'s articles
    pytest --symtf posts/post.md notebooks/attention.ipynb

With ``--symtf``, a ``*.toml`` file is collected when it holds a ``[[claims]]``
table or cannot be read (larger than a derivation may be, not UTF-8, not valid
TOML: its collection fails with ``symtf check``'s message, never a silent pass),
or, if the ini option ``symtf_files`` is set (glob patterns such as
``derivations/*.toml``), when its path matches one of them. An article or
notebook (``.md``, ``.ipynb``, ``.tex``, ``.txt``) is collected when it is named
on the command line, when the project's ``[tool.symtf]`` ``include`` names it
(see :mod:`symtf.spec.config`), or when ``symtf_files`` matches it; a file that
``[tool.symtf]`` ``exclude`` names is not collected by a search. An article's
collection drafts it (as ``symtf check`` does) to find its claims; each claim is
an item located at the article's line, as nbval locates a notebook's cells, and
one more item, ``printed numbers checked``, passes when every number was checked,
is skipped listing the numbers not checked and why, and fails when fewer were
checked than ``[tool.symtf]`` ``require-checked`` asks.

The checking happens when the first claim of a file runs, within the ini option
``symtf_timeout`` (seconds; default ``[tool.symtf]`` ``timeout``, else that of
``symtf check``). Each claim fails when any of its printed numbers is a ``slip``
or ``wrong`` and is skipped when one is ``undecided``. Items are named by the
claim's label (``i_love_ai.toml::logit math``); ``-k`` matches words of a label
(``-k "logit and math"``) or the label with an underscore for each run of
spaces and punctuation ``-k`` cannot spell (``-k logit_math``).
"""

from __future__ import annotations

import contextlib
import fnmatch
import re
from pathlib import Path
from typing import Any, NoReturn

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
        help="collect symtf derivation files (*.toml holding [[claims]]) and articles "
        "([tool.symtf] include, or named) as tests, one per claim",
    )
    parser.addini(
        "symtf_files",
        type="args",
        default=[],
        help="glob patterns of derivation files and articles for --symtf (default: any "
        "*.toml with [[claims]], and the articles [tool.symtf] include names)",
    )
    parser.addini(
        "symtf_timeout",
        default="",
        help="seconds to check one derivation file under --symtf, 0 for none (default: as symtf check)",
    )


def _matches_symtf_files(config: pytest.Config, file_path: Path) -> bool | None:
    """Whether ``symtf_files`` names the file; ``None`` when the option is not set."""
    patterns = config.getini("symtf_files")
    if not patterns:
        return None
    try:
        rel = file_path.relative_to(config.rootpath).as_posix()
    except ValueError:  # a file outside the rootdir, named on the command line
        rel = file_path.as_posix()
    return any(fnmatch.fnmatch(rel, p) or fnmatch.fnmatch(file_path.name, p) for p in patterns)


def _is_derivation(config: pytest.Config, file_path: Path) -> bool:
    named = _matches_symtf_files(config, file_path)
    if named is not None:
        return named
    project = _project(config)
    if project is not None and project.excludes(file_path):
        return False
    from symtf.spec.discover import is_checked

    return is_checked(file_path)  # a file that cannot be read is collected, and its error shown


def _is_article(config: pytest.Config, file_path: Path, session: pytest.Session) -> bool:
    from symtf.files import ARTICLE_SUFFIXES

    if file_path.suffix.lower() not in ARTICLE_SUFFIXES:
        return False
    if session.isinitpath(file_path):  # named on the command line
        return True
    named = _matches_symtf_files(config, file_path)
    if named is not None:
        return named
    project = _project(config)
    return project is not None and bool(project.includes(file_path))


def pytest_collect_file(file_path: Path, parent: pytest.Collector) -> pytest.Collector | None:
    """Collect a derivation file or an article when ``--symtf`` is given."""
    config = parent.config
    if not config.getoption("symtf"):
        return None
    if file_path.suffix == ".toml":
        if not _is_derivation(config, file_path):
            return None
        return DerivationFile.from_parent(parent, path=file_path)
    if _is_article(config, file_path, parent.session):
        return ArticleFile.from_parent(parent, path=file_path)
    return None


#: Where the project's ``[tool.symtf]`` is kept for the run (``None``: there is none).
_PROJECT = pytest.StashKey[Any]()


def pytest_configure(config: pytest.Config) -> None:
    """With ``--symtf``, read ``[tool.symtf]`` and refuse a bad setting before collection."""
    if not config.getoption("symtf", default=False):
        return
    from symtf.errors import SymtfError
    from symtf.spec.config import find

    try:
        config.stash[_PROJECT] = find(config.invocation_params.dir)
    except SymtfError as e:
        raise pytest.UsageError(f"symtf: error: {e}") from None
    _timeout(config)


def _project(config: pytest.Config) -> Any:
    return config.stash.get(_PROJECT, None)


def _timeout(config: pytest.Config) -> float | None:
    """``symtf_timeout`` as ``symtf check --timeout`` reads it; ``0`` is no budget.

    Raises:
        pytest.UsageError: For text, a negative number, ``nan``, ``inf`` or more than
            ``--timeout`` allows, naming the option and the value.
    """
    import argparse

    from symtf.cli import DEFAULT_TIMEOUT
    from symtf.limits import timeout_seconds

    raw = str(config.getini("symtf_timeout") or "").strip()
    if not raw:
        project = _project(config)
        return project.timeout if project is not None and project.timeout else DEFAULT_TIMEOUT
    if raw in ("0", "0.0"):
        return None
    try:
        return timeout_seconds(raw)
    except argparse.ArgumentTypeError as e:
        raise pytest.UsageError(f"symtf_timeout: {e} (0 for no budget)") from None


def _skip(item: pytest.Item, reason: str) -> NoReturn:
    """``pytest.skip``, reported at the item's own place (its article or derivation line)
    rather than at this module's line, when the item has a line; the reason's control
    characters are spelled out (:mod:`symtf.visible`)."""
    reason = _visible(reason)
    exc = pytest.skip.Exception(reason)
    if item.location[1] is not None:
        with contextlib.suppress(TypeError):  # a pytest without the keyword keeps ``exc``
            exc = pytest.skip.Exception(reason, _use_item_location=True)
    raise exc


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


class ArticleFile(DerivationFile):
    """An article or notebook: drafted when collected, its claims checked when the first runs."""

    def __init__(self, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.drafted: Any = None

    def collect(self) -> Any:
        from symtf import spec
        from symtf.cli import time_budget
        from symtf.draft import draft_file
        from symtf.errors import SymtfError
        from symtf.limits import guard

        name = str(self.path)
        try:
            with time_budget(_timeout(self.config), name), guard(name):
                self.drafted = draft_file(self.path)
                derivation = spec.loads(self.drafted.toml, name)
        except (SymtfError, RecursionError) as e:
            msg = str(e) if isinstance(e, SymtfError) else f"{name}: input nested too deeply"
            raise self.CollectError(f"symtf: error: {msg}") from None
        self.derivation = derivation
        seen: set[str] = set()
        for claim in derivation.claims:
            if claim.unmapped:  # no step explains it: listed by the coverage item
                continue
            label = _node_name(claim.label)
            while label in seen:
                label += "'"
            seen.add(label)
            yield ClaimItem.from_parent(self, name=label, claim=claim)
        yield CoverageItem.from_parent(self, name=COVERAGE)

    def report(self) -> Any:
        """The article's report, checked once within the time budget."""
        if self._report is None and self._error is None:
            from symtf.cli import time_budget
            from symtf.commands.draft import check_article
            from symtf.errors import SymtfError

            try:
                with time_budget(_timeout(self.config), str(self.path)):
                    self._report = check_article(self.path, self.drafted)
            except SymtfError as e:
                self._error = str(e)
        if self._error is not None:
            raise CheckError(self._error)
        return self._report


#: The name of an article's item on its share of printed numbers checked.
COVERAGE = "printed numbers checked"


class CoverageItem(pytest.Item):
    """How many of an article's printed numbers were checked, and which were not, and why."""

    def __init__(self, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.funcargs: dict[str, Any] = {}  # see ClaimItem
        self.extra_keyword_matches.add(_KEYWORD_GAP.sub("_", COVERAGE))  # -k printed_numbers

    def runtest(self) -> None:
        from symtf.checking.report import Report
        from symtf.renderers._claims import unchecked_line
        from symtf.renderers.text import coverage_problem

        assert isinstance(self.parent, ArticleFile)
        d = self.parent.report()
        project = _project(self.config)
        report = Report((d,), require_checked=project.require_checked if project else None)
        if report.too_few_checked:
            raise CheckError(coverage_problem(d, report))
        if d.unchecked:
            listed = "; ".join(f"line {u.line}: {unchecked_line(u)}" for u in d.unchecked)
            _skip(
                self,
                f"{d.checked_count} of {d.printed_count} printed numbers checked, "
                f"{d.unchecked_count} not checked: {listed}",
            )

    def repr_failure(self, excinfo: Any, style: Any = None) -> str:
        """The article's share of checked numbers, and what ``require-checked`` asks."""
        if isinstance(excinfo.value, CheckError):
            return f"symtf: {excinfo.value}"
        return str(super().repr_failure(excinfo))

    def reportinfo(self) -> tuple[Path, int | None, str]:
        """The article's first line (the numbers not checked are at many lines)."""
        return self.path, 0, f"{self.name} ({self.path.name})"


class ClaimItem(pytest.Item):
    """One claim of a derivation."""

    def __init__(self, *, claim: Any, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.claim = claim
        # No fixtures; but a plugin's hook wrapper may read ``item.funcargs`` and, without
        # it, return before it yields (pytest-lsp 1.0.1), which fails every item it wraps.
        self.funcargs: dict[str, Any] = {}
        self.extra_keyword_matches.add(_KEYWORD_GAP.sub("_", claim.label).strip("_"))

    def runtest(self) -> None:
        from symtf.checking.report import FAILING

        assert isinstance(self.parent, DerivationFile)
        report = self.parent.report()
        found = [r for r in report.results if r.claim.label == self.claim.label]
        if not found:  # an article's claim the check could not read: left out, with why
            why = [
                u.reason for u in report.unchecked if getattr(u, "label", None) == self.claim.label
            ]
            _skip(self, f"not checked: {why[0] if why else 'the check could not read it'}")
        [result] = found
        # a copy slip's literal (symtf.checking.lineage) is judged with the line that writes it
        copies = [
            c
            for r in report.results
            for c in r.checks
            if c.extra.get("literal_of") == self.claim.label
        ]
        bad = [c for c in (*copies, *result.checks) if c.verdict in FAILING]
        if bad:
            raise ClaimFailure(bad)
        if result.verdict == "undecided":
            from symtf.renderers._claims import one_line

            open_ = [c for c in result.checks if c.verdict == "undecided"]
            _skip(self, one_line(open_[0]))
        if any(c.verdict == "symbolic" for c in result.checks):
            _skip(self, "symbolic: the value depends on a symbol of the file")

    def repr_failure(self, excinfo: Any, style: Any = None) -> str:
        """One line per off number: verdict, printed, exact, correct rounding, explanation."""
        if isinstance(excinfo.value, ClaimFailure):
            from symtf.renderers._claims import one_line

            return _visible("\n".join(one_line(c) for c in excinfo.value.checks))
        if isinstance(excinfo.value, CheckError):
            return f"symtf: error: {_visible(str(excinfo.value))}"
        return str(super().repr_failure(excinfo))

    def reportinfo(self) -> tuple[Path, int | None, str]:
        """Where the claim is: its file, the line of its ``[[claims]]`` header (0-based); for
        an article, the article's line it was printed on (a notebook's, of its raw file)."""
        if isinstance(self.parent, ArticleFile):
            source = self.claim.source_line
            where = f"{self.path.name}:{source}" if source else self.path.name
            return self.path, source - 1 if source else None, f"{self.name} ({where})"
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
