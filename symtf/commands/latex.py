"""``symtf latex``: a worked example as LaTeX lecture notes, optionally compiled to PDF."""

from __future__ import annotations

import argparse
import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

from symtf.checking.report import Report
from symtf.commands import add_page_options, add_timeout
from symtf.errors import SymtfError

#: Debian packages that provide everything the generated documents use.
DEBIAN_PACKAGES = ("texlive-latex-base", "texlive-latex-recommended", "latexmk")
#: Further Debian packages for documents with non-Latin text (compiled with LuaLaTeX).
DEBIAN_PACKAGES_UNICODE = ("texlive-luatex", "fonts-dejavu-core")
#: Seconds a LaTeX run may take before it is stopped.
COMPILE_TIMEOUT = 120.0


class TexNotFound(SymtfError):
    """No TeX installation (``latexmk`` or the needed engine) is on the PATH."""


class LatexCompileError(RuntimeError):
    """A generated document did not compile (a bug in the renderer: please report it)."""


def engine_of(tex: str) -> str:
    """``lualatex`` for a document with non-Latin text, else ``pdflatex``."""
    from symtf.renderers.latex import needs_lualatex

    return "lualatex" if needs_lualatex(tex) else "pdflatex"


def _install_hint(tex: str = "") -> str:
    engine = engine_of(tex)
    packages = DEBIAN_PACKAGES + (DEBIAN_PACKAGES_UNICODE if engine == "lualatex" else ())
    why = " (the document has non-Latin text)" if engine == "lualatex" else ""
    return (
        f"no TeX installation found (need {engine} on the PATH{why}); on Debian/Ubuntu: "
        f"apt-get install -y --no-install-recommends {' '.join(packages)}"
    )


def compile_pdf(
    tex: str, pdf: Path, *, timeout: float = COMPILE_TIMEOUT, log: Path | None = None
) -> Path:
    """Compile a LaTeX document to ``pdf`` in a temporary directory.

    Uses ``latexmk`` when available, else the engine twice (for the longtable
    widths). The engine is pdfLaTeX, or LuaLaTeX for a document that asks for it
    (see :func:`symtf.renderers.latex.standalone`). Runs in non-stop mode and
    halts on the first error.

    Defence in depth beside the escaping of every string from the derivation
    file: ``-no-shell-escape`` (no ``\\write18``), ``latexmk -norc`` (no
    ``latexmkrc`` from the user or the working directory), kpathsea's paranoid
    ``openin_any``/``openout_any`` (no reading or writing outside the
    temporary directory by absolute or ``..`` paths), all in a fresh temporary
    directory that is removed afterwards.

    Args:
        tex: The whole document.
        pdf: Where to write the PDF.
        timeout: Seconds allowed per LaTeX run.
        log: Where to copy LaTeX's log (to look for overfull boxes), if anywhere.

    Returns:
        The path of the PDF.

    Raises:
        TexNotFound: The engine is not installed.
        LatexCompileError: LaTeX reported an error (with the log's first error lines).
    """
    engine = engine_of(tex)
    latexmk, program = shutil.which("latexmk"), shutil.which(engine)
    if program is None:
        raise TexNotFound(_install_hint(tex))
    flags = ["-no-shell-escape", "-interaction=nonstopmode", "-halt-on-error", "-file-line-error"]
    env = {**os.environ, "openin_any": "p", "openout_any": "p", "shell_escape": "f"}
    with tempfile.TemporaryDirectory(prefix="symtf-latex-") as tmp:
        src = Path(tmp) / "doc.tex"
        src.write_text(tex, encoding="utf-8")
        if latexmk is not None:
            mode = "-lualatex" if engine == "lualatex" else "-pdf"
            runs = [
                [
                    latexmk,
                    "-norc",
                    mode,
                    "-quiet",
                    f"-{engine}={engine} {' '.join(flags)} %O %S",
                    "doc.tex",
                ]
            ]
        else:
            runs = [[program, *flags, "doc.tex"]] * 2
        for cmd in runs:
            try:
                proc = subprocess.run(
                    cmd,
                    cwd=tmp,
                    env=env,
                    capture_output=True,
                    text=True,
                    timeout=timeout,
                    check=False,
                )
            except subprocess.TimeoutExpired:
                raise LatexCompileError(f"LaTeX ran longer than {timeout:g} s") from None
            if proc.returncode != 0:
                raise LatexCompileError(_first_errors(Path(tmp) / "doc.log", proc.stdout))
        out = Path(tmp) / "doc.pdf"
        if not out.exists():
            raise LatexCompileError("LaTeX finished but wrote no PDF")
        pdf.parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(out, pdf)
        if log is not None:
            log.parent.mkdir(parents=True, exist_ok=True)
            shutil.copyfile(Path(tmp) / "doc.log", log)
    return pdf


def _first_errors(log: Path, stdout: str) -> str:
    text = log.read_text(encoding="utf-8", errors="replace") if log.exists() else stdout
    lines = text.splitlines()
    for k, line in enumerate(lines):
        if line.startswith("!") or (" error" in line.lower() and line.count(":") >= 2):
            return "LaTeX error:\n" + "\n".join(lines[k : k + 8])
    return "LaTeX failed:\n" + "\n".join(lines[-15:])


def cmd_latex(args: argparse.Namespace) -> int:
    """``symtf latex FILE``: write lecture notes for one derivation (and compile them)."""
    from symtf import bundled, spec
    from symtf.checking import compare
    from symtf.cli import DEFAULT_TIMEOUT, EXIT_FAIL, EXIT_OK, time_budget
    from symtf.renderers.latex import LatexOptions, document

    if args.decimals < 0 or args.decimals > 30:
        raise SymtfError(f"--decimals: expected 0 to 30, found {args.decimals}")
    timeout = getattr(args, "timeout", DEFAULT_TIMEOUT)
    from symtf.limits import guard

    with time_budget(timeout, args.file), guard(args.file):
        derivation = spec.load(bundled.resolve(args.file))  # a path, or a bundled example's name
        report = compare.check(derivation)
        opts = LatexOptions(
            decimals=args.decimals,
            exact_forms=args.exact_forms,
            steps=getattr(args, "steps", None),
            node_names=getattr(args, "node_names", False),
        )
        tex = document(report, derivation, opts)
    out = Path(args.output) if args.output else None
    if out is None and args.pdf:
        out = Path(Path(args.file).stem + ".tex")
    if out is None:
        sys.stdout.write(tex)
    else:
        out.parent.mkdir(parents=True, exist_ok=True)
        out.write_text(tex, encoding="utf-8")
    if args.pdf:
        assert out is not None
        if shutil.which(engine_of(tex)) is None:
            # The .tex is written: it compiles anywhere TeX is installed.
            raise TexNotFound(f"wrote {out}, but cannot make the PDF: " + _install_hint(tex))
        pdf = compile_pdf(tex, out.with_suffix(".pdf"))
        print(f"wrote {out} and {pdf}", file=sys.stderr)
    elif out is not None:
        print(f"wrote {out}", file=sys.stderr)
    return EXIT_FAIL if Report((report,)).failed else EXIT_OK


def configure(subparsers: argparse._SubParsersAction) -> None:
    """Add the ``latex`` sub-command."""
    p = subparsers.add_parser(
        "latex",
        help="render a derivation as LaTeX lecture notes (optionally a PDF)",
        description=(
            "Render a worked example as a standalone LaTeX document: the model, then every step "
            "(formula, numbers substituted, exact result) with what the article printed and its "
            "verdict. Exit code 1 when a printed number is wrong or slipped, as for check."
        ),
    )
    p.add_argument("file", metavar="FILE", help="a derivation .toml file")
    p.add_argument("-o", "--output", metavar="OUT.tex", help="write here (default: stdout)")
    p.add_argument(
        "--pdf",
        action="store_true",
        help="also compile OUT.pdf beside OUT.tex (needs pdflatex, or lualatex for non-Latin text; "
        "without TeX the .tex is still written, exit 2)",
    )
    p.add_argument(
        "--decimals",
        type=int,
        default=4,
        metavar="N",
        help="decimal places shown for values that are not short exact numbers (default: 4)",
    )
    p.add_argument(
        "--exact-forms",
        choices=("auto", "always", "never"),
        default="auto",
        help="closed forms: when short (auto, default), whenever they fit (always), or never",
    )
    add_page_options(p)
    add_timeout(p, 60.0)
    p.set_defaults(func=cmd_latex)
