"""Render the pictures under docs/ from the current code: ``python docs/make_images.py``.

Each picture is made the way a reader would see it: a PDF that symtf writes (notes,
a worksheet, a derivation) turned into a PNG page by ``pdftoppm``, or a page that
symtf writes opened in headless ``chromium`` and screenshot. CI runs this before
``mkdocs build --strict``, so the site shows what the code draws today; after a change
to how something is typeset, run it and look at the pictures before committing them.

Needs TeX (``latexmk``, ``pdflatex``), ``pdftoppm`` (poppler-utils) and ``chromium``
(Debian's); a missing one is named and the script exits 2. ``--only NAME`` renders one
picture (``--only grid-worksheet.png``); ``--out DIR`` writes elsewhere than docs/.
"""

from __future__ import annotations

import argparse
import os
import re
import shutil
import subprocess
import sys
import tempfile
from collections.abc import Callable
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
SEED = ROOT / "derivations" / "i_love_ai.toml"
# Head 1's W_Q in i_love_ai.toml, and the same with its first entry a symbol.
HEAD1_WQ = 'W_Q = """\n1 0\n0 1\n0 0\n0 0\n0 0\n0 0\n"""'
HEAD1_WQ_A = 'W_Q = """\na 0\n0 1\n0 0\n0 0\n0 0\n0 0\n"""'


def symtf(*args: str, cwd: Path) -> None:
    """Run ``symtf ARGS`` from this checkout; exit 0 or 1 (numbers off) is expected."""
    env = {**os.environ, "PYTHONPATH": str(ROOT) + os.pathsep + os.environ.get("PYTHONPATH", "")}
    r = subprocess.run(
        [sys.executable, "-m", "symtf", *args, "-q", "--timeout", "900"],  # a busy machine
        cwd=cwd,
        env=env,
        capture_output=True,
        text=True,
    )
    if r.returncode not in (0, 1):
        sys.exit(f"make_images: symtf {' '.join(args)} exited {r.returncode}:\n{r.stderr}")


def pdf_page(pdf: Path, page: int, dpi: int, out: Path) -> None:
    """Page ``page`` (from 1) of ``pdf`` as a PNG at ``dpi``."""
    pages = ["-f", str(page), "-l", str(page), "-singlefile"]
    stem = out.with_suffix("")  # pdftoppm adds .png
    subprocess.run(["pdftoppm", "-png", "-r", str(dpi), *pages, str(pdf), str(stem)], check=True)


def screenshot(page: Path, size: tuple[int, int], out: Path) -> None:
    """The top ``size`` (width, height) of an HTML page, as headless Chromium draws it."""
    subprocess.run(
        [
            "chromium",
            "--headless",
            "--no-sandbox",  # CI runs as root
            "--disable-gpu",
            "--hide-scrollbars",
            f"--window-size={size[0]},{size[1]}",
            f"--screenshot={out}",
            page.as_uri(),
        ],
        check=True,
        capture_output=True,
        timeout=300,
    )


# ----------------------------------------------------------------------------- the pictures


def html_page(tmp: Path, out: Path) -> None:
    """The seed article's page: the slip first, then two steps with their verdicts."""
    symtf("html", str(SEED), "--steps", "A_1,logits", "-o", "page.html", cwd=tmp)
    screenshot(tmp / "page.html", (900, 1900), out)


def _alone(page: str, pattern: str) -> str:
    """The page with only the elements ``pattern`` finds in its body (its styles kept)."""
    found = re.findall(pattern, page, re.DOTALL)
    if not found:
        sys.exit(f"make_images: nothing on the page matches {pattern!r}")
    body = '<body><main class="symtf">' + "".join(found) + "</main></body></html>"
    return page[: page.index("<body")] + body


def reveal_step(tmp: Path, out: Path) -> None:
    """Three steps of the work-along page, the middle one opened (as a reader's click does)."""
    steps = "l0.h0.masked,l0.h0.pattern,l0.h0.z"
    symtf("html", str(SEED), "--reveal", "--steps", steps, "-o", "page.html", cwd=tmp)
    page = _alone(
        (tmp / "page.html").read_text(encoding="utf-8"), r'<section class="step.*?</section>'
    )
    sections = page.split('<section class="step')
    work = r"<details(?=[^>]*>\s*<summary[^>]*>Work it out)"
    sections[2] = re.sub(work, "<details open", sections[2], count=1)
    (tmp / "steps.html").write_text('<section class="step'.join(sections), encoding="utf-8")
    screenshot(tmp / "steps.html", (900, 870), out)


def attention_heatmaps(tmp: Path, out: Path) -> None:
    """The page's attention charts alone."""
    symtf("html", str(SEED), "-o", "page.html", cwd=tmp)
    page = _alone(
        (tmp / "page.html").read_text(encoding="utf-8"), r'<figure class="charts".*?</figure>'
    )
    (tmp / "charts.html").write_text(page, encoding="utf-8")
    screenshot(tmp / "charts.html", (760, 980), out)


def notes_page(tmp: Path, out: Path) -> None:
    """A page of birds_build_nests' notes: the softmax written out, displayed lines as maths."""
    symtf("latex", "birds_build_nests", "-o", "notes.tex", "--pdf", cwd=tmp)
    pdf_page(tmp / "notes.pdf", 2, 90, out)


def _symbolic_notes(tmp: Path) -> Path:
    text = SEED.read_text(encoding="utf-8")
    if HEAD1_WQ not in text:
        sys.exit(f"make_images: head 1's W_Q is no longer {HEAD1_WQ!r} in {SEED}")
    (tmp / "sym.toml").write_text(text.replace(HEAD1_WQ, HEAD1_WQ_A, 1), encoding="utf-8")
    if not (tmp / "notes.pdf").exists():
        symtf("latex", "sym.toml", "-o", "notes.tex", "--pdf", cwd=tmp)
    return tmp / "notes.pdf"


def symbolic_notes_scores(tmp: Path, out: Path) -> None:
    """i_love_ai with head 1's W_Q[0, 0] = a: the scaled scores and their intervals."""
    pdf_page(_symbolic_notes(tmp), 8, 90, out)


def symbolic_notes_attention(tmp: Path, out: Path) -> None:
    """The same notes: head 3's output and the heads side by side."""
    pdf_page(_symbolic_notes(tmp), 18, 90, out)


def _derive_page(name: str) -> Callable[[Path, Path], None]:
    def render(tmp: Path, out: Path) -> None:
        env = {**os.environ, "PYTHONPATH": str(ROOT)}
        tex = subprocess.run(
            [sys.executable, "-m", "symtf", "derive", name, "--latex", "--standalone"],
            env=env,
            capture_output=True,
            text=True,
            check=True,
        ).stdout
        (tmp / "derive.tex").write_text(tex, encoding="utf-8")
        subprocess.run(
            [
                "latexmk",
                "-pdf",
                "-norc",
                "-interaction=nonstopmode",
                "-halt-on-error",
                "derive.tex",
            ],
            cwd=tmp,
            check=True,
            capture_output=True,
        )
        pdf_page(tmp / "derive.pdf", 1, 100, out)

    render.__doc__ = f"Page 1 of `symtf derive {name} --latex --standalone`."
    return render


def grid_worksheet(tmp: Path, out: Path) -> None:
    """A page of the grid worksheet for i_love_ai, fresh numbers, seed 17."""
    symtf("exercise", str(SEED), "--layout", "grid", "--fresh", "--seed", "17", "-o", "ex", cwd=tmp)
    pdf_page(tmp / "ex" / "sheet.pdf", 3, 100, out)


IMAGES: dict[str, Callable[[Path, Path], None]] = {
    "html-page.png": html_page,
    "reveal-step.png": reveal_step,
    "attention-heatmaps.png": attention_heatmaps,
    "notes-page.png": notes_page,
    "symbolic-notes-scores.png": symbolic_notes_scores,
    "symbolic-notes-attention.png": symbolic_notes_attention,
    "derive-softmax-jacobian.png": _derive_page("softmax-jacobian"),
    "derive-layernorm-jacobian.png": _derive_page("layernorm-jacobian"),
    "grid-worksheet.png": grid_worksheet,
}
TOOLS = ("latexmk", "pdflatex", "pdftoppm", "chromium")


def main(argv: list[str] | None = None) -> int:
    """Render the pictures; 0 when all were written, 2 when a tool is missing."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--only", action="append", choices=sorted(IMAGES), metavar="NAME")
    parser.add_argument("--out", type=Path, default=ROOT / "docs", metavar="DIR")
    args = parser.parse_args(argv)
    missing = [t for t in TOOLS if shutil.which(t) is None]
    if missing:
        print(f"make_images: not installed: {', '.join(missing)}", file=sys.stderr)
        return 2
    args.out.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory() as scratch:
        symbolic = Path(scratch) / "symbolic"  # the two symbolic pages share one PDF
        symbolic.mkdir()
        for name in args.only or IMAGES:
            make = IMAGES[name]
            tmp = symbolic if make in (symbolic_notes_scores, symbolic_notes_attention) else None
            with tempfile.TemporaryDirectory(dir=scratch) as own:
                make(tmp or Path(own), args.out / name)
            print(f"wrote {args.out / name}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
