"""Make the teaching screenshots of the docs again, from the repository root.

    python docs/screenshots.py [--corpus DIR] [--out docs]

Each image is a page of what symtf writes, as a reader sees it:

- ``sheet-page.png``: a page of the student sheet of ``i_love_ai`` (PDF), its blanks
  boxed with room to write;
- ``key-page.png``: the first page of its answer key (PDF);
- ``key-page-html.png``: the top of the same key as a web page (Chromium);
- ``grid-worksheet.png``: a page of the grid worksheet (fresh numbers, seed 17);
- ``drafted-notes.png``: a page of the notes of a notebook drafted by ``symtf draft``
  (Sebastian Raschka's *LLMs from scratch*, chapter 3, MIT-licensed; read from
  ``--corpus``, the benchmark folder, and skipped when it is not there).

Tools: ``latexmk`` (TeX Live), ``pdftoppm`` and ``pdftotext`` (poppler) and ``chromium``;
an image whose tool is missing is skipped with a message. Nothing here is run by the
tests: it writes files only under ``--out``.
"""

from __future__ import annotations

import argparse
import re
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

NOTEBOOK = "raschka-ch03-simplified-self-attention.ipynb"
#: Pixels per inch of the PDF pages.
DPI = 90


def symtf(*args: str) -> None:
    """Run one symtf command (this checkout's), stopping on failure."""
    subprocess.run([sys.executable, "-m", "symtf", *args, "-q"], check=True)


def page_with(pdf: Path, text: str) -> int:
    """The first page of ``pdf`` whose text holds ``text`` (1 when none does)."""
    out = subprocess.run(["pdftotext", str(pdf), "-"], capture_output=True, text=True).stdout
    for k, page in enumerate(out.split("\f"), start=1):
        if text in page:
            return k
    return 1


def pdf_page(pdf: Path, page: int, png: Path) -> None:
    """Page ``page`` of ``pdf`` as ``png``."""
    stem = png.with_suffix("")
    pages = ["-f", str(page), "-l", str(page), "-singlefile"]
    subprocess.run(["pdftoppm", "-png", "-r", str(DPI), *pages, str(pdf), str(stem)], check=True)
    print(f"wrote {png} (page {page} of {pdf.name})")


def web_page(html: Path, png: Path, height: int = 1400) -> None:
    """The top of a web page (900 CSS pixels wide) as ``png``, with headless Chromium."""
    browser = shutil.which("chromium") or shutil.which("chromium-browser")
    if browser is None:
        print(f"skipped {png}: chromium is not installed")
        return
    flags = ["--headless", "--no-sandbox", "--disable-gpu", "--hide-scrollbars"]
    size = [f"--window-size=900,{height}", f"--screenshot={png}"]
    subprocess.run([browser, *flags, *size, html.as_uri()], check=True, capture_output=True)
    print(f"wrote {png}")


def without_unmapped(draft: Path, mapped: Path) -> None:
    """The draft with the claims still to map by hand (``step = "?"``) left out."""
    head, *blocks = draft.read_text().split("\n[[claims]]\n")
    keep = [b for b in blocks if not re.search(r'^step = "\?"', b, re.M)]
    mapped.write_text(head + "".join("\n[[claims]]\n" + b for b in keep))


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--corpus", type=Path, default=Path("../shared/corpus"))
    ap.add_argument("--out", type=Path, default=Path("docs"))
    a = ap.parse_args()
    if not (shutil.which("latexmk") and shutil.which("pdftoppm")):
        print("latexmk and pdftoppm are needed for the PDF pages", file=sys.stderr)
        return 2
    out = a.out.resolve()
    with tempfile.TemporaryDirectory() as tmp:
        t = Path(tmp)
        symtf("exercise", "i_love_ai", "-o", str(t / "ex"), "--blank-steps", "S_1,A_1,H_1")
        sheet = t / "ex" / "sheet.pdf"
        pdf_page(sheet, page_with(sheet, "?1"), out / "sheet-page.png")
        pdf_page(t / "ex" / "key.pdf", 1, out / "key-page.png")
        web_page(t / "ex" / "key.html", out / "key-page-html.png")

        grid_args = ["--layout", "grid", "--fresh", "--seed", "17"]
        symtf("exercise", "i_love_ai", "-o", str(t / "grid"), *grid_args)
        grid = t / "grid" / "sheet.pdf"
        pdf_page(grid, page_with(grid, "masked scores, head 2"), out / "grid-worksheet.png")

        notebook = a.corpus / NOTEBOOK
        if not notebook.is_file():
            print(f"skipped {out / 'drafted-notes.png'}: {notebook} is not there")
            return 0
        symtf("draft", str(notebook), "-o", str(t / "draft.toml"))
        without_unmapped(t / "draft.toml", t / "mapped.toml")
        symtf("latex", str(t / "mapped.toml"), "-o", str(t / "notes" / "notes.tex"))
        subprocess.run(
            ["latexmk", "-pdf", "-interaction=nonstopmode", "notes.tex"],
            cwd=t / "notes",
            check=True,
            capture_output=True,
        )
        notes = t / "notes" / "notes.pdf"
        pdf_page(notes, page_with(notes, "slice (1, 1)"), out / "drafted-notes.png")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
