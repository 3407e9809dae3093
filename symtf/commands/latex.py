"""``symtf latex``: a worked example as LaTeX lecture notes, optionally compiled to PDF."""

from __future__ import annotations

import argparse
import contextlib
import os
import re
import shutil
import signal
import subprocess
import tempfile
import time
from pathlib import Path

from symtf import files
from symtf.checking.report import Report
from symtf.commands import SOURCE_HELP, add_allow_path, add_page_options, add_timeout, note
from symtf.errors import SymtfError
from symtf.visible import line as safe_line

#: Debian packages that provide everything the generated documents use.
DEBIAN_PACKAGES = ("texlive-latex-base", "texlive-latex-recommended", "latexmk")
#: Further Debian packages for documents with non-Latin text (compiled with LuaLaTeX).
DEBIAN_PACKAGES_UNICODE = ("texlive-luatex", "fonts-dejavu-core")
#: Seconds a LaTeX run may take before it is stopped.
COMPILE_TIMEOUT = 120.0


class TexNotFound(SymtfError):
    """No TeX installation (``latexmk`` or the needed engine) is on the PATH."""


class LatexCompileError(SymtfError):
    """A generated document did not compile; the message holds the log's first error line."""


#: Largest PDF or log copied out of a LaTeX run, in bytes.
MAX_OUTPUT_BYTES = 500_000_000


def engine_of(tex: str) -> str:
    """``lualatex`` for a document with text pdfLaTeX cannot set, else ``pdflatex``."""
    from symtf.renderers.latex.preamble import needs_lualatex

    return "lualatex" if needs_lualatex(tex) else "pdflatex"


#: LaTeX packages a LuaLaTeX document loads that a TeX installation may lack
#: (Debian's texlive-latex-base ships lualatex, but not luaotfload.sty).
LUALATEX_PACKAGES = ("fontspec.sty", "luaotfload.sty")


def missing_tex(engine: str) -> str | None:
    """What of ``engine`` (``pdflatex`` or ``lualatex``) is not installed, or ``None``.

    For LuaLaTeX, the program alone is not enough: :data:`LUALATEX_PACKAGES` must be
    found by ``kpsewhich`` too.
    """
    if shutil.which(engine) is None:
        return f"{engine} on the PATH"
    if engine != "lualatex":
        return None
    kpsewhich = shutil.which("kpsewhich")
    if kpsewhich is None:
        return "kpsewhich (to find fontspec.sty and luaotfload.sty)"
    try:
        found = subprocess.run(
            [kpsewhich, *LUALATEX_PACKAGES], capture_output=True, text=True, timeout=60
        ).stdout.split()
    except (OSError, subprocess.TimeoutExpired):
        found = []
    lacking = [p for p in LUALATEX_PACKAGES if not any(f.endswith("/" + p) for f in found)]
    return f"{' and '.join(lacking)} for lualatex" if lacking else None


def _install_hint(tex: str = "", missing: str | None = None) -> str:
    engine = engine_of(tex)
    packages = DEBIAN_PACKAGES + (DEBIAN_PACKAGES_UNICODE if engine == "lualatex" else ())
    why = " (the document has text pdfLaTeX cannot set)" if engine == "lualatex" else ""
    return (
        f"no TeX installation found (need {missing or engine + ' on the PATH'}{why}); "
        f"on Debian/Ubuntu: apt-get install -y --no-install-recommends {' '.join(packages)}"
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
        LatexCompileError: LaTeX reported an error (with the log's first error line).
        OutputError: The PDF (or the log) could not be written.
    """
    engine = engine_of(tex)
    latexmk, program = shutil.which("latexmk"), shutil.which(engine)
    missing = missing_tex(engine)
    if program is None or missing is not None:
        raise TexNotFound(_install_hint(tex, missing))
    flags = ["-no-shell-escape", "-interaction=nonstopmode", "-halt-on-error", "-file-line-error"]
    env = {**os.environ, "openin_any": "p", "openout_any": "p", "shell_escape": "f"}
    # Removed on every way out: an error, an interrupt, SIGTERM (symtf.cli raises it as an
    # exception) or the time budget; the LaTeX processes are stopped first (_run).
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
                proc = _run(cmd, cwd=tmp, env=env, timeout=timeout)
            except subprocess.TimeoutExpired:
                raise LatexCompileError(
                    f"{pdf}: {engine} ran longer than {timeout:g} s; no PDF written"
                ) from None
            if proc.returncode != 0:
                raise LatexCompileError(
                    f"{pdf}: {engine} failed, no PDF written: "
                    + first_error(Path(tmp) / "doc.log", proc.stdout)
                )
        out = Path(tmp) / "doc.pdf"
        if not out.exists():
            raise LatexCompileError(f"{pdf}: {engine} finished but wrote no PDF")
        files.write_bytes(pdf, files.read_bytes(out, MAX_OUTPUT_BYTES, what="a PDF"))
        if log is not None:
            files.write_bytes(log, files.read_bytes(Path(tmp) / "doc.log", MAX_OUTPUT_BYTES))
    return pdf


def _run(
    cmd: list[str], *, cwd: str, env: dict[str, str], timeout: float
) -> subprocess.CompletedProcess[str]:
    """Run one LaTeX command in its own process group; on any way out, stop the whole group.

    latexmk starts the engine as its own child: stopping latexmk alone would leave the
    engine writing into a folder that is being removed.
    """
    proc: subprocess.Popen[str] | None = None
    try:
        # An interrupt landing inside Popen (after the fork, before it returns) would leave
        # the child running with no handle to stop it: the signals wait until it is known.
        with files.signals_held():
            proc = subprocess.Popen(
                cmd,
                cwd=cwd,
                env=env,
                stdin=subprocess.DEVNULL,
                stdout=subprocess.PIPE,
                stderr=subprocess.STDOUT,
                text=True,
                errors="replace",
                start_new_session=True,
            )
        out, _ = proc.communicate(timeout=timeout)
    except BaseException:
        if proc is not None:
            _stop_group(proc)
        raise
    return subprocess.CompletedProcess(cmd, proc.returncode, out, "")


def _stop_group(proc: subprocess.Popen[str]) -> None:
    """Kill a LaTeX process group and wait (briefly) until none of its processes is left."""
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(proc.pid, signal.SIGKILL)
    proc.kill()
    proc.wait()
    # The engine is latexmk's child: once latexmk is reaped, it is no longer ours to wait
    # for, so poll its group until the kernel has finished it (an unreaped zombie of a
    # container without an init keeps the group alive; give up after a second).
    for _ in range(100):
        try:
            os.killpg(proc.pid, 0)
        except (ProcessLookupError, PermissionError):
            return
        time.sleep(0.01)


#: An error line of a LaTeX log: ``! message`` or, with -file-line-error, ``./doc.tex:12: message``.
_ERROR_LINE = re.compile(r"^(?:!|(?:\./)?[^:\s]+\.tex:\d+:)\s*(.*\S)")


def first_error(log: Path, stdout: str = "") -> str:
    """The first error line of a LaTeX log (with its ``l.N`` context line when there is one)."""
    try:
        text = files.read_text(log, MAX_OUTPUT_BYTES, what="a LaTeX log")
    except SymtfError:
        text = stdout
    lines = text.splitlines()
    for k, line in enumerate(lines):
        m = _ERROR_LINE.match(line)
        if m and "==> Fatal error occurred" not in line:
            where = next((x.strip() for x in lines[k + 1 : k + 6] if x.startswith("l.")), "")
            return safe_line(m.group(1)) + (f" (at {safe_line(where[:80])})" if where else "")
    tail = [x for x in lines if x.strip()][-1:] or ["no log"]
    return safe_line(tail[0][:200])


def cmd_latex(args: argparse.Namespace) -> int:
    """``symtf latex FILE``: write lecture notes for one derivation (and compile them)."""
    from symtf.cli import DEFAULT_TIMEOUT, EXIT_FAIL, EXIT_OK, time_budget
    from symtf.commands import source
    from symtf.renderers.latex import document
    from symtf.renderers.latex.options import LatexOptions

    if args.decimals < 0 or args.decimals > 30:
        raise SymtfError(f"--decimals: expected 0 to 30, found {args.decimals}")
    timeout = getattr(args, "timeout", DEFAULT_TIMEOUT)
    from symtf.limits import guard

    with time_budget(timeout, args.file), guard(args.file):
        read = source.read(args.file)  # a path, a bundled example's name, or an article
        source.warn_left_out(read)
        derivation = read.derivation
        report = source.traced(read)
        opts = LatexOptions(
            decimals=args.decimals,
            exact_forms=args.exact_forms,
            steps=getattr(args, "steps", None),
            node_names=getattr(args, "node_names", False),
            rules=not getattr(args, "no_rules", False),
        )
        tex = document(report, derivation, opts)
        _write_notes(args, tex)
    return EXIT_FAIL if Report((report,)).failed else EXIT_OK


def _write_notes(args: argparse.Namespace, tex: str) -> None:
    """The .tex to stdout or ``-o``, and its PDF with ``--pdf`` (inside the time budget)."""
    out = Path(args.output) if args.output else None
    if out is not None and out.suffix.lower() == ".pdf":
        # -o notes.pdf names the PDF: its source goes beside it as notes.tex
        args.pdf, out = True, out.with_suffix(".tex")
    if out is None and args.pdf:
        out = Path(Path(args.file).stem + ".tex")
    if out is None:
        files.write_stdout(tex)
    else:
        files.write_text(out, tex)
    if args.pdf:
        assert out is not None
        missing = missing_tex(engine_of(tex))
        if missing is not None:
            # The .tex is written: it compiles anywhere TeX is installed.
            raise TexNotFound(
                f"wrote {out}, but cannot make the PDF: {_install_hint(tex, missing)}"
            )
        pdf = compile_pdf(tex, out.with_suffix(".pdf"))  # the budget's timer stops it too
        note(f"wrote {out} and {pdf}")
    elif out is not None:
        note(f"wrote {out}")


def configure(subparsers: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
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
    p.add_argument("file", metavar="FILE", help=SOURCE_HELP)
    p.add_argument(
        "-o",
        "--output",
        metavar="OUT.tex",
        help="write the LaTeX here (default: stdout); OUT.pdf writes the PDF there and its source beside it as OUT.tex",
    )
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
    p.add_argument(
        "--no-rules",
        action="store_true",
        help="leave out the rule beside each worked line (▷ matrix product)",
    )
    add_page_options(p)
    add_timeout(p, 60.0)
    add_allow_path(p)
    p.set_defaults(func=cmd_latex)
