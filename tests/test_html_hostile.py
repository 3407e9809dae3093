"""Hostile text in a derivation never becomes markup, script or a request in a real browser.

Every page symtf writes (``symtf html``, the exercise sheet and key, the Jupyter
fragments) is opened in headless Chromium with payloads in every place a
derivation's text reaches a page: vocabulary words, input tokens, claim labels
(template claims, ``[steps]`` claims, displayed arithmetic), titles and sources.
Each payload tries to run script (``document.title``, an ``onerror``, a
``<script>``, an ``onload``) and to fetch from a server on 127.0.0.1 that
counts its hits. Two walls are tested apart: the escaping (pages with their
Content-Security-Policy removed still run nothing and fetch nothing), and the
CSP itself (a page that embeds the raw payloads under the same CSP runs and
fetches nothing either). A control page without either wall shows the canaries
and the hit counter work.
"""

from __future__ import annotations

import http.server
import re
import subprocess
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import ClassVar

import pytest
from test_html import CHROMIUM, CHROMIUM_FLAGS, needs_browser, page_requests
from tiny_derivations import toml_value

from symtf import cli, spec
from symtf.checking import compare
from symtf.renderers.html import CSP, render_html, report_fragment, trace_fragment

CANARY = "PWNED"
#: test_html's flags, but with 127.0.0.1 reachable: the hit counter listens there.
FLAGS = tuple(
    "--host-resolver-rules=MAP * ~NOTFOUND, EXCLUDE 127.0.0.1"
    if f.startswith("--host-resolver")
    else f
    for f in CHROMIUM_FLAGS
)
CSP_META = f'<meta http-equiv="Content-Security-Policy" content="{CSP}">'


class _Counter(http.server.BaseHTTPRequestHandler):
    hits: ClassVar[list[str]] = []

    def do_GET(self) -> None:
        type(self).hits.append(self.path)
        self.send_response(200)
        self.send_header("Content-Type", "image/png")
        self.end_headers()

    def log_message(self, *args: object) -> None:
        pass


@pytest.fixture(scope="module")
def server() -> Iterator[tuple[int, list[str]]]:
    """A web server on 127.0.0.1 that records every request it gets."""
    handler = type("Counter", (_Counter,), {"hits": []})
    httpd = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    t = threading.Thread(target=httpd.serve_forever, daemon=True)
    t.start()
    try:
        yield httpd.server_address[1], handler.hits
    finally:
        httpd.shutdown()
        httpd.server_close()


def payloads(port: int) -> list[str]:
    """Strings that become script, a request or markup if any renderer lets them through."""
    leak = f"http://127.0.0.1:{port}"
    run = f"document.title='{CANARY}';document.documentElement.setAttribute('data-{CANARY}','1')"
    return [
        f'</mtext><img/src="x"/onerror="{run}">',
        f"</mtext></math><script>{run}</script>",
        f'</mtext><img/src="{leak}/mtext">',
        f'"><img src=x onerror="{run}"><img src="{leak}/attr">',
        f"</title><script>{run}</script>",
        f'</style><svg onload="{run}"><image href="{leak}/svg"/></svg>',
        f'</mi></mrow></math><link rel="stylesheet" href="{leak}/css">',
        f"<!--<script>{run}</script>-->",
        f'<b style="background:url({leak}/style)">b</b>',
        f']]><math><mtext><iframe srcdoc="<script>parent.{run}</script>"></iframe></mtext></math>',
        f"&lt;script&gt;{run}&lt;/script&gt; \\text{{x}} $\\alpha$ {{}}_^%#&~",
        "\x1b]0;t\x07 \u202e evil \u2066 \ufeff Жук η 猫 \U0001f600",
    ]


def _decoder(port: int) -> str:
    """A decoder whose vocabulary, tokens, labels, title and source are all payloads."""
    words = payloads(port)[:6]
    n = len(words)
    eye = "\n".join(" ".join("1" if i == j else "0" for j in range(n)) for i in range(n))
    hostile = payloads(port)
    claims = "".join(
        f'[[claims]]\nlabel = {toml_value(f"{k} {label}")}\nstep = "x"\nrow = 0\n'
        f'printed = "{" ".join("1" if j == 0 else "0" for j in range(n))}"\n'
        for k, label in enumerate(hostile)
    )
    return (
        f"title = {toml_value('T ' + hostile[4])}\n"
        f"source = {toml_value('S ' + hostile[3])}\n"
        "[model]\n"
        f"d_model = {n}\nn_heads = 1\nvocab = {toml_value(words)}\n"
        f'embed = """\n{eye}\n"""\nunembed = "identity"\n'
        "[[model.layers]]\n[[model.layers.heads]]\n"
        'W_Q = "identity"\nW_K = "identity"\nW_V = "identity"\n'
        f"[input]\ntokens = {toml_value(words)}\n"
        + claims
        # a computed step (x·xᵀ of one-hot rows), so the exercise sheet has blanks to make
        + f"[[claims]]\nlabel = {toml_value('scores ' + hostile[2])}\n"
        f'step = "l0.h0.scores"\nrow = 0\n'
        f'printed = "{" ".join("1" if j == 0 else "0" for j in range(n))}"\n'
        + f"[[claims]]\nlabel = {toml_value('next ' + hostile[1])}\n"
        f'step = "next_token"\nprinted = {toml_value(words[5])}\n'
        + f"[[claims]]\nlabel = {toml_value('sum ' + hostile[0])}\n"
        'expression = "0.5 + 0.25"\nprinted = "0.76"\n'
    )


def _steps(port: int) -> str:
    """A ``[steps]`` graph whose claim labels are payloads."""
    hostile = payloads(port)
    claims = "".join(
        f'[[claims]]\nlabel = {toml_value(label)}\nstep = "y"\nprinted = "2 0.5"\n'
        for label in hostile
    )
    return (
        f"title = {toml_value(hostile[1])}\n"
        "[tensors]\n"
        'x = ["1", "0.25"]\n'
        "[steps]\n"
        'y = "2 * x"\n' + claims
    )


def _derivations(tmp: Path, port: int) -> dict[str, spec.Derivation]:
    out = {}
    for name, text in (("decoder", _decoder(port)), ("steps", _steps(port))):
        f = tmp / f"{name}.toml"
        f.write_text(text, encoding="utf-8")
        out[name] = spec.load(f)
    return out


def _pages(tmp: Path, port: int) -> dict[str, str]:
    """Every kind of page symtf writes, made from hostile derivations."""
    from symtf.checking.compare import Evaluator
    from symtf.teach import exercise as E
    from symtf.teach import sheet as S

    pages: dict[str, str] = {}
    for name, d in _derivations(tmp, port).items():
        r = compare.check(d)
        pages[f"{name}.html"] = render_html(r, d)
        pages[f"{name}-names.html"] = render_html(r, d, node_names=True)
        # Jupyter's fragments are embedded in a page that has no CSP of its own.
        pages[f"{name}-jupyter.html"] = (
            "<!DOCTYPE html><html><head><meta charset='utf-8'><title>j</title></head><body>"
            + report_fragment(r)
            + trace_fragment(r.trace)
            + "</body></html>"
        )
        ev = Evaluator(d)
        trace = ev.exact_trace()
        blanks = E.choose(d, trace, count=2, steps=None, seed=1)
        ex = S.Exercise(d, trace, E.key(d, ev, blanks), 1, False)
        pages[f"{name}-sheet.html"] = S.sheet_html(ex)
        pages[f"{name}-key.html"] = S.key_html(ex)
    return pages


def _open(page: Path, profile: Path) -> tuple[str, list[str]]:
    """Chromium's DOM of the page after it ran (and settled), and the URLs it requested."""
    assert CHROMIUM is not None, "chromium is required here (SYMTF_REQUIRE_BROWSER=1)"
    net = profile.with_suffix(".net.json")
    proc = subprocess.run(
        [
            CHROMIUM,
            *FLAGS,
            f"--user-data-dir={profile}",
            f"--log-net-log={net}",
            "--virtual-time-budget=3000",
            "--dump-dom",
            page.as_uri(),
        ],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    return proc.stdout, page_requests(net)


def _ran(dom: str) -> bool:
    """Whether a canary script ran (it retitles the document)."""
    m = re.search(r"<title>(.*?)</title>", dom, re.S)
    retitled = m is not None and m.group(1).strip() == CANARY
    return retitled or re.search(rf"<html[^>]*data-{CANARY}", dom, re.I) is not None


def _injected(dom: str) -> list[str]:
    """Elements in the live DOM that only a payload could have made.

    The page draws its own figures as inline SVG (``<svg class="heatmap">``,
    ``<svg class="sharpness">``, with no event attribute): any other ``<svg>``, or one
    carrying an ``on…`` attribute, came from a payload.
    """
    found = re.findall(r"<(?:script|img|iframe|svg|image|link|b style)\b[^>]*>", dom)
    ours = re.compile(r'<svg class="(?:heatmap|sharpness)" (?![^>]*\son\w+=)[^>]*>')
    return [tag for tag in found if not ours.fullmatch(tag)]


@pytest.fixture(scope="module")
def hostile_pages(
    tmp_path_factory: pytest.TempPathFactory, server: tuple[int, list[str]]
) -> dict[str, str]:
    return _pages(tmp_path_factory.mktemp("hostile"), server[0])


def test_every_page_is_escaped_and_carries_the_csp(hostile_pages: dict[str, str]) -> None:
    for name, page in hostile_pages.items():
        assert "<script" not in page, name
        assert not _injected(page), (name, _injected(page)[:3])
        if "jupyter" not in name:
            assert page.count(CSP_META) == 1, name
            head = page[: page.index("</head>")]
            assert head.index(CSP_META) < head.index("<style>"), name


def test_the_payloads_reach_every_page_as_text(hostile_pages: dict[str, str]) -> None:
    import html

    for name, page in hostile_pages.items():
        text = html.unescape(re.sub(r"<[^>]+>", "", page))
        assert "</mtext><img/src=" in text or "</mtext></math><script>" in text, name


@needs_browser
def test_the_canaries_and_the_counter_work(tmp_path: Path, server: tuple[int, list[str]]) -> None:
    port, hits = server
    before = len(hits)
    raw = tmp_path / "raw.html"
    raw.write_text(
        "<!DOCTYPE html><html><head><title>t</title></head><body>"
        + "".join(payloads(port))
        + "</body></html>",
        encoding="utf-8",
    )
    dom, requests = _open(raw, tmp_path / "p")
    assert _ran(dom), dom[:300]
    assert len(hits) > before and any(r.startswith(f"http://127.0.0.1:{port}/") for r in requests)


@needs_browser
def test_the_csp_alone_stops_raw_payloads(tmp_path: Path, server: tuple[int, list[str]]) -> None:
    port, hits = server
    before = len(hits)
    raw = tmp_path / "raw-csp.html"
    raw.write_text(
        f"<!DOCTYPE html><html><head>{CSP_META}<title>t</title></head><body>"
        + "".join(payloads(port))
        + "</body></html>",
        encoding="utf-8",
    )
    dom, requests = _open(raw, tmp_path / "p")
    assert not _ran(dom)
    assert requests == [] and len(hits) == before


@needs_browser
@pytest.mark.parametrize("walls", ["as written", "without the CSP"])
def test_hostile_pages_in_chromium(
    walls: str,
    hostile_pages: dict[str, str],
    tmp_path: Path,
    server: tuple[int, list[str]],
) -> None:
    _, hits = server
    before = len(hits)
    for name, page in hostile_pages.items():
        if walls != "as written":
            page = page.replace(CSP_META, "")  # the escaping alone must hold
        f = tmp_path / name
        f.write_text(page, encoding="utf-8")
        dom, requests = _open(f, tmp_path / f"profile-{name}")
        assert "<math" in dom or "sheet" in name or "key" in name, name
        assert not _ran(dom), name
        assert not _injected(dom), (name, _injected(dom)[:3])
        assert requests == [], (name, requests)
    assert len(hits) == before, hits[before:]


def test_the_cli_writes_the_hostile_page(tmp_path: Path, server: tuple[int, list[str]]) -> None:
    f = tmp_path / "d.toml"
    f.write_text(_steps(server[0]), encoding="utf-8")
    out = tmp_path / "p.html"
    assert cli.main(["html", str(f), "-o", str(out)]) == 0
    page = out.read_text(encoding="utf-8")
    assert CSP_META in page and not _injected(page)


def _unescaped_angle(markdown: str) -> list[str]:
    """``<`` that a Markdown renderer would read as the start of HTML (outside code spans)."""
    outside = re.sub(r"`[^`\n]*`", "", markdown)
    return re.findall(r"(?<!\\)<[^\s]{0,20}", outside)


def test_markdown_has_no_raw_markup(tmp_path: Path, server: tuple[int, list[str]]) -> None:
    from symtf.renderers.markdown import report_markdown, trace_markdown

    for d in _derivations(tmp_path, server[0]).values():
        r = compare.check(d)
        for md in (report_markdown(r), trace_markdown(r.trace)):
            assert _unescaped_angle(md) == [], _unescaped_angle(md)[:3]


def test_whatif_plots_take_labels_as_plain_text(tmp_path: Path) -> None:
    pytest.importorskip("matplotlib")
    import xml.etree.ElementTree as ET

    label = "$\\foo{$ </text><script>alert(1)</script> \x1b x^_"
    f = tmp_path / "wi.toml"
    f.write_text(
        "title = 'what if'\n[model]\narchitecture = 'attention'\nd_model = 2\nn_heads = 1\n"
        "mask = 'none'\nvocab = ['a', 'b']\nembed = \"1 0\\n0 1\"\n"
        "[[model.layers]]\n[[model.layers.heads]]\nW_Q = \"1 0\\n0 1\"\nW_K = 'identity'\n"
        "W_V = 'identity'\n[input]\ntokens = ['a', 'b']\n"
        f"[[claims]]\nlabel = {toml_value(label)}\nstep = 'l0.h0.pattern'\n"
        'printed = "0.669 0.331\\n0.331 0.669"\n',
        encoding="utf-8",
    )
    out = tmp_path / "wi"
    code = cli.main(["whatif", str(f), "--symbol", "l0.h0.W_Q[0,0]=a", "-o", str(out)])
    assert code == 0
    svg = ET.parse(out / "whatif.svg")  # well-formed: no raw control character
    tags = {el.tag.rsplit("}", 1)[-1] for el in svg.iter()}
    assert not tags & {"script", "foreignObject", "a", "image"}
