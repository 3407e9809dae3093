"""``symtf derive``: the formulas behind the worked examples, proved and checked."""

from __future__ import annotations

import argparse
from typing import Any

from symtf import files
from symtf.commands import add_allow_path, add_timeout

EXIT_OK, EXIT_FAIL, EXIT_BAD_INPUT = 0, 1, 2

DESCRIPTION = """\
Derive a formula and prove it for every size n: each statement has a proof in
index notation (sums over an index, Kronecker deltas), a chain of steps each
checked under the rule it names (quotient rule, delta sifting, linearity,
independence...). Independently, every statement is checked at fixed sizes
(n = 2, 3, 4 by default): exactly (the difference of the two sides cancels to 0)
and numerically (mpmath at 40 digits at a random rational point, derivatives by
central finite differences, agreeing to 25 digits). A statement without a
proof says "checked for n = 2…4, not proved". Exit 0 only when every proof and
every check passed; 1 when one failed.
"""

EPILOG = """\
examples:
  symtf derive --list
  symtf derive softmax-jacobian
  symtf derive layernorm-jacobian --n 5
  symtf derive gelu --latex --standalone > gelu.tex
  symtf derive softmax-jacobian --at i_love_ai:l0.h0.pattern[2]   (a bundled example by name)
"""


def configure(subparsers: Any) -> None:
    """Add the ``derive`` sub-command."""
    p = subparsers.add_parser(
        "derive",
        help="derive and verify a formula (softmax Jacobian, sqrt(d_k) scaling, ...)",
        description=DESCRIPTION,
        epilog=EPILOG,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    p.add_argument("name", nargs="?", metavar="NAME", help="the derivation (see --list)")
    p.add_argument(
        "--list",
        action="store_true",
        help="list the derivations, each marked proved for all n or checked for n ≤ k, from the "
        "proofs it carries (symtf derive NAME checks them)",
    )
    p.add_argument("--n", type=int, metavar="N", help="verify at this size only")
    p.add_argument("--latex", action="store_true", help="emit a LaTeX align environment")
    p.add_argument(
        "--standalone",
        action="store_true",
        help="with --latex: a complete, compilable document",
    )
    p.add_argument(
        "--at",
        metavar="FILE:STEP[ROW]",
        help="also evaluate the formula exactly at a worked example's row",
    )
    add_allow_path(p)
    # Proofs only compute: their budget counts CPU time, so it holds on a loaded machine
    # (attention-backward, the longest, takes under half of it).
    add_timeout(p, 60.0, clock="cpu")
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    """Run ``symtf derive``; returns the exit code."""
    from symtf import derive
    from symtf.derive import render

    if args.list:
        for name in derive.names():
            d = derive.get(name)
            size = f"  [n: {d.size_help}]" if d.sizes else ""
            files.write_stdout(f"{name:24s}{derive.status(name):58s}{d.title}{size}\n")
        return EXIT_OK
    if not args.name:
        raise derive.DeriveError(
            "name a derivation (symtf derive NAME) or list them (symtf derive --list)"
        )
    if args.standalone and not args.latex:
        raise derive.DeriveError("--standalone goes with --latex")
    from symtf.cli import time_budget
    from symtf.limits import guard

    budget = time_budget(getattr(args, "timeout", 60.0), f"derive {args.name}", clock="cpu")
    with budget, guard(args.name):
        result = derive.run(args.name, n=args.n, at=args.at)
    if args.latex:
        if args.standalone:
            out = render.document(result)
        else:
            out = render.latex(result)
            if result.at is not None:
                out += render.at_latex(result.at)
        files.write_stdout(out)
    else:
        files.write_stdout(render.text(result))
    if not result.ok:
        for s in result.failures:
            files.say(f"symtf: step {s.key!r} of {result.name} was not verified")
        return EXIT_FAIL
    return EXIT_OK
