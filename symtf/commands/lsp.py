"""``symtf lsp``: the language server, on standard input and output or on a local port."""

from __future__ import annotations

import argparse

from symtf.errors import SymtfError

EPILOG = """\
The server checks Markdown, LaTeX, plain-text and Jupyter notebook documents
(and derivation files) as the editor holds them, and publishes each slip (Warning) and wrong number (Error)
at its place, with hovers and fixes (the same edits as symtf check --fix).
Settings come from [tool.symtf] in the workspace's pyproject.toml (timeout;
[tool.symtf.lsp] show-unchecked) and from the editor (symtf.timeout,
symtf.showUnchecked). Editor set-up: docs/editors.md.
Needs the lsp extra: pip install 'symtf[lsp]'.
"""


def cmd_lsp(args: argparse.Namespace) -> int:
    """``symtf lsp``: serve until the client disconnects."""
    try:
        import lsprotocol  # noqa: F401
        import pygls  # noqa: F401
    except ImportError:
        raise SymtfError("symtf lsp needs pygls and lsprotocol: pip install 'symtf[lsp]'") from None
    import os
    import sys

    from symtf.lsp.handlers import serve

    serve(tcp=args.tcp)
    if sys.stdout.closed:  # the protocol's stream, closed by the server as it ended
        sys.stdout = open(os.devnull, "w")  # noqa: SIM115 (lives until the process ends)
    return 0


def _port(text: str) -> int:
    try:
        port = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a port number, found {text!r}") from None
    if not 1 <= port <= 65535:
        raise argparse.ArgumentTypeError(f"expected a port from 1 to 65535, found {port}")
    return port


def configure(subparsers: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """Add the ``lsp`` sub-command."""
    p = subparsers.add_parser(
        "lsp",
        help="run the language server (editors: diagnostics, hovers and fixes as you type)",
        description="Run symtf's language server on standard input and output (the way "
        "editors start it), or on 127.0.0.1:PORT with --tcp.",
        epilog=EPILOG,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    p.add_argument(
        "--tcp",
        type=_port,
        metavar="PORT",
        help="listen on 127.0.0.1:PORT instead of standard input and output (for debugging)",
    )
    p.set_defaults(func=cmd_lsp)
