"""Every ``symtf derive --latex`` fragment renders in KaTeX and MathJax 3, as on a web page.

Both run through node: KaTeX in strict mode (a macro it only warns about fails
too), MathJax 3 with only its base and AMS TeX packages (an unknown macro is an
``<merror>``). They are installed from the npm registry into ``tests/js`` by CI
(``npm ci --prefix tests/js``); the tests install nothing themselves. Without
node or the packages they are skipped, unless ``SYMTF_REQUIRE_KATEX=1`` (as CI
sets) makes that a failure.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
from pathlib import Path

import pytest

from symtf import cli, derive
from symtf.derive import render

JS = Path(__file__).resolve().parent / "js"
ROOT = JS.parent.parent
NODE = shutil.which("node")
HAVE_KATEX = NODE is not None and all(
    (JS / "node_modules" / pkg / "package.json").exists() for pkg in ("katex", "mathjax-full")
)

pytestmark = pytest.mark.skipif(
    not HAVE_KATEX and os.environ.get("SYMTF_REQUIRE_KATEX") != "1",
    reason="node, KaTeX or MathJax missing (npm ci --prefix tests/js; "
    "set SYMTF_REQUIRE_KATEX=1 to fail instead)",
)


def katex(fragments: list[str]) -> list[dict[str, object]]:
    """Render each fragment with KaTeX in display mode; ``{"ok", "error"}`` per fragment."""
    return _node("katex_check.js", fragments)


def mathjax(fragments: list[str]) -> list[dict[str, object]]:
    """Render each fragment with MathJax 3 (base and AMS); ``{"ok", "error"}`` per fragment."""
    return _node("mathjax_check.js", fragments)


def _node(script: str, fragments: list[str]) -> list[dict[str, object]]:
    assert HAVE_KATEX, "node and tests/js/node_modules are required (SYMTF_REQUIRE_KATEX=1)"
    proc = subprocess.run(
        [NODE, str(JS / script)],
        input=json.dumps(fragments),
        capture_output=True,
        text=True,
        timeout=600,
        check=True,
    )
    return json.loads(proc.stdout)


def test_the_renderers_reject_what_they_cannot_render() -> None:
    # The checks can fail: the old fragments' macros are refused.
    old = [r"\begin{align}\intertext{x} a &= b\end{align}", r"x \label{eq:a}", "a = b"]
    assert [o["ok"] for o in katex(old)] == [False, False, True]
    assert [o["ok"] for o in mathjax([old[0], r"\foo", "a = b"])] == [False, False, True]


@pytest.fixture(scope="module")
def fragments() -> dict[str, str]:
    out = {}
    for name in derive.names():
        sizes = derive.get(name).sizes
        # The smallest default size: the statements are the same at every size.
        out[name] = render.latex(derive.run(name, n=sizes[0] if sizes else None))
    worked = derive.run(
        "softmax-jacobian", n=2, at=f"{ROOT}/derivations/i_love_ai.toml:l0.h0.pattern[2]"
    )
    out["softmax-jacobian --at"] = render.latex(worked) + render.at_latex(worked.at)
    return out


def test_every_derive_fragment_renders_in_katex_and_mathjax(fragments: dict[str, str]) -> None:
    assert len(fragments) >= 10
    # A fragment may hold several environments (the worked evaluation adds one);
    # each is what a page would put between display delimiters.
    pieces = []
    for name, tex in fragments.items():
        blocks = [b + "\\end{align*}" for b in tex.split("\\end{align*}") if b.strip()]
        assert blocks and all(b.lstrip().startswith("\\begin{align*}") for b in blocks), name
        pieces.extend((name, b.strip()) for b in blocks)
    for render_with in (katex, mathjax):
        results = render_with([p for _, p in pieces])
        bad = [(n, r["error"]) for (n, _), r in zip(pieces, results, strict=True) if not r["ok"]]
        assert bad == [], render_with.__name__


def test_fragments_hold_no_non_portable_macros(fragments: dict[str, str]) -> None:
    for name, tex in fragments.items():
        for macro in ("\\intertext", "\\label", "\\hfill", "\\small", "\\footnotesize", "\\ref"):
            assert macro not in tex, (name, macro)


def test_cli_fragment_renders(capsys: pytest.CaptureFixture[str]) -> None:
    assert cli.main(["derive", "gelu", "--latex"]) == 0
    out = capsys.readouterr().out
    # One display block per statement and per proof, each for its own delimiters.
    blocks = [b + "\\end{align*}" for b in out.split("\\end{align*}") if b.strip()]
    assert len(blocks) >= 4
    for render_with in (katex, mathjax):
        assert all(r["ok"] for r in render_with(blocks)), render_with.__name__
