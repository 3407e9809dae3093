"""Sub-commands beyond ``check`` and ``explain``: each module has ``configure(subparsers)``.

The options several sub-commands share are added here once, so that they mean
the same everywhere (a ``--timeout`` that refuses ``nan`` in one command refuses it
in all of them).
"""

from __future__ import annotations

from contextvars import ContextVar
from typing import Any

#: What a command that takes a worked example reads (:mod:`symtf.commands.source`).
SOURCE_HELP = (
    "a derivation .toml file, a bundled example's name (i_love_ai), or an article or "
    "notebook (.md, .ipynb, .tex, .txt), drafted in memory as symtf check drafts it; "
    'printings no step explains (step = "?") are left out and named on stderr'
)

#: Whether ``-q``/``--quiet`` was given: notes and progress are not printed.
QUIET: ContextVar[bool] = ContextVar("symtf_quiet", default=False)


def note(message: str) -> None:
    """Tell the user what was done (``wrote page.html``) on stderr, unless ``--quiet``.

    Errors and warnings are printed whatever ``--quiet`` says; this is for the rest.
    """
    if not QUIET.get():
        from symtf import files

        files.progress(message)


def add_timeout(parser: Any, default: float, clock: str = "wall") -> None:
    """``--timeout SECONDS``: a finite positive budget (see :func:`symtf.limits.timeout_seconds`).

    ``clock`` says what the budget counts (see :func:`symtf.cli.time_budget`), for the help.
    """
    from symtf.limits import timeout_seconds

    what = "CPU seconds" if clock == "cpu" else "seconds"
    parser.add_argument(
        "--timeout",
        type=timeout_seconds,
        default=default,
        metavar="SECONDS",
        help=f"time budget in {what} (default: {default:g})",
    )


def add_page_options(parser: Any) -> None:
    """``--steps`` and ``--node-names``, shared by the LaTeX notes and the HTML page."""
    parser.add_argument(
        "--steps",
        metavar="PATTERN",
        help="only steps whose node name, title or claim label matches one of these "
        "comma-separated globs (e.g. 'A_1,logits' or 'l0.h0.*')",
    )
    parser.add_argument(
        "--node-names",
        action="store_true",
        help="also show internal node names (l0.h0.pattern) beside the article's labels",
    )


def allow_path_folder(text: str) -> str:
    """An ``argparse`` type for ``--allow-path``: a folder named by at least one character.

    An empty value (``--allow-path ''``, ``--allow-path "$UNSET"``) names no folder; read as
    a path it would be the working folder, which from ``/`` is every file on the machine.
    It is a usage error, as is a value of only spaces or one holding a NUL character.

    Raises:
        argparse.ArgumentTypeError: For an empty or blank value, or one with a NUL.
    """
    import argparse

    if not text.strip() or "\x00" in text:
        raise argparse.ArgumentTypeError(
            f"expected a folder, found {text!r} (name the folder, e.g. --allow-path . "
            "for the working folder)"
        )
    return text


def add_allow_path(parser: Any) -> None:
    """``--allow-path DIR``: a folder besides the derivation's own that its files may be read from."""
    parser.add_argument(
        "--allow-path",
        action="append",
        type=allow_path_folder,
        default=[],
        metavar="DIR",
        help="let the derivation read files (weights) inside DIR too; by default it reads only "
        "files inside its own folder (no absolute paths, no escape through '..' or links); "
        "may be repeated",
    )
