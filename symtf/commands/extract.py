"""``symtf extract``: find an article's printed numbers and write a draft derivation."""

from __future__ import annotations

import argparse
from typing import Any

from symtf.commands import add_timeout
from symtf.visible import json_text

DESCRIPTION = """\
Read an article (Markdown .md, plain text, LaTeX .tex, or a Jupyter notebook
.ipynb: its markdown cells and the outputs of its code cells), find every
printed matrix, vector and number with its nearest label and source line, and
every displayed arithmetic line (5.652 + 5.652 + 10.068 = 21.372), and write
them as a draft derivation: displayed lines become expression claims ready to
check, everything else a claim with step = "?". Then:

  symtf check --draft draft.toml     # check what can be checked, suggest steps
"""


def configure(subparsers: Any) -> None:
    """Add the ``extract`` sub-command."""
    p = subparsers.add_parser(
        "extract",
        help="find an article's printed numbers and write a draft derivation",
        description=DESCRIPTION,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    p.add_argument(
        "article",
        metavar="ARTICLE",
        help="a .md, .txt, .tex or .ipynb file, or a program (.py, .c, .h, …)",
    )
    p.add_argument(
        "-o", "--output", metavar="DRAFT.toml", help="write the draft here (default: stdout)"
    )
    p.add_argument(
        "--format",
        choices=("toml", "json"),
        default="toml",
        help="a draft derivation (default) or the found values as JSON",
    )
    p.add_argument("--title", help="the draft's title (default: from the file name)")
    add_timeout(p, 60.0)
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    """Run ``symtf extract``; returns the exit code."""
    from symtf import files
    from symtf.cli import time_budget
    from symtf.draft.read import draft_toml, extract
    from symtf.limits import guard

    with time_budget(getattr(args, "timeout", 60.0), args.article), guard(args.article):
        found = extract(args.article)
    if args.format == "json":
        text = (
            json_text(
                [
                    {
                        "kind": f.kind,
                        "label": f.label,
                        "line": f.line,
                        "cell": f.cell,
                        "printed": [list(r) for r in f.rows],
                        "expression": f.expression,
                        "latex": f.latex,
                    }
                    for f in found
                ],
                indent=2,
            )
            + "\n"
        )
    else:
        text = draft_toml(found, source=args.article, title=args.title)
    if args.output:
        files.write_text(args.output, text)
        arithmetic = sum(f.kind == "arithmetic" for f in found)
        files.progress(
            f"{args.output}: {len(found)} printed item(s), {arithmetic} displayed arithmetic line(s);"
            f" next: symtf check --draft {args.output}"
        )
    else:
        files.write_stdout(text)
    return 0
