"""``symtf exercise``, ``symtf grade`` and ``symtf whatif``: the teaching commands."""

from __future__ import annotations

import argparse
import re
import shutil
from pathlib import Path

from symtf import files
from symtf.commands import SOURCE_HELP, add_allow_path, add_timeout, note
from symtf.errors import SymtfError

#: Seconds a LaTeX run may take before it is stopped.
COMPILE_TIMEOUT = 120.0


def compile_pdf(
    tex: str, pdf: Path, *, timeout: float = COMPILE_TIMEOUT, log: Path | None = None
) -> bool:
    """Compile a sheet or key to ``pdf`` (see :func:`symtf.commands.latex.compile_pdf`).

    Args:
        tex: The document.
        pdf: Where to write the PDF.
        timeout: Seconds allowed per LaTeX run.
        log: Where to copy LaTeX's log (for layout checks), if anywhere.

    Returns:
        ``False`` when no TeX is installed (nothing written), ``True`` on success.

    Raises:
        LatexCompileError: When LaTeX reports an error (with the log's first error line).
    """
    from symtf.commands import latex

    if shutil.which("latexmk") is None and shutil.which(latex.engine_of(tex)) is None:
        return False
    try:
        latex.compile_pdf(tex, pdf, timeout=timeout, log=log)
    except latex.TexNotFound:
        return False
    return True


# ----------------------------------------------------------------------------- exercise


def cmd_exercise(args: argparse.Namespace) -> int:
    """``symtf exercise FILE -o DIR``: a student sheet, an answer key and an answer template."""
    from symtf.checking.evaluation import Evaluator
    from symtf.cli import EXIT_OK, time_budget
    from symtf.commands import source
    from symtf.teach import exercise as E
    from symtf.teach import sheet as S

    if args.blank is not None and args.blank_steps is not None:
        raise SymtfError("--blank and --blank-steps: give one of them, not both")
    out = Path(args.output)
    if out.exists() and not out.is_dir():
        raise SymtfError(f"-o {out}: expected a folder, found a file")
    with time_budget(args.timeout, args.file):
        # A derivation file, or an article drafted in memory: its draft is the sheet's
        # derivation.toml (the key's digest names it), blanks come from the mapped claims.
        read = source.read(args.file)
        source.warn_left_out(read)
        text, d = read.text, read.derivation
        if args.fresh:
            from symtf.teach.fresh import fresh

            text, d = fresh(text, d, args.seed)
        import hashlib

        ev = Evaluator(d)
        trace = ev.exact_trace()
        blanks = E.choose(d, trace, count=args.blank, steps=args.blank_steps, seed=args.seed)
        entries = E.key(d, ev, blanks)
        ex = S.Exercise(d, trace, entries, args.seed, args.fresh)
        texts = {
            "derivation.toml": text,
            "key.toml": E.as_toml_key(
                entries,
                "derivation.toml",
                hashlib.sha256(text.encode()).hexdigest(),
                args.seed,
                args.fresh,
            ),
            "answers.toml": S.answer_template(ex, "key.toml"),
            "sheet.tex": S.sheet_tex(ex) if args.layout == "list" else _grid(ex, args.paper),
            "key.tex": S.key_tex(ex),
            "sheet.html": S.sheet_html(ex),
            "key.html": S.key_html(ex),
        }
        # The whole set appears at the end, or nothing does (an error, Ctrl-C, SIGTERM).
        with files.OutputFolder(out) as folder:
            for name, body in texts.items():
                folder.write_text(name, body)
            written = list(texts)
            if not args.no_pdf:
                for name in ("sheet", "key"):
                    if compile_pdf(texts[f"{name}.tex"], folder.path(f"{name}.pdf")):
                        written.append(f"{name}.pdf")
                    else:
                        files.progress(
                            "symtf: no TeX installation (latexmk, pdflatex): PDFs not compiled"
                        )
                        break
    note(f"wrote {len(entries)} blanks to {out}/: {', '.join(written)}")
    return EXIT_OK


def _grid(ex: object, paper: str) -> str:
    from symtf.teach.grid import grid_tex

    return grid_tex(ex, paper=paper)  # type: ignore[arg-type]


# ----------------------------------------------------------------------------- grade


def cmd_grade(args: argparse.Namespace) -> int:
    """``symtf grade KEY STUDENT.toml``: grade a student's answers."""
    from symtf.cli import EXIT_FAIL, EXIT_OK, time_budget
    from symtf.teach.grade import grade, render_json, render_text

    with time_budget(args.timeout, args.student):
        result = grade(Path(args.key), Path(args.student))
    files.write_stdout(render_json(result) if args.format == "json" else render_text(result))
    return EXIT_OK if result.all_right else EXIT_FAIL


# ----------------------------------------------------------------------------- whatif


def cmd_whatif(args: argparse.Namespace) -> int:
    """``symtf whatif FILE --symbol "l0.h0.W_Q[0,0]=a" [--symbol eps=e]``: weights as symbols.

    When ``--timeout`` runs out, what finished is printed (and written with ``-o``),
    the entries not reached are named, and the exit code is 2, as for any budget.
    """
    from symtf.cli import EXIT_OK, time_budget
    from symtf.commands import source
    from symtf.errors import LimitError
    from symtf.teach.whatif import parse_ranges, render_text, whatif, write
    from symtf.visible import block as safe_block

    (lo, hi), ranges = parse_ranges(args.range)
    try:
        with time_budget(args.timeout, args.file):
            read = source.read(args.file, check=False)  # a file, a bundled name or an article
            source.warn_left_out(read)
            result = whatif(
                Path(args.file),
                args.symbol,
                lo,
                hi,
                claims=args.claims,
                out=None,
                points=args.points,
                ranges=ranges,
                draw=bool(args.output),
                derivation=read.derivation,
            )
    except LimitError as e:  # the budget ran out before the first entry was followed
        raise LimitError(f"{e}; nothing finished (the trace was still being built)") from None
    if args.output:  # after the budget: a partial result is still drawn and saved
        write(result, Path(args.output))
    files.write_stdout(safe_block(render_text(result)))  # the file's labels, made safe
    if not result.complete:
        done, total = len(result.outputs), len(result.outputs) + len(result.not_reached)
        cut = f", {len(result.cut_short)} interval search(es) cut short" if result.cut_short else ""
        raise LimitError(
            f"{args.file}: exceeded the time budget of {args.timeout:g} s (raise it with "
            f"--timeout): the report above is partial, {done} of {total} entries finished{cut}"
        )
    return EXIT_OK


def configure(subparsers: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """Add the ``exercise``, ``grade`` and ``whatif`` sub-commands."""
    p = subparsers.add_parser(
        "exercise",
        help="a student sheet with blanks, its answer key and an answer template",
        description=(
            "Turn a worked example into an exercise: a student sheet (LaTeX, PDF when TeX is "
            "installed, and a self-contained HTML page) with chosen printed values replaced by "
            "blanks; an answer key with each blank's worked solution; answers.toml for the "
            "student; and key.toml, which symtf grade reads."
        ),
    )
    p.add_argument("file", metavar="FILE", help=SOURCE_HELP)
    p.add_argument("-o", "--output", metavar="DIR", required=True, help="folder to write into")
    p.add_argument(
        "--blank", type=int, metavar="N", help="blank N computed entries at random (default 8)"
    )
    p.add_argument(
        "--blank-steps",
        metavar="PATTERN",
        help="blank every printed entry of the steps or claim labels matching these comma-separated globs (l0.h0.*,A_1)",
    )
    p.add_argument(
        "--seed", type=int, default=0, metavar="S", help="seed of the random choices (default 0)"
    )
    p.add_argument(
        "--fresh",
        action="store_true",
        help="new small rational weights with the same structure (seeded); writes derivation.toml",
    )
    p.add_argument(
        "--layout",
        choices=("list", "grid"),
        default="list",
        help=(
            "sheet.tex/sheet.pdf as the worked example's tables in order (list, the default) or "
            "as a printable grid worksheet: matrix products laid out for multiplying, empty "
            "grids to fill (grid)"
        ),
    )
    p.add_argument(
        "--paper", choices=("a4", "letter"), default="a4", help="paper of the grid worksheet"
    )
    p.add_argument("--no-pdf", action="store_true", help="do not compile PDFs")
    add_timeout(p, 60.0)
    add_allow_path(p)
    p.set_defaults(func=cmd_exercise)

    p = subparsers.add_parser(
        "grade",
        help="grade a student's answers against an exercise key",
        description=(
            "Grade the answers in STUDENT.toml (the answers.toml of symtf exercise, filled in) "
            "with symtf's verdicts, and say where the student's chain of numbers first went off. "
            "Exit code 0 when every answer is right, 1 when one is off or missing, 2 for bad input."
        ),
    )
    p.add_argument("key", metavar="KEY", help="the key.toml written by symtf exercise")
    p.add_argument("student", metavar="STUDENT.toml", help="the student's filled-in answers")
    p.add_argument("--format", choices=("text", "json"), default="text")
    add_timeout(p, 60.0)
    add_allow_path(p)
    p.set_defaults(func=cmd_grade)

    p = subparsers.add_parser(
        "whatif",
        help="make weights or settings symbols: formulas, derivatives, plots, certified intervals",
        description=(
            "Replace weights (one entry, or a whole matrix), the score divisor or the norms' eps "
            "by symbols and show how the printed outputs depend on them: a closed form when "
            "short, the partial derivatives at the file's values, plots over --range (each "
            "symbol with the others at the file's values, with each printed value's rounding "
            "band), and, for one or two symbols, the certified interval of each symbol (the "
            "others at the file's values) in which each printed value is a correct rounding. "
            "With -o, also sharpness.png: each softmax row's largest weight and entropy against "
            "the score divisor. Exit code 0; 2 for bad input, and when --timeout runs out "
            "(the partial report is printed, naming the entries not reached)."
        ),
    )
    p.add_argument("file", metavar="FILE", help=SOURCE_HELP)
    p.add_argument(
        "--symbol",
        required=True,
        action="append",
        metavar="WEIGHT=NAME",
        help='a weight entry, a whole matrix or a setting and its symbol, e.g. "l0.h0.W_Q[0,0]=a", '
        '"l0.h0.W_Q=w" (every entry, w_{i,j}), "scale=t" (the score divisor, every head), '
        '"l0.h1.scale=t" (one head), "eps=e", or "a" (a symbol the file declares with a value '
        "in [symbols], followed over its declared range); repeat for several",
    )
    p.add_argument(
        "--range",
        action="append",
        metavar="[NAME=]LO:HI",
        help="range of the symbols (default -2:2); NAME=LO:HI for one symbol; repeatable",
    )
    # "-2:2" starts with a minus: let it be read as a value, like a negative number.
    p._negative_number_matcher = re.compile(r"^-\d*\.?\d+(?::-?\d*\.?\d+)?$")
    p.add_argument(
        "--claims",
        action="append",
        metavar="LABELS",
        help="claim labels, comma-separated or repeated (default: the first entries that depend on it)",
    )
    p.add_argument("--points", type=int, default=121, metavar="N", help="plot points (default 121)")
    p.add_argument(
        "-o", "--output", metavar="DIR", help="write plots (PNG, SVG) and whatif.json here"
    )
    add_timeout(p, 60.0)
    add_allow_path(p)
    p.set_defaults(func=cmd_whatif)
