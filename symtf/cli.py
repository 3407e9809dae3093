"""The ``symtf`` command line.

Exit codes: 0 nothing wrong, 1 a printed number is wrong or slipped, 2 bad
input or usage, 3 an internal error (a bug to report: no input may reach it),
130 after SIGINT, 143 after SIGTERM (129 after SIGHUP).
"""

from __future__ import annotations

import argparse
import dataclasses
import os
import signal
import sys
import time
from collections.abc import Iterator, Sequence
from contextlib import contextmanager, suppress
from pathlib import Path
from typing import TYPE_CHECKING

from symtf import __version__, files
from symtf.commands import add_allow_path
from symtf.errors import BudgetExpired, LimitError, SymtfError
from symtf.limits import LIMITS_HELP, MAX_TIMEOUT, guard, install_flint_hook, timeout_seconds
from symtf.renderers.safe import block as _safe_block

if TYPE_CHECKING:
    from symtf.checking.compare import DerivationReport, FileError, Report

EXIT_OK, EXIT_FAIL, EXIT_BAD_INPUT, EXIT_INTERNAL = 0, 1, 2, 3

#: What a FILE argument may be, for every command's help.
FILE_HELP = "a derivation .toml file, or the name of a bundled one (i_love_ai)"

#: Default per-derivation time budget in seconds.
DEFAULT_TIMEOUT = 60.0

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


def bundled_derivations() -> list[Path]:
    """The derivation files shipped with symtf (see :mod:`symtf.bundled`)."""
    from symtf import bundled

    return bundled.paths()


def _expand(
    paths: Sequence[str], skipped: list[Path] | None = None, *, only_derivations: bool = False
) -> list[tuple[Path, Path | None]]:
    """The derivation files named by ``paths``, each with the folder it was found in.

    A folder is searched with its subfolders (see :mod:`symtf.spec.discover`):
    its ``*.toml`` files that hold claims are derivations, the others (a
    ``pyproject.toml``) are added to ``skipped``. With ``only_derivations``, a
    file named directly is held to the same rule (a pre-commit hook names every
    changed ``*.toml``). The folder is ``None`` for a file named directly; a file
    found in a folder must lie inside it (a link out of it is refused on its own).
    """
    if not paths:
        found = bundled_derivations()
        if not found:
            raise SymtfError("no bundled derivations found; name a file or folder")
        return [(_short_path(p), None) for p in found]
    from symtf.spec.discover import derivation_files, is_derivation_file

    out: list[tuple[Path, Path | None]] = []
    for raw in paths:
        p = Path(raw)
        if p.is_dir():
            found_here, others = derivation_files(p)
            if not found_here:
                what = f" ({len(others)} other TOML file(s) hold no [[claims]])" if others else ""
                raise SymtfError(f"{raw}: no derivation files in this folder or below{what}")
            out.extend((f, p) for f in found_here)
            if skipped is not None:
                skipped.extend(others)
        elif p.exists():
            if only_derivations and not is_derivation_file(p):
                if skipped is not None:
                    skipped.append(p)
                continue
            out.append((p, None))
        else:
            from symtf import bundled

            found = bundled.named(raw)
            # A missing file: its own error when it is checked.
            out.append((_short_path(found) if found is not None else p, None))
    return out


def resolve_bundled_file(args: argparse.Namespace) -> None:
    """Let a command's FILE argument name a bundled derivation (``symtf html i_love_ai``).

    A FILE that does not exist but is the name of a bundled example becomes that
    example's path, so every command takes the names ``check`` takes.
    """
    from symtf import bundled

    for attr in ("file", "path"):
        value = getattr(args, attr, None)
        if isinstance(value, str) and not Path(value).exists():
            found = bundled.named(value)
            if found is not None:
                setattr(args, attr, str(_short_path(found)))


def _is_article(path: Path) -> bool:
    """An article or notebook (``.md``, ``.ipynb``, ``.tex``, ``.txt``): drafted, then checked."""
    from symtf.commands.draft import is_article

    return is_article(path)


def _short_path(p: Path) -> Path:
    rel = os.path.relpath(p)
    return Path(rel) if not rel.startswith("..") else p


@contextmanager
def time_budget(seconds: float | None, what: str) -> Iterator[None]:
    """Raise :class:`LimitError` if the block runs longer than ``seconds`` (wall-clock time).

    The timer raises :class:`~symtf.errors.BudgetExpired`, which no ``except Exception``
    or ``except SymtfError`` catches, and raises it again every second should anything
    swallow it; it becomes a ``LimitError`` naming ``what`` here, where the block ends.
    """
    if not seconds or seconds <= 0 or not hasattr(signal, "SIGALRM"):
        yield
        return

    def expired(signum: int, frame: object) -> None:
        signal.setitimer(signal.ITIMER_REAL, 1.0)
        raise BudgetExpired(what)

    previous = signal.signal(signal.SIGALRM, expired)
    signal.setitimer(signal.ITIMER_REAL, seconds)
    try:
        yield
    except BudgetExpired:
        raise LimitError(
            f"{what}: exceeded the time budget of {seconds:g} s (raise it with --timeout)"
        ) from None
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, previous)


def _progress(msg: str) -> None:
    from symtf.commands import QUIET

    if sys.stderr.isatty() and not QUIET.get():
        print(msg, file=sys.stderr, flush=True)


def cmd_check(args: argparse.Namespace) -> int:
    """``symtf check``: verify every printed number."""
    from symtf.checking import compare
    from symtf.renderers import github as render_github
    from symtf.renderers import json as render_json
    from symtf.renderers import junit as render_junit
    from symtf.renderers import sarif as render_sarif
    from symtf.renderers import text as render_text

    if getattr(args, "draft", False) and not all(_is_article(Path(p)) for p in args.paths or ["."]):
        return _check_drafts(args)  # an article is drafted anyway: --draft is for draft files
    reports, errors = [], []
    skipped: list[Path] = []
    only = getattr(args, "only_derivations", False)
    for path, folder in _expand(args.paths, skipped, only_derivations=only):
        _progress(f"checking {path} ...")
        start = time.perf_counter()
        try:
            if _is_article(path):
                from symtf.commands.draft import check_article

                with time_budget(args.timeout, str(path)):
                    reports.append(check_article(path))
            else:
                reports.append(check_file(path, args.timeout, folder=folder))
        except SymtfError as e:  # one bad file: say so, check the others
            errors.append(compare.FileError(str(path), str(e)))
            print(f"symtf: error: {_safe_block(e)}", file=sys.stderr)
            continue
        _progress(f"  done in {time.perf_counter() - start:.2f} s")
    report = compare.Report(tuple(reports), tuple(errors), tuple(str(p) for p in skipped))
    if args.format == "text" and not reports and errors:
        return EXIT_BAD_INPUT  # the errors are all there is to say, and they are on stderr
    if args.format == "text" and getattr(args, "quiet", False):
        sys.stdout.write(render_text.render(report, quiet=True))
        return _check_exit(report, errors, args)
    renderer = {
        "text": render_text,
        "json": render_json,
        "junit": render_junit,
        "github": render_github,
        "sarif": render_sarif,
    }[args.format]
    files.write_stdout(renderer.render(report))
    return _check_exit(report, errors, args)


def _check_exit(report: Report, errors: list[FileError], args: argparse.Namespace) -> int:
    """The exit code of ``check``: 2 for a bad file, 1 for a number off or undecided, else 0."""
    if errors:
        return EXIT_BAD_INPUT
    if report.failed:
        return EXIT_FAIL
    # 0 means every printed number checks out: one nobody could decide does not.
    if report.undecided and not getattr(args, "allow_undecided", False):
        return EXIT_FAIL
    return EXIT_OK


def _check_drafts(args: argparse.Namespace) -> int:
    """``symtf check --draft``: check what is mapped, list what is not, with suggestions."""
    from symtf import spec
    from symtf.checking.draft import check_draft
    from symtf.renderers import draft as render_draft

    if args.format not in ("text", "json"):
        raise SymtfError(f"--draft: expected --format text or json, found {args.format}")
    drafts = []
    for path, folder in _expand(args.paths):
        if folder is not None:
            files.within(
                os.path.relpath(path, folder), folder, str(path), place=f"the folder {folder}"
            )
        _progress(f"checking draft {path} ...")
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
    """Load and check one derivation file within ``timeout`` seconds.

    ``folder``: the folder the file was found in (``symtf check DIR``); a file there that is
    a link to somewhere outside it is refused, like any file a derivation names.

    Returns:
        Its :class:`~symtf.checking.compare.DerivationReport`.

    Raises:
        SymtfError: For a bad file, with the file, the key (and its line where
            known), what was expected and what was found.
    """
    from symtf import spec
    from symtf.checking import compare

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


def cmd_explain(args: argparse.Namespace) -> int:
    """``symtf explain``: walk through one claim step by step."""
    from symtf.explain import explain

    with time_budget(args.timeout, args.path), guard(args.path):
        text = explain(
            args.path,
            args.label,
            latex=getattr(args, "latex", False),
            node_names=getattr(args, "node_names", False),
        )
    files.write_stdout(_safe_block(text))
    return EXIT_OK


def build_parser() -> argparse.ArgumentParser:
    """The argument parser (exposed for documentation and tests)."""
    from symtf.suggest import SuggestingParser

    parser = SuggestingParser(
        prog="symtf",
        description="Check the arithmetic of hand-worked transformer examples exactly.",
        epilog=VERDICT_HELP,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument("--version", action="version", version=f"symtf {__version__}")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")

    p = sub.add_parser(
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
        "counted); an article or notebook (.md, .txt, .tex, .ipynb) is drafted and checked as "
        "it stands, with each verdict at its own line",
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
        default=DEFAULT_TIMEOUT,
        metavar="SECONDS",
        help=f"time budget per derivation, at most {MAX_TIMEOUT:g} (default: {DEFAULT_TIMEOUT:g})",
    )
    p.add_argument(
        "--allow-undecided",
        action="store_true",
        help="exit 0 even when some printed numbers are symbolic or undecided "
        "(by default they count as failures: exit 1)",
    )
    p.add_argument(
        "--only-derivations",
        action="store_true",
        help="skip a file named here that holds no [[claims]], as a folder search does "
        "(for a pre-commit hook, which names every changed *.toml)",
    )
    p.add_argument(
        "--draft",
        action="store_true",
        help='a draft from `symtf extract`: check the mapped claims, list the step = "?" ones with suggested steps',
    )
    add_allow_path(p)
    p.set_defaults(func=cmd_check)
    p.epilog = f"{p.epilog}\n{LIMITS_HELP}\n"

    p = sub.add_parser(
        "explain",
        help="explain one claim of a derivation step by step",
        description="Show how one printed claim is computed: formula, inputs, exact value, verdict.",
    )
    p.add_argument("path", metavar="FILE", help=FILE_HELP)
    p.add_argument("label", metavar="LABEL", help="the claim's label (as in the file)")
    p.add_argument(
        "--latex",
        action="store_true",
        help="print a LaTeX document of the steps instead of plain text",
    )
    p.add_argument(
        "--node-names",
        action="store_true",
        help="also show internal node names (l0.h0.pattern) beside the article's labels",
    )
    p.add_argument("--timeout", type=timeout_seconds, default=DEFAULT_TIMEOUT, metavar="SECONDS")
    add_allow_path(p)
    p.set_defaults(func=cmd_explain)

    for name in ("latex", "derive", "teach", "extract", "draft", "html", "steps"):
        module = _command_module(name)
        if module is not None:
            module.configure(sub)
    p = sub.add_parser(
        "completion",
        help="print a shell completion script (bash, zsh, fish, tcsh)",
        description="Print a tab-completion script for symtf's commands and options.",
        epilog=COMPLETION_HELP,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    p.add_argument("shell", choices=COMPLETION_SHELLS, help="the shell")
    p.set_defaults(func=cmd_completion)
    _add_quiet(parser, sub)
    return parser


#: Shells ``symtf completion`` writes a script for.
COMPLETION_SHELLS = ("bash", "zsh", "fish", "tcsh")

COMPLETION_HELP = """\
install (once; a new shell then completes symtf's commands, options and files):
  bash:  symtf completion bash > ~/.local/share/bash-completion/completions/symtf
  zsh:   symtf completion zsh > ~/.zfunc/_symtf   (with fpath+=~/.zfunc before compinit)
  fish:  symtf completion fish > ~/.config/fish/completions/symtf.fish
  tcsh:  symtf completion tcsh > ~/.symtf.completion.csh && echo 'source ~/.symtf.completion.csh' >> ~/.tcshrc
"""


def cmd_completion(args: argparse.Namespace) -> int:
    """``symtf completion SHELL``: the completion script, made by shtab from this parser.

    The script is static: pressing TAB runs the shell's own code, never Python.
    Arguments shown as ``FILE``, ``PATH``, ``ARTICLE`` or ending in ``.toml`` complete
    file names; the others complete their choices.
    """
    import shtab

    parser = build_parser()
    for action in _all_actions(parser):
        metavar = str(action.metavar or "")
        if action.choices is None and (
            metavar in ("FILE", "PATH", "ARTICLE", "KEY", "DIR") or "." in metavar
        ):
            action.complete = shtab.FILE  # type: ignore[attr-defined]
    sys.stdout.write(shtab.complete(parser, shell=args.shell))
    return EXIT_OK


def _all_actions(parser: argparse.ArgumentParser) -> Iterator[argparse.Action]:
    for action in parser._actions:
        yield action
        if isinstance(action, argparse._SubParsersAction):
            for command in set(action.choices.values()):
                yield from _all_actions(command)


def _add_quiet(parser: argparse.ArgumentParser, sub: argparse._SubParsersAction) -> None:
    """``-q``/``--quiet`` before or after the command (``symtf -q check``, ``symtf check -q``)."""
    what = (
        "print less: no progress or 'wrote ...' notes; check's text report shows only "
        "the numbers that are off and the summary (errors and warnings are always printed)"
    )
    parser.add_argument("-q", "--quiet", action="store_true", help=what)
    for command in set(sub.choices.values()):
        command.add_argument(
            "-q", "--quiet", action="store_true", default=argparse.SUPPRESS, help=what
        )


def _command_module(name: str) -> object | None:
    import importlib

    try:
        return importlib.import_module(f"symtf.commands.{name}")
    except ModuleNotFoundError as e:
        if e.name == f"symtf.commands.{name}":
            return None
        raise


class Terminated(BaseException):
    """SIGTERM or SIGHUP arrived: unwind (temporary folders and files are removed), then exit.

    A ``BaseException``, like ``KeyboardInterrupt``, so that no ``except Exception`` keeps
    the work going.
    """

    def __init__(self, signum: int) -> None:
        super().__init__(signum)
        self.signum = signum


def _terminate(signum: int, frame: object) -> None:
    raise Terminated(signum)


@contextmanager
def _signals_unwind() -> Iterator[None]:
    """While the command runs, SIGTERM and SIGHUP raise :class:`Terminated` (main thread only)."""
    wanted = [getattr(signal, n) for n in ("SIGTERM", "SIGHUP") if hasattr(signal, n)]
    previous = {}
    try:
        for sig in wanted:
            previous[sig] = signal.signal(sig, _terminate)
    except ValueError:  # not the main thread: leave the signals alone
        pass
    try:
        yield
    finally:
        for sig, handler in previous.items():
            signal.signal(sig, handler)


def main(argv: Sequence[str] | None = None) -> int:
    """Run the command line; returns the exit code."""
    parser = build_parser()
    args = parser.parse_args(argv)
    install_flint_hook()  # a FLINT allocation failure exits 2 naming the file, not abort()
    resolve_bundled_file(args)
    from symtf.commands import QUIET

    QUIET.set(bool(getattr(args, "quiet", False)))
    if not getattr(args, "func", None):
        parser.print_help(sys.stderr)
        return EXIT_BAD_INPUT
    try:
        with _signals_unwind(), files.allow_paths(getattr(args, "allow_path", None) or ()):
            code = int(args.func(args))
            _flush_stdout()
            return code
    except SymtfError as e:
        _say(f"symtf: error: {_safe_block(e)}")
        return EXIT_BAD_INPUT
    except RecursionError:
        _say("symtf: error: input nested too deeply")
        return EXIT_BAD_INPUT
    except MemoryError:
        _say("symtf: error: input too large for memory")
        return EXIT_BAD_INPUT
    except KeyboardInterrupt:
        _say("symtf: interrupted")
        return 130
    except BudgetExpired:  # a budget outside any time_budget block: cannot happen, but say so
        _say("symtf: error: exceeded the time budget (raise it with --timeout)")
        return EXIT_BAD_INPUT
    except Terminated as t:
        _say(f"symtf: terminated by {signal.Signals(t.signum).name}")
        return 128 + t.signum
    except BrokenPipeError:  # the reader left (| head): what it read was all it wanted
        files.discard_stdout()
        return EXIT_OK
    except Exception as e:  # a bug: say so plainly, keep the traceback behind a switch
        if os.environ.get("SYMTF_DEBUG"):
            raise
        _say(
            f"symtf: internal error: {type(e).__name__}: {_safe_block(e)}\n"
            "This is a bug in symtf; rerun with SYMTF_DEBUG=1 for the traceback."
        )
        return EXIT_INTERNAL


def _flush_stdout() -> None:
    """Flush what a command wrote; a full device is an error naming standard output."""
    try:
        sys.stdout.flush()
    except BrokenPipeError:
        raise
    except OSError as e:
        files.discard_stdout()
        raise files.OutputError(f"standard output: cannot write ({e.strerror or e})") from None


def _say(message: str) -> None:
    """A message on standard error (nothing more can be done when that fails too)."""
    with suppress(OSError, ValueError):
        print(message, file=sys.stderr, flush=True)


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
