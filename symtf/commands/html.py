"""``symtf html``: a worked example as one self-contained web page for readers.

A derivation file becomes the page of its steps (:mod:`symtf.renderers.html`); an article
or notebook becomes itself, annotated: each number symtf judged marked where it stands
(:mod:`symtf.renderers.post`).
"""

from __future__ import annotations

import argparse

from symtf import files
from symtf.checking.report import Report
from symtf.commands import SOURCE_HELP, add_allow_path, add_page_options, add_timeout, note


def cmd_html(args: argparse.Namespace) -> int:
    """``symtf html FILE``: write the page (stdout or ``-o``); exit 1 when a number is off."""
    from symtf.cli import EXIT_FAIL, EXIT_OK, time_budget
    from symtf.commands import source
    from symtf.renderers.html import HtmlOptions, render_html

    if source.is_article(args.file):
        return _post(args)
    with time_budget(args.timeout, args.file):
        read = source.read(args.file)  # a path, or a bundled example's name
        derivation = read.derivation
        report = source.traced(read)
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


def _post(args: argparse.Namespace) -> int:
    """``symtf html post.md``: the article itself, each number judged marked in place."""
    from symtf.cli import EXIT_FAIL, EXIT_OK, time_budget
    from symtf.commands import source
    from symtf.draft import article_kind
    from symtf.errors import SymtfError
    from symtf.limits import guard
    from symtf.renderers.post import render_post

    for flag, given in (
        ("--steps", args.steps),
        ("--reveal", args.reveal),
        ("--node-names", args.node_names),
    ):
        if given:
            raise SymtfError(
                f"{flag}: applies to a derivation's page of steps, not to an article "
                f"(symtf html {args.file} draws the article itself; symtf draft writes its "
                "derivation, whose page takes it)"
            )
    with time_budget(args.timeout, args.file), guard(args.file):
        read = source.read(args.file)
        source.warn_left_out(read)
        assert read.report is not None
        kind = article_kind(args.file)
        text = read.article_text
        notebook = None
        if kind == "ipynb":
            from symtf.draft.code import file_lines

            notebook = file_lines(text)
        page = render_post(
            read.report, text, kind, drafted=read.derivation.drafted, notebook=notebook
        )
    if args.output:
        files.write_text(args.output, page)
        note(f"wrote {args.output}")
    else:
        files.write_stdout(page)
    return EXIT_FAIL if Report((read.report,)).failed else EXIT_OK


def configure(subparsers: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """Add the ``html`` sub-command."""
    p = subparsers.add_parser(
        "html",
        help="render a derivation as one self-contained web page (MathML, no JavaScript)",
        description=(
            "Render a worked example as one static HTML page: every step with its formula, "
            "the numbers substituted and the exact result (native MathML), and the article's "
            "printed values marked by verdict, with the exact value and the explanation on hover "
            "and in a details element. An article or notebook is drawn as itself instead: each "
            "number symtf judged marked where it stands (colour and a symbol: ✓ right, ± slip, "
            "✗ wrong, ? undecided, ○ not checked), its explanation a click away, and a bar at "
            "the top counting them. No JavaScript, nothing fetched from the network. "
            "Exit code 1 when a printed number is wrong or slipped, as for check."
        ),
        epilog=(
            "examples:\n"
            "  symtf html derivations/i_love_ai.toml -o i_love_ai.html\n"
            "  symtf html derivations/i_love_ai.toml --steps 'A_1,logit*' -o attention.html\n"
            "  symtf html derivations/i_love_ai.toml --reveal -o work-along.html\n"
            "  symtf html post.md -o post.html      # the post itself, annotated\n"
        ),
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    p.add_argument("file", metavar="FILE", help=SOURCE_HELP)
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
