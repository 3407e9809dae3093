"""Sub-commands beyond ``check`` and ``explain``: each module has ``configure(subparsers)``.

The options several sub-commands share are added here once, so that they mean
the same everywhere (a ``--timeout`` that refuses ``nan`` in one command refuses it
in all of them).
"""

from __future__ import annotations

import sys
from contextvars import ContextVar
from typing import Any

#: Whether ``-q``/``--quiet`` was given: notes and progress are not printed.
QUIET: ContextVar[bool] = ContextVar("symtf_quiet", default=False)


def note(message: str) -> None:
    """Tell the user what was done (``wrote page.html``) on stderr, unless ``--quiet``.

    Errors and warnings are printed whatever ``--quiet`` says; this is for the rest.
    """
    if not QUIET.get():
        print(message, file=sys.stderr, flush=True)


def add_timeout(parser: Any, default: float) -> None:
    """``--timeout SECONDS``: a finite positive budget (see :func:`symtf.limits.timeout_seconds`)."""
    from symtf.limits import timeout_seconds

    parser.add_argument(
        "--timeout",
        type=timeout_seconds,
        default=default,
        metavar="SECONDS",
        help=f"time budget in seconds (default: {default:g})",
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
