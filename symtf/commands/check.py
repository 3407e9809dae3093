"""``symtf check PATH…``: verify every number a worked example printed.

With no PATH, the bundled derivations. Each file is loaded and checked within its
time budget (:func:`check_file`); a bad file is reported and the others are still
checked. A folder is searched with its subfolders for derivation files; an article
or notebook is drafted and checked as it stands. ``--draft`` checks a draft from
``symtf extract``: what is mapped, with suggestions for the ``step = "?"`` claims.
"""

from __future__ import annotations

import argparse
import dataclasses
import os
import time
from pathlib import Path
from typing import TYPE_CHECKING

from symtf import files
from symtf.cli import DEFAULT_TIMEOUT
from symtf.commands import add_allow_path
from symtf.errors import SymtfError

if TYPE_CHECKING:
    from symtf.checking.report import DerivationReport, FileError, Report
    from symtf.spec.config import Config

VERDICT_HELP = """\
verdicts (for a number printed with n decimals, one unit = 10^-n):
  exact      the printed value equals the exact value
  rounded    the printed value is the correct rounding of the exact value
  slip       not a correct rounding, but less than one unit off (a sum of rounded terms)
  wrong      one unit or more off: |printed - exact| >= 10^-n
  symbolic   the value depends on a symbol of the file (shown as an expression)
  undecided  the exact value cannot be separated from a rounding boundary
             (balls of up to 65,536 bits, then exact algebra, within --timeout)
Every verdict rests on a certified enclosure (ball arithmetic, then exact
arithmetic), never on a float that merely looks close.

limits: each derivation gets --timeout seconds (default 60); files over
2,000,000 bytes, matrices over 512 rows or columns or 20,000 entries, and
numbers over 100 characters or with a decimal exponent beyond ±60 are refused
with exit code 2 and a message naming the file and key.
Weights read from a file (weights = "model.npz", .npy or .safetensors;
float16/bfloat16/float32/float64 read as the exact binary values) have their
own limit: at most 100,000,000 entries in all and 65,536 rows or columns; a
missing, mistyped or mis-shaped array is exit code 2 naming the file and array.

exit codes: 0 every printed number checks out, 1 something slipped or is wrong
(or is symbolic/undecided, unless --allow-undecided), 2 bad input or usage (also
a write that failed), 3 internal error: a bug to report (SYMTF_DEBUG=1 shows the
traceback); 130 after Ctrl-C, 143 after SIGTERM

files: a derivation reads only files inside its own folder (--allow-path DIR for
others); every output is written whole or not at all
"""


def cmd_check(args: argparse.Namespace) -> int:
    """``symtf check``: verify every printed number."""
    from symtf.checking.report import FileError, Report
    from symtf.cli import EXIT_BAD_INPUT, expand, progress, time_budget
    from symtf.commands import fixing
    from symtf.commands.draft import is_article as _is_article
    from symtf.renderers import text as render_text

    config = project_settings(args)
    if fixing.wanted(args):
        return fixing.cmd_fix(args, config)
    if getattr(args, "draft", False) and not all(_is_article(Path(p)) for p in args.paths or ["."]):
        return _check_drafts(args)  # an article is drafted anyway: --draft is for draft files
    reports, errors = [], []
    skipped: list[Path] = []
    only = getattr(args, "only_derivations", False)
    for path, folder in expand(args.paths, skipped, only_derivations=only, config=config):
        progress(f"checking {path} ...")
        start = time.perf_counter()
        try:
            if _is_article(path):
                from symtf.commands.draft import check_article

                if folder is not None:  # found by a search: it must lie inside the folder
                    files.within(
                        os.path.relpath(path, folder),
                        folder,
                        str(path),
                        place=f"the folder {folder}",
                    )
                with time_budget(args.timeout, str(path)):
                    reports.append(check_article(path))
            else:
                reports.append(check_file(path, args.timeout, folder=folder))
        except (SymtfError, RecursionError) as e:  # one bad file: say so, check the others
            message = str(e) if isinstance(e, SymtfError) else f"{path}: input nested too deeply"
            errors.append(FileError(str(path), message))
            files.say(f"symtf: error: {message}")
            continue
        progress(f"  done in {time.perf_counter() - start:.2f} s")
    report = Report(
        tuple(reports),
        tuple(errors),
        tuple(str(p) for p in skipped),
        require_checked=getattr(args, "require_checked", None),
    )
    if args.format == "text" and not reports and errors:
        return EXIT_BAD_INPUT  # the errors are all there is to say, and they are on stderr
    if args.format == "text" and getattr(args, "quiet", False):
        files.write_stdout(render_text.render(report, quiet=True))
        return _check_exit(report, errors, args)
    import importlib

    # only the asked-for format's renderer is imported (a check's start-up is measured)
    renderer = importlib.import_module(f"symtf.renderers.{args.format}")
    files.write_stdout(renderer.render(report))
    return _check_exit(report, errors, args)


def project_settings(args: argparse.Namespace) -> Config | None:
    """The project's ``[tool.symtf]`` (see :mod:`symtf.spec.config`), its settings put into
    ``args`` where the command line left them unset (the command line wins).

    Raises:
        SymtfError: For a ``[tool.symtf]`` that cannot be read, naming the file and key.
    """
    from symtf.spec import config as project

    found = project.find()
    if getattr(args, "timeout", None) is None:
        args.timeout = found.timeout if found and found.timeout else DEFAULT_TIMEOUT
    if getattr(args, "allow_undecided", None) is None:
        args.allow_undecided = bool(found and found.allow_undecided)
    if getattr(args, "require_checked", None) is None and found is not None:
        args.require_checked = found.require_checked
    return found


def _check_exit(report: Report, errors: list[FileError], args: argparse.Namespace) -> int:
    """The exit code of ``check``: 2 for a bad file, 1 for a number off or undecided, else 0."""
    from symtf.cli import EXIT_BAD_INPUT, EXIT_FAIL, EXIT_OK
    from symtf.visible import line as safe_line

    _coverage_messages(report)
    if errors:
        return EXIT_BAD_INPUT
    partial = [d for d in report.derivations if d.not_reached]
    for d in partial:
        total = len(d.results)
        message = (
            f"{d.path}: the time budget of {args.timeout:g} s ran out: "
            f"{len(d.not_reached)} of {total} claims not checked, from "
            f"{d.not_reached[0]!r} on (the report above is partial; raise it with --timeout)"
        )
        files.say(f"symtf: error: {safe_line(message)}")
    if partial:
        return EXIT_BAD_INPUT
    if report.failed or report.too_few_checked:
        return EXIT_FAIL
    # 0 means every printed number checks out: one nobody could decide does not.
    if report.undecided and not getattr(args, "allow_undecided", False):
        return EXIT_FAIL
    return EXIT_OK


def _coverage_messages(report: Report) -> None:
    """On stderr, for each article: too few of its printed numbers checked for
    ``--require-checked`` (it fails), or, without that option, fewer than half (a warning)."""
    from symtf.renderers.safe import line as safe_line
    from symtf.renderers.text import coverage_problem

    for level, found in (("fail", report.too_few_checked), ("warning", report.few_checked)):
        for d in found:
            files.say(f"symtf: {level}: {safe_line(coverage_problem(d, report))}")


def _check_drafts(args: argparse.Namespace) -> int:
    """``symtf check --draft``: check what is mapped, list what is not, with suggestions."""
    from symtf import spec
    from symtf.checking.draft import check_draft
    from symtf.cli import EXIT_FAIL, EXIT_OK, expand, progress, time_budget
    from symtf.renderers import draft as render_draft

    if args.format not in ("text", "json"):
        raise SymtfError(f"--draft: expected --format text or json, found {args.format}")
    drafts = []
    for path, folder in expand(args.paths):
        if folder is not None:
            files.within(
                os.path.relpath(path, folder), folder, str(path), place=f"the folder {folder}"
            )
        progress(f"checking draft {path} ...")
        with time_budget(args.timeout, str(path)):
            drafts.append(check_draft(spec.load(path)))
    render = (
        render_draft.render_json_draft if args.format == "json" else render_draft.render_text_draft
    )
    files.write_stdout(render(drafts))
    return EXIT_FAIL if any(d.failed for d in drafts) else EXIT_OK


def check_file(
    path: Path | str, timeout: float | None = DEFAULT_TIMEOUT, *, folder: Path | None = None
) -> DerivationReport:
    """Load and check one derivation file within ``timeout`` seconds (``None``: no budget).

    ``folder``: the folder the file was found in (``symtf check DIR``); a file there that is
    a link to somewhere outside it is refused, like any file a derivation names.

    Returns:
        Its :class:`~symtf.checking.report.DerivationReport`.

    Raises:
        SymtfError: For a bad file, with the file, the key (and its line where
            known), what was expected and what was found.
    """
    from symtf import spec
    from symtf.checking import compare
    from symtf.cli import time_budget
    from symtf.limits import guard

    name = str(path)
    derivation = None
    try:
        with time_budget(timeout, name):
            if not Path(path).exists():
                raise SymtfError(f"{name}: no such file or folder")
            if folder is not None:
                files.within(
                    os.path.relpath(path, folder), folder, name, place=f"the folder {folder}"
                )
            start = time.perf_counter()
            with guard(name):
                derivation = spec.load(path)
                report = compare.check(derivation)
            return dataclasses.replace(report, seconds=time.perf_counter() - start)
    except RecursionError:
        raise SymtfError(f"{name}: input nested too deeply") from None
    except SymtfError as e:
        msg = str(e) if name in str(e) else f"{name}: {e}"
        if derivation is not None:
            msg = spec.with_line(msg, name, derivation.lines)
        try:
            error = type(e)(msg)
        except TypeError:  # an error class with its own arguments
            error = SymtfError(msg)
        raise error from None


def configure(subparsers: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """Add the ``check`` sub-command."""
    from symtf.limits import LIMITS_HELP, MAX_TIMEOUT, percent, timeout_seconds

    p = subparsers.add_parser(
        "check",
        help="verify every printed number of derivation files, articles or notebooks",
        description="Verify every number a worked example printed; with no PATH, the bundled derivations. "
        "An article or notebook is read as it stands: its derivation is inferred (see symtf draft) and checked.",
        epilog=VERDICT_HELP,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    p.add_argument(
        "paths",
        nargs="*",
        metavar="PATH",
        help="derivation .toml files, names of bundled ones, or folders: searched with their "
        "subfolders for *.toml files that hold [[claims]] (other TOML files are skipped and "
        "counted; one that cannot be read is an error) and for the articles the project's "
        "[tool.symtf] include names; an article or notebook (.md, .txt, .tex, .ipynb) is "
        "drafted and checked as it stands, with each verdict at its own line. With no PATH: "
        "the files [tool.symtf] include names, else the bundled derivations",
    )
    p.add_argument(
        "--format",
        choices=("text", "json", "junit", "github", "sarif"),
        default="text",
        help="output format: text for people; json (contract v1, schema shipped in the package), "
        "junit, github (workflow annotations) or sarif (2.1.0) for CI (default: text)",
    )
    p.add_argument(
        "--timeout",
        type=timeout_seconds,
        default=None,
        metavar="SECONDS",
        help=f"time budget per derivation, at most {MAX_TIMEOUT:g} (default: [tool.symtf] "
        f"timeout, else {DEFAULT_TIMEOUT:g})",
    )
    p.add_argument(
        "--allow-undecided",
        action=argparse.BooleanOptionalAction,
        default=None,
        help="exit 0 even when some printed numbers are symbolic or undecided "
        "(by default they count as failures: exit 1; default: [tool.symtf] allow-undecided)",
    )
    p.add_argument(
        "--require-checked",
        type=percent,
        default=None,
        metavar="PERCENT",
        help="an article fails (exit 1) when fewer than PERCENT of its printed numbers were "
        "checked (default: [tool.symtf] require-checked; without it, a warning on stderr "
        "when fewer than half were)",
    )
    p.add_argument(
        "--only-derivations",
        action="store_true",
        help="check a file named here only if a folder search would: skip a TOML file that "
        "is read whole and holds no [[claims]] (one that cannot be read is still an error), "
        "an article [tool.symtf] include does not name (a README) and a file its exclude "
        "names (for a pre-commit hook, which names every changed file of its types)",
    )
    p.add_argument(
        "--draft",
        action="store_true",
        help='a draft from `symtf extract`: check the mapped claims, list the step = "?" ones with suggested steps',
    )
    add_allow_path(p)
    from symtf.commands.fixing import add_arguments as add_fix_arguments

    add_fix_arguments(p)
    p.set_defaults(func=cmd_check)
    p.epilog = f"{p.epilog}\n{LIMITS_HELP}\n"
