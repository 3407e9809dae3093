"""``symtf html``: a worked example as one self-contained web page for readers."""

from __future__ import annotations

import argparse

from symtf import files
from symtf.checking.report import Report
from symtf.commands import add_allow_path, add_page_options, add_timeout, note


def cmd_html(args: argparse.Namespace) -> int:
    """``symtf html FILE``: write the page (stdout or ``-o``); exit 1 when a number is off."""
    from symtf import spec
    from symtf.checking import compare
    from symtf.cli import EXIT_FAIL, EXIT_OK, time_budget
    from symtf.renderers.html import HtmlOptions, render_html

    with time_budget(args.timeout, args.file):
        derivation = spec.load(args.file)
        report = compare.traced(compare.check(derivation), derivation)
        page = render_html(
            report,
            derivation,
            steps=args.steps,
            node_names=args.node_names,
            options=HtmlOptions(reveal=args.reveal),
        )
    if args.output:
        files.write_text(args.output, page)
        note(f"wrote {args.output}")
    else:
        files.write_stdout(page)
    return EXIT_FAIL if Report((report,)).failed else EXIT_OK


def configure(subparsers: argparse._SubParsersAction) -> None:
    """Add the ``html`` sub-command."""
    p = subparsers.add_parser(
        "html",
        help="render a derivation as one self-contained web page (MathML, no JavaScript)",
        description=(
            "Render a worked example as one static HTML page: every step with its formula, "
            "the numbers substituted and the exact result (native MathML), and the article's "
            "printed values marked by verdict, with the exact value and the explanation on hover "
            "and in a details element. No JavaScript, nothing fetched from the network. "
            "Exit code 1 when a printed number is wrong or slipped, as for check."
        ),
        epilog=(
            "examples:\n"
            "  symtf html derivations/i_love_ai.toml -o i_love_ai.html\n"
            "  symtf html derivations/i_love_ai.toml --steps 'A_1,logit*' -o attention.html\n"
            "  symtf html derivations/i_love_ai.toml --reveal -o work-along.html\n"
        ),
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    p.add_argument("file", metavar="FILE", help="a derivation file, or a bundled example's name")
    p.add_argument("-o", "--output", metavar="PAGE.html", help="write here (default: stdout)")
    add_page_options(p)
    p.add_argument(
        "--reveal",
        action="store_true",
        help="step by step: each step shows its formula, and its numbers and verdicts open "
        "when the reader asks (a details element per step, no JavaScript)",
    )
    add_timeout(p, 60.0)
    add_allow_path(p)
    p.set_defaults(func=cmd_html)
