"""The ``symtf`` command line.

Exit codes: 0 nothing wrong, 1 a printed number is wrong or slipped, 2 bad
input or usage (3 is an internal error, which is a bug worth reporting).
"""

from __future__ import annotations

import argparse
import dataclasses
import os
import signal
import sys
import time
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import TYPE_CHECKING

from symtf import __version__
from symtf.errors import LimitError, SymtfError
from symtf.limits import LIMITS_HELP, MAX_TIMEOUT, guard, install_flint_hook, timeout_seconds
from symtf.renderers.safe import block as _safe_block

if TYPE_CHECKING:
    from symtf.checking.compare import DerivationReport

EXIT_OK, EXIT_FAIL, EXIT_BAD_INPUT, EXIT_INTERNAL = 0, 1, 2, 3

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
(or is symbolic/undecided, unless --allow-undecided), 2 bad input or usage
"""


def bundled_derivations() -> list[Path]:
    """The derivation files shipped with symtf (see :mod:`symtf.bundled`)."""
    from symtf import bundled

    return bundled.paths()


def _expand(paths: Sequence[str]) -> list[Path]:
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


def _progress(msg: str) -> None:
    if sys.stderr.isatty():
        print(msg, file=sys.stderr, flush=True)


def cmd_check(args: argparse.Namespace) -> int:
    """``symtf check``: verify every printed number."""
    from symtf.checking import compare
    from symtf.renderers import github as render_github
    from symtf.renderers import json as render_json
    from symtf.renderers import junit as render_junit
    from symtf.renderers import sarif as render_sarif
    from symtf.renderers import text as render_text

    if getattr(args, "draft", False):
        return _check_drafts(args)
    reports, errors = [], []
    for path in _expand(args.paths):
        _progress(f"checking {path} ...")
        start = time.perf_counter()
        try:
            reports.append(check_file(path, args.timeout))
        except SymtfError as e:  # one bad file: say so, check the others
            errors.append(compare.FileError(str(path), str(e)))
            print(f"symtf: error: {_safe_block(e)}", file=sys.stderr)
            continue
        _progress(f"  done in {time.perf_counter() - start:.2f} s")
    report = compare.Report(tuple(reports), tuple(errors))
    if args.format == "text" and not reports:
        return EXIT_BAD_INPUT  # the errors are all there is to say, and they are on stderr
    renderer = {
        "text": render_text,
        "json": render_json,
        "junit": render_junit,
        "github": render_github,
        "sarif": render_sarif,
    }[args.format]
    sys.stdout.write(renderer.render(report))
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
    for path in _expand(args.paths):
        _progress(f"checking draft {path} ...")
        with time_budget(args.timeout, str(path)):
            drafts.append(check_draft(spec.load(path)))
    render = render_draft.render_json_draft if args.format == "json" else render_draft.render_text_draft
    sys.stdout.write(render(drafts))
    return EXIT_FAIL if any(d.failed for d in drafts) else EXIT_OK


def check_file(path: Path | str, timeout: float | None = DEFAULT_TIMEOUT) -> DerivationReport:
    """Load and check one derivation file within ``timeout`` seconds.

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
    from symtf.commands.explain import explain

    with time_budget(args.timeout, args.path), guard(args.path):
        sys.stdout.write(_safe_block(explain(args.path, args.label, latex=getattr(args, "latex", False))))
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
        help="verify every printed number of derivation files",
        description="Verify every number a worked example printed; with no PATH, the bundled derivations.",
        epilog=VERDICT_HELP,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    p.add_argument(
        "paths", nargs="*", metavar="PATH", help="derivation .toml files or folders of them"
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
        "--draft",
        action="store_true",
        help='a draft from `symtf extract`: check the mapped claims, list the step = "?" ones with suggested steps',
    )
    p.set_defaults(func=cmd_check)
    p.epilog = f"{p.epilog}\n{LIMITS_HELP}\n"

    p = sub.add_parser(
        "explain",
        help="explain one claim of a derivation step by step",
        description="Show how one printed claim is computed: formula, inputs, exact value, verdict.",
    )
    p.add_argument("path", metavar="FILE", help="a derivation .toml file")
    p.add_argument("label", metavar="LABEL", help="the claim's label (as in the file)")
    p.add_argument(
        "--latex",
        action="store_true",
        help="print a LaTeX document of the steps instead of plain text",
    )
    p.add_argument("--timeout", type=timeout_seconds, default=DEFAULT_TIMEOUT, metavar="SECONDS")
    p.set_defaults(func=cmd_explain)

    for name in ("latex", "derive", "teach", "extract", "html", "steps"):
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
