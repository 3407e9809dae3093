"""``symtf check --fix`` and ``--diff``: rewrite the slips and wrong numbers a check found.

Each file named is read once, checked, and planned (:mod:`symtf.fix`). The safe
fixes (and, with ``--fix-inherited``, the inherited numbers whose root is fixed
too) are made in memory, and the new text is checked again: a fix whose number
is not judged right there is dropped and the rest checked again, so that what is
written is what a fresh ``symtf check`` confirms. ``--fix`` then writes the file
atomically (only if it still holds the bytes that were checked) and reports the
new text's check; ``--diff`` prints a unified diff and writes nothing.
"""

from __future__ import annotations

import argparse
import dataclasses
import os
import time
from pathlib import Path
from typing import TYPE_CHECKING, Any

from symtf import files
from symtf.errors import SymtfError

if TYPE_CHECKING:
    from symtf.checking.report import DerivationReport
    from symtf.fix import Fix

#: Rounds of checking the fixed text again before the fixes that held are written.
MAX_ROUNDS = 3


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """``--fix``, ``--diff`` and ``--fix-inherited`` (on ``symtf check``)."""
    g = parser.add_argument_group("fixing")
    g.add_argument(
        "--fix",
        action="store_true",
        help="rewrite each slip and wrong number to the correct rounding at its printed digits, "
        "in the article or the derivation's printed strings, where the place is known and the "
        "new number is right in every reading; the file is checked again before it is written "
        "(atomically). Displayed lines right as written get a suggestion instead",
    )
    g.add_argument(
        "--diff",
        action="store_true",
        help="show what --fix would change as a unified diff, and write nothing",
    )
    g.add_argument(
        "--fix-inherited",
        action="store_true",
        help="also rewrite numbers off only because an upstream printed number was (cause "
        "'inherited'), when their root is rewritten in the same run (implies --fix "
        "unless --diff)",
    )


def wanted(args: argparse.Namespace) -> bool:
    """Whether the command line asks for fixes."""
    return bool(
        getattr(args, "fix", False)
        or getattr(args, "diff", False)
        or getattr(args, "fix_inherited", False)
    )


def cmd_fix(args: argparse.Namespace, config: Any = None) -> int:
    """``symtf check --fix`` / ``--diff``.

    ``config``: the project's ``[tool.symtf]`` (:mod:`symtf.spec.config`), whose ``include``
    names the files to fix when none is named on the command line.
    """
    from symtf.checking.report import Report
    from symtf.cli import EXIT_BAD_INPUT, EXIT_FAIL, EXIT_OK, expand
    from symtf.renderers import text as render_text
    from symtf.renderers.safe import block as safe_block

    if args.format != "text":
        raise SymtfError(
            f"--fix and --diff report in text: expected --format text, found {args.format} "
            "(run symtf check --format json on the fixed files)"
        )
    if getattr(args, "draft", False):
        raise SymtfError("--fix and --diff rewrite articles and derivations, not --draft files")
    if not args.paths and (config is None or not config.include):
        raise SymtfError(
            "--fix and --diff rewrite only files named on the command line or included by "
            "the project's [tool.symtf]: name the files"
        )
    show_diff = bool(args.diff)
    reports = []
    errors = 0
    worst = EXIT_OK
    for path, folder in expand(args.paths, only_derivations=args.only_derivations, config=config):
        name = str(path)
        try:
            before, (report, after, applied, suggestions) = _fix_one(path, folder, args)
            if show_diff:
                from symtf.fix import unified_diff

                if after != before:
                    files.write_stdout(unified_diff(name, before, after))
            elif after != before:
                _write_if_unchanged(path, before, after)
        except SymtfError as e:
            errors += 1
            files.say(f"symtf: error: {safe_block(e)}")
            continue
        _tell(name, applied, suggestions, written=not show_diff)
        reports.append(report)
        if _fails(report, allow_undecided=bool(getattr(args, "allow_undecided", False))):
            worst = EXIT_FAIL
    if not show_diff and reports:
        files.write_stdout(render_text.render(Report(tuple(reports))))
    if errors:
        return EXIT_BAD_INPUT
    return worst


def _fails(report: DerivationReport, *, allow_undecided: bool) -> bool:
    """Whether ``symtf check`` would exit 1 on this report."""
    failing = ("slip", "wrong") if allow_undecided else ("slip", "wrong", "symbolic", "undecided")
    return any(c.verdict in failing for c in report.checks)


def _tell(name: str, applied: list[Fix], suggestions: list[Fix], *, written: bool) -> None:
    """What was (or would be) rewritten, and what was not, on stderr."""
    from symtf.renderers.safe import line as safe_line

    verb = "fixed" if written else "would fix"
    if applied:
        files.say(f"{safe_line(name)}: {verb} {len(applied)} number(s):")
        for f in applied:
            files.say(f"  {f.where}: {f.message}")
    for f in suggestions:
        claim = "" if f.where.startswith(f.claim) else f"{safe_line(f.claim)}: "
        files.say(f"{safe_line(name)}: {f.where}: {claim}{f.message}")


def _fix_one(
    path: Path, folder: Path | None, args: argparse.Namespace
) -> tuple[str, tuple[DerivationReport, str, list[Fix], list[Fix]]]:
    """Check, plan, apply and check again one file: ``(text, (report, new text, applied, rest))``.

    With ``--diff`` the report is the file's as it stands (nothing is written);
    with ``--fix`` it is the new text's.
    """
    from symtf import fix

    name = str(path)
    if folder is not None:
        files.within(os.path.relpath(path, folder), folder, name, place=f"the folder {folder}")
    text = _read(path)
    report = check_text(path, text, args.timeout)
    planned = fix.plan(report, text)
    chosen = planned.chosen(inherited=bool(args.fix_inherited))
    after, final, held = text, report, list(chosen)
    for _ in range(MAX_ROUNDS):
        if not held:
            after, final = text, report
            break
        after = fix.apply(text, [f.edit for f in held if f.edit is not None])
        final = check_text(path, after, args.timeout)
        failed = _not_confirmed(held, final, after)
        if not failed:
            break
        held = [f for f in held if f not in failed]
    else:
        held, after, final = [], text, report
    dropped = [
        dataclasses.replace(
            f,
            applicability=fix.DISPLAY_ONLY,
            message=f"not rewritten: the check of the fixed text did not confirm it ({f.message})",
        )
        for f in chosen
        if f not in held
    ]
    rest = [*dropped, *(f for f in planned.fixes if f not in chosen)]
    shown = report if args.diff else final
    return text, (shown, after, held, rest)


def _not_confirmed(held: list[Fix], report: DerivationReport, text: str) -> list[Fix]:
    """The fixes whose new number the check of the fixed text does not judge right."""
    from symtf.fix import RIGHT, placed

    verdicts: dict[tuple[int, int, int], list[str]] = {}
    for p in placed(report, text):
        if p.place is not None:
            verdicts.setdefault(p.place, []).append(str(p.check.get("verdict")))
    shift: dict[int, list[tuple[int, int]]] = {}
    for f in held:
        assert f.edit is not None
        shift.setdefault(f.edit.line, []).append(
            (f.edit.column, len(f.edit.new) - (f.edit.end_column - f.edit.column))
        )
    failed = []
    for f in held:
        e = f.edit
        assert e is not None
        column = e.column + sum(d for c, d in shift[e.line] if c < e.column)
        found = verdicts.get((e.line, column, column + len(e.new)), [])
        if not found or any(v not in RIGHT for v in found):
            failed.append(f)
    return failed


def _read(path: Path) -> str:
    from symtf.commands.draft import is_article

    if is_article(path):
        from symtf.extract import read_article_text

        return read_article_text(path)
    from symtf.spec import MAX_FILE_BYTES

    if not path.exists():
        raise SymtfError(f"{path}: no such file or folder")
    return files.read_text(path, MAX_FILE_BYTES, name=str(path), what="a derivation")


def check_text(path: Path, text: str, timeout: float | None) -> DerivationReport:
    """Check a file's text as ``symtf check`` checks the file, within ``timeout`` seconds.

    Raises:
        SymtfError: For text that is not a derivation or an article, naming the file.
    """
    from symtf.cli import time_budget
    from symtf.commands.draft import check_article_text, is_article
    from symtf.limits import guard

    name = str(path)
    if is_article(path):
        from symtf.draft import article_kind

        with time_budget(timeout, name):
            report: DerivationReport = check_article_text(text, name, article_kind(path))
        return report
    from symtf import spec
    from symtf.checking import compare

    derivation = None
    try:
        with time_budget(timeout, name), guard(name):
            start = time.perf_counter()
            derivation = spec.loads(text, name)
            checked = compare.check(derivation)
        return dataclasses.replace(checked, seconds=time.perf_counter() - start)
    except RecursionError:
        raise SymtfError(f"{name}: input nested too deeply") from None
    except SymtfError as e:  # as symtf check words it: the file, and the key's line
        msg = str(e) if name in str(e) else f"{name}: {e}"
        if derivation is not None:
            msg = spec.with_line(msg, name, derivation.lines)
        raise SymtfError(msg) from None


def _write_if_unchanged(path: Path, before: str, after: str) -> None:
    """Write ``after`` atomically, if the file still holds ``before``.

    Raises:
        SymtfError: The file changed while it was checked.
    """
    now: Any = _read(path)
    if now != before:
        raise SymtfError(f"{path}: the file changed while it was checked; nothing was written")
    files.write_text(path, after, name=str(path))
