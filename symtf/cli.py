"""The ``symtf`` command line.

Exit codes: 0 nothing wrong, 1 a printed number is wrong or slipped, 2 bad
input or usage (3 is an internal error, which is a bug worth reporting).
"""

from __future__ import annotations

import argparse
import os
import signal
import sys
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path

from symtf import __version__
from symtf.errors import LimitError, SymtfError
from symtf.limits import install_flint_hook
from symtf.renderers.safe import block as _safe_block

EXIT_OK, EXIT_FAIL, EXIT_BAD_INPUT, EXIT_INTERNAL = 0, 1, 2, 3

#: The sub-commands, one module each in :mod:`symtf.commands`, in the order ``--help`` lists them.
COMMANDS = ("check", "explain", "latex", "derive", "teach", "extract", "html", "steps")

#: Default per-derivation time budget in seconds.
DEFAULT_TIMEOUT = 60.0

def bundled_derivations() -> list[Path]:
    """The derivation files shipped with symtf (see :mod:`symtf.bundled`)."""
    from symtf import bundled

    return bundled.paths()


def expand(paths: Sequence[str]) -> list[Path]:
    if not paths:
        found = bundled_derivations()
        if not found:
            raise SymtfError("no bundled derivations found; name a file or folder")
        return [_short_path(p) for p in found]
    out: list[Path] = []
    for raw in paths:
        p = Path(raw)
        if p.is_dir():
            files = sorted(p.glob("*.toml"))
            if not files:
                raise SymtfError(f"{raw}: no *.toml derivation files in this folder")
            out.extend(files)
        elif p.exists():
            out.append(p)
        else:
            from symtf import bundled

            found = bundled.named(raw)
            out.append(_short_path(found) if found is not None else p)  # a missing file: its error
    return out


def _short_path(p: Path) -> Path:
    rel = os.path.relpath(p)
    return Path(rel) if not rel.startswith("..") else p


@contextmanager
def time_budget(seconds: float | None, what: str) -> Iterator[None]:
    """Raise :class:`LimitError` if the block runs longer than ``seconds``."""
    if not seconds or seconds <= 0 or not hasattr(signal, "SIGALRM"):
        yield
        return

    def expired(signum: int, frame: object) -> None:
        raise LimitError(
            f"{what}: exceeded the time budget of {seconds:g} s (raise it with --timeout)"
        )

    previous = signal.signal(signal.SIGALRM, expired)
    signal.setitimer(signal.ITIMER_REAL, seconds)
    try:
        yield
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, previous)


def progress(msg: str) -> None:
    """A progress line on stderr, when a person is watching."""
    if sys.stderr.isatty():
        print(msg, file=sys.stderr, flush=True)


def build_parser() -> argparse.ArgumentParser:
    """The argument parser (exposed for documentation and tests)."""
    from symtf.suggest import SuggestingParser

    parser = SuggestingParser(
        prog="symtf",
        description="Check the arithmetic of hand-worked transformer examples exactly.",
        epilog=getattr(_command_module("check"), "VERDICT_HELP", None),  # what verdicts mean
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument("--version", action="version", version=f"symtf {__version__}")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")
    for name in COMMANDS:
        module = _command_module(name)
        if module is not None:
            module.configure(sub)
    return parser


def _command_module(name: str) -> object | None:
    import importlib

    try:
        return importlib.import_module(f"symtf.commands.{name}")
    except ModuleNotFoundError as e:
        if e.name == f"symtf.commands.{name}":
            return None
        raise


def main(argv: Sequence[str] | None = None) -> int:
    """Run the command line; returns the exit code."""
    parser = build_parser()
    args = parser.parse_args(argv)
    install_flint_hook()  # a FLINT allocation failure exits 2 naming the file, not abort()
    if not getattr(args, "func", None):
        parser.print_help(sys.stderr)
        return EXIT_BAD_INPUT
    try:
        return int(args.func(args))
    except SymtfError as e:
        print(f"symtf: error: {_safe_block(e)}", file=sys.stderr)
        return EXIT_BAD_INPUT
    except RecursionError:
        print("symtf: error: input nested too deeply", file=sys.stderr)
        return EXIT_BAD_INPUT
    except MemoryError:
        print("symtf: error: input too large for memory", file=sys.stderr)
        return EXIT_BAD_INPUT
    except KeyboardInterrupt:
        print("symtf: interrupted", file=sys.stderr)
        return 130
    except BrokenPipeError:
        return EXIT_OK
    except Exception as e:  # a bug: say so plainly, keep the traceback behind a switch
        if os.environ.get("SYMTF_DEBUG"):
            raise
        print(
            f"symtf: internal error: {type(e).__name__}: {e}\n"
            "This is a bug in symtf; rerun with SYMTF_DEBUG=1 for the traceback.",
            file=sys.stderr,
        )
        return EXIT_INTERNAL


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
