"""The ``symtf`` command line.

Exit codes: 0 nothing wrong, 1 a printed number is wrong or slipped, 2 bad
input or usage, 3 an internal error (a bug to report: no input may reach it),
130 after SIGINT, 143 after SIGTERM (129 after SIGHUP).
"""

from __future__ import annotations

import argparse
import atexit
import gc
import os
import signal
import sys
import types
from collections.abc import Iterator, Sequence
from contextlib import contextmanager, suppress
from pathlib import Path
from typing import TYPE_CHECKING, Literal, NoReturn

from symtf import files
from symtf.errors import BudgetExpired, LimitError, SymtfError
from symtf.limits import install_flint_hook
from symtf.visible import block as _safe_block

if TYPE_CHECKING:  # the parser is imported when it is built
    from symtf.spec.config import Config
    from symtf.suggest import SuggestingParser

EXIT_OK, EXIT_FAIL, EXIT_BAD_INPUT, EXIT_INTERNAL = 0, 1, 2, 3

#: What a FILE argument may be, for every command's help.
FILE_HELP = "a derivation .toml file, or the name of a bundled one (i_love_ai)"

#: The sub-commands, one module each in :mod:`symtf.commands`, in the order ``--help`` lists them.
COMMANDS = (
    "check", "explain", "latex", "derive", "teach", "extract", "draft", "html", "steps", "lsp",
)  # fmt: skip

#: The commands a module of :data:`COMMANDS` adds besides (or instead of) its own name
#: (``tests/test_cli_extras.py`` holds this to what each module's ``configure`` adds).
MODULE_OF = {"exercise": "teach", "grade": "teach", "whatif": "teach"}

#: Default per-derivation time budget in seconds.
DEFAULT_TIMEOUT = 60.0


def bundled_derivations() -> list[Path]:
    """The derivation files shipped with symtf (see :mod:`symtf.bundled`)."""
    from symtf import bundled

    return bundled.paths()


def expand(
    paths: Sequence[str],
    skipped: list[Path] | None = None,
    *,
    only_derivations: bool = False,
    config: Config | None = None,
) -> list[tuple[Path, Path | None]]:
    """The files named by ``paths`` to check, each with the folder it was found in.

    A folder is searched with its subfolders (see :func:`symtf.spec.discover.search`):
    its ``*.toml`` files that hold claims are derivations, and so is every one
    that cannot be read (checking it says why); a readable TOML file that holds no
    claims (a ``pyproject.toml``) is added to ``skipped``. With the project's
    ``[tool.symtf]`` (``config``), a search also finds the articles its ``include``
    names, and passes over what its ``exclude`` names. With ``only_derivations``, a
    file named directly is held to the same rule (a pre-commit hook names every
    changed file of its types): a TOML file without claims, an article ``include``
    does not name (a README) and a file ``exclude`` names are skipped. The folder is
    ``None`` for a file named directly; a file found in a folder must lie inside it
    (a link out of it is refused on its own).

    With no ``paths``: the files ``include`` names (without an ``include``, a search of
    the project's folder), or, outside a project with a ``[tool.symtf]``, the bundled
    derivations.
    """
    from symtf.spec.discover import is_checked, search

    if not paths and config is not None:
        if config.include:
            from symtf.spec.discover import configured_files

            found = configured_files(config)
            if not found:
                raise SymtfError(
                    f"{config.path}: tool.symtf.include: no file matches "
                    f"{', '.join(config.include)} (from {config.root})"
                )
            out: list[tuple[Path, Path | None]] = []
            for f in found:
                if f.suffix.lower() == ".toml" and not is_checked(f):
                    if skipped is not None:
                        skipped.append(f)
                    continue
                out.append((f, None))
            return out
        paths = [str(_short_path(config.root))]
    if not paths:
        found = bundled_derivations()
        if not found:
            raise SymtfError("no bundled derivations found; name a file or folder")
        return [(_short_path(p), None) for p in found]
    from symtf.files import ARTICLE_SUFFIXES

    out = []
    for raw in paths:
        p = Path(raw)
        if p.is_dir():
            found_here, others = search(p, config)
            if not found_here:
                what = f" ({len(others)} other TOML file(s) hold no [[claims]])" if others else ""
                articles = " or articles [tool.symtf] includes" if config is not None else ""
                raise SymtfError(
                    f"{raw}: no derivation files{articles} in this folder or below{what}"
                )
            out.extend((f, p) for f in found_here)
            if skipped is not None:
                skipped.extend(others)
        elif p.exists():
            if only_derivations:
                article = p.suffix.lower() in ARTICLE_SUFFIXES
                if article:
                    wanted = config is not None and config.includes(p)
                else:
                    wanted = p.suffix.lower() == ".toml" and is_checked(p)
                    wanted = wanted and not (config is not None and config.excludes(p))
                if not wanted:
                    if skipped is not None:
                        skipped.append(p)
                    continue
            out.append((p, None))
        else:
            from symtf import bundled

            named = bundled.named(raw)
            # A missing file: its own error when it is checked.
            out.append((_short_path(named) if named is not None else p, None))
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


def _short_path(p: Path) -> Path:
    rel = os.path.relpath(p)
    return Path(rel) if not rel.startswith("..") else p


@contextmanager
def time_budget(
    seconds: float | None, what: str, clock: Literal["wall", "cpu"] = "wall"
) -> Iterator[None]:
    """Raise :class:`LimitError` if the block runs longer than ``seconds``.

    ``clock="wall"`` counts wall-clock time (``SIGALRM``): right for work that waits on
    files or child processes. ``clock="cpu"`` counts this process's CPU time
    (``SIGPROF``), for work that only computes: a budget that holds on a loaded machine,
    where wall-clock time stretches with every other process sharing the cores.

    The timer raises :class:`~symtf.errors.BudgetExpired`, which no ``except Exception``
    or ``except SymtfError`` catches, and raises it again every second should anything
    swallow it; it becomes a ``LimitError`` naming ``what`` here, where the block ends.
    """
    if not seconds or seconds <= 0 or not hasattr(signal, "SIGALRM"):
        yield
        return
    timer, sig = (
        (signal.ITIMER_PROF, signal.SIGPROF)
        if clock == "cpu"
        else (signal.ITIMER_REAL, signal.SIGALRM)
    )
    kind = " of CPU time" if clock == "cpu" else ""

    def expired(signum: int, frame: object) -> None:
        signal.setitimer(timer, 1.0)
        raise BudgetExpired(what)

    previous = signal.signal(sig, expired)
    signal.setitimer(timer, seconds)
    try:
        yield
    except BudgetExpired:
        raise LimitError(
            f"{what}: exceeded the time budget of {seconds:g} s{kind} (raise it with --timeout)"
        ) from None
    finally:
        signal.setitimer(timer, 0)
        signal.signal(sig, previous)


def progress(msg: str) -> None:
    """A progress line on stderr, when a person is watching (and not ``--quiet``)."""
    from symtf.commands import QUIET

    if sys.stderr.isatty() and not QUIET.get():
        files.say(msg)


class _Version(argparse.Action):
    """``--version``: the version is read from the package metadata only when asked for."""

    def __call__(
        self,
        parser: argparse.ArgumentParser,
        namespace: argparse.Namespace,
        values: object,
        option_string: str | None = None,
    ) -> None:
        import symtf

        print(f"symtf {symtf.__version__}")  # on stdout, as argparse's own version action
        parser.exit()


def build_parser(command: str | None = None) -> argparse.ArgumentParser:
    """The argument parser (exposed for documentation and tests).

    Args:
        command: Build only the parsers of this command's module, as :func:`main` does
            when the command line names one (the other commands' modules are then not
            imported); all of them by default.
    """
    from symtf.suggest import SuggestingParser

    parser = SuggestingParser(
        prog="symtf",
        description="Check the arithmetic of hand-worked transformer examples exactly.",
        epilog=getattr(_command_module("check"), "VERDICT_HELP", None),  # what verdicts mean
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument("--version", action=_Version, nargs=0, help="show the version and exit")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")
    module_of = MODULE_OF.get(command, command) if command is not None else None
    for name in COMMANDS:
        if module_of is not None and name != module_of:
            continue
        module = _command_module(name)
        if module is not None:
            module.configure(sub)
    if command is None or command == "completion":
        _add_completion(sub)
    _add_quiet(parser, sub)
    return parser


def _named_command(argv: Sequence[str]) -> str | None:
    """The command a command line names, when only its module's parser is needed: the first
    word that is not an option, if it is a command (the options before it take no values);
    None for ``-h`` before it, no command, or a word that is not one (argparse then
    lists or suggests every command)."""
    for word in argv:
        if word in ("-h", "--help", "--"):
            return None
        if not word.startswith("-"):
            known = word in MODULE_OF or (word in COMMANDS and word not in MODULE_OF.values())
            return word if known or word == "completion" else None
    return None


def _add_completion(sub: argparse._SubParsersAction[SuggestingParser]) -> None:
    p = sub.add_parser(
        "completion",
        help="print a shell completion script (bash, zsh, fish, tcsh)",
        description="Print a tab-completion script for symtf's commands and options.",
        epilog=COMPLETION_HELP,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    p.add_argument("shell", choices=COMPLETION_SHELLS, help="the shell")
    p.set_defaults(func=cmd_completion)


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


def _add_quiet(
    parser: argparse.ArgumentParser, sub: argparse._SubParsersAction[SuggestingParser]
) -> None:
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


def _command_module(name: str) -> types.ModuleType | None:
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
    words = sys.argv[1:] if argv is None else list(argv)
    parser = build_parser(_named_command(words))
    args = parser.parse_args(words)
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
        if os.environ.get("SYMTF_DEBUG"):
            raise
        _say(f"symtf: error: {_safe_block(_input_named(args))}input nested too deeply")
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


def run() -> NoReturn:
    """The ``symtf`` command (and ``python -m symtf``): :func:`main`, then exit at once.

    What a command writes is flushed and the ``atexit`` handlers run (temporary folders,
    coverage), as at any exit; the interpreter's teardown is skipped. Freeing every
    object of SymPy's modules and caches one by one takes about 0.14 s of CPU, as long
    as a small check, and the operating system takes the memory back whole anyway. A
    usage error or ``--help`` (``SystemExit``) and a traceback under ``SYMTF_DEBUG=1``
    leave the usual way.

    The cycle collector runs less often while the command works (SymPy makes and drops
    objects by the hundred thousand, few of them in cycles), as mypy's command does: every
    object alive after the imports is frozen out of its scans, and the youngest generation
    is collected every 100,000 allocations instead of 700. What a command keeps is bounded
    the same way; only garbage in cycles lives a little longer.
    """
    gc.freeze()
    gc.set_threshold(100_000, 50, 100)
    code = main()
    for stream in (sys.stdout, sys.stderr):
        with suppress(OSError, ValueError):  # the reader left: main already said so
            stream.flush()
    atexit._run_exitfuncs()
    os._exit(code)


def _flush_stdout() -> None:
    """Flush what a command wrote; a full device is an error naming standard output."""
    try:
        sys.stdout.flush()
    except BrokenPipeError:
        raise
    except OSError as e:
        files.discard_stdout()
        raise files.OutputError(f"standard output: cannot write ({e.strerror or e})") from None


def _input_named(args: argparse.Namespace) -> str:
    """``FILE: `` for a command that reads one file (its errors name it), else nothing."""
    for attr in ("file", "path", "article", "key"):
        value = getattr(args, attr, None)
        if isinstance(value, str) and value:
            return f"{value}: "
    paths = getattr(args, "paths", None)
    if isinstance(paths, list) and len(paths) == 1 and isinstance(paths[0], str):
        return f"{paths[0]}: "
    return ""


def _say(message: str) -> None:
    """A message on standard error, control characters spelled out (nothing more can be
    done when that fails too)."""
    files.say(message)


if __name__ == "__main__":  # pragma: no cover
    run()
