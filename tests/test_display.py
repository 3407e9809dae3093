"""How results look where no renderer is asked for: repr, Markdown and HTML displays."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

import symtf
from symtf import derive, spec
from symtf.checking import compare
from symtf.checking.report import DerivationReport, Report
from symtf.renderers import summary

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


def test_markdown_display(seed: DerivationReport) -> None:
    md = seed._repr_markdown_()
    assert "| claim | step | printed | verdict |" in md
    assert "± **slip** → -2.048" in md
    rows = [line for line in md.splitlines() if line.startswith("| ") and "---" not in line]
    assert len(rows) == len(seed.results) + 1
    # Pipes and underscores in labels cannot break the table.
    assert all(line.count(" | ") == 3 for line in rows)
    tmd = seed.trace._repr_markdown_()  # type: ignore[union-attr]
    assert "| `l0.h0.pattern` | attention weights, head 1 | 3×3 |" in tmd


def test_html_displays_share_the_page_renderer(seed: DerivationReport) -> None:
    frag = seed._repr_html_()
    assert frag.startswith('<div class="symtf"><style>') and frag.endswith("</div>")
    assert "<math" in frag and "<script" not in frag and not re.search(r"https?://", frag)
    assert 'class="v v-slip"' in frag and "-2.048" in frag
    report = Report((seed,))
    assert report._repr_html_().count('<div class="symtf">') == 1
    tfrag = seed.trace._repr_html_()  # type: ignore[union-attr]
    assert tfrag.count('<section class="step"') == len(seed.trace)  # type: ignore[arg-type]


def test_render_is_still_a_function_after_every_display(seed: DerivationReport) -> None:
    report = Report((seed,))
    first = symtf.render(report)
    for display in ("_repr_html_", "_repr_markdown_", "_repr_latex_", "__repr__"):
        getattr(report, display)()
        getattr(seed.trace, display)()
    assert symtf.render(report) == first
    assert symtf.render(report, "json") == symtf.render(report, "json")
