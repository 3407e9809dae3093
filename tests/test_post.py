"""``symtf html post.md``: the article itself, each number symtf judged marked where it stands.

The report's places say where each number stands (``source_line``, ``source_column``,
``source_end_column``; in a notebook ``cell``, ``cell_line``, ``cell_column`` and
``cell_output``). Where a test needs columns, it writes them into the checks itself, from
the fixture's own text (``line.index`` of a number the fixture prints once on that line):
the reading stage that gives them is tested on its own. Without columns, a number is
marked by its line. The browser tests open the pages in headless Chromium, as
tests/test_html.py does; screenshots are kept in ``SYMTF_SCREENSHOTS`` when it is set.
"""

from __future__ import annotations

import dataclasses
import html.parser
import json
import os
import re
from pathlib import Path
from typing import Any

import pytest
from test_html import CSP_META, _chromium, _png_size, needs_browser, page_requests

from symtf.checking.report import DerivationReport
from symtf.cli import main
from symtf.commands import source
from symtf.draft.code import file_lines
from symtf.renderers.marks import Place, place_of
from symtf.renderers.post import render_post

ROOT = Path(__file__).resolve().parent.parent
POSTS = ROOT / "tests" / "posts"
MARKDOWN = POSTS / "post.md"
SOFTMAX = POSTS / "softmax.ipynb"
ATTENTION = POSTS / "attention.ipynb"


def _shared(*parts: str) -> Path | None:
    for base in (ROOT.parent, ROOT.parent.parent):
        p = base.joinpath("shared", *parts)
        if p.exists():
            return p
    return None


SEED = _shared("articles", "000_b60c289f27ab6d88.txt")
needs_seed = pytest.mark.skipif(
    SEED is None, reason="the source articles are not beside the project (../shared/articles)"
)


# ----------------------------------------------------------------------------- reading a page


class _Marks(html.parser.HTMLParser):
    """The marks of a page: each ``details.num`` and each ``mrow.num``, with its text."""

    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.stack: list[tuple[str, dict[str, str]]] = []
        self.found: list[dict[str, Any]] = []
        self.open: list[dict[str, Any]] = []
        self.tags: dict[str, int] = {}
        self.attrs: list[tuple[str, str]] = []
        self.bar = ""
        self._in_bar = False

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        a = {k: v or "" for k, v in attrs}
        self.tags[tag] = self.tags.get(tag, 0) + 1
        self.attrs += [(k, v or "") for k, v in attrs]
        if tag in ("meta", "br", "hr", "img", "wbr"):
            return
        self.stack.append((tag, a))
        classes = a.get("class", "").split()
        if tag == "header" and "bar" in classes:
            self._in_bar = True
        if "num" in classes and tag in ("details", "mrow"):
            verdict = next(c[2:] for c in classes if c.startswith("v-"))
            mark = {
                "tag": tag,
                "verdict": verdict,
                "id": a.get("id"),
                "text": "",
                "depth": len(self.stack),
            }
            self.found.append(mark)
            self.open.append(mark)

    def handle_endtag(self, tag: str) -> None:
        while self.stack:
            t, _ = self.stack.pop()
            if self.open and self.open[-1]["depth"] == len(self.stack) + 1:
                self.open.pop()
            if t == "header":
                self._in_bar = False
            if t == tag:
                break

    def handle_data(self, data: str) -> None:
        for m in self.open:
            m["text"] += data
        if self._in_bar:
            self.bar += data


def _read(page: str) -> _Marks:
    p = _Marks()
    p.feed(page)
    p.close()
    return p


def _with_places(
    report: DerivationReport, places: dict[tuple[str, int], dict[str, int]]
) -> DerivationReport:
    """The report with place fields written into chosen checks: ``(claim label, k)`` →
    fields, as the JSON report carries them (in the check's ``extra``)."""
    results = []
    for r in report.results:
        checks = tuple(
            dataclasses.replace(c, extra={**c.extra, **places[(r.claim.label, k)]})
            if (r.claim.label, k) in places
            else c
            for k, c in enumerate(r.checks)
        )
        results.append(dataclasses.replace(r, checks=checks))
    return dataclasses.replace(report, results=tuple(results))


def _columns(text: str, line: int, number: str) -> dict[str, int]:
    """The place of a number the fixture prints once on that line (1-based columns)."""
    src = text.split("\n")[line - 1]
    assert src.count(number) == 1, (line, number, src)
    col = src.index(number) + 1
    return {"source_line": line, "source_column": col, "source_end_column": col + len(number)}


def _label_of(report: DerivationReport, printed: str) -> tuple[str, int]:
    for r in report.results:
        for k, c in enumerate(r.checks):
            if c.printed == printed:
                return r.claim.label, k
    raise AssertionError(f"no check printed {printed}")


@pytest.fixture(scope="module")
def markdown() -> tuple[source.Source, str]:
    return source.read(MARKDOWN), MARKDOWN.read_text(encoding="utf-8")


# ----------------------------------------------------------------------------- places


@dataclasses.dataclass
class _Check:
    extra: dict[str, Any] = dataclasses.field(default_factory=dict)


def test_a_place_is_read_from_the_checks_fields_or_its_claims_line() -> None:
    fields = {"source_line": 7, "source_column": 3, "source_end_column": 9}
    assert place_of(_Check(fields), 5) == Place(7, 2, 8)
    assert place_of(_Check({"source_line": 7}), 5) == Place(7)  # no column: the line
    assert place_of(_Check(), 5) == Place(5)  # nothing of its own: its claim's line
    assert place_of(_Check(), None) is None


def test_a_notebook_place_is_its_cell_or_else_what_its_file_line_holds() -> None:
    fields = {
        "source_line": 25,
        "source_column": 6,
        "source_end_column": 12,
        "cell_index": 1,
        "cell_line": 1,
        "cell_column": 2,
        "cell_output": True,
    }
    # the number is as wide in its cell as on its file line (6 code points)
    assert place_of(_Check(fields), None, {}) == Place(1, 1, 7, 1, True)
    lines = {25: (1, 1, True), 44: (2, 3, False)}
    assert place_of(_Check(), 44, lines) == Place(3, None, None, 2, False)
    assert place_of(_Check({"source_line": 25}), None, lines) == Place(1, None, None, 1, True)
    assert place_of(_Check(), 99, lines) is None


def test_file_lines_maps_a_notebooks_lines_to_cells_and_outputs() -> None:
    raw = SOFTMAX.read_text(encoding="utf-8")
    lines = raw.split("\n")
    where = file_lines(raw)
    out = next(n for n, (_, _, output) in where.items() if output)
    assert where[out] == (1, 1, True) and "0.2447" in lines[out - 1]
    md = next(n for n, v in where.items() if v == (2, 3, False))
    assert "$$a = [0.0900, 0.2447, 0.6652]$$" in lines[md - 1]


# ----------------------------------------------------------------------------- the Markdown post


def test_numbers_are_marked_at_their_places(markdown: tuple[source.Source, str]) -> None:
    read, text = markdown
    assert read.report is not None
    report = _with_places(
        read.report,
        {
            _label_of(read.report, "0.659"): _columns(text, 11, "0.659"),
            _label_of(read.report, "7.389"): _columns(text, 14, "7.389"),
            _label_of(read.report, "11.212"): _columns(text, 22, "11.212"),
        },
    )
    page = render_post(report, text, "md", drafted=read.derivation.drafted)
    p = _read(page)
    # In the text: **0.659** (line 11) is a details element in the bold text, right.
    text_marks = [m for m in p.found if m["tag"] == "details" and m["text"].startswith("0.659")]
    assert text_marks and text_marks[0]["verdict"] == "exact"
    assert re.search(r"<strong><details class=\"num v-exact\" id=\"n\d+\"><summary", page)
    # In the maths: 7.389, 2.718 and 1.105 (line 14) and the slip 11.212 (line 22) are
    # MathML entries (the two given here, the others at the columns the reader gave them).
    in_math = {m["text"].strip(): m["verdict"] for m in p.found if m["tag"] == "mrow"}
    assert in_math == {"7.389": "rounded", "2.718": "rounded", "1.105": "rounded", "11.212": "slip"}
    assert re.search(
        r'<mrow class="num v-slip"><mrow><mn>11\.212</mn></mrow></mrow><mtext class="v-slip">±\d+</mtext>',
        page,
    )
    # Its note follows the formula: the verdict, why, and the correct rounding.
    slip = next(m for m in p.found if m["tag"] == "details" and m["verdict"] == "slip")
    assert "11.212" in slip["text"] and "correctly rounded 11.213" in slip["text"]
    assert "their rounding moved the result" in slip["text"]
    # The two numbers the draft left out (line 12) are marked as not checked, in place.
    unchecked = [m for m in p.found if m["verdict"] == "unchecked"]
    assert sorted(m["text"].split("○")[0] for m in unchecked) == ["0.099", "0.1"]
    assert all("(line 12)" in m["text"] for m in unchecked)
    # The bar: 5 checks, 2 left out, 1 off.
    assert "5 checked of 7 printed numbers, 1 off" in p.bar
    assert "± 1 slip" in p.bar and "○ 2 not checked" in p.bar


def test_every_number_is_marked_once(markdown: tuple[source.Source, str]) -> None:
    read, text = markdown
    assert read.report is not None
    page = render_post(read.report, text, "md", drafted=read.derivation.drafted)
    ids = re.findall(r'<details class="num v-\w+" id="(n\d+)"', page)
    assert len(ids) == len(set(ids))
    # 5 checks and 2 numbers left out, numbered 1…7: the three in the prose (0.659 on line
    # 11, 0.1 and 0.099 on line 12) marked where they stand, the four in maths by key
    in_text = re.findall(r'aria-label="[a-z ]+: ([0-9.]+)"><span class="printed">', page)
    assert sorted(in_text) == ["0.099", "0.1", "0.659"]
    keys = sorted(int(k) for k in re.findall(r"<mtext class=\"v-\w+\">[✓±✗?ƒ○](\d+)<", page))
    assert keys == [4, 5, 6, 7]


def test_without_columns_a_number_is_marked_by_its_line(
    markdown: tuple[source.Source, str],
) -> None:
    read, text = markdown
    assert read.report is not None
    unplaced = dataclasses.replace(
        read.report,
        results=tuple(
            dataclasses.replace(r, claim=dataclasses.replace(r.claim, places=()))
            for r in read.report.results
        ),
    )  # the report of a reader that knows only lines
    page = render_post(unplaced, text, "md")
    assert '<mrow class="num' not in page  # nothing is placed inside the maths
    slip = next(m for m in _read(page).found if m["verdict"] == "slip")
    assert "(line 22)" in slip["text"] and "11.212" in slip["text"]


def test_a_number_the_maths_converter_cannot_wrap_is_marked_in_the_source(
    markdown: tuple[source.Source, str],
) -> None:
    read, _ = markdown
    assert read.report is not None
    text = "The total is $\\text{sum 11.212}$ here.\n"
    report = _with_places(
        read.report, {_label_of(read.report, "11.212"): _columns(text, 1, "11.212")}
    )
    page = render_post(report, text, "md")
    # \text{…} takes no colour group: the formula is shown as its source, the number marked.
    assert re.search(r'<code class="tex">\\text\{sum <details class="num v-slip"', page)


def test_a_number_in_a_table_is_marked_in_its_own_cell(
    markdown: tuple[source.Source, str],
) -> None:
    read, _ = markdown
    assert read.report is not None
    text = "| left | right |\n|---|---|\n| 0.659 | 0.659 |\n"
    col = text.split("\n")[2].rindex("0.659") + 1  # the right-hand cell's
    places = {"source_line": 3, "source_column": col, "source_end_column": col + 5}
    report = _with_places(read.report, {_label_of(read.report, "0.659"): places})
    page = render_post(report, text, "md")
    assert re.search(r"<td>0\.659</td><td><details class=\"num v-exact\"", page), page


# ----------------------------------------------------------------------------- hostile articles


HOSTILE = """# Title <script>alert(1)</script>

<img src=x onerror="alert(2)"><style>body{display:none}</style>

A [link](javascript:alert(3)) and [another](https://example.org/ok) and <b onclick="x()">bold</b>.

The sum is $1.5 + 2.25 = 3.75$ and $\\text{</math><script>alert(4)</script>}$.

Controls: \x1b[2J and \x07 bell.
"""


def test_hostile_text_stays_text(tmp_path: Path) -> None:
    post = tmp_path / "hostile.md"
    post.write_text(HOSTILE, encoding="utf-8")
    read = source.read(post)
    assert read.report is not None
    page = render_post(read.report, HOSTILE, "md", drafted=read.derivation.drafted)
    p = _read(page)
    assert page.count(CSP_META) == 1
    for tag in ("script", "img", "iframe", "object", "embed", "link"):
        assert tag not in p.tags, tag
    assert p.tags.get("style") == 1  # the page's own
    assert not [k for k, _ in p.attrs if k.startswith("on")]
    hrefs = [v for k, v in p.attrs if k == "href"]
    assert hrefs == ["https://example.org/ok"]
    assert "\x1b" not in page and "\x07" not in page
    assert "alert(1)" in page  # the heading's text, as text


# ----------------------------------------------------------------------------- notebooks


def test_a_notebook_is_drawn_cell_by_cell_with_its_outputs() -> None:
    read = source.read(ATTENTION)
    assert read.report is not None
    raw = ATTENTION.read_text(encoding="utf-8")
    page = render_post(
        read.report, raw, "ipynb", drafted=read.derivation.drafted, notebook=file_lines(raw)
    )
    p = _read(page)
    assert page.count('<section class="cell ') == 4
    assert 'class="cell code" id="cell-1"' in page and "In [1]:" in page
    # the printed output's numbers are marked where they stand (the reader's cell columns)
    assert '<pre class="output"><code>[[<details class="num v-rounded" id="n1">' in page
    # e^0.707 = 2.02790: printed 2.082 (cell 3, its first line) is wrong, marked in its
    # maths at the reader's cell column, its note after the formula.
    wrong = [m for m in p.found if m["verdict"] == "wrong"]
    assert [m["tag"] for m in wrong] == ["mrow", "details"]
    assert wrong[0]["text"] == "2.082" and "2.082" in wrong[1]["text"]
    assert "correctly rounded 2.028" in wrong[1]["text"]
    assert "13 checked of 13 printed numbers, 1 off" in p.bar  # as symtf check counts them


def test_notebook_numbers_are_marked_at_their_cell_places() -> None:
    read = source.read(ATTENTION)
    assert read.report is not None
    raw = ATTENTION.read_text(encoding="utf-8")
    cell3 = "Written out, with $e^{0.707} = 2.082$ in the first row, the attention weights are"
    out1 = "[[0.707 0.   ]"
    label, _ = _label_of(read.report, "2.082")
    s_label = next(r.claim.label for r in read.report.results if r.claim.label.startswith("S"))
    places = {
        (label, 0): {
            "cell_index": 3,
            "cell_line": 1,
            "cell_column": cell3.index("2.082") + 1,
            "source_column": 10,
            "source_end_column": 15,
        },
        (s_label, 0): {
            "cell_index": 1,
            "cell_line": 1,
            "cell_column": out1.index("0.707") + 1,
            "cell_output": True,
            "source_column": 10,
            "source_end_column": 15,
        },
    }
    report = _with_places(read.report, places)
    page = render_post(
        report, raw, "ipynb", drafted=read.derivation.drafted, notebook=file_lines(raw)
    )
    # The wrong 2.082 inside the maths of cell 3; the first 0.707 of cell 1's printed output.
    assert re.search(r'<mrow class="num v-wrong"><mrow><mn>2\.082</mn></mrow></mrow>', page)
    assert re.search(
        r'<pre class="output"><code>\[\[<details class="num v-rounded" id="n\d+"><summary[^>]*><span class="printed">0\.707</span>',
        page,
    )


def test_html_of_a_notebook_on_the_command_line(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    out = tmp_path / "page.html"
    assert main(["html", str(SOFTMAX), "-o", str(out)]) == 1  # its slip, as check
    page = out.read_text(encoding="utf-8")
    assert "9 checked of 9 printed numbers, 1 off" in _read(page).bar
    assert main(["html", str(SOFTMAX), "--steps", "a"]) == 2
    assert "--steps: applies to a derivation's page of steps" in capsys.readouterr().err


# ----------------------------------------------------------------------------- the source article


def _seed_page(tmp_path: Path, *, columns: bool) -> str:
    assert SEED is not None
    read = source.read(SEED)
    assert read.report is not None
    text = SEED.read_text(encoding="utf-8")
    report = read.report
    if not columns:  # the report of a reader that knows only lines
        report = dataclasses.replace(
            report,
            results=tuple(
                dataclasses.replace(r, claim=dataclasses.replace(r.claim, places=()))
                for r in report.results
            ),
        )
    if columns:  # the three slips: "$-0.487+(-1.562)=-2.049$" (306) and the logits (311)
        lines = text.split("\n")
        places = {}
        for r in report.results:
            for k, c in enumerate(r.checks):
                if c.verdict == "slip":
                    line = r.claim.source_line
                    assert line is not None
                    col = lines[line - 1].rindex("-2.049") + 1
                    places[(r.claim.label, k)] = {
                        "source_line": line,
                        "source_column": col,
                        "source_end_column": col + 6,
                    }
        report = _with_places(report, places)
    return render_post(report, text, "txt", drafted=read.derivation.drafted)


@needs_seed
def test_the_source_article_shows_its_three_slips_with_their_explanations(tmp_path: Path) -> None:
    page = _seed_page(tmp_path, columns=False)
    p = _read(page)
    assert "490 checked of 491 printed numbers, 3 off" in p.bar
    slips = [m for m in p.found if m["verdict"] == "slip"]
    assert len(slips) == 3
    where = sorted(re.search(r"\(line (\d+)\)", m["text"]).group(1) for m in slips)  # type: ignore[union-attr]
    assert where == ["306", "306", "311"]
    for m in slips:  # each at -2.049, with the correct value and why
        assert "-2.049" in m["text"] and "correctly rounded -2.048" in m["text"]
    assert any("their rounding moved the result" in m["text"] for m in slips)


@needs_seed
def test_the_source_articles_slips_are_marked_at_the_numbers(tmp_path: Path) -> None:
    page = _seed_page(tmp_path, columns=True)
    # Line 306's two checks are one printed number: one mark with both notes; line 311's
    # -2.049 is the logit vector's sixth entry.
    marked = re.findall(
        r'<mrow class="num v-slip"><mrow><mo>−</mo><mn>2\.049</mn></mrow></mrow>', page
    )
    assert len(marked) == 2
    notes = [m for m in _read(page).found if m["tag"] == "details" and m["verdict"] == "slip"]
    assert len(notes) == 2 and sum(m["text"].count("correctly rounded -2.048") for m in notes) == 3


# ----------------------------------------------------------------------------- in a browser


def _shoot(
    page: str,
    name: str,
    tmp_path: Path,
    size: tuple[int, int] = (1000, 1400),
    *,
    at: str = "",
) -> str:
    """A screenshot of the page, the DOM Chromium built; the page fetched nothing.

    With ``at``, the mark of that id is opened, as a reader's click does (``open`` added to
    its details element: the page has no script), and the picture is the part of the page
    around it: headless Chromium draws nothing when asked to scroll, so the whole page is
    drawn and cut. Where the mark is on the page is asked of a copy without the CSP, with a
    probe script, as tests/test_html.py measures a page's width.
    """
    if at:
        page = page.replace(f'id="{at}"', f'id="{at}" open', 1)
    f = tmp_path / f"{name}.html"
    f.write_text(page, encoding="utf-8")
    shots = Path(os.environ.get("SYMTF_SCREENSHOTS", tmp_path))
    shots.mkdir(parents=True, exist_ok=True)
    png = shots / f"post-{name}.png"
    net = tmp_path / f"{name}.net.json"
    width, height = size
    top = 0
    if at:
        probe = (
            f"<script>var r=document.getElementById('{at}').getBoundingClientRect();"
            "document.body.setAttribute('data-at', Math.round(r.top + window.scrollY) + ','"
            " + document.documentElement.scrollHeight)</script>"
        )
        probed = tmp_path / f"{name}.probe.html"
        probed.write_text(page.replace(CSP_META, "").replace("</body>", probe + "</body>"))
        dom = _chromium(
            [f"--window-size={width},{height}", "--dump-dom", probed.as_uri()],
            tmp_path / f"probe-{name}",
        ).stdout
        m = re.search(r'data-at="(\d+),(\d+)"', dom)
        assert m is not None, dom[-500:]
        y, full = int(m.group(1)), int(m.group(2))
        top = max(0, min(y - height // 3, full - height))
        height = max(height, top + height)
    proc = _chromium(
        [
            f"--window-size={width},{height}",
            f"--screenshot={png}",
            f"--log-net-log={net}",
            f.as_uri(),
        ],
        tmp_path / f"profile-{name}",
    )
    assert png.exists(), proc.stderr[-2000:]
    if top:
        image = pytest.importorskip("PIL.Image")
        with image.open(png) as whole:
            whole.crop((0, top, width, top + size[1])).save(png)
    assert _png_size(png) == size and png.stat().st_size > 20_000
    assert page_requests(net) == []
    dom = _chromium(["--dump-dom", f.as_uri()], tmp_path / f"profile2-{name}").stdout
    assert "<script" not in dom
    return dom


def _first(page: str, verdict: str) -> str:
    m = re.search(rf'<details class="num v-{verdict}" id="(n\d+)"', page)
    assert m is not None, verdict
    return m.group(1)


@needs_browser
@needs_seed
def test_the_source_article_in_chromium(tmp_path: Path) -> None:
    page = _seed_page(tmp_path, columns=True)
    dom = _shoot(page, "i_love_ai", tmp_path, at=_first(page, "slip"))
    assert dom.count('class="num v-slip"') == 4  # two marks in the maths, two notes after them
    assert "490 checked of 491 printed numbers, 3 off" in dom


@needs_browser
@pytest.mark.parametrize("notebook", [SOFTMAX, ATTENTION], ids=lambda p: p.stem)
def test_notebooks_in_chromium(notebook: Path, tmp_path: Path) -> None:
    read = source.read(notebook)
    assert read.report is not None
    raw = notebook.read_text(encoding="utf-8")
    page = render_post(
        read.report, raw, "ipynb", drafted=read.derivation.drafted, notebook=file_lines(raw)
    )
    off = "slip" if notebook == SOFTMAX else "wrong"
    dom = _shoot(page, notebook.stem, tmp_path, (900, 1100), at=_first(page, off))
    cells = len(json.loads(raw)["cells"])
    assert dom.count("<math") >= 3 and dom.count('<section class="cell ') == cells
    off = [c for c in read.report.checks if c.verdict in ("slip", "wrong")]
    assert off and all(f"v-{c.verdict}" in dom for c in off)
