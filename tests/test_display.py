"""How results look where no renderer is asked for: repr, Markdown and HTML displays."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

import symtf
from symtf import derive, spec, summary
from symtf.checking import compare
from symtf.checking.report import DerivationReport, Report
from symtf.renderers import display

ROOT = Path(__file__).resolve().parent.parent
SEED = ROOT / "derivations" / "i_love_ai.toml"


@pytest.fixture(scope="module")
def seed() -> DerivationReport:
    return compare.check(spec.load(SEED))


@pytest.fixture(scope="module")
def everything() -> Report:
    paths = sorted((ROOT / "derivations").glob("*.toml"))
    return Report(tuple(compare.check(spec.load(p)) for p in paths))


def test_report_repr_is_a_summary_with_the_off_numbers(everything: Report) -> None:
    text = repr(everything)
    assert len(text) < 4000  # the default dataclass repr was 74-221 KB
    assert text.startswith(f"<Report of {len(everything.derivations)} derivation(s)")
    off = [c for d in everything.derivations for c in d.checks if c.verdict in ("slip", "wrong")]
    assert off, "the bundled articles contain slips"
    for c in off[: summary.MAX_OFF]:
        assert f"{c.claim}{summary.where(c)}: printed {c.printed}" in text
    if len(off) > summary.MAX_OFF:
        assert f"… and {len(off) - summary.MAX_OFF} more off" in text


def test_seed_repr_names_its_slip(seed: DerivationReport) -> None:
    text = repr(seed)
    assert len(text) < 2000
    # The article's slip: logits[0, 5] printed -2.049, correctly rounded -2.048.
    assert "logit math[0, 5]: printed -2.049, slip; correct -2.048, exact -2.048372083773" in text
    assert "549 printed numbers" in text


def test_claim_check_and_trace_reprs_are_one_liners(seed: DerivationReport) -> None:
    a1 = next(r for r in seed.results if r.claim.label == "A_1")
    assert repr(a1) == "<ClaimResult 'A_1' (l0.h0.pattern): rounded, 9 numbers: 4 exact, 5 rounded>"
    c = a1.checks[3]  # row 1, column 0: printed 0.496
    assert repr(c).startswith("<Check A_1[1, 0]: printed 0.496, rounded (exact 0.4964")
    trace = seed.trace
    assert trace is not None
    t = repr(trace)
    assert t.startswith(f"<Trace of {len(trace)} steps (exact): tokens,") and "\n" not in t
    assert len(t) < 300
    step = repr(trace["l0.h0.pattern"])
    assert step == "<Step l0.h0.pattern 3×3: attention weights, head 1; from l0.h0.masked>"


def test_derive_result_displays() -> None:
    r = derive.run("softmax-jacobian", n=2)
    assert repr(r) == (
        "<derive softmax-jacobian — The softmax Jacobian: "
        f"all {len(r.steps)} steps verified symbolically and numerically at n = 2; "
        f"4 of {len(r.steps)} proved for every n>"
    )
    assert repr(r.steps[0]).startswith("<derive step ") and "verified>" in repr(r.steps[0])
    assert r._repr_latex_().startswith("\\begin{align*}")
    md = r._repr_markdown_()
    assert md.count("$$") == 2 * len(r.steps)
    html = r._repr_html_()
    assert html.count("<math") == len(r.steps) and "<script" not in html


def _shown(obj: object, mime: str) -> str:
    """What a notebook shows: IPython's own formatter, with symtf's displays registered."""
    formatters = pytest.importorskip("IPython.core.formatters")
    formatter = formatters.DisplayFormatter()
    assert display.register(formatter)
    data, _ = formatter.format(obj, include=(mime, "text/plain"))
    assert data["text/plain"] == repr(obj)
    out: str = data[mime]
    assert out == display.render(obj, mime)  # the same renderer, with or without IPython
    return out


def test_markdown_display(seed: DerivationReport) -> None:
    md = _shown(seed, "text/markdown")
    assert "| claim | step | printed | verdict |" in md
    assert "± **slip** → -2.048" in md
    rows = [line for line in md.splitlines() if line.startswith("| ") and "---" not in line]
    assert len(rows) == len(seed.results) + 1
    # Pipes and underscores in labels cannot break the table.
    assert all(line.count(" | ") == 3 for line in rows)
    tmd = _shown(seed.trace, "text/markdown")
    assert "| `l0.h0.pattern` | attention weights, head 1 | 3×3 |" in tmd


def test_html_displays_share_the_page_renderer(seed: DerivationReport) -> None:
    frag = _shown(seed, "text/html")
    assert frag.startswith('<div class="symtf"><style>') and frag.endswith("</div>")
    assert "<math" in frag and "<script" not in frag and not re.search(r"https?://", frag)
    assert 'class="v v-slip"' in frag and "-2.048" in frag
    report = Report((seed,))
    assert _shown(report, "text/html").count('<div class="symtf">') == 1
    tfrag = _shown(seed.trace, "text/html")
    assert tfrag.count('<section class="step"') == len(seed.trace)  # type: ignore[arg-type]


def test_render_is_still_a_function_after_every_display(seed: DerivationReport) -> None:
    report = Report((seed,))
    first = symtf.render(report)
    for mime in ("text/html", "text/markdown", "text/latex"):
        display.render(report, mime)
        display.render(seed.trace, mime)
    repr(report), repr(seed.trace)
    assert symtf.render(report) == first
    assert symtf.render(report, "json") == symtf.render(report, "json")


def test_reports_and_traces_have_no_display_method_of_their_own(seed: DerivationReport) -> None:
    """Jupyter's display comes from the renderers' side: without it, IPython shows the repr."""
    formatters = pytest.importorskip("IPython.core.formatters")
    for obj in (seed, Report((seed,)), seed.trace):
        assert not [m for m in dir(obj) if m.startswith("_repr_")], type(obj).__name__
        bare, _ = formatters.DisplayFormatter().format(obj)
        assert sorted(bare) == ["text/plain"]


def test_no_display_for_what_symtf_does_not_draw(seed: DerivationReport) -> None:
    with pytest.raises(TypeError, match="no text/html display for a ClaimResult"):
        display.render(seed.results[0], "text/html")
    with pytest.raises(TypeError, match="no image/png display"):
        display.render(seed, "image/png")


def test_import_inside_ipython_registers_the_displays(tmp_path: Path) -> None:
    """``import symtf`` in a running IPython shell draws reports as HTML, as a notebook does."""
    pytest.importorskip("IPython")
    code = (
        "from IPython.core.interactiveshell import InteractiveShell\n"
        "shell = InteractiveShell.instance()\n"
        "import symtf\n"
        "data, _ = shell.display_formatter.format(symtf.check('rope_toy'))\n"
        "print(sorted(data))\n"
    )
    out = subprocess.run(
        [sys.executable, "-c", code],
        capture_output=True,
        text=True,
        cwd=tmp_path,
        env={**os.environ, "PYTHONPATH": str(ROOT), "IPYTHONDIR": str(tmp_path)},
        check=True,
    ).stdout
    assert out.strip() == "['text/html', 'text/latex', 'text/markdown', 'text/plain']"


def test_load_ext_registers_the_displays(seed: DerivationReport) -> None:
    """``%load_ext symtf`` in a shell started after the import: the same displays."""
    formatters = pytest.importorskip("IPython.core.formatters")

    class Shell:
        display_formatter = formatters.DisplayFormatter()

    symtf.load_ipython_extension(Shell())
    data, _ = Shell.display_formatter.format(seed)
    assert data["text/html"] == display.render(seed, "text/html")
